/* compact (SPEC "compact"): each database that an agent's sessions share, when no process but
 * agentgc holds it, its -wal or its -shm: wal_checkpoint(TRUNCATE) without waiting, then
 * VACUUM when its file system has room for the copy, so that what purges deleted (and what
 * the agents' own deletes left in free pages) is gone from the file. A held database is left
 * with its holders. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "core.h"
#include "db.h"
#include "error.h"
#include "holders.h"
#include "pending.h"
#include "walk.h"

typedef struct compact_run {
	agc_ctx *ctx;
	const agc_compact_opts *o;
	char *const *only;   /* sorted absolute paths: only these databases (agc_compact_paths) */
	size_t n_only;
	const agc_adapter *ad;
	const agc_rootset *rs;
	int (*cb)(const agc_compact_info *ci, void *ud);
	void *ud;
	bool stop;
} compact_run;

/* A PRAGMA's one integer, or -1. */
static int64_t pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The free pages of db in bytes (PRAGMA freelist_count x page_size), 0 when unknown. */
static uint64_t free_bytes(sqlite3 *db)
{
	int64_t n = pragma_int(db, "PRAGMA freelist_count"), size = pragma_int(db, "PRAGMA page_size");

	return n > 0 && size > 0 ? (uint64_t)n * (uint64_t)size : 0;
}

/* The bytes of rel's -wal beside it in dir dfd (0 when there is none). */
static uint64_t wal_size(int dfd, const char *leaf)
{
	char *wal = agc_strfmt("%s-wal", leaf);
	struct stat st;
	uint64_t b = 0;

	if (wal && fstatat(dfd, wal, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		b = (uint64_t)st.st_size;
	free(wal);
	return b;
}

/* Whether the -wal and -shm beside leaf are plain files or absent: a link or a FIFO there
 * would be opened by SQLite as the database's own (R2, R8). */
static const char *sidecars_bad(int dfd, const char *leaf)
{
	static const char *const sfx[] = {"-wal", "-shm"};
	size_t i;

	for (i = 0; i < 2; i++) {
		char *f = agc_strfmt("%s%s", leaf, sfx[i]);
		struct stat st;
		int rc = f ? fstatat(dfd, f, &st, AT_SYMLINK_NOFOLLOW) : -1;

		free(f);
		if (rc < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			return "symlink";
		if (!S_ISREG(st.st_mode))
			return "not a regular file";
	}
	return NULL;
}

static void holders_info(const agc_holders *h, agc_holder_info **out, size_t *n)
{
	size_t i;

	*out = h->n ? calloc(h->n, sizeof(**out)) : NULL;
	*n = *out ? h->n : 0;
	for (i = 0; i < *n; i++) {
		(*out)[i].pid = h->v[i].pid;
		(*out)[i].command = h->v[i].command;
		(*out)[i].why = agc_why_name(h->v[i].why);
		(*out)[i].what = h->v[i].what;
	}
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int one_db(size_t root, const char *rel, void *ud)
{
	compact_run *C = ud;
	const agc_root *r = &C->rs->v[root];
	agc_compact_info ci;
	agc_holders h = {0};
	agc_holder_info *hi = NULL;
	agc_fdset fds = {0};
	sqlite3 *db = NULL;
	struct stat st, now;
	const char *leaf;
	char *abs = NULL, *msg = NULL;
	int rootfd = -1, dfd = -1, err, rc;
	bool dry = C->o->flags & AGC_PURGE_DRY_RUN;

	memset(&ci, 0, sizeof(ci));
	ci.agent = C->ad->name;
	abs = agc_plan_abspath(C->rs, root, rel);
	if (!abs)
		return agc_error_oom();
	if (C->only && !bsearch(&abs, C->only, C->n_only, sizeof(*C->only), path_cmp)) {
		free(abs);
		return 0;
	}
	ci.path = abs;
	ci.status = "skipped";
	/* R2: reached through real dirs, the database itself no link */
	rootfd = r->real ? agc_walk_open_root(r->real) : -1;
	if (rootfd < 0) {
		ci.status = "error";
		ci.reason = msg = agc_strfmt("cannot open '%s': %s", r->path, strerror(errno));
		goto report;
	}
	switch (agc_walk_parent(rootfd, rel, &dfd, &leaf, &err)) {
	case AGC_WALK_OK:
		break;
	case AGC_WALK_SYMLINK:
		ci.reason = "symlink";
		goto report;
	default:
		ci.status = "error";
		ci.reason = msg = agc_strfmt("cannot reach '%s': %s", abs, strerror(err ? err : EIO));
		goto report;
	}
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT) {
			/* gone since it was listed: nothing to say */
			rc = 0;
			goto done;
		}
		ci.status = "error";
		ci.reason = msg = agc_strfmt("cannot inspect '%s': %s", abs, strerror(errno));
		goto report;
	}
	if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
		ci.reason = S_ISLNK(st.st_mode) ? "symlink" : "not a regular file";
		goto report;
	}
	if ((ci.reason = sidecars_bad(dfd, leaf)))
		goto report;
	ci.wal_bytes = wal_size(dfd, leaf);
	ci.bytes_before = (uint64_t)st.st_size + ci.wal_bytes;
	/* nothing but agentgc may hold it: a reader would see it rebuilt under it */
	if (agc_db_holders(C->ctx->procroot, abs, &h) < 0) {
		ci.reason = "in-use";
		agc_holders_add(&h, 0, AGC_WHY_UNREADABLE, agc_error_last(), NULL, AGC_HOLDER_NO_FILE);
	} else if (h.n) {
		ci.reason = "in-use";
	}
	if (ci.reason) {
		holders_info(&h, &hi, &ci.n_holders);
		ci.holders = hi;
		goto report;
	}
	if (dry) {
		/* a look changes nothing: no -wal or -shm made beside it */
		if (agc_db_open_peek(abs, &db) < 0) {
			ci.status = "error";
			ci.reason = msg = agc_strdup(agc_error_last());
			goto report;
		}
		ci.status = "dry-run";
		ci.free_bytes = free_bytes(db);
		rc = agc_db_room(abs, &ci.need, &ci.avail);
		if (rc == 0)
			ci.reason = "free-space";
		goto report;
	}
	if (agc_fdset_take(&fds) < 0 || agc_db_open_rw(abs, &db) < 0) {
		ci.status = "error";
		ci.reason = msg = agc_strdup(agc_error_last());
		goto report;
	}
	/* R2: the files SQLite opened by the path are the ones checked, in the dir walked to (a
	 * dir swapped for a link in between would lead it to another tree's database) */
	if (agc_db_exec(db, "BEGIN IMMEDIATE") != 0 || agc_db_verify_open(&fds, dfd, leaf, &st, abs) < 0) {
		ci.reason = strstr(agc_error_last(), "was not the file that was checked") ? "symlink" : "busy";
		goto report;
	}
	agc_db_exec(db, "ROLLBACK");
	rc = agc_db_checkpoint(db);
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
		ci.reason = "busy";
		goto report;
	}
	if (rc != SQLITE_OK) {
		ci.status = "error";
		ci.reason = msg = agc_strfmt("cannot checkpoint '%s': %s", abs, sqlite3_errmsg(db));
		goto report;
	}
	ci.free_bytes = free_bytes(db);
	rc = agc_db_room(abs, &ci.need, &ci.avail);
	if (rc <= 0) {
		if (rc < 0) {
			ci.status = "error";
			ci.reason = msg = agc_strdup(agc_error_last());
		} else {
			ci.reason = "free-space";
		}
		goto report;
	}
	rc = agc_db_exec(db, "VACUUM");
	if (rc == AGC_EINUSE) {
		ci.reason = "busy";
		goto report;
	}
	if (rc < 0) {
		ci.status = "error";
		ci.reason = msg = agc_strfmt("cannot rebuild '%s': %s", abs, agc_error_last());
		goto report;
	}
	/* the rebuilt pages went through the WAL: fold them in and empty it */
	rc = agc_db_checkpoint(db);
	ci.status = rc == SQLITE_OK ? "compacted" : "partial";
	if (rc != SQLITE_OK)
		ci.reason = "busy";
	else if (agc_pending_clear(st.st_dev, st.st_ino) < 0)
		ci.reason = msg = agc_strfmt("agentgc's record of an unfinished checkpoint could not be cleared (%s)",
					     agc_error_last());
	if (fstatat(dfd, leaf, &now, AT_SYMLINK_NOFOLLOW) == 0)
		ci.bytes_after = (uint64_t)now.st_size + wal_size(dfd, leaf);
report:
	rc = C->cb && C->cb(&ci, C->ud) ? 1 : 0;
	if (rc)
		C->stop = true;
done:
	sqlite3_close(db);
	agc_fdset_release(&fds);
	free(hi);
	agc_holders_release(&h);
	free(msg);
	free(abs);
	if (dfd >= 0)
		close(dfd);
	if (rootfd >= 0)
		close(rootfd);
	return rc;
}

static int compact_in(agc_ctx *ctx, const agc_compact_opts *o, char *const *only, size_t n_only,
		      int (*cb)(const agc_compact_info *ci, void *ud), void *ud);

int agc_compact(agc_ctx *ctx, const agc_compact_opts *o, int (*cb)(const agc_compact_info *ci, void *ud), void *ud)
{
	return compact_in(ctx, o, NULL, 0, cb, ud);
}

int agc_compact_paths(agc_ctx *ctx, unsigned flags, char **paths, size_t n,
		      int (*cb)(const agc_compact_info *ci, void *ud), void *ud)
{
	agc_compact_opts o = AGC_COMPACT_OPTS_INIT;

	if (!n)
		return 0;
	o.flags = flags & AGC_PURGE_DRY_RUN;
	qsort(paths, n, sizeof(*paths), path_cmp);
	return compact_in(ctx, &o, paths, n, cb, ud);
}

static int compact_in(agc_ctx *ctx, const agc_compact_opts *o, char *const *only, size_t n_only,
		      int (*cb)(const agc_compact_info *ci, void *ud), void *ud)
{
	compact_run C;
	unsigned all = 0;
	size_t a;
	int rc = 0;

	if (!o || o->version != AGC_COMPACT_OPTS_VERSION)
		return agc_error_set(-1, "agc_compact needs options of version %d", AGC_COMPACT_OPTS_VERSION);
	if (o->flags & ~(unsigned)AGC_PURGE_DRY_RUN)
		return agc_error_set(-1, "compact takes only the dry-run flag (flags 0x%x)", o->flags);
	for (a = 0; agc_adapter_table[a]; a++)
		all |= agc_adapter_table[a]->bit;
	if (o->agents & ~all)
		return agc_error_set(-1, "unknown agent bits 0x%x", o->agents & ~all);
	memset(&C, 0, sizeof(C));
	C.ctx = ctx;
	C.o = o;
	C.only = only;
	C.n_only = n_only;
	C.cb = cb;
	C.ud = ud;
	for (a = 0; agc_adapter_table[a] && rc == 0 && !C.stop; a++) {
		const agc_adapter *ad = agc_adapter_table[a];

		if (!ad->databases || (o->agents && !(o->agents & ad->bit)))
			continue;
		C.ad = ad;
		C.rs = agc_ctx_roots(ctx, a);
		if (!C.rs)
			return -1;
		rc = ad->databases(ctx, C.rs, one_db, &C);
		if (rc > 0)
			rc = 0;
	}
	return rc < 0 ? -1 : 0;
}
