/* Shared files holding lines of many sessions. */
#ifndef AGC_LINES_H
#define AGC_LINES_H

#include "core.h"

typedef enum agc_lines_flags {
	AGC_LINES_DRY_RUN = 1 << 0,    /* count only */
	AGC_LINES_CHECK_ONLY = 1 << 1, /* with AGC_LINES_DRY_RUN: ask the rewrite's questions (held,
					  locked, hard-linked, changed, too big) without reading the
					  file: counts 0 (a dry run of many ids, each counted by its
					  discovery) */
} agc_lines_flags;

typedef struct agc_lines_result {
	uint64_t count, bytes;  /* lines removed (or matching, when not done) */
	bool done;              /* the file was rewritten */
	const char *reason;     /* why not: "in-use", "symlink", "permission", "error" (static) */
} agc_lines_result;

/* Rewrite the shared file ls->rel beneath rootfd (borrowed) without the lines that match ids.
 * Returns 0 (done, or nothing to do), AGC_EINUSE (held open or locked: nothing changed), or -1
 * (error set; nothing changed). res->count says how many lines matched. */
int agc_lines_rewrite(int rootfd, const agc_lineset *ls, char *const *ids, size_t n_ids,
		      const char *procroot, unsigned flags, agc_lines_result *res);
/* The same, for ids sorted by strcasecmp (ls->which is used when set); when counts and bytes
 * are given (n_ids each), the lines and bytes of each id are added there once the file was
 * rewritten. */
int agc_lines_rewrite_ids(int rootfd, const agc_lineset *ls, char *const *ids, size_t n_ids,
			  const char *procroot, unsigned flags, agc_lines_result *res,
			  uint64_t *counts, uint64_t *bytes);

#endif
