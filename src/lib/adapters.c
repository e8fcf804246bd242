/* The adapter table (tmux cmd_table): adding an agent is one file and one line here. Only the
 * table lives in this file: a unit test that defines its own table (a fake agent) links without it. */
#include <stddef.h>

#include "core.h"

extern const agc_adapter agc_adapter_claude;
extern const agc_adapter agc_adapter_codex;
extern const agc_adapter agc_adapter_opencode;
extern const agc_adapter agc_adapter_cursor;

const agc_adapter *const agc_adapter_table[] = {
	&agc_adapter_claude,
	&agc_adapter_codex,
	&agc_adapter_opencode,
	&agc_adapter_cursor,
	NULL,
};
