import type { EngineDetail, ErrorCode, ReasonOf } from './catalogue';
import { reasonSpec } from './catalogue';
import type { FileIssue, RecoveryReport } from './results';

/**
 * The constructor argument of a DomainError. Distributes over the codes so that a reason of
 * another code, a `detail` outside ENGINE_FAILED or a `recovery` outside RECOVERY_FAILURE
 * does not type-check, even when `code` is a union.
 */
export type DomainErrorInit<C extends ErrorCode = ErrorCode> = {
  [K in C]: {
    code: K;
    reason: ReasonOf<K>;
    message: string;
    files?: FileIssue[];
    detail?: K extends 'ENGINE_FAILED' ? EngineDetail : never;
    recovery?: K extends 'RECOVERY_FAILURE' ? RecoveryReport : never;
    cause?: unknown;
  };
}[C];

const DOMAIN_ERROR = Symbol.for('slivingdoc.DomainError');

/**
 * What the engine (and the decoder) throw for every catalogued failure. It carries no
 * diagnosticId: that is per call and added by `buildError`.
 */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly reason: ReasonOf<C>;
  readonly files: FileIssue[];
  readonly detail?: EngineDetail;
  readonly recovery?: RecoveryReport;
  /** Brand checked by `isDomainError`, so a second copy of this module still recognises it. */
  readonly [DOMAIN_ERROR] = true;

  constructor(init: DomainErrorInit<C>) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    // Fails loudly when a caller cast its way past the types.
    reasonSpec(init.code, init.reason as ReasonOf<C>);
    this.name = 'DomainError';
    this.code = init.code;
    this.reason = init.reason as ReasonOf<C>;
    this.files = init.files ?? [];
    if (init.detail !== undefined) this.detail = init.detail;
    if (init.recovery !== undefined) this.recovery = init.recovery;
  }
}

/**
 * A DomainError of any one code: a union over the codes, so checking `err.code` narrows
 * `err.reason` (and `detail`/`recovery`) to that code's, which `DomainError<ErrorCode>` does
 * not (a generic class is no discriminated union).
 */
export type AnyDomainError = { [C in ErrorCode]: DomainError<C> }[ErrorCode];

/**
 * True for a DomainError, including one built by another copy of this package. Narrows to
 * {@link AnyDomainError}: `if (isDomainError(e) && e.code === 'CONTENT_CONFLICT')` leaves
 * `e.reason` as `'MERGE_CONFLICT' | 'UNRESOLVED_MARKERS'`.
 */
export function isDomainError(value: unknown): value is AnyDomainError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [DOMAIN_ERROR]?: unknown })[DOMAIN_ERROR] === true
  );
}
