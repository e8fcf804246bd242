#!/usr/bin/env bats
# R8: only regular files are read. A device, a FIFO or a socket where agentgc expects a file
# is never opened for reading (it is reported, and removed as an entry where it is the artifact
# itself); every read is bounded, even a transcript head that is one line without an end.
# `timeout` is a correctness bound here (a hang fails the test), not a benchmark.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	T=$C/projects/$K/$S.jsonl
}

# A session whose transcript $T is replaced by a special file: "char" (the node of /dev/zero,
# endless data for a reader that does not check what it opened) or "fifo" (a reader blocks).
special_transcript() {
	mk_full_session "$S" "$CWD"
	rm -f "$T"
	case $1 in
	char) mknod -m 600 "$T" c 1 5 ;;
	fifo) mkfifo -m 600 "$T" ;;
	esac
}

@test "R8: a character device as a transcript: show and purge --dry-run finish, purge removes the node" {
	special_transcript char
	[ -c "$T" ]
	run --separate-stderr timeout 10 "$AGENTGC" --json show claude "$S"
	[ "$status" -eq 0 ]
	json_ok --arg t "$T" '.[0].status == "found" and (.[0].artifacts | any(.path == $t))'
	run --separate-stderr timeout 10 "$AGENTGC" ls
	[ "$status" -eq 0 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge --dry-run claude "$S"
	[ "$status" -ne 124 ]
	json_ok '.[0].status == "dry-run"'
	[ -c "$T" ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge claude "$S"
	[ "$status" -eq 0 ]
	json_ok --arg t "$T" '.[0].status == "purged" and (.[0].removed | any(.path == $t))'
	assert_gone "$T" "$C/projects/$K/$S" "$C/file-history/$S"
}

@test "R8: a FIFO as a transcript: show, ls and purge --dry-run finish, purge removes the FIFO" {
	special_transcript fifo
	[ -p "$T" ]
	run --separate-stderr timeout 10 "$AGENTGC" --json show claude "$S"
	[ "$status" -eq 0 ]
	json_ok --arg t "$T" '.[0].status == "found" and (.[0].artifacts | any(.path == $t))'
	run --separate-stderr timeout 10 "$AGENTGC" --json ls
	[ "$status" -eq 0 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge --dry-run claude "$S"
	[ "$status" -ne 124 ]
	json_ok '.[0].status == "dry-run"'
	[ -p "$T" ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge claude "$S"
	[ "$status" -eq 0 ]
	json_ok --arg t "$T" '.[0].status == "purged" and (.[0].removed | any(.path == $t))'
	assert_gone "$T"
}

@test "R8: a FIFO as history.jsonl is never opened: the purge finishes and reports it" {
	mk_full_session "$S" "$CWD"
	rm -f "$C/history.jsonl"
	mkfifo -m 600 "$C/history.jsonl"
	run --separate-stderr timeout 10 "$AGENTGC" --json purge --dry-run claude "$S"
	[ "$status" -ne 124 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge claude "$S"
	[ "$status" -ne 124 ]
	[ "$status" -eq 3 ]
	json_ok --arg h "$C/history.jsonl" '.[0].residual | any(.path == $h and (.reason | test("not a regular file")))'
	# still a FIFO: reported, never replaced
	[ -p "$C/history.jsonl" ]
	assert_gone "$T"
}

@test "R8: a FIFO as a registry file is never opened: in-use, ls and purge finish" {
	mk_full_session "$S" "$CWD"
	mkfifo -m 600 "$C/sessions/$$.json"
	run --separate-stderr timeout 10 "$AGENTGC" --json in-use claude "$S"
	[ "$status" -ne 124 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json ls
	[ "$status" -ne 124 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge claude "$S"
	[ "$status" -ne 124 ]
	[ -p "$C/sessions/$$.json" ]
}

@test "R8: a character device as a sub-agent transcript and as a registry file: nothing hangs" {
	mk_full_session "$S" "$CWD"
	mknod -m 600 "$C/projects/$K/$S/subagents/agent-a0123456789abcdef.jsonl" c 1 5
	mknod -m 600 "$C/sessions/$$.json" c 1 5
	run --separate-stderr timeout 10 "$AGENTGC" --json ls --children
	[ "$status" -ne 124 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json show claude "$S"
	[ "$status" -ne 124 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge --dry-run claude "$S"
	[ "$status" -ne 124 ]
}

@test "R8: a 20 GB single-line sparse transcript: show and ls read a bounded head" {
	mk_full_session "$S" "$CWD"
	# a valid first line, then one line without an end for the rest of 20 GB
	head -n 1 "$T" >"$T.new"
	mv "$T.new" "$T"
	truncate -s 20G "$T"
	run --separate-stderr timeout 5 "$AGENTGC" --json show claude "$S"
	[ "$status" -eq 0 ]
	json_ok '.[0].bytes > 21000000000'
	run --separate-stderr timeout 5 "$AGENTGC" --json ls
	[ "$status" -eq 0 ]
	json_ok --arg s "$S" 'any(.id == $s)'
	# the same with no newline at all
	: >"$T"
	truncate -s 20G "$T"
	run --separate-stderr timeout 5 "$AGENTGC" --json show claude "$S"
	[ "$status" -eq 0 ]
	run --separate-stderr timeout 5 "$AGENTGC" --json purge claude "$S"
	[ "$status" -eq 0 ]
	assert_gone "$T"
}

@test "R8: a directory tree deeper than the limit says so, not 'Too many levels of symbolic links'" {
	mk_full_session "$S" "$CWD"
	local d=$C/file-history/$S i
	# 600 levels, one more than the 512 removal goes into
	d=$d/$(printf 'd/%.0s' $(seq 1 600))
	mkdir -p "$d"
	run --separate-stderr "$AGENTGC" --json purge claude "$S"
	[ "$status" -eq 3 ]
	json_ok --arg p "$C/file-history/$S" '.[0].residual | any(.path == $p and .reason == "error: directory tree deeper than 512 levels")'
	[[ $output != *"symbolic links"* ]]
	[[ $stderr != *"symbolic links"* ]]
}

@test "R8: a FIFO and a device as OpenCode legacy JSON files: ls, show and purge --dry-run finish" {
	load oc
	oc_setup
	oc_fixture --seed 2110 --opencode 3 --opencode-legacy 2
	local id f m
	id=$(m_pick '.legacy')
	[[ -n $id ]]
	f=$(m_get "$id" '.artifacts[]' | grep '/storage/session/' | head -n1)
	m=$(m_get "$id" '.artifacts[]' | grep '/storage/message/' | head -n1)
	m=$(ls "$m"/*.json | head -n1)
	[[ -f $f && -f $m ]]
	rm -f "$f" "$m"
	mkfifo -m 600 "$f"
	mknod -m 600 "$m" c 1 5
	run --separate-stderr timeout 10 "$AGENTGC" --json ls --agent opencode
	[ "$status" -ne 124 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json show opencode "$id"
	[ "$status" -ne 124 ]
	run --separate-stderr timeout 10 "$AGENTGC" --json purge --dry-run opencode "$id"
	[ "$status" -ne 124 ]
	[ -p "$f" ]
	[ -c "$m" ]
}
