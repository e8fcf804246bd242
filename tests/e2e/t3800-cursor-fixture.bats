#!/usr/bin/env bats
# The Cursor CLI homes of agentgc-fixture --cursor (formats/cursor.md): the layout of §1 and §2
# (buckets = md5 of the cwd, ACP sessions and leftovers, the three transcript forms,
# sub-agents, the same id in two buckets), the store.db and ai-code-tracking.db schemas of §7,
# the meta row's encodings, times and determinism, checked with sqlite3, jq, md5sum and
# sha256sum against the generator's own manifest. This checks the oracle, not agentgc: the
# Cursor adapter is tested on these homes, and a fixture that drifts from the format doc would
# test nothing.

load lib

setup() {
	need_fixture
	# agentgc itself is not run here; agc_setup only asks for an executable, so the check of
	# the generator runs where agentgc was not built
	[[ -x ${AGENTGC:-} ]] || AGENTGC=$AGENTGC_FIXTURE
	agc_setup
	command -v sqlite3 >/dev/null || { echo "the sqlite3 tool is needed" >&2; return 1; }
	unset CURSOR_CONFIG_DIR XDG_CONFIG_HOME
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
}

# The home the brief of the generator names, with every kind of session in it.
BIG=(--cursor 12 --cursor-acp 2 --cursor-leftovers 3 --cursor-subagents 2 --cursor-twins 2
	--cursor-corrupt-meta 1 --cursor-corrupt-store 1 --projects 3)

# A generated Cursor home in $HOME (made afresh: the generator wants an empty one).
cu_fixture() {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --now "$NOW" --quiet \
		--manifest "$MAN" "$@"
	mkdir -p "$TMPDIR"
}

m_lines() { jq -c 'select(.agent == "cursor")' "$MAN"; }
m_get() { jq -r --arg id "$1" "select(.agent == \"cursor\" and .id == \$id) | $2" "$MAN"; }
m_summary() { jq -r "select(.summary) | .summary.cursor | $1" "$MAN"; }

# sqlite3 on a database without touching it: immutable=1 reads the main file only and makes no
# -wal or -shm (a plain open would checkpoint a young store's WAL away on close). The main file
# of a young store holds every page (the WAL replays the same pages).
q() { sqlite3 -batch "file:$1?immutable=1" "$2"; }

# Hex text to bytes (perl: xxd is not among the packages the project installs).
unhex() { perl -ne 'chomp; print pack("H*", $_)'; }

md5() { printf '%s' "$1" | md5sum | cut -c1-32; }
slug() {
	local s=${1#/}
	printf '%s' "${s//\//-}"
}
uuid4_re='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

# Mtime of a path in epoch ms.
mtime_ms() { find "$1" -maxdepth 0 -printf '%T@\n' | awk '{ printf "%.0f\n", $1 * 1000 }'; }

@test "cursor home: every artifact exists; buckets are md5 of the cwd; dirs, transcripts and sub-agents where §2 puts them" {
	cu_fixture --seed 3801 "${BIG[@]}"
	local root id kind cwd ws d t tr n c f
	root=$(m_summary .root)
	[[ $root == "$HOME/.cursor" && $(m_summary .projects) == "$HOME/.cursor/projects" ]]
	[[ $(m_summary .split_root) == null ]]
	[[ $(m_lines | wc -l) == 17 ]]
	[[ $(m_summary '[.chats, .acp, .leftovers, .twins, .corrupt_meta, .corrupt_store] | map(tostring) | @tsv') == $'12\t2\t3\t2\t1\t1' ]]
	# every path a purge removes exists (checked before anything opens a database)
	while read -r f; do
		[[ -e $f ]] || { echo "missing artifact $f"; return 1; }
	done < <(m_lines | jq -r '.artifacts[]')
	# the dirs and transcripts are artifacts, and nothing else is
	m_lines | jq -e -s 'all(.[]; (.dirs + .transcripts) - .artifacts == [] and .artifacts - (.dirs + .transcripts) == [])' >/dev/null
	while IFS=$'\t' read -r id kind cwd ws d; do
		[[ $id =~ $uuid4_re ]] || { echo "not a UUIDv4: $id"; return 1; }
		if [[ $kind == chat ]]; then
			[[ $ws == "$(md5 "$cwd")" ]] || { echo "$id: bucket $ws is not md5 of '$cwd'"; return 1; }
			[[ $d == "$root/chats/$ws/$id" && -d $d ]]
		else
			[[ $ws == null && $d == "$root/acp-sessions/$id" && -d $d ]]
		fi
	done < <(m_lines | jq -r '[.id, .kind, .project, .bucket, .dirs[0]] | map(tostring) | @tsv')
	# transcripts: <slug>/agent-transcripts/<id>.txt, <id>.jsonl or <id>/ holding <id>.jsonl
	while IFS=$'\t' read -r id cwd tr; do
		t=$HOME/.cursor/projects/$(slug "$cwd")/agent-transcripts
		case $tr in
		"$t/$id.txt")
			grep -q '^user: ' "$tr"
			grep -q '^assistant: ' "$tr"
			;;
		"$t/$id.jsonl")
			jq -e -s 'length > 0 and all(.role and (.message.content | type == "array"))' "$tr" >/dev/null
			;;
		"$t/$id")
			[[ -d $tr ]]
			jq -e -s 'length > 0 and all(.role and (.message.content | type == "array"))' "$tr/$id.jsonl" >/dev/null
			;;
		*)
			echo "$id: transcript '$tr' is not in $t"
			return 1
			;;
		esac
	done < <(m_lines | jq -r 'select(.transcripts | length > 0) | [.id, .project, .transcripts[0]] | map(tostring) | @tsv')
	# each form once at least, and chats without a transcript
	[[ -n $(m_lines | jq -r 'select(.transcripts[0]? | strings | endswith(".txt")) | .id') ]]
	[[ -n $(m_lines | jq -r 'select(.transcripts[0]? | strings | endswith(".jsonl")) | .id') ]]
	[[ -n $(m_lines | jq -r 'select(.transcripts[0]? | strings | test("/agent-transcripts/[0-9a-f-]{36}$")) | .id') ]]
	[[ -n $(m_lines | jq -r 'select(.kind == "chat" and (.transcripts | length) == 0) | .id') ]]
	# sub-agents: 1 or 2 per delegating chat, UUIDv4, <id>/subagents/<child>.jsonl
	[[ $(m_lines | jq -s 'map(select((.children | length) > 0)) | length') == 2 ]]
	[[ $(m_lines | jq -s 'map(.children | length) | add') == "$(m_summary .subagents)" ]]
	while IFS=$'\t' read -r id tr n; do
		((n == 1 || n == 2))
		[[ $tr == */agent-transcripts/$id ]]
		for c in $(m_get "$id" '.children[]'); do
			[[ $c =~ $uuid4_re && $c != "$id" ]]
			jq -e -s 'length == 2 and .[0].role == "user"' "$tr/subagents/$c.jsonl" >/dev/null
		done
		[[ $(ls "$tr/subagents" | wc -l) == "$n" ]]
	done < <(m_lines | jq -r 'select((.children | length) > 0) | [.id, .transcripts[0], (.children | length)] | map(tostring) | @tsv')
	# young: -wal and -shm with content beside store.db, and only then
	while IFS=$'\t' read -r id d kind; do
		if [[ $kind == true ]]; then
			[[ -s $d/store.db-wal && -s $d/store.db-shm ]] || { echo "$id: young without -wal/-shm"; return 1; }
		else
			[[ ! -e $d/store.db-wal && ! -e $d/store.db-shm ]]
		fi
	done < <(m_lines | jq -r '[.id, .dirs[0], .young] | map(tostring) | @tsv')
	[[ -n $(m_lines | jq -r 'select(.young) | .id') ]]
	# meta.json: its title is meta_json_title, in both forms of §2; prompt_history.json an array
	while IFS=$'\t' read -r id d t cwd; do
		if [[ $t == null ]]; then
			[[ ! -e $d/meta.json ]]
			continue
		fi
		jq -e --arg t "$t" --arg cwd "$cwd" '.title == $t and (.createdAtMs | type == "number")
			and ((has("updatedAtMs") and (has("cwd") | not)) or (.schemaVersion == 1 and .cwd == $cwd))' "$d/meta.json" >/dev/null
	done < <(m_lines | jq -r 'select(.kind == "chat") | [.id, .dirs[0], .meta_json_title, .project] | map(tostring) | @tsv')
	(($(cat "$root"/chats/*/*/meta.json | grep -c schemaVersion) > 0))
	(($(cat "$root"/chats/*/*/meta.json | grep -c updatedAtMs) > 0))
	for f in "$root"/chats/*/*/prompt_history.json; do
		jq -e 'type == "array" and length > 0 and all(type == "string")' "$f" >/dev/null
	done
	# ACP: store.db and meta.json {schemaVersion, cwd}; a leftover only meta.json
	while IFS=$'\t' read -r id kind cwd d; do
		jq -e --arg cwd "$cwd" '. == {schemaVersion: 1, cwd: $cwd}' "$d/meta.json" >/dev/null
		if [[ $kind == acp ]]; then
			[[ -f $d/store.db ]]
		else
			[[ $(ls -A "$d") == meta.json ]]
			(($(stat -c %s "$d/meta.json") < 128))
		fi
	done < <(m_lines | jq -r 'select(.kind != "chat") | [.id, .kind, .project, .dirs[0]] | map(tostring) | @tsv')
	# what a purge keeps exists
	while read -r f; do
		[[ -e $f ]] || { echo "missing kept $f"; return 1; }
	done < <(jq -r 'select(.summary) | .summary.keep[]' "$MAN")
	for f in "$(m_summary .tracking_db)" "$root/prompt_history.json" "$root/cli-config.json"; do
		jq -e --arg f "$f" 'select(.summary) | .summary.keep | index($f)' "$MAN" >/dev/null
	done
	jq -e 'type == "array" and all(type == "string")' "$root/prompt_history.json" >/dev/null
	run -1 grep -qE '[0-9a-f]{8}-[0-9a-f]{4}-4' "$root/prompt_history.json"
}

@test "cursor stores: meta rows decode to the chat (hex, raw, corrupt), blob ids are sha256, the root blob lists the messages" {
	cu_fixture --seed 3802 "${BIG[@]}"
	local id d meta store title created cwd v json root b h ids n
	for meta in hex raw corrupt; do
		[[ -n $(m_lines | jq -r --arg m "$meta" 'select(.meta == $m) | .id') ]] || { echo "no meta $meta"; return 1; }
	done
	while IFS=$'\t' read -r id d meta store title created cwd; do
		if [[ $store == corrupt ]]; then
			[[ $(head -c 14 "$d/store.db") == "not a database" && $(stat -c %s "$d/store.db") == 4096 ]]
			run ! q "$d/store.db" 'SELECT count(*) FROM meta'
			[[ $meta == null && $title == null ]]
			continue
		fi
		# WAL mode in the header (bytes 18 and 19), the two tables of §7 exactly
		[[ $(od -An -tx1 -j18 -N2 "$d/store.db" | tr -d ' ') == 0202 ]]
		[[ $(q "$d/store.db" "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name)") == \
			'CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB);CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)' ]]
		[[ $(q "$d/store.db" 'SELECT count(*) FROM meta') == 1 ]]
		v=$(q "$d/store.db" "SELECT value FROM meta WHERE key = '0'")
		case $meta in
		hex)
			[[ $v =~ ^[0-9a-f]+$ ]]
			json=$(printf '%s' "$v" | unhex)
			;;
		raw)
			[[ $v == '{'* ]]
			json=$v
			;;
		corrupt)
			[[ $title == null ]]
			# neither JSON nor hex of JSON (a negated command would not fail the test)
			if jq -e . <<<"$v" >/dev/null 2>&1 || printf '%s' "$v" | unhex | jq -e . >/dev/null 2>&1; then
				echo "$id: the corrupt meta '$v' reads as JSON"
				return 1
			fi
			continue
			;;
		esac
		jq -e --arg id "$id" --arg t "$title" --argjson c "$created" '.agentId == $id and .name == $t
			and .createdAt == $c and .mode == "default" and (.latestRootBlobId | test("^[0-9a-f]{64}$"))' <<<"$json" >/dev/null ||
			{ echo "$id: meta $json"; return 1; }
		root=$(jq -r .latestRootBlobId <<<"$json")
		# every blob's id is the sha256 of its bytes
		while IFS='|' read -r b h; do
			[[ $(printf '%s' "$h" | unhex | sha256sum | cut -c1-64) == "$b" ]] || { echo "$id: blob $b"; return 1; }
		done < <(q "$d/store.db" 'SELECT id, hex(data) FROM blobs')
		# the root lists each message blob as field 1 (0x0a, 32 bytes); the messages are JSON,
		# the first user blob names the workspace
		h=$(q "$d/store.db" "SELECT lower(hex(data)) FROM blobs WHERE id = '$root'")
		[[ ${h:0:4} == 0a20 ]]
		ids=$(q "$d/store.db" "SELECT id FROM blobs WHERE id != '$root'")
		n=0
		for b in $ids; do
			[[ $h == *0a20$b* ]] || { echo "$id: root does not list $b"; return 1; }
			n=$((n + 1))
		done
		((n >= 2))
		q "$d/store.db" "SELECT data FROM blobs WHERE id != '$root'" | jq -e -s 'all(.role | IN("user", "assistant", "tool"))' >/dev/null
		q "$d/store.db" "SELECT data FROM blobs WHERE id != '$root'" | jq -e -s --arg cwd "$cwd" \
			'any(.role == "user" and (.content | startswith("<user_info>\nOS: linux\nWorkspace Path: " + $cwd + "\n</user_info>\n<user_query>\n")))' >/dev/null
	done < <(m_lines | jq -r 'select(.kind == "chat") | [.id, .dirs[0], .meta, .store, .title, .created, .project] | map(tostring) | @tsv')
	# "New Agent" is kept as the name of some chats; others are named by their first prompt
	[[ -n $(m_lines | jq -r 'select(.title == "New Agent") | .id') ]]
	(($(m_lines | jq -r 'select(.title != null and .title != "New Agent") | .title | length' | sort -n | tail -n1) <= 60))
	# a young store's -wal replays onto the same pages: a copy opened for real (which reads the
	# WAL) has the same rows as the main file alone
	id=$(m_lines | jq -r 'select(.young) | .id' | head -n1)
	d=$(m_get "$id" '.dirs[0]')
	mkdir "$BATS_TEST_TMPDIR/young"
	cp "$d"/store.db* "$BATS_TEST_TMPDIR/young/"
	[[ $(sqlite3 "$BATS_TEST_TMPDIR/young/store.db" 'PRAGMA integrity_check; SELECT id, hex(data) FROM blobs ORDER BY id; SELECT * FROM meta') == \
		"ok"$'\n'"$(q "$d/store.db" 'SELECT id, hex(data) FROM blobs ORDER BY id; SELECT * FROM meta')" ]]
	# ACP stores: the same format, hex meta, no name
	while IFS=$'\t' read -r id d; do
		q "$d/store.db" "SELECT value FROM meta WHERE key = '0'" | unhex | jq -e --arg id "$id" '.agentId == $id and (has("name") | not)' >/dev/null
	done < <(m_lines | jq -r 'select(.kind == "acp") | [.id, .dirs[0]] | map(tostring) | @tsv')
}

@test "cursor twins: the same id in a second bucket (another project's md5), an empty \"New Agent\" chat" {
	cu_fixture --seed 3803 "${BIG[@]}"
	local id ws d1 d2 ws2 cwd2 json
	[[ $(m_lines | jq -s 'map(select((.dirs | length) == 2)) | length') == 2 ]]
	while IFS=$'\t' read -r id ws d1 d2; do
		[[ ${d2##*/} == "$id" && $d1 != "$d2" ]]
		ws2=${d2%/*}
		ws2=${ws2##*/}
		[[ $ws2 != "$ws" ]]
		cwd2=$(jq -r .cwd "$d2/meta.json")
		[[ $ws2 == "$(md5 "$cwd2")" ]]
		jq -e '.title == "New Agent" and .schemaVersion == 1' "$d2/meta.json" >/dev/null
		json=$(q "$d2/store.db" "SELECT value FROM meta WHERE key = '0'" | unhex)
		jq -e --arg id "$id" '.agentId == $id and .name == "New Agent" and .latestRootBlobId == ""' <<<"$json" >/dev/null
		[[ $(q "$d2/store.db" 'SELECT count(*) FROM blobs') == 1 ]]
	done < <(m_lines | jq -r 'select((.dirs | length) == 2) | [.id, .bucket, .dirs[0], .dirs[1]] | map(tostring) | @tsv')
}

@test "cursor tracking db: the schema, each session's rows as the manifest counts them, rows of no session, no -wal left" {
	cu_fixture --seed 3804 "${BIG[@]}"
	local db id t n want all list c0 sum
	db=$(m_summary .tracking_db)
	[[ $db == "$HOME/.cursor/ai-tracking/ai-code-tracking.db" && -f $db ]]
	[[ ! -e $db-wal && ! -e $db-shm ]]
	[[ $(od -An -tx1 -j18 -N2 "$db" | tr -d ' ') == 0202 ]]
	[[ $(q "$db" "SELECT sql FROM sqlite_master WHERE name = 'conversation_summaries'") == \
		'CREATE TABLE conversation_summaries (conversationId TEXT PRIMARY KEY, title TEXT, tldr TEXT, overview TEXT, summaryBullets TEXT, model TEXT, mode TEXT, updatedAt INTEGER)' ]]
	[[ $(q "$db" "SELECT sql FROM sqlite_master WHERE name = 'ai_code_hashes'") == \
		'CREATE TABLE ai_code_hashes (hash TEXT PRIMARY KEY, source TEXT, fileExtension TEXT, fileName TEXT, requestId TEXT, conversationId TEXT, timestamp INTEGER, createdAt INTEGER, model TEXT)' ]]
	[[ $(q "$db" "SELECT sql FROM sqlite_master WHERE name = 'tracked_file_content'") == \
		'CREATE TABLE tracked_file_content (id INTEGER PRIMARY KEY AUTOINCREMENT, gitPath TEXT, filePath TEXT, conversationId TEXT, model TEXT, content TEXT, createdAt INTEGER)' ]]
	[[ $(q "$db" "SELECT sql FROM sqlite_master WHERE name = 'scored_commits'") == \
		'CREATE TABLE scored_commits (commitHash TEXT, branchName TEXT, scoredAt INTEGER, linesAdded INTEGER, linesDeleted INTEGER, PRIMARY KEY (commitHash, branchName))' ]]
	[[ $(q "$db" "SELECT sql FROM sqlite_master WHERE name = 'idx_ai_code_hashes_conv'") == \
		'CREATE INDEX idx_ai_code_hashes_conv ON ai_code_hashes(conversationId)' ]]
	# each session's own rows
	while IFS=$'\t' read -r id t want; do
		n=$(q "$db" "SELECT count(*) FROM $t WHERE conversationId = '$id'")
		[[ $n == "$want" ]] || { echo "$id $t: $n rows, manifest $want"; return 1; }
	done < <(m_lines | jq -r '.id as $id | .rows | to_entries[] | [$id, .key, .value] | map(tostring) | @tsv')
	# a chat of every eighth has none; every ACP session a summary; leftovers none
	[[ -n $(m_lines | jq -r 'select(.kind == "chat" and .rows.conversation_summaries == 0) | .id') ]]
	m_lines | jq -e -s 'all(.[] | select(.kind == "acp"); .rows.conversation_summaries == 1)' >/dev/null
	m_lines | jq -e -s 'all(.[] | select(.kind == "leftover"); .rows | add == 0)' >/dev/null
	# sub-agents: one hash row each, under their own id; child_rows counts them
	while IFS=$'\t' read -r id want; do
		sum=0
		for c in $(m_get "$id" '.children[]'); do
			[[ $(q "$db" "SELECT count(*) FROM ai_code_hashes WHERE conversationId = '$c'") == 1 ]]
			n=$(q "$db" "SELECT (SELECT count(*) FROM ai_code_hashes WHERE conversationId = '$c') + (SELECT count(*) FROM conversation_summaries WHERE conversationId = '$c') + (SELECT count(*) FROM tracked_file_content WHERE conversationId = '$c')")
			sum=$((sum + n))
		done
		[[ $sum == "$want" ]]
	done < <(m_lines | jq -r 'select((.children | length) > 0) | [.id, .child_rows] | map(tostring) | @tsv')
	# rows of no session: as the summary counts them; all rows are the sessions' or these
	all=$(m_lines | jq -r '.id, .children[]' | sed "s/.*/'&'/" | paste -sd, -)
	for t in conversation_summaries ai_code_hashes tracked_file_content; do
		n=$(q "$db" "SELECT count(*) FROM $t WHERE conversationId IS NULL OR conversationId NOT IN ($all)")
		[[ $n == "$(m_summary ".orphan_rows.$t")" ]] || { echo "$t: $n rows of no session"; return 1; }
	done
	[[ $(q "$db" 'SELECT count(*) FROM scored_commits') == "$(m_summary .orphan_rows.scored_commits)" ]]
	[[ $(m_summary '.orphan_rows | [.conversation_summaries, .ai_code_hashes, .scored_commits] | map(tostring) | @tsv') == $'1\t8\t2' ]]
	sum=$(m_lines | jq -s 'map((.rows | add) + .child_rows) | add')
	[[ $(q "$db" 'SELECT (SELECT count(*) FROM conversation_summaries) + (SELECT count(*) FROM ai_code_hashes) + (SELECT count(*) FROM tracked_file_content)') == \
		$((sum + 1 + 8)) ]]
	[[ $(q "$db" "SELECT count(*) FROM ai_code_hashes WHERE conversationId = 'not-a-uuid'") == 2 ]]
	# the summary of an id of no session is a UUID; one row quotes chat 0's id in requestId only;
	# two near misses of that id (upper case, a suffix) belong to no session
	list=$(q "$db" "SELECT conversationId FROM conversation_summaries WHERE conversationId NOT IN ($all)")
	[[ $list =~ $uuid4_re ]]
	c0=$(m_lines | jq -r 'select(.kind == "chat") | .id' | head -n1)
	[[ $(q "$db" "SELECT count(*) FROM ai_code_hashes WHERE requestId = '$c0' AND conversationId IS NULL") == 1 ]]
	[[ $(q "$db" "SELECT count(*) FROM ai_code_hashes WHERE conversationId = upper('$c0')") == 1 ]]
	[[ $(q "$db" "SELECT count(*) FROM ai_code_hashes WHERE conversationId LIKE '$c0%' AND conversationId != '$c0'") == 2 ]]
	[[ $(q "$db" 'SELECT count(*) FROM ai_code_hashes WHERE conversationId IS NULL') == 4 ]]
}

@test "cursor times: files and dirs of a session at its updated time, every dir at the newest of what it holds" {
	cu_fixture --seed 3805 "${BIG[@]}"
	local id d up created f bad
	while IFS=$'\t' read -r id d up created; do
		for f in $(find "$d"); do
			[[ $(mtime_ms "$f") == "$up" ]] || { echo "$f: $(mtime_ms "$f"), updated $up"; return 1; }
		done
		((created <= up && up < NOW * 1000))
	done < <(m_lines | jq -r '[.id, (.dirs[0], .transcripts[]), .updated, .created] | map(tostring) | @tsv' | awk -F'\t' '{ for (i = 2; i < NF - 1; i++) print $1 "\t" $i "\t" $(NF - 1) "\t" $NF }')
	# a twin lies inside the chat's time
	while IFS=$'\t' read -r id d up created; do
		f=$(mtime_ms "$d")
		((created <= f && f <= up))
	done < <(m_lines | jq -r 'select((.dirs | length) == 2) | [.id, .dirs[1], .updated, .created] | map(tostring) | @tsv')
	# every dir of the Cursor trees: its time is the newest of its entries
	bad=$(find "$HOME/.cursor" -type d | while read -r d; do
		f=$(find "$d" -mindepth 1 -maxdepth 1 -printf '%T@\n' | sort -n | tail -n1)
		[[ -z $f || $(find "$d" -maxdepth 0 -printf '%T@') == "$f" ]] || echo "$d"
	done)
	[[ -z $bad ]] || { echo "dirs not at the newest of their entries: $bad"; return 1; }
	[[ $(mtime_ms "$HOME/.cursor") == $(m_lines | jq -s 'map(.updated) | max') ]]
}

@test "cursor determinism: the same seed gives the same tree, bytes and times; another seed another" {
	sig() {
		(cd "$HOME" && find . -printf '%P %y %m %s %T@\n' | LC_ALL=C sort &&
			find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
	}
	local a m b
	cu_fixture --seed 3806 "${BIG[@]}"
	a=$(sig)
	m=$(sha256sum <"$MAN")
	cu_fixture --seed 3806 "${BIG[@]}"
	b=$(sig)
	[[ $a == "$b" ]] || { diff <(echo "$a") <(echo "$b") | head -n 20; return 1; }
	[[ $m == "$(sha256sum <"$MAN")" ]]
	# the young stores' WALs are the same bytes too (their salts come from a seeded PRNG)
	grep -q 'store.db-wal' <<<"$a"
	cu_fixture --seed 3807 "${BIG[@]}"
	[[ $a != "$(sig)" ]]
	[[ $m != "$(sha256sum <"$MAN")" ]]
}

@test "cursor --cursor-split: every third chat under ~/.config/cursor/chats, the others under ~/.cursor/chats" {
	cu_fixture --seed 3808 --cursor 9 --cursor-twins 3 --cursor-acp 1 --projects 3 --cursor-split
	local k id split d
	[[ $(m_summary .root) == "$HOME/.cursor" && $(m_summary .split_root) == "$HOME/.config/cursor" ]]
	while IFS=$'\t' read -r k id split d; do
		if ((k % 3 == 2)); then
			[[ $split == true && $d == "$HOME/.config/cursor/chats/"* ]] || { echo "chat $k: $d"; return 1; }
		else
			[[ $split == false && $d == "$HOME/.cursor/chats/"* ]] || { echo "chat $k: $d"; return 1; }
		fi
		[[ -d $d && ${d##*/} == "$id" ]]
	done < <(m_lines | jq -r -s 'map(select(.kind == "chat")) | to_entries[] | .key as $k | .value | .id as $id | .split as $s | .dirs[] | [$k, $id, $s, .] | map(tostring) | @tsv')
	# ACP, transcripts and tracking stay under ~/.cursor; each root has its prompt history
	[[ -d $HOME/.cursor/acp-sessions && ! -e $HOME/.config/cursor/acp-sessions ]]
	m_lines | jq -e -s --arg p "$HOME/.cursor/projects/" 'all(.[].transcripts[]; startswith($p))' >/dev/null
	[[ -f $HOME/.config/cursor/prompt_history.json && -f $HOME/.cursor/prompt_history.json ]]
	jq -e --arg f "$HOME/.config/cursor/prompt_history.json" 'select(.summary) | .summary.keep | index($f)' "$MAN" >/dev/null
}

@test "cursor --cursor-xdg: chats and ACP sessions under ~/.config/cursor, transcripts and tracking under ~/.cursor" {
	cu_fixture --seed 3809 --cursor 6 --cursor-acp 2 --cursor-leftovers 1 --cursor-xdg
	local x=$HOME/.config/cursor
	[[ $(m_summary .root) == "$x" && $(m_summary .split_root) == null ]]
	m_lines | jq -e -s --arg c "$x/chats/" --arg a "$x/acp-sessions/" \
		'all(.[]; if .kind == "chat" then (.dirs | all(startswith($c))) else (.dirs | all(startswith($a))) end)' >/dev/null
	m_lines | jq -e -s --arg p "$HOME/.cursor/projects/" 'all(.[].transcripts[]; startswith($p))' >/dev/null
	[[ ! -e $HOME/.cursor/chats && ! -e $HOME/.cursor/acp-sessions && ! -e $HOME/.cursor/cli-config.json ]]
	[[ -f $x/cli-config.json && -f $x/prompt_history.json ]]
	[[ $(m_summary .tracking_db) == "$HOME/.cursor/ai-tracking/ai-code-tracking.db" ]]
	while read -r f; do [[ -e $f ]]; done < <(m_lines | jq -r '.artifacts[]')
}

@test "cursor without --cursor: no Cursor dirs, \"cursor\":null; --cursor 0: the shared files and rows of no session" {
	cu_fixture --seed 3810
	[[ ! -e $HOME/.cursor && ! -e $HOME/.config ]]
	[[ $(jq -c 'select(.summary) | .summary.cursor' "$MAN") == null ]]
	cu_fixture --seed 3810 --cursor 0
	[[ -z $(m_lines) ]]
	[[ $(ls -A "$HOME/.cursor/chats") == "" ]]
	[[ $(q "$HOME/.cursor/ai-tracking/ai-code-tracking.db" 'SELECT count(*) FROM ai_code_hashes') == "$(m_summary .orphan_rows.ai_code_hashes)" ]]
	[[ -f $HOME/.cursor/prompt_history.json && -f $HOME/.cursor/cli-config.json ]]
}

@test "cursor options: usage errors exit 2, say why and create nothing; the options in --help" {
	local x=$BATS_TEST_TMPDIR/x
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor 2 --cursor-twins 5
	[[ $output == *"must not be larger than --cursor"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor-acp 1
	[[ $output == *"need --cursor"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor-split
	[[ $output == *"need --cursor"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor 2 --cursor-subagents 3
	[[ $output == *"must not be larger than --cursor"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor 2 --cursor-corrupt-meta 2 --cursor-corrupt-store 1
	[[ $output == *"--cursor-corrupt-meta plus --cursor-corrupt-store is larger than --cursor"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor 3 --cursor-xdg --cursor-split
	[[ $output == *"cannot be used together"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor -1
	[[ $output == *"invalid value '-1' for --cursor"* ]]
	run -2 "$AGENTGC_FIXTURE" --home "$x" --cursor 2 --cursor-leftovers x
	[[ $output == *"invalid value 'x' for --cursor-leftovers"* ]]
	[[ ! -e $x ]]
	# an existing Cursor root is refused (exit 1) before any Cursor file is made
	mkdir -p "$x/.config/cursor"
	run -1 "$AGENTGC_FIXTURE" --home "$x" --claude 0 --cursor 1 --cursor-xdg --quiet
	[[ $output == *"already exists"* ]]
	[[ ! -e $x/.cursor && -z $(ls -A "$x/.config/cursor") ]]
	run -0 "$AGENTGC_FIXTURE" --help
	for o in --cursor --cursor-acp --cursor-leftovers --cursor-subagents --cursor-twins \
		--cursor-corrupt-meta --cursor-corrupt-store --cursor-xdg --cursor-split; do
		[[ $output == *"  $o "* || $output == *"  $o"$'\n'* ]] || { echo "no $o in --help"; return 1; }
	done
}
