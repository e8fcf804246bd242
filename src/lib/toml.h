/* One top-level string key of a TOML file: Codex's `sqlite_home` in `config.toml`
 * (formats/codex.md §1). Not a TOML library: the smallest reader that finds that key where
 * TOML puts it and skips everything else correctly. */
#ifndef AGC_TOML_H
#define AGC_TOML_H

#include <stddef.h>

/* Config files are small: a larger one is refused, not read (SPEC R8). */
#define AGC_TOML_MAX ((size_t)1 << 20)

/* The string value of the top-level key `key` in the TOML text (len bytes, at most
 * AGC_TOML_MAX): a key=value line before the first table header ([x] or [[x]]), the key bare
 * or quoted ("sqlite_home" = ... is the same key), never part of a dotted key (a.sqlite_home
 * is another key) nor inside an inline table. Everything before the first header is parsed as
 * TOML is: comments, the four kinds of string with their escapes (so a header or a '#' inside a
 * string of another key is no header nor comment), arrays and inline tables over several
 * lines, CRLF line ends, a UTF-8 BOM at the start; text after the first header is not read.
 * A value returned is decoded (escapes resolved) and may be empty; it is returned as written:
 * a relative one is resolved by the caller (the Codex adapter resolves it against the Codex
 * home). name is only for messages.
 * Returns 1 with *value (malloc'd, the caller frees it), 0 when the key is absent (*value
 * NULL), -1 on an error with the message naming the line: malformed TOML before the first
 * header (an unterminated string among them), the key's value not a string (a number, an
 * array, a table: `key.x = 1` makes it one), the key given twice (TOML forbids it), a value
 * holding a NUL or invalid UTF-8, text over AGC_TOML_MAX. */
int agc_toml_top_string(const char *text, size_t len, const char *name, const char *key,
			char **value);

/* The same for the file on fd, which the caller has opened and checked (agc_open_file_at, R8)
 * and still owns (borrowed, read from its offset, never closed): at most AGC_TOML_MAX bytes
 * are read, a larger file is an error. Returns 1, 0 or -1 as agc_toml_top_string does, -1 also
 * on a read error. */
int agc_toml_top_string_fd(int fd, const char *name, const char *key, char **value);

#endif
