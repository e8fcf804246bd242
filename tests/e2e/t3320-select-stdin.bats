#!/usr/bin/env bats
# SPEC "Commands": `purge AGENT -` reads the ids from standard input, one a line ('#' comments
# and blank lines skipped, surrounding blanks trimmed); a line longer than the bound is an
# error that names its line and purges nothing for it. The exit code is the most severe of
# every id's. On a terminal (stderr), more than a few ids show progress, redrawn in place, and
# several end with a summary line; neither is printed elsewhere, and --json output on stdout
# gets nothing extra.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	IDS=()
	local i s
	for i in 1 2 3 4 5; do
		s=$(new_uuid)
		mk_transcript "$s" "$CWD" "session $i" $((NOW - i * 60))
		IDS+=("$s")
	done
	GONE_LIST=$BATS_TEST_TMPDIR/ids
}

transcript() { printf '%s' "$C/projects/$(pkey "$CWD")/$1.jsonl"; }

# A pseudo-terminal for agentgc (util-linux script): the command's stdout and stderr are the
# terminal, and what it printed comes back on script's stdout. Its stdin is /dev/null: with
# the caller's stdin closed (as CI runs the suite) script prints nothing of what the command
# wrote.
on_tty() {
	command -v script >/dev/null || skip "SKIPPED: script (util-linux) is not installed"
	script -qec "$1" /dev/null </dev/null
}

@test "purge claude -: ids from stdin, comments, blank lines, blanks and CRLF skipped, every one purged" {
	{
		echo "# sessions to go"
		echo
		printf '  %s  \n' "${IDS[0]}"
		printf '\t%s\r\n' "${IDS[1]}"
		printf '%s\n' "${IDS[2]}"
		echo "   # an indented comment"
		printf '%s' "${IDS[3]}" # no newline at the end
	} >"$GONE_LIST"
	run -0 --separate-stderr agc --json purge claude - <"$GONE_LIST"
	json_ok 'length == 4 and all(.status == "purged")'
	json_ok --arg a "${IDS[0]}" --arg d "${IDS[3]}" '.[0].id == $a and .[3].id == $d'
	assert_gone "$(transcript "${IDS[0]}")" "$(transcript "${IDS[1]}")" "$(transcript "${IDS[2]}")" \
		"$(transcript "${IDS[3]}")"
	assert_exists "$(transcript "${IDS[4]}")"
	# not a terminal: no progress, no summary
	[[ $stderr != *"["*"/4]"* && $stderr != *"purged 4"* ]]
}

@test "purge -: a line over the bound is an error naming its line, nothing done for it, the rest purged (exit 1)" {
	{
		printf '%s\n' "${IDS[0]}"
		# a whole id followed by padding past 1024 bytes: never cut down to the id
		printf '%s%*s\n' "${IDS[1]}" 2000 x
		printf '%s\n' "${IDS[2]}"
	} >"$GONE_LIST"
	run -1 --separate-stderr agc --json purge claude - <"$GONE_LIST"
	[[ $stderr == *"standard input line 2 is longer than 1024 bytes: skipped"* ]]
	json_ok 'length == 2 and all(.status == "purged")'
	assert_gone "$(transcript "${IDS[0]}")" "$(transcript "${IDS[2]}")"
	assert_exists "$(transcript "${IDS[1]}")"
}

@test "purge -: the exit code is the most severe of the ids' (not found 5, in use 4)" {
	printf '%s\n' "${IDS[0]}" "$(new_uuid)" >"$GONE_LIST"
	run -5 --separate-stderr agc --json purge claude - <"$GONE_LIST"
	json_ok 'map(.status) == ["purged", "not-found"]'
	spawn_argv --resume "${IDS[2]}"
	printf '%s\n' "${IDS[1]}" "${IDS[2]}" "$(new_uuid)" >"$GONE_LIST"
	run -4 --separate-stderr agc --json purge claude - <"$GONE_LIST"
	json_ok 'map(.status) == ["purged", "in-use", "not-found"]'
	assert_exists "$(transcript "${IDS[2]}")"
}

@test "purge -: '-' comes alone; empty input purges nothing (exit 0, said on stderr)" {
	run -2 --separate-stderr agc purge claude - "${IDS[0]}" </dev/null
	[[ $stderr == *"'-' reads the ids from standard input and comes alone"* ]]
	assert_exists "$(transcript "${IDS[0]}")"
	printf '# nothing\n\n' >"$GONE_LIST"
	run -0 --separate-stderr agc purge claude - <"$GONE_LIST"
	[[ $stderr == *"no ids on standard input: nothing purged"* ]]
	[ -z "$output" ]
}

@test "purge -: on a terminal, more than 3 ids show progress in place and end with a summary" {
	printf '%s\n' "${IDS[@]}" "$(new_uuid)" >"$GONE_LIST"
	run -5 on_tty "$AGENTGC purge claude - <$GONE_LIST"
	# redrawn in place: a carriage return before each, the line cleared after
	[[ $output == *$'\r[1/6] purged claude '"${IDS[0]:0:8}"* ]]
	[[ $output == *$'\r[5/6] purged claude '"${IDS[4]:0:8}"* ]]
	[[ $output == *$'\r[6/6] not-found claude '* ]]
	[[ $output == *"purged 5, partly purged 0, refused 0, not found 1, errors 0; "*" freed"* ]]
	local i
	for i in "${IDS[@]}"; do assert_gone "$(transcript "$i")"; done
}

@test "purge -: --json on a terminal: progress and summary on stderr only, stdout holds just the JSON lines" {
	printf '%s\n' "${IDS[@]}" >"$GONE_LIST"
	local out=$BATS_TEST_TMPDIR/out.json
	run -0 on_tty "$AGENTGC --json purge claude - <$GONE_LIST >$out"
	[[ $output == *"[5/5] purged claude"* && $output == *"purged 5, partly purged 0"* ]]
	output=$(cat "$out")
	json_ok 'length == 5 and all(.status == "purged")'
	# every line is JSON: nothing else reached stdout
	[ "$(wc -l <"$out")" = 5 ]
	! grep -q $'\r' "$out"
}

@test "purge: 2 or 3 ids on a terminal get the summary without progress; a dry run's summary says so" {
	run -0 on_tty "$AGENTGC purge --dry-run claude ${IDS[0]} ${IDS[1]}"
	[[ $output == *"dry run: would purge 2, would partly purge 0"*"would be freed"* ]]
	[[ $output != *"[1/2]"* ]]
	assert_exists "$(transcript "${IDS[0]}")" "$(transcript "${IDS[1]}")"
	# one id: no summary
	run -0 on_tty "$AGENTGC purge claude ${IDS[0]}"
	[[ $output != *"purged 1, left"* ]]
}
