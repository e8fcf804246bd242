#!/bin/bash
# The benchmark: agentgc against the tools a person would use for the same question, side
# by side in one run on one generated home. Ratios are what counts: absolute times on a
# shared machine are noise.
#   bench/run.sh [--in-use] [--before BIN] [BUILD_DIR] [SESSIONS]   (defaults: build, 100000)
#     --in-use      only the in-use comparison (its section of the report is rewritten, the
#                   rest of the report is kept)
#     --before BIN  also time BIN (an older agentgc) in the same rounds, for a before/after;
#                   BENCH_BEFORE_LABEL names it in the report (default: its directory)
# Writes bench/report.md (and prints the sections it wrote).
set -euo pipefail
only=
before=
while [[ $# -gt 0 ]]; do
	case $1 in
	--in-use) only=in-use; shift ;;
	--before) before=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	--) shift; break ;;
	-*) echo "bench/run.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=${1:-build}
n=${2:-100000}
agc=$(cd "$build" && pwd)/agentgc
fix=$(cd "$build" && pwd)/agentgc-fixture
work=${BENCH_DIR:-$(cd "$build" && pwd)/bench-home}
report=$(cd "$(dirname "$0")" && pwd)/report.md
runs=${BENCH_RUNS:-5}
procs_extra=${BENCH_PROCS:-1000}
[[ -z $before || -x $before ]] || { echo "bench/run.sh: '$before' is not executable" >&2; exit 2; }

now_us() { local t=${EPOCHREALTIME/./}; echo "${t#0}"; }

# Median wall time in ms of running "$@" $runs times (output discarded).
median_ms() {
	local t=() i s e
	for ((i = 0; i < runs; i++)); do
		s=$(now_us)
		"$@" >/dev/null 2>&1 || true
		e=$(now_us)
		t+=($((e - s)))
	done
	printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

peak_kib() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

if [ ! -f "$work/.done-$n" ]; then
	rm -rf "$work"
	mkdir -p "$work/home" "$work/tmp"
	s=$(now_us)
	"$fix" --home "$work/home" --tmp "$work/tmp" --seed 42 --claude "$n" --projects 200 \
		--manifest "$work/manifest.jsonl" --quiet
	e=$(now_us)
	echo "generated $n sessions in $(((e - s) / 1000)) ms" >&2
	touch "$work/.done-$n"
fi
export HOME="$work/home" TMPDIR="$work/tmp"
unset CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMP TEMP CLAUDE_CODE_SESSION_ID
files=$(find "$work/home" "$work/tmp" -type f | wc -l)

# Rewrite the section NAME of the report (between its markers) with the text on stdin;
# a report without that section gets it at the end.
put_section() {
	local name=$1 body
	body=$(cat)
	[[ -f $report ]] || printf '# agentgc benchmark\n' >"$report"
	BODY=$body awk -v name="$name" '
		$0 == "<!-- " name " -->" { print; print ENVIRON["BODY"]; skip = 1; done = 1; next }
		$0 == "<!-- /" name " -->" { skip = 0 }
		!skip { print }
		END {
			if (!done) {
				print ""; print "<!-- " name " -->"; print ENVIRON["BODY"]
				print "<!-- /" name " -->"
			}
		}' "$report" >"$report.new"
	mv "$report.new" "$report"
	printf '%s\n' "$body"
}

header="$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, median of $runs runs, warm cache."

if [[ $only != in-use ]]; then
	# Warm the cache, then measure side by side.
	find "$work/home" "$work/tmp" -type f -printf '%s\n' >/dev/null
	"$agc" ls >/dev/null
	find_ms=$(median_ms find "$work/home" "$work/tmp" -type f -printf '%s\n')
	ls_ms=$(median_ms "$agc" ls)
	lsj_ms=$(median_ms "$agc" --json ls)
	ls_kib=$(peak_kib "$agc" ls)
	{
		echo "## ls"
		echo
		echo "$header"
		echo "Home: $n Claude Code sessions over 200 projects, $files files."
		echo
		echo "| measure | agentgc | reference | ratio | target |"
		echo "|---|---|---|---|---|"
		echo "| ls wall time | ${ls_ms} ms | find -type f -printf: ${find_ms} ms | $(ratio "$ls_ms" "$find_ms")x | within 2x |"
		echo "| ls --json wall time | ${lsj_ms} ms | find: ${find_ms} ms | $(ratio "$lsj_ms" "$find_ms")x | within 2x |"
		echo "| ls peak memory | $((ls_kib / 1024)) MiB | | | under 64 MiB |"
	} | put_section ls
fi

# in-use with about 1,000 extra processes running: agentgc, and fuser and lsof asked about
# the same files (every file and dir of the session), timed in turn, round after round, so
# that a change in the machine's speed hits them all alike.
first=$(sed -n 1p "$work/manifest.jsonl")
id=$(jq -r .id <<<"$first")
mapfile -t arts < <(jq -r '.artifacts[]' <<<"$first")
mapfile -t gate_files < <(find "${arts[@]}" 2>/dev/null)
pids=()
for ((i = 0; i < procs_extra; i++)); do
	sleep 600 &
	pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
all=(/proc/[0-9]*)
procs=${#all[@]}
names=(after fuser lsof)
cmds_after=("$agc" in-use claude "$id")
cmds_fuser=(fuser "${gate_files[@]}")
cmds_lsof=(lsof -n -w "${gate_files[@]}")
if [[ -n $before ]]; then
	names=(after before fuser lsof)
	cmds_before=("$before" in-use claude "$id")
fi
declare -A t
for name in "${names[@]}"; do t[$name]=; done
for ((r = -1; r < runs; r++)); do # round -1 warms up
	for name in "${names[@]}"; do
		declare -n cmd=cmds_$name
		s=$(now_us)
		"${cmd[@]}" >/dev/null 2>&1 || true
		e=$(now_us)
		((r < 0)) || t[$name]+="$((e - s)) "
		unset -n cmd
	done
done
kill "${pids[@]}" 2>/dev/null || true
wait 2>/dev/null || true
trap - EXIT
med() { printf '%s\n' ${t[$1]} | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'; }
declare -A m
for name in "${names[@]}"; do m[$name]=$(med "$name"); done
{
	echo "## in-use"
	echo
	echo "$header"
	echo "Home: $n Claude Code sessions over 200 projects; $procs processes ($procs_extra extra"
	echo "\`sleep\`s). One session of ${#gate_files[@]} files and dirs; \`fuser\` and \`lsof -n -w\` are"
	echo "given all of them. The commands run in turn, round after round."
	echo
	echo "| agentgc in-use | time | lsof | ratio | fuser | ratio | target |"
	echo "|---|---|---|---|---|---|---|"
	if [[ -n $before ]]; then
		echo "| before (${BENCH_BEFORE_LABEL:-$(basename "$(dirname "$before")")}) | ${m[before]} ms | ${m[lsof]} ms | $(ratio "${m[lsof]}" "${m[before]}")x faster | ${m[fuser]} ms | $(ratio "${m[fuser]}" "${m[before]}")x faster | |"
	fi
	echo "| this build | ${m[after]} ms | ${m[lsof]} ms | $(ratio "${m[lsof]}" "${m[after]}")x faster | ${m[fuser]} ms | $(ratio "${m[fuser]}" "${m[after]}")x faster | 10x faster than lsof, not slower than fuser |"
} | put_section in-use
