/** Concurrent additions through the engine: commit, lost race, pull, add/add (contract §6). */
import { describe, expect, it } from 'vitest';
import { createNotebookService } from '../src/index';
import {
  aliceAndBob,
  get,
  memoryStore,
  participant,
  put,
  rejection,
  snapshot,
  tempRoots,
} from './helpers';

describe('concurrent additions (mergeAdditions, default keep)', () => {
  it('a commit over a remote append keeps both lines and reports only its own change', async () => {
    const store = memoryStore();
    const { alice, bob } = await aliceAndBob(store);
    await put(alice.dir, 'a.md', 'a\nalice\n');
    await alice.service.commit({ message: 'alice' });
    await put(bob.dir, 'a.md', 'a\nbob\n');
    const committed = await bob.service.commit({ message: 'bob' });
    expect(committed.files).toEqual([{ path: 'a.md', insertions: 1, deletions: 0 }]);
    expect(await get(bob.dir, 'a.md')).toBe('a\nalice\nbob\n');
    const pulled = await alice.service.pull({});
    expect(pulled.files).toEqual([{ path: 'a.md', insertions: 1, deletions: 0 }]);
    expect(await get(alice.dir, 'a.md')).toBe('a\nalice\nbob\n');
  });

  it('commits racing for the same compare-and-swap all land, each line once', async () => {
    const store = memoryStore();
    const { alice } = await aliceAndBob(store);
    const writers = [alice, ...(await Promise.all([1, 2, 3, 4].map(() => participant(store))))];
    for (const writer of writers.slice(1)) await writer.service.pull({});
    await Promise.all(writers.map((writer, n) => put(writer.dir, 'a.md', `a\nline ${n}\n`)));
    const results = await Promise.all(
      writers.map((writer, n) => writer.service.commit({ message: `append ${n}` })),
    );
    expect(results.map((r) => r.code)).toEqual(['OK', 'OK', 'OK', 'OK', 'OK']);
    await alice.service.pull({});
    const lines = (await get(alice.dir, 'a.md')).split('\n').filter((l) => l !== '');
    expect(lines[0]).toBe('a');
    expect([...lines.slice(1)].sort()).toEqual(writers.map((_, n) => `line ${n}`));
  });

  it('add/add of one path: R’s content, then the caller’s, no conflict', async () => {
    const store = memoryStore();
    const { alice, bob } = await aliceAndBob(store);
    await put(alice.dir, 'new.md', '# new\nfrom alice\n');
    await alice.service.commit({ message: 'alice' });
    await put(bob.dir, 'new.md', '# new\nfrom bob\n');
    await bob.service.commit({ message: 'bob' });
    expect(await get(bob.dir, 'new.md')).toBe('# new\nfrom alice\nfrom bob\n');
  });

  it('mergeAdditions: conflict restores the markers of git’s rule', async () => {
    const store = memoryStore();
    const { alice } = await aliceAndBob(store);
    const bob = await participant(store, { mergeAdditions: 'conflict' });
    await bob.service.pull({});
    await put(alice.dir, 'a.md', 'a\nalice\n');
    await alice.service.commit({ message: 'alice' });
    await put(bob.dir, 'a.md', 'a\nbob\n');
    expect(await rejection(bob.service.commit({ message: 'bob' }))).toMatchObject({
      code: 'CONTENT_CONFLICT',
      reason: 'MERGE_CONFLICT',
      files: [{ path: 'a.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 2, end: 6 }] }],
    });
    expect(await get(bob.dir, 'a.md')).toBe(
      'a\n<<<<<<< local\nbob\n=======\nalice\n>>>>>>> remote\n',
    );
  });

  it('a first pull of a directory holding files has no baseline: add/add stays a conflict', async () => {
    const store = memoryStore();
    await aliceAndBob(store);
    const carol = await participant(store);
    await put(carol.dir, 'a.md', 'a\ncarol\n');
    expect(await rejection(carol.service.pull({}))).toMatchObject({
      code: 'CONTENT_CONFLICT',
      files: [{ path: 'a.md', reason: 'TEXT_CONFLICT' }],
    });
    expect(await snapshot(carol.dir)).toEqual({
      'a.md': '<<<<<<< local\na\ncarol\n=======\na\n>>>>>>> remote\n',
    });
  });

  it('refuses a value other than keep or conflict', async () => {
    const roots = await tempRoots();
    await expect(
      createNotebookService({
        store: memoryStore(),
        privateRoot: roots.privateRoot,
        workspaceRoot: roots.workspaceRoot,
        notebookDir: roots.workspaceRoot,
        mergeAdditions: 'union' as never,
      }),
    ).rejects.toThrow(RangeError);
  });
});
