#!/bin/sh
# The contract test without the npm registry and without a cached install fails, loudly:
# it is never skipped. The registry is a closed port on loopback; the cache a new empty dir.
#   tests/contract/offline-test.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-offline.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
fail() {
	echo "not ok: $*" >&2
	exit 1
}

rc=0
out=$(AGC_CACHE_DIR=$scratch/cache npm_config_registry=http://127.0.0.1:9/ \
	npm_config_fetch_retries=0 "$here/opencode/run.sh" /bin/true 2>&1) || rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
[ "$rc" -ne 0 ] || fail "run.sh exited 0 without a registry"
printf '%s\n' "$out" | grep -q 'ERROR: cannot install opencode-ai@.* from http://127.0.0.1:9/' ||
	fail "no 'ERROR: cannot install' line naming the registry"
printf '%s\n' "$out" | grep -q 'FAILS' || fail "does not say the test fails"
printf '%s\n' "$out" | grep -q '^contract/opencode: FAILED' || fail "no 'contract/opencode: FAILED' line"
printf '%s\n' "$out" | grep -qi '# skip' && fail "a test was skipped"
# nothing half-installed is taken for the cache later
[ -z "$(find "$scratch/cache/opencode" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] ||
	fail "a directory was left in the cache: $(ls -A "$scratch/cache/opencode")"

# the same for Claude Code, through the shared installer of the pinned agents
rc=0
out=$(AGC_CACHE_DIR=$scratch/cache npm_config_registry=http://127.0.0.1:9/ \
	npm_config_fetch_retries=0 "$here/claude/run.sh" /bin/true 2>&1) || rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
[ "$rc" -ne 0 ] || fail "claude/run.sh exited 0 without a registry"
printf '%s\n' "$out" | grep -q 'ERROR: cannot install @anthropic-ai/claude-code@.* from http://127.0.0.1:9/' ||
	fail "no 'ERROR: cannot install' line for claude naming the registry"
printf '%s\n' "$out" | grep -q '^contract/claude: FAILED' || fail "no 'contract/claude: FAILED' line"
printf '%s\n' "$out" | grep -qi '# skip' && fail "a claude test was skipped"
[ -z "$(find "$scratch/cache/claude" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] ||
	fail "a directory was left in the cache: $(ls -A "$scratch/cache/claude")"
echo "2 passed, 0 failed"
