#!/usr/bin/env bats
# SPEC "Exit codes", R5-R7: a purge of many ids in one call (one process scan, each id
# re-checked before it goes) gives every id the report that purging the ids one call at a
# time, in the same order, gives: compared on twin homes (the same home restored between).

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	A=$(new_uuid) B=$(new_uuid) P=$(new_uuid) Q=$(new_uuid) L=$(new_uuid) M=$(new_uuid)
	mk_full_session "$A" "$CWD"
	mk_full_session "$B" "$CWD"
	mk_transcript "$P" "$CWD"
	PS=$(mk_subagent "$P" "$CWD")
	mk_transcript "$Q" "$CWD"
	QS=$(mk_subagent "$Q" "$CWD")
	# a paste file both A and B's history lines name: one at a time, it goes with the second
	h=$(mk_paste "shared text")
	mk_history_line "$A" "$CWD" "a" "$h"
	mk_history_line "$B" "$CWD" "b" "$h"
	mk_transcript "$L" "$CWD"
	spawn sleep 1000
	mk_registry "$LAST_PID" "$L"
	SNAP=$BATS_TEST_TMPDIR/snap
	mkdir -p "$SNAP"
	cp -a "$HOME" "$TMPDIR" "$SNAP"/
}

restore() {
	rm -rf "$HOME" "$TMPDIR"
	cp -a "$SNAP/home" "$HOME"
	cp -a "$SNAP/tmp" "$TMPDIR"
}

# Per id: status, the removed paths and the residual (path, reason), sorted, one line each.
outcome() {
	jq -c '{id, status, removed: ([.removed[] | [.kind, .path, .count]] | sort),
		residual: ([.residual[] | [.kind, .path, .reason]] | sort), holders: [.holders[].why]}'
}

@test "R5-R7: one call for many ids gives each id the report of one call per id, in order" {
	local ids=("$A" "$B" "$A" "$P" "$PS" "$QS" "$Q" "$M" "$L" "$B")
	run -4 --separate-stderr agc --json purge claude "${ids[@]}"
	echo "$output" | outcome >"$BATS_TEST_TMPDIR/batch"
	local tree_batch
	tree_batch=$(cd "$HOME" && find . | sort)
	restore
	: >"$BATS_TEST_TMPDIR/single"
	for id in "${ids[@]}"; do
		run --separate-stderr agc --json purge claude "$id"
		echo "$output" | outcome >>"$BATS_TEST_TMPDIR/single"
	done
	diff "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/batch"
	[[ $(cd "$HOME" && find . | sort) == "$tree_batch" ]]
	# and what that is: the duplicate and the sub-agent of a parent gone before are not
	# found, the sub-agent before its parent is refused, the live one in use
	run jq -r .status "$BATS_TEST_TMPDIR/batch"
	[[ $(echo $output) == "purged purged not-found purged not-found refused purged not-found in-use not-found" ]]
	assert_exists "$C/projects/$(pkey "$CWD")/$L.jsonl"
}

@test "R5: a process started after the scan that opens a later id's transcript is caught by the re-check" {
	local k f
	k=$(pkey "$CWD")
	f=$C/projects/$k/$B.jsonl
	# the hook runs when A's transcript goes: a new process (not in the scan) opens B's
	AGC_HOOK_UNLINKAT="$A.jsonl" AGC_HOOK_CMD="exec 3<'$f'; sleep 1000 <&3 >/dev/null 2>&1 3<&- & echo \$! >'$BATS_TEST_TMPDIR/hooked'" \
		run -4 --separate-stderr agc_faulty --json purge claude "$A" "$B" "$Q"
	cat "$BATS_TEST_TMPDIR/hooked" >>"$PIDS_FILE"
	[[ -s $BATS_TEST_TMPDIR/hooked ]]
	json_ok '.[0].status == "purged" and .[1].status == "in-use" and
		(.[1].holders | map(.why) | index("open-file")) != null and .[2].status == "purged"'
	assert_exists "$f"
}

@test "R5: a holder started after the scan of an id that shares nothing with the ids before it is caught by its re-check" {
	local k f
	k=$(pkey "$CWD")
	f=$C/projects/$k/$Q.jsonl
	# A and Q share no file, so Q goes in A's stretch, on the scan made before A went; the
	# still clock keeps the run from scanning again by time: only Q's re-check can see it
	AGC_MONO_STILL=1 AGC_HOOK_UNLINKAT="$A.jsonl" AGC_HOOK_CMD="exec 3<'$f'; sleep 1000 <&3 >/dev/null 2>&1 3<&- & echo \$! >'$BATS_TEST_TMPDIR/hooked'" \
		run -4 --separate-stderr agc_faulty --json purge claude "$A" "$Q" "$P"
	cat "$BATS_TEST_TMPDIR/hooked" >>"$PIDS_FILE"
	[[ -s $BATS_TEST_TMPDIR/hooked ]]
	json_ok --argjson pid "$(cat "$BATS_TEST_TMPDIR/hooked")" \
		'.[0].status == "purged" and .[1].status == "in-use" and
		any(.[1].holders[]; .pid == $pid and .why == "open-file") and .[2].status == "purged"'
	assert_exists "$f"
	assert_exists "$C/projects/$k/$Q"
}

@test "R5: a process of the scan that has run a command naming a later id since is caught by that id's re-check" {
	local k go idf
	k=$(pkey "$CWD")
	go=$BATS_TEST_TMPDIR/go idf=$BATS_TEST_TMPDIR/idf
	mkfifo "$go"
	echo "$Q" >"$idf"
	# a shell whose argv names nothing of Q's, listed by the scan, that execs a command naming
	# Q once A's transcript goes: the same pid and /proc inode, another program
	spawn sh -c 'read -r id <"$1"; read -r _ <"$2"; exec perl -e "sleep 1000" -- --resume "$id"' sh "$idf" "$go"
	local pid=$LAST_PID
	wait_exec "$pid" 'read -r id'
	AGC_MONO_STILL=1 AGC_HOOK_UNLINKAT="$A.jsonl" AGC_HOOK_CMD="echo go >'$go'; i=0; until grep -q -- '$Q' /proc/$pid/cmdline || [ \$i -ge 500 ]; do sleep 0.01; i=\$((i + 1)); done" \
		run -4 --separate-stderr agc_faulty --json purge claude "$A" "$Q" "$P"
	grep -q -- "$Q" "/proc/$pid/cmdline"
	json_ok --argjson pid "$pid" \
		'.[0].status == "purged" and .[1].status == "in-use" and
		any(.[1].holders[]; .pid == $pid and .why == "cmdline") and .[2].status == "purged"'
	assert_exists "$C/projects/$k/$Q.jsonl"
}

@test "R5: a run in a pid namespace below its /proc's knows its own process there, and a holder started outside it mid-run is caught by the re-check" {
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare -pf true 2>/dev/null || skip "no new pid namespace can be made here (not root)"
	local k f go done
	k=$(pkey "$CWD")
	f=$C/projects/$k/$Q.jsonl
	if [[ ${AGENTGC_PROC_BACKEND:-} == ps ]]; then
		# ps and lsof list the pids of /proc's namespace, and without /proc nothing tells
		# agentgc which of them is its own (the systems of this backend have no pid
		# namespaces): ps or lsof cannot be shown to have listed agentgc itself, so every id is
		# in use, with that reason, and nothing changes
		snap before
		run -4 --separate-stderr unshare -pf "$AGENTGC" --json purge claude "$A" "$Q" "$P"
		json_ok 'length == 3 and all(.[]; .status == "in-use" and
			any(.holders[]; .why == "process-table" and (.command | test("^.(ps|lsof). "))))'
		assert_tree_unchanged before
		return
	fi
	go=$BATS_TEST_TMPDIR/go done=$BATS_TEST_TMPDIR/done
	mkfifo "$go" "$done"
	# outside the run's namespace: when A's transcript goes, a holder of Q's starts (the hook
	# creates no process of the run's own); agentgc's pid in /proc's namespace is not its
	# getpid(), which names another process there
	(
		exec 4<>"$go"
		read -r -t 60 _ <&4 || exit 0
		exec 3<"$f"
		sleep 1000 <&3 >/dev/null 2>&1 3<&- &
		echo $! >"$BATS_TEST_TMPDIR/hooked"
		echo done >"$done"
	) 3<&- &
	AGC_MONO_STILL=1 AGC_HOOK_UNLINKAT="$A.jsonl" AGC_HOOK_GO="$go" AGC_HOOK_DONE="$done" \
		run -4 --separate-stderr unshare -pf env LD_PRELOAD="$(faulty_preload)" "$AGENTGC" --json purge claude "$A" "$Q" "$P"
	cat "$BATS_TEST_TMPDIR/hooked" >>"$PIDS_FILE"
	json_ok --argjson pid "$(cat "$BATS_TEST_TMPDIR/hooked")" \
		'.[0].status == "purged" and .[1].status == "in-use" and
		any(.[1].holders[]; .pid == $pid and .why == "open-file") and .[2].status == "purged"'
	assert_exists "$f"
}
