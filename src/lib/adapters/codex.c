/* Codex CLI (formats/codex.md): a thread's rollout in the Codex home (sessions/YYYY/MM/DD/ or
 * archived_sessions/, .jsonl or .jsonl.zst), its rows in every database of the SQLite home
 * (found by introspection, version suffixes not assumed), its side files (the writer lock,
 * shell snapshots, the TUI marker), its lines of session_index.jsonl and history.jsonl, and
 * its spawn closure (sub-agents, by thread_spawn_edges and by parent_thread_id in line 0).
 * A thread that a surviving fork reads (history_base, a leading rollout_reference line) is
 * refused unless the forks go too. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "db.h"
#include "error.h"
#include "jscan.h"
#include "json.h"
#include "session.h"
#include "toml.h"
#include "zlines.h"

enum { R_HOME = 0, R_SQLITE = 1 };

#define CX_COORD ".coordination.lock"
#define CX_LINE0_MAX ((size_t)4 << 20)   /* line 0 is 21-27 KB; a bound far above it */
#define CX_DIR_MAX 100000                /* entries of one dir of the date tree looked at */
#define CX_DEPTH_MAX 64                  /* spawn and fork depth followed */
#define CX_INDEX_MAX ((size_t)1 << 22)   /* rollouts of one home */

static int cx_id(const char *in, char *out)
{
	return agc_id_uuid(in, out);
}

static bool cx_id_whole(const char *id)
{
	return strlen(id) == AGC_UUID_LEN;
}

/* ---- roots --------------------------------------------------------------------------------- */

/* The SQLite home: config.toml's top-level sqlite_home (relative to the Codex home), then
 * $CODEX_SQLITE_HOME (the caller's own home only), then the Codex home (formats/codex.md §1). */
static int cx_roots(agc_ctx *ctx, agc_rootset *rs)
{
	const char *env = agc_ctx_env(ctx, "CODEX_HOME"), *qenv, *qsrc;
	char *home = env ? agc_strdup(env) : agc_strfmt("%s/.codex", ctx->home);
	char *q = NULL;
	int hfd, fd, rc;

	if (!home)
		return -1;
	rc = agc_rootset_add(rs, "home", home, env ? "$CODEX_HOME" : "default");
	if (rc < 0) {
		free(home);
		return -1;
	}
	qsrc = NULL;
	hfd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hfd >= 0) {
		fd = agc_open_file_at(hfd, "config.toml", 0, NULL);
		if (fd >= 0) {
			rc = agc_toml_top_string_fd(fd, "config.toml", "sqlite_home", &q);
			close(fd);
			if (rc < 0)
				qsrc = "default (config.toml could not be read)";
			else if (rc == 1 && !*q) {
				free(q);
				q = NULL;
			} else if (rc == 1) {
				qsrc = "config.toml sqlite_home";
				if (q[0] != '/') {
					char *abs = agc_strfmt("%s/%s", home, q);

					free(q);
					q = abs;
				}
			}
		} else if (fd != AGC_ENOTFOUND) {
			qsrc = "default (config.toml could not be read)";
		}
		close(hfd);
	}
	if (!q && !qsrc && (qenv = agc_ctx_env(ctx, "CODEX_SQLITE_HOME"))) {
		q = agc_strdup(qenv);
		qsrc = "$CODEX_SQLITE_HOME";
	}
	if (!q) {
		q = agc_strdup(home);
		if (!qsrc)
			qsrc = "the Codex home";
	}
	free(home);
	if (!q)
		return -1;
	rc = agc_rootset_add(rs, "sqlite", q, qsrc);
	free(q);
	return rc < 0 ? -1 : 0;
}

/* ---- names --------------------------------------------------------------------------------- */

static bool digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return s[n] == '\0';
}

/* rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl[.zst] (formats/codex.md §6): the uuid (canonical)
 * into id, and whether it is compressed. */
static bool rollout_name(const char *name, char *id, bool *zst)
{
	size_t n = strlen(name), base;
	char tmp[AGC_UUID_LEN + 1];
	static const char pat[] = "rollout-0000-00-00T00-00-00-";
	size_t i;

	if (n >= 6 && strcmp(name + n - 4, ".zst") == 0) {
		*zst = true;
		n -= 4;
	} else {
		*zst = false;
	}
	if (n < 6 || strncmp(name + n - 6, ".jsonl", 6) != 0)
		return false;
	base = sizeof(pat) - 1;
	if (n - 6 != base + AGC_UUID_LEN)
		return false;
	for (i = 0; i < base; i++)
		if (pat[i] == '0' ? (name[i] < '0' || name[i] > '9') : name[i] != pat[i])
			return false;
	memcpy(tmp, name + base, AGC_UUID_LEN);
	tmp[AGC_UUID_LEN] = '\0';
	return agc_id_uuid(tmp, id) == 0 && strcmp(tmp, id) == 0;
}

/* True when s[from, to) is one or more decimal digits. */
static bool all_digits(const char *s, size_t from, size_t to)
{
	size_t k;

	for (k = from; k < to; k++)
		if (s[k] < '0' || s[k] > '9')
			return false;
	return to > from;
}

/* A shell snapshot of exactly that thread (never a prefix twin): <id>.<digits>.sh, or
 * <id>.tmp-<digits>, one that Codex was still writing when it stopped (seen left by the TUI's
 * side threads; it holds the environment all the same). */
static bool snapshot_of(const char *name, const char *id)
{
	size_t il = strlen(id), n = strlen(name);

	if (n < il + 2 || strncmp(name, id, il) != 0 || name[il] != '.')
		return false;
	if (n > il + 5 && strncmp(name + il + 1, "tmp-", 4) == 0)
		return all_digits(name, il + 5, n);
	return n >= il + 5 && strcmp(name + n - 3, ".sh") == 0 && all_digits(name, il + 1, n - 3);
}

/* ---- the rollouts and their first lines ----------------------------------------------------- */

typedef struct rollout {
	char *rel;          /* beneath the Codex home */
	char id[AGC_ID_MAX];
	bool zst, archived;
	struct stat st;
	/* line 0 (and a leading rollout_reference line) */
	bool read;
	char *err;          /* its first line could not be read: why */
	char *parent;       /* parent_thread_id */
	char *base;         /* the thread whose rollout it reads (history_base, rollout_reference) */
	char *cwd;
	char *subagent;     /* thread_source "subagent": the parent it names, else NULL */
	int64_t created_ms;
} rollout;

/* A dir the index listed, as it was: the index is reused (a run of many ids) only while every
 * one is unchanged. */
typedef struct dirkey {
	char *rel;
	ino_t ino;
	int64_t mtime_ns, ctime_ns;
} dirkey;

typedef struct index {
	rollout *v;
	size_t n, cap;
	struct { dirkey *v; size_t n, cap; } dirs;
	/* names the index left out that may still be a rollout Codex reads (a link, a name in
	 * upper case): in lower case, so that no thread is taken to be gone while one names it */
	struct { char **v; size_t n, cap; } odd;
	bool sorted;
} index_t;

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static int dirkey_add(index_t *x, const char *rel, int fd)
{
	struct stat st;
	dirkey *k;

	if (fstat(fd, &st) < 0)
		return 0; /* not kept: the index is then never reused */
	k = AGC_ARRAY_PUSH(&x->dirs, CX_INDEX_MAX);
	if (!k || !(k->rel = agc_strdup(rel))) {
		if (k)
			x->dirs.n--;
		return -1;
	}
	k->ino = st.st_ino;
	k->mtime_ns = ns_of(&st.st_mtim);
	k->ctime_ns = ns_of(&st.st_ctim);
	return 0;
}

/* rel was not there: the index is kept only while it is still not there. */
static int dirkey_absent(index_t *x, const char *rel)
{
	dirkey *k = AGC_ARRAY_PUSH(&x->dirs, CX_INDEX_MAX);

	if (!k || !(k->rel = agc_strdup(rel))) {
		if (k)
			x->dirs.n--;
		return -1;
	}
	k->ino = 0;
	k->mtime_ns = k->ctime_ns = 0;
	return 0;
}

/* Every dir listed is as it was (and the tree has no dir it did not list: a new date dir
 * changes its parent's times). */
static bool index_fresh(const index_t *x, int homefd)
{
	size_t i;

	if (!x->sorted || !x->dirs.n)
		return false;
	for (i = 0; i < x->dirs.n; i++) {
		struct stat st;
		const dirkey *k = &x->dirs.v[i];

		if (fstatat(homefd, k->rel, &st, 0) < 0) {
			if (k->ino == 0 && errno == ENOENT)
				continue;
			return false;
		}
		if (st.st_ino != k->ino || ns_of(&st.st_mtim) != k->mtime_ns || ns_of(&st.st_ctim) != k->ctime_ns)
			return false;
	}
	return true;
}

static void rollout_release(rollout *r)
{
	free(r->rel);
	free(r->err);
	free(r->parent);
	free(r->base);
	free(r->cwd);
	free(r->subagent);
}

static void index_release(index_t *x)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		rollout_release(&x->v[i]);
	free(x->v);
	for (i = 0; i < x->dirs.n; i++)
		free(x->dirs.v[i].rel);
	free(x->dirs.v);
	for (i = 0; i < x->odd.n; i++)
		free(x->odd.v[i]);
	free(x->odd.v);
	memset(x, 0, sizeof(*x));
}

static int rollout_cmp(const void *a, const void *b)
{
	const rollout *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	/* a plain file first (it wins over its .zst twin: formats/codex.md §2), then by path */
	return c ? c : x->zst != y->zst ? (x->zst ? 1 : -1) : strcmp(x->rel, y->rel);
}

/* s in ASCII lower case, in place (names compared as the index keeps them). */
static void ascii_lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* Reading a dir of the tree failed: said to whoever builds the index. */
typedef void (*index_warn)(void *ud, const char *rel, const char *why);

static int index_add(index_t *x, const char *rel, const char *id, bool zst, bool archived, const struct stat *st)
{
	rollout *r = AGC_ARRAY_PUSH(x, CX_INDEX_MAX);

	if (!r)
		return -1;
	memset(r, 0, sizeof(*r));
	r->rel = agc_strdup(rel);
	if (!r->rel) {
		x->n--;
		return -1;
	}
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->zst = zst;
	r->archived = archived;
	r->st = *st;
	return 0;
}

/* The rollouts of one dir (rel beneath homefd): regular files only; a dir is looked into
 * through a link (to find and report: such files are never removed, agc_plan_add_art marks
 * them), a FIFO or device is never opened. */
static int index_dir(index_t *x, int homefd, const char *rel, bool archived, index_warn warn, void *ud)
{
	DIR *d = agc_dir_at(homefd, rel);
	struct dirent *e;
	size_t seen = 0;
	int rc = 0, dfd;

	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR) {
			warn(ud, rel, strerror(errno));
			return 0;
		}
		return dirkey_absent(x, rel);
	}
	dfd = dirfd(d);
	rc = dirkey_add(x, rel, dfd);
	errno = 0;
	while (rc == 0 && (e = readdir(d))) {
		char id[AGC_ID_MAX], *r;
		bool zst;
		struct stat st;

		if (++seen > CX_DIR_MAX) {
			warn(ud, rel, "too many entries");
			break;
		}
		if (!rollout_name(e->d_name, id, &zst) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
			if (strncasecmp(e->d_name, "rollout-", 8) == 0) {
				char **o = AGC_ARRAY_PUSH(&x->odd, CX_INDEX_MAX);

				if (!o || !(*o = agc_strdup(e->d_name))) {
					if (o)
						x->odd.n--;
					rc = agc_error_oom();
					break;
				}
				ascii_lower(*o);
			}
			errno = 0;
			continue;
		}
		r = agc_strfmt("%s/%s", rel, e->d_name);
		rc = r ? index_add(x, r, id, zst, archived, &st) : -1;
		free(r);
		errno = 0;
	}
	if (rc == 0 && errno)
		warn(ud, rel, strerror(errno));
	closedir(d);
	return rc;
}

/* Every rollout of the home: sessions/YYYY/MM/DD/ (scanned: the local-time dirs are never
 * computed) and the flat archived_sessions/. */
static int index_build(index_t *x, int homefd, index_warn warn, void *ud)
{
	static const size_t len[3] = {4, 2, 2};
	char rel[4][320];
	DIR *d[3] = {0};
	struct dirent *e;
	int level = 0, rc = 0;

	rc = index_dir(x, homefd, "archived_sessions", true, warn, ud);
	d[0] = agc_dir_at(homefd, "sessions");
	if (!d[0] && errno != ENOENT && errno != ENOTDIR)
		warn(ud, "sessions", strerror(errno));
	snprintf(rel[0], sizeof(rel[0]), "sessions");
	if (rc == 0 && d[0])
		rc = dirkey_add(x, rel[0], dirfd(d[0]));
	else if (rc == 0)
		rc = dirkey_absent(x, "sessions");
	while (rc == 0 && level >= 0 && d[0]) {
		errno = 0;
		e = readdir(d[level]);
		if (!e) {
			if (errno)
				warn(ud, rel[level], strerror(errno));
			closedir(d[level]);
			d[level] = NULL;
			level--;
			continue;
		}
		if (strlen(e->d_name) != len[level] || !digits(e->d_name, len[level]))
			continue;
		if (level == 2) {
			char leaf[640];

			snprintf(leaf, sizeof(leaf), "%s/%s", rel[2], e->d_name);
			rc = index_dir(x, homefd, leaf, false, warn, ud);
			continue;
		}
		{
			char next[sizeof(rel[0])];

			snprintf(next, sizeof(next), "%s/%s", rel[level], e->d_name);
			memcpy(rel[level + 1], next, sizeof(next));
		}
		d[level + 1] = agc_dir_at(homefd, rel[level + 1]);
		if (!d[level + 1]) {
			if (errno != ENOENT && errno != ENOTDIR)
				warn(ud, rel[level + 1], strerror(errno));
			continue;
		}
		rc = dirkey_add(x, rel[level + 1], dirfd(d[level + 1]));
		level++;
	}
	for (level = 0; level < 3; level++)
		if (d[level])
			closedir(d[level]);
	if (rc == 0 && x->n > 1)
		qsort(x->v, x->n, sizeof(*x->v), rollout_cmp);
	x->sorted = true;
	return rc;
}

static char *json_dup(const json_t *o, const char *key)
{
	const char *s = agc_json_str(o, key);

	return s ? agc_strdup(s) : NULL;
}

/* A thread id named in agent data: only an id of the grammar, canonical (R1). */
static char *id_dup(const json_t *o, const char *key)
{
	const char *s = agc_json_str(o, key);
	char id[AGC_ID_MAX];

	return s && agc_id_uuid(s, id) == 0 ? agc_strdup(id) : NULL;
}

/* A thread id in a string span: only an id of the grammar, canonical (R1). */
static char *span_id(agc_jspan v)
{
	char *s = agc_jscan_str(v), id[AGC_ID_MAX];
	bool ok = s && agc_id_uuid(s, id) == 0;

	free(s);
	return ok ? agc_strdup(id) : NULL;
}

static bool span_object(agc_jspan v)
{
	return v.p && v.n && v.p[0] == '{';
}

/* The fields of line 0 the index keeps (what line0_slow reads with jansson), by the head scanner
 * (a line 0 is 21-27 KB, most of it instructions no one reads here). AGC_JSCAN_ASK when the
 * scanner is not sure: then jansson reads it. */
static int line0_fast(rollout *r, const char *line, size_t len)
{
	static const char *const top[] = {"type", "payload"};
	static const char *const meta[] = {"parent_thread_id", "cwd", "history_base", "source", "timestamp"};
	static const char *const tid[] = {"thread_id"};
	static const char *const sub[] = {"subagent"};
	static const char *const spawn[] = {"thread_spawn"};
	static const char *const pid[] = {"parent_thread_id"};
	agc_jspan t[2], m[5], v[1], w[1];
	char *ts;

	if (agc_jscan_line(line, len, top, 2, t) != AGC_JSCAN_OK)
		return AGC_JSCAN_ASK;
	if (!agc_jscan_str_is(t[0], "session_meta") || !span_object(t[1])) {
		r->err = agc_strdup("its first line is not a session_meta line");
		return AGC_JSCAN_OK;
	}
	if (agc_jscan_members(t[1], meta, 5, m) != AGC_JSCAN_OK)
		return AGC_JSCAN_ASK;
	r->parent = m[0].p ? span_id(m[0]) : NULL;
	r->cwd = m[1].p ? agc_jscan_str(m[1]) : NULL;
	if (span_object(m[2])) {
		if (agc_jscan_members(m[2], tid, 1, v) != AGC_JSCAN_OK)
			return AGC_JSCAN_ASK;
		r->base = v[0].p ? span_id(v[0]) : NULL;
	}
	if (span_object(m[3]) && !r->parent) {
		if (agc_jscan_members(m[3], sub, 1, v) != AGC_JSCAN_OK ||
		    (span_object(v[0]) && agc_jscan_members(v[0], spawn, 1, w) != AGC_JSCAN_OK))
			return AGC_JSCAN_ASK;
		if (span_object(v[0]) && span_object(w[0])) {
			if (agc_jscan_members(w[0], pid, 1, v) != AGC_JSCAN_OK)
				return AGC_JSCAN_ASK;
			r->parent = v[0].p ? span_id(v[0]) : NULL;
		}
	}
	ts = m[4].p ? agc_jscan_str(m[4]) : NULL;
	if (ts) {
		int64_t ms;

		if (agc_time_parse_iso(ts, &ms) == 0)
			r->created_ms = ms;
		free(ts);
	}
	return AGC_JSCAN_OK;
}

/* The same read with jansson (what the scanner is not sure of). */
static void line0_slow(rollout *r, const char *line, size_t len)
{
	json_t *j = agc_json_parse(line, len);
	const char *type = j ? agc_json_str(j, "type") : NULL;
	const json_t *pl = j ? json_object_get(j, "payload") : NULL, *hb, *src;
	const char *ts;
	int64_t ms;

	if (!type || strcmp(type, "session_meta") != 0 || !json_is_object(pl)) {
		r->err = agc_strdup(j ? "its first line is not a session_meta line" : "its first line is not JSON");
		json_decref(j);
		return;
	}
	r->parent = id_dup(pl, "parent_thread_id");
	r->cwd = json_dup(pl, "cwd");
	hb = json_object_get(pl, "history_base");
	if (json_is_object(hb))
		r->base = id_dup(hb, "thread_id");
	src = json_object_get(pl, "source");
	if (json_is_object(src)) {
		const json_t *sa = json_object_get(src, "subagent");
		const json_t *sp = json_is_object(sa) ? json_object_get(sa, "thread_spawn") : NULL;

		if (json_is_object(sp) && !r->parent)
			r->parent = id_dup(sp, "parent_thread_id");
	}
	ts = agc_json_str(pl, "timestamp");
	if (ts && agc_time_parse_iso(ts, &ms) == 0)
		r->created_ms = ms;
	json_decref(j);
}

/* A rollout_reference line after line 0: the thread whose rollout this one reads. */
static void line1_read(rollout *r, const char *line, size_t len)
{
	static const char *const top[] = {"type", "payload"};
	static const char *const tid[] = {"thread_id"};
	agc_jspan t[2], v[1];
	json_t *j;
	const json_t *pl;
	const char *type;

	if (agc_jscan_line(line, len, top, 2, t) == AGC_JSCAN_OK) {
		if (!agc_jscan_str_is(t[0], "rollout_reference") || !span_object(t[1]))
			return;
		if (agc_jscan_members(t[1], tid, 1, v) == AGC_JSCAN_OK) {
			r->base = v[0].p ? span_id(v[0]) : NULL;
			return;
		}
	}
	j = agc_json_parse(line, len);
	type = j ? agc_json_str(j, "type") : NULL;
	pl = j ? json_object_get(j, "payload") : NULL;
	if (type && strcmp(type, "rollout_reference") == 0 && json_is_object(pl))
		r->base = id_dup(pl, "thread_id");
	json_decref(j);
}

/* Line 0 (session_meta) and, when it is one, a rollout_reference line after it. */
static void rollout_read(rollout *r, int homefd)
{
	agc_zlines *zl = NULL;
	agc_zline ln;
	int fd, nrc;

	if (r->read)
		return;
	r->read = true;
	fd = agc_open_file_at(homefd, r->rel, 0, NULL);
	if (fd < 0) {
		r->err = agc_strdup(agc_error_last());
		return;
	}
	if (agc_zlines_open(&zl, fd, r->rel, CX_LINE0_MAX, 0) < 0) {
		r->err = agc_strdup(agc_error_last());
		close(fd);
		return;
	}
	nrc = agc_zlines_next(zl, &ln);
	if (nrc <= 0)
		r->err = agc_strdup(nrc < 0 ? agc_error_last() : "empty rollout");
	else if (ln.flags & AGC_ZLINE_TOOLONG)
		r->err = agc_strdup("its first line is too long");
	else if (line0_fast(r, ln.ptr, ln.len) == AGC_JSCAN_ASK) {
		/* what the scanner set before it asked is read again */
		free(r->parent);
		free(r->cwd);
		free(r->base);
		r->parent = r->cwd = r->base = NULL;
		r->created_ms = 0;
		line0_slow(r, ln.ptr, ln.len);
	}
	if (!r->err && !r->base && agc_zlines_next(zl, &ln) > 0 && !(ln.flags & AGC_ZLINE_TOOLONG))
		line1_read(r, ln.ptr, ln.len);
	agc_zlines_free(zl);
	close(fd);
}

/* What a new index can keep of an old one: each rollout's first-line reading, while the file
 * is the one that was read (same path, inode, size and mtime). */
static void index_carry(index_t *nx, index_t *old)
{
	size_t i;

	for (i = 0; i < nx->n && old->n; i++) {
		rollout *r = &nx->v[i];
		rollout *o = bsearch(r, old->v, old->n, sizeof(*r), rollout_cmp);

		if (!o || !o->read || o->st.st_ino != r->st.st_ino || o->st.st_size != r->st.st_size ||
		    ns_of(&o->st.st_mtim) != ns_of(&r->st.st_mtim))
			continue;
		r->read = true;
		r->err = o->err;
		r->parent = o->parent;
		r->base = o->base;
		r->cwd = o->cwd;
		r->subagent = o->subagent;
		r->created_ms = o->created_ms;
		o->err = o->parent = o->base = o->cwd = o->subagent = NULL;
		o->read = false;
	}
}

/* ---- per-run state -------------------------------------------------------------------------- */

typedef struct cx_run {
	index_t idx;
	bool built;
} cx_run;

static void *cx_run_new(void)
{
	return calloc(1, sizeof(cx_run));
}

static void cx_run_free(void *v)
{
	cx_run *r = v;

	if (!r)
		return;
	index_release(&r->idx);
	free(r);
}

typedef struct dwarn {
	agc_plan *p;
	int rc;
} dwarn;

static void plan_warn(void *ud, const char *rel, const char *why)
{
	dwarn *w = ud;

	if (agc_plan_add_note(w->p, R_HOME, rel, why) < 0)
		w->rc = -1;
}

/* The index for a discovery: the run's while it is fresh (its dirs unchanged), else built
 * anew (keeping the first lines read of files that did not change). */
static index_t *plan_index(agc_plan *p, int homefd, index_t *own)
{
	cx_run *run = p->run;
	dwarn w = {p, 0};
	index_t nx = {0};

	if (run && run->built && index_fresh(&run->idx, homefd))
		return &run->idx;
	if (index_build(&nx, homefd, plan_warn, &w) < 0 || w.rc < 0) {
		index_release(&nx);
		return NULL;
	}
	if (run) {
		index_carry(&nx, &run->idx);
		index_release(&run->idx);
		run->idx = nx;
		/* a listing that met an error is not kept for later ids: they look again */
		run->built = p->notes.n == 0;
		return &run->idx;
	}
	*own = nx;
	return own;
}

/* The first entry of id in the sorted index, or NULL. */
static rollout *index_first(index_t *x, const char *id)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(x->v[mid].id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->n && strcmp(x->v[lo].id, id) == 0 ? &x->v[lo] : NULL;
}

/* ---- the databases ---------------------------------------------------------------------------- */

typedef struct cxdb {
	char *rel;          /* beneath the SQLite home */
	sqlite3 *db;        /* read-only; NULL when it could not be read */
	bool linked;
	char *err;
	char **tables;
	size_t ntables;
	agc_db_schema cols; /* every table's columns and foreign keys, read once */
	int dbi;            /* its index in the plan, -1 when not in it */
	bool edges;         /* has thread_spawn_edges(parent_thread_id, child_thread_id) */
	bool threads;       /* has threads(id) */
	bool attached;      /* has threads.attached_thread_parent_id (formats/codex.md §4: a parent
			       named there, a relation whose meaning is not established) */
} cxdb;

typedef struct cxdbs {
	cxdb *v;
	size_t n, cap;
} cxdbs;

static void dbs_release(cxdbs *D)
{
	size_t i;

	for (i = 0; i < D->n; i++) {
		free(D->v[i].rel);
		free(D->v[i].err);
		agc_db_strv_free(D->v[i].tables, D->v[i].ntables);
		agc_db_schema_release(&D->v[i].cols);
		sqlite3_close(D->v[i].db);
	}
	free(D->v);
	memset(D, 0, sizeof(*D));
}

static int dbname_cmp(const void *a, const void *b)
{
	return strcmp(((const cxdb *)a)->rel, ((const cxdb *)b)->rel);
}

/* Every *.sqlite of the SQLite home, opened read-only (R6), its tables read. One that is not
 * SQLite, cannot be read, or is locked keeps its reason (err). A FIFO or a device in a
 * database's place is never opened (R8). */
static int dbs_open(cxdbs *D, const agc_rootset *rs, int qfd)
{
	DIR *d = agc_dir_at(qfd, ".");
	struct dirent *e;
	size_t seen = 0;

	if (!d)
		return errno == ENOENT ? 0 : agc_error_errno(-1, errno, "cannot read the SQLite home");
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		struct stat lst, st;
		cxdb *x;
		char *abs;
		int rc;

		if (++seen > CX_DIR_MAX)
			break;
		if (n < 8 || strcmp(e->d_name + n - 7, ".sqlite") != 0 || e->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), e->d_name, &lst, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		x = AGC_ARRAY_PUSH(D, 256);
		if (!x) {
			closedir(d);
			return -1;
		}
		memset(x, 0, sizeof(*x));
		x->dbi = -1;
		x->rel = agc_strdup(e->d_name);
		abs = agc_plan_abspath(rs, R_SQLITE, e->d_name);
		if (!x->rel || !abs) {
			free(abs);
			closedir(d);
			return -1;
		}
		x->linked = S_ISLNK(lst.st_mode);
		if (fstatat(dirfd(d), e->d_name, &st, 0) < 0)
			rc = agc_error_errno(-1, errno, "%s", abs);
		else if (!S_ISREG(st.st_mode))
			rc = agc_error_set(-1, "%s: not a regular file", abs);
		else
			rc = agc_db_open_ro(abs, &x->db);
		if (rc == 0)
			rc = agc_db_tables(x->db, &x->tables, &x->ntables);
		if (rc == 0)
			rc = agc_db_schema_read(x->db, &x->cols);
		if (rc == 0) {
			x->edges = agc_db_schema_has_column(&x->cols, "thread_spawn_edges", "parent_thread_id") &&
				   agc_db_schema_has_column(&x->cols, "thread_spawn_edges", "child_thread_id");
			x->threads = agc_db_schema_has_column(&x->cols, "threads", "id");
			x->attached = x->threads && agc_db_schema_has_column(&x->cols, "threads", "attached_thread_parent_id");
		} else {
			const char *msg = agc_error_last();
			size_t al = strlen(abs);

			if (strncmp(msg, abs, al) == 0 && strncmp(msg + al, ": ", 2) == 0)
				msg += al + 2;
			x->err = agc_strfmt("cannot read '%s': %s", abs, msg);
			sqlite3_close(x->db);
			x->db = NULL;
			if (!x->err) {
				free(abs);
				closedir(d);
				return -1;
			}
		}
		free(abs);
	}
	closedir(d);
	if (D->n > 1)
		qsort(D->v, D->n, sizeof(*D->v), dbname_cmp);
	return 0;
}

/* The columns of table t that key it by thread (formats/codex.md §7): threads.id (the record),
 * any thread_id, either end of a spawn edge, session_model_ids.session_id. Another thread's
 * row that only points at a thread (attached_thread_parent_id) or quotes it stays. */
static size_t thread_keys(const agc_db_schema *db, const char *t, const char *out[3], bool *record)
{
	size_t n = 0;

	*record = false;
	if (strcmp(t, "threads") == 0 && agc_db_schema_has_column(db, t, "id")) {
		*record = true;
		out[n++] = "id";
		return n;
	}
	if (agc_db_schema_has_column(db, t, "thread_id"))
		out[n++] = "thread_id";
	/* an edge goes by either end: one row set, the child end direct and the parent end
	 * through the table itself (thread_spawn_rows), so no edge is counted twice */
	if (strcmp(t, "thread_spawn_edges") == 0 && agc_db_schema_has_column(db, t, "child_thread_id"))
		out[n++] = "child_thread_id";
	if (strcmp(t, "session_model_ids") == 0 && agc_db_schema_has_column(db, t, "session_id"))
		out[n++] = "session_id";
	return n;
}

/* Table t is keyed by a rollout's path (a rollout_path column, no thread key), and the
 * record table rec names each thread's. */
static bool path_keyed(const cxdb *x, const char *rec, const char *t)
{
	const char *keys[3];
	bool record;

	return strcmp(t, rec) != 0 && strncmp(t, "sqlite_", 7) != 0 && !thread_keys(&x->cols, t, keys, &record) &&
	       agc_db_schema_has_column(&x->cols, t, "rollout_path") && agc_db_schema_has_column(&x->cols, rec, "rollout_path");
}

/* The row sets of one database, in an order the deletes can go: a table that another still
 * to go references comes after it, the record last (R6). */
static int db_rowsets(agc_plan *p, const cxdb *x, size_t dbi)
{
	const char **todo = calloc(x->ntables + 1, sizeof(*todo));
	size_t i, k, n = 0, done;
	const char *rec = NULL;
	int rc = 0;

	if (!todo)
		return agc_error_oom();
	for (i = 0; i < x->ntables; i++) {
		const char *keys[3];
		bool record;

		if (strncmp(x->tables[i], "sqlite_", 7) == 0 || !thread_keys(&x->cols, x->tables[i], keys, &record))
			continue;
		if (record)
			rec = x->tables[i];
		else
			todo[n++] = x->tables[i];
	}
	for (done = 0; done < n && rc == 0; done++) {
		size_t pick = agc_db_schema_next_table(&x->cols, (const char *const *)todo, n);

		{
			const char *keys[3];
			bool record;
			size_t nk = thread_keys(&x->cols, todo[pick], keys, &record);

			bool edges = strcmp(todo[pick], "thread_spawn_edges") == 0 &&
				     agc_db_schema_has_column(&x->cols, todo[pick], "parent_thread_id");

			for (k = 0; k < nk && rc == 0; k++)
				rc = edges && strcmp(keys[k], "child_thread_id") == 0
					     ? agc_plan_add_rows(p, dbi, todo[pick], keys[k], "parent_thread_id",
								 "thread_spawn_edges", "parent_thread_id", "parent_thread_id")
					     : agc_plan_add_rows(p, dbi, todo[pick], keys[k], NULL, NULL, NULL, NULL);
			todo[pick] = NULL;
		}
	}
	/* a table keyed by a rollout's path, not by a thread (rollout_migration_skipped_rollouts,
	 * formats/codex.md §7): its rows of the thread's rollout, by the path its record names,
	 * go before the record */
	for (i = 0; rc == 0 && rec && i < x->ntables; i++)
		if (path_keyed(x, rec, x->tables[i]))
			rc = agc_plan_add_rows(p, dbi, x->tables[i], NULL, "rollout_path", rec, "rollout_path", "id");
	if (rc == 0 && rec)
		rc = agc_plan_add_record_rows(p, dbi, rec, "id");
	free(todo);
	return rc;
}

/* The threads a relation of every database names as children of id (R1: only ids of the
 * grammar): by the spawn edges, or (attached) by threads.attached_thread_parent_id. Each is
 * added to the plan when add is set (*added counts them), else given to each(p, child, ud). */
static int db_children(agc_plan *p, const cxdbs *D, const char *id, bool attached, size_t *added,
		       int (*each)(agc_plan *p, const char *child, void *ud), void *ud)
{
	static const char *const sql[2] = {
		"SELECT child_thread_id FROM thread_spawn_edges WHERE parent_thread_id = ?1",
		"SELECT id FROM threads WHERE attached_thread_parent_id = ?1",
	};
	const char *what = attached ? "threads" : "thread_spawn_edges";
	size_t i;

	for (i = 0; i < D->n; i++) {
		sqlite3_stmt *st = NULL;
		int rc;

		if (!D->v[i].db || !(attached ? D->v[i].attached : D->v[i].edges))
			continue;
		rc = sqlite3_prepare_v2(D->v[i].db, sql[attached], -1, &st, NULL);
		if (rc != SQLITE_OK)
			return agc_db_fail(D->v[i].db, rc, what);
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *c = (const char *)sqlite3_column_text(st, 0);
			char canon[AGC_ID_MAX];
			size_t before = p->ids.n;
			int arc;

			if (!c || agc_id_uuid(c, canon) < 0)
				continue;
			if (each)
				arc = each(p, canon, ud);
			else
				arc = D->v[i].dbi >= 0 ? agc_plan_add_id_in(p, canon, (size_t)D->v[i].dbi)
						       : agc_plan_add_id(p, canon);
			if (arc < 0) {
				sqlite3_finalize(st);
				return -1;
			}
			if (added)
				*added += p->ids.n - before;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return agc_db_fail(D->v[i].db, rc, what);
	}
	return 0;
}

/* The children of id by the spawn edges, and, for a keep list (plan->keep), the threads that
 * name it in attached_thread_parent_id: a relation whose meaning is not established may only
 * keep more, never take more. */
static int edge_children(agc_plan *p, const cxdbs *D, const char *id, size_t *added)
{
	if (db_children(p, D, id, false, added, NULL, NULL) < 0)
		return -1;
	return p->keep ? db_children(p, D, id, true, added, NULL, NULL) : 0;
}

/* ---- shared files --------------------------------------------------------------------------- */

/* history.jsonl: writers take flock(LOCK_EX) on their O_APPEND fd, 10 tries 100 ms apart
 * (formats/codex.md §3). session_index.jsonl: Codex itself rewrites it by a temp file and a
 * rename (no lock). */
static const agc_lock_spec history_lock = {
	.kind = AGC_LOCK_FLOCK,
	.tries = 10,
	.interval_ms = 100,
};

/* A line belongs to the threads when its key names one of them (agc_json_line_keyed). */
static bool index_match(const char *line, size_t len, char *const *ids, size_t n_ids)
{
	return agc_json_line_keyed("id", line, len, ids, n_ids);
}

static bool history_match(const char *line, size_t len, char *const *ids, size_t n_ids)
{
	return agc_json_line_keyed("session_id", line, len, ids, n_ids);
}

/* The lines of a shared file in the Codex home, counted now (a rewrite recounts). */
static int add_lines(agc_plan *p, int homefd, const char *rel, const agc_lock_spec *lock,
		     bool (*match)(const char *, size_t, char *const *, size_t), char **title)
{
	agc_buf in = AGC_BUF_INIT_MAX(((size_t)1 << 30) + 1);
	agc_lineset *ls;
	struct stat st;
	const char *q, *end;
	int fd;

	fd = agc_open_file_at(homefd, rel, 0, &st);
	if (fd == AGC_ENOTFOUND)
		return 0;
	if (fd < 0)
		return agc_plan_add_note_kind(p, R_HOME, rel, "lines", errno == ELOOP ? "symlink" : agc_error_last());
	if (agc_read_fd(fd, rel, (size_t)1 << 30, &in) < 0) {
		agc_buf_release(&in);
		return agc_plan_add_note_kind(p, R_HOME, rel, "lines", agc_error_last());
	}
	ls = AGC_ARRAY_PUSH(&p->lines, 16);
	if (!ls) {
		agc_buf_release(&in);
		return -1;
	}
	memset(ls, 0, sizeof(*ls));
	ls->root = R_HOME;
	ls->rel = agc_strdup(rel);
	ls->lock = lock;
	ls->match = match;
	ls->dev = st.st_dev;
	ls->ino = st.st_ino;
	if (!ls->rel) {
		p->lines.n--;
		agc_buf_release(&in);
		return -1;
	}
	q = in.ptr ? in.ptr : "";
	end = q + in.len;
	while (q < end) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t len = nl ? (size_t)(nl - q) : (size_t)(end - q);

		if (len <= AGC_LINE_MAX && match(q, len, p->ids.v, p->ids.n)) {
			ls->count++;
			ls->bytes += nl ? len + 1 : len;
			/* the thread's name: the last line for the id wins, an empty one clears it */
			if (title) {
				json_t *j = agc_json_parse(q, len);
				const char *id = j ? agc_json_str(j, "id") : NULL;
				const char *name = j ? agc_json_str(j, "thread_name") : NULL;

				if (id && strcasecmp(id, p->id) == 0 && name) {
					free(*title);
					*title = *name ? agc_strdup(name) : NULL;
				}
				json_decref(j);
			}
		}
		q += nl ? len + 1 : len;
	}
	agc_buf_release(&in);
	return 0;
}

/* ---- discovery -------------------------------------------------------------------------------- */

static bool in_ids(const agc_plan *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->ids.n; i++)
		if (strcmp(p->ids.v[i], id) == 0)
			return true;
	return false;
}

/* The spawn closure of the plan's ids: children by the databases' edges and by line 0's
 * parent_thread_id where an edge is missing, at any depth, found before anything goes (SPEC
 * "Relations"). */
static int spawn_closure(agc_plan *p, const cxdbs *D, index_t *x, int homefd)
{
	size_t i, j, added = 0;

	for (i = 0; i < p->ids.n && i < AGC_PLAN_MAX_ITEMS; i++)
		if (edge_children(p, D, p->ids.v[i], &added) < 0)
			return -1;
	/* line 0 of every rollout names its parent: one pass, repeated while it adds */
	do {
		added = 0;
		for (j = 0; j < x->n; j++) {
			rollout *r = &x->v[j];

			rollout_read(r, homefd);
			if (r->parent && !in_ids(p, r->id) && in_ids(p, r->parent)) {
				size_t before = p->ids.n;

				if (agc_plan_add_id(p, r->id) < 0)
					return -1;
				/* a kept sub-agent (agc_plan.spare) is left: not added */
				added += p->ids.n - before;
			}
		}
		for (i = 0; i < p->ids.n; i++)
			if (edge_children(p, D, p->ids.v[i], &added) < 0)
				return -1;
	} while (added);
	return 0;
}

/* Threads that name one of the plan's in threads.attached_thread_parent_id: kept by a purge
 * (the relation's meaning is not established, so it never takes more), and said. */
static int attached_note(agc_plan *p, const char *child, void *ud)
{
	agc_buf *b = ud;

	if (in_ids(p, child) || strstr(agc_buf_cstr(b), child))
		return 0;
	return agc_buf_printf(b, "%s'%s'", b->len ? ", " : "", child);
}

static int attached_hint(agc_plan *p, const cxdbs *D)
{
	agc_buf b = AGC_BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < p->ids.n && rc == 0; i++)
		rc = db_children(p, D, p->ids.v[i], true, NULL, attached_note, &b);
	if (rc == 0 && b.len) {
		bool many = strchr(b.ptr, ',') != NULL;
		char *msg = agc_strfmt("thread%s %s name%s this thread (or a sub-agent of it) in "
				       "threads.attached_thread_parent_id, a relation whose meaning is not "
				       "established: kept; purge %s by its id if it belongs with this one",
				       many ? "s" : "", b.ptr, many ? "" : "s", many ? "each" : "it");

		rc = msg ? agc_plan_add_hint(p, NULL, msg) : agc_error_oom();
		free(msg);
	}
	agc_buf_release(&b);
	return rc;
}

/* Codex Desktop's own database (formats/codex.md §2: sqlite/codex-dev.db under the Codex home,
 * a thread catalog, reported by others and never written by the CLI): its layout is not
 * established, so nothing in it is changed; rows that name a thread of the plan in a column
 * called id or naming a thread are said, with where they are. */
#define CX_DESKTOP_DB "sqlite/codex-dev.db"

static int desktop_hint(agc_plan *p, int homefd)
{
	agc_buf where = AGC_BUF_INIT;
	char **tables = NULL, *abs, *ids;
	size_t nt = 0, i;
	sqlite3 *db = NULL;
	struct stat st;
	int rc = 0;

	const char *why = NULL;
	char *uri = NULL;

	/* its dir and itself, never through a link (R2) */
	if (fstatat(homefd, "sqlite", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		why = "'sqlite' in the Codex home is not a directory";
	else if (fstatat(homefd, CX_DESKTOP_DB, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	abs = agc_plan_abspath(p->roots, R_HOME, CX_DESKTOP_DB);
	ids = agc_plan_ids_json(p);
	/* read as it is (immutable): no -wal or -shm made beside it, no lock taken on it */
	uri = abs ? agc_db_uri_immutable(abs) : NULL;
	if (!abs || !ids || !uri) {
		free(abs);
		free(ids);
		free(uri);
		return agc_error_oom();
	}
	if (why || sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK ||
	    agc_db_tables(db, &tables, &nt) < 0) {
		char *msg = agc_strfmt("Codex Desktop's database '%s' cannot be read (%s): if it lists this "
				       "thread, it still does",
				       abs, why ? why : db ? sqlite3_errmsg(db) : "out of memory");

		rc = msg ? agc_plan_add_hint(p, NULL, msg) : agc_error_oom();
		free(msg);
		goto out;
	}
	for (i = 0; i < nt && i < 256 && rc == 0; i++) {
		/* pragma_table_info takes the table's name as a string (%Q), a query its identifier */
		char *t = agc_db_ident(tables[i]), *sql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q)", tables[i]);
		sqlite3_stmt *cols = NULL;

		if (t && sql && sqlite3_prepare_v2(db, sql, -1, &cols, NULL) == SQLITE_OK) {
			while (sqlite3_step(cols) == SQLITE_ROW) {
				const char *c = (const char *)sqlite3_column_text(cols, 0);
				char *ci, *q;
				sqlite3_stmt *cnt = NULL;

				if (!c || (strcasecmp(c, "id") != 0 && !agc_mem_icase(c, strlen(c), "thread", 6)))
					continue;
				ci = agc_db_ident(c);
				q = ci ? agc_strfmt("SELECT count(*) FROM %s WHERE %s IN (SELECT value FROM json_each(?1))", t, ci)
				       : NULL;
				if (q && sqlite3_prepare_v2(db, q, -1, &cnt, NULL) == SQLITE_OK) {
					sqlite3_bind_text(cnt, 1, ids, -1, SQLITE_STATIC);
					if (sqlite3_step(cnt) == SQLITE_ROW && sqlite3_column_int64(cnt, 0) > 0)
						agc_buf_printf(&where, "%s%s.%s (%lld)", where.len ? ", " : "", tables[i], c,
							       (long long)sqlite3_column_int64(cnt, 0));
				}
				sqlite3_finalize(cnt);
				free(q);
				free(ci);
			}
		}
		sqlite3_finalize(cols);
		sqlite3_free(sql);
		free(t);
	}
	if (rc == 0 && where.len) {
		char *msg = agc_strfmt("Codex Desktop's database '%s' names this thread in %s: its layout is not "
				       "established, so it is left as it is (Codex Desktop may still list the thread)",
				       abs, where.ptr);

		rc = msg ? agc_plan_add_hint(p, NULL, msg) : agc_error_oom();
		free(msg);
	}
out:
	agc_db_strv_free(tables, nt);
	sqlite3_close(db);
	agc_buf_release(&where);
	free(abs);
	free(ids);
	free(uri);
	return rc;
}

/* Forks that read a thread of the plan and are not in it: refused, or with --with-forks taken
 * along with their own closure. A rollout whose first line cannot be read cannot be resumed
 * (nor forked from) by Codex either: said, and it does not block (SPEC "Relations"). */
static int forks(agc_plan *p, const cxdbs *D, index_t *x, int homefd)
{
	size_t j, rounds = 0;
	bool again = true;

	while (again && rounds++ < CX_DEPTH_MAX) {
		again = false;
		for (j = 0; j < x->n; j++) {
			rollout *r = &x->v[j];

			rollout_read(r, homefd);
			if (!r->base || in_ids(p, r->id) || !in_ids(p, r->base))
				continue;
			if (!(p->flags & AGC_PURGE_WITH_FORKS)) {
				if (agc_plan_add_fork(p, r->id) < 0)
					return -1;
				continue;
			}
			{
				size_t before = p->ids.n;

				if (agc_plan_add_id(p, r->id) < 0)
					return -1;
				/* a kept fork (agc_plan.spare) stays, and so it blocks, as without
				 * --with-forks: its rollout reads this one's */
				if (p->ids.n == before) {
					if (agc_plan_add_fork(p, r->id) < 0)
						return -1;
					continue;
				}
			}
			if (spawn_closure(p, D, x, homefd) < 0)
				return -1;
			again = true;
		}
	}
	if (p->gate_only)
		return 0;
	for (j = 0; j < x->n; j++) {
		const rollout *r = &x->v[j];
		char *msg;

		if (!r->err || in_ids(p, r->id))
			continue;
		msg = agc_strfmt("the first line of '%s/%s' cannot be read (%s): if it is a fork of this thread, "
				 "Codex cannot resume it either",
				 p->roots->v[R_HOME].path, r->rel, r->err);
		if (!msg || agc_plan_add_hint(p, NULL, msg) < 0) {
			free(msg);
			return -1;
		}
		free(msg);
	}
	return 0;
}

/* A thread's own files beneath the Codex home: its rollouts (the record), its writer lock
 * (taken, not removed as a file: the engine's lock phase), its shell snapshots (exactly
 * "<id>.<digits>.sh", never a prefix twin) and its TUI marker. */
static int thread_files(agc_plan *p, index_t *x, int homefd, const char *id, DIR *snaps)
{
	rollout *r = index_first(x, id);
	char rel[512];
	struct dirent *e;

	for (; r && r < x->v + x->n && strcmp(r->id, id) == 0; r++)
		if (agc_plan_add_art(p, R_HOME, r->rel, id, AGC_ART_RECORD, NULL) < 0)
			return -1;
	snprintf(rel, sizeof(rel), "thread-writer-locks/%s.lock", id);
	if (agc_plan_add_lock(p, R_HOME, rel, CX_COORD, id) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "tui-thread-reference-capabilities/%s", id);
	if (agc_plan_add_art(p, R_HOME, rel, id, 0, NULL) < 0)
		return -1;
	if (snaps) {
		rewinddir(snaps);
		while ((e = agc_plan_readdir(p, R_HOME, "shell_snapshots", snaps))) {
			if (!snapshot_of(e->d_name, id))
				continue;
			snprintf(rel, sizeof(rel), "shell_snapshots/%s", e->d_name);
			if (agc_plan_add_art(p, R_HOME, rel, id, 0, NULL) < 0)
				return -1;
		}
	}
	(void)homefd;
	return 0;
}

/* The thread's row in a threads table: its metadata where line 0 lacks it, and a rollout
 * path outside the Codex home's two rollout dirs said (it is never followed: rollouts are
 * found by their names). */
static void thread_row(agc_plan *p, const cxdb *x, char **title)
{
	sqlite3_stmt *st = NULL;

	if (!x->db || !x->threads)
		return;
	if (sqlite3_prepare_v2(x->db, "SELECT * FROM threads WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, p->id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		int i, n = sqlite3_column_count(st);

		for (i = 0; i < n; i++) {
			const char *c = sqlite3_column_name(st, i);
			const char *v = (const char *)sqlite3_column_text(st, i);

			if (!c || !v)
				continue;
			if (strcmp(c, "title") == 0 && *v && !*title)
				*title = agc_strdup(v);
			else if (strcmp(c, "cwd") == 0 && *v && !p->meta.project)
				p->meta.project = agc_strdup(v);
			else if (strcmp(c, "created_at") == 0 && !p->meta.created_ms)
				p->meta.created_ms = sqlite3_column_int64(st, i) * 1000;
			else if (strcmp(c, "rollout_path") == 0) {
				const char *h = p->roots->v[R_HOME].real ? p->roots->v[R_HOME].real : p->roots->v[R_HOME].path;
				size_t hl = strlen(h);
				bool inside = strncmp(v, h, hl) == 0 &&
					      (strncmp(v + hl, "/sessions/", 10) == 0 ||
					       strncmp(v + hl, "/archived_sessions/", 19) == 0) &&
					      !strstr(v, "/../") && strstr(v, p->id);

				if (!inside && !p->gate_only) {
					char *msg = agc_strfmt("the thread's row names its rollout '%s', outside the Codex "
							       "home's rollout dirs: that path is left alone",
							       v);

					if (msg)
						agc_plan_add_hint(p, NULL, msg);
					free(msg);
				}
			}
		}
	}
	sqlite3_finalize(st);
}

static int cx_discover(agc_plan *p)
{
	int homefd = agc_plan_rootfd(p, R_HOME), qfd = agc_plan_rootfd(p, R_SQLITE);
	index_t own = {0}, *x;
	cxdbs D = {0};
	char *title = NULL;
	DIR *snaps = NULL;
	rollout *r0;
	size_t i;
	int rc = 0;

	if (homefd < 0)
		return 0; /* no Codex home (or one that cannot be read: noted by the engine) */
	x = plan_index(p, homefd, &own);
	if (!x)
		return -1;
	/* a thread is on record by its rollout: one whose row is left without it is an orphan */
	p->record_is_file = true;
	if (qfd >= 0 && dbs_open(&D, p->roots, qfd) < 0) {
		rc = -1;
		goto out;
	}
	/* A database that cannot be read may hold the thread's rows, its record among them: a
	 * purge would leave a half-deleted thread (formats/codex.md §8), so it is refused; after
	 * a purge it is residual (R7, R8). */
	for (i = 0; i < D.n; i++) {
		cxdb *b = &D.v[i];

		if (b->err) {
			rc = p->again ? agc_plan_add_note_kind(p, R_SQLITE, b->rel, "rows", b->err)
				      : agc_plan_add_refusal(p, R_SQLITE, b->rel, "rows", b->err);
			if (rc < 0)
				goto out;
			continue;
		}
		if ((b->dbi = agc_plan_add_db(p, R_SQLITE, b->rel)) < 0) {
			rc = -1;
			goto out;
		}
	}
	if (spawn_closure(p, &D, x, homefd) < 0 || forks(p, &D, x, homefd) < 0 ||
	    (!p->gate_only && !p->again && (attached_hint(p, &D) < 0 || desktop_hint(p, homefd) < 0))) {
		rc = -1;
		goto out;
	}
	if (!p->gate_only)
		snaps = agc_plan_dir(p, R_HOME, homefd, "shell_snapshots");
	for (i = 0; i < p->ids.n && rc == 0; i++)
		rc = thread_files(p, x, homefd, p->ids.v[i], snaps);
	if (rc < 0)
		goto out;
	/* rows of every thread of the closure in every database (R6: all locked before any goes) */
	for (i = 0; i < D.n && !p->gate_only; i++) {
		cxdb *b = &D.v[i];
		size_t from = p->rows.n, k;
		bool held = false;

		if (!b->db || b->dbi < 0)
			continue;
		if (db_rowsets(p, b, (size_t)b->dbi) < 0 || agc_plan_count_rows(p, b->db, (size_t)b->dbi) < 0) {
			rc = -1;
			goto out;
		}
		if (b->linked) {
			/* never changed through a link (R2): its rows refuse the purge, said */
			for (k = from; k < p->rows.n; k++) {
				held |= p->rows.v[k].count > 0;
				p->rows.v[k].count = p->rows.v[k].bytes = 0;
			}
			if (held && (p->again ? agc_plan_add_note_kind(p, R_SQLITE, b->rel, "rows", "symlink")
					      : agc_plan_add_refusal(p, R_SQLITE, b->rel, "rows", "symlink")) < 0) {
				rc = -1;
				goto out;
			}
		}
	}
	/* metadata: line 0 of the thread's rollout, then its row */
	r0 = index_first(x, p->id);
	if (r0) {
		rollout_read(r0, homefd);
		if (r0->cwd)
			p->meta.project = agc_strdup(r0->cwd);
		if (r0->parent)
			p->meta.parent = agc_strdup(r0->parent);
		p->meta.created_ms = r0->created_ms;
	}
	for (i = 0; i < D.n; i++)
		thread_row(p, &D.v[i], &title);
	if (!p->gate_only) {
		char *name = NULL;

		if (add_lines(p, homefd, "session_index.jsonl", NULL, index_match, &name) < 0 ||
		    add_lines(p, homefd, "history.jsonl", &history_lock, history_match, NULL) < 0) {
			free(name);
			rc = -1;
			goto out;
		}
		/* SPEC "Titles": the name a user gave (session_index.jsonl), else the row's title */
		if (name) {
			free(title);
			title = name;
		}
	}
	p->meta.title = title;
	title = NULL;
	/* A daemon keeps the thread loaded (its lock, rollout fd, shell snapshot) after the TUI
	 * exits (formats/codex.md §5). */
	{
		struct stat st;

		char rel[128], *lock;

		/* for a holder of the thread's lock (the daemon holds it while the thread is
		 * loaded) */
		snprintf(rel, sizeof(rel), "thread-writer-locks/%s.lock", p->id);
		lock = agc_plan_abspath(p->roots, R_HOME, rel);
		if (fstatat(homefd, "app-server-daemon/daemon.pid", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (!lock || agc_plan_add_hint(p, lock,
						"the thread's lock is held: if Codex's app-server daemon holds it (it keeps a "
						"thread loaded after its client exits), 'codex app-server daemon stop' "
						"releases it") < 0))
			rc = -1;
		free(lock);
	}
out:
	free(title);
	if (snaps)
		closedir(snaps);
	dbs_release(&D);
	if (x == &own)
		index_release(&own);
	return rc;
}

/* ---- ls ---------------------------------------------------------------------------------- */

typedef struct crow {
	char id[AGC_ID_MAX];
	char *parent, *title, *project, *prompt;
	int64_t created, updated;
	bool archived;
	bool orphan;  /* ls --orphans: rows or side files of a thread with no rollout */
	agc_size sz;
	size_t gate;
} crow;

typedef struct crows {
	crow *v;
	size_t n, cap;
} crows;

static int crow_cmp(const void *a, const void *b)
{
	return strcmp(((const crow *)a)->id, ((const crow *)b)->id);
}

static crow *crow_find(crows *R, const char *id)
{
	crow key;

	snprintf(key.id, sizeof(key.id), "%s", id);
	return R->n ? bsearch(&key, R->v, R->n, sizeof(*R->v), crow_cmp) : NULL;
}

typedef struct lwarn {
	agc_ls_sink *sink;
	const agc_rootset *rs;
	bool cut;  /* a dir of rollouts could not be read to its end */
} lwarn;

static void list_warn(void *ud, const char *rel, const char *why)
{
	lwarn *w = ud;
	char *abs = agc_plan_abspath(w->rs, R_HOME, rel);
	char *msg = agc_strfmt("cannot read '%s': %s", abs ? abs : rel, why);

	w->cut = true;
	if (msg)
		w->sink->warn(w->sink, msg);
	free(msg);
	free(abs);
}

/* Each thread's stored row bytes, by its key columns, in every table keyed by thread or by its
 * rollout's path (the sizes a purge of it would report: SPEC "Sizes"). An edge counts for its
 * child. */
static void charge_rows(crows *R, const cxdb *x)
{
	size_t i;

	for (i = 0; i < x->ntables; i++) {
		const char *keys[3], *key;
		bool record;
		size_t nk = thread_keys(&x->cols, x->tables[i], keys, &record), k;
		char *size, *t, *c, *sql;
		sqlite3_stmt *st = NULL;

		if (x->threads && path_keyed(x, "threads", x->tables[i])) {
			/* rows keyed by a rollout's path: the thread whose record names it */
			size = agc_db_row_size_sql(x->db, x->tables[i], "r");
			t = agc_db_ident(x->tables[i]);
			c = NULL;
			sql = size && t ? agc_strfmt("SELECT threads.id, %s FROM %s AS r JOIN threads ON "
						     "r.rollout_path = threads.rollout_path",
						     size, t)
					: NULL;
		} else if (nk && strncmp(x->tables[i], "sqlite_", 7) != 0) {
			key = keys[0];
			for (k = 0; k < nk; k++)
				if (strcmp(keys[k], "child_thread_id") == 0)
					key = keys[k];
			size = agc_db_row_size_sql(x->db, x->tables[i], NULL);
			t = agc_db_ident(x->tables[i]);
			c = agc_db_ident(key);
			/* the table in its own order, summed here: a GROUP BY would read it through the
			 * key's index, one lookup of the table per row */
			sql = size && t && c ? agc_strfmt("SELECT %s, %s FROM %s", c, size, t) : NULL;
		} else {
			continue;
		}
		if (sql && sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) == SQLITE_OK) {
			char last[AGC_ID_MAX] = "";
			crow *r = NULL;

			while (sqlite3_step(st) == SQLITE_ROW) {
				const char *id = (const char *)sqlite3_column_text(st, 0);
				char canon[AGC_ID_MAX];

				if (!id)
					continue;
				/* rows of one thread mostly come together: its row found once */
				if (strcmp(id, last) != 0) {
					snprintf(last, sizeof(last), "%s", id);
					r = agc_id_uuid(id, canon) == 0 ? crow_find(R, canon) : NULL;
				}
				if (r)
					r->sz.bytes += (uint64_t)sqlite3_column_int64(st, 1);
			}
		}
		sqlite3_finalize(st);
		free(sql);
		free(size);
		free(t);
		free(c);
	}
}

/* Titles and creation times from a threads table (where line 0 and the index lack them). */
static void thread_rows(crows *R, const cxdb *x)
{
	sqlite3_stmt *st = NULL;
	bool archived = agc_db_schema_has_column(&x->cols, "threads", "archived");
	bool fum = agc_db_schema_has_column(&x->cols, "threads", "first_user_message");
	char *sql = agc_strfmt("SELECT id, %s, %s, %s, %s FROM threads",
			       agc_db_schema_has_column(&x->cols, "threads", "title") ? "title" : "NULL",
			       agc_db_schema_has_column(&x->cols, "threads", "created_at") ? "created_at" : "NULL",
			       archived ? "archived" : "0", fum ? "first_user_message" : "NULL");

	if (sql && sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *id = (const char *)sqlite3_column_text(st, 0);
			const char *title = (const char *)sqlite3_column_text(st, 1);
			const char *prompt = (const char *)sqlite3_column_text(st, 4);
			char canon[AGC_ID_MAX];
			crow *r = id && agc_id_uuid(id, canon) == 0 ? crow_find(R, canon) : NULL;

			if (!r)
				continue;
			if (title && *title && !r->title)
				r->title = agc_strdup(title);
			if (prompt && *prompt && !r->prompt)
				r->prompt = agc_strdup(prompt);
			if (!r->created && sqlite3_column_type(st, 2) == SQLITE_INTEGER)
				r->created = sqlite3_column_int64(st, 2) * 1000;
			r->archived |= sqlite3_column_int(st, 3) != 0;
		}
	sqlite3_finalize(st);
	free(sql);
}

/* The lines of a shared file: their bytes to their threads, and session_index's names (the
 * last line for an id wins, an empty name clears it). */
static void charge_lines(crows *R, int homefd, const char *rel, const char *key, bool names)
{
	agc_buf in = AGC_BUF_INIT_MAX(((size_t)1 << 30) + 1);
	const char *q, *end;

	if (agc_read_at(homefd, rel, (size_t)1 << 30, &in) < 0) {
		agc_buf_release(&in);
		return;
	}
	q = in.ptr ? in.ptr : "";
	end = q + in.len;
	while (q < end) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t len = nl ? (size_t)(nl - q) : (size_t)(end - q);
		json_t *j = len <= AGC_LINE_MAX ? agc_json_parse(q, len) : NULL;
		const char *id = j ? agc_json_str(j, key) : NULL;
		char canon[AGC_ID_MAX];
		crow *r = id && agc_id_uuid(id, canon) == 0 ? crow_find(R, canon) : NULL;

		if (r) {
			const char *name = names ? agc_json_str(j, "thread_name") : NULL;

			r->sz.bytes += nl ? len + 1 : len;
			if (name) {
				free(r->title);
				r->title = *name ? agc_strdup(name) : NULL;
				/* a name given later wins over the row's title; a cleared one lets it
				 * show again: marked by an empty prompt-free title below */
			}
		}
		json_decref(j);
		q += nl ? len + 1 : len;
	}
	agc_buf_release(&in);
}

static void count_cb(pid_t pid, void *ud)
{
	(void)pid;
	(*(size_t *)ud)++;
}

/* R5 for ls: a thread whose writer lock anyone holds is live. The kernel's lock table (read
 * once) tells it without taking a lock; where it cannot (none, or the inode shown on another
 * device), a probe under the coordination lock. A lock that cannot be looked at counts as
 * held; the lock dir is listed once. */
static bool lock_held(const agc_flocks *t, int trc, int dfd, const char *name)
{
	struct stat st;
	bool differs = false;
	size_t n = 0;
	int rc;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno != ENOENT;
	if (!S_ISREG(st.st_mode))
		return false;
	if (trc < 0)
		return true;
	if (trc == 1) {
		agc_flocks_find(t, st.st_dev, st.st_ino, count_cb, &n, &differs);
		if (n > 0)
			return true;
		if (!differs)
			return false;
	}
	rc = agc_sesslock_probe(dfd, CX_COORD, name);
	return rc != 0 && rc != AGC_ENOTFOUND;
}

typedef struct lock_pids {
	agc_ls_sink *sink;
	size_t gate;
	size_t n;
} lock_pids;

static void lock_pid_cb(pid_t pid, void *ud)
{
	lock_pids *lp = ud;

	lp->n++;
	agc_ls_gate_held(lp->sink, lp->gate, pid, AGC_WHY_LOCK);
}

/* A held lock's holders as the kernel's table names them (ps); a lock held by a process the
 * table does not show (the probe's answer) is held all the same, by no one ps can name. */
static void held_by(const agc_flocks *t, int trc, int dfd, const char *name, agc_ls_sink *sink, size_t gate)
{
	lock_pids lp = {sink, gate, 0};
	struct stat st;
	bool differs = false;

	if (trc == 1 && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		agc_flocks_find(t, st.st_dev, st.st_ino, lock_pid_cb, &lp, &differs);
	if (!lp.n)
		agc_ls_gate_held(sink, gate, 0, AGC_WHY_LOCK);
}

static void live_locks(crows *R, const char *procroot, int homefd, agc_ls_sink *sink)
{
	DIR *d = agc_dir_at(homefd, "thread-writer-locks");
	struct dirent *e;
	agc_flocks t;
	size_t k;
	int trc;

	if (!d) {
		/* a lock dir that cannot be read: no lock in it can be told free */
		if (errno != ENOENT && errno != ENOTDIR)
			for (k = 0; k < R->n; k++)
				agc_ls_gate_live(sink, R->v[k].gate);
		return;
	}
	trc = agc_flocks_load(procroot, &t);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char id[AGC_ID_MAX], tmp[AGC_UUID_LEN + 1];
		crow *r;

		if (len != AGC_UUID_LEN + 5 || strcmp(e->d_name + AGC_UUID_LEN, ".lock") != 0)
			continue;
		memcpy(tmp, e->d_name, AGC_UUID_LEN);
		tmp[AGC_UUID_LEN] = '\0';
		if (agc_id_uuid(tmp, id) < 0 || strcmp(tmp, id) != 0 || !(r = crow_find(R, id)))
			continue;
		if (lock_held(&t, trc, dirfd(d), e->d_name))
			held_by(&t, trc, dirfd(d), e->d_name, sink, r->gate);
	}
	agc_flocks_free(&t);
	closedir(d);
}

static size_t cx_index(void)
{
	int i = agc_agent_find("codex");

	return i < 0 ? 0 : (size_t)i;
}

/* The files of a thread beside its rollout (shell snapshots, the TUI marker): sized for it,
 * and given to the gate. */
static void charge_side(crows *R, int homefd, agc_ls_sink *sink)
{
	DIR *d = agc_dir_at(homefd, "shell_snapshots");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		const char *dot = strchr(e->d_name, '.');
		char id[AGC_ID_MAX], tmp[AGC_UUID_LEN + 1];
		crow *r;

		if (!dot || dot - e->d_name != AGC_UUID_LEN)
			continue;
		memcpy(tmp, e->d_name, AGC_UUID_LEN);
		tmp[AGC_UUID_LEN] = '\0';
		if (agc_id_uuid(tmp, id) < 0 || strcmp(tmp, id) != 0 || !snapshot_of(e->d_name, id) ||
		    !(r = crow_find(R, id)))
			continue;
		agc_ls_charge(sink, r->gate, true, dirfd(d), e->d_name, NULL, &r->sz, &r->updated);
	}
	if (d)
		closedir(d);
	/* the TUI's markers, named by their thread: the dir listed once */
	d = agc_dir_at(homefd, "tui-thread-reference-capabilities");
	while (d && (e = readdir(d))) {
		char id[AGC_ID_MAX];
		crow *r;

		if (strlen(e->d_name) != AGC_UUID_LEN || agc_id_uuid(e->d_name, id) < 0 || strcmp(e->d_name, id) != 0 ||
		    !(r = crow_find(R, id)))
			continue;
		agc_ls_charge(sink, r->gate, true, dirfd(d), e->d_name, NULL, &r->sz, &r->updated);
	}
	if (d)
		closedir(d);
}

/* An orphan candidate id (any case; checked later) with its last time (ms, 0 unknown). */
static int corphan_add(crows *O, const char *v, int64_t updated)
{
	char id[AGC_ID_MAX];
	crow *r;

	if (!v || agc_id_uuid(v, id) < 0)
		return 0;
	if (!(r = AGC_ARRAY_PUSH(O, CX_INDEX_MAX)))
		return -1;
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->updated = updated;
	r->orphan = true;
	return 0;
}

/* Whether thread id (a parent a listed sub-agent names) is gone: no rollout of it listed (an
 * orphan's rows are no record), no name the index left out that holds it (a link, upper case),
 * and no threads row of it whose rollout_path names something that exists (a home that moved:
 * Codex may still find it). A database that cannot be read may hold that row: not gone. */
static bool cx_parent_gone(crows *R, const index_t *x, const cxdbs *D, const char *id)
{
	const crow *up = crow_find(R, id);
	char low[AGC_ID_MAX];
	size_t i;

	if (up && !up->orphan)
		return false;
	snprintf(low, sizeof(low), "%s", id);
	ascii_lower(low);
	for (i = 0; i < x->odd.n; i++)
		if (strstr(x->odd.v[i], low))
			return false;
	for (i = 0; i < D->n; i++) {
		sqlite3_stmt *st = NULL;
		bool found = false;

		if (D->v[i].err || !D->v[i].db)
			return false;
		if (!D->v[i].threads || !agc_db_schema_has_column(&D->v[i].cols, "threads", "rollout_path"))
			continue;
		if (sqlite3_prepare_v2(D->v[i].db, "SELECT rollout_path FROM threads WHERE id = ?1 COLLATE NOCASE", -1,
				       &st, NULL) != SQLITE_OK)
			return false;
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		for (;;) {
			int rc = sqlite3_step(st);
			const char *path;
			struct stat pst;

			if (rc == SQLITE_DONE)
				break;
			if (rc != SQLITE_ROW) {
				found = true; /* could not be read to its end */
				break;
			}
			path = (const char *)sqlite3_column_text(st, 0);
			if (path && *path && lstat(path, &pst) == 0)
				found = true;
		}
		sqlite3_finalize(st);
		if (found)
			return false;
	}
	return true;
}

/* SPEC "ls --orphans": the threads that rows of a database (by the columns that key a table by
 * thread, as discovery deletes them: thread_keys) or a shell snapshot or TUI marker name, that
 * have no rollout; added to R (sorted again) with a gate entry, to be charged as the threads
 * are. Only when every dir of rollouts was read (the caller checks). */
static int cx_orphans(crows *R, const cxdbs *D, int homefd, agc_ls_sink *sink)
{
	crows O = {0}, X = {0};
	size_t i, k, n;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	for (i = 0; rc == 0 && i < D->n; i++) {
		const cxdb *x = &D->v[i];

		if (!x->db || x->linked)
			continue;
		for (k = 0; rc == 0 && k < x->ntables; k++) {
			const char *keys[3], *t = x->tables[k];
			bool record;
			size_t nk = strncmp(t, "sqlite_", 7) == 0 ? 0 : thread_keys(&x->cols, t, keys, &record), j;

			for (j = 0; rc == 0 && j < nk; j++) {
				bool at = record && agc_db_schema_has_column(&x->cols, t, "updated_at");
				bool rp = record && agc_db_schema_has_column(&x->cols, t, "rollout_path");
				char *ti = agc_db_ident(t), *c = agc_db_ident(keys[j]);
				char *sql = ti && c ? agc_strfmt("SELECT %s, %s, %s FROM %s WHERE %s IS NOT NULL GROUP BY %s", c,
								 at ? "max(\"updated_at\")" : "0",
								 rp ? "max(\"rollout_path\")" : "NULL", ti, c, c)
						    : NULL;
				sqlite3_stmt *st = NULL;

				if (!sql)
					rc = agc_error_oom();
				else if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) == SQLITE_OK)
					while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
						const char *id = (const char *)sqlite3_column_text(st, 0);
						const char *path = (const char *)sqlite3_column_text(st, 2);
						struct stat pst;

						if (sqlite3_column_type(st, 0) != SQLITE_TEXT)
							continue;
						/* a row whose rollout is somewhere the index does not look (a
						 * home that moved) is no orphan's: Codex may still find it */
						if (path && *path && lstat(path, &pst) == 0)
							rc = corphan_add(&X, id, 0);
						else
							rc = corphan_add(&O, id, sqlite3_column_int64(st, 1) * 1000);
					}
				sqlite3_finalize(st);
				free(sql);
				free(ti);
				free(c);
			}
		}
	}
	d = rc == 0 ? agc_dir_at(homefd, "shell_snapshots") : NULL;
	while (d && rc == 0 && (e = readdir(d))) {
		char tmp[AGC_UUID_LEN + 1];
		struct stat st;

		if (strlen(e->d_name) <= AGC_UUID_LEN || e->d_name[AGC_UUID_LEN] != '.')
			continue;
		memcpy(tmp, e->d_name, AGC_UUID_LEN);
		tmp[AGC_UUID_LEN] = '\0';
		if (snapshot_of(e->d_name, tmp) && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			rc = corphan_add(&O, tmp, (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
	}
	if (d)
		closedir(d);
	d = rc == 0 ? agc_dir_at(homefd, "tui-thread-reference-capabilities") : NULL;
	while (d && rc == 0 && (e = readdir(d))) {
		struct stat st;

		if (strlen(e->d_name) == AGC_UUID_LEN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			rc = corphan_add(&O, e->d_name, (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
	}
	if (d)
		closedir(d);
	/* ids as discovery names their files: only the canonical (lower-case) spelling, which
	 * agc_id_uuid gave; one row per id, its newest time; none that has a rollout */
	if (O.n > 1)
		qsort(O.v, O.n, sizeof(*O.v), crow_cmp);
	if (X.n > 1)
		qsort(X.v, X.n, sizeof(*X.v), crow_cmp);
	for (i = 0, n = 0; rc == 0 && i < O.n; i++) {
		if (n && strcmp(O.v[n - 1].id, O.v[i].id) == 0) {
			if (O.v[i].updated > O.v[n - 1].updated)
				O.v[n - 1].updated = O.v[i].updated;
			continue;
		}
		if (crow_find(R, O.v[i].id) || crow_find(&X, O.v[i].id))
			continue;
		O.v[n++] = O.v[i];
	}
	for (i = 0; rc == 0 && i < n; i++) {
		crow *r = AGC_ARRAY_PUSH(R, CX_INDEX_MAX);

		if (!r) {
			rc = -1;
			break;
		}
		*r = O.v[i];
		r->gate = agc_ls_gate_new(sink, cx_index());
		agc_ls_gate_id(sink, r->gate, r->id);
	}
	free(O.v);
	free(X.v);
	if (R->n > 1)
		qsort(R->v, R->n, sizeof(*R->v), crow_cmp);
	return rc;
}

static int cx_list(agc_ctx *ctx, const agc_rootset *rs, const agc_ls_opts *opts, agc_ls_sink *sink)
{
	const char *hp = rs->v[R_HOME].real, *qp = rs->n > R_SQLITE ? rs->v[R_SQLITE].real : NULL;
	int homefd, qfd = -1, rc = 0;
	index_t x = {0};
	crows R = {0};
	cxdbs D = {0};
	lwarn w = {sink, rs, false};
	agc_size *own = NULL;
	size_t i, agent = cx_index();

	if (!hp)
		return 0;
	homefd = open(hp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (homefd < 0) {
		list_warn(&w, ".", strerror(errno));
		return 0;
	}
	if (index_build(&x, homefd, list_warn, &w) < 0) {
		rc = -1;
		goto out;
	}
	/* one row per thread: its first rollout (a plain file before its .zst twin) */
	for (i = 0; i < x.n; i++) {
		rollout *ro = &x.v[i];
		crow *r;

		if (R.n && strcmp(R.v[R.n - 1].id, ro->id) == 0) {
			R.v[R.n - 1].sz.bytes += (uint64_t)ro->st.st_size;
			R.v[R.n - 1].sz.disk += (uint64_t)ro->st.st_blocks * 512;
			continue;
		}
		rollout_read(ro, homefd);
		r = AGC_ARRAY_PUSH(&R, CX_INDEX_MAX);
		if (!r) {
			rc = -1;
			goto out;
		}
		memset(r, 0, sizeof(*r));
		snprintf(r->id, sizeof(r->id), "%s", ro->id);
		r->parent = ro->parent ? agc_strdup(ro->parent) : NULL;
		r->project = ro->cwd ? agc_strdup(ro->cwd) : NULL;
		r->created = ro->created_ms;
		r->archived = ro->archived;
		r->updated = (int64_t)ro->st.st_mtim.tv_sec * 1000 + ro->st.st_mtim.tv_nsec / 1000000;
		r->sz.bytes = (uint64_t)ro->st.st_size;
		r->sz.disk = (uint64_t)ro->st.st_blocks * 512;
		r->gate = agc_ls_gate_new(sink, agent);
		agc_ls_gate_id(sink, r->gate, r->id);
		agc_ls_gate_file(sink, r->gate, &ro->st);
	}
	if (qp && (qfd = open(qp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 && dbs_open(&D, rs, qfd) < 0) {
		rc = -1;
		goto out;
	}
	if (opts && opts->orphans && w.cut) {
		/* a rollout that could not be seen would make its thread's rows look orphaned */
		sink->warn(sink, "codex orphans not listed: a dir of rollouts could not be read");
	} else if (opts && opts->orphans && cx_orphans(&R, &D, homefd, sink) < 0) {
		rc = -1;
		goto out;
	}
	live_locks(&R, ctx->procroot, homefd, sink);
	for (i = 0; i < D.n; i++) {
		if (D.v[i].err) {
			sink->warn(sink, D.v[i].err);
			continue;
		}
		if (D.v[i].threads)
			thread_rows(&R, &D.v[i]);
		charge_rows(&R, &D.v[i]);
	}
	for (i = 0; i < R.n; i++) {
		/* the row's title, unless a name is given below */
		R.v[i].prompt = R.v[i].prompt ? R.v[i].prompt : NULL;
	}
	{
		/* names: session_index.jsonl, the last line for an id wins */
		char **rowtitle = calloc(R.n + 1, sizeof(*rowtitle));

		for (i = 0; rowtitle && i < R.n; i++) {
			rowtitle[i] = R.v[i].title;
			R.v[i].title = NULL;
		}
		charge_lines(&R, homefd, "session_index.jsonl", "id", true);
		for (i = 0; rowtitle && i < R.n; i++) {
			if (!R.v[i].title)
				R.v[i].title = rowtitle[i] ? rowtitle[i] : R.v[i].prompt ? agc_strdup(R.v[i].prompt) : NULL;
			else
				free(rowtitle[i]);
		}
		free(rowtitle);
	}
	charge_lines(&R, homefd, "history.jsonl", "session_id", false);
	charge_side(&R, homefd, sink);
	/* a child's size and activity are its ancestors' too; whatever holds it holds them */
	own = calloc(R.n + 1, sizeof(*own));
	for (i = 0; own && i < R.n; i++)
		own[i] = R.v[i].sz;
	for (i = 0; own && i < R.n; i++) {
		const char *par = R.v[i].parent;
		int depth = 0;

		while (par && depth++ < CX_DEPTH_MAX) {
			crow *up = crow_find(&R, par);

			if (!up || up == &R.v[i])
				break;
			if (depth == 1)
				agc_ls_gate_parent(sink, R.v[i].gate, up->gate);
			/* an orphan's figures are what is left of it: a sub-agent still on record is
			 * a root of its own (parent_gone), counted there, not twice */
			if (up->orphan)
				break;
			up->sz.bytes += own[i].bytes;
			up->sz.disk += own[i].disk;
			if (R.v[i].updated > up->updated)
				up->updated = R.v[i].updated;
			par = up->parent;
		}
	}
	for (i = 0; i < R.n && rc >= 0; i++) {
		agc_session_info info = {
			.agent = "codex",
			.id = R.v[i].id,
			.parent = R.v[i].parent,
			.project = R.v[i].project,
			.title = R.v[i].title,
			.prompt = opts && opts->grep ? R.v[i].prompt : NULL,
			.created_ms = R.v[i].created,
			.updated_ms = R.v[i].updated,
			.bytes = R.v[i].sz.bytes,
			.disk = R.v[i].sz.disk,
			.archived = R.v[i].archived,
			.orphan = R.v[i].orphan,
		};

		/* a sub-agent whose parent has no rollout is a root now (SPEC "ls"), unless a
		 * dir of rollouts or the SQLite home could not be read (the parent's rollout or
		 * row may be there) */
		if (R.v[i].parent && !R.v[i].orphan && !w.cut && !(qp && qfd < 0))
			info.parent_gone = cx_parent_gone(&R, &x, &D, R.v[i].parent);
		if (sink->add(sink, &info, R.v[i].gate) < 0)
			rc = -1;
	}
out:
	free(own);
	for (i = 0; i < R.n; i++) {
		free(R.v[i].parent);
		free(R.v[i].title);
		free(R.v[i].project);
		free(R.v[i].prompt);
	}
	free(R.v);
	dbs_release(&D);
	index_release(&x);
	if (qfd >= 0)
		close(qfd);
	close(homefd);
	return rc < 0 ? -1 : 0;
}

/* ---- the adapter ---------------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* compact: every *.sqlite of the SQLite home, by name (Codex Desktop's codex-dev.db is never
 * changed) */
static int cx_databases(agc_ctx *ctx, const agc_rootset *rs, int (*cb)(size_t root, const char *rel, void *ud),
			void *ud)
{
	const char *qp = rs->n > R_SQLITE && rs->v[R_SQLITE].exists ? rs->v[R_SQLITE].real : NULL;
	struct { char **v; size_t n, cap; } names = {0};
	struct dirent *e;
	size_t seen = 0, i;
	int qfd, rc = 0;
	DIR *d;

	(void)ctx;
	if (!qp || (qfd = agc_walk_open_root(qp)) < 0)
		return 0;
	d = fdopendir(qfd);
	if (!d) {
		close(qfd);
		return 0;
	}
	while (rc == 0 && (e = readdir(d)) && ++seen <= CX_DIR_MAX) {
		size_t n = strlen(e->d_name);
		char **slot;

		if (n < 8 || strcmp(e->d_name + n - 7, ".sqlite") != 0 || e->d_name[0] == '.')
			continue;
		slot = AGC_ARRAY_PUSH(&names, 4096);
		if (!slot || !(*slot = agc_strdup(e->d_name))) {
			if (slot)
				names.n--;
			rc = -1;
		}
	}
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), name_cmp);
	for (i = 0; i < names.n; i++) {
		if (rc == 0)
			rc = cb(R_SQLITE, names.v[i], ud);
		free(names.v[i]);
	}
	free(names.v);
	return rc;
}

static const char *const cx_env[] = {"CODEX_THREAD_ID", "CODEX_SESSION_ID", NULL};

/* ps and stop: Codex's own processes: the native binary (codex), or node running the npm
 * package's bin/codex.js. */
static bool cx_is_proc(const char *argv, size_t len)
{
	const char *b;
	size_t bl;

	return agc_argv_prog(argv, len, &b, &bl) &&
	       ((bl == 5 && memcmp(b, "codex", 5) == 0) || (bl == 8 && memcmp(b, "codex.js", 8) == 0));
}

/* The managed app-server daemon (formats/codex.md §5): shared by every TUI, it keeps a thread's
 * writer lock after its TUI exits. */
static bool cx_is_service(const char *argv, size_t len)
{
	return cx_is_proc(argv, len) && agc_argv_has(argv, len, "app-server") &&
	       agc_argv_has(argv, len, "--managed-daemon");
}

/* stop: the options whose value is the session the process runs */
static const char *const codex_session_opts[] = {"resume", NULL};

const agc_adapter agc_adapter_codex = {
	.name = "codex",
	.bit = AGC_AGENT_CODEX,
	.id_canon = cx_id,
	.id_whole = cx_id_whole,
	.roots = cx_roots,
	.discover = cx_discover,
	.list = cx_list,
	.env_names = cx_env,
	.n_env_names = 2,
	.spares_kept = true,
	.run_new = cx_run_new,
	.run_free = cx_run_free,
	.databases = cx_databases,
	.is_proc = cx_is_proc,
	.is_service = cx_is_service,
	.release = "'codex app-server daemon stop' releases every thread Codex's daemon holds",
	.session_opts = codex_session_opts,
};
