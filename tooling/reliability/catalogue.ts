import { CATALOGUE, type ErrorCode, FILE_REASONS } from '@slivingdoc/envelope';

/** True when `reason` is one of the catalogued reasons of `code` (contract §3). */
export function isCataloguedReason(code: string, reason: unknown): boolean {
  if (!(code in CATALOGUE)) return false;
  const reasons = CATALOGUE[code as ErrorCode].reasons as Readonly<Record<string, unknown>>;
  return typeof reason === 'string' && Object.hasOwn(reasons, reason);
}

/** True when `reason` is a catalogued file reason. */
export function isFileReason(reason: unknown): boolean {
  return typeof reason === 'string' && Object.hasOwn(FILE_REASONS, reason);
}

/**
 * Re-throws `err` unless it is an instance of `type` whose `code`/`reason` are catalogued:
 * a fuzz target's rejection must be a typed, catalogued error, anything else is a crash.
 */
export function assertCataloguedRejection(
  err: unknown,
  type: abstract new (...args: never[]) => Error,
  code: string,
): void {
  if (!(err instanceof type)) throw err;
  const reason = (err as Error & { reason?: unknown }).reason;
  if (!isCataloguedReason(code, reason)) {
    throw new Error(`uncatalogued rejection ${code} · ${String(reason)}`, { cause: err });
  }
}

/** The catalogue's retryable verdict for `code` · `reason` (false for anything uncatalogued). */
export function isRetryable(code: string, reason: string): boolean {
  if (!isCataloguedReason(code, reason)) return false;
  const reasons = CATALOGUE[code as ErrorCode].reasons as Readonly<
    Record<string, { retryable: boolean }>
  >;
  return reasons[reason]?.retryable === true;
}
