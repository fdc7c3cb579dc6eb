/**
 * `revert` (contract §12): undo one publication of the retained history. The inverse of
 * publication N is merged onto R (three-way: base = N's result, one side = the state before N,
 * the other = R), written into the clean copy at the directory, and published there as an
 * ordinary commit; a conflict leaves markers in the copy and answers as a commit does.
 */
import { DomainError, type SuccessResult } from '@slivingdoc/envelope';
import type { TreeEntries } from '@slivingdoc/merge';
import type { CallState, DirContext } from '../context';
import { EMPTY_TREE, NO_FILES } from '../context';
import { ensureIncrement, type RetainedIncrement, retainedIncrements } from '../notebook/history';
import { threeWayMerge } from '../notebook/merge';
import { loadRemote } from '../notebook/remote';
import { mergeConflict, unsupportedFiles } from '../verdicts';
import { commitLocked } from './commit';
import { changedPaths, type LocalSnapshot, scanLocal } from './local';
import { rewriteLocal } from './materialize';
import { conflictIssues, type Entry, enterDirectory } from './sync';

/** INVALID_REQUEST · UNPUBLISHED_EDITS: a revert or an approval is never mixed with the copy’s own edits. */
export function unpublishedEdits(count: number): DomainError {
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'UNPUBLISHED_EDITS',
    message: `The notebook directory holds unpublished edits (${count} ${count === 1 ? 'file' : 'files'}); commit or undo them first: a revert or an approval goes through a clean copy. Nothing was changed.`,
  });
}

/**
 * Scans the clean copy a person's write (revert, approve) goes through: files that are not
 * notebook state and unpublished edits are refused before anything is merged.
 */
export async function scanCleanCopy(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
): Promise<LocalSnapshot> {
  call.stage = 'scan';
  const local = await scanLocal(ctx);
  if (local.problems.length > 0) throw unsupportedFiles(local.problems);
  const edited = changedPaths(entry.baseEntries, local.entries);
  if (edited.length > 0) throw unpublishedEdits(edited.length);
  return local;
}

/** INVALID_REQUEST · GENERATION_NOT_RETAINED, naming the range that can be reverted. */
function generationNotRetained(generation: bigint, increments: RetainedIncrement[]): DomainError {
  const revertible = increments.filter((increment) => increment.parent !== undefined);
  const range =
    revertible.length === 0
      ? 'no publication can be reverted'
      : `generations ${revertible.at(-1)?.generation}–${revertible[0]?.generation} can be reverted`;
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'GENERATION_NOT_RETAINED',
    message: `Generation ${generation} is not a publication of the retained history (${range}; see slivingdoc log). Nothing was changed.`,
  });
}

/** The flattened tree after `head` (whose objects are in P). */
async function stateAt(ctx: DirContext, head: string): Promise<TreeEntries> {
  const { tree } = await ctx.db.readCommit(head);
  return tree === EMPTY_TREE ? NO_FILES : ctx.trees.read(ctx.db, tree);
}

/** The first line of the publication's (last) message, for the default revert message. */
async function firstLine(ctx: DirContext, head: string): Promise<string> {
  const { message } = await ctx.db.readCommit(head);
  const line = Buffer.from(message).toString('utf8').split('\n')[0]?.trim() ?? '';
  // Keeps the default message well inside the message limit (contract §9: 16,384 bytes).
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * Reverts publication `generation` through the locked, pulled directory. `message` absent:
 * `Revert generation N: <first line of N's message>`.
 */
export async function revertLocked(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  generation: bigint,
  options: { message: string | undefined; refuseConflicts: boolean },
): Promise<SuccessResult> {
  const { message } = options;
  const local = await scanCleanCopy(ctx, call, entry);

  const remote = await loadRemote(ctx, call, entry.rollback);
  const increments =
    remote.current === undefined ? [] : retainedIncrements(remote.current.manifest);
  const index = increments.findIndex((increment) => increment.generation === generation);
  const target = increments[index];
  if (target === undefined || target.parent === undefined) {
    throw generationNotRetained(generation, increments);
  }
  await ensureIncrement(ctx, target);
  const before = increments[index + 1];
  if (before !== undefined && before.head === target.parent) await ensureIncrement(ctx, before);
  const after = await stateAt(ctx, target.head);
  const parentState = target.parent === null ? NO_FILES : await stateAt(ctx, target.parent);

  call.stage = 'merge';
  const merged = await threeWayMerge(ctx, after, parentState, remote.entries);
  // The view's revert changes nothing on a conflict: it reports where, from the merged result.
  if (options.refuseConflicts && merged.conflicts.length > 0)
    throw mergeConflict(await conflictIssues(ctx, merged.conflicts, merged.result));
  const text = message ?? `Revert generation ${generation}: ${await firstLine(ctx, target.head)}`;
  // Conflicts leave markers in the copy with R as its baseline, as a commit's conflict does;
  // a result equal to R (already undone) publishes nothing.
  await ctx.db.persistStaged();
  const written = await rewriteLocal(ctx, call, {
    local,
    target: merged.result,
    previous: entry.base,
    next: remote.baseline,
  });
  const conflicts = [...merged.conflicts, ...written.conflicts];
  if (conflicts.length > 0)
    throw mergeConflict(await conflictIssues(ctx, conflicts, written.final));
  return commitLocked(ctx, call, await enterDirectory(ctx), Buffer.from(text, 'utf8'));
}
