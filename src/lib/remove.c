/* Removing one artifact beneath its root through directory fds (SPEC R2, R3), in the manner of
 * coreutils remove.c and systemd rm_rf_children: every entry is examined with
 * fstatat(AT_SYMLINK_NOFOLLOW), every directory is entered with O_NOFOLLOW|O_DIRECTORY and its
 * (dev, ino) compared with what was seen before opening (OpenBSD rm.c), and every removal is an
 * unlinkat relative to the directory that holds the entry. */
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
#include <sys/sysmacros.h>
#endif

#include "error.h"
#include "remove.h"
#include "scan.h"

#define RM_MAX_DEPTH AGC_RM_MAX_DEPTH

#define RM_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

#ifdef __APPLE__
#define ST_MTIM(st) ((st)->st_mtimespec)
#else
#define ST_MTIM(st) ((st)->st_mtim)
#endif

/* One directory level being walked; the chain names the current entry in messages. */
typedef struct rm_frame {
	const struct rm_frame *up;
	const char *name;
} rm_frame;

typedef struct rm_walk {
	const char *last;     /* direct child of the artifact to remove after all others, or NULL */
	bool remove;          /* false for a dry run or a measurement */
	dev_t dev;            /* the artifact's file system (R3) */
	uint64_t max_entries; /* 0: no bound */
	uint64_t entries;
	bool stop;            /* max_entries reached */
	uint64_t nfail;       /* failures so far, the first one is in res */
	agc_rm_result *res;
} rm_walk;

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Append s to out (size n, at *len), with control bytes shown as '?'. */
static void path_add(char *out, size_t n, size_t *len, const char *s)
{
	for (; *s && *len + 1 < n; s++) {
		unsigned char c = (unsigned char)*s;

		out[(*len)++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[*len] = '\0';
}

/* Write the path of name (NULL: the frame itself) below fr into out, e.g. "rel/a/b". */
static void path_of(char *out, size_t n, const rm_frame *fr, const char *name)
{
	const rm_frame *chain[RM_MAX_DEPTH + 2];
	size_t depth = 0, len = 0;

	out[0] = '\0';
	for (; fr && depth < RM_MAX_DEPTH + 2; fr = fr->up)
		chain[depth++] = fr;
	while (depth > 0) {
		path_add(out, n, &len, chain[--depth]->name);
		if (depth > 0)
			path_add(out, n, &len, "/");
	}
	if (name) {
		path_add(out, n, &len, "/");
		path_add(out, n, &len, name);
	}
}

/* Record a failure on name below fr; only the first one is kept (status, errno and message).
 * why overrides strerror(err) in the message. */
static void rm_fail(rm_walk *w, const rm_frame *fr, const char *name, agc_walk_status st,
		    int err, const char *why)
{
	char path[1024];

	w->nfail++;
	if (w->res->status != AGC_WALK_OK)
		return;
	w->res->status = st;
	w->res->err = err;
	path_of(path, sizeof(path), fr, name);
	if (why || !err)
		agc_error_set(-1, "cannot remove '%s': %s", path, why ? why : agc_walk_status_name(st));
	else
		agc_error_errno(-1, err, "cannot remove '%s'", path);
}

/* The status for an errno from unlinkat or fstatat on an entry. */
static agc_walk_status rm_status(int e)
{
	if (e == EACCES || e == EPERM)
		return AGC_WALK_PERM;
	/* A directory where fstatat saw something else: the entry was swapped. */
	if (e == EISDIR)
		return AGC_WALK_CHANGED;
	return AGC_WALK_ERROR;
}

static void rm_empty(rm_walk *w, int dfd, const rm_frame *fr, unsigned depth);

/* The message of a mount point left alone (R3). */
#define RM_MOUNT_WHY "a mount point, not entered"

/* Handle the entry name of the directory open at dfd (borrowed), fr being that directory. */
static void rm_entry(rm_walk *w, int dfd, const rm_frame *fr, const char *name, unsigned depth)
{
	struct stat st, now;
	uint64_t before;
	agc_mnt mnt;
	int cfd;

	if (agc_scan_lstat(dfd, name, &st, &mnt) < 0) {
		/* Gone already is what removal wants. */
		if (errno != ENOENT)
			rm_fail(w, fr, name, rm_status(errno), errno, NULL);
		return;
	}
	w->entries++;
	if (w->max_entries && w->entries >= w->max_entries)
		w->stop = true;
	/* R3: a mount point (a bind mount of another dir or file, even of the same file system)
	 * is neither entered, removed nor counted: what lies there is not the
	 * artifact's. */
	if (mnt == AGC_MNT_YES) {
		rm_fail(w, fr, name, AGC_WALK_MOUNT, 0, RM_MOUNT_WHY);
		return;
	}
	w->res->disk += (uint64_t)st.st_blocks * 512;

	if (!S_ISDIR(st.st_mode)) {
		/* R2: a link (to "/", to a dir outside, dangling, a loop) goes as the link alone:
		 * unlinkat without AT_REMOVEDIR never touches what it points to. */
		if (w->remove && unlinkat(dfd, name, 0) < 0) {
			/* EBUSY: a file mount point that statx could not tell (R3). */
			if (errno == EBUSY)
				rm_fail(w, fr, name, AGC_WALK_MOUNT, 0, RM_MOUNT_WHY);
			else if (errno != ENOENT)
				rm_fail(w, fr, name, rm_status(errno), errno, NULL);
			return;
		}
		w->res->files++;
		if (S_ISREG(st.st_mode))
			w->res->bytes += (uint64_t)st.st_size;
		return;
	}

	/* R3: a directory on another file system is a mount point (or, where statx says it is
	 * not one, a file system of its own such as a btrfs subvolume); stay off it. */
	if (st.st_dev != w->dev) {
		if (mnt == AGC_MNT_NO)
			rm_fail(w, fr, name, AGC_WALK_XDEV, 0, "on another file system");
		else
			rm_fail(w, fr, name, AGC_WALK_MOUNT, 0, RM_MOUNT_WHY);
		return;
	}
	/* Bounded recursion: one fd and one frame per level must stay finite. */
	if (depth >= RM_MAX_DEPTH) {
		char why[64];

		snprintf(why, sizeof(why), "directory tree deeper than %d levels", RM_MAX_DEPTH);
		rm_fail(w, fr, name, AGC_WALK_DEEP, 0, why);
		return;
	}
	/* R3: never follow a link into a directory, even one swapped in since fstatat. */
	cfd = openat(dfd, name, RM_OPEN_FLAGS);
	if (cfd < 0) {
		int e = errno;

		if (e == ENOENT)
			return;
		if (e == ELOOP || e == ENOTDIR || e == EMLINK)
			rm_fail(w, fr, name, AGC_WALK_CHANGED, e, "replaced while being removed");
		else
			rm_fail(w, fr, name, rm_status(e), e, NULL);
		return;
	}
	/* R3: the directory opened must be the one fstatat saw, or a swap led elsewhere. */
	mnt = agc_scan_fd_mount(cfd, dfd, &now);
	if (!same_file(&now, &st)) {
		close(cfd);
		rm_fail(w, fr, name, AGC_WALK_CHANGED, 0, "replaced while being removed");
		return;
	}
	/* R3: asked again of the fd to be walked, so a mount made since the check, or one statx
	 * could not tell, is not entered either; where nothing can tell, nothing is entered. */
	if (mnt != AGC_MNT_NO) {
		close(cfd);
		if (mnt == AGC_MNT_YES)
			rm_fail(w, fr, name, AGC_WALK_MOUNT, 0, RM_MOUNT_WHY);
		else
			rm_fail(w, fr, name, AGC_WALK_ERROR, 0, "cannot tell whether it is a mount point");
		return;
	}

	rm_frame child = {fr, name};

	before = w->nfail;
	rm_empty(w, cfd, &child, depth + 1);
	if (!w->remove) {
		if (w->nfail == before && !w->stop)
			w->res->dirs++;
		return;
	}
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0) {
		/* A failure inside already explains why the directory stays. */
		if (errno != ENOENT && w->nfail == before)
			rm_fail(w, fr, name, rm_status(errno), errno, NULL);
		return;
	}
	w->res->dirs++;
}

/* True when the directory of d holds nothing but "." , ".." and w->last. */
static bool only_last_left(rm_walk *w, DIR *d)
{
	struct dirent *de;

	rewinddir(d);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			return errno == 0;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, w->last) == 0)
			continue;
		return false;
	}
}

/* Empty the directory open at dfd, which is consumed (closed on every path). depth is 1 for
 * the artifact's own entries. */
static void rm_empty(rm_walk *w, int dfd, const rm_frame *fr, unsigned depth)
{
	struct dirent *de;
	bool saw_last = false;
	DIR *d;
	int fd;

	/* fdopendir takes dfd over, so each level holds one fd. */
	d = fdopendir(dfd);
	if (!d) {
		int e = errno;

		close(dfd);
		rm_fail(w, fr, NULL, rm_status(e), e, NULL);
		return;
	}
	fd = dirfd(d);
	while (!w->stop) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				rm_fail(w, fr, NULL, rm_status(errno), errno, NULL);
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* The artifact's last child goes after all others, so that while anything is
		 * left the artifact stays recognisable. */
		if (depth == 1 && w->last && strcmp(de->d_name, w->last) == 0) {
			saw_last = true;
			continue;
		}
		rm_entry(w, fd, fr, de->d_name, depth);
	}
	/* The last child goes only when everything else went: if something failed, or a new
	 * entry appeared meanwhile, it stays with the rest. */
	if (saw_last && !w->stop && w->nfail == 0 && (!w->remove || only_last_left(w, d)))
		rm_entry(w, fd, fr, w->last, depth);
	closedir(d);
}

/* The message and status when the leaf itself cannot be reached or examined. */
static int rm_leaf_fail(agc_rm_result *res, const char *rel, agc_walk_status st, int err,
			const char *what)
{
	char path[1024];
	size_t len = 0;

	res->status = st;
	res->err = err;
	path_add(path, sizeof(path), &len, rel);
	if (st == AGC_WALK_ENOENT)
		return agc_error_errno(AGC_ENOTFOUND, ENOENT, "cannot %s '%s'", what, path);
	if (st == AGC_WALK_SYMLINK)
		return agc_error_set(-1, "cannot %s '%s': a symbolic link is on the way", what, path);
	if (st == AGC_WALK_NOTDIR)
		return agc_error_set(-1, "cannot %s '%s': a component is not a directory", what, path);
	if (st == AGC_WALK_CHANGED)
		return agc_error_set(-1, "cannot %s '%s': not the file that was found", what, path);
	if (st == AGC_WALK_XDEV)
		return agc_error_set(-1, "cannot %s '%s': on another file system", what, path);
	if (st == AGC_WALK_MOUNT)
		return agc_error_set(-1, "cannot %s '%s': %s", what, path, RM_MOUNT_WHY);
	if (st == AGC_WALK_DEEP)
		return agc_error_set(-1, "cannot %s '%s': directory tree deeper than %d levels", what,
				     path, RM_MAX_DEPTH);
	if (err == EINVAL)
		return agc_error_set(-1, "cannot %s '%s': not a clean relative path", what, path);
	if (err)
		return agc_error_errno(-1, err, "cannot %s '%s'", what, path);
	return agc_error_set(-1, "cannot %s '%s': %s", what, path, agc_walk_status_name(st));
}

/* Reach rel's parent and examine the leaf. On 0, *pfd is the parent (caller closes), *leaf
 * its name, *st what fstatat saw and *mnt whether it is a mount point. */
static int rm_reach(int rootfd, const char *rel, int *pfd, const char **leaf, struct stat *st,
		    agc_mnt *mnt, agc_rm_result *res, const char *what)
{
	agc_walk_status ws;
	int err;

	/* R2: every component before the leaf is a real directory, checked while walking. */
	ws = agc_walk_parent(rootfd, rel, pfd, leaf, &err);
	if (ws != AGC_WALK_OK)
		return rm_leaf_fail(res, rel, ws, err, what);
	if (agc_scan_lstat(*pfd, *leaf, st, mnt) < 0) {
		err = errno;
		close(*pfd);
		return rm_leaf_fail(res, rel, err == ENOENT ? AGC_WALK_ENOENT : rm_status(err), err, what);
	}
	return 0;
}

/* Open the directory leaf of pfd and check it is the one st describes and not a mount point
 * (R3). Returns the fd or -1 (res and the message set). */
static int rm_open_leaf(int pfd, const char *leaf, const struct stat *st, const char *rel,
			agc_rm_result *res, const char *what)
{
	struct stat now;
	agc_mnt mnt;
	int dfd, e;

	/* R3: the artifact directory is entered without following a link swapped in. */
	dfd = openat(pfd, leaf, RM_OPEN_FLAGS);
	if (dfd < 0) {
		e = errno;
		if (e == ELOOP || e == ENOTDIR || e == EMLINK)
			rm_leaf_fail(res, rel, AGC_WALK_CHANGED, e, what);
		else
			rm_leaf_fail(res, rel, e == ENOENT ? AGC_WALK_ENOENT : rm_status(e), e, what);
		return -1;
	}
	/* R3: what was opened must be what fstatat saw (OpenBSD rm_overwrite). */
	mnt = agc_scan_fd_mount(dfd, pfd, &now);
	if (!same_file(&now, st)) {
		close(dfd);
		rm_leaf_fail(res, rel, AGC_WALK_CHANGED, 0, what);
		return -1;
	}
	/* R3: an artifact dir that is itself a mount point (a bind mount of another dir, even
	 * of the same file system) is never emptied; asked of the fd about to be walked. */
	if (mnt != AGC_MNT_NO) {
		close(dfd);
		if (mnt == AGC_MNT_YES) {
			rm_leaf_fail(res, rel, AGC_WALK_MOUNT, 0, what);
		} else {
			char path[1024];
			size_t len = 0;

			res->status = AGC_WALK_ERROR;
			res->err = 0;
			path_add(path, sizeof(path), &len, rel);
			agc_error_set(-1, "cannot %s '%s': cannot tell whether it is a mount point", what,
				      path);
		}
		return -1;
	}
	return dfd;
}

int agc_remove_beneath(int rootfd, const char *rel, dev_t expect_dev, ino_t expect_ino,
		       const char *last, unsigned flags, agc_rm_result *res)
{
	rm_walk w = {0};
	rm_frame top = {NULL, rel};
	const char *leaf;
	struct stat st, pst;
	agc_mnt mnt;
	int pfd, dfd, rc;

	memset(res, 0, sizeof(*res));
	rc = rm_reach(rootfd, rel, &pfd, &leaf, &st, &mnt, res, "remove");
	if (rc < 0)
		return rc;
	/* The artifact must still be the one discovery saw, or something else took its name. */
	if ((expect_dev || expect_ino) && (st.st_dev != expect_dev || st.st_ino != expect_ino)) {
		close(pfd);
		return rm_leaf_fail(res, rel, AGC_WALK_CHANGED, 0, "remove");
	}

	w.last = last;
	w.remove = !(flags & AGC_RM_DRY_RUN);
	w.dev = st.st_dev;
	w.res = res;

	/* R3: an artifact that is itself a mount point (a dir, or a file bind-mounted over the
	 * artifact's name) is left there: what it shows is not the artifact's. */
	if (mnt == AGC_MNT_YES) {
		close(pfd);
		return rm_leaf_fail(res, rel, AGC_WALK_MOUNT, 0, "remove");
	}
	if (!S_ISDIR(st.st_mode)) {
		/* R2: a symlink artifact is removed as the link alone. */
		if (w.remove && unlinkat(pfd, leaf, 0) < 0) {
			int e = errno;

			close(pfd);
			/* EBUSY: a file mount point that statx could not tell (R3). */
			if (e == EBUSY)
				return rm_leaf_fail(res, rel, AGC_WALK_MOUNT, 0, "remove");
			return rm_leaf_fail(res, rel, e == ENOENT ? AGC_WALK_ENOENT : rm_status(e), e,
					    "remove");
		}
		close(pfd);
		res->files = 1;
		res->bytes = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
		return 0;
	}

	/* R3: a directory artifact that is itself a mount point would lead the removal into
	 * another file system; it is left alone. */
	if (fstat(pfd, &pst) < 0 || pst.st_dev != st.st_dev) {
		close(pfd);
		rm_leaf_fail(res, rel, mnt == AGC_MNT_NO ? AGC_WALK_XDEV : AGC_WALK_MOUNT, 0, "remove");
		return -1;
	}
	dfd = rm_open_leaf(pfd, leaf, &st, rel, res, "remove");
	if (dfd < 0) {
		close(pfd);
		return res->status == AGC_WALK_ENOENT ? AGC_ENOTFOUND : -1;
	}
	rm_empty(&w, dfd, &top, 1);
	if (!w.remove) {
		if (w.nfail == 0)
			res->dirs++;
	} else if (unlinkat(pfd, leaf, AT_REMOVEDIR) == 0) {
		res->dirs++;
	} else if (w.nfail == 0 && errno != ENOENT) {
		/* Nothing failed inside, yet the artifact stays: something new appeared in it. */
		rm_fail(&w, &top, NULL, rm_status(errno), errno, NULL);
	}
	close(pfd);
	return res->status == AGC_WALK_OK ? 0 : -1;
}
