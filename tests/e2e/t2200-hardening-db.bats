#!/usr/bin/env bats
# The database write path of a purge, on generated OpenCode homes:
# R4: a transaction commits only when every row it changed is a row of the plan; the
#     database's own triggers and foreign-key actions are watched, a row inserted and deleted
#     again nets out, anything else rolls the whole purge back (refused, reason schema);
# R6: every database is write-locked before a row goes in any (BEGIN EXCLUSIVE in
#     rollback-journal mode), busy anywhere changes nothing; a report lists what really went;
#     --scrub rebuilds the databases rows were deleted from, when unheld and with room.

load lib
load oc

# The whole database as SQL (schema and every row), for before/after comparisons.
db_dump() { sqlite3 -readonly -batch "${1:-$DB}" .dump; }

# Two sessions that are not the same and not related (roots without children).
pick_two() {
	mapfile -t ROOTS < <(m_sessions | jq -r 'select(.parent == null and (.children | length) == 0) | .id')
	[[ ${#ROOTS[@]} -ge 2 ]]
	S=${ROOTS[0]} O=${ROOTS[1]}
}

@test "R4: a trigger on session that deletes other sessions' messages: refused, reason schema naming message, exit 4, nothing changed" {
	oc_fixture --seed 2201 --opencode 3
	pick_two
	[[ $(oc_rows message "$O") -gt 0 ]]
	qw "CREATE TRIGGER wipe_others AFTER DELETE ON session BEGIN
	      DELETE FROM message WHERE session_id <> old.id;
	    END;"
	db_dump >"$BATS_TEST_TMPDIR/dump.before"
	oc_snap before
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg db "$DB" '.[0].status == "refused" and
		(.[0].residual | any(.kind == "rows" and .path == $db and .reason == "schema" and .table == "message"))'
	json_ok '[.[0].removed[]] == []'
	diff -u "$BATS_TEST_TMPDIR/dump.before" <(db_dump)
	oc_assert_tree_unchanged before
	# the human report says nothing changed, and why
	run -4 --separate-stderr agc purge opencode "$S"
	[[ $output == *"nothing changed"* && $output == *schema* ]]
}

@test "R4: ON DELETE CASCADE from a row keyed by the session to rows of other sessions: refused, reason schema, nothing changed" {
	oc_fixture --seed 2202 --opencode 3
	pick_two
	# a shared table given a session_id column, and a table without one whose rows (of
	# other sessions) hang off it
	qw "CREATE TABLE note(id INTEGER PRIMARY KEY, session_id TEXT, body TEXT);
	    CREATE TABLE note_ref(id INTEGER PRIMARY KEY, note_id INTEGER REFERENCES note(id) ON DELETE CASCADE, owner TEXT);
	    INSERT INTO note VALUES (1, $(sqlq "$S"), 'a note first written in the session');
	    INSERT INTO note_ref(note_id, owner) VALUES (1, $(sqlq "$O")), (1, 'someone else');"
	db_dump >"$BATS_TEST_TMPDIR/dump.before"
	oc_snap before
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "refused" and (.[0].residual | any(.reason == "schema" and .table == "note_ref"))'
	diff -u "$BATS_TEST_TMPDIR/dump.before" <(db_dump)
	oc_assert_tree_unchanged before
}

@test "R4: ON DELETE SET NULL on rows of other sessions: refused, reason schema, nothing changed" {
	oc_fixture --seed 2202 --opencode 3
	pick_two
	qw "CREATE TABLE note(id INTEGER PRIMARY KEY, session_id TEXT, body TEXT);
	    CREATE TABLE pin(id INTEGER PRIMARY KEY, note_id INTEGER REFERENCES note(id) ON DELETE SET NULL, owner TEXT);
	    INSERT INTO note VALUES (7, $(sqlq "$S"), 'shared');
	    INSERT INTO pin(note_id, owner) VALUES (7, $(sqlq "$O"));"
	db_dump >"$BATS_TEST_TMPDIR/dump.before"
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "refused" and (.[0].residual | any(.reason == "schema" and .table == "pin"))'
	diff -u "$BATS_TEST_TMPDIR/dump.before" <(db_dump)
}

@test "R4: a row a trigger inserts and leaves behind (keyed by no session): refused, reason schema naming its table" {
	oc_fixture --seed 2203 --opencode 3
	pick_two
	qw "CREATE TABLE tombstone(id INTEGER PRIMARY KEY, what TEXT);
	    CREATE TRIGGER remember AFTER DELETE ON session BEGIN
	      INSERT INTO tombstone(what) VALUES ('gone: ' || old.title);
	    END;"
	db_dump >"$BATS_TEST_TMPDIR/dump.before"
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "refused" and (.[0].residual | any(.reason == "schema" and .table == "tombstone"))'
	diff -u "$BATS_TEST_TMPDIR/dump.before" <(db_dump)
}

@test "R4: a NOCASE key column whose other-case twin is another session's id: refused, the twin's row stays" {
	oc_fixture --seed 2204 --opencode 3
	pick_two
	# OpenCode ids are case-sensitive (R1): the twin is another session
	local T
	T=ses_$(printf '%s' "${S#ses_}" | tr 'a-zA-Z' 'A-Za-z')
	[[ $T != "$S" ]]
	oc_rename "$O" "$T"
	qw "CREATE TABLE tag(session_id TEXT COLLATE NOCASE, tag TEXT);
	    INSERT INTO tag VALUES ($(sqlq "$S"), 'mine'), ($(sqlq "$T"), 'the twin''s');"
	db_dump >"$BATS_TEST_TMPDIR/dump.before"
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "refused" and (.[0].residual | any(.reason == "schema" and .table == "tag"))'
	diff -u "$BATS_TEST_TMPDIR/dump.before" <(db_dump)
	[[ $(q "SELECT count(*) FROM tag WHERE session_id = $(sqlq "$T") COLLATE BINARY") == 1 ]]
}

@test "R4: triggers that touch only the session's own rows pass: an audit row inserted and deleted again, the session's own todo rows, a row keyed by the session that a trigger adds" {
	oc_fixture --seed 2205 --opencode 3
	pick_two
	[[ $(oc_rows todo "$S") -gt 0 ]]
	# audit is keyed by the session and comes before message in the purge's order, so the
	# rows the trigger adds there are deleted by the plan's second pass
	qw "CREATE TABLE scratch_log(id INTEGER PRIMARY KEY, what TEXT);
	    CREATE TABLE audit(id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, what TEXT);
	    INSERT INTO audit(session_id, what) VALUES ($(sqlq "$S"), 'opened'), ($(sqlq "$O"), 'opened');
	    CREATE TRIGGER log_message AFTER DELETE ON message BEGIN
	      INSERT INTO scratch_log(what) VALUES (old.id);
	      DELETE FROM scratch_log WHERE what = old.id;
	      INSERT INTO audit(session_id, what) VALUES (old.session_id, 'message ' || old.id || ' gone');
	    END;
	    CREATE TRIGGER drop_todos AFTER DELETE ON part BEGIN
	      DELETE FROM todo WHERE session_id = old.session_id;
	    END;"
	oc_dump_save others "$S"
	run -0 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "purged" and .[0].residual == []'
	assert_no_rows "$S"
	[[ $(q "SELECT count(*) FROM scratch_log") == 0 ]]
	[[ $(q "SELECT count(*) FROM audit WHERE session_id = $(sqlq "$O")") == 1 ]]
	assert_dump_same others "$S"
}

# ---- R6: every database locked first; rollback-journal mode --------------------------------

# A second store opencode-x.db holding a copy of every session (the adapter reads every
# opencode-*.db), in journal MODE.
mk_second_db() {
	X=$DATA/opencode-x.db
	qw "VACUUM INTO $(sqlq "$X")"
	sqlite3 -batch "$X" "PRAGMA journal_mode=$1;" >/dev/null
	[[ $(sqlite3 -readonly -batch "$X" 'PRAGMA journal_mode') == "$1" ]]
}

@test "R6: two databases hold the session, the rollback-journal one has a reader: refused busy before any row goes, exit 4, both unchanged; the dry run says 4 too" {
	oc_fixture --seed 2206 --opencode 3
	pick_two
	mk_second_db delete
	[[ $(DB=$X oc_rows message "$S") -gt 0 ]]
	db_dump >"$BATS_TEST_TMPDIR/dump.main"
	db_dump "$X" >"$BATS_TEST_TMPDIR/dump.x"
	# a reader in a read transaction holds the shared lock (as OpenCode's service, so that
	# the gate lets it be: the lock is what is tested)
	DB=$X spawn_sqlite opencode "BEGIN; SELECT count(*) FROM part;" -separator serve -cmd --service
	run -4 --separate-stderr agc --json purge opencode "$S" --dry-run
	json_ok --arg x "$X" '.[0].residual | any(.path == $x and .reason == "busy")'
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg x "$X" '.[0].status == "refused" and (.[0].residual | any(.path == $x and .reason == "busy"))'
	json_ok '[.[0].removed[]] == []'
	diff -u "$BATS_TEST_TMPDIR/dump.main" <(db_dump)
	diff -u "$BATS_TEST_TMPDIR/dump.x" <(db_dump "$X")
	# once the reader is gone, the purge goes through both
	kill -KILL "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	run -0 --separate-stderr agc --json purge opencode "$S"
	assert_no_rows "$S"
	DB=$X assert_no_rows "$S"
}

@test "R6+Output (promise 3): a commit that fails after another database committed: removed lists the committed rows, residual the others; exit 3; a rerun exits 0" {
	oc_fixture --seed 2207 --opencode 3
	pick_two
	mk_second_db wal
	oc_dump_save others "$S"
	AGC_FAULT_NTH=2 AGC_FAULT_CALLS=commit AGC_FAULT_HIT=$BATS_TEST_TMPDIR/hit \
		run -3 --separate-stderr agc_faulty --json purge opencode "$S"
	grep -q commit "$BATS_TEST_TMPDIR/hit"
	json_ok '.[0].status == "partial"'
	# the rows of exactly one database went, and the report says so; the other's stay, listed
	json_ok '[.[0].removed[] | select(.kind == "rows") | .path] | unique | length == 1'
	json_ok '[.[0].residual[] | select(.kind == "rows") | .path] | unique | length == 1'
	json_ok '([.[0].removed[] | select(.kind == "rows") | .path] | unique) != ([.[0].residual[] | select(.kind == "rows") | .path] | unique)'
	json_ok '[.[0].removed[] | select(.kind == "rows")] | map(.count) | add > 0'
	run -0 --separate-stderr agc --json purge opencode "$S"
	assert_no_rows "$S"
	DB=$X assert_no_rows "$S"
	assert_dump_same others "$S"
}

# ---- --scrub and --with-forks --------------------------------------------------------------

# An older copy of one of S's parts, left in the database's free pages by a writer without
# secure_delete (as the agents write); prints the marker it holds.
mk_stale_copy() {
	local m=scrub-marker-$RANDOM$RANDOM pid
	pid=$(q "SELECT id FROM part WHERE session_id = $(sqlq "$S") LIMIT 1")
	[[ -n $pid ]]
	# a long text (its copies of the marker spread over many overflow pages), then a short one:
	# the long one's pages go to the free list as they were
	qw "PRAGMA secure_delete=OFF;
	    UPDATE part SET data = json_object('type', 'text', 'text', (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100)
	      SELECT group_concat('$m ' || hex(randomblob(1000)), '') FROM c)) WHERE id = $(sqlq "$pid");
	    UPDATE part SET data = json_object('type', 'text', 'text', 'short') WHERE id = $(sqlq "$pid");" >/dev/null
	[[ $(grep_count "$m" "$DB") -gt 0 ]]
	[[ $(q "SELECT count(*) FROM part WHERE data LIKE '%$m%'") == 0 ]]
	printf '%s' "$m"
}

@test "R6 (--scrub): older copies of the session's rows in free pages are gone from the database after purge --scrub; without it they stay and the hint names compact and --scrub" {
	oc_fixture --seed 2208 --opencode 3
	pick_two
	local m
	m=$(mk_stale_copy)
	cp -a "$HOME" "$BATS_TEST_TMPDIR/home.stale"
	# without --scrub: the copy stays, and the hint says what rebuilds it
	run -0 --separate-stderr agc purge opencode "$S"
	[[ $(grep_count "$m" "$DB") -gt 0 ]]
	[[ $stderr == *"--scrub"* && $stderr == *"$DB"* && $stderr == *"'agentgc compact'"* ]]
	# with --scrub: the database is rebuilt, the copy is in neither the database nor its WAL
	rm -rf "$HOME"
	cp -a "$BATS_TEST_TMPDIR/home.stale" "$HOME"
	oc_dump_save others "$S"
	run -0 --separate-stderr agc --json purge opencode "$S" --scrub
	json_ok '.[0].status == "purged" and .[0].residual == []'
	[[ $(grep_count "$m" "$DB") == 0 ]]
	[[ $(grep_count "$m" "$DB-wal") == 0 ]]
	assert_no_rows "$S"
	assert_dump_same others "$S"
	[[ $(q 'PRAGMA integrity_check') == ok ]]
}

@test "R6 (--scrub): a database another process holds is not rebuilt: residual in-use, exit 3" {
	oc_fixture --seed 2209 --opencode 3
	pick_two
	local m
	m=$(mk_stale_copy)
	# the service holds the database (the gate exempts it; a rebuild would pull the file
	# from under it)
	spawn_sqlite opencode "SELECT count(*) FROM session;" -separator serve -cmd --service
	run -3 --separate-stderr agc --json purge opencode "$S" --scrub
	json_ok --arg db "$DB" '.[0].status == "partial" and (.[0].residual | any(.path == $db and .reason == "in-use"))'
	assert_no_rows "$S"
	[[ $(grep_count "$m" "$DB") -gt 0 ]]
}

@test "R6 (--scrub): a file system without room for a copy: not rebuilt, residual free-space, exit 3" {
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare -m --propagation private true 2>/dev/null || skip "cannot make a mount namespace here"
	oc_fixture --seed 2210 --opencode 3
	pick_two
	local size kb
	size=$(stat -c %s "$DB")
	# room for the database and what the purge writes, not for a second copy
	kb=$(((size + 262144) / 1024))
	run --separate-stderr unshare -m --propagation private bash -c '
		set -e
		cp -a "$1" "$1.save"
		mount -t tmpfs -o size='"$kb"'k tmpfs "$1"
		cp -a "$1.save/." "$1/"
		"$2" --json purge opencode "$3" --scrub
	' _ "$DATA" "$AGENTGC" "$S"
	[[ $status == 3 ]]
	json_ok --arg db "$DB" '.[0].status == "partial" and (.[0].residual | any(.path == $db and .reason == "free-space"))'
	# and stderr says what to do about it
	[[ $stderr == *"hint: there is not room to rebuild '$DB'"*"free some space"* ]]
}

@test "Commands (purge --with-forks): an agent without forks purges as without it; the help says what it does" {
	oc_fixture --seed 2211 --opencode 3
	pick_two
	run -0 --separate-stderr agc --json purge opencode "$S" --with-forks
	json_ok '.[0].status == "purged" and (.[0].forks | length) == 0'
	run -5 agc purge opencode "$S"
	run -0 --separate-stderr agc purge --help
	[[ $output == *"--with-forks"*"forks that read the session's history"* ]]
}

@test "Output: a purge that deletes no row gives no secure_delete hint, even when it leaves something (exit 3)" {
	oc_fixture --seed 2212 --opencode 3 --opencode-legacy 2
	local L f
	L=$(m_pick '.legacy and (.children | length) == 0')
	[[ -n $L ]]
	oc_delete_sessions "$L"
	# one of its legacy files cannot be removed: the report has hints to give (exit 3)
	f=$(m_get "$L" '.artifacts[]' | grep /storage/ | head -n1)
	[[ -n $f ]]
	AGC_FAULT_UNLINKAT=$(basename "$f") run -3 --separate-stderr agc_faulty purge opencode "$L"
	[[ $stderr != *secure_delete* && $stderr != *"--scrub"* ]]
}

@test "R4: a virtual table (FTS5) holding rows of the session refuses the purge, reason schema naming it, nothing changed; without rows of it the purge goes on" {
	oc_fixture --seed 2230 --opencode 3
	pick_two
	qw "CREATE VIRTUAL TABLE search USING fts5(session_id, body);
	    INSERT INTO search VALUES ($(sqlq "$S"), 'a secret the session indexed');
	    INSERT INTO search VALUES ($(sqlq "$O"), 'another session''s text');"
	db_dump >"$BATS_TEST_TMPDIR/dump.before"
	oc_snap before
	# the dry run says what the purge would: refused (R4, one answer for both)
	run -4 --separate-stderr agc --json purge --dry-run opencode "$S"
	json_ok '.[0].status == "dry-run" and (.[0].residual | any(.reason == "schema" and .table == "search"))'
	diff -u "$BATS_TEST_TMPDIR/dump.before" <(db_dump)
	# the pre-update hook does not see a virtual table: its rows cannot be checked (R4)
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg db "$DB" '.[0].status == "refused" and
		(.[0].residual | any(.kind == "rows" and .path == $db and .reason == "schema" and .table == "search"))'
	json_ok '[.[0].removed[]] == []'
	diff -u "$BATS_TEST_TMPDIR/dump.before" <(db_dump)
	oc_assert_tree_unchanged before
	# a session with no row in it is purged, and the other session's indexed row stays
	qw "DELETE FROM search WHERE session_id = $(sqlq "$S");"
	run -0 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "purged"'
	[[ $(sqlite3 -readonly "$DB" "SELECT count(*) FROM search WHERE session_id = $(sqlq "$O")") -eq 1 ]]
	[[ $(sqlite3 -readonly "$DB" "SELECT count(*) FROM session WHERE id = $(sqlq "$S")") -eq 0 ]]
}
