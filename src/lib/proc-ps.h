/* The process table from ps(1) and lsof(8) (proc-ps.c): the backend of systems without /proc,
 * and of Linux with AGENTGC_PROC_BACKEND=ps. proc.h's calls turn to it when agc_procps_on(). */
#ifndef AGC_PROC_PS_H
#define AGC_PROC_PS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "proc.h"

/* Whether the process table is read through ps and lsof (AGENTGC_PROC_BACKEND=ps on Linux;
 * always elsewhere). A value of the variable that names no backend is also "on": every call
 * then fails with that said, so the gate answers in use. */
bool agc_procps_on(void);

/* One line of `ps -o pid=,ppid=,uid=,stat=,lstart=,command=` (TZ=UTC0, LC_ALL=C). */
typedef struct agc_procps_ent {
	pid_t pid, ppid;
	uid_t uid;
	char state;        /* the first letter of stat (Z: a zombie) */
	int64_t start;     /* epoch seconds, UTC */
	const char *cmd;   /* into the line: the command, its arguments joined by spaces */
	size_t cmdlen;
} agc_procps_ent;

/* Parse such a line. Returns 0, or -1 for a line that is not one (a header, a warning). */
int agc_procps_parse_line(const char *line, agc_procps_ent *e);
/* Parse an lstart ("Wed Jul 29 14:40:53 2026", in UTC and the C locale) into epoch seconds
 * (timegm); *end (may be NULL) past it. Returns 0 or -1. */
int agc_procps_parse_lstart(const char *s, const char **end, int64_t *secs);

/* One file of `lsof -F pfDin`. */
typedef struct agc_procps_file {
	pid_t pid;
	char fd[16];       /* "cwd", "txt", "mem", "3", ... */
	bool has_dev, has_ino;
	dev_t dev;
	ino_t ino;
	const char *name;  /* may be NULL */
} agc_procps_file;

/* Parse lsof's output (modified in place), cb for each file with a device and an inode
 * (nonzero stops, returned). */
int agc_procps_parse_lsof(char *text, size_t len, int (*cb)(const agc_procps_file *f, void *ud), void *ud);

/* proc.h's calls through ps and lsof (same returns). The _at forms read the listing of the
 * scan (agc_procps_each_pid_ident made it); the others ask ps about that one pid, fresh. */
int agc_procps_each_pid_ident(int (*cb)(pid_t pid, uint64_t ident, void *ud), void *ud);
int agc_procps_each_pid(int (*cb)(pid_t pid, void *ud), void *ud);
int agc_procps_each(int (*cb)(const agc_proc *p, void *ud), void *ud);
int agc_procps_stat(pid_t pid, agc_proc *out);
int agc_procps_argv(pid_t pid, size_t max, agc_buf *out);
int agc_procps_stat_at(pid_t pid, agc_proc *out);
int agc_procps_argv_at(pid_t pid, size_t max, agc_buf *out);
int agc_procps_environ_at(pid_t pid, size_t max, agc_buf *out);
int agc_procps_fds(pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud);
int agc_procps_maps(pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud);
int agc_procps_cwd_id(pid_t pid, agc_devino *out);
int agc_procps_cwd(pid_t pid, agc_buf *out);
int agc_procps_open(pid_t pid);
int agc_procps_self_and_ancestors(bool listed, pid_t **out, size_t *n);
void agc_procps_scope(const pid_t *pids, size_t n);

#endif
