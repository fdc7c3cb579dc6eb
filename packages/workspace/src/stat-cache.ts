import { lstat, readFile } from 'node:fs/promises';
import { writeFileDurably } from './durable-write';
import type { FileStamp } from './stamp';

/**
 * Remembers, per notebook path and stamp, an opaque id the engine computed from the content
 * (a blob oid), so an unchanged file is not read again (SPEC §4/§9 "stat cache").
 */
export interface StatCache {
  /** The id stored for `path` when its stamp is unchanged and trustworthy, else `undefined`. */
  get(path: string, stamp: FileStamp): string | undefined;
  set(path: string, stamp: FileStamp, id: string): void;
  /** Persists the cache (temp file + rename, 0600). */
  save(): Promise<void>;
}

// An entry is [stamp key, id]; the stamp is kept as one string so loading a large cache
// creates no BigInt per entry and a lookup is one string comparison.
type Entry = [stampKey: string, id: string];

interface CacheFile {
  version: 1;
  entries: Record<string, Entry>;
}

function stampKey(stamp: FileStamp): string {
  return `${stamp.size}:${stamp.mtimeNs}:${stamp.ctimeNs}:${stamp.ino}:${stamp.dev}`;
}

/**
 * Loads the cache at `file` (absent or unreadable content = empty: it is only a cache).
 *
 * "Racily clean" files (git's term): a file written in the same timestamp tick as the cache
 * could change again without changing its stamp. Like git's index, an entry is trusted only
 * when the file's mtime is older than the cache file's own mtime (same clock, same
 * granularity); a racy entry is simply re-read next time.
 */
export async function loadStatCache(file: string): Promise<StatCache> {
  let trustedBeforeNs = await cacheMtime(file);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  const entries = new Map<string, Entry>(
    text === undefined ? [] : Object.entries(parseCache(text)),
  );
  return {
    get(path, stamp) {
      const entry = entries.get(path);
      if (!entry || stamp.mtimeNs >= trustedBeforeNs || entry[0] !== stampKey(stamp)) {
        return undefined;
      }
      return entry[1];
    },
    set(path, stamp, id) {
      entries.set(path, [stampKey(stamp), id]);
    },
    async save() {
      const out: CacheFile = { version: 1, entries: Object.fromEntries(entries) };
      await writeFileDurably(file, JSON.stringify(out), { sync: false });
      trustedBeforeNs = await cacheMtime(file);
    },
  };
}

/** A cache that remembers nothing (for callers without private state). */
export function emptyStatCache(): StatCache {
  return { get: () => undefined, set: () => {}, save: async () => {} };
}

async function cacheMtime(file: string): Promise<bigint> {
  const stats = await lstat(file, { bigint: true }).catch(() => undefined);
  return stats ? stats.mtimeNs : 0n;
}

function parseCache(text: string): Record<string, Entry> {
  try {
    const parsed = JSON.parse(text) as Partial<CacheFile>;
    if (parsed.version !== 1 || typeof parsed.entries !== 'object' || !parsed.entries) return {};
    return Object.fromEntries(Object.entries(parsed.entries).filter(([, e]) => isEntry(e)));
  } catch {
    return {};
  }
}

function isEntry(value: unknown): value is Entry {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string'
  );
}
