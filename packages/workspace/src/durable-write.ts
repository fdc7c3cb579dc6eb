import { randomUUID } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { type FileHandle, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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
  const written = await fillNewFile(await open(temp, 'wx', 0o600), temp, content, opts);
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  if (opts.sync) await syncDirectory(dir);
  return written;
}

/**
 * Writes `content` into the file just created exclusively at `path` through `handle`, fsyncs
 * it when `sync` is set, and closes it. Returns its `fstat` taken before any rename (its inode
 * and mtime; a rename or link may move its ctime). On a failure it closes and removes the file
 * and rethrows, so no temp file is left behind. One sequence for every temp file the
 * workspace writes (P's files here, L's staged files in `write.ts`).
 */
export async function fillNewFile(
  handle: FileHandle,
  path: string,
  content: string | Uint8Array,
  opts: { sync: boolean },
): Promise<BigIntStats> {
  let written: BigIntStats;
  try {
    await handle.writeFile(content);
    if (opts.sync) await handle.sync();
    written = await handle.stat({ bigint: true });
  } catch (error) {
    await handle.close();
    await unlink(path).catch(() => {});
    throw error;
  }
  await handle.close();
  return written;
}

/** fsyncs a directory so a rename or unlink in it is durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
