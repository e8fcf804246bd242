/* A small JSON scanner for transcript heads (jscan.h): RFC 8259 as jansson reads it with no
 * flags, kept strict, so that a line it calls OK is one jansson reads, with the same values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "jscan.h"

#define JS_MAX_DEPTH 64   /* deeper: ask jansson (its own bound is 2048) */
#define JS_MAX_INT 18     /* digits of an integer sure to fit an int64 */
#define JS_MAX_NUMBER 300 /* a longer real may overflow a double: ask */

typedef struct js {
	const char *p, *e;
} js;

static void ws(js *s)
{
	while (s->p < s->e && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* The length of the valid UTF-8 sequence at p (as jansson checks it: no overlong form, no
 * surrogate, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *e)
{
	unsigned c = p[0];
	uint32_t cp;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		n = 2;
		cp = c & 0x1f;
	} else if (c < 0xf0) {
		n = 3;
		cp = c & 0x0f;
	} else if (c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if ((size_t)(e - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* The 4 hex digits at p (at least 4 bytes there), or -1. */
static long hex4(const char *p)
{
	long v = 0;
	int i, h;

	for (i = 0; i < 4; i++) {
		if ((h = agc_hexval((unsigned char)p[i])) < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* A string at s->p (a '"'); *esc tells whether it holds an escape. */
/* The bytes a string holds as they are: printable ASCII but the quote and the backslash
 * (a line 0 is mostly such text: the scan of it is this loop). */
static const bool plain[256] = {
	[0x20] = 1, [0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1,
};

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static int str(js *s, bool *esc)
{
	s->p++;
	for (;;) {
		unsigned char c;

		/* eight bytes at a time while none of them is a quote, a backslash, a control
		 * byte or outside ASCII (then byte by byte) */
		while (s->e - s->p >= 8) {
			uint64_t w, q, b;

			memcpy(&w, s->p, 8);
			q = w ^ (ONES * '"');
			b = w ^ (ONES * '\\');
			if (((q - ONES) & ~q & HIGHS) | ((b - ONES) & ~b & HIGHS) | ((w - ONES * 0x20) & ~w & HIGHS) |
			    (w & HIGHS))
				break;
			s->p += 8;
		}
		while (s->p < s->e && plain[(unsigned char)*s->p])
			s->p++;
		if (s->p >= s->e)
			return AGC_JSCAN_ASK;
		c = (unsigned char)*s->p;
		if (c == '"') {
			s->p++;
			return AGC_JSCAN_OK;
		}
		if (c == '\\') {
			*esc = true;
			if (s->e - s->p < 2)
				return AGC_JSCAN_ASK;
			c = (unsigned char)s->p[1];
			if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
				s->p += 2;
				continue;
			}
			if (c != 'u' || s->e - s->p < 6)
				return AGC_JSCAN_ASK;
			{
				long v = hex4(s->p + 2), w;

				/* \u0000 and lone surrogates: jansson's own rules decide */
				if (v <= 0 || (v >= 0xdc00 && v <= 0xdfff))
					return AGC_JSCAN_ASK;
				s->p += 6;
				if (v >= 0xd800 && v <= 0xdbff) {
					if (s->e - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u')
						return AGC_JSCAN_ASK;
					w = hex4(s->p + 2);
					if (w < 0xdc00 || w > 0xdfff)
						return AGC_JSCAN_ASK;
					s->p += 6;
				}
			}
			continue;
		}
		if (c < 0x20)
			return AGC_JSCAN_ASK;
		if (c >= 0x80) {
			size_t n = utf8_len((const unsigned char *)s->p, (const unsigned char *)s->e);

			if (!n)
				return AGC_JSCAN_ASK;
			s->p += n;
			continue;
		}
		s->p++;
	}
}

static bool digit(const js *s)
{
	return s->p < s->e && *s->p >= '0' && *s->p <= '9';
}

static int num(js *s)
{
	const char *start = s->p;
	bool real = false;

	if (*s->p == '-')
		s->p++;
	if (!digit(s))
		return AGC_JSCAN_ASK;
	if (*s->p == '0')
		s->p++;
	else
		while (digit(s))
			s->p++;
	if (s->p < s->e && *s->p == '.') {
		real = true;
		s->p++;
		if (!digit(s))
			return AGC_JSCAN_ASK;
		while (digit(s))
			s->p++;
	}
	/* an exponent may overflow, a long integer may not fit: jansson decides */
	if (s->p < s->e && (*s->p == 'e' || *s->p == 'E'))
		return AGC_JSCAN_ASK;
	if ((!real && s->p - start - (*start == '-') > JS_MAX_INT) || s->p - start > JS_MAX_NUMBER)
		return AGC_JSCAN_ASK;
	return AGC_JSCAN_OK;
}

static int word(js *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->e - s->p) < n || memcmp(s->p, w, n) != 0)
		return AGC_JSCAN_ASK;
	s->p += n;
	return AGC_JSCAN_OK;
}

static int value(js *s, int depth);

/* An object at s->p; when keys is not NULL, out[i] gets the value of the last member keys[i]. */
static int object(js *s, int depth, const char *const *keys, size_t nkeys, agc_jspan *out)
{
	if (depth > JS_MAX_DEPTH)
		return AGC_JSCAN_ASK;
	s->p++;
	ws(s);
	if (s->p < s->e && *s->p == '}') {
		s->p++;
		return AGC_JSCAN_OK;
	}
	for (;;) {
		const char *k, *v;
		bool esc = false;
		size_t kl, i;

		if (s->p >= s->e || *s->p != '"')
			return AGC_JSCAN_ASK;
		k = s->p + 1;
		if (str(s, &esc))
			return AGC_JSCAN_ASK;
		kl = (size_t)(s->p - 1 - k);
		ws(s);
		if (s->p >= s->e || *s->p != ':')
			return AGC_JSCAN_ASK;
		s->p++;
		ws(s);
		v = s->p;
		if (value(s, depth))
			return AGC_JSCAN_ASK;
		if (keys) {
			/* an escaped key may spell one looked for: jansson decodes it */
			if (esc)
				return AGC_JSCAN_ASK;
			for (i = 0; i < nkeys; i++)
				if (strlen(keys[i]) == kl && memcmp(keys[i], k, kl) == 0) {
					out[i].p = v;
					out[i].n = (size_t)(s->p - v);
				}
		}
		ws(s);
		if (s->p < s->e && *s->p == ',') {
			s->p++;
			ws(s);
			continue;
		}
		if (s->p < s->e && *s->p == '}') {
			s->p++;
			return AGC_JSCAN_OK;
		}
		return AGC_JSCAN_ASK;
	}
}

static int array(js *s, int depth)
{
	if (depth > JS_MAX_DEPTH)
		return AGC_JSCAN_ASK;
	s->p++;
	ws(s);
	if (s->p < s->e && *s->p == ']') {
		s->p++;
		return AGC_JSCAN_OK;
	}
	for (;;) {
		if (value(s, depth))
			return AGC_JSCAN_ASK;
		ws(s);
		if (s->p < s->e && *s->p == ',') {
			s->p++;
			ws(s);
			continue;
		}
		if (s->p < s->e && *s->p == ']') {
			s->p++;
			return AGC_JSCAN_OK;
		}
		return AGC_JSCAN_ASK;
	}
}

static int value(js *s, int depth)
{
	bool esc = false;

	if (s->p >= s->e)
		return AGC_JSCAN_ASK;
	switch (*s->p) {
	case '"':
		return str(s, &esc);
	case '{':
		return object(s, depth + 1, NULL, 0, NULL);
	case '[':
		return array(s, depth + 1);
	case 't':
		return word(s, "true");
	case 'f':
		return word(s, "false");
	case 'n':
		return word(s, "null");
	default:
		if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
			return num(s);
		return AGC_JSCAN_ASK;
	}
}

int agc_jscan_line(const char *p, size_t n, const char *const *keys, size_t nkeys, agc_jspan *out)
{
	js s = {p, p + n};
	size_t i;

	for (i = 0; i < nkeys; i++)
		out[i].p = NULL, out[i].n = 0;
	ws(&s);
	if (s.p >= s.e)
		return AGC_JSCAN_ASK;
	if (*s.p == '{') {
		if (object(&s, 1, keys, nkeys, out))
			return AGC_JSCAN_ASK;
	} else if (*s.p == '[') {
		if (array(&s, 1))
			return AGC_JSCAN_ASK;
	} else {
		return AGC_JSCAN_ASK;
	}
	ws(&s);
	return s.p == s.e ? AGC_JSCAN_OK : AGC_JSCAN_ASK;
}

int agc_jscan_members(agc_jspan v, const char *const *keys, size_t nkeys, agc_jspan *out)
{
	js s = {v.p, v.p + v.n};
	size_t i;

	for (i = 0; i < nkeys; i++)
		out[i].p = NULL, out[i].n = 0;
	if (!v.p || !v.n || *v.p != '{')
		return AGC_JSCAN_OK;
	return object(&s, 1, keys, nkeys, out);
}

bool agc_jscan_next(agc_jspan v, size_t *it, agc_jspan *el)
{
	js s;
	const char *start;

	if (!v.p || v.n < 2 || *v.p != '[')
		return false;
	s.p = v.p + (*it ? *it : 1);
	s.e = v.p + v.n;
	ws(&s);
	if (s.p < s.e && *s.p == ',') {
		s.p++;
		ws(&s);
	}
	if (s.p >= s.e || *s.p == ']')
		return false;
	start = s.p;
	if (value(&s, 1))
		return false;
	el->p = start;
	el->n = (size_t)(s.p - start);
	*it = (size_t)(s.p - v.p);
	return true;
}

bool agc_jscan_is_str(agc_jspan v)
{
	return v.p && v.n >= 2 && *v.p == '"';
}

bool agc_jscan_is_true(agc_jspan v)
{
	return v.p && v.n == 4 && memcmp(v.p, "true", 4) == 0;
}

/* Append code point cp as UTF-8 at o. */
static char *put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | (cp >> 6));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | (cp >> 12));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | (cp >> 18));
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

char *agc_jscan_str(agc_jspan v)
{
	const char *p, *e;
	char *out, *o;

	if (!agc_jscan_is_str(v))
		return NULL;
	/* decoding never lengthens: an escape of 6 bytes gives at most 3, a pair of 12 gives 4 */
	out = malloc(v.n);
	if (!out)
		return NULL;
	o = out;
	for (p = v.p + 1, e = v.p + v.n - 1; p < e;) {
		uint32_t cp;

		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		switch (p[1]) {
		case 'b': *o++ = '\b'; p += 2; continue;
		case 'f': *o++ = '\f'; p += 2; continue;
		case 'n': *o++ = '\n'; p += 2; continue;
		case 'r': *o++ = '\r'; p += 2; continue;
		case 't': *o++ = '\t'; p += 2; continue;
		case 'u': break;
		default: *o++ = p[1]; p += 2; continue;
		}
		/* a checked line: 4 hex digits, and a high surrogate is followed by a low one */
		cp = (uint32_t)hex4(p + 2);
		p += 6;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)hex4(p + 2) - 0xdc00);
			p += 6;
		}
		o = put_utf8(o, cp);
	}
	*o = '\0';
	return out;
}

bool agc_jscan_str_is(agc_jspan v, const char *lit)
{
	size_t n = strlen(lit);
	char *d;
	bool eq;

	if (!agc_jscan_is_str(v))
		return false;
	if (!memchr(v.p, '\\', v.n))
		return v.n - 2 == n && memcmp(v.p + 1, lit, n) == 0;
	if (!(d = agc_jscan_str(v)))
		return false;
	eq = strcmp(d, lit) == 0;
	free(d);
	return eq;
}
