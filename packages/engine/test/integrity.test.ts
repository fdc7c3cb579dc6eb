import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { openObjectDb } from '@slivingdoc/merge';
import { decodeManifest, encodeManifest, type Manifest, type MemoryStore } from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import { createNotebookService } from '../src/index';
import {
  INSTANT_CLOCK,
  memoryStore,
  type Participant,
  participant,
  put,
  rejection,
  snapshot,
  stateFile,
} from './helpers';

async function currentOf(store: MemoryStore): Promise<{ manifest: Manifest; etag: string }> {
  const object = await store.get('current');
  if (object === undefined) throw new Error('no current');
  return { manifest: decodeManifest(object.body), etag: object.etag };
}

/** A store with two publications, and a fresh reader whose L holds one unpublished file. */
async function published() {
  const store = memoryStore();
  const writer = await participant(store);
  await writer.service.pull({});
  await put(writer.dir, 'a.md', 'a\n');
  await writer.service.commit({ message: 'a' });
  await put(writer.dir, 'b.md', 'b\n');
  await writer.service.commit({ message: 'b' });
  const reader = await participant(store);
  await put(reader.dir, 'mine.md', 'mine\n');
  return { store, writer, reader };
}

async function rewriteCurrent(store: MemoryStore, edit: (m: Manifest) => Manifest): Promise<void> {
  const { manifest, etag } = await currentOf(store);
  await store.replaceIfMatch('current', encodeManifest(edit(manifest)), etag);
}

describe('integrity of R', () => {
  it('a pack whose bytes differ from the descriptor is CHECKSUM_MISMATCH, L untouched', async () => {
    const { store, reader } = await published();
    await rewriteCurrent(store, (m) => ({
      ...m,
      checkpoint: { ...m.checkpoint, sha256: 'f'.repeat(64) },
    }));
    const err = await rejection(reader.service.pull({}));
    expect(err).toMatchObject({ code: 'STORAGE_INTEGRITY', reason: 'CHECKSUM_MISMATCH' });
    expect(await snapshot(reader.dir)).toEqual({ 'mine.md': 'mine\n' });
  });

  it('a pack of the wrong size is CHECKSUM_MISMATCH, L untouched', async () => {
    const { store, reader } = await published();
    await rewriteCurrent(store, (m) => ({
      ...m,
      increments: m.increments.map((i) => ({ ...i, size: i.size + 1n })),
    }));
    const err = await rejection(reader.service.pull({}));
    expect(err).toMatchObject({ code: 'STORAGE_INTEGRITY', reason: 'CHECKSUM_MISMATCH' });
    expect(await snapshot(reader.dir)).toEqual({ 'mine.md': 'mine\n' });
  });

  it('a missing pack under an unchanged manifest is MISSING_PACK, L untouched', async () => {
    const { store, reader } = await published();
    const { manifest } = await currentOf(store);
    store.drop(manifest.increments[0]?.key as string);
    const err = await rejection(reader.service.pull({}));
    expect(err).toMatchObject({ code: 'STORAGE_INTEGRITY', reason: 'MISSING_PACK' });
    expect(await snapshot(reader.dir)).toEqual({ 'mine.md': 'mine\n' });
  });

  it('an invalid manifest is INVALID_MANIFEST and no pack is touched', async () => {
    const { store, reader } = await published();
    const { etag } = await currentOf(store);
    await store.replaceIfMatch('current', new TextEncoder().encode('{"version":1}'), etag);
    store.clearCalls();
    const err = await rejection(reader.service.pull({}));
    expect(err).toMatchObject({ code: 'STORAGE_INTEGRITY', reason: 'INVALID_MANIFEST' });
    const packReads = store.calls.filter(
      (c) => c.op === 'getStream' || (c.op === 'get' && c.keys[0]?.startsWith('packs/')),
    );
    expect(packReads).toEqual([]);
    expect(await snapshot(reader.dir)).toEqual({ 'mine.md': 'mine\n' });
  });

  it('a wiped store under a pulled directory is REMOTE_ROLLED_BACK, never an empty notebook', async () => {
    const { store, writer } = await published();
    store.drop('current');
    const err = await rejection(writer.service.pull({}));
    expect(err).toMatchObject({ code: 'STORAGE_INTEGRITY', reason: 'REMOTE_ROLLED_BACK' });
    expect(await snapshot(writer.dir)).toEqual({ 'a.md': 'a\n', 'b.md': 'b\n' });
    await put(writer.dir, 'c.md', 'c\n');
    const commit = await rejection(writer.service.commit({ message: 'c' }));
    expect(commit).toMatchObject({ code: 'STORAGE_INTEGRITY', reason: 'REMOTE_ROLLED_BACK' });
  });

  it('a rolled-back current older than the baseline is REMOTE_ROLLED_BACK', async () => {
    const store = memoryStore();
    const writer = await participant(store);
    await writer.service.pull({});
    await put(writer.dir, 'a.md', 'a\n');
    await writer.service.commit({ message: 'a' });
    const old = await store.get('current');
    await put(writer.dir, 'a.md', 'a2\n');
    await writer.service.commit({ message: 'a2' });
    const { etag } = await currentOf(store);
    await store.replaceIfMatch('current', old?.body as Uint8Array, etag);
    const err = await rejection(writer.service.pull({}));
    expect(err).toMatchObject({ code: 'STORAGE_INTEGRITY', reason: 'REMOTE_ROLLED_BACK' });
    expect(await snapshot(writer.dir)).toEqual({ 'a.md': 'a2\n' });
  });
});

describe('private state repair', () => {
  it('a deleted state.json is repaired without losing a byte the caller wrote', async () => {
    const { store, writer } = await published();
    const other = await participant(store);
    await other.service.pull({});
    await put(other.dir, 'a.md', 'remote edit\n');
    await other.service.commit({ message: 'remote' });
    await put(writer.dir, 'a.md', 'local edit\n');
    await put(writer.dir, 'new.md', 'new\n');
    await rm(await stateFile(writer.privateRoot));
    const err = await rejection(writer.service.commit({ message: 'after loss' }));
    expect(err).toMatchObject({
      code: 'CONTENT_CONFLICT',
      reason: 'MERGE_CONFLICT',
      files: [{ path: 'a.md', reason: 'TEXT_CONFLICT' }],
    });
    const files = await snapshot(writer.dir);
    expect(files['a.md']).toContain('local edit\n');
    expect(files['a.md']).toContain('remote edit\n');
    expect(files['new.md']).toBe('new\n');
    expect(files['b.md']).toBe('b\n');
  });

  it('a corrupt state.json is repaired by the next pull (merge against the empty tree)', async () => {
    const { writer } = await published();
    await put(writer.dir, 'new.md', 'new\n');
    await writeFile(await stateFile(writer.privateRoot), '{"version":1');
    const result = await writer.service.pull({});
    expect(result.code).toBe('OK');
    expect(await snapshot(writer.dir)).toEqual({ 'a.md': 'a\n', 'b.md': 'b\n', 'new.md': 'new\n' });
    const state = JSON.parse(await readFile(await stateFile(writer.privateRoot), 'utf8'));
    expect(state.recoveryRequired).toBe(false);
    const commit = await writer.service.commit({ message: 'new' });
    expect(commit.files).toEqual([{ path: 'new.md', insertions: 1, deletions: 0 }]);
  });
});

/** P's object database directory for the only notebook below `privateRoot`. */
async function gitdirOf(privateRoot: string): Promise<string> {
  return join(dirname(await stateFile(privateRoot)), 'git');
}

/** A new service on the same directories: what the next process after a kill sees. */
async function restarted(p: Participant, store: MemoryStore) {
  await p.service.close();
  return createNotebookService({
    store,
    privateRoot: p.privateRoot,
    workspaceRoot: p.workspaceRoot,
    notebookDir: p.dir,
    clock: INSTANT_CLOCK,
  });
}

describe('P after a kill at any instruction (contract §10)', () => {
  it('a head present in P without its tree (a process killed mid-write) is never an anchor', async () => {
    const { store, writer, reader } = await published();
    await reader.service.pull({});
    await put(writer.dir, 'c.md', 'c\n');
    await writer.service.commit({ message: 'c' });
    await put(writer.dir, 'd.md', 'd\n');
    await writer.service.commit({ message: 'd' });
    // What a kill between a head's commit object and the rest of its closure leaves in P:
    // the commit alone. Before the fix every later pull answered MISSING_OBJECT forever.
    const head = (await currentOf(store)).manifest.head;
    const writerDb = await openObjectDb({ gitdir: await gitdirOf(writer.privateRoot) });
    const readerDb = await openObjectDb({ gitdir: await gitdirOf(reader.privateRoot) });
    expect(await readerDb.writeCommit(await writerDb.readCommit(head))).toBe(head);
    expect(await readerDb.has(head)).toBe(true);
    const next = await restarted(reader, store);
    try {
      expect(await next.pull({})).toMatchObject({ code: 'OK', generation: 4 });
      expect(await snapshot(reader.dir)).toEqual({
        'a.md': 'a\n',
        'b.md': 'b\n',
        'c.md': 'c\n',
        'd.md': 'd\n',
        'mine.md': 'mine\n',
      });
      expect(await next.commit({ message: 'mine' })).toMatchObject({ code: 'OK', generation: 5 });
    } finally {
      await next.close();
    }
  });

  it("P's objects lost under a valid state.json come back from the store, no conflict", async () => {
    const { store, writer, reader } = await published();
    await reader.service.pull({});
    await put(writer.dir, 'a.md', 'a remote\n');
    await writer.service.commit({ message: 'remote' });
    await put(reader.dir, 'b.md', 'b local\n');
    await rm(join(await gitdirOf(reader.privateRoot), 'objects'), { recursive: true });
    const next = await restarted(reader, store);
    try {
      // A trustworthy baseline again (restored), so the local edit merges cleanly.
      expect(await next.pull({})).toMatchObject({ code: 'OK', generation: 3 });
      expect(await snapshot(reader.dir)).toEqual({
        'a.md': 'a remote\n',
        'b.md': 'b local\n',
        'mine.md': 'mine\n',
      });
      const committed = await next.commit({ message: 'local' });
      expect(committed.files).toEqual([
        { path: 'b.md', insertions: 1, deletions: 1 },
        { path: 'mine.md', insertions: 1, deletions: 0 },
      ]);
    } finally {
      await next.close();
    }
  });

  it("P's objects lost while a checkpoint has retired the baseline's chain come back from the retained chain, no conflict", async () => {
    // What a restarted hub that opens another object database sees: a directory
    // whose baseline predates the last checkpoint, so its head is only in `retained`.
    const store = memoryStore();
    const writer = await participant(store, { checkpointPacks: 2, retainedCheckpoints: 1 });
    const reader = await participant(store);
    await writer.service.pull({});
    await put(writer.dir, 'a.md', 'a\n');
    await writer.service.commit({ message: 'a' });
    await reader.service.pull({});
    const baselineHead = (await currentOf(store)).manifest.head;
    for (const n of [1, 2, 3]) {
      await put(writer.dir, 'a.md', `a${n}\n`);
      await writer.service.commit({ message: `a${n}` });
    }
    const { manifest } = await currentOf(store);
    expect(manifest.retained.length).toBeGreaterThan(0);
    expect([manifest.checkpoint, ...manifest.increments].map((e) => e.head)).not.toContain(
      baselineHead,
    );
    await put(reader.dir, 'b.md', 'b local\n');
    await rm(join(await gitdirOf(reader.privateRoot), 'objects'), { recursive: true });
    const next = await restarted(reader, store);
    try {
      expect(await next.pull({})).toMatchObject({ code: 'OK' });
      expect(await snapshot(reader.dir)).toEqual({ 'a.md': 'a3\n', 'b.md': 'b local\n' });
      const committed = await next.commit({ message: 'local' });
      expect(committed.files).toEqual([{ path: 'b.md', insertions: 1, deletions: 0 }]);
    } finally {
      await next.close();
    }
  });
});
