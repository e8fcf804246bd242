/* agentgc show, in-use and purge: one report per id. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_holders(const cli *c, const agc_report *r, FILE *f)
{
	size_t i;

	for (i = 0; i < agc_report_holder_count(r); i++) {
		const agc_holder_info *h = agc_report_holder(r, i);

		fprintf(f, "  held by pid %d (", h->pid);
		cli_text(f, h->why, CLI_TEXT_LINE);
		fputs("): ", f);
		cli_text(f, h->command ? h->command : "", CLI_TEXT_LINE);
		if (h->what && strcmp(h->what, agc_report_id(r)) != 0) {
			fputs(" [", f);
			cli_path(f, h->what);
			fputc(']', f);
		}
		fputc('\n', f);
	}
	(void)c;
}

/* "AGENT ID" of a report: the id may be the one typed, or read from agent data. */
static void who(FILE *f, const agc_report *r)
{
	cli_text(f, agc_report_agent(r), CLI_TEXT_LINE);
	fputc(' ', f);
	cli_text(f, agc_report_id(r), CLI_TEXT_LINE);
}

static void print_hints(const agc_report *r)
{
	size_t i;

	for (i = 0; i < agc_report_hint_count(r); i++) {
		/* hints name paths and commands */
		fputs("hint: ", stderr);
		cli_text(stderr, agc_report_hint(r, i), 0);
		fputc('\n', stderr);
	}
}

static void print_items(const cli *c, const agc_report *r, bool residual, const char *lead)
{
	size_t i, n = residual ? agc_report_residual_count(r) : agc_report_removed_count(r);
	char size[32];

	for (i = 0; i < n; i++) {
		const agc_item *it = residual ? agc_report_residual(r, i) : agc_report_removed(r, i);

		cli_size(it->bytes, size, sizeof(size));
		printf("  %s%-5s %9s  ", lead, it->kind, size);
		if (strcmp(it->kind, "rows") == 0 && it->table) {
			/* a table name is the database's */
			printf("%llu rows of ", (unsigned long long)it->count);
			cli_text(stdout, it->table, CLI_TEXT_LINE);
			printf(" in ");
		} else if (it->count && (strcmp(it->kind, "lines") == 0 || strcmp(it->kind, "rows") == 0))
			printf("%llu %s of ", (unsigned long long)it->count, it->kind);
		cli_path(stdout, it->path ? it->path : "");
		if (residual) {
			/* a reason may embed a path or an error message */
			printf("  %s(", cli_c(c, "\033[33m"));
			cli_text(stdout, it->reason ? it->reason : "error", CLI_TEXT_LINE);
			printf(")%s", cli_c(c, "\033[0m"));
		}
		putchar('\n');
	}
}

static uint64_t total_bytes(const agc_report *r)
{
	uint64_t b = 0;
	size_t i;

	for (i = 0; i < agc_report_removed_count(r); i++)
		b += agc_report_removed(r, i)->bytes;
	return b;
}

static int one(cli *c, const char *what, const char *agent, const char *id, unsigned flags)
{
	agc_report *r = NULL;
	int rc, code;
	char size[32];

	if (strcmp(what, "show") == 0)
		rc = agc_show(c->ctx, agent, id, &r);
	else if (strcmp(what, "in-use") == 0)
		rc = agc_in_use(c->ctx, agent, id, &r);
	else
		rc = agc_purge(c->ctx, agent, id, flags, &r);
	if (rc < 0 || !r) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	code = agc_report_exit(r);
	if (strcmp(what, "in-use") == 0 && code == EXIT_OK && agc_report_status(r) != AGC_ST_FOUND)
		code = EXIT_ERR;
	if (c->json) {
		cli_report_json(c, r, what);
		/* an error is said on stderr too, as with every exit 1 */
		if (agc_report_status(r) == AGC_ST_ERROR)
			cli_err("%s %s: %s", agc_report_agent(r), agc_report_id(r), agc_report_error(r));
	} else {
		agc_status st = agc_report_status(r);
		const agc_session_info *s = agc_report_session(r);

		if (st == AGC_ST_ERROR) {
			cli_err("%s %s: %s", agc_report_agent(r), agc_report_id(r), agc_report_error(r));
		} else if (st == AGC_ST_NOT_FOUND) {
			if (!c->quiet) {
				printf("not found: ");
				cli_text(stdout, agc_report_agent(r), CLI_TEXT_LINE);
				putchar(' ');
				cli_text(stdout, id, CLI_TEXT_LINE);
				printf(" (no artifact of that id)\n");
			}
		} else if (strcmp(what, "in-use") == 0) {
			who(stdout, r);
			printf(": %s\n", st == AGC_ST_IN_USE ? "in use" : "free");
			print_holders(c, r, stdout);
		} else if (strcmp(what, "show") == 0) {
			char ago[32], iso[40];

			fputs(cli_c(c, "\033[1m"), stdout);
			who(stdout, r);
			printf("%s\n", cli_c(c, "\033[0m"));
			if (s) {
				printf("  project  ");
				cli_path(stdout, s->project ? s->project : "-");
				printf("\n  title    ");
				cli_text(stdout, s->title ? s->title : "-", CLI_TEXT_LINE);
				putchar('\n');
				cli_iso(s->created_ms, iso, sizeof(iso));
				cli_ago(agc_ctx_now_ms(c->ctx), s->created_ms, ago, sizeof(ago));
				printf("  created  %s (%s)\n", iso, ago);
				cli_iso(s->updated_ms, iso, sizeof(iso));
				cli_ago(agc_ctx_now_ms(c->ctx), s->updated_ms, ago, sizeof(ago));
				printf("  updated  %s (%s)\n", iso, ago);
				char disk[32];

				cli_size(s->bytes, size, sizeof(size));
				cli_size(s->disk, disk, sizeof(disk));
				printf("  size     %s (%s on disk)\n  live     %s\n", size, disk,
				       agc_report_holder_count(r) ? "yes" : "no");
			}
			printf("artifacts (%zu):\n", agc_report_removed_count(r));
			print_items(c, r, false, "");
			if (agc_report_residual_count(r)) {
				printf("cannot be removed:\n");
				print_items(c, r, true, "");
			}
			for (size_t i = 0; i < agc_report_child_count(r); i++) {
				printf("child ");
				cli_text(stdout, agc_report_child(r, i), CLI_TEXT_LINE);
				putchar('\n');
			}
			print_holders(c, r, stdout);
		} else {
			size_t nrem = agc_report_removed_count(r), nres = agc_report_residual_count(r);

			cli_size(total_bytes(r), size, sizeof(size));
			if (st == AGC_ST_IN_USE || st == AGC_ST_REFUSED) {
				printf("%s%s%s ", cli_c(c, "\033[31m"), agc_status_name(st), cli_c(c, "\033[0m"));
				who(stdout, r);
				printf(": nothing changed\n");
				print_holders(c, r, stdout);
				print_items(c, r, true, "");
			} else {
				if (!c->quiet || nres) {
					printf("%s ", agc_status_name(st));
					who(stdout, r);
					printf(": %s %zu item%s, %s%s\n",
					       st == AGC_ST_DRY_RUN ? "would remove" : "removed", nrem,
					       nrem == 1 ? "" : "s", size,
					       nres ? "; left behind:" : "");
				}
				if (c->verbose || st == AGC_ST_DRY_RUN)
					print_items(c, r, false, "");
				print_items(c, r, true, "");
				for (size_t i = 0; i < agc_report_child_count(r); i++)
					if (c->verbose || st == AGC_ST_DRY_RUN) {
						printf("  with child ");
						cli_text(stdout, agc_report_child(r, i), CLI_TEXT_LINE);
						putchar('\n');
					}
			}
		}
	}
	/* a purge's hints (what may still hold older copies) are said after it went, too */
	if (code == EXIT_REFUSED || code == EXIT_LEFT ||
	    (strcmp(what, "purge") == 0 && code == EXIT_OK && !c->quiet && !(flags & AGC_PURGE_DRY_RUN)))
		print_hints(r);
	agc_report_free(r);
	return code;
}

static int needs_agent_id(cli *c, int argc, char **argv, const cli_cmd *cmd)
{
	int i;

	for (i = 1; i < argc; i++)
		if (cli_is_help(argv[i])) {
			cli_help(cmd);
			return -1;
		}
	return 0;
}

static int check_agent(const char *cmd, const char *agent, bool allow_auto)
{
	if (allow_auto && strcmp(agent, "auto") == 0)
		return 0;
	if (agc_agent_find(agent) < 0)
		return cli_usage(cmd, "unknown agent '%s'", agent);
	return 0;
}

int cmd_show(cli *c, int argc, char **argv)
{
	int rc;

	if (needs_agent_id(c, argc, argv, &cli_cmds[2]))
		return 0;
	if (argc != 3)
		return cli_usage("show", "show takes AGENT ID");
	if ((rc = check_agent("show", argv[1], true)) || (rc = cli_ctx(c)))
		return rc;
	return one(c, "show", argv[1], argv[2], 0);
}

int cmd_in_use(cli *c, int argc, char **argv)
{
	int rc;

	if (needs_agent_id(c, argc, argv, &cli_cmds[3]))
		return 0;
	if (argc != 3)
		return cli_usage("in-use", "in-use takes AGENT ID");
	if ((rc = check_agent("in-use", argv[1], true)) || (rc = cli_ctx(c)))
		return rc;
	return one(c, "in-use", argv[1], argv[2], 0);
}

int cmd_purge(cli *c, int argc, char **argv)
{
	unsigned flags = 0;
	const char *agent = NULL;
	char **ids;
	int n = 0, i, rc, worst = EXIT_OK;

	if (needs_agent_id(c, argc, argv, &cli_cmds[4])) {
		printf("\nEvery artifact of each session goes: transcripts, side files, sub-agents and\n"
		       "child sessions, its lines in shared files. A live session is refused (exit 4);\n"
		       "what cannot be removed safely is listed with its reason (exit 3).\n"
		       "  --dry-run     change nothing; list what would go, exit as the purge would\n"
		       "  --scrub       then rebuild (VACUUM) every database rows were deleted from, so no\n"
		       "                older copy of them survives in its pages; a database another\n"
		       "                process holds, or without room for a copy, is left (exit 3)\n"
		       "  --with-forks  not supported yet: no agent with forks (Codex) is supported\n");
		return 0;
	}
	ids = calloc((size_t)argc, sizeof(*ids));
	if (!ids)
		return EXIT_ERR;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			flags |= AGC_PURGE_DRY_RUN;
		else if (strcmp(argv[i], "--with-forks") == 0) {
			/* never accepted and ignored: refused until an agent with forks lands */
			free(ids);
			return cli_usage("purge", "--with-forks is not supported yet: no agent with forks (Codex) is "
						  "supported");
		} else if (strcmp(argv[i], "--scrub") == 0)
			flags |= AGC_PURGE_SCRUB;
		else if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++)
				ids[n++] = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			free(ids);
			return cli_usage("purge", "unknown option '%s'", argv[i]);
		} else if (!agent)
			agent = argv[i];
		else
			ids[n++] = argv[i];
	}
	if (!agent || n == 0) {
		free(ids);
		return cli_usage("purge", "purge takes AGENT|auto and at least one ID");
	}
	if ((rc = check_agent("purge", agent, true)) || (rc = cli_ctx(c))) {
		free(ids);
		return rc;
	}
	for (i = 0; i < n; i++)
		worst = cli_worse(worst, one(c, "purge", agent, ids[i], flags));
	free(ids);
	return worst;
}
