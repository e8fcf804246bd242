/* ps (SPEC "ps and stop"): the running agent processes and every process that holds a session,
 * from one scan of the process table (who is an agent's, who is whose child) and one listing
 * with ls's gate, which names the process behind each hold (agc_ls_held): so a session ps shows
 * held is one ls calls live and in-use calls in use, and the other way round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"
#include "proc.h"
#include "session.h"

#define PS_ARGV_MAX ((size_t)64 << 10)  /* argv read per process to tell an agent's */
#define PS_PROCS_MAX ((size_t)1 << 22)
#define PS_HOLDS_MAX ((size_t)1 << 26)
#define PS_STATE_MAX 32
#define PS_NO_AGENT ((size_t)-1)

/* One process of the table. */
typedef struct ps_proc {
	agc_proc p;
	size_t agent;      /* the adapter whose process it is, or PS_NO_AGENT */
	bool service;      /* one of that agent's shared services */
} ps_proc;

/* One hold as agc_ls_held told it, its strings owned. */
typedef struct ps_hold {
	pid_t pid;
	size_t agent;
	char *id;
	unsigned why;      /* 1 << agc_why */
	bool serves;
} ps_hold;

typedef struct ps_run {
	agc_ctx *ctx;
	struct { ps_proc *v; size_t n, cap; } procs;   /* by pid */
	struct { size_t *v; size_t n, cap; } bypp;     /* indices into procs, by ppid */
	struct { ps_hold *v; size_t n, cap; } holds;
	int rc;
} ps_run;

static int proc_cmp(const void *a, const void *b)
{
	const ps_proc *x = a, *y = b;

	return x->p.pid < y->p.pid ? -1 : x->p.pid > y->p.pid;
}

static int ppid_cmp(const void *a, const void *b, void *ud)
{
	const ps_proc *v = ud;
	const ps_proc *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];

	if (x->p.ppid != y->p.ppid)
		return x->p.ppid < y->p.ppid ? -1 : 1;
	return x->p.pid < y->p.pid ? -1 : x->p.pid > y->p.pid;
}

/* Which agent's process argv is: the first adapter that says so. */
static size_t agent_of(const char *argv, size_t len, bool *service)
{
	size_t a;

	*service = false;
	for (a = 0; agc_adapter_table[a]; a++) {
		const agc_adapter *ad = agc_adapter_table[a];

		if (ad->is_proc && ad->is_proc(argv, len)) {
			*service = ad->is_service && ad->is_service(argv, len);
			return a;
		}
	}
	return PS_NO_AGENT;
}

static int table_cb(const agc_proc *p, void *ud)
{
	ps_run *r = ud;
	agc_buf argv = AGC_BUF_INIT_MAX(PS_ARGV_MAX);
	ps_proc *e = AGC_ARRAY_PUSH(&r->procs, PS_PROCS_MAX);

	if (!e)
		return -1;
	e->p = *p;
	e->agent = PS_NO_AGENT;
	/* an argv that cannot be read (gone since, another user's) shows no agent */
	if (agc_proc_argv_listed(r->ctx->procroot, p->pid, PS_ARGV_MAX, &argv) == 0 && argv.len)
		e->agent = agent_of(argv.ptr, argv.len, &e->service);
	agc_buf_release(&argv);
	return 0;
}

static const ps_proc *proc_find(const ps_run *r, pid_t pid)
{
	ps_proc key;

	key.p.pid = pid;
	return r->procs.n ? bsearch(&key, r->procs.v, r->procs.n, sizeof(key), proc_cmp) : NULL;
}

/* The first index of bypp whose process has parent ppid. */
static size_t children_of(const ps_run *r, pid_t ppid)
{
	size_t lo = 0, hi = r->bypp.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->procs.v[r->bypp.v[mid]].p.ppid < ppid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* SPEC "ps and stop": busy when a descendant of pid runs that is not one of the agent's own
 * processes (its resident helpers, such as OpenCode's server child); what runs under one of
 * those still counts. A zombie runs nothing. Bounded by the table: a loop of parents ends. */
static bool busy(const ps_run *r, pid_t pid, size_t agent)
{
	size_t *stack = malloc((r->procs.n + 1) * sizeof(*stack)), sp = 0, seen = 0, i;
	bool yes = false;

	if (!stack)
		return false;
	for (i = children_of(r, pid); i < r->bypp.n && r->procs.v[r->bypp.v[i]].p.ppid == pid; i++)
		stack[sp++] = r->bypp.v[i];
	while (sp && !yes && seen++ < r->procs.n) {
		const ps_proc *c = &r->procs.v[stack[--sp]];

		if (c->p.state == 'Z' || c->p.state == 'X')
			continue;
		if (c->agent != agent) {
			yes = true;
			break;
		}
		for (i = children_of(r, c->p.pid);
		     i < r->bypp.n && r->procs.v[r->bypp.v[i]].p.ppid == c->p.pid && sp < r->procs.n; i++)
			stack[sp++] = r->bypp.v[i];
	}
	free(stack);
	return yes;
}

static int held_cb(const agc_held *h, void *ud)
{
	ps_run *r = ud;
	int a = agc_agent_find(h->agent);
	ps_hold *e;

	if (a < 0)
		return 0;
	if (!(e = AGC_ARRAY_PUSH(&r->holds, PS_HOLDS_MAX)) || !(e->id = agc_strdup(h->id))) {
		if (e)
			r->holds.n--;
		return -1;
	}
	e->pid = h->pid;
	e->agent = (size_t)a;
	e->why = 1u << h->why;
	e->serves = h->serves;
	return 0;
}

static int hold_cmp(const void *a, const void *b)
{
	const ps_hold *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->serves != y->serves)
		return x->serves ? 1 : -1;
	if (x->agent != y->agent)
		return x->agent < y->agent ? -1 : 1;
	c = strcmp(x->id, y->id);
	return c;
}

/* Sort the holds and merge the reasons of one (pid, serves, session); a session held is not
 * also said to be served. */
static void holds_merge(ps_run *r)
{
	size_t i, k = 0;

	if (r->holds.n > 1)
		qsort(r->holds.v, r->holds.n, sizeof(*r->holds.v), hold_cmp);
	for (i = 0; i < r->holds.n; i++) {
		ps_hold *e = &r->holds.v[i];

		if (k && r->holds.v[k - 1].pid == e->pid && r->holds.v[k - 1].serves == e->serves &&
		    r->holds.v[k - 1].agent == e->agent && strcmp(r->holds.v[k - 1].id, e->id) == 0) {
			r->holds.v[k - 1].why |= e->why;
			free(e->id);
			continue;
		}
		r->holds.v[k++] = *e;
	}
	r->holds.n = k;
}

/* The gate's reasons as ps shows them, in a fixed order. */
static void how_text(unsigned why, char *out, size_t size)
{
	static const agc_why order[] = {AGC_WHY_REGISTRY, AGC_WHY_CMDLINE, AGC_WHY_ENVIRON, AGC_WHY_OPEN_FILE,
					 AGC_WHY_LOCK, AGC_WHY_CWD, AGC_WHY_UNREADABLE};
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (why & (1u << order[i]))
			o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%s", o ? "," : "",
					      agc_why_name(order[i]));
}

typedef struct ps_emit {
	agc_ps_session *v;
	char (*how)[96];
	size_t n;
} ps_emit;

/* Fill the session lists of the holds [lo, hi) of one pid. */
static void emit_sessions(const ps_run *r, size_t lo, size_t hi, ps_emit *held, ps_emit *serves)
{
	size_t i;

	held->n = serves->n = 0;
	for (i = lo; i < hi; i++) {
		const ps_hold *e = &r->holds.v[i];
		ps_emit *to = e->serves ? serves : held;

		/* a session the process holds is not one it merely serves */
		if (e->serves && i > lo) {
			size_t k;
			bool dup = false;

			for (k = lo; k < i && !r->holds.v[k].serves; k++)
				if (r->holds.v[k].agent == e->agent && strcmp(r->holds.v[k].id, e->id) == 0)
					dup = true;
			if (dup)
				continue;
		}
		to->v[to->n].agent = agc_adapter_table[e->agent]->name;
		to->v[to->n].id = e->id;
		how_text(e->why, to->how[to->n], sizeof(to->how[to->n]));
		to->v[to->n].how = to->how[to->n];
		to->n++;
	}
}

/* One row: the process (NULL when the table did not show it) and its holds [lo, hi). */
static int emit_row(ps_run *r, pid_t pid, const ps_proc *pp, size_t lo, size_t hi, ps_emit *held,
		    ps_emit *serves, int (*cb)(const agc_ps_info *p, void *ud), void *ud)
{
	agc_ps_info info;
	agc_buf cwd = AGC_BUF_INIT;
	char state[PS_STATE_MAX];
	char *command = NULL;
	int rc;

	memset(&info, 0, sizeof(info));
	emit_sessions(r, lo, hi, held, serves);
	info.pid = (int)pid;
	info.sessions = held->v;
	info.n_sessions = held->n;
	info.serves = serves->v;
	info.n_serves = serves->n;
	if (pid == 0) {
		info.role = "unseen";
		info.agent = held->n ? held->v[0].agent : NULL;
		info.command = "(no process can be named)";
		return cb(&info, ud);
	}
	command = agc_holder_command_of(r->ctx->procroot, pid);
	info.command = command ? command : "?";
	if (agc_proc_cwd(r->ctx->procroot, pid, &cwd) == 0)
		info.cwd = cwd.ptr;
	if (pp) {
		int64_t ms;

		info.ppid = (int)pp->p.ppid;
		if (agc_proc_start_ms(r->ctx->procroot, &pp->p, &ms) == 0)
			info.started_ms = ms;
	}
	if (pp && pp->agent != PS_NO_AGENT) {
		const agc_adapter *ad = agc_adapter_table[pp->agent];
		const agc_rootset *rs = agc_ctx_roots(r->ctx, pp->agent);

		info.agent = ad->name;
		info.role = pp->service ? "service" : "agent";
		if (ad->proc_state && rs && ad->proc_state(r->ctx, rs, pid, state, sizeof(state))) {
			info.state = state;
			info.state_from = "registry";
		} else {
			info.state = busy(r, pid, pp->agent) ? "busy" : "idle";
			info.state_from = "children";
		}
	} else {
		info.role = "holder";
		info.agent = held->n ? held->v[0].agent : serves->n ? serves->v[0].agent : NULL;
	}
	rc = cb(&info, ud);
	free(command);
	agc_buf_release(&cwd);
	return rc;
}

static void run_release(ps_run *r)
{
	size_t i;

	for (i = 0; i < r->holds.n; i++)
		free(r->holds.v[i].id);
	free(r->holds.v);
	free(r->procs.v);
	free(r->bypp.v);
}

int agc_ps(agc_ctx *ctx, const agc_ps_opts *o, int (*cb)(const agc_ps_info *p, void *ud), void *ud)
{
	agc_ps_opts def;
	ps_run r;
	ps_emit held = {0}, serves = {0};
	char failed[2048] = "";
	size_t i, h, maxn = 1;
	int rc = 0, lrc;

	memset(&def, 0, sizeof(def));
	def.version = AGC_PS_OPTS_VERSION;
	if (!o)
		o = &def;
	if (!ctx || !cb)
		return agc_error_set(-1, "agc_ps: no context or callback");
	if (o->version != AGC_PS_OPTS_VERSION)
		return agc_error_set(-1, "agc_ps_opts version %u is not one this library knows (%u): "
				     "set the struct up with AGC_PS_OPTS_INIT", o->version,
				     (unsigned)AGC_PS_OPTS_VERSION);
	if (o->agents & ~agc_agent_bits_known())
		return agc_error_set(-1, "agc_ps_opts.agents 0x%x holds bits that name no agent (0x%x)",
				     o->agents, o->agents & ~agc_agent_bits_known());
	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	/* the table first: a holder the listing names later is looked up in it */
	if (agc_proc_each(ctx->procroot, table_cb, &r) < 0) {
		run_release(&r);
		return -1;
	}
	if (r.procs.n > 1)
		qsort(r.procs.v, r.procs.n, sizeof(*r.procs.v), proc_cmp);
	if (agc_array_grow((void **)&r.bypp.v, &r.bypp.cap, r.procs.n + 1, sizeof(*r.bypp.v), PS_PROCS_MAX) < 0) {
		run_release(&r);
		return -1;
	}
	for (i = 0; i < r.procs.n; i++)
		r.bypp.v[r.bypp.n++] = i;
	if (r.bypp.n > 1)
		qsort_r(r.bypp.v, r.bypp.n, sizeof(*r.bypp.v), ppid_cmp, r.procs.v);

	lrc = agc_ls_held(ctx, o->agents, held_cb, &r, o->warn);
	if (lrc < 0) {
		snprintf(failed, sizeof(failed), "%s", agc_error_last());
		rc = -1;
	}
	holds_merge(&r);
	for (i = 0; i < r.holds.n;) {
		size_t k = i;

		while (k < r.holds.n && r.holds.v[k].pid == r.holds.v[i].pid)
			k++;
		if (k - i > maxn)
			maxn = k - i;
		i = k;
	}
	held.v = calloc(maxn, sizeof(*held.v));
	held.how = calloc(maxn, sizeof(*held.how));
	serves.v = calloc(maxn, sizeof(*serves.v));
	serves.how = calloc(maxn, sizeof(*serves.how));
	if (!held.v || !held.how || !serves.v || !serves.how) {
		rc = agc_error_oom();
		goto out;
	}
	/* rows by pid: every agent process of the agents asked for, and every holder; the holds
	 * of pid 0 last */
	for (h = 0; h < r.holds.n && r.holds.v[h].pid <= 0; h++)
		;
	for (i = 0; i < r.procs.n || h < r.holds.n;) {
		pid_t pid;
		const ps_proc *pp = NULL;
		size_t lo, hi;

		if (i < r.procs.n && (h >= r.holds.n || r.procs.v[i].p.pid <= r.holds.v[h].pid))
			pid = r.procs.v[i].p.pid;
		else
			pid = r.holds.v[h].pid;
		if (i < r.procs.n && r.procs.v[i].p.pid == pid)
			pp = &r.procs.v[i++];
		for (lo = h; h < r.holds.n && r.holds.v[h].pid == pid; h++)
			;
		hi = h;
		if (lo == hi && !(pp && pp->agent != PS_NO_AGENT &&
				  (!o->agents || (o->agents & agc_adapter_table[pp->agent]->bit))))
			continue;
		if (!pp)
			pp = proc_find(&r, pid);
		if (emit_row(&r, pid, pp, lo, hi, &held, &serves, cb, ud))
			goto out;
	}
	for (h = 0; h < r.holds.n && r.holds.v[h].pid <= 0; h++)
		;
	if (h > 0 && !r.holds.v[0].serves)
		emit_row(&r, 0, NULL, 0, h, &held, &serves, cb, ud);
out:
	free(held.v);
	free(held.how);
	free(serves.v);
	free(serves.how);
	run_release(&r);
	if (failed[0])
		agc_error_set(-1, "%s", failed);
	return rc;
}
