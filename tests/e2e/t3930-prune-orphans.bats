#!/usr/bin/env bats
# SPEC "ls --orphans", "prune --orphans": what is left of sessions whose record is gone (a
# Claude transcript, an OpenCode session row) is listed with orphan:true and pruned under the
# purge's rules, and nothing that belongs to a session with a record is touched.

load lib
load pr

# The artifacts the manifest gives session $1.
arts_of() { jq -r --arg id "$1" 'select(.id == $id) | .artifacts[]' "$MAN"; }

# A Claude session with a transcript and side files (dirs in file-history/, session-env/...).
claude_full() {
	local id
	for id in $(jq -r 'select(.agent == "claude" and .parent == null) | .id' "$MAN"); do
		if arts_of "$id" | grep -q "/file-history/$id$" && arts_of "$id" | grep -q "/projects/.*/$id$"; then
			echo "$id"
			return 0
		fi
	done
	return 1
}

# An OpenCode root session that has no legacy session file (its record is its row).
oc_row_only() {
	local id
	for id in $(jq -r 'select(.agent == "opencode" and .parent == null) | .id' "$MAN"); do
		if ! find "$HOME" -path "*/storage/session/*" -name "$id.json" | grep -q .; then
			echo "$id"
			return 0
		fi
	done
	return 1
}

oc_db() { find "$HOME" -name opencode.db | head -n1; }

@test "ls --orphans: a Claude session whose transcript is gone is listed with orphan:true, sized as its purge" {
	mk_home 6 0 0 0
	local id
	id=$(claude_full)
	rm "$(arts_of "$id" | grep "/$id.jsonl$")"
	# plain ls does not show it: it has no record
	run -0 --separate-stderr agc --json ls
	json_ok --arg id "$id" 'all(.[]; .id != $id)'
	run -0 --separate-stderr agc --json ls --orphans
	[[ -z $stderr ]]
	json_ok --arg id "$id" 'map(select(.id == $id)) | length == 1 and (.[0] | .orphan == true and .project == null and .bytes > 0)'
	# only that one is an orphan, and the others keep their figures
	json_ok 'map(select(.orphan == true)) | length == 1'
	local bytes
	bytes=$(jq -r --arg id "$id" 'select(.id == $id) | .bytes' <<<"$output")
	run -0 --separate-stderr agc --json purge claude "$id" --dry-run
	json_ok --argjson b "$bytes" '.[0].status == "dry-run" and ([.[0].removed[].bytes] | add) == $b'
	# the table says it too
	run -0 --separate-stderr agc ls --orphans --wide
	[[ $output == *"$id"*"(orphan: record gone)"* ]]
}

@test "prune --orphans: exactly what is left of the orphan goes; every session with a record stays whole" {
	mk_home 6 0 0 0
	local id before after
	id=$(claude_full)
	rm "$(arts_of "$id" | grep "/$id.jsonl$")"
	before=$(home_state)
	run -0 --separate-stderr agc --json prune --orphans --yes
	json_ok --arg id "$id" 'map(select(.status == "purged")) | length == 1 and .[0].id == $id'
	json_ok '.[-1].summary.purged == 1 and .[-1].summary.errors == 0'
	after=$(home_state)
	# what changed is the orphan's (its files, its scratchpad, its history lines), and
	# nothing of it is left
	local arts
	arts=$(arts_of "$id")
	while IFS=$'\t' read -r path _; do
		[[ $path == */.claude/history.jsonl ]] && continue
		grep -qxF -- "$path" <<<"$arts" && continue
		while read -r a; do [[ $path == "$a"/* ]] && continue 2; done <<<"$arts"
		echo "changed, not the orphan's: $path"
		return 1
	done < <(diff <(echo "$before") <(echo "$after") | sed -n 's/^[<>] //p')
	[[ -z $(grep -- "$id" <<<"$after") ]]
	[[ $(grep -c -- "$id" "$HOME/.claude/history.jsonl") == 0 ]]
	while read -r a; do [[ ! -e $a && ! -L $a ]] || { echo "left: $a"; return 1; }; done < <(arts_of "$id")
	# the others are all still listed
	[[ $(roots | wc -l) == 5 ]]
	# and a second run finds nothing
	run -0 --separate-stderr agc --json prune --orphans --yes
	json_ok '.[-1].summary.candidates == 0'
}

@test "prune --orphans: an old session with its transcript is not an orphan, whatever its age" {
	mk_home 4 0 0 0
	local before
	before=$(home_state)
	run -0 --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok '.[-1].summary.candidates == 0 and .[-1].summary.purged == 0'
	diff <(echo "$before") <(home_state)
}

@test "ls --orphans: a projects dir that cannot be listed lists no Claude orphan, and says so" {
	mk_home 6 0 0 0
	local id key
	id=$(claude_full)
	rm "$(arts_of "$id" | grep "/$id.jsonl$")"
	key=$(basename "$(dirname "$(arts_of "$id" | grep "/projects/.*/$id$")")")
	# a transcript in a dir whose listing fails could be any session's record
	export AGC_FAULT_READDIR=$key
	run -0 --separate-stderr agc_faulty --json ls --orphans
	[[ $stderr == *"claude orphans not listed: cannot list 'projects/$key'"* ]]
	json_ok 'all(.[]; .orphan != true)'
	local before
	before=$(home_state)
	run --separate-stderr agc_faulty --json prune --orphans --yes
	json_ok '.[-1].summary.purged == 0'
	diff <(echo "$before") <(home_state)
}

@test "R5 prune --orphans: an orphan a process names is live: listed live, skipped, kept" {
	mk_home 4 0 0 0
	local id
	id=$(claude_full)
	rm "$(arts_of "$id" | grep "/$id.jsonl$")"
	spawn_argv --resume "$id"
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$id" 'any(.[]; .id == $id and .orphan == true and .live == true)'
	run -0 --separate-stderr agc --json prune --orphans --yes
	json_ok --arg id "$id" 'any(.[]; .id == $id and .status == "skipped" and .reason == "live")'
	[[ -d $(arts_of "$id" | grep "/file-history/$id$") ]]
}

@test "ls and prune --orphans: OpenCode rows of a session whose row is gone go; no other session's row changes" {
	mk_home 0 4 0 0
	local id db others_before
	id=$(oc_row_only)
	db=$(oc_db)
	# the agent's own delete cascades; one that did not (foreign keys off) leaves the rows
	sqlite3 "$db" "PRAGMA foreign_keys = OFF; DELETE FROM session WHERE id = '$id';"
	[[ $(sqlite3 "$db" "SELECT count(*) FROM message WHERE session_id = '$id'") -gt 0 ]]
	others_before=$(sqlite3 "$db" "SELECT session_id, count(*) FROM message WHERE session_id != '$id' GROUP BY 1;
		SELECT session_id, count(*) FROM part WHERE session_id != '$id' GROUP BY 1; SELECT count(*) FROM session;")
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$id" 'map(select(.id == $id)) | length == 1 and (.[0] | .orphan == true and .agent == "opencode" and .bytes > 0)'
	local bytes
	bytes=$(jq -r --arg id "$id" 'select(.id == $id) | .bytes' <<<"$output")
	run -0 --separate-stderr agc --json purge opencode "$id" --dry-run
	json_ok --argjson b "$bytes" '([.[0].removed[].bytes] | add) == $b'
	run -0 --separate-stderr agc --json prune --orphans --yes
	json_ok --arg id "$id" 'map(select(.status == "purged")) | length == 1 and .[0].id == $id'
	[[ $(sqlite3 "$db" "SELECT count(*) FROM message WHERE session_id = '$id'") == 0 ]]
	[[ $(sqlite3 "$db" "SELECT count(*) FROM part WHERE session_id = '$id'") == 0 ]]
	[[ $(sqlite3 "$db" "SELECT session_id, count(*) FROM message WHERE session_id != '$id' GROUP BY 1;
		SELECT session_id, count(*) FROM part WHERE session_id != '$id' GROUP BY 1; SELECT count(*) FROM session;") == "$others_before" ]]
	[[ $(roots | wc -l) == 4 ]] || [[ $(roots | wc -l) == 3 ]]
	run -0 --separate-stderr agc --json ls --orphans
	json_ok 'all(.[]; .orphan != true)'
}

@test "ls --orphans: a legacy OpenCode message dir of no session is an orphan; a session's legacy file is a record" {
	mk_home 0 3 0 0
	local data ghost=ses_0000ghostorphan1xyzAB
	data=$(dirname "$(oc_db)")
	mkdir -p "$data/storage/message/$ghost" "$data/storage/part/msg_ghost1"
	printf '{"id":"msg_ghost1","sessionID":"%s","role":"user"}' "$ghost" >"$data/storage/message/$ghost/msg_ghost1.json"
	printf '{"id":"prt_1","messageID":"msg_ghost1","sessionID":"%s","type":"text","text":"hi"}' "$ghost" >"$data/storage/part/msg_ghost1/prt_1.json"
	touch -d "@$((NOW - 5 * 86400))" "$data/storage/message/$ghost" "$data/storage/message/$ghost/msg_ghost1.json" \
		"$data/storage/part/msg_ghost1" "$data/storage/part/msg_ghost1/prt_1.json"
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$ghost" 'any(.[]; .id == $id and .orphan == true and .bytes > 0)'
	json_ok 'map(select(.orphan == true)) | length == 1'
	run -0 --separate-stderr agc --json prune --orphans --yes
	json_ok --arg id "$ghost" 'any(.[]; .id == $id and .status == "purged")'
	[[ ! -e $data/storage/message/$ghost && ! -e $data/storage/part/msg_ghost1 ]]
	[[ $(roots | wc -l) == 3 ]]
}

@test "ls --orphans: an OpenCode store that cannot be read lists no OpenCode orphan" {
	mk_home 0 3 0 0
	local id db
	id=$(oc_row_only)
	db=$(oc_db)
	sqlite3 "$db" "PRAGMA foreign_keys = OFF; DELETE FROM session WHERE id = '$id';"
	# a channel's database that is no database: its sessions cannot be told
	echo "not a database" >"$(dirname "$db")/opencode-beta.db"
	run --separate-stderr agc --json ls --orphans
	[[ $stderr == *"opencode orphans not listed: cannot read"*"opencode-beta.db"* ]]
	json_ok 'all(.[]; .orphan != true)'
	run --separate-stderr agc --json prune --orphans --yes
	json_ok '.[-1].summary.purged == 0'
	[[ $(sqlite3 "$db" "SELECT count(*) FROM message WHERE session_id = '$id'") -gt 0 ]]
}

@test "ls and prune --orphans: a Codex thread whose rollout is gone: its rows, snapshot and marker go; no other thread's" {
	mk_home 0 0 4 0
	local id sq before_other
	id=$(jq -r 'select(.agent == "codex" and .parent == null) | .id' "$MAN" | head -n1)
	# its row is on record in the threads table; the rollout is what Codex resumes from
	rm "$(arts_of "$id" | grep '/rollout-')"
	sq=$(find "$HOME/.codex" -maxdepth 1 -name 'state_*.sqlite' | head -n1)
	[[ $(sqlite3 "$sq" "SELECT count(*) FROM threads WHERE id = '$id'") == 1 ]]
	before_other=$(sqlite3 "$sq" "SELECT id FROM threads WHERE id != '$id' ORDER BY 1")
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$id" 'map(select(.id == $id)) | length == 1 and (.[0] | .orphan == true and .agent == "codex" and .bytes > 0)'
	json_ok 'map(select(.orphan == true)) | length == 1'
	local bytes
	bytes=$(jq -r --arg id "$id" 'select(.id == $id) | .bytes' <<<"$output")
	run -0 --separate-stderr agc --json purge codex "$id" --dry-run
	json_ok --argjson b "$bytes" '([.[0].removed[].bytes] | add) == $b'
	run -0 --separate-stderr agc --json prune --orphans --yes
	json_ok --arg id "$id" 'map(select(.status == "purged")) | length == 1 and .[0].id == $id'
	[[ $(sqlite3 "$sq" "SELECT count(*) FROM threads WHERE id = '$id'") == 0 ]]
	[[ $(sqlite3 "$sq" "SELECT id FROM threads WHERE id != '$id' ORDER BY 1") == "$before_other" ]]
	# (a prefix twin <id>x.<n>.sh is another thread's: it stays)
	[[ -z $(find "$HOME/.codex/shell_snapshots" "$HOME/.codex/tui-thread-reference-capabilities" \( -name "$id.*" -o -name "$id" \)) ]]
	[[ $(roots | wc -l) == 3 ]]
}

@test "Codex shell snapshots left half-written (<id>.tmp-<n>): a thread's go with its purge; one of no record is an orphan, pruned; look-alikes stay" {
	mk_home 0 0 3 0
	local id side=0e3c5d4a-1b2c-4d5e-8f90-a1b2c3d4e5f6 s=$HOME/.codex/shell_snapshots
	id=$(jq -r 'select(.agent == "codex" and .parent == null) | .id' "$MAN" | head -n1)
	mkdir -p "$s"
	# what Codex writes while it makes a snapshot: the environment, keys included
	echo 'declare -x OPENAI_API_KEY="sk-thread"' >"$s/$id.tmp-4242"
	echo 'declare -x OPENAI_API_KEY="sk-side"' >"$s/$side.tmp-17"
	# not snapshots of either: no digits, a letter after them, a prefix twin
	echo x >"$s/$id.tmp-"
	echo x >"$s/$id.tmp-12a"
	echo x >"$s/${id}x.tmp-3"
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$side" 'map(select(.orphan == true)) | length == 1 and .[0].id == $id and .[0].bytes > 0'
	run -0 --separate-stderr agc --json purge codex "$id"
	json_ok --arg f "$s/$id.tmp-4242" '[.[0].removed[].path] | index($f) != null'
	assert_gone "$s/$id.tmp-4242"
	assert_exists "$s/$side.tmp-17" "$s/$id.tmp-" "$s/$id.tmp-12a" "$s/${id}x.tmp-3"
	run -0 --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok --arg id "$side" 'map(select(.status == "purged")) | length == 1 and .[0].id == $id'
	assert_gone "$s/$side.tmp-17"
	assert_exists "$s/$id.tmp-" "$s/$id.tmp-12a" "$s/${id}x.tmp-3"
}

@test "ls --orphans: a Codex thread whose rollout lies outside the dirs Codex lists is no orphan" {
	mk_home 0 0 3 0
	local id sq moved=$BATS_TEST_TMPDIR/elsewhere
	id=$(jq -r 'select(.agent == "codex" and .parent == null) | .id' "$MAN" | head -n1)
	sq=$(find "$HOME/.codex" -maxdepth 1 -name 'state_*.sqlite' | head -n1)
	mkdir -p "$moved"
	mv "$(arts_of "$id" | grep '/rollout-')" "$moved/rollout.jsonl"
	sqlite3 "$sq" "UPDATE threads SET rollout_path = '$moved/rollout.jsonl' WHERE id = '$id'"
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$id" 'all(.[]; .id != $id)'
	# and a dir of rollouts that cannot be read lists none
	rm "$moved/rollout.jsonl"
	local day
	day=$(basename "$(dirname "$(jq -r 'select(.agent == "codex") | .artifacts[]' "$MAN" | grep '/rollout-' | head -n1)")")
	export AGC_FAULT_READDIR=$day
	run --separate-stderr agc_faulty --json ls --orphans
	[[ $stderr == *"codex orphans not listed"* ]]
	json_ok 'all(.[]; .orphan != true)'
}

@test "ls and prune --orphans: Cursor tracking rows of a chat that is gone go; no chat's rows" {
	mk_home 0 0 0 3
	local db=$HOME/.cursor/ai-tracking/ai-code-tracking.db gone=5b1c2a3e-0f1d-4e2a-9c3b-7d6e5f4a3b2c before
	sqlite3 "$db" "INSERT INTO conversation_summaries (conversationId, title) VALUES ('$gone', 'a chat whose dirs are gone')"
	# the rows of the chats that are listed (the generated home has an orphan row of its own)
	local chats
	chats=$(agc ls --json | jq -r '"\u0027" + .id + "\u0027"' | paste -sd,)
	before=$(sqlite3 "$db" "SELECT conversationId, count(*) FROM conversation_summaries WHERE conversationId IN ($chats) GROUP BY 1")
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$gone" 'any(.[]; .id == $id and .orphan == true and .agent == "cursor" and .bytes > 0)'
	run -0 --separate-stderr agc --json prune --orphans --yes
	json_ok --arg id "$gone" 'any(.[]; .id == $id and .status == "purged")'
	[[ $(sqlite3 "$db" "SELECT count(*) FROM conversation_summaries WHERE conversationId = '$gone'") == 0 ]]
	[[ $(sqlite3 "$db" "SELECT conversationId, count(*) FROM conversation_summaries WHERE conversationId IN ($chats) GROUP BY 1") == "$before" ]]
	[[ -n $before ]]
	[[ $(roots | wc -l) == 3 ]]
}

@test "ls --orphans: a projects dir (or a key dir in it) that is a link leading nowhere lists no Claude orphan" {
	mk_home 4 0 0 0
	local out=$BATS_TEST_TMPDIR/disk before
	# projects/ on a disk that is not mounted: its transcripts are not gone, only unseen
	mv "$HOME/.claude/projects" "$out"
	ln -s "$BATS_TEST_TMPDIR/not-mounted" "$HOME/.claude/projects"
	before=$(home_state)
	run -0 --separate-stderr agc --json ls --orphans
	[[ $stderr == *"claude orphans not listed"* ]]
	json_ok 'all(.[]; .orphan != true)'
	run --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok '.[-1].summary.purged == 0'
	diff <(echo "$before") <(home_state)
	# the same for one key dir
	rm "$HOME/.claude/projects"
	mv "$out" "$HOME/.claude/projects"
	local key
	key=$(ls "$HOME/.claude/projects" | head -n1)
	mv "$HOME/.claude/projects/$key" "$out"
	ln -s "$BATS_TEST_TMPDIR/not-mounted" "$HOME/.claude/projects/$key"
	run -0 --separate-stderr agc --json ls --orphans
	[[ $stderr == *"claude orphans not listed"* ]]
	json_ok 'all(.[]; .orphan != true)'
}

@test "ls --orphans: an id with only temp dirs is no Claude orphan (the temp dir is shared by every config dir)" {
	mk_home 4 0 0 0
	# another profile: a config dir with no transcript, the same temp dir
	mkdir -p "$BATS_TEST_TMPDIR/work/projects"
	run -0 --separate-stderr env CLAUDE_CONFIG_DIR="$BATS_TEST_TMPDIR/work" "$AGENTGC" --json ls --orphans --agent claude
	json_ok 'all(.[]; .orphan != true)'
	local before
	before=$(home_state)
	run -0 --separate-stderr env CLAUDE_CONFIG_DIR="$BATS_TEST_TMPDIR/work" "$AGENTGC" --json prune --orphans --agent claude --settle 0s --yes
	diff <(echo "$before") <(home_state)
}

@test "ls --orphans: a legacy OpenCode project dir that is a link leading nowhere lists no OpenCode orphan" {
	mk_home 0 3 0 0
	local data pd ghost=ses_0000ghostorphan2xyzAB
	data=$(dirname "$(oc_db)")
	mkdir -p "$data/storage/message/$ghost" "$data/storage/session"
	printf '{"id":"msg_g2","sessionID":"%s","role":"user"}' "$ghost" >"$data/storage/message/$ghost/msg_g2.json"
	ln -s "$BATS_TEST_TMPDIR/not-mounted" "$data/storage/session/0123abcd"
	run -0 --separate-stderr agc --json ls --orphans
	[[ $stderr == *"opencode orphans not listed"* ]]
	json_ok 'all(.[]; .orphan != true)'
	[[ -d $data/storage/message/$ghost ]]
}

@test "prune --orphans: a stale registry entry naming an orphan is no record of it: both go" {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --now "$NOW" --quiet --manifest "$MAN" --claude 4 --stale 1
	mkdir -p "$TMPDIR"
	local reg id
	reg=$(ls "$HOME"/.claude/sessions/*.json | head -n1)
	id=$(jq -r .sessionId "$reg")
	[[ -n $id && $id != null ]]
	rm "$(arts_of "$id" | grep "/$id.jsonl$")"
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg id "$id" 'map(select(.id == $id)) | length == 1 and .[0].orphan == true'
	run -0 --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok --arg id "$id" 'map(select(.status == "purged")) | length == 1 and .[0].id == $id'
	json_ok '.[-1].summary.skipped.recorded == 0'
	# the registry entry (a dead pid's) went with it, and no other session lost anything
	[[ ! -e $reg ]]
	[[ $(roots | wc -l) == 3 ]]
}

@test "ls --orphans: a dot-named dir in projects/ (never listed, may hold transcripts) lists no Claude orphan" {
	mk_home 6 0 0 0
	local id before
	id=$(claude_full)
	# the transcript moved where neither ls nor purge looks: not gone, only unseen
	mkdir -p "$HOME/.claude/projects/.stash"
	mv "$(arts_of "$id" | grep "/$id.jsonl$")" "$HOME/.claude/projects/.stash/"
	run -0 --separate-stderr agc --json ls --orphans
	[[ $stderr == *"claude orphans not listed"* ]]
	json_ok 'all(.[]; .orphan != true)'
	before=$(home_state)
	run --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok '.[-1].summary.purged == 0'
	diff <(echo "$before") <(home_state)
	# a plain file of that name hides nothing
	rm -r "$HOME/.claude/projects/.stash"
	touch "$HOME/.claude/projects/.DS_Store"
	run -0 --separate-stderr agc --json ls --orphans
	[[ $stderr != *"claude orphans not listed"* ]]
}

@test "R5 prune: a stale registry entry rewritten in place after discovery (its pid reused) is kept, and so is the live session it names" {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --now "$NOW" --quiet --manifest "$MAN" --claude 4 --stale 1
	mkdir -p "$TMPDIR"
	local reg id other pid ps hook=$BATS_TEST_TMPDIR/hook.sh
	reg=$(ls "$HOME"/.claude/sessions/*.json | head -n1)
	id=$(jq -r .sessionId "$reg")
	rm "$(arts_of "$id" | grep "/$id.jsonl$")" "$HOME"/.claude/sessions/*.key
	other=$(jq -r --arg id "$id" 'select(.agent == "claude" and .parent == null and .id != $id) | .id' "$MAN" | head -n1)
	sleep 1000 </dev/null >/dev/null 2>&1 &
	pid=$!
	echo "$pid" >>"$PIDS_FILE"
	ps=$(proc_start "$pid")
	# at discovery the entry is stale: its pid runs, but another process (procStart differs)
	jq -c --argjson p "$pid" '.pid = $p | .procStart = "1"' "$reg" >"$HOME/.claude/sessions/$pid.json"
	rm "$reg"
	reg=$HOME/.claude/sessions/$pid.json
	# then the process that has the pid now registers its own session in the same file
	cat >"$hook" <<-EOF
		printf '{"pid":%d,"sessionId":"%s","cwd":"/","startedAt":%d,"procStart":"%s","version":"2.1.332","kind":"interactive","status":"idle"}\n' \
			$pid '$other' $((NOW * 1000)) '$ps' >'$reg'
	EOF
	export AGENTGC_TEST_PRUNE_DISCOVERED="sh '$hook'"
	run --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok --arg id "$id" 'any(.[]; .id == $id and .status != "purged")'
	[[ -f $reg ]]
	grep -q -- "$other" "$reg"
	run -4 --separate-stderr agc --json in-use claude "$other"
	# the same in a run of every session: the live one the rewritten entry names stays whole
	unset AGENTGC_TEST_PRUNE_DISCOVERED
	jq -c '.procStart = "1"' "$reg" >"$reg.new" && mv "$reg.new" "$reg"
	sed -i "s/$other/$id/" "$reg"
	export AGENTGC_TEST_PRUNE_DISCOVERED="sh '$hook'"
	run --separate-stderr agc --json prune --older-than 0s --settle 0s --yes
	json_ok --arg o "$other" 'any(.[]; .id == $o and .status == "skipped" and .reason == "live")'
	[[ -f $reg ]]
	[[ -n $(arts_of "$other" | grep "/$other.jsonl$") && -f $(arts_of "$other" | grep "/$other.jsonl$") ]]
}

@test "ls: a child whose parent's record is gone is a root (parent_gone); prune takes it by its own age, then the orphan parent goes" {
	mk_home 0 2 2 0 family
	local op oc xp xc db rollout
	read -r oc op < <(fam_opencode)
	read -r xc xp < <(fam_codex)
	[[ -n $oc && -n $op && -n $xc && -n $xp ]]
	db=$(oc_db)
	# a parent deleted without its cascade (foreign keys off), a parent rollout removed by hand
	sqlite3 "$db" "PRAGMA foreign_keys = OFF; DELETE FROM session WHERE id = '$op';"
	rollout=$(arts_of "$xp" | grep '/rollout-')
	rm "$rollout"
	run -0 --separate-stderr agc --json ls
	json_ok --arg c "$oc" --arg p "$op" 'any(.[]; .id == $c and .parent == $p and .parent_gone == true)'
	json_ok --arg c "$xc" --arg p "$xp" 'any(.[]; .id == $c and .parent == $p and .parent_gone == true)'
	# a child whose parent is on record stays a child
	json_ok 'all(.[]; .parent == null or .parent_gone == true)'
	run -0 --separate-stderr agc ls
	[[ $output == *"(sub-session: parent gone)"* ]]
	# a store that cannot be read may hold the parent's row: the child stays a child then
	echo 'not a database' >"$(dirname "$db")/opencode-beta.db"
	run --separate-stderr agc --json ls --agent opencode
	json_ok --arg c "$oc" 'all(.[]; .id != $c)'
	rm "$(dirname "$db")/opencode-beta.db"
	# the orphan parent is what is left of it: the child on record is counted as its own root
	# (its size is checked against the one it has once the child is gone, below)
	run -0 --separate-stderr agc --json ls --orphans
	local ob xb
	ob=$(jq -r --arg p "$op" 'select(.id == $p and .orphan) | .bytes' <<<"$output")
	xb=$(jq -r --arg p "$xp" 'select(.id == $p and .orphan) | .bytes' <<<"$output")
	[[ -n $ob && -n $xb ]] && ((ob > 0 && xb > 0))
	# prune --orphans leaves an orphan whose child is on record ("recorded")
	run -0 --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok --arg p "$op" 'any(.[]; .id == $p and .status == "skipped" and .reason == "recorded")'
	[[ $(sqlite3 "$db" "SELECT count(*) FROM session WHERE id = '$oc'") == 1 ]]
	[[ -n $(find "$HOME/.codex" -name "*$xc*.jsonl") ]]
	# an age prune reaches the children now, as roots, with their own descendants
	run -0 --separate-stderr agc --json prune --older-than 0s --settle 0s --yes
	json_ok --arg c "$oc" 'any(.[]; .id == $c and .status == "purged")'
	json_ok --arg c "$xc" 'any(.[]; .id == $c and .status == "purged")'
	[[ $(sqlite3 "$db" "SELECT count(*) FROM session WHERE id = '$oc' OR parent_id = '$oc'") == 0 ]]
	[[ -z $(find "$HOME/.codex" -name "*$xc*.jsonl") ]]
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg p "$op" --argjson b "$ob" 'any(.[]; .id == $p and .orphan and .bytes == $b)'
	json_ok --arg p "$xp" --argjson b "$xb" 'any(.[]; .id == $p and .orphan and .bytes == $b)'
	# and then the orphan parents go
	run -0 --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok --arg p "$op" 'any(.[]; .id == $p and .status == "purged")'
	json_ok --arg p "$xp" 'any(.[]; .id == $p and .status == "purged")'
	run -0 --separate-stderr agc --json ls --orphans
	[[ -z $output ]]
}

# A Codex root with a sub-agent, and an OpenCode root with a child: "CHILD PARENT" of each.
fam_codex() {
	jq -r 'select(.agent == "codex" and .parent != null) | "\(.id) \(.parent)"' "$MAN" |
		while read -r c p; do
			[[ $(jq -r --arg p "$p" 'select(.id == $p) | .parent' "$MAN") == null ]] && echo "$c $p" && break
		done
}
fam_opencode() {
	jq -r 'select(.agent == "opencode" and .parent != null) | "\(.id) \(.parent)"' "$MAN" |
		while read -r c p; do
			[[ $(jq -r --arg p "$p" 'select(.id == $p) | .parent' "$MAN") == null ]] && echo "$c $p" && break
		done
}

@test "ls: a parent that may still be on record keeps its child a child (a linked or moved rollout, a store that cannot be reached); prune leaves the family" {
	mk_home 0 2 2 0 family
	local xc xp oc op rollout sq out=$BATS_TEST_TMPDIR/outside
	read -r xc xp < <(fam_codex)
	read -r oc op < <(fam_opencode)
	[[ -n $xc && -n $xp && -n $oc && -n $op ]]
	mkdir -p "$out"
	# a parent rollout that is a link (the index lists regular files only): Codex may read it
	# (its row names no path: the link alone keeps it)
	sq=$(find "$HOME/.codex" -maxdepth 1 -name 'state_*.sqlite' | head -n1)
	sqlite3 "$sq" "UPDATE threads SET rollout_path = '' WHERE id = '$xp'"
	rollout=$(arts_of "$xp" | grep '/rollout-')
	mv "$rollout" "$out/"
	ln -s "$out/$(basename "$rollout")" "$rollout"
	run -0 --separate-stderr agc --json ls
	json_ok --arg c "$xc" 'all(.[]; .id != $c)'
	# moved away, with threads.rollout_path naming where it is now
	rm "$rollout"
	sqlite3 "$sq" "UPDATE threads SET rollout_path = '$out/$(basename "$rollout")' WHERE id = '$xp'"
	run -0 --separate-stderr agc --json ls
	json_ok --arg c "$xc" 'all(.[]; .id != $c)'
	run -0 --separate-stderr agc --json prune --agent codex --older-than 0s --settle 0s --yes
	[[ -n $(find "$HOME/.codex" -name "*$xc*.jsonl") ]]
	# an OpenCode store that is a link leading nowhere (a disk not mounted) may hold the parent
	sqlite3 "$(oc_db)" "PRAGMA foreign_keys = OFF; DELETE FROM session WHERE id = '$op';"
	ln -s "$out/gone/opencode.db" "$(dirname "$(oc_db)")/opencode-beta.db"
	run --separate-stderr agc --json ls --agent opencode
	[[ $stderr == *"opencode-beta.db"* ]]
	json_ok --arg c "$oc" 'all(.[]; .id != $c)'
	run --separate-stderr agc --json prune --agent opencode --older-than 0s --settle 0s --yes
	[[ $(sqlite3 "$(oc_db)" "SELECT count(*) FROM session WHERE id = '$oc'") == 1 ]]
	# gone for good: the child is a root
	rm "$(dirname "$(oc_db)")/opencode-beta.db"
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok --arg c "$oc" 'any(.[]; .id == $c and .parent_gone == true)'
}

@test "ls: an OpenCode parent in \$OPENCODE_DB behind a dir that cannot be read keeps its child a child" {
	nobody_setup
	mk_home 0 2 0 0 family
	local oc op other=$NB/other
	read -r oc op < <(fam_opencode)
	[[ -n $oc && -n $op ]]
	mkdir -p "$other"
	# the parent's row in the other store only
	sqlite3 "$(oc_db)" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
	cp "$(oc_db)" "$other/store.db"
	sqlite3 "$(oc_db)" "PRAGMA foreign_keys = OFF; DELETE FROM session WHERE id = '$op';"
	nobody_own
	export OPENCODE_DB=$other/store.db
	run -0 --separate-stderr agc_nobody --json ls --agent opencode
	json_ok --arg c "$oc" 'all(.[]; .id != $c)'
	chmod 000 "$other"
	run --separate-stderr agc_nobody --json ls --agent opencode
	chmod 755 "$other"
	json_ok --arg c "$oc" 'all(.[]; .id != $c)'
	unset OPENCODE_DB
	run -0 --separate-stderr agc_nobody --json ls --agent opencode
	json_ok --arg c "$oc" 'any(.[]; .id == $c and .parent_gone == true)'
	nobody_teardown
}
