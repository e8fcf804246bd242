/* agentgc show, in-use and purge: one report per id. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define UUID_CHARS 36 /* 8-4-4-4-12 */

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
	for (size_t i = 0; i < agc_report_fork_count(r); i++) {
		printf("  read by fork ");
		cli_text(stdout, agc_report_fork(r, i), CLI_TEXT_LINE);
		putchar('\n');
	}
}

/* A purge of several ids: what each came to, for the progress line and the summary. */
typedef struct purge_tally {
	size_t purged, left, refused, notfound, errors;
	uint64_t bytes;
	char last_status[16], last_agent[16], last_id[AGC_PREFIX_MIN + 1];
	bool dry_run;
} purge_tally;

static purge_tally *tally_now; /* set by cmd_purge while it runs; one() adds to it */

static uint64_t total_bytes(const agc_report *r);

/* The bytes of a purged (or partly purged) session and what the progress line names; the
 * exit code of each id is counted by the caller. */
static void tally_add(const agc_report *r)
{
	purge_tally *t = tally_now;
	int code = agc_report_exit(r);

	if (!t)
		return;
	if (code == EXIT_OK || code == EXIT_LEFT)
		t->bytes += total_bytes(r);
	snprintf(t->last_status, sizeof(t->last_status), "%s", agc_status_name(agc_report_status(r)));
	snprintf(t->last_agent, sizeof(t->last_agent), "%s", agc_report_agent(r));
	snprintf(t->last_id, sizeof(t->last_id), "%s", agc_report_id(r));
}

static uint64_t total_bytes(const agc_report *r)
{
	uint64_t b = 0;
	size_t i;

	for (i = 0; i < agc_report_removed_count(r); i++)
		b += agc_report_removed(r, i)->bytes;
	return b;
}

/* Why a prune left a session alone, for people. */
static const char *skip_text(const char *why)
{
	if (why && strcmp(why, "live") == 0)
		return "it is in use";
	if (why && strcmp(why, "kept") == 0)
		return "it, or a session that would go with it, is on the keep list";
	if (why && strcmp(why, "recorded") == 0)
		return "its record is there again: it is no orphan";
	return "its last activity is within the settle time (or cannot be told)";
}

/* Print the report r of one id (as typed: id) and return its exit code. */
static int print_report(cli *c, const char *what, const char *id, unsigned flags, const agc_report *r)
{
	int code;
	char size[32];

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
		} else if (st == AGC_ST_SKIPPED) {
			print_head(c, r, "skipped", "\033[33m");
			if (!c->quiet) {
				printf("  left alone: %s\n", skip_text(agc_report_skip(r)));
				print_holders(c, r, stdout);
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
				if (s->layout) {
					printf("  layout   ");
					cli_text(stdout, s->layout, CLI_TEXT_LINE);
					putchar('\n');
				}
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
				for (size_t i = 0; !c->quiet && i < agc_report_fork_count(r); i++) {
					printf("  read by fork ");
					cli_text(stdout, agc_report_fork(r, i), CLI_TEXT_LINE);
					putchar('\n');
				}
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
	/* a purge's hints (what may still hold older copies, what it keeps) are said after it
	 * went, and by a dry run of it */
	if (code == EXIT_REFUSED || code == EXIT_LEFT ||
	    (strcmp(what, "purge") == 0 && code == EXIT_OK && agc_report_status(r) != AGC_ST_SKIPPED && !c->quiet))
		print_hints(r);
	return code;
}

int cli_purge_print(cli *c, const agc_report *r, unsigned flags)
{
	return print_report(c, "purge", agc_report_id(r), flags, r);
}

/* Print the report of one id and return its exit code. given: the report of a purge of many
 * (agc_purge_many), taken over; NULL: made here. */
static int one(cli *c, const char *what, const char *agent, const char *id, unsigned flags,
	       agc_report *given)
{
	agc_report *r = given;
	int rc = 0, code;

	if (given)
		rc = 0;
	else if (strcmp(what, "show") == 0)
		rc = agc_show(c->ctx, agent, id, &r);
	else if (strcmp(what, "in-use") == 0)
		rc = agc_in_use(c->ctx, agent, id, &r);
	else
		rc = agc_purge(c->ctx, agent, id, flags, &r);
	if (rc < 0 || !r) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	code = print_report(c, what, id, flags, r);
	tally_add(r);
	agc_report_free(r);
	return code;
}

/* True when id could be the start of an id (a UUID's hex and dashes in their places, or
 * OpenCode's ses_...) without being a whole one of the agent: what a prefix looks like. */
static bool prefix_shaped(const char *agent, const char *id)
{
	size_t i, n = strlen(id);
	bool uuid = n < UUID_CHARS, oc;

	for (i = 0; uuid && i < n; i++) {
		int ch = (unsigned char)id[i];

		if (i == 8 || i == 13 || i == 18 || i == 23)
			uuid = ch == '-';
		else
			uuid = (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
	}
	oc = strncmp(id, "ses_", n < 4 ? n : 4) == 0 && n > 0;
	if (strcmp(agent, "opencode") == 0)
		return oc;
	if (strcmp(agent, "auto") == 0)
		return uuid || oc;
	return uuid;
}

/* An id the agent's grammar refuses is not found (R1: exit 5, nothing touched); on stderr, say
 * whose grammar it is, that a path is not an id, or how a prefix is taken, so the user knows
 * what to type. */
static void id_hint(const char *cmd, const char *agent, const char *id)
{
	int self = strcmp(agent, "auto") == 0 ? -1 : agc_agent_find(agent);
	bool purge = strcmp(cmd, "purge") == 0 || strcmp(cmd, "stop") == 0;
	size_t i;

	/* (a prefix in a grammar that takes it whole, ses_..., is told apart by the look-up of
	 * show and in-use, or after the purge: prefix_hints) */
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
	if (prefix_shaped(agent, id)) {
		/* SPEC "Commands": destructive commands take whole ids only */
		if (purge)
			fprintf(stderr, "' is not a whole id: %s takes whole ids only, never a prefix; "
				"'agentgc ls --json' prints them whole\n", cmd);
		else if (strlen(id) < AGC_PREFIX_MIN)
			fprintf(stderr, "' is too short for an id prefix: give at least %d characters, or "
				"the whole id\n", AGC_PREFIX_MIN);
		else
			fprintf(stderr, "': no session id of %s starts with it; 'agentgc ls%s%s' lists them\n",
				self >= 0 ? agent : "any agent", self >= 0 ? " --agent " : "",
				self >= 0 ? agent : "");
		return;
	}
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
	{"with-forks", OPT_WITH_FORKS, 0, NULL, "also purge the forks that read the session's history\n"
						"(and their forks); without it such a session is refused\n"
						"(exit 4)"},
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
		*flags |= AGC_PURGE_WITH_FORKS;
		return 0;
	}
	return -1;
}

/* The sessions an id prefix may stand for: the first few, for the message, and how many. */
#define CANDIDATES_SHOWN 20

typedef struct candidates {
	struct {
		char *agent, *id, *title;
	} v[CANDIDATES_SHOWN];
	size_t n, shown;
	int exact; /* the index of the one whose id is the text typed, or -1 */
	const char *typed;
	bool oom;
} candidates;

static void candidate_free(candidates *k, size_t i)
{
	free(k->v[i].agent);
	free(k->v[i].id);
	free(k->v[i].title);
	memset(&k->v[i], 0, sizeof(k->v[i]));
}

static int add_candidate(size_t i, const agc_session_info *s, void *ud)
{
	candidates *k = ud;

	(void)i;
	/* the one typed whole is kept even past the candidates shown */
	if (strcmp(s->id, k->typed) == 0 && k->exact < 0 && k->shown == CANDIDATES_SHOWN) {
		candidate_free(k, CANDIDATES_SHOWN - 1);
		k->shown--;
	}
	if (strcmp(s->id, k->typed) == 0 && k->exact < 0)
		k->exact = (int)k->shown;
	if (k->shown < CANDIDATES_SHOWN) {
		k->v[k->shown].agent = strdup(s->agent);
		k->v[k->shown].id = strdup(s->id);
		k->v[k->shown].title = s->title ? strdup(s->title) : NULL;
		if (!k->v[k->shown].agent || !k->v[k->shown].id || (s->title && !k->v[k->shown].title))
			k->oom = true;
		k->shown++;
	}
	k->n++;
	return 0;
}

static void candidates_release(candidates *k)
{
	size_t i;

	for (i = 0; i < k->shown; i++)
		candidate_free(k, i);
	k->shown = 0;
}

/* SPEC "Commands": show and in-use take a unique prefix of at least 8 characters of an id.
 * A whole id in the form the agent makes them is taken as it is; otherwise the sessions
 * whose id starts with it are looked up (read-only): the one whose id is the text typed, or
 * the only one, stands for it; several are a usage error (2) that lists them; none leaves
 * the text as typed (not found, 5). Returns 0 with *agent and *id set (into k), or the exit
 * code. */
/* Whether id follows the grammar of agent (of any agent for auto). */
static bool grammar_ok(const char *agent, const char *id)
{
	int self = strcmp(agent, "auto") == 0 ? -1 : agc_agent_find(agent);

	if (self >= 0)
		return agc_agent_id_ok((size_t)self, id);
	for (size_t i = 0; i < agc_agent_count(); i++)
		if (agc_agent_id_ok(i, id))
			return true;
	return false;
}

static int resolve_id(cli *c, const char *what, candidates *k, const char **agent, const char **id)
{
	const char *typed = *id;
	int rc;
	size_t i;

	memset(k, 0, sizeof(*k));
	k->exact = -1;
	k->typed = typed;
	if (strlen(typed) < AGC_PREFIX_MIN || agc_id_whole(*agent, typed))
		return 0;
	/* An id that the grammar takes is the session of that id whenever one exists: a shorter
	 * OpenCode id (an import keeps any ses_ id) is never read as the prefix of a longer one,
	 * which would answer for another session. Only an id found nowhere is a prefix. */
	if (grammar_ok(*agent, typed)) {
		agc_report *r = NULL;

		if (agc_show(c->ctx, *agent, typed, &r) < 0 || !r) {
			agc_report_free(r);
			cli_err("%s", agc_error_last());
			return EXIT_ERR;
		}
		rc = agc_report_status(r) != AGC_ST_NOT_FOUND;
		agc_report_free(r);
		if (rc)
			return 0;
	}
	rc = agc_resolve_prefix(c->ctx, *agent, &typed, 1, add_candidate, k);
	if (rc < 0 || k->oom) {
		cli_err("cannot look up the sessions whose id starts with '%s': %s", typed,
			k->oom ? "out of memory" : agc_error_last());
		return EXIT_ERR;
	}
	if (k->exact >= 0 || k->n == 1) {
		i = k->exact >= 0 ? (size_t)k->exact : 0;
		*agent = k->v[i].agent;
		*id = k->v[i].id;
		return 0;
	}
	if (k->n == 0)
		return 0;
	cli_err("%s: id prefix '%s' is ambiguous: %zu sessions start with it", what, typed, k->n);
	for (i = 0; i < k->shown; i++) {
		/* ids and titles are agent data */
		fputs("  ", stderr);
		cli_pad(stderr, cli_text(stderr, k->v[i].agent, CLI_TEXT_LINE), 9);
		cli_text(stderr, k->v[i].id, CLI_TEXT_LINE);
		fputs("  ", stderr);
		cli_text(stderr, k->v[i].title ? k->v[i].title : "-", CLI_TEXT_LINE);
		fputc('\n', stderr);
	}
	if (k->n > k->shown)
		fprintf(stderr, "  ... and %zu more\n", k->n - k->shown);
	fputs("hint: give more characters of the id, or the whole id\n", stderr);
	return EXIT_USAGE;
}

/* show and in-use: AGENT ID, where ID may be a unique prefix. */
static int agent_id_cmd(cli *c, int argc, char **argv, const char *what)
{
	cli_args pos;
	candidates k;
	const char *agent, *id;
	int rc;

	rc = cli_parse(c, cli_cmd_find(what), argc, argv, NULL, NULL, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n != 2) {
		cli_args_release(&pos);
		return cli_usage(what, "%s takes AGENT|auto and one ID", what);
	}
	agent = pos.v[0];
	id = pos.v[1];
	memset(&k, 0, sizeof(k));
	if (!(rc = cli_check_agent(what, agent, true)) && !(rc = cli_ctx(c)) &&
	    !(rc = resolve_id(c, what, &k, &agent, &id))) {
		id_hint(what, agent, id);
		rc = one(c, what, agent, id, 0, NULL);
	}
	candidates_release(&k);
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

/* More ids than this show progress on a terminal. */
#define PROGRESS_AFTER 3

/* "[12/1000] purged claude 0b8e5a4c", redrawn in place on stderr (a terminal). */
static void progress(const purge_tally *t, size_t i, size_t n)
{
	fflush(stdout);
	fprintf(stderr, "\r[%zu/%zu] %s ", i, n, t->last_status);
	cli_text(stderr, t->last_agent, CLI_TEXT_LINE);
	fputc(' ', stderr);
	cli_text(stderr, t->last_id, CLI_TEXT_LINE);
	fputs("\033[K", stderr);
	fflush(stderr);
}

static void summary(const purge_tally *t)
{
	char size[32];

	cli_size(t->bytes, size, sizeof(size));
	fflush(stdout);
	if (t->dry_run)
		fprintf(stderr, "dry run: would purge %zu, would partly purge %zu, would refuse %zu, "
				"not found %zu, errors %zu; %s would be freed\n",
			t->purged, t->left, t->refused, t->notfound, t->errors, size);
	else
		fprintf(stderr, "purged %zu, partly purged %zu, refused %zu, not found %zu, errors %zu; "
				"%s freed\n",
			t->purged, t->left, t->refused, t->notfound, t->errors, size);
}

typedef struct prefix_seen {
	const char *const *typed;
	size_t *count;
} prefix_seen;

static int prefix_hint(size_t i, const agc_session_info *s, void *ud)
{
	prefix_seen *ps = ud;

	/* a few are enough to say what the text was */
	if (ps->count[i]++ >= 3)
		return 0;
	fputs("hint: purge takes whole ids only, never a prefix: '", stderr);
	cli_text(stderr, ps->typed[i], CLI_TEXT_LINE);
	fputs("' is the start of ", stderr);
	cli_text(stderr, s->agent, CLI_TEXT_LINE);
	fputc(' ', stderr);
	cli_text(stderr, s->id, CLI_TEXT_LINE);
	if (s->title) {
		fputs(" (", stderr);
		cli_text(stderr, s->title, CLI_TEXT_LINE);
		fputc(')', stderr);
	}
	fputs("; give the whole id\n", stderr);
	return 0;
}

/* SPEC "Commands": purge never takes a prefix. An id that was not found but is the start of
 * session ids is said, with the whole ids, so the user can give one (one listing for all). */
static void prefix_hints(cli *c, const char *agent, const char *const *ids, size_t n)
{
	prefix_seen ps = {ids, calloc(n ? n : 1, sizeof(size_t))};

	if (!n || !ps.count) {
		free(ps.count);
		return;
	}
	/* only a hint: a listing that fails says nothing more than the purge did */
	(void)agc_resolve_prefix(c->ctx, agent, ids, n, prefix_hint, &ps);
	free(ps.count);
}

#define PURGE_CHUNK 256 /* ids purged in one run of agc_purge_many */

int cmd_purge(cli *c, int argc, char **argv)
{
	agc_report *chunk[PURGE_CHUNK] = {0};
	unsigned flags = 0;
	cli_args pos;
	cli_ids in = {0};
	purge_tally t;
	const char *agent, **ids, **missed = NULL;
	size_t i, n, nmissed = 0;
	bool tty, shown = false;
	int rc, worst = EXIT_OK;

	rc = cli_parse(c, cli_cmd_find("purge"), argc, argv, purge_opt, &flags, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n < 2) {
		cli_args_release(&pos);
		return cli_usage("purge", "purge takes AGENT|auto and at least one ID (or '-')");
	}
	for (i = 1; i < pos.n; i++)
		if (strcmp(pos.v[i], "-") == 0 && pos.n != 2) {
			cli_args_release(&pos);
			return cli_usage("purge", "'-' reads the ids from standard input and comes alone");
		}
	rc = cli_check_agent("purge", pos.v[0], true);
	if (rc == 0)
		rc = cli_ctx(c);
	if (rc == 0 && strcmp(pos.v[1], "-") == 0)
		rc = cli_ids_read(stdin, "standard input", &in, &worst);
	if (rc) {
		cli_ids_release(&in);
		cli_args_release(&pos);
		return rc;
	}
	agent = pos.v[0];
	if (strcmp(pos.v[1], "-") == 0) {
		ids = (const char **)in.v;
		n = in.n;
		if (!n && !c->quiet)
			cli_err("no ids on standard input: nothing purged");
	} else {
		ids = (const char **)pos.v + 1;
		n = pos.n - 1;
	}
	missed = calloc(n ? n : 1, sizeof(*missed));
	if (!missed) {
		cli_ids_release(&in);
		cli_args_release(&pos);
		cli_err("out of memory");
		return EXIT_ERR;
	}
	/* Progress and the summary are for a person watching: on a terminal only, on stderr
	 * (never in the --json output on stdout). */
	tty = isatty(STDERR_FILENO);
	memset(&t, 0, sizeof(t));
	t.dry_run = flags & AGC_PURGE_DRY_RUN;
	tally_now = &t;
	for (i = 0; i < n; i++) {
		int code;

		/* One run for a chunk of ids (one process scan, each id re-checked before it goes);
		 * the reports are printed one by one, in order, as each chunk is done. */
		if (i % PURGE_CHUNK == 0) {
			size_t m = n - i < PURGE_CHUNK ? n - i : PURGE_CHUNK, k;

			for (k = 0; k < PURGE_CHUNK; k++) {
				agc_report_free(chunk[k]);
				chunk[k] = NULL;
			}
			if (agc_purge_many(c->ctx, agent, ids + i, m, flags, chunk) < 0) {
				cli_err("%s", agc_error_last());
				worst = cli_worse(worst, EXIT_ERR);
				break;
			}
		}

		if (shown) {
			/* what the purge prints starts on a clean line */
			fputs("\r\033[K", stderr);
			shown = false;
		}
		snprintf(t.last_status, sizeof(t.last_status), "error");
		snprintf(t.last_agent, sizeof(t.last_agent), "%s", agent);
		snprintf(t.last_id, sizeof(t.last_id), "%s", ids[i]);
		id_hint("purge", agent, ids[i]);
		code = one(c, "purge", agent, ids[i], flags, chunk[i % PURGE_CHUNK]);
		chunk[i % PURGE_CHUNK] = NULL;
		switch (code) {
		case EXIT_OK:
			t.purged++;
			break;
		case EXIT_LEFT:
			t.left++;
			break;
		case EXIT_REFUSED:
			t.refused++;
			break;
		case EXIT_NOTFOUND:
			t.notfound++;
			if (strlen(ids[i]) >= AGC_PREFIX_MIN && !agc_id_whole(agent, ids[i]))
				missed[nmissed++] = ids[i];
			break;
		default:
			t.errors++;
			break;
		}
		worst = cli_worse(worst, code);
		if (tty && n > PROGRESS_AFTER) {
			progress(&t, i + 1, n);
			shown = true;
		}
	}
	tally_now = NULL;
	for (i = 0; i < PURGE_CHUNK; i++)
		agc_report_free(chunk[i]);
	if (shown)
		fputs("\r\033[K", stderr);
	prefix_hints(c, agent, missed, nmissed);
	if (tty && n > 1)
		summary(&t);
	free(missed);
	cli_ids_release(&in);
	cli_args_release(&pos);
	return worst;
}

/* ---- stop -------------------------------------------------------------------------------- */

enum { OPT_STOP_DRY_RUN = 0x300, OPT_GRACE };

const cli_opt cli_stop_opts[] = {
	{"grace", OPT_GRACE, 1, "DUR", "from the first signal to SIGKILL (default 10s; at most\n"
				       "1h)"},
	{"dry-run", OPT_STOP_DRY_RUN, 0, NULL, "signal nothing: print the chain each holder would get"},
	{NULL, 0, 0, NULL, NULL},
};

int agc_duration_parse(const char *s, int64_t *ms);

static int stop_opt(cli *c, int key, const char *v, void *ud)
{
	agc_stop_opts *o = ud;

	(void)c;
	switch (key) {
	case OPT_STOP_DRY_RUN:
		o->flags |= AGC_PURGE_DRY_RUN;
		return 0;
	case OPT_GRACE:
		if (agc_duration_parse(v, &o->grace_ms) < 0 || o->grace_ms < 0 || o->grace_ms > AGC_STOP_GRACE_MAX_MS)
			return cli_usage("stop", "--grace takes a duration up to 1h (10s, 500ms, 2m), not '%s'", v);
		return 0;
	}
	return -1;
}

typedef struct stop_out {
	cli *c;
	json_t *chain;       /* --json */
	size_t stopped, spared;
	size_t spared_holders; /* of them, the gate's holders (not services that only serve it) */
	bool dry;
	int64_t grace_ms;
} stop_out;

static int stop_step(const agc_stop_proc *p, void *ud)
{
	stop_out *so = ud;
	size_t i;

	if (strcmp(p->action, "stop") == 0) {
		so->stopped++;
	} else {
		so->spared++;
		so->spared_holders += strcmp(p->why, "serves") != 0;
	}
	if (so->c->json) {
		json_t *o = json_object(), *sig = json_array();

		json_object_set_new(o, "pid", json_integer(p->pid));
		cli_json_set_str(o, "command", p->command);
		json_object_set_new(o, "why", json_string(p->why));
		json_object_set_new(o, "role", json_string(p->role));
		json_object_set_new(o, "action", json_string(p->action));
		for (i = 0; i < p->n_signals; i++)
			json_array_append_new(sig, json_string(p->signals[i]));
		json_object_set_new(o, "signals", sig);
		json_object_set_new(o, "result", json_string(p->result));
		if (p->hint)
			json_object_set_new(o, "hint", json_string(p->hint));
		json_array_append_new(so->chain, o);
		return 0;
	}
	if (p->pid)
		printf("  pid %d (%s): ", p->pid, p->why);
	else
		printf("  no process (%s): ", p->why);
	if (strcmp(p->action, "stop") == 0) {
		if (so->dry) {
			char g[32];

			snprintf(g, sizeof(g), "%lld.%03llds", (long long)(so->grace_ms / 1000),
				 (long long)(so->grace_ms % 1000));
			fputs("would get ", stdout);
			for (i = 0; i < p->n_signals; i++)
				printf("%s%s", i ? ", then " : "", p->signals[i]);
			printf(" (the last %s after the first)", g);
		} else {
			for (i = 0; i < p->n_signals; i++)
				printf("%s%s", i ? ", " : "", p->signals[i]);
			printf("%s%s", p->n_signals ? ": " : "", p->result);
		}
	} else {
		fputs("spared", stdout);
	}
	fputs(": ", stdout);
	cli_text(stdout, p->command ? p->command : "?", CLI_TEXT_LINE);
	fputc('\n', stdout);
	if (p->hint) {
		fprintf(stderr, "hint: pid %d: ", p->pid);
		cli_text(stderr, p->hint, 0);
		fputc('\n', stderr);
	}
	return 0;
}

int cmd_stop(cli *c, int argc, char **argv)
{
	agc_stop_opts o = AGC_STOP_OPTS_INIT;
	agc_report *r = NULL;
	stop_out so;
	cli_args pos;
	const char *agent, *id;
	agc_status st;
	int rc;

	rc = cli_parse(c, cli_cmd_find("stop"), argc, argv, stop_opt, &o, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n != 2) {
		cli_args_release(&pos);
		return cli_usage("stop", "stop takes AGENT|auto and one whole ID");
	}
	agent = pos.v[0];
	id = pos.v[1];
	if ((rc = cli_check_agent("stop", agent, true)) || (rc = cli_ctx(c))) {
		cli_args_release(&pos);
		return rc;
	}
	/* signals are destructive: a whole id only, as purge (SPEC "Commands") */
	id_hint("stop", agent, id);
	memset(&so, 0, sizeof(so));
	so.c = c;
	so.dry = o.flags & AGC_PURGE_DRY_RUN;
	so.grace_ms = o.grace_ms;
	so.chain = c->json ? json_array() : NULL;
	if (!c->json) {
		/* the id is as typed: neutralised like agent data */
		cli_text(stdout, agent, CLI_TEXT_LINE);
		fputc(' ', stdout);
		cli_text(stdout, id, CLI_TEXT_LINE);
		puts(so.dry ? ": dry run, nothing is signalled" : "");
	}
	if (agc_stop(c->ctx, agent, id, &o, stop_step, &so, &r) < 0 || !r) {
		json_decref(so.chain);
		cli_args_release(&pos);
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	st = agc_report_status(r);
	if (st == AGC_ST_NOT_FOUND)
		rc = EXIT_NOTFOUND;
	else if (st == AGC_ST_ERROR)
		rc = EXIT_ERR;
	else if (so.dry)
		/* what the stop would leave: a holder spared keeps the session in use */
		rc = st == AGC_ST_IN_USE && so.spared_holders ? EXIT_REFUSED : 0;
	else
		rc = st == AGC_ST_IN_USE ? EXIT_REFUSED : 0;
	if (c->json) {
		json_t *out = json_object();
		const char *status = st == AGC_ST_NOT_FOUND ? "not-found"
				     : st == AGC_ST_ERROR   ? "error"
				     : so.dry		    ? "dry-run"
				     : st == AGC_ST_IN_USE  ? "in-use"
				     : so.stopped	    ? "stopped"
							    : "free";

		cli_json_set_str(out, "agent", agc_report_agent(r));
		cli_json_set_str(out, "id", agc_report_id(r));
		json_object_set_new(out, "status", json_string(status));
		json_object_set_new(out, "chain", so.chain);
		json_object_set_new(out, "holders", cli_holders_json(r));
		if (st == AGC_ST_ERROR && agc_report_error(r))
			json_object_set_new(out, "error", json_string(agc_report_error(r)));
		cli_json_print(out);
	} else if (st == AGC_ST_NOT_FOUND) {
		cli_err("no artifact of that id: nothing to stop");
	} else if (st == AGC_ST_ERROR) {
		cli_err("%s", agc_report_error(r) ? agc_report_error(r) : "cannot check the session");
	} else if (so.dry) {
		if (!so.stopped && !so.spared)
			printf("free: no process holds it\n");
	} else if (st == AGC_ST_IN_USE) {
		printf("still in use: records preserved\n");
		print_holders(c, r, stdout);
	} else {
		printf(so.stopped ? "free: its processes ended\n" : "free: no process holds it\n");
	}
	agc_report_free(r);
	cli_args_release(&pos);
	return rc;
}
