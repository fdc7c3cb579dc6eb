#!/usr/bin/env bash
# `pnpm bench`: build, start the real S3 server (Ceph RGW via tooling/rgw), run every scenario
# of tooling/bench on the embedded store and on that server with the git baseline beside them,
# print one table, write bench-results/latest.{json,svg}, and stop the server.
#
# Knobs: BENCH_QUICK=1 (or --quick) tiny sizes; BENCH_NO_S3=1 embedded store only;
# BENCH_SKIP_BUILD=1 reuse the current build; BENCH_SCENARIOS=raw-cas,load,notebook,append-burst
# (and view: the web view's figures; review: queue-mode commits and approvals) and BENCH_PARTS=embedded,git,s3 run subsets; BENCH_IN_PROCESS=0 leaves out the in-process
# writers; BENCH_OUT=dir another output directory;
# BENCH_CPU_PROF=dir write a --cpu-prof profile of every server process there;
# BENCH_HUB_STDIO=0 runs only the hub side of the hub scenario (not its 100 stdio processes);
# RGW_PORT / RGW_MON_PORT / RGW_DIR move the S3 server (defaults differ from the test suite's,
# so a bench and a test run can share the machine).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.local/bin:$PATH" TURBO_TELEMETRY_DISABLED=1

if [[ -z ${BENCH_SKIP_BUILD:-} ]]; then
  bash tooling/setup.sh
fi

if [[ -z ${BENCH_NO_S3:-} ]]; then
  export RGW_DIR=${RGW_DIR:-${TMPDIR:-/tmp}/slivingdoc-bench-rgw}
  export RGW_PORT=${RGW_PORT:-7530} RGW_MON_PORT=${RGW_MON_PORT:-13350}
  bash tooling/rgw/install-rgw.sh >&2
  trap 'bash tooling/rgw/stop-rgw.sh --wipe >/dev/null 2>&1 || true' EXIT
  s3_env=$(bash tooling/rgw/start-rgw.sh | tail -n 1)
  # KEY=VALUE pairs (SLIVINGDOC_TEST_S3_*) that tooling/bench/stores.ts reads.
  set -a
  # shellcheck disable=SC1090
  source <(tr ' ' '\n' <<<"$s3_env")
  set +a
fi

# `view` (the web view's figures: its own table and bench-results/view.json) is not a
# scenario of run.ts: take it out of the list run.ts sees.
scenarios=${BENCH_SCENARIOS:-}
others=$(tr ',' '\n' <<<"$scenarios" | grep -vxE 'view|review' | paste -sd, - || true)
if [[ -z $scenarios || -n $others ]]; then
  BENCH_SCENARIOS=$others tooling/node_modules/.bin/tsx tooling/bench/run.ts "$@"
fi
if [[ -z $scenarios || ,$scenarios, == *,view,* ]]; then
  tooling/node_modules/.bin/tsx tooling/bench/view.ts "$@"
fi
if [[ -z $scenarios || ,$scenarios, == *,review,* ]]; then
  tooling/node_modules/.bin/tsx tooling/bench/review.ts "$@"
fi
