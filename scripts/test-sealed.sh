#!/bin/sh
# test-sealed.sh DIR COMMAND [ARG...]: runs one test suite with a home and a temp dir of its
# own, standing in for the caller's, and fails when the suite left anything in either.
#
# Every test is meant to make its own HOME, TMPDIR and XDG dirs (tests/e2e/lib.bash, the
# contract test's setup); one that forgets, or a program under test that ignores them,
# would write into the real home or the shared /tmp. Here that lands in DIR/home or in the
# temp dir made for this run, and is reported as a failure with what was left.
#
# The one thing meant to outlive a run in the real home is the download cache of the
# contract tests, $XDG_CACHE_HOME/agentgc (default ~/.cache/agentgc): its path is taken
# from the caller's environment before the home is replaced, and passed on as
# AGC_CACHE_DIR.
set -eu
ME=test-sealed
[ $# -ge 2 ] || {
	echo "usage: $0 DIR COMMAND [ARG...]" >&2
	exit 2
}
dir=$1
shift

if [ -z "${AGC_CACHE_DIR:-}" ]; then
	if [ -n "${XDG_CACHE_HOME:-}" ]; then
		AGC_CACHE_DIR=$XDG_CACHE_HOME/agentgc
	else
		AGC_CACHE_DIR=${HOME:?HOME is not set}/.cache/agentgc
	fi
fi
export AGC_CACHE_DIR
# The caller's npm settings (a registry mirror, a proxy) still apply to the contract
# tests' install; they are only read.
if [ -z "${npm_config_userconfig:-}" ] && [ -f "${HOME:-/nonexistent}/.npmrc" ]; then
	npm_config_userconfig=$HOME/.npmrc
	export npm_config_userconfig
fi

rm -rf "$dir"
mkdir -p "$dir/home"
# The temp dir is in /tmp, a dir of this run's own: Unix socket paths made under it must
# stay short (108 bytes), whatever the path of the build dir. Tests that switch to an
# unprivileged user need to pass through it.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentgc-test.XXXXXX")
chmod 711 "$tmp"
trap 'rm -rf "$tmp"' EXIT INT TERM

rc=0
env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME -u XDG_RUNTIME_DIR \
	-u TMP -u TEMP -u npm_config_cache -u NPM_CONFIG_CACHE \
	HOME="$dir/home" TMPDIR="$tmp" "$@" || rc=$?

left=$(cd "$dir/home" && find . -mindepth 1 -maxdepth 4 | sed 's|^\.|~|' | sort | head -n 20)
tleft=$(cd "$tmp" && find . -mindepth 1 -maxdepth 3 | sed "s|^\.|\$TMPDIR|" | sort | head -n 20)
if [ -n "$left$tleft" ]; then
	{
		echo "$ME: FAILED: the tests left files in the home or the TMPDIR they were given as the caller's:"
		[ -z "$left" ] || printf '%s\n' "$left" | sed 's/^/  /'
		[ -z "$tleft" ] || printf '%s\n' "$tleft" | sed 's/^/  /'
		echo "$ME: (a test must make and use its own HOME, TMPDIR and XDG dirs)"
	} >&2
	[ "$rc" -ne 0 ] || rc=1
else
	rm -rf "$dir"
fi
exit "$rc"
