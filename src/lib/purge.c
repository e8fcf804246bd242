/* The engine shared by every agent: discover, gate, remove, residual (SPEC R5-R7). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core.h"
#include "db.h"
#include "error.h"
#include "holders.h"
#include "lines.h"
#include "remove.h"
#include "report.h"
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

static int discover(agc_ctx *ctx, size_t agent, const char *canon, agc_plan *p, bool gate_only)
{
	const agc_rootset *rs = agc_ctx_roots(ctx, agent);
	size_t i;

	agc_plan_init(p, agc_adapter_table[agent], ctx, rs, canon);
	p->gate_only = gate_only;
	if (!rs)
		return -1;
	if (agc_plan_add_id(p, canon) < 0)
		return -1;
	/* Every root is opened up front, whether or not the adapter reaches it: one that exists
	 * but cannot be read is noted as residual, never skipped silently (R2). */
	for (i = 0; i < p->roots->n; i++)
		agc_plan_rootfd(p, i);
	return agc_adapter_table[agent]->discover(p);
}

/* discover() after a purge, for its residual (R7). */
static int rediscover(agc_ctx *ctx, size_t agent, const char *canon, agc_plan *p)
{
	const agc_rootset *rs = agc_ctx_roots(ctx, agent);

	agc_plan_init(p, agc_adapter_table[agent], ctx, rs, canon);
	p->again = true;
	if (!rs || agc_plan_add_id(p, canon) < 0)
		return -1;
	return agc_adapter_table[agent]->discover(p);
}

static void fill_session(agc_report *r, const agc_plan *p)
{
	uint64_t bytes = 0;
	int64_t updated = p->meta.updated_ms;
	size_t i;

	for (i = 0; i < p->arts.n; i++) {
		bytes += p->arts.v[i].bytes;
		if (p->arts.v[i].mtime_ms > updated)
			updated = p->arts.v[i].mtime_ms;
	}
	for (i = 0; i < p->rows.n; i++)
		bytes += p->rows.v[i].bytes;
	r->has_session = true;
	r->session.agent = p->ad->name;
	r->session.id = agc_strdup(p->id);
	r->session.parent = p->meta.parent ? agc_strdup(p->meta.parent) : NULL;
	r->session.project = p->meta.project ? agc_strdup(p->meta.project) : NULL;
	r->session.title = p->meta.title ? agc_strdup(p->meta.title) : NULL;
	r->session.created_ms = p->meta.created_ms;
	r->session.updated_ms = updated;
	r->session.bytes = bytes;
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
static bool gate(agc_plan *p, agc_report *r)
{
	gate_files g = {0};
	agc_holders h = {0};
	agc_gate_query q;
	agc_gate_file project;
	size_t i;

	for (i = 0; i < p->holders.n; i++)
		agc_report_add_holder(r, p->holders.v[i].pid, p->holders.v[i].command,
				      agc_why_name(p->holders.v[i].why), p->holders.v[i].what);
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
				agc_remove_visit(rootfd, a->rel, AGC_GATE_MAX_FILES, gate_visit, &g, &b, &mt);
			} else {
				/* Behind a link nothing is removed, yet a process writing there still
				 * runs the session: look through the link, read-only. */
				const char *slash = strrchr(a->rel, '/');
				char *parent = slash ? agc_strndup(a->rel, (size_t)(slash - a->rel)) : NULL;
				int pfd = parent ? openat(rootfd, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

				if (pfd >= 0) {
					agc_remove_visit_in(pfd, slash + 1, NULL, AGC_GATE_MAX_FILES, gate_visit, &g,
							    &b, &mt);
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
	if (g.full) {
		agc_error_set(-1, "too many files to check for holders");
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
	for (i = 0; i < h.n; i++) {
		char *abs = NULL;

		if ((h.v[i].why == AGC_WHY_OPEN_FILE || h.v[i].why == AGC_WHY_CWD) &&
		    h.v[i].file < g.n) {
			size_t j;

			for (j = 0; j < p->arts.n && !abs; j++)
				if (p->arts.v[j].rel == g.v[h.v[i].file].label)
					abs = agc_plan_abspath(p->roots, p->arts.v[j].root, p->arts.v[j].rel);
		}
		agc_report_add_holder(r, h.v[i].pid, h.v[i].command, agc_why_name(h.v[i].why),
				      abs ? abs : h.v[i].what);
		free(abs);
	}
	agc_holders_release(&h);
	free(g.v);
	return r->holders.n > 0;
unreadable:
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
		if (h->pid <= 0)
			snprintf(line, sizeof(line), "%s: the session cannot be shown to be free (%s)",
				 h->command, h->why);
		else if (strcmp(h->why, "open-file") == 0 && h->what)
			snprintf(line, sizeof(line),
				 "pid %d has '%s' open or mapped: see ls -l /proc/%d/fd, /proc/%d/maps, or lsof -p %d",
				 h->pid, h->what, h->pid, h->pid, h->pid);
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
		agc_report_add_str(r, 2, line);
	}
}

/* True when discovery saw nothing of the session but dirs it could not read. */
static bool only_notes(const agc_plan *p)
{
	size_t i;

	if (!p->notes.n || p->arts.n || p->holders.n)
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
	rc = agc_remove_beneath(rootfd, a->rel, a->dev, a->ino, a->last, 0, &res);
	if (rc == 0) {
		agc_report_add_item(r, false, kind_name(a->kind), abs, NULL, NULL, a->session, 1,
				    a->kind == 'd' ? res.bytes : a->bytes, a->mtime_ms);
	} else if (rc != AGC_ENOTFOUND) {
		/* A link on the way is a permanent refusal; anything else a rerun may finish. */
		if (res.status != AGC_WALK_SYMLINK)
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

/* After a purge: discover again from scratch and report everything still present (R7). */
static void residual(agc_ctx *ctx, size_t agent, agc_plan *before, agc_report *r,
		     const failures *fails, const failures *line_fails)
{
	agc_plan after;
	size_t i, j;

	if (rediscover(ctx, agent, before->id, &after) < 0) {
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
		agc_report_add_item(r, true, "file", after.notes.v[i].path, NULL, after.notes.v[i].reason,
				    after.id, 0, 0, 0);
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

			agc_report_add_item(r, true, "rows", abs, rs->table,
					    linked ? "symlink" : "error: still present", after.id, rs->count,
					    rs->bytes, 0);
		}
		free(abs);
	}
	/* Each child still on record is named, with reason child (R7): those the parent still
	 * leads to (their rows or files are counted above)... */
	for (i = 1; i < after.ids.n; i++) {
		char *abs = after.dbs.n ? agc_plan_abspath(after.roots, after.dbs.v[0].root, after.dbs.v[0].rel)
					: NULL;

		agc_report_add_item(r, true, after.dbs.n ? "rows" : "file", abs ? abs : "", NULL, "child",
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
		if (discover(ctx, agent, canon, &cp, false) == 0) {
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
			 (rr.status == AGC_WALK_MOUNT || rr.status == AGC_WALK_XDEV || rr.status == AGC_WALK_DEEP)) {
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
						   AGC_LINES_DRY_RUN, &lr);

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
		agc_report_add_item(r, true, "file", p->notes.v[i].path, NULL, p->notes.v[i].reason, p->id,
				    0, 0, 0);
	for (i = 0; i < p->rows.n; i++) {
		const agc_rowset *rs = &p->rows.v[i];
		char *abs;

		if (!rs->count)
			continue;
		abs = agc_plan_abspath(p->roots, p->dbs.v[rs->db].root, p->dbs.v[rs->db].rel);
		agc_report_add_item(r, false, "rows", abs, rs->table, NULL, p->id, rs->count, rs->bytes, 0);
		free(abs);
	}
}

/* Is database d of the plan still the file discovery saw, reached without a link (R2)?
 * Returns its absolute path (malloc'd) or NULL with *why set. */
static char *db_checked_path(agc_plan *p, size_t d, const char **why)
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
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != db->dev || st.st_ino != db->ino) {
		close(dfd);
		*why = S_ISLNK(st.st_mode) ? "symlink" : "error: database changed since discovery";
		return NULL;
	}
	close(dfd);
	return agc_plan_abspath(p->roots, db->root, db->rel);
}

/* Delete the rows of every database, one transaction each; every database that holds rows
 * is write-locked before a row is deleted in any (R6). Busy anywhere: nothing changes and
 * the purge is refused. handles[d] stay open for the checkpoint. Returns 0, 1 (refused: the
 * report says why) or -1. */
static int delete_rows(agc_plan *p, agc_report *r, sqlite3 **handles)
{
	char *ids = agc_plan_ids_json(p);
	uint64_t *deleted = calloc(p->rows.n + 1, sizeof(*deleted));
	bool *skipped = calloc(p->dbs.n + 1, sizeof(*skipped));
	size_t d, i;
	int rc = 0;

	if (!ids || !deleted || !skipped) {
		free(ids);
		free(deleted);
		free(skipped);
		return agc_error_oom();
	}
	/* 1. Lock every database that has rows of the session. */
	for (d = 0; d < p->dbs.n && rc == 0; d++) {
		const char *why = NULL;
		char *path;
		bool has = false;

		for (i = 0; i < p->rows.n; i++)
			has |= p->rows.v[i].db == d && p->rows.v[i].count > 0;
		if (!has)
			continue;
		path = db_checked_path(p, d, &why);
		if (!path && strcmp(why, "symlink") == 0) {
			/* A linked database is left whole, like any artifact behind a link (R2);
			 * the rest of the session goes and the rows stay findable. */
			skipped[d] = true;
			continue;
		}
		if (!path) {
			char *abs = agc_plan_abspath(p->roots, p->dbs.v[d].root, p->dbs.v[d].rel);

			agc_report_add_item(r, true, "rows", abs, NULL, why, p->id, 0, 0, 0);
			free(abs);
			rc = 1;
			break;
		}
		if (agc_db_open_rw(path, &handles[d]) < 0 || agc_db_exec(handles[d], "BEGIN IMMEDIATE") < 0) {
			bool busy = strstr(agc_error_last(), "busy") != NULL;
			char *msg = busy ? agc_strdup("busy") : agc_strfmt("error: %s", agc_error_last());

			agc_report_add_item(r, true, "rows", path, NULL, msg ? msg : "busy", p->id, 0, 0, 0);
			free(msg);
			rc = busy ? 1 : -1;
		}
		free(path);
	}
	/* 2. Delete, in the adapter's order (rows reached through others first). */
	for (i = 0; i < p->rows.n && rc == 0; i++) {
		const agc_rowset *rs = &p->rows.v[i];
		sqlite3 *db = handles[rs->db];
		sqlite3_stmt *st = NULL;
		char *sql;
		int src;

		if (!rs->count || !db)
			continue;
		sql = agc_rows_sql(rs, NULL);
		if (!sql) {
			rc = -1;
			break;
		}
		src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_text(st, 1, ids, -1, SQLITE_STATIC);
			src = sqlite3_step(st);
		}
		if (src != SQLITE_DONE) {
			agc_db_fail(db, src, rs->table);
			rc = -1;
		} else {
			deleted[i] = (uint64_t)sqlite3_changes64(db);
		}
		sqlite3_finalize(st);
		free(sql);
	}
	/* 3. Commit each, or roll every one back. */
	for (d = 0; d < p->dbs.n; d++) {
		if (!handles[d])
			continue;
		if (rc == 0 && agc_db_exec(handles[d], "COMMIT") < 0)
			rc = -1;
		if (rc != 0)
			sqlite3_exec(handles[d], "ROLLBACK", NULL, NULL, NULL);
	}
	if (rc == 0) {
		for (i = 0; i < p->rows.n; i++) {
			const agc_rowset *rs = &p->rows.v[i];
			char *abs;

			if (!deleted[i])
				continue;
			abs = agc_plan_abspath(p->roots, p->dbs.v[rs->db].root, p->dbs.v[rs->db].rel);
			agc_report_add_item(r, false, "rows", abs, rs->table, NULL, p->id, deleted[i],
					    rs->count ? rs->bytes * deleted[i] / rs->count : 0, 0);
			free(abs);
		}
	}
	free(deleted);
	free(skipped);
	free(ids);
	return rc;
}

/* After everything: fold the WAL back into the database and truncate it without waiting for
 * readers, so deleted text does not stay in the WAL (R6). */
static void checkpoint(agc_plan *p, agc_report *r, sqlite3 **handles)
{
	size_t d;

	for (d = 0; d < p->dbs.n; d++) {
		int log = 0, done = 0, rc;

		if (!handles[d])
			continue;
		sqlite3_busy_timeout(handles[d], 0);
		rc = sqlite3_wal_checkpoint_v2(handles[d], NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
		if (rc != SQLITE_OK) {
			char *abs = agc_plan_abspath(p->roots, p->dbs.v[d].root, p->dbs.v[d].rel);
			char *wal = abs ? agc_strfmt("%s-wal", abs) : NULL;

			agc_report_add_item(r, true, "file", wal ? wal : "", NULL, "in-use", p->id, 0, 0, 0);
			free(wal);
			free(abs);
		}
		sqlite3_close(handles[d]);
		handles[d] = NULL;
	}
}

static void do_purge(agc_plan *p, size_t agent, agc_report *r)
{
	failures fails = {0}, line_fails = {0};
	bool fixable = false;
	sqlite3 **handles = NULL;
	size_t i;
	int drc;

	/* Rows first, in one transaction per database (R6). */
	if (p->dbs.n) {
		handles = calloc(p->dbs.n, sizeof(*handles));
		if (!handles) {
			agc_report_set_error(r, "out of memory");
			return;
		}
		drc = delete_rows(p, r, handles);
		if (drc != 0) {
			for (i = 0; i < p->dbs.n; i++)
				if (handles[i])
					sqlite3_close(handles[i]);
			free(handles);
			if (drc > 0) {
				r->status = AGC_ST_REFUSED;
			} else {
				agc_report_set_error(r, agc_error_last());
			}
			return;
		}
	}
	/* Then files, the record (the transcript discovery keys on) last (R6). */
	for (i = 0; i < p->arts.n; i++)
		if (!(p->arts.v[i].flags & AGC_ART_RECORD))
			remove_one(p, r, &p->arts.v[i], &fails, &fixable);
	for (i = 0; i < p->arts.n; i++) {
		const agc_artifact *a = &p->arts.v[i];

		if (!(a->flags & AGC_ART_RECORD))
			continue;
		/* A failed purge stays findable, so a rerun finishes it (R6). */
		if (fixable) {
			note_failure(&fails, a->root, a->rel,
				     agc_strdup("error: kept until the rest is removed"));
			continue;
		}
		remove_one(p, r, a, &fails, &fixable);
	}
	/* Then the shared files (R4); while something a rerun could finish is left, the lines
	 * stay too: they lead a rerun to what they reference (paste files). */
	for (i = 0; i < p->lines.n; i++) {
		const agc_lineset *ls = &p->lines.v[i];
		agc_lines_result lr;
		int rootfd = agc_plan_rootfd(p, ls->root);
		int rc;

		if (!ls->count || rootfd < 0)
			continue;
		if (fixable) {
			note_failure(&line_fails, ls->root, ls->rel,
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

			note_failure(&line_fails, ls->root, ls->rel, why);
		}
	}
	if (handles)
		checkpoint(p, r, handles);
	free(handles);
	residual(p->ctx, agent, p, r, &fails, &line_fails);
	r->status = r->residual.n ? AGC_ST_PARTIAL : AGC_ST_PURGED;
	if (p->rows.n)
		agc_report_add_str(r, 2, "the agent writes without secure_delete: older copies of deleted rows "
					 "may survive in database pages until 'agentgc compact' or --scrub rebuilds it");
	for (i = 0; i < fails.n; i++)
		free(fails.v[i].reason);
	free(fails.v);
	for (i = 0; i < line_fails.n; i++)
		free(line_fails.v[i].reason);
	free(line_fails.v);
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
		if (discover(ctx, a, c, &p, false) < 0) {
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

static int run(agc_ctx *ctx, const char *agent, const char *id, mode m, agc_report **out)
{
	agc_report *r = agc_report_new(agent ? agent : "auto", id ? id : "");
	char canon[AGC_ID_MAX];
	agc_plan p;
	int a;
	size_t i;

	if (!r)
		return -1;
	*out = r;
	a = pick_agent(ctx, agent ? agent : "auto", id ? id : "", canon, r);
	if (a < 0)
		return 0;
	free(r->id);
	r->id = agc_strdup(canon);
	/* 1. Discover everything read-only (R6). in-use needs only what the gate looks at, and
	 * the rest only to tell "free" from "not found". */
	if (discover(ctx, (size_t)a, canon, &p, m == MODE_IN_USE) < 0) {
		agc_report_set_error(r, agc_error_last());
		agc_plan_release(&p);
		return 0;
	}
	if (m == MODE_IN_USE && agc_plan_empty(&p)) {
		agc_plan_release(&p);
		if (discover(ctx, (size_t)a, canon, &p, false) < 0) {
			agc_report_set_error(r, agc_error_last());
			agc_plan_release(&p);
			return 0;
		}
	}
	if (agc_plan_empty(&p)) {
		r->status = AGC_ST_NOT_FOUND;
		agc_plan_release(&p);
		return 0;
	}
	for (i = 1; i < p.ids.n; i++)
		agc_report_add_str(r, 0, p.ids.v[i]);
	fill_session(r, &p);
	/* 2. The gate, before anything changes (R5). */
	if (gate(&p, r)) {
		add_hints(r, &p);
		if (m == MODE_SHOW) {
			list_plan(&p, r, false);
			r->status = AGC_ST_FOUND;
		} else {
			r->status = AGC_ST_IN_USE;
			/* what could not be read is said even when nothing changes (R2) */
			for (i = 0; i < p.notes.n; i++)
				agc_report_add_item(r, true, "file", p.notes.v[i].path, NULL, p.notes.v[i].reason,
						    p.id, 0, 0, 0);
		}
		agc_plan_release(&p);
		return 0;
	}
	switch (m) {
	case MODE_SHOW:
		list_plan(&p, r, false);
		r->status = AGC_ST_FOUND;
		break;
	case MODE_IN_USE:
		r->status = AGC_ST_FOUND;
		/* Nothing of the session was seen, only dirs that could not be read: it may be
		 * there and running, so it cannot be shown to be free, nor said not to exist (R2). */
		if (only_notes(&p)) {
			for (i = 0; i < p.notes.n; i++) {
				char *cmd = agc_strfmt("cannot read '%s' (%s)", p.notes.v[i].path, p.notes.v[i].reason);

				agc_report_add_holder(r, 0, cmd ? cmd : "cannot read", "unreadable", p.notes.v[i].path);
				free(cmd);
			}
			add_hints(r, &p);
			r->status = AGC_ST_IN_USE;
		}
		break;
	case MODE_DRY_RUN:
		list_plan(&p, r, true);
		r->status = AGC_ST_DRY_RUN;
		r->dry_exit = r->residual.n ? 3 : 0;
		/* A busy database would refuse the purge: say so, as the purge would (R6). */
		for (i = 0; i < p.dbs.n; i++) {
			const char *why;
			char *path;
			bool has = false;
			size_t k;

			/* only the databases the purge would lock: those holding rows of it */
			for (k = 0; k < p.rows.n; k++)
				has |= p.rows.v[k].db == i && p.rows.v[k].count > 0;
			if (!has)
				continue;
			path = db_checked_path(&p, i, &why);
			if (path && agc_db_write_busy(path) == 1) {
				agc_report_add_item(r, true, "rows", path, NULL, "busy", p.id, 0, 0, 0);
				r->dry_exit = 4;
			}
			free(path);
		}
		break;
	case MODE_PURGE:
		do_purge(&p, (size_t)a, r);
		break;
	}
	agc_plan_release(&p);
	return 0;
}

int agc_purge(agc_ctx *ctx, const char *agent, const char *id, unsigned flags, agc_report **out)
{
	return run(ctx, agent, id, (flags & AGC_PURGE_DRY_RUN) ? MODE_DRY_RUN : MODE_PURGE, out);
}

int agc_show(agc_ctx *ctx, const char *agent, const char *id, agc_report **out)
{
	return run(ctx, agent, id, MODE_SHOW, out);
}

int agc_in_use(agc_ctx *ctx, const char *agent, const char *id, agc_report **out)
{
	int rc = run(ctx, agent, id, MODE_IN_USE, out);

	return rc;
}
