#!/usr/bin/env bats
# The process table through ps and lsof (AGENTGC_PROC_BACKEND=ps: the backend of macOS and the
# BSDs, run here on Linux): the gate finds the same holders, and when ps or lsof is missing or
# fails it answers in use with that reason (R5, fail closed), still naming the holders that
# command lines show; a value that names no backend is in use too.

load lib

setup() {
	agc_setup
	export AGENTGC_PROC_BACKEND=ps
	# a PATH with ps and without lsof
	NOLSOF=$BATS_TEST_TMPDIR/nolsof
	mkdir -p "$NOLSOF"
	ln -s "$(command -v ps)" "$NOLSOF/ps"
}

@test "ps backend: a process holding OpenCode's database holds its sessions; without lsof the purge is refused and says why" {
	oc_small_home
	local db=$HOME/.local/share/opencode/opencode.db
	spawn_holding "$db"
	local holder=$LAST_PID
	run -4 --separate-stderr agc --json in-use opencode "$S"
	json_ok --argjson p "$holder" '.[0].in_use and (.[0].holders | any(.pid == $p and .why == "open-file"))'
	# a hint points where this backend looks (no /proc on its systems): a holder of a
	# transcript, and one that runs in a session's dir
	local cwd id h
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	mk_subagent "$id" "$cwd" >/dev/null
	spawn_holding "$C/projects/$(pkey "$cwd")/$id.jsonl"
	h=$LAST_PID
	spawn_in_dir "$C/projects/$(pkey "$cwd")/$id" agent-dir-sleeper
	run -4 --separate-stderr agc --json purge claude "$id"
	json_ok --arg h "see lsof -p $h" --arg c "see lsof -a -d cwd -p $LAST_PID" '.[0].status == "in-use" and
		any(.[0].hints[]; contains($h)) and any(.[0].hints[]; contains($c)) and
		all(.[0].hints[]; contains("/proc/") | not)'
	# lsof missing: in use, the reason named, nothing changed
	snap before
	run -4 --separate-stderr env PATH="$NOLSOF" "$AGENTGC" --json purge opencode "$S"
	json_ok '.[0].status == "in-use" and (.[0].holders | any(.pid == 0 and .why == "process-table" and (.command | contains("lsof"))))'
	[[ $stderr == *"lsof"* ]]
	assert_tree_unchanged before
	# a holder its command line names is still told
	spawn_argv --session "$S"
	run -4 --separate-stderr env PATH="$NOLSOF" "$AGENTGC" --json in-use opencode "$S"
	json_ok --argjson p "$LAST_PID" '(.[0].holders | any(.pid == $p and .why == "cmdline")) and (.[0].holders | any(.pid == 0))'
	# and once the holders are gone, lsof still missing: still in use (nothing can show it free)
	kill_tree "$holder"
	kill_tree "$LAST_PID"
	run -4 --separate-stderr env PATH="$NOLSOF" "$AGENTGC" in-use opencode "$S"
	[[ $output == *"lsof"* ]]
	run -0 agc purge opencode "$S"
}

@test "ps backend: without ps, or with a value that names no backend, every session is in use and the reason said" {
	local cwd id
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	run -4 --separate-stderr env PATH="$BATS_TEST_TMPDIR/empty" "$AGENTGC" in-use claude "$id"
	[[ $output == *"cannot run 'ps'"* ]]
	run -4 --separate-stderr env AGENTGC_PROC_BACKEND=pss "$AGENTGC" purge claude "$id"
	[[ $stderr == *"AGENTGC_PROC_BACKEND='pss'"* ]]
	[[ -e $C/projects/$(pkey "$cwd")/$id.jsonl ]]
	run -0 env AGENTGC_PROC_BACKEND=proc "$AGENTGC" in-use claude "$id"
	run -0 agc in-use claude "$id"
	run -0 --separate-stderr agc --json ls
	json_ok --arg id "$id" '.[0].id == $id and .[0].live == false'
}

@test "ps backend: a live registry entry stays live whatever TZ says (start times are UTC), and a reused pid is stale" {
	local cwd id
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	spawn sleep 1000
	mk_registry "$LAST_PID" "$id"
	for tz in UTC0 America/New_York Australia/Lord_Howe EST5EDT; do
		run -4 env TZ="$tz" "$AGENTGC" in-use claude "$id"
	done
	# a start time a minute off: another process at that pid
	mk_registry "$LAST_PID" "$id" $(($(proc_start "$LAST_PID") + 60 * $(getconf CLK_TCK)))
	run -0 env TZ=America/New_York "$AGENTGC" in-use claude "$id"
}

@test "ps backend: ps and stop through it: a holder listed, an agent stopped" {
	local cwd id
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	spawn_as claude -e '$SIG{HUP} = "IGNORE"; sleep 1000' -- --resume "$id"
	run -0 --separate-stderr agc --json ps
	json_ok --argjson p "$LAST_PID" --arg id "$id" 'map(select(.pid == $p))[0] | .role == "agent" and .agent == "claude"
		and (.sessions | any(.id == $id and .how == "cmdline")) and (.started | test("Z$"))'
	run -0 --separate-stderr agc --json stop claude "$id" --grace 1s
	json_ok --argjson p "$LAST_PID" '.[0].status == "stopped" and (.[0].chain[0] | .pid == $p and .signals == ["SIGHUP","SIGTERM"] and .result == "exited")'
}

@test "ps backend: a procStart in macOS's form (ps's lstart, UTC) is checked to the second" {
	local cwd id lstart
	cwd=$(mk_project)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	spawn sleep 1000
	lstart=$(TZ=UTC0 LC_ALL=C ps -o lstart= -p "$LAST_PID" | sed 's/^ *//; s/ *$//')
	mk_registry "$LAST_PID" "$id" "$lstart"
	run -4 env TZ=Europe/Berlin "$AGENTGC" in-use claude "$id"
	# a minute off: another process at that pid, the entry stale
	mk_registry "$LAST_PID" "$id" "$(TZ=UTC0 LC_ALL=C date -u -d "$lstart UTC - 1 minute" '+%a %b %e %H:%M:%S %Y')"
	run -0 agc in-use claude "$id"
	# /proc's start is ticks: such text cannot be checked there, and counts as live
	run -4 env AGENTGC_PROC_BACKEND=proc "$AGENTGC" in-use claude "$id"
}
