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

int cmd_ls(cli *c, int argc, char **argv)
{
	agc_ls_opts o;
	ls_state st;
	char *project = NULL;
	int i, rc;

	memset(&o, 0, sizeof(o));
	o.warn = print_warning;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (cli_is_help(a)) {
			cli_help(&cli_cmds[1]);
			printf("\n  --agent A          only this agent (repeatable)\n"
			       "  --project DIR      only sessions whose working directory is DIR\n"
			       "  --older-than DUR   last activity before now - DUR\n"
			       "  --newer-than DUR   last activity after now - DUR\n"
			       "  --children         also child and sub-agent sessions (with their parent)\n"
			       "  --sort KEY         updated (default), created or size; largest/newest first\n"
			       "  --limit N          at most N sessions\n");
			return 0;
		}
		if (strcmp(a, "--children") == 0) {
			o.children = 1;
			continue;
		}
		if (a[0] != '-')
			return cli_usage("ls", "unexpected argument '%s'", a);
		if (strcmp(a, "--agent") && strcmp(a, "--project") && strcmp(a, "--older-than") &&
		    strcmp(a, "--newer-than") && strcmp(a, "--sort") && strcmp(a, "--limit"))
			return cli_usage("ls", "unknown option '%s'", a);
		if (!v)
			return cli_usage("ls", "%s needs a value", a);
		i++;
		if (strcmp(a, "--agent") == 0) {
			if ((rc = cli_agent_bit("ls", v, &o.agents)))
				return rc;
		} else if (strcmp(a, "--project") == 0) {
			project = realpath(v, NULL);
			o.project = project ? project : v;
		} else if (strcmp(a, "--older-than") == 0) {
			if (agc_duration_parse(v, &o.older_than_ms) < 0)
				return cli_usage("ls", "'%s' is not a duration (90s, 15m, 24h, 30d)", v);
		} else if (strcmp(a, "--newer-than") == 0) {
			if (agc_duration_parse(v, &o.newer_than_ms) < 0)
				return cli_usage("ls", "'%s' is not a duration (90s, 15m, 24h, 30d)", v);
		} else if (strcmp(a, "--sort") == 0) {
			if (strcmp(v, "updated") == 0)
				o.sort = AGC_SORT_UPDATED;
			else if (strcmp(v, "created") == 0)
				o.sort = AGC_SORT_CREATED;
			else if (strcmp(v, "size") == 0)
				o.sort = AGC_SORT_SIZE;
			else
				return cli_usage("ls", "--sort takes updated, created or size, not '%s'", v);
		} else if (strcmp(a, "--limit") == 0) {
			char *end;
			long long n;

			errno = 0;
			n = strtoll(v, &end, 10);
			if (errno || *end || n < 1)
				return cli_usage("ls", "--limit takes a positive number, not '%s'", v);
			o.limit = (size_t)n;
		} else {
			return cli_usage("ls", "unknown option '%s'", a);
		}
	}
	if ((rc = cli_ctx(c))) {
		free(project);
		return rc;
	}
	memset(&st, 0, sizeof(st));
	st.c = c;
	st.now = agc_ctx_now_ms(c->ctx);
	rc = agc_ls(c->ctx, &o, print_session, &st);
	free(project);
	if (rc < 0) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	return 0;
}
