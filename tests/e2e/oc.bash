# Helpers of the OpenCode end-to-end tests (t2000-opencode-*.bats), loaded after lib.bash.
#
# Every test gets, on top of lib.bash's home:
#   DATA=$HOME/.local/share/opencode   OpenCode's data dir (no XDG_* or OPENCODE_DB is set)
#   DB=$DATA/opencode.db               the database the fixture writes
#   MAN=$BATS_TEST_TMPDIR/manifest.jsonl
# A home is made with `oc_fixture ARGS...` (agentgc-fixture --claude 0 --opencode ...).
# The sqlite3 and jq command-line tools read the database and the manifest.

oc_setup() {
	agc_setup
	unset XDG_DATA_HOME XDG_STATE_HOME XDG_CONFIG_HOME XDG_CACHE_HOME OPENCODE_DB
	need_fixture
	command -v sqlite3 >/dev/null || { echo "the sqlite3 tool is needed" >&2; return 1; }
	DATA=$HOME/.local/share/opencode
	DB=$DATA/opencode.db
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
}

setup() { oc_setup; }

# A generated OpenCode home in $HOME (own home: HOME is set to it). The seeds of these tests are
# their own (2001 and up) so that their ids are not those of other suites' homes.
oc_fixture() {
	# the fixture wants a fresh home and temp root
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --now "$NOW" --quiet \
		--manifest "$MAN" "$@"
	[[ -f $DB ]] || { echo "the fixture made no $DB" >&2; return 1; }
	mkdir -p "$TMPDIR"
}

# ---- the manifest ---------------------------------------------------------------------------

# Every OpenCode session line of the manifest.
m_sessions() { jq -c 'select(.agent == "opencode")' "$MAN"; }

# The manifest line of session ID.
m_line() { jq -c --arg id "$1" 'select(.agent == "opencode" and .id == $id)' "$MAN"; }

# jq FILTER applied to the manifest line of session ID, raw output.
m_get() { jq -r --arg id "$1" "select(.agent == \"opencode\" and .id == \$id) | $2" "$MAN"; }

# The first session id (in manifest order) whose line passes the jq condition COND.
m_pick() { jq -r "select(.agent == \"opencode\" and ($1)) | .id" "$MAN" | head -n1; }

# The manifest lines of ID and of every descendant of it (jq -s input for FILTER), FILTER
# applied; raw output.
m_family_jq() {
	jq -r -s --arg id "$1" "map(select(.agent == \"opencode\")) | (map(select(.id == \$id))[0].children + [\$id]) as \$f
		| map(select(.id | IN(\$f[]))) | $2" "$MAN"
}

# ID and every descendant of it, one per line, ID first.
m_family() { m_get "$1" '.id, .children[]'; }

# The artifacts (legacy files, plan files) of ID and of every descendant.
m_family_artifacts() { m_family_jq "$1" '.[].artifacts[]'; }

# "id<TAB>table<TAB>count" of the manifest's rows of ID and its descendants (count > 0), sorted.
m_family_rows_tsv() {
	m_family_jq "$1" '.[] | .id as $i | .rows | to_entries[] | select(.value > 0) | "\($i)\t\(.key)\t\(.value)"' |
		LC_ALL=C sort
}

# Fail unless the database holds, for each session of ID's family, the rows its manifest line
# counts in each table (so that none left afterwards means the purge removed them).
assert_rows_as_manifest() {
	local -a fam
	mapfile -t fam < <(m_family "$1")
	diff -u <(m_family_rows_tsv "$1") <(oc_rows_of "${fam[@]}" | LC_ALL=C sort)
}

# ---- the database ---------------------------------------------------------------------------

# Reads go through read-only connections: a read-write one that closes last checkpoints the
# WAL and deletes -wal and -shm, which would hide what a purge left in them (and drop the
# files a holder holds). Changes go through qw.
q() { sqlite3 -readonly -batch -noheader "$DB" "$@"; }
qw() { sqlite3 -batch -noheader "$DB" "$@"; }

# SQL string literal of a value.
sqlq() { printf "'%s'" "${1//\'/\'\'}"; }

# An SQL identifier, quoted.
sqli() { printf '"%s"' "${1//\"/\"\"}"; }

# A JSON array of the arguments (strings).
jarr() { jq -c -n '$ARGS.positional' --args "$@"; }

# "table<TAB>key" for every table of the database (sqlite_ internals left out), where key is
# the column that keys the table's rows to a session: id for the session tables, else
# session_id or aggregate_id; empty for shared tables. Read from the schema in one query.
oc_keys() {
	sqlite3 -readonly -batch -noheader -separator $'\t' "$DB" "
		SELECT m.name, CASE
			WHEN m.name IN ('session', 'session_v2') THEN 'id'
			WHEN EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'session_id') THEN 'session_id'
			WHEN EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'aggregate_id') THEN 'aggregate_id'
			ELSE '' END
		FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%' ORDER BY m.name"
}

oc_tables() { oc_keys | cut -f1; }

# The key column of TABLE (see oc_keys).
oc_key() { oc_keys | awk -F'\t' -v t="$1" '$1 == t { print $2 }'; }

# Rows of TABLE keyed by session ID.
oc_rows() {
	local k
	k=$(oc_key "$1")
	[[ -n $k ]] || { echo 0; return; }
	q "SELECT count(*) FROM $(sqli "$1") WHERE $(sqli "$k") = $(sqlq "$2")"
}

# "id<TAB>table<TAB>count" for every table with rows keyed by any of the given ids (count > 0).
oc_rows_of() (
	trap - DEBUG
	local t k id list="" sql="" qt
	for id; do list+="${list:+,}'${id//\'/\'\'}'"; done
	[[ -n $list ]] || return 0
	while IFS=$'\t' read -r t k; do
		[[ -n $k ]] || continue
		qt=${t//\"/\"\"}
		sql+="${sql:+ UNION ALL }SELECT \"$k\", '${t//\'/\'\'}', count(*) FROM \"$qt\" WHERE \"$k\" IN ($list) GROUP BY \"$k\""
	done < <(oc_keys)
	[[ -n $sql ]] || return 0
	sqlite3 -readonly -batch -noheader -separator $'\t' "$DB" "$sql"
)

# Fail unless no table holds a row keyed by any of the given session ids.
assert_no_rows() {
	local left
	left=$(oc_rows_of "$@")
	[[ -z $left ]] || { printf 'rows left (id, table, count):\n%s\n' "$left" >&2; return 1; }
}

# Every row of every table, one quoted line per row prefixed with its table, sorted, leaving
# out the rows keyed by the given session ids (none: the whole database). Rows of shared
# tables are always included. Two dumps compare with diff.
oc_dump_except() (
	trap - DEBUG
	local t k list="" id where script=".mode quote"$'\n'
	for id; do list+="${list:+,}'${id//\'/\'\'}'"; done
	while IFS=$'\t' read -r t k; do
		where=""
		[[ -n $k && -n $list ]] && where=" WHERE \"$k\" IS NULL OR \"$k\" NOT IN ($list)"
		script+="SELECT '${t//\'/\'\'}', * FROM \"${t//\"/\"\"}\"$where;"$'\n'
	done < <(oc_keys)
	sqlite3 -readonly -batch -noheader "$DB" <<<"$script" | LC_ALL=C sort
)

# Save a dump (see oc_dump_except) to a file under BATS_TEST_TMPDIR.
oc_dump_save() {
	local name=$1
	shift
	oc_dump_except "$@" >"$BATS_TEST_TMPDIR/dump.$name"
}

# Assert that the rows now (minus those of the given ids) are those of dump NAME.
assert_dump_same() {
	local name=$1
	shift
	diff -u "$BATS_TEST_TMPDIR/dump.$name" <(oc_dump_except "$@")
}

# Delete every row keyed by the given session ids, as a tool without foreign keys would.
oc_delete_sessions() (
	trap - DEBUG
	local t k list="" id sql=""
	for id; do list+="${list:+,}$(sqlq "$id")"; done
	while IFS=$'\t' read -r t k; do
		[[ -n $k ]] && sql+="DELETE FROM $(sqli "$t") WHERE $(sqli "$k") IN ($list);"
	done < <(oc_keys)
	qw "BEGIN; $sql COMMIT;"
)

# Rename session OLD to NEW everywhere the database keys it (ids, parent ids, session_id and
# aggregate_id columns), foreign keys off as the sqlite3 tool has them.
oc_rename() (
	trap - DEBUG
	local old new t k sql=""
	old=$(sqlq "$1")
	new=$(sqlq "$2")
	while IFS=$'\t' read -r t k; do
		[[ -n $k ]] || continue
		sql+="UPDATE $(sqli "$t") SET $(sqli "$k") = $new WHERE $(sqli "$k") = $old;"
		[[ $k == id ]] && sql+="UPDATE $(sqli "$t") SET parent_id = $new WHERE parent_id = $old;"
	done < <(oc_keys)
	qw "BEGIN; $sql COMMIT;"
)

# How many lines of FILE hold STRING; a missing file holds it 0 times.
grep_count() {
	[[ -e $2 ]] || { echo 0; return; }
	grep -c -a -F -- "$1" "$2" || true
}

# ---- files ----------------------------------------------------------------------------------

# tree_state without the database's -wal and -shm: SQLite itself creates, resets and deletes
# them (a reader writes its read marks into -shm); their content is checked through the rows.
oc_tree() {
	tree_state | awk -F'\t' -v w="$DB-wal" -v s="$DB-shm" '$1 != w && $1 != s'
}

oc_snap() { oc_tree >"$BATS_TEST_TMPDIR/tree.$1"; }

# Filter tree lines (stdin) without the given paths and what lies below them.
oc_tree_minus() {
	awk -F'\t' -v list="$(printf '%s\n' "$@")" '
		BEGIN { n = split(list, g, "\n") }
		{
			for (i = 1; i <= n; i++) {
				if (g[i] == "") continue
				if ($1 == g[i] || index($1, g[i] "/") == 1) next
			}
			print
		}'
}

# Assert that the tree is as in snapshot NAME, but for the given paths and what lies below them.
oc_assert_tree_minus() {
	local name=$1
	shift
	diff -u <(oc_tree_minus "$@" <"$BATS_TEST_TMPDIR/tree.$name") <(oc_tree | oc_tree_minus "$@")
}

oc_assert_tree_unchanged() { diff -u "$BATS_TEST_TMPDIR/tree.$1" <(oc_tree); }

# Snapshot files and rows before an operation that must change nothing.
oc_before() {
	oc_dump_save all
	oc_snap all
}

# Nothing changed since oc_before: no file and no row.
assert_nothing_changed() {
	oc_assert_tree_unchanged all
	assert_dump_same all
}

# ---- processes ------------------------------------------------------------------------------

# A process with the given argv (argv[0] first) holding FILE open (fd 3); it sleeps.
# argv[0] is set with bash's exec -a; the program is perl, so the command line reads:
# ARGV0 -e 'sleep 1000' -- ARGS... (each its own argv element).
spawn_named_holder() {
	local file=$1 argv0=$2
	shift 2
	spawn bash -c 'f=$1 a0=$2; shift 2; exec 3<"$f"; exec -a "$a0" perl -e "sleep 1000" -- "$@"' _ "$file" "$argv0" "$@"
	wait_exec "$LAST_PID" "$argv0 -e sleep 1000 -- $*"
	wait_fd_open "$LAST_PID" "$file"
}

# OpenCode's per-user service as SPEC R5 names it: argv[0] "opencode", later arguments "serve"
# and "--service" (each its own argv element), holding the database open. Extra arguments
# are appended.
spawn_service() {
	spawn_named_holder "$DB" opencode serve --service "$@"
}

# A sqlite3 session on the database that ran SQL and then waits (its stdin is a FIFO nobody
# writes to, opened read-write so it never sees end of file); returns once SQL has run.
# ARGV0 is its argv[0]; OPTS are sqlite3 options put before the SQL. As the service:
# ARGV0=opencode with the options `-separator serve -cmd --service`: then argv holds "serve"
# and "--service" as elements of their own, sqlite3 takes "serve" as the column separator and
# runs "--service" as an SQL comment, which does nothing.
spawn_sqlite() {
	local argv0=$1 sql=$2 n=$RANDOM i
	local fifo=$BATS_TEST_TMPDIR/sqlite-in.$n out=$BATS_TEST_TMPDIR/sqlite-out.$n
	shift 2
	mkfifo "$fifo"
	: >"$out"
	spawn bash -c 'a0=$1 fifo=$2 db=$3 sql=$4 out=$5; shift 5; exec -a "$a0" sqlite3 "$@" -cmd "$sql" -cmd "SELECT '"'agc-ready'"';" "$db" <>"$fifo" >"$out"' \
		_ "$argv0" "$fifo" "$DB" "$sql" "$out" "$@"
	for i in $(seq 1 200); do
		grep -q agc-ready "$out" && break
		sleep 0.02
	done
	grep -q agc-ready "$out" || { echo "sqlite3 never ran: $sql" >&2; return 1; }
	wait_exec "$LAST_PID" "$argv0"
}

# Wait until another connection holds the database's write lock.
wait_write_locked() {
	local i
	for i in $(seq 1 100); do
		if ! sqlite3 -batch "$DB" '.timeout 0' 'BEGIN IMMEDIATE;' 'ROLLBACK;' >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.05
	done
	echo "nobody took the write lock of $DB" >&2
	return 1
}
