/**
 * notes_commit for one locked, pulled directory (SPEC §9), in the order of SPEC §2: scan,
 * markers, path sets, then the store: read R, merge, publish, and on a lost race back off,
 * re-read R (fetching only new increments), re-merge and publish anew.
 */
import {
  buildSuccess,
  compareUtf8,
  type FileIssue,
  type FileStat,
  type SuccessResult,
} from '@slivingdoc/envelope';
import {
  diffstat,
  findMarkerBlocks,
  type MergeConflict,
  sameEntries,
  type TreeEntries,
} from '@slivingdoc/merge';
import { backoff } from './backoff';
import type { Baseline } from './baseline';
import type { CallState, DirContext } from './context';
import { PublicationGate } from './gate';
import { changedPaths, type LocalSnapshot, scanLocal } from './local';
import { recordPublicationInput, rewriteLocal } from './materialize';
import { publishAttempt } from './publish';
import { type Current, loadRemote, prefetchRemote, type RemoteView } from './remote';
import { conflictIssues, type Entry } from './sync';
import { threeWayMerge } from './three-way';
import {
  mergeConflict,
  readOnlyPath,
  remoteBusy,
  unresolvedMarkers,
  unsupportedFiles,
} from './verdicts';

/** Marker blocks in the given paths of `entries` (SPEC §6), as file issues. */
async function markerIssues(
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
 * SPEC §5: a change under a read-only path publishes nothing; each such file is reset to its
 * baseline content (inside the recovery flag) and listed.
 */
async function refuseReadOnlyChanges(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  local: LocalSnapshot,
  changed: string[],
): Promise<void> {
  const refused = changed.filter((path) => !ctx.policy.isWritable(path)).sort(compareUtf8);
  if (refused.length === 0) return;
  const target = new Map(local.entries);
  for (const path of refused) {
    const original = entry.baseEntries.get(path);
    if (original === undefined) target.delete(path);
    else target.set(path, original);
  }
  await rewriteLocal(ctx, call, { local, target, previous: entry.base, next: entry.base });
  throw readOnlyPath(refused.map((path) => ({ path, reason: 'READ_ONLY_PATH', ranges: [] })));
}

/**
 * The backoff after a lost race (SPEC §9), used to fetch what the winner published meanwhile.
 * The prefetch always settles before this returns, so nothing touches P after the call ends.
 */
async function backoffPrefetching(
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

/** Runs the commit; `entry` is the directory's (repaired, trustworthy) state. */
export async function commitLocked(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  message: Uint8Array,
): Promise<SuccessResult> {
  call.stage = 'scan';
  const local = await scanLocal(ctx);
  if (local.problems.length > 0) throw unsupportedFiles(local.problems);
  const changed = changedPaths(entry.baseEntries, local.entries);
  const markers = await markerIssues(ctx, local.entries, changed);
  if (markers.length > 0) throw unresolvedMarkers(markers);
  await refuseReadOnlyChanges(ctx, call, entry, local, changed);
  /** Rewrites L to the accepted `target`, records `baseline` and answers OK with `files`. */
  const accept = async (target: TreeEntries, baseline: Baseline, files: FileStat[]) => {
    ctx.trees.remember(baseline.tree, target);
    // Objects staged in memory (R's small increments, our proposal) reach P before the
    // baseline names them.
    await ctx.db.persistStaged();
    const written = await rewriteLocal(ctx, call, {
      local,
      target,
      previous: entry.base,
      next: baseline,
    });
    if (written.conflicts.length > 0)
      throw mergeConflict(await conflictIssues(ctx, written.conflicts, written.final));
    return buildSuccess({
      path: ctx.dir,
      generation: baseline.generation,
      files,
      sets: ctx.policy.sets,
    });
  };

  const attempts = ctx.cfg.commitRetries + 1;
  const gate = new PublicationGate(ctx, call);
  let observed: Current | undefined;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (attempt > 0) await backoffPrefetching(ctx, call, attempt - 1, observed);
    const step = await gate.around((gated) =>
      attemptPublication(ctx, call, { entry, local, changed, message, gated }),
    );
    if (step.kind === 'lost') {
      observed = step.observed;
      continue;
    }
    if (step.kind === 'conflict') {
      call.signal?.throwIfAborted();
      await ctx.db.persistStaged();
      const written = await rewriteLocal(ctx, call, {
        local,
        target: step.merged,
        previous: entry.base,
        next: step.remote.baseline,
      });
      throw mergeConflict(
        await conflictIssues(ctx, [...step.conflicts, ...written.conflicts], written.final),
      );
    }
    if (step.kind === 'unchanged') {
      call.signal?.throwIfAborted();
      return accept(step.remote.entries, step.remote.baseline, []);
    }
    ctx.onPublished(step.activeIncrements);
    return accept(
      step.merged,
      step.baseline,
      await diffstat(step.remote.entries, step.merged, ctx.db),
    );
  }
  throw remoteBusy(attempts);
}

/** What one attempt came to; L is rewritten afterwards, outside the publication gate. */
type Step =
  | { kind: 'lost'; observed: Current | undefined }
  | { kind: 'conflict'; remote: RemoteView; merged: TreeEntries; conflicts: MergeConflict[] }
  | { kind: 'unchanged'; remote: RemoteView }
  | {
      kind: 'accepted';
      remote: RemoteView;
      merged: TreeEntries;
      baseline: Baseline;
      activeIncrements: number;
    };

/** One attempt: read R, merge it with L against the baseline, and publish the result. */
async function attemptPublication(
  ctx: DirContext,
  call: CallState,
  commit: {
    entry: Entry;
    local: LocalSnapshot;
    changed: string[];
    message: Uint8Array;
    /** Whether the attempt holds the publication gate (no local writer races it). */
    gated: boolean;
  },
): Promise<Step> {
  const { entry, local, changed, message, gated } = commit;
  const remote = await loadRemote(ctx, call, entry.base);
  call.stage = 'merge';
  const merged = await threeWayMerge(ctx, entry.baseEntries, local.entries, remote.entries);
  if (merged.conflicts.length > 0)
    return { kind: 'conflict', remote, merged: merged.result, conflicts: merged.conflicts };
  // The merged result of every file the caller touched and the merge rewrote.
  const rewritten = changed.filter((path) => merged.result.get(path) !== local.entries.get(path));
  const mergedMarkers = await markerIssues(ctx, merged.result, rewritten);
  if (mergedMarkers.length > 0) throw unresolvedMarkers(mergedMarkers);
  if (sameEntries(merged.result, remote.entries)) return { kind: 'unchanged', remote };
  const outcome = await publishAttempt(ctx, call, remote, merged.result, message, {
    checkMoved: !gated,
    // A kill after the swap lands must not make the next call publish L's lines again.
    beforeCas: (proposal) =>
      recordPublicationInput(
        ctx,
        { previous: entry.base, previousEntries: entry.baseEntries, proposal },
        local.entries,
      ),
  });
  if (!outcome.accepted) return { kind: 'lost', observed: outcome.observed };
  return {
    kind: 'accepted',
    remote,
    merged: merged.result,
    baseline: outcome.baseline,
    activeIncrements: outcome.activeIncrements,
  };
}
