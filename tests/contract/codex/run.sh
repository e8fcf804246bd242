#!/bin/sh
# Run the Codex contract test: install the pinned codex (once, into the download cache, see
# ../npm-install.sh and ../pins), then the bats file against AGENTGC. A registry that cannot be
# reached on the first run is a failure, said loudly, never a skip.
#   tests/contract/codex/run.sh AGENTGC
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || {
	echo "usage: $0 AGENTGC" >&2
	exit 2
}
agentgc=$1
if ! cx=$("$here/../npm-install.sh" codex); then
	echo "contract/codex: FAILED: codex could not be installed (see above)" >&2
	exit 1
fi
AGENTGC=$agentgc CODEX=$cx exec bats --tap "$here"
