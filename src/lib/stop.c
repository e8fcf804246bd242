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

#define STOP_NO_AGENT ((size_t)-1)

typedef struct stop_proc {
	pid_t pid;
	int pidfd;                  /* -1: none (gone, or a kernel without pidfds) */
	unsigned long long start;   /* as it was pinned */
	uid_t uid;
	size_t agent;               /* whose process it is, or STOP_NO_AGENT */
	bool service;               /* one of that agent's shared services */
	bool gone;                  /* ended (or no longer holds the session) before any signal */
	bool late;                  /* a holder the second gate found that the first did not */
	bool names;                 /* its argv gives the id as its session (agc_adapter.session_opts) */
	char why[96];
	char *command;              /* owned */
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
	if (rc < 0) {
		/* EPERM: not ours to signal; nothing more is tried */
		p->done = true;
		p->result = "denied";
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

/* Pin process p->pid: a pidfd first, then its start time, owner and argv (while the pidfd's
 * process lives the pid is its, so what is read is of that process), and which agent's
 * process it is. A process that is gone is done, "gone". */
static void pin(agc_ctx *ctx, size_t a, const char *id, stop_proc *p)
{
	agc_buf argv = AGC_BUF_INIT_MAX(STOP_ARGV_MAX);
	agc_proc st;
	bool changed;
	size_t k;

	p->pidfd = -1;
	p->agent = STOP_NO_AGENT;
	p->pidfd = pidfd_of(p->pid);
	if (agc_proc_stat(ctx->procroot, p->pid, &st) < 0 || st.state == 'Z' || st.state == 'X' ||
	    agc_proc_argv(ctx->procroot, p->pid, STOP_ARGV_MAX, &argv) < 0) {
		p->gone = true;
		agc_buf_release(&argv);
		return;
	}
	p->start = st.start;
	p->uid = st.uid;
	if (still_ours(ctx->procroot, p, &changed) != 1) {
		p->gone = true;
		agc_buf_release(&argv);
		return;
	}
	p->names = agc_argv_session(argv.ptr, argv.len, agc_adapter_table[a]->session_opts, id);
	for (k = 0; agc_adapter_table[k]; k++) {
		const agc_adapter *x = agc_adapter_table[k];

		if (x->is_proc && x->is_proc(argv.ptr, argv.len)) {
			p->agent = k;
			p->service = x->is_service && x->is_service(argv.ptr, argv.len);
			break;
		}
	}
	agc_buf_release(&argv);
}

static bool has_why(const stop_proc *p, const char *why)
{
	size_t l = strlen(why);
	const char *s = p->why;

	for (; (s = strstr(s, why)); s += l)
		if ((s == p->why || s[-1] == ',') && (s[l] == ',' || s[l] == '\0'))
			return true;
	return false;
}

/* Decide p's part: the chain only for a process proven to run the session (SPEC "ps and
 * stop": never one that merely names the id). Everything else is spared, with why. */
static void decide(agc_ctx *ctx, size_t a, const char *id, const pid_t *self, size_t n_self, stop_proc *p)
{
	const agc_adapter *ad = agc_adapter_table[a];
	const agc_rootset *rs = agc_ctx_roots(ctx, a);
	char sid[AGC_ID_MAX];
	bool proven, has_sid;
	size_t k;

	p->action = "spare";
	p->result = "spared";
	p->done = true;
	if (p->pid <= 0) {
		p->role = "unseen";
		p->hint = "no process here can be named for it (a registry of another machine or pid "
			  "namespace, a lock whose holder is out of sight, a table that could not be "
			  "read): nothing is signalled";
		return;
	}
	if (p->gone) {
		p->role = "holder";
		p->result = "gone";
		p->hint = NULL;
		return;
	}
	if (p->agent == STOP_NO_AGENT) {
		p->role = "holder";
		p->hint = "not one of the agent's processes (a tool, an editor, a command that names the "
			  "id): never signalled; end it yourself once it is done";
		return;
	}
	p->role = p->service ? "service" : "agent";
	if (p->service) {
		p->hint = agc_adapter_table[p->agent]->release ? agc_adapter_table[p->agent]->release
							      : "a shared service: never signalled";
		return;
	}
	if (p->agent != a) {
		p->hint = "a process of another agent: never signalled for this one's session";
		return;
	}
	for (k = 0; k < n_self; k++)
		if (self[k] == p->pid) {
			p->hint = "agentgc runs inside it (an agent's tool ran agentgc): never signalled";
			return;
		}
	/* as root, another user's agent: only the processes of the home's owner are the home's */
	if (p->uid != ctx->home_uid && p->uid != getuid()) {
		p->hint = "a process of another user than the home's owner: never signalled";
		return;
	}
	/* what proves the process runs this session: its own registry entry, checked against
	 * the kernel's start time; its argv giving the id as its session (--resume ID: not a
	 * prompt or a path that contains it), unless its proven registry entry names another
	 * session; a file of the session open,
	 * unless the agent's files the gate watches are all shared. A current dir, an inherited
	 * environment, a lock (its holder's pid may be stale) or an entry that cannot be
	 * checked only count as live for the gate: they prove nothing to signal on. */
	has_sid = ad->proc_session && rs && ad->proc_session(ctx, rs, p->pid, sid);
	proven = (has_why(p, "registry") && has_sid && strcmp(sid, id) == 0) ||
		 (has_why(p, "cmdline") && p->names && (!has_sid || strcmp(sid, id) == 0)) ||
		 (has_why(p, "open-file") && !ad->stop_no_open_file && (!has_sid || strcmp(sid, id) == 0));
	if (!proven) {
		p->hint = has_sid && strcmp(sid, id) != 0
				  ? "its registry entry says it runs another session: never signalled for this one"
				  : "nothing proves it runs this session (it holds it only by its current dir, "
				    "its environment, a lock, a database every session shares, an argument "
				    "that contains the id but is no --resume of it, or a registry entry that "
				    "cannot be checked): never signalled; quit it yourself";
		return;
	}
	p->action = "stop";
	p->result = NULL;
	p->hint = NULL;
	p->done = false;
}

typedef struct procs {
	stop_proc *v;
	size_t n, cap;
} procs;

static stop_proc *procs_find(procs *ps, pid_t pid)
{
	size_t k;

	for (k = 0; k < ps->n; k++)
		if (ps->v[k].pid == pid)
			return &ps->v[k];
	return NULL;
}

static stop_proc *procs_add(procs *ps, pid_t pid, const char *command)
{
	stop_proc *p = AGC_ARRAY_PUSH(ps, (size_t)1 << 16);

	if (!p)
		return NULL;
	p->pid = pid;
	p->pidfd = -1;
	p->agent = STOP_NO_AGENT;
	if (command && !(p->command = agc_strdup(command))) {
		ps->n--;
		return NULL;
	}
	return p;
}

static void procs_release(procs *ps)
{
	size_t i;

	for (i = 0; i < ps->n; i++) {
		if (ps->v[i].pidfd >= 0)
			close(ps->v[i].pidfd);
		free(ps->v[i].command);
	}
	free(ps->v);
	ps->v = NULL;
	ps->n = ps->cap = 0;
}

static void why_add(stop_proc *p, const char *why)
{
	size_t l = strlen(p->why), wl = strlen(why);
	const char *s;

	for (s = p->why; (s = strstr(s, why)); s += wl)
		if ((s == p->why || s[-1] == ',') && (s[wl] == ',' || s[wl] == '\0'))
			return;
	snprintf(p->why + l, sizeof(p->why) - l, "%s%s", l ? "," : "", why);
}

/* The report's holders grouped by pid, each pid's reasons joined. With fresh (the second
 * gate), the reasons are this report's alone: a pid it names that the first did not is late,
 * and one it no longer names (a service that only serves aside) no longer holds the session.
 * Returns 0 or -1. */
static int group(const agc_report *r, procs *ps, bool fresh)
{
	size_t i, cnt = agc_report_holder_count(r);

	if (fresh)
		for (i = 0; i < ps->n; i++)
			if (strcmp(ps->v[i].why, "serves") != 0)
				ps->v[i].why[0] = '\0';
	for (i = 0; i < cnt; i++) {
		const agc_holder_info *h = agc_report_holder(r, i);
		stop_proc *p = procs_find(ps, h->pid);

		if (!p) {
			if (!(p = procs_add(ps, h->pid, h->command)))
				return -1;
			p->late = fresh;
		}
		why_add(p, h->why);
	}
	if (fresh)
		for (i = 0; i < ps->n; i++)
			if (!ps->v[i].why[0])
				ps->v[i].gone = true;
	return 0;
}

/* The agent's shared services that serve the session (agc_ps: they have its files open and are
 * no holders by it, R5), each added as a process of the chain that is spared. */
typedef struct serving {
	const char *agent, *id;
	procs *ps;
	int rc;
} serving;

static int serving_cb(const agc_ps_info *pi, void *ud)
{
	serving *sv = ud;
	size_t i;

	if (strcmp(pi->role, "service") != 0 || pi->pid <= 0 || procs_find(sv->ps, pi->pid))
		return 0;
	for (i = 0; i < pi->n_serves; i++) {
		stop_proc *p;

		if (strcmp(pi->serves[i].agent, sv->agent) != 0 || strcasecmp(pi->serves[i].id, sv->id) != 0)
			continue;
		if (!(p = procs_add(sv->ps, pi->pid, pi->command))) {
			sv->rc = -1;
			return 1;
		}
		snprintf(p->why, sizeof(p->why), "serves");
		return 0;
	}
	return 0;
}

static int add_services(agc_ctx *ctx, size_t a, const char *id, procs *ps)
{
	agc_ps_opts po;
	serving sv = {agc_adapter_table[a]->name, id, ps, 0};

	memset(&po, 0, sizeof(po));
	po.version = AGC_PS_OPTS_VERSION;
	po.agents = agc_adapter_table[a]->bit;
	/* what cannot be listed only leaves a hint out: the gate answers on its own */
	if (agc_ps(ctx, &po, serving_cb, &sv) < 0 && sv.rc == 0)
		return 0;
	return sv.rc;
}

/* The chain for every process of v that is to be stopped, then cb for each of v (until cb
 * returns nonzero). */
static void run_chain(agc_ctx *ctx, size_t a, const agc_stop_opts *o, stop_proc *v, size_t n,
		     int (*cb)(const agc_stop_proc *p, void *ud), void *ud)
{
	bool dry = o->flags & AGC_PURGE_DRY_RUN;
	int steps[STOP_SIGNALS_MAX];
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
	for (i = 0; i < n; i++) {
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
}

int agc_stop(agc_ctx *ctx, const char *agent, const char *id, const agc_stop_opts *o,
	     int (*cb)(const agc_stop_proc *p, void *ud), void *ud, agc_report **after)
{
	agc_report *r = NULL, *r2 = NULL;
	procs ps = {NULL, 0, 0};
	pid_t *self = NULL;
	size_t n_self = 0, i;
	int a, rc = -1;
	bool signalled = false;

	if (!after)
		return agc_error_set(-1, "agc_stop needs somewhere to put its report");
	if (!o || o->version != AGC_STOP_OPTS_VERSION)
		return agc_error_set(-1, "agc_stop_opts version %u is not one this library knows (%u): "
				     "set the struct up with AGC_STOP_OPTS_INIT", o ? o->version : 0,
				     (unsigned)AGC_STOP_OPTS_VERSION);
	if (o->grace_ms < 0 || o->grace_ms > AGC_STOP_GRACE_MAX_MS)
		return agc_error_set(-1, "agc_stop_opts.grace_ms %lld is out of range (0 to %lld)",
				     (long long)o->grace_ms, (long long)AGC_STOP_GRACE_MAX_MS);
	if (o->flags & ~(unsigned)AGC_PURGE_DRY_RUN)
		return agc_error_set(-1, "agc_stop_opts.flags 0x%x: only AGC_PURGE_DRY_RUN is known", o->flags);
	if (agc_in_use(ctx, agent, id, &r) < 0)
		return -1;
	if ((agc_report_status(r) != AGC_ST_IN_USE && agc_report_status(r) != AGC_ST_FOUND) ||
	    (a = agc_agent_find(agc_report_agent(r))) < 0) {
		*after = r;
		return 0;
	}
	/* every holder pinned (a pidfd, its start time and argv), a shared service that serves
	 * the session too: it is never a holder of the gate's, or never signalled when it is,
	 * and the user is told what releases the session from it */
	if (group(r, &ps, false) < 0 ||
	    (agc_adapter_table[a]->is_service && add_services(ctx, (size_t)a, agc_report_id(r), &ps) < 0))
		goto out;
	for (i = 0; i < ps.n; i++)
		if (ps.v[i].pid > 0)
			pin(ctx, (size_t)a, agc_report_id(r), &ps.v[i]);
	/* The gate again, now that they are pinned: a pid the first gate named that another
	 * process took before its pidfd was opened counts only when that process holds the
	 * session too, and only by the reasons this gate gives. */
	if (agc_in_use(ctx, agent, id, &r2) < 0)
		goto out;
	agc_report_free(r);
	r = r2;
	r2 = NULL;
	if (agc_report_status(r) != AGC_ST_IN_USE && agc_report_status(r) != AGC_ST_FOUND) {
		*after = r;
		r = NULL;
		rc = 0;
		goto out;
	}
	if (group(r, &ps, true) < 0 || agc_proc_self_and_ancestors(ctx->procroot, false, &self, &n_self) < 0)
		goto out;
	for (i = 0; i < ps.n; i++) {
		bool changed;

		if (ps.v[i].late && ps.v[i].pid > 0) {
			/* began to hold it between the two gates: nothing proves yet that the pid the
			 * gate named is the process pinned now */
			pin(ctx, (size_t)a, agc_report_id(r), &ps.v[i]);
			ps.v[i].action = "spare";
			ps.v[i].result = ps.v[i].gone ? "gone" : "spared";
			ps.v[i].role = "holder";
			ps.v[i].hint = "began to hold it while stop ran: run stop again";
			ps.v[i].done = true;
			continue;
		}
		/* pinned, and still the process that was pinned */
		if (ps.v[i].pid > 0 && !ps.v[i].gone && still_ours(ctx->procroot, &ps.v[i], &changed) != 1)
			ps.v[i].gone = true;
		decide(ctx, (size_t)a, agc_report_id(r), self, n_self, &ps.v[i]);
	}
	run_chain(ctx, (size_t)a, o, ps.v, ps.n, cb, ud);
	for (i = 0; i < ps.n; i++)
		signalled = signalled || ps.v[i].n_signals;
	rc = 0;
	/* nothing signalled (a dry run, a free session, only holders that are spared): the
	 * second gate's answer stands */
	if (!signalled) {
		*after = r;
		r = NULL;
		goto out;
	}
	/* the gate again: what still holds the session keeps its records (R5) */
	rc = agc_in_use(ctx, agent, id, after);
out:
	procs_release(&ps);
	free(self);
	agc_report_free(r);
	agc_report_free(r2);
	return rc;
}
