/* The process table, implemented per platform (proc-linux.c reads /proc). */
#ifndef AGC_PROC_H
#define AGC_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"

/* A file identity: device and inode. */
typedef struct agc_devino {
	dev_t dev;
	ino_t ino;
} agc_devino;

typedef struct agc_proc {
	pid_t pid;
	pid_t ppid;
	uid_t uid;                 /* real uid */
	unsigned long long start;  /* start time: clock ticks since boot (Linux stat field 22), or
				      through ps epoch seconds; compare one backend's with its own, or
				      use agc_proc_start_ms, agc_proc_start_is_ticks */
	char comm[64];             /* the kernel's short name */
	char state;                /* the kernel's state letter (R running, S sleeping, Z zombie...) */
} agc_proc;

/* Call cb for every process visible under procroot (normally "/proc"). A process that vanishes
 * mid-scan is skipped. cb returns 0 to go on, nonzero to stop (that value is returned).
 * Returns 0, or -1 (error set) when the process table cannot be read at all. */
int agc_proc_each(const char *procroot, int (*cb)(const agc_proc *p, void *ud), void *ud);

/* The same, listing pids only: nothing of a process is read (cheapest pass). */
int agc_proc_each_pid(const char *procroot, int (*cb)(pid_t pid, void *ud), void *ud);

/* The same with an identity of each process, which an earlier listing's differs from when the
 * pid now names another process or the process has run another program since (an exec): the
 * pid's inode number in /proc as the listing gives it (d_ino: the kernel makes a new /proc/PID
 * inode for a new process; one looked up anew changes it too, and counts as new all the same)
 * and a hash of its argv, which an exec replaces while the inode stays. Reads each process's
 * argv: a pass costs about as much as reading every argv once. */
int agc_proc_each_pid_ident(const char *procroot, int (*cb)(pid_t pid, uint64_t ident, void *ud), void *ud);

/* Read one process's stat. Returns 0, AGC_ENOTFOUND when it does not exist, -1 on error. */
int agc_proc_stat(const char *procroot, pid_t pid, agc_proc *out);

/* Read a process's argv (NUL-separated, as the kernel has it) into out, at most max bytes.
 * Returns 0, AGC_ENOTFOUND when the process is gone, AGC_EUNSAFE when it may not be read
 * (EACCES/EPERM), -1 on error. Same for environ. */
int agc_proc_argv(const char *procroot, pid_t pid, size_t max, agc_buf *out);
int agc_proc_environ(const char *procroot, pid_t pid, size_t max, agc_buf *out);

/* argv of a pid the listing just made named (agc_proc_each, agc_proc_each_pid): read now from
 * /proc, or through ps from that listing (no ps run per process). Same returns. */
int agc_proc_argv_listed(const char *procroot, pid_t pid, size_t max, agc_buf *out);

/* Read a process's cwd (readlink of /proc/PID/cwd). Same returns. */
int agc_proc_cwd(const char *procroot, pid_t pid, agc_buf *out);

/* Call cb with the (dev, ino) of each open fd of pid (stat through /proc/PID/fd/N: files and
 * directories alike). cb returns nonzero to stop (returned). Returns 0, AGC_ENOTFOUND (gone),
 * AGC_EUNSAFE (not ours to read), -1 on error. */
int agc_proc_fds(const char *procroot, pid_t pid, int (*cb)(const agc_devino *f, void *ud),
		 void *ud);

/* The same for each file mapping in /proc/PID/maps (a mapping outlives the fd it was made
 * from); neighbouring regions of one file are reported once. Same returns. */
int agc_proc_maps(const char *procroot, pid_t pid, int (*cb)(const agc_devino *f, void *ud),
		  void *ud);

/* agc_proc_fds, then agc_proc_maps when with_maps. Same returns. */
int agc_proc_files(const char *procroot, pid_t pid, bool with_maps,
		   int (*cb)(const agc_devino *f, void *ud), void *ud);

/* The (dev, ino) of a process's current directory (stat through /proc/PID/cwd). Returns 0,
 * AGC_ENOTFOUND (gone), AGC_EUNSAFE (not ours to read), -1 on error. */
int agc_proc_cwd_id(const char *procroot, pid_t pid, agc_devino *out);

/* The same reads on a process's dir opened once (agc_proc_open): each opens or stats its file
 * relative to it (openat, fstatat), so a scan builds no path per read, and every read of one
 * process sees that process even when its pid is reused meanwhile (the old dir then answers
 * as gone). pid only names the process in messages. Same returns as the functions above. */
int agc_proc_open(const char *procroot, pid_t pid);  /* the dir's fd, or a negative code */
/* The same under the process table's own dir, opened once for a scan (rootfd: an O_PATH or
 * O_RDONLY fd of procroot): one name looked up per process. */
int agc_proc_open_in(int rootfd, pid_t pid);
int agc_proc_stat_at(int pfd, pid_t pid, agc_proc *out);
int agc_proc_argv_at(int pfd, pid_t pid, size_t max, agc_buf *out);
int agc_proc_environ_at(int pfd, pid_t pid, size_t max, agc_buf *out);
int agc_proc_cwd_id_at(int pfd, pid_t pid, agc_devino *out);
int agc_proc_fds_at(int pfd, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud);
int agc_proc_maps_at(int pfd, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud);

/* 1 when pid exists (kill(pid, 0) succeeds or fails with EPERM), 0 when it does not. */
int agc_proc_alive(pid_t pid);

/* When process p started, in epoch ms. Returns 0 or -1. */
int agc_proc_start_ms(const char *procroot, const agc_proc *p, int64_t *out);
/* Whether p's start time is ticks (clock ticks since boot: Linux's /proc/PID/stat field 22,
 * as Claude records it): 1 yes, 0 no, -1 when that cannot be told. Exact from /proc; through
 * ps, whose start times are whole seconds, within two seconds. */
int agc_proc_start_is_ticks(const char *procroot, const agc_proc *p, unsigned long long ticks);

/* Clock ticks per second and boot time (epoch ms, from btime in /proc/stat), for turning start
 * ticks into wall time. Return 0 or -1. */
long agc_proc_ticks_per_sec(void);
int agc_proc_boot_ms(const char *procroot, int64_t *out);

/* This process's pid as procroot lists it (its self link): in a pid namespace below the one
 * procroot shows, getpid() names another process there. 0 when procroot is a procfs that
 * does not list this process. */
pid_t agc_proc_self(const char *procroot);

/* The pids of this process and all its ancestors, up to pid 1, as procroot lists them (none
 * when it lists no such process). listed: the caller has just listed every process
 * (agc_proc_each_pid_ident) for the scan this begins, which may then read that listing (the
 * ps backend runs ps once for both, not twice). Returns 0 or -1; *out is a malloc'd array the
 * caller frees. */
int agc_proc_self_and_ancestors(const char *procroot, bool listed, pid_t **out, size_t *n);

/* The reads of the scan under way (the listing agc_proc_self_and_ancestors just made) are of
 * these pids only: a backend that lists open files and environments for the whole table at
 * once (ps and lsof) lists them for these alone. Nothing is left unread by it: a read of
 * another pid lists every process's. Nothing to do for /proc. */
void agc_proc_scope(const char *procroot, const pid_t *pids, size_t n);

#endif
