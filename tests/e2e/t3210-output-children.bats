#!/usr/bin/env bats
# SPEC "Output": with --children, child and sub-agent sessions are listed under their parent,
# indented at every depth, with ids that show, in-use and purge accept. SPEC "Relations": a
# Claude sub-agent lives in its parent's dir and goes with it: its id is accepted, in-use
# answers with the parent's gate (it runs in the parent's process), and purge refuses it alone,
# naming the parent, with nothing changed.

load lib
load oc
load pty

# The depth of every session of `ls --children --json` ($output), as "id depth" lines.
depths() {
	jq -r -s '(map({key: .id, value: .parent}) | from_entries) as $p
		| .[] | .id as $id | [$id, ([$id | recurse($p[.] // empty)] | length - 1)] | @tsv' <<<"$output"
}

@test "Output: OpenCode children under their parent, indented two spaces a level at every depth" {
	oc_fixture --seed 3210 --opencode 4 --opencode-children 4
	run -0 --separate-stderr agc --json ls --children
	local d max=0 id depth
	d=$(depths)
	while IFS=$'\t' read -r id depth; do
		((depth > max)) && max=$depth
	done <<<"$d"
	# the fixture has grandchildren at least
	((max >= 2))
	run -0 --separate-stderr agc ls --children --wide
	local prev_depth=-1 line
	for line in "${lines[@]:1}"; do
		id=$(awk '{print $2}' <<<"$line")
		depth=$(awk -F'\t' -v id="$id" '$1 == id {print $2}' <<<"$d")
		[[ -n $depth ]]
		# "opencode " then two spaces per level, then the id
		[[ $line == "opencode $(printf '%*s' $((2 * depth)) '')$id "* ]]
		# a child comes right under its parent or a sibling's subtree: one level deeper at most
		((depth <= prev_depth + 1))
		prev_depth=$depth
	done
	# the short ids indent the same way
	run -0 --separate-stderr agc ls --children
	local gc
	gc=$(awk -F'\t' '$2 == 2 {print $1; exit}' <<<"$d")
	[[ $output == *"opencode     ${gc:0:8}"* ]]
}

@test "Output: every id ls --children prints is accepted by show, in-use and purge --dry-run (OpenCode, any depth)" {
	oc_fixture --seed 3211 --opencode 3 --opencode-children 3
	run -0 --separate-stderr agc ls --children --ids
	local ids=("${lines[@]}") id n=0
	((${#ids[@]} > 3))
	for id in "${ids[@]}"; do
		run -0 --separate-stderr agc show opencode "$id"
		run -0 --separate-stderr agc in-use opencode "$id"
		run -0 --separate-stderr agc purge --dry-run opencode "$id"
		n=$((n + 1))
	done
	# and --wide prints those same ids
	run -0 --separate-stderr agc ls --children --wide
	for id in "${ids[@]}"; do
		[[ $output == *" $id "* ]]
	done
}

# A Claude session with a sub-agent and a nested one; sets S, P, A (the sub-agent), N (nested).
claude_family() {
	P=$(mk_project app)
	S=$(new_uuid)
	mk_transcript "$S" "$P" "fix the build" $((NOW - 3600))
	A=$(mk_subagent "$S" "$P" $((NOW - 3500)))
	local d=$C/projects/$(pkey "$P")/$S/subagents/nested
	N=a0123456789abcdef
	mkdir -p "$d"
	printf '{"isSidechain":true,"agentId":"%s","type":"user","message":{"content":"dig"},"sessionId":"%s","cwd":"%s"}\n' \
		"$N" "$S" "$P" >"$d/agent-$N.jsonl"
}

@test "Relations: a Claude sub-agent id from ls --children is accepted by show (not 'not found'), with its parent" {
	claude_family
	run -0 --separate-stderr agc ls --children --ids
	[[ $output == *"$A"* && $output == *"$N"* ]]
	run -0 --separate-stderr agc ls --children
	[[ ${lines[1]} == "claude $S"* || ${lines[1]} == "claude ${S:0:8} "* ]]
	[[ $output == *"claude   ${A:0:8}"* ]]
	local id
	for id in "$A" "$N"; do
		run -0 --separate-stderr agc show claude "$id"
		[[ ${lines[0]} == "claude $id" ]]
		[[ $output == *"parent   $S"* ]]
		[[ $output == *"agent-$id.jsonl"* ]]
		run -0 --separate-stderr agc --json show claude "$id"
		json_ok --arg s "$S" --arg p "$P" '.[0].parent == $s and .[0].project == $p and .[0].status == "found"'
		# auto finds the agent, and the id is taken in any letter case (R1)
		run -0 --separate-stderr agc show auto "$id"
		run -0 --separate-stderr agc show claude "$(upper "$id")"
		[[ ${lines[0]} == "claude $id" ]]
		run -0 --separate-stderr agc in-use claude "$id"
		[[ $output == "claude $id: free" ]]
	done
	# a sub-agent id nobody has is still not found (R1: no path built from it)
	run -5 --separate-stderr agc show claude a00000000000000aa
}

@test "R5: a Claude sub-agent is in use when its parent is: in-use exits 4 naming the parent's holder" {
	claude_family
	spawn_argv claude --resume "$S"
	run -4 --separate-stderr agc in-use claude "$A"
	[[ $output == *"in use"* && $output == *"held by pid $LAST_PID"* ]]
	run -4 --separate-stderr agc --json in-use claude "$N"
	json_ok --argjson pid "$LAST_PID" '.[0].in_use and any(.[0].holders[]; .pid == $pid)'
	run -0 --separate-stderr agc show claude "$A"
	[[ $output == *"live     yes"* ]]
}

@test "Relations: purge of a Claude sub-agent alone is refused (exit 4), names its parent, changes nothing; the parent's purge takes it" {
	claude_family
	snap before
	run -4 --separate-stderr agc purge claude "$A"
	[[ ${lines[0]} == "refused claude $A in "* ]]
	[[ $output == *"goes only with its parent"* ]]
	[[ $output == *"agent-$A.jsonl"*"(parent)"* ]]
	[[ $stderr == *"sub-agent of claude session '$S'"*"agentgc purge claude $S"* ]]
	run -4 --separate-stderr agc --json purge claude "$A"
	json_ok --arg s "$S" '.[0].status == "refused" and .[0].parent == $s and (.[0].residual | length > 0)
		and all(.[0].residual[]; .reason == "parent") and .[0].removed == []'
	# a dry run says the purge would refuse, and exits as it would
	run -4 --separate-stderr agc purge --dry-run claude "$N"
	[[ $output == *"would refuse: a sub-agent goes only with its parent session"* ]]
	assert_tree_unchanged before
	run -0 --separate-stderr agc purge claude "$S"
	[ ! -e "$C/projects/$(pkey "$P")/$S" ]
	run -5 --separate-stderr agc show claude "$A"
}

@test "R1: one sub-agent id under two sessions is refused with both named, never taken for one of them" {
	claude_family
	local s2
	s2=$(new_uuid)
	mk_transcript "$s2" "$P" "a copy"
	mkdir -p "$C/projects/$(pkey "$P")/$s2/subagents"
	cp "$C/projects/$(pkey "$P")/$S/subagents/agent-$A.jsonl" "$C/projects/$(pkey "$P")/$s2/subagents/"
	run -1 --separate-stderr agc show claude "$A"
	[[ $stderr == *"'$A' is in two sessions"*"$S"* && $stderr == *"$s2"* ]]
	run -1 --separate-stderr agc purge claude "$A"
	[ -f "$C/projects/$(pkey "$P")/$s2/subagents/agent-$A.jsonl" ]
}
