#!/usr/bin/env bats
# SPEC "du": bytes per agent and per project, its totals the sums of what ls --orphans reports,
# the bulk no session accounts for, and what compact and prune --older-than 30d would free.

load lib
load pr

# A generated home of every agent with an orphan of Claude's (a session dir without its
# transcript).
du_home() {
	mk_home 5 3 3 3 family
	local id
	id=$(jq -r 'select(.agent == "claude" and .parent == null) | .id' "$MAN" | head -n1)
	rm "$(jq -r --arg id "$id" 'select(.id == $id) | .artifacts[]' "$MAN" | grep "/$id.jsonl$")"
	ORPH=$id
}

@test "du: per agent, its sessions, orphans and bytes are the sums of what ls --orphans reports" {
	du_home
	run -0 --separate-stderr agc --json ls --orphans
	local ls=$output
	run -0 --separate-stderr agc --json du
	local du=$output
	for a in claude codex opencode cursor; do
		local want got
		want=$(jq -s -c --arg a "$a" 'map(select(.agent == $a)) |
			[(map(select(.orphan != true)) | length), (map(select(.orphan == true)) | length),
			 (map(.bytes) | add // 0), (map(.disk) | add // 0),
			 (map(select(.orphan == true) | .bytes) | add // 0)]' <<<"$ls")
		got=$(jq -s -c --arg a "$a" '.[] | select(.agent == $a) | [.sessions, .orphans, .bytes, .disk, .orphan_bytes]' <<<"$du")
		[[ $want == "$got" ]] || { echo "$a: ls says $want, du says $got"; return 1; }
	done
	# the orphan is counted, and the total is the sum of every row
	[[ $(jq -s '.[] | select(.agent == "claude") | .orphans' <<<"$du") == 1 ]]
	[[ $(jq -s '.[-1].total.bytes' <<<"$du") == "$(jq -s 'map(.bytes) | add' <<<"$ls")" ]]
	[[ $(jq -s '.[-1].total.sessions + .[-1].total.orphans' <<<"$du") == "$(jq -s 'length' <<<"$ls")" ]]
}

@test "du: the bulk is what else the agent's dirs hold: sessions and bulk add up to every file there" {
	du_home
	# (SPEC "Sizes": the bytes of files; a link has none)
	# a log of Claude's no session has, and a file of someone else's in the temp dir
	mkdir -p "$HOME/.claude/statsig"
	head -c 12345 /dev/zero >"$HOME/.claude/statsig/cache.bin"
	head -c 777 /dev/zero >"$TMPDIR/not-claude.txt"
	run -0 --separate-stderr agc --json du --agent claude
	local all
	all=$(find "$HOME/.claude" "$TMPDIR/claude-$(id -u)" "$TMPDIR/cc-socks" -type f -printf '%s\n' 2>/dev/null |
		awk '{ s += $1 } END { print s + 0 }')
	json_ok --argjson all "$all" '.[0].bytes + .[0].bulk.bytes == $all'
	json_ok '.[0].bulk.bytes >= 12345'
	run -0 --separate-stderr agc --json du --agent opencode
	all=$(find "$HOME/.local/share/opencode" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	json_ok --argjson all "$all" '.[0].bytes + .[0].bulk.bytes == $all'
}

@test "du: what prune --older-than 30d and compact would free" {
	du_home
	local old
	# the sessions (and orphans) last active more than 30 days ago
	old=$(agc ls --json --orphans --older-than 30d | jq -s 'map(.bytes) | add // 0')
	[[ $old -gt 0 ]]
	# an OpenCode purge leaves free pages for compact to give back
	agc purge opencode "$(jq -r 'select(.agent == "opencode" and .parent == null) | .id' "$MAN" | head -n1)" >/dev/null
	old=$(agc ls --json --orphans --older-than 30d | jq -s 'map(.bytes) | add // 0')
	local free
	free=$(agc --json compact --dry-run | jq -s 'map(.free_bytes + .wal_bytes) | add // 0')
	[[ $free -gt 0 ]]
	run -0 --separate-stderr agc --json du
	json_ok --argjson old "$old" '.[-1].total.would_free.prune_30d == $old'
	json_ok --argjson free "$free" '.[-1].total.would_free.compact == $free'
	json_ok 'all(.[:-1][]; .would_free.prune_30d <= .bytes)'
}

@test "du changes nothing; --by project groups by project; bad options are usage errors" {
	du_home
	home_state >"$BATS_TEST_TMPDIR/before"
	run -0 --separate-stderr agc du
	[[ ${lines[0]} == "AGENT "*"SESSIONS"*"BULK"*"COMPACT"*"PRUNE>30D" ]]
	[[ ${lines[-1]} == total* ]]
	run -0 --separate-stderr agc --json du --by project
	local ls
	ls=$(agc ls --json --orphans)
	# each (agent, project) row is the sum of that project's sessions; the orphan's project is
	# unknown
	json_ok --argjson ls "$(jq -s -c . <<<"$ls")" '.[:-1] | all(.[]; . as $r |
		($ls | map(select(.agent == $r.agent and .project == $r.project)) | map(.bytes) | add) == $r.bytes)'
	json_ok 'any(.[:-1][]; .agent == "claude" and .project == null and .orphans == 1)'
	json_ok --argjson n "$(jq -s 'length' <<<"$ls")" '.[-1].total.sessions + .[-1].total.orphans == $n'
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
	run -2 --separate-stderr agc du --by size
	[[ $stderr == *"--by takes agent, project or kind"* ]]
	run -2 --separate-stderr agc du extra
}

@test "du --by kind: each agent's kinds add up to its sessions, orphans and bulk; each kind is where its files are" {
	du_home
	home_state >"$BATS_TEST_TMPDIR/before"
	run -0 --separate-stderr agc --json du
	local du=$output
	run -0 --separate-stderr agc --json du --by kind
	local kinds=$output
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
	json_ok '.[:-1] | all(.[]; .kind | IN("transcripts", "sub-agents", "side-files", "rows", "temp", "logs", "orphans", "bulk"))'
	for a in claude codex opencode cursor; do
		local want got
		want=$(jq -s -c --arg a "$a" '.[] | select(.agent == $a) | [.bytes + .bulk.bytes, .disk + .bulk.disk, .orphan_bytes, .bulk.bytes]' <<<"$du")
		got=$(jq -s -c --arg a "$a" 'map(select(.agent == $a)) | [(map(.bytes) | add), (map(.disk) | add),
			(map(select(.kind == "orphans") | .bytes) | add // 0), (map(select(.kind == "bulk") | .bytes) | add // 0)]' <<<"$kinds")
		[[ $want == "$got" ]] || { echo "$a: du says $want, du --by kind says $got"; return 1; }
	done
	json_ok '.[-1].total.bytes == (.[:-1] | map(.bytes) | add)'
	# where the files are: the transcripts of Claude are its <S>.jsonl files, and rows only of
	# the agents with databases
	local tr
	tr=$(find "$HOME/.claude/projects" -maxdepth 2 -type f -name '*.jsonl' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	json_ok --argjson t "$tr" 'any(.[]; .agent == "claude" and .kind == "transcripts" and .bytes == $t)'
	# and its sub-agents the files of the subagents/ dirs inside its session dirs
	tr=$(find "$HOME/.claude/projects" -path '*/subagents/*' -not -path "*/$ORPH/*" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	((tr > 0))
	json_ok --argjson t "$tr" 'any(.[]; .agent == "claude" and .kind == "sub-agents" and .bytes == $t)'
	json_ok 'all(.[:-1][]; .agent != "claude" or .kind != "rows")'
	json_ok 'any(.[]; .agent == "opencode" and .kind == "rows" and .bytes > 0)'
	json_ok 'any(.[]; .agent == "codex" and .kind == "sub-agents" and .bytes > 0)'
	json_ok 'any(.[]; .agent == "claude" and .kind == "orphans" and .orphans == 1)'
	run -0 --separate-stderr agc du --by kind
	[[ ${lines[0]} == "AGENT "*"KIND"*"SIZE"*"DISK" ]]
	[[ ${lines[-1]} == total* ]]
}
