/* Unit tests of purge.c through the public API (agc_purge, agc_purge_many, agc_show,
 * agc_in_use), on the made-up agent "fake" (fake_adapter.h), whose files and databases each
 * test lays out in a fresh home under $TMPDIR (agc_test.h).
 *
 * This file also defines unlinkat and sqlite3_exec, which the library linked into this program
 * calls instead of libc's and SQLite's: they pass through, and let a test record the order of
 * removals, make one name fail (as root no mode stops a removal), re-create a file as another
 * is removed, and record or fail the COMMIT of one database. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "fake_adapter.h"

/* ---- hooks --------------------------------------------------------------------------- */

#define LOG_MAX 64
static bool hook_record;                      /* log unlinkat names and COMMITs */
static char hook_log[LOG_MAX][NAME_MAX + 8];
static size_t hook_nlog;
static const char *hook_fail_name;            /* unlinkat of this name fails with EIO */
static const char *hook_recreate_after;       /* once this name is unlinked ... */
static const char *hook_recreate;             /* ... this file (rel to t_dir) is made again */
static const char *hook_commit_fail;          /* COMMIT of this database (basename) fails */

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void hook_note(const char *what, const char *name)
{
	if (hook_record && hook_nlog < LOG_MAX)
		snprintf(hook_log[hook_nlog++], sizeof(hook_log[0]), "%s%s", what, name);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	const char *name = basename_of(path);
	int rc;

	hook_note("", name);
	if (hook_fail_name && strcmp(name, hook_fail_name) == 0) {
		errno = EIO;
		return -1;
	}
	rc = (int)syscall(SYS_unlinkat, dirfd, path, flags);
	if (rc == 0 && hook_recreate_after && strcmp(name, hook_recreate_after) == 0) {
		hook_recreate_after = NULL;
		t_writes(hook_recreate, "again");
	}
	return rc;
}

int sqlite3_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **), void *ud,
		 char **err)
{
	static int (*real)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *,
			   char **);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "sqlite3_exec");
	if (strcmp(sql, "COMMIT") == 0) {
		const char *file = sqlite3_db_filename(db, "main");
		const char *name = basename_of(file ? file : "");

		hook_note("commit ", name);
		if (hook_commit_fail && strcmp(name, hook_commit_fail) == 0) {
			if (err)
				*err = sqlite3_mprintf("disk I/O error");
			return SQLITE_IOERR;
		}
	}
	return real(db, sql, cb, ud, err);
}

static void hooks_reset(void)
{
	hook_record = false;
	hook_nlog = 0;
	hook_fail_name = NULL;
	hook_recreate_after = NULL;
	hook_recreate = NULL;
	hook_commit_fail = NULL;
	fake_discover_hook = NULL;
}

/* The index of the first log entry that is name, or -1. */
static long logged(const char *name)
{
	size_t i;

	for (i = 0; i < hook_nlog; i++)
		if (strcmp(hook_log[i], name) == 0)
			return (long)i;
	return -1;
}

/* ---- fixture ------------------------------------------------------------------------- */

/* Ids no other process names in its argv (the gate would see it as a holder): each test's
 * own, made from this process's pid. */
static char S[40], T[40], C[40], U[40];
static agc_ctx *ctx;
static pid_t holder = -1;

static int setup(void **state)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;
	unsigned tag = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);

	(void)state;
	hooks_reset();
	if (t_setup_dir("purge") < 0)
		return -1;
	snprintf(S, sizeof(S), "s-%08x", tag);
	snprintf(T, sizeof(T), "t-%08x", tag);
	snprintf(C, sizeof(C), "c-%08x", tag);
	snprintf(U, sizeof(U), "u-%08x", tag);
	t_mkdir_p("home/fake", 0700);
	o.home = t_path("home");
	return agc_ctx_new(&ctx, &o);
}

static int teardown(void **state)
{
	(void)state;
	hooks_reset();
	if (holder > 0) {
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
		holder = -1;
	}
	agc_ctx_free(ctx);
	ctx = NULL;
	return t_teardown_dir();
}

/* home/fake/<rel>, rel from a printf format */
static const char *F(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *F(const char *fmt, ...)
{
	char rel[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	return t_pathf("home/fake/%s", rel);
}

/* Whether home/fake/<rel> exists, rel from a printf format. */
static bool has(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool has(const char *fmt, ...)
{
	char rel[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	return t_exists(t_fmt("home/fake/%s", rel));
}

/* The files of session id: its record, its dir with a file, its side file. */
static void lay_files(const char *id)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "home/fake/sessions/%s.rec", id);
	t_put(rel, "{\"record\":1}\n", 0600, 0);
	snprintf(rel, sizeof(rel), "home/fake/sessions/%s/notes.md", id);
	t_put(rel, "notes", 0600, 0);
	snprintf(rel, sizeof(rel), "home/fake/files/%s.txt", id);
	t_put(rel, "side file", 0600, 0);
}

static sqlite3 *db_open(const char *name)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(t_pathf("home/fake/%s", name), &db), SQLITE_OK);
	return db;
}

static void db_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg ? msg : "?");
}

/* main.db: session(id) with S and T, message(session_id) with two of S and one of T; aux.db:
 * part(session_id) with one of S and one of T. wal: journal mode WAL (else rollback). */
static void lay_dbs(bool wal)
{
	char sql[1024];
	sqlite3 *db = db_open("main.db");

	if (wal)
		db_sql(db, "PRAGMA journal_mode=WAL");
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE session(id TEXT PRIMARY KEY, title TEXT);"
		 "CREATE TABLE message(id INTEGER PRIMARY KEY, session_id TEXT, body TEXT);"
		 "INSERT INTO session VALUES('%s','one'),('%s','two');"
		 "INSERT INTO message(session_id, body) VALUES('%s','a'),('%s','b'),('%s','c');",
		 S, T, S, S, T);
	db_sql(db, sql);
	sqlite3_close(db);
	db = db_open("aux.db");
	if (wal)
		db_sql(db, "PRAGMA journal_mode=WAL");
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE part(id INTEGER PRIMARY KEY, session_id TEXT, data BLOB);"
		 "INSERT INTO part(session_id, data) VALUES('%s', x'0102'),('%s', x'03');", S, T);
	db_sql(db, sql);
	sqlite3_close(db);
}

/* Rows of table in database name whose column col is id. */
static int rows_of(const char *name, const char *table, const char *col, const char *id)
{
	sqlite3 *db = db_open(name);
	sqlite3_stmt *st = NULL;
	char sql[256];
	int n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE %s = ?1", table, col);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* Every row of the fixture's databases still there (nothing changed). */
static void assert_rows_intact(void)
{
	assert_int_equal(rows_of("main.db", "session", "id", S), 1);
	assert_int_equal(rows_of("main.db", "message", "session_id", S), 2);
	assert_int_equal(rows_of("aux.db", "part", "session_id", S), 1);
	assert_int_equal(rows_of("main.db", "session", "id", T), 1);
	assert_int_equal(rows_of("main.db", "message", "session_id", T), 1);
	assert_int_equal(rows_of("aux.db", "part", "session_id", T), 1);
}

static void assert_files(const char *id, bool there)
{
	assert_int_equal(has("sessions/%s.rec", id), there);
	assert_int_equal(has("sessions/%s/notes.md", id), there);
	assert_int_equal(has("files/%s.txt", id), there);
}

/* The residual entry whose path ends with suffix (NULL: none). */
static const agc_item *residual_at(const agc_report *r, const char *suffix)
{
	size_t i, n = strlen(suffix);

	for (i = 0; i < agc_report_residual_count(r); i++) {
		const agc_item *it = agc_report_residual(r, i);
		size_t m = strlen(it->path);

		if (m >= n && strcmp(it->path + m - n, suffix) == 0)
			return it;
	}
	return NULL;
}

/* The removed entry whose path ends with suffix (and, for rows, of table), or NULL. */
static const agc_item *removed_at(const agc_report *r, const char *suffix, const char *table)
{
	size_t i, n = strlen(suffix);

	for (i = 0; i < agc_report_removed_count(r); i++) {
		const agc_item *it = agc_report_removed(r, i);
		size_t m = strlen(it->path);

		if (m >= n && strcmp(it->path + m - n, suffix) == 0 &&
		    (!table || (it->table && strcmp(it->table, table) == 0)))
			return it;
	}
	return NULL;
}

static agc_report *purge(const char *id, unsigned flags)
{
	agc_report *r = NULL;

	assert_int_equal(agc_purge(ctx, "fake", id, flags, &r), 0);
	assert_non_null(r);
	return r;
}

/* ---- files ---------------------------------------------------------------------------- */

/* R6: every artifact goes, the record last; another session's files stay (R4). */
static void test_purge_record_last(void **state)
{
	char rec[64];
	agc_report *r;
	long at;

	(void)state;
	lay_files(S);
	lay_files(T);
	hook_record = true;
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "purged");
	assert_int_equal(agc_report_exit(r), 0);
	assert_int_equal(agc_report_residual_count(r), 0);
	assert_non_null(removed_at(r, t_fmt("/sessions/%s.rec", S), NULL));
	assert_non_null(removed_at(r, t_fmt("/sessions/%s", S), NULL));
	assert_non_null(removed_at(r, t_fmt("/files/%s.txt", S), NULL));
	assert_files(S, false);
	assert_files(T, true);
	snprintf(rec, sizeof(rec), "%s.rec", S);
	at = logged(rec);
	assert_true(at >= 0);
	assert_true(logged(t_fmt("%s.txt", S)) >= 0 && logged(t_fmt("%s.txt", S)) < at);
	assert_true(logged("notes.md") >= 0 && logged("notes.md") < at);
	assert_int_equal(at, (long)hook_nlog - 1);
	agc_report_free(r);
}

/* R6: when another artifact cannot be removed, the record stays, so a rerun finds the session
 * and finishes it; the report says what is left and why (exit 3). */
static void test_purge_record_kept_on_failure(void **state)
{
	char txt[64];
	agc_report *r;
	const agc_item *it;

	(void)state;
	lay_files(S);
	snprintf(txt, sizeof(txt), "%s.txt", S);
	hook_fail_name = txt;
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "partial");
	assert_int_equal(agc_report_exit(r), 3);
	assert_true(has("sessions/%s.rec", S));
	assert_true(has("files/%s.txt", S));
	it = residual_at(r, t_fmt("/files/%s.txt", S));
	assert_non_null(it);
	assert_non_null(strstr(it->reason, "error"));
	it = residual_at(r, t_fmt("/sessions/%s.rec", S));
	assert_non_null(it);
	assert_null(removed_at(r, t_fmt("/sessions/%s.rec", S), NULL));
	agc_report_free(r);

	/* the rerun, with nothing failing, finishes it */
	hook_fail_name = NULL;
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "purged");
	assert_files(S, false);
	agc_report_free(r);
}

/* A dry run changes nothing and lists what would go, with the exit code the purge would have. */
static void test_purge_dry_run(void **state)
{
	agc_report *r;

	(void)state;
	lay_files(S);
	lay_dbs(true);
	r = purge(S, AGC_PURGE_DRY_RUN);
	assert_string_equal(agc_status_name(agc_report_status(r)), "dry-run");
	assert_int_equal(agc_report_exit(r), 0);
	assert_non_null(removed_at(r, t_fmt("/sessions/%s.rec", S), NULL));
	assert_non_null(removed_at(r, t_fmt("/files/%s.txt", S), NULL));
	assert_non_null(removed_at(r, "/main.db", "session"));
	assert_int_equal(removed_at(r, "/main.db", "message")->count, 2);
	assert_int_equal(removed_at(r, "/aux.db", "part")->count, 1);
	assert_files(S, true);
	assert_rows_intact();
	agc_report_free(r);
}

/* No artifact of the id: not found (exit 5) for purge, show and in-use, and nothing else
 * touched. */
static void test_purge_not_found(void **state)
{
	agc_report *r;

	(void)state;
	lay_files(T);
	r = purge(U, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "not-found");
	assert_int_equal(agc_report_exit(r), 5);
	assert_int_equal(agc_report_removed_count(r), 0);
	agc_report_free(r);
	assert_int_equal(agc_show(ctx, "fake", U, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_NOT_FOUND);
	agc_report_free(r);
	assert_int_equal(agc_in_use(ctx, "fake", U, &r), 0);
	assert_int_equal(agc_report_exit(r), 5);
	agc_report_free(r);
	/* an id outside the grammar is refused before anything is looked at (R1) */
	assert_int_equal(agc_purge(ctx, "fake", "../x", 0, &r), 0);
	assert_int_not_equal(agc_report_status(r), AGC_ST_PURGED);
	agc_report_free(r);
	assert_files(T, true);
}

/* R7: the discovery after the purge finds what came back (a file re-created while the purge
 * ran): status partial, exit 3, the file listed as residual. */
static void test_purge_residual_found_again(void **state)
{
	char rec[64], again[256];
	agc_report *r;

	(void)state;
	lay_files(S);
	snprintf(rec, sizeof(rec), "%s.rec", S);
	snprintf(again, sizeof(again), "home/fake/files/%s.txt", S);
	hook_recreate_after = rec;
	hook_recreate = again;
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "partial");
	assert_int_equal(agc_report_exit(r), 3);
	assert_non_null(residual_at(r, t_fmt("/files/%s.txt", S)));
	assert_false(has("sessions/%s.rec", S));
	agc_report_free(r);
}

/* Children named by the session go with it, and the report lists them. */
static void test_purge_children(void **state)
{
	char rel[256];
	agc_report *r;

	(void)state;
	lay_files(S);
	lay_files(C);
	snprintf(rel, sizeof(rel), "home/fake/kids/%s", S);
	t_put(rel, C, 0600, 0);
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "purged");
	assert_int_equal(agc_report_child_count(r), 1);
	assert_string_equal(agc_report_child(r, 0), C);
	assert_files(S, false);
	assert_files(C, false);
	agc_report_free(r);
}

/* ---- in use --------------------------------------------------------------------------- */

/* R5: a process holding an artifact open makes the session in use; purge refuses with
 * nothing changed; show lists the artifacts. */
static void test_purge_in_use_open_file(void **state)
{
	int sync[2];
	agc_report *r;
	char c;

	(void)state;
	lay_files(S);
	assert_int_equal(agc_in_use(ctx, "fake", S, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_FOUND);
	assert_int_equal(agc_report_exit(r), 0);
	agc_report_free(r);

	assert_int_equal(pipe(sync), 0);
	holder = fork();
	assert_true(holder >= 0);
	if (holder == 0) {
		int fd = open(F("files/%s.txt", S), O_RDONLY | O_CLOEXEC);

		close(sync[0]);
		if (fd < 0 || write(sync[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);

	assert_int_equal(agc_in_use(ctx, "fake", S, &r), 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "in-use");
	assert_int_equal(agc_report_exit(r), 4);
	assert_true(agc_report_holder_count(r) >= 1);
	assert_int_equal(agc_report_holder(r, 0)->pid, holder);
	assert_string_equal(agc_report_holder(r, 0)->why, "open-file");
	agc_report_free(r);

	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "in-use");
	assert_int_equal(agc_report_exit(r), 4);
	assert_int_equal(agc_report_removed_count(r), 0);
	assert_files(S, true);
	agc_report_free(r);

	assert_int_equal(agc_show(ctx, "fake", S, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_FOUND);
	assert_non_null(removed_at(r, t_fmt("/sessions/%s.rec", S), NULL));
	assert_non_null(removed_at(r, t_fmt("/files/%s.txt", S), NULL));
	agc_report_free(r);
}

/* ---- rows ----------------------------------------------------------------------------- */

/* R6: rows in two databases go, each in its transaction, the database holding the record
 * (main.db: session.id) committed last, after the other; the files go between the deletes and
 * the record's commit, the record file last; another session's rows stay (R4). */
static void rows_two_dbs(bool wal)
{
	agc_report *r;
	long aux, main_;

	lay_files(S);
	lay_dbs(wal);
	hook_record = true;
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "purged");
	assert_int_equal(agc_report_exit(r), 0);
	assert_int_equal(removed_at(r, "/main.db", "session")->count, 1);
	assert_int_equal(removed_at(r, "/main.db", "message")->count, 2);
	assert_int_equal(removed_at(r, "/aux.db", "part")->count, 1);
	assert_int_equal(rows_of("main.db", "session", "id", S), 0);
	assert_int_equal(rows_of("main.db", "message", "session_id", S), 0);
	assert_int_equal(rows_of("aux.db", "part", "session_id", S), 0);
	assert_int_equal(rows_of("main.db", "session", "id", T), 1);
	assert_int_equal(rows_of("main.db", "message", "session_id", T), 1);
	assert_int_equal(rows_of("aux.db", "part", "session_id", T), 1);
	aux = logged("commit aux.db");
	main_ = logged("commit main.db");
	assert_true(aux >= 0 && main_ > aux);
	assert_true(logged(t_fmt("%s.txt", S)) < main_);
	assert_true(logged(t_fmt("%s.rec", S)) > main_);
	assert_files(S, false);
	agc_report_free(r);
}

static void test_purge_rows_record_db_last_wal(void **state)
{
	(void)state;
	rows_two_dbs(true);
}

static void test_purge_rows_record_db_last_rollback(void **state)
{
	(void)state;
	rows_two_dbs(false);
}

/* R6: a failed commit of the first database keeps the record's database and the record file,
 * so a rerun finds the session (exit 3), and the rerun finishes it. */
static void test_purge_rows_commit_fails(void **state)
{
	agc_report *r;

	(void)state;
	lay_files(S);
	lay_dbs(true);
	hook_commit_fail = "aux.db";
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "partial");
	assert_int_equal(agc_report_exit(r), 3);
	assert_rows_intact();
	assert_true(has("sessions/%s.rec", S));
	assert_non_null(residual_at(r, t_fmt("/sessions/%s.rec", S)));
	agc_report_free(r);
	hook_commit_fail = NULL;
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "purged");
	assert_int_equal(rows_of("main.db", "session", "id", S), 0);
	assert_int_equal(rows_of("aux.db", "part", "session_id", S), 0);
	agc_report_free(r);
}

/* R6: a database write-locked by another connection (BEGIN IMMEDIATE) refuses the purge,
 * reason busy, with no row gone in either database and no file removed. */
static void busy(bool wal)
{
	sqlite3 *lock;
	agc_report *r;
	const agc_item *it;

	lay_files(S);
	lay_dbs(wal);
	lock = db_open("aux.db");
	db_sql(lock, "BEGIN IMMEDIATE");
	db_sql(lock, "INSERT INTO part(session_id) VALUES('other')");
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "refused");
	assert_int_equal(agc_report_exit(r), 4);
	it = residual_at(r, "/aux.db");
	assert_non_null(it);
	assert_string_equal(it->reason, "busy");
	db_sql(lock, "ROLLBACK");
	sqlite3_close(lock);
	assert_rows_intact();
	assert_files(S, true);
	agc_report_free(r);
}

static void test_purge_rows_busy_wal(void **state)
{
	(void)state;
	busy(true);
}

static void test_purge_rows_busy_rollback(void **state)
{
	(void)state;
	busy(false);
}

/* A dry run says the purge would be refused when a database is busy (exit 4). */
static void test_purge_dry_run_busy(void **state)
{
	sqlite3 *lock;
	agc_report *r;

	(void)state;
	lay_files(S);
	lay_dbs(true);
	lock = db_open("main.db");
	db_sql(lock, "BEGIN IMMEDIATE");
	r = purge(S, AGC_PURGE_DRY_RUN);
	assert_string_equal(agc_status_name(agc_report_status(r)), "dry-run");
	assert_int_equal(agc_report_exit(r), 4);
	db_sql(lock, "ROLLBACK");
	sqlite3_close(lock);
	assert_rows_intact();
	agc_report_free(r);
}

/* R4: a trigger that deletes another session's row makes the transaction change more than the
 * plan: refused, reason schema, the table named, nothing changed in any database. */
static void test_purge_rows_trigger_schema(void **state)
{
	char sql[512];
	sqlite3 *db;
	agc_report *r;
	const agc_item *it;

	(void)state;
	lay_files(S);
	lay_dbs(true);
	db = db_open("main.db");
	snprintf(sql, sizeof(sql),
		 "CREATE TRIGGER cascade_other AFTER DELETE ON message BEGIN "
		 "DELETE FROM message WHERE session_id = '%s'; END", T);
	db_sql(db, sql);
	sqlite3_close(db);
	r = purge(S, 0);
	assert_string_equal(agc_status_name(agc_report_status(r)), "refused");
	assert_int_equal(agc_report_exit(r), 4);
	it = residual_at(r, "/main.db");
	assert_non_null(it);
	assert_string_equal(it->reason, "schema");
	assert_non_null(it->table);
	assert_string_equal(it->table, "message");
	assert_rows_intact();
	assert_files(S, true);
	agc_report_free(r);
}

/* ---- many ids ------------------------------------------------------------------------- */

/* agc_purge_many reports per id, in order: one purged, one not found, one purged with rows. */
static void test_purge_many_per_id(void **state)
{
	const char *ids[3];
	agc_report *out[3] = {NULL, NULL, NULL};
	size_t i;

	(void)state;
	lay_files(S);
	lay_files(T);
	lay_dbs(true);
	ids[0] = S;
	ids[1] = U;
	ids[2] = T;
	assert_int_equal(agc_purge_many(ctx, "fake", ids, 3, 0, out), 0);
	assert_string_equal(agc_report_id(out[0]), S);
	assert_string_equal(agc_status_name(agc_report_status(out[0])), "purged");
	assert_string_equal(agc_report_id(out[1]), U);
	assert_string_equal(agc_status_name(agc_report_status(out[1])), "not-found");
	assert_string_equal(agc_report_id(out[2]), T);
	assert_string_equal(agc_status_name(agc_report_status(out[2])), "purged");
	assert_int_equal(removed_at(out[2], "/main.db", "message")->count, 1);
	assert_files(S, false);
	assert_files(T, false);
	assert_int_equal(rows_of("main.db", "session", "id", S), 0);
	assert_int_equal(rows_of("main.db", "session", "id", T), 0);
	for (i = 0; i < 3; i++)
		agc_report_free(out[i]);
}

#define TT(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TT(test_purge_record_last),
		TT(test_purge_record_kept_on_failure),
		TT(test_purge_dry_run),
		TT(test_purge_not_found),
		TT(test_purge_residual_found_again),
		TT(test_purge_children),
		TT(test_purge_in_use_open_file),
		TT(test_purge_rows_record_db_last_wal),
		TT(test_purge_rows_record_db_last_rollback),
		TT(test_purge_rows_commit_fails),
		TT(test_purge_rows_busy_wal),
		TT(test_purge_rows_busy_rollback),
		TT(test_purge_dry_run_busy),
		TT(test_purge_rows_trigger_schema),
		TT(test_purge_many_per_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
