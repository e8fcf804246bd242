/* The plan of one purge (what discovery found) and the listing of sessions. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core.h"
#include "db.h"
#include "error.h"
#include "scan.h"
#include "session.h"

void agc_plan_init(agc_plan *p, const agc_adapter *ad, agc_ctx *ctx, const agc_rootset *rs,
		   const char *id)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->ad = ad;
	p->ctx = ctx;
	/* A copy of the agent's roots that discovery may extend. */
	for (i = 0; rs && i < rs->n && i < AGC_ROOTS_MAX; i++) {
		p->local.v[i] = rs->v[i];
		p->local.v[i].path = agc_strdup(rs->v[i].path);
		p->local.v[i].real = rs->v[i].real ? agc_strdup(rs->v[i].real) : NULL;
		p->local.n++;
	}
	p->roots = rs ? &p->local : NULL;
	snprintf(p->id, sizeof(p->id), "%s", id);
	for (i = 0; i < AGC_ROOTS_MAX; i++)
		p->rootfd[i] = -2;
}

static void meta_release(agc_meta *m)
{
	free(m->project);
	free(m->title);
	free(m->parent);
	free(m->layout);
	memset(m, 0, sizeof(*m));
}

void agc_plan_release(agc_plan *p)
{
	size_t i;

	for (i = 0; i < p->ids.n; i++)
		free(p->ids.v[i]);
	free(p->ids.v);
	free(p->id_db.v);
	for (i = 0; i < p->arts.n; i++) {
		free(p->arts.v[i].rel);
		free(p->arts.v[i].session);
	}
	free(p->arts.v);
	for (i = 0; i < p->lines.n; i++)
		free(p->lines.v[i].rel);
	free(p->lines.v);
	for (i = 0; i < p->notes.n; i++) {
		free(p->notes.v[i].path);
		free(p->notes.v[i].reason);
	}
	free(p->notes.v);
	for (i = 0; i < p->refusals.n; i++) {
		free(p->refusals.v[i].path);
		free(p->refusals.v[i].reason);
	}
	free(p->refusals.v);
	for (i = 0; i < p->hints.n; i++) {
		free(p->hints.v[i].what);
		free(p->hints.v[i].text);
	}
	free(p->hints.v);
	for (i = 0; i < p->dbs.n; i++)
		free(p->dbs.v[i].rel);
	free(p->dbs.v);
	for (i = 0; i < p->rows.n; i++) {
		free(p->rows.v[i].table);
		free(p->rows.v[i].column);
		free(p->rows.v[i].via_local);
		free(p->rows.v[i].via_table);
		free(p->rows.v[i].via_key);
		free(p->rows.v[i].via_column);
	}
	free(p->rows.v);
	for (i = 0; i < p->watch.n; i++)
		free(p->watch.v[i].label);
	free(p->watch.v);
	for (i = 0; i < p->locks.n; i++) {
		agc_plan_lock *l = &p->locks.v[i];

		/* a lock still held is let go (the purge did not reach its end: refused, an error):
		 * its file kept, unless the purge made it, when it goes as it came */
		if (l->fd >= 0)
			agc_sesslock_release(l->dfd, l->coord, agc_plan_lock_leaf(l), l->fd, l->created);
		if (l->dfd >= 0)
			close(l->dfd);
		free(l->rel);
		free(l->session);
	}
	free(p->locks.v);
	for (i = 0; i < p->forks.n; i++)
		free(p->forks.v[i]);
	free(p->forks.v);
	agc_holders_release(&p->holders);
	meta_release(&p->meta);
	agc_rootset_release(&p->local);
	for (i = 0; i < AGC_ROOTS_MAX; i++) {
		if (p->rootfd[i] >= 0)
			close(p->rootfd[i]);
		p->rootfd[i] = -2;
	}
}

DIR *agc_dir_at(int rootfd, const char *rel)
{
	int fd = openat(rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	int e;

	if (fd < 0) {
		agc_short_note(errno);
		return NULL;
	}
	d = fdopendir(fd);
	if (!d) {
		e = errno;
		agc_short_note(e);
		close(fd);
		errno = e;
	}
	return d;
}

/* The residual reason for a dir or root that could not be read: "permission" when the mode
 * forbids it (R2), else the error itself. malloc'd. */
static char *unreadable_reason(int err)
{
	if (err == EACCES || err == EPERM)
		return agc_strdup("permission");
	return agc_strfmt("error: cannot read dir: %s", strerror(err));
}

/* Note a dir of the plan's root that could not be read (errno err), errno kept. */
size_t agc_plan_fds(const agc_plan *p)
{
	size_t i, n = 0;

	for (i = 0; i < AGC_ROOTS_MAX; i++)
		n += p->rootfd[i] >= 0;
	for (i = 0; i < p->locks.n; i++)
		n += (p->locks.v[i].fd >= 0) + (p->locks.v[i].dfd >= 0);
	return n;
}

size_t agc_fd_budget(void)
{
	struct rlimit rl;
	rlim_t soft;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 4096;
	soft = rl.rlim_cur;
	/* a quarter, and at most 256, for the rest: walks hold one per level, each database
	 * three (the file, its -wal and -shm), the process scan a few */
	return (size_t)(soft > 1024 ? soft - 256 : soft * 3 / 4);
}

static void note_unreadable_dir(agc_plan *p, size_t root, const char *rel, int err)
{
	char *why = unreadable_reason(err);

	agc_short_note(err);

	agc_plan_add_note(p, root, rel, why ? why : "error: cannot read dir");
	free(why);
	errno = err;
}

DIR *agc_plan_dir(agc_plan *p, size_t root, int rootfd, const char *rel)
{
	DIR *d = agc_dir_at(rootfd, rel);

	if (!d && errno != ENOENT && errno != ENOTDIR)
		note_unreadable_dir(p, root, rel, errno);
	return d;
}

struct dirent *agc_plan_readdir(agc_plan *p, size_t root, const char *rel, DIR *d)
{
	struct dirent *e;

	errno = 0;
	e = readdir(d);
	if (!e && errno)
		note_unreadable_dir(p, root, rel, errno);
	return e;
}

int agc_plan_rootfd(agc_plan *p, size_t root)
{
	if (root >= p->roots->n)
		return -1;
	if (p->rootfd[root] == -2) {
		agc_root *r = &p->local.v[root];

		p->rootfd[root] = r->exists && r->real ? agc_walk_open_root(r->real) : -1;
		if (p->rootfd[root] < 0 && r->exists && r->real)
			agc_short_note(errno);
		if (p->rootfd[root] < 0 && r->exists && !r->err)
			r->err = !r->real ? EACCES : errno == ENOENT ? 0 : errno;
		if (r->exists && r->err) {
			/* A root that exists but cannot be opened or searched is never skipped
			 * silently: the session is reported as left behind there, not as not
			 * found (R2). */
			char *why;

			why = unreadable_reason(r->err);
			agc_plan_add_note(p, root, NULL, why ? why : "permission");
			free(why);
		}
	}
	return p->rootfd[root];
}

int agc_plan_root_err(agc_plan *p, size_t root)
{
	if (root >= p->roots->n)
		return 0;
	agc_plan_rootfd(p, root);
	return p->local.v[root].err;
}

static int spare_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int agc_plan_add_id(agc_plan *p, const char *id)
{
	char **slot;
	size_t i;

	size_t *db;

	for (i = 0; i < p->ids.n; i++)
		if (strcmp(p->ids.v[i], id) == 0)
			return 0;
	/* a descendant a kept id reaches stays (agc_plan.spare): not the plan's own id, which the
	 * guard judges ("kept") */
	if (p->ids.n && p->n_spare && bsearch(&id, p->spare, p->n_spare, sizeof(*p->spare), spare_cmp)) {
		char *msg = agc_strfmt("'%s', a sub-agent of this session, is kept (a kept id reaches it): "
				       "left, with what it reaches, and not purged with this one", id);

		for (i = 0; msg && i < p->hints.n; i++)
			if (!p->hints.v[i].what && strcmp(p->hints.v[i].text, msg) == 0)
				break;
		if (!msg || (i == p->hints.n && agc_plan_add_hint(p, NULL, msg) < 0)) {
			free(msg);
			return agc_error_oom();
		}
		free(msg);
		return 0;
	}
	db = AGC_ARRAY_PUSH(&p->id_db, AGC_PLAN_MAX_ITEMS);
	if (!db)
		return -1;
	*db = SIZE_MAX;
	slot = AGC_ARRAY_PUSH(&p->ids, AGC_PLAN_MAX_ITEMS);
	if (!slot) {
		p->id_db.n--;
		return -1;
	}
	*slot = agc_strdup(id);
	if (!*slot) {
		p->ids.n--;
		p->id_db.n--;
		return -1;
	}
	return 0;
}

int agc_plan_add_id_in(agc_plan *p, const char *id, size_t db)
{
	size_t i;

	if (agc_plan_add_id(p, id) < 0)
		return -1;
	for (i = 0; i < p->ids.n; i++)
		if (strcmp(p->ids.v[i], id) == 0 && p->id_db.v[i] == SIZE_MAX)
			p->id_db.v[i] = db;
	return 0;
}

int agc_plan_add_art(agc_plan *p, size_t root, const char *rel, const char *session, unsigned flags,
		     const char *last)
{
	struct stat st;
	agc_artifact *a;
	int rootfd = agc_plan_rootfd(p, root);
	int dfd, err;
	const char *leaf;
	agc_walk_status ws;
	size_t i;

	if (rootfd < 0 || !agc_walk_rel_ok(rel))
		return 0;
	for (i = 0; i < p->arts.n; i++)
		if (p->arts.v[i].root == root && strcmp(p->arts.v[i].rel, rel) == 0)
			return 0;
	/* Discovery may look through a linked dir read-only (only the leaf is not followed); the
	 * removal later walks without following anything (R2). */
	if (fstatat(rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		agc_short_note(errno);
		return agc_plan_add_note(p, root, rel,
					 errno == EACCES || errno == EPERM ? "permission" : "error: cannot inspect") < 0
			       ? -1
			       : 0;
	}
	a = AGC_ARRAY_PUSH(&p->arts, AGC_PLAN_MAX_ITEMS);
	if (!a)
		return -1;
	a->root = root;
	a->rel = agc_strdup(rel);
	a->session = agc_strdup(session ? session : p->id);
	if (!a->rel || !a->session) {
		/* never leave a half-made entry for the next look-up to trip on */
		free(a->rel);
		free(a->session);
		p->arts.n--;
		return -1;
	}
	a->flags = flags;
	a->last = last;
	a->dev = st.st_dev;
	a->ino = st.st_ino;
	agc_filekey_of(&st, &a->key);
	a->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	a->kind = S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : S_ISREG(st.st_mode) ? 'f' : 'o';
	a->bytes = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	a->disk = (uint64_t)st.st_blocks * 512;
	ws = agc_walk_parent(rootfd, rel, &dfd, &leaf, &err);
	if (ws == AGC_WALK_ERROR)
		agc_short_note(err);
	/* Only a link (or a non-dir) on the way means it was seen through a link; a dir we may
	 * not open is an ordinary artifact whose removal will say why it failed. */
	if (ws == AGC_WALK_SYMLINK || ws == AGC_WALK_NOTDIR) {
		a->behind_link = true;
		/* measured all the same, read-only through the link: its size is the session's
		 * (SPEC "Sizes"), whether or not it can be removed */
		if (a->kind == 'd' && !p->gate_only) {
			const char *slash = strrchr(rel, '/');
			char *parent = slash ? agc_strndup(rel, (size_t)(slash - rel)) : NULL;

			dfd = parent ? openat(rootfd, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
			leaf = slash ? slash + 1 : rel;
			free(parent);
			ws = dfd >= 0 ? AGC_WALK_OK : ws;
		}
	}
	/* Sizes are for reports; the gate walks dirs itself and needs none. A dir's newest
	 * mtime is only as good as the walk: one that could not see everything (a stat or a
	 * read that failed, a mount point) leaves its last activity unknown. */
	a->mtime_unsure = a->kind == 'd';
	if (ws == AGC_WALK_OK) {
		if (a->kind == 'd' && !p->gate_only) {
			uint64_t b = 0, d = 0;
			int64_t mt = a->mtime_ms;
			bool complete = false;

			if (agc_scan_walk(dfd, leaf, &st, AGC_SIZE_MAX_ENTRIES, NULL, NULL, &b, &d, &mt, &complete) == 0) {
				a->bytes = b;
				a->disk = d;
				if (mt > a->mtime_ms)
					a->mtime_ms = mt;
				a->mtime_unsure = !complete;
			}
		}
		close(dfd);
	}
	return 1;
}

int agc_plan_add_note_kind(agc_plan *p, size_t root, const char *rel, const char *kind,
			   const char *reason)
{
	agc_note *n = AGC_ARRAY_PUSH(&p->notes, AGC_PLAN_MAX_ITEMS);
	struct stat st;

	if (!n)
		return -1;
	n->path = agc_plan_abspath(p->roots, root, rel);
	n->reason = agc_strdup(reason);
	/* the residual says what is left: an unreadable dir is a dir, not a file */
	if (kind)
		n->kind = kind;
	else
		n->kind = n->path && lstat(n->path, &st) == 0 && S_ISDIR(st.st_mode) ? "dir" : "file";
	return n->path && n->reason ? 0 : -1;
}

int agc_plan_add_refusal(agc_plan *p, size_t root, const char *rel, const char *kind, const char *reason)
{
	agc_note *n = AGC_ARRAY_PUSH(&p->refusals, AGC_PLAN_MAX_ITEMS);

	if (!n)
		return -1;
	n->path = agc_plan_abspath(p->roots, root, rel);
	n->reason = agc_strdup(reason);
	n->kind = kind ? kind : "file";
	return n->path && n->reason ? 0 : -1;
}

int agc_plan_add_note(agc_plan *p, size_t root, const char *rel, const char *reason)
{
	return agc_plan_add_note_kind(p, root, rel, NULL, reason);
}

int agc_plan_add_hint(agc_plan *p, const char *what, const char *text)
{
	agc_hint *h = AGC_ARRAY_PUSH(&p->hints, AGC_PLAN_MAX_ITEMS);

	if (!h)
		return -1;
	h->what = what ? agc_strdup(what) : NULL;
	h->text = agc_strdup(text);
	if ((what && !h->what) || !h->text) {
		free(h->what);
		free(h->text);
		p->hints.n--;
		return -1;
	}
	return 0;
}

int agc_plan_add_root(agc_plan *p, const char *name, const char *path)
{
	size_t i;

	for (i = 0; i < p->local.n; i++)
		if (strcmp(p->local.v[i].path, path) == 0)
			return (int)i;
	return agc_rootset_add(&p->local, name, path, "discovered");
}

int agc_plan_add_db(agc_plan *p, size_t root, const char *rel)
{
	int rootfd = agc_plan_rootfd(p, root);
	struct stat st;
	agc_dbref *d;
	size_t i;

	for (i = 0; i < p->dbs.n; i++)
		if (p->dbs.v[i].root == root && strcmp(p->dbs.v[i].rel, rel) == 0)
			return (int)i;
	if (rootfd < 0 || !agc_walk_rel_ok(rel) || fstatat(rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return agc_error_set(-1, "cannot find database '%s'", rel);
	d = AGC_ARRAY_PUSH(&p->dbs, 1024);
	if (!d)
		return -1;
	d->root = root;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->rel = agc_strdup(rel);
	if (!d->rel) {
		p->dbs.n--;
		return -1;
	}
	return (int)(p->dbs.n - 1);
}

static char *dup_opt(const char *s, bool *bad)
{
	char *d;

	if (!s)
		return NULL;
	d = agc_strdup(s);
	if (!d)
		*bad = true;
	return d;
}

int agc_plan_add_rows(agc_plan *p, size_t db, const char *table, const char *column,
		      const char *via_local, const char *via_table, const char *via_key,
		      const char *via_column)
{
	agc_rowset *r = AGC_ARRAY_PUSH(&p->rows, AGC_PLAN_MAX_ITEMS);
	bool bad = false;

	if (!r)
		return -1;
	r->db = db;
	r->table = dup_opt(table, &bad);
	r->column = dup_opt(column, &bad);
	r->via_local = dup_opt(via_local, &bad);
	r->via_table = dup_opt(via_table, &bad);
	r->via_key = dup_opt(via_key, &bad);
	r->via_column = dup_opt(via_column, &bad);
	if (bad || !r->table || (!r->column && !r->via_table) ||
	    (r->via_table && (!r->via_local || !r->via_key || !r->via_column))) {
		free(r->table);
		free(r->column);
		free(r->via_local);
		free(r->via_table);
		free(r->via_key);
		free(r->via_column);
		p->rows.n--;
		return bad ? -1 : agc_error_set(-1, "incomplete row set");
	}
	return 0;
}

int agc_plan_add_record_rows(agc_plan *p, size_t db, const char *table, const char *column)
{
	if (agc_plan_add_rows(p, db, table, column, NULL, NULL, NULL, NULL) < 0)
		return -1;
	p->rows.v[p->rows.n - 1].record = true;
	return 0;
}

const char *agc_plan_lock_leaf(const agc_plan_lock *l)
{
	const char *slash = strrchr(l->rel, '/');

	return slash ? slash + 1 : l->rel;
}

int agc_plan_add_lock(agc_plan *p, size_t root, const char *rel, const char *coord, const char *session)
{
	int rootfd = agc_plan_rootfd(p, root);
	agc_plan_lock *l;
	struct stat st;
	size_t i;

	bool absent = false, bad = false;

	if (rootfd < 0)
		return 0; /* the root itself is noted (agc_plan_rootfd) */
	memset(&st, 0, sizeof(st));
	if (fstatat(rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return agc_plan_add_refusal(p, root, rel, "file", strerror(errno)) < 0 ? -1 : 0;
		absent = true;
		memset(&st, 0, sizeof(st));
	} else if (!S_ISREG(st.st_mode)) {
		/* the agent opens it through a link, and a FIFO can be locked too: what is there
		 * cannot be held the agent's way, so the purge does not begin (R2, R8) */
		if (agc_plan_add_refusal(p, root, rel, "file", S_ISLNK(st.st_mode) ? "symlink" : "not a regular file") < 0)
			return -1;
		bad = true;
	}
	for (i = 0; i < p->locks.n; i++)
		if (p->locks.v[i].root == root && strcmp(p->locks.v[i].rel, rel) == 0)
			return 1;
	l = AGC_ARRAY_PUSH(&p->locks, AGC_PLAN_MAX_ITEMS);
	if (!l)
		return -1;
	memset(l, 0, sizeof(*l));
	l->root = root;
	l->coord = coord;
	l->absent = absent;
	l->bad = bad;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	l->disk = (uint64_t)st.st_blocks * 512;
	l->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	l->dfd = l->fd = -1;
	l->rel = agc_strdup(rel);
	l->session = agc_strdup(session ? session : p->id);
	if (!l->rel || !l->session) {
		free(l->rel);
		free(l->session);
		p->locks.n--;
		return -1;
	}
	return absent || bad ? 0 : 1;
}

int agc_plan_add_fork(agc_plan *p, const char *id)
{
	char **s;
	size_t i;

	for (i = 0; i < p->forks.n; i++)
		if (strcmp(p->forks.v[i], id) == 0)
			return 0;
	s = AGC_ARRAY_PUSH(&p->forks, AGC_PLAN_MAX_ITEMS);
	if (!s)
		return -1;
	if (!(*s = agc_strdup(id))) {
		p->forks.n--;
		return -1;
	}
	return 0;
}

int agc_plan_add_watch(agc_plan *p, size_t root, const char *rel)
{
	int rootfd = agc_plan_rootfd(p, root);
	struct stat st;
	agc_watch *w;

	if (rootfd < 0 || !agc_walk_rel_ok(rel) || fstatat(rootfd, rel, &st, 0) < 0)
		return 0;
	w = AGC_ARRAY_PUSH(&p->watch, 1024);
	if (!w)
		return -1;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	w->label = agc_plan_abspath(p->roots, root, rel);
	if (!w->label) {
		p->watch.n--;
		return -1;
	}
	return 1;
}

/* The ids as a JSON array, bound to json_each(?1) so no SQL is built from them. */
char *agc_plan_ids_json(const agc_plan *p)
{
	json_t *a = json_array();
	char *s;
	size_t i;

	if (!a)
		return NULL;
	for (i = 0; i < p->ids.n; i++)
		json_array_append_new(a, json_string(p->ids.v[i]));
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	if (!s)
		agc_error_oom();
	return s;
}

char *agc_rows_sql(const agc_rowset *rs, const char *select)
{
	char *t = agc_db_ident(rs->table), *c = rs->column ? agc_db_ident(rs->column) : NULL;
	char *vl = rs->via_local ? agc_db_ident(rs->via_local) : NULL;
	char *vt = rs->via_table ? agc_db_ident(rs->via_table) : NULL;
	char *vk = rs->via_key ? agc_db_ident(rs->via_key) : NULL;
	char *vc = rs->via_column ? agc_db_ident(rs->via_column) : NULL;
	char *head = NULL, *direct = NULL, *via = NULL, *sql = NULL;

	if (!t || (rs->column && !c) || (rs->via_table && !(vl && vt && vk && vc)))
		goto out;
	head = select ? agc_strfmt("SELECT %s FROM", select) : agc_strdup("DELETE FROM");
	if (c)
		direct = agc_strfmt("%s IN (SELECT value FROM json_each(?1))", c);
	if (vt)
		via = agc_strfmt("%s IN (SELECT %s FROM %s WHERE %s IN (SELECT value FROM json_each(?1)))",
				 vl, vk, vt, vc);
	if (!head || (c && !direct) || (vt && !via))
		goto out;
	sql = agc_strfmt("%s %s WHERE %s%s%s", head, t, direct ? direct : "", direct && via ? " OR " : "",
			 via ? via : "");
out:
	free(t);
	free(c);
	free(vl);
	free(vt);
	free(vk);
	free(vc);
	free(head);
	free(direct);
	free(via);
	return sql;
}

int agc_plan_count_rows(agc_plan *p, sqlite3 *db, size_t dbi)
{
	char *ids = agc_plan_ids_json(p);
	size_t i;
	int rc = 0;

	if (!ids)
		return -1;
	for (i = 0; i < p->rows.n && rc == 0; i++) {
		agc_rowset *rs = &p->rows.v[i];
		sqlite3_stmt *st = NULL;
		char *sql, *size, *sel;
		int src;

		if (rs->db != dbi)
			continue;
		rs->count = rs->bytes = 0;
		/* Counting alone reads only the indexes: a purge's discovery (its bytes come
		 * from the deletes) and the residual's first look (rows are rarely left). */
		if (p->rows_unsized || p->again) {
			sql = agc_rows_sql(rs, "count(*)");
			if (!sql)
				return free(ids), -1;
			src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
			if (src == SQLITE_OK) {
				sqlite3_bind_text(st, 1, ids, -1, SQLITE_STATIC);
				src = sqlite3_step(st);
			}
			if (src == SQLITE_ROW)
				rs->count = (uint64_t)sqlite3_column_int64(st, 0);
			else
				rc = agc_db_fail(db, src, rs->table);
			sqlite3_finalize(st);
			st = NULL;
			free(sql);
			if (rc < 0 || p->rows_unsized || !rs->count)
				continue;
		}
		/* SPEC "Sizes": the stored size of a row, the bytes of its column values */
		size = agc_db_row_size_sql(db, rs->table, NULL);
		sel = size ? agc_strfmt("count(*), coalesce(sum(%s), 0)", size) : NULL;
		sql = sel ? agc_rows_sql(rs, sel) : NULL;
		free(size);
		free(sel);
		if (!sql)
			return free(ids), -1;
		src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_text(st, 1, ids, -1, SQLITE_STATIC);
			src = sqlite3_step(st);
		}
		if (src == SQLITE_ROW) {
			rs->count = (uint64_t)sqlite3_column_int64(st, 0);
			rs->bytes = (uint64_t)sqlite3_column_int64(st, 1);
		} else {
			rc = agc_db_fail(db, src, rs->table);
		}
		sqlite3_finalize(st);
		free(sql);
	}
	free(ids);
	return rc;
}

bool agc_plan_empty(const agc_plan *p)
{
	size_t i;

	for (i = 0; i < p->rows.n; i++)
		if (p->rows.v[i].count)
			return false;

	/* A dir that could not be read may hold the session: that is not "not found". */
	if (p->arts.n || p->holders.n || p->notes.n || p->refusals.n)
		return false;
	for (i = 0; i < p->locks.n; i++)
		if (!p->locks.v[i].absent)
			return false;
	for (i = 0; i < p->lines.n; i++)
		if (p->lines.v[i].count)
			return false;
	for (i = 0; i < p->dbs.n; i++)
		if (p->dbs.v[i].wal_residue)
			return false;
	return true;
}

char *agc_plan_abspath(const agc_rootset *rs, size_t root, const char *rel)
{
	const agc_root *r = &rs->v[root];
	const char *base = r->real ? r->real : r->path;

	if (!rel || !*rel)
		return agc_strdup(base);
	return agc_strfmt("%s%s%s", base, strcmp(base, "/") == 0 ? "" : "/", rel);
}

int agc_size_entry(int dirfd, const char *name, const struct stat *st, agc_size *sz,
		   int64_t *mtime_ms)
{
	uint64_t b = 0, d = 0;
	int64_t mt = 0;
	int rc = agc_scan_size_in(dirfd, name, st, AGC_SIZE_MAX_ENTRIES, NULL, NULL, &b, &d, &mt);

	if (rc != 0)
		return rc;
	sz->bytes += b;
	sz->disk += d;
	if (mtime_ms && mt > *mtime_ms)
		*mtime_ms = mt;
	return 0;
}

/* The leaf of rel beneath rootfd: its parent opened in *pfd and the leaf lstat'ed; *leaf
 * points into rel. A link on the way is looked through, read-only, as discovery looks
 * through it (agc_plan_add_art): SPEC "Sizes" gives ls the figure show and purge give, and
 * R2 keeps removal, not measurement, off what lies behind a link. The leaf itself is never
 * followed. Returns 1, 0 when either is not there (nothing to count), or -1. */
static int leaf_stat(int rootfd, const char *rel, int *pfd, const char **leaf, struct stat *st)
{
	const char *slash = strrchr(rel, '/');
	char *parent = agc_strndup(rel, (size_t)(slash - rel));
	int e;

	*leaf = slash + 1;
	*pfd = parent ? openat(rootfd, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	free(parent);
	if (*pfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (fstatat(*pfd, *leaf, st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	e = errno;
	close(*pfd);
	return e == ENOENT || e == ENOTDIR ? 0 : -1;
}

int agc_size_at(int rootfd, const char *rel, agc_size *sz, int64_t *mtime_ms)
{
	const char *slash = strrchr(rel, '/'), *leaf;
	struct stat st;
	int pfd, rc;

	if (!agc_walk_rel_ok(rel))
		return 0;
	if (!slash)
		return agc_size_entry(rootfd, rel, NULL, sz, mtime_ms) == 0 ? 1 : 0;
	if ((rc = leaf_stat(rootfd, rel, &pfd, &leaf, &st)) <= 0)
		return rc;
	rc = agc_size_entry(pfd, leaf, &st, sz, mtime_ms);
	rc = rc == 0 ? 1 : rc == AGC_ENOTFOUND ? 0 : -1;
	close(pfd);
	return rc;
}

void agc_plan_size(const agc_plan *p, agc_size *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < p->arts.n; i++) {
		out->bytes += p->arts.v[i].bytes;
		out->disk += p->arts.v[i].disk;
	}
	for (i = 0; i < p->rows.n; i++)
		out->bytes += p->rows.v[i].bytes;
	for (i = 0; i < p->lines.n; i++)
		out->bytes += p->lines.v[i].bytes;
}

/* The bytes of s a title keeps (AGC_TITLE_MAX characters, or one fewer and an ellipsis), and
 * whether the ellipsis goes after them. */
static size_t title_len(const char *s, bool *ellipsis)
{
	size_t i, chars = 0, cut = 0;

	*ellipsis = false;
	/* Count characters by their lead bytes: a continuation byte (10xxxxxx) starts none, so
	 * a cut at a lead byte never splits a UTF-8 sequence. */
	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (chars == AGC_TITLE_MAX - 1)
			cut = i;
		if (++chars > AGC_TITLE_MAX) {
			*ellipsis = true;
			return cut;
		}
	}
	return i;
}

#define TITLE_ELLIPSIS "\xe2\x80\xa6" /* U+2026 */

/* Copy the title of s to out (room for title_len + 4), NUL-terminated; returns the bytes. */
static size_t title_copy(char *out, const char *s)
{
	bool ell;
	size_t n = title_len(s, &ell);

	memcpy(out, s, n);
	if (ell) {
		memcpy(out + n, TITLE_ELLIPSIS, 3);
		n += 3;
	}
	out[n] = '\0';
	return n + 1;
}

char *agc_title_cut(const char *s)
{
	bool ell;
	char *t;

	if (!s || !*s)
		return NULL;
	t = malloc(title_len(s, &ell) + 4);
	if (!t) {
		agc_error_oom();
		return NULL;
	}
	title_copy(t, s);
	return t;
}

/* ---- ls ---------------------------------------------------------------------------------- */

typedef struct ls_row {
	agc_session_info info;   /* strings owned */
	size_t gate;             /* its gate entry, or AGC_LS_NO_GATE */
} ls_row;

/* R5, SPEC "live in ls": one snapshot of the process table's files, taken when the first
 * session is met, each session's files matched against it as the walk gives them (a home has
 * millions of files, the processes thousands); the sessions' ids are matched after the walk
 * by one scan of argv and environment. An entry per session: its parent, and whether it is
 * held. */
typedef struct ls_gate_ent {
	uint32_t parent;  /* the entry of its parent session, or LS_GATE_NONE */
	uint8_t agent;
	bool live;
} ls_gate_ent;

#define LS_GATE_NONE UINT32_MAX

typedef struct ls_gate {
	struct { ls_gate_ent *v; size_t n, cap; } ents;
	agc_snap *snap;
	bool taken;        /* the snapshot was asked for (snap NULL then: it failed) */
	size_t cwd_agent;  /* the agent whose processes the project rule is for */
	bool has_cwd_agent;
	/* the ids, matched against argv and environment after the walk by one scan (its index
	 * copies no argv, so a host with huge command lines costs nothing more) */
	struct { char *v; size_t n, cap; } idtext;  /* NUL-terminated, one after another */
	struct { size_t *v; size_t n, cap; } idoff;
	struct { uint32_t *v; size_t n, cap; } ident;
	/* ps: which process holds (or, a shared service, serves) each entry, kept only when asked
	 * for (agc_ls_held); an entry live for a reason no process stands for has pid 0 */
	bool want_held;
	struct { agc_held_ent *v; size_t n, cap; } held;
} ls_gate;

/* The selectors of --project, --project-gone and --grep (SPEC "Commands", ls), prepared once
 * per listing; prune selects with the same ones. */
typedef struct ls_select {
	char *dir[2];        /* --project: lexically normalised, and its real path when it exists */
	size_t n_dir;
	/* The answers for the last project seen: a listing gives many sessions of one project
	 * in a row, and realpath and stat are the costly part. */
	char *last;
	bool last_in, last_gone;
} ls_select;

static bool ls_exempt(const char *argv, size_t len, void *ud)
{
	size_t a;

	(void)ud;
	/* only files of agents with a shared service are exemptable (gate_push) */
	for (a = 0; agc_adapter_table[a]; a++)
		if (agc_adapter_table[a]->exempt && agc_adapter_table[a]->exempt(argv, len, NULL))
			return true;
	return false;
}

typedef struct ls_acct {
	agc_ctx *ctx;
	size_t agent;
} ls_acct;

static bool ls_accounted(pid_t pid, void *ud)
{
	ls_acct *a = ud;
	const agc_adapter *ad = agc_adapter_table[a->agent];
	const agc_rootset *rs = agc_ctx_roots(a->ctx, a->agent);

	return ad->accounted_ls && rs && ad->accounted_ls(a->ctx, rs, pid);
}

typedef struct ls_collect {
	agc_ls_sink sink;
	const agc_ls_opts *opts;
	int64_t now_ms;
	ls_select sel;
	struct { ls_row *v; size_t n, cap; } rows;
	/* --limit N without --children: only the N first rows in the listing's order are kept, in
	 * a heap whose root is the last of them, so memory does not grow with the home */
	size_t keep;
	agc_strpool projects; /* the rows' project paths, each kept once */
	agc_ctx *ctx;
	ls_acct acct;
	ls_gate gate;
} ls_collect;

#define LS_GATE_MAX ((size_t)1 << 31)

/* The snapshot, taken on the first session: a home without sessions scans nothing. When it
 * cannot be taken, every session counts as live (what the gate cannot read is in use). */
static void gate_take(ls_collect *c)
{
	ls_gate *G = &c->gate;
	agc_snap_opts o;
	char before[2048];
	size_t a;

	G->taken = true;
	/* The snapshot skips processes that went away or are not ours to read, and each skip
	 * sets the last error: the message of a listing that failed is the one the caller must
	 * see (R2, R8), so it is kept across the snapshot. */
	snprintf(before, sizeof(before), "%s", agc_error_last());
	memset(&o, 0, sizeof(o));
	o.procroot = c->ctx->procroot;
	o.exempt = ls_exempt;
	/* the agent whose own processes the project rule is for (Claude's: the only one with
	 * agent_proc), when it is listed; the others add no project dirs */
	for (a = 0; agc_adapter_table[a]; a++)
		if (agc_adapter_table[a]->agent_proc &&
		    (!c->opts->agents || (c->opts->agents & agc_adapter_table[a]->bit))) {
			G->cwd_agent = a;
			G->has_cwd_agent = true;
			c->acct.ctx = c->ctx;
			c->acct.agent = a;
			o.agent_proc = agc_adapter_table[a]->agent_proc;
			o.accounted = ls_accounted;
			o.accounted_ud = &c->acct;
			break;
		}
	o.keep_pids = G->want_held;
	if (agc_snap_take(&o, &G->snap) < 0)
		G->snap = NULL;
	agc_error_set(-1, "%s", before);
}

/* ps: entry g is held (or served) by pid for why. A list that cannot grow leaves pid 0 in
 * the last slot's place: the entry stays live, its process unnamed. */
static void held_add(ls_gate *G, size_t g, pid_t pid, agc_why why, bool serves)
{
	agc_held_ent *h;

	if (!G->want_held)
		return;
	if (G->held.n && G->held.v[G->held.n - 1].g == g && G->held.v[G->held.n - 1].pid == pid &&
	    G->held.v[G->held.n - 1].why == why && G->held.v[G->held.n - 1].serves == serves)
		return;
	if (!(h = AGC_ARRAY_PUSH(&G->held, LS_GATE_MAX))) {
		if (G->held.n)
			G->held.v[G->held.n - 1] = (agc_held_ent){g, 0, AGC_WHY_UNREADABLE, false};
		return;
	}
	*h = (agc_held_ent){g, pid, why, serves};
}

static size_t gate_new(agc_ls_sink *s, size_t agent)
{
	ls_collect *c = (ls_collect *)s;
	ls_gate_ent *e;

	if (!c->gate.taken)
		gate_take(c);
	if (c->gate.ents.n >= LS_GATE_NONE || !(e = AGC_ARRAY_PUSH(&c->gate.ents, LS_GATE_MAX)))
		return AGC_LS_NO_GATE;
	e->agent = (uint8_t)agent;
	e->parent = LS_GATE_NONE;
	/* no snapshot: nothing can be shown free */
	e->live = !c->gate.snap;
	if (e->live)
		held_add(&c->gate, c->gate.ents.n - 1, 0, AGC_WHY_UNREADABLE, false);
	return c->gate.ents.n - 1;
}

static void gate_parent(agc_ls_sink *s, size_t g, size_t parent)
{
	ls_collect *c = (ls_collect *)s;

	if (g < c->gate.ents.n && parent < c->gate.ents.n && g != parent)
		c->gate.ents.v[g].parent = (uint32_t)parent;
}

/* What cannot be given to the gate cannot be shown free: that session counts as live. */
static void gate_live(agc_ls_sink *s, size_t g)
{
	ls_collect *c = (ls_collect *)s;

	if (g < c->gate.ents.n) {
		c->gate.ents.v[g].live = true;
		held_add(&c->gate, g, 0, AGC_WHY_UNREADABLE, false);
	}
}

static void gate_held(agc_ls_sink *s, size_t g, pid_t pid, agc_why why)
{
	ls_collect *c = (ls_collect *)s;

	if (g < c->gate.ents.n) {
		c->gate.ents.v[g].live = true;
		held_add(&c->gate, g, pid, why, false);
	}
}

static void gate_id(agc_ls_sink *s, size_t g, const char *id)
{
	ls_collect *c = (ls_collect *)s;
	ls_gate *G = &c->gate;
	size_t len = strlen(id) + 1, *off;
	uint32_t *ent;

	/* ps asks who holds it, not only whether anything does */
	if (g >= G->ents.n || (G->ents.v[g].live && !G->want_held))
		return;
	if (agc_array_grow((void **)&G->idtext.v, &G->idtext.cap, G->idtext.n + len, 1, LS_GATE_MAX) < 0 ||
	    !(off = AGC_ARRAY_PUSH(&G->idoff, LS_GATE_MAX))) {
		gate_live(s, g);
		return;
	}
	if (!(ent = AGC_ARRAY_PUSH(&G->ident, LS_GATE_MAX))) {
		G->idoff.n--;
		gate_live(s, g);
		return;
	}
	*off = G->idtext.n;
	*ent = (uint32_t)g;
	memcpy(G->idtext.v + G->idtext.n, id, len);
	G->idtext.n += len;
}

typedef struct held_visit {
	ls_gate *G;
	size_t g;
	bool any;
} held_visit;

static int held_file_cb(pid_t pid, agc_why why, bool serves, void *ud)
{
	held_visit *v = ud;

	held_add(v->G, v->g, pid, why, serves);
	v->any = v->any || !serves;
	return 0;
}

static void gate_file(agc_ls_sink *s, size_t g, dev_t dev, ino_t ino)
{
	ls_collect *c = (ls_collect *)s;
	ls_gate_ent *e;
	bool no_exempt;

	if (g >= c->gate.ents.n)
		return;
	e = &c->gate.ents.v[g];
	/* the exemption of one agent's shared service is not another agent's */
	no_exempt = !agc_adapter_table[e->agent]->exempt;
	if (c->gate.want_held) {
		/* the same answer as agc_snap_file, each process that gives it named */
		held_visit v = {&c->gate, g, false};

		agc_snap_file_each(c->gate.snap, dev, ino, no_exempt, held_file_cb, &v);
		if (v.any)
			e->live = true;
		return;
	}
	if (!e->live && agc_snap_file(c->gate.snap, dev, ino, no_exempt))
		e->live = true;
}

static int held_cwd_cb(pid_t pid, void *ud)
{
	held_visit *v = ud;

	held_add(v->G, v->g, pid, AGC_WHY_CWD, false);
	v->any = true;
	return 0;
}

static void gate_agent_cwd(agc_ls_sink *s, size_t g, dev_t dev, ino_t ino)
{
	ls_collect *c = (ls_collect *)s;
	ls_gate_ent *e;

	if (g >= c->gate.ents.n)
		return;
	e = &c->gate.ents.v[g];
	if (!c->gate.has_cwd_agent || e->agent != c->gate.cwd_agent)
		return;
	if (c->gate.want_held) {
		held_visit v = {&c->gate, g, false};

		agc_snap_agent_cwd_each(c->gate.snap, dev, ino, held_cwd_cb, &v);
		if (v.any)
			e->live = true;
		return;
	}
	if (!e->live && agc_snap_agent_cwd(c->gate.snap, dev, ino))
		e->live = true;
}

static void ls_gate_release(ls_gate *G)
{
	agc_snap_free(G->snap);
	free(G->ents.v);
	free(G->idtext.v);
	free(G->idoff.v);
	free(G->ident.v);
	free(G->held.v);
	memset(G, 0, sizeof(*G));
}

size_t agc_ls_gate_new(agc_ls_sink *s, size_t agent)
{
	return s && s->gate_new ? s->gate_new(s, agent) : AGC_LS_NO_GATE;
}

void agc_ls_gate_id(agc_ls_sink *s, size_t g, const char *id)
{
	if (s && s->gate_id && g != AGC_LS_NO_GATE)
		s->gate_id(s, g, id);
}

void agc_ls_gate_file(agc_ls_sink *s, size_t g, const struct stat *st)
{
	if (s && s->gate_file && g != AGC_LS_NO_GATE)
		s->gate_file(s, g, st->st_dev, st->st_ino);
}

void agc_ls_gate_agent_cwd(agc_ls_sink *s, size_t g, const struct stat *st)
{
	if (s && s->gate_agent_cwd && g != AGC_LS_NO_GATE)
		s->gate_agent_cwd(s, g, st->st_dev, st->st_ino);
}

void agc_ls_gate_parent(agc_ls_sink *s, size_t g, size_t parent)
{
	if (s && s->gate_parent && g != AGC_LS_NO_GATE && parent != AGC_LS_NO_GATE)
		s->gate_parent(s, g, parent);
}

void agc_ls_gate_live(agc_ls_sink *s, size_t g)
{
	if (s && s->gate_live && g != AGC_LS_NO_GATE)
		s->gate_live(s, g);
}

void agc_ls_gate_held(agc_ls_sink *s, size_t g, pid_t pid, agc_why why)
{
	if (g == AGC_LS_NO_GATE || !s)
		return;
	if (s->gate_held)
		s->gate_held(s, g, pid, why);
	else if (s->gate_live)
		s->gate_live(s, g);
}

typedef struct charge_visit {
	agc_ls_sink *s;
	size_t g;
} charge_visit;

/* As the gate's walk of a dir artifact: every regular file and dir inside counts (R5). */
static void charge_visit_cb(const struct stat *st, void *ud)
{
	charge_visit *v = ud;

	if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))
		agc_ls_gate_file(v->s, v->g, st);
}

int agc_ls_charge(agc_ls_sink *s, size_t g, bool gate, int dirfd, const char *name,
		  const struct stat *st, agc_size *sz, int64_t *mtime_ms)
{
	charge_visit v = {s, g};
	struct stat own;
	uint64_t b = 0, d = 0;
	int64_t mt = 0;
	int rc;

	gate = gate && g != AGC_LS_NO_GATE;
	if (gate && !st) {
		if (fstatat(dirfd, name, &own, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? AGC_ENOTFOUND : -1;
		st = &own;
	}
	rc = agc_scan_size_in(dirfd, name, st, AGC_SIZE_MAX_ENTRIES, gate ? charge_visit_cb : NULL,
				      gate ? &v : NULL, &b, &d, &mt);
	if (rc != 0)
		return rc;
	sz->bytes += b;
	sz->disk += d;
	if (mtime_ms && mt > *mtime_ms)
		*mtime_ms = mt;
	/* the artifact itself, as the gate adds it: anything but a link */
	if (gate && !S_ISLNK(st->st_mode))
		agc_ls_gate_file(s, g, st);
	return 0;
}

int agc_ls_charge_at(agc_ls_sink *s, size_t g, bool gate, int rootfd, const char *rel, agc_size *sz,
		     int64_t *mtime_ms)
{
	const char *slash = strrchr(rel, '/'), *leaf;
	struct stat st;
	int pfd, rc;

	if (!agc_walk_rel_ok(rel))
		return 0;
	if (!slash) {
		if (fstatat(rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		return agc_ls_charge(s, g, gate, rootfd, rel, &st, sz, mtime_ms) == 0 ? 1 : 0;
	}
	if ((rc = leaf_stat(rootfd, rel, &pfd, &leaf, &st)) <= 0)
		return rc;
	rc = agc_ls_charge(s, g, gate, pfd, leaf, &st, sz, mtime_ms);
	rc = rc == 0 ? 1 : rc == AGC_ENOTFOUND ? 0 : -1;
	close(pfd);
	return rc;
}

/* path (absolute) with `.`, `..`, empty components and a trailing slash resolved lexically,
 * without asking the file system (the dir may be gone). malloc'd, NULL out of memory. */
static char *path_normalise(const char *path)
{
	size_t n = strlen(path), o = 0;
	char *out = malloc(n + 2);
	const char *s = path, *e;

	if (!out) {
		agc_error_oom();
		return NULL;
	}
	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = s + strcspn(s, "/");
		if (e - s == 1 && s[0] == '.') {
			/* nothing */
		} else if (e - s == 2 && s[0] == '.' && s[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* the slash before it; "/.." is "/" */
		} else {
			out[o++] = '/';
			memcpy(out + o, s, (size_t)(e - s));
			o += (size_t)(e - s);
		}
		s = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

/* True when path is dir or below it, on a component boundary (/a/b: /a/b/c, never /a/bc). */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int select_init(ls_select *sel, const agc_ls_opts *o)
{
	char *abs = NULL, *real;

	memset(sel, 0, sizeof(*sel));
	if (!o->project)
		return 0;
	if (!*o->project)
		return agc_error_set(-1, "no project dir given");
	if (o->project[0] != '/') {
		char *cwd = getcwd(NULL, 0);

		if (!cwd)
			return agc_error_errno(-1, errno, "cannot resolve '%s'", o->project);
		abs = agc_strfmt("%s/%s", cwd, o->project);
		free(cwd);
	} else {
		abs = agc_strdup(o->project);
	}
	if (!abs)
		return -1;
	sel->dir[sel->n_dir] = path_normalise(abs);
	if (!sel->dir[sel->n_dir]) {
		free(abs);
		return -1;
	}
	sel->n_dir++;
	/* A dir reached through a link selects the sessions recorded under its real path too. */
	real = realpath(abs, NULL);
	if (real && strcmp(real, sel->dir[0]) != 0)
		sel->dir[sel->n_dir++] = real;
	else
		free(real);
	free(abs);
	return 0;
}

static void select_release(ls_select *sel)
{
	size_t i;

	for (i = 0; i < sel->n_dir; i++)
		free(sel->dir[i]);
	free(sel->last);
	memset(sel, 0, sizeof(*sel));
}

static bool under_any(const ls_select *sel, const char *path)
{
	size_t i;

	for (i = 0; i < sel->n_dir; i++)
		if (path_under(path, sel->dir[i]))
			return true;
	return false;
}

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Substring, ASCII letters in any case (other bytes, UTF-8 among them, compare exactly,
 * whatever the locale). */
static bool ci_contains(const char *hay, const char *needle)
{
	size_t i;

	if (!hay)
		return false;
	if (!*needle)
		return true;
	for (; *hay; hay++) {
		for (i = 0; needle[i] && ascii_lower((unsigned char)hay[i]) == ascii_lower((unsigned char)needle[i]); i++)
			;
		if (!needle[i])
			return true;
	}
	return false;
}

/* Whether a session passes --project, --project-gone and --grep. -1 out of memory. */
static int select_ok(ls_select *sel, const agc_ls_opts *o, const agc_session_info *in)
{
	const char *proj = in->project;

	if (o->grep && !ci_contains(in->title, o->grep) && !ci_contains(in->prompt, o->grep) &&
	    !ci_contains(proj, o->grep))
		return 0;
	if (!o->project && !o->project_gone)
		return 1;
	/* an unknown or relative project is neither below a dir nor gone */
	if (!proj || proj[0] != '/')
		return 0;
	if (!sel->last || strcmp(sel->last, proj) != 0) {
		char *norm = path_normalise(proj), *real;
		struct stat st;

		if (!norm)
			return -1;
		free(sel->last);
		sel->last = agc_strdup(proj);
		if (!sel->last) {
			free(norm);
			return -1;
		}
		sel->last_in = false;
		if (o->project) {
			sel->last_in = under_any(sel, norm);
			/* a project recorded through a link, selected by its real path */
			if (!sel->last_in && (real = realpath(norm, NULL))) {
				sel->last_in = under_any(sel, real);
				free(real);
			}
		}
		/* Gone only when the system says it is not there: a project that cannot be
		 * checked (EACCES, EIO...) is not gone, since prune deletes by this. */
		sel->last_gone = o->project_gone && stat(norm, &st) < 0 &&
				 (errno == ENOENT || errno == ENOTDIR);
		free(norm);
	}
	if (o->project && !sel->last_in)
		return 0;
	if (o->project_gone && !sel->last_gone)
		return 0;
	return 1;
}

static int cmp_rows(const void *a, const void *b, void *arg);

/* The row's strings (id, parent, title, prompt) live in one block that starts at its id. */
static void row_release(ls_row *r)
{
	free((char *)r->info.id);
}

/* Copy in's strings into one block for r. The first prompt is kept only for --grep (it is
 * matched before the row is kept, and nothing shows it): a listing keeps what it shows. */
static int row_strings(ls_row *r, const agc_session_info *in, bool prompt)
{
	size_t id = strlen(in->id) + 1, par = in->parent ? strlen(in->parent) + 1 : 0, ti = 0, pr = 0;
	bool ell;
	char *b, *o;

	/* one rule for every agent's titles (SPEC "Output", Titles) */
	if (in->title && *in->title)
		ti = title_len(in->title, &ell) + 4;
	if (prompt && in->prompt)
		pr = strlen(in->prompt) + 1;
	if (!(b = malloc(id + par + ti + pr)))
		return agc_error_oom();
	o = b;
	memcpy(o, in->id, id);
	r->info.id = o;
	o += id;
	r->info.parent = NULL;
	if (par) {
		memcpy(o, in->parent, par);
		r->info.parent = o;
		o += par;
	}
	r->info.title = NULL;
	if (ti) {
		r->info.title = o;
		o += title_copy(o, in->title);
	}
	r->info.prompt = NULL;
	if (pr) {
		memcpy(o, in->prompt, pr);
		r->info.prompt = o;
	}
	return 0;
}

/* The heap of kept rows (c->keep): each row comes after its children in the listing's order, so
 * the root is the last row kept. */
static void heap_down(ls_collect *c, size_t i)
{
	ls_row *v = c->rows.v, t;
	size_t n = c->rows.n;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && cmp_rows(&v[l], &v[m], (void *)&c->opts->sort) > 0)
			m = l;
		if (l + 1 < n && cmp_rows(&v[l + 1], &v[m], (void *)&c->opts->sort) > 0)
			m = l + 1;
		if (m == i)
			return;
		t = v[i];
		v[i] = v[m];
		v[m] = t;
		i = m;
	}
}

static void heap_up(ls_collect *c, size_t i)
{
	ls_row *v = c->rows.v, t;

	while (i > 0 && cmp_rows(&v[(i - 1) / 2], &v[i], (void *)&c->opts->sort) < 0) {
		t = v[i];
		v[i] = v[(i - 1) / 2];
		v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static int ls_add(agc_ls_sink *s, const agc_session_info *in, size_t gate)
{
	ls_collect *c = (ls_collect *)s;
	const agc_ls_opts *o = c->opts;
	ls_row *r, cand;
	const char *project;
	int ok;

	/* a child whose parent is gone has no root left to stand for it: it is one */
	if (in->parent && !in->parent_gone && !o->children)
		return 0;
	if (in->orphan && !o->orphans)
		return 0;
	if ((ok = select_ok(&c->sel, o, in)) <= 0)
		return ok;
	if (o->older_than_ms > 0 && in->updated_ms > c->now_ms - o->older_than_ms)
		return 0;
	if (o->newer_than_ms > 0 && in->updated_ms < c->now_ms - o->newer_than_ms)
		return 0;
	/* the pool's copy first: nothing below may fail after a slot is chosen but the strings */
	project = in->project ? agc_strpool_add(&c->projects, in->project) : NULL;
	if (in->project && !project)
		return -1;
	if (c->keep && c->rows.n >= c->keep) {
		/* full: a row after the last kept one is not shown, else it takes that one's place */
		cand.info = *in;
		cand.gate = gate;
		if (cmp_rows(&cand, &c->rows.v[0], (void *)&o->sort) >= 0)
			return 0;
		row_release(&c->rows.v[0]);
		r = &c->rows.v[0];
	} else {
		r = AGC_ARRAY_PUSH(&c->rows, (size_t)1 << 26);
		if (!r)
			return -1;
	}
	r->info = *in;
	r->gate = gate;
	if (row_strings(r, in, o->grep != NULL) < 0) {
		/* no row without its strings: the slot goes (the heap's root takes the last row) */
		if (c->keep && r == &c->rows.v[0] && c->rows.n > 1) {
			c->rows.v[0] = c->rows.v[--c->rows.n];
			heap_down(c, 0);
		} else if (r == &c->rows.v[c->rows.n - 1]) {
			c->rows.n--;
		}
		return -1;
	}
	r->info.project = project;
	if (c->keep) {
		if (r == &c->rows.v[0])
			heap_down(c, 0);
		else
			heap_up(c, c->rows.n - 1);
	}
	return 0;
}

/* The ids of the sessions not known to be held yet, in argv and environment (each with its
 * agent's variables): one scan after the walk. A process table that cannot be read leaves
 * every session live: none can be shown free. */
static void ls_gate_ids(agc_ctx *ctx, ls_gate *G)
{
	const char **ids = NULL;
	const char *const **env = NULL;
	size_t *sess = NULL, i, n = G->idoff.n;
	agc_holders h = {0};
	agc_gate_query q;

	if (!n)
		return;
	ids = calloc(n, sizeof(*ids));
	env = calloc(n, sizeof(*env));
	sess = calloc(n, sizeof(*sess));
	if (!ids || !env || !sess)
		goto unreadable;
	for (i = 0; i < n; i++) {
		ids[i] = G->idtext.v + G->idoff.v[i];
		sess[i] = G->ident.v[i];
		env[i] = (const char *const *)agc_adapter_table[G->ents.v[sess[i]].agent]->env_names;
	}
	memset(&q, 0, sizeof(q));
	q.procroot = ctx->procroot;
	q.ids = ids;
	q.n_ids = n;
	q.id_session = sess;
	q.id_env_names = env;
	q.every_session = true;
	if (agc_holders_scan(&q, &h) < 0)
		goto unreadable;
	for (i = 0; i < h.n; i++)
		if (h.v[i].session < G->ents.n) {
			G->ents.v[h.v[i].session].live = true;
			held_add(G, h.v[i].session, h.v[i].pid, h.v[i].why, false);
		}
	goto out;
unreadable:
	for (i = 0; i < G->ents.n; i++) {
		G->ents.v[i].live = true;
		held_add(G, i, 0, AGC_WHY_UNREADABLE, false);
	}
out:
	agc_holders_release(&h);
	free(ids);
	free(env);
	free(sess);
}

/* A session is held when one of its descendants is: the gate of a purge covers them all. */
static void ls_gate_up(ls_gate *G)
{
	size_t i, k, up;

	for (i = 0; i < G->ents.n; i++) {
		if (!G->ents.v[i].live)
			continue;
		/* bounded: a cycle of parents ends */
		for (up = G->ents.v[i].parent, k = 0; up < G->ents.n && k < G->ents.n;
		     up = G->ents.v[up].parent, k++)
			G->ents.v[up].live = true;
	}
}

static void ls_warn(agc_ls_sink *s, const char *msg)
{
	ls_collect *c = (ls_collect *)s;

	if (c->opts->warn)
		c->opts->warn(msg, c->opts->warn_ud);
}

/* Roots that exist but cannot be read are said, never skipped silently (R2). */
static void warn_roots(ls_collect *c, const agc_rootset *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		const agc_root *r = &rs->v[i];
		char *msg;

		if (!r->exists || !r->err)
			continue;
		msg = agc_strfmt("cannot read '%s': %s", r->real ? r->real : r->path, strerror(r->err));
		if (msg)
			ls_warn(&c->sink, msg);
		free(msg);
	}
}

static int cmp_rows(const void *a, const void *b, void *arg)
{
	agc_sort sort_key = *(const agc_sort *)arg;
	const agc_session_info *x = &((const ls_row *)a)->info, *y = &((const ls_row *)b)->info;
	int c;

	switch (sort_key) {
	case AGC_SORT_CREATED:
		if (x->created_ms != y->created_ms)
			return x->created_ms > y->created_ms ? -1 : 1;
		break;
	case AGC_SORT_SIZE:
		if (x->bytes != y->bytes)
			return x->bytes > y->bytes ? -1 : 1;
		break;
	default:
		break;
	}
	if (x->updated_ms != y->updated_ms)
		return x->updated_ms > y->updated_ms ? -1 : 1;
	c = strcmp(x->agent, y->agent);
	return c ? c : strcmp(x->id, y->id);
}

static int cmp_ident(const void *a, const void *b, void *arg)
{
	const ls_row *rows = arg;
	const agc_session_info *x = &rows[*(const size_t *)a].info, *y = &rows[*(const size_t *)b].info;
	int c = strcmp(x->agent, y->agent);

	return c ? c : strcmp(x->id, y->id);
}

/* The rows (already sorted) in an order where every child follows its parent, depth first,
 * siblings in their sorted order; a row whose parent is not listed (or a cycle) stands on its
 * own. Returns a malloc'd index array of n entries, or NULL (then the sorted order is used). */
static size_t *group_under_parents(const ls_row *rows, size_t n)
{
	size_t *byid = malloc(n * sizeof(*byid)), *parent = malloc(n * sizeof(*parent));
	size_t *first = malloc(n * sizeof(*first)), *next = malloc(n * sizeof(*next));
	size_t *stack = malloc(n * sizeof(*stack)), *order = malloc(n * sizeof(*order));
	bool *done = calloc(n ? n : 1, sizeof(*done));
	size_t i, o = 0, sp;
	const size_t none = (size_t)-1;

	if (!byid || !parent || !first || !next || !stack || !order || !done) {
		free(order);
		order = NULL;
		goto out;
	}
	for (i = 0; i < n; i++)
		byid[i] = i;
	qsort_r(byid, n, sizeof(*byid), cmp_ident, (void *)rows);
	for (i = 0; i < n; i++) {
		size_t lo = 0, hi = n;

		parent[i] = none;
		first[i] = next[i] = none;
		if (!rows[i].info.parent)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const agc_session_info *m = &rows[byid[mid]].info;
			int c = strcmp(m->agent, rows[i].info.agent);

			if (!c)
				c = strcmp(m->id, rows[i].info.parent);
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && strcmp(rows[byid[lo]].info.agent, rows[i].info.agent) == 0 &&
		    strcmp(rows[byid[lo]].info.id, rows[i].info.parent) == 0 && byid[lo] != i)
			parent[i] = byid[lo];
	}
	/* children lists in sorted order: build from the back */
	for (i = n; i-- > 0;)
		if (parent[i] != none) {
			next[i] = first[parent[i]];
			first[parent[i]] = i;
		}
	for (i = 0; i < n; i++) {
		size_t start = parent[i] == none ? i : none;

		if (start == none)
			continue;
		sp = 0;
		stack[sp++] = start;
		while (sp) {
			size_t k = stack[--sp], ch, cnt = 0, j;

			if (done[k])
				continue;
			done[k] = true;
			order[o++] = k;
			/* push children so that the first pops first (each row has one parent, so
			 * the stack never holds more than n) */
			for (ch = first[k]; ch != none; ch = next[ch])
				cnt++;
			if (sp + cnt > n)
				cnt = n - sp;
			j = sp + cnt;
			for (ch = first[k]; ch != none && j > sp; ch = next[ch])
				stack[--j] = ch;
			sp += cnt;
		}
	}
	/* rows caught in a parent cycle: on their own, in sorted order */
	for (i = 0; i < n; i++)
		if (!done[i])
			order[o++] = i;
out:
	free(byid);
	free(parent);
	free(first);
	free(next);
	free(stack);
	free(done);
	return order;
}

/* ps: each held entry of the gate told as its root session's (the one a purge or a stop is
 * given: a child's holder holds its root too), after the gate's answers are complete. */
static int ls_tell_held(ls_collect *c, int (*hcb)(const agc_held *h, void *ud), void *hud)
{
	ls_gate *G = &c->gate;
	size_t *rootrow = NULL, i, k, up;
	int rc = 0;

	if (!G->ents.n)
		return 0;
	if (!(rootrow = malloc(G->ents.n * sizeof(*rootrow))))
		return agc_error_oom();
	for (i = 0; i < G->ents.n; i++)
		rootrow[i] = (size_t)-1;
	for (i = 0; i < c->rows.n; i++) {
		const ls_row *r = &c->rows.v[i];

		if (r->gate < G->ents.n && (!r->info.parent || r->info.parent_gone) &&
		    rootrow[r->gate] == (size_t)-1)
			rootrow[r->gate] = i;
	}
	for (i = 0; rc == 0 && i < G->held.n; i++) {
		const agc_held_ent *e = &G->held.v[i];
		agc_held h;

		/* bounded: a cycle of parents ends */
		for (up = e->g, k = 0; G->ents.v[up].parent < G->ents.n && k < G->ents.n; k++)
			up = G->ents.v[up].parent;
		if (rootrow[up] == (size_t)-1)
			continue;
		h.agent = c->rows.v[rootrow[up]].info.agent;
		h.id = c->rows.v[rootrow[up]].info.id;
		h.pid = e->pid;
		h.why = e->why;
		h.serves = e->serves;
		rc = hcb(&h, hud);
	}
	free(rootrow);
	return rc < 0 ? -1 : 0;
}

static int ls_run(agc_ctx *ctx, const agc_ls_opts *opts, int (*cb)(const agc_session_info *s, void *ud),
		  void *ud, int (*hcb)(const agc_held *h, void *ud), void *hud)
{
	char failed[2048];
	ls_collect c;
	agc_ls_opts def;
	size_t a, i, n;
	int rc = 0;

	memset(&def, 0, sizeof(def));
	def.version = AGC_LS_OPTS_VERSION;
	if (!opts)
		opts = &def;
	/* a struct of a layout this library does not know is never read (agentgc.h) */
	if (opts->version != AGC_LS_OPTS_VERSION)
		return agc_error_set(-1, "agc_ls_opts version %u is not one this library knows (%u): "
				     "set the struct up with AGC_LS_OPTS_INIT", opts->version,
				     (unsigned)AGC_LS_OPTS_VERSION);
	/* a bit no agent has is a caller's mistake, not an empty selection; an agent that is
	 * not built in selects nothing (agentgc.h AGC_AGENT_*) */
	if (opts->agents & ~agc_agent_bits_known())
		return agc_error_set(-1, "agc_ls_opts.agents 0x%x holds bits that name no agent (0x%x)",
				     opts->agents, opts->agents & ~agc_agent_bits_known());
	memset(&c, 0, sizeof(c));
	c.sink.add = ls_add;
	c.sink.warn = ls_warn;
	c.sink.gate_new = gate_new;
	c.sink.gate_id = gate_id;
	c.sink.gate_file = gate_file;
	c.sink.gate_agent_cwd = gate_agent_cwd;
	c.sink.gate_live = gate_live;
	c.sink.gate_held = gate_held;
	c.gate.want_held = hcb != NULL;
	c.sink.gate_parent = gate_parent;
	c.opts = opts;
	c.ctx = ctx;
	c.now_ms = ctx->now_ms;
	/* with children, every row is needed to place each child under its parent */
	c.keep = opts->children ? 0 : opts->limit;
	if (select_init(&c.sel, opts) < 0)
		return -1;
	for (a = 0; agc_adapter_table[a]; a++) {
		const agc_rootset *rs;

		if (opts->agents && !(opts->agents & agc_adapter_table[a]->bit))
			continue;
		rs = agc_ctx_roots(ctx, a);
		if (rs)
			warn_roots(&c, rs);
		if (!rs || agc_adapter_table[a]->list(ctx, rs, opts, &c.sink) < 0)
			rc = -1;
	}
	/* R5: live is the gate's answer, from one snapshot for every session's files and one
	 * scan for their ids; a session is held when one of its descendants is. The scan skips
	 * processes that went away or are not ours to read, and each skip sets the last error:
	 * the message of a listing that failed is the one the caller must see (R2, R8). */
	if (rc < 0)
		snprintf(failed, sizeof(failed), "%s", agc_error_last());
	ls_gate_ids(ctx, &c.gate);
	if (rc < 0)
		agc_error_set(-1, "%s", failed);
	ls_gate_up(&c.gate);
	for (i = 0; i < c.rows.n; i++)
		if (c.rows.v[i].gate < c.gate.ents.n)
			c.rows.v[i].info.live = c.gate.ents.v[c.rows.v[i].gate].live;
	if (hcb && ls_tell_held(&c, hcb, hud) < 0)
		rc = -1;
	ls_gate_release(&c.gate);
	if (c.rows.n > 1)
		qsort_r(c.rows.v, c.rows.n, sizeof(*c.rows.v), cmp_rows, (void *)&opts->sort);
	n = opts->limit && opts->limit < c.rows.n ? opts->limit : c.rows.n;
	{
		/* with children, each is shown under its parent, in the same order */
		size_t *order = opts->children ? group_under_parents(c.rows.v, c.rows.n) : NULL;

		for (i = 0; i < n; i++)
			if (cb(&c.rows.v[order ? order[i] : i].info, ud))
				break;
		free(order);
	}
	for (i = 0; i < c.rows.n; i++)
		row_release(&c.rows.v[i]);
	free(c.rows.v);
	agc_strpool_release(&c.projects);
	select_release(&c.sel);
	return rc;
}

int agc_ls(agc_ctx *ctx, const agc_ls_opts *opts, int (*cb)(const agc_session_info *s, void *ud),
	   void *ud)
{
	return ls_run(ctx, opts, cb, ud, NULL, NULL);
}

static int held_row_cb(const agc_session_info *s, void *ud)
{
	(void)s;
	(void)ud;
	return 0;
}

int agc_ls_held(agc_ctx *ctx, unsigned agents, int (*cb)(const agc_held *h, void *ud), void *ud,
		void (*warn)(const char *msg, void *ud))
{
	agc_ls_opts o;

	memset(&o, 0, sizeof(o));
	o.version = AGC_LS_OPTS_VERSION;
	o.agents = agents;
	/* every session, children and orphans too: each held entry is told as its root's */
	o.children = 1;
	o.orphans = 1;
	o.warn = warn;
	o.warn_ud = ud;
	return ls_run(ctx, &o, held_row_cb, NULL, cb, ud);
}
