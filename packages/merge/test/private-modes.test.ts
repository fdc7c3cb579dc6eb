import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCheckpointPack, importPack, openObjectDb } from '../src';

async function modes(root: string): Promise<{ files: Set<number>; dirs: Set<number> }> {
  const files = new Set<number>();
  const dirs = new Set<number>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const info = await stat(join(entry.parentPath, entry.name));
    (entry.isDirectory() ? dirs : files).add(info.mode & 0o777);
  }
  return { files, dirs };
}

describe('an on-disk object database in private state', () => {
  it('creates every file 0600 and every directory 0700, loose objects and packs alike', async () => {
    const gitdir = join(await mkdtemp(join(tmpdir(), 'merge-modes-')), 'git');
    const db = await openObjectDb({ gitdir });
    const blob = await db.writeBlob(new TextEncoder().encode('hello\n'));
    const tree = await db.writeTree(new Map([['notes/a.md', blob]]));
    const head = await db.writeCommit({ tree, message: new TextEncoder().encode('m'), time: 0 });
    const other = await openObjectDb({ gitdir: `${gitdir}-copy` });
    await importPack(other, await createCheckpointPack(db, { head }));

    for (const root of [gitdir, `${gitdir}-copy`]) {
      const { files, dirs } = await modes(root);
      expect(files.size).toBeGreaterThan(0);
      expect([...files]).toEqual([0o600]);
      expect([...dirs]).toEqual([0o700]);
    }
  });
});
