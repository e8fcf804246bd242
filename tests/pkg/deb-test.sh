#!/bin/sh
# The Debian packages, as a user gets them: built with dpkg-buildpackage (scripts/deb.sh),
# unpacked with `dpkg -x` into a scratch root (no dpkg database, nothing installed on the
# system), then the tool run from there and a library user's program built against the
# unpacked libagentgc-dev and run against the unpacked libagentgc0.
#   tests/pkg/deb-test.sh OUT_DIR   (where the packages are built; made anew)
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || {
	echo "usage: $0 OUT_DIR" >&2
	exit 2
}
out=$1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-deb.XXXXXX")
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

debs=$("$src/scripts/deb.sh" "$out") || fail "scripts/deb.sh failed"
# the one version, which CMakeLists.txt reads for project(VERSION)
version=$(sed -n 's/^#define AGENTGC_VERSION "\([0-9.]*\)"$/\1/p' "$src/include/agentgc/agentgc.h")
[ -n "$version" ] || fail "no AGENTGC_VERSION in include/agentgc/agentgc.h"
for p in agentgc libagentgc0 libagentgc-dev; do
	d=$(printf '%s\n' "$debs" | grep "/${p}_[^/]*\.deb$") || fail "no $p package among: $debs"
	[ "$(dpkg-deb -f "$d" Package)" = "$p" ] || fail "$d is not package $p"
	v=$(dpkg-deb -f "$d" Version)
	[ "$v" = "$version" ] || fail "$p version $v, but agentgc.h says $version (debian/changelog)"
	dpkg -x "$d" "$scratch/root"
done
ok "dpkg-buildpackage -us -uc -b built agentgc, libagentgc0 and libagentgc-dev $version"

d=$(printf '%s\n' "$debs" | grep '/libagentgc-dev_')
dpkg-deb -f "$d" Depends | grep -q "libagentgc0 (= $version)" || fail "libagentgc-dev does not depend on libagentgc0 (= $version)"
r=$scratch/root
ma=$(cd "$r/usr/lib" && ls -d ./*/libagentgc.so.0 | sed 's|^\./||; s|/libagentgc.so.0$||')
[ -n "$ma" ] || fail "no usr/lib/<multiarch>/libagentgc.so.0 in libagentgc0"
lib=$r/usr/lib/$ma
soname=$(readelf -d "$lib/libagentgc.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libagentgc.so.0 ] || fail "SONAME '$soname'"
for f in usr/bin/agentgc usr/share/man/man1/agentgc.1.gz usr/include/agentgc/agentgc.h \
	"usr/lib/$ma/libagentgc.a" "usr/lib/$ma/libagentgc.so" "usr/lib/$ma/pkgconfig/agentgc.pc"; do
	[ -e "$r/$f" ] || fail "no /$f in the packages"
done
for c in "agentgc.bash:usr/share/bash-completion/completions/agentgc" \
	"_agentgc:usr/share/zsh/vendor-completions/_agentgc" \
	"agentgc.fish:usr/share/fish/vendor_completions.d/agentgc.fish"; do
	if [ -f "$src/completions/${c%%:*}" ]; then
		[ -f "$r/${c#*:}" ] || fail "completions/${c%%:*} is not in the package as /${c#*:}"
	fi
done
[ -z "$(find "$r" -name 'agentgc-fixture*')" ] || fail "the test tool agentgc-fixture is in a package"
ok "the files: /usr/bin/agentgc, its man page, libagentgc.so.0 (SONAME $soname), .a, .so, header, agentgc.pc; no fixture"

home=$scratch/home
mkdir -p "$home/.claude"
got=$(LD_LIBRARY_PATH=$lib "$r/usr/bin/agentgc" --home "$home" roots 2>&1) || fail "agentgc roots: $got"
printf '%s\n' "$got" | sed 's/^/# /'
printf '%s\n' "$got" | grep -q '^claude  *config  *\(~\|'"$home"'\)/\.claude' || fail "roots: no claude config root"
printf '%s\n' "$got" | grep -q '^opencode  *data  *\(~\|'"$home"'\)/\.local/share/opencode.*missing' ||
	fail "roots: no missing opencode data root"
ok "the unpacked agentgc runs: agentgc --home <scratch> roots"

export PKG_CONFIG_SYSROOT_DIR="$r" PKG_CONFIG_PATH="$lib/pkgconfig"
cc -o "$scratch/roots" "$src/tests/pkg/roots.c" $(pkg-config --cflags --libs agentgc) ||
	fail "cc roots.c \$(pkg-config --cflags --libs agentgc) against the unpacked libagentgc-dev"
LD_LIBRARY_PATH=$lib ldd "$scratch/roots" | grep -q "libagentgc.so.0 => $lib/" || fail "roots does not use the unpacked libagentgc.so.0"
got=$(LD_LIBRARY_PATH=$lib "$scratch/roots" "$home") || fail "roots: $got"
printf '%s\n' "$got" | grep -qx 'root claude config exists' && printf '%s\n' "$got" | grep -qx 'sessions 0' ||
	fail "roots: $got"
ok "a program built with the unpacked libagentgc-dev runs against the unpacked libagentgc0"

echo "$n passed, 0 failed"
