#!/usr/bin/env bats
# Cursor purge (formats/cursor.md §2, §4): the chat's dir in every bucket, its ACP dir, its
# transcripts with their sub-agents and its rows (and its sub-agents') in the tracking
# database go; everything else stays, another chat of the same bucket included. R2: a bucket
# or a subagents/ dir that is a link is never followed. R6: a tracking database that cannot
# be read refuses the purge with nothing changed; one corrupt store refuses nothing else.

load lib
load cu

setup() { cu_setup; }

# Purge chat ID and check that exactly its artifacts and rows went.
purge_exactly() {
	local id=$1 ids
	ids=$(cu_closure "$id")
	snap before
	cu_rows_except <<<"$ids" >"$BATS_TEST_TMPDIR/rows-before"
	[[ $(cu_rows_of <<<"$ids") -gt 0 || $(m_get "$id" '.rows | add // 0') == 0 ]]
	run -0 --separate-stderr agc --json purge cursor "$id"
	json_ok --arg id "$id" '.[0].status == "purged" and .[0].id == $id and (.[0].residual | length) == 0'
	assert_gone $(m_get "$id" '.artifacts[]')
	[[ $(cu_rows_of <<<"$ids") == 0 ]]
	diff -u "$BATS_TEST_TMPDIR/rows-before" <(cu_rows_except <<<"$ids")
	SNAP_EXCLUDE=$TDB assert_tree_minus before $(m_get "$id" '.artifacts[]')
}

@test "cursor purge: a chat in two buckets with sub-agents: every dir, transcript and row, nothing else" {
	cu_fixture --seed 3821 --projects 3 --cursor 10 --cursor-subagents 3 --cursor-twins 3 --cursor-acp 1
	local id other
	id=$(m_pick '(.children | length) > 0 and (.dirs | length) > 1')
	[[ -n $id ]]
	# another chat of the same bucket keeps everything
	other=$(jq -r --arg id "$id" --arg b "$(m_get "$id" .bucket)" \
		'select(.agent == "cursor" and .bucket == $b and .id != $id) | .id' "$MAN" | head -n1)
	purge_exactly "$id"
	[[ -z $other ]] || assert_exists $(m_get "$other" '.artifacts[]')
	json_ok ".[0].children | length == $(m_get "$id" '.children | length')"
	# a rerun finds nothing
	run -5 agc purge cursor "$id"
	for other in $(m_picks '.kind == "chat" and .store == "ok"'); do
		[[ $other == "$id" ]] || run -0 agc show cursor "$other"
	done
}

@test "cursor purge: each form of transcript, a young store with its WAL, an ACP session and a leftover" {
	cu_fixture --seed 3822 --projects 2 --cursor 8 --cursor-acp 2 --cursor-leftovers 2
	local id t young
	young=$(m_pick '.young == true and (.dirs | length) == 1')
	[[ -s $(m_get "$young" '.dirs[0]')/store.db-wal ]]
	purge_exactly "$young"
	for t in '.txt' '.jsonl'; do
		id=$(jq -r --arg t "$t" --arg y "$young" 'select(.agent == "cursor" and .kind == "chat" and .id != $y and
			any(.transcripts[]; endswith($t))) | .id' "$MAN" | head -n1)
		[[ -n $id ]]
		purge_exactly "$id"
	done
	purge_exactly "$(m_pick '.kind == "acp"')"
	id=$(m_pick '.kind == "leftover"')
	[[ $(ls -A "$(m_get "$id" '.dirs[0]')") == meta.json ]]
	purge_exactly "$id"
}

@test "cursor purge: a dry run and --json say what would go and change nothing; several ids in one run" {
	cu_fixture --seed 3823 --projects 2 --cursor 6 --cursor-subagents 2
	local a b
	a=$(m_pick '(.children | length) > 0')
	b=$(m_pick '(.children | length) == 0 and .kind == "chat"')
	snap before
	run -0 agc --json purge --dry-run cursor "$a"
	json_ok '.[0].status == "dry-run"'
	json_ok "[.[0].removed[] | select(.kind == \"rows\") | .count] | add == $(cu_closure "$a" | cu_rows_of)"
	assert_tree_unchanged before
	run -0 agc purge cursor "$a" "$b"
	assert_gone $(m_get "$a" '.artifacts[]') $(m_get "$b" '.artifacts[]')
	[[ $(printf '%s\n' $(cu_closure "$a") "$b" | cu_rows_of) == 0 ]]
}

@test "cursor purge: a sub-agent alone is refused, naming its parent; nothing changed" {
	cu_fixture --seed 3824 --projects 2 --cursor 4 --cursor-subagents 2
	local p c
	p=$(m_pick '(.children | length) > 0')
	c=$(m_get "$p" '.children[0]')
	snap before
	run -4 --separate-stderr agc purge cursor "$c"
	[[ $stderr == *"sub-agent of cursor session '$p'"* ]]
	assert_tree_unchanged before
}

@test "cursor purge: R2, a bucket that is a link to outside: nothing outside removed, residual symlink" {
	cu_fixture --seed 3825 --projects 2 --cursor 4
	local id d b
	id=$(m_pick '.kind == "chat" and (.dirs | length) == 1')
	d=$(m_get "$id" '.dirs[0]')
	b=${d%/*}
	mv "$b" "$OUT/bucket"
	ln -s "$OUT/bucket" "$b"
	snap before
	run -3 --separate-stderr agc --json purge cursor "$id"
	json_ok --arg p "$d" '.[0].residual | any(.path == $p and .reason == "symlink")'
	assert_outside_unchanged before
	assert_exists "$OUT/bucket/$id/store.db" "$b"
	# the rest of the chat went: its rows and its transcripts
	[[ $(cu_closure "$id" | cu_rows_of) == 0 ]]
}

@test "cursor purge: R2, a subagents/ dir that is a link names no sub-agent: the chats it leads to stay" {
	cu_fixture --seed 3826 --projects 2 --cursor 6 --cursor-subagents 1
	local p victim t
	p=$(m_pick '(.children | length) > 0')
	victim=$(m_pick '.kind == "chat" and (.children | length) == 0 and .store == "ok"')
	t=$(m_get "$p" '.transcripts[0]')
	[[ -d $t/subagents ]]
	# the parent's subagents/ replaced by a link to a dir naming another chat
	mkdir -p "$OUT/sub"
	echo '{}' >"$OUT/sub/$victim.jsonl"
	rm -rf "$t/subagents"
	ln -s "$OUT/sub" "$t/subagents"
	run -0 --separate-stderr agc --json purge cursor "$p"
	json_ok --arg v "$victim" '.[0].children | index($v) == null'
	assert_exists $(m_get "$victim" '.artifacts[]') "$OUT/sub/$victim.jsonl"
	[[ $(cu_rows_of <<<"$victim") == $(m_get "$victim" '.rows | add') ]]
}

@test "cursor purge: R2 R4, a name in a chat's subagents/ that is another chat of its own never takes that chat along" {
	cu_fixture --seed 3829 --projects 2 --cursor 6 --cursor-subagents 1
	local p victim t kids
	p=$(m_pick '(.children | length) > 0')
	victim=$(m_pick '.kind == "chat" and (.children | length) == 0 and .store == "ok"')
	t=$(m_get "$p" '.transcripts[0]')
	[[ -d $t/subagents ]]
	# an empty file planted in the parent's own (real) subagents/, in upper case even
	: >"$t/subagents/$(upper "$victim").txt"
	# ls: the victim is a root chat still, and the parent's real sub-agents are its children
	run -0 --separate-stderr agc ls --json --agent cursor --children
	json_ok --arg v "$victim" 'any(.[]; .id == $v and .parent == null)'
	for kid in $(m_get "$p" '.children[]'); do
		json_ok --arg k "$kid" --arg p "$p" 'any(.[]; .id == $k and .parent == $p)'
	done
	run -0 --separate-stderr agc --json purge cursor "$p"
	json_ok --arg v "$victim" '(.[0].children | index($v) == null) and
		any(.[0].hints[]; contains($v) and contains("files of its own"))'
	assert_exists $(m_get "$victim" '.artifacts[]')
	[[ $(cu_rows_of <<<"$victim") == $(m_get "$victim" '.rows | add') ]]
}

@test "cursor purge: one corrupt store among many: every other chat listed and purgeable, and it too" {
	cu_fixture --seed 3827 --projects 3 --cursor 12 --cursor-corrupt-store 1 --cursor-corrupt-meta 1
	local bad id n
	bad=$(m_pick '.store == "corrupt"')
	run -0 --separate-stderr agc ls --json --agent cursor
	[[ $(jq -s 'length' <<<"$output") == 12 ]]
	n=0
	for id in $(m_picks '.kind == "chat" and .store == "ok"'); do
		run -0 agc purge cursor "$id"
		assert_gone $(m_get "$id" '.artifacts[]')
		n=$((n + 1))
	done
	((n == 11))
	# the corrupt one is a dir like any other: it goes whole, said as found
	run -0 agc purge cursor "$bad"
	assert_gone $(m_get "$bad" '.artifacts[]')
	run -0 --separate-stderr agc ls --json --agent cursor
	[[ -z $output ]]
}

@test "cursor purge: R6, a tracking database that is not SQLite refuses with nothing changed; R2, one behind a link is left, the rest goes" {
	cu_fixture --seed 3828 --projects 2 --cursor 3
	local id
	id=$(m_pick '.kind == "chat" and (.rows | add) > 0')
	cp "$TDB" "$BATS_TEST_TMPDIR/good.db"
	head -c 4096 /dev/urandom >"$TDB"
	snap before
	run -4 --separate-stderr agc --json purge cursor "$id"
	json_ok --arg db "$TDB" '.[0].status == "refused" and (.[0].residual | any(.path == $db and .kind == "rows"))'
	assert_tree_unchanged before
	# a link in the database's place: never changed through it (R2)
	mv "$BATS_TEST_TMPDIR/good.db" "$OUT/t.db"
	rm "$TDB"
	ln -s "$OUT/t.db" "$TDB"
	local sum
	sum=$(sha256sum <"$OUT/t.db")
	run -3 --separate-stderr agc --json purge cursor "$id"
	json_ok --arg db "$TDB" '.[0].status == "partial" and (.[0].residual | any(.path == $db and .reason == "symlink"))'
	# nothing outside changed, and no -wal or -shm made there by a read
	[[ $(sha256sum <"$OUT/t.db") == "$sum" && ! -e $OUT/t.db-shm && ! -e $OUT/t.db-wal ]]
	assert_gone $(m_get "$id" '.dirs[]')
	# the chat stays findable by its rows
	run -3 --separate-stderr agc --json purge cursor "$id"
}

@test "cursor purge: R4, a trigger that changes another row of the tracking database refuses the purge" {
	cu_fixture --seed 3829 --projects 2 --cursor 3
	local id
	id=$(m_pick '.kind == "chat" and .rows.conversation_summaries > 0')
	sqlite3 "$TDB" "CREATE TABLE audit (n INTEGER); CREATE TRIGGER t AFTER DELETE ON conversation_summaries BEGIN INSERT INTO audit VALUES (1); END;"
	snap before
	run -4 --separate-stderr agc purge cursor "$id"
	assert_tree_unchanged before
	[[ $(sqlite3 "$TDB" "SELECT count(*) FROM audit") == 0 ]]
}

@test "cursor: ~/.config/cursor bind-mounted on ~/.cursor is one root: sizes counted once, the purge goes (exit 0)" {
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare -m --propagation private true 2>/dev/null || skip "cannot make a private mount namespace here"
	cu_fixture --seed 3830 --projects 2 --cursor 3
	local id bytes
	id=$(m_pick '.kind == "chat" and (.rows | add) > 0')
	bytes=$(agc ls --json --agent cursor | jq -r --arg id "$id" 'select(.id == $id) | .bytes')
	mkdir -p "$HOME/.config/cursor"
	unshare -m --propagation private bash -c '
		mount --bind "$1" "$2" || exit 100
		"$AGENTGC" ls --json --agent cursor >"$3/ls.json" 2>/dev/null
		"$AGENTGC" --json purge cursor "$4" >"$3/out.json" 2>"$3/err.txt"
		echo $? >"$3/rc"
	' _ "$HOME/.cursor" "$HOME/.config/cursor" "$BATS_TEST_TMPDIR" "$id" || [[ $? != 100 ]] || skip "cannot bind-mount here"
	[[ $(jq -r --arg id "$id" 'select(.id == $id) | .bytes' "$BATS_TEST_TMPDIR/ls.json") == "$bytes" ]]
	[[ $(cat "$BATS_TEST_TMPDIR/rc") == 0 ]]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok '.[0].status == "purged"'
	[[ $(cu_rows_of <<<"$id") == 0 ]]
	assert_gone $(m_get "$id" '.dirs[]')
}

@test "cursor purge: R2 R6, a tracking database the user may read but not write refuses, reason permission, nothing changed" {
	nobody_setup
	cu_fixture --seed 3831 --projects 2 --cursor 3
	local id
	id=$(m_pick '.kind == "chat" and (.rows | add) > 0')
	TDB=$(m_summary .tracking_db)
	nobody_own
	# the database (and its dir, so no -journal or -wal can be made) stays root's
	chown -R 0:0 "$(dirname "$TDB")"
	chmod 755 "$(dirname "$TDB")"
	chmod 644 "$TDB"
	snap before
	run -4 --separate-stderr agc_nobody --json purge cursor "$id"
	json_ok --arg db "$TDB" '.[0].status == "refused" and (.[0].residual | any(.path == $db and .reason == "permission"))'
	assert_tree_unchanged before
}
