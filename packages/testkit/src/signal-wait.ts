import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { type UntilOptions, until } from './until';

/** The `/proc/<pid>/status` of a process that is still running, or undefined once it ended. */
function liveStatus(pid: number): string | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  // A zombie (exited, not yet reaped) or dead process catches nothing any more.
  return /^State:\s*[ZX]/m.test(status) ? undefined : status;
}

/**
 * Whether process `pid` has a handler installed for `signal` now (Linux: the `SigCgt` mask of
 * `/proc/<pid>/status`). Node catches a signal only while some listener waits for it, so this
 * tells from outside, without a clock, that a child reached the point where it waits for that
 * signal: the engine's `pause` failpoint listens for SIGUSR2 only while it holds an operation,
 * and the same signal sent a moment earlier would kill the process (its default action).
 */
export function catchesSignal(pid: number, signal: NodeJS.Signals): boolean {
  const mask = liveStatus(pid)?.match(/^SigCgt:\s*([0-9a-f]+)$/m)?.[1];
  if (mask === undefined) return false;
  return ((BigInt(`0x${mask}`) >> BigInt(constants.signals[signal] - 1)) & 1n) === 1n;
}

/**
 * Waits (polling) until process `pid` catches `signal`; throws once the process has ended
 * without doing so, or when it still does not after `options.withinMs` (30 s by default).
 */
export async function untilCatching(
  pid: number,
  signal: NodeJS.Signals,
  options: UntilOptions = {},
): Promise<void> {
  await until(
    () => {
      if (liveStatus(pid) === undefined)
        throw new Error(`process ${pid} ended before it caught ${signal}`);
      return catchesSignal(pid, signal);
    },
    `process ${pid} caught ${signal}`,
    { everyMs: 10, ...options },
  );
}
