/* du (SPEC "du"): bytes per agent or per project, from one listing with orphans, a walk of each
 * agent's roots for what no session accounts for, and a compact dry run for what it would
 * free. Read-only. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "error.h"
#include "session.h"
#include "walk.h"

typedef struct du_row {
	agc_du_row r;
	char *project;
} du_row;

/* by kind (agc_du_row.kind), in the order of the rows */
enum { K_TRANSCRIPTS, K_SUBAGENTS, K_SIDE, K_ROWS, K_TEMP, K_LOGS, K_ORPHANS, K_BULK, K_N };
static const char *const kind_names[K_N] = {"transcripts", "sub-agents", "side-files", "rows",
					     "temp",        "logs",       "orphans",    "bulk"};

typedef struct du_run {
	const agc_du_opts *o;
	agc_ctx *ctx;
	/* by kind: each agent's root sessions with a record, discovered after the listing */
	struct { char **v; size_t n, cap; } ids[AGC_AGENTS_MAX];
	agc_du_row kind[AGC_AGENTS_MAX][K_N];
	int64_t now_ms;
	du_row agent[AGC_AGENTS_MAX];
	struct { du_row *v; size_t n, cap; } proj;
	bool oom;
} du_run;

static size_t agent_of(const char *name)
{
	int i = agc_agent_find(name);

	return i < 0 ? 0 : (size_t)i;
}

static void add_to(agc_du_row *r, const agc_session_info *s, bool prunable)
{
	if (s->orphan) {
		r->orphans++;
		r->orphan_bytes += s->bytes;
		r->orphan_disk += s->disk;
	} else {
		r->sessions++;
	}
	r->bytes += s->bytes;
	r->disk += s->disk;
	if (prunable) {
		r->prune_bytes += s->bytes;
		r->prune_sessions++;
	}
}

static int du_session(const agc_session_info *s, void *ud)
{
	du_run *D = ud;
	size_t a = agent_of(s->agent), i;
	int64_t cut = D->now_ms - D->o->prune_age_ms;
	/* as prune picks: older than the age (and so past the settle floor), not live */
	bool prunable = !s->live && s->updated_ms < cut;
	du_row *p = NULL;

	add_to(&D->agent[a].r, s, prunable);
	if (D->o->by == AGC_DU_BY_KIND) {
		char **slot;

		if (s->orphan) {
			D->kind[a][K_ORPHANS].sessions++;
			D->kind[a][K_ORPHANS].bytes += s->bytes;
			D->kind[a][K_ORPHANS].disk += s->disk;
			return 0;
		}
		if (!(slot = AGC_ARRAY_PUSH(&D->ids[a], (size_t)1 << 24)) || !(*slot = agc_strdup(s->id))) {
			if (slot)
				D->ids[a].n--;
			D->oom = true;
			return 1;
		}
		return 0;
	}
	if (D->o->by != AGC_DU_BY_PROJECT)
		return 0;
	for (i = 0; i < D->proj.n && !p; i++)
		if (strcmp(D->proj.v[i].r.agent, s->agent) == 0 &&
		    ((!s->project && !D->proj.v[i].project) ||
		     (s->project && D->proj.v[i].project && strcmp(s->project, D->proj.v[i].project) == 0)))
			p = &D->proj.v[i];
	if (!p) {
		if (!(p = AGC_ARRAY_PUSH(&D->proj, (size_t)1 << 24)) ||
		    (s->project && !(p->project = agc_strdup(s->project)))) {
			D->oom = true;
			return 1;
		}
		p->r.agent = agc_agent_name(a);
	}
	add_to(&p->r, s, prunable);
	return 0;
}

/* Say msg (malloc'd; taken) through the caller's warn. */
static void du_warn(const du_run *D, char *msg)
{
	if (msg && D->o->warn)
		D->o->warn(msg, D->o->ud);
	free(msg);
}

/* Whether root i of rs lies in (or is) one of the roots before it: walked once. */
static bool walked_before(const agc_rootset *rs, size_t i)
{
	size_t k, n;

	for (k = 0; k < i; k++) {
		if (!rs->v[k].real || !rs->v[k].exists)
			continue;
		n = strlen(rs->v[k].real);
		if (strncmp(rs->v[i].real, rs->v[k].real, n) == 0 &&
		    (rs->v[i].real[n] == '\0' || rs->v[i].real[n] == '/' || strcmp(rs->v[k].real, "/") == 0))
			return true;
	}
	return false;
}

/* Everything in the agent's roots, each entry of a root measured as an artifact is (no link
 * followed, no mount entered); of a temp root only the agent's own dirs (Claude's claude-<uid>
 * and cc-socks), never the rest of the system's temp dir. */
static void walk_roots(du_run *D, size_t a, agc_size *total)
{
	const agc_rootset *rs = agc_ctx_roots(D->ctx, a);
	size_t i;

	for (i = 0; rs && i < rs->n; i++) {
		const agc_root *rt = &rs->v[i];
		char own[64];
		struct dirent *e;
		DIR *d;
		int fd;

		if (!rt->exists || !rt->real || walked_before(rs, i))
			continue;
		if ((fd = agc_walk_open_root(rt->real)) < 0 || !(d = fdopendir(fd))) {
			if (fd >= 0)
				close(fd);
			du_warn(D, agc_strfmt("cannot read '%s': %s", rt->real, strerror(errno)));
			continue;
		}
		snprintf(own, sizeof(own), "claude-%lu", (unsigned long)D->ctx->home_uid);
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if (strcmp(rt->name, "temp") == 0 && strcmp(e->d_name, own) != 0 &&
			    strcmp(e->d_name, "cc-socks") != 0)
				continue;
			if (agc_size_entry(dirfd(d), e->d_name, NULL, total, NULL) < 0)
				du_warn(D, agc_strfmt("cannot measure '%s/%s'", rt->real, e->d_name));
		}
		closedir(d);
	}
}

/* Whether rel is a log: a file or dir named *.log, or anything under a debug/, log/ or logs/
 * dir (Claude's debug/<S>.txt). */
static bool is_log(const char *rel)
{
	size_t n = strlen(rel);
	const char *c;

	if (n > 4 && strcmp(rel + n - 4, ".log") == 0)
		return true;
	for (c = rel; c; c = strchr(c, '/'), c = c ? c + 1 : NULL)
		if (strncmp(c, "debug/", 6) == 0 || strncmp(c, "log/", 4) == 0 || strncmp(c, "logs/", 5) == 0)
			return true;
	return false;
}

static void kind_add(agc_du_row *k, bool *seen, uint64_t bytes, uint64_t disk)
{
	if (!bytes && !disk)
		return;
	k->bytes += bytes;
	k->disk += disk;
	if (!*seen)
		k->sessions++;
	*seen = true;
}

/* Session id of agent a, discovered as show sees it, its figures added to the kinds: the same
 * sizes ls gives it (SPEC "Sizes"), so the kinds add up to the agent's bytes. */
static void du_kinds(du_run *D, size_t a, const char *id, void *run)
{
	agc_du_row *K = D->kind[a];
	bool seen[K_N] = {false};
	agc_plan p;
	size_t i;

	if (agc_plan_discover(D->ctx, a, id, run, &p) < 0) {
		du_warn(D, agc_strfmt("%s session %s not measured by kind: %s", agc_agent_name(a), id, agc_error_last()));
		return;
	}
	for (i = 0; i < p.arts.n; i++) {
		const agc_artifact *x = &p.arts.v[i];
		uint64_t bytes = x->bytes, disk = x->disk;
		const char *root = p.roots->v[x->root].name;
		int k;

		if (root && strcmp(root, "temp") == 0)
			k = K_TEMP;
		else if (x->session && strcmp(x->session, p.id) != 0)
			k = K_SUBAGENTS;
		else if (is_log(x->rel))
			k = K_LOGS;
		else
			k = (x->flags & AGC_ART_RECORD) ? K_TRANSCRIPTS : K_SIDE;
		/* a subagents/ dir inside a session's dir holds its sub-agents' transcripts */
		if (k != K_TEMP && k != K_SUBAGENTS && x->kind == 'd' && !x->behind_link) {
			char *rel = agc_strfmt("%s/subagents", x->rel);
			agc_size sz = {0};
			int rootfd = agc_plan_rootfd(&p, x->root);

			if (rel && rootfd >= 0 && agc_size_at(rootfd, rel, &sz, NULL) == 1 && sz.bytes <= bytes &&
			    sz.disk <= disk) {
				kind_add(&K[K_SUBAGENTS], &seen[K_SUBAGENTS], sz.bytes, sz.disk);
				bytes -= sz.bytes;
				disk -= sz.disk;
			}
			free(rel);
		}
		kind_add(&K[k], &seen[k], bytes, disk);
	}
	for (i = 0; i < p.rows.n; i++) {
		const char *db = p.rows.v[i].db < p.dbs.n ? p.dbs.v[p.rows.v[i].db].rel : "";
		const char *base = strrchr(db, '/');
		int k = strncmp(base ? base + 1 : db, "logs", 4) == 0 ? K_LOGS : K_ROWS;

		kind_add(&K[k], &seen[k], p.rows.v[i].bytes, 0);
	}
	for (i = 0; i < p.lines.n; i++)
		kind_add(&K[K_SIDE], &seen[K_SIDE], p.lines.v[i].bytes, 0);
	agc_plan_release(&p);
}

static int du_compact(const agc_compact_info *ci, void *ud)
{
	du_run *D = ud;

	D->agent[agent_of(ci->agent)].r.compact_bytes += ci->free_bytes + ci->wal_bytes;
	return 0;
}

static int proj_cmp(const void *a, const void *b)
{
	const du_row *x = a, *y = b;
	size_t ax = agent_of(x->r.agent), ay = agent_of(y->r.agent);

	if (ax != ay)
		return ax < ay ? -1 : 1;
	if (x->r.bytes != y->r.bytes)
		return x->r.bytes > y->r.bytes ? -1 : 1;
	if (!x->project || !y->project)
		return x->project ? -1 : y->project ? 1 : 0;
	return strcmp(x->project, y->project);
}

int agc_du(agc_ctx *ctx, const agc_du_opts *o, int (*cb)(const agc_du_row *row, void *ud), void *ud)
{
	agc_ls_opts lo = AGC_LS_OPTS_INIT;
	agc_compact_opts co = AGC_COMPACT_OPTS_INIT;
	du_run D;
	size_t a, i;
	int rc = 0, lrc;
	char failed[2048] = "";

	if (!o || o->version != AGC_DU_OPTS_VERSION)
		return agc_error_set(-1, "agc_du needs options of version %d", AGC_DU_OPTS_VERSION);
	if (o->by != AGC_DU_BY_AGENT && o->by != AGC_DU_BY_PROJECT && o->by != AGC_DU_BY_KIND)
		return agc_error_set(-1, "agc_du: no such grouping (%d)", (int)o->by);
	if (o->prune_age_ms < 0)
		return agc_error_set(-1, "agc_du: the prune age cannot be negative");
	if (o->agents & ~agc_agent_bits_known())
		return agc_error_set(-1, "agc_du: agent bits 0x%x name no agent", o->agents & ~agc_agent_bits_known());
	memset(&D, 0, sizeof(D));
	D.o = o;
	D.ctx = ctx;
	D.now_ms = agc_ctx_now_ms(ctx);
	for (a = 0; a < agc_agent_count() && a < AGC_AGENTS_MAX; a++)
		D.agent[a].r.agent = agc_agent_name(a);
	lo.agents = o->agents;
	lo.orphans = 1;
	lo.warn = o->warn;
	lo.warn_ud = o->ud;
	lrc = agc_ls(ctx, &lo, du_session, &D);
	if (lrc < 0)
		snprintf(failed, sizeof(failed), "%s", agc_error_last());
	if (D.oom) {
		rc = agc_error_oom();
		goto out;
	}
	co.agents = o->agents;
	co.flags = AGC_PURGE_DRY_RUN;
	if (agc_compact(ctx, &co, du_compact, &D) < 0)
		du_warn(&D, agc_strfmt("what compact would free is not known: %s", agc_error_last()));
	for (a = 0; a < agc_agent_count() && a < AGC_AGENTS_MAX; a++) {
		agc_size total = {0};
		agc_du_row *r = &D.agent[a].r;

		if (o->agents && !(o->agents & agc_agent_bit(agc_agent_name(a))))
			continue;
		walk_roots(&D, a, &total);
		r->bulk_bytes = total.bytes > r->bytes ? total.bytes - r->bytes : 0;
		r->bulk_disk = total.disk > r->disk ? total.disk - r->disk : 0;
	}
	if (o->by == AGC_DU_BY_KIND) {
		bool stop = false;

		for (a = 0; a < agc_agent_count() && a < AGC_AGENTS_MAX && !stop; a++) {
			const agc_adapter *ad = agc_adapter_table[a];
			void *run = NULL;
			int k;

			if (o->agents && !(o->agents & agc_agent_bit(agc_agent_name(a))))
				continue;
			if (ad->run_new && !(run = ad->run_new())) {
				rc = agc_error_oom();
				goto out;
			}
			for (i = 0; i < D.ids[a].n; i++)
				du_kinds(&D, a, D.ids[a].v[i], run);
			if (ad->run_free)
				ad->run_free(run);
			D.kind[a][K_BULK].bytes = D.agent[a].r.bulk_bytes;
			D.kind[a][K_BULK].disk = D.agent[a].r.bulk_disk;
			for (k = 0; k < K_N && !stop; k++) {
				agc_du_row *r = &D.kind[a][k];

				if (!r->bytes && !r->disk && !r->sessions)
					continue;
				r->agent = agc_agent_name(a);
				r->kind = kind_names[k];
				if (k == K_ORPHANS) {
					r->orphans = r->sessions;
					r->sessions = 0;
				}
				stop = cb(r, ud) != 0;
			}
		}
	} else if (o->by == AGC_DU_BY_PROJECT) {
		if (D.proj.n > 1)
			qsort(D.proj.v, D.proj.n, sizeof(*D.proj.v), proj_cmp);
		for (i = 0; i < D.proj.n; i++) {
			D.proj.v[i].r.project = D.proj.v[i].project;
			if (cb(&D.proj.v[i].r, ud))
				break;
		}
	} else {
		for (a = 0; a < agc_agent_count() && a < AGC_AGENTS_MAX; a++) {
			if (o->agents && !(o->agents & agc_agent_bit(agc_agent_name(a))))
				continue;
			if (cb(&D.agent[a].r, ud))
				break;
		}
	}
	if (lrc < 0)
		rc = agc_error_set(-1, "%s", failed);
out:
	for (i = 0; i < D.proj.n; i++)
		free(D.proj.v[i].project);
	free(D.proj.v);
	for (a = 0; a < AGC_AGENTS_MAX; a++) {
		for (i = 0; i < D.ids[a].n; i++)
			free(D.ids[a].v[i]);
		free(D.ids[a].v);
	}
	return rc;
}
