/* Agents' locks, as the agents take them: the lock kinds of shared files (a table, one row per
 * kind), and a session's writer lock held from the gate to the end of its purge. */
#ifndef AGC_LOCKS_H
#define AGC_LOCKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How an agent guards a shared file while it writes it. The adapter names its file's kind
 * and parameters (agc_lock_spec); the engine knows the kinds, never an agent. */
typedef enum agc_lock_kind {
	/* no lock: the agent itself rewrites the file by a temp file and a rename, so a rename
	 * is all a rewrite needs (Codex's session_index.jsonl) */
	AGC_LOCK_RENAME = 0,
	/* proper-lockfile: a dir "<file><suffix>" made with mkdir, its mtime refreshed while
	 * held; older than stale_ms it may be broken (Claude's history.jsonl) */
	AGC_LOCK_MKDIR,
	/* flock(LOCK_EX) on the file itself, taken by non-blocking tries; writers open it with
	 * O_APPEND and lock that fd before each line (Codex's history.jsonl) */
	AGC_LOCK_FLOCK,
} agc_lock_kind;

typedef struct agc_lock_spec {
	agc_lock_kind kind;
	const char *suffix;    /* MKDIR: the lock dir's name after the file's */
	int64_t stale_ms;      /* MKDIR: a lock older than this may be broken */
	int64_t hold_ms;       /* MKDIR: a hold longer than this counts as lost (the agent may
				  have broken it as stale): refreshed and checked before the
				  rename */
	unsigned tries;        /* attempts before the lock counts as held */
	int64_t interval_ms;   /* between attempts */
} agc_lock_spec;

/* A shared file's lock while it is held. */
typedef struct agc_lock_hold {
	const agc_lock_spec *spec;
	int dfd;               /* borrowed: the file's dir */
	int fd;                /* borrowed: the file, as it was checked (FLOCK locks it) */
	char name[300];        /* MKDIR: the lock dir's name beneath dfd */
	ino_t ino;             /* MKDIR: the lock dir we made */
	int64_t at_us;         /* when it was taken (monotonic) */
	const char *procroot;  /* where the kernel's lock table is read (NULL: /proc) */
	bool held;
} agc_lock_hold;

/* Take the lock of the file leaf beneath dfd, whose fd (opened and checked by the caller) is
 * fd; spec NULL is AGC_LOCK_RENAME. dry: only look whether it is held (a flock in the kernel's
 * lock table under procroot, which takes nothing; where the table cannot tell, a try that lets
 * go at once), keep nothing. Returns
 * 0 (taken, or free for a dry run), AGC_EINUSE (held by someone else: error set) or -1. */
int agc_lock_take(agc_lock_hold *h, const agc_lock_spec *spec, int dfd, const char *leaf, int fd,
		  bool dry, const char *procroot);
/* Just before the file is replaced: the hold is still good (refreshed where the kind
 * refreshes). 0, or AGC_EINUSE (lost: error set; nothing to release any more). */
int agc_lock_keep(agc_lock_hold *h);
/* Release what take took (nothing when it took nothing). */
void agc_lock_release(agc_lock_hold *h);

/* The proper-lockfile primitives the MKDIR kind is made of. */
int agc_lock_mkdir_take(int dirfd, const char *name, int64_t stale_ms, int64_t now_ms);
int agc_lock_mkdir_release(int dirfd, const char *name);
bool agc_lock_mkdir_fresh(int dirfd, const char *name, int64_t stale_ms, int64_t now_ms);

/* ---- a session's writer lock (Codex's thread-writer-locks/<T>.lock) ------------------------
 * An exclusive flock on a lock file of the session, which the agent takes only while holding
 * an exclusive flock on a coordination file in the same dir, and releases (unlinking the file
 * when it can lock it again) under that coordination lock too. */

/* Who holds a flock on the file (dev, ino), from the kernel's table of locks
 * (procroot/locks): cb(pid, ud) for each lock on it, pid 0 when its owner is outside this pid
 * namespace. dev_differs: set when a lock on that inode was seen with another device (btrfs
 * and overlayfs show a device other than st_dev): the caller confirms by a probe. Returns 1
 * when the table was read, 0 when there is none (another system: probe instead), -1. */
int agc_flocks_of(const char *procroot, dev_t dev, ino_t ino, void (*cb)(pid_t pid, void *ud), void *ud,
		  bool *dev_differs);
/* That table read once, for many questions (a listing of every thread's lock). */
typedef struct agc_flock {
	unsigned long maj, min;
	ino_t ino;
	pid_t pid; /* 0: outside this pid namespace, or an OFD lock */
} agc_flock;
typedef struct agc_flocks {
	agc_flock *v;
	size_t n, cap;
	bool loaded;
} agc_flocks;
/* 1 read (t filled), 0 none (t empty, not loaded), -1. */
int agc_flocks_load(const char *procroot, agc_flocks *t);
/* agc_flocks_of's answer from the table read. */
void agc_flocks_find(const agc_flocks *t, dev_t dev, ino_t ino, void (*cb)(pid_t pid, void *ud), void *ud,
		     bool *dev_differs);
void agc_flocks_free(agc_flocks *t);
/* Whether that table shows every lock: only in the initial pid namespace (the kernel leaves
 * out locks of processes outside the reader's), as procroot/self/ns/pid tells. */
bool agc_flocks_complete(const char *procroot);

/* Probe without the kernel's table: under the coordination lock coord (a name in dirfd; taken
 * with LOCK_EX by non-blocking tries, as the agent holds it only briefly; a missing one is not
 * taken), try LOCK_EX|LOCK_NB on name and let go at once. Never creates either file. Returns 1
 * when held, 0 when free, AGC_ENOTFOUND when name does not exist, -1 (error set: the
 * coordination lock stayed held, or the file could not be opened). */
int agc_sesslock_probe(int dirfd, const char *coord, const char *name);

/* Take the session lock for a purge: under coord, LOCK_EX|LOCK_NB on name, kept (*fd) until
 * agc_sesslock_release. With create, coord and name are made when missing (0644, owned as
 * dirfd's dir), as the agent makes them, so that an agent resuming the session meanwhile finds
 * it taken (*created: name was made here). Neither is ever opened through a link, and only a
 * regular file is locked (R2, R8). Returns 0, AGC_ENOTFOUND (no lock file, without create),
 * AGC_EINUSE (held by another: error set), -1 (error set: what is there cannot be locked). */
int agc_sesslock_take(int dirfd, const char *coord, const char *name, bool create, int *fd, bool *created);
/* Release it; with unlink, under coord, remove name when it is still the file fd locks (as
 * the agent's own release does). Returns 1 when removed, 0 when only released, -1 (error set:
 * released, not removed). */
int agc_sesslock_release(int dirfd, const char *coord, const char *name, int fd, bool unlink_it);

#endif
