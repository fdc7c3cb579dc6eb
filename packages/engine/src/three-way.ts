/** merge(A, L, R) with the policy's case folding, the one way every module merges trees. */
import {
  type MergeAdditions,
  type MergeConflict,
  merge3,
  type TreeEntries,
} from '@slivingdoc/merge';
import { foldKey } from '@slivingdoc/policy';
import type { DirContext } from './context';

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
