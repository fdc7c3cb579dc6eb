import { type FSWatcher, readFileSync, statfsSync, watch } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ScanReason } from './errors';
import type { SecureDir } from './secure-dir';
import type { FileStamp } from './stamp';

/**
 * What one listing of a directory found, per name, so a later scan can reuse it while the
 * directory raised no event: a file with its stamp and link count, a directory to descend into,
 * or an entry that is not notebook state.
 */
export type MonitoredEntry =
  | { kind: 'file'; name: string; stamp: FileStamp; nlink: number }
  | { kind: 'dir'; name: string }
  | { kind: 'problem'; name: string; reason: ScanReason };

/** Options of {@link ChangeMonitor}. */
export interface ChangeMonitorOptions {
  /** Above this many directories in L the monitor gives up and every scan is a full one. */
  maxDirectories?: number;
}

const DEFAULT_MAX_DIRECTORIES = 4096;

// `statfs` magic numbers of local file systems whose inotify events reflect every change made
// through the kernel. Network and FUSE file systems (NFS, CIFS, FUSE, 9p, …) can change without
// any local event, and overlay/union mounts can change underneath: never trusted.
const LOCAL_FILE_SYSTEMS = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0xf2f52010, // f2fs
  0x3153464a, // jfs
  0x52654973, // reiserfs
]);

/** Events delivered in one event-loop turn from which an inotify queue overflow is assumed. */
function overflowBurst(): number {
  try {
    const max = Number.parseInt(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'), 10);
    if (Number.isSafeInteger(max) && max > 1) return Math.floor(max / 2);
  } catch {
    // unreadable: the kernel default below
  }
  return 8192;
}

/** One watched directory of L. */
class WatchedDir {
  /** An event arrived since the watch was armed. */
  dirty = false;
  /** What the last listing found; `undefined` until one completed under this watch. */
  entries: MonitoredEntry[] | undefined;

  constructor(
    readonly dev: bigint,
    readonly ino: bigint,
    readonly watcher: FSWatcher,
  ) {}
}

/**
 * Watches every directory of one notebook directory L (git's fsmonitor idea, with Node's own
 * non-recursive `fs.watch`, i.e. inotify) so that a warm {@link scanNotebook} lists and
 * `lstat`s only the directories where something happened since the previous scan and reuses
 * the previous outcome for the others. It lives as long as the process that scans L
 * repeatedly; until it is trusted (first scan, a lost event, a failed watch, an unknown file
 * system, too many directories) a scan is the full one and re-arms it.
 *
 * Linux only (elsewhere {@link scanNotebook} ignores it). Its watchers never keep the process
 * alive; {@link ChangeMonitor.close} releases them.
 */
export class ChangeMonitor {
  #dirs = new Map<string, WatchedDir>();
  #trusted = false;
  #closed = false;
  #active = false;
  #burst = 0;
  #burstResetQueued = false;
  readonly #maxDirectories: number;
  readonly #overflowBurst = overflowBurst();

  /** @param root L, exactly as it is passed to {@link scanNotebook}. */
  constructor(
    readonly root: string,
    options: ChangeMonitorOptions = {},
  ) {
    this.#maxDirectories = options.maxDirectories ?? DEFAULT_MAX_DIRECTORIES;
  }

  /** True when the next scan may reuse what the previous one found in clean directories. */
  get trusted(): boolean {
    return this.#trusted && !this.#closed;
  }

  /** Forgets everything watched so far: the next scan is a full one (and re-arms). */
  markUntrusted(): void {
    this.#trusted = false;
  }

  /** Stops every watcher; later scans with this monitor are full scans. */
  close(): void {
    this.#closed = true;
    this.#trusted = false;
    this.#release(this.#dirs);
  }

  /**
   * Starts one scan of L (internal to {@link scanNotebook}). `undefined`: scan without the
   * monitor (closed, not Linux, another scan in progress, or L is not on a local file system).
   */
  async begin(self: string): Promise<MonitorPass | undefined> {
    if (this.#closed || this.#active || process.platform !== 'linux') return undefined;
    if (!onLocalFileSystem(self)) {
      this.#trusted = false;
      this.#release(this.#dirs);
      return undefined;
    }
    this.#active = true;
    if (this.#trusted) {
      // The fence: inotify queues an event inside the writer's system call, and libuv reads
      // the queue in the poll phase. Two check-phase turns put a poll phase in between, so
      // every change made before this call has been delivered (and marked its directory).
      await nextTurn();
      await nextTurn();
    }
    const reuse = this.#trusted;
    if (!reuse) this.#release(this.#dirs);
    this.#trusted = true;
    return new MonitorPass(this, reuse);
  }

  /** @internal The watched directory for `prefix` when its entries may be reused as they are. */
  reusable(prefix: string, dev: bigint, ino: bigint): WatchedDir | undefined {
    const known = this.#dirs.get(prefix);
    if (!known || known.dirty || known.entries === undefined) return undefined;
    return known.dev === dev && known.ino === ino ? known : undefined;
  }

  /** @internal Arms a watch on `self` (a directory descriptor's path) before it is listed. */
  arm(self: string, dev: bigint, ino: bigint): WatchedDir {
    const watcher = watch(self, { persistent: false });
    const dir = new WatchedDir(dev, ino, watcher);
    watcher.on('change', () => this.#event(dir));
    watcher.on('error', () => this.markUntrusted());
    watcher.on('close', () => this.markUntrusted());
    watcher.unref();
    return dir;
  }

  /** @internal Ends a scan: `next` replaces the watched set; the others are unwatched. */
  end(next: Map<string, WatchedDir>, ok: boolean): void {
    this.#active = false;
    const previous = this.#dirs;
    this.#dirs = new Map();
    const keep = new Set(ok && !this.#closed ? next.values() : []);
    for (const dir of [...previous.values(), ...next.values()]) {
      if (!keep.has(dir)) closeWatcher(dir.watcher);
    }
    if (keep.size === 0) {
      this.#trusted = false;
      return;
    }
    this.#dirs = next;
  }

  /** Above this many directories in L, scans are full ones. */
  get maxDirectories(): number {
    return this.#maxDirectories;
  }

  #event(dir: WatchedDir): void {
    dir.dirty = true;
    this.#burst += 1;
    // libuv drops inotify's IN_Q_OVERFLOW (its watch descriptor is -1), so an overflow is
    // assumed when one turn delivers a large share of the queue's capacity.
    if (this.#burst >= this.#overflowBurst) this.markUntrusted();
    if (!this.#burstResetQueued) {
      this.#burstResetQueued = true;
      setImmediate(() => {
        this.#burst = 0;
        this.#burstResetQueued = false;
      }).unref();
    }
  }

  #release(dirs: Map<string, WatchedDir>): void {
    for (const dir of dirs.values()) closeWatcher(dir.watcher);
    dirs.clear();
  }
}

/** False too when `statfs` fails: the plain scan then reports the error as it always did. */
function onLocalFileSystem(path: string): boolean {
  try {
    return LOCAL_FILE_SYSTEMS.has(Number(statfsSync(path).type));
  } catch {
    return false;
  }
}

function closeWatcher(watcher: FSWatcher): void {
  // Our own close is not a lost watch: its listeners go first.
  watcher.removeAllListeners();
  watcher.on('error', () => {});
  watcher.close();
}

/** What a scan does with one directory it entered. */
export interface MonitorVisit {
  /** The previous listing, to reuse instead of listing again. */
  reuse?: readonly MonitoredEntry[];
  /** Fill with what this scan finds in the directory (reused or listed). */
  found?: MonitoredEntry[];
}

/** The monitor's side of one scan; internal to {@link scanNotebook}. */
export class MonitorPass {
  readonly #next = new Map<string, WatchedDir>();
  #failed = false;
  /** L's device: a directory on another one is a mount point, whose type is checked too. */
  #rootDev: bigint | undefined;

  constructor(
    private readonly monitor: ChangeMonitor,
    private readonly reuse: boolean,
  ) {}

  /** Called with each opened directory before it is listed. */
  enter(dir: SecureDir, prefix: string): MonitorVisit {
    if (this.#failed) return {};
    const { dev, ino } = dir.stat();
    this.#rootDev ??= dev;
    if (dev !== this.#rootDev && !onLocalFileSystem(dir.self)) return this.#fail();
    const known = this.reuse ? this.monitor.reusable(prefix, dev, ino) : undefined;
    if (known) {
      this.#next.set(prefix, known);
      return { reuse: known.entries, found: [] };
    }
    if (this.#next.size >= this.monitor.maxDirectories) return this.#fail();
    let watched: WatchedDir;
    try {
      // Armed before the listing: a change made after it raises an event.
      watched = this.monitor.arm(dir.self, dev, ino);
    } catch {
      // ENOSPC (fs.inotify.max_user_watches), EACCES, …: full scans until a later one succeeds.
      return this.#fail();
    }
    this.#next.set(prefix, watched);
    return { found: [] };
  }

  /** Records what the scan found in the directory `prefix` it entered. */
  found(prefix: string, entries: MonitoredEntry[]): void {
    const watched = this.#next.get(prefix);
    if (watched && !this.#failed) watched.entries = entries;
  }

  /** Ends the scan; `ok` false when it threw (its partial findings are dropped). */
  end(ok: boolean): void {
    this.monitor.end(this.#next, ok && !this.#failed);
  }

  #fail(): MonitorVisit {
    this.#failed = true;
    this.monitor.markUntrusted();
    return {};
  }
}
