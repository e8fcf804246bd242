/* stop (SPEC "ps and stop"): the in-use gate's holders that are the agent's own processes get
 * the agent's graceful signal, then SIGTERM, then SIGKILL after the grace; the others are never
 * signalled. Each signal goes only to the process the chain began with: a pidfd where the kernel
 * has them (a signal through it cannot reach a process that took the pid over), and its start
 * time read again before every signal either way. Then the gate runs again. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "error.h"
#include "proc.h"
#include "report.h"

#define STOP_ARGV_MAX ((size_t)64 << 10)
#define STOP_POLL_NS (20 * 1000 * 1000)       /* between looks at the processes */
#define STOP_KILL_WAIT_US ((int64_t)5000000)  /* for SIGKILL to take effect */
#define STOP_SIGNALS_MAX 3

typedef struct stop_proc {
	pid_t pid;
	int pidfd;                  /* -1: none (gone, or a kernel without pidfds) */
	unsigned long long start;   /* as the chain began */
	char why[96];
	const char *command;        /* the report's (borrowed) */
	const char *role, *action, *hint;
	const char *signals[STOP_SIGNALS_MAX];
	size_t n_signals;
	const char *result;
	bool done;                  /* ended, changed, or never to be signalled */
} stop_proc;

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGHUP:
		return "SIGHUP";
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGKILL:
		return "SIGKILL";
	}
	return "signal";
}

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd;
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* 1 when pid is still the process the chain began with, 0 when it ended (gone, a zombie) or
 * is another process now (*changed set), -1 when it cannot be told (unreadable: left alone). */
static int still_ours(const char *procroot, stop_proc *p, bool *changed)
{
	agc_proc now;
	int rc = agc_proc_stat(procroot, p->pid, &now);

	*changed = false;
	if (rc == AGC_ENOTFOUND)
		return 0;
	if (rc < 0)
		return -1;
	if (now.start != p->start) {
		*changed = true;
		return 0;
	}
	if (now.state == 'Z' || now.state == 'X')
		return 0;
	return 1;
}

/* What became of a process of the chain that is no longer there. */
static const char *ended(const stop_proc *p)
{
	if (!p->n_signals)
		return "gone";
	return strcmp(p->signals[p->n_signals - 1], "SIGKILL") == 0 ? "killed" : "exited";
}

/* Send sig to p, after checking once more that it is the process the chain began with: one
 * that ended is not signalled, one whose pid is another process's now is left alone, and so
 * is one that cannot be looked at any more. */
static void send_sig(const char *procroot, stop_proc *p, int sig)
{
	bool changed;
	int rc, live = still_ours(procroot, p, &changed);

	if (live <= 0) {
		p->done = true;
		p->result = live < 0 ? "alive" : changed && !p->n_signals ? "changed" : ended(p);
		return;
	}
#ifdef SYS_pidfd_send_signal
	if (p->pidfd >= 0)
		rc = (int)syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0);
	else
#endif
		rc = kill(p->pid, sig);
	if (rc < 0 && errno == ESRCH) {
		p->done = true;
		p->result = ended(p);
		return;
	}
	if (rc == 0 && p->n_signals < STOP_SIGNALS_MAX)
		p->signals[p->n_signals++] = sig_name(sig);
}

/* Wait until every process of the chain ended or until deadline (monotonic us). */
static void wait_all(const char *procroot, stop_proc *v, size_t n, int64_t deadline)
{
	for (;;) {
		size_t i, left = 0;
		struct timespec ts = {0, STOP_POLL_NS};

		for (i = 0; i < n; i++) {
			bool changed;

			if (v[i].done || strcmp(v[i].action, "stop") != 0)
				continue;
			if (still_ours(procroot, &v[i], &changed) == 0) {
				v[i].done = true;
				v[i].result = ended(&v[i]);
				continue;
			}
			left++;
		}
		if (!left || agc_clock_mono_us() >= deadline)
			return;
		nanosleep(&ts, NULL);
	}
}

/* Read what the chain needs of process p->pid and decide its part. a: the session's agent. */
static void classify(agc_ctx *ctx, size_t a, stop_proc *p)
{
	const agc_adapter *ad = agc_adapter_table[a];
	agc_buf argv = AGC_BUF_INIT_MAX(STOP_ARGV_MAX);
	agc_proc st;
	bool changed;
	size_t k;

	p->pidfd = -1;
	p->action = "spare";
	p->result = "spared";
	if (p->pid <= 0) {
		p->role = "unseen";
		p->hint = "no process here can be named for it (a registry of another machine or pid "
			  "namespace, a lock whose holder is out of sight, a table that could not be "
			  "read): nothing is signalled";
		p->done = true;
		return;
	}
	/* the pidfd first, then what the process is: while the pidfd's process lives, the pid
	 * is its, so what is read below is of that process */
	p->pidfd = pidfd_of(p->pid);
	if (agc_proc_stat(ctx->procroot, p->pid, &st) < 0 || st.state == 'Z' || st.state == 'X' ||
	    agc_proc_argv(ctx->procroot, p->pid, STOP_ARGV_MAX, &argv) < 0) {
		p->role = "holder";
		p->result = "gone";
		p->hint = NULL;
		p->done = true;
		agc_buf_release(&argv);
		return;
	}
	p->start = st.start;
	if (still_ours(ctx->procroot, p, &changed) != 1) {
		p->role = "holder";
		p->result = "gone";
		p->done = true;
		agc_buf_release(&argv);
		return;
	}
	p->role = "holder";
	p->hint = "not one of the agent's processes (a tool, an editor, a command that names the "
		  "id): never signalled; end it yourself once it is done";
	for (k = 0; agc_adapter_table[k]; k++) {
		const agc_adapter *x = agc_adapter_table[k];

		if (!x->is_proc || !x->is_proc(argv.ptr, argv.len))
			continue;
		if (x->is_service && x->is_service(argv.ptr, argv.len)) {
			p->role = "service";
			p->hint = x->release ? x->release : "a shared service: never signalled";
		} else if (k == a) {
			p->role = "agent";
			p->action = "stop";
			p->result = NULL;
			p->hint = NULL;
		} else {
			p->role = "agent";
			p->hint = "a process of another agent: never signalled for this one's session";
		}
		break;
	}
	(void)ad;
	p->done = strcmp(p->action, "stop") != 0;
	agc_buf_release(&argv);
}

/* Group the report's holders by pid, each pid's reasons joined. */
static int group(const agc_report *r, stop_proc **out, size_t *n)
{
	size_t i, k, cnt = agc_report_holder_count(r);
	stop_proc *v = calloc(cnt ? cnt : 1, sizeof(*v));

	if (!v)
		return agc_error_oom();
	*n = 0;
	for (i = 0; i < cnt; i++) {
		const agc_holder_info *h = agc_report_holder(r, i);
		stop_proc *p = NULL;

		for (k = 0; k < *n; k++)
			if (v[k].pid == h->pid)
				p = &v[k];
		if (!p) {
			p = &v[(*n)++];
			p->pid = h->pid;
			p->command = h->command;
		}
		if (!strstr(p->why, h->why)) {
			size_t l = strlen(p->why);

			snprintf(p->why + l, sizeof(p->why) - l, "%s%s", l ? "," : "", h->why);
		}
	}
	*out = v;
	return 0;
}

/* The agent's shared services that serve the session (agc_ps: they have its files open and are
 * no holders by it, R5), each added as a process of the chain that is spared. */
typedef struct serving {
	const char *agent, *id;
	stop_proc **v;
	size_t *n;
	struct { char **v; size_t n, cap; } *owned;  /* the commands' copies: the caller frees them */
	int rc;
} serving;

static int serving_cb(const agc_ps_info *pi, void *ud)
{
	serving *sv = ud;
	size_t i, k;

	if (strcmp(pi->role, "service") != 0 || pi->pid <= 0)
		return 0;
	for (i = 0; i < pi->n_serves; i++) {
		stop_proc *nv, *p;

		if (strcmp(pi->serves[i].agent, sv->agent) != 0 || strcasecmp(pi->serves[i].id, sv->id) != 0)
			continue;
		for (k = 0; k < *sv->n; k++)
			if ((*sv->v)[k].pid == pi->pid)
				return 0;
		char **slot = AGC_ARRAY_PUSH(sv->owned, (size_t)1 << 16);

		if (!slot || !(*slot = agc_strdup(pi->command))) {
			if (slot)
				sv->owned->n--;
			sv->rc = -1;
			return 1;
		}
		if (!(nv = realloc(*sv->v, (*sv->n + 1) * sizeof(*nv)))) {
			sv->rc = agc_error_oom();
			return 1;
		}
		*sv->v = nv;
		p = &nv[(*sv->n)++];
		memset(p, 0, sizeof(*p));
		p->pid = pi->pid;
		p->command = *slot;
		snprintf(p->why, sizeof(p->why), "serves");
		return 0;
	}
	return 0;
}

typedef struct owned_strs {
	char **v;
	size_t n, cap;
} owned_strs;

static int add_services(agc_ctx *ctx, size_t a, const char *id, stop_proc **v, size_t *n, owned_strs *owned)
{
	agc_ps_opts po;
	serving sv = {agc_adapter_table[a]->name, id, v, n, (void *)owned, 0};

	memset(&po, 0, sizeof(po));
	po.version = AGC_PS_OPTS_VERSION;
	po.agents = agc_adapter_table[a]->bit;
	/* what cannot be listed only leaves a hint out: the gate has answered already */
	if (agc_ps(ctx, &po, serving_cb, &sv) < 0 && sv.rc == 0)
		return 0;
	return sv.rc;
}

/* The chain for every process of v that is to be stopped, then cb for each of v. Returns 0,
 * or cb's nonzero. */
static int run_chain(agc_ctx *ctx, size_t a, const agc_stop_opts *o, stop_proc *v, size_t n,
		     int (*cb)(const agc_stop_proc *p, void *ud), void *ud)
{
	bool dry = o->flags & AGC_PURGE_DRY_RUN;
	int steps[STOP_SIGNALS_MAX], rc = 0;
	size_t i, s, nsteps;

	/* the chain: the agent's graceful signal, SIGTERM, SIGKILL */
	nsteps = 0;
	if (agc_adapter_table[a]->stop_signal && agc_adapter_table[a]->stop_signal != SIGTERM)
		steps[nsteps++] = agc_adapter_table[a]->stop_signal;
	steps[nsteps++] = SIGTERM;
	steps[nsteps++] = SIGKILL;
	if (dry) {
		for (i = 0; i < n; i++)
			if (strcmp(v[i].action, "stop") == 0) {
				for (s = 0; s < nsteps; s++)
					v[i].signals[v[i].n_signals++] = sig_name(steps[s]);
				v[i].result = "dry-run";
			}
	} else {
		int64_t t0 = agc_clock_mono_us();

		/* the grace is shared out between the signals before SIGKILL */
		for (s = 0; s < nsteps; s++) {
			int64_t deadline = s + 1 < nsteps ? t0 + o->grace_ms * 1000 * (int64_t)(s + 1) / (int64_t)(nsteps - 1)
							  : agc_clock_mono_us() + STOP_KILL_WAIT_US;

			for (i = 0; i < n; i++)
				if (!v[i].done && strcmp(v[i].action, "stop") == 0)
					send_sig(ctx->procroot, &v[i], steps[s]);
			wait_all(ctx->procroot, v, n, deadline);
		}
		for (i = 0; i < n; i++)
			if (!v[i].result)
				v[i].result = "alive";
	}
	for (i = 0; i < n && rc == 0; i++) {
		agc_stop_proc sp;

		memset(&sp, 0, sizeof(sp));
		sp.pid = (int)v[i].pid;
		sp.command = v[i].command;
		sp.why = v[i].why;
		sp.role = v[i].role;
		sp.action = v[i].action;
		sp.hint = v[i].hint;
		sp.signals = v[i].signals;
		sp.n_signals = v[i].n_signals;
		sp.result = v[i].result;
		if (cb && cb(&sp, ud))
			break;
	}
	return rc;
}

int agc_stop(agc_ctx *ctx, const char *agent, const char *id, const agc_stop_opts *o,
	     int (*cb)(const agc_stop_proc *p, void *ud), void *ud, agc_report **after)
{
	agc_report *r = NULL;
	stop_proc *v = NULL;
	size_t n = 0, i;
	int a, rc = 0;
	bool dry, signalled = false;

	if (!after)
		return agc_error_set(-1, "agc_stop needs somewhere to put its report");
	if (!o || o->version != AGC_STOP_OPTS_VERSION)
		return agc_error_set(-1, "agc_stop_opts version %u is not one this library knows (%u): "
				     "set the struct up with AGC_STOP_OPTS_INIT", o ? o->version : 0,
				     (unsigned)AGC_STOP_OPTS_VERSION);
	if (o->grace_ms < 0)
		return agc_error_set(-1, "agc_stop_opts.grace_ms is negative");
	if (o->flags & ~(unsigned)AGC_PURGE_DRY_RUN)
		return agc_error_set(-1, "agc_stop_opts.flags 0x%x: only AGC_PURGE_DRY_RUN is known", o->flags);
	dry = o->flags & AGC_PURGE_DRY_RUN;
	if (agc_in_use(ctx, agent, id, &r) < 0)
		return -1;
	if ((agc_report_status(r) != AGC_ST_IN_USE && agc_report_status(r) != AGC_ST_FOUND) ||
	    (a = agc_agent_find(agc_report_agent(r))) < 0) {
		*after = r;
		return 0;
	}
	if (group(r, &v, &n) < 0) {
		agc_report_free(r);
		return -1;
	}
	{
		/* a shared service is never a holder of the gate's, or never signalled when it
		 * is: either way the user is told what releases the session from it */
		owned_strs owned = {NULL, 0, 0};

		if (agc_adapter_table[a]->is_service &&
		    add_services(ctx, (size_t)a, agc_report_id(r), &v, &n, &owned) < 0) {
			for (i = 0; i < owned.n; i++)
				free(owned.v[i]);
			free(owned.v);
			free(v);
			agc_report_free(r);
			return -1;
		}
		for (i = 0; i < n; i++)
			classify(ctx, (size_t)a, &v[i]);
		rc = run_chain(ctx, (size_t)a, o, v, n, cb, ud);
		for (i = 0; i < owned.n; i++)
			free(owned.v[i]);
		free(owned.v);
	}

	for (i = 0; i < n; i++) {
		if (v[i].pidfd >= 0)
			close(v[i].pidfd);
		signalled = signalled || v[i].n_signals;
	}
	free(v);
	(void)rc;
	/* nothing signalled (a dry run, a free session, only holders that are spared): the
	 * gate's answer stands */
	if (dry || !signalled) {
		*after = r;
		return 0;
	}
	agc_report_free(r);
	/* the gate again: what still holds the session keeps its records (R5) */
	return agc_in_use(ctx, agent, id, after);
}
