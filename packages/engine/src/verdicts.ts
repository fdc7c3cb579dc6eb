/** The domain errors pull and commit decide themselves (as opposed to mapped lower-layer failures). */
import { DomainError, type FileIssue } from '@slivingdoc/envelope';

/** INVALID_CONTENT · UNSUPPORTED_FILES with the scan's per-file reasons. */
export function unsupportedFiles(problems: FileIssue[]): DomainError {
  return new DomainError({
    code: 'INVALID_CONTENT',
    reason: 'UNSUPPORTED_FILES',
    message: 'The notebook directory holds files that are not notebook state; nothing was changed.',
    files: problems,
  });
}

/** CONTENT_CONFLICT · MERGE_CONFLICT: markers are in L and R is recorded as the baseline. */
export function mergeConflict(files: FileIssue[]): DomainError {
  return new DomainError({
    code: 'CONTENT_CONFLICT',
    reason: 'MERGE_CONFLICT',
    message:
      'Concurrent changes conflict; the conflict blocks are written in the notebook directory. Resolve them before notes_commit.',
    files,
  });
}

/** CONTENT_CONFLICT · UNRESOLVED_MARKERS: nothing was published. */
export function unresolvedMarkers(files: FileIssue[]): DomainError {
  return new DomainError({
    code: 'CONTENT_CONFLICT',
    reason: 'UNRESOLVED_MARKERS',
    message:
      'Files still hold conflict blocks; resolve them before notes_commit. Nothing was published.',
    files,
  });
}

/** READ_ONLY_PATH · CHANGE_OUTSIDE_WRITABLE: the listed files were reset to the baseline. */
export function readOnlyPath(
  files: FileIssue[],
  message = 'Changes to read-only paths were refused and those files were reset to the accepted notebook; nothing was published. Your other edits are still in the notebook directory.',
): DomainError {
  return new DomainError({
    code: 'READ_ONLY_PATH',
    reason: 'CHANGE_OUTSIDE_WRITABLE',
    message,
    files,
  });
}

/** READ_ONLY_SESSION · TOKEN_READ_ONLY: decided before the directory is even resolved. */
export function readOnlySession(): DomainError {
  return new DomainError({
    code: 'READ_ONLY_SESSION',
    reason: 'TOKEN_READ_ONLY',
    message:
      'This session’s token is read-only: notes_commit is refused and nothing was changed or published. notes_pull still works.',
  });
}

/**
 * INVALID_REQUEST · PATH_OUTSIDE_TOKEN_DIR: an HTTP token's call addressed a directory outside
 * its own. Decided before the path is resolved, so nothing is read, made or named but the
 * caller's own path and directory.
 */
export function outsideTokenDir(path: string, tokenDir: string): DomainError {
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'PATH_OUTSIDE_TOKEN_DIR',
    message: `${path} is outside this token's directory ${tokenDir}; a token reaches only its own directory and below.`,
  });
}

/** READ_ONLY_SESSION · STORE_READ_ONLY: the process is a reader; decided before anything is read. */
export function readOnlyStore(): DomainError {
  return new DomainError({
    code: 'READ_ONLY_SESSION',
    reason: 'STORE_READ_ONLY',
    message:
      'These store credentials can only read: notes_commit is refused and nothing was changed or published; your edits stay in the notebook directory. notes_pull still works.',
  });
}

/** INVALID_REQUEST · NOT_PULLED: decided before any store call. */
export function notPulled(): DomainError {
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'NOT_PULLED',
    message: 'This directory has not been pulled; call notes_pull first.',
  });
}

/** REMOTE_BUSY · RETRIES_EXHAUSTED: every CAS attempt lost; L untouched. */
export function remoteBusy(attempts: number): DomainError {
  return new DomainError({
    code: 'REMOTE_BUSY',
    reason: 'RETRIES_EXHAUSTED',
    message: `Other writers published first on each of ${attempts} attempts; nothing was published and the notebook directory was left untouched.`,
  });
}

/** RECOVERY_FAILURE · RESYNC_PENDING: a previous repair still cannot finish. */
export function resyncPending(cause: unknown): DomainError {
  return new DomainError({
    code: 'RECOVERY_FAILURE',
    reason: 'RESYNC_PENDING',
    message:
      'A previous operation was interrupted and its repair cannot finish yet (the store is unavailable); the notebook directory keeps your bytes. Retry later.',
    recovery: { stage: 'resync', remoteAccepted: 'unknown', resynchronized: false },
    cause,
  });
}
