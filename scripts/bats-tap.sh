#!/bin/bash
# Runs a bats suite in TAP, as ctest shows it, and when a test fails prints every failing
# test again at the end, with the lines bats gave for it: a log cut to its head and tail
# (as CI shows a long one) then still names what failed and why.
#   scripts/bats-tap.sh BATS DIR|FILE...
set -u
bats=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/agc-bats.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
"$bats" --tap "$@" | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo
	echo "bats exit $rc; the failing tests:"
	awk '/^not ok /{f=1; print; next} /^ok /{f=0} f && /^#/{print}' "$log"
	grep -q '^not ok ' "$log" || echo "(no test failed: bats itself stopped; its last lines are above)"
fi
exit "$rc"
