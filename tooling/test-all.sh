#!/usr/bin/env bash
# README command (2): set up, check, start the local S3 server, run every suite, stop it.
# Always ends with one line "N passed, N failed, N skipped" totalling every suite; each static
# check (typecheck, format/lint, layer check) counts as one test, and a failed set-up as one
# failure, so a run that tested nothing can never look green.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.local/bin:$PATH" TURBO_TELEMETRY_DISABLED=1
mkdir -p .tmp
rgw_env=.tmp/rgw.env
stage=setup
finish() {
  local code=$?
  # A set-up that failed leaves the background installs running: they end before RGW stops.
  [[ -n ${preparing:-} ]] && { kill "$preparing" 2>/dev/null; wait "$preparing" 2>/dev/null; } || true
  bash tooling/rgw/stop-rgw.sh --wipe >/dev/null 2>&1 || true
  if [[ $stage != done ]]; then
    echo "test run aborted during $stage"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
  fi
  exit "$code"
}
trap finish EXIT

# What the suites need besides the build (the real S3 server, Chromium, Node 24) is installed
# and started in the background while the packages install, build and pass the static checks:
# the installs wait on the network and dpkg, the build and checks on the CPU, so overlapping
# them takes the installs' minute on a fresh machine off the critical path. Their output is
# shown once the checks are done. None of them uses the workspace's packages.
prepare_log=.tmp/prepare.log
node24_path=.tmp/node-24.path
prepare() {
  echo "== local S3 server (Ceph RADOS Gateway)"
  bash tooling/rgw/install-rgw.sh
  bash tooling/rgw/start-rgw.sh | tail -n 1 >"$rgw_env"
  echo "== Chromium for the browser tests (Debian's package)"
  bash tooling/browser/install-chromium.sh >/dev/null
  echo "== Node 24 (npm registry's node package)"
  bash tooling/node/install-node.sh 24 >"$node24_path"
}
rm -f "$rgw_env" "$node24_path"
prepare >"$prepare_log" 2>&1 &
preparing=$!

bash tooling/setup.sh

stage=checks
checks_passed=0
checks_failed=0
check() {
  echo "== check: $1"
  if "${@:2}"; then checks_passed=$((checks_passed + 1)); else checks_failed=$((checks_failed + 1)); fi
}
check typecheck pnpm exec tsc -p tsconfig.check.json
check format-and-lint pnpm exec biome ci --colors=off .
check layers node tooling/check-layers.mjs

stage="set-up (S3 server, Chromium, Node 24)"
prepared=0
wait "$preparing" || prepared=$?
preparing=
cat "$prepare_log"
[[ $prepared -eq 0 ]] || exit "$prepared"
# KEY=VALUE pairs that the S3 suites read (SLIVINGDOC_TEST_S3_*).
set -a
# shellcheck disable=SC1090
source <(tr ' ' '\n' <"$rgw_env")
set +a
node24=$(cat "$node24_path")

stage=tests
rm -f .tmp/vitest-*.json
status=0
echo "== every suite on Node $(node --version)"
pnpm exec vitest run --reporter=default --reporter=json \
  --outputFile.json=.tmp/vitest-node-default.json || status=$?
# The end-to-end suites (they drive the built bin through real processes) once more on Node 24:
# the bin, its children and vitest's workers all run on it (docs/development.md, "Node versions").
echo "== end-to-end suites on Node $("$node24" --version)"
PATH="$(dirname "$node24"):$PATH" "$node24" node_modules/vitest/vitest.mjs run \
  --project slivingdoc --project tooling apps/slivingdoc/test tooling/test/reliability- \
  --reporter=default --reporter=json --outputFile.json=.tmp/vitest-node-24.json || status=$?
stage=done
node tooling/summarize-vitest.mjs "$checks_passed" "$checks_failed" .tmp/vitest-node-default.json .tmp/vitest-node-24.json || status=1
exit "$status"
