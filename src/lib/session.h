/* Plan helpers shared by the engine and the adapters. */
#ifndef AGC_SESSION_H
#define AGC_SESSION_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "core.h"

/* The fd of a root of the plan, opened once (-1 when the root does not exist or cannot be
 * opened; the latter is noted as residual, reason permission, R2). Borrowed. */
int agc_plan_rootfd(agc_plan *p, size_t root);

/* The errno of a root that exists but cannot be opened or read, else 0. */
int agc_plan_root_err(agc_plan *p, size_t root);

/* The descriptors plan p holds open (its roots, its locks' dirs and files). */
size_t agc_plan_fds(const agc_plan *p);

/* How many descriptors a run of many ids may keep open in its plans: the soft limit on open
 * files less what discovery, the gate and the databases need beside them. */
size_t agc_fd_budget(void);

/* Enumerate rel beneath rootfd for discovery (read-only; links on the way are looked
 * through). NULL with errno set when it cannot be opened. */
DIR *agc_dir_at(int rootfd, const char *rel);

/* The same, noting a dir that exists but cannot be read, so the session is reported as left
 * behind (exit 3), never as purged (R8). */
DIR *agc_plan_dir(agc_plan *p, size_t root, int rootfd, const char *rel);
/* The next entry of d, the dir rel of root that agc_plan_dir opened: NULL at its end, and
 * also when reading it fails midway, which is noted as agc_plan_dir notes a dir that cannot
 * be opened (R2: what could not be read is never taken for absent). */
struct dirent *agc_plan_readdir(agc_plan *p, size_t root, const char *rel, DIR *d);

/* SPEC "Output", Sizes: the figures of a session, the same for ls, show, purge and dry runs.
 * bytes: the apparent size (st_size) of every regular file of the session, those inside its
 * dirs included, plus the stored size of its rows (agc_db_row_size_sql) and of its lines in
 * shared files (each line with its newline). disk: st_blocks x 512 of every entry of its
 * files and dirs. */
typedef struct agc_size {
	uint64_t bytes;
	uint64_t disk;
} agc_size;

#define AGC_SIZE_MAX_ENTRIES 1000000 /* entries measured inside one artifact (R8) */

/* Add the figures of the entry name of the open dir dirfd (borrowed; st its lstat, or NULL):
 * a file, a link, or a dir with everything inside it, never through a link or into a mount
 * point. The one function every listing and discovery measures an artifact with. *mtime_ms
 * (may be NULL) is raised to the newest mtime seen. Returns 0, AGC_ENOTFOUND or -1. */
int agc_size_entry(int dirfd, const char *name, const struct stat *st, agc_size *sz,
		   int64_t *mtime_ms);

/* agc_size_entry of rel beneath rootfd (borrowed), lstat'ed there with the dirs on the way
 * looked through read-only, as discovery looks (the removal never follows them). Returns 1
 * when it was there and measured, 0 when it does not exist, -1 when it could not be. */
int agc_size_at(int rootfd, const char *rel, agc_size *sz, int64_t *mtime_ms);

struct agc_ls_sink;
/* ls (SPEC "Sizes", R5): agc_size_entry of an artifact of gate entry g, which also gives the
 * gate the artifact (not a link) and every file and dir inside it, when gate is set (an
 * artifact the in-use gate does not look at: unset). */
int agc_ls_charge(struct agc_ls_sink *s, size_t g, bool gate, int dirfd, const char *name,
		  const struct stat *st, agc_size *sz, int64_t *mtime_ms);
/* The same for rel beneath rootfd, as agc_size_at. */
int agc_ls_charge_at(struct agc_ls_sink *s, size_t g, bool gate, int rootfd, const char *rel,
		     agc_size *sz, int64_t *mtime_ms);
/* The gate entry calls of the sink, safe with AGC_LS_NO_GATE. */
size_t agc_ls_gate_new(struct agc_ls_sink *s, size_t agent);
void agc_ls_gate_id(struct agc_ls_sink *s, size_t g, const char *id);
void agc_ls_gate_file(struct agc_ls_sink *s, size_t g, const struct stat *st);
void agc_ls_gate_agent_cwd(struct agc_ls_sink *s, size_t g, const struct stat *st);
void agc_ls_gate_live(struct agc_ls_sink *s, size_t g);
void agc_ls_gate_held(struct agc_ls_sink *s, size_t g, pid_t pid, agc_why why);

/* ps: what holds a gate entry of ls (kept only for agc_ls_held). */
typedef struct agc_held_ent {
	size_t g;
	pid_t pid;      /* 0: live for a reason no process stands for (cannot be told) */
	agc_why why;
	bool serves;    /* a shared service's open file: it serves the session, holds nothing */
} agc_held_ent;

/* One process's hold on a session, as ls's gate found it (R5: what ls calls live, and so
 * in-use calls in use). */
typedef struct agc_held {
	const char *agent;
	const char *id;  /* the root session: what purge and stop are given (a child's holder
			    holds its root too) */
	pid_t pid;       /* 0: no process to name (the process table or a registry could not be
			    read, a lock whose holder cannot be seen) */
	agc_why why;
	bool serves;     /* the process is a shared service that has the session's files open:
			    it holds nothing by it (the gate's exemption) */
} agc_held;

/* ps: list every session of the agents (a mask, 0 = all; children and orphans too), with ls's
 * gate, and call cb for each hold, in no particular order, strings valid during the call (the
 * same (session, pid, why) may come more than once). A root session is live in ls exactly
 * when some hold without serves is told for it. warn gets what could not be read (may be
 * NULL), with ud. Returns 0, or -1 when a listing failed or cb returned nonzero. */
int agc_ls_held(agc_ctx *ctx, unsigned agents, int (*cb)(const agc_held *h, void *ud), void *ud,
		void (*warn)(const char *msg, void *ud));
void agc_ls_gate_parent(struct agc_ls_sink *s, size_t g, size_t parent);

/* The figures of everything a plan holds: its artifacts, its row sets, its line sets. */
void agc_plan_size(const agc_plan *p, agc_size *out);

/* SPEC "Output", Titles: at most AGC_TITLE_MAX characters (code points), a longer one cut on a
 * character boundary and ended with U+2026. */
#define AGC_TITLE_MAX 200

/* A title as listings and reports give it: s cut to AGC_TITLE_MAX characters with "…" when
 * longer; nothing else changes (control characters are the printer's to neutralise). NULL for
 * NULL or an empty s. malloc'd. */
char *agc_title_cut(const char *s);

#endif
