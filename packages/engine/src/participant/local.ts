/**
 * Scanning L into a flattened tree. Blob ids come from the stat cache (the opaque id the engine
 * stores per file stamp is the blob id); only files whose stamp changed are read, and their
 * blobs are written to P so merges and publications can use them.
 */
import type { FileIssue } from '@slivingdoc/envelope';
import type { TreeEntries } from '@slivingdoc/merge';
import { type ScannedFile, scanNotebook } from '@slivingdoc/workspace';
import pLimit from 'p-limit';
import type { DirContext } from '../context';
import { FAILPOINT, failpoint } from '../failpoints';
import { reportProgress } from '../progress';

/** L as scanned: the files with their stamps, their blob ids, and what is not notebook state. */
export interface LocalSnapshot {
  files: Map<string, ScannedFile>;
  entries: TreeEntries;
  problems: FileIssue[];
}

const READ_CONCURRENCY = 16;

/** Directories whose stat cache this process has checked against P's objects. */
const checkedCaches = new WeakSet<DirContext>();

/** Scans L; never fails on a problem file (the caller decides), only on an I/O failure. */
export async function scanLocal(ctx: DirContext): Promise<LocalSnapshot> {
  const scan = await scanNotebook(ctx.dir, { cache: ctx.priv.statCache, monitor: ctx.monitor });
  const entries: TreeEntries = new Map();
  const unread: ScannedFile[] = [];
  // A process's first scan checks that P still holds every cached blob: a cache saved by an
  // earlier process may name objects P no longer has (a damaged or partly rebuilt P). Such a
  // file is read again; within a process P's objects do not vanish.
  const check = !checkedCaches.has(ctx);
  for (const file of scan.files.values()) {
    const cached = file.cachedId;
    if (cached !== undefined && (!check || (await ctx.db.has(cached))))
      entries.set(file.path, cached);
    else unread.push(file);
  }
  if (unread.length > 0) {
    const limit = pLimit(READ_CONCURRENCY);
    let read = 0;
    const contents = await Promise.all(
      unread.map((file) =>
        limit(async () => {
          const content = await file.read();
          reportProgress('scan', ++read, unread.length);
          return content;
        }),
      ),
    );
    // One call: many new files (a first scan) become one pack instead of one object each.
    const oids = await ctx.db.writeBlobs(contents);
    unread.forEach((file, i) => {
      const oid = oids[i] as string;
      ctx.priv.statCache.set(file.path, file.stamp, oid);
      entries.set(file.path, oid);
    });
    await ctx.priv.statCache.save();
  }
  checkedCaches.add(ctx);
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterScan);
  return { files: scan.files, entries, problems: scan.problems };
}

/** Paths whose blob differs between two trees (added, deleted or modified). */
export function changedPaths(before: TreeEntries, after: TreeEntries): string[] {
  const changed: string[] = [];
  for (const [path, oid] of after) if (before.get(path) !== oid) changed.push(path);
  for (const path of before.keys()) if (!after.has(path)) changed.push(path);
  return changed;
}
