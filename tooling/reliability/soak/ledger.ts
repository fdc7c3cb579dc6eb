/**
 * What one soak writer records: every line it was told OK about, what the conflict
 * resolver removed, and its counters. The checker reads these files after the run.
 */
export interface AcknowledgedLine {
  /** Notebook path of the file the line was written into. */
  file: string;
  /** The line's text (unique across the whole run). */
  line: string;
  /** Generation the OK result reported. */
  generation: number;
}

/** One conflict the writer resolved by keeping both sides. */
export interface Resolution {
  file: string;
  /** Lines the resolver removed: only marker lines when keeping both sides. */
  removed: string[];
}

/** Counters of one writer. */
export interface WriterTotals {
  /** Commits that returned OK. */
  commits: number;
  /** CONTENT_CONFLICT answers (each resolved, then committed again). */
  conflicts: number;
  /** Compare-and-swap attempts that lost the race inside the engine (412). */
  retries: number;
  /** REMOTE_BUSY answers (each followed by another commit). */
  remoteBusy: number;
  /** Other retryable answers (STORAGE_FAILURE, PATH_BUSY, RECOVERY_FAILURE) that were retried. */
  transient: number;
}

/** The whole ledger of one writer, written as JSON when it finishes. */
export interface WriterLedger {
  writer: number;
  acknowledged: AcknowledgedLine[];
  resolutions: Resolution[];
  totals: WriterTotals;
  /** Generations of OK commits that published (each must be unique across writers). */
  publishedGenerations: number[];
  /** Anomalies seen (an uncatalogued or unexpected answer); the checker fails on any. */
  anomalies: string[];
}
