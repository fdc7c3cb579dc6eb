import { describe, expect, it } from 'vitest';
import { aliceAndBob, memoryStore, put, rejection, snapshot } from './helpers';

// contract §6 file/directory: R keeps the path, the local side moves to `<path>~local`.
// Materialising it must delete the local entry before writing under the same name.
describe('file/directory conflicts', () => {
  for (const call of ['pull', 'commit'] as const) {
    it(`local file against a remote directory (${call})`, async () => {
      const store = memoryStore();
      const { alice, bob } = await aliceAndBob(store);
      await put(alice.dir, 'thing/inner.md', 'remote\n');
      await alice.service.commit({ message: 'directory' });
      await put(bob.dir, 'thing', 'local bytes\n');
      const err = await rejection(
        call === 'pull' ? bob.service.pull({}) : bob.service.commit({ message: 'file' }),
      );
      expect(err).toMatchObject({
        code: 'CONTENT_CONFLICT',
        reason: 'MERGE_CONFLICT',
        files: [{ path: 'thing', reason: 'FILE_DIRECTORY', ranges: [] }],
      });
      expect(await snapshot(bob.dir)).toMatchObject({
        'thing/inner.md': 'remote\n',
        'thing~local': 'local bytes\n',
      });
      // The conflict is settled: the next commit publishes the moved file.
      const next = await bob.service.commit({ message: 'after' });
      expect(next.code).toBe('OK');
    });

    it(`local directory against a remote file (${call})`, async () => {
      const store = memoryStore();
      const { alice, bob } = await aliceAndBob(store);
      await put(alice.dir, 'thing', 'remote file\n');
      await alice.service.commit({ message: 'file' });
      await put(bob.dir, 'thing/inner.md', 'local\n');
      const err = await rejection(
        call === 'pull' ? bob.service.pull({}) : bob.service.commit({ message: 'directory' }),
      );
      expect(err).toMatchObject({ code: 'CONTENT_CONFLICT', reason: 'MERGE_CONFLICT' });
      const reasons = (err.files as { reason: string }[]).map((file) => file.reason);
      expect(reasons).toContain('FILE_DIRECTORY');
      const files = await snapshot(bob.dir);
      expect(files.thing).toBe('remote file\n');
      expect(Object.values(files)).toContain('local\n');
      const next = await bob.service.commit({ message: 'after' });
      expect(next.code).toBe('OK');
    });
  }
});
