import { createHash, randomUUID } from 'node:crypto';
import { constants, readdirSync, readFileSync } from 'node:fs';
import { link, mkdir, open, readdir, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { StoreError } from '../errors';
import {
  assertKey,
  assertListNamespace,
  assertPrefix,
  isConditionalKey,
  isDeletableKey,
  isPackKey,
  keyKind,
  PROPOSALS_NAMESPACE,
} from '../keys';
import type { ListedObject, ObjectStore } from '../object-store';

// On-disk design (see the package README):
//   <dir>/<prefix>/current/<20-digit seq>          version files of a conditional key
//   <dir>/<prefix>/probe/<uuid>/<20-digit seq>
//   <dir>/<prefix>/packs/{checkpoints,increments}/<name>.pack   immutable packs
//   <dir>/<prefix>/.tmp/<uuid>.tmp                 fully written, fsynced temp files
// A version is published by link(2)-ing a temp file to the next sequence number: link fails
// with EEXIST when another writer took it, which is the compare-and-swap. No lock exists, so
// none can be left behind; a crash leaves only a temp file, removed lazily.

const VERSION_NAME = /^[0-9]{20}$/;
const STALE_TEMP_MS = 10 * 60 * 1000;
const READ_RETRIES = 64;

const versionName = (seq: bigint): string => seq.toString().padStart(20, '0');
const contentToken = (body: Uint8Array): string =>
  createHash('sha256').update(body).digest('hex').slice(0, 32);
const etagOf = (seq: bigint, body: Uint8Array): string => `${seq}-${contentToken(body)}`;

function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : undefined;
}

/** Maps a local I/O failure onto a StoreError (no path in the message). */
function ioError(op: string, err: unknown): StoreError {
  const code = errnoOf(err);
  const kind = code === 'EACCES' || code === 'EPERM' ? 'access-denied' : 'other';
  return new StoreError(kind, `${op} failed (${code ?? 'I/O error'})`, { code, cause: err });
}

function preconditionFailed(op: string): StoreError {
  return new StoreError('precondition-failed', `${op} precondition failed`, { code: 'EEXIST' });
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** `mkdir -p` that fsyncs every directory it created and the parent of the first one. */
async function ensureDir(path: string): Promise<void> {
  const first = await mkdir(path, { recursive: true });
  if (first === undefined) return;
  let current = path;
  const created: string[] = [];
  while (current.length >= first.length) {
    created.push(current);
    current = dirname(current);
  }
  for (const dir of [...created, dirname(first)]) await fsyncPath(dir);
}

/**
 * Sequence numbers present in a version directory, ascending; empty when it does not exist.
 * Reads here are synchronous: listing a small directory or reading a small file from the page
 * cache takes microseconds, while each asynchronous call (a read is four: open, stat, read,
 * close) waits for a slot in Node's 4-thread pool behind concurrent fsyncs. Every contending
 * writer reads `current` several times per attempt.
 */
async function versionsIn(dir: string): Promise<bigint[]> {
  try {
    const names = readdirSync(dir);
    return names
      .filter((n) => VERSION_NAME.test(n))
      .map((n) => BigInt(n))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return [];
    throw err;
  }
}

/**
 * The embedded store (contract §7): the object layout in a local directory, with create-if-absent
 * and compare-and-swap that are atomic and exclusive across processes through link(2), crash
 * safe (every file and directory fsynced before a call returns), and lock-free.
 */
export async function createEmbeddedStore(opts: {
  dir: string;
  prefix: string;
}): Promise<ObjectStore> {
  assertPrefix(opts.prefix);
  const base = resolve(opts.dir);
  const root = opts.prefix === '' ? base : join(base, ...opts.prefix.split('/'));
  const tmpDir = join(root, '.tmp');
  await ensureDir(tmpDir).catch((err) => {
    throw ioError('open store', err);
  });
  await removeStaleTemps(tmpDir);

  const pathOf = (key: string): string => join(root, ...key.split('/'));

  /**
   * Writes `body` to a new temp file, fsynced, and returns its path. A failed write (a full
   * disk) removes its temp file. A missing `.tmp/` means the store directory was deleted under
   * us: it is recreated, since an absent `current` is an empty store (contract §7).
   */
  async function writeTemp(body: Uint8Array): Promise<string> {
    const path = join(tmpDir, `${randomUUID()}.tmp`);
    const handle = await open(path, 'wx', 0o644).catch(async (err: unknown) => {
      if (errnoOf(err) !== 'ENOENT') throw err;
      await ensureDir(tmpDir);
      return open(path, 'wx', 0o644);
    });
    try {
      try {
        await handle.writeFile(body);
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (err) {
      await unlink(path).catch(() => undefined);
      throw err;
    }
    return path;
  }

  /** The latest version of a conditional key, or undefined; retries when pruning races a read. */
  async function readLatest(key: string): Promise<{ seq: bigint; body: Uint8Array } | undefined> {
    const dir = pathOf(key);
    for (let attempt = 0; attempt < READ_RETRIES; attempt++) {
      const seq = (await versionsIn(dir)).at(-1);
      if (seq === undefined) return undefined;
      try {
        return { seq, body: readFileSync(join(dir, versionName(seq))) };
      } catch (err) {
        if (errnoOf(err) !== 'ENOENT') throw err;
      }
    }
    throw new StoreError('other', 'get kept racing with pruning', { code: 'ERACE' });
  }

  /**
   * Publishes `body` as version `seq` of `key` with link(2). EEXIST, or a later version that
   * already exists (our number was pruned and is stale), means another writer won.
   */
  async function publishVersion(op: string, key: string, seq: bigint, body: Uint8Array) {
    const dir = pathOf(key);
    await ensureDir(dir);
    const temp = await writeTemp(body);
    const target = join(dir, versionName(seq));
    try {
      await link(temp, target);
    } catch (err) {
      if (errnoOf(err) === 'EEXIST') throw preconditionFailed(op);
      throw err;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    // Past the link a failure is ambiguous: the version is visible but not proven durable. Up
    // to the link every failure (a full disk included) means nothing was written.
    let versions: bigint[];
    try {
      versions = await versionsIn(dir);
      if (versions.some((v) => v > seq)) {
        // Invisible to every reader (they take the highest number), so withdrawing it is safe.
        await unlink(target).catch(() => undefined);
        throw preconditionFailed(op);
      }
      await fsyncPath(dir);
    } catch (err) {
      if (err instanceof StoreError) throw err;
      const code = errnoOf(err);
      throw new StoreError(
        'ambiguous',
        `${op}: written, not proven durable (${code ?? 'I/O error'})`,
        {
          code,
          cause: err,
        },
      );
    }
    // Lazy pruning: keep the new version and its predecessor for readers in flight.
    for (const old of versions) {
      if (old < seq - 1n) await unlink(join(dir, versionName(old))).catch(() => undefined);
    }
    return { etag: etagOf(seq, body) };
  }

  async function guard<T>(op: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof StoreError) throw err;
      throw ioError(op, err);
    }
  }

  async function openPack(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    try {
      const handle = await open(pathOf(key), constants.O_RDONLY);
      return handle.createReadStream();
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  async function deleteConditional(key: string): Promise<void> {
    const dir = pathOf(key);
    for (let attempt = 0; attempt < READ_RETRIES; attempt++) {
      for (const seq of await versionsIn(dir)) {
        await unlink(join(dir, versionName(seq))).catch(() => undefined);
      }
      try {
        await rmdir(dir);
        await fsyncPath(dirname(dir));
        return;
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT') return;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      }
    }
    throw new StoreError('other', 'deleteMany kept racing with writers', { code: 'ERACE' });
  }

  /** Each proposal is a conditional key: a directory of versions; its size is the latest's. */
  async function listProposals(): Promise<ListedObject[]> {
    let names: string[];
    try {
      names = await readdir(join(root, 'proposals'));
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return [];
      throw err;
    }
    const listed: ListedObject[] = [];
    for (const name of names.sort()) {
      const key = `${PROPOSALS_NAMESPACE}${name}`;
      if (keyKind(key) !== 'proposal') continue;
      const latest = await readLatest(key);
      if (latest) listed.push({ key, size: latest.body.byteLength });
    }
    return listed;
  }

  return {
    identity: `embedded ${base} ${opts.prefix}`,
    get(key) {
      assertKey(key, (k) => isConditionalKey(k) || isPackKey(k), 'get');
      return guard('get', async () => {
        if (isPackKey(key)) {
          try {
            // Synchronous like versionsIn: a pack read whole is a small one (large ones stream).
            const body = readFileSync(pathOf(key));
            return { body, etag: etagOf(0n, body) };
          } catch (err) {
            if (errnoOf(err) === 'ENOENT') return undefined;
            throw err;
          }
        }
        const latest = await readLatest(key);
        return latest && { body: latest.body, etag: etagOf(latest.seq, latest.body) };
      });
    },
    createIfAbsent(key, body) {
      assertKey(key, isConditionalKey, 'createIfAbsent');
      return guard('createIfAbsent', async () => {
        if ((await versionsIn(pathOf(key))).length > 0) throw preconditionFailed('createIfAbsent');
        return publishVersion('createIfAbsent', key, 1n, body);
      });
    },
    replaceIfMatch(key, body, etag) {
      assertKey(key, isConditionalKey, 'replaceIfMatch');
      return guard('replaceIfMatch', async () => {
        const latest = await readLatest(key);
        if (!latest || etagOf(latest.seq, latest.body) !== etag) {
          throw preconditionFailed('replaceIfMatch');
        }
        return publishVersion('replaceIfMatch', key, latest.seq + 1n, body);
      });
    },
    putImmutable(key, body) {
      assertKey(key, isPackKey, 'putImmutable');
      // Metadata is not kept on disk: nothing reads it back, and the manifest's descriptor
      // already records the pack's size and SHA-256. Local writes are never ambiguous.
      return guard('putImmutable', async () => {
        const target = pathOf(key);
        await ensureDir(dirname(target));
        const temp = await writeTemp(body);
        await rename(temp, target).catch(async (err: unknown) => {
          await unlink(temp).catch(() => undefined);
          throw err;
        });
        await fsyncPath(dirname(target));
      });
    },
    getStream(key) {
      assertKey(key, isPackKey, 'getStream');
      return guard('getStream', () => openPack(key));
    },
    list(namespace) {
      assertListNamespace(namespace);
      if (namespace === PROPOSALS_NAMESPACE) return guard('list', listProposals);
      return guard('list', async () => {
        const listed: ListedObject[] = [];
        for (const kind of ['checkpoints', 'increments']) {
          let names: string[];
          try {
            names = await readdir(join(root, 'packs', kind));
          } catch (err) {
            if (errnoOf(err) === 'ENOENT') continue;
            throw err;
          }
          for (const name of names.sort()) {
            const key = `packs/${kind}/${name}`;
            if (!isPackKey(key)) continue;
            const info = await stat(pathOf(key)).catch(() => undefined);
            if (info) listed.push({ key, size: info.size });
          }
        }
        return listed;
      });
    },
    deleteMany(keys) {
      for (const key of keys) assertKey(key, isDeletableKey, 'deleteMany');
      return guard('deleteMany', async () => {
        const touched = new Set<string>();
        for (const key of keys) {
          if (keyKind(key) === 'probe' || keyKind(key) === 'proposal') {
            await deleteConditional(key);
            continue;
          }
          await unlink(pathOf(key)).catch((err) => {
            if (errnoOf(err) !== 'ENOENT') throw err;
          });
          touched.add(dirname(pathOf(key)));
        }
        for (const dir of touched) await fsyncPath(dir).catch(() => undefined);
      });
    },
  };
}

/** Removes temp files a crashed writer left behind (old enough that no live writer owns them). */
async function removeStaleTemps(tmpDir: string): Promise<void> {
  const names = await readdir(tmpDir).catch(() => [] as string[]);
  const cutoff = Date.now() - STALE_TEMP_MS;
  for (const name of names) {
    const path = join(tmpDir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < cutoff) await unlink(path).catch(() => undefined);
  }
}
