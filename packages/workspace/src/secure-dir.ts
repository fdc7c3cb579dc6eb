import { closeSync, existsSync, fstatSync, fsync, lstatSync, openSync } from 'node:fs';
import { constants } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const fsyncAsync = promisify(fsync);

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

// Node 20 has no openat(2). On Linux, /proc/self/fd/<fd>/<name> resolves <name> inside the
// directory the descriptor holds, whatever has been renamed or swapped above it since, so
// every operation below touches exactly one name in an already opened directory and cannot
// be redirected by a link put in place of a parent (contract §4). Elsewhere, names are joined to
// the directory's path and each opened directory is compared (dev, ino) with the lstat taken
// just before; the window between that lstat and a later operation on a child name remains
// (a documented residual risk on non-Linux systems).
const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

/**
 * A directory opened without following links; children are addressed through it. Held as a raw
 * descriptor opened and closed with synchronous calls: a scan opens every directory of the
 * notebook, and a `FileHandle` costs two thread-pool round trips (each queued behind
 * concurrent fsyncs) where `open(2)`/`close(2)` of a directory take microseconds. Every
 * opener closes in a `finally`.
 */
export class SecureDir {
  private constructor(
    private readonly fd: number,
    private readonly base: string,
  ) {}

  private closed = false;

  /** Opens `path` itself as a directory, refusing a link in its final component. */
  static async open(path: string): Promise<SecureDir> {
    return SecureDir.openChecked(path, path);
  }

  private static async openChecked(path: string, plainPath: string): Promise<SecureDir> {
    const before = PROC_FD ? undefined : lstatSync(path, { bigint: true });
    const fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    try {
      if (before) {
        const after = fstatSync(fd, { bigint: true });
        if (after.ino !== before.ino || after.dev !== before.dev) {
          throw Object.assign(new Error('directory replaced while opening'), { code: 'ELOOP' });
        }
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return new SecureDir(fd, PROC_FD ? `/proc/self/fd/${fd}` : plainPath);
  }

  /** The path that names this directory itself (for readdir, fsync-free listing). */
  get self(): string {
    return this.base;
  }

  /** The path of one child name (a single segment) inside this directory. */
  child(name: string): string {
    return join(this.base, name);
  }

  /** Opens the child directory `name`; fails with ELOOP/ENOTDIR if it is a link or a file. */
  async openChild(name: string): Promise<SecureDir> {
    return SecureDir.openChecked(this.child(name), this.child(name));
  }

  /** The directory's device and inode, from its descriptor. */
  stat(): { dev: bigint; ino: bigint } {
    const { dev, ino } = fstatSync(this.fd, { bigint: true });
    return { dev, ino };
  }

  /** Flushes the directory entry changes (renames, unlinks) to disk. */
  async sync(): Promise<void> {
    await fsyncAsync(this.fd);
  }

  /** Closes the descriptor; a second call does nothing (the number may belong to another file by then). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}
