#!/usr/bin/env bats
# The Codex homes of agentgc-fixture --codex (formats/codex.md, Codex 0.171.0): the layout of
# §2, the line formats of §3, the relations of §4 and the schemas and triggers of §7, checked
# with sqlite3, jq, od and head against the generator's own manifest. The Codex adapter is
# tested on these homes; a fixture that drifts from the format doc would test nothing.

load lib
load cx

setup() { cx_setup; }

# The manifest's codex lines (cx.bash has the rest of its helpers).
m_threads() { jq -c 'select(.agent == "codex")' "$MAN"; }

# sqlite3 on database NAME (state_5, ...) of the SQLite home.
q() {
	local db=$1
	shift
	sqlite3 -batch "$(m_summary ".dbs.$db")" "$@"
}

# Line 0 of a plain rollout, as JSON (it is one line of 21-27 KB).
line0() { head -n1 "$1"; }

@test "codex home: the layout of §2, every rollout named by its thread and date, line 0 of 21-27 KB" {
	cx_fixture --seed 3701 --codex 12 --codex-children 3 --codex-forks 3
	[[ -d $H/sessions && -d $H/thread-writer-locks && -d $H/shell_snapshots && -d $H/tui-thread-reference-capabilities ]]
	for f in config.toml auth.json installation_id session_index.jsonl history.jsonl log/codex-tui.log \
		thread-writer-locks/.coordination.lock state_5.sqlite thread_history_1.sqlite logs_2.sqlite \
		goals_1.sqlite queue_1.sqlite memories_1.sqlite; do
		[[ -f $H/$f ]] || { echo "missing $f"; return 1; }
	done
	[[ -d $H/.tmp ]]
	# config.toml has no sqlite_home unless asked for
	run -1 grep -q sqlite_home "$H/config.toml"
	[[ $(m_threads | wc -l) == $(m_summary .threads) ]]
	local id r n sz
	while IFS=$'\t' read -r id r; do
		[[ -f $r ]] || { echo "no rollout $r"; return 1; }
		n=${r##*/}
		[[ $n =~ ^rollout-([0-9]{4})-([0-9]{2})-([0-9]{2})T[0-9]{2}-[0-9]{2}-[0-9]{2}-$id\.jsonl$ ]]
		[[ $r == "$H/sessions/${BASH_REMATCH[1]}/${BASH_REMATCH[2]}/${BASH_REMATCH[3]}/$n" ]]
		# UUIDv7: version 7, RFC 4122 variant, time = the name's time (the fixture's TZ is UTC)
		[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]]
		sz=$(line0 "$r" | wc -c)
		((sz >= 21000 && sz <= 27648)) || { echo "line 0 of $r is $sz bytes"; return 1; }
		line0 "$r" | jq -e --arg id "$id" '.ordinal == 0 and .type == "session_meta" and .payload.id == $id
			and (.payload.base_instructions.text | length) > 20000 and .payload.cli_version == "0.171.0"
			and (.payload.cwd | startswith("/"))' >/dev/null
	done < <(m_threads | jq -r '[.id, .rollout] | @tsv')
	# every line: timestamp with ms and Z, ordinal counting from 0
	r=$(m_get "$(m_pick '.parent == null and .forked_from == null')" .rollout)
	jq -s -e 'to_entries | all(.value.ordinal == .key and (.value.timestamp | test("^[0-9-]{10}T[0-9:]{8}\\.[0-9]{3}Z$")))' "$r"
	jq -s -e 'map(.type) | index("response_item") and index("turn_context") and index("event_msg")' "$r"
	jq -s -e 'map(select(.type == "response_item" and .payload.type == "message") | .payload.role) | index("user") and index("assistant")' "$r"
	jq -s -e 'all(select(.type == "response_item") | .metadata.turn_id | type == "string")' "$r"
}

@test "codex home: the same seed gives the same bytes" {
	cx_fixture --seed 3702 --codex 5 --codex-children 2 --codex-forks 2 --codex-zst 2 --codex-archived 1
	local a b
	a=$(cd "$HOME" && find .codex -type f ! -name '*.sqlite' -print0 | sort -z | xargs -0 sha256sum | sha256sum)
	b=$(q state_5 .dump | sha256sum)
	cx_fixture --seed 3702 --codex 5 --codex-children 2 --codex-forks 2 --codex-zst 2 --codex-archived 1
	[[ $a == "$(cd "$HOME" && find .codex -type f ! -name '*.sqlite' -print0 | sort -z | xargs -0 sha256sum | sha256sum)" ]]
	[[ $b == "$(q state_5 .dump | sha256sum)" ]]
}

@test "codex databases: the schemas of §7, WAL, auto_vacuum=2, _sqlx_migrations, the triggers" {
	cx_fixture --seed 3703 --codex 6 --codex-children 2
	local db
	for db in state_5 thread_history_1 logs_2 goals_1 queue_1 memories_1; do
		[[ $(q $db 'PRAGMA journal_mode') == wal ]]
		[[ $(q $db 'PRAGMA auto_vacuum') == 2 ]]
		(($(q $db 'SELECT count(*) FROM _sqlx_migrations WHERE success = 1') >= 2))
		[[ $(q $db 'PRAGMA integrity_check') == ok ]]
	done
	[[ $(q state_5 'SELECT max(version) FROM _sqlx_migrations') == 64 ]]
	[[ $(q thread_history_1 'SELECT max(version) FROM _sqlx_migrations') == 9 ]]
	run -0 q state_5 .schema
	for s in 'CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL' \
		'CREATE TABLE thread_spawn_edges (parent_thread_id TEXT NOT NULL, child_thread_id TEXT NOT NULL PRIMARY KEY' \
		'CREATE TABLE thread_dynamic_tools' '"thread_attachments" (id TEXT PRIMARY KEY' 'CREATE TABLE guardian_review_feedback' \
		'CREATE TABLE thread_read_receipts' 'CREATE TABLE session_model_ids' \
		'CREATE TRIGGER threads_fill_ms_after_insert AFTER INSERT ON threads' \
		'CREATE TRIGGER threads_fill_ms_after_update' 'CREATE TRIGGER threads_fill_recency_after_insert' \
		'CREATE TRIGGER threads_fill_recency_after_update' 'CREATE INDEX idx_thread_spawn_edges_parent_status'; do
		[[ $output == *"$s"* ]] || { echo "state_5 lacks: $s"; return 1; }
	done
	run -0 q thread_history_1 .schema
	[[ $output == *'CREATE TRIGGER thread_history_projection_state_after_delete AFTER DELETE ON thread_history_projection_state'*'DELETE FROM thread_realtime_items WHERE thread_id = OLD.thread_id'* ]]
	run -0 q queue_1 .schema
	[[ $output == *'queued_items_bump_after_insert AFTER INSERT ON queued_items'* ]]
	[[ $output == *'queued_items_bump_after_delete AFTER DELETE ON queued_items'* ]]
	# the *_ms fill triggers ran: no thread lacks its ms columns
	[[ $(q state_5 'SELECT count(*) FROM threads WHERE created_at_ms IS NULL OR updated_at_ms IS NULL OR recency_at_ms = 0') == 0 ]]
	# the triggers work: deleting a projection state removes the realtime items; a queued item
	# deleted bumps (re-creates) its thread's revision
	local id
	id=$(m_pick '.parent == null')
	q thread_history_1 "DELETE FROM thread_history_projection_state WHERE thread_id = '$id'"
	[[ $(q thread_history_1 "SELECT count(*) FROM thread_realtime_items WHERE thread_id = '$id'") == 0 ]]
	q queue_1 "DELETE FROM queued_thread_revisions WHERE thread_id = '$id'; DELETE FROM queued_items WHERE thread_id = '$id'"
	[[ $(q queue_1 "SELECT count(*) FROM queued_thread_revisions WHERE thread_id = '$id'") == 1 ]]
	q state_5 'PRAGMA foreign_key_check' | { ! grep -q .; }
}

@test "codex databases: every thread has rows in every table keyed by it, as the manifest counts them" {
	cx_fixture --seed 3704 --codex 8 --codex-children 3 --codex-forks 3
	local id db t want
	# the manifest's counts ("db, table, id, count"), and the same counted in each database by
	# one query a database
	jq -r 'select(.agent == "codex") | .id as $id | .rows | to_entries[] | .key as $d | .value
		| to_entries[] | [$d, .key, $id, .value] | @tsv' "$MAN" | LC_ALL=C sort >"$BATS_TEST_TMPDIR/want"
	[[ -s $BATS_TEST_TMPDIR/want ]]
	# every table but the spawn edges has rows of every thread
	awk -F'\t' '$2 != "thread_spawn_edges" && $4 <= 0 { print "no rows: " $0; bad = 1 } END { exit bad }' \
		"$BATS_TEST_TMPDIR/want"
	for db in $(cut -f1 "$BATS_TEST_TMPDIR/want" | uniq); do
		awk -F'\t' -v d="$db" '$1 == d {
			w = $2 == "threads" ? "id = '\''" $3 "'\''" \
			  : $2 == "thread_spawn_edges" ? "'\''" $3 "'\'' IN (parent_thread_id, child_thread_id)" \
			  : $2 == "session_model_ids" ? "session_id = '\''" $3 "'\''" \
			  : "thread_id = '\''" $3 "'\''"
			printf "SELECT '\''%s'\'', '\''%s'\'', '\''%s'\'', count(*) FROM %s WHERE %s;\n", d, $2, $3, $2, w
		}' "$BATS_TEST_TMPDIR/want" | q "$db" -separator $'\t'
	done | LC_ALL=C sort >"$BATS_TEST_TMPDIR/got"
	diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	# the thread's text is in thread_items.item_json; logs of no thread exist
	id=$(m_pick '.parent == null')
	[[ $(q thread_history_1 "SELECT count(*) FROM thread_items WHERE thread_id = '$id' AND item_json LIKE '%$(m_get "$id" .first_user_message)%'") -ge 1 ]]
	(($(q logs_2 'SELECT count(*) FROM logs WHERE thread_id IS NULL') > 0))
	# title, first_user_message, cwd and rollout_path of each row are the manifest's
	m_threads | jq -r '[.id, "\(.first_user_message)|\(.project)|\(.rollout_path)"] | @tsv' | LC_ALL=C sort \
		>"$BATS_TEST_TMPDIR/want"
	q state_5 -separator $'\t' "SELECT id, first_user_message || '|' || cwd || '|' || rollout_path FROM threads
		WHERE id IN ($(cut -f1 "$BATS_TEST_TMPDIR/want" | sed "s/.*/'&'/" | paste -sd,))" | LC_ALL=C sort \
		>"$BATS_TEST_TMPDIR/got"
	diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

@test "codex relations: rows and lines of other threads quote an id, and stay apart from it" {
	cx_fixture --seed 3705 --codex 9 --codex-children 2
	local id by n
	id=$(m_pick '.quoted_by_null_log and (.quoted_by | length) > 0 and .parent == null')
	[[ -n $id ]]
	by=$(m_get "$id" '.quoted_by[0]')
	[[ $by != "$id" ]]
	# the other thread's first_user_message, item_json and a log row quote the id
	[[ $(q state_5 "SELECT first_user_message FROM threads WHERE id = '$by'") == *"$id"* ]]
	(($(q thread_history_1 "SELECT count(*) FROM thread_items WHERE thread_id = '$by' AND item_json LIKE '%$id%'") >= 1))
	(($(q logs_2 "SELECT count(*) FROM logs WHERE thread_id = '$by' AND feedback_log_body LIKE '%$id%'") >= 1))
	(($(q logs_2 "SELECT count(*) FROM logs WHERE thread_id IS NULL AND feedback_log_body LIKE '%$id%'") == 1))
	grep -q "$id" "$(m_get "$by" .rollout)"
	# a sub-agent's id is in its parent's rollout (the spawn_agent output) and thread_items
	id=$(m_pick '.parent != null')
	by=$(m_get "$id" .parent)
	grep -q "\\\\\"agent_id\\\\\":\\\\\"$id" "$(m_get "$by" .rollout)"
	(($(q thread_history_1 "SELECT count(*) FROM thread_items WHERE thread_id = '$by' AND item_type = 'collabAgentToolCall' AND item_json LIKE '%$id%'") == 1))
	# the prefix twin of a snapshot belongs to no thread
	n=$(m_summary .prefix_twin)
	[[ -f $n ]]
	id=${n##*/}
	id=${id%%x.*}
	[[ -n $(m_get "$id" .id) ]]
	jq -e --arg t "$n" 'select(.summary) | .summary.keep | index($t)' "$MAN" >/dev/null
	ls "$H/shell_snapshots/$id".*.sh >/dev/null
}

@test "codex sub-agents: spawn edges 'open', line 0 source.subagent.thread_spawn, depth 3, one edge missing" {
	cx_fixture --seed 3706 --codex 6 --codex-children 3
	local id par root r
	(($(m_threads | jq -s 'map(select(.depth == 3)) | length') >= 1))
	[[ $(m_threads | jq -s 'map(select(.parent != null and .edge == false)) | length') == 1 ]]
	while IFS=$'\t' read -r id par root r; do
		line0 "$r" | jq -e --arg id "$id" --arg p "$par" --arg root "$root" '.payload
			| .id == $id and .parent_thread_id == $p and .session_id == $root and .thread_source == "subagent"
			  and (.agent_nickname | length) > 0 and .multi_agent_version == "v1"
			  and .source.subagent.thread_spawn.parent_thread_id == $p
			  and .source.subagent.thread_spawn.agent_nickname == .agent_nickname' >/dev/null
		[[ $(q state_5 "SELECT thread_source || '|' || json_extract(source, '\$.subagent.thread_spawn.parent_thread_id') FROM threads WHERE id = '$id'") == "subagent|$par" ]]
		if [[ $(m_get "$id" .edge) == true ]]; then
			[[ $(q state_5 "SELECT parent_thread_id || '|' || status FROM thread_spawn_edges WHERE child_thread_id = '$id'") == "$par|open" ]]
		else
			[[ $(q state_5 "SELECT count(*) FROM thread_spawn_edges WHERE child_thread_id = '$id'") == 0 ]]
			# it has a child of its own, reached by an edge
			(($(q state_5 "SELECT count(*) FROM thread_spawn_edges WHERE parent_thread_id = '$id'") >= 1))
		fi
	done < <(m_threads | jq -r 'select(.parent != null) | [.id, .parent, .root, .rollout] | @tsv')
	# a root's line 0: session_id = id, thread_source user
	id=$(m_pick '.parent == null')
	line0 "$(m_get "$id" .rollout)" | jq -e --arg id "$id" '.payload | .session_id == $id and .thread_source == "user" and (has("parent_thread_id") | not)' >/dev/null
}

@test "codex forks: history_base ends at a line boundary of the parent, rollout_reference line 1, a copy with only forked_from_id" {
	cx_fixture --seed 3707 --codex 8 --codex-forks 4
	local id src ord off r sr
	[[ $(m_threads | jq -s 'map(select(.fork_kind == "history_base")) | length') -ge 3 ]]   # 2 and a fork of a fork
	[[ $(m_threads | jq -s 'map(select(.fork_kind == "rollout_reference")) | length') == 1 ]]
	[[ $(m_threads | jq -s 'map(select(.fork_kind == "copied")) | length') == 1 ]]
	while IFS=$'\t' read -r id src ord off r; do
		line0 "$r" | jq -e --arg s "$src" --argjson o "$ord" --argjson b "$off" '.payload
			| .forked_from_id == $s and .forked_from_ordinal_exclusive == $o
			  and .history_base == {thread_id: $s, end_ordinal_exclusive: $o, end_byte_offset: $b}' >/dev/null
		sr=$(m_get "$src" .rollout)
		# the parent's bytes up to B are whole lines, and the next line has ordinal N
		[[ $(head -c "$off" "$sr" | tail -c 1 | od -An -c | tr -d ' ') == '\n' ]]
		[[ $(head -c "$off" "$sr" | wc -l) == "$ord" ]]
		tail -c +"$((off + 1))" "$sr" | head -n1 | jq -e --argjson o "$ord" '.ordinal == $o' >/dev/null
		# the parent names the fork; a fork is a thread of its own
		m_get "$src" '.forks[]' | grep -qx "$id"
	done < <(m_threads | jq -r 'select(.fork_kind == "history_base") | [.id, .forked_from, .history_base.end_ordinal_exclusive, .history_base.end_byte_offset, .rollout] | @tsv')
	id=$(m_pick '.fork_kind == "rollout_reference"')
	src=$(m_get "$id" .forked_from)
	r=$(m_get "$id" .rollout)
	sed -n 2p "$r" | jq -e --arg s "$src" --arg p "$(m_get "$src" .rollout_path)" \
		'.ordinal == 1 and .type == "rollout_reference" and .payload == {thread_id: $s, rollout_path: $p}' >/dev/null
	m_get "$src" '.forks[]' | grep -qx "$id"
	id=$(m_pick '.fork_kind == "copied"')
	src=$(m_get "$id" .forked_from)
	line0 "$(m_get "$id" .rollout)" | jq -e --arg s "$src" '.payload | .forked_from_id == $s and (has("history_base") | not)' >/dev/null
	[[ $(sed -n 2p "$(m_get "$id" .rollout)" | jq -r .type) != rollout_reference ]]
	# a copy does not block: it is in copies, not in forks
	m_get "$src" '.copies[]' | grep -qx "$id"
	run -1 grep -qx "$id" < <(m_get "$src" '.forks[]')
}

@test "codex archived and zst: a flat archived_sessions/, threads.archived, .jsonl.zst with the zstd magic, rollout_path naming .jsonl" {
	cx_fixture --seed 3708 --codex 10 --codex-forks 2 --codex-archived 3 --codex-zst 3
	local id r rp
	[[ $(m_threads | jq -s 'map(select(.archived)) | length') == 3 ]]
	[[ $(m_threads | jq -s 'map(select(.zst)) | length') == 3 ]]
	# a compressed fork by history_base
	[[ -n $(m_pick '.zst and .fork_kind == "history_base"') ]]
	while IFS=$'\t' read -r id r rp; do
		[[ $r == "$H/archived_sessions/rollout-"*"-$id.jsonl"* && ${r%/*} == "$H/archived_sessions" ]]
		[[ $rp == "$H/archived_sessions/${r##*/}" || $rp.zst == "$H/archived_sessions/${r##*/}" ]]
		[[ $(q state_5 "SELECT archived || '|' || (archived_at > updated_at) || '|' || rollout_path FROM threads WHERE id = '$id'") == "1|1|$rp" ]]
	done < <(m_threads | jq -r 'select(.archived) | [.id, .rollout, .rollout_path] | @tsv')
	[[ $(q state_5 'SELECT count(*) FROM threads WHERE archived = 0 AND archived_at IS NOT NULL') == 0 ]]
	while IFS=$'\t' read -r id r rp; do
		[[ $r == *.jsonl.zst && $rp == "${r%.zst}" ]]
		[[ ! -e ${r%.zst} ]]
		[[ $(head -c 4 "$r" | od -An -tx1 | tr -d ' ') == 28b52ffd ]]
		# mtime kept: that of the last line, as for a plain rollout
		[[ $(stat -c %Y "$r") == $(($(m_get "$id" .updated) / 1000)) ]]
		[[ $(q state_5 "SELECT rollout_path FROM threads WHERE id = '$id'") == "$rp" ]]
	done < <(m_threads | jq -r 'select(.zst) | [.id, .rollout, .rollout_path] | @tsv')
	if command -v zstd >/dev/null; then
		r=$(m_get "$(m_pick .zst)" .rollout)
		zstd -dc "$r" | head -n1 | jq -e '.type == "session_meta"' >/dev/null
	fi
}

@test "codex index and history lines: auto-titles and renames (last wins, one cleared), history.jsonl 0600 with session_id" {
	cx_fixture --seed 3709 --codex 12 --codex-children 2
	local id want last
	[[ $(stat -c %a "$H/history.jsonl") == 600 ]]
	jq -e -s 'all(has("session_id") and (.ts | type == "number") and (.text | type == "string"))' "$H/history.jsonl" >/dev/null
	jq -e -s 'all(has("id") and has("thread_name") and (.updated_at | test("\\.[0-9]{9}Z$")))' "$H/session_index.jsonl" >/dev/null
	# lines are in time order (append-only files)
	jq -s -e 'map(.ts) | . == sort' "$H/history.jsonl" >/dev/null
	jq -s -e 'map(.updated_at) | . == sort' "$H/session_index.jsonl" >/dev/null
	[[ -n $(m_pick '.index_lines >= 3') ]]
	# the title the manifest gives: the last index name unless it is empty, else threads.title
	while read -r id; do
		want=$(m_get "$id" .title)
		[[ $(jq -r --arg id "$id" 'select(.id == $id) | .thread_name' "$H/session_index.jsonl" | wc -l) == $(m_get "$id" .index_lines) ]]
		[[ $(jq -c --arg id "$id" 'select(.session_id == $id)' "$H/history.jsonl" | wc -l) == $(m_get "$id" .history_lines) ]]
		last=$(jq -r --arg id "$id" 'select(.id == $id) | .thread_name' "$H/session_index.jsonl" | tail -n1)
		if [[ -n $last ]]; then
			[[ $last == "$want" ]]
		else
			[[ $want == "$(q state_5 "SELECT title FROM threads WHERE id = '$id'")" ]]
		fi
	done < <(m_threads | jq -r 'select(.tui) | .id')
	# one thread was renamed and cleared; one renamed twice
	[[ $(jq -r 'select(.thread_name == "") | .id' "$H/session_index.jsonl" | wc -l) == 1 ]]
	[[ -n $(m_pick '.index_lines == 3 and .title != .first_user_message') ]]
	# sub-agents and exec threads have no lines
	id=$(m_pick '.parent != null')
	run -1 grep -q "$id" "$H/session_index.jsonl" "$H/history.jsonl"
}

@test "codex side files: stale writer locks (0 bytes, 0644), shell snapshots with declare -x, TUI markers" {
	cx_fixture --seed 3710 --codex 10 --codex-children 2
	local id f
	[[ -f $H/thread-writer-locks/.coordination.lock ]]
	while read -r id; do
		f=$H/thread-writer-locks/$id.lock
		[[ -f $f && ! -s $f && $(stat -c %a "$f") == 644 ]]
	done < <(m_threads | jq -r 'select(.lock) | .id')
	while read -r id; do
		f=$(ls "$H/shell_snapshots/$id".*.sh)
		[[ ${f##*/} =~ ^$id\.[0-9]+\.sh$ ]]
		grep -q '^declare -x OPENAI_API_KEY="sk-fixture-' "$f"
	done < <(m_threads | jq -r 'select(.snapshot) | .id')
	while read -r id; do
		f=$H/tui-thread-reference-capabilities/$id
		[[ -f $f && ! -s $f ]]
	done < <(m_threads | jq -r 'select(.tui) | .id')
	# the artifacts the manifest lists are those files
	while read -r f; do [[ -f $f ]]; done < <(m_threads | jq -r '.artifacts[]')
	[[ $(ls "$H/thread-writer-locks" | wc -l) == $(m_threads | jq -s 'map(select(.lock)) | length') ]]
}

@test "codex --codex-sqlite-home: the databases move, config.toml names them only with --codex-config-sqlite-home" {
	cx_fixture --seed 3711 --codex 3 --codex-sqlite-home "$BATS_TEST_TMPDIR/q"
	[[ -f $BATS_TEST_TMPDIR/q/state_5.sqlite && ! -e $H/state_5.sqlite ]]
	[[ $(m_summary .sqlite_home) == "$BATS_TEST_TMPDIR/q" ]]
	run -1 grep -q sqlite_home "$H/config.toml"
	# rollout paths stay under the Codex home
	[[ $(sqlite3 "$BATS_TEST_TMPDIR/q/state_5.sqlite" "SELECT count(*) FROM threads WHERE rollout_path LIKE '$H/sessions/%'") == 3 ]]
	rm -rf "$BATS_TEST_TMPDIR/q"
	cx_fixture --seed 3711 --codex 3 --codex-sqlite-home "$BATS_TEST_TMPDIR/q" --codex-config-sqlite-home
	[[ $(grep -n '' "$H/config.toml" | grep -m1 -e '^[0-9]*:\[' -e sqlite_home) == *"sqlite_home = \"$BATS_TEST_TMPDIR/q\"" ]]
	# a database already there is refused, nothing made
	rm -rf "$HOME"
	run -1 "$AGENTGC_FIXTURE" --home "$HOME" --claude 0 --codex 1 --codex-sqlite-home "$BATS_TEST_TMPDIR/q" --quiet
	[[ $output == *"already exists"* ]]
	[[ ! -e $H ]]
}

@test "codex options: usage errors for impossible plans, the options in --help" {
	run -2 "$AGENTGC_FIXTURE" --home "$HOME/x" --codex 2 --codex-children 3
	[[ $output == *"must not be larger than --codex"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$HOME/x" --codex-forks 1
	[[ $output == *"need --codex"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$HOME/x" --codex 2 --codex-zst 9
	[[ $output == *"must not be larger than --codex"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$HOME/x" --codex 2 --codex-archived 3
	run -2 "$AGENTGC_FIXTURE" --home "$HOME/x" --codex 2 --codex-config-sqlite-home
	[[ ! -e $HOME/x ]]
	run -0 "$AGENTGC_FIXTURE" --help
	for o in --codex --codex-children --codex-forks --codex-archived --codex-zst --codex-small \
		--codex-sqlite-home --codex-config-sqlite-home; do
		[[ $output == *"  $o "* || $output == *"  $o"$'\n'* ]] || { echo "no $o in --help"; return 1; }
	done
}

@test "codex --codex-small: line 0 under 1 KB, the same threads otherwise" {
	cx_fixture --seed 3712 --codex 4 --codex-small
	local r
	while read -r r; do
		(($(line0 "$r" | wc -c) < 1024))
		line0 "$r" | jq -e '.payload.base_instructions.text | length > 0' >/dev/null
	done < <(m_threads | jq -r .rollout)
}
