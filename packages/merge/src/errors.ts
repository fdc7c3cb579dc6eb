/**
 * Typed errors of the merge engine. Each carries a stable `kind` token the engine maps onto
 * the catalogue (`@slivingdoc/envelope`); messages are prose for logs and may change.
 * Messages may name object ids: the engine must never copy them into caller-facing text.
 */

/** Why a tree or a tree input was refused. */
export type TreeErrorKind = 'INVALID_PATH' | 'INVALID_MODE' | 'PATH_CONFLICT' | 'MALFORMED_TREE';

/** A tree (given as a path map, or read from the object database) breaks the notebook's tree rules. */
export class TreeError extends Error {
  override readonly name = 'TreeError';
  /** Stable token saying what is wrong. */
  readonly kind: TreeErrorKind;
  /** The offending notebook path (or tree entry name) when known. */
  readonly path: string | undefined;
  constructor(kind: TreeErrorKind, message: string, path?: string) {
    super(message);
    this.kind = kind;
    this.path = path;
  }
}

/** An object the caller asked for is not in the object database, or has another type. */
export class ObjectMissingError extends Error {
  override readonly name = 'ObjectMissingError';
  readonly kind = 'MISSING_OBJECT' as const;
  /** The object id that could not be read. */
  readonly oid: string;
  constructor(oid: string, message = `object ${oid} is not in the object database`) {
    super(message);
    this.oid = oid;
  }
}

/** A commit object that cannot be parsed as a commit of this format. */
export class CommitFormatError extends Error {
  override readonly name = 'CommitFormatError';
  readonly kind = 'MALFORMED_COMMIT' as const;
}

/** Why a pack was refused. */
export type PackErrorKind =
  | 'TRUNCATED'
  | 'CORRUPT'
  | 'CHECKSUM_MISMATCH'
  | 'UNSUPPORTED'
  | 'UNRESOLVED_DELTA';

/** A pack is not a well-formed git pack (or cannot be indexed); nothing of it was made readable. */
export class PackError extends Error {
  override readonly name = 'PackError';
  /** Stable token saying what is wrong with the pack. */
  readonly kind: PackErrorKind;
  constructor(kind: PackErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/** A blob of the closure that is present but is not notebook text (contract §4). */
export interface InvalidBlob {
  oid: string;
  /** Notebook path the blob was reached through. */
  path: string;
  problem: 'NOT_UTF8' | 'CONTAINS_NUL';
}

/** The closure of a head is incomplete or holds content that is not notebook state. */
export class ClosureError extends Error {
  override readonly name = 'ClosureError';
  /** `MISSING_OBJECT` when any object is absent, else `INVALID_CONTENT`. */
  readonly kind: 'MISSING_OBJECT' | 'INVALID_CONTENT';
  /** Every absent object id found by the walk. */
  readonly missing: string[];
  /** Blobs present but not valid notebook text. */
  readonly invalid: InvalidBlob[];
  constructor(missing: string[], invalid: InvalidBlob[], cause?: unknown) {
    const what =
      missing.length > 0
        ? `${missing.length} object(s) missing: ${missing.slice(0, 5).join(', ')}`
        : `${invalid.length} blob(s) are not notebook text: ${invalid
            .slice(0, 5)
            .map((b) => `${b.path} (${b.problem})`)
            .join(', ')}`;
    super(`head closure incomplete: ${what}`, { cause });
    this.kind = missing.length > 0 ? 'MISSING_OBJECT' : 'INVALID_CONTENT';
    this.missing = missing;
    this.invalid = invalid;
  }
}
