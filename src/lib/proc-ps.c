/* The process table from ps(1) and lsof(8), for the systems without /proc that the agents run
 * on (macOS, the BSDs), and on Linux with AGENTGC_PROC_BACKEND=ps (so the whole suite runs
 * through it). One listing per scan:
 *   ps -axww -o pid=,ppid=,uid=,stat=,lstart=,command=   (TZ=UTC0, LC_ALL=C)
 * its start times parsed as UTC (timegm: never local time, so a change of daylight saving time
 * cannot make a live holder look like a reused pid), a process told from another at its pid by
 * its start second and command line; environments, when a scan asks for them,
 * from one more ps listing with the environment after the command; open files, current dirs
 * and mappings from one lsof listing (-F pfDin: pid, fd, device, inode, name). A start time is
 * whole seconds here (agc_proc.start), not clock ticks.
 * What ps and lsof cannot give is an error, never "nothing": a missing or failing ps or lsof
 * makes the gate answer in use with that reason (R5, fail closed). Single-process questions
 * outside a scan (a registry's pid, a holder about to be signalled) run ps for that pid, fresh.
 * Their output is bounded (R8); neither inherits LD_PRELOAD. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "hset.h"
#include "proc.h"
#include "proc-ps.h"

extern char **environ;

#define PS_OUT_MAX ((size_t)256 << 20)   /* bytes of one listing */
#define PS_ENTS_MAX ((size_t)1 << 22)    /* processes of one listing */
#define PS_FILES_MAX ((size_t)1 << 26)   /* open files of one lsof listing */
#define PS_ERR_MAX 512

/* ---- which backend --------------------------------------------------------------------- */

static pthread_once_t backend_once = PTHREAD_ONCE_INIT;
static int backend; /* 0 /proc, 1 ps, 2 a value that names none */
static char backend_bad[64];

static void backend_init(void)
{
#if defined(__linux__) && !defined(AGC_PROC_PS_ONLY)
	const char *v = getenv("AGENTGC_PROC_BACKEND");

	if (!v || !*v || strcmp(v, "proc") == 0)
		backend = 0;
	else if (strcmp(v, "ps") == 0)
		backend = 1;
	else {
		backend = 2;
		snprintf(backend_bad, sizeof(backend_bad), "%s", v);
	}
#else
	/* the only backend built in: another value names none that is here */
	const char *v = getenv("AGENTGC_PROC_BACKEND");

	backend = 1;
	if (v && *v && strcmp(v, "ps") != 0) {
		backend = 2;
		snprintf(backend_bad, sizeof(backend_bad), "%s", v);
	}
#endif
}

bool agc_procps_on(void)
{
	pthread_once(&backend_once, backend_init);
	return backend != 0;
}

/* An unknown AGENTGC_PROC_BACKEND reads no process table: every question is an error, so the
 * gate answers in use and says why. */
static int backend_check(void)
{
	pthread_once(&backend_once, backend_init);
	if (backend == 2)
#if defined(__linux__) && !defined(AGC_PROC_PS_ONLY)
		return agc_error_set(-1, "AGENTGC_PROC_BACKEND='%s' names no process backend (proc or ps)",
				     backend_bad);
#else
		return agc_error_set(-1, "AGENTGC_PROC_BACKEND='%s' names no process backend of this build (ps)",
				     backend_bad);
#endif
	return 0;
}

/* ---- running ps and lsof ---------------------------------------------------------------- */

/* The helpers this process ran lately (ps, lsof): a listing leaves them out, as it leaves out
 * nothing else of this process's own (they hold no session, and each would look new). */
#define PS_HELPERS 64
static pid_t helpers[PS_HELPERS];
static unsigned helpers_next;
static pthread_mutex_t helpers_mu = PTHREAD_MUTEX_INITIALIZER;

static void helper_note(pid_t pid)
{
	pthread_mutex_lock(&helpers_mu);
	helpers[helpers_next++ % PS_HELPERS] = pid;
	pthread_mutex_unlock(&helpers_mu);
}

static bool helper_is(pid_t pid, pid_t ppid)
{
	bool yes = false;
	size_t i;

	if (ppid != getpid())
		return false;
	pthread_mutex_lock(&helpers_mu);
	for (i = 0; i < PS_HELPERS && !yes; i++)
		yes = helpers[i] == pid;
	pthread_mutex_unlock(&helpers_mu);
	return yes;
}

/* The environment of a child: the caller's without LD_PRELOAD (a test's fault shim, a
 * sanitizer's runtime), TZ and the locale, which are set: UTC and the C locale. */
static char **child_env(void)
{
	size_t n = 0, k = 0, i;
	char **env;

	while (environ && environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *e = environ[i];

		if (!strncmp(e, "LD_PRELOAD=", 11) || !strncmp(e, "TZ=", 3) || !strncmp(e, "LC_", 3) ||
		    !strncmp(e, "LANG=", 5) || !strncmp(e, "LANGUAGE=", 9))
			continue;
		env[k++] = environ[i];
	}
	env[k++] = (char *)"TZ=UTC0";
	env[k++] = (char *)"LC_ALL=C";
	env[k] = NULL;
	return env;
}

/* How long one run of ps or lsof may take: past it, it is killed, and what it was to tell is
 * an error (a stat of a file on a dead network mount can hang lsof). The tests set a shorter
 * one (AGENTGC_TEST_PS_TIMEOUT_MS). */
#define PS_RUN_MS 60000

static int64_t run_ms(void)
{
	const char *v = getenv("AGENTGC_TEST_PS_TIMEOUT_MS");
	char *end;
	long long ms;

	if (!v || !*v)
		return PS_RUN_MS;
	ms = strtoll(v, &end, 10);
	return *end || ms <= 0 || ms > PS_RUN_MS ? PS_RUN_MS : ms;
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Run argv (looked up in PATH), its standard output into out (at most PS_OUT_MAX bytes), its
 * standard error dropped, for at most PS_RUN_MS. Returns the exit status (0-255), or -1 (error
 * set) when it could not be run, was killed, took too long, or said too much. */
static int run(char *const argv[], agc_buf *out)
{
	posix_spawn_file_actions_t fa;
	int pfd[2], st, err;
	char **env = child_env();
	bool failed = false;
	int64_t deadline, limit = run_ms();
	pid_t pid;

	agc_buf_clear(out);
	if (!env)
		return agc_error_oom();
	if (pipe(pfd) < 0) {
		free(env);
		return agc_error_errno(-1, errno, "cannot run '%s'", argv[0]);
	}
	/* close-on-exec at once: no other child of this process keeps the pipe open */
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		return agc_error_errno(-1, err, "cannot run '%s' (the ps process backend needs it on PATH)",
				       argv[0]);
	}
	helper_note(pid);
	deadline = mono_us() + limit * 1000;
	for (;;) {
		struct pollfd pf = {pfd[0], POLLIN, 0};
		int64_t left = (deadline - mono_us()) / 1000;
		ssize_t n;

		if (left <= 0) {
			agc_error_set(-1, "'%s' did not finish within %lld ms", argv[0], (long long)limit);
			failed = true;
			break;
		}
		n = poll(&pf, 1, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR) {
			agc_error_errno(-1, errno, "cannot read from '%s'", argv[0]);
			failed = true;
			break;
		}
		if (n <= 0)
			continue;
		if (out->len >= PS_OUT_MAX) {
			agc_error_set(-1, "'%s' said more than %zu bytes", argv[0], PS_OUT_MAX);
			failed = true;
			break;
		}
		if (agc_buf_grow(out, 65536) < 0) {
			failed = true;
			break;
		}
		n = read(pfd[0], out->ptr + out->len, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		out->len += (size_t)n;
		out->ptr[out->len] = '\0';
	}
	if (failed)
		kill(pid, SIGKILL);
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return agc_error_errno(-1, errno, "cannot wait for '%s'", argv[0]);
	if (failed)
		return -1;
	if (WIFSIGNALED(st))
		return agc_error_set(-1, "'%s' was killed by signal %d", argv[0], WTERMSIG(st));
	if (!out->ptr && agc_buf_grow(out, 1) == 0)
		out->ptr[0] = '\0';
	return WEXITSTATUS(st);
}

/* ---- parsing ps ------------------------------------------------------------------------- */

int agc_procps_parse_lstart(const char *s, const char **end, int64_t *secs)
{
	static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;
	int m, n = 0;
	unsigned d, hh, mm, ss, yy;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	/* "Wed Jul 29 14:40:53 2026": the day's name is skipped, the rest read in the C locale
	 * whatever the caller's is */
	while (*s == ' ')
		s++;
	if (strlen(s) < 24 || s[3] != ' ')
		return -1;
	s += 4;
	while (*s == ' ')
		s++;
	for (m = 0; m < 12; m++)
		if (strncmp(s, mon[m], 3) == 0 && s[3] == ' ')
			break;
	if (m == 12)
		return -1;
	s += 4;
	if (sscanf(s, "%u %u:%u:%u %u%n", &d, &hh, &mm, &ss, &yy, &n) != 5 || d < 1 || d > 31 ||
	    hh > 23 || mm > 59 || ss > 60 || yy < 1970 || yy > 9999)
		return -1;
	tm.tm_year = (int)yy - 1900;
	tm.tm_mon = m;
	tm.tm_mday = (int)d;
	tm.tm_hour = (int)hh;
	tm.tm_min = (int)mm;
	tm.tm_sec = (int)ss;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*secs = (int64_t)t;
	if (end)
		*end = s + n;
	return 0;
}

/* Read a decimal number of at most max from *s (spaces before it skipped). Returns 0 or -1. */
static int num(const char **s, unsigned long long max, unsigned long long *v)
{
	const char *p = *s;
	unsigned long long x = 0;

	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (unsigned)(*p - '0');
		if (x > max)
			return -1;
	}
	if (*p != ' ')
		return -1;
	*s = p;
	*v = x;
	return 0;
}

int agc_procps_parse_line(const char *line, agc_procps_ent *e)
{
	const char *s = line;
	unsigned long long pid, ppid, uid;
	int64_t start;

	memset(e, 0, sizeof(*e));
	if (num(&s, INT_MAX, &pid) < 0 || pid == 0 || num(&s, INT_MAX, &ppid) < 0 ||
	    num(&s, 0xffffffffULL, &uid) < 0)
		return -1;
	while (*s == ' ')
		s++;
	if (!*s || *s == ' ')
		return -1;
	e->state = *s;
	while (*s && *s != ' ')
		s++;
	if (agc_procps_parse_lstart(s, &s, &start) < 0)
		return -1;
	/* one space, then the command (empty for a process without one) */
	if (*s == ' ')
		s++;
	e->pid = (pid_t)pid;
	e->ppid = (pid_t)ppid;
	e->uid = (uid_t)uid;
	e->start = start;
	e->cmd = s;
	e->cmdlen = strlen(s);
	return 0;
}

/* ---- the snapshot of a scan ------------------------------------------------------------- */

typedef struct psfile {
	pid_t pid;
	char kind;        /* 'c' current dir, 'f' an fd, 'm' a mapping (mem, txt) */
	agc_devino id;
	char *name;       /* the current dir's path */
} psfile;

typedef struct pssnap {
	agc_buf text;             /* the listing; the entries point into it */
	struct { agc_procps_ent *v; size_t n, cap; } ents; /* sorted by pid */
	bool env_done;            /* the environments were listed (env_rc their outcome) */
	int env_rc;
	char env_err[PS_ERR_MAX];
	agc_buf envtext;
	struct { const char **v; size_t *len; size_t n; } env; /* per ent: its environment text */
	bool files_done;
	int files_rc;
	char files_err[PS_ERR_MAX];
	struct { psfile *v; size_t n, cap; } files;            /* sorted by pid */
	/* When set, the open files and environments are listed for these pids alone (a re-check
	 * of a few: agc_procps_scope); a read of another pid lists them for every process. */
	pid_t *scope;                                          /* sorted */
	size_t n_scope;
	bool files_scoped, env_scoped;                         /* what was listed was scoped */
} pssnap;

static pthread_mutex_t snap_mu = PTHREAD_MUTEX_INITIALIZER;
static pssnap *cur;
/* A listing taken for agentgc's ancestors is the listing of the scan that asks for one right
 * after (holders.c asks for both, in that order): one ps run per scan, not two. */
#define PS_REUSE_US 100000
static bool cur_spare;
static int64_t cur_taken_us;
/* cur is the listing agc_procps_each_pid_ident just took: a scan that its caller begins right
 * after it (agc_procps_self_and_ancestors, listed) reads it, not a listing of its own. */
static bool cur_ident;

static void snap_free(pssnap *s);
static pssnap *snap_take(void);

/* The listing of a scan: the one just taken for the ancestors, once, else (and always when
 * fresh: a listing that must show what runs now) a new one. Returns it installed as cur (the
 * caller holds no lock), or NULL (error set). */
static pssnap *scan_listing(bool fresh)
{
	pssnap *s = NULL;

	pthread_mutex_lock(&snap_mu);
	if (!fresh && cur && cur_spare && mono_us() - cur_taken_us < PS_REUSE_US)
		s = cur;
	cur_spare = false;
	pthread_mutex_unlock(&snap_mu);
	if (s)
		return s;
	if (!(s = snap_take()))
		return NULL;
	pthread_mutex_lock(&snap_mu);
	snap_free(cur);
	cur = s;
	cur_ident = fresh;
	pthread_mutex_unlock(&snap_mu);
	return s;
}

static void snap_free(pssnap *s)
{
	size_t i;

	if (!s)
		return;
	agc_buf_release(&s->text);
	agc_buf_release(&s->envtext);
	free(s->ents.v);
	free(s->env.v);
	free(s->env.len);
	for (i = 0; i < s->files.n; i++)
		free(s->files.v[i].name);
	free(s->files.v);
	free(s->scope);
	free(s);
}

static int ent_cmp(const void *a, const void *b)
{
	const agc_procps_ent *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const agc_procps_ent *ent_find(const pssnap *s, pid_t pid)
{
	agc_procps_ent key;

	if (!s || !s->ents.n)
		return NULL;
	key.pid = pid;
	return bsearch(&key, s->ents.v, s->ents.n, sizeof(key), ent_cmp);
}

/* Split text into lines (NUL-terminated in place) and call cb for each. */
static int each_line(char *text, size_t len, int (*cb)(char *line, void *ud), void *ud)
{
	char *p = text, *end = text + len;
	int rc;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl)
			*nl = '\0';
		if (*p && (rc = cb(p, ud)) != 0)
			return rc;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static int listing_cb(char *line, void *ud)
{
	pssnap *s = ud;
	agc_procps_ent e, *slot;

	/* a line ps writes that is no process (a header, a warning) is not one; a helper of
	 * this process's (this very ps, an lsof) is none of the table's */
	if (agc_procps_parse_line(line, &e) < 0 || helper_is(e.pid, e.ppid))
		return 0;
	if (!(slot = AGC_ARRAY_PUSH(&s->ents, PS_ENTS_MAX)))
		return -1;
	*slot = e;
	return 0;
}

/* A new listing of every process. Returns it, or NULL (error set). */
static pssnap *snap_take(void)
{
	char *argv[] = {"ps", "-axww", "-o", "pid=,ppid=,uid=,stat=,lstart=,command=", NULL};
	pssnap *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		agc_error_oom();
		return NULL;
	}
	s->text.max = PS_OUT_MAX + 1;
	rc = run(argv, &s->text);
	if (rc != 0) {
		if (rc > 0)
			agc_error_set(-1, "'ps' failed (exit %d): cannot read the process table", rc);
		snap_free(s);
		return NULL;
	}
	if (each_line(s->text.ptr, s->text.len, listing_cb, s) < 0) {
		snap_free(s);
		return NULL;
	}
	qsort(s->ents.v, s->ents.n, sizeof(*s->ents.v), ent_cmp);
	/* ps lists itself and its parent (this process): a listing without this process is no
	 * listing of the whole table */
	if (!ent_find(s, getpid())) {
		agc_error_set(-1, "'ps' did not list this process (pid %ld): cannot read the process table",
			      (long)getpid());
		snap_free(s);
		return NULL;
	}
	return s;
}

/* ---- environments ----------------------------------------------------------------------- */

static int env_cb(char *line, void *ud)
{
	pssnap *s = ud;
	const char *p = line;
	unsigned long long pid;
	const agc_procps_ent *e;
	size_t i;

	while (*p == ' ')
		p++;
	if (num(&p, INT_MAX, &pid) < 0)
		return 0;
	p++;
	e = ent_find(s, (pid_t)pid);
	/* the environment follows the command, as the first listing gave it: a process whose
	 * command changed since (an exec) is not told apart, and has none */
	if (!e || strncmp(p, e->cmd, e->cmdlen) != 0 || (p[e->cmdlen] != ' ' && p[e->cmdlen] != '\0'))
		return 0;
	i = (size_t)(e - s->ents.v);
	s->env.v[i] = p + e->cmdlen + (p[e->cmdlen] == ' ');
	s->env.len[i] = strlen(s->env.v[i]);
	return 0;
}

/* Whether pid is in the scope of s (or s has none). */
static bool in_scope(const pssnap *s, pid_t pid)
{
	size_t lo = 0, hi = s->n_scope;

	if (!s->scope)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->scope[mid] == pid)
			return true;
		if (s->scope[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The scope as ps's and lsof's -p take it: "pid,pid,...", this process's own pid among them
 * (so a listing always has one process to show, and is told to have worked by it). Returns
 * a malloc'd string, or NULL (error set). */
static char *scope_arg(const pssnap *s)
{
	agc_buf b = AGC_BUF_INIT;
	size_t i;
	int rc;

	rc = agc_buf_printf(&b, "%ld", (long)getpid());
	for (i = 0; rc == 0 && i < s->n_scope; i++)
		if (s->scope[i] != getpid())
			rc = agc_buf_printf(&b, ",%ld", (long)s->scope[i]);
	if (rc < 0) {
		agc_buf_release(&b);
		return NULL;
	}
	return b.ptr;
}

/* The environments of the listing's processes (of its scope, when it has one), listed once
 * per snapshot (under snap_mu); pid is the one about to be read: outside what a scoped listing
 * covered, every process's are listed. */
static int env_load(pssnap *s, pid_t pid)
{
#if defined(__linux__)
	/* the BSD-style e of procps: the environment after the command */
	char *all[] = {"ps", "axwwe", "-o", "pid=,command=", NULL};
	char *some[] = {"ps", "wwe", "-o", "pid=,command=", "-p", NULL, NULL};
#elif defined(__APPLE__)
	char *all[] = {"ps", "-axwwE", "-o", "pid=,command=", NULL};
	char *some[] = {"ps", "-wwE", "-o", "pid=,command=", "-p", NULL, NULL};
#else
	char *all[] = {"ps", "-axwwe", "-o", "pid=,command=", NULL};
	char *some[] = {"ps", "-wwe", "-o", "pid=,command=", "-p", NULL, NULL};
#endif
	char *list = NULL;
	int rc;

	if (s->env_done && s->env_scoped && !in_scope(s, pid)) {
		/* listed for a few; this one is not among them: every process's, afresh */
		s->env_done = false;
		memset(s->env.v, 0, (s->ents.n + 1) * sizeof(*s->env.v));
		memset(s->env.len, 0, (s->ents.n + 1) * sizeof(*s->env.len));
	}
	if (s->env_done)
		return s->env_rc < 0 ? agc_error_set(-1, "%s", s->env_err) : 0;
	s->env_done = true;
	s->env_scoped = s->scope && in_scope(s, pid);
	if (!s->env.v)
		s->env.v = calloc(s->ents.n + 1, sizeof(*s->env.v));
	if (!s->env.len)
		s->env.len = calloc(s->ents.n + 1, sizeof(*s->env.len));
	s->envtext.max = PS_OUT_MAX + 1;
	if (!s->env.v || !s->env.len)
		rc = agc_error_oom();
	else if (s->env_scoped && !(list = scope_arg(s)))
		rc = -1;
	else {
		some[5] = list;
		if ((rc = run(s->env_scoped ? some : all, &s->envtext)) > 0)
			rc = agc_error_set(-1, "'ps' failed (exit %d) listing environments", rc);
	}
	free(list);
	if (rc == 0)
		rc = each_line(s->envtext.ptr, s->envtext.len, env_cb, s);
	s->env_rc = rc < 0 ? -1 : 0;
	if (rc < 0)
		snprintf(s->env_err, sizeof(s->env_err), "%s", agc_error_last());
	return s->env_rc;
}

/* ---- open files ------------------------------------------------------------------------- */

int agc_procps_parse_lsof(char *text, size_t len, int (*cb)(const agc_procps_file *f, void *ud), void *ud)
{
	char *p = text, *end = text + len;
	agc_procps_file f;
	bool open_set = false;
	int rc;

	memset(&f, 0, sizeof(f));
	/* -F pfDin: "p<pid>" starts a process, "f<fd>" a file of it, then its "D0x<dev>",
	 * "i<inode>" and "n<name>"; a file is told when the next begins */
	for (;;) {
		char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		char *line = p;
		bool last = p >= end;

		if (!last) {
			if (nl)
				*nl = '\0';
			p = nl ? nl + 1 : end;
		}
		if (last || line[0] == 'p' || line[0] == 'f') {
			if (open_set && f.pid > 0 && f.has_dev && f.has_ino && (rc = cb(&f, ud)) != 0)
				return rc;
			open_set = false;
		}
		if (last)
			return 0;
		switch (line[0]) {
		case 'p': {
			char *e;
			long v = strtol(line + 1, &e, 10);

			f.pid = *e || v <= 0 || v > INT_MAX ? 0 : (pid_t)v;
			break;
		}
		case 'f':
			open_set = true;
			f.has_dev = f.has_ino = false;
			f.name = NULL;
			snprintf(f.fd, sizeof(f.fd), "%s", line + 1);
			break;
		case 'D': {
			char *e;
			unsigned long long v = strtoull(line + 1, &e, 16);

			f.has_dev = !*e && line[1];
			f.dev = (dev_t)v;
			break;
		}
		case 'i': {
			char *e;
			unsigned long long v = strtoull(line + 1, &e, 10);

			f.has_ino = !*e && line[1];
			f.ino = (ino_t)v;
			break;
		}
		case 'n':
			f.name = line + 1;
			break;
		default:
			break;
		}
	}
}

static int fd_is_number(const char *fd)
{
	if (!*fd)
		return 0;
	for (; *fd; fd++)
		if (*fd < '0' || *fd > '9')
			return 0;
	return 1;
}

static int file_cmp(const void *a, const void *b)
{
	const psfile *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int add_file(pssnap *s, pid_t pid, char kind, dev_t dev, ino_t ino, const char *name)
{
	psfile *e = AGC_ARRAY_PUSH(&s->files, PS_FILES_MAX);

	if (!e)
		return -1;
	e->pid = pid;
	e->kind = kind;
	e->id.dev = dev;
	e->id.ino = ino;
	if (name && !(e->name = agc_strdup(name))) {
		s->files.n--;
		return -1;
	}
	return 0;
}

static int lsof_cb(const agc_procps_file *f, void *ud)
{
	pssnap *s = ud;
	char kind;

	if (strcmp(f->fd, "cwd") == 0)
		kind = 'c';
	else if (strcmp(f->fd, "txt") == 0 || strcmp(f->fd, "mem") == 0 || strcmp(f->fd, "DEL") == 0)
		kind = 'm';
	else if (fd_is_number(f->fd))
		kind = 'f';
	else
		return 0; /* the root dir, a kernel's text, ...: none of the gate's */
	/* lsof gives the device as stat gives it (st_dev): matched as it is. A name is never
	 * looked up again (a stat of it could hang on a dead network mount, or find another
	 * file by now). */
	return add_file(s, f->pid, kind, f->dev, f->ino, kind == 'c' ? f->name : NULL);
}

/* The open files of every process (of the scope, when the snapshot has one), listed once per
 * snapshot (under snap_mu); pid is the one about to be read: outside what a scoped listing
 * covered, every process's are listed. -b: lsof stats each file itself, not through a child
 * of its own with a timer for each call (a third of the time of a listing; run() bounds how
 * long lsof may take). */
static int files_load(pssnap *s, pid_t pid)
{
	char *all[] = {"lsof", "-n", "-P", "-w", "-b", "-F", "pfDin", NULL};
	char *some[] = {"lsof", "-n", "-P", "-w", "-b", "-F", "pfDin", "-p", NULL, NULL};
	agc_buf out = AGC_BUF_INIT_MAX(PS_OUT_MAX + 1);
	char *list = NULL;
	int rc;
	size_t i;
	bool self = false;

	if (s->files_done && s->files_scoped && !in_scope(s, pid)) {
		s->files_done = false;
		for (i = 0; i < s->files.n; i++)
			free(s->files.v[i].name);
		s->files.n = 0;
	}
	if (s->files_done)
		return s->files_rc < 0 ? agc_error_set(-1, "%s", s->files_err) : 0;
	s->files_done = true;
	s->files_scoped = s->scope && in_scope(s, pid);
	if (s->files_scoped && !(list = scope_arg(s)))
		rc = -1;
	else {
		some[8] = list;
		rc = run(s->files_scoped ? some : all, &out);
	}
	free(list);
	/* lsof exits 1 when some process could not be looked at (gone, another user's) */
	if (rc > 1)
		rc = agc_error_set(-1, "'lsof' failed (exit %d): cannot see open files", rc);
	if (rc >= 0)
		rc = agc_procps_parse_lsof(out.ptr, out.len, lsof_cb, s) < 0 ? -1 : 0;
	agc_buf_release(&out);
	if (rc == 0) {
		qsort(s->files.v, s->files.n, sizeof(*s->files.v), file_cmp);
		/* this process has files open (its standard streams, the pipe from lsof): a
		 * listing without them saw nothing */
		for (i = 0; i < s->files.n && !self; i++)
			self = s->files.v[i].pid == getpid();
		if (!self)
			rc = agc_error_set(-1, "'lsof' did not list this process's files: cannot see open files");
	}
	s->files_rc = rc < 0 ? -1 : 0;
	if (rc < 0)
		snprintf(s->files_err, sizeof(s->files_err), "%s", agc_error_last());
	return s->files_rc;
}

/* The reads of the current listing that follow are of these pids (a re-check of a few): their
 * open files and environments are listed for them alone. More than PS_SCOPE_MAX: for all. */
#define PS_SCOPE_MAX 256

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

void agc_procps_scope(const pid_t *pids, size_t n)
{
	pid_t *v;

	pthread_mutex_lock(&snap_mu);
	if (cur && !cur->files_done && !cur->env_done && !cur->scope && n && n <= PS_SCOPE_MAX &&
	    (v = malloc(n * sizeof(*v)))) {
		memcpy(v, pids, n * sizeof(*v));
		qsort(v, n, sizeof(*v), pid_cmp);
		cur->scope = v;
		cur->n_scope = n;
	}
	pthread_mutex_unlock(&snap_mu);
}

/* ---- the calls of proc.h --------------------------------------------------------------- */

static void fill(const agc_procps_ent *e, agc_proc *out)
{
	const char *b = e->cmd, *sp;
	size_t n;

	memset(out, 0, sizeof(*out));
	out->pid = e->pid;
	out->ppid = e->ppid;
	out->uid = e->uid;
	out->start = (unsigned long long)e->start;
	out->state = e->state;
	/* the command's first word, its basename: what the kernel's short name would be */
	sp = memchr(b, ' ', e->cmdlen);
	n = sp ? (size_t)(sp - b) : e->cmdlen;
	{
		size_t k;

		for (k = n; k > 0 && b[k - 1] != '/'; k--)
			;
		b += k;
		n -= k;
	}
	if (n >= sizeof(out->comm))
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, b, n);
	out->comm[n] = '\0';
}

/* The pids of a listing (scan_listing), with their identities. */
static int each_ident(bool fresh, int (*cb)(pid_t pid, uint64_t ident, void *ud), void *ud)
{
	pssnap *s;
	pid_t *pids;
	uint64_t *ident;
	size_t i, n;
	int rc = 0;

	if (backend_check() < 0)
		return -1;
	if (!(s = scan_listing(fresh)))
		return -1;
	n = s->ents.n;
	pids = malloc((n + 1) * sizeof(*pids));
	ident = malloc((n + 1) * sizeof(*ident));
	if (!pids || !ident) {
		free(pids);
		free(ident);
		return agc_error_oom();
	}
	for (i = 0; i < n; i++) {
		const agc_procps_ent *e = &s->ents.v[i];
		uint64_t h = agc_fnv1a(AGC_FNV_BASIS ^ (uint64_t)e->start, e->cmd, e->cmdlen);

		/* over the start and the command (an exec changes it); never 0 */
		pids[i] = e->pid;
		ident[i] = h ? h : 1;
	}
	/* No inode tells one process at a pid from the next here: its start second and its
	 * command stand for one (a pid taken over within the same second by the same command
	 * line is the one process this cannot tell apart) */
	for (i = 0; i < n && rc == 0; i++)
		rc = cb(pids[i], ident[i], ud);
	free(pids);
	free(ident);
	return rc;
}

/* A listing that the caller compares with an earlier one: always taken now (the listing of
 * the ancestors a scan took may be older than something the caller did since). */
int agc_procps_each_pid_ident(int (*cb)(pid_t pid, uint64_t ident, void *ud), void *ud)
{
	return each_ident(true, cb, ud);
}

struct each_pid_only {
	int (*cb)(pid_t pid, void *ud);
	void *ud;
};

static int each_pid_only_cb(pid_t pid, uint64_t ident, void *ud)
{
	struct each_pid_only *e = ud;

	(void)ident;
	return e->cb(pid, e->ud);
}

int agc_procps_each_pid(int (*cb)(pid_t pid, void *ud), void *ud)
{
	struct each_pid_only e = {cb, ud};

	return each_ident(false, each_pid_only_cb, &e);
}

int agc_procps_each(int (*cb)(const agc_proc *p, void *ud), void *ud)
{
	agc_proc *v;
	size_t i, n;
	int rc = 0;

	if (backend_check() < 0)
		return -1;
	{
		pssnap *s = scan_listing(false);

		if (!s)
			return -1;
		n = s->ents.n;
		v = malloc((n + 1) * sizeof(*v));
		if (!v)
			return agc_error_oom();
		for (i = 0; i < n; i++)
			fill(&s->ents.v[i], &v[i]);
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = cb(&v[i], ud);
	free(v);
	return rc;
}

/* One process, fresh: ps for that pid alone. *cmd (may be NULL) gets its command (malloc'd). */
static int one(pid_t pid, agc_proc *out, char **cmd)
{
	char pidarg[24], *argv[] = {"ps", "-ww", "-o", "pid=,ppid=,uid=,stat=,lstart=,command=", "-p", pidarg, NULL};
	agc_buf text = AGC_BUF_INIT_MAX((size_t)1 << 20);
	agc_procps_ent e;
	char *nl;
	int rc;

	if (backend_check() < 0)
		return -1;
	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	snprintf(pidarg, sizeof(pidarg), "%ld", (long)pid);
	rc = run(argv, &text);
	if (rc < 0) {
		agc_buf_release(&text);
		return -1;
	}
	/* ps exits 1 when no process has that pid */
	if ((nl = memchr(text.ptr, '\n', text.len)))
		*nl = '\0';
	if (!text.len || agc_procps_parse_line(text.ptr, &e) < 0 || e.pid != pid) {
		agc_buf_release(&text);
		if (rc > 1)
			return agc_error_set(-1, "'ps' failed (exit %d) for pid %ld", rc, (long)pid);
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	}
	fill(&e, out);
	if (cmd && !(*cmd = strndup(e.cmd, e.cmdlen)))
		rc = agc_error_oom();
	else
		rc = 0;
	agc_buf_release(&text);
	return rc;
}

int agc_procps_stat(pid_t pid, agc_proc *out)
{
	return one(pid, out, NULL);
}

/* A command as argv: its words NUL-separated (ps joins the arguments with spaces, so an
 * argument with a space in it comes out as two: an id has none). */
static int argv_of(const char *cmd, size_t len, size_t max, agc_buf *out)
{
	size_t i;

	agc_buf_clear(out);
	if (len > max)
		len = max;
	if (agc_buf_add(out, cmd, len) < 0 || agc_buf_addc(out, '\0') < 0)
		return -1;
	for (i = 0; i < len; i++)
		if (out->ptr[i] == ' ')
			out->ptr[i] = '\0';
	return 0;
}

int agc_procps_argv(pid_t pid, size_t max, agc_buf *out)
{
	agc_proc p;
	char *cmd = NULL;
	int rc = one(pid, &p, &cmd);

	if (rc == 0)
		rc = argv_of(cmd, strlen(cmd), max, out);
	free(cmd);
	return rc;
}

/* The current snapshot's entry of pid, under snap_mu; AGC_ENOTFOUND when it lists none. */
static int snap_ent(pid_t pid, const agc_procps_ent **e)
{
	if (backend_check() < 0)
		return -1;
	if (!cur)
		return agc_error_set(-1, "no listing of the process table to read pid %ld from", (long)pid);
	*e = ent_find(cur, pid);
	return *e ? 0 : agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
}

int agc_procps_stat_at(pid_t pid, agc_proc *out)
{
	const agc_procps_ent *e;
	int rc;

	pthread_mutex_lock(&snap_mu);
	if ((rc = snap_ent(pid, &e)) == 0)
		fill(e, out);
	pthread_mutex_unlock(&snap_mu);
	return rc;
}

int agc_procps_argv_at(pid_t pid, size_t max, agc_buf *out)
{
	const agc_procps_ent *e;
	int rc;

	pthread_mutex_lock(&snap_mu);
	if ((rc = snap_ent(pid, &e)) == 0)
		rc = argv_of(e->cmd, e->cmdlen, max, out);
	pthread_mutex_unlock(&snap_mu);
	return rc;
}

int agc_procps_environ_at(pid_t pid, size_t max, agc_buf *out)
{
	const agc_procps_ent *e;
	int rc;

	pthread_mutex_lock(&snap_mu);
	if ((rc = snap_ent(pid, &e)) == 0 && (rc = env_load(cur, pid)) == 0) {
		size_t i = (size_t)(e - cur->ents.v);

		/* none listed: another user's, or one whose command changed: not ours to read */
		if (!cur->env.v[i])
			rc = agc_error_set(AGC_EUNSAFE, "cannot read the environment of pid %ld", (long)pid);
		else
			rc = argv_of(cur->env.v[i], cur->env.len[i], max, out);
	}
	pthread_mutex_unlock(&snap_mu);
	return rc;
}

/* Call cb for each file of pid of the kinds in kinds (from the snapshot's lsof listing). */
static int files_of(pid_t pid, const char *kinds, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	agc_devino *ids = NULL;
	size_t n = 0, i, lo, hi;
	int rc;

	pthread_mutex_lock(&snap_mu);
	if ((rc = backend_check()) == 0 && !cur)
		rc = agc_error_set(-1, "no listing of the process table to read pid %ld from", (long)pid);
	if (rc == 0)
		rc = files_load(cur, pid);
	if (rc == 0) {
		for (lo = 0, hi = cur->files.n; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (cur->files.v[mid].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (i = lo; i < cur->files.n && cur->files.v[i].pid == pid; i++)
			n++;
		ids = malloc((n + 1) * sizeof(*ids));
		if (!ids)
			rc = agc_error_oom();
		for (i = lo, n = 0; ids && i < cur->files.n && cur->files.v[i].pid == pid; i++)
			if (strchr(kinds, cur->files.v[i].kind))
				ids[n++] = cur->files.v[i].id;
	}
	pthread_mutex_unlock(&snap_mu);
	/* cb outside the lock: it may ask for more */
	for (i = 0; rc == 0 && i < n; i++)
		rc = cb(&ids[i], ud);
	free(ids);
	return rc;
}

int agc_procps_fds(pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	/* the current dir is an fd of the process for the gate too (a dir fd on an artifact) */
	return files_of(pid, "f", cb, ud);
}

int agc_procps_maps(pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	return files_of(pid, "m", cb, ud);
}

static int first_cb(const agc_devino *f, void *ud)
{
	*(agc_devino *)ud = *f;
	return 1;
}

int agc_procps_cwd_id(pid_t pid, agc_devino *out)
{
	int rc = files_of(pid, "c", first_cb, out);

	if (rc == 1)
		return 0;
	if (rc == 0)
		return agc_error_set(AGC_EUNSAFE, "cannot see the current dir of pid %ld", (long)pid);
	return rc;
}

int agc_procps_cwd(pid_t pid, agc_buf *out)
{
	size_t i;
	int rc;

	pthread_mutex_lock(&snap_mu);
	if ((rc = backend_check()) == 0 && !cur)
		rc = agc_error_set(-1, "no listing of the process table to read pid %ld from", (long)pid);
	if (rc == 0)
		rc = files_load(cur, pid);
	if (rc == 0) {
		rc = agc_error_set(AGC_EUNSAFE, "cannot see the current dir of pid %ld", (long)pid);
		for (i = 0; i < cur->files.n; i++)
			if (cur->files.v[i].pid == pid && cur->files.v[i].kind == 'c' && cur->files.v[i].name) {
				agc_buf_clear(out);
				rc = agc_buf_adds(out, cur->files.v[i].name);
				break;
			}
	}
	pthread_mutex_unlock(&snap_mu);
	return rc;
}

int agc_procps_open(pid_t pid)
{
	const agc_procps_ent *e;
	int rc, fd;

	pthread_mutex_lock(&snap_mu);
	rc = snap_ent(pid, &e);
	pthread_mutex_unlock(&snap_mu);
	if (rc < 0)
		return rc;
	/* nothing to open: a handle the reads ignore (they look the pid up), closed by the
	 * caller as a /proc dir would be */
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? agc_error_errno(-1, errno, "cannot open '/'") : fd;
}

/* This process and its ancestors in listing s (*n of them), or NULL (error set). */
static pid_t *ancestors(const pssnap *s, size_t *n)
{
	size_t len = 0, cap = s->ents.n + 2;
	pid_t *v = malloc(cap * sizeof(*v)), pid = getpid();

	if (!v) {
		agc_error_oom();
		return NULL;
	}
	v[len++] = pid;
	while (pid > 1 && len < cap) {
		const agc_procps_ent *e = ent_find(s, pid);

		if (!e || e->ppid <= 0 || e->ppid == pid)
			break;
		pid = e->ppid;
		v[len++] = pid;
	}
	*n = len;
	return v;
}

/* listed: the caller's agc_procps_each_pid_ident has just listed every process for the scan
 * this begins; that listing (when it is still the current one) is the scan's, and no other ps
 * runs. Otherwise a new listing. */
int agc_procps_self_and_ancestors(bool listed, pid_t **out, size_t *n)
{
	pssnap *s;
	pid_t *v;

	*out = NULL;
	*n = 0;
	if (backend_check() < 0)
		return -1;
	pthread_mutex_lock(&snap_mu);
	if (listed && cur && cur_ident) {
		v = ancestors(cur, n);
		cur_spare = v != NULL;
		cur_taken_us = mono_us();
		pthread_mutex_unlock(&snap_mu);
		*out = v;
		return v ? 0 : -1;
	}
	pthread_mutex_unlock(&snap_mu);
	if (!(s = snap_take()))
		return -1;
	if (!(v = ancestors(s, n))) {
		snap_free(s);
		return -1;
	}
	pthread_mutex_lock(&snap_mu);
	snap_free(cur);
	cur = s;
	cur_ident = false;
	cur_spare = true;
	cur_taken_us = mono_us();
	pthread_mutex_unlock(&snap_mu);
	*out = v;
	return 0;
}

/* ---- the only backend (a system without /proc, or a build with AGC_PROC_PS_ONLY) ---------- */

#if !defined(__linux__) || defined(AGC_PROC_PS_ONLY)
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || \
	defined(__DragonFly__)
#include <sys/sysctl.h>
#include <sys/time.h>
#endif

int agc_proc_each(const char *procroot, int (*cb)(const agc_proc *p, void *ud), void *ud)
{
	(void)procroot;
	return agc_procps_each(cb, ud);
}

int agc_proc_each_pid_ident(const char *procroot, int (*cb)(pid_t pid, uint64_t ident, void *ud), void *ud)
{
	(void)procroot;
	return agc_procps_each_pid_ident(cb, ud);
}

int agc_proc_each_pid(const char *procroot, int (*cb)(pid_t pid, void *ud), void *ud)
{
	(void)procroot;
	return agc_procps_each_pid(cb, ud);
}

int agc_proc_stat(const char *procroot, pid_t pid, agc_proc *out)
{
	(void)procroot;
	return agc_procps_stat(pid, out);
}

int agc_proc_argv(const char *procroot, pid_t pid, size_t max, agc_buf *out)
{
	(void)procroot;
	return agc_procps_argv(pid, max, out);
}

int agc_proc_argv_listed(const char *procroot, pid_t pid, size_t max, agc_buf *out)
{
	(void)procroot;
	return agc_procps_argv_at(pid, max, out);
}

int agc_proc_environ(const char *procroot, pid_t pid, size_t max, agc_buf *out)
{
	(void)procroot;
	return agc_procps_environ_at(pid, max, out);
}

int agc_proc_cwd(const char *procroot, pid_t pid, agc_buf *out)
{
	(void)procroot;
	return agc_procps_cwd(pid, out);
}

int agc_proc_fds(const char *procroot, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	(void)procroot;
	return agc_procps_fds(pid, cb, ud);
}

int agc_proc_maps(const char *procroot, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	(void)procroot;
	return agc_procps_maps(pid, cb, ud);
}

int agc_proc_files(const char *procroot, pid_t pid, bool with_maps, int (*cb)(const agc_devino *f, void *ud),
		   void *ud)
{
	int rc = agc_proc_fds(procroot, pid, cb, ud);

	if (rc == 0 && with_maps)
		rc = agc_proc_maps(procroot, pid, cb, ud);
	return rc;
}

int agc_proc_cwd_id(const char *procroot, pid_t pid, agc_devino *out)
{
	(void)procroot;
	return agc_procps_cwd_id(pid, out);
}

int agc_proc_open(const char *procroot, pid_t pid)
{
	(void)procroot;
	return agc_procps_open(pid);
}

int agc_proc_open_in(int rootfd, pid_t pid)
{
	(void)rootfd;
	return agc_procps_open(pid);
}

int agc_proc_stat_at(int pfd, pid_t pid, agc_proc *out)
{
	(void)pfd;
	return agc_procps_stat_at(pid, out);
}

int agc_proc_argv_at(int pfd, pid_t pid, size_t max, agc_buf *out)
{
	(void)pfd;
	return agc_procps_argv_at(pid, max, out);
}

int agc_proc_environ_at(int pfd, pid_t pid, size_t max, agc_buf *out)
{
	(void)pfd;
	return agc_procps_environ_at(pid, max, out);
}

int agc_proc_cwd_id_at(int pfd, pid_t pid, agc_devino *out)
{
	(void)pfd;
	return agc_procps_cwd_id(pid, out);
}

int agc_proc_fds_at(int pfd, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	(void)pfd;
	return agc_procps_fds(pid, cb, ud);
}

int agc_proc_maps_at(int pfd, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	(void)pfd;
	return agc_procps_maps(pid, cb, ud);
}

int agc_proc_alive(pid_t pid)
{
	if (pid <= 0)
		return 0;
	if (kill(pid, 0) == 0)
		return 1;
	return errno == EPERM ? 1 : 0;
}

long agc_proc_ticks_per_sec(void)
{
	long t = sysconf(_SC_CLK_TCK);

	return t > 0 ? t : 100;
}

int agc_proc_boot_ms(const char *procroot, int64_t *out)
{
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || \
	defined(__DragonFly__)
	struct timeval tv;
	size_t len = sizeof(tv);

	(void)procroot;
	if (sysctlbyname("kern.boottime", &tv, &len, NULL, 0) < 0 || len != sizeof(tv) || tv.tv_sec <= 0)
		return agc_error_errno(-1, errno, "cannot read the boot time (kern.boottime)");
	*out = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
	return 0;
#else
	char path[4096], line[256];
	FILE *f;
	long long v;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/stat", procroot ? procroot : "/proc");
	if (!(f = fopen(path, "re")))
		return agc_error_errno(-1, errno, "cannot open '%s'", path);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &v) == 1 && v > 0 && v < INT64_MAX / 1000) {
			*out = (int64_t)v * 1000;
			rc = 0;
			break;
		}
	fclose(f);
	return rc == 0 ? 0 : agc_error_set(-1, "cannot find the boot time in '%s'", path);
#endif
}

int agc_proc_start_ms(const char *procroot, const agc_proc *p, int64_t *out)
{
	(void)procroot;
	*out = (int64_t)p->start * 1000;
	return 0;
}

int agc_proc_start_is_ticks(const char *procroot, const agc_proc *p, unsigned long long ticks)
{
	int64_t boot, ms, d;
	long hz = agc_proc_ticks_per_sec();

	if (agc_proc_boot_ms(procroot, &boot) < 0 || ticks > (unsigned long long)INT64_MAX / 1000)
		return -1;
	ms = boot + (int64_t)(ticks * 1000ULL / (unsigned long long)hz);
	d = ms - (int64_t)p->start * 1000;
	return d > -2000 && d < 2000;
}

pid_t agc_proc_self(const char *procroot)
{
	(void)procroot;
	return getpid();
}

int agc_proc_self_and_ancestors(const char *procroot, bool listed, pid_t **out, size_t *n)
{
	(void)procroot;
	return agc_procps_self_and_ancestors(listed, out, n);
}

void agc_proc_scope(const char *procroot, const pid_t *pids, size_t n)
{
	(void)procroot;
	agc_procps_scope(pids, n);
}
#endif
