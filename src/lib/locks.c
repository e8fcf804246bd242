/* Agents' lock conventions for shared files. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "error.h"

/* proper-lockfile (Claude's history.jsonl): the lock is a directory made with mkdir, its mtime
 * refreshed while held; older than stale_ms it may be broken. Returns 0 when taken,
 * AGC_EINUSE when a fresh lock is held by someone else, -1 on error. */
int agc_lock_mkdir_take(int dirfd, const char *name, int64_t stale_ms, int64_t now_ms)
{
	int tries;

	for (tries = 0; tries < 4; tries++) {
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
		if (tries < 3) {
			struct timespec ts = {0, 100 * 1000 * 1000};

			nanosleep(&ts, NULL);
			now_ms += 100;
		}
	}
	return agc_error_set(AGC_EINUSE, "lock '%s' is held", name);
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
