#!/usr/bin/env bash
# The README's two commands. On a fresh machine with Node 20 + npm (root), it installs everything
# lake needs, builds, and then:
#   run.sh demo   runs lake's main job on the sample corpus bundled in the repo
#   run.sh test   starts the S3 test server (Ceph radosgw, installed from Debian's packages when
#                 missing; Chromium too, for lake-reader's browser tests: chromium-find.sh, and
#                 Prometheus for the collector's metrics scrape test), runs lint and every test of
#                 every package and app, stops the server,
#                 and prints "N passed, N failed" as its last line
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
MODE=${1:-}
case "$MODE" in demo|test) ;; *) echo "usage: bash tooling/scripts/run.sh demo|test" >&2; exit 2 ;; esac

PNPM_VERSION=12.4.2
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
# No "update available" notice from pnpm or npm in the output.
export npm_config_update_notifier=false
# better-sqlite3 compiles from source: build against the Node headers installed with Node itself
# instead of downloading them.
if [ -z "${npm_config_nodedir:-}" ]; then
  for d in /usr /usr/local "$(dirname "$(dirname "$(command -v node)")")"; do
    if [ -f "$d/include/node/node.h" ]; then export npm_config_nodedir="$d"; break; fi
  done
fi

step() { echo "==> $*" >&2; }

if [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  step "installing pnpm $PNPM_VERSION"
  npm install -g --no-fund --no-audit "pnpm@$PNPM_VERSION" >&2 || { echo "run.sh: could not install pnpm $PNPM_VERSION with npm" >&2; exit 1; }
fi
step "pnpm install"
pnpm install --frozen-lockfile >&2 || { echo "run.sh: pnpm install failed" >&2; exit 1; }
step "pnpm build"
pnpm build >&2 || { echo "run.sh: build failed" >&2; exit 1; }

if [ "$MODE" = demo ]; then
  exec bash tooling/scripts/main-job.sh
fi

# test
RGW_DIR=
cleanup() { [ -n "$RGW_DIR" ] && bash tooling/scripts/rgw-stop.sh "$RGW_DIR" >/dev/null 2>&1; RGW_DIR=; }
trap cleanup EXIT INT TERM
if [ -z "${LAKE_TEST_S3_ENDPOINT:-}" ]; then
  step "starting the S3 test server (radosgw)"
  # A one-node Ceph cluster now and then fails to come up (its monitor not answering in time): each
  # attempt stops what it started, so a second and a third are clean starts on fresh ports.
  started=
  for attempt in 1 2 3; do
    if out=$(bash tooling/scripts/rgw-start.sh); then started=1; break; fi
    echo "run.sh: the S3 test server did not start (attempt $attempt of 3)" >&2
    sleep 2
  done
  if [ -z "$started" ]; then
    echo "run.sh: the S3 test server could not start; tests that need it would fail" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  while IFS='=' read -r k v; do
    case "$k" in
      LAKE_TEST_RGW_DIR) RGW_DIR=$v ;;
      LAKE_TEST_S3_*) export "$k=$v" ;;
    esac
  done <<<"$out"
  step "S3 test server at $LAKE_TEST_S3_ENDPOINT"
fi

# lake-reader's browser tests drive Debian's Chromium (playwright-core, no browser download):
# installed when missing, like radosgw, and named to the tests by LAKE_TEST_CHROMIUM.
if chromium=$(bash tooling/scripts/chromium-find.sh); then
  export LAKE_TEST_CHROMIUM=$chromium
  step "Chromium at $LAKE_TEST_CHROMIUM"
else
  echo "run.sh: no Chromium: lake-reader's browser tests will fail" >&2
fi

# lake-collector's metrics test starts Debian's Prometheus on loopback to scrape watch --metrics-port.
if [ ! -x /usr/bin/prometheus ]; then
  if [ "$(id -u)" = 0 ]; then
    step "installing prometheus from Debian's packages (the metrics scrape test)"
    (
      flock 9
      if [ ! -x /usr/bin/prometheus ]; then
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >&2
      fi
    ) 9>/tmp/lake-prometheus-install.lock || echo "run.sh: apt-get install prometheus failed: lake-collector's Prometheus test will fail" >&2
  else
    echo "run.sh: prometheus is not installed and this is not root: apt-get install -y prometheus (lake-collector's metrics test needs it)" >&2
  fi
fi

find packages apps -maxdepth 2 -name test-results.json -delete
status=0
step "pnpm lint"
pnpm turbo run lint --continue --concurrency=2 >&2 || status=1
step "pnpm test"
# The tests' temporary files go to a directory of this run's (TMPDIR, open to every user as /tmp is:
# a test collects as nobody): whatever a test leaves behind is named here, then removed with it
# (tsx's compile cache, tsx-<uid>, is not a test's).
testtmp=$(mktemp -d /tmp/lake-test.XXXXXX)
chmod 1777 "$testtmp"
TMPDIR=$testtmp pnpm turbo run test --continue --concurrency=1 >&2 || status=1
left=$(ls -A "$testtmp" | grep -v '^tsx-' || true)
if [ -n "$left" ]; then
  echo "run.sh: the tests left $(printf '%s\n' "$left" | wc -l) entries in their temporary directory: $(printf '%s\n' "$left" | head -n 10 | tr '\n' ' ')" >&2
fi
rm -rf "$testtmp"
cleanup
node tooling/scripts/sum-results.mjs || status=1
exit $status
