/* The agentgc command line: shared state and output helpers. */
#ifndef AGC_CLI_H
#define AGC_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agentgc/agentgc.h"

typedef struct cli {
	const char *home;
	bool json;
	bool color;
	const char *color_opt; /* --color as given, NULL when absent */
	bool quiet;
	int verbose;
	agc_ctx *ctx;
	const char *prog;
	int next;              /* after the global options: the index of the command's name */
} cli;

/* One option of a command: its long name, its short letter (or a key >= 0x200 for a long
 * option only), whether it takes a value, the value's name and its help ('\n' continues on
 * the next line, within 80 columns). */
typedef struct cli_opt {
	const char *name;
	int key;
	int arg;
	const char *meta;
	const char *help;
} cli_opt;

typedef struct cli_cmd {
	const char *name;
	int (*fn)(cli *c, int argc, char **argv);
	const char *summary;  /* one line, for 'agentgc help' */
	const char *args;     /* what follows the name in the usage line */
	const char *about;    /* what it does, a few lines */
	const cli_opt *opts;  /* NULL-terminated, or NULL */
	const char *examples; /* lines "  agentgc ...\n", or NULL */
} cli_cmd;

extern const cli_cmd cli_cmds[];
/* The command named name, or NULL. */
const cli_cmd *cli_cmd_find(const char *name);

/* Positional arguments of a command, in order. */
typedef struct cli_args {
	char **v;
	size_t n;
} cli_args;

/* Called for each of the command's own options with its key and value (NULL when it takes
 * none). Returns 0, a usage error from cli_usage, or -1 for a key it does not know. */
typedef int (*cli_opt_fn)(cli *c, int key, const char *val, void *ud);

/* cli_parse's answer when it printed the help or the version: exit 0. */
#define CLI_PARSED_EXIT 1000

/* Parse a command's argv (argv[0] its name): global options set c's fields, the command's own
 * go to fn, positional arguments (and everything after "--") to pos. With pos NULL, parse
 * only the global options before the command's name and set c->next. Returns 0, EXIT_USAGE
 * (said on stderr), EXIT_ERR, or CLI_PARSED_EXIT. */
int cli_parse(cli *c, const cli_cmd *cmd, int argc, char **argv, cli_opt_fn fn, void *ud,
	      cli_args *pos);
void cli_args_release(cli_args *a);
/* Decide c->color from --color, the terminal, TERM and NO_COLOR (SPEC "Output"). */
int cli_color_resolve(cli *c);
/* The candidate nearest to word (a typo, or the start of exactly one), or NULL. */
const char *cli_nearest(const char *word, const char *const *cands, size_t n);
/* Help texts. */
void cli_main_help(FILE *f);
void cli_global_help(FILE *f);

/* Exit codes (SPEC). */
enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_LEFT = 3, EXIT_REFUSED = 4,
       EXIT_NOTFOUND = 5, EXIT_BUDGET = 75 };

/* The more severe of two exit codes, in the order 0 < 5 < 3 < 4 < 1. */
int cli_worse(int a, int b);

/* Print "agentgc: <msg>" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error for cmd: message, then "see 'agentgc CMD --help'"; returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a command's help on stdout. */
void cli_help(const cli_cmd *cmd);

/* Open the library context (once). Returns 0 or EXIT_ERR. */
int cli_ctx(cli *c);

/* Human formats. */
void cli_size(uint64_t bytes, char *out, size_t n);     /* IEC: "1.2 MiB" */
void cli_ago(int64_t now_ms, int64_t t_ms, char *out, size_t n); /* "3d ago" */
/* How cli_text shows a string. */
enum cli_text_flags {
	CLI_TEXT_LINE = 1 << 0,   /* newline, tab and CR as a space: one table row, one line */
	CLI_TEXT_QUOTED = 1 << 1, /* inside $'...': quote and backslash escaped, every neutralised
				     character as its exact bytes (\xHH), so the text pastes back */
};
/* Print a string that comes from agent data (titles, projects, paths, commands, ids, messages
 * that embed them), the one way every human printer does (SPEC "Output"): control characters
 * (C0 with ESC, DEL, C1) and invalid UTF-8 bytes shown as \xHH, C1 and bidirectional
 * controls as \uHHHH, so no escape sequence or reordering reaches the terminal. Returns the
 * bytes written. */
size_t cli_text(FILE *f, const char *s, unsigned flags);
/* True when cli_text would print s unchanged. */
bool cli_text_safe(const char *s);
/* Spaces after a field that took printed bytes, up to width. */
void cli_pad(FILE *f, size_t printed, size_t width);
/* Print a path through cli_text, as $'...' when it holds spaces, quotes or anything cli_text
 * neutralises. */
void cli_path(FILE *f, const char *path);
/* Colour escape when colour is on, else "". */
const char *cli_c(const cli *c, const char *code);

/* Fitting the terminal (SPEC "Output"). The width tables fit: stdout's own (TIOCGWINSZ) on a
 * terminal, else $COLUMNS, else 0 when stdout is not a terminal: no limit, nothing is cut. */
int cli_term_width(void);
/* What cli_text (or cli_path) would print for s, as a malloc'd string; NULL when out of memory. */
char *cli_text_str(const char *s, unsigned flags);
char *cli_path_str(const char *s);
/* Display columns of a printed string (UTF-8): wcwidth in the user's LC_CTYPE (a wide CJK
 * character is 2, a combining one 0), 1 for every other character in the C locale. */
size_t cli_width(const char *s);
/* s cut to at most cols columns, with U+2026 where it was cut: at the end, or at the start when
 * left (a path). Never splits a character. malloc'd; NULL when out of memory. */
char *cli_cut(const char *s, size_t cols, bool left);
/* Print a printed string and pad it with spaces to width columns. */
void cli_pad_to(FILE *f, const char *s, size_t width);
/* Short ids, as git's: len[i] is the length of ids[i] to print, at least CLI_SHORT_ID (or the
 * whole id), and long enough that no other of the n ids starts the same. Returns 0 or -1. */
#define CLI_SHORT_ID 8
int cli_short_ids(const char *const *ids, size_t n, size_t *len);
/* A path for people: under the home (--home, else $HOME, or its real path), as "~" or "~/..."
 * (a whole leading component only), else as cli_path prints it. malloc'd; NULL when out of
 * memory. */
char *cli_home_path(const cli *c, const char *path);

/* An agent named on the command line: 0 for one that works ('auto' too when allowed), else a
 * usage error that says what to type instead (a planned agent, the nearest name). */
int cli_check_agent(const char *cmd, const char *agent, bool allow_auto);
/* Parse an agent list option value into a bit mask; returns 0 or EXIT_USAGE. */
int cli_agent_bit(const char *cmd, const char *name, unsigned *mask);

/* Ids read from a list, one a line ('#' comments and blank lines skipped, each trimmed); line[i]
 * is the line ids v[i] came from. */
typedef struct cli_ids {
	char **v;
	size_t *line;
	size_t n, cap;
} cli_ids;
/* Read every id of f before anything is done (what names it in messages: "standard input",
 * "'keep.txt'"). A line longer than 1024 bytes or holding a NUL is said, skipped, and makes
 * *worst EXIT_ERR. Returns 0, or EXIT_ERR when nothing may be done (a read error, more than
 * 2^20 ids, no memory). */
int cli_ids_read(FILE *f, const char *what, cli_ids *l, int *worst);
void cli_ids_release(cli_ids *l);

/* Print the report of a purge (prune: of each session it touched) as purge does, and return
 * its exit code; r stays the caller's. */
int cli_purge_print(cli *c, const agc_report *r, unsigned flags);

/* JSON output of a report (purge, show, in-use). */
void cli_report_json(const cli *c, const agc_report *r, const char *what);
void cli_iso(int64_t ms, char *out, size_t n);

#include <jansson.h>
/* A JSON string of agent data: invalid UTF-8 bytes as U+FFFD (never NULL but out of memory);
 * null for NULL. */
json_t *cli_json_str(const char *s);
/* Set key in o to cli_json_str(s), and when s is not valid UTF-8 also <key>_bytes to its exact
 * bytes in base64 (SPEC "Output": no key is ever dropped). Returns 0 or -1. */
int cli_json_set_str(json_t *o, const char *key, const char *s);
/* The JSON object of one database compact (or prune --scrub) went through. */
json_t *cli_compact_json(const agc_compact_info *ci);

json_t *cli_session_json(const agc_session_info *s);
/* Print one JSON line and release o. */
void cli_json_print(json_t *o);
void cli_json_fprint(FILE *f, json_t *o);
/* The holders of a report as purge and in-use print them. */
json_t *cli_holders_json(const agc_report *r);

#endif
