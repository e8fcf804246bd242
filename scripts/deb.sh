#!/bin/sh
# Builds the Debian packages agentgc, libagentgc0 and libagentgc-dev with
# `dpkg-buildpackage -us -uc -b`, from a copy of the source in OUT_DIR/src (dpkg-buildpackage
# writes the .deb files into the parent of the source dir, and leaves debhelper's work files
# in it), and prints the paths of the .deb files.
# Usage: scripts/deb.sh OUT_DIR   (its old content is removed)
set -eu
[ $# -eq 1 ] || {
	echo "usage: $0 OUT_DIR" >&2
	exit 2
}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
rm -rf "$out/src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$out/src"
# the source as it is in the work tree, without git's store, CMake build dirs (any dir
# holding a CMakeCache.txt), debhelper's work files and OUT_DIR itself
self=
case "$out/" in
"$src/"*) self="--exclude=./${out#"$src/"}" ;;
esac
# shellcheck disable=SC2086 # $self: no option, or one without blanks
(cd "$src" && tar -cf - --exclude=./.git --exclude-tag-all=CMakeCache.txt --exclude='./build*' \
	--exclude=./out --exclude='./obj-*' --exclude=./debian/.debhelper --exclude=./debian/tmp \
	$self .) | (cd "$out/src" && tar -xf -)
(cd "$out/src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed; the whole log: $out/build.log" >&2
	exit 1
}
ls "$out"/*.deb
