import { randomUUID } from 'node:crypto';
import type * as NodeFs from 'node:fs';
import { decodeCommit } from '../model/commit-codec';
import { type GitObject, isOid, type Oid } from '../model/object-format';
import { buildPack, encodePackIndex } from '../model/pack-format';
import { DIR_MODE, decodeTree } from '../model/tree-codec';
import type { GitDir } from './git-dir';
import { listPacks, NEEDS_ISOMORPHIC_GIT, type PackIndex } from './object-files';

/** What an object database holds on disk. */
export interface ObjectDbSize {
  /** Objects in packs and loose files (an object held twice counts twice). */
  objects: number;
  /** Installed packs (each a `.pack` and its `.idx`). */
  packs: number;
  /** Objects stored one file each. */
  looseObjects: number;
  /** Bytes of every pack, index and loose object file. */
  bytes: number;
}

/** The boundaries inside a consolidation, where tests stop or kill the process. */
export type ConsolidationStep =
  /** The new pack and index are durable; nothing was removed yet. */
  | 'after-pack-written'
  /** The replaced packs' indexes are gone (the packs no longer read as present). */
  | 'after-indexes-removed'
  /** Everything replaced is removed; the empty fan-out directories not yet. */
  | 'after-files-removed';

/**
 * The ids a consolidation keeps. Ids that are absent or malformed are skipped. A database
 * shared by several directories passes the union of their roots.
 */
export interface ConsolidationRoots {
  /**
   * Commits and trees whose closure stays: a commit keeps itself and its tree's closure (not
   * its parents), a tree its subtrees and blobs.
   */
  closures: Iterable<string>;
  /** Objects kept as they are, never read (e.g. blobs a stat cache names). */
  objects?: Iterable<string>;
}

/** How a consolidation is run. */
export interface ConsolidationOptions {
  /** What must stay readable; everything else on disk may be dropped (see {@link consolidate}). */
  roots: () => Promise<ConsolidationRoots>;
  /** Roll everything into one pack and drop every unreachable object, whatever the thresholds. */
  full?: boolean;
  /** Called at each {@link ConsolidationStep}; undefined = nothing to wait for. */
  step?: (name: ConsolidationStep) => Promise<void> | undefined;
}

/** What one consolidation did (counts and sizes only: no ids, no paths). */
export interface ConsolidationReport {
  /** P's object database before. */
  before: ObjectDbSize;
  /** And after. */
  after: ObjectDbSize;
  /** Packs and loose objects replaced by the new pack. */
  took: { packs: number; looseObjects: number; objects: number; bytes: number };
  /** Objects dropped as unreachable from the roots, or duplicated. */
  dropped: number;
  /** Objects written to the new pack. */
  written: number;
  /** Leftover files of an interrupted install or consolidation that were removed first. */
  repaired: number;
  /** Wall time, milliseconds. */
  ms: number;
}

/**
 * Pack count at which the next check consolidates. A persist adds up to 9 packs, so between
 * two checks P holds fewer than this plus 9; a consolidation leaves a geometric progression.
 */
export const PACK_TRIGGER = 8;
/** Loose objects at which the next check consolidates (a commit writes about one). */
export const LOOSE_TRIGGER = 16;
/** Each kept pack holds at least this many times the objects of the next smaller one. */
const FACTOR = 2;
/**
 * Everything is rolled up (and every unreachable object dropped) once P holds more than this
 * many times the reachable objects, plus {@link FULL_SLACK}: P's bytes stay within a small
 * multiple of what the roots reach.
 */
const FULL_RATIO = 3;
const FULL_SLACK = 1024;

/** The name every installed pack has: `pack-<40 hex>.pack` / `.idx`. */
const PACK_NAME = /^pack-[0-9a-f]{40}\.(pack|idx)$/;
const FANOUT = /^[0-9a-f]{2}$/;
const LOOSE_NAME = /^[0-9a-f]{38}$/;

/** One installed pack as a consolidation sees it. */
interface PackSource {
  base: string;
  index: PackIndex;
}

type Fs = typeof NodeFs;

function fsOf(dir: GitDir): Fs {
  return dir.fs as unknown as Fs;
}

/** Cheap: true when the thresholds say a consolidation would shrink P. */
export function needsConsolidation(dir: GitDir, looseObjects: number): boolean {
  if (looseObjects >= LOOSE_TRIGGER) return true;
  const names = fsOf(dir).readdirSync(`${dir.gitdir}/objects/pack`);
  return names.filter((name) => name.endsWith('.idx')).length >= PACK_TRIGGER;
}

/** Counts the loose objects on disk (one directory listing per fan-out directory). */
export function countLoose(dir: GitDir): number {
  return looseObjects(dir).length;
}

/** What the database holds on disk now. */
export function measure(dir: GitDir): ObjectDbSize {
  const fs = fsOf(dir);
  const packDir = `${dir.gitdir}/objects/pack`;
  let objects = 0;
  let bytes = 0;
  const packs = listPacks(dir);
  for (const [name, index] of packs) {
    if (index !== NEEDS_ISOMORPHIC_GIT) objects += index.count;
    bytes += sizeOf(fs, `${packDir}/${name}`) + sizeOf(fs, `${packDir}/${name.slice(0, -4)}.pack`);
  }
  const loose = looseObjects(dir);
  for (const { path } of loose) bytes += sizeOf(fs, path);
  return {
    objects: objects + loose.length,
    packs: packs.length,
    looseObjects: loose.length,
    bytes,
  };
}

function sizeOf(fs: Fs, path: string): number {
  try {
    return fs.statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Removes what an interrupted install or consolidation left (contract §10, kill at any
 * instruction): temp files, staging directories, a pack whose index never arrived, an index
 * whose pack is gone. Must run under the lock that serialises writers of this database.
 * Returns how many files it removed.
 */
export function removeLeftovers(dir: GitDir): number {
  const fs = fsOf(dir);
  const packDir = `${dir.gitdir}/objects/pack`;
  let removed = 0;
  const remove = (path: string) => {
    fs.rmSync(path, { force: true, recursive: true });
    removed += 1;
  };
  const names = new Set(fs.readdirSync(packDir));
  for (const name of names) {
    if (!PACK_NAME.test(name)) remove(`${packDir}/${name}`);
    else if (name.endsWith('.pack') && !names.has(`${name.slice(0, -5)}.idx`))
      remove(`${packDir}/${name}`);
    else if (name.endsWith('.idx') && !names.has(`${name.slice(0, -4)}.pack`))
      remove(`${packDir}/${name}`);
  }
  if (fs.existsSync(`${dir.gitdir}/incoming`)) remove(`${dir.gitdir}/incoming`);
  for (const name of fs.readdirSync(dir.gitdir))
    if (name.startsWith('consolidated-')) remove(`${dir.gitdir}/${name}`);
  for (const fanout of fanouts(dir))
    for (const name of fs.readdirSync(fanout))
      if (!LOOSE_NAME.test(name)) remove(`${fanout}/${name}`);
  return removed;
}

function fanouts(dir: GitDir): string[] {
  const fs = fsOf(dir);
  return fs
    .readdirSync(`${dir.gitdir}/objects`)
    .filter((name) => FANOUT.test(name))
    .map((name) => `${dir.gitdir}/objects/${name}`);
}

function looseObjects(dir: GitDir): { oid: Oid; path: string }[] {
  const fs = fsOf(dir);
  const found: { oid: Oid; path: string }[] = [];
  for (const fanout of fanouts(dir)) {
    const prefix = fanout.slice(-2);
    for (const name of fs.readdirSync(fanout))
      if (LOOSE_NAME.test(name)) found.push({ oid: `${prefix}${name}`, path: `${fanout}/${name}` });
  }
  return found;
}

/** Reads objects for a consolidation (the database's own reader: staged, cached, or on disk). */
export type ObjectReader = (oid: Oid) => Promise<GitObject | undefined>;

/**
 * Every object reachable from `roots` that is present: commits keep their tree (not their
 * parents: P needs the closure of the states it records, and history is fetched on demand),
 * trees their entries. Absent objects are skipped; only present objects can be dropped.
 */
export async function reachable(read: ObjectReader, roots: ConsolidationRoots): Promise<Set<Oid>> {
  const keep = new Set<Oid>();
  /** Commits and trees already walked (a blob is never walked). */
  const walked = new Set<Oid>();
  const pending: Oid[] = [];
  for (const root of roots.closures) if (isOid(root)) pending.push(root);
  while (pending.length > 0) {
    const oid = pending.pop() as Oid;
    if (walked.has(oid)) continue;
    walked.add(oid);
    const object = await read(oid).catch(() => undefined);
    if (object === undefined) continue;
    keep.add(oid);
    if (object.type === 'commit') pending.push(decodeCommit(object.content).tree);
    else if (object.type === 'tree') {
      for (const entry of decodeTree(object.content, '')) {
        if (entry.mode === DIR_MODE) pending.push(entry.oid);
        // Blobs are kept without reading them: their ids are all a keep-set needs.
        else keep.add(entry.oid);
      }
    }
  }
  for (const oid of roots.objects ?? []) if (isOid(oid)) keep.add(oid);
  return keep;
}

/**
 * Reads an object to copy it into the new pack. A corrupt one (its bytes do not match its id)
 * is not copied: it reads as absent afterwards, which the closure checks repair from the store
 * like any missing object, instead of blocking every later consolidation. An I/O failure
 * stops the consolidation, before anything was removed.
 */
async function readUnlessCorrupt(read: ObjectReader, oid: Oid): Promise<GitObject | undefined> {
  try {
    return await read(oid);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // errno codes (EIO, EMFILE…) are I/O; zlib's (Z_DATA_ERROR) and none mean corrupt bytes.
    if (code !== undefined && /^E[A-Z]+$/.test(code)) throw error;
    return undefined;
  }
}

/**
 * The packs to roll up, git's geometric repack: with the packs sorted by object count, the
 * smallest prefix such that the rolled-up pack (that prefix plus the loose objects) and every
 * larger pack each hold at least {@link FACTOR} times the objects of the one before. The packs
 * kept then form a geometric progression, so their number stays within log2(objects) + 1.
 */
export function geometricSplit(counts: number[], loose: number): number {
  const ascending = [...counts].sort((a, b) => a - b);
  for (let split = 0; split <= ascending.length; split += 1) {
    let previous = loose + ascending.slice(0, split).reduce((sum, n) => sum + n, 0);
    let geometric = true;
    for (const count of ascending.slice(split)) {
      if (count < FACTOR * previous) {
        geometric = false;
        break;
      }
      previous = count;
    }
    if (geometric) return split;
  }
  return ascending.length;
}

/**
 * Consolidates the object database at `dir`: removes leftovers of an interrupted run, then
 * rolls the loose objects and the smaller packs (geometrically, or everything with `full` or
 * once P holds far more than the roots reach) into one new pack of the objects the roots reach,
 * dropping the rest. Safe against a kill at any instruction: the new pack and its index are
 * written under temp names, fsynced and renamed in (pack first, index last) and the directory
 * fsynced before anything is removed; the replaced packs lose their index first. A kill leaves
 * at worst duplicates or an orphan, which the next run removes. Must run under the lock that
 * serialises writers of this database, with no call using it meanwhile (the roots must name
 * everything a call in flight would still need). Returns undefined when there was nothing to
 * roll up. Throws on an I/O failure (ENOSPC, EACCES); nothing was removed then.
 */
export async function consolidate(
  dir: GitDir,
  read: ObjectReader,
  opts: ConsolidationOptions,
): Promise<
  (Omit<ConsolidationReport, 'ms' | 'before' | 'after'> & { keep: Set<Oid> }) | undefined
> {
  const fs = fsOf(dir);
  const packDir = `${dir.gitdir}/objects/pack`;
  const repaired = removeLeftovers(dir);
  const packs: PackSource[] = [];
  for (const [name, index] of listPacks(dir))
    if (index !== NEEDS_ISOMORPHIC_GIT) packs.push({ base: name.slice(0, -4), index });
  const loose = looseObjects(dir);
  const keep = await reachable(read, await opts.roots());
  const onDisk = loose.length + packs.reduce((sum, pack) => sum + pack.index.count, 0);
  const full = opts.full === true || onDisk > FULL_RATIO * keep.size + FULL_SLACK;
  packs.sort((a, b) => a.index.count - b.index.count);
  const split = full
    ? packs.length
    : geometricSplit(
        packs.map((pack) => pack.index.count),
        loose.length,
      );
  const rolled = packs.slice(0, split);
  const kept = packs.slice(split);
  if (loose.length === 0 && rolled.length <= 1 && !full) return undefined;
  const inKept = (oid: Oid) => kept.some((pack) => pack.index.offsetOf(oid) !== undefined);
  const sources: Oid[] = [...loose.map((object) => object.oid)];
  for (const pack of rolled) sources.push(...pack.index.oids());
  const chosen = new Map<Oid, GitObject>();
  for (const oid of sources) {
    if (chosen.has(oid) || !keep.has(oid) || inKept(oid)) continue;
    const object = await readUnlessCorrupt(read, oid);
    if (object !== undefined) chosen.set(oid, object);
  }
  // One pack holding exactly what is kept: rewriting it would gain nothing.
  const only = rolled[0];
  if (loose.length === 0 && rolled.length === 1 && chosen.size === only?.index.count)
    return undefined;
  let newBase: string | undefined;
  if (chosen.size > 0) newBase = writePackDurably(fs, packDir, [...chosen]);
  // Rolling packs into one identical to one of them (same objects, same order) keeps that one.
  const replaced = rolled.filter((pack) => pack.base !== newBase);
  if (replaced.length === 0 && loose.length === 0) return undefined;
  let tookBytes = 0;
  for (const pack of replaced)
    tookBytes +=
      sizeOf(fs, `${packDir}/${pack.base}.pack`) + sizeOf(fs, `${packDir}/${pack.base}.idx`);
  for (const object of loose) tookBytes += sizeOf(fs, object.path);
  await opts.step?.('after-pack-written');
  announce(fs, dir.gitdir);
  // The switch: indexes first, so a pack stops reading as present before its bytes go.
  for (const pack of replaced) fs.rmSync(`${packDir}/${pack.base}.idx`, { force: true });
  listPacks(dir);
  await opts.step?.('after-indexes-removed');
  for (const pack of replaced) fs.rmSync(`${packDir}/${pack.base}.pack`, { force: true });
  for (const object of loose) fs.rmSync(object.path, { force: true });
  await opts.step?.('after-files-removed');
  for (const fanout of fanouts(dir)) {
    try {
      fs.rmdirSync(fanout);
    } catch {
      // Not empty (an object kept or written meanwhile): it stays.
    }
  }
  const took = replaced.reduce((sum, pack) => sum + pack.index.count, 0) + loose.length;
  return {
    took: { packs: replaced.length, looseObjects: loose.length, objects: took, bytes: tookBytes },
    dropped: took - chosen.size,
    written: chosen.size,
    repaired,
    keep,
  };
}

/** The file whose content changes with every consolidation (see {@link consolidationMark}). */
function markFile(gitdir: string): string {
  return `${gitdir}/consolidated`;
}

/**
 * Tells every process using this database that objects may be gone: written before anything is
 * removed, so a process that reads the old mark after a consolidation started was not misled.
 */
function announce(fs: Fs, gitdir: string): void {
  const temp = `${gitdir}/consolidated-${randomUUID()}.tmp`;
  fs.writeFileSync(temp, randomUUID());
  fs.renameSync(temp, markFile(gitdir));
}

/**
 * The current consolidation mark ('' before the first): a process that sees it change knows
 * another one consolidated, and drops what it believed present.
 */
export function consolidationMark(dir: GitDir): string {
  try {
    return fsOf(dir).readFileSync(markFile(dir.gitdir), 'utf8');
  } catch {
    return '';
  }
}

/**
 * Writes one pack of whole objects and its index under temp names, fsyncs both, renames them
 * in (pack first, index last: readers find packs by their index) and fsyncs the directory, so
 * the objects are durable before the caller removes their old copies. Returns the pack's base
 * name. A pack of the same name already present is left as it is (same checksum, same bytes).
 */
function writePackDurably(fs: Fs, packDir: string, objects: [Oid, GitObject][]): string {
  const pack = buildPack(objects.map(([, object]) => object));
  const index = encodePackIndex(
    pack.summary.entries.map((entry, i) => ({
      oid: (objects[i] as [Oid, GitObject])[0],
      offset: entry.offset,
      crc: entry.crc,
    })),
    pack.summary.checksum,
  );
  const base = `pack-${pack.summary.checksum}`;
  if (fs.existsSync(`${packDir}/${base}.idx`)) return base;
  const temp = `${packDir}/consolidate-${randomUUID()}`;
  try {
    writeSynced(fs, `${temp}.pack.tmp`, pack.bytes);
    writeSynced(fs, `${temp}.idx.tmp`, index);
    fs.renameSync(`${temp}.pack.tmp`, `${packDir}/${base}.pack`);
    fs.renameSync(`${temp}.idx.tmp`, `${packDir}/${base}.idx`);
    syncDirectory(fs, packDir);
  } finally {
    fs.rmSync(`${temp}.pack.tmp`, { force: true });
    fs.rmSync(`${temp}.idx.tmp`, { force: true });
  }
  return base;
}

function writeSynced(fs: Fs, path: string, bytes: Uint8Array): void {
  fs.writeFileSync(path, bytes);
  const fd = fs.openSync(path, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function syncDirectory(fs: Fs, path: string): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch {
    // A file system without directory handles (the in-memory variant) has nothing to sync.
    return;
  }
  try {
    fs.fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the renames are then as durable as it gets.
  } finally {
    fs.closeSync(fd);
  }
}
