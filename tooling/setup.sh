#!/usr/bin/env bash
# Installs the workspace's packages and builds every package. Output goes to stderr so a
# caller's stdout stays clean (the server speaks MCP on stdout).
set -euo pipefail
cd "$(dirname "$0")/.."
source tooling/ensure-pnpm.sh
export PATH="$HOME/.local/bin:$PATH" TURBO_TELEMETRY_DISABLED=1
if [[ -n "${CI:-}" ]]; then
  pnpm install --frozen-lockfile >&2
else
  pnpm install --prefer-offline >&2
fi
pnpm exec turbo run build --output-logs=errors-only >&2
