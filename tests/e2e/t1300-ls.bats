#!/usr/bin/env bats
# SPEC "Output": ls lists root sessions newest first; child and sub-agent sessions appear only
# with --children, with parent set.

load lib

setup() {
	agc_setup
	P1=$(mk_project one)
	P2=$(mk_project two)
	A=$(new_uuid)
	B=$(new_uuid)
	D=$(new_uuid)
	# A newest, then B, then D (3 days old)
	mk_transcript "$A" "$P1" "newest session" $((NOW - 60))
	mk_transcript "$B" "$P2" "middle session" $((NOW - 3600))
	mk_transcript "$D" "$P1" "oldest session" $((NOW - 3 * 86400))
	# a sub-agent of B, newer than B's transcript: its activity is B's activity
	SUB=$(mk_subagent "$B" "$P2" $((NOW - 1800)))
}

@test "ls: root sessions, newest first, without sub-agents" {
	run -0 --separate-stderr agc --json ls
	json_ok --arg a "$A" --arg b "$B" --arg d "$D" 'map(.id) == [$a, $b, $d]'
	json_ok 'all(.parent == null)'
	json_ok --arg p1 "$P1" --arg a "$A" 'map(select(.id == $a)) | .[0].project == $p1 and .[0].title == "newest session"'
}

@test "ls: --children adds sub-agents with parent set" {
	run -0 --separate-stderr agc --json ls --children
	json_ok --arg b "$B" --arg sub "$SUB" --arg p2 "$P2" 'any(.id == $sub and .parent == $b and .project == $p2)'
	json_ok 'length == 4'
	json_ok --arg a "$A" --arg b "$B" --arg d "$D" 'map(select(.parent == null) | .id) == [$a, $b, $d]'
}

@test "ls: --children walks subagents/ recursively: a nested sub-agent is listed (formats §4)" {
	local d=$C/projects/$(pkey "$P2")/$B/subagents/$SUB nested=a00112233445566ff
	mkdir -p "$d"
	echo '{"isSidechain":true,"agentId":"'$nested'","type":"user","message":{"content":"x"}}' >"$d/agent-$nested.jsonl"
	run -0 --separate-stderr agc --json ls --children
	json_ok --arg b "$B" --arg sub "$SUB" --arg n "$nested" 'any(.id == $n and (.parent == $sub or .parent == $b))'
}

@test "ls: --limit 1 names the newest root session, never a sub-agent" {
	run -0 --separate-stderr agc --json ls --limit 1
	json_ok --arg a "$A" 'length == 1 and .[0].id == $a'
	run -0 --separate-stderr agc --json ls --project "$P2" --limit 1
	json_ok --arg b "$B" 'length == 1 and .[0].id == $b'
	json_ok 'all(.parent == null)'
}

@test "ls: --project keeps the sessions of that working directory" {
	run -0 --separate-stderr agc --json ls --project "$P1"
	json_ok --arg a "$A" --arg d "$D" 'map(.id) == [$a, $d]'
	run -0 --separate-stderr agc --json ls --project "$WORK/none"
	[ -z "$output" ]
}

@test "ls: --older-than and --newer-than use the last activity" {
	run -0 --separate-stderr agc --json ls --older-than 1d
	json_ok --arg d "$D" 'map(.id) == [$d]'
	run -0 --separate-stderr agc --json ls --newer-than 2h
	json_ok --arg b "$B" 'map(.id) | index($b) != null and length == 2'
}

@test "ls: --sort size puts the largest first" {
	local d=$C/projects/$(pkey "$P1")/$D
	mkdir -p "$d/tool-results"
	head -c 100000 /dev/zero | tr '\0' x >"$d/tool-results/big.txt"
	touch -d "@$((NOW - 3 * 86400))" "$d/tool-results/big.txt" "$d/tool-results" "$d"
	run -0 --separate-stderr agc --json ls --sort size
	json_ok --arg d "$D" '.[0].id == $d and .[0].bytes >= 100000'
}

@test "ls: updated is the newest activity in any artifact of the session (sub-agents included)" {
	run -0 --separate-stderr agc --json ls
	json_ok --arg b "$B" --arg u "$(date -u -d "@$((NOW - 1800))" +%Y-%m-%dT%H:%M:%S)" \
		'map(select(.id == $b)) | .[0].updated | startswith($u)'

	mkdir -p "$C/file-history/$D"
	echo x >"$C/file-history/$D/0123456789abcdef@v1"
	touch -d "@$((NOW - 5))" "$C/file-history/$D/0123456789abcdef@v1"
	run -0 --separate-stderr agc --json ls
	json_ok --arg d "$D" '.[0].id == $d'
}

@test "ls: a live session is marked live" {
	spawn sleep 1000
	mk_registry "$LAST_PID" "$B"
	run -0 --separate-stderr agc --json ls
	json_ok --arg b "$B" 'map(select(.id == $b)) | .[0].live == true'
	json_ok --arg a "$A" 'map(select(.id == $a)) | .[0].live == false'
}

@test "ls: an empty home lists nothing and exits 0" {
	rm -rf "$C"
	run -0 agc ls
	run -0 --separate-stderr agc --json ls
	[ -z "$output" ]
}

@test "ls: human output shows each session" {
	run -0 agc ls
	[[ $output == *"${A:0:8}"* && $output == *"${B:0:8}"* ]]
}
