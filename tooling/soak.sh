#!/usr/bin/env bash
# Full soak: 20 writer processes × 200 commits on the embedded store and on the
# real S3 server, printing one totals line per store (lost must be 0). Starts the local S3
# server when SLIVINGDOC_TEST_S3_* are unset. Sizes: SLIVINGDOC_SOAK_WRITERS,
# SLIVINGDOC_SOAK_COMMITS; stores: SLIVINGDOC_SOAK_STORES=embedded,s3 (empty: none, only the
# crash matrix); SLIVINGDOC_SOAK_CRASH=0 skips the crash matrix. Then the random-kill soak
# (SLIVINGDOC_KILL_SOAK_STORES, _WRITERS, _COMMITS, _KILLS, _SEED, _FAULT_RATE: see
# reliability/soak/main.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${SLIVINGDOC_TEST_S3_ENDPOINT:-}" && "${SLIVINGDOC_SOAK_STORES-embedded,s3},${SLIVINGDOC_KILL_SOAK_STORES-embedded,s3}" == *s3* ]]; then
  export RGW_DIR=${RGW_DIR:-${TMPDIR:-/tmp}/slivingdoc-soak-rgw} RGW_PORT=${RGW_PORT:-7481} RGW_MON_PORT=${RGW_MON_PORT:-13301}
  trap 'bash tooling/rgw/stop-rgw.sh --wipe >/dev/null 2>&1 || true' EXIT
  bash tooling/rgw/install-rgw.sh
  set -a
  # shellcheck disable=SC1090
  source <(bash tooling/rgw/start-rgw.sh | tail -n 1 | tr ' ' '\n')
  set +a
fi
# The crash matrix and the random-kill soak drive the built app.
pnpm --silent build >/dev/null
cd tooling
node --import tsx --conditions=@slivingdoc/source reliability/soak/main.ts
