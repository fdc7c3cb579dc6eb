import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMemoryStore } from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import { createNotebookService, EngineConfigError } from '../src/index';
import { participant, tempRoots } from './helpers';

// What an embedder meets outside the two operations: a clear error for a workspace root that
// cannot work, and the local-changes report a host uses before deleting a directory.

describe('createNotebookService', () => {
  it('refuses a workspace root that does not exist with EngineConfigError naming it, creating nothing', async () => {
    const { base, privateRoot } = await tempRoots();
    const missing = join(base, 'nowhere');
    const opening = createNotebookService({
      store: createMemoryStore(),
      privateRoot,
      workspaceRoot: missing,
      notebookDir: missing,
    });
    await expect(opening).rejects.toBeInstanceOf(EngineConfigError);
    await expect(opening).rejects.toMatchObject({
      setting: 'workspaceRoot',
      message: `the workspace root ${missing} does not exist`,
    });
  });

  it('refuses a workspace root that is a file', async () => {
    const { base, privateRoot } = await tempRoots();
    const file = join(base, 'file');
    await writeFile(file, '');
    await expect(
      createNotebookService({
        store: createMemoryStore(),
        privateRoot,
        workspaceRoot: file,
        notebookDir: file,
      }),
    ).rejects.toMatchObject({ message: `the workspace root ${file} is not a directory` });
  });
});

describe('NotebookService.localChanges', () => {
  it('lists managed directories and those with unpublished edits', async () => {
    const store = createMemoryStore();
    const { service, dir, workspaceRoot } = await participant(store);
    expect(await service.localChanges()).toEqual({ managed: [], unpublished: [] });
    await service.pull({});
    const other = join(workspaceRoot, 'other');
    await mkdir(other);
    await service.pull({ path: other });
    expect(await service.localChanges()).toEqual({ managed: [dir, other].sort(), unpublished: [] });
    await writeFile(join(other, 'draft.md'), 'draft\n');
    expect((await service.localChanges()).unpublished).toEqual([other]);
    await service.commit({ message: 'publish the draft', path: other });
    expect((await service.localChanges()).unpublished).toEqual([]);
  });
});
