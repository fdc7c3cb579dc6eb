/**
 * INVALID_REQUEST reasons this package decides (SPEC §3). A subset of the envelope's
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
 * A request refused by the path or message rules. Always `INVALID_REQUEST` with one of the
 * {@link PolicyReason} tokens.
 *
 * Defined locally because `@slivingdoc/envelope` did not export `DomainError` yet when this
 * package was written; the engine maps `code` + `reason` onto the catalogue unchanged.
 */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  readonly code = 'INVALID_REQUEST' as const;
  constructor(
    readonly reason: PolicyReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A writable/read-only set refused at startup (SPEC §5): an invalid entry or one entry in
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
