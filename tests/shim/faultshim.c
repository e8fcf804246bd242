/* Fault injection for end-to-end tests, loaded with LD_PRELOAD (as jq's inject_errors.c).
 *
 * By name: when AGC_FAULT_UNLINKAT names a file, unlinkat fails for every pathname whose
 * basename is that name.
 *
 * By step: when AGC_FAULT_NTH is a number N, the Nth step of the process fails, counting the
 * calls named in AGC_FAULT_CALLS (a comma-separated list of "unlinkat", "renameat" and
 * "commit", the default being all three): unlinkat(2), renameat(2) and rename(2), and an SQL
 * COMMIT run with sqlite3_exec (which then returns SQLITE_IOERR and leaves the transaction
 * open, as a failed commit does). When AGC_FAULT_HIT names a file, each injected failure
 * appends the call's name and its argument to it, so a test can tell when N is past the last
 * step.
 *
 * By open: when AGC_FAULT_OPENAT names a file, openat(2) fails for every pathname whose
 * basename is that name (with AGC_FAULT_ERRNO=EMFILE, as when the process is out of
 * descriptors); with AGC_FAULT_OPENAT_NTH=N, only the Nth open of that basename fails (a
 * shortage that passes).
 *
 * Failed system calls set the errno named by AGC_FAULT_ERRNO: EACCES (the default), EPERM,
 * EBUSY, EIO or EMFILE. Everything else goes to the real functions.
 *
 * By dir: when AGC_FAULT_READDIR names a dir, reading the listing of every dir of that
 * basename fails (readdir returns NULL with errno EIO), as a damaged dir or a network file
 * system can fail midway.
 *
 * A hook: when AGC_HOOK_UNLINKAT names a file, the first unlinkat of that basename that
 * succeeds runs the shell command AGC_HOOK_CMD (without the shim), so a test can start a
 * process in the middle of a run (after agentgc's process scan). With AGC_HOOK_GO and
 * AGC_HOOK_DONE (two FIFOs) instead of a command, the hook creates no process: it writes a
 * line to the first and waits for one on the second, so that a process outside the run's pid
 * namespace can act in between.
 *
 * A still clock: when AGC_MONO_STILL is set, clock_gettime(CLOCK_MONOTONIC) gives the time of
 * its first call every time, so that nothing a run does by elapsed time (a rescan of the
 * process table every 200 ms) happens, and what it does by count is seen alone. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SHIM_SQLITE_IOERR 10

typedef int (*unlinkat_fn)(int, const char *, int);
typedef int (*renameat_fn)(int, const char *, int, const char *);
typedef int (*rename_fn)(const char *, const char *);
typedef int (*exec_fn)(void *, const char *, int (*)(void *, int, char **, char **), void *, char **);

static int fault_errno(void)
{
	const char *e = getenv("AGC_FAULT_ERRNO");

	if (e && strcmp(e, "EPERM") == 0)
		return EPERM;
	if (e && strcmp(e, "EBUSY") == 0)
		return EBUSY;
	if (e && strcmp(e, "EIO") == 0)
		return EIO;
	if (e && strcmp(e, "EMFILE") == 0)
		return EMFILE;
	return EACCES;
}

static int name_fails(const char *pathname)
{
	const char *name = getenv("AGC_FAULT_UNLINKAT");
	const char *base;

	if (!name || !*name || !pathname)
		return 0;
	base = strrchr(pathname, '/');
	base = base ? base + 1 : pathname;
	return strcmp(base, name) == 0;
}

/* Whether this call, a step of kind call, is the Nth step: counted only when the kind is
 * listed. Records the hit. */
static int step_fails(const char *call, const char *arg)
{
	static long count;
	const char *nth = getenv("AGC_FAULT_NTH"), *calls = getenv("AGC_FAULT_CALLS");
	const char *hit = getenv("AGC_FAULT_HIT");
	size_t cl = strlen(call);
	const char *p;
	long n, now;
	int listed = 0;

	if (!nth || !*nth)
		return 0;
	n = strtol(nth, NULL, 10);
	if (n <= 0)
		return 0;
	if (!calls || !*calls) {
		listed = 1;
	} else {
		for (p = calls; *p;) {
			size_t l = strcspn(p, ",");

			if (l == cl && strncmp(p, call, l) == 0)
				listed = 1;
			p += l;
			if (*p == ',')
				p++;
		}
	}
	if (!listed)
		return 0;
	now = __atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST);
	if (now != n)
		return 0;
	if (hit && *hit) {
		int fd = open(hit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd >= 0) {
			char line[4096];
			int len = snprintf(line, sizeof(line), "%ld %s %s\n", n, call, arg ? arg : "");

			if (len > 0)
				(void)!write(fd, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
			close(fd);
		}
	}
	return 1;
}

static void *real(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* The hook without a process: a line to go, then a line awaited from done. */
static void hook_fifos(const char *go, const char *done)
{
	char line[64];
	int fd = open(go, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, "go\n", 3) != 3)
		fprintf(stderr, "faultshim: the hook cannot write '%s'\n", go);
	if (fd >= 0)
		close(fd);
	fd = done ? open(done, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 || read(fd, line, sizeof(line)) <= 0)
		fprintf(stderr, "faultshim: the hook cannot read '%s'\n", done ? done : "");
	if (fd >= 0)
		close(fd);
}

int unlinkat(int dirfd, const char *pathname, int flags)
{
	static void *slot;
	unlinkat_fn fn;

	if (name_fails(pathname) || step_fails("unlinkat", pathname)) {
		errno = fault_errno();
		return -1;
	}
	fn = (unlinkat_fn)real(&slot, "unlinkat");
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	{
		static int hooked;
		const char *hook = getenv("AGC_HOOK_UNLINKAT"), *cmd = getenv("AGC_HOOK_CMD");
		const char *go = getenv("AGC_HOOK_GO");
		const char *base = strrchr(pathname, '/');
		int rc = fn(dirfd, pathname, flags), err = errno;

		base = base ? base + 1 : pathname;
		if (rc == 0 && !hooked && hook && (cmd || go) && base && strcmp(base, hook) == 0) {
			hooked = 1;
			if (go)
				hook_fifos(go, getenv("AGC_HOOK_DONE"));
			else {
				unsetenv("LD_PRELOAD");
				if (system(cmd) != 0)
					fprintf(stderr, "faultshim: the hook command failed\n");
			}
		}
		errno = err;
		return rc;
	}
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	static void *slot;
	renameat_fn fn;

	if (step_fails("renameat", newpath)) {
		errno = fault_errno();
		return -1;
	}
	fn = (renameat_fn)real(&slot, "renameat");
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(olddirfd, oldpath, newdirfd, newpath);
}

int rename(const char *oldpath, const char *newpath)
{
	static void *slot;
	rename_fn fn;

	if (step_fails("renameat", newpath)) {
		errno = fault_errno();
		return -1;
	}
	fn = (rename_fn)real(&slot, "rename");
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(oldpath, newpath);
}

/* sqlite3_exec as SQLite declares it; the handle is opaque here. */
int sqlite3_exec(void *db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg, char **errmsg)
{
	static void *slot;
	exec_fn fn;

	if (sql && strcmp(sql, "COMMIT") == 0 && step_fails("commit", sql)) {
		if (errmsg)
			*errmsg = NULL;
		return SHIM_SQLITE_IOERR;
	}
	fn = (exec_fn)real(&slot, "sqlite3_exec");
	if (!fn)
		return 1; /* SQLITE_ERROR */
	return fn(db, sql, cb, arg, errmsg);
}

typedef struct dirent *(*readdir_fn)(DIR *);

/* Whether the dir being read has the basename AGC_FAULT_READDIR names. */
static int dir_fails(DIR *d)
{
	const char *name = getenv("AGC_FAULT_READDIR"), *base;
	char link[64], path[4096];
	ssize_t n;

	if (!name || !*name)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd(d));
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	base = strrchr(path, '/');
	return strcmp(base ? base + 1 : path, name) == 0;
}

struct dirent *readdir(DIR *d)
{
	static void *slot;
	readdir_fn fn;

	if (dir_fails(d)) {
		errno = EIO;
		return NULL;
	}
	fn = (readdir_fn)real(&slot, "readdir");
	if (!fn) {
		errno = ENOSYS;
		return NULL;
	}
	return fn(d);
}

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static void *slot;
	static struct timespec first;
	static int have;
	clock_gettime_fn fn = (clock_gettime_fn)real(&slot, "clock_gettime");
	int rc;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	rc = fn(id, ts);
	if (rc == 0 && id == CLOCK_MONOTONIC && getenv("AGC_MONO_STILL")) {
		if (!have) {
			first = *ts;
			have = 1;
		}
		*ts = first;
	}
	return rc;
}

typedef int (*openat_fn)(int, const char *, int, ...);

static int open_fails(const char *pathname)
{
	static long seen;
	const char *name = getenv("AGC_FAULT_OPENAT"), *nth = getenv("AGC_FAULT_OPENAT_NTH"), *base;

	if (!name || !*name || !pathname)
		return 0;
	base = strrchr(pathname, '/');
	base = base ? base + 1 : pathname;
	if (strcmp(base, name) != 0)
		return 0;
	return !nth || !*nth || ++seen == atol(nth);
}

int openat(int dirfd, const char *pathname, int flags, ...)
{
	static void *slot;
	openat_fn fn;
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (open_fails(pathname)) {
		errno = fault_errno();
		return -1;
	}
	/* with _FILE_OFFSET_BITS=64 (as agentgc is built) the header makes this openat64 */
#ifdef __USE_FILE_OFFSET64
	fn = (openat_fn)real(&slot, "openat64");
#else
	fn = (openat_fn)real(&slot, "openat");
#endif
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(dirfd, pathname, flags, mode);
}
