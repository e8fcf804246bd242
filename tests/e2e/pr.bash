# Helpers of the prune tests (t39xx-prune-*.bats), loaded after lib.bash: a generated home of
# every agent, the state of a home that a look must not change, the root sessions listed now.

pr_setup() {
	agc_setup
	need_fixture
	command -v sqlite3 >/dev/null || { echo "the sqlite3 tool is needed" >&2; return 1; }
	unset XDG_DATA_HOME XDG_CONFIG_HOME XDG_CACHE_HOME OPENCODE_DB CODEX_HOME CODEX_SQLITE_HOME \
		CURSOR_CONFIG_DIR AGENTGC_TEST_PRUNE_DISCOVERED
	export XDG_STATE_HOME=$BATS_TEST_TMPDIR/state
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
}

setup() { pr_setup; }

# A generated home (sessions 2 to 60 days old): CLAUDE OPENCODE CODEX CURSOR sessions; with
# "family" as the fifth argument, some OpenCode and Codex roots get children and a Cursor chat
# a sub-agent.
mk_home() {
	local c=${1:-6} o=${2:-4} x=${3:-4} u=${4:-4} fam=${5:-} args=()
	if ((o > 0)); then
		args+=(--opencode "$o")
		[[ -n $fam ]] && args+=(--opencode-children $((o < 2 ? o : 2)))
	fi
	if ((x > 0)); then
		args+=(--codex "$x")
		[[ -n $fam ]] && args+=(--codex-children $((x < 2 ? x : 2)))
	fi
	if ((u > 0)); then
		args+=(--cursor "$u")
		[[ -n $fam ]] && args+=(--cursor-subagents 1)
	fi
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --now "$NOW" --quiet --manifest "$MAN" \
		--claude "$c" "${args[@]}"
	mkdir -p "$TMPDIR"
}

# The files of the home without the databases' -wal and -shm (SQLite makes them on any read of
# a WAL database, as the agents' own readers do), then every database's rows: each dumped from
# a copy (with its -wal), since a read in place would make those files, and change the dir.
home_state() {
	local db cp=$BATS_TEST_TMPDIR/dbcopy
	tree_state | awk -F'\t' '$1 !~ /\.(sqlite|db)-(wal|shm)$/'
	while IFS= read -r db; do
		rm -rf "$cp"
		mkdir -p "$cp"
		cp "$db" "$cp/db"
		[[ -f $db-wal ]] && cp "$db-wal" "$cp/db-wal"
		printf '%s\t%s\n' "$db" "$(sqlite3 "$cp/db" .dump | sha256sum)"
	done < <(find "$HOME" -type f \( -name '*.sqlite' -o -name '*.db' \) | LC_ALL=C sort)
	rm -rf "$cp"
}

# The root sessions now: "agent id updated_epoch_seconds", sorted.
roots() { agc ls --json | jq -r '"\(.agent) \(.id) \(.updated | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601)"' | sort; }
