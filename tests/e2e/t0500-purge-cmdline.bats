#!/usr/bin/env bats
# R5: a process other than agentgc and its ancestors whose arguments contain the id (any
# letter case) holds the session.

load lib

mk_simple() {
	CWD=$(mk_project proj)
	S=$(new_uuid)
	mk_full_session "$S" "$CWD"
}

@test "R5: a process run with --resume <id> holds the session: exit 4, its pid on stderr" {
	mk_simple
	spawn_argv --resume "$S"
	snap before
	run -4 --separate-stderr agc purge claude "$S"
	[[ $output == *"$LAST_PID"* ]]
	# stderr names the pid and how to look for it by hand
	[[ $stderr == *"$LAST_PID"* ]]
	[[ $stderr == *"ps "* || $stderr == *"/proc/"* || $stderr == *lsof* ]]
	assert_tree_unchanged before
}

@test "R5: --resume=<id> holds the session; holder has why cmdline in JSON" {
	mk_simple
	spawn_argv "--resume=$S"
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" \
		'.[0].status == "in-use" and (.[0].holders | any(.pid == $p and .why == "cmdline" and (.command | type) == "string"))'
	run -4 --separate-stderr agc --json in-use claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].in_use == true and (.[0].holders | any(.pid == $p and .why == "cmdline"))'
	[[ $stderr == *"$LAST_PID"* ]]
	assert_tree_unchanged before
}

@test "R5: an argument holding the id in upper case holds the session" {
	mk_simple
	spawn_argv -r "$(upper "$S")"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: agentgc's own argv and its parent shell's do not count: purged, exit 0" {
	mk_simple
	# the shell stays the parent of agentgc (no exec), and its argv holds the id too
	run -0 bash -c "\"\$AGENTGC\" purge claude $S; exit \$?" "resume-$S"
	assert_gone "$C/projects/$(pkey "$CWD")/$S.jsonl" "$C/file-history/$S"
}

@test "R5: a process that names another session does not block" {
	mk_simple
	spawn_argv --resume "$(new_uuid)"
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$(pkey "$CWD")/$S.jsonl"
}

@test "R5: a process holding the id of a sub-agent's parent blocks the whole purge" {
	CWD=$(mk_project proj)
	S=$(new_uuid)
	mk_transcript "$S" "$CWD"
	mk_subagent "$S" "$CWD" >/dev/null
	spawn_argv --resume "$S"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}
