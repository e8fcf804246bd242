/* agentgc's own state dir (state.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "state.h"

int agc_state_dir(char *out, size_t size, bool make)
{
	const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
	char *p;
	int n;

	if (x && x[0] == '/')
		n = snprintf(out, size, "%s/agentgc", x);
	else if (h && h[0] == '/')
		n = snprintf(out, size, "%s/.local/state/agentgc", h);
	else
		return agc_error_set(-1, "no state dir: neither XDG_STATE_HOME nor HOME is an absolute path");
	if (n < 0 || (size_t)n >= size)
		return agc_error_set(-1, "the state dir's path is too long");
	if (!make)
		return 0;
	for (p = out + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(out, 0700) < 0 && errno != EEXIST) {
			agc_error_errno(-1, errno, "cannot make '%s'", out);
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return agc_error_errno(-1, errno, "cannot make '%s'", out);
	return 0;
}

int agc_state_write(const char *dir, const char *name, const char *data, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, rc = 0, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    (n = snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid())) < 0 || (size_t)n >= sizeof(tmp))
		return agc_error_set(-1, "the path of '%s' in '%s' is too long", name, dir);
	if (len == 0) {
		if (unlink(path) < 0 && errno != ENOENT)
			return agc_error_errno(-1, errno, "cannot remove '%s'", path);
		return 0;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return agc_error_errno(-1, errno, "cannot write '%s'", tmp);
	errno = 0;
	if (write(fd, data, len) != (ssize_t)len || fsync(fd) < 0)
		rc = agc_error_errno(-1, errno ? errno : EIO, "cannot write '%s'", tmp);
	if (close(fd) < 0 && rc == 0)
		rc = agc_error_errno(-1, errno, "cannot write '%s'", tmp);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = agc_error_errno(-1, errno, "cannot rename '%s'", tmp);
	if (rc < 0)
		unlink(tmp);
	return rc;
}
