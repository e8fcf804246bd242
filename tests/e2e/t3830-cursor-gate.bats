#!/usr/bin/env bats
# Cursor's live signals (formats/cursor.md §5), R5: a process holding or mapping the chat's
# store.db, -wal or -shm, or one whose command line names the chat (--resume ID,
# --resume=ID), holds it: in-use and purge say 4 and nothing changes; ls says it is live. The
# tracking database is every chat's: a process holding it open holds no chat (its contention
# is the busy rule's).

load lib
load cu

setup() { cu_setup; }

young_chat() {
	ID=$(m_pick '.kind == "chat" and .young == true and .store == "ok" and (.dirs | length) == 1')
	D=$(m_get "$ID" '.dirs[0]')
	[[ -s $D/store.db-wal && -f $D/store.db-shm ]]
}

refused_unchanged() {
	snap before
	run -4 --separate-stderr agc --json purge cursor "$ID"
	json_ok --arg id "$ID" '.[0].status == "in-use" and .[0].id == $id'
	json_ok "$1"
	assert_tree_unchanged before
	run -4 agc in-use cursor "$ID"
	run -0 agc ls --json --agent cursor
	json_ok --arg id "$ID" '.[] | select(.id == $id) | .live == true'
}

@test "cursor gate: store.db, its -wal or its -shm held open: 4, nothing changed" {
	cu_fixture --seed 3831 --projects 2 --cursor 6
	young_chat
	local f
	for f in store.db store.db-wal store.db-shm; do
		spawn_holding "$D/$f"
		refused_unchanged '.[0].holders | any(.why == "open-file")'
		kill "$LAST_PID"
		wait "$LAST_PID" 2>/dev/null || true
	done
	run -0 agc in-use cursor "$ID"
}

@test "cursor gate: store.db-shm mapped (as SQLite maps it), the fd closed: 4" {
	need_python
	cu_fixture --seed 3832 --projects 2 --cursor 6
	young_chat
	spawn python3 -c 'import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
os.close(fd)
time.sleep(1000)' "$D/store.db-shm"
	wait_mapped "$LAST_PID" "$D/store.db-shm"
	refused_unchanged '.[0].holders | any(.why == "open-file")'
}

@test "cursor gate: a command line naming the chat (--resume ID and --resume=ID, any case): 4" {
	cu_fixture --seed 3833 --projects 2 --cursor 4
	ID=$(m_pick '.kind == "chat" and .store == "ok"')
	spawn_argv agent --resume "$ID"
	refused_unchanged '.[0].holders | any(.why == "cmdline")'
	kill "$LAST_PID"
	spawn_argv node cursor-agent "--resume=$(upper "$ID")"
	refused_unchanged '.[0].holders | any(.why == "cmdline")'
}

@test "cursor gate: a sub-agent's id on a command line holds its parent" {
	cu_fixture --seed 3834 --projects 2 --cursor 4 --cursor-subagents 2
	ID=$(m_pick '(.children | length) > 0')
	spawn_argv agent --resume "$(m_get "$ID" '.children[0]')"
	refused_unchanged '.[0].holders | any(.why == "cmdline")'
}

@test "cursor gate: the tracking database held open holds no chat: the purge goes" {
	cu_fixture --seed 3835 --projects 2 --cursor 4
	ID=$(m_pick '.kind == "chat" and (.rows | add) > 0')
	spawn_holding "$TDB"
	run -0 agc in-use cursor "$ID"
	run -0 agc purge cursor "$ID"
	assert_gone $(m_get "$ID" '.artifacts[]')
	[[ $(cu_rows_of <<<"$ID") == 0 ]]
}

@test "cursor gate: the tracking database locked by a writer: refused as busy, nothing changed" {
	cu_fixture --seed 3836 --projects 2 --cursor 4
	ID=$(m_pick '.kind == "chat" and (.rows | add) > 0')
	need_python
	spawn python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("UPDATE scored_commits SET scoredAt = scoredAt")
open(sys.argv[2], "w").close()
time.sleep(1000)' "$TDB" "$BATS_TEST_TMPDIR/locked"
	local i
	for i in $(seq 1 100); do [[ -e $BATS_TEST_TMPDIR/locked ]] && break; sleep 0.05; done
	[[ -e $BATS_TEST_TMPDIR/locked ]]
	snap before
	run --separate-stderr agc --json purge cursor "$ID"
	((status == 4 || status == 3))
	json_ok --arg db "$TDB" '.[0].residual | any(.path == $db and .reason == "busy")'
	# the chat's dirs are its record: they stay while its rows could not go (R6)
	assert_exists $(m_get "$ID" '.dirs[]')
}
