#!/usr/bin/env bats
# SPEC "Commands": show and in-use accept a unique prefix of at least 8 characters of an id
# (as the id is shown: a UUID with its dashes, in any letter case; an OpenCode id as written,
# case-sensitive); an ambiguous prefix is a usage error (2) that lists the candidates (agent,
# whole id, title) on stderr; no match is not found (5). purge takes whole ids only: a prefix
# is never purged, and the message says to give the whole id.

load lib
load oc

setup() {
	oc_setup
	CWD=$(mk_project proj)
	# two sessions whose ids share their first 8 characters, and one apart
	T1=0b8e5a4c-1111-4abc-8def-0123456789ab
	T2=0b8e5a4c-2222-4abc-8def-0123456789ab
	U=$(new_uuid)
	while [[ ${U:0:8} == 0b8e5a4c ]]; do U=$(new_uuid); done
	mk_transcript "$T1" "$CWD" "first twin" $((NOW - 60))
	mk_transcript "$T2" "$CWD" "second twin" $((NOW - 120))
	mk_transcript "$U" "$CWD" "the only one" $((NOW - 180))
}

@test "show, in-use: a unique prefix of 8 characters stands for the whole id" {
	run -0 --separate-stderr agc show claude "${U:0:8}"
	[[ $output == "claude $U"* ]]
	[[ $output == *"the only one"* ]]
	run -0 --separate-stderr agc --json in-use claude "${U:0:8}"
	json_ok --arg u "$U" '.[0].id == $u and .[0].in_use == false'
	run -0 --separate-stderr agc --json show auto "${U:0:13}"
	json_ok --arg u "$U" '.[0].id == $u and .[0].agent == "claude"'
}

@test "show: a UUID prefix in any letter case, with its dashes as shown" {
	run -0 --separate-stderr agc --json show claude "$(upper "${T1:0:13}")"
	json_ok --arg t "$T1" '.[0].id == $t'
	run -0 --separate-stderr agc --json show claude 0B8E5A4C-2
	json_ok --arg t "$T2" '.[0].id == $t'
}

@test "show, in-use: an ambiguous prefix is exit 2 with every candidate (agent, whole id, title) on stderr" {
	run -2 --separate-stderr agc show claude 0b8e5a4c
	[ -z "$output" ]
	[[ $stderr == *"ambiguous"* && $stderr == *"2 sessions"* ]]
	[[ $stderr == *"claude   $T1  first twin"* ]]
	[[ $stderr == *"claude   $T2  second twin"* ]]
	[[ $stderr == *"hint: give more characters"* ]]
	run -2 --separate-stderr agc --json in-use auto 0B8E5A4C
	[ -z "$output" ]
	[[ $stderr == *"$T1"* && $stderr == *"$T2"* ]]
}

@test "show, in-use: a prefix nothing starts with is not found (5), and stderr says so" {
	run -5 --separate-stderr agc show claude deadbeef
	[[ $output == *"not found"* ]]
	[[ $stderr == *"no session id of claude starts with it"* ]]
	run -5 --separate-stderr agc --json in-use auto deadbeef-00
	json_ok '.[0].status == "not-found"'
}

@test "show: a prefix shorter than 8 characters is not taken (5) and the hint says how long one must be" {
	run -5 --separate-stderr agc show claude "${U:0:7}"
	[[ $stderr == *"too short for an id prefix"*"at least 8"* ]]
}

@test "OpenCode: a prefix of the ses_ id (8+ characters including ses_), case-sensitive; a child's too" {
	oc_fixture --seed 3311 --opencode 3 --opencode-children 1
	local P C pre
	P=$(m_pick '.parent == null and (.children | length) > 0')
	C=$(m_get "$P" '.children[0]')
	pre=${P:0:18}
	[[ $(m_sessions | jq -r .id | grep -c "^$pre") == 1 ]]
	run -0 --separate-stderr agc --json show opencode "$pre"
	json_ok --arg p "$P" '.[0].id == $p'
	run -0 --separate-stderr agc --json in-use auto "$pre"
	json_ok --arg p "$P" '.[0].id == $p and .[0].agent == "opencode"'
	run -0 --separate-stderr agc --json show opencode "${C:0:20}"
	json_ok --arg c "$C" '.[0].id == $c'
	# OpenCode ids are case-sensitive (R1)
	run -5 --separate-stderr agc --json show opencode "$(upper "$pre")"
	json_ok '.[0].status == "not-found"'
}

@test "OpenCode: an id typed whole wins over the longer ids it is the start of" {
	oc_fixture --seed 3312 --opencode 3
	local -a ids
	mapfile -t ids < <(m_sessions | jq -r 'select(.parent == null) | .id')
	oc_rename "${ids[0]}" ses_test0001
	oc_rename "${ids[1]}" ses_test00012
	run -0 --separate-stderr agc --json show opencode ses_test0001
	json_ok '.[0].id == "ses_test0001"'
	run -0 --separate-stderr agc --json show opencode ses_test00012
	json_ok '.[0].id == "ses_test00012"'
	run -2 --separate-stderr agc show opencode ses_test
	[[ $stderr == *ses_test0001* && $stderr == *ses_test00012* ]]
}

@test "purge never takes a prefix: exit 5, nothing changed, and the hint says to give the whole id" {
	snap before
	run -5 --separate-stderr agc purge claude "${U:0:8}"
	[[ $stderr == *"purge takes whole ids only"* ]]
	[[ $stderr == *"is the start of claude $U (the only one); give the whole id"* ]]
	assert_tree_unchanged before
	run -5 --separate-stderr agc --json purge auto "${U:0:13}"
	json_ok '.[0].status == "not-found"'
	[[ $stderr == *"purge takes whole ids only"* && $stderr == *"$U"* ]]
	assert_tree_unchanged before
	# the whole id purges
	run -0 --separate-stderr agc --json purge claude "$U"
	json_ok '.[0].status == "purged"'
}

@test "purge never takes an OpenCode prefix: exit 5, no row deleted, the whole id named" {
	oc_fixture --seed 3313 --opencode 2
	local P
	P=$(m_pick '.parent == null')
	oc_dump_save before
	run -5 --separate-stderr agc purge opencode "${P:0:16}"
	[[ $stderr == *"purge takes whole ids only"*"is the start of opencode $P"* ]]
	assert_dump_same before
}
