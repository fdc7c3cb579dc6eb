#!/usr/bin/env bash
# Installs Debian's Chromium for the view's browser tests (playwright-core drives it; no
# browser is ever downloaded by Playwright). Idempotent: does nothing when it is already there.
# Prints the executable's path on its last line.
set -euo pipefail

bin=/usr/bin/chromium
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-chromium: run as root (apt-get), or install Debian's chromium package" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The package lists may be missing or stale on a fresh machine: refresh them once.
if ! apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y --no-install-recommends chromium >/dev/null
fi
"$bin" --version >&2
echo "$bin"
