/* The ps backend's readers (proc-ps.c): ps lines with their start times taken as UTC whatever
 * the caller's time zone and locale (a daylight saving change must not move a live holder's
 * start and make it look like a reused pid, R5), and lsof's -F output. */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "agc_test.h"
#include "error.h"
#include "proc-ps.h"

/* 2026-07-29T14:40:53Z */
#define T1 1785336053LL

static void test_procps_lstart_utc(void **state)
{
	static const char *const zones[] = {"UTC0", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"};
	int64_t t;
	const char *end;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		setenv("TZ", zones[i], 1);
		tzset();
		assert_int_equal(agc_procps_parse_lstart("Wed Jul 29 14:40:53 2026 rest", &end, &t), 0);
		assert_int_equal(t, T1);
		assert_string_equal(end, " rest");
		/* a single-digit day is padded with a space, as ps prints it */
		assert_int_equal(agc_procps_parse_lstart("Mon Mar  2 01:00:00 2026", NULL, &t), 0);
		assert_int_equal(t, 1772413200LL);
		/* the hour a spring-forward skips in New York and Berlin is a plain UTC hour */
		assert_int_equal(agc_procps_parse_lstart("Sun Mar  8 02:30:00 2026", NULL, &t), 0);
		assert_int_equal(t, 1772937000LL);
	}
	unsetenv("TZ");
	tzset();
}

static void test_procps_lstart_bad(void **state)
{
	static const char *const bad[] = {
		"", "Wed Jul 29 14:40:53", "Wed Jux 29 14:40:53 2026", "Wed Jul 32 14:40:53 2026",
		"Wed Jul 29 24:40:53 2026", "Wed Jul 29 14:60:53 2026", "Wed Jul 29 14:40:53 1969",
		"Mi. Juli 29 14:40:53 2026", "Wed Jul 29 14-40-53 2026", "Wed Jul -1 14:40:53 2026",
	};
	int64_t t;
	size_t i;

	(void)state;
	/* a locale that names months otherwise does not change what is read */
	setlocale(LC_ALL, "");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (agc_procps_parse_lstart(bad[i], NULL, &t) == 0)
			fail_msg("'%s' was read as %lld", bad[i], (long long)t);
	setlocale(LC_ALL, "C");
}

static void test_procps_line(void **state)
{
	agc_procps_ent e;

	(void)state;
	assert_int_equal(agc_procps_parse_line("  4242     1  1000 Ss   Wed Jul 29 14:40:53 2026 /usr/bin/claude --resume 0b9e8a4e-5f0f-4a5e-9d4b-6c1f4f0a1b2c", &e), 0);
	assert_int_equal(e.pid, 4242);
	assert_int_equal(e.ppid, 1);
	assert_int_equal(e.uid, 1000);
	assert_int_equal(e.state, 'S');
	assert_int_equal(e.start, T1);
	assert_int_equal(e.cmdlen, strlen("/usr/bin/claude --resume 0b9e8a4e-5f0f-4a5e-9d4b-6c1f4f0a1b2c"));
	assert_memory_equal(e.cmd, "/usr/bin/claude --resume", 24);
	/* a kernel thread, a zombie */
	assert_int_equal(agc_procps_parse_line("    2     0     0 S    Mon Dec  7 03:05:53 2026 [kthreadd]", &e), 0);
	assert_string_equal(e.cmd, "[kthreadd]");
	assert_int_equal(agc_procps_parse_line("  77    76   0 Z    Mon Dec  7 03:05:53 2026 ", &e), 0);
	assert_int_equal(e.state, 'Z');
	assert_int_equal(e.cmdlen, 0);
	/* what is no process line */
	assert_int_equal(agc_procps_parse_line("  PID  PPID   UID STAT STARTED COMMAND", &e), -1);
	assert_int_equal(agc_procps_parse_line("-1 1 0 S Mon Dec  7 03:05:53 2026 x", &e), -1);
	assert_int_equal(agc_procps_parse_line("0 1 0 S Mon Dec  7 03:05:53 2026 x", &e), -1);
	assert_int_equal(agc_procps_parse_line("99999999999 1 0 S Mon Dec  7 03:05:53 2026 x", &e), -1);
	assert_int_equal(agc_procps_parse_line("12 1 0 S yesterday x", &e), -1);
	assert_int_equal(agc_procps_parse_line("12 1 0", &e), -1);
}

typedef struct got {
	char fd[16];
	pid_t pid;
	dev_t dev;
	ino_t ino;
	char name[64];
} got;

typedef struct gots {
	got v[16];
	size_t n;
} gots;

static int got_cb(const agc_procps_file *f, void *ud)
{
	gots *g = ud;

	assert_true(g->n < 16);
	snprintf(g->v[g->n].fd, sizeof(g->v[g->n].fd), "%s", f->fd);
	g->v[g->n].pid = f->pid;
	g->v[g->n].dev = f->dev;
	g->v[g->n].ino = f->ino;
	snprintf(g->v[g->n].name, sizeof(g->v[g->n].name), "%s", f->name ? f->name : "");
	g->n++;
	return 0;
}

static void test_procps_lsof(void **state)
{
	char text[] = "p100\nfcwd\nD0xfe00\ni42\nn/home/u/w\nfrtd\nD0xfe00\ni2\nn/\n"
		      "f3\nD0x803\ni77\nn/home/u/.claude/projects/-w/x.jsonl\n"
		      "f4\nn/dev/pts/0\n"               /* no device nor inode: not one */
		      "f5\nD0x803\ni\nnpipe\n"            /* an empty inode: not one */
		      "p200\nfmem\nD0x10303\ni9\nn/lib/x.so\nf1\nDzz\ni8\nnbad\n"
		      "pjunk\nf7\nD0x1\ni1\nnorphan\n";  /* no valid pid: not one */
	gots g;

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_int_equal(agc_procps_parse_lsof(text, strlen(text), got_cb, &g), 0);
	assert_int_equal(g.n, 4);
	assert_string_equal(g.v[0].fd, "cwd");
	assert_int_equal(g.v[0].pid, 100);
	assert_int_equal(g.v[0].dev, 0xfe00);
	assert_int_equal(g.v[0].ino, 42);
	assert_string_equal(g.v[0].name, "/home/u/w");
	assert_string_equal(g.v[1].fd, "rtd");
	assert_string_equal(g.v[2].fd, "3");
	assert_int_equal(g.v[2].ino, 77);
	assert_int_equal(g.v[2].dev, 0x803);
	assert_string_equal(g.v[3].fd, "mem");
	assert_int_equal(g.v[3].pid, 200);
	assert_int_equal(g.v[3].dev, 0x10303);
}

/* ---- through the real ps and lsof (skipped when either is missing) --------------------- */

static bool have(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

typedef struct want_file {
	dev_t dev;
	ino_t ino;
	bool seen;
} want_file;

static int want_cb(const agc_devino *f, void *ud)
{
	want_file *w = ud;

	if (f->dev == w->dev && f->ino == w->ino)
		w->seen = true;
	return 0;
}

/* A child that holds path open (and has AGC_TEST_MARK in its environment) until killed. */
static pid_t hold_open(const char *path)
{
	int fds[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDONLY);

		setenv("AGC_TEST_MARK", "held-by-the-child", 1);
		/* the environment ps shows is the one exec gave; the fd stays open across it */
		if (fd < 0 || write(fds[1], "x", 1) != 1)
			_exit(1);
		close(fds[0]);
		execlp("sh", "sh", "-c", "exec sleep 600", "sh", (char *)NULL);
		_exit(1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	/* exec'd: its command line is the shell's */
	for (int i = 0; i < 200; i++) {
		agc_buf a = AGC_BUF_INIT;
		bool execd = agc_proc_argv("/proc", pid, 4096, &a) == 0 && a.ptr && strstr(a.ptr, "sleep");

		agc_buf_release(&a);
		if (execd)
			break;
		usleep(10000);
	}
	return pid;
}

/* A re-check of a few pids lists their files and environments alone; a read of another pid
 * then lists every process's: nothing goes unread because of the narrowing. */
static void test_procps_scope(void **state)
{
	pid_t *anc = NULL, self = getpid(), child;
	size_t n = 0;
	struct stat st;
	want_file w;
	agc_buf env = AGC_BUF_INIT;

	(void)state;
	if (!have("ps") || !have("lsof"))
		skip();
	assert_int_equal(t_setup_dir("procps-scope"), 0);
	t_writes("held", "x");
	assert_int_equal(stat(t_path("held"), &st), 0);
	child = hold_open(t_path("held"));

	/* scoped to this process: the child's file is still seen when asked for */
	assert_int_equal(agc_proc_self_and_ancestors("/proc", false, &anc, &n), 0);
	free(anc);
	agc_proc_scope("/proc", &self, 1);
	w = (want_file){st.st_dev, st.st_ino, false};
	assert_int_equal(agc_proc_fds("/proc", self, want_cb, &w), 0);
	assert_false(w.seen);
	assert_int_equal(agc_proc_fds("/proc", child, want_cb, &w), 0);
	assert_true(w.seen);

	/* scoped to the child: seen at once */
	assert_int_equal(agc_proc_self_and_ancestors("/proc", false, &anc, &n), 0);
	free(anc);
	agc_proc_scope("/proc", &child, 1);
	w.seen = false;
	assert_int_equal(agc_proc_fds("/proc", child, want_cb, &w), 0);
	assert_true(w.seen);

	/* environments: scoped to this process, the child's is read all the same */
	assert_int_equal(agc_proc_self_and_ancestors("/proc", false, &anc, &n), 0);
	free(anc);
	agc_proc_scope("/proc", &self, 1);
	assert_int_equal(agc_proc_environ("/proc", self, 1 << 20, &env), 0);
	assert_int_equal(agc_proc_environ_at(-1, child, 1 << 20, &env), 0);
	assert_non_null(memmem(env.ptr, env.len, "AGC_TEST_MARK=held-by-the-child", 31));
	agc_buf_release(&env);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(t_teardown_dir(), 0);
}

/* The test dir's bin/ with a program NAME of TEXT put first on PATH. Returns PATH as it was
 * (malloc'd, or NULL when unset), for path_restore. */
static char *bin_first(const char *name, const char *text)
{
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL, *rel, *p;

	t_mkdir("bin");
	rel = agc_strfmt("bin/%s", name);
	assert_non_null(rel);
	t_writes(rel, text);
	assert_int_equal(chmod(t_path(rel), 0755), 0);
	free(rel);
	p = agc_strfmt("%s:%s", t_path("bin"), path ? path : "/usr/bin:/bin");
	assert_non_null(p);
	setenv("PATH", p, 1);
	free(p);
	return path;
}

static void path_restore(char *path)
{
	setenv("PATH", path ? path : "/usr/bin:/bin", 1);
	free(path);
}

/* An lsof that does not answer is killed after the timeout, and what it was to tell is an
 * error: the gate answers in use (R5), it never waits forever. */
static void test_procps_timeout(void **state)
{
	pid_t *anc = NULL, self = getpid();
	size_t n = 0;
	want_file w = {0, 0, false};
	char *path;
	struct timespec a, b;
	int rc;

	(void)state;
	if (!have("ps"))
		skip();
	assert_int_equal(t_setup_dir("procps-timeout"), 0);
	path = bin_first("lsof", "#!/bin/sh\nexec sleep 30\n");
	/* the listing (a real ps) is taken before the short timeout applies: under load a ps
	 * of the whole table can take longer than the 300 ms the fake lsof is given */
	assert_int_equal(agc_proc_self_and_ancestors("/proc", false, &anc, &n), 0);
	free(anc);
	setenv("AGENTGC_TEST_PS_TIMEOUT_MS", "300", 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = agc_proc_fds("/proc", self, want_cb, &w);
	clock_gettime(CLOCK_MONOTONIC, &b);
	unsetenv("AGENTGC_TEST_PS_TIMEOUT_MS");
	path_restore(path);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(agc_error_last(), "did not finish within 300 ms"));
	/* killed at the timeout, not waited for */
	assert_true(b.tv_sec - a.tv_sec < 10);
	assert_int_equal(t_teardown_dir(), 0);
}

static int ident_cb(pid_t pid, uint64_t ident, void *ud)
{
	(void)pid;
	(void)ident;
	++*(size_t *)ud;
	return 0;
}

/* How many times the ps of PATH (a counting wrapper) has run. */
static size_t ps_runs(void)
{
	size_t len = 0, n = 0, i;
	char *text = t_read("count", &len);

	for (i = 0; text && i < len; i++)
		n += text[i] == '\n';
	free(text);
	return n;
}

/* A scan begun right after its caller listed every process (listed: a purge's full scan, its
 * re-check) reads that listing: one ps, not two. Without the flag, or once another listing has
 * taken its place, the ancestors are listed afresh (a listing is never read for one scan when
 * it was taken for another). */
static void test_procps_listed(void **state)
{
	char *path, *script;
	const char *real = access("/usr/bin/ps", X_OK) == 0 ? "/usr/bin/ps" : "/bin/ps";
	pid_t *anc = NULL;
	size_t n = 0, procs = 0;

	(void)state;
	if (!have("ps"))
		skip();
	assert_int_equal(t_setup_dir("procps-listed"), 0);
	script = agc_strfmt("#!/bin/sh\necho run >>'%s'\nexec %s \"$@\"\n", t_path("count"), real);
	assert_non_null(script);
	path = bin_first("ps", script);
	free(script);

	/* listed: the ancestors come from the listing just taken */
	assert_int_equal(agc_proc_each_pid_ident("/proc", ident_cb, &procs), 0);
	assert_true(procs >= 1);
	assert_int_equal(ps_runs(), 1);
	assert_int_equal(agc_proc_self_and_ancestors("/proc", true, &anc, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(anc[0], getpid());
	free(anc);
	assert_int_equal(ps_runs(), 1);
	/* not listed: a listing of their own */
	assert_int_equal(agc_proc_each_pid_ident("/proc", ident_cb, &procs), 0);
	assert_int_equal(ps_runs(), 2);
	assert_int_equal(agc_proc_self_and_ancestors("/proc", false, &anc, &n), 0);
	free(anc);
	assert_int_equal(ps_runs(), 3);
	/* the current listing is the ancestors' own now, not one the caller took: listed or not,
	 * a new one */
	assert_int_equal(agc_proc_self_and_ancestors("/proc", true, &anc, &n), 0);
	free(anc);
	assert_int_equal(ps_runs(), 4);

	path_restore(path);
	assert_int_equal(t_teardown_dir(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procps_lstart_utc),
		cmocka_unit_test(test_procps_lstart_bad),
		cmocka_unit_test(test_procps_line),
		cmocka_unit_test(test_procps_lsof),
		cmocka_unit_test(test_procps_scope),
		cmocka_unit_test(test_procps_timeout),
		cmocka_unit_test(test_procps_listed),
	};

	/* the ps backend for the tests that run ps and lsof (the parsers above need none) */
	setenv("AGENTGC_PROC_BACKEND", "ps", 1);

	return cmocka_run_group_tests(tests, NULL, NULL);
}
