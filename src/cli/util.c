/* Output helpers of the command line. */
#include <jansson.h>
#include <nettle/base64.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	agc_ctx_opts o = {.home = c->home};

	if (c->ctx)
		return 0;
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
	if (strcmp(agent, "codex") == 0 || strcmp(agent, "cursor") == 0)
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
	*mask |= 1u << agc_agent_find(name);
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

static json_t *holders_json(const agc_report *r)
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

void cli_json_print(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);

	if (s) {
		json_put(stdout, s);
		free(s);
	}
	json_decref(o);
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
		json_object_set_new(o, "holders", holders_json(r));
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
		json_object_set_new(o, "holders", holders_json(r));
		cli_json_print(o);
		return;
	}
	json_object_set_new(o, "status", json_string(agc_status_name(st)));
	if (agc_report_error(r))
		cli_json_set_str(o, "error", agc_report_error(r));
	json_object_set_new(o, "removed", items_json(r, false));
	json_object_set_new(o, "residual", items_json(r, true));
	json_object_set_new(o, "holders", holders_json(r));
	json_object_set_new(o, "children", strs_json(agc_report_child_count(r), agc_report_child, r));
	if (agc_report_fork_count(r))
		json_object_set_new(o, "forks", strs_json(agc_report_fork_count(r), agc_report_fork, r));
	cli_json_print(o);
}
