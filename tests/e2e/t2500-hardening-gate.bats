#!/usr/bin/env bats
# The in-use gate's newer live signals (R5), one process each: a mapping whose fd was closed,
# CLAUDE_CODE_SESSION_ID in a tool's environment, a current directory inside the session, an
# open directory fd inside it, and a Claude process with no registry entry at the session's
# project while its transcript changes. Each process keeps the id out of its argv, so only the
# rule under test can see it.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
}

teardown() { agc_teardown; }

# Fail when PID has FILE open through an fd (the test is about something else).
no_fd_on() {
	local pid=$1 file f
	file=$(readlink -f "$2")
	for f in /proc/"$pid"/fd/*; do
		[[ $(readlink "$f" 2>/dev/null) != "$file" ]] || {
			echo "pid $pid has $file open as $f" >&2
			return 1
		}
	done
}

@test "R5: a transcript mapped by a process that closed its fd holds the session, why open-file" {
	need_python
	mk_full_session "$S" "$CWD"
	local f=$C/projects/$K/$S.jsonl
	# the path goes through the environment: the argv must not name the id
	# libc's mmap itself: Python's mmap module would keep a dup of the fd
	MAPF=$f spawn python3 -c 'import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(os.environ["MAPF"], os.O_RDONLY)
addr = libc.mmap(None, os.fstat(fd).st_size, 1, 2, fd, 0)  # PROT_READ, MAP_PRIVATE
assert addr not in (None, ctypes.c_void_p(-1).value)
os.close(fd)
time.sleep(300)'
	wait_mapped "$LAST_PID" "$f"
	no_fd_on "$LAST_PID" "$f"
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" --arg f "$f" '.[0].status == "in-use" and .[0].removed == [] and
		(.[0].holders | any(.pid == $p and .why == "open-file" and .what == $f))'
	assert_tree_unchanged before
	assert_exists "$f"
	run -4 agc in-use claude "$S"
}

@test "R5: CLAUDE_CODE_SESSION_ID of the session in a process's environment holds it, why environ" {
	mk_full_session "$S" "$CWD"
	# a detached tool that outlived Claude: only its environment names the session
	spawn env CLAUDE_CODE_SESSION_ID="$(upper "$S")" sleep 300
	wait_exec "$LAST_PID" "sleep 300"
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and
		(.[0].holders | any(.pid == $p and .why == "environ"))'
	assert_tree_unchanged before
	run -4 agc in-use claude "$S"
}

@test "R5: CLAUDE_CODE_SESSION_ID of another session does not hold this one" {
	mk_full_session "$S" "$CWD"
	spawn env CLAUDE_CODE_SESSION_ID="$(new_uuid)" sleep 300
	wait_exec "$LAST_PID" "sleep 300"
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl"
}

@test "R5: a process whose cwd is inside the session's temp dir holds the session, why cwd" {
	mk_full_session "$S" "$CWD"
	local d=$TU/$K/$S/tasks
	spawn_in_dir "$d" sleep
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" --arg d "$TU/$K/$S" '.[0].status == "in-use" and
		(.[0].holders | any(.pid == $p and .why == "cwd" and .what == $d))'
	# the hint says where to look: /proc, or through ps (no /proc on its systems) lsof
	if [[ ${AGENTGC_PROC_BACKEND:-} == ps ]]; then
		[[ $stderr == *"lsof -a -d cwd -p $LAST_PID"* ]]
	else
		[[ $stderr == *"/proc/$LAST_PID/cwd"* ]]
	fi
	assert_tree_unchanged before
}

@test "R5: a process whose cwd is the session dir in projects holds the session, why cwd" {
	mk_full_session "$S" "$CWD"
	spawn_in_dir "$C/projects/$K/$S" sleep
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].holders | any(.pid == $p and .why == "cwd")'
	assert_tree_unchanged before
}

@test "R5: an open directory fd on a dir inside the session holds it, why open-file" {
	need_python
	mk_full_session "$S" "$CWD"
	local d=$TU/$K/$S/tasks
	# as Claude keeps one on T/claude-<uid>/<K>/<S>/tasks; the cwd is elsewhere
	DIRF=$d spawn python3 -c 'import os, time
fd = os.open(os.environ["DIRF"], os.O_RDONLY | os.O_DIRECTORY)
os.chdir("/")
time.sleep(300)'
	wait_fd_open "$LAST_PID" "$d"
	wait_cwd "$LAST_PID" /
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and
		(.[0].holders | any(.pid == $p and .why == "open-file"))'
	assert_tree_unchanged before
}

@test "R5: a claude process at the project, transcript changed 1 min ago, no registry: held, why cwd" {
	mk_transcript "$S" "$CWD" "recent work" $((NOW - 60))
	spawn_in_dir "$CWD" claude
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" --arg d "$CWD" '.[0].status == "in-use" and
		(.[0].holders | any(.pid == $p and .why == "cwd" and .what == $d))'
	assert_tree_unchanged before
	run -4 agc in-use claude "$S"
}

@test "R5: node running Claude Code's cli.js at the project, transcript changed lately: held" {
	mk_transcript "$S" "$CWD" "recent work" $((NOW - 300))
	spawn bash -c 'cd "$1" && exec -a node perl -e "sleep 300" /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js' _ "$CWD"
	wait_exec "$LAST_PID" "claude-code/cli.js"
	wait_cwd "$LAST_PID" "$CWD"
	run -4 --separate-stderr agc --json purge claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].holders | any(.pid == $p and .why == "cwd")'
	assert_exists "$C/projects/$K/$S.jsonl"
}

@test "R5: a claude process at the project, transcript 20 min old: not held, purged" {
	mk_transcript "$S" "$CWD" "old work" $((NOW - 1200))
	spawn_in_dir "$CWD" claude
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl"
}

@test "R5: a claude process at the project that a live registry entry of another session accounts for: not held" {
	mk_transcript "$S" "$CWD" "recent work" $((NOW - 60))
	spawn_in_dir "$CWD" claude
	mk_registry "$LAST_PID" "$(new_uuid)"
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl"
}

@test "R5: a process of another name at the project does not hold a recent session" {
	mk_transcript "$S" "$CWD" "recent work" $((NOW - 60))
	spawn_in_dir "$CWD" sleep
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl"
}
