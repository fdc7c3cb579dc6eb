/**
 * One publication attempt of a commit (contract §9) and the pieces a group commit's holder shares
 * with it: merging the caller's change onto R, the marker check of a merge's rewritten files,
 * and the backoff after a lost race.
 */
import { compareUtf8, type FileIssue } from '@slivingdoc/envelope';
import {
  findMarkerBlocks,
  type MergeConflict,
  sameEntries,
  type TreeEntries,
} from '@slivingdoc/merge';
import { backoff } from './backoff';
import type { Baseline } from './baseline';
import type { CallState, DirContext } from './context';
import type { LocalSnapshot } from './local';
import { recordPublicationInput } from './materialize';
import { publishAttempt } from './publish';
import { type Current, loadRemote, prefetchRemote, type RemoteView } from './remote';
import type { Entry } from './sync';
import { threeWayMerge } from './three-way';
import { unresolvedMarkers } from './verdicts';

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

/**
 * The backoff after a lost race (contract §9), used to fetch what the winner published meanwhile.
 * The prefetch always settles before this returns, so nothing touches P after the call ends.
 */
export async function backoffPrefetching(
  ctx: DirContext,
  call: CallState,
  retry: number,
  observed: Current | undefined,
): Promise<void> {
  const [slept] = await Promise.allSettled([
    backoff(retry, ctx.cfg.clock, call.signal),
    prefetchRemote(ctx, observed),
  ]);
  if (slept.status === 'rejected') throw slept.reason;
}

/**
 * Records, right before a CAS that may publish the caller's change, the L it merged and the
 * baseline the CAS would make (docs/engine.md, "Kill at any instruction"): a process killed
 * after the swap lands but before it records anything leaves L as merged, and the next call
 * must not publish those lines again.
 */
export function recordOwnInput(ctx: DirContext, own: OwnChange, proposal: Baseline): Promise<void> {
  return recordPublicationInput(
    ctx,
    {
      previous: own.entry.base,
      previousEntries: own.entry.baseEntries,
      proposal: { generation: proposal.generation, head: proposal.head, tree: proposal.tree },
    },
    own.local.entries,
  );
}

/** A commit's own change: what the caller's scan found against its baseline. */
export interface OwnChange {
  entry: Entry;
  local: LocalSnapshot;
  changed: string[];
  message: Uint8Array;
  /** The author name (contract §9); `slivingdoc` when absent. */
  author: string | undefined;
}

/** What one attempt came to; L is rewritten afterwards, outside the publication gate. */
export type Step =
  | { kind: 'lost'; observed: Current | undefined }
  | { kind: 'conflict'; remote: RemoteView; merged: TreeEntries; conflicts: MergeConflict[] }
  | { kind: 'unchanged'; remote: RemoteView }
  | {
      kind: 'accepted';
      remote: RemoteView;
      /** The accepted tree (with a group: every member's change). */
      merged: TreeEntries;
      /** The tree of the caller's own commit (its parent's tree is `remote.entries`). */
      own: TreeEntries;
      baseline: Baseline;
      activeIncrements: number;
    };

/** A step that ends the attempts (anything but a lost race). */
export type Settled = Exclude<Step, { kind: 'lost' }>;

/** merge(A, L, R) for the caller's own change: a conflict, no change, or the merged tree. */
export async function mergeOwn(
  ctx: DirContext,
  own: OwnChange,
  remote: RemoteView,
): Promise<
  | { kind: 'conflict'; remote: RemoteView; merged: TreeEntries; conflicts: MergeConflict[] }
  | { kind: 'unchanged'; remote: RemoteView }
  | { kind: 'merged'; result: TreeEntries }
> {
  const { entry, local, changed } = own;
  const merged = await threeWayMerge(ctx, entry.baseEntries, local.entries, remote.entries);
  if (merged.conflicts.length > 0)
    return { kind: 'conflict', remote, merged: merged.result, conflicts: merged.conflicts };
  // The merged result of every file the caller touched and the merge rewrote.
  const rewritten = changed.filter((path) => merged.result.get(path) !== local.entries.get(path));
  const mergedMarkers = await markerIssues(ctx, merged.result, rewritten);
  if (mergedMarkers.length > 0) throw unresolvedMarkers(mergedMarkers);
  if (sameEntries(merged.result, remote.entries)) return { kind: 'unchanged', remote };
  return { kind: 'merged', result: merged.result };
}

/** One attempt: read R, merge it with L against the baseline, and publish the result. */
export async function attemptPublication(
  ctx: DirContext,
  call: CallState,
  own: OwnChange,
  /** Whether the attempt holds the publication gate (no local writer races it). */
  gated: boolean,
): Promise<Step> {
  const remote = await loadRemote(ctx, call, own.entry.base);
  call.stage = 'merge';
  const merged = await mergeOwn(ctx, own, remote);
  if (merged.kind !== 'merged') return merged;
  const outcome = await publishAttempt(ctx, call, remote, merged.result, own.message, {
    checkMoved: !gated,
    author: own.author,
    // A kill after the swap lands must not make the next call publish L's lines again.
    beforeCas: async (proposal) => {
      await recordOwnInput(ctx, own, proposal);
      return undefined;
    },
  });
  if (!outcome.accepted) return { kind: 'lost', observed: outcome.observed };
  return {
    kind: 'accepted',
    remote,
    merged: merged.result,
    own: merged.result,
    baseline: outcome.baseline,
    activeIncrements: outcome.activeIncrements,
  };
}
