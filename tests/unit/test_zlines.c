/* Unit tests of zlines.c: lines of plain and zstd streams (Codex rollouts, formats/codex.md
 * §2, §3) read with memory bounded by the line, a bound on the bytes decompressed (SPEC R8: a
 * zstd bomb ends in an error, not in a run without end), truncated and corrupt frames reported,
 * a partial last line flagged. Files are memfds (nothing on disk); pipes are fed by a child
 * that is always reaped or killed. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"
#include "error.h"
#include "zlines.h"

static pid_t writer = -1; /* a pipe's feeding child not reaped yet */

/* A regular file (a memfd) holding data, its offset at 0. */
static int file_fd(const void *data, size_t len)
{
	int fd = memfd_create("zlines-test", MFD_CLOEXEC);
	size_t off = 0;

	assert_true(fd >= 0);
	while (off < len) {
		ssize_t w = write(fd, (const char *)data + off, len - off);

		assert_true(w > 0);
		off += (size_t)w;
	}
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* The read end of a pipe fed by a child writing data chunk bytes at a time (short reads);
 * with hold, the child keeps the pipe open after the data until it is killed. */
static int pipe_fd(const void *data, size_t len, size_t chunk, bool hold)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t off = 0;

		close(p[0]);
		while (off < len) {
			size_t n = len - off < chunk ? len - off : chunk;
			ssize_t w = write(p[1], (const char *)data + off, n);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		if (hold)
			for (;;)
				pause();
		_exit(0);
	}
	close(p[1]);
	writer = pid;
	return p[0];
}

static void reap(void)
{
	int status;

	assert_int_equal(waitpid(writer, &status, 0), writer);
	writer = -1;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void kill_writer(void)
{
	if (writer > 0) {
		kill(writer, SIGKILL);
		waitpid(writer, NULL, 0);
		writer = -1;
	}
}

/* data compressed as one zstd frame (malloc'd). */
static unsigned char *zst(const void *data, size_t len, size_t *zlen)
{
	size_t cap = ZSTD_compressBound(len);
	unsigned char *z = malloc(cap);
	size_t n;

	assert_non_null(z);
	n = ZSTD_compress(z, cap, data, len, 3);
	assert_false(ZSTD_isError(n));
	*zlen = n;
	return z;
}

/* Every line of fd, as "text|" for a line, "<long N>|" for one too long, with "+" before the
 * '|' of a partial line; and the reader's final return in *rc. */
static char *read_all(int fd, const char *name, size_t max_line, uint64_t max_total, int *rc)
{
	static char out[1 << 16];
	size_t o = 0;
	agc_zlines *zl;
	agc_zline l;
	uint64_t next = 0;

	assert_int_equal(agc_zlines_open(&zl, fd, name, max_line, max_total), 0);
	out[0] = '\0';
	while ((*rc = agc_zlines_next(zl, &l)) == 1) {
		/* lines follow one another in the stream */
		assert_int_equal(l.offset, next);
		next = l.offset + l.full_len + !(l.flags & AGC_ZLINE_PARTIAL);
		assert_int_equal(l.ptr[l.len], '\0');
		if (l.flags & AGC_ZLINE_TOOLONG)
			assert_int_equal(l.len, 0);
		else
			assert_true(l.len <= max_line && l.full_len == l.len);
		if (o + l.len + 64 > sizeof(out))
			continue; /* only counted: a stream of a million lines */
		if (l.flags & AGC_ZLINE_TOOLONG) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "<long %llu>",
					      (unsigned long long)l.full_len);
		} else {
			memcpy(out + o, l.ptr, l.len);
			o += l.len;
		}
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s|",
				      l.flags & AGC_ZLINE_PARTIAL ? "+" : "");
	}
	agc_zlines_free(zl);
	return out;
}

/* read_all on a regular file holding data, plain and compressed: both give want (and rc 0). */
static void both(const char *data, size_t max_line, const char *want)
{
	unsigned char *z;
	size_t zlen;
	int fd, rc;

	fd = file_fd(data, strlen(data));
	assert_string_equal(read_all(fd, "a.jsonl", max_line, 0, &rc), want);
	assert_int_equal(rc, 0);
	close(fd);
	z = zst(data, strlen(data), &zlen);
	fd = file_fd(z, zlen);
	assert_string_equal(read_all(fd, "a.jsonl.zst", max_line, 0, &rc), want);
	assert_int_equal(rc, 0);
	close(fd);
	free(z);
}

static void test_zlines_plain_and_zstd(void **state)
{
	unsigned char *z;
	size_t zlen;
	agc_zlines *zl;
	agc_zline l;
	int fd;

	both("a\nbb\n\nccc\n", 100, "a|bb||ccc|");
	both("{\"x\":1}\n", 100, "{\"x\":1}|");
	/* only '\n' ends a line: a CR stays in it */
	both("a\r\nb\n", 100, "a\r|b|");

	/* plain or zstd by the magic bytes, whatever the name says */
	z = zst("x\n", 2, &zlen);
	fd = file_fd(z, zlen);
	assert_int_equal(agc_zlines_open(&zl, fd, "plain.jsonl", 10, 0), 0);
	assert_true(agc_zlines_is_zstd(zl));
	assert_int_equal(agc_zlines_next(zl, &l), 1);
	assert_string_equal(l.ptr, "x");
	assert_int_equal(agc_zlines_next(zl, &l), 0);
	assert_int_equal(agc_zlines_next(zl, &l), 0);
	agc_zlines_free(zl);
	close(fd);
	fd = file_fd("x\n", 2);
	assert_int_equal(agc_zlines_open(&zl, fd, "a.jsonl.zst", 10, 0), 0);
	assert_false(agc_zlines_is_zstd(zl));
	agc_zlines_free(zl);
	close(fd);
	free(z);
}

static void test_zlines_nul_in_line(void **state)
{
	static const char data[] = "a\0b\nc\n";
	agc_zlines *zl;
	agc_zline l;
	int fd = file_fd(data, sizeof(data) - 1);

	assert_int_equal(agc_zlines_open(&zl, fd, "n", 10, 0), 0);
	assert_int_equal(agc_zlines_next(zl, &l), 1);
	assert_int_equal(l.len, 3);
	assert_memory_equal(l.ptr, "a\0b", 4);
	assert_int_equal(agc_zlines_next(zl, &l), 1);
	assert_int_equal(l.len, 1);
	agc_zlines_free(zl);
	close(fd);
}

/* A line over the caller's bound is reported with its length and skipped, never kept; a line
 * of exactly the bound is returned. */
static void test_zlines_line_over_max(void **state)
{
	both("short\n0123456789abcdefghijklmno\nafter\n", 10, "short|<long 25>|after|");
	both("0123456789\n0123456789a\n", 10, "0123456789|<long 11>|");
	both("x\n01234567890\ny", 10, "x|<long 11>|y+|");
	both("0123456789abc", 10, "<long 13>+|");
}

/* A line much longer than the buffer: skipped in many reads, memory kept to the bound. */
static void test_zlines_long_line_skipped(void **state)
{
	size_t n = (size_t)3 << 20;
	char *data = malloc(n + 16);
	char want[64];

	assert_non_null(data);
	memset(data, 'q', n);
	memcpy(data + n, "\nend\n", 6);
	snprintf(want, sizeof(want), "<long %zu>|end|", n);
	both(data, 1000, want);
	free(data);
}

/* Line 0 of a Codex rollout is 21-27 KB: read whole, by the reader and by agc_zlines_first. */
static void test_zlines_first_line_30k(void **state)
{
	size_t n = 30 * 1024, rest = (size_t)4 << 20, i;
	char *data = malloc(n + rest + 1);
	unsigned char *z;
	size_t zlen, len;
	char *line;
	unsigned flags;
	agc_zlines *zl;
	agc_zline l;
	int fd;

	assert_non_null(data);
	for (i = 0; i < n; i++)
		data[i] = (char)('a' + i % 26);
	data[n] = '\n';
	for (i = n + 1; i < n + rest; i++)
		data[i] = (i % 100 == 0) ? '\n' : (char)('0' + i % 10);
	data[n + rest] = '\0';

	fd = file_fd(data, n + rest);
	assert_int_equal(agc_zlines_first(fd, "r.jsonl", AGC_ZLINES_FIRST_MAX, &line, &len, &flags), 1);
	assert_int_equal(len, n);
	assert_int_equal(flags, 0);
	assert_memory_equal(line, data, n);
	assert_int_equal(line[n], '\0');
	free(line);
	close(fd);

	z = zst(data, n + rest, &zlen);
	fd = file_fd(z, zlen);
	assert_int_equal(agc_zlines_first(fd, "r.jsonl.zst", AGC_ZLINES_FIRST_MAX, &line, &len, &flags), 1);
	assert_int_equal(len, n);
	assert_int_equal(flags, 0);
	assert_memory_equal(line, data, n);
	free(line);
	close(fd);

	/* cheap: decompressing stops soon after the line's end, not at the file's */
	fd = file_fd(z, zlen);
	assert_int_equal(agc_zlines_open(&zl, fd, "r.jsonl.zst", AGC_ZLINES_FIRST_MAX, 0), 0);
	assert_int_equal(agc_zlines_next(zl, &l), 1);
	assert_int_equal(l.len, n);
	assert_true(agc_zlines_total(zl) < (uint64_t)256 << 10);
	agc_zlines_free(zl);
	close(fd);

	/* and it never waits for the rest: a pipe whose writer stays, plain and compressed */
	alarm(20);
	fd = pipe_fd(data, n + rest, 4096, true);
	assert_int_equal(agc_zlines_first(fd, "p", AGC_ZLINES_FIRST_MAX, &line, &len, &flags), 1);
	assert_int_equal(len, n);
	free(line);
	close(fd);
	kill_writer();
	fd = pipe_fd(z, zlen, 4096, true);
	assert_int_equal(agc_zlines_first(fd, "p.zst", AGC_ZLINES_FIRST_MAX, &line, &len, &flags), 1);
	assert_int_equal(len, n);
	assert_memory_equal(line, data, n);
	free(line);
	close(fd);
	kill_writer();
	alarm(0);
	free(z);
	free(data);
}

static void test_zlines_first_cases(void **state)
{
	char *line;
	size_t len;
	unsigned flags;
	unsigned char *z;
	size_t zlen;
	int fd;

	/* empty */
	fd = file_fd("", 0);
	assert_int_equal(agc_zlines_first(fd, "e", 100, &line, &len, &flags), 0);
	assert_null(line);
	close(fd);
	/* a partial line 0: a rollout being written */
	fd = file_fd("{\"a\"", 4);
	assert_int_equal(agc_zlines_first(fd, "p", 100, &line, &len, &flags), 1);
	assert_string_equal(line, "{\"a\"");
	assert_int_equal(flags, AGC_ZLINE_PARTIAL);
	free(line);
	close(fd);
	/* over the bound: not read to its end, length unknown */
	fd = file_fd("0123456789abc\nx\n", 16);
	assert_int_equal(agc_zlines_first(fd, "l", 10, &line, &len, &flags), 1);
	assert_null(line);
	assert_int_equal(flags, AGC_ZLINE_TOOLONG | AGC_ZLINE_UNMEASURED);
	close(fd);
	/* a truncated frame is an error here too */
	z = zst("abc", 3, &zlen);
	fd = file_fd(z, zlen - 2);
	assert_int_equal(agc_zlines_first(fd, "t.zst", 10, &line, &len, &flags), -1);
	assert_null(line);
	assert_string_equal(agc_error_last(), "cannot read 't.zst': truncated zstd frame");
	close(fd);
	free(z);
}

static void test_zlines_no_trailing_newline(void **state)
{
	both("a\nlast", 100, "a|last+|");
	both("only", 100, "only+|");
	both("a", 100, "a+|");
	both("ab\n", 100, "ab|");
}

static void test_zlines_empty(void **state)
{
	int fd = file_fd("", 0), rc;
	unsigned char *z;
	size_t zlen;

	assert_string_equal(read_all(fd, "e", 10, 0, &rc), "");
	assert_int_equal(rc, 0);
	close(fd);
	/* an empty frame: no lines */
	z = zst("", 0, &zlen);
	fd = file_fd(z, zlen);
	assert_string_equal(read_all(fd, "e.zst", 10, 0, &rc), "");
	assert_int_equal(rc, 0);
	close(fd);
	free(z);
}

static void test_zlines_truncated_frame(void **state)
{
	static const char data[] = "one\ntwo\nthree\n";
	unsigned char *z;
	size_t zlen, cut;
	int fd, rc;

	z = zst(data, strlen(data), &zlen);
	/* every cut of the frame, down to its magic alone, is an error */
	for (cut = 4; cut < zlen; cut++) {
		fd = file_fd(z, cut);
		read_all(fd, "t.jsonl.zst", 100, 0, &rc);
		assert_int_equal(rc, -1);
		assert_string_equal(agc_error_last(), "cannot read 't.jsonl.zst': truncated zstd frame");
		close(fd);
	}
	free(z);
}

/* A truncated frame after some whole lines: they come first, then the error, then it again. */
static void test_zlines_truncated_after_lines(void **state)
{
	size_t n = (size_t)1 << 20, i, zlen;
	char *data = malloc(n);
	unsigned char *z;
	agc_zlines *zl;
	agc_zline l;
	int fd, rc, lines = 0;

	assert_non_null(data);
	for (i = 0; i < n; i++)
		data[i] = (i % 64 == 63) ? '\n' : (char)('a' + (i * 7919) % 26);
	z = zst(data, n, &zlen);
	fd = file_fd(z, zlen / 2);
	assert_int_equal(agc_zlines_open(&zl, fd, "t.zst", 1000, 0), 0);
	while ((rc = agc_zlines_next(zl, &l)) == 1) {
		assert_int_equal(l.len, 63);
		lines++;
	}
	assert_int_equal(rc, -1);
	assert_true(lines > 0 && lines < (int)(n / 64));
	assert_string_equal(agc_error_last(), "cannot read 't.zst': truncated zstd frame");
	agc_error_clear();
	assert_int_equal(agc_zlines_next(zl, &l), -1);
	assert_string_equal(agc_error_last(), "cannot read 't.zst': truncated zstd frame");
	agc_zlines_free(zl);
	close(fd);
	free(z);
	free(data);
}

static void test_zlines_garbage_after_magic(void **state)
{
	static const unsigned char data[] = "\x28\xb5\x2f\xfdgarbage garbage garbage\n";
	int fd = file_fd(data, sizeof(data) - 1), rc;

	read_all(fd, "g.zst", 100, 0, &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(agc_error_last(), "cannot read 'g.zst': corrupt zstd data: "));
	close(fd);
}

/* Garbage after a whole frame is corrupt data, not a clean end. */
static void test_zlines_garbage_after_frame(void **state)
{
	unsigned char *z, *buf;
	size_t zlen;
	int fd, rc;

	z = zst("a\n", 2, &zlen);
	buf = malloc(zlen + 16);
	assert_non_null(buf);
	memcpy(buf, z, zlen);
	memcpy(buf + zlen, "not a frame!", 12);
	fd = file_fd(buf, zlen + 12);
	assert_string_equal(read_all(fd, "g.zst", 100, 0, &rc), "a|");
	assert_int_equal(rc, -1);
	assert_non_null(strstr(agc_error_last(), "cannot read 'g.zst': corrupt zstd data: "));
	close(fd);
	free(buf);
	free(z);
}

/* Frames one after the other are one stream, a line may span two; a skippable frame (first or
 * between) holds no lines. */
static void test_zlines_concatenated_frames(void **state)
{
	static const unsigned char skip[] = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'};
	unsigned char *a, *b, *c, *buf;
	size_t alen, blen, clen, o = 0;
	int fd, rc;

	a = zst("one\ntw", 6, &alen);
	b = zst("o\nthree\n", 8, &blen);
	c = zst("four", 4, &clen);
	buf = malloc(sizeof(skip) * 2 + alen + blen + clen);
	assert_non_null(buf);
	memcpy(buf + o, skip, sizeof(skip));
	o += sizeof(skip);
	memcpy(buf + o, a, alen);
	o += alen;
	memcpy(buf + o, b, blen);
	o += blen;
	memcpy(buf + o, skip, sizeof(skip));
	o += sizeof(skip);
	memcpy(buf + o, c, clen);
	o += clen;
	fd = file_fd(buf, o);
	assert_string_equal(read_all(fd, "c.zst", 100, 0, &rc), "one|two|three|four+|");
	assert_int_equal(rc, 0);
	close(fd);
	/* the same over a pipe, one byte per read */
	fd = pipe_fd(buf, o, 1, false);
	assert_string_equal(read_all(fd, "c.zst", 100, 0, &rc), "one|two|three|four+|");
	assert_int_equal(rc, 0);
	close(fd);
	reap();
	free(buf);
	free(a);
	free(b);
	free(c);
}

/* A few KB that decompress to 64 MiB: the bound on the total stops it with an error, whether
 * the output is one line too long or many short ones (R8). */
static void test_zlines_bomb(void **state)
{
	size_t n = (size_t)64 << 20, zlen;
	char *data = malloc(n);
	unsigned char *z;
	int fd, rc;

	assert_non_null(data);
	memset(data, 'A', n);
	z = zst(data, n, &zlen);
	assert_true(zlen < (size_t)64 << 10);
	fd = file_fd(z, zlen);
	read_all(fd, "b.zst", 1000, (uint64_t)1 << 20, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(agc_error_last(), "cannot read 'b.zst': more than 1048576 bytes decompressed");
	close(fd);
	free(z);

	memset(data, '\n', n);
	z = zst(data, n, &zlen);
	fd = file_fd(z, zlen);
	read_all(fd, "b.zst", 1000, (uint64_t)1 << 20, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(agc_error_last(), "cannot read 'b.zst': more than 1048576 bytes decompressed");
	close(fd);
	free(z);

	/* a plain file is held to the bound too; one of exactly the bound is read */
	fd = file_fd(data, 4096);
	read_all(fd, "b", 1000, 4095, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(agc_error_last(), "cannot read 'b': more than 4095 bytes read");
	close(fd);
	fd = file_fd(data, 4096);
	read_all(fd, "b", 1000, 4096, &rc);
	assert_int_equal(rc, 0);
	close(fd);
	free(data);
}

/* A frame asking for a 256 MiB window is refused, not allocated. */
static void test_zlines_window_too_large(void **state)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	unsigned char out[4096];
	ZSTD_outBuffer o = {out, sizeof(out), 0};
	ZSTD_inBuffer in = {"hello\n", 6, 0};
	int fd, rc;

	assert_non_null(cc);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 28)));
	/* continue then end: the size is not known, so the header keeps the window asked for */
	assert_false(ZSTD_isError(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_continue)));
	assert_int_equal(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end), 0);
	ZSTD_freeCCtx(cc);
	/* the frame header descriptor: not single-segment, so a window descriptor follows,
	 * whose exponent is the window log less 10 (RFC 8878 3.1.1.1) */
	assert_true(o.pos > 6);
	assert_int_equal(out[4] & 0x20, 0);
	assert_int_equal(10 + (out[5] >> 3), 28);
	fd = file_fd(out, o.pos);
	read_all(fd, "w.zst", 100, 0, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(agc_error_last(), "cannot read 'w.zst': zstd frame needs a window over 128 MiB");
	close(fd);
}

/* Short reads: a pipe giving a few bytes at a time (callers pass regular files, but nothing
 * here assumes a read fills its buffer). */
static void test_zlines_short_reads(void **state)
{
	static const char data[] = "first line\nsecond\n\nthe last";
	unsigned char *z;
	size_t zlen, chunk;
	int fd, rc;

	z = zst(data, strlen(data), &zlen);
	for (chunk = 1; chunk <= 5; chunk += 2) {
		fd = pipe_fd(data, strlen(data), chunk, false);
		assert_string_equal(read_all(fd, "p", 100, 0, &rc), "first line|second||the last+|");
		assert_int_equal(rc, 0);
		close(fd);
		reap();
		fd = pipe_fd(z, zlen, chunk, false);
		assert_string_equal(read_all(fd, "p.zst", 100, 0, &rc), "first line|second||the last+|");
		assert_int_equal(rc, 0);
		close(fd);
		reap();
	}
	/* a magic cut short by the end of a pipe: three bytes of plain text */
	fd = pipe_fd("\x28\xb5\x2f", 3, 1, false);
	assert_string_equal(read_all(fd, "p", 100, 0, &rc), "\x28\xb5\x2f+|");
	close(fd);
	reap();
	free(z);
}

static void test_zlines_read_error(void **state)
{
	agc_zlines *zl;
	agc_zline l;
	int p[2];

	/* the write end of a pipe: read() fails with EBADF */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(agc_zlines_open(&zl, p[1], "w", 10, 0), -1);
	assert_string_equal(agc_error_last(), "cannot read 'w': Bad file descriptor");
	/* a read error after the first bytes: the fd is replaced under the reader */
	assert_int_equal(write(p[1], "abcdefgh", 8), 8);
	assert_int_equal(agc_zlines_open(&zl, p[0], "r", 10, 0), 0);
	assert_int_equal(dup2(p[1], p[0]), p[0]);
	assert_int_equal(agc_zlines_next(zl, &l), -1);
	assert_string_equal(agc_error_last(), "cannot read 'r': Bad file descriptor");
	agc_zlines_free(zl);
	close(p[0]);
	close(p[1]);
	/* a bound out of range */
	assert_int_equal(agc_zlines_open(&zl, 0, "x", 0, 0), -1);
}

static int teardown(void **state)
{
	kill_writer();
	return 0;
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_zlines_plain_and_zstd),
		T(test_zlines_nul_in_line),
		T(test_zlines_line_over_max),
		T(test_zlines_long_line_skipped),
		T(test_zlines_first_line_30k),
		T(test_zlines_first_cases),
		T(test_zlines_no_trailing_newline),
		T(test_zlines_empty),
		T(test_zlines_truncated_frame),
		T(test_zlines_truncated_after_lines),
		T(test_zlines_garbage_after_magic),
		T(test_zlines_garbage_after_frame),
		T(test_zlines_concatenated_frames),
		T(test_zlines_bomb),
		T(test_zlines_window_too_large),
		T(test_zlines_short_reads),
		T(test_zlines_read_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
