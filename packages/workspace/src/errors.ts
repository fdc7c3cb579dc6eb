import { DomainError, engineDetailFor, type FileIssue } from '@slivingdoc/envelope';

/** The file reasons a scan reports (a subset of the envelope's `FileReason`; contract §3/§4). */
export type ScanReason =
  | 'SYMLINK'
  | 'SPECIAL_FILE'
  | 'INVALID_NAME'
  | 'NAME_COLLISION'
  | 'NOT_UTF8'
  | 'CONTAINS_NUL'
  | 'PATH_TOO_LONG'
  | 'PATH_TOO_DEEP'
  | 'FILE_TOO_LARGE';

/** One entry of L that is not notebook state (always without ranges). */
export interface ScanProblem extends FileIssue {
  reason: ScanReason;
}

/**
 * L changed under a call: a file no longer matches the stamp the scan saw, a path that
 * should be absent exists, or a directory became a link or a file. The engine rescans.
 * `paths` are notebook paths, sorted.
 */
export class ConcurrentEditError extends Error {
  override readonly name = 'ConcurrentEditError';
  constructor(readonly paths: string[]) {
    super(`The notebook directory changed during the operation (${paths.length} path(s)).`);
  }
}

/** A change names a path that breaks the notebook path rules: a bug in the caller. */
export class InvalidChangeError extends Error {
  override readonly name = 'InvalidChangeError';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`Refusing to write an invalid notebook path (${reason}).`);
  }
}

/**
 * Another holder kept this notebook directory's lock past the wait bound: the engine answers
 * PATH_BUSY · LOCK_TIMEOUT (retryable).
 */
export class LockTimeoutError extends DomainError<'PATH_BUSY'> {
  constructor() {
    super({
      code: 'PATH_BUSY',
      reason: 'LOCK_TIMEOUT',
      message: 'Another operation holds this notebook directory; try again shortly.',
    });
    this.name = 'LockTimeoutError';
  }
}

/** Why a `state.json` was refused. */
export type StateErrorKind =
  | 'syntax'
  | 'unknown-field'
  | 'duplicate-field'
  | 'missing-field'
  | 'null-field'
  | 'wrong-type'
  | 'invalid-value'
  | 'field-order'
  | 'unsupported-version'
  | 'identity-mismatch';

/**
 * `state.json` exists but is not a valid version 1 record. Never silently reset: the engine
 * treats it as "no trustworthy baseline" and repairs (contract §10).
 */
export class StateError extends Error {
  override readonly name = 'StateError';
  constructor(
    readonly kind: StateErrorKind,
    message: string,
  ) {
    super(`Invalid state.json: ${message}`);
  }
}

/**
 * P cannot be used at all: the private root (or a directory P needs below it) cannot be
 * created, opened or listed — it is a regular file, unreadable, on a full or read-only disk.
 * ENGINE_FAILED · PRIVATE_STATE_UNAVAILABLE (CONTACT_OPERATOR), with the fixed detail when the
 * errno is one of the catalogue's. A corrupt P is repaired instead and never raises this.
 */
export class PrivateStateUnavailableError extends DomainError<'ENGINE_FAILED'> {
  constructor(cause: unknown) {
    const detail = engineDetailFor(cause);
    super({
      code: 'ENGINE_FAILED',
      reason: 'PRIVATE_STATE_UNAVAILABLE',
      message:
        'The private state cannot be read or written; the notebook directory was left untouched.',
      ...(detail === undefined ? {} : { detail }),
      cause,
    });
    this.name = 'PrivateStateUnavailableError';
  }
}

/** Runs `work`; any failure becomes a {@link PrivateStateUnavailableError}. */
export async function privateStateUsable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof PrivateStateUnavailableError
      ? error
      : new PrivateStateUnavailableError(error);
  }
}
