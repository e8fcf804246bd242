#!/bin/sh
# Run the OpenCode contract test: install the real opencode (once, into the download cache
# $XDG_CACHE_HOME/agentgc, see install.sh), then the bats file against AGENTGC. A registry
# that cannot be reached on the first run is a failure, said loudly, never a skip.
#   tests/contract/opencode/run.sh AGENTGC
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || {
	echo "usage: $0 AGENTGC" >&2
	exit 2
}
agentgc=$1
if ! oc=$("$here/install.sh"); then
	echo "contract/opencode: FAILED: opencode could not be installed (see above)" >&2
	exit 1
fi
AGENTGC=$agentgc OPENCODE=$oc exec bats --tap "$here"
