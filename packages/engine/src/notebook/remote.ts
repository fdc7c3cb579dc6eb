/**
 * Reading R: `current` (validated), the packs it references (downloaded concurrently, size and
 * SHA-256 verified, cached in P by SHA-256, imported in manifest order, only those whose head
 * is not already present), and the accepted tree with its paths checked against contract §4.
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDomainError } from '@slivingdoc/envelope';
import {
  CommitFormatError,
  importPack,
  ObjectMissingError,
  type TreeEntries,
  TreeError,
  verifyClosure,
} from '@slivingdoc/merge';
import { checkNotebookPath, foldKey } from '@slivingdoc/policy';
import {
  type CheckpointDescriptor,
  CURRENT_KEY,
  decodeManifest,
  type IncrementDescriptor,
  type Manifest,
  type ObjectStore,
} from '@slivingdoc/store';
import pLimit from 'p-limit';
import { type CallState, type DirContext, EMPTY_TREE, NO_FILES } from '../context';
import { integrityFailure } from '../errors';
import { FAILPOINT, failpoint } from '../failpoints';
import { assertNotRolledBack, type Baseline, EMPTY_BASELINE } from './baseline';
import { sha256Hex } from './sha256';

/** `current` as read: the decoded manifest and the ETag a replacement must be conditioned on. */
export interface Current {
  manifest: Manifest;
  etag: string;
}

/** R materialised in P: its manifest (absent = no remote state yet) and flattened tree. */
export interface RemoteView {
  current: Current | undefined;
  baseline: Baseline;
  entries: TreeEntries;
}

/** The last `current` each store returned, with its strict decoding. */
const lastDecoded = new WeakMap<ObjectStore, { body: Uint8Array; manifest: Manifest }>();

/**
 * Reads and strictly decodes `current`; `undefined` when absent. Bytes equal to the previous
 * read's reuse its decoding: the manifest grows with every increment until a checkpoint, and a
 * contended commit reads the same `current` several times (attempt, pre-upload check,
 * resolution, prefetch).
 */
export async function readCurrent(store: ObjectStore): Promise<Current | undefined> {
  const object = await store.get(CURRENT_KEY);
  if (object === undefined) return undefined;
  const last = lastDecoded.get(store);
  if (last !== undefined && Buffer.compare(last.body, object.body) === 0)
    return { manifest: last.manifest, etag: object.etag };
  // Descriptors shared with the last manifest are reused, not decoded and validated again.
  const manifest = decodeManifest(object.body, last?.manifest);
  lastDecoded.set(store, { body: object.body, manifest });
  return { manifest, etag: object.etag };
}

/**
 * Records the manifest this process just wrote as `current` (bytes and the manifest they
 * encode), so the next read of those same bytes skips decoding them: at the end of a long
 * active chain that decoding is most of what a lone writer's commit pays for the chain's
 * length (docs/performance.md, "Long run").
 */
export function rememberWritten(store: ObjectStore, body: Uint8Array, manifest: Manifest): void {
  lastDecoded.set(store, { body, manifest });
}

/** Thrown inside this module when a referenced pack is gone; the caller re-reads `current`. */
class PackVanished extends Error {}

const DOWNLOAD_CONCURRENCY = 32;
const VANISHED_REREADS = 4;

export type PackDescriptor = CheckpointDescriptor | IncrementDescriptor;

function checksumMismatch(): Error {
  return integrityFailure(
    'CHECKSUM_MISMATCH',
    "A pack's size or SHA-256 differs from its descriptor; the notebook directory was left untouched.",
  );
}

/**
 * Packs up to this size are downloaded into memory and imported from there, never copied into
 * P's pack cache: each contending writer imports one small increment per competing publication,
 * and a cache file per increment is a file creation that can wait for the file system's
 * journal behind concurrent fsyncs. Their objects reach P through the import itself. A group's
 * increment counts as small: 100 members' commits on a 100-file directory are about 500 KiB,
 * and every member imports it (docs/performance.md, "Members import less").
 */
const SMALL_PACK_BYTES = 4n * 1024n * 1024n;

async function cachedPack(
  path: string,
  descriptor: PackDescriptor,
): Promise<Uint8Array | undefined> {
  const bytes = await readFile(path).catch(() => undefined);
  if (bytes === undefined) return undefined;
  if (BigInt(bytes.byteLength) === descriptor.size && sha256Hex(bytes) === descriptor.sha256) {
    // A hit counts as recent use: the cache keeps the most recently used packs.
    const now = new Date();
    await utimes(path, now, now).catch(() => undefined);
    return bytes;
  }
  await rm(path, { force: true });
  return undefined;
}

async function downloadPack(store: ObjectStore, descriptor: PackDescriptor): Promise<Uint8Array> {
  if (descriptor.size <= SMALL_PACK_BYTES) {
    // One read: a stream's machinery costs more than a small increment's bytes.
    const object = await store.get(descriptor.key);
    if (object === undefined) throw new PackVanished(descriptor.key);
    const bytes = object.body;
    if (BigInt(bytes.byteLength) !== descriptor.size || sha256Hex(bytes) !== descriptor.sha256)
      throw checksumMismatch();
    return bytes;
  }
  const stream = await store.getStream(descriptor.key);
  if (stream === undefined) throw new PackVanished(descriptor.key);
  const limit = descriptor.size;
  const chunks: Uint8Array[] = [];
  let total = 0n;
  for await (const chunk of stream) {
    total += BigInt(chunk.byteLength);
    if (total > limit) throw checksumMismatch();
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  if (total !== limit || sha256Hex(bytes) !== descriptor.sha256) throw checksumMismatch();
  return bytes;
}

/**
 * A verified pack: a small one downloaded; a larger one from P's cache (size + fresh hash on
 * hit) or downloaded and then cached.
 */
export async function obtainPack(ctx: DirContext, descriptor: PackDescriptor): Promise<Uint8Array> {
  const { downloads } = ctx.objects;
  const running = downloads.get(descriptor.sha256);
  if (running !== undefined) return running;
  const download = fetchPack(ctx, descriptor);
  downloads.set(descriptor.sha256, download);
  try {
    return await download;
  } finally {
    downloads.delete(descriptor.sha256);
  }
}

/** {@link obtainPack} without the sharing of a download in flight. */
async function fetchPack(ctx: DirContext, descriptor: PackDescriptor): Promise<Uint8Array> {
  if (descriptor.size <= SMALL_PACK_BYTES) return downloadPack(ctx.cfg.store, descriptor);
  const { packCacheDir } = ctx.objects;
  const path = join(packCacheDir, `${descriptor.sha256}.pack`);
  const cached = await cachedPack(path, descriptor);
  if (cached !== undefined) return cached;
  const bytes = await downloadPack(ctx.cfg.store, descriptor);
  const temp = `${path}.${randomUUID()}.tmp`;
  // No fsync: a torn cache file fails the hash check on its next hit and is fetched again.
  await mkdir(packCacheDir, { recursive: true, mode: 0o700 });
  await writeFile(temp, bytes, { mode: 0o600 });
  await rename(temp, path);
  // Another download into this cache in flight (a shared database) may be between its temp
  // file and its rename: temp files are then left for a later trim.
  const alone = ctx.objects.downloads.size <= 1;
  await trimPackCache(packCacheDir, { temps: alone }).catch(() => undefined);
  return bytes;
}

/**
 * Packs P's cache keeps: the newest few (a cold pull needs the checkpoint and perhaps a large
 * increment; older checkpoints are never read again once replaced), so the cache does not
 * grow with every checkpoint a long-running server sees (docs/engine.md, "Bounded private
 * state").
 */
export const PACK_CACHE_KEPT = 4;

/**
 * Removes all but the {@link PACK_CACHE_KEPT} most recently written packs, and (unless `temps`
 * is false: another download may be writing one) temp files a killed download left. Runs while
 * the call holds its database (the cache's only writers); a download of the same pack in
 * flight is shared, so no two calls write one file.
 */
export async function trimPackCache(
  dir: string,
  opts: { temps: boolean } = { temps: true },
): Promise<void> {
  const names = await readdir(dir);
  const packs: { path: string; mtimeMs: number }[] = [];
  for (const name of names) {
    const path = join(dir, name);
    if (name.endsWith('.tmp')) {
      if (opts.temps) await rm(path, { force: true });
    } else if (name.endsWith('.pack')) packs.push({ path, mtimeMs: (await stat(path)).mtimeMs });
  }
  packs.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of packs.slice(PACK_CACHE_KEPT)) await rm(old.path, { force: true });
}

/**
 * Imports the packs of `manifest`'s active chain after the newest entry whose head this process
 * verified (or everything, checkpoint first, when none is in the chain), then checks the new
 * head's closure before anything uses it. A head merely present in P is never an anchor: a
 * process killed mid-import or mid-write can leave a commit without the rest of its closure.
 * When the check against an anchor finds an object missing, the whole chain is imported and the
 * whole closure checked once more, so only a store that lacks the object is blamed.
 */
async function importMissing(ctx: DirContext, manifest: Manifest): Promise<void> {
  const { objects } = ctx;
  objects.upkeep.prefixHead = manifest.increments[ctx.cfg.checkpointPacks - 1]?.head;
  // Another directory of this database importing the same head: its import is this one's
  // (its failure is not: this call then imports on its own and meets the cause itself).
  await objects.imports.get(manifest.head)?.catch(() => undefined);
  const chain: PackDescriptor[] = [manifest.checkpoint, ...manifest.increments];
  const start = chain.findLastIndex((entry) => objects.verifiedHeads.has(entry.head)) + 1;
  if (start === chain.length) return;
  const run = importFrom(ctx, manifest, chain, start);
  objects.imports.set(manifest.head, run);
  try {
    await run;
  } finally {
    if (objects.imports.get(manifest.head) === run) objects.imports.delete(manifest.head);
  }
}

async function importFrom(
  ctx: DirContext,
  manifest: Manifest,
  chain: PackDescriptor[],
  start: number,
): Promise<void> {
  try {
    await importChain(ctx, manifest, chain, start);
  } catch (err) {
    if (start === 0 || !isMissingObject(err)) throw err;
    await importChain(ctx, manifest, chain, 0);
  }
  rememberVerified(ctx, manifest.head);
}

function isMissingObject(err: unknown): boolean {
  return isDomainError(err) && err.reason === 'MISSING_OBJECT';
}

/** Downloads and imports `chain[start..]` in manifest order and checks the new head's closure. */
async function importChain(
  ctx: DirContext,
  manifest: Manifest,
  chain: PackDescriptor[],
  start: number,
): Promise<void> {
  const needed = chain.slice(start);
  const limit = pLimit(DOWNLOAD_CONCURRENCY);
  const downloads = needed.map((descriptor) => limit(() => obtainPack(ctx, descriptor)));
  // Every download settles even when an earlier one fails: no unhandled rejection.
  for (const download of downloads) download.catch(() => {});
  // Small increments stay in memory until a baseline naming them is recorded (persistStaged):
  // a contending writer imports one per competing publication and would otherwise create
  // files for each.
  for (const [i, download] of downloads.entries()) {
    const staged = (needed[i] as PackDescriptor).size <= SMALL_PACK_BYTES;
    await importPack(ctx.db, await download, { staged });
  }
  const anchor = start > 0 ? (chain[start - 1] as PackDescriptor).head : undefined;
  await verifyNewClosure(ctx, anchor, manifest.head);
}

/**
 * Brings a recorded baseline's objects back from the store (contract §10: P is repaired from the
 * store): when `current`'s active chain, or a retained one, still holds its head, every pack of
 * that chain up to it is imported. Returns whether it did; the caller checks the closure again.
 * Retained chains count: a directory that has not pulled since the last checkpoint has its
 * baseline there, and its objects go missing whenever its process opens another database (a
 * restarted hub that could not claim the shared one). Without them it merged against the empty
 * tree and reported every file another writer had changed as a conflict.
 */
export async function restoreBaseline(ctx: DirContext, baseline: Baseline): Promise<boolean> {
  if (baseline.head === '') return false;
  const current = await readCurrent(ctx.cfg.store);
  if (current === undefined) return false;
  const { manifest } = current;
  for (const { checkpoint, increments } of [manifest, ...manifest.retained]) {
    const chain: PackDescriptor[] = [checkpoint, ...increments];
    const at = chain.findIndex((entry) => entry.head === baseline.head);
    if (at < 0) continue;
    for (const descriptor of chain.slice(0, at + 1))
      await importPack(ctx.db, await obtainPack(ctx, descriptor));
    return true;
  }
  return false;
}

/** True when `head` is accepted in `current` (its active or a retained chain). */
export function holdsHead(current: Current | undefined, head: string): boolean {
  if (current === undefined || head === '') return false;
  const { manifest } = current;
  return [manifest, ...manifest.retained].some(
    (chain) => chain.checkpoint.head === head || chain.increments.some((i) => i.head === head),
  );
}

/**
 * Records a head whose closure is known complete in the directory's database (verified, or
 * our own publication), for every directory using that database.
 */
export function rememberVerified(ctx: DirContext, head: string): void {
  const { verifiedHeads, verifiedKept } = ctx.objects;
  verifiedHeads.delete(head);
  verifiedHeads.add(head);
  if (verifiedHeads.size > verifiedKept) {
    const oldest = verifiedHeads.values().next().value;
    if (oldest !== undefined) verifiedHeads.delete(oldest);
  }
}

/**
 * Work a commit that lost a race can do while it backs off: fetch, import and check the packs
 * of the `current` it observed, and read and validate its tree, so the next attempt's window
 * between reading `current` and the CAS holds only what arrived after that. Failures are left
 * for that attempt's {@link loadRemote} to meet again and report.
 */
export async function prefetchRemote(
  ctx: DirContext,
  observed: Current | undefined,
): Promise<void> {
  if (observed === undefined) return;
  try {
    await importMissing(ctx, observed.manifest);
    const { tree, entries } = await readAcceptedTree(ctx, observed.manifest.head);
    validateRemoteTree(ctx, tree, entries);
  } catch {
    // Reported, if it persists, by the next loadRemote.
  }
}

/**
 * The head closure check of contract §7. Without an anchor: the whole closure. With one (a head P
 * already held, whose closure was checked when it arrived): every tree of the new head (reading
 * the flattened tree fails on a missing tree) and only the blobs that differ from the anchor's,
 * because an increment pack carries only what is new relative to its parent. Checking all
 * 10,000 blobs of a notebook for every one-file increment would make warm pulls and lost races
 * cost as much as a cold pull.
 */
async function verifyNewClosure(
  ctx: DirContext,
  anchor: string | undefined,
  head: string,
): Promise<void> {
  if (anchor === undefined) {
    await verifyClosure(ctx.db, head);
    return;
  }
  const after = (await readAcceptedTree(ctx, head)).entries;
  const before = (await readAcceptedTree(ctx, anchor)).entries;
  for (const [path, oid] of after) {
    if (before.get(path) === oid) continue;
    const blob = await ctx.db.readBlob(oid).catch((err: unknown) => {
      throw integrityFailure(
        'MISSING_OBJECT',
        'A pack lacks an object the accepted notebook needs; the notebook directory was left untouched.',
        err,
      );
    });
    if (!isUtf8(blob) || blob.includes(0)) {
      throw integrityFailure(
        'INVALID_REMOTE_CONTENT',
        'The accepted notebook holds content that is not valid notebook text; the notebook directory was left untouched.',
      );
    }
  }
}

/** contract §4 on the accepted tree: every path valid, no two colliding under case folding. */
function validateRemoteTree(ctx: DirContext, tree: string, entries: TreeEntries): void {
  if (ctx.trees.isValidated(tree)) return;
  const folded = new Set<string>();
  for (const path of entries.keys()) {
    const key = foldKey(path);
    if (checkNotebookPath(path) !== undefined || folded.has(key)) {
      throw integrityFailure(
        'INVALID_REMOTE_CONTENT',
        'The accepted notebook holds a path that is not valid notebook state; the notebook directory was left untouched.',
      );
    }
    folded.add(key);
  }
  ctx.trees.markValidated(tree);
}

/** The accepted head's tree; an object P lacks or cannot parse is the remote's fault. */
async function readAcceptedTree(
  ctx: DirContext,
  head: string,
): Promise<{ tree: string; entries: TreeEntries }> {
  try {
    const { tree } = await ctx.db.readCommit(head);
    return { tree, entries: tree === EMPTY_TREE ? NO_FILES : await ctx.trees.read(ctx.db, tree) };
  } catch (err) {
    if (err instanceof ObjectMissingError) {
      throw integrityFailure(
        'MISSING_OBJECT',
        'A pack lacks an object the accepted notebook needs; the notebook directory was left untouched.',
        err,
      );
    }
    if (err instanceof TreeError || err instanceof CommitFormatError) {
      throw integrityFailure(
        'INVALID_REMOTE_CONTENT',
        'The accepted notebook holds a tree or commit that is not valid notebook state; the notebook directory was left untouched.',
        err,
      );
    }
    throw err;
  }
}

/**
 * Reads R: `current`, the rolled-back check against `rollbackBaseline`, the missing packs, and
 * the accepted tree. A vanished pack under an unchanged `current` is MISSING_PACK; under a
 * changed one the read starts over.
 */
export async function loadRemote(
  ctx: DirContext,
  call: CallState,
  rollbackBaseline: Baseline | undefined,
): Promise<RemoteView> {
  call.stage = 'fetch';
  for (let round = 0; ; round += 1) {
    const current = await readCurrent(ctx.cfg.store);
    await failpoint(ctx.cfg.failpoints, FAILPOINT.afterReadCurrent);
    assertNotRolledBack(
      rollbackBaseline,
      current && { generation: current.manifest.generation, head: current.manifest.head },
    );
    if (current === undefined) return { current, baseline: EMPTY_BASELINE, entries: NO_FILES };
    try {
      await importMissing(ctx, current.manifest);
    } catch (err) {
      if (!(err instanceof PackVanished)) throw err;
      const again = await readCurrent(ctx.cfg.store);
      if (again?.etag === current.etag || round + 1 >= VANISHED_REREADS) {
        throw integrityFailure(
          'MISSING_PACK',
          'A pack the store manifest references is gone; the notebook directory was left untouched.',
        );
      }
      continue;
    }
    await failpoint(ctx.cfg.failpoints, FAILPOINT.afterFetch);
    const { tree, entries } = await readAcceptedTree(ctx, current.manifest.head);
    validateRemoteTree(ctx, tree, entries);
    return {
      current,
      baseline: { generation: current.manifest.generation, head: current.manifest.head, tree },
      entries,
    };
  }
}
