#!/usr/bin/env bats
# SPEC "Commands" and "Exit codes": --help works on every command (exit 0); usage errors exit
# 2; destructive commands have no aliases and no prefix matching.

load lib

@test "usage: --help and -h exit 0, globally and on every command" {
	local c
	run -0 agc --help
	[[ $output == *usage* ]]
	run -0 agc -h
	for c in roots ls show in-use purge; do
		run -0 agc "$c" --help
		[[ $output == *"$c"* ]]
		run -0 agc "$c" -h
	done
	# --help after other arguments too
	run -0 agc purge claude "$(new_uuid)" --help
	run -0 agc show claude --help
}

@test "usage: --help on purge changes nothing even with real ids" {
	local s
	s=$(new_uuid)
	mk_transcript "$s" "$(mk_project p)"
	snap before
	run -0 agc purge claude "$s" --help
	assert_tree_unchanged before
}

@test "usage: unknown command exits 2" {
	run -2 agc bogus
	run -2 agc ''
	run -2 agc
}

@test "usage: unknown options exit 2" {
	run -2 agc --bogus roots
	run -2 agc ls --bogus
	run -2 agc purge claude "$(new_uuid)" --bogus
	run -2 agc purge --force claude "$(new_uuid)"
	run -2 agc roots --bogus
	run -2 agc in-use claude "$(new_uuid)" --bogus
}

@test "usage: missing or extra arguments exit 2" {
	run -2 agc purge
	run -2 agc purge claude
	run -2 agc show claude
	run -2 agc show claude "$(new_uuid)" "$(new_uuid)"
	run -2 agc in-use
	run -2 agc ls --limit
	run -2 agc ls --limit x
	run -2 agc ls --older-than 5
	run -2 agc ls --older-than 5y
	run -2 agc ls --sort name
	run -2 agc --home
	run -2 agc --color sometimes roots
}

@test "usage: an unknown agent exits 2 and changes nothing" {
	local s
	s=$(new_uuid)
	mk_transcript "$s" "$(mk_project p)"
	snap before
	run -2 agc purge claud "$s"
	run -2 agc purge CLAUDE "$s"
	run -2 agc purge '' "$s"
	assert_tree_unchanged before
}

@test "usage: destructive commands have no aliases and no prefix matching" {
	local s
	s=$(new_uuid)
	mk_transcript "$s" "$(mk_project p)"
	snap before
	run -2 agc pur claude "$s"
	run -2 agc purg claude "$s"
	run -2 agc rm claude "$s"
	run -2 agc delete claude "$s"
	run -2 agc PURGE claude "$s"
	run -2 agc purge claude "$s" --dry
	assert_tree_unchanged before
}

@test "usage: global options -q and -v are accepted" {
	local s
	s=$(new_uuid)
	mk_transcript "$s" "$(mk_project p)"
	run -0 agc -q ls
	run -0 agc -v purge claude "$s" --dry-run
	run -0 --separate-stderr agc -q purge claude "$s"
	# -q keeps one line: the session in human terms (SPEC "Output")
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "purged claude $s "* ]]
}
