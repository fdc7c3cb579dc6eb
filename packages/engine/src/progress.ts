/**
 * Progress of a long pull or commit, for a terminal's progress line. Carried through the call
 * with AsyncLocalStorage so the scan and write loops can report without every module passing a
 * listener along; with no listener a report is one store lookup.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** One progress report: `done` of `total` files in the named phase. */
export interface Progress {
  /** `scan`: files of L read and hashed; `write`: files of L written. */
  phase: 'scan' | 'write';
  done: number;
  total: number;
}

/** Receives progress reports; must be cheap and never throw. */
export type ProgressListener = (progress: Progress) => void;

const listeners = new AsyncLocalStorage<ProgressListener>();

/** Runs `work` with `listener` receiving the progress of everything it awaits. */
export function withProgress<T>(listener: ProgressListener | undefined, work: () => T): T {
  return listener === undefined ? work() : listeners.run(listener, work);
}

/** Reports progress to the current call's listener, if any. */
export function reportProgress(phase: Progress['phase'], done: number, total: number): void {
  const listener = listeners.getStore();
  if (listener === undefined) return;
  try {
    listener({ phase, done, total });
  } catch {
    // A display problem never fails the operation.
  }
}
