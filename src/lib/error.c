/* Per-thread error messages (libgit2 style): the library sets, the caller reads. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static _Thread_local char last[2048];
static _Thread_local const char *last_static;
static _Thread_local unsigned long shortages;

bool agc_errno_short(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM;
}

void agc_short_note(int err)
{
	if (agc_errno_short(err))
		shortages++;
}

unsigned long agc_short_count(void)
{
	return shortages;
}

const char *agc_error_last(void)
{
	if (last_static)
		return last_static;
	return last;
}

static void vset(const char *fmt, va_list ap)
{
	last_static = NULL;
	vsnprintf(last, sizeof(last), fmt, ap);
}

int agc_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	return code;
}

int agc_error_errno(int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	len = strlen(last);
	/* out of descriptors: what to do is the same wherever it happened */
	if (len < sizeof(last))
		snprintf(last + len, sizeof(last) - len, ": %s%s", strerror(errnum),
			 errnum == EMFILE || errnum == ENFILE ? " (raise 'ulimit -n' and run again)" : "");
	return code;
}

int agc_error_oom(void)
{
	/* A static string: reporting out-of-memory must not allocate. */
	last_static = "out of memory";
	return -1;
}

void agc_error_clear(void)
{
	last_static = NULL;
	last[0] = '\0';
}
