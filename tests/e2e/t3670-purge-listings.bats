#!/usr/bin/env bats
# A purge lists projects/ and each project dir once and looks only for the names a listing has
# (internals "Many ids"). A listing stands for those probes only where it is as good as they
# are (R2): a listing cut short by an error, or of a dir that may be listed but not searched,
# is not used, and what the probes would find or fail on is still found or reported.

load lib

teardown() {
	nobody_teardown
	agc_teardown
}

@test "R2: a project dir whose listing fails midway (EIO): what has a fixed name is found and removed, the dir is a residual (exit 3), a rerun finishes; one id or many" {
	local cwd k s1 s2 s3 id
	cwd=$(mk_project proj)
	k=$(pkey "$cwd")
	s1=$(new_uuid) s2=$(new_uuid) s3=$(new_uuid)
	mk_full_session "$s1" "$cwd"
	mk_full_session "$s2" "$cwd"
	mk_full_session "$s3" "$cwd"
	# reading projects/<K> fails with EIO: its fixed names are still a stat away, the names
	# only a listing finds (<id>.jsonl.compact.tmp.N, .superseded-N) are not
	AGC_FAULT_READDIR=$k run -3 --separate-stderr agc_faulty --json purge claude "$s1"
	json_ok --arg d "$C/projects/$k" '.[0].status == "partial" and
		(.[0].residual | length == 1 and .[0].path == $d and (.[0].reason | contains("cannot read dir")))'
	AGC_FAULT_READDIR=$k run -3 --separate-stderr agc_faulty --json purge claude "$s2" "$s3"
	json_ok --arg d "$C/projects/$k" 'length == 2 and all(.[]; .status == "partial" and
		(.residual | length == 1 and .[0].path == $d))'
	for id in "$s1" "$s2" "$s3"; do
		mapfile -t gone < <(grep -v -e '\.compact\.tmp\.' -e '\.superseded-' "$BATS_TEST_TMPDIR/gone.$id")
		assert_gone "${gone[@]}"
		assert_exists "$C/projects/$k/$id.jsonl.compact.tmp.1"
	done
	# the dir reads again: a rerun of many ids finishes the ids after its first (their
	# discoveries use the run's listing, which finds prefixed side files in every project
	# dir; the first id's probes look for them only next to its record, which is gone: a
	# known gap, see issue 8's note)
	run --separate-stderr agc --json purge claude "$s1" "$s2" "$s3"
	json_ok --arg a "$s2" --arg b "$s3" '[.[] | select(.id == $a or .id == $b) | .status] == ["purged", "purged"]'
	for id in "$s2" "$s3"; do
		mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$id"
		assert_gone "${gone[@]}"
	done
}

@test "R2: a project dir that may be listed but not searched (mode 0644) is a permission residual for each id, as when every name is probed" {
	local a d cwd
	nobody_setup
	cwd=$(mk_project proj)
	a=$(new_uuid) d=$(new_uuid)
	# sessions known only by their side dirs, and a project dir nobody can search
	mkdir -p "$C/file-history/$a" "$C/file-history/$d" "$C/projects/other"
	echo x >"$C/projects/other/unrelated.txt"
	nobody_own
	chmod 644 "$C/projects/other"
	# one call for both: the first id's discovery probes, the second's uses the run's
	# listings, and each says the dir it could not search
	run -3 --separate-stderr agc_nobody --json purge claude "$a" "$d"
	json_ok --arg o "$C/projects/other" 'length == 2 and all(.[]; .status == "partial" and
		(.residual | length > 0 and all(.path | startswith($o)) and all(.reason == "permission")))'
	assert_gone "$C/file-history/$a" "$C/file-history/$d"
	chmod 755 "$C/projects/other"
	[[ -f $C/projects/other/unrelated.txt ]]
}
