#!/usr/bin/env bats
# R4, R5, R7 for a purge of many ids in one call: history.jsonl is read once for the run and
# rewritten once for every id that went; the lines of an id in use or not in the call stay;
# a history.jsonl changed since the purge began is not rewritten; the residual is
# rediscovered after every removal of the run.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	A=$(new_uuid) B=$(new_uuid) L=$(new_uuid) X=$(new_uuid)
	mk_full_session "$A" "$CWD"
	mk_transcript "$B" "$CWD"
	mk_transcript "$L" "$CWD"
	mk_transcript "$X" "$CWD"
	mk_history_line "$A" "$CWD" "a one"
	mk_history_line "$B" "$CWD" "b one"
	mk_history_line "$L" "$CWD" "l one"
	mk_history_line "$X" "$CWD" "x one"
	mk_history_line "$A" "$CWD" "a two"
	spawn sleep 1000
	mk_registry "$LAST_PID" "$L"
}

@test "R4, R5: one rewrite for the ids that went; the lines of an id in use and of one not in the call stay" {
	run -4 --separate-stderr agc --json purge claude "$A" "$L" "$B"
	json_ok '.[0].status == "purged" and .[1].status == "in-use" and .[2].status == "purged"'
	# A's full session has two lines of its own besides these
	json_ok '(.[0].removed | map(select(.kind == "lines")) | .[0].count) == 4 and
		(.[2].removed | map(select(.kind == "lines")) | .[0].count) == 1'
	run grep -c . "$C/history.jsonl"
	[[ $output == 2 ]]
	grep -q "\"sessionId\":\"$L\"" "$C/history.jsonl"
	grep -q "\"sessionId\":\"$X\"" "$C/history.jsonl"
	! grep -qi "$A\|$B" "$C/history.jsonl"
}

@test "R4: a history.jsonl changed after the purge began is not rewritten; each id says its lines stay" {
	# the hook runs when B's transcript goes (after A's files went, before the rewrite): a
	# writer appends a line
	AGC_HOOK_UNLINKAT="$B.jsonl" AGC_HOOK_CMD="printf '%s\n' '{\"display\":\"late\",\"pastedContents\":{},\"timestamp\":1,\"project\":\"/p\",\"sessionId\":\"$X\"}' >>'$C/history.jsonl'" \
		run -3 --separate-stderr agc_faulty --json purge claude "$A" "$B"
	json_ok 'all(.[]; .status == "partial")'
	json_ok 'all(.[]; (.residual | map(select(.kind == "lines" and .reason == "in-use")) | length) == 1)'
	json_ok '(.[0].residual | map(select(.kind == "lines")) | .[0].count) == 4'
	json_ok 'all(.[]; (.removed | map(select(.kind == "lines")) | length) == 0)'
	run grep -c . "$C/history.jsonl"
	[[ $output == 8 ]]
	grep -q '"display":"late"' "$C/history.jsonl"
	assert_gone "$C/projects/$(pkey "$CWD")/$A.jsonl" "$C/projects/$(pkey "$CWD")/$B.jsonl"
}

@test "R7: the residual is rediscovered after every removal: a file of an earlier id made again shows" {
	# when B's transcript goes, A's (gone already) todo list and debug log are made again
	AGC_HOOK_UNLINKAT="$B.jsonl" AGC_HOOK_CMD="echo '[]' >'$C/todos/$A-agent-$A.json'; echo again >'$C/debug/$A.txt'" \
		run -3 --separate-stderr agc_faulty --json purge claude "$A" "$B"
	json_ok '.[0].status == "partial" and .[1].status == "purged"'
	json_ok --arg t "$C/todos/$A-agent-$A.json" --arg d "$C/debug/$A.txt" \
		'[.[0].residual[] | [.path, .reason]] | index([[$t, "error: still present"]]) != null and
		 index([[$d, "error: still present"]]) != null'
	run grep -c . "$C/history.jsonl"
	[[ $output == 2 ]]
}
