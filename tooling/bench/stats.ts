/** Latency summary of one series of samples, in milliseconds. */
export interface LatencySummary {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * Nearest-rank percentile (the smallest sample with at least p % of the samples at or below
 * it): it always returns a measured value, never an interpolation between two runs.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of an empty series');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile out of range: ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** Summarises samples; `undefined` when there are none (a scenario where nothing finished). */
export function summarize(samples: readonly number[]): LatencySummary | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    min: sorted[0]!,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    mean: sum / sorted.length,
  };
}

/** Median of a non-empty series. */
export function median(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
}

/** Events per second over a wall-clock span in milliseconds (0 when nothing was measured). */
export function ratePerSecond(events: number, spanMs: number): number {
  return spanMs > 0 ? (events * 1000) / spanMs : 0;
}
