/* SQLite helpers. Schemas are introspected, never assumed (R8). */
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "buf.h"
#include "db.h"
#include "error.h"

int agc_db_fail(sqlite3 *db, int rc, const char *what)
{
	int code = rc & 0xff;

	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return agc_error_set(AGC_EINUSE, "%s: database is busy", what);
	return agc_error_set(-1, "%s: %s", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

static int open_db(const char *path, int flags, sqlite3 **out)
{
	sqlite3 *db = NULL;
	int rc;

	/* NOFOLLOW for writing: a database is never changed through a link planted in its
	 * place (R2). Discovery may read through one, to find what it cannot remove. */
	if (!(flags & SQLITE_OPEN_READONLY))
		flags |= SQLITE_OPEN_NOFOLLOW;
	rc = sqlite3_open_v2(path, &db, flags, NULL);
	if (rc != SQLITE_OK) {
		rc = agc_db_fail(db, rc, path);
		sqlite3_close(db);
		return rc;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, AGC_DB_BUSY_MS);
	/* Reading the schema proves it is SQLite at all ("file is not a database"). */
	rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = agc_db_fail(db, rc, path);
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

int agc_db_open_ro(const char *path, sqlite3 **out)
{
	return open_db(path, SQLITE_OPEN_READONLY, out);
}

int agc_db_open_rw(const char *path, sqlite3 **out)
{
	sqlite3 *db;
	int rc = open_db(path, SQLITE_OPEN_READWRITE, &db);

	if (rc < 0)
		return rc;
	/* Deleted rows are overwritten with zeros, not left in free pages (SPEC R6); cascades
	 * fire only with foreign keys on. */
	/* synchronous=NORMAL as the agents themselves use it in WAL mode: a crash can lose the
	 * deletion (the rows stay: the safe side), never corrupt; the checkpoint syncs. A larger
	 * cache spares re-reading index pages while thousands of rows go. */
	if ((rc = agc_db_exec(db, "PRAGMA secure_delete=ON")) < 0 ||
	    (rc = agc_db_exec(db, "PRAGMA foreign_keys=ON")) < 0 ||
	    (rc = agc_db_exec(db, "PRAGMA synchronous=NORMAL")) < 0 ||
	    (rc = agc_db_exec(db, "PRAGMA cache_size=-32768")) < 0) {
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

int agc_db_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc == SQLITE_OK)
		return 0;
	rc = agc_db_fail(db, rc, sql);
	sqlite3_free(msg);
	return rc;
}

void agc_db_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int agc_db_tables(sqlite3 *db, char ***names, size_t *n)
{
	struct { char **v; size_t n, cap; } t = {0};
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db,
				"SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return agc_db_fail(db, rc, "cannot list tables");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char **slot = AGC_ARRAY_PUSH(&t, 100000);

		if (!slot || !(*slot = agc_strdup((const char *)sqlite3_column_text(st, 0)))) {
			if (slot)
				t.n--;
			sqlite3_finalize(st);
			agc_db_strv_free(t.v, t.n);
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		agc_db_strv_free(t.v, t.n);
		return agc_db_fail(db, rc, "cannot list tables");
	}
	*names = t.v;
	*n = t.n;
	return 0;
}

char *agc_db_ident(const char *name)
{
	agc_buf b = AGC_BUF_INIT;
	const char *p;

	if (agc_buf_addc(&b, '"') < 0)
		return NULL;
	for (p = name; *p; p++)
		if ((*p == '"' && agc_buf_addc(&b, '"') < 0) || agc_buf_addc(&b, *p) < 0) {
			agc_buf_release(&b);
			return NULL;
		}
	if (agc_buf_addc(&b, '"') < 0) {
		agc_buf_release(&b);
		return NULL;
	}
	return agc_buf_detach(&b, NULL);
}

bool agc_db_has_column(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *st = NULL;
	bool found = false;
	int rc;

	/* pragma_table_info takes the table name as a bound value: no SQL is built from it. */
	rc = sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

bool agc_db_references(sqlite3 *db, const char *from, const char *to)
{
	sqlite3_stmt *st = NULL;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_foreign_key_list(?1) WHERE \"table\" = ?2", -1, &st,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, from, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, to, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int agc_db_write_busy(const char *path)
{
	char *shm = agc_strfmt("%s-shm", path);
	struct stat st;
	sqlite3 *db = NULL;
	int rc, busy;

	if (!shm)
		return -1;
	/* No shared-memory file: no connection is open on it in WAL mode, so no writer; and
	 * opening it here would create one. */
	rc = stat(shm, &st);
	free(shm);
	if (rc < 0)
		return 0;
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	/* a probe: take the write lock and give it back; never checkpoint on close */
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_timeout(db, AGC_DB_BUSY_MS);
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
	if (rc == SQLITE_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return busy ? 1 : 0;
}
