/* JSON and JSON Lines through jansson, with bounded reads (SPEC R8). */
#ifndef AGC_JSON_H
#define AGC_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define AGC_JSON_DOC_MAX ((size_t)4 << 20)    /* a JSON document file (registry, meta) */
#define AGC_LINE_MAX ((size_t)16 << 20)       /* one JSONL line */

/* A bounded line reader over a file descriptor (borrowed, not closed). */
typedef struct agc_lines {
	int fd;
	char *buf;
	size_t cap, start, end;
	size_t max_line;
	uint64_t offset;   /* file offset of the line last returned */
	bool eof, skipping;
} agc_lines;

void agc_lines_init(agc_lines *lr, int fd, size_t max_line);
/* Next line without its newline (NUL-terminated, valid until the next call). A line longer than
 * max_line is skipped and reported once with *toolong set and *len 0. Returns 1 for a line, 0 at
 * end of file, -1 on a read error (error set). */
int agc_lines_next(agc_lines *lr, const char **line, size_t *len, bool *toolong);
void agc_lines_release(agc_lines *lr);

/* Read a whole regular file name beneath dirfd (never through a symlink) into out, at most max
 * bytes (out's own cap must allow max + 1). Returns 0, AGC_ENOTFOUND, or -1 (too large, not a regular file, I/O). */
int agc_read_at(int dirfd, const char *name, size_t max, agc_buf *out);

/* The same for an open fd, which it consumes (closed on every path). */
int agc_read_fd(int fd, const char *name, size_t max, agc_buf *out);

/* Parse JSON text; NULL when malformed (no message: malformed input is normal). */
json_t *agc_json_parse(const char *s, size_t len);

/* Borrowed string member, or NULL when absent or not a string. */
const char *agc_json_str(const json_t *obj, const char *key);

#endif
