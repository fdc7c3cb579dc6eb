import type { Scrubber } from '@slivingdoc/envelope';
import { RefusalError, refusalLine, startup } from '../config/refusal';
import type { Refusal } from '../config/types';
import { processScrubber } from './scrubber';

/**
 * Writes a startup refusal as its one stderr line (nothing on stdout) and returns its exit
 * code. The reason passes the diagnostic scrubber: defence in depth over reasons that are
 * built not to carry secrets.
 */
export function refuse(refusal: Refusal, scrubber: Scrubber = processScrubber()): number {
  process.stderr.write(refusalLine(refusal, scrubber.text));
  return refusal.exitCode;
}

/** Turns anything thrown during startup into a refusal: a RefusalError as is, else `startup`. */
export function asRefusal(error: unknown): Refusal {
  if (error instanceof RefusalError) return error.toRefusal();
  const detail = error instanceof Error ? error.message : String(error);
  return startup(`could not start: ${detail}`).toRefusal();
}
