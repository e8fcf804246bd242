#!/usr/bin/env bats
# Holes in the gate (R5), in what is reported as left behind (R7, R8) and in shared-file
# rewrites (R4), one test each: a registry dir that cannot be read, unreadable discovery dirs,
# failures that rediscovery cannot see, the gate looking through a linked temp key dir, a
# foreign pidDomain, a hard-linked or over-long history.jsonl, a reused pid's key and socket,
# and sub-agents reported as children.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	NB=
}

teardown() {
	agc_teardown
	nobody_teardown
}

# The fault shim must be there for the tests that inject a failed unlinkat.
need_shim() {
	[[ -n ${AGC_FAULTSHIM:-} && -f $AGC_FAULTSHIM ]] || {
		echo "AGC_FAULTSHIM must name the fault-injection shim" >&2
		return 1
	}
}

# ---- R5: the registry ------------------------------------------------------------------------

@test "R5: a registry dir that cannot be read (chmod 000) with a live entry inside: in-use and purge refuse (exit 4)" {
	nobody_setup
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/file-history/$S"
	echo v1 >"$C/file-history/$S/0123456789abcdef@v1"
	spawn sleep 1000
	mk_registry "$LAST_PID" "$S"
	nobody_own
	chmod 000 "$C/sessions"
	snap before
	# what was not read may name the session as running: it cannot be shown to be free
	run -4 --separate-stderr agc_nobody --json in-use claude "$S"
	json_ok '.[0].in_use == true and (.[0].holders | length > 0)'
	run -4 --separate-stderr agc_nobody --json purge claude "$S"
	json_ok '.[0].status == "in-use" and .[0].removed == []'
	assert_tree_unchanged before
}

@test "R5: a registry entry whose pidDomain is another machine's and whose pid does not run here: in use (exit 4)" {
	local pid
	mk_transcript "$S" "$CWD"
	pid=$(dead_pid)
	# a container or another machine sharing the config dir: its pid means nothing here
	mk_registry_raw "$pid" "{\"pid\":$pid,\"sessionId\":\"$S\",\"cwd\":\"$CWD\",\"startedAt\":$((NOW * 1000)),\"procStart\":\"4242\",\"pidDomain\":\"linux:0123456789abcdef0123456789abcdef:pid:[4026531111]\",\"version\":\"2.1.332\",\"kind\":\"interactive\",\"status\":\"busy\"}"
	snap before
	run -4 --separate-stderr agc --json in-use claude "$S"
	json_ok --argjson p "$pid" '.[0].in_use == true and (.[0].holders | any(.pid == $p and .why == "registry"))'
	run -4 agc purge claude "$S"
	assert_tree_unchanged before
}

@test "R5: a reused pid (procStart differs): the registry file goes, the new process's .key and socket stay" {
	local ps key mine
	mk_transcript "$S" "$CWD"
	spawn sleep 1000
	ps=$(proc_start "$LAST_PID")
	ps=$(other_start "$ps")
	mk_registry "$LAST_PID" "$S" "$ps"
	# the key the process now running under that pid wrote (procStart "1", not the entry's)
	key=$(mk_registry_key "$LAST_PID")
	# a key carrying the entry's own procStart is the stale session's and goes with it
	mine=$C/sessions/$LAST_PID.$(printf 'k%s' "$S" | sha256sum | cut -c1-64).key
	printf '{"peerToken":"t","procStart":"%s","pidDomain":"x"}\n' "$ps" >"$mine"
	mk_socket "$SOCKS/$LAST_PID.sock"
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "purged"'
	assert_gone "$C/sessions/$LAST_PID.json" "$mine" "$C/projects/$K/$S.jsonl"
	assert_exists "$key" "$SOCKS/$LAST_PID.sock"
	kill -0 "$LAST_PID"
}

# ---- R5: the gate looks through links -----------------------------------------------------------

@test "R5: temp key dir linked to an outside dir, a process writing <S>/tasks/x.output inside: exit 4, nothing removed" {
	local f
	mk_full_session "$S" "$CWD"
	mkdir -p "$OUT/tmpkey"
	mv "$TU/$K/$S" "$OUT/tmpkey/"
	rmdir "$TU/$K"
	ln -s "$OUT/tmpkey" "$TU/$K"
	f=$TU/$K/$S/tasks/x.output
	: >"$f"
	# the session's background task, writing through the link
	spawn bash -c 'exec 3>>"$1"; sleep 1000' _ "$f"
	wait_fd_open "$LAST_PID" "$f"
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and .[0].removed == [] and
		(.[0].holders | any(.pid == $p and .why == "open-file"))'
	assert_tree_unchanged before
	run -4 agc in-use claude "$S"
}

# ---- R7: failures that rediscovery cannot see ---------------------------------------------------

@test "R7: a paste-cache file that cannot be removed: exit 3, residual lists it, the history lines stay; rerun exits 0" {
	need_shim
	local h paste
	mk_full_session "$S" "$CWD"
	h=$(printf '%s' "pasted secret of $S" | sha256sum | cut -c1-16)
	paste=$C/paste-cache/$h.txt
	assert_exists "$paste"
	[ "$(grep -c "$S" "$C/history.jsonl")" -eq 2 ]
	AGC_FAULT_UNLINKAT=$h.txt run -3 --separate-stderr agc_faulty --json purge claude "$S"
	json_ok --arg p "$paste" --arg h "$C/history.jsonl" '.[0].status == "partial" and
		(.[0].residual | any(.path == $p and (.reason | type) == "string")) and
		(.[0].residual | any(.kind == "lines" and .path == $h))'
	assert_exists "$paste"
	# the lines that lead to the paste file stay, so a rerun finds it
	[ "$(grep -c "$S" "$C/history.jsonl")" -eq 2 ]
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "purged" and .[0].residual == []'
	assert_gone "$paste"
	! grep -q "$S" "$C/history.jsonl"
}

@test "R7: a stale entry's cc-socks/<pid>.sock that cannot be removed: exit 3, residual lists it, the registry file stays; rerun exits 0" {
	need_shim
	local pid
	mk_transcript "$S" "$CWD"
	pid=$(dead_pid)
	mk_registry "$pid" "$S" 4242
	mk_socket "$SOCKS/$pid.sock"
	AGC_FAULT_UNLINKAT=$pid.sock run -3 --separate-stderr agc_faulty --json purge claude "$S"
	json_ok --arg s "$SOCKS/$pid.sock" '.[0].status == "partial" and
		(.[0].residual | any(.path == $s and (.reason | type) == "string"))'
	assert_exists "$SOCKS/$pid.sock"
	# the registry file is what leads a rerun to the socket
	assert_exists "$C/sessions/$pid.json"
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "purged" and .[0].residual == []'
	assert_gone "$SOCKS/$pid.sock" "$C/sessions/$pid.json" "$C/projects/$K/$S.jsonl"
}

# ---- R8: dirs that cannot be read ---------------------------------------------------------------

@test "R8: projects/ cannot be read (chmod 000) while the session has file-history: exit 3, residual names projects/" {
	nobody_setup
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/file-history/$S"
	echo v1 >"$C/file-history/$S/0123456789abcdef@v1"
	nobody_own
	chmod 000 "$C/projects"
	run -3 --separate-stderr agc_nobody --json purge claude "$S"
	json_ok --arg d "$C/projects" '.[0].status == "partial" and
		(.[0].residual | any(.path == $d and .reason == "permission"))'
	assert_gone "$C/file-history/$S"
}

@test "R8: an id found nowhere while todos/ cannot be read: exit 3 (not 5), residual permission" {
	nobody_setup
	mkdir -p "$C/todos"
	echo '[]' >"$C/todos/$(new_uuid)-agent-$(new_uuid).json"
	nobody_own
	chmod 000 "$C/todos"
	snap before
	# what was not read may hold the session: it cannot be shown not to be there
	run -3 --separate-stderr agc_nobody --json purge claude "$S"
	json_ok --arg d "$C/todos" '.[0].status == "partial" and .[0].removed == [] and
		(.[0].residual | any(.path == $d and .reason == "permission"))'
	assert_tree_unchanged before
}

# ---- R4 and R8: history.jsonl ------------------------------------------------------------------

@test "R4: history.jsonl with a second hard link is not rewritten: exit 3, residual error: hard-linked, both names keep the lines" {
	mk_full_session "$S" "$CWD"
	ln "$C/history.jsonl" "$OUT/history-link.jsonl"
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg h "$C/history.jsonl" '.[0].status == "partial" and
		(.[0].residual | any(.kind == "lines" and .path == $h and (.reason | startswith("error: hard-linked"))))'
	[ "$(grep -c "$S" "$C/history.jsonl")" -eq 2 ]
	[ "$(grep -c "$S" "$OUT/history-link.jsonl")" -eq 2 ]
	[ "$(stat -c %i "$C/history.jsonl")" = "$(stat -c %i "$OUT/history-link.jsonl")" ]
}

@test "R8: a history.jsonl line over 16 MiB naming the session: exit 3, residual says it is too long to check, the line stays" {
	local sum
	mk_transcript "$S" "$CWD"
	mk_history_line "$S" "$CWD" "a short prompt"
	perl -e 'printf qq({"display":"%s","pastedContents":{},"timestamp":1,"project":"%s","sessionId":"%s"}\n), "x" x (16 * 1024 * 1024 + 10), $ARGV[0], $ARGV[1]' \
		"$CWD" "$S" >>"$C/history.jsonl"
	sum=$(tail -n1 "$C/history.jsonl" | sha256sum)
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg h "$C/history.jsonl" '.[0].status == "partial" and
		(.[0].residual | any(.path == $h and (.reason | test("too long"))))'
	# never parsed, so never removed: the over-long line is still there as it was
	[ "$(grep -c "$S" "$C/history.jsonl")" -eq 1 ]
	[ "$(tail -n1 "$C/history.jsonl" | sha256sum)" = "$sum" ]
}

# ---- options and children -------------------------------------------------------------------------

@test "purge --scrub is accepted for claude (exit 0: no database to rebuild); children lists the sub-agents, nested ones too" {
	local o a b
	mk_full_session "$S" "$CWD"
	# mk_full_session's sub-agent (the one with a meta file) and its nested one
	a=$(basename "$(ls "$C/projects/$K/$S/subagents/"agent-a*.meta.json)" .meta.json)
	a=${a#agent-}
	b=a00000000000000ff
	[ -f "$C/projects/$K/$S/subagents/$a/agent-$b.jsonl" ]
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok --arg a "$a" --arg b "$b" '.[0].status == "purged" and
		(.[0].children | sort == ([$a, $b] | sort))'
	assert_gone "$C/projects/$K/$S.jsonl" "$C/projects/$K/$S"
	o=$(new_uuid)
	mk_transcript "$o" "$CWD"
	run -0 --separate-stderr agc --json purge claude "$o" --scrub
	json_ok '.[0].status == "purged" and .[0].children == []'
	assert_gone "$C/projects/$K/$o.jsonl"
}
