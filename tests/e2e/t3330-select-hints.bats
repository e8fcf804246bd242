#!/usr/bin/env bats
# Every refusal and residual says what the user can do next (SPEC "Output"; R5: "a refusal
# prints each holder and, on stderr, how to look for it by hand"): a `hint: ...` line on stderr
# for each kind of reason. An OpenCode database held by a running OpenCode names the process
# (pid and command) and says to quit it, and that the shared service never counts; a symlink
# residual says which link was not followed and why (R2).

load lib
load oc

setup() {
	oc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
}

@test "hint (R5): an OpenCode database held by a running OpenCode names pid and command, says to quit it, and that the service never counts" {
	oc_fixture --seed 3331 --opencode 2
	local P
	P=$(m_pick '.parent == null')
	# an OpenCode TUI (argv[0] opencode, not the service) with the database open
	spawn_named_holder "$DB" opencode run
	run -4 --separate-stderr agc purge opencode "$P"
	[[ $stderr == *"hint: pid $LAST_PID (opencode -e sleep 1000 -- run) has '$DB' open, the database of every opencode session, so it holds them all: quit that program"* ]]
	[[ $stderr == *"then purge again; 'opencode serve --service' (OpenCode's shared service) never counts as a holder"* ]]
	# in-use says the same
	run -4 --separate-stderr agc in-use opencode "$P"
	[[ $stderr == *"hint: pid $LAST_PID (opencode"*"quit that program"*"never counts as a holder"* ]]
}

@test "hint (R5): a process naming a Claude session says how to look at it and to purge again once it has quit" {
	mk_transcript "$S" "$CWD"
	spawn_argv --resume "$S"
	run -4 --separate-stderr agc purge claude "$S"
	[[ $stderr == *"hint: pid $LAST_PID names the session (cmdline): see ps -o pid,args -p $LAST_PID; once it has quit (end that session), purge again"* ]]
}

@test "hint (R2): a residual behind a linked dir names the link, its target, and that a link inside a session is never followed" {
	mk_full_session "$S" "$CWD"
	mv "$C/projects/$K" "$OUT/proj"
	ln -s "$OUT/proj" "$C/projects/$K"
	run -3 --separate-stderr agc purge claude "$S"
	[[ $stderr == *"hint: '$C/projects/$K' is a symbolic link (to '$OUT/proj') inside the session's files: a link there is never followed (R2), and is removed only when it is the artifact itself, so '$C/projects/$K/"*"' behind it was left"* ]]
	[[ $stderr == *"(and 1 more)"* ]]
	assert_exists "$OUT/proj/$S.jsonl"
}

@test "hint (R2): a shared file that is itself a link says its lines were left, and what to do" {
	mk_full_session "$S" "$CWD"
	mv "$C/history.jsonl" "$OUT/history.jsonl"
	ln -s "$OUT/history.jsonl" "$C/history.jsonl"
	run -3 --separate-stderr agc purge claude "$S"
	[[ $stderr == *"hint: '$C/history.jsonl' is a symbolic link (to '$OUT/history.jsonl'): agentgc does not follow a link to rewrite or remove what it points at (R2), so the session's lines in it were left"* ]]
	grep -q "$S" "$OUT/history.jsonl"
}

@test "hint: in-use (a shared file held open): its lines were left; run the same purge again once the agent quit" {
	mk_full_session "$S" "$CWD"
	spawn_holding "$C/history.jsonl"
	run -3 --separate-stderr agc purge claude "$S"
	[[ $stderr == *"hint: '$C/history.jsonl' is held open by a process, or its agent's lock is fresh, so the session's lines in it were left: once the agent has quit, run the same purge again"* ]]
}

@test "hint: busy (the database's write lock held): nothing changed, run the purge again in a moment" {
	oc_fixture --seed 3332 --opencode 2
	local P
	P=$(m_pick '.parent == null')
	spawn_sqlite opencode "BEGIN IMMEDIATE;" -separator serve -cmd --service
	wait_write_locked
	run -4 --separate-stderr agc purge opencode "$P"
	[[ $stderr == *"hint: the database '$DB' is locked by another process writing to it, so nothing was changed: run the purge again in a moment"* ]]
	run -4 --separate-stderr agc purge --dry-run opencode "$P"
	[[ $stderr == *"is locked by another process writing to it"* ]]
}

@test "hint: permission: run as the owner or fix the mode" {
	nobody_setup
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/file-history/$S"
	echo v1 >"$C/file-history/$S/0123456789abcdef@v1"
	nobody_own
	chmod 000 "$C/projects"
	run -3 --separate-stderr agc_nobody purge claude "$S"
	chmod 755 "$C/projects"
	[[ $stderr == *"hint: agentgc may not read or change '$C/projects' (permission): run it as the user who owns those files, or fix their mode, then purge again"* ]]
	nobody_teardown
}

@test "hint (R3): mount: unmount it, then purge again" {
	command -v unshare >/dev/null || skip "SKIPPED: unshare is not installed"
	unshare -m --propagation private true 2>/dev/null || skip "SKIPPED: no private mount namespace here"
	mk_full_session "$S" "$CWD"
	mkdir -p "$OUT/keep" "$C/projects/$K/$S/subagents/bound"
	echo 'must survive' >"$OUT/keep/precious.txt"
	run unshare -m --propagation private bash -c '
		mount --bind "$1" "$2" || exit 100
		"$AGENTGC" purge claude "$3" 2>"$4/err.txt" >/dev/null
		echo $? >"$4/rc"' _ "$OUT/keep" "$C/projects/$K/$S/subagents/bound" "$S" "$BATS_TEST_TMPDIR"
	[[ $status -ne 100 ]] || skip "SKIPPED: cannot bind-mount here"
	[ "$(cat "$BATS_TEST_TMPDIR/rc")" = 3 ]
	grep -qF "hint: '$C/projects/$K/$S' is a mount point or holds one: agentgc never removes across a mount (R3); unmount it (umount), then purge again" "$BATS_TEST_TMPDIR/err.txt"
	assert_exists "$OUT/keep/precious.txt"
}

@test "hint (R4): schema: nothing changed; the agent's own command, or report the schema" {
	oc_fixture --seed 3333 --opencode 3
	local -a roots
	mapfile -t roots < <(m_sessions | jq -r 'select(.parent == null) | .id')
	qw "CREATE TRIGGER wipe_others AFTER DELETE ON session BEGIN
	      DELETE FROM message WHERE session_id <> old.id;
	    END;"
	run -4 --separate-stderr agc purge opencode "${roots[0]}"
	[[ $stderr == *"hint: deleting the session's rows would change more of '$DB' than the session (table message: a trigger or a foreign key agentgc does not know), so nothing was changed: delete the session with the agent's own command, or report this schema"* ]]
}

@test "hint (R7): child still on record: it goes with its parent, run the same purge again" {
	oc_fixture --opencode 4 --opencode-children 2 --opencode-legacy 5 --seed 2001
	local p c
	p=$(m_pick '.legacy == true and .parent == null and (.children | length) > 0')
	c=$(m_get "$p" '.children[0]')
	AGC_FAULT_UNLINKAT="$c.json" run -3 --separate-stderr agc_faulty purge opencode "$p"
	[[ $stderr == *"hint: the child session $c is still on record"*": it goes with its parent, so once what else is listed is dealt with, run the same purge again"* ]]
}

@test "hint (R8): a FIFO where a file is expected: move or remove it by hand" {
	mk_full_session "$S" "$CWD"
	rm -f "$C/history.jsonl"
	mkfifo -m 600 "$C/history.jsonl"
	run -3 --separate-stderr timeout 10 "$AGENTGC" purge claude "$S"
	[[ $stderr == *"hint: '$C/history.jsonl' is not a regular file (a FIFO, a device or a socket), which agentgc never opens to read (R8): move or remove it by hand, then purge again"* ]]
}

@test "hint: error: run the same purge again; the record kept on purpose says why" {
	mk_full_session "$S" "$CWD"
	AGC_FAULT_ERRNO=EIO AGC_FAULT_UNLINKAT=b1.output run -3 --separate-stderr agc_faulty purge claude "$S"
	[[ $stderr == *"hint: '$TU/$K/$S' could not be removed (error: "*"): run the same purge again, which finishes what is left"* ]]
	[[ $stderr == *"hint: '$C/projects/$K/$S.jsonl'"*" was kept on purpose, so that a rerun finds the session again: once what failed is fixed, run the same purge again"* ]]
	run -0 agc purge claude "$S"
}
