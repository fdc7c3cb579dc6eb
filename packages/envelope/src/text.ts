import { candidSetLines, successSuffix } from './path-set-text';
import type { ErrorResult, FileIssue, PathSets, SuccessResult } from './results';

/** The success text item: the resolved notebook directory, with the path-set suffix. */
export function successText(path: string, sets: PathSets): string {
  return `${path}${successSuffix(sets)}`;
}

/**
 * The success text of a result (contract §2): the path line, then in queue mode only the
 * review lines (docs/review.md). Without review this is exactly {@link successText}.
 */
export function resultText(result: SuccessResult, sets: PathSets): string {
  return [successText(result.path, sets), ...reviewLines(result)].join('\n');
}

/** The candid lines about a proposal; none unless review applied to the call. */
export function reviewLines(result: SuccessResult): string[] {
  const lines: string[] = [];
  const outcome = result.proposalOutcome;
  if (outcome?.status === 'approved') {
    lines.push(
      `Your proposal ${outcome.proposalId} (revision ${outcome.revision}) was approved by ${outcome.by} and published as generation ${outcome.generation}.`,
    );
  }
  if (outcome?.status === 'rejected') {
    lines.push(
      `Your proposal ${outcome.proposalId} (revision ${outcome.revision}) was rejected by ${outcome.by}${outcome.reason === undefined ? '' : `: ${outcome.reason}`}. Nothing of it was published; your edits are still in the notebook directory.`,
    );
    if (result.status === undefined)
      lines.push(
        'This call proposed nothing: change your edits as the reason asks, then call notes_commit again to propose them anew.',
      );
  }
  if (result.status === 'pending') {
    lines.push(
      `Pending review: proposal ${result.proposalId} revision ${result.revision}. Nothing was published; a person must approve it. Retrying changes nothing. Keep working; a later notes_commit revises this proposal, and your next notes_pull or notes_commit reports the outcome.`,
    );
  }
  return lines;
}

function fileLine(file: FileIssue): string {
  const ranges = file.ranges.map((r) => `${r.start}-${r.end}`).join(', ');
  return `file: ${file.path} · ${file.reason}${ranges ? ` · lines ${ranges}` : ''}`;
}

/**
 * The candid error text item, in the exact layout of contract §2 (lines joined by LF, no
 * trailing LF). Its prose comes from the already scrubbed `error`; file paths are caller
 * data and appear as given.
 */
export function candidText(error: ErrorResult, sets: PathSets): string {
  const lines = [`${error.code} · ${error.reason}`, error.message];
  if (error.code === 'ENGINE_FAILED' && error.detail !== undefined)
    lines.push(`detail: ${error.detail}`);
  lines.push(...error.files.map(fileLine));
  lines.push(
    `action: ${error.action}`,
    `retryable: ${error.retryable}`,
    `diagnosticId: ${error.diagnosticId}`,
  );
  if (error.code === 'RECOVERY_FAILURE' && error.recovery !== undefined) {
    const { stage, remoteAccepted, resynchronized } = error.recovery;
    lines.push(
      `recovery: stage ${stage} · remoteAccepted ${remoteAccepted} · resynchronized ${resynchronized}`,
    );
  }
  lines.push(...candidSetLines(sets));
  return lines.join('\n');
}
