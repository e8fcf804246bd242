#!/usr/bin/env bats
# Codex (formats/codex.md, issue tests 1-5 and 7): a purge removes the rollout, the rows in
# every database, the writer lock, shell snapshots, the TUI marker, the index and history lines
# and the spawn closure, and nothing of another thread; forks refuse; locks, environments and
# command lines hold; a busy database refuses with nothing changed; zstd rollouts.

load lib
load cx

setup() { cx_setup; }

# Everything of the home but ID's closure, before: rows, lines and files.
before() {
	local root=$1
	cx_closure "$root" >"$BATS_TEST_TMPDIR/ids"
	cx_rows_except <"$BATS_TEST_TMPDIR/ids" >"$BATS_TEST_TMPDIR/rows.before"
	cx_lines_except session_index.jsonl id <"$BATS_TEST_TMPDIR/ids" >"$BATS_TEST_TMPDIR/index.before"
	cx_lines_except history.jsonl session_id <"$BATS_TEST_TMPDIR/ids" >"$BATS_TEST_TMPDIR/history.before"
	cx_tree >"$BATS_TEST_TMPDIR/tree.before"
}

# ...is the same after: every other thread keeps every byte and row (rows that only quote
# the ids included).
others_unchanged() {
	diff -u "$BATS_TEST_TMPDIR/rows.before" <(cx_rows_except <"$BATS_TEST_TMPDIR/ids")
	diff -u "$BATS_TEST_TMPDIR/index.before" <(cx_lines_except session_index.jsonl id <"$BATS_TEST_TMPDIR/ids")
	diff -u "$BATS_TEST_TMPDIR/history.before" <(cx_lines_except history.jsonl session_id <"$BATS_TEST_TMPDIR/ids")
}

# Nothing at all changed (a refusal).
all_unchanged() {
	others_unchanged
	[[ $(cx_rows_of <"$BATS_TEST_TMPDIR/ids") == "$ROWS_BEFORE" ]]
	diff -u "$BATS_TEST_TMPDIR/tree.before" <(cx_tree)
	diff -u "$BATS_TEST_TMPDIR/index.all" "$H/session_index.jsonl"
	diff -u "$BATS_TEST_TMPDIR/history.all" "$H/history.jsonl"
}

keep_all() {
	ROWS_BEFORE=$(cx_rows_of <"$BATS_TEST_TMPDIR/ids")
	cp "$H/session_index.jsonl" "$BATS_TEST_TMPDIR/index.all"
	cp "$H/history.jsonl" "$BATS_TEST_TMPDIR/history.all"
}

@test "codex (1): purge removes the rollouts, rows in all six databases, lock, snapshots, marker, index and history lines and the spawn closure; another thread keeps every byte and row, its rows quoting the id too" {
	cx_fixture --seed 3711 --codex 6 --codex-children 3 --codex-forks 0
	local root id n
	root=$(m_pick '.parent == null and (.children | length) >= 2 and (.quoted_by | length) > 0 and .lock')
	[[ -n $root ]]
	before "$root"
	# rows of other threads quote the root's id (its children's spawn items, a later first
	# prompt): they must stay
	grep -q "$root" "$BATS_TEST_TMPDIR/rows.before"
	[[ $(wc -l <"$BATS_TEST_TMPDIR/ids") -ge 4 ]]
	n=$(cx_rows_of <"$BATS_TEST_TMPDIR/ids")
	((n > 20))
	[[ $(cx_dbs | wc -l) -ge 6 ]]
	run -0 --separate-stderr agc --json purge codex "$root"
	echo "$output" | jq -e '.status == "purged" and (.children | length) >= 3'
	echo "$output" | jq -e '[.removed[] | select(.kind == "rows") | .path | split("/") | last] | unique | length == 6'
	echo "$output" | jq -e '[.removed[] | select(.kind == "lines")] | length == 2'
	[[ $(cx_rows_of <"$BATS_TEST_TMPDIR/ids") == 0 ]]
	while read -r id; do
		[[ -z $(find "$H" -name "*$id*" ! -path "*/shell_snapshots/${id}x.*") ]] || {
			find "$H" -name "*$id*"
			return 1
		}
		run -1 grep -q "\"id\":\"$id\"" "$H/session_index.jsonl"
		run -1 grep -q "\"session_id\":\"$id\"" "$H/history.jsonl"
	done <"$BATS_TEST_TMPDIR/ids"
	# the prefix twin of the root's shell snapshot stays
	[[ -f $(m_summary .prefix_twin) ]]
	others_unchanged
	# the tree: only the closure's files went
	diff -u <(grep -v -F -f "$BATS_TEST_TMPDIR/ids" "$BATS_TEST_TMPDIR/tree.before") <(cx_tree)
	# nothing left: a rerun finds nothing
	run -5 agc purge codex "$root"
}

@test "codex (1): a sub-agent purged alone goes with its own sub-agents; its parent and siblings stay" {
	cx_fixture --seed 3712 --codex 4 --codex-children 2
	local root child
	root=$(m_pick '.parent == null and (.children | length) >= 3')
	child=$(jq -r --arg r "$root" 'select(.agent == "codex" and .parent == $r) | .id' "$MAN" | head -n1)
	[[ -n $child ]]
	before "$child"
	run -0 agc purge codex "$child"
	[[ $(cx_rows_of <"$BATS_TEST_TMPDIR/ids") == 0 ]]
	others_unchanged
	# the parent's spawn edge to it went (its child end), the parent's row stays
	[[ $(sqlite3 "$(m_summary .dbs.state_5)" "SELECT count(*) FROM threads WHERE id = '$root'") == 1 ]]
	[[ $(sqlite3 "$(m_summary .dbs.state_5)" "SELECT count(*) FROM thread_spawn_edges WHERE child_thread_id = '$child'") == 0 ]]
}

@test "codex: a thread that names the purged one in attached_thread_parent_id (a relation not established) is kept, every byte and row, and named in a hint" {
	cx_fixture --seed 3713 --codex 5 --codex-children 2
	local root other db
	root=$(m_pick '.parent == null and (.children | length) >= 2')
	other=$(m_pick ".parent == null and .id != \"$root\"")
	db=$(m_summary .dbs.state_5)
	sqlite3 "$db" "UPDATE threads SET attached_thread_parent_id = '$root' WHERE id = '$other'"
	before "$root"
	cx_closure "$other" >"$BATS_TEST_TMPDIR/other"
	ROWS_OTHER=$(cx_rows_of <"$BATS_TEST_TMPDIR/other")
	((ROWS_OTHER > 5))
	# a dry run says it too, and --json carries it
	run -0 --separate-stderr agc --json purge --dry-run codex "$root"
	json_ok --arg o "$other" '.[0].hints | any(contains("thread '"'"'\($o)'"'"' names this thread"))'
	run -0 --separate-stderr agc purge codex "$root"
	[[ $stderr == *"thread '$other' names this thread (or a sub-agent of it) in threads.attached_thread_parent_id, a relation whose meaning is not established: kept; purge it by its id"* ]]
	[[ $(cx_rows_of <"$BATS_TEST_TMPDIR/ids") == 0 ]]
	[[ $(cx_rows_of <"$BATS_TEST_TMPDIR/other") == "$ROWS_OTHER" ]]
	[[ -f $(m_get "$other" .rollout) ]]
	others_unchanged
}

@test "codex: Codex Desktop's sqlite/codex-dev.db (layout not established) is never changed: rows naming the thread are said; one that is not SQLite is said too" {
	cx_fixture --seed 3714 --codex 4 --codex-children 1
	local root other sum
	root=$(m_pick '.parent == null')
	other=$(m_pick ".parent == null and .id != \"$root\"")
	mkdir "$H/sqlite"
	sqlite3 "$H/sqlite/codex-dev.db" "PRAGMA journal_mode = WAL; CREATE TABLE local_thread_catalog (thread_id TEXT PRIMARY KEY, title TEXT);
		INSERT INTO local_thread_catalog VALUES ('$root', 'mine'), ('$other', 'theirs');"
	sum=$(sha256sum <"$H/sqlite/codex-dev.db")
	run -0 --separate-stderr agc purge codex "$root"
	[[ $stderr == *"Codex Desktop's database '$H/sqlite/codex-dev.db' names this thread in local_thread_catalog.thread_id (1): its layout is not established, so it is left as it is"* ]]
	[[ $(sha256sum <"$H/sqlite/codex-dev.db") == "$sum" ]]
	# read as it is: nothing made beside it
	[[ $(ls "$H/sqlite") == codex-dev.db ]]
	[[ ! -e $(m_get "$root" .rollout) ]]
	# not SQLite: said, and the purge goes on
	printf 'not a database at all, just some text that is long enough to be no header\n' >"$H/sqlite/codex-dev.db"
	run -0 --separate-stderr agc purge codex "$other"
	[[ $stderr == *"Codex Desktop's database '$H/sqlite/codex-dev.db' cannot be read"* ]]
	[[ ! -e $(m_get "$other" .rollout) ]]
	# its dir a link: not followed, said
	mkdir "$OUT/desk"
	mv "$H/sqlite/codex-dev.db" "$OUT/desk/"
	rmdir "$H/sqlite"
	ln -s "$OUT/desk" "$H/sqlite"
	other=$(m_pick ".parent == null and .id != \"$root\" and .id != \"$other\"")
	run -0 --separate-stderr agc purge codex "$other"
	[[ $stderr == *"'sqlite' in the Codex home is not a directory"* ]]
	[[ $(ls "$OUT/desk") == codex-dev.db ]]
}

@test "codex (3): a thread read by a fork (history_base, rollout_reference, compressed) is refused: exit 4, reason fork, the fork named, nothing changed; --with-forks removes both" {
	cx_fixture --seed 3713 --codex 8 --codex-forks 6 --codex-zst 2
	local kind fork parent
	for kind in history_base rollout_reference; do
		fork=$(m_pick ".fork_kind == \"$kind\"")
		[[ -n $fork ]]
		parent=$(m_get "$fork" .forked_from)
		cx_closure "$parent" >"$BATS_TEST_TMPDIR/ids"
		before "$parent"
		keep_all
		run -4 --separate-stderr agc --json purge codex "$parent"
		echo "$output" | jq -e --arg f "$fork" '.status == "refused" and (.forks | index($f)) and ([.residual[] | select(.reason == "fork")] | length) > 0 and (.removed | length) == 0'
		[[ $stderr == *"reads this session's history (a fork)"* && $stderr == *"--with-forks"* ]]
		all_unchanged
		run -4 agc purge --dry-run codex "$parent"
		[[ $output == *"read by fork $fork"* || $output == *"$fork"* ]]
		all_unchanged
	done
	# a compressed fork blocks as well
	fork=$(m_pick '.fork_kind != null and .fork_kind != "copied" and .zst')
	[[ -n $fork ]]
	parent=$(m_get "$fork" .forked_from)
	run -4 --separate-stderr agc --json purge codex "$parent"
	echo "$output" | jq -e --arg f "$fork" '.forks | index($f)'
	# --with-forks: the parent and its forks (and theirs) go
	run -0 --separate-stderr agc --json purge --with-forks codex "$parent"
	echo "$output" | jq -e '.status == "purged"'
	[[ -z $(find "$H/sessions" "$H/archived_sessions" -name "*$parent*" -o -name "*$fork*" 2>/dev/null) ]]
}

@test "codex (3): a fork with only forked_from_id copied its history and does not block" {
	cx_fixture --seed 3714 --codex 6 --codex-forks 3
	local copy parent
	copy=$(m_pick '.fork_kind == "copied"')
	[[ -n $copy ]]
	parent=$(m_get "$copy" .forked_from)
	run -0 agc purge codex "$parent"
	[[ -f $(m_get "$copy" .rollout) ]]
}

# A process holding a flock on the thread's writer lock (HOW -x or -s), run through the
# command before it (setpriv ...), until killed; returns once the kernel's table shows it.
hold_lock() {
	local how=$1 f=$2 ino i
	shift 2
	# -o: the lock is flock's own, not inherited by the sleep (a kill lets it go); no fd of
	# the test's output goes with them (a sleep left behind would hold bats to its end)
	"$@" flock -o "$how" "$f" sleep 300 </dev/null >/dev/null 2>&1 3>&- &
	HOLDER=$!
	echo "$HOLDER" >>"$PIDS_FILE"
	ino=$(stat -c %i "$f")
	for i in $(seq 200); do
		grep -q ":$ino " /proc/locks && return 0
		sleep 0.05
	done
	echo "no lock on $f (inode $ino) appeared" >&2
	cat /proc/locks >&2

	return 1
}

# The holder and the sleep flock runs: flock does not pass a signal on to its command.
drop_lock() {
	pkill -KILL -P "$HOLDER" 2>/dev/null || true
	kill "$HOLDER" 2>/dev/null || true
	wait "$HOLDER" 2>/dev/null || true
}

@test "codex (4): an exclusive or shared flock on the writer lock, also by another uid, holds the thread (4); a lock nobody holds is removed" {
	cx_fixture --seed 3715 --codex 3
	local id lock
	id=$(m_pick '.parent == null and .lock')
	[[ -n $id ]]
	lock=$H/thread-writer-locks/$id.lock
	[[ -f $lock ]]
	for how in -x -s; do
		hold_lock "$how" "$lock"
		run -4 --separate-stderr agc --json in-use codex "$id"
		echo "$output" | jq -e '[.holders[] | select(.why == "lock")] | length >= 1'
		run -4 agc purge codex "$id"
		[[ -f $lock && -f $(m_get "$id" .rollout) ]]
		drop_lock
	done
	# the other user reaches the lock: the search bit on every dir above it
	local d=$H/thread-writer-locks
	while [[ $d == "$BATS_RUN_TMPDIR"* && $d != / ]]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
	chmod 0644 "$lock"
	hold_lock -s "$lock" setpriv --reuid=65534 --regid=65534 --clear-groups
	run -4 --separate-stderr agc --json purge codex "$id"
	echo "$output" | jq -e '.status == "in-use" and ([.holders[] | select(.why == "lock")] | length >= 1)'
	drop_lock
	# nobody holds it: it goes, under the coordination lock, with the thread
	run -0 --separate-stderr agc --json purge codex "$id"
	echo "$output" | jq -e --arg l "$lock" '[.removed[] | select(.path == $l)] | length == 1'
	[[ ! -e $lock && -f $H/thread-writer-locks/.coordination.lock ]]
}

@test "codex (4): CODEX_THREAD_ID or CODEX_SESSION_ID in a process's environment, and argv 'codex resume <id>', hold the thread (4)" {
	cx_fixture --seed 3716 --codex 3 --codex-children 1
	local root child
	root=$(m_pick '.parent == null and (.children | length) > 0')
	child=$(m_get "$root" '.children[0]')
	# a tool run inside the sub-agent: THREAD_ID = child, SESSION_ID = root
	env CODEX_THREAD_ID="$child" CODEX_SESSION_ID="$root" sleep 300 &
	local p=$!
	run -4 --separate-stderr agc --json in-use codex "$root"
	echo "$output" | jq -e '[.holders[] | select(.why == "environ")] | length >= 1'
	run -4 agc --json in-use codex "$child"
	run -4 agc purge codex "$root"
	kill $p
	wait $p 2>/dev/null || true
	env CODEX_SESSION_ID="$root" sleep 300 &
	p=$!
	run -4 agc purge codex "$root"
	kill $p
	wait $p 2>/dev/null || true
	spawn_argv codex resume "$root"
	run -4 --separate-stderr agc --json in-use codex "$root"
	echo "$output" | jq -e '[.holders[] | select(.why == "cmdline")] | length >= 1'
	[[ -f $(m_get "$root" .rollout) ]]
}

# A process holding a write transaction on database DB until killed.
hold_write() {
	local db=$1
	mkfifo "$BATS_TEST_TMPDIR/sqlin"
	sqlite3 "$db" <"$BATS_TEST_TMPDIR/sqlin" >/dev/null 2>&1 &
	WRITER=$!
	exec 9>"$BATS_TEST_TMPDIR/sqlin"
	printf 'PRAGMA busy_timeout = 0;\nBEGIN IMMEDIATE;\nUPDATE _sqlx_migrations SET description = description;\n' >&9
	local i
	for i in $(seq 100); do
		run sqlite3 "$db" "PRAGMA busy_timeout = 0; BEGIN IMMEDIATE; ROLLBACK;"
		[[ $status -ne 0 ]] && return 0
		sleep 0.05
	done
	return 1
}

release_write() {
	exec 9>&-
	wait "$WRITER" 2>/dev/null || true
	rm -f "$BATS_TEST_TMPDIR/sqlin"
}

@test "codex (5): any one database write-locked (the first in order and the last, the record's): 4, reason busy, the rollout and every row intact" {
	cx_fixture --seed 3717 --codex 3 --codex-children 1
	local root db
	root=$(m_pick '.parent == null and (.children | length) > 0')
	before "$root"
	keep_all
	for db in "$(m_summary .dbs.goals_1)" "$(m_summary .dbs.state_5)" "$(m_summary .dbs.thread_history_1)"; do
		hold_write "$db"
		run -4 --separate-stderr agc --json purge codex "$root"
		release_write
		echo "$output" | jq -e --arg d "$db" '.status == "refused" and ([.residual[] | select(.reason == "busy" and .path == $d)] | length == 1)'
		all_unchanged
	done
	run -0 agc purge codex "$root"
}

@test "codex ls: every thread with the manifest's project, parent and creation time; a line 0 with an escaped key or a repeated one reads as jansson reads it" {
	cx_fixture --seed 3717 --codex 6 --codex-children 2 --codex-zst 2
	local a b ra rb
	a=$(m_pick '.parent == null and (.zst | not)')
	b=$(m_pick ".parent != null and (.zst | not) and .id != \"$a\"")
	ra=$(m_get "$a" .rollout)
	rb=$(m_get "$b" .rollout)
	# a: the key cwd escaped (the head scanner asks jansson); b: cwd given twice, the last wins,
	# and parent_thread_id escaped in its value
	sed -i '1s/"cwd":/"\\u0063wd":/' "$ra"
	sed -i '1s/"cwd":/"cwd":"\/nowhere","cwd":/' "$rb"
	head -n1 "$ra" | jq -e --arg p "$(m_get "$a" .project)" '.payload.cwd == $p' >/dev/null
	head -n1 "$rb" | jq -e --arg p "$(m_get "$b" .project)" '.payload.cwd == $p' >/dev/null
	run -0 --separate-stderr agc --json ls --children --agent codex
	[[ -z $stderr ]]
	echo "$output" | jq -s -e --slurpfile m "$MAN" '
		($m | map(select(.agent == "codex")) | map({key: .id, value: .}) | from_entries) as $want
		| length == ($want | length)
		and all(.[]; $want[.id] as $w | $w != null and .project == $w.project
			and (.parent // null) == $w.parent and .created == ($w.created / 1000 | floor | todate))'
}

@test "codex (7): .jsonl.zst rollouts are listed with their metadata and purged" {
	cx_fixture --seed 3718 --codex 5 --codex-zst 3
	local id r
	id=$(m_pick '.zst and .parent == null and .forked_from == null')
	[[ -n $id ]]
	r=$(m_get "$id" .rollout)
	[[ $r == *.jsonl.zst && -f $r ]]
	[[ $(od -An -tx1 -N4 "$r" | tr -d ' ') == 28b52ffd ]]
	run -0 --separate-stderr agc --json ls --agent codex
	echo "$output" | jq -s -e --arg id "$id" --arg p "$(m_get "$id" .project)" --arg t "$(m_get "$id" .title)" \
		'map(select(.id == $id)) | length == 1 and (.[0] | .project == $p and .title == $t and .bytes > 0)'
	before "$id"
	run -0 agc purge codex "$id"
	[[ ! -e $r ]]
	others_unchanged
}

@test "codex: archived threads are listed with \"archived\":true, and purged from archived_sessions/" {
	cx_fixture --seed 3719 --codex 5 --codex-archived 2
	local id r
	id=$(m_pick '.archived and .parent == null')
	[[ -n $id ]]
	r=$(m_get "$id" .rollout)
	[[ $r == "$H/archived_sessions/"* && -f $r ]]
	run -0 --separate-stderr agc --json ls --agent codex
	echo "$output" | jq -s -e --arg id "$id" 'map(select(.id == $id)) | length == 1 and .[0].archived == true'
	echo "$output" | jq -s -e --arg id "$id" 'map(select(.id != $id and .archived == true)) | length == 1'
	before "$id"
	run -0 agc purge codex "$id"
	[[ ! -e $r ]]
	others_unchanged
}
