#!/usr/bin/env bats
# SPEC "Output": a destructive report names the session in human terms first (title,
# project, age), then what went; -q keeps that one line; a dry run of a live session says it
# would refuse and why. A listing that finds nothing says so on stderr and where to look.

load lib
load pty

setup() {
	agc_setup
	APP=$HOME/src/app
	mkdir -p "$APP"
	S=$(new_uuid)
	mk_transcript "$S" "$APP" "fix the build" $((NOW - 3 * 86400))
	T=$C/projects/$(pkey "$APP")/$S.jsonl
}

@test "Output: a dry run names the session first (title, project as ~, age), then what would go" {
	run -0 --separate-stderr agc purge --dry-run claude "$S"
	[ "${lines[0]}" = "dry-run claude $S \"fix the build\" in ~/src/app, 3d ago" ]
	[[ ${lines[1]} == "  would remove 1 item, "* ]]
	[[ ${lines[2]} == *"$T" ]]
	[ -f "$T" ]
	# -q keeps that one line
	run -0 --separate-stderr agc -q purge --dry-run claude "$S"
	[ "$output" = "dry-run claude $S \"fix the build\" in ~/src/app, 3d ago" ]
}

@test "Output: a purge names the session first, then what went; -q keeps that one line" {
	local s2
	s2=$(new_uuid)
	mk_transcript "$s2" "$WORK/other" "second one" $((NOW - 7200))
	run -0 --separate-stderr agc purge claude "$S"
	[ "${lines[0]}" = "purged claude $S \"fix the build\" in ~/src/app, 3d ago" ]
	[[ ${lines[1]} == "  removed 1 item, "* ]]
	[ ! -e "$T" ]
	run -0 --separate-stderr agc -q purge claude "$s2"
	[ "$output" = "purged claude $s2 \"second one\" in $WORK/other, 2h ago" ]
	# --json is unchanged: whole ids and paths, no human line
	run -5 --separate-stderr agc --json purge claude "$S"
	json_ok --arg s "$S" '.[0].id == $s and .[0].status == "not-found"'
}

@test "Output: a dry run of a live session says it would refuse, and why (the holders); exit 4, nothing changed" {
	spawn_argv claude --resume "$S"
	run -4 --separate-stderr agc purge --dry-run claude "$S"
	[ "${lines[0]}" = "dry-run claude $S \"fix the build\" in ~/src/app, 3d ago" ]
	[ "${lines[1]}" = "  would refuse: the session is in use; nothing would change" ]
	[[ ${lines[2]} == "  held by pid $LAST_PID (cmdline): "*"--resume $S"* ]]
	[ -f "$T" ]
	# the purge itself: the same head, then that nothing changed
	run -4 --separate-stderr agc purge claude "$S"
	[ "${lines[0]}" = "in-use claude $S \"fix the build\" in ~/src/app, 3d ago" ]
	[ "${lines[1]}" = "  nothing changed: the session is in use" ]
	[[ $output == *"held by pid $LAST_PID"* ]]
	run -4 --separate-stderr agc -q purge --dry-run claude "$S"
	[ "$output" = "dry-run claude $S \"fix the build\" in ~/src/app, 3d ago" ]
	[ -f "$T" ]
}

@test "Output: on a terminal the head line fits: the title gives way, then the project" {
	local s2 long="refactor the whole configuration loader so that it reads every file lazily"
	s2=$(new_uuid)
	mkdir -p "$HOME/src/a-project-with-a-rather-long-name/and/a/deep/subdirectory"
	mk_transcript "$s2" "$HOME/src/a-project-with-a-rather-long-name/and/a/deep/subdirectory" "$long" $((NOW - 600))
	TERM=dumb pty_run 80 "$AGENTGC" purge --dry-run claude "$s2"
	[ "$status" -eq 0 ]
	# the id as ls shortens it, the title cut first, then the project from its start
	[[ ${lines[0]} == "dry-run claude ${s2:0:8} \"refactor"*"…\" in …"*"subdirectory, 10m ago" ]]
	local w
	w=$(widest <<<"${lines[0]}")
	((w <= 80))
	# at 200 columns it fits whole, but for the id
	TERM=dumb pty_run 200 "$AGENTGC" purge --dry-run claude "$s2"
	[ "${lines[0]}" = "dry-run claude ${s2:0:8} \"$long\" in ~/src/a-project-with-a-rather-long-name/and/a/deep/subdirectory, 10m ago" ]
	# -v: the whole id on a terminal too
	TERM=dumb pty_run 80 "$AGENTGC" -v purge --dry-run claude "$s2"
	[[ ${lines[0]} == "dry-run claude $s2 \"refactor"* ]]
	# not a terminal: nothing cut, the id whole
	run -0 --separate-stderr agc purge --dry-run claude "$s2"
	[ "${lines[0]}" = "dry-run claude $s2 \"$long\" in ~/src/a-project-with-a-rather-long-name/and/a/deep/subdirectory, 10m ago" ]
}

@test "Output: ls that finds nothing says so on stderr and points at 'agentgc roots'; exit 0" {
	rm -rf "$C"
	run -0 --separate-stderr agc ls
	[ -z "$output" ]
	[[ $stderr == "agentgc: no sessions found; 'agentgc roots' shows where each agent's history is looked for" ]]
	# --json and --ids: stdout stays empty, stderr says it
	run -0 --separate-stderr agc --json ls
	[ -z "$output" ]
	[[ $stderr == *"no sessions found"*"agentgc roots"* ]]
	run -0 --separate-stderr agc ls --ids
	[ -z "$output" ]
	[[ $stderr == *"no sessions found"* ]]
	# -q: no word of it
	run -0 --separate-stderr agc -q ls
	[ -z "$output" ] && [ -z "$stderr" ]
}

@test "Output: a selection that matches nothing says so (the sessions exist)" {
	run -0 --separate-stderr agc ls --project "$WORK/none"
	[ -z "$output" ]
	[[ $stderr == "agentgc: no session matches; 'agentgc roots' shows where each agent's history is looked for" ]]
	run -0 --separate-stderr agc ls --older-than 30d
	[[ $stderr == *"no session matches"* ]]
}

@test "Output: a --home that does not exist is said (even with -q); exit 0, like an empty listing" {
	run -0 --separate-stderr agc --home "$BATS_TEST_TMPDIR/no-such-home" ls
	[ -z "$output" ]
	[[ $stderr == "agentgc: the home '$BATS_TEST_TMPDIR/no-such-home' does not exist: no sessions there (see 'agentgc roots')" ]]
	run -0 --separate-stderr agc -q --home "$BATS_TEST_TMPDIR/no-such-home" ls --json
	[ -z "$output" ]
	[[ $stderr == *"does not exist"* ]]
}
