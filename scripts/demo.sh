#!/bin/sh
# agentgc's main job on a generated demo home: look, check, dry-run, purge, look again.
# Usage: scripts/demo.sh [BUILD_DIR]
set -eu
build=${1:-build}
agc="$build/agentgc"
fix="$build/agentgc-fixture"
demo=$(cd "$build" && pwd)/demo
rm -rf "$demo"
mkdir -p "$demo/home" "$demo/tmp"

"$fix" --home "$demo/home" --tmp "$demo/tmp" --seed 7 --claude 6 --projects 2 --stale 1 \
	--manifest "$demo/manifest.jsonl" --quiet

# The demo home is the caller's own for this run, so the agents' variables point into it.
HOME="$demo/home"
TMPDIR="$demo/tmp"
export HOME TMPDIR
unset CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMP TEMP 2>/dev/null || true

id=$(sed -n 's/^{"agent":"claude","id":"\([0-9a-f-]*\)".*/\1/p' "$demo/manifest.jsonl" | head -n 1)

run() {
	printf '\n$ %s\n' "$*"
	"$@" || printf '(exit %s)\n' "$?"
}

run "$agc" roots
run "$agc" ls
run "$agc" show claude "$id"
run "$agc" purge --dry-run claude "$id"
run "$agc" purge claude "$id"
run "$agc" ls
run "$agc" in-use claude "$id"
