/* agentgc ls: sessions, newest first. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int agc_duration_parse(const char *s, int64_t *ms);

/* One session of the table, its strings copied (the listing's are valid during the call). */
typedef struct ls_row {
	char *agent, *id, *parent, *project, *title;
	bool orphan;
	bool parent_gone;
	int64_t updated_ms;
	uint64_t bytes;
	bool live;
	size_t depth; /* 0 for a root; under its parent at every depth (SPEC "Output") */
} ls_row;

typedef struct ls_state {
	cli *c;
	int64_t now;
	size_t n;
	bool ids;  /* --ids: whole ids only, one a line */
	bool wide; /* --wide: whole ids, nothing cut */
	struct {
		ls_row *v;
		size_t n, cap;
	} rows;
	bool oom;
} ls_state;

static void row_release(ls_row *r)
{
	free(r->agent);
	free(r->id);
	free(r->parent);
	free(r->project);
	free(r->title);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int print_session(const agc_session_info *s, void *ud)
{
	ls_state *st = ud;
	ls_row *r;

	st->n++;
	if (st->c->json) {
		cli_json_print(cli_session_json(s));
		return 0;
	}
	if (st->ids) {
		/* an id is agent data too: through cli_text (SPEC "Output") */
		cli_text(stdout, s->id, CLI_TEXT_LINE);
		putchar('\n');
		return 0;
	}
	/* the table needs every row first: short ids unique among those shown, column widths */
	if (st->rows.n == st->rows.cap) {
		size_t cap = st->rows.cap ? st->rows.cap * 2 : 64;
		ls_row *v = realloc(st->rows.v, cap * sizeof(*v));

		if (!v) {
			st->oom = true;
			return 1;
		}
		st->rows.v = v;
		st->rows.cap = cap;
	}
	r = &st->rows.v[st->rows.n];
	memset(r, 0, sizeof(*r));
	r->agent = dup_or_null(s->agent);
	r->id = dup_or_null(s->id);
	r->parent = dup_or_null(s->parent);
	r->project = dup_or_null(s->project);
	r->title = dup_or_null(s->title);
	r->updated_ms = s->updated_ms;
	r->bytes = s->bytes;
	r->live = s->live;
	r->orphan = s->orphan != 0;
	r->parent_gone = s->parent_gone != 0;
	st->rows.n++;
	if (!r->agent || !r->id || (s->parent && !r->parent) || (s->project && !r->project) ||
	    (s->title && !r->title)) {
		st->oom = true;
		return 1;
	}
	return 0;
}

/* Depths from the listing's order, where every child follows its parent (depth first): a row
 * is one deeper than the nearest row above it that is its parent; a child whose parent is not
 * listed (filtered out, past --limit) stands at depth 0. */
static int set_depths(ls_state *st)
{
	size_t *stack = malloc((st->rows.n + 1) * sizeof(*stack)), sp = 0, i;

	if (!stack)
		return -1;
	for (i = 0; i < st->rows.n; i++) {
		ls_row *r = &st->rows.v[i];

		while (sp && !(r->parent && strcmp(st->rows.v[stack[sp - 1]].id, r->parent) == 0 &&
			       strcmp(st->rows.v[stack[sp - 1]].agent, r->agent) == 0))
			sp--;
		r->depth = r->parent ? sp : 0;
		if (!r->parent)
			sp = 0;
		stack[sp++] = i;
	}
	free(stack);
	return 0;
}

enum { COL_AGENT, COL_ID, COL_UPDATED, COL_SIZE, COL_LIVE, COL_PROJECT, COL_TITLE, NCOLS };

static const char *const col_head[NCOLS] = {"AGENT", "ID", "UPDATED", "SIZE", "LIVE", "PROJECT",
					    "TITLE"};

/* Print the table: every cell is rendered (through cli_text or cli_path) before it is measured,
 * so widths count what reaches the terminal; project and title share what the fixed columns
 * leave of the width, the title cut at its end and the project at its start (the end of a
 * path says most). Returns 0 or -1 (out of memory). */
/* A project cut from its start to cols columns; a path shown quoted ($'...', see cli_path)
 * stays quoted: its inside is cut, never the quotes. malloc'd, NULL out of memory. */
static char *cut_project(const char *cell, size_t cols)
{
	size_t n = strlen(cell);
	char *inner, *cut, *out = NULL;

	if (cli_width(cell) <= cols || n < 3 || strncmp(cell, "$'", 2) != 0 || cell[n - 1] != '\'' ||
	    cols < 6)
		return cli_cut(cell, cols, true);
	if (!(inner = strndup(cell + 2, n - 3)))
		return NULL;
	cut = cli_cut(inner, cols - 3, true);
	free(inner);
	if (cut && asprintf(&out, "$'%s'", cut) < 0)
		out = NULL;
	free(cut);
	return out;
}

static int print_table(ls_state *st)
{
	cli *c = st->c;
	size_t n = st->rows.n, i, k, w[NCOLS] = {0}, fixed = 0, avail, wp, wt;
	size_t *idlen = NULL;
	const char **ids = NULL;
	char **cell = NULL;
	int width = st->wide ? 0 : cli_term_width(), rc = -1;

	if (!n)
		return 0;
	if (set_depths(st) < 0 || !(idlen = calloc(n, sizeof(*idlen))) ||
	    !(ids = calloc(n, sizeof(*ids))) || !(cell = calloc(n * NCOLS, sizeof(*cell))))
		goto out;
	for (i = 0; i < n; i++)
		ids[i] = st->rows.v[i].id;
	if (st->wide) {
		for (i = 0; i < n; i++)
			idlen[i] = strlen(ids[i]);
	} else if (cli_short_ids(ids, n, idlen) < 0) {
		goto out;
	}
	for (k = 0; k < NCOLS; k++)
		w[k] = strlen(col_head[k]);
	for (i = 0; i < n; i++) {
		const ls_row *r = &st->rows.v[i];
		char **cl = &cell[i * NCOLS], size[32], ago[32], *id, *t;

		if (!(id = strndup(r->id, idlen[i])))
			goto out;
		t = cli_text_str(id, CLI_TEXT_LINE);
		free(id);
		if (!t || asprintf(&cl[COL_ID], "%*s%s", (int)(2 * r->depth), "", t) < 0) {
			cl[COL_ID] = NULL;
			free(t);
			goto out;
		}
		free(t);
		cli_size(r->bytes, size, sizeof(size));
		cli_ago(st->now, r->updated_ms, ago, sizeof(ago));
		cl[COL_AGENT] = cli_text_str(r->agent, CLI_TEXT_LINE);
		cl[COL_UPDATED] = strdup(ago);
		cl[COL_SIZE] = strdup(size);
		cl[COL_LIVE] = strdup(r->live ? "yes" : "");
		cl[COL_PROJECT] = r->project ? cli_home_path(c, r->project) : strdup("-");
		/* titles are prompt text: kept on one line */
		if (r->orphan || r->parent_gone) {
			/* its record is gone, or its parent's: said where the title goes */
			char *t2 = cli_text_str(r->title ? r->title : "", CLI_TEXT_LINE);

			if (!t2 || asprintf(&cl[COL_TITLE], "%s%s%s",
					    r->orphan ? "(orphan: record gone)" : "(sub-session: parent gone)",
					    *t2 ? " " : "", t2) < 0)
				cl[COL_TITLE] = NULL;
			free(t2);
		} else {
			cl[COL_TITLE] = cli_text_str(r->title ? r->title : "", CLI_TEXT_LINE);
		}
		for (k = 0; k < NCOLS; k++) {
			if (!cl[k])
				goto out;
			if (cli_width(cl[k]) > w[k])
				w[k] = cli_width(cl[k]);
		}
	}
	for (k = 0; k < COL_PROJECT; k++)
		fixed += w[k] + 1;
	wp = w[COL_PROJECT];
	wt = w[COL_TITLE];
	if (width > 0 && fixed + wp + 1 + wt > (size_t)width) {
		/* Too wide: the project keeps up to two fifths of what is left (all it needs when
		 * the title is short), the title takes the rest; on a very narrow terminal each
		 * keeps a few columns and the line runs over. */
		avail = (size_t)width > fixed + 1 ? (size_t)width - fixed - 1 : 0;
		if (wp > avail * 2 / 5)
			wp = wt < avail * 3 / 5 ? (avail > wt ? avail - wt : 0) : avail * 2 / 5;
		if (wp < 8)
			wp = w[COL_PROJECT] < 8 ? w[COL_PROJECT] : 8;
		wt = avail > wp ? avail - wp : 0;
		if (wt < 8)
			wt = 8;
		if (wt < strlen(col_head[COL_TITLE]))
			wt = strlen(col_head[COL_TITLE]);
		/* paths cut at a component may come out narrower than their column: the title
		 * gets those columns back */
		if (wp < w[COL_PROJECT]) {
			size_t used = strlen(col_head[COL_PROJECT]);

			for (i = 0; i < n; i++) {
				char *p = cut_project(cell[i * NCOLS + COL_PROJECT], wp);

				if (!p)
					goto out;
				if (cli_width(p) > used)
					used = cli_width(p);
				free(p);
			}
			if (used < wp) {
				wt += wp - used;
				wp = used;
			}
		}
	}
	if (!c->quiet) {
		fputs(cli_c(c, "\033[1m"), stdout);
		for (k = 0; k < COL_TITLE; k++) {
			if (k == COL_SIZE)
				printf("%*s ", (int)w[k], col_head[k]);
			else
				printf("%-*s ", (int)(k == COL_PROJECT ? wp : w[k]), col_head[k]);
		}
		printf("%s%s\n", col_head[COL_TITLE], cli_c(c, "\033[0m"));
	}
	for (i = 0; i < n; i++) {
		char **cl = &cell[i * NCOLS], *proj, *title;

		proj = cut_project(cl[COL_PROJECT], wp);
		title = cli_cut(cl[COL_TITLE], wt, false);
		if (!proj || !title) {
			free(proj);
			free(title);
			goto out;
		}
		cli_pad_to(stdout, cl[COL_AGENT], w[COL_AGENT]);
		fputs(" ", stdout);
		fputs(cli_c(c, "\033[36m"), stdout);
		fputs(cl[COL_ID], stdout);
		fputs(cli_c(c, "\033[0m"), stdout);
		cli_pad(stdout, cli_width(cl[COL_ID]), w[COL_ID]);
		putchar(' ');
		cli_pad_to(stdout, cl[COL_UPDATED], w[COL_UPDATED]);
		printf(" %*s ", (int)w[COL_SIZE], cl[COL_SIZE]);
		if (*cl[COL_LIVE])
			printf("%s%s%s", cli_c(c, "\033[31m"), cl[COL_LIVE], cli_c(c, "\033[0m"));
		cli_pad(stdout, strlen(cl[COL_LIVE]), w[COL_LIVE]);
		putchar(' ');
		/* no trailing spaces: the project is padded only when a title follows */
		if (*title) {
			cli_pad_to(stdout, proj, wp);
			printf(" %s\n", title);
		} else {
			printf("%s\n", proj);
		}
		free(proj);
		free(title);
	}
	rc = 0;
out:
	if (cell)
		for (i = 0; i < n * NCOLS; i++)
			free(cell[i]);
	free(cell);
	free(ids);
	free(idlen);
	return rc;
}

/* What the listing could not read goes to stderr, in --json too (R2: never silent). */
static void print_warning(const char *msg, void *ud)
{
	(void)ud;
	cli_err("%s", msg);
}

/* SPEC "Output": a listing that finds nothing says so on stderr, and where it looked. A home
 * that does not exist is said even with -q: it is most likely a typo. The exit code stays 0:
 * nothing went wrong, there is nothing to list. */
static void say_nothing(const cli *c, bool filtered)
{
	const char *home = agc_ctx_home(c->ctx);
	struct stat st;

	if (stat(home, &st) != 0 && errno == ENOENT) {
		cli_err("the home '%s' does not exist: no sessions there (see 'agentgc roots')", home);
		return;
	}
	if (c->quiet)
		return;
	if (filtered)
		cli_err("no session matches; 'agentgc roots' shows where each agent's history is looked "
			"for");
	else
		cli_err("no sessions found; 'agentgc roots' shows where each agent's history is looked "
			"for");
}

enum { OPT_AGENT = 0x200, OPT_PROJECT, OPT_OLDER, OPT_NEWER, OPT_CHILDREN, OPT_SORT, OPT_LIMIT,
       OPT_WIDE, OPT_IDS, OPT_PROJECT_GONE, OPT_GREP, OPT_ORPHANS };

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
	{"orphans", OPT_ORPHANS, 0, NULL, "also what is left of sessions whose record is gone\n"
					  "(a transcript, a session row), marked orphan"},
	{"sort", OPT_SORT, 1, "KEY", "updated (default), created or size; newest or\n"
				     "largest first"},
	{"limit", OPT_LIMIT, 1, "N", "at most N sessions"},
	{"wide", OPT_WIDE, 0, NULL, "whole ids, and no column cut to fit the terminal"},
	{"ids", OPT_IDS, 0, NULL, "only the whole ids, one a line, for pipes (with\n"
				  "--children: the children's too)"},
	{NULL, 0, 0, NULL, NULL},
};

typedef struct ls_args {
	agc_ls_opts *o;
	bool wide, ids;
	bool filtered; /* an option that selects sessions was given */
} ls_args;

static int ls_opt(cli *c, int key, const char *v, void *ud)
{
	ls_args *a = ud;
	agc_ls_opts *o = a->o;

	(void)c;
	if (key != OPT_WIDE && key != OPT_IDS && key != OPT_CHILDREN && key != OPT_SORT && key != OPT_ORPHANS)
		a->filtered = true;
	switch (key) {
	case OPT_WIDE:
		a->wide = true;
		return 0;
	case OPT_IDS:
		a->ids = true;
		return 0;
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
	case OPT_ORPHANS:
		o->orphans = 1;
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
	agc_ls_opts o = AGC_LS_OPTS_INIT;
	ls_args a;
	cli_args pos;
	ls_state st;
	int rc;

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
	/* no option accepted and ignored: --ids and --wide shape the table, --json has none */
	if (a.ids && (c->json || a.wide))
		return cli_usage("ls", "--ids prints only whole ids: it goes with neither --json nor --wide");
	if (a.wide && c->json)
		return cli_usage("ls", "--wide is for the table: --json always has whole ids and paths");
	if ((rc = cli_ctx(c)))
		return rc;
	memset(&st, 0, sizeof(st));
	st.c = c;
	st.now = agc_ctx_now_ms(c->ctx);
	st.ids = a.ids;
	st.wide = a.wide;
	rc = agc_ls(c->ctx, &o, print_session, &st);
	if (rc < 0)
		cli_err("%s", agc_error_last());
	if (st.oom || print_table(&st) < 0) {
		cli_err("out of memory");
		rc = -1;
	}
	for (size_t i = 0; i < st.rows.n; i++)
		row_release(&st.rows.v[i]);
	free(st.rows.v);
	if (rc < 0)
		return EXIT_ERR;
	if (st.n == 0)
		say_nothing(c, a.filtered);
	return 0;
}
