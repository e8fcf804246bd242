/* Lines of plain and zstd files, decompressed as they are read (ZSTD_decompressStream): a
 * buffer of at most one line, one input chunk and zstd's window, whatever the file's size
 * (SPEC R8). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "error.h"
#include "zlines.h"

/* zstd's own default limit, which Codex's decoder keeps too: a frame Codex can read is read
 * here; one asking for more (up to 2 GiB of window) is refused instead of allocated. */
#define ZL_WINDOW_LOG_MAX 27
#define ZL_CHUNK ((size_t)64 << 10)       /* the line buffer's first size */
#define ZL_LINE_BOUND ((size_t)1 << 30)   /* no caller's max_line is larger */

struct agc_zlines {
	int fd;           /* borrowed */
	char *name;       /* for messages */
	bool zstd;
	ZSTD_DCtx *dctx;
	char *in;         /* compressed input */
	size_t in_cap;
	ZSTD_inBuffer zin;
	bool in_eof;      /* read() gave 0 */
	size_t frame_ret; /* ZSTD_decompressStream's last return: 0 between frames */

	char *buf;        /* decompressed bytes not yet returned: buf[start, end) */
	size_t cap, start, end, scan; /* scan: buf[start, scan) holds no '\n' */
	size_t max_line;
	uint64_t pos;     /* stream offset of buf[start] */
	uint64_t total, max_total;
	bool eof;         /* the stream has ended cleanly */
	bool done;        /* everything returned */
	bool skipping;    /* inside a line too long */
	uint64_t skip_offset, skip_len;
	bool stop_toolong; /* agc_zlines_first: a line too long ends the read */
	unsigned char head[4]; /* a plain file's first bytes, read to tell it from zstd */
	size_t head_len, head_pos;
	bool head_eof;    /* read() gave 0 while they were read */
	bool failed;      /* an error stopped the reader */
	char *failed_msg; /* its message (NULL when it could not be kept) */
};

/* Record the error just set as the reader's last word: later calls repeat it. */
static int fail(agc_zlines *zl)
{
	if (!zl->failed) {
		zl->failed = true;
		zl->failed_msg = strdup(agc_error_last());
	}
	return -1;
}

static ssize_t read_some(int fd, void *p, size_t n)
{
	ssize_t r;

	do
		r = read(fd, p, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Account n new bytes at the end of the buffer against the bound on the total (R8: a small
 * zstd frame can stand for any amount of output). */
static ssize_t produced(agc_zlines *zl, size_t n)
{
	zl->end += n;
	zl->total += n;
	if (zl->total > zl->max_total)
		return agc_error_set(-1, "cannot read '%s': more than %llu bytes %s", zl->name,
				     (unsigned long long)zl->max_total,
				     zl->zstd ? "decompressed" : "read");
	return (ssize_t)n;
}

static int zstd_fail(agc_zlines *zl, size_t ret)
{
	if (ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge)
		return agc_error_set(-1, "cannot read '%s': zstd frame needs a window over %u MiB",
				     zl->name, (1u << ZL_WINDOW_LOG_MAX) >> 20);
	return agc_error_set(-1, "cannot read '%s': corrupt zstd data: %s", zl->name,
			     ZSTD_getErrorName(ret));
}

/* Decompress into out: bytes made, 0 at the clean end of the input, -1 on an error. */
static ssize_t zstd_some(agc_zlines *zl, ZSTD_outBuffer *out)
{
	for (;;) {
		size_t ret;

		if (zl->zin.pos == zl->zin.size && !zl->in_eof) {
			ssize_t r = read_some(zl->fd, zl->in, zl->in_cap);

			if (r < 0)
				return agc_error_errno(-1, errno, "cannot read '%s'", zl->name);
			if (r == 0)
				zl->in_eof = true;
			zl->zin.src = zl->in;
			zl->zin.size = (size_t)r;
			zl->zin.pos = 0;
		}
		if (zl->zin.pos == zl->zin.size && zl->in_eof) {
			if (zl->frame_ret == 0)
				return 0;
			/* the input has ended inside a frame: what the decoder still holds
			 * comes out first, then the frame is known to be cut */
			ret = ZSTD_decompressStream(zl->dctx, out, &zl->zin);
			if (ZSTD_isError(ret))
				return zstd_fail(zl, ret);
			zl->frame_ret = ret;
			if (out->pos > 0 || ret == 0)
				return (ssize_t)out->pos;
			return agc_error_set(-1, "cannot read '%s': truncated zstd frame", zl->name);
		}
		ret = ZSTD_decompressStream(zl->dctx, out, &zl->zin);
		if (ZSTD_isError(ret))
			return zstd_fail(zl, ret);
		/* 0: a frame has ended and is flushed; another may follow */
		zl->frame_ret = ret;
		if (out->pos > 0)
			return (ssize_t)out->pos;
	}
}

/* More bytes at the end of the buffer, compacting and growing it up to the line bound first.
 * Returns the bytes added, 0 at the end of the stream, -1 on an error, -2 when the buffer is
 * full (the line in it is too long). */
static ssize_t produce(agc_zlines *zl)
{
	size_t room;
	ssize_t n;

	if (zl->start > 0) {
		memmove(zl->buf, zl->buf + zl->start, zl->end - zl->start);
		zl->end -= zl->start;
		zl->scan -= zl->start;
		zl->start = 0;
	}
	if (zl->end + 1 >= zl->cap) {
		size_t cap = zl->cap * 2;
		char *p;

		if (cap > zl->max_line + 2)
			cap = zl->max_line + 2;
		if (cap <= zl->cap)
			return -2;
		p = realloc(zl->buf, cap);
		if (!p)
			return agc_error_oom();
		zl->buf = p;
		zl->cap = cap;
	}
	room = zl->cap - 1 - zl->end; /* one byte kept for the NUL */
	if (zl->max_total - zl->total < room)
		room = (size_t)(zl->max_total - zl->total) + 1; /* one past: the bound is seen */
	if (zl->zstd) {
		ZSTD_outBuffer out = {zl->buf + zl->end, room, 0};

		n = zstd_some(zl, &out);
	} else if (zl->head_pos < zl->head_len) {
		n = (ssize_t)(zl->head_len - zl->head_pos < room ? zl->head_len - zl->head_pos : room);
		memcpy(zl->buf + zl->end, zl->head + zl->head_pos, (size_t)n);
		zl->head_pos += (size_t)n;
	} else if (zl->head_eof) {
		n = 0;
	} else {
		n = read_some(zl->fd, zl->buf + zl->end, room);
		if (n < 0)
			return agc_error_errno(-1, errno, "cannot read '%s'", zl->name);
	}
	if (n <= 0)
		return n;
	return produced(zl, (size_t)n);
}

int agc_zlines_open(agc_zlines **out, int fd, const char *name, size_t max_line, uint64_t max_total)
{
	agc_zlines *zl;
	unsigned char head[4];
	size_t got = 0;

	if (max_line == 0 || max_line > ZL_LINE_BOUND)
		return agc_error_set(-1, "cannot read '%s': line bound %zu out of range", name,
				     max_line);
	zl = calloc(1, sizeof(*zl));
	if (!zl)
		return agc_error_oom();
	zl->fd = fd;
	zl->max_line = max_line;
	zl->max_total = max_total ? max_total : AGC_ZLINES_TOTAL_MAX;
	zl->name = strdup(name);
	zl->cap = max_line + 2 < ZL_CHUNK ? max_line + 2 : ZL_CHUNK;
	zl->buf = malloc(zl->cap);
	if (!zl->name || !zl->buf)
		goto oom;
	/* The first bytes tell plain from zstd: a pipe may give them one at a time. */
	while (got < sizeof(head)) {
		ssize_t r = read_some(fd, head + got, sizeof(head) - got);

		if (r < 0) {
			agc_error_errno(-1, errno, "cannot read '%s'", name);
			agc_zlines_free(zl);
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	/* A zstd frame (28 b5 2f fd) or a skippable frame (5? 2a 4d 18), little-endian magics. */
	if (got == 4 && ((head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd) ||
			 ((head[0] & 0xf0) == 0x50 && head[1] == 0x2a && head[2] == 0x4d && head[3] == 0x18))) {
		zl->zstd = true;
		zl->in_cap = ZSTD_DStreamInSize();
		zl->in = malloc(zl->in_cap);
		zl->dctx = ZSTD_createDCtx();
		if (!zl->in || !zl->dctx)
			goto oom;
		if (ZSTD_isError(ZSTD_DCtx_setParameter(zl->dctx, ZSTD_d_windowLogMax,
							ZL_WINDOW_LOG_MAX))) {
			agc_error_set(-1, "cannot read '%s': zstd refused its window bound", name);
			agc_zlines_free(zl);
			return -1;
		}
		memcpy(zl->in, head, got);
		zl->zin.src = zl->in;
		zl->zin.size = got;
		zl->frame_ret = 1; /* a frame has begun */
	} else {
		/* plain: these bytes are the stream's first, handed out by produce() */
		memcpy(zl->head, head, got);
		zl->head_len = got;
		zl->head_eof = got < sizeof(head);
	}
	*out = zl;
	return 0;
oom:
	agc_zlines_free(zl);
	return agc_error_oom();
}

int agc_zlines_next(agc_zlines *zl, agc_zline *line)
{
	memset(line, 0, sizeof(*line));
	line->ptr = "";
	if (zl->failed)
		return agc_error_set(-1, "%s", zl->failed_msg ? zl->failed_msg : "out of memory");
	if (zl->done)
		return 0;
	for (;;) {
		char *nl = NULL;
		ssize_t n;

		if (zl->end > zl->scan)
			nl = memchr(zl->buf + zl->scan, '\n', zl->end - zl->scan);
		if (nl) {
			size_t l = (size_t)(nl - (zl->buf + zl->start));

			if (zl->skipping) {
				/* the end of a line too long: reported, never kept */
				zl->skipping = false;
				line->flags = AGC_ZLINE_TOOLONG;
				line->offset = zl->skip_offset;
				line->full_len = zl->skip_len + l;
			} else {
				*nl = '\0';
				line->ptr = zl->buf + zl->start;
				line->len = l;
				line->full_len = l;
				line->offset = zl->pos;
			}
			zl->start += l + 1;
			zl->scan = zl->start;
			zl->pos += l + 1;
			return 1;
		}
		zl->scan = zl->end;
		if (zl->skipping) {
			/* nothing of a line too long is kept: only its length */
			zl->skip_len += zl->end - zl->start;
			zl->pos += zl->end - zl->start;
			zl->start = zl->end = zl->scan = 0;
		}
		if (zl->eof) {
			size_t l = zl->end - zl->start;

			zl->done = true;
			if (zl->skipping) {
				zl->skipping = false;
				line->flags = AGC_ZLINE_TOOLONG | AGC_ZLINE_PARTIAL;
				line->offset = zl->skip_offset;
				line->full_len = zl->skip_len;
				return 1;
			}
			if (l == 0)
				return 0;
			/* the last line has no '\n': a file being written, cut mid-line */
			zl->buf[zl->end] = '\0';
			line->ptr = zl->buf + zl->start;
			line->len = l;
			line->full_len = l;
			line->offset = zl->pos;
			line->flags = AGC_ZLINE_PARTIAL;
			zl->pos += l;
			zl->start = zl->scan = zl->end;
			return 1;
		}
		n = produce(zl);
		if (n == -2) {
			if (zl->stop_toolong) {
				/* a head read: a long line is not read on to its end */
				zl->done = true;
				line->flags = AGC_ZLINE_TOOLONG | AGC_ZLINE_UNMEASURED;
				line->offset = zl->pos;
				return 1;
			}
			zl->skipping = true;
			zl->skip_offset = zl->pos;
			zl->skip_len = 0;
			continue;
		}
		if (n < 0)
			return fail(zl);
		if (n == 0)
			zl->eof = true;
	}
}

uint64_t agc_zlines_total(const agc_zlines *zl)
{
	return zl->total;
}

int agc_zlines_is_zstd(const agc_zlines *zl)
{
	return zl->zstd;
}

void agc_zlines_free(agc_zlines *zl)
{
	if (!zl)
		return;
	ZSTD_freeDCtx(zl->dctx);
	free(zl->in);
	free(zl->buf);
	free(zl->name);
	free(zl->failed_msg);
	free(zl);
}

int agc_zlines_first(int fd, const char *name, size_t max_line, char **line, size_t *len,
		     unsigned *flags)
{
	agc_zlines *zl;
	agc_zline l;
	int rc;

	*line = NULL;
	*len = 0;
	*flags = 0;
	if (agc_zlines_open(&zl, fd, name, max_line, 0) < 0)
		return -1;
	zl->stop_toolong = true;
	rc = agc_zlines_next(zl, &l);
	if (rc == 1) {
		*flags = l.flags;
		if (!(l.flags & AGC_ZLINE_TOOLONG)) {
			/* the line may hold NULs: copied by its length */
			*line = malloc(l.len + 1);
			if (!*line) {
				rc = agc_error_oom();
			} else {
				memcpy(*line, l.ptr, l.len + 1);
				*len = l.len;
			}
		}
	}
	agc_zlines_free(zl);
	return rc;
}
