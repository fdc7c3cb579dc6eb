import { randomUUID } from 'node:crypto';
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  fsync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';

const fsyncAsync = promisify(fsync);
const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/**
 * Replaces `file` atomically with `content`: a new 0600 temp file beside it, written and
 * (with `sync`) fsynced, renamed over the target, then the directory fsynced. A crash leaves
 * the old or the new content, never a torn file. For files in P only. Returns the new file's
 * `fstat` taken before the rename (its inode and mtime; the rename may move its ctime).
 */
export async function writeFileDurably(
  file: string,
  content: string | Uint8Array,
  opts: { sync: boolean },
): Promise<BigIntStats> {
  const dir = dirname(file);
  const temp = join(dir, `.${basename(file)}.${randomUUID()}.tmp`);
  const written = await fillNewFile(createExclusive(temp, 0o600), temp, content, opts);
  try {
    renameSync(temp, file);
  } catch (error) {
    removeQuietly(temp);
    throw error;
  }
  if (opts.sync) await syncDirectory(dir);
  return written;
}

/**
 * Creates `path` exclusively for writing (never following a link), returning its descriptor.
 * Synchronous, like the writes that follow (see {@link fillNewFile}).
 */
export function createExclusive(path: string, mode: number): number {
  return openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

/**
 * Writes `content` into the file just created exclusively at `path` (descriptor `fd`), fsyncs
 * it when `sync` is set, and closes it. Returns its `fstat` taken before any rename (its inode
 * and mtime; a rename or link may move its ctime). On a failure it closes and removes the file
 * and rethrows, so no temp file is left behind. One sequence for every temp file the
 * workspace writes (P's files here, L's staged files in `write.ts`). The write, stat and close
 * are synchronous: into the page cache they take microseconds, while each asynchronous call
 * waits for a thread-pool slot that concurrent fsyncs may hold for milliseconds (a group
 * member writes every other member's file at once). Only the fsync, which waits for the
 * disk, goes to the thread pool, so concurrent fsyncs share journal commits.
 */
export async function fillNewFile(
  fd: number,
  path: string,
  content: string | Uint8Array,
  opts: { sync: boolean },
): Promise<BigIntStats> {
  let written: BigIntStats;
  try {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    for (let at = 0; at < bytes.byteLength; ) at += writeSync(fd, bytes, at);
    if (opts.sync) await fsyncAsync(fd);
    written = fstatSync(fd, { bigint: true });
  } catch (error) {
    closeSync(fd);
    removeQuietly(path);
    throw error;
  }
  closeSync(fd);
  return written;
}

/** fsyncs a directory so a rename or unlink in it is durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}
