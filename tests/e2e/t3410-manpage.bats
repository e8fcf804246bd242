#!/usr/bin/env bats
# The man page (issue "Options and messages": it says what works today, lists every
# environment variable agentgc follows, and has an EXAMPLES section): it renders without a
# warning within 80 columns, and its commands, options, agents, exit codes and environment
# variables are those of `agentgc help` and of the source, so that they cannot drift apart.

load lib

MANPAGE=$BATS_TEST_DIRNAME/../../docs/agentgc.1
SRC=$BATS_TEST_DIRNAME/../../src

setup() {
	agc_setup
	unset XDG_DATA_HOME XDG_STATE_HOME XDG_CONFIG_HOME XDG_CACHE_HOME OPENCODE_DB
	command -v groff >/dev/null || {
		echo "groff is not installed: the man page tests need it (scripts/deps.sh installs groff-base)" >&2
		return 1
	}
}

teardown() { agc_teardown; }

# The page as man shows it in 80 columns, without bold and underline (groff options may be
# given: -ww for every warning).
render() {
	groff -man -Tutf8 -rLL=80n -P-cbou "$@" "$MANPAGE"
}

# The lines of section NAME of the rendered page.
section() {
	render | awk -v s="$1" '/^[^ ]/ { on = ($0 == s); next } on'
}

# Every .TP tag of the page's source as "SECTION|SUBSECTION|TAG", the tag as it reads
# ("-q, --quiet", "--sort KEY", "TMPDIR, TMP, TEMP"); SUBSECTION is the first word of the
# .SS heading (the command).
tags() {
	python3 - "$MANPAGE" <<'EOF'
import re, sys

def text(line):
    """A macro line (.B, .BI, .BR, ...) or a text line as it reads, without fonts."""
    if line.startswith('.'):
        name, _, rest = line.partition(' ')
        args = [m.group(1) if m.group(1) is not None else m.group(2)
                for m in re.finditer(r'"([^"]*)"|(\S+)', rest)]
        # .B and .I join their arguments with spaces, the alternating ones (.BR, .BI, ...) not
        line = (' ' if name in ('.B', '.I', '.SH', '.SS') else '').join(args)
    line = re.sub(r'\\f(\[[^]]*\]|.)', '', line)
    return line.replace('\\-', '-').replace('\\&', '').replace('\\e', '\\')

sec = sub = ''
lines = open(sys.argv[1]).read().split('\n')
for i, l in enumerate(lines):
    if l.startswith('.SH'):
        sec, sub = text(l), ''
    elif l.startswith('.SS'):
        sub = text(l).split()[0]
    elif l == '.TP':
        print(sec, sub, text(lines[i + 1]), sep='|')
EOF
}

# The long options of 'agentgc help COMMAND' as help prints them ("--sort KEY", "-q, --quiet"):
# with OWN, the command's own options; else the global ones.
help_option_lines() {
	agc help "$1" | awk -v own="$2" '
		/^options:$/ { on = own != ""; next }
		/^global options/ { on = own == ""; next }
		/^[^ ]/ || /^$/ { on = 0 }
		on && match($0, /^  (-., |    )--[a-z0-9-]+( [A-Z]+)?/) {
			o = substr($0, RSTART, RLENGTH)
			sub(/^ +/, "", o)
			print o
		}'
}

help_commands() {
	agc help | awk '/^commands:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1 }'
}

@test "man page: renders without a warning, within 80 columns, with its sections" {
	local s
	run -0 --separate-stderr render -ww
	[ -z "$stderr" ] || { echo "groff: $stderr" >&2; false; }
	awk 'length($0) > 80 { print "line " NR " has " length($0) " columns: " $0; bad = 1 } END { exit bad }' \
		<<<"$output"
	for s in NAME SYNOPSIS DESCRIPTION "GLOBAL OPTIONS" COMMANDS "EXIT STATUS" ENVIRONMENT EXAMPLES; do
		grep -qx "$s" <<<"$output" || { echo "no section $s" >&2; false; }
	done
	# and man itself shows it without a warning, where man is installed
	if command -v man >/dev/null; then
		run -0 --separate-stderr env MANWIDTH=80 man -l "$MANPAGE"
		[ -z "$stderr" ] || { echo "man: $stderr" >&2; false; }
	fi
}

@test "man page: says what works today: every command and agent of 'agentgc help', and what is planned" {
	local c a planned
	run -0 section DESCRIPTION
	# one line: where groff breaks a line is no part of what it says
	local desc
	desc=$(tr -s ' \n' '  ' <<<"$output")
	[[ $desc == *"What works today"* ]]
	for c in $(help_commands); do
		[[ $desc == *" $c,"* || $desc == *" $c "* ]] || { echo "'$c' is not said to work" >&2; false; }
		render | grep -q "^   $c\( \|$\)" || { echo "no subsection for '$c'" >&2; false; }
		render | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | grep -q " $c\( \|$\)" ||
			{ echo "'$c' is not in the synopsis" >&2; false; }
	done
	# planned commands: those 'agentgc help' names "not built yet"
	planned=$(agc help | sed -n 's/^not built yet: *//p')
	[[ -n $planned ]]
	for c in $planned; do
		[[ ${desc#*Planned} == *" $c"[,.\ ]* ]] || { echo "'$c' is not said to be planned" >&2; false; }
	done
	for a in $(agc help | sed -n 's/^AGENT is one of: \([^(]*\).*/\1/p'); do
		[[ ${desc%%Planned*} == *" $a "* ]] || { echo "agent '$a' is not said to work" >&2; false; }
	done
	[[ ${desc#*Planned} != *" cursor "* ]] || { echo "agent 'cursor' is said to be planned" >&2; false; }
}

@test "man page: every option of 'agentgc help COMMAND' is described under its command, with its value" {
	local c o t
	t=$(tags)
	while IFS= read -r o; do
		grep -qxF "GLOBAL OPTIONS||$o" <<<"$t" ||
			{ echo "global option '$o' is not in GLOBAL OPTIONS" >&2; false; }
	done < <(help_option_lines roots)
	for c in $(help_commands); do
		while IFS= read -r o; do
			grep -qxF "COMMANDS|$c|$o" <<<"$t" ||
				{ echo "option '$o' of $c is not described under $c" >&2; false; }
		done < <(help_option_lines "$c" own)
	done
	# and nothing more: every option the page describes is one agentgc has
	while IFS='|' read -r s c o; do
		case $s in
		"GLOBAL OPTIONS") help_option_lines roots | grep -qxF -- "$o" ;;
		COMMANDS) help_option_lines "$c" own | grep -qxF -- "$o" ;;
		*) continue ;;
		esac || { echo "the page describes '$o' ($s $c), which 'agentgc help $c' does not have" >&2; false; }
	done <<<"$t"
}

@test "man page: every environment variable agentgc reads is in ENVIRONMENT, and only those" {
	local v vars documented
	# getenv("X") and agc_ctx_env(ctx, "X") calls, and the lists of names in vars[] arrays
	vars=$({
		grep -rhoE '(getenv|agc_ctx_env)\((ctx, )?"[A-Z][A-Z0-9_]*"' "$SRC"
		grep -rhE 'vars\[\] = \{' "$SRC"
	} | grep -oE '"[A-Z][A-Z0-9_]*"' | tr -d '"' | LC_ALL=C sort -u)
	for v in HOME CLAUDE_CONFIG_DIR CLAUDE_CODE_TMPDIR TMPDIR TMP TEMP XDG_DATA_HOME OPENCODE_DB NO_COLOR TERM; do
		grep -qx "$v" <<<"$vars" || { echo "the source scan missed $v: fix the test" >&2; false; }
	done
	documented=$(tags | awk -F'|' '$1 == "ENVIRONMENT" { print $3 }' | sed 's/, /\n/g' | LC_ALL=C sort -u)
	for v in $vars; do
		grep -qx "$v" <<<"$documented" || { echo "$v is read by agentgc but not in ENVIRONMENT" >&2; false; }
	done
	for v in $documented; do
		grep -qx "$v" <<<"$vars" || { echo "$v is in ENVIRONMENT but agentgc does not read it" >&2; false; }
	done
}

@test "man page: EXIT STATUS has every exit code of 'agentgc help'" {
	local codes c t
	t=$(tags)
	codes=$(agc help | sed -n '/^exit codes:/,/^$/p' | grep -oE '(^|[ (])[0-9]+ [a-z]' | grep -oE '[0-9]+')
	[ "$(wc -w <<<"$codes")" -ge 6 ]
	for c in $codes; do
		grep -qxF "EXIT STATUS||$c" <<<"$t" || { echo "exit code $c is not in EXIT STATUS" >&2; false; }
	done
	run -0 section "EXIT STATUS"
	[[ $output == *"0 < 5 < 3 < 4 < 1"* ]]
}

@test "man page: every example runs without a usage error on a generated home" {
	local ex n=0
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3410 --claude 3 --opencode 2 \
		--now "$NOW" --quiet
	mkdir -p "$HOME/src/app" "$BATS_TEST_TMPDIR/bin"
	ln -s "$AGENTGC" "$BATS_TEST_TMPDIR/bin/agentgc"
	export PATH=$BATS_TEST_TMPDIR/bin:$PATH
	# the commands between .EX and .EE, a line ending in '|' continued on the next
	while IFS= read -r -d '' ex; do
		n=$((n + 1))
		run --separate-stderr bash -o pipefail -c "$ex"
		[[ $status -ne 2 && $stderr != *"see 'agentgc help"* ]] ||
			{ printf 'example: %s\nexit %s: %s\n' "$ex" "$status" "$stderr" >&2; false; }
	done < <(awk '
		/^\.EX/ { on = 1; next }
		/^\.EE/ { on = 0; next }
		on {
			gsub(/\\-/, "-"); gsub(/\\e/, "\\")
			cmd = cmd $0 "\n"
			if ($0 !~ /\|[ \t]*$/) { printf "%s%c", cmd, 0; cmd = "" }
		}' "$MANPAGE")
	[ "$n" -ge 8 ]
}
