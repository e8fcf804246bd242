/* Unit tests for the in-use gate's process scan (holders.c, SPEC R5): live children that carry
 * a session id in argv or environ or hold a session file open, and a made-up procfs tree for the
 * cases a live system cannot stage. Every child is killed and reaped by the teardown. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "buf.h"
#include "error.h"
#include "holders.h"

/* ---- fixtures: a temporary directory (never under $HOME) and the children ------------------- */

static char fakeproc[PATH_MAX + 8];
static pid_t children[16];
static size_t n_children;

static int setup(void **state)
{
	(void)state;
	n_children = 0;
	if (t_setup_dir("holders") < 0)
		return -1;
	snprintf(fakeproc, sizeof(fakeproc), "%s", t_path("proc"));
	return mkdir(fakeproc, 0700);
}

static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < n_children; i++) {
		kill(children[i], SIGKILL);
		waitpid(children[i], NULL, 0);
	}
	n_children = 0;
	return t_teardown_dir();
}

static agc_devino devino_t(const char *rel)
{
	struct stat st;
	agc_devino d;

	assert_int_equal(stat(t_path(rel), &st), 0);
	d.dev = st.st_dev;
	d.ino = st.st_ino;
	return d;
}

/* A fresh random UUID in lower case, and the same in mixed case. */
static void make_uuid(char lower[37], char mixed[37])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[16];
	size_t i, o = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, r, sizeof(r)), (ssize_t)sizeof(r));
	close(fd);
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			lower[o++] = '-';
		lower[o++] = hex[r[i] >> 4];
		lower[o++] = hex[r[i] & 15];
	}
	lower[o] = '\0';
	for (i = 0; i <= o; i++)
		mixed[i] = (i % 2 && lower[i] >= 'a' && lower[i] <= 'f') ? (char)(lower[i] - 32)
									  : lower[i];
}

static void remember(pid_t pid)
{
	assert_true(n_children < sizeof(children) / sizeof(children[0]));
	children[n_children++] = pid;
}

/* Fork and exec `sleep 30` with argv0 and envp as given; returns once the exec happened (the
 * close-on-exec pipe reads EOF), so /proc already shows the new argv and environ. */
static pid_t spawn_sleep(const char *argv0, char *const envp[])
{
	char *const argv[] = {(char *)argv0, "30", NULL};
	int sync[2], err = 0;
	pid_t pid;

	assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sync[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (envp)
			execvpe("sleep", argv, envp);
		else
			execvp("sleep", argv);
		err = errno;
		if (write(sync[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	remember(pid);
	close(sync[1]);
	assert_int_equal(read(sync[0], &err, sizeof(err)), 0);
	close(sync[0]);
	return pid;
}

/* Fork a child (no exec: its argv is this test's) that opens rel and, when map, maps it and
 * closes the fd; returns once it holds the file. */
static pid_t spawn_holder(const char *rel, bool map)
{
	const char *path = t_path(rel);
	int sync[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		close(sync[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(1);
		if (map) {
			if (mmap(NULL, 1, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
				_exit(2);
			close(fd);
		}
		if (write(sync[1], "k", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	remember(pid);
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);
	return pid;
}

static const agc_holder *find(const agc_holders *h, pid_t pid, agc_why why)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (h->v[i].pid == pid && h->v[i].why == why)
			return &h->v[i];
	return NULL;
}

static size_t count_pid(const agc_holders *h, pid_t pid)
{
	size_t i, n = 0;

	for (i = 0; i < h->n; i++)
		n += h->v[i].pid == pid;
	return n;
}

/* ---- names and the list -------------------------------------------------------------------- */

static void test_holders_why_name(void **state)
{
	(void)state;
	assert_string_equal(agc_why_name(AGC_WHY_REGISTRY), "registry");
	assert_string_equal(agc_why_name(AGC_WHY_CMDLINE), "cmdline");
	assert_string_equal(agc_why_name(AGC_WHY_ENVIRON), "environ");
	assert_string_equal(agc_why_name(AGC_WHY_OPEN_FILE), "open-file");
	assert_string_equal(agc_why_name(AGC_WHY_LOCK), "lock");
	assert_string_equal(agc_why_name(AGC_WHY_UNREADABLE), "process-table");
}

/* The same (pid, why, what) is listed once; strings are copies. */
static void test_holders_add_dedup(void **state)
{
	agc_holders h = {NULL, 0, 0};
	char what[] = "x.jsonl";

	(void)state;
	assert_int_equal(agc_holders_add(&h, 10, AGC_WHY_OPEN_FILE, "cat x", what, 2), 0);
	assert_int_equal(agc_holders_add(&h, 10, AGC_WHY_OPEN_FILE, "cat x", "x.jsonl", 2), 0);
	assert_int_equal(h.n, 1);
	what[0] = 'y';
	assert_string_equal(h.v[0].what, "x.jsonl");
	assert_string_equal(h.v[0].command, "cat x");
	assert_int_equal(h.v[0].file, 2);
	assert_int_equal(agc_holders_add(&h, 10, AGC_WHY_OPEN_FILE, "cat x", "other", 3), 0);
	assert_int_equal(agc_holders_add(&h, 10, AGC_WHY_CMDLINE, "cat x", "x.jsonl", 0), 0);
	assert_int_equal(agc_holders_add(&h, 11, AGC_WHY_OPEN_FILE, "cat x", "x.jsonl", 2), 0);
	assert_int_equal(agc_holders_add(&h, 12, AGC_WHY_LOCK, NULL, NULL, 0), 0);
	assert_int_equal(agc_holders_add(&h, 12, AGC_WHY_LOCK, NULL, NULL, 0), 0);
	assert_int_equal(h.n, 5);
	assert_null(h.v[4].command);
	assert_null(h.v[4].what);
	agc_holders_release(&h);
	assert_int_equal(h.n, 0);
	assert_null(h.v);
	agc_holders_release(&h);
	agc_holders_release(NULL);
}

/* ---- live processes ------------------------------------------------------------------------ */

/* R5: an argument containing the id, in either letter case, makes a holder; this process,
 * whose argv does not hold it, is not one. */
static void test_holders_cmdline_live(void **state)
{
	char lower[37], mixed[37], argv0[128], other[37], other_mixed[37];
	const char *ids[2];
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	const agc_holder *x;
	pid_t child;

	(void)state;
	make_uuid(lower, mixed);
	make_uuid(other, other_mixed);
	snprintf(argv0, sizeof(argv0), "claude --resume=%s", mixed);
	child = spawn_sleep(argv0, NULL);

	ids[0] = lower;
	ids[1] = other;
	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.ids = ids;
	q.n_ids = 2;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	x = find(&h, child, AGC_WHY_CMDLINE);
	assert_non_null(x);
	assert_string_equal(x->what, lower);
	assert_non_null(strstr(x->command, "--resume="));
	assert_non_null(strstr(x->command, " 30"));
	assert_int_equal(count_pid(&h, child), 1);  /* the other id is nowhere */
	assert_int_equal(count_pid(&h, getpid()), 0);
	agc_holders_release(&h);
}

/* SPEC "live in ls": a query of many sessions (ids past the index threshold, each with its
 * session and its own agent's variables) finds the same holders as one query per session,
 * each for its session: an id in argv (any case), the id in the variable of its own agent
 * only, a file of the session open by a process that holds another session already. */
static void test_holders_many_sessions(void **state)
{
	enum { N = 40 };
	char lower[N][37], mixed[N][37], argv0[128], e1[96], e2[96];
	char *env1[] = {e1, NULL}, *env2[] = {e2, NULL};
	const char *ids[N];
	size_t sess[N];
	static const char *const claude_vars[] = {"CLAUDE_CODE_SESSION_ID", NULL};
	const char *const *vars[N];
	agc_gate_file files[1] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	pid_t by_argv, by_env, by_other_env, by_file;
	size_t i, k;

	(void)state;
	for (i = 0; i < N; i++) {
		make_uuid(lower[i], mixed[i]);
		ids[i] = lower[i];
		sess[i] = 100 + i;
		/* ids of even sessions are of an agent without variables */
		vars[i] = i % 2 ? claude_vars : NULL;
	}
	snprintf(argv0, sizeof(argv0), "claude --resume %s", mixed[7]);
	by_argv = spawn_sleep(argv0, NULL);
	snprintf(e1, sizeof(e1), "CLAUDE_CODE_SESSION_ID=%s", mixed[9]);
	by_env = spawn_sleep("sleep", env1);
	/* session 10's agent has no such variable: no holder */
	snprintf(e2, sizeof(e2), "CLAUDE_CODE_SESSION_ID=%s", lower[10]);
	by_other_env = spawn_sleep("sleep", env2);
	/* this test's own argv names none of the ids; the forked holder holds session 3's file
	 * and (as a child of this process) nothing else */
	t_writes("s3.jsonl", "x");
	files[0].id = devino_t("s3.jsonl");
	files[0].label = "s3";
	files[0].session = 103;
	files[0].no_exempt = true;
	by_file = spawn_holder("s3.jsonl", true);

	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.ids = ids;
	q.n_ids = N;
	q.id_session = sess;
	q.id_env_names = vars;
	q.files = files;
	q.n_files = 1;
	q.with_maps = true;
	q.every_session = true;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	for (i = 0, k = 0; i < h.n; i++) {
		if (h.v[i].pid == by_argv) {
			assert_int_equal(h.v[i].why, AGC_WHY_CMDLINE);
			assert_int_equal(h.v[i].session, 107);
			assert_string_equal(h.v[i].what, lower[7]);
			k |= 1;
		} else if (h.v[i].pid == by_env) {
			assert_int_equal(h.v[i].why, AGC_WHY_ENVIRON);
			assert_int_equal(h.v[i].session, 109);
			k |= 2;
		} else if (h.v[i].pid == by_file) {
			assert_int_equal(h.v[i].why, AGC_WHY_OPEN_FILE);
			assert_int_equal(h.v[i].session, 103);
			k |= 4;
		}
		assert_int_not_equal(h.v[i].pid, by_other_env);
	}
	assert_int_equal(k, 7);
	agc_holders_release(&h);
}

/* R5: agentgc and its ancestors never count by argv, even when their argv holds the id. */
static void test_holders_cmdline_self_skipped(void **state)
{
	const char *ids[1] = {program_invocation_short_name};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;

	(void)state;
	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.ids = ids;
	q.n_ids = 1;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(count_pid(&h, getpid()), 0);
	assert_int_equal(count_pid(&h, getppid()), 0);
	agc_holders_release(&h);
}

/* R5: CODEX_THREAD_ID equal to the id (any letter case) makes a holder; another variable
 * with the id, or the named variable with a longer value, does not. */
static void test_holders_environ_live(void **state)
{
	char lower[37], mixed[37], e1[96], e2[96], e3[96];
	char *env1[] = {e1, "LANG=C", NULL}, *env2[] = {e2, NULL}, *env3[] = {e3, NULL};
	const char *ids[1], *names[2] = {"CODEX_THREAD_ID", "CODEX_SESSION_ID"};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	const agc_holder *x;
	pid_t c1, c2, c3;

	(void)state;
	make_uuid(lower, mixed);
	snprintf(e1, sizeof(e1), "CODEX_THREAD_ID=%s", mixed);
	snprintf(e2, sizeof(e2), "OTHER_THREAD_ID=%s", lower);
	snprintf(e3, sizeof(e3), "CODEX_SESSION_ID=%s-x", lower);
	c1 = spawn_sleep("sleep", env1);
	c2 = spawn_sleep("sleep", env2);
	c3 = spawn_sleep("sleep", env3);

	ids[0] = lower;
	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.ids = ids;
	q.n_ids = 1;
	q.env_names = names;
	q.n_env_names = 2;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	x = find(&h, c1, AGC_WHY_ENVIRON);
	assert_non_null(x);
	assert_string_equal(x->what, lower);
	assert_string_equal(x->command, "sleep 30");
	assert_int_equal(count_pid(&h, c1), 1);
	assert_int_equal(count_pid(&h, c2), 0);
	assert_int_equal(count_pid(&h, c3), 0);
	agc_holders_release(&h);

	/* Without variable names the environment is not looked at. */
	q.n_env_names = 0;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(count_pid(&h, c1), 0);
	agc_holders_release(&h);
}

/* R5: a process with one of the session's files open is a holder, with that file's index. */
static void test_holders_open_file_live(void **state)
{
	agc_gate_file files[2] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	const agc_holder *x;
	pid_t child;

	(void)state;
	t_writes("a.jsonl", "{}\n");
	t_writes("b.jsonl", "{}\n");
	files[0].id = devino_t("a.jsonl");
	files[0].label = "a.jsonl";
	files[1].id = devino_t("b.jsonl");
	files[1].label = "b.jsonl";
	child = spawn_holder("b.jsonl", false);

	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.files = files;
	q.n_files = 2;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	x = find(&h, child, AGC_WHY_OPEN_FILE);
	assert_non_null(x);
	assert_int_equal(x->file, 1);
	assert_string_equal(x->what, "b.jsonl");
	assert_non_null(strstr(x->command, program_invocation_short_name));
	assert_int_equal(count_pid(&h, child), 1);
	agc_holders_release(&h);
}

/* R5: agentgc's own fds never make it a holder. */
static void test_holders_open_file_self_skipped(void **state)
{
	agc_gate_file files[1] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	int fd;

	(void)state;
	t_writes("mine.jsonl", "{}\n");
	files[0].id = devino_t("mine.jsonl");
	files[0].label = "mine.jsonl";
	fd = open(t_path("mine.jsonl"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);

	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.files = files;
	q.n_files = 1;
	q.with_maps = true;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(count_pid(&h, getpid()), 0);
	assert_int_equal(h.n, 0);
	close(fd);
	agc_holders_release(&h);
}

/* A mapping counts only when maps are asked for: the child closed its fd after mmap. */
static void test_holders_maps_live(void **state)
{
	agc_gate_file files[1] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	const agc_holder *x;
	pid_t child;

	(void)state;
	t_writes("db.sqlite-shm", "shared memory");
	files[0].id = devino_t("db.sqlite-shm");
	files[0].label = "db.sqlite-shm";
	child = spawn_holder("db.sqlite-shm", true);

	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.files = files;
	q.n_files = 1;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(count_pid(&h, child), 0);
	q.with_maps = true;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	x = find(&h, child, AGC_WHY_OPEN_FILE);
	assert_non_null(x);
	assert_int_equal(x->file, 0);
	agc_holders_release(&h);
}

typedef struct exempt_log {
	int calls;
	bool answer;
	bool saw_self_name;
} exempt_log;

static bool exempt_cb(const char *argv, size_t len, void *ud)
{
	exempt_log *log = ud;

	log->calls++;
	if (len > 0 && strstr(argv, program_invocation_short_name))
		log->saw_self_name = true;
	return log->answer;
}

/* R5: a shared service (exempt) is never a holder through open files; the exemption is asked
 * only of processes that hold one of the files. */
static void test_holders_exempt(void **state)
{
	exempt_log log = {0, true, false};
	agc_gate_file files[1] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	pid_t child;

	(void)state;
	t_writes("opencode.db", "db");
	files[0].id = devino_t("opencode.db");
	files[0].label = "opencode.db";
	child = spawn_holder("opencode.db", false);

	memset(&q, 0, sizeof(q));
	q.procroot = "/proc";
	q.files = files;
	q.n_files = 1;
	q.exempt = exempt_cb;
	q.exempt_ud = &log;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(count_pid(&h, child), 0);
	assert_int_equal(log.calls, 1);
	assert_true(log.saw_self_name);

	log.answer = false;
	log.calls = 0;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_non_null(find(&h, child, AGC_WHY_OPEN_FILE));
	assert_int_equal(log.calls, 1);
	agc_holders_release(&h);
}

/* Another user's process, whose fds and environment we may not read, is skipped, not an error
 * (R5, as fuser and lsof skip them); its argv, which anyone may read, still counts. Needs root
 * to become another user. */
static void test_holders_unreadable_skipped(void **state)
{
	char lower[37], mixed[37], argv0[96];
	const char *ids[1], *names[1] = {"CODEX_THREAD_ID"};
	agc_gate_file files[1] = {0};
	pid_t holder, byname, child;
	int status;

	(void)state;
	if (getuid() != 0) {
		print_message("skipped: needs root to drop to another user\n");
		skip();
	}
	make_uuid(lower, mixed);
	snprintf(argv0, sizeof(argv0), "codex resume %s", lower);
	t_writes("held.jsonl", "{}\n");
	files[0].id = devino_t("held.jsonl");
	files[0].label = "held.jsonl";
	holder = spawn_holder("held.jsonl", false);
	byname = spawn_sleep(argv0, NULL);
	ids[0] = lower;

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		agc_holders h = {NULL, 0, 0};
		agc_gate_query q;
		int code = 0;
		size_t i;

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		memset(&q, 0, sizeof(q));
		q.procroot = "/proc";
		q.ids = ids;
		q.n_ids = 1;
		q.env_names = names;
		q.n_env_names = 1;
		q.files = files;
		q.n_files = 1;
		q.with_maps = true;
		if (agc_holders_scan(&q, &h) != 0)
			_exit(11);
		for (i = 0; i < h.n; i++) {
			if (h.v[i].pid == holder)
				code |= 1;
			if (h.v[i].pid == byname && h.v[i].why == AGC_WHY_CMDLINE)
				code |= 2;
		}
		agc_holders_release(&h);
		_exit(code == 2 ? 0 : 20 + code);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* R5: a process table that cannot be read is an error; the caller treats that as in use. */
static void test_holders_missing_procroot(void **state)
{
	const char *ids[1] = {"0b9e8a4e-5f0f-4a5e-9d4b-6c1f4f0a1b2c"};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;

	(void)state;
	memset(&q, 0, sizeof(q));
	q.procroot = t_path("no-such-proc");
	q.ids = ids;
	q.n_ids = 1;
	assert_int_equal(agc_holders_scan(&q, &h), -1);
	assert_non_null(strstr(agc_error_last(), "no-such-proc"));
	assert_int_equal(h.n, 0);
}

/* Whether the first fd entry the kernel lists in dir is not the one named last. */
static int listed_before(const char *dir, const char *last)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int res = -1;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		res = strcmp(e->d_name, last) != 0;
		break;
	}
	closedir(d);
	return res;
}

/* The child's side of test_holders_unstatable_fd: build the tree (as the user the modes bind)
 * and scan it. Returns 0 when the process is found as a holder. */
static int unstatable_fd_child(const char *base)
{
	char procdir[PATH_MAX + 64], piddir[PATH_MAX + 64], fddir[PATH_MAX + 64], locked[PATH_MAX + 64];
	char secret[PATH_MAX + 96], held[PATH_MAX + 64], link[PATH_MAX + 96], link2[PATH_MAX + 96];
	static const char stat_text[] =
		"600 (claude) S 1 600 600 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 1000 5000 100\n";
	char name[16];
	agc_gate_file files[1] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	struct stat st;
	int fd, i, tries, found;
	size_t k;

	snprintf(procdir, sizeof(procdir), "%s/proc", base);
	snprintf(piddir, sizeof(piddir), "%s/proc/600", base);
	snprintf(fddir, sizeof(fddir), "%s/proc/600/fd", base);
	snprintf(locked, sizeof(locked), "%s/locked", base);
	snprintf(secret, sizeof(secret), "%s/locked/secret", base);
	snprintf(held, sizeof(held), "%s/s.jsonl", base);
	if (mkdir(procdir, 0755) < 0 || mkdir(piddir, 0755) < 0 || mkdir(fddir, 0755) < 0 ||
	    mkdir(locked, 0700) < 0)
		return 20;
	snprintf(link, sizeof(link), "%s/stat", piddir);
	fd = open(link, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, stat_text, strlen(stat_text)) != (ssize_t)strlen(stat_text))
		return 21;
	close(fd);
	fd = open(secret, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 21;
	close(fd);
	fd = open(held, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0)
		return 22;
	close(fd);
	files[0].id.dev = st.st_dev;
	files[0].id.ino = st.st_ino;
	files[0].label = "s.jsonl";
	/* fds 3..9 may not be stat'ed; the transcript is open at a higher fd. It is made first:
	 * a file system that lists newest first (tmpfs) then lists the others before it. */
	snprintf(link2, sizeof(link2), "%s/10", fddir);
	if (symlink(held, link2) < 0)
		return 23;
	for (i = 3; i <= 9; i++) {
		snprintf(link, sizeof(link), "%s/%d", fddir, i);
		if (symlink(secret, link) < 0)
			return 23;
	}
	memcpy(link, link2, sizeof(link));
	/* /proc lists fds in numeric order, a made-up tree in its file system's order: make sure
	 * an fd that may not be stat'ed comes first, as the lower fds do in /proc */
	for (tries = 0, i = 10;; tries++) {
		snprintf(name, sizeof(name), "%d", i);
		if (listed_before(fddir, name) == 1)
			break;
		if (tries > 64)
			return 26;
		snprintf(link2, sizeof(link2), "%s/%d", fddir, ++i);
		if (rename(link, link2) < 0)
			return 23;
		memcpy(link, link2, sizeof(link));
	}
	if (chmod(locked, 0) < 0)
		return 24;
	if (stat(secret, &st) == 0 || errno != EACCES)
		return 25; /* the mode does not bind this user: nothing is staged */
	memset(&q, 0, sizeof(q));
	q.procroot = procdir;
	q.files = files;
	q.n_files = 1;
	if (agc_holders_scan(&q, &h) != 0)
		return 1;
	for (found = 0, k = 0; k < h.n; k++)
		found += h.v[k].pid == 600 && h.v[k].why == AGC_WHY_OPEN_FILE && h.v[k].file == 0;
	agc_holders_release(&h);
	return found == 1 ? 0 : 2;
}

/* R5: a process whose fd table has an fd that may not be stat'ed (a FUSE mount without
 * allow_root; staged as fd links into a dir of mode 000) at a lower fd than an open session
 * transcript is still a holder: that fd alone is skipped. Modes bind only a user other than
 * root: as root, a child drops to uid 65534 and builds the tree itself, in a dir it owns. */
static void test_holders_unstatable_fd(void **state)
{
	pid_t child;
	int status;

	(void)state;
	assert_int_equal(chmod(t_dir, 0711), 0);
	assert_int_equal(mkdir(t_path("u"), 0755), 0);
	if (getuid() == 0)
		assert_int_equal(chown(t_path("u"), 65534, 65534), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		if (getuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(10);
		_exit(unstatable_fd_child(t_path("u")));
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	/* let the teardown remove the tree (root ignores the mode; its owner does not) */
	chmod(t_path("u/locked"), 0700);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 10) {
		print_message("skipped: cannot drop to uid 65534\n");
		skip();
	}
	/* 1: the scan failed; 2: the process was not found as a holder */
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- a made-up procfs tree ----------------------------------------------------------------- */

static void fake_proc(pid_t pid, const char *comm)
{
	char text[512], rel[64];

	assert_int_equal(mkdir(t_pathf("proc/%ld", (long)pid), 0700), 0);
	snprintf(text, sizeof(text),
		 "%ld (%s) S 1 %ld %ld 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 1000 5000 100\n",
		 (long)pid, comm, (long)pid, (long)pid);
	snprintf(rel, sizeof(rel), "proc/%ld/stat", (long)pid);
	t_writes(rel, text);
}

static void fake_file(pid_t pid, const char *name, const void *data, size_t len)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "proc/%ld/%s", (long)pid, name);
	t_write(rel, data, len);
}

/* Every kind of match on one tree: a process found by argv (its command made printable), one
 * by environ (no cmdline: shown by its comm), one by an fd, a vanished one skipped, and the
 * same file listed twice reported at both indices. */
static void test_holders_fake_tree(void **state)
{
	static const char id[] = "0b9e8a4e-5f0f-4a5e-9d4b-6c1f4f0a1b2c";
	const char *ids[1] = {id}, *names[1] = {"CODEX_THREAD_ID"};
	char argv[256];
	agc_gate_file files[3] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	const agc_holder *x;
	size_t len, i, seen0 = 0, seen2 = 0;

	(void)state;
	fake_proc(100, "claude");
	len = (size_t)snprintf(argv, sizeof(argv), "claude\1\x1b[31m\xff\xc3\xa9\xc2\x9b\n%c--resume%c%s%c",
			       '\0', '\0', "0B9E8A4E-5F0F-4A5E-9D4B-6C1F4F0A1B2C", '\0');
	fake_file(100, "cmdline", argv, len);

	fake_proc(200, "tool");
	len = (size_t)snprintf(argv, sizeof(argv), "PATH=/bin%cCODEX_THREAD_ID=%s%c", '\0', id, '\0');
	fake_file(200, "environ", argv, len);

	fake_proc(300, "cat");
	fake_file(300, "cmdline", "cat\0s.jsonl\0", 12);
	assert_int_equal(mkdir(t_path("proc/300/fd"), 0700), 0);
	t_writes("s.jsonl", "{}\n");
	t_writes("t.jsonl", "{}\n");
	assert_int_equal(symlink(t_path("s.jsonl"), t_path("proc/300/fd/0")), 0);
	t_writes("proc/300/maps", "");

	assert_int_equal(mkdir(t_path("proc/400"), 0700), 0);  /* vanished */

	fake_proc(500, "bash");
	fake_file(500, "cmdline", "bash\0--resume=ses_other\0", 24);

	files[0].id = devino_t("s.jsonl");
	files[0].label = "s.jsonl";
	files[1].id = devino_t("t.jsonl");
	files[1].label = "t.jsonl";
	files[2].id = devino_t("s.jsonl");
	files[2].label = "link-to-s.jsonl";

	memset(&q, 0, sizeof(q));
	q.procroot = fakeproc;
	q.ids = ids;
	q.n_ids = 1;
	q.env_names = names;
	q.n_env_names = 1;
	q.files = files;
	q.n_files = 3;
	q.with_maps = true;
	assert_int_equal(agc_holders_scan(&q, &h), 0);

	x = find(&h, 100, AGC_WHY_CMDLINE);
	assert_non_null(x);
	/* Control bytes, a stray 0xff and the C1 control U+009B become '?', the é stays. */
	assert_string_equal(x->command, "claude?" "?[31m?" "\xc3\xa9?" "?" "? --resume "
					"0B9E8A4E-5F0F-4A5E-9D4B-6C1F4F0A1B2C");
	x = find(&h, 200, AGC_WHY_ENVIRON);
	assert_non_null(x);
	assert_string_equal(x->command, "[tool]");
	assert_string_equal(x->what, id);
	for (i = 0; i < h.n; i++) {
		if (h.v[i].pid != 300)
			continue;
		assert_int_equal(h.v[i].why, AGC_WHY_OPEN_FILE);
		assert_string_equal(h.v[i].command, "cat s.jsonl");
		seen0 += h.v[i].file == 0;
		seen2 += h.v[i].file == 2;
	}
	assert_int_equal(seen0, 1);
	assert_int_equal(seen2, 1);
	assert_int_equal(count_pid(&h, 300), 2);
	assert_int_equal(count_pid(&h, 400), 0);
	assert_int_equal(count_pid(&h, 500), 0);
	assert_int_equal(h.n, 4);
	agc_holders_release(&h);
}

static bool agent_is_claude(const char *argv, size_t len)
{
	return len >= 7 && memcmp(argv, "claude", 7) == 0;
}

static bool accounted_703(pid_t pid, void *ud)
{
	(void)ud;
	return pid == 703;
}

/* R5: a cwd on a dir of the query (the session's dir or one inside it) holds, why cwd, as does
 * an open fd on such a dir (open-file); an agent process at the project holds unless accounted
 * for, and only when its argv is the agent's. */
static void test_holders_cwd(void **state)
{
	agc_gate_file files[2] = {0}, project = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	const agc_holder *x;

	(void)state;
	assert_int_equal(mkdir(t_path("sess"), 0700), 0);
	assert_int_equal(mkdir(t_path("sess/tasks"), 0700), 0);
	assert_int_equal(mkdir(t_path("other"), 0700), 0);
	assert_int_equal(mkdir(t_path("proj"), 0700), 0);
	files[0].id = devino_t("sess");
	files[0].label = "sess";
	files[1].id = devino_t("sess/tasks");
	files[1].label = "sess";
	project.id = devino_t("proj");
	project.label = "/work/proj";

	fake_proc(700, "sleep");               /* cwd inside the session */
	fake_file(700, "cmdline", "sleep\0", 6);
	assert_int_equal(symlink(t_path("sess/tasks"), t_path("proc/700/cwd")), 0);
	fake_proc(701, "sleep");               /* cwd elsewhere */
	fake_file(701, "cmdline", "sleep\0", 6);
	assert_int_equal(symlink(t_path("other"), t_path("proc/701/cwd")), 0);
	fake_proc(702, "claude");              /* the agent at the project, no registry */
	fake_file(702, "cmdline", "claude\0", 7);
	assert_int_equal(symlink(t_path("proj"), t_path("proc/702/cwd")), 0);
	fake_proc(703, "claude");              /* the same, accounted for by a registry */
	fake_file(703, "cmdline", "claude\0", 7);
	assert_int_equal(symlink(t_path("proj"), t_path("proc/703/cwd")), 0);
	fake_proc(704, "vim");                 /* not the agent, at the project */
	fake_file(704, "cmdline", "vim\0", 4);
	assert_int_equal(symlink(t_path("proj"), t_path("proc/704/cwd")), 0);
	fake_proc(705, "python3");             /* a dir fd inside the session, cwd elsewhere */
	fake_file(705, "cmdline", "python3\0", 8);
	assert_int_equal(symlink(t_path("other"), t_path("proc/705/cwd")), 0);
	assert_int_equal(mkdir(t_path("proc/705/fd"), 0700), 0);
	assert_int_equal(symlink(t_path("sess/tasks"), t_path("proc/705/fd/4")), 0);

	memset(&q, 0, sizeof(q));
	q.procroot = fakeproc;
	q.files = files;
	q.n_files = 2;
	q.with_maps = true;
	q.agent_cwd = &project;
	q.agent_proc = agent_is_claude;
	q.accounted = accounted_703;
	assert_int_equal(agc_holders_scan(&q, &h), 0);

	x = find(&h, 700, AGC_WHY_CWD);
	assert_non_null(x);
	assert_int_equal(x->file, 1);
	assert_string_equal(x->what, "sess");
	x = find(&h, 702, AGC_WHY_CWD);
	assert_non_null(x);
	assert_int_equal(x->file, AGC_HOLDER_NO_FILE);
	assert_string_equal(x->what, "/work/proj");
	x = find(&h, 705, AGC_WHY_OPEN_FILE);
	assert_non_null(x);
	assert_int_equal(x->file, 1);
	assert_int_equal(count_pid(&h, 701), 0);
	assert_int_equal(count_pid(&h, 703), 0);
	assert_int_equal(count_pid(&h, 704), 0);
	assert_int_equal(h.n, 3);
	agc_holders_release(&h);

	/* without the agent rule the project is nobody's business */
	q.agent_cwd = NULL;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(count_pid(&h, 702), 0);
	assert_int_equal(h.n, 2);
	agc_holders_release(&h);
}

/* Many processes (more than one thread scans): each kind of holder on its own processes, one
 * process with many fds, 40 ids (the index of many ids). Every holder is found exactly once,
 * and the list comes in the order of the process listing, whichever thread found it. */
static void test_holders_many_threads(void **state)
{
	enum { N = 900 };
	const char *ids[40], *names[1] = {"CLAUDE_CODE_SESSION_ID"};
	char idbuf[40][40], text[256];
	agc_gate_file files[2] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	pid_t *order;
	size_t n_order = 0, i, k, want = 0;
	struct dirent *e;
	DIR *d;

	(void)state;
	for (i = 0; i < 40; i++) {
		snprintf(idbuf[i], sizeof(idbuf[i]), "ses_many_%02zu", i);
		ids[i] = idbuf[i];
	}
	assert_int_equal(mkdir(t_path("sess"), 0700), 0);
	t_writes("s.jsonl", "{}\n");
	files[0].id = devino_t("s.jsonl");
	files[0].label = "s.jsonl";
	files[1].id = devino_t("sess");
	files[1].label = "sess";
	for (i = 0; i < N; i++) {
		pid_t pid = (pid_t)(1000 + i);
		size_t len;

		fake_proc(pid, "p");
		assert_int_equal(mkdir(t_pathf("proc/%ld/fd", (long)pid), 0700), 0);
		switch (i % 6) {
		case 0: /* argv names an id */
			len = (size_t)snprintf(text, sizeof(text), "tool%c--resume=%s%c", '\0', ids[i % 40], '\0');
			fake_file(pid, "cmdline", text, len);
			want++;
			break;
		case 1: /* the environment names one */
			fake_file(pid, "cmdline", "tool\0", 5);
			len = (size_t)snprintf(text, sizeof(text), "A=1%cCLAUDE_CODE_SESSION_ID=%s%c", '\0',
					       ids[i % 40], '\0');
			fake_file(pid, "environ", text, len);
			want++;
			break;
		case 2: /* an fd on the transcript, behind many other fds when i % 60 == 2 */
			fake_file(pid, "cmdline", "tool\0", 5);
			for (k = 0; i % 60 == 2 && k < 300; k++)
				assert_int_equal(symlink(t_path("sess"), t_pathf("proc/%ld/fd/%zu", (long)pid, 100 + k)), 0);
			assert_int_equal(symlink(t_path("s.jsonl"), t_pathf("proc/%ld/fd/3", (long)pid)), 0);
			want += i % 60 == 2 ? 2 : 1;
			break;
		case 3: /* a mapping only */
			fake_file(pid, "cmdline", "tool\0", 5);
			len = (size_t)snprintf(text, sizeof(text), "7f000000-7f100000 r--p 00000000 %x:%x %lu /s.jsonl\n",
					       major(files[0].id.dev), minor(files[0].id.dev),
					       (unsigned long)files[0].id.ino);
			fake_file(pid, "maps", text, len);
			want++;
			break;
		case 4: /* its cwd inside the session */
			fake_file(pid, "cmdline", "tool\0", 5);
			assert_int_equal(symlink(t_path("sess"), t_pathf("proc/%ld/cwd", (long)pid)), 0);
			want++;
			break;
		default: /* nothing of the session */
			fake_file(pid, "cmdline", "tool\0", 5);
			break;
		}
	}

	memset(&q, 0, sizeof(q));
	q.procroot = fakeproc;
	q.ids = ids;
	q.n_ids = 40;
	q.env_names = names;
	q.n_env_names = 1;
	q.files = files;
	q.n_files = 2;
	q.with_maps = true;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(h.n, want);
	for (i = 0; i < N; i++) {
		pid_t pid = (pid_t)(1000 + i);
		size_t c = count_pid(&h, pid);
		agc_why why[] = {AGC_WHY_CMDLINE, AGC_WHY_ENVIRON, AGC_WHY_OPEN_FILE, AGC_WHY_OPEN_FILE,
				 AGC_WHY_CWD};

		if (i % 6 == 5) {
			assert_int_equal(c, 0);
			continue;
		}
		assert_int_equal(c, i % 60 == 2 ? 2 : 1);
		assert_non_null(find(&h, pid, why[i % 6]));
		if (i % 6 < 2)
			assert_string_equal(find(&h, pid, why[i % 6])->what, ids[i % 40]);
	}

	/* the order of the listing */
	order = calloc(N, sizeof(*order));
	assert_non_null(order);
	d = opendir(fakeproc);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			order[n_order++] = (pid_t)atol(e->d_name);
	closedir(d);
	assert_int_equal(n_order, N);
	for (i = 0, k = 0; i < h.n; i++) {
		while (k < n_order && order[k] != h.v[i].pid)
			k++;
		assert_true(k < n_order); /* each holder at or after the one before it */
	}
	free(order);
	agc_holders_release(&h);
}

/* pid dir replaced mid-scan (the pid reused): the checks of one process all read the process
 * that was opened. Staged in a made-up tree: while the scan asks whether process 900 is
 * accounted for (its cwd check), its dir is renamed away and a new 900 without the fd is put in
 * its place; the fd check still reads the first one, which holds the transcript. */
typedef struct swap_ctx {
	int calls;
} swap_ctx;

static bool swap_900(pid_t pid, void *ud)
{
	swap_ctx *c = ud;
	char text[512];

	if (pid != 900 || c->calls++)
		return true;
	assert_int_equal(rename(t_path("proc/900"), t_path("old-900")), 0);
	assert_int_equal(mkdir(t_path("proc/900"), 0700), 0);
	snprintf(text, sizeof(text), "900 (other) S 1 900 900 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 9000 5000 100\n");
	t_writes("proc/900/stat", text);
	t_write("proc/900/cmdline", "other\0", 6);
	assert_int_equal(mkdir(t_path("proc/900/fd"), 0700), 0);
	return true;
}

static void test_holders_pid_dir_replaced(void **state)
{
	agc_gate_file files[1] = {0}, project = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	swap_ctx c = {0};
	const agc_holder *x;

	(void)state;
	assert_int_equal(mkdir(t_path("proj"), 0700), 0);
	t_writes("s.jsonl", "{}\n");
	files[0].id = devino_t("s.jsonl");
	files[0].label = "s.jsonl";
	project.id = devino_t("proj");
	project.label = "/work/proj";
	fake_proc(900, "claude");
	fake_file(900, "cmdline", "claude\0", 7);
	assert_int_equal(symlink(t_path("proj"), t_path("proc/900/cwd")), 0);
	assert_int_equal(mkdir(t_path("proc/900/fd"), 0700), 0);
	assert_int_equal(symlink(t_path("s.jsonl"), t_path("proc/900/fd/7")), 0);

	memset(&q, 0, sizeof(q));
	q.procroot = fakeproc;
	q.files = files;
	q.n_files = 1;
	q.agent_cwd = &project;
	q.agent_proc = agent_is_claude;
	q.accounted = swap_900;
	q.accounted_ud = &c;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(c.calls, 1);
	x = find(&h, 900, AGC_WHY_OPEN_FILE);
	assert_non_null(x);
	assert_string_equal(x->what, "s.jsonl");
	assert_string_equal(x->command, "claude");
	assert_int_equal(h.n, 1);
	agc_holders_release(&h);
}

/* Mappings are read only for a process that is no holder yet: a holder by argv whose maps
 * cannot be read at all (a dir where the file should be) leaves the scan whole, while the
 * same maps of a process that holds nothing fail it (so they are read there). */
static void test_holders_maps_only_when_needed(void **state)
{
	static const char id[] = "ses_maps";
	const char *ids[1] = {id};
	agc_gate_file files[1] = {0};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;

	(void)state;
	t_writes("s.db", "x");
	files[0].id = devino_t("s.db");
	files[0].label = "s.db";
	fake_proc(800, "opencode");
	fake_file(800, "cmdline", "opencode\0-s\0ses_maps\0", 21);
	assert_int_equal(mkdir(t_path("proc/800/fd"), 0700), 0);
	assert_int_equal(mkdir(t_path("proc/800/maps"), 0700), 0);

	memset(&q, 0, sizeof(q));
	q.procroot = fakeproc;
	q.ids = ids;
	q.n_ids = 1;
	q.files = files;
	q.n_files = 1;
	q.with_maps = true;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_non_null(find(&h, 800, AGC_WHY_CMDLINE));
	agc_holders_release(&h);

	fake_proc(801, "cat");
	fake_file(801, "cmdline", "cat\0", 4);
	assert_int_equal(mkdir(t_path("proc/801/fd"), 0700), 0);
	assert_int_equal(mkdir(t_path("proc/801/maps"), 0700), 0);
	assert_int_equal(agc_holders_scan(&q, &h), -1);
	agc_holders_release(&h);
}

/* A holder's command is bounded, ends in "...", and is never cut inside a UTF-8 sequence. */
static void test_holders_command_bounded(void **state)
{
	static const char id[] = "ses_abc";
	const char *ids[1] = {id};
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;
	const agc_holder *x;
	char *argv;
	size_t len = 0, i;

	(void)state;
	argv = malloc(4096);
	assert_non_null(argv);
	len += (size_t)sprintf(argv, "opencode%c--session=%s%c", '\0', id, '\0');
	for (i = 0; i < 1000; i++) {
		memcpy(argv + len, "\xc3\xa9", 2);  /* é */
		len += 2;
	}
	argv[len++] = '\0';
	fake_proc(600, "opencode");
	fake_file(600, "cmdline", argv, len);
	free(argv);

	memset(&q, 0, sizeof(q));
	q.procroot = fakeproc;
	q.ids = ids;
	q.n_ids = 1;
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	x = find(&h, 600, AGC_WHY_CMDLINE);
	assert_non_null(x);
	len = strlen(x->command);
	assert_true(len <= 512 + 3);
	assert_true(len > 400);
	assert_string_equal(x->command + len - 3, "...");
	/* "opencode --session=ses_abc " is 27 bytes, then whole 2-byte characters. */
	assert_int_equal((len - 3 - 27) % 2, 0);
	assert_true((unsigned char)x->command[len - 4] == 0xa9);
	agc_holders_release(&h);
}

/* A query with nothing to look for finds nothing and reads nothing, even from a bad root. */
static void test_holders_empty_query(void **state)
{
	agc_holders h = {NULL, 0, 0};
	agc_gate_query q;

	(void)state;
	memset(&q, 0, sizeof(q));
	q.procroot = t_path("no-such-proc");
	assert_int_equal(agc_holders_scan(&q, &h), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(agc_holders_scan(NULL, &h), -1);
}


/* ---- the snapshot of ls ---------------------------------------------------------------------- */

static uint32_t rnd_state = 12345u;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

static bool snap_exempt(const char *argv, size_t len, void *ud)
{
	(void)ud;
	return len >= 4 && memcmp(argv, "svc", 4) == 0;
}

static size_t accounted_calls;

static bool accounted_mod7(pid_t pid, void *ud)
{
	(void)ud;
	accounted_calls++;
	return pid % 7 == 0;
}

/* An id of the pool in a random letter case. */
static void mixcase(char *out, const char *id)
{
	size_t i;

	for (i = 0; id[i]; i++)
		out[i] = (rnd() & 1) && id[i] >= 'a' && id[i] <= 'z' ? (char)(id[i] - 32) : id[i];
	out[i] = '\0';
}

/* The snapshot answers for each session's files exactly what a scan of that session alone
 * answers: fds, mappings and current dirs of plain and exempt processes, and agent processes
 * at a project, accounted for or not (asked only there), among processes that name ids in
 * every way; on enough processes that the scan runs on several threads. */
/* ps: the processes a snapshot with keep_pids names for a file or project */
typedef struct pidset {
	pid_t v[64];
	size_t n;
} pidset;

static void pidset_add(pidset *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == pid)
			return;
	assert_true(s->n < 64);
	s->v[s->n++] = pid;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static int snap_pid_cb(pid_t pid, agc_why why, bool serves, void *ud)
{
	(void)why;
	if (!serves)
		pidset_add(ud, pid);
	return 0;
}

static int snap_cwd_pid_cb(pid_t pid, void *ud)
{
	pidset_add(ud, pid);
	return 0;
}

static void test_snap_agrees_with_scan(void **state)
{
	enum { NP = 700, NID = 300, NF = 200, NPROJ = 40 };
	static const char *const names[] = {"CLAUDE_CODE_SESSION_ID", NULL};
	char ids[NID][64], text[4096], mixed[64];
	agc_devino files[NF], proj[NPROJ];
	agc_snap_opts o;
	agc_snap *sn = NULL, *snp = NULL;
	size_t i, n_held = 0, n_free = 0;

	(void)state;
	for (i = 0; i < NID; i++) {
		char l[37], m[37];

		if (i % 3 == 0) {
			make_uuid(l, m);
			snprintf(ids[i], sizeof(ids[i]), "%s", l);
		} else if (i % 3 == 1) {
			snprintf(ids[i], sizeof(ids[i]), "ses_%08x%03zu", rnd(), i);
		} else {
			snprintf(ids[i], sizeof(ids[i]), "odd.id+%03zu/x", i);
		}
	}
	for (i = 0; i < NF; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "f%03zu", i);
		if (i % 4 == 0) {
			assert_int_equal(mkdir(t_path(rel), 0700), 0);
		} else {
			t_writes(rel, "{}\n");
		}
		files[i] = devino_t(rel);
	}
	for (i = 0; i < NPROJ; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "proj%02zu", i);
		assert_int_equal(mkdir(t_path(rel), 0700), 0);
		proj[i] = devino_t(rel);
	}
	for (i = 0; i < NP; i++) {
		pid_t pid = (pid_t)(2000 + i);
		size_t len = 0, f;
		uint32_t kind = rnd() % 8;
		const char *argv0 = kind == 0 ? "svc" : kind == 1 ? "claude" : "tool";
		const char *id = ids[rnd() % NID];
		size_t cut;

		fake_proc(pid, "p");
		assert_int_equal(mkdir(t_pathf("proc/%ld/fd", (long)pid), 0700), 0);
		len = (size_t)snprintf(text, sizeof(text), "%s%c", argv0, '\0');
		mixcase(mixed, id);
		/* one way of naming or holding something per process */
		switch (rnd() % 12) {
		case 0:
			len += (size_t)snprintf(text + len, sizeof(text) - len, "--resume=%s%c", mixed, '\0');
			break;
		case 1:
			len += (size_t)snprintf(text + len, sizeof(text) - len, "x%s.jsonl%c", mixed, '\0');
			break;
		case 2: /* split over two arguments: no match */
			cut = strlen(mixed) / 2;
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%.*s%c%s%c", (int)cut, mixed,
						'\0', mixed + cut, '\0');
			break;
		case 3: /* one byte short: no match */
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%.*s%c", (int)strlen(mixed) - 1,
						mixed, '\0');
			break;
		case 4: /* the agent's variable, or another one (no match) */
			fake_file(pid, "environ", text,
				  (size_t)snprintf(text, sizeof(text), "A=1%c%s=%s%c", '\0',
						   rnd() % 2 ? "CLAUDE_CODE_SESSION_ID" : "OTHER_ID", mixed, '\0'));
			len = (size_t)snprintf(text, sizeof(text), "%s%c", argv0, '\0');
			break;
		case 5:
		case 6:
			f = rnd() % NF;
			assert_int_equal(symlink(t_pathf("f%03zu", f), t_pathf("proc/%ld/fd/3", (long)pid)), 0);
			break;
		case 7:
			f = rnd() % NF;
			fake_file(pid, "maps", text,
				  (size_t)snprintf(text, sizeof(text), "7f000000-7f100000 r--p 00000000 %x:%x %lu /f\n",
						   major(files[f].dev), minor(files[f].dev), (unsigned long)files[f].ino));
			len = (size_t)snprintf(text, sizeof(text), "%s%c", argv0, '\0');
			break;
		case 8:
			f = (rnd() % (NF / 4)) * 4;
			assert_int_equal(symlink(t_pathf("f%03zu", f), t_pathf("proc/%ld/cwd", (long)pid)), 0);
			break;
		case 9: /* mostly the agent (accounted for when pid % 7 == 0), at a project */
			assert_int_equal(symlink(t_pathf("proj%02u", rnd() % NPROJ), t_pathf("proc/%ld/cwd", (long)pid)), 0);
			if (rnd() % 4)
				len = (size_t)snprintf(text, sizeof(text), "claude%c", '\0');
			break;
		default:
			len += (size_t)snprintf(text + len, sizeof(text) - len, "plain-arg-%u%c", rnd(), '\0');
			break;
		}
		if (rnd() % 10)
			fake_file(pid, "cmdline", text, len);
	}

	memset(&o, 0, sizeof(o));
	o.procroot = fakeproc;
	o.exempt = snap_exempt;
	o.agent_proc = agent_is_claude;
	o.accounted = accounted_mod7;
	accounted_calls = 0;
	assert_int_equal(agc_snap_take(&o, &sn), 0);
	assert_non_null(sn);
	/* ps: the same snapshot naming its processes */
	o.keep_pids = true;
	assert_int_equal(agc_snap_take(&o, &snp), 0);
	/* asked only when a project matches, on this thread: never while the snapshot is taken */
	assert_int_equal(accounted_calls, 0);
	for (i = 0; i < 600; i++) {
		const char *id = ids[i % NID];
		agc_gate_file gf = {0}, project = {0};
		agc_holders h = {NULL, 0, 0};
		agc_gate_query q;
		bool want, got;

		gf.id = files[rnd() % NF];
		gf.label = "f";
		gf.no_exempt = rnd() % 2;
		project.id = proj[rnd() % NPROJ];
		project.label = "proj";
		memset(&q, 0, sizeof(q));
		q.procroot = fakeproc;
		q.with_maps = true;
		q.exempt = snap_exempt;
		q.agent_proc = agent_is_claude;
		q.accounted = accounted_mod7;
		q.env_names = (const char *const *)names;
		q.n_env_names = 1;
		/* each way on its own, then both together (ids are not the snapshot's: they
		 * are matched after the walk by the scan itself) */
		switch (i % 3) {
		case 0:
			q.files = &gf;
			q.n_files = 1;
			break;
		case 1:
			q.agent_cwd = &project;
			break;
		default:
			q.files = &gf;
			q.n_files = 1;
			q.agent_cwd = &project;
			break;
		}
		assert_int_equal(agc_holders_scan(&q, &h), 0);
		want = h.n > 0;
		{
			pidset ws = {{0}, 0}, gs = {{0}, 0};
			size_t k;

			for (k = 0; k < h.n; k++)
				pidset_add(&ws, h.v[k].pid);
			if (q.n_files)
				assert_int_equal(agc_snap_file_each(snp, gf.id.dev, gf.id.ino, gf.no_exempt,
								    snap_pid_cb, &gs), 0);
			if (q.agent_cwd)
				assert_int_equal(agc_snap_agent_cwd_each(snp, project.id.dev, project.id.ino,
									 snap_cwd_pid_cb, &gs), 0);
			qsort(ws.v, ws.n, sizeof(*ws.v), pid_cmp);
			qsort(gs.v, gs.n, sizeof(*gs.v), pid_cmp);
			if (ws.n != gs.n || memcmp(ws.v, gs.v, ws.n * sizeof(*ws.v)) != 0)
				fail_msg("case %zu (%s): the scan names %zu processes, the snapshot with pids %zu",
					 i, id, ws.n, gs.n);
		}
		agc_holders_release(&h);
		got = (q.n_files && agc_snap_file(sn, gf.id.dev, gf.id.ino, gf.no_exempt)) ||
		      (q.agent_cwd && agc_snap_agent_cwd(sn, project.id.dev, project.id.ino));
		if (want != got)
			fail_msg("case %zu (%s): the scan says %s, the snapshot %s", i, id,
				 want ? "held" : "free", got ? "held" : "free");
		n_held += want;
		n_free += !want;
	}
	/* both answers were exercised */
	assert_true(n_held > 60);
	assert_true(n_free > 60);
	agc_snap_free(sn);
	agc_snap_free(snp);
}

/* A process table that cannot be read gives no snapshot (the caller counts every session in
 * use). */
static void test_snap_unreadable(void **state)
{
	agc_snap_opts o;
	agc_snap *sn = (agc_snap *)1;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.procroot = t_path("no-such-proc");
	assert_int_equal(agc_snap_take(&o, &sn), -1);
	assert_null(sn);
	o.procroot = fakeproc;
	fake_proc(300, "p");
	fake_file(300, "cmdline", "tool\0", 5);
	assert_int_equal(agc_snap_take(&o, &sn), 0);
	assert_false(agc_snap_file(sn, 1, 1, true));
	agc_snap_free(sn);
}

/* The fake process trees use pids below FAKE_PID_END, and a scan skips the pid it runs as (it
 * is not its own holder): so the tests run in a process whose pid is above them. On a fresh
 * machine, or in a pid namespace, pids start low: short-lived children use them up first. In
 * the worker returns 0; the parent exits with the worker's status. */
#define FAKE_PID_END 4096

static int run_above_fake_pids(void)
{
	pid_t c;
	int st;

	while (getpid() < FAKE_PID_END) {
		c = fork();
		if (c < 0)
			return -1;
		if (c == 0) {
			if (getpid() >= FAKE_PID_END)
				return 0; /* the worker */
			_exit(0);
		}
		if (waitpid(c, &st, 0) != c)
			return -1;
		if (c >= FAKE_PID_END)
			exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holders_why_name),
		cmocka_unit_test(test_holders_add_dedup),
		cmocka_unit_test_setup_teardown(test_holders_cmdline_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_cmdline_self_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_environ_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_many_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_open_file_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_open_file_self_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_maps_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_exempt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_unreadable_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_missing_procroot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_fake_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_cwd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_many_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_pid_dir_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_maps_only_when_needed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_unstatable_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_command_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders_empty_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snap_agrees_with_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snap_unreadable, setup, teardown),
	};

	if (run_above_fake_pids() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
