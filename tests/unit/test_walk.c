/* Unit tests of walk.c: reaching a path beneath a root one component at a time (SPEC R2).
 * Everything happens inside a fresh directory under $TMPDIR (agc_test.h): t_dir/root is the
 * root, t_dir/out lies outside it and must survive every test. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "walk.h"

static int rootfd = -1;
static char restore_mode[4][PATH_MAX]; /* dirs a test made unreadable, made 0700 again */

static int count_fds(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			n++;
	return n;
}

static bool same_dir(int fd, const char *rel)
{
	struct stat a, b;

	if (fstat(fd, &a) < 0 || lstat(t_path(rel), &b) < 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int setup(void **state)
{
	(void)state;
	memset(restore_mode, 0, sizeof(restore_mode));
	if (t_setup_dir("walk") < 0)
		return -1;
	if (mkdir(t_path("root"), 0700) < 0 || mkdir(t_path("out"), 0700) < 0)
		return -1;
	rootfd = agc_walk_open_root(t_path("root"));
	if (rootfd < 0)
		return -1;
	/* What lies outside the root; every test checks it survives. */
	t_writes("out/sentinel", "keep");
	t_writes("out/x", "outside");
	return 0;
}

static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		if (restore_mode[i][0])
			chmod(restore_mode[i], 0700);
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
	return t_teardown_dir();
}

static void assert_outside_intact(void)
{
	assert_true(t_exists("out"));
	assert_true(t_exists("out/sentinel"));
	assert_true(t_exists("out/x"));
}

/* R2: what a clean relative path is; anything else never reaches the file system. */
static void test_walk_rel_ok(void **state)
{
	static const char *good[] = {"a", "a/b", "a/b/c.jsonl", ".hidden", "..x", "x..", "...",
				     "a b/ü"};
	static const char *bad[] = {"", "/abs", "/", "a/../b", "a//b", ".", "..", "a/./b", "a/",
				    "../x", "x/..", "./x", "a\x01" "b", "a/b\x7f", "\n", "x\ty"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(agc_walk_rel_ok(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(agc_walk_rel_ok(bad[i]));
	assert_false(agc_walk_rel_ok(NULL));
}

/* R2: the parent of a nested path is opened and the leaf points into rel. */
static void test_walk_parent_ok(void **state)
{
	const char *rel = "a/b/c.jsonl", *leaf = NULL;
	int fd = -1, err = -1, before = count_fds();

	(void)state;
	t_mkdir("root/a");
	t_mkdir("root/a/b");
	t_writes("root/a/b/c.jsonl", "x");
	assert_int_equal(agc_walk_parent(rootfd, rel, &fd, &leaf, &err), AGC_WALK_OK);
	assert_int_equal(err, 0);
	assert_true(same_dir(fd, "root/a/b"));
	assert_ptr_equal(leaf, rel + 4);
	close(fd);
	/* Only the returned fd was left open: every intermediate one was closed. */
	assert_int_equal(count_fds(), before);
}

/* R2: a one-component path has the root as parent, returned as an fd of its own. */
static void test_walk_parent_single(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = -1;

	(void)state;
	assert_int_equal(agc_walk_parent(rootfd, "f", &fd, &leaf, &err), AGC_WALK_OK);
	assert_true(fd >= 0 && fd != rootfd);
	assert_true(same_dir(fd, "root"));
	assert_string_equal(leaf, "f");
	close(fd);
}

/* R2: an intermediate symlink to a directory outside is never followed. */
static void test_walk_parent_symlink_dir(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = 0, before = count_fds();

	(void)state;
	t_symlink(t_path("out"), "root/a");
	assert_int_equal(agc_walk_parent(rootfd, "a/x", &fd, &leaf, &err), AGC_WALK_SYMLINK);
	assert_int_equal(fd, -1);
	assert_int_not_equal(err, 0);
	assert_int_equal(count_fds(), before);
	assert_outside_intact();
}

/* R2: a relative link ("../out") deeper in the path is refused the same way, and the
 * intermediate fds opened before it are closed. */
static void test_walk_parent_symlink_deep(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = 0, before = count_fds();

	(void)state;
	t_mkdir("root/a");
	t_mkdir("root/a/b");
	t_symlink("../../../out", "root/a/b/c");
	assert_int_equal(agc_walk_parent(rootfd, "a/b/c/x", &fd, &leaf, &err), AGC_WALK_SYMLINK);
	assert_int_equal(fd, -1);
	assert_int_equal(count_fds(), before);
	assert_outside_intact();
}

/* R2: a link to a file on the way is a symlink, not merely "not a directory". */
static void test_walk_parent_symlink_file(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = 0;

	(void)state;
	t_symlink(t_path("out/x"), "root/a");
	assert_int_equal(agc_walk_parent(rootfd, "a/y", &fd, &leaf, &err), AGC_WALK_SYMLINK);
	assert_int_equal(fd, -1);
	assert_outside_intact();
}

/* R2: a dangling link on the way is a symlink too. */
static void test_walk_parent_symlink_dangling(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = 0;

	(void)state;
	t_symlink(t_path("out/nothing"), "root/a");
	assert_int_equal(agc_walk_parent(rootfd, "a/y", &fd, &leaf, &err), AGC_WALK_SYMLINK);
	assert_int_equal(fd, -1);
	assert_false(t_exists("out/nothing"));
}

/* R2: a regular file on the way is reported as not a directory. */
static void test_walk_parent_notdir(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = 0, before = count_fds();

	(void)state;
	t_mkdir("root/a");
	t_writes("root/a/f", "x");
	assert_int_equal(agc_walk_parent(rootfd, "a/f/x", &fd, &leaf, &err), AGC_WALK_NOTDIR);
	assert_int_equal(err, ENOTDIR);
	assert_int_equal(fd, -1);
	assert_int_equal(count_fds(), before);
}

/* R2: a missing component is ENOENT, with nothing left open. */
static void test_walk_parent_enoent(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = 0, before = count_fds();

	(void)state;
	t_mkdir("root/a");
	assert_int_equal(agc_walk_parent(rootfd, "nope/x", &fd, &leaf, &err), AGC_WALK_ENOENT);
	assert_int_equal(err, ENOENT);
	assert_int_equal(agc_walk_parent(rootfd, "a/nope/x", &fd, &leaf, &err), AGC_WALK_ENOENT);
	assert_int_equal(fd, -1);
	assert_int_equal(count_fds(), before);
}

/* R2: a directory that cannot be searched is a permission failure (modes bind non-root only). */
static void test_walk_parent_perm(void **state)
{
	const char *leaf = NULL;
	int fd = -1, err = 0;

	(void)state;
	if (geteuid() == 0) {
		print_message("skipped: running as root, which ignores directory modes\n");
		skip();
	}
	t_mkdir("root/locked");
	t_mkdir("root/locked/sub");
	snprintf(restore_mode[0], PATH_MAX, "%s", t_path("root/locked"));
	assert_int_equal(chmod(t_path("root/locked"), 0), 0);
	assert_int_equal(agc_walk_parent(rootfd, "locked/sub/x", &fd, &leaf, &err), AGC_WALK_PERM);
	assert_int_equal(err, EACCES);
	assert_int_equal(fd, -1);
}

/* R2: a path that is not clean is refused before any open (EINVAL), whatever exists. */
static void test_walk_parent_invalid(void **state)
{
	static const char *bad[] = {"", "/abs", "a/../b", "a//b", ".", "..", "a/./b", "../out/x",
				    "a\x01" "b", "a/"};
	const char *leaf;
	size_t i;
	int fd, err, before = count_fds();

	(void)state;
	t_mkdir("root/a");
	t_mkdir("root/b");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = -1;
		err = 0;
		assert_int_equal(agc_walk_parent(rootfd, bad[i], &fd, &leaf, &err), AGC_WALK_ERROR);
		assert_int_equal(err, EINVAL);
		assert_int_equal(fd, -1);
		fd = -1;
		err = 0;
		/* "" and "." are the root itself for open_dir. */
		if (strcmp(bad[i], "") != 0 && strcmp(bad[i], ".") != 0) {
			assert_int_equal(agc_walk_open_dir(rootfd, bad[i], &fd, &err), AGC_WALK_ERROR);
			assert_int_equal(err, EINVAL);
			assert_int_equal(fd, -1);
		}
	}
	assert_int_equal(count_fds(), before);
}

/* A component longer than any name is refused without being copied anywhere. */
static void test_walk_parent_name_too_long(void **state)
{
	char rel[600];
	const char *leaf;
	int fd = -1, err = 0;

	(void)state;
	memset(rel, 'a', 400);
	snprintf(rel + 400, sizeof(rel) - 400, "/x");
	assert_int_equal(agc_walk_parent(rootfd, rel, &fd, &leaf, &err), AGC_WALK_ERROR);
	assert_int_equal(err, ENAMETOOLONG);
	assert_int_equal(fd, -1);
}

/* R2: open_dir opens every component, the leaf included, without following links. */
static void test_walk_open_dir_ok(void **state)
{
	int fd = -1, err = -1, before = count_fds();

	(void)state;
	t_mkdir("root/a");
	t_mkdir("root/a/b");
	assert_int_equal(agc_walk_open_dir(rootfd, "a/b", &fd, &err), AGC_WALK_OK);
	assert_int_equal(err, 0);
	assert_true(same_dir(fd, "root/a/b"));
	close(fd);
	assert_int_equal(count_fds(), before);
}

/* R2: "" and "." name the root itself, given back as a dup the caller closes. */
static void test_walk_open_dir_root(void **state)
{
	int fd = -1, err = -1;

	(void)state;
	assert_int_equal(agc_walk_open_dir(rootfd, "", &fd, &err), AGC_WALK_OK);
	assert_true(fd >= 0 && fd != rootfd);
	assert_true(same_dir(fd, "root"));
	close(fd);
	fd = -1;
	assert_int_equal(agc_walk_open_dir(rootfd, ".", &fd, &err), AGC_WALK_OK);
	assert_true(fd >= 0 && fd != rootfd);
	assert_true(same_dir(fd, "root"));
	close(fd);
}

/* R2: a symlink as the leaf of open_dir is not followed, whether it points to a directory,
 * a file or nowhere. */
static void test_walk_open_dir_leaf_symlink(void **state)
{
	int fd = -1, err = 0;

	(void)state;
	t_mkdir("root/a");
	t_symlink(t_path("out"), "root/a/todir");
	t_symlink(t_path("out/x"), "root/a/tofile");
	t_symlink("nowhere", "root/a/dangling");
	assert_int_equal(agc_walk_open_dir(rootfd, "a/todir", &fd, &err), AGC_WALK_SYMLINK);
	assert_int_equal(agc_walk_open_dir(rootfd, "a/tofile", &fd, &err), AGC_WALK_SYMLINK);
	assert_int_equal(agc_walk_open_dir(rootfd, "a/dangling", &fd, &err), AGC_WALK_SYMLINK);
	assert_int_equal(fd, -1);
	assert_outside_intact();
}

/* R2: a file as the leaf of open_dir is not a directory. */
static void test_walk_open_dir_leaf_file(void **state)
{
	int fd = -1, err = 0;

	(void)state;
	t_writes("root/f", "x");
	assert_int_equal(agc_walk_open_dir(rootfd, "f", &fd, &err), AGC_WALK_NOTDIR);
	assert_int_equal(err, ENOTDIR);
	assert_int_equal(fd, -1);
}

/* R2: the root may itself be a symlink (/tmp -> /private/tmp); it is resolved once. A
 * relative or missing root is refused with a message. */
static void test_walk_open_root(void **state)
{
	int fd;

	(void)state;
	t_symlink(t_path("root"), "rootlink");
	fd = agc_walk_open_root(t_path("rootlink"));
	assert_true(fd >= 0);
	assert_true(same_dir(fd, "root"));
	close(fd);
	assert_int_equal(agc_walk_open_root("relative/root"), -1);
	assert_non_null(strstr(agc_error_last(), "relative/root"));
	assert_int_equal(agc_walk_open_root(t_path("missing")), -1);
	assert_non_null(strstr(agc_error_last(), "cannot open root"));
	assert_int_equal(agc_walk_open_root(NULL), -1);
}

/* R7: the reason words reports use for a residual. */
static void test_walk_status_name(void **state)
{
	int st;

	(void)state;
	assert_string_equal(agc_walk_status_name(AGC_WALK_SYMLINK), "symlink");
	assert_string_equal(agc_walk_status_name(AGC_WALK_PERM), "permission");
	assert_string_equal(agc_walk_status_name(AGC_WALK_ERROR), "error");
	for (st = AGC_WALK_OK; st <= AGC_WALK_ERROR; st++) {
		assert_non_null(agc_walk_status_name((agc_walk_status)st));
		assert_true(strlen(agc_walk_status_name((agc_walk_status)st)) > 0);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_walk_rel_ok),
		T(test_walk_parent_ok),
		T(test_walk_parent_single),
		T(test_walk_parent_symlink_dir),
		T(test_walk_parent_symlink_deep),
		T(test_walk_parent_symlink_file),
		T(test_walk_parent_symlink_dangling),
		T(test_walk_parent_notdir),
		T(test_walk_parent_enoent),
		T(test_walk_parent_perm),
		T(test_walk_parent_invalid),
		T(test_walk_parent_name_too_long),
		T(test_walk_open_dir_ok),
		T(test_walk_open_dir_root),
		T(test_walk_open_dir_leaf_symlink),
		T(test_walk_open_dir_leaf_file),
		T(test_walk_open_root),
		T(test_walk_status_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
