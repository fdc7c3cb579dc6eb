#!/usr/bin/env bash
# Installs Debian's Chromium for the view's browser tests (playwright-core drives it; no
# browser is ever downloaded by Playwright), as root or through sudo, like the S3 server
# (tooling/rgw/install-rgw.sh). Idempotent: a no-op when it is already there. Progress goes to
# stderr; the executable's path is printed on stdout.
set -euo pipefail
bin=/usr/bin/chromium
if [[ ! -x $bin ]]; then
  echo "installing Debian's chromium for the browser tests" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  # The package lists may be missing or stale on a fresh machine: refresh them once.
  if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium >&2; then
    "${sudo_cmd[@]}" apt-get update -qq >&2
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium >&2
  fi
fi
"$bin" --version >&2
echo "$bin"
