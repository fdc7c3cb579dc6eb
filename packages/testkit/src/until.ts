import { setTimeout as sleep } from 'node:timers/promises';

/** How long a wait may last before it fails, by default: half of a test's 60 s limit. */
export const DEFAULT_WAIT_MS = 30_000;

/** A bound and a polling interval for {@link until}. */
export interface UntilOptions {
  /** Milliseconds before the wait fails (default {@link DEFAULT_WAIT_MS}). */
  readonly withinMs?: number;
  /** Milliseconds between two looks (default 25). */
  readonly everyMs?: number;
}

/**
 * Waits, polling, until `condition` holds; fails with `never happened: <what>` once the bound
 * passed. The bound turns a hang into a failure that says what never happened, well before
 * the test's own limit; it is never a verdict on speed (it is far beyond what any condition
 * needs on a loaded machine).
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: UntilOptions = {},
): Promise<void> {
  const { withinMs = DEFAULT_WAIT_MS, everyMs = 25 } = options;
  const give = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > give)
      throw new Error(`never happened within ${Math.round(withinMs / 1000)} s: ${what}`);
    await sleep(everyMs);
  }
}
