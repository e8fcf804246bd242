#!/bin/sh
# scripts/test-sealed.sh, which every suite of make check runs under, fails a suite that
# writes into the home or the TMPDIR it was given as the caller's, and passes one that
# keeps to dirs of its own.
#   tests/pkg/sealed-test.sh
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
sealed=$here/scripts/test-sealed.sh
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-sealed.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
n=0
fail() {
	echo "not ok: $*" >&2
	exit 1
}
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

# a suite that writes into ~/.cache (as `opencode --version` did with the real HOME)
rc=0
out=$("$sealed" "$scratch/a" sh -c 'mkdir -p "$HOME/.cache/opencode"' 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "a write into HOME: exit $rc, not 1: $out"
printf '%s\n' "$out" | grep -q 'FAILED: the tests left files in the home' || fail "no FAILED line: $out"
printf '%s\n' "$out" | grep -q '^  ~/.cache/opencode$' || fail "does not name ~/.cache/opencode: $out"
ok "a suite writing into HOME fails and names what it left"

# into TMPDIR, keeping its own failure code
rc=0
out=$("$sealed" "$scratch/b" sh -c 'mkdir "$TMPDIR/opencode"; exit 3' 2>&1) || rc=$?
[ "$rc" -eq 3 ] || fail "a failing suite writing into TMPDIR: exit $rc, not 3: $out"
printf '%s\n' "$out" | grep -q '^  \$TMPDIR/opencode$' || fail "does not name \$TMPDIR/opencode: $out"
ok "a suite writing into TMPDIR fails and names what it left"

# XDG dirs of the caller are not passed on: the defaults under the given HOME apply
rc=0
out=$(XDG_CONFIG_HOME=$scratch/xdg-config "$sealed" "$scratch/c" \
	sh -c 'mkdir -p "${XDG_CONFIG_HOME:-$HOME/.config}/opencode"' 2>&1) || rc=$?
[ "$rc" -eq 1 ] && [ ! -e "$scratch/xdg-config" ] || fail "XDG_CONFIG_HOME passed through: exit $rc: $out"
ok "the caller's XDG dirs are not passed on"

# a suite using dirs of its own passes; the download cache is the caller's
out=$(env -u AGC_CACHE_DIR XDG_CACHE_HOME="$scratch/cache" "$sealed" "$scratch/d" \
	sh -c 'd=$(mktemp -d "$TMPDIR/own.XXXXXX") && touch "$d/f" && rm -rf "$d" && echo "cache=$AGC_CACHE_DIR"') ||
	fail "a clean suite failed: $out"
[ "$out" = "cache=$scratch/cache/agentgc" ] || fail "AGC_CACHE_DIR: $out"
[ ! -e "$scratch/d" ] || fail "the sealed home of a clean suite is left"
ok "a clean suite passes, with the download cache under the caller's XDG_CACHE_HOME"

echo "$n passed, 0 failed"
