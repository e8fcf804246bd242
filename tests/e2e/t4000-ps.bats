#!/usr/bin/env bats
# ps (SPEC "ps and stop"): one row per agent process and per holder of a session, with the
# sessions the in-use gate finds it holding (R5: a session ps shows held is one in-use calls in
# use, and the other way round), and the state: busy when a descendant runs that is not one of
# the agent's own processes (what runs under one of those still counts), else idle; Claude's
# registry status where it records one.

load lib

# ps --json's object for PID (empty when there is none).
ps_row() {
	jq -c --argjson p "$1" 'select(.pid == $p)' <<<"$PS"
}

ps_json() {
	run -0 --separate-stderr agc --json ps "$@"
	PS=$output
}

# A process with argv[0] NAME (perl under that name): CODE is perl run after $0 is set.
spawn_named() {
	local name=$1 code=$2
	spawn perl -e "\$0 = '$name'; $code"
	wait_exec "$LAST_PID" "$name"
}

@test "ps: a holder started by the test is listed with its session, the agent and how" {
	local cwd id
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	spawn_holding "$C/projects/$(pkey "$cwd")/$id.jsonl"
	ps_json
	jq -e '.role == "holder" and .agent == "claude" and .state == null' <<<"$(ps_row "$LAST_PID")"
	jq -e --arg id "$id" '.sessions == [{"agent":"claude","id":$id,"how":"open-file"}]' <<<"$(ps_row "$LAST_PID")"
	jq -e --arg cwd "$BATS_TEST_TMPDIR" '.cwd != null and (.started | test("^20[0-9-]+T[0-9:]+Z$"))' <<<"$(ps_row "$LAST_PID")"
	# the table names it too
	run -0 agc ps --wide
	[[ $output == *"$LAST_PID"*"$id (open-file)"* ]]
}

@test "ps: an agent process with a registry entry: its session, how, and the status the registry records" {
	local cwd id
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	spawn_in_dir "$cwd" claude
	mk_registry "$LAST_PID" "$id"
	ps_json --agent claude
	jq -e --arg id "$id" '.role == "agent" and .agent == "claude" and .state == "idle" and .state_from == "registry"
		and (.sessions | any(.id == $id and (.how | split(",") | index("registry"))))' <<<"$(ps_row "$LAST_PID")"
	# --agent: another agent's processes only
	ps_json --agent codex
	[[ -z $(ps_row "$LAST_PID") ]]
}

@test "ps: busy with a child that is not the agent's, idle with only a resident helper, busy with a grandchild under it" {
	local busy idle deep
	# opencode with a plain child (a tool running)
	spawn_named opencode 'if (!fork) { exec "sleep", "1000" } sleep 1000'
	busy=$LAST_PID
	# opencode whose only child is opencode's own (its server)
	spawn_named opencode 'if (!fork) { $0 = "opencode"; sleep 1000; exit } sleep 1000'
	idle=$LAST_PID
	# the same, with a tool under the server
	spawn_named opencode 'if (!fork) { $0 = "opencode"; if (!fork) { exec "sleep", "1000" } sleep 1000; exit } sleep 1000'
	deep=$LAST_PID
	# the children are made: two levels under deep
	local i
	for i in $(seq 1 100); do
		[[ -n $(pgrep -P "$(pgrep -P "$deep" | head -n1)" 2>/dev/null) && -n $(pgrep -P "$busy") && -n $(pgrep -P "$idle") ]] && break
		sleep 0.05
	done
	ps_json --agent opencode
	jq -e '.state == "busy" and .state_from == "children" and .role == "agent"' <<<"$(ps_row "$busy")"
	jq -e '.state == "idle" and .state_from == "children"' <<<"$(ps_row "$idle")"
	jq -e '.state == "busy"' <<<"$(ps_row "$deep")"
	# the resident helpers are agent processes too: the idle one's is idle, the deep one's busy
	jq -e '.state == "idle"' <<<"$(ps_row "$(pgrep -P "$idle")")"
	jq -e '.state == "busy"' <<<"$(ps_row "$(pgrep -P "$deep" | head -n1)")"
	# a process of no agent that holds nothing is no row
	[[ -z $(ps_row "$(pgrep -P "$busy")") ]]
}

@test "ps: a shared service serves sessions and holds none; in-use calls them free" {
	oc_small_home
	local db=$HOME/.local/share/opencode/opencode.db
	spawn_as opencode -e 'sleep 1000' serve --service 4<"$db"
	wait_fd_open "$LAST_PID" "$db"
	ps_json
	jq -e --arg s "$S" '.role == "service" and .agent == "opencode" and .sessions == []
		and (.serves | any(.id == $s and .how == "open-file"))' <<<"$(ps_row "$LAST_PID")"
	run -0 agc in-use opencode "$S"
	# any other process with the database open holds every session of it
	spawn_as opencode -e 'sleep 1000' run 4<"$db"
	wait_fd_open "$LAST_PID" "$db"
	ps_json
	jq -e --arg s "$S" '.role == "agent" and (.sessions | any(.id == $s and .how == "open-file"))' <<<"$(ps_row "$LAST_PID")"
	run -4 agc in-use opencode "$S"
}

@test "ps: a session held by no process that can be named is on the pid-0 row" {
	local cwd id
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	# a registry of another pid namespace: cannot be checked from here, so live (R5)
	mk_registry_raw 4242 "{\"pid\":4242,\"sessionId\":\"$id\",\"procStart\":\"1\",\"pidDomain\":\"linux:elsewhere:pid:[1]\",\"status\":\"busy\"}"
	ps_json
	jq -e --arg id "$id" '.role == "unseen" and .command != null and (.sessions | any(.id == $id and .how == "registry"))' <<<"$(ps_row 0)"
	run -4 agc in-use claude "$id"
	# the pid it names is not a row of its own
	[[ -z $(ps_row 4242) ]]
	# a registry file too big to read, of a running pid: every session is live through it, by
	# that pid's registry (as in-use says)
	rm -f "$C/sessions/4242.json"
	spawn_as claude -e 'sleep 1000'
	head -c 300000 /dev/zero | tr '\0' ' ' >"$C/sessions/$LAST_PID.json"
	ps_json
	jq -e --arg id "$id" '.role == "agent" and (.sessions | any(.id == $id and .how == "registry"))' <<<"$(ps_row "$LAST_PID")"
	run -4 agc in-use claude "$id"
}

# R5, both ways: on one home with holders of every kind (a child's file open, an argument, a
# tool's environment, a registry entry, a current dir inside a session, a Codex writer lock)
# and free sessions of every agent, the sessions ps shows held are exactly those in-use calls
# in use.
@test "ps: the sessions ps shows held are exactly those in-use calls in use" {
	need_fixture
	rm -rf "$HOME"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 4001 --claude 6 --full --opencode 3 \
		--opencode-children 2 --codex 3 --codex-children 1 --cursor 2 --now "$NOW" --quiet \
		--manifest "$BATS_TEST_TMPDIR/man.jsonl"
	mkdir -p "$TMPDIR"
	local man=$BATS_TEST_TMPDIR/man.jsonl ids c1 c2 c3 oc_child cx lockf sub reg
	mapfile -t ids < <(agc ls --orphans --ids)
	[[ ${#ids[@]} -ge 12 ]]
	# Claude: a sub-agent's transcript open (its root is held), another session in an argument,
	# a third through a tool's environment, a fourth through a live registry entry
	mapfile -t claude < <(jq -r 'select(.agent == "claude") | .id' "$man")
	sub=$(find "$C/projects" -path "*/${claude[0]}/subagents/*.jsonl" | head -n1)
	[[ -n $sub ]]
	spawn_holding "$sub"
	spawn_argv --resume "${claude[1]}"
	spawn env CLAUDE_CODE_SESSION_ID="${claude[2]}" sleep 1000
	wait_exec "$LAST_PID" "sleep 1000"
	spawn_in_dir "$WORK" claude
	mk_registry "$LAST_PID" "${claude[3]}"
	# OpenCode: a child's id in an argument holds its root
	oc_child=$(jq -r 'select(.agent == "opencode" and .parent != null) | .id' "$man" | head -n1)
	[[ -n $oc_child ]]
	spawn_argv --session "$oc_child"
	# Codex: a thread's writer lock held
	cx=$(jq -r 'select(.agent == "codex" and .parent == null) | .id' "$man" | head -n1)
	[[ -n $cx ]]
	lockf=$HOME/.codex/thread-writer-locks/$cx.lock
	mkdir -p "$(dirname "$lockf")"
	: >"$lockf"
	spawn flock -x "$lockf" sleep 1000
	for _ in $(seq 1 100); do grep -q " $(stat -c %i "$lockf") " <(sed 's/:/ /g' /proc/locks) && break; sleep 0.05; done
	# a current dir inside a Cursor chat's dir
	local cu_dir
	cu_dir=$(dirname "$(find "$HOME" -name store.db -path '*chats*' | head -n1)")
	[[ -d $cu_dir ]]
	spawn_in_dir "$cu_dir" sh
	ps_json
	local held free=0 busy=0 id
	held=$(jq -r '.sessions[] | .agent + " " + .id' <<<"$PS" | sort -u)
	while read -r agent id; do
		if agc in-use "$agent" "$id" >/dev/null 2>&1; then
			rc=0
		else
			rc=$?
		fi
		if grep -qxF "$agent $id" <<<"$held"; then
			[[ $rc == 4 ]] || { echo "ps shows $agent $id held, in-use says $rc"; false; }
			busy=$((busy + 1))
		else
			[[ $rc == 0 ]] || { echo "in-use says $rc for $agent $id, ps does not show it held"; false; }
			free=$((free + 1))
		fi
	done < <(agc --json ls --orphans | jq -r '.agent + " " + .id')
	# the holders of every kind above, and free sessions besides
	[[ $busy -ge 7 && $free -ge 5 ]] || { echo "busy $busy free $free"; false; }
	# and every session ps shows is a root session ls lists
	local roots
	roots=$(agc --json ls --orphans | jq -r '.agent + " " + .id' | sort -u)
	while read -r agent id; do
		grep -qxF "$agent $id" <<<"$roots" || { echo "ps shows $agent $id, which ls does not list"; echo "$PS"; false; }
	done <<<"$held"
}

@test "ps --watch: a new frame every second until interrupted, exit 0" {
	local cwd id
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	spawn_holding "$C/projects/$(pkey "$cwd")/$id.jsonl"
	run -0 timeout --preserve-status -s INT 2.6 "$AGENTGC" --json ps --watch
	[[ $(grep -c "\"pid\":$LAST_PID," <<<"$output") -ge 2 ]]
	# each frame ends with a line that says so
	[[ $(grep -c '^{"frame":{"time":"[0-9T:Z-]*","processes":[1-9][0-9]*}}$' <<<"$output") -ge 2 ]]
	# a reader that goes away ends the watch
	run -0 timeout 10 bash -c "trap '' PIPE; '$AGENTGC' --json ps --watch | head -c 10 >/dev/null"
	run -0 timeout --preserve-status -s INT 1.5 "$AGENTGC" ps --watch
	[[ $output == *"PID"*"$LAST_PID"* ]]
}

@test "ps: usage, and nothing running said on stderr" {
	run -2 --separate-stderr agc ps extra
	[[ $stderr == *"unexpected argument 'extra'"* ]]
	run -2 --separate-stderr agc ps --agent nope
	run -0 --separate-stderr agc ps --help
	[[ $output == *"busy"* ]]
	run -0 --separate-stderr agc ps --agent cursor
	[[ -z $output && $stderr == *"no agent process is running"* ]]
}

@test "ps --watch interrupted while the ps it runs is still listing (Ctrl-C reaches the whole process group): exit 0, no error" {
	# a ps that takes its time, so that the interruption finds it running
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nexec sleep 5\n' >"$BATS_TEST_TMPDIR/bin/ps"
	chmod +x "$BATS_TEST_TMPDIR/bin/ps"
	# timeout signals its whole process group, as a terminal's Ctrl-C does
	PATH=$BATS_TEST_TMPDIR/bin:$PATH AGENTGC_PROC_BACKEND=ps \
		run -0 --separate-stderr timeout --preserve-status -s INT 1 "$AGENTGC" ps --watch
	[[ -z $stderr ]]
	# not interrupted, the same failing ps is an error, said
	printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/ps"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH AGENTGC_PROC_BACKEND=ps \
		run -1 --separate-stderr timeout --preserve-status -s INT 5 "$AGENTGC" ps --watch
	[[ $stderr == *ps* ]]
}
