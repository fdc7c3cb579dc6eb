import { readFile } from 'node:fs/promises';
import { renderCliSuccess } from '@slivingdoc/envelope';
import { CURRENT_KEY, decodeManifest, encodeManifest, type MemoryStore } from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import { get, memoryStore, participant, put, stateFile } from './helpers';

// Generations are unsigned 64-bit (contract §7): a store whose manifest generation is beyond
// 2^53 must pull and commit like any other, and report the exact value.

const BEYOND_DOUBLES = 2n ** 53n + 1n; // 9007199254740993: Number() would round it to ...992

/** Rewrites `current` with its generation moved to `generation` (the chain unchanged). */
async function moveGeneration(store: MemoryStore, generation: bigint): Promise<void> {
  const current = await store.get(CURRENT_KEY);
  if (current === undefined) throw new Error('no current');
  const manifest = decodeManifest(current.body);
  await store.replaceIfMatch(
    CURRENT_KEY,
    encodeManifest({ ...manifest, generation }),
    current.etag,
  );
}

describe('generations beyond 2^53', () => {
  it('a manifest generation of 2^53+1 pulls and commits, reported exactly', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    await moveGeneration(store, BEYOND_DOUBLES);

    const bob = await participant(store);
    const pulled = await bob.service.pull({});
    expect(pulled.generation).toBe('9007199254740993');
    expect(await get(bob.dir, 'a.md')).toBe('a\n');
    // P records the exact digits too.
    expect(await readFile(await stateFile(bob.privateRoot), 'utf8')).toContain(
      '"remoteGeneration":9007199254740993,',
    );

    await put(bob.dir, 'b.md', 'b\n');
    const committed = await bob.service.commit({ message: 'b' });
    expect(committed.generation).toBe('9007199254740994');
    expect(decodeManifest((await store.get(CURRENT_KEY))!.body).generation).toBe(
      BEYOND_DOUBLES + 1n,
    );
    // Alice's older baseline is below the store's generation: an ordinary pull.
    expect((await alice.service.pull({})).generation).toBe('9007199254740994');
    expect(await get(alice.dir, 'b.md')).toBe('b\n');
    expect(renderCliSuccess(committed, { color: false }).split('\n')[0]).toBe(
      `OK  generation 9007199254740994  ${bob.dir}`,
    );
  });

  it('the largest exact double is still a number; the next one is a string', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    await moveGeneration(store, BigInt(Number.MAX_SAFE_INTEGER) - 1n);
    await put(alice.dir, 'a.md', 'b\n');
    expect((await alice.service.commit({ message: 'b' })).generation).toBe(Number.MAX_SAFE_INTEGER);
    await put(alice.dir, 'a.md', 'c\n');
    expect((await alice.service.commit({ message: 'c' })).generation).toBe('9007199254740992');
  });
});
