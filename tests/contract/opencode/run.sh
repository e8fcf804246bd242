#!/bin/sh
# Run the OpenCode contract test: install the real opencode (cached under BUILD_DIR), then
# the bats file against AGENTGC. A registry that cannot be reached is a failure, said loudly.
#   tests/contract/opencode/run.sh BUILD_DIR AGENTGC
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
agentgc=$2
if ! oc=$("$here/install.sh" "$build"); then
	echo "contract/opencode: FAILED: opencode could not be installed (see above)" >&2
	exit 1
fi
AGENTGC=$agentgc OPENCODE=$oc exec bats --tap "$here"
