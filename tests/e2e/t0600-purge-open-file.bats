#!/usr/bin/env bats
# R5: a process that has one of the session's artifacts open holds the session; the gate runs
# before anything changes, so nothing is removed.

load lib

mk_simple() {
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	mk_full_session "$S" "$CWD"
}

@test "R5: a process holding the transcript open: exit 4, nothing removed" {
	mk_simple
	spawn_holding "$C/projects/$K/$S.jsonl"
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and .[0].removed == [] and (.[0].holders | any(.pid == $p and .why == "open-file"))'
	[[ $stderr == *"$LAST_PID"* ]]
	assert_tree_unchanged before
	run -4 agc in-use claude "$S"
}

@test "R5: a process holding a sub-agent transcript open: exit 4, nothing removed" {
	mk_simple
	local f
	f=$(ls "$C/projects/$K/$S/subagents/"agent-*.jsonl | head -n1)
	spawn_holding "$f"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: a background task writing its output in the temp dir holds the session: exit 4" {
	mk_simple
	local f=$TU/$K/$S/tasks/b1.output
	spawn bash -c 'exec 3>>"$1"; sleep 1000' _ "$f"
	wait_fd_open "$LAST_PID" "$f"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: a process holding a file-history backup open: exit 4" {
	mk_simple
	spawn_holding "$C/file-history/$S/0123456789abcdef@v1"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: once the holder is gone the purge goes through (exit 0)" {
	mk_simple
	spawn_holding "$C/projects/$K/$S.jsonl"
	run -4 agc purge claude "$S"
	kill -KILL "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl"
}

@test "R5: a process holding another session's transcript does not block" {
	mk_simple
	local o
	o=$(new_uuid)
	mk_transcript "$o" "$CWD"
	spawn_holding "$C/projects/$K/$o.jsonl"
	run -0 agc purge claude "$S"
	assert_exists "$C/projects/$K/$o.jsonl"
}

@test "R5: a process mapping a session file without an fd holds the session (maps are checked)" {
	mk_simple
	# a program file inside the session dir, run from there: it is mapped, not an open fd
	local exe=$C/projects/$K/$S/tool-results/prog
	mkdir -p "$(dirname "$exe")"
	cp "$(command -v sleep)" "$exe"
	spawn "$exe" 1000
	wait_exec "$LAST_PID" "$exe"
	snap before
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}
