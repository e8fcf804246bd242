#!/usr/bin/env bats
# R1 and R8 for OpenCode: an id outside `ses_[A-Za-z0-9_]{1,64}` yields no path and no query:
# purge reports it not found (exit 5) and touches nothing, even where rows and files under
# that very name exist; ids are case-sensitive and matched exactly (no LIKE, no prefix); a
# database that is not SQLite is an error that changes nothing.

load lib
load oc

# A home with five root sessions renamed to ids chosen for the test: ses_abc, its prefix twin
# ses_abcd, its case twin ses_ABC, and two names outside the grammar that have rows and files
# all the same: "ses_a/b" and "SES_abc". Legacy files are planted where a path built from a
# bad id would lead.
mk_named_home() {
	oc_fixture --seed 2021 --opencode 6
	mapfile -t ROOTS < <(m_sessions | jq -r 'select(.parent == null) | .id')
	[[ ${#ROOTS[@]} -ge 6 ]]
	oc_rename "${ROOTS[0]}" ses_abc
	oc_rename "${ROOTS[1]}" ses_abcd
	oc_rename "${ROOTS[2]}" ses_ABC
	oc_rename "${ROOTS[3]}" 'ses_a/b'
	oc_rename "${ROOTS[4]}" SES_abc
	OTHER=${ROOTS[5]}
	local st=$DATA/storage
	mkdir -p "$st/session_diff/ses_a" "$st/message/ses_abcd"
	echo '[]' >"$st/session_diff/ses_a/b.json"  # session_diff/<"ses_a/b">.json
	echo '[]' >"$st/x.json"                      # session_diff/<"../x">.json
	echo '[]' >"$st/session_diff/ses_.json"      # an id "ses_" would name
	echo '[]' >"$st/session_diff/.json"          # an empty id would name
	echo '[]' >"$st/session_diff/SES_abc.json"
	echo '[]' >"$st/session_diff/ses_ABC.json"
	echo '[]' >"$st/session_diff/ses_abcd.json"
	echo '[]' >"$st/session_diff/ses_abc.json"
	echo '{}' >"$st/message/ses_abcd/msg_1.json"
	[[ $(oc_rows session ses_abc) == 1 && $(oc_rows session 'ses_a/b') == 1 && $(oc_rows session SES_abc) == 1 ]]
}

@test "R1: ids outside the grammar give exit 5 and touch nothing, though rows and files under those names exist" {
	mk_named_home
	oc_before
	local id
	for id in "" "ses_" "ses_a/b" "../x" "SES_abc" "ses_abc/" "ses_abc/../ses_abcd" "ses_abc " " ses_abc" \
		$'ses_abc\n' "ses_ab%" "ses_ab*" "ses_abc' OR '1'='1" "ses_a-b" "ses_é" "sesabc" \
		"ses_$(printf 'a%.0s' {1..65})" "$(printf 'ses_abc\x01')"; do
		run -5 --separate-stderr agc --json purge opencode "$id"
		json_ok '.[0].status == "not-found" and .[0].removed == []' ||
			{ echo "id: [$id]" >&2; return 1; }
		run -5 agc in-use opencode "$id"
		oc_assert_tree_unchanged all || { echo "after id [$id]" >&2; return 1; }
	done
	# --dry-run and auto say the same
	run -5 agc purge opencode 'ses_a/b' --dry-run
	run -5 agc purge auto 'ses_a/b'
	run -5 agc purge auto SES_abc
	assert_nothing_changed
}

@test "R1: ids are case-sensitive and exact: an id differing in case or by a wildcard is not found" {
	mk_named_home
	oc_before
	local id
	# valid ids that match no session exactly, though they would under case folding, LIKE
	# ('_' or '%' as wildcards) or a prefix match
	for id in ses_aBc ses_Abc ses_ab_ ses_a_c ses_ab ses_abC ses_abcD; do
		run -5 --separate-stderr agc --json purge opencode "$id"
		json_ok '.[0].status == "not-found"' || { echo "id: [$id]" >&2; return 1; }
		oc_assert_tree_unchanged all || { echo "after id [$id]" >&2; return 1; }
	done
	assert_nothing_changed
}

@test "R1+R4: purging ses_abc leaves its case twin ses_ABC, its prefix twin ses_abcd and the look-alikes every row and file" {
	mk_named_home
	oc_dump_save others ses_abc
	oc_snap before
	run -0 --separate-stderr agc --json purge opencode ses_abc
	json_ok '.[0].status == "purged" and .[0].children == []'
	assert_no_rows ses_abc
	assert_dump_same others ses_abc
	oc_assert_tree_minus before "$DATA/storage/session_diff/ses_abc.json" "$DB"
	# and the twins are still sessions agentgc finds
	# (its planted message file "{}" names no session: it would be left and said, R7)
	run -3 agc purge opencode ses_abcd --dry-run
	run -0 agc purge opencode ses_ABC --dry-run
}

@test "R1: an existing id given in another letter case is not found (OpenCode ids are used as given)" {
	oc_fixture --seed 2022 --opencode 2
	local S U
	S=$(m_pick '.parent == null')
	# the same id with the case of every letter after ses_ swapped
	U=ses_$(printf '%s' "${S#ses_}" | tr 'a-zA-Z' 'A-Za-z')
	[[ $U != "$S" ]]
	oc_before
	run -5 --separate-stderr agc --json purge opencode "$U"
	run -5 agc purge opencode "${S^^}"
	run -5 agc in-use opencode "$U"
	assert_nothing_changed
	run -0 agc purge opencode "$S"
}

@test "R8: opencode.db full of random bytes: exit 1, the message names the file, nothing changed" {
	oc_fixture --seed 2023 --opencode 3 --opencode-children 1 --opencode-legacy 2
	local S
	S=$(m_pick '.parent == null and .legacy')
	[[ -n $S ]]
	head -c 65536 /dev/urandom >"$DB"
	oc_snap all
	run -1 --separate-stderr agc purge opencode "$S"
	[[ $stderr == *opencode.db* ]]
	oc_assert_tree_unchanged all
	run -1 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "error" and (.[0].error | contains("opencode.db")) and .[0].removed == []'
	oc_assert_tree_unchanged all
	run -1 --separate-stderr agc in-use opencode "$S"
	oc_assert_tree_unchanged all
}

@test "R8: opencode.db that is a text file: exit 1, the message names the file, nothing changed (the legacy files stay too)" {
	oc_fixture --seed 2023 --opencode 3 --opencode-children 1 --opencode-legacy 2
	local S
	S=$(m_pick '.parent == null and .legacy')
	mapfile -t ARTS < <(m_family_artifacts "$S")
	[[ ${#ARTS[@]} -gt 0 ]]
	printf 'this is not a database\n%.0s' {1..200} >"$DB"
	oc_snap all
	run -1 --separate-stderr agc purge opencode "$S"
	[[ $stderr == *opencode.db* ]]
	oc_assert_tree_unchanged all
	assert_exists "${ARTS[@]}"
	run -1 --separate-stderr agc purge opencode "$S" --dry-run
	oc_assert_tree_unchanged all
}

@test "R8: a truncated opencode.db (half of it): exit 1, nothing changed" {
	oc_fixture --seed 2023 --opencode 3 --opencode-children 1
	local S size
	S=$(m_pick '.parent == null and (.children | length) > 0')
	size=$(stat -c %s "$DB")
	truncate -s $((size / 2)) "$DB"
	oc_snap all
	run -1 --separate-stderr agc purge opencode "$S"
	[[ $stderr == *opencode.db* ]]
	oc_assert_tree_unchanged all
}
