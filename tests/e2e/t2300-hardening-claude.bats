#!/usr/bin/env bats
# Hardening of the Claude Code adapter and of unreadable roots (issue 6, items 3, 8 and 10):
# only agent-a<16 hex>.jsonl names a sub-agent (R1, R4); a recorded start time is plain
# decimal digits or counts as live, and a registry entry of another pid namespace says which
# file to remove by hand (R5); a root or registry that cannot be read is reported, refuses
# the purge where it hides the registry, and is never taken for "not found" (R2, R5, R7).

load lib

setup() {
	agc_setup
	unset XDG_DATA_HOME XDG_STATE_HOME XDG_CONFIG_HOME XDG_CACHE_HOME OPENCODE_DB
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	NB=
}

teardown() {
	agc_teardown
	nobody_teardown
}

# A registry entry of pid naming S with the given procStart/startedAt/pidDomain fields.
mk_reg_fields() {
	local pid=$1 fields=$2
	mk_registry_raw "$pid" "{\"pid\":$pid,\"sessionId\":\"$S\",\"cwd\":\"$CWD\",$fields,\"version\":\"2.1.332\",\"kind\":\"interactive\",\"status\":\"busy\"}"
}

# A session of S with a side dir and a history line, and a live pid registered for it with
# the given procStart text: the purge must refuse (exit 4) and change nothing.
assert_proc_start_live() {
	local ps=$1
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/file-history/$S"
	echo v1 >"$C/file-history/$S/0123456789abcdef@v1"
	mk_history_line "$S" "$CWD" "a prompt"
	spawn sleep 1000
	mk_reg_fields "$LAST_PID" "\"startedAt\":1,\"procStart\":\"$ps\""
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and .[0].removed == [] and
		(.[0].holders | any(.pid == $p and .why == "registry"))'
	assert_tree_unchanged before
	run -4 --separate-stderr agc --json in-use claude "$S"
	json_ok '.[0].in_use == true'
	# ls gives the gate's answer
	run -0 --separate-stderr agc --json ls
	json_ok --arg s "$S" 'any(.id == $s and .live == true)'
}

# ---- item 3: sub-agent ids (R1, R4) -------------------------------------------------------------

@test "R1+R5: subagents/agent-e.jsonl is no sub-agent id: a process with an e in its argv does not hold the session, purge exits 0" {
	local d=$C/projects/$K/$S/subagents
	mk_transcript "$S" "$CWD"
	mkdir -p "$d"
	echo '{"isSidechain":true}' >"$d/agent-e.jsonl"
	# "sleep 300" has an e in its argv: were "e" an id of the purge, it would hold it
	spawn sleep 300
	wait_exec "$LAST_PID" "sleep 300"
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "purged" and .[0].holders == [] and .[0].children == []'
	# a file of the parent's dir: it goes with the dir
	assert_gone "$d/agent-e.jsonl" "$C/projects/$K/$S" "$C/projects/$K/$S.jsonl"
	kill -0 "$LAST_PID"
}

@test "R1+R4: subagents/agent-<another session's uuid>.jsonl is no id: that session's history lines and files survive" {
	local O d=$C/projects/$K/$S/subagents
	O=$(new_uuid)
	mk_transcript "$S" "$CWD"
	mk_history_line "$S" "$CWD" "prompt of the purged session"
	mk_transcript "$O" "$CWD" "the other session"
	mkdir -p "$C/file-history/$O" "$TU/$K/$O/tasks"
	echo v1 >"$C/file-history/$O/0123456789abcdef@v1"
	echo out >"$TU/$K/$O/tasks/b1.output"
	mk_history_line "$O" "$CWD" "first prompt of the other session"
	mk_history_line "$O" "$CWD" "second prompt of the other session"
	mkdir -p "$d"
	echo '{"isSidechain":true}' >"$d/agent-$O.jsonl"
	# not listed as a child either: ls and purge read sub-agents with one grammar
	run -0 --separate-stderr agc --json ls --children
	json_ok --arg o "$O" --arg s "$S" '[.[] | select(.id == $o)] | length == 1 and all(.parent == null)'
	SNAP_EXCLUDE=$C/history.jsonl snap before
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "purged" and .[0].children == []'
	[ "$(grep -c "\"sessionId\":\"$O\"" "$C/history.jsonl")" -eq 2 ]
	[ "$(grep -c "\"sessionId\":\"$S\"" "$C/history.jsonl" || true)" -eq 0 ]
	SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "$C/projects/$K/$S" "$C/projects/$K/$S.jsonl"
	assert_exists "$C/projects/$K/$O.jsonl" "$C/file-history/$O" "$TU/$K/$O/tasks/b1.output"
}

# ---- item 8: numbers (R5) -----------------------------------------------------------------------

@test "R5: procStart \"-1\" with a live pid cannot be checked: live, exit 4, nothing changed" {
	assert_proc_start_live "-1"
}

@test "R5: procStart \" 123\" (a leading space) with a live pid cannot be checked: live, exit 4" {
	assert_proc_start_live " 123"
}

@test "R5: procStart \"+5\" with a live pid cannot be checked: live, exit 4" {
	assert_proc_start_live "+5"
}

@test "R5: procStart \"1e5\" with a live pid cannot be checked: live, exit 4" {
	assert_proc_start_live "1e5"
}

@test "R5: procStart \"\" with a live pid cannot be checked: live, exit 4" {
	assert_proc_start_live ""
}

@test "R5: procStart a negative JSON number with a live pid cannot be checked: live, exit 4" {
	mk_transcript "$S" "$CWD"
	spawn sleep 1000
	mk_reg_fields "$LAST_PID" '"startedAt":1,"procStart":-1'
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: startedAt a huge integer (no procStart) with a live pid cannot be checked: live, exit 4" {
	mk_transcript "$S" "$CWD"
	spawn sleep 1000
	mk_reg_fields "$LAST_PID" '"startedAt":9223372036854775807'
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: a registry entry of another pid namespace (pidDomain differs), pid alive here: exit 4; the hint says why and names the file to remove by hand" {
	local f
	mk_transcript "$S" "$CWD"
	spawn sleep 1000
	mk_reg_fields "$LAST_PID" "\"startedAt\":1,\"procStart\":\"$(proc_start "$LAST_PID")\",\"pidDomain\":\"linux:0123456789abcdef0123456789abcdef:pid:[4026531111]\""
	f=$C/sessions/$LAST_PID.json
	snap before
	run -4 --separate-stderr agc purge claude "$S"
	[[ $stderr == *"another machine or in another pid namespace"* ]]
	[[ $stderr == *"remove '$f' by hand"* ]]
	# the generic "see ps" line would point at the local process that has that pid: not given
	[[ $stderr != *"ps -o pid,lstart,args -p $LAST_PID"* ]]
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" --arg f "$f" '.[0].status == "in-use" and
		(.[0].holders | any(.pid == $p and .why == "registry" and .what == $f))'
	[[ $stderr == *"remove '$f' by hand"* ]]
	run -4 --separate-stderr agc in-use claude "$S"
	[[ $stderr == *"another machine or in another pid namespace"* ]]
	assert_tree_unchanged before
}

@test "R5: a foreign pidDomain whose pid does not run here: ls says live, as in-use does" {
	local pid
	mk_transcript "$S" "$CWD"
	pid=$(dead_pid)
	mk_reg_fields "$pid" '"procStart":"4242","pidDomain":"linux:0123456789abcdef0123456789abcdef:pid:[4026531111]"'
	run -4 agc in-use claude "$S"
	run -0 --separate-stderr agc --json ls
	json_ok --arg s "$S" 'any(.id == $s and .live == true)'
}

@test "R5: an unparseable registry file naming the session, pid alive: ls says live, as in-use does" {
	mk_transcript "$S" "$CWD"
	spawn sleep 1000
	mk_registry_raw "$LAST_PID" "{\"pid\":$LAST_PID,\"sessionId\":\"${S^^}\",\"startedAt\":NaN}"
	run -4 agc in-use claude "$S"
	run -0 --separate-stderr agc --json ls
	json_ok --arg s "$S" 'any(.id == $s and .live == true)'
}

# ---- item 10: unreadable roots (R2, R5, R7) -----------------------------------------------------

@test "R2+R5: ~/.claude chmod 000 (as its owner): purge refused (exit 4) before anything changes, residual permission; in-use exit 4, not 5; ls and roots say so" {
	nobody_setup
	mk_full_session "$S" "$CWD"
	nobody_own
	chmod 000 "$C"
	snap before
	run -4 --separate-stderr agc_nobody --json purge claude "$S"
	json_ok --arg c "$C" '.[0].status == "in-use" and .[0].removed == [] and
		(.[0].holders | any(.why == "registry" and (.command | contains("cannot read the registry")))) and
		(.[0].residual | any(.path == $c and .reason == "permission"))'
	[[ $stderr == *"cannot read the registry '$C/sessions'"* ]]
	# the dir to fix is the config dir itself
	[[ $stderr == *"make '$C' readable"* ]]
	assert_tree_unchanged before
	# the temp artifacts stay too: the registry was never read
	assert_exists "$TU/$K/$S" "$TU/s/$(scratch_name "$S")"
	run -4 --separate-stderr agc_nobody purge auto "$S"
	run -4 --separate-stderr agc_nobody --json purge claude "$S" --dry-run
	json_ok '.[0].status == "in-use" and .[0].removed == []'
	run -4 --separate-stderr agc_nobody --json in-use claude "$S"
	json_ok '.[0].in_use == true and (.[0].holders | any(.command | contains("cannot read the registry")))'
	run -4 --separate-stderr agc_nobody in-use auto "$S"
	# an id found nowhere else: still not "not found", since the config dir was not read
	run -4 --separate-stderr agc_nobody purge claude "$(new_uuid)"
	run -0 --separate-stderr agc_nobody ls
	[[ $stderr == *"cannot read '$C': Permission denied"* ]]
	run -0 --separate-stderr agc_nobody --json ls
	[[ $stderr == *"cannot read '$C': Permission denied"* ]]
	run -0 --separate-stderr agc_nobody roots
	[[ $stderr == *"cannot read '$C': Permission denied"* ]]
	run -0 --separate-stderr agc_nobody --json roots
	json_ok --arg c "$C" 'any(.agent == "claude" and .root == "config" and .exists == true and
		.error == "Permission denied")'
	assert_tree_unchanged before
}

@test "R2+R7: projects/ chmod 000 alone: exit 3, residual names it as a dir with reason permission; ls says so" {
	nobody_setup
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/file-history/$S"
	echo v1 >"$C/file-history/$S/0123456789abcdef@v1"
	nobody_own
	chmod 000 "$C/projects"
	run -0 --separate-stderr agc_nobody ls
	[[ $stderr == *"cannot read '$C/projects': Permission denied"* ]]
	run -3 --separate-stderr agc_nobody --json purge claude "$S"
	json_ok --arg d "$C/projects" '.[0].status == "partial" and
		(.[0].residual | any(.path == $d and .kind == "dir" and .reason == "permission"))'
	assert_gone "$C/file-history/$S"
	chmod 755 "$C/projects"
	assert_exists "$C/projects/$K/$S.jsonl"
}

@test "R5: sessions/ chmod 000 alone: purge and in-use exit 4, the holder names the registry dir, ls marks the session live and says so" {
	nobody_setup
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/sessions"
	nobody_own
	chmod 000 "$C/sessions"
	snap before
	run -4 --separate-stderr agc_nobody --json purge claude "$S"
	json_ok --arg d "$C/sessions" '.[0].status == "in-use" and .[0].removed == [] and
		(.[0].holders | any(.what == $d and (.command | contains("Permission denied"))))'
	run -4 --separate-stderr agc_nobody in-use claude "$S"
	[[ $stderr == *"cannot read the registry '$C/sessions' (Permission denied)"* ]]
	[[ $stderr == *"make '$C/sessions' readable"* ]]
	run -0 --separate-stderr agc_nobody --json ls
	json_ok --arg s "$S" 'any(.id == $s and .live == true)'
	[[ $stderr == *"cannot read '$C/sessions': Permission denied"* ]]
	assert_tree_unchanged before
}

@test "R2+R8: the OpenCode data dir chmod 000: purge of an OpenCode id exits 3 with residual permission (auto too, never 5); ls and roots say so" {
	nobody_setup
	local id
	need_fixture
	# the fixture wants a fresh home and temp root
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --opencode 2 --seed 2301 --now "$NOW" \
		--quiet --manifest "$BATS_TEST_TMPDIR/manifest.jsonl"
	id=$(jq -r 'select(.agent == "opencode" and .parent == null) | .id' "$BATS_TEST_TMPDIR/manifest.jsonl" | head -n1)
	[[ $id == ses_* ]]
	[[ -f $DATA/opencode.db ]]
	mkdir -p "$TMPDIR"
	nobody_own
	# the owner can read it: found
	run -0 --separate-stderr agc_nobody --json ls --agent opencode
	json_ok --arg i "$id" 'any(.id == $i)'
	chmod 000 "$DATA"
	snap before
	run -3 --separate-stderr agc_nobody --json purge opencode "$id"
	json_ok --arg d "$DATA" '.[0].status == "partial" and .[0].removed == [] and
		(.[0].residual | any(.path == $d and .reason == "permission"))'
	run -3 --separate-stderr agc_nobody --json purge auto "$id"
	json_ok --arg d "$DATA" '.[0].status == "partial" and (.[0].residual | any(.path == $d and .reason == "permission"))'
	run -3 --separate-stderr agc_nobody --json purge opencode "$id" --dry-run
	json_ok '.[0].status == "dry-run"'
	# nothing of it could be seen: neither free nor not found, but cannot tell (exit 4)
	run -4 --separate-stderr agc_nobody --json in-use opencode "$id"
	json_ok --arg d "$DATA" '.[0].in_use == true and (.[0].holders | any(.what == $d))'
	[[ $stderr == *"cannot read '$DATA'"* ]]
	run -4 --separate-stderr agc_nobody in-use auto "$id"
	run -0 --separate-stderr agc_nobody --json ls --agent opencode
	[[ $stderr == *"cannot read '$DATA': Permission denied"* ]]
	run -0 --separate-stderr agc_nobody roots
	[[ $stderr == *"cannot read '$DATA': Permission denied"* ]]
	assert_tree_unchanged before
}

# ---- malformed history lines ----------------------------------------------------------------

@test "R7+R8: a malformed history line naming the session is reported as residual, exit 3, and the rerun still finds it" {
	local o bad others
	o=$(new_uuid)
	mk_transcript "$S" "$CWD"
	mk_transcript "$o" "$CWD"
	mk_history_line "$o" "$CWD" "a prompt of the other session"
	mk_history_line "$S" "$CWD" "a prompt"
	# cut off mid-write: no closing brace
	bad='{"display":"my secret prompt","timestamp":1,"project":"'$CWD'","sessionId":"'$S'"'
	printf '%s\n' "$bad" >>"$C/history.jsonl"
	mk_history_line "$o" "$CWD" "another prompt of the other session"
	others=$(grep -F "\"sessionId\":\"$o\"" "$C/history.jsonl")
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg h "$C/history.jsonl" '.[0].status == "partial" and
		(.[0].residual | any(.kind == "lines" and .path == $h and (.reason | test("malformed"))))'
	assert_gone "$C/projects/$K/$S.jsonl"
	assert_exists "$C/projects/$K/$o.jsonl"
	# the other session's lines are unchanged, the malformed line stays as it was, the
	# well-formed line of the session is gone
	[ "$(grep -F "\"sessionId\":\"$o\"" "$C/history.jsonl")" = "$others" ]
	[ "$(grep -cxF -- "$bad" "$C/history.jsonl")" -eq 1 ]
	[ "$(grep -c "$S" "$C/history.jsonl")" -eq 1 ]
	# the malformed line alone still makes the session found: show lists it, purge says 3, not 5
	run -0 --separate-stderr agc --json show claude "$S"
	json_ok --arg h "$C/history.jsonl" '.[0].status == "found" and
		([.[0] | .. | objects | select(.path? == $h)] | length > 0)'
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg h "$C/history.jsonl" '.[0].status == "partial" and
		(.[0].residual | any(.kind == "lines" and .path == $h and (.reason | test("malformed"))))'
	[ "$(grep -cxF -- "$bad" "$C/history.jsonl")" -eq 1 ]
	[ "$(grep -F "\"sessionId\":\"$o\"" "$C/history.jsonl")" = "$others" ]
	# R5: a line that was read hides nothing: in-use says free, not "cannot read"
	run -0 --separate-stderr agc --json in-use claude "$S"
	json_ok '.[0].in_use == false and (.[0].holders | length == 0)'
}
