#!/usr/bin/env bats
# SPEC "Output": with stdout and stderr into one file (2>&1, a log), every line is whole and in
# the order it was written: a hint follows the report it is about, never cuts a line.

load lib
load oc

@test "Output: 2>&1 into a file keeps lines whole and hints after the report" {
	oc_fixture --opencode 2 --seed 3521
	local s
	s=$(m_pick '.parent == null')
	"$AGENTGC" -v purge opencode "$s" >"$BATS_TEST_TMPDIR/log" 2>&1 || true
	run grep -c 'hint: ' "$BATS_TEST_TMPDIR/log"
	[ "$output" -ge 1 ]
	# every hint is a line of its own, after every line of the report
	local last_item first_hint
	last_item=$(grep -n '^  ' "$BATS_TEST_TMPDIR/log" | tail -n1 | cut -d: -f1)
	first_hint=$(grep -n 'hint: ' "$BATS_TEST_TMPDIR/log" | head -n1 | cut -d: -f1)
	! grep -q '.hint: ' "$BATS_TEST_TMPDIR/log"
	((first_hint > last_item))
}
