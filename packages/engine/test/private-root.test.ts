import { rename, rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { engineFailure, get, memoryStore, participant, put } from './helpers';

// A private root that is not a directory cannot hold P: that is the operator's to fix
// (ENGINE_FAILED · PRIVATE_STATE_UNAVAILABLE · CONTACT_OPERATOR), never an INTERNAL_ERROR,
// and L is left as it is.

const unavailable = {
  code: 'ENGINE_FAILED',
  reason: 'PRIVATE_STATE_UNAVAILABLE',
};

describe('a private root replaced by a regular file', () => {
  it('before the first pull: pull and commit answer PRIVATE_STATE_UNAVAILABLE', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    await writeFile(alice.privateRoot, 'not a directory\n');
    await put(alice.dir, 'mine.md', 'mine\n');
    for (const call of [
      () => alice.service.pull({}),
      () => alice.service.commit({ message: 'x' }),
    ]) {
      const err = await engineFailure(call());
      expect(err).toMatchObject(unavailable);
      expect(err.detail).toBeUndefined();
    }
    expect(await get(alice.dir, 'mine.md')).toBe('mine\n');
    // Once the operator puts a directory back, everything works.
    await rm(alice.privateRoot);
    await alice.service.pull({});
    expect((await alice.service.commit({ message: 'mine' })).generation).toBe(1);
  });

  it('while the server runs: later calls answer PRIVATE_STATE_UNAVAILABLE, L untouched', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    await rename(alice.privateRoot, `${alice.privateRoot}.moved`);
    await writeFile(alice.privateRoot, 'not a directory\n');
    await put(alice.dir, 'a.md', 'edited\n');
    expect(await engineFailure(alice.service.pull({}))).toMatchObject(unavailable);
    expect(await engineFailure(alice.service.commit({ message: 'b' }))).toMatchObject(unavailable);
    expect(await get(alice.dir, 'a.md')).toBe('edited\n');
    await rm(alice.privateRoot);
    await rename(`${alice.privateRoot}.moved`, alice.privateRoot);
    expect((await alice.service.commit({ message: 'b' })).generation).toBe(2);
  });
});
