#!/usr/bin/env bash
# README command (1): set up, then run the MCP server over stdio on the embedded store.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tooling/setup.sh
exec node apps/slivingdoc/dist/cli.js serve "$@"
