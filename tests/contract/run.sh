#!/bin/sh
# Run one agent's contract test: install the agent (once, into the download cache: OpenCode
# through opencode/install.sh, Claude Code and Codex as pinned in pins, through
# npm-install.sh), then AGENT/'s bats file against AGENTGC, with the agent's binary in
# OPENCODE, CLAUDE or CODEX. A registry that cannot be reached on the first run is a failure,
# said loudly, never a skip.
#   tests/contract/run.sh AGENT AGENTGC        (AGENT: opencode, claude, codex)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || {
	echo "usage: $0 opencode|claude|codex AGENTGC" >&2
	exit 2
}
agent=$1 agentgc=$2
case $agent in
opencode) var=OPENCODE ;;
claude) var=CLAUDE ;;
codex) var=CODEX ;;
*)
	echo "$0: no contract test for '$agent' (opencode, claude, codex)" >&2
	exit 2
	;;
esac
if [ "$agent" = opencode ]; then
	bin=$("$here/opencode/install.sh") || bin=
else
	bin=$("$here/npm-install.sh" "$agent") || bin=
fi
[ -n "$bin" ] || {
	echo "contract/$agent: FAILED: $agent could not be installed (see above)" >&2
	exit 1
}
export AGENTGC="$agentgc" "$var=$bin"
exec bats --tap "$here/$agent"
