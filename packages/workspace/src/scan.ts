import { isUtf8 } from 'node:buffer';
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  unlinkSync,
} from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { sortByUtf8 } from '@slivingdoc/envelope';
import { checkNotebookPath, checkSegment, foldKey } from '@slivingdoc/policy';
import { ConcurrentEditError, type ScanProblem, type ScanReason } from './errors';
import type { ChangeMonitor, MonitoredEntry, MonitorPass } from './monitor';
import { concurrentEdit, readSecurely } from './read-file';
import { SecureDir } from './secure-dir';
import { type FileStamp, sameStamp, stampOf } from './stamp';
import type { StatCache } from './stat-cache';
import { isTempName } from './temp-names';

/** A file larger than this is not notebook state (contract §4). */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** An absolute path (L + `/` + notebook path) longer than this is PATH_TOO_DEEP (contract §4). */
export const MAX_ABSOLUTE_PATH_BYTES = 4095;

/** One valid notebook file found by {@link scanNotebook}. */
export interface ScannedFile {
  /** The notebook path. */
  path: string;
  /** Its `lstat` stamp when scanned. */
  stamp: FileStamp;
  /** The id the caller stored in the stat cache for this exact stamp, if any. */
  cachedId?: string;
  /**
   * The content. Files read during the scan return those bytes; cache hits are read now,
   * without following links, and throw {@link ConcurrentEditError} if the stamp changed.
   */
  read(): Promise<Uint8Array>;
}

/** Every valid file and every entry that is not notebook state, sorted by UTF-8 bytes. */
export interface ScanResult {
  files: Map<string, ScannedFile>;
  problems: ScanProblem[];
}

/**
 * Scans the notebook directory `dir` (contract §4): never follows a link, reads only regular
 * files, and reports in one call every entry that is not notebook state (symlink, special
 * file, invalid or non-UTF-8 name, case-fold collision, content not UTF-8 or with U+0000,
 * over 64 MiB, path too long or too deep). Stale `.slivingdoc-<uuid>.tmp` files are removed
 * and never reported. Empty directories are ignored. A file whose stamp hits `opts.cache`
 * is not read. Throws `ENOENT` etc. from the file system as is.
 *
 * With `opts.monitor` (a {@link ChangeMonitor} of `dir`, in a long-lived process), a directory
 * that raised no event since the previous scan is not listed again: its previous entries are
 * reused, files with a trusted stat-cache entry without an `lstat` (except hard-linked ones).
 */
export async function scanNotebook(
  dir: string,
  opts: { cache: StatCache; monitor?: ChangeMonitor },
): Promise<ScanResult> {
  const pass = opts.monitor?.root === dir ? await opts.monitor.begin(dir) : undefined;
  const scan = new Scan(dir, opts.cache, pass);
  let ok = false;
  try {
    const root = await SecureDir.open(dir);
    try {
      await scan.directory(root, '');
      ok = true;
    } finally {
      await root.close();
    }
  } finally {
    pass?.end(ok);
  }
  return scan.result();
}

/** A stat-cache hit: not read by the scan; read later through the descriptors of L. */
class CachedFile implements ScannedFile {
  readonly #root: string;

  constructor(
    root: string,
    readonly path: string,
    readonly stamp: FileStamp,
    readonly cachedId: string,
  ) {
    this.#root = root;
  }

  read(): Promise<Uint8Array> {
    return readSecurely(this.#root, this.path, this.stamp);
  }
}

/** A file the scan read: its bytes match its stamp. */
class ReadFile implements ScannedFile {
  readonly #content: Uint8Array;

  constructor(
    readonly path: string,
    readonly stamp: FileStamp,
    content: Uint8Array,
  ) {
    this.#content = content;
  }

  read(): Promise<Uint8Array> {
    return Promise.resolve(this.#content);
  }
}

class Scan {
  private readonly files: ScannedFile[] = [];
  private readonly problems: ScanProblem[] = [];
  // Every valid file and directory path; the first such path per case-fold key among those
  // that are not their own key; every path that collides.
  private readonly remembered: string[] = [];
  private readonly pathByKey = new Map<string, string>();
  private readonly colliding = new Set<string>();
  private readonly rootBytes: number;

  constructor(
    private readonly root: string,
    private readonly cache: StatCache,
    private readonly monitor: MonitorPass | undefined,
  ) {
    this.rootBytes = Buffer.byteLength(root, 'utf8');
  }

  // Within one directory the calls are synchronous: for thousands of small files, Node's
  // asynchronous fs (one thread-pool round trip per call) costs several times more than
  // the system calls themselves. The scan yields to the event loop after each directory,
  // so other work waits at most for one directory's worth of calls.
  async directory(dir: SecureDir, prefix: string): Promise<void> {
    const subdirs: string[] = [];
    const visit = this.monitor?.enter(dir, prefix);
    const found = visit?.found;
    if (visit?.reuse) {
      for (const known of visit.reuse) {
        const sub = this.reuse(dir, prefix, known, found);
        if (sub !== undefined) subdirs.push(sub);
      }
    } else {
      const { names, utf8 } = listNames(dir);
      names.forEach((name, i) => {
        const sub = this.entry(dir, prefix, name, utf8?.[i] ?? true, found);
        if (sub !== undefined) subdirs.push(sub);
      });
    }
    if (found) this.monitor?.found(prefix, found);
    await yieldToEventLoop();
    // Sequential descent keeps one open descriptor per level.
    for (const name of sortByUtf8(subdirs, (subdir) => subdir)) {
      const child = await dir.openChild(name).catch(concurrentEdit(prefix + name));
      try {
        await this.directory(child, `${prefix}${name}/`);
      } finally {
        await child.close();
      }
    }
  }

  /**
   * What a clean directory's previous listing says about one entry, taken as is, except a file
   * whose stamp is not a trusted cache hit or that has other links (a write through a name in
   * another directory raises no event here): that one is examined again like a listed entry.
   */
  private reuse(
    dir: SecureDir,
    prefix: string,
    known: MonitoredEntry,
    found: MonitoredEntry[] | undefined,
  ): string | undefined {
    const path = prefix + known.name;
    if (known.kind === 'file') {
      const cachedId = known.nlink === 1 ? this.cache.get(path, known.stamp) : undefined;
      if (cachedId === undefined) return this.entry(dir, prefix, known.name, true, found);
      this.remember(path);
      this.files.push(new CachedFile(this.root, path, known.stamp, cachedId));
    } else if (known.kind === 'dir') {
      this.remember(path);
    } else {
      this.problem(path, known.reason);
    }
    found?.push(known);
    return known.kind === 'dir' ? known.name : undefined;
  }

  /**
   * Classifies one entry; returns its name when it is a directory to descend into. What it
   * found goes into `found` for the change monitor.
   */
  private entry(
    dir: SecureDir,
    prefix: string,
    name: string,
    utf8: boolean,
    found: MonitoredEntry[] | undefined,
  ): string | undefined {
    const path = prefix + name;
    const flag = (reason: ScanReason) => {
      found?.push({ kind: 'problem', name, reason });
      return this.problem(path, reason);
    };
    if (!utf8) return flag('INVALID_NAME');
    if (isTempName(name)) {
      this.removeStaleTemp(dir, name);
      return undefined;
    }
    const hit = this.unchangedSinceCached(path);
    if (hit) {
      found?.push({ kind: 'file', name, stamp: hit.stamp, nlink: hit.nlink });
      return undefined;
    }
    const stats = ifPresent(() => lstatSync(dir.child(name), { bigint: true }));
    if (!stats) return undefined;
    if (stats.isSymbolicLink()) return flag('SYMLINK');
    if (stats.isDirectory()) {
      const reason = checkSegment(name);
      if (reason) return flag(reason);
      this.remember(path);
      found?.push({ kind: 'dir', name });
      return name;
    }
    if (!stats.isFile()) return flag('SPECIAL_FILE');
    const reason = this.pathReason(path);
    if (reason) return flag(reason);
    const outcome = this.file(dir, name, path, stats);
    if (outcome === undefined) return undefined;
    if (typeof outcome === 'string') return flag(outcome);
    found?.push({ kind: 'file', name, stamp: outcome, nlink: Number(stats.nlink) });
    return undefined;
  }

  /**
   * The warm path: one `lstat` of `<L>/<path>` (cheaper than through `/proc/self/fd`, whose
   * lookup resolves two magic links first) used only to recognise a stat-cache hit. Nothing is
   * read, opened or classified from it: any other outcome (miss, error, not a regular file)
   * falls back to the descriptor-relative `lstat`. A component swapped for a link can make it
   * describe a file outside L, but a hit needs the same (dev, ino, size, mtime, ctime) that a
   * read of `path` inside L recorded, i.e. that very file, unchanged, whose id is the one
   * stored; its `read()` still goes through the descriptors and refuses a changed path.
   */
  private unchangedSinceCached(path: string): { stamp: FileStamp; nlink: number } | undefined {
    if (!this.cache.has(path) || this.pathReason(path)) return undefined;
    let stats: BigIntStats | undefined;
    try {
      stats = lstatSync(`${this.root}/${path}`, { bigint: true, throwIfNoEntry: false });
    } catch {
      return undefined;
    }
    if (!stats?.isFile()) return undefined;
    const stamp = stampOf(stats);
    const cachedId = this.cache.get(path, stamp);
    if (cachedId === undefined) return undefined;
    this.remember(path);
    this.files.push(new CachedFile(this.root, path, stamp, cachedId));
    return { stamp, nlink: Number(stats.nlink) };
  }

  private pathReason(path: string): ScanReason | undefined {
    const facts = factsOf(path);
    if (facts.reason) return facts.reason;
    if (this.rootBytes + 1 + facts.bytes > MAX_ABSOLUTE_PATH_BYTES) {
      return 'PATH_TOO_DEEP';
    }
    return undefined;
  }

  /** Adds one regular file: its stamp, or why it is not notebook state, or `undefined` if gone. */
  private file(
    dir: SecureDir,
    name: string,
    path: string,
    stats: BigIntStats,
  ): FileStamp | ScanReason | undefined {
    if (stats.size > BigInt(MAX_FILE_BYTES)) return 'FILE_TOO_LARGE';
    this.remember(path);
    const stamp = stampOf(stats);
    const cachedId = this.cache.get(path, stamp);
    if (cachedId !== undefined) {
      this.files.push(new CachedFile(this.root, path, stamp, cachedId));
      return stamp;
    }
    const read = readStableContent(dir, name, path, stats.size);
    if (!read) return undefined;
    if (read.kind === 'problem') return read.reason;
    this.files.push(new ReadFile(path, read.stamp, read.content));
    return read.stamp;
  }

  private removeStaleTemp(dir: SecureDir, name: string): void {
    const stats = ifPresent(() => lstatSync(dir.child(name)));
    if (stats?.isFile()) ifPresent(() => unlinkSync(dir.child(name)));
  }

  // Two paths collide when they share a case-fold key. Two distinct paths that are each their
  // own key cannot, so only the others (capitals, ß, …) go into a map here; whether one of them
  // has the key of a path that is its own key is checked once, in result().
  private remember(path: string): void {
    const key = foldKeyOf(path);
    this.remembered.push(path);
    if (key === path) return;
    const other = this.pathByKey.get(key);
    if (other === undefined) {
      this.pathByKey.set(key, path);
      return;
    }
    this.colliding.add(other);
    this.colliding.add(path);
  }

  private problem(path: string, reason: ScanReason): undefined {
    this.problems.push({ path, reason, ranges: [] });
    return undefined;
  }

  result(): ScanResult {
    if (this.pathByKey.size > 0) {
      for (const path of this.remembered) {
        const other = foldKeyOf(path) === path ? this.pathByKey.get(path) : undefined;
        if (other === undefined) continue;
        this.colliding.add(other);
        this.colliding.add(path);
      }
    }
    for (const path of this.colliding) this.problem(path, 'NAME_COLLISION');
    // A path has one problem, except a colliding name that also breaks another rule.
    const problems = sortByUtf8(
      this.problems,
      (problem) => `${problem.path}\u0000${problem.reason}`,
    );
    const valid = this.files.filter((file) => !this.colliding.has(file.path));
    const files = new Map(sortByUtf8(valid, (file) => file.path).map((file) => [file.path, file]));
    return { files, problems };
  }
}

/** What the path rules say about one notebook path; all depend on the path string only. */
interface PathFacts {
  reason: ScanReason | undefined;
  /** Its length in UTF-8 bytes. */
  bytes: number;
  /** Computed on first use (only valid paths are folded). */
  key?: string;
}

/** Above this many remembered paths the memo starts over (a bound on its memory). */
const PATH_MEMO_LIMIT = 100_000;
const pathMemo = new Map<string, PathFacts>();

/**
 * The path check, byte length and case-folding key of `path`, memoised across scans: every scan of an
 * N-file notebook asks both for every path, and full Unicode folding plus the segment rules
 * cost more than the file's `lstat` itself. Pure functions of the string, so a memo is exact.
 */
function factsOf(path: string): PathFacts {
  const known = pathMemo.get(path);
  if (known) return known;
  if (pathMemo.size >= PATH_MEMO_LIMIT) pathMemo.clear();
  const facts: PathFacts = {
    reason: checkNotebookPath(path),
    bytes: Buffer.byteLength(path, 'utf8'),
  };
  pathMemo.set(path, facts);
  return facts;
}

/** The case-folding key of `path`, computed once per remembered path. */
function foldKeyOf(path: string): string {
  const facts = factsOf(path);
  facts.key ??= foldKey(path);
  return facts.key;
}

type ReadOutcome =
  | { kind: 'content'; content: Buffer; stamp: FileStamp }
  | { kind: 'problem'; reason: ScanReason };

// A file edited while being read is read again, so the content always matches its stamp
// (the stat cache would otherwise pin stale content to a fresh stamp).
function readStableContent(
  dir: SecureDir,
  name: string,
  path: string,
  expectedSize: bigint,
): ReadOutcome | undefined {
  let size = Number(expectedSize);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    let fd: number;
    try {
      // O_NONBLOCK: a FIFO swapped in after the lstat must not block the scan.
      fd = openSync(
        dir.child(name),
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') return { kind: 'problem', reason: 'SYMLINK' };
      if (code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const before = fstatSync(fd, { bigint: true });
      if (!before.isFile()) return { kind: 'problem', reason: 'SPECIAL_FILE' };
      if (before.size > BigInt(MAX_FILE_BYTES))
        return { kind: 'problem', reason: 'FILE_TOO_LARGE' };
      size = Number(before.size);
      // One byte more than the size: a read that fills it shows the file grew meanwhile.
      const buffer = Buffer.allocUnsafe(size + 1);
      let length = 0;
      for (;;) {
        const read = readSync(fd, buffer, length, buffer.length - length, null);
        if (read === 0 || length + read === buffer.length) {
          length += read;
          break;
        }
        length += read;
      }
      const stamp = stampOf(fstatSync(fd, { bigint: true }));
      if (length !== size || !sameStamp(stamp, stampOf(before))) continue;
      const content = buffer.subarray(0, length);
      if (!isUtf8(content)) return { kind: 'problem', reason: 'NOT_UTF8' };
      if (content.includes(0)) return { kind: 'problem', reason: 'CONTAINS_NUL' };
      return { kind: 'content', content, stamp };
    } finally {
      closeSync(fd);
    }
  }
  throw new ConcurrentEditError([path]);
}

/**
 * The names in `dir` and, when some may not be UTF-8, whether each one is. Listed as strings
 * first (no Buffer per name); only a directory where a name decoded to U+FFFD, which may stand
 * for bytes that are not UTF-8, is listed again as bytes, and that second listing is used.
 */
function listNames(dir: SecureDir): { names: string[]; utf8?: boolean[] } {
  const names = readdirSync(dir.self);
  if (!names.some((name) => name.includes('\uFFFD'))) return { names };
  const raw = readdirSync(dir.self, { encoding: 'buffer' });
  return {
    names: raw.map((bytes) => bytes.toString('utf8')),
    utf8: raw.map((bytes) => isUtf8(bytes)),
  };
}

/** Runs a file system call; `undefined` when the entry vanished meanwhile. */
function ifPresent<T>(call: () => T): T | undefined {
  try {
    return call();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
