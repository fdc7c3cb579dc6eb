import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryStore, participant, put, rejection, snapshot, stateFile } from './helpers';

describe('read-only paths (contract §5)', () => {
  it('a commit touching read-only files resets exactly those, keeps the other edits and publishes nothing', async () => {
    const store = memoryStore();
    const owner = await participant(store);
    await owner.service.pull({});
    await put(owner.dir, 'ref/a.md', 'a\n');
    await put(owner.dir, 'ref/b.md', 'b\n');
    await put(owner.dir, 'notes/n.md', 'n\n');
    await owner.service.commit({ message: 'seed' });

    const agent = await participant(store, { readOnly: ['ref'] });
    await agent.service.pull({});
    await put(agent.dir, 'ref/a.md', 'a changed\n'); // modified
    await rm(join(agent.dir, 'ref/b.md')); // deleted
    await put(agent.dir, 'ref/c.md', 'c\n'); // added
    await put(agent.dir, 'notes/n.md', 'n edited\n'); // writable edit
    await put(agent.dir, 'notes/new.md', 'new\n'); // writable addition
    const before = await store.get('current');
    store.clearCalls();

    const err = await rejection(agent.service.commit({ message: 'mixed' }));
    expect(err).toMatchObject({
      code: 'READ_ONLY_PATH',
      reason: 'CHANGE_OUTSIDE_WRITABLE',
      files: [
        { path: 'ref/a.md', reason: 'READ_ONLY_PATH', ranges: [] },
        { path: 'ref/b.md', reason: 'READ_ONLY_PATH', ranges: [] },
        { path: 'ref/c.md', reason: 'READ_ONLY_PATH', ranges: [] },
      ],
    });
    // Nothing published, not even a pack.
    expect(store.calls.filter((c) => c.op !== 'get')).toEqual([]);
    expect((await store.get('current'))?.etag).toBe(before?.etag);
    expect(await snapshot(agent.dir)).toEqual({
      'notes/n.md': 'n edited\n',
      'notes/new.md': 'new\n',
      'ref/a.md': 'a\n',
      'ref/b.md': 'b\n',
    });
    const state = JSON.parse(await readFile(await stateFile(agent.privateRoot), 'utf8'));
    expect(state.recoveryRequired).toBe(false);

    // The edits that stayed are published by the next commit.
    const next = await agent.service.commit({ message: 'writable only' });
    expect(next).toMatchObject({
      code: 'OK',
      generation: 2,
      readOnly: ['ref'],
      writable: [],
      files: [
        { path: 'notes/n.md', insertions: 1, deletions: 1 },
        { path: 'notes/new.md', insertions: 1, deletions: 0 },
      ],
    });
    await owner.service.pull({});
    expect(await snapshot(owner.dir)).toEqual(await snapshot(agent.dir));
  });

  it('with only a writable set, a change outside it is refused and reset', async () => {
    const store = memoryStore();
    const agent = await participant(store, { writable: ['drafts'] });
    await agent.service.pull({});
    await put(agent.dir, 'drafts/d.md', 'd\n');
    await put(agent.dir, 'top.md', 'top\n');
    const err = await rejection(agent.service.commit({ message: 'm' }));
    expect(err).toMatchObject({
      code: 'READ_ONLY_PATH',
      files: [{ path: 'top.md', reason: 'READ_ONLY_PATH', ranges: [] }],
    });
    expect(await store.get('current')).toBeUndefined();
    expect(await snapshot(agent.dir)).toEqual({ 'drafts/d.md': 'd\n' });
    const ok = await agent.service.commit({ message: 'drafts' });
    expect(ok).toMatchObject({ generation: 1, writable: ['drafts'], readOnly: [] });
  });

  it('pull merges read-only edits like any other and leaves them in L', async () => {
    const store = memoryStore();
    const owner = await participant(store);
    await owner.service.pull({});
    await put(owner.dir, 'ref/a.md', 'a\n');
    await owner.service.commit({ message: 'seed' });
    const agent = await participant(store, { readOnly: ['ref'] });
    await agent.service.pull({});
    await put(agent.dir, 'ref/a.md', 'mine\n');
    await put(owner.dir, 'other.md', 'o\n');
    await owner.service.commit({ message: 'other' });
    const pulled = await agent.service.pull({});
    expect(pulled).toMatchObject({ code: 'OK', generation: 2, readOnly: ['ref'] });
    expect(await snapshot(agent.dir)).toEqual({ 'other.md': 'o\n', 'ref/a.md': 'mine\n' });
  });
});
