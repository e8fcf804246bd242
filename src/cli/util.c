/* Output helpers of the command line. */
#include <jansson.h>
#include <locale.h>
#include <nettle/base64.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "cli.h"

int cli_worse(int a, int b)
{
	/* severity rank: 0 < 5 < 3 < 4 < 1 (others, like 2 and 75, rank with 1) */
	static const int order[] = {0, 5, 3, 4, 1};
	int ra = 4, rb = 4, i;

	for (i = 0; i < 5; i++) {
		if (order[i] == a)
			ra = i;
		if (order[i] == b)
			rb = i;
	}
	return ra >= rb ? a : b;
}

/* Print "agentgc: " and the formatted message through cli_text: messages name paths and
 * ids read from agent data. */
static void vmsg(const char *fmt, va_list ap)
{
	char *m = NULL;

	fputs("agentgc: ", stderr);
	if (vasprintf(&m, fmt, ap) < 0) {
		fputs("out of memory", stderr);
		return;
	}
	cli_text(stderr, m, 0);
	free(m);
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, "\nsee 'agentgc help %s'\n", cmd);
	else
		fprintf(stderr, "\nsee 'agentgc help'\n");
	return EXIT_USAGE;
}

int cli_ctx(cli *c)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;

	if (c->ctx)
		return 0;
	o.home = c->home;
	if (agc_ctx_new(&c->ctx, &o) < 0) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	return 0;
}

void cli_size(uint64_t bytes, char *out, size_t n)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	int i = 0;

	if (bytes < 1024) {
		snprintf(out, n, "%llu B", (unsigned long long)bytes);
		return;
	}
	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	snprintf(out, n, v < 10 ? "%.1f %s" : "%.0f %s", v, u[i]);
}

void cli_ago(int64_t now_ms, int64_t t_ms, char *out, size_t n)
{
	int64_t d = (now_ms - t_ms) / 1000;

	if (t_ms <= 0) {
		snprintf(out, n, "-");
		return;
	}
	if (d < 0) {
		snprintf(out, n, "in the future");
		return;
	}
	if (d < 60)
		snprintf(out, n, "%llds ago", (long long)d);
	else if (d < 3600)
		snprintf(out, n, "%lldm ago", (long long)(d / 60));
	else if (d < 86400)
		snprintf(out, n, "%lldh ago", (long long)(d / 3600));
	else
		snprintf(out, n, "%lldd ago", (long long)(d / 86400));
}

void cli_iso(int64_t ms, char *out, size_t n)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || !gmtime_r(&t, &tm)) {
		snprintf(out, n, "-");
		return;
	}
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- strings from agent data (SPEC "Output") ------------------------------------------------
 * Titles, projects, paths, commands, ids and messages come from files and databases anyone may
 * have written: printed raw, an ESC or a C1 CSI starts a terminal escape sequence (set the
 * window title, clear the screen, rewrite what was printed before) and a bidirectional
 * control reorders what the reader sees. Every human printer goes through cli_text. */

/* Length of the valid UTF-8 sequence at s (n bytes available) and its code point in *cp, or 0
 * when the bytes there are not valid UTF-8: a stray continuation byte, an overlong form, a
 * surrogate, a code point above U+10FFFF, a sequence cut short. These are jansson's rules,
 * so a string this accepts is one json_string accepts. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* True for a code point that must not reach a terminal as itself: C0 controls (ESC among
 * them), DEL, C1 controls (U+009B is a CSI on its own), the bidirectional embeddings,
 * overrides, isolates and marks (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C), and the
 * line and paragraph separators U+2028, U+2029. */
static bool cp_unsafe(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f || c == 0x061c ||
	       c == 0x2028 || c == 0x2029;
}

size_t cli_text(FILE *f, const char *str, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, run = 0, out = 0, k, j;
	uint32_t c;

	while (i < n) {
		k = utf8_seq(s + i, n - i, &c);
		if (k > 0 && !cp_unsafe(c) && !((flags & CLI_TEXT_QUOTED) && (c == '\'' || c == '\\'))) {
			i += k;
			continue;
		}
		/* what is printed as itself goes out in one write */
		fwrite(s + run, 1, i - run, f);
		out += i - run;
		if (k == 0) {
			/* not UTF-8: the byte itself, visibly */
			out += (size_t)fprintf(f, "\\x%02x", s[i]);
			k = 1;
		} else if ((flags & CLI_TEXT_LINE) && (c == '\n' || c == '\t' || c == '\r')) {
			fputc(' ', f);
			out++;
		} else if (c == '\'' || c == '\\') {
			out += (size_t)fprintf(f, "\\%c", (int)c);
		} else if ((flags & CLI_TEXT_QUOTED) || c < 0x80) {
			/* inside $'...' the exact bytes, so that the path pastes back */
			for (j = 0; j < k; j++)
				out += (size_t)fprintf(f, "\\x%02x", s[i + j]);
		} else {
			out += (size_t)fprintf(f, "\\u%04x", (unsigned)c);
		}
		i += k;
		run = i;
	}
	fwrite(s + run, 1, i - run, f);
	return out + (i - run);
}

void cli_pad(FILE *f, size_t printed, size_t width)
{
	for (; printed < width; printed++)
		fputc(' ', f);
}

bool cli_text_safe(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, k;
	uint32_t c;

	while (i < n) {
		k = utf8_seq(s + i, n - i, &c);
		if (k == 0 || cp_unsafe(c))
			return false;
		i += k;
	}
	return true;
}

void cli_path(FILE *f, const char *p)
{
	const unsigned char *s;
	bool plain = *p != '\0' && cli_text_safe(p);

	for (s = (const unsigned char *)p; *s; s++)
		if (*s <= 0x20 || *s == '\'' || *s == '"' || *s == '\\')
			plain = false;
	if (plain) {
		fputs(p, f);
		return;
	}
	/* Shell-style: $'...' with escapes, so the path can be pasted back. */
	fputs("$'", f);
	cli_text(f, p, CLI_TEXT_QUOTED);
	fputc('\'', f);
}

const char *cli_c(const cli *c, const char *code)
{
	return c->color ? code : "";
}

/* ---- fitting the terminal (SPEC "Output": tables fit the terminal's width) ------------------ */

int cli_term_width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	char *end;
	long n;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols && *cols) {
		n = strtol(cols, &end, 10);
		if (!*end && n > 0 && n < 100000)
			return (int)n;
	}
	/* a terminal that does not say its size: the classic one */
	return isatty(STDOUT_FILENO) ? 80 : 0;
}

char *cli_text_str(const char *s, unsigned flags)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	cli_text(f, s ? s : "", flags);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *cli_path_str(const char *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	cli_path(f, s ? s : "");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The user's LC_CTYPE for wcwidth, made once and used only while measuring, so that nothing
 * else (the library's byte handling) changes with the locale. (locale_t)0 in the C locale or
 * when it cannot be made: every non-ASCII character then counts one column. */
static locale_t ctype_locale(void)
{
	static int done;
	static locale_t loc;

	if (!done) {
		done = 1;
		loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
	}
	return loc;
}

/* Display columns of code point c: wcwidth in the user's locale; 1 where it does not know
 * (the C locale, unassigned code points). */
static size_t cp_width(uint32_t c)
{
	locale_t loc, old;
	int w;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	loc = ctype_locale();
	if (!loc)
		return 1;
	old = uselocale(loc);
	w = wcwidth((wchar_t)c);
	uselocale(old);
	return w < 0 ? 1 : (size_t)w;
}

/* One character of s at i (n bytes): its length in bytes (1 for a byte that is not UTF-8) and
 * its width in columns. */
static size_t char_at(const unsigned char *s, size_t n, size_t i, size_t *w)
{
	uint32_t c;
	size_t k = utf8_seq(s + i, n - i, &c);

	if (k == 0) {
		*w = 1;
		return 1;
	}
	*w = cp_width(c);
	return k;
}

size_t cli_width(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, cols = 0, w;

	while (i < n) {
		i += char_at(s, n, i, &w);
		cols += w;
	}
	return cols;
}

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

char *cli_cut(const char *str, size_t cols, bool left)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, w, acc = 0, keep = 0, *starts, *widths, nc = 0, j;
	char *out;

	if (cli_width(str) <= cols)
		return strdup(str);
	if (cols == 0)
		return strdup("");
	if (!left) {
		/* whole characters while they fit beside the ellipsis; the zero-width ones that
		 * follow a kept character stay with it */
		while (i < n) {
			size_t k = char_at(s, n, i, &w);

			if (acc + w > cols - 1)
				break;
			acc += w;
			i += k;
		}
		if (!(out = malloc(i + sizeof(ELLIPSIS))))
			return NULL;
		memcpy(out, s, i);
		memcpy(out + i, ELLIPSIS, sizeof(ELLIPSIS));
		return out;
	}
	/* cut on the left (a path: its end says most): the last characters that fit */
	starts = malloc((n + 1) * sizeof(*starts));
	widths = malloc((n + 1) * sizeof(*widths));
	if (!starts || !widths) {
		free(starts);
		free(widths);
		return NULL;
	}
	while (i < n) {
		starts[nc] = i;
		i += char_at(s, n, i, &widths[nc]);
		nc++;
	}
	for (j = nc; j > 0; j--) {
		if (acc + widths[j - 1] > cols - 1)
			break;
		acc += widths[j - 1];
	}
	/* a zero-width character cannot start the kept part: it belongs to the one cut off */
	while (j < nc && widths[j] == 0)
		j++;
	keep = j < nc ? starts[j] : n;
	/* a path keeps whole components where it can: "…/work/app", not "…rk/app" */
	if (keep > 0 && keep < n && s[keep] != '/' && s[keep - 1] != '/') {
		const char *slash = memchr(s + keep, '/', n - keep);

		if (slash && slash[1])
			keep = (size_t)(slash - (const char *)s);
	}
	free(starts);
	free(widths);
	if (!(out = malloc(sizeof(ELLIPSIS) + (n - keep))))
		return NULL;
	memcpy(out, ELLIPSIS, sizeof(ELLIPSIS) - 1);
	memcpy(out + sizeof(ELLIPSIS) - 1, s + keep, n - keep + 1);
	return out;
}

void cli_pad_to(FILE *f, const char *s, size_t width)
{
	fputs(s, f);
	cli_pad(f, cli_width(s), width);
}

typedef struct id_ref {
	const char *id;
	size_t i;
} id_ref;

static int cmp_id_ref(const void *a, const void *b)
{
	return strcmp(((const id_ref *)a)->id, ((const id_ref *)b)->id);
}

static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0;

	while (a[n] && a[n] == b[n])
		n++;
	return n;
}

int cli_short_ids(const char *const *ids, size_t n, size_t *len)
{
	id_ref *v;
	size_t i;

	if (!n)
		return 0;
	if (!(v = malloc(n * sizeof(*v))))
		return -1;
	for (i = 0; i < n; i++) {
		v[i].id = ids[i];
		v[i].i = i;
	}
	qsort(v, n, sizeof(*v), cmp_id_ref);
	/* In sorted order an id shares its longest prefix with a neighbour: one character more
	 * than that tells it from every other id shown (git's short ids). The same id twice
	 * (two agents) shares everything: printed whole. */
	for (i = 0; i < n; i++) {
		size_t need = 0, l = strlen(v[i].id), k = CLI_SHORT_ID;

		if (i > 0)
			need = common_prefix(v[i].id, v[i - 1].id) + 1;
		if (i + 1 < n && common_prefix(v[i].id, v[i + 1].id) + 1 > need)
			need = common_prefix(v[i].id, v[i + 1].id) + 1;
		if (need > k)
			k = need;
		len[v[i].i] = k < l ? k : l;
	}
	free(v);
	return 0;
}

/* The home as cli_home_path matches it: without trailing slashes, never "/" alone. */
static size_t home_len(const char *h)
{
	size_t n = h ? strlen(h) : 0;

	while (n > 1 && h[n - 1] == '/')
		n--;
	return n > 1 ? n : 0;
}

/* True when path is home (n bytes) or below it: only a whole leading path component. */
static bool under_home(const char *path, const char *home, size_t n)
{
	return n && strncmp(path, home, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

char *cli_home_path(const cli *c, const char *path)
{
	/* the home's real path, resolved once per run: the agents record real paths */
	static char *real;
	static bool resolved;
	const char *home = c->ctx ? agc_ctx_home(c->ctx) : (c->home ? c->home : getenv("HOME"));
	size_t n = home_len(home);
	char *rest, *out;

	if (!path)
		return strdup("-");
	if (!under_home(path, home, n)) {
		if (!resolved && home) {
			resolved = true;
			real = realpath(home, NULL);
		}
		if (real) {
			home = real;
			n = home_len(home);
		}
	}
	if (!under_home(path, home, n))
		return cli_path_str(path);
	path += n;
	if (!*path)
		return strdup("~");
	/* "~/" and the rest as cli_path shows it ($'...' when it needs quoting: still a path
	 * the shell reads back) */
	if (!(rest = cli_path_str(path + 1)))
		return NULL;
	if (asprintf(&out, "~/%s", rest) < 0)
		out = NULL;
	free(rest);
	return out;
}

/* Edit distance (optimal string alignment: a swap of two neighbours counts one). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, r;
	size_t *d;

	if (la > 64 || lb > 64)
		return (size_t)-1;
	d = calloc((la + 1) * (lb + 1), sizeof(*d));
	if (!d)
		return (size_t)-1;
#define D(x, y) d[(x) * (lb + 1) + (y)]
	for (i = 0; i <= la; i++)
		D(i, 0) = i;
	for (j = 0; j <= lb; j++)
		D(0, j) = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1], v = D(i - 1, j) + 1;

			if (D(i, j - 1) + 1 < v)
				v = D(i, j - 1) + 1;
			if (D(i - 1, j - 1) + cost < v)
				v = D(i - 1, j - 1) + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < v)
				v = D(i - 2, j - 2) + 1;
			D(i, j) = v;
		}
	r = D(la, lb);
#undef D
	free(d);
	return r;
}

const char *cli_nearest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL, *prefixed = NULL;
	size_t i, bd = (size_t)-1, np = 0, lw = strlen(word);

	for (i = 0; i < n; i++) {
		size_t dd = distance(word, cands[i]);

		if (dd < bd) {
			bd = dd;
			best = cands[i];
		}
		if (lw >= 2 && strncmp(cands[i], word, lw) == 0) {
			prefixed = cands[i];
			np++;
		}
	}
	/* a typo: at most 2 edits, and fewer than the word has letters */
	if (best && bd <= 2 && bd < lw)
		return best;
	/* the start of exactly one name */
	return np == 1 ? prefixed : NULL;
}

/* An agent named on the command line: one that works, 'auto' where allowed, or what the user
 * can do instead. */
int cli_check_agent(const char *cmd, const char *agent, bool allow_auto)
{
	const char *names[8];
	const char *near;
	size_t n = 0;

	if (allow_auto && strcmp(agent, "auto") == 0)
		return 0;
	if (agc_agent_find(agent) >= 0)
		return 0;
	/* an agent the library names (AGC_AGENT_*) but has not built in */
	if (agc_agent_bit(agent))
		return cli_usage(cmd, "agent '%s' is planned but not supported yet", agent);
	for (size_t i = 0; i < agc_agent_count() && n < 7; i++)
		names[n++] = agc_agent_name(i);
	if (allow_auto)
		names[n++] = "auto";
	near = cli_nearest(agent, names, n);
	if (near)
		return cli_usage(cmd, "unknown agent '%s' (did you mean '%s'?)", agent, near);
	return cli_usage(cmd, "unknown agent '%s'", agent);
}

int cli_agent_bit(const char *cmd, const char *name, unsigned *mask)
{
	int rc = cli_check_agent(cmd, name, false);

	if (rc)
		return rc;
	/* the agent's stable AGC_AGENT_* value, never its place in the library's table */
	*mask |= agc_agent_bit(name);
	return 0;
}

/* ---- JSON of agent data (SPEC "Output": no key is ever dropped) -----------------------------
 * jansson refuses a string that is not valid UTF-8 (json_string returns NULL, and the key
 * would silently go missing). Such a string is given with each invalid byte as U+FFFD, and
 * its exact bytes in base64 under <key>_bytes. */

/* s with each byte that is not part of valid UTF-8 as U+FFFD; NULL when out of memory. */
static char *utf8_fix(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, o = 0, k;
	uint32_t c;
	char *out;

	if (n > (SIZE_MAX - 1) / 3 || !(out = malloc(n * 3 + 1)))
		return NULL;
	while (i < n) {
		k = utf8_seq(s + i, n - i, &c);
		if (k == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		}
	}
	out[o] = '\0';
	return out;
}

/* True when every byte of s is part of valid UTF-8. */
static bool utf8_valid(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, k;
	uint32_t c;

	while (i < n) {
		if (!(k = utf8_seq(s + i, n - i, &c)))
			return false;
		i += k;
	}
	return true;
}

json_t *cli_json_str(const char *s)
{
	char *fixed;
	json_t *v;

	if (!s)
		return json_null();
	if (utf8_valid(s))
		return json_string(s);
	if (!(fixed = utf8_fix(s)))
		return NULL;
	v = json_string(fixed);
	free(fixed);
	return v;
}

int cli_json_set_str(json_t *o, const char *key, const char *s)
{
	size_t n, klen;
	char *b64, *bkey;
	int rc;

	if (json_object_set_new(o, key, cli_json_str(s)) < 0)
		return -1;
	if (!s || utf8_valid(s))
		return 0;
	n = strlen(s);
	klen = strlen(key);
	if (n > SIZE_MAX / 2 || !(b64 = malloc(BASE64_ENCODE_RAW_LENGTH(n) + 1)))
		return -1;
	base64_encode_raw(b64, n, (const uint8_t *)s);
	b64[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
	if (!(bkey = malloc(klen + sizeof("_bytes")))) {
		free(b64);
		return -1;
	}
	memcpy(bkey, key, klen);
	memcpy(bkey + klen, "_bytes", sizeof("_bytes"));
	rc = json_object_set_new(o, bkey, json_string(b64));
	free(bkey);
	free(b64);
	return rc;
}

static json_t *time_or_null(int64_t ms)
{
	char b[40];

	if (ms <= 0)
		return json_null();
	cli_iso(ms, b, sizeof(b));
	return json_string(b);
}

static json_t *items_json(const agc_report *r, bool residual)
{
	json_t *a = json_array();
	size_t i, n = residual ? agc_report_residual_count(r) : agc_report_removed_count(r);

	for (i = 0; i < n; i++) {
		const agc_item *it = residual ? agc_report_residual(r, i) : agc_report_removed(r, i);
		json_t *o = json_object();

		json_object_set_new(o, "kind", json_string(it->kind));
		cli_json_set_str(o, "path", it->path ? it->path : "");
		if (it->table)
			cli_json_set_str(o, "table", it->table);
		if (residual)
			cli_json_set_str(o, "reason", it->reason ? it->reason : "error");
		json_object_set_new(o, "count", json_integer((json_int_t)it->count));
		json_object_set_new(o, "bytes", json_integer((json_int_t)it->bytes));
		if (it->session && strcmp(it->session, agc_report_id(r)) != 0)
			cli_json_set_str(o, "session", it->session);
		json_array_append_new(a, o);
	}
	return a;
}

json_t *cli_holders_json(const agc_report *r)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < agc_report_holder_count(r); i++) {
		const agc_holder_info *h = agc_report_holder(r, i);
		json_t *o = json_object();

		json_object_set_new(o, "pid", json_integer(h->pid));
		cli_json_set_str(o, "command", h->command ? h->command : "");
		cli_json_set_str(o, "why", h->why);
		if (h->what)
			cli_json_set_str(o, "what", h->what);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *strs_json(size_t n, const char *(*get)(const agc_report *, size_t), const agc_report *r)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, cli_json_str(get(r, i)));
	return a;
}

json_t *cli_session_json(const agc_session_info *s)
{
	json_t *o = json_object();

	cli_json_set_str(o, "agent", s->agent);
	cli_json_set_str(o, "id", s->id);
	cli_json_set_str(o, "parent", s->parent);
	cli_json_set_str(o, "project", s->project);
	cli_json_set_str(o, "title", s->title);
	json_object_set_new(o, "created", time_or_null(s->created_ms));
	json_object_set_new(o, "updated", time_or_null(s->updated_ms));
	json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
	json_object_set_new(o, "disk", json_integer((json_int_t)s->disk));
	json_object_set_new(o, "live", json_boolean(s->live));
	if (s->archived)
		json_object_set_new(o, "archived", json_true());
	if (s->orphan)
		json_object_set_new(o, "orphan", json_true());
	if (s->parent_gone)
		json_object_set_new(o, "parent_gone", json_true());
	if (s->layout)
		cli_json_set_str(o, "layout", s->layout);
	return o;
}

/* Write a JSON text with every C1 control and bidirectional control written as a \u escape.
 * jansson escapes C0 controls but writes other code points as UTF-8; a JSON line printed on a
 * terminal must not carry a CSI (U+009B) or an override either. Outside strings JSON text is
 * ASCII, so every such code point is inside a string, where the escape means the same. */
static void json_put(FILE *f, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text), i = 0, run = 0, k;
	uint32_t c;

	while (i < n) {
		k = s[i] < 0x80 ? 1 : utf8_seq(s + i, n - i, &c);
		if (k > 1 && cp_unsafe(c)) {
			fwrite(s + run, 1, i - run, f);
			fprintf(f, "\\u%04x", (unsigned)c);
			run = i + k;
		}
		i += k ? k : 1;
	}
	fwrite(s + run, 1, i - run, f);
	fputc('\n', f);
}

void cli_json_fprint(FILE *f, json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);

	if (s) {
		json_put(f, s);
		free(s);
	}
	json_decref(o);
}

void cli_json_print(json_t *o)
{
	cli_json_fprint(stdout, o);
}

void cli_report_json(const cli *c, const agc_report *r, const char *what)
{
	json_t *o;
	agc_status st = agc_report_status(r);

	(void)c;
	if (strcmp(what, "show") == 0 && agc_report_session(r)) {
		o = cli_session_json(agc_report_session(r));
		json_object_set_new(o, "status", json_string(agc_status_name(st)));
		json_object_set_new(o, "artifacts", items_json(r, false));
		json_object_set_new(o, "residual", items_json(r, true));
		json_object_set_new(o, "children", strs_json(agc_report_child_count(r), agc_report_child, r));
		json_object_set_new(o, "holders", cli_holders_json(r));
		cli_json_print(o);
		return;
	}
	o = json_object();
	cli_json_set_str(o, "agent", agc_report_agent(r));
	cli_json_set_str(o, "id", agc_report_id(r));
	if (strcmp(what, "in-use") == 0) {
		json_object_set_new(o, "in_use", json_boolean(st == AGC_ST_IN_USE));
		if (st == AGC_ST_NOT_FOUND)
			json_object_set_new(o, "status", json_string("not-found"));
		json_object_set_new(o, "holders", cli_holders_json(r));
		cli_json_print(o);
		return;
	}
	json_object_set_new(o, "status", json_string(agc_status_name(st)));
	/* a child or sub-agent names its parent (a sub-agent's purge is refused: it goes only
	 * with it) */
	if (agc_report_session(r) && agc_report_session(r)->parent)
		cli_json_set_str(o, "parent", agc_report_session(r)->parent);
	if (agc_report_error(r))
		cli_json_set_str(o, "error", agc_report_error(r));
	/* prune: why a session was left alone */
	if (agc_report_skip(r))
		cli_json_set_str(o, "reason", agc_report_skip(r));
	json_object_set_new(o, "removed", items_json(r, false));
	json_object_set_new(o, "residual", items_json(r, true));
	json_object_set_new(o, "holders", cli_holders_json(r));
	json_object_set_new(o, "children", strs_json(agc_report_child_count(r), agc_report_child, r));
	if (agc_report_fork_count(r))
		json_object_set_new(o, "forks", strs_json(agc_report_fork_count(r), agc_report_fork, r));
	/* the advice the text output gives on stderr, for a program to show a person */
	if (agc_report_hint_count(r))
		json_object_set_new(o, "hints", strs_json(agc_report_hint_count(r), agc_report_hint, r));
	cli_json_print(o);
}

/* Ids read from a list (SPEC "Commands"): one a line, at most this long, at most this many. */
#define IDS_LINE_MAX 1024
#define IDS_MAX ((size_t)1 << 20)

void cli_ids_release(cli_ids *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->line);
	memset(l, 0, sizeof(*l));
}

/* One id (trimmed) of line lno of what; blank lines and '#' comments are none. 0, or
 * EXIT_ERR. */
static int ids_add_line(cli_ids *l, const char *what, char *line, size_t len, size_t lno, int *worst)
{
	char *s = line, *e = line + len;

	if (memchr(line, '\0', len)) {
		/* changes nothing for that line, and the exit code says so */
		cli_err("%s line %zu holds a NUL byte: skipped", what, lno);
		*worst = cli_worse(*worst, EXIT_ERR);
		return 0;
	}
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (s == e || *s == '#')
		return 0;
	if (l->n == IDS_MAX) {
		cli_err("more than %zu ids in %s: nothing done", IDS_MAX, what);
		return EXIT_ERR;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->v, cap * sizeof(*v));
		size_t *ln = realloc(l->line, cap * sizeof(*ln));

		if (v)
			l->v = v;
		if (ln)
			l->line = ln;
		if (!v || !ln)
			goto oom;
		l->cap = cap;
	}
	*e = '\0';
	if (!(l->v[l->n] = strdup(s)))
		goto oom;
	l->line[l->n] = lno;
	l->n++;
	return 0;
oom:
	cli_err("out of memory reading the ids");
	return EXIT_ERR;
}

int cli_ids_read(FILE *f, const char *what, cli_ids *l, int *worst)
{
	char line[IDS_LINE_MAX + 1];
	size_t len = 0, lno = 0;
	bool toolong = false;
	int ch, rc;

	for (;;) {
		ch = getc(f);
		if (ch == EOF || ch == '\n') {
			if (ch == EOF && len == 0 && !toolong)
				break;
			lno++;
			if (toolong) {
				cli_err("%s line %zu is longer than %d bytes: skipped", what, lno, IDS_LINE_MAX);
				*worst = cli_worse(*worst, EXIT_ERR);
			} else if ((rc = ids_add_line(l, what, line, len, lno, worst))) {
				return rc;
			}
			len = 0;
			toolong = false;
			if (ch == EOF)
				break;
			continue;
		}
		if (len < IDS_LINE_MAX)
			line[len++] = (char)ch;
		else
			toolong = true;
	}
	if (ferror(f)) {
		cli_err("cannot read the ids from %s", what);
		return EXIT_ERR;
	}
	return 0;
}
