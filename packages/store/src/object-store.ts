/** An object of a pack namespace, as `list` reports it. */
export interface ListedObject {
  /** Relative key (`packs/increments/…`). */
  key: string;
  /** Size in bytes. */
  size: number;
}

/**
 * The ways a store can phrase its conditional writes on the wire, for a backend whose servers
 * disagree (each driver names its own forms; the S3 driver's are how `If-Match` quotes the
 * ETag). The probe tries them in order and keeps the first the server honours.
 */
export interface ConditionForms {
  /** The forms to try, the one in use first. */
  candidates(): readonly string[];
  /** Sends every later conditional write in `form`, one of the candidates. */
  use(form: string): void;
}

/**
 * The object-store contract every backend meets (contract §7). Keys are relative to the store's
 * prefix and must follow the key grammar: conditional writes take `current` or a probe key,
 * immutable writes and streamed reads take pack keys. A key outside the grammar is a
 * programming error (`TypeError`); every store failure is a `StoreError` with a semantic kind.
 */
export interface ObjectStore {
  /** Stable text naming backend, location and prefix (e.g. `s3 http://host:7480 bucket prefix`). */
  readonly identity: string;
  /** Bytes and ETag of `key`, or `undefined` when absent. Reads see every acknowledged write. */
  get(key: string): Promise<{ body: Uint8Array; etag: string } | undefined>;
  /** Writes `key` only if absent; `precondition-failed` when it exists. */
  createIfAbsent(key: string, body: Uint8Array): Promise<{ etag: string }>;
  /**
   * Replaces `key` only if it still holds `etag` (as `get` returned it); `precondition-failed`
   * when it holds anything else or is absent. A 5xx or a dropped connection is `ambiguous`.
   */
  replaceIfMatch(key: string, body: Uint8Array, etag: string): Promise<{ etag: string }>;
  /**
   * Uploads a pack with user metadata. An ambiguous outcome is settled by reading the key back
   * and comparing size and SHA-256; only a proven upload returns.
   */
  putImmutable(key: string, body: Uint8Array, metadata: Record<string, string>): Promise<void>;
  /** A pack's bytes as a stream, or `undefined` when absent. */
  getStream(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /**
   * Every object under the pack namespaces (`packs/`) or every proposal (`proposals/`), all
   * continuations followed.
   */
  list(namespace: 'packs/' | 'proposals/'): Promise<ListedObject[]>;
  /** Deletes pack, probe and proposal keys (never `current` or `review`), in batches of at most 1,000. */
  deleteMany(keys: string[]): Promise<void>;
  /** Present when the store can phrase conditions in more than one way (the probe picks). */
  readonly conditionForms?: ConditionForms;
  /** Releases sockets and handles. */
  close?(): Promise<void>;
}

/** Largest number of keys one delete batch carries (the S3 `DeleteObjects` limit). */
export const DELETE_BATCH_SIZE = 1000;

/** Splits `items` into consecutive batches of at most `size`. */
export function batches<T>(items: readonly T[], size: number = DELETE_BATCH_SIZE): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
