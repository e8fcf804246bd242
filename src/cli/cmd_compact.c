/* agentgc compact: rebuild the databases the agents' sessions share. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_AGENT = 0x200, OPT_DRY_RUN };

const cli_opt cli_compact_opts[] = {
	{"agent", OPT_AGENT, 1, "A", "only this agent's databases (repeatable)"},
	{"dry-run", OPT_DRY_RUN, 0, NULL, "change nothing: say what would be done, the free\n"
				  "pages and whether there is room"},
	{NULL, 0, 0, NULL, NULL},
};

static int compact_opt(cli *c, int key, const char *v, void *ud)
{
	agc_compact_opts *o = ud;

	(void)c;
	switch (key) {
	case OPT_AGENT:
		return cli_agent_bit("compact", v, &o->agents);
	case OPT_DRY_RUN:
		o->flags |= AGC_PURGE_DRY_RUN;
		return 0;
	}
	return -1;
}

typedef struct compact_out {
	cli *c;
	size_t n;
	int worst;
	uint64_t before, after;
} compact_out;

static int exit_of(const agc_compact_info *ci)
{
	if (strcmp(ci->status, "error") == 0)
		return EXIT_ERR;
	if (strcmp(ci->status, "skipped") == 0)
		return strcmp(ci->reason, "in-use") == 0 || strcmp(ci->reason, "busy") == 0 ? EXIT_REFUSED : EXIT_LEFT;
	if (strcmp(ci->status, "partial") == 0)
		return EXIT_LEFT;
	if (strcmp(ci->status, "dry-run") == 0 && ci->reason)
		return EXIT_LEFT;
	return EXIT_OK;
}

json_t *cli_compact_json(const agc_compact_info *ci)
{
	json_t *o = json_object(), *h = json_array();
	size_t i;

	cli_json_set_str(o, "agent", ci->agent);
	cli_json_set_str(o, "path", ci->path);
	json_object_set_new(o, "status", json_string(ci->status));
	if (ci->reason)
		cli_json_set_str(o, "reason", ci->reason);
	json_object_set_new(o, "bytes_before", json_integer((json_int_t)ci->bytes_before));
	if (strcmp(ci->status, "compacted") == 0 || strcmp(ci->status, "partial") == 0)
		json_object_set_new(o, "bytes_after", json_integer((json_int_t)ci->bytes_after));
	json_object_set_new(o, "wal_bytes", json_integer((json_int_t)ci->wal_bytes));
	json_object_set_new(o, "free_bytes", json_integer((json_int_t)ci->free_bytes));
	if (ci->need || ci->avail) {
		json_object_set_new(o, "need", json_integer((json_int_t)ci->need));
		json_object_set_new(o, "avail", json_integer((json_int_t)ci->avail));
	}
	for (i = 0; i < ci->n_holders; i++) {
		json_t *x = json_object();

		json_object_set_new(x, "pid", json_integer(ci->holders[i].pid));
		cli_json_set_str(x, "command", ci->holders[i].command ? ci->holders[i].command : "");
		json_object_set_new(x, "why", json_string(ci->holders[i].why));
		json_array_append_new(h, x);
	}
	json_object_set_new(o, "holders", h);
	return o;
}

static int on_db(const agc_compact_info *ci, void *ud)
{
	compact_out *co = ud;
	cli *c = co->c;
	char a[32], b[32];
	char *where;
	size_t i;

	co->n++;
	co->worst = cli_worse(co->worst, exit_of(ci));
	if (strcmp(ci->status, "compacted") == 0 || strcmp(ci->status, "partial") == 0) {
		co->before += ci->bytes_before;
		co->after += ci->bytes_after;
	}
	if (c->json) {
		cli_json_print(cli_compact_json(ci));
		return 0;
	}
	where = cli_home_path(c, ci->path);
	printf("%s %s ", ci->status, ci->agent);
	cli_text(stdout, where ? where : ci->path, CLI_TEXT_LINE);
	free(where);
	if (strcmp(ci->status, "compacted") == 0 || strcmp(ci->status, "partial") == 0) {
		cli_size(ci->bytes_before, a, sizeof(a));
		cli_size(ci->bytes_after, b, sizeof(b));
		printf(": %s -> %s", a, b);
		if (ci->reason)
			printf(" (its -wal could not be emptied: a reader is mid-transaction; run compact again)");
	} else if (strcmp(ci->status, "dry-run") == 0) {
		cli_size(ci->free_bytes, a, sizeof(a));
		cli_size(ci->wal_bytes, b, sizeof(b));
		printf(": %s of free pages, %s in its -wal", a, b);
		if (ci->reason) {
			cli_size(ci->need, a, sizeof(a));
			cli_size(ci->avail, b, sizeof(b));
			printf("; would be skipped: a rebuild needs %s, %s free", a, b);
		}
	} else if (strcmp(ci->status, "skipped") == 0) {
		printf(": skipped, ");
		if (strcmp(ci->reason, "in-use") == 0) {
			printf("in use");
		} else if (strcmp(ci->reason, "busy") == 0) {
			printf("busy (a reader is mid-transaction; run compact again)");
		} else if (strcmp(ci->reason, "free-space") == 0) {
			cli_size(ci->need, a, sizeof(a));
			cli_size(ci->avail, b, sizeof(b));
			printf("not enough free space: a rebuild needs %s, %s free", a, b);
		} else {
			cli_text(stdout, ci->reason, CLI_TEXT_LINE);
		}
	} else {
		printf(": ");
		cli_text(stdout, ci->reason ? ci->reason : "error", CLI_TEXT_LINE);
	}
	putchar('\n');
	for (i = 0; i < ci->n_holders; i++) {
		printf("  held by pid %d (%s): ", ci->holders[i].pid, ci->holders[i].why);
		cli_text(stdout, ci->holders[i].command ? ci->holders[i].command : "", CLI_TEXT_LINE);
		putchar('\n');
	}
	if (ci->n_holders)
		printf("  quit the program that holds it, then run compact again\n");
	return 0;
}

int cmd_compact(cli *c, int argc, char **argv)
{
	agc_compact_opts o = AGC_COMPACT_OPTS_INIT;
	compact_out co;
	cli_args pos;
	int rc;

	rc = cli_parse(c, cli_cmd_find("compact"), argc, argv, compact_opt, &o, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n) {
		rc = cli_usage("compact", "unexpected argument '%s'", pos.v[0]);
		cli_args_release(&pos);
		return rc;
	}
	cli_args_release(&pos);
	if ((rc = cli_ctx(c)))
		return rc;
	memset(&co, 0, sizeof(co));
	co.c = c;
	if (agc_compact(c->ctx, &o, on_db, &co) < 0) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	if (co.n == 0 && !c->quiet)
		cli_err("no agent database found; 'agentgc roots' shows where each agent's history is looked for");
	else if (!c->json && !c->quiet && co.before) {
		char a[32], b[32];

		cli_size(co.before, a, sizeof(a));
		cli_size(co.after, b, sizeof(b));
		printf("%s -> %s in all\n", a, b);
	}
	return co.worst;
}
