import type { BigIntStats } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { writeFileDurably } from './durable-write';
import { type FileStamp, sameStamp } from './stamp';

/**
 * Remembers, per notebook path and stamp, an opaque id the engine computed from the content
 * (a blob oid), so an unchanged file is not read again (SPEC §4/§9 "stat cache").
 */
export interface StatCache {
  /** The id stored for `path` when its stamp is unchanged and trustworthy, else `undefined`. */
  get(path: string, stamp: FileStamp): string | undefined;
  /** True when an entry for `path` exists at all, whatever its stamp or trust. */
  has(path: string): boolean;
  set(path: string, stamp: FileStamp, id: string): void;
  /** Persists the cache (temp file + rename, 0600); does nothing when nothing changed. */
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
  /** Racily-clean threshold: the mtime of the cache file this image was loaded from or saved as. */
  trustedBeforeNs: bigint;
  /** The stamp key of that cache file on disk (`undefined`: none is known to match the image). */
  fileKey: string | undefined;
  /** Something was set that the file on disk does not hold (or holds untrusted). */
  dirty: boolean;
}

const images = new Map<string, Image>();

function stampKey(stamp: FileStamp): string {
  return `${stamp.size}:${stamp.mtimeNs}:${stamp.ctimeNs}:${stamp.ino}:${stamp.dev}`;
}

/** The cache file's own identity: replaced, rewritten or touched, its key changes. */
function fileKeyOf(stats: BigIntStats): string {
  return `${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.ino}:${stats.dev}`;
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
  const stats = await lstat(file, { bigint: true }).catch(() => undefined);
  const fileKey = stats ? fileKeyOf(stats) : undefined;
  let image = images.get(file);
  if (!image || image.fileKey === undefined || image.fileKey !== fileKey) {
    // Stamp first, content second: a rewrite in between leaves an older threshold (less
    // trust) and a stale key (read again next time), never more trust than the content earns.
    const text = stats ? await readFile(file, 'utf8').catch(() => undefined) : undefined;
    image = {
      entries: text === undefined ? new Map() : parseCache(text),
      trustedBeforeNs: stats ? stats.mtimeNs : 0n,
      fileKey,
      dirty: false,
    };
    images.set(file, image);
  }
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
    set(path, stamp, id) {
      const known = image.entries.get(path);
      const key = stampKey(stamp);
      // Re-confirming a racy entry still needs a save: the save's later mtime makes it trusted.
      if (known?.key === key && known.id === id && stamp.mtimeNs < image.trustedBeforeNs) return;
      image.entries.set(path, { key, id, stamp });
      image.dirty = true;
    },
    async save() {
      if (!image.dirty) return;
      image.dirty = false;
      const out: CacheFile = { version: 2, entries: [] };
      for (const [path, entry] of image.entries) out.entries.push(path, entry.key, entry.id);
      let written: BigIntStats;
      try {
        written = await writeFileDurably(file, JSON.stringify(out), { sync: false });
      } catch (error) {
        image.dirty = true;
        throw error;
      }
      // The threshold is the mtime of the file this process wrote, even if another process
      // has replaced it since; the image stands for the file on disk only while it is ours.
      image.trustedBeforeNs = written.mtimeNs;
      const now = await lstat(file, { bigint: true }).catch(() => undefined);
      image.fileKey =
        now && now.ino === written.ino && now.dev === written.dev ? fileKeyOf(now) : undefined;
    },
  };
}

/** A cache that remembers nothing (for callers without private state). */
export function emptyStatCache(): StatCache {
  return { get: () => undefined, has: () => false, set: () => {}, save: async () => {} };
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
