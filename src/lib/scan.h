/* The read-only scanner: what lies beneath a root, measured and visited without changing
 * anything (SPEC R2, R3, R8). Discovery, ls and the gate's measuring use it; the removal walker
 * (remove.h) shares only its mount checks. */
#ifndef AGC_SCAN_H
#define AGC_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "walk.h"

/* How deep a directory tree may go (R8): each level holds one fd and one stack frame. A
 * deeper tree is measured down to this depth. The removal walker has the same bound. */
#define AGC_SCAN_MAX_DEPTH 512

/* Whether an entry is the root of a mount, as far as the system can tell (R3). */
typedef enum agc_mnt {
	AGC_MNT_NO = 0,
	AGC_MNT_YES,
	AGC_MNT_UNKNOWN,
} agc_mnt;

/* fstatat(dfd, name, AT_SYMLINK_NOFOLLOW) that also tells whether name is a mount point (R3):
 * a bind mount of another dir of the same file system has its parent's st_dev, so only statx's
 * STATX_ATTR_MOUNT_ROOT can tell it before it is entered; an automount point counts as one and
 * is not triggered. *mnt is AGC_MNT_UNKNOWN where statx cannot say. Returns 0, or -1 with
 * errno set. */
int agc_scan_lstat(int dfd, const char *name, struct stat *st, agc_mnt *mnt);

/* Whether the directory open at fd is a mount point, parent being the directory it was opened
 * from (both borrowed): statx on the fd, else its mount id against its parent's in
 * /proc/self/fdinfo. Asked of the fd about to be walked, so no swap after the check changes
 * the answer. When id is not NULL it receives the fd's (dev, ino) from the same call where
 * statx answers (else from fstat), for the caller's check that it opened what it looked at.
 * Returns AGC_MNT_UNKNOWN also when the fd cannot be examined. */
agc_mnt agc_scan_fd_mount(int fd, int parent, struct stat *id);

/* Called for every entry inside a measured directory (not the artifact itself), never for a
 * mount point nor anything behind one. st has at least type, mode, (dev, ino), size, blocks
 * and mtime. */
typedef void (*agc_scan_visit)(const struct stat *st, void *ud);

/* What lies at name of the open directory dirfd (borrowed), links never followed: bytes the
 * st_size of regular files, disk the st_blocks x 512 of the entry and of everything inside it
 * that was measured, mtime_ms the newest mtime; a directory recursively, at most max_entries
 * entries (0: no bound) and AGC_SCAN_MAX_DEPTH levels. st is name's lstat when the caller has
 * it (else NULL). visit (may be NULL) sees every entry inside. Nothing behind a mount point is
 * counted (R3): an artifact that is one measures 0 bytes; what cannot be read inside is left
 * out (a measurement is an estimate).
 * Returns 0 (the outputs that are not NULL written), AGC_ENOTFOUND, or -1. */
int agc_scan_size_in(int dirfd, const char *name, const struct stat *st, uint64_t max_entries,
		     agc_scan_visit visit, void *ud, uint64_t *bytes, uint64_t *disk, int64_t *mtime_ms);

/* An entry agc_scan_walk looked at: its name in the open directory dfd (both valid only during
 * the call), its lstat, its depth (1 for the artifact's own entries) and whether it is a mount
 * point (then it is neither measured nor entered). */
typedef struct agc_scan_ent {
	int dfd;
	const char *name;
	const struct stat *st;
	unsigned depth;
	bool mount;
} agc_scan_ent;

typedef void (*agc_scan_visit_at)(const agc_scan_ent *e, void *ud);

/* agc_scan_size_in, one pass over each directory, with a visitor that is told every entry
 * looked at, names and mount points included, so a caller that needs a dir's names learns them
 * from the measuring walk instead of listing or probing the dir again. *complete is true when
 * name is a directory and every directory inside was listed to its end with nothing left out
 * (no mount point, no other file system, nothing unreadable or changed, no bound reached):
 * only then does a name the visitor was not told of not exist there. */
int agc_scan_walk(int dirfd, const char *name, const struct stat *st, uint64_t max_entries,
		  agc_scan_visit_at visit, void *ud, uint64_t *bytes, uint64_t *disk, int64_t *mtime_ms,
		  bool *complete);

/* agc_scan_size_in of rel beneath rootfd (borrowed), reached one component at a time with
 * O_NOFOLLOW (R2: a link on the way is refused, -1). */
int agc_scan_measure(int rootfd, const char *rel, uint64_t max_entries, agc_scan_visit visit, void *ud,
		     uint64_t *bytes, uint64_t *disk, int64_t *mtime_ms);

/* Whether the names of the directory open at fd compare byte for byte, as strcmp does: a
 * listing of it then tells that a name is not there. False on a file system that may fold
 * case (a casefold dir of ext4, tmpfs or f2fs; vfat, ZFS, NTFS, a network file system, any
 * file system not known to keep names exact) and when it cannot be told: a caller then
 * probes each name, which the file system answers with its own rules. */
bool agc_scan_names_exact(int fd);

#endif
