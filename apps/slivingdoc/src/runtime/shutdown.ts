import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

/** contract §12: shutdown waits at most 30 s for in-flight calls and for releasing locks. */
export const SHUTDOWN_BUDGET_MS = 30_000;

/** The steps of an orderly shutdown, in order. */
export interface ShutdownSteps {
  /** Stops accepting calls and cancels in-flight ones (closing the MCP transport does both). */
  stopAccepting(): Promise<void>;
  /** Resolves true when every in-flight call settled before `deadline`. */
  drain(deadline: Promise<void>): Promise<boolean>;
  /** Closes the service (releases locks) and the store. */
  close(): Promise<void>;
}

/**
 * Runs the shutdown once, whatever asks for it first (SIGINT, SIGTERM, the host closing
 * stdin), within {@link SHUTDOWN_BUDGET_MS}; resolves when it is safe to exit.
 */
export function createShutdown(steps: ShutdownSteps, log: Logger): (why: string) => Promise<void> {
  let running: Promise<void> | undefined;
  return (why) => {
    running ??= (async () => {
      log.info({ why }, 'shutting down');
      // Referenced on purpose: an in-flight call that holds no handle of its own must not let the
      // event loop empty (and the process end) before close() releases the locks; the caller
      // exits explicitly once this resolves.
      const deadline = sleep(SHUTDOWN_BUDGET_MS);
      await steps
        .stopAccepting()
        .catch((err: unknown) => log.warn({ err }, 'closing the transport failed'));
      if (!(await steps.drain(deadline))) {
        log.warn('in-flight calls did not finish within the shutdown budget');
      }
      const closed = steps.close().then(
        () => true,
        (err: unknown) => {
          log.error({ err }, 'closing the notebook service failed');
          return true;
        },
      );
      if (!(await Promise.race([closed, deadline.then(() => false)]))) {
        log.warn('closing the notebook service did not finish within the shutdown budget');
      }
      log.info('stopped');
    })();
    return running;
  };
}

/**
 * SIGINT, SIGTERM and the end of the transport, whichever comes first, from the very start:
 * a signal during start-up waits for it and then shuts down like any other (so a session
 * directory is settled rather than left behind).
 */
export function stopRequests(): { first: Promise<string>; request(why: string): void } {
  let request!: (why: string) => void;
  const first = new Promise<string>((resolve) => {
    request = resolve;
  });
  process.once('SIGINT', () => request('SIGINT'));
  process.once('SIGTERM', () => request('SIGTERM'));
  return { first, request };
}
