#!/usr/bin/env bats
# R5 in a prune of many sessions: a full scan of the process table looks at the next 256
# sessions to go, and a session past them is scanned when its turn comes, whatever the time
# since the last scan. With the fault shim's still clock no rescan by time happens, so a holder
# of a session past the first 256 is found by the turn rule alone.

load lib
load pr

@test "R5 prune: a holder of the 290th of 300 sessions is found with no rescan by time" {
	mk_home 300 0 0 0
	# the order prune takes them in is the order of its dry run
	run -0 --separate-stderr agc --json prune --agent claude --older-than 0s --settle 0s --dry-run
	local order held f
	order=$(jq -r 'select(.status == "dry-run") | .id' <<<"$output")
	[[ $(wc -l <<<"$order") == 300 ]]
	held=$(sed -n 290p <<<"$order")
	f=$(jq -r --arg id "$held" 'select(.id == $id) | .artifacts[]' "$MAN" | grep '\.jsonl$' | head -n1)
	[[ -f $f ]]
	spawn_holding "$f"
	AGC_MONO_STILL=1 run -0 --separate-stderr agc_faulty --json prune --agent claude --older-than 0s --settle 0s --yes
	json_ok --arg id "$held" --argjson pid "$LAST_PID" \
		'any(.[]; .id == $id and .status == "skipped" and .reason == "live" and any(.holders[]; .pid == $pid and .why == "open-file"))'
	json_ok '.[-1].summary.purged == 299 and .[-1].summary.skipped.live == 1'
	[[ -f $f ]]
	[[ $(agc ls --agent claude --json | jq -r .id) == "$held" ]]
}
