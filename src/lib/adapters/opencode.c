/* OpenCode: sessions are rows of opencode.db (and, from older versions, JSON files under
 * storage/), with children linked by parent_id at any depth (formats/opencode.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core.h"
#include "../db.h"
#include "../error.h"
#include "../json.h"
#include "../remove.h"
#include "../session.h"

#define OC_DIR_MAX ((size_t)1 << 20)       /* entries read from one dir */
#define OC_DEPTH_MAX 64                    /* parent_id levels followed */
#define OC_DOC_MAX ((size_t)4 << 20)       /* a legacy JSON document */
#define OC_LEFT_NOTES ((size_t)256)        /* entries left in one legacy dir said one by one */

enum { R_DATA = 0, R_STATE = 1 };

static int oc_id(const char *in, char *out)
{
	return agc_id_opencode(in, out);
}

static int oc_roots(agc_ctx *ctx, agc_rootset *rs)
{
	const char *xd = agc_ctx_env(ctx, "XDG_DATA_HOME"), *xs = agc_ctx_env(ctx, "XDG_STATE_HOME");
	const char *db = agc_ctx_env(ctx, "OPENCODE_DB");
	char *path;
	int rc;

	path = xd ? agc_strfmt("%s/opencode", xd) : agc_strfmt("%s/.local/share/opencode", ctx->home);
	if (!path)
		return -1;
	rc = agc_rootset_add(rs, "data", path, xd ? "$XDG_DATA_HOME" : "default");
	free(path);
	if (rc < 0)
		return -1;
	path = xs ? agc_strfmt("%s/opencode", xs) : agc_strfmt("%s/.local/state/opencode", ctx->home);
	if (!path)
		return -1;
	rc = agc_rootset_add(rs, "state", path, xs ? "$XDG_STATE_HOME" : "default");
	free(path);
	if (rc < 0)
		return -1;
	/* $OPENCODE_DB: absolute, its dir is a root of its own; relative, it lies in the data dir. */
	if (db && db[0] == '/') {
		char *dir = agc_strdup(db), *slash = dir ? strrchr(dir, '/') : NULL;

		if (!dir)
			return -1;
		if (slash == dir)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		rc = agc_rootset_add(rs, "db", dir, "$OPENCODE_DB");
		free(dir);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The databases: opencode.db and channel databases opencode-<channel>.db in the data dir, and
 * $OPENCODE_DB. Calls cb(root, rel). */
static int each_db(agc_ctx *ctx, const agc_rootset *rs, int datafd,
		   int (*cb)(size_t root, const char *rel, void *ud), void *ud)
{
	const char *env = agc_ctx_env(ctx, "OPENCODE_DB");
	int dbroot = agc_rootset_find(rs, "db");
	DIR *d;
	struct dirent *e;
	size_t seen = 0;
	int rc = 0;

	if (datafd >= 0) {
		d = agc_dir_at(datafd, ".");
		while (d && rc == 0 && (e = readdir(d)) && seen++ < OC_DIR_MAX) {
			size_t nl = strlen(e->d_name);
			struct stat st;

			if (strcmp(e->d_name, "opencode.db") != 0 &&
			    !(strncmp(e->d_name, "opencode-", 9) == 0 && nl > 12 &&
			      strcmp(e->d_name + nl - 3, ".db") == 0))
				continue;
			/* a linked database is looked through (read-only) so its sessions are found
			 * and reported; its rows are never deleted through the link (R2). One that
			 * is not a regular file (a FIFO, a dir) is a store that cannot be read: it is
			 * said, never opened (R8). So is one that cannot be reached (a link into a
			 * dir that cannot be searched): only a name that is gone is no store. */
			if (fstatat(datafd, e->d_name, &st, 0) < 0 &&
			    (errno == ENOENT || errno == ENOTDIR) &&
			    fstatat(datafd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			rc = cb(R_DATA, e->d_name, ud);
		}
		if (d)
			closedir(d);
	}
	if (rc == 0 && env && strcmp(env, ":memory:") != 0) {
		/* a db dir that cannot be read is noted by the core (R2), not opened here */
		if (env[0] == '/' && dbroot >= 0 && rs->v[dbroot].exists && !rs->v[dbroot].err) {
			const char *base = strrchr(env, '/') + 1;

			if (*base && strcmp(base, "opencode.db") != 0)
				rc = cb((size_t)dbroot, base, ud);
			else if (*base && rs->v[dbroot].real && rs->v[R_DATA].real &&
				 strcmp(rs->v[dbroot].real, rs->v[R_DATA].real) != 0)
				rc = cb((size_t)dbroot, base, ud);
		} else if (env[0] != '/' && agc_walk_rel_ok(env) && !strchr(env, '/') &&
			   strcmp(env, "opencode.db") != 0 && strncmp(env, "opencode-", 9) != 0) {
			rc = cb(R_DATA, env, ud);
		}
	}
	return rc;
}

/* ---- schema --------------------------------------------------------------------------------- */

typedef struct schema {
	char **tables;
	size_t n;
	const char *sess[2];    /* session tables present: "session", "session_v2" */
	size_t nsess;
	agc_db_schema cols;     /* every table's columns and foreign keys, read once */
} schema;

static void schema_release(schema *s)
{
	agc_db_strv_free(s->tables, s->n);
	agc_db_schema_release(&s->cols);
	memset(s, 0, sizeof(*s));
}

static bool has_table(const schema *s, const char *t)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->tables[i], t) == 0)
			return true;
	return false;
}

static int schema_read(sqlite3 *db, schema *s)
{
	static const char *const names[] = {"session_v2", "session"};
	size_t i;

	memset(s, 0, sizeof(*s));
	if (agc_db_tables(db, &s->tables, &s->n) < 0)
		return -1;
	if (agc_db_schema_read(db, &s->cols) < 0) {
		schema_release(s);
		return -1;
	}
	for (i = 0; i < 2; i++)
		if (has_table(s, names[i]) && agc_db_schema_has_column(&s->cols, names[i], "id") &&
		    agc_db_schema_has_column(&s->cols, names[i], "parent_id"))
			s->sess[s->nsess++] = names[i];
	return 0;
}

/* ---- discovery ------------------------------------------------------------------------------ */

/* Run sql with ?1 bound to text and call cb with each row's first column. */
static int each_text(sqlite3 *db, const char *sql, const char *arg,
		     int (*cb)(const char *v, void *ud), void *ud)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL), out = 0;

	if (rc != SQLITE_OK)
		return agc_db_fail(db, rc, "cannot read sessions");
	sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && out == 0) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		if (v)
			out = cb(v, ud);
	}
	if (out == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
		out = agc_db_fail(db, rc, "cannot read sessions");
	sqlite3_finalize(st);
	return out;
}

static int add_child(const char *v, void *ud)
{
	agc_plan *p = ud;
	char id[AGC_ID_MAX];

	/* A child id that is not an id never reaches a path or a query (R1). */
	if (agc_id_opencode(v, id) < 0)
		return 0;
	return agc_plan_add_id(p, id) < 0 ? -1 : 0;
}

/* Descendants at any depth through parent_id in every session table, all found before
 * anything is deleted (SPEC "Relations"). */
static int db_children(agc_plan *p, sqlite3 *db, const schema *s)
{
	size_t before, k, depth;

	for (depth = 0; depth < OC_DEPTH_MAX; depth++) {
		char *ids = agc_plan_ids_json(p);

		if (!ids)
			return -1;
		before = p->ids.n;
		for (k = 0; k < s->nsess; k++) {
			char *t = agc_db_ident(s->sess[k]);
			char *sql = t ? agc_strfmt("SELECT \"id\" FROM %s WHERE \"parent_id\" IN "
						   "(SELECT value FROM json_each(?1))", t)
				      : NULL;
			int rc = sql ? each_text(db, sql, ids, add_child, p) : -1;

			free(t);
			free(sql);
			if (rc < 0) {
				free(ids);
				return rc;
			}
		}
		free(ids);
		if (p->ids.n == before)
			return 0;
	}
	return agc_error_set(-1, "sessions nested deeper than %d levels", OC_DEPTH_MAX);
}

/* The plan file of a session: <created>-<slug>.md in the project's worktree under
 * .opencode/plans (a git project), else in <data>/plans. Both are looked for: the worktree
 * comes from the agent's own project table. The worktree is a root derived from the agent's
 * data: resolved once like the configured roots, and .opencode/plans/... is walked beneath it
 * one component at a time, so a .opencode that is a link leads nowhere outside (R2). */
static void add_plan(agc_plan *p, sqlite3 *db, size_t dataroot, int64_t created, const char *slug,
		     const char *project_id, const char *session)
{
	char rel[512];

	/* the slug becomes a file name: one component, nothing that could climb out (R1) */
	if (!agc_id_path_safe(slug) || strlen(slug) > 200)
		return;
	snprintf(rel, sizeof(rel), "%lld-%s.md", (long long)created, slug);
	if (!agc_walk_rel_ok(rel))
		return;
	{
		char drel[600];

		snprintf(drel, sizeof(drel), "plans/%s", rel);
		agc_plan_add_art(p, dataroot, drel, session, 0, NULL);
	}
	if (project_id && db && agc_db_has_column(db, "project", "worktree")) {
		sqlite3_stmt *st = NULL;

		if (sqlite3_prepare_v2(db, "SELECT \"worktree\" FROM \"project\" WHERE \"id\" = ?1", -1, &st,
				       NULL) == SQLITE_OK) {
			sqlite3_bind_text(st, 1, project_id, -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW) {
				const char *wt = (const char *)sqlite3_column_text(st, 0);

				if (wt && wt[0] == '/' && strcmp(wt, "/") != 0) {
					int r = agc_plan_add_root(p, "worktree", wt);
					char wrel[600];

					snprintf(wrel, sizeof(wrel), ".opencode/plans/%s", rel);
					if (r >= 0)
						agc_plan_add_art(p, (size_t)r, wrel, session, 0, NULL);
				}
			}
		}
		sqlite3_finalize(st);
	}
}

/* The session's metadata and, with plans, its plan file name (time_created + slug) from its
 * row. */
static void db_meta(agc_plan *p, sqlite3 *db, const schema *s, size_t dataroot, bool plans)
{
	size_t k, i;

	for (k = 0; k < s->nsess; k++) {
		char *t = agc_db_ident(s->sess[k]);
		char *sql;
		sqlite3_stmt *st = NULL;
		bool slug = agc_db_schema_has_column(&s->cols, s->sess[k], "slug");
		bool title = agc_db_schema_has_column(&s->cols, s->sess[k], "title");
		bool dir = agc_db_schema_has_column(&s->cols, s->sess[k], "directory");
		bool tc = agc_db_schema_has_column(&s->cols, s->sess[k], "time_created");
		bool tu = agc_db_schema_has_column(&s->cols, s->sess[k], "time_updated");

		bool proj = agc_db_schema_has_column(&s->cols, s->sess[k], "project_id");

		sql = t ? agc_strfmt("SELECT \"id\", %s, %s, %s, \"parent_id\", %s, %s, %s FROM %s WHERE \"id\" = ?1",
				     slug ? "\"slug\"" : "NULL", title ? "\"title\"" : "NULL",
				     dir ? "\"directory\"" : "NULL", tc ? "\"time_created\"" : "0",
				     tu ? "\"time_updated\"" : "0", proj ? "\"project_id\"" : "NULL", t)
			: NULL;
		free(t);
		for (i = 0; sql && i < p->ids.n; i++) {
			if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
				break;
			sqlite3_bind_text(st, 1, p->ids.v[i], -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW) {
				const char *sl = (const char *)sqlite3_column_text(st, 1);
				int64_t created = sqlite3_column_int64(st, 5);

				if (i == 0 && !p->meta.title) {
					const char *v;

					if ((v = (const char *)sqlite3_column_text(st, 2)))
						p->meta.title = agc_strdup(v);
					if ((v = (const char *)sqlite3_column_text(st, 3)))
						p->meta.project = agc_strdup(v);
					if ((v = (const char *)sqlite3_column_text(st, 4)))
						p->meta.parent = agc_strdup(v);
					p->meta.created_ms = created;
					p->meta.updated_ms = sqlite3_column_int64(st, 6);
				}
				if (plans && sl && created > 0)
					add_plan(p, db, dataroot, created, sl,
						 proj ? (const char *)sqlite3_column_text(st, 7) : NULL, p->ids.v[i]);
			}
			sqlite3_finalize(st);
			st = NULL;
		}
		free(sql);
	}
}

/* Every row of the sessions in every table that has one, from the schema itself, in an order
 * where a table goes before the tables it references, so each delete counts its own rows
 * rather than leaving them to a cascade. */
static int db_rowsets(agc_plan *p, sqlite3 *db, const schema *s, size_t dbi)
{
	const char **todo = calloc(s->n + 1, sizeof(*todo));
	size_t i, k, n = 0, done;
	int rc = 0;

	if (!todo)
		return agc_error_oom();
	for (i = 0; i < s->n; i++) {
		const char *t = s->tables[i];

		if (agc_db_schema_has_column(&s->cols, t, "session_id") ||
		    agc_db_schema_has_column(&s->cols, t, "aggregate_id"))
			todo[n++] = t;
	}
	for (k = 0; k < s->nsess; k++) {
		bool dup = false;

		for (i = 0; i < n; i++)
			dup |= strcmp(todo[i], s->sess[k]) == 0;
		if (!dup)
			todo[n++] = s->sess[k];
	}
	for (done = 0; done < n && rc == 0; done++) {
		size_t pick = agc_db_schema_next_table(&s->cols, (const char *const *)todo, n);

		{
			const char *t = todo[pick];
			bool is_sess = false, direct, via;

			todo[pick] = NULL;
			for (k = 0; k < s->nsess; k++)
				is_sess |= strcmp(t, s->sess[k]) == 0;
			if (is_sess) {
				rc = agc_plan_add_record_rows(p, dbi, t, "id");
				continue;
			}
			direct = agc_db_schema_has_column(&s->cols, t, "session_id");
			/* parts also through their messages: part.session_id has no foreign key */
			via = strcmp(t, "part") == 0 && agc_db_schema_has_column(&s->cols, t, "message_id") &&
			      has_table(s, "message") && agc_db_schema_has_column(&s->cols, "message", "id") &&
			      agc_db_schema_has_column(&s->cols, "message", "session_id");
			if (direct || via)
				rc = agc_plan_add_rows(p, dbi, t, direct ? "session_id" : NULL,
						       via ? "message_id" : NULL, via ? "message" : NULL,
						       via ? "id" : NULL, via ? "session_id" : NULL);
			if (rc == 0 && agc_db_schema_has_column(&s->cols, t, "aggregate_id"))
				rc = agc_plan_add_rows(p, dbi, t, "aggregate_id", NULL, NULL, NULL, NULL);
		}
	}
	free(todo);
	return rc;
}

/* ---- the stores ------------------------------------------------------------------------------ */

/* One database of the agent, opened read-only (R6). One that cannot be read keeps its message
 * and refuses only the sessions it holds; the others go on (R8). */
typedef struct store {
	size_t root;
	char *rel;
	sqlite3 *db;   /* NULL when it could not be read */
	schema s;
	bool linked;   /* reached through a symlink: looked at to find and report, never changed,
			  and no id or name read in it reaches an artifact (R2) */
	bool busy;     /* could not be read because another connection locks it */
	char *err;     /* why it could not be read */
	bool borrowed; /* db and s are the run's (oc_run): not closed with the store */
} store;

/* A run of many ids (agc_adapter.run_new): each database opened once, read-only, with its
 * schema, and used by every discovery of the run while it is the same file (device and
 * inode, looked at again each time) with the same schema (its schema_version): each query a
 * discovery makes reads the database as it is then, in a read transaction of its own. */
typedef struct oc_open {
	char *abs;
	dev_t dev;
	ino_t ino;
	bool linked;
	int version;
	sqlite3 *db;
	schema s;
} oc_open;

typedef struct oc_run {
	oc_open *v;
	size_t n, cap;
} oc_run;

typedef struct stores {
	const agc_rootset *rs;
	store *v;
	size_t n, cap;
	oc_run *run;   /* NULL: every database opened afresh, closed with the stores */
} stores;

static void stores_release(stores *S)
{
	size_t i;

	for (i = 0; i < S->n; i++) {
		if (S->v[i].db && !S->v[i].borrowed) {
			schema_release(&S->v[i].s);
			sqlite3_close(S->v[i].db);
		}
		free(S->v[i].rel);
		free(S->v[i].err);
	}
	free(S->v);
	memset(S, 0, sizeof(*S));
}

/* The first store that could not be read, or NULL. */
static const store *stores_first_bad(const stores *S)
{
	size_t i;

	for (i = 0; i < S->n; i++)
		if (S->v[i].err)
			return &S->v[i];
	return NULL;
}

/* each_db callback: open the database read-only and read its schema. A file that is not
 * SQLite, a locked database or one with no session table of a known schema is noted with
 * its reason and skipped, never an error of the whole agent (R8). A database with no table
 * at all (a file OpenCode made and never used) holds no session and is no error. */
static void oc_open_release(oc_open *o)
{
	free(o->abs);
	schema_release(&o->s);
	sqlite3_close(o->db);
	memset(o, 0, sizeof(*o));
}

static void *oc_run_new(void)
{
	oc_run *r = calloc(1, sizeof(*r));

	if (!r)
		agc_error_oom();
	return r;
}

static void oc_run_close(void *v)
{
	oc_run *r = v;
	size_t i;

	for (i = 0; r && i < r->n; i++)
		oc_open_release(&r->v[i]);
	if (r)
		r->n = 0;
}

static void oc_run_free(void *v)
{
	oc_run_close(v);
	if (v)
		free(((oc_run *)v)->v);
	free(v);
}

/* The database's schema_version (its schema cookie), or -1 when it cannot be read. */
static int schema_version(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA schema_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The run's connection to abs when it is still the file st (and linked as then) with the
 * schema it read: lent to store s. true when lent. */
static bool run_lend(oc_run *run, const char *abs, const struct stat *st, bool linked, store *s)
{
	size_t i;

	for (i = 0; run && i < run->n; i++) {
		oc_open *o = &run->v[i];

		if (strcmp(o->abs, abs) != 0)
			continue;
		if (o->dev == st->st_dev && o->ino == st->st_ino && o->linked == linked && agc_db_sidecars_ok(abs) == 0 &&
		    schema_version(o->db) == o->version && o->version >= 0) {
			s->db = o->db;
			s->s = o->s;
			s->borrowed = true;
			return true;
		}
		/* another file, or another schema: opened afresh */
		oc_open_release(o);
		run->v[i] = run->v[--run->n];
		return false;
	}
	return false;
}

/* Store s, just opened, handed to the run (which closes it at its end). */
static void run_keep(oc_run *run, const char *abs, const struct stat *st, store *s)
{
	oc_open *o;

	if (!run || !(o = AGC_ARRAY_PUSH(run, 1024)))
		return;
	if (!(o->abs = agc_strdup(abs))) {
		run->n--;
		return;
	}
	o->dev = st->st_dev;
	o->ino = st->st_ino;
	o->linked = s->linked;
	o->version = schema_version(s->db);
	o->db = s->db;
	o->s = s->s;
	s->borrowed = true;
}

static int open_store(size_t root, const char *rel, void *ud)
{
	stores *S = ud;
	char *abs = agc_plan_abspath(S->rs, root, rel);
	struct stat lst;
	store *st;
	int rc;

	if (!abs)
		return -1;
	st = AGC_ARRAY_PUSH(S, 1024);
	if (!st) {
		free(abs);
		return -1;
	}
	st->root = root;
	st->rel = agc_strdup(rel);
	if (!st->rel) {
		free(abs);
		return -1;
	}
	/* rel is one name beneath a resolved root: only its leaf can be a link */
	st->linked = lstat(abs, &lst) == 0 && S_ISLNK(lst.st_mode);
	/* SQLite would open a FIFO (and hang) or a device: only a regular file is opened (R8) */
	if (stat(abs, &lst) < 0)
		rc = agc_error_errno(-1, errno, "%s", abs);
	else if (!S_ISREG(lst.st_mode))
		rc = agc_error_set(-1, "%s: not a regular file", abs);
	else if (run_lend(S->run, abs, &lst, st->linked, st)) {
		free(abs);
		return 0;
	} else
		rc = agc_db_open_ro(abs, &st->db);
	if (rc == 0 && schema_read(st->db, &st->s) < 0)
		rc = -1;
	if (rc == 0 && st->s.n > 0 && st->s.nsess == 0)
		rc = agc_error_set(-1, "%s: no session table of a known schema", abs);
	if (rc < 0) {
		const char *msg = agc_error_last();
		size_t al = strlen(abs);

		/* the message names the path already ("<path>: file is not a database") */
		if (strncmp(msg, abs, al) == 0 && strncmp(msg + al, ": ", 2) == 0)
			msg += al + 2;
		st->err = agc_strfmt("cannot read '%s': %s", abs, msg);
		st->busy = rc == AGC_EINUSE;
		if (st->db) {
			schema_release(&st->s);
			sqlite3_close(st->db);
			st->db = NULL;
		}
		if (!st->err) {
			free(abs);
			return -1;
		}
	} else if (S->run) {
		struct stat now;

		/* kept for the run only as the file it was opened as */
		if (stat(abs, &now) == 0 && now.st_dev == lst.st_dev && now.st_ino == lst.st_ino)
			run_keep(S->run, abs, &lst, st);
	}
	free(abs);
	return 0;
}

/* Is id a session row of the readable store st? */
static bool store_has_session(const store *st, const char *id)
{
	size_t k;
	bool found = false;

	for (k = 0; st->db && k < st->s.nsess && !found; k++) {
		char *t = agc_db_ident(st->s.sess[k]);
		char *sql = t ? agc_strfmt("SELECT 1 FROM %s WHERE \"id\" = ?1", t) : NULL;
		sqlite3_stmt *q = NULL;

		if (sql && sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK) {
			sqlite3_bind_text(q, 1, id, -1, SQLITE_STATIC);
			found = sqlite3_step(q) == SQLITE_ROW;
		}
		sqlite3_finalize(q);
		free(sql);
		free(t);
	}
	return found;
}

/* Does any row set from index from on hold rows? */
static bool rows_held(const agc_plan *p, size_t from)
{
	size_t i;

	for (i = from; i < p->rows.n; i++)
		if (p->rows.v[i].count)
			return true;
	return false;
}

/* The rows of the sessions in one store, its metadata and plan files, and its files watched
 * by the gate. Rows of a linked store are never deleted through the link (R2): they are
 * counted, left out of the plan, and reported as residual with reason symlink, so a dry run
 * and the purge give the same answer from this one place. */
static int discover_store(agc_plan *p, store *st)
{
	size_t from = p->rows.n, i;
	char *side;
	int dbi, rc;

	dbi = agc_plan_add_db(p, st->root, st->rel);
	rc = dbi < 0 ? -1 : db_rowsets(p, st->db, &st->s, (size_t)dbi);
	if (rc == 0)
		rc = agc_plan_count_rows(p, st->db, (size_t)dbi);
	if (rc < 0)
		return rc;
	if (st->linked) {
		bool held = rows_held(p, from);

		for (i = from; i < p->rows.n; i++)
			p->rows.v[i].count = p->rows.v[i].bytes = 0;
		if (held && agc_plan_add_note(p, st->root, st->rel, "symlink") < 0)
			return -1;
	}
	/* the plan file's name read through a link would reach a file: not from a linked store */
	db_meta(p, st->db, &st->s, R_DATA, !st->linked);
	/* Every process holding the database, its WAL or shared memory holds every session. */
	agc_plan_add_watch(p, st->root, st->rel);
	side = agc_strfmt("%s-wal", st->rel);
	if (side)
		agc_plan_add_watch(p, st->root, side);
	free(side);
	side = agc_strfmt("%s-shm", st->rel);
	if (side)
		agc_plan_add_watch(p, st->root, side);
	free(side);
	return 0;
}

/* ---- the legacy JSON store (<= 1.1.x) ------------------------------------------------------ */

/* Call cb for every session file storage/session/<project>/ses_*.json of the legacy store,
 * with its JSON parsed when parse is set (NULL when it does not parse). cb returns nonzero to
 * stop. With nofollow, no dir on the way may be a link: what lies behind one is never read
 * (R2); without, a listing may look through links to find and report. The dirs of the store
 * are bounded like every other. */
static int each_legacy_session(int datafd, bool parse, bool nofollow,
			       int (*cb)(int pdfd, const char *name, json_t *j, void *ud), void *ud)
{
	DIR *d = NULL;
	struct dirent *e;
	size_t seen = 0;
	agc_buf doc = AGC_BUF_INIT_MAX(OC_DOC_MAX + 1);
	int rc = 0;

	if (nofollow) {
		int fd, err;

		if (agc_walk_open_dir(datafd, "storage/session", &fd, &err) == AGC_WALK_OK &&
		    !(d = fdopendir(fd))) {
			agc_short_note(errno);
			close(fd);
		}
	} else {
		d = agc_dir_at(datafd, "storage/session");
	}
	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d)) && seen++ < OC_DIR_MAX) {
		DIR *pd = NULL;
		struct dirent *f;
		size_t pseen = 0;
		int pfd;

		if (e->d_name[0] == '.' || !agc_id_path_safe(e->d_name))
			continue;
		pfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
		if (pfd < 0)
			agc_short_note(errno);
		if (pfd >= 0 && !(pd = fdopendir(pfd))) {
			agc_short_note(errno);
			close(pfd);
		}
		while (rc == 0 && pd && (f = readdir(pd)) && pseen++ < OC_DIR_MAX) {
			json_t *j = NULL;

			if (strncmp(f->d_name, "ses_", 4) != 0)
				continue;
			if (parse) {
				if (agc_read_at(dirfd(pd), f->d_name, OC_DOC_MAX, &doc) != 0)
					continue;
				j = agc_json_parse(doc.ptr, doc.len);
			}
			rc = cb(dirfd(pd), f->d_name, j, ud);
			json_decref(j);
		}
		if (pd)
			closedir(pd);
	}
	closedir(d);
	agc_buf_release(&doc);
	return rc;
}

/* Is name "<id>.json"? A legacy file is named by the id of what it holds. */
static bool named_by(const char *name, const char *id)
{
	size_t il = id ? strlen(id) : 0;

	return il && strncmp(name, id, il) == 0 && strcmp(name + il, ".json") == 0;
}

static int child_of_cb(int pdfd, const char *name, json_t *j, void *ud)
{
	agc_plan *p = ud;
	const char *par = agc_json_str(j, "parentID"), *id = agc_json_str(j, "id");
	size_t k;

	(void)pdfd;
	/* only a session's own file says who its parent is (R2) */
	if (!named_by(name, id))
		return 0;
	for (k = 0; par && id && k < p->ids.n; k++)
		if (strcmp(par, p->ids.v[k]) == 0)
			return add_child(id, p);
	return 0;
}

/* Children in the legacy store: session files whose parentID is one of the ids. */
static int legacy_children(agc_plan *p, int datafd)
{
	size_t depth, before;

	for (depth = 0; depth < OC_DEPTH_MAX; depth++) {
		before = p->ids.n;
		if (each_legacy_session(datafd, true, true, child_of_cb, p) < 0)
			return -1;
		if (p->ids.n == before)
			return 0;
	}
	return 0;
}

/* What a legacy message or part file must say of itself to go with the session: a record that
 * names others is trusted only as far as it names the session back (R2). */
typedef struct legacy_want {
	const char *session;
	const char *message;  /* a part: the message it belongs to; NULL for a message */
	const char *prefix;   /* of its own id: "msg_" or "prt_" */
} legacy_want;

static bool legacy_names_session(const json_t *j, const char *name, const legacy_want *w)
{
	const char *id = agc_json_str(j, "id"), *sid = agc_json_str(j, "sessionID");
	const char *mid = agc_json_str(j, "messageID");

	if (!named_by(name, id) || strncmp(id, w->prefix, 4) != 0 || !agc_id_path_safe(id))
		return false;
	if (!sid || strcmp(sid, w->session) != 0)
		return false;
	return !w->message || (mid && strcmp(mid, w->message) == 0);
}

typedef struct names {
	char **v;
	size_t n, cap;
} names;

static void names_release(names *n)
{
	agc_db_strv_free(n->v, n->n);
	memset(n, 0, sizeof(*n));
}

/* Why an entry of a legacy dir of the session is left: it is not provably the session's, so it
 * is never removed, and it is reported (R7). */
static const char *legacy_left_why(int dfd, const char *name, bool read)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		return "error: not a regular file; it does not name the session; not removed";
	if (!read)
		return "error: cannot be read; it does not name the session; not removed";
	return "error: does not name the session; not removed";
}

/* A legacy dir keyed by the session (storage/message/<S>) or by one of its messages
 * (storage/part/<msg>), reached without a link: each JSON file in it that names the session
 * itself goes, a message's parts before the message; the dir goes whole only when every entry
 * in it does. A dir that is a link, or lies behind one, is an artifact of its own (a link goes
 * as the link alone, R2) and nothing read behind it reaches another artifact. An entry that
 * does not name the session (not JSON, cut short, of another session, a FIFO, junk) is never
 * removed: it is reported with its reason, and the dir with it (R7), so the session is still
 * found while they are there. The parts of a message file of the dir that does not name the
 * session are looked at all the same: those that name the session and the message go, and what
 * is left there is reported, and a message whose part dir keeps anything is kept with it, so
 * that a rerun finds and reports them again. *gone says whether the whole dir is planned to go
 * (or was not there). */
static int legacy_dir(agc_plan *p, int datafd, const char *drel, const legacy_want *w, bool *gone)
{
	agc_buf doc = AGC_BUF_INIT_MAX(OC_DOC_MAX + 1);
	names ok = {0}, msgs = {0};
	size_t entries = 0, left = 0, i;
	bool whole = true, past = false;
	struct dirent *e;
	agc_walk_status ws;
	DIR *d;
	int fd, err, rc = 0;

	*gone = true;
	ws = agc_walk_open_dir(datafd, drel, &fd, &err);
	if (ws == AGC_WALK_ENOENT)
		return 0;
	if (ws == AGC_WALK_SYMLINK || ws == AGC_WALK_NOTDIR)
		return agc_plan_add_art(p, R_DATA, drel, w->session, 0, NULL) < 0 ? -1 : 0;
	*gone = false;
	if (ws != AGC_WALK_OK) {
		/* a dir that cannot be read may hold the session's files: never "not found" */
		char *why = ws == AGC_WALK_PERM ? agc_strdup("permission")
						: agc_strfmt("error: cannot read dir: %s", strerror(err));

		rc = agc_plan_add_note(p, R_DATA, drel, why ? why : "error: cannot read dir");
		free(why);
		return rc < 0 ? -1 : 0;
	}
	d = fdopendir(fd);
	if (!d) {
		err = errno;
		close(fd);
		return agc_error_errno(-1, err, "cannot read '%s'", drel);
	}
	while (rc == 0 && (e = readdir(d))) {
		const char *why = NULL;
		json_t *j;
		bool good, read;
		char **slot;
		names *into = &ok;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		/* past the bound the dir is not seen whole: only what was checked goes (R8) */
		if (++entries > OC_DIR_MAX) {
			whole = false;
			past = true;
			break;
		}
		/* only a regular file, never through a link, bounded (R8) */
		read = agc_read_at(dirfd(d), e->d_name, OC_DOC_MAX, &doc) == 0;
		j = read ? agc_json_parse(doc.ptr, doc.len) : NULL;
		good = j && legacy_names_session(j, e->d_name, w);
		json_decref(j);
		if (!good) {
			whole = false;
			why = legacy_left_why(dirfd(d), e->d_name, read);
			/* each entry left is said, up to a bound; the dir's own note counts them all */
			if (left++ < OC_LEFT_NOTES) {
				char *frel = agc_strfmt("%s/%s", drel, e->d_name);

				rc = !frel || agc_plan_add_note(p, R_DATA, frel, why) < 0 ? -1 : 0;
				free(frel);
			}
			/* a message file of the dir that does not name the session: its parts are
			 * still looked at, by its file name */
			if (w->message || !read || strncmp(e->d_name, "msg_", 4) != 0 ||
			    strlen(e->d_name) <= 5 || strcmp(e->d_name + strlen(e->d_name) - 5, ".json") != 0)
				continue;
			into = &msgs;
		}
		slot = rc == 0 ? AGC_ARRAY_PUSH(into, OC_DIR_MAX) : NULL;
		if (!slot || !(*slot = agc_strdup(e->d_name))) {
			if (slot)
				into->n--;
			rc = -1;
			break;
		}
	}
	closedir(d);
	agc_buf_release(&doc);
	/* a message's parts go before it */
	for (i = 0; rc == 0 && !w->message && i < ok.n + msgs.n; i++) {
		const char *name = i < ok.n ? ok.v[i] : msgs.v[i - ok.n];
		char mid[256], prel[512];
		size_t nl = strlen(name) - 5;
		legacy_want pw = {w->session, mid, "prt_"};
		bool parts_gone;

		if (nl >= sizeof(mid))
			continue;
		memcpy(mid, name, nl);
		mid[nl] = '\0';
		if (!agc_id_path_safe(mid))
			continue;
		snprintf(prel, sizeof(prel), "storage/part/%s", mid);
		rc = legacy_dir(p, datafd, prel, &pw, &parts_gone);
		/* the message leads to what is left of its parts: it stays, and is said (R7) */
		if (rc == 0 && !parts_gone && i < ok.n) {
			char *frel = agc_strfmt("%s/%s", drel, ok.v[i]);

			rc = !frel || agc_plan_add_note(p, R_DATA, frel,
							"error: kept while its part dir holds what is not "
							"removed") < 0 ? -1 : 0;
			free(frel);
			free(ok.v[i]);
			ok.v[i] = NULL;
			whole = false;
			left++;
		}
	}
	if (rc == 0 && whole) {
		rc = agc_plan_add_art(p, R_DATA, drel, w->session, 0, NULL) < 0 ? -1 : 0;
	} else {
		for (i = 0; rc == 0 && i < ok.n; i++) {
			char *frel;

			if (!ok.v[i])
				continue;
			frel = agc_strfmt("%s/%s", drel, ok.v[i]);
			rc = !frel || agc_plan_add_art(p, R_DATA, frel, w->session, 0, NULL) < 0 ? -1 : 0;
			free(frel);
		}
		/* the dir stays with what does not name the session, and is said (R7) */
		if (rc == 0) {
			char *why = past ? agc_strfmt("error: more than %zu entries; those not checked are "
						      "not removed", OC_DIR_MAX)
					 : agc_strfmt("error: holds %zu entr%s not removed; the dir stays",
						      left, left == 1 ? "y" : "ies");

			rc = !why || agc_plan_add_note(p, R_DATA, drel, why) < 0 ? -1 : 0;
			free(why);
		}
	}
	*gone = rc == 0 && whole;
	names_release(&ok);
	names_release(&msgs);
	return rc;
}

static int legacy_files(agc_plan *p, int datafd, const char *id, bool record_in_db)
{
	static const char *const flat[] = {"todo", "session_share", "session_diff"};
	legacy_want mw = {id, NULL, "msg_"};
	bool gone;
	char rel[1024];
	DIR *d;
	struct dirent *e;
	size_t i, seen = 0;

	for (i = 0; i < sizeof(flat) / sizeof(flat[0]); i++) {
		snprintf(rel, sizeof(rel), "storage/%s/%s.json", flat[i], id);
		if (agc_plan_add_art(p, R_DATA, rel, id, 0, NULL) < 0)
			return -1;
	}
	/* the parts of each message, then the messages */
	snprintf(rel, sizeof(rel), "storage/message/%s", id);
	if (legacy_dir(p, datafd, rel, &mw, &gone) < 0)
		return -1;
	/* the session file, in whichever project dir it is: the record when no row keys it */
	d = agc_dir_at(datafd, "storage/session");
	while (d && (e = readdir(d)) && seen++ < OC_DIR_MAX) {
		agc_buf doc = AGC_BUF_INIT_MAX(OC_DOC_MAX + 1);
		const char *leaf;
		int dfd, err, r;

		if (e->d_name[0] == '.' || !agc_id_path_safe(e->d_name))
			continue;
		snprintf(rel, sizeof(rel), "storage/session/%s/%s.json", e->d_name, id);
		r = agc_plan_add_art(p, R_DATA, rel, id, record_in_db ? 0 : AGC_ART_RECORD, NULL);
		if (r < 0) {
			closedir(d);
			return -1;
		}
		/* the legacy session names its plan file too: read only where no link is on the
		 * way, since a name read behind one reaches no artifact (R2) */
		if (r == 0 || agc_walk_parent(datafd, rel, &dfd, &leaf, &err) != AGC_WALK_OK)
			continue;
		if (agc_read_at(dfd, leaf, OC_DOC_MAX, &doc) == 0) {
			json_t *j = agc_json_parse(doc.ptr, doc.len);
			json_t *tc = json_object_get(json_object_get(j, "time"), "created");
			const char *slug = agc_json_str(j, "slug");

			if (json_is_integer(tc) && slug)
				add_plan(p, NULL, R_DATA, (int64_t)json_integer_value(tc), slug, NULL, id);
			json_decref(j);
		}
		close(dfd);
		agc_buf_release(&doc);
	}
	if (d)
		closedir(d);
	return 0;
}

/* The TUI's pin list <state>/session.json ({"pinned":["ses_...", ...]}) names sessions. Its
 * lock convention is not known (formats/opencode.md §3), so it cannot be rewritten as R4 asks
 * of a shared file (under the agent's own lock): a pin of the session is reported as left
 * behind, with the reason, and the file is never changed. */
static int pins(agc_plan *p)
{
	int fd = agc_plan_rootfd(p, R_STATE);
	agc_buf doc = AGC_BUF_INIT_MAX(OC_DOC_MAX + 1);
	json_t *j, *pinned, *v;
	size_t i, k;
	bool named = false;
	int rc = 0;

	if (fd < 0 || agc_read_at(fd, "session.json", OC_DOC_MAX, &doc) != 0) {
		agc_buf_release(&doc);
		return 0;
	}
	j = agc_json_parse(doc.ptr, doc.len);
	agc_buf_release(&doc);
	pinned = json_object_get(j, "pinned");
	json_array_foreach(pinned, i, v) {
		const char *s = json_string_value(v);

		for (k = 0; s && k < p->ids.n && !named; k++)
			named = strcmp(s, p->ids.v[k]) == 0;
		if (named)
			break;
	}
	json_decref(j);
	if (named)
		rc = agc_plan_add_note(p, R_STATE, "session.json",
				       "error: pinned; OpenCode has no known lock for session.json, so agentgc "
				       "does not rewrite it (remove the id from \"pinned\" by hand)");
	return rc < 0 ? -1 : 0;
}

static int oc_discover(agc_plan *p)
{
	int datafd = agc_plan_rootfd(p, R_DATA);
	stores S = {.rs = p->roots, .run = p->run};
	size_t i, depth, before;
	const store *bad;
	int rc;

	rc = each_db(p->ctx, p->roots, datafd, open_store, &S);
	/* 1. Descendants at any depth in every store, before anything else (SPEC "Relations");
	 * never from a linked store, whose ids reach no artifact (R2). */
	for (depth = 0; rc == 0 && depth < OC_DEPTH_MAX; depth++) {
		before = p->ids.n;
		for (i = 0; rc == 0 && i < S.n; i++)
			if (S.v[i].db && !S.v[i].linked)
				rc = db_children(p, S.v[i].db, &S.v[i].s);
		if (rc == 0 && datafd >= 0)
			rc = legacy_children(p, datafd);
		if (p->ids.n == before)
			break;
	}
	/* 2. Their rows in every store, then the files found through those rows. */
	for (i = 0; rc == 0 && i < S.n; i++)
		if (S.v[i].db)
			rc = discover_store(p, &S.v[i]);
	/* 3. The legacy JSON store. */
	if (rc == 0 && datafd >= 0) {
		bool in_db = rows_held(p, 0);

		for (i = 0; rc == 0 && i < p->ids.n; i++)
			rc = legacy_files(p, datafd, p->ids.v[i], in_db);
	}
	/* 4. Shared files that name the session. */
	if (rc == 0 && !p->gate_only)
		rc = pins(p);
	/* 5. A store that could not be read refuses only the sessions it holds (R8). A session
	 * whose row is in a store that could be read is that store's: it goes on, and a locked
	 * store (which may hold copies of its rows) is left as residual with reason busy. Any
	 * other session may be the unreadable store's (its files without its row are no proof
	 * that it is not): its error is the answer, nothing changes, and it is never "not found".
	 * After a purge, what is left is looked for the same way, the locked store included. */
	bad = stores_first_bad(&S);
	if (rc == 0 && bad) {
		bool owned = false;

		for (i = 0; i < S.n && !owned; i++)
			owned = store_has_session(&S.v[i], p->id);
		if (!owned && !p->again) {
			rc = agc_error_set(-1, "%s", bad->err);
		} else {
			for (i = 0; rc == 0 && i < S.n; i++)
				if (S.v[i].busy && agc_plan_add_note(p, S.v[i].root, S.v[i].rel, "busy") < 0)
					rc = -1;
		}
	}
	stores_release(&S);
	return rc;
}

/* OpenCode's per-user service holds every session's database and never counts as a holder:
 * argv[0] (or the script a runtime runs) is opencode*, and later arguments hold "serve" and
 * "--service". */
static bool oc_exempt(const char *argv, size_t len, void *ud)
{
	const char *p = argv, *end = argv + len, *prog = NULL;
	bool serve = false, service = false;
	int idx = 0;

	(void)ud;
	while (p < end) {
		size_t l = strnlen(p, (size_t)(end - p));
		const char *base = memrchr(p, '/', l);

		base = base ? base + 1 : p;
		if (!prog) {
			if (strncmp(base, "opencode", 8) == 0)
				prog = p;
			else if (idx > 0 && !(strcmp(base, "node") == 0 || strcmp(base, "bun") == 0) && p[0] != '-')
				break; /* the first non-option of a runtime is its script: not opencode */
			else if (idx == 0 && !(strcmp(base, "node") == 0 || strcmp(base, "bun") == 0))
				break;
		} else if (strcmp(p, "serve") == 0) {
			serve = true;
		} else if (strcmp(p, "--service") == 0) {
			service = true;
		}
		p += l + 1;
		idx++;
	}
	return prog && serve && service;
}

/* ---- listing ---------------------------------------------------------------------------------- */

/* This adapter's index in agc_adapter_table, for ls's gate entries. */
static size_t oc_index(void)
{
	int i = agc_agent_find("opencode");

	return i < 0 ? 0 : (size_t)i;
}

typedef struct orow {
	char *id, *parent, *title, *dir, *slug;
	char *prompt;   /* the first text a person typed, read only for ls --grep */
	int64_t created, updated;
	agc_size sz;    /* SPEC "Sizes": what discovery would find of it, children added later */
	uint64_t via;   /* bytes of parts reached through its messages, while they are counted */
	size_t gate;    /* its entry of ls's gate (R5) */
	bool orphan;    /* ls --orphans: rows or legacy files of an id no session row or file names */
	bool legacy;    /* listed from its legacy session file: no store has its session row */
} orow;

typedef struct orows {
	orow *v;
	size_t n, cap;
} orows;

static int cmp_orow(const void *a, const void *b)
{
	return strcmp(((const orow *)a)->id, ((const orow *)b)->id);
}

static orow *orow_bsearch(orows *r, const char *id)
{
	orow key = {.id = (char *)id};

	/* no rows yet: the array may be NULL, which bsearch must never be given */
	if (!r->n)
		return NULL;
	return bsearch(&key, r->v, r->n, sizeof(*r->v), cmp_orow);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);

	return v ? agc_strdup(v) : NULL;
}

/* Run sql (key, size) and add each size to the row of that key. */
static void charge_sql(orows *slice, sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		orow *w = id ? orow_bsearch(slice, id) : NULL;

		if (w)
			w->sz.bytes += (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
}

/* The rows of table t that discovery puts in a session's plan (db_rowsets): a session table by
 * "id"; any other by "session_id" and by "aggregate_id" (the keys, when keys is set); parts
 * also through their message (a part whose message is another session's counts in both, as
 * both plans hold it; when via is set). Sized in SQL with agc_db_row_size_sql, as show and
 * purge size them: what charge_rows does in one pass falls back to this where it cannot be
 * sure to give the same figure. */
static void charge_table_sql(orows *slice, sqlite3 *db, const schema *s, const char *t, bool keys, bool via)
{
	char *ti = agc_db_ident(t), *size = agc_db_row_size_sql(db, t, NULL), *sql;
	bool is_sess = false;
	size_t k;

	for (k = 0; k < s->nsess; k++)
		is_sess |= strcmp(t, s->sess[k]) == 0;
	if (!ti || !size)
		goto out;
	if (is_sess) {
		sql = keys ? agc_strfmt("SELECT \"id\", sum(%s) FROM %s GROUP BY 1", size, ti) : NULL;
		charge_sql(slice, db, sql);
		free(sql);
		goto out;
	}
	if (keys && agc_db_has_column(db, t, "session_id")) {
		sql = agc_strfmt("SELECT \"session_id\", sum(%s) FROM %s GROUP BY 1", size, ti);
		charge_sql(slice, db, sql);
		free(sql);
	}
	if (via && strcmp(t, "part") == 0 && agc_db_has_column(db, t, "message_id") && has_table(s, "message") &&
	    agc_db_has_column(db, "message", "id") && agc_db_has_column(db, "message", "session_id")) {
		char *psize = agc_db_row_size_sql(db, t, "p");
		bool direct = agc_db_has_column(db, t, "session_id");

		sql = psize ? agc_strfmt("SELECT m.\"session_id\", sum(%s) FROM %s AS p JOIN \"message\" AS m "
					 "ON m.\"id\" = p.\"message_id\"%s GROUP BY 1",
					 psize, ti, direct ? " WHERE p.\"session_id\" IS NOT m.\"session_id\"" : "")
			    : NULL;
		charge_sql(slice, db, sql);
		free(sql);
		free(psize);
	}
	if (keys && agc_db_has_column(db, t, "aggregate_id")) {
		sql = agc_strfmt("SELECT \"aggregate_id\", sum(%s) FROM %s GROUP BY 1", size, ti);
		charge_sql(slice, db, sql);
		free(sql);
	}
out:
	free(ti);
	free(size);
}

/* ---- sizing rows in one pass per table ---- */

/* Column c of t is compared as SQLite compares two plain values: BINARY collation, and (when
 * texty) an affinity that never turns text into a number (TEXT or BLOB, SQLite's rules of
 * "Determination Of Column Affinity"). */
static bool col_plain(sqlite3 *db, const char *t, const char *c, bool texty)
{
	const char *type = NULL, *coll = NULL;
	char up[64];
	size_t i;

	if (sqlite3_table_column_metadata(db, "main", t, c, &type, &coll, NULL, NULL, NULL) != SQLITE_OK ||
	    !coll || sqlite3_stricmp(coll, "BINARY") != 0)
		return false;
	if (!texty)
		return true;
	if (!type)
		return true;
	for (i = 0; type[i] && i + 1 < sizeof(up); i++)
		up[i] = (char)(type[i] >= 'a' && type[i] <= 'z' ? type[i] - 'a' + 'A' : type[i]);
	up[i] = '\0';
	if (type[i]) /* a declared type this long is taken as one that may be numeric */
		return false;
	if (strstr(up, "INT"))
		return false;
	if (strstr(up, "CHAR") || strstr(up, "CLOB") || strstr(up, "TEXT"))
		return true;
	return !*up || strstr(up, "BLOB");
}

/* The listed rows by id for the pass over a store's tables: a hash of the ids, which finds
 * the row orow_bsearch finds (strcmp) as long as no id is listed twice; with a duplicate,
 * orow_bsearch itself. */
typedef struct rowidx {
	orows *slice;
	uint32_t *slots;  /* row index + 1, 0 empty; NULL: use orow_bsearch */
	size_t mask;
} rowidx;

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h;
}

static void rowidx_build(rowidx *X, orows *slice)
{
	size_t i, n = 1024;

	memset(X, 0, sizeof(*X));
	X->slice = slice;
	for (i = 1; i < slice->n; i++)
		if (strcmp(slice->v[i - 1].id, slice->v[i].id) == 0)
			return;
	if (slice->n >= UINT32_MAX / 4)
		return;
	while (n < slice->n * 2)
		n *= 2;
	if (!(X->slots = calloc(n, sizeof(*X->slots))))
		return;
	X->mask = n - 1;
	for (i = 0; i < slice->n; i++) {
		size_t b = str_hash(slice->v[i].id) & X->mask;

		while (X->slots[b])
			b = (b + 1) & X->mask;
		X->slots[b] = (uint32_t)i + 1;
	}
}

static orow *rowidx_find(const rowidx *X, const char *id)
{
	size_t b;

	if (!X->slots)
		return orow_bsearch(X->slice, id);
	for (b = str_hash(id) & X->mask; X->slots[b]; b = (b + 1) & X->mask)
		if (strcmp(X->slice->v[X->slots[b] - 1].id, id) == 0)
			return &X->slice->v[X->slots[b] - 1];
	return NULL;
}

/* The row of a key's text, as charge_sql finds it (strcmp), remembering the last one: a table's
 * rows of one session often follow each other. */
typedef struct keycache {
	char last[128];
	bool have;
	orow *w;
} keycache;

static orow *key_row(const rowidx *X, keycache *kc, sqlite3_stmt *st, int i)
{
	const char *id = (const char *)sqlite3_column_text(st, i);
	size_t n;

	if (!id)
		return NULL;
	if (kc->have && strcmp(kc->last, id) == 0)
		return kc->w;
	kc->w = rowidx_find(X, id);
	n = strlen(id);
	kc->have = n < sizeof(kc->last);
	if (kc->have)
		memcpy(kc->last, id, n + 1);
	return kc->w;
}

/* A message of a listed session, for parts reached through it: its id and session_id as
 * stored (text or blob, every byte), and the row its session_id names. */
typedef struct omsg {
	char *id, *sid;  /* one allocation: id then sid */
	int nid, nsid;
	bool id_blob, sid_blob;
	orow *w;
	uint32_t next;   /* the next message in the bucket, UINT32_MAX: none */
} omsg;

typedef struct omsgs {
	omsg *v;
	size_t n, cap;
	uint32_t *heads;
	size_t nheads;   /* a power of two, or 0 */
	bool odd;        /* a value the table below cannot compare as SQLite does: use the SQL */
} omsgs;

static void omsgs_release(omsgs *M)
{
	size_t i;

	for (i = 0; i < M->n; i++)
		free(M->v[i].id);
	free(M->v);
	free(M->heads);
	memset(M, 0, sizeof(*M));
}

static uint64_t bytes_hash(const void *p, int n, bool blob)
{
	const unsigned char *b = p;
	uint64_t h = blob ? 0x9e3779b97f4a7c15u : 0xcbf29ce484222325u;
	int i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3u;
	return h;
}

static int omsgs_rehash(omsgs *M, size_t nheads)
{
	uint32_t *h = malloc(nheads * sizeof(*h));
	size_t i;

	if (!h)
		return agc_error_oom();
	for (i = 0; i < nheads; i++)
		h[i] = UINT32_MAX;
	for (i = 0; i < M->n; i++) {
		size_t b = bytes_hash(M->v[i].id, M->v[i].nid, M->v[i].id_blob) & (nheads - 1);

		M->v[i].next = h[b];
		h[b] = (uint32_t)i;
	}
	free(M->heads);
	M->heads = h;
	M->nheads = nheads;
	return 0;
}

/* A value of a join column as SQLite compares it: text or blob bytes; false for NULL. A number
 * makes the table odd (SQLite would compare it by value). */
static bool join_value(omsgs *M, sqlite3_stmt *st, int i, const void **p, int *n, bool *blob)
{
	int type = sqlite3_column_type(st, i);

	if (type == SQLITE_NULL)
		return false;
	if (type != SQLITE_TEXT && type != SQLITE_BLOB) {
		M->odd = true;
		return false;
	}
	*blob = type == SQLITE_BLOB;
	*p = *blob ? sqlite3_column_blob(st, i) : (const void *)sqlite3_column_text(st, i);
	*n = sqlite3_column_bytes(st, i);
	if (!*p)
		*p = "";
	return true;
}

/* Keep message (id, session_id) of a listed session (the row found as charge_sql finds the
 * join's m.session_id). */
static void omsgs_add(omsgs *M, const rowidx *X, keycache *kc, sqlite3_stmt *st, int idc, int sidc)
{
	const void *id, *sid;
	int nid, nsid;
	bool id_blob, sid_blob;
	orow *w;
	omsg *m;

	/* each value's type is read before its text (sqlite3_column_type is undefined after) */
	if (M->odd || !join_value(M, st, sidc, &sid, &nsid, &sid_blob) ||
	    !join_value(M, st, idc, &id, &nid, &id_blob) || !(w = key_row(X, kc, st, sidc)))
		return;
	if (M->n >= UINT32_MAX - 1 || (M->n >= M->nheads && omsgs_rehash(M, M->nheads ? M->nheads * 2 : 1024) < 0) ||
	    !(m = AGC_ARRAY_PUSH(M, UINT32_MAX - 1)) || !(m->id = malloc((size_t)nid + (size_t)nsid + 2))) {
		M->odd = true; /* out of memory: the SQL join instead */
		return;
	}
	memcpy(m->id, id, (size_t)nid);
	m->id[nid] = '\0';
	m->sid = m->id + nid + 1;
	memcpy(m->sid, sid, (size_t)nsid);
	m->sid[nsid] = '\0';
	m->nid = nid;
	m->nsid = nsid;
	m->id_blob = id_blob;
	m->sid_blob = sid_blob;
	m->w = w;
	{
		size_t b = bytes_hash(m->id, nid, id_blob) & (M->nheads - 1);

		m->next = M->heads[b];
		M->heads[b] = (uint32_t)(M->n - 1);
	}
}

/* Charge a part of `bytes` to the session of each message it names, as the SQL join does
 * (m.id = p.message_id, and p.session_id IS NOT m.session_id when the part has a session_id). */
static void omsgs_charge(omsgs *M, sqlite3_stmt *st, int midc, int psidc, uint64_t bytes)
{
	const void *mid, *psid = NULL;
	int nmid, npsid = 0;
	bool mid_blob, psid_blob = false, have_psid = false;
	uint32_t i;

	if (M->odd || !M->nheads || !join_value(M, st, midc, &mid, &nmid, &mid_blob))
		return;
	if (psidc >= 0)
		have_psid = join_value(M, st, psidc, &psid, &npsid, &psid_blob);
	if (M->odd)
		return;
	for (i = M->heads[bytes_hash(mid, nmid, mid_blob) & (M->nheads - 1)]; i != UINT32_MAX; i = M->v[i].next) {
		omsg *m = &M->v[i];

		if (m->id_blob != mid_blob || m->nid != nmid || memcmp(m->id, mid, (size_t)nmid) != 0)
			continue;
		/* IS NOT: a NULL part session_id differs from the message's, which is never NULL here */
		if (psidc >= 0 && have_psid && m->sid_blob == psid_blob && m->nsid == npsid &&
		    memcmp(m->sid, psid, (size_t)npsid) == 0)
			continue;
		m->w->via += bytes;
	}
}

/* The bytes of the text SQLite renders an integer as ("%lld": digits, a minus sign). */
static uint64_t int_text_len(int64_t v)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, n = v < 0 ? 2 : 1;

	while (u >= 10) {
		u /= 10;
		n++;
	}
	return n;
}

/* One pass over table t: every row's size charged to the listed session its keys name, as
 * charge_table_sql does (per row rather than per group: the same sum where a key compares
 * with BINARY collation, which charge_store checks). The size of a value is what SQLite's
 * length(CAST(x AS BLOB)) gives in a UTF-8 database: NULL 0, a blob or text its bytes (an
 * embedded NUL included), an integer or a real the bytes of its text (a real rendered by
 * sqlite3_column_bytes as CAST renders it, an integer counted in digits). msg: keep the
 * messages for parts (message table); part: charge parts through them. Returns -1 when the
 * pass could not be made at all (the caller then runs the SQL). */
static int charge_rows(const rowidx *X, sqlite3 *db, const char *t, const char *const keys[2], omsgs *msg,
		       omsgs *part)
{
	sqlite3_stmt *st = NULL, *cols = NULL;
	agc_buf sql = AGC_BUF_INIT_MAX((size_t)1 << 20);
	char *ti = agc_db_ident(t), *q;
	keycache kc[3];
	int ncol = 0, extra[4] = {-1, -1, -1, -1}, rc = 0, i, nk = 0, src = SQLITE_DONE;

	memset(kc, 0, sizeof(kc));
	/* the sized columns, as agc_db_row_size_sql lists them, then the keys */
	if (!ti || agc_buf_add(&sql, "SELECT 0", 8) < 0 ||
	    sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &cols, NULL) != SQLITE_OK) {
		rc = -1;
		goto out;
	}
	sqlite3_bind_text(cols, 1, t, -1, SQLITE_STATIC);
	while (rc == 0 && sqlite3_step(cols) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(cols, 0);

		q = name ? agc_db_ident(name) : NULL;
		rc = q && agc_buf_add(&sql, ", ", 2) == 0 && agc_buf_add(&sql, q, strlen(q)) == 0 ? 0 : -1;
		free(q);
		ncol++;
	}
	{
		const char *more[4] = {keys[0], keys[1], msg ? "id" : part ? "message_id" : NULL,
				       msg || part ? "session_id" : NULL};

		for (i = 0; i < 4 && rc == 0; i++) {
			if (!more[i])
				continue;
			extra[i] = 1 + ncol + nk++;
			q = agc_strfmt(", \"%s\"", more[i]);
			rc = q && agc_buf_add(&sql, q, strlen(q)) == 0 ? 0 : -1;
			free(q);
		}
	}
	q = rc == 0 ? agc_strfmt(" FROM %s", ti) : NULL;
	if (!q || agc_buf_add(&sql, q, strlen(q)) < 0 ||
	    sqlite3_prepare_v2(db, sql.ptr, -1, &st, NULL) != SQLITE_OK)
		rc = -1;
	free(q);
	if (rc < 0)
		goto out;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t bytes = 0;
		int k;

		for (i = 1; i <= ncol; i++) {
			int type = sqlite3_column_type(st, i);

			if (type == SQLITE_INTEGER)
				bytes += int_text_len(sqlite3_column_int64(st, i));
			else if (type != SQLITE_NULL)
				bytes += (uint64_t)sqlite3_column_bytes(st, i);
		}
		for (k = 0; k < 2; k++) {
			orow *w = extra[k] >= 0 ? key_row(X, &kc[k], st, extra[k]) : NULL;

			if (w)
				w->sz.bytes += bytes;
		}
		if (msg)
			omsgs_add(msg, X, &kc[2], st, extra[2], extra[3]);
		else if (part)
			omsgs_charge(part, st, extra[2], extra[3], bytes);
	}
	/* a pass cut short leaves the messages, or the parts charged through them, incomplete */
	if (src != SQLITE_DONE && (msg || part))
		(msg ? msg : part)->odd = true;
out:
	sqlite3_finalize(cols);
	sqlite3_finalize(st);
	agc_buf_release(&sql);
	free(ti);
	return rc;
}

/* The encoding of db is UTF-8, where a text value's bytes are the ones CAST AS BLOB gives. */
static bool db_utf8(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	bool utf8 = false;

	if (sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		utf8 = sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), "UTF-8") == 0;
	sqlite3_finalize(st);
	return utf8;
}

/* SPEC "Sizes": every table discovery deletes from (db_rowsets) read once, each row sized in C
 * (charge_rows), giving the figures agc_db_row_size_sql gives show and purge. A table where
 * that is not sure to be the same figure (a key that is not compared as BINARY, a database
 * in UTF-16, join values that are numbers) is sized in SQL as before (charge_table_sql). */
static void charge_store(orows *slice, sqlite3 *db, const schema *s)
{
	bool utf8 = db_utf8(db), via, direct, via_fast;
	omsgs M = {0};
	rowidx X;
	size_t k, i;

	rowidx_build(&X, slice);
	via = agc_db_has_column(db, "part", "message_id") && has_table(s, "message") &&
	      agc_db_has_column(db, "message", "id") && agc_db_has_column(db, "message", "session_id");
	direct = agc_db_has_column(db, "part", "session_id");
	via_fast = via && utf8 && col_plain(db, "message", "id", true) && col_plain(db, "message", "session_id", true) &&
		   col_plain(db, "part", "message_id", true) && (!direct || col_plain(db, "part", "session_id", true));
	/* the messages first: the parts are charged through them */
	for (i = 0; i <= s->n; i++) {
		const char *t = i == 0 ? (via_fast ? "message" : NULL) : s->tables[i - 1];
		const char *keys[2] = {NULL, NULL};
		bool is_sess = false, part, msg, fast = utf8;

		if (!t || (i > 0 && via_fast && strcmp(t, "message") == 0))
			continue;
		for (k = 0; k < s->nsess; k++)
			is_sess |= strcmp(t, s->sess[k]) == 0;
		part = via && !is_sess && strcmp(t, "part") == 0;
		msg = via_fast && i == 0;
		if (is_sess) {
			keys[0] = "id";
		} else {
			if (agc_db_has_column(db, t, "session_id"))
				keys[0] = "session_id";
			if (agc_db_has_column(db, t, "aggregate_id"))
				keys[1] = "aggregate_id";
		}
		if (!keys[0] && !keys[1] && !part)
			continue;
		for (k = 0; k < 2; k++)
			fast = fast && (!keys[k] || col_plain(db, t, keys[k], false));
		if (fast && charge_rows(&X, db, t, keys, msg ? &M : NULL, part && via_fast ? &M : NULL) == 0) {
			if (part && !via_fast)
				charge_table_sql(slice, db, s, t, false, true);
			continue;
		}
		/* sized in SQL, parts through their messages too, unless the table of messages
		 * will give them */
		if (msg || (part && via_fast))
			M.odd = true;
		charge_table_sql(slice, db, s, t, true, part && !via_fast);
	}
	if (via_fast) {
		for (k = 0; k < slice->n; k++) {
			if (!M.odd)
				slice->v[k].sz.bytes += slice->v[k].via;
			slice->v[k].via = 0;
		}
		if (M.odd)
			charge_table_sql(slice, db, s, "part", false, true);
	}
	omsgs_release(&M);
	free(X.slots);
}

/* The worktrees of one store's projects, each resolved and opened once per listing. */
typedef struct worktree {
	char *project;
	int fd;         /* -1: none, or it cannot be opened */
} worktree;

typedef struct worktrees {
	worktree *v;
	size_t n, cap;
	sqlite3_stmt *q;  /* SELECT worktree FROM project WHERE id = ?1; NULL: no such column */
} worktrees;

static void worktrees_release(worktrees *W)
{
	size_t i;

	for (i = 0; i < W->n; i++) {
		free(W->v[i].project);
		if (W->v[i].fd >= 0)
			close(W->v[i].fd);
	}
	free(W->v);
	sqlite3_finalize(W->q);
	memset(W, 0, sizeof(*W));
}

/* The open worktree of a project, as discovery's add_plan derives it: an absolute path other
 * than "/" from the agent's project table, resolved once. -1 when there is none. */
static int worktree_fd(worktrees *W, const char *project_id)
{
	worktree *t;
	size_t i;

	for (i = 0; i < W->n; i++)
		if (strcmp(W->v[i].project, project_id) == 0)
			return W->v[i].fd;
	if (!W->q || !(t = AGC_ARRAY_PUSH(W, OC_DIR_MAX)))
		return -1;
	t->fd = -1;
	if (!(t->project = agc_strdup(project_id))) {
		W->n--;
		return -1;
	}
	sqlite3_reset(W->q);
	sqlite3_bind_text(W->q, 1, project_id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(W->q) == SQLITE_ROW) {
		const char *wt = (const char *)sqlite3_column_text(W->q, 0);
		char *real = wt && wt[0] == '/' && strcmp(wt, "/") != 0 ? realpath(wt, NULL) : NULL;

		t->fd = real ? agc_walk_open_root(real) : -1;
		free(real);
	}
	return t->fd;
}

/* The plan file of a session in its project's worktree (<worktree>/.opencode/plans/), where
 * discovery's add_plan looks. */
static void charge_worktree_plan(orow *w, agc_ls_sink *sink, worktrees *W, const char *project_id)
{
	char rel[600];
	int fd;

	if (!project_id || !agc_id_path_safe(w->slug) || strlen(w->slug) > 200)
		return;
	snprintf(rel, sizeof(rel), ".opencode/plans/%lld-%s.md", (long long)w->created, w->slug);
	if (agc_walk_rel_ok(rel) && (fd = worktree_fd(W, project_id)) >= 0)
		agc_ls_charge_at(sink, w->gate, true, fd, rel, &w->sz, NULL);
}

/* The sessions of one readable store (a linked one too: a listing only reads). */
/* ls --grep: the first text part of each listed session's first user message, the prompt a
 * person typed (SPEC "ls"), one query for the store. Data that is not JSON is skipped
 * (json_valid guards every json_extract, which would fail the statement). */
static void read_prompts(orows *slice, sqlite3 *db)
{
	static const char sql[] =
		"SELECT m.\"session_id\", CASE WHEN json_valid(p.\"data\") THEN json_extract(p.\"data\", '$.text') END "
		"FROM \"message\" AS m JOIN \"part\" AS p ON p.\"message_id\" = m.\"id\" "
		"WHERE (CASE WHEN json_valid(m.\"data\") THEN json_extract(m.\"data\", '$.role') END) = 'user' "
		"AND (CASE WHEN json_valid(p.\"data\") THEN json_extract(p.\"data\", '$.type') END) = 'text' "
		"ORDER BY m.\"session_id\", m.\"time_created\", m.\"id\", p.\"id\"";
	sqlite3_stmt *st = NULL;

	if (!agc_db_has_column(db, "message", "data") || !agc_db_has_column(db, "message", "time_created") ||
	    !agc_db_has_column(db, "part", "message_id") || !agc_db_has_column(db, "part", "data") ||
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *sid = (const char *)sqlite3_column_text(st, 0);
		const char *text = (const char *)sqlite3_column_text(st, 1);
		orow *w = sid && text && *text ? orow_bsearch(slice, sid) : NULL;

		if (w && !w->prompt)
			w->prompt = agc_title_cut(text);
	}
	sqlite3_finalize(st);
}

static int list_store(orows *rows, const store *sto, const agc_ls_opts *opts, agc_ls_sink *sink)
{
	sqlite3 *db = sto->db;
	const schema s = sto->s;
	size_t k, base = rows->n, first_n = 0;
	worktrees W = {0};

	if (agc_db_has_column(db, "project", "worktree") &&
	    sqlite3_prepare_v2(db, "SELECT \"worktree\" FROM \"project\" WHERE \"id\" = ?1", -1, &W.q, NULL) !=
		    SQLITE_OK) {
		sqlite3_finalize(W.q);
		W.q = NULL;
	}

	for (k = 0; k < s.nsess; k++) {
		char *t = agc_db_ident(s.sess[k]);
		bool title = agc_db_has_column(db, s.sess[k], "title");
		bool dir = agc_db_has_column(db, s.sess[k], "directory");
		bool tc = agc_db_has_column(db, s.sess[k], "time_created");
		bool tu = agc_db_has_column(db, s.sess[k], "time_updated");
		bool slug = agc_db_has_column(db, s.sess[k], "slug");
		bool proj = agc_db_has_column(db, s.sess[k], "project_id");
		char *sql = t ? agc_strfmt("SELECT \"id\", \"parent_id\", %s, %s, %s, %s, %s, %s FROM %s",
					   title ? "\"title\"" : "NULL", dir ? "\"directory\"" : "NULL",
					   tc ? "\"time_created\"" : "0", tu ? "\"time_updated\"" : "0",
					   slug ? "\"slug\"" : "NULL", proj ? "\"project_id\"" : "NULL", t)
			      : NULL;
		sqlite3_stmt *st = NULL;

		free(t);
		if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
			free(sql);
			continue;
		}
		free(sql);
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *id = (const char *)sqlite3_column_text(st, 0);
			char canon[AGC_ID_MAX];
			orow *w;

			/* session_v2 copies legacy rows under the same id: list each id once */
			if (!id || agc_id_opencode(id, canon) < 0)
				continue;
			if (k > 0 && first_n) {
				orows first = {rows->v + base, first_n, 0};

				if (orow_bsearch(&first, id))
					continue;
			}
			w = AGC_ARRAY_PUSH(rows, (size_t)1 << 24);
			if (!w)
				break;
			w->id = col_dup(st, 0);
			w->parent = col_dup(st, 1);
			w->title = col_dup(st, 2);
			w->dir = col_dup(st, 3);
			w->created = sqlite3_column_int64(st, 4);
			w->updated = sqlite3_column_int64(st, 5);
			w->slug = col_dup(st, 6);
			w->gate = agc_ls_gate_new(sink, oc_index());
			agc_ls_gate_id(sink, w->gate, w->id);
			/* its plan file in the project's worktree, as discovery finds it (not through a
			 * linked store, whose names reach no file: R2) */
			if (!sto->linked && w->slug && w->created > 0)
				charge_worktree_plan(w, sink, &W, (const char *)sqlite3_column_text(st, 7));
		}
		sqlite3_finalize(st);
		/* an empty session table leaves no rows: qsort is never given a NULL array */
		if (k == 0) {
			first_n = rows->n - base;
			if (first_n > 1)
				qsort(rows->v + base, first_n, sizeof(orow), cmp_orow);
		}
	}
	/* SPEC "Sizes": the stored size of every row of the session in every table discovery
	 * deletes from (db_rowsets), one pass per table; a linked store's rows are not the
	 * session's to delete, and discovery counts none of them (R2) */
	if (rows->n > base && !sto->linked) {
		orows slice = {rows->v + base, rows->n - base, 0};

		if (slice.n > 1)
			qsort(slice.v, slice.n, sizeof(*slice.v), cmp_orow);
		charge_store(&slice, db, &s);
	}
	if (rows->n > base && opts && opts->grep) {
		orows slice = {rows->v + base, rows->n - base, 0};

		if (slice.n > 1)
			qsort(slice.v, slice.n, sizeof(*slice.v), cmp_orow);
		read_prompts(&slice, db);
	}
	worktrees_release(&W);
	return 0;
}

typedef struct legacy_ls {
	orows *rows;
	size_t before; /* rows[0..before) are sorted: the database's */
	agc_ls_sink *sink;
} legacy_ls;

static int list_legacy_cb(int pdfd, const char *name, json_t *j, void *ud)
{
	legacy_ls *L = ud;
	orows sorted = {L->rows->v, L->before, 0};
	const char *id = agc_json_str(j, "id"), *v;
	char canon[AGC_ID_MAX];
	json_t *tm;
	orow *w;

	(void)pdfd;
	(void)name;
	if (!id || agc_id_opencode(id, canon) < 0 || orow_bsearch(&sorted, id))
		return 0;
	w = AGC_ARRAY_PUSH(L->rows, (size_t)1 << 24);
	if (!w)
		return -1;
	w->id = agc_strdup(id);
	w->legacy = true;
	w->gate = agc_ls_gate_new(L->sink, oc_index());
	if (w->id)
		agc_ls_gate_id(L->sink, w->gate, w->id);
	w->parent = (v = agc_json_str(j, "parentID")) ? agc_strdup(v) : NULL;
	w->title = (v = agc_json_str(j, "title")) ? agc_strdup(v) : NULL;
	w->dir = (v = agc_json_str(j, "directory")) ? agc_strdup(v) : NULL;
	w->slug = (v = agc_json_str(j, "slug")) ? agc_strdup(v) : NULL;
	tm = json_object_get(j, "time");
	w->created = json_integer_value(json_object_get(tm, "created"));
	w->updated = json_integer_value(json_object_get(tm, "updated"));
	if (!w->updated)
		w->updated = w->created;
	return 0;
}

/* Sessions only in the legacy store (a store newer versions never imported) are listed
 * from their JSON files; rows stays sorted by id. */
static void list_legacy(orows *rows, int datafd, agc_ls_sink *sink)
{
	legacy_ls L = {rows, rows->n, sink};

	each_legacy_session(datafd, true, false, list_legacy_cb, &L);
	if (rows->n > L.before)
		qsort(rows->v, rows->n, sizeof(*rows->v), cmp_orow);
}


typedef struct charge_ls {
	orows *rows;
	agc_ls_sink *sink;
} charge_ls;

static int charge_session_cb(int pdfd, const char *name, json_t *j, void *ud)
{
	charge_ls *C = ud;
	orows *rows = C->rows;
	size_t nl = strlen(name);
	char id[AGC_ID_MAX];
	orow *w;

	(void)j;
	if (nl <= 5 || nl - 5 >= sizeof(id))
		return 0;
	memcpy(id, name, nl - 5);
	id[nl - 5] = '\0';
	if ((w = orow_bsearch(rows, id)))
		agc_ls_charge_at(C->sink, w->gate, true, pdfd, name, &w->sz, NULL);
	return 0;
}

/* The names in one dir under the data dir, listed once so that a session's file that is not
 * there costs no probe. The dir is opened as agc_ls_charge_at opens a file's parent; when it
 * cannot be listed whole, every name may be there and each is probed as before. */
typedef struct nameset {
	char **v;
	size_t n, cap;
	bool listed;
} nameset;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void nameset_release(nameset *ns)
{
	agc_db_strv_free(ns->v, ns->n);
	memset(ns, 0, sizeof(*ns));
}

static void nameset_list(nameset *ns, int datafd, const char *rel)
{
	int fd = openat(datafd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	bool ok = d != NULL;

	int err = errno;

	memset(ns, 0, sizeof(*ns));
	if (!d) {
		if (fd >= 0)
			close(fd);
		/* no such dir: no file in it to probe for */
		ns->listed = err == ENOENT || err == ENOTDIR;
		return;
	}
	errno = 0;
	while (ok && (e = readdir(d))) {
		char **slot;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		slot = AGC_ARRAY_PUSH(ns, OC_DIR_MAX);
		ok = slot && (*slot = agc_strdup(e->d_name));
		if (slot && !*slot)
			ns->n--;
		errno = 0;
	}
	ok = ok && errno == 0;
	closedir(d);
	if (!ok) {
		nameset_release(ns);
		return;
	}
	if (ns->n > 1)
		qsort(ns->v, ns->n, sizeof(*ns->v), cmp_name);
	ns->listed = true;
}

static bool nameset_may_have(const nameset *ns, const char *name)
{
	if (!ns->listed)
		return true;
	return ns->n && bsearch(&name, ns->v, ns->n, sizeof(*ns->v), cmp_name);
}

/* bytes also count a session's files: its plan file, and its legacy JSON files */
static void charge_files(orows *rows, int datafd, agc_ls_sink *sink)
{
	static const char *const flat[] = {"todo", "session_share", "session_diff"};
	charge_ls C = {rows, sink};
	struct stat st;
	bool storage = fstatat(datafd, "storage", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
	nameset plans, fl[3], msgs, parts;
	size_t i, k;

	nameset_list(&plans, datafd, "plans");
	memset(fl, 0, sizeof(fl));
	memset(&msgs, 0, sizeof(msgs));
	memset(&parts, 0, sizeof(parts));
	if (storage) {
		for (k = 0; k < 3; k++) {
			char rel[64];

			snprintf(rel, sizeof(rel), "storage/%s", flat[k]);
			nameset_list(&fl[k], datafd, rel);
		}
		nameset_list(&msgs, datafd, "storage/message");
		nameset_list(&parts, datafd, "storage/part");
	}
	for (i = 0; i < rows->n; i++) {
		orow *w = &rows->v[i];
		char rel[1024];

		if (w->slug && w->created > 0 && agc_id_path_safe(w->slug) && strlen(w->slug) < 200) {
			snprintf(rel, sizeof(rel), "plans/%lld-%s.md", (long long)w->created, w->slug);
			if (nameset_may_have(&plans, rel + 6))
				agc_ls_charge_at(sink, w->gate, true, datafd, rel, &w->sz, NULL);
		}
		if (!storage || !agc_id_path_safe(w->id))
			continue;
		{
			DIR *d;
			struct dirent *e;
			for (k = 0; k < 3; k++) {
				snprintf(rel, sizeof(rel), "storage/%s/%s.json", flat[k], w->id);
				if (nameset_may_have(&fl[k], strrchr(rel, '/') + 1))
					agc_ls_charge_at(sink, w->gate, true, datafd, rel, &w->sz, NULL);
			}
			/* the message dir whole (discovery takes it whole when all of it names the
			 * session), then each message's part dir */
			if (!nameset_may_have(&msgs, w->id))
				continue;
			snprintf(rel, sizeof(rel), "storage/message/%s", w->id);
			agc_ls_charge_at(sink, w->gate, true, datafd, rel, &w->sz, NULL);
			d = agc_dir_at(datafd, rel);
			while (d && (e = readdir(d))) {
				size_t nl = strlen(e->d_name);
				char prel[1024];

				if (nl <= 5 || strncmp(e->d_name, "msg_", 4) != 0)
					continue;
				snprintf(prel, sizeof(prel), "storage/part/%.*s", (int)(nl - 5), e->d_name);
				if (nameset_may_have(&parts, prel + 13))
					agc_ls_charge_at(sink, w->gate, true, datafd, prel, &w->sz, NULL);
			}
			if (d)
				closedir(d);
		}
	}
	nameset_release(&plans);
	for (k = 0; k < 3; k++)
		nameset_release(&fl[k]);
	nameset_release(&msgs);
	nameset_release(&parts);
	/* the session files of the legacy store, wherever their project dir is */
	if (storage)
		each_legacy_session(datafd, false, false, charge_session_cb, &C);
}

/* Charge the rows the stores hold of the sessions listed from their legacy files only. */
static int legacy_rows(orows *rows, const stores *S)
{
	orows l = {0};
	size_t i, j;

	for (i = 0; i < rows->n; i++)
		if (rows->v[i].legacy && !AGC_ARRAY_PUSH(&l, (size_t)1 << 24)) {
			free(l.v);
			return agc_error_oom();
		} else if (rows->v[i].legacy) {
			l.v[l.n - 1] = rows->v[i];
		}
	for (j = 0; l.n && j < S->n; j++)
		if (S->v[j].db && !S->v[j].linked)
			charge_store(&l, S->v[j].db, &S->v[j].s);
	/* the copies (sorted, as rows is) give their figures back */
	for (i = 0, j = 0; i < rows->n && j < l.n; i++)
		if (rows->v[i].legacy)
			rows->v[i].sz = l.v[j++].sz;
	free(l.v);
	return 0;
}

/* ---- orphans (ls --orphans) ---------------------------------------------------------------- */

/* The session ids of every session table of every store and of every legacy session file (by
 * its name, whatever it holds), sorted into rec: what makes an id no orphan. false, with why,
 * when one of them could not be read to its end: then an id could look orphaned whose record is
 * only unreadable, and no orphan is listed. */
static bool oc_records(const stores *S, int datafd, int data_err, nameset *rec, char *why, size_t nwhy)
{
	nameset top;
	size_t i, k;
	bool ok = true;

	memset(rec, 0, sizeof(*rec));
	/* $OPENCODE_DB in a dir that cannot be read: its sessions are records not seen */
	{
		int dbroot = agc_rootset_find(S->rs, "db");

		if (dbroot >= 0 && S->rs->v[dbroot].exists && S->rs->v[dbroot].err) {
			snprintf(why, nwhy, "cannot read '%s': %s", S->rs->v[dbroot].path,
				 strerror(S->rs->v[dbroot].err));
			return false;
		}
	}
	for (i = 0; ok && i < S->n; i++) {
		const store *st = &S->v[i];

		if (!st->db) {
			snprintf(why, nwhy, "%s", st->err ? st->err : "a database cannot be read");
			return false;
		}
		for (k = 0; ok && k < st->s.nsess; k++) {
			char *t = agc_db_ident(st->s.sess[k]), *sql = t ? agc_strfmt("SELECT \"id\" FROM %s", t) : NULL;
			sqlite3_stmt *q = NULL;
			int r = SQLITE_ERROR;

			if (sql && sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK) {
				while ((r = sqlite3_step(q)) == SQLITE_ROW) {
					const char *id = (const char *)sqlite3_column_text(q, 0);
					char **slot;

					if (!id)
						continue;
					if (!(slot = AGC_ARRAY_PUSH(rec, (size_t)1 << 26)) || !(*slot = agc_strdup(id))) {
						if (slot)
							rec->n--;
						r = SQLITE_NOMEM;
						break;
					}
				}
			}
			if (r != SQLITE_DONE) {
				snprintf(why, nwhy, "cannot read the sessions of '%s': %s", st->rel,
					 sqlite3_errmsg(st->db));
				ok = false;
			}
			sqlite3_finalize(q);
			free(sql);
			free(t);
		}
	}
	memset(&top, 0, sizeof(top));
	if (ok && datafd < 0 && data_err) {
		snprintf(why, nwhy, "cannot read the data dir: %s", strerror(data_err));
		ok = false;
	}
	if (datafd >= 0) {
		struct stat lst, st;

		nameset_list(&top, datafd, "storage/session");
		/* a link whose target is gone (a disk not mounted) hides session files */
		if (ok && ((fstatat(datafd, "storage", &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode) &&
			    fstatat(datafd, "storage", &st, 0) != 0) ||
			   (fstatat(datafd, "storage/session", &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode) &&
			    fstatat(datafd, "storage/session", &st, 0) != 0))) {
			snprintf(why, nwhy, "'storage/session' of the data dir is a link that leads nowhere");
			ok = false;
		}
	} else {
		top.listed = true;
	}
	if (ok && !top.listed) {
		snprintf(why, nwhy, "cannot list 'storage/session' of the data dir");
		ok = false;
	}
	for (i = 0; ok && i < top.n; i++) {
		char rel[1024];
		nameset pd;

		if (!agc_id_path_safe(top.v[i])) {
			snprintf(why, nwhy, "a project dir of 'storage/session' has a name agentgc does not follow");
			ok = false;
			break;
		}
		snprintf(rel, sizeof(rel), "storage/session/%s", top.v[i]);
		nameset_list(&pd, datafd, rel);
		{
			struct stat lst, st;

			if (fstatat(datafd, rel, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode) &&
			    fstatat(datafd, rel, &st, 0) != 0)
				pd.listed = false;
		}
		if (!pd.listed) {
			snprintf(why, nwhy, "cannot list '%s' of the data dir", rel);
			ok = false;
		}
		for (k = 0; ok && k < pd.n; k++) {
			size_t nl = strlen(pd.v[k]);
			char **slot;

			if (nl <= 5 || strcmp(pd.v[k] + nl - 5, ".json") != 0)
				continue;
			if (!(slot = AGC_ARRAY_PUSH(rec, (size_t)1 << 26)) || !(*slot = agc_strndup(pd.v[k], nl - 5))) {
				if (slot)
					rec->n--;
				snprintf(why, nwhy, "out of memory");
				ok = false;
			}
		}
		nameset_release(&pd);
	}
	nameset_release(&top);
	if (rec->n > 1)
		qsort(rec->v, rec->n, sizeof(*rec->v), cmp_name);
	rec->listed = true;
	return ok;
}

/* An orphan candidate: id (not yet checked), last seen at updated (ms, 0 unknown). */
static int orphan_add(orows *o, const char *id, int64_t updated)
{
	char canon[AGC_ID_MAX];
	orow *w;

	if (!id || agc_id_opencode(id, canon) < 0)
		return 0;
	if (!(w = AGC_ARRAY_PUSH(o, (size_t)1 << 24)) || !(w->id = agc_strdup(id))) {
		if (w)
			o->n--;
		return agc_error_oom();
	}
	w->updated = updated;
	w->orphan = true;
	return 0;
}

/* The ids that rows of the store's tables (other than its session tables) and the legacy
 * store's per-session files are keyed by, as discovery deletes them (db_rowsets,
 * legacy_files). */
static int orphan_candidates(const store *st, orows *o)
{
	size_t i, k, c;

	for (i = 0; i < st->s.n; i++) {
		const char *t = st->s.tables[i];
		bool is_sess = false;

		for (k = 0; k < st->s.nsess; k++)
			is_sess |= strcmp(t, st->s.sess[k]) == 0;
		if (is_sess)
			continue;
		for (c = 0; c < 2; c++) {
			const char *col = c == 0 ? "session_id" : "aggregate_id";
			const char *tm = agc_db_has_column(st->db, t, "time_updated")   ? "\"time_updated\""
					 : agc_db_has_column(st->db, t, "time_created") ? "\"time_created\""
											: "0";
			char *ti, *sql;
			sqlite3_stmt *q = NULL;

			if (!agc_db_has_column(st->db, t, col))
				continue;
			ti = agc_db_ident(t);
			sql = ti ? agc_strfmt("SELECT \"%s\", max(%s) FROM %s WHERE \"%s\" IS NOT NULL GROUP BY \"%s\"",
					      col, tm, ti, col, col)
				 : NULL;
			free(ti);
			if (!sql)
				return agc_error_oom();
			if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK)
				while (sqlite3_step(q) == SQLITE_ROW)
					if (sqlite3_column_type(q, 0) == SQLITE_TEXT &&
					    orphan_add(o, (const char *)sqlite3_column_text(q, 0), sqlite3_column_int64(q, 1)) < 0) {
						sqlite3_finalize(q);
						free(sql);
						return -1;
					}
			sqlite3_finalize(q);
			free(sql);
		}
	}
	return 0;
}

static int orphan_files(int datafd, orows *o)
{
	static const char *const dirs[] = {"storage/message", "storage/todo", "storage/session_share",
					   "storage/session_diff"};
	size_t i, k;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		nameset ns;

		nameset_list(&ns, datafd, dirs[i]);
		for (k = 0; k < ns.n; k++) {
			char id[AGC_ID_MAX + 8], rel[1024];
			size_t nl = strlen(ns.v[k]);
			struct stat st;

			if (i > 0 && (nl <= 5 || strcmp(ns.v[k] + nl - 5, ".json") != 0))
				continue;
			if (i > 0)
				nl -= 5;
			if (nl >= AGC_ID_MAX)
				continue;
			memcpy(id, ns.v[k], nl);
			id[nl] = '\0';
			snprintf(rel, sizeof(rel), "%s/%s", dirs[i], ns.v[k]);
			if (fstatat(datafd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (orphan_add(o, id, (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000) < 0) {
				nameset_release(&ns);
				return -1;
			}
		}
		nameset_release(&ns);
	}
	return 0;
}

/* SPEC "ls --orphans": rows and legacy files of ids that no session row and no legacy session
 * file names, appended to rows (sorted again), each charged as the sessions are (charge_store,
 * charge_files) with the gate entry its purge's discovery would have. */
static int oc_orphans(orows *rows, const stores *S, int datafd, int data_err, agc_ls_sink *sink)
{
	nameset rec;
	orows o = {0};
	char why[4200];
	size_t i, j, n;
	int rc = 0;

	if (!oc_records(S, datafd, data_err, &rec, why, sizeof(why))) {
		char *msg = agc_strfmt("opencode orphans not listed: %s", why);

		if (msg && sink->warn)
			sink->warn(sink, msg);
		free(msg);
		nameset_release(&rec);
		return 0;
	}
	for (i = 0; rc == 0 && i < S->n; i++)
		if (S->v[i].db && !S->v[i].linked)
			rc = orphan_candidates(&S->v[i], &o);
	if (rc == 0 && datafd >= 0)
		rc = orphan_files(datafd, &o);
	/* one row per id, its newest time; none that has a record or is listed */
	if (o.n > 1)
		qsort(o.v, o.n, sizeof(*o.v), cmp_orow);
	for (i = 0, n = 0; i < o.n; i++) {
		const char *id = o.v[i].id;

		if (n && strcmp(o.v[n - 1].id, id) == 0) {
			if (o.v[i].updated > o.v[n - 1].updated)
				o.v[n - 1].updated = o.v[i].updated;
			free(o.v[i].id);
			continue;
		}
		if ((rec.n && bsearch(&id, rec.v, rec.n, sizeof(*rec.v), cmp_name)) || orow_bsearch(rows, id)) {
			free(o.v[i].id);
			continue;
		}
		o.v[n++] = o.v[i];
	}
	o.n = n;
	nameset_release(&rec);
	for (i = 0; i < o.n; i++) {
		o.v[i].gate = agc_ls_gate_new(sink, oc_index());
		agc_ls_gate_id(sink, o.v[i].gate, o.v[i].id);
	}
	for (i = 0; rc == 0 && o.n && i < S->n; i++)
		if (S->v[i].db && !S->v[i].linked)
			charge_store(&o, S->v[i].db, &S->v[i].s);
	if (rc == 0 && o.n && datafd >= 0)
		charge_files(&o, datafd, sink);
	for (i = 0; rc == 0 && i < o.n; i++) {
		orow *w = AGC_ARRAY_PUSH(rows, (size_t)1 << 24);

		if (!w) {
			rc = -1;
			break;
		}
		*w = o.v[i];
		o.v[i].id = NULL;
	}
	for (j = 0; j < o.n; j++)
		free(o.v[j].id);
	free(o.v);
	if (rows->n > 1)
		qsort(rows->v, rows->n, sizeof(*rows->v), cmp_orow);
	return rc;
}

static int oc_list(agc_ctx *ctx, const agc_rootset *rs, const agc_ls_opts *opts, agc_ls_sink *sink)
{
	agc_size *own;
	orows rows = {0};
	stores S = {.rs = rs};
	int datafd = rs->v[R_DATA].exists ? agc_walk_open_root(rs->v[R_DATA].real) : -1;
	const store *bad;
	nameset recs = {0};
	bool recs_ok = false;
	char why[4200];
	size_t i;
	int rc, data_err;

	rc = each_db(ctx, rs, datafd, open_store, &S);
	/* a store that cannot be read hides no other store's sessions (R8) */
	for (i = 0; rc == 0 && i < S.n; i++)
		if (S.v[i].db)
			rc = list_store(&rows, &S.v[i], opts, sink);
	if (rows.n > 1)
		qsort(rows.v, rows.n, sizeof(*rows.v), cmp_orow);
	if (datafd >= 0) {
		list_legacy(&rows, datafd, sink);
		charge_files(&rows, datafd, sink);
	}
	/* a session of the legacy store may have rows in a store too (a half import, a row
	 * deleted by hand): discovery deletes them with it, so they count */
	if (rc == 0 && legacy_rows(&rows, &S) < 0)
		rc = -1;
	data_err = rs->v[R_DATA].exists ? (rs->v[R_DATA].err ? rs->v[R_DATA].err : (datafd < 0 ? EIO : 0)) : 0;
	if (rc == 0 && opts && opts->orphans && oc_orphans(&rows, &S, datafd, data_err, sink) < 0)
		rc = -1;
	/* A child whose parent the listing does not show: its parent is gone only when every
	 * record could be read and none is the parent's (a row of a table the listing skips, a
	 * legacy file that does not parse still is one). Read only when such a child exists. */
	for (i = 0; rc == 0 && i < rows.n; i++) {
		const orow *up = rows.v[i].parent && !rows.v[i].orphan ? orow_bsearch(&rows, rows.v[i].parent) : NULL;

		if (rows.v[i].parent && !rows.v[i].orphan && (!up || up->orphan)) {
			recs_ok = oc_records(&S, datafd, data_err, &recs, why, sizeof(why));
			break;
		}
	}
	if (datafd >= 0)
		close(datafd);
	/* R5: a process holding any store's database, its WAL or shared memory holds every
	 * session (discover_store watches every readable store for each) */
	for (i = 0; i < S.n; i++) {
		static const char *const sfx[] = {"", "-wal", "-shm"};
		size_t k, j;
		int rfd;

		if (!S.v[i].db || !rs->v[S.v[i].root].real || (rfd = agc_walk_open_root(rs->v[S.v[i].root].real)) < 0)
			continue;
		for (k = 0; k < 3; k++) {
			char *rel = agc_strfmt("%s%s", S.v[i].rel, sfx[k]);
			struct stat wst;

			if (rel && agc_walk_rel_ok(rel) && fstatat(rfd, rel, &wst, 0) == 0)
				for (j = 0; j < rows.n; j++)
					agc_ls_gate_file(sink, rows.v[j].gate, &wst);
			free(rel);
		}
		close(rfd);
	}
	/* children's bytes count in every ancestor's: each row's own figures, taken before any
	 * is added to, go up its chain once (a grandchild is not counted again through its
	 * parent) */
	own = rows.n ? malloc(rows.n * sizeof(*own)) : NULL;
	for (i = 0; own && i < rows.n; i++)
		own[i] = rows.v[i].sz;
	for (i = 0; own && i < rows.n; i++) {
		orow *c = &rows.v[i];
		const char *par = c->parent;
		int depth = 0;

		/* a child's size and activity are its ancestors' too: "the newest run of a
		 * directory" is the root a newer child belongs to */
		while (par && depth++ < OC_DEPTH_MAX) {
			orow *up = orow_bsearch(&rows, par);

			if (!up)
				break;
			/* whatever holds the child holds its ancestors: their purge takes it along */
			if (depth == 1)
				agc_ls_gate_parent(sink, c->gate, up->gate);
			/* an orphan's figures are what is left of it: a child still on record is a
			 * root of its own (parent_gone), counted there, not twice */
			if (up->orphan)
				break;
			up->sz.bytes += own[i].bytes;
			up->sz.disk += own[i].disk;
			/* a cycle of parents ends where it started */
			if (up == c)
				break;
			if (c->updated > up->updated)
				up->updated = c->updated;
			par = up->parent;
		}
	}
	if (rows.n && !own)
		rc = agc_error_oom();
	free(own);
	bad = stores_first_bad(&S);
	for (i = 0; i < rows.n && rc >= 0; i++) {
		agc_session_info info = {
			.agent = "opencode",
			.id = rows.v[i].id,
			.parent = rows.v[i].parent,
			.project = rows.v[i].dir,
			.title = rows.v[i].title,
			.prompt = rows.v[i].prompt,
			.created_ms = rows.v[i].created,
			.updated_ms = rows.v[i].updated,
			.bytes = rows.v[i].sz.bytes,
			.disk = rows.v[i].sz.disk,
			.orphan = rows.v[i].orphan,
		};

		/* a child whose parent has no session row (nor legacy file) is a root now (SPEC
		 * "ls"); not while a store or the legacy dir could not be read (the parent's row
		 * may be there) */
		if (rows.v[i].parent && !rows.v[i].orphan && recs_ok) {
			const orow *up = orow_bsearch(&rows, rows.v[i].parent);
			const char *par = rows.v[i].parent;

			info.parent_gone = (!up || up->orphan) && !(recs.n && bsearch(&par, recs.v, recs.n, sizeof(*recs.v), cmp_name));
		}
		if (sink->add(sink, &info, rows.v[i].gate) < 0)
			rc = -1;
	}
	for (i = 0; i < rows.n; i++) {
		free(rows.v[i].id);
		free(rows.v[i].parent);
		free(rows.v[i].title);
		free(rows.v[i].prompt);
		free(rows.v[i].dir);
		free(rows.v[i].slug);
	}
	free(rows.v);
	nameset_release(&recs);
	/* every session that could be read is listed; then the store that could not be read is
	 * said (the caller prints it on stderr) */
	if (rc >= 0 && bad) {
		agc_error_set(-1, "%s", bad->err);
		rc = -1;
	}
	stores_release(&S);
	return rc < 0 ? -1 : 0;
}

/* compact: opencode.db, the channels' databases and $OPENCODE_DB (each_db) */
static int oc_databases(agc_ctx *ctx, const agc_rootset *rs, int (*cb)(size_t root, const char *rel, void *ud),
			void *ud)
{
	int datafd = rs->v[R_DATA].exists ? agc_walk_open_root(rs->v[R_DATA].real) : -1;
	int rc = each_db(ctx, rs, datafd, cb, ud);

	if (datafd >= 0)
		close(datafd);
	return rc;
}

/* ps and stop: OpenCode's own processes: an executable argument named opencode* (the
 * binary, the npm package's bin/opencode script run by node or bun). */
static bool oc_is_proc(const char *argv, size_t len)
{
	const char *b;
	size_t bl;

	return agc_argv_prog(argv, len, &b, &bl) && bl >= 8 && memcmp(b, "opencode", 8) == 0;
}

static bool oc_is_service(const char *argv, size_t len)
{
	return oc_exempt(argv, len, NULL);
}

/* stop: the options whose value is the session the process runs */
static const char *const opencode_session_opts[] = {"--session", "-s", NULL};

const agc_adapter agc_adapter_opencode = {
	.name = "opencode",
	.bit = AGC_AGENT_OPENCODE,
	.id_canon = oc_id,
	.id_whole = agc_id_opencode_generated,
	.roots = oc_roots,
	.discover = oc_discover,
	.list = oc_list,
	.run_new = oc_run_new,
	.run_free = oc_run_free,
	.run_close = oc_run_close,
	.exempt = oc_exempt,
	.service = "'opencode serve --service' (OpenCode's shared service)",
	.databases = oc_databases,
	.is_proc = oc_is_proc,
	.is_service = oc_is_service,
	/* every OpenCode process keeps the one database of all sessions open (formats §5) */
	.stop_no_open_file = true,
	.release = "OpenCode's service serves every session of its database and is never stopped "
		   "by agentgc: end it from OpenCode once its sessions are done",
	.session_opts = opencode_session_opts,
};
