import type { BigIntStats } from 'node:fs';
import { lstat, open, readFile, unlink } from 'node:fs/promises';
import { writeFileDurably } from './durable-write';
import { type FileStamp, sameStamp } from './stamp';

/**
 * Remembers, per notebook path and stamp, an opaque id the engine computed from the content
 * (a blob oid), so an unchanged file is not read again (contract §4/§9 "stat cache").
 */
export interface StatCache {
  /** The id stored for `path` when its stamp is unchanged and trustworthy, else `undefined`. */
  get(path: string, stamp: FileStamp): string | undefined;
  /** True when an entry for `path` exists at all, whatever its stamp or trust. */
  has(path: string): boolean;
  set(path: string, stamp: FileStamp, id: string): void;
  /** Every id stored (the engine keeps the objects they name when it prunes P). */
  ids(): Iterable<string>;
  /**
   * Persists what changed since the last save (0600): appended to a journal beside the file,
   * or, once the journal grows, the whole cache rewritten (temp file + rename) and the journal
   * dropped. Does nothing when nothing changed.
   */
  save(): Promise<void>;
}

/**
 * One entry: the stamp as the string stored on disk (loading a large cache creates no BigInt
 * per entry), parsed on its first lookup and kept (`null`: the stored key is malformed).
 */
interface Entry {
  key: string;
  id: string;
  // Always present (undefined until parsed), so every entry keeps one object shape.
  stamp: FileStamp | null | undefined;
}

/**
 * The file: `{"version":2,"entries":[path, stampKey, id, path, stampKey, id, …]}`. A flat array
 * of strings parses several times faster than an object with one key per path (which V8 builds
 * as a hash table) and loading is what a fresh process pays first. Version 1 (`entries` as an
 * object of path → [stampKey, id]) is still read.
 */
interface CacheFile {
  version: 2;
  entries: string[];
}

/**
 * The in-memory image of one cache file, shared by every {@link loadStatCache} of that file in
 * this process while the file on disk is the one the image was loaded from or saved as.
 */
interface Image {
  readonly entries: Map<string, Entry>;
  /**
   * Racily-clean threshold: the mtime of the last write this image was loaded from or saved
   * as (the cache file or its journal, whichever is newer).
   */
  trustedBeforeNs: bigint;
  /** The stamp keys of the cache file and its journal (`undefined`: not known to match). */
  fileKey: string | undefined;
  /** Entries set that the files on disk do not hold (or hold untrusted). */
  readonly pending: Set<string>;
  /** Lines in the journal on disk. */
  journalLines: number;
}

/**
 * Why a journal: a one-file commit in a 10,000-file notebook would otherwise rewrite every
 * entry (~15 ms) to record one. The journal takes the changed entries as JSON lines; it is
 * folded into the file once it holds more than this many lines or a quarter of the entries.
 */
const JOURNAL_MIN_LINES = 256;

function journalOf(file: string): string {
  return `${file}.log`;
}

/**
 * Images by cache file, least recently loaded first. Bounded: a server that once served many
 * directories keeps the images of the most recent ones only (an open {@link StatCache} holds its
 * own image, so eviction only means the next load of an evicted file reads it from disk).
 */
const images = new Map<string, Image>();
/** How many images {@link images} keeps. */
export const STAT_CACHE_IMAGES_KEPT = 64;

function keepImage(file: string, image: Image): void {
  images.delete(file);
  images.set(file, image);
  for (const oldest of images.keys()) {
    if (images.size <= STAT_CACHE_IMAGES_KEPT) break;
    images.delete(oldest);
  }
}

function stampKey(stamp: FileStamp): string {
  return `${stamp.size}:${stamp.mtimeNs}:${stamp.ctimeNs}:${stamp.ino}:${stamp.dev}`;
}

/** The cache files' identity: either replaced, rewritten, appended to or touched, it changes. */
function fileKeyOf(main: BigIntStats | undefined, journal: BigIntStats | undefined): string {
  const one = (stats: BigIntStats | undefined) =>
    stats ? `${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.ino}:${stats.dev}` : '-';
  return `${one(main)}|${one(journal)}`;
}

function statIfPresent(file: string): Promise<BigIntStats | undefined> {
  return lstat(file, { bigint: true }).catch(() => undefined);
}

function newerMtime(a: BigIntStats | undefined, b: BigIntStats | undefined): bigint {
  const times = [a?.mtimeNs ?? 0n, b?.mtimeNs ?? 0n];
  return times[0]! > times[1]! ? times[0]! : times[1]!;
}

const STAMP_KEY = /^(\d+):(-?\d+):(-?\d+):(\d+):(\d+)$/;

function parseStampKey(key: string): FileStamp | null {
  const match = STAMP_KEY.exec(key);
  if (!match) return null;
  const [size, mtimeNs, ctimeNs, ino, dev] = match.slice(1) as [
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    size: Number(size),
    mtimeNs: BigInt(mtimeNs),
    ctimeNs: BigInt(ctimeNs),
    ino: Number(ino),
    dev: Number(dev),
  };
}

/**
 * Loads the cache at `file` (absent or unreadable content = empty: it is only a cache).
 *
 * The server is long-lived and every call scans L, so the parsed cache is kept in memory and
 * reused by the next load of the same file for as long as the file on disk still has the
 * stamp (size, mtime, ctime, inode, device) it had when this process last read or wrote it;
 * a file rewritten by another process is read again.
 *
 * "Racily clean" files (git's term): a file written in the same timestamp tick as the cache
 * could change again without changing its stamp. Like git's index, an entry is trusted only
 * when the file's mtime is older than the cache file's own mtime (same clock, same
 * granularity); a racy entry is simply re-read next time.
 */
export async function loadStatCache(file: string): Promise<StatCache> {
  const stats = await statIfPresent(file);
  const journalStats = await statIfPresent(journalOf(file));
  const fileKey = fileKeyOf(stats, journalStats);
  let image = images.get(file);
  if (!image || image.fileKey === undefined || image.fileKey !== fileKey) {
    // Stamps first, content second: a rewrite in between leaves an older threshold (less
    // trust) and a stale key (read again next time), never more trust than the content earns.
    const text = stats ? await readFile(file, 'utf8').catch(() => undefined) : undefined;
    const entries = text === undefined ? new Map<string, Entry>() : parseCache(text);
    const journal = journalStats
      ? await readFile(journalOf(file), 'utf8').catch(() => undefined)
      : undefined;
    image = {
      entries,
      trustedBeforeNs: newerMtime(stats, journalStats),
      fileKey,
      pending: new Set(),
      journalLines: journal === undefined ? 0 : applyJournal(entries, journal),
    };
  }
  keepImage(file, image);
  return cacheOver(file, image);
}

function cacheOver(file: string, image: Image): StatCache {
  return {
    get(path, stamp) {
      const entry = image.entries.get(path);
      if (!entry || stamp.mtimeNs >= image.trustedBeforeNs) return undefined;
      if (entry.stamp === undefined) entry.stamp = parseStampKey(entry.key);
      return entry.stamp && sameStamp(entry.stamp, stamp) ? entry.id : undefined;
    },
    has(path) {
      return image.entries.has(path);
    },
    *ids() {
      for (const entry of image.entries.values()) yield entry.id;
    },
    set(path, stamp, id) {
      const known = image.entries.get(path);
      const key = stampKey(stamp);
      // Re-confirming a racy entry still needs a save: the save's later mtime makes it trusted.
      if (known?.key === key && known.id === id && stamp.mtimeNs < image.trustedBeforeNs) return;
      image.entries.set(path, { key, id, stamp });
      image.pending.add(path);
    },
    async save() {
      if (image.pending.size === 0) return;
      const paths = [...image.pending];
      image.pending.clear();
      const limit = Math.max(JOURNAL_MIN_LINES, image.entries.size / 4);
      // No cache file known on disk (first save, or another process replaced it): write it whole.
      const noFile = image.fileKey === undefined || image.fileKey.startsWith('-|');
      const rewrite = noFile || image.journalLines + paths.length > limit;
      let written: { file: string; stats: BigIntStats };
      try {
        written = rewrite
          ? await rewriteCache(file, image)
          : await appendJournal(file, image, paths);
      } catch (error) {
        for (const path of paths) image.pending.add(path);
        throw error;
      }
      // The threshold is the mtime of the write this process made, even if another process
      // has replaced the files since; the image stands for the files on disk only while ours.
      image.trustedBeforeNs = written.stats.mtimeNs;
      const [main, journal] = [await statIfPresent(file), await statIfPresent(journalOf(file))];
      const now = written.file === file ? main : journal;
      image.fileKey =
        now && now.ino === written.stats.ino && now.dev === written.stats.dev
          ? fileKeyOf(main, journal)
          : undefined;
    },
  };
}

/** Writes every entry as the cache file, then drops the journal it now contains. */
async function rewriteCache(
  file: string,
  image: Image,
): Promise<{ file: string; stats: BigIntStats }> {
  const out: CacheFile = { version: 2, entries: [] };
  for (const [path, entry] of image.entries) out.entries.push(path, entry.key, entry.id);
  const stats = await writeFileDurably(file, JSON.stringify(out), { sync: false });
  await unlink(journalOf(file)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  image.journalLines = 0;
  return { file, stats };
}

/** Appends one JSON line `[path, stampKey, id]` per changed entry to the journal (0600). */
async function appendJournal(
  file: string,
  image: Image,
  paths: string[],
): Promise<{ file: string; stats: BigIntStats }> {
  // A leading newline ends a line torn by a crash during an earlier append (blank lines are skipped).
  let lines = '\n';
  for (const path of paths) {
    const entry = image.entries.get(path) as Entry;
    lines += `${JSON.stringify([path, entry.key, entry.id])}\n`;
  }
  const handle = await open(journalOf(file), 'a', 0o600);
  try {
    await handle.appendFile(lines);
    image.journalLines += paths.length;
    return { file: journalOf(file), stats: await handle.stat({ bigint: true }) };
  } finally {
    await handle.close();
  }
}

/**
 * Applies the journal's lines in order over `entries`; a torn or malformed line (a crash in
 * the middle of an append) is skipped — every line is a fact about one stamp, so any subset
 * is a correct cache. Returns the number of lines.
 */
function applyJournal(entries: Map<string, Entry>, text: string): number {
  let lines = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    lines += 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!Array.isArray(value) || value.length !== 3) continue;
    const [path, key, id] = value as unknown[];
    if (typeof path === 'string' && typeof key === 'string' && typeof id === 'string') {
      entries.set(path, { key, id, stamp: undefined });
    }
  }
  return lines;
}

/** A cache that remembers nothing (for callers without private state). */
export function emptyStatCache(): StatCache {
  return {
    get: () => undefined,
    has: () => false,
    set: () => {},
    ids: () => [],
    save: async () => {},
  };
}

function parseCache(text: string): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  const add = (path: unknown, key: unknown, id: unknown) => {
    if (typeof path === 'string' && typeof key === 'string' && typeof id === 'string') {
      entries.set(path, { key, id, stamp: undefined });
    }
  };
  let parsed: { version?: unknown; entries?: unknown };
  try {
    parsed = JSON.parse(text);
  } catch {
    return entries; // unparseable: an empty cache
  }
  const stored = parsed?.entries;
  if (parsed?.version === 2 && Array.isArray(stored)) {
    for (let i = 0; i + 2 < stored.length; i += 3) add(stored[i], stored[i + 1], stored[i + 2]);
  } else if (parsed?.version === 1 && typeof stored === 'object' && stored !== null) {
    for (const [path, value] of Object.entries(stored)) {
      if (Array.isArray(value) && value.length === 2) add(path, value[0], value[1]);
    }
  }
  return entries;
}
