/* Errors of libagentgc: negative codes a caller acts on, and a per-thread message. */
#ifndef AGC_ERROR_H
#define AGC_ERROR_H

#include <stdbool.h>

#include "agentgc/agentgc.h"

/* Set the per-thread message (printf format) and return code. */
int agc_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Like agc_error_set, with ": strerror(errnum)" appended. Returns code. */
int agc_error_errno(int code, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record out-of-memory with a static message that never allocates. Returns -1. */
int agc_error_oom(void);

/* Forget the last message. */
void agc_error_clear(void);

/* Shortages of this process's own (descriptors, memory: EMFILE, ENFILE, ENOMEM) met by the
 * calls that open what discovery and the gate look at. A discovery or a gate during which one
 * was met saw an arbitrary part of what is there: it fails (R5, R6) rather than take the rest
 * for absent. agc_short_note(err) counts err when it is one; agc_short_count() is the count of
 * this thread so far, compared before and after. */
bool agc_errno_short(int err);
void agc_short_note(int err);
unsigned long agc_short_count(void);

#endif
