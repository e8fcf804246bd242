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

/* Open path read-write for a purge: never created, never through a symlink, a short busy
 * timeout, secure_delete and foreign keys on. Same returns. */
int agc_db_open_rw(const char *path, sqlite3 **out);

/* The names of the database's tables (sqlite_master type 'table', not sqlite_*), malloc'd
 * array of malloc'd strings. Returns 0 or -1. */
int agc_db_tables(sqlite3 *db, char ***names, size_t *n);
void agc_db_strv_free(char **v, size_t n);

/* Whether table has a column named col (PRAGMA table_info). */
bool agc_db_has_column(sqlite3 *db, const char *table, const char *col);

/* For a dry run: 1 when another connection holds the write lock of the WAL database at path,
 * 0 when not, -1 when it cannot be told. Creates no file and changes nothing. */
int agc_db_write_busy(const char *path);

/* Whether table from has a foreign key to table to. */
bool agc_db_references(sqlite3 *db, const char *from, const char *to);

/* An identifier quoted for SQL: "name" with inner quotes doubled (malloc'd). */
char *agc_db_ident(const char *name);

/* Run sql (no result rows); AGC_EINUSE on SQLITE_BUSY/LOCKED, -1 on other errors. */
int agc_db_exec(sqlite3 *db, const char *sql);

/* Map a SQLite result code to AGC_EINUSE (busy, locked) or -1 with the message set. */
int agc_db_fail(sqlite3 *db, int rc, const char *what);

#endif
