#!/usr/bin/env bash
# Installs Ceph's RADOS Gateway (and a one-node cluster's daemons) from Debian's packages
# when they are missing. About 41 s and 61 MB the first time; a no-op afterwards.
set -euo pipefail
need=()
for bin in ceph-mon ceph-osd radosgw radosgw-admin monmaptool curl; do
  command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
done
[[ ${#need[@]} -eq 0 ]] && exit 0
echo "installing the local S3 server (missing: ${need[*]})" >&2
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq >&2
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  ceph-mon ceph-osd radosgw ceph-common curl >&2
