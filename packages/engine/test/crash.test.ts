import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore, decodeManifest, type ObjectStore } from '@slivingdoc/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotebookService, FAILPOINT, type FailpointName } from '../src/index';
import { bundleFixture } from './fixtures/bundle';
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

async function headGeneration(store: ObjectStore): Promise<bigint> {
  const object = await store.get('current');
  return object === undefined ? 0n : decodeManifest(object.body).generation;
}

const COMMIT_WINDOWS: FailpointName[] = [
  FAILPOINT.afterScan,
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
      const roots = await crashRoots();
      const storeDir = join(roots.base, 'store');
      const dir = join(roots.workspaceRoot, 'notebook');
      const config = {
        privateRoot: roots.privateRoot,
        workspaceRoot: roots.workspaceRoot,
        notebookDir: dir,
      };
      const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
      const first = await createNotebookService({ ...config, store });
      await first.pull({});
      await put(dir, 'kept.md', 'acknowledged\n');
      await put(dir, 'other.md', 'x\n');
      await first.commit({ message: 'acknowledged' });
      await first.close();

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
