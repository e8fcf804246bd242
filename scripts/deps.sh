#!/bin/sh
# Install the Debian packages agentgc needs to build, test and run its demo.
# As root: installs what is missing with apt-get. Otherwise: prints the apt-get line.
# Usage: scripts/deps.sh [--check]   (--check: only say whether something is missing; exit 1 if so)
set -eu

PKGS="gcc make cmake pkg-config libsqlite3-dev libjansson-dev nettle-dev libzstd-dev
libcmocka-dev bats jq sqlite3 procps git python3"
# zsh, fish, groff-base: the tests of the shell completions and of the man page.
PKGS="$PKGS zsh fish groff-base"

missing=""
if command -v dpkg-query >/dev/null 2>&1; then
	for p in $PKGS; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		case "$st" in
		*"install ok installed"*) ;;
		*) missing="$missing $p" ;;
		esac
	done
else
	echo "deps.sh: this is not a Debian system; install the equivalents of:" >&2
	echo "  $PKGS" | tr '\n' ' ' >&2
	echo >&2
	exit 1
fi

# The contract tests install the real agents from the npm registry: they need node and npm.
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	missing="$missing nodejs npm"
fi
# ... and unshare (util-linux) to run them without a network.
command -v unshare >/dev/null 2>&1 || missing="$missing util-linux"

if [ -z "$missing" ]; then
	exit 0
fi
if [ "${1:-}" = "--check" ]; then
	echo "deps.sh: missing:$missing" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	echo "deps.sh: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq </dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing </dev/null
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	echo "deps.sh: installing with sudo:$missing" >&2
	sudo -n apt-get update -qq </dev/null
	# shellcheck disable=SC2086
	sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing </dev/null
else
	echo "deps.sh: missing packages; run as root:" >&2
	echo "  apt-get install -y$missing" >&2
	exit 1
fi
