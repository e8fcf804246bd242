#!/usr/bin/env bats
# R1: an id outside Claude's grammar (a canonical UUID, any letter case) yields no path: purge
# reports it not found (exit 5) and removes nothing, even where files of that name exist.

load lib

# A home where every bad id below would hit something if it were joined into a path.
mk_bait() {
	local cwd k n
	cwd=$(mk_project proj)
	k=$(pkey "$cwd")
	S=$(new_uuid)
	mk_full_session "$S" "$cwd"
	mkdir -p "$C/projects/$k/memory" "$C/projects/$k/notes" "$C/projects/$k/uuid-c"
	echo '# memory' >"$C/projects/$k/memory/MEMORY.md"
	for n in memory notes uuid-c; do
		echo '{"type":"user","sessionId":"'$n'","cwd":"'"$cwd"'"}' >"$C/projects/$k/$n.jsonl"
		mkdir -p "$C/file-history/$n" "$C/session-env/$n" "$C/tasks/$n" "$TU/$k/$n"
		echo x >"$C/file-history/$n/0123456789abcdef@v1"
		mk_history_line "$n" "$cwd" "line of $n"
	done
	# what "../x" and ".." would reach from projects/<K>/, file-history/, the temp key dir
	echo '{}' >"$C/projects/x.jsonl"
	mkdir -p "$C/x" "$TU/x" "$C/projects/x"
	echo x >"$C/x/keep"
	echo '{"display":"empty id","timestamp":1,"project":"'"$cwd"'","sessionId":""}' >>"$C/history.jsonl"
}

@test "R1: ids that are not UUIDs (memory, notes, uuid-c, ../x, empty) give exit 5 and remove nothing" {
	mk_bait
	snap before
	local id
	for id in memory notes uuid-c ../x ""; do
		run -5 --separate-stderr agc --json purge claude "$id"
		json_ok '.[0].status == "not-found" and .[0].removed == []'
		assert_tree_unchanged before
	done
}

@test "R1: malformed UUIDs and ids with path bytes are not found and remove nothing" {
	mk_bait
	snap before
	local id bad=(
		".." "." "/" "*" "$S/" "/$S" "$S/../../x" "../$S" " $S" "$S " "{$S}" "${S//-/}"
		"${S:0:35}" "${S}0" "${S:0:35}g" "${S:0:8}_${S:9}" "$S"$'\n' $'\t'"$S" "$S.jsonl"
	)
	for id in "${bad[@]}"; do
		run -5 agc purge claude -- "$id"
		assert_tree_unchanged before
	done
	# all of them at once: still exit 5, still nothing removed
	run -5 agc purge claude -- "${bad[@]}" memory notes uuid-c ../x ""
	assert_tree_unchanged before
}

@test "R1: show and in-use of an id that is not a UUID exit 5" {
	mk_bait
	snap before
	local id
	for id in memory notes uuid-c ../x ""; do
		run -5 agc show claude "$id"
		run -5 agc in-use claude "$id"
		run -5 agc purge auto "$id"
	done
	assert_tree_unchanged before
}

@test "R1: purge --dry-run of a bad id exits 5 too" {
	mk_bait
	snap before
	run -5 --separate-stderr agc --json purge claude memory --dry-run
	json_ok '.[0].status == "not-found"'
	assert_tree_unchanged before
}
