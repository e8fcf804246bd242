/* Unit tests of lines.c (and the proper-lockfile lock of locks.c): rewriting a shared file such
 * as Claude's history.jsonl without one session's lines (SPEC R4). Everything happens in a fresh
 * directory under $TMPDIR (agc_test.h): t_dir/root is the root, t_dir/out lies outside it.
 * Children that hold a file open are always killed and reaped. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "core.h"
#include "error.h"
#include "lines.h"
#include "walk.h"

#define ID_A "a9018be5-6555-4077-82af-13f81e4d4ca7"
#define ID_A_UPPER "A9018BE5-6555-4077-82AF-13F81E4D4CA7"
#define ID_B "0b5c3a1e-2f4d-4e6a-9b8c-7d6e5f4a3b2c"

/* The lines of history.jsonl: A's (one in upper case, with a CRLF end), B's, a malformed line
 * that names A, an empty line, and B's last line without a newline. */
#define L_A1 "{\"display\":\"fix the build\",\"timestamp\":1795984693022,\"project\":\"/p\",\"sessionId\":\"" ID_A "\"}\n"
#define L_B1 "{\"display\":\"B one\",\"timestamp\":1795984693023,\"project\":\"/q\",\"sessionId\":\"" ID_B "\"}\n"
#define L_BAD "{\"display\":\"broken " ID_A "\",\"sessionId\":\"" ID_A "\"\n"
#define L_A2 "{\"display\":\"upper\",\"sessionId\":\"" ID_A_UPPER "\"}\r\n"
#define L_EMPTY "\n"
#define L_B2 "{\"display\":\"B mentions " ID_A " in its text\",\"sessionId\":\"" ID_B "\"}\n"
#define L_B3 "{\"display\":\"B last, no newline\",\"sessionId\":\"" ID_B "\"}"

#define HISTORY L_A1 L_B1 L_BAD L_A2 L_EMPTY L_B2 L_B3
#define HISTORY_WITHOUT_A L_B1 L_BAD L_EMPTY L_B2 L_B3

static const agc_lock_spec flock_lock = {.kind = AGC_LOCK_FLOCK, .tries = 10, .interval_ms = 100};

/* A writer that opens the file just before the rewrite's rename (renameat below), then waits
 * for the lock and appends this line, as a Codex writer would. */
#define L_NEW "{\"sessionId\":\"" ID_B "\",\"display\":\"written during the rewrite\"}\n"
static bool writer_at_rename;
static pid_t writer = -1;

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	static int (*real)(int, const char *, int, const char *);
	int pfd[2];
	char c;

	if (!real)
		real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	if (writer_at_rename && pipe(pfd) == 0) {
		writer_at_rename = false;
		writer = fork();
		if (writer == 0) {
			int fd = open(t_path("root/history.jsonl"), O_WRONLY | O_APPEND);

			if (fd < 0 || write(pfd[1], "x", 1) != 1 || flock(fd, LOCK_EX) < 0 ||
			    write(fd, L_NEW, strlen(L_NEW)) != (ssize_t)strlen(L_NEW))
				_exit(1);
			_exit(0);
		}
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			abort();
		close(pfd[0]);
	}
	return real(olddirfd, oldpath, newdirfd, newpath);
}

static const agc_lock_spec mkdir_lock = {
	.kind = AGC_LOCK_MKDIR, .suffix = ".lock", .stale_ms = 10000, .hold_ms = 5000, .tries = 4, .interval_ms = 100,
};

static int rootfd = -1;
static pid_t holder = -1; /* a child holding a file open, killed and reaped in teardown */

static void content_is(const char *rel, const char *want)
{
	size_t len = 0;
	char *got = t_read(rel, &len);

	assert_non_null(got);
	if (len != strlen(want) || memcmp(got, want, len) != 0)
		fail_msg("'%s' holds:\n%s\n--- not:\n%s", rel, got, want);
	free(got);
}

/* The names in root, sorted and joined with ' ' (".." and "." left out). */
static void root_names(char *out, size_t n)
{
	struct dirent **list;
	int k, i;
	size_t o = 0;

	k = scandir(t_path("root"), &list, NULL, alphasort);
	assert_true(k >= 0);
	out[0] = '\0';
	for (i = 0; i < k; i++) {
		if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, ".."))
			o += (size_t)snprintf(out + o, n - o, "%s%s", o ? " " : "", list[i]->d_name);
		free(list[i]);
	}
	free(list);
}

/* R4: no temp file and no lock dir is left behind: root holds exactly these names. */
static void root_holds(const char *want)
{
	char got[4096];

	root_names(got, sizeof(got));
	if (strcmp(got, want) != 0)
		fail_msg("root holds '%s', not '%s'", got, want);
}

/* Like the Claude adapter: the line is JSON and its sessionId is one of ids, in any case.
 * A line that does not parse never matches. */
static bool match_session(const char *line, size_t len, char *const *ids, size_t n_ids)
{
	json_error_t err;
	json_t *j = json_loadb(line, len, 0, &err);
	json_t *sid;
	bool hit = false;
	size_t i;

	if (!j)
		return false;
	sid = json_object_get(j, "sessionId");
	for (i = 0; json_is_string(sid) && i < n_ids && !hit; i++)
		hit = strcasecmp(json_string_value(sid), ids[i]) == 0;
	json_decref(j);
	return hit;
}

static agc_lineset history_set(const char *rel)
{
	agc_lineset ls;

	memset(&ls, 0, sizeof(ls));
	ls.root = 0;
	ls.rel = (char *)rel;
	ls.lock = &mkdir_lock;
	ls.match = match_session;
	return ls;
}

static int rewrite(const char *rel, const char *id, unsigned flags, agc_lines_result *res)
{
	char *ids[1] = {(char *)id};
	agc_lineset ls = history_set(rel);

	return agc_lines_rewrite(rootfd, &ls, ids, 1, "/proc", flags, res);
}

static void kill_holder(void)
{
	if (holder > 0) {
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
		holder = -1;
	}
}

static int setup(void **state)
{
	(void)state;
	if (t_setup_dir("lines") < 0)
		return -1;
	if (mkdir(t_path("root"), 0700) < 0 || mkdir(t_path("out"), 0700) < 0)
		return -1;
	rootfd = agc_walk_open_root(t_path("root"));
	return rootfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	kill_holder();
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
	return t_teardown_dir();
}

/* R4: only A's lines go (in either letter case); B's lines, the malformed line (which names A
 * but cannot be read) and the empty line stay byte for byte; the mode is kept; the file is
 * replaced by a rename (a new inode), with no temp file and no lock dir left behind. */
static void test_lines_rewrite_removes_exactly(void **state)
{
	agc_lines_result res;
	struct stat before, after;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	assert_int_equal(chmod(t_path("root/history.jsonl"), 0640), 0);
	assert_int_equal(stat(t_path("root/history.jsonl"), &before), 0);

	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), 0);
	assert_true(res.done);
	assert_int_equal(res.count, 2);
	assert_int_equal(res.bytes, strlen(L_A1) + strlen(L_A2));
	assert_null(res.reason);

	content_is("root/history.jsonl", HISTORY_WITHOUT_A);
	assert_int_equal(stat(t_path("root/history.jsonl"), &after), 0);
	assert_int_equal(after.st_mode & 07777, 0640);
	assert_true(S_ISREG(after.st_mode));
	assert_true(after.st_ino != before.st_ino);
	root_holds("history.jsonl");
}

/* R4: the id given in upper case selects the same lines (ids are compared in any case). */
static void test_lines_rewrite_upper_id(void **state)
{
	agc_lines_result res;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	assert_int_equal(rewrite("history.jsonl", ID_A_UPPER, 0, &res), 0);
	assert_true(res.done);
	assert_int_equal(res.count, 2);
	content_is("root/history.jsonl", HISTORY_WITHOUT_A);
	root_holds("history.jsonl");
}

/* R4: a file left with no lines stays, empty, with its mode. */
static void test_lines_rewrite_all_lines(void **state)
{
	agc_lines_result res;
	struct stat st;

	(void)state;
	t_writes("root/history.jsonl", L_A1 L_A2 L_A1);
	assert_int_equal(chmod(t_path("root/history.jsonl"), 0604), 0);
	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), 0);
	assert_true(res.done);
	assert_int_equal(res.count, 3);
	assert_int_equal(stat(t_path("root/history.jsonl"), &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_mode & 07777, 0604);
	root_holds("history.jsonl");
}

/* R4: nothing of the session in the file: nothing is rewritten (same inode, same bytes); a
 * missing file is nothing to do. */
static void test_lines_rewrite_nothing_to_do(void **state)
{
	agc_lines_result res;
	struct stat before, after;

	(void)state;
	t_writes("root/history.jsonl", L_B1 L_BAD L_B3);
	assert_int_equal(stat(t_path("root/history.jsonl"), &before), 0);
	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), 0);
	assert_false(res.done);
	assert_int_equal(res.count, 0);
	assert_int_equal(stat(t_path("root/history.jsonl"), &after), 0);
	assert_true(after.st_ino == before.st_ino);
	content_is("root/history.jsonl", L_B1 L_BAD L_B3);
	root_holds("history.jsonl");

	assert_int_equal(rewrite("missing.jsonl", ID_A, 0, &res), 0);
	assert_false(res.done);
	assert_int_equal(res.count, 0);
	root_holds("history.jsonl");
}

/* R4: a file that a process holds open is not rewritten (a writer holding the old inode would
 * lose its lines): AGC_EINUSE, the file unchanged, and how many lines stay is still said. */
static void test_lines_rewrite_held_open(void **state)
{
	agc_lines_result res;
	struct stat before, after;
	int p[2];
	char c;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	assert_int_equal(stat(t_path("root/history.jsonl"), &before), 0);
	assert_int_equal(pipe(p), 0);
	holder = fork();
	assert_true(holder >= 0);
	if (holder == 0) {
		int fd = open(t_path("root/history.jsonl"), O_RDONLY | O_CLOEXEC);

		close(p[0]);
		if (fd < 0 || write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1); /* the child has the file open */
	close(p[0]);

	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), AGC_EINUSE);
	assert_false(res.done);
	assert_non_null(res.reason);
	assert_string_equal(res.reason, "in-use");
	assert_int_equal(res.count, 2);
	content_is("root/history.jsonl", HISTORY);
	assert_int_equal(stat(t_path("root/history.jsonl"), &after), 0);
	assert_true(after.st_ino == before.st_ino);
	root_holds("history.jsonl");

	/* Once the holder is gone, the rewrite goes through. */
	kill_holder();
	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), 0);
	assert_true(res.done);
	content_is("root/history.jsonl", HISTORY_WITHOUT_A);
	root_holds("history.jsonl");
}

/* R4: Claude's own lock (a fresh history.jsonl.lock dir) is respected: AGC_EINUSE, the file
 * unchanged, and the other writer's lock left where it is. */
static void test_lines_rewrite_fresh_lock(void **state)
{
	agc_lines_result res;
	struct stat st;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	assert_int_equal(mkdir(t_path("root/history.jsonl.lock"), 0700), 0);

	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), AGC_EINUSE);
	assert_false(res.done);
	assert_non_null(res.reason);
	assert_string_equal(res.reason, "in-use");
	assert_int_equal(res.count, 2);
	content_is("root/history.jsonl", HISTORY);
	assert_int_equal(lstat(t_path("root/history.jsonl.lock"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	root_holds("history.jsonl history.jsonl.lock");
}

/* R4: a lock name that is not a directory is not the convention's lock and not ours to break. */
static void test_lines_rewrite_lock_not_dir(void **state)
{
	agc_lines_result res;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	t_writes("root/history.jsonl.lock", "not a dir");
	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), AGC_EINUSE);
	assert_false(res.done);
	content_is("root/history.jsonl", HISTORY);
	content_is("root/history.jsonl.lock", "not a dir");
	root_holds("history.jsonl history.jsonl.lock");
}

/* R4: a lock older than 10 s is stale by Claude's convention: it is broken, the rewrite is
 * done, and no lock dir is left. */
static void test_lines_rewrite_stale_lock(void **state)
{
	agc_lines_result res;
	struct timespec now, ts[2];

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	assert_int_equal(mkdir(t_path("root/history.jsonl.lock"), 0700), 0);
	clock_gettime(CLOCK_REALTIME, &now);
	ts[0] = ts[1] = now;
	ts[0].tv_sec -= 30;
	ts[1].tv_sec -= 30;
	assert_int_equal(utimensat(AT_FDCWD, t_path("root/history.jsonl.lock"), ts, AT_SYMLINK_NOFOLLOW), 0);

	assert_int_equal(rewrite("history.jsonl", ID_A, 0, &res), 0);
	assert_true(res.done);
	assert_int_equal(res.count, 2);
	content_is("root/history.jsonl", HISTORY_WITHOUT_A);
	assert_false(t_exists("root/history.jsonl.lock"));
	root_holds("history.jsonl");
}

/* R4: the lock functions themselves: take makes the dir, a second take finds it held, release
 * removes it, and releasing twice is harmless. */
static void test_lines_lock_mkdir(void **state)
{
	struct timespec now;
	int64_t now_ms;

	(void)state;
	clock_gettime(CLOCK_REALTIME, &now);
	now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	assert_int_equal(agc_lock_mkdir_take(rootfd, "f.lock", 10000, now_ms), 0);
	assert_true(t_exists("root/f.lock"));
	assert_int_equal(agc_lock_mkdir_take(rootfd, "f.lock", 10000, now_ms), AGC_EINUSE);
	assert_true(t_exists("root/f.lock"));
	/* Seen from 30 s in the future the same lock is stale: broken and taken again. */
	assert_int_equal(agc_lock_mkdir_take(rootfd, "f.lock", 10000, now_ms + 30000), 0);
	assert_true(t_exists("root/f.lock"));
	assert_int_equal(agc_lock_mkdir_release(rootfd, "f.lock"), 0);
	assert_false(t_exists("root/f.lock"));
	assert_int_equal(agc_lock_mkdir_release(rootfd, "f.lock"), 0);
	root_holds("");
}

/* R4, R2: a history.jsonl that is a symlink is never rewritten, nor what it points to. */
static void test_lines_rewrite_symlink(void **state)
{
	agc_lines_result res;
	struct stat st;

	(void)state;
	t_writes("out/history.jsonl", HISTORY);
	assert_int_equal(symlink(t_path("out/history.jsonl"), t_path("root/history.jsonl")), 0);

	assert_true(rewrite("history.jsonl", ID_A, 0, &res) < 0);
	assert_false(res.done);
	assert_non_null(res.reason);
	assert_string_equal(res.reason, "symlink");
	content_is("out/history.jsonl", HISTORY);
	assert_int_equal(lstat(t_path("root/history.jsonl"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	root_holds("history.jsonl");
	{
		struct dirent **list;
		int k = scandir(t_path("out"), &list, NULL, alphasort), i;

		assert_int_equal(k, 3); /* ".", "..", history.jsonl: no temp file beside the target */
		for (i = 0; i < k; i++)
			free(list[i]);
		free(list);
	}
}

/* R4, R2: nor one reached through a symlinked directory. */
static void test_lines_rewrite_symlink_dir(void **state)
{
	agc_lines_result res;

	(void)state;
	t_writes("out/history.jsonl", HISTORY);
	assert_int_equal(symlink(t_path("out"), t_path("root/cfg")), 0);

	assert_true(rewrite("cfg/history.jsonl", ID_A, 0, &res) < 0);
	assert_false(res.done);
	assert_non_null(res.reason);
	assert_string_equal(res.reason, "symlink");
	content_is("out/history.jsonl", HISTORY);
	assert_false(t_exists("out/history.jsonl.lock"));
	root_holds("cfg");
}

/* A check-only dry run asks the rewrite's questions without reading the file: nothing
 * counted, nothing changed; a hard-linked file is refused as the rewrite refuses it. */
static void test_lines_rewrite_check_only(void **state)
{
	agc_lines_result res;
	struct stat before, after;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	assert_int_equal(stat(t_path("root/history.jsonl"), &before), 0);
	assert_int_equal(rewrite("history.jsonl", ID_A, AGC_LINES_DRY_RUN | AGC_LINES_CHECK_ONLY, &res), 0);
	assert_false(res.done);
	assert_int_equal(res.count, 0);
	assert_null(res.reason);
	content_is("root/history.jsonl", HISTORY);
	assert_int_equal(stat(t_path("root/history.jsonl"), &after), 0);
	assert_true(after.st_ino == before.st_ino && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	root_holds("history.jsonl");
	/* a second name for the file: the rewrite could not remove the lines from both */
	assert_int_equal(link(t_path("root/history.jsonl"), t_path("root/other.jsonl")), 0);
	assert_true(rewrite("history.jsonl", ID_A, AGC_LINES_DRY_RUN | AGC_LINES_CHECK_ONLY, &res) < 0);
	assert_non_null(res.reason);
	assert_string_equal(res.reason, "error: hard-linked");
	content_is("root/history.jsonl", HISTORY);
	assert_int_equal(unlink(t_path("root/other.jsonl")), 0);
	root_holds("history.jsonl");
}

/* R4: a dry run counts A's lines and changes nothing: same bytes, same inode, no lock taken. */
static void test_lines_rewrite_dry_run(void **state)
{
	agc_lines_result res;
	struct stat before, after;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	assert_int_equal(chmod(t_path("root/history.jsonl"), 0640), 0);
	assert_int_equal(stat(t_path("root/history.jsonl"), &before), 0);

	assert_int_equal(rewrite("history.jsonl", ID_A, AGC_LINES_DRY_RUN, &res), 0);
	assert_false(res.done);
	assert_int_equal(res.count, 2);
	assert_int_equal(res.bytes, strlen(L_A1) + strlen(L_A2));
	content_is("root/history.jsonl", HISTORY);
	assert_int_equal(stat(t_path("root/history.jsonl"), &after), 0);
	assert_true(after.st_ino == before.st_ino);
	assert_int_equal(after.st_mode & 07777, 0640);
	assert_true(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
		    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	root_holds("history.jsonl");
}

/* R4: a flock-guarded file (Codex's history.jsonl): a writer that opened the old file just
 * before the rename appends after the rewrite lets go; its line is not lost to the unlinked
 * inode but lands in the file now in its place. */
static void test_lines_rewrite_flock_writer(void **state)
{
	char *ids[1] = {ID_A};
	agc_lineset ls = history_set("history.jsonl");
	agc_lines_result res;
	int st = 0;

	(void)state;
	t_writes("root/history.jsonl", HISTORY);
	ls.lock = &flock_lock;
	writer_at_rename = true;
	assert_int_equal(agc_lines_rewrite(rootfd, &ls, ids, 1, "/proc", 0, &res), 0);
	assert_true(res.done);
	assert_int_equal(waitpid(writer, &st, 0), writer);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	content_is("root/history.jsonl", HISTORY_WITHOUT_A L_NEW);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_lines_rewrite_removes_exactly),
		T(test_lines_rewrite_upper_id),
		T(test_lines_rewrite_all_lines),
		T(test_lines_rewrite_nothing_to_do),
		T(test_lines_rewrite_held_open),
		T(test_lines_rewrite_fresh_lock),
		T(test_lines_rewrite_lock_not_dir),
		T(test_lines_rewrite_stale_lock),
		T(test_lines_lock_mkdir),
		T(test_lines_rewrite_symlink),
		T(test_lines_rewrite_symlink_dir),
		T(test_lines_rewrite_dry_run),
		T(test_lines_rewrite_check_only),
		T(test_lines_rewrite_flock_writer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
