/** Full-jitter exponential backoff between CAS attempts (contract §9). */

const FIRST_CEILING_MS = 25;
const MAX_CEILING_MS = 2_000;

/** The ceiling before retry number `retry` (0-based): 25 ms, doubling, at most 2 s. */
export function backoffCeiling(retry: number): number {
  return Math.min(MAX_CEILING_MS, FIRST_CEILING_MS * 2 ** Math.min(retry, 16));
}

/** Injectable randomness and sleep, so tests are deterministic. */
export interface BackoffClock {
  random(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Real time and `Math.random`. */
export const SYSTEM_CLOCK: BackoffClock = {
  random: Math.random,
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** Sleeps a uniformly random time in [0, ceiling) before retry number `retry`. */
export function backoff(retry: number, clock: BackoffClock, signal?: AbortSignal): Promise<void> {
  return clock.sleep(Math.floor(clock.random() * backoffCeiling(retry)), signal);
}
