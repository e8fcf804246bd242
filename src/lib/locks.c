/* Agents' locks, as the agents take them (locks.h): the kinds of shared-file locks in one
 * table, and a session's writer lock. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "error.h"
#include "json.h"
#include "locks.h"
#include "proc-ps.h"

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* proper-lockfile (Claude's history.jsonl): the lock is a directory made with mkdir, its mtime
 * refreshed while held; older than stale_ms it may be broken. Returns 0 when taken,
 * AGC_EINUSE when a fresh lock is held by someone else, -1 on error. */
static int mkdir_take_n(int dirfd, const char *name, int64_t stale_ms, int64_t now_ms, unsigned n,
			int64_t interval_ms)
{
	unsigned tries;

	for (tries = 0; tries < n; tries++) {
		struct stat st;
		int64_t mtime;

		if (mkdirat(dirfd, name, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return agc_error_errno(-1, errno, "cannot take lock '%s'", name);
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue; /* released meanwhile */
			return agc_error_errno(-1, errno, "cannot inspect lock '%s'", name);
		}
		/* Only a directory is a lock of this convention; anything else is not ours to break. */
		if (!S_ISDIR(st.st_mode))
			return agc_error_set(AGC_EINUSE, "lock '%s' is not a directory", name);
		mtime = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
		if (now_ms - mtime > stale_ms) {
			/* Stale: its holder stopped refreshing it, as the convention allows us to break. */
			if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
				return agc_error_errno(AGC_EINUSE, errno, "cannot break stale lock '%s'", name);
			continue;
		}
		if (tries + 1 < n) {
			sleep_ms(interval_ms);
			now_ms += interval_ms;
		}
	}
	return agc_error_set(AGC_EINUSE, "lock '%s' is held", name);
}

int agc_lock_mkdir_take(int dirfd, const char *name, int64_t stale_ms, int64_t now_ms)
{
	return mkdir_take_n(dirfd, name, stale_ms, now_ms, 4, 100);
}

int agc_lock_mkdir_release(int dirfd, const char *name)
{
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return agc_error_errno(-1, errno, "cannot release lock '%s'", name);
	return 0;
}

/* True when a fresh (not stale) mkdir-style lock name exists beneath dirfd: read-only, for
 * dry runs. Anything that is there but not a directory counts as held. */
bool agc_lock_mkdir_fresh(int dirfd, const char *name, int64_t stale_ms, int64_t now_ms)
{
	struct stat st;
	int64_t mtime;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno != ENOENT;
	if (!S_ISDIR(st.st_mode))
		return true;
	mtime = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	return now_ms - mtime <= stale_ms;
}

/* ---- the kinds of shared-file locks --------------------------------------------------------- */

static int mkdir_take(agc_lock_hold *h, const char *leaf, bool dry)
{
	const agc_lock_spec *sp = h->spec;
	struct stat st;
	int rc;

	if ((size_t)snprintf(h->name, sizeof(h->name), "%s%s", leaf, sp->suffix ? sp->suffix : ".lock") >=
	    sizeof(h->name))
		return agc_error_set(-1, "lock name for '%s' too long", leaf);
	if (dry)
		return agc_lock_mkdir_fresh(h->dfd, h->name, sp->stale_ms, agc_clock_real_ms())
			       ? agc_error_set(AGC_EINUSE, "lock '%s' is held", h->name)
			       : 0;
	rc = mkdir_take_n(h->dfd, h->name, sp->stale_ms, agc_clock_real_ms(), sp->tries ? sp->tries : 1,
			  sp->interval_ms);
	if (rc < 0)
		return rc;
	h->ino = fstatat(h->dfd, h->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_ino : 0;
	return 0;
}

static int mkdir_keep(agc_lock_hold *h)
{
	struct stat st;

	/* a lock held too long may have been broken as stale by a writer, which may then
	 * append (R4): refreshed, and still the one we made */
	if (agc_clock_mono_us() - h->at_us > h->spec->hold_ms * 1000 ||
	    fstatat(h->dfd, h->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_ino != h->ino ||
	    utimensat(h->dfd, h->name, NULL, AT_SYMLINK_NOFOLLOW) < 0) {
		h->held = false; /* no longer ours to remove */
		return agc_error_set(AGC_EINUSE, "lost the lock '%s'", h->name);
	}
	return 0;
}

static void mkdir_release(agc_lock_hold *h)
{
	struct stat st;

	/* only if it is still ours, never a writer's that replaced it */
	if (fstatat(h->dfd, h->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == h->ino)
		agc_lock_mkdir_release(h->dfd, h->name);
}

static void count_cb(pid_t pid, void *ud)
{
	(void)pid;
	(*(size_t *)ud)++;
}

static int flock_take(agc_lock_hold *h, const char *leaf, bool dry)
{
	const agc_lock_spec *sp = h->spec;
	unsigned i, tries = sp->tries ? sp->tries : 1;
	struct stat st;

	/* a dry run asks the kernel's lock table, which takes nothing */
	if (dry && fstat(h->fd, &st) == 0) {
		size_t n = 0;
		bool differs = false;
		int rc = agc_flocks_of(h->procroot, st.st_dev, st.st_ino, count_cb, &n, &differs);

		if (rc < 0 || n > 0)
			return agc_error_set(AGC_EINUSE, "'%s' is locked by another process", leaf);
		if (rc == 1 && !differs && agc_flocks_complete(h->procroot))
			return 0;
	}

	for (i = 0; i < tries; i++) {
		if (flock(h->fd, LOCK_EX | LOCK_NB) == 0) {
			/* a dry run only looks: let go at once (a writer tries again, as its own
			 * tries do) */
			if (dry)
				flock(h->fd, LOCK_UN);
			return 0;
		}
		if (errno != EWOULDBLOCK && errno != EINTR)
			return agc_error_errno(-1, errno, "cannot lock '%s'", leaf);
		if (i + 1 < tries)
			sleep_ms(sp->interval_ms);
	}
	return agc_error_set(AGC_EINUSE, "'%s' is locked by another process", leaf);
}

static int flock_keep(agc_lock_hold *h)
{
	return 0; /* a flock on our own fd is ours until we let go */
}

static void flock_release(agc_lock_hold *h)
{
	flock(h->fd, LOCK_UN);
}

static const struct lock_kind {
	agc_lock_kind kind;
	int (*take)(agc_lock_hold *h, const char *leaf, bool dry);
	int (*keep)(agc_lock_hold *h);
	void (*release)(agc_lock_hold *h);
} lock_kinds[] = {
	{AGC_LOCK_RENAME, NULL, NULL, NULL},
	{AGC_LOCK_MKDIR, mkdir_take, mkdir_keep, mkdir_release},
	{AGC_LOCK_FLOCK, flock_take, flock_keep, flock_release},
};

static const struct lock_kind *kind_of(const agc_lock_spec *spec)
{
	size_t i;

	for (i = 0; spec && i < sizeof(lock_kinds) / sizeof(lock_kinds[0]); i++)
		if (lock_kinds[i].kind == spec->kind)
			return &lock_kinds[i];
	return &lock_kinds[0];
}

int agc_lock_take(agc_lock_hold *h, const agc_lock_spec *spec, int dfd, const char *leaf, int fd, bool dry,
		  const char *procroot)
{
	const struct lock_kind *k = kind_of(spec);
	int rc;

	memset(h, 0, sizeof(*h));
	h->spec = spec;
	h->procroot = procroot;
	h->dfd = dfd;
	h->fd = fd;
	if (!k->take)
		return 0;
	rc = k->take(h, leaf, dry);
	if (rc == 0 && !dry) {
		h->held = true;
		h->at_us = agc_clock_mono_us();
	}
	return rc;
}

int agc_lock_keep(agc_lock_hold *h)
{
	const struct lock_kind *k = kind_of(h->spec);

	return h->held && k->keep ? k->keep(h) : 0;
}

void agc_lock_release(agc_lock_hold *h)
{
	const struct lock_kind *k = kind_of(h->spec);

	if (h->held && k->release)
		k->release(h);
	h->held = false;
}

/* ---- a session's writer lock ------------------------------------------------------------- */

#define COORD_TRIES 200   /* the agent holds its coordination lock only briefly: 2 s in all */
#define COORD_WAIT_MS 10
#define FLOCKS_LINE_MAX 512
#define FLOCKS_MAX ((size_t)1 << 20) /* locks in the table, at most */

void agc_flocks_free(agc_flocks *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

int agc_flocks_load(const char *procroot, agc_flocks *t)
{
	char path[4096], line[FLOCKS_LINE_MAX];
	FILE *f;
	int fd;

	memset(t, 0, sizeof(*t));
	/* through ps there is no kernel lock table to read: the probe answers (none loaded) */
	if (agc_procps_on())
		return 0;
	snprintf(path, sizeof(path), "%s/locks", procroot ? procroot : "/proc");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 0 : agc_error_errno(-1, errno, "cannot read '%s'", path);
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return agc_error_oom();
	}
	/* "1: FLOCK  ADVISORY  WRITE 41872 08:02:1835098 0 EOF"; a waiter's line has "->" after
	 * the number. Every kind of lock on the file counts (FLOCK, POSIX, OFDLCK): whoever locks
	 * it works on it. */
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok, *prev = NULL;
		unsigned long maj, min;
		unsigned long long in;
		int used = 0;

		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			/* not a line of this format: skipped whole */
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		for (tok = strtok_r(line, " \t\n", &save); tok; prev = tok, tok = strtok_r(NULL, " \t\n", &save)) {
			agc_flock *l;
			char *end;
			long pid;

			if (sscanf(tok, "%lx:%lx:%llu%n", &maj, &min, &in, &used) != 3 || tok[used] != '\0')
				continue;
			pid = prev ? strtol(prev, &end, 10) : -1;
			l = AGC_ARRAY_PUSH(t, FLOCKS_MAX);
			if (!l) {
				fclose(f);
				agc_flocks_free(t);
				return -1;
			}
			l->maj = maj;
			l->min = min;
			l->ino = (ino_t)in;
			/* an OFD lock shows -1: no process, but the file is locked all the same */
			l->pid = prev && *end == '\0' && pid > 0 ? (pid_t)pid : 0;
			break;
		}
	}
	if (ferror(f)) {
		fclose(f);
		agc_flocks_free(t);
		return agc_error_set(-1, "cannot read '%s'", path);
	}
	fclose(f);
	t->loaded = true;
	return 1;
}

void agc_flocks_find(const agc_flocks *t, dev_t dev, ino_t ino, void (*cb)(pid_t pid, void *ud), void *ud,
		     bool *dev_differs)
{
	size_t i;

	*dev_differs = false;
	for (i = 0; i < t->n; i++) {
		const agc_flock *l = &t->v[i];

		if (l->ino != ino)
			continue;
		if (l->maj != major(dev) || l->min != minor(dev)) {
			*dev_differs = true;
			continue;
		}
		cb(l->pid, ud);
	}
}

int agc_flocks_of(const char *procroot, dev_t dev, ino_t ino, void (*cb)(pid_t pid, void *ud), void *ud,
		  bool *dev_differs)
{
	agc_flocks t;
	int rc = agc_flocks_load(procroot, &t);

	*dev_differs = false;
	if (rc == 1)
		agc_flocks_find(&t, dev, ino, cb, ud, dev_differs);
	agc_flocks_free(&t);
	return rc;
}

#define PROC_PID_INIT_INO 0xEFFFFFFCU /* the initial pid namespace's inode (the kernel's own) */

bool agc_flocks_complete(const char *procroot)
{
	char path[4096];
	struct stat st;

	if (agc_procps_on())
		return false;
	snprintf(path, sizeof(path), "%s/self/ns/pid", procroot ? procroot : "/proc");
	return stat(path, &st) == 0 && st.st_ino == PROC_PID_INIT_INO;
}

/* Make name in dirfd a regular file as the agent would (0644), owned as the dir is: opened
 * without following a link, never a FIFO left open (O_NONBLOCK), only a regular file kept.
 * Returns the fd (read-only), or -1 (error set). *made: it was made here. */
static int open_create(int dirfd, const char *name, bool *made)
{
	struct stat st, dst;
	int fd, tries;

	*made = false;
	for (tries = 0; tries < 3; tries++) {
		fd = agc_open_file_at(dirfd, name, 0, NULL);
		if (fd != AGC_ENOTFOUND)
			return fd;
		fd = openat(dirfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
		if (fd < 0 && errno == EEXIST)
			continue; /* made meanwhile (by the agent): opened as it is */
		if (fd < 0)
			return agc_error_errno(-1, errno, "cannot create '%s'", name);
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return agc_error_set(-1, "'%s' is not a regular file", name);
		}
		/* as the agent's user would have made it, so the agent can open it afterwards */
		if (geteuid() == 0 && fstat(dirfd, &dst) == 0 && (dst.st_uid != st.st_uid || dst.st_gid != st.st_gid) &&
		    fchown(fd, dst.st_uid, dst.st_gid) < 0) {
			int e = errno;

			unlinkat(dirfd, name, 0);
			close(fd);
			return agc_error_errno(-1, e, "cannot give '%s' to its dir's owner", name);
		}
		*made = true;
		return fd;
	}
	return agc_error_set(-1, "'%s' keeps changing", name);
}

/* The coordination lock: *cfd -1 when there is none and none is made (the agent has not made
 * it: no writer protocol ran in this dir). 0, AGC_EINUSE (held too long) or -1. */
static int coord_take_c(int dirfd, const char *coord, bool create, int *cfd)
{
	int i;
	bool made;

	*cfd = create ? open_create(dirfd, coord, &made) : agc_open_file_at(dirfd, coord, 0, NULL);
	if (*cfd == AGC_ENOTFOUND) {
		*cfd = -1;
		return 0;
	}
	if (*cfd < 0)
		return -1;
	for (i = 0; i < COORD_TRIES; i++) {
		if (flock(*cfd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		sleep_ms(COORD_WAIT_MS);
	}
	agc_error_set(AGC_EINUSE, "the coordination lock '%s' stayed held", coord);
	close(*cfd);
	*cfd = -1;
	return AGC_EINUSE;
}

static int coord_take(int dirfd, const char *coord, int *cfd)
{
	return coord_take_c(dirfd, coord, false, cfd);
}

static void coord_release(int cfd)
{
	if (cfd >= 0) {
		flock(cfd, LOCK_UN);
		close(cfd);
	}
}

/* Open the session's lock file (never created, never through a link, only a regular file:
 * R8) and try it. Returns the fd (locked when *held is false), AGC_ENOTFOUND, or -1. */
static int try_lock(int dirfd, const char *name, bool *held)
{
	int fd = agc_open_file_at(dirfd, name, 0, NULL);

	*held = false;
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (errno == EWOULDBLOCK) {
		*held = true;
		return fd;
	}
	agc_error_errno(-1, errno, "cannot lock '%s'", name);
	close(fd);
	return -1;
}

int agc_sesslock_probe(int dirfd, const char *coord, const char *name)
{
	int cfd, fd, rc;
	bool held;

	rc = coord_take(dirfd, coord, &cfd);
	if (rc < 0)
		return -1;
	fd = try_lock(dirfd, name, &held);
	if (fd >= 0) {
		if (!held)
			flock(fd, LOCK_UN);
		close(fd);
	}
	coord_release(cfd);
	return fd < 0 ? fd : held ? 1 : 0;
}

int agc_sesslock_take(int dirfd, const char *coord, const char *name, bool create, int *fdp, bool *created)
{
	int cfd, fd, rc;
	bool held = false, made = false;

	*fdp = -1;
	*created = false;
	rc = coord_take_c(dirfd, coord, create, &cfd);
	if (rc < 0)
		return rc;
	if (create) {
		fd = open_create(dirfd, name, &made);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno == EWOULDBLOCK) {
				held = true;
			} else {
				agc_error_errno(-1, errno, "cannot lock '%s'", name);
				close(fd);
				fd = -1;
			}
		}
	} else {
		fd = try_lock(dirfd, name, &held);
	}
	if (fd >= 0 && held) {
		/* another holds it: what this take made goes again (it cannot be ours: made under
		 * the coordination lock, which a writer takes before its own) */
		close(fd);
		coord_release(cfd);
		return agc_error_set(AGC_EINUSE, "'%s' is locked by another process", name);
	}
	coord_release(cfd);
	if (fd < 0)
		return fd;
	*fdp = fd;
	*created = made;
	return 0;
}

int agc_sesslock_release(int dirfd, const char *coord, const char *name, int fd, bool unlink_it)
{
	struct stat a, b;
	int cfd = -1, rc = 0;

	if (fd < 0)
		return 0;
	if (unlink_it) {
		if (coord_take(dirfd, coord, &cfd) < 0) {
			rc = -1;
		} else if (fstat(fd, &a) == 0 && fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
			   a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			/* still the file we lock: nobody else can hold it, and a writer that wants it
			 * opens it under the coordination lock we hold, after this */
			if (unlinkat(dirfd, name, 0) == 0)
				rc = 1;
			else
				rc = agc_error_errno(-1, errno, "cannot remove '%s'", name);
		}
	}
	flock(fd, LOCK_UN);
	close(fd);
	coord_release(cfd);
	return rc;
}
