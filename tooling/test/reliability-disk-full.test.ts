import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNotebookService, type NotebookService } from '@slivingdoc/engine';
import { createEmbeddedStore, type ObjectStore, runProbe } from '@slivingdoc/store';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCli } from '../reliability/cli';
import { mountSmallDisk, type SmallDisk } from '../reliability/small-disk';

// Full disks on a real small tmpfs: the store directory, the notebook
// directory L or the private root P runs out of space mid-call. Each answer carries the
// catalogue's words with the fixed detail `disk full`, nothing is lost, no temp file stays
// in the store, and everything works again once space is freed.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function smallDisk(sizeKiB: number): Promise<SmallDisk> {
  const disk = await mountSmallDisk(sizeKiB);
  cleanups.push(() => disk.unmount());
  return disk;
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slivingdoc-disk-full-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** One participant: a notebook directory `<workspaceRoot>/nb` with its own private root. */
async function participant(
  store: ObjectStore,
  roots: { workspaceRoot: string; privateRoot: string },
): Promise<{ service: NotebookService; dir: string }> {
  const dir = join(roots.workspaceRoot, 'nb');
  await mkdir(roots.workspaceRoot, { recursive: true });
  const service = await createNotebookService({
    store,
    privateRoot: roots.privateRoot,
    workspaceRoot: roots.workspaceRoot,
    notebookDir: dir,
  });
  cleanups.push(() => service.close());
  return { service, dir };
}

async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

/** A file big enough not to fit into a filled disk (and not into 64 KiB of slack). */
const big = (tag: string) => `${`${tag} ${'y'.repeat(100)}\n`.repeat(4_000)}`;

describe('disk full, on a real tmpfs', () => {
  beforeAll(requireBuiltCli);

  it('the store directory: ENGINE_FAILED · STORE_WRITE_FAILED · disk full, no temp file left, fine once freed', async () => {
    const disk = await smallDisk(2_048);
    const store = await createEmbeddedStore({ dir: disk.path, prefix: 'nb' });
    const base = await tempDir();
    const alice = await participant(store, {
      workspaceRoot: join(base, 'ws'),
      privateRoot: join(base, 'priv'),
    });
    await alice.service.pull({});
    await writeFile(join(alice.dir, 'a.md'), 'a\n');
    await alice.service.commit({ message: 'a' });

    await disk.fill();
    await writeFile(join(alice.dir, 'b.md'), big('b'));
    const err = await rejection(alice.service.commit({ message: 'b' }));
    expect(err).toMatchObject({
      code: 'ENGINE_FAILED',
      reason: 'STORE_WRITE_FAILED',
      detail: 'disk full',
    });
    expect(await readdir(join(disk.path, 'nb', '.tmp'))).toEqual([]);
    expect(await readFile(join(alice.dir, 'b.md'), 'utf8')).toBe(big('b'));
    // A fresh start probes the full store: a startup refusal naming the disk, not
    // INCOMPATIBLE_STORE.
    const probe = await runProbe(store);
    expect(probe).toMatchObject({ ok: false, code: 'ENOSPC' });
    const cli = await runCli(['commit', alice.dir, '-m', 'b'], {
      HOME: join(base, 'home'),
      SLIVINGDOC_STORE_DIR: disk.path,
      SLIVINGDOC_PREFIX: 'nb',
      SLIVINGDOC_PRIVATE_ROOT: join(base, 'priv'),
      LOG_LEVEL: 'error',
    });
    expect(cli.stderr).toBe(
      'slivingdoc: startup — the store directory cannot be written: disk full\n',
    );
    expect(cli.code).toBe(2);
    expect(await readdir(join(disk.path, 'nb', '.tmp'))).toEqual([]);

    await disk.free();
    expect((await alice.service.commit({ message: 'b' })).generation).toBe(2);
    const bob = await participant(store, {
      workspaceRoot: join(base, 'ws-bob'),
      privateRoot: join(base, 'priv-bob'),
    });
    await bob.service.pull({});
    expect(await readFile(join(bob.dir, 'b.md'), 'utf8')).toBe(big('b'));
  }, 60_000);

  it('L during a pull: ENGINE_FAILED · LOCAL_WRITE_FAILED · disk full; the next pull after freeing repairs', async () => {
    const base = await tempDir();
    const store = await createEmbeddedStore({ dir: join(base, 'store'), prefix: 'nb' });
    const alice = await participant(store, {
      workspaceRoot: join(base, 'ws'),
      privateRoot: join(base, 'priv'),
    });
    const disk = await smallDisk(2_048);
    const bob = await participant(store, {
      workspaceRoot: join(disk.path, 'ws'),
      privateRoot: join(base, 'priv-bob'),
    });
    await alice.service.pull({});
    await writeFile(join(alice.dir, 'a.md'), 'a\n');
    await alice.service.commit({ message: 'a' });
    await bob.service.pull({});
    await writeFile(join(bob.dir, 'mine.md'), 'mine\n');

    await writeFile(join(alice.dir, 'big.md'), big('alice'));
    await alice.service.commit({ message: 'big' });
    await disk.fill();
    const err = await rejection(bob.service.pull({}));
    expect(err).toMatchObject({
      code: 'ENGINE_FAILED',
      reason: 'LOCAL_WRITE_FAILED',
      detail: 'disk full',
    });
    expect(String(err.message)).toMatch(/notebook directory could not be written/);
    expect(await readFile(join(bob.dir, 'mine.md'), 'utf8')).toBe('mine\n');
    // No temp file of the interrupted write stays in L.
    expect((await readdir(bob.dir)).sort()).toEqual(['a.md', 'mine.md']);

    await disk.free();
    await bob.service.pull({});
    expect(await readFile(join(bob.dir, 'big.md'), 'utf8')).toBe(big('alice'));
    expect(await readFile(join(bob.dir, 'mine.md'), 'utf8')).toBe('mine\n');
    expect((await bob.service.commit({ message: 'mine' })).generation).toBe(3);
  }, 60_000);

  it('L during a commit whose publication landed: LOCAL_WRITE_FAILED · disk full, the commit is kept', async () => {
    const base = await tempDir();
    const store = await createEmbeddedStore({ dir: join(base, 'store'), prefix: 'nb' });
    const alice = await participant(store, {
      workspaceRoot: join(base, 'ws'),
      privateRoot: join(base, 'priv'),
    });
    const disk = await smallDisk(2_048);
    const bob = await participant(store, {
      workspaceRoot: join(disk.path, 'ws'),
      privateRoot: join(base, 'priv-bob'),
    });
    await alice.service.pull({});
    await bob.service.pull({});
    await writeFile(join(alice.dir, 'big.md'), big('alice'));
    await alice.service.commit({ message: 'big' });
    await writeFile(join(bob.dir, 'mine.md'), 'mine\n');

    await disk.fill();
    // Bob's commit merges Alice's big file, publishes, then cannot write it into L.
    const err = await rejection(bob.service.commit({ message: 'mine' }));
    expect(err).toMatchObject({
      code: 'ENGINE_FAILED',
      reason: 'LOCAL_WRITE_FAILED',
      detail: 'disk full',
    });
    expect(String(err.message)).toMatch(/commit itself was published/);
    await alice.service.pull({});
    expect(await readFile(join(alice.dir, 'mine.md'), 'utf8')).toBe('mine\n');

    await disk.free();
    await bob.service.pull({});
    expect(await readFile(join(bob.dir, 'big.md'), 'utf8')).toBe(big('alice'));
    expect(await readFile(join(bob.dir, 'mine.md'), 'utf8')).toBe('mine\n');
  }, 60_000);

  it('P during a pull: ENGINE_FAILED · PRIVATE_STATE_UNAVAILABLE · disk full, fine once freed', async () => {
    const base = await tempDir();
    const store = await createEmbeddedStore({ dir: join(base, 'store'), prefix: 'nb' });
    const alice = await participant(store, {
      workspaceRoot: join(base, 'ws'),
      privateRoot: join(base, 'priv'),
    });
    const disk = await smallDisk(2_048);
    const bob = await participant(store, {
      workspaceRoot: join(base, 'ws-bob'),
      privateRoot: join(disk.path, 'priv'),
    });
    await alice.service.pull({});
    await bob.service.pull({});
    await writeFile(join(bob.dir, 'mine.md'), 'mine\n');
    // Random bytes do not compress: the pack and its objects cannot fit into the slack.
    const noise = Array.from({ length: 3_000 }, () => Math.random().toString(36)).join('\n');
    await writeFile(join(alice.dir, 'big.md'), `${noise}\n`);
    await alice.service.commit({ message: 'big' });

    await disk.fill();
    const err = await rejection(bob.service.pull({}));
    expect(err).toMatchObject({
      code: 'ENGINE_FAILED',
      reason: 'PRIVATE_STATE_UNAVAILABLE',
      detail: 'disk full',
    });
    expect(await readFile(join(bob.dir, 'mine.md'), 'utf8')).toBe('mine\n');

    await disk.free();
    await bob.service.pull({});
    expect(await readFile(join(bob.dir, 'big.md'), 'utf8')).toBe(`${noise}\n`);
    expect(await readFile(join(bob.dir, 'mine.md'), 'utf8')).toBe('mine\n');
  }, 60_000);
});
