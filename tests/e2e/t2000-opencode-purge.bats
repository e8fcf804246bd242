#!/usr/bin/env bats
# OpenCode purge on generated homes: every row keyed by the session in every table (schema
# introspected, R8), descendants at any depth (SPEC "Relations between sessions"), the legacy
# JSON store and plan files, and nothing of any other session (R4); the report says what went
# (R7); deleted text is in neither the database nor its WAL afterwards (R6).

load lib
load oc

# The manifest's rows per table of ID and all its descendants, as {"table": count} (count > 0).
m_family_rows() {
	m_family_jq "$1" '[.[].rows | to_entries[]] | group_by(.key)
		| map({key: .[0].key, value: (map(.value) | add)}) | map(select(.value > 0)) | from_entries | tojson'
}

@test "R4+R7 (Relations): purging a parent removes every row of it, its children and grandchildren, their legacy files and plan files; other sessions keep every row and file" {
	oc_fixture --seed 2001 --opencode 4 --opencode-children 2 --opencode-legacy 3
	local P O s
	P=$(m_pick '.parent == null and .legacy and (.children | length) > 0')
	[[ -n $P ]]
	mapfile -t FAM < <(m_family "$P")
	mapfile -t ARTS < <(m_family_artifacts "$P")
	# what makes the case: grandchildren, legacy files, a plan file, rows in many tables
	[[ ${#FAM[@]} -ge 4 ]]
	(for s in "${FAM[@]:1}"; do m_get "$s" .depth; done) | awk '$1 >= 2 { g = 1 } END { exit !g }'
	printf '%s\n' "${ARTS[@]}" | grep -q '/plans/'
	printf '%s\n' "${ARTS[@]}" | grep -q '/storage/session/'
	printf '%s\n' "${ARTS[@]}" | grep -q '/storage/part/'
	assert_exists "${ARTS[@]}"
	assert_rows_as_manifest "$P"
	[[ $(m_family_rows "$P" | jq 'keys | length') -ge 8 ]]
	# an unrelated root with children of its own
	O=$(jq -r --arg p "$P" 'select(.agent == "opencode" and .parent == null and .id != $p and (.children | length) > 0) | .id' "$MAN" | head -n1)
	[[ -n $O ]]
	oc_dump_save others "${FAM[@]}"
	oc_snap before

	run -0 --separate-stderr agc --json purge opencode "$P"
	json_ok '.[0].status == "purged" and .[0].residual == []'
	json_ok --argjson k "$(jarr "${FAM[@]:1}")" '(.[0].children | sort) == ($k | sort)'
	# every table the manifest counts (and any other) has no row of the family left
	assert_no_rows "${FAM[@]}"
	# the legacy JSON files and plan files of the whole family are gone, nothing else is
	assert_gone "${ARTS[@]}"
	oc_assert_tree_minus before "${ARTS[@]}" "$DB"
	# every other session keeps every row (and the shared tables are untouched)
	assert_dump_same others "${FAM[@]}"
	[[ $(oc_rows session "$O") == 1 ]]
	# and every file the manifest keeps, the other sessions' legacy and plan files among them
	mapfile -t keep < <(jq -r --argjson f "$(jarr "${FAM[@]}")" \
		'select(.agent == "opencode" and (.id | IN($f[]) | not)) | (.keep + .artifacts)[]' "$MAN" | sort -u)
	[[ ${#keep[@]} -gt 0 ]]
	assert_exists "${keep[@]}"
}

@test "Output (promise 3): the purge report counts the rows it removed per table, as the manifest has them" {
	oc_fixture --seed 2001 --opencode 4 --opencode-children 2 --opencode-legacy 3
	local P want
	P=$(m_pick '.parent == null and (.children | length) > 0')
	want=$(m_family_rows "$P")
	run -0 --separate-stderr agc --json purge opencode "$P"
	json_ok --argjson w "$want" --arg db "$DB" \
		'[.[0].removed[] | select(.kind == "rows")] | all(.path == $db) and
		 (group_by(.table) | map({key: .[0].table, value: (map(.count) | add)}) | from_entries) == $w'
}

@test "Exit codes+R6 (purge --dry-run): discovery only; it lists the rows per table and the files, exits as the purge would, changes nothing" {
	oc_fixture --seed 2001 --opencode 4 --opencode-children 2 --opencode-legacy 3
	local P want
	P=$(m_pick '.parent == null and .legacy and (.children | length) > 0')
	mapfile -t ARTS < <(m_family_artifacts "$P")
	want=$(m_family_rows "$P")
	oc_before
	run -0 --separate-stderr agc --json purge opencode "$P" --dry-run
	json_ok '.[0].status == "dry-run"'
	json_ok --argjson w "$want" \
		'[.[0].removed[] | select(.kind == "rows")] | all(.table != null and .count > 0) and
		 (group_by(.table) | map({key: .[0].table, value: (map(.count) | add)}) | from_entries) == $w'
	json_ok --argjson a "$(jarr "${ARTS[@]}")" '[.[0].removed[] | select(.kind != "rows") | .path] as $p | $a - $p == []'
	assert_nothing_changed
}

@test "Commands (purge auto): an OpenCode id is found without naming the agent" {
	oc_fixture --seed 2001 --opencode 3 --opencode-children 1
	local P
	P=$(m_pick '.parent == null and (.children | length) > 0')
	mapfile -t FAM < <(m_family "$P")
	run -0 --separate-stderr agc --json purge auto "$P"
	json_ok --arg p "$P" '.[0].agent == "opencode" and .[0].id == $p and .[0].status == "purged"'
	assert_no_rows "${FAM[@]}"
}

@test "R4 (Relations): purging a child removes it and its descendants, never its parent or siblings" {
	oc_fixture --seed 2001 --opencode 4 --opencode-children 2 --opencode-legacy 3
	local K P
	K=$(m_pick '.depth == 1 and (.children | length) > 0')
	[[ -n $K ]]
	P=$(m_get "$K" .parent)
	mapfile -t FAM < <(m_family "$K")
	mapfile -t ARTS < <(m_family_artifacts "$K")
	oc_dump_save others "${FAM[@]}"
	oc_snap before
	run -0 --separate-stderr agc --json purge opencode "$K"
	assert_no_rows "${FAM[@]}"
	assert_dump_same others "${FAM[@]}"
	[[ $(oc_rows session "$P") == 1 ]]
	[[ ${#ARTS[@]} -eq 0 ]] || assert_gone "${ARTS[@]}"
	oc_assert_tree_minus before "${ARTS[@]}" "$DB"
}

@test "R4 (session_v2): on a 2.x database the session's session_v2, session_message and older session/message/part/todo rows all go, with every descendant" {
	oc_fixture --seed 2002 --opencode 3 --opencode-children 2 --opencode-v2
	local P M s t
	P=$(m_pick '.parent == null and (.children | length) > 1')
	[[ -n $P ]]
	mapfile -t FAM < <(m_family "$P")
	# the 2.x and the older tables hold the family
	oc_rows_of "${FAM[@]}" >"$BATS_TEST_TMPDIR/rows"
	for t in session_v2 session session_message message part todo; do
		awk -F'\t' -v t="$t" '$2 == t { n++ } END { exit !n }' "$BATS_TEST_TMPDIR/rows" ||
			{ echo "no $t rows in the family" >&2; return 1; }
	done
	[[ $(awk -F'\t' '$2 == "session_v2" && $3 == 1' "$BATS_TEST_TMPDIR/rows" | wc -l) == "${#FAM[@]}" ]]
	# a child with children of its own is on record in session_v2 only (2.x wrote it): its
	# descendants are reached through session_v2.parent_id
	M=$(jq -r --argjson f "$(jarr "${FAM[@]}")" 'select(.agent == "opencode" and (.id | IN($f[])) and .depth == 1 and (.children | length) > 0) | .id' "$MAN" | head -n1)
	[[ -n $M ]]
	qw "DELETE FROM session WHERE id = $(sqlq "$M")"
	[[ $(oc_rows session "$M") == 0 && $(oc_rows session_v2 "$M") == 1 ]]
	oc_dump_save others "${FAM[@]}"
	run -0 --separate-stderr agc --json purge opencode "$P"
	json_ok '.[0].status == "purged"'
	json_ok --argjson k "$(jarr "${FAM[@]:1}")" '(.[0].children | sort) == ($k | sort)'
	assert_no_rows "${FAM[@]}"
	assert_dump_same others "${FAM[@]}"
}

@test "R4 (session_v2): a session only in session_v2 is found and purged" {
	oc_fixture --seed 2002 --opencode 3 --opencode-v2
	local S
	S=$(m_pick '.parent == null')
	qw "DELETE FROM session WHERE id = $(sqlq "$S")"
	oc_dump_save others "$S"
	run -0 --separate-stderr agc --json purge opencode "$S"
	assert_no_rows "$S"
	assert_dump_same others "$S"
}

@test "R6: after a purge the markers of the purged sessions are in neither opencode.db nor its WAL; another session's marker is still in the database" {
	oc_fixture --seed 2003 --opencode 3 --opencode-children 2
	local P O m
	P=$(m_pick '.parent == null and (.children | length) > 0')
	O=$(jq -r --arg p "$P" 'select(.agent == "opencode" and .parent == null and .id != $p) | .id' "$MAN" | head -n1)
	mapfile -t MARK < <(m_family_jq "$P" '.[].marker')
	for m in "${MARK[@]}"; do
		[[ $(grep_count "$m" "$DB") -gt 0 ]] || { echo "marker $m not in the database before" >&2; return 1; }
	done
	run -0 --separate-stderr agc --json purge opencode "$P"
	# no sqlite3 before the greps: its close would checkpoint and delete the WAL
	for m in "${MARK[@]}"; do
		[[ $(grep_count "$m" "$DB") == 0 ]] || { echo "marker $m still in $DB" >&2; return 1; }
		[[ $(grep_count "$m" "$DB-wal") == 0 ]] || { echo "marker $m still in $DB-wal" >&2; return 1; }
	done
	[[ $(grep_count "$(m_get "$O" .marker)" "$DB") -gt 0 ]]
}

@test "R6: a WAL left by an abrupt exit, holding the session's pages: after the purge the marker is in neither file" {
	oc_fixture --seed 2003 --opencode 3
	local S m
	S=$(m_pick '.parent == null')
	m=$(m_get "$S" .marker)
	# a writer that rewrites the session's parts (copies of the marker into the WAL) and is
	# killed before it checkpoints
	spawn_sqlite sqlite3 "PRAGMA wal_autocheckpoint=0; UPDATE part SET time_updated = time_updated + 1 WHERE session_id = $(sqlq "$S");"
	local i
	for i in $(seq 1 100); do
		[[ $(grep_count "$m" "$DB-wal") -gt 0 ]] && break
		sleep 0.05
	done
	kill -KILL "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	[[ $(grep_count "$m" "$DB-wal") -gt 0 ]]
	run -0 --separate-stderr agc --json purge opencode "$S"
	[[ $(grep_count "$m" "$DB") == 0 ]]
	[[ $(grep_count "$m" "$DB-wal") == 0 ]]
	assert_no_rows "$S"
}

@test "R6+R7: a reader that keeps the WAL from being truncated (the service, exempt) leaves the WAL as residual: exit 3, status partial" {
	oc_fixture --seed 2003 --opencode 3
	local S
	S=$(m_pick '.parent == null')
	# the service, in a read transaction: the checkpoint cannot reset the WAL
	spawn_sqlite opencode "BEGIN; SELECT count(*) FROM part;" -separator serve -cmd --service
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg w "$DB-wal" '.[0].status == "partial" and (.[0].residual | any(.path == $w and .reason == "in-use"))'
	json_ok '.[0].holders == []'
}

@test "R4 (plugins): tables agentgc has never heard of, with a session_id column, lose the family's rows and keep the others" {
	oc_fixture --seed 2004 --opencode 3 --opencode-children 2
	local P K O n
	P=$(m_pick '.parent == null and (.children | length) > 0')
	K=$(m_get "$P" '.children[0]')
	O=$(jq -r --arg p "$P" 'select(.agent == "opencode" and .parent == null and .id != $p) | .id' "$MAN" | head -n1)
	mapfile -t FAM < <(m_family "$P")
	# the fixture's plugin_notes, and two tables of our own (one with a name that needs quoting,
	# one without rowid)
	qw "CREATE TABLE my_plugin(session_id TEXT, x TEXT);
	   CREATE TABLE \"plugin \"\"odd\"\" name\"(note TEXT, session_id TEXT);
	   CREATE TABLE plugin_kv(session_id TEXT NOT NULL, k TEXT NOT NULL, v TEXT, PRIMARY KEY(session_id, k)) WITHOUT ROWID;"
	for s in "$P" "$K" "$O"; do
		qw "INSERT INTO my_plugin VALUES ($(sqlq "$s"), 'a'), ($(sqlq "$s"), 'b');
		   INSERT INTO \"plugin \"\"odd\"\" name\" VALUES ('n', $(sqlq "$s"));
		   INSERT INTO plugin_kv VALUES ($(sqlq "$s"), 'k1', 'v'), ($(sqlq "$s"), 'k2', 'v');
		   INSERT INTO plugin_notes(session_id, note) VALUES ($(sqlq "$s"), 'note of ' || $(sqlq "$s"));"
	done
	oc_dump_save others "${FAM[@]}"
	run -0 --separate-stderr agc --json purge opencode "$P"
	for t in my_plugin 'plugin "odd" name' plugin_kv plugin_notes; do
		for s in "$P" "$K"; do
			[[ $(oc_rows "$t" "$s") == 0 ]] || { echo "$t keeps rows of $s" >&2; return 1; }
		done
	done
	[[ $(oc_rows my_plugin "$O") == 2 && $(oc_rows plugin_kv "$O") == 2 ]]
	[[ $(oc_rows 'plugin "odd" name' "$O") == 1 ]]
	[[ $(oc_rows plugin_notes "$O") -ge 1 ]]
	json_ok '[.[0].removed[] | select(.kind == "rows") | .table] | contains(["my_plugin", "plugin \"odd\" name", "plugin_kv", "plugin_notes"])'
	assert_no_rows "${FAM[@]}"
	assert_dump_same others "${FAM[@]}"
}

@test "R4 (legacy store): sessions only in storage/ (no row: an old store a newer OpenCode never imported) lose their JSON files and plan files, children included" {
	oc_fixture --seed 2001 --opencode 4 --opencode-children 2 --opencode-legacy 3
	local P
	P=$(m_pick '.parent == null and .legacy and (.children | length) > 0')
	mapfile -t FAM < <(m_family "$P")
	# the members with a session file in storage/ (a member without one is, once its rows are
	# gone, on record nowhere: its plan file cannot be told from any other and stays)
	mapfile -t LEG < <(m_family_jq "$P" '.[] | select(.legacy) | .id')
	mapfile -t ARTS < <(m_family_jq "$P" '.[] | select(.legacy) | .artifacts[]')
	[[ ${#LEG[@]} -ge 2 ]]
	# the family's rows are gone from the database; its files stay
	oc_delete_sessions "${FAM[@]}"
	printf '%s\n' "${ARTS[@]}" | grep -q '/plans/'
	assert_exists "${ARTS[@]}"
	oc_snap before
	run -0 --separate-stderr agc --json purge opencode "$P"
	json_ok '.[0].status == "purged"'
	mapfile -t LEGK < <(m_family_jq "$P" '.[] | select(.legacy and .id != $id) | .id')
	json_ok --argjson k "$(jarr "${LEGK[@]}")" '(.[0].children | sort) == ($k | sort)'
	assert_gone "${ARTS[@]}"
	oc_assert_tree_minus before "${ARTS[@]}" "$DB"
}

@test "R4: a git project's plan file in <worktree>/.opencode/plans goes with its session; another session's plan there stays" {
	oc_fixture --seed 2005 --opencode 4
	local S O W s c g
	mapfile -t R < <(m_sessions | jq -r 'select(.parent == null) | .id')
	S=${R[0]} O=${R[1]}
	W=$WORK/repo
	mkdir -p "$W/.opencode/plans"
	qw "INSERT INTO project(id, worktree, vcs, name, time_created, time_updated, sandboxes)
	    VALUES ('test-project', $(sqlq "$W"), 'git', 'repo', 1, 1, '[]');
	    UPDATE session SET project_id = 'test-project', directory = $(sqlq "$W") WHERE id IN ($(sqlq "$S"), $(sqlq "$O"));"
	for s in "$S" "$O"; do
		c=$(q "SELECT time_created FROM session WHERE id = $(sqlq "$s")")
		g=$(q "SELECT slug FROM session WHERE id = $(sqlq "$s")")
		echo "# plan of $s" >"$W/.opencode/plans/$c-$g.md"
		printf '%s\n' "$W/.opencode/plans/$c-$g.md" >"$BATS_TEST_TMPDIR/plan.$s"
	done
	echo 'notes' >"$W/.opencode/plans/README.md"
	oc_snap before
	run -0 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "purged"'
	assert_gone "$(cat "$BATS_TEST_TMPDIR/plan.$S")"
	assert_exists "$(cat "$BATS_TEST_TMPDIR/plan.$O")" "$W/.opencode/plans/README.md"
	oc_assert_tree_minus before "$(cat "$BATS_TEST_TMPDIR/plan.$S")" "$DB"
}

@test "R7: a child still on record after a purge is in the residual with reason child and its id; a rerun finishes" {
	oc_fixture --opencode 4 --opencode-children 2 --opencode-legacy 5 --seed 2001
	local p c
	p=$(m_pick '.legacy == true and .parent == null and (.children | length) > 0')
	c=$(m_get "$p" '.children[0]')
	# the child's legacy session file cannot be removed: it stays on record through parentID
	AGC_FAULT_UNLINKAT="$c.json" run -3 --separate-stderr agc_faulty --json purge opencode "$p"
	json_ok --arg c "$c" '.[0].status == "partial" and (.[0].residual | any(.reason == "child" and .session == $c))'
	run -0 --separate-stderr agc --json purge opencode "$p"
	json_ok '.[0].status == "purged" and .[0].residual == []'
	run -5 agc purge opencode "$c"
}
