#!/usr/bin/env bats
# The in-use gate on a process table large enough that every CPU scans it (R5): holders of
# each kind among 400 other processes, each found once, the list in the order of the process
# table whichever thread found them; and the same table with no holder says free.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
}

teardown() { agc_teardown; }

# N sleeping processes that hold nothing of the session.
spawn_idle() {
	local i
	for i in $(seq 1 "$1"); do
		spawn sleep 300
	done
}

@test "R5: among 400 other processes, a holder of each kind is found once, listed in pid order" {
	need_python
	mk_full_session "$S" "$CWD"
	local f=$C/projects/$K/$S.jsonl p_argv p_env p_fd p_map p_cwd
	spawn_idle 200
	spawn_argv "--resume=$S"
	p_argv=$LAST_PID
	spawn env CLAUDE_CODE_SESSION_ID="$S" sleep 300
	p_env=$LAST_PID
	wait_exec "$p_env" "sleep 300"
	spawn_idle 100
	spawn_holding "$f"
	p_fd=$LAST_PID
	MAPF=$f spawn python3 -c 'import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(os.environ["MAPF"], os.O_RDONLY)
addr = libc.mmap(None, os.fstat(fd).st_size, 1, 2, fd, 0)
assert addr not in (None, ctypes.c_void_p(-1).value)
os.close(fd)
time.sleep(300)'
	p_map=$LAST_PID
	wait_mapped "$p_map" "$f"
	spawn_idle 100
	spawn bash -c 'cd "$1" && exec sleep 300' _ "$C/projects/$K/$S"
	p_cwd=$LAST_PID
	wait_cwd "$p_cwd" "$C/projects/$K/$S"
	(($(ls /proc | grep -c '^[0-9]') > 400))

	run -4 --separate-stderr agc --json in-use claude "$S"
	json_ok --argjson a "$p_argv" --argjson e "$p_env" --argjson o "$p_fd" --argjson m "$p_map" \
		--argjson c "$p_cwd" --arg f "$f" '.[0] | .in_use == true and
		(.holders | length) == 5 and
		(.holders | map(.pid)) == ([$a, $e, $o, $m, $c] | sort) and
		(.holders | map(select(.pid == $a and .why == "cmdline")) | length) == 1 and
		(.holders | map(select(.pid == $e and .why == "environ")) | length) == 1 and
		(.holders | map(select(.pid == $o and .why == "open-file" and .what == $f)) | length) == 1 and
		(.holders | map(select(.pid == $m and .why == "open-file" and .what == $f)) | length) == 1 and
		(.holders | map(select(.pid == $c and .why == "cwd")) | length) == 1'
}

@test "R5: 400 processes that hold nothing of the session: free, and the purge goes ahead" {
	mk_full_session "$S" "$CWD"
	spawn_idle 400
	(($(ls /proc | grep -c '^[0-9]') > 400))
	run -0 agc in-use claude "$S"
	[[ $output == *": free"* ]]
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl"
}
