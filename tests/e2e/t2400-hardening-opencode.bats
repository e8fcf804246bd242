#!/usr/bin/env bats
# Hardening of the OpenCode adapter: what discovery sees through a link or reads from a file
# that does not name the session reaches no artifact, and a root derived from the agent's data
# is walked beneath it (R2); one store that cannot be read refuses only its own sessions, and a
# dry run answers as the purge does (R8); an empty session table; pins in session.json (R4).

load lib
load oc

# The legacy part files (storage/part/*/*.json) whose own content names session ID.
parts_of() {
	grep -rl -F -- "\"sessionID\":\"$1\"" "$DATA/storage/part" | LC_ALL=C sort
}

# The legacy message files of session ID.
messages_of() {
	find "$DATA/storage/message/$1" -name 'msg_*.json' | LC_ALL=C sort
}

# Two legacy root sessions without children: S (purged) and O (must survive).
two_legacy() {
	oc_fixture --seed 2401 --opencode 4 --opencode-legacy 4
	mapfile -t R < <(m_sessions | jq -r 'select(.parent == null and .legacy and (.children | length) == 0) | .id')
	S=${R[0]} O=${R[1]}
	[[ -n $S && -n $O ]]
	parts_of "$O" >"$BATS_TEST_TMPDIR/o.parts"
	messages_of "$O" >"$BATS_TEST_TMPDIR/o.messages"
	[[ -s $BATS_TEST_TMPDIR/o.parts && -s $BATS_TEST_TMPDIR/o.messages ]]
}

# Every part and message file of O noted by two_legacy is still there.
assert_o_intact() {
	local f
	while read -r f; do
		[[ -f $f ]] || { echo "gone: $f" >&2; return 1; }
	done < <(cat "$BATS_TEST_TMPDIR/o.parts" "$BATS_TEST_TMPDIR/o.messages")
}

@test "R2: storage/message/<S> a link to another session's message dir: that session's message and part files survive" {
	two_legacy
	rm -rf "$DATA/storage/message/$S"
	ln -s "$DATA/storage/message/$O" "$DATA/storage/message/$S"
	run --separate-stderr agc --json purge opencode "$S"
	[[ $status -eq 0 || $status -eq 3 ]]
	assert_o_intact
	assert_no_rows "$S"
	# the link went as the link alone
	[[ ! -e $DATA/storage/message/$S && ! -L $DATA/storage/message/$S ]]
}

@test "R2: storage/message/<S> a link to a dir outside holding another session's message files: their parts survive" {
	two_legacy
	mkdir -p "$OUT"
	rm -rf "$DATA/storage/message/$S"
	cp -a "$DATA/storage/message/$O" "$OUT/msgs"
	ln -s "$OUT/msgs" "$DATA/storage/message/$S"
	snap out
	run --separate-stderr agc --json purge opencode "$S"
	[[ $status -eq 0 || $status -eq 3 ]]
	assert_o_intact
	assert_outside_unchanged out
}

@test "R2: message files planted in storage/message/<S>/ naming another session's messages: that session's parts survive; the session's own go" {
	two_legacy
	local om mine
	om=$(head -n1 "$BATS_TEST_TMPDIR/o.messages")
	om=$(basename "$om" .json)
	mine=$(parts_of "$S")
	[[ -n $mine ]]
	# a copy of O's message file (it names O), and one that claims S but names O's message
	cp "$DATA/storage/message/$O/$om.json" "$DATA/storage/message/$S/$om.json"
	printf '{"id":"%s","sessionID":"%s","role":"user"}' "$om" "$S" >"$DATA/storage/message/$S/planted.json"
	local m2
	m2=$(sed -n 2p "$BATS_TEST_TMPDIR/o.messages")
	m2=$(basename "$m2" .json)
	if [[ -n $m2 ]]; then
		printf '{"id":"%s","sessionID":"%s","role":"user"}' "$m2" "$S" >"$DATA/storage/message/$S/$m2.json"
	fi
	# what does not name the session is left and said (R7)
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg p "$DATA/storage/message/$S/$om.json" '.[0].residual | any(.path == $p)'
	assert_o_intact
	# the session's own parts went, and its own message files
	local f
	for f in $mine; do [[ ! -e $f ]]; done
	[[ -z $(grep -rl -F -- "\"sessionID\":\"$S\"" "$DATA/storage/part" || true) ]]
	# what does not name the session itself stays
	[[ -f $DATA/storage/message/$S/$om.json ]]
	assert_no_rows "$S"
}

@test "R2: a legacy part dir of the session's message holding another session's part file: that file survives" {
	two_legacy
	local sm d of
	sm=$(messages_of "$S" | head -n1)
	sm=$(basename "$sm" .json)
	d=$DATA/storage/part/$sm
	[[ -d $d ]]
	of=$(head -n1 "$BATS_TEST_TMPDIR/o.parts")
	cp "$of" "$d/$(basename "$of")"
	# the file is left and said, and the message that leads to it is kept (R7)
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg p "$d/$(basename "$of")" '.[0].residual | any(.path == $p and (.reason | test("does not name the session")))'
	json_ok --arg p "$DATA/storage/message/$S/$sm.json" '.[0].residual | any(.path == $p)'
	assert_o_intact
	[[ -f $d/$(basename "$of") ]]
	[[ -z $(grep -rl -F -- "\"sessionID\":\"$S\"" "$DATA/storage/part" || true) ]]
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg p "$d/$(basename "$of")" '.[0].residual | any(.path == $p)'
}

@test "R2: a child named only by a linked database is not purged with the session" {
	oc_fixture --seed 2402 --opencode 4
	local S O
	mapfile -t R < <(m_sessions | jq -r 'select(.parent == null and (.children | length) == 0) | .id')
	S=${R[0]} O=${R[1]}
	mkdir -p "$OUT"
	sqlite3 "$DB" ".backup '$OUT/x.db'"
	sqlite3 "$OUT/x.db" "UPDATE session SET parent_id = $(sqlq "$S") WHERE id = $(sqlq "$O")"
	ln -s "$OUT/x.db" "$DATA/opencode-x.db"
	oc_dump_save o "$S"
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg o "$O" '.[0].children == [] and (.[0].residual | any(.reason == "symlink"))'
	assert_no_rows "$S"
	assert_dump_same o "$S"
}

@test "R2: a worktree's .opencode that is a link to a dir outside: the plan file there survives (residual symlink)" {
	oc_fixture --seed 2403 --opencode 3
	local S W c g plan
	S=$(m_pick '.parent == null')
	W=$WORK/repo
	mkdir -p "$W" "$OUT/dot/plans"
	ln -s "$OUT/dot" "$W/.opencode"
	qw "INSERT INTO project(id, worktree, vcs, name, time_created, time_updated, sandboxes)
	    VALUES ('test-project', $(sqlq "$W"), 'git', 'repo', 1, 1, '[]');
	    UPDATE session SET project_id = 'test-project', directory = $(sqlq "$W") WHERE id = $(sqlq "$S");"
	c=$(q "SELECT time_created FROM session WHERE id = $(sqlq "$S")")
	g=$(q "SELECT slug FROM session WHERE id = $(sqlq "$S")")
	plan=$OUT/dot/plans/$c-$g.md
	echo "# not the session's to lose" >"$plan"
	snap out
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "partial" and (.[0].residual | any(.reason == "symlink" and (.path | endswith(".md"))))'
	[[ -f $plan ]]
	assert_outside_unchanged out
	assert_no_rows "$S"
}

@test "R8: a junk opencode-beta.db beside a good opencode.db: ls lists the good sessions and names the bad store; purge works (exit 0); auto of a missing id is an error, not not-found" {
	oc_fixture --seed 2404 --opencode 3
	local S
	S=$(m_pick '.parent == null')
	head -c 65536 /dev/urandom >"$DATA/opencode-beta.db"
	run -1 --separate-stderr agc --json ls --agent opencode
	diff -u <(m_sessions | jq -r 'select(.parent == null) | .id' | LC_ALL=C sort) <(jq -r .id <<<"$output" | LC_ALL=C sort)
	[[ $stderr == *opencode-beta.db* ]]
	run -1 --separate-stderr agc purge auto ses_000000000000nothere00000
	[[ $stderr == *opencode-beta.db* ]]
	run -1 --separate-stderr agc purge opencode ses_000000000000nothere00000
	[[ $stderr == *opencode-beta.db* ]]
	run -0 --separate-stderr agc --json purge --dry-run auto "$S"
	run -0 --separate-stderr agc --json purge auto "$S"
	json_ok '.[0].status == "purged"'
	assert_no_rows "$S"
	# a text file the same
	printf 'not a database\n%.0s' {1..100} >"$DATA/opencode-beta.db"
	S=$(m_pick ".parent == null and .id != \"$S\"")
	run -0 --separate-stderr agc --json purge opencode "$S"
	assert_no_rows "$S"
}

@test "R8: a locked opencode-beta.db beside a good opencode.db: the good session goes; the locked store is left as residual busy (exit 3)" {
	oc_fixture --seed 2405 --opencode 3
	local S beta=$DATA/opencode-beta.db n=$RANDOM
	S=$(m_pick '.parent == null')
	sqlite3 "$DB" ".backup '$beta'"
	sqlite3 "$beta" "PRAGMA journal_mode=DELETE" >/dev/null
	local fifo=$BATS_TEST_TMPDIR/lock-in.$n out=$BATS_TEST_TMPDIR/lock-out.$n
	mkfifo "$fifo"
	: >"$out"
	# an exclusive lock in rollback-journal mode: no reader gets in
	spawn bash -c 'exec sqlite3 -cmd "PRAGMA locking_mode=EXCLUSIVE;" -cmd "BEGIN EXCLUSIVE;" -cmd "SELECT '"'agc-ready'"';" "$1" <>"$2" >"$3"' _ "$beta" "$fifo" "$out"
	for i in $(seq 1 200); do grep -q agc-ready "$out" && break; sleep 0.02; done
	grep -q agc-ready "$out"
	! sqlite3 -readonly "$beta" 'SELECT 1 FROM session LIMIT 1' 2>/dev/null
	run -1 --separate-stderr agc --json ls --agent opencode
	[[ -n $output && $stderr == *opencode-beta.db* ]]
	run -3 --separate-stderr agc --json purge --dry-run opencode "$S"
	json_ok '.[0].residual | any(.reason == "busy" and (.path | endswith("opencode-beta.db")))'
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "partial" and (.[0].residual | any(.reason == "busy" and (.path | endswith("opencode-beta.db"))))'
	assert_no_rows "$S"
}

@test "R8: an opencode-beta.db of an unknown schema (no session table) is never changed; the good session goes (exit 0)" {
	oc_fixture --seed 2406 --opencode 3
	local S beta=$DATA/opencode-beta.db
	S=$(m_pick '.parent == null')
	sqlite3 "$beta" "CREATE TABLE message(id TEXT, session_id TEXT); INSERT INTO message VALUES ('m1', $(sqlq "$S"));"
	local before
	before=$(sha256sum "$beta")
	run -1 --separate-stderr agc --json ls --agent opencode
	[[ -n $output && $stderr == *opencode-beta.db* ]]
	run -0 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "purged"'
	assert_no_rows "$S"
	[[ $(sha256sum "$beta") == "$before" ]]
}

@test "R2+R8: opencode-x.db a link to a database holding rows of the session: dry run and purge agree (exit 3, residual symlink); the dry run changes nothing" {
	oc_fixture --seed 2407 --opencode 3
	local S
	S=$(m_pick '.parent == null')
	mkdir -p "$OUT"
	sqlite3 "$DB" ".backup '$OUT/x.db'"
	ln -s "$OUT/x.db" "$DATA/opencode-x.db"
	DB=$OUT/x.db oc_dump_save x
	oc_before
	run -3 --separate-stderr agc --json purge --dry-run opencode "$S"
	json_ok '.[0].status == "dry-run" and (.[0].residual | any(.reason == "symlink" and (.path | endswith("opencode-x.db"))))'
	assert_nothing_changed
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "partial" and (.[0].residual | any(.reason == "symlink" and (.path | endswith("opencode-x.db"))))'
	assert_no_rows "$S"
	DB=$OUT/x.db assert_dump_same x
}

@test "R8 (sanitizers): an opencode.db whose session table is empty: ls finds nothing, purge of a missing id is not found (exit 5), no sanitizer report" {
	oc_fixture --seed 2408 --opencode 1
	local t
	for t in $(oc_tables); do qw "DELETE FROM $(sqli "$t")"; done
	[[ $(q 'SELECT count(*) FROM session') == 0 ]]
	run -0 --separate-stderr agc ls --agent opencode
	[[ -z $output && $stderr != *runtime\ error* && $stderr != *Sanitizer* ]]
	run -0 --separate-stderr agc --json ls --agent opencode --children
	[[ -z $output && $stderr != *runtime\ error* ]]
	run -5 --separate-stderr agc purge opencode ses_000000000000nothere00000
	[[ $stderr != *runtime\ error* && $stderr != *Sanitizer* ]]
	run -5 --separate-stderr agc purge auto ses_000000000000nothere00000
	[[ $stderr != *runtime\ error* ]]
	run -5 --separate-stderr agc purge --dry-run opencode ses_000000000000nothere00000
}

@test "R4: a pin of the session in state/session.json is left as residual with its reason (no known lock); the file is not changed" {
	oc_fixture --seed 2409 --opencode 3
	local S O st=$HOME/.local/state/opencode before
	mapfile -t R < <(m_sessions | jq -r 'select(.parent == null) | .id')
	S=${R[0]} O=${R[1]}
	mkdir -p "$st"
	printf '{"pinned":["%s","%s"]}\n' "$O" "$S" >"$st/session.json"
	before=$(sha256sum "$st/session.json")
	run -3 --separate-stderr agc --json purge --dry-run opencode "$S"
	json_ok '.[0].residual | any((.path | endswith("state/opencode/session.json")) and (.reason | contains("pinned")))'
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "partial" and (.[0].residual | any((.path | endswith("session.json")) and (.reason | contains("pinned"))))'
	assert_no_rows "$S"
	[[ $(sha256sum "$st/session.json") == "$before" ]]
	# the other session's pin alone is not the session's
	run -0 --separate-stderr agc --json purge opencode "${R[2]}"
}

@test "R7: entries of the session's legacy message dir that do not name it are reported, exit 3, and a rerun still finds the session" {
	oc_fixture --seed 2410 --opencode 3 --opencode-children 1 --opencode-legacy 3
	local S md n
	S=$(m_pick '.parent == null and .legacy')
	[[ -n $S ]]
	md=$DATA/storage/message/$S
	[[ -d $md ]]
	printf '{"id":"msg_zz","sessionID":"%s"' "$S" >"$md/msg_trunc.json"
	mkfifo "$md/msg_fifo.json"
	printf 'junk' >"$md/.DS_Store"
	run -3 --separate-stderr timeout 60 "$AGENTGC" --json purge opencode "$S"
	json_ok '.[0].status == "partial"'
	for n in msg_trunc.json msg_fifo.json .DS_Store; do
		json_ok --arg p "$md/$n" '.[0].residual | any(.path == $p and (.reason | test("does not name the session")))'
	done
	json_ok --arg p "$md" '.[0].residual | any(.path == $p and (.reason | test("3 entries")))'
	# nothing that does not name the session was removed; the session's own files went
	[[ -f $md/msg_trunc.json && -p $md/msg_fifo.json && -f $md/.DS_Store ]]
	[[ $(find "$md" -mindepth 1 | wc -l) == 3 ]]
	[[ -z $(grep -rl -F -- "\"sessionID\":\"$S\"" "$DATA/storage/part" || true) ]]
	run -3 --separate-stderr timeout 60 "$AGENTGC" --json purge opencode "$S"
	json_ok --arg p "$md/.DS_Store" '.[0].status == "partial" and (.[0].residual | any(.path == $p))'
	[[ $(find "$md" -mindepth 1 | wc -l) == 3 ]]
}

@test "R7: a message file of the session rewritten to claim another session: it stays, reported; the session's own parts under it go (exit 3)" {
	two_legacy
	local sm mid mf
	mf=$(messages_of "$S" | head -n1)
	mid=$(basename "$mf" .json)
	[[ -n $(grep -l -F -- "\"sessionID\":\"$S\"" "$DATA/storage/part/$mid"/*.json) ]]
	printf '{"id":"%s","sessionID":"%s","role":"user"}' "$mid" "$O" >"$mf"
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg p "$mf" '.[0].residual | any(.path == $p and (.reason | test("does not name the session")))'
	[[ -f $mf ]]
	assert_o_intact
	[[ -z $(grep -rl -F -- "\"sessionID\":\"$S\"" "$DATA/storage/part" || true) ]]
	run -3 --separate-stderr agc --json purge opencode "$S"
	json_ok --arg p "$mf" '.[0].residual | any(.path == $p)'
}

@test "R8: an opencode.db that is a FIFO or a directory is reported, never opened" {
	oc_fixture --seed 2411 --opencode 3 --opencode-legacy 3
	local S kind
	S=$(m_pick '.parent == null and .legacy')
	[[ -n $S ]]
	for kind in fifo dir; do
		rm -rf "$DB" "$DB-wal" "$DB-shm"
		if [[ $kind == fifo ]]; then mkfifo "$DB"; else mkdir "$DB"; fi
		run -1 --separate-stderr timeout 60 "$AGENTGC" ls --agent opencode
		[[ $stderr == *opencode.db*not\ a\ regular\ file* ]]
		run -1 --separate-stderr timeout 60 "$AGENTGC" purge opencode ses_000000000000nothere00000
		[[ $stderr == *opencode.db*not\ a\ regular\ file* ]]
		run -1 --separate-stderr timeout 60 "$AGENTGC" purge opencode "$S"
		[[ $stderr == *opencode.db*not\ a\ regular\ file* ]]
		run -1 --separate-stderr timeout 60 "$AGENTGC" purge auto ses_000000000000nothere00000
		[[ $stderr == *opencode.db*not\ a\ regular\ file* ]]
		[[ -f $DATA/storage/session/$(m_get "$S" '.project_id // empty' || true)/$S.json ]] ||
			[[ -n $(find "$DATA/storage/session" -name "$S.json") ]]
	done
	[[ -d $DB ]]
}
