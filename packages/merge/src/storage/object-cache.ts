import type { GitObject, Oid } from '../model/object-format';

/**
 * A byte-bounded cache of decoded objects, evicting the least recently used. Repeated reads of
 * the same trees and blobs (every merge re-reads A, L and R trees) then skip inflate and SHA-1.
 */
export class ObjectCache {
  readonly #entries = new Map<Oid, GitObject>();
  readonly #limitBytes: number;
  #bytes = 0;

  constructor(limitBytes: number) {
    this.#limitBytes = limitBytes;
  }

  get(oid: Oid): GitObject | undefined {
    const hit = this.#entries.get(oid);
    if (hit) {
      this.#entries.delete(oid);
      this.#entries.set(oid, hit);
    }
    return hit;
  }

  set(oid: Oid, object: GitObject): void {
    const size = object.content.byteLength;
    if (size > this.#limitBytes / 4 || this.#entries.has(oid)) return;
    this.#entries.set(oid, object);
    this.#bytes += size;
    for (const [key, value] of this.#entries) {
      if (this.#bytes <= this.#limitBytes) break;
      this.#entries.delete(key);
      this.#bytes -= value.content.byteLength;
    }
  }
}
