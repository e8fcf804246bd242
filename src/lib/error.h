/* Errors of libagentgc: negative codes a caller acts on, and a per-thread message. */
#ifndef AGC_ERROR_H
#define AGC_ERROR_H

#include "agentgc/agentgc.h"

/* Set the per-thread message (printf format) and return code. */
int agc_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Like agc_error_set, with ": strerror(errnum)" appended. Returns code. */
int agc_error_errno(int code, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record out-of-memory with a static message that never allocates. Returns -1. */
int agc_error_oom(void);

/* Forget the last message. */
void agc_error_clear(void);

#endif
