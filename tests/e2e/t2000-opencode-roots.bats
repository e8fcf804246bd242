#!/usr/bin/env bats
# R2 and "Roots and the home" for OpenCode: the data dir may itself be a link; a database or
# legacy file reached through a link is never changed through it; $OPENCODE_DB is followed for
# the caller's own home only.

load lib
load oc

setup() {
	oc_setup
	oc_fixture --seed 2041 --opencode 3 --opencode-children 1 --opencode-legacy 2
	S=$(m_pick '.parent == null and (.children | length) == 0')
	[[ -n $S ]]
}

@test "R2: the data dir itself a link (dotfiles): the purge works through it (exit 0)" {
	mkdir -p "$OUT"
	mv "$DATA" "$OUT/opencode"
	ln -s "$OUT/opencode" "$DATA"
	run -0 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "purged"'
	DB=$OUT/opencode/opencode.db assert_no_rows "$S"
	[[ -L $DATA ]]
}

@test "R2: opencode.db a link to a database elsewhere: the session is found, not changed through the link (exit 3, residual symlink)" {
	mkdir -p "$OUT"
	mv "$DB" "$OUT/opencode.db"
	ln -s "$OUT/opencode.db" "$DB"
	local real=$OUT/opencode.db
	DB=$real oc_dump_save all
	oc_snap before
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "partial" and (.[0].residual | any(.reason == "symlink"))'
	oc_assert_tree_unchanged before
	DB=$real assert_dump_same all
}

@test "R2: legacy files that are links are removed as links; what they point at stays" {
	local L f
	L=$(m_pick '.parent == null and .legacy')
	[[ -n $L ]]
	mkdir -p "$OUT"
	f=$DATA/storage/session_diff/$L.json
	[[ -f $f ]]
	mv "$f" "$OUT/diff.json"
	ln -s "$OUT/diff.json" "$f"
	mv "$DATA/storage/message/$L" "$OUT/msgdir"
	ln -s "$OUT/msgdir" "$DATA/storage/message/$L"
	snap out
	run --separate-stderr agc --json purge opencode "$L"
	[[ $status -eq 0 || $status -eq 3 ]]
	assert_gone "$f" "$DATA/storage/message/$L"
	assert_outside_unchanged out
	assert_no_rows "$L"
}

@test "Roots: \$OPENCODE_DB names the database for the own home; for another --home it is ignored" {
	local ext=$BATS_TEST_TMPDIR/elsewhere
	mkdir -p "$ext"
	mv "$DB" "$ext/custom.db"
	# another home: the default path only, where there is no database now
	mkdir -p "$BATS_TEST_TMPDIR/other"
	OPENCODE_DB=$ext/custom.db run -5 agc --home "$BATS_TEST_TMPDIR/other" purge opencode "$S"
	[[ $(DB=$ext/custom.db oc_rows session "$S") == 1 ]]
	# the own home: followed
	OPENCODE_DB=$ext/custom.db run -0 --separate-stderr agc --json purge opencode "$S"
	DB=$ext/custom.db assert_no_rows "$S"
}
