#!/bin/sh
# isolated.sh LOCKFILE COMMAND [ARG...]: runs one part of the end-to-end suite so that it cannot
# see another part running at the same time (ctest -j).
#
# The parts cannot share a process table: their generated homes have the same session ids, and
# a purge in one part rightly counts the other part's agentgc, or its agent stand-ins, naming
# the id as a holder (exit 4). So, as root and where the kernel allows it, COMMAND runs in a pid
# namespace of its own with its own /proc (unshare --pid --fork --mount-proc): it sees its own
# processes only, and /proc/locks lists only the locks they hold. The command is pid 1 there,
# and reaps the orphans of the tests while it waits; when the run is stopped (ctest's timeout)
# every process of the namespace goes with it (--kill-child).
#
# Elsewhere (not root, no namespaces) the parts take turns: an exclusive lock on LOCKFILE,
# held while COMMAND runs. AGC_E2E_ISOLATION=lock forces the turns; =pidns fails when no
# namespace can be made.
set -eu
[ $# -ge 2 ] || {
	echo "usage: $0 LOCKFILE COMMAND [ARG...]" >&2
	exit 2
}
lock=$1
shift
mode=${AGC_E2E_ISOLATION:-auto}
case $mode in
auto | pidns | lock) ;;
*)
	echo "isolated.sh: AGC_E2E_ISOLATION must be auto, pidns or lock, not '$mode'" >&2
	exit 2
	;;
esac
if [ "$mode" != lock ] && [ "$(id -u)" = 0 ] &&
	unshare --pid --fork --mount-proc --kill-child true 2>/dev/null; then
	exec unshare --pid --fork --mount-proc --kill-child "$@"
fi
if [ "$mode" = pidns ]; then
	echo "isolated.sh: no pid namespace can be made here (root and unshare --pid --mount-proc are needed)" >&2
	exit 1
fi
exec flock "$lock" "$@"
