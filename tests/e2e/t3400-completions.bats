#!/usr/bin/env bats
# Shell completions (issue "Shell completions"; SPEC "Commands"): bash, zsh and fish complete
# the commands, every option of `agentgc help COMMAND` (and the global options, before or
# after the command, as --opt=VALUE too), agents, option values, directories, and for show,
# in-use and purge the session ids that `agentgc ls --agent AGENT --ids` prints, in the home
# given with --home on the line.
#
# The completions list commands, options and values statically; the tests below compare those
# lists with what `agentgc help` prints, so that they cannot drift apart. zsh and fish are
# required (scripts/deps.sh installs them): without them these tests fail, never skip.

load lib

COMPLETIONS=$BATS_TEST_DIRNAME/../../completions

setup() {
	agc_setup
	unset XDG_DATA_HOME XDG_STATE_HOME XDG_CONFIG_HOME XDG_CACHE_HOME OPENCODE_DB
	# the completions run the 'agentgc' the line names: this one
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -s "$AGENTGC" "$BATS_TEST_TMPDIR/bin/agentgc"
	export PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

teardown() { agc_teardown; }

# ---- what agentgc's help says ------------------------------------------------------------

# The commands of 'agentgc help', one a line.
help_commands() {
	agc help | awk '/^commands:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1 }'
}

# The agents of 'agentgc help' ("AGENT is one of: claude opencode (...").
help_agents() {
	agc help | sed -n 's/^AGENT is one of: \([^(]*\).*/\1/p' | tr ' ' '\n' | grep .
}

# The long options of 'agentgc help COMMAND' (its own and the global ones; COMMAND empty: the
# global ones), one a line, with '=' appended to those that take a value. Sorted.
help_options() {
	local c=${1:-roots}
	agc help "$c" | awk -v own="${1:+1}" '
		/^options:$/ { on = own; next }
		/^global options/ { on = 1; next }
		/^[^ ]/ || /^$/ { on = 0 }
		on && match($0, /^  (-., |    )--[a-z0-9-]+/) {
			o = substr($0, RSTART, RLENGTH)
			sub(/^.*--/, "--", o)
			print o (substr($0, RSTART + RLENGTH) ~ /^ [A-Z]/ ? "=" : "")
		}' | LC_ALL=C sort
}

# Generated homes: $HOME (3 Claude and 2 OpenCode sessions) and $OTHER (2 and 1), with the ids
# each holds per agent in CLAUDE_IDS, OPENCODE_IDS, OTHER_CLAUDE_IDS, OTHER_IDS (all agents).
homes() {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3401 --claude 3 --opencode 2 \
		--now "$NOW" --quiet
	OTHER=$BATS_TEST_TMPDIR/other
	"$AGENTGC_FIXTURE" --home "$OTHER" --seed 3402 --claude 2 --opencode 1 --now "$NOW" --quiet
	CLAUDE_IDS=$(agc --json ls --agent claude | jq -r .id | LC_ALL=C sort)
	OPENCODE_IDS=$(agc --json ls --agent opencode | jq -r .id | LC_ALL=C sort)
	ALL_IDS=$(agc --json ls | jq -r .id | LC_ALL=C sort)
	OTHER_CLAUDE_IDS=$(agc --home "$OTHER" --json ls --agent claude | jq -r .id | LC_ALL=C sort)
	OTHER_IDS=$(agc --home "$OTHER" --json ls | jq -r .id | LC_ALL=C sort)
	[ "$(wc -l <<<"$CLAUDE_IDS")" -eq 3 ] && [ "$(wc -l <<<"$OPENCODE_IDS")" -eq 2 ]
	[ "$(wc -l <<<"$OTHER_CLAUDE_IDS")" -eq 2 ] && [ "$(wc -l <<<"$OTHER_IDS")" -eq 3 ]
}

# Fail with both lists unless the output (sorted, unique) is the expected list. The message
# names LINE (set by zsh_out), else the command of the last run.
same() {
	local want=$1 got line=${LINE:-${BATS_RUN_COMMAND:-?}}
	LINE=''

	got=$(printf '%s\n' "$output" | grep . | LC_ALL=C sort -u)
	want=$(printf '%s\n' "$want" | grep . | LC_ALL=C sort -u)
	if [ "$got" != "$want" ]; then
		diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/# /' >&2
		printf '# expected (-) and offered (+) for: %s\n' "$line" >&2
		return 1
	fi
}

# ---- bash ---------------------------------------------------------------------------------

# What bash offers when Tab is pressed at the end of LINE: COMPREPLY, one a line (an entry
# keeps its trailing space: "--json " is inserted with a space, "--sort=" without). The line is
# split into COMP_WORDS as bash splits it: at blanks, and '=' a word of its own.
bash_complete() {
	local line=$1 w
	local -a parts
	# shellcheck source=../../completions/agentgc.bash
	source "$COMPLETIONS/agentgc.bash"
	COMP_WORDS=()
	read -ra parts <<<"$line"
	for w in "${parts[@]}"; do
		while [[ $w == *=* ]]; do
			[[ -n ${w%%=*} ]] && COMP_WORDS+=("${w%%=*}")
			COMP_WORDS+=("=")
			w=${w#*=}
		done
		[[ -n $w ]] && COMP_WORDS+=("$w")
	done
	[[ $line == *' ' ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMPREPLY=()
	_agentgc agentgc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	[[ ${#COMPREPLY[@]} -eq 0 ]] || printf '%s\n' "${COMPREPLY[@]}"
}

# bash_complete with the trailing spaces taken off.
bash_words() {
	bash_complete "$1" | sed 's/ $//'
}

# ---- zsh ----------------------------------------------------------------------------------

need_shell() {
	command -v "$1" >/dev/null || {
		echo "$1 is not installed: the completion tests need it (scripts/deps.sh installs it)" >&2
		return 1
	}
}

# What zsh offers when Tab is pressed at the end of each LINE, in an interactive zsh (in a
# pseudo-terminal, through zsh/zpty) with compinit and completions/_agentgc on its fpath:
# every match the completion adds goes to $BATS_TEST_TMPDIR/zsh.N (N = 1, 2, ... per LINE),
# what the terminal showed to zsh.N.tty.
zsh_complete_lines() {
	need_shell zsh
	local script=$BATS_TEST_TMPDIR/zcomplete.zsh i
	cat >"$script" <<'EOF'
zmodload zsh/zpty || exit 1
dir=$1 out=$2
shift 2
zpty z 'TERM=xterm zsh -f -i'
zpty -w z "PS1='%%R%%E%%Y ' PROMPT2='' LISTMAX=100000; unsetopt zle_bracketed_paste 2>/dev/null"
zpty -r z junk '*%R%E%Y *' || exit 1
zpty -w z "fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -r z junk '*%R%E%Y *' || exit 1
# Every call that adds matches also writes them to \$agc_out (calls that only ask, with -O,
# -A or -D, are passed on untouched).
zpty -w z 'compadd() { if (( ${@[(I)-[OAD]]} )); then builtin compadd "$@"; return; fi; local -a m; builtin compadd -O m "$@"; print -rl -- $m >>$agc_out; builtin compadd "$@"; }'
zpty -r z junk '*%R%E%Y *' || exit 1
# Input typed before zle has drawn its prompt may be discarded: every step waits for the
# prompt after its own output.
n=0
for line; do
	n=$((n + 1))
	: >$out.$n
	zpty -w z "agc_out=${(q)out}.$n; print -r RE''ADY$n."
	zpty -r z junk "*READY$n.*%R%E%Y *" || exit 1
	zpty -w -n z "$line"$'\t'
	zpty -w z $'\C-u'"print -r DO''NE$n."
	zpty -r z junk "*DONE$n.*%R%E%Y *" || exit 1
	print -r -- "$junk" >$out.$n.tty
done
zpty -w z exit
zpty -d z
EOF
	timeout 60 zsh -f "$script" "$COMPLETIONS" "$BATS_TEST_TMPDIR/zsh" "$@" </dev/null || {
		echo "zsh did not complete: $*" >&2
		return 1
	}
}

# What zsh offers for one LINE, one a line.
zsh_complete() {
	zsh_complete_lines "$1" && grep . "$BATS_TEST_TMPDIR/zsh.1" | LC_ALL=C sort -u
}

# The output of line N of the last zsh_complete_lines.
zsh_out() {
	LINE=${ZLINES[$1 - 1]:-}
	output=$(grep . "$BATS_TEST_TMPDIR/zsh.$1" | LC_ALL=C sort -u)
}

# ---- fish ---------------------------------------------------------------------------------

# What fish offers for LINE (complete -C), the candidates without their descriptions.
fish_complete() {
	need_shell fish
	fish --no-config -c 'source $argv[1]; complete -C -- $argv[2]' "$COMPLETIONS/agentgc.fish" "$1" |
		cut -f1
}

# fish's own listing of the completions agentgc.fish defines.
fish_spec() {
	need_shell fish
	fish --no-config -c 'source $argv[1]; complete -c agentgc' "$COMPLETIONS/agentgc.fish"
}

# ---- commands, options and values: the same as agentgc's help ------------------------------

@test "completions: the commands are those of 'agentgc help', in bash, zsh and fish" {
	local want
	want=$(help_commands)
	[[ $want == *purge* && $want == *in-use* ]]
	run -0 bash_words "agentgc "
	same "$want"
	run -0 bash_words "agentgc help "
	same "$want"
	run -0 bash_words "agentgc --json -q "
	same "$want"
	run -0 bash_words "agentgc --home /x --color never "
	same "$want"
	run -0 bash_words "agentgc pu"
	same purge
	run -0 zsh_complete "agentgc "
	same "$want"
	run -0 zsh_complete "agentgc help "
	same "$want"
	run -0 zsh_complete "agentgc --home /x -q "
	same "$want"
	run -0 fish_complete "agentgc "
	same "$want"
	run -0 fish_complete "agentgc help "
	same "$want"
	run -0 fish_complete "agentgc --home /x -q "
	same "$want"
}

@test "completions: bash offers every option of 'agentgc help COMMAND', --opt= for those with a value" {
	local c want
	run -0 bash_words "agentgc --"
	same "$(help_options '')"
	for c in $(help_commands); do
		want=$(help_options "$c")
		run -0 bash_words "agentgc $c --"
		same "$want"
		# global options after the command too, and options after arguments
		run -0 bash_words "agentgc --json $c -q --"
		same "$want"
	done
	run -0 bash_words "agentgc purge claude $(new_uuid) --"
	same "$(help_options purge)"
	# a flag is inserted with a space after it, an option with a value as "--opt=" without
	run -0 bash_complete "agentgc ls --ch"
	[ "$output" = "--children " ]
	run -0 bash_complete "agentgc ls --so"
	[ "$output" = "--sort=" ]
	run -0 bash_complete "agentgc ls --js"
	[ "$output" = "--json " ]
	# after --, nothing is an option
	run -0 bash_words "agentgc purge claude -- --"
	same ""
}

@test "completions: zsh offers every option of 'agentgc help COMMAND'" {
	local c i=0 n
	local -a cmds
	mapfile -t cmds < <(help_commands)
	ZLINES=("agentgc --")
	for c in "${cmds[@]}"; do
		# (zsh does not offer again an option given after the command: -q there would hide
		# --quiet)
		ZLINES+=("agentgc $c --" "agentgc --json -q $c --")
	done
	zsh_complete_lines "${ZLINES[@]}"
	zsh_out 1
	same "$(help_options '' | tr -d =)"
	for c in "${cmds[@]}"; do
		for n in $((i * 2 + 2)) $((i * 2 + 3)); do
			zsh_out "$n"
			same "$(help_options "$c" | tr -d =)"
		done
		i=$((i + 1))
	done
}

@test "completions: zsh knows which options take a value: none is offered in its place" {
	local c o n=0
	local -a opts
	ZLINES=()
	for c in $(help_commands); do
		for o in $(help_options "$c"); do
			case $o in
			--help | --version) continue ;; # they end the line: nothing follows them
			*=) ZLINES+=("agentgc $c ${o%=} ") ;;
			*) ZLINES+=("agentgc $c $o --") ;;
			esac
			opts+=("$o")
		done
	done
	zsh_complete_lines "${ZLINES[@]}"
	for o in "${opts[@]}"; do
		n=$((n + 1))
		zsh_out "$n"
		if [[ $o == *= ]]; then
			# the value's place: no option
			[[ $output != *--* ]] || { echo "after '${ZLINES[n - 1]}': $output" >&2; false; }
		else
			# a flag: the next word may be another option
			[[ $output == *--* ]] || { echo "after '${ZLINES[n - 1]}': nothing" >&2; false; }
		fi
	done
}

@test "completions: fish offers every option of 'agentgc help COMMAND', and knows which take a value" {
	local c want spec
	run -0 fish_complete "agentgc --"
	same "$(help_options '' | tr -d =)"
	spec=$(fish_spec)
	for c in $(help_commands); do
		want=$(help_options "$c")
		run -0 fish_complete "agentgc $c --"
		same "$(tr -d = <<<"$want")"
		run -0 fish_complete "agentgc --json $c -q --"
		same "$(tr -d = <<<"$want")"
		# the options fish gives a required argument (-x, -r; listed as --exclusive or
		# --require-parameter) are those with a value
		output=$(awk -v c="$c" '
			/ -l / && (/ -n / == 0 || index($0, "__agentgc_using " c "'\''")) {
				for (i = 1; i <= NF; i++) if ($i == "-l") o = "--" $(i + 1)
				print o ((/ (-x|-r|--exclusive|--require-parameter) /) ? "=" : "")
			}' <<<"$spec")
		LINE="fish's spec of $c" same "$want"
		# and agentgc.fish reads the line with the same list
		output=$(fish --no-config -c 'source $argv[1]; __agentgc_value_options $argv[2]' \
			"$COMPLETIONS/agentgc.fish" "$c" | sed 's/$/=/')
		LINE="__agentgc_value_options $c" same "$(grep = <<<"$want")"
	done
}

@test "completions: values of --sort, --color and --agent, as --opt VALUE and --opt=VALUE; agentgc takes each" {
	local v
	homes
	# bash
	run -0 bash_words "agentgc ls --sort "
	same $'updated\ncreated\nsize'
	run -0 bash_words "agentgc ls --sort=c"
	same created
	run -0 bash_words "agentgc --color "
	same $'auto\nalways\nnever'
	run -0 bash_words "agentgc ls --color=al"
	same always
	run -0 bash_words "agentgc ls --agent "
	same "$(help_agents)"
	run -0 bash_words "agentgc ls --agent=o"
	same opencode
	# nothing for a number, a duration or a text
	run -0 bash_words "agentgc ls --limit "
	same ""
	run -0 bash_words "agentgc ls --older-than="
	same ""
	# zsh
	ZLINES=("agentgc ls --sort " "agentgc ls --sort=" "agentgc --color=" "agentgc ls --agent "
		"agentgc ls --agent=" "agentgc ls --limit ")
	zsh_complete_lines "${ZLINES[@]}"
	zsh_out 1 && same $'updated\ncreated\nsize'
	zsh_out 2 && same $'updated\ncreated\nsize'
	zsh_out 3 && same $'auto\nalways\nnever'
	zsh_out 4 && same "$(help_agents)"
	zsh_out 5 && same "$(help_agents)"
	zsh_out 6 && same ""
	# fish
	run -0 fish_complete "agentgc ls --sort "
	same $'updated\ncreated\nsize'
	run -0 fish_complete "agentgc ls --sort=s"
	same --sort=size
	run -0 fish_complete "agentgc --color="
	same $'--color=auto\n--color=always\n--color=never'
	run -0 fish_complete "agentgc ls --agent "
	same "$(help_agents)"
	# every value offered is one agentgc takes
	for v in $(bash_words "agentgc ls --sort "); do
		run -0 --separate-stderr agc ls --sort "$v"
	done
	for v in $(bash_words "agentgc --color "); do
		run -0 agc --color "$v" roots
	done
	for v in $(bash_words "agentgc ls --agent "); do
		run -0 --separate-stderr agc ls --agent "$v"
	done
}

@test "completions: the agents of show, in-use and purge are those of 'agentgc help', and auto" {
	local c want
	want=$(help_agents; echo auto)
	[[ $want == *claude*opencode*auto ]]
	ZLINES=()
	for c in show in-use purge; do
		run -0 bash_words "agentgc $c "
		same "$want"
		run -0 bash_words "agentgc --json $c -q "
		same "$want"
		run -0 fish_complete "agentgc $c "
		same "$want"
		ZLINES+=("agentgc $c " "agentgc --json $c -q ")
	done
	zsh_complete_lines "${ZLINES[@]}"
	for c in 1 2 3 4 5 6; do
		zsh_out "$c"
		same "$want"
	done
}

@test "completions: --home and --project complete directories only" {
	mkdir -p "$WORK/alpha" "$WORK/alpine"
	: >"$WORK/alfile"
	local want=$'alpha\nalpine'
	# bash gives paths (readline adds the '/')
	run -0 bash_words "agentgc --home $WORK/al"
	same "$WORK/alpha"$'\n'"$WORK/alpine"
	run -0 bash_words "agentgc --home=$WORK/al"
	same "$WORK/alpha"$'\n'"$WORK/alpine"
	run -0 bash_words "agentgc ls --project $WORK/al"
	same "$WORK/alpha"$'\n'"$WORK/alpine"
	run -0 bash_words "agentgc ls --project=$WORK/alp"
	same "$WORK/alpha"$'\n'"$WORK/alpine"
	# zsh offers the names in the directory
	ZLINES=("agentgc --home $WORK/al" "agentgc ls --project=$WORK/al" "agentgc roots --home=$WORK/al")
	zsh_complete_lines "${ZLINES[@]}"
	zsh_out 1 && same "$want"
	zsh_out 2 && same "$want"
	zsh_out 3 && same "$want"
	# fish the whole token
	run -0 fish_complete "agentgc --home $WORK/al"
	same "$WORK/alpha/"$'\n'"$WORK/alpine/"
	run -0 fish_complete "agentgc ls --project=$WORK/al"
	same "--project=$WORK/alpha/"$'\n'"--project=$WORK/alpine/"
}

# ---- session ids, from agentgc ls --agent AGENT --ids ------------------------------------------

@test "completions: bash completes the ids of the agent typed, from 'agentgc ls --ids'" {
	homes
	local c one
	for c in show in-use purge; do
		run -0 bash_words "agentgc $c claude "
		same "$CLAUDE_IDS"
		run -0 bash_words "agentgc $c opencode "
		same "$OPENCODE_IDS"
		run -0 bash_words "agentgc $c auto "
		same "$ALL_IDS"
		run -0 bash_words "agentgc -q $c --json opencode "
		same "$OPENCODE_IDS"
	done
	one=$(head -1 <<<"$CLAUDE_IDS")
	run -0 bash_words "agentgc show claude ${one:0:6}"
	same "$one"
	# show and in-use take one id; purge several, each offered once
	run -0 bash_words "agentgc show claude $one "
	same ""
	run -0 bash_words "agentgc in-use claude $one "
	same ""
	run -0 bash_words "agentgc purge claude $one "
	same "$(grep -vx "$one" <<<"$CLAUDE_IDS")"
	run -0 bash_words "agentgc purge --dry-run auto $one "
	same "$(grep -vx "$one" <<<"$ALL_IDS")"
	# no ids for an agent that is not there, or before the agent
	run -0 bash_words "agentgc show codex "
	same ""
	# the line's own agentgc is the one run
	run -0 bash_words "$AGENTGC show claude "
	same "$CLAUDE_IDS"
}

@test "completions: bash passes a --home given on the line to 'agentgc ls'" {
	homes
	run -0 bash_words "agentgc --home $OTHER show claude "
	same "$OTHER_CLAUDE_IDS"
	run -0 bash_words "agentgc --home=$OTHER in-use claude "
	same "$OTHER_CLAUDE_IDS"
	run -0 bash_words "agentgc purge --home $OTHER auto "
	same "$OTHER_IDS"
	run -0 bash_words "agentgc purge claude --home=$OTHER "
	same "$OTHER_CLAUDE_IDS"
	# the last one wins, as for agentgc
	run -0 bash_words "agentgc --home $OTHER show --home $HOME claude "
	same "$CLAUDE_IDS"
	# a value that is a path, not the option
	run -0 bash_words "agentgc --color never show claude "
	same "$CLAUDE_IDS"
}

@test "completions: zsh completes the ids of the agent typed, in the home given on the line" {
	homes
	local one
	one=$(head -1 <<<"$CLAUDE_IDS")
	ZLINES=("agentgc show claude " "agentgc in-use opencode " "agentgc purge auto "
		"agentgc purge claude $one " "agentgc show claude $one "
		"agentgc --home $OTHER show claude " "agentgc purge --home=$OTHER auto "
		"agentgc -q in-use --json claude " "agentgc show claude ${one:0:6}")
	zsh_complete_lines "${ZLINES[@]}"
	zsh_out 1 && same "$CLAUDE_IDS"
	zsh_out 2 && same "$OPENCODE_IDS"
	zsh_out 3 && same "$ALL_IDS"
	zsh_out 4 && same "$(grep -vx "$one" <<<"$CLAUDE_IDS")"
	# (zsh offers the options when no argument can follow)
	zsh_out 5 && output=$(grep -v '^-' <<<"$output") && same ""
	zsh_out 6 && same "$OTHER_CLAUDE_IDS"
	zsh_out 7 && same "$OTHER_IDS"
	zsh_out 8 && same "$CLAUDE_IDS"
	zsh_out 9 && same "$one"
}

@test "completions: fish completes the ids of the agent typed, in the home given on the line" {
	homes
	local one
	one=$(head -1 <<<"$CLAUDE_IDS")
	run -0 fish_complete "agentgc show claude "
	same "$CLAUDE_IDS"
	run -0 fish_complete "agentgc in-use opencode "
	same "$OPENCODE_IDS"
	run -0 fish_complete "agentgc purge auto "
	same "$ALL_IDS"
	run -0 fish_complete "agentgc purge claude $one "
	same "$(grep -vx "$one" <<<"$CLAUDE_IDS")"
	run -0 fish_complete "agentgc show claude $one "
	same ""
	run -0 fish_complete "agentgc --home $OTHER show claude "
	same "$OTHER_CLAUDE_IDS"
	run -0 fish_complete "agentgc purge --home=$OTHER auto "
	same "$OTHER_IDS"
	run -0 fish_complete "agentgc -q in-use --json claude "
	same "$CLAUDE_IDS"
}

@test "completions: completing ids runs only 'agentgc ls' and changes nothing" {
	homes
	# an agentgc that logs how it is called
	rm "$BATS_TEST_TMPDIR/bin/agentgc"
	printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s"\nexec "%s" "$@"\n' \
		"$BATS_TEST_TMPDIR/calls" "$AGENTGC" >"$BATS_TEST_TMPDIR/bin/agentgc"
	chmod +x "$BATS_TEST_TMPDIR/bin/agentgc"
	# the shells' own files in the home (fish keeps some) are there before the snapshot
	fish_complete "agentgc roots " >/dev/null
	zsh_complete_lines "agentgc roots "
	snap before
	: >"$BATS_TEST_TMPDIR/calls"
	run -0 bash_words "agentgc purge claude "
	same "$CLAUDE_IDS"
	run -0 fish_complete "agentgc purge --dry-run opencode "
	same "$OPENCODE_IDS"
	ZLINES=("agentgc purge --home=$OTHER claude " "agentgc in-use auto ")
	zsh_complete_lines "${ZLINES[@]}"
	zsh_out 1 && same "$OTHER_CLAUDE_IDS"
	assert_tree_unchanged before
	run -0 cat "$BATS_TEST_TMPDIR/calls"
	same "ls --agent claude --ids
ls --agent opencode --ids
--home $OTHER ls --agent claude --ids
ls --ids"
	[ "${#lines[@]}" -eq 4 ]
}
