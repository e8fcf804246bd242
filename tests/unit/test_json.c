/* Unit tests of json.c: the bounded line reader, bounded whole-file reads and JSON parsing
 * (SPEC R8: every read is bounded; malformed input is skipped, never a crash). Files live in a
 * fresh directory under $TMPDIR (agc_test.h); pipes are fed by a child process that is always
 * reaped. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "buf.h"
#include "error.h"
#include "json.h"

static int dirfd_ = -1;
static pid_t writer = -1; /* a pipe's feeding child not reaped yet */

/* A read-only fd on a temp file holding data. */
static int file_fd(const char *data, size_t len)
{
	int fd;

	t_write("lines.txt", data, len);
	fd = open(t_path("lines.txt"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* The read end of a pipe fed by a child that writes data in chunks of chunk bytes, so that a
 * line reaches the reader in several reads. *child is reaped with reap(). */
static int pipe_fd(const char *data, size_t len, size_t chunk, pid_t *child)
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
			ssize_t w = write(p[1], data + off, n);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
			if (chunk < len)
				usleep(200);
		}
		_exit(0);
	}
	close(p[1]);
	*child = pid;
	writer = pid;
	return p[0];
}

static void reap(pid_t pid)
{
	int status;

	writer = -1;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* What the reader returned: each line's bytes (NULL for a line reported too long). */
typedef struct got {
	char *line[64];
	size_t len[64];
	size_t n;
} got;

static void read_all(int fd, size_t max_line, got *g)
{
	agc_lines lr;
	const char *line;
	size_t len;
	bool toolong;
	int rc;

	memset(g, 0, sizeof(*g));
	agc_lines_init(&lr, fd, max_line);
	while ((rc = agc_lines_next(&lr, &line, &len, &toolong)) == 1) {
		assert_true(g->n < 64);
		if (toolong) {
			assert_int_equal(len, 0);
			g->line[g->n] = NULL;
		} else {
			/* Every line comes NUL-terminated at len. */
			assert_int_equal(line[len], '\0');
			g->line[g->n] = malloc(len + 1);
			assert_non_null(g->line[g->n]);
			memcpy(g->line[g->n], line, len + 1);
		}
		g->len[g->n++] = len;
	}
	assert_int_equal(rc, 0);
	/* End of file stays end of file. */
	assert_int_equal(agc_lines_next(&lr, &line, &len, &toolong), 0);
	agc_lines_release(&lr);
}

static void got_free(got *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->line[i]);
	g->n = 0;
}

/* Check line i: want NULL means "reported too long". */
static void line_is(const got *g, size_t i, const char *want, size_t wlen)
{
	assert_true(i < g->n);
	if (!want) {
		if (g->line[i])
			fail_msg("line %zu: '%s', not reported too long", i, g->line[i]);
		return;
	}
	if (!g->line[i])
		fail_msg("line %zu reported too long, not '%s'", i, want);
	assert_int_equal(g->len[i], wlen);
	assert_memory_equal(g->line[i], want, wlen);
}
#define LINE_IS(g, i, s) line_is((g), (i), (s), sizeof(s) - 1)

static int setup(void **state)
{
	(void)state;
	if (t_setup_dir("json") < 0)
		return -1;
	dirfd_ = open(t_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dirfd_ < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	if (writer > 0) {
		/* a test failed before reaping its writer */
		kill(writer, SIGKILL);
		waitpid(writer, NULL, 0);
		writer = -1;
	}
	if (dirfd_ >= 0)
		close(dirfd_);
	dirfd_ = -1;
	return t_teardown_dir();
}

/* R8: ordinary lines from a file come back without their newline. */
static void test_json_lines_normal(void **state)
{
	static const char text[] = "{\"a\":1}\nbb\nccc\n";
	int fd = file_fd(text, sizeof(text) - 1);
	got g;

	(void)state;
	read_all(fd, 0, &g);
	close(fd);
	assert_int_equal(g.n, 3);
	LINE_IS(&g, 0, "{\"a\":1}");
	LINE_IS(&g, 1, "bb");
	LINE_IS(&g, 2, "ccc");
	got_free(&g);
}

/* R8: the same through a pipe that delivers the text a few bytes at a time. */
static void test_json_lines_pipe(void **state)
{
	static const char text[] = "first line\nsecond\n\nfourth, the last one";
	pid_t child;
	int fd = pipe_fd(text, sizeof(text) - 1, 3, &child);
	got g;

	(void)state;
	read_all(fd, 0, &g);
	close(fd);
	reap(child);
	assert_int_equal(g.n, 4);
	LINE_IS(&g, 0, "first line");
	LINE_IS(&g, 1, "second");
	LINE_IS(&g, 2, "");
	LINE_IS(&g, 3, "fourth, the last one");
	got_free(&g);
}

/* R8: a truncated file's last line (no newline) is still returned. */
static void test_json_lines_last_without_newline(void **state)
{
	static const char text[] = "a\nlast";
	int fd = file_fd(text, sizeof(text) - 1);
	got g;

	(void)state;
	read_all(fd, 0, &g);
	close(fd);
	assert_int_equal(g.n, 2);
	LINE_IS(&g, 0, "a");
	LINE_IS(&g, 1, "last");
	got_free(&g);

	/* A file that is one line without a newline, and an empty file. */
	fd = file_fd("only", 4);
	read_all(fd, 0, &g);
	close(fd);
	assert_int_equal(g.n, 1);
	LINE_IS(&g, 0, "only");
	got_free(&g);
	fd = file_fd("", 0);
	read_all(fd, 0, &g);
	close(fd);
	assert_int_equal(g.n, 0);
}

/* R8: empty lines are lines of length 0, not the end of the file. */
static void test_json_lines_empty(void **state)
{
	static const char text[] = "\n\nx\n\n";
	int fd = file_fd(text, sizeof(text) - 1);
	got g;

	(void)state;
	read_all(fd, 0, &g);
	close(fd);
	assert_int_equal(g.n, 4);
	LINE_IS(&g, 0, "");
	LINE_IS(&g, 1, "");
	LINE_IS(&g, 2, "x");
	LINE_IS(&g, 3, "");
	got_free(&g);
}

/* R8: a line longer than max_line is skipped and reported once; the next line is intact. */
static void test_json_lines_toolong(void **state)
{
	char text[512];
	size_t o = 0;
	int fd;
	got g;

	(void)state;
	o += (size_t)sprintf(text + o, "short\n");
	memset(text + o, 'x', 40); /* 40 > 16 */
	o += 40;
	o += (size_t)sprintf(text + o, "\nafter\n");
	memset(text + o, 'y', 16); /* exactly max_line: kept */
	o += 16;
	o += (size_t)sprintf(text + o, "\n");
	memset(text + o, 'z', 17); /* one over, then the end of the file without a newline */
	o += 17;

	fd = file_fd(text, o);
	read_all(fd, 16, &g);
	close(fd);
	assert_int_equal(g.n, 5);
	LINE_IS(&g, 0, "short");
	line_is(&g, 1, NULL, 0);
	LINE_IS(&g, 2, "after");
	LINE_IS(&g, 3, "yyyyyyyyyyyyyyyy");
	line_is(&g, 4, NULL, 0);
	got_free(&g);
}

/* R8: the same through a pipe, with lines far longer than the reader's buffer. */
static void test_json_lines_toolong_pipe(void **state)
{
	size_t big = 300000, o = 0;
	char *text = malloc(2 * big + 100);
	pid_t child;
	int fd;
	got g;

	(void)state;
	assert_non_null(text);
	memset(text + o, 'a', big); /* over max_line */
	o += big;
	text[o++] = '\n';
	memcpy(text + o, "{\"next\":true}\n", 14);
	o += 14;
	memset(text + o, 'b', 100000); /* under max_line, longer than a first buffer */
	o += 100000;
	text[o++] = '\n';
	memcpy(text + o, "tail", 4);
	o += 4;

	fd = pipe_fd(text, o, 4096, &child);
	read_all(fd, 200000, &g);
	close(fd);
	reap(child);
	assert_int_equal(g.n, 4);
	line_is(&g, 0, NULL, 0);
	LINE_IS(&g, 1, "{\"next\":true}");
	assert_non_null(g.line[2]);
	assert_int_equal(g.len[2], 100000);
	assert_int_equal(g.line[2][0], 'b');
	assert_int_equal(g.line[2][99999], 'b');
	LINE_IS(&g, 3, "tail");
	got_free(&g);
	free(text);
}

/* R8: "\r\n" line ends keep their '\r': the reader changes no byte of a line. */
static void test_json_lines_crlf(void **state)
{
	static const char text[] = "a\r\nb\r\n\r\nc";
	int fd = file_fd(text, sizeof(text) - 1);
	got g;

	(void)state;
	read_all(fd, 0, &g);
	close(fd);
	assert_int_equal(g.n, 4);
	LINE_IS(&g, 0, "a\r");
	LINE_IS(&g, 1, "b\r");
	LINE_IS(&g, 2, "\r");
	LINE_IS(&g, 3, "c");
	got_free(&g);
}

/* R8: a read error is reported, not taken for the end of the file. */
static void test_json_lines_read_error(void **state)
{
	agc_lines lr;
	const char *line;
	size_t len;
	bool toolong;
	int fd = open(t_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	agc_lines_init(&lr, fd, 0);
	agc_error_clear();
	assert_int_equal(agc_lines_next(&lr, &line, &len, &toolong), -1); /* EISDIR */
	assert_true(strlen(agc_error_last()) > 0);
	agc_lines_release(&lr);
	close(fd);
}

/* R8: a regular file is read whole, within its bound. */
static void test_json_read_at_regular(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	static const char text[] = "{\"sessionId\":\"x\"}\n";

	(void)state;
	t_write("doc.json", text, sizeof(text) - 1);
	assert_int_equal(agc_read_at(dirfd_, "doc.json", 1024, &b), 0);
	assert_int_equal(b.len, sizeof(text) - 1);
	assert_string_equal(b.ptr, text);
	/* The buffer is replaced, not appended to. */
	assert_int_equal(agc_read_at(dirfd_, "doc.json", 1024, &b), 0);
	assert_int_equal(b.len, sizeof(text) - 1);
	/* An empty file is an empty document. */
	t_write("empty.json", "", 0);
	assert_int_equal(agc_read_at(dirfd_, "empty.json", 1024, &b), 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(agc_buf_cstr(&b), "");
	agc_buf_release(&b);
}

/* R8: a file of exactly max bytes is within the bound (only a larger one is refused). */
static void test_json_read_at_exactly_max(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	char text[100];
	size_t len;
	int rc;

	(void)state;
	memset(text, 'q', sizeof(text));
	t_write("max.json", text, sizeof(text));
	agc_error_clear();
	rc = agc_read_at(dirfd_, "max.json", sizeof(text), &b);
	len = b.len;
	agc_buf_release(&b);
	if (rc != 0)
		fail_msg("a file of exactly max bytes was refused: %s", agc_error_last());
	assert_int_equal(len, sizeof(text));
}

/* R8: a buffer with its own cap holds any file that fits both the cap and max (callers size
 * the buffer to the document bound, e.g. the registry's 262144 bytes). */
static void test_json_read_at_capped_buffer(void **state)
{
	agc_buf b = AGC_BUF_INIT_MAX(64);
	char text[10000];
	bool ok;
	int rc;

	(void)state;
	t_write("small.json", "{\"a\":1}", 7);
	agc_error_clear();
	rc = agc_read_at(dirfd_, "small.json", 64, &b);
	ok = rc == 0 && b.len == 7 && memcmp(b.ptr, "{\"a\":1}", 7) == 0;
	agc_buf_release(&b);
	if (rc != 0)
		fail_msg("a 7-byte file in a 64-byte buffer was refused: %s", agc_error_last());
	assert_true(ok);

	/* 9000 bytes into a buffer capped at 10001, bounded at 10000: well within both. */
	{
		agc_buf c = AGC_BUF_INIT_MAX(sizeof(text) + 1);

		memset(text, 'r', sizeof(text));
		t_write("mid.json", text, 9000);
		agc_error_clear();
		rc = agc_read_at(dirfd_, "mid.json", sizeof(text), &c);
		ok = rc == 0 && c.len == 9000;
		agc_buf_release(&c);
		if (rc != 0)
			fail_msg("a 9000-byte file in a 10001-byte buffer was refused: %s", agc_error_last());
		assert_true(ok);
	}
}

/* R8, R2: a document is never read through a symlink planted in its place. */
static void test_json_read_at_symlink(void **state)
{
	agc_buf b = AGC_BUF_INIT;

	(void)state;
	t_write("target.json", "{\"secret\":1}", 12);
	assert_int_equal(symlink("target.json", t_path("link.json")), 0);
	agc_error_clear();
	assert_int_equal(agc_read_at(dirfd_, "link.json", 1024, &b), -1);
	assert_non_null(strstr(agc_error_last(), "link.json"));
	assert_int_equal(b.len, 0);
	/* A dangling link is refused too, not "not found". */
	assert_int_equal(symlink("missing.json", t_path("dangling.json")), 0);
	assert_int_equal(agc_read_at(dirfd_, "dangling.json", 1024, &b), -1);
	agc_buf_release(&b);
}

/* R8: a file over the bound is refused, not read in part. */
static void test_json_read_at_too_large(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	char text[101];

	(void)state;
	memset(text, 'q', sizeof(text));
	t_write("big.json", text, sizeof(text));
	agc_error_clear();
	assert_int_equal(agc_read_at(dirfd_, "big.json", 100, &b), -1);
	assert_non_null(strstr(agc_error_last(), "big.json"));
	assert_int_equal(agc_read_at(dirfd_, "big.json", 0, &b), -1);
	agc_buf_release(&b);

	/* The buffer's own cap is a bound as well. */
	{
		agc_buf c = AGC_BUF_INIT_MAX(50);

		assert_int_equal(agc_read_at(dirfd_, "big.json", 1000, &c), -1);
		agc_buf_release(&c);
	}
}

/* R8: a missing file is AGC_ENOTFOUND, which callers tell apart from a failure. */
static void test_json_read_at_missing(void **state)
{
	agc_buf b = AGC_BUF_INIT;

	(void)state;
	assert_int_equal(agc_read_at(dirfd_, "nope.json", 1024, &b), AGC_ENOTFOUND);
	agc_buf_release(&b);
}

/* R8: a FIFO (which would block a reader forever) and a directory are not documents. */
static void test_json_read_at_not_regular(void **state)
{
	agc_buf b = AGC_BUF_INIT;

	(void)state;
	assert_int_equal(mkfifo(t_path("fifo.json"), 0600), 0);
	alarm(10); /* a blocking open or read would hang the run: die instead */
	agc_error_clear();
	assert_int_equal(agc_read_at(dirfd_, "fifo.json", 1024, &b), -1);
	alarm(0);
	assert_non_null(strstr(agc_error_last(), "fifo.json"));
	assert_int_equal(mkdir(t_path("dir.json"), 0700), 0);
	assert_int_equal(agc_read_at(dirfd_, "dir.json", 1024, &b), -1);
	assert_int_equal(agc_read_at(dirfd_, ".", 1024, &b), -1);
	agc_buf_release(&b);
}

/* R8: only a regular file is opened: a FIFO, a character device (the node of /dev/zero), a
 * socket or a directory is refused before any open (errno EINVAL), a link unless followed is
 * ELOOP, a regular file gives an fd with its fstat. */
static void test_json_open_file_at(void **state)
{
	struct stat st;
	int fd;

	(void)state;
	t_write("reg", "12345", 5);
	fd = agc_open_file_at(dirfd_, "reg", 0, &st);
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 5);
	/* O_CLOEXEC and O_NONBLOCK are set */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
	assert_int_equal(agc_open_file_at(dirfd_, "nope", 0, NULL), AGC_ENOTFOUND);

	assert_int_equal(mkfifo(t_path("fifo"), 0600), 0);
	alarm(10); /* a blocking open would hang the run: die instead */
	agc_error_clear();
	assert_int_equal(agc_open_file_at(dirfd_, "fifo", 0, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(agc_error_last(), "cannot open 'fifo': not a regular file"));
	/* a FIFO reached through a followed link is refused just the same */
	assert_int_equal(symlink("fifo", t_path("tofifo")), 0);
	assert_int_equal(agc_open_file_at(dirfd_, "tofifo", AGC_OPEN_FOLLOW, NULL), -1);
	assert_int_equal(errno, EINVAL);
	alarm(0);

	assert_int_equal(mkdir(t_path("dir"), 0700), 0);
	assert_int_equal(agc_open_file_at(dirfd_, "dir", 0, NULL), -1);
	assert_int_equal(errno, EINVAL);

	assert_int_equal(symlink("reg", t_path("link")), 0);
	assert_int_equal(agc_open_file_at(dirfd_, "link", 0, NULL), -1);
	assert_int_equal(errno, ELOOP);
	fd = agc_open_file_at(dirfd_, "link", AGC_OPEN_FOLLOW, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 5);
	close(fd);

	/* the node of /dev/zero: never opened (mknod needs CAP_MKNOD; skipped without it) */
	if (mknod(t_path("zero"), S_IFCHR | 0600, makedev(1, 5)) == 0) {
		alarm(10);
		assert_int_equal(agc_open_file_at(dirfd_, "zero", 0, NULL), -1);
		assert_int_equal(errno, EINVAL);
		alarm(0);
	} else {
		print_message("mknod: %s: the device case is not run\n", strerror(errno));
	}
}

/* R8: agc_lines_limit bounds the bytes read in all, even inside one line without an end that
 * the reader would otherwise skip to its end; a line cut by the bound is not returned. */
static void test_json_lines_limit(void **state)
{
	static char data[300000];
	agc_lines lr;
	const char *line;
	size_t len;
	bool toolong;
	int fd;

	(void)state;
	memcpy(data, "{\"a\":1}\n", 8);
	memset(data + 8, 'x', sizeof(data) - 8); /* one line, no newline, longer than the bound */
	t_write("long", data, sizeof(data));
	fd = open(t_path("long"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	agc_lines_init(&lr, fd, 1000);
	agc_lines_limit(&lr, 100000);
	assert_int_equal(agc_lines_next(&lr, &line, &len, &toolong), 1);
	assert_false(toolong);
	assert_int_equal(len, 7);
	/* the over-long rest is skipped up to the bound, never read further */
	while (agc_lines_next(&lr, &line, &len, &toolong) == 1)
		assert_true(toolong);
	assert_true(lr.capped);
	assert_true(lr.nread <= 100000);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), (off_t)lr.nread);
	agc_lines_release(&lr);

	/* a short line cut by the bound is dropped, not returned as a whole line */
	memcpy(data, "{\"a\":1}\n{\"b\":2}\n", 16);
	t_write("cut", data, 16);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	close(fd);
	fd = open(t_path("cut"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	agc_lines_init(&lr, fd, 0);
	agc_lines_limit(&lr, 12);
	assert_int_equal(agc_lines_next(&lr, &line, &len, &toolong), 1);
	assert_string_equal(line, "{\"a\":1}");
	assert_int_equal(agc_lines_next(&lr, &line, &len, &toolong), 0);
	agc_lines_release(&lr);
	/* without a bound both come */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	agc_lines_init(&lr, fd, 0);
	assert_int_equal(agc_lines_next(&lr, &line, &len, &toolong), 1);
	assert_int_equal(agc_lines_next(&lr, &line, &len, &toolong), 1);
	assert_string_equal(line, "{\"b\":2}");
	agc_lines_release(&lr);
	close(fd);
}

/* R8: malformed JSON is NULL, quietly: NaN, overflowing numbers, truncation, junk. */
static void test_json_parse_malformed(void **state)
{
	static const char *bad[] = {
		"",
		"{",
		"{\"a\":",
		"{\"a\":1",
		"[1,2",
		"nul",
		"{'a':1}",
		"{\"startedAt\":NaN}",
		"{\"startedAt\":Infinity}",
		"{\"startedAt\":-Infinity}",
		"{\"startedAt\":1e400}",
		"{\"a\":1}{\"b\":2}",
		"{\"a\":1} junk",
		"\xff\xfe{}",
		"{\"a\":\"\xc3\"}",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = agc_json_parse(bad[i], strlen(bad[i]));

		if (j) {
			json_decref(j);
			fail_msg("bad[%zu] was parsed", i);
		}
	}
	/* A NUL inside the text, and a length that cuts a document short. */
	assert_null(agc_json_parse("{}\0{}", 5));
	assert_null(agc_json_parse("{\"a\":1}", 6));
	/* A 400-digit integer is not a number jansson can hold. */
	{
		char big[420];

		memcpy(big, "[", 1);
		memset(big + 1, '9', 400);
		memcpy(big + 401, "]", 2);
		assert_null(agc_json_parse(big, strlen(big)));
	}
}

/* R8: nesting deep enough to exhaust a recursive parser is refused, not a crash. */
static void test_json_parse_deep(void **state)
{
	size_t depth = 200000, i;
	char *s = malloc(2 * depth + 1);
	json_t *j;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < depth; i++) {
		s[i] = '[';
		s[depth + i] = ']';
	}
	s[2 * depth] = '\0';
	assert_null(agc_json_parse(s, 2 * depth));
	free(s);
	/* Moderate nesting is fine. */
	j = agc_json_parse("[[[[{\"a\":[1]}]]]]", 17);
	assert_non_null(j);
	json_decref(j);
}

/* Well-formed text parses; string members are borrowed, anything else is NULL. */
static void test_json_parse_str(void **state)
{
	static const char text[] = "{\"sessionId\":\"abc\",\"n\":1,\"b\":true,\"nul\":null}";
	json_t *j = agc_json_parse(text, sizeof(text) - 1);

	(void)state;
	assert_non_null(j);
	assert_string_equal(agc_json_str(j, "sessionId"), "abc");
	assert_null(agc_json_str(j, "n"));
	assert_null(agc_json_str(j, "b"));
	assert_null(agc_json_str(j, "nul"));
	assert_null(agc_json_str(j, "missing"));
	assert_null(agc_json_str(NULL, "sessionId"));
	json_decref(j);
	j = agc_json_parse("[\"sessionId\"]", 13);
	assert_non_null(j);
	assert_null(agc_json_str(j, "sessionId"));
	json_decref(j);
	/* Only len bytes are parsed: a line handed over without its newline. */
	j = agc_json_parse("{\"a\":\"b\"}\ngarbage", 9);
	assert_non_null(j);
	assert_string_equal(agc_json_str(j, "a"), "b");
	json_decref(j);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_json_lines_normal),
		T(test_json_lines_pipe),
		T(test_json_lines_last_without_newline),
		T(test_json_lines_empty),
		T(test_json_lines_toolong),
		T(test_json_lines_toolong_pipe),
		T(test_json_lines_crlf),
		T(test_json_lines_read_error),
		T(test_json_read_at_regular),
		T(test_json_read_at_exactly_max),
		T(test_json_read_at_capped_buffer),
		T(test_json_read_at_symlink),
		T(test_json_read_at_too_large),
		T(test_json_read_at_missing),
		T(test_json_read_at_not_regular),
		T(test_json_open_file_at),
		T(test_json_lines_limit),
		T(test_json_parse_malformed),
		T(test_json_parse_deep),
		T(test_json_parse_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
