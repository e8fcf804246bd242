/* Reaching an artifact beneath its root one component at a time through directory file
 * descriptors (SPEC R2): every component is opened with O_NOFOLLOW|O_DIRECTORY relative to the
 * one before it, so no path string is ever checked and then used. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "walk.h"

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

#define WALK_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

const char *agc_walk_status_name(agc_walk_status st)
{
	switch (st) {
	case AGC_WALK_OK:
		return "ok";
	case AGC_WALK_ENOENT:
		return "missing";
	case AGC_WALK_SYMLINK:
		return "symlink";
	case AGC_WALK_NOTDIR:
		return "notdir";
	case AGC_WALK_CHANGED:
		return "changed";
	case AGC_WALK_XDEV:
		return "xdev";
	case AGC_WALK_MOUNT:
		return "mount";
	case AGC_WALK_DEEP:
		return "too deep";
	case AGC_WALK_PERM:
		return "permission";
	case AGC_WALK_ERROR:
		return "error";
	}
	return "error";
}

bool agc_walk_rel_ok(const char *rel)
{
	const char *p, *comp;
	size_t len;

	/* R2: an empty or absolute path would name the root itself or leave it. */
	if (!rel || !*rel || rel[0] == '/')
		return false;
	for (comp = p = rel;; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '/' || c == '\0') {
			len = (size_t)(p - comp);
			/* R2: "a//b" and "a/" hide a component; "." and ".." step sideways or out. */
			if (len == 0 || (len == 1 && comp[0] == '.') ||
			    (len == 2 && comp[0] == '.' && comp[1] == '.'))
				return false;
			if (c == '\0')
				return true;
			comp = p + 1;
			continue;
		}
		/* R1/R2: a control byte never reaches the file system. */
		if (c < 0x20 || c == 0x7f)
			return false;
	}
}

int agc_walk_open_root(const char *root)
{
	int fd;

	/* R2: a root is an absolute path resolved once by the caller; a relative one would
	 * depend on the working directory. */
	if (!root || root[0] != '/')
		return agc_error_set(-1, "root '%s' is not an absolute path", root ? root : "(null)");
	/* The root itself may be a symlink (R2), so no O_NOFOLLOW here. */
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return agc_error_errno(-1, errno, "cannot open root '%s'", root);
	return fd;
}

/* Map the errno of a failed openat(dfd, comp, O_NOFOLLOW|O_DIRECTORY) to a status. dfd and
 * comp are used to tell a symlink from another non-directory. */
static agc_walk_status classify(int dfd, const char *comp, int e, int *err)
{
	struct stat st;

	*err = e;
	switch (e) {
	case ELOOP:
	case ENOTDIR:
	case EMLINK:
		/* R2: O_NOFOLLOW refuses a link with ELOOP on Linux, EMLINK on some BSDs, and a
		 * link to a non-directory may surface as ENOTDIR; ask the entry itself. */
		if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return AGC_WALK_SYMLINK;
		if (e == ELOOP)
			return AGC_WALK_SYMLINK;
		if (e == ENOTDIR)
			return AGC_WALK_NOTDIR;
		return AGC_WALK_ERROR;
	case ENOENT:
		return AGC_WALK_ENOENT;
	case EACCES:
	case EPERM:
		return AGC_WALK_PERM;
	default:
		return AGC_WALK_ERROR;
	}
}

/* Walk rel beneath rootfd (borrowed), opening every component but the last, or every
 * component when with_leaf. On AGC_WALK_OK *dirfd is a new fd (a dup of rootfd when nothing
 * was opened) and *leaf points at the last component of rel. */
static agc_walk_status walk(int rootfd, const char *rel, bool with_leaf, int *dirfd,
			    const char **leaf, int *err)
{
	char comp[NAME_MAX + 1];
	const char *p = rel, *slash;
	int cur = rootfd, next;
	size_t len;

	*err = 0;
	/* R2: a path with "..", "." or an empty component could step outside the root. */
	if (!agc_walk_rel_ok(rel)) {
		*err = EINVAL;
		return AGC_WALK_ERROR;
	}
	for (;;) {
		slash = strchr(p, '/');
		if (!slash && !with_leaf)
			break;
		len = slash ? (size_t)(slash - p) : strlen(p);
		/* A component longer than a name can be is refused before it is copied. */
		if (len > NAME_MAX) {
			if (cur != rootfd)
				close(cur);
			*err = ENAMETOOLONG;
			return AGC_WALK_ERROR;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		/* R2: one component at a time, never through a link, only into a directory. */
		next = openat(cur, comp, WALK_OPEN_FLAGS);
		if (next < 0) {
			agc_walk_status st;

			agc_short_note(errno);
			st = classify(cur, comp, errno, err);

			if (cur != rootfd)
				close(cur);
			return st;
		}
		if (cur != rootfd)
			close(cur);
		cur = next;
		if (!slash)
			break;
		p = slash + 1;
	}
	if (cur == rootfd) {
		/* The caller always gets an fd of its own to close. */
		cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
		if (cur < 0) {
			*err = errno;
			return AGC_WALK_ERROR;
		}
	}
	*dirfd = cur;
	if (leaf)
		*leaf = p;
	return AGC_WALK_OK;
}

agc_walk_status agc_walk_parent(int rootfd, const char *rel, int *dirfd, const char **leaf, int *err)
{
	return walk(rootfd, rel, false, dirfd, leaf, err);
}

agc_walk_status agc_walk_open_dir(int rootfd, const char *rel, int *dirfd, int *err)
{
	int fd;

	if (rel && (rel[0] == '\0' || strcmp(rel, ".") == 0)) {
		*err = 0;
		fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			*err = errno;
			return AGC_WALK_ERROR;
		}
		*dirfd = fd;
		return AGC_WALK_OK;
	}
	return walk(rootfd, rel, true, dirfd, NULL, err);
}
