/**
 * In-process exclusion between the calls that use an object database (shared holds) and its
 * consolidation (the exclusive hold): a consolidation waits until no call holds the database,
 * and calls arriving while it waits queue behind it, so a steady stream of calls cannot starve
 * it.
 */

/** Releases a hold; idempotent. */
export type AccessRelease = () => void;

export class AccessGate {
  #holders = 0;
  #exclusive = false;
  /** Waiting exclusive holds, first come first served. */
  readonly #writers: (() => void)[] = [];
  /** Shared holds waiting behind an exclusive one (running or waiting). */
  readonly #readers: (() => void)[] = [];

  /** A shared hold: waits while a consolidation runs or waits. */
  async shared(): Promise<AccessRelease> {
    if (this.#exclusive || this.#writers.length > 0)
      await new Promise<void>((resolve) => this.#readers.push(resolve));
    else this.#holders += 1;
    return this.#once(() => {
      this.#holders -= 1;
      this.#wake();
    });
  }

  /** The exclusive hold: waits until every shared hold is released. */
  async exclusive(): Promise<AccessRelease> {
    if (this.#exclusive || this.#holders > 0)
      await new Promise<void>((resolve) => this.#writers.push(resolve));
    else this.#exclusive = true;
    return this.#once(() => {
      this.#exclusive = false;
      this.#wake();
    });
  }

  /** Hands the database on: to the next exclusive hold once idle, else to every waiting call. */
  #wake(): void {
    if (this.#exclusive || this.#holders > 0) return;
    const writer = this.#writers.shift();
    if (writer !== undefined) {
      this.#exclusive = true;
      writer();
      return;
    }
    const readers = this.#readers.splice(0);
    this.#holders += readers.length;
    for (const reader of readers) reader();
  }

  #once(release: () => void): AccessRelease {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  }
}
