/* JSON and JSON Lines through jansson, with bounded reads (SPEC R8). */
#ifndef AGC_JSON_H
#define AGC_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

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
	uint64_t max_bytes; /* read no more than this from fd (0: no bound), see agc_lines_limit */
	uint64_t nread;     /* bytes read from fd so far */
	bool eof, skipping;
	bool capped;        /* max_bytes was reached: what follows was never read */
} agc_lines;

void agc_lines_init(agc_lines *lr, int fd, size_t max_line);
/* Read at most max_bytes from the fd in all (R8): a head read stays bounded even inside one
 * over-long line, which is otherwise skipped by reading on to its end. The reader then ends
 * as at end of file, and a line cut by the bound is not returned. */
void agc_lines_limit(agc_lines *lr, uint64_t max_bytes);
/* Next line without its newline (NUL-terminated, valid until the next call). A line longer than
 * max_line is skipped and reported once with *toolong set and *len 0. Returns 1 for a line, 0 at
 * end of file, -1 on a read error (error set). */
int agc_lines_next(agc_lines *lr, const char **line, size_t *len, bool *toolong);
void agc_lines_release(agc_lines *lr);

typedef enum agc_open_flags {
	AGC_OPEN_FOLLOW = 1 << 0, /* name may be a symlink to a file (discovery reading through one) */
} agc_open_flags;

/* Open the regular file name of dirfd (borrowed) for reading, the one way agentgc opens a file
 * to read it (R8): the entry is examined first and anything but a regular file (a FIFO, a
 * device, a socket, a directory; a symlink unless AGC_OPEN_FOLLOW) is never opened; the open
 * uses O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC|O_NOCTTY, and the file opened must be the one examined.
 * Returns the fd (the caller closes it; *st, when non-NULL, is its fstat), AGC_ENOTFOUND, or -1
 * with the error set and errno kept: ELOOP for a link, EINVAL for a file that is not
 * regular, ESTALE when the entry changed between the look and the open. */
int agc_open_file_at(int dirfd, const char *name, unsigned flags, struct stat *st);

/* agc_open_file_at when the caller has just examined name itself: seen is its lstat (the
 * listing's look), held to the same rules (only a regular file is opened, never a link) and
 * compared with the file opened, so the look is not made twice; NULL: look here. */
int agc_open_file_seen(int dirfd, const char *name, const struct stat *seen, struct stat *st);

/* Read a whole regular file name beneath dirfd (never through a symlink) into out, at most max
 * bytes (out's own cap must allow max + 1). A FIFO or a device is never opened
 * (agc_open_file_at). Returns 0, AGC_ENOTFOUND, or -1 (too large, not a regular file, I/O). */
int agc_read_at(int dirfd, const char *name, size_t max, agc_buf *out);

/* The same for an open fd, which it consumes (closed on every path). */
int agc_read_fd(int fd, const char *name, size_t max, agc_buf *out);

/* Parse JSON text; NULL when malformed (no message: malformed input is normal). */
json_t *agc_json_parse(const char *s, size_t len);

/* Whether the JSON line's string member key is one of ids (ASCII letters in any case); the
 * ids' text is looked for first, so most lines are never parsed. A line that does not parse
 * never matches: malformed input never widens a deletion (R8). */
bool agc_json_line_keyed(const char *key, const char *line, size_t len, char *const *ids, size_t n_ids);

/* Borrowed string member, or NULL when absent or not a string. */
const char *agc_json_str(const json_t *obj, const char *key);

#endif
