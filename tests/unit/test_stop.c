/* stop (SPEC "ps and stop"): before every signal the holder's start time is read again, and a
 * pid whose start time changed since the chain began (another process took it) gets no further
 * signal. The process table here is a made-up tree whose one process stands for a real child
 * of the test: signals reach the child, and the test rewrites the tree's start time of it while
 * the chain waits out the grace. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "agc_test.h"
#include "core.h"

#define ID "0b9e8a4e-5f0f-4a5e-9d4b-6c1f4f0a1b2c"

static agc_ctx *ctx;
static pid_t child = -1;
static char stat_path[PATH_MAX], stat_new[PATH_MAX];
static char reused_text[512];

/* In the child: the graceful signal makes the made-up tree show another process at its pid
 * (as if it had ended and its pid been taken): only async-signal-safe calls. */
static void on_hup(int sig)
{
	int fd = open(stat_new, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	(void)sig;
	if (fd >= 0) {
		if (write(fd, reused_text, strlen(reused_text)) < 0) {
			/* nothing to do: the test sees the old text */
		}
		close(fd);
		rename(stat_new, stat_path);
	}
}

static bool reuse_on_hup;

static int setup(void **state)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;
	char rel[128];

	(void)state;
	if (t_setup_dir("stop") < 0)
		return -1;
	t_mkdir_p("home/.claude/projects/-w", 0700);
	t_writes("home/.claude/projects/-w/" ID ".jsonl",
		 "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"sessionId\":\"" ID
		 "\",\"cwd\":\"/w\"}\n");
	t_mkdir_p("proc", 0700);
	/* the child outlives the graceful signal and SIGTERM: only SIGKILL would end it; it says
	 * when its handlers are set (a signal before that would end it) */
	int ready[2];
	char b;

	if (pipe(ready) < 0)
		return -1;
	child = fork();
	if (child == 0) {
		pid_t me = getpid();

		/* the text of the process that "took" the pid: another start time */
		snprintf(stat_path, sizeof(stat_path), "%s", t_pathf("proc/%ld/stat", (long)me));
		snprintf(stat_new, sizeof(stat_new), "%s", t_pathf("proc/%ld/stat.hup", (long)me));
		snprintf(reused_text, sizeof(reused_text),
			 "%ld (claude) S 1 %ld %ld 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 9999 5000 100\n",
			 (long)me, (long)me, (long)me);
		signal(SIGHUP, reuse_on_hup ? on_hup : SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (child < 0 || read(ready[0], &b, 1) != 1) {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	snprintf(rel, sizeof(rel), "proc/%ld", (long)child);
	t_mkdir_p(rel, 0700);
	o.home = t_path("home");
	o.procroot = t_path("proc");
	return agc_ctx_new(&ctx, &o);
}

static int teardown(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
	agc_ctx_free(ctx);
	ctx = NULL;
	return t_teardown_dir();
}

/* The made-up process: Claude's command line naming the session, started at tick start. */
static void write_proc_state(unsigned long long start, char state)
{
	char rel[128], text[512], argv[128];
	size_t n;

	snprintf(text, sizeof(text), "%ld (claude) %c 1 %ld %ld 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %llu 5000 100\n",
		 (long)child, state, (long)child, (long)child, start);
	snprintf(rel, sizeof(rel), "proc/%ld/stat.new", (long)child);
	t_writes(rel, text);
	/* renamed over: a reader sees the old text or the new, never half of it */
	{
		char from[PATH_MAX];

		snprintf(from, sizeof(from), "%s", t_pathf("proc/%ld/stat.new", (long)child));
		assert_int_equal(rename(from, t_pathf("proc/%ld/stat", (long)child)), 0);
	}
	n = (size_t)snprintf(argv, sizeof(argv), "claude%c--resume%c%s%c", '\0', '\0', ID, '\0');
	snprintf(rel, sizeof(rel), "proc/%ld/cmdline", (long)child);
	t_write(rel, argv, n);
}

static void write_proc(unsigned long long start)
{
	write_proc_state(start, 'S');
}

/* When the child has ended (left unreaped), the made-up tree shows it as a zombie, as /proc
 * would. */
static void *zombie_when_dead(void *arg)
{
	siginfo_t si;

	(void)arg;
	if (waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0)
		write_proc_state(1000, 'Z');
	return NULL;
}

/* The setup of the test below: the child takes over as "another process" on SIGHUP. */
static int setup_reuse(void **state)
{
	pid_t me = getpid();
	int rc;

	reuse_on_hup = true;
	rc = setup(state);
	reuse_on_hup = false;
	(void)me;
	return rc;
}

typedef struct seen {
	int pid;
	char signals[64];
	char result[16];
	char action[8];
} seen;

static int on_proc(const agc_stop_proc *p, void *ud)
{
	seen *s = ud;
	size_t i;

	s->pid = p->pid;
	s->signals[0] = '\0';
	for (i = 0; i < p->n_signals; i++) {
		strcat(s->signals, i ? "," : "");
		strcat(s->signals, p->signals[i]);
	}
	snprintf(s->result, sizeof(s->result), "%s", p->result);
	snprintf(s->action, sizeof(s->action), "%s", p->action);
	return 0;
}

/* The pid is another process's once the chain has begun: the graceful signal went to the
 * holder, SIGTERM and SIGKILL go nowhere, and the child (which ignores the first two) lives. */
static void test_stop_pid_reused_mid_chain(void **state)
{
	agc_stop_opts o = AGC_STOP_OPTS_INIT;
	agc_report *after = NULL;
	seen s;

	(void)state;
	write_proc(1000);
	o.grace_ms = 1000;
	memset(&s, 0, sizeof(s));
	assert_int_equal(agc_stop(ctx, "claude", ID, &o, on_proc, &s, &after), 0);
	assert_int_equal(s.pid, child);
	assert_string_equal(s.action, "stop");
	assert_string_equal(s.signals, "SIGHUP");
	assert_int_equal(waitpid(child, NULL, WNOHANG), 0);
	assert_int_equal(kill(child, 0), 0);
	/* the made-up process still names the id: the gate says in use, records preserved */
	assert_int_equal(agc_report_status(after), AGC_ST_IN_USE);
	agc_report_free(after);
}

/* The same process all along: every signal of the chain, and SIGKILL ends it. */
static void test_stop_chain_to_kill(void **state)
{
	agc_stop_opts o = AGC_STOP_OPTS_INIT;
	agc_report *after = NULL;
	pthread_t t;
	seen s;
	int st;

	(void)state;
	write_proc(1000);
	o.grace_ms = 200;
	memset(&s, 0, sizeof(s));
	assert_int_equal(pthread_create(&t, NULL, zombie_when_dead, NULL), 0);
	assert_int_equal(agc_stop(ctx, "claude", ID, &o, on_proc, &s, &after), 0);
	pthread_join(t, NULL);
	assert_string_equal(s.result, "killed");
	/* the child is ours to reap: the chain saw it as a zombie (ended) */
	assert_int_equal(waitpid(child, &st, 0), child);
	child = -1;
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_string_equal(s.signals, "SIGHUP,SIGTERM,SIGKILL");
	agc_report_free(after);
}

/* Options a caller got wrong are refused before anything is looked at. */
static void test_stop_bad_opts(void **state)
{
	agc_stop_opts o = AGC_STOP_OPTS_INIT;
	agc_report *after = NULL;

	(void)state;
	o.grace_ms = -1;
	assert_int_equal(agc_stop(ctx, "claude", ID, &o, NULL, NULL, &after), -1);
	o.grace_ms = 0;
	o.flags = AGC_PURGE_WITH_FORKS;
	assert_int_equal(agc_stop(ctx, "claude", ID, &o, NULL, NULL, &after), -1);
	o.flags = 0;
	o.version = 99;
	assert_int_equal(agc_stop(ctx, "claude", ID, &o, NULL, NULL, &after), -1);
	assert_int_equal(agc_stop(ctx, "claude", ID, NULL, NULL, NULL, NULL), -1);
	assert_null(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stop_pid_reused_mid_chain, setup_reuse, teardown),
		cmocka_unit_test_setup_teardown(test_stop_chain_to_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_bad_opts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
