/**
 * The publication gate (docs/engine.md): writers that share a store take turns per attempt, so
 * a burst of them spends no CAS attempt on a race among themselves; a writer whose waiting
 * budget is spent races without the gate; a wait can be cancelled.
 */
import { randomUUID } from 'node:crypto';
import { createMemoryStore, type MemoryStore } from '@slivingdoc/store';
import { acquireLock } from '@slivingdoc/workspace';
import { describe, expect, it } from 'vitest';
import { publicationGateKey } from '../src/notebook/publication/queue';
import { participant, put, rejection } from './helpers';

/** A store of its own: the gate's name is machine-wide, and other test files run beside. */
function privateStore(): MemoryStore {
  return createMemoryStore({ prefix: `gate-${randomUUID()}` });
}

const casCalls = (store: MemoryStore) =>
  store.calls.filter((c) => c.op === 'replaceIfMatch').length;
const currentReads = (store: MemoryStore) =>
  store.calls.filter((c) => c.op === 'get' && c.keys.includes('current')).length;

/** Alice, pulled and with `a.md` to commit, and the gate of her store held by someone else. */
async function aliceWhileGateHeld(publicationGateMs: number) {
  const store = privateStore();
  const alice = await participant(store, { publicationGateMs });
  await alice.service.pull({});
  await put(alice.dir, 'a.md', 'a\n');
  const held = await acquireLock(publicationGateKey(store.identity), { timeoutMs: 1_000 });
  return { store, alice, held };
}

describe('publication gate', () => {
  it('lets a burst of writers on one store publish with one CAS each', async () => {
    const store = privateStore();
    const writers = await Promise.all(
      Array.from({ length: 8 }, () => participant(store, { publicationGateMs: 30_000 })),
    );
    const first = writers[0]!;
    await first.service.pull({});
    await put(first.dir, 'seed.md', 'seed\n');
    await first.service.commit({ message: 'seed' });
    for (const w of writers) await w.service.pull({});
    store.clearCalls();

    await Promise.all(writers.map((w, i) => put(w.dir, `notes/w${i}.md`, `writer ${i}\n`)));
    const results = await Promise.all(
      writers.map((w, i) => w.service.commit({ message: `burst ${i}` })),
    );

    expect(results.map((r) => r.code)).toEqual(writers.map(() => 'OK'));
    expect(casCalls(store)).toBe(writers.length);
    // Inside the gate `current` is read once per attempt: no local writer can move it between
    // that read and the CAS, so the re-read before the upload is skipped.
    expect(currentReads(store)).toBe(writers.length);
    const generations = results.map((r) => Number(r.generation)).sort((a, b) => a - b);
    expect(generations).toEqual(writers.map((_, i) => i + 2));
  });

  it('races without the gate once the waiting budget is spent', async () => {
    const { store, alice, held } = await aliceWhileGateHeld(200);
    try {
      const result = await alice.service.commit({ message: 'a' });
      // Answered while another holder still has the gate.
      expect(result.code).toBe('OK');
      expect(casCalls(store) + store.calls.filter((c) => c.op === 'createIfAbsent').length).toBe(1);
    } finally {
      await held();
    }
  });

  it('stops waiting when the call is cancelled, publishing nothing', async () => {
    const { store, alice, held } = await aliceWhileGateHeld(60_000);
    try {
      const controller = new AbortController();
      const commit = alice.service.commit({ message: 'a', signal: controller.signal });
      setTimeout(() => controller.abort(new Error('cancelled by test')), 100);
      // Wherever the abort lands before publishing (at the gate, or earlier on a slow machine),
      // the call rejects with its reason.
      expect(await rejection(commit)).toBe(controller.signal.reason);
      expect(store.calls.filter((c) => c.op === 'putImmutable')).toHaveLength(0);
    } finally {
      await held();
    }
    expect((await alice.service.commit({ message: 'a' })).code).toBe('OK');
  });
});
