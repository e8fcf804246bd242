/* Unit tests of scan.c, the read-only scanner (SPEC R2, R3, R8): sizes and visits of a tree,
 * links never followed, a FIFO or a device never opened, a mount point never entered, a dir
 * replaced between the look and the open not entered, the bounds on entries and depth.
 * Everything happens in a fresh directory under $TMPDIR (agc_test.h): t_dir/root is the root,
 * t_dir/out lies outside. On Linux this file defines openat, which the scanner linked into this program calls
 * instead of libc's: it passes through to the system call, and lets a test swap a directory
 * for another at the moment it is opened, and see every name opened. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __linux__
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#define HAVE_HOOKS 1
#endif

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "scan.h"

static int rootfd = -1;

/* ---- hooks --------------------------------------------------------------------------- */

#ifdef HAVE_HOOKS
static const char *hook_swap_name; /* openat of this name swaps it for out/big first (once) */
static const char *hook_watch;     /* openat of a name this holds counts in hook_opened */
static int hook_opened;

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (hook_watch && strstr(path, hook_watch))
		hook_opened++;
	if (hook_swap_name && strcmp(path, hook_swap_name) == 0) {
		char gone[PATH_MAX];

		hook_swap_name = NULL;
		/* the dir looked at moves away, another takes its name */
		snprintf(gone, sizeof(gone), "%s.gone", path);
		if (renameat(dirfd, path, dirfd, gone) < 0 || rename(t_path("out/big"), t_path("root/t/swap")) < 0)
			abort();
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}
#endif

static void hooks_reset(void)
{
#ifdef HAVE_HOOKS
	hook_swap_name = NULL;
	hook_watch = NULL;
	hook_opened = 0;
#endif
}

/* ---- helpers ------------------------------------------------------------------------- */

static void mkf(const char *rel, size_t size)
{
	int fd = open(t_path(rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	char buf[4096];

	assert_true(fd >= 0);
	memset(buf, 'x', sizeof(buf));
	while (size) {
		size_t n = size < sizeof(buf) ? size : sizeof(buf);

		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		size -= n;
	}
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	hooks_reset();
	if (t_setup_dir("scan") < 0)
		return -1;
	if (mkdir(t_path("root"), 0700) < 0 || mkdir(t_path("out"), 0700) < 0)
		return -1;
	rootfd = agc_walk_open_root(t_path("root"));
	return rootfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	hooks_reset();
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
	return t_teardown_dir();
}

typedef struct seen {
	int files, dirs, other;
	uint64_t bytes;
} seen;

static void count_visit(const struct stat *st, void *ud)
{
	seen *s = ud;

	if (S_ISREG(st->st_mode)) {
		s->files++;
		s->bytes += (uint64_t)st->st_size;
	} else if (S_ISDIR(st->st_mode)) {
		s->dirs++;
	} else {
		s->other++;
	}
}

static int measure(const char *rel, uint64_t max, seen *s, uint64_t *bytes, uint64_t *disk)
{
	int64_t mt = 0;

	if (s)
		memset(s, 0, sizeof(*s));
	return agc_scan_measure(rootfd, rel, max, s ? count_visit : NULL, s, bytes, disk, &mt);
}

/* ---- tests ----------------------------------------------------------------------------- */

/* Sizes of a tree: st_size of regular files, st_blocks x 512 of every entry and the dir
 * itself, every entry inside visited once with what an lstat gives; the newest mtime. */
static void test_scan_tree(void **state)
{
	struct stat a, b, d, t;
	struct timespec ts[2] = {{0, UTIME_OMIT}, {2000000000, 5000000}};
	uint64_t bytes, disk;
	int64_t mt = 0;
	seen s;

	(void)state;
	t_mkdir("root/t");
	t_mkdir("root/t/d");
	mkf("root/t/a", 100);
	mkf("root/t/d/b", 5000);
	assert_int_equal(utimensat(AT_FDCWD, t_path("root/t/d/b"), ts, 0), 0);
	assert_int_equal(measure("t", 0, &s, &bytes, &disk), 0);
	assert_int_equal(bytes, 5100);
	assert_int_equal(s.files, 2);
	assert_int_equal(s.dirs, 1);
	assert_int_equal(s.bytes, 5100);
	assert_int_equal(lstat(t_path("root/t"), &t), 0);
	assert_int_equal(lstat(t_path("root/t/a"), &a), 0);
	assert_int_equal(lstat(t_path("root/t/d"), &d), 0);
	assert_int_equal(lstat(t_path("root/t/d/b"), &b), 0);
	assert_int_equal(disk, (uint64_t)(t.st_blocks + a.st_blocks + d.st_blocks + b.st_blocks) * 512);
	assert_int_equal(agc_scan_measure(rootfd, "t", 0, NULL, NULL, NULL, NULL, &mt), 0);
	assert_int_equal(mt, (int64_t)2000000000 * 1000 + 5);
	/* a file measures itself */
	assert_int_equal(measure("t/a", 0, NULL, &bytes, &disk), 0);
	assert_int_equal(bytes, 100);
	assert_int_equal(measure("nope", 0, NULL, &bytes, &disk), AGC_ENOTFOUND);
}

/* R2: links inside are counted as links (no bytes, the target never looked at); a link on
 * the way to the artifact refuses the measurement; a leaf link measures as a link. */
static void test_scan_links(void **state)
{
	seen s;
	uint64_t bytes, disk;

	(void)state;
	mkf("out/big", 1 << 20);
	t_mkdir("out/dir");
	mkf("out/dir/f", 1 << 16);
	t_mkdir("root/t");
	mkf("root/t/f", 10);
	assert_int_equal(symlink(t_path("out/big"), t_path("root/t/tofile")), 0);
	assert_int_equal(symlink(t_path("out/dir"), t_path("root/t/todir")), 0);
	assert_int_equal(symlink("/", t_path("root/t/toslash")), 0);
	assert_int_equal(symlink("loop", t_path("root/t/loop")), 0);
	assert_int_equal(measure("t", 0, &s, &bytes, &disk), 0);
	assert_int_equal(bytes, 10);
	assert_int_equal(s.files, 1);
	assert_int_equal(s.dirs, 0);
	assert_int_equal(s.other, 4);
	assert_int_equal(symlink(t_path("out"), t_path("root/via")), 0);
	assert_int_equal(measure("via/dir", 0, &s, &bytes, &disk), -1);
	assert_int_equal(s.files, 0);
	assert_int_equal(measure("t/todir", 0, &s, &bytes, &disk), 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(s.files + s.dirs, 0);
}

/* R8: a FIFO and a device inside are looked at, never opened (opening the FIFO would block:
 * the alarm ends the test), and count no bytes. */
static void test_scan_fifo_device(void **state)
{
	uint64_t bytes, disk;
	seen s;

	(void)state;
	t_mkdir("root/t");
	mkf("root/t/f", 3);
	assert_int_equal(mkfifo(t_path("root/t/fifo"), 0600), 0);
	if (mknod(t_path("root/t/null"), S_IFCHR | 0600, makedev(1, 3)) < 0)
		mkf("root/t/null", 0); /* not root: a plain file in its place */
#ifdef HAVE_HOOKS
	hook_watch = "fifo";
#endif
	alarm(10);
	assert_int_equal(measure("t", 0, &s, &bytes, &disk), 0);
	alarm(0);
	assert_int_equal(bytes, 3);
	assert_true(s.other >= 1);
#ifdef HAVE_HOOKS
	assert_int_equal(hook_opened, 0);
#endif
}

/* R3: a dir replaced by another between the look and the open is not entered: what lies in
 * the one that took its name is not counted. */
static void test_scan_swapped_dir(void **state)
{
#ifdef HAVE_HOOKS
	uint64_t bytes, disk;
	seen s;

	(void)state;
	t_mkdir("root/t");
	t_mkdir("root/t/swap");
	mkf("root/t/swap/small", 1);
	t_mkdir("out/big");
	mkf("out/big/f", 1 << 20);
	hook_swap_name = "swap";
	assert_int_equal(measure("t", 0, &s, &bytes, &disk), 0);
	assert_null(hook_swap_name); /* the swap happened */
	assert_true(bytes < (1 << 20));
	assert_true(s.bytes < (1 << 20));
#else
	(void)state;
	skip();
#endif
}

/* R8: at most max_entries entries, and AGC_SCAN_MAX_DEPTH levels: a deeper tree is measured
 * down to the bound, with one fd a level. */
static void test_scan_bounds(void **state)
{
	uint64_t bytes, disk;
	seen s;
	int i, fd, next;

	(void)state;
	t_mkdir("root/t");
	for (i = 0; i < 50; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "root/t/f%02d", i);
		mkf(rel, 1);
	}
	assert_int_equal(measure("t", 10, &s, &bytes, &disk), 0);
	assert_int_equal(bytes, 10);
	assert_int_equal(measure("t", 0, &s, &bytes, &disk), 0);
	assert_int_equal(bytes, 50);
	/* a chain of 600 dirs with a file at the bottom */
	t_mkdir("root/deep");
	fd = open(t_path("root/deep"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (i = 0; i < 600; i++) {
		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	next = openat(fd, "leaf", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(next >= 0);
	assert_int_equal(write(next, "x", 1), 1);
	close(next);
	close(fd);
	assert_int_equal(measure("deep", 0, &s, &bytes, &disk), 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(s.dirs, AGC_SCAN_MAX_DEPTH);
}

#ifdef HAVE_HOOKS
static int mount_child(void)
{
	uint64_t bytes, disk;
	seen s;
	int fd;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mount("tmpfs", t_path("root/t/mnt"), "tmpfs", 0, "size=4m") < 0)
		return 77;
	fd = open(t_path("root/t/mnt/onmnt"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 1 << 20) < 0)
		return 1;
	close(fd);
	if (mount(t_path("out"), t_path("root/t/bound"), NULL, MS_BIND, NULL) < 0)
		return 77;
	close(rootfd);
	rootfd = agc_walk_open_root(t_path("root"));
	/* neither the tmpfs nor the bind mount of a dir of the same file system is entered,
	 * measured or visited */
	if (measure("t", 0, &s, &bytes, &disk) != 0)
		return 2;
	if (bytes != 7 || s.files != 1 || s.dirs != 0)
		return 3;
	/* an artifact that is itself a mount point measures 0 */
	if (measure("t/mnt", 0, &s, &bytes, &disk) != 0 || bytes != 0 || s.files != 0)
		return 4;
	if (measure("t/bound", 0, &s, &bytes, &disk) != 0 || bytes != 0 || s.files != 0)
		return 5;
	/* the same with the caller's lstat: told on the opened fd */
	{
		struct stat st;
		int pfd = open(t_path("root/t"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (pfd < 0 || fstatat(pfd, "bound", &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 6;
		memset(&s, 0, sizeof(s));
		if (agc_scan_size_in(pfd, "bound", &st, 0, count_visit, &s, &bytes, &disk, NULL) != 0 ||
		    bytes != 0 || s.files != 0)
			return 7;
		close(pfd);
	}
	return 0;
}
#endif

/* R3: a mount point inside is never entered, even a bind mount of the same file system (same
 * st_dev); an artifact that is one measures 0. In a private mount namespace. */
static void test_scan_mounts(void **state)
{
#ifdef HAVE_HOOKS
	int status;
	pid_t pid;

	(void)state;
	t_mkdir("root/t");
	t_mkdir("root/t/mnt");
	t_mkdir("root/t/bound");
	mkf("root/t/f", 7);
	mkf("out/outside", 1 << 16);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(mount_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("skipped: cannot mount in a private mount namespace here\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
#else
	(void)state;
	skip();
#endif
}

/* The mount check of an fd: an ordinary dir is no mount point, and its (dev, ino) come with
 * the answer. */
static void test_scan_fd_mount(void **state)
{
	struct stat st, id;
	int fd;

	(void)state;
	t_mkdir("root/t");
	fd = open(t_path("root/t"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(agc_scan_fd_mount(fd, rootfd, &id), AGC_MNT_NO);
	assert_true(id.st_dev == st.st_dev && id.st_ino == st.st_ino);
	close(fd);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_scan_tree),
		T(test_scan_links),
		T(test_scan_fifo_device),
		T(test_scan_swapped_dir),
		T(test_scan_bounds),
		T(test_scan_mounts),
		T(test_scan_fd_mount),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
