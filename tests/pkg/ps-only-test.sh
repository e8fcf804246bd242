#!/bin/sh
# The build of a system without /proc (macOS, the BSDs), made on Linux: AGC_PROC_PS_ONLY=ON
# leaves proc-linux.c out, so the process table is read through ps and lsof alone. It must
# build without a warning, its unit test of the backend must pass, and the tool it makes must
# find a holder and a free session as the /proc build does (the end-to-end suite runs the
# backend itself, as AGENTGC_PROC_BACKEND=ps, in e2e/ps).
#   tests/pkg/ps-only-test.sh
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-psonly.XXXXXX")
holder=
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null; rm -rf "$scratch"' EXIT INT TERM
n=0
fail() {
	echo "not ok: $*" >&2
	exit 1
}
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
b=$scratch/build
log=$scratch/build.log
cmake -S "$src" -B "$b" -DAGC_PROC_PS_ONLY=ON -DCMAKE_C_FLAGS=-Werror >"$log" 2>&1 ||
	{ cat "$log" >&2; fail "configure with AGC_PROC_PS_ONLY=ON"; }
cmake --build "$b" -j"$(nproc 2>/dev/null || echo 2)" --target agentgc_cli agentgc-fixture test_procps \
	>"$log" 2>&1 || { cat "$log" >&2; fail "build with AGC_PROC_PS_ONLY=ON"; }
o=$b/CMakeFiles/agentgc_obj.dir/src/lib
[ -e "$o/proc-ps.c.o" ] || fail "proc-ps.c was not built"
[ ! -e "$o/proc-linux.c.o" ] || fail "proc-linux.c was built in"
ok "builds without proc-linux.c, with -Werror"

mkdir -p "$scratch/ut"
TMPDIR=$scratch/ut "$b/test_procps" >"$log" 2>&1 || { cat "$log" >&2; fail "test_procps"; }
ok "its unit test of the ps backend passes"

# a holder of a transcript is found through lsof, and the session is free once it is gone
home=$scratch/home
"$b/agentgc-fixture" --home "$home" --claude 2 --quiet
export HOME="$home" TMPDIR="$home/tmp"
unset AGENTGC_PROC_BACKEND
id=$("$b/agentgc" ls --json | jq -r .id | head -n 1)
f=$("$b/agentgc" show claude "$id" --json | jq -r '.. | .path? // empty' | grep '\.jsonl$' | head -n 1)
[ -f "$f" ] || fail "no transcript for $id"
sleep 1000 <"$f" >/dev/null 2>&1 &
holder=$!
i=0
until [ "$(readlink "/proc/$holder/fd/0" 2>/dev/null)" = "$f" ] || [ $i -ge 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
rc=0
out=$("$b/agentgc" --json in-use claude "$id" 2>>"$log") || rc=$?
[ "$rc" = 4 ] || fail "in-use with a holder: exit $rc, expected 4: $out"
echo "$out" | jq -e --argjson p "$holder" '.holders | any(.pid == $p and .why == "open-file")' >/dev/null ||
	fail "the holder is not named: $out"
kill "$holder"
wait "$holder" 2>/dev/null || true
holder=
"$b/agentgc" in-use claude "$id" >/dev/null || fail "in-use once the holder is gone: not free"
ok "the tool finds a holder through lsof, and the session free once it is gone"
# a value that names no backend of this build: in use, and why
rc=0
AGENTGC_PROC_BACKEND=proc "$b/agentgc" in-use claude "$id" >/dev/null 2>"$scratch/err" || rc=$?
[ "$rc" = 4 ] && grep -q "AGENTGC_PROC_BACKEND" "$scratch/err" ||
	fail "AGENTGC_PROC_BACKEND=proc in a build without /proc: exit $rc, $(cat "$scratch/err")"
ok "AGENTGC_PROC_BACKEND=proc names no backend of this build: in use, and said"
