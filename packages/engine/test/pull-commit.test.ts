import { findMarkerBlocks } from '@slivingdoc/merge';
import { describe, expect, it } from 'vitest';
import { aliceAndBob, get, memoryStore, participant, put, rejection, snapshot } from './helpers';

describe('pull and commit against the memory store', () => {
  it('publishes a first commit as a checkpoint and a second as an increment', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    const pulled = await alice.service.pull({});
    expect(pulled).toMatchObject({ code: 'OK', generation: 0, files: [] });
    await put(alice.dir, 'notes/a.md', 'one\ntwo\n');
    const first = await alice.service.commit({ message: 'first' });
    expect(first).toMatchObject({ code: 'OK', generation: 1, filesChanged: 1, insertions: 2 });
    await put(alice.dir, 'notes/a.md', 'one\nTWO\n');
    const second = await alice.service.commit({ message: 'second' });
    expect(second).toMatchObject({
      generation: 2,
      files: [{ path: 'notes/a.md', insertions: 1, deletions: 1 }],
    });

    const bob = await participant(store);
    const fresh = await bob.service.pull({});
    expect(fresh).toMatchObject({
      generation: 2,
      files: [{ path: 'notes/a.md', insertions: 2, deletions: 0 }],
    });
    expect(await snapshot(bob.dir)).toEqual({ 'notes/a.md': 'one\nTWO\n' });
  });

  it('merges disjoint edits of two writers', async () => {
    const store = memoryStore();
    const { alice, bob } = await aliceAndBob(store);
    await put(bob.dir, 'b.md', 'b\n');
    await put(alice.dir, 'a.md', 'a2\n');
    await alice.service.commit({ message: 'a2' });
    const result = await bob.service.commit({ message: 'b' });
    expect(result.generation).toBe(3);
    expect(await snapshot(bob.dir)).toEqual({ 'a.md': 'a2\n', 'b.md': 'b\n' });
  });

  it('reports overlapping edits as MERGE_CONFLICT with ranges and leaves R unchanged', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    const bob = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'n.md', 'x\ny\nz\n');
    await alice.service.commit({ message: 'base' });
    await bob.service.pull({});
    await put(alice.dir, 'n.md', 'x\nALICE\nz\n');
    await alice.service.commit({ message: 'alice' });
    await put(bob.dir, 'n.md', 'x\nBOB\nz\n');
    const before = await store.get('current');
    const err = await rejection(bob.service.commit({ message: 'bob' }));
    expect(err).toMatchObject({
      code: 'CONTENT_CONFLICT',
      reason: 'MERGE_CONFLICT',
      files: [{ path: 'n.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 2, end: 6 }] }],
    });
    expect((await store.get('current'))?.etag).toBe(before?.etag);
    expect(await get(bob.dir, 'n.md')).toBe(
      'x\n<<<<<<< local\nBOB\n=======\nALICE\n>>>>>>> remote\nz\n',
    );
    const markers = await rejection(bob.service.commit({ message: 'still markers' }));
    expect(markers).toMatchObject({
      code: 'CONTENT_CONFLICT',
      reason: 'UNRESOLVED_MARKERS',
      files: [{ path: 'n.md', reason: 'MARKER_BLOCK', ranges: [{ start: 2, end: 6 }] }],
    });
    await put(bob.dir, 'n.md', 'x\nBOTH\nz\n');
    const resolved = await bob.service.commit({ message: 'resolved' });
    expect(resolved.generation).toBe(3);
    await alice.service.pull({});
    expect(await get(alice.dir, 'n.md')).toBe('x\nBOTH\nz\n');
  });

  it('refuses a commit of an unpulled directory before any store call', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    store.clearCalls();
    const err = await rejection(alice.service.commit({ message: 'm' }));
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', reason: 'NOT_PULLED' });
    expect(store.calls).toEqual([]);
  });

  it('makes a no-op commit without any store mutation', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });
    store.clearCalls();
    const result = await alice.service.commit({ message: 'nothing' });
    expect(result).toMatchObject({ code: 'OK', generation: 1, files: [] });
    expect(store.calls.map((c) => c.op).filter((op) => op !== 'get')).toEqual([]);
  });
});

describe('reported ranges are the documented scanner over the materialised file (contract §6)', () => {
  it('a later conflict around an old unresolved block reports the blocks a commit refuses', async () => {
    const store = memoryStore();
    const { alice, bob } = await aliceAndBob(store);
    await put(alice.dir, 'a.md', '1\n2\n3\n');
    await alice.service.commit({ message: 'lines' });
    await bob.service.pull({});
    await put(alice.dir, 'a.md', '1\n2 alice\n3\n');
    await alice.service.commit({ message: 'alice' });
    await put(bob.dir, 'a.md', '1\n2 bob\n3\n');
    expect(await rejection(bob.service.pull({}))).toMatchObject({ reason: 'MERGE_CONFLICT' });
    // Bob leaves the block; Alice edits the same region again: the new block nests the old.
    await put(alice.dir, 'a.md', '1 again\n2 alice again\n3\n');
    await alice.service.commit({ message: 'again' });
    const err = await rejection(bob.service.pull({}));
    const onDisk = findMarkerBlocks(Buffer.from(await get(bob.dir, 'a.md')));
    expect(onDisk.length).toBeGreaterThan(0);
    expect(err).toMatchObject({
      reason: 'MERGE_CONFLICT',
      files: [{ path: 'a.md', reason: 'TEXT_CONFLICT', ranges: onDisk }],
    });
    expect(await rejection(bob.service.commit({ message: 'blocked' }))).toMatchObject({
      reason: 'UNRESOLVED_MARKERS',
      files: [{ path: 'a.md', reason: 'MARKER_BLOCK', ranges: onDisk }],
    });
  });
});
