#!/usr/bin/env bash
# Long fuzz run: the same fast-check properties the normal suite runs bounded,
# with SLIVINGDOC_FUZZ_RUNS runs each (default 20,000). SLIVINGDOC_FUZZ_SEED=<n> replays a
# reported counterexample. A hang fails through the per-test timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
export SLIVINGDOC_FUZZ_RUNS=${SLIVINGDOC_FUZZ_RUNS:-20000}
echo "fuzz: ${SLIVINGDOC_FUZZ_RUNS} runs per target${SLIVINGDOC_FUZZ_SEED:+, seed $SLIVINGDOC_FUZZ_SEED}" >&2
exec pnpm exec vitest run --project tooling --testTimeout=1800000 test/reliability-fuzz.test.ts "$@"
