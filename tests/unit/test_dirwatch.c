/* Unit tests of dirwatch.c: a mark of a listed dir goes stale with every change of its entries
 * or of the dir itself, and stays good while nothing changes. Everything happens in a fresh
 * directory under $TMPDIR (agc_test.h). Where that file system is not one the watch trusts
 * (dirwatch.h), the tests say so and are skipped: the callers then keep their own checks. */
#include <fcntl.h>
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

#include "dirwatch.h"

static agc_dirwatch *w;

static int setup(void **state)
{
	(void)state;
	if (t_setup_dir("dirwatch") < 0)
		return -1;
	t_mkdir("d");
	t_writes("d/a", "a");
	w = agc_dirwatch_new();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	agc_dirwatch_free(w);
	w = NULL;
	return t_teardown_dir();
}

/* A mark of t_dir/d made as a listing would make it; skips the test where none can be. */
static agc_dirmark mark_d(void)
{
	agc_dirmark m;
	int fd = open(t_path("d"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok;

	assert_true(fd >= 0);
	ok = agc_dirwatch_mark(w, fd, &m);
	close(fd);
	if (!ok) {
		print_message("no watch for %s (no inotify, or a file system it may miss changes of)\n",
			      t_path("d"));
		skip();
	}
	return m;
}

static void test_dirwatch_unchanged(void **state)
{
	agc_dirmark m = mark_d();

	(void)state;
	agc_dirwatch_poll(w);
	assert_true(agc_dirwatch_same(w, &m));
	/* what happens beneath an entry, or to an entry's content, is not the listing's */
	t_mkdir("d/sub");
	m = mark_d();
	t_writes("d/sub/deep", "x");
	t_writes("d/a", "changed");
	agc_dirwatch_poll(w);
	assert_true(agc_dirwatch_same(w, &m));
}

/* Each change of a listing's names or of the dir: the mark goes stale, and a new mark made
 * after it is good again. */
static void test_dirwatch_changes(void **state)
{
	static const char *const step[] = {"create", "remove", "rename", "mkdir", "chmod", "link"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
		agc_dirmark m = mark_d();

		if (strcmp(step[i], "create") == 0)
			t_writes("d/b", "b");
		else if (strcmp(step[i], "remove") == 0)
			assert_int_equal(unlink(t_path("d/b")), 0);
		else if (strcmp(step[i], "rename") == 0)
			assert_int_equal(rename(t_path("d/a"), t_path("d/c")), 0);
		else if (strcmp(step[i], "mkdir") == 0)
			t_mkdir("d/e");
		else if (strcmp(step[i], "chmod") == 0)
			assert_int_equal(chmod(t_path("d"), 0700), 0);
		else
			assert_int_equal(symlink("c", t_path("d/l")), 0);
		agc_dirwatch_poll(w);
		if (agc_dirwatch_same(w, &m))
			fail_msg("a mark stayed good after: %s", step[i]);
		m = mark_d();
		agc_dirwatch_poll(w);
		assert_true(agc_dirwatch_same(w, &m));
	}
}

/* The dir moved or removed: its mark is stale (the name now leads elsewhere, or nowhere). */
static void test_dirwatch_dir_gone(void **state)
{
	agc_dirmark m = mark_d();

	(void)state;
	assert_int_equal(rename(t_path("d"), t_path("moved")), 0);
	agc_dirwatch_poll(w);
	assert_false(agc_dirwatch_same(w, &m));
	assert_int_equal(rename(t_path("moved"), t_path("d")), 0);
	m = mark_d();
	assert_int_equal(unlink(t_path("d/a")), 0);
	assert_int_equal(rmdir(t_path("d")), 0);
	agc_dirwatch_poll(w);
	assert_false(agc_dirwatch_same(w, &m));
	t_mkdir("d");
}

/* Changes are counted at a poll: before it, a same() answers for what the last poll saw. */
static void test_dirwatch_poll(void **state)
{
	agc_dirmark m = mark_d();

	(void)state;
	t_writes("d/b", "b");
	assert_true(agc_dirwatch_same(w, &m));
	agc_dirwatch_poll(w);
	assert_false(agc_dirwatch_same(w, &m));
}

/* No watch (NULL): nothing is marked, nothing is the same. */
static void test_dirwatch_none(void **state)
{
	agc_dirmark m = {0};
	int fd = open(t_path("d"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_false(agc_dirwatch_mark(NULL, fd, &m));
	close(fd);
	agc_dirwatch_poll(NULL);
	assert_false(agc_dirwatch_same(NULL, &m));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_dirwatch_unchanged),
		T(test_dirwatch_changes),
		T(test_dirwatch_dir_gone),
		T(test_dirwatch_poll),
		T(test_dirwatch_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
