#!/usr/bin/env bats
# SPEC "Output": every string that comes from agent data (titles, projects, paths, commands)
# is printed with control characters, escape sequences and bidirectional controls
# neutralised; `--json` stays exact, and a string that is not valid UTF-8 keeps its key, its
# invalid bytes as U+FFFD, with a `<key>_bytes` field holding the exact bytes in base64.

load lib
load oc

setup() {
	oc_setup
	O=$BATS_TEST_TMPDIR/stdout
	E=$BATS_TEST_TMPDIR/stderr
}

# The text every hostile string below carries: an OSC that sets the window title (ESC ] ...
# BEL), a CSI that clears the screen (ESC [ 2 J), a right-to-left override (U+202E) and a C1
# CSI (U+009B).
RLO=$'\xe2\x80\xae' CSI1=$'\xc2\x9b' FFFD=$'\xef\xbf\xbd'
HOSTILE=$'\e]0;pwned\a\e[2J '"$RLO"'gnp.exe '"$CSI1"'31m'

# agentgc ARGS with stdout in $O and stderr in $E; the exit code in $status.
agc_out() {
	status=0
	agc "$@" >"$O" 2>"$E" || status=$?
}

# Fail unless every given file is valid UTF-8 holding no character that drives a terminal:
# no C0 control but newline (ESC among them), no DEL, no C1 control (a raw 0x9b is not UTF-8
# and fails too), no bidirectional control, no line or paragraph separator.
assert_inert() {
	perl -e '
		my $bad = 0;
		for my $f (@ARGV) {
			open(my $h, "<:raw", $f) or die "$f: $!";
			local $/;
			my $t = <$h> // "";
			if (!utf8::decode($t)) {
				print STDERR "$f: not valid UTF-8\n";
				$bad = 1;
				next;
			}
			while ($t =~ /([\x00-\x09\x0b-\x1f\x7f-\x9f\x{61c}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2028}\x{2029}\x{2066}-\x{2069}])/g) {
				printf STDERR "%s: U+%04X at character %d\n", $f, ord($1), pos($t);
				$bad = 1;
			}
		}
		exit $bad' "$@" || { echo "--- stdout:"; cat -v "$O"; echo "--- stderr:"; cat -v "$E"; return 1; } >&2
}

# Fail unless file F holds the fixed string S.
has() {
	grep -aqF -- "$2" "$1" || { printf 'no %q in %s:\n' "$2" "$1"; cat -v "$1"; return 1; } >&2
}

# A Claude session in project dir CWD (JSON-escaped in the transcript) whose custom title and
# first prompt are TITLE_JSON (JSON text); prints nothing, sets CS and CF (its transcript).
mk_claude_hostile() {
	local cwd_json=$1 title_json=$2 dir
	CS=$(new_uuid)
	dir=$C/projects/-work-hostile
	CF=$dir/$CS.jsonl
	mkdir -p "$dir"
	{
		printf '{"type":"custom-title","customTitle":"%s","sessionId":"%s"}\n' "$title_json" "$CS"
		printf '{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"%s"},"uuid":"%s","timestamp":"%s","sessionId":"%s","cwd":"%s","version":"2.1.332"}\n' \
			"$title_json" "$(new_uuid)" "$(iso $((NOW - 3600)))" "$CS" "$cwd_json"
	} >"$CF"
	touch -d "@$((NOW - 3600))" "$CF"
}

# The same text as JSON string content: what Claude writes for HOSTILE.
HOSTILE_JSON='\u001b]0;pwned\u0007\u001b[2J \u202egnp.exe \u009b31m'

@test "Output: an OpenCode title and project with OSC, CSI, C1 CSI and U+202E reach no terminal (ls, show, purge --dry-run)" {
	oc_fixture --seed 2601 --opencode 2
	local s
	s=$(m_pick '.parent == null')
	[[ -n $s ]]
	# the title and the directory as OpenCode's own table holds them
	qw "UPDATE session SET title = char(27) || ']0;pwned' || char(7) || char(27) || '[2J ' || char(8238)
		|| 'gnp.exe ' || char(155) || '31m', directory = '$WORK/' || char(27) || '[2J' || char(8238) || 'dir'
		WHERE id = $(sqlq "$s")"
	[[ $(q "SELECT title FROM session WHERE id = $(sqlq "$s")") == "$HOSTILE" ]]
	agc_out ls --agent opencode
	[[ $status -eq 0 ]]
	assert_inert "$O" "$E"
	has "$O" '\x1b]0;pwned\x07\x1b[2J \u202egnp.exe \u009b31m'
	has "$O" "\$'$WORK/\\x1b[2J\\xe2\\x80\\xaedir'"
	agc_out show opencode "$s"
	[[ $status -eq 0 ]]
	assert_inert "$O" "$E"
	has "$O" 'title    \x1b]0;pwned\x07\x1b[2J \u202egnp.exe \u009b31m'
	agc_out purge --dry-run opencode "$s"
	[[ $status -eq 0 ]]
	assert_inert "$O" "$E"
	# --json: the same bytes once decoded, and no raw control on the terminal either
	agc_out --json show opencode "$s"
	[[ $status -eq 0 ]]
	assert_inert "$O" "$E"
	[[ $(jq -r .title "$O") == "$HOSTILE" ]]
	[[ $(jq -r .project "$O") == "$WORK/"$'\e[2J'"$RLO"$'dir' ]]
	agc_out --json ls --agent opencode
	assert_inert "$O" "$E"
	[[ $(jq -r --arg s "$s" 'select(.id == $s) | .title' "$O") == "$HOSTILE" ]]
}

@test "Output: a Claude custom title, first prompt and cwd with ESC and U+202E reach no terminal (ls, show, purge --dry-run)" {
	mk_claude_hostile '/work/\u202e\u001b[2Jproj' "$HOSTILE_JSON"
	agc_out ls --agent claude
	[[ $status -eq 0 ]]
	assert_inert "$O" "$E"
	# the table shows the id shortened (SPEC "Output"); --ids shows it whole
	has "$O" "${CS:0:8}"
	has "$O" '\u202egnp.exe'
	has "$O" "\$'/work/\\xe2\\x80\\xae\\x1b[2Jproj'"
	agc_out ls --agent claude --ids
	has "$O" "$CS"
	agc_out show claude "$CS"
	[[ $status -eq 0 ]]
	assert_inert "$O" "$E"
	has "$O" '\u202egnp.exe'
	agc_out purge --dry-run claude "$CS"
	[[ $status -eq 0 ]]
	assert_inert "$O" "$E"
	agc_out --json show claude "$CS"
	assert_inert "$O" "$E"
	[[ $(jq -r .project "$O") == $'/work/'"$RLO"$'\e[2Jproj' ]]
	[[ $(jq -r .title "$O") == *"$RLO"'gnp.exe'* ]]
	[[ -f $CF ]]
}

@test "Output: a holder whose argv holds ESC, a C1 CSI and U+202E is named neutralised (in-use, purge, hints)" {
	mk_claude_hostile /work/hostile 'fix the build'
	spawn_named_holder "$CF" $'\e]0;pwned\a'"$RLO"$'agent' "$CSI1"'2J' $'\e[2J'
	agc_out in-use claude "$CS"
	[[ $status -eq 4 ]]
	assert_inert "$O" "$E"
	has "$O" "held by pid $LAST_PID"
	# through ps (AGENTGC_PROC_BACKEND=ps) the command comes as ps prints it, its bytes
	# already made '?': inert all the same
	[[ ${AGENTGC_PROC_BACKEND:-} == ps ]] || has "$O" '\u202eagent'
	agc_out purge claude "$CS"
	[[ $status -eq 4 ]]
	assert_inert "$O" "$E"
	has "$E" "hint: pid $LAST_PID"
	agc_out purge --dry-run claude "$CS"
	[[ $status -eq 4 ]]
	assert_inert "$O" "$E"
	agc_out --json in-use claude "$CS"
	[[ $status -eq 4 ]]
	assert_inert "$O" "$E"
	[[ ${AGENTGC_PROC_BACKEND:-} == ps || $(jq -r '.holders[0].command' "$O") == *"$RLO"'agent'* ]]
	[[ -f $CF ]]
}

@test "Output: a message that echoes an argument with ESC and U+202E reaches no terminal (cli_err, cli_usage)" {
	agc_out ls $'\e[2J'"$RLO"'arg'
	[[ $status -eq 2 ]]
	assert_inert "$O" "$E"
	has "$E" "unexpected argument '\\x1b[2J\\u202earg'"
	agc_out show $'\e]0;pwned\a' "$(new_uuid)"
	[[ $status -eq 2 ]]
	assert_inert "$O" "$E"
	has "$E" "unknown agent '\\x1b]0;pwned\\x07'"
}

# The exact bytes of base64 text (stdin) as hex.
b64hex() { base64 -d | od -An -v -tx1 | tr -d ' \n'; }
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }

@test "Output: an artifact path that is not UTF-8 keeps path in --json as U+FFFD with path_bytes (show, purge --dry-run)" {
	# the temp root Claude is given (TMPDIR, a Latin-1 name) holds the session's task output dir
	export TMPDIR=$BATS_TEST_TMPDIR/tmp-caf$'\xe9'
	mkdir -p "$TMPDIR"
	mk_claude_hostile /work/hostile 'fix the build'
	local d=$TMPDIR/claude-$UID_/-work-hostile/$CS
	mkdir -p "$d/tasks"
	echo 'bash output' >"$d/tasks/b1.output"
	local want_hex fixed
	want_hex=$(hex "$d")
	fixed=${d//$'\xe9'/$'\xef\xbf\xbd'}
	local cmd
	for cmd in "show claude $CS" "purge --dry-run claude $CS"; do
		# shellcheck disable=SC2086
		agc_out --json $cmd
		[[ $status -eq 0 ]]
		# the key is there, as the text with U+FFFD, and its bytes are exact
		jq -e --arg p "$fixed" '[(.artifacts // .removed)[] | select(.path == $p)] | length == 1' "$O"
		[[ $(jq -r --arg p "$fixed" '(.artifacts // .removed)[] | select(.path == $p) | .path_bytes' "$O" | b64hex) == "$want_hex" ]]
		# a path that is UTF-8 has no path_bytes
		jq -e --arg f "$CF" '(.artifacts // .removed)[] | select(.path == $f) | has("path_bytes") | not' "$O"
		# every item has its path
		jq -e '(.artifacts // .removed) | length == 2 and all(has("path"))' "$O"
	done
	# the human form is the shell's $'...' with the byte, valid UTF-8 on the terminal
	agc_out purge --dry-run claude "$CS"
	assert_inert "$O" "$E"
	has "$O" "\$'$BATS_TEST_TMPDIR/tmp-caf\\xe9/claude-$UID_/-work-hostile/$CS'"
	# roots: the temp root itself
	agc_out --json roots
	[[ $(jq -r 'select(.root == "temp") | .path_bytes' "$O" | b64hex) == "$(hex "$TMPDIR")" ]]
	[[ $(jq -r 'select(.root == "temp") | .path' "$O") == "${TMPDIR//$'\xe9'/$'\xef\xbf\xbd'}" ]]
	[[ -d $d ]]
}

@test "Output: an OpenCode project that is not UTF-8 keeps project in --json (ls, show) as U+FFFD with project_bytes" {
	oc_fixture --seed 2602 --opencode 2
	local s dir
	s=$(m_pick '.parent == null')
	[[ -n $s ]]
	dir=$WORK/caf$'\xe9'
	qw "UPDATE session SET directory = CAST(X'$(hex "$dir")' AS TEXT) WHERE id = $(sqlq "$s")"
	agc_out --json ls --agent opencode
	[[ $status -eq 0 ]]
	jq -e -s --arg s "$s" --arg p "$WORK/caf$FFFD" 'map(select(.id == $s))[0].project == $p' "$O"
	[[ $(jq -r --arg s "$s" 'select(.id == $s) | .project_bytes' "$O" | b64hex) == "$(hex "$dir")" ]]
	jq -e -s --arg s "$s" 'all(.[] | select(.id != $s); has("project_bytes") | not)' "$O"
	agc_out --json show opencode "$s"
	[[ $status -eq 0 ]]
	[[ $(jq -r .project_bytes "$O" | b64hex) == "$(hex "$dir")" ]]
	agc_out ls --agent opencode
	assert_inert "$O" "$E"
	has "$O" "\$'$WORK/caf\\xe9'"
}
