#!/bin/bash
# make bench's script at a tiny size (bench/run.sh --self-test: 50 sessions, one round, no
# OpenCode peer): it runs end to end, writes every table of the report and the machine
# line, and leaves none of the sleeping processes it starts for in-use, also when it is
# interrupted. Nothing here is timed.
#   tests/pkg/bench-test.sh BUILD_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: tests/pkg/bench-test.sh BUILD_DIR}" && pwd)
for t in hyperfine lsof fuser /usr/bin/time; do
	if ! command -v "$t" >/dev/null; then
		echo "skip: '$t' is missing (scripts/deps.sh --bench installs what make bench needs)" >&2
		exit 77
	fi
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
n=0
fail() {
	echo "not ok: $*" >&2
	exit 1
}
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
# The sleeping processes inherit the environment: a marker of this test finds any left.
mark=AGC_BENCH_TEST_MARK=$$.$RANDOM
left() { grep -lzx "$mark" /proc/[0-9]*/environ 2>/dev/null | wc -l; }

rc=0
env "$mark" BENCH_DIR="$scratch/b" "$src/bench/run.sh" --self-test "$build" \
	>"$scratch/out" 2>"$scratch/err" || rc=$?
[[ $rc -eq 0 ]] || fail "bench/run.sh --self-test: exit $rc: $(tail -n 20 "$scratch/err")"
r=$scratch/b/REPORT.md
[[ -s $r ]] || fail "no report in BENCH_DIR"
[[ ! -e $src/bench/REPORT.md ]] || ! grep -q "(self-test)" "$src/bench/REPORT.md" ||
	fail "the self-test wrote bench/REPORT.md"
ok "--self-test exits 0 and writes its report into BENCH_DIR"

grep -Eq '^Machine: [0-9]+ cores, .*, Linux [^ ]+, bench dir on [a-z0-9]+;$' "$r" || fail "machine line: $(grep Machine "$r")"
grep -Eq '^load average [0-9.]+ [0-9.]+ [0-9.]+ before, [0-9.]+ [0-9.]+ [0-9.]+ after\.$' "$r" || fail "load line"
grep -Eq '^agentgc: commit [0-9a-f]+' "$r" || fail "commit line"
ok "the report names the machine, the load before and after, and the commit"

for h in "## 1. ls on 50 Claude Code sessions" "## 2. ls scaling" "## 3. in-use with about 1,000 processes" \
	"## 4. purge of one OpenCode session with 100 parts" "## 5. purge of many Claude Code ids in one call"; do
	grep -qxF "$h" "$r" || fail "no section '$h'"
done
# one row per target, each with a figure and a verdict
# shellcheck disable=SC2016 # backquotes as the report prints them
for row in '`ls` vs walkfloor' '`ls` vs find' '`ls --json` vs walkfloor' '`ls` peak memory' \
	'`ls --limit 20` peak memory' '`in-use` wall time' 'vs `lsof -t`' 'vs `fuser`' 'CPU time, vs `lsof -t`' \
	'`purge` vs purge-floor.sh' 'vs `opencode session delete`' '10 ids in one call'; do
	line=$(grep -F "| $row |" "$r") || fail "no row '$row'"
	case $row in
	*json* | CPU*) ;;
	*opencode*) [[ $line == *"not measured"* ]] || fail "row '$row': $line" ;;
	*) [[ $line =~ \|\ (met|misses\ by\ [0-9.]+x)\ \|$ ]] || fail "row '$row' has no verdict: $line" ;;
	esac
done
grep -Eq '^\| 50 \| [0-9]+ \| [0-9.]+ m?s \(' "$r" || fail "no scaling row for 50 sessions"
grep -Eq '^\| 5 \| 1 \| [0-9.]+ m?s \(.*\| 0 \|$' "$r" || fail "no bulk purge row of 5 ids, or it exited non-zero"
grep -Eq '^\| 5, xargs -n1 \| 1 \| [0-9.]+ m?s \(' "$r" || fail "no xargs row"
grep -q "the copy was checked equal to the pristine home afterwards" "$r" || fail "the purge copy was not restored"
# shellcheck disable=SC2016 # backquotes as the report prints them
grep -Eq '^\| claude \| 20 \| 1 \| disk \| [0-9.]+ m?s \(.*\| [0-9.]+ m?s \(.*\| [0-9.]+x \(.*\| 0 \|$' "$r" ||
	fail "no prune row of 20 Claude sessions with its rm -rf floor and nothing left: $(grep -F '| claude | 20 |' "$r")"
ok "every table and row, each target met or missed by a factor"

[[ $(left) -eq 0 ]] || fail "$(left) sleeping processes left behind"
[[ -z $(find "$scratch/b" -maxdepth 1 -name 'run.*') ]] || fail "the run's scratch is left in BENCH_DIR"
ok "no sleeping process and no scratch left behind"

# Interrupted while the sleepers run: they end with it. (With job control on, as in a
# terminal: a background job of a script without it ignores SIGINT.)
set -m
env "$mark" BENCH_DIR="$scratch/b" "$src/bench/run.sh" --self-test "$build" >/dev/null 2>&1 &
pid=$!
set +m
for ((i = 0; i < 600; i++)); do
	(($(left) == 0)) || break
	sleep 0.05
done
(($(left) > 0)) || fail "no sleeping processes seen"
# SIGINT, unless this test was itself started ignoring it (a background job of a script:
# the ignoring is inherited and no trap can undo it), then SIGTERM, trapped the same way.
# SIGINT goes to the job's whole process group, as a terminal's ^C does: bash drops a SIGINT
# sent to it alone while it waits for a command that did not die of it (its sleepers, started
# in the background, ignore SIGINT and stay for run.sh to end). SIGTERM goes to run.sh alone.
sig=INT target=-$pid
(((0x$(awk '/^SigIgn:/ { print $2 }' /proc/$$/status) & 2) == 0)) || { sig=TERM; target=$pid; }
kill -"$sig" -- "$target"
rc=0
wait "$pid" || rc=$?
[[ $rc -ne 0 ]] || fail "interrupted, it exited 0"
[[ $(left) -eq 0 ]] || fail "interrupted: $(left) sleeping processes left behind"
ok "interrupted (SIG$sig) during in-use: exit $rc, no sleeping process left"
echo "$n passed, 0 failed"
