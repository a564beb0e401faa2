#!/usr/bin/env bash
# Start a real S3 server for tests: single-node Ceph (1 mon, 1 memstore OSD) + radosgw on loopback.
# Installs Ceph from Debian's packages when it is missing (needs root). All state lives in a fresh
# temporary directory. On success prints, on stdout, lines a caller can export:
#   LAKE_TEST_S3_ENDPOINT=http://127.0.0.1:<port>
#   LAKE_TEST_S3_ACCESS_KEY=…  LAKE_TEST_S3_SECRET_KEY=…
#   LAKE_TEST_RGW_DIR=<dir>    (pass it to rgw-stop.sh)
# Exit 1 with a one-line reason on stderr when the server cannot start.
set -euo pipefail

die() { echo "rgw-start: $*" >&2; exit 1; }

if ! command -v radosgw >/dev/null 2>&1 || ! command -v ceph-mon >/dev/null 2>&1 || ! command -v ceph-osd >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "radosgw is not installed and this is not root: apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw"
  echo "rgw-start: installing ceph-mon ceph-osd radosgw from Debian's packages" >&2
  # A second run racing this one waits on dpkg's lock instead of failing.
  (
    flock 9
    if ! command -v radosgw >/dev/null 2>&1; then
      apt-get update -qq >&2 || { echo "rgw-start: apt-get update failed" >&2; exit 1; }
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ceph-mon ceph-osd radosgw >&2 \
        || { echo "rgw-start: apt-get install ceph-mon ceph-osd radosgw failed" >&2; exit 1; }
    fi
  ) 9>/tmp/lake-rgw-install.lock || exit 1
fi

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

DIR=$(mktemp -d -t lake-rgw.XXXXXX)
RGW_PORT=${LAKE_TEST_RGW_PORT:-$(free_port)}
MON_PORT=$(free_port)
ACCESS=${LAKE_TEST_S3_ACCESS_KEY:-test}
SECRET=${LAKE_TEST_S3_SECRET_KEY:-testsecret}
fail() { echo "rgw-start: $* (logs in $DIR/log)" >&2; bash "$(dirname "$0")/rgw-stop.sh" "$DIR" --keep >/dev/null 2>&1 || true; exit 1; }

mkdir -p "$DIR"/{mon,osd,log,run,rgw}
cat > "$DIR/ceph.conf" <<CONF
[global]
fsid = $(cat /proc/sys/kernel/random/uuid)
mon host = v1:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
log file = $DIR/log/\$name.log
keyring = $DIR/keyring
ms bind ipv6 = false
ms bind msgr2 = false
[mon.a]
public addr = v1:127.0.0.1:$MON_PORT
[mon]
mon data = $DIR/mon
mon data avail crit = 0
mon data avail warn = 0
mon allow pool delete = true
mon cluster log file = $DIR/log/cluster.log
[osd]
osd data = $DIR/osd
osd objectstore = memstore
memstore device bytes = 4294967296
osd class load list = *
osd class default list = *
osd crush update on start = false
osd class update on start = false
osd max object name len = 460
osd max object namespace len = 64
[client.rgw.lake]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw dns name = localhost
rgw data = $DIR/rgw
rgw enable usage log = false
CONF
export CEPH_CONF="$DIR/ceph.conf"
touch "$DIR/keyring"
ceph-mon -c "$CEPH_CONF" --id a --mkfs --keyring /dev/null >&2 || fail "ceph-mon --mkfs failed"
touch "$DIR/mon/keyring"
ceph-mon -c "$CEPH_CONF" --id a >&2 || fail "ceph-mon did not start"
OSD_ID=$(timeout 60 ceph -c "$CEPH_CONF" osd create 2>>"$DIR/log/client.log") || fail "ceph osd create failed"
ceph-osd -c "$CEPH_CONF" --id "$OSD_ID" --mkfs >>"$DIR/log/client.log" 2>&1 || fail "ceph-osd --mkfs failed"
timeout 60 ceph -c "$CEPH_CONF" osd crush add "osd.$OSD_ID" 1 root=default >>"$DIR/log/client.log" 2>&1 || fail "ceph osd crush add failed"
ceph-osd -c "$CEPH_CONF" --id "$OSD_ID" >>"$DIR/log/client.log" 2>&1 || fail "ceph-osd did not start"
for i in $(seq 1 120); do
  timeout 10 ceph -c "$CEPH_CONF" osd dump 2>/dev/null | grep -q "^osd.$OSD_ID up" && break
  [ "$i" = 120 ] && fail "osd did not come up"
  sleep 0.5
done
radosgw -c "$CEPH_CONF" -n client.rgw.lake >&2 || fail "radosgw did not start"
timeout 120 radosgw-admin -c "$CEPH_CONF" user create --uid=test --display-name=test \
  --access-key="$ACCESS" --secret-key="$SECRET" >/dev/null 2>>"$DIR/log/client.log" || fail "radosgw-admin user create failed"
for i in $(seq 1 240); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$RGW_PORT/" 2>/dev/null; then
    echo "LAKE_TEST_S3_ENDPOINT=http://127.0.0.1:$RGW_PORT"
    echo "LAKE_TEST_S3_ACCESS_KEY=$ACCESS"
    echo "LAKE_TEST_S3_SECRET_KEY=$SECRET"
    echo "LAKE_TEST_RGW_DIR=$DIR"
    exit 0
  fi
  sleep 0.5
done
fail "radosgw did not answer on 127.0.0.1:$RGW_PORT"
