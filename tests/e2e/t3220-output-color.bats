#!/usr/bin/env bats
# SPEC "Output": colour. --color always|never wins; otherwise colour only on a terminal whose
# TERM is not dumb, and never when NO_COLOR is set to a non-empty value.

load lib
load pty

ESC=$'\e'

setup() {
	agc_setup
	# lib.bash sets NO_COLOR=1 for every test: these tests set it themselves
	unset NO_COLOR
	export TERM=xterm-256color
	P=$(mk_project app)
	S=$(new_uuid)
	mk_transcript "$S" "$P" "fix the build" $((NOW - 3600))
}

has_colour() { [[ $output == *"$ESC["* ]]; }
# (a function: `! has_colour` would not fail a test under set -e)
no_colour() { [[ $output != *"$ESC["* ]]; }

@test "Output: colour on a terminal (TERM not dumb, NO_COLOR unset), at 80 and 200 columns, and the escapes take no width" {
	local cols
	for cols in 80 200; do
		pty_run "$cols" "$AGENTGC" ls
		[ "$status" -eq 0 ]
		has_colour
		[[ ${lines[0]} == "$ESC[1mAGENT"* ]]
		[[ $output == *"$ESC[36m${S:0:8}$ESC[0m"* ]]
		assert_fits "$cols"
	done
	# a report too
	pty_run 80 "$AGENTGC" purge --dry-run claude "$S"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "$ESC["*"dry-run$ESC[0m claude ${S:0:8} \"fix the"* ]]
}

@test "Output: no colour for TERM=dumb, nor with NO_COLOR set non-empty; an empty NO_COLOR does not count" {
	TERM=dumb pty_run 80 "$AGENTGC" ls
	[ "$status" -eq 0 ]
	no_colour
	[[ $output == *"${S:0:8}"* ]]
	NO_COLOR=1 pty_run 80 "$AGENTGC" ls
	no_colour
	[[ $output == *"${S:0:8}"* ]]
	NO_COLOR=0 pty_run 80 "$AGENTGC" purge --dry-run claude "$S"
	no_colour
	NO_COLOR= pty_run 80 "$AGENTGC" ls
	has_colour
	# TERM unset is not dumb
	pty_run 80 env -u TERM "$AGENTGC" ls
	has_colour
}

@test "Output: no colour when stdout is not a terminal" {
	run -0 --separate-stderr agc ls
	no_colour
	run -0 --separate-stderr agc purge --dry-run claude "$S"
	no_colour
	run -0 --separate-stderr env COLUMNS=80 "$AGENTGC" ls
	no_colour
}

@test "Output: --color always|never wins over the terminal, TERM and NO_COLOR, before or after the command" {
	pty_run 80 "$AGENTGC" --color never ls
	no_colour
	pty_run 80 "$AGENTGC" ls --color=never
	no_colour
	run -0 --separate-stderr agc --color always ls
	has_colour
	run -0 --separate-stderr env NO_COLOR=1 TERM=dumb "$AGENTGC" ls --color always
	has_colour
	[[ $output == *"$ESC[36m${S:0:8}$ESC[0m"* ]]
	NO_COLOR=1 TERM=dumb pty_run 80 "$AGENTGC" --color=always purge --dry-run claude "$S"
	has_colour
	# auto is the default's rule
	run -0 --separate-stderr agc --color auto ls
	no_colour
	TERM=dumb pty_run 80 "$AGENTGC" --color auto ls
	no_colour
	pty_run 80 "$AGENTGC" --color auto ls
	has_colour
	run -2 agc --color sometimes ls
	# --json is never coloured
	run -0 --separate-stderr agc --color always --json ls
	no_colour
	json_ok --arg s "$S" '.[0].id == $s'
}
