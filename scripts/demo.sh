#!/bin/sh
# agentgc's main job on a generated demo home: look, check, dry-run, purge, look again.
# Usage: scripts/demo.sh [BUILD_DIR [DEMO_DIR]]   (DEMO_DIR: BUILD_DIR/demo, made anew)
# Its output is the README's tour (scripts/readme-tour.sh).
set -eu
build=${1:-build}
agc="$build/agentgc"
fix="$build/agentgc-fixture"
demo=${2:-$build/demo}
rm -rf "$demo"
mkdir -p "$demo/home" "$demo/tmp"
demo=$(cd "$demo" && pwd)

# The demo home's present: the fixture's sessions lie before it, and agentgc's ages
# ("5d ago") are counted from it (AGENTGC_NOW), so every run prints the same.
now=1795984693 # 2026-11-29T20:38:13Z
# No stale registry entry (--stale): it records this machine's pidDomain (machine-id), which
# not every machine has, and its size is part of the session's bytes in the tour.
"$fix" --home "$demo/home" --tmp "$demo/tmp" --seed 7 --now "$now" --claude 6 --projects 2 \
	--opencode 3 --opencode-children 1 --codex 3 --codex-children 1 --manifest "$demo/manifest.jsonl" --quiet

# The demo home is the caller's own for this run, so the agents' variables point into it.
HOME="$demo/home"
TMPDIR="$demo/tmp"
AGENTGC_NOW=$now
export HOME TMPDIR AGENTGC_NOW
unset CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMP TEMP XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME \
	XDG_CACHE_HOME OPENCODE_DB CODEX_HOME CODEX_SQLITE_HOME 2>/dev/null || true

# the first two Claude sessions of the manifest
ids=$(sed -n 's/^{"agent":"claude","id":"\([0-9a-f-]*\)".*/\1/p' "$demo/manifest.jsonl" | head -n 2)
id=$(echo "$ids" | sed -n 1p)
id2=$(echo "$ids" | sed -n 2p)
# an OpenCode session with a child: the first root whose children list is not empty
oc=$(grep '"agent":"opencode"' "$demo/manifest.jsonl" | grep '"parent":null' | grep -v '"children":\[\]' |
	sed -n 's/^{"agent":"opencode","id":"\(ses_[A-Za-z0-9_]*\)".*/\1/p' | head -n 1)
# a Codex thread with a sub-agent: the first root whose children list is not empty
cx=$(grep '"agent":"codex"' "$demo/manifest.jsonl" | grep '"parent":null' | grep -v '"children":\[\]' |
	sed -n 's/^{"agent":"codex","id":"\([0-9a-f-]*\)".*/\1/p' | head -n 1)

# Each command as a user types it, then what it prints (stdout and stderr, in order).
run() {
	printf '\n$ agentgc %s\n' "$*"
	"$agc" "$@" 2>&1 || printf '(exit %s)\n' "$?"
}

run roots
run ls
run show claude "$id"
run purge --dry-run claude "$id"
run purge claude "$id"
run in-use claude "$id"
run purge claude ../x
run --json ls --agent claude --limit 1
run --json in-use claude "$id2"
if [ -n "$oc" ]; then
	run ls --agent opencode --children
	run -v purge opencode "$oc"
fi
if [ -n "$cx" ]; then
	run ls --agent codex --children
	run purge codex "$cx"
fi
run ls
