/* Reports of show, in-use and purge, built by the engine. */
#ifndef AGC_REPORT_H
#define AGC_REPORT_H

#include "core.h"

typedef struct agc_item_own {
	agc_item it;      /* strings below are owned (kind is static) */
} agc_item_own;

struct agc_report {
	char *agent;
	char *id;
	agc_status status;
	int dry_exit;      /* dry-run: the exit code the purge would have had */
	char *error;
	char *skip;        /* AGC_ST_SKIPPED: why (agc_report_skip) */
	bool has_session;
	agc_session_info session;   /* strings owned */
	struct { agc_item *v; size_t n, cap; } removed, residual;
	struct { agc_holder_info *v; size_t n, cap; } holders;
	struct { char **v; size_t n, cap; } children, forks, hints;
};

agc_report *agc_report_new(const char *agent, const char *id);
/* Add an item; strings are copied. Returns the item or NULL. */
agc_item *agc_report_add_item(agc_report *r, bool residual, const char *kind, const char *path,
			      const char *table, const char *reason, const char *session,
			      uint64_t count, uint64_t bytes, int64_t mtime_ms);
int agc_report_add_holder(agc_report *r, int pid, const char *command, const char *why,
			  const char *what);
int agc_report_add_str(agc_report *r, int which, const char *s); /* 0 children, 1 forks, 2 hints */
int agc_report_set_error(agc_report *r, const char *msg);
/* Status AGC_ST_SKIPPED with why ("live", "unsettled", "kept"); 0 or -1. */
int agc_report_set_skip(agc_report *r, const char *why);

#endif
