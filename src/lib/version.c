/* The library's version: the header's AGENTGC_VERSION, which the build also reads for
 * project(VERSION) (CMakeLists.txt), as it was when the library was built. */
#include "agentgc/agentgc.h"

const char *agc_version(void)
{
	return AGENTGC_VERSION;
}
