#!/usr/bin/env bash
# Stop what rgw-start.sh started, by its pid files: radosgw, then the osd, then the mon
# (SIGTERM, SIGKILL after 3 s each), then remove DIR (unless --keep).
DIR=${1:?usage: rgw-stop.sh DIR [--keep]}
[ -d "$DIR/run" ] || exit 0
for f in "$DIR"/run/client.rgw.lake.pid "$DIR"/run/osd.*.pid "$DIR"/run/mon.a.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f"); kill "$pid" 2>/dev/null || continue
  for i in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
done
[ "${2:-}" = --keep ] || rm -rf "$DIR"
