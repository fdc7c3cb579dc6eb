/**
 * notes_commit for one locked, pulled directory (contract §9), in the order of contract §2: scan,
 * markers, path sets, then the store: read R, merge, publish, and on a lost race back off,
 * re-read R (fetching only new increments), re-merge and publish anew. With group commit on,
 * the store part may instead happen in another local writer's turn (docs/engine.md).
 */
import { buildSuccess, compareUtf8, type FileStat, type SuccessResult } from '@slivingdoc/envelope';
import { diffstat, type TreeEntries } from '@slivingdoc/merge';
import {
  attemptPublication,
  backoffPrefetching,
  markerIssues,
  type OwnChange,
  type Settled,
} from './attempt';
import type { Baseline } from './baseline';
import type { CallState, DirContext } from './context';
import { PublicationGate } from './gate';
import { commitGrouped, type GroupedOutcome } from './group/grouped';
import { changedPaths, type LocalSnapshot, scanLocal } from './local';
import { rewriteLocal } from './materialize';
import { type Current, loadRemote } from './remote';
import { conflictIssues, type Entry } from './sync';
import {
  mergeConflict,
  readOnlyPath,
  remoteBusy,
  unresolvedMarkers,
  unsupportedFiles,
} from './verdicts';

/**
 * contract §5: a change under a read-only path publishes nothing; each such file is reset to its
 * baseline content (inside the recovery flag) and listed.
 */
export async function refuseReadOnlyChanges(
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

/** The diffstat of one commit against its parent (a group member that resolved alone). */
async function commitDiffstat(ctx: DirContext, commit: string): Promise<FileStat[]> {
  const { tree, parent } = await ctx.db.readCommit(commit);
  const parentTree = parent === undefined ? undefined : (await ctx.db.readCommit(parent)).tree;
  const before = parentTree === undefined ? new Map() : await ctx.db.readTree(parentTree);
  return diffstat(before, await ctx.db.readTree(tree), ctx.db);
}

/** Runs the commit; `entry` is the directory's (repaired, trustworthy) state. */
export async function commitLocked(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  message: Uint8Array,
  author?: string,
): Promise<SuccessResult> {
  call.stage = 'scan';
  const local = await scanLocal(ctx);
  if (local.problems.length > 0) throw unsupportedFiles(local.problems);
  const changed = changedPaths(entry.baseEntries, local.entries);
  const markers = await markerIssues(ctx, local.entries, changed);
  if (markers.length > 0) throw unresolvedMarkers(markers);
  await refuseReadOnlyChanges(ctx, call, entry, local, changed);
  const own: OwnChange = { entry, local, changed, message, author: author ?? call.actor };
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
  /** Ends the call after a step that is not a lost race. */
  const finish = async (step: Settled) => {
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
      await diffstat(step.remote.entries, step.own, ctx.db),
    );
  };
  /** Accepted in another holder's group: import it (the normal remote load), then accept. */
  const acceptAsMember = async (outcome: Extract<GroupedOutcome, { kind: 'member' }>) => {
    call.remoteAccepted = 'yes';
    const remote = await loadRemote(ctx, call, entry.base);
    let target = remote.entries;
    let baseline = remote.baseline;
    if (remote.baseline.head !== outcome.head && (await ctx.db.has(outcome.head))) {
      const { tree } = await ctx.db.readCommit(outcome.head);
      target = await ctx.trees.read(ctx.db, tree);
      baseline = { generation: outcome.generation, head: outcome.head, tree };
    }
    const files =
      outcome.files ??
      (outcome.commit === undefined ? [] : await commitDiffstat(ctx, outcome.commit));
    const result = await accept(target, baseline, files);
    return { ...result, generation: Number(outcome.generation) };
  };

  const gate = new PublicationGate(ctx, call);
  if (ctx.cfg.groupCommit && ctx.cfg.publicationGateMs > 0) {
    const grouped = await commitGrouped(ctx, call, own, gate);
    if (grouped.kind === 'member') return acceptAsMember(grouped);
    if (grouped.kind === 'held') return finish(grouped.step);
  }
  const attempts = ctx.cfg.commitRetries + 1;
  let observed: Current | undefined;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (attempt > 0) await backoffPrefetching(ctx, call, attempt - 1, observed);
    const step = await gate.around((gated) => attemptPublication(ctx, call, own, gated));
    if (step.kind === 'lost') {
      observed = step.observed;
      continue;
    }
    return finish(step);
  }
  throw remoteBusy(attempts);
}
