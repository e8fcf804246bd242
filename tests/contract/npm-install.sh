#!/bin/sh
# npm-install.sh AGENT [CACHE_DIR]: installs the agent pinned in tests/contract/pins (claude,
# codex) from the npm registry into the private prefix CACHE_DIR/AGENT/VERSION, checks every
# package's tarball checksum against the pin, and prints the path of its native binary.
# CACHE_DIR defaults to $AGC_CACHE_DIR, else $XDG_CACHE_HOME/agentgc, else ~/.cache/agentgc:
# the download cache the OpenCode contract test uses too, outside every build dir, so a fresh
# clone needs the registry only when a pin changes. npm's own cache goes there (CACHE_DIR/npm).
#
# An install already there (the pinned checksums in its lock file, the binary answering
# --version in a scratch home) is reused without the network. Package scripts are not run:
# the packages' postinstall only links the platform package's binary, used here directly.
# When the registry cannot be reached this fails loudly: a contract test is never skipped
# without anyone noticing.
set -eu

ME=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
PINS=$here/pins

die() {
	printf '%s: error: %s\n' "$ME" "$*" >&2
	exit 1
}

[ $# -ge 1 ] && [ $# -le 2 ] || {
	printf 'usage: %s AGENT [CACHE_DIR]\n' "$ME" >&2
	exit 2
}
agent=$1
if [ $# -eq 2 ]; then
	cache=$2
elif [ -n "${AGC_CACHE_DIR:-}" ]; then
	cache=$AGC_CACHE_DIR
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
	cache=$XDG_CACHE_HOME/agentgc
else
	cache=${HOME:?HOME is not set}/.cache/agentgc
fi

case $(uname -s)-$(uname -m) in
Linux-x86_64 | Linux-amd64) plat=linux-x64 ;;
Linux-aarch64 | Linux-arm64) plat=linux-arm64 ;;
*) die "no pinned $agent binary for $(uname -s) $(uname -m)" ;;
esac
if ldd --version 2>&1 | grep -qi musl; then
	die "no pinned $agent binary for a musl system"
fi

# field N of the pins line "AGENT KIND ..." (the first one)
pin() {
	awk -v a="$agent" -v k="$1" -v n="$2" '$1 == a && $2 == k { print $n; exit }' "$PINS"
}
spec=$(pin install 3)
[ -n "$spec" ] || die "no agent '$agent' in $PINS"
version=${spec##*@}
binpat=$(pin bin 3 | sed "s/{p}/$plat/")
[ -n "$binpat" ] || die "no bin line for $agent in $PINS"
# "PACKAGE INTEGRITY" of every package to check here
checks=$(awk -v a="$agent" -v p="$plat" '$1 == a && ($2 == "any" || $2 == p) { print $3, $4 }' "$PINS")
echo "$checks" | grep -q . || die "no checksums for $agent on $plat in $PINS"

mkdir -p "$cache" || die "cannot create '$cache'"
CACHE=$(cd "$cache" && pwd -P)
PREFIX=$CACHE/$agent/$version

# Every pinned package of this platform is in the prefix's lock file with its pinned checksum.
verify() {
	lock=$1/node_modules/.package-lock.json
	[ -f "$lock" ] || return 1
	echo "$checks" | while read -r pkg sum; do
		got=$(jq -r --arg k "node_modules/$pkg" '.packages[$k].integrity // empty' "$lock")
		if [ "$got" != "$sum" ]; then
			printf '%s: %s: checksum %s, pinned %s\n' "$ME" "$pkg" "${got:-(none)}" "$sum" >&2
			return 1
		fi
	done
}

# The binary under prefix $1, when it runs (in a scratch home: even --version writes there)
# and reports the pinned version.
binary() {
	for b in $1/node_modules/$binpat; do
		[ -x "$b" ] || continue
		s=$CACHE/.version-home.$$
		rm -rf "$s"
		mkdir -p "$s/home" "$s/tmp"
		v=$(env HOME="$s/home" TMPDIR="$s/tmp" XDG_CONFIG_HOME="$s/home/.config" \
			XDG_CACHE_HOME="$s/home/.cache" XDG_DATA_HOME="$s/home/.local/share" \
			XDG_STATE_HOME="$s/home/.local/state" CODEX_HOME="$s/home/.codex" \
			CLAUDE_CONFIG_DIR="$s/home/.claude" "$b" --version </dev/null 2>/dev/null) || v=
		rm -rf "$s"
		case " $v " in
		*" $version "* | *"-cli $version"*) echo "$b"; return 0 ;;
		esac
	done
	return 1
}

if [ -d "$PREFIX" ] && verify "$PREFIX" 2>/dev/null && binary "$PREFIX"; then
	exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm is not installed; the $agent contract test needs it to fetch $spec"
command -v jq >/dev/null 2>&1 || die "jq is not installed; it reads the install's checksums"

# A fresh dir next to the prefix, moved into place only when complete and checked.
STAGE=$CACHE/$agent/.stage.$$
LOG=$CACHE/$agent/npm-$version.log
mkdir -p "$CACHE/$agent"
rm -rf "$STAGE"
mkdir -p "$STAGE"
trap 'rm -rf "$STAGE"' EXIT INT TERM
printf '{"private":true}\n' >"$STAGE/package.json"
npm_config_cache=$CACHE/npm
export npm_config_cache
: "${npm_config_fetch_retries:=1}" "${npm_config_fetch_retry_mintimeout:=2000}" "${npm_config_fetch_retry_maxtimeout:=10000}"
export npm_config_fetch_retries npm_config_fetch_retry_mintimeout npm_config_fetch_retry_maxtimeout
registry=$(npm config get registry 2>/dev/null || echo 'the npm registry')
printf '%s: installing %s from %s into %s\n' "$ME" "$spec" "$registry" "$PREFIX" >&2
if ! npm install --prefix "$STAGE" --no-audit --no-fund --no-update-notifier --no-progress \
	--ignore-scripts --save-exact --prefer-offline --loglevel=error --engine-strict=false \
	"$spec" </dev/null >"$LOG" 2>&1; then
	cat "$LOG" >&2
	cat >&2 <<EOF

$ME: ******************************************************************
$ME: ERROR: cannot install $spec from $registry
$ME: (npm's output is above and in $LOG).
$ME: The $agent contract test needs the real binary; it FAILS here
$ME: rather than being skipped. Make the registry reachable, or put an
$ME: earlier install in $PREFIX.
$ME: ******************************************************************
EOF
	exit 1
fi
verify "$STAGE" || die "$spec: a tarball's checksum is not the one pinned in $PINS: not used"
binary "$STAGE" >/dev/null || die "$spec installed, but no $binpat under $STAGE/node_modules runs and says $version"
rm -rf "$PREFIX.old"
if [ -d "$PREFIX" ]; then
	mv "$PREFIX" "$PREFIX.old"
fi
mv "$STAGE" "$PREFIX"
rm -rf "$PREFIX.old"
trap - EXIT INT TERM
binary "$PREFIX" || die "the binary moved to $PREFIX does not run"
