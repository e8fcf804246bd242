# Helpers of the Codex end-to-end tests: a generated Codex home, its manifest, its databases.

cx_setup() {
	agc_setup
	need_fixture
	command -v sqlite3 >/dev/null || { echo "the sqlite3 tool is needed" >&2; return 1; }
	unset CODEX_HOME CODEX_SQLITE_HOME
	H=$HOME/.codex
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
}

# A generated Codex home in $HOME (made afresh: the generator wants an empty one).
cx_fixture() {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --now "$NOW" --quiet \
		--manifest "$MAN" "$@"
	mkdir -p "$TMPDIR"
}

m_get() { jq -r --arg id "$1" "select(.agent == \"codex\" and .id == \$id) | $2" "$MAN"; }
m_pick() { jq -r "select(.agent == \"codex\" and ($1)) | .id" "$MAN" | head -n1; }
m_summary() { jq -r "select(.summary) | .summary.codex | $1" "$MAN"; }

# The thread and every descendant, one id a line.
cx_closure() {
	printf '%s\n' "$1"
	m_get "$1" '.children[]?'
}

# Every database of the SQLite home.
cx_dbs() { find "$(m_summary .sqlite_home)" -maxdepth 1 -name '*.sqlite' | LC_ALL=C sort; }

# The key columns of table T in database DB that name a thread (as formats/codex.md §7 keys
# them), one a line.
cx_keys() {
	local db=$1 t=$2 c
	for c in $(sqlite3 -batch "$db" "SELECT name FROM pragma_table_info('$t')"); do
		case "$t.$c" in
		threads.id | thread_spawn_edges.child_thread_id | thread_spawn_edges.parent_thread_id | \
			session_model_ids.session_id | *.thread_id) echo "$c" ;;
		esac
	done
}

# Every row of every database that is not keyed by one of the ids on stdin: table name and
# the row, sorted; so a purge that touches another thread's row (or a row that only quotes an
# id) shows in a diff.
cx_rows_except() {
	local ids db t k cond list
	ids=$(cat)
	list=$(printf "'%s'," $ids)
	list=${list%,}
	for db in $(cx_dbs); do
		for t in $(sqlite3 -batch "$db" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"); do
			cond=""
			for k in $(cx_keys "$db" "$t"); do
				cond="${cond:+$cond OR }\"$k\" IN ($list)"
			done
			# a table keyed by a rollout's path (no thread column): the thread's rows are
			# those whose path names it
			if [[ -z $cond ]] && sqlite3 -batch "$db" "SELECT 1 FROM pragma_table_info('$t') WHERE name = 'rollout_path'" | grep -q 1; then
				for k in $ids; do
					cond="${cond:+$cond OR }instr(rollout_path, '$k') > 0"
				done
			fi
			sqlite3 -batch -separator '|' "$db" "SELECT '${db##*/}:$t', * FROM \"$t\" WHERE NOT (${cond:-0})" |
				LC_ALL=C sort
		done
	done
}

# Rows keyed by the ids on stdin, in all databases (a count).
cx_rows_of() {
	local ids db t k cond list n=0 c
	ids=$(cat)
	list=$(printf "'%s'," $ids)
	list=${list%,}
	for db in $(cx_dbs); do
		for t in $(sqlite3 -batch "$db" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"); do
			cond=""
			for k in $(cx_keys "$db" "$t"); do
				cond="${cond:+$cond OR }\"$k\" IN ($list)"
			done
			[[ -n $cond ]] || continue
			c=$(sqlite3 -batch "$db" "SELECT count(*) FROM \"$t\" WHERE $cond")
			n=$((n + c))
		done
	done
	echo "$n"
}

# The tree without the databases (compared row by row instead) and the two shared files
# (compared line by line).
cx_tree() {
	tree_state | awk -F'\t' '$1 !~ /\.sqlite(-wal|-shm|-journal)?$/ && $1 !~ /(session_index|history)\.jsonl$/'
}

# Lines of a shared file of the Codex home not keyed (KEY) by the ids on stdin.
cx_lines_except() {
	local f=$1 key=$2 ids
	ids=$(cat | jq -R . | jq -s .)
	[[ -f $H/$f ]] || return 0
	jq -c --argjson ids "$ids" "select((.$key as \$k | \$ids | index(\$k)) | not)" "$H/$f"
}
