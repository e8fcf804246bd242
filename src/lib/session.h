/* Plan helpers shared by the engine and the adapters. */
#ifndef AGC_SESSION_H
#define AGC_SESSION_H

#include <dirent.h>

#include "core.h"

/* The fd of a root of the plan, opened once (-1 when the root does not exist or cannot be
 * opened; the latter is noted as residual, reason permission, R2). Borrowed. */
int agc_plan_rootfd(agc_plan *p, size_t root);

/* The errno of a root that exists but cannot be opened or read, else 0. */
int agc_plan_root_err(agc_plan *p, size_t root);

/* Enumerate rel beneath rootfd for discovery (read-only; links on the way are looked
 * through). NULL with errno set when it cannot be opened. */
DIR *agc_dir_at(int rootfd, const char *rel);

/* The same, noting a dir that exists but cannot be read, so the session is reported as left
 * behind (exit 3), never as purged (R8). */
DIR *agc_plan_dir(agc_plan *p, size_t root, int rootfd, const char *rel);

/* SPEC "Output", Titles: at most AGC_TITLE_MAX characters (code points), a longer one cut on a
 * character boundary and ended with U+2026. */
#define AGC_TITLE_MAX 200

/* A title as listings and reports give it: s cut to AGC_TITLE_MAX characters with "…" when
 * longer; nothing else changes (control characters are the printer's to neutralise). NULL for
 * NULL or an empty s. malloc'd. */
char *agc_title_cut(const char *s);

#endif
