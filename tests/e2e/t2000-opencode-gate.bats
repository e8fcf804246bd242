#!/usr/bin/env bats
# R5 and R6 for OpenCode: every process holding opencode.db, its -wal or -shm holds every
# session of it, except OpenCode's per-user service (argv[0] opencode*, later arguments
# "serve" and "--service"); a command line naming the session or one of its descendants
# holds it whatever else is true; a database whose write lock is held refuses the purge as
# busy with nothing changed.

load lib
load oc

setup() {
	oc_setup
	oc_fixture --seed 2011 --opencode 3 --opencode-children 2 --opencode-legacy 2
	P=$(m_pick '.parent == null and (.children | length) > 0')
	[[ -n $P ]]
	mapfile -t FAM < <(m_family "$P")
	[[ ${#FAM[@]} -ge 3 ]]
	# a child that has children of its own, and one of those (a grandchild)
	K=$(jq -r --argjson f "$(jarr "${FAM[@]}")" \
		'select(.agent == "opencode" and (.id | IN($f[])) and .depth == 1 and (.children | length) > 0) | .id' "$MAN" | head -n1)
	[[ -n $K ]]
	G=$(m_get "$K" '.children[0]')
}

# A refusal because of a holder: exit 4, status in-use, the holder PID named with WHY, nothing
# changed; in-use says the same.
assert_refused_in_use() {
	local pid=$1 why=$2
	oc_before
	run -4 --separate-stderr agc --json purge opencode "$P"
	json_ok --argjson p "$pid" --arg w "$why" \
		'.[0].status == "in-use" and .[0].removed == [] and (.[0].holders | any(.pid == $p and .why == $w))'
	[[ $stderr == *"$pid"* ]]
	assert_nothing_changed
	run -4 --separate-stderr agc --json in-use opencode "$P"
	json_ok --argjson p "$pid" '.[0].in_use == true and (.[0].holders | any(.pid == $p))'
}

@test "R5: a process holding opencode.db open (not the service): exit 4, nothing changed" {
	spawn_holding "$DB"
	assert_refused_in_use "$LAST_PID" open-file
}

@test "R5: a process holding opencode.db-wal or -shm open holds every session: exit 4, nothing changed" {
	local f
	for f in "$DB-wal" "$DB-shm"; do
		# what OpenCode leaves after an error exit: the database's -wal and -shm
		[[ -e $f ]] || spawn_sqlite sqlite3 "SELECT count(*) FROM session;"
		[[ -e $f ]]
		agc_teardown
		: >"$PIDS_FILE"
		spawn_holding "$f"
		assert_refused_in_use "$LAST_PID" open-file
		agc_teardown
		: >"$PIDS_FILE"
	done
}

@test "R5: a holder of the database refuses the purge of any session of it, even one without children" {
	local S
	S=$(m_pick '.parent == null and (.children | length) == 0')
	[[ -n $S ]]
	spawn_holding "$DB"
	oc_before
	run -4 --separate-stderr agc --json purge opencode "$S"
	json_ok '.[0].status == "in-use"'
	assert_nothing_changed
}

@test "R5: once the holder is gone the purge goes through" {
	spawn_holding "$DB"
	run -4 agc purge opencode "$P"
	kill -KILL "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	run -0 --separate-stderr agc --json purge opencode "$P"
	assert_no_rows "${FAM[@]}"
}

@test "R5: the service (argv 'opencode ... serve --service') holding opencode.db is not a holder: in-use 0, purge 0" {
	spawn_service
	local svc=$LAST_PID
	run -0 --separate-stderr agc --json in-use opencode "$P"
	json_ok '.[0].in_use == false and .[0].holders == []'
	run -0 --separate-stderr agc --json purge opencode "$P"
	json_ok '.[0].status == "purged" and .[0].holders == []'
	assert_no_rows "${FAM[@]}"
	kill -0 "$svc"
}

@test "R5: the service run by a runtime (node .../opencode serve --service) is not a holder" {
	local bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin"
	printf 'sleep 1000;\n' >"$bin/opencode"
	# argv: node <script named opencode> serve --service
	spawn bash -c 'exec 3<"$1"; exec -a node perl "$2" serve --service' _ "$DB" "$bin/opencode"
	wait_exec "$LAST_PID" "node $bin/opencode serve --service"
	wait_fd_open "$LAST_PID" "$DB"
	run -0 --separate-stderr agc --json in-use opencode "$P"
	json_ok '.[0].in_use == false'
}

@test "R5: look-alikes of the service hold the database: opencode without --service, --service without serve, another program with opencode as an argument" {
	spawn_named_holder "$DB" opencode serve
	assert_refused_in_use "$LAST_PID" open-file
	agc_teardown
	: >"$PIDS_FILE"
	spawn_named_holder "$DB" opencode --service
	assert_refused_in_use "$LAST_PID" open-file
	agc_teardown
	: >"$PIDS_FILE"
	spawn_named_holder "$DB" perl opencode serve --service
	assert_refused_in_use "$LAST_PID" open-file
}

@test "R5: a process naming the session on its command line: exit 4, nothing changed" {
	spawn_argv opencode --session "$P"
	assert_refused_in_use "$LAST_PID" cmdline
}

@test "R5: a command line naming the session counts whatever holds the database, the service too" {
	spawn_service --session "$P"
	assert_refused_in_use "$LAST_PID" cmdline
}

@test "R5: a command line naming the session in another letter case counts" {
	spawn_argv opencode --session "${P^^}"
	assert_refused_in_use "$LAST_PID" cmdline
}

@test "R5 (Relations): a process naming a child's id refuses the parent's purge: exit 4, nothing changed" {
	spawn_argv opencode --session "$K"
	assert_refused_in_use "$LAST_PID" cmdline
}

@test "R5 (Relations): a process naming a grandchild's id refuses the grandparent's purge" {
	spawn_argv opencode run --session="$G"
	assert_refused_in_use "$LAST_PID" cmdline
}

@test "R5: a process naming another session does not hold this one" {
	local S
	S=$(m_pick '.parent == null and (.children | length) == 0')
	spawn_argv opencode --session "$S"
	run -0 --separate-stderr agc --json purge opencode "$P"
	assert_no_rows "${FAM[@]}"
	[[ $(oc_rows session "$S") == 1 ]]
}

@test "R6: the write lock held (BEGIN IMMEDIATE) by the service, which the gate does not count: exit 4, status refused, reason busy, every row and file still there" {
	# sqlite3 as the service: argv[0] "opencode", and "serve" and "--service" as elements
	# of their own (see spawn_sqlite)
	spawn_sqlite opencode "BEGIN IMMEDIATE;" -separator serve -cmd --service
	wait_write_locked
	oc_before
	run -4 --separate-stderr agc --json purge opencode "$P"
	json_ok '.[0].status == "refused" and .[0].holders == []'
	json_ok '.[0].residual | length > 0 and any(.reason == "busy")'
	json_ok '[.[0].removed[] | select(.kind == "rows")] == []'
	assert_nothing_changed
	assert_rows_as_manifest "$P"
	mapfile -t ARTS < <(m_family_artifacts "$P")
	[[ ${#ARTS[@]} -eq 0 ]] || assert_exists "${ARTS[@]}"
	# and once the lock is released, the purge goes through
	kill -KILL "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	run -0 --separate-stderr agc --json purge opencode "$P"
	assert_no_rows "${FAM[@]}"
}

@test "R6: purge --dry-run while the service holds the write lock exits 4 as the purge would, reason busy, and changes nothing" {
	spawn_sqlite opencode "BEGIN IMMEDIATE;" -separator serve -cmd --service
	wait_write_locked
	oc_before
	run -4 --separate-stderr agc --json purge --dry-run opencode "$P"
	json_ok '.[0].status == "dry-run" and (.[0].residual | any(.reason == "busy"))'
	assert_nothing_changed
	kill -KILL "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	run -0 --separate-stderr agc --json purge --dry-run opencode "$P"
	json_ok '.[0].status == "dry-run" and (.[0].residual | all(.reason != "busy"))'
}

@test "R5+R6: the write lock held by a process that is not the service: exit 4, in use, nothing changed" {
	spawn_sqlite sqlite3 "BEGIN IMMEDIATE;"
	wait_write_locked
	oc_before
	run -4 --separate-stderr agc --json purge opencode "$P"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and (.[0].holders | any(.pid == $p))'
	assert_nothing_changed
}
