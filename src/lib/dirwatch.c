/* Changes to listed directories, as inotify tells them (dirwatch.h). */
#include "dirwatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/inotify.h>
#include <sys/vfs.h>
#endif

/* The highest watch descriptor kept count of: the kernel hands them out in order, one per dir
 * watched, so a run reaches a few thousand at most. */
#define WD_MAX ((size_t)1 << 20)

struct agc_dirwatch {
	int fd;
	bool broken;   /* a read failed: nothing told can be trusted any more */
	uint64_t lost; /* overflows of the kernel's queue, and events of unknown watches */
	uint64_t *n;   /* by watch descriptor: the changes told */
	size_t cap;
};

#ifdef __linux__

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

/* File systems whose changes all pass through this kernel (linux/magic.h): local ones. A
 * network file system (NFS, SMB), a user-space one (FUSE) or an overlay over dirs changed
 * beneath it can change without an event. */
static bool fs_tells_all(int fd)
{
	static const unsigned long local[] = {
		0xEF53,     /* ext2, ext3, ext4 */
		0x58465342, /* xfs */
		0x9123683E, /* btrfs */
		0x01021994, /* tmpfs */
		0xF2F52010, /* f2fs */
		0x2FC12FC1, /* zfs */
		0xCA451A4E, /* bcachefs */
	};
	struct statfs sf;
	size_t i;

	if (fstatfs(fd, &sf) < 0)
		return false;
	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((unsigned long)sf.f_type == local[i])
			return true;
	return false;
}

agc_dirwatch *agc_dirwatch_new(void)
{
	agc_dirwatch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		free(w);
		return NULL;
	}
	return w;
}

void agc_dirwatch_free(agc_dirwatch *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w->n);
	free(w);
}

void agc_dirwatch_poll(agc_dirwatch *w)
{
	union {
		struct inotify_event ev;
		char b[16384];
	} buf;

	if (!w || w->broken)
		return;
	for (;;) {
		ssize_t len = read(w->fd, buf.b, sizeof(buf.b));
		size_t at = 0;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0 && errno != EAGAIN)
			w->broken = true;
		if (len <= 0)
			return;
		while (at + sizeof(struct inotify_event) <= (size_t)len) {
			struct inotify_event ev;

			memcpy(&ev, buf.b + at, sizeof(ev));
			at += sizeof(ev) + ev.len;
			if ((ev.mask & IN_Q_OVERFLOW) || ev.wd < 0 || (size_t)ev.wd >= w->cap)
				w->lost++;
			else
				w->n[ev.wd]++;
		}
	}
}

bool agc_dirwatch_mark(agc_dirwatch *w, int fd, agc_dirmark *m)
{
	char path[64];
	int wd;

	if (!w || w->broken || !fs_tells_all(fd))
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(w->fd, path, WATCH_MASK);
	if (wd < 0)
		return false;
	if ((size_t)wd >= w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		uint64_t *n;

		while (cap <= (size_t)wd)
			cap *= 2;
		if (cap > WD_MAX || !(n = realloc(w->n, cap * sizeof(*n)))) {
			inotify_rm_watch(w->fd, wd);
			return false;
		}
		memset(n + w->cap, 0, (cap - w->cap) * sizeof(*n));
		w->n = n;
		w->cap = cap;
	}
	/* what an earlier watch of the same dir left unread is counted before the mark */
	agc_dirwatch_poll(w);
	if (w->broken)
		return false;
	m->wd = wd;
	m->n = w->n[wd];
	m->lost = w->lost;
	return true;
}

bool agc_dirwatch_same(const agc_dirwatch *w, const agc_dirmark *m)
{
	return w && !w->broken && m->lost == w->lost && m->wd >= 0 && (size_t)m->wd < w->cap &&
	       w->n[m->wd] == m->n;
}

#else /* no inotify: every caller keeps its own check */

agc_dirwatch *agc_dirwatch_new(void)
{
	return NULL;
}

void agc_dirwatch_free(agc_dirwatch *w)
{
	(void)w;
}

void agc_dirwatch_poll(agc_dirwatch *w)
{
	(void)w;
}

bool agc_dirwatch_mark(agc_dirwatch *w, int fd, agc_dirmark *m)
{
	(void)w;
	(void)fd;
	(void)m;
	return false;
}

bool agc_dirwatch_same(const agc_dirwatch *w, const agc_dirmark *m)
{
	(void)w;
	(void)m;
	return false;
}

#endif
