#!/usr/bin/env bats
# The rows of a purge sized where they are deleted (SPEC "Sizes", issue 8): the purge's
# discovery only counts them; on the write connection, under its lock, each row set is summed
# just before its DELETE, so the report's bytes are those of the rows that went, every pass of
# the deletes included. bench/purge-floor.sh runs the same statements in the sqlite3 shell.

load lib
load oc

# Two roots without children: S is purged, O is another session.
pick_two() {
	mapfile -t ROOTS < <(m_sessions | jq -r 'select(.parent == null and (.children | length) == 0) | .id')
	[[ ${#ROOTS[@]} -ge 2 ]]
	S=${ROOTS[0]} O=${ROOTS[1]}
}

# "table<TAB>count<TAB>bytes" of the rows items of the last JSON report (its first line), sorted.
rows_items() {
	jq -r -s '.[0] | (.removed // .artifacts)[] | select(.kind == "rows") | "\(.table)\t\(.count)\t\(.bytes)"' <<<"$output" |
		LC_ALL=C sort
}

# An audit table keyed by the session, before message in the purge's order, and a trigger that
# adds a row there for every message deleted: the purge's second pass deletes those rows. Sets
# AUDIT to the stored size (SPEC "Sizes") of every audit row of S the purge will delete: its
# own row now and the ones the trigger will add (ids after the last one given).
audit_trigger() {
	qw "CREATE TABLE audit(id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, what TEXT);
	    INSERT INTO audit(session_id, what) VALUES ($(sqlq "$S"), 'opened'), ($(sqlq "$O"), 'opened');
	    CREATE TRIGGER log_message AFTER DELETE ON message BEGIN
	      INSERT INTO audit(session_id, what) VALUES (old.session_id, 'message ' || old.id || ' gone');
	    END;"
	NMSG=$(q "SELECT count(*) FROM message WHERE session_id = $(sqlq "$S")")
	[[ $NMSG -gt 1 ]]
	AUDIT=$(q "WITH RECURSIVE ids(i) AS (SELECT max(id) + 1 FROM audit UNION ALL SELECT i + 1 FROM ids
	             WHERE i < (SELECT max(id) FROM audit) + $NMSG)
	           SELECT (SELECT sum(length(CAST(id AS BLOB)) + length(session_id) + length(what)) FROM audit
	                   WHERE session_id = $(sqlq "$S"))
	                + (SELECT sum(length(CAST(i AS BLOB))) FROM ids)
	                + (SELECT sum(length($(sqlq "$S")) + length('message ' || id || ' gone')) FROM message
	                   WHERE session_id = $(sqlq "$S"))")
	[[ $AUDIT -gt 0 ]]
}

# What show says of S's rows, per table, before the purge.
show_rows() {
	run -0 --separate-stderr agc --json show opencode "$S"
	rows_items >"$BATS_TEST_TMPDIR/show.rows"
	[[ -s $BATS_TEST_TMPDIR/show.rows ]]
}

# The check of both ways of sizing: the report's rows per table are show's, audit's with the
# rows the trigger added (count and bytes), and the rows are gone.
assert_sized_report() {
	json_ok '.[0].status == "purged" and .[0].residual == []'
	assert_no_rows "$S"
	[[ $(q "SELECT count(*) FROM audit WHERE session_id = $(sqlq "$O")") == 1 ]]
	diff -u <(awk -F'\t' -v n="$NMSG" -v b="$AUDIT" 'BEGIN { OFS = "\t" }
		$1 == "audit" { $2 += n; $3 = b } { print }' "$BATS_TEST_TMPDIR/show.rows") <(rows_items)
}

@test "Sizes (purge): each table's bytes are the stored size of the rows deleted, rows a trigger added and the second pass deleted included; the other tables as show gives them" {
	oc_fixture --seed 2231 --opencode 3
	pick_two
	audit_trigger
	show_rows
	run -0 --separate-stderr agc --json purge opencode "$S"
	assert_sized_report
}

@test "Sizes (purge): a big session's report gives each table the bytes show gave, and the dry run the same" {
	oc_fixture --seed 2232 --opencode 4 --opencode-big-parts 300
	S=$(q "SELECT session_id FROM part GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
	[[ $(oc_rows part "$S") -ge 300 ]]
	show_rows
	run -0 --separate-stderr agc --json purge opencode "$S" --dry-run
	diff -u "$BATS_TEST_TMPDIR/show.rows" <(rows_items)
	run -0 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "purged" and .[0].residual == []'
	diff -u "$BATS_TEST_TMPDIR/show.rows" <(rows_items)
	assert_no_rows "$S"
}

@test "bench/purge-floor.sh: the sqlite3 shell's run of agentgc's statements leaves the database as agentgc's purge does, and exits 0" {
	local floor=$BATS_TEST_DIRNAME/../../bench/purge-floor.sh
	[[ -x $floor ]]
	oc_fixture --seed 2233 --opencode 4 --opencode-big-parts 200
	S=$(q "SELECT session_id FROM part GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
	cp "$DB" "$BATS_TEST_TMPDIR/floor.db"
	run -0 "$floor" "$BATS_TEST_TMPDIR/floor.db" "$S"
	[[ ! -s $BATS_TEST_TMPDIR/floor.db-wal ]]
	run -0 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "purged"'
	assert_no_rows "$S"
	diff -u <(sqlite3 -readonly -batch "$DB" .dump) <(sqlite3 -readonly -batch "$BATS_TEST_TMPDIR/floor.db" .dump)
	# bad arguments change nothing
	run -2 "$floor" "$BATS_TEST_TMPDIR/floor.db" "x'; DROP TABLE part; --"
	run -2 "$floor" "$BATS_TEST_TMPDIR/none.db" "$S"
}
