/* SQLite helpers. Schemas are introspected, never assumed (R8). */
/* The pre-update hook is declared only with this set; Debian's libsqlite3 is built with it,
 * and agc_db_watch_new checks that the library at hand is. */
#define SQLITE_ENABLE_PREUPDATE_HOOK 1

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "db.h"
#include "error.h"
#include "hset.h"

bool agc_db_is_busy(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

int agc_db_fail(sqlite3 *db, int rc, const char *what)
{
	int err = db ? sqlite3_system_errno(db) : 0;
	bool short_ = agc_errno_short(err);

	if (agc_db_is_busy(rc))
		return agc_error_set(AGC_EINUSE, "%s: database is busy", what);
	/* out of descriptors or memory: a shortage of this process, not a fact of the file (a
	 * discovery that met one fails) */
	agc_short_note(err);
	/* the connection's message only when it is about this result */
	return agc_error_set(-1, "%s: %s%s", what,
			     db && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
			     short_ ? " (out of open files or memory: raise 'ulimit -n' and run again)" : "");
}

/* SQLite opens a database's -wal, -shm and -journal itself: each must be a regular file or
 * absent, never a FIFO, a device, a dir or a link in its place (R2, R8). */
static int sidecars_regular(const char *path)
{
	static const char *const sfx[] = {"-wal", "-shm", "-journal"};
	size_t i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		char *side = agc_strfmt("%s%s", path, sfx[i]);
		struct stat st;
		int rc = side ? lstat(side, &st) : -1;

		if (!side)
			return agc_error_oom();
		if (rc == 0 && !S_ISREG(st.st_mode)) {
			rc = agc_error_set(-1, "%s: its %s is %s, not a regular file", path, sfx[i] + 1,
					   S_ISLNK(st.st_mode) ? "a symlink" : S_ISFIFO(st.st_mode) ? "a FIFO"
					   : S_ISDIR(st.st_mode) ? "a directory" : "a special file");
			free(side);
			return rc;
		}
		free(side);
	}
	return 0;
}

int agc_db_sidecars_ok(const char *path)
{
	return sidecars_regular(path);
}

/* label: the path as messages name it (a URI's file) */
static int open_db_as(const char *path, const char *label, int flags, sqlite3 **out)
{
	sqlite3 *db = NULL;
	int rc;

	if (sidecars_regular(label) < 0)
		return -1;

	/* NOFOLLOW for writing: a database is never changed through a link planted in its
	 * place (R2). Discovery may read through one, to find what it cannot remove. */
	if (!(flags & SQLITE_OPEN_READONLY))
		flags |= SQLITE_OPEN_NOFOLLOW;
	rc = sqlite3_open_v2(path, &db, flags, NULL);
	if (rc != SQLITE_OK) {
		rc = agc_db_fail(db, rc, label);
		sqlite3_close(db);
		return rc;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, AGC_DB_BUSY_MS);
	/* Reading the schema proves it is SQLite at all ("file is not a database"). */
	rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = agc_db_fail(db, rc, label);
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

static int open_db(const char *path, int flags, sqlite3 **out)
{
	return open_db_as(path, path, flags, out);
}

int agc_db_open_ro(const char *path, sqlite3 **out)
{
	return open_db(path, SQLITE_OPEN_READONLY, out);
}

char *agc_db_uri_immutable(const char *path)
{
	agc_buf b = AGC_BUF_INIT;
	const unsigned char *c;
	int rc = agc_buf_adds(&b, "file:");

	for (c = (const unsigned char *)path; *c && rc == 0; c++)
		rc = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			     strchr("/._-~", *c)
			     ? agc_buf_addc(&b, (char)*c)
			     : agc_buf_printf(&b, "%%%02X", *c);
	if (rc == 0)
		rc = agc_buf_adds(&b, "?immutable=1");
	if (rc < 0) {
		agc_buf_release(&b);
		agc_error_oom();
		return NULL;
	}
	return agc_buf_detach(&b, NULL);
}

int agc_db_open_peek(const char *path, sqlite3 **out)
{
	char *side = agc_strfmt("%s-wal", path), *uri;
	struct stat st;
	bool wal;
	int rc;

	if (!side)
		return agc_error_oom();
	wal = lstat(side, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	free(side);
	/* pages in a WAL are read only through it, and its -shm: a read-only connection then
	 * makes nothing (a -shm missing beside a WAL is a crash's leftover, made as any reader
	 * would make it); without one the file is the whole database, read as it is */
	if (wal)
		return open_db(path, SQLITE_OPEN_READONLY, out);
	if (!(uri = agc_db_uri_immutable(path)))
		return -1;
	rc = open_db_as(uri, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, out);
	free(uri);
	return rc;
}

/* Copy the regular file src (never through a link: O_NOFOLLOW; a FIFO or a device is never
 * opened, R8) to the new file dst, at most *budget bytes in all. 0, or -1 with the error set. */
static int copy_file(const char *src, const char *dst, uint64_t *budget)
{
	char buf[65536];
	struct stat st;
	ssize_t n;
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), out = -1, rc = -1;

	if (in < 0)
		return agc_error_errno(-1, errno, "%s", src);
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return agc_error_set(-1, "%s: not a regular file", src);
	}
	if ((uint64_t)st.st_size > *budget) {
		close(in);
		return agc_error_set(-1, "%s: its pages are in its WAL, and it is too large to be read as a copy "
					 "(over %llu MiB)",
				     src, (unsigned long long)(AGC_DB_SNAPSHOT_MAX >> 20));
	}
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		rc = agc_error_errno(-1, errno, "cannot make '%s'", dst);
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if ((uint64_t)n > *budget) {
			rc = agc_error_set(-1, "%s: grew while it was read", src);
			goto out;
		}
		*budget -= (uint64_t)n;
		if (write(out, buf, (size_t)n) != n) {
			rc = agc_error_errno(-1, errno, "cannot write '%s'", dst);
			goto out;
		}
	}
	rc = n < 0 ? agc_error_errno(-1, errno, "%s", src) : 0;
out:
	close(in);
	if (out >= 0 && close(out) < 0 && rc == 0)
		rc = agc_error_errno(-1, errno, "cannot write '%s'", dst);
	return rc;
}

#define SNAPSHOT_PREFIX "agentgc-snapshot-"

/* Remove the snapshot dir dir and what SQLite made in it. */
static void snapshot_remove(const char *dir)
{
	static const char *const names[] = {"db", "db-wal", "db-shm", "db-journal"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char *f = agc_strfmt("%s/%s", dir, names[i]);

		if (f)
			unlink(f);
		free(f);
	}
	rmdir(dir);
}

int agc_db_open_snapshot(const char *path, sqlite3 **out)
{
	char *side = agc_strfmt("%s-wal", path), *dir = NULL, *copy = NULL, *wal = NULL;
	const char *tmp = getenv("TMPDIR");
	uint64_t budget = AGC_DB_SNAPSHOT_MAX;
	struct stat st;
	int rc;

	if (!side)
		return agc_error_oom();
	if (lstat(side, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		/* no WAL with pages: the file is the whole database, read in place as it is */
		free(side);
		return agc_db_open_peek(path, out);
	}
	if (sidecars_regular(path) < 0) {
		free(side);
		return -1;
	}
	/* the file and its WAL, copied to a dir of our own: SQLite reads a WAL through its -shm,
	 * and a reader writes its marks there, so reading them in place would change them */
	dir = agc_strfmt("%s/" SNAPSHOT_PREFIX "XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!dir || !mkdtemp(dir)) {
		rc = dir ? agc_error_errno(-1, errno, "cannot make a temp dir in '%s'", tmp && tmp[0] == '/' ? tmp : "/tmp")
			 : agc_error_oom();
		free(dir);
		free(side);
		return rc;
	}
	copy = agc_strfmt("%s/db", dir);
	wal = agc_strfmt("%s/db-wal", dir);
	if (!copy || !wal)
		rc = agc_error_oom();
	else if ((rc = copy_file(path, copy, &budget)) == 0 && (rc = copy_file(side, wal, &budget)) == 0)
		rc = open_db_as(copy, path, SQLITE_OPEN_READONLY, out);
	free(copy);
	free(wal);
	free(side);
	if (rc < 0)
		snapshot_remove(dir);
	free(dir);
	return rc;
}

void agc_db_close_snapshot(sqlite3 *db)
{
	const char *f = db ? sqlite3_db_filename(db, "main") : NULL;
	char *dir = NULL;
	const char *slash;

	if (f && (slash = strrchr(f, '/')) && strcmp(slash, "/db") == 0) {
		const char *base;

		dir = agc_strndup(f, (size_t)(slash - f));
		base = dir ? strrchr(dir, '/') : NULL;
		if (!base || strncmp(base + 1, SNAPSHOT_PREFIX, strlen(SNAPSHOT_PREFIX)) != 0) {
			free(dir);
			dir = NULL;
		}
	}
	sqlite3_close(db);
	if (dir)
		snapshot_remove(dir);
	free(dir);
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

char *agc_db_row_size_sql(sqlite3 *db, const char *table, const char *alias)
{
	sqlite3_stmt *st = NULL;
	agc_buf out = AGC_BUF_INIT_MAX((size_t)1 << 20);
	char *pre = alias ? agc_db_ident(alias) : NULL;
	int rc;

	if (alias && !pre)
		return NULL;
	rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		free(pre);
		agc_db_fail(db, rc, table);
		return NULL;
	}
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	rc = agc_buf_add(&out, "(0", 2);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		char *c = name ? agc_db_ident(name) : NULL;
		char *term;

		if (!c) {
			rc = -1;
			break;
		}
		term = agc_strfmt(" + ifnull(length(CAST(%s%s%s AS BLOB)), 0)", pre ? pre : "", pre ? "." : "", c);
		free(c);
		rc = term ? agc_buf_add(&out, term, strlen(term)) : -1;
		free(term);
	}
	sqlite3_finalize(st);
	free(pre);
	if (rc == 0)
		rc = agc_buf_add(&out, ")", 1);
	if (rc < 0) {
		agc_buf_release(&out);
		return NULL;
	}
	return agc_buf_detach(&out, NULL);
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

/* agc_db_next_table with the references told by refs(ud, from, to) */
static size_t next_table(const char *const *todo, size_t n, bool (*refs)(const void *ud, const char *from, const char *to),
			 const void *ud)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		bool referenced = false;

		if (!todo[i])
			continue;
		for (k = 0; k < n && !referenced; k++)
			referenced = k != i && todo[k] && refs(ud, todo[k], todo[i]);
		if (!referenced)
			return i;
	}
	/* a cycle: take them in schema order */
	for (i = 0; i < n && !todo[i]; i++)
		;
	return i;
}

static bool db_refs(const void *ud, const char *from, const char *to)
{
	return agc_db_references((sqlite3 *)ud, from, to);
}

size_t agc_db_next_table(sqlite3 *db, const char *const *todo, size_t n)
{
	return next_table(todo, n, db_refs, db);
}

void agc_db_schema_release(agc_db_schema *s)
{
	size_t i;

	for (i = 0; i < s->ncols; i++) {
		free(s->cols[i].table);
		free(s->cols[i].name);
	}
	for (i = 0; i < s->nfks; i++) {
		free(s->fks[i].from);
		free(s->fks[i].to);
	}
	free(s->cols);
	free(s->fks);
	memset(s, 0, sizeof(*s));
}

/* Each row's two text columns as a pair into *v (n, cap), at most max. 0 or -1. */
static int schema_pairs(sqlite3 *db, const char *sql, char *(**v)[2], size_t *n, size_t *cap)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return agc_db_fail(db, rc, "cannot read the schema");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *a = (const char *)sqlite3_column_text(st, 0), *b = (const char *)sqlite3_column_text(st, 1);
		char *(*slot)[2];

		if (!a || !b)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			void *nv = nc <= ((size_t)1 << 20) ? realloc(*v, nc * sizeof(**v)) : NULL;

			if (!nv) {
				sqlite3_finalize(st);
				return agc_error_oom();
			}
			*v = nv;
			*cap = nc;
		}
		slot = &(*v)[*n];
		(*slot)[0] = agc_strdup(a);
		(*slot)[1] = agc_strdup(b);
		(*n)++;
		if (!(*slot)[0] || !(*slot)[1]) {
			sqlite3_finalize(st);
			return agc_error_oom();
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : agc_db_fail(db, rc, "cannot read the schema");
}

int agc_db_schema_read(sqlite3 *db, agc_db_schema *s)
{
	char *(*pairs)[2] = NULL;
	size_t n = 0, cap = 0, i;
	int rc;

	memset(s, 0, sizeof(*s));
	/* the same table-valued pragmas agc_db_has_column and agc_db_references ask, for every
	 * table at once */
	rc = schema_pairs(db, "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
			      "WHERE m.type IN ('table', 'view') ORDER BY m.name, p.cid",
			  &pairs, &n, &cap);
	if (rc == 0) {
		s->cols = (struct agc_db_col *)pairs;
		s->ncols = n;
		s->capc = cap;
		pairs = NULL;
		n = cap = 0;
		rc = schema_pairs(db, "SELECT m.name, f.\"table\" FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f "
				      "WHERE m.type = 'table'",
				  &pairs, &n, &cap);
		s->fks = (struct agc_db_fk *)pairs;
		s->nfks = n;
		s->capf = cap;
		pairs = NULL;
	} else {
		for (i = 0; i < n; i++) {
			free(pairs[i][0]);
			free(pairs[i][1]);
		}
		free(pairs);
	}
	if (rc < 0)
		agc_db_schema_release(s);
	return rc;
}

bool agc_db_schema_has_column(const agc_db_schema *s, const char *table, const char *col)
{
	size_t i;

	/* SQLite finds a table in any (ASCII) letter case; a column name is compared as = does */
	for (i = 0; i < s->ncols; i++)
		if (strcmp(s->cols[i].name, col) == 0 && sqlite3_stricmp(s->cols[i].table, table) == 0)
			return true;
	return false;
}

bool agc_db_schema_references(const agc_db_schema *s, const char *from, const char *to)
{
	size_t i;

	for (i = 0; i < s->nfks; i++)
		if (strcmp(s->fks[i].to, to) == 0 && sqlite3_stricmp(s->fks[i].from, from) == 0)
			return true;
	return false;
}

static bool schema_refs(const void *ud, const char *from, const char *to)
{
	return agc_db_schema_references(ud, from, to);
}

size_t agc_db_schema_next_table(const agc_db_schema *s, const char *const *todo, size_t n)
{
	return next_table(todo, n, schema_refs, s);
}

int agc_db_begin_write(sqlite3 *db, bool *wal)
{
	sqlite3_stmt *st = NULL;
	bool is_wal = false;
	int rc;

	/* the mode the database is in, as this connection sees it (a read takes the shared
	 * lock for a moment, and may be busy itself) */
	rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(st, 0);

		is_wal = m && strcmp(m, "wal") == 0;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return agc_db_fail(db, rc, "cannot read the journal mode");
	if (wal)
		*wal = is_wal;
	/* R6: in rollback-journal mode a reader's shared lock lets BEGIN IMMEDIATE through and
	 * then makes the COMMIT busy, after other databases may have committed; EXCLUSIVE waits
	 * for the readers now, before any row goes anywhere. */
	return agc_db_exec(db, is_wal ? "BEGIN IMMEDIATE" : "BEGIN EXCLUSIVE");
}

int agc_db_autocheckpoint_off(sqlite3 *db, int *saved)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, "PRAGMA wal_autocheckpoint", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*saved = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return agc_db_fail(db, rc, "cannot read the automatic checkpoint");
	return sqlite3_wal_autocheckpoint(db, 0) == SQLITE_OK ? 0
	       : agc_error_set(-1, "cannot turn the automatic checkpoint off");
}

int agc_db_autocheckpoint_restore(sqlite3 *db, int saved)
{
	return sqlite3_wal_autocheckpoint(db, saved) == SQLITE_OK ? 0
	       : agc_error_set(-1, "cannot restore the automatic checkpoint");
}

int agc_db_write_busy(const char *path)
{
	char *shm = agc_strfmt("%s-shm", path);
	unsigned char hdr[20];
	struct stat st;
	sqlite3 *db = NULL;
	int rc, fd, busy;
	bool wal;

	if (!shm)
		return -1;
	rc = stat(shm, &st);
	free(shm);
	/* The header says the mode (bytes 18-19 are 2 in WAL mode) without opening the database:
	 * opening a WAL database would create its -wal and -shm. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	wal = pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) && hdr[18] == 2 && hdr[19] == 2;
	close(fd);
	/* No shared-memory file of a WAL database: no connection is open on it, so no writer. */
	if (wal && rc < 0)
		return 0;
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	/* a probe: take the write lock a purge would take and give it back; never checkpoint on
	 * close */
	sqlite3_extended_result_codes(db, 1);
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_timeout(db, AGC_DB_BUSY_MS);
	rc = agc_db_begin_write(db, NULL);
	busy = rc == AGC_EINUSE;
	if (rc == 0)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return busy ? 1 : rc < 0 ? -1 : 0;
}

/* ---- the change invariant (R4) ---------------------------------------------------------- */

#define WATCH_MAX_ROWS ((size_t)1 << 22)    /* rows held outside the plan, and planned values */
#define WATCH_MAX_TABLES ((size_t)1 << 16)
#define WATCH_NONE ((size_t)-1)

/* Add k to a set of rows or values, which holds at most WATCH_MAX_ROWS. */
static int watch_add(agc_hset *s, const unsigned char *k, size_t n)
{
	if (s->n >= WATCH_MAX_ROWS && !agc_hset_has(s, k, n))
		return agc_error_set(-1, "more than %zu rows to account for in one transaction", WATCH_MAX_ROWS);
	return agc_hset_add(s, k, n);
}

/* A value as bytes that compare equal only for the same type and the same content. */
static int encode_value(agc_buf *b, sqlite3_value *v)
{
	int type = v ? sqlite3_value_type(v) : SQLITE_NULL;
	unsigned char t = (unsigned char)type;
	uint32_t len;

	if (agc_buf_add(b, &t, 1) < 0)
		return -1;
	switch (type) {
	case SQLITE_INTEGER: {
		sqlite3_int64 i = sqlite3_value_int64(v);

		return agc_buf_add(b, &i, sizeof(i));
	}
	case SQLITE_FLOAT: {
		double d = sqlite3_value_double(v);

		return agc_buf_add(b, &d, sizeof(d));
	}
	case SQLITE_TEXT:
	case SQLITE_BLOB: {
		/* the pointer first, then the length, as SQLite asks (a conversion may change it) */
		const void *p = type == SQLITE_TEXT ? (const void *)sqlite3_value_text(v) : sqlite3_value_blob(v);

		len = (uint32_t)sqlite3_value_bytes(v);
		if (!p && len)
			return agc_error_oom();
		if (agc_buf_add(b, &len, sizeof(len)) < 0)
			return -1;
		return len ? agc_buf_add(b, p, len) : 0;
	}
	default:
		return 0;
	}
}

typedef struct wpred {
	int col;      /* the column's index in the table (table_xinfo cid, as the hook counts) */
	agc_hset values;  /* encoded values that make a row planned */
} wpred;

typedef struct wtable {
	char *name;
	bool wr;      /* WITHOUT ROWID: keyed by its primary key */
	int *pk;
	size_t npk;
	struct { wpred *v; size_t n, cap; } preds;
} wtable;

struct agc_db_watch {
	sqlite3 *db;
	struct { wtable *v; size_t n, cap; } t;
	size_t last;        /* the table of the last change */
	agc_hset rows;          /* table index + key of rows there now that the plan does not account
			       for yet: inserted here, or planned and changed here */
	char *violation;    /* the table of a change outside the plan */
	char *failure;      /* why the watch could not tell */
	agc_buf key;
};

static size_t watch_table(agc_db_watch *w, const char *name)
{
	size_t i;

	if (w->last < w->t.n && strcmp(w->t.v[w->last].name, name) == 0)
		return w->last;
	for (i = 0; i < w->t.n; i++)
		if (strcmp(w->t.v[i].name, name) == 0)
			return w->last = i;
	return WATCH_NONE;
}

/* A change outside the plan: remember its table, and stop the statement (its transaction is
 * rolled back). */
static void watch_violation(agc_db_watch *w, const char *table)
{
	if (!w->violation && !w->failure)
		w->violation = strdup(table ? table : "?");
	if (!w->violation)
		w->failure = strdup("out of memory");
	sqlite3_interrupt(w->db);
}

static void watch_failure(agc_db_watch *w, const char *what)
{
	if (!w->failure)
		w->failure = strdup(what);
	sqlite3_interrupt(w->db);
}

/* The key of the row the hook is called for (old: before the change), into w->key:
 * the table's index, then the rowid or the primary key's values. */
static int watch_key(agc_db_watch *w, size_t ti, bool old, sqlite3_int64 rowid)
{
	const wtable *t = &w->t.v[ti];
	uint32_t tix = (uint32_t)ti;
	size_t i;

	agc_buf_clear(&w->key);
	if (agc_buf_add(&w->key, &tix, sizeof(tix)) < 0)
		return -1;
	if (!t->wr)
		return agc_buf_add(&w->key, &rowid, sizeof(rowid));
	for (i = 0; i < t->npk; i++) {
		sqlite3_value *v = NULL;
		int rc = old ? sqlite3_preupdate_old(w->db, t->pk[i], &v) : sqlite3_preupdate_new(w->db, t->pk[i], &v);

		if (rc != SQLITE_OK || encode_value(&w->key, v) < 0)
			return -1;
	}
	return 0;
}

/* Whether the row about to change was a planned row (its values before the change). */
static int watch_planned(agc_db_watch *w, size_t ti)
{
	const wtable *t = &w->t.v[ti];
	agc_buf b = AGC_BUF_INIT;
	size_t i;
	int found = 0;

	for (i = 0; i < t->preds.n && !found; i++) {
		sqlite3_value *v = NULL;

		agc_buf_clear(&b);
		if (sqlite3_preupdate_old(w->db, t->preds.v[i].col, &v) != SQLITE_OK || encode_value(&b, v) < 0) {
			found = -1;
			break;
		}
		found = agc_hset_has(&t->preds.v[i].values, (const unsigned char *)b.ptr, b.len);
	}
	agc_buf_release(&b);
	return found;
}

/* A row that was there is about to go (a delete, or the old key of an update that moves it). */
static void watch_gone(agc_db_watch *w, size_t ti)
{
	int planned;

	/* inserted here and deleted again, or planned, changed, and deleted now: accounted for */
	if (agc_hset_del(&w->rows, (const unsigned char *)w->key.ptr, w->key.len))
		return;
	/* first touched now: it was there before the transaction */
	planned = watch_planned(w, ti);
	if (planned < 0)
		watch_failure(w, "cannot read a deleted row's values");
	else if (!planned)
		watch_violation(w, w->t.v[ti].name);
}

static void watch_hook(void *ud, sqlite3 *db, int op, const char *zdb, const char *zname, sqlite3_int64 k1,
		       sqlite3_int64 k2)
{
	agc_db_watch *w = ud;
	size_t ti;

	(void)db;
	if (w->violation || w->failure)
		return;
	/* the purge changes only its own tables of the main database */
	if (!zdb || strcmp(zdb, "main") != 0 || !zname || (ti = watch_table(w, zname)) == WATCH_NONE) {
		watch_violation(w, zname);
		return;
	}
	switch (op) {
	case SQLITE_DELETE:
		if (watch_key(w, ti, true, k1) < 0)
			watch_failure(w, "cannot read a deleted row's key");
		else
			watch_gone(w, ti);
		break;
	case SQLITE_INSERT:
		/* a new row: it must be gone again before the commit */
		if (watch_key(w, ti, false, k2) < 0 ||
		    watch_add(&w->rows, (const unsigned char *)w->key.ptr, w->key.len) < 0)
			watch_failure(w, "cannot record an inserted row");
		break;
	case SQLITE_UPDATE: {
		agc_buf old = AGC_BUF_INIT;
		bool moved;
		int planned;

		if (watch_key(w, ti, true, k1) < 0 || agc_buf_add(&old, w->key.ptr, w->key.len) < 0 ||
		    watch_key(w, ti, false, k2) < 0) {
			agc_buf_release(&old);
			watch_failure(w, "cannot read an updated row's key");
			break;
		}
		moved = old.len != w->key.len || memcmp(old.ptr, w->key.ptr, old.len) != 0;
		if (moved) {
			/* the old row goes, a new one comes */
			agc_buf tmp = w->key;

			w->key = old;
			watch_gone(w, ti);
			old = w->key;
			w->key = tmp;
			if (!w->violation && !w->failure &&
			    watch_add(&w->rows, (const unsigned char *)w->key.ptr, w->key.len) < 0)
				watch_failure(w, "cannot record an updated row");
		} else if (!agc_hset_has(&w->rows, (const unsigned char *)w->key.ptr, w->key.len)) {
			/* a row that was there, changed: only a planned one, and it must go */
			planned = watch_planned(w, ti);
			if (planned < 0)
				watch_failure(w, "cannot read an updated row's values");
			else if (!planned)
				watch_violation(w, w->t.v[ti].name);
			else if (watch_add(&w->rows, (const unsigned char *)w->key.ptr, w->key.len) < 0)
				watch_failure(w, "cannot record an updated row");
		}
		agc_buf_release(&old);
		break;
	}
	default:
		watch_violation(w, zname);
	}
}

/* The column indexes of table's primary key, as the pre-update hook counts columns. */
static int watch_pk(sqlite3 *db, wtable *t)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT cid FROM pragma_table_xinfo(?1) WHERE pk > 0 ORDER BY pk", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return agc_db_fail(db, rc, "cannot read a primary key");
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int *v = realloc(t->pk, (t->npk + 1) * sizeof(*v));

		if (!v) {
			sqlite3_finalize(st);
			return agc_error_oom();
		}
		t->pk = v;
		t->pk[t->npk++] = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return agc_db_fail(db, rc, "cannot read a primary key");
	if (!t->npk)
		return agc_error_set(-1, "table '%s' has no primary key", t->name);
	return 0;
}

int agc_db_watch_new(sqlite3 *db, agc_db_watch **out)
{
	agc_db_watch *w;
	sqlite3_stmt *st = NULL;
	int rc;

	/* without the hook nothing could be watched: refuse rather than delete blind (R4) */
	if (!sqlite3_compileoption_used("ENABLE_PREUPDATE_HOOK"))
		return agc_error_set(-1, "this SQLite library has no pre-update hook: database rows cannot be "
					 "deleted safely");
	w = calloc(1, sizeof(*w));
	if (!w)
		return agc_error_oom();
	w->db = db;
	w->last = WATCH_NONE;
	rc = sqlite3_prepare_v2(db, "SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table'",
				-1, &st, NULL);
	if (rc != SQLITE_OK) {
		agc_db_fail(db, rc, "cannot list tables");
		agc_db_watch_free(w);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		wtable *t = AGC_ARRAY_PUSH(&w->t, WATCH_MAX_TABLES);

		if (!t || !name || !(t->name = agc_strdup(name))) {
			if (t)
				w->t.n--;
			rc = SQLITE_NOMEM;
			break;
		}
		t->wr = sqlite3_column_int(st, 1) != 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		if (rc != SQLITE_NOMEM)
			agc_db_fail(db, rc, "cannot list tables");
		agc_db_watch_free(w);
		return -1;
	}
	for (size_t i = 0; i < w->t.n; i++)
		if (w->t.v[i].wr && watch_pk(db, &w->t.v[i]) < 0) {
			agc_db_watch_free(w);
			return -1;
		}
	sqlite3_preupdate_hook(db, watch_hook, w);
	*out = w;
	return 0;
}

int agc_db_watch_plan(agc_db_watch *w, const char *table, const char *col, const char *values_sql,
		      const char *ids)
{
	size_t ti = watch_table(w, table);
	sqlite3_stmt *st = NULL;
	wpred *pr;
	agc_buf b = AGC_BUF_INIT;
	int rc, cid = -1;

	/* A virtual table (FTS, R-tree) is not a table the pre-update hook sees: its rows
	 * cannot be checked against the plan (R4). */
	if (ti == WATCH_NONE)
		return agc_error_set(AGC_EUNSAFE, "table '%s' cannot be watched (a virtual table?)", table);
	rc = sqlite3_prepare_v2(w->db, "SELECT cid FROM pragma_table_xinfo(?1) WHERE name = ?2", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return agc_db_fail(w->db, rc, table);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		cid = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (cid < 0)
		return agc_error_set(-1, "no column '%s' in table '%s'", col, table);
	pr = AGC_ARRAY_PUSH(&w->t.v[ti].preds, 64);
	if (!pr)
		return -1;
	pr->col = cid;
	rc = sqlite3_prepare_v2(w->db, values_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return agc_db_fail(w->db, rc, table);
	sqlite3_bind_text(st, 1, ids, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		agc_buf_clear(&b);
		if (encode_value(&b, sqlite3_column_value(st, 0)) < 0 ||
		    watch_add(&pr->values, (const unsigned char *)b.ptr, b.len) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
	}
	sqlite3_finalize(st);
	agc_buf_release(&b);
	if (rc == SQLITE_NOMEM)
		return -1;
	if (rc != SQLITE_DONE)
		return agc_db_fail(w->db, rc, table);
	return 0;
}

bool agc_db_watch_pending(const agc_db_watch *w)
{
	return !w->violation && !w->failure && w->rows.n > 0;
}

int agc_db_watch_check(const agc_db_watch *w, const char **table)
{
	const agc_hent *e;

	if (w->failure)
		return agc_error_set(-1, "cannot watch the rows the purge changes: %s", w->failure);
	if (w->violation) {
		*table = w->violation;
		return 1;
	}
	/* rows there now that were not there before, or planned rows changed and kept */
	if ((e = agc_hset_any(&w->rows))) {
		uint32_t ti;

		memcpy(&ti, e->key, sizeof(ti));
		*table = ti < w->t.n ? w->t.v[ti].name : "?";
		return 1;
	}
	return 0;
}

void agc_db_watch_free(agc_db_watch *w)
{
	size_t i, j;

	if (!w)
		return;
	sqlite3_preupdate_hook(w->db, NULL, NULL);
	for (i = 0; i < w->t.n; i++) {
		for (j = 0; j < w->t.v[i].preds.n; j++)
			agc_hset_release(&w->t.v[i].preds.v[j].values);
		free(w->t.v[i].preds.v);
		free(w->t.v[i].pk);
		free(w->t.v[i].name);
	}
	free(w->t.v);
	agc_hset_release(&w->rows);
	free(w->violation);
	free(w->failure);
	agc_buf_release(&w->key);
	free(w);
}

int agc_db_table_virtual(sqlite3 *db, const char *table)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db,
				"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 AND "
				"sql LIKE 'CREATE VIRTUAL TABLE%'",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return agc_db_fail(db, rc, table);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : agc_db_fail(db, rc, table);
}

#define CKPT_TRIES 10
#define CKPT_WAIT_MS 50

int agc_db_checkpoint(sqlite3 *db)
{
	int log = 0, done = 0, rc = SQLITE_OK, tries;

	sqlite3_busy_timeout(db, 0);
	for (tries = 0; tries < CKPT_TRIES; tries++) {
		rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		if (tries + 1 < CKPT_TRIES) {
			struct timespec ts = {0, CKPT_WAIT_MS * 1000000L};

			nanosleep(&ts, NULL);
		}
	}
	sqlite3_busy_timeout(db, AGC_DB_BUSY_MS);
	return rc;
}

int agc_db_room(const char *path, uint64_t *need, uint64_t *avail)
{
	char *wal = agc_strfmt("%s-wal", path), *dir = agc_strdup(path), *slash;
	struct stat st, wst;
	struct statvfs vfs;
	uint64_t n, a;
	int rc = -1;

	if (!wal || !dir) {
		agc_error_oom();
		goto out;
	}
	if (stat(path, &st) < 0) {
		agc_error_errno(-1, errno, "cannot measure '%s'", path);
		goto out;
	}
	n = 2 * ((uint64_t)st.st_size + (stat(wal, &wst) == 0 ? (uint64_t)wst.st_size : 0));
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	if (statvfs(dir, &vfs) < 0) {
		agc_error_errno(-1, errno, "cannot tell the free space of '%s'", dir);
		goto out;
	}
	a = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (need)
		*need = n;
	if (avail)
		*avail = a;
	rc = a >= n;
out:
	free(wal);
	free(dir);
	return rc;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

int agc_fdset_take(agc_fdset *s)
{
	struct { int *v; size_t n, cap; } a = {0};
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int self;

	memset(s, 0, sizeof(*s));
	if (!d)
		return agc_error_errno(-1, errno, "cannot list '/proc/self/fd'");
	self = dirfd(d);
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		int *slot;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end || fd == self)
			continue;
		if (!(slot = AGC_ARRAY_PUSH(&a, (size_t)1 << 20))) {
			closedir(d);
			free(a.v);
			return -1;
		}
		*slot = (int)fd;
	}
	closedir(d);
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), int_cmp);
	s->v = a.v;
	s->n = a.n;
	return 0;
}

void agc_fdset_release(agc_fdset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int agc_db_verify_open(const agc_fdset *before, int dfd, const char *leaf, const struct stat *want,
		       const char *path)
{
	static const char *const sfx[] = {"-wal", "-shm", "-journal"};
	agc_fdset now;
	size_t i, k, ll = strlen(leaf);
	bool main_seen = false;
	int rc = 0;

	if (agc_fdset_take(&now) < 0)
		return -1;
	for (i = 0; i < now.n && rc == 0; i++) {
		char link[64], target[PATH_MAX + 1];
		const char *base;
		struct stat st, here;
		ssize_t n;

		if (bsearch(&now.v[i], before->v, before->n, sizeof(*before->v), int_cmp))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", now.v[i]);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0 || fstat(now.v[i], &st) < 0)
			continue;
		target[n] = '\0';
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
		if (strncmp(base, leaf, ll) != 0)
			continue;
		if (base[ll] == '\0') {
			if (st.st_dev != want->st_dev || st.st_ino != want->st_ino)
				rc = -1;
			else
				main_seen = true;
			continue;
		}
		for (k = 0; k < sizeof(sfx) / sizeof(*sfx); k++) {
			if (strcmp(base + ll, sfx[k]) != 0)
				continue;
			/* the file of that name in the dir that was checked, now */
			if (fstatat(dfd, base, &here, AT_SYMLINK_NOFOLLOW) < 0 || here.st_dev != st.st_dev ||
			    here.st_ino != st.st_ino)
				rc = -1;
		}
	}
	agc_fdset_release(&now);
	if (rc == 0 && !main_seen)
		rc = -1;
	if (rc < 0)
		return agc_error_set(-1, "'%s' was not the file that was checked when SQLite opened it (a dir on "
					 "the way was replaced meanwhile)", path);
	return 0;
}
