#!/usr/bin/env bash
# Adapted from the reference scripts measured on these machines.
# Throwaway single-node Ceph (1 mon, 1 memstore OSD, no mgr) + radosgw (beast)
# on 127.0.0.1 only. Non-interactive; no systemd; everything under $RGW_DIR.
# Re-runnable: stops any previous instance it started and wipes its data dir.
#
# Env knobs (all optional):
#   RGW_DIR         base dir                 (default ${TMPDIR:-/tmp}/slivingdoc-rgw)
#   RGW_PORT        S3 port                  (default 7480)
#   RGW_MON_PORT    mon msgr2 port           (default 13300)
#   RGW_OBJECTSTORE memstore|bluestore       (default memstore)
#   RGW_ACCESS_KEY / RGW_SECRET_KEY / RGW_BUCKET
set -euo pipefail

BASE=${RGW_DIR:-${TMPDIR:-/tmp}/slivingdoc-rgw}
D=$BASE/cluster                 # everything the cluster writes lives here
PORT=${RGW_PORT:-7480}
MON_PORT=${RGW_MON_PORT:-13300}
STORE=${RGW_OBJECTSTORE:-memstore}
AK=${RGW_ACCESS_KEY:-TESTACCESSKEY0000001}
SK=${RGW_SECRET_KEY:-testsecretkey00000000000000000000000001}
BUCKET=${RGW_BUCKET:-test-bucket}
HERE=$(cd "$(dirname "$0")" && pwd)

t0=$(date +%s.%N)
log() { printf >&2 '[%6.2fs] %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$*"; }

# 0. stop a previous instance (by pid files only) and wipe state
"$HERE/stop-rgw.sh" >/dev/null 2>&1 || true
rm -rf "$D"
for p in "$PORT" "$MON_PORT"; do   # fail fast instead of hanging if a port is taken
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "127.0.0.1:$p already in use" >&2; exit 1; fi
done
mkdir -p "$D"/{run,log,mon/ceph-a,osd/ceph-0,rgw}

FSID=$(cat /proc/sys/kernel/random/uuid)
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
CONF=$D/ceph.conf
export CEPH_CONF=$CONF        # every ceph CLI below uses this conf, never /etc/ceph
cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_PORT]
mon initial members = a
public addr = 127.0.0.1
public network = 127.0.0.1/32
cluster network = 127.0.0.1/32
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
run dir = $D/run
admin socket = $D/run/\$name.asok
pid file = $D/run/\$name.pid
log file = $D/log/\$name.log
crash dir = $D/crash
mon cluster log file = $D/log/\$cluster.\$channel.log
mon data = $D/mon/\$cluster-\$id
osd data = $D/osd/\$cluster-\$id
keyring = /dev/null
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon max pg per osd = 1000
mon data avail warn = 1
mon data avail crit = 0
osd objectstore = $STORE
memstore device bytes = 2147483648
bluestore block path = $D/osd/\$cluster-\$id/block.file
bluestore block create = true
bluestore block size = 4294967296
bluestore cache autotune = false
bluestore cache size = 134217728
osd memory target = 939524096
osd op num shards = 2
osd op num threads per shard = 1
# faster paxos commits => much faster pool creation / osd boot on a 1-mon cluster
paxos propose interval = 0.05
paxos min wait = 0.01
mon osd report timeout = 900
debug ms = 0
debug osd = 0
debug mon = 0
debug rgw = 1

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
# radosgw defaults to ms_mon_client_mode=secure, impossible with auth none
ms mon client mode = crc
rgw data = $D/rgw
rgw thread pool size = 64
rgw dynamic resharding = false
rgw enable usage log = false
log file = $D/log/rgw.log
EOF

# 1. monitor
log "mon mkfs"
monmaptool --create --addv a "[v2:127.0.0.1:$MON_PORT]" --fsid "$FSID" "$D/monmap" >/dev/null
ceph-mon --mkfs -i a --monmap "$D/monmap" >/dev/null
ceph-mon -i a
timeout 30 ceph --connect-timeout 30 mon stat >/dev/null
log "mon up"

# 2. one OSD
OSD_ID=$(ceph osd new "$OSD_UUID")
ceph-osd -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" >/dev/null 2>"$D/log/osd-mkfs.err"
ceph-osd -i "$OSD_ID" 2>>"$D/log/osd.stderr"
for i in $(seq 1 120); do
  ceph osd dump 2>/dev/null | grep -q "^osd.$OSD_ID up" && break
  sleep 0.25
done
ceph osd dump | grep -q "^osd.$OSD_ID up" || { echo "OSD did not come up" >&2; exit 1; }
log "osd.$OSD_ID up ($STORE)"

# 3. S3 user (radosgw-admin creates the rgw metadata pools as needed)
radosgw-admin user create --uid=test --display-name=test \
  --access-key="$AK" --secret-key="$SK" >/dev/null
log "user created"

# 4. radosgw (beast, loopback only)
timeout 60 radosgw -n client.rgw.a   # daemonizes once it has reached the mon
# The daemonized child writes its pid file a moment later; under load that can take seconds.
for i in $(seq 1 240); do
  [[ -s $D/run/client.rgw.a.pid ]] && break
  sleep 0.25
done
RGW_PID=$(cat "$D/run/client.rgw.a.pid")
for i in $(seq 1 240); do
  curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$PORT/" && break
  kill -0 "$RGW_PID" 2>/dev/null || { echo "radosgw died, see $D/log/rgw.log" >&2; exit 1; }
  sleep 0.25
done
log "rgw answering on 127.0.0.1:$PORT"

# curl's sigv4 does not send x-amz-content-sha256 by itself; rgw needs it
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
# 5. bucket via a signed S3 request (first authenticated S3 request)
for i in $(seq 1 40); do
  code=$(curl -s --max-time 5 -o "$D/log/mkbucket.out" -w '%{http_code}' -X PUT \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \
    -H "x-amz-content-sha256: $EMPTY_SHA256" \
    "http://127.0.0.1:$PORT/$BUCKET") || code=000
  [[ $code == 200 || $code == 409 ]] && break
  sleep 0.25
done
[[ $code == 200 || $code == 409 ]] || { echo "bucket create failed: $code" >&2; cat "$D/log/mkbucket.out" >&2; exit 1; }
log "bucket $BUCKET created (HTTP $code) -- ready"

# The cluster's conf lets tests add users with radosgw-admin (the members of a shared bucket).
echo "SLIVINGDOC_TEST_S3_ENDPOINT=http://127.0.0.1:$PORT SLIVINGDOC_TEST_S3_ACCESS_KEY=$AK SLIVINGDOC_TEST_S3_SECRET_KEY=$SK SLIVINGDOC_TEST_S3_BUCKET=$BUCKET SLIVINGDOC_TEST_RGW_CEPH_CONF=$CONF"
