/* libagentgc: find, check and safely remove the native session history of AI coding agents.
 *
 * Conventions: calls return 0 on success, a negative AGC_E* code a caller acts on, or -1 for
 * any other failure; the message is in agc_error_last() (per thread). Objects are opaque, made
 * by agc_x_new(&out, ...) (out written only on success) and freed by agc_x_free(), which accepts
 * NULL. Strings returned by getters are borrowed from their parent object. The library never
 * prints and never exits.
 *
 * Option structs start with a version: set them up with their *_INIT macro (then set the
 * fields wanted), so that a program built against this header keeps working with a later
 * library whose struct has grown; a version the library does not know, 0 included (a struct
 * zeroed by hand), is refused with -1 (libgit2's convention).
 *
 * Threads. The error message is per thread. Calls on distinct contexts may run at the same
 * time in distinct threads. One context must not be used by two threads at once: calls that
 * take an agc_ctx resolve and cache its roots inside it on first use (a caller that shares
 * one serialises its calls; it may hand a context from one thread to another). A report,
 * once returned, is only read by its getters: several threads may read one, and it is freed
 * when none does. agc_version, agc_error_last, agc_status_name, the agc_agent_* calls and
 * agc_id_whole touch no shared state. The library reads the environment (HOME, TMPDIR, the
 * agents' variables): do not change it (setenv) while a call runs.
 *
 * The library starts threads of its own. agc_ls, agc_show, agc_in_use, agc_purge and
 * agc_purge_many scan the process table (the in-use gate, SPEC R5) on up to 8 threads, one
 * per online CPU, when it lists 256 processes or more; they are created with default
 * attributes and joined before the call returns, and none outlives it. They inherit the
 * signal mask of the calling thread: a process-directed signal may be delivered to one of
 * them, so a program that takes signals on a thread of its own (sigwait) must have them
 * blocked in the thread that calls. The library installs no signal handler. A fork() in
 * another thread while such a call runs gives a child with that one thread, whose memory may
 * hold a lock a scan thread had taken: the child must not call the library, and should only
 * exec (POSIX allows only async-signal-safe calls there). The library opens its descriptors
 * close-on-exec; a child that does not exec keeps copies of them (session files, the locks a
 * purge holds) and is then a holder itself. */
#ifndef AGENTGC_H
#define AGENTGC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header, and of the library built with it. The build reads it from this
 * line for project(VERSION) (CMakeLists.txt): it is written here only. */
#define AGENTGC_VERSION "0.1.0"

/* An option struct with its version set and every other field 0 (designated in C, so that
 * -Wmissing-field-initializers has nothing to say; positional in C++, which before C++20
 * has no designated initialisers). */
#ifdef __cplusplus
#define AGC_OPTS_INIT_(v) {v}
#else
#define AGC_OPTS_INIT_(v) {.version = (v)}
#endif

/* Marks the library's API: the only symbols libagentgc.so exports (it is built with
 * -fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define AGC_API __attribute__((visibility("default")))
#else
#define AGC_API
#endif

enum {
	AGC_OK = 0,
	AGC_ERROR = -1,     /* any failure not listed below; see agc_error_last() */
	AGC_ENOTFOUND = -2, /* no such thing (session, process, file) */
	AGC_EINUSE = -3,    /* in use: a live session, a held lock, a busy database */
	AGC_EUNSAFE = -4,   /* refused for safety (a symlink on the way, an id that is not an id) */
};

/* The last error message of this thread ("" when none). Never NULL. */
AGC_API const char *agc_error_last(void);

/* The library's version, AGENTGC_VERSION as it was built ("0.1.0"); a program can compare it
 * with the AGENTGC_VERSION it was compiled with. Static, never NULL. */
AGC_API const char *agc_version(void);

/* ---- context --------------------------------------------------------------------------- */

typedef struct agc_ctx agc_ctx;

#define AGC_CTX_OPTS_VERSION 1
#define AGC_CTX_OPTS_INIT AGC_OPTS_INIT_(AGC_CTX_OPTS_VERSION)

typedef struct agc_ctx_opts {
	unsigned int version; /* AGC_CTX_OPTS_VERSION: set by AGC_CTX_OPTS_INIT */
	const char *home;     /* NULL: $HOME. Agents' environment variables are followed only when
				 this is the caller's own home (same real path as $HOME). */
	const char *procroot; /* NULL: "/proc". For tests. */
	int64_t now_ms;       /* 0: the wall clock (or $AGENTGC_NOW, epoch seconds, for tests) */
} agc_ctx_opts;

/* Make a context; opts may be NULL (every default). Returns 0, or -1 (error set, *out
 * untouched) when opts->version is not AGC_CTX_OPTS_VERSION, there is no home or memory ran
 * out. */
AGC_API int agc_ctx_new(agc_ctx **out, const agc_ctx_opts *opts);
AGC_API void agc_ctx_free(agc_ctx *ctx);
/* The home in use and whether it is the caller's own. */
AGC_API const char *agc_ctx_home(const agc_ctx *ctx);
AGC_API int agc_ctx_own_home(const agc_ctx *ctx);
AGC_API int64_t agc_ctx_now_ms(const agc_ctx *ctx);

/* ---- agents ---------------------------------------------------------------------------- */

/* Agents by a value that never changes: agc_ls_opts.agents is a mask of them. A new agent
 * takes the next bit; none is ever renumbered. An agent this library does not have built in
 * selects nothing; a bit that names no agent is an error. */
enum {
	AGC_AGENT_CLAUDE = 1u << 0,   /* Claude Code */
	AGC_AGENT_CODEX = 1u << 1,    /* OpenAI's Codex CLI */
	AGC_AGENT_OPENCODE = 1u << 2, /* OpenCode */
	AGC_AGENT_CURSOR = 1u << 3,   /* Cursor's CLI agent */
};

/* The AGC_AGENT_* bit of the agent named name ("claude", "codex", "opencode", "cursor"),
 * whether or not this library has it built in; 0 for a name that is no agent (and for NULL
 * and "auto"). */
AGC_API unsigned agc_agent_bit(const char *name);

/* Number of agents built in and their names ("claude", "opencode"), in the library's order:
 * an index is not stable from one version to the next (select agents by bit or name). */
AGC_API size_t agc_agent_count(void);
AGC_API const char *agc_agent_name(size_t i);
/* Index of an agent by exact name, or AGC_ENOTFOUND. */
AGC_API int agc_agent_find(const char *name);
/* 1 when id follows agent i's id grammar (SPEC R1), else 0. */
AGC_API int agc_agent_id_ok(size_t i, const char *id);

/* ---- roots ----------------------------------------------------------------------------- */

typedef struct agc_root_info {
	const char *agent;
	const char *name;    /* "config", "temp", "home", "data", ... */
	const char *path;    /* as derived */
	const char *real;    /* resolved once (NULL when missing) */
	const char *source;  /* what set it: "$CLAUDE_CONFIG_DIR", "default", ... */
	int exists;
	int err;             /* it exists but cannot be opened or read: the errno (EACCES...), else 0 */
	const char *holds;   /* what the agent's history in it is, where the agent's layout is not
				established (Cursor: "chats: 3 in 2 buckets; ..."), else NULL */
} agc_root_info;

/* Call cb for every root of every agent. cb returns nonzero to stop. Returns 0 or -1. */
AGC_API int agc_roots(agc_ctx *ctx, int (*cb)(const agc_root_info *r, void *ud), void *ud);

/* ---- sessions -------------------------------------------------------------------------- */

typedef struct agc_session_info {
	const char *agent;
	const char *id;
	const char *parent;   /* NULL for a root session */
	const char *project;  /* absolute cwd, or NULL when unknown */
	const char *title;    /* may be NULL */
	int64_t created_ms;   /* 0 when unknown */
	int64_t updated_ms;   /* last activity */
	uint64_t bytes;       /* every artifact, children included: st_size of its files, the stored
				 size of its rows and of its lines in shared files (SPEC "Sizes") */
	int live;             /* ls: the in-use gate's answer (R5) */
	uint64_t disk;        /* st_blocks x 512 of its files and dirs */
	const char *prompt;   /* the first prompt a person typed (the title too, unless the user
				 named the session); NULL when unknown. agc_ls gives it only
				 with opts->grep, which is what it is read for */
	int archived;         /* ls: the agent archived it (a Codex thread in archived_sessions/) */
	const char *layout;   /* show: how the agent's files were found, where the agent's layout is
				 not established (Cursor: the meta's encoding, the transcript's form),
				 else NULL */
	int orphan;           /* ls with orphans: its record is gone (a Claude transcript, an
				 OpenCode or Codex session row, a Codex rollout, a Cursor chat) but
				 other artifacts of its id remain; project and title are mostly
				 unknown, and a purge of the id takes what is left */
	int parent_gone;      /* a child (parent set) whose parent is no longer on record (a Codex
				 sub-agent whose parent's rollout is gone, an OpenCode child whose
				 parent's session row is gone): ls lists it as a root, since no
				 root of it is left to list, purge or prune it with */
} agc_session_info;

typedef enum agc_sort {
	AGC_SORT_UPDATED = 0,
	AGC_SORT_CREATED,
	AGC_SORT_SIZE,
} agc_sort;

#define AGC_LS_OPTS_VERSION 2
#define AGC_LS_OPTS_INIT AGC_OPTS_INIT_(AGC_LS_OPTS_VERSION)

typedef struct agc_ls_opts {
	unsigned int version;    /* AGC_LS_OPTS_VERSION: set by AGC_LS_OPTS_INIT */
	unsigned agents;         /* AGC_AGENT_* bits (agc_agent_bit); 0 = every agent */
	/* Only sessions whose project is this dir or a dir below it, on path component
	 * boundaries (/a/b selects /a/b and /a/b/c, never /a/bc). Relative to the current dir;
	 * `.`, `..`, `//` and a trailing slash are resolved lexically, so a dir that no longer
	 * exists still selects its sessions. When it exists, its real path (symlinks resolved)
	 * selects too, and so does the real path of a session's project that exists: a
	 * project reached through a link is found by either name. */
	const char *project;
	int project_gone;        /* only sessions whose project dir no longer exists (stat says
				    ENOENT or ENOTDIR); an unknown project, or one that cannot be
				    checked (EACCES...), is not gone */
	const char *grep;        /* only sessions whose title, first prompt or project contains
				    this text, ASCII letters compared case-insensitively */
	int64_t older_than_ms;   /* > 0: updated before now - this */
	int64_t newer_than_ms;   /* > 0: updated after now - this */
	int children;            /* list child and sub-agent sessions too */
	agc_sort sort;           /* newest / largest first */
	size_t limit;            /* 0 = all */
	/* list orphans too (agc_session_info.orphan): ids whose record is gone but whose other
	 * artifacts remain. An agent whose records could not all be read lists none (said through
	 * warn): a record that is only unreadable would make a live session's files look orphaned */
	int orphans;
	/* Called with a message (lower case, "cannot read '<path>': <reason>") for each root or
	 * dir the listing could not read; may be NULL. */
	void (*warn)(const char *msg, void *ud);
	void *warn_ud;
} agc_ls_opts;

/* List sessions, sorted, calling cb for each (strings valid during the call). cb returns
 * nonzero to stop. opts may be NULL (every session, newest first). Returns 0, or -1 when an
 * agent's listing failed (others are still listed), or -1 before listing anything when
 * opts->version is not AGC_LS_OPTS_VERSION or opts->agents holds a bit that names no agent. */
AGC_API int agc_ls(agc_ctx *ctx, const agc_ls_opts *opts,
		   int (*cb)(const agc_session_info *s, void *ud), void *ud);

/* Every session (children and sub-agents included) of agent ("claude", ... or "auto": every
 * agent) whose id starts with one of the n prefixes, read-only: cb(i, s, ud) for each match,
 * i the index of the prefix (strings of s valid during the call); cb returns nonzero to stop.
 * A prefix is compared with the id as it is shown (a UUID with its dashes): one shorter than
 * AGC_PREFIX_MIN characters, or holding '/' or a control byte, matches nothing; UUIDs compare
 * in any letter case, OpenCode ids case-sensitively (SPEC R1). Only listed sessions match.
 * Returns the number of matches (0 or more), or -1 (error set) when an agent could not be
 * listed, memory ran out or the agent is unknown; matches already made were called. */
#define AGC_PREFIX_MIN 8
/* 1 when id is a whole id of agent ("auto": of any agent) in the form the agent makes them (a
 * UUID; OpenCode's generated ses_ ids), so that no other id starts with it and no prefix
 * look-up is needed; else 0. */
AGC_API int agc_id_whole(const char *agent, const char *id);
AGC_API int agc_resolve_prefix(agc_ctx *ctx, const char *agent, const char *const *prefixes,
			       size_t n, int (*cb)(size_t i, const agc_session_info *s, void *ud),
			       void *ud);

/* ---- reports: show, in-use, purge ------------------------------------------------------- */

typedef enum agc_status {
	AGC_ST_PURGED = 0,  /* everything removed */
	AGC_ST_PARTIAL,     /* something left (residual) */
	AGC_ST_IN_USE,      /* refused: in use; nothing changed */
	AGC_ST_NOT_FOUND,   /* no artifact of that id */
	AGC_ST_REFUSED,     /* refused: busy database, fork, ambiguous; nothing changed */
	AGC_ST_DRY_RUN,     /* nothing changed; removed lists what would go */
	AGC_ST_FOUND,       /* show / in-use: found */
	AGC_ST_ERROR,       /* could not even look; see the report's error */
	AGC_ST_SKIPPED,     /* prune: left alone on purpose (agc_report_skip says why); nothing
			       changed */
} agc_status;

/* "purged", "partial", "in-use", "not-found", "refused", "dry-run", "found", "error",
 * "skipped" */
AGC_API const char *agc_status_name(agc_status st);

typedef struct agc_item {
	const char *kind;    /* "file", "dir", "link", "rows", "lines" */
	const char *path;    /* absolute path (for rows: the database) */
	const char *table;   /* rows only, else NULL */
	const char *reason;  /* residual only: "symlink", "in-use", "busy", "permission", "child",
				"fork", "schema" (rows: the database would change more than the
				plan; table names where), "free-space", "error: ..." */
	const char *session; /* the session (or child) it belongs to */
	uint64_t count;      /* rows or lines; 1 for a file */
	uint64_t bytes;
	int64_t mtime_ms;
} agc_item;

typedef struct agc_holder_info {
	int pid;
	const char *command;
	const char *why;     /* "registry", "cmdline", "environ", "open-file", "lock" */
	const char *what;    /* the id or path it holds; may be NULL */
} agc_holder_info;

typedef struct agc_report agc_report;

typedef enum agc_purge_flags {
	AGC_PURGE_DRY_RUN = 1 << 0,    /* change nothing; list what would go */
	AGC_PURGE_WITH_FORKS = 1 << 1, /* purge the forks that read this session's history too
					  (and their forks); without it such a session is refused,
					  status refused, residual reason "fork", the forks listed
					  (agc_report_fork) */
	AGC_PURGE_SCRUB = 1 << 2,      /* then rebuild (VACUUM) every database rows were deleted
					  from, when no other process holds it and there is room
					  for a copy; else residual "in-use" or "free-space" */
} agc_purge_flags;

/* Purge one session of agent ("claude", ... or "auto": the one agent that has it) with all its
 * artifacts and children, under the rules R1-R8. out must not be NULL: *out receives the
 * report (the caller frees it with agc_report_free), made even for not-found and in-use. The
 * return is 0 when a report was made; -1 (error set, *out untouched) when out is NULL, flags
 * hold a bit that is not an agc_purge_flags value, or memory ran out.
 * The outcome is agc_report_status(). */
AGC_API int agc_purge(agc_ctx *ctx, const char *agent, const char *id, unsigned flags,
		      agc_report **out);

/* Purge n sessions in one run: out[i] receives the report of ids[i], the same report
 * agc_purge(ctx, agent, ids[i], flags) would give when the ids are purged one after the
 * other in that order; out must hold n pointers. One process-table scan serves every id, each
 * id re-checked just before its removal (docs/internals.md, "Many ids"). Returns 0 when every
 * report was made; -1 (error set, no report kept) as agc_purge. */
AGC_API int agc_purge_many(agc_ctx *ctx, const char *agent, const char *const *ids, size_t n,
			   unsigned flags, agc_report **out);

/* ---- du -------------------------------------------------------------------------------- */

#define AGC_DU_OPTS_VERSION 1
#define AGC_DU_PRUNE_AGE_DEFAULT_MS ((int64_t)30 * 86400 * 1000)
#ifdef __cplusplus
#define AGC_DU_OPTS_INIT {AGC_DU_OPTS_VERSION}
#else
#define AGC_DU_OPTS_INIT {.version = AGC_DU_OPTS_VERSION, .prune_age_ms = AGC_DU_PRUNE_AGE_DEFAULT_MS}
#endif

typedef enum agc_du_by {
	AGC_DU_BY_AGENT = 0,
	AGC_DU_BY_PROJECT,
	AGC_DU_BY_KIND,
} agc_du_by;

typedef struct agc_du_opts {
	unsigned int version;  /* AGC_DU_OPTS_VERSION: set by AGC_DU_OPTS_INIT */
	unsigned agents;       /* AGC_AGENT_* bits; 0 = every agent */
	agc_du_by by;
	int64_t prune_age_ms;  /* what a prune --older-than this would free (AGC_DU_OPTS_INIT: 30d) */
	void (*warn)(const char *msg, void *ud); /* what could not be read; may be NULL */
	void *ud;
} agc_du_opts;

/* One row of du: an agent, or (AGC_DU_BY_PROJECT) one project of an agent. */
typedef struct agc_du_row {
	const char *agent;
	const char *project;    /* by project: the sessions' project dir; NULL: unknown (orphans) */
	size_t sessions;        /* root sessions with a record (their children inside) */
	size_t orphans;         /* ids whose record is gone (agc_ls_opts.orphans) */
	/* sessions and orphans, children included: the sum of what ls --orphans reports */
	uint64_t bytes, disk;
	uint64_t orphan_bytes, orphan_disk; /* of them, the orphans' */
	/* agent rows: what is in the agent's roots that no session or orphan accounts for (its
	 * logs, caches, snapshots; its databases' free pages and overhead): the walk of its roots
	 * (the temp root: Claude's own dirs in it) less bytes, never below 0 */
	uint64_t bulk_bytes, bulk_disk;
	/* what prune --older-than prune_age would free: the bytes of the root sessions and orphans
	 * whose last activity is older than that and that are not live */
	uint64_t prune_bytes;
	size_t prune_sessions;
	/* agent rows: what compact would free, its dry run's free pages and WAL bytes */
	uint64_t compact_bytes;
	/* by kind: "transcripts" (each session's record: a transcript, a rollout), "sub-agents"
	 * (a child's files, a subagents/ dir inside a session's dir), "side-files" (the rest of
	 * a session's files, and its lines in shared files), "rows" (its database rows), "temp"
	 * (its dirs in the temp root), "logs" (its debug logs and log rows), "orphans" (what is
	 * left of sessions whose record is gone), "bulk" (what no session accounts for); bytes
	 * and disk of that kind, sessions: how many have some. NULL in the other groupings */
	const char *kind;
} agc_du_row;

/* Disk use per agent or per project, read-only, from one listing (ls --orphans) per run, one
 * walk of each agent's roots and a compact dry run: cb gets each row (strings valid during the
 * call; nonzero stops), agents in the library's order, projects by bytes, largest first.
 * Returns 0, or -1 (error set) for options that are wrong or a listing that failed (the rows
 * that could be made are given). */
AGC_API int agc_du(agc_ctx *ctx, const agc_du_opts *o, int (*cb)(const agc_du_row *row, void *ud), void *ud);

/* ---- compact --------------------------------------------------------------------------- */

#define AGC_COMPACT_OPTS_VERSION 1
#define AGC_COMPACT_OPTS_INIT AGC_OPTS_INIT_(AGC_COMPACT_OPTS_VERSION)

typedef struct agc_compact_opts {
	unsigned int version; /* AGC_COMPACT_OPTS_VERSION: set by AGC_COMPACT_OPTS_INIT */
	unsigned agents;      /* AGC_AGENT_* bits; 0 = every agent */
	unsigned flags;       /* AGC_PURGE_DRY_RUN: change nothing, say what would be done */
} agc_compact_opts;

/* One database (strings valid during the call). */
typedef struct agc_compact_info {
	const char *agent;
	const char *path;
	const char *status;     /* "compacted"; "partial" (rebuilt, but its -wal could not be
				   emptied: reason "busy"); "dry-run"; "skipped" (reason);
				   "error" (reason: the message) */
	const char *reason;     /* skipped: "in-use" (holders), "busy" (a reader mid-transaction),
				   "free-space" (need, avail), "symlink", "not a regular file";
				   dry-run: "free-space" when it would be skipped for it; else NULL */
	uint64_t bytes_before;  /* the database and its -wal */
	uint64_t bytes_after;   /* compacted: the same after */
	uint64_t wal_bytes;     /* its -wal before */
	uint64_t free_bytes;    /* its free pages (freelist_count x page_size), after the checkpoint */
	uint64_t need, avail;   /* what a rebuild needs on its file system, and what is free */
	size_t n_holders;       /* in-use: who holds it */
	const agc_holder_info *holders;
} agc_compact_info;

/* Compact every database the agents' sessions share (OpenCode's opencode*.db, Codex's *.sqlite,
 * Cursor's ai-code-tracking.db; a Cursor chat's own store goes whole with it): when no other
 * process holds it, its -wal or -shm, wal_checkpoint(TRUNCATE) without waiting, then VACUUM when
 * its file system has room for a copy. cb gets each database (nonzero stops). Returns 0, or -1
 * (error set) for options that are wrong. */
AGC_API int agc_compact(agc_ctx *ctx, const agc_compact_opts *o,
			int (*cb)(const agc_compact_info *ci, void *ud), void *ud);

/* ---- prune ----------------------------------------------------------------------------- */

#define AGC_PRUNE_OPTS_VERSION 2
#define AGC_PRUNE_SETTLE_DEFAULT_MS ((int64_t)24 * 3600 * 1000)
#ifdef __cplusplus
#define AGC_PRUNE_OPTS_INIT {AGC_PRUNE_OPTS_VERSION}
#else
#define AGC_PRUNE_OPTS_INIT \
	{.version = AGC_PRUNE_OPTS_VERSION, .settle_ms = AGC_PRUNE_SETTLE_DEFAULT_MS, .budget_ms = -1}
#endif

/* A run of agc_prune so far, or at its end. */
typedef struct agc_prune_summary {
	size_t scanned;            /* sessions the listings gave */
	size_t candidates;         /* of them, selected and not kept */
	size_t purged, partial, refused, not_found, errors;
	size_t skipped_live, skipped_unsettled, skipped_kept;
	size_t skipped_recorded;   /* orphans: the record came back before the purge (not an orphan) */
	size_t remaining;          /* candidates the run did not reach (its budget ran out) */
	uint64_t bytes;            /* freed (a dry run: would be freed): the removed items' bytes */
	int budget_out;            /* the run stopped at its budget with candidates left */
	const char *next_agent;    /* budget_out: the agent the next run begins with */
	size_t scrubbed;           /* AGC_PURGE_SCRUB: databases rebuilt (a dry run: that would be) */
	size_t scrub_left;         /* ... and those left (held, busy, no room, an error) */
	int64_t elapsed_ms;
} agc_prune_summary;

typedef struct agc_prune_opts {
	unsigned int version;      /* AGC_PRUNE_OPTS_VERSION: set by AGC_PRUNE_OPTS_INIT */
	unsigned agents;           /* AGC_AGENT_* bits; 0 = every agent */
	/* Selectors (at least one; all that are given must hold): */
	int64_t older_than_ms;     /* > 0: last activity before now - this */
	int keep_given;            /* a keep list was given (an empty one keeps nothing) */
	const char *const *keep;   /* ids of any agent; those of no agent's grammar are skipped. A
				      session goes only when neither it nor a session that would go
				      with it (a Codex sub-agent, an OpenCode child) is one of these
				      or reached from one (agc_keep_closure) */
	size_t n_keep;
	const char *project;       /* as agc_ls_opts.project */
	int project_gone;          /* as agc_ls_opts.project_gone */
	int orphans;               /* only orphans (agc_ls_opts.orphans); one whose record is found
				      again by the purge's own discovery is skipped, "recorded" */
	/* Nothing whose last activity (the newest mtime anywhere in its artifacts, lstat, links
	 * not followed; what cannot be looked at counts as now) is later than now - settle_ms
	 * goes; 0: no floor. AGC_PRUNE_OPTS_INIT: 24h. */
	int64_t settle_ms;
	/* >= 0: the run stops once this much time has passed since it began (checked before each
	 * agent but the run's first and after each removal; an agent that began removes at least
	 * one session first), and the next run begins with the agent after the one it stopped in
	 * (state_dir); 0 removes nothing. < 0: no budget (AGC_PRUNE_OPTS_INIT). */
	int64_t budget_ms;
	unsigned flags;            /* AGC_PURGE_DRY_RUN; AGC_PURGE_SCRUB: then rebuild each database
				      rows went from once, at the end (as agc_compact), each told to
				      scrubbed; AGC_PURGE_WITH_FORKS is refused */
	/* where the budget's rotation is kept: NULL for agentgc's state dir
	 * ($XDG_STATE_HOME/agentgc, else ~/.local/state/agentgc) */
	const char *state_dir;
	void (*progress)(const agc_prune_summary *sofar, void *ud); /* after each session */
	void (*warn)(const char *msg, void *ud);                     /* what was not read */
	void (*discovered)(void *ud); /* a test hook: after a batch's discovery, before its gate */
	void (*scrubbed)(const agc_compact_info *ci, void *ud); /* AGC_PURGE_SCRUB */
	void *ud;
} agc_prune_opts;

/* Select sessions (root sessions: a purge takes the children with them) and purge each
 * under the purge's own rules: one listing per agent, then the agent's candidates purged in
 * batches (agc_purge_many: one process-table scan, each re-checked just before it goes). A
 * live session is skipped (status AGC_ST_SKIPPED, agc_report_skip "live", its holders in the
 * report), and so is an unsettled or kept one. cb gets each report (borrowed; nonzero stops
 * the run before its next batch: every session already touched is still told), sum the
 * totals (may be NULL). Returns 0, or -1 (error set) for options
 * that are wrong (no selector, unknown flags) or memory that ran out; what could not be read
 * is counted in sum->errors and said through opts->warn. */
AGC_API int agc_prune(agc_ctx *ctx, const agc_prune_opts *opts, int (*cb)(const agc_report *r, void *ud),
		      void *ud, agc_prune_summary *sum);

/* ---- ps and stop ----------------------------------------------------------------------- */

/* A session a process holds (or, a shared service, serves). */
typedef struct agc_ps_session {
	const char *agent;
	const char *id;      /* the root session: what purge and stop take (a child's holder holds
				its root too) */
	const char *how;     /* how the gate learned it, comma-separated, in this order: "registry",
				"cmdline", "environ", "open-file", "lock", "cwd", "process-table"
				(cannot be told: the process table, a registry or a lock that could
				not be read) */
} agc_ps_session;

/* One running process: an agent's own, or one that holds a session of an agent. */
typedef struct agc_ps_info {
	int pid;             /* 0: the sessions in use for which no process can be named */
	int ppid;
	const char *agent;   /* the agent it is a process of; for a holder, the agent of its first
				session */
	const char *role;    /* "agent", "service" (a shared service: never stopped), "holder" (a
				process of no agent that holds a session: a tool, an editor), "unseen"
				(pid 0) */
	const char *command; /* argv joined, control bytes neutralised */
	const char *cwd;     /* NULL when it cannot be read */
	int64_t started_ms;  /* epoch ms; 0 when unknown */
	const char *state;   /* agents and services: the agent's own status where it records one
				(Claude: "busy", "shell", "idle", "waiting"), else "busy" when it has
				a descendant that is not one of the agent's own processes (what runs
				under one of those still counts), else "idle"; NULL for the others */
	const char *state_from; /* "registry" or "children"; NULL with state */
	size_t n_sessions;   /* what it holds: exactly the sessions in-use calls in use through it */
	const agc_ps_session *sessions;
	size_t n_serves;     /* a service: the sessions whose files it has open (no hold, R5) */
	const agc_ps_session *serves;
} agc_ps_info;

#define AGC_PS_OPTS_VERSION 1
#define AGC_PS_OPTS_INIT AGC_OPTS_INIT_(AGC_PS_OPTS_VERSION)

typedef struct agc_ps_opts {
	unsigned int version; /* AGC_PS_OPTS_VERSION: set by AGC_PS_OPTS_INIT */
	unsigned agents;      /* AGC_AGENT_* bits; 0 = every agent: its processes, and the holders of
				 its sessions */
	void (*warn)(const char *msg, void *ud); /* what could not be read; may be NULL */
	void *ud;
} agc_ps_opts;

/* The running agent processes and the processes that hold sessions, from one scan of the process
 * table and one listing with the in-use gate (as ls: a session ps shows held is one in-use calls
 * in use, and the other way round). cb gets each process by pid (the pid-0 row last; strings
 * valid during the call; nonzero stops). Returns 0, or -1 (error set) for options that are wrong,
 * a process table that cannot be read, or a listing that failed (the rows are still given). */
AGC_API int agc_ps(agc_ctx *ctx, const agc_ps_opts *o, int (*cb)(const agc_ps_info *p, void *ud), void *ud);

/* One process of a stop's chain (SPEC "ps and stop"). */
typedef struct agc_stop_proc {
	int pid;             /* 0: a holder no process can be named for */
	const char *command;
	const char *why;     /* how it holds the session: the gate's reasons, comma-separated */
	const char *role;    /* as agc_ps_info.role: "agent" (a process of the session's agent: it
				gets the chain), "service", "holder", "unseen" */
	const char *action;  /* "stop" (the chain), "spare" (never signalled) */
	const char *hint;    /* spare: why, and what releases the session from it; else NULL */
	size_t n_signals;    /* the signals sent, in order ("SIGHUP", "SIGTERM", "SIGKILL"); a dry
				run: the chain it would get */
	const char *const *signals;
	const char *result;  /* "exited" (it ended after a signal), "killed" (after SIGKILL),
				"gone" (it ended, or stopped holding the session, before any signal),
				"changed" (its pid is another process's now: left alone), "alive"
				(SIGKILL did not end it in time, or it could not be looked at any
				more), "denied" (a signal was refused: EPERM), "spared", "dry-run" */
} agc_stop_proc;

#define AGC_STOP_OPTS_VERSION 1
#define AGC_STOP_GRACE_DEFAULT_MS ((int64_t)10 * 1000)
#define AGC_STOP_GRACE_MAX_MS ((int64_t)3600 * 1000)
#ifdef __cplusplus
#define AGC_STOP_OPTS_INIT {AGC_STOP_OPTS_VERSION}
#else
#define AGC_STOP_OPTS_INIT {.version = AGC_STOP_OPTS_VERSION, .grace_ms = AGC_STOP_GRACE_DEFAULT_MS}
#endif

typedef struct agc_stop_opts {
	unsigned int version; /* AGC_STOP_OPTS_VERSION: set by AGC_STOP_OPTS_INIT */
	int64_t grace_ms;     /* from the first signal to SIGKILL (0 to AGC_STOP_GRACE_MAX_MS, an
				 hour; AGC_STOP_OPTS_INIT: 10 s) */
	unsigned flags;       /* AGC_PURGE_DRY_RUN: signal nothing, tell the chain */
} agc_stop_opts;

/* End the agent processes that hold session id of agent ("auto": the one agent that has it):
 * the in-use gate's holders that are processes of that agent (not its shared services) get the
 * agent's graceful signal (Claude: SIGHUP), then SIGTERM, then SIGKILL once grace_ms has passed,
 * the process's start time read again before every signal (a pid that is another process's now,
 * or gone, is left alone). Every other holder (a process that merely names the id, a tool, a
 * shared service, one that cannot be named) is never signalled. cb gets each holder once its
 * chain is over (strings valid during the call). Then the gate runs again: *after receives
 * its report (AGC_ST_IN_USE: still held, the records preserved; AGC_ST_FOUND: free;
 * AGC_ST_NOT_FOUND: no artifact of that id, nothing signalled). Returns 0 when *after was made;
 * -1 (error set) for options that are wrong or memory that ran out. */
AGC_API int agc_stop(agc_ctx *ctx, const char *agent, const char *id, const agc_stop_opts *o,
		     int (*cb)(const agc_stop_proc *p, void *ud), void *ud, agc_report **after);

/* Describe one session: metadata, every artifact with its size, children, holders. Status is
 * AGC_ST_FOUND or AGC_ST_NOT_FOUND. out must not be NULL (-1 then, as agc_purge). */
AGC_API int agc_show(agc_ctx *ctx, const char *agent, const char *id, agc_report **out);

/* Whether a session is in use: status AGC_ST_IN_USE with holders, AGC_ST_FOUND when free,
 * AGC_ST_NOT_FOUND when no artifact of that id exists. out must not be NULL (-1 then). */
AGC_API int agc_in_use(agc_ctx *ctx, const char *agent, const char *id, agc_report **out);

AGC_API void agc_report_free(agc_report *r);
AGC_API const char *agc_report_agent(const agc_report *r);
AGC_API const char *agc_report_id(const agc_report *r);
AGC_API agc_status agc_report_status(const agc_report *r);
/* Exit code per SPEC: 0 done, 1 error, 3 left behind, 4 refused/in use, 5 not found. */
AGC_API int agc_report_exit(const agc_report *r);
/* Why a prune left the session alone (AGC_ST_SKIPPED): "live" (the in-use gate: the holders
 * are in the report), "unsettled" (its last activity is within the settle time, or cannot be
 * told), "kept" (a session that would go with it is on the keep list), "recorded" (an orphan
 * whose record the purge's discovery found again); else NULL. */
AGC_API const char *agc_report_skip(const agc_report *r);
/* The error message for AGC_ST_ERROR, or NULL. */
AGC_API const char *agc_report_error(const agc_report *r);
/* Metadata of the session (show, purge); NULL when unknown. */
AGC_API const agc_session_info *agc_report_session(const agc_report *r);
/* removed: what went (purge), would go (dry-run), or is there (show). */
AGC_API size_t agc_report_removed_count(const agc_report *r);
AGC_API const agc_item *agc_report_removed(const agc_report *r, size_t i);
AGC_API size_t agc_report_residual_count(const agc_report *r);
AGC_API const agc_item *agc_report_residual(const agc_report *r, size_t i);
AGC_API size_t agc_report_holder_count(const agc_report *r);
AGC_API const agc_holder_info *agc_report_holder(const agc_report *r, size_t i);
/* Ids of every descendant session (any depth) that went with (or would go with) the session. */
AGC_API size_t agc_report_child_count(const agc_report *r);
AGC_API const char *agc_report_child(const agc_report *r, size_t i);
AGC_API size_t agc_report_fork_count(const agc_report *r);
AGC_API const char *agc_report_fork(const agc_report *r, size_t i);
/* Advice lines for a person (how to find a holder by hand, what compact would free). */
AGC_API size_t agc_report_hint_count(const agc_report *r);
AGC_API const char *agc_report_hint(const agc_report *r, size_t i);

#ifdef __cplusplus
}
#endif

#endif
