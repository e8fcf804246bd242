#!/usr/bin/env bats
# What a Codex purge leaves (issue 9, tests 6, 8 and 9), on homes made by agentgc-fixture
# --codex: the thread's id (and its children's) in no -wal after the purge, an idle reader
# connected or not; on databases rebuilt first, in no database file beyond the rows of other
# threads that quote it; a reader mid-transaction leaves the WAL residual "in-use" (R6). Bad
# input (formats/codex.md, SPEC R8): a first line that is not JSON, a rollout cut inside its
# first line, a state_5.sqlite that is not SQLite, a rollout path pointing outside the home.
# Roots: config.toml's top-level sqlite_home in its forms, CODEX_SQLITE_HOME, CODEX_HOME, and
# a foreign --home that ignores the caller's variables (formats/codex.md §1).

load lib
load cx

DBS="state_5 thread_history_1 logs_2 goals_1 queue_1 memories_1"

setup() { cx_setup; }

# A root with sub-agents whose id another thread quotes (in its rows, rollout and lines).
pick_quoted() {
	m_pick '.parent == null and (.children | length) >= 2 and (.quoted_by | length) > 0 and .quoted_by_null_log'
}

# How many times any of the ids occurs in FILE (its bytes, binary or not).
id_count() {
	local f=$1 id args=()
	shift
	for id; do args+=(-e "$id"); done
	grep -a -o -F "${args[@]}" -- "$f" | wc -l
}

# Rows keyed by thread ID in the databases of DIR, in every table the manifest gives it rows
# in, plus the rows that name its rollout's path.
rows_of() {
	local dir=$1 id=$2 db t n sum=0
	while IFS=$'\t' read -r db t; do
		case $t in
		threads) n="id = '$id'" ;;
		thread_spawn_edges) n="'$id' IN (parent_thread_id, child_thread_id)" ;;
		session_model_ids) n="session_id = '$id'" ;;
		*) n="thread_id = '$id'" ;;
		esac
		n=$(sqlite3 -batch "$dir/$db.sqlite" "SELECT count(*) FROM $t WHERE $n")
		sum=$((sum + n))
	done < <(m_get "$id" '.rows | to_entries[] | .key as $d | .value | keys[] | [$d, .] | @tsv')
	n=$(sqlite3 -batch "$dir/state_5.sqlite" "SELECT count(*) FROM rollout_migration_skipped_rollouts WHERE rollout_path LIKE '%$id%'")
	echo $((sum + n))
}

# The rows the manifest gives thread ID.
rows_want() {
	m_get "$1" '[.rows[][]] | add'
}

# The hashes of every file below the given dirs (what must not change).
hashes() {
	find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
}

# ---- a sqlite3 process connected to every database, fed through a FIFO ------------------

reader_start() {
	local db
	RFIFO=$BATS_TEST_TMPDIR/reader.fifo
	ROUT=$BATS_TEST_TMPDIR/reader.out
	mkfifo "$RFIFO"
	sqlite3 -batch :memory: <"$RFIFO" >"$ROUT" 2>&1 3>&- &
	READER=$!
	echo "$READER" >>"$PIDS_FILE"
	exec 7>"$RFIFO"
	for db in $DBS; do
		echo "ATTACH '$H/$db.sqlite' AS $db;" >&7
	done
}

# Send SQL, then wait until the reader has run it (it prints the tag after it).
reader_sql() {
	local tag=$1 i
	shift
	printf '%s\nSELECT '"'"'%s'"'"';\n' "$*" "$tag" >&7
	for i in $(seq 1 250); do
		grep -qx -- "$tag" "$ROUT" && return 0
		sleep 0.02
	done
	echo "the reader never ran: $*" >&2
	cat "$ROUT" >&2
	return 1
}

# The reader rewrites a row of each thread in every database (its autocheckpoint off), so
# each WAL holds pages with their rows, then waits outside any transaction.
reader_dirty() {
	local in
	in=$(printf "'%s'," "$@")
	in="(${in%,})"
	reader_sql dirtied "PRAGMA wal_autocheckpoint = 0;
		UPDATE state_5.threads SET tokens_used = tokens_used + 1 WHERE id IN $in;
		UPDATE thread_history_1.thread_items SET updated_at_ordinal = updated_at_ordinal + 1 WHERE thread_id IN $in;
		UPDATE logs_2.logs SET estimated_bytes = estimated_bytes + 1 WHERE thread_id IN $in;
		UPDATE goals_1.thread_goals SET tokens_used = tokens_used + 1 WHERE thread_id IN $in;
		UPDATE queue_1.queued_items SET updated_at_ms = updated_at_ms + 1 WHERE thread_id IN $in;
		UPDATE memories_1.stage1_outputs SET generated_at = generated_at + 1 WHERE thread_id IN $in;"
}

# ---- 6. residue ---------------------------------------------------------------------------

@test "codex residue: after a purge no -wal holds the thread's id or its children's, with an idle reader connected" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id by ids db n
	id=$(pick_quoted)
	[[ -n $id ]]
	by=$(m_get "$id" '.quoted_by[0]')
	mapfile -t ids < <(echo "$id"; m_get "$id" '.children[]')
	((${#ids[@]} >= 3))
	reader_start
	reader_dirty "${ids[@]}"
	# the premise: every WAL holds the ids now
	for db in $DBS; do
		n=$(id_count "$H/$db.sqlite-wal" "${ids[@]}")
		((n > 0)) || { echo "no id in $db.sqlite-wal before the purge"; return 1; }
	done
	run -0 agc purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	[[ $output != *"left behind"* ]]
	# the reader is still there, connected: the WALs stay, emptied of the ids
	kill -0 "$READER"
	for db in $DBS; do
		[[ -f $H/$db.sqlite-wal ]]
		n=$(id_count "$H/$db.sqlite-wal" "${ids[@]}")
		[[ $n == 0 ]] || { echo "$n ids left in $db.sqlite-wal"; return 1; }
	done
	reader_sql seen "SELECT 'left ' || count(*) FROM state_5.threads WHERE id = '$id';"
	grep -qx 'left 0' "$ROUT"
	for n in "${ids[@]}"; do
		[[ $(rows_of "$H" "$n") == 0 ]] || { echo "rows of $n left"; return 1; }
	done
	# the thread that quotes it keeps every row, and its rows still quote the id
	[[ $(rows_of "$H" "$by") == $(rows_want "$by") ]]
	[[ $(sqlite3 "$H/state_5.sqlite" "SELECT first_user_message FROM threads WHERE id = '$by'") == *"$id"* ]]
	exec 7>&-
}

@test "codex residue: after a purge without a reader, no -wal holds the ids" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id ids f n
	id=$(pick_quoted)
	mapfile -t ids < <(echo "$id"; m_get "$id" '.children[]')
	run -0 agc purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	for f in "$H"/*-wal; do
		[[ -e $f ]] || continue
		n=$(id_count "$f" "${ids[@]}")
		[[ $n == 0 ]] || { echo "$n ids left in $f"; return 1; }
	done
	for n in "${ids[@]}"; do
		[[ $(rows_of "$H" "$n") == 0 ]] || { echo "rows of $n left"; return 1; }
	done
}

@test "codex residue: on databases rebuilt first, no database file holds the ids but in other threads' rows that quote them" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id by ids db n want lines_with
	id=$(pick_quoted)
	by=$(m_get "$id" '.quoted_by[0]')
	mapfile -t ids < <(echo "$id"; m_get "$id" '.children[]')
	# no older copy in free pages or live pages: what a file holds is what its rows hold
	for db in $DBS; do
		sqlite3 "$H/$db.sqlite" VACUUM
	done
	run -0 agc purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	# without --scrub one hint names every database that may still hold older copies
	[[ $(grep -c "secure_delete" <<<"$output") == 1 ]]
	for db in $DBS; do
		[[ $(grep "secure_delete" <<<"$output") == *"'$H/$db.sqlite'"* ]] || { echo "the hint does not name $db"; return 1; }
	done
	[[ $output == *"older copies of the deleted rows may survive in the pages of '$H/"*".sqlite' until 'agentgc compact' (or a purge with --scrub) rebuilds them"* ]]
	for db in $DBS; do
		# the live rows' occurrences, as a fresh copy of the database lays them out (rows
		# and index entries, no free page)
		rm -f "$BATS_TEST_TMPDIR/copy.sqlite"
		sqlite3 "$H/$db.sqlite" "VACUUM INTO '$BATS_TEST_TMPDIR/copy.sqlite'"
		want=$(id_count "$BATS_TEST_TMPDIR/copy.sqlite" "${ids[@]}")
		n=$(id_count "$H/$db.sqlite" "${ids[@]}")
		[[ $n == "$want" ]] || { echo "$db.sqlite holds the ids $n times, its live rows $want"; return 1; }
		# and those rows are other threads' rows that quote the id: each is keyed by the
		# thread that quotes it, or a log of no thread
		while IFS= read -r lines_with; do
			[[ $lines_with == *"'$by'"* || $lines_with == "INSERT INTO logs VALUES("*",NULL,"* ]] ||
				{ echo "$db: a row that is not another thread's: ${lines_with:0:200}"; return 1; }
			for n in "${ids[@]}"; do
				[[ $lines_with != *"'$n'"* ]] || { echo "$db: a row keyed by $n: ${lines_with:0:200}"; return 1; }
			done
		done < <(sqlite3 "$H/$db.sqlite" .dump | grep -F -e "${ids[0]}" $(printf -- '-e %s ' "${ids[@]:1}"))
	done
	# some rows do quote it: the check above looked at something
	(($(sqlite3 "$H/logs_2.sqlite" .dump | grep -c -F "$id") >= 2))
	[[ $(rows_of "$H" "$by") == $(rows_want "$by") ]]
}

@test "codex residue: a reader mid-transaction leaves the WALs it reads residual in-use (exit 3), the rest gone" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id ids n
	id=$(pick_quoted)
	mapfile -t ids < <(echo "$id"; m_get "$id" '.children[]')
	reader_start
	reader_dirty "${ids[@]}"
	# a read transaction open on state_5 and logs_2 (BEGIN; SELECT ... held open)
	reader_sql reading "BEGIN; SELECT count(*) FROM state_5.threads; SELECT count(*) FROM logs_2.logs;"
	run --separate-stderr -3 agc purge --json codex "$id"
	json_ok --arg h "$H" '.[0] | .status == "partial"
		and ([.residual[] | [.kind, .path, .reason]] | sort) == [["file", "\($h)/logs_2.sqlite-wal", "in-use"], ["file", "\($h)/state_5.sqlite-wal", "in-use"]]
		and ([.removed[] | select(.kind == "rows")] | length) > 0'
	# every row went, and the WALs no reader pins hold no id
	for n in "${ids[@]}"; do
		[[ $(rows_of "$H" "$n") == 0 ]] || { echo "rows of $n left"; return 1; }
		[[ ! -e $(m_get "$n" .rollout) ]]
	done
	for n in thread_history_1 goals_1 queue_1 memories_1; do
		[[ $(id_count "$H/$n.sqlite-wal" "${ids[@]}") == 0 ]] || { echo "ids left in $n.sqlite-wal"; return 1; }
	done
	# the hint says who holds it and what to do
	[[ $stderr == *"'$H/logs_2.sqlite-wal' is held by another process, so it was left as it is (and 1 more)"* ]]
	[[ $stderr == *"rebuilt by hand with sqlite3 '$H/logs_2.sqlite' VACUUM)"* ]]
	exec 7>&-
}

@test "codex residue: a rerun after the reader's transaction ends finishes the WALs it left (exit 0), then says not found" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id ids n other before
	id=$(pick_quoted)
	other=$(m_pick ".parent == null and .id != \"$id\"")
	mapfile -t ids < <(echo "$id"; m_get "$id" '.children[]')
	reader_start
	reader_dirty "${ids[@]}"
	reader_sql reading "BEGIN; SELECT count(*) FROM state_5.threads; SELECT count(*) FROM logs_2.logs;"
	run --separate-stderr -3 agc purge --json codex "$id"
	(( $(id_count "$H/state_5.sqlite-wal" "$id") > 0 ))
	# while the reader still reads: the same residual again; a dry run says what the rerun
	# does, changing nothing (but the WAL index every reader shares)
	run --separate-stderr -3 agc purge --json codex "$id"
	json_ok --arg h "$H" '.[0] | .status == "partial" and ([.residual[] | .path] | sort) == ["\($h)/logs_2.sqlite-wal", "\($h)/state_5.sqlite-wal"]'
	before=$(find "$H" -type f ! -name '*-shm' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
	run --separate-stderr -0 agc purge --dry-run --json codex "$id"
	json_ok --arg h "$H" '.[0] | .status == "dry-run"
		and ([.removed[] | select(.kind == "file") | .path] | sort) == ["\($h)/logs_2.sqlite-wal", "\($h)/state_5.sqlite-wal"]'
	[[ $(find "$H" -type f ! -name '*-shm' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) == "$before" ]]
	reader_sql ended "COMMIT;"
	run --separate-stderr -0 agc purge --json codex "$id"
	json_ok --arg h "$H" '.[0] | .status == "purged" and .residual == []
		and ([.removed[] | [.kind, .path]] | sort) == [["file", "\($h)/logs_2.sqlite-wal"], ["file", "\($h)/state_5.sqlite-wal"]]'
	for n in $DBS; do
		[[ $(id_count "$H/$n.sqlite-wal" "${ids[@]}") == 0 ]] || { echo "ids left in $n.sqlite-wal"; return 1; }
	done
	# the other thread is whole, and now the id is nowhere: not found
	[[ $(rows_of "$H" "$other") == $(rows_want "$other") ]]
	run --separate-stderr -5 agc purge --json codex "$id"
	exec 7>&-
}

@test "codex residue: a rerun finishes a checkpoint a reader stopped though no byte of the WAL names the thread (its text is in the database's old pages), and clears agentgc's record of it" {
	cx_fixture --seed 3724 --codex 6 --codex-children 1
	local id n st=$HOME/.local/state/agentgc/wal-pending.jsonl
	id=$(m_pick '.parent == null and (.quoted_by | length) == 0 and (.children | length) == 0')
	[[ -n $id ]]
	for n in $DBS; do
		sqlite3 "$H/$n.sqlite" VACUUM
	done
	reader_start
	reader_sql reading "BEGIN; SELECT count(*) FROM state_5.threads; SELECT count(*) FROM logs_2.logs;"
	run --separate-stderr -3 agc purge --json codex "$id"
	# the rows went, but until the checkpoint the database file still holds their text, and
	# the WAL holds only the zeroed pages that replace it
	[[ $(rows_of "$H" "$id") == 0 ]]
	(( $(id_count "$H/state_5.sqlite" "$id") > 0 ))
	[[ $(id_count "$H/state_5.sqlite-wal" "$id") == 0 ]]
	[[ -f $st ]]
	grep -q "$id" "$st"
	reader_sql ended "COMMIT;"
	run --separate-stderr -0 agc purge --json codex "$id"
	json_ok --arg h "$H" '.[0] | .status == "purged" and ([.removed[] | .path] | sort) == ["\($h)/logs_2.sqlite-wal", "\($h)/state_5.sqlite-wal"]'
	for n in $DBS; do
		[[ $(id_count "$H/$n.sqlite" "$id") == 0 ]] || { echo "$id left in $n.sqlite"; return 1; }
		[[ $(id_count "$H/$n.sqlite-wal" "$id") == 0 ]] || { echo "$id left in $n.sqlite-wal"; return 1; }
	done
	[[ ! -e $st ]]
	run --separate-stderr -5 agc purge --json codex "$id"
	exec 7>&-
}

@test "codex residue: an id that never was, quoted in a WAL by another thread, is not found (exit 5)" {
	cx_fixture --seed 3725 --codex 4
	local by never=0badc0de-0000-4000-8000-00000000beef
	by=$(m_pick '.parent == null')
	reader_start
	reader_sql quoted "PRAGMA wal_autocheckpoint = 0; UPDATE state_5.threads SET title = 'see $never' WHERE id = '$by';"
	(( $(id_count "$H/state_5.sqlite-wal" "$never") > 0 ))
	run --separate-stderr -5 agc purge codex "$never"
	run --separate-stderr -5 agc show codex "$never"
	exec 7>&-
}

# ---- 8. bad input -------------------------------------------------------------------------

@test "codex bad input: another thread's first line is not JSON: this thread's purge works, that rollout untouched" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id other r ro n
	id=$(pick_quoted)
	other=$(m_pick ".parent == null and .id != \"$id\" and (.quoted_by | length) == 0")
	ro=$(m_get "$other" .rollout)
	{ echo 'this is not json'; tail -n +2 "$ro"; } >"$BATS_TEST_TMPDIR/x"
	cat "$BATS_TEST_TMPDIR/x" >"$ro"
	touch -d "@$((NOW - 86400))" "$ro"
	snap before
	run -0 agc purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	# said: that rollout could not be read (if it were a fork, Codex could not resume it)
	[[ $output == *"hint: the first line of '$ro' cannot be read (its first line is not JSON)"* ]]
	for n in "$id" $(m_get "$id" '.children[]'); do
		[[ ! -e $(m_get "$n" .rollout) ]]
		[[ $(rows_of "$H" "$n") == 0 ]]
	done
	# the other thread: its rollout byte for byte, its rows
	[[ $(grep -F "$ro" "$BATS_TEST_TMPDIR/before") == "$(tree_state | grep -F "$ro")" ]]
	[[ $(rows_of "$H" "$other") == $(rows_want "$other") ]]
	# ls still lists it
	run -0 agc ls --ids --agent codex
	[[ $output == *"$other"* && $output != *"$id"* ]]
}

@test "codex bad input: a rollout cut inside its first line is still purged" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id r
	id=$(m_pick '.parent == null and (.children | length) == 0 and (.quoted_by | length) == 0')
	[[ -n $id ]]
	r=$(m_get "$id" .rollout)
	head -c 5000 "$r" >"$BATS_TEST_TMPDIR/x"
	cat "$BATS_TEST_TMPDIR/x" >"$r"
	touch -d "@$((NOW - 86400))" "$r"
	run -0 agc ls --ids --agent codex
	[[ $output == *"$id"* ]]
	run -0 agc purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	[[ ! -e $r ]]
	[[ $(rows_of "$H" "$id") == 0 ]]
}

@test "codex bad input: a state_5.sqlite that is not SQLite: ls warns and lists, purge refused (4) naming it, nothing changed" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id n
	id=$(pick_quoted)
	head -c 65536 /dev/urandom >"$H/state_5.sqlite"
	run --separate-stderr -0 agc ls --ids --agent codex
	[[ $stderr == *"cannot read '$H/state_5.sqlite': file is not a database"* ]]
	# every root is listed, from its rollout
	for n in $(jq -r 'select(.agent == "codex" and .parent == null) | .id' "$MAN"); do
		[[ $output == *"$n"* ]] || { echo "$n not listed"; return 1; }
	done
	snap before
	run --separate-stderr -4 agc purge --json codex "$id"
	json_ok --arg h "$H" '.[0] | .status == "refused" and .removed == []
		and .residual == [{"kind": "rows", "path": "\($h)/state_5.sqlite",
			"reason": "cannot read '"'"'\($h)/state_5.sqlite'"'"': file is not a database", "count": 0, "bytes": 0}]'
	run -4 agc purge codex "$id"
	[[ ${lines[0]} == "refused codex $id "* ]]
	[[ $output == *"nothing changed"* && $output == *"$H/state_5.sqlite  (cannot read '$H/state_5.sqlite': file is not a database)"* ]]
	assert_tree_unchanged before
}

@test "codex bad input: a FIFO or a link in the place of a database's -wal or -shm: never opened, the purge refused (4) naming it, nothing changed" {
	cx_fixture --seed 3726 --codex 4
	local id side
	id=$(m_pick '.parent == null')
	for side in state_5.sqlite-wal logs_2.sqlite-shm; do
		rm -f "$H/state_5.sqlite-wal" "$H/logs_2.sqlite-shm"
		if [[ $side == *-wal ]]; then mkfifo "$H/$side"; else ln -s "$OUT/shm" "$H/$side"; fi
		# a listing first: it says the database cannot be read (and the others' WAL index
		# files exist from then on, as any reader makes them)
		run --separate-stderr -0 agc ls --agent codex
		[[ $stderr == *"cannot read '$H/${side%-*}'"*"its ${side##*-} is a"* ]]
		snap before
		run --separate-stderr -4 agc purge --json codex "$id"
		json_ok --arg p "$H/${side%-*}" --arg w "${side##*-}" '.[0] | .status == "refused" and .removed == []
			and (.residual | length) == 1 and .residual[0].path == $p
			and (.residual[0].reason | contains("its \($w) is a"))'
		assert_tree_unchanged before
		[[ -e $H/$side || -L $H/$side ]]
		[[ ! -e $OUT/shm ]]
	done
}

@test "codex bad input: a threads row whose rollout_path points outside the home: that file is never touched" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id r f
	id=$(m_pick '.parent == null and (.children | length) == 0 and (.quoted_by | length) == 0')
	r=$(m_get "$id" .rollout)
	f=$OUT/${r##*/}
	echo '{"kept":"outside the Codex home"}' >"$f"
	ln -s "$f" "$OUT/link-$id.jsonl"
	sqlite3 "$H/state_5.sqlite" "UPDATE threads SET rollout_path = '$f' WHERE id = '$id'"
	snap before
	run -0 agc purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	[[ $output == *"hint: the thread's row names its rollout '$f', outside the Codex home's rollout dirs: that path is left alone"* ]]
	[[ ! -e $r ]]
	[[ $(rows_of "$H" "$id") == 0 ]]
	assert_outside_unchanged before
}

# ---- 9. roots -----------------------------------------------------------------------------

# The codex sqlite root of `agentgc roots --json` (with the given options): path and source.
sqlite_root() {
	agc "$@" roots --json | jq -r 'select(.agent == "codex" and .root == "sqlite") | "\(.path)|\(.source)"'
}

# Purge ID; its rows must be gone from the databases of DIR, and DECOYS (copies of the
# databases where a wrong reading would look) untouched.
purge_in() {
	local id=$1 dir=$2 before
	shift 2
	before=$(hashes "$@")
	run -0 agc purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	[[ $(hashes "$@") == "$before" ]] || { echo "a decoy changed"; return 1; }
	[[ $(rows_of "$dir" "$id") == 0 ]] || { echo "rows of $id left in $dir"; return 1; }
}

@test "codex roots: config.toml sqlite_home, absolute and relative to the Codex home, quoted both ways" {
	local q=$BATS_TEST_TMPDIR/q id form d
	for form in "\"$q\"" "'$q'" '"db"' "'db'"; do
		case $form in
		*db*) d=$H/db ;;
		*) d=$q ;;
		esac
		rm -rf "$q" "$WORK/db"
		cx_fixture --seed 3725 --codex 3 --codex-sqlite-home "$d"
		printf 'model = "gpt-5.5"\n# a comment\nsqlite_home = %s # where the databases are\n\n[history]\npersistence = "save-all"\n' \
			"$form" >"$H/config.toml"
		# decoys where a wrong reading would look: the Codex home, the cwd
		mkdir -p "$WORK/db"
		cp "$d"/*.sqlite "$H/"
		cp "$d"/*.sqlite "$WORK/db/"
		[[ $(cd "$WORK" && sqlite_root) == "$d|config.toml sqlite_home" ]] || { echo "form $form: $(sqlite_root)"; return 1; }
		id=$(m_pick '.parent == null')
		cd "$WORK"
		purge_in "$id" "$d" "$H"/*.sqlite "$WORK/db"
		cd - >/dev/null
	done
}

@test "codex roots: sqlite_home commented out, or inside a table, is ignored" {
	local q=$BATS_TEST_TMPDIR/q id conf
	for conf in "# sqlite_home = \"$q\"" $'[tui]\nsqlite_home = "'"$q"'"' $'model = "x"\n[[profiles]]\nsqlite_home = "'"$q"'"'; do
		rm -rf "$q"
		cx_fixture --seed 3726 --codex 3
		printf '%s\n' "$conf" >"$H/config.toml"
		mkdir -p "$q"
		cp "$H"/*.sqlite "$q/"
		[[ $(sqlite_root) == "$H|the Codex home" ]] || { echo "conf $conf: $(sqlite_root)"; return 1; }
		id=$(m_pick '.parent == null')
		purge_in "$id" "$H" "$q"
	done
}

@test "codex roots: CODEX_SQLITE_HOME, then CODEX_HOME; config.toml wins over CODEX_SQLITE_HOME" {
	local q=$BATS_TEST_TMPDIR/q alt=$BATS_TEST_TMPDIR/alt id
	cx_fixture --seed 3727 --codex 3 --codex-sqlite-home "$q"
	cp "$q"/*.sqlite "$H/"
	export CODEX_SQLITE_HOME=$q
	[[ $(sqlite_root) == "$q|\$CODEX_SQLITE_HOME" ]]
	id=$(m_pick '.parent == null')
	purge_in "$id" "$q" "$H"/*.sqlite
	# config.toml's key comes first
	mkdir -p "$alt"
	printf 'sqlite_home = "%s"\n' "$alt" >"$H/config.toml"
	[[ $(sqlite_root) == "$alt|config.toml sqlite_home" ]]
	unset CODEX_SQLITE_HOME
	# CODEX_HOME: a home elsewhere, its databases with it; the default home is a decoy
	rm -rf "$alt"
	"$AGENTGC_FIXTURE" --home "$alt" --claude 0 --now "$NOW" --quiet --seed 3727 --codex 3 --manifest "$MAN"
	rm -rf "$H"
	cp -a "$alt/.codex" "$H"
	export CODEX_HOME=$alt/.codex
	run -0 agc roots --json
	json_ok --arg a "$alt/.codex" '[.[] | select(.agent == "codex") | [.root, .path, .source]]
		== [["home", $a, "$CODEX_HOME"], ["sqlite", $a, "the Codex home"]]'
	id=$(m_pick '.parent == null')
	purge_in "$id" "$alt/.codex" "$H"
	[[ ! -e $(m_get "$id" .rollout) ]]
}

@test "codex roots: a foreign --home ignores the caller's CODEX_HOME and CODEX_SQLITE_HOME, reads its own config.toml" {
	local f=$BATS_TEST_TMPDIR/foreign id
	"$AGENTGC_FIXTURE" --home "$f" --claude 0 --now "$NOW" --quiet --seed 3728 --codex 3 --manifest "$MAN" \
		--codex-sqlite-home "$f/.codex/db"
	printf "sqlite_home = 'db'\n" >"$f/.codex/config.toml"
	# the caller's own home and variables: copies, which must not change
	cp -a "$f/.codex" "$H"
	mkdir -p "$BATS_TEST_TMPDIR/q"
	cp "$f/.codex/db"/*.sqlite "$BATS_TEST_TMPDIR/q/"
	export CODEX_HOME=$H CODEX_SQLITE_HOME=$BATS_TEST_TMPDIR/q
	run -0 agc --home "$f" roots --json
	json_ok --arg a "$f/.codex" '[.[] | select(.agent == "codex") | [.root, .path, .source]]
		== [["home", $a, "default"], ["sqlite", "\($a)/db", "config.toml sqlite_home"]]'
	id=$(m_pick '.parent == null')
	local before
	before=$(hashes "$H" "$BATS_TEST_TMPDIR/q")
	run -0 agc --home "$f" purge codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	[[ $(hashes "$H" "$BATS_TEST_TMPDIR/q") == "$before" ]]
	[[ $(rows_of "$f/.codex/db" "$id") == 0 ]]
	[[ ! -e $(m_get "$id" .rollout) ]]
}

@test "codex residue: after purge --scrub the ids are in no file of the home but other threads' quoting lines and rows" {
	cx_fixture --seed 3723 --codex 6 --codex-children 2
	local id by ids f n
	id=$(pick_quoted)
	by=$(m_get "$id" '.quoted_by[0]')
	mapfile -t ids < <(echo "$id"; m_get "$id" '.children[]')
	run -0 agc purge --scrub codex "$id"
	[[ ${lines[0]} == "purged codex $id "* ]]
	[[ $output != *"older copies"* ]]
	while IFS= read -r -d '' f; do
		n=$(id_count "$f" "${ids[@]}")
		((n == 0)) && continue
		case $f in
		"$H"/*.sqlite)
			rm -f "$BATS_TEST_TMPDIR/copy.sqlite"
			sqlite3 "$f" "VACUUM INTO '$BATS_TEST_TMPDIR/copy.sqlite'"
			[[ $n == $(id_count "$BATS_TEST_TMPDIR/copy.sqlite" "${ids[@]}") ]] ;;
		"$H"/*-wal | "$H"/*-shm) echo "$n ids in $f"; return 1 ;;
		"$(m_get "$by" .rollout)" | "$H/log/codex-tui.log") ;;
		"$H/session_index.jsonl" | "$H/history.jsonl")
			# only lines of the thread that quotes it
			[[ -z $(grep -F "$id" "$f" | jq -r --arg by "$by" 'select((.id // .session_id) != $by)') ]] ;;
		*) echo "$n ids in $f"; return 1 ;;
		esac
	done < <(find "$HOME" -type f -print0)
}
