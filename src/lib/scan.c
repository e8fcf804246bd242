/* The read-only scanner (SPEC R2, R3, R8): one pass per directory with getdents64 into a
 * buffer reused for every directory at that depth, one statx per entry asking only for what a
 * measurement needs, each directory entered with O_NOFOLLOW|O_DIRECTORY relative to its parent
 * and checked on the opened fd, in one statx, to be the (dev, ino) seen before opening and no
 * mount point. Nothing is opened but directories: a FIFO or a device is only looked at. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#endif
#ifdef __linux__
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#endif

#include "error.h"
#include "scan.h"

#define SCAN_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define SCAN_BUF_BYTES 16384 /* one getdents64 buffer a depth; a dir larger is read in several */

#ifdef __APPLE__
#define ST_MTIM(st) ((st)->st_mtimespec)
#else
#define ST_MTIM(st) ((st)->st_mtim)
#endif

#if defined(__linux__) && defined(STATX_ATTR_MOUNT_ROOT)
#define SCAN_HAVE_STATX 1

/* What a measurement needs of an entry: its type and mode, (dev, ino) for the gate (dev is
 * always given), size, blocks and mtime. */
#define SCAN_STATX_MASK (STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_BLOCKS | STATX_MTIME)

/* What statx says about a mount: STATX_ATTR_MOUNT_ROOT is reported since Linux 5.8, and only
 * when stx_attributes_mask has it is its absence a "no". An automount point counts as a mount:
 * entering it would mount something there. */
static agc_mnt mnt_of(const struct statx *sx)
{
	if ((sx->stx_attributes_mask & STATX_ATTR_AUTOMOUNT) && (sx->stx_attributes & STATX_ATTR_AUTOMOUNT))
		return AGC_MNT_YES;
	if (!(sx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return AGC_MNT_UNKNOWN;
	return (sx->stx_attributes & STATX_ATTR_MOUNT_ROOT) ? AGC_MNT_YES : AGC_MNT_NO;
}

static void ts_of(struct timespec *ts, const struct statx_timestamp *t)
{
	ts->tv_sec = (time_t)t->tv_sec;
	ts->tv_nsec = (long)t->tv_nsec;
}

/* The struct stat that fstatat would have given, from statx's answer (the fields not asked
 * for are 0 where statx did not fill them). */
static void stat_of(const struct statx *sx, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	st->st_ino = (ino_t)sx->stx_ino;
	st->st_mode = (mode_t)sx->stx_mode;
	st->st_nlink = (nlink_t)sx->stx_nlink;
	st->st_uid = (uid_t)sx->stx_uid;
	st->st_gid = (gid_t)sx->stx_gid;
	st->st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	st->st_size = (off_t)sx->stx_size;
	st->st_blksize = (blksize_t)sx->stx_blksize;
	st->st_blocks = (blkcnt_t)sx->stx_blocks;
	ts_of(&st->st_atim, &sx->stx_atime);
	ts_of(&st->st_mtim, &sx->stx_mtime);
	ts_of(&st->st_ctim, &sx->stx_ctime);
}
#endif

/* agc_scan_lstat asking statx for mask only. */
static int lstat_mask(int dfd, const char *name, unsigned mask, struct stat *st, agc_mnt *mnt)
{
#ifdef SCAN_HAVE_STATX
	struct statx sx;

	/* AT_NO_AUTOMOUNT: looking at an automount point must not mount anything. */
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, mask, &sx) == 0) {
		stat_of(&sx, st);
		*mnt = mnt_of(&sx);
		return 0;
	}
	/* A kernel without statx, or a sandbox that filters it: fstatat still answers. */
	if (errno != ENOSYS && errno != EPERM)
		return -1;
#else
	(void)mask;
#endif
	*mnt = AGC_MNT_UNKNOWN;
	return fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW);
}

int agc_scan_lstat(int dfd, const char *name, struct stat *st, agc_mnt *mnt)
{
#ifdef SCAN_HAVE_STATX
	return lstat_mask(dfd, name, STATX_BASIC_STATS, st, mnt);
#else
	return lstat_mask(dfd, name, 0, st, mnt);
#endif
}

#ifdef __linux__
/* The mnt_id of the open fd, from /proc/self/fdinfo (Linux 3.15 and later), or -1. */
static long fdinfo_mnt_id(int fd)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int pfd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	pfd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (pfd < 0)
		return -1;
	do
		n = read(pfd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(pfd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, "mnt_id:", 7) == 0) {
			char *end;
			long id = strtol(p + 7, &end, 10);

			return end == p + 7 || id < 0 ? -1 : id;
		}
	}
	return -1;
}
#endif

agc_mnt agc_scan_fd_mount(int fd, int parent, struct stat *id)
{
	bool have_id = false;
#ifdef SCAN_HAVE_STATX
	struct statx sx;
#endif

	if (id)
		memset(id, 0, sizeof(*id));
#ifdef SCAN_HAVE_STATX

	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO, &sx) == 0) {
		if (id) {
			id->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
			id->st_ino = (ino_t)sx.stx_ino;
			id->st_mode = (mode_t)sx.stx_mode;
			have_id = true;
		}
		if (mnt_of(&sx) != AGC_MNT_UNKNOWN)
			return mnt_of(&sx);
	}
#endif
	if (id && !have_id && fstat(fd, id) < 0)
		return AGC_MNT_UNKNOWN;
#ifdef __linux__
	{
		long a = fdinfo_mnt_id(fd), b = fdinfo_mnt_id(parent);

		if (a >= 0 && b >= 0)
			return a != b ? AGC_MNT_YES : AGC_MNT_NO;
	}
	return AGC_MNT_UNKNOWN;
#else
	/* No bind mounts here: the device check of the callers is what tells a mount point. */
	(void)parent;
	return AGC_MNT_NO;
#endif
}

static int64_t mtime_ms_of(const struct stat *st)
{
	return (int64_t)ST_MTIM(st).tv_sec * 1000 + (int64_t)(ST_MTIM(st).tv_nsec / 1000000);
}

/* One measurement. */
typedef struct sc_walk {
	dev_t dev;            /* the artifact's file system (R3) */
	uint64_t max_entries; /* 0: no bound */
	uint64_t entries;
	bool stop;            /* max_entries reached */
	uint64_t bytes, disk;
	int64_t mtime_ms;     /* newest mtime seen */
	agc_scan_visit visit;
	agc_scan_visit_at visit_at; /* agc_scan_walk's: names, depths, mount points too */
	void *ud;
	bool complete;        /* every dir inside listed to its end, nothing left out */
	char *bufs[AGC_SCAN_MAX_DEPTH + 1]; /* getdents64 buffers, one a depth, made when first needed */
} sc_walk;

/* Open the directory name of dfd that st (its lstat) describes, for walking: never through a
 * link swapped in since the look (O_NOFOLLOW), only the very dir that was looked at ((dev,
 * ino) of the fd), and never a mount point, asked of the fd about to be walked, so a mount
 * made since the look, or one the look could not tell, is not entered either; where nothing
 * can tell, nothing is entered (R3). Returns the fd, or -1 (*why: 'c' changed, 'm' a mount
 * point, 'u' cannot tell, 'e' errno). */
static int open_checked(int dfd, const char *name, const struct stat *st, char *why)
{
	struct stat now;
	agc_mnt mnt;
	int fd = openat(dfd, name, SCAN_OPEN_FLAGS);

	if (fd < 0) {
		agc_short_note(errno);
		*why = errno == ELOOP || errno == ENOTDIR || errno == EMLINK ? 'c' : 'e';
		return -1;
	}
	mnt = agc_scan_fd_mount(fd, dfd, &now);
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino || !S_ISDIR(now.st_mode)) {
		*why = 'c';
	} else if (mnt != AGC_MNT_NO) {
		*why = mnt == AGC_MNT_YES ? 'm' : 'u';
	} else {
		return fd;
	}
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return -1;
}

static void sc_dir(sc_walk *w, int dfd, unsigned depth);

/* The entry name of the directory open at dfd (borrowed). */
static void sc_entry(sc_walk *w, int dfd, const char *name, unsigned depth)
{
	struct stat st;
	agc_mnt mnt;
	char why;
	int cfd;

#ifdef SCAN_HAVE_STATX
	if (lstat_mask(dfd, name, SCAN_STATX_MASK, &st, &mnt) < 0)
#else
	if (lstat_mask(dfd, name, 0, &st, &mnt) < 0)
#endif
	{
		w->complete = false;
		return; /* gone, or not ours to look at: left out of the estimate */
	}
	w->entries++;
	if (w->max_entries && w->entries >= w->max_entries)
		w->stop = true;
	if (w->visit_at) {
		agc_scan_ent e = {dfd, name, &st, depth, mnt == AGC_MNT_YES};

		w->visit_at(&e, w->ud);
	}
	/* R3: a mount point (a bind mount of another dir or file, even of the same file system)
	 * is neither entered, measured nor visited: what lies there is not the artifact's. */
	if (mnt == AGC_MNT_YES) {
		w->complete = false;
		return;
	}
	if (w->visit)
		w->visit(&st, w->ud);
	w->disk += (uint64_t)st.st_blocks * 512;
	if (mtime_ms_of(&st) > w->mtime_ms)
		w->mtime_ms = mtime_ms_of(&st);
	if (!S_ISDIR(st.st_mode)) {
		/* R2: a link counts as the link; what it points to is never looked at. */
		if (S_ISREG(st.st_mode))
			w->bytes += (uint64_t)st.st_size;
		return;
	}
	/* R3: a directory on another file system is a mount point, or a file system of its own
	 * (a btrfs subvolume): stay off it. R8: one fd and one frame a level stay finite. */
	if (st.st_dev != w->dev || depth >= AGC_SCAN_MAX_DEPTH) {
		w->complete = false;
		return;
	}
	cfd = open_checked(dfd, name, &st, &why);
	if (cfd >= 0)
		sc_dir(w, cfd, depth + 1);
	else
		w->complete = false;
}

#ifdef __linux__
struct sc_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};
#endif

/* Walk the directory open at dfd, which is consumed (closed on every path). depth is 1 for the
 * artifact's own entries. */
static void sc_dir(sc_walk *w, int dfd, unsigned depth)
{
#ifdef __linux__
	char *buf = w->bufs[depth];

	if (!buf && !(buf = w->bufs[depth] = malloc(SCAN_BUF_BYTES))) {
		agc_short_note(ENOMEM);
		w->complete = false;
		close(dfd);
		return;
	}
	while (!w->stop) {
		long n = syscall(SYS_getdents64, dfd, buf, SCAN_BUF_BYTES);
		long off;

		if (n < 0) {
			agc_short_note(errno);
			w->complete = false;
		}
		if (n <= 0)
			break; /* the end, or a dir that cannot be read: left out of the estimate */
		for (off = 0; off < n && !w->stop;) {
			struct sc_dirent64 *d = (struct sc_dirent64 *)(buf + off);
			const char *name = d->d_name;

			off += d->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			sc_entry(w, dfd, name, depth);
		}
	}
	if (w->stop)
		w->complete = false;
	close(dfd);
#else
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		agc_short_note(errno);
		w->complete = false;
		close(dfd);
		return;
	}
	while (!w->stop && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sc_entry(w, dirfd(d), de->d_name, depth);
	}
	if (w->stop)
		w->complete = false;
	closedir(d);
#endif
}

static int scan_in(int dirfd, const char *name, const struct stat *st, uint64_t max_entries,
		   agc_scan_visit visit, agc_scan_visit_at visit_at, void *ud, uint64_t *bytes, uint64_t *disk,
		   int64_t *mtime_ms, bool *complete)
{
	struct stat own;
	agc_mnt mnt = AGC_MNT_UNKNOWN;
	uint64_t b = 0, dk = 0;
	int64_t mt;

	/* One name in an open directory: no path is walked, nothing through a link. */
	if (!agc_walk_rel_ok(name) || strchr(name, '/'))
		return agc_error_set(-1, "'%s' is not a name", name);
	if (!st) {
		if (agc_scan_lstat(dirfd, name, &own, &mnt) < 0)
			return errno == ENOENT ? AGC_ENOTFOUND
					       : agc_error_errno(-1, errno, "cannot measure '%s'", name);
		st = &own;
	}
	mt = mtime_ms_of(st);
	if (complete)
		*complete = false; /* until a walk of a dir says otherwise */
	/* R3: an artifact that is a mount point is not entered nor counted, yet still there to be
	 * reported. With the caller's st, a dir that is one is still told on the opened fd. */
	if (mnt == AGC_MNT_YES) {
		/* 0 bytes, 0 disk */
	} else if (S_ISDIR(st->st_mode)) {
		sc_walk *w;
		char why;
		int dfd = open_checked(dirfd, name, st, &why);
		unsigned i;

		if (dfd < 0) {
			if (why == 'm')
				goto out; /* measures 0 */
			if (why == 'e' && errno == ENOENT)
				return AGC_ENOTFOUND;
			if (why == 'c')
				return agc_error_set(-1, "cannot measure '%s': not the file that was found", name);
			if (why == 'u')
				return agc_error_set(-1, "cannot measure '%s': cannot tell whether it is a mount point",
						     name);
			return agc_error_errno(-1, errno, "cannot measure '%s'", name);
		}
		w = calloc(1, sizeof(*w));
		if (!w) {
			close(dfd);
			return agc_error_oom();
		}
		w->dev = st->st_dev;
		w->max_entries = max_entries;
		w->mtime_ms = mt;
		w->visit = visit;
		w->visit_at = visit_at;
		w->ud = ud;
		w->complete = true;
		w->disk = (uint64_t)st->st_blocks * 512;
		sc_dir(w, dfd, 1);
		if (complete)
			*complete = w->complete;
		b = w->bytes;
		dk = w->disk;
		mt = w->mtime_ms;
		for (i = 0; i <= AGC_SCAN_MAX_DEPTH; i++)
			free(w->bufs[i]);
		free(w);
	} else {
		b = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
		dk = (uint64_t)st->st_blocks * 512;
	}
out:
	if (bytes)
		*bytes = b;
	if (disk)
		*disk = dk;
	if (mtime_ms)
		*mtime_ms = mt;
	return 0;
}

int agc_scan_size_in(int dirfd, const char *name, const struct stat *st, uint64_t max_entries,
		     agc_scan_visit visit, void *ud, uint64_t *bytes, uint64_t *disk, int64_t *mtime_ms)
{
	return scan_in(dirfd, name, st, max_entries, visit, NULL, ud, bytes, disk, mtime_ms, NULL);
}

int agc_scan_walk(int dirfd, const char *name, const struct stat *st, uint64_t max_entries,
		  agc_scan_visit_at visit, void *ud, uint64_t *bytes, uint64_t *disk, int64_t *mtime_ms,
		  bool *complete)
{
	return scan_in(dirfd, name, st, max_entries, NULL, visit, ud, bytes, disk, mtime_ms, complete);
}

int agc_scan_measure(int rootfd, const char *rel, uint64_t max_entries, agc_scan_visit visit, void *ud,
		     uint64_t *bytes, uint64_t *disk, int64_t *mtime_ms)
{
	agc_walk_status ws;
	const char *leaf;
	int pfd, err, rc;

	/* R2: every component before the leaf is a real directory, checked while walking. */
	ws = agc_walk_parent(rootfd, rel, &pfd, &leaf, &err);
	if (ws == AGC_WALK_ENOENT)
		return agc_error_errno(AGC_ENOTFOUND, ENOENT, "cannot measure '%s'", rel);
	if (ws == AGC_WALK_SYMLINK)
		return agc_error_set(-1, "cannot measure '%s': a symbolic link is on the way", rel);
	if (ws == AGC_WALK_NOTDIR)
		return agc_error_set(-1, "cannot measure '%s': a component is not a directory", rel);
	if (ws != AGC_WALK_OK)
		return err ? agc_error_errno(-1, err, "cannot measure '%s'", rel)
			   : agc_error_set(-1, "cannot measure '%s': %s", rel, agc_walk_status_name(ws));
	rc = agc_scan_size_in(pfd, leaf, NULL, max_entries, visit, ud, bytes, disk, mtime_ms);
	close(pfd);
	return rc;
}

bool agc_scan_names_exact(int fd)
{
#if defined(__linux__)
	struct statfs sf;
	int flags = 0;

	if (fstatfs(fd, &sf) < 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case 0xef53UL:     /* ext2, ext3, ext4 */
	case 0x01021994UL: /* tmpfs */
	case 0xf2f52010UL: /* f2fs */
		/* case folding is a flag of each dir there (FS_CASEFOLD_FL); flags that cannot be
		 * read tell nothing */
		return ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_CASEFOLD_FL);
	case 0x58465342UL: /* xfs */
	case 0x9123683eUL: /* btrfs */
		return true;
	default:
		return false;
	}
#elif defined(__APPLE__)
	return fpathconf(fd, _PC_CASE_SENSITIVE) == 1;
#else
	(void)fd;
	return false;
#endif
}
