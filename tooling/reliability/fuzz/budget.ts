import type { Parameters } from 'fast-check';

/**
 * How long a fuzz target runs. The normal test suite uses each target's small default;
 * `pnpm fuzz` (tooling/fuzz.sh) raises every target to `SLIVINGDOC_FUZZ_RUNS` runs.
 * `SLIVINGDOC_FUZZ_SEED` replays a reported failure (fast-check prints seed and path).
 */
export function fuzzParameters<T>(defaultRuns: number): Parameters<T> {
  const runs = Number.parseInt(process.env.SLIVINGDOC_FUZZ_RUNS ?? '', 10);
  const seed = Number.parseInt(process.env.SLIVINGDOC_FUZZ_SEED ?? '', 10);
  return {
    numRuns: Number.isSafeInteger(runs) && runs > 0 ? runs : defaultRuns,
    ...(Number.isSafeInteger(seed) ? { seed } : {}),
  };
}
