#!/bin/bash
# The benchmark: agentgc against the tools a person would use for the same question, side
# by side in one run on one generated home. Ratios are what counts: absolute times on a
# shared machine are noise.
#   bench/run.sh [BUILD_DIR] [SESSIONS]        (defaults: build, 100000)
# Writes bench/report.md (and prints it).
set -euo pipefail
build=${1:-build}
n=${2:-100000}
agc=$(cd "$build" && pwd)/agentgc
fix=$(cd "$build" && pwd)/agentgc-fixture
work=${BENCH_DIR:-$(cd "$build" && pwd)/bench-home}
report=$(cd "$(dirname "$0")" && pwd)/report.md
runs=${BENCH_RUNS:-5}

now_ns() { date +%s%N; }

# Median wall time in ms of running "$@" $runs times (output discarded).
median_ms() {
	local t=() i s e
	for ((i = 0; i < runs; i++)); do
		s=$(now_ns)
		"$@" >/dev/null 2>&1 || true
		e=$(now_ns)
		t+=($(((e - s) / 1000)))
	done
	printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

peak_kib() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1; }

if [ ! -f "$work/.done-$n" ]; then
	rm -rf "$work"
	mkdir -p "$work/home" "$work/tmp"
	s=$(now_ns)
	"$fix" --home "$work/home" --tmp "$work/tmp" --seed 42 --claude "$n" --projects 200 \
		--manifest "$work/manifest.jsonl" --quiet
	e=$(now_ns)
	echo "generated $n sessions in $(((e - s) / 1000000)) ms" >&2
	touch "$work/.done-$n"
fi
export HOME="$work/home" TMPDIR="$work/tmp"
unset CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMP TEMP
files=$(find "$work/home" "$work/tmp" -type f | wc -l)

# Warm the cache, then measure side by side.
find "$work/home" "$work/tmp" -type f -printf '%s\n' >/dev/null
"$agc" ls >/dev/null
find_ms=$(median_ms find "$work/home" "$work/tmp" -type f -printf '%s\n')
ls_ms=$(median_ms "$agc" ls)
lsj_ms=$(median_ms "$agc" --json ls)
ls_kib=$(peak_kib "$agc" ls)

# in-use with about 1,000 processes running.
id=$(sed -n '1s/^{"agent":"claude","id":"\([0-9a-f-]*\)".*/\1/p' "$work/manifest.jsonl")
transcript=$(find "$work/home/.claude/projects" -name "$id.jsonl" | head -n 1)
pids=()
for ((i = 0; i < 1000; i++)); do
	sleep 600 &
	pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
procs=$(ls -d /proc/[0-9]* | wc -l)
inuse_ms=$(median_ms "$agc" in-use claude "$id")
lsof_ms=$(median_ms lsof -n -w "$transcript")
kill "${pids[@]}" 2>/dev/null || true
wait 2>/dev/null || true
trap - EXIT

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

{
	echo "# agentgc benchmark"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, median of $runs runs, warm cache."
	echo "Home: $n Claude Code sessions over 200 projects, $files files."
	echo
	echo "| measure | agentgc | reference | ratio | target |"
	echo "|---|---|---|---|---|"
	echo "| ls wall time | ${ls_ms} ms | find -type f -printf: ${find_ms} ms | $(ratio "$ls_ms" "$find_ms")x | within 2x |"
	echo "| ls --json wall time | ${lsj_ms} ms | find: ${find_ms} ms | $(ratio "$lsj_ms" "$find_ms")x | within 2x |"
	echo "| ls peak memory | $((ls_kib / 1024)) MiB | | | under 64 MiB |"
	echo "| in-use, one id, $procs processes | ${inuse_ms} ms | lsof on the transcript: ${lsof_ms} ms | $(ratio "$lsof_ms" "$inuse_ms")x faster | under 20 ms, 10x faster |"
} | tee "$report"
