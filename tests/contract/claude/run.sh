#!/bin/sh
# Run the Claude Code contract test: install the pinned claude (once, into the download cache,
# see ../npm-install.sh and ../pins), then the bats file against AGENTGC. A registry that
# cannot be reached on the first run is a failure, said loudly, never a skip.
#   tests/contract/claude/run.sh AGENTGC
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || {
	echo "usage: $0 AGENTGC" >&2
	exit 2
}
agentgc=$1
if ! cl=$("$here/../npm-install.sh" claude); then
	echo "contract/claude: FAILED: claude could not be installed (see above)" >&2
	exit 1
fi
AGENTGC=$agentgc CLAUDE=$cl exec bats --tap "$here"
