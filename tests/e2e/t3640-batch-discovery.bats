#!/usr/bin/env bats
# A purge of many ids lists projects/ and its dirs once per run state and walks only to what
# the listings have (issue 8). A listing is used only while its dir is as it was, and the
# residuals come from a new state made after every removal (R7): a file made for an id while
# the run goes is in that id's report (removed, or left in its residual), never unreported.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	A=$(new_uuid) B=$(new_uuid) D=$(new_uuid) E=$(new_uuid)
	# one full session (two of them would share a nested sub-agent's id: the second would be
	# purged on its own, ending the stretch), the others with a session dir or none
	mk_full_session "$A" "$CWD"
	mk_transcript "$B" "$CWD"
	mk_subagent "$B" "$CWD" >/dev/null
	mk_transcript "$D" "$CWD"
	mk_transcript "$E" "$CWD"
	# the dirs' last change well past the coarse clock's tick: their listings are kept for
	# the run (dir_get), which is what these tests are about
	sleep 0.2
}

@test "R7: a side file made for a later id after every plan and listing was made is in that id's report" {
	local side=$C/projects/$K/$E.ccr-tip.json env=$C/session-env/$E
	# when A's transcript goes (every id was discovered before), E gets a sidecar in the
	# project dir listed at the start, and a side dir
	AGC_HOOK_UNLINKAT="$A.jsonl" AGC_HOOK_CMD="echo '{}' >'$side'; mkdir -p '$env'" \
		run --separate-stderr agc_faulty --json purge claude "$A" "$D" "$B" "$E"
	local f
	for f in "$side" "$env"; do
		if [[ -e $f ]]; then
			# left: said in E's residual, and the run exits 3
			((status == 3))
			json_ok --arg id "$E" --arg f "$f" 'map(select(.id == $id))[0] |
				.status == "partial" and any(.residual[]; .path == $f)'
		else
			json_ok --arg id "$E" --arg f "$f" 'map(select(.id == $id))[0] | any(.removed[]; .path == $f)'
		fi
	done
	json_ok --arg e "$E" 'map(select(.id != $e) | .status) == ["purged", "purged", "purged"]'
}

@test "R7: a transcript made again for an earlier id of the run is in that id's residual" {
	local f=$C/projects/$K/$A.jsonl
	cp "$f" "$BATS_TEST_TMPDIR/again"
	# when E's transcript goes, A's (gone already) is written again in the same project dir
	AGC_HOOK_UNLINKAT="$E.jsonl" AGC_HOOK_CMD="cp '$BATS_TEST_TMPDIR/again' '$f'" \
		run -3 --separate-stderr agc_faulty --json purge claude "$A" "$D" "$B" "$E"
	[[ -f $f ]]
	json_ok --arg f "$f" '.[0].status == "partial" and any(.[0].residual[]; .path == $f)'
	json_ok '.[1].status == "purged" and .[2].status == "purged" and .[3].status == "purged"'
	assert_gone "$C/projects/$K/$B.jsonl" "$C/projects/$K/$D.jsonl" "$C/projects/$K/$E.jsonl"
}

@test "R4: a paste two ids of the run name stays until the second goes, and goes with it" {
	local h p
	h=$(mk_paste "shared between a and b")
	p=$C/paste-cache/$h.txt
	mk_history_line "$A" "$CWD" "a pastes" "$h"
	mk_history_line "$B" "$CWD" "b pastes" "$h"
	sleep 0.2
	run -0 --separate-stderr agc --json purge claude "$A" "$D" "$B" "$E"
	json_ok 'all(.[]; .status == "purged")'
	json_ok --arg p "$p" 'all(.[0].removed[]; .path != $p) and any(.[2].removed[]; .path == $p)'
	assert_gone "$p"
}

@test "R4: a paste that the lines of an earlier id of the run name stays when those lines stay" {
	local h p h2 p2
	h=$(mk_paste "shared between a live one and b")
	p=$C/paste-cache/$h.txt
	h2=$(mk_paste "shared between d and e")
	p2=$C/paste-cache/$h2.txt
	mk_history_line "$A" "$CWD" "a pastes" "$h"
	mk_history_line "$B" "$CWD" "b pastes" "$h"
	mk_history_line "$D" "$CWD" "d pastes" "$h2"
	mk_history_line "$E" "$CWD" "e pastes" "$h2"
	# A is live: its line stays, and so does the paste it names, though B goes after it
	spawn_argv --resume "$A"
	sleep 0.2
	run -4 --separate-stderr agc --json purge claude "$A" "$D" "$B" "$E"
	json_ok '.[0].status == "in-use" and ([.[1:][].status] | unique) == ["purged"]'
	assert_exists "$p" "$C/projects/$K/$A.jsonl"
	json_ok --arg p "$p" 'all(.[2].removed[]; .path != $p)'
	grep -q "a pastes" "$C/history.jsonl"
	! grep -q "b pastes" "$C/history.jsonl"
	# the other shared paste went with the second of its ids, in the same stretch
	json_ok --arg p "$p2" 'any(.[3].removed[]; .path == $p)'
	assert_gone "$p2"
}

@test "R4: a paste that the lines of an earlier id name stays when the rewrite of those lines is refused" {
	local h p
	h=$(mk_paste "shared between a and b")
	p=$C/paste-cache/$h.txt
	mk_history_line "$A" "$CWD" "a pastes" "$h"
	mk_history_line "$B" "$CWD" "b pastes" "$h"
	# history.jsonl held open by another process: no line of it is rewritten (R4)
	spawn_holding "$C/history.jsonl"
	sleep 0.2
	run -3 --separate-stderr agc --json purge claude "$A" "$D" "$B" "$E"
	assert_exists "$p"
	grep -q "a pastes" "$C/history.jsonl"
	json_ok --arg p "$p" 'all(.[].removed[]; .path != $p)'
}
