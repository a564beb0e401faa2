#!/usr/bin/env bash
# Find the Chromium lake-reader's browser tests drive (playwright-core, no browser download):
# $LAKE_TEST_CHROMIUM when set, else `chromium` on PATH; installs Debian's chromium package when it
# is missing (needs root), the way rgw-start.sh installs radosgw. Prints the binary's path on
# stdout; exit 1 with a one-line reason on stderr when there is none.
set -euo pipefail

die() { echo "chromium-find: $*" >&2; exit 1; }

if [ -n "${LAKE_TEST_CHROMIUM:-}" ]; then
  [ -x "$LAKE_TEST_CHROMIUM" ] || die "LAKE_TEST_CHROMIUM=$LAKE_TEST_CHROMIUM is not an executable file"
  echo "$LAKE_TEST_CHROMIUM"
  exit 0
fi

if ! command -v chromium >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "chromium is not installed and this is not root: apt-get install -y --no-install-recommends chromium (or set LAKE_TEST_CHROMIUM)"
  echo "chromium-find: installing chromium from Debian's packages" >&2
  # A second run racing this one waits on the lock instead of failing on dpkg's.
  (
    flock 9
    if ! command -v chromium >/dev/null 2>&1; then
      apt-get update -qq >&2 || { echo "chromium-find: apt-get update failed" >&2; exit 1; }
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2 \
        || { echo "chromium-find: apt-get install chromium failed" >&2; exit 1; }
    fi
  ) 9>/tmp/lake-chromium-install.lock || exit 1
  command -v chromium >/dev/null 2>&1 || die "chromium is still not on PATH after installing it"
fi
command -v chromium
