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

# The SQL, one statement a table of database DB, that MODE asks for: "except", every row not
# keyed by one of the ids IDS (a space-separated list; LIST is the same as SQL
# literals), as "db:table|row"; a thread's key columns are threads.id, the spawn edges' parent and
# child, session_model_ids.session_id and any thread_id (formats/codex.md §7); a table keyed
# by a rollout's path (no thread column) has a
# thread's rows where the path names it; "count", the count of the rows keyed by them, one a
# table that has a key. The tables and their columns are read in one query.
cx_rows_sql() {
	local db=$1 mode=$2 list=$3 ids=$4
	sqlite3 -batch -separator $'\t' "$db" "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid" |
		awk -F'\t' -v mode="$mode" -v list="$list" -v ids="$ids" -v dbn="${db##*/}" '
		{
			if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
			tc = $1 "." $2
			if (tc == "threads.id" || tc == "thread_spawn_edges.child_thread_id" ||
			    tc == "thread_spawn_edges.parent_thread_id" || tc == "session_model_ids.session_id" ||
			    $2 == "thread_id")
				cond[$1] = (cond[$1] == "" ? "" : cond[$1] " OR ") "\"" $2 "\" IN (" list ")"
			if ($2 == "rollout_path") rp[$1] = 1
		}
		END {
			k = split(ids, idv, " ")
			for (i = 1; i <= n; i++) {
				t = order[i]
				c = cond[t]
				if (c == "" && (t in rp))
					for (j = 1; j <= k; j++)
						c = (c == "" ? "" : c " OR ") "instr(rollout_path, '\''" idv[j] "'\'') > 0"
				if (mode == "except")
					printf "SELECT '\''%s:%s'\'', * FROM \"%s\" WHERE NOT (%s);\n", dbn, t, t, c == "" ? "0" : c
				else if (cond[t] != "")
					printf "SELECT count(*) FROM \"%s\" WHERE %s;\n", t, cond[t]
			}
		}'
}

# Every row of every database that is not keyed by one of the ids on stdin: table name and
# the row, sorted; so a purge that touches another thread's row (or a row that only quotes an
# id) shows in a diff.
cx_rows_except() (
	trap - DEBUG
	local ids db list rows
	ids=$(cat)
	list=$(printf "'%s'," $ids)
	list=${list%,}
	for db in $(cx_dbs); do
		# a statement that fails fails the test (it would make both sides of a diff empty)
		rows=$(cx_rows_sql "$db" except "$list" "$(echo $ids)" | sqlite3 -bail -batch -separator '|' "$db") ||
			{ echo "cx_rows_except: sqlite3 failed on $db" >&2; return 1; }
		[[ -z $rows ]] || printf '%s\n' "$rows" | LC_ALL=C sort
	done
)

# Rows keyed by the ids on stdin, in all databases (a count).
cx_rows_of() (
	trap - DEBUG
	local ids db list c n=0
	ids=$(cat)
	list=$(printf "'%s'," $ids)
	list=${list%,}
	for db in $(cx_dbs); do
		c=$(cx_rows_sql "$db" count "$list" "$(echo $ids)" | sqlite3 -bail -batch "$db") ||
			{ echo "cx_rows_of: sqlite3 failed on $db" >&2; return 1; }
		for c in $c; do
			n=$((n + c))
		done
	done
	echo "$n"
)

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
