/* prune (SPEC "prune"): select sessions by age, keep list and project, and purge each under
 * the purge's own rules. One listing per agent selects the candidates; each agent's are then
 * purged in batches (agc_purge_guarded: one process-table scan per batch, each id discovered
 * afresh, checked against the keep closure and the settle time on that discovery, and
 * re-checked by the gate just before it goes). A budget stops the run between two removals;
 * the next run begins with the agent after the one it stopped in. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "core.h"
#include "error.h"
#include "report.h"
#include "session.h"
#include "state.h"

#define PRUNE_BATCH 2048             /* ids per agc_purge_guarded run, at most (prune_batch) */
#define PRUNE_STATE "prune-next"     /* the agent a budget-limited run stopped before */
#define PRUNE_CANDIDATES_MAX ((size_t)1 << 24)

typedef struct cand {
	char *id;
	char *title, *project;
	int64_t updated_ms, created_ms;
	uint64_t bytes, disk;
	bool orphan;
} cand;

typedef struct cand_list {
	cand *v;
	size_t n, cap;
	size_t scanned;
	int64_t now_ms, settle_ms;
	bool oom;
} cand_list;

typedef struct prune_run {
	agc_ctx *ctx;
	const agc_prune_opts *o;
	agc_prune_summary *sum;
	int (*cb)(const agc_report *r, void *ud);
	void *ud;
	int64_t start_us;
	size_t agent_removed;  /* sessions the current agent removed (or would, in a dry run) */
	bool stop_cb;          /* cb asked to stop */
	struct { char **v; size_t n, cap; } dbs; /* --scrub: the databases rows went from */
} prune_run;

static void cands_release(cand_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].id);
		free(l->v[i].title);
		free(l->v[i].project);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int add_cand(const agc_session_info *s, void *ud)
{
	cand_list *l = ud;
	cand *c;

	l->scanned++;
	c = AGC_ARRAY_PUSH(l, PRUNE_CANDIDATES_MAX);
	if (!c) {
		l->oom = true;
		return 1;
	}
	memset(c, 0, sizeof(*c));
	c->id = agc_strdup(s->id);
	c->title = s->title ? agc_strdup(s->title) : NULL;
	c->project = s->project ? agc_strdup(s->project) : NULL;
	c->updated_ms = s->updated_ms;
	c->created_ms = s->created_ms;
	c->bytes = s->bytes;
	c->disk = s->disk;
	c->orphan = s->orphan != 0;
	if (!c->id || (s->title && !c->title) || (s->project && !c->project)) {
		l->oom = true;
		return 1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int64_t elapsed_ms(const prune_run *P)
{
	return (agc_clock_mono_us() - P->start_us) / 1000;
}

static bool out_of_budget(const prune_run *P)
{
	return P->o->budget_ms >= 0 && elapsed_ms(P) >= P->o->budget_ms;
}

/* The guard's stop: asked after a removal of the batch, before the next id. */
static bool guard_stop(void *ud)
{
	prune_run *P = ud;

	return out_of_budget(P);
}

static void guard_discovered(void *ud)
{
	prune_run *P = ud;

	if (P->o->discovered)
		P->o->discovered(P->o->ud);
}

static void progress(prune_run *P)
{
	P->sum->elapsed_ms = elapsed_ms(P);
	if (P->o->progress)
		P->o->progress(P->sum, P->o->ud);
}

static uint64_t removed_bytes(const agc_report *r)
{
	uint64_t b = 0;
	size_t i;

	for (i = 0; i < agc_report_removed_count(r); i++)
		b += agc_report_removed(r, i)->bytes;
	return b;
}

/* --scrub: each database the report's rows went from, once. */
static void note_dbs(prune_run *P, const agc_report *r)
{
	size_t i, j;

	for (i = 0; i < agc_report_removed_count(r); i++) {
		const agc_item *it = agc_report_removed(r, i);
		char **slot;

		if (strcmp(it->kind, "rows") != 0 || !it->path)
			continue;
		for (j = 0; j < P->dbs.n && strcmp(P->dbs.v[j], it->path) != 0; j++)
			;
		if (j < P->dbs.n)
			continue;
		slot = AGC_ARRAY_PUSH(&P->dbs, 4096);
		if (slot && !(*slot = agc_strdup(it->path)))
			P->dbs.n--;
	}
}

static int on_scrub(const agc_compact_info *ci, void *ud)
{
	prune_run *P = ud;

	if (strcmp(ci->status, "compacted") == 0 || strcmp(ci->status, "dry-run") == 0)
		P->sum->scrubbed++;
	else
		P->sum->scrub_left++;
	if (P->o->scrubbed)
		P->o->scrubbed(ci, P->o->ud);
	return 0;
}

/* Count a report and hand it to the caller; true when the run goes on. */
static bool tell(prune_run *P, const agc_report *r)
{
	agc_prune_summary *s = P->sum;
	const char *skip = agc_report_skip(r);

	switch (agc_report_status(r)) {
	case AGC_ST_PURGED:
		s->purged++;
		break;
	case AGC_ST_PARTIAL:
		s->partial++;
		break;
	case AGC_ST_DRY_RUN:
		/* what the purge would have been */
		if (r->dry_exit == 0)
			s->purged++;
		else if (r->dry_exit == 3)
			s->partial++;
		else if (r->dry_exit == 4)
			s->refused++;
		else if (r->dry_exit == 5)
			s->not_found++;
		else
			s->errors++;
		break;
	case AGC_ST_IN_USE:
	case AGC_ST_REFUSED:
		s->refused++;
		break;
	case AGC_ST_NOT_FOUND:
		s->not_found++;
		break;
	case AGC_ST_SKIPPED:
		if (skip && strcmp(skip, "live") == 0)
			s->skipped_live++;
		else if (skip && strcmp(skip, "kept") == 0)
			s->skipped_kept++;
		else if (skip && strcmp(skip, "recorded") == 0)
			s->skipped_recorded++;
		else
			s->skipped_unsettled++;
		break;
	default:
		s->errors++;
		break;
	}
	if (agc_report_status(r) == AGC_ST_PURGED || agc_report_status(r) == AGC_ST_PARTIAL ||
	    (agc_report_status(r) == AGC_ST_DRY_RUN && (r->dry_exit == 0 || r->dry_exit == 3))) {
		s->bytes += removed_bytes(r);
		if (P->o->flags & AGC_PURGE_SCRUB)
			note_dbs(P, r);
	}
	if (P->cb && P->cb(r, P->ud))
		P->stop_cb = true;
	progress(P);
	return !P->stop_cb;
}

/* A candidate the listing already shows unsettled: skipped without a discovery. */
static bool tell_unsettled(prune_run *P, const char *agent, const cand *c)
{
	agc_report *r = agc_report_new(agent, c->id);
	bool go;

	if (!r || agc_report_set_skip(r, "unsettled") < 0) {
		agc_report_free(r);
		P->sum->errors++;
		return true;
	}
	r->has_session = true;
	r->session.agent = agc_report_agent(r);
	r->session.id = agc_strdup(c->id);
	r->session.title = c->title ? agc_strdup(c->title) : NULL;
	r->session.project = c->project ? agc_strdup(c->project) : NULL;
	r->session.created_ms = c->created_ms;
	r->session.updated_ms = c->updated_ms;
	r->session.bytes = c->bytes;
	r->session.disk = c->disk;
	go = tell(P, r);
	agc_report_free(r);
	return go;
}

static void warn(const prune_run *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(const prune_run *P, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!P->o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	P->o->warn(msg, P->o->ud);
}

/* The agents of the run in their order: the first one after the rotation state's. */
static size_t agent_order(const prune_run *P, const char *dir, size_t *order)
{
	size_t n = agc_agent_count(), first = 0, k = 0, i;
	char path[PATH_MAX + 32], buf[64];
	int fd;

	if (P->o->budget_ms >= 0 && dir) {
		snprintf(path, sizeof(path), "%s/%s", dir, PRUNE_STATE);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t got = read(fd, buf, sizeof(buf) - 1);

			close(fd);
			if (got > 0) {
				int a;

				buf[got] = '\0';
				buf[strcspn(buf, "\n")] = '\0';
				if ((a = agc_agent_find(buf)) >= 0)
					first = (size_t)a;
			}
		}
	}
	for (i = 0; i < n; i++) {
		size_t a = (first + i) % n;

		if (!P->o->agents || (P->o->agents & agc_agent_bit(agc_agent_name(a))))
			order[k++] = a;
	}
	return k;
}

/* The keep closure of one agent: the listed ids of its grammar and what goes with them. 0,
 * or -1 when its relations cannot be read (no session of the agent may go then). */
static int keep_of(prune_run *P, size_t a, char ***kv, size_t *kn)
{
	const agc_prune_opts *o = P->o;

	*kv = NULL;
	*kn = 0;
	if (!o->keep_given || !o->n_keep)
		return 0;
	return agc_keep_closure(P->ctx, a, o->keep, o->n_keep, kv, kn);
}

/* The root sessions of agent a that the project selectors leave, into l; every one of them,
 * whatever its age (told by pick), so that the scan counts them all. What could not be read is
 * said through opts->warn when warn is set. agc_ls's return. */
static int list_agent(const prune_run *P, size_t a, cand_list *l, bool warn)
{
	agc_ls_opts lo = AGC_LS_OPTS_INIT;

	lo.agents = agc_agent_bit(agc_agent_name(a));
	lo.project = P->o->project;
	lo.project_gone = P->o->project_gone;
	lo.orphans = P->o->orphans;
	if (warn) {
		lo.warn = P->o->warn;
		lo.warn_ud = P->o->ud;
	}
	return agc_ls(P->ctx, &lo, add_cand, l);
}

/* 1 when the listed session c is a candidate (old enough, not kept), 2 when it is one that
 * the listing already shows unsettled, else 0. */
static int pick(const prune_run *P, const cand *c, char *const *kv, size_t kn)
{
	const agc_prune_opts *o = P->o;
	int64_t now = agc_ctx_now_ms(P->ctx);
	const char *id = c->id;

	if (o->older_than_ms > 0 && c->updated_ms > now - o->older_than_ms)
		return 0;
	if (o->orphans && !c->orphan)
		return 0;
	if (kn && bsearch(&id, kv, kn, sizeof(*kv), cmp_str))
		return 0;
	return o->settle_ms > 0 && c->updated_ms > now - o->settle_ms ? 2 : 1;
}

/* One agent: its listing, its candidates, their purges. Returns 0, 1 when the run stops here
 * (budget, or cb), -1 when memory ran out. */
/* The ids of agent a per agc_purge_guarded run: PRUNE_BATCH, fewer when the limit on open files
 * would not leave room for that many plans, each with the agent's roots open (past the room,
 * the engine purges the rest one at a time, slowly but as safely). */
static size_t prune_batch(agc_ctx *ctx, size_t a)
{
	const agc_rootset *rs = agc_ctx_roots(ctx, a);
	size_t per = (rs ? rs->n : AGC_ROOTS_MAX) + 1, n = agc_fd_budget() / per;

	return n < 1 ? 1 : n > PRUNE_BATCH ? PRUNE_BATCH : n;
}

static int prune_agent(prune_run *P, size_t a, size_t *left)
{
	const agc_prune_opts *o = P->o;
	const char *name = agc_agent_name(a);
	cand_list l = {0};
	char **kv = NULL, **ids = NULL;
	/* the adapters' states, kept from one batch to the next (agc_guard.runs) */
	void *runs[AGC_AGENTS_MAX] = {0};
	size_t kn = 0, i, nids = 0, batch = prune_batch(P->ctx, a);
	agc_report **out = NULL;
	int rc = 0;

	if (list_agent(P, a, &l, true) < 0) {
		/* what was listed may still go: each is discovered and gated on its own */
		warn(P, "%s sessions could not all be listed: %s", name, agc_error_last());
		P->sum->errors++;
	}
	P->sum->scanned += l.scanned;
	if (l.oom) {
		cands_release(&l);
		return agc_error_oom();
	}
	if (keep_of(P, a, &kv, &kn) < 0) {
		warn(P, "no %s session is pruned: %s", name, agc_error_last());
		P->sum->errors++;
		cands_release(&l);
		return 0;
	}
	ids = calloc(l.n ? l.n : 1, sizeof(*ids));
	out = calloc(batch, sizeof(*out));
	if (!ids || !out) {
		rc = agc_error_oom();
		goto done;
	}
	for (i = 0; i < l.n; i++) {
		int how = pick(P, &l.v[i], kv, kn);

		if (!how)
			continue;
		P->sum->candidates++;
		if (how == 2) {
			if (!tell_unsettled(P, name, &l.v[i])) {
				rc = 1;
				goto done;
			}
			continue;
		}
		ids[nids++] = l.v[i].id;
	}
	for (i = 0; i < nids;) {
		agc_guard g = {
			.keep = kv,
			.n_keep = kn,
			.settle_ms = o->settle_ms,
			.orphans_only = o->orphans != 0,
			.stop = guard_stop,
			.discovered = guard_discovered,
			.ud = P,
			.runs = runs,
		};
		size_t m = nids - i < batch ? nids - i : batch, done = 0, k;

		/* between batches as after each removal: once the agent removed one */
		if (P->stop_cb || (P->agent_removed && guard_stop(P))) {
			rc = 1;
			break;
		}
		/* --scrub rebuilds each database once, at the end of the run, not once per session */
		if (agc_purge_guarded(P->ctx, name, (const char *const *)ids + i, m, o->flags & ~(unsigned)AGC_PURGE_SCRUB,
				      &g, out, &done) < 0) {
			rc = -1;
			break;
		}
		for (k = 0; k < done; k++) {
			agc_status st = agc_report_status(out[k]);

			if (st != AGC_ST_SKIPPED && st != AGC_ST_ERROR && st != AGC_ST_NOT_FOUND)
				P->agent_removed++;
			/* every session the batch touched is told, even once cb asked to stop */
			tell(P, out[k]);
			agc_report_free(out[k]);
			out[k] = NULL;
		}
		i += done;
		if (done < m || P->stop_cb) {
			rc = 1;
			break;
		}
	}
	*left = nids - (i < nids ? i : nids);
done:
	for (i = 0; agc_adapter_table[i]; i++)
		if (runs[i] && agc_adapter_table[i]->run_free)
			agc_adapter_table[i]->run_free(runs[i]);
	free(out);
	free(ids);
	agc_keep_closure_free(kv, kn);
	cands_release(&l);
	return rc;
}

/* Count what the agents after the one the run stopped in would have offered. */
static void count_rest(prune_run *P, const size_t *order, size_t from, size_t n)
{
	size_t j;

	for (j = from; j < n; j++) {
		cand_list l = {0};
		char **kv = NULL;
		size_t kn = 0, i;

		(void)list_agent(P, order[j], &l, false);
		if (!l.oom && keep_of(P, order[j], &kv, &kn) == 0)
			for (i = 0; i < l.n; i++)
				P->sum->remaining += pick(P, &l.v[i], kv, kn) == 1;
		agc_keep_closure_free(kv, kn);
		cands_release(&l);
	}
}

int agc_prune(agc_ctx *ctx, const agc_prune_opts *o, int (*cb)(const agc_report *r, void *ud), void *ud,
	      agc_prune_summary *sum)
{
	agc_prune_summary local;
	prune_run P;
	size_t order[AGC_AGENTS_MAX], n, j, left = 0;
	char dir[PATH_MAX];
	const char *sdir = NULL;
	int rc = 0;

	if (!sum)
		sum = &local;
	memset(sum, 0, sizeof(*sum));
	if (!o || o->version != AGC_PRUNE_OPTS_VERSION)
		return agc_error_set(-1, "agc_prune needs options of version %d", AGC_PRUNE_OPTS_VERSION);
	if (o->flags & ~(unsigned)(AGC_PURGE_DRY_RUN | AGC_PURGE_SCRUB))
		return agc_error_set(-1, "prune takes only the dry-run and scrub flags (flags 0x%x)", o->flags);
	if (o->older_than_ms <= 0 && !o->keep_given && !o->project && !o->project_gone && !o->orphans)
		return agc_error_set(-1, "prune needs a selector: an age, a keep list, a project or orphans");
	if (o->settle_ms < 0 || o->older_than_ms < 0)
		return agc_error_set(-1, "prune's times cannot be negative");
	if (o->agents) {
		unsigned all = 0;

		for (j = 0; j < agc_agent_count(); j++)
			all |= agc_agent_bit(agc_agent_name(j));
		if (o->agents & ~all)
			return agc_error_set(-1, "unknown agent bits 0x%x", o->agents & ~all);
	}
	memset(&P, 0, sizeof(P));
	P.ctx = ctx;
	P.o = o;
	P.sum = sum;
	P.cb = cb;
	P.ud = ud;
	/* the budget's clock starts before discovery */
	P.start_us = agc_clock_mono_us();
	if (o->state_dir)
		sdir = o->state_dir;
	else if (o->budget_ms >= 0 && agc_state_dir(dir, sizeof(dir), false) == 0)
		sdir = dir;
	n = agent_order(&P, sdir, order);
	for (j = 0; j < n; j++) {
		/* before each agent but the run's first (a budget that is not zero always makes
		 * progress somewhere); a zero budget removes nothing */
		if (o->budget_ms == 0 || (j > 0 && out_of_budget(&P))) {
			rc = 1;
			break;
		}
		P.agent_removed = 0;
		left = 0;
		rc = prune_agent(&P, order[j], &left);
		if (rc < 0)
			break;
		if (rc == 1) {
			sum->remaining += left;
			break;
		}
	}
	if (rc == 1 && !P.stop_cb) {
		/* stopped by the budget: in the middle of order[j] (it goes last next time), or
		 * before it */
		size_t next = j < n ? (left ? (j + 1) % n : j) : 0;

		count_rest(&P, order, j < n ? (left ? j + 1 : j) : n, n);
		if (sum->remaining) {
			sum->budget_out = 1;
			sum->next_agent = agc_agent_name(order[next]);
			if (!o->state_dir && agc_state_dir(dir, sizeof(dir), true) == 0)
				sdir = dir;
			if (sdir) {
				char line[64];
				int len = snprintf(line, sizeof(line), "%s\n", sum->next_agent);

				if (agc_state_write(sdir, PRUNE_STATE, line, (size_t)len) < 0) {
					warn(&P, "cannot keep where the run stopped: %s", agc_error_last());
					sum->errors++;
				}
			}
		}
	}
	/* --scrub: every database rows went from, rebuilt once (the run's budget notwithstanding:
	 * it finishes the deletes that went) */
	if (rc >= 0 && P.dbs.n && agc_compact_paths(ctx, o->flags, P.dbs.v, P.dbs.n, on_scrub, &P) < 0)
		rc = -1;
	for (j = 0; j < P.dbs.n; j++)
		free(P.dbs.v[j]);
	free(P.dbs.v);
	sum->elapsed_ms = elapsed_ms(&P);
	return rc < 0 ? -1 : 0;
}
