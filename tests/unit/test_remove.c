/* Unit tests of remove.c: removing an artifact beneath its root through directory fds (SPEC R2,
 * R3). Everything happens inside a fresh directory under $TMPDIR (agc_test.h): t_dir/root is the
 * root, t_dir/out and t_dir/root/keep lie outside the artifact and must survive every test.
 *
 * On Linux this file also defines unlinkat and openat, which the library's objects linked into
 * this program call instead of libc's: they pass through to the system calls, and let a test
 * record the order of removals, make one name fail, or swap a directory for a link at the
 * moment it is opened. That makes the order of the `last` child, failures as root, and a swap
 * in the middle of a run observable without privileges or LD_PRELOAD. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/fs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#define HAVE_HOOKS 1
#endif

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "remove.h"
#include "scan.h"

static int rootfd = -1;
static char restore_mode[PATH_MAX];      /* a dir a test made read-only, made 0700 again */
static char restore_immutable[PATH_MAX]; /* a file a test made immutable, made mutable again */

/* ---- hooks --------------------------------------------------------------------------- */

#ifdef HAVE_HOOKS
#define LOG_MAX 256
static bool hook_record;                  /* record unlinkat names in hook_log */
static char hook_log[LOG_MAX][NAME_MAX + 1];
static size_t hook_nlog;
static const char *hook_fail_name;        /* unlinkat on this name fails with hook_fail_errno */
static int hook_fail_errno;
static const char *hook_swap_name;        /* openat of this name swaps it first (once) */
static bool hook_swap_to_dir;             /* swap for a new directory instead of a link */

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int unlinkat(int dirfd, const char *path, int flags)
{
	const char *name = basename_of(path);

	if (hook_record && hook_nlog < LOG_MAX)
		snprintf(hook_log[hook_nlog++], NAME_MAX + 1, "%s", name);
	if (hook_fail_name && strcmp(name, hook_fail_name) == 0) {
		errno = hook_fail_errno;
		return -1;
	}
	return (int)syscall(SYS_unlinkat, dirfd, path, flags);
}

static void swap_now(int dirfd, const char *name);

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (hook_swap_name && strcmp(path, hook_swap_name) == 0) {
		hook_swap_name = NULL;
		swap_now(dirfd, path);
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static void hooks_reset(void)
{
	hook_record = false;
	hook_nlog = 0;
	hook_fail_name = NULL;
	hook_fail_errno = 0;
	hook_swap_name = NULL;
	hook_swap_to_dir = false;
}
#else
static void hooks_reset(void)
{
}
#endif

/* ---- helpers ------------------------------------------------------------------------- */

static void assert_content(const char *rel, const char *want)
{
	char got[256];
	ssize_t n;
	int fd = open(t_path(rel), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	n = read(fd, got, sizeof(got) - 1);
	close(fd);
	assert_true(n >= 0);
	got[n] = '\0';
	assert_string_equal(got, want);
}

static int count_fds(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			n++;
	return n;
}

/* A chain of n nested directories named "d" below t_dir/rel, with a file "leaf" at the bottom. */
static void mkchain(const char *rel, int n)
{
	int fd = open(t_path(rel), O_RDONLY | O_DIRECTORY | O_CLOEXEC), next, i;

	assert_true(fd >= 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	next = openat(fd, "leaf", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(next >= 0);
	close(next);
	close(fd);
}

static void stat_of(const char *rel, struct stat *st)
{
	assert_int_equal(lstat(t_path(rel), st), 0);
}

#ifdef HAVE_HOOKS
/* Replace dirfd/name by a symlink to t_dir/out (or a new directory), keeping the old directory
 * as t_dir/root/held so a test can check that nothing inside it was touched. */
static void swap_now(int dirfd, const char *name)
{
	if (renameat(dirfd, name, AT_FDCWD, t_path("root/held")) < 0)
		return;
	if (hook_swap_to_dir) {
		int fd;

		mkdirat(dirfd, name, 0700);
		fd = (int)syscall(SYS_openat, dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
		if (fd >= 0) {
			int f = (int)syscall(SYS_openat, fd, "new.jsonl",
					     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (f >= 0)
				close(f);
			close(fd);
		}
	} else {
		symlinkat(t_path("out"), dirfd, name);
	}
}

static int set_immutable(const char *path, bool on)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), flags, rc;

	if (fd < 0)
		return -1;
	rc = ioctl(fd, FS_IOC_GETFLAGS, &flags);
	if (rc == 0) {
		flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
		rc = ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
	return rc;
}
#endif

static int setup(void **state)
{
	(void)state;
	hooks_reset();
	restore_mode[0] = '\0';
	restore_immutable[0] = '\0';
	if (t_setup_dir("remove") < 0)
		return -1;
	if (mkdir(t_path("root"), 0700) < 0 || mkdir(t_path("out"), 0700) < 0)
		return -1;
	rootfd = agc_walk_open_root(t_path("root"));
	if (rootfd < 0)
		return -1;
	/* What lies outside the artifacts; every test checks it survives. */
	t_writes("out/sentinel", "keep");
	t_writes("out/x", "outside");
	t_mkdir("out/sub");
	t_writes("out/sub/y", "outside too");
	t_writes("root/keep", "sibling");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hooks_reset();
#ifdef HAVE_HOOKS
	if (restore_immutable[0])
		set_immutable(restore_immutable, false);
#endif
	if (restore_mode[0])
		chmod(restore_mode, 0700);
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
	return t_teardown_dir();
}

static void assert_outside_intact(void)
{
	assert_content("out/sentinel", "keep");
	assert_content("out/x", "outside");
	assert_content("out/sub/y", "outside too");
	assert_content("root/keep", "sibling");
}

static int rm(const char *rel, const char *last, unsigned flags, agc_rm_result *res)
{
	return agc_remove_beneath(rootfd, rel, 0, 0, last, flags, res);
}

/* ---- tests --------------------------------------------------------------------------- */

/* R2: a plain file artifact is unlinked, and only it. */
static void test_remove_plain_file(void **state)
{
	agc_rm_result res;
	int before = count_fds();

	(void)state;
	t_writes("root/f.jsonl", "12345");
	assert_int_equal(rm("f.jsonl", NULL, 0, &res), 0);
	assert_int_equal(res.status, AGC_WALK_OK);
	assert_int_equal(res.err, 0);
	assert_int_equal(res.files, 1);
	assert_int_equal(res.dirs, 0);
	assert_int_equal(res.bytes, 5);
	assert_false(t_exists("root/f.jsonl"));
	assert_int_equal(count_fds(), before);
	assert_outside_intact();
}

/* R3: a nested tree goes depth first; files, dirs and bytes are counted. */
static void test_remove_tree(void **state)
{
	agc_rm_result res;
	int before = count_fds();

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/a", "0123456789");
	t_mkdir("root/s/b");
	t_writes("root/s/b/c", "01234567890123456789");
	t_mkdir("root/s/b/d");
	t_writes("root/s/b/d/e", "012345678901234567890123456789");
	t_mkdir("root/s/b/empty");
	t_writes("root/s/.hidden", "");
	assert_int_equal(rm("s", NULL, 0, &res), 0);
	assert_int_equal(res.status, AGC_WALK_OK);
	assert_int_equal(res.files, 4);
	assert_int_equal(res.dirs, 4);
	assert_int_equal(res.bytes, 60);
	assert_false(t_exists("root/s"));
	assert_int_equal(count_fds(), before);
	assert_outside_intact();
}

/* R2: an artifact below real directories is reached and its parents stay. */
static void test_remove_nested_rel(void **state)
{
	agc_rm_result res;

	(void)state;
	t_mkdir("root/p");
	t_mkdir("root/p/q");
	t_mkdir("root/p/q/s");
	t_writes("root/p/q/s/f", "x");
	t_writes("root/p/q/twin", "x");
	assert_int_equal(rm("p/q/s", NULL, 0, &res), 0);
	assert_int_equal(res.files, 1);
	assert_int_equal(res.dirs, 1);
	assert_false(t_exists("root/p/q/s"));
	assert_true(t_exists("root/p/q/twin"));
	assert_outside_intact();
}

/* R2: an intermediate symlink to a dir outside stops the removal; outside/x survives. */
static void test_remove_intermediate_symlink(void **state)
{
	agc_rm_result res;

	(void)state;
	t_symlink(t_path("out"), "root/a");
	assert_int_equal(rm("a/x", NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_SYMLINK);
	assert_int_equal(res.files + res.dirs, 0);
	assert_non_null(strstr(agc_error_last(), "cannot remove 'a/x'"));
	assert_true(t_exists("root/a"));
	/* The same through a deeper relative link, and with a directory artifact. */
	t_mkdir("root/p");
	t_symlink("../../out", "root/p/l");
	assert_int_equal(rm("p/l/sub", NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_SYMLINK);
	assert_outside_intact();
}

/* R2: a file on the way is not a directory; nothing is removed. */
static void test_remove_intermediate_notdir(void **state)
{
	agc_rm_result res;

	(void)state;
	t_writes("root/f", "x");
	assert_int_equal(rm("f/x", NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_NOTDIR);
	assert_true(t_exists("root/f"));
	assert_outside_intact();
}

/* R2: a leaf symlink to a dir outside goes as the link alone; the target and its contents
 * survive. */
static void test_remove_leaf_symlink_dir(void **state)
{
	agc_rm_result res;

	(void)state;
	t_symlink(t_path("out"), "root/l");
	assert_int_equal(rm("l", NULL, 0, &res), 0);
	assert_int_equal(res.files, 1);
	assert_int_equal(res.dirs, 0);
	assert_int_equal(res.bytes, 0);
	assert_false(t_exists("root/l"));
	assert_outside_intact();
}

/* R2: a leaf symlink to a file outside goes as the link alone; the file keeps its content. */
static void test_remove_leaf_symlink_file(void **state)
{
	agc_rm_result res;

	(void)state;
	t_symlink(t_path("out/x"), "root/l");
	assert_int_equal(rm("l", NULL, 0, &res), 0);
	assert_int_equal(res.files, 1);
	assert_int_equal(res.bytes, 0);
	assert_false(t_exists("root/l"));
	assert_outside_intact();
}

/* R2: a dangling symlink leaf is removed as a link. */
static void test_remove_dangling_leaf(void **state)
{
	agc_rm_result res;

	(void)state;
	t_symlink(t_path("out/nothing"), "root/l");
	assert_int_equal(rm("l", NULL, 0, &res), 0);
	assert_int_equal(res.files, 1);
	assert_false(t_exists("root/l"));
	assert_false(t_exists("out/nothing"));
	assert_outside_intact();
}

/* R3: links to "/", to a dir outside, to "." and ".." inside a dir being removed go as links;
 * nothing they point to is touched. */
static void test_remove_link_to_slash_inside(void **state)
{
	agc_rm_result res;
	struct stat st;

	(void)state;
	t_mkdir("root/s");
	t_symlink("/", "root/s/toslash");
	t_symlink(t_path("out"), "root/s/toout");
	t_symlink(t_path("out/x"), "root/s/tofile");
	t_symlink(".", "root/s/self");
	t_symlink("..", "root/s/up");
	t_mkdir("root/s/sub");
	t_symlink("../..", "root/s/sub/upup");
	t_writes("root/s/f", "abc");
	assert_int_equal(rm("s", NULL, 0, &res), 0);
	assert_int_equal(res.files, 7);
	assert_int_equal(res.dirs, 2);
	assert_int_equal(res.bytes, 3);
	assert_false(t_exists("root/s"));
	assert_int_equal(stat("/", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_outside_intact();
}

/* R3: a symlink loop inside the dir is removed as links, without hanging. */
static void test_remove_symlink_loop(void **state)
{
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_symlink("l2", "root/s/l1");
	t_symlink("l1", "root/s/l2");
	t_mkdir("root/s/sub");
	t_symlink("../sub", "root/s/sub/again");
	t_symlink("me", "root/s/me");
	assert_int_equal(rm("s", NULL, 0, &res), 0);
	assert_int_equal(res.files, 4);
	assert_int_equal(res.dirs, 2);
	assert_false(t_exists("root/s"));
	assert_outside_intact();
}

/* R2: an artifact that is not the (dev, ino) discovery saw is left alone. */
static void test_remove_expect_mismatch(void **state)
{
	agc_rm_result res;
	struct stat st;

	(void)state;
	t_writes("root/f", "x");
	t_mkdir("root/s");
	t_writes("root/s/g", "y");
	stat_of("root/f", &st);
	assert_int_equal(agc_remove_beneath(rootfd, "f", st.st_dev, st.st_ino + 1, NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_CHANGED);
	assert_int_equal(res.files + res.dirs, 0);
	assert_true(t_exists("root/f"));
	stat_of("root/s", &st);
	assert_int_equal(agc_remove_beneath(rootfd, "s", st.st_dev + 1, st.st_ino, NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_CHANGED);
	assert_true(t_exists("root/s/g"));
	assert_non_null(strstr(agc_error_last(), "cannot remove 's'"));
	assert_outside_intact();
}

/* R2: with the right (dev, ino) the artifact goes. */
static void test_remove_expect_match(void **state)
{
	agc_rm_result res;
	struct stat st;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/g", "y");
	stat_of("root/s", &st);
	assert_int_equal(agc_remove_beneath(rootfd, "s", st.st_dev, st.st_ino, NULL, 0, &res), 0);
	assert_false(t_exists("root/s"));
	assert_outside_intact();
}

/* R3: a directory swapped for a symlink to outside between discovery and removal is refused:
 * neither the link nor anything behind it goes. */
static void test_remove_swapped_for_link(void **state)
{
	agc_rm_result res;
	struct stat st;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/g", "y");
	stat_of("root/s", &st);
	assert_int_equal(rename(t_path("root/s"), t_path("root/old")), 0);
	t_symlink(t_path("out"), "root/s");
	assert_int_equal(agc_remove_beneath(rootfd, "s", st.st_dev, st.st_ino, NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_CHANGED);
	assert_int_equal(res.files + res.dirs, 0);
	assert_true(t_exists("root/s"));
	assert_true(t_exists("root/old/g"));
	assert_outside_intact();
}

/* R3: a directory swapped for another directory is refused too; the newcomer survives. */
static void test_remove_swapped_for_dir(void **state)
{
	agc_rm_result res;
	struct stat st;

	(void)state;
	t_mkdir("root/s");
	stat_of("root/s", &st);
	assert_int_equal(rename(t_path("root/s"), t_path("root/old")), 0);
	t_mkdir("root/s");
	t_writes("root/s/new", "z");
	assert_int_equal(agc_remove_beneath(rootfd, "s", st.st_dev, st.st_ino, NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_CHANGED);
	assert_true(t_exists("root/s/new"));
	assert_true(t_exists("root/old"));
	assert_outside_intact();
}

/* R3: a subdirectory swapped for a link to outside after fstatat saw it and before it is
 * opened is not entered (openat refuses the link); the rest of the artifact goes. */
static void test_remove_swapped_mid_run_link(void **state)
{
#ifdef HAVE_HOOKS
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_mkdir("root/s/victim");
	t_writes("root/s/victim/inner", "i");
	t_writes("root/s/other", "o");
	hook_swap_name = "victim";
	assert_int_equal(rm("s", NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_CHANGED);
	assert_null(hook_swap_name);
	assert_false(t_exists("root/s/other"));
	assert_true(t_exists("root/s/victim"));
	assert_content("root/held/inner", "i");
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: needs symbol interposition of openat (Linux)\n");
	skip();
#endif
}

/* R3: a subdirectory swapped for another directory at the moment it is opened is detected by
 * comparing (dev, ino) after opening; the newcomer and its contents are not touched. */
static void test_remove_swapped_mid_run_dir(void **state)
{
#ifdef HAVE_HOOKS
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_mkdir("root/s/victim");
	t_writes("root/s/victim/inner", "i");
	hook_swap_name = "victim";
	hook_swap_to_dir = true;
	assert_int_equal(rm("s", NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_CHANGED);
	assert_true(t_exists("root/s/victim/new.jsonl"));
	assert_content("root/held/inner", "i");
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: needs symbol interposition of openat (Linux)\n");
	skip();
#endif
}

/* R3: the artifact itself swapped for a link between fstatat and opening is not entered. */
static void test_remove_swapped_mid_run_top(void **state)
{
#ifdef HAVE_HOOKS
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/inner", "i");
	hook_swap_name = "s";
	assert_int_equal(rm("s", NULL, 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_CHANGED);
	assert_int_equal(res.files + res.dirs, 0);
	assert_true(t_exists("root/s"));
	assert_content("root/held/inner", "i");
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: needs symbol interposition of openat (Linux)\n");
	skip();
#endif
}

/* R1/R2: a relative path that is not clean is refused before anything is touched. */
static void test_remove_rel_invalid(void **state)
{
	static const char *bad[] = {"", "/abs", "a/../b", "a//b", ".", "..", "a/./b", "../out",
				    "../out/x", "a\x01" "b", "a/", "/"};
	agc_rm_result res;
	size_t i;

	(void)state;
	t_mkdir("root/a");
	t_mkdir("root/b");
	t_writes("root/a\x01" "b", "ctl");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rm(bad[i], NULL, 0, &res), -1);
		assert_int_equal(res.status, AGC_WALK_ERROR);
		assert_int_equal(res.err, EINVAL);
		assert_int_equal(res.files + res.dirs, 0);
		assert_non_null(strstr(agc_error_last(), "cannot remove"));
	}
	/* Control bytes are not echoed into the message. */
	assert_null(strchr(agc_error_last(), '\x01'));
	assert_true(t_exists("root/a"));
	assert_true(t_exists("root/b"));
	assert_true(t_exists("root/a\x01" "b"));
	assert_outside_intact();
}

/* R3: a dry run walks and counts the same way and removes nothing. */
static void test_remove_dry_run(void **state)
{
	agc_rm_result dry, res;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/a", "0123456789");
	t_mkdir("root/s/b");
	t_writes("root/s/b/c", "01234");
	t_symlink(t_path("out"), "root/s/b/l");
	t_writes("root/s/state.json", "{}");
	assert_int_equal(rm("s", "state.json", AGC_RM_DRY_RUN, &dry), 0);
	assert_int_equal(dry.status, AGC_WALK_OK);
	assert_int_equal(dry.files, 4);
	assert_int_equal(dry.dirs, 2);
	assert_int_equal(dry.bytes, 17);
	assert_true(t_exists("root/s/a"));
	assert_true(t_exists("root/s/b/c"));
	assert_true(t_exists("root/s/b/l"));
	assert_true(t_exists("root/s/state.json"));
	t_writes("root/f", "xyz");
	assert_int_equal(rm("f", NULL, AGC_RM_DRY_RUN, &dry), 0);
	assert_int_equal(dry.files, 1);
	assert_int_equal(dry.bytes, 3);
	assert_true(t_exists("root/f"));
	/* The real run removes exactly what the dry run counted. */
	assert_int_equal(rm("s", "state.json", 0, &res), 0);
	assert_int_equal(res.files, 4);
	assert_int_equal(res.dirs, 2);
	assert_int_equal(res.bytes, 17);
	assert_outside_intact();
}

/* A leaf that does not exist is AGC_ENOTFOUND, whether the leaf or a parent is missing. */
static void test_remove_enoent(void **state)
{
	agc_rm_result res;

	(void)state;
	assert_int_equal(rm("nope", NULL, 0, &res), AGC_ENOTFOUND);
	assert_int_equal(res.status, AGC_WALK_ENOENT);
	assert_int_equal(res.err, ENOENT);
	assert_string_equal(agc_error_last(), "cannot remove 'nope': No such file or directory");
	assert_int_equal(rm("nope/deeper", NULL, 0, &res), AGC_ENOTFOUND);
	assert_int_equal(res.status, AGC_WALK_ENOENT);
	assert_int_equal(rm("nope", NULL, AGC_RM_DRY_RUN, &res), AGC_ENOTFOUND);
	assert_outside_intact();
}

/* R3: with last naming a direct child, everything goes, that child included. */
static void test_remove_last_all_go(void **state)
{
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/a", "a");
	t_mkdir("root/s/b");
	t_writes("root/s/b/c", "c");
	t_writes("root/s/state.json", "{}");
	assert_int_equal(rm("s", "state.json", 0, &res), 0);
	assert_int_equal(res.files, 3);
	assert_int_equal(res.dirs, 2);
	assert_false(t_exists("root/s"));
	/* A last that is not a direct child name ("b/c") never matches: all goes as usual. */
	t_mkdir("root/t");
	t_mkdir("root/t/b");
	t_writes("root/t/b/c", "c");
	assert_int_equal(rm("t", "b/c", 0, &res), 0);
	assert_false(t_exists("root/t"));
	assert_outside_intact();
}

/* R3: the last child is removed after every other entry, just before the artifact itself; a
 * nested entry of the same name is not special. */
static void test_remove_last_order(void **state)
{
#ifdef HAVE_HOOKS
	agc_rm_result res;
	size_t i, seen = 0, first = LOG_MAX;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/a.jsonl", "a");
	t_writes("root/s/zz.jsonl", "z");
	t_mkdir("root/s/sub");
	t_writes("root/s/sub/state.json", "{}");
	t_writes("root/s/sub/y", "y");
	t_writes("root/s/state.json", "{}");
	t_writes("root/s/m", "m");
	hook_record = true;
	assert_int_equal(rm("s", "state.json", 0, &res), 0);
	hook_record = false;
	assert_false(t_exists("root/s"));
	assert_int_equal(hook_nlog, 8);
	assert_string_equal(hook_log[hook_nlog - 1], "s");
	assert_string_equal(hook_log[hook_nlog - 2], "state.json");
	for (i = 0; i < hook_nlog; i++) {
		if (strcmp(hook_log[i], "state.json") == 0) {
			seen++;
			if (first == LOG_MAX)
				first = i;
		}
	}
	assert_int_equal(seen, 2);
	assert_true(first < hook_nlog - 2);
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: needs symbol interposition of unlinkat (Linux)\n");
	skip();
#endif
}

/* R3: when another entry cannot be removed, the last child stays; the rest goes, and the
 * first failure (not the artifact's ENOTEMPTY) is reported. Works as root. */
static void test_remove_last_kept_on_failure(void **state)
{
#ifdef HAVE_HOOKS
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/a.jsonl", "a");
	t_writes("root/s/b.jsonl", "b");
	t_mkdir("root/s/c");
	t_writes("root/s/c/d.jsonl", "d");
	t_writes("root/s/state.json", "{}");
	hook_fail_name = "b.jsonl";
	hook_fail_errno = EACCES;
	assert_int_equal(rm("s", "state.json", 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_PERM);
	assert_int_equal(res.err, EACCES);
	assert_int_equal(res.files, 2);
	assert_int_equal(res.dirs, 1);
	assert_string_equal(agc_error_last(), "cannot remove 's/b.jsonl': Permission denied");
	assert_true(t_exists("root/s/b.jsonl"));
	assert_true(t_exists("root/s/state.json"));
	assert_false(t_exists("root/s/a.jsonl"));
	assert_false(t_exists("root/s/c"));
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: needs symbol interposition of unlinkat (Linux)\n");
	skip();
#endif
}

/* R3: a subdirectory that cannot be removed (EBUSY, as a mount point would be) is reported with
 * its path; its contents and the siblings go, the last child stays. */
static void test_remove_busy_subdir(void **state)
{
#ifdef HAVE_HOOKS
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_mkdir("root/s/c");
	t_mkdir("root/s/c/busy");
	t_writes("root/s/c/busy/f", "f");
	t_writes("root/s/z", "z");
	t_writes("root/s/state.json", "{}");
	hook_fail_name = "busy";
	hook_fail_errno = EBUSY;
	assert_int_equal(rm("s", "state.json", 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_ERROR);
	assert_int_equal(res.err, EBUSY);
	assert_non_null(strstr(agc_error_last(), "'s/c/busy'"));
	assert_false(t_exists("root/s/c/busy/f"));
	assert_true(t_exists("root/s/c/busy"));
	assert_false(t_exists("root/s/z"));
	assert_true(t_exists("root/s/state.json"));
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: needs symbol interposition of unlinkat (Linux)\n");
	skip();
#endif
}

/* R3: the same with a real permission failure: a read-only subdirectory (non-root only, since
 * root ignores modes; the hook-based test above covers root). */
static void test_remove_last_kept_on_mode(void **state)
{
	agc_rm_result res;

	(void)state;
	if (geteuid() == 0) {
		print_message("skipped: running as root, which ignores directory modes\n");
		skip();
	}
	t_mkdir("root/s");
	t_mkdir("root/s/ro");
	t_writes("root/s/ro/f", "f");
	t_writes("root/s/a", "a");
	t_writes("root/s/state.json", "{}");
	snprintf(restore_mode, sizeof(restore_mode), "%s", t_path("root/s/ro"));
	assert_int_equal(chmod(t_path("root/s/ro"), 0500), 0);
	assert_int_equal(rm("s", "state.json", 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_PERM);
	assert_int_equal(res.err, EACCES);
	assert_true(t_exists("root/s/ro/f"));
	assert_true(t_exists("root/s/state.json"));
	assert_false(t_exists("root/s/a"));
	assert_outside_intact();
}

/* R3: the same with a real kernel failure as root: an immutable file (EPERM). Skipped where
 * the file system or the capabilities do not allow the flag. */
static void test_remove_last_kept_on_immutable(void **state)
{
#ifdef HAVE_HOOKS
	agc_rm_result res;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/frozen", "f");
	t_writes("root/s/a", "a");
	t_writes("root/s/state.json", "{}");
	if (set_immutable(t_path("root/s/frozen"), true) < 0) {
		print_message("skipped: cannot set the immutable flag here (%s)\n", strerror(errno));
		skip();
	}
	snprintf(restore_immutable, sizeof(restore_immutable), "%s", t_path("root/s/frozen"));
	assert_int_equal(rm("s", "state.json", 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_PERM);
	assert_int_equal(res.err, EPERM);
	assert_true(t_exists("root/s/frozen"));
	assert_true(t_exists("root/s/state.json"));
	assert_false(t_exists("root/s/a"));
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: the immutable flag is probed through Linux ioctls\n");
	skip();
#endif
}

/* R3, R8: a tree deeper than the bound is not entered past it; the last child stays, nothing
 * crashes, no fd leaks, and the error says what the limit is, not strerror(ELOOP) (issue 6
 * item 18: it read "Too many levels of symbolic links"). Needs no privileges or hooks. */
static void test_remove_deep_600(void **state)
{
	agc_rm_result res;
	int before = count_fds();

	(void)state;
	t_mkdir("root/s");
	mkchain("root/s", 600);
	t_writes("root/s/state.json", "{}");
	t_writes("root/s/other", "o");
	assert_int_equal(rm("s", "state.json", 0, &res), -1);
	assert_int_equal(res.status, AGC_WALK_DEEP);
	assert_int_equal(res.err, 0);
	assert_non_null(strstr(agc_error_last(), ": directory tree deeper than 512 levels"));
	assert_null(strstr(agc_error_last(), "symbolic link"));
	assert_non_null(strstr(agc_error_last(), "cannot remove 's/d/d/d/"));
	assert_true(t_exists("root/s/d"));
	assert_true(t_exists("root/s/state.json"));
	assert_false(t_exists("root/s/other"));
	assert_int_equal(count_fds(), before);
	/* A dry run stops at the same place. */
	assert_int_equal(rm("s", NULL, AGC_RM_DRY_RUN, &res), -1);
	assert_int_equal(res.status, AGC_WALK_DEEP);
	assert_int_equal(count_fds(), before);
	assert_outside_intact();
}

/* R3: a 100-level tree is removed entirely. */
static void test_remove_deep_100(void **state)
{
	agc_rm_result res;
	int before = count_fds();

	(void)state;
	t_mkdir("root/s");
	mkchain("root/s", 100);
	assert_int_equal(rm("s", NULL, 0, &res), 0);
	assert_int_equal(res.files, 1);
	assert_int_equal(res.dirs, 101);
	assert_false(t_exists("root/s"));
	assert_int_equal(count_fds(), before);
	assert_outside_intact();
}

#ifdef HAVE_HOOKS
/* The child of test_remove_xdev, in its own mount namespace: 0 passed, 77 skipped, else the
 * number of the check that failed. */
static void count_visit(const struct stat *st, void *ud)
{
	(void)st;
	(*(int *)ud)++;
}

static int xdev_child(void)
{
	agc_rm_result res;
	uint64_t bytes;
	int64_t mt;
	int nvisit;
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int fd;

	if (unshare(CLONE_NEWNS) < 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return 77;
		fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "deny", 4) < 0)
				return 77;
			close(fd);
		}
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return 77;
		close(fd);
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return 77;
		close(fd);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mount("tmpfs", t_path("root/s/mnt"), "tmpfs", 0, "size=1m") < 0)
		return 77;
	fd = open(t_path("root/s/mnt/onmnt"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 1;
	close(fd);
	/* An fd opened before unshare still walks the old mount tree: open the root again. */
	close(rootfd);
	rootfd = agc_walk_open_root(t_path("root"));
	if (rootfd < 0)
		return 1;
	if (agc_remove_beneath(rootfd, "s", 0, 0, "state.json", 0, &res) != -1)
		return 2;
	if (res.status != AGC_WALK_MOUNT) {
		fprintf(stderr, "status %d: %s\n", (int)res.status, agc_error_last());
		return 3;
	}
	if (!t_exists("root/s/mnt/onmnt"))
		return 4;
	if (t_exists("root/s/f") || !t_exists("root/s/state.json"))
		return 5;
	if (!strstr(agc_error_last(), "'s/mnt': a mount point, not entered"))
		return 6;
	/* An artifact that is itself a mount point is not emptied. */
	if (mount("tmpfs", t_path("root/t"), "tmpfs", 0, "size=1m") < 0)
		return 7;
	fd = open(t_path("root/t/onmnt"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 8;
	close(fd);
	if (agc_remove_beneath(rootfd, "t", 0, 0, NULL, 0, &res) != -1 || res.status != AGC_WALK_MOUNT)
		return 9;
	if (!t_exists("root/t/onmnt"))
		return 10;
	/* A bind mount of a dir outside, same file system (same st_dev): not entered, not
	 * measured, not visited; a dry run says so too. */
	if (mount(t_path("out"), t_path("root/b/in/bound"), NULL, MS_BIND, NULL) < 0)
		return 77;
	if (agc_scan_measure(rootfd, "b", 0, NULL, NULL, &bytes, NULL, &mt) != 0 || bytes != 4)
		return 11;
	nvisit = 0;
	if (agc_scan_measure(rootfd, "b", 0, count_visit, &nvisit, &bytes, NULL, &mt) != 0 || nvisit != 2)
		return 12;
	if (agc_remove_beneath(rootfd, "b", 0, 0, NULL, AGC_RM_DRY_RUN, &res) != -1 ||
	    res.status != AGC_WALK_MOUNT)
		return 13;
	if (agc_remove_beneath(rootfd, "b", 0, 0, NULL, 0, &res) != -1 || res.status != AGC_WALK_MOUNT)
		return 14;
	if (!strstr(agc_error_last(), "'b/in/bound': a mount point, not entered"))
		return 15;
	if (!t_exists("out/sentinel") || !t_exists("out/sub/y") || t_exists("root/b/in/f"))
		return 16;
	/* An artifact dir that is itself a bind mount: not emptied, measures 0. */
	if (mount(t_path("out/sub"), t_path("root/c"), NULL, MS_BIND, NULL) < 0)
		return 77;
	if (agc_scan_measure(rootfd, "c", 0, NULL, NULL, &bytes, NULL, &mt) != 0 || bytes != 0)
		return 17;
	if (agc_remove_beneath(rootfd, "c", 0, 0, NULL, 0, &res) != -1 || res.status != AGC_WALK_MOUNT)
		return 18;
	if (!t_exists("out/sub/y"))
		return 19;
	/* A file bind-mounted over an artifact file, and over a file inside a dir artifact. */
	if (mount(t_path("out/x"), t_path("root/file"), NULL, MS_BIND, NULL) < 0 ||
	    mount(t_path("out/x"), t_path("root/d/file"), NULL, MS_BIND, NULL) < 0)
		return 77;
	if (agc_remove_beneath(rootfd, "file", 0, 0, NULL, 0, &res) != -1 ||
	    res.status != AGC_WALK_MOUNT)
		return 20;
	if (agc_scan_measure(rootfd, "d", 0, NULL, NULL, &bytes, NULL, &mt) != 0 || bytes != 1)
		return 21;
	if (agc_remove_beneath(rootfd, "d", 0, 0, NULL, 0, &res) != -1 || res.status != AGC_WALK_MOUNT)
		return 22;
	if (!t_exists("out/x") || t_exists("root/d/g"))
		return 23;
	return 0;
}
#endif

/* R3: a mount point inside the artifact is not entered: AGC_WALK_MOUNT, its contents survive,
 * the rest goes; an artifact that is a mount point is not emptied at all. A bind mount of a dir
 * of the same file system (same st_dev, issue 6 item 1) and a file bind mount are told too, and
 * neither is measured. Runs in a private mount namespace, so nothing stays mounted. */
static void test_remove_xdev(void **state)
{
#ifdef HAVE_HOOKS
	int status;
	pid_t pid;

	(void)state;
	t_mkdir("root/s");
	t_mkdir("root/s/mnt");
	t_mkdir("root/t");
	t_writes("root/s/f", "f");
	t_writes("root/s/state.json", "{}");
	t_mkdir("root/b");
	t_mkdir("root/b/in");
	t_mkdir("root/b/in/bound");
	t_writes("root/b/in/f", "four");
	t_mkdir("root/c");
	t_writes("root/file", "");
	t_mkdir("root/d");
	t_writes("root/d/file", "");
	t_writes("root/d/g", "g");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(xdev_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("skipped: cannot mount a tmpfs in a private mount namespace here\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(t_exists("root/s/f"));
	assert_true(t_exists("root/s/mnt"));
	assert_true(t_exists("root/t"));
	assert_outside_intact();
#else
	(void)state;
	print_message("skipped: needs Linux mount namespaces\n");
	skip();
#endif
}

/* Discovery and ls: size of regular files and newest mtime, links not followed. */
static void test_remove_measure(void **state)
{
	struct timespec ts[2];
	uint64_t bytes = 0;
	int64_t mtime = 0;

	(void)state;
	t_mkdir("root/s");
	t_writes("root/s/f1", "0123456789");
	t_mkdir("root/s/sub");
	t_writes("root/s/sub/f2", "01234567890123456789");
	t_symlink(t_path("out/x"), "root/s/tofile");
	t_symlink(t_path("out"), "root/s/todir");
	ts[0].tv_sec = ts[1].tv_sec = 4000000000LL;
	ts[0].tv_nsec = ts[1].tv_nsec = 123000000;
	/* The newest mtime is a directory's: directories count too. */
	assert_int_equal(utimensat(AT_FDCWD, t_path("root/s/sub"), ts, 0), 0);
	assert_int_equal(agc_scan_measure(rootfd, "s", 0, NULL, NULL, &bytes, NULL, &mtime), 0);
	assert_int_equal(bytes, 30);
	assert_int_equal(mtime, 4000000000123LL);
	assert_true(t_exists("root/s/f1"));
	assert_true(t_exists("root/s/tofile"));
	/* A file leaf, a link leaf (not followed). */
	assert_int_equal(agc_scan_measure(rootfd, "s/f1", 0, NULL, NULL, &bytes, NULL, &mtime), 0);
	assert_int_equal(bytes, 10);
	assert_int_equal(agc_scan_measure(rootfd, "s/todir", 0, NULL, NULL, &bytes, NULL, &mtime), 0);
	assert_int_equal(bytes, 0);
	assert_outside_intact();
}

/* R8: a measurement stops after max_entries entries. */
static void test_remove_measure_max_entries(void **state)
{
	char name[64];
	uint64_t bytes = 0;
	int64_t mtime = 0;
	int i;

	(void)state;
	t_mkdir("root/s");
	for (i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "root/s/f%02d", i);
		t_writes(name, "x");
	}
	assert_int_equal(agc_scan_measure(rootfd, "s", 10, NULL, NULL, &bytes, NULL, &mtime), 0);
	assert_true(bytes >= 1 && bytes <= 10);
	assert_int_equal(agc_scan_measure(rootfd, "s", 0, NULL, NULL, &bytes, NULL, &mtime), 0);
	assert_int_equal(bytes, 50);
}

/* R2: measure reaches its leaf the same way: a missing leaf is AGC_ENOTFOUND, a symlink on
 * the way is refused. */
static void test_remove_measure_refused(void **state)
{
	uint64_t bytes = 7;
	int64_t mtime = 7;

	(void)state;
	t_symlink(t_path("out"), "root/a");
	assert_int_equal(agc_scan_measure(rootfd, "nope", 0, NULL, NULL, &bytes, NULL, &mtime), AGC_ENOTFOUND);
	assert_int_equal(agc_scan_measure(rootfd, "a/sub", 0, NULL, NULL, &bytes, NULL, &mtime), -1);
	assert_int_equal(agc_scan_measure(rootfd, "../out", 0, NULL, NULL, &bytes, NULL, &mtime), -1);
	assert_int_equal(bytes, 7);
	assert_int_equal(mtime, 7);
	assert_outside_intact();
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_remove_plain_file),
		T(test_remove_tree),
		T(test_remove_nested_rel),
		T(test_remove_intermediate_symlink),
		T(test_remove_intermediate_notdir),
		T(test_remove_leaf_symlink_dir),
		T(test_remove_leaf_symlink_file),
		T(test_remove_dangling_leaf),
		T(test_remove_link_to_slash_inside),
		T(test_remove_symlink_loop),
		T(test_remove_expect_mismatch),
		T(test_remove_expect_match),
		T(test_remove_swapped_for_link),
		T(test_remove_swapped_for_dir),
		T(test_remove_swapped_mid_run_link),
		T(test_remove_swapped_mid_run_dir),
		T(test_remove_swapped_mid_run_top),
		T(test_remove_rel_invalid),
		T(test_remove_dry_run),
		T(test_remove_enoent),
		T(test_remove_last_all_go),
		T(test_remove_last_order),
		T(test_remove_last_kept_on_failure),
		T(test_remove_busy_subdir),
		T(test_remove_last_kept_on_mode),
		T(test_remove_last_kept_on_immutable),
		T(test_remove_deep_600),
		T(test_remove_deep_100),
		T(test_remove_xdev),
		T(test_remove_measure),
		T(test_remove_measure_max_entries),
		T(test_remove_measure_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
