#!/usr/bin/env bats
# R5: Claude's registry sessions/<pid>.json. Live when the pid runs and its start time matches
# procStart (or startedAt); a startedAt that cannot be checked counts as live; a dead or
# reused pid makes the entry stale, and a stale entry goes with the purge.

load lib

# A session with a transcript, a side dir, a temp dir and a history line; sets S, CWD.
mk_simple() {
	CWD=$(mk_project proj)
	S=$(new_uuid)
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/file-history/$S" "$TU/$(pkey "$CWD")/$S/tasks"
	echo v1 >"$C/file-history/$S/0123456789abcdef@v1"
	echo out >"$TU/$(pkey "$CWD")/$S/tasks/b1.output"
	mk_history_line "$S" "$CWD" "a prompt"
}

# A registry entry for pid naming S, with the given JSON text for procStart/startedAt.
mk_reg_text() {
	local pid=$1 fields=$2
	mk_registry_raw "$pid" "{\"pid\":$pid,\"sessionId\":\"$S\",\"cwd\":\"$CWD\",$fields,\"version\":\"2.1.332\",\"kind\":\"interactive\",\"status\":\"busy\"}"
}

@test "R5: registry entry of a live pid with matching procStart: exit 4, nothing changed" {
	mk_simple
	spawn sleep 1000
	mk_registry "$LAST_PID" "$S"
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and (.[0].holders | any(.pid == $p and .why == "registry"))'
	[[ $stderr == *"$LAST_PID"* ]]
	assert_tree_unchanged before
	run -4 agc in-use claude "$S"
}

@test "R5: registry entry of a live pid whose procStart is given as a number matches too" {
	mk_simple
	spawn sleep 1000
	mk_reg_text "$LAST_PID" "\"startedAt\":1,\"procStart\":$(proc_start "$LAST_PID")"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: registry entry of a dead pid is stale: purged, exit 0, entry gone" {
	mk_simple
	local pid
	pid=$(dead_pid)
	mk_registry "$pid" "$S"
	run -0 agc purge claude "$S"
	assert_gone "$C/sessions/$pid.json" "$C/projects/$(pkey "$CWD")/$S.jsonl"
}

@test "R5: registry entry of a live pid whose procStart differs (pid reused): purged, exit 0" {
	mk_simple
	local ps
	spawn sleep 1000
	ps=$(proc_start "$LAST_PID")
	mk_registry "$LAST_PID" "$S" "$(other_start "$ps")"
	run -0 agc purge claude "$S"
	assert_gone "$C/sessions/$LAST_PID.json" "$C/projects/$(pkey "$CWD")/$S.jsonl"
	kill -0 "$LAST_PID"
}

@test "R5: procStart absent, startedAt matching the live pid's start: exit 4" {
	mk_simple
	spawn sleep 1000
	mk_reg_text "$LAST_PID" "\"startedAt\":$(proc_started_ms "$LAST_PID")"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: procStart absent, startedAt far from the live pid's start (pid reused): purged" {
	mk_simple
	spawn sleep 1000
	mk_reg_text "$LAST_PID" "\"startedAt\":$(( $(proc_started_ms "$LAST_PID") - 86400000 ))"
	run -0 agc purge claude "$S"
	assert_gone "$C/sessions/$LAST_PID.json"
}

# Each value below cannot be checked against the process start: the entry counts as live.
# NaN, Infinity, 1e400 and the 400-digit integer are not valid JSON; that is the point.
check_unverifiable() {
	mk_simple
	spawn sleep 1000
	mk_reg_text "$LAST_PID" "\"startedAt\":$1"
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and (.[0].holders | any(.pid == $p))'
	assert_tree_unchanged before
	run -4 agc in-use claude "$S"
}

@test "R5: procStart absent and startedAt NaN: exit 4" {
	check_unverifiable NaN
}

@test "R5: procStart absent and startedAt Infinity: exit 4" {
	check_unverifiable Infinity
}

@test "R5: procStart absent and startedAt -Infinity: exit 4" {
	check_unverifiable -Infinity
}

@test "R5: procStart absent and startedAt 1e400: exit 4" {
	check_unverifiable 1e400
}

@test "R5: procStart absent and startedAt a 400-digit integer: exit 4" {
	check_unverifiable "$(printf '9%.0s' $(seq 1 400))"
}

@test "R5: procStart absent and startedAt true: exit 4" {
	check_unverifiable true
}

@test "R5: procStart absent and startedAt a string: exit 4" {
	check_unverifiable '"1795984671798"'
}

@test "R5: procStart absent and startedAt 0: exit 4" {
	check_unverifiable 0
}

@test "R5: procStart absent and startedAt negative: exit 4" {
	check_unverifiable -5
}

@test "R5: procStart absent and startedAt null: exit 4" {
	check_unverifiable null
}

@test "R5: a registry file that is not JSON at all but names the session, pid alive: exit 4" {
	mk_simple
	spawn sleep 1000
	mk_registry_raw "$LAST_PID" "{\"pid\":$LAST_PID,\"sessionId\":\"$S\",\"startedAt\":"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: an unparseable registry file of a dead pid is stale: purged" {
	mk_simple
	local pid
	pid=$(dead_pid)
	mk_registry_raw "$pid" "{\"pid\":$pid,\"sessionId\":\"$S\",\"startedAt\":NaN}"
	run -0 agc purge claude "$S"
	assert_gone "$C/sessions/$pid.json"
}

@test "R5: a live entry from another pid namespace (pidDomain differs) cannot be checked: exit 4" {
	mk_simple
	spawn sleep 1000
	mk_reg_text "$LAST_PID" "\"startedAt\":1,\"procStart\":\"1\",\"pidDomain\":\"linux:0000:pid:[1]\""
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: a live registry entry naming another session does not block" {
	mk_simple
	spawn sleep 1000
	mk_registry "$LAST_PID" "$(new_uuid)"
	run -0 agc purge claude "$S"
	assert_exists "$C/sessions/$LAST_PID.json"
}

@test "R5+R7: a stale registry entry naming the session goes with its .key and socket; others stay" {
	mk_simple
	local pid opid lpid key okey o
	pid=$(dead_pid)
	mk_registry "$pid" "$S"
	key=$(mk_registry_key "$pid")
	mk_socket "$SOCKS/$pid.sock"
	# a stale entry of another session, with its key and socket
	o=$(new_uuid)
	mk_transcript "$o" "$CWD"
	opid=$(dead_pid)
	while [[ $opid == "$pid" ]]; do opid=$(dead_pid); done
	mk_registry "$opid" "$o"
	okey=$(mk_registry_key "$opid")
	mk_socket "$SOCKS/$opid.sock"
	# a live entry of a third session
	spawn sleep 1000
	lpid=$LAST_PID
	mk_registry "$lpid" "$(new_uuid)"
	run -0 --separate-stderr agc --json purge claude "$S"
	assert_gone "$C/sessions/$pid.json" "$key" "$SOCKS/$pid.sock"
	assert_exists "$C/sessions/$opid.json" "$okey" "$SOCKS/$opid.sock" "$C/sessions/$lpid.json"
	json_ok --arg p "$C/sessions/$pid.json" '.[0].removed | any(.path == $p)'
}
