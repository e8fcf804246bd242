/* agentgc: the command table and the global options. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cmd_roots(cli *c, int argc, char **argv);
int cmd_ls(cli *c, int argc, char **argv);
int cmd_show(cli *c, int argc, char **argv);
int cmd_in_use(cli *c, int argc, char **argv);
int cmd_purge(cli *c, int argc, char **argv);
int cmd_prune(cli *c, int argc, char **argv);
int cmd_compact(cli *c, int argc, char **argv);
int cmd_du(cli *c, int argc, char **argv);
int cmd_ps(cli *c, int argc, char **argv);
int cmd_stop(cli *c, int argc, char **argv);
static int cmd_help(cli *c, int argc, char **argv);

extern const cli_opt cli_ls_opts[], cli_purge_opts[], cli_prune_opts[], cli_compact_opts[],
	cli_du_opts[], cli_ps_opts[], cli_stop_opts[];

const cli_cmd cli_cmds[] = {
	{"roots", cmd_roots, "where each agent's history is looked for, and whether it exists", "",
	 "Print the home, then every root of every agent: its path, the real path when a\n"
	 "link leads elsewhere, what set it (an agent's variable or the default) and\n"
	 "whether it exists and can be read. The agents' own variables (CLAUDE_CONFIG_DIR,\n"
	 "TMPDIR, XDG_DATA_HOME, OPENCODE_DB, ...) are followed only for the caller's own\n"
	 "home; with --home OTHER the defaults under OTHER are used.",
	 NULL,
	 "  agentgc roots\n"
	 "  agentgc --home /backup/home roots --json\n"},
	{"ls", cmd_ls, "list sessions, newest first", "[OPTIONS]",
	 "List the root sessions of every agent, newest first: agent, id, last activity,\n"
	 "size, whether it is live, project and title.",
	 cli_ls_opts,
	 "  agentgc ls --project ~/src/app --limit 5\n"
	 "  agentgc ls --agent claude --older-than 30d --sort size\n"},
	{"show", cmd_show, "a session's metadata, every artifact with its size, children, holders",
	 "AGENT|auto ID",
	 "Show one session: project, title, times, size, whether it is live, every\n"
	 "artifact a purge would remove (files, dirs, rows, lines), what it could not\n"
	 "remove, its children and the processes that hold it. Changes nothing. ID may\n"
	 "be a unique prefix of at least 8 characters (an ambiguous one: exit 2, the\n"
	 "candidates on stderr).",
	 NULL,
	 "  agentgc show claude 0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f21\n"
	 "  agentgc show auto 0b8e5a4c\n"
	 "  agentgc show auto ses_4f2a9c1e7b3d --json\n"},
	{"in-use", cmd_in_use, "whether a session is live: exit 0 free, 4 in use, 5 not found",
	 "AGENT|auto ID",
	 "Run the purge's live-session check alone: exit 0 when the session is free, 4\n"
	 "when a process holds it (each holder on stdout: pid, why, command), 5 when no\n"
	 "agent has an artifact of that id. Hints on how to look for yourself go to\n"
	 "stderr. ID may be a unique prefix of at least 8 characters, as for show.",
	 NULL,
	 "  agentgc in-use claude 0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f21 && echo free\n"},
	{"purge", cmd_purge, "remove sessions completely, or say what was left and why",
	 "AGENT|auto ID...|- [OPTIONS]",
	 "Remove every artifact of each session: transcripts, side files, sub-agents and\n"
	 "child sessions, rows in every database table, its lines in shared files. A live\n"
	 "session is refused and nothing changes (exit 4); what cannot be removed safely\n"
	 "is left and listed with its reason (exit 3). Ids are whole ids (no prefixes).\n"
	 "With several ids the exit code is the most severe: 0 < 5 < 3 < 4 < 1. '-' reads\n"
	 "the ids from standard input, one a line ('#' comments and blank lines\n"
	 "skipped); on a terminal, many ids show progress and a summary on stderr.",
	 cli_purge_opts,
	 "  agentgc purge --dry-run claude 0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f21\n"
	 "  agentgc purge opencode ses_4f2a9c1e7b3d ses_4f2a9c1e7b3e\n"
	 "  agentgc purge claude - <ids.txt\n"},
	{"prune", cmd_prune, "purge the sessions an age, a keep list or a project selects",
	 "SELECTOR... [OPTIONS]",
	 "Select root sessions (their children go with them) and purge each under purge's\n"
	 "rules: a live session is skipped and listed, and so is one active within the\n"
	 "settle time (--settle, default 24h: the newest change anywhere in its files\n"
	 "counts, and what cannot be looked at counts as now). Selectors combine (all\n"
	 "must hold): --older-than, --keep (the orchestrator's sweep: every session not\n"
	 "listed goes), --project, --project-gone, --orphans (what is left of sessions\n"
	 "whose record is gone, as 'ls --orphans' lists them). Without --yes it shows\n"
	 "what would go and asks on a terminal, and refuses elsewhere (exit 2). Exit 0\n"
	 "when every selected session went or was skipped on purpose, 3 when something\n"
	 "was left behind, 4 when a purge was refused (a busy database, a fork), 1 on an\n"
	 "error, 75 when --budget ran out first (run it again for the rest). --json\n"
	 "prints one line per session touched or skipped (\"reason\": live, unsettled,\n"
	 "kept, or recorded: an orphan whose record came back), then {\"summary\":{...}}.",
	 cli_prune_opts,
	 "  agentgc prune --older-than 30d --dry-run\n"
	 "  agentgc prune --agent claude --older-than 30d --yes --budget 2m --json\n"
	 "  my-orchestrator list-chats | agentgc prune --keep - --yes\n"},
	{"compact", cmd_compact, "rebuild the agents' shared databases: no deleted row left in them",
	 "[OPTIONS]",
	 "For each database the agents' sessions share (OpenCode's opencode.db, Codex's\n"
	 "*.sqlite, Cursor's ai-code-tracking.db), when no other process holds it or its\n"
	 "-wal or -shm: fold its WAL in and empty it (never waiting for a writer), then\n"
	 "rebuild it (VACUUM) when its file system has room for a copy, so that what was\n"
	 "deleted survives neither in its free pages nor in its WAL. A held database is\n"
	 "skipped with its holders (exit 4), one without room with the figures (exit 3).\n"
	 "--json prints one line per database.",
	 cli_compact_opts,
	 "  agentgc compact --dry-run\n"
	 "  agentgc compact --agent opencode\n"},
	{"du", cmd_du, "bytes used, and what compact and prune would free",
	 "[OPTIONS]",
	 "Per agent (or per project of each agent, --by project): the root sessions and\n"
	 "orphans (what is left of sessions whose record is gone), with their children,\n"
	 "as 'ls --orphans' sizes them (SIZE: the bytes of their files, rows and lines;\n"
	 "DISK: the blocks their files take), so the total is the sum of what\n"
	 "'ls --orphans' reports; BULK: what else the agent's dirs hold that no session\n"
	 "accounts for (logs, caches, snapshots, the databases' free pages); COMPACT:\n"
	 "what 'agentgc compact' would free (free pages and WALs); PRUNE>30D: what\n"
	 "'agentgc prune --older-than 30d' would free (sessions not live, last active\n"
	 "more than 30 days ago). Changes nothing. --json prints one line per row, then\n"
	 "{\"total\":{...}}.",
	 cli_du_opts,
	 "  agentgc du\n"
	 "  agentgc du --by project --agent claude\n"},
	{"ps", cmd_ps, "running agent processes, the sessions they hold, busy or idle", "[OPTIONS]",
	 "One row per running process of an agent (Claude Code, Codex, OpenCode, Cursor)\n"
	 "and per process of no agent that holds a session (a tool an agent started, an\n"
	 "editor with the id in its arguments): pid, agent, state, start, the sessions it\n"
	 "holds and how the in-use check learned it (registry, cmdline, environ,\n"
	 "open-file, lock, cwd), its current dir and command. A session shown as held is\n"
	 "one 'agentgc in-use' calls in use, and the other way round; a shared service\n"
	 "(OpenCode's 'serve --service', Codex's app-server daemon) shows the sessions it\n"
	 "serves. STATE is the agent's own status where it records one (Claude's\n"
	 "registry: busy, shell, idle, waiting), else busy when the process has a\n"
	 "descendant that is not one of the agent's own processes, else idle. A row with\n"
	 "pid '-' stands for sessions in use whose holder cannot be named. Changes\n"
	 "nothing. --json prints one line per process.",
	 cli_ps_opts,
	 "  agentgc ps\n"
	 "  agentgc ps --agent claude --json\n"
	 "  agentgc ps --watch\n"},
	{"stop", cmd_stop, "end the agent processes that hold a session, never anything else",
	 "AGENT|auto ID [OPTIONS]",
	 "The processes the in-use check finds holding the session that are the agent's\n"
	 "own get its graceful signal (Claude Code: SIGHUP, which removes its registry\n"
	 "entry; the others: SIGTERM), then SIGTERM, then SIGKILL once --grace has\n"
	 "passed; before every signal the process's start time is read again, and a pid\n"
	 "that is another process's now is left alone. A process that merely names the id\n"
	 "(an editor, a grep, a tool) and a shared service (Codex's app-server daemon,\n"
	 "OpenCode's 'serve --service') are never signalled: each is listed, with what\n"
	 "releases the session from it on stderr. Then the check runs again: exit 0 when\n"
	 "the session is free, 4 when it is still in use (records preserved), 5 when no\n"
	 "agent has that id. ID is a whole id. --dry-run prints the chain and signals\n"
	 "nothing (exit 4 when a holder would be spared).",
	 cli_stop_opts,
	 "  agentgc stop claude 0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f21 --grace 5s\n"
	 "  agentgc stop --dry-run opencode ses_4f2a9c1e7b3d\n"},
	{"help", cmd_help, "this list, or the help of one command", "[COMMAND]",
	 "Print the list of commands, or what COMMAND does and all its options.", NULL,
	 "  agentgc help purge\n"},
	{NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

/* Commands SPEC describes that are not built yet: named as such, never "unknown". */
static const char *const planned_cmds[] = {"export",
					   "secrets", "mcp"};

const cli_cmd *cli_cmd_find(const char *name)
{
	const cli_cmd *cmd;

	for (cmd = cli_cmds; cmd->name; cmd++)
		if (strcmp(cmd->name, name) == 0)
			return cmd;
	return NULL;
}

void cli_main_help(FILE *f)
{
	const cli_cmd *cmd;
	size_t i;

	fprintf(f, "usage: agentgc [global options] COMMAND [ARGS]\n\n"
		   "Find, check and safely remove the session history of AI coding agents.\n\n"
		   "commands:\n");
	for (cmd = cli_cmds; cmd->name; cmd++)
		fprintf(f, "  %-7s %s\n", cmd->name, cmd->summary);
	fprintf(f, "not built yet:");
	for (i = 0; i < sizeof(planned_cmds) / sizeof(*planned_cmds); i++)
		fprintf(f, " %s", planned_cmds[i]);
	fprintf(f, "\n\nAGENT is one of:");
	for (i = 0; i < agc_agent_count(); i++)
		fprintf(f, " %s", agc_agent_name(i));
	fprintf(f, "\n(or 'auto', which finds the agent from the id). DUR is a number with a unit:\n"
		   "90s, 15m, 24h, 30d.\n\n");
	cli_global_help(f);
	fprintf(f, "\nexit codes: 0 done, 1 error, 2 usage, 3 something left behind, 4 refused\n"
		   "(in use), 5 not found, 75 prune's budget ran out. 'agentgc help COMMAND'\n"
		   "describes a command.\n");
}

/* An unknown command: the nearest one, or that it is planned. Returns EXIT_USAGE. */
static int unknown_command(const char *name)
{
	const char *names[32];
	const char *near;
	size_t n = 0, i;

	for (i = 0; i < sizeof(planned_cmds) / sizeof(*planned_cmds); i++)
		if (strcmp(name, planned_cmds[i]) == 0)
			return cli_usage(NULL, "'%s' is not built yet: it is planned (see 'agentgc help' for "
					       "what works today)", name);
	for (const cli_cmd *cmd = cli_cmds; cmd->name && n < 32; cmd++)
		names[n++] = cmd->name;
	near = cli_nearest(name, names, n);
	if (near)
		return cli_usage(NULL, "unknown command '%s' (did you mean '%s'?)", name, near);
	return cli_usage(NULL, "unknown command '%s'", name);
}

static int cmd_help(cli *c, int argc, char **argv)
{
	cli_args pos;
	const cli_cmd *cmd;
	int rc;

	rc = cli_parse(c, cli_cmd_find("help"), argc, argv, NULL, NULL, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n == 0) {
		cli_args_release(&pos);
		cli_main_help(stdout);
		return 0;
	}
	if (pos.n > 1) {
		cli_args_release(&pos);
		return cli_usage("help", "help takes one command");
	}
	cmd = cli_cmd_find(pos.v[0]);
	if (!cmd) {
		rc = unknown_command(pos.v[0]);
		cli_args_release(&pos);
		return rc;
	}
	cli_args_release(&pos);
	cli_help(cmd);
	return 0;
}

/* The soft limit on open files raised to the hard one (at most 65,536): a run of many ids
 * keeps each plan's roots open until its turn, and past what the limit leaves the engine
 * purges one id at a time. Nothing here uses select(2), whose sets stop at 1,024. */
static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = want;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	struct stat so, se;
	cli c;
	const cli_cmd *cmd;
	int rc;

	raise_nofile();
	/* stdout and stderr into the same file or pipe (2>&1): each line in the order it was
	 * written, a hint after the line it is about, never inside it */
	if (fstat(STDOUT_FILENO, &so) == 0 && fstat(STDERR_FILENO, &se) == 0 && so.st_dev == se.st_dev &&
	    so.st_ino == se.st_ino && !isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&c, 0, sizeof(c));
	c.prog = "agentgc";
	rc = cli_parse(&c, NULL, argc, argv, NULL, NULL, NULL);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (c.next >= argc) {
		cli_main_help(stderr);
		return EXIT_USAGE;
	}
	/* Exact names only: destructive commands have no aliases and no prefix matching. */
	cmd = cli_cmd_find(argv[c.next]);
	if (!cmd)
		return unknown_command(argv[c.next]);
	rc = cmd->fn(&c, argc - c.next, argv + c.next);
	agc_ctx_free(c.ctx);
	if (fflush(stdout) != 0 && rc == 0)
		rc = EXIT_ERR;
	return rc;
}
