#!/usr/bin/env bash
# README command (2): set up, check, start the local S3 server, run every suite, stop it.
# Ends with one line "N passed, N failed, N skipped" totalling every suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.local/bin:$PATH" TURBO_TELEMETRY_DISABLED=1
bash tooling/setup.sh

echo "== static checks (typecheck, lint, layers)"
pnpm exec turbo run typecheck --output-logs=errors-only
pnpm exec biome ci .
node tooling/check-layers.mjs

echo "== local S3 server (Ceph RADOS Gateway)"
bash tooling/rgw/install-rgw.sh
rgw_env=$(mktemp)
cleanup() { bash tooling/rgw/stop-rgw.sh --wipe >/dev/null 2>&1 || true; rm -f "$rgw_env"; }
trap cleanup EXIT
bash tooling/rgw/start-rgw.sh | tee "$rgw_env"
# The last line is KEY=VALUE pairs that the S3 suites read (SLIVINGDOC_TEST_S3_*).
set -a
# shellcheck disable=SC1090
source <(tail -n 1 "$rgw_env" | tr ' ' '\n')
set +a

echo "== test suites"
mkdir -p .tmp
status=0
pnpm exec vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json || status=$?
node tooling/summarize-vitest.mjs .tmp/vitest.json || status=$?
exit "$status"
