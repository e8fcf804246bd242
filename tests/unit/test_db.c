/* Unit tests of db.c: the change invariant of a purge's transaction (SPEC R4), on in-memory
 * databases. Each test builds a schema, declares the plan (rows whose key column holds 'S'),
 * runs deletes as the engine does, and asks for the verdict before any commit. The tests of
 * databases on disk (opens, the busy probe) work in a fresh directory under $TMPDIR
 * (agc_test.h). */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

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

/* ---- databases on disk ----------------------------------------------------------------- */

static int setup_dir(void **state)
{
	(void)state;
	return t_setup_dir("db");
}

static int teardown_dir(void **state)
{
	(void)state;
	return t_teardown_dir();
}

/* A database file rel made with sql (journal mode WAL when wal). */
static void make_db(const char *rel, bool wal, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(t_path(rel), &db), SQLITE_OK);
	if (wal)
		assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg ? msg : "?");
	sqlite3_close(db);
}

/* R8: a file that is not SQLite is refused at the open with a clear error naming it, read-only
 * and read-write, and is left as it was; a missing file is never created; a symlink is never
 * opened for writing. */
static void test_db_open_not_sqlite(void **state)
{
	static const char junk[] = "this is not a database, just text that is long enough......."
				   "...............................................................";
	sqlite3 *db = NULL;
	char *back;

	(void)state;
	t_writes("junk.db", junk);
	assert_int_equal(agc_db_open_ro(t_path("junk.db"), &db), -1);
	assert_null(db);
	assert_non_null(strstr(agc_error_last(), "junk.db"));
	assert_non_null(strstr(agc_error_last(), "not a database"));
	assert_int_equal(agc_db_open_rw(t_path("junk.db"), &db), -1);
	assert_null(db);
	back = t_read("junk.db", NULL);
	assert_string_equal(back, junk);
	free(back);

	assert_true(agc_db_open_ro(t_path("none.db"), &db) < 0);
	assert_true(agc_db_open_rw(t_path("none.db"), &db) < 0);
	assert_false(t_exists("none.db"));

	/* R2: discovery may read through a link, a purge never writes through one */
	make_db("real.db", false, "CREATE TABLE t(a)");
	t_symlink("real.db", "link.db");
	assert_true(agc_db_open_rw(t_path("link.db"), &db) < 0);
	assert_null(db);
	assert_int_equal(agc_db_open_ro(t_path("link.db"), &db), 0);
	sqlite3_close(db);
	assert_int_equal(agc_db_open_rw(t_path("real.db"), &db), 0);
	sqlite3_close(db);
}

/* The dry run's probe (R6): free when nobody writes; busy when another connection holds the
 * write lock, in WAL mode, and in rollback-journal mode also when another only reads (the
 * purge's BEGIN EXCLUSIVE would wait); it creates no -wal or -shm file. */
static void busy_probe(bool wal)
{
	sqlite3 *other = NULL;
	sqlite3_stmt *st = NULL;

	make_db("p.db", wal, "CREATE TABLE t(a); INSERT INTO t VALUES(1),(2)");
	assert_int_equal(agc_db_write_busy(t_path("p.db")), 0);
	assert_false(t_exists("p.db-wal"));
	assert_false(t_exists("p.db-shm"));

	assert_int_equal(sqlite3_open(t_path("p.db"), &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(agc_db_write_busy(t_path("p.db")), 1);
	assert_int_equal(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(agc_db_write_busy(t_path("p.db")), 0);

	/* a reader in the middle of a statement holds a shared lock */
	assert_int_equal(sqlite3_prepare_v2(other, "SELECT a FROM t", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(agc_db_write_busy(t_path("p.db")), wal ? 0 : 1);
	sqlite3_finalize(st);
	sqlite3_close(other);
	assert_int_equal(agc_db_write_busy(t_path("p.db")), 0);
	assert_int_equal(agc_db_write_busy(t_path("none.db")), -1);
}

static void test_db_write_busy_wal(void **state)
{
	(void)state;
	busy_probe(true);
}

static void test_db_write_busy_rollback(void **state)
{
	(void)state;
	busy_probe(false);
}

/* agc_db_ident: one identifier whatever the name holds (quotes doubled), so a hostile table or
 * column name from a database's schema never becomes SQL. */
static void test_db_ident_hostile(void **state)
{
	fx *f = *state;
	char *q = agc_db_ident("a\"b");
	char *bad = agc_db_ident("x\"; DROP TABLE keep; --");
	char *s;

	assert_string_equal(q, "\"a\"\"b\"");
	assert_string_equal(bad, "\"x\"\"; DROP TABLE keep; --\"");
	sql(f, "CREATE TABLE keep(a); INSERT INTO keep VALUES(1)");
	s = malloc(strlen(bad) + 64);
	assert_non_null(s);
	sprintf(s, "CREATE TABLE %s(v)", bad);
	sql(f, s);
	sprintf(s, "DELETE FROM %s", bad);
	sql(f, s);
	assert_true(agc_db_has_column(f->db, "keep", "a"));
	assert_true(agc_db_has_column(f->db, "x\"; DROP TABLE keep; --", "v"));
	free(s);
	free(q);
	free(bad);
}

/* SPEC "Sizes": a row's stored size is the bytes of its column values (text and blob lengths,
 * a number's text, NULL 0), for any column names, with an alias when given. */
static void test_db_row_size_sql(void **state)
{
	fx *f = *state;
	sqlite3_stmt *st = NULL;
	char *e, *q;

	sql(f, "CREATE TABLE \"we\"\"ird\"(\"na me\" TEXT, b BLOB, n INTEGER, z)");
	sql(f, "INSERT INTO \"we\"\"ird\" VALUES('hello', x'010203', 12345, NULL)");
	e = agc_db_row_size_sql(f->db, "we\"ird", NULL);
	assert_non_null(e);
	q = malloc(strlen(e) + 64);
	assert_non_null(q);
	sprintf(q, "SELECT %s FROM \"we\"\"ird\"", e);
	assert_int_equal(sqlite3_prepare_v2(f->db, q, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 5 + 3 + 5 + 0);
	sqlite3_finalize(st);
	free(e);
	free(q);

	e = agc_db_row_size_sql(f->db, "we\"ird", "r");
	assert_non_null(e);
	assert_non_null(strstr(e, "\"r\".\"na me\""));
	q = malloc(strlen(e) + 64);
	assert_non_null(q);
	sprintf(q, "SELECT %s FROM \"we\"\"ird\" AS r", e);
	assert_int_equal(sqlite3_prepare_v2(f->db, q, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 13);
	sqlite3_finalize(st);
	free(e);
	free(q);
}

/* agc_db_open_peek reads a session's own store without changing it: a WAL-mode database with no
 * WAL is read immutable (no -wal or -shm made beside it); one whose pages are still in its WAL
 * is read through it; a FIFO in the WAL's place is never opened (R8); a file that is not
 * SQLite is an error naming it, not its URI. */
static void test_db_open_peek(void **state)
{
	sqlite3 *db = NULL, *w = NULL;
	sqlite3_stmt *st = NULL;
	char *uri;

	(void)state;
	make_db("s.db", true, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES('0', 'v')");
	assert_false(t_exists("s.db-wal"));
	assert_int_equal(agc_db_open_peek(t_path("s.db"), &db), 0);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM meta", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "v");
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_false(t_exists("s.db-wal"));
	assert_false(t_exists("s.db-shm"));

	/* a writer keeps its pages in the WAL: read through it */
	assert_int_equal(sqlite3_open(t_path("s.db"), &w), SQLITE_OK);
	assert_int_equal(sqlite3_exec(w, "PRAGMA wal_autocheckpoint=0; UPDATE meta SET value = 'new'", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_true(t_exists("s.db-wal"));
	assert_int_equal(agc_db_open_peek(t_path("s.db"), &db), 0);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM meta", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "new");
	sqlite3_finalize(st);
	sqlite3_close(db);
	sqlite3_close(w);

	/* R8: a FIFO where the WAL would be is never opened, whichever way the store is read */
	assert_false(t_exists("s.db-wal"));
	assert_int_equal(mkfifo(t_path("s.db-wal"), 0600), 0);
	db = NULL;
	assert_int_equal(agc_db_open_peek(t_path("s.db"), &db), -1);
	assert_null(db);
	assert_non_null(strstr(agc_error_last(), "FIFO"));
	unlink(t_path("s.db-wal"));

	t_writes("junk.db", "this is not a database, just text that is long enough for a header..........");
	assert_int_equal(agc_db_open_peek(t_path("junk.db"), &db), -1);
	assert_non_null(strstr(agc_error_last(), "not a database"));
	assert_null(strstr(agc_error_last(), "file:"));

	/* a name with characters a URI must escape */
	make_db("a b%3F#.db", true, "CREATE TABLE t(a)");
	assert_int_equal(agc_db_open_peek(t_path("a b%3F#.db"), &db), 0);
	sqlite3_close(db);
	assert_false(t_exists("a b%3F#.db-wal"));
	uri = agc_db_uri_immutable("/x/a b%.db");
	assert_string_equal(uri, "file:/x/a%20b%25.db?immutable=1");
	free(uri);
}

/* agc_db_open_snapshot: a store whose pages are in its WAL is read from a private copy, so not
 * a byte of it, its WAL or its -shm changes (a reader writes its marks into the -shm), and the
 * copy is gone after agc_db_close_snapshot; without such a WAL it is read in place, as it is. */
/* R2: agc_db_verify_open tells the files a connection opened by path from the ones checked: a
 * dir swapped for a link before SQLite opened the path makes it open another tree's database
 * (and its -wal, -shm), which the check finds; the checked files pass. */
static void test_db_verify_open(void **state)
{
	sqlite3 *db = NULL;
	agc_fdset before;
	struct stat want, other;
	int dfd;

	(void)state;
	t_mkdir("real");
	t_mkdir("outside");
	make_db("real/t.db", true, "CREATE TABLE x(a); INSERT INTO x VALUES(1)");
	make_db("outside/t.db", true, "CREATE TABLE x(a); INSERT INTO x VALUES(2)");
	assert_int_equal(stat(t_path("real/t.db"), &want), 0);
	assert_int_equal(stat(t_path("outside/t.db"), &other), 0);
	dfd = open(t_path("real"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	/* the one checked: its file, its -wal and -shm in the dir walked to */
	assert_int_equal(agc_fdset_take(&before), 0);
	assert_int_equal(agc_db_open_rw(t_path("real/t.db"), &db), 0);
	assert_int_equal(agc_db_exec(db, "BEGIN IMMEDIATE"), 0);
	assert_int_equal(agc_db_verify_open(&before, dfd, "t.db", &want, "real/t.db"), 0);
	agc_db_exec(db, "ROLLBACK");
	sqlite3_close(db);
	agc_fdset_release(&before);
	/* the path led elsewhere when SQLite opened it: the other tree's file, of the same name */
	assert_int_equal(agc_fdset_take(&before), 0);
	assert_int_equal(agc_db_open_rw(t_path("outside/t.db"), &db), 0);
	assert_int_equal(agc_db_exec(db, "BEGIN IMMEDIATE"), 0);
	assert_int_equal(agc_db_verify_open(&before, dfd, "t.db", &want, "real/t.db"), -1);
	assert_non_null(strstr(agc_error_last(), "was not the file that was checked"));
	/* its own file, but a -wal of another dir: found too */
	assert_int_equal(agc_db_verify_open(&before, dfd, "t.db", &other, "real/t.db"), -1);
	agc_db_exec(db, "ROLLBACK");
	sqlite3_close(db);
	agc_fdset_release(&before);
	close(dfd);
}

static void test_db_open_snapshot(void **state)
{
	sqlite3 *db = NULL, *w = NULL;
	sqlite3_stmt *st = NULL;
	char *before[3], *after;
	size_t blen[3];
	static const char *const f[] = {"s.db", "s.db-wal", "s.db-shm"};
	const char *tmp = getenv("TMPDIR");
	char pattern[4096];
	size_t i;
	DIR *d;
	struct dirent *e;

	(void)state;
	make_db("s.db", true, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES('0', 'v')");
	assert_int_equal(sqlite3_open(t_path("s.db"), &w), SQLITE_OK);
	assert_int_equal(sqlite3_exec(w, "PRAGMA wal_autocheckpoint=0; UPDATE meta SET value = 'in the wal'", NULL, NULL, NULL),
			 SQLITE_OK);
	for (i = 0; i < 3; i++) {
		before[i] = t_read(f[i], &blen[i]);
		assert_non_null(before[i]);
	}
	assert_int_equal(agc_db_open_snapshot(t_path("s.db"), &db), 0);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT value FROM meta", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "in the wal");
	sqlite3_finalize(st);
	agc_db_close_snapshot(db);
	for (i = 0; i < 3; i++) {
		size_t n = 0;

		after = t_read(f[i], &n);
		assert_non_null(after);
		assert_int_equal(n, blen[i]);
		assert_true(memcmp(before[i], after, n) == 0);
		free(after);
		free(before[i]);
	}
	sqlite3_close(w);
	/* no copy is left behind */
	snprintf(pattern, sizeof(pattern), "%s", tmp);
	assert_non_null(d = opendir(pattern));
	while ((e = readdir(d)))
		assert_null(strstr(e->d_name, "agentgc-snapshot-"));
	closedir(d);
	/* without a WAL, in place: no copy, nothing made beside it */
	assert_false(t_exists("s.db-wal"));
	assert_int_equal(agc_db_open_snapshot(t_path("s.db"), &db), 0);
	agc_db_close_snapshot(db);
	assert_false(t_exists("s.db-wal"));
	assert_false(t_exists("s.db-shm"));
}

/* agc_db_schema: the snapshot answers every question as the pragmas do (a table named in any
 * letter case, a column or a referenced table as written, a view's columns, a hostile name),
 * and orders tables as agc_db_next_table does. */
static void test_db_schema_as_pragmas(void **state)
{
	fx *f = *state;
	static const char *const tables[] = {"Session", "session", "SESSION", "message", "part", "v", "nope",
					     "x\"; DROP TABLE part; --", "child", "MESSAGE"};
	static const char *const cols[] = {"id", "ID", "session_id", "message_id", "data", "w", "x", ""};
	const char *todo[4] = {"session", "message", "part", "child"};
	const char *todo2[4] = {"session", "message", "part", "child"};
	agc_db_schema sc;
	size_t i, j, k;

	sql(f, "CREATE TABLE session(id TEXT PRIMARY KEY, data);"
	       "CREATE TABLE message(id TEXT PRIMARY KEY, session_id REFERENCES Session(id), data);"
	       "CREATE TABLE part(id, message_id REFERENCES message(id), session_id REFERENCES session(id));"
	       "CREATE TABLE child(id, part_id REFERENCES part(id));"
	       "CREATE VIEW v AS SELECT id AS w FROM session;"
	       "CREATE TABLE \"x\"\"; DROP TABLE part; --\"(x)");
	assert_int_equal(agc_db_schema_read(f->db, &sc), 0);
	for (i = 0; i < sizeof(tables) / sizeof(*tables); i++) {
		for (j = 0; j < sizeof(cols) / sizeof(*cols); j++)
			assert_int_equal(agc_db_schema_has_column(&sc, tables[i], cols[j]),
					 agc_db_has_column(f->db, tables[i], cols[j]));
		for (k = 0; k < sizeof(tables) / sizeof(*tables); k++)
			assert_int_equal(agc_db_schema_references(&sc, tables[i], tables[k]),
					 agc_db_references(f->db, tables[i], tables[k]));
	}
	assert_true(agc_db_schema_has_column(&sc, "SESSION", "data"));
	assert_false(agc_db_schema_has_column(&sc, "session", "DATA"));
	assert_true(agc_db_schema_references(&sc, "Message", "Session"));
	assert_false(agc_db_schema_references(&sc, "message", "session"));
	/* the same order, one table at a time: children before their parents */
	for (i = 0; i < 4; i++) {
		size_t a = agc_db_schema_next_table(&sc, todo, 4), b = agc_db_next_table(f->db, todo2, 4);

		assert_int_equal(a, b);
		todo[a] = todo2[b] = NULL;
	}
	agc_db_schema_release(&sc);
	assert_int_equal(sc.ncols, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define TD(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)

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
		T(test_db_ident_hostile),
		T(test_db_schema_as_pragmas),
		T(test_db_row_size_sql),
		TD(test_db_open_not_sqlite),
		TD(test_db_open_peek),
		TD(test_db_open_snapshot),
		TD(test_db_verify_open),
		TD(test_db_write_busy_wal),
		TD(test_db_write_busy_rollback),
		cmocka_unit_test(test_db_purge_needs_out),
		cmocka_unit_test(test_db_purge_unknown_flag_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
