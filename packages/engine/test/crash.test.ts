import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openObjectDb, verifyClosure } from '@slivingdoc/merge';
import {
  createEmbeddedStore,
  decodeManifest,
  type ObjectStore,
  parsePackKey,
} from '@slivingdoc/store';
import { bundleFixture } from '@slivingdoc/testkit/bundle-fixture';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotebookService, FAILPOINT, type FailpointName } from '../src/index';
import { put, snapshot } from './helpers';

let child: string;
const bases: string[] = [];
afterAll(async () => {
  await Promise.all(bases.map((base) => rm(base, { recursive: true, force: true })));
});
beforeAll(async () => {
  // One bundle per run; every child then starts with bare `node`.
  child = await bundleFixture(join(import.meta.dirname, 'fixtures', 'engine-child.ts'));
}, 120_000);

function runChild(
  args: object,
  failpoints: string,
): Promise<{ signal: string | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [child, JSON.stringify(args)],
      { env: { ...process.env, SLIVINGDOC_FAILPOINTS: failpoints }, cwd: import.meta.dirname },
      (error, stdout) => resolve({ signal: error?.signal ?? null, stdout }),
    );
  });
}

/**
 * Temporary roots of this file's own: the windows run concurrently, and the shared helpers
 * clean up after *each* test, which would pull directories from under a neighbour.
 */
async function crashRoots() {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'engine-crash-')));
  bases.push(base);
  const workspaceRoot = join(base, 'ws');
  await mkdir(workspaceRoot);
  return { base, workspaceRoot, privateRoot: join(base, 'priv') };
}

/** One notebook directory on its own embedded store, as a killed child and its successor see it. */
async function crashNotebook() {
  const roots = await crashRoots();
  const storeDir = join(roots.base, 'store');
  const dir = join(roots.workspaceRoot, 'notebook');
  const config = {
    privateRoot: roots.privateRoot,
    workspaceRoot: roots.workspaceRoot,
    notebookDir: dir,
  };
  const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
  return { storeDir, dir, config, store };
}

async function headGeneration(store: ObjectStore): Promise<bigint> {
  const object = await store.get('current');
  return object === undefined ? 0n : decodeManifest(object.body).generation;
}

const COMMIT_WINDOWS: FailpointName[] = [
  FAILPOINT.afterScan,
  FAILPOINT.afterReadCurrent,
  FAILPOINT.afterFetch,
  FAILPOINT.afterPackUpload,
  FAILPOINT.afterCasSent,
  FAILPOINT.afterCasAnswered,
  FAILPOINT.afterRecoveryFlag,
  FAILPOINT.midMaterialize,
  FAILPOINT.afterMaterialize,
  FAILPOINT.afterBaselineWrite,
];

// Concurrent: each window has its own store and roots, and most of the wall time is fsync.
describe.concurrent('kill -9 of a real process at each failpoint (embedded store)', () => {
  it.each(COMMIT_WINDOWS)(
    'killed at %s: the next call repairs, nothing acknowledged is lost',
    async (point) => {
      const { storeDir, dir, config, store } = await crashNotebook();
      const first = await createNotebookService({ ...config, store });
      await first.pull({});
      await put(dir, 'kept.md', 'acknowledged\n');
      await put(dir, 'other.md', 'x\n');
      await first.commit({ message: 'acknowledged' });
      await first.close();

      // Another writer publishes two files meanwhile, so the killed commit re-merges and its
      // rewrite of L has files to write (mid-materialize leaves L half-written).
      const rivalRoots = await crashRoots();
      const rival = await createNotebookService({
        store,
        privateRoot: rivalRoots.privateRoot,
        workspaceRoot: rivalRoots.workspaceRoot,
        notebookDir: join(rivalRoots.workspaceRoot, 'notebook'),
      });
      await rival.pull({});
      await put(rival.notebookDir, 'rival-1.md', 'r1\n');
      await put(rival.notebookDir, 'rival-2.md', 'r2\n');
      await rival.commit({ message: 'rival' });
      await rival.close();

      await put(dir, 'kept.md', 'acknowledged\nmore\n');
      await put(dir, 'new-1.md', 'one\n');
      await put(dir, 'new-2.md', 'two\n');
      const killed = await runChild(
        { ...config, storeDir, op: 'commit', message: 'killed' },
        `${point}=kill`,
      );
      expect(killed.signal).toBe('SIGKILL');

      const next = await createNotebookService({ ...config, store });
      const pulled = await next.pull({});
      expect(pulled.code).toBe('OK');
      const local = await snapshot(dir);
      // The caller's bytes survive whether or not the publication landed.
      expect(local).toEqual({
        'kept.md': 'acknowledged\nmore\n',
        'new-1.md': 'one\n',
        'new-2.md': 'two\n',
        'other.md': 'x\n',
        'rival-1.md': 'r1\n',
        'rival-2.md': 'r2\n',
      });
      // And the next commit publishes whatever did not land: L equals R afterwards.
      const committed = await next.commit({ message: 'after repair' });
      expect(committed.generation).toBe(Number(await headGeneration(store)));
      await next.close();
      const reader = await crashRoots();
      const readerDir = join(reader.workspaceRoot, 'notebook');
      const fresh = await createNotebookService({
        store,
        privateRoot: reader.privateRoot,
        workspaceRoot: reader.workspaceRoot,
        notebookDir: readerDir,
      });
      await fresh.pull({});
      expect(await snapshot(readerDir)).toEqual(local);
      await fresh.close();
    },
    60_000,
  );
});

const CONSOLIDATION_WINDOWS: FailpointName[] = [
  FAILPOINT.consolidationAfterPackWritten,
  FAILPOINT.consolidationAfterIndexesRemoved,
  FAILPOINT.consolidationAfterFilesRemoved,
];

describe.concurrent('kill -9 inside a consolidation of P (embedded store)', () => {
  it.each(CONSOLIDATION_WINDOWS)(
    'killed at %s after an acknowledged commit: the next process repairs P, nothing is lost',
    async (point) => {
      const { storeDir, dir, config, store } = await crashNotebook();
      const first = await createNotebookService({ ...config, store });
      await first.pull({});
      // Several commits leave loose objects, packs and objects no root reaches any more.
      for (let i = 0; i < 6; i += 1) {
        await put(dir, `f${i % 3}.md`, `v${i}\n`);
        await first.commit({ message: `c${i}` });
      }
      await first.close();
      await put(dir, 'acknowledged.md', 'acknowledged\n');
      // The commit answers OK, then the consolidation after it is killed.
      const killed = await runChild(
        { ...config, storeDir, op: 'commit', message: 'acknowledged', consolidateAlways: true },
        `${point}=kill`,
      );
      expect(killed.signal).toBe('SIGKILL');
      expect(JSON.parse(killed.stdout)).toMatchObject({ code: 'OK' });

      // P as the kill left it: the baseline is whole (nothing was removed before the new pack
      // was durable).
      const gitdir = join(dirname(await stateFileOf(config.privateRoot)), 'git');
      const state = JSON.parse(await readFile(await stateFileOf(config.privateRoot), 'utf8'));
      await verifyClosure(await openObjectDb({ gitdir }), state.baselineHead);

      const next = await createNotebookService({ ...config, store, consolidateAlways: true });
      expect((await next.pull({})).code).toBe('OK');
      await put(dir, 'after.md', 'after\n');
      expect((await next.commit({ message: 'after' })).code).toBe('OK');
      await next.close();
      // The next process removed the leftovers and consolidated P to one pack.
      const files = await readdir(join(gitdir, 'objects', 'pack'));
      expect(files.filter((name) => !/^pack-[0-9a-f]{40}\.(pack|idx)$/.test(name))).toEqual([]);
      expect(files.filter((name) => name.endsWith('.idx'))).toHaveLength(1);
      const after = JSON.parse(await readFile(await stateFileOf(config.privateRoot), 'utf8'));
      await verifyClosure(await openObjectDb({ gitdir }), after.baselineHead);
      expect(await snapshot(dir)).toEqual({
        'acknowledged.md': 'acknowledged\n',
        'after.md': 'after\n',
        'f0.md': 'v3\n',
        'f1.md': 'v4\n',
        'f2.md': 'v5\n',
      });
      // A fresh reader sees every acknowledged line.
      const reader = await crashRoots();
      const readerDir = join(reader.workspaceRoot, 'notebook');
      const fresh = await createNotebookService({
        store,
        privateRoot: reader.privateRoot,
        workspaceRoot: reader.workspaceRoot,
        notebookDir: readerDir,
      });
      await fresh.pull({});
      expect(await snapshot(readerDir)).toEqual(await snapshot(dir));
      await fresh.close();
    },
    60_000,
  );
});

/** The state.json of the only P below `privateRoot`. */
async function stateFileOf(privateRoot: string): Promise<string> {
  const [key] = await readdir(join(privateRoot, 'notebooks'));
  return join(privateRoot, 'notebooks', key as string, 'state.json');
}

describe('engine across real processes (embedded store)', () => {
  it.each([FAILPOINT.afterMerge, FAILPOINT.midMaterialize])(
    'a pull killed at %s is repaired by the next pull, keeping local edits',
    async (point) => {
      const roots = await crashRoots();
      const storeDir = join(roots.base, 'store');
      const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
      const writer = await createNotebookService({
        store,
        privateRoot: join(roots.base, 'writer-priv'),
        workspaceRoot: roots.workspaceRoot,
        notebookDir: join(roots.workspaceRoot, 'writer'),
      });
      const dir = join(roots.workspaceRoot, 'reader');
      const config = { privateRoot: roots.privateRoot, workspaceRoot: roots.workspaceRoot };
      const reader = await createNotebookService({ ...config, store, notebookDir: dir });
      await writer.pull({});
      await put(writer.notebookDir, 'a.md', 'a\n');
      await writer.commit({ message: 'a' });
      await reader.pull({});
      await reader.close();
      for (const name of ['b', 'c', 'd', 'e'])
        await put(writer.notebookDir, `${name}.md`, `${name}\n`);
      await writer.commit({ message: 'four more' });
      await writer.close();
      await put(dir, 'a.md', 'a edited locally\n');

      const killed = await runChild(
        { ...config, notebookDir: dir, storeDir, op: 'pull' },
        `${point}=kill`,
      );
      expect(killed.signal).toBe('SIGKILL');
      const written = Object.keys(await snapshot(dir)).length;
      if (point === FAILPOINT.midMaterialize) expect(written).toBeGreaterThan(1);
      else expect(written).toBe(1);
      expect(written).toBeLessThan(5);

      const next = await createNotebookService({ ...config, store, notebookDir: dir });
      expect(await next.pull({})).toMatchObject({ code: 'OK', generation: 2 });
      expect(await snapshot(dir)).toEqual({
        'a.md': 'a edited locally\n',
        'b.md': 'b\n',
        'c.md': 'c\n',
        'd.md': 'd\n',
        'e.md': 'e\n',
      });
      await next.close();
    },
  );

  it.each([
    ['pull', 'P kept'],
    ['commit', 'P kept'],
    ['pull', 'P lost its objects'],
    ['commit', 'P lost its objects'],
  ] as const)(
    'a %s killed mid-rewrite (%s): the files it wrote are not taken for local edits (its target is recorded)',
    async (op, objects) => {
      const lost = objects === 'P lost its objects';
      const roots = await crashRoots();
      const storeDir = join(roots.base, 'store');
      const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
      const writer = await createNotebookService({
        store,
        privateRoot: join(roots.base, 'writer-priv'),
        workspaceRoot: roots.workspaceRoot,
        notebookDir: join(roots.workspaceRoot, 'writer'),
        // With P's objects lost, a checkpoint after the third commit leaves the tree the killed
        // call was writing in a retained chain only: no import of the active chain brings it.
        ...(lost ? { checkpointPacks: 2, retainedCheckpoints: 1 } : {}),
      });
      const dir = join(roots.workspaceRoot, 'reader');
      const config = { privateRoot: roots.privateRoot, workspaceRoot: roots.workspaceRoot };
      await writer.pull({});
      await put(writer.notebookDir, 'a.md', 'x\n');
      await put(writer.notebookDir, 'b.md', 'y\n');
      await writer.commit({ message: 'first' });
      const reader = await createNotebookService({ ...config, store, notebookDir: dir });
      await reader.pull({});
      await reader.close();
      await put(writer.notebookDir, 'a.md', 'x1\n');
      await put(writer.notebookDir, 'b.md', 'y1\n');
      await writer.commit({ message: 'second' });
      await put(dir, 'mine.md', 'mine\n');

      // The rewrite writes a.md (the first half of its two changes) and dies.
      const killed = await runChild(
        { ...config, notebookDir: dir, storeDir, op, message: 'mine' },
        `${FAILPOINT.midMaterialize}=kill`,
      );
      expect(killed.signal).toBe('SIGKILL');
      expect(await snapshot(dir)).toEqual({ 'a.md': 'x1\n', 'b.md': 'y\n', 'mine.md': 'mine\n' });
      // The same lines change again remotely: measured from the old baseline, the a.md the
      // killed call wrote would be a local edit of the same line, a spurious conflict.
      await put(writer.notebookDir, 'a.md', 'x2\n');
      await put(writer.notebookDir, 'b.md', 'y2\n');
      await writer.commit({ message: 'third' });
      await writer.close();
      // What the next process sees when it opens another database (a hub restarted beside its
      // exiting predecessor): the rewrite's target tree comes back from the store too.
      const current = decodeManifest((await store.get('current'))!.body);
      if (lost) {
        expect(current.retained).toHaveLength(1);
        await rm(join(dirname(await stateFileOf(config.privateRoot)), 'git', 'objects'), {
          recursive: true,
        });
      }

      const next = await createNotebookService({ ...config, store, notebookDir: dir });
      const generation = Number(current.generation);
      expect(generation).toBe((op === 'commit' ? 4 : 3) + (lost ? 1 : 0));
      expect(await next.pull({})).toMatchObject({ code: 'OK', generation });
      expect(await snapshot(dir)).toEqual({ 'a.md': 'x2\n', 'b.md': 'y2\n', 'mine.md': 'mine\n' });
      // A killed pull leaves its local edit to publish; a killed commit had published it.
      const committed = await next.commit({ message: 'after repair' });
      expect(committed.files).toEqual(
        op === 'pull' ? [{ path: 'mine.md', insertions: 1, deletions: 0 }] : [],
      );
      await next.close();
    },
  );

  it.each(['pull', 'commit'] as const)(
    'a commit killed after its swap landed: the next %s does not publish its lines twice',
    async (op) => {
      const roots = await crashRoots();
      const storeDir = join(roots.base, 'store');
      const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
      const writer = await createNotebookService({
        store,
        privateRoot: join(roots.base, 'writer-priv'),
        workspaceRoot: roots.workspaceRoot,
        notebookDir: join(roots.workspaceRoot, 'writer'),
      });
      const dir = join(roots.workspaceRoot, 'reader');
      const config = { privateRoot: roots.privateRoot, workspaceRoot: roots.workspaceRoot };
      await writer.pull({});
      await put(writer.notebookDir, 's.md', 'a\nb\n');
      await writer.commit({ message: 'first' });
      const reader = await createNotebookService({ ...config, store, notebookDir: dir });
      await reader.pull({});
      await reader.close();
      await put(dir, 's.md', 'mine\na\nb\n');
      const killed = await runChild(
        { ...config, notebookDir: dir, storeDir, op: 'commit', message: 'mine' },
        `${FAILPOINT.afterCasAnswered}=kill`,
      );
      expect(killed.signal).toBe('SIGKILL');
      expect(await headGeneration(store)).toBe(2n);
      // Another line lands just above: measured from the old baseline, "mine" would be a local
      // insertion beside the remote's and come back twice.
      await writer.pull({});
      await put(writer.notebookDir, 's.md', 'other\nmine\na\nb\n');
      await writer.commit({ message: 'other' });
      await writer.close();
      const next = await createNotebookService({ ...config, store, notebookDir: dir });
      const result = op === 'pull' ? await next.pull({}) : await next.commit({ message: 'again' });
      expect(result).toMatchObject({ code: 'OK', generation: 3 });
      expect(await snapshot(dir)).toEqual({ 's.md': 'other\nmine\na\nb\n' });
      expect(await headGeneration(store)).toBe(3n);
      await next.close();
    },
  );

  it('a repair killed in turn: files either killed rewrite wrote are not taken for local edits', async () => {
    const roots = await crashRoots();
    const storeDir = join(roots.base, 'store');
    const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
    const writer = await createNotebookService({
      store,
      privateRoot: join(roots.base, 'writer-priv'),
      workspaceRoot: roots.workspaceRoot,
      notebookDir: join(roots.workspaceRoot, 'writer'),
    });
    const dir = join(roots.workspaceRoot, 'reader');
    const config = { privateRoot: roots.privateRoot, workspaceRoot: roots.workspaceRoot };
    const publish = async (a: string, b: string) => {
      await put(writer.notebookDir, 'a.md', a);
      await put(writer.notebookDir, 'b.md', b);
      await writer.commit({ message: a });
    };
    await writer.pull({});
    await publish('x\n', 'y\n');
    const reader = await createNotebookService({ ...config, store, notebookDir: dir });
    await reader.pull({});
    await reader.close();
    await publish('x1\n', 'y1\n');
    // The first pull writes a.md and dies; so does its repair, right after raising the flag.
    const first = await runChild(
      { ...config, notebookDir: dir, storeDir, op: 'pull' },
      `${FAILPOINT.midMaterialize}=kill`,
    );
    expect(first.signal).toBe('SIGKILL');
    await publish('x2\n', 'y2\n');
    const second = await runChild(
      { ...config, notebookDir: dir, storeDir, op: 'pull' },
      `${FAILPOINT.afterRecoveryFlag}=kill`,
    );
    expect(second.signal).toBe('SIGKILL');
    expect(await snapshot(dir)).toEqual({ 'a.md': 'x1\n', 'b.md': 'y\n' });
    await publish('x3\n', 'y3\n');
    await writer.close();
    const next = await createNotebookService({ ...config, store, notebookDir: dir });
    expect(await next.pull({})).toMatchObject({ code: 'OK', generation: 4 });
    expect(await snapshot(dir)).toEqual({ 'a.md': 'x3\n', 'b.md': 'y3\n' });
    await next.close();
  });

  it('four processes commit at once: every call OK, one generation each, nothing lost', async () => {
    const roots = await crashRoots();
    const storeDir = join(roots.base, 'store');
    const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
    const writers = ['w0', 'w1', 'w2', 'w3'].map((name) => ({
      privateRoot: join(roots.base, `${name}-priv`),
      workspaceRoot: roots.workspaceRoot,
      notebookDir: join(roots.workspaceRoot, name),
      name,
    }));
    for (const w of writers) {
      const service = await createNotebookService({ ...w, store });
      await service.pull({});
      await service.close();
      await put(w.notebookDir, `${w.name}.md`, `${w.name}\n`);
    }
    const outcomes = await Promise.all(
      writers.map((w) => runChild({ ...w, storeDir, op: 'commit', message: w.name }, '')),
    );
    const results = outcomes.map(
      (o) => JSON.parse(o.stdout) as { code: string; generation: number },
    );
    expect(results.map((r) => r.code)).toEqual(['OK', 'OK', 'OK', 'OK']);
    expect(results.map((r) => r.generation).sort()).toEqual([1, 2, 3, 4]);
    expect(await headGeneration(store)).toBe(4n);
    const reader = await crashRoots();
    const readerDir = join(reader.workspaceRoot, 'notebook');
    const fresh = await createNotebookService({
      store,
      privateRoot: reader.privateRoot,
      workspaceRoot: reader.workspaceRoot,
      notebookDir: readerDir,
    });
    await fresh.pull({});
    expect(await snapshot(readerDir)).toEqual({
      'w0.md': 'w0\n',
      'w1.md': 'w1\n',
      'w2.md': 'w2\n',
      'w3.md': 'w3\n',
    });
    await fresh.close();
  });
});

const CHECKPOINT_WINDOWS: FailpointName[] = [
  FAILPOINT.afterCheckpointPackUpload,
  FAILPOINT.afterCheckpointCas,
  FAILPOINT.beforeCleanupDelete,
];

describe.concurrent('kill -9 inside a background checkpoint (embedded store)', () => {
  it.each(CHECKPOINT_WINDOWS)(
    'killed at %s: the acknowledged commit stands and a later checkpoint completes',
    async (point) => {
      const { storeDir, dir, config, store } = await crashNotebook();
      const first = await createNotebookService({ ...config, store });
      await first.pull({});
      for (let i = 0; i < 3; i += 1) {
        await put(dir, `f${i}.md`, `${i}\n`);
        await first.commit({ message: `c${i}` });
      }
      await first.close();
      // An unreferenced proposal at an old position gives cleanup something to delete.
      const orphan = 'packs/increments/2-0190a0b0-0000-7000-8000-000000000000.pack';
      await store.putImmutable(orphan, new Uint8Array([1]), {});
      // The child's commit makes three increments and schedules a checkpoint, killed at `point`
      // (possibly before the child reported: the checkpoint runs beside the rewrite of L).
      await put(dir, 'f3.md', '3\n');
      const killed = await runChild(
        { ...config, storeDir, op: 'commit', message: 'c3', checkpointPacks: 3 },
        `${point}=kill`,
      );
      expect(killed.signal).toBe('SIGKILL');
      const current = await store.get('current');
      const manifest = decodeManifest(current?.body as Uint8Array);
      // Before the checkpoint CAS nothing changed; after it the checkpoint stands.
      expect(manifest.generation).toBe(point === FAILPOINT.afterCheckpointPackUpload ? 4n : 5n);

      const next = await createNotebookService({ ...config, store, checkpointPacks: 3 });
      for (let i = 4; i < 7; i += 1) {
        await put(dir, `f${i}.md`, `${i}\n`);
        await next.commit({ message: `c${i}` });
      }
      await next.close();
      const after = decodeManifest((await store.get('current'))?.body as Uint8Array);
      expect(after.increments.length).toBeLessThan(3);
      expect(after.retained).toHaveLength(1);
      // Every pack at or before the cutoff that nothing references is gone (the orphan and any
      // checkpoint pack the killed run uploaded); nothing referenced was deleted.
      const referenced = new Set(
        [after, ...after.retained].flatMap((chain) => [
          chain.checkpoint.key,
          ...chain.increments.map((i) => i.key),
        ]),
      );
      const listed = (await store.list('packs/')).map((o) => o.key);
      for (const key of referenced) expect(listed).toContain(key);
      const garbage = listed.filter(
        (key) =>
          !referenced.has(key) &&
          (parsePackKey(key)?.number ?? 0n) <= after.checkpoint.throughGeneration,
      );
      expect(garbage).toEqual([]);
      const reader = await crashRoots();
      const readerDir = join(reader.workspaceRoot, 'notebook');
      const fresh = await createNotebookService({
        store,
        privateRoot: reader.privateRoot,
        workspaceRoot: reader.workspaceRoot,
        notebookDir: readerDir,
      });
      await fresh.pull({});
      expect(Object.keys(await snapshot(readerDir))).toHaveLength(7);
      expect(await snapshot(readerDir)).toEqual(await snapshot(dir));
      await fresh.close();
    },
    60_000,
  );
});
