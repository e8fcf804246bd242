/* Fault injection for end-to-end tests, loaded with LD_PRELOAD (as jq's inject_errors.c).
 *
 * When AGC_FAULT_UNLINKAT names a file, unlinkat fails for every pathname whose basename is
 * that name, with the errno named by AGC_FAULT_ERRNO: EACCES (the default), EPERM, EBUSY or
 * EIO. Everything else goes to the real unlinkat. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef int (*unlinkat_fn)(int, const char *, int);

static int fault_errno(void)
{
	const char *e = getenv("AGC_FAULT_ERRNO");

	if (e && strcmp(e, "EPERM") == 0)
		return EPERM;
	if (e && strcmp(e, "EBUSY") == 0)
		return EBUSY;
	if (e && strcmp(e, "EIO") == 0)
		return EIO;
	return EACCES;
}

static int should_fail(const char *pathname)
{
	const char *name = getenv("AGC_FAULT_UNLINKAT");
	const char *base;

	if (!name || !*name || !pathname)
		return 0;
	base = strrchr(pathname, '/');
	base = base ? base + 1 : pathname;
	return strcmp(base, name) == 0;
}

int unlinkat(int dirfd, const char *pathname, int flags)
{
	static unlinkat_fn real;
	unlinkat_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);

	if (should_fail(pathname)) {
		errno = fault_errno();
		return -1;
	}
	if (!fn) {
		fn = (unlinkat_fn)dlsym(RTLD_NEXT, "unlinkat");
		if (!fn) {
			errno = ENOSYS;
			return -1;
		}
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	return fn(dirfd, pathname, flags);
}
