/**
 * The notebook half of the engine's state: one object database with what is known about it
 * (verified and pinned heads, the pack cache, upkeep, imports and downloads in flight). A
 * service opened with `sharedObjects` claims one per store for every directory it serves
 * (`<privateRoot>/stores/<sha256(storeIdentity)>/`); otherwise, or when another process holds
 * that claim, each directory has its own, inside its P (docs/engine.md, "One object database
 * per store").
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type ObjectDb, openObjectDb } from '@slivingdoc/merge';
import { acquireLock, type Release } from '@slivingdoc/workspace';
import { AccessGate } from './access';

/** Upkeep of one object database in this process (docs/engine.md "Bounded private state"). */
export interface ObjectsUpkeep {
  leftoversRemoved: boolean;
  /** A consolidation is pending (at most one per database). */
  scheduled: boolean;
  /**
   * The head the next checkpoint of the active chain last seen will build on (the increment
   * at position `checkpointPacks`), kept so the checkpoint can read its closure.
   */
  prefixHead: string | undefined;
}

/** One object database and what this process knows about it. */
export interface NotebookObjects {
  readonly db: ObjectDb;
  /** True for the store-level database every directory of the service uses. */
  readonly shared: boolean;
  /** Verified packs larger than a small increment, by SHA-256. */
  readonly packCacheDir: string;
  /**
   * Recent heads whose closure this process verified in `db` (oldest first, at most
   * `verifiedKept`): the only anchors an import builds on. Presence in the database proves
   * nothing (a killed process can leave a head without its closure); a recorded baseline joins
   * once its closure was checked in this process. Facts about the database, so shared by every
   * directory using it.
   */
  readonly verifiedHeads: Set<string>;
  readonly verifiedKept: number;
  /** Heads background work (a checkpoint) still reads: kept when the database is consolidated. */
  readonly pinnedHeads: Set<string>;
  readonly upkeep: ObjectsUpkeep;
  /** Calls hold it shared for their duration; a consolidation holds it exclusively. */
  readonly access: AccessGate;
  /** Imports in flight by the head they bring in: a call needing the same head waits for it. */
  readonly imports: Map<string, Promise<void>>;
  /** Pack downloads in flight by SHA-256: concurrent calls needing one pack fetch it once. */
  readonly downloads: Map<string, Promise<Uint8Array>>;
}

/** Verified heads kept for a directory's own database. */
export const VERIFIED_HEADS_KEPT = 64;
/**
 * Verified heads kept for a shared database: every directory's recorded baseline is one of
 * them while it stays verified, so 64 would make a directory idle through 64 publications of
 * others verify its baseline's whole closure again on its next call.
 */
export const SHARED_VERIFIED_HEADS_KEPT = 256;

function notebookObjects(db: ObjectDb, dir: string, shared: boolean): NotebookObjects {
  return {
    db,
    shared,
    packCacheDir: join(dir, 'pack-cache'),
    verifiedHeads: new Set(),
    verifiedKept: shared ? SHARED_VERIFIED_HEADS_KEPT : VERIFIED_HEADS_KEPT,
    pinnedHeads: new Set(),
    upkeep: { leftoversRemoved: false, scheduled: false, prefixHead: undefined },
    access: new AccessGate(),
    imports: new Map(),
    downloads: new Map(),
  };
}

/** A directory's own database, at `gitdir` inside its private state `privateDir`. */
export async function directoryObjects(
  privateDir: string,
  gitdir: string,
): Promise<NotebookObjects> {
  return notebookObjects(await openObjectDb({ gitdir }), privateDir, false);
}

/** Where the store-level database of `storeIdentity` lives under the private root. */
export function sharedObjectsDir(privateRoot: string, storeIdentity: string): string {
  const key = createHash('sha256').update(storeIdentity, 'utf8').digest('hex');
  return join(privateRoot, 'stores', key);
}

/** A claimed shared database and the release of its claim. */
export interface SharedObjectsClaim {
  objects: NotebookObjects;
  release: Release;
}

/**
 * Claims the store-level database for this process (a machine-wide lock held until
 * `release`, so only one process ever writes or prunes it) and opens it, removing what a
 * killed holder left half-written before any call uses it. Waits up to `wait.timeoutMs` for
 * another holder: a hub restarted after a SIGKILL starts while its predecessor may still be
 * exiting (an fsync in flight delays that on a busy disk), and giving up at once left it on
 * per-directory databases for its whole life. Undefined when the claim stays held that long,
 * the wait is aborted, or the lock cannot be taken: the caller keeps per-directory databases.
 */
export async function claimSharedObjects(
  privateRoot: string,
  storeIdentity: string,
  wait: { timeoutMs: number; signal?: AbortSignal },
): Promise<SharedObjectsClaim | undefined> {
  const dir = sharedObjectsDir(privateRoot, storeIdentity);
  const release = await acquireLock(`shared-objects:${dir}`, wait).catch(() => undefined);
  if (release === undefined) return undefined;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const objects = notebookObjects(await openObjectDb({ gitdir: join(dir, 'git') }), dir, true);
    await objects.db.removeLeftovers();
    objects.upkeep.leftoversRemoved = true;
    return { objects, release };
  } catch (err) {
    await release();
    throw err;
  }
}
