# Shared helpers of the end-to-end tests: a fresh home per test, Claude Code sessions built
# file by file from formats/claude-code.md, tree snapshots, and processes that hold a session.
#
# Every test gets:
#   HOME=$BATS_TEST_TMPDIR/home   C=$HOME/.claude           Claude's config dir
#   TMPDIR=$BATS_TEST_TMPDIR/tmp  TU=$TMPDIR/claude-<uid>   Claude's temp dir
#                                 SOCKS=$TMPDIR/cc-socks    messaging sockets
#   OUT=$BATS_TEST_TMPDIR/outside                           what links point at; must survive
#   WORK=$BATS_TEST_TMPDIR/work                             projects' working directories
# and every process started with `spawn` is killed in teardown.
#
# A helper that runs many commands per call and sets nothing in its caller (a loop over tables,
# paths or processes; a whole generated session) is written `name() ( trap - DEBUG; ... )`: it
# runs in a subshell without bats' trace of every command (which costs more than the
# commands), and a failure in it shows at the line of the test that called it.

bats_require_minimum_version 1.5.0

# The fixed "now" of every test, in epoch seconds (2026-11-29T20:38:13Z).
NOW=1795984693

agc_setup() {
	: "${AGENTGC:?set AGENTGC to the agentgc binary}"
	[[ -x $AGENTGC ]] || { echo "AGENTGC=$AGENTGC is not executable" >&2; return 1; }
	export HOME="$BATS_TEST_TMPDIR/home"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	unset CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMP TEMP CLAUDE_CODE_PROJECT_DIR_NAME
	unset LD_PRELOAD AGC_FAULT_UNLINKAT AGC_FAULT_ERRNO
	export NO_COLOR=1 LC_ALL=C
	export AGENTGC_NOW=$NOW
	if [[ ${AGC_SANITIZE:-} == ON ]]; then
		export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
		export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
	fi
	UID_=$(id -u)
	C=$HOME/.claude
	TU=$TMPDIR/claude-$UID_
	SOCKS=$TMPDIR/cc-socks
	OUT=$BATS_TEST_TMPDIR/outside
	WORK=$BATS_TEST_TMPDIR/work
	PIDS_FILE=$BATS_TEST_TMPDIR/pids
	mkdir -p "$HOME" "$TMPDIR" "$C" "$OUT" "$WORK"
	: >"$PIDS_FILE"
}

# The given processes and all their descendants killed: stopped first, so that they start no
# more, then their children (a shell's `sleep` outlives the shell that ran it), found in one
# reading of /proc per round (not one per process: a teardown of 400 processes takes a
# fraction of a second, not half a minute), round after round until no new one turns up;
# then every one of them killed.
kill_tree() (
	trap - DEBUG
	local -A seen=() kids=()
	local -a all=() new=("$@")
	local f line p pp
	while ((${#new[@]})); do
		kill -STOP "${new[@]}" 2>/dev/null || true
		all+=("${new[@]}")
		for p in "${new[@]}"; do
			seen[$p]=1
		done
		kids=()
		for f in /proc/[0-9]*/stat; do
			read -r line <"$f" 2>/dev/null || continue
			pp=${line##*) }
			pp=${pp#* }
			pp=${pp%% *}
			[[ -n ${seen[$pp]:-} ]] || continue
			p=${f#/proc/}
			p=${p%/stat}
			[[ -n ${seen[$p]:-} ]] || kids[$p]=1
		done
		new=("${!kids[@]}")
	done
	((${#all[@]} == 0)) || kill -KILL "${all[@]}" 2>/dev/null || true
)

agc_teardown() {
	local pid pids=()
	[[ -f ${PIDS_FILE:-} ]] || return 0
	while read -r pid; do
		[[ -n $pid ]] && pids+=("$pid")
	done <"$PIDS_FILE"
	((${#pids[@]} == 0)) && return 0
	kill_tree "${pids[@]}"
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
}

setup() { agc_setup; }
teardown() { agc_teardown; }

# ---- an unprivileged user ----------------------------------------------------------------
#
# Root ignores directory modes, so a dir that cannot be read is staged for an unprivileged
# user who owns the home: uid 65534 through setpriv when the tests run as root, the caller
# itself otherwise. The user's home and temp dir live in the test's own dir ($NB, under
# $BATS_TEST_TMPDIR, never the shared /tmp): the dirs above it get the search bit only, so
# that user can reach it. HOME, TMPDIR, C, TU, SOCKS and DATA are pointed there.

nobody_setup() {
	local d
	if [[ $(id -u) == 0 ]]; then
		command -v setpriv >/dev/null || skip "setpriv is not installed: cannot run as an unprivileged user"
		setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null ||
			skip "setpriv cannot switch to uid 65534 here"
		NB_UID=65534
	else
		NB_UID=$(id -u)
	fi
	NB=$BATS_TEST_TMPDIR/nb
	mkdir -p "$NB"
	chmod 755 "$NB"
	d=$BATS_TEST_TMPDIR
	while [[ $d == "$BATS_RUN_TMPDIR"* && $d != / ]]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
	export HOME=$NB/home TMPDIR=$NB/tmp
	C=$HOME/.claude
	TU=$TMPDIR/claude-$NB_UID
	SOCKS=$TMPDIR/cc-socks
	DATA=$HOME/.local/share/opencode
	mkdir -p "$HOME" "$TMPDIR" "$C"
}

# Hand the home and temp dir to the unprivileged user (after the session is built as root).
nobody_own() {
	[[ $(id -u) == 0 ]] || return 0
	chown -R "$NB_UID:$NB_UID" "$NB"
}

# agentgc as the unprivileged user, with the test's environment.
agc_nobody() {
	if [[ $(id -u) == 0 ]]; then
		setpriv --reuid="$NB_UID" --regid="$NB_UID" --clear-groups "$AGENTGC" "$@"
	else
		"$AGENTGC" "$@"
	fi
}

# Modes a test took away are given back, so the test's dir can be cleaned up.
nobody_teardown() {
	[[ -n ${NB:-} && -d $NB ]] || return 0
	chmod -R u+rwx "$NB" 2>/dev/null || true
	rm -rf "$NB"
}

# ---- running agentgc --------------------------------------------------------------------

# agentgc with the test's environment.
agc() {
	"$AGENTGC" "$@"
}

# The LD_PRELOAD that loads the fault shim (after ASan's runtime in a sanitized build).
faulty_preload() {
	if [[ ${AGC_SANITIZE:-} == ON ]]; then
		echo "$(gcc -print-file-name=libasan.so):$AGC_FAULTSHIM"
	else
		echo "$AGC_FAULTSHIM"
	fi
}

# agentgc with the fault shim preloaded; the caller sets AGC_FAULT_UNLINKAT (and _ERRNO).
agc_faulty() {
	LD_PRELOAD=$(faulty_preload) "$AGENTGC" "$@"
}

# Fail unless the jq filter (the last argument; jq options such as --arg may come before it)
# is true of the last output, read as an array of its JSON lines (jq -s).
json_ok() {
	local filter=${!#}
	local args=("${@:1:$#-1}")
	if ! jq -e -s "${args[@]}" "$filter" >/dev/null <<<"$output"; then
		printf 'jq -s filter failed: %s %s\non:\n%s\n' "${args[*]}" "$filter" "$output" >&2
		return 1
	fi
}

# ---- ids, keys and names ------------------------------------------------------------------

new_uuid() {
	local u
	read -r u </proc/sys/kernel/random/uuid
	printf '%s' "$u"
}

upper() { printf '%s' "${1^^}"; }

# Claude's project key of an ASCII cwd (formats §1.1 step 2). The helpers here run a program
# only where the shell cannot do the job: every fork costs milliseconds, and setups run them
# thousands of times a suite.
pkey() {
	printf '%s' "${1//[^A-Za-z0-9]/-}"
}

# Scratchpad dir name of a session: first 8 bytes of sha256(lower-case id), big-endian,
# mod 10^12, zero-padded to 12 digits (formats §2).
scratch_name() {
	local hex hi lo m=1000000000000
	hex=$(printf '%s' "${1,,}" | sha256sum)
	hi=$((16#${hex:0:8})) lo=$((16#${hex:8:8}))
	# (hi * 2^32 + lo) mod 10^12 in steps that stay below 2^63 (bash's integers are signed)
	printf '%012d' $((((hi * 65536 % m) * 65536 % m + lo) % m))
}

# Epoch seconds as Claude's ISO timestamp; iso_to VAR EPOCH sets VAR to it.
iso_to() {
	TZ=UTC0 printf -v "$1" '%(%Y-%m-%dT%H:%M:%S)T.000Z' "$2"
}
iso() {
	local s
	iso_to s "$1"
	printf '%s\n' "$s"
}

# A pid that is certainly not running (a process that has exited and been reaped).
dead_pid() {
	local p
	while :; do
		(:) &
		p=$!
		wait "$p"
		if ! kill -0 "$p" 2>/dev/null && [[ ! -e /proc/$p ]]; then
			echo "$p"
			return
		fi
	done
}

# Field 22 of /proc/PID/stat (start time in clock ticks), read after the last ')'.
proc_start() {
	local line f
	read -r line <"/proc/$1/stat" || return 0
	f=(${line##*)})
	printf '%s\n' "${f[19]}"
}

# A start time (ticks) of another process at the same pid than start time $1: one tick off, as
# /proc tells them apart; through ps (AGENTGC_PROC_BACKEND=ps, whole seconds), past that.
other_start() {
	if [[ ${AGENTGC_PROC_BACKEND:-} == ps ]]; then
		echo $(($1 + 5 * $(getconf CLK_TCK)))
	else
		echo $(($1 + 1))
	fi
}

# Process start in epoch ms, as Claude's startedAt.
proc_started_ms() {
	local btime ticks hz
	btime=$(awk '$1 == "btime" {print $2}' /proc/stat)
	ticks=$(proc_start "$1")
	hz=$(getconf CLK_TCK)
	echo $((btime * 1000 + ticks * 1000 / hz))
}

# The fixture generator, for tests on generated homes: fail with what to set when it is missing.
need_fixture() {
	[[ -n ${AGENTGC_FIXTURE:-} && -x $AGENTGC_FIXTURE ]] || {
		echo "AGENTGC_FIXTURE must name the agentgc-fixture binary" >&2
		return 1
	}
}

# ---- processes ----------------------------------------------------------------------------

# Start a command in the background, detached from bats' output; LAST_PID is its pid.
spawn() {
	"$@" </dev/null >/dev/null 2>&1 3>&- &
	LAST_PID=$!
	echo "$LAST_PID" >>"$PIDS_FILE"
}

# A process that runs in DIR with argv[0] NAME: bash changes dir, then becomes sleep.
spawn_in_dir() {
	local dir=$1 name=$2
	spawn bash -c 'cd "$1" && exec -a "$2" sleep 300' _ "$dir" "$name"
	wait_exec "$LAST_PID" "$name 300"
	wait_cwd "$LAST_PID" "$dir"
}

# A process holding FILE open for reading (fd 3).
spawn_holding() {
	local file=$1
	sleep 1000 3<"$file" </dev/null >/dev/null 2>&1 &
	LAST_PID=$!
	echo "$LAST_PID" >>"$PIDS_FILE"
	wait_fd_open "$LAST_PID" "$file"
}

# Wait until PID has FILE open (the shell opens it just before exec).
wait_fd_open() {
	local pid=$1 file i f
	file=$(readlink -f "$2")
	for i in $(seq 1 100); do
		for f in /proc/"$pid"/fd/*; do
			[[ $(readlink "$f" 2>/dev/null) == "$file" ]] && return 0
		done
		sleep 0.02
	done
	echo "pid $pid never opened $file" >&2
	return 1
}

# Wait until PID runs COMMAND (its argv has been set by exec).
wait_exec() {
	local pid=$1 want=$2 i
	for i in $(seq 1 100); do
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$want" && return 0
		sleep 0.02
	done
	echo "pid $pid never ran '$want'" >&2
	return 1
}

# A single process whose argv holds the given arguments (and nothing else of interest).
spawn_argv() {
	spawn perl -e 'sleep 1000' -- "$@"
	wait_exec "$LAST_PID" "perl -e sleep 1000 -- $*"
}

# A process whose executable argument is NAME (a link to perl under that name: an agent's
# process as ps and stop tell them), run with perl's ARGS (so argv keeps each argument whole:
# `spawn_as opencode -e 'sleep 1000' serve --service`); redirections apply to it, but fd 3.
spawn_as() {
	local name=$1
	shift
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -sf "$(command -v perl)" "$BATS_TEST_TMPDIR/bin/$name"
	spawn "$BATS_TEST_TMPDIR/bin/$name" "$@"
	wait_exec "$LAST_PID" "$name $1"
}

# A generated home of N OpenCode sessions and nothing else; S the first root session's id.
oc_small_home() {
	need_fixture
	rm -rf "$HOME"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --opencode "${1:-2}" --now "$NOW" --quiet
	mkdir -p "$TMPDIR"
	S=$(agc ls --agent opencode --ids | head -n1)
	[[ -n $S ]]
}

# ---- building sessions ------------------------------------------------------------------

# A project working directory (a real dir, so that its path is what getcwd would give).
mk_project() {
	local dir=$WORK/${1:-proj}
	mkdir -p "$dir"
	printf '%s' "$dir"
}

# Write the transcript of session ID for project CWD; TITLE; mtime EPOCH (default NOW - 3600).
mk_transcript() {
	local id=$1 cwd=$2 title=${3:-fix the build} t=${4:-$((NOW - 3600))}
	local k=${cwd//[^A-Za-z0-9]/-} dir f t0 t1 u0 u1
	iso_to t0 $((t - 120))
	iso_to t1 "$t"
	read -r u0 </proc/sys/kernel/random/uuid
	read -r u1 </proc/sys/kernel/random/uuid
	dir=$C/projects/$k
	f=$dir/$id.jsonl
	mkdir -p "$dir"
	{
		printf '{"type":"queue-operation","operation":"enqueue","timestamp":"%s","sessionId":"%s"}\n' \
			"$t0" "$id"
		printf '{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"%s"},"uuid":"%s","timestamp":"%s","sessionId":"%s","cwd":"%s","version":"2.1.332","gitBranch":"main","entrypoint":"cli","userType":"external"}\n' \
			"$title" "$u0" "$t0" "$id" "$cwd"
		printf '{"parentUuid":"x","isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}]},"uuid":"%s","timestamp":"%s","sessionId":"%s","cwd":"%s","version":"2.1.332"}\n' \
			"$u1" "$t1" "$id" "$cwd"
	} >"$f"
	chmod 600 "$f"
	touch -d "@$t" "$f"
}

# A sub-agent transcript (and its meta) inside the session's dir; prints the sub-agent id.
mk_subagent() {
	local id=$1 cwd=$2 t=${3:-$((NOW - 3500))} a k d
	a=$(printf '%s' "$id$RANDOM" | sha256sum)
	a=a${a:0:16}
	k=${cwd//[^A-Za-z0-9]/-}
	d=$C/projects/$k/$id/subagents
	mkdir -p "$d"
	printf '{"parentUuid":null,"isSidechain":true,"agentId":"%s","type":"user","message":{"role":"user","content":"look around"},"timestamp":"%s","sessionId":"%s","cwd":"%s"}\n' \
		"$a" "$(iso "$t")" "$id" "$cwd" >"$d/agent-$a.jsonl"
	printf '{"agentType":"Explore","isBuiltIn":true,"description":"look","toolUseId":"toolu_1","spawnDepth":1,"finished":true}\n' \
		>"$d/agent-$a.meta.json"
	touch -d "@$t" "$d/agent-$a.jsonl" "$d/agent-$a.meta.json" "$d" "$(dirname "$d")"
	printf '%s' "$a"
}

# Append a history.jsonl line of session ID; PASTE_HASH, when given, names a paste-cache entry.
mk_history_line() {
	local id=$1 cwd=$2 text=$3 hash=${4:-} pasted='{}'
	[[ -n $hash ]] && pasted='{"1":{"id":1,"type":"text","contentHash":"'$hash'"}}'
	printf '{"display":"%s","pastedContents":%s,"timestamp":%s,"project":"%s","sessionId":"%s"}\n' \
		"$text" "$pasted" "$((NOW * 1000 - RANDOM))" "$cwd" "$id" >>"$C/history.jsonl"
	chmod 600 "$C/history.jsonl"
}

# Write a paste-cache entry holding TEXT; prints its content hash.
mk_paste() {
	local text=$1 h
	h=$(printf '%s' "$text" | sha256sum)
	h=${h:0:16}
	mkdir -p "$C/paste-cache"
	printf '%s' "$text" >"$C/paste-cache/$h.txt"
	printf '%s' "$h"
}

# A Unix socket file at PATH (as Claude's cc-socks/<pid>.sock, left after SIGKILL).
mk_socket() {
	mkdir -p "${1%/*}"
	perl -MIO::Socket::UNIX -e \
		'IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 1) or die "$ARGV[0]: $!"' "$1"
}

# Registry entry sessions/PID.json with exactly TEXT (raw: it need not be valid JSON).
mk_registry_raw() {
	mkdir -p "$C/sessions"
	chmod 700 "$C/sessions"
	printf '%s\n' "$2" >"$C/sessions/$1.json"
}

# A well-formed registry entry naming ID for PID (procStart as given, or that of PID when "auto").
mk_registry() {
	local pid=$1 id=$2 ps=${3:-auto}
	[[ $ps == auto ]] && ps=$(proc_start "$pid" 2>/dev/null || echo 12345)
	mk_registry_raw "$pid" "{\"pid\":$pid,\"sessionId\":\"$id\",\"cwd\":\"$WORK\",\"startedAt\":$((NOW * 1000)),\"procStart\":\"$ps\",\"version\":\"2.1.332\",\"peerProtocol\":1,\"kind\":\"interactive\",\"entrypoint\":\"cli\",\"messagingSocketPath\":\"$SOCKS/$pid.sock\",\"status\":\"idle\"}"
}

# The .key file Claude keeps beside a registry entry; prints its path.
mk_registry_key() {
	local pid=$1 hex
	hex=$(printf '%s' "$pid$RANDOM" | sha256sum)
	hex=${hex:0:64}
	printf '{"peerToken":"t","procStart":"1","pidDomain":"x"}\n' >"$C/sessions/$pid.$hex.key"
	chmod 600 "$C/sessions/$pid.$hex.key"
	printf '%s' "$C/sessions/$pid.$hex.key"
}

# Every per-session artifact of formats/claude-code.md §2 for session ID of project CWD, in
# both roots, with two history lines (one with a paste only it references) and a stale
# registry entry (dead pid) with its .key and socket; debug/latest is left to the caller.
# Each path that a purge must remove is appended to $BATS_TEST_TMPDIR/gone.ID (history lines
# are not paths and are not listed).
mk_full_session() (
	trap - DEBUG
	local id=$1 cwd=$2 t=${3:-$((NOW - 3600))}
	local k=${cwd//[^A-Za-z0-9]/-} gone=$BATS_TEST_TMPDIR/gone.$id a h pid key scratch tel
	read -r tel </proc/sys/kernel/random/uuid
	: >"$gone"
	mk_transcript "$id" "$cwd" "full session $id" "$t"
	echo "$C/projects/$k/$id.jsonl" >>"$gone"
	# the session dir: sub-agents (one nested), tool results, extras
	a=$(mk_subagent "$id" "$cwd")
	mkdir -p "$C/projects/$k/$id/subagents/$a" "$C/projects/$k/$id/tool-results" \
		"$C/projects/$k/$id/workflows" "$C/projects/$k/$id/remote-agents" "$C/projects/$k/$id/mcp-tasks"
	echo '{"isSidechain":true}' >"$C/projects/$k/$id/subagents/$a/agent-a00000000000000ff.jsonl"
	echo '{}' >"$C/projects/$k/$id/subagents/journal.jsonl"
	echo 'large tool output' >"$C/projects/$k/$id/tool-results/toolu0001.txt"
	echo '{"title":"full session '"$id"' (named)"}' >"$C/projects/$k/$id/custom-title.json"
	echo "$C/projects/$k/$id" >>"$gone"
	# side files next to the transcript
	for a in .ccr-tip.json .precompact.json .desktop-released.json .jsonl.compact.tmp.1 .jsonl.superseded-2; do
		echo '{}' >"$C/projects/$k/$id$a"
		echo "$C/projects/$k/$id$a" >>"$gone"
	done
	# config root side dirs
	mkdir -p "$C/file-history/$id" "$C/session-env/$id" "$C/tasks/$id" "$C/image-cache/$id" \
		"$C/uploads/$id" "$C/jobs/$id" "$C/todos" "$C/debug" "$C/telemetry"
	echo 'before edit v1' >"$C/file-history/$id/0123456789abcdef@v1"
	echo 'before edit v2' >"$C/file-history/$id/0123456789abcdef@v2"
	echo 'export A=1' >"$C/session-env/$id/SessionStart-hook-0.sh"
	echo '{"id":"1","subject":"task"}' >"$C/tasks/$id/1.json"
	printf '\x89PNG' >"$C/image-cache/$id/1.png"
	echo 'uploaded' >"$C/uploads/$id/f.txt"
	echo '{"state":"done"}' >"$C/jobs/$id/state.json"
	echo 'job output' >"$C/jobs/$id/out.log"
	echo '[]' >"$C/todos/$id-agent-$id.json"
	echo '[]' >"$C/todos/$id-agent-a0123456789abcdef.json"
	echo 'debug log' >"$C/debug/$id.txt"
	echo '{"session_id":"'"$id"'"}' >"$C/telemetry/1p_failed_events.$id.$tel.json"
	for a in file-history session-env tasks image-cache uploads jobs; do
		echo "$C/$a/$id" >>"$gone"
	done
	echo "$C/todos/$id-agent-$id.json" >>"$gone"
	echo "$C/todos/$id-agent-a0123456789abcdef.json" >>"$gone"
	echo "$C/debug/$id.txt" >>"$gone"
	echo "$C/telemetry/1p_failed_events.$id.$tel.json" >>"$gone"
	# temp root: the task output dir and the scratchpad
	mkdir -p "$TU/$k/$id/tasks" "$TU/$k/$id/started"
	chmod 700 "$TU"
	echo 'bash output' >"$TU/$k/$id/tasks/b1.output"
	echo "$TU/$k/$id" >>"$gone"
	scratch=$(scratch_name "$id")
	mkdir -p "$TU/s/$scratch/scratchpad"
	echo 'notes' >"$TU/s/$scratch/scratchpad/notes.md"
	echo "$TU/s/$scratch" >>"$gone"
	# history lines and a paste only this session references
	h=$(mk_paste "pasted secret of $id")
	mk_history_line "$id" "$cwd" "first prompt of $id" "$h"
	mk_history_line "$id" "$cwd" "second prompt of $id"
	echo "$C/paste-cache/$h.txt" >>"$gone"
	# a stale registry entry (its process was killed) with its key and socket
	pid=$(dead_pid)
	mk_registry "$pid" "$id" 4242
	key=$(mk_registry_key "$pid")
	mk_socket "$SOCKS/$pid.sock"
	printf '%s\n' "$C/sessions/$pid.json" "$key" "$SOCKS/$pid.sock" >>"$gone"
)

# ---- snapshots --------------------------------------------------------------------------

# One line per entry under HOME, TMPDIR and OUT: type, mode, path, and the content hash of a
# file or the target of a link. Sorted, so two snapshots compare with diff.
tree_state() {
	local dirs=("$HOME" "$TMPDIR")
	[[ -d $OUT ]] && dirs+=("$OUT")
	{
		find "${dirs[@]}" -printf 'E\t%y\t%m\t%p\t%l\n'
		find "${dirs[@]}" -type f -exec sha256sum {} + | sed 's/^\([0-9a-f]*\)  /H\t\1\t/'
	} | awk -F'\t' '
		$1 == "H" { h[$3] = $2; next }
		{ t[$4] = $2; m[$4] = $3; l[$4] = $5 }
		END {
			for (p in t) {
				x = t[p] == "f" ? h[p] : t[p] == "l" ? "-> " l[p] : "-"
				printf "%s\t%s\t%s\t%s\n", p, t[p], m[p], x
			}
		}' | LC_ALL=C sort
}

# Save a snapshot to a file under BATS_TEST_TMPDIR.
snap() {
	tree_state >"$BATS_TEST_TMPDIR/$1"
}

# A snapshot file without the entries at or below the given paths, and without FILE_EXCLUDE
# (a path compared separately, e.g. history.jsonl).
snap_minus() {
	local file=$1
	shift
	awk -F'\t' -v list="$(printf '%s\n' "$@")" -v ex="${SNAP_EXCLUDE:-}" '
		BEGIN { n = split(list, g, "\n") }
		{
			if (ex != "" && $1 == ex) next
			for (i = 1; i <= n; i++) {
				if (g[i] == "") continue
				if ($1 == g[i] || index($1, g[i] "/") == 1) next
			}
			print
		}' "$BATS_TEST_TMPDIR/$file"
}

# Assert that the tree now equals snapshot FILE minus the given paths and what is below them:
# nothing else changed. SNAP_EXCLUDE names one path left out on both sides (a shared file
# whose content is checked on its own).
assert_tree_minus() {
	local file=$1
	shift
	diff -u <(snap_minus "$file" "$@") \
		<(tree_state | awk -F'\t' -v ex="${SNAP_EXCLUDE:-}" 'ex == "" || $1 != ex')
}

# Assert that nothing changed since snapshot FILE.
assert_tree_unchanged() {
	diff -u "$BATS_TEST_TMPDIR/$1" <(tree_state)
}

# Assert that a path exists (file, dir or link), or does not.
assert_exists() (
	trap - DEBUG
	local p
	for p; do
		[[ -e $p || -L $p ]] || { echo "expected to exist: $p" >&2; return 1; }
	done
)
assert_gone() (
	trap - DEBUG
	local p
	for p; do
		[[ ! -e $p && ! -L $p ]] || { echo "expected to be gone: $p" >&2; return 1; }
	done
)

# Assert that everything under OUT (what links point at) is as in snapshot FILE.
assert_outside_unchanged() {
	local only='index($1, o) == 1 || $1 == substr(o, 1, length(o) - 1)'
	diff -u <(awk -F'\t' -v o="$OUT/" "$only" "$BATS_TEST_TMPDIR/$1") \
		<(tree_state | awk -F'\t' -v o="$OUT/" "$only")
}

# Gate tests: a process that maps a file needs python3.
need_python() {
	command -v python3 >/dev/null || skip "python3 is not installed: cannot map a file"
}

# Wait until PID maps FILE (it shows in /proc/PID/maps).
wait_mapped() {
	local pid=$1 file i
	file=$(readlink -f "$2")
	for i in $(seq 1 150); do
		grep -qF -- " $file" "/proc/$pid/maps" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "pid $pid never mapped $file" >&2
	return 1
}

# Wait until PID's current directory is DIR.
wait_cwd() {
	local pid=$1 dir i
	dir=$(readlink -f "$2")
	for i in $(seq 1 150); do
		[[ $(readlink "/proc/$pid/cwd" 2>/dev/null) == "$dir" ]] && return 0
		sleep 0.02
	done
	echo "pid $pid never ran in $dir" >&2
	return 1
}
