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
	--opencode 3 --opencode-children 1 --manifest "$demo/manifest.jsonl" --quiet

# The demo home is the caller's own for this run, so the agents' variables point into it.
HOME="$demo/home"
TMPDIR="$demo/tmp"
export HOME TMPDIR
unset CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMP TEMP XDG_DATA_HOME XDG_STATE_HOME OPENCODE_DB 2>/dev/null || true

id=$(sed -n 's/^{"agent":"claude","id":"\([0-9a-f-]*\)".*/\1/p' "$demo/manifest.jsonl" | head -n 1)
# an OpenCode session with a child: the first root whose children list is not empty
oc=$(grep '"agent":"opencode"' "$demo/manifest.jsonl" | grep '"parent":null' | grep -v '"children":\[\]' |
	sed -n 's/^{"agent":"opencode","id":"\(ses_[A-Za-z0-9_]*\)".*/\1/p' | head -n 1)

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
if [ -n "$oc" ]; then
	run "$agc" ls --agent opencode --children
	run "$agc" -v purge opencode "$oc"
	run "$agc" ls --agent opencode --children
fi
