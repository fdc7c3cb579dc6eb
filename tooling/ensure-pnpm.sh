#!/usr/bin/env bash
# Makes the pinned pnpm available on a machine that has only Node 20 and npm.
# Corepack cannot be used here (the registry serves no signatures), so npm installs it.
set -euo pipefail
want=12.4.2
if [[ "$(pnpm --version 2>/dev/null || true)" != "$want" ]]; then
  echo "installing pnpm@$want with npm" >&2
  npm install -g "pnpm@$want" >&2 || {
    # No write access to the global prefix: install under the user's home instead.
    npm install -g --prefix "$HOME/.local" "pnpm@$want" >&2
    export PATH="$HOME/.local/bin:$PATH"
  }
fi
