/* agentgc du: the bytes the agents' history takes, and what compact and prune would free. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_AGENT = 0x200, OPT_BY };

const cli_opt cli_du_opts[] = {
	{"agent", OPT_AGENT, 1, "A", "only this agent (repeatable)"},
	{"by", OPT_BY, 1, "KEY", "agent (default), project or kind: one row per agent,\n"
				 "per project of each agent, or per kind of what it\n"
				 "keeps (transcripts, sub-agents, side-files, rows,\n"
				 "temp, logs, orphans, bulk)"},
	{NULL, 0, 0, NULL, NULL},
};

static int du_opt(cli *c, int key, const char *v, void *ud)
{
	agc_du_opts *o = ud;

	(void)c;
	switch (key) {
	case OPT_AGENT:
		return cli_agent_bit("du", v, &o->agents);
	case OPT_BY:
		if (strcmp(v, "agent") == 0)
			o->by = AGC_DU_BY_AGENT;
		else if (strcmp(v, "project") == 0)
			o->by = AGC_DU_BY_PROJECT;
		else if (strcmp(v, "kind") == 0)
			o->by = AGC_DU_BY_KIND;
		else
			return cli_usage("du", "--by takes agent, project or kind, not '%s'", v);
		return 0;
	}
	return -1;
}

typedef struct du_out {
	cli *c;
	agc_du_by by;
	agc_du_row total;
	size_t n;
} du_out;

static json_t *row_json(const agc_du_row *r, agc_du_by by, bool total)
{
	json_t *o = json_object(), *x;

	if (!total)
		cli_json_set_str(o, "agent", r->agent);
	if (!total && by == AGC_DU_BY_PROJECT)
		cli_json_set_str(o, "project", r->project);
	if (by == AGC_DU_BY_KIND) {
		/* a session counts in each kind it has: the total has no count */
		if (!total) {
			cli_json_set_str(o, "kind", r->kind);
			json_object_set_new(o, "sessions", json_integer((json_int_t)r->sessions));
			json_object_set_new(o, "orphans", json_integer((json_int_t)r->orphans));
		}
		json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
		json_object_set_new(o, "disk", json_integer((json_int_t)r->disk));
		return o;
	}
	json_object_set_new(o, "sessions", json_integer((json_int_t)r->sessions));
	json_object_set_new(o, "orphans", json_integer((json_int_t)r->orphans));
	json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
	json_object_set_new(o, "disk", json_integer((json_int_t)r->disk));
	json_object_set_new(o, "orphan_bytes", json_integer((json_int_t)r->orphan_bytes));
	json_object_set_new(o, "orphan_disk", json_integer((json_int_t)r->orphan_disk));
	if (by == AGC_DU_BY_AGENT) {
		x = json_object();
		json_object_set_new(x, "bytes", json_integer((json_int_t)r->bulk_bytes));
		json_object_set_new(x, "disk", json_integer((json_int_t)r->bulk_disk));
		json_object_set_new(o, "bulk", x);
	}
	x = json_object();
	if (by == AGC_DU_BY_AGENT)
		json_object_set_new(x, "compact", json_integer((json_int_t)r->compact_bytes));
	json_object_set_new(x, "prune_30d", json_integer((json_int_t)r->prune_bytes));
	json_object_set_new(x, "prune_30d_sessions", json_integer((json_int_t)r->prune_sessions));
	json_object_set_new(o, "would_free", x);
	return o;
}

static void add_total(agc_du_row *t, const agc_du_row *r)
{
	t->sessions += r->sessions;
	t->orphans += r->orphans;
	t->bytes += r->bytes;
	t->disk += r->disk;
	t->orphan_bytes += r->orphan_bytes;
	t->orphan_disk += r->orphan_disk;
	t->bulk_bytes += r->bulk_bytes;
	t->bulk_disk += r->bulk_disk;
	t->prune_bytes += r->prune_bytes;
	t->prune_sessions += r->prune_sessions;
	t->compact_bytes += r->compact_bytes;
}

static void print_row(du_out *d, const agc_du_row *r, const char *agent, const char *project)
{
	char b[5][32];

	cli_size(r->bytes, b[0], sizeof(b[0]));
	cli_size(r->disk, b[1], sizeof(b[1]));
	cli_size(r->prune_bytes, b[2], sizeof(b[2]));
	if (d->by == AGC_DU_BY_KIND) {
		if (r->kind)
			printf("%-8s %-11s %8zu %7zu %9s %9s\n", agent, r->kind, r->sessions, r->orphans, b[0], b[1]);
		else
			printf("%-8s %-11s %8s %7s %9s %9s\n", agent, "", "", "", b[0], b[1]);
		return;
	}
	printf("%-8s %8zu %7zu %9s %9s", agent, r->sessions, r->orphans, b[0], b[1]);
	if (d->by == AGC_DU_BY_AGENT) {
		cli_size(r->bulk_bytes, b[3], sizeof(b[3]));
		cli_size(r->compact_bytes, b[4], sizeof(b[4]));
		printf(" %9s %9s %9s\n", b[3], b[4], b[2]);
	} else if (strcmp(agent, "total") == 0) {
		printf(" %9s\n", b[2]);
	} else {
		char *where = project ? cli_home_path(d->c, project) : NULL;

		printf(" %9s ", b[2]);
		cli_text(stdout, where ? where : project ? project : "-", CLI_TEXT_LINE);
		putchar('\n');
		free(where);
	}
}

static int on_row(const agc_du_row *r, void *ud)
{
	du_out *d = ud;

	if (d->n++ == 0 && !d->c->json) {
		if (d->by == AGC_DU_BY_KIND)
			printf("%-8s %-11s %8s %7s %9s %9s\n", "AGENT", "KIND", "SESSIONS", "ORPHANS", "SIZE", "DISK");
		else if (d->by == AGC_DU_BY_AGENT)
			printf("%-8s %8s %7s %9s %9s %9s %9s %9s\n", "AGENT", "SESSIONS", "ORPHANS", "SIZE", "DISK", "BULK",
			       "COMPACT", "PRUNE>30D");
		else
			printf("%-8s %8s %7s %9s %9s %9s %s\n", "AGENT", "SESSIONS", "ORPHANS", "SIZE", "DISK", "PRUNE>30D",
			       "PROJECT");
	}
	add_total(&d->total, r);
	if (d->c->json)
		cli_json_print(row_json(r, d->by, false));
	else
		print_row(d, r, r->agent, r->project);
	return 0;
}

static void print_warning(const char *msg, void *ud)
{
	(void)ud;
	cli_err("%s", msg);
}

int cmd_du(cli *c, int argc, char **argv)
{
	agc_du_opts o = AGC_DU_OPTS_INIT;
	du_out d;
	cli_args pos;
	int rc;

	rc = cli_parse(c, cli_cmd_find("du"), argc, argv, du_opt, &o, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n) {
		rc = cli_usage("du", "unexpected argument '%s'", pos.v[0]);
		cli_args_release(&pos);
		return rc;
	}
	cli_args_release(&pos);
	if ((rc = cli_ctx(c)))
		return rc;
	o.warn = print_warning;
	memset(&d, 0, sizeof(d));
	d.c = c;
	d.by = o.by;
	rc = agc_du(c->ctx, &o, on_row, &d);
	if (c->json) {
		json_t *t = json_object();

		json_object_set_new(t, "total", row_json(&d.total, o.by, true));
		cli_json_print(t);
	} else if (d.n) {
		print_row(&d, &d.total, "total", NULL);
	}
	if (rc < 0) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	return 0;
}
