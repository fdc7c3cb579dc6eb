import { decodeManifest, encodeManifest } from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import { FAILPOINT, FailpointRegistry, SYSTEM_CLOCK } from '../src/index';
import { aliceAndBob, get, memoryStore, participant, put, rejection, snapshot } from './helpers';

async function current(store: ReturnType<typeof memoryStore>) {
  const object = await store.get('current');
  if (object === undefined) throw new Error('no current');
  return { manifest: decodeManifest(object.body), etag: object.etag };
}

/**
 * Alice commits `c.md` while Bob publishes `b.md` at `point` of her first attempt; her commit
 * still lands (generation 3, on top of Bob's). Store calls are counted from her commit on.
 */
async function bobPublishesDuring(point: (typeof FAILPOINT)[keyof typeof FAILPOINT]) {
  const store = memoryStore();
  const failpoints = new FailpointRegistry();
  const { alice, bob } = await aliceAndBob(store, { failpoints });
  await put(bob.dir, 'b.md', 'b\n');
  await put(alice.dir, 'c.md', 'c\n');
  failpoints.set(point, async () => void (await bob.service.commit({ message: 'b' })), 1);
  store.clearCalls();
  const result = await alice.service.commit({ message: 'c' });
  expect(result.generation).toBe(3);
  return { store, manifest: (await current(store)).manifest };
}

describe('optimistic publication', () => {
  it('twenty concurrent writers on disjoint files over several rounds all succeed', async () => {
    const store = memoryStore();
    // Real full-jitter backoff spreads the writers apart. All twenty share this one process's
    // CPU, so each attempt's read-to-CAS window is ~20x a lone writer's: the retry bound is
    // raised here (see docs/engine.md, "Contention").
    const writers = await Promise.all(
      Array.from({ length: 20 }, () =>
        participant(store, { clock: SYSTEM_CLOCK, commitRetries: 40 }),
      ),
    );
    await writers[0]?.service.pull({});
    await put(writers[0]?.dir as string, 'seed.md', 'seed\n');
    await writers[0]?.service.commit({ message: 'seed' });
    for (const w of writers) await w.service.pull({});
    const generations: number[] = [];
    for (let round = 0; round < 2; round += 1) {
      const results = await Promise.all(
        writers.map(async (w, i) => {
          await put(w.dir, `w${i}/r${round}.md`, `writer ${i} round ${round}\n`);
          return w.service.commit({ message: `w${i} r${round}` });
        }),
      );
      for (const r of results) generations.push(Number(r.generation));
    }
    const sorted = [...generations].sort((a, b) => a - b);
    expect(sorted).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
    const { manifest } = await current(store);
    expect(manifest.generation).toBe(41n);
    const reader = await participant(store);
    await reader.service.pull({});
    const files = await snapshot(reader.dir);
    expect(Object.keys(files)).toHaveLength(41);
    for (let i = 0; i < 20; i += 1) expect(files[`w${i}/r1.md`]).toBe(`writer ${i} round 1\n`);
  }, 60_000);

  it('a lost CAS response after the store accepted is OK (receipt found)', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    await put(alice.dir, 'a.md', 'b\n');
    store.inject({ op: 'replaceIfMatch', action: { type: 'lose-response' } });
    const result = await alice.service.commit({ message: 'b' });
    expect(result.generation).toBe(2);
    expect((await current(store)).manifest.increments).toHaveLength(1);
    expect(store.calls.filter((c) => c.op === 'replaceIfMatch')).toHaveLength(1);
  });

  it('an ambiguous CAS that did not land is retried and succeeds', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    await put(alice.dir, 'a.md', 'b\n');
    store.inject({ op: 'replaceIfMatch', action: { type: 'fail', kind: 'ambiguous' } });
    const result = await alice.service.commit({ message: 'b' });
    expect(result.generation).toBe(2);
    const puts = store.calls.filter((c) => c.op === 'putImmutable').map((c) => c.keys[0]);
    expect(new Set(puts).size).toBe(puts.length);
  });

  it('an unprovable publication is PUBLICATION_UNPROVEN, L untouched and nothing republished', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const { alice } = await aliceAndBob(store, { failpoints });
    await put(alice.dir, 'a.md', 'alice\n');
    store.inject({ op: 'replaceIfMatch', action: { type: 'fail', kind: 'ambiguous' } });
    failpoints.set(
      FAILPOINT.afterCasAnswered,
      () =>
        store.inject({ op: 'get', key: 'current', action: { type: 'fail', kind: 'unreachable' } }),
      1,
    );
    const before = await snapshot(alice.dir);
    const err = await rejection(alice.service.commit({ message: 'alice' }));
    expect(err).toMatchObject({ code: 'STORAGE_FAILURE', reason: 'PUBLICATION_UNPROVEN' });
    expect(await snapshot(alice.dir)).toEqual(before);
    const casCount = store.calls.filter((c) => c.op === 'replaceIfMatch').length;
    expect(casCount).toBe(1);
  });

  it('an ambiguous CAS while another writer took the position is provably lost and retried', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const { alice, bob } = await aliceAndBob(store, { failpoints });
    await put(alice.dir, 'a.md', 'alice\n');
    await put(bob.dir, 'b.md', 'bob\n');
    // Alice's CAS fails ambiguously without effect; Bob then takes position 2 before she looks.
    store.inject({ op: 'replaceIfMatch', action: { type: 'fail', kind: 'ambiguous' } });
    failpoints.set(
      FAILPOINT.afterCasAnswered,
      async () => void (await bob.service.commit({ message: 'bob' })),
      1,
    );
    const result = await alice.service.commit({ message: 'alice' });
    expect(result.generation).toBe(3);
    expect(await snapshot(alice.dir)).toEqual({ 'a.md': 'alice\n', 'b.md': 'bob\n' });
  });

  it('REMOTE_BUSY after the retry bound, with L untouched', async () => {
    const store = memoryStore();
    const alice = await participant(store, { commitRetries: 2 });
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    await put(alice.dir, 'a.md', 'b\n');
    store.clearCalls();
    store.inject({ op: 'replaceIfMatch', times: 3, action: { type: 'precondition-failed' } });
    const err = await rejection(alice.service.commit({ message: 'b' }));
    expect(err).toMatchObject({ code: 'REMOTE_BUSY', reason: 'RETRIES_EXHAUSTED' });
    expect(await get(alice.dir, 'a.md')).toBe('b\n');
    const puts = store.calls.filter((c) => c.op === 'putImmutable').map((c) => c.keys[0]);
    expect(puts).toHaveLength(3);
    expect(new Set(puts).size).toBe(3);
    expect((await current(store)).manifest.generation).toBe(1n);
  });

  it('an attempt whose current moved before the upload loses without uploading a pack or sending the CAS', async () => {
    // Bob publishes after Alice read R and merged, before she uploads.
    const { store, manifest } = await bobPublishesDuring(FAILPOINT.afterFetch);
    expect(manifest.increments.map((i) => i.key)).toHaveLength(2);
    // One pack and one CAS each: Bob's, and Alice's second attempt on top of his.
    expect(store.calls.filter((c) => c.op === 'putImmutable')).toHaveLength(2);
    expect(store.calls.filter((c) => c.op === 'replaceIfMatch')).toHaveLength(2);
    expect(store.calls.filter((c) => c.op === 'putImmutable').map((c) => c.keys[0])).toEqual(
      manifest.increments.map((i) => i.key),
    );
    const reader = await participant(store);
    await reader.service.pull({});
    expect(await snapshot(reader.dir)).toMatchObject({ 'b.md': 'b\n', 'c.md': 'c\n' });
  });

  it('a lost race re-fetches only the new increments', async () => {
    const { store, manifest } = await bobPublishesDuring(FAILPOINT.afterPackUpload);
    const bobKey = manifest.increments[0]?.key;
    const fetched = store.calls
      .filter((c) => c.op === 'getStream' || (c.op === 'get' && c.keys[0]?.startsWith('packs/')))
      .map((c) => c.keys[0]);
    // Bob's own fetch (none: he had everything) and Alice's retry fetched exactly Bob's increment.
    expect(fetched).toEqual([bobKey]);
    expect(encodeManifest(manifest).length).toBeGreaterThan(0);
  });
});
