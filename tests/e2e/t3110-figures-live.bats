#!/usr/bin/env bats
# SPEC "Output", `live` in `ls`: live is the in-use gate's answer (R5) for every listed
# session, so ls --json says live:true exactly for the sessions `in-use` exits 4 for: a live
# registry entry, an argument naming the session (or a sub-agent or child of it), a process
# running in one of its dirs, one with CLAUDE_CODE_SESSION_ID, one holding one of its files
# or mapping one, an OpenCode database held by a process that is not OpenCode's service.

load lib
load oc

setup() { oc_setup; }

# ls --json (with its extra arguments) and in-use for every session it lists must agree:
# live true exactly where in-use exits 4, false where it exits 0.
ls_agrees_with_in_use() {
	local agent=$1 ls id live rc
	shift
	run -0 --separate-stderr agc --json ls --agent "$agent" "$@"
	ls=$output
	[[ -n $ls ]]
	while IFS=$'\t' read -r id live; do
		run --separate-stderr agc in-use "$agent" "$id"
		rc=$status
		if [[ $live == true && $rc != 4 ]] || [[ $live == false && $rc != 0 ]]; then
			echo "ls says live=$live for $agent $id, in-use exits $rc: $output" >&2
			return 1
		fi
	done < <(jq -r '[.id, .live] | @tsv' <<<"$ls")
}

# The ids ls lists as live.
live_ids() { agc --json ls --agent "$1" "${@:2}" | jq -r 'select(.live) | .id' | sort; }

claude_home() {
	rm -rf "$HOME" "$TMPDIR"
	spawn sleep 1000
	REG_PID=$LAST_PID
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3110 --claude 9 --projects 3 --full \
		--live 1 --live-pid "$REG_PID" --now "$NOW" --manifest "$MAN" --quiet
	mkdir -p "$TMPDIR"
	mapfile -t IDS < <(jq -r 'select(.agent == "claude" and .registry == null) | .id' "$MAN")
	REG=$(jq -r 'select(.agent == "claude" and .registry.kind == "live") | .id' "$MAN")
	[[ ${#IDS[@]} -ge 8 && -n $REG ]]
}

# The project key dir of Claude session $1.
kdir() { printf '%s/projects/%s' "$C" "$(jq -r --arg id "$1" 'select(.id == $id) | .key' "$MAN")"; }

@test "live: every kind of Claude holder makes ls say live exactly where in-use exits 4" {
	claude_home
	local sub want
	# nothing but the registry entry yet
	[[ $(live_ids claude) == "$REG" ]]
	ls_agrees_with_in_use claude

	# --resume on a command line
	spawn_argv --resume "${IDS[0]}"
	# a sub-agent's id on a command line holds its parent
	sub=$(jq -r --arg id "${IDS[1]}" 'select(.id == $id) | .subagents[0]' "$MAN")
	[[ -n $sub && $sub != null ]]
	spawn_argv --agent-id "$sub"
	# the transcript held open
	spawn_holding "$(kdir "${IDS[2]}")/${IDS[2]}.jsonl"
	# a shell whose working directory is inside the session's dir
	spawn bash -c 'cd "$1" && exec sleep 1000' _ "$(kdir "${IDS[3]}")/${IDS[3]}/subagents"
	wait_exec "$LAST_PID" "sleep 1000"
	# a tool Claude started: the session in its environment
	spawn env CLAUDE_CODE_SESSION_ID="${IDS[4]}" sleep 1000
	wait_exec "$LAST_PID" "sleep 1000"
	# a file of the session mapped, its fd closed: a copy of sleep run from its dir
	cp "$(command -v sleep)" "$C/file-history/${IDS[5]}/prog"
	spawn "$C/file-history/${IDS[5]}/prog" 1000
	wait_exec "$LAST_PID" "$C/file-history/${IDS[5]}/prog"

	want=$(printf '%s\n' "$REG" "${IDS[@]:0:6}" | sort)
	[[ $(live_ids claude) == "$want" ]] || { echo "live: $(live_ids claude | tr '\n' ' ') want $want" >&2; return 1; }
	ls_agrees_with_in_use claude
	# the sessions with no holder stay free
	run -0 --separate-stderr agc --json ls --agent claude
	json_ok --arg a "${IDS[6]}" --arg b "${IDS[7]}" 'all(.[]; ((.id == $a or .id == $b) | not) or .live == false) and any(.[]; .id == $a)'
}

@test "live: an OpenCode database held by OpenCode (not its service) makes every session live, as in-use says" {
	oc_fixture --seed 3111 --opencode 4 --opencode-children 2
	ls_agrees_with_in_use opencode --children
	[[ -z $(live_ids opencode --children) ]]

	# the per-user service never counts
	spawn_service
	[[ -z $(live_ids opencode --children) ]]
	ls_agrees_with_in_use opencode --children

	# a TUI holding the database holds every session of it
	spawn_named_holder "$DB" opencode
	run -0 --separate-stderr agc --json ls --agent opencode --children
	json_ok 'length > 4 and all(.live)'
	ls_agrees_with_in_use opencode --children
}

@test "live: a command line naming an OpenCode child holds it and its ancestors, not its siblings" {
	oc_fixture --seed 3112 --opencode 4 --opencode-children 2
	local p k
	p=$(m_pick '.parent == null and (.children | length) > 1')
	k=$(m_get "$p" '.children[-1]')
	[[ -n $k ]]
	spawn_argv --session "$k"
	run -0 --separate-stderr agc --json ls --agent opencode --children
	json_ok --arg p "$p" --arg k "$k" 'any(.id == $p and .live) and any(.id == $k and .live)'
	json_ok '(map(select(.live)) | length) < length'
	ls_agrees_with_in_use opencode --children
}

@test "live: without any holder nothing is live, for either agent" {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3113 --claude 4 --opencode 3 \
		--opencode-children 1 --now "$NOW" --manifest "$MAN" --quiet
	run -0 --separate-stderr agc --json ls --children
	json_ok 'length > 6 and all(.live == false)'
}
