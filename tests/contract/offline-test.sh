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

# NAME's contract test (run.sh NAME) without the registry and the cache: a non-zero exit, the
# installer's "ERROR: cannot install SPEC from <registry>" (SPEC a grep pattern), that the test FAILS,
# "contract/NAME: FAILED", no skip, and nothing left in the cache's dir CACHED.
offline() {
	name=$1 spec=$2 cached=$3
	rc=0
	out=$(AGC_CACHE_DIR=$scratch/cache npm_config_registry=http://127.0.0.1:9/ \
		npm_config_fetch_retries=0 "$here/run.sh" "$name" /bin/true 2>&1) || rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	[ "$rc" -ne 0 ] || fail "$name: run.sh exited 0 without a registry"
	printf '%s\n' "$out" | grep -q "ERROR: cannot install $spec from http://127.0.0.1:9/" ||
		fail "$name: no 'ERROR: cannot install' line naming the registry"
	printf '%s\n' "$out" | grep -q 'FAILS' || fail "$name: does not say the test fails"
	printf '%s\n' "$out" | grep -q "^contract/$name: FAILED" || fail "no 'contract/$name: FAILED' line"
	printf '%s\n' "$out" | grep -qi '# skip' && fail "$name: a test was skipped"
	# nothing half-installed is taken for the cache later
	[ -z "$(find "$scratch/cache/$cached" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] ||
		fail "$name: a directory was left in the cache: $(ls -A "$scratch/cache/$cached")"
}

offline opencode 'opencode-ai@.*' opencode
# Claude Code, through the shared installer of the pinned agents
offline claude '@anthropic-ai/claude-code@.*' claude
offline codex '@openai/codex@.*' codex
echo "3 passed, 0 failed"
