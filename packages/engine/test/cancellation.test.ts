import { readFile } from 'node:fs/promises';
import { decodeManifest } from '@slivingdoc/store';
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

async function state(privateRoot: string) {
  return JSON.parse(await readFile(await stateFile(privateRoot), 'utf8'));
}

describe('cancellation (contract §2, §9)', () => {
  it('a commit cancelled after its CAS was sent runs to completion: R accepted, L = R, P consistent', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const { alice, bob } = await aliceAndBob(store, { failpoints });
    await put(bob.dir, 'b.md', 'b\n');
    await bob.service.commit({ message: 'b' });

    await put(alice.dir, 'a.md', 'a2\n');
    const controller = new AbortController();
    const reason = new Error('cancelled by the client');
    failpoints.set(FAILPOINT.afterCasSent, () => controller.abort(reason), 1);
    const err = await rejection(alice.service.commit({ message: 'a2', signal: controller.signal }));
    // The result is discarded: the call rejects with the signal's reason, never an envelope.
    expect(err).toBe(reason);

    const object = await store.get('current');
    const manifest = decodeManifest(object?.body as Uint8Array);
    expect(manifest.generation).toBe(3n);
    expect(await snapshot(alice.dir)).toEqual({ 'a.md': 'a2\n', 'b.md': 'b\n' });
    const recorded = await state(alice.privateRoot);
    expect(recorded.recoveryRequired).toBe(false);
    expect(BigInt(recorded.remoteGeneration)).toBe(3n);
    expect(recorded.baselineHead).toBe(manifest.head);
    // Nothing is left to publish: the next commit is a no-op.
    store.clearCalls();
    const again = await alice.service.commit({ message: 'nothing' });
    expect(again).toMatchObject({ code: 'OK', generation: 3, files: [] });
    expect(store.calls.filter((c) => c.op !== 'get')).toEqual([]);
    await bob.service.pull({});
    expect(await snapshot(bob.dir)).toEqual({ 'a.md': 'a2\n', 'b.md': 'b\n' });
  });

  it('a commit cancelled before its CAS publishes nothing and leaves L as it was', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const alice = await participant(store, { failpoints });
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    await put(alice.dir, 'a.md', 'a2\n');
    const controller = new AbortController();
    failpoints.set(FAILPOINT.afterPackUpload, () => controller.abort(), 1);
    const before = await store.get('current');
    const stateBefore = await readFile(await stateFile(alice.privateRoot), 'utf8');
    const err = await rejection(alice.service.commit({ message: 'a2', signal: controller.signal }));
    expect(err).toBe(controller.signal.reason);
    expect((await store.get('current'))?.etag).toBe(before?.etag);
    expect(await snapshot(alice.dir)).toEqual({ 'a.md': 'a2\n' });
    expect(await readFile(await stateFile(alice.privateRoot), 'utf8')).toBe(stateBefore);
  });

  it('a pull cancelled before L changes leaves L, P and R untouched', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const writer = await participant(store);
    const reader = await participant(store, { failpoints });
    await writer.service.pull({});
    await put(writer.dir, 'a.md', 'a\n');
    await writer.service.commit({ message: 'a' });
    await reader.service.pull({});
    await put(writer.dir, 'b.md', 'b\n');
    await writer.service.commit({ message: 'b' });
    await put(reader.dir, 'mine.md', 'mine\n');

    const controller = new AbortController();
    const reason = new Error('cancelled');
    failpoints.set(FAILPOINT.afterFetch, () => controller.abort(reason), 1);
    const stateBefore = await readFile(await stateFile(reader.privateRoot), 'utf8');
    const currentBefore = await store.get('current');
    const err = await rejection(reader.service.pull({ signal: controller.signal }));
    expect(err).toBe(reason);
    expect(await snapshot(reader.dir)).toEqual({ 'a.md': 'a\n', 'mine.md': 'mine\n' });
    expect(await readFile(await stateFile(reader.privateRoot), 'utf8')).toBe(stateBefore);
    expect((await store.get('current'))?.etag).toBe(currentBefore?.etag);
    // The directory is usable at once: the next pull brings the new file in.
    const pulled = await reader.service.pull({});
    expect(pulled).toMatchObject({ code: 'OK', generation: 2 });
    expect(await snapshot(reader.dir)).toEqual({
      'a.md': 'a\n',
      'b.md': 'b\n',
      'mine.md': 'mine\n',
    });
  });
});
