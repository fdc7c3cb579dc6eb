import { candidSetLines, successSuffix } from './path-set-text';
import type { ErrorResult, FileIssue, PathSets } from './results';

/** The success text item: the resolved notebook directory, with the path-set suffix. */
export function successText(path: string, sets: PathSets): string {
  return `${path}${successSuffix(sets)}`;
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
