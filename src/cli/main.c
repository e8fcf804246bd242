/* agentgc: the command table and the global options. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cmd_roots(cli *c, int argc, char **argv);
int cmd_ls(cli *c, int argc, char **argv);
int cmd_show(cli *c, int argc, char **argv);
int cmd_in_use(cli *c, int argc, char **argv);
int cmd_purge(cli *c, int argc, char **argv);

const cli_cmd cli_cmds[] = {
	{"roots", cmd_roots, "the resolved roots of every agent, and whether they exist",
	 "roots"},
	{"ls", cmd_ls, "list sessions, newest first",
	 "ls [--agent A]... [--project DIR] [--older-than DUR] [--newer-than DUR]\n"
	 "   [--children] [--sort updated|created|size] [--limit N]"},
	{"show", cmd_show, "metadata, every artifact with its size, children, holders",
	 "show AGENT ID"},
	{"in-use", cmd_in_use, "exit 0 when free, 4 when in use (holders on stdout), 5 when unknown",
	 "in-use AGENT ID"},
	{"purge", cmd_purge, "remove sessions completely, or say what was left and why",
	 "purge AGENT|auto ID... [--dry-run] [--scrub]"},
	{NULL, NULL, NULL, NULL},
};

static void usage(FILE *f)
{
	const cli_cmd *cmd;

	fprintf(f, "usage: agentgc [--home DIR] [--json] [--color auto|always|never] [-q] [-v] COMMAND ...\n\n"
		   "Find, check and safely remove the session history of AI coding agents.\n\n"
		   "commands:\n");
	for (cmd = cli_cmds; cmd->name; cmd++)
		fprintf(f, "  %-8s %s\n", cmd->name, cmd->summary);
	fprintf(f, "\nAGENT is one of:");
	for (size_t i = 0; i < agc_agent_count(); i++)
		fprintf(f, " %s", agc_agent_name(i));
	fprintf(f, "\nDUR is a number with a unit: 90s, 15m, 24h, 30d.\n"
		   "exit codes: 0 done, 1 error, 2 usage, 3 something left behind, 4 refused (in use),\n"
		   "5 not found. 'agentgc COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
	cli c;
	const char *color = "auto";
	const cli_cmd *cmd;
	int i, rc;

	memset(&c, 0, sizeof(c));
	c.prog = "agentgc";
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--home") == 0) {
			if (++i >= argc)
				return cli_usage(NULL, "--home needs a directory");
			c.home = argv[i];
		} else if (strncmp(a, "--home=", 7) == 0) {
			c.home = a + 7;
		} else if (strcmp(a, "--json") == 0) {
			c.json = true;
		} else if (strcmp(a, "--color") == 0) {
			if (++i >= argc)
				return cli_usage(NULL, "--color needs auto, always or never");
			color = argv[i];
		} else if (strncmp(a, "--color=", 8) == 0) {
			color = a + 8;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			c.quiet = true;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			c.verbose++;
		} else if (cli_is_help(a)) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("agentgc %s\n", AGENTGC_VERSION);
			return 0;
		} else if (a[0] == '-') {
			return cli_usage(NULL, "unknown option '%s'", a);
		} else {
			break;
		}
	}
	if (c.home && !*c.home)
		return cli_usage(NULL, "--home needs a directory");
	if (strcmp(color, "always") == 0)
		c.color = true;
	else if (strcmp(color, "never") == 0)
		c.color = false;
	else if (strcmp(color, "auto") == 0)
		c.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	else
		return cli_usage(NULL, "--color takes auto, always or never, not '%s'", color);
	if (getenv("NO_COLOR") && *getenv("NO_COLOR"))
		c.color = false;
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* Exact names only: destructive commands have no aliases and no prefix matching. */
	for (cmd = cli_cmds; cmd->name; cmd++)
		if (strcmp(cmd->name, argv[i]) == 0)
			break;
	if (!cmd->name)
		return cli_usage(NULL, "unknown command '%s'", argv[i]);
	rc = cmd->fn(&c, argc - i, argv + i);
	agc_ctx_free(c.ctx);
	if (fflush(stdout) != 0 && rc == 0)
		rc = EXIT_ERR;
	return rc;
}
