/**
 * What went wrong with a store call, in the terms the layers above need to decide:
 * - `precondition-failed`: a conditional write lost (the key exists, or no longer holds the ETag);
 * - `not-found`: the key is absent where the call needs it present;
 * - `ambiguous`: the request was sent and its outcome is unknown (5xx, reset, timeout);
 * - `unreachable`: the request never reached the store (refused, DNS, connect timeout);
 * - `access-denied`: credentials or permissions were refused;
 * - `other`: any other store failure (throttling, unexpected answers, local I/O errors).
 */
export type StoreErrorKind =
  | 'precondition-failed'
  | 'not-found'
  | 'ambiguous'
  | 'unreachable'
  | 'access-denied'
  | 'other';

/**
 * The one error every store throws. `message` names the operation and a status token only,
 * never a key, a credential or a local path, so it is safe to show; `cause` keeps the full
 * underlying error for operator logs.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  /** The semantic outcome the engine maps onto the catalogue. */
  readonly kind: StoreErrorKind;
  /** A short stable token naming the store's own answer (`412`, `AccessDenied`, `ECONNRESET`). */
  readonly code: string | undefined;
  /**
   * True when asking again may well succeed: always for `ambiguous` and `unreachable`; for
   * `other` when the store said so (5xx, throttling, a reset or timeout of a read), never for
   * a definite answer or a local I/O error.
   */
  readonly transient: boolean;

  constructor(
    kind: StoreErrorKind,
    message: string,
    opts: { code?: string; cause?: unknown; transient?: boolean } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.code = opts.code;
    this.transient = kind === 'ambiguous' || kind === 'unreachable' || opts.transient === true;
  }
}

/** True when `value` is a {@link StoreError}, optionally of one of the given kinds. */
export function isStoreError(value: unknown, ...kinds: StoreErrorKind[]): value is StoreError {
  return value instanceof StoreError && (kinds.length === 0 || kinds.includes(value.kind));
}
