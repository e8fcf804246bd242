/* Output helpers of the command line. */
#include <jansson.h>
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

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("agentgc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("agentgc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, "\nsee 'agentgc %s --help'\n", cmd);
	else
		fprintf(stderr, "\nsee 'agentgc --help'\n");
	return EXIT_USAGE;
}

void cli_help(const cli_cmd *cmd)
{
	printf("usage: agentgc [global options] %s\n\n%s\n", cmd->usage, cmd->summary);
}

bool cli_is_help(const char *a)
{
	return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
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

void cli_path(FILE *f, const char *p)
{
	const unsigned char *s;
	bool plain = *p != '\0';

	for (s = (const unsigned char *)p; *s; s++)
		if (*s <= 0x20 || *s == 0x7f || *s == '\'' || *s == '"' || *s == '\\')
			plain = false;
	if (plain) {
		fputs(p, f);
		return;
	}
	/* Shell-style: $'...' with escapes, so the path can be pasted back. */
	fputs("$'", f);
	for (s = (const unsigned char *)p; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\x%02x", *s);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

const char *cli_c(const cli *c, const char *code)
{
	return c->color ? code : "";
}

int cli_agent_bit(const char *cmd, const char *name, unsigned *mask)
{
	int i = agc_agent_find(name);

	if (i < 0)
		return cli_usage(cmd, "unknown agent '%s'", name);
	*mask |= 1u << i;
	return 0;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
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
		json_object_set_new(o, "path", json_string(it->path ? it->path : ""));
		if (it->table)
			json_object_set_new(o, "table", json_string(it->table));
		if (residual)
			json_object_set_new(o, "reason", json_string(it->reason ? it->reason : "error"));
		json_object_set_new(o, "count", json_integer((json_int_t)it->count));
		json_object_set_new(o, "bytes", json_integer((json_int_t)it->bytes));
		if (it->session && strcmp(it->session, agc_report_id(r)) != 0)
			json_object_set_new(o, "session", json_string(it->session));
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
		json_object_set_new(o, "command", json_string(h->command ? h->command : ""));
		json_object_set_new(o, "why", json_string(h->why));
		if (h->what)
			json_object_set_new(o, "what", json_string(h->what));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *strs_json(size_t n, const char *(*get)(const agc_report *, size_t), const agc_report *r)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(get(r, i)));
	return a;
}

json_t *cli_session_json(const agc_session_info *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "agent", json_string(s->agent));
	json_object_set_new(o, "id", json_string(s->id));
	json_object_set_new(o, "parent", str_or_null(s->parent));
	json_object_set_new(o, "project", str_or_null(s->project));
	json_object_set_new(o, "title", str_or_null(s->title));
	json_object_set_new(o, "created", time_or_null(s->created_ms));
	json_object_set_new(o, "updated", time_or_null(s->updated_ms));
	json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
	json_object_set_new(o, "live", json_boolean(s->live));
	return o;
}

void cli_json_print(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT );

	if (s) {
		puts(s);
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
	json_object_set_new(o, "agent", json_string(agc_report_agent(r)));
	json_object_set_new(o, "id", json_string(agc_report_id(r)));
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
		json_object_set_new(o, "error", json_string(agc_report_error(r)));
	json_object_set_new(o, "removed", items_json(r, false));
	json_object_set_new(o, "residual", items_json(r, true));
	json_object_set_new(o, "holders", holders_json(r));
	json_object_set_new(o, "children", strs_json(agc_report_child_count(r), agc_report_child, r));
	if (agc_report_fork_count(r))
		json_object_set_new(o, "forks", strs_json(agc_report_fork_count(r), agc_report_fork, r));
	cli_json_print(o);
}
