#!/usr/bin/env bats
# R1: a UUID is accepted in any letter case and canonicalised to lower case before use;
# R5: the in-use gate sees the session whatever the case it was named in.

load lib

mixed() { # every other hex letter upper-cased
	local s=$1 out= i c
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		((i % 2)) && c=${c^^}
		out+=$c
	done
	printf '%s' "$out"
}

@test "R1+R5: an upper-case UUID of a live session (registry) is refused with exit 4" {
	local cwd s
	cwd=$(mk_project proj)
	s=$(new_uuid)
	mk_full_session "$s" "$cwd"
	spawn sleep 1000
	mk_registry "$LAST_PID" "$s"
	snap before
	run -4 --separate-stderr agc --json purge claude "$(upper "$s")"
	json_ok --arg s "$s" '.[0].status == "in-use" and .[0].id == $s'
	run -4 agc purge claude "$(mixed "$s")"
	run -4 agc in-use claude "$(upper "$s")"
	assert_tree_unchanged before
}

@test "R1+R5: a mixed-case UUID of a session run with --resume <UPPER> is refused with exit 4" {
	local cwd s
	cwd=$(mk_project proj)
	s=$(new_uuid)
	mk_full_session "$s" "$cwd"
	spawn_argv --resume "$(upper "$s")"
	snap before
	run -4 agc purge claude "$(mixed "$s")"
	assert_tree_unchanged before
}

@test "R1: an upper-case UUID of a dead session purges its lower-case files (exit 0)" {
	local cwd s
	cwd=$(mk_project proj)
	s=$(new_uuid)
	mk_full_session "$s" "$cwd"
	snap before
	run -0 --separate-stderr agc --json purge claude "$(upper "$s")"
	json_ok --arg s "$s" '.[0].status == "purged" and .[0].id == $s'
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$s"
	SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "${gone[@]}"
	! grep -q "$s" "$C/history.jsonl"
}

@test "R1: a mixed-case UUID of a dead session purges it (exit 0)" {
	local cwd s
	cwd=$(mk_project proj)
	s=$(new_uuid)
	mk_full_session "$s" "$cwd"
	run -0 agc purge claude "$(mixed "$s")"
	assert_gone "$C/projects/$(pkey "$cwd")/$s.jsonl" "$C/file-history/$s" "$TU/s/$(scratch_name "$s")"
}
