/* One top-level string key of a TOML file (TOML 1.0; the escapes TOML 1.1 adds, \e and \xHH,
 * and its newlines in inline tables are accepted too, so a file a newer parser reads is not
 * refused here). Everything before the first table header is parsed, the values of other keys
 * only to be skipped; nothing after that header is read. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "toml.h"

#define TOML_DEPTH_MAX 64 /* arrays and inline tables inside one another */

typedef struct parser {
	const char *s;
	size_t n, i;
	const char *name;
	bool failed;
} parser;

/* The error at the parser's place: "cannot read 'NAME': line N: what". Returns -1. */
static int perr(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(parser *p, const char *fmt, ...)
{
	char what[256];
	unsigned line = 1;
	size_t k;
	va_list ap;

	if (p->failed)
		return -1; /* an inner error's message is the one kept */
	for (k = 0; k < p->i && k < p->n; k++)
		line += p->s[k] == '\n';
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	p->failed = true;
	return agc_error_set(-1, "cannot read '%s': line %u: %s", p->name, line, what);
}

static bool at(const parser *p, size_t k, char c)
{
	return p->i + k < p->n && p->s[p->i + k] == c;
}

static bool eof(const parser *p)
{
	return p->i >= p->n;
}

static void skip_ws(parser *p)
{
	while (!eof(p) && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
		p->i++;
}

/* A line end (LF or CRLF) at the place: its length, 0 when there is none. */
static size_t newline(const parser *p)
{
	if (at(p, 0, '\n'))
		return 1;
	if (at(p, 0, '\r') && at(p, 1, '\n'))
		return 2;
	return 0;
}

/* A comment from '#' to the end of the line (the line end is left). */
static void skip_comment(parser *p)
{
	while (!eof(p) && p->s[p->i] != '\n')
		p->i++;
	if (p->i > 0 && p->s[p->i - 1] == '\r')
		p->i--;
}

/* Whitespace, line ends and comments, as between the values of an array. */
static int skip_ws_nl(parser *p)
{
	for (;;) {
		size_t nl;

		skip_ws(p);
		if (at(p, 0, '#'))
			skip_comment(p);
		nl = newline(p);
		if (!nl) {
			if (at(p, 0, '\r'))
				return perr(p, "a carriage return without a newline");
			return 0;
		}
		p->i += nl;
	}
}

static int put(agc_buf *out, const char *s, size_t len)
{
	return out ? agc_buf_add(out, s, len) : 0;
}

/* A code point as UTF-8 into out. */
static int put_cp(parser *p, agc_buf *out, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return perr(p, "an escape that is not a Unicode scalar value");
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return put(out, u, n);
}

/* An escape after its backslash (the place is at the letter). */
static int escape(parser *p, agc_buf *out)
{
	static const char from[] = "btnfr\"\\e", to[] = "\b\t\n\f\r\"\\\033";
	const char *k;
	size_t digits = 0, j;
	uint32_t cp = 0;
	char c;

	if (eof(p))
		return perr(p, "unterminated string");
	c = p->s[p->i];
	if (c != '\0' && (k = strchr(from, c))) {
		p->i++;
		return put(out, &to[k - from], 1);
	}
	if (c == 'u')
		digits = 4;
	else if (c == 'U')
		digits = 8;
	else if (c == 'x')
		digits = 2;
	else
		return perr(p, "an unknown escape '\\%c' in a string", c >= 0x20 && c < 0x7f ? c : '?');
	p->i++;
	for (j = 0; j < digits; j++) {
		char h = eof(p) ? '\0' : p->s[p->i];

		if (h >= '0' && h <= '9')
			cp = cp << 4 | (uint32_t)(h - '0');
		else if (h >= 'a' && h <= 'f')
			cp = cp << 4 | (uint32_t)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			cp = cp << 4 | (uint32_t)(h - 'A' + 10);
		else
			return perr(p, "an escape '\\%c' without its %zu hex digits", c, digits);
		p->i++;
	}
	return put_cp(p, out, cp);
}

/* A control character TOML allows in no string (tab is allowed). */
static bool is_control(char c)
{
	return ((unsigned char)c < 0x20 && c != '\t') || c == 0x7f;
}

/* A string of any of the four kinds at the place (at its opening quote), decoded into out
 * (NULL: only skipped). */
static int string(parser *p, agc_buf *out)
{
	char q = p->s[p->i];
	bool basic = q == '"';
	bool multi = at(p, 1, q) && at(p, 2, q);

	if (!multi && at(p, 1, q)) {
		p->i += 2; /* "" or '' */
		return 0;
	}
	p->i += multi ? 3 : 1;
	if (multi)
		p->i += newline(p); /* a line end just after the opening quotes is trimmed */
	for (;;) {
		size_t nl;
		char c;

		if (eof(p))
			return perr(p, "unterminated string");
		c = p->s[p->i];
		if (c == q) {
			size_t run = 0;

			if (!multi) {
				p->i++;
				return 0;
			}
			while (at(p, run, q))
				run++;
			if (run < 3) {
				if (put(out, p->s + p->i, run) < 0)
					return -1;
				p->i += run;
				continue;
			}
			/* one or two quotes may stand just inside the closing three */
			if (run > 5)
				return perr(p, "too many quotes at the end of a string");
			if (put(out, p->s + p->i, run - 3) < 0)
				return -1;
			p->i += run;
			return 0;
		}
		if (basic && c == '\\') {
			size_t k = p->i + 1;

			/* a backslash ending a line trims the whitespace and newlines after it */
			if (multi) {
				while (k < p->n && (p->s[k] == ' ' || p->s[k] == '\t'))
					k++;
				if (k < p->n && (p->s[k] == '\n' ||
						 (p->s[k] == '\r' && k + 1 < p->n && p->s[k + 1] == '\n'))) {
					p->i = k;
					for (;;) {
						skip_ws(p);
						nl = newline(p);
						if (!nl)
							break;
						p->i += nl;
					}
					continue;
				}
			}
			p->i++;
			if (escape(p, out) < 0)
				return -1;
			continue;
		}
		nl = newline(p);
		if (nl) {
			if (!multi)
				return perr(p, "unterminated string");
			if (put(out, "\n", 1) < 0)
				return -1;
			p->i += nl;
			continue;
		}
		if (is_control(c))
			return perr(p, "a control character in a string");
		if (put(out, &c, 1) < 0)
			return -1;
		p->i++;
	}
}

static bool bare_key_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* A key, bare, quoted or dotted, up to the '=' (the place is then after it and the
 * whitespace). *first is its first part, decoded; *parts how many it has. */
static int key(parser *p, agc_buf *first, size_t *parts)
{
	*parts = 0;
	agc_buf_clear(first);
	for (;;) {
		agc_buf *part = *parts == 0 ? first : NULL;

		skip_ws(p);
		if (at(p, 0, '"') || at(p, 0, '\'')) {
			/* a quoted key is one line: no multi-line string is a key */
			if (at(p, 1, p->s[p->i]) && at(p, 2, p->s[p->i]))
				return perr(p, "a multi-line string as a key");
			if (string(p, part) < 0)
				return -1;
		} else {
			size_t b = p->i;

			while (!eof(p) && bare_key_char(p->s[p->i]))
				p->i++;
			if (p->i == b)
				return perr(p, "expected a key");
			if (put(part, p->s + b, p->i - b) < 0)
				return -1;
		}
		(*parts)++;
		skip_ws(p);
		if (at(p, 0, '.')) {
			p->i++;
			continue;
		}
		if (!at(p, 0, '='))
			return perr(p, "expected '=' after a key");
		p->i++;
		skip_ws(p);
		return 0;
	}
}

static int value(parser *p, agc_buf *out, unsigned depth);

/* An inline table after its '{'. */
static int inline_table(parser *p, unsigned depth)
{
	agc_buf k = AGC_BUF_INIT_MAX(AGC_TOML_MAX);
	size_t parts;
	int rc = -1;

	for (;;) {
		if (skip_ws_nl(p) < 0)
			goto out;
		if (at(p, 0, '}')) {
			p->i++;
			rc = 0;
			goto out;
		}
		if (key(p, &k, &parts) < 0 || value(p, NULL, depth + 1) < 0 || skip_ws_nl(p) < 0)
			goto out;
		if (at(p, 0, ','))
			p->i++;
		else if (!at(p, 0, '}')) {
			perr(p, "expected ',' or '}' in an inline table");
			goto out;
		}
	}
out:
	agc_buf_release(&k);
	return rc;
}

/* An array after its '['. */
static int array(parser *p, unsigned depth)
{
	for (;;) {
		if (skip_ws_nl(p) < 0)
			return -1;
		if (at(p, 0, ']')) {
			p->i++;
			return 0;
		}
		if (value(p, NULL, depth + 1) < 0 || skip_ws_nl(p) < 0)
			return -1;
		if (at(p, 0, ','))
			p->i++;
		else if (!at(p, 0, ']'))
			return perr(p, "expected ',' or ']' in an array");
	}
}

static bool scalar_char(char c)
{
	return bare_key_char(c) || c == '+' || c == '.' || c == ':';
}

static bool digits_at(const char *s, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (s[k] < '0' || s[k] > '9')
			return false;
	return true;
}

/* A value at the place: a string decoded into out when out is given (then nothing else will
 * do), else any value, skipped. */
static int value(parser *p, agc_buf *out, unsigned depth)
{
	size_t b = p->i;

	if (depth > TOML_DEPTH_MAX)
		return perr(p, "arrays or tables nested too deeply");
	if (at(p, 0, '"') || at(p, 0, '\''))
		return string(p, out);
	if (out)
		return -2; /* not a string: the caller says which key */
	if (at(p, 0, '[')) {
		p->i++;
		return array(p, depth);
	}
	if (at(p, 0, '{')) {
		p->i++;
		return inline_table(p, depth);
	}
	/* a number, a boolean, a date or time: not checked further, only its extent matters */
	while (!eof(p) && scalar_char(p->s[p->i]))
		p->i++;
	/* a date and a time may be parted by one space: 1979-05-27 07:32:00Z */
	if (p->i - b == 10 && p->s[b + 4] == '-' && p->s[b + 7] == '-' && digits_at(p->s + b, 4) &&
	    at(p, 0, ' ') && p->i + 1 < p->n && p->s[p->i + 1] >= '0' && p->s[p->i + 1] <= '9') {
		p->i++;
		while (!eof(p) && scalar_char(p->s[p->i]))
			p->i++;
	}
	if (p->i == b)
		return perr(p, "expected a value");
	return 0;
}

/* Whether s (len bytes) is UTF-8 as TOML requires: no overlong forms, no surrogates. */
static bool utf8_ok(const unsigned char *s, size_t len)
{
	size_t k = 0;

	while (k < len) {
		unsigned char c = s[k];
		size_t n, j;
		uint32_t cp;

		if (c < 0x80) {
			k++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n >= len - k)
			return false; /* cut short */
		for (j = 1; j <= n; j++) {
			if ((s[k + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[k + j] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		k += n + 1;
	}
	return true;
}

int agc_toml_top_string(const char *text, size_t len, const char *name, const char *key_name,
			char **value_out)
{
	parser p = {text, len, 0, name, false};
	agc_buf k = AGC_BUF_INIT_MAX(AGC_TOML_MAX);
	agc_buf v = AGC_BUF_INIT_MAX(AGC_TOML_MAX);
	bool found = false;
	int rc = -1;

	*value_out = NULL;
	if (len > AGC_TOML_MAX)
		return agc_error_set(-1, "cannot read '%s': larger than %zu bytes", name, AGC_TOML_MAX);
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		p.i = 3; /* a UTF-8 byte order mark */
	for (;;) {
		size_t parts, nl;
		bool ours;
		int r;

		skip_ws(&p);
		if (eof(&p))
			break;
		if (at(&p, 0, '#')) {
			skip_comment(&p);
			continue;
		}
		nl = newline(&p);
		if (nl) {
			p.i += nl;
			continue;
		}
		if (at(&p, 0, '\r')) {
			perr(&p, "a carriage return without a newline");
			goto out;
		}
		/* the first table header ends the top level: what follows belongs to tables */
		if (at(&p, 0, '['))
			break;
		if (key(&p, &k, &parts) < 0)
			goto out;
		ours = k.len == strlen(key_name) && memcmp(agc_buf_cstr(&k), key_name, k.len) == 0;
		if (ours && parts > 1) {
			/* key.x = ... makes the key a table */
			perr(&p, "'%s' is a table, not a string", key_name);
			goto out;
		}
		if (ours && found) {
			/* TOML forbids a key twice: which one a reader keeps is not defined */
			perr(&p, "'%s' is given twice", key_name);
			goto out;
		}
		if (ours) {
			agc_buf_clear(&v);
			r = value(&p, &v, 0);
			if (r == -2) {
				perr(&p, "'%s' is not a string", key_name);
				goto out;
			}
			found = true;
		} else {
			r = value(&p, NULL, 0);
		}
		if (r < 0)
			goto out;
		skip_ws(&p);
		if (at(&p, 0, '#'))
			skip_comment(&p);
		if (!eof(&p) && !newline(&p)) {
			perr(&p, "expected the end of the line after a value");
			goto out;
		}
	}
	if (!found) {
		rc = 0;
		goto out;
	}
	/* a path holds no NUL, and TOML text is UTF-8 */
	if (memchr(agc_buf_cstr(&v), '\0', v.len)) {
		rc = agc_error_set(-1, "cannot read '%s': '%s' holds a NUL", name, key_name);
		goto out;
	}
	if (!utf8_ok((const unsigned char *)agc_buf_cstr(&v), v.len)) {
		rc = agc_error_set(-1, "cannot read '%s': '%s' is not valid UTF-8", name, key_name);
		goto out;
	}
	*value_out = agc_buf_detach(&v, NULL);
	rc = *value_out ? 1 : -1;
out:
	agc_buf_release(&k);
	agc_buf_release(&v);
	return rc;
}

int agc_toml_top_string_fd(int fd, const char *name, const char *key_name, char **value_out)
{
	char *text = malloc(AGC_TOML_MAX + 1);
	size_t len = 0;
	int rc;

	*value_out = NULL;
	if (!text)
		return agc_error_oom();
	/* one byte past the bound tells a file too large from one of exactly the bound */
	while (len < AGC_TOML_MAX + 1) {
		ssize_t r = read(fd, text + len, AGC_TOML_MAX + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = agc_error_errno(-1, errno, "cannot read '%s'", name);
			free(text);
			return rc;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	rc = agc_toml_top_string(text, len, name, key_name, value_out);
	free(text);
	return rc;
}
