#!/bin/bash
# The benchmark (issue 8, SPEC "Performance"): agentgc against its floor and its peers, each
# pair timed side by side with hyperfine in one run on generated homes, warm cache.
# Ratios are what counts: absolute times on a shared machine are noise.
#   bench/run.sh [--self-test] [--report FILE] [BUILD_DIR]      (default build dir: build)
#     --self-test   tiny homes (50 sessions), one round, no OpenCode peer: checks that the
#                   benchmark runs end to end and writes every table (tests/pkg/bench-test.sh)
#     --report FILE where the report goes (default bench/REPORT.md; --self-test: in BENCH_DIR)
# Environment:
#   BENCH_DIR     the cache of generated homes (default $AGC_CACHE_DIR/bench, else
#                 ${XDG_CACHE_HOME:-~/.cache}/agentgc/bench);
#                 a home is keyed by a hash of the fixture generator and its arguments
#   BENCH_RUNS    rounds per pair (default 5; 3 with BENCH_QUICK)
#   BENCH_QUICK=1 smaller sizes (10,000 sessions at most), for a short run
#   BENCH_PROCS   extra sleeping processes during in-use (default 1000)
#   BENCH_PURGE_BUDGET  seconds one purge measurement may take (default 300): a size whose
#                 estimate (from the smaller sizes) is larger runs once, or, above the size
#                 of the target (1,000 ids), is skipped
#   BENCH_OPENCODE  the opencode binary (default: tests/contract/opencode/install.sh's), or
#                 "none" to leave the OpenCode peer out
# Progress goes to stderr. Every command runs with HOME, TMPDIR and XDG_* of a bench home;
# the sleeping processes are started and killed by pid.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
self_test=
report=
while [[ $# -gt 0 ]]; do
	case $1 in
	--self-test) self_test=1; shift ;;
	--report) report=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "bench/run.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -le 1 ]] || { echo "usage: bench/run.sh [--self-test] [--report FILE] [BUILD_DIR]" >&2; exit 2; }
build=$(cd "${1:-build}" && pwd)
agc=$build/agentgc
fix=$build/agentgc-fixture
[[ -x $agc && -x $fix ]] || { echo "bench/run.sh: no agentgc or agentgc-fixture in '$build' (make build)" >&2; exit 2; }
for t in hyperfine jq sqlite3 lsof fuser cc tar /usr/bin/time; do
	command -v "$t" >/dev/null || { echo "bench/run.sh: '$t' is missing (scripts/deps.sh --bench)" >&2; exit 2; }
done

# the download cache of the contract tests (tests/contract/opencode/install.sh) holds the homes too
cache=${AGC_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?}/.cache}/agentgc}
base=${BENCH_DIR:-$cache/bench}
mkdir -p "$base"
base=$(cd "$base" && pwd)
# The scratch of this run (results, restore lists, the built floor) and the TMPDIR of every
# tool run here: inside the bench dir, never the shared /tmp.
run=$base/run.$$
rm -rf "$run"
mkdir -p "$run/res" "$run/tmp"
export TMPDIR=$run/tmp

quick=${BENCH_QUICK:-}
if [[ -n $self_test ]]; then
	runs=${BENCH_RUNS:-1} ls_n=50 series=(50) claude_n=50 procs=${BENCH_PROCS:-20}
	oc_n=50 oc_parts=100 purge_main=10 purge_series=(5 10) xargs_n=5 prune_series=(20) compact_n=50
	report=${report:-$base/REPORT.md}
	oc_peer=none
elif [[ -n $quick ]]; then
	runs=${BENCH_RUNS:-3} ls_n=10000 series=(1000 10000) claude_n=1000 procs=${BENCH_PROCS:-1000}
	oc_n=2000 oc_parts=1000 purge_main=100 purge_series=(10 100) xargs_n=10 prune_series=(1000) compact_n=2000
	oc_peer=${BENCH_OPENCODE:-}
else
	runs=${BENCH_RUNS:-5} ls_n=100000 series=(1000 10000 100000) claude_n=10000 procs=${BENCH_PROCS:-1000}
	oc_n=20000 oc_parts=10000 purge_main=1000 purge_series=(100 1000 10000) xargs_n=100
	prune_series=(1000 10000) compact_n=20000
	oc_peer=${BENCH_OPENCODE:-}
fi
report=${report:-$here/REPORT.md}
budget=${BENCH_PURGE_BUDGET:-300}

say() { printf '[bench %5ds] %s\n' "$SECONDS" "$*" >&2; }

# ---- what is running, and cleaning up after it ---------------------------------------------
sleepers=()
cleanup() {
	if [[ ${#sleepers[@]} -gt 0 ]]; then
		kill "${sleepers[@]}" 2>/dev/null || true
		wait "${sleepers[@]}" 2>/dev/null || true
		sleepers=()
	fi
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- homes ---------------------------------------------------------------------------------
fix_id=$("$fix" --version 2>/dev/null || sha256sum <"$fix" | cut -c1-64)

# home NAME ARGS...: a home made by the fixture generator with ARGS, in the cache. Sets
# dir[NAME] to the dir holding home/, tmp/ and manifest.jsonl.
declare -A dir
home() {
	local name=$1 key d s
	shift
	key=$(printf '%s\n' "$fix_id" "$@" | sha256sum | cut -c1-16)
	d=$base/$key
	if [[ ! -f $d/.done ]]; then
		say "generating home $name (${*}) in $d"
		s=$SECONDS
		rm -rf "$d"
		mkdir -p "$d/home" "$d/tmp"
		"$fix" --home "$d/home" --tmp "$d/tmp" --manifest "$d/manifest.jsonl" --quiet "$@"
		printf '%s\n' "$@" >"$d/args"
		touch "$d/.done"
		say "generated $name in $((SECONDS - s)) s"
	fi
	dir[$name]=$d
}

uid=$(id -u)
# use_home DIR: HOME, TMPDIR and XDG_* of the bench home in DIR, for every command after it.
use_home() {
	export HOME=$1/home TMPDIR=$1/tmp
	export XDG_DATA_HOME=$HOME/.local/share XDG_CONFIG_HOME=$HOME/.config
	export XDG_STATE_HOME=$HOME/.local/state XDG_CACHE_HOME=$HOME/.cache
	unset CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMP TEMP CLAUDE_CODE_SESSION_ID XDG_RUNTIME_DIR
	local v
	for v in $(compgen -e); do
		if [[ $v == OPENCODE_* ]]; then unset "$v"; fi
	done
}

# ---- timing --------------------------------------------------------------------------------
q() { printf '%q ' "$@"; }
declare -A CMD PREP

# rounds TAG ROUNDS WARM NAME...: times the commands CMD[NAME] (after PREP[NAME], untimed)
# in ROUNDS rounds of one run each, in turn (A B C, then C B A, ...), after WARM rounds that
# are not counted. Appends "round name seconds user system exit" to res/TAG.
rounds() {
	local tag=$1 n=$2 warm=$3 r i name
	shift 3
	local names=("$@") order args
	: >"$run/res/$tag"
	for ((r = 1 - warm; r <= n; r++)); do
		order=()
		if ((r % 2)); then
			order=("${names[@]}")
		else
			for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=("${names[i]}"); done
		fi
		args=()
		for name in "${order[@]}"; do args+=(--prepare "${PREP[$name]:-true}"); done
		for name in "${order[@]}"; do args+=(-n "$name" "${CMD[$name]}"); done
		hyperfine -N -i --runs 1 --style none --export-json "$run/res/$tag.json" "${args[@]}" \
			>/dev/null 2>>"$run/hyperfine.log"
		((r >= 1)) || continue
		jq -r --arg r "$r" '.results[] | [$r, .command, .times[0], .user, .system, .exit_codes[0]] | @tsv' \
			"$run/res/$tag.json" >>"$run/res/$tag"
	done
}

# mmm: "median min max" of the numbers on stdin, one a line
mmm() {
	sort -g | awk '{ v[++k] = $1 } END { if (!k) { print "- - -"; exit }
		printf "%.3f %.3f %.3f\n", (k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2), v[1], v[k] }'
}
# med TAG NAME [FIELD]: "median min max" over the rounds, in ms (FIELD 3 wall, 45 user+sys).
med() {
	awk -F'\t' -v n="$2" -v f="${3:-3}" '$2 == n { print (f == 45 ? $4 + $5 : $f) * 1000 }' "$run/res/$1" | mmm
}
# ratio TAG A B [FIELD]: the ratio A/B of each round: "median min max" (FIELD as for med).
ratio() {
	awk -F'\t' -v a="$2" -v b="$3" -v f="${4:-3}" '{ v = (f == 45 ? $4 + $5 : $f) }
		$2 == a { ta[$1] = v } $2 == b { tb[$1] = v }
		END { for (r in ta) if (tb[r] > 0) print ta[r] / tb[r] }' "$run/res/$1" | mmm
}
# failed TAG NAME: how many rounds of NAME exited non-zero.
failed() { awk -F'\t' -v n="$2" '$2 == n && $6 != 0 { k++ } END { print k + 0 }' "$run/res/$1"; }

ms() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else if (v >= 1000) printf "%.2f s", v / 1000; else if (v >= 10) printf "%.1f ms", v; else printf "%.2f ms", v }'; }
# t3 "MED MIN MAX": "MED (MIN-MAX)" as times
t3() { local a b c; read -r a b c <<<"$1"; echo "$(ms "$a") ($(ms "$b")-$(ms "$c"))"; }
# x3 "MED MIN MAX": the same as ratios
x3() { local a b c; read -r a b c <<<"$1"; awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { if (a == "-") print "-"; else printf "%.2fx (%.2f-%.2f)", a, b, c }'; }
first() { echo "${1%% *}"; }
# inv "MED MIN MAX": 1/x of each (a ratio A/B turned into B/A)
inv() { local a b c; read -r a b c <<<"$1"; awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { if (a == "-" || a == 0) print "- - -"; else printf "%.3f %.3f %.3f\n", 1 / a, 1 / c, 1 / b }'; }
# at_most V LIMIT / at_least V LIMIT: "met", or by how much V misses the target
at_most() { awk -v v="$1" -v l="$2" 'BEGIN { if (v == "-") print "not measured"; else if (v <= l) print "met"; else printf "misses by %.2fx\n", v / l }'; }
at_least() { awk -v v="$1" -v l="$2" 'BEGIN { if (v == "-") print "not measured"; else if (v >= l) print "met"; else if (v > 0) printf "misses by %.2fx\n", l / v; else print "misses" }'; }

# peak_kib CMD...: the maximum resident set size of CMD (/usr/bin/time -v), in KiB
peak_kib() {
	/usr/bin/time -v -o "$run/time.out" "$@" >/dev/null 2>&1 || true
	awk -F': ' '/Maximum resident set size/ { print $2 }' "$run/time.out"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# ---- the machine ---------------------------------------------------------------------------
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
fs=$(df --output=fstype "$base" | tail -n 1 | tr -d ' ')
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $commit != unknown && -n $(git -C "$src" status --porcelain -uno -- . ':!bench/REPORT.md' 2>/dev/null) ]]; then commit="$commit (with uncommitted changes)"; fi
version=$("$agc" --version 2>/dev/null | head -n 1 || true)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
say "bench dir $base, $runs rounds per pair${quick:+, quick}${self_test:+, self-test}; load $load_before"

cc -O2 -o "$run/walkfloor" "$here/walkfloor.c"
walk=$run/walkfloor

# ---- 1 and 2: ls ---------------------------------------------------------------------------
sizes=("${series[@]}")
[[ " ${sizes[*]} " == *" $ls_n "* ]] || sizes+=("$ls_n")
declare -A lsmem lslim lsr
for n in "${sizes[@]}"; do
	home "c$n" --seed 42 --claude "$n" --projects 200
	d=${dir[c$n]}
	use_home "$d"
	roots=("$HOME/.claude" "$TMPDIR/claude-$uid")
	CMD=() PREP=()
	CMD[ls]=$(q "$agc" ls)
	CMD[walkfloor]=$(q "$walk" "${roots[@]}")
	names=(ls walkfloor)
	if [[ $n == "$ls_n" ]]; then
		CMD[ls-json]=$(q "$agc" --json ls)
		CMD[find]=$(q find "${roots[@]}" -type f -printf '%s\n')
		names+=(ls-json find)
	fi
	files=$(find "${roots[@]}" -type f | wc -l)
	# warm: one ls reads all that the others read (the tree and the transcripts' heads);
	# at 100,000 sessions and more, a round costs minutes: at most 3
	lr=$runs
	((n < 100000 || lr <= 3)) || lr=3
	lsr[$n]=$lr
	say "ls on $n sessions ($files files): ${names[*]}, warm-up, $lr rounds"
	s=$SECONDS
	"$agc" ls >/dev/null 2>&1 || true
	rounds "ls$n" "$lr" 0 "${names[@]}"
	lsmem[$n]=$(peak_kib "$agc" ls)
	lslim[$n]=$(peak_kib "$agc" ls --limit 20)
	echo "$files" >"$run/res/files$n"
	say "ls on $n sessions: ls $(t3 "$(med "ls$n" ls)"), walkfloor $(t3 "$(med "ls$n" walkfloor)") ($((SECONDS - s)) s)"
done

# ---- 3: in-use -----------------------------------------------------------------------------
home "c$claude_n" --seed 42 --claude "$claude_n" --projects 200
d=${dir[c$claude_n]}
use_home "$d"
first_line=$(jq -c 'select(.agent == "claude")' "$d/manifest.jsonl" | sed -n 1p)
gate_id=$(jq -r .id <<<"$first_line")
mapfile -t arts < <(jq -r '.artifacts[]' <<<"$first_line")
mapfile -t gate_files < <(find "${arts[@]}" 2>/dev/null)
say "in-use: starting $procs sleeping processes"
for ((i = 0; i < procs; i++)); do
	sleep 3600 &
	sleepers+=($!)
done
all=(/proc/[0-9]*)
nprocs=${#all[@]}
CMD=() PREP=()
CMD[agentgc]=$(q "$agc" in-use claude "$gate_id")
CMD[lsof]=$(q lsof -t -n -w "${gate_files[@]}")
CMD[fuser]=$(q fuser "${gate_files[@]}")
iu_runs=$((runs * 3))
say "in-use on $claude_n sessions, $nprocs processes, ${#gate_files[@]} files and dirs: $iu_runs rounds"
rounds in-use "$iu_runs" 1 agentgc lsof fuser
# CPU time: perf stat's task-clock where perf may count, else user + system from hyperfine.
declare -A cpu
cpu_how="user + system time (hyperfine), median of the rounds"
if perf stat -x, -e task-clock true >/dev/null 2>&1; then
	cpu_how="perf stat -e task-clock, mean of $iu_runs runs"
	for name in agentgc lsof fuser; do
		read -r -a c <<<"${CMD[$name]}"
		cpu[$name]=$({ perf stat -x, -e task-clock -r "$iu_runs" "${c[@]}" 2>&1 >/dev/null || true; } |
			awk -F, '$3 == "task-clock" { print $1 }' | tail -n 1)
	done
else
	for name in agentgc lsof fuser; do cpu[$name]=$(first "$(med in-use "$name" 45)"); done
fi
kill "${sleepers[@]}" 2>/dev/null || true
wait "${sleepers[@]}" 2>/dev/null || true
sleepers=()
say "in-use: agentgc $(t3 "$(med in-use agentgc)"), lsof $(t3 "$(med in-use lsof)"), fuser $(t3 "$(med in-use fuser)"); sleepers ended"

# ---- 4: purge of one OpenCode session ------------------------------------------------------
home "oc$oc_n" --seed 42 --claude 0 --opencode "$oc_n" --opencode-big-parts "$oc_parts"
d=${dir[oc$oc_n]}
big=$(jq -r 'select(.summary) | .summary.opencode.big' "$d/manifest.jsonl")
w=$run/oc
say "purge opencode: copying the home ($oc_n sessions, one of $oc_parts parts)"
cp -a "$d" "$w"
db=$w/home/.local/share/opencode/opencode.db
pristine=$d/home/.local/share/opencode/opencode.db
cat >"$run/restore-oc" <<EOF
#!/bin/sh
# the database as the fixture made it, and no state of a run before
set -e
rm -f '$db-wal' '$db-shm'
cp '$pristine' '$db'
if [ -f '$pristine-wal' ]; then cp '$pristine-wal' '$db-wal'; fi
rm -rf '$w/home/.local/state/agentgc' '$w/home/.cache/agentgc'
EOF
chmod +x "$run/restore-oc"
use_home "$w"
CMD=() PREP=()
CMD[agentgc]=$(q "$agc" -q purge opencode "$big")
CMD[sqlite3]=$(q "$here/purge-floor.sh" "$db" "$big")
PREP[agentgc]=$(q "$run/restore-oc") PREP[sqlite3]=${PREP[agentgc]}
oc_names=(agentgc sqlite3)
oc_note=
if [[ $oc_peer == none ]]; then
	oc_note="not measured (no OpenCode peer in this run)"
else
	if [[ -z $oc_peer ]]; then
		oc_peer=$(AGC_CACHE_DIR=$cache "$src/tests/contract/opencode/install.sh" 2>"$run/oc-install.log") ||
			{ oc_peer=; oc_note="not measured: $(tail -n 1 "$run/oc-install.log")"; }
	fi
	if [[ -n $oc_peer ]]; then
		netns=
		if unshare -rn true 2>/dev/null; then netns="unshare -rn"; fi
		# shellcheck disable=SC2086 # netns is a command prefix: empty, or words to split
		CMD[opencode]="$(q env OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_SHARE=1 \
			OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_PURE=1 \
			OPENCODE_DISABLE_PROJECT_CONFIG=1 OPENCODE_DISABLE_EXTERNAL_SKILLS=1 OPENCODE_DISABLE_CLAUDE_CODE=1 \
			NO_COLOR=1 $netns "$oc_peer" session delete "$big")"
		PREP[opencode]=${PREP[agentgc]}
		oc_names+=(opencode)
		oc_version=$(cd "$HOME" && $netns "$oc_peer" --version </dev/null 2>/dev/null || echo "?")
	fi
fi
say "purge opencode ${oc_names[*]}: $runs rounds"
(cd "$w/home" && rounds oc "$runs" 1 "${oc_names[@]}")
"$run/restore-oc"
if [[ -z $oc_note ]]; then oc_says=", opencode $(t3 "$(med oc opencode)")"; else oc_says=; fi
say "purge opencode: agentgc $(t3 "$(med oc agentgc)"), sqlite3 $(t3 "$(med oc sqlite3)")$oc_says"

# ---- 5: purge of many Claude ids -----------------------------------------------------------
d=${dir[c$claude_n]}
w=$run/claude
say "purge claude: copying the home of $claude_n sessions"
cp -a "$d" "$w"
# tree DIR: the names, types, sizes, modes and (for files) times below DIR, one line each
tree() { (cd "$1" && find . \( -type d -printf '%P %y %m\n' \) -o -printf '%P %y %s %m %T@ %l\n' | sort | md5sum); }
mapfile -t cids < <(jq -r 'select(.agent == "claude") | .id' "$d/manifest.jsonl")
# prepare K: the ids, the purge command and the restore of what a purge of them changes
# (their artifacts, and what they share with others: a paste-cache entry no other history
# line refers to goes with them; history.jsonl, .claude.json, agentgc's state), from the manifest.
prepare() {
	local k=$1
	printf '%s\n' "${cids[@]:0:k}" >"$run/ids$k"
	# the set of ids is built once (-n and inputs), not once per manifest line
	jq -nr --rawfile ids "$run/ids$k" --arg p "$d/" '
		($ids | split("\n") | map(select(. != "") | {key: ., value: 1}) | from_entries) as $want
		| inputs | select(.agent == "claude" and $want[.id]) | (.artifacts[], .keep[])
		| if startswith($p) then ltrimstr($p) else error("artifact outside the home: \(.)") end' \
		"$d/manifest.jsonl" >"$run/list$k"
	printf '%s\n' home/.claude/history.jsonl home/.claude.json >>"$run/list$k"
	cat >"$run/restore$k" <<-EOF
		#!/bin/sh
		set -e
		cd '$w'
		tr '\n' '\0' <'$run/list$k' | xargs -0 rm -rf --
		tr '\n' '\0' <'$run/list$k' | tar -C '$d' --format=posix --null -cf - -T - | tar -C '$w' -xf -
		rm -rf '$w/home/.local/state/agentgc' '$w/home/.cache/agentgc'
	EOF
	chmod +x "$run/restore$k"
	cat >"$run/purge$k" <<-EOF
		#!/bin/bash
		mapfile -t ids <'$run/ids$k'
		exec $(q "$agc") -q purge claude "\${ids[@]}"
	EOF
	chmod +x "$run/purge$k"
}
use_home "$w"
declare -A pk_note pk_runs
per_id=
for k in "${purge_series[@]}"; do
	((k <= ${#cids[@]})) || { pk_note[$k]="not measured: the home has ${#cids[@]} sessions"; continue; }
	n=$runs
	((k <= 100)) || n=$(((runs + 1) / 2))
	((k <= 1000)) || n=1
	if [[ -n $per_id ]]; then
		est=$(awk -v s="$per_id" -v k="$k" 'BEGIN { printf "%d", s * k }')
		if ((est > budget && k > purge_main)); then
			pk_note[$k]="not measured: about $est s for one run at the rate of the smaller size (BENCH_PURGE_BUDGET=$budget)"
			say "purge claude $k ids: skipped, estimated $est s"
			continue
		fi
		((est * n <= budget)) || n=$((budget / (est > 0 ? est : 1)))
		((n >= 1)) || n=1
	fi
	prepare "$k"
	CMD=() PREP=()
	CMD[purge]=$(q "$run/purge$k")
	PREP[purge]=$(q "$run/restore$k")
	say "purge claude: $k ids in one call, $n rounds"
	s=$SECONDS
	rounds "pk$k" "$n" 0 purge
	pk_runs[$k]=$n
	"$run/restore$k"
	per_id=$(awk -v m="$(first "$(med "pk$k" purge)")" -v k="$k" 'BEGIN { print m / 1000 / k }')
	say "purge claude $k ids: $(t3 "$(med "pk$k" purge)") ($((SECONDS - s)) s)"
done
xargs_note=
if ((xargs_n <= ${#cids[@]})); then
	prepare "$xargs_n"
	CMD=() PREP=()
	CMD[xargs]=$(q xargs -n1 -a "$run/ids$xargs_n" "$agc" -q purge claude)
	PREP[xargs]=$(q "$run/restore$xargs_n")
	xn=$(((runs + 1) / 2))
	say "purge claude: $xargs_n ids through xargs -n1, $xn rounds"
	rounds xargs "$xn" 0 xargs
	"$run/restore$xargs_n"
else
	xargs_note="not measured: the home has ${#cids[@]} sessions"
fi
say "purge claude: checking the copy is the home again"
if [[ $(tree "$w") == "$(tree "$d")" ]]; then restore_ok="the copy was checked equal to the pristine home afterwards"; else
	restore_ok="WARNING: the copy differed from the pristine home afterwards (the restore missed something)"
	say "$restore_ok"
fi
rm -rf "$w" "$run/oc"

# ---- 6: prune of every adapter's sessions --------------------------------------------------
# A home of K root sessions of one agent (nothing else in it), copied; prune --older-than 0s
# --settle 0s --yes of that agent timed once a round, the copy restored between (untimed), side
# by side with the floor: rm -rf of the same copy (every file of the home, a little more than
# the prune removes). Once in the bench dir and once in memory (/dev/shm, a tmpfs, where it has
# room): on a disk mounted with discard every unlink of a file with blocks waits for the device,
# and both sides measure the disk more than themselves.
declare -A pr_note pr_runs pr_left
shm=
if [[ -z $self_test ]] && df --output=fstype /dev/shm 2>/dev/null | grep -qx tmpfs; then
	shm=/dev/shm/agentgc-bench-$$
fi
prune_agents=(claude opencode codex cursor)
for a in "${prune_agents[@]}"; do
	per=
	for k in "${prune_series[@]}"; do
		case $a in
		claude) home "pr-$a-$k" --seed 61 --claude "$k" --projects 50 ;;
		opencode) home "pr-$a-$k" --seed 62 --claude 0 --opencode "$k" ;;
		codex) home "pr-$a-$k" --seed 63 --claude 0 --codex "$k" --codex-small ;;
		cursor) home "pr-$a-$k" --seed 64 --claude 0 --cursor "$k" ;;
		esac
		if [[ -n $per ]]; then
			est=$(awk -v s="$per" -v k="$k" 'BEGIN { printf "%d", s * k }')
			if ((est > budget)); then
				pr_note[$a$k]="not measured: about $est s for one run at the rate of the smaller size (BENCH_PURGE_BUDGET=$budget)"
				say "prune $a $k: skipped, estimated $est s"
				continue
			fi
		fi
		d=${dir[pr-$a-$k]}
		n=$runs
		((k < 10000)) || n=1
		for where in disk mem; do
			w=$run/prune tag=pr$a$k
			if [[ $where == mem ]]; then
				[[ -n $shm ]] || continue
				# room for the copy, and as much again to spare
				if (($(du -sk "$d" | cut -f1) * 2 > $(df -k --output=avail /dev/shm | tail -n1))); then
					continue
				fi
				w=$shm tag=pm$a$k
			fi
			rm -rf "$w"
			cp -a "$d" "$w"
			cat >"$run/prune-restore" <<-EOF
				#!/bin/sh
				set -e
				rm -rf '$w'
				cp -a '$d' '$w'
				sync
			EOF
			chmod +x "$run/prune-restore"
			use_home "$w"
			CMD=() PREP=()
			CMD[prune]=$(q "$agc" -q prune --agent "$a" --older-than 0s --settle 0s --yes)
			CMD[rmrf]=$(q rm -rf "$w")
			PREP[prune]=$(q "$run/prune-restore")
			PREP[rmrf]=$(q "$run/prune-restore")
			say "prune $a: $k sessions, $n rounds ($where)"
			rounds "$tag" "$n" 0 prune rmrf
			# what is left after a run: nothing of the agent's (checked on a copy pruned once
			# more, as the last round was)
			if [[ $where == disk ]]; then
				"$run/prune-restore"
				"$agc" -q prune --agent "$a" --older-than 0s --settle 0s --yes >/dev/null 2>&1 || true
				pr_left[$a$k]=$("$agc" ls --agent "$a" --ids 2>/dev/null | wc -l)
			fi
			say "prune $a $k ($where): $(t3 "$(med "$tag" prune)"), rm -rf $(t3 "$(med "$tag" rmrf)")"
			rm -rf "$w"
		done
		pr_runs[$a$k]=$n
		per=$(awk -v m="$(first "$(med "pr$a$k" prune)")" -v k="$k" 'BEGIN { print m / 1000 / k }')
	done
done

# ---- 7: compact of an OpenCode database half pruned ----------------------------------------
home "cp$compact_n" --seed 71 --claude 0 --opencode "$compact_n"
d=${dir[cp$compact_n]}
w=$run/compact
rm -rf "$w"
cp -a "$d" "$w"
use_home "$w"
db=$w/home/.local/share/opencode/opencode.db
# keep every other root session: the rest go
jq -r 'select(.agent == "opencode" and .parent == null) | .id' "$d/manifest.jsonl" | awk 'NR % 2' >"$run/keep"
say "compact: pruning half of $compact_n OpenCode sessions (not timed)"
"$agc" -q prune --agent opencode --keep "$run/keep" --settle 0s --yes >/dev/null 2>&1 || true
cp_kept=$("$agc" ls --agent opencode --ids 2>/dev/null | wc -l)
cp_before=$(stat -c %s "$db")
cp_free=$(sqlite3 "$db" 'PRAGMA freelist_count')
cp_page=$(sqlite3 "$db" 'PRAGMA page_size')
s=$(date +%s%N)
"$agc" --json compact --agent opencode >"$run/compact.json" 2>&1 || true
cp_ms=$((($(date +%s%N) - s) / 1000000))
cp_after=$(stat -c %s "$db")
cp_status=$(jq -r '.status' "$run/compact.json" 2>/dev/null | head -n 1)
cp_check=$(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1 | head -n 1)
rm -rf "$w"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the report ----------------------------------------------------------------------------
cpu_x() { awk -v a="${cpu[agentgc]:-}" -v b="$1" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", b / a; else print "-" }'; }
rate() { awk -v m="$1" -v k="$2" 'BEGIN { if (m == "-" || m == 0) print "-"; else printf "%.1f", k / (m / 1000) }'; }
nice_n() { sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$1"; }
{
	echo "# agentgc benchmark"
	echo
	echo "Written by \`make bench\` (\`bench/run.sh\`) on $started${quick:+ (BENCH_QUICK=1)}${self_test:+ (self-test)}."
	echo
	echo "Machine: $(nproc) cores, $cpu_model, Linux $(uname -r), bench dir on $fs;"
	echo "load average $load_before before, $load_after after."
	echo "agentgc: commit $commit ($version)."
	echo
	echo "How to read it: each pair (or group) of commands ran in turn in every round (A B, then"
	echo "B A), one run each, warm cache, $runs rounds unless a table says otherwise, timed by"
	echo "hyperfine. Times are medians with (min-max) over the rounds; a ratio is the median of"
	echo "the ratios of each round with their (min-max), so a change in the machine's speed hits"
	echo "both sides alike. \"met\" or \"misses by\" compares with the targets of issue 8 (SPEC.md"
	echo "\"Performance\"). The machine is shared: the load average says how busy it was."
	echo
	n=$ls_n
	echo "## 1. ls on $(nice_n "$n") Claude Code sessions"
	echo
	echo "Home: \`agentgc-fixture --claude $n --projects 200\`, $(cat "$run/res/files$n") files under"
	echo "\`~/.claude\` and \`\$TMPDIR/claude-$uid\`: the dirs \`ls\` walks, given to the floor"
	echo "(\`bench/walkfloor.c\`, cc -O2) and to \`find DIRS -type f -printf %s\`. ${lsr[$n]} rounds after"
	echo "one warm-up \`ls\`."
	echo
	echo "| measure | agentgc | floor / peer | ratio | target | |"
	echo "|---|---|---|---|---|---|"
	r=$(ratio "ls$n" ls walkfloor)
	echo "| \`ls\` vs walkfloor | $(t3 "$(med "ls$n" ls)") | $(t3 "$(med "ls$n" walkfloor)") | $(x3 "$r") | <= 1.1x | $(at_most "$(first "$r")" 1.1) |"
	r=$(ratio "ls$n" ls find)
	echo "| \`ls\` vs find | | $(t3 "$(med "ls$n" find)") | $(x3 "$r") | <= 0.7x | $(at_most "$(first "$r")" 0.7) |"
	r=$(ratio "ls$n" ls-json walkfloor)
	echo "| \`ls --json\` vs walkfloor | $(t3 "$(med "ls$n" ls-json)") | | $(x3 "$r") | | |"
	r=$(ratio "ls$n" ls-json find)
	echo "| \`ls --json\` vs find | | | $(x3 "$r") | | |"
	r=$(ratio "ls$n" ls walkfloor 45)
	echo "| CPU (user + system), \`ls\` vs walkfloor | $(t3 "$(med "ls$n" ls 45)") | $(t3 "$(med "ls$n" walkfloor 45)") | $(x3 "$r") | | |"
	r=$(ratio "ls$n" ls find 45)
	echo "| CPU (user + system), \`ls\` vs find | | $(t3 "$(med "ls$n" find 45)") | $(x3 "$r") | | |"
	echo "| \`ls\` peak memory | $(mib "${lsmem[$n]}") MiB | | | < 32 MiB | $(at_most "$(mib "${lsmem[$n]}")" 32) |"
	echo "| \`ls --limit 20\` peak memory | $(mib "${lslim[$n]}") MiB | | | < 8 MiB | $(at_most "$(mib "${lslim[$n]}")" 8) |"
	echo
	echo "## 2. ls scaling"
	echo
	echo "The same generator at each size (200 projects); peak memory from \`/usr/bin/time -v\`."
	echo "Rounds per size: $(for n in "${series[@]}"; do printf '%s: %s; ' "$(nice_n "$n")" "${lsr[$n]}"; done | sed 's/; $/./')"
	echo
	echo "| sessions | files | \`ls\` | walkfloor | ratio | \`ls\` per session | walkfloor per session | \`ls\` peak | \`ls --limit 20\` peak |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for n in "${series[@]}"; do
		a=$(first "$(med "ls$n" ls)") b=$(first "$(med "ls$n" walkfloor)")
		echo "| $(nice_n "$n") | $(cat "$run/res/files$n") | $(t3 "$(med "ls$n" ls)") | $(t3 "$(med "ls$n" walkfloor)") | $(x3 "$(ratio "ls$n" ls walkfloor)") | $(awk -v m="$a" -v n="$n" 'BEGIN { printf "%.1f us", m * 1000 / n }') | $(awk -v m="$b" -v n="$n" 'BEGIN { printf "%.1f us", m * 1000 / n }') | $(mib "${lsmem[$n]}") MiB | $(mib "${lslim[$n]}") MiB |"
	done
	echo
	echo "## 3. in-use with about 1,000 processes"
	echo
	echo "Home of $(nice_n "$claude_n") sessions; $nprocs processes ($procs extra \`sleep\`s started and"
	echo "ended by the benchmark). One session, id from the fixture manifest, of ${#gate_files[@]} files"
	echo "and dirs: \`lsof -t -n -w\` and \`fuser\` are given all of them. $iu_runs rounds. CPU time:"
	echo "$cpu_how (wall time on 2 shared cores is noisy)."
	echo
	echo "| measure | agentgc | peer | agentgc is faster by | target | |"
	echo "|---|---|---|---|---|---|"
	a=$(med in-use agentgc)
	echo "| \`in-use\` wall time | $(t3 "$a") | | | < 20 ms | $(at_most "$(first "$a")" 20) |"
	r=$(inv "$(ratio in-use agentgc lsof)")
	echo "| vs \`lsof -t\` | | $(t3 "$(med in-use lsof)") | $(x3 "$r") | >= 12x | $(at_least "$(first "$r")" 12) |"
	r=$(inv "$(ratio in-use agentgc fuser)")
	echo "| vs \`fuser\` | | $(t3 "$(med in-use fuser)") | $(x3 "$r") | >= 4x | $(at_least "$(first "$r")" 4) |"
	echo "| CPU time, vs \`lsof -t\` | $(ms "${cpu[agentgc]}") | $(ms "${cpu[lsof]}") | $(cpu_x "${cpu[lsof]}") | | |"
	echo "| CPU time, vs \`fuser\` | | $(ms "${cpu[fuser]}") | $(cpu_x "${cpu[fuser]}") | | |"
	echo
	echo "## 4. purge of one OpenCode session with $(nice_n "$oc_parts") parts"
	echo
	echo "Database of $(nice_n "$oc_n") sessions (\`--opencode $oc_n --opencode-big-parts $oc_parts\`), restored from a"
	echo "pristine copy before each run (not timed). Floor: \`bench/purge-floor.sh DB ID\`, the"
	echo "statements agentgc runs, in the \`sqlite3\` shell with agentgc's pragmas. Peer:"
	echo "\`opencode session delete ID\`${oc_version:+ (OpenCode $oc_version, its HOME and XDG dirs in a copy of the home, no network)}."
	echo
	echo "| measure | agentgc | floor / peer | ratio | target | |"
	echo "|---|---|---|---|---|---|"
	r=$(ratio oc agentgc sqlite3)
	echo "| \`purge\` vs purge-floor.sh | $(t3 "$(med oc agentgc)") | $(t3 "$(med oc sqlite3)") | $(x3 "$r") | <= 1.1x | $(at_most "$(first "$r")" 1.1) |"
	if [[ -n $oc_note ]]; then
		echo "| vs \`opencode session delete\` | | $oc_note | | >= 8x | not measured |"
	else
		r=$(inv "$(ratio oc agentgc opencode)")
		echo "| vs \`opencode session delete\` (faster by) | | $(t3 "$(med oc opencode)") | $(x3 "$r") | >= 8x | $(at_least "$(first "$r")" 8) |"
	fi
	r=$(ratio oc agentgc sqlite3 45)
	echo "| CPU (user + system), vs purge-floor.sh | $(t3 "$(med oc agentgc 45)") | $(t3 "$(med oc sqlite3 45)") | $(x3 "$r") | | |"
	f=$(($(failed oc agentgc) + $(failed oc sqlite3)))
	((f == 0)) || echo "| runs that exited non-zero | $f | | | | |"
	echo
	echo "## 5. purge of many Claude Code ids in one call"
	echo
	echo "\`agentgc purge claude ID...\` with the first K ids of the manifest, on a copy of the home"
	echo "of $(nice_n "$claude_n") sessions; before each run the artifacts of those ids, the shared files they list"
	echo "(paste-cache entries), \`history.jsonl\` and \`.claude.json\` are restored from the pristine home"
	echo "(not timed); $restore_ok."
	echo
	k=$purge_main
	a=$(first "$(med "pk$k" purge 2>/dev/null || echo -)")
	echo "| measure | agentgc | target | |"
	echo "|---|---|---|---|"
	if [[ -n ${pk_note[$k]:-} ]]; then
		echo "| $(nice_n "$k") ids in one call | ${pk_note[$k]} | >= 1,000 ids/s | not measured |"
	else
		echo "| $(nice_n "$k") ids in one call | $(t3 "$(med "pk$k" purge)"), $(rate "$a" "$k") ids/s | >= 1,000 ids/s | $(at_least "$(rate "$a" "$k")" 1000) |"
	fi
	echo
	echo "Scaling (fewer rounds for the large ones), and the older way, one call per id:"
	echo
	echo "| ids | rounds | time | ids/s | per id | exits non-zero |"
	echo "|---|---|---|---|---|---|"
	for k in "${purge_series[@]}"; do
		if [[ -n ${pk_note[$k]:-} ]]; then
			echo "| $(nice_n "$k") | 0 | ${pk_note[$k]} | | | |"
			continue
		fi
		a=$(first "$(med "pk$k" purge)")
		echo "| $(nice_n "$k") | ${pk_runs[$k]} | $(t3 "$(med "pk$k" purge)") | $(rate "$a" "$k") | $(awk -v m="$a" -v k="$k" 'BEGIN { printf "%.1f ms", m / k }') | $(failed "pk$k" purge) |"
	done
	if [[ -n $xargs_note ]]; then
		echo "| $xargs_n, xargs -n1 | 0 | $xargs_note | | | |"
	else
		a=$(first "$(med xargs xargs)")
		echo "| $xargs_n, xargs -n1 | $xn | $(t3 "$(med xargs xargs)") | $(rate "$a" "$xargs_n") | $(awk -v m="$a" -v k="$xargs_n" 'BEGIN { printf "%.1f ms", m / k }') | $(failed xargs xargs) |"
	fi
	echo
	echo "## 6. prune of every adapter's sessions"
	echo
	echo "\`agentgc -q prune --agent A --older-than 0s --settle 0s --yes\` on a copy of a home of K root"
	echo "sessions of that agent alone (restored and synced between rounds, not timed); one listing"
	echo "per run, every session discovered, gated and purged under purge's rules. Floor: \`rm -rf\`"
	echo "of the same copy, side by side (it removes every file of the home, a little more than the"
	echo "prune). Once in the bench dir, once in memory (/dev/shm: tmpfs), where the file system's own"
	echo "cost (a discard per freed extent on a disk mounted with \`discard\`) is not in either side."
	echo
	echo "| agent | sessions | rounds | where | time | sessions/s | target | | rm -rf | prune / rm -rf | left after |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	for a in "${prune_agents[@]}"; do
		for k in "${prune_series[@]}"; do
			if [[ -n ${pr_note[$a$k]:-} ]]; then
				echo "| $a | $(nice_n "$k") | 0 | | ${pr_note[$a$k]} | | | | | | |"
				continue
			fi
			for tag in "pr$a$k" "pm$a$k"; do
				[[ -s $run/res/$tag ]] || continue
				m=$(first "$(med "$tag" prune)")
				echo "| $a | $(nice_n "$k") | ${pr_runs[$a$k]} | $([[ $tag == pr* ]] && echo disk || echo memory) | $(t3 "$(med "$tag" prune)") | $(rate "$m" "$k") | >= 5,000/s | $(at_least "$(rate "$m" "$k")" 5000) | $(t3 "$(med "$tag" rmrf)") | $(x3 "$(ratio "$tag" prune rmrf)") | ${pr_left[$a$k]:-} |"
			done
		done
	done
	echo
	echo "## 7. compact of an OpenCode database of $(nice_n "$compact_n") sessions, half of them pruned"
	echo
	echo "Home: \`agentgc-fixture --opencode $compact_n\`; every other root session kept (\`prune --keep\`),"
	echo "$cp_kept left; then \`agentgc compact --agent opencode\`, timed once."
	echo
	echo "| measure | value |"
	echo "|---|---|"
	echo "| opencode.db before | $(nice_n "$cp_before") bytes ($(nice_n "$cp_free") free pages of $cp_page bytes) |"
	echo "| opencode.db after | $(nice_n "$cp_after") bytes ($(awk -v a="$cp_after" -v b="$cp_before" 'BEGIN { if (b > 0) printf "%.1f%%", 100 * a / b; else print "-" }') of before) |"
	echo "| compact time | $(ms "$cp_ms") |"
	echo "| status, integrity_check | $cp_status, $cp_check |"
	# what was written by hand before this run (what the profiles show is left, the notes of
	# earlier measurements) is kept: everything from the first of those headings on
	if [[ -z $self_test && -f $report ]] && grep -qE '^## (What is left|Earlier figures)' "$report"; then
		echo
		awk '/^## (What is left|Earlier figures)/ { p = 1 } p' "$report"
	fi
} >"$run/REPORT.md"
mv "$run/REPORT.md" "$report"
say "wrote $report; load $load_after"
