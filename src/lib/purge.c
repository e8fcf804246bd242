/* The engine shared by every agent: discover, gate, remove, residual (SPEC R5-R7). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "core.h"
#include "db.h"
#include "error.h"
#include "holders.h"
#include "hset.h"
#include "json.h"
#include "lines.h"
#include "pending.h"
#include "proc-ps.h"
#include "remove.h"
#include "report.h"
#include "scan.h"
#include "session.h"

typedef enum mode {
	MODE_PURGE,
	MODE_DRY_RUN,
	MODE_SHOW,
	MODE_IN_USE,
} mode;

static const char *kind_name(char k)
{
	switch (k) {
	case 'd':
		return "dir";
	default:
		return "file";
	}
}

/* A reason word for a removal that did not happen. */
static char *reason_of(agc_walk_status st, int err)
{
	switch (st) {
	case AGC_WALK_SYMLINK:
		return agc_strdup("symlink");
	case AGC_WALK_PERM:
		return agc_strdup("permission");
	case AGC_WALK_XDEV:
		return agc_strdup("error: other file system");
	case AGC_WALK_MOUNT:
		/* R3: a mount point inside the artifact, or the artifact itself, left there. */
		return agc_strdup("mount");
	case AGC_WALK_DEEP:
		return agc_strfmt("error: directory tree deeper than %d levels", AGC_RM_MAX_DEPTH);
	case AGC_WALK_CHANGED:
		return agc_strdup("error: changed since discovery");
	case AGC_WALK_NOTDIR:
		return agc_strdup("error: not a directory on the way");
	default:
		return agc_strfmt("error: %s", err ? strerror(err) : "cannot remove");
	}
}

/* A walk that stopped at what no rerun changes: a mount point, another file system, a tree
 * too deep (R3, R8). */
static bool walk_stays(agc_walk_status st)
{
	return st == AGC_WALK_MOUNT || st == AGC_WALK_XDEV || st == AGC_WALK_DEEP;
}

typedef enum discover_mode {
	DISCOVER_ALL,    /* everything, for show and a dry run */
	DISCOVER_PURGE,  /* everything, rows counted but not sized: the deletes size them */
	DISCOVER_GATE,   /* only what the gate needs (in-use) */
	DISCOVER_AGAIN,  /* after a purge, for its residual (R7) */
	DISCOVER_KEEP,   /* what the gate needs, for a keep list (agc_keep_closure) */
	DISCOVER_HOLDERS, /* only the holders discovery finds (a registry): the re-check */
} discover_mode;

static void wal_residue(agc_plan *p);

/* The ids purged before the next one in a run of many (agc_plan.going). */
typedef struct going_ids {
	struct { char **v; size_t n, cap; } ids;
	agc_hset lc;      /* the same, lower-cased */
	size_t hexlen;    /* agc_plan.going_hexlen */
	bool odd;         /* one is not of hex digits and dashes, or not of the others' length */
} going_ids;

static void going_release(going_ids *g)
{
	size_t i;

	for (i = 0; i < g->ids.n; i++)
		free(g->ids.v[i]);
	free(g->ids.v);
	agc_hset_release(&g->lc);
	memset(g, 0, sizeof(*g));
}

static int going_add(going_ids *g, const char *id)
{
	char **s = AGC_ARRAY_PUSH(&g->ids, AGC_PLAN_MAX_ITEMS);
	char lc[AGC_ID_MAX];
	size_t n = strlen(id), i;

	if (!s || !(*s = agc_strdup(id)))
		return agc_error_oom();
	if (n >= sizeof(lc)) {
		g->odd = true;
		return 0;
	}
	for (i = 0; i < n; i++) {
		lc[i] = (char)tolower((unsigned char)id[i]);
		if (!isxdigit((unsigned char)id[i]) && id[i] != '-')
			g->odd = true;
	}
	if (g->ids.n > 1 && n != g->hexlen)
		g->odd = true;
	g->hexlen = n;
	return agc_hset_add(&g->lc, lc, n);
}

/* going: the ids purged before this one in a run of many (agc_plan.going), or NULL. */
static int discover_in(agc_ctx *ctx, size_t agent, const char *canon, agc_plan *p, discover_mode m,
		       const going_ids *going, void *run, unsigned flags)
{
	const agc_rootset *rs = agc_ctx_roots(ctx, agent);
	unsigned long short0 = agc_short_count();
	size_t i;
	int rc;

	agc_plan_init(p, agc_adapter_table[agent], ctx, rs, canon);
	if (going) {
		p->going = going->ids.v;
		p->n_going = going->ids.n;
		p->going_lc = &going->lc;
		p->going_hexlen = going->odd ? 0 : going->hexlen;
	}
	/* a prune with a keep list: descendants a kept id reaches stay (agc_adapter.spares_kept);
	 * the keep closure itself is found with every relation followed */
	if (p->ad->spares_kept && m != DISCOVER_KEEP) {
		p->spare = ctx->spare;
		p->n_spare = ctx->n_spare;
	}
	p->run = run;
	p->flags = flags;
	p->gate_only = m == DISCOVER_GATE || m == DISCOVER_KEEP || m == DISCOVER_HOLDERS;
	p->holders_only = m == DISCOVER_HOLDERS;
	p->keep = m == DISCOVER_KEEP;
	p->again = m == DISCOVER_AGAIN;
	p->rows_unsized = m == DISCOVER_PURGE;
	if (!rs)
		return -1;
	if (agc_plan_add_id(p, canon) < 0)
		return -1;
	if (m == DISCOVER_HOLDERS && !p->ad->registry)
		return 0;
	/* Every root is opened up front, whether or not the adapter reaches it: one that exists
	 * but cannot be read is noted as residual, never skipped silently (R2). */
	if (m != DISCOVER_AGAIN)
		for (i = 0; i < p->roots->n; i++)
			agc_plan_rootfd(p, i);
	rc = agc_adapter_table[agent]->discover(p);
	/* what a shortage of descriptors or memory hid may be the very file a live process
	 * holds: nothing of the session is taken for absent, and nothing of it is touched; a
	 * discovery that failed for want of them says so (a database that could not be opened) */
	if (agc_short_count() != short0)
		return agc_error_set(-1, "ran out of open files or memory while looking for the session's files "
				     "(nothing of it was changed; raise 'ulimit -n' and run again)");
	if (rc < 0)
		return -1;
	if (m == DISCOVER_ALL || m == DISCOVER_PURGE)
		wal_residue(p);
	return 0;
}

/* A database an earlier purge of one of the plan's ids could not checkpoint (pending.h): its
 * WAL is finished by this purge (R6: a rerun finishes), whatever else is left of the session. */
static void wal_residue(agc_plan *p)
{
	size_t d;

	for (d = 0; d < p->dbs.n; d++) {
		agc_dbref *db = &p->dbs.v[d];
		char *abs, *wal;
		struct stat st;

		db->wal_residue = agc_pending_has(db->dev, db->ino, p->ids.v, p->ids.n);
		if (!db->wal_residue)
			continue;
		abs = agc_plan_abspath(p->roots, db->root, db->rel);
		wal = abs ? agc_strfmt("%s-wal", abs) : NULL;
		db->wal_bytes = wal && lstat(wal, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
		free(wal);
		free(abs);
	}
}

static int discover(agc_ctx *ctx, size_t agent, const char *canon, agc_plan *p, discover_mode m)
{
	return discover_in(ctx, agent, canon, p, m, NULL, NULL, 0);
}

static void fill_session(agc_report *r, const agc_plan *p)
{
	agc_size sz;
	int64_t updated = p->meta.updated_ms;
	size_t i;

	for (i = 0; i < p->arts.n; i++)
		if (p->arts.v[i].mtime_ms > updated)
			updated = p->arts.v[i].mtime_ms;
	/* SPEC "Sizes": the figure ls gives, from what the report lists */
	agc_plan_size(p, &sz);
	r->has_session = true;
	r->session.agent = p->ad->name;
	r->session.id = agc_strdup(p->id);
	r->session.parent = p->meta.parent ? agc_strdup(p->meta.parent) : NULL;
	r->session.project = p->meta.project ? agc_strdup(p->meta.project) : NULL;
	r->session.title = agc_title_cut(p->meta.title);
	r->session.layout = p->meta.layout ? agc_strdup(p->meta.layout) : NULL;
	r->session.created_ms = p->meta.created_ms;
	r->session.updated_ms = updated;
	r->session.bytes = sz.bytes;
	r->session.disk = sz.disk;
	r->session.live = p->meta.live || p->holders.n > 0;
}

static bool exempt_cb(const char *argv, size_t len, void *ud)
{
	const agc_adapter *ad = ud;

	return ad->exempt && ad->exempt(argv, len, NULL);
}

static bool accounted_cb(pid_t pid, void *ud)
{
	const agc_plan *p = ud;

	return p->ad->accounted && p->ad->accounted(p, pid);
}

typedef struct gate_files {
	agc_gate_file *v;
	size_t n, cap;
	const char *label;
	size_t visited;
	bool full;
	bool short_;    /* a shortage of descriptors or memory hid some of them (agc_short_note) */
} gate_files;

static void gate_add(gate_files *g, dev_t dev, ino_t ino, const char *label)
{
	agc_gate_file *f;

	if (g->full)
		return;
	f = AGC_ARRAY_PUSH(g, AGC_GATE_MAX_FILES);
	if (!f) {
		g->full = true;
		return;
	}
	memset(f, 0, sizeof(*f));
	f->id.dev = dev;
	f->id.ino = ino;
	f->label = label;
}

/* Every regular file inside a dir artifact counts: a tool's output file held by a running
 * command belongs to the session as much as the transcript does. So does every dir inside
 * one (R5): Claude keeps a dir fd on T/claude-<uid>/<K>/<S>/tasks, and a process whose cwd is
 * in there runs inside the session. */
static void gate_visit(const struct stat *st, void *ud)
{
	gate_files *g = ud;

	/* Past the bound the walk stops: what it did not see cannot be shown free. */
	if (++g->visited >= AGC_GATE_MAX_FILES)
		g->full = true;
	if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))
		gate_add(g, st->st_dev, st->st_ino, g->label);
}

/* The in-use gate (R5) for the session and every child: registry holders found by discovery,
 * then one pass over the process table. Returns true when in use; holders go to the report. */
/* What the gate matches open files and current directories against: every artifact, every
 * file and dir inside a dir artifact, and the shared databases watched (R5). */
static void gate_collect(agc_plan *p, gate_files *g0)
{
	gate_files g = *g0;
	unsigned long short0 = agc_short_count();
	size_t i;

	for (i = 0; i < p->arts.n; i++) {
		const agc_artifact *a = &p->arts.v[i];
		int rootfd;

		if ((a->flags & AGC_ART_NO_GATE) || a->kind == 'l')
			continue;
		gate_add(&g, a->dev, a->ino, a->rel);
		rootfd = agc_plan_rootfd(p, a->root);
		if (a->kind == 'd' && rootfd >= 0) {
			uint64_t b;
			int64_t mt;

			g.label = a->rel;
			if (!a->behind_link) {
				agc_scan_measure(rootfd, a->rel, AGC_GATE_MAX_FILES, gate_visit, &g, &b, NULL, &mt);
			} else {
				/* Behind a link nothing is removed, yet a process writing there still
				 * runs the session: look through the link, read-only. */
				const char *slash = strrchr(a->rel, '/');
				char *parent = slash ? agc_strndup(a->rel, (size_t)(slash - a->rel)) : NULL;
				int pfd = parent ? openat(rootfd, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

				if (pfd >= 0) {
					agc_scan_size_in(pfd, slash + 1, NULL, AGC_GATE_MAX_FILES, gate_visit, &g, &b,
							 NULL, &mt);
					close(pfd);
				}
				free(parent);
			}
		}
	}
	/* Shared databases are watched, never removed: a process holding one holds every
	 * session in it. */
	for (i = 0; i < p->watch.n; i++)
		gate_add(&g, p->watch.v[i].dev, p->watch.v[i].ino, p->watch.v[i].label);
	if (agc_short_count() != short0)
		g.short_ = true;
	*g0 = g;
}

#define GATE_SHORT "ran out of open files or memory while listing the session's files to check for holders"


/* The holder a report gets for a path the scan matched (file index f of g), or what. */
static void add_scan_holder(agc_plan *p, agc_report *r, const gate_files *g, const agc_holder *h)
{
	char *abs = NULL;

	if ((h->why == AGC_WHY_OPEN_FILE || h->why == AGC_WHY_CWD) && h->file < g->n) {
		size_t j;

		for (j = 0; j < p->arts.n && !abs; j++)
			if (p->arts.v[j].rel == g->v[h->file].label)
				abs = agc_plan_abspath(p->roots, p->arts.v[j].root, p->arts.v[j].rel);
	}
	agc_report_add_holder(r, h->pid, h->command, agc_why_name(h->why), abs ? abs : h->what);
	free(abs);
}

typedef struct lock_ud {
	const agc_plan *p;
	agc_report *r;
	const char *abs;
	size_t n;
} lock_ud;

static void lock_holder(pid_t pid, void *ud)
{
	lock_ud *u = ud;
	char *cmd = pid > 0 ? agc_holder_command_of(u->p->ctx->procroot, pid) : NULL;

	agc_report_add_holder(u->r, pid, cmd ? cmd : "a process outside this pid namespace", "lock", u->abs);
	free(cmd);
	u->n++;
}

/* R5: whoever holds a writer lock of the session (agc_plan_lock) holds the session, also a
 * process whose fds agentgc cannot read. The kernel's lock table says so without taking any
 * lock; where it cannot tell (no table, a pid namespace that is not the initial one, whose
 * table leaves out other namespaces' locks, the inode shown on another device: btrfs,
 * overlayfs), a probe under the agent's coordination lock asks, which never makes the agent
 * fail to take its own lock (it takes it only under that lock). Returns the holders added. */
static size_t gate_locks(agc_plan *p, agc_report *r)
{
	size_t i, before = r->holders.n;
	bool complete = p->locks.n && agc_flocks_complete(p->ctx->procroot);

	for (i = 0; i < p->locks.n; i++) {
		const agc_plan_lock *l = &p->locks.v[i];
		int rootfd = agc_plan_rootfd(p, l->root), rc, dfd, err;
		char *abs = agc_plan_abspath(p->roots, l->root, l->rel);
		lock_ud u = {p, r, abs ? abs : l->rel, 0};
		const char *leaf;
		struct stat st;
		bool differs = false;

		if (rootfd < 0) {
			free(abs);
			continue; /* the root is noted as unreadable, and so held (R2) */
		}
		/* whatever is there now, through a link too (a look changes nothing) */
		if (fstatat(rootfd, l->rel, &st, 0) < 0) {
			if (errno != ENOENT)
				agc_report_add_holder(r, 0, "cannot inspect the lock", "lock", u.abs);
			free(abs);
			continue;
		}
		rc = agc_flocks_of(p->ctx->procroot, st.st_dev, st.st_ino, lock_holder, &u, &differs);
		if (rc < 0)
			agc_report_add_holder(r, 0, agc_error_last(), "lock", u.abs);
		/* (not for a lock that is no regular file: the purge is refused already, and the
		 * probe opens only a regular file) */
		if (rc >= 0 && !u.n && !l->bad && (rc == 0 || differs || !complete)) {
			if (agc_walk_parent(rootfd, l->rel, &dfd, &leaf, &err) != AGC_WALK_OK) {
				agc_report_add_holder(r, 0, "cannot reach the lock", "lock", u.abs);
			} else {
				int prc = agc_sesslock_probe(dfd, l->coord, leaf);

				if (prc == 1)
					agc_report_add_holder(r, 0, "a process (the lock is held)", "lock", u.abs);
				else if (prc < 0 && prc != AGC_ENOTFOUND)
					agc_report_add_holder(r, 0, agc_error_last(), "lock", u.abs);
				close(dfd);
			}
		}
		free(abs);
	}
	return r->holders.n - before;
}

/* The dir of a lock, rel's parent beneath rootfd, made when missing as the agent makes it
 * (one level, owned as its parent): a dir fd and the leaf, or -1 (error set). */
static int lock_dir(int rootfd, const char *rel, const char **leaf)
{
	int dfd, err;
	agc_walk_status ws = agc_walk_parent(rootfd, rel, &dfd, leaf, &err);

	if (ws == AGC_WALK_ENOENT) {
		const char *slash = strrchr(rel, '/');
		char dir[512];
		struct stat pst;

		if (!slash || (size_t)(slash - rel) >= sizeof(dir))
			return agc_error_set(-1, "cannot reach '%s'", rel);
		memcpy(dir, rel, (size_t)(slash - rel));
		dir[slash - rel] = '\0';
		if (mkdirat(rootfd, dir, 0755) < 0 && errno != EEXIST)
			return agc_error_errno(-1, errno, "cannot make '%s'", dir);
		if (geteuid() == 0 && fstat(rootfd, &pst) == 0)
			(void)fchownat(rootfd, dir, pst.st_uid, pst.st_gid, AT_SYMLINK_NOFOLLOW);
		ws = agc_walk_parent(rootfd, rel, &dfd, leaf, &err);
	}
	if (ws != AGC_WALK_OK)
		return agc_error_set(-1, "cannot reach '%s': %s", rel, agc_walk_status_name(ws));
	return dfd;
}

/* Take every writer lock of the plan, after the gate, to hold to the end (agc_plan_lock); a
 * lock file that is not there is made, as the agent makes it, so that the agent cannot take
 * the session back meanwhile. One another process took since the gate is a holder with why
 * "lock"; one that cannot be taken at all is an error: false either way, the locks taken let
 * go (those made here removed), nothing else changed. */
static bool take_locks(agc_plan *p, agc_report *r)
{
	size_t i;

	for (i = 0; i < p->locks.n; i++) {
		agc_plan_lock *l = &p->locks.v[i];
		int rootfd = agc_plan_rootfd(p, l->root), rc = -1;
		const char *leaf = NULL;
		char *abs;

		l->dfd = rootfd < 0 ? -1 : lock_dir(rootfd, l->rel, &leaf);
		if (rootfd < 0)
			agc_error_set(-1, "cannot open the root of '%s'", l->rel);
		if (l->dfd >= 0) {
			rc = agc_sesslock_take(l->dfd, l->coord, leaf, true, &l->fd, &l->created);
			/* the file locked must be the one discovery saw and the gate asked about */
			if (rc == 0 && !l->absent) {
				struct stat st;

				if (fstat(l->fd, &st) < 0 || st.st_dev != l->dev || st.st_ino != l->ino) {
					agc_sesslock_release(l->dfd, l->coord, leaf, l->fd, false);
					l->fd = -1;
					rc = agc_error_set(AGC_EINUSE, "'%s' was replaced since discovery", leaf);
				}
			}
			if (rc == 0)
				continue;
		}
		abs = agc_plan_abspath(p->roots, l->root, l->rel);
		if (rc == AGC_EINUSE) {
			struct stat st;
			lock_ud u = {p, r, abs ? abs : l->rel, 0};
			bool differs;

			if (l->dfd >= 0 && fstatat(l->dfd, leaf, &st, 0) == 0)
				agc_flocks_of(p->ctx->procroot, st.st_dev, st.st_ino, lock_holder, &u, &differs);
			if (!u.n)
				agc_report_add_holder(r, 0, agc_error_last(), "lock", u.abs);
			r->status = AGC_ST_IN_USE;
		} else {
			char msg[1024];

			snprintf(msg, sizeof(msg), "cannot take the writer lock '%s': %s", abs ? abs : l->rel, agc_error_last());
			agc_report_set_error(r, msg);
		}
		free(abs);
		for (i = 0; i < p->locks.n; i++) {
			l = &p->locks.v[i];
			if (l->fd >= 0)
				agc_sesslock_release(l->dfd, l->coord, agc_plan_lock_leaf(l), l->fd, l->created);
			l->fd = -1;
		}
		return false;
	}
	return true;
}

/* SPEC "Relations": a surviving fork reads this session's history: refused with reason
 * "fork", every fork named, nothing changed, unless AGC_PURGE_WITH_FORKS took them along. */
static bool refuse_forks(agc_plan *p, agc_report *r, bool dry)
{
	size_t i;

	if (!p->forks.n)
		return false;
	for (i = 0; i < p->forks.n; i++)
		agc_report_add_str(r, 1, p->forks.v[i]);
	/* everything stays, each artifact named with reason fork */
	for (i = 0; i < p->arts.n; i++) {
		const agc_artifact *a = &p->arts.v[i];
		char *abs = agc_plan_abspath(p->roots, a->root, a->rel);

		agc_report_add_item(r, true, kind_name(a->kind), abs ? abs : a->rel, NULL, "fork", a->session, 1,
				    a->bytes, a->mtime_ms);
		free(abs);
	}
	for (i = 0; i < p->rows.n; i++) {
		const agc_rowset *rs = &p->rows.v[i];
		char *abs;

		if (!rs->count)
			continue;
		abs = agc_plan_abspath(p->roots, p->dbs.v[rs->db].root, p->dbs.v[rs->db].rel);
		agc_report_add_item(r, true, "rows", abs ? abs : "", rs->table, "fork", p->id, rs->count, rs->bytes, 0);
		free(abs);
	}
	/* a dry run says what the purge would do: nothing would go, exit 4 */
	r->status = dry ? AGC_ST_DRY_RUN : AGC_ST_REFUSED;
	r->dry_exit = 4;
	return true;
}

static bool gate(agc_plan *p, agc_report *r)
{
	gate_files g = {0};
	agc_holders h = {0};
	agc_gate_query q;
	agc_gate_file project = {0};
	size_t i;

	for (i = 0; i < p->holders.n; i++)
		agc_report_add_holder(r, p->holders.v[i].pid, p->holders.v[i].command,
				      agc_why_name(p->holders.v[i].why), p->holders.v[i].what);
	gate_locks(p, r);
	gate_collect(p, &g);
	if (g.full || g.short_) {
		agc_error_set(-1, g.full ? "too many files to check for holders" : GATE_SHORT);
		goto unreadable;
	}
	memset(&q, 0, sizeof(q));
	q.procroot = p->ctx->procroot;
	q.ids = (const char *const *)p->ids.v;
	q.n_ids = p->ids.n;
	q.env_names = p->ad->env_names;
	q.n_env_names = p->ad->n_env_names;
	q.files = g.v;
	q.n_files = g.n;
	/* R5: mappings count for every agent (a transcript mapped, its fd closed). */
	q.with_maps = true;
	q.exempt = exempt_cb;
	q.exempt_ud = (void *)p->ad;
	if (p->has_agent_cwd && p->ad->agent_proc) {
		project.id = p->agent_cwd;
		project.label = p->meta.project ? p->meta.project : "";
		q.agent_cwd = &project;
		q.agent_proc = p->ad->agent_proc;
		q.accounted = accounted_cb;
		q.accounted_ud = p;
	}
	if (agc_holders_scan(&q, &h) < 0)
		goto unreadable;
	for (i = 0; i < h.n; i++)
		add_scan_holder(p, r, &g, &h.v[i]);
	agc_holders_release(&h);
	free(g.v);
	return r->holders.n > 0;
unreadable:
	{
		char why[1024];

		/* the holders the scan could name (by argv, environment) before it failed */
		snprintf(why, sizeof(why), "%s", agc_error_last());
		for (i = 0; i < h.n; i++)
			add_scan_holder(p, r, &g, &h.v[i]);
		agc_error_set(-1, "%s", why);
	}
	free(g.v);
	agc_holders_release(&h);
	/* Not knowing who runs is treated as "in use" (R5). */
	agc_report_add_holder(r, 0, agc_error_last(), "process-table", NULL);
	/* (the hint names the reason) */
	return true;
}

static void add_hints(agc_report *r, const agc_plan *p)
{
	size_t i, k;
	char line[512];

	/* The adapter's own hints first; one for a holder replaces the generic line (R5: a
	 * registry entry of another pid namespace names the file to remove by hand). */
	for (k = 0; k < p->hints.n; k++)
		agc_report_add_str(r, 2, p->hints.v[k].text);
	for (i = 0; i < r->holders.n; i++) {
		const agc_holder_info *h = &r->holders.v[i];

		for (k = 0; k < p->hints.n; k++)
			if (p->hints.v[k].what && h->what && strcmp(p->hints.v[k].what, h->what) == 0)
				break;
		if (k < p->hints.n)
			continue;
		for (k = 0; k < p->watch.n && h->what; k++)
			if (strcmp(p->watch.v[k].label, h->what) == 0)
				break;
		if (h->pid > 0 && strcmp(h->why, "open-file") == 0 && h->what && k < p->watch.n) {
			/* a database every session of the agent shares: the process holding it holds
			 * them all, and only quitting it frees them (R5) */
			char *t = agc_strfmt("pid %d (%s) has '%s' open, the database of every %s session, so "
					     "it holds them all: quit that program (ps -o pid,args -p %d), then "
					     "purge again%s%s%s",
					     h->pid, h->command && *h->command ? h->command : "?", h->what, p->ad->name,
					     h->pid, p->ad->service ? "; " : "", p->ad->service ? p->ad->service : "",
					     p->ad->service ? " never counts as a holder" : "");

			if (t)
				agc_report_add_str(r, 2, t);
			free(t);
			continue;
		}
		if (h->pid <= 0)
			snprintf(line, sizeof(line), "%s: the session cannot be shown to be free (%s)",
				 h->command, h->why);
		else if (strcmp(h->why, "open-file") == 0 && h->what && agc_procps_on())
			/* no /proc to point at (macOS, the BSDs): what lsof showed */
			snprintf(line, sizeof(line), "pid %d has '%s' open or mapped: see lsof -p %d",
				 h->pid, h->what, h->pid);
		else if (strcmp(h->why, "open-file") == 0 && h->what)
			snprintf(line, sizeof(line),
				 "pid %d has '%s' open or mapped: see ls -l /proc/%d/fd, /proc/%d/maps, or lsof -p %d",
				 h->pid, h->what, h->pid, h->pid, h->pid);
		else if (strcmp(h->why, "cwd") == 0 && h->what && agc_procps_on())
			snprintf(line, sizeof(line), "pid %d runs in '%s': see lsof -a -d cwd -p %d",
				 h->pid, h->what, h->pid);
		else if (strcmp(h->why, "cwd") == 0 && h->what)
			snprintf(line, sizeof(line), "pid %d runs in '%s': see ls -l /proc/%d/cwd",
				 h->pid, h->what, h->pid);
		else if (strcmp(h->why, "registry") == 0)
			snprintf(line, sizeof(line),
				 "pid %d is registered as running this session: see ps -o pid,lstart,args -p %d",
				 h->pid, h->pid);
		else
			snprintf(line, sizeof(line), "pid %d names the session (%s): see ps -o pid,args -p %d",
				 h->pid, h->why, h->pid);
		/* and what to do next: nothing changed, the purge can simply be run again */
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s",
			 h->pid > 0 ? "; once it has quit (end that session), purge again"
				    : "; run agentgc where it can read that (as the owner of the files, or "
				      "root), then purge again");
		agc_report_add_str(r, 2, line);
	}
}

/* True when discovery saw nothing of the session but notes, and one of them is a dir it
 * could not read (what it hides may be the session, running). Notes of what was read (a
 * malformed line, a file that does not name the session) prove nothing is hidden. */
static bool only_notes(const agc_plan *p)
{
	size_t i;
	bool unreadable = false;

	if (!p->notes.n || p->arts.n || p->holders.n)
		return false;
	for (i = 0; i < p->notes.n; i++)
		if (p->notes.v[i].reason && (strcmp(p->notes.v[i].reason, "permission") == 0 ||
					     strncmp(p->notes.v[i].reason, "error: cannot read dir", 22) == 0))
			unreadable = true;
	if (!unreadable)
		return false;
	for (i = 0; i < p->rows.n; i++)
		if (p->rows.v[i].count)
			return false;
	for (i = 0; i < p->lines.n; i++)
		if (p->lines.v[i].count)
			return false;
	return true;
}

typedef struct failure {
	size_t root;
	const char *rel;
	char *reason;
} failure;

typedef struct failures {
	failure *v;
	size_t n, cap;
} failures;

static const char *failure_of(const failures *f, size_t root, const char *rel)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->v[i].root == root && strcmp(f->v[i].rel, rel) == 0)
			return f->v[i].reason;
	return NULL;
}

static void note_failure(failures *f, size_t root, const char *rel, char *reason)
{
	failure *x = AGC_ARRAY_PUSH(f, 0);

	if (!x) {
		free(reason);
		return;
	}
	x->root = root;
	x->rel = rel;
	x->reason = reason;
}

/* Whether rel (or rel/child) beneath rootfd is no longer the file discovery read (seen): another
 * inode, size or time. One that is gone or cannot be reached is as seen when gone_ok (the
 * removal says which), else written since. */
static bool written_since(int rootfd, const char *rel, const char *child, const agc_filekey *seen,
			  bool gone_ok)
{
	struct stat st;
	agc_filekey now;
	char *path = child ? agc_strfmt("%s/%s", rel, child) : NULL;
	bool there = (!child || path) && fstatat(rootfd, child ? path : rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		     (!child || S_ISREG(st.st_mode));

	free(path);
	if (!there)
		return !gone_ok;
	agc_filekey_of(&st, &now);
	return !agc_filekey_same(&now, seen);
}

/* Remove one artifact; record it as removed or failed. Returns true when it is gone. */
static bool remove_one(agc_plan *p, agc_report *r, const agc_artifact *a, failures *fails,
		       bool *fixable)
{
	int rootfd = agc_plan_rootfd(p, a->root);
	agc_rm_result res;
	char *abs = agc_plan_abspath(p->roots, a->root, a->rel);
	int rc;

	if (rootfd < 0) {
		free(abs);
		return false;
	}
	/* A pointer (a registry entry) was judged by its text: one written again since (its pid
	 * reused by a process that registered its own session in the same file) may now name a
	 * live session; so may the file a dir was given to the session by (a job's state.json).
	 * Either is left for a rerun to judge again (R5). */
	if (((a->flags & AGC_ART_POINTER) && written_since(rootfd, a->rel, NULL, &a->key, true)) ||
	    ((a->flags & AGC_ART_LAST_KEYED) && a->last && written_since(rootfd, a->rel, a->last, &a->last_key, false))) {
		*fixable = true;
		note_failure(fails, a->root, a->rel, reason_of(AGC_WALK_CHANGED, 0));
		free(abs);
		return false;
	}
	rc = agc_remove_beneath(rootfd, a->rel, a->dev, a->ino, a->last, 0, &res);
	if (rc == 0) {
		agc_report_add_item(r, false, kind_name(a->kind), abs, NULL, NULL, a->session, 1,
				    a->kind == 'd' ? res.bytes : a->bytes, a->mtime_ms);
	} else if (rc != AGC_ENOTFOUND) {
		/* A link on the way, a mount point, another file system or a tree too deep stay
		 * whatever a rerun does: removing the rest goes on (R3). Anything else a rerun may
		 * finish, so the rest stays findable (R6). */
		if (res.status != AGC_WALK_SYMLINK && !walk_stays(res.status))
			*fixable = true;
		note_failure(fails, a->root, a->rel, reason_of(res.status, res.err));
		if (res.files || res.dirs)
			agc_report_add_item(r, false, "dir", abs, NULL, NULL, a->session,
					    res.files + res.dirs, res.bytes, a->mtime_ms);
	}
	free(abs);
	return rc == 0 || rc == AGC_ENOTFOUND;
}

static int cmp_sessions_first(const agc_plan *p, const char *s)
{
	return strcmp(p->id, s) == 0;
}

static bool same_note(const agc_note *a, const agc_note *b)
{
	return strcmp(a->path, b->path) == 0 && strcmp(a->reason ? a->reason : "", b->reason ? b->reason : "") == 0;
}

/* After a purge: discover again from scratch and report everything still present (R7). */
static bool db_holds_record(const agc_plan *p, size_t d);

/* The database that names child i of the plan: where it was found, else the one holding the
 * record, else the first; SIZE_MAX without any. */
static size_t child_db(const agc_plan *p, size_t i)
{
	size_t d;

	if (i < p->id_db.n && p->id_db.v[i] < p->dbs.n)
		return p->id_db.v[i];
	for (d = 0; d < p->dbs.n; d++)
		if (db_holds_record(p, d))
			return d;
	return p->dbs.n ? 0 : SIZE_MAX;
}

static void residual(agc_ctx *ctx, size_t agent, agc_plan *before, agc_report *r,
		     const failures *fails, const failures *line_fails, const failures *row_fails, void *run)
{
	agc_plan after;
	size_t i, j;

	/* run: a state made after every removal of the run, never the one discovery used */
	if (discover_in(ctx, agent, before->id, &after, DISCOVER_AGAIN, NULL, run, before->flags) < 0) {
		char *msg = agc_strfmt("error: cannot discover again: %s", agc_error_last());

		agc_report_add_item(r, true, "file", "", NULL, msg ? msg : "error", before->id, 0, 0, 0);
		free(msg);
		agc_plan_release(&after);
		return;
	}
	for (i = 0; i < after.arts.n; i++) {
		const agc_artifact *a = &after.arts.v[i];
		const char *why = failure_of(fails, a->root, a->rel);
		char *abs = agc_plan_abspath(after.roots, a->root, a->rel);

		if (!why)
			why = a->behind_link ? "symlink"
			      : !cmp_sessions_first(&after, a->session) ? "child"
			      : (a->flags & AGC_ART_RECORD) ? "error: kept until the rest is removed"
							    : "error: still present";
		agc_report_add_item(r, true, kind_name(a->kind), abs, NULL, why, a->session, 1, a->bytes,
				    a->mtime_ms);
		free(abs);
	}
	for (i = 0; i < after.locks.n; i++) {
		const agc_plan_lock *l = &after.locks.v[i];
		const char *why = failure_of(fails, l->root, l->rel);
		char *abs;

		if (l->absent || l->bad)
			continue;
		abs = agc_plan_abspath(after.roots, l->root, l->rel);

		agc_report_add_item(r, true, "file", abs, NULL, why ? why : "error: still present", l->session, 1, 0,
				    l->mtime_ms);
		free(abs);
	}
	for (i = 0; i < after.lines.n; i++) {
		const agc_lineset *ls = &after.lines.v[i];
		const char *why = failure_of(line_fails, ls->root, ls->rel);
		char *abs;

		if (!ls->count)
			continue;
		abs = agc_plan_abspath(after.roots, ls->root, ls->rel);
		agc_report_add_item(r, true, "lines", abs, NULL, why ? why : "error: still present",
				    after.id, ls->count, ls->bytes, 0);
		free(abs);
	}
	for (i = 0; i < after.notes.n; i++)
		agc_report_add_item(r, true, after.notes.v[i].kind, after.notes.v[i].path, NULL,
				    after.notes.v[i].reason, after.id, 0, 0, 0);
	/* What the discovery the purge acted on could not read is said too, though discovering
	 * again did not come back to it (a dir looked into only next to a record now gone): what
	 * was not read may still hold the session (R2, R8) */
	for (i = 0; i < before->notes.n; i++) {
		const agc_note *n = &before->notes.v[i];
		bool said = false;

		for (j = 0; !said && j < after.notes.n; j++)
			said = same_note(n, &after.notes.v[j]);
		for (j = 0; !said && j < i; j++)
			said = same_note(n, &before->notes.v[j]);
		if (!said)
			agc_report_add_item(r, true, n->kind, n->path, NULL, n->reason, before->id, 0, 0, 0);
	}
	for (i = 0; i < after.rows.n; i++) {
		const agc_rowset *rs = &after.rows.v[i];
		char *abs;

		if (!rs->count)
			continue;
		abs = agc_plan_abspath(after.roots, after.dbs.v[rs->db].root, after.dbs.v[rs->db].rel);
		{
			struct stat lst;
			int rfd = agc_plan_rootfd(&after, after.dbs.v[rs->db].root);
			bool linked = rfd >= 0 &&
				      fstatat(rfd, after.dbs.v[rs->db].rel, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
				      S_ISLNK(lst.st_mode);

			const char *why = failure_of(row_fails, after.dbs.v[rs->db].root, after.dbs.v[rs->db].rel);

			agc_report_add_item(r, true, "rows", abs, rs->table,
					    linked ? "symlink" : why ? why : "error: still present", after.id,
					    rs->count, rs->bytes, 0);
		}
		free(abs);
	}
	/* Each child still on record is named, with reason child (R7): those the parent still
	 * leads to (their rows or files are counted above)... */
	for (i = 1; i < after.ids.n; i++) {
		size_t d = child_db(&after, i);
		char *abs = d < after.dbs.n ? agc_plan_abspath(after.roots, after.dbs.v[d].root, after.dbs.v[d].rel)
					    : NULL;

		agc_report_add_item(r, true, d < after.dbs.n ? "rows" : "file", abs ? abs : "", NULL, "child",
				    after.ids.v[i], 0, 0, 0);
		free(abs);
	}
	/* ...and those it no longer leads to (its own row went), by their own discovery. */
	for (i = 1; i < before->ids.n; i++) {
		agc_plan cp;
		char canon[AGC_ID_MAX];
		bool known = false;

		for (j = 0; j < after.ids.n && !known; j++)
			known = strcmp(after.ids.v[j], before->ids.v[i]) == 0;
		if (known || before->ad->id_canon(before->ids.v[i], canon) < 0)
			continue;
		/* a child that lives only inside its parent's dirs (a Claude sub-agent) is in what
		 * the parent's own discovery saw above; its id found elsewhere is another's */
		if (before->ad->inside_parent && before->ad->inside_parent(canon))
			continue;
		if (discover(ctx, agent, canon, &cp, DISCOVER_ALL) == 0) {
			for (j = 0; j < cp.arts.n; j++) {
				char *abs = agc_plan_abspath(cp.roots, cp.arts.v[j].root, cp.arts.v[j].rel);

				agc_report_add_item(r, true, kind_name(cp.arts.v[j].kind), abs, NULL, "child", canon,
						    1, cp.arts.v[j].bytes, cp.arts.v[j].mtime_ms);
				free(abs);
			}
			for (j = 0; j < cp.rows.n; j++) {
				const agc_rowset *rs = &cp.rows.v[j];
				char *abs;

				if (!rs->count)
					continue;
				abs = agc_plan_abspath(cp.roots, cp.dbs.v[rs->db].root, cp.dbs.v[rs->db].rel);
				agc_report_add_item(r, true, "rows", abs, rs->table, "child", canon, rs->count,
						    rs->bytes, 0);
				free(abs);
			}
		}
		agc_plan_release(&cp);
	}
	/* What failed but can no longer be discovered (found only through something that went,
	 * like a paste file through its history lines) is still there: say so. */
	for (i = 0; i < fails->n; i++) {
		const failure *f = &fails->v[i];
		int rootfd = agc_plan_rootfd(before, f->root);
		struct stat st;
		char *abs;

		for (j = 0; j < after.arts.n; j++)
			if (after.arts.v[j].root == f->root && strcmp(after.arts.v[j].rel, f->rel) == 0)
				break;
		if (j < after.arts.n || rootfd < 0 || fstatat(rootfd, f->rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		abs = agc_plan_abspath(before->roots, f->root, f->rel);
		agc_report_add_item(r, true, S_ISDIR(st.st_mode) ? "dir" : "file", abs, NULL, f->reason,
				    before->id, 1, 0, 0);
		free(abs);
	}
	agc_plan_release(&after);
}

static void list_plan(agc_plan *p, agc_report *r, bool as_residual_links)
{
	size_t i;

	for (i = 0; i < p->arts.n; i++) {
		const agc_artifact *a = &p->arts.v[i];
		char *abs = agc_plan_abspath(p->roots, a->root, a->rel);

		agc_rm_result rr;
		int rootfd = agc_plan_rootfd(p, a->root);

		if (as_residual_links && a->behind_link)
			agc_report_add_item(r, true, kind_name(a->kind), abs, NULL, "symlink", a->session, 1,
					    a->bytes, a->mtime_ms);
		/* A dry run walks each dir as the removal would, so a mount point inside (R3) or a
		 * tree too deep is told before anything changes, as the purge would. */
		else if (as_residual_links && a->kind == 'd' && rootfd >= 0 &&
			 agc_remove_beneath(rootfd, a->rel, a->dev, a->ino, a->last, AGC_RM_DRY_RUN, &rr) < 0 &&
			 walk_stays(rr.status)) {
			char *why = reason_of(rr.status, rr.err);

			agc_report_add_item(r, true, kind_name(a->kind), abs, NULL, why ? why : "error",
					    a->session, 1, a->bytes, a->mtime_ms);
			free(why);
		} else
			agc_report_add_item(r, false, kind_name(a->kind), abs, NULL, NULL, a->session, 1,
					    a->bytes, a->mtime_ms);
		free(abs);
	}
	for (i = 0; i < p->lines.n; i++) {
		const agc_lineset *ls = &p->lines.v[i];
		int rootfd = agc_plan_rootfd(p, ls->root);
		const char *why = NULL;
		char *abs, *msg = NULL;

		if (!ls->count)
			continue;
		/* A dry run asks the same questions the rewrite would: held open, locked, a link. */
		if (as_residual_links && rootfd >= 0) {
			agc_lines_result lr;
			int rc = agc_lines_rewrite(rootfd, ls, p->ids.v, p->ids.n, p->ctx->procroot,
						   AGC_LINES_DRY_RUN | AGC_LINES_CHECK_ONLY, &lr);

			if (rc != 0)
				why = lr.reason && strcmp(lr.reason, "error") != 0
					      ? lr.reason
					      : (msg = agc_strfmt("error: %s", agc_error_last()));
		}
		abs = agc_plan_abspath(p->roots, ls->root, ls->rel);
		agc_report_add_item(r, why != NULL, "lines", abs, NULL, why, p->id, ls->count, ls->bytes, 0);
		free(abs);
		free(msg);
	}
	for (i = 0; i < p->notes.n; i++)
		agc_report_add_item(r, true, p->notes.v[i].kind, p->notes.v[i].path, NULL, p->notes.v[i].reason,
				    p->id, 0, 0, 0);
	/* a dry run says them where the refusal does (after_gate); show lists them */
	for (i = 0; !as_residual_links && i < p->refusals.n; i++)
		agc_report_add_item(r, true, p->refusals.v[i].kind, p->refusals.v[i].path, NULL,
				    p->refusals.v[i].reason, p->id, 0, 0, 0);
	for (i = 0; i < p->rows.n; i++) {
		const agc_rowset *rs = &p->rows.v[i];
		char *abs;

		if (!rs->count)
			continue;
		abs = agc_plan_abspath(p->roots, p->dbs.v[rs->db].root, p->dbs.v[rs->db].rel);
		agc_report_add_item(r, false, "rows", abs, rs->table, NULL, p->id, rs->count, rs->bytes, 0);
		free(abs);
	}
	/* what an earlier purge left in a WAL: checkpointed */
	for (i = 0; i < p->dbs.n; i++) {
		char *abs, *wal;

		if (!p->dbs.v[i].wal_residue)
			continue;
		abs = agc_plan_abspath(p->roots, p->dbs.v[i].root, p->dbs.v[i].rel);
		wal = abs ? agc_strfmt("%s-wal", abs) : NULL;
		agc_report_add_item(r, false, "file", wal ? wal : "", NULL, NULL, p->id, 1, p->dbs.v[i].wal_bytes, 0);
		free(wal);
		free(abs);
	}
	/* the writer locks go last, in the release step */
	for (i = 0; i < p->locks.n; i++) {
		const agc_plan_lock *l = &p->locks.v[i];
		char *abs;

		if (l->absent || l->bad)
			continue;
		abs = agc_plan_abspath(p->roots, l->root, l->rel);

		agc_report_add_item(r, false, "file", abs ? abs : l->rel, NULL, NULL, l->session, 1, 0, l->mtime_ms);
		free(abs);
	}
}

/* Is database d of the plan still the file discovery saw, reached without a link (R2)?
 * Returns its absolute path (malloc'd) or NULL with *why set; with dirfd set, *dirfd is the
 * dir it is in (open, the caller's to close) and *leafp its name in it. */
static char *db_checked_at(agc_plan *p, size_t d, const char **why, int *dirfd, const char **leafp);

static char *db_checked_path(agc_plan *p, size_t d, const char **why)
{
	return db_checked_at(p, d, why, NULL, NULL);
}

static char *db_checked_at(agc_plan *p, size_t d, const char **why, int *dirfd, const char **leafp)
{
	const agc_dbref *db = &p->dbs.v[d];
	int rootfd = agc_plan_rootfd(p, db->root), dfd, err;
	const char *leaf;
	agc_walk_status ws;
	struct stat st;

	*why = "error: database not reachable";
	if (rootfd < 0)
		return NULL;
	ws = agc_walk_parent(rootfd, db->rel, &dfd, &leaf, &err);
	if (ws != AGC_WALK_OK) {
		*why = ws == AGC_WALK_SYMLINK ? "symlink" : "error: database not reachable";
		return NULL;
	}
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		/* no stat buffer to look at: the database went since discovery */
		err = errno;
		close(dfd);
		*why = err == ENOENT ? "error: database removed since discovery" : "error: database not reachable";
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != db->dev || st.st_ino != db->ino) {
		close(dfd);
		*why = S_ISLNK(st.st_mode) ? "symlink" : "error: database changed since discovery";
		return NULL;
	}
	if (dirfd) {
		*dirfd = dfd;
		*leafp = leaf;
	} else {
		close(dfd);
	}
	return agc_plan_abspath(p->roots, db->root, db->rel);
}

/* The rows of one purge: a write transaction on every database that holds rows of it, each
 * watched for changes outside the plan (R4, R6). */
typedef struct txn {
	sqlite3 **h;          /* per plan database: open while its transaction, checkpoint or rebuild
				 needs it */
	agc_db_watch **w;     /* its change watch (R4) */
	bool *open;           /* a transaction is open */
	bool *committed;
	bool *ckpt_off;       /* its automatic checkpoint is off (ckpt: the setting it had) */
	int *ckpt;
	uint64_t *deleted;    /* per row set */
	uint64_t *bytes;      /* per row set: the stored size of the rows deleted (SPEC "Sizes") */
	char *ids;
	int *dfd;             /* per plan database: the dir it was checked in (R2), -1 */
	const char **leaf;    /* its name there */
	agc_fdset *fds;       /* the files this process had open before SQLite opened it */
} txn;

static int txn_init(txn *t, const agc_plan *p)
{
	memset(t, 0, sizeof(*t));
	t->h = calloc(p->dbs.n + 1, sizeof(*t->h));
	t->w = calloc(p->dbs.n + 1, sizeof(*t->w));
	t->open = calloc(p->dbs.n + 1, sizeof(*t->open));
	t->committed = calloc(p->dbs.n + 1, sizeof(*t->committed));
	t->ckpt_off = calloc(p->dbs.n + 1, sizeof(*t->ckpt_off));
	t->ckpt = calloc(p->dbs.n + 1, sizeof(*t->ckpt));
	t->deleted = calloc(p->rows.n + 1, sizeof(*t->deleted));
	t->bytes = calloc(p->rows.n + 1, sizeof(*t->bytes));
	t->ids = agc_plan_ids_json(p);
	t->dfd = malloc((p->dbs.n + 1) * sizeof(*t->dfd));
	t->leaf = calloc(p->dbs.n + 1, sizeof(*t->leaf));
	t->fds = calloc(p->dbs.n + 1, sizeof(*t->fds));
	if (!t->h || !t->w || !t->open || !t->committed || !t->ckpt_off || !t->ckpt || !t->deleted || !t->bytes ||
	    !t->ids || !t->dfd || !t->leaf || !t->fds)
		return agc_error_oom();
	for (size_t d = 0; d <= p->dbs.n; d++)
		t->dfd[d] = -1;
	return 0;
}

/* The transaction of database d is over: its connection's automatic checkpoint as it was. */
static void txn_ckpt_restore(txn *t, size_t d)
{
	if (t->ckpt_off && t->ckpt_off[d]) {
		agc_db_autocheckpoint_restore(t->h[d], t->ckpt[d]);
		t->ckpt_off[d] = false;
	}
}

/* Roll back every open transaction: nothing of the rows changes. */
static void txn_rollback(txn *t, size_t n)
{
	size_t d;

	for (d = 0; d < n; d++)
		if (t->h && t->h[d] && t->open[d]) {
			sqlite3_exec(t->h[d], "ROLLBACK", NULL, NULL, NULL);
			t->open[d] = false;
			txn_ckpt_restore(t, d);
		}
}

/* Roll back what is still open, close everything, free. */
static void txn_release(txn *t, size_t n)
{
	size_t d;

	txn_rollback(t, n);
	for (d = 0; t->h && d < n; d++) {
		agc_db_watch_free(t->w ? t->w[d] : NULL);
		sqlite3_close(t->h[d]);
		if (t->dfd && t->dfd[d] >= 0)
			close(t->dfd[d]);
		if (t->fds)
			agc_fdset_release(&t->fds[d]);
	}
	free(t->dfd);
	free(t->leaf);
	free(t->fds);
	free(t->h);
	free(t->w);
	free(t->open);
	free(t->committed);
	free(t->ckpt_off);
	free(t->ckpt);
	free(t->deleted);
	free(t->bytes);
	free(t->ids);
	memset(t, 0, sizeof(*t));
}

static bool db_has_rows(const agc_plan *p, size_t d)
{
	size_t i;

	for (i = 0; i < p->rows.n; i++)
		if (p->rows.v[i].db == d && p->rows.v[i].count > 0)
			return true;
	return false;
}

static void add_db_item(agc_plan *p, agc_report *r, size_t d, const char *table, const char *why)
{
	char *abs = agc_plan_abspath(p->roots, p->dbs.v[d].root, p->dbs.v[d].rel);

	agc_report_add_item(r, true, "rows", abs ? abs : "", table, why, p->id, 0, 0, 0);
	free(abs);
}

/* 1. Write-lock every database that has rows of the session before a row is deleted in any
 * (R6), and watch each (R4). Busy anywhere: refused, nothing changed. Returns 0, 1 (refused:
 * the report says why) or -1. */
static int rows_begin(agc_plan *p, agc_report *r, txn *t)
{
	size_t d, i;

	/* no connection of this process to a database is left open before one opens it to write
	 * (agc_adapter.run_close) */
	if (p->run && p->ad->run_close)
		p->ad->run_close(p->run);
	for (d = 0; d < p->dbs.n; d++) {
		const char *why = NULL;
		char *path;
		int rc;

		if (!db_has_rows(p, d))
			continue;
		path = db_checked_at(p, d, &why, &t->dfd[d], &t->leaf[d]);
		if (!path && strcmp(why, "symlink") == 0) {
			/* A linked database is left whole, like any artifact behind a link (R2);
			 * the rest of the session goes and the rows stay findable. */
			continue;
		}
		if (!path) {
			add_db_item(p, r, d, NULL, why);
			return 1;
		}
		/* R2: SQLite opens the database (and its -wal, -shm) by the path: what it holds once
		 * the write lock is taken must be the files checked, in the dir walked to */
		if (agc_fdset_take(&t->fds[d]) < 0) {
			free(path);
			return -1;
		}
		rc = agc_db_open_rw(path, &t->h[d]);
		if (rc == 0 && (rc = agc_db_begin_write(t->h[d], NULL)) == 0)
			t->open[d] = true;
		if (rc == 0 && agc_db_verify_open(&t->fds[d], t->dfd[d], t->leaf[d], &(struct stat){
								.st_dev = p->dbs.v[d].dev, .st_ino = p->dbs.v[d].ino}, path) < 0) {
			add_db_item(p, r, d, NULL, "symlink");
			free(path);
			return 1;
		}
		/* No automatic checkpoint at the commit: the WAL is checkpointed once, after every
		 * database committed (rows_finish), and the setting restored when the transaction
		 * ends. */
		if (rc == 0 && (rc = agc_db_autocheckpoint_off(t->h[d], &t->ckpt[d])) == 0)
			t->ckpt_off[d] = true;
		if (rc < 0) {
			/* busy or locked, by SQLite's result code: another process writes (or, in
			 * rollback-journal mode, reads); a database this user may read but not write
			 * (or whose dir it may not write its -journal in) is refused as one that may
			 * not be changed: reason permission, nothing changed */
			int ec = t->h[d] ? sqlite3_errcode(t->h[d]) & 0xff : SQLITE_OK;
			bool perm = rc != AGC_EINUSE && (ec == SQLITE_READONLY || ec == SQLITE_PERM || ec == SQLITE_CANTOPEN ||
							 access(path, W_OK) != 0);
			char *msg = rc == AGC_EINUSE ? agc_strdup("busy")
				    : perm	   ? agc_strdup("permission")
						   : agc_strfmt("error: %s", agc_error_last());

			agc_report_add_item(r, true, "rows", path, NULL, msg ? msg : "error", p->id, 0, 0, 0);
			free(msg);
			free(path);
			return rc == AGC_EINUSE || perm ? 1 : -1;
		}
		free(path);
		if (agc_db_watch_new(t->h[d], &t->w[d]) < 0)
			return -1;
		/* the plan's rows, as its own SQL selects them, by their values before any delete */
		for (i = 0; i < p->rows.n; i++) {
			const agc_rowset *rs = &p->rows.v[i];
			int wrc;

			if (rs->db != d)
				continue;
			wrc = rs->column ? agc_db_watch_plan(t->w[d], rs->table, rs->column,
							     "SELECT value FROM json_each(?1)", t->ids)
					 : 0;
			/* R4: rows of the session in a table the watch cannot see (a virtual table)
			 * cannot be deleted under the check: refuse, nothing changed. With none of
			 * them there, nothing is deleted from it, and what a trigger would change
			 * in its shadow tables the watch still sees. */
			if (wrc == AGC_EUNSAFE && !rs->count)
				continue;
			if (wrc == AGC_EUNSAFE) {
				add_db_item(p, r, d, rs->table, "schema");
				return 1;
			}
			if (wrc < 0)
				return -1;
			if (rs->via_table) {
				char *vk = agc_db_ident(rs->via_key), *vt = agc_db_ident(rs->via_table);
				char *vc = agc_db_ident(rs->via_column);
				char *sql = vk && vt && vc ? agc_strfmt("SELECT %s FROM %s WHERE %s IN (SELECT value FROM json_each(?1))",
									vk, vt, vc)
							   : NULL;
				int prc = sql ? agc_db_watch_plan(t->w[d], rs->table, rs->via_local, sql, t->ids) : -1;

				free(vk);
				free(vt);
				free(vc);
				free(sql);
				if (prc < 0)
					return -1;
			}
		}
	}
	return 0;
}

#define ROWS_PASSES 4 /* the plan's deletes run again while triggers left rows of it */

/* Run one row set's statement (sql: ?1 the ids) on db and add up the first column of the rows
 * it returns into *sum. Returns the last step's result code (SQLITE_DONE when it ran). */
static int rows_run(sqlite3 *db, const char *sql, const char *ids, uint64_t *sum)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, ids, -1, SQLITE_STATIC);
		while ((src = sqlite3_step(st)) == SQLITE_ROW)
			*sum += (uint64_t)sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return src;
}

/* The statements of one row set: its DELETE, and (*sum_sql) the sum of the stored sizes of the
 * same rows (SPEC "Sizes"), run just before it on the same connection in the same write
 * transaction, so the rows sized are the rows deleted, and the pages the sum reads are those
 * the delete then finds in the connection's cache. (DELETE ... RETURNING would size them in one
 * statement, but SQLite runs RETURNING as a trigger that decodes every deleted row: measured
 * on 10,000 rows it costs more than this sum.) NULL (error set) on failure. */
static char *rows_delete_sql(sqlite3 *db, const agc_rowset *rs, char **sum_sql)
{
	char *del = agc_rows_sql(rs, NULL), *size = agc_db_row_size_sql(db, rs->table, NULL);
	char *sel = size ? agc_strfmt("coalesce(sum(%s), 0)", size) : NULL;

	*sum_sql = sel ? agc_rows_sql(rs, sel) : NULL;
	free(sel);
	free(size);
	if (!del || !*sum_sql) {
		free(del);
		free(*sum_sql);
		*sum_sql = NULL;
		agc_error_oom();
		return NULL;
	}
	return del;
}

/* 2. Delete, in the adapter's order (rows reached through others first), and check the net
 * change of every database before anything commits (R4): only planned rows deleted, or rows
 * inserted and deleted again. Returns 0, 1 (refused, reason schema) or -1. */
static int rows_delete(agc_plan *p, agc_report *r, txn *t)
{
	size_t i, d, pass;
	bool again = true;

	for (pass = 0; pass < ROWS_PASSES && again; pass++) {
		for (i = 0; i < p->rows.n; i++) {
			const agc_rowset *rs = &p->rows.v[i];
			sqlite3 *db = t->h[rs->db];
			const char *tab;
			char *sql, *sum_sql;
			uint64_t bytes = 0, none = 0;
			int src;

			if (!db || (pass == 0 && !rs->count) || (pass > 0 && !agc_db_watch_pending(t->w[rs->db])))
				continue;
			sql = rows_delete_sql(db, rs, &sum_sql);
			if (!sql)
				return -1;
			/* sized and deleted on this one connection, under its write lock */
			src = rows_run(db, sum_sql, t->ids, &bytes);
			if (src == SQLITE_DONE)
				src = rows_run(db, sql, t->ids, &none);
			if (src == SQLITE_DONE) {
				t->deleted[i] += (uint64_t)sqlite3_changes64(db);
				t->bytes[i] += bytes;
			}
			free(sum_sql);
			free(sql);
			if (src == SQLITE_DONE)
				continue;
			/* the watch stopped the statement: a change outside the plan */
			if (agc_db_watch_check(t->w[rs->db], &tab) != 0)
				break;
			/* another session's row references one of the plan (RESTRICT, NO ACTION) */
			if (src == SQLITE_CONSTRAINT_FOREIGNKEY) {
				add_db_item(p, r, rs->db, rs->table, "schema");
				return 1;
			}
			return agc_db_fail(db, src, rs->table) == AGC_EINUSE ? (add_db_item(p, r, rs->db, NULL, "busy"), 1)
									       : -1;
		}
		again = false;
		for (d = 0; d < p->dbs.n; d++)
			again |= t->w[d] && agc_db_watch_pending(t->w[d]);
	}
	for (d = 0; d < p->dbs.n; d++) {
		const char *tab = NULL;
		int cur = 0, hi = 0, vrc;

		if (!t->w[d])
			continue;
		vrc = agc_db_watch_check(t->w[d], &tab);
		if (vrc < 0)
			return -1;
		if (vrc > 0) {
			add_db_item(p, r, d, tab, "schema");
			return 1;
		}
		/* a deferred foreign key that the commit would refuse: another row names one of
		 * the plan */
		if (sqlite3_db_status(t->h[d], SQLITE_DBSTATUS_DEFERRED_FKS, &cur, &hi, 0) == SQLITE_OK &&
		    cur > 0) {
			add_db_item(p, r, d, NULL, "schema");
			return 1;
		}
	}
	return 0;
}

/* Whether database d holds the session's record row (a session table keyed by its id). */
static bool db_holds_record(const agc_plan *p, size_t d)
{
	size_t i;

	for (i = 0; i < p->rows.n; i++)
		if (p->rows.v[i].db == d && p->rows.v[i].record)
			return true;
	return false;
}

/* 3. Commit: the databases that hold the record last (R6). A failed commit rolls back the
 * ones not yet committed; the report lists the rows of those that did (promise 3). Returns 0
 * or -1 (something stays: row_fails says why). */
static int rows_commit(agc_plan *p, agc_report *r, txn *t, failures *row_fails)
{
	size_t d, i, round;
	int rc = 0;

	for (round = 0; round < 2; round++)
		for (d = 0; d < p->dbs.n; d++) {
			if (!t->open[d] || db_holds_record(p, d) != (round == 1))
				continue;
			/* R2: a -journal made since the check (rollback mode writes one now) is in the
			 * dir checked, not behind a dir swapped for a link */
			if (rc == 0 && t->dfd[d] >= 0 &&
			    agc_db_verify_open(&t->fds[d], t->dfd[d], t->leaf[d],
					       &(struct stat){.st_dev = p->dbs.v[d].dev, .st_ino = p->dbs.v[d].ino},
					       p->dbs.v[d].rel) < 0) {
				note_failure(row_fails, p->dbs.v[d].root, p->dbs.v[d].rel, agc_strdup("symlink"));
				rc = -1;
				sqlite3_exec(t->h[d], "ROLLBACK", NULL, NULL, NULL);
				t->open[d] = false;
				continue;
			}
			if (rc == 0 && agc_db_exec(t->h[d], "COMMIT") == 0) {
				t->open[d] = false;
				t->committed[d] = true;
				txn_ckpt_restore(t, d);
				/* the change watch is for the transaction: a rebuild (VACUUM) afterwards
				 * copies every row, which the watch would take for changes outside
				 * the plan and interrupt */
				agc_db_watch_free(t->w[d]);
				t->w[d] = NULL;
				continue;
			}
			if (rc == 0) {
				note_failure(row_fails, p->dbs.v[d].root, p->dbs.v[d].rel,
					     agc_strfmt("error: %s", agc_error_last()));
				rc = -1;
			} else {
				note_failure(row_fails, p->dbs.v[d].root, p->dbs.v[d].rel,
					     agc_strdup("error: kept until the rest is removed"));
			}
			sqlite3_exec(t->h[d], "ROLLBACK", NULL, NULL, NULL);
			t->open[d] = false;
			txn_ckpt_restore(t, d);
		}
	for (i = 0; i < p->rows.n; i++) {
		const agc_rowset *rs = &p->rows.v[i];
		char *abs;

		if (!t->deleted[i] || !t->committed[rs->db])
			continue;
		abs = agc_plan_abspath(p->roots, p->dbs.v[rs->db].root, p->dbs.v[rs->db].rel);
		agc_report_add_item(r, false, "rows", abs, rs->table, NULL, p->id, t->deleted[i], t->bytes[i], 0);
		free(abs);
	}
	return rc;
}

/* Rows were deleted from database d and committed. */
static bool db_deleted(const agc_plan *p, const txn *t, size_t d)
{
	size_t i;

	if (!t->committed[d])
		return false;
	for (i = 0; i < p->rows.n; i++)
		if (p->rows.v[i].db == d && t->deleted[i])
			return true;
	return false;
}

/* After everything: fold the WAL back into the database and truncate it without waiting for
 * readers, so deleted text does not stay in the WAL (R6). Returns false when it could not. */
static bool checkpoint_one(agc_plan *p, agc_report *r, sqlite3 *db, size_t d)
{
	/* Without waiting for writers (an idle reader does not stop it); a reader mid-transaction
	 * makes it busy: a few short tries, then the WAL is residual in-use (a rerun or --scrub
	 * finishes). */
	int rc = agc_db_checkpoint(db);

	if (rc != SQLITE_OK) {
		char *abs = agc_plan_abspath(p->roots, p->dbs.v[d].root, p->dbs.v[d].rel);
		char *wal = abs ? agc_strfmt("%s-wal", abs) : NULL;

		agc_report_add_item(r, true, "file", wal ? wal : "", NULL, "in-use", p->id, 0, 0, 0);
		/* what a rerun of any of the ids finds again (pending.h) */
		if (abs && agc_pending_add(abs, p->dbs.v[d].dev, p->dbs.v[d].ino, p->ids.v, p->ids.n) < 0) {
			char *msg = agc_strfmt("a rerun may not find '%s' again (%s): the deleted text stays in it until "
					       "the agent checkpoints it", wal ? wal : abs, agc_error_last());

			if (msg)
				agc_report_add_str(r, 2, msg);
			free(msg);
		}
		free(wal);
		free(abs);
		return false;
	}
	if (agc_pending_clear(p->dbs.v[d].dev, p->dbs.v[d].ino) < 0) {
		char *msg = agc_strfmt("agentgc's record of an unfinished checkpoint could not be cleared (%s)", agc_error_last());

		if (msg)
			agc_report_add_str(r, 2, msg);
		free(msg);
	}
	return true;
}

/* Whether a process other than agentgc holds database path, its -wal or -shm (R6: a rebuild
 * only when unheld). Returns 1, 0, or -1 when the process table cannot be read. */
static int db_held(agc_plan *p, const char *path)
{
	agc_holders h = {0};
	int rc = agc_db_holders(p->ctx->procroot, path, &h);

	if (rc == 0)
		rc = h.n > 0;
	agc_holders_release(&h);
	return rc;
}

/* --scrub (R6): rebuild (VACUUM) database d, when no other process holds it and its file
 * system has room for a copy; else say why it was left. Returns true when rebuilt. */
static bool scrub_one(agc_plan *p, agc_report *r, sqlite3 *db, size_t d)
{
	const char *why = NULL;
	char *path = db_checked_path(p, d, &why), *msg = NULL;
	int held, rc;
	bool ok = false;

	if (!path) {
		add_db_item(p, r, d, NULL, why);
		return false;
	}
	held = db_held(p, path);
	if (held != 0) {
		agc_report_add_item(r, true, "file", path, NULL, "in-use", p->id, 0, 0, 0);
		goto out;
	}
	/* VACUUM writes a copy (in the WAL, or a journal of the old pages) beside the database */
	rc = agc_db_room(path, NULL, NULL);
	if (rc < 0)
		goto fail;
	if (rc == 0) {
		agc_report_add_item(r, true, "file", path, NULL, "free-space", p->id, 0, 0, 0);
		goto out;
	}
	rc = agc_db_exec(db, "VACUUM");
	if (rc == AGC_EINUSE) {
		agc_report_add_item(r, true, "file", path, NULL, "in-use", p->id, 0, 0, 0);
		goto out;
	}
	if (rc < 0)
		goto fail;
	/* the rebuilt pages went through the WAL: fold them in and empty it */
	ok = checkpoint_one(p, r, db, d);
	goto out;
fail:
	msg = agc_strfmt("error: cannot rebuild: %s", agc_error_last());
	agc_report_add_item(r, true, "file", path, NULL, msg ? msg : "error", p->id, 0, 0, 0);
out:
	free(msg);
	free(path);
	return ok;
}

/* After the rows committed: checkpoint, rebuild with --scrub, and say which databases may
 * still hold older copies of what went (R6). */
/* The WAL of database d that an earlier purge left (agc_dbref.wal_residue), when this purge
 * deleted no row there: checkpointed as after a purge, and listed with the bytes it held. */
static void finish_wal(agc_plan *p, agc_report *r, txn *t, size_t d, bool scrub)
{
	const char *why = NULL;
	char *path = db_checked_path(p, d, &why), *wal;
	int rc;

	if (!path) {
		add_db_item(p, r, d, NULL, why);
		return;
	}
	wal = agc_strfmt("%s-wal", path);
	rc = wal ? agc_db_open_rw(path, &t->h[d]) : agc_error_oom();
	if (rc < 0) {
		char *msg = agc_strfmt("error: %s", agc_error_last());

		agc_report_add_item(r, true, "file", wal ? wal : path, NULL, msg ? msg : "error", p->id, 0, 0, 0);
		free(msg);
	} else if (checkpoint_one(p, r, t->h[d], d)) {
		agc_report_add_item(r, false, "file", wal, NULL, NULL, p->id, 1, p->dbs.v[d].wal_bytes, 0);
		if (scrub)
			scrub_one(p, r, t->h[d], d);
	}
	free(wal);
	free(path);
}

static void rows_finish(agc_plan *p, agc_report *r, txn *t, bool scrub)
{
	agc_buf names = AGC_BUF_INIT;
	size_t d, n = 0;

	for (d = 0; d < p->dbs.n; d++) {
		char *abs;

		if (p->dbs.v[d].wal_residue && !t->h[d]) {
			finish_wal(p, r, t, d, scrub);
			continue;
		}
		if (!t->h[d] || !t->committed[d])
			continue;
		if (!checkpoint_one(p, r, t->h[d], d))
			continue;
		if (!db_deleted(p, t, d))
			continue;
		if (scrub) {
			scrub_one(p, r, t->h[d], d);
			continue;
		}
		/* one hint naming every database rows went from */
		abs = agc_plan_abspath(p->roots, p->dbs.v[d].root, p->dbs.v[d].rel);
		if (abs)
			agc_buf_printf(&names, "%s'%s'", n++ ? ", " : "", abs);
		free(abs);
	}
	if (n) {
		char *hint = agc_strfmt("the agent writes without secure_delete: older copies of the deleted rows may "
					"survive in the pages of %s until 'agentgc compact' (or a purge with --scrub) "
					"rebuilds %s",
					names.ptr, n > 1 ? "them" : "it");

		if (hint)
			agc_report_add_str(r, 2, hint);
		free(hint);
	}
	agc_buf_release(&names);
}

/* SPEC "Sizes": a purge's discovery counts rows without sizing them (DISCOVER_PURGE); the
 * session's figure gets their bytes from the deletes (t), or, when none ran (refused before),
 * from the rows as they are, read-only. */
static void rows_session_bytes(agc_plan *p, agc_report *r, const txn *t)
{
	size_t d, i;

	if (!p->rows_unsized)
		return;
	p->rows_unsized = false;
	for (d = 0; d < p->dbs.n; d++) {
		char *path;
		sqlite3 *db = NULL;

		if (!db_has_rows(p, d))
			continue;
		if (t && t->h[d]) {
			for (i = 0; i < p->rows.n; i++)
				if (p->rows.v[i].db == d)
					r->session.bytes += t->bytes[i];
			continue;
		}
		path = agc_plan_abspath(p->roots, p->dbs.v[d].root, p->dbs.v[d].rel);
		if (path && agc_db_open_peek(path, &db) == 0 && agc_plan_count_rows(p, db, d) == 0)
			for (i = 0; i < p->rows.n; i++)
				if (p->rows.v[i].db == d)
					r->session.bytes += p->rows.v[i].bytes;
		sqlite3_close(db);
		free(path);
	}
}

/* What a purge left to do once its rows and files went: its shared-file lines, the finish of
 * its databases, its residual. */
typedef struct purge_rest {
	failures fails, line_fails, row_fails;
	bool fixable;
	txn t;
} purge_rest;

/* Rows and files (R6). Returns false when the purge ended there (refused, an error: the report
 * says so). */
static bool purge_remove(agc_plan *p, agc_report *r, purge_rest *pr)
{
	failures *fails = &pr->fails, *row_fails = &pr->row_fails;
	bool *fixable_out = &pr->fixable, fixable = false;
	txn *tp = &pr->t;
	size_t i;
	int drc;

	memset(pr, 0, sizeof(*pr));
	/* Rows first, in one transaction per database, every one locked before a row goes in
	 * any (R6), checked against the plan before anything commits (R4). */
	if (txn_init(tp, p) < 0) {
		txn_release(tp, p->dbs.n);
		agc_report_set_error(r, "out of memory");
		return false;
	}
	if (p->dbs.n) {
		drc = rows_begin(p, r, tp);
		if (drc == 0)
			drc = rows_delete(p, r, tp);
		if (drc != 0) {
			char msg[1024];

			snprintf(msg, sizeof(msg), "%s", agc_error_last());
			txn_release(tp, p->dbs.n);
			if (drc > 0) {
				r->status = AGC_ST_REFUSED;
				rows_session_bytes(p, r, NULL);
			} else {
				agc_report_set_error(r, msg);
			}
			return false;
		}
		rows_session_bytes(p, r, tp);
	}
	/* Then files, in the adapter's order (what is found through another artifact before
	 * it), the record (the transcript discovery keys on) last (R6). After a failure that a
	 * rerun could finish, the rest stays, as if the purge had stopped there: what comes later
	 * may be what leads a rerun to the file that failed (a legacy message file to its parts). */
	for (i = 0; i < p->arts.n; i++) {
		const agc_artifact *a = &p->arts.v[i];

		/* a deferred one goes at the end of the stretch, if at all (batch_flush) */
		if (a->flags & (AGC_ART_RECORD | AGC_ART_DEFERRED))
			continue;
		if (fixable) {
			note_failure(fails, a->root, a->rel, agc_strdup("error: kept until the rest is removed"));
			continue;
		}
		remove_one(p, r, a, fails, &fixable);
	}
	/* Files found only through a row (a plan file, through the session's row) went before
	 * that row's transaction commits (R6); when one that a rerun could finish failed, the
	 * rows stay, so the rerun finds the session again. */
	if (fixable) {
		for (i = 0; i < p->dbs.n; i++)
			if (tp->open[i])
				note_failure(row_fails, p->dbs.v[i].root, p->dbs.v[i].rel,
					     agc_strdup("error: kept until the rest is removed"));
		txn_rollback(tp, p->dbs.n);
	} else if (rows_commit(p, r, tp, row_fails) < 0) {
		fixable = true;
	}
	for (i = 0; i < p->arts.n; i++) {
		const agc_artifact *a = &p->arts.v[i];

		if (!(a->flags & AGC_ART_RECORD))
			continue;
		/* A failed purge stays findable, so a rerun finishes it (R6). */
		if (fixable) {
			note_failure(fails, a->root, a->rel,
				     agc_strdup("error: kept until the rest is removed"));
			continue;
		}
		remove_one(p, r, a, fails, &fixable);
	}
	*fixable_out = fixable;
	return true;
}

/* Then the shared files (R4), for this purge alone; while something a rerun could finish is
 * left, the lines stay too: they lead a rerun to what they reference (paste files). */
static void purge_lines(agc_plan *p, agc_report *r, purge_rest *pr)
{
	failures *line_fails = &pr->line_fails;
	bool fixable = pr->fixable;
	size_t i;

	for (i = 0; i < p->lines.n; i++) {
		const agc_lineset *ls = &p->lines.v[i];
		agc_lines_result lr;
		int rootfd = agc_plan_rootfd(p, ls->root);
		int rc;

		if (!ls->count || rootfd < 0)
			continue;
		if (fixable) {
			note_failure(line_fails, ls->root, ls->rel,
				     agc_strdup("error: kept until the rest is removed"));
			continue;
		}
		rc = agc_lines_rewrite(rootfd, ls, p->ids.v, p->ids.n, p->ctx->procroot, 0, &lr);
		if (rc == 0 && lr.done) {
			char *abs = agc_plan_abspath(p->roots, ls->root, ls->rel);

			agc_report_add_item(r, false, "lines", abs, NULL, NULL, p->id, lr.count, lr.bytes, 0);
			free(abs);
		} else if (rc != 0) {
			char *why = lr.reason && strcmp(lr.reason, "error") != 0
					    ? agc_strdup(lr.reason)
					    : agc_strfmt("error: %s", agc_error_last());

			note_failure(line_fails, ls->root, ls->rel, why);
		}
	}
}

static void failures_release(failures *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->v[i].reason);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/* The release step, last of a purge: each writer lock's file removed under the coordination
 * lock while still ours, and the lock let go; when something a rerun could finish was left,
 * the file stays (it is the agent's, and Codex itself clears stale ones), only let go. */
static void release_locks(agc_plan *p, agc_report *r, purge_rest *pr)
{
	size_t i;

	for (i = 0; i < p->locks.n; i++) {
		agc_plan_lock *l = &p->locks.v[i];
		char *abs;
		int rc;

		if (l->fd < 0)
			continue;
		/* a lock made by the purge itself goes in any case: it was not there before */
		rc = agc_sesslock_release(l->dfd, l->coord, agc_plan_lock_leaf(l), l->fd, !pr->fixable || l->created);
		l->fd = -1;
		if (l->created) {
			if (rc != 1)
				note_failure(&pr->fails, l->root, l->rel, agc_strfmt("error: %s", agc_error_last()));
			continue;
		}
		if (rc != 1) {
			note_failure(&pr->fails, l->root, l->rel,
				     pr->fixable ? agc_strdup("error: kept until the rest is removed")
						 : agc_strfmt("error: %s", rc < 0 ? agc_error_last() : "replaced meanwhile"));
			continue;
		}
		abs = agc_plan_abspath(p->roots, l->root, l->rel);
		agc_report_add_item(r, false, "file", abs ? abs : l->rel, NULL, NULL, l->session, 1, 0, l->mtime_ms);
		free(abs);
	}
}

/* The databases finished, the locks released, then the residual, rediscovered (R7; run: see
 * residual). */
static void purge_finish(agc_plan *p, size_t agent, agc_report *r, unsigned flags, purge_rest *pr, void *run)
{
	if (p->dbs.n)
		rows_finish(p, r, &pr->t, flags & AGC_PURGE_SCRUB);
	txn_release(&pr->t, p->dbs.n);
	release_locks(p, r, pr);
	residual(p->ctx, agent, p, r, &pr->fails, &pr->line_fails, &pr->row_fails, run);
	r->status = r->residual.n ? AGC_ST_PARTIAL : AGC_ST_PURGED;
	failures_release(&pr->fails);
	failures_release(&pr->line_fails);
	failures_release(&pr->row_fails);
}

static void do_purge(agc_plan *p, size_t agent, agc_report *r, unsigned flags)
{
	purge_rest pr;

	if (!purge_remove(p, r, &pr))
		return;
	purge_lines(p, r, &pr);
	purge_finish(p, agent, r, flags, &pr, NULL);
}

/* A session that goes only with its parent (plan->part_of: a Claude sub-agent, SPEC
 * "Relations"). It runs inside its parent's process, so the parent's gate answers whether it is
 * in use (R5); show lists its own files; purge and a dry run refuse with nothing changed
 * (status refused, exit 4), each of its files residual with reason "parent", and a hint that
 * names the parent to purge instead. */
static void run_part(agc_ctx *ctx, size_t agent, agc_plan *p, agc_report *r, mode m)
{
	agc_plan pp;
	size_t i;
	bool live;

	if (m == MODE_PURGE || m == MODE_DRY_RUN) {
		char *hint = agc_strfmt("'%s' is a sub-agent of %s session '%s' and goes only with it: "
					"'agentgc purge %s %s' removes both",
					p->id, p->ad->name, p->part_of, p->ad->name, p->part_of);

		for (i = 0; i < p->arts.n; i++) {
			const agc_artifact *a = &p->arts.v[i];
			char *abs = agc_plan_abspath(p->roots, a->root, a->rel);

			agc_report_add_item(r, true, kind_name(a->kind), abs ? abs : a->rel, NULL, "parent",
					    a->session, 1, a->bytes, a->mtime_ms);
			free(abs);
		}
		agc_report_add_str(r, 2, hint ? hint : "a sub-agent goes only with its parent session");
		free(hint);
		r->status = AGC_ST_REFUSED;
		return;
	}
	if (discover(ctx, agent, p->part_of, &pp, DISCOVER_GATE) < 0) {
		agc_report_set_error(r, agc_error_last());
		agc_plan_release(&pp);
		return;
	}
	live = gate(&pp, r);
	if (live)
		add_hints(r, &pp);
	agc_plan_release(&pp);
	r->session.live = live;
	if (m == MODE_SHOW)
		list_plan(p, r, false);
	r->status = m == MODE_IN_USE && live ? AGC_ST_IN_USE : AGC_ST_FOUND;
}

/* Resolve "auto" or an agent name and the id's grammar. Returns the agent index, or -1 with
 * the report filled (not found, ambiguous). */
static int pick_agent(agc_ctx *ctx, const char *agent, const char *id, char *canon, agc_report *r)
{
	size_t a, found = 0, which = 0;
	char names[256] = "";
	char *failed = NULL;
	bool any_failed = false;

	if (strcmp(agent, "auto") != 0) {
		int i = agc_agent_find(agent);

		if (i < 0) {
			agc_report_set_error(r, "unknown agent");
			return -1;
		}
		/* An id outside the agent's grammar yields no path at all: not found (R1). */
		if (agc_adapter_table[i]->id_canon(id, canon) < 0) {
			r->status = AGC_ST_NOT_FOUND;
			return -1;
		}
		return i;
	}
	for (a = 0; agc_adapter_table[a]; a++) {
		char c[AGC_ID_MAX];
		agc_plan p;
		bool has;

		if (agc_adapter_table[a]->id_canon(id, c) < 0)
			continue;
		if (discover(ctx, a, c, &p, DISCOVER_ALL) < 0) {
			/* an agent that could not look is no answer of "not found" (R8) */
			if (!any_failed)
				failed = agc_strdup(agc_error_last());
			any_failed = true;
			agc_plan_release(&p);
			continue;
		}
		has = !agc_plan_empty(&p);
		agc_plan_release(&p);
		if (!has)
			continue;
		if (found++)
			strncat(names, ", ", sizeof(names) - strlen(names) - 1);
		strncat(names, agc_adapter_table[a]->name, sizeof(names) - strlen(names) - 1);
		which = a;
		memcpy(canon, c, sizeof(c));
	}
	if (found == 0) {
		if (any_failed)
			agc_report_set_error(r, failed ? failed : "out of memory");
		else
			r->status = AGC_ST_NOT_FOUND;
		free(failed);
		return -1;
	}
	free(failed);
	if (found > 1) {
		char *why = agc_strfmt("ambiguous: found in %s; name the agent", names);

		agc_report_add_item(r, true, "file", "", NULL, why ? why : "ambiguous", id, 0, 0, 0);
		free(why);
		r->status = AGC_ST_REFUSED;
		return -1;
	}
	free(r->agent);
	r->agent = agc_strdup(agc_adapter_table[which]->name);
	return (int)which;
}

/* Step 1 of a run for one id: the agent, the canonical id, and its discovery into p (R1, R6).
 * Returns 1 when the report is complete already (not found, an error, a sub-agent), 0 when p
 * is ready for the gate (*agent_out set; the caller releases p), -1 out of memory. */
static int prepare(agc_ctx *ctx, const char *agent, const char *id, mode m, unsigned flags,
		   agc_report **out, agc_plan *p, int *agent_out, const going_ids *going, char *part_of,
		   void *const *runs)
{
	agc_report *r = agc_report_new(agent ? agent : "auto", id ? id : "");
	char canon[AGC_ID_MAX];
	int a;
	size_t i;

	if (!r)
		return -1;
	*out = r;
	a = pick_agent(ctx, agent ? agent : "auto", id ? id : "", canon, r);
	if (a < 0)
		return 1;
	free(r->id);
	r->id = agc_strdup(canon);
	/* 1. Discover everything read-only (R6). in-use needs only what the gate looks at, and
	 * the rest only to tell "free" from "not found". */
	if (discover_in(ctx, (size_t)a, canon, p, m == MODE_IN_USE ? DISCOVER_GATE : m == MODE_PURGE ? DISCOVER_PURGE : DISCOVER_ALL, going,
			runs ? runs[a] : NULL, flags) < 0) {
		agc_report_set_error(r, agc_error_last());
		agc_plan_release(p);
		return 1;
	}
	if (m == MODE_IN_USE && agc_plan_empty(p)) {
		agc_plan_release(p);
		if (discover(ctx, (size_t)a, canon, p, DISCOVER_ALL) < 0) {
			agc_report_set_error(r, agc_error_last());
			agc_plan_release(p);
			return 1;
		}
	}
	if (agc_plan_empty(p)) {
		r->status = AGC_ST_NOT_FOUND;
		agc_plan_release(p);
		return 1;
	}
	for (i = 1; i < p->ids.n; i++)
		agc_report_add_str(r, 0, p->ids.v[i]);
	fill_session(r, p);
	if (p->part_of[0]) {
		if (part_of)
			memcpy(part_of, p->part_of, sizeof(p->part_of));
		run_part(ctx, (size_t)a, p, r, m);
		agc_plan_release(p);
		return 1;
	}
	*agent_out = a;
	return 0;
}

/* Steps 2 on, once the gate answered (live: in use, the holders in the report). */
static void after_gate(agc_plan *p, int a, agc_report *r, mode m, unsigned flags, bool live);

/* runs: each adapter's state for the discovery (NULL: none; see agc_adapter.run_new) */
static int run_with(agc_ctx *ctx, const char *agent, const char *id, mode m, unsigned flags, agc_report **out,
		    void *const *runs)
{
	agc_plan p;
	int a = -1, rc;

	rc = prepare(ctx, agent, id, m, flags, out, &p, &a, NULL, NULL, runs);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	/* 2. The gate, before anything changes (R5). */
	after_gate(&p, a, *out, m, flags, gate(&p, *out));
	agc_plan_release(&p);
	return 0;
}

static int run(agc_ctx *ctx, const char *agent, const char *id, mode m, unsigned flags, agc_report **out)
{
	return run_with(ctx, agent, id, m, flags, out, NULL);
}

static void after_gate(agc_plan *p, int a, agc_report *r, mode m, unsigned flags, bool live)
{
	size_t i;

	if (live) {
		add_hints(r, p);
		if (m == MODE_SHOW) {
			list_plan(p, r, false);
			r->status = AGC_ST_FOUND;
		} else {
			r->status = AGC_ST_IN_USE;
			rows_session_bytes(p, r, NULL);
			/* what could not be read is said even when nothing changes (R2) */
			for (i = 0; i < p->notes.n; i++)
				agc_report_add_item(r, true, p->notes.v[i].kind, p->notes.v[i].path, NULL, p->notes.v[i].reason,
						    p->id, 0, 0, 0);
		}
		return;
	}
	/* the adapter's advice on the session as a whole (a fork's rollout it could not read, a
	 * path it leaves alone) is said whatever the outcome */
	if (m == MODE_PURGE || m == MODE_DRY_RUN)
		for (i = 0; i < p->hints.n; i++)
			if (!p->hints.v[i].what)
				agc_report_add_str(r, 2, p->hints.v[i].text);
	if ((m == MODE_PURGE || m == MODE_DRY_RUN) && p->refusals.n) {
		/* unsafe to begin (agc_plan.refusals): nothing changes, each reason said */
		for (i = 0; i < p->refusals.n; i++)
			agc_report_add_item(r, true, p->refusals.v[i].kind, p->refusals.v[i].path, NULL,
					    p->refusals.v[i].reason, p->id, 0, 0, 0);
		r->status = m == MODE_DRY_RUN ? AGC_ST_DRY_RUN : AGC_ST_REFUSED;
		r->dry_exit = 4;
		return;
	}
	if ((m == MODE_PURGE || m == MODE_DRY_RUN) && refuse_forks(p, r, m == MODE_DRY_RUN))
		return;
	/* The writer locks, taken now and held to the end (released last, purge_finish); one
	 * taken by another process since the gate makes the session in use. */
	if (m == MODE_PURGE && !take_locks(p, r)) {
		if (r->status == AGC_ST_IN_USE)
			add_hints(r, p);
		return;
	}
	switch (m) {
	case MODE_SHOW:
		list_plan(p, r, false);
		r->status = AGC_ST_FOUND;
		break;
	case MODE_IN_USE:
		r->status = AGC_ST_FOUND;
		/* Nothing of the session was seen, only dirs that could not be read: it may be
		 * there and running, so it cannot be shown to be free, nor said not to exist (R2). */
		if (only_notes(p)) {
			for (i = 0; i < p->notes.n; i++) {
				char *cmd = agc_strfmt("cannot read '%s' (%s)", p->notes.v[i].path, p->notes.v[i].reason);

				agc_report_add_holder(r, 0, cmd ? cmd : "cannot read", "unreadable", p->notes.v[i].path);
				free(cmd);
			}
			add_hints(r, p);
			r->status = AGC_ST_IN_USE;
		}
		break;
	case MODE_DRY_RUN:
		list_plan(p, r, true);
		r->status = AGC_ST_DRY_RUN;
		r->dry_exit = r->residual.n ? 3 : 0;
		/* A busy database would refuse the purge: say so, as the purge would (R6). */
		for (i = 0; i < p->dbs.n; i++) {
			const char *why;
			char *path;
			size_t k;

			/* only the databases the purge would lock: those holding rows of it */
			if (!db_has_rows(p, i))
				continue;
			path = db_checked_path(p, i, &why);
			if (path && agc_db_write_busy(path) == 1) {
				agc_report_add_item(r, true, "rows", path, NULL, "busy", p->id, 0, 0, 0);
				r->dry_exit = 4;
			}
			/* rows in a virtual table would refuse the purge (R4): say so, as it would */
			if (path) {
				sqlite3 *db = NULL;
				bool open = agc_db_open_peek(path, &db) == 0;

				for (k = 0; open && k < p->rows.n; k++) {
					if (p->rows.v[k].db != i || !p->rows.v[k].count ||
					    agc_db_table_virtual(db, p->rows.v[k].table) != 1)
						continue;
					agc_report_add_item(r, true, "rows", path, p->rows.v[k].table, "schema", p->id,
							    0, 0, 0);
					r->dry_exit = 4;
				}
				sqlite3_close(db);
			}
			free(path);
		}
		break;
	case MODE_PURGE:
		do_purge(p, (size_t)a, r, flags);
		break;
	}
}

/* ---- what the user can do next (SPEC "Output", issue: every refusal and residual says it) - */

typedef enum reason_class {
	RC_SYMLINK,
	RC_IN_USE,
	RC_BUSY,
	RC_PERMISSION,
	RC_MOUNT,
	RC_SCHEMA,
	RC_CHILD,
	RC_NOT_REGULAR,
	RC_FREE_SPACE,
	RC_AMBIGUOUS,
	RC_PARENT,   /* a sub-agent: it goes with its parent, whose purge its own hint names */
	RC_FORK,     /* read by a surviving fork (SPEC "Relations") */
	RC_ERROR,
	RC_KEPT,     /* after RC_ERROR: what was kept is kept because of that */
	RC_N,
} reason_class;

/* The length of a database's path given the path of its -wal or -shm (or its own). */
static size_t db_of(const char *path)
{
	size_t n = strlen(path);

	if (n > 4 && (strcmp(path + n - 4, "-wal") == 0 || strcmp(path + n - 4, "-shm") == 0))
		return n - 4;
	return n;
}

static reason_class classify(const char *why)
{
	if (!why)
		return RC_ERROR;
	if (strcmp(why, "symlink") == 0)
		return RC_SYMLINK;
	if (strcmp(why, "in-use") == 0)
		return RC_IN_USE;
	if (strcmp(why, "busy") == 0)
		return RC_BUSY;
	if (strcmp(why, "permission") == 0)
		return RC_PERMISSION;
	if (strcmp(why, "mount") == 0)
		return RC_MOUNT;
	if (strcmp(why, "schema") == 0)
		return RC_SCHEMA;
	if (strcmp(why, "child") == 0)
		return RC_CHILD;
	if (strcmp(why, "free-space") == 0)
		return RC_FREE_SPACE;
	if (strncmp(why, "ambiguous", 9) == 0)
		return RC_AMBIGUOUS;
	if (strcmp(why, "parent") == 0)
		return RC_PARENT;
	if (strcmp(why, "fork") == 0)
		return RC_FORK;
	/* R8: a FIFO, a device or a socket where a file is expected is never opened */
	if (strstr(why, "not a regular file"))
		return RC_NOT_REGULAR;
	if (strcmp(why, "error: kept until the rest is removed") == 0)
		return RC_KEPT;
	return RC_ERROR;
}

/* The first symbolic link on the way to path (path itself included), lstat'ed one component
 * at a time; its target in target. malloc'd, or NULL when there is none (any more). */
static char *first_link(const char *path, char *target, size_t tsize)
{
	size_t n = strlen(path), i;
	char *pre = agc_strdup(path);
	struct stat st;

	if (!pre)
		return NULL;
	for (i = 1; i <= n; i++) {
		ssize_t len;

		if (path[i] != '/' && path[i] != '\0')
			continue;
		pre[i] = '\0';
		if (lstat(pre, &st) == 0 && S_ISLNK(st.st_mode)) {
			len = readlink(pre, target, tsize - 1);
			target[len > 0 ? (size_t)len : 0] = '\0';
			return pre;
		}
		pre[i] = path[i];
	}
	free(pre);
	return NULL;
}

static void hint_symlink(agc_report *r, const agc_item *it, const char *more)
{
	char target[1024];
	char *link = it->path && *it->path ? first_link(it->path, target, sizeof(target)) : NULL;
	char *h;

	if (link && strcmp(link, it->path) == 0)
		h = agc_strfmt("'%s' is a symbolic link (to '%s'): agentgc does not follow a link to "
			       "rewrite or remove what it points at (R2), so the session's %s in it %s left%s; "
			       "remove them where the link points by hand, or put the file itself in the link's "
			       "place and purge again",
			       link, target, strcmp(it->kind, "lines") == 0 ? "lines" : "data",
			       "were", more);
	else if (link)
		h = agc_strfmt("'%s' is a symbolic link (to '%s') inside the session's files: a link there "
			       "is never followed (R2), and is removed only when it is the artifact itself, "
			       "so '%s' behind it was left%s; if what the link points at belongs to the "
			       "session, remove it there by hand, then purge again to remove the rest",
			       link, target, it->path, more);
	else
		h = agc_strfmt("'%s' lies behind a symbolic link, which is never followed (R2), so it was "
			       "left%s; remove it by hand where the link points, if it is the session's",
			       it->path ? it->path : "", more);
	if (h)
		agc_report_add_str(r, 2, h);
	free(h);
	free(link);
}

/* One hint per kind of reason the report has (refusals and residuals alike), naming the
 * first item of that kind and how many more share it. */
static void reason_hints(agc_report *r)
{
	const agc_item *first[RC_N] = {0};
	size_t count[RC_N] = {0}, i;

	for (i = 0; i < r->residual.n; i++) {
		reason_class k = classify(r->residual.v[i].reason);

		if (!count[k]++)
			first[k] = &r->residual.v[i];
	}
	for (i = 0; i < RC_N; i++) {
		const agc_item *it = first[i];
		const char *path;
		char more[64] = "";
		char *h = NULL;

		if (!it)
			continue;
		path = it->path && *it->path ? it->path : r->id;
		if (count[i] > 1)
			snprintf(more, sizeof(more), " (and %zu more)", count[i] - 1);
		switch ((reason_class)i) {
		case RC_SYMLINK:
			hint_symlink(r, it, more);
			continue;
		case RC_IN_USE:
			h = strcmp(it->kind, "lines") == 0
				    ? agc_strfmt("'%s' is held open by a process, or its agent's lock is fresh, so "
						 "the session's lines in it were left%s: once the agent has quit, "
						 "run the same purge again; it removes what is left",
						 path, more)
				    : agc_strfmt("'%s' is held by another process, so it was left as it is%s: once "
						 "that process has quit, run the command again (a database can "
						 "also be rebuilt by hand with sqlite3 '%.*s' VACUUM)",
						 path, more, (int)db_of(path), path);
			break;
		case RC_BUSY:
			h = agc_strfmt("the database '%s' is locked by another process writing to it, so "
				       "nothing was changed: run the purge again in a moment, or once the agent "
				       "that writes it has quit",
				       path);
			break;
		case RC_PERMISSION:
			h = agc_strfmt("agentgc may not read or change '%s'%s (permission): run it as the user "
				       "who owns those files, or fix their mode, then purge again",
				       path, more);
			break;
		case RC_MOUNT:
			h = agc_strfmt("'%s'%s is a mount point or holds one: agentgc never removes across a "
				       "mount (R3); unmount it (umount), then purge again",
				       path, more);
			break;
		case RC_SCHEMA:
			h = agc_strfmt("deleting the session's rows would change more of '%s' than the session "
				       "(table %s: a trigger or a foreign key agentgc does not know), so nothing "
				       "was changed: delete the session with the agent's own command, or report "
				       "this schema to agentgc",
				       path, it->table ? it->table : "?");
			break;
		case RC_CHILD:
			h = agc_strfmt("the child session %s is still on record%s: it goes with its parent, "
				       "so once what else is listed is dealt with, run the same purge again",
				       it->session ? it->session : "?", more);
			break;
		case RC_NOT_REGULAR:
			h = agc_strfmt("'%s' is not a regular file (a FIFO, a device or a socket), which agentgc "
				       "never opens to read (R8): move or remove it by hand, then purge again",
				       path);
			break;
		case RC_FREE_SPACE:
			h = agc_strfmt("there is not room to rebuild '%s' (a copy of it is needed): free some "
				       "space, then rebuild it by hand with sqlite3 '%s' VACUUM while the agent "
				       "is not running",
				       path, path);
			break;
		case RC_AMBIGUOUS:
			h = agc_strfmt("the id '%s' was found in more than one agent: name the agent instead "
				       "of 'auto'",
				       r->id);
			break;
		case RC_PARENT:
			/* the refusal's own hint says which purge removes it: never "run it again" */
			continue;
		case RC_FORK: {
			char forks[512] = "";
			size_t f, o = 0;

			for (f = 0; f < r->forks.n && o + 2 < sizeof(forks); f++)
				o += (size_t)snprintf(forks + o, sizeof(forks) - o, "%s'%s'", f ? ", " : "", r->forks.v[f]);
			h = agc_strfmt("nothing changed: %s reads this session's history (a fork): purge %s first, or "
				       "purge with --with-forks to remove %s too",
				       forks, r->forks.n > 1 ? "them" : "it", r->forks.n > 1 ? "them" : "it");
			break;
		}
		case RC_KEPT:
			h = agc_strfmt("'%s'%s was kept on purpose, so that a rerun finds the session again: "
				       "once what failed is fixed, run the same purge again",
				       path, more);
			break;
		case RC_ERROR:
			h = agc_strfmt("'%s'%s could not be removed (%s): run the same purge again, which "
				       "finishes what is left; if it fails the same way, look at that path by hand",
				       path, more, it->reason ? it->reason : "error");
			break;
		case RC_N:
			break;
		}
		if (h)
			agc_report_add_str(r, 2, h);
		free(h);
	}
}

/* ---- many ids in one run (docs/internals.md, "Many ids") ---------------------------------- */

/* A full scan is never older than this when an id is removed (R5), or than BATCH_RESCAN_TIMES
 * as long as the last one took, when that is longer: through ps and lsof a scan takes 100 to
 * 300 ms itself, and a fixed bound would scan again before every id. */
#define BATCH_RESCAN_MS 200
#define BATCH_RESCAN_TIMES 4
/* The items of one agent a full scan looks at, from the next to go on: its cost stays that of a
 * window however many ids the run has (each scan walks every item's files again), and an item
 * past the window is scanned when its turn comes (agent_scan.hi). */
#define BATCH_SCAN_ITEMS 256

typedef struct bitem {
	agc_report *r;
	agc_plan p;
	int agent;
	bool ready;     /* p holds a discovered plan waiting for its gate */
	bool alone;     /* purged on its own, afresh, at its turn (it touches an earlier id) */
	gate_files g;   /* what the last full scan matched for it */
	agc_holders h;  /* what that scan found */
	bool unreadable;
	char err[512];
	bool pending;   /* its rows and files went; its lines and residual wait for batch_flush */
	purge_rest rest;
} bitem;

/* A shared file as it was when the first purge of the current stretch of the run began. */
typedef struct bexpect {
	int agent;
	size_t root;
	char *rel;
	bool seen;        /* it existed then */
	agc_filekey key;
} bexpect;

/* A process the last full scan saw: its pid and its identity (agc_proc_each_pid_ident: its
 * /proc inode and its argv, which an exec changes). */
typedef struct seen_proc {
	pid_t pid;
	uint64_t ident;
} seen_proc;

typedef struct seen_list {
	seen_proc *v;
	size_t n, cap;
} seen_list;

/* The last full scan of one agent's ids. */
typedef struct agent_scan {
	seen_list seen;                             /* the listing it began with, sorted by pid */
	struct { pid_t *v; size_t n, cap; } agents;  /* the agent's own processes then */
	int64_t scanned_ms;                         /* monotonic ms when it began */
	int64_t took_ms;                            /* how long it took */
	size_t hi;                                  /* the items it looked at end before hi */
} agent_scan;

typedef struct batch {
	agc_ctx *ctx;
	bitem *it;
	size_t n;
	agent_scan as[AGC_AGENTS_MAX];
	size_t agent;                                   /* of the scan being made */
	agc_buf argv;
	void *run[AGC_AGENTS_MAX];                      /* each adapter's state (run_new) */
	struct { bexpect *v; size_t n, cap; } expect;  /* of the items pending */
	agc_hset earlier;                               /* of the items discovered (touches_earlier) */
	mode m;
	unsigned flags;
	agc_report **out;
} batch;

static int seen_cmp(const void *a, const void *b)
{
	const seen_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int seen_cb(pid_t pid, uint64_t ident, void *ud)
{
	seen_list *l = ud;
	seen_proc *s = AGC_ARRAY_PUSH(l, (size_t)1 << 22);

	if (!s)
		return -1;
	s->pid = pid;
	s->ident = ident;
	return 0;
}

/* The key of an id (kind 'i') or an artifact (kind 'a', by dev and ino) of adapter ad in
 * batch.earlier; returns its length. */
static size_t earlier_key(unsigned char *k, size_t cap, const agc_adapter *ad, const char *id, dev_t dev, ino_t ino)
{
	uint64_t d = (uint64_t)dev, i = (uint64_t)ino;
	size_t n = sizeof(ad), l;

	memcpy(k + 1, &ad, sizeof(ad));
	if (id) {
		k[0] = 'i';
		l = strlen(id);
		if (l > cap - 1 - n)
			l = cap - 1 - n;
		memcpy(k + 1 + n, id, l);
		return 1 + n + l;
	}
	k[0] = 'a';
	memcpy(k + 1 + n, &d, sizeof(d));
	memcpy(k + 1 + n + sizeof(d), &i, sizeof(i));
	return 1 + n + sizeof(d) + sizeof(i);
}

/* Whether item k's plan shares an id or an artifact with an earlier item's, or is the part of
 * one (a duplicate, a parent and its sub-agent): then what the earlier one removes changes
 * what k's discovery would find, and k is purged on its own at its turn. The earlier items'
 * ids and artifacts are in batch.earlier (earlier_add). */
static bool touches_earlier(const batch *b, size_t k)
{
	const agc_plan *p = &b->it[k].p;
	unsigned char key[AGC_ID_MAX + 64];
	size_t i;

	if (p->batch_conflict)
		return true;
	for (i = 0; i < p->ids.n; i++)
		if (agc_hset_has(&b->earlier, key, earlier_key(key, sizeof(key), p->ad, p->ids.v[i], 0, 0)))
			return true;
	/* a fork that goes earlier in the run no longer blocks this id one at a time */
	for (i = 0; i < p->forks.n; i++)
		if (agc_hset_has(&b->earlier, key, earlier_key(key, sizeof(key), p->ad, p->forks.v[i], 0, 0)))
			return true;
	for (i = 0; i < p->arts.n; i++)
		if (agc_hset_has(&b->earlier, key,
				 earlier_key(key, sizeof(key), p->ad, NULL, p->arts.v[i].dev, p->arts.v[i].ino)))
			return true;
	return false;
}

/* Item k's ids and artifacts, for touches_earlier of the items after it. */
static int earlier_add(batch *b, size_t k)
{
	const agc_plan *p = &b->it[k].p;
	unsigned char key[AGC_ID_MAX + 64];
	size_t i;

	for (i = 0; i < p->ids.n; i++)
		if (agc_hset_add(&b->earlier, key, earlier_key(key, sizeof(key), p->ad, p->ids.v[i], 0, 0)) < 0)
			return -1;
	for (i = 0; i < p->arts.n; i++)
		if (agc_hset_add(&b->earlier, key,
				 earlier_key(key, sizeof(key), p->ad, NULL, p->arts.v[i].dev, p->arts.v[i].ino)) < 0)
			return -1;
	return 0;
}

/* The agent's own processes (agc_adapter.agent_proc), among those the listing saw. */
static int note_agent_procs(batch *b)
{
	const agc_adapter *ad = agc_adapter_table[b->agent];
	agent_scan *as = &b->as[b->agent];
	size_t i;

	as->agents.n = 0;
	if (!ad->agent_proc)
		return 0;
	for (i = 0; i < as->seen.n; i++) {
		pid_t *slot;

		/* a process whose argv cannot be read is re-checked too: nothing shows it is not
		 * the agent's */
		if (agc_proc_argv_listed(b->ctx->procroot, as->seen.v[i].pid, (size_t)256 << 10, &b->argv) == 0 &&
		    !ad->agent_proc(agc_buf_cstr(&b->argv), b->argv.len))
			continue;
		slot = AGC_ARRAY_PUSH(&as->agents, (size_t)1 << 22);
		if (!slot)
			return -1;
		*slot = as->seen.v[i].pid;
	}
	return 0;
}

static bool batch_accounted(pid_t pid, void *ud)
{
	const agc_plan *p = ud;

	return p->ad->accounted && p->ad->accounted(p, pid);
}

/* The query of items of one agent (ready ones from `from` on); only: the pids to look at
 * (NULL: all). The files of each item are collected anew (its dirs walked again). */
static int batch_query(batch *b, size_t from, size_t to, size_t only_item, const pid_t *only, size_t n_only,
		       agc_holders *out, gate_files *files_out, bool *full)
{
	const agc_adapter *ad = agc_adapter_table[b->agent];
	struct { const char **v; size_t n, cap; } ids = {0};
	struct { size_t *v; size_t n, cap; } sess = {0};
	struct { agc_gate_file *v; size_t n, cap; } cwd = {0};
	gate_files g = {0};
	agc_gate_query q;
	const agc_plan *acct = NULL;
	size_t k, i;
	int rc = -1;

	if (full)
		*full = false;
	for (k = from; k < to; k++) {
		bitem *it = &b->it[k];
		size_t first = g.n;

		if (!it->ready || it->alone || it->agent != (int)b->agent || (only_item != (size_t)-1 && k != only_item))
			continue;
		for (i = 0; i < it->p.ids.n; i++) {
			const char **s = AGC_ARRAY_PUSH(&ids, AGC_PLAN_MAX_ITEMS);
			size_t *e = AGC_ARRAY_PUSH(&sess, AGC_PLAN_MAX_ITEMS);

			if (!s || !e)
				goto out;
			*s = it->p.ids.v[i];
			*e = k;
		}
		gate_collect(&it->p, &g);
		if (g.short_) {
			agc_error_set(-1, GATE_SHORT);
			goto out;
		}
		if (g.full) {
			if (full)
				*full = true;
			agc_error_set(-1, "too many files to check for holders");
			goto out;
		}
		for (i = first; i < g.n; i++)
			g.v[i].session = k;
		if (it->p.has_agent_cwd && ad->agent_proc) {
			agc_gate_file *c = AGC_ARRAY_PUSH(&cwd, AGC_PLAN_MAX_ITEMS);

			if (!c)
				goto out;
			memset(c, 0, sizeof(*c));
			c->id = it->p.agent_cwd;
			c->label = it->p.meta.project ? it->p.meta.project : "";
			c->session = k;
			acct = &it->p;
		}
	}
	memset(&q, 0, sizeof(q));
	q.procroot = b->ctx->procroot;
	q.ids = ids.v;
	q.n_ids = ids.n;
	q.id_session = sess.v;
	q.env_names = ad->env_names;
	q.n_env_names = ad->n_env_names;
	q.every_session = true;
	q.files = g.v;
	q.n_files = g.n;
	q.with_maps = true;
	q.exempt = exempt_cb;
	q.exempt_ud = (void *)ad;
	if (cwd.n) {
		q.agent_cwd = cwd.v;
		q.n_agent_cwd = cwd.n;
		q.agent_proc = ad->agent_proc;
		/* a live registry entry of the agent accounts for the process whatever the session
		 * (the adapter asks its own registry dir, the same for every plan of it) */
		q.accounted = batch_accounted;
		q.accounted_ud = (void *)acct;
	}
	if (only) {
		q.only_pids = only;
		q.n_only_pids = n_only;
	}
	/* both callers listed the process table just before (batch_scan, batch_recheck): what
	 * started since is new to the scan's list of seen processes, and re-checked */
	q.listed = true;
	rc = (only && !n_only) ? 0 : agc_holders_scan(&q, out);
out:
	free(ids.v);
	free(sess.v);
	free(cwd.v);
	if (files_out && rc == 0)
		*files_out = g;
	else
		free(g.v);
	return rc;
}

/* The items of the agent in [lo, hi) that a full scan looks at. */
static bool scanned_item(const batch *b, size_t k)
{
	const bitem *it = &b->it[k];

	return it->ready && !it->alone && it->agent == (int)b->agent;
}

/* One pass over every process for the items in [lo, hi) (R5), after the listing. When their
 * files together are more than the gate looks at in one pass, the range is halved and each
 * half scanned on its own; an item alone over the bound cannot be checked (in use, R5). */
static void batch_scan_range(batch *b, size_t lo, size_t hi, int listed)
{
	agc_holders h = {0};
	gate_files g = {0};
	size_t k, i, n_items = 0;
	bool full = false;
	int rc = listed;

	for (k = lo; k < hi; k++)
		n_items += scanned_item(b, k);
	if (!n_items)
		return;
	if (rc == 0)
		rc = batch_query(b, lo, hi, (size_t)-1, NULL, 0, &h, &g, &full);
	if (rc < 0 && full && n_items > 1) {
		size_t half = 0, mid = lo;

		agc_holders_release(&h);
		free(g.v);
		for (mid = lo; mid < hi && half < n_items / 2; mid++)
			half += scanned_item(b, mid);
		batch_scan_range(b, lo, mid, 0);
		batch_scan_range(b, mid, hi, 0);
		return;
	}
	for (k = lo; k < hi; k++) {
		bitem *it = &b->it[k];

		if (!scanned_item(b, k))
			continue;
		agc_holders_release(&it->h);
		free(it->g.v);
		memset(&it->g, 0, sizeof(it->g));
		it->unreadable = rc < 0;
		if (rc < 0) {
			snprintf(it->err, sizeof(it->err), "%s", agc_error_last());
			continue;
		}
		for (i = 0; i < h.n; i++)
			if (h.v[i].session == k)
				agc_holders_add(&it->h, h.v[i].pid, h.v[i].why, h.v[i].command, h.v[i].what,
						h.v[i].file);
	}
	/* the labels of the files point into the plans, which outlive the scan's list */
	for (k = lo; rc == 0 && k < hi; k++) {
		bitem *it = &b->it[k];

		if (!scanned_item(b, k))
			continue;
		for (i = 0; i < g.n; i++) {
			agc_gate_file *f;

			if (g.v[i].session != k)
				continue;
			f = AGC_ARRAY_PUSH(&it->g, AGC_GATE_MAX_FILES);
			if (f)
				*f = g.v[i];
		}
		/* a holder's file index is into the scan's list: make it the item's */
		for (i = 0; i < it->h.n; i++)
			if (it->h.v[i].file < g.n) {
				size_t j, n = 0;

				for (j = 0; j < it->h.v[i].file; j++)
					n += g.v[j].session == k;
				it->h.v[i].file = n;
			}
	}
	free(g.v);
	agc_holders_release(&h);
}

/* A full scan for the next BATCH_SCAN_ITEMS items of the agent still to go, from `from` on:
 * the process table listed with each process's identity, the agent's own processes noted,
 * then one pass over every process for all of them (R5); every pass begins after the
 * listing. */
static void batch_scan(batch *b, size_t from)
{
	agent_scan *as = &b->as[b->agent];
	size_t hi, items = 0;
	int rc;

	for (hi = from; hi < b->n && items < BATCH_SCAN_ITEMS; hi++)
		items += scanned_item(b, hi);
	as->hi = hi;

	/* the clock starts before the listing: every process listed is checked after it */
	as->scanned_ms = agc_clock_mono_us() / 1000;
	as->seen.n = 0;
	rc = agc_proc_each_pid_ident(b->ctx->procroot, seen_cb, &as->seen);
	if (rc == 0) {
		qsort(as->seen.v, as->seen.n, sizeof(*as->seen.v), seen_cmp);
		rc = note_agent_procs(b);
	}
	batch_scan_range(b, from, hi, rc);
	as->took_ms = agc_clock_mono_us() / 1000 - as->scanned_ms;
}

/* Just before item k goes: re-check it (R5). (a) its registry read again (a session resumed
 * since the scan), (b) every process that did not exist at the scan or has run another program
 * since (a pid not listed then, or listed with another identity: another /proc inode, another
 * argv) and (c) the agent's own processes
 * checked fully against it; a holder refuses only this id. Returns true when in use. */
static bool batch_recheck(batch *b, size_t k)
{
	bitem *it = &b->it[k];
	struct { pid_t *v; size_t n, cap; } look = {0};
	agc_plan fresh;
	agc_holders h = {0};
	agent_scan *as;
	size_t i;
	bool live = false;

	/* (a) the registry, by a discovery of the holders alone: the registry read from scratch
	 * (no adapter keeps it in the run's state), and no dir of artifacts probed again (the
	 * removals of the run change those dirs, so a discovery of everything would list each
	 * again for every id) */
	if (discover_in(b->ctx, (size_t)it->agent, it->p.id, &fresh, DISCOVER_HOLDERS, NULL, b->run[it->agent],
			it->p.flags) < 0) {
		agc_report_add_holder(it->r, 0, agc_error_last(), "process-table", NULL);
		agc_plan_release(&fresh);
		return true;
	}
	for (i = 0; i < fresh.holders.n; i++) {
		agc_report_add_holder(it->r, fresh.holders.v[i].pid, fresh.holders.v[i].command,
				      agc_why_name(fresh.holders.v[i].why), fresh.holders.v[i].what);
		live = true;
	}
	agc_plan_release(&fresh);
	/* (b) the processes that are new since the scan */
	b->agent = (size_t)it->agent;
	as = &b->as[b->agent];
	{
		seen_list now = {0};

		if (agc_proc_each_pid_ident(b->ctx->procroot, seen_cb, &now) < 0) {
			free(now.v);
			agc_report_add_holder(it->r, 0, agc_error_last(), "process-table", NULL);
			return true;
		}
		for (i = 0; i < now.n; i++) {
			seen_proc key = now.v[i], *was = bsearch(&key, as->seen.v, as->seen.n, sizeof(key), seen_cmp);
			pid_t *slot;

			if (was && was->ident == key.ident)
				continue;
			slot = AGC_ARRAY_PUSH(&look, (size_t)1 << 22);
			if (!slot) {
				/* a process that cannot be listed for the check cannot be shown not to hold */
				free(now.v);
				free(look.v);
				agc_report_add_holder(it->r, 0, "out of memory", "process-table", NULL);
				return true;
			}
			*slot = key.pid;
		}
		free(now.v);
	}
	/* (c) the agent's own processes: one may have started this session's work since */
	for (i = 0; i < as->agents.n; i++) {
		pid_t *slot = AGC_ARRAY_PUSH(&look, (size_t)1 << 22);

		if (!slot) {
			free(look.v);
			agc_report_add_holder(it->r, 0, "out of memory", "process-table", NULL);
			return true;
		}
		*slot = as->agents.v[i];
	}
	if (look.n) {
		gate_files g = {0};

		if (batch_query(b, k, b->n, k, look.v, look.n, &h, &g, NULL) < 0) {
			agc_report_add_holder(it->r, 0, agc_error_last(), "process-table", NULL);
			live = true;
		}
		for (i = 0; i < h.n; i++)
			add_scan_holder(&it->p, it->r, &g, &h.v[i]);
		live |= h.n > 0;
		free(g.v);
		agc_holders_release(&h);
	}
	free(look.v);
	return live;
}

/* The gate's answer for item k from the last full scan, and the re-check. */
static bool batch_gate(batch *b, size_t k)
{
	bitem *it = &b->it[k];
	agent_scan *as;
	int64_t age;
	size_t i;
	bool live = false;

	/* (d) no process goes unchecked for longer than BATCH_RESCAN_MS (or BATCH_RESCAN_TIMES the
	 * last scan's own time): past that, or past the items the last scan looked at, a full scan
	 * of the next ids to go */
	b->agent = (size_t)it->agent;
	as = &b->as[b->agent];
	age = as->took_ms * BATCH_RESCAN_TIMES > BATCH_RESCAN_MS ? as->took_ms * BATCH_RESCAN_TIMES : BATCH_RESCAN_MS;
	if (agc_clock_mono_us() / 1000 - as->scanned_ms > age || k >= as->hi || it->unreadable)
		batch_scan(b, k);
	if (it->unreadable) {
		/* Not knowing who runs is treated as "in use" (R5). */
		agc_report_add_holder(it->r, 0, it->err, "process-table", NULL);
		return true;
	}
	if (batch_recheck(b, k))
		live = true;
	if (gate_locks(&it->p, it->r))
		live = true;
	for (i = 0; i < it->h.n; i++)
		add_scan_holder(&it->p, it->r, &it->g, &it->h.v[i]);
	return live || it->h.n > 0;
}

/* Item k's shared files as they are now, before its gate, unless an item pending already
 * noted them: the rewrite at the end of the stretch refuses a file changed since (R4). */
static int batch_expect(batch *b, size_t k)
{
	bitem *it = &b->it[k];
	size_t i, j;

	for (i = 0; i < it->p.lines.n; i++) {
		const agc_lineset *ls = &it->p.lines.v[i];
		int rootfd = agc_plan_rootfd(&it->p, ls->root), dfd = -1, err;
		const char *leaf;
		struct stat st;
		bexpect *e;

		for (j = 0; j < b->expect.n; j++)
			if (b->expect.v[j].agent == it->agent && b->expect.v[j].root == ls->root &&
			    strcmp(b->expect.v[j].rel, ls->rel) == 0)
				break;
		if (j < b->expect.n)
			continue;
		e = AGC_ARRAY_PUSH(&b->expect, AGC_PLAN_MAX_ITEMS);
		if (!e)
			return -1;
		e->agent = it->agent;
		e->root = ls->root;
		if (!(e->rel = agc_strdup(ls->rel))) {
			b->expect.n--;
			return -1;
		}
		/* looked at as the rewrite opens it: beneath the root, the leaf not followed */
		if (rootfd >= 0 && agc_walk_parent(rootfd, ls->rel, &dfd, &leaf, &err) == AGC_WALK_OK &&
		    fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			e->seen = true;
			agc_filekey_of(&st, &e->key);
		}
		if (dfd >= 0)
			close(dfd);
	}
	return 0;
}

typedef struct bid {
	char *id;
	size_t item;
} bid;

static int bid_cmp(const void *a, const void *b)
{
	const bid *x = a, *y = b;
	int c = strcasecmp(x->id, y->id);

	return c ? c : x->item < y->item ? -1 : x->item > y->item;
}

/* One rewrite of shared file e for every pending item with lines in it (R4: held open, locked,
 * or changed since the stretch began: nothing changes, and each item's residual says its
 * lines remain, with the reason). */
static void batch_rewrite(batch *b, const bexpect *e)
{
	struct { bid *v; size_t n, cap; } ids = {0};
	char **sorted = NULL;
	uint64_t *counts = NULL, *bytes = NULL;
	const agc_lineset *first = NULL;
	agc_plan *fp = NULL;
	agc_lines_result lr;
	agc_lineset ls;
	size_t k, i, j;
	int rc, rootfd;
	char *why = NULL;

	for (k = 0; k < b->n; k++) {
		bitem *it = &b->it[k];

		if (!it->pending || it->agent != e->agent)
			continue;
		for (i = 0; i < it->p.lines.n; i++) {
			const agc_lineset *l = &it->p.lines.v[i];

			if (l->root != e->root || strcmp(l->rel, e->rel) != 0 || !l->count ||
			    agc_plan_rootfd(&it->p, l->root) < 0)
				continue;
			/* while something a rerun could finish is left, the lines stay too: they lead
			 * a rerun to what they reference (paste files) */
			if (it->rest.fixable) {
				note_failure(&it->rest.line_fails, l->root, l->rel,
					     agc_strdup("error: kept until the rest is removed"));
				continue;
			}
			if (!first) {
				first = l;
				fp = &it->p;
			}
			for (j = 0; j < it->p.ids.n; j++) {
				bid *x = AGC_ARRAY_PUSH(&ids, AGC_PLAN_MAX_ITEMS);

				if (!x) {
					why = agc_strfmt("error: %s", agc_error_last());
					goto fail;
				}
				x->id = it->p.ids.v[j];
				x->item = k;
			}
		}
	}
	if (!first)
		goto out;
	qsort(ids.v, ids.n, sizeof(*ids.v), bid_cmp);
	sorted = calloc(ids.n, sizeof(*sorted));
	counts = calloc(ids.n, sizeof(*counts));
	bytes = calloc(ids.n, sizeof(*bytes));
	if (!sorted || !counts || !bytes) {
		why = agc_strdup("error: out of memory");
		goto fail;
	}
	for (i = 0; i < ids.n; i++)
		sorted[i] = ids.v[i].id;
	ls = *first;
	ls.expect = true;
	if (e->seen)
		ls.expected = e->key;
	else
		memset(&ls.expected, 0, sizeof(ls.expected)); /* any file there now is a new one */
	rootfd = agc_plan_rootfd(fp, first->root);
	rc = agc_lines_rewrite_ids(rootfd, &ls, sorted, ids.n, b->ctx->procroot, 0, &lr, counts, bytes);
	if (rc == 0 && lr.done) {
		for (k = 0; k < b->n; k++) {
			bitem *it = &b->it[k];
			uint64_t c = 0, by = 0;
			char *abs;

			for (i = 0; i < ids.n; i++)
				if (ids.v[i].item == k) {
					c += counts[i];
					by += bytes[i];
				}
			if (!c)
				continue;
			abs = agc_plan_abspath(it->p.roots, e->root, e->rel);
			agc_report_add_item(it->r, false, "lines", abs, NULL, NULL, it->p.id, c, by, 0);
			free(abs);
		}
	} else if (rc != 0) {
		why = lr.reason && strcmp(lr.reason, "error") != 0 ? agc_strdup(lr.reason)
								   : agc_strfmt("error: %s", agc_error_last());
		goto fail;
	}
	goto out;
fail:
	/* each item concerned: its lines remain, with the reason */
	for (k = 0; k < b->n; k++) {
		bitem *it = &b->it[k];
		bool mine = false;

		for (i = 0; i < ids.n && !mine; i++)
			mine = ids.v[i].item == k;
		for (i = 0; mine && i < it->p.lines.n; i++)
			if (it->p.lines.v[i].root == e->root && strcmp(it->p.lines.v[i].rel, e->rel) == 0)
				break;
		if (mine && i < it->p.lines.n)
			note_failure(&it->rest.line_fails, e->root, it->p.lines.v[i].rel,
				     agc_strdup(why ? why : "error"));
	}
out:
	free(why);
	free(ids.v);
	free(sorted);
	free(counts);
	free(bytes);
}

/* The deferred artifacts of pending item it (AGC_ART_DEFERRED), after the rewrites of the
 * stretch, from the state made after them: each that nothing names any more goes, as it would
 * at its turn one id at a time; one still named (an earlier id's lines stayed: it was live, or
 * its rewrite was refused) stays, as then. */
static void flush_deferred(batch *b, bitem *it)
{
	const agc_adapter *ad = it->p.ad;
	size_t i;

	for (i = 0; i < it->p.arts.n; i++) {
		const agc_artifact *a = &it->p.arts.v[i];
		int u;

		if (!(a->flags & AGC_ART_DEFERRED))
			continue;
		if (it->rest.fixable) {
			note_failure(&it->rest.fails, a->root, a->rel, agc_strdup("error: kept until the rest is removed"));
			continue;
		}
		u = ad->unnamed ? ad->unnamed(&it->p, a, b->run[it->agent]) : 0;
		if (u < 0)
			note_failure(&it->rest.fails, a->root, a->rel, agc_strfmt("error: %s", agc_error_last()));
		else if (u == 1)
			remove_one(&it->p, it->r, a, &it->rest.fails, &it->rest.fixable);
	}
}

/* Each adapter's state as after the removals of a stretch (R7): renewed where the adapter
 * can say what of it is still good, else made anew. */
static void batch_renew(batch *b)
{
	size_t a;

	for (a = 0; agc_adapter_table[a]; a++) {
		const agc_adapter *ad = agc_adapter_table[a];

		if (ad->run_renew && b->run[a]) {
			ad->run_renew(b->run[a]);
			continue;
		}
		if (ad->run_free)
			ad->run_free(b->run[a]);
		b->run[a] = ad->run_new ? ad->run_new() : NULL;
	}
}

/* The end of a stretch of pending purges: each shared file rewritten once for all of them,
 * then each agent's state renewed (nothing read before the rewrite is reused) and each item's
 * residual rediscovered from it (R7); their reports are done. */
static void batch_flush(batch *b)
{
	size_t k, i;
	bool any = false;

	for (k = 0; k < b->n && !any; k++)
		any = b->it[k].pending;
	if (!any)
		return;
	for (i = 0; i < b->expect.n; i++) {
		batch_rewrite(b, &b->expect.v[i]);
		free(b->expect.v[i].rel);
	}
	b->expect.n = 0;
	batch_renew(b);
	for (k = 0; k < b->n; k++) {
		bitem *it = &b->it[k];

		if (!it->pending)
			continue;
		flush_deferred(b, it);
		purge_finish(&it->p, (size_t)it->agent, it->r, b->flags, &it->rest, b->run[it->agent]);
		reason_hints(it->r);
		b->out[k] = it->r;
		it->r = NULL;
	}
	/* the plans last: a failure noted for one names its shared file by another's path */
	for (k = 0; k < b->n; k++) {
		bitem *it = &b->it[k];

		if (!it->pending)
			continue;
		it->pending = false;
		agc_plan_release(&it->p);
		it->ready = false;
	}
}

static int keep_cmp(const void *a, const void *b);

/* The guard's answer for a discovered plan: NULL (go on), "kept" or "unsettled". */
static const char *guard_skip(agc_ctx *ctx, const agc_guard *g, const agc_plan *p)
{
	size_t i;

	for (i = 0; g->n_keep && i < p->ids.n; i++) {
		const char *id = p->ids.v[i];

		if (bsearch(&id, g->keep, g->n_keep, sizeof(*g->keep), keep_cmp))
			return "kept";
	}
	if (g->orphans_only) {
		for (i = 0; i < p->arts.n; i++)
			if ((p->arts.v[i].flags & (AGC_ART_RECORD | AGC_ART_POINTER)) == AGC_ART_RECORD)
				return "recorded";
		for (i = 0; !p->record_is_file && i < p->rows.n; i++)
			if (p->rows.v[i].record && p->rows.v[i].count)
				return "recorded";
	}
	if (g->settle_ms > 0) {
		int64_t last = p->meta.updated_ms, cut = agc_ctx_now_ms(ctx) - g->settle_ms;

		/* SPEC "prune": the newest mtime anywhere in its artifacts; any stat error counts
		 * as just now */
		for (i = 0; i < p->arts.n; i++) {
			if (p->arts.v[i].mtime_unsure)
				return "unsettled";
			if (p->arts.v[i].mtime_ms > last)
				last = p->arts.v[i].mtime_ms;
		}
		for (i = 0; i < p->notes.n; i++) {
			const char *why = p->notes.v[i].reason ? p->notes.v[i].reason : "error";

			if (strcmp(why, "permission") == 0 || strncmp(why, "error", 5) == 0)
				return "unsettled";
		}
		if (last > cut)
			return "unsettled";
	}
	return NULL;
}

/* Whether the purge of plan p in mode m can wait for the end of the stretch (batch_flush):
 * a purge with no database, no writer lock, no fork and no refusal, which goes straight to
 * its removal after its gate. */
static bool stretch_ok(const agc_plan *p, mode m)
{
	return m == MODE_PURGE && !p->dbs.n && !p->locks.n && !p->forks.n && !p->refusals.n;
}

static bool has_deferred(const agc_plan *p)
{
	size_t i;

	for (i = 0; i < p->arts.n; i++)
		if (p->arts.v[i].flags & AGC_ART_DEFERRED)
			return true;
	return false;
}

static int many(agc_ctx *ctx, const char *agent, const char *const *idv, size_t n, mode m,
		unsigned flags, const agc_guard *g, agc_report **out, size_t *out_done)
{
	size_t removed = 0;

	batch b;
	going_ids going = {0};
	size_t k, a, fds = 0, fd_budget = agc_fd_budget();
	bool over = false;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	b.ctx = ctx;
	b.n = n;
	b.m = m;
	b.flags = flags;
	b.out = out;

	b.argv = (agc_buf)AGC_BUF_INIT_MAX((size_t)256 << 10);
	b.it = calloc(n ? n : 1, sizeof(*b.it));
	if (!b.it)
		return agc_error_oom();
	/* every discovery of the run, residuals included, leaves what the keep list reaches */
	if (g && g->n_keep) {
		ctx->spare = g->keep;
		ctx->n_spare = g->n_keep;
	}
	/* the caller's states, from its last call: renewed, as after a stretch of this one */
	if (g && g->runs) {
		for (a = 0; agc_adapter_table[a]; a++)
			b.run[a] = g->runs[a];
		batch_renew(&b);
	}
	for (a = 0; agc_adapter_table[a]; a++)
		if (!b.run[a] && agc_adapter_table[a]->run_new && !(b.run[a] = agc_adapter_table[a]->run_new())) {
			rc = -1;
			goto out;
		}
	/* 1. Discover every id read-only (R6), each with the ids before it going, so that what
	 * the run one at a time would find differently is told (agc_plan.batch_conflict). */
	for (k = 0; k < n; k++) {
		bitem *it = &b.it[k];
		char part_of[AGC_ID_MAX] = "";
		int prc = prepare(ctx, agent, idv[k], m, flags, &it->r, &it->p, &it->agent, &going, part_of,
				  b.run);
		size_t j;

		if (prc < 0) {
			rc = -1;
			goto out;
		}
		it->ready = prc == 0;
		if (it->ready && g) {
			const char *why = guard_skip(ctx, g, &it->p);

			if (why) {
				agc_plan_release(&it->p);
				it->ready = false;
				if (agc_report_set_skip(it->r, why) < 0) {
					rc = -1;
					goto out;
				}
			}
		}
		/* the plans wait for their turn with their roots open: past what the limit on open
		 * files leaves for them, this id and every later one are purged on their own at their
		 * turn, from scratch, as if each touched an earlier one (a discovery short of
		 * descriptors fails: R6) */
		if (it->ready) {
			fds += agc_plan_fds(&it->p);
			over |= fds > fd_budget;
		}
		if (it->ready && over) {
			agc_plan_release(&it->p);
			it->ready = false;
			it->alone = true;
			continue;
		}
		if (it->ready && touches_earlier(&b, k))
			it->alone = true;
		/* an artifact deferred to the end of the stretch (AGC_ART_DEFERRED) needs a stretch:
		 * a purge with no database and no fork or refusal; else on its own, from scratch */
		if (it->ready && !it->alone && has_deferred(&it->p) && !stretch_ok(&it->p, m))
			it->alone = true;
		/* a sub-agent whose parent goes earlier in the run: one at a time, it would be gone
		 * with it by its turn */
		for (j = 0; part_of[0] && j < k && !it->alone; j++)
			if (b.it[j].ready && strcmp(b.it[j].p.ad->name, it->r->agent) == 0 &&
			    strcmp(b.it[j].p.id, part_of) == 0)
				it->alone = true;
		if (it->ready) {
			if (going_add(&going, it->r->id) < 0 || earlier_add(&b, k) < 0) {
				rc = -1;
				goto out;
			}
		}
	}
	if (g && g->discovered)
		g->discovered(g->ud);
	/* 2. One full scan per agent, for its first ids (R5); the rest as their turn comes */
	for (a = 0; agc_adapter_table[a]; a++) {
		for (k = 0; k < n && !(b.it[k].ready && !b.it[k].alone && b.it[k].agent == (int)a); k++)
			;
		if (k == n)
			continue;
		b.agent = a;
		batch_scan(&b, 0);
	}
	/* 3. In argument order: each id re-checked just before it goes, then purged as alone */
	for (k = 0; k < n; k++) {
		bitem *it = &b.it[k];

		/* a budget: asked once this run removed something, before each id after it */
		if (g && g->stop && removed && g->stop(g->ud))
			break;
		if (it->alone) {
			/* what went before it is all done first, as one id at a time would have it */
			batch_flush(&b);
			if (it->ready)
				agc_plan_release(&it->p);
			it->ready = false;
			agc_report_free(it->r);
			it->r = NULL;
			/* its discovery from the state made after the last rewrite (reused only
			 * while the files are as they were then) */
			if (run_with(ctx, agent, idv[k], m, flags, &it->r, b.run) < 0) {
				rc = -1;
				goto out;
			}
			removed++;
		} else if (it->ready) {
			bool live, nodb = m == MODE_PURGE && !it->p.dbs.n && !it->p.locks.n;
			/* a refusal (a store that cannot be read) or a fork goes through after_gate,
			 * which refuses: never straight to the removal */
			bool fast = stretch_ok(&it->p, m);

			/* a purge with no database: its shared-file lines and its residual wait for the
			 * end of the stretch (batch_flush); the file is noted first, as it is before
			 * anything of this item goes */
			if (nodb && batch_expect(&b, k) < 0) {
				rc = -1;
				goto out;
			}
			live = batch_gate(&b, k);
			removed += !live;
			if (fast && !live) {
				if (purge_remove(&it->p, it->r, &it->rest)) {
					it->pending = true;
					continue;
				}
			} else {
				if (m == MODE_PURGE && !live)
					batch_flush(&b);
				after_gate(&it->p, it->agent, it->r, m, flags, live);
			}
			agc_plan_release(&it->p);
			it->ready = false;
		}
		if (m == MODE_PURGE || m == MODE_DRY_RUN)
			reason_hints(it->r);
		/* prune: a live session is one it leaves, with its holders */
		if (g && it->r && agc_report_status(it->r) == AGC_ST_IN_USE && agc_report_set_skip(it->r, "live") < 0) {
			rc = -1;
			goto out;
		}
		out[k] = it->r;
		it->r = NULL;
	}
	batch_flush(&b);
	if (out_done)
		*out_done = k;
out:
	for (k = 0; k < n; k++) {
		if (b.it[k].pending) {
			txn_release(&b.it[k].rest.t, b.it[k].p.dbs.n);
			failures_release(&b.it[k].rest.fails);
			failures_release(&b.it[k].rest.line_fails);
			failures_release(&b.it[k].rest.row_fails);
		}
		if (b.it[k].ready)
			agc_plan_release(&b.it[k].p);
		agc_report_free(b.it[k].r);
		agc_holders_release(&b.it[k].h);
		free(b.it[k].g.v);
	}
	if (rc < 0)
		for (k = 0; k < n; k++) {
			agc_report_free(out[k]);
			out[k] = NULL;
		}
	going_release(&going);
	agc_hset_release(&b.earlier);
	free(b.it);
	for (a = 0; a < AGC_AGENTS_MAX; a++) {
		free(b.as[a].seen.v);
		free(b.as[a].agents.v);
	}
	agc_buf_release(&b.argv);
	for (a = 0; agc_adapter_table[a]; a++) {
		if (g && g->runs) {
			g->runs[a] = b.run[a];
			continue;
		}
		if (agc_adapter_table[a]->run_free)
			agc_adapter_table[a]->run_free(b.run[a]);
	}
	for (k = 0; k < b.expect.n; k++)
		free(b.expect.v[k].rel);
	free(b.expect.v);
	ctx->spare = NULL;
	ctx->n_spare = 0;
	return rc;
}

void agc_keep_closure_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static int keep_add(char ***v, size_t *n, size_t *cap, const char *id)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return agc_error_oom();
		*v = nv;
		*cap = c;
	}
	if (!((*v)[*n] = agc_strdup(id)))
		return agc_error_oom();
	(*n)++;
	return 0;
}

static int keep_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int agc_keep_closure(agc_ctx *ctx, size_t agent, const char *const *ids, size_t n, char ***out, size_t *n_out)
{
	const agc_adapter *ad = agc_adapter_table[agent];
	char **v = NULL;
	size_t nv = 0, cap = 0, i, j;
	void *run = NULL;
	int rc = 0;

	*out = NULL;
	*n_out = 0;
	if (ad->run_new && !(run = ad->run_new()))
		return agc_error_oom();
	for (i = 0; i < n && rc == 0; i++) {
		char canon[AGC_ID_MAX];
		agc_plan p;

		if (!ids[i] || ad->id_canon(ids[i], canon) < 0)
			continue;
		/* the gate's discovery: the relations, without the shared files' lines */
		if (discover_in(ctx, agent, canon, &p, DISCOVER_KEEP, NULL, run, 0) < 0) {
			rc = -1;
		} else if (p.refusals.n || p.notes.n) {
			/* a store or dir that cannot be read may hold a relation: none is assumed */
			const agc_note *no = p.refusals.n ? &p.refusals.v[0] : &p.notes.v[0];

			rc = agc_error_set(-1, "the relations of %s sessions cannot be read ('%s': %s)", ad->name,
					   no->path ? no->path : "", no->reason ? no->reason : "error");
		}
		for (j = 0; rc == 0 && j < p.ids.n; j++)
			rc = keep_add(&v, &nv, &cap, p.ids.v[j]);
		agc_plan_release(&p);
	}
	if (ad->run_free)
		ad->run_free(run);
	if (rc < 0) {
		agc_keep_closure_free(v, nv);
		return -1;
	}
	/* sorted, each once */
	if (nv)
		qsort(v, nv, sizeof(*v), keep_cmp);
	for (i = j = 0; i < nv; i++) {
		if (j && strcmp(v[j - 1], v[i]) == 0) {
			free(v[i]);
			continue;
		}
		v[j++] = v[i];
	}
	*out = v;
	*n_out = j;
	return 0;
}

int agc_plan_discover(agc_ctx *ctx, size_t agent, const char *id, void *run, agc_plan *p)
{
	char canon[AGC_ID_MAX];

	memset(p, 0, sizeof(*p));
	if (agc_adapter_table[agent]->id_canon(id, canon) < 0)
		return agc_error_set(-1, "'%s' is no %s id", id, agc_adapter_table[agent]->name);
	if (discover_in(ctx, agent, canon, p, DISCOVER_ALL, NULL, run, 0) < 0) {
		agc_plan_release(p);
		return -1;
	}
	return 0;
}

int agc_purge(agc_ctx *ctx, const char *agent, const char *id, unsigned flags, agc_report **out)
{
	if (!out)
		return agc_error_set(-1, "agc_purge needs somewhere to put its report");
	/* never a silent no-op: an option that cannot be honoured is refused before anything */
	if (flags & ~(unsigned)(AGC_PURGE_DRY_RUN | AGC_PURGE_SCRUB | AGC_PURGE_WITH_FORKS))
		return agc_error_set(-1, "unknown purge flags 0x%x", flags);
	if (run(ctx, agent, id, (flags & AGC_PURGE_DRY_RUN) ? MODE_DRY_RUN : MODE_PURGE, flags, out) < 0)
		return -1;
	reason_hints(*out);
	return 0;
}

int agc_purge_many(agc_ctx *ctx, const char *agent, const char *const *ids, size_t n, unsigned flags,
		   agc_report **out)
{
	return agc_purge_guarded(ctx, agent, ids, n, flags, NULL, out, NULL);
}

int agc_purge_guarded(agc_ctx *ctx, const char *agent, const char *const *ids, size_t n, unsigned flags,
		      const agc_guard *g, agc_report **out, size_t *out_done)
{
	size_t i;

	if (out_done)
		*out_done = 0;
	if (!out || (n && !ids))
		return agc_error_set(-1, "a purge of many ids needs ids and somewhere to put their reports");
	if (flags & ~(unsigned)(AGC_PURGE_DRY_RUN | AGC_PURGE_SCRUB | AGC_PURGE_WITH_FORKS))
		return agc_error_set(-1, "unknown purge flags 0x%x", flags);
	for (i = 0; i < n; i++)
		out[i] = NULL;
	return many(ctx, agent, ids, n, (flags & AGC_PURGE_DRY_RUN) ? MODE_DRY_RUN : MODE_PURGE, flags, g, out,
		    out_done);
}

int agc_show(agc_ctx *ctx, const char *agent, const char *id, agc_report **out)
{
	if (!out)
		return agc_error_set(-1, "agc_show needs somewhere to put its report");
	return run(ctx, agent, id, MODE_SHOW, 0, out);
}

int agc_in_use(agc_ctx *ctx, const char *agent, const char *id, agc_report **out)
{
	if (!out)
		return agc_error_set(-1, "agc_in_use needs somewhere to put its report");
	return run(ctx, agent, id, MODE_IN_USE, 0, out);
}
