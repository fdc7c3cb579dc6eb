/**
 * merge(A, L, R) with the policy's case folding, the one way every module merges trees, and the
 * marker check (contract §6) of the files a merge or an edit leaves.
 */
import { compareUtf8, type FileIssue } from '@slivingdoc/envelope';
import {
  findMarkerBlocks,
  type MergeAdditions,
  type MergeConflict,
  merge3,
  type TreeEntries,
} from '@slivingdoc/merge';
import { foldKey } from '@slivingdoc/policy';
import type { DirContext } from '../context';

/**
 * Three-way merge of whole trees (contract §6); new blobs are written to P. Concurrent additions
 * follow the configured `mergeAdditions` unless the caller says otherwise.
 */
export function threeWayMerge(
  ctx: DirContext,
  base: TreeEntries,
  local: TreeEntries,
  remote: TreeEntries,
  additions: MergeAdditions = ctx.cfg.mergeAdditions,
): Promise<{ result: TreeEntries; conflicts: MergeConflict[] }> {
  return merge3({ base, local, remote, db: ctx.db, foldKey, additions });
}

/** Marker blocks in the given paths of `entries` (contract §6), as file issues. */
export async function markerIssues(
  ctx: DirContext,
  entries: TreeEntries,
  paths: Iterable<string>,
): Promise<FileIssue[]> {
  const issues: FileIssue[] = [];
  for (const path of paths) {
    const oid = entries.get(path);
    if (oid === undefined) continue;
    const ranges = findMarkerBlocks(await ctx.db.readBlob(oid));
    if (ranges.length > 0) issues.push({ path, reason: 'MARKER_BLOCK', ranges });
  }
  return issues.sort((a, b) => compareUtf8(a.path, b.path));
}
