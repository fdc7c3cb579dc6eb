import { setTimeout as sleep } from 'node:timers/promises';
import { CACHE_IDLE_RELEASE_MS } from '@slivingdoc/merge';
import { describe, expect, it } from 'vitest';
import { aliceAndBob, memoryStore, put, snapshot } from './helpers';

describe('caches released while idle', () => {
  it('a merge after the object and tree caches were emptied reads everything back from disk', async () => {
    const store = memoryStore();
    const { alice, bob } = await aliceAndBob(store);
    await put(alice.dir, 'notes/shared.md', 'one\ntwo\nthree\n');
    expect((await alice.service.commit({ message: 'base' })).code).toBe('OK');
    expect((await bob.service.pull({})).code).toBe('OK');
    // Both servers idle past the release: their caches hold none of the trees and blobs.
    await sleep(CACHE_IDLE_RELEASE_MS + 300);
    await put(alice.dir, 'notes/shared.md', 'ONE\ntwo\nthree\n');
    expect((await alice.service.commit({ message: 'alice' })).code).toBe('OK');
    await put(bob.dir, 'notes/shared.md', 'one\ntwo\nTHREE\n');
    await put(bob.dir, 'b.md', 'b\n');
    const merged = await bob.service.commit({ message: 'bob' });
    expect(merged).toMatchObject({ code: 'OK', generation: 4 });
    expect(await snapshot(bob.dir)).toEqual({
      'a.md': 'a\n',
      'b.md': 'b\n',
      'notes/shared.md': 'ONE\ntwo\nTHREE\n',
    });
  });
});
