/** notes_pull for one locked directory (contract §8). */
import { buildSuccess, type SuccessResult } from '@slivingdoc/envelope';
import { diffstat } from '@slivingdoc/merge';
import type { CallState, DirContext } from '../context';
import { mergeConflict, unsupportedFiles } from '../verdicts';
import { type LocalSnapshot, scanLocal } from './local';
import { conflictIssues, type Entry, synchronize } from './sync';

/**
 * Scan, validate, read R, fetch, merge(A, L, R), rewrite L, record R. Registers the directory
 * on OK and on CONTENT_CONFLICT (both count as the required pull). A pending repair is this
 * same synchronisation, with files that are not notebook state left alone until it is done.
 */
export async function pullLocked(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
): Promise<SuccessResult> {
  const tolerant = entry.repairPending && !entry.stateMissing;
  let local: LocalSnapshot | undefined;
  if (!tolerant) {
    local = await scanLocal(ctx);
    if (local.problems.length > 0) throw unsupportedFiles(local.problems);
  }
  const synced = await synchronize(ctx, call, entry, local === undefined ? {} : { local });
  await ctx.registry.add(ctx.dir);
  if (synced.conflicts.length > 0) {
    throw mergeConflict(await conflictIssues(ctx, synced.conflicts, synced.final));
  }
  if (synced.local.problems.length > 0) throw unsupportedFiles(synced.local.problems);
  return buildSuccess({
    path: ctx.dir,
    generation: synced.remote.baseline.generation,
    files: await diffstat(synced.local.entries, synced.final, ctx.db),
    sets: ctx.policy.sets,
  });
}
