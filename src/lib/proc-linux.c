/* The process table on Linux, read from a procfs tree (normally "/proc"). Every read is
 * bounded: small files into fixed buffers, argv and environ up to the caller's cap, maps and
 * /proc/stat a line at a time with a fixed line buffer, open fds up to PROC_MAX_FDS. A process
 * that vanishes while it is read is "not found", never an error (psmisc fuser.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/magic.h>

#include "error.h"
#include "hset.h"
#include "ids.h"
#include "proc.h"
#include "proc-ps.h"

#define PROC_STAT_MAX 4096         /* /proc/PID/stat is one line of ~52 numbers and a comm */
#define PROC_STATUS_MAX 16384      /* /proc/PID/status is ~1.5 KiB */
#define PROC_LINE_MAX 8192         /* longer lines (a huge "intr" in /proc/stat) are cut */
#define PROC_MAX_LINES (1u << 22)  /* maps has at most vm.max_map_count (65530) lines */
#define PROC_MAX_FDS 65536         /* open fds looked at per process */
#define PROC_MAX_DEPTH 4096        /* ancestors followed */
#define PROC_LINK_MAX 65536        /* a cwd longer than this is refused */

/* Map an errno from opening or reading a process's file to our codes: gone, not ours to read,
 * or a real error. */
static int proc_errno(int err, const char *what, const char *path)
{
	if (err == ENOENT || err == ESRCH || err == ENOTDIR)
		return agc_error_errno(AGC_ENOTFOUND, err, "cannot %s '%s'", what, path);
	if (err == EACCES || err == EPERM)
		return agc_error_errno(AGC_EUNSAFE, err, "cannot %s '%s'", what, path);
	return agc_error_errno(-1, err, "cannot %s '%s'", what, path);
}

/* Where a read of a process goes: a path (the path functions), or a name under the process's
 * own dir (the functions on an open /proc/PID). The label for a message is made only when
 * there is an error to report. */
typedef struct where {
	const char *path;
	pid_t pid;
	const char *name;
} where;

static int where_errno(int err, const char *what, const where *w)
{
	char label[80];

	if (w->path)
		return proc_errno(err, what, w->path);
	snprintf(label, sizeof(label), "%ld/%s", (long)w->pid, w->name);
	return proc_errno(err, what, label);
}

/* The label of w for a message that is no errno. */
static const char *where_label(const where *w, char *buf, size_t size)
{
	if (w->path)
		return w->path;
	snprintf(buf, size, "%ld/%s", (long)w->pid, w->name);
	return buf;
}

/* Build procroot/PID/name into out, or procroot/name when pid is 0. Returns 0 or -1. This
 * runs several times for every process of a scan: plain copies, no snprintf. */
static int proc_path(char *out, size_t size, const char *procroot, pid_t pid, const char *name)
{
	size_t rl = strlen(procroot), nl = strlen(name), dl = 0;
	char digits[24];
	unsigned long v = (unsigned long)pid;

	if (pid > 0)
		do
			digits[sizeof(digits) - 1 - dl++] = (char)('0' + v % 10);
		while ((v /= 10) != 0);
	if (rl + 1 + dl + (dl ? 1 : 0) + nl + 1 > size)
		return agc_error_set(-1, "path too long under '%s'", procroot);
	memcpy(out, procroot, rl);
	out[rl++] = '/';
	if (dl) {
		memcpy(out + rl, digits + sizeof(digits) - dl, dl);
		rl += dl;
		out[rl++] = '/';
	}
	memcpy(out + rl, name, nl + 1);
	return 0;
}

/* open(2) read-only and close-on-exec, retried on EINTR. */
static int open_ro(const char *path, int flags)
{
	int fd;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | flags);
	while (fd < 0 && errno == EINTR);
	return fd;
}

/* openat(2) relative to a process's dir, read-only and close-on-exec, retried on EINTR. */
static int open_at(int pfd, const char *name, int flags)
{
	int fd;

	do
		fd = openat(pfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | flags);
	while (fd < 0 && errno == EINTR);
	return fd;
}

int agc_proc_open(const char *procroot, pid_t pid)
{
	if (agc_procps_on())
		return agc_procps_open(pid);
	char path[PATH_MAX];
	int fd;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	if (proc_path(path, sizeof(path), procroot, pid, "") < 0)
		return -1;
	/* O_PATH: nothing of the process is read by the open itself; every read that follows
	 * is an openat or fstatat relative to it, so all of them see this one process even
	 * when its pid is reused meanwhile (the old dir then answers ESRCH: gone). */
	do
		fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return proc_errno(errno, "open", path);
	return fd;
}

int agc_proc_open_in(int rootfd, pid_t pid)
{
	if (agc_procps_on())
		return agc_procps_open(pid);
	char digits[24], lb[32];
	size_t dl = 0;
	unsigned long v = (unsigned long)pid;
	int fd;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	digits[sizeof(digits) - 1] = '\0';
	do
		digits[sizeof(digits) - 2 - dl++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	do
		fd = openat(rootfd, digits + sizeof(digits) - 1 - dl, O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		snprintf(lb, sizeof(lb), "%ld", (long)pid);
		return proc_errno(errno, "open", lb);
	}
	return fd;
}

/* Read at most size-1 bytes of a small file into buf, NUL-terminated. Returns 0 (length in
 * *len), AGC_ENOTFOUND, AGC_EUNSAFE, or -1. */
static int read_small(const char *path, char *buf, size_t size, size_t *len)
{
	size_t got = 0;
	ssize_t n;
	int fd, err;

	fd = open_ro(path, 0);
	if (fd < 0)
		return proc_errno(errno, "open", path);
	while (got < size - 1) {
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			return proc_errno(err, "read", path);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return 0;
}

/* Whether path is the root of a procfs mount. */
static bool is_procfs(const char *path)
{
	struct statfs sf;
	int fd = open_ro(path, O_DIRECTORY), rc;

	if (fd < 0)
		return false;
	rc = fstatfs(fd, &sf);
	close(fd);
	return rc == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* A line reader over an fd with a fixed buffer: a line longer than the buffer is handed out
 * cut to PROC_LINE_MAX - 1 bytes and the rest of it is skipped. */
typedef struct line_reader {
	int fd;
	size_t start, end;
	bool eof;
	bool skipping;  /* inside the tail of a cut line */
	char buf[PROC_LINE_MAX];
} line_reader;

static void line_init(line_reader *lr, int fd)
{
	lr->fd = fd;
	lr->start = lr->end = 0;
	lr->eof = lr->skipping = false;
}

/* The next line, without its newline and NUL-terminated; valid until the next call. Returns 1
 * with a line, 0 at the end, or a negative errno. */
static int line_next(line_reader *lr, char **line)
{
	char *nl, *s;
	ssize_t n;

	for (;;) {
		nl = memchr(lr->buf + lr->start, '\n', lr->end - lr->start);
		if (nl) {
			s = lr->buf + lr->start;
			*nl = '\0';
			lr->start = (size_t)(nl - lr->buf) + 1;
			if (lr->skipping) {
				lr->skipping = false;
				continue;
			}
			*line = s;
			return 1;
		}
		if (lr->eof) {
			if (lr->start == lr->end || lr->skipping) {
				lr->start = lr->end;
				return 0;
			}
			/* A last line without a newline. */
			lr->buf[lr->end] = '\0';
			*line = lr->buf + lr->start;
			lr->start = lr->end;
			return 1;
		}
		if (lr->start > 0) {
			memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
			lr->end -= lr->start;
			lr->start = 0;
		}
		if (lr->end == sizeof(lr->buf) - 1) {
			bool cut = !lr->skipping;

			/* A full buffer and no newline: hand out the cut line once, drop its rest. */
			lr->buf[lr->end] = '\0';
			lr->start = lr->end = 0;
			lr->skipping = true;
			if (cut) {
				*line = lr->buf;
				return 1;
			}
		}
		n = read(lr->fd, lr->buf + lr->end, sizeof(lr->buf) - 1 - lr->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			lr->eof = true;
		lr->end += (size_t)n;
	}
}

/* Parse the text of /proc/PID/stat. comm sits in parentheses and may itself hold ')', spaces or
 * "(": the fields are counted from the last ')'. Returns 0 or -1 (error set). */
static int parse_stat(const char *path, char *text, agc_proc *out)
{
	char *lp = strchr(text, '('), *rp = strrchr(text, ')'), *p, *end;
	unsigned long long v;
	size_t clen;
	int field;

	if (!lp || !rp || rp < lp)
		return agc_error_set(-1, "cannot parse '%s': no command in parentheses", path);
	clen = (size_t)(rp - lp - 1);
	if (clen >= sizeof(out->comm))
		clen = sizeof(out->comm) - 1;
	memcpy(out->comm, lp + 1, clen);
	out->comm[clen] = '\0';

	/* Fields after ')' start at 3 (state); ppid is 4, starttime is 22. */
	p = rp + 1;
	for (field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return agc_error_set(-1, "cannot parse '%s': only %d fields", path, field - 1);
		if (field == 3)
			out->state = *p;
		if (field == 4 || field == 22) {
			if (*p < '0' || *p > '9')
				return agc_error_set(-1, "cannot parse '%s': field %d is not a number", path,
						     field);
			errno = 0;
			v = strtoull(p, &end, 10);
			if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
				return agc_error_set(-1, "cannot parse '%s': field %d is not a number", path,
						     field);
			if (field == 4) {
				if (v > (unsigned long long)INT_MAX)
					return agc_error_set(-1, "cannot parse '%s': bad parent pid", path);
				out->ppid = (pid_t)v;
			} else {
				out->start = v;
			}
			p = end;
		} else {
			while (*p && *p != ' ' && *p != '\n')
				p++;
		}
	}
	return 0;
}

/* agc_proc_stat, keeping AGC_EUNSAFE (not ours to read, as under hidepid=1) apart so that
 * agc_proc_each can skip such a process. */
static int proc_stat(const char *procroot, pid_t pid, agc_proc *out)
{
	char path[PATH_MAX], text[PROC_STATUS_MAX];
	agc_proc p;
	size_t len;
	int rc;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	if (proc_path(path, sizeof(path), procroot, pid, "stat") < 0)
		return -1;
	rc = read_small(path, text, PROC_STAT_MAX, &len);
	if (rc < 0)
		return rc;
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	if (parse_stat(path, text, &p) < 0)
		return -1;

	/* The uid is the owner of /proc/PID (as htop and ps take it): one stat instead of
	 * reading status, which the kernel is slow to produce. A process that went between
	 * the two looks leaves the uid unknown, (uid_t)-1, rather than losing the process. */
	p.uid = (uid_t)-1;
	if (proc_path(path, sizeof(path), procroot, pid, "") < 0)
		return -1;
	{
		struct stat dst;

		if (stat(path, &dst) == 0)
			p.uid = dst.st_uid;
	}
	*out = p;
	return 0;
}

int agc_proc_stat(const char *procroot, pid_t pid, agc_proc *out)
{
	if (agc_procps_on())
		return agc_procps_stat(pid, out);
	int rc = proc_stat(procroot, pid, out);

	return rc == AGC_EUNSAFE ? -1 : rc;
}

int agc_proc_stat_at(int pfd, pid_t pid, agc_proc *out)
{
	if (agc_procps_on())
		return agc_procps_stat_at(pid, out);
	char text[PROC_STAT_MAX], lb[80];
	where w = {NULL, pid, "stat"};
	struct stat dst;
	agc_proc p;
	size_t got = 0;
	ssize_t n;
	int fd = open_at(pfd, "stat", 0), err, rc;

	if (fd < 0) {
		rc = where_errno(errno, "open", &w);
		return rc == AGC_EUNSAFE ? -1 : rc;
	}
	while (got < sizeof(text) - 1) {
		n = read(fd, text + got, sizeof(text) - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			rc = where_errno(err, "read", &w);
			return rc == AGC_EUNSAFE ? -1 : rc;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	text[got] = '\0';
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	if (parse_stat(where_label(&w, lb, sizeof(lb)), text, &p) < 0)
		return -1;
	/* the owner of the dir itself, as agc_proc_stat takes it */
	p.uid = fstatat(pfd, "", &dst, AT_EMPTY_PATH) == 0 ? dst.st_uid : (uid_t)-1;
	*out = p;
	return 0;
}

/* A directory entry name that is a pid: decimal digits only, no leading zero, fits pid_t. */
static pid_t name_pid(const char *s)
{
	long v = 0;

	if (*s < '1' || *s > '9')
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return 0;
	}
	return (pid_t)v;
}

pid_t agc_proc_self(const char *procroot)
{
	if (agc_procps_on())
		return getpid();
	char path[PATH_MAX], buf[32];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/self", procroot) < (int)sizeof(path) &&
	    (n = readlink(path, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		return name_pid(buf);
	}
	/* a tree that is no procfs (made up for a test) speaks of this system's pids; a procfs
	 * without a self lists a namespace this process is not in */
	return is_procfs(procroot) ? 0 : getpid();
}

typedef struct each_stat {
	const char *procroot;
	int (*cb)(const agc_proc *p, void *ud);
	void *ud;
} each_stat;

static int each_stat_cb(pid_t pid, void *ud)
{
	each_stat *es = ud;
	agc_proc p;
	int rc = proc_stat(es->procroot, pid, &p);

	/* Gone since the listing, or not ours to read: skipped, as fuser and lsof do. */
	if (rc == AGC_ENOTFOUND || rc == AGC_EUNSAFE)
		return 0;
	if (rc < 0)
		return rc;
	return es->cb(&p, es->ud);
}

int agc_proc_each(const char *procroot, int (*cb)(const agc_proc *p, void *ud), void *ud)
{
	if (agc_procps_on())
		return agc_procps_each(cb, ud);
	each_stat es = {procroot, cb, ud};

	return agc_proc_each_pid(procroot, each_stat_cb, &es);
}

/* The argv of a process is hashed this far at most for its identity. */
#define IDENT_ARGV_MAX ((size_t)256 << 10)

/* The identity of the process at pid (agc_proc_each_pid_ident): its /proc inode, then its argv
 * read through dfd (the listing's /proc). A process gone or unreadable: the inode alone. */
static uint64_t pid_ident(int dfd, const char *name, ino_t ino)
{
	uint64_t h = agc_fnv1a(AGC_FNV_BASIS, &ino, sizeof(ino));
	char path[64], buf[4096];
	size_t total = 0;
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/cmdline", name) >= (int)sizeof(path))
		return h;
	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return h;
	while (total < IDENT_ARGV_MAX) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		h = agc_fnv1a(h, buf, (size_t)n);
		total += (size_t)n;
		/* a short read is the end (read_capped_fd) */
		if ((size_t)n < sizeof(buf))
			break;
	}
	close(fd);
	return h;
}

/* Every pid under procroot, with its identity when ident is set (else 0). */
static int each_pid_dir(const char *procroot, bool ident, int (*cb)(pid_t pid, uint64_t ident, void *ud),
			void *ud)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;
	pid_t pid;

	fd = open_ro(procroot, O_DIRECTORY);
	if (fd < 0)
		return agc_error_errno(-1, errno, "cannot read the process table '%s'", procroot);
	d = fdopendir(fd);
	if (!d) {
		rc = agc_error_errno(-1, errno, "cannot read the process table '%s'", procroot);
		close(fd);
		return rc;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				rc = agc_error_errno(-1, errno, "cannot read the process table '%s'",
						     procroot);
			break;
		}
		pid = name_pid(de->d_name);
		if (pid && (rc = cb(pid, ident ? pid_ident(fd, de->d_name, de->d_ino) : 0, ud)) != 0)
			break;
	}
	closedir(d);
	return rc;
}

int agc_proc_each_pid_ident(const char *procroot, int (*cb)(pid_t pid, uint64_t ident, void *ud), void *ud)
{
	if (agc_procps_on())
		return agc_procps_each_pid_ident(cb, ud);
	return each_pid_dir(procroot, true, cb, ud);
}

struct each_pid {
	int (*cb)(pid_t pid, void *ud);
	void *ud;
};

static int each_pid_cb(pid_t pid, uint64_t ident, void *ud)
{
	const struct each_pid *ep = ud;

	(void)ident;
	return ep->cb(pid, ep->ud);
}

int agc_proc_each_pid(const char *procroot, int (*cb)(pid_t pid, void *ud), void *ud)
{
	struct each_pid ep = {cb, ud};

	if (agc_procps_on())
		return agc_procps_each_pid(cb, ud);
	return each_pid_dir(procroot, false, each_pid_cb, &ep);
}

/* Read all of the open fd into out, at most max bytes (the rest is not read); closes fd. */
static int read_capped_fd(int fd, const where *w, size_t max, agc_buf *out)
{
	size_t want;
	ssize_t n;
	int err;

	while (out->len < max) {
		want = max - out->len;
		if (want > 65536)
			want = 65536;
		if (agc_buf_grow(out, want) < 0) {
			close(fd);
			return -1;
		}
		n = read(fd, out->ptr + out->len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			agc_buf_clear(out);
			return where_errno(err, "read", w);
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->ptr[out->len] = '\0';
		/* The kernel copies cmdline and environ up to the count asked for, page after
		 * page: a short read is the end, and saves a read per process in a scan. */
		if ((size_t)n < want)
			break;
	}
	close(fd);
	return 0;
}

/* Read a whole /proc/PID/<name> into out, at most max bytes (the rest is not read). */
static int read_capped(const char *procroot, pid_t pid, const char *name, size_t max, agc_buf *out)
{
	char path[PATH_MAX];
	where w = {path, pid, name};
	int fd;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	if (proc_path(path, sizeof(path), procroot, pid, name) < 0)
		return -1;
	agc_buf_clear(out);
	fd = open_ro(path, 0);
	if (fd < 0)
		return proc_errno(errno, "open", path);
	return read_capped_fd(fd, &w, max, out);
}

/* The same under an open /proc/PID. */
static int read_capped_at(int pfd, pid_t pid, const char *name, size_t max, agc_buf *out)
{
	where w = {NULL, pid, name};
	int fd;

	agc_buf_clear(out);
	fd = open_at(pfd, name, 0);
	if (fd < 0)
		return where_errno(errno, "open", &w);
	return read_capped_fd(fd, &w, max, out);
}

int agc_proc_argv_at(int pfd, pid_t pid, size_t max, agc_buf *out)
{
	if (agc_procps_on())
		return agc_procps_argv_at(pid, max, out);
	return read_capped_at(pfd, pid, "cmdline", max, out);
}

int agc_proc_environ_at(int pfd, pid_t pid, size_t max, agc_buf *out)
{
	if (agc_procps_on())
		return agc_procps_environ_at(pid, max, out);
	return read_capped_at(pfd, pid, "environ", max, out);
}

int agc_proc_argv(const char *procroot, pid_t pid, size_t max, agc_buf *out)
{
	if (agc_procps_on())
		return agc_procps_argv(pid, max, out);
	return read_capped(procroot, pid, "cmdline", max, out);
}

int agc_proc_argv_listed(const char *procroot, pid_t pid, size_t max, agc_buf *out)
{
	if (agc_procps_on())
		return agc_procps_argv_at(pid, max, out);
	return read_capped(procroot, pid, "cmdline", max, out);
}

int agc_proc_environ(const char *procroot, pid_t pid, size_t max, agc_buf *out)
{
	if (agc_procps_on())
		return agc_procps_environ_at(pid, max, out);
	return read_capped(procroot, pid, "environ", max, out);
}

int agc_proc_cwd(const char *procroot, pid_t pid, agc_buf *out)
{
	if (agc_procps_on())
		return agc_procps_cwd(pid, out);
	char path[PATH_MAX];
	size_t size = 256;
	ssize_t n;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	if (proc_path(path, sizeof(path), procroot, pid, "cwd") < 0)
		return -1;
	agc_buf_clear(out);
	for (;;) {
		if (agc_buf_grow(out, size) < 0)
			return -1;
		n = readlink(path, out->ptr, size);
		if (n < 0)
			return proc_errno(errno, "read the link", path);
		if ((size_t)n < size) {
			out->len = (size_t)n;
			out->ptr[n] = '\0';
			return 0;
		}
		if (size >= PROC_LINK_MAX)
			return agc_error_set(-1, "cannot read the link '%s': too long", path);
		size *= 2;
	}
}

/* A maps line is "start-end perms offset MAJ:MIN inode [path]": the fields up to the inode
 * take well under MAPS_HEAD bytes (the kernel pads them to a column), so a line cut there
 * still has them whole. */
#define MAPS_HEAD 256
#define MAPS_BUF 16384

/* Parse the head of one maps line s[0..n) (MAJ and MIN in hex, the inode in decimal). Returns
 * 1 with a file mapping, 0 for an anonymous one (inode 0) or a line that is not a mapping.
 * This runs for every line of every process: plain byte loops, no strtoul. */
static int maps_head(const char *s, size_t n, agc_devino *f)
{
	const char *e = s + n;
	unsigned long maj = 0, min = 0;
	unsigned long long ino = 0;
	int d, i, digits;

	/* Skip the address range, the permissions and the offset. */
	for (i = 0; i < 3; i++) {
		const char *sp = memchr(s, ' ', (size_t)(e - s));

		if (!sp)
			return 0;
		for (s = sp + 1; s < e && *s == ' '; s++)
			;
	}
	for (digits = 0; s < e && (d = agc_hexval((unsigned char)*s)) >= 0; s++, digits++)
		maj = (maj << 4) | d;
	if (!digits || digits > 8 || s >= e || *s++ != ':')
		return 0;
	for (digits = 0; s < e && (d = agc_hexval((unsigned char)*s)) >= 0; s++, digits++)
		min = (min << 4) | d;
	if (!digits || digits > 8 || s >= e || *s++ != ' ')
		return 0;
	while (s < e && *s == ' ')
		s++;
	/* Most lines of a process are anonymous ("00:00 0"): out at the first digit. */
	if (s >= e || *s < '0' || *s > '9' || (*s == '0' && (s + 1 == e || s[1] == ' ')))
		return 0;
	for (; s < e && *s >= '0' && *s <= '9'; s++) {
		unsigned d10 = (unsigned)(*s - '0');

		/* An inode that does not fit cannot be one of ours, nor anyone's. */
		if (ino > (ULLONG_MAX - d10) / 10)
			return 0;
		ino = ino * 10 + d10;
	}
	if (s < e && *s != ' ')
		return 0;
	f->dev = makedev((unsigned int)maj, (unsigned int)min);
	f->ino = (ino_t)ino;
	return 1;
}

/* Report each file mapping of the open maps file fd to cb; closes fd. */
static int maps_scan(int fd, const where *w, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	char buf[MAPS_BUF], lb[80];
	agc_devino f, last = {0, 0};
	size_t len = 0, pos, lines = 0;
	bool have_last = false, eof = false, skipping = false;
	int rc = 0;

	/* Chunks of the file go through buf; a line that does not end inside it is parsed from
	 * its head and the rest of it skipped (a path can be longer than the buffer). */
	while (rc == 0 && !eof) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = where_errno(errno, "read", w);
			break;
		}
		if (n == 0)
			eof = true;
		len += (size_t)n;
		pos = 0;
		while (rc == 0 && pos < len) {
			char *nl = memchr(buf + pos, '\n', len - pos);
			size_t end = nl ? (size_t)(nl - buf) : len;
			int got;

			if (!nl && !eof && !skipping && end - pos < MAPS_HEAD)
				break; /* the head is not all here yet: read on */
			if (skipping) {
				got = 0;
			} else {
				if (++lines > PROC_MAX_LINES) {
					rc = agc_error_set(-1, "cannot read '%s': more than %u lines",
							   where_label(w, lb, sizeof(lb)), PROC_MAX_LINES);
					break;
				}
				got = maps_head(buf + pos, end - pos, &f);
			}
			skipping = !nl && !eof;
			pos = nl ? end + 1 : len;
			/* A file is mapped as several neighbouring regions: report it once per run. */
			if (!got || (have_last && f.dev == last.dev && f.ino == last.ino))
				continue;
			last = f;
			have_last = true;
			rc = cb(&f, ud);
		}
		if (pos < len)
			memmove(buf, buf + pos, len - pos);
		len -= pos;
	}
	close(fd);
	return rc;
}

/* PROCMAP_QUERY (Linux 6.11, <linux/fs.h>; declared here as the kernel's interface fixes it,
 * since older headers lack it): asks the kernel for the next file-backed mapping at or above
 * an address, with its device and inode and nothing else. The same facts as a maps line
 * (both take the inode of the mapped file) without the kernel formatting every line and
 * every path: the costliest read of a scan. */
struct agc_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

#define AGC_PROCMAP_QUERY _IOWR('f', 17, struct agc_procmap_query)
#define AGC_PROCMAP_COVERING_OR_NEXT 0x10
#define AGC_PROCMAP_FILE_BACKED 0x20

/* Report each file mapping of the open maps file fd through PROCMAP_QUERY. Returns 0 (fd
 * closed), 1 when the kernel does not have the query (fd left open and unread, for the text),
 * or a negative code (fd closed). */
static int maps_query(int fd, const where *w, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	struct agc_procmap_query q;
	agc_devino f, last = {0, 0};
	uint64_t addr = 0;
	size_t n = 0;
	bool have_last = false;
	char lb[80];
	int rc = 0;

	for (;;) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = AGC_PROCMAP_COVERING_OR_NEXT | AGC_PROCMAP_FILE_BACKED;
		q.query_addr = addr;
		if (ioctl(fd, AGC_PROCMAP_QUERY, &q) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOENT)  /* no mapping at or above addr: all seen */
				break;
			if (n == 0 && (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP))
				return 1;
			rc = where_errno(errno, "query", w);
			break;
		}
		/* the same bound as on maps lines, and an answer that does not move on ends
		 * the scan as an error instead of a loop */
		if (++n > PROC_MAX_LINES || q.vma_end <= addr) {
			rc = agc_error_set(-1, "cannot read '%s': %s", where_label(w, lb, sizeof(lb)),
					   n > PROC_MAX_LINES ? "too many mappings" : "the mappings do not add up");
			break;
		}
		addr = q.vma_end;
		if (q.inode == 0 && q.dev_major == 0 && q.dev_minor == 0)
			continue;
		f.dev = makedev(q.dev_major, q.dev_minor);
		f.ino = (ino_t)q.inode;
		/* A file is mapped as several neighbouring regions: report it once per run. */
		if (have_last && f.dev == last.dev && f.ino == last.ino)
			continue;
		last = f;
		have_last = true;
		rc = cb(&f, ud);
		if (rc)
			break;
	}
	close(fd);
	return rc;
}

int agc_proc_maps(const char *procroot, pid_t pid, int (*cb)(const agc_devino *f, void *ud),
		  void *ud)
{
	if (agc_procps_on())
		return agc_procps_maps(pid, cb, ud);
	char path[PATH_MAX];
	where w = {path, pid, "maps"};
	int fd, rc;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	if (proc_path(path, sizeof(path), procroot, pid, "maps") < 0)
		return -1;
	fd = open_ro(path, 0);
	if (fd < 0)
		return proc_errno(errno, "open", path);
	rc = maps_query(fd, &w, cb, ud);
	return rc == 1 ? maps_scan(fd, &w, cb, ud) : rc;
}

int agc_proc_maps_at(int pfd, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	if (agc_procps_on())
		return agc_procps_maps(pid, cb, ud);
	where w = {NULL, pid, "maps"};
	int fd = open_at(pfd, "maps", 0), rc;

	if (fd < 0)
		return where_errno(errno, "open", &w);
	/* the query where the kernel has it, the text where it has not */
	rc = maps_query(fd, &w, cb, ud);
	return rc == 1 ? maps_scan(fd, &w, cb, ud) : rc;
}

/* getdents64 records, as the kernel writes them. */
struct agc_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define FD_DIR_BUF 16384

/* Report the (dev, ino) of each entry of the open fd/ dir fd to cb; closes fd. */
static int fds_scan(int fd, const where *w, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	union {
		struct agc_dirent64 align;
		char b[FD_DIR_BUF];
	} buf;
	char lb[80];
	struct stat st;
	agc_devino f;
	size_t count = 0;
	int rc = 0;
	bool eof = false;

	/* getdents64 straight into a stack buffer: this runs once per process on the machine,
	 * so no DIR allocation and no extra fcntl. */
	while (!eof && rc == 0) {
		long n = syscall(SYS_getdents64, fd, buf.b, sizeof(buf.b));
		long off;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = where_errno(errno, "read", w);
			break;
		}
		if (n == 0)
			break;
		/* The kernel fills the buffer while entries fit: a return with room left for
		 * another record means the listing is complete, which saves a second call. */
		if ((size_t)n + sizeof(struct agc_dirent64) + NAME_MAX + 1 < sizeof(buf.b))
			eof = true;
		for (off = 0; off < n && rc == 0;) {
			struct agc_dirent64 *de = (struct agc_dirent64 *)(void *)(buf.b + off);

			off += de->d_reclen;
			if (de->d_name[0] == '.')
				continue;
			/* A bound on the work per process; past it we cannot say what else is
			 * open, so that is an error, not a silent "not held". */
			if (++count > PROC_MAX_FDS) {
				rc = agc_error_set(-1, "cannot read '%s': more than %d open files",
						   where_label(w, lb, sizeof(lb)), PROC_MAX_FDS);
				break;
			}
			/* Following the magic link stats the open file itself: its (dev, ino), even
			 * when it has been renamed or unlinked since. */
			if (fstatat(fd, de->d_name, &st, 0) < 0) {
				/* Closed since the listing, or a file we may not stat (a FUSE mount
				 * without allow_root): that fd alone is skipped, never the process's
				 * other fds. */
				if (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == EPERM)
					continue;
				rc = where_errno(errno, "stat", w);
				break;
			}
			f.dev = st.st_dev;
			f.ino = st.st_ino;
			rc = cb(&f, ud);
		}
	}
	close(fd);
	return rc;
}

int agc_proc_fds(const char *procroot, pid_t pid, int (*cb)(const agc_devino *f, void *ud),
		 void *ud)
{
	if (agc_procps_on())
		return agc_procps_fds(pid, cb, ud);
	char path[PATH_MAX];
	where w = {path, pid, "fd"};
	int fd;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	if (proc_path(path, sizeof(path), procroot, pid, "fd") < 0)
		return -1;
	fd = open_ro(path, O_DIRECTORY);
	if (fd < 0)
		return proc_errno(errno, "open", path);
	return fds_scan(fd, &w, cb, ud);
}

int agc_proc_fds_at(int pfd, pid_t pid, int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	if (agc_procps_on())
		return agc_procps_fds(pid, cb, ud);
	where w = {NULL, pid, "fd"};
	int fd = open_at(pfd, "fd", O_DIRECTORY);

	if (fd < 0)
		return where_errno(errno, "open", &w);
	return fds_scan(fd, &w, cb, ud);
}

int agc_proc_files(const char *procroot, pid_t pid, bool with_maps,
		   int (*cb)(const agc_devino *f, void *ud), void *ud)
{
	int rc = agc_proc_fds(procroot, pid, cb, ud);

	if (rc == 0 && with_maps)
		rc = agc_proc_maps(procroot, pid, cb, ud);
	return rc;
}

int agc_proc_cwd_id(const char *procroot, pid_t pid, agc_devino *out)
{
	if (agc_procps_on())
		return agc_procps_cwd_id(pid, out);
	char path[PATH_MAX];
	struct stat st;

	if (pid <= 0)
		return agc_error_set(AGC_ENOTFOUND, "no process %ld", (long)pid);
	if (proc_path(path, sizeof(path), procroot, pid, "cwd") < 0)
		return -1;
	/* Following the magic link stats the directory itself, wherever it is now. */
	if (stat(path, &st) < 0)
		return proc_errno(errno, "stat", path);
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return 0;
}

int agc_proc_cwd_id_at(int pfd, pid_t pid, agc_devino *out)
{
	if (agc_procps_on())
		return agc_procps_cwd_id(pid, out);
	where w = {NULL, pid, "cwd"};
	struct stat st;

	if (fstatat(pfd, "cwd", &st, 0) < 0)
		return where_errno(errno, "stat", &w);
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return 0;
}

int agc_proc_alive(pid_t pid)
{
	/* kill(0 or -N, 0) would ask about a process group, never one process. */
	if (pid <= 0)
		return 0;
	if (kill(pid, 0) == 0)
		return 1;
	return errno == EPERM ? 1 : 0;
}

int agc_proc_start_ms(const char *procroot, const agc_proc *p, int64_t *out)
{
	int64_t boot;
	long hz = agc_proc_ticks_per_sec();

	/* through ps, a start time is epoch seconds already */
	if (agc_procps_on()) {
		*out = (int64_t)p->start * 1000;
		return 0;
	}
	if (agc_proc_boot_ms(procroot, &boot) < 0)
		return -1;
	*out = boot + (int64_t)(p->start * 1000ULL / (unsigned long long)hz);
	return 0;
}

int agc_proc_start_is_ticks(const char *procroot, const agc_proc *p, unsigned long long ticks)
{
	int64_t boot, ms, d;
	long hz = agc_proc_ticks_per_sec();

	if (!agc_procps_on())
		return p->start == ticks;
	/* Through ps a start time is whole seconds and the boot time too: the two agree within
	 * two seconds. A pid taken over inside that window reads as the same process, which
	 * only ever makes a session live (R5). */
	if (agc_proc_boot_ms(procroot, &boot) < 0 || ticks > (unsigned long long)INT64_MAX / 1000)
		return -1;
	ms = boot + (int64_t)(ticks * 1000ULL / (unsigned long long)hz);
	d = ms - (int64_t)p->start * 1000;
	return d > -2000 && d < 2000;
}

long agc_proc_ticks_per_sec(void)
{
	long t = sysconf(_SC_CLK_TCK);

	return t > 0 ? t : 100;
}

int agc_proc_boot_ms(const char *procroot, int64_t *out)
{
	char path[PATH_MAX], *line = NULL, *end;
	line_reader *lr;
	long long v;
	int fd, rc;

	if (proc_path(path, sizeof(path), procroot, 0, "stat") < 0)
		return -1;
	fd = open_ro(path, 0);
	if (fd < 0)
		return agc_error_errno(-1, errno, "cannot open '%s'", path);
	lr = malloc(sizeof(*lr));
	if (!lr) {
		close(fd);
		return agc_error_oom();
	}
	line_init(lr, fd);
	rc = agc_error_set(-1, "cannot find the boot time in '%s'", path);
	for (;;) {
		int n = line_next(lr, &line);

		if (n < 0) {
			rc = agc_error_errno(-1, -n, "cannot read '%s'", path);
			break;
		}
		if (n == 0)
			break;
		if (strncmp(line, "btime ", 6))
			continue;
		errno = 0;
		v = strtoll(line + 6, &end, 10);
		if (errno || end == line + 6 || v <= 0 || v > INT64_MAX / 1000)
			break;
		*out = (int64_t)v * 1000;
		rc = 0;
		break;
	}
	free(lr);
	close(fd);
	return rc;
}

int agc_proc_self_and_ancestors(const char *procroot, bool listed, pid_t **out, size_t *n)
{
	if (agc_procps_on())
		return agc_procps_self_and_ancestors(listed, out, n);
	pid_t *v, pid = agc_proc_self(procroot);
	size_t len = 0, cap = 16;
	agc_proc p;

	v = malloc(cap * sizeof(*v));
	if (!v)
		return agc_error_oom();
	*out = v;
	*n = 0;
	if (!pid)
		return 0;  /* not in the table: none of its processes is this one or its parent */
	v[len++] = pid;
	/* Up the parent chain until pid 1, a parent we cannot read, or a bound that also stops
	 * a loop in a made-up tree. */
	while (pid > 1 && len < PROC_MAX_DEPTH) {
		if (agc_proc_stat(procroot, pid, &p) < 0 || p.ppid <= 0 || p.ppid == pid)
			break;
		pid = p.ppid;
		if (len == cap) {
			pid_t *nv = realloc(v, cap * 2 * sizeof(*v));

			if (!nv) {
				free(v);
				return agc_error_oom();
			}
			v = nv;
			cap *= 2;
		}
		v[len++] = pid;
	}
	*out = v;
	*n = len;
	return 0;
}

void agc_proc_scope(const char *procroot, const pid_t *pids, size_t n)
{
	/* /proc reads each process's files when asked: nothing to narrow */
	if (agc_procps_on())
		agc_procps_scope(pids, n);
}
