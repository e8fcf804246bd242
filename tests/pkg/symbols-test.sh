#!/bin/sh
# The shared library exports its API and nothing else, and says one version everywhere:
# - every symbol libagentgc.so defines in its dynamic table is a function the public header
#   declares (the internals are hidden: a program cannot come to depend on them), and every
#   function the header declares is exported (a program that uses it links);
# - agc_version(), AGENTGC_VERSION, the build's project version (the .so's file name),
#   `agentgc --version`, the man page and debian/changelog agree.
#   tests/pkg/symbols-test.sh LIBAGENTGC.SO HEADER AGENTGC
set -eu
so=$1
header=$2
tool=$3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-symbols.XXXXXX")
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

# The header's functions: after the preprocessor (no comments, no macros), every agc_ name
# followed by an opening parenthesis is a function it declares (its callbacks' parameters
# are written (*name)(...) and its types are never followed by one).
cc -E -P -x c "$header" >"$scratch/header.i" || fail "cc -E $header"
grep -o 'agc_[A-Za-z0-9_]*[[:space:]]*(' "$scratch/header.i" | sed 's/[[:space:]]*($//' |
	LC_ALL=C sort -u >"$scratch/declared"
[ "$(wc -l <"$scratch/declared")" -ge 30 ] || fail "only $(wc -l <"$scratch/declared") functions found in $header"
# What the library exports: defined symbols of its dynamic table, of any kind (functions,
# data). Sanitizer and toolchain symbols would show up here too, and are exports as well.
nm -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | LC_ALL=C sort -u >"$scratch/exported"
LC_ALL=C comm -13 "$scratch/declared" "$scratch/exported" >"$scratch/extra"
if [ -s "$scratch/extra" ]; then
	echo "# exported by $so but not declared in $header ($(wc -l <"$scratch/extra")):" >&2
	sed 's/^/#   /' "$scratch/extra" | head -n 40 >&2
	fail "the library exports symbols that are not its API"
fi
LC_ALL=C comm -23 "$scratch/declared" "$scratch/exported" >"$scratch/missing"
if [ -s "$scratch/missing" ]; then
	echo "# declared in $header but not exported by $so:" >&2
	sed 's/^/#   /' "$scratch/missing" >&2
	fail "functions of the API are not exported"
fi
ok "$(basename "$so") exports exactly the $(wc -l <"$scratch/declared") functions $(basename "$header") declares"

# One version: the header's, which the build reads for project(VERSION).
hv=$(sed -n 's/^#define AGENTGC_VERSION "\(.*\)"$/\1/p' "$header")
[ -n "$hv" ] || fail "no AGENTGC_VERSION in $header"
real=$(readlink -f "$so")
case $(basename "$real") in
libagentgc.so."$hv") ;;
*) fail "the library is $(basename "$real"), not libagentgc.so.$hv (project(VERSION) differs from AGENTGC_VERSION)" ;;
esac
cat >"$scratch/v.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <agentgc/agentgc.h>
int main(void)
{
	printf("%s\n", agc_version());
	return strcmp(agc_version(), AGENTGC_VERSION) != 0;
}
EOF
cc -o "$scratch/v" "$scratch/v.c" -I"$(dirname "$(dirname "$header")")" "$so" || fail "cc against $so"
lv=$(LD_LIBRARY_PATH=$(dirname "$so") "$scratch/v") || fail "agc_version() is '$lv', not AGENTGC_VERSION '$hv'"
[ "$lv" = "$hv" ] || fail "agc_version() is '$lv', the header says '$hv'"
tv=$("$tool" --version) || fail "agentgc --version failed"
[ "$tv" = "agentgc $hv" ] || fail "agentgc --version says '$tv', not 'agentgc $hv'"
ok "agc_version(), AGENTGC_VERSION, the library's file name and agentgc --version all say $hv"

# The copies a release must bump with it: the man page's title line and the Debian package's
# newest entry (its upstream part).
src=$(cd "$(dirname "$0")/../.." && pwd)
mv=$(sed -n '1s/^\.TH AGENTGC 1 "[^"]*" "agentgc \([^"]*\)".*/\1/p' "$src/docs/agentgc.1")
[ "$mv" = "$hv" ] || fail "docs/agentgc.1 says version '$mv', the header '$hv'"
dv=$(sed -n '1s/^agentgc (\([^)-]*\)[^)]*).*/\1/p' "$src/debian/changelog")
[ "$dv" = "$hv" ] || fail "debian/changelog's newest entry is '$dv', the header says '$hv'"
ok "docs/agentgc.1 and debian/changelog say $hv too"

echo "$n passed, 0 failed"
