import type { Refusal } from './types';

/** Exit codes of the refusals that are not usage or configuration (contract §12, docs/cli.md). */
const EXIT_CODES: Partial<Record<Refusal['what'], 1 | 3>> = {
  INCOMPATIBLE_STORE: 3,
  'store unreachable': 1,
};

/** Thrown inside parsing and startup; turned into a {@link Refusal} at the edge. */
export class RefusalError extends Error {
  constructor(
    readonly what: Refusal['what'],
    readonly reason: string,
  ) {
    super(`${what} — ${reason}`);
    this.name = 'RefusalError';
  }

  toRefusal(): Refusal {
    return {
      kind: 'refusal',
      what: this.what,
      reason: this.reason,
      exitCode: EXIT_CODES[this.what] ?? 2,
    };
  }
}

/** A usage refusal (bad command line shape). */
export const usage = (reason: string) => new RefusalError('usage', reason);
/** A configuration refusal (a bad value, a forbidden combination). */
export const configuration = (reason: string) => new RefusalError('configuration', reason);

/** A startup failure that is neither usage nor configuration (nothing was started). */
export const startup = (reason: string) => new RefusalError('startup', reason);

/** The one stderr line of a refusal, newline-terminated; `redact` is the diagnostic scrubber. */
export function refusalLine(refusal: Refusal, redact: (text: string) => string): string {
  const reason = redact(refusal.reason).replace(/[\r\n]+/g, ' ');
  return `slivingdoc: ${refusal.what} — ${reason}\n`;
}
