/* Bounded line reading and small jansson helpers. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "buf.h"
#include "json.h"

void agc_lines_init(agc_lines *lr, int fd, size_t max_line)
{
	memset(lr, 0, sizeof(*lr));
	lr->fd = fd;
	lr->max_line = max_line ? max_line : AGC_LINE_MAX;
}

void agc_lines_limit(agc_lines *lr, uint64_t max_bytes)
{
	lr->max_bytes = max_bytes;
}

void agc_lines_release(agc_lines *lr)
{
	free(lr->buf);
	lr->buf = NULL;
}

/* Read more bytes at the end of the buffer, compacting first. Returns bytes read, 0 at EOF, -1. */
static ssize_t fill(agc_lines *lr)
{
	ssize_t n;

	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (!lr->buf) {
		size_t cap = lr->max_line < 65536 ? lr->max_line + 2 : 65536;

		lr->buf = malloc(cap);
		if (!lr->buf)
			return agc_error_oom();
		lr->cap = cap;
	}
	if (lr->end + 1 >= lr->cap) {
		size_t cap = lr->cap * 2;
		char *p;

		if (cap > lr->max_line + 2)
			cap = lr->max_line + 2;
		if (cap <= lr->cap)
			return -2; /* full: the line is too long */
		p = realloc(lr->buf, cap);
		if (!p)
			return agc_error_oom();
		lr->buf = p;
		lr->cap = cap;
	}
	{
		size_t room = lr->cap - 1 - lr->end;

		/* R8: the bound holds inside a line too, so a head read never scans on to the
		 * end of one huge line (a 20 GB sparse file of zeros). */
		if (lr->max_bytes) {
			if (lr->nread >= lr->max_bytes) {
				lr->capped = true;
				return 0;
			}
			if (room > lr->max_bytes - lr->nread)
				room = (size_t)(lr->max_bytes - lr->nread);
		}
		do
			n = read(lr->fd, lr->buf + lr->end, room);
		while (n < 0 && errno == EINTR);
	}
	if (n < 0)
		return agc_error_errno(-1, errno, "cannot read");
	lr->end += (size_t)n;
	lr->nread += (uint64_t)n;
	return n;
}

int agc_lines_next(agc_lines *lr, const char **line, size_t *len, bool *toolong)
{
	*toolong = false;
	for (;;) {
		char *nl = NULL;
		ssize_t n;

		if (lr->end > lr->start)
			nl = memchr(lr->buf + lr->start, '\n', lr->end - lr->start);
		if (nl) {
			size_t l = (size_t)(nl - (lr->buf + lr->start));
			char *s = lr->buf + lr->start;

			lr->start += l + 1;
			if (lr->skipping) {
				/* the rest of an over-long line */
				lr->skipping = false;
				lr->offset += l + 1;
				*toolong = true;
				*line = "";
				*len = 0;
				return 1;
			}
			s[l] = '\0';
			*line = s;
			*len = l;
			lr->offset += l + 1;
			return 1;
		}
		if (lr->eof) {
			/* A line cut by the byte bound is not a line: its end was never read. */
			if (lr->capped && !lr->skipping)
				lr->start = lr->end;
			if (lr->end > lr->start && !lr->skipping) {
				char *s = lr->buf + lr->start;
				size_t l = lr->end - lr->start;

				s[l] = '\0';
				lr->start = lr->end;
				*line = s;
				*len = l;
				lr->offset += l;
				return 1;
			}
			if (lr->skipping) {
				lr->skipping = false;
				lr->start = lr->end;
				*toolong = true;
				*line = "";
				*len = 0;
				return 1;
			}
			return 0;
		}
		n = fill(lr);
		if (n == -2) {
			/* over the cap: drop what we have and skip to the next newline */
			lr->offset += lr->end - lr->start;
			lr->start = lr->end = 0;
			lr->skipping = true;
			continue;
		}
		if (n < 0)
			return -1;
		if (n == 0)
			lr->eof = true;
	}
}

/* The error of agc_open_file_at: message set (why, else strerror(e)), errno e kept. */
static int open_fail(int e, const char *why, const char *name)
{
	if (why)
		agc_error_set(-1, "cannot open '%s': %s", name, why);
	else
		agc_error_errno(-1, e, "cannot open '%s'", name);
	errno = e;
	return -1;
}

static int open_file(int dirfd, const char *name, unsigned flags, const struct stat *given,
		     struct stat *st)
{
	bool follow = flags & AGC_OPEN_FOLLOW;
	struct stat seen, now;
	int fd, e;

	/* R8: look before opening. Opening a FIFO blocks until a writer comes (or, non-blocking,
	 * still talks to one), a device may act on open (a tape rewinds, a modem line rises) and
	 * /dev/zero never ends: only a regular file is ever opened. */
	if (given) {
		seen = *given;
	} else if (fstatat(dirfd, name, &seen, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		e = errno;
		if (e == ENOENT) {
			errno = e;
			return AGC_ENOTFOUND;
		}
		return open_fail(e, NULL, name);
	}
	/* R2: never read through a link planted in a file's place, unless asked to. */
	if (S_ISLNK(seen.st_mode))
		return open_fail(ELOOP, "a symbolic link", name);
	if (!S_ISREG(seen.st_mode))
		return open_fail(EINVAL, "not a regular file", name);
	/* O_NONBLOCK and O_NOCTTY: should a FIFO or a terminal take the name between the look and
	 * the open, the open neither blocks nor adopts it; it is refused below. */
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		e = errno;
		agc_short_note(e);
		if (e == ENOENT) {
			errno = e;
			return AGC_ENOTFOUND;
		}
		return open_fail(e, e == ELOOP && !follow ? "a symbolic link" : NULL, name);
	}
	if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_dev != seen.st_dev ||
	    now.st_ino != seen.st_ino) {
		close(fd);
		return open_fail(ESTALE, "changed while being opened", name);
	}
	if (st)
		*st = now;
	return fd;
}

int agc_open_file_at(int dirfd, const char *name, unsigned flags, struct stat *st)
{
	return open_file(dirfd, name, flags, NULL, st);
}

int agc_open_file_seen(int dirfd, const char *name, const struct stat *seen, struct stat *st)
{
	return open_file(dirfd, name, 0, seen, st);
}

int agc_read_at(int dirfd, const char *name, size_t max, agc_buf *out)
{
	int fd = agc_open_file_at(dirfd, name, 0, NULL);

	if (fd < 0)
		return fd;
	return agc_read_fd(fd, name, max, out);
}

int agc_read_fd(int fd, const char *name, size_t max, agc_buf *out)
{
	size_t limit;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return agc_error_set(-1, "'%s' is not a regular file", name);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return agc_error_set(-1, "'%s' is larger than %zu bytes", name, max);
	}
	agc_buf_clear(out);
	/* Read at most max + 1 bytes (one more than allowed tells a file that grew), and never
	 * more than the buffer's own cap. */
	limit = out->max ? out->max : AGC_BUF_DEFAULT_MAX;
	if (max < limit)
		limit = max + 1;
	for (;;) {
		size_t room = limit - out->len, chunk = room < 65536 ? room : 65536;

		if (chunk == 0) {
			close(fd);
			return agc_error_set(-1, "'%s' is larger than %zu bytes", name, max);
		}
		if (agc_buf_grow(out, chunk) < 0) {
			close(fd);
			return -1;
		}
		n = read(fd, out->ptr + out->len, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return agc_error_errno(-1, e, "cannot read '%s'", name);
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->ptr[out->len] = '\0';
	}
	if (out->len > max || out->len >= limit) {
		close(fd);
		return agc_error_set(-1, "'%s' is larger than %zu bytes", name, max);
	}
	if (!out->ptr && agc_buf_add(out, "", 0) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

json_t *agc_json_parse(const char *s, size_t len)
{
	json_error_t err;

	return json_loadb(s, len, 0, &err);
}

const char *agc_json_str(const json_t *obj, const char *key)
{
	json_t *v;

	if (!json_is_object(obj))
		return NULL;
	v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

bool agc_json_line_keyed(const char *key, const char *line, size_t len, char *const *ids, size_t n_ids)
{
	json_t *j;
	const char *v;
	size_t i;
	bool hit = false;

	for (i = 0; i < n_ids && !hit; i++)
		hit = agc_mem_icase(line, len, ids[i], strlen(ids[i]));
	if (!hit)
		return false;
	j = agc_json_parse(line, len);
	v = j ? agc_json_str(j, key) : NULL;
	hit = false;
	for (i = 0; v && i < n_ids && !hit; i++)
		hit = strcasecmp(v, ids[i]) == 0;
	json_decref(j);
	return hit;
}
