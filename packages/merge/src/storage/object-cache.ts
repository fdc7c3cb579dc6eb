import type { GitObject, Oid } from '../model/object-format';
import { IdleRelease } from './idle-release';

/**
 * How long a cache stays filled after its last use. Long enough for the calls of one burst
 * (and a commit right after its pull) to share it; short enough that an idle server lets go
 * of it well before the bench's idle reading, 5 s after its last call (the memory itself comes
 * back at V8's next collection, docs/performance.md, "Idle caches").
 */
export const CACHE_IDLE_RELEASE_MS = 2000;

/**
 * A byte-bounded cache of decoded objects, evicting the least recently used. Repeated reads of
 * the same trees and blobs (every merge re-reads A, L and R trees) then skip inflate and SHA-1.
 * Emptied once unused for `idleMs`, so an idle server keeps none of it.
 */
export class ObjectCache {
  readonly #entries = new Map<Oid, GitObject>();
  readonly #limitBytes: number;
  readonly #idle: IdleRelease;
  #bytes = 0;

  constructor(limitBytes: number, idleMs = CACHE_IDLE_RELEASE_MS) {
    this.#limitBytes = limitBytes;
    this.#idle = new IdleRelease(idleMs, () => this.clear());
  }

  get(oid: Oid): GitObject | undefined {
    const hit = this.#entries.get(oid);
    if (hit) {
      this.#idle.touch();
      this.#entries.delete(oid);
      this.#entries.set(oid, hit);
    }
    return hit;
  }

  set(oid: Oid, object: GitObject): void {
    const size = object.content.byteLength;
    if (size > this.#limitBytes / 4 || this.#entries.has(oid)) return;
    this.#idle.touch();
    this.#entries.set(oid, object);
    this.#bytes += size;
    for (const [key, value] of this.#entries) {
      if (this.#bytes <= this.#limitBytes) break;
      this.#entries.delete(key);
      this.#bytes -= value.content.byteLength;
    }
  }

  /** The bytes of content held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Keeps only the entries whose oid passes `keep` (the rest are no longer on disk). */
  retain(keep: (oid: Oid) => boolean): void {
    for (const [oid, object] of this.#entries) {
      if (keep(oid)) continue;
      this.#entries.delete(oid);
      this.#bytes -= object.content.byteLength;
    }
  }

  /** Drops every entry (they are all on disk: a later read decodes them again). */
  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}
