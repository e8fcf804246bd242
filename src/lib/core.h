/* The shared engine: context, roots, the purge plan, and the adapter seam. Adapters return
 * candidates (paths relative to a root they name, shared-file lines, holders from their own
 * registries); the core checks containment, asks who holds what, deletes, and computes the
 * residual. */
#ifndef AGC_CORE_H
#define AGC_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "agentgc/agentgc.h"
#include "buf.h"
#include "holders.h"
#include "ids.h"
#include "locks.h"
#include "walk.h"

#define AGC_ROOTS_MAX 64
#define AGC_AGENTS_MAX 8
#define AGC_PLAN_MAX_ITEMS ((size_t)1 << 20) /* artifacts, lines, ids of one purge */
#define AGC_GATE_MAX_FILES ((size_t)1 << 20) /* files whose holders the gate looks for */

typedef struct agc_root {
	const char *name;    /* "config", "temp", ... (static) */
	char *path;          /* as derived */
	char *real;          /* realpath, resolved once (NULL when missing) */
	const char *source;  /* what set it (static) */
	bool exists;
	int err;             /* it exists but cannot be opened or read: the errno, else 0 (R2) */
} agc_root;

typedef struct agc_rootset {
	agc_root v[AGC_ROOTS_MAX];
	size_t n;
	bool done;
} agc_rootset;

struct agc_ctx {
	char *home;        /* absolute */
	bool own_home;     /* home is the caller's own: agents' env vars are followed */
	uid_t home_uid;
	char *procroot;
	int64_t now_ms;
	char *tmp;         /* the temp root: the caller's for the own home, "/tmp" otherwise */
	const char *tmp_source;
	agc_rootset roots[AGC_AGENTS_MAX];
	/* While a guarded run of many (agc_purge_guarded) with a keep list runs: its keep closure
	 * (sorted, strcmp), which an adapter with spares_kept leaves out of a plan's children. */
	char *const *spare;
	size_t n_spare;
};

/* An agent's environment variable, only when the home is the caller's own and it is non-empty. */
const char *agc_ctx_env(const agc_ctx *ctx, const char *name);

/* Add a root; resolves it with realpath once and notes (err) when it exists but cannot be
 * opened or searched. Returns its index or -1. */
int agc_rootset_add(agc_rootset *rs, const char *name, const char *path, const char *source);
void agc_rootset_release(agc_rootset *rs);
/* Index of a root by name, or -1. */
int agc_rootset_find(const agc_rootset *rs, const char *name);

/* What tells a file has changed: (dev, ino, size, mtime, ctime) from fstat. */
typedef struct agc_filekey {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns, ctime_ns;
} agc_filekey;

typedef enum agc_art_flags {
	AGC_ART_RECORD = 1 << 0,  /* the record discovery keys on: removed last, only when every
				     other artifact went, so a failed purge stays findable (R6) */
	AGC_ART_NO_GATE = 1 << 1, /* not matched by the open-file gate (a socket, a lock) */
	AGC_ART_POINTER = 1 << 2, /* with AGC_ART_RECORD: removed last as a record is, since it
				     leads a rerun to other files (a registry entry), but not what
				     the session is on record by: an orphan may still have one */
	AGC_ART_DEFERRED = 1 << 3, /* in a run of many ids, shared with ids that go earlier in it
				      (a paste file their history lines name): not removed at its
				      turn but at the end of the stretch, once the shared file's
				      rewrite left nothing that names it (agc_adapter.unnamed) */
	AGC_ART_LAST_KEYED = 1 << 4, /* a dir whose child `last` is what discovery read to give
					it to the session (a job's state.json): written again since
					(last_key), the dir stays for a rerun to judge again */
} agc_art_flags;

typedef struct agc_artifact {
	size_t root;        /* index into the agent's roots */
	char *rel;          /* path beneath the root */
	char *session;      /* the session or child it belongs to */
	unsigned flags;     /* agc_art_flags */
	const char *last;   /* dirs: a child name removed after all others (static) */
	char kind;          /* 'f' file, 'd' dir, 'l' link, 'o' other */
	bool behind_link;   /* discovery looked through a symlinked dir to see it */
	uint64_t bytes;     /* SPEC "Output", Sizes: agc_size_entry of it (not for the gate) */
	uint64_t disk;
	int64_t mtime_ms;   /* the newest mtime in it (lstat, links not followed) */
	bool mtime_unsure;  /* something in it could not be looked at (a stat or a dir read that
			       failed, a mount point, too many entries): its last activity cannot
			       be told, and prune counts it as now */
	dev_t dev;
	ino_t ino;
	agc_filekey key;    /* as discovery saw it: an AGC_ART_POINTER written again since (the
			       same inode, another text) is not removed */
	agc_filekey last_key; /* AGC_ART_LAST_KEYED: the child `last` as discovery read it */
} agc_artifact;

void agc_filekey_of(const struct stat *st, agc_filekey *k);
bool agc_filekey_same(const agc_filekey *a, const agc_filekey *b);

/* Lines of a shared file that belong to the purged sessions. */
typedef struct agc_lineset {
	size_t root;
	char *rel;
	const agc_lock_spec *lock; /* the agent's lock of the file (static; NULL: none, a rename) */
	/* True when the line belongs to one of ids; malformed lines never match. */
	bool (*match)(const char *line, size_t len, char *const *ids, size_t n_ids);
	/* The same for many ids at once, sorted by strcasecmp: which_new makes a matcher for
	 * them (NULL: error set), which gives the index of the id the line belongs to, or -1,
	 * which_free frees it. All NULL: match is used. */
	void *(*which_new)(char *const *sorted_ids, size_t n_ids);
	long (*which)(void *m, const char *line, size_t len);
	void (*which_free)(void *m);
	uint64_t count, bytes;  /* matching lines at discovery */
	dev_t dev;
	ino_t ino;
	/* When set: the file as it was when the purge began (a run of many ids); a file that
	 * is not that one any more is not rewritten (R4: it changed meanwhile). */
	bool expect;
	agc_filekey expected;
} agc_lineset;

/* A database holding rows of the session (discovery opened it read-only). */
typedef struct agc_dbref {
	size_t root;
	char *rel;
	dev_t dev;
	ino_t ino;
	/* An earlier purge of one of the plan's ids deleted rows here but a reader stopped its
	 * checkpoint, so their text is still in the database's old pages (pending.h records it):
	 * this purge checkpoints it, whatever else is left (R6: a rerun finishes); wal_bytes is
	 * the WAL's size at discovery. */
	bool wal_residue;
	uint64_t wal_bytes;
} agc_dbref;

/* Rows of one table that belong to the purged sessions: column IN ids (when column is set),
 * or via_local IN (SELECT via_key FROM via_table WHERE via_column IN ids) (when via_table is
 * set). Identifiers come from the database's own schema (introspected); values are bound. */
typedef struct agc_rowset {
	size_t db;            /* index into plan->dbs */
	char *table;
	char *column;
	char *via_local, *via_table, *via_key, *via_column;
	bool record;          /* the session's record (its row in the agent's session table): its
				 database commits after every other (R6) */
	uint64_t count, bytes;  /* bytes: agc_db_row_size_sql summed over the rows */
} agc_rowset;

/* A session's writer lock (locks.h, agc_sesslock_*): the gate asks who holds it; a purge takes
 * it after the gate and holds it to the end, through rows, files and shared lines, and removes
 * its file in the release step, last, under the coordination lock, as the agent's own release
 * does. Never an ordinary artifact. */
typedef struct agc_plan_lock {
	size_t root;
	char *rel;            /* the lock file beneath root */
	const char *coord;    /* the coordination lock's name in the same dir (static) */
	char *session;        /* the session (or child) whose lock it is */
	dev_t dev;
	ino_t ino;
	uint64_t disk;
	int64_t mtime_ms;
	bool absent;          /* no file at discovery: the purge makes it, as the agent would, and
				 holds it all the same (an agent resuming the thread mid-purge
				 must find it taken); it does not make the session found */
	bool created;         /* the purge made it */
	bool bad;             /* not a regular file (a link, a FIFO): a refusal of the purge; the
				 gate still asks who holds what it leads to */
	int dfd, fd;          /* while held: its dir and the locked fd; -1 otherwise */
} agc_plan_lock;

/* A file the gate watches that is not removed: a database every session shares. */
typedef struct agc_watch {
	dev_t dev;
	ino_t ino;
	char *label;
} agc_watch;

typedef struct agc_meta {
	char *project;
	char *title;
	char *parent;
	/* how the agent's files were found, where its layout is not established (Cursor):
	 * said by show, else NULL */
	char *layout;
	int64_t created_ms;
	int64_t updated_ms;
	bool live;
} agc_meta;

/* A discovery-time problem that leaves something behind (an unreadable dir, a bad file). */
typedef struct agc_note {
	char *path;
	const char *kind; /* "dir", "file" or "lines" (a shared file's lines): a static string */
	char *reason;
} agc_note;

/* Advice for a person that only the adapter can give: for the holder whose "what" is what
 * (NULL: for the session as a whole), in place of the engine's generic hint. */
typedef struct agc_hint {
	char *what;
	char *text;
} agc_hint;

typedef struct agc_plan {
	const struct agc_adapter *ad;
	agc_ctx *ctx;
	const agc_rootset *roots;   /* points at local */
	agc_rootset local;          /* the agent's roots, plus roots found in discovery */
	char id[AGC_ID_MAX];
	struct { char **v; size_t n, cap; } ids;        /* id first, then every descendant */
	struct { size_t *v; size_t n, cap; } id_db;     /* per id: the database it was found in
							   (agc_plan_add_id_in), else SIZE_MAX */
	struct { agc_artifact *v; size_t n, cap; } arts;
	struct { agc_lineset *v; size_t n, cap; } lines;
	struct { agc_note *v; size_t n, cap; } notes;
	/* What makes a purge unsafe to begin, though nobody may hold the session (a database of
	 * the agent that cannot be read may hold its rows, the record among them; a writer lock
	 * that is a link): the purge is refused with these as residual, nothing changed. */
	struct { agc_note *v; size_t n, cap; } refusals;
	struct { agc_hint *v; size_t n, cap; } hints;
	struct { agc_dbref *v; size_t n, cap; } dbs;
	struct { agc_rowset *v; size_t n, cap; } rows;   /* deleted in this order */
	struct { agc_watch *v; size_t n, cap; } watch;
	struct { agc_plan_lock *v; size_t n, cap; } locks;
	/* Forks that survive the purge and read this session's history (SPEC "Relations"): the
	 * purge is refused with reason "fork", unless flags hold AGC_PURGE_WITH_FORKS, when the
	 * adapter adds them (and their forks) to ids instead. */
	struct { char **v; size_t n, cap; } forks;
	unsigned flags;  /* the run's agc_purge_flags, for discovery to read */
	agc_holders holders;                             /* from the agent's registries */
	agc_meta meta;
	int rootfd[AGC_ROOTS_MAX];                       /* opened once; -2 not yet */
	bool holders_only; /* only the holders discovery itself finds (Claude's registry), for
			      the re-check just before a removal: an adapter that finds none
			      adds nothing */
	bool gate_only;  /* only what the gate needs: no shared-file lines, no scans of flat
			    dirs shared by every session (in-use must answer fast) */
	bool keep;       /* a keep list's discovery (agc_keep_closure): relations whose meaning is
			    not established count too, since there they only keep more */
	bool again;      /* the discovery after a purge, for its residual: a store that cannot
			    be read is left as residual, not an error that hides the rest (R7, R8) */
	bool record_is_file; /* the session is on record by its AGC_ART_RECORD files alone (a Codex
				rollout): its record rows (a threads row), kept for last as R6 asks,
				do not make it one when the files are gone (prune --orphans) */
	bool rows_unsized; /* a purge's discovery: rows are only counted (through the indexes),
			      their bytes come from the deletes themselves (DELETE ... RETURNING,
			      purge.c), so no row is read twice */
	/* R5: the session's project dir when an agent process without a registry entry there
	 * would hold it (its transcript changed lately); its label is meta.project. */
	bool has_agent_cwd;
	agc_devino agent_cwd;
	/* A session that is part of its parent and goes only with it (a Claude sub-agent, SPEC
	 * "Relations"): the parent's id, else "". Its liveness is the parent's gate; purge
	 * refuses it, naming the parent. */
	char part_of[AGC_ID_MAX];
	/* A purge of many ids: the ids purged before this one in the same run (NULL: none). A
	 * file discovery keeps only because something of theirs names it (a paste file another
	 * purged session's history line mentions) would go with this session in a run one id at
	 * a time: batch_conflict says so, and the engine purges this id on its own, afresh. */
	char *const *going;
	size_t n_going;
	/* The same ids lower-cased, and going_hexlen: the length each has when every one is of
	 * hex digits and dashes only (else 0): a line names one of them exactly when one of its
	 * windows of that length is in the set (NULL, or a length of 0: look for each id). */
	const struct agc_hset *going_lc;
	size_t going_hexlen;
	bool batch_conflict;
	/* Ids the plan does not take as its children (agc_adapter.spares_kept: a kept id reaches
	 * them), sorted (strcmp); NULL: none. Set by the engine before discovery. */
	char *const *spare;
	size_t n_spare;
	/* The adapter's state for the run (agc_adapter.run_new), shared by every plan of it:
	 * what it read once for many ids (NULL: none, read afresh). */
	void *run;
} agc_plan;

void agc_plan_init(agc_plan *p, const struct agc_adapter *ad, agc_ctx *ctx, const agc_rootset *rs,
		   const char *id);
void agc_plan_release(agc_plan *p);
/* Add a session id (a child) once. Returns 0 or -1. */
int agc_plan_add_id(agc_plan *p, const char *id);
/* The same for a child found in database db (an index into dbs): a child still on record after
 * a purge is named with that database. */
int agc_plan_add_id_in(agc_plan *p, const char *id, size_t db);
/* Add an artifact at rel beneath root, if it exists: lstat'ed through the root fd with links
 * looked through read-only for discovery (the removal itself never follows them). Dirs are
 * measured. Returns 1 when added, 0 when it does not exist, -1 on error. */
int agc_plan_add_art(agc_plan *p, size_t root, const char *rel, const char *session, unsigned flags,
		     const char *last);
/* A problem at rel beneath root (absolute path stored) that leaves something behind; its
 * kind is "dir" when the path is a dir (lstat now), else "file". */
int agc_plan_add_note(agc_plan *p, size_t root, const char *rel, const char *reason);
/* The same with the kind given (a static string, e.g. "lines" for a shared file's lines). */
int agc_plan_add_note_kind(agc_plan *p, size_t root, const char *rel, const char *kind,
			   const char *reason);
/* A refusal (agc_plan.refusals) at rel beneath root, of kind ("rows", "file"...: static),
 * with its reason (copied). 0 or -1. */
int agc_plan_add_refusal(agc_plan *p, size_t root, const char *rel, const char *kind, const char *reason);
/* A hint for the holder whose what is what (NULL: the session); strings copied. 0 or -1. */
int agc_plan_add_hint(agc_plan *p, const char *what, const char *text);
/* Add a root found during discovery (a project's plan dir, read from the agent's own data),
 * resolved once like the others. Returns its index (the same one for the same path) or -1. */
int agc_plan_add_root(agc_plan *p, const char *name, const char *path);
/* Add a database (by (root, rel), lstat'ed now); returns its index or -1. */
int agc_plan_add_db(agc_plan *p, size_t root, const char *rel);
/* Add a row set (strings copied; column or via_* may be NULL). Returns 0 or -1. */
int agc_plan_add_rows(agc_plan *p, size_t db, const char *table, const char *column,
		      const char *via_local, const char *via_table, const char *via_key,
		      const char *via_column);
/* The plan's ids as a JSON array (malloc'd by jansson: free()). */
char *agc_plan_ids_json(const agc_plan *p);
/* SQL for a row set, the ids bound as ?1 (a JSON array): DELETE, or SELECT <select> when
 * select is given. malloc'd. */
char *agc_rows_sql(const agc_rowset *rs, const char *select);
/* Fill count and bytes of the row sets of database dbi from db (read-only): count only when
 * p->rows_unsized (bytes 0); after a purge (p->again) counted first and sized only where rows
 * are left. 0, -1, AGC_EINUSE. */
struct sqlite3;
int agc_plan_count_rows(agc_plan *p, struct sqlite3 *db, size_t dbi);
/* The same for the session's record rows (agc_rowset.record). */
int agc_plan_add_record_rows(agc_plan *p, size_t db, const char *table, const char *column);
/* Add the writer lock file rel beneath root of session (coord: the coordination lock's name
 * in the same dir, static): 1 added (there), 0 added as absent, or not a regular file (a
 * refusal: R2, R8), -1. */
int agc_plan_add_lock(agc_plan *p, size_t root, const char *rel, const char *coord, const char *session);
/* The lock file's name in its dir. */
const char *agc_plan_lock_leaf(const agc_plan_lock *l);
/* A surviving fork that reads the session's history (once). 0 or -1. */
int agc_plan_add_fork(agc_plan *p, const char *id);
/* Watch a file (rel beneath root) for holders without removing it. 1 added, 0 absent, -1. */
int agc_plan_add_watch(agc_plan *p, size_t root, const char *rel);
bool agc_plan_empty(const agc_plan *p);

#define AGC_LS_NO_GATE ((size_t)-1)

/* What ls collects from an adapter. */
typedef struct agc_ls_sink {
	/* A session, and the gate entry (gate_new) whose answer is its "live" (AGC_LS_NO_GATE:
	 * info->live as it is). */
	int (*add)(struct agc_ls_sink *s, const agc_session_info *info, size_t gate);
	/* Something the listing could not read, for the caller to say (R2): never skipped
	 * silently. The message is copied. */
	void (*warn)(struct agc_ls_sink *s, const char *msg);
	/* R5, SPEC "live in ls": what the in-use gate of a session would look at, gathered while
	 * listing, so that one scan of the process table answers for every session. gate_new: a
	 * session of agent (its index in agc_adapter_table); the others add to it: an id whose
	 * argv or environment holds it (its own, a child's), a file or dir of it, its project dir
	 * (agc_adapter.agent_proc's rule), or that it is live already (a registry says so, or it
	 * cannot be told). Use the agc_ls_gate_* helpers (session.h). */
	size_t (*gate_new)(struct agc_ls_sink *s, size_t agent);
	void (*gate_id)(struct agc_ls_sink *s, size_t g, const char *id);
	void (*gate_file)(struct agc_ls_sink *s, size_t g, dev_t dev, ino_t ino);
	void (*gate_agent_cwd)(struct agc_ls_sink *s, size_t g, dev_t dev, ino_t ino);
	void (*gate_live)(struct agc_ls_sink *s, size_t g);
	/* live because process pid holds it (a registry entry of a live pid, a held lock): ps
	 * names the process; 0 when the lock's holder cannot be seen (gate_live's meaning) */
	void (*gate_held)(struct agc_ls_sink *s, size_t g, pid_t pid, agc_why why);
	/* g is a child of parent: whatever holds g holds parent too (its purge takes g along) */
	void (*gate_parent)(struct agc_ls_sink *s, size_t g, size_t parent);
} agc_ls_sink;

typedef struct agc_adapter {
	const char *name;
	/* Its AGC_AGENT_* value (agentgc.h): stable, never a table index. */
	unsigned bit;
	/* Canonicalise an id per the agent's grammar (R1): 0, or AGC_EUNSAFE. */
	int (*id_canon)(const char *in, char *out);
	/* Whether id (in the form given, not canonicalised) is whole as the agent makes its ids,
	 * so that no other id starts with it and no prefix look-up is needed. */
	bool (*id_whole)(const char *id);
	/* Whether a canonical id is one of a session that lives only inside its parent's dirs
	 * and goes only with it (a Claude sub-agent). May be NULL. */
	bool (*inside_parent)(const char *id);
	/* Resolve the agent's roots. */
	int (*roots)(agc_ctx *ctx, agc_rootset *rs);
	/* Find every artifact of plan->id and its children, read-only. */
	int (*discover)(agc_plan *plan);
	/* discover finds holders of its own (a registry): the re-check just before each removal
	 * runs it with plan->holders_only; an adapter without one is not asked */
	bool registry;
	/* A descendant that a kept id also reaches stays when its ancestor goes (SPEC
	 * "Relations": Codex sub-agents, each a thread of its own): in a prune with a keep list,
	 * agc_plan_add_id leaves the ids of the keep closure (agc_ctx.spare) out of the plan,
	 * so its relations are not followed through them, and a hint names each. Without it, a
	 * plan that reaches a kept id is skipped whole ("kept"). */
	bool spares_kept;
	/* Stream the agent's sessions (unsorted; the core filters, sorts and limits). */
	int (*list)(agc_ctx *ctx, const agc_rootset *rs, const agc_ls_opts *opts, agc_ls_sink *sink);
	/* Environment variables that name the session of a process the agent started
	 * (n_env_names of them, and a NULL after them). */
	const char *const *env_names;
	size_t n_env_names;
	/* A shared service that holds every session's files and never counts as a holder. */
	bool (*exempt)(const char *argv, size_t len, void *ud);
	/* That service as a person knows it, for hints ("'opencode serve --service'"); may be NULL. */
	const char *service;
	/* R5: whether argv (NUL-separated) is the agent's own process, for the rule on agent
	 * processes without a registry entry (plan->agent_cwd). May be NULL. */
	bool (*agent_proc)(const char *argv, size_t len);
	/* R5: whether a live registry entry of the agent accounts for pid (it runs a session
	 * of its own). Called from the gate's threads; may be NULL. */
	bool (*accounted)(const struct agc_plan *p, pid_t pid);
	/* The same for ls, from the agent's roots. May be NULL. */
	bool (*accounted_ls)(agc_ctx *ctx, const agc_rootset *rs, pid_t pid);
	/* What root i of rs holds, said by agentgc roots where the agent's layout is not
	 * established (agc_root_info.holds): malloc'd text, NULL for nothing. May be NULL. */
	char *(*root_holds)(const agc_rootset *rs, size_t i);
	/* Per-run state for many ids (a purge of many, its residual): made once, given to each
	 * discovery as plan->run, freed at the end. The adapter reuses what it holds only
	 * while the file or dir it came from is unchanged (agc_filekey). May be NULL. */
	void *(*run_new)(void);
	void (*run_free)(void *run);
	/* The state after the removals of a stretch and the rewrite of the shared files (R7),
	 * instead of a new one: what was read of files goes, and only what is known to be as its
	 * file or dir is now may stay (a dir listing its watch told nothing of, dirwatch.h).
	 * NULL: the engine frees the state and makes a new one. */
	void (*run_renew)(void *run);
	/* Close what the run's state holds open (its read-only database connections) before a
	 * purge opens a database to write: an idle WAL reader keeps a lock on the file, and with
	 * it SQLite keeps a closed connection's descriptor for the next open of that file in this
	 * process, which the check that the file opened is the one checked cannot tell (R2).
	 * NULL: the state holds nothing open. */
	void (*run_close)(void *run);
	/* Whether nothing names artifact a of plan p any more (AGC_ART_DEFERRED), read from run,
	 * a state made after the shared files were rewritten: 1 (it may go), 0 (still named, or
	 * that cannot be told: it stays), -1 on an error. NULL: the adapter defers nothing. */
	int (*unnamed)(agc_plan *p, const agc_artifact *a, void *run);
	/* The agent's databases that many sessions share (compact): cb(root, rel, ud) for each
	 * that is there now, in a stable order; a store that is one session's own (a Cursor
	 * chat's store.db) is not one of them. Returns 0, -1, or what cb returned when nonzero.
	 * May be NULL (no database). */
	int (*databases)(agc_ctx *ctx, const agc_rootset *rs,
			 int (*cb)(size_t root, const char *rel, void *ud), void *ud);
	/* ps and stop (SPEC "ps and stop"): whether argv (NUL-separated) is a process of the
	 * agent: its executable, or a runtime running its script (agc_argv_prog). NULL: none is
	 * known. */
	bool (*is_proc)(const char *argv, size_t len);
	/* whether argv is one of the agent's shared services, which stop never signals; how a
	 * person releases a session from it (for the hint). May be NULL. */
	bool (*is_service)(const char *argv, size_t len);
	const char *release;
	/* the signal that makes the agent end its session cleanly (Claude: SIGHUP, which
	 * removes its registry entry and socket); 0: SIGTERM */
	int stop_signal;
	/* the agent's own status of process pid where it records one (Claude's registry
	 * status, of a live entry only): copied into out (size bytes), true; false: none */
	bool (*proc_state)(agc_ctx *ctx, const agc_rootset *rs, pid_t pid, char *out, size_t size);
	/* stop: the session a registry entry of pid names, only when it is proven to be this
	 * very process (its recorded start time equals the kernel's, in this pid namespace):
	 * its canonical id into id_out (AGC_ID_MAX bytes), true. Anything that cannot be proven
	 * (no entry, unreadable, unparseable, no start time, another namespace) is false. May
	 * be NULL (no registry). */
	bool (*proc_session)(agc_ctx *ctx, const agc_rootset *rs, pid_t pid, char *id_out);
	/* stop: the options whose value is the session a process of the agent runs ("--resume"):
	 * an argv that merely contains the id (a prompt, a path) proves nothing. NULL-terminated;
	 * NULL: none */
	const char *const *session_opts;
	/* stop: an open file is no proof that a process runs the session when every file of it
	 * the gate watches is shared by many sessions (OpenCode's database) */
	bool stop_no_open_file;
} agc_adapter;

extern const agc_adapter *const agc_adapter_table[]; /* NULL-terminated */
/* Every AGC_AGENT_* bit the library knows: its adapters' and the planned agents'. */
unsigned agc_agent_bits_known(void);

/* The adapter's roots, resolved once per context. */
const agc_rootset *agc_ctx_roots(agc_ctx *ctx, size_t agent);

/* The absolute path of rel beneath root (malloc'd), for reports. */
char *agc_plan_abspath(const agc_rootset *rs, size_t root, const char *rel);

/* The keep closure (SPEC "Relations", prune's keep list): each of ids (any case; ids outside
 * the agent's grammar are skipped) and every session that goes with it when it is purged (its
 * sub-agents at any depth), found by the purge's own discovery, so that what a purge would take
 * with a kept id is kept too. -1 with the error set when the relations cannot be read (a store
 * of the agent that cannot be read, a dir that cannot be listed): then no session of the agent
 * may be taken for not being kept. On 0, *out holds *n_out distinct canonical ids, sorted by
 * strcmp (agc_keep_closure_free). */
int agc_keep_closure(agc_ctx *ctx, size_t agent, const char *const *ids, size_t n, char ***out, size_t *n_out);

/* What a prune asks of a purge of many ids (agc_purge_guarded), checked on each id's own
 * discovery, in the run, before its gate: */
typedef struct agc_guard {
	/* sorted (strcmp) canonical ids: a session any of whose ids (itself or one that goes with
	 * it) is one of them is skipped, "kept" */
	char *const *keep;
	size_t n_keep;
	/* > 0: a session whose last activity (the newest mtime of its artifacts, its record's
	 * time) is later than now - settle_ms, or cannot be told, is skipped, "unsettled" */
	int64_t settle_ms;
	/* only orphans: a session whose record discovery finds (an AGC_ART_RECORD artifact that
	 * is no AGC_ART_POINTER, a record row) is skipped, "recorded" */
	bool orphans_only;
	/* asked before each id once one of the run was removed: true leaves that id and the rest
	 * untouched, their reports NULL (out_done says how many were made) */
	bool (*stop)(void *ud);
	/* called once when every id was discovered, before the first gate (a test hook) */
	void (*discovered)(void *ud);
	void *ud;
	/* each adapter's state for the run (agc_adapter.run_new), kept from one call to the
	 * next by the caller (a prune's batches) and renewed as after a stretch before it is
	 * used again; NULL: the call makes its own. The caller frees what is left in it. */
	void **runs;
} agc_guard;

/* agc_compact of only the databases whose absolute paths (as agc_plan_abspath gives them) are
 * among paths (sorted here): prune --scrub's rebuild, once per database at the end of the run.
 * flags: AGC_PURGE_DRY_RUN or 0. Returns 0 or -1. */
int agc_compact_paths(agc_ctx *ctx, unsigned flags, char **paths, size_t n,
		      int (*cb)(const agc_compact_info *ci, void *ud), void *ud);

/* agc_purge_many under a guard (NULL: none); *out_done (may be NULL) the number of ids, from
 * the first, whose reports were made. A session the gate finds in use is skipped, "live". */
int agc_purge_guarded(agc_ctx *ctx, const char *agent, const char *const *ids, size_t n, unsigned flags,
		      const agc_guard *g, agc_report **out, size_t *out_done);
void agc_keep_closure_free(char **v, size_t n);

/* The plan of session id of agent as show discovers it, sized (read-only); run: the adapter's
 * state for many ids (agc_adapter.run_new) or NULL. 0, or -1 (error set; p released). */
int agc_plan_discover(agc_ctx *ctx, size_t agent, const char *id, void *run, agc_plan *p);

#endif
