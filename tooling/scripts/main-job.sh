#!/usr/bin/env bash
# lake's main job on the bundled sample corpus (samples/): collect → push → maint → report.
# Everything it writes lands in a fresh temporary directory (the storage root, the fleet store,
# the reader's cache), or in $LAKE_DEMO_DIR when that is set (created if missing; reuse an empty
# one); the sample transcripts are only read. No configuration is needed. Headings are bold only
# on a terminal without NO_COLOR.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
WORK=${LAKE_DEMO_DIR:-$(mktemp -d -t lake-demo.XXXXXX)}
mkdir -p "$WORK"
ROOT="$WORK/root"
STORE="file://$WORK/fleet"
export HOME="$WORK/home"   # so no vendor store of this machine is read; only samples/ is
mkdir -p "$HOME"
collector() { node "$REPO/apps/collector/bin/lake-collector.js" "$@"; }
maint() { node "$REPO/apps/maint/bin/lake-maint.js" "$@"; }
reader() { node "$REPO/apps/reader/bin/lake-reader.js" "$@"; }
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
else
  say() { printf '\n$ %s\n' "$*"; }
fi

say "lake-collector collect   (Claude Code, Codex and Gemini CLI samples)"
collector collect --root "$ROOT" --sources-only \
  --source "claude-code=$REPO/samples/claude/projects" \
  --source "codex=$REPO/samples/codex" \
  --source "gemini=$REPO/samples/gemini/tmp"
say "lake-collector verify"
collector verify --root "$ROOT"
say "lake-collector push --store $STORE"
collector push --root "$ROOT" --store "$STORE" --agent demo --fleet-id demo --seal-idle 0
say "lake-maint digest && lake-maint compact"
maint digest --store "$STORE"
maint compact --store "$STORE"
say "lake-reader usage daily"
reader usage daily --store "$STORE" --cache "$WORK/cache"
say "lake-reader usage session"
reader usage session --store "$STORE" --cache "$WORK/cache"
say "lake-reader show 258c7280-ae70-4798-800f-63464d01a85d   (the first 60 lines)"
reader show 258c7280-ae70-4798-800f-63464d01a85d --store "$STORE" --cache "$WORK/cache" --root "$ROOT" > "$WORK/show.txt"
head -n 60 "$WORK/show.txt"
echo "… $(wc -l < "$WORK/show.txt") lines in all: $WORK/show.txt"
echo
echo "Everything above is in $WORK (root/, fleet/, cache/)."
