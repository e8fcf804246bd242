#!/usr/bin/env bats
# SPEC "prune": selectors (age, keep list, project), the settle floor, live sessions skipped,
# and the refusals before anything changes, on generated homes of every agent.

load lib
load pr

# The descendants of Codex thread $1 in the manifest, at any depth, one a line.
cx_desc() {
	local id
	for id in $(jq -r --arg p "$1" 'select(.agent == "codex" and .parent == $p) | .id' "$MAN"); do
		echo "$id"
		cx_desc "$id"
	done
}

@test "prune: no selector, and no --yes off a terminal, are usage errors that change nothing" {
	mk_home 3 2 2 2 family
	home_state >"$BATS_TEST_TMPDIR/before"
	run -2 --separate-stderr agc prune --yes
	[[ $stderr == *"prune needs a selector"* ]]
	run -2 --separate-stderr agc prune --older-than 1d </dev/null
	[[ $stderr == *"not on a terminal: give --yes"* ]]
	run -2 --separate-stderr agc prune --older-than 1d --keep - </dev/null
	run -2 --separate-stderr agc prune --older-than soon --yes
	[[ $stderr == *"--older-than takes a duration"* ]]
	run -2 --separate-stderr agc prune --older-than 1d --yes some-id
	[[ $stderr == *"prune selects by options"* ]]
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
}

@test "prune --dry-run lists what would go and changes nothing" {
	mk_home 6 4 4 4 family
	home_state >"$BATS_TEST_TMPDIR/before"
	run -0 --separate-stderr agc --json prune --older-than 30d --dry-run
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
	json_ok '(map(select(.status)) | length > 0) and all(.[] | select(.status); .status == "dry-run")'
	json_ok '.[-1].summary.dry_run == true and .[-1].summary.purged == ([.[] | select(.status == "dry-run")] | length)'
}

@test "prune --older-than: exactly the root sessions older than the age go, of every agent" {
	mk_home 6 4 4 4 family
	local cut=$((NOW - 30 * 86400)) before after
	before=$(roots)
	run -0 --separate-stderr agc --json prune --older-than 30d --yes
	# what went is what ls said was older than the cut; everything else is still listed
	diff <(awk -v c="$cut" '$3 < c { print $1, $2 }' <<<"$before") \
		<(jq -r 'select(.status == "purged") | "\(.agent) \(.id)"' <<<"$output" | sort)
	after=$(roots)
	diff <(awk -v c="$cut" '$3 >= c { print $1, $2, $3 }' <<<"$before") <(echo "$after" | grep .)
	# every agent lost some and kept some: the selection is not by agent
	for a in claude opencode codex cursor; do
		grep -q "^$a " <<<"$after"
		jq -e -s --arg a "$a" 'any(.[]; .agent == $a and .status == "purged")' <<<"$output" >/dev/null
	done
	json_ok '.[-1].summary.errors == 0 and .[-1].summary.partial == 0'
	# and their children went with them: no child of a purged OpenCode session is left
	for id in $(jq -r 'select(.agent == "opencode" and .status == "purged") | .id' <<<"$output"); do
		[[ -z $(agc ls --children --json | jq -r --arg p "$id" 'select(.parent == $p) | .id') ]]
	done
}

@test "prune --older-than DUR: a session's newest file counts, so an old session with a fresh file stays" {
	mk_home 4 0 0 0 family
	local id dir
	id=$(jq -r 'select(.agent == "claude" and .updated < ('"$NOW"' - 20 * 86400) * 1000) | .id' "$MAN" | head -n1)
	[[ -n $id ]]
	dir=$(jq -r --arg id "$id" 'select(.id == $id) | .artifacts[]' "$MAN" | grep "/projects/.*/$id$" || true)
	if [[ -z $dir ]]; then
		dir=$(dirname "$(jq -r --arg id "$id" 'select(.id == $id) | .artifacts[]' "$MAN" | grep "$id.jsonl$")")/$id
		mkdir -p "$dir"
	fi
	mkdir -p "$dir/tool-results"
	echo fresh >"$dir/tool-results/new.txt"
	touch -d "@$((NOW - 3600))" "$dir/tool-results/new.txt"
	run -0 --separate-stderr agc --json prune --agent claude --older-than 1d --yes
	json_ok --arg id "$id" 'all(.[]; .id != $id or .status != "purged")'
	[[ -f $dir/tool-results/new.txt ]]
	agc show claude "$id" >/dev/null
}

@test "prune --settle: nothing younger than the floor goes, whatever the selector" {
	mk_home 6 2 2 2 family
	local young
	young=$(roots | awk -v c="$((NOW - 10 * 86400))" '$3 >= c { print $1, $2 }')
	[[ -n $young ]]
	run -0 --separate-stderr agc --json prune --older-than 0s --settle 10d --yes
	for s in $(tr ' ' ':' <<<"$young"); do
		json_ok --arg a "${s%%:*}" --arg id "${s#*:}" \
			'any(.[]; .agent == $a and .id == $id and .status == "skipped" and .reason == "unsettled")'
	done
	diff <(echo "$young" | sort) <(roots | awk '{ print $1, $2 }')
	json_ok --argjson n "$(grep -c . <<<"$young")" '.[-1].summary.skipped.unsettled == $n'
}

@test "prune --keep: every session not listed goes; listed ones stay, an OpenCode child with its parent, a Codex sub-agent without its parent" {
	mk_home 4 3 3 2 family
	local c1 o1 x1 ochild oparent xchild xparent keep=$BATS_TEST_TMPDIR/keep.txt
	c1=$(jq -r 'select(.agent == "claude") | .id' "$MAN" | head -n1)
	o1=$(jq -r 'select(.agent == "opencode" and .parent == null) | .id' "$MAN" | head -n1)
	x1=$(jq -r 'select(.agent == "codex" and .parent == null) | .id' "$MAN" | head -n1)
	# a child listed alone keeps its parent: purging the parent would take it along
	read -r ochild oparent < <(jq -r 'select(.agent == "opencode" and .parent != null) | "\(.id) \(.parent)"' "$MAN" |
		awk -v o="$o1" '$2 != o' | head -n1)
	read -r xchild xparent < <(jq -r 'select(.agent == "codex" and .parent != null) | "\(.id) \(.root)"' "$MAN" |
		awk -v x="$x1" '$2 != x' | head -n1)
	[[ -n $ochild && -n $oparent && -n $xchild && -n $xparent ]]
	printf '# the sessions the orchestrator still knows\n%s\n\n  %s  \n%s\nnot-an-id\n%s\n%s\n' \
		"$c1" "$o1" "$x1" "$ochild" "$xchild" >"$keep"
	# what the kept Codex sub-agent reaches (its own sub-agents) stays with it; the rest of its
	# parent's closure goes
	local xkept xgone k
	xkept=$(cx_desc "$xchild" | sort)
	xgone=$(comm -23 <(cx_desc "$xparent" | sort) <(printf '%s\n' "$xchild" $xkept | sort))
	[[ -n $xgone ]]
	run -0 --separate-stderr agc --json prune --keep "$keep" --yes
	[[ $stderr == *"line 6: 'not-an-id' is no agent's id: ignored"* ]]
	# an OpenCode child goes only with its parent (SPEC "Relations"): the parent stays whole; a
	# Codex sub-agent is a thread of its own: its parent goes, it stays, a root now
	diff <(printf '%s\n' "claude $c1" "codex $x1" "codex $xchild" "opencode $o1" "opencode $oparent" | sort -u) \
		<(roots | awk '{ print $1, $2 }')
	json_ok --arg p "$oparent" 'any(.[]; .id == $p and .status == "skipped" and .reason == "kept")'
	json_ok --arg p "$xparent" --arg c "$xchild" 'any(.[]; .id == $p and .status == "purged" and
		((.children // []) | index($c) | not) and any(.hints[]; contains($c) and contains("kept")))'
	[[ -n $(find "$HOME/.codex" -name "*$xchild*.jsonl") && -z $(find "$HOME/.codex" -name "*$xparent*.jsonl") ]]
	for k in $xkept; do [[ -n $(find "$HOME/.codex" -name "*$k*.jsonl") ]]; done
	for k in $xgone; do [[ -z $(find "$HOME/.codex" -name "*$k*.jsonl") ]]; done
	agc show opencode "$ochild" >/dev/null
	agc show codex "$xchild" >/dev/null
	# the kept ones are not reported at all
	json_ok --arg id "$c1" 'all(.[]; .id != $id)'
	run -0 --separate-stderr agc --json ls
	json_ok --arg c "$xchild" --arg p "$xparent" 'any(.[]; .id == $c and .parent == $p and .parent_gone == true)'
	# and an empty keep list keeps nothing (but the settle floor)
	run -0 --separate-stderr agc --json prune --keep /dev/null --yes
	[[ -z $(roots) ]]
}

@test "prune --keep -: the ids come on standard input" {
	mk_home 3 2 0 0 family
	local c1
	c1=$(jq -r 'select(.agent == "claude") | .id' "$MAN" | head -n1)
	run -0 --separate-stderr agc --json prune --keep - --yes <<<"$c1"
	[[ $(roots | awk '{ print $1, $2 }') == "claude $c1" ]]
}

@test "prune --project: only the sessions of that directory tree" {
	mk_home 6 3 0 0 family
	local before
	before=$(agc ls --json | jq -r '"\(.agent) \(.id) \(.project)"' | sort)
	run -0 --separate-stderr agc --json prune --project /home/dev/work/proj-1 --yes
	diff <(awk '$3 != "/home/dev/work/proj-1" && $3 !~ "^/home/dev/work/proj-1/" { print $1, $2 }' <<<"$before") \
		<(roots | awk '{ print $1, $2 }')
	json_ok 'map(select(.status == "purged")) | length > 0'
}

@test "R5 prune: a live session is skipped and listed with its holder; the rest go" {
	mk_home 4 0 0 0 family
	local live
	live=$(jq -r 'select(.agent == "claude") | .id' "$MAN" | head -n1)
	spawn_argv --resume "$live"
	run -0 --separate-stderr agc --json prune --older-than 1d --yes
	json_ok --arg id "$live" --argjson pid "$LAST_PID" \
		'any(.[]; .id == $id and .status == "skipped" and .reason == "live" and any(.holders[]; .pid == $pid))'
	json_ok '.[-1].summary.skipped.live == 1'
	[[ $(roots | awk '{ print $2 }') == "$live" ]]
	for f in $(jq -r --arg id "$live" 'select(.id == $id) | .artifacts[]' "$MAN"); do
		[[ -e $f || -L $f ]]
	done
}

@test "R5 prune: a session that becomes live after its discovery is skipped" {
	mk_home 3 0 0 0 family
	local late
	late=$(jq -r 'select(.agent == "claude") | .id' "$MAN" | head -n1)
	# the hook runs between the batch's discovery and its gate
	export AGENTGC_TEST_PRUNE_DISCOVERED="perl -e 'sleep 1000' -- --resume $late </dev/null >/dev/null 2>&1 & echo \$! >>'$PIDS_FILE'"
	run -0 --separate-stderr agc --json prune --older-than 1d --yes
	json_ok --arg id "$late" 'any(.[]; .id == $id and .status == "skipped" and .reason == "live")'
	[[ $(roots | awk '{ print $2 }') == "$late" ]]
}

@test "R5 prune: a registry entry written after the discovery makes its session live: skipped" {
	mk_home 3 0 0 0
	local late hook=$BATS_TEST_TMPDIR/hook.sh
	late=$(jq -r 'select(.agent == "claude" and .parent == null) | .id' "$MAN" | head -n1)
	# a process that names nothing of the session; only the registry says it runs it
	cat >"$hook" <<-EOF
		sleep 1000 </dev/null >/dev/null 2>&1 &
		pid=\$!
		echo \$pid >>'$PIDS_FILE'
		ps=\$(sed 's/.*)//' /proc/\$pid/stat | awk '{print \$20}')
		mkdir -p '$HOME/.claude/sessions'
		printf '{"pid":%d,"sessionId":"%s","cwd":"/","startedAt":%d,"procStart":"%s","version":"2.1.332","kind":"interactive","status":"idle"}\n' \
			"\$pid" '$late' $((NOW * 1000)) "\$ps" >'$HOME/.claude/sessions/'"\$pid.json"
	EOF
	export AGENTGC_TEST_PRUNE_DISCOVERED="sh '$hook'"
	run -0 --separate-stderr agc --json prune --older-than 1d --yes
	json_ok --arg id "$late" 'any(.[]; .id == $id and .status == "skipped" and .reason == "live" and any(.holders[]; .why == "registry"))'
	json_ok '.[-1].summary.purged == 2'
	[[ $(roots | awk '{ print $2 }') == "$late" ]]
}

# CMD on a pseudo-terminal (stdout and stderr both on it), stdin from /dev/null.
on_tty() {
	command -v script >/dev/null || skip "script (util-linux) is not installed: no pseudo-terminal"
	script -qec "$1" /dev/null </dev/null
}

@test "prune: progress in place on a terminal, never in --json or a pipe" {
	mk_home 30 0 0 0 family
	cp -a "$HOME" "$BATS_TEST_TMPDIR/home0"
	run -0 on_tty "$AGENTGC prune --older-than 1d --yes"
	[[ $output == *$'\r'"scanned 30, removed "*", "*" freed, "*"s"$'\033[K'* ]]
	[[ $output == *"pruned 30 sessions"* ]]
	rm -rf "$HOME"
	cp -a "$BATS_TEST_TMPDIR/home0" "$HOME"
	local out=$BATS_TEST_TMPDIR/out.json
	run -0 on_tty "$AGENTGC --json prune --older-than 1d --yes >$out"
	[[ $output != *scanned* ]]
	output=$(cat "$out")
	json_ok 'length == 31 and .[-1].summary.purged == 30'
	rm -rf "$HOME"
	cp -a "$BATS_TEST_TMPDIR/home0" "$HOME"
	run -0 --separate-stderr agc prune --older-than 1d --yes
	[[ $stderr != *scanned* && $output == *"pruned 30 sessions"* ]]
}

@test "prune on a terminal without --yes: shows what would go and asks; no answer changes nothing" {
	mk_home 5 0 0 0 family
	home_state >"$BATS_TEST_TMPDIR/before"
	run -0 on_tty "$AGENTGC prune --older-than 1d"
	[[ $output == *"prune would remove 5 sessions ("*"), for example:"* ]]
	[[ $output == *"remove them? [y/N]"*"nothing changed"* ]]
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
	# yes on the terminal: they go
	run -0 script -qec "$AGENTGC prune --older-than 1d" /dev/null <<<"y"
	[[ $output == *"pruned 5 sessions"* ]]
	[[ -z $(roots) ]]
}
