/* Helpers every unit test shares: one fixture directory per test, made fresh under $TMPDIR
 * (never the real home, never the shared /tmp: the sealed runner, scripts/test-sealed.sh,
 * gives each suite a TMPDIR of its own) and removed with everything in it at teardown, and
 * the small file operations the tests build their trees with. Include it after <cmocka.h>.
 * Paths given as rel are relative to the fixture directory, t_dir. */
#ifndef AGC_TEST_H
#define AGC_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The fixture directory of the running test (its real path), "" when none. */
static char t_dir[PATH_MAX];

/* Make t_dir, a fresh "agc-test-<name>-XXXXXX" under $TMPDIR. Returns 0, or -1 when TMPDIR is
 * not an absolute path (no fallback to /tmp: a test must not touch what is not its own) or the
 * directory cannot be made. */
static inline int t_setup_dir(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	char raw[PATH_MAX];

	t_dir[0] = '\0';
	if (!tmp || tmp[0] != '/') {
		fprintf(stderr, "TMPDIR must be an absolute path for the unit tests\n");
		return -1;
	}
	if (snprintf(raw, sizeof(raw), "%s/agc-test-%s-XXXXXX", tmp, name) >= (int)sizeof(raw))
		return -1;
	if (!mkdtemp(raw) || !realpath(raw, t_dir)) {
		t_dir[0] = '\0';
		return -1;
	}
	return 0;
}

/* Remove the entry name of the dir fd at (borrowed) and everything below it: links are removed, never
 * followed; a dir on another mount (st_dev differs from dev) is left; a dir a test made
 * unreadable is made 0700 first. Returns 0 or -1. */
static inline int t_rm_at(int at, const char *name, dev_t dev)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0) == 0 || errno == ENOENT ? 0 : -1;
	if (st.st_dev != dev)
		return -1;
	if ((st.st_mode & 0700) != 0700)
		fchmodat(at, name, 0700, 0);
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    t_rm_at(dirfd(d), e->d_name, dev) < 0)
			rc = -1;
	closedir(d);
	if (unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

/* Remove t_dir with everything in it (as t_rm_at). Returns 0 or -1. */
static inline int t_teardown_dir(void)
{
	struct stat st;
	int rc;

	if (!t_dir[0])
		return 0;
	if (lstat(t_dir, &st) < 0)
		return -1;
	rc = t_rm_at(AT_FDCWD, t_dir, st.st_dev);
	t_dir[0] = '\0';
	return rc;
}

/* t_dir/rel, in one of a few rotating buffers (two or three results may be used in one call). */
static inline const char *t_path(const char *rel)
{
	static char bufs[8][PATH_MAX];
	static unsigned n;
	char *b = bufs[n++ % 8];

	/* Test paths are short; a truncated one would name something else. */
	if (snprintf(b, PATH_MAX, "%s/%s", t_dir, rel) >= PATH_MAX)
		abort();
	return b;
}

/* t_path of a printf format. */
static inline const char *t_pathf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline const char *t_pathf(const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		abort();
	return t_path(rel);
}

/* Make the dir rel (mode 0700); it must not exist. */
static inline void t_mkdir(const char *rel)
{
	assert_int_equal(mkdir(t_path(rel), 0700), 0);
}

/* Make the dir rel and every missing dir above it (mkdir -p) with mode. */
static inline void t_mkdir_p(const char *rel, mode_t mode)
{
	char path[PATH_MAX], *s;
	size_t skip = strlen(t_dir) + 1;

	snprintf(path, sizeof(path), "%s", t_path(rel));
	for (s = strchr(path + skip, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, mode) < 0)
			assert_int_equal(errno, EEXIST);
		*s = '/';
	}
	if (mkdir(path, mode) < 0)
		assert_int_equal(errno, EEXIST);
}

/* Write len bytes of data to the file rel (made 0600, or truncated). */
static inline void t_write(const char *rel, const void *data, size_t len)
{
	int fd = open(t_path(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t off = 0;

	assert_true(fd >= 0);
	while (off < len) {
		ssize_t w = write(fd, (const char *)data + off, len - off);

		assert_true(w > 0);
		off += (size_t)w;
	}
	close(fd);
}

/* t_write of a string. */
static inline void t_writes(const char *rel, const char *s)
{
	t_write(rel, s, strlen(s));
}

/* Set the mtime (and atime) of rel to ms since the epoch, without following a link. */
static inline void t_mtime(const char *rel, int64_t ms)
{
	struct timespec ts[2];

	ts[0].tv_sec = (time_t)(ms / 1000);
	ts[0].tv_nsec = (long)(ms % 1000) * 1000000;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, t_path(rel), ts, AT_SYMLINK_NOFOLLOW), 0);
}

/* A printf format's result, in one of eight rotating buffers (a test's paths and names). */
static inline const char *t_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline const char *t_fmt(const char *fmt, ...)
{
	static char b[8][256];
	static unsigned n;
	char *o = b[n++ % 8];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(o, sizeof(b[0]), fmt, ap);
	va_end(ap);
	/* a cut string would be a wrong one that looks right */
	if (len < 0 || (size_t)len >= sizeof(b[0]))
		fail_msg("t_fmt(\"%s\"): %d bytes do not fit in %zu", fmt, len, sizeof(b[0]));
	return o;
}

/* A file of a fixture home: its parent dirs made (0755), s written, then mode and, when
 * mtime_ms is not 0, the mtime set. */
static inline void t_put(const char *rel, const char *s, mode_t mode, int64_t mtime_ms)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", rel);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		t_mkdir_p(dir, 0755);
	}
	t_writes(rel, s);
	assert_int_equal(chmod(t_path(rel), mode), 0);
	if (mtime_ms)
		t_mtime(rel, mtime_ms);
}

/* The whole content of the file rel (malloc'd, NUL-terminated; *len its length, may be NULL),
 * or NULL when it cannot be read. */
static inline char *t_read(const char *rel, size_t *len)
{
	FILE *f = fopen(t_path(rel), "rb");
	char *s;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return s;
}

/* Whether rel exists (lstat: a dangling link exists). */
static inline bool t_exists(const char *rel)
{
	struct stat st;

	return lstat(t_path(rel), &st) == 0;
}

/* A symlink at rel pointing at target (as given). */
static inline void t_symlink(const char *target, const char *rel)
{
	assert_int_equal(symlink(target, t_path(rel)), 0);
}

/* A child that takes flock(how) on rel and waits to be killed: its pid, once it holds it. */
static inline pid_t t_hold_flock(const char *rel, int how)
{
	int pfd[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(t_path(rel), O_RDONLY);

		if (fd < 0 || flock(fd, how) < 0)
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	return pid;
}

/* Kill and reap *pid (t_hold_flock's), if any; *pid becomes -1. */
static inline void t_let_go(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

#endif
