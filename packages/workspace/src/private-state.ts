import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileDurably } from './durable-write';
import { privateStateUsable, StateError } from './errors';
import { acquireLock, type LockOptions, type Release } from './lock';
import { loadStatCache, type StatCache } from './stat-cache';
import { decodeState, encodeState, type StateV1 } from './state-codec';
import { decodeTarget, encodeTarget, type RewriteTarget } from './target-codec';

/** Server-owned state for one notebook directory and one store (contract §1 "P"). */
export interface PrivateState {
  /** P's directory (a private path: never put it in a result or message). */
  readonly dir: string;
  /** The git directory the merge package keeps its object database in. */
  readonly gitdir: string;
  /** The state record; `undefined` when none was written yet. Throws {@link StateError}. */
  readState(): Promise<StateV1 | undefined>;
  /** Replaces the state record durably (temp file, fsync, rename, directory fsync). */
  writeState(state: StateV1): Promise<void>;
  /**
   * The record of what the last rewrite of L was writing; `undefined` when none was written.
   * Throws {@link StateError} when it is malformed.
   */
  readTarget(): Promise<RewriteTarget | undefined>;
  /**
   * Replaces the target record atomically (temp file, rename). Not fsynced: it must survive a
   * killed process (the page cache does), and after a power loss a missing record only makes
   * a repair treat every differing file as the caller's, which keeps the caller's bytes.
   */
  writeTarget(target: RewriteTarget): Promise<void>;
  /**
   * Takes this notebook directory's lock: FIFO in-process, exclusive across processes, freed
   * by the kernel when a holder dies. Throws `LockTimeoutError` (PATH_BUSY · LOCK_TIMEOUT).
   */
  lock(opts: LockOptions): Promise<Release>;
  /** The stat cache of this L, persisted in P. */
  readonly statCache: StatCache;
}

/**
 * P's key (contract §4/§7): SHA-256 over the length-prefixed canonical notebook directory and
 * storage identity (each as an 8-byte big-endian byte length, then its UTF-8 bytes), so no
 * two (path, identity) pairs share an encoding. Lowercase hex.
 */
export function privateStateKey(notebookDir: string, storageIdentity: string): string {
  const hash = createHash('sha256');
  for (const part of [notebookDir, storageIdentity]) {
    const bytes = Buffer.from(part, 'utf8');
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    hash.update(length).update(bytes);
  }
  return hash.digest('hex');
}

/** Which P: the canonical notebook directory, the store's identity, and the private root. */
export interface PrivateStateLocation {
  privateRoot: string;
  notebookDir: string;
  storageIdentity: string;
}

function privateStateDir(opts: PrivateStateLocation): string {
  return join(
    opts.privateRoot,
    'notebooks',
    privateStateKey(opts.notebookDir, opts.storageIdentity),
  );
}

/**
 * True when P for this directory holds a state record (valid or not), without creating
 * anything: the engine's commit of an unregistered directory repairs first when a record
 * exists (a first pull that failed mid-rewrite leaves its recovery flag there).
 */
export async function hasStateRecord(opts: PrivateStateLocation): Promise<boolean> {
  return lstat(join(privateStateDir(opts), 'state.json')).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return false;
      throw error;
    },
  );
}

/**
 * Opens (creating, 0700) P for the canonical notebook directory `notebookDir` (its realpath)
 * and the store's identity: `<privateRoot>/notebooks/<key>/` holding `state.json`,
 * `stat-cache.json`, `target.json` and `git/` (its lock lives in the per-user lock directory).
 * Throws `PrivateStateUnavailableError` when P cannot be created or opened.
 */
export async function openPrivateState(opts: PrivateStateLocation): Promise<PrivateState> {
  const dir = privateStateDir(opts);
  const gitdir = join(dir, 'git');
  const statCache = await privateStateUsable(async () => {
    await mkdir(gitdir, { recursive: true, mode: 0o700 });
    return loadStatCache(join(dir, 'stat-cache.json'));
  });
  const stateFile = join(dir, 'state.json');
  const targetFile = join(dir, 'target.json');
  return {
    dir,
    gitdir,
    statCache,
    readState: () => readStateFile(stateFile, opts.storageIdentity),
    async writeState(state) {
      await writeFileDurably(stateFile, encodeState(state), { sync: true });
    },
    readTarget: () => readTargetFile(targetFile),
    async writeTarget(target) {
      await writeFileDurably(targetFile, encodeTarget(target), { sync: false });
    },
    // Keyed by L, not P: two stores' P for one L still serialise on that L in-process.
    lock: (lockOpts) => acquireLock(opts.notebookDir, lockOpts),
  };
}

async function readIfPresent(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
}

async function readStateFile(file: string, identity: string): Promise<StateV1 | undefined> {
  const text = await readIfPresent(file);
  if (text === undefined) return undefined;
  const state = decodeState(text);
  if (state.identity !== identity) {
    throw new StateError('identity-mismatch', 'recorded for another store');
  }
  return state;
}

async function readTargetFile(file: string): Promise<RewriteTarget | undefined> {
  const text = await readIfPresent(file);
  return text === undefined ? undefined : decodeTarget(text);
}

/**
 * The state and target records of P, read without creating or locking anything (each
 * `undefined` when absent). Throws {@link StateError} when one is malformed. For a process
 * that keeps objects for directories it has not opened (a shared object database's roots).
 */
export async function readPrivateRecords(
  opts: PrivateStateLocation,
): Promise<{ state: StateV1 | undefined; target: RewriteTarget | undefined }> {
  const dir = privateStateDir(opts);
  return {
    state: await readStateFile(join(dir, 'state.json'), opts.storageIdentity),
    target: await readTargetFile(join(dir, 'target.json')),
  };
}
