# Helpers of the Cursor end-to-end tests: a generated Cursor home, its manifest, its tracking
# database.

cu_setup() {
	agc_setup
	need_fixture
	command -v sqlite3 >/dev/null || { echo "the sqlite3 tool is needed" >&2; return 1; }
	unset CURSOR_CONFIG_DIR XDG_CONFIG_HOME
	CU=$HOME/.cursor
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
}

# A generated Cursor home in $HOME (made afresh: the generator wants an empty one).
cu_fixture() {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --now "$NOW" --quiet \
		--manifest "$MAN" "$@"
	mkdir -p "$TMPDIR"
	TDB=$(m_summary .tracking_db)
}

m_get() { jq -r --arg id "$1" "select(.agent == \"cursor\" and .id == \$id) | $2" "$MAN"; }
m_pick() { jq -r "select(.agent == \"cursor\" and ($1)) | .id" "$MAN" | head -n1; }
m_picks() { jq -r "select(.agent == \"cursor\" and ($1)) | .id" "$MAN"; }
m_summary() { jq -r "select(.summary) | .summary.cursor | $1" "$MAN"; }

# The chat and its sub-agents, one id a line.
cu_closure() {
	printf '%s\n' "$1"
	m_get "$1" '.children[]?'
}

# The tables of the tracking database with a conversationId column.
cu_tables() {
	local t
	for t in $(sqlite3 -batch "$TDB" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"); do
		sqlite3 -batch "$TDB" "SELECT 1 FROM pragma_table_info('$t') WHERE name = 'conversationId'" | grep -q 1 && echo "$t"
	done
	return 0
}

# SQL list of the ids on stdin.
cu_list() {
	local ids list
	ids=$(cat)
	list=$(printf "'%s'," $ids)
	printf '%s' "${list%,}"
}

# Rows keyed by the ids on stdin, in every table (a count).
cu_rows_of() {
	local list t n=0 c
	list=$(cu_list)
	for t in $(cu_tables); do
		c=$(sqlite3 -batch "$TDB" "SELECT count(*) FROM \"$t\" WHERE conversationId IN ($list)")
		n=$((n + c))
	done
	echo "$n"
}

# Every row of every table not keyed by one of the ids on stdin, sorted: a purge that touches
# another chat's row (or a row that only quotes an id) shows in a diff.
cu_rows_except() {
	local list t cond
	list=$(cu_list)
	for t in $(sqlite3 -batch "$TDB" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"); do
		cond=1
		sqlite3 -batch "$TDB" "SELECT 1 FROM pragma_table_info('$t') WHERE name = 'conversationId'" | grep -q 1 &&
			cond="conversationId IS NULL OR conversationId NOT IN ($list)"
		sqlite3 -batch -separator '|' "$TDB" "SELECT '$t', * FROM \"$t\" WHERE $cond" | LC_ALL=C sort
	done
}

# The stored bytes of the rows keyed by the ids on stdin (SPEC "Sizes": every column's value
# as bytes, NULL 0).
cu_row_bytes() {
	local list t cols n=0 c
	list=$(cu_list)
	for t in $(cu_tables); do
		cols=$(sqlite3 -batch "$TDB" "SELECT group_concat('coalesce(length(CAST(\"' || name || '\" AS BLOB)), 0)', ' + ') FROM pragma_table_info('$t')")
		c=$(sqlite3 -batch "$TDB" "SELECT coalesce(sum($cols), 0) FROM \"$t\" WHERE conversationId IN ($list)")
		n=$((n + c))
	done
	echo "$n"
}

# The apparent size of every regular file at or below the given paths.
cu_file_bytes() {
	local n=0 s
	for s in $(find "$@" -type f -printf '%s\n' 2>/dev/null); do
		n=$((n + s))
	done
	echo "$n"
}

# Every artifact path of the chats on stdin (with their sub-agents' files inside).
cu_artifacts() {
	local id
	while read -r id; do
		m_get "$id" '.artifacts[]'
	done
}
