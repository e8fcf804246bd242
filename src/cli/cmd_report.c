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

/* The first line of a purge or dry run: the session in human terms first (SPEC "Output"):
 * `purged claude 0b8e5a4c "fix the build" in ~/src/app, 3d ago`. On a terminal (or with
 * COLUMNS) the line fits the width: the id shortened as ls shows it, then the title and the
 * project cut; elsewhere nothing is cut, the id whole. -v prints it whole everywhere; --json
 * and the paths listed below always have it whole. */
static void print_head(const cli *c, const agc_report *r, const char *word, const char *colour)
{
	const agc_session_info *s = agc_report_session(r);
	char *agent = cli_text_str(agc_report_agent(r), CLI_TEXT_LINE);
	char *sid, *title = NULL, *where = NULL, *ct = NULL, *cw = NULL, ago[32];
	int width = cli_term_width();
	const char *id = agc_report_id(r);
	char shortid[CLI_SHORT_ID + 1];

	/* to fit a width, the id as ls shortens it; whole with -v, and where nothing is cut (a
	 * log, a pipe: the exact id of what was deleted) */
	if (width > 0 && !c->verbose && strlen(id) > CLI_SHORT_ID) {
		memcpy(shortid, id, CLI_SHORT_ID);
		shortid[CLI_SHORT_ID] = '\0';
		id = shortid;
	}
	sid = cli_text_str(id, CLI_TEXT_LINE);

	if (s && s->title && *s->title)
		title = cli_text_str(s->title, CLI_TEXT_LINE);
	if (s && s->project)
		where = cli_home_path(c, s->project);
	ago[0] = '\0';
	if (s && s->updated_ms > 0)
		cli_ago(agc_ctx_now_ms(c->ctx), s->updated_ms, ago, sizeof(ago));
	if (!agent || !sid || (s && s->title && *s->title && !title) || (s && s->project && !where)) {
		/* out of memory: the plain form, which allocates nothing */
		printf("%s ", word);
		who(stdout, r);
		putchar('\n');
		goto out;
	}
	if (width > 0) {
		/* what does not fit: the title gives way first, then the project (from its start),
		 * each down to a few columns; the rest is what names the session */
		size_t fixed = strlen(word) + 1 + cli_width(agent) + 1 + cli_width(sid) +
			       (title ? 3 : 0) + (where ? 4 : 0) + (*ago ? 2 + strlen(ago) : 0);
		size_t tw = title ? cli_width(title) : 0, ww = where ? cli_width(where) : 0;
		size_t room = fixed < (size_t)width ? (size_t)width - fixed : 0;

		if (tw + ww > room && tw > 12)
			tw = room > ww + 12 ? room - ww : 12;
		if (tw + ww > room && ww > 12)
			ww = room > tw + 12 ? room - tw : 12;
		if (title && !(ct = cli_cut(title, tw, false)))
			goto out;
		if (where && !(cw = cli_cut(where, ww, true)))
			goto out;
	}
	printf("%s%s%s %s %s", cli_c(c, colour), word, cli_c(c, "\033[0m"), agent, sid);
	if (title)
		printf(" \"%s\"", ct ? ct : title);
	if (where)
		printf(" in %s", cw ? cw : where);
	if (*ago)
		printf("%s%s", where ? ", " : " ", ago);
	putchar('\n');
out:
	free(agent);
	free(sid);
	free(title);
	free(where);
	free(ct);
	free(cw);
}

/* True when the purge was refused because the session goes only with its parent (a Claude
 * sub-agent): its files are residual with reason "parent". */
static bool part_of(const agc_report *r)
{
	size_t i;

	for (i = 0; i < agc_report_residual_count(r); i++)
		if (agc_report_residual(r, i)->reason && strcmp(agc_report_residual(r, i)->reason, "parent") == 0)
			return true;
	return false;
}

static void print_children(const agc_report *r)
{
	for (size_t i = 0; i < agc_report_child_count(r); i++) {
		printf("  with child ");
		cli_text(stdout, agc_report_child(r, i), CLI_TEXT_LINE);
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
				if (s->parent) {
					printf("\n  parent   ");
					cli_text(stdout, s->parent, CLI_TEXT_LINE);
				}
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
			bool dry = flags & AGC_PURGE_DRY_RUN;

			cli_size(total_bytes(r), size, sizeof(size));
			if (st == AGC_ST_IN_USE || st == AGC_ST_REFUSED) {
				/* a dry run says what the purge would do: refuse, and why */
				print_head(c, r, dry ? "dry-run" : agc_status_name(st), "\033[31m");
				if (!c->quiet) {
					if (dry)
						printf("  would refuse: %s; nothing would change\n",
						       st == AGC_ST_IN_USE ? "the session is in use"
						       : part_of(r)        ? "a sub-agent goes only with its parent session"
									   : "see below");
					else if (part_of(r))
						printf("  nothing changed: a sub-agent goes only with its parent session\n");
					else
						printf("  nothing changed%s\n", st == AGC_ST_IN_USE ? ": the session is in use" : "");
					print_holders(c, r, stdout);
				}
				print_items(c, r, true, "");
			} else {
				print_head(c, r, agc_status_name(st),
					   st == AGC_ST_PURGED ? "\033[32m" : st == AGC_ST_PARTIAL ? "\033[33m" : "\033[1m");
				if (!c->quiet) {
					if (dry && code == EXIT_REFUSED)
						printf("  would refuse (nothing would change); it would remove %zu item%s, %s:\n",
						       nrem, nrem == 1 ? "" : "s", size);
					else
						printf("  %s %zu item%s, %s%s\n", dry ? "would remove" : "removed", nrem,
						       nrem == 1 ? "" : "s", size,
						       nres ? (dry ? "; would leave:" : "; left behind:") : "");
				}
				if (!c->quiet && (c->verbose || dry))
					print_items(c, r, false, "");
				print_items(c, r, true, "");
				if (!c->quiet && (c->verbose || dry))
					print_children(r);
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

/* An id the agent's grammar refuses is not found (R1: exit 5, nothing touched); on stderr, say
 * whose grammar it is, or that a path is not an id, so the user knows what to type. */
static void id_hint(const char *cmd, const char *agent, const char *id)
{
	int self = strcmp(agent, "auto") == 0 ? -1 : agc_agent_find(agent);
	size_t i;

	if (self >= 0 && agc_agent_id_ok((size_t)self, id))
		return;
	for (i = 0; self < 0 && i < agc_agent_count(); i++)
		if (agc_agent_id_ok(i, id))
			return;
	fputs("hint: ", stderr);
	if (strchr(id, '/') || strstr(id, ".jsonl") || strstr(id, ".json") || strstr(id, ".db")) {
		fputs("'", stderr);
		cli_text(stderr, id, CLI_TEXT_LINE);
		fputs("' looks like a path or a file name, not a session id; 'agentgc ls' lists the ids "
		      "(a Claude transcript's id is its file name without .jsonl)\n", stderr);
		return;
	}
	for (i = 0; self >= 0 && i < agc_agent_count(); i++)
		if ((int)i != self && agc_agent_id_ok(i, id)) {
			fputs("'", stderr);
			cli_text(stderr, id, CLI_TEXT_LINE);
			fprintf(stderr, "' is an id of %s, not of %s: try 'agentgc %s %s ", agc_agent_name(i),
				agent, cmd, agc_agent_name(i));
			cli_text(stderr, id, CLI_TEXT_LINE);
			fputs("' (or 'auto')\n", stderr);
			return;
		}
	fputs("'", stderr);
	cli_text(stderr, id, CLI_TEXT_LINE);
	if (self >= 0)
		fprintf(stderr, "' is not an id of %s (%s); 'agentgc ls --agent %s' lists them\n", agent,
			strcmp(agent, "opencode") == 0 ? "ses_ and letters, digits or _" : "a UUID", agent);
	else
		fputs("' is not an id of any agent; 'agentgc ls' lists them\n", stderr);
}

enum { OPT_DRY_RUN = 0x200, OPT_SCRUB, OPT_WITH_FORKS };

const cli_opt cli_purge_opts[] = {
	{"dry-run", OPT_DRY_RUN, 0, NULL, "change nothing: list what would go, and exit as the\n"
				  "purge would"},
	{"scrub", OPT_SCRUB, 0, NULL, "then rebuild (VACUUM) every database rows were deleted\n"
				      "from, so no older copy survives in its pages; a database\n"
				      "another process holds, or without room, is left (exit 3)"},
	{"with-forks", OPT_WITH_FORKS, 0, NULL, "not supported yet: no agent with forks (Codex) is\n"
						"supported"},
	{NULL, 0, 0, NULL, NULL},
};

static int purge_opt(cli *c, int key, const char *v, void *ud)
{
	unsigned *flags = ud;

	(void)c;
	(void)v;
	switch (key) {
	case OPT_DRY_RUN:
		*flags |= AGC_PURGE_DRY_RUN;
		return 0;
	case OPT_SCRUB:
		*flags |= AGC_PURGE_SCRUB;
		return 0;
	case OPT_WITH_FORKS:
		/* never accepted and ignored: refused until an agent with forks lands */
		return cli_usage("purge", "--with-forks is not supported yet: no agent with forks (Codex) "
					  "is supported");
	}
	return -1;
}

/* show and in-use: AGENT ID. */
static int agent_id_cmd(cli *c, int argc, char **argv, const char *what)
{
	cli_args pos;
	int rc;

	rc = cli_parse(c, cli_cmd_find(what), argc, argv, NULL, NULL, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n != 2) {
		cli_args_release(&pos);
		return cli_usage(what, "%s takes AGENT|auto and one ID", what);
	}
	if (!(rc = cli_check_agent(what, pos.v[0], true)) && !(rc = cli_ctx(c))) {
		id_hint(what, pos.v[0], pos.v[1]);
		rc = one(c, what, pos.v[0], pos.v[1], 0);
	}
	cli_args_release(&pos);
	return rc;
}

int cmd_show(cli *c, int argc, char **argv)
{
	return agent_id_cmd(c, argc, argv, "show");
}

int cmd_in_use(cli *c, int argc, char **argv)
{
	return agent_id_cmd(c, argc, argv, "in-use");
}

int cmd_purge(cli *c, int argc, char **argv)
{
	unsigned flags = 0;
	cli_args pos;
	size_t i;
	int rc, worst = EXIT_OK;

	rc = cli_parse(c, cli_cmd_find("purge"), argc, argv, purge_opt, &flags, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n < 2) {
		cli_args_release(&pos);
		return cli_usage("purge", "purge takes AGENT|auto and at least one ID");
	}
	rc = cli_check_agent("purge", pos.v[0], true);
	if (rc == 0)
		rc = cli_ctx(c);
	if (rc) {
		cli_args_release(&pos);
		return rc;
	}
	for (i = 1; i < pos.n; i++) {
		id_hint("purge", pos.v[0], pos.v[i]);
		worst = cli_worse(worst, one(c, "purge", pos.v[0], pos.v[i], flags));
	}
	cli_args_release(&pos);
	return worst;
}
