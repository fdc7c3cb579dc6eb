/**
 * Calls `release` once nothing has touched it for `idleMs`: a cache that serves a burst of
 * calls gives its memory back when the server goes quiet, instead of holding it while idle.
 * The timer is unref'd, so it never keeps a process alive, and is armed once per idle
 * period (a touch only records the time), so touching it on every read costs one clock read.
 */
export class IdleRelease {
  readonly #idleMs: number;
  readonly #release: () => void;
  #lastTouch = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(idleMs: number, release: () => void) {
    this.#idleMs = idleMs;
    this.#release = release;
  }

  /** Records a use; the release comes `idleMs` after the last one. */
  touch(): void {
    this.#lastTouch = performance.now();
    if (this.#timer === undefined) this.#arm(this.#idleMs);
  }

  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => {
      const idle = performance.now() - this.#lastTouch;
      if (idle < this.#idleMs) return this.#arm(this.#idleMs - idle);
      this.#timer = undefined;
      this.#release();
    }, delayMs);
    this.#timer.unref();
  }
}
