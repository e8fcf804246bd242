#!/usr/bin/env bats
# R4 and R5: history.jsonl is shared by every session. Its lines of the session are removed
# under Claude's lock (a mkdir lock dir, stale after 10 s), and only when no process holds the
# file open; otherwise they stay and are reported as residual "in-use" (exit 3) while the rest
# of the session goes.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	O=$(new_uuid)
	mk_full_session "$S" "$CWD"
	mk_transcript "$O" "$CWD"
	mk_history_line "$O" "$CWD" "prompt of the other session"
	HIST=$C/history.jsonl
	LOCK=$C/history.jsonl.lock
}

# A writer that keeps the lock dir fresh, as Claude's proper-lockfile does while it holds it.
spawn_lock_writer() {
	mkdir "$LOCK"
	spawn bash -c 'while :; do touch "$1"; sleep 1; done' _ "$LOCK"
}

@test "R4: history.jsonl held open by a process: its lines stay (residual in-use), the rest goes, exit 3" {
	local sum
	sum=$(sha256sum <"$HIST")
	spawn_holding "$HIST"
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg h "$HIST" \
		'.[0].status == "partial" and (.[0].residual | any(.kind == "lines" and .path == $h and .reason == "in-use" and .count == 2))'
	# a holder of a shared file is not a holder of the session
	json_ok '.[0].holders == []'
	[ "$(sha256sum <"$HIST")" = "$sum" ]
	assert_gone "$C/projects/$K/$S.jsonl" "$C/file-history/$S" "$TU/$K/$S"
	# once the file is free, a rerun removes the lines
	kill -KILL "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	run -0 agc purge claude "$S"
	! grep -q "$S" "$HIST"
	grep -q "$O" "$HIST"
}

@test "R4: a fresh history.jsonl.lock kept alive by a writer: lines stay (residual in-use), exit 3" {
	local sum
	sum=$(sha256sum <"$HIST")
	spawn_lock_writer
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg h "$HIST" '.[0].residual | any(.kind == "lines" and .path == $h and .reason == "in-use")'
	[ "$(sha256sum <"$HIST")" = "$sum" ]
	# the writer's lock is not ours to remove
	[ -d "$LOCK" ]
	assert_gone "$C/projects/$K/$S.jsonl"
}

@test "R4: a stale history.jsonl.lock (30 s old) is broken: lines go, no lock dir left" {
	mkdir "$LOCK"
	touch -d '30 seconds ago' "$LOCK"
	grep -v "$S" "$HIST" >"$BATS_TEST_TMPDIR/expected"
	run -0 agc purge claude "$S"
	cmp "$BATS_TEST_TMPDIR/expected" "$HIST"
	assert_gone "$LOCK"
}

@test "R4: a lock that is a file, not a dir, is not Claude's lock convention and is left alone" {
	echo x >"$LOCK"
	local sum
	sum=$(sha256sum <"$HIST")
	run -3 agc purge claude "$S"
	[ "$(sha256sum <"$HIST")" = "$sum" ]
	[ -f "$LOCK" ]
}

@test "R4: history.jsonl is replaced atomically (new inode, mode kept), no lock dir or temp file left" {
	local ino
	chmod 640 "$HIST"
	ino=$(stat -c %i "$HIST")
	run -0 agc purge claude "$S"
	[ "$(stat -c %i "$HIST")" != "$ino" ]
	[ "$(stat -c %a "$HIST")" = 640 ]
	[ "$(ls -A "$C" | grep -cE '^\.?history')" -eq 1 ]
	assert_gone "$LOCK"
	! grep -q "$S" "$HIST"
	grep -q "$O" "$HIST"
}

@test "R4: a session known only by its history lines is found; its lines go (exit 0)" {
	local x
	x=$(new_uuid)
	mk_history_line "$x" "$CWD" "a prompt of a session whose files are gone"
	grep -v "$x" "$HIST" >"$BATS_TEST_TMPDIR/expected"
	run -0 --separate-stderr agc --json purge claude "$x"
	json_ok --arg h "$HIST" '.[0].status == "purged" and (.[0].removed | any(.kind == "lines" and .path == $h and .count == 1))'
	cmp "$BATS_TEST_TMPDIR/expected" "$HIST"
}

@test "R4+R8: malformed history lines and lines that only mention the id are kept (exit 3: the malformed ones name the session)" {
	{
		printf '{"display":"talks about %s","pastedContents":{},"timestamp":1,"project":"%s","sessionId":"%s"}\n' "$S" "$CWD" "$O"
		printf '{"display":"broken line with %s", "sessionId":"%s"\n' "$S" "$S"
		printf 'not json at all %s\n' "$S"
	} >>"$HIST"
	grep -v '"sessionId":"'"$S"'"}$' "$HIST" >"$BATS_TEST_TMPDIR/expected"
	# never removed, and still there: residual (R7)
	run -3 agc purge claude "$S"
	cmp "$BATS_TEST_TMPDIR/expected" "$HIST"
}

@test "R2+R4: a history.jsonl that is a symlink is not rewritten through the link: exit 3, residual names it" {
	mv "$HIST" "$OUT/history.jsonl"
	ln -s "$OUT/history.jsonl" "$HIST"
	snap before
	run -3 --separate-stderr agc --json purge claude "$S"
	assert_outside_unchanged before
	[ -L "$HIST" ]
	# the residual names the file by its absolute path, as every other path in the report
	json_ok --arg h "$HIST" '.[0].residual | any(.path == $h)'
}

@test "R2+R7: lines left in a linked history.jsonl keep the session findable: rerun exits 3, not 5" {
	mv "$HIST" "$OUT/history.jsonl"
	ln -s "$OUT/history.jsonl" "$HIST"
	run -3 agc purge claude "$S"
	grep -q "$S" "$OUT/history.jsonl"
	# its lines are still there (behind the link): the session is not "not found"
	run -3 agc purge claude "$S"
}

@test "a dry run of many ids asks each the rewrite's questions without reading the file again: a hard-linked or held history.jsonl keeps every one's lines, said for each" {
	local O2
	O2=$(new_uuid)
	mk_full_session "$O2" "$CWD"
	ln "$HIST" "$OUT/history-link.jsonl"
	snap before
	run -3 --separate-stderr agc --json purge --dry-run claude "$S" "$O2"
	json_ok --arg h "$HIST" 'map(select(.status == "dry-run")) | length == 2 and
		all(.[]; .residual | any(.kind == "lines" and .path == $h and .reason == "error: hard-linked" and .count == 2))'
	assert_tree_unchanged before
	rm "$OUT/history-link.jsonl"
	spawn_holding "$HIST"
	run -3 --separate-stderr agc --json purge --dry-run claude "$S" "$O2"
	json_ok --arg h "$HIST" 'map(select(.status == "dry-run")) | length == 2 and
		all(.[]; .residual | any(.kind == "lines" and .path == $h and .reason == "in-use"))'
	# and without either, each one's lines are to go, counted as discovery counted them
	kill "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null || true
	run -0 --separate-stderr agc --json purge --dry-run claude "$S" "$O2"
	json_ok --arg h "$HIST" 'map(select(.status == "dry-run")) | length == 2 and
		all(.[]; (.residual | length) == 0 and (.removed | any(.kind == "lines" and .path == $h and .count == 2)))'
}
