/* Options of the command line, with GNU conventions (SPEC "Commands"): `--opt=VALUE` and
 * `--opt VALUE`, bundled short options, `--` ends them, and the global options accepted
 * after the command too. Parsing is getopt_long's; on top of it, long options must be
 * written whole (no abbreviation: `--with` must not become `--with-forks` on a command that
 * deletes), and every error names the option and what to do. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { KEY_HOME = 0x100, KEY_JSON, KEY_COLOR, KEY_VERSION };

static const cli_opt global_opts[] = {
	{"home", KEY_HOME, 1, "DIR", "look in DIR instead of $HOME (the agents' variables are\n"
				     "then ignored: see 'agentgc help roots')"},
	{"json", KEY_JSON, 0, NULL, "JSON Lines on stdout, one object per session or id"},
	{"color", KEY_COLOR, 1, "WHEN", "auto (default: on a terminal, not with TERM=dumb or\n"
					"NO_COLOR set), always or never"},
	{"quiet", 'q', 0, NULL, "say less: one line per session, errors and residuals"},
	{"verbose", 'v', 0, NULL, "say more: every item removed"},
	{"help", 'h', 0, NULL, "this help"},
	{"version", KEY_VERSION, 0, NULL, "the version of agentgc"},
	{NULL, 0, 0, NULL, NULL},
};

static size_t opts_count(const cli_opt *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

/* The options of cmd (NULL: none) followed by the global ones, as getopt_long wants them. */
static int build(const cli_cmd *cmd, bool globals_only, struct option **lo, char **so,
		 const cli_opt ***map)
{
	size_t nc = globals_only ? 0 : opts_count(cmd ? cmd->opts : NULL), ng = opts_count(global_opts);
	size_t i, k = 0, s = 0;

	*lo = calloc(nc + ng + 1, sizeof(**lo));
	*so = calloc(2 * (nc + ng) + 4, 1);
	*map = calloc(nc + ng + 1, sizeof(**map));
	if (!*lo || !*so || !*map) {
		free(*lo);
		free(*so);
		free(*map);
		return -1;
	}
	/* '+': stop at the command's name; '-': keep positional arguments in their place (also
	 * with POSIXLY_CORRECT set); ':': a missing value is told apart from an unknown option. */
	(*so)[s++] = globals_only ? '+' : '-';
	(*so)[s++] = ':';
	for (i = 0; i < nc + ng; i++) {
		const cli_opt *o = i < nc ? &cmd->opts[i] : &global_opts[i - nc];

		(*lo)[k].name = o->name;
		(*lo)[k].has_arg = o->arg ? required_argument : no_argument;
		(*lo)[k].flag = NULL;
		(*lo)[k].val = o->key;
		(*map)[k] = o;
		k++;
		if (o->key > 0 && o->key < 0x100) {
			(*so)[s++] = (char)o->key;
			if (o->arg)
				(*so)[s++] = ':';
		}
	}
	return 0;
}

static const cli_opt *by_key(const cli_opt *const *map, int key)
{
	size_t i;

	for (i = 0; map[i]; i++)
		if (map[i]->key == key)
			return map[i];
	return NULL;
}

static int unknown_option(const cli_cmd *cmd, const char *tok, const cli_opt *const *map)
{
	const char *names[64];
	const char *near = NULL;
	size_t n = 0;
	char word[128];

	if (strncmp(tok, "--", 2) == 0) {
		snprintf(word, sizeof(word), "%s", tok + 2);
		word[strcspn(word, "=")] = '\0';
		while (map[n] && n < 64) {
			names[n] = map[n]->name;
			n++;
		}
		near = cli_nearest(word, names, n);
	}
	if (near)
		return cli_usage(cmd ? cmd->name : NULL, "unknown option '%s' (did you mean '--%s'?)", tok,
				 near);
	return cli_usage(cmd ? cmd->name : NULL, "unknown option '%s'", tok);
}

/* The argument word that held the long option just returned (getopt_long takes any unambiguous
 * abbreviation; we take whole names only). */
static const char *long_token(int argc, char **argv, int optind_now, const char *arg)
{
	const char *prev = optind_now - 1 < argc ? argv[optind_now - 1] : NULL;

	if (arg && prev && arg == prev && optind_now >= 2)
		return argv[optind_now - 2]; /* "--name VALUE" */
	return prev;                         /* "--name" or "--name=VALUE" */
}

static bool whole_name(const char *tok, const char *name)
{
	size_t n = strlen(name);

	return tok && strncmp(tok, "--", 2) == 0 && strncmp(tok + 2, name, n) == 0 &&
	       (tok[2 + n] == '\0' || tok[2 + n] == '=');
}

static int global(cli *c, const cli_cmd *cmd, int key, const char *val)
{
	switch (key) {
	case KEY_HOME:
		if (!*val)
			return cli_usage(cmd ? cmd->name : NULL, "--home needs a directory");
		c->home = val;
		return 0;
	case KEY_JSON:
		c->json = true;
		return 0;
	case KEY_COLOR:
		if (strcmp(val, "auto") && strcmp(val, "always") && strcmp(val, "never"))
			return cli_usage(cmd ? cmd->name : NULL,
					 "--color takes auto, always or never, not '%s'", val);
		c->color_opt = val;
		return 0;
	case 'q':
		c->quiet = true;
		return 0;
	case 'v':
		c->verbose++;
		return 0;
	case 'h':
		if (cmd)
			cli_help(cmd);
		else
			cli_main_help(stdout);
		return CLI_PARSED_EXIT;
	case KEY_VERSION:
		printf("agentgc %s\n", agc_version());
		return CLI_PARSED_EXIT;
	}
	return -1;
}

int cli_parse(cli *c, const cli_cmd *cmd, int argc, char **argv, cli_opt_fn fn, void *ud,
	      cli_args *pos)
{
	struct option *lo = NULL;
	char *so = NULL;
	const cli_opt **map = NULL;
	bool globals_only = pos == NULL;
	int rc = 0, key, idx;

	if (pos)
		memset(pos, 0, sizeof(*pos));
	if (build(cmd, globals_only, &lo, &so, &map) < 0)
		return EXIT_ERR;
	if (pos && !(pos->v = calloc((size_t)argc + 1, sizeof(*pos->v)))) {
		rc = EXIT_ERR;
		goto out;
	}
	opterr = 0;
	optind = 0; /* glibc: start afresh (a second parse, after the command's name) */
	while (rc == 0) {
		const cli_opt *o;
		const char *tok;

		idx = -1;
		key = getopt_long(argc, argv, so, lo, &idx);
		if (key == -1)
			break;
		if (key == 1) { /* a positional argument, in its place */
			pos->v[pos->n++] = optarg;
			continue;
		}
		if (key == '?') {
			char s[3] = {'-', (char)optopt, '\0'};

			/* glibc: optopt is 0 for an unknown long option, the option's key for a known
			 * one given a value it does not take, the letter for an unknown short one */
			if (optopt == 0 || optopt >= 0x100 || by_key(map, optopt)) {
				tok = argv[optind - 1];
				o = optopt ? by_key(map, optopt) : NULL;
				if (o && strchr(tok, '='))
					rc = cli_usage(cmd ? cmd->name : NULL, "option '--%s' takes no value",
						       o->name);
				else
					rc = unknown_option(cmd, tok, map);
			} else {
				rc = unknown_option(cmd, s, map);
			}
			break;
		}
		if (key == ':') {
			const char *t = argv[optind - 1];

			o = optopt ? by_key(map, optopt) : NULL;
			if (!o)
				for (size_t i = 0; map[i]; i++)
					if (whole_name(t, map[i]->name))
						o = map[i];
			if (o && o->meta)
				rc = cli_usage(cmd ? cmd->name : NULL, "--%s needs a value (%s)", o->name,
					       o->meta);
			else
				rc = cli_usage(cmd ? cmd->name : NULL, "option '%s' needs a value", t);
			break;
		}
		o = idx >= 0 ? map[idx] : by_key(map, key);
		if (!o) {
			rc = cli_usage(cmd ? cmd->name : NULL, "unknown option");
			break;
		}
		if (idx >= 0) {
			tok = long_token(argc, argv, optind, optarg);
			if (!whole_name(tok, o->name)) {
				rc = cli_usage(cmd ? cmd->name : NULL,
					       "option '%s' is not a whole name: write '--%s'", tok ? tok : "",
					       o->name);
				break;
			}
		}
		if (o >= global_opts && o < global_opts + opts_count(global_opts))
			rc = global(c, cmd, key, optarg);
		else
			rc = fn ? fn(c, key, optarg, ud) : -1;
		if (rc == -1)
			rc = cli_usage(cmd ? cmd->name : NULL, "unknown option '--%s'", o->name);
	}
	if (rc == 0 && pos)
		while (optind < argc) /* after "--" */
			pos->v[pos->n++] = argv[optind++];
	if (rc == 0 && globals_only)
		c->next = optind;
	if (rc == 0 && !globals_only)
		rc = cli_color_resolve(c);
out:
	if (rc && pos) {
		free(pos->v);
		pos->v = NULL;
		pos->n = 0;
	}
	free(lo);
	free(so);
	free(map);
	return rc;
}

void cli_args_release(cli_args *a)
{
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

int cli_color_resolve(cli *c)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	if (c->color_opt && strcmp(c->color_opt, "always") == 0)
		c->color = true;
	else if (c->color_opt && strcmp(c->color_opt, "never") == 0)
		c->color = false;
	else
		/* SPEC "Output": a terminal whose TERM is not dumb, and NO_COLOR not set to a
		 * non-empty value */
		c->color = isatty(STDOUT_FILENO) && !(term && strcmp(term, "dumb") == 0) &&
			   !(nc && *nc);
	return 0;
}

/* One option's line(s) of help: "  -q, --quiet        text", continued lines aligned. */
static void opt_help(FILE *f, const cli_opt *o)
{
	char head[64];
	const char *t = o->help, *nl;
	int n;

	if (o->key > 0 && o->key < 0x100)
		n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->key, o->name, o->meta ? " " : "",
			     o->meta ? o->meta : "");
	else
		n = snprintf(head, sizeof(head), "      --%s%s%s", o->name, o->meta ? " " : "",
			     o->meta ? o->meta : "");
	fputs(head, f);
	if (n >= 24) {
		fputc('\n', f);
		n = 0;
	}
	for (;;) {
		fprintf(f, "%*s", 24 - n, "");
		nl = strchr(t, '\n');
		if (!nl) {
			fprintf(f, "%s\n", t);
			break;
		}
		fprintf(f, "%.*s\n", (int)(nl - t), t);
		t = nl + 1;
		n = 0;
	}
}

void cli_global_help(FILE *f)
{
	const cli_opt *o;

	fputs("global options (before or after the command):\n", f);
	for (o = global_opts; o->name; o++)
		opt_help(f, o);
}

void cli_help(const cli_cmd *cmd)
{
	const cli_opt *o;

	printf("usage: agentgc %s %s\n\n%s\n", cmd->name, cmd->args, cmd->about);
	if (cmd->opts && cmd->opts[0].name) {
		printf("\noptions:\n");
		for (o = cmd->opts; o->name; o++)
			opt_help(stdout, o);
	}
	if (cmd->examples)
		printf("\nexamples:\n%s", cmd->examples);
	putchar('\n');
	cli_global_help(stdout);
}
