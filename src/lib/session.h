/* Plan helpers shared by the engine and the adapters. */
#ifndef AGC_SESSION_H
#define AGC_SESSION_H

#include "core.h"

/* The fd of a root of the plan, opened once (-1 when the root does not exist). Borrowed. */
int agc_plan_rootfd(agc_plan *p, size_t root);

#endif
