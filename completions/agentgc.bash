# bash completion for agentgc                                    -*- shell-script -*-
#
# Commands, options (global ones before or after the command, and each command's own, in
# their --opt=VALUE form), agents, option values, directories, and for show, in-use, purge
# and stop the session ids that 'agentgc ls --agent AGENT --ids' prints (in the home given
# with --home on the line, if any).
#
# The lists below mirror 'agentgc help' and 'agentgc help COMMAND':
# tests/e2e/t3400-completions.bats fails when they differ.

# The commands that work today (the planned ones are not offered).
_agentgc_commands() {
	printf '%s\n' roots ls show in-use purge prune compact du ps stop help
}

# The agents an AGENT argument or --agent names.
_agentgc_agents() {
	printf '%s\n' claude codex opencode cursor
}

# The long options of command $1 (empty: the global ones); a trailing '=' marks an option
# that takes a value.
_agentgc_options() {
	case $1 in
	'') printf '%s\n' --home= --json --color= --quiet --verbose --help --version ;;
	ls)
		printf '%s\n' --agent= --project= --project-gone --older-than= --newer-than= \
			--grep= --children --orphans --sort= --limit= --wide --ids
		;;
	purge) printf '%s\n' --dry-run --scrub --with-forks ;;
	prune)
		printf '%s\n' --agent= --older-than= --keep= --project= --project-gone --orphans --settle= \
			--budget= --scrub --dry-run --yes
		;;
	compact) printf '%s\n' --agent= --dry-run ;;
	du) printf '%s\n' --agent= --by= ;;
	ps) printf '%s\n' --agent= --watch --wide ;;
	stop) printf '%s\n' --grace= --dry-run ;;
	esac
}

# True when option $2 (a long option, or a short one) of command $1 takes a value.
_agentgc_takes_value() {
	local o
	while IFS= read -r o; do
		[[ $o == "$2=" ]] && return 0
	done < <(_agentgc_options "$1"; [[ -n $1 ]] && _agentgc_options '')
	return 1
}

# A word as the shell would read it, as far as a path needs: one layer of quotes, backslash
# escapes and a leading ~ (command substitutions and variables are never run or expanded).
_agentgc_unquote() {
	local w=$1
	case $w in
	\'*\') w=${w:1:${#w}-2} ;;
	\"*\") w=${w:1:${#w}-2} ;;
	*) w=$(printf '%s' "$w" | sed 's/\\\(.\)/\1/g') ;;
	esac
	case $w in
	'~') w=$HOME ;;
	'~/'*) w=$HOME/${w:2} ;;
	esac
	printf '%s' "$w"
}

# The session ids of agent $2 (auto: of every agent) from 'PROG [--home H] ls --agent A --ids'.
_agentgc_ids() {
	local prog=$1 agent=$2 home=$3
	local -a args=()
	[[ -n $home ]] && args+=(--home "$home")
	args+=(ls)
	case $agent in
	auto) ;;
	-* | '') return 0 ;;
	*) args+=(--agent "$agent") ;;
	esac
	"$prog" "${args[@]}" --ids 2>/dev/null </dev/null
}

_agentgc() {
	local -a words=() pos=()
	local i w cw=0 cur opt='' prefix='' cmd='' home='' endopts='' prog
	local IFS=$'\n'

	# COMP_WORDS with "--opt" "=" "value" (bash splits at '=') joined again into one word.
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == = && ${#words[@]} -gt 1 && ${words[-1]} == --[!=]* && ${words[-1]} != *=* ]]; then
			words[-1]+==
			((i == COMP_CWORD)) && cw=$((${#words[@]} - 1))
			if ((i + 1 < ${#COMP_WORDS[@]} && i + 1 <= COMP_CWORD)); then
				i=$((i + 1))
				words[-1]+=${COMP_WORDS[i]}
				((i == COMP_CWORD)) && cw=$((${#words[@]} - 1))
			fi
			continue
		fi
		words+=("$w")
		((i == COMP_CWORD)) && cw=$((${#words[@]} - 1))
	done
	cur=${words[cw]}
	prog=$(_agentgc_unquote "${words[0]}")

	# What is on the line before the word being completed.
	for ((i = 1; i < cw; i++)); do
		w=${words[i]}
		if [[ -n $endopts || $w == - || $w != -* ]]; then
			if [[ -z $cmd ]]; then
				cmd=$w
			else
				pos+=("$w")
			fi
		elif [[ $w == -- ]]; then
			endopts=1
		elif [[ $w == --*=* ]]; then
			[[ ${w%%=*} == --home ]] && home=$(_agentgc_unquote "${w#*=}")
		elif _agentgc_takes_value "$cmd" "$w"; then
			i=$((i + 1))
			if ((i == cw)); then
				opt=$w # its value is the word being completed: "--opt VALUE"
				break
			fi
			[[ $w == --home ]] && home=$(_agentgc_unquote "${words[i]}")
		fi
	done
	COMPREPLY=()

	# The value of an option: "--opt VALUE" or "--opt=VALUE".
	if [[ -z $opt && -z $endopts && $cur == --*=* ]]; then
		opt=${cur%%=*}
		# bash completes only the text after the '=' when '=' breaks words
		[[ $COMP_WORDBREAKS == *=* ]] || prefix=$opt=
		cur=${cur#*=}
	fi
	if [[ -n $opt ]]; then
		case $opt in
		--home | --project)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -d -- "$cur"))
			;;
		--keep)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
			;;
		--color) COMPREPLY=($(compgen -W $'auto\nalways\nnever' -- "$cur")) ;;
		--sort) COMPREPLY=($(compgen -W $'updated\ncreated\nsize' -- "$cur")) ;;
		--by) COMPREPLY=($(compgen -W $'agent\nproject\nkind' -- "$cur")) ;;
		--agent) COMPREPLY=($(compgen -W "$(_agentgc_agents)" -- "$cur")) ;;
		*) return 0 ;; # a number, a duration, a text: nothing to offer
		esac
		if [[ -n $prefix ]]; then
			for i in "${!COMPREPLY[@]}"; do
				COMPREPLY[i]=$prefix${COMPREPLY[i]}
			done
		fi
		return 0
	fi

	# Options: the command's and the global ones. One that takes a value is offered as
	# "--opt=", with no space after it; the others with a space.
	if [[ -z $endopts && $cur == -* ]]; then
		compopt -o nospace 2>/dev/null
		for w in $( (_agentgc_options "$cmd"; [[ -n $cmd ]] && _agentgc_options '') | sort -u); do
			[[ $w == "$cur"* ]] || continue
			if [[ $w == *= ]]; then
				COMPREPLY+=("$w")
			else
				COMPREPLY+=("$w ")
			fi
		done
		return 0
	fi

	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$(_agentgc_commands)" -- "$cur"))
		return 0
	fi
	case $cmd in
	help)
		((${#pos[@]} == 0)) && COMPREPLY=($(compgen -W "$(_agentgc_commands)" -- "$cur"))
		;;
	show | in-use | purge | stop)
		if ((${#pos[@]} == 0)); then
			COMPREPLY=($(compgen -W "$(_agentgc_agents; echo auto)" -- "$cur"))
		elif ((${#pos[@]} == 1)) || [[ $cmd == purge ]]; then
			# purge takes several ids: those already on the line are not offered again
			for w in $(_agentgc_ids "$prog" "${pos[0]}" "$home"); do
				[[ $w == "$cur"* ]] || continue
				for i in "${pos[@]:1}"; do
					[[ $i == "$w" ]] && continue 2
				done
				COMPREPLY+=("$w")
			done
		fi
		;;
	esac
	return 0
}

complete -F _agentgc agentgc
