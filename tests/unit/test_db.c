/* Unit tests of db.c: the change invariant of a purge's transaction (SPEC R4), on in-memory
 * databases. Each test builds a schema, declares the plan (rows whose key column holds 'S'),
 * runs deletes as the engine does, and asks for the verdict before any commit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"
#include "db.h"

#define IDS "[\"S\"]"
#define VALUES "SELECT value FROM json_each(?1)"

typedef struct fx {
	sqlite3 *db;
	agc_db_watch *w;
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));

	if (!f || sqlite3_open(":memory:", &f->db) != SQLITE_OK)
		return -1;
	sqlite3_extended_result_codes(f->db, 1);
	sqlite3_exec(f->db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;

	agc_db_watch_free(f->w);
	sqlite3_close(f->db);
	free(f);
	return 0;
}

static void sql(fx *f, const char *s)
{
	char *msg = NULL;
	int rc = sqlite3_exec(f->db, s, NULL, NULL, &msg);

	if (rc != SQLITE_OK)
		fail_msg("%s: %s", s, msg ? msg : "?");
}

/* Start watching, the plan being rows of table whose col holds 'S'. */
static void watch(fx *f, const char *table, const char *col)
{
	sql(f, "BEGIN IMMEDIATE");
	assert_int_equal(agc_db_watch_new(f->db, &f->w), 0);
	assert_int_equal(agc_db_watch_plan(f->w, table, col, VALUES, IDS), 0);
}

/* Run a delete; SQLITE_DONE, or SQLITE_INTERRUPT when the watch stopped it. */
static int del(fx *f, const char *s)
{
	int rc = sqlite3_exec(f->db, s, NULL, NULL, NULL);

	return rc == SQLITE_OK ? SQLITE_DONE : rc;
}

static int verdict(fx *f, const char **table)
{
	*table = NULL;
	return agc_db_watch_check(f->w, table);
}

static void test_db_watch_plain_delete_passes(void **state)
{
	fx *f = *state;
	const char *t;

	sql(f, "CREATE TABLE m(id INTEGER PRIMARY KEY, session_id TEXT); INSERT INTO m(session_id) VALUES ('S'), ('S'), ('O')");
	watch(f, "m", "session_id");
	assert_int_equal(del(f, "DELETE FROM m WHERE session_id = 'S'"), SQLITE_DONE);
	assert_int_equal(verdict(f, &t), 0);
}

static void test_db_watch_other_row_refused(void **state)
{
	fx *f = *state;
	const char *t;

	sql(f, "CREATE TABLE m(id INTEGER PRIMARY KEY, session_id TEXT); INSERT INTO m(session_id) VALUES ('S'), ('O')");
	watch(f, "m", "session_id");
	/* a delete wider than the plan (as a trigger's would be) is stopped */
	assert_int_equal(del(f, "DELETE FROM m"), SQLITE_INTERRUPT);
	assert_int_equal(verdict(f, &t), 1);
	assert_string_equal(t, "m");
}

static void test_db_watch_without_rowid_keyed_by_primary_key(void **state)
{
	fx *f = *state;
	const char *t;

	sql(f, "CREATE TABLE kv(session_id TEXT, k TEXT, v TEXT, PRIMARY KEY(k, session_id)) WITHOUT ROWID;"
	       "CREATE TABLE side(x TEXT, PRIMARY KEY(x)) WITHOUT ROWID;"
	       "CREATE TRIGGER t AFTER DELETE ON kv BEGIN INSERT INTO side VALUES (old.k); DELETE FROM side WHERE x = old.k; END;"
	       "INSERT INTO kv VALUES ('S', 'a', '1'), ('S', 'b', '2'), ('O', 'a', '3')");
	watch(f, "kv", "session_id");
	/* the trigger's row in a WITHOUT ROWID table is inserted and deleted again: nets out */
	assert_int_equal(del(f, "DELETE FROM kv WHERE session_id = 'S'"), SQLITE_DONE);
	assert_int_equal(verdict(f, &t), 0);
}

static void test_db_watch_inserted_row_left_refused(void **state)
{
	fx *f = *state;
	const char *t;

	sql(f, "CREATE TABLE m(id INTEGER PRIMARY KEY, session_id TEXT); CREATE TABLE log(x TEXT);"
	       "CREATE TRIGGER t AFTER DELETE ON m BEGIN INSERT INTO log VALUES (old.id); END;"
	       "INSERT INTO m(session_id) VALUES ('S')");
	watch(f, "m", "session_id");
	assert_int_equal(del(f, "DELETE FROM m WHERE session_id = 'S'"), SQLITE_DONE);
	assert_int_equal(verdict(f, &t), 1);
	assert_string_equal(t, "log");
}

static void test_db_watch_planned_row_moved_then_deleted(void **state)
{
	fx *f = *state;
	const char *t;

	/* a trigger that renumbers the session's own row (an UPDATE of the rowid: the old key
	 * goes, a new one comes), which the plan's delete then removes */
	sql(f, "CREATE TABLE rev(rev INTEGER PRIMARY KEY, session_id TEXT UNIQUE); CREATE TABLE q(session_id TEXT);"
	       "CREATE TRIGGER t AFTER DELETE ON q BEGIN UPDATE rev SET rev = rev + 100 WHERE session_id = old.session_id; END;"
	       "INSERT INTO rev VALUES (1, 'S'), (2, 'O'); INSERT INTO q VALUES ('S')");
	sql(f, "BEGIN IMMEDIATE");
	assert_int_equal(agc_db_watch_new(f->db, &f->w), 0);
	assert_int_equal(agc_db_watch_plan(f->w, "rev", "session_id", VALUES, IDS), 0);
	assert_int_equal(agc_db_watch_plan(f->w, "q", "session_id", VALUES, IDS), 0);
	assert_int_equal(del(f, "DELETE FROM q WHERE session_id = 'S'"), SQLITE_DONE);
	/* the moved row is there: not yet accounted for */
	assert_true(agc_db_watch_pending(f->w));
	assert_int_equal(verdict(f, &t), 1);
	assert_int_equal(del(f, "DELETE FROM rev WHERE session_id = 'S'"), SQLITE_DONE);
	assert_false(agc_db_watch_pending(f->w));
	assert_int_equal(verdict(f, &t), 0);
}

static void test_db_watch_replace_of_other_row_refused(void **state)
{
	fx *f = *state;
	const char *t;

	/* INSERT OR REPLACE in a trigger deletes a conflicting row of another session */
	sql(f, "CREATE TABLE m(id INTEGER PRIMARY KEY, session_id TEXT); CREATE TABLE u(k TEXT PRIMARY KEY, owner TEXT);"
	       "CREATE TRIGGER t AFTER DELETE ON m BEGIN INSERT OR REPLACE INTO u VALUES ('shared', old.session_id); END;"
	       "INSERT INTO m(session_id) VALUES ('S'); INSERT INTO u VALUES ('shared', 'O')");
	watch(f, "m", "session_id");
	assert_int_equal(del(f, "DELETE FROM m WHERE session_id = 'S'"), SQLITE_INTERRUPT);
	assert_int_equal(verdict(f, &t), 1);
	assert_string_equal(t, "u");
}

static void test_db_watch_nocase_twin_refused(void **state)
{
	fx *f = *state;
	const char *t;

	/* the SQL matches 's' through the column's collation; the plan is the exact value */
	sql(f, "CREATE TABLE m(session_id TEXT COLLATE NOCASE); INSERT INTO m VALUES ('S'), ('s')");
	watch(f, "m", "session_id");
	assert_int_equal(del(f, "DELETE FROM m WHERE session_id IN (SELECT value FROM json_each('[\"S\"]'))"),
			 SQLITE_INTERRUPT);
	assert_int_equal(verdict(f, &t), 1);
	assert_string_equal(t, "m");
}

static void test_db_watch_cascade_to_other_rows_refused(void **state)
{
	fx *f = *state;
	const char *t;

	sql(f, "CREATE TABLE n(id INTEGER PRIMARY KEY, session_id TEXT);"
	       "CREATE TABLE r(n_id INTEGER REFERENCES n(id) ON DELETE CASCADE, owner TEXT);"
	       "INSERT INTO n VALUES (1, 'S'); INSERT INTO r VALUES (1, 'O')");
	watch(f, "n", "session_id");
	assert_int_equal(del(f, "DELETE FROM n WHERE session_id = 'S'"), SQLITE_INTERRUPT);
	assert_int_equal(verdict(f, &t), 1);
	assert_string_equal(t, "r");
}

static void test_db_purge_needs_out(void **state)
{
	(void)state;
	/* no report to write to: an error, not a crash */
	assert_int_equal(agc_purge(NULL, "opencode", "ses_x", 0, NULL), -1);
	assert_non_null(strstr(agc_error_last(), "report"));
	assert_int_equal(agc_show(NULL, "opencode", "ses_x", NULL), -1);
	assert_int_equal(agc_in_use(NULL, "opencode", "ses_x", NULL), -1);
}

/* a flag that is not a purge flag is refused before anything, never ignored */
static void test_db_purge_unknown_flag_refused(void **state)
{
	agc_report *r = NULL;

	(void)state;
	assert_int_equal(agc_purge(NULL, "opencode", "ses_x", 1u << 20, &r), -1);
	assert_null(r);
	assert_non_null(strstr(agc_error_last(), "unknown purge flags"));
	assert_int_equal(agc_purge_many(NULL, "opencode", NULL, 0, AGC_PURGE_WITH_FORKS | (1u << 21), &r), -1);
}

static int autocheckpoint(fx *f)
{
	sqlite3_stmt *st = NULL;
	int v = -1;

	assert_int_equal(sqlite3_prepare_v2(f->db, "PRAGMA wal_autocheckpoint", -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* A purge's transaction runs without the automatic checkpoint, and gives the connection its
 * setting back after (issue 8: the WAL is checkpointed once, by the purge). */
static void test_db_autocheckpoint_off_and_restored(void **state)
{
	fx *f = *state;
	int saved = -1;

	sql(f, "PRAGMA wal_autocheckpoint=777");
	assert_int_equal(agc_db_autocheckpoint_off(f->db, &saved), 0);
	assert_int_equal(saved, 777);
	assert_int_equal(autocheckpoint(f), 0);
	assert_int_equal(agc_db_autocheckpoint_restore(f->db, saved), 0);
	assert_int_equal(autocheckpoint(f), 777);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_db_watch_plain_delete_passes),
		T(test_db_watch_other_row_refused),
		T(test_db_watch_without_rowid_keyed_by_primary_key),
		T(test_db_watch_inserted_row_left_refused),
		T(test_db_watch_planned_row_moved_then_deleted),
		T(test_db_watch_replace_of_other_row_refused),
		T(test_db_watch_nocase_twin_refused),
		T(test_db_watch_cascade_to_other_rows_refused),
		T(test_db_autocheckpoint_off_and_restored),
		cmocka_unit_test(test_db_purge_needs_out),
		cmocka_unit_test(test_db_purge_unknown_flag_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
