#!/usr/bin/env bats
# SPEC "prune": --budget (a zero budget removes nothing; a small one makes progress in every
# agent across runs, which converge), a last activity that cannot be told, and a keep list
# whose relations cannot be read.

load lib
load pr

@test "prune --budget 0s: removes nothing, exits 75 and says how many remain" {
	mk_home 3 2 2 2
	home_state >"$BATS_TEST_TMPDIR/before"
	run -75 --separate-stderr agc --json prune --older-than 1d --budget 0s --yes
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
	json_ok 'length == 1 and .[0].summary.budget_out == true and .[0].summary.remaining == 9 and
		.[0].summary.purged == 0'
	run -75 --separate-stderr agc prune --older-than 1d --budget 0s --yes
	[[ $output == *"the budget ran out: 9 candidates left; run prune again"* ]]
}

@test "prune --budget: a small budget makes progress in every agent across runs, and the runs converge to 0" {
	mk_home 3 3 3 3
	local run_no=0 rc agents_seen="" last
	while :; do
		run_no=$((run_no + 1))
		((run_no <= 20))
		run --separate-stderr agc --json prune --older-than 1d --budget 1ms --yes
		rc=$status
		[[ $rc == 75 || $rc == 0 ]]
		# every run that ran out removed at least one session first
		# 1ms is over before the first removal ends: each run removes one session, then stops
		[[ $run_no -gt 1 || $rc == 75 ]]
		if [[ $rc == 75 ]]; then
			json_ok '.[-1].summary.purged == 1 and .[-1].summary.remaining >= 1'
			[[ $(cat "$XDG_STATE_HOME/agentgc/prune-next") == $(jq -r -s '.[-1].summary.next_agent' <<<"$output") ]]
		fi
		if ((run_no <= 4)); then
			last=$(jq -r 'select(.status == "purged") | .agent' <<<"$output" | sort -u)
			agents_seen+=" $last"
		fi
		[[ $rc == 0 ]] && break
	done
	# the first four runs each began with another agent: all four made progress
	for a in claude codex cursor opencode; do
		[[ " $agents_seen " == *" $a "* ]]
	done
	[[ -z $(roots) ]]
	# the state file is the agent's name alone, private, and no temp file is left beside it
	[[ $(stat -c %a "$XDG_STATE_HOME/agentgc/prune-next") == 600 ]]
	[[ $(ls -A "$XDG_STATE_HOME/agentgc") == prune-next ]]
}

@test "prune: an old session holding a mount point cannot tell its last activity: unsettled, left whole" {
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare -m --propagation private true 2>/dev/null || skip "cannot make a private mount namespace here"
	local cwd id k sdir
	cwd=$(mk_project proj)
	id=$(new_uuid)
	k=$(pkey "$cwd")
	mk_transcript "$id" "$cwd" "an old one" $((NOW - 40 * 86400))
	sdir=$C/projects/$k/$id
	mkdir -p "$sdir/tool-results/bound" "$OUT/keep"
	echo 'not the session' >"$OUT/keep/precious.txt"
	touch -d "@$((NOW - 40 * 86400))" "$sdir/tool-results/bound" "$sdir/tool-results" "$sdir" "$OUT/keep/precious.txt"
	unshare -m --propagation private bash -c '
		mount --bind "$1" "$2" || exit 100
		"$AGENTGC" --json prune --agent claude --older-than 1d --yes >"$3/out.json" 2>"$3/err.txt"
		echo $? >"$3/rc"
	' _ "$OUT/keep" "$sdir/tool-results/bound" "$BATS_TEST_TMPDIR" || [[ $? != 100 ]] || skip "cannot bind-mount here"
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	[[ $(cat "$BATS_TEST_TMPDIR/rc") == 0 ]]
	json_ok --arg id "$id" 'any(.[]; .id == $id and .status == "skipped" and .reason == "unsettled")'
	[[ -f $C/projects/$k/$id.jsonl && -d $sdir/tool-results/bound && -f $OUT/keep/precious.txt ]]
}

@test "prune --keep: Codex relations that cannot be read prune no Codex session, and say so" {
	mk_home 3 0 3 0
	local keep=$BATS_TEST_TMPDIR/keep.txt c1 x1 rollouts
	c1=$(jq -r 'select(.agent == "claude") | .id' "$MAN" | head -n1)
	x1=$(jq -r 'select(.agent == "codex") | .id' "$MAN" | head -n1)
	printf '%s\n%s\n' "$c1" "$x1" >"$keep"
	rollouts=$(find "$HOME/.codex/sessions" -type f | sort)
	# the state database, which holds the spawn edges, is not SQLite any more
	printf 'not a database\n%.0s' {1..200} >"$HOME/.codex/state_5.sqlite"
	run -1 --separate-stderr agc --json prune --keep "$keep" --yes
	[[ $stderr == *"no codex session is pruned"* ]]
	[[ $(find "$HOME/.codex/sessions" -type f | sort) == "$rollouts" ]]
	# the other agents went on
	[[ $(roots | awk '$1 == "claude" { print $1, $2 }') == "claude $c1" ]]
	json_ok '.[-1].summary.errors == 1'
}
