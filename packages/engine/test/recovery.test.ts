import { readFile } from 'node:fs/promises';
import { decodeManifest, type MemoryStore } from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import { FAILPOINT, FailpointRegistry } from '../src/index';
import {
  aliceAndBob,
  memoryStore,
  participant,
  put,
  rejection,
  snapshot,
  stateFile,
} from './helpers';

async function flagOf(privateRoot: string): Promise<boolean> {
  return JSON.parse(await readFile(await stateFile(privateRoot), 'utf8')).recoveryRequired;
}

async function generationOf(store: MemoryStore): Promise<bigint> {
  const object = await store.get('current');
  return object === undefined ? 0n : decodeManifest(object.body).generation;
}

/** Alice (with failpoints) and Bob share a store; Bob has published two files Alice lacks. */
async function twoWriters() {
  const store = memoryStore();
  const failpoints = new FailpointRegistry();
  const { alice, bob } = await aliceAndBob(store, { failpoints });
  await put(bob.dir, 'b1.md', 'b1\n');
  await put(bob.dir, 'b2.md', 'b2\n');
  await bob.service.commit({ message: 'b' });
  return { store, failpoints, alice, bob };
}

const EVERYTHING = { 'a.md': 'a2\n', 'b1.md': 'b1\n', 'b2.md': 'b2\n', 'mine.md': 'mine\n' };

describe('RECOVERY_FAILURE (contract §10)', () => {
  it.each([
    [FAILPOINT.afterRecoveryFlag, 'materialize'],
    [FAILPOINT.midMaterialize, 'materialize'],
    [FAILPOINT.afterMaterialize, 'materialize'],
  ] as const)(
    'a commit failing at %s after its CAS landed reports stage %s, remoteAccepted yes, resynchronized',
    async (point, stage) => {
      const { store, failpoints, alice, bob } = await twoWriters();
      await put(alice.dir, 'a.md', 'a2\n');
      await put(alice.dir, 'mine.md', 'mine\n');
      failpoints.set(point, 'throw', 1);
      const err = await rejection(alice.service.commit({ message: 'mine' }));
      expect(err).toMatchObject({
        code: 'RECOVERY_FAILURE',
        reason: 'UNEXPECTED_FAILURE',
        files: [],
        recovery: { stage, remoteAccepted: 'yes', resynchronized: true },
      });
      // The publication landed; the repair rebuilt L from it; the flag is down.
      expect(await generationOf(store)).toBe(3n);
      expect(await snapshot(alice.dir)).toEqual(EVERYTHING);
      expect(await flagOf(alice.privateRoot)).toBe(false);
      // The next call is ordinary: nothing left to publish.
      expect(await alice.service.commit({ message: 'again' })).toMatchObject({
        generation: 3,
        files: [],
      });
      await bob.service.pull({});
      expect(await snapshot(bob.dir)).toEqual(EVERYTHING);
    },
  );

  it('a pull failing mid-materialize reports remoteAccepted no and is repaired at once', async () => {
    const { failpoints, alice } = await twoWriters();
    await put(alice.dir, 'mine.md', 'mine\n');
    failpoints.set(FAILPOINT.midMaterialize, 'throw', 1);
    const err = await rejection(alice.service.pull({}));
    expect(err).toMatchObject({
      code: 'RECOVERY_FAILURE',
      reason: 'UNEXPECTED_FAILURE',
      recovery: { stage: 'materialize', remoteAccepted: 'no', resynchronized: true },
    });
    expect(await snapshot(alice.dir)).toEqual({
      'a.md': 'a\n',
      'b1.md': 'b1\n',
      'b2.md': 'b2\n',
      'mine.md': 'mine\n',
    });
    expect(await flagOf(alice.privateRoot)).toBe(false);
  });

  it('when the repair fails too, the flag stays, L keeps every byte, and the next call repairs first', async () => {
    const { store, failpoints, alice, bob } = await twoWriters();
    await put(alice.dir, 'a.md', 'a2\n');
    await put(alice.dir, 'mine.md', 'mine\n');
    // Fires on the commit's rewrite and again on the repair's, so the repair cannot finish.
    failpoints.set(FAILPOINT.midMaterialize, 'throw');
    const err = await rejection(alice.service.commit({ message: 'mine' }));
    expect(err).toMatchObject({
      code: 'RECOVERY_FAILURE',
      reason: 'UNEXPECTED_FAILURE',
      recovery: { stage: 'materialize', remoteAccepted: 'yes', resynchronized: false },
    });
    expect(await flagOf(alice.privateRoot)).toBe(true);
    const half = await snapshot(alice.dir);
    expect(half['a.md']).toBe('a2\n');
    expect(half['mine.md']).toBe('mine\n');

    failpoints.clear();
    const pulled = await alice.service.pull({});
    expect(pulled).toMatchObject({ code: 'OK', generation: 3 });
    expect(await snapshot(alice.dir)).toEqual(EVERYTHING);
    expect(await flagOf(alice.privateRoot)).toBe(false);
    expect(await generationOf(store)).toBe(3n);
    await bob.service.pull({});
    expect(await snapshot(bob.dir)).toEqual(EVERYTHING);
  });

  it('RESYNC_PENDING while the store is unreachable, then the next call repairs and commits', async () => {
    const { store, failpoints, alice, bob } = await twoWriters();
    await put(alice.dir, 'mine.md', 'mine\n');
    // The pull fails mid-rewrite, and its repair cannot read `current`.
    failpoints.set(
      FAILPOINT.midMaterialize,
      () => {
        store.inject({ op: 'get', key: 'current', action: { type: 'fail', kind: 'unreachable' } });
        throw new Error('disk hiccup');
      },
      1,
    );
    const first = await rejection(alice.service.pull({}));
    expect(first).toMatchObject({
      code: 'RECOVERY_FAILURE',
      reason: 'UNEXPECTED_FAILURE',
      recovery: { stage: 'materialize', remoteAccepted: 'no', resynchronized: false },
    });
    expect(await flagOf(alice.privateRoot)).toBe(true);
    await put(alice.dir, 'later.md', 'later\n');
    const held = await snapshot(alice.dir);

    for (const call of [
      () => alice.service.commit({ message: 'blocked' }),
      () => alice.service.pull({}),
    ]) {
      store.inject({ op: 'get', key: 'current', action: { type: 'fail', kind: 'unreachable' } });
      store.clearCalls();
      const pending = await rejection(call());
      expect(pending).toMatchObject({
        code: 'RECOVERY_FAILURE',
        reason: 'RESYNC_PENDING',
        recovery: { stage: 'resync', remoteAccepted: 'unknown', resynchronized: false },
      });
      expect(store.calls.filter((c) => c.op !== 'get')).toEqual([]);
      expect(await snapshot(alice.dir)).toEqual(held);
      expect(await flagOf(alice.privateRoot)).toBe(true);
    }

    const committed = await alice.service.commit({ message: 'after repair' });
    expect(committed).toMatchObject({
      code: 'OK',
      generation: 3,
      files: [
        { path: 'later.md', insertions: 1, deletions: 0 },
        { path: 'mine.md', insertions: 1, deletions: 0 },
      ],
    });
    expect(await flagOf(alice.privateRoot)).toBe(false);
    await bob.service.pull({});
    expect(await snapshot(bob.dir)).toEqual(await snapshot(alice.dir));
  });

  it('a commit after a failed first pull repairs under the lock, then answers NOT_PULLED (contract §2 order)', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const { bob } = await aliceAndBob(store);
    const carol = await participant(store, { failpoints });
    await put(carol.dir, 'mine.md', 'mine\n');
    // The first pull and its own repair both fail while rewriting L: the flag stays set and
    // the directory is not registered (only an OK or CONTENT_CONFLICT pull registers it).
    failpoints.set(FAILPOINT.midMaterialize, 'throw', 2);
    const first = await rejection(carol.service.pull({}));
    expect(first).toMatchObject({
      code: 'RECOVERY_FAILURE',
      recovery: { stage: 'materialize', resynchronized: false },
    });
    expect(await flagOf(carol.privateRoot)).toBe(true);

    // Lock, then the pending repair, then NOT_PULLED: L is rebuilt and the caller's file kept.
    const commit = await rejection(carol.service.commit({ message: 'too early' }));
    expect(commit).toMatchObject({ code: 'INVALID_REQUEST', reason: 'NOT_PULLED' });
    expect(await flagOf(carol.privateRoot)).toBe(false);
    expect(await snapshot(carol.dir)).toEqual({ 'a.md': 'a\n', 'mine.md': 'mine\n' });
    expect(await carol.service.pull({})).toMatchObject({ code: 'OK' });
    expect(await carol.service.commit({ message: 'now' })).toMatchObject({ code: 'OK' });
    await bob.service.pull({});
    expect(await snapshot(bob.dir)).toEqual({ 'a.md': 'a\n', 'mine.md': 'mine\n' });
  });
});
