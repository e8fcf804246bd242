/* agentgc prune: purge the sessions a selector names, each under the purge's rules. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int agc_duration_parse(const char *s, int64_t *ms);
int64_t agc_clock_mono_us(void);

enum { OPT_AGENT = 0x200, OPT_OLDER, OPT_KEEP, OPT_PROJECT, OPT_PROJECT_GONE, OPT_SETTLE, OPT_BUDGET,
       OPT_DRY_RUN, OPT_YES, OPT_SCRUB, OPT_ORPHANS };

const cli_opt cli_prune_opts[] = {
	{"agent", OPT_AGENT, 1, "A", "only this agent's sessions (repeatable)"},
	{"older-than", OPT_OLDER, 1, "DUR", "sessions whose last activity (the newest change\n"
					    "anywhere in their files) is older than DUR"},
	{"keep", OPT_KEEP, 1, "FILE", "sessions whose id is not in FILE ('-': standard\n"
				      "input), one id a line of any agent, '#' comments;\n"
				      "a session that would take a listed one with it\n"
				      "(its parent) stays too"},
	{"project", OPT_PROJECT, 1, "DIR", "sessions whose working directory is DIR or below\n"
					   "it; DIR need not exist any more"},
	{"project-gone", OPT_PROJECT_GONE, 0, NULL, "sessions whose working directory no longer\n"
						    "exists"},
	{"orphans", OPT_ORPHANS, 0, NULL, "only what is left of sessions whose record is gone\n"
					  "(as 'ls --orphans' lists them)"},
	{"settle", OPT_SETTLE, 1, "DUR", "never touch a session active within DUR (default\n"
					 "24h; 0s: no floor)"},
	{"budget", OPT_BUDGET, 1, "DUR", "stop after DUR (exit 75); the next run goes on\n"
					 "with the next agent"},
	{"scrub", OPT_SCRUB, 0, NULL, "then rebuild (VACUUM) each database rows went from,\n"
				      "once, at the end, as compact does"},
	{"dry-run", OPT_DRY_RUN, 0, NULL, "change nothing: list what would go"},
	{"yes", OPT_YES, 0, NULL, "do it without asking (needed off a terminal)"},
	{NULL, 0, 0, NULL, NULL},
};

typedef struct prune_args {
	agc_prune_opts o;
	const char *keep_file;
	bool yes, older_given, selector;
	int worst;
} prune_args;

static int dur(const char *opt, const char *v, int64_t *ms)
{
	if (agc_duration_parse(v, ms) < 0)
		return cli_usage("prune", "--%s takes a duration (90s, 15m, 24h, 30d), not '%s'", opt, v);
	return 0;
}

static int prune_opt(cli *c, int key, const char *v, void *ud)
{
	prune_args *a = ud;
	int rc;

	(void)c;
	switch (key) {
	case OPT_AGENT:
		return cli_agent_bit("prune", v, &a->o.agents);
	case OPT_OLDER:
		if ((rc = dur("older-than", v, &a->o.older_than_ms)))
			return rc;
		/* 0s: older than now, which is every session (the settle time still holds) */
		if (a->o.older_than_ms == 0)
			a->o.older_than_ms = 1;
		a->selector = true;
		return 0;
	case OPT_KEEP:
		if (!*v)
			return cli_usage("prune", "--keep needs a file (or '-' for standard input)");
		a->keep_file = v;
		a->selector = true;
		return 0;
	case OPT_PROJECT:
		if (!*v)
			return cli_usage("prune", "--project needs a directory");
		a->o.project = v;
		a->selector = true;
		return 0;
	case OPT_PROJECT_GONE:
		a->o.project_gone = 1;
		a->selector = true;
		return 0;
	case OPT_ORPHANS:
		a->o.orphans = 1;
		a->selector = true;
		return 0;
	case OPT_SETTLE:
		return dur("settle", v, &a->o.settle_ms);
	case OPT_BUDGET:
		return dur("budget", v, &a->o.budget_ms);
	case OPT_DRY_RUN:
		a->o.flags |= AGC_PURGE_DRY_RUN;
		return 0;
	case OPT_SCRUB:
		a->o.flags |= AGC_PURGE_SCRUB;
		return 0;
	case OPT_YES:
		a->yes = true;
		return 0;
	}
	return -1;
}

/* The keep list: every line an id of some agent; one that is none is said and left out. */
static int read_keep(prune_args *a, cli_ids *ids)
{
	FILE *f;
	char what[600];
	size_t i, j, k;
	int rc;

	if (strcmp(a->keep_file, "-") == 0) {
		f = stdin;
		snprintf(what, sizeof(what), "standard input");
	} else {
		/* a file, or a pipe (--keep <(list-chats)): the user's own list, read once */
		int fd = open(a->keep_file, O_RDONLY | O_CLOEXEC);
		struct stat st;

		snprintf(what, sizeof(what), "'%s'", a->keep_file);
		if (fd < 0 || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode) || !(f = fdopen(fd, "r"))) {
			cli_err("cannot read the keep list %s: %s", what,
				fd >= 0 && S_ISDIR(st.st_mode) ? "a directory" : strerror(errno));
			if (fd >= 0)
				close(fd);
			return EXIT_ERR;
		}
	}
	rc = cli_ids_read(f, what, ids, &a->worst);
	if (f != stdin)
		fclose(f);
	if (rc)
		return rc;
	for (i = k = 0; i < ids->n; i++) {
		bool any = false;

		for (j = 0; j < agc_agent_count() && !any; j++)
			any = agc_agent_id_ok(j, ids->v[i]);
		if (!any) {
			fprintf(stderr, "agentgc: keep list %s line %zu: '", what, ids->line[i]);
			cli_text(stderr, ids->v[i], CLI_TEXT_LINE);
			fputs("' is no agent's id: ignored\n", stderr);
			free(ids->v[i]);
			continue;
		}
		ids->line[k] = ids->line[i];
		ids->v[k++] = ids->v[i];
	}
	ids->n = k;
	return 0;
}

/* ---- output --------------------------------------------------------------------------------- */

typedef struct prune_out {
	cli *c;
	bool progress;         /* a terminal watches stderr (never with --json) */
	bool shown;            /* the progress line is on the screen */
	int64_t last_us;
	int worst;             /* of the sessions' reports */
	bool quiet_reports;    /* the confirmation's dry run: count, print nothing */
	struct {
		char *line;
		size_t n;
	} sample[5];
	size_t n_sample;
	json_t *scrub;         /* --scrub: each database, for the summary */
} prune_out;

static void clear_progress(prune_out *po)
{
	if (po->shown) {
		fflush(stdout);
		fputs("\r\033[K", stderr);
		po->shown = false;
	}
}

/* "scanned 1200, removed 300, 1.2 GiB freed, 3.4s", a few times a second, in place */
static void on_progress(const agc_prune_summary *s, void *ud)
{
	prune_out *po = ud;
	int64_t now = agc_clock_mono_us();
	char size[32];

	if (!po->progress || now - po->last_us < 200000)
		return;
	po->last_us = now;
	cli_size(s->bytes, size, sizeof(size));
	fflush(stdout);
	fprintf(stderr, "\rscanned %zu, %s %zu, %s %s, %.1fs\033[K", s->scanned,
		po->quiet_reports ? "would remove" : "removed", s->purged + s->partial, size,
		po->quiet_reports ? "would be freed" : "freed", (double)s->elapsed_ms / 1000.0);
	fflush(stderr);
	po->shown = true;
}

static void on_warn(const char *msg, void *ud)
{
	prune_out *po = ud;

	clear_progress(po);
	fputs("agentgc: warning: ", stderr);
	cli_text(stderr, msg, CLI_TEXT_LINE);
	fputc('\n', stderr);
}

/* The test hook: a command run once a batch was discovered, before its gate (a holder started
 * between the two phases must still be found). */
static void on_discovered(void *ud)
{
	const char *cmd = getenv("AGENTGC_TEST_PRUNE_DISCOVERED");

	(void)ud;
	if (cmd && *cmd && system(cmd) != 0)
		fprintf(stderr, "agentgc: the test hook failed\n");
}

/* --scrub: one database rebuilt (or left) at the end of the run */
static void on_scrubbed(const agc_compact_info *ci, void *ud)
{
	prune_out *po = ud;
	bool ok = strcmp(ci->status, "compacted") == 0 || strcmp(ci->status, "dry-run") == 0;
	char a[32], b[32];

	if (!ok)
		po->worst = cli_worse(po->worst, EXIT_LEFT);
	if (po->quiet_reports)
		return;
	if (po->c->json) {
		json_t *o = cli_compact_json(ci);

		if (!po->scrub)
			po->scrub = json_array();
		json_array_append_new(po->scrub, o);
		return;
	}
	clear_progress(po);
	printf("%s ", strcmp(ci->status, "compacted") == 0 ? "rebuilt" : strcmp(ci->status, "dry-run") == 0 ? "would rebuild" : "not rebuilt");
	cli_path(stdout, ci->path);
	if (strcmp(ci->status, "compacted") == 0) {
		cli_size(ci->bytes_before, a, sizeof(a));
		cli_size(ci->bytes_after, b, sizeof(b));
		printf(": %s -> %s", a, b);
	} else if (ci->reason) {
		printf(": ");
		cli_text(stdout, ci->reason, CLI_TEXT_LINE);
		printf(" (older copies of the deleted rows may remain; run 'agentgc compact' later)");
	}
	putchar('\n');
}

static int on_report(const agc_report *r, void *ud)
{
	prune_out *po = ud;
	cli *c = po->c;
	int code = agc_report_exit(r);
	agc_status st = agc_report_status(r);

	/* prune's own answers: a session gone meanwhile is what was wanted */
	if (st == AGC_ST_NOT_FOUND || (st == AGC_ST_DRY_RUN && code == EXIT_NOTFOUND))
		code = EXIT_OK;
	po->worst = cli_worse(po->worst, code);
	if (po->quiet_reports) {
		/* the confirmation shows a few of what would go */
		if (po->n_sample < 5 && st == AGC_ST_DRY_RUN && (code == EXIT_OK || code == EXIT_LEFT)) {
			const agc_session_info *s = agc_report_session(r);
			char size[32], ago[32];
			char *where = s && s->project ? cli_home_path(c, s->project) : NULL;
			char *title = s && s->title ? cli_text_str(s->title, CLI_TEXT_LINE) : NULL;
			char *id = cli_text_str(agc_report_id(r), CLI_TEXT_LINE);
			char *line = malloc(512);

			cli_size(s ? s->bytes : 0, size, sizeof(size));
			cli_ago(agc_ctx_now_ms(c->ctx), s ? s->updated_ms : 0, ago, sizeof(ago));
			if (line && id) {
				snprintf(line, 512, "  %s %.8s  %s  %s  %s  %s", agc_report_agent(r), id, ago, size,
					 where ? where : "-", title ? title : "");
				po->sample[po->n_sample++].line = line;
			} else {
				free(line);
			}
			free(where);
			free(title);
			free(id);
		}
		return 0;
	}
	clear_progress(po);
	if (c->json)
		cli_report_json(c, r, "purge");
	else
		(void)cli_purge_print(c, r, agc_report_status(r) == AGC_ST_DRY_RUN ? AGC_PURGE_DRY_RUN : 0);
	return 0;
}

static json_t *summary_json(const agc_prune_summary *s, bool dry)
{
	json_t *o = json_object(), *sk = json_object();

	json_object_set_new(o, "dry_run", json_boolean(dry));
	json_object_set_new(o, "scanned", json_integer((json_int_t)s->scanned));
	json_object_set_new(o, "candidates", json_integer((json_int_t)s->candidates));
	json_object_set_new(o, "purged", json_integer((json_int_t)s->purged));
	json_object_set_new(o, "partial", json_integer((json_int_t)s->partial));
	json_object_set_new(o, "refused", json_integer((json_int_t)s->refused));
	json_object_set_new(o, "not_found", json_integer((json_int_t)s->not_found));
	json_object_set_new(o, "errors", json_integer((json_int_t)s->errors));
	json_object_set_new(sk, "live", json_integer((json_int_t)s->skipped_live));
	json_object_set_new(sk, "unsettled", json_integer((json_int_t)s->skipped_unsettled));
	json_object_set_new(sk, "kept", json_integer((json_int_t)s->skipped_kept));
	json_object_set_new(sk, "recorded", json_integer((json_int_t)s->skipped_recorded));
	json_object_set_new(o, "skipped", sk);
	json_object_set_new(o, "remaining", json_integer((json_int_t)s->remaining));
	json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
	json_object_set_new(o, "budget_out", json_boolean(s->budget_out));
	json_object_set_new(o, "scrubbed", json_integer((json_int_t)s->scrubbed));
	json_object_set_new(o, "scrub_left", json_integer((json_int_t)s->scrub_left));
	if (s->next_agent)
		json_object_set_new(o, "next_agent", json_string(s->next_agent));
	json_object_set_new(o, "elapsed_ms", json_integer((json_int_t)s->elapsed_ms));
	return o;
}

static void print_summary(const cli *c, const agc_prune_summary *s, bool dry, json_t *scrub)
{
	char size[32];

	if (c->json) {
		json_t *o = json_object(), *sj = summary_json(s, dry);

		if (scrub)
			json_object_set(sj, "scrub", scrub);
		json_object_set_new(o, "summary", sj);
		cli_json_print(o);
		return;
	}
	cli_size(s->bytes, size, sizeof(size));
	printf("%s %zu session%s (%s%s)", dry ? "would prune" : "pruned", s->purged + s->partial,
	       s->purged + s->partial == 1 ? "" : "s", size, dry ? "" : " freed");
	if (s->partial)
		printf(", %zu with something left behind", s->partial);
	printf("; skipped %zu live, %zu unsettled, %zu kept", s->skipped_live, s->skipped_unsettled,
	       s->skipped_kept);
	if (s->skipped_recorded)
		printf(", %zu no longer orphans", s->skipped_recorded);
	if (s->refused)
		printf("; refused %zu", s->refused);
	if (s->errors)
		printf("; %zu error%s", s->errors, s->errors == 1 ? "" : "s");
	printf("; %zu scanned\n", s->scanned);
	if (s->budget_out)
		printf("the budget ran out: %zu candidate%s left; run prune again (it goes on with %s)\n",
		       s->remaining, s->remaining == 1 ? "" : "s", s->next_agent ? s->next_agent : "the next agent");
}

static int exit_of(const prune_out *po, const agc_prune_summary *s)
{
	if (s->errors)
		return EXIT_ERR;
	if (s->budget_out)
		return cli_worse(po->worst, EXIT_OK) == EXIT_ERR ? EXIT_ERR : EXIT_BUDGET;
	return po->worst;
}

/* On a terminal without --yes: what would go (count, bytes, a sample), then ask. 1 yes, 0 no,
 * or an exit code. */
static int confirm(cli *c, prune_args *a)
{
	agc_prune_opts o = a->o;
	agc_prune_summary s;
	prune_out po;
	char size[32], answer[16];
	size_t i;
	int yes;

	memset(&po, 0, sizeof(po));
	po.c = c;
	po.quiet_reports = true;
	po.progress = true;
	o.flags |= AGC_PURGE_DRY_RUN;
	o.budget_ms = -1;
	o.ud = &po;
	o.progress = on_progress;
	o.warn = on_warn;
	if (agc_prune(c->ctx, &o, on_report, &po, &s) < 0) {
		clear_progress(&po);
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	clear_progress(&po);
	if (s.purged + s.partial == 0) {
		for (i = 0; i < po.n_sample; i++)
			free(po.sample[i].line);
		print_summary(c, &s, true, NULL);
		return 0;
	}
	cli_size(s.bytes, size, sizeof(size));
	fprintf(stderr, "prune would remove %zu session%s (%s), for example:\n", s.purged + s.partial,
		s.purged + s.partial == 1 ? "" : "s", size);
	for (i = 0; i < po.n_sample; i++) {
		fprintf(stderr, "%s\n", po.sample[i].line);
		free(po.sample[i].line);
	}
	if (s.skipped_live + s.skipped_unsettled + s.skipped_kept)
		fprintf(stderr, "and leave %zu live, %zu unsettled and %zu kept alone\n", s.skipped_live,
			s.skipped_unsettled, s.skipped_kept);
	fprintf(stderr, "remove them? [y/N] ");
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		answer[0] = '\0';
	yes = strcmp(answer, "y\n") == 0 || strcmp(answer, "yes\n") == 0 || strcmp(answer, "Y\n") == 0;
	if (!yes)
		fprintf(stderr, "nothing changed\n");
	return yes;
}

int cmd_prune(cli *c, int argc, char **argv)
{
	prune_args a;
	agc_prune_summary s;
	cli_args pos;
	cli_ids keep = {0};
	prune_out po;
	bool dry, asked = false;
	int rc;

	memset(&a, 0, sizeof(a));
	a.o = (agc_prune_opts)AGC_PRUNE_OPTS_INIT;
	rc = cli_parse(c, cli_cmd_find("prune"), argc, argv, prune_opt, &a, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n) {
		rc = cli_usage("prune", "unexpected argument '%s' (prune selects by options; purge takes ids)",
			       pos.v[0]);
		cli_args_release(&pos);
		return rc;
	}
	cli_args_release(&pos);
	if (!a.selector)
		return cli_usage("prune", "prune needs a selector: --older-than, --keep, --project, "
					  "--project-gone or --orphans");
	dry = a.o.flags & AGC_PURGE_DRY_RUN;
	if (!a.yes && !dry) {
		/* asking needs a person at a terminal, and standard input to answer on */
		if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
			return cli_usage("prune", "not on a terminal: give --yes to prune, or --dry-run to see "
						  "what would go; nothing changed");
		if (a.keep_file && strcmp(a.keep_file, "-") == 0)
			return cli_usage("prune", "--keep - reads standard input, so prune cannot ask there: "
						  "give --yes, or --dry-run; nothing changed");
		asked = true;
	}
	if ((rc = cli_ctx(c)))
		return rc;
	if (a.keep_file) {
		if ((rc = read_keep(&a, &keep))) {
			cli_ids_release(&keep);
			return rc;
		}
		a.o.keep_given = 1;
		a.o.keep = (const char *const *)keep.v;
		a.o.n_keep = keep.n;
	}
	if (asked) {
		rc = confirm(c, &a);
		if (rc != 1) {
			cli_ids_release(&keep);
			return rc;
		}
	}
	memset(&po, 0, sizeof(po));
	po.c = c;
	po.worst = a.worst;
	po.progress = !c->json && isatty(STDERR_FILENO);
	a.o.ud = &po;
	a.o.progress = on_progress;
	a.o.warn = on_warn;
	a.o.scrubbed = on_scrubbed;
	if (getenv("AGENTGC_TEST_PRUNE_DISCOVERED"))
		a.o.discovered = on_discovered;
	rc = agc_prune(c->ctx, &a.o, on_report, &po, &s);
	clear_progress(&po);
	cli_ids_release(&keep);
	if (rc < 0) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	print_summary(c, &s, dry, po.scrub);
	json_decref(po.scrub);
	return exit_of(&po, &s);
}
