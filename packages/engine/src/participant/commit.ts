/**
 * notes_commit for one locked, pulled directory (contract §9), in the order of contract §2, read
 * top to bottom in {@link commitLocked}: the participant records its change (scan, markers, path
 * sets); the notebook publishes it in a round of the publication queue (merge onto R, one CAS,
 * retries on a lost race; docs/engine.md, "A commit's path"); the participant rewrites L to the
 * accepted tree and answers.
 */
import { buildSuccess, compareUtf8, type SuccessResult } from '@slivingdoc/envelope';
import type { CallState, DirContext } from '../context';
import { markerIssues } from '../notebook/merge';
import { answeredGeneration, publishChange } from '../notebook/publication/queue';
import type { OwnChange } from '../notebook/publication/round';
import { mergeConflict, readOnlyPath, unresolvedMarkers, unsupportedFiles } from '../verdicts';
import { changedPaths, type LocalSnapshot, scanLocal } from './local';
import { recordPublicationInput, rewriteLocal } from './materialize';
import { conflictIssues, type Entry } from './sync';

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

/**
 * The change this commit proposes: L scanned against the baseline, refused when it holds
 * unsupported files, marker blocks or edits under read-only paths.
 */
async function recordChange(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  message: Uint8Array,
  author: string | undefined,
): Promise<{ own: OwnChange; local: LocalSnapshot }> {
  call.stage = 'scan';
  const local = await scanLocal(ctx);
  if (local.problems.length > 0) throw unsupportedFiles(local.problems);
  const changed = changedPaths(entry.baseEntries, local.entries);
  const markers = await markerIssues(ctx, local.entries, changed);
  if (markers.length > 0) throw unresolvedMarkers(markers);
  await refuseReadOnlyChanges(ctx, call, entry, local, changed);
  const own: OwnChange = {
    base: entry.base,
    baseEntries: entry.baseEntries,
    files: local.entries,
    changed,
    message,
    author,
    record: (proposal) =>
      recordPublicationInput(
        ctx,
        {
          previous: entry.base,
          previousEntries: entry.baseEntries,
          proposal: { generation: proposal.generation, head: proposal.head, tree: proposal.tree },
        },
        local.entries,
      ),
  };
  return { own, local };
}

/** Runs the commit; `entry` is the directory's (repaired, trustworthy) state. */
export async function commitLocked(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  message: Uint8Array,
  author?: string,
): Promise<SuccessResult> {
  // 1. The participant records its change.
  const { own, local } = await recordChange(ctx, call, entry, message, author ?? call.actor);
  // 2. The notebook publishes it: merged with R (and every follower's change), one CAS.
  const published = await publishChange(ctx, call, own);
  // 3. The participant rewrites L to what was accepted (contract §9: OK only once L holds it).
  if (published.kind === 'conflict') {
    call.signal?.throwIfAborted();
    await ctx.db.persistStaged();
    const written = await rewriteLocal(ctx, call, {
      local,
      target: published.merged,
      previous: entry.base,
      next: published.remote.baseline,
    });
    throw mergeConflict(
      await conflictIssues(ctx, [...published.conflicts, ...written.conflicts], written.final),
    );
  }
  if (published.kind === 'unchanged') call.signal?.throwIfAborted();
  const { target, baseline, files } =
    published.kind === 'unchanged'
      ? { target: published.remote.entries, baseline: published.remote.baseline, files: [] }
      : published;
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
    generation: published.kind === 'accepted' ? answeredGeneration(published) : baseline.generation,
    files,
    sets: ctx.policy.sets,
  });
}
