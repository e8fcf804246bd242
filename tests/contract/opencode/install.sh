#!/bin/sh
# install.sh [CACHE_DIR]: installs the pinned OpenCode CLI (npm package opencode-ai) into the
# private prefix CACHE_DIR/opencode/VERSION and prints the path of its native executable.
# CACHE_DIR defaults to $AGC_CACHE_DIR, else $XDG_CACHE_HOME/agentgc, else ~/.cache/agentgc:
# a download cache of the user's, outside every build dir, so a fresh clone or build dir
# needs the registry only when the pinned version changes. npm's own cache goes there too
# (CACHE_DIR/npm), not into ~/.npm.
#
# An install already there (same version, binary answering --version) is reused without
# touching the network. Otherwise npm fetches opencode-ai from the registry; its native
# binary arrives as an optional dependency (opencode-linux-x64, opencode-darwin-arm64, ...).
# Package scripts are not run: opencode-ai's postinstall only hard-links that binary over
# the bin/opencode.exe placeholder (and runs npm again when the optional dependency is
# missing), so the platform package's binary is used directly.
#
# When the registry cannot be reached this fails loudly: the contract test must not be
# skipped without anyone noticing.
#
# Environment: OPENCODE_VERSION overrides the pinned version.

set -eu

PINNED=1.18.33
VERSION=${OPENCODE_VERSION:-$PINNED}
ME=${0##*/}

die() {
	printf '%s: error: %s\n' "$ME" "$*" >&2
	exit 1
}

[ $# -le 1 ] || {
	printf 'usage: %s [CACHE_DIR]\n' "$ME" >&2
	exit 2
}
if [ $# -eq 1 ]; then
	cache=$1
elif [ -n "${AGC_CACHE_DIR:-}" ]; then
	cache=$AGC_CACHE_DIR
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
	cache=$XDG_CACHE_HOME/agentgc
else
	cache=${HOME:?HOME is not set}/.cache/agentgc
fi
mkdir -p "$cache" || die "cannot create '$cache'"
CACHE=$(cd "$cache" && pwd -P)
PREFIX=$CACHE/opencode/$VERSION

# The platform packages opencode-ai's postinstall would pick, in its order of preference:
# x64 without AVX2 wants the -baseline build; musl systems want the -musl builds.
candidates() {
	case $(uname -s) in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	*) die "no OpenCode binary for $(uname -s)" ;;
	esac
	case $(uname -m) in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "no OpenCode binary for $(uname -m)" ;;
	esac
	base=opencode-$os-$arch
	musl=no
	if [ "$os" = linux ]; then
		if [ -e /etc/alpine-release ] || ldd --version 2>&1 | grep -qi musl; then
			musl=yes
		fi
	fi
	avx2=yes
	if [ "$arch" = x64 ]; then
		if [ "$os" = linux ]; then
			grep -qw avx2 /proc/cpuinfo 2>/dev/null || avx2=no
		else
			[ "$(sysctl -n hw.optional.avx2_0 2>/dev/null)" = 1 ] || avx2=no
		fi
	fi
	if [ "$arch" != x64 ]; then
		if [ "$musl" = yes ]; then echo "$base-musl $base"; else echo "$base $base-musl"; fi
	elif [ "$musl" = yes ]; then
		if [ "$avx2" = yes ]; then
			echo "$base-musl $base-baseline-musl $base $base-baseline"
		else
			echo "$base-baseline-musl $base-musl $base-baseline $base"
		fi
	elif [ "$avx2" = yes ]; then
		echo "$base $base-baseline $base-musl $base-baseline-musl"
	else
		echo "$base-baseline $base $base-musl $base-baseline-musl"
	fi
}

# The version the binary $1 reports, run in a scratch home of its own: even --version makes
# opencode's data, config, state, cache and temp dirs, and none may land in the caller's
# home or the shared /tmp.
oc_version() {
	scratch=$CACHE/.version-home.$$
	rm -rf "$scratch"
	mkdir -p "$scratch/home" "$scratch/tmp" || return 1
	v=$(env -u OPENCODE_DB -u XDG_RUNTIME_DIR HOME="$scratch/home" \
		XDG_DATA_HOME="$scratch/home/.local/share" XDG_CONFIG_HOME="$scratch/home/.config" \
		XDG_STATE_HOME="$scratch/home/.local/state" XDG_CACHE_HOME="$scratch/home/.cache" \
		TMPDIR="$scratch/tmp" "$1" --version </dev/null 2>/dev/null)
	rc=$?
	rm -rf "$scratch"
	[ "$rc" -eq 0 ] || return 1
	printf '%s\n' "$v"
}

# Prints the first candidate binary under the prefix $1 that runs and reports $VERSION.
# --version reads no network, no config and no database.
find_binary() {
	for pkg in $(candidates); do
		bin=$1/node_modules/$pkg/bin/opencode
		[ -x "$bin" ] || continue
		v=$(oc_version "$bin") || continue
		if [ "$v" = "$VERSION" ]; then
			echo "$bin"
			return 0
		fi
	done
	return 1
}

installed_version() {
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$1/node_modules/opencode-ai/package.json" 2>/dev/null | head -n 1
}

# Reuse an earlier install (the cache).
if [ -d "$PREFIX" ] && [ "$(installed_version "$PREFIX")" = "$VERSION" ]; then
	if find_binary "$PREFIX"; then
		exit 0
	fi
fi

command -v npm >/dev/null 2>&1 || die "npm is not installed; the OpenCode contract test needs it to fetch opencode-ai@$VERSION"

# Install into a fresh directory next to the prefix and move it into place only when it is
# complete, so an interrupted install is never mistaken for the cache.
STAGE=$CACHE/opencode/.stage.$$
LOG=$CACHE/opencode/npm-$VERSION.log
mkdir -p "$CACHE/opencode"
rm -rf "$STAGE"
mkdir -p "$STAGE"
trap 'rm -rf "$STAGE"' EXIT INT TERM
printf '{"private":true}\n' >"$STAGE/package.json"

# npm's download cache and logs in the agentgc cache too, never in the caller's ~/.npm.
npm_config_cache=$CACHE/npm
export npm_config_cache
# one retry by default, quickly: a registry that cannot be reached is said in seconds
: "${npm_config_fetch_retries:=1}" "${npm_config_fetch_retry_mintimeout:=2000}" "${npm_config_fetch_retry_maxtimeout:=10000}"
export npm_config_fetch_retries npm_config_fetch_retry_mintimeout npm_config_fetch_retry_maxtimeout
registry=$(npm config get registry 2>/dev/null || echo 'the npm registry')
printf '%s: installing opencode-ai@%s from %s into %s\n' "$ME" "$VERSION" "$registry" "$PREFIX" >&2
if ! npm install --prefix "$STAGE" --no-audit --no-fund --no-update-notifier --no-progress \
	--ignore-scripts --save-exact --prefer-offline --loglevel=error \
	"opencode-ai@$VERSION" </dev/null >"$LOG" 2>&1; then
	cat "$LOG" >&2
	cat >&2 <<EOF

$ME: ******************************************************************
$ME: ERROR: cannot install opencode-ai@$VERSION from $registry
$ME: (npm's output is above and in $LOG).
$ME: The OpenCode contract test needs the real opencode binary; it FAILS
$ME: here rather than being skipped. Make the registry reachable, or
$ME: put an earlier install in $PREFIX.
$ME: ******************************************************************
EOF
	exit 1
fi

find_binary "$STAGE" >/dev/null || {
	cat "$LOG" >&2
	die "opencode-ai@$VERSION installed, but none of its platform packages ($(candidates)) gave a working binary under $STAGE/node_modules"
}

# Replace a stale or broken install.
rm -rf "$PREFIX.old"
if [ -d "$PREFIX" ]; then
	mv "$PREFIX" "$PREFIX.old"
fi
mv "$STAGE" "$PREFIX"
rm -rf "$PREFIX.old"
trap - EXIT INT TERM
find_binary "$PREFIX" || die "the binary moved to $PREFIX does not run"
