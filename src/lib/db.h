/* SQLite helpers: read-only opens for discovery, schema introspection, and the write path of
 * a purge (R6, R8). */
#ifndef AGC_DB_H
#define AGC_DB_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGC_DB_BUSY_MS 200  /* a purge waits this long for a write lock, then refuses */

/* Open path read-only (SQLITE_OPEN_READONLY|SQLITE_OPEN_NOFOLLOW) and check that it is a
 * SQLite database by reading its schema. Returns 0, AGC_EINUSE when it is locked, or -1 (not
 * SQLite, unreadable: error set). *out is set only on success. */
int agc_db_open_ro(const char *path, sqlite3 **out);

/* file:PATH?immutable=1, the path percent-encoded but for its plain characters (malloc'd;
 * NULL on OOM, error set). */
char *agc_db_uri_immutable(const char *path);

/* agc_db_open_ro for a database that reading must not change (a session's own store, a shared
 * one read for a dry run): with a WAL that holds pages, a plain read-only open (which makes
 * no file beside it when its -shm is there); without one, immutable, so no -wal or -shm is
 * made beside it and no lock is taken. Same returns. */
int agc_db_open_peek(const char *path, sqlite3 **out);

/* A database of a session's own (a Cursor chat's store) read without changing a byte of it, its
 * -wal or its -shm: without a WAL that holds pages, agc_db_open_peek; with one, the file and its
 * WAL copied (at most AGC_DB_SNAPSHOT_MAX bytes) into a private dir under $TMPDIR and read
 * there. Errors name path. Close with agc_db_close_snapshot, which removes the copy. */
#define AGC_DB_SNAPSHOT_MAX ((uint64_t)64 << 20)
int agc_db_open_snapshot(const char *path, sqlite3 **out);
void agc_db_close_snapshot(sqlite3 *db);

/* Open path read-write for a purge: never created, never through a symlink, a short busy
 * timeout, secure_delete and foreign keys on. Same returns. */
int agc_db_open_rw(const char *path, sqlite3 **out);

/* The names of the database's tables (sqlite_master type 'table', not sqlite_*), malloc'd
 * array of malloc'd strings. Returns 0 or -1. */
int agc_db_tables(sqlite3 *db, char ***names, size_t *n);
void agc_db_strv_free(char **v, size_t n);

/* Whether table has a column named col (PRAGMA table_info). */
bool agc_db_has_column(sqlite3 *db, const char *table, const char *col);
/* SPEC "Output", Sizes: an SQL expression for the stored size of one row of table, the bytes
 * of its column values (TEXT and BLOB their length in bytes, a number the length of its text,
 * NULL 0: length(CAST(value AS BLOB)), one cheap pass however the row is typed), its
 * columns prefixed by "alias." when alias is given. Identifiers come from the table's own
 * schema (table_info), quoted. malloc'd; NULL (error set) on failure. The one rule that show,
 * purge and ls use for rows. */
char *agc_db_row_size_sql(sqlite3 *db, const char *table, const char *alias);

/* The automatic checkpoint of db's connection off for a purge's transaction (the commit then
 * writes only the WAL; the purge checkpoints once itself, R6); *saved receives the setting
 * it had, for agc_db_autocheckpoint_restore. Returns 0 or -1. */
int agc_db_autocheckpoint_off(sqlite3 *db, int *saved);
int agc_db_autocheckpoint_restore(sqlite3 *db, int saved);

/* For a dry run: 1 when the write lock a purge takes (agc_db_begin_write) could not be had
 * now (another connection writes, or, in rollback-journal mode, reads), 0 when it could, -1
 * when it cannot be told. Creates no file and changes nothing. */
int agc_db_write_busy(const char *path);
/* 1 when table is a virtual table (FTS, R-tree: the pre-update hook does not see it), 0 when
 * not, -1 on error. */
int agc_db_table_virtual(sqlite3 *db, const char *table);

/* Whether table from has a foreign key to table to. */
bool agc_db_references(sqlite3 *db, const char *from, const char *to);
/* The order rows are deleted in, one table at a time: of the tables still in todo (n slots,
 * NULL where one was taken), the first that no other of them references by a foreign key
 * (children before their parents); in a cycle, the first still there. n when none is left. */
size_t agc_db_next_table(sqlite3 *db, const char *const *todo, size_t n);

/* 0 when the database's -wal, -shm and -journal beside path are regular files or absent (what
 * every open checks), else -1 with the error set. */
int agc_db_sidecars_ok(const char *path);

/* The columns and foreign keys of every table, read in two statements: what a discovery asks
 * agc_db_has_column and agc_db_references for, many times over, answered from memory with
 * the same answers (a table named in any letter case, a column or a referenced table as
 * written). Read when a store is opened; a change of schema after that is the agent's
 * migration, which the discovery's own statements meet as they do without it. */
typedef struct agc_db_schema {
	struct agc_db_col { char *table, *name; } *cols;
	size_t ncols, capc;
	struct agc_db_fk { char *from, *to; } *fks;
	size_t nfks, capf;
} agc_db_schema;

int agc_db_schema_read(sqlite3 *db, agc_db_schema *s);
void agc_db_schema_release(agc_db_schema *s);
bool agc_db_schema_has_column(const agc_db_schema *s, const char *table, const char *col);
bool agc_db_schema_references(const agc_db_schema *s, const char *from, const char *to);
/* agc_db_next_table from the snapshot */
size_t agc_db_schema_next_table(const agc_db_schema *s, const char *const *todo, size_t n);

/* An identifier quoted for SQL: "name" with inner quotes doubled (malloc'd). */
char *agc_db_ident(const char *name);

/* Run sql (no result rows); AGC_EINUSE on SQLITE_BUSY/LOCKED, -1 on other errors. */
int agc_db_exec(sqlite3 *db, const char *sql);

/* wal_checkpoint(TRUNCATE) without waiting for writers: a reader mid-transaction makes it
 * busy, so a few short tries (about half a second in all). Returns a SQLite result code
 * (SQLITE_OK; a database not in WAL mode is SQLITE_OK too). */
int agc_db_checkpoint(sqlite3 *db);

/* Whether the file system of database path has room for a rebuild (VACUUM writes a copy of
 * the pages beside it: twice the database and its -wal, to be safe). *need and *avail (may be
 * NULL) get the figures. 1 room, 0 none, -1 error set. */
int agc_db_room(const char *path, uint64_t *need, uint64_t *avail);

/* The file descriptors this process has open (/proc/self/fd), sorted: taken before SQLite
 * opens a database, so that the ones it opens can be told (agc_db_verify_open). */
typedef struct agc_fdset {
	int *v;
	size_t n;
} agc_fdset;
int agc_fdset_take(agc_fdset *s);
void agc_fdset_release(agc_fdset *s);

/* R2 for a database SQLite opened by its path after the path was checked one component at a
 * time: a dir on the way swapped for a link in between would make it open another tree's
 * file. Every file opened since before (the connection's, this thread alone opening files
 * meanwhile) that bears the database's name is the inode want, and every one that bears the
 * name of its -wal, -shm or -journal is the file of that name in dfd (the dir the check walked
 * to, still open); and the database itself is among them. 0, or -1 with the error set
 * ("'<path>' was not the file that was checked when SQLite opened it"). */
int agc_db_verify_open(const agc_fdset *before, int dfd, const char *leaf, const struct stat *want,
		       const char *path);

/* Map a SQLite result code to AGC_EINUSE (busy, locked) or -1 with the message set. */
int agc_db_fail(sqlite3 *db, int rc, const char *what);

/* Whether a SQLite result code (extended or primary) means busy or locked. */
bool agc_db_is_busy(int rc);

/* Take the write lock of db for a purge (R6): BEGIN EXCLUSIVE in rollback-journal mode, where
 * a reader's shared lock would otherwise make the COMMIT busy after the deletes, and BEGIN
 * IMMEDIATE in WAL mode, where readers never block a commit. *wal tells which (may be NULL).
 * Returns 0, AGC_EINUSE (busy or locked) or -1. */
int agc_db_begin_write(sqlite3 *db, bool *wal);

/* ---- the change invariant (R4) ----------------------------------------------------------
 * A watch records, through SQLite's pre-update hook, every row the connection changes: the
 * plan's own deletes and whatever the database's triggers and foreign-key actions do with
 * them. A row is planned when, before the transaction first touched it, one of its table's
 * planned columns held one of the planned values (compared exactly, type and bytes: a
 * NOCASE column or an affinity conversion that widens the SQL's match is not the plan). The
 * net change passes when every row the transaction touched was a planned row now deleted,
 * or a row it inserted and deleted again. Rows of WITHOUT ROWID tables are keyed by their
 * primary key. Virtual tables are not seen by the hook; their shadow tables are, so a
 * trigger that maintains a full-text index refuses the purge. */
typedef struct agc_db_watch agc_db_watch;

/* Start watching db (no other pre-update hook may be set on it). Returns 0 or -1. */
int agc_db_watch_new(sqlite3 *db, agc_db_watch **out);

/* Declare rows of table planned: those whose column col holds a value that values_sql (a
 * SELECT of one column, ?1 bound to ids) returns now, before any delete. Returns 0 or -1. */
int agc_db_watch_plan(agc_db_watch *w, const char *table, const char *col, const char *values_sql,
		      const char *ids);

/* Rows the transaction inserted, or planned rows it changed, that are still there: running
 * the plan's deletes again may account for them. */
bool agc_db_watch_pending(const agc_db_watch *w);

/* The verdict before COMMIT: 0 when the net change is only planned deletes, 1 when not
 * (*table names a table with another change; borrowed from w), -1 when the watch failed (a
 * value it could not read, a limit: error set). */
int agc_db_watch_check(const agc_db_watch *w, const char **table);

/* Remove the hook and free the watch (NULL is fine). */
void agc_db_watch_free(agc_db_watch *w);

#endif
