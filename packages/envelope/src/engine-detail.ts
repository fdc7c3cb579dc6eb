import type { EngineDetail } from './catalogue';
import { DomainError } from './domain-error';

/** errno (and Node error) codes with a fixed, safe description. */
const DETAIL_BY_CODE: Readonly<Record<string, EngineDetail>> = {
  ENOSPC: 'disk full',
  EDQUOT: 'disk full',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENOMEM: 'out of memory',
  ERR_MEMORY_ALLOCATION_FAILED: 'out of memory',
  ENAMETOOLONG: 'file name too long',
};

/** How deep a `cause` chain is followed; chains can be cyclic. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Classifies a failure into the closed ENGINE_FAILED detail set by its errno code, looking
 * through `cause` chains and AggregateErrors. Anything else yields `undefined`: its full
 * cause goes only to the log record.
 */
export function engineDetailFor(cause: unknown): EngineDetail | undefined {
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): EngineDetail | undefined => {
    if (typeof value !== 'object' || value === null || seen.has(value) || depth > MAX_CAUSE_DEPTH)
      return undefined;
    seen.add(value);
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string' && Object.hasOwn(DETAIL_BY_CODE, code))
      return DETAIL_BY_CODE[code];
    if (value instanceof AggregateError) {
      for (const inner of value.errors) {
        const found = visit(inner, depth + 1);
        if (found) return found;
      }
    }
    return visit((value as { cause?: unknown }).cause, depth + 1);
  };
  return visit(cause, 0);
}

/**
 * The domain error for an unexpected exception: ENGINE_FAILED · INTERNAL_ERROR, with a
 * detail when the cause is classified. The cause is kept for the log record only.
 */
export function internalError(cause: unknown): DomainError<'ENGINE_FAILED'> {
  const detail = engineDetailFor(cause);
  return new DomainError({
    code: 'ENGINE_FAILED',
    reason: 'INTERNAL_ERROR',
    message:
      'The server failed unexpectedly; the operator can find the cause in the log record with this diagnosticId.',
    ...(detail ? { detail } : {}),
    cause,
  });
}
