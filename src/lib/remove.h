/* Removing one artifact beneath its root through directory fds (SPEC R2, R3). Measuring
 * without removing is the scanner's (scan.h). */
#ifndef AGC_REMOVE_H
#define AGC_REMOVE_H

#include <stdint.h>
#include <sys/types.h>

#include "scan.h"
#include "walk.h"

/* How deep a directory tree inside an artifact may go (R8). Each level holds one fd and one
 * stack frame, so the bound keeps both finite whatever the tree looks like; a deeper tree is
 * left with AGC_WALK_DEEP. */
#define AGC_RM_MAX_DEPTH AGC_SCAN_MAX_DEPTH

typedef enum agc_rm_flags {
	AGC_RM_DRY_RUN = 1 << 0, /* count what would go, change nothing */
} agc_rm_flags;

typedef struct agc_rm_result {
	uint64_t files;          /* non-directories removed (links, files, sockets...) */
	uint64_t dirs;           /* directories removed */
	uint64_t bytes;          /* st_size summed over removed regular files */
	uint64_t disk;           /* st_blocks x 512 summed over every entry inside a directory
				    (measured: also the directory itself) */
	agc_walk_status status;  /* AGC_WALK_OK when the artifact is gone; else the first failure */
	int err;                 /* errno of the first failure, 0 if none */
} agc_rm_result;

/* Remove the artifact at rel beneath rootfd (borrowed):
 * - every component before the leaf must be a real directory (else AGC_WALK_SYMLINK/NOTDIR and
 *   nothing is removed);
 * - when expect_dev/expect_ino are not both 0, the leaf (lstat) must have that (dev, ino), else
 *   AGC_WALK_CHANGED and nothing is removed;
 * - a symlink leaf is removed as the link alone; a file is unlinked;
 * - a directory is emptied depth first through fds opened with O_NOFOLLOW|O_DIRECTORY, each
 *   subdirectory's (dev, ino) checked after opening against what fstatat saw before (a dir
 *   swapped for a link mid-run is not entered), subdirectories on another device are not
 *   entered (AGC_WALK_XDEV), then removed;
 * - a mount point, inside the artifact or the artifact itself, is never entered nor removed,
 *   even one of the same file system (a bind mount): AGC_WALK_MOUNT (R3); it is told by statx
 *   (STATX_ATTR_MOUNT_ROOT) or, on kernels without it, by the mount id in /proc/self/fdinfo,
 *   and where neither can tell a directory is not entered (AGC_WALK_ERROR);
 * - a tree deeper than AGC_RM_MAX_DEPTH levels is left below that depth (AGC_WALK_DEEP); when last is non-NULL and names a direct child of
 *   that directory, that child is removed after every other one;
 * - work goes on past a failed entry, so as much as possible is removed; the first failure is
 *   reported in res.
 * Returns 0 when the artifact is gone (or would be, with AGC_RM_DRY_RUN), AGC_ENOTFOUND when it
 * did not exist, -1 otherwise (res->status says why; the error message is set). */
int agc_remove_beneath(int rootfd, const char *rel, dev_t expect_dev, ino_t expect_ino,
		       const char *last, unsigned flags, agc_rm_result *res);

#endif
