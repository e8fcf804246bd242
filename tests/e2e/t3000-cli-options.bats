#!/usr/bin/env bats
# SPEC "Commands": GNU option conventions (--opt=VALUE and --opt VALUE, bundled short options,
# -- ends options, global options after the command too), `agentgc help [COMMAND]`, and
# messages that say what to type instead: the nearest command, a planned command or agent,
# an id of another agent's grammar, a path where an id is expected.

load lib

# Two Claude sessions, one 40 days old; prints nothing, sets S_OLD and S_NEW.
two_sessions() {
	local p
	p=$(mk_project p)
	S_OLD=$(new_uuid)
	S_NEW=$(new_uuid)
	mk_transcript "$S_OLD" "$p"
	mk_transcript "$S_NEW" "$p"
	touch -d "@$((NOW - 40 * 86400))" "$C/projects/$(pkey "$p")/$S_OLD.jsonl"
}

@test "options: --opt=VALUE and --opt VALUE mean the same" {
	two_sessions
	run -0 --separate-stderr agc --json ls --older-than 30d
	local a=$output
	run -0 --separate-stderr agc --json ls --older-than=30d
	[ "$output" = "$a" ]
	[[ $output == *"$S_OLD"* && $output != *"$S_NEW"* ]]
	run -0 --separate-stderr agc --json ls --limit=1 --sort=updated
	[[ $output == *"$S_NEW"* && $output != *"$S_OLD"* ]]
	run -0 --separate-stderr agc --home="$HOME" --json ls --limit 1
	[[ $output == *"$S_NEW"* ]]
}

@test "options: global options after the command (ls --json, roots --home DIR)" {
	two_sessions
	run -0 --separate-stderr agc ls --json
	[ "${#lines[@]}" -eq 2 ]
	json_ok "${lines[0]}"
	[[ ${lines[0]} == *'"agent":"claude"'* ]]
	run -0 --separate-stderr agc --home "$HOME" roots
	local a=$output
	run -0 --separate-stderr agc roots --home "$HOME"
	[ "$output" = "$a" ]
	run -0 --separate-stderr agc purge claude "$S_OLD" --json --dry-run
	json_ok "$output"
	[[ $output == *'"status":"dry-run"'* ]]
}

@test "options: bundled short options (-qv) before and after the command" {
	two_sessions
	run -0 agc -qv purge --dry-run claude "$S_OLD"
	run -0 agc purge -qv --dry-run claude "$S_OLD"
	[ -f "$C/projects/$(pkey "$WORK/p")/$S_OLD.jsonl" ]
	run -2 agc -qx ls
	[[ $output == *"unknown option '-x'"* ]]
}

@test "options: -- ends options: what follows is an id, even when it looks like an option" {
	two_sessions
	# --dry-run after -- is an id (not found), so the purge of S_OLD is real
	run -5 agc purge claude "$S_OLD" -- --dry-run
	[ ! -e "$C/projects/$(pkey "$WORK/p")/$S_OLD.jsonl" ]
	[ -f "$C/projects/$(pkey "$WORK/p")/$S_NEW.jsonl" ]
}

@test "options: long options are whole names; an abbreviation changes nothing and names the option" {
	two_sessions
	snap before
	run -2 agc purge claude "$S_OLD" --dry
	[[ $output == *"'--dry'"*"--dry-run"* ]]
	run -2 agc purge claude "$S_OLD" --with
	run -2 agc ls --lim 1
	# a value given to an option that takes none is refused, not dropped
	run -2 agc purge claude "$S_OLD" --dry-run=no
	[[ $output == *"option '--dry-run' takes no value"* ]]
	run -2 agc --json=1 ls
	assert_tree_unchanged before
}

@test "options: a value that is missing, or a number that is not plain, is a usage error" {
	run -2 agc ls --limit
	[[ $output == *"--limit needs a value (N)"* ]]
	local v
	for v in -1 +3 " 3" 3x 0 ""; do
		run -2 agc ls --limit "$v"
		run -2 agc ls "--limit=$v"
	done
	run -2 agc --color=sometimes ls
	run -2 agc ls --home=
}

@test "help: 'agentgc help' lists the commands; 'help COMMAND' is COMMAND --help" {
	local c
	run -0 agc help
	for c in roots ls show in-use purge prune help; do
		[[ $output == *"  $c "* ]]
	done
	[[ $output == *"not built yet:"*export* ]]
	for c in roots ls show in-use purge prune help; do
		run -0 agc help "$c"
		local h=$output
		run -0 agc "$c" --help
		[ "$output" = "$h" ]
		[[ $output == "usage: agentgc $c"* ]]
	done
	run -2 agc help purg
	[[ $output == *"did you mean 'purge'?"* ]]
}

@test "help: every command's help has every option, examples and the global options, within 80 columns" {
	local c
	for c in "" roots ls show in-use purge help; do
		run -0 agc help $c
		awk -v c="$c" 'length($0) > 80 { print "help " c ": " length($0) " columns: " $0; bad = 1 } END { exit bad }' <<<"$output"
		[[ $output == *"global options"*"--home DIR"*"--json"*"--color WHEN"*"-q, --quiet"*"-v, --verbose"* ]]
	done
	for c in roots ls show in-use purge help; do
		run -0 agc help "$c"
		[[ $output == *"examples:"*"agentgc $c"* ]]
	done
	run -0 agc help ls
	for o in --agent --project --older-than --newer-than --children --sort --limit; do
		[[ $output == *"$o "* ]]
	done
	run -0 agc help purge
	for o in --dry-run --scrub --with-forks; do
		[[ $output == *"$o "* ]]
	done
}

@test "messages: an unknown command suggests the nearest; a planned one says it is not built yet" {
	run -2 --separate-stderr agc lss
	[[ $stderr == *"unknown command 'lss' (did you mean 'ls'?)"* ]]
	run -2 --separate-stderr agc prge claude "$(new_uuid)"
	[[ $stderr == *"did you mean 'purge'?"* ]]
	run -2 --separate-stderr agc export claude "$(new_uuid)" -o x.tar
	[[ $stderr == *"'export' is not built yet"* ]]
	run -2 --separate-stderr agc frobnicate
	[[ $stderr == *"unknown command 'frobnicate'"* && $stderr != *"did you mean"* ]]
}

@test "messages: every agent is built in; a misspelt one suggests the nearest" {
	run -5 --separate-stderr agc show cursor "$(new_uuid)"
	[[ $stderr != *"planned"* ]]
	run -2 --separate-stderr agc purge cursr "$(new_uuid)"
	[[ $stderr == *"did you mean 'cursor'?"* ]]
	run -2 --separate-stderr agc purge claud "$(new_uuid)"
	[[ $stderr == *"did you mean 'claude'?"* ]]
	run -2 --separate-stderr agc ls --agent opncode
	[[ $stderr == *"did you mean 'opencode'?"* ]]
}

@test "messages: an id of another agent's grammar is not found (R1) and says which agent it belongs to" {
	two_sessions
	snap before
	run -5 --separate-stderr agc show opencode "$S_OLD"
	[[ $stderr == *"'$S_OLD' is an id of claude, not of opencode: try 'agentgc show claude $S_OLD'"* ]]
	run -5 --separate-stderr agc purge claude ses_4f2a9c1e7b3d
	[[ $stderr == *"'ses_4f2a9c1e7b3d' is an id of opencode, not of claude"* ]]
	run -5 --separate-stderr agc in-use claude memory
	[[ $stderr == *"'memory' is not an id of claude (a UUID)"* ]]
	assert_tree_unchanged before
}

@test "messages: a path or file name given as an id says how to get the id" {
	two_sessions
	local f="$C/projects/$(pkey "$WORK/p")/$S_OLD.jsonl"
	snap before
	run -5 --separate-stderr agc purge claude "$f"
	[[ $stderr == *"looks like a path or a file name, not a session id"*"agentgc ls"* ]]
	run -5 --separate-stderr agc show claude "$S_OLD.jsonl"
	[[ $stderr == *"file name without .jsonl"* ]]
	assert_tree_unchanged before
}
