/* Who holds a session: one pass over the process table matching argv, environment, open files
 * and mappings (by device and inode) and current directories against what the session owns
 * (SPEC R5). */
#ifndef AGC_HOLDERS_H
#define AGC_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proc.h"

typedef enum agc_why {
	AGC_WHY_REGISTRY = 0, /* an agent registry names the session and its pid is alive */
	AGC_WHY_CMDLINE,      /* an argument contains the id */
	AGC_WHY_ENVIRON,      /* the environment names the id (CODEX_THREAD_ID=...) */
	AGC_WHY_OPEN_FILE,    /* an fd or mapping of one of the session's files or dirs */
	AGC_WHY_LOCK,         /* the agent's lock for the session is held */
	AGC_WHY_UNREADABLE,   /* the process table could not be read */
	AGC_WHY_CWD,          /* the current directory is inside the session, or an agent process
				 without a registry entry runs at the session's project */
} agc_why;

/* "registry", "cmdline", "environ", "open-file", "lock", "process-table", "cwd" */
const char *agc_why_name(agc_why why);

typedef struct agc_holder {
	pid_t pid;
	agc_why why;
	char *command;   /* argv joined with spaces, bounded; malloc'd */
	char *what;      /* the id or the label of the file matched; malloc'd, may be NULL */
	size_t file;     /* for AGC_WHY_OPEN_FILE and AGC_WHY_CWD: index into the query's files,
			    AGC_HOLDER_NO_FILE when the holder matched none of them */
	size_t session;  /* a query of many sessions: the session held (id_session, a file's
			    session, an agent_cwd entry's); 0 otherwise */
} agc_holder;

#define AGC_HOLDER_NO_FILE ((size_t)-1)

typedef struct agc_holders {
	agc_holder *v;
	size_t n, cap;
} agc_holders;

void agc_holders_release(agc_holders *h);
/* Add a holder (strings copied). Returns 0 or -1. Same (pid, why, what) is added once. */
int agc_holders_add(agc_holders *h, pid_t pid, agc_why why, const char *command, const char *what,
		    size_t file);
/* The same for a session of a query of many: same (pid, why, what, session) is added once. */
int agc_holders_add_session(agc_holders *h, pid_t pid, agc_why why, const char *command,
			    const char *what, size_t file, size_t session);

/* The command of process pid as a holder shows it (argv joined, "[comm]" without one, "pid N"
 * when neither can be read); malloc'd, NULL when out of memory. */
char *agc_holder_command_of(const char *procroot, pid_t pid);

/* The executable argument of argv (NUL-separated, len bytes): argv[0], or when argv[0] is a
 * runtime (node, nodejs, bun, deno) the script it runs (its first argument that is no option).
 * Its basename goes to *base (bl bytes). Returns false when argv is empty or a runtime runs no
 * script. */
bool agc_argv_prog(const char *argv, size_t len, const char **base, size_t *bl);
/* Whether argv gives id as the value of one of opts (NULL-terminated option names that take a
 * session id: "--resume ID", "--resume=ID"), the id compared ASCII case-insensitively. */
bool agc_argv_session(const char *argv, size_t len, const char *const *opts, const char *id);
/* Whether one argument of argv equals arg. */
bool agc_argv_has(const char *argv, size_t len, const char *arg);

typedef struct agc_gate_file {
	agc_devino id;
	const char *label;   /* shown as the holder's "what" (a path) */
	size_t session;      /* a query of many sessions: whose file it is */
	bool no_exempt;      /* the query's exempt never applies to it (a file of an agent without
				that shared service, in a query of many agents) */
} agc_gate_file;

typedef struct agc_gate_query {
	const char *procroot;             /* "/proc" normally */
	const char *const *ids;           /* matched as substrings of any argv element, ASCII case-insensitive */
	size_t n_ids;
	const char *const *env_names;     /* environment variables whose value, equal to an id
					     (case-insensitive), makes the process a holder */
	size_t n_env_names;
	/* A query of many sessions (ls, R5): the session of each id (NULL: all 0), and for each
	 * id the NULL-terminated names of its agent's variables in place of env_names (NULL:
	 * env_names for every id). */
	const size_t *id_session;
	const char *const *const *id_env_names;
	/* Many sessions: a process that holds one may hold another, so fds and maps are read
	 * whatever it holds already (the one-session shortcut would hide the others). */
	bool every_session;
	/* Files and dirs whose holders count: an open fd, a mapping (with_maps) or, for a dir, a
	 * current directory on one of them makes a holder. */
	const agc_gate_file *files;
	size_t n_files;
	bool with_maps;                   /* also look at /proc/PID/maps */
	/* A process that this returns true for is never a holder through open files (a shared
	 * service such as OpenCode's `serve --service`); argv is NUL-separated. May be NULL. */
	bool (*exempt)(const char *argv, size_t argv_len, void *ud);
	void *exempt_ud;
	/* An agent's own process that keeps no registry entry (R5): a process whose current
	 * directory is agent_cwd (the session's project), whose argv agent_proc accepts, and for
	 * which accounted (may be NULL) does not say that a live registry entry accounts for it,
	 * is a holder, why cwd. agent_cwd NULL: no such rule. */
	const agc_gate_file *agent_cwd;
	size_t n_agent_cwd;               /* entries of agent_cwd; 0 with agent_cwd set: one */
	bool (*agent_proc)(const char *argv, size_t argv_len);
	bool (*accounted)(pid_t pid, void *ud);
	void *accounted_ud;
	/* A re-check of some processes only (a purge of many ids: those that appeared since the
	 * last full scan, and the agent's own): when only_pids is set, the process table is not
	 * listed and just these n_only_pids pids are scanned (a gone one is skipped). */
	const pid_t *only_pids;
	size_t n_only_pids;
	/* The caller has just listed every process (agc_proc_each_pid_ident) for this scan, and
	 * anything that started since is its to check: the scan may read that listing (the ps
	 * backend then runs ps once, not twice). */
	bool listed;
} agc_gate_query;

/* Scan every process once. agentgc itself and its ancestors never count for ids, env_names and
 * current directories; agentgc itself never counts for files. A process that vanishes mid-scan,
 * or whose details may not be read (another user's, as a normal user), is skipped. Mappings are
 * read only for a process that nothing else has made a holder (they are the costly part).
 * Holders are appended to out, in the order of the process listing. accounted may be called
 * from several threads at once (one per CPU, bounded). Returns 0, or -1 (error set) when the process table cannot be read at all: the caller then treats the
 * session as in use. When only open files or current dirs cannot be read (lsof missing, through
 * ps), every argv and environment is still looked at: -1 then comes with out holding what those
 * named. */
int agc_holders_scan(const agc_gate_query *q, agc_holders *out);

/* The processes other than agentgc that hold the database path, its -wal or its -shm open or
 * mapped (no service exempt: whoever has it open would see it rebuilt): R6's condition for a
 * rebuild or a checkpoint that must not surprise a reader. 0 (out filled) or -1 when the
 * process table cannot be read. */
int agc_db_holders(const char *procroot, const char *path, agc_holders *out);

/* A snapshot of the process table for matching very many sessions' files (ls, R5 "live in
 * ls"): one scan keeps the (dev, ino) of every process's fds, mappings and current dir, and
 * the current dirs of the agent's own processes, and each session's files are then matched as
 * the walk meets them, with the rules of agc_holders_scan: agentgc and its ancestors never
 * count for current dirs, agentgc itself never for files, a process that vanishes or may not
 * be read is skipped. It grows with the processes, not with the sessions. (Ids are matched
 * after the walk by agc_holders_scan, whose index needs no copy of any argv.) */
typedef struct agc_snap agc_snap;

typedef struct agc_snap_opts {
	const char *procroot;              /* "/proc" normally */
	/* a shared service: its fds and mappings hold only files whose no_exempt is set */
	bool (*exempt)(const char *argv, size_t argv_len, void *ud);
	void *exempt_ud;
	/* the agent's own processes, for agc_snap_agent_cwd; accounted (may be NULL) is asked
	 * only there, on the caller's thread */
	bool (*agent_proc)(const char *argv, size_t argv_len);
	bool (*accounted)(pid_t pid, void *ud);
	void *accounted_ud;
	/* keep which process holds each file (ps: agc_snap_file_each), not only that one does */
	bool keep_pids;
} agc_snap_opts;

/* Take the snapshot. Returns 0, or -1 (error set) when the process table cannot be read at
 * all: the caller then treats every session as in use. */
int agc_snap_take(const agc_snap_opts *o, agc_snap **out);
void agc_snap_free(agc_snap *s);
/* Whether a process has the file (dev, ino) open or mapped, or as its current dir; an
 * exempt process's fds and mappings count only when no_exempt. */
bool agc_snap_file(const agc_snap *s, dev_t dev, ino_t ino, bool no_exempt);
/* With keep_pids: cb for each process that has (dev, ino) open or mapped (why open-file) or
 * as its current dir (why cwd); serves is set for an exempt service's fd or mapping of a file
 * that is not no_exempt (it holds nothing by it: it serves the session). cb returns nonzero
 * to stop (returned); 0 when done. Without keep_pids each pid is 0. */
int agc_snap_file_each(const agc_snap *s, dev_t dev, ino_t ino, bool no_exempt,
		       int (*cb)(pid_t pid, agc_why why, bool serves, void *ud), void *ud);
/* Whether an agent process (agent_proc) that accounted does not account for runs with
 * (dev, ino) as its current dir. */
bool agc_snap_agent_cwd(const agc_snap *s, dev_t dev, ino_t ino);
/* cb for each such process (nonzero stops, returned). */
int agc_snap_agent_cwd_each(const agc_snap *s, dev_t dev, ino_t ino, int (*cb)(pid_t pid, void *ud),
			    void *ud);

#endif