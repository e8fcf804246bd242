#!/usr/bin/env bats
# Purge removes every artifact of a session (SPEC promise 2, formats/claude-code.md §2) and
# nothing else (R4).

load lib

@test "R4+R7: purge removes every artifact of formats §2 in both roots and nothing else" {
	local cwd s o k shared
	cwd=$(mk_project proj)
	k=$(pkey "$cwd")
	s=$(new_uuid)
	o=$(new_uuid)
	mk_full_session "$s" "$cwd"
	mk_full_session "$o" "$cwd" $((NOW - 7200))
	# the project's auto-memory and a paste both sessions reference
	mkdir -p "$C/projects/$k/memory"
	echo '# memory' >"$C/projects/$k/memory/MEMORY.md"
	shared=$(mk_paste "text pasted in both sessions")
	mk_history_line "$s" "$cwd" "uses the shared paste" "$shared"
	mk_history_line "$o" "$cwd" "uses the shared paste too" "$shared"
	# Claude's debug/latest points at the log of the session being purged
	ln -sfn "$C/debug/$s.txt" "$C/debug/latest"
	echo "$C/debug/latest" >>"$BATS_TEST_TMPDIR/gone.$s"
	# a history line of a session of another project
	mk_history_line "$(new_uuid)" "$WORK/other" "elsewhere"
	grep -v "$s" "$C/history.jsonl" >"$BATS_TEST_TMPDIR/history.expected"
	[ "$(grep -c "$s" "$C/history.jsonl")" -eq 3 ]
	snap before

	run -0 --separate-stderr agc --json purge claude "$s"
	json_ok '.[0].status == "purged" and .[0].residual == [] and .[0].holders == []'

	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$s"
	SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "${gone[@]}"
	# history.jsonl: exactly the session's lines are gone, the rest byte for byte, mode kept
	cmp "$BATS_TEST_TMPDIR/history.expected" "$C/history.jsonl"
	[ "$(stat -c %a "$C/history.jsonl")" = 600 ]
	assert_gone "$C/history.jsonl.lock"
	# every removed path is reported
	local p
	for p in "${gone[@]}"; do
		jq -e -s --arg p "$p" '.[0].removed | map(.path) | index($p) != null' <<<"$output" >/dev/null ||
			{ echo "not reported as removed: $p" >&2; return 1; }
	done
	jq -e -s --arg h "$C/history.jsonl" '.[0].removed | map(select(.kind == "lines" and .path == $h and .count == 3)) | length == 1' <<<"$output"
	assert_exists "$C/paste-cache/$shared.txt" "$C/projects/$k/memory/MEMORY.md" "$C/projects/$k/$o.jsonl"
}

@test "R7: a purged session is gone: show and in-use then say not found (exit 5)" {
	local cwd s
	cwd=$(mk_project proj)
	s=$(new_uuid)
	mk_full_session "$s" "$cwd"
	run -0 agc purge claude "$s"
	run -5 agc show claude "$s"
	run -5 agc in-use claude "$s"
	run -5 agc purge claude "$s"
}

@test "R4: debug/latest stays when it points at another session's log" {
	local cwd s o
	cwd=$(mk_project proj)
	s=$(new_uuid)
	o=$(new_uuid)
	mk_full_session "$s" "$cwd"
	mk_full_session "$o" "$cwd"
	ln -sfn "$C/debug/$o.txt" "$C/debug/latest"
	run -0 agc purge claude "$s"
	assert_gone "$C/debug/$s.txt"
	[ "$(readlink "$C/debug/latest")" = "$C/debug/$o.txt" ]
	assert_exists "$C/debug/$o.txt"
}

@test "R4: a history.jsonl left with no lines stays, empty, with its mode" {
	local cwd s
	cwd=$(mk_project proj)
	s=$(new_uuid)
	mk_transcript "$s" "$cwd"
	mk_history_line "$s" "$cwd" "only prompt"
	chmod 640 "$C/history.jsonl"
	run -0 agc purge claude "$s"
	[ -f "$C/history.jsonl" ]
	[ ! -s "$C/history.jsonl" ]
	[ "$(stat -c %a "$C/history.jsonl")" = 640 ]
	# no temp file or lock dir left beside it
	[ "$(ls -A "$C" | grep -cE '^\.?history')" -eq 1 ]
}
