#!/bin/sh
# Install the Debian packages agentgc needs to build, test and run its demo.
# As root: installs what is missing with apt-get. Otherwise: prints the one apt-get line to
# run as root.
# Usage: scripts/deps.sh [--check] [--bench]
#   --check  only say what is missing (on stderr); exit 1 if something is
#   --bench  also what make bench runs (bench/run.sh)
# Plain `sh`, no bash: on a minimal Debian (debootstrap --variant=minbase) only dash,
# dpkg and apt are there; make is the one package installed by hand before this runs.
set -eu

# zlib1g-dev: sqlite3.pc names -lz for static links (pkg-config --static agentgc).
# ca-certificates: npm's TLS to the registry (contract tests).
# dpkg-dev, debhelper, build-essential: the Debian package test (tests/pkg/deb-test.sh).
PKGS="gcc libc6-dev make cmake pkg-config libsqlite3-dev libjansson-dev nettle-dev libzstd-dev
zlib1g-dev libcmocka-dev bats jq sqlite3 procps util-linux git python3 nodejs npm
ca-certificates dpkg-dev debhelper build-essential"
# zsh, fish, groff-base: the tests of the shell completions and of the man page.
PKGS="$PKGS zsh fish groff-base"
# lsof (with procps's ps): the process backend of macOS and the BSDs, which the end-to-end
# tests also run on Linux (AGENTGC_PROC_BACKEND=ps).
PKGS="$PKGS lsof"
# iproute2 (ip): loopback brought up in the network namespace the contract tests run an agent
# and its model server in.
PKGS="$PKGS iproute2"
# tmux: the interactive sessions of the real agents in the contract tests (Claude Code, Codex)
PKGS="$PKGS tmux"

# hyperfine, time (/usr/bin/time -v) and psmisc (fuser): the benchmark and its peers.
PKGS_BENCH="hyperfine time psmisc"

check=no
for a in "$@"; do
	case "$a" in
	--check) check=yes ;;
	--bench) PKGS="$PKGS $PKGS_BENCH" ;;
	*)
		echo "usage: scripts/deps.sh [--check] [--bench]" >&2
		exit 2
		;;
	esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: this is not a Debian system; install the equivalents of:" >&2
	echo "  $PKGS" | tr '\n' ' ' >&2
	echo >&2
	exit 1
fi

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
# node and npm from elsewhere (nodesource, nvm) do as well as Debian's packages.
case "$missing" in
*" nodejs"* | *" npm"*)
	if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
		missing=$(printf '%s\n' "$missing" | sed 's/ nodejs\b//; s/ npm\b//')
	fi
	;;
esac

[ -n "$missing" ] || exit 0

line="apt-get update && apt-get install -y --no-install-recommends$missing"
if [ "$check" = yes ]; then
	echo "deps.sh: missing:$missing" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	echo "deps.sh: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq </dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing </dev/null
else
	echo "deps.sh: missing packages; run as root:" >&2
	echo "  $line" >&2
	exit 1
fi
