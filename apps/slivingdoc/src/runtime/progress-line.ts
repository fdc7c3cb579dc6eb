import type { Progress, ProgressListener } from '@slivingdoc/engine';

/** A run shorter than this shows no progress at all (contract §12: "long runs"). */
const SHOW_AFTER_MS = 1000;
/** Redraws at most this often. */
const REDRAW_MS = 100;

const ERASE_LINE = '\r\x1b[K';

/** A progress line on a terminal's stderr: shown for long runs, erased before the report. */
export interface ProgressLine {
  /** The listener to hand to the engine; undefined when stderr is not a terminal. */
  listener: ProgressListener | undefined;
  /** Erases the line if it was drawn. */
  clear(): void;
}

const VERB: Record<Progress['phase'], string> = { scan: 'scanning', write: 'writing' };

/**
 * The progress line of pull, commit and revert: `slivingdoc: writing 1,234 of 5,000 files` on
 * stderr, only when stderr is a terminal and the run has lasted a second, redrawn in place.
 */
export function createProgressLine(
  stream: NodeJS.WriteStream = process.stderr,
  now: () => number = Date.now,
): ProgressLine {
  if (stream.isTTY !== true) return { listener: undefined, clear() {} };
  const started = now();
  let drawn = false;
  let lastDraw = 0;
  const count = new Intl.NumberFormat('en-US');
  return {
    listener(progress) {
      const at = now();
      if (at - started < SHOW_AFTER_MS) return;
      if (at - lastDraw < REDRAW_MS && progress.done !== progress.total) return;
      lastDraw = at;
      drawn = true;
      const { phase, done, total } = progress;
      stream.write(
        `${ERASE_LINE}slivingdoc: ${VERB[phase]} ${count.format(done)} of ${count.format(total)} files`,
      );
    },
    clear() {
      if (drawn) stream.write(ERASE_LINE);
      drawn = false;
    },
  };
}
