#!/usr/bin/env bats
# SPEC "Exit codes": with several ids the exit code is the most severe of them, in the order
# 0 < 5 < 3 < 4 < 1; batch work goes on past a failed item. `purge auto` finds the agent.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	OK=$(new_uuid)      # purges cleanly: 0
	MISSING=$(new_uuid) # no artifact: 5
	LINKED=$(new_uuid)  # temp key dir behind a link: 3
	LIVE=$(new_uuid)    # live registry entry: 4
	mk_full_session "$OK" "$CWD"
	mk_transcript "$LIVE" "$CWD"
	spawn sleep 1000
	mk_registry "$LAST_PID" "$LIVE"
	# LINKED: its temp dir lies under a linked key dir of another project
	local lp lk
	lp=$(mk_project linked)
	lk=$(pkey "$lp")
	mk_transcript "$LINKED" "$lp"
	mkdir -p "$OUT/tk/$LINKED/tasks" "$TU"
	echo out >"$OUT/tk/$LINKED/tasks/b.output"
	ln -s "$OUT/tk" "$TU/$lk"
}

@test "exit codes: purged + not found -> 5; one JSON line per id, in order" {
	run -5 --separate-stderr agc --json purge claude "$OK" "$MISSING"
	json_ok --arg a "$OK" --arg b "$MISSING" \
		'length == 2 and .[0].id == $a and .[0].status == "purged" and .[1].id == $b and .[1].status == "not-found"'
	assert_gone "$C/projects/$K/$OK.jsonl"
}

@test "exit codes: not found + left behind -> 3, in either order" {
	run -3 agc purge claude "$MISSING" "$LINKED"
	run -3 agc purge claude "$LINKED" "$MISSING"
}

@test "exit codes: left behind + in use -> 4, in either order" {
	run -4 agc purge claude "$LINKED" "$LIVE"
	run -4 agc purge claude "$LIVE" "$LINKED"
}

@test "exit codes: in use + purged -> 4, and the free session is still purged" {
	run -4 --separate-stderr agc --json purge claude "$LIVE" "$OK"
	json_ok '.[0].status == "in-use" and .[1].status == "purged"'
	assert_gone "$C/projects/$K/$OK.jsonl"
	assert_exists "$C/projects/$K/$LIVE.jsonl"
}

@test "exit codes: all four kinds at once -> 4" {
	run -4 --separate-stderr agc --json purge claude "$MISSING" "$OK" "$LINKED" "$LIVE"
	json_ok 'map(.status) == ["not-found", "purged", "partial", "in-use"]'
}

@test "exit codes: a bad id among good ones counts as not found (5), the good one is purged" {
	run -5 agc purge claude "$OK" memory
	assert_gone "$C/projects/$K/$OK.jsonl"
}

@test "purge auto <id> finds the agent and purges (exit 0)" {
	run -0 --separate-stderr agc --json purge auto "$OK"
	json_ok --arg s "$OK" '.[0].agent == "claude" and .[0].id == $s and .[0].status == "purged"'
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$OK"
	assert_gone "${gone[@]}"
}

@test "purge auto: unknown id 5, live session 4, upper-case id purges" {
	run -5 agc purge auto "$MISSING"
	run -4 agc purge auto "$LIVE"
	run -0 agc purge auto "$(upper "$OK")"
	assert_gone "$C/projects/$K/$OK.jsonl"
}

@test "show and in-use take auto too" {
	run -0 agc show auto "$OK"
	run -0 agc in-use auto "$OK"
	run -4 agc in-use auto "$LIVE"
}
