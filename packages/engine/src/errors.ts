/**
 * The mapping of every lower-layer failure onto the catalogue (`@slivingdoc/envelope`).
 * Lower packages throw their own typed errors; this is the one place that turns them into
 * `DomainError`s, so a token never depends on where in the engine the failure surfaced.
 */
import {
  DomainError,
  type EngineDetail,
  engineDetailFor,
  isDomainError,
} from '@slivingdoc/envelope';
import { ClosureError, PackError } from '@slivingdoc/merge';
import { ManifestError, StoreError } from '@slivingdoc/store';
import { LockTimeoutError } from '@slivingdoc/workspace';

/** The details of a local disk refusing the embedded store's writes (not a store outage). */
const STORE_DISK_DETAILS: ReadonlySet<EngineDetail> = new Set([
  'disk full',
  'read-only file system',
]);

/**
 * The fixed detail when `err` is the embedded store's own disk refusing a write (ENOSPC,
 * EDQUOT, EROFS): nothing was written, and retrying cannot help until an operator acts.
 */
export function storeDiskDetail(err: StoreError): EngineDetail | undefined {
  if (err.kind !== 'other') return undefined;
  const detail = engineDetailFor(err);
  return detail !== undefined && STORE_DISK_DETAILS.has(detail) ? detail : undefined;
}

/**
 * Maps a store failure outside a compare-and-swap onto STORAGE_FAILURE (contract §3); the embedded
 * store's full or read-only disk is ENGINE_FAILED · STORE_WRITE_FAILED with its fixed detail.
 */
export function storageFailure(err: StoreError): DomainError {
  const disk = storeDiskDetail(err);
  if (disk !== undefined) {
    return new DomainError({
      code: 'ENGINE_FAILED',
      reason: 'STORE_WRITE_FAILED',
      message: 'The store directory could not be written; nothing was published.',
      detail: disk,
      cause: err,
    });
  }
  switch (err.kind) {
    case 'unreachable':
      return new DomainError({
        code: 'STORAGE_FAILURE',
        reason: 'STORE_UNREACHABLE',
        message: 'The object store could not be reached; nothing was changed.',
        cause: err,
      });
    case 'access-denied':
      return new DomainError({
        code: 'STORAGE_FAILURE',
        reason: 'ACCESS_DENIED',
        message: 'The object store refused the credentials or permissions; nothing was changed.',
        cause: err,
      });
    default:
      return new DomainError({
        code: 'STORAGE_FAILURE',
        reason: 'STORE_ERROR',
        message: 'The object store failed the request; nothing was changed.',
        cause: err,
      });
  }
}

/** One STORAGE_INTEGRITY error: the remote state cannot be trusted, and L stays untouched. */
export function integrityFailure(
  reason:
    | 'CHECKSUM_MISMATCH'
    | 'MISSING_PACK'
    | 'INVALID_MANIFEST'
    | 'UNSUPPORTED_MANIFEST'
    | 'MISSING_OBJECT'
    | 'INVALID_REMOTE_CONTENT'
    | 'REMOTE_ROLLED_BACK',
  message: string,
  cause?: unknown,
): DomainError {
  return new DomainError({ code: 'STORAGE_INTEGRITY', reason, message, cause });
}

/** The ambiguity of a publication could not be resolved (contract §9). */
export function publicationUnproven(cause?: unknown): DomainError {
  return new DomainError({
    code: 'STORAGE_FAILURE',
    reason: 'PUBLICATION_UNPROVEN',
    message:
      'The store did not confirm the publication and it cannot be proven either way; the notebook directory was left untouched. Pull to see whether it landed.',
    cause,
  });
}

/**
 * Maps a known lower-layer error onto the catalogue; `undefined` for anything unclassified
 * (an unexpected failure, handled by the caller according to whether L was being rewritten).
 */
export function classifyKnown(err: unknown): DomainError | undefined {
  if (isDomainError(err)) return err;
  if (err instanceof StoreError) return storageFailure(err);
  if (err instanceof LockTimeoutError) {
    return new DomainError({
      code: 'PATH_BUSY',
      reason: 'LOCK_TIMEOUT',
      message: 'Another operation held this notebook directory too long; try again shortly.',
      cause: err,
    });
  }
  if (err instanceof ManifestError) {
    return integrityFailure(
      err.reason,
      err.reason === 'UNSUPPORTED_MANIFEST'
        ? 'The store holds a manifest version this release cannot read; the notebook directory was left untouched.'
        : 'The store manifest is invalid; the notebook directory was left untouched.',
      err,
    );
  }
  if (err instanceof ClosureError) {
    return err.missing.length > 0
      ? integrityFailure(
          'MISSING_OBJECT',
          'A pack lacks an object the accepted notebook needs; the notebook directory was left untouched.',
          err,
        )
      : integrityFailure(
          'INVALID_REMOTE_CONTENT',
          'The accepted notebook holds content that is not valid notebook state; the notebook directory was left untouched.',
          err,
        );
  }
  if (err instanceof PackError) {
    return integrityFailure(
      'INVALID_REMOTE_CONTENT',
      'A pack matching its checksum could not be read as a pack; the notebook directory was left untouched.',
      err,
    );
  }
  return undefined;
}

/** Where an unexpected failure happened, for the ENGINE_FAILED reason. */
export type FailureSite = 'local' | 'private';

/** The file system path a (possibly wrapped) errno failure names, if any. */
function failedPath(err: unknown): string | undefined {
  let value: unknown = err;
  for (let depth = 0; depth < 8 && typeof value === 'object' && value !== null; depth += 1) {
    const path = (value as { path?: unknown }).path;
    if (typeof path === 'string') return path;
    value = (value as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Whether a failure hit P or L: a path below the private root is P (state, stat cache, object
 * database, pack cache), whatever the stage; otherwise the materialize stage writes L.
 */
export function failureSite(
  ctx: { cfg: { privateRoot: string } },
  call: { stage: string },
  err: unknown,
): FailureSite {
  const path = failedPath(err);
  if (
    path !== undefined &&
    (path === ctx.cfg.privateRoot || path.startsWith(`${ctx.cfg.privateRoot}/`))
  )
    return 'private';
  return call.stage === 'materialize' ? 'local' : 'private';
}

/**
 * A catalogued local failure (a full disk) that interrupted the rewrite of L and also stopped
 * its repair: ENGINE_FAILED on the side that failed, with the fixed detail. The recovery flag
 * stays raised, so the first call after the operator frees space repairs L and P.
 */
export function localFailure(
  cause: unknown,
  site: FailureSite,
  remoteAccepted: 'yes' | 'no' | 'unknown',
): DomainError {
  const detail = engineDetailFor(cause);
  const published =
    remoteAccepted === 'yes'
      ? ' The commit itself was published.'
      : remoteAccepted === 'unknown'
        ? ' Whether the commit was published is unknown; a pull shows it.'
        : '';
  const next = ' Your files are kept as they are; the first call after this is fixed repairs it.';
  return new DomainError({
    code: 'ENGINE_FAILED',
    reason: site === 'local' ? 'LOCAL_WRITE_FAILED' : 'PRIVATE_STATE_UNAVAILABLE',
    message:
      (site === 'local'
        ? 'The notebook directory could not be written.'
        : 'The private state could not be written.') +
      published +
      next,
    ...(detail === undefined ? {} : { detail }),
    cause,
  });
}

/** An unclassified failure before L was touched: ENGINE_FAILED with a fixed detail when known. */
export function engineFailure(cause: unknown, site: FailureSite): DomainError {
  const detail: EngineDetail | undefined = engineDetailFor(cause);
  if (detail === undefined) {
    return new DomainError({
      code: 'ENGINE_FAILED',
      reason: 'INTERNAL_ERROR',
      message: 'The operation failed unexpectedly; the notebook directory was left untouched.',
      cause,
    });
  }
  return site === 'local'
    ? new DomainError({
        code: 'ENGINE_FAILED',
        reason: 'LOCAL_WRITE_FAILED',
        message: 'The notebook directory could not be written.',
        detail,
        cause,
      })
    : new DomainError({
        code: 'ENGINE_FAILED',
        reason: 'PRIVATE_STATE_UNAVAILABLE',
        message: 'The private state could not be read or written.',
        detail,
        cause,
      });
}

/** True for the rejection of an aborted signal, which stays a cancellation, never an envelope. */
export function isAbort(err: unknown, signal: AbortSignal | undefined): boolean {
  return (
    signal?.aborted === true && (err === signal.reason || (err as Error)?.name === 'AbortError')
  );
}
