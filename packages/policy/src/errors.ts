import { DomainError } from '@slivingdoc/envelope';

/**
 * INVALID_REQUEST reasons this package decides (contract §3). A subset of the envelope's
 * catalogue; the engine maps a {@link PolicyError} onto the catalogue by its `reason`.
 */
export type PolicyReason =
  | 'PATH_INVALID'
  | 'PATH_OUTSIDE_ROOT'
  | 'PATH_SYMLINK'
  | 'PATH_NOT_DIRECTORY'
  | 'NESTED_NOTEBOOK'
  | 'MESSAGE_INVALID';

/**
 * A request refused by the path or message rules: the catalogued `INVALID_REQUEST` domain
 * error with one of the {@link PolicyReason} tokens, ready for the envelope as is.
 */
export class PolicyError extends DomainError<'INVALID_REQUEST'> {
  declare readonly reason: PolicyReason;
  constructor(reason: PolicyReason, message: string, options?: { cause?: unknown }) {
    super({ code: 'INVALID_REQUEST', reason, message, cause: options?.cause });
    this.name = 'PolicyError';
  }
}

/**
 * A writable/read-only set refused at startup (contract §5): an invalid entry or one entry in
 * both sets. The app turns it into its one-line configuration refusal (exit 2).
 */
export class PathSetError extends Error {
  override readonly name = 'PathSetError';
  constructor(
    readonly entry: string,
    message: string,
  ) {
    super(message);
  }
}
