#!/usr/bin/env bats
# SPEC "Output": tables fit the terminal's width (stdout's size on a terminal, else COLUMNS;
# nothing is cut when stdout is not a terminal and COLUMNS is unset): ids shortened to their
# first 8 characters (more where needed to be unique among those shown, as git does), the
# home shown as ~, titles cut with U+2026 (never inside a character, wide characters counting
# two columns); --wide prints whole ids and cuts nothing; --ids prints only whole ids, one a
# line. --json never changes.

load lib
load pty

LONG="fix the build and make the release script work on every platform we ship"

# The number of characters (not bytes) of a UTF-8 string.
chars() { perl -CS -e 'my $s = shift; utf8::decode($s); print length($s)' "$1"; }

setup() {
	agc_setup
	APP=$HOME/src/app
	mkdir -p "$APP"
	S1=$(new_uuid)
	S2=$(new_uuid)
	S3=$(new_uuid)
	mk_transcript "$S1" "$APP" "$LONG" $((NOW - 3 * 86400))
	mk_transcript "$S2" "$APP" "short one" $((NOW - 7200))
	mk_transcript "$S3" "$WORK/elsewhere" "$LONG" $((NOW - 600))
	export TERM=xterm
}

@test "Output: at 80 columns in a terminal every row fits: 8-character ids, ~ for the home, titles cut with an ellipsis" {
	pty_run 80 "$AGENTGC" ls
	[ "$status" -eq 0 ]
	assert_fits 80
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[0]} == AGENT*ID*UPDATED*SIZE*LIVE*PROJECT*TITLE ]]
	for s in "$S1" "$S2" "$S3"; do
		[[ $output == *" ${s:0:8} "* ]]
		[[ $output != *"${s:0:9}"* ]]
	done
	[[ $output == *"~/src/app"* ]]
	[[ $output != *"$HOME"* ]]
	[[ $output == *"fix the build"*"…"* ]]
	[[ $output != *"$LONG"* ]]
	# the newest first, each on one line
	[[ ${lines[1]} == *"${S3:0:8}"* && ${lines[2]} == *"${S2:0:8}"* && ${lines[3]} == *"${S1:0:8}"* ]]
	[[ ${lines[2]} == *"2h ago"*"~/src/app"*"short one" ]]
}

@test "Output: at 200 columns the whole title fits and nothing is cut" {
	pty_run 200 "$AGENTGC" ls
	[ "$status" -eq 0 ]
	assert_fits 200
	[[ $output == *"~/src/app"*"$LONG"* ]]
	[[ $output == *"$WORK/elsewhere"*"$LONG"* ]]
	[[ $output != *"…"* ]]
	# ids are short at any width
	[[ $output == *" ${S1:0:8} "* && $output != *"$S1"* ]]
}

@test "Output: COLUMNS is the width when stdout is not a terminal; without it nothing is cut" {
	run -0 --separate-stderr env COLUMNS=80 "$AGENTGC" ls
	assert_fits 80
	[[ $output == *"…"* ]]
	run -0 --separate-stderr env COLUMNS=200 "$AGENTGC" ls
	[[ $output == *"~/src/app"*"$LONG"* && $output != *"…"* ]]
	# a pipe, COLUMNS unset: whole titles and paths (the ids are the table's short ones)
	run -0 --separate-stderr env -u COLUMNS "$AGENTGC" ls
	[[ $output == *"$WORK/elsewhere"*"$LONG"* && $output != *"…"* ]]
	[[ $output == *" ${S3:0:8} "* ]]
	# on a terminal its own size wins over COLUMNS
	pty_run 80 env COLUMNS=200 "$AGENTGC" ls
	assert_fits 80
	[[ $output == *"…"* ]]
}

@test "Output: --wide prints whole ids and cuts no column, even at 80 columns" {
	pty_run 80 "$AGENTGC" ls --wide
	[ "$status" -eq 0 ]
	for s in "$S1" "$S2" "$S3"; do
		[[ $output == *" $s "* ]]
	done
	[[ $output == *"~/src/app"*"$LONG"* && $output == *"$WORK/elsewhere"*"$LONG"* ]]
	[[ $output != *"…"* ]]
}

@test "Output: --ids prints only whole ids, one a line, in the listing's order (and --limit, --project apply)" {
	run -0 --separate-stderr agc ls --ids
	[ "$output" = "$(printf '%s\n' "$S3" "$S2" "$S1")" ]
	pty_run 80 "$AGENTGC" ls --ids --limit 1
	[ "$output" = "$S3" ]
	run -0 --separate-stderr agc ls --ids --project "$APP"
	[ "$output" = "$(printf '%s\n' "$S2" "$S1")" ]
	# one id each, nothing else: what purge takes
	run -0 --separate-stderr agc --json ls
	[ "$(jq -r .id <<<"$output")" = "$(printf '%s\n' "$S3" "$S2" "$S1")" ]
}

@test "Output: a short id grows until it is unique among the ids shown (git's short ids)" {
	local a b
	# two ids that share their first 11 characters, and one that shares 4 with them
	a=0b8e5a4c-1f0d-4c3b-9a8e-7d6c5b4a3f21
	b=0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f22
	mk_transcript "$a" "$APP" "twin a" $((NOW - 60))
	mk_transcript "$b" "$APP" "twin b" $((NOW - 120))
	run -0 --separate-stderr agc ls
	[[ $output == *" 0b8e5a4c-1f0 "*"twin a"* ]]
	[[ $output == *" 0b8e5a4c-1f2 "*"twin b"* ]]
	# the others stay at 8
	[[ $output == *" ${S1:0:8} "* && $output != *"${S1:0:9}"* ]]
	# among the ids shown only: alone, the twin is 8 characters again
	run -0 --separate-stderr agc ls --limit 1
	[[ $output == *" 0b8e5a4c "*"twin a"* ]]
}

@test "Output: the home is ~ only for a whole leading path component, and it is the --home given" {
	local twin=${HOME}x s4 s5
	mkdir -p "$twin/p"
	s4=$(new_uuid)
	s5=$(new_uuid)
	mk_transcript "$s4" "$twin/p" "prefix twin of the home" $((NOW - 30))
	mk_transcript "$s5" "$HOME" "in the home itself" $((NOW - 40))
	run -0 --separate-stderr agc ls
	[[ $output == *" $twin/p "*"prefix twin of the home"* ]]
	[[ $output != *"~x"* ]]
	[[ $output == *" ~ "*"in the home itself"* ]]
	[[ $output == *" ~/src/app "* ]]
	# another home given with --home: ~ is that home; the caller's HOME is shown whole
	local other=$BATS_TEST_TMPDIR/other
	mkdir -p "$other"
	cp -a "$C" "$other/.claude"
	run -0 --separate-stderr env HOME=/nonexistent "$AGENTGC" --home "$other" ls
	[[ $output == *" $HOME/src/app "* ]]
	# a home given through a link is matched by its real path too
	ln -s "$HOME" "$BATS_TEST_TMPDIR/homelink"
	run -0 --separate-stderr env HOME="$BATS_TEST_TMPDIR/homelink" "$AGENTGC" ls
	[[ $output == *" ~/src/app "* ]]
}

@test "Output: a cut never splits a character; wide (CJK) characters count two columns in a UTF-8 locale" {
	local cjk s6
	cjk=$(printf '修复构建%.0s' $(seq 1 6))
	s6=$(new_uuid)
	mk_transcript "$s6" "$APP" "$cjk" $((NOW - 10))
	LC_ALL=C.UTF-8 pty_run 80 "$AGENTGC" ls --limit 1
	[ "$status" -eq 0 ]
	# widest decodes UTF-8 (a split character fails) and counts each CJK character 2
	assert_fits 80
	[[ ${lines[1]} == *"修复构建"*"…" ]]
	local wide_chars c_chars
	wide_chars=$(chars "${lines[1]##*/src/app }")
	# in the C locale every character counts one column: the whole title (the transcript's
	# title is 24 characters) fits, valid UTF-8
	LC_ALL=C pty_run 80 "$AGENTGC" ls --limit 1
	widest <<<"$output" >/dev/null
	[[ ${lines[1]} == *"修复构建"* && ${lines[1]} != *"…"* ]]
	c_chars=$(chars "${lines[1]##*/src/app }")
	# in UTF-8 the title got the columns left of the line: fewer characters of two columns
	((wide_chars < c_chars && wide_chars > 10))
}

@test "Output: --json never changes with the width: whole ids, whole paths, whole titles" {
	run -0 --separate-stderr env -u COLUMNS "$AGENTGC" --json ls
	local want=$output
	pty_run 80 "$AGENTGC" --json ls
	[ "$output" = "$want" ]
	json_ok --arg s "$S1" --arg p "$APP" --arg t "$LONG" 'map(select(.id == $s))[0] | .project == $p and .title == $t'
	run -0 --separate-stderr env COLUMNS=40 "$AGENTGC" ls --json
	[ "$output" = "$want" ]
}

@test "Output: --ids and --wide are for the table: with --json, or together, a usage error" {
	run -2 agc ls --ids --json
	[[ $output == *"--ids"* ]]
	run -2 agc --json ls --wide
	[[ $output == *"--wide"* ]]
	run -2 agc ls --wide --ids
	run -0 agc help ls
	[[ $output == *"--wide"* && $output == *"--ids"* ]]
}
