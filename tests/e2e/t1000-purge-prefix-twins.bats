#!/usr/bin/env bats
# R4: only the named session's artifacts go; a name that merely starts with the id (a prefix
# twin) is another artifact and survives.

load lib

@test "R4: prefix twins of the id survive (<S>x.jsonl, <S>-old/, file-history/<S>-old/, debug/<S>x.txt, ...)" {
	local cwd k s t twins
	cwd=$(mk_project proj)
	k=$(pkey "$cwd")
	s=$(new_uuid)
	mk_full_session "$s" "$cwd"
	twins=(
		"$C/projects/$k/${s}x.jsonl"
		"$C/projects/$k/$s.jsonl.bak"
		"$C/projects/$k/$s.jsonlx"
		"$C/projects/$k/$s-old/subagents/agent-a0000000000000001.jsonl"
		"$C/projects/$k/$s.ccr-tip.json.old"
		"$C/file-history/$s-old/0123456789abcdef@v1"
		"$C/session-env/${s}x/hook.sh"
		"$C/tasks/$s.bak/1.json"
		"$C/image-cache/$s-old/1.png"
		"$C/uploads/${s}0/f.txt"
		"$C/jobs/$s-old/state.json"
		"$C/debug/${s}x.txt"
		"$C/debug/$s.txt.old"
		"$C/todos/${s}x-agent-$s.json"
		"$C/todos/$s-agentx.json"
		"$C/telemetry/1p_failed_events.${s}x.$(new_uuid).json"
		"$TU/$k/$s-old/tasks/b1.output"
		"$TU/$k/${s}x/started/.keep"
	)
	for t in "${twins[@]}"; do
		mkdir -p "$(dirname "$t")"
		echo "twin" >"$t"
	done
	mkdir -p "$TU/s/$(scratch_name "$s")x"
	snap before
	run -0 agc purge claude "$s"
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$s"
	SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "${gone[@]}"
	assert_exists "${twins[@]}"
}

@test "R4: a session whose id shares all but the last digit with the purged one survives whole" {
	local cwd s o
	cwd=$(mk_project proj)
	s=$(new_uuid)
	o=${s:0:35}$([[ ${s:35:1} == 0 ]] && echo 1 || echo 0)
	mk_full_session "$s" "$cwd"
	mk_full_session "$o" "$cwd"
	grep -v "\"sessionId\":\"$s\"" "$C/history.jsonl" >"$BATS_TEST_TMPDIR/expected"
	snap before
	run -0 agc purge claude "$s"
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$s"
	SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "${gone[@]}"
	cmp "$BATS_TEST_TMPDIR/expected" "$C/history.jsonl"
	[ "$(grep -c "$o" "$C/history.jsonl")" -eq 2 ]
}

@test "R4: the project's memory/ dir and another session of the project survive" {
	local cwd k s o
	cwd=$(mk_project proj)
	k=$(pkey "$cwd")
	s=$(new_uuid)
	o=$(new_uuid)
	mk_transcript "$s" "$cwd"
	mk_transcript "$o" "$cwd"
	mkdir -p "$C/projects/$k/memory"
	echo '# memory' >"$C/projects/$k/memory/MEMORY.md"
	run -0 agc purge claude "$s"
	assert_exists "$C/projects/$k/memory/MEMORY.md" "$C/projects/$k/$o.jsonl"
	assert_gone "$C/projects/$k/$s.jsonl"
	# the project dir itself stays
	[ -d "$C/projects/$k" ]
}
