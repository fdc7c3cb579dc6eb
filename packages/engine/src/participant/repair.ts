/**
 * Repair of one directory (contract §10): after a call failed while rewriting L, and on entry
 * to a commit when the recovery flag is set or an attempt it recorded landed unrecorded.
 */
import { DomainError, engineDetailFor } from '@slivingdoc/envelope';
import { type CallState, type DirContext, newCall } from '../context';
import { classifyKnown, failureSite, localFailure } from '../errors';
import { holdsHead, readCurrent } from '../notebook/remote';
import { mergeConflict, resyncPending } from '../verdicts';
import { conflictIssues, type Entry, enterDirectory, synchronize } from './sync';

/** contract §10: stop, try to rebuild L and P from `current`, report what happened. */
export async function repairAfterFailure(
  ctx: DirContext,
  failed: CallState,
  cause: unknown,
): Promise<DomainError> {
  const { logger } = ctx.cfg;
  logger.error(
    { err: cause, stage: failed.stage },
    'failure while rewriting the notebook directory',
  );
  const repair = newCall(undefined);
  let resynchronized = false;
  let files: Awaited<ReturnType<typeof conflictIssues>> = [];
  try {
    const synced = await synchronize(ctx, repair, await enterDirectory(ctx), {});
    files = await conflictIssues(ctx, synced.conflicts, synced.final);
    resynchronized = true;
  } catch (err) {
    logger.error({ err }, 'repair failed; the recovery flag stays for the next call');
  }
  // A full disk (or another catalogued local cause) that also stopped the repair is the
  // operator's to fix: say which side and why, not "unexpected" (the flag stays for later).
  if (!resynchronized && engineDetailFor(cause) !== undefined) {
    return localFailure(cause, failureSite(ctx, failed, cause), failed.remoteAccepted);
  }
  return new DomainError({
    code: 'RECOVERY_FAILURE',
    reason: 'UNEXPECTED_FAILURE',
    message: resynchronized
      ? files.length > 0
        ? 'The operation failed while rewriting the notebook directory; it was rebuilt from the accepted notebook with your edits merged back, and the listed files hold conflict blocks.'
        : 'The operation failed while rewriting the notebook directory; it was rebuilt from the accepted notebook with your edits merged back.'
      : 'The operation failed while rewriting the notebook directory and the repair could not finish; your files are kept as they are and the next call repairs first.',
    files,
    recovery: { stage: failed.stage, remoteAccepted: failed.remoteAccepted, resynchronized },
    cause,
  });
}

/**
 * True when an attempt recorded since the baseline landed in the store although no call
 * recorded it (its process was killed after the swap): the commit then synchronises first, so
 * the lines it already published are not published again.
 */
async function publishedUnrecorded(ctx: DirContext, entry: Entry): Promise<boolean> {
  const attempts = entry.target?.rewrites.filter((r) => r.input === true) ?? [];
  if (attempts.length === 0) return false;
  const current = await readCurrent(ctx.cfg.store).catch(() => undefined);
  return attempts.some((attempt) => holdsHead(current, attempt.next.head));
}

/** Entry repair before a commit: its conflicts end the call; a store outage is RESYNC_PENDING. */
export async function repairOnEntry(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
): Promise<Entry> {
  if (!entry.repairPending && !(await publishedUnrecorded(ctx, entry))) return entry;
  try {
    const synced = await synchronize(ctx, call, entry, {});
    if (synced.conflicts.length > 0)
      throw mergeConflict(await conflictIssues(ctx, synced.conflicts, synced.final));
  } catch (err) {
    const known = classifyKnown(err);
    if (known?.code === 'STORAGE_FAILURE') throw resyncPending(err);
    throw err;
  }
  return enterDirectory(ctx);
}
