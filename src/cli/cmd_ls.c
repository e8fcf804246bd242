/* agentgc ls: sessions, newest first. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int agc_duration_parse(const char *s, int64_t *ms);

typedef struct ls_state {
	cli *c;
	int64_t now;
	size_t n;
} ls_state;

static int print_session(const agc_session_info *s, void *ud)
{
	ls_state *st = ud;
	char size[32], ago[32];

	st->n++;
	if (st->c->json) {
		cli_json_print(cli_session_json(s));
		return 0;
	}
	if (st->n == 1 && !st->c->quiet)
		printf("%s%-8s %-36s %-9s %9s  %-4s %s%s\n", cli_c(st->c, "\033[1m"), "AGENT", "ID", "UPDATED",
		       "SIZE", "LIVE", "PROJECT / TITLE", cli_c(st->c, "\033[0m"));
	cli_size(s->bytes, size, sizeof(size));
	cli_ago(st->now, s->updated_ms, ago, sizeof(ago));
	/* every string of a row is agent data: through cli_text (SPEC "Output") */
	cli_pad(stdout, cli_text(stdout, s->agent, CLI_TEXT_LINE), 8);
	printf(" %s", cli_c(st->c, "\033[36m"));
	cli_pad(stdout, cli_text(stdout, s->id, CLI_TEXT_LINE), 36);
	printf("%s %-9s %9s  %-4s ", cli_c(st->c, "\033[0m"), ago, size, s->live ? "yes" : "");
	if (s->parent) {
		printf("(child of ");
		cli_text(stdout, s->parent, CLI_TEXT_LINE);
		printf(") ");
	}
	cli_path(stdout, s->project ? s->project : "-");
	if (s->title) {
		/* titles are prompt text: kept on one line */
		printf("  ");
		cli_text(stdout, s->title, CLI_TEXT_LINE);
	}
	putchar('\n');
	return 0;
}

/* What the listing could not read goes to stderr, in --json too (R2: never silent). */
static void print_warning(const char *msg, void *ud)
{
	(void)ud;
	cli_err("%s", msg);
}

enum { OPT_AGENT = 0x200, OPT_PROJECT, OPT_OLDER, OPT_NEWER, OPT_CHILDREN, OPT_SORT, OPT_LIMIT,
       OPT_PROJECT_GONE, OPT_GREP };

const cli_opt cli_ls_opts[] = {
	{"agent", OPT_AGENT, 1, "A", "only this agent (repeatable)"},
	{"project", OPT_PROJECT, 1, "DIR", "only sessions whose working directory is DIR or\n"
					   "below it; DIR need not exist any more"},
	{"project-gone", OPT_PROJECT_GONE, 0, NULL, "only sessions whose working directory no\n"
						    "longer exists"},
	{"grep", OPT_GREP, 1, "TEXT", "only sessions whose title, first prompt or project\n"
				      "holds TEXT (ASCII letters in any case)"},
	{"older-than", OPT_OLDER, 1, "DUR", "last activity before now - DUR"},
	{"newer-than", OPT_NEWER, 1, "DUR", "last activity after now - DUR"},
	{"children", OPT_CHILDREN, 0, NULL, "also child and sub-agent sessions, under their\n"
					   "parent"},
	{"sort", OPT_SORT, 1, "KEY", "updated (default), created or size; newest or\n"
				     "largest first"},
	{"limit", OPT_LIMIT, 1, "N", "at most N sessions"},
	{NULL, 0, 0, NULL, NULL},
};

typedef struct ls_args {
	agc_ls_opts *o;
} ls_args;

static int ls_opt(cli *c, int key, const char *v, void *ud)
{
	ls_args *a = ud;
	agc_ls_opts *o = a->o;

	(void)c;
	switch (key) {
	case OPT_AGENT:
		return cli_agent_bit("ls", v, &o->agents);
	case OPT_PROJECT:
		/* the library resolves it: lexically, and by its real path when it exists */
		if (!*v)
			return cli_usage("ls", "--project needs a directory");
		o->project = v;
		return 0;
	case OPT_PROJECT_GONE:
		o->project_gone = 1;
		return 0;
	case OPT_GREP:
		o->grep = v;
		return 0;
	case OPT_OLDER:
		if (agc_duration_parse(v, &o->older_than_ms) < 0)
			return cli_usage("ls", "'%s' is not a duration (90s, 15m, 24h, 30d)", v);
		return 0;
	case OPT_NEWER:
		if (agc_duration_parse(v, &o->newer_than_ms) < 0)
			return cli_usage("ls", "'%s' is not a duration (90s, 15m, 24h, 30d)", v);
		return 0;
	case OPT_CHILDREN:
		o->children = 1;
		return 0;
	case OPT_SORT:
		if (strcmp(v, "updated") == 0)
			o->sort = AGC_SORT_UPDATED;
		else if (strcmp(v, "created") == 0)
			o->sort = AGC_SORT_CREATED;
		else if (strcmp(v, "size") == 0)
			o->sort = AGC_SORT_SIZE;
		else
			return cli_usage("ls", "--sort takes updated, created or size, not '%s'", v);
		return 0;
	case OPT_LIMIT: {
		char *end;
		long long n;

		errno = 0;
		n = strtoll(v, &end, 10);
		/* strict: digits only (no sign, no spaces), at least 1 */
		if (errno || *end || n < 1 || v[0] < '0' || v[0] > '9')
			return cli_usage("ls", "--limit takes a positive number, not '%s'", v);
		o->limit = (size_t)n;
		return 0;
	}
	}
	return -1;
}

int cmd_ls(cli *c, int argc, char **argv)
{
	agc_ls_opts o;
	ls_args a;
	cli_args pos;
	ls_state st;
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&a, 0, sizeof(a));
	o.warn = print_warning;
	a.o = &o;
	rc = cli_parse(c, cli_cmd_find("ls"), argc, argv, ls_opt, &a, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n) {
		rc = cli_usage("ls", "unexpected argument '%s'", pos.v[0]);
		cli_args_release(&pos);
		return rc;
	}
	cli_args_release(&pos);
	if ((rc = cli_ctx(c)))
		return rc;
	memset(&st, 0, sizeof(st));
	st.c = c;
	st.now = agc_ctx_now_ms(c->ctx);
	rc = agc_ls(c->ctx, &o, print_session, &st);
	if (rc < 0) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	return 0;
}
