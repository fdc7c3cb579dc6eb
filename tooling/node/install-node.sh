#!/usr/bin/env bash
# Installs a pinned Node release from the npm registry's `node` package (its install step adds
# the platform binary, itself an npm package: nothing is downloaded from anywhere else) into
# .tmp/node-<major>/ and prints the path of its `node` binary on stdout. Idempotent: an
# existing install of the pinned version is reused. Progress goes to stderr.
#
# Usage: bash tooling/node/install-node.sh MAJOR   (MAJOR: one of the keys of `pinned` below)
set -euo pipefail
cd "$(dirname "$0")/../.."
declare -A pinned=([22]=22.23.3 [24]=24.21.0)
major=${1:?usage: install-node.sh MAJOR}
version=${pinned[$major]:-}
if [[ -z $version ]]; then
  echo "install-node.sh: no pinned release for Node $major (known: ${!pinned[*]})" >&2
  exit 2
fi
prefix=.tmp/node-$major
bin=$prefix/node_modules/node/bin/node
if [[ ! -x $bin || $("$bin" --version) != "v$version" ]]; then
  echo "installing Node $version from the npm registry into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error "node@$version" >&2
fi
if [[ $("$bin" --version) != "v$version" ]]; then
  echo "install-node.sh: $bin does not report v$version" >&2
  exit 1
fi
realpath "$bin"
