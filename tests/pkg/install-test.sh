#!/bin/sh
# make install, as a user of the library sees it:
# - into a scratch PREFIX, and again into another PREFIX with the same build dir (CMake's
#   cache must not keep the first);
# - the tool, the shared library with SONAME libagentgc.so.0, the static library, header,
#   pkg-config file, man page, the completions that exist; no agentgc-fixture anywhere
#   unless INSTALL_FIXTURE=1 (then only in libexec/agentgc);
# - a program linked with `pkg-config --libs agentgc` (shared) and, fully static, with
#   `pkg-config --static --libs agentgc`, runs and agrees with the tool on a fixture home.
#   tests/pkg/install-test.sh FIXTURE   (FIXTURE: a built agentgc-fixture)
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-install.XXXXXX")
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
log=$scratch/make.log
mk() {
	make -C "$src" --no-print-directory BUILD="$scratch/build" CMAKE_ARGS=-DAGC_TESTS=OFF "$@" \
		>"$log" 2>&1 || {
		cat "$log" >&2
		fail "make $*"
	}
}

p1=$scratch/p1
mk install PREFIX="$p1"
[ -x "$p1/bin/agentgc" ] || fail "no $p1/bin/agentgc"
"$p1/bin/agentgc" --help >/dev/null 2>&1 || fail "the installed agentgc does not run"
# lib or lib/<multiarch>, as GNUInstallDirs chose
so=$(find "$p1" -name 'libagentgc.so.0' | head -n 1)
[ -n "$so" ] || fail "no libagentgc.so.0 under $p1"
libdir=$(dirname "$so")
[ -f "$libdir/libagentgc.a" ] && [ -L "$libdir/libagentgc.so" ] || fail "no libagentgc.a or libagentgc.so in $libdir"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libagentgc.so.0 ] || fail "SONAME is '$soname'"
[ -f "$p1/include/agentgc/agentgc.h" ] && [ -f "$libdir/pkgconfig/agentgc.pc" ] || fail "no header or agentgc.pc"
[ -f "$p1/share/man/man1/agentgc.1" ] || fail "no man page"
for c in "agentgc.bash:share/bash-completion/completions/agentgc" "_agentgc:share/zsh/site-functions/_agentgc" \
	"agentgc.fish:share/fish/vendor_completions.d/agentgc.fish"; do
	if [ -f "$src/completions/${c%%:*}" ]; then
		[ -f "$p1/${c#*:}" ] || fail "completions/${c%%:*} not installed as ${c#*:}"
	fi
done
[ -z "$(find "$p1" -name 'agentgc-fixture*')" ] || fail "agentgc-fixture installed without INSTALL_FIXTURE"
ok "make install PREFIX=$p1: tool, libraries (SONAME $soname), header, pkg-config, man page; no fixture"

# the scheduled prune: a systemd user service and timer, and the template of its options
units=$p1/lib/systemd/user
[ -f "$units/agentgc-prune.service" ] && [ -f "$units/agentgc-prune.timer" ] || fail "no systemd units in $units"
[ -f "$p1/share/agentgc/prune.env" ] || fail "no share/agentgc/prune.env"
grep -qx "ExecStart=$p1/bin/agentgc --json prune \$AGENTGC_PRUNE_OPTS --yes" "$units/agentgc-prune.service" ||
	fail "the service does not run $p1/bin/agentgc: $(grep ExecStart "$units/agentgc-prune.service")"
grep -qx 'EnvironmentFile=-%E/agentgc/prune.env' "$units/agentgc-prune.service" || fail "the service reads no prune.env"
grep -qx 'Persistent=true' "$units/agentgc-prune.timer" && grep -qx 'OnCalendar=daily' "$units/agentgc-prune.timer" ||
	fail "the timer is not daily and persistent"
if command -v systemd-analyze >/dev/null 2>&1; then
	# offline, the man page aside (man may not be installed; it is checked above)
	systemd-analyze verify --man=no "$units/agentgc-prune.service" "$units/agentgc-prune.timer" >"$log" 2>&1 ||
		{ cat "$log" >&2; fail "systemd-analyze verify"; }
	ok "systemd-analyze verify: agentgc-prune.service and agentgc-prune.timer"
else
	echo "# systemd-analyze is not installed: the units are not verified"
fi
# what the service runs, with the template's options, as a shell reads the file: a prune that
# works, on a fixture home of its own
uhome=$scratch/unit-home
"$fixture" --home "$uhome" --tmp "$scratch/unit-tmp" --seed 5 --claude 4 --now 1795984693 --quiet
out=$(
	HOME=$uhome XDG_STATE_HOME=$uhome/.local/state TMPDIR=$scratch/unit-tmp AGENTGC_NOW=1795984693 sh -c '
		. "$1"
		exec "$2" --json prune $AGENTGC_PRUNE_OPTS --yes' _ "$p1/share/agentgc/prune.env" "$p1/bin/agentgc"
) || fail "the service's command on a fixture home: exit $?"
printf '%s\n' "$out" | tail -n 1 | grep -q '"summary":{' || fail "the service's command printed no summary: $out"
[ "$(printf '%s\n' "$out" | grep -c '"status":"purged"')" -ge 1 ] || fail "the service's command pruned nothing: $out"
ok "the scheduled prune's units and options: installed, naming $p1/bin/agentgc; its command prunes a fixture home"

grep -qx "prefix=$p1" "$libdir/pkgconfig/agentgc.pc" || fail "agentgc.pc: $(head -n 1 "$libdir/pkgconfig/agentgc.pc")"
p2=$scratch/p2
mk install PREFIX="$p2" INSTALL_FIXTURE=1
[ -x "$p2/bin/agentgc" ] || fail "second install with another PREFIX did not go to $p2"
pc2=$(find "$p2" -name agentgc.pc)
grep -qx "prefix=$p2" "$pc2" || fail "agentgc.pc of the second install: $(head -n 1 "$pc2")"
[ -x "$p2/libexec/agentgc/agentgc-fixture" ] || fail "INSTALL_FIXTURE=1: no libexec/agentgc/agentgc-fixture"
[ "$(find "$p2" -name 'agentgc-fixture*' | wc -l)" -eq 1 ] || fail "agentgc-fixture installed elsewhere too"
ok "a second make install into another PREFIX with the same build dir goes there; INSTALL_FIXTURE=1 puts the fixture in libexec"

# a library user's program, against the first install
home=$scratch/home
"$fixture" --home "$home" --tmp "$scratch/tmp" --seed 3 --claude 3 --opencode 2 --quiet
want=$(HOME=$home "$p1/bin/agentgc" --home "$home" --json ls | wc -l)
[ "$want" -eq 5 ] || fail "agentgc ls on the fixture home: $want sessions, not 5"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -o "$scratch/roots-shared" "$src/tests/pkg/roots.c" $(pkg-config --cflags --libs agentgc) ||
	fail "link with pkg-config --libs agentgc"
out=$(LD_LIBRARY_PATH=$libdir "$scratch/roots-shared" "$home") || fail "roots-shared: $out"
printf '%s\n' "$out" | grep -qx "sessions $want" || fail "roots-shared: $out"
printf '%s\n' "$out" | grep -qx 'root claude config exists' || fail "roots-shared: $out"
LD_LIBRARY_PATH=$libdir ldd "$scratch/roots-shared" | grep -q "libagentgc.so.0 => $libdir/" ||
	fail "roots-shared does not use $libdir/libagentgc.so.0"
ok "a program linked with pkg-config --libs agentgc uses libagentgc.so.0 and lists the fixture home's $want sessions"

static_libs=$(pkg-config --static --libs agentgc)
cc -static -o "$scratch/roots-static" "$src/tests/pkg/roots.c" $(pkg-config --cflags agentgc) $static_libs \
	>"$log" 2>&1 || {
	cat "$log" >&2
	fail "cc -static ... $static_libs"
}
out=$("$scratch/roots-static" "$home") || fail "roots-static: $out"
printf '%s\n' "$out" | grep -qx "sessions $want" || fail "roots-static: $out"
file=$(readelf -d "$scratch/roots-static" 2>&1 || true)
printf '%s\n' "$file" | grep -q NEEDED && fail "roots-static has dynamic dependencies"
ok "a fully static program linked with pkg-config --static --libs agentgc ($static_libs) runs"

echo "$n passed, 0 failed"
