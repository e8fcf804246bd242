/* A bounded line reader over plain and zstd-compressed files (Codex's `.jsonl` and
 * `.jsonl.zst` rollouts, formats/codex.md §2, §3), decompressing as it goes: memory is bounded
 * by the longest line the caller accepts, never by the file's size (SPEC R8). */
#ifndef AGC_ZLINES_H
#define AGC_ZLINES_H

#include <stddef.h>
#include <stdint.h>

/* What is decompressed (or read, for a plain file) in all when the caller gives no bound: a
 * zstd frame of a few KB can stand for terabytes (a "bomb"), so there is always one. */
#define AGC_ZLINES_TOTAL_MAX ((uint64_t)4 << 30)
/* Line 0 of a Codex rollout is 21-27 KB (base_instructions); agc_zlines_first's usual bound. */
#define AGC_ZLINES_FIRST_MAX ((size_t)1 << 20)

typedef struct agc_zlines agc_zlines;

typedef enum agc_zline_flags {
	/* Longer than the caller's max_line: not returned (ptr "" and len 0), skipped to the next
	 * '\n' without being kept; full_len is its length in the stream. */
	AGC_ZLINE_TOOLONG = 1 << 0,
	/* The last line of the stream, with no '\n' after it: a rollout being written ends in a
	 * partial line, which the caller must be able to tell from a whole one. */
	AGC_ZLINE_PARTIAL = 1 << 1,
	/* With AGC_ZLINE_TOOLONG, from agc_zlines_first only: the line was not read to its end,
	 * so its length is not known (full_len is 0). */
	AGC_ZLINE_UNMEASURED = 1 << 2,
} agc_zline_flags;

/* One line, valid until the next call on the reader. */
typedef struct agc_zline {
	const char *ptr;   /* the line without its '\n', NUL-terminated (it may hold NULs) */
	size_t len;        /* bytes at ptr: 0 for a line too long */
	uint64_t full_len; /* the line's length in the stream (len, or a too-long line's length) */
	uint64_t offset;   /* where the line starts in the (decompressed) stream */
	unsigned flags;    /* agc_zline_flags */
} agc_zline;

/* A reader over fd, which the caller has opened and checked (agc_open_file_at: a regular file,
 * never opened by name here, R8) and still owns: it is borrowed, read from its current offset
 * and never closed. Plain or zstd is told by the first bytes (a zstd frame's magic 28 b5 2f fd,
 * or a skippable frame's), never by the file's name; zstd input may hold several frames one
 * after the other, as the format allows. max_line (> 0) is the longest line returned; max_total
 * bounds the bytes decompressed (or read) in all, 0 for AGC_ZLINES_TOTAL_MAX: past it reading
 * fails. name is only for messages. A pipe works too (short reads), but callers pass regular
 * files: a FIFO could block. Returns 0 with *out set, or -1 (error set; a read error of the
 * first bytes, out of memory). */
int agc_zlines_open(agc_zlines **out, int fd, const char *name, size_t max_line, uint64_t max_total);

/* The next line into *line. Returns 1 for a line (see its flags), 0 at the end of the stream,
 * -1 on an error, with the message set: a read error, a truncated or corrupt zstd frame, a
 * frame that needs a window over 128 MiB, more than max_total bytes, out of memory. After an
 * error every later call fails the same way. */
int agc_zlines_next(agc_zlines *zl, agc_zline *line);

/* Bytes decompressed (or read, for a plain file) so far. */
uint64_t agc_zlines_total(const agc_zlines *zl);

/* Whether the stream is zstd. */
int agc_zlines_is_zstd(const agc_zlines *zl);

void agc_zlines_free(agc_zlines *zl);

/* Line 0 of the stream on fd (borrowed, as for agc_zlines_open), cheaply: decompressing stops
 * as soon as the line has ended, and at max_line bytes when it has not. Returns 1 with *line
 * (malloc'd, NUL-terminated, the caller frees it) and *len set, and *flags (agc_zline_flags:
 * AGC_ZLINE_PARTIAL when the stream ends inside it); for a line longer than max_line, 1 with
 * *line NULL and *flags AGC_ZLINE_TOOLONG|AGC_ZLINE_UNMEASURED; 0 for an empty stream (*line
 * NULL); -1 on an error, as for agc_zlines_next. */
int agc_zlines_first(int fd, const char *name, size_t max_line, char **line, size_t *len,
		     unsigned *flags);

#endif
