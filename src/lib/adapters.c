/* The adapter table (tmux cmd_table): adding an agent is one file and one line here. */
#include <stddef.h>
#include <string.h>

#include "core.h"

extern const agc_adapter agc_adapter_claude;
extern const agc_adapter agc_adapter_opencode;

const agc_adapter *const agc_adapter_table[] = {
	&agc_adapter_claude,
	&agc_adapter_opencode,
	NULL,
};

/* Agents the public header names (AGC_AGENT_*) that have no adapter yet: their bits select
 * nothing, and are no error. An agent leaves this list when its adapter joins the table,
 * with the same bit. */
static const struct {
	const char *name;
	unsigned bit;
} planned[] = {
	{"codex", AGC_AGENT_CODEX},
	{"cursor", AGC_AGENT_CURSOR},
};

unsigned agc_agent_bits_known(void)
{
	unsigned m = 0;
	size_t i;

	for (i = 0; agc_adapter_table[i]; i++)
		m |= agc_adapter_table[i]->bit;
	for (i = 0; i < sizeof(planned) / sizeof(planned[0]); i++)
		m |= planned[i].bit;
	return m;
}

unsigned agc_agent_bit(const char *name)
{
	size_t i;

	if (!name)
		return 0;
	for (i = 0; agc_adapter_table[i]; i++)
		if (strcmp(agc_adapter_table[i]->name, name) == 0)
			return agc_adapter_table[i]->bit;
	for (i = 0; i < sizeof(planned) / sizeof(planned[0]); i++)
		if (strcmp(planned[i].name, name) == 0)
			return planned[i].bit;
	return 0;
}
