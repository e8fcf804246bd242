/* Claude Code adapter internals exposed for unit tests. */
#ifndef AGC_ADAPTER_CLAUDE_H
#define AGC_ADAPTER_CLAUDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../proc.h"

typedef enum agc_claude_reg {
	AGC_CLAUDE_REG_OTHER = 0, /* does not name the session */
	AGC_CLAUDE_REG_LIVE,      /* names it and its process runs (or cannot be checked) */
	AGC_CLAUDE_REG_STALE,     /* names it, but the pid is dead or was reused */
	AGC_CLAUDE_REG_FOREIGN,   /* names it, written on another machine or in another pid
				     namespace (pidDomain differs): cannot be checked, live */
} agc_claude_reg;

/* Judge a registry file sessions/<pid>.json (text, len) for session id (lower case), per
 * SPEC R5: dead pid = stale whatever the file says; procStart compared with the kernel's
 * start time (plain decimal digits only); else startedAt (finite positive ms) within a
 * tolerance; anything that cannot be checked (a procStart with a sign, spaces or an exponent;
 * NaN, infinity, huge numbers, bools, strings; unparseable text naming the id) = live; another
 * pidDomain = foreign (live). */
/* Whether text, a procStart in macOS's form (ps's lstart in UTC), is the start of st to the
 * second: 1, 0, or -1 when that cannot be told (not that form; /proc, whose start is ticks). */
int agc_claude_lstart_same(const char *procroot, const agc_proc *st, const char *text);

agc_claude_reg agc_claude_registry_judge(const char *procroot, pid_t pid, const char *text,
					 size_t len, const char *id);

#define AGC_CLAUDE_AGENT_ID_LEN 17 /* "a" + 16 hex */

/* True when name is a sub-agent transcript, agent-<A>.jsonl with A = "a" + 16 lower-case hex
 * (formats/claude-code.md 6); A is copied to out. Any other name is no id (R1). */
bool agc_claude_subagent_file(const char *name, char out[AGC_CLAUDE_AGENT_ID_LEN + 1]);

/* The project key Claude derives from a cwd (formats/claude-code.md 1.1, steps 2-3) into out
 * (at least 256 bytes). */
void agc_claude_project_key(const char *cwd, char *out, size_t n);

/* The scratchpad dir name: first 8 bytes of sha256(lower-case id), big-endian, mod 10^12. */
void agc_claude_scratch_name(const char *id, char out[13]);

#endif
