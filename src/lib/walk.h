/* Reaching an artifact beneath its root one component at a time through directory file
 * descriptors, never following a symlink on the way (SPEC R2). */
#ifndef AGC_WALK_H
#define AGC_WALK_H

#include <stdbool.h>
#include <sys/types.h>

/* Why a path beneath a root could not be reached or removed, in order of increasing seriousness. */
typedef enum agc_walk_status {
	AGC_WALK_OK = 0,
	AGC_WALK_ENOENT,     /* a component (or the leaf) does not exist */
	AGC_WALK_SYMLINK,    /* a component between the root and the leaf is a symlink (R2) */
	AGC_WALK_NOTDIR,     /* a component between the root and the leaf is not a directory */
	AGC_WALK_CHANGED,    /* the leaf is not the (dev, ino) discovery saw, or a dir was swapped */
	AGC_WALK_XDEV,       /* a directory inside the artifact is on another file system (R3) */
	AGC_WALK_MOUNT,      /* the artifact is, or holds, a mount point: not entered (R3) */
	AGC_WALK_DEEP,       /* a directory tree deeper than AGC_RM_MAX_DEPTH levels (R8) */
	AGC_WALK_PERM,       /* EACCES or EPERM */
	AGC_WALK_ERROR,      /* any other errno */
} agc_walk_status;

/* A short reason word for reports: "symlink", "permission", "error: ..." are built by the caller
 * from this and errno. */
const char *agc_walk_status_name(agc_walk_status st);

/* True when rel is a usable relative path: non-empty, no leading '/', every '/'-separated
 * component non-empty and neither "." nor "..", no control byte. */
bool agc_walk_rel_ok(const char *rel);

/* Open a root directory given as an absolute, already resolved path (the root itself may
 * have been a symlink; the caller resolved it once). Returns an O_DIRECTORY|O_CLOEXEC fd, or -1
 * with the error set. */
int agc_walk_open_root(const char *root);

/* Open the parent directory of rel beneath rootfd: each component but the last is opened with
 * openat(O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC), relative to the previous one. rootfd is borrowed.
 * On AGC_WALK_OK, *dirfd is a new fd the caller closes and *leaf points into rel at the last
 * component. On failure nothing is left open, *err holds the errno (0 when not applicable). */
agc_walk_status agc_walk_parent(int rootfd, const char *rel, int *dirfd, const char **leaf, int *err);

/* Open a directory rel beneath rootfd (all components, the leaf included, with O_NOFOLLOW).
 * Same conventions as agc_walk_parent. rel may be "" or "." for the root itself (a dup). */
agc_walk_status agc_walk_open_dir(int rootfd, const char *rel, int *dirfd, int *err);

#endif
