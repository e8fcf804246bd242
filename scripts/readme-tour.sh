#!/bin/sh
# The README's tour is the output of the demo (scripts/demo.sh, what `make demo` runs), with
# the demo dir's paths shortened to `~`. This rewrites the block between the two tour
# markers of README.md from a fresh run, or with --check says whether it is up to date.
# Usage: scripts/readme-tour.sh [--check] [BUILD_DIR]
#   exit 0: written (or, with --check, up to date); 1: --check found it stale; 2: usage
#
# Fixed for the run, so that the output depends on the commit alone: the demo's clock
# (demo.sh), the locale, no colour, an 80-column terminal; what depends on the machine is
# shown as the same text everywhere (the demo dir as ~, the space on disk as …). The uid in Claude's temp dir
# (claude-<uid>) is shown as root's, which the README's commands run as.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
readme=$here/README.md
check=no
if [ "${1:-}" = "--check" ]; then
	check=yes
	shift
fi
[ $# -le 1 ] || {
	echo "usage: $0 [--check] [BUILD_DIR]" >&2
	exit 2
}
build=$(cd "${1:-$here/build}" && pwd)
begin='<!-- tour: begin (scripts/readme-tour.sh writes this block from make demo; do not edit) -->'
end='<!-- tour: end -->'
grep -qxF "$begin" "$readme" && grep -qxF "$end" "$readme" || {
	echo "readme-tour: $readme has no tour markers" >&2
	exit 2
}

# Some sizes the tour shows count files that hold absolute paths (Claude's registry entry names
# its socket's path), so the demo runs in a dir whose path has the same length wherever the
# clone is: the build dir's, padded to 200 characters.
base=$build/readme-tour
want=200
len=$(printf '%s/' "$base" | wc -c)
if [ "$len" -gt $((want - 8)) ]; then
	echo "readme-tour: the build dir's path is too long for the tour ($len characters, at most $((want - 8)))" >&2
	exit 2
fi
work=$base/$(printf '%*s' $((want - len)) '' | tr ' ' p)
rm -rf "$base"
mkdir -p "$work"
uid=$(id -u)
LC_ALL=C.UTF-8 NO_COLOR=1 TERM=dumb COLUMNS=80 LINES=24 \
	"$here/scripts/demo.sh" "$build" "$work/demo" </dev/null >"$work/raw" 2>&1 ||
	{
		cat "$work/raw" >&2
		echo "readme-tour: the demo failed" >&2
		exit 1
	}
# the demo's dirs as the README writes them; its first line is blank
{
	echo '```text'
	# the space on disk (st_blocks) depends on the file system: shown as …
	sed -e '1{/^$/d;}' -e "s|$work/demo/home|~|g" -e "s|$work/demo/tmp|~/../tmp|g" \
		-e "s|/claude-$uid/|/claude-0/|g" -e 's/"disk":[0-9]*/"disk":…/g' \
		-e 's/([0-9.]* [KMGT]*i*B on disk)/(… on disk)/g' "$work/raw"
	echo '```'
} >"$work/tour"

# README.md with the block between the markers replaced by the tour
awk -v begin="$begin" -v end="$end" -v tour="$work/tour" '
	$0 == begin { print; while ((getline l < tour) > 0) print l; skip = 1; next }
	$0 == end { skip = 0 }
	!skip { print }' "$readme" >"$work/README.md"

if [ "$check" = yes ]; then
	# The order of the entries of a dir is the file system's (ext4 hashes names with a seed of
	# its own, tmpfs lists newest first), and a report lists artifacts in the order discovery
	# met them: the check compares the lines of the tour, sorted, so that the same tour on
	# another file system is not stale; every count, id, size and message is still compared.
	LC_ALL=C sort "$readme" >"$work/have.sorted"
	LC_ALL=C sort "$work/README.md" >"$work/want.sorted"
	if ! diff -u "$work/have.sorted" "$work/want.sorted" >"$work/diff"; then
		cat "$work/diff" >&2
		echo "readme-tour: README.md's tour is not what make demo prints at this commit (above: - README, + demo); run: make tour" >&2
		exit 1
	fi
	rm -rf "$base"
	echo "readme-tour: README.md's tour is what make demo prints"
	exit 0
fi
if cmp -s "$readme" "$work/README.md"; then
	echo "readme-tour: README.md's tour is up to date"
else
	cp "$work/README.md" "$readme"
	echo "readme-tour: README.md's tour rewritten from make demo"
fi
rm -rf "$base"
