import { decodeManifest, type MemoryStore } from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import { FAILPOINT, FailpointRegistry } from '../src/index';
import { memoryStore, participant, put, snapshot } from './helpers';

async function manifestOf(store: MemoryStore) {
  const object = await store.get('current');
  if (object === undefined) throw new Error('no current');
  return decodeManifest(object.body);
}

describe('checkpoints, retention and cleanup (threshold 3)', () => {
  it('compacts a stable prefix, retains the previous chain and deletes exactly the unreferenced packs at or before the cutoff', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const writer = await participant(store, {
      checkpointPacks: 3,
      retainedCheckpoints: 1,
      failpoints,
    });
    const rival = await participant(store);
    await writer.service.pull({});
    await put(writer.dir, 'f0.md', '0\n');
    await writer.service.commit({ message: 'c0' }); // generation 1: checkpoint through position 1
    await rival.service.pull({});
    // An orphan at position 2: the rival loses the race for position 2 and retries at 3.
    await put(rival.dir, 'rival.md', 'r\n');
    await put(writer.dir, 'f1.md', '1\n');
    failpoints.set(
      FAILPOINT.afterPackUpload,
      async () => void (await rival.service.commit({ message: 'rival' })),
      1,
    );
    await writer.service.commit({ message: 'c1' });
    const listed = async () => (await store.list('packs/')).map((o) => o.key).sort();
    const beforeCheckpoint = await manifestOf(store);
    expect(beforeCheckpoint.increments).toHaveLength(2);
    await put(writer.dir, 'f2.md', '2\n');
    const third = await writer.service.commit({ message: 'c2' }); // third increment: threshold reached
    await writer.service.close();
    const after = await manifestOf(store);
    expect(third.generation).toBe(4);
    expect(after.generation).toBe(5n);
    expect(after.increments).toHaveLength(0);
    expect(after.checkpoint.throughGeneration).toBe(4n);
    expect(after.retained).toHaveLength(1);
    expect(after.retained[0]?.retiredAtGeneration).toBe(5n);
    expect(after.retained[0]?.checkpoint.key).toBe(beforeCheckpoint.checkpoint.key);
    // Referenced: the new checkpoint, the retained checkpoint and its three increments.
    const referenced = [
      after.checkpoint.key,
      after.retained[0]?.checkpoint.key,
      ...(after.retained[0]?.increments.map((i) => i.key) ?? []),
    ];
    expect(await listed()).toEqual([...referenced].sort());
    const deletes = store.calls.filter((c) => c.op === 'deleteMany').flatMap((c) => c.keys);
    expect(deletes).toHaveLength(1);
    expect(deletes[0]).toMatch(/^packs\/increments\/2-/);

    const reader = await participant(store);
    await reader.service.pull({});
    expect(await snapshot(reader.dir)).toEqual({
      'f0.md': '0\n',
      'f1.md': '1\n',
      'f2.md': '2\n',
      'rival.md': 'r\n',
    });
  });

  it('a fresh reader pulls from checkpoint plus tail, and an unreferenced pack newer than the cutoff survives', async () => {
    const store = memoryStore();
    const writer = await participant(store, { checkpointPacks: 2, retainedCheckpoints: 0 });
    await writer.service.pull({});
    for (let i = 0; i < 3; i += 1) {
      await put(writer.dir, `f${i}.md`, `${i}\n`);
      await writer.service.commit({ message: `c${i}` });
    }
    await writer.service.close();
    const checkpointed = await manifestOf(store);
    expect(checkpointed.retained).toEqual([]);
    expect(checkpointed.checkpoint.throughGeneration).toBe(3n);
    // A proposal in flight for a later position must survive cleanup.
    await store.putImmutable(
      'packs/increments/9-0190a0b0-0000-7000-8000-000000000000.pack',
      new Uint8Array([1]),
      {},
    );
    await put(writer.dir, 'f3.md', '3\n');
    await writer.service.commit({ message: 'c3' });
    await put(writer.dir, 'f4.md', '4\n');
    await writer.service.commit({ message: 'c4' });
    await writer.service.close();
    const now = await manifestOf(store);
    expect(now.checkpoint.throughGeneration).toBe(5n);
    const keys = (await store.list('packs/')).map((o) => o.key);
    expect(keys).toContain('packs/increments/9-0190a0b0-0000-7000-8000-000000000000.pack');
    const reader = await participant(store);
    await reader.service.pull({});
    expect(Object.keys(await snapshot(reader.dir))).toEqual([
      'f0.md',
      'f1.md',
      'f2.md',
      'f3.md',
      'f4.md',
    ]);
  });

  it('a lost checkpoint CAS rewrites only the manifest, never the pack', async () => {
    const store = memoryStore();
    const writer = await participant(store, { checkpointPacks: 2 });
    await writer.service.pull({});
    await put(writer.dir, 'a.md', 'a\n');
    await writer.service.commit({ message: 'a' });
    await put(writer.dir, 'b.md', 'b\n');
    await writer.service.commit({ message: 'b' });
    store.clearCalls();
    // The commit's own CAS goes first; the checkpoint's first CAS is sent with a stale ETag.
    let casSeen = 0;
    const original = store.replaceIfMatch.bind(store);
    store.replaceIfMatch = (key, body, etag) => {
      casSeen += 1;
      return casSeen === 2 ? original(key, body, '"stale"') : original(key, body, etag);
    };
    await put(writer.dir, 'c.md', 'c\n');
    await writer.service.commit({ message: 'c' });
    await writer.service.close();
    const checkpointUploads = store.calls.filter(
      (c) => c.op === 'putImmutable' && c.keys[0]?.startsWith('packs/checkpoints/'),
    );
    expect(checkpointUploads).toHaveLength(1);
    const manifest = await manifestOf(store);
    expect(manifest.checkpoint.key).toBe(checkpointUploads[0]?.keys[0]);
  });
});

describe('a failing checkpoint never fails a commit (contract §11)', () => {
  it('a checkpoint that dies after its pack upload leaves an orphan that a later checkpoint cleans up', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const writer = await participant(store, { checkpointPacks: 3, failpoints });
    await writer.service.pull({});
    for (let i = 0; i < 3; i += 1) {
      await put(writer.dir, `f${i}.md`, `${i}\n`);
      await writer.service.commit({ message: `c${i}` });
    }
    // The third increment (generation 4) is committed; the checkpoint it schedules fails.
    failpoints.set(FAILPOINT.afterCheckpointPackUpload, 'throw', 1);
    await put(writer.dir, 'f3.md', '3\n');
    expect(await writer.service.commit({ message: 'c3' })).toMatchObject({
      code: 'OK',
      generation: 4,
    });
    await writer.service.close();
    const stalled = await manifestOf(store);
    expect(stalled.generation).toBe(4n);
    expect(stalled.increments).toHaveLength(3);
    const orphans = (await store.list('packs/'))
      .map((o) => o.key)
      .filter((key) => key.startsWith('packs/checkpoints/') && key !== stalled.checkpoint.key);
    expect(orphans).toHaveLength(1);

    // Cleanup fails once too: the checkpoint still lands and the commit is still OK.
    failpoints.set(FAILPOINT.beforeCleanupDelete, 'throw', 1);
    await put(writer.dir, 'f4.md', '4\n');
    expect(await writer.service.commit({ message: 'c4' })).toMatchObject({ generation: 5 });
    await writer.service.close();
    const checkpointed = await manifestOf(store);
    expect(checkpointed.generation).toBe(6n);
    expect(checkpointed.increments).toHaveLength(1);
    expect((await store.list('packs/')).map((o) => o.key)).toContain(orphans[0]);

    // The next checkpoint's cleanup removes the orphan.
    for (let i = 5; i < 7; i += 1) {
      await put(writer.dir, `f${i}.md`, `${i}\n`);
      await writer.service.commit({ message: `c${i}` });
    }
    await writer.service.close();
    const keys = (await store.list('packs/')).map((o) => o.key);
    expect(keys).not.toContain(orphans[0]);
    const reader = await participant(store);
    await reader.service.pull({});
    expect(Object.keys(await snapshot(reader.dir))).toHaveLength(7);
  });
});
