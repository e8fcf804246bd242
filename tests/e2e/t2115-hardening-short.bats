#!/usr/bin/env bats
# R5, R6: a shortage of the process's own (open files, memory) is never taken for a fact of the
# home. A discovery that met one saw an arbitrary part of the session (the dir holding the
# transcript a live process has open, say): it fails, nothing of the session changes, and the
# message says what to do. A run of many ids keeps each plan's roots open until its turn: it
# keeps within the limit on open files (ids past the room are purged one at a time), so a
# low limit costs time, never a live session.

load lib
load pr

# Each artifact the manifest lists for id $1, one a line.
arts() {
	jq -r --arg id "$1" 'select(.id == $id) | .artifacts[]' "$MAN"
}

@test "R6: a discovery that runs out of open files (EMFILE on projects/) changes nothing and says why" {
	mk_home 3 0 0 0
	local id f
	id=$(jq -r 'select(.agent == "claude") | .id' "$MAN" | head -n1)
	f=$(arts "$id" | grep '\.jsonl$' | head -n1)
	spawn_holding "$f"
	snap before
	AGC_FAULT_OPENAT=projects AGC_FAULT_ERRNO=EMFILE run -1 --separate-stderr agc_faulty purge claude "$id"
	[[ $stderr == *"ran out of open files or memory"* && $stderr == *"ulimit -n"* ]]
	assert_tree_unchanged before
	# the same for every id of a run of many: each refused, nothing changed
	AGC_FAULT_OPENAT=projects AGC_FAULT_ERRNO=EMFILE run -1 --separate-stderr agc_faulty --json purge claude \
		$(jq -r 'select(.agent == "claude") | .id' "$MAN")
	assert_tree_unchanged before
	json_ok 'length == 3 and all(.[]; .status == "error")'
	# prune: its listing cannot read projects/ either, says so, and finds nothing to remove
	AGC_FAULT_OPENAT=projects AGC_FAULT_ERRNO=EMFILE run -0 --separate-stderr agc_faulty prune \
		--agent claude --older-than 0s --settle 0s --yes
	[[ $stderr == *"cannot read"*"projects"*"Too many open files"* ]]
	assert_tree_unchanged before
	# and with the descriptors back, the live one is skipped and the rest go
	run -0 --separate-stderr agc --json prune --agent claude --older-than 0s --settle 0s --yes
	json_ok --arg id "$id" 'any(.[]; .id == $id and .status == "skipped" and .reason == "live")'
	json_ok '.[-1].summary.purged == 2'
	for a in $(arts "$id"); do
		[[ -e $a ]]
	done
}

@test "R5: prune of 1,200 sessions with 1,024 open files at most: every held one is skipped whole, the rest go" {
	mk_home 1200 0 0 0
	# the order the prune takes them in; through /proc whatever the suite's backend (through
	# ps a dry run asks ps and lsof again for each id: minutes, for an order)
	run -0 --separate-stderr env AGENTGC_PROC_BACKEND=proc "$AGENTGC" --json prune --agent claude \
		--older-than 0s --settle 0s --dry-run
	local order pos id f held=()
	order=$(jq -r 'select(.status == "dry-run") | .id' <<<"$output")
	for pos in 100 300 509 700 1100; do
		id=$(sed -n "${pos}p" <<<"$order")
		f=$(arts "$id" | grep '\.jsonl$' | head -n1)
		spawn_holding "$f"
		held+=("$id")
	done
	# the hard limit too, so that agentgc cannot raise its own
	run -0 --separate-stderr bash -c 'ulimit -n 1024 && exec "$@"' _ "$AGENTGC" --json prune --agent claude \
		--older-than 0s --settle 0s --yes
	json_ok '.[-1].summary.purged == 1195 and .[-1].summary.skipped.live == 5 and .[-1].summary.errors == 0'
	for id in "${held[@]}"; do
		json_ok --arg id "$id" 'any(.[]; .id == $id and .status == "skipped" and .reason == "live")'
		for f in $(arts "$id"); do
			[[ -e $f ]] || { echo "$f of held $id is gone" >&2; return 1; }
		done
	done
}

@test "R5: purge of 300 ids in one call with 128 open files at most: ids past the room go one at a time" {
	mk_home 300 0 0 0
	local ids id f
	mapfile -t ids < <(jq -r 'select(.agent == "claude") | .id' "$MAN")
	id=${ids[250]}
	f=$(arts "$id" | grep '\.jsonl$' | head -n1)
	spawn_holding "$f"
	run -4 --separate-stderr bash -c 'ulimit -n 128 && exec "$@"' _ "$AGENTGC" --json purge claude "${ids[@]}"
	json_ok '[.[] | select(.status == "purged")] | length == 299'
	json_ok --arg id "$id" 'any(.[]; .id == $id and .status == "in-use")'
	for f in $(arts "$id"); do
		[[ -e $f ]]
	done
	[[ $(agc ls --agent claude --json | jq -r .id) == "$id" ]]
}

@test "R5: a shortage at any one open of projects/ never leaves a live Claude session (cwd rule) free to go" {
	CWD=$(mk_project proj)
	S=$(new_uuid)
	mk_full_session "$S" "$CWD"
	mk_transcript "$S" "$CWD" "recent work" $((NOW - 60))
	spawn_in_dir "$CWD" claude
	snap before
	run -4 --separate-stderr agc --json purge claude "$S"
	local n
	for n in $(seq 1 12); do
		AGC_FAULT_OPENAT=projects AGC_FAULT_OPENAT_NTH=$n AGC_FAULT_ERRNO=EMFILE run --separate-stderr \
			agc_faulty --json purge claude "$S"
		# in use, or an error; never purged
		[[ $status -eq 4 || $status -eq 1 ]] || { echo "open $n of projects/ failed: exit $status: $output" >&2; return 1; }
		assert_tree_unchanged before
	done
}

@test "R6: a Codex purge short of open files: before its first change nothing changes and it says to raise ulimit -n; after it, a rerun finishes" {
	load cx
	cx_setup
	cx_fixture --seed 2115 --codex 3
	local id n failed=0
	id=$(m_pick '.parent == null')
	# SQLite makes a WAL database's -wal and -shm when it opens it: those aside, nothing changes
	tree_state | grep -v -e '-wal	' -e '-shm	' >"$BATS_TEST_TMPDIR/before"
	for n in 16 20 24 28 32 36 40 44 48 56 64; do
		run --separate-stderr bash -c 'ulimit -n "$1" && shift && exec "$@"' _ "$n" "$AGENTGC" purge codex "$id"
		[[ $status == 0 ]] && break
		if [[ $status == 3 ]]; then
			# it went part of the way (its rows, say) and kept its record for the rerun
			[[ $stderr == *"run the same purge again"* ]]
			run -0 agc purge codex "$id"
			break
		fi
		[[ $status == 1 ]]
		[[ $stderr == *"ulimit -n"* ]]
		diff -u "$BATS_TEST_TMPDIR/before" <(tree_state | grep -v -e '-wal	' -e '-shm	')
		failed=$((failed + 1))
	done
	[[ $status == 0 ]]
	((failed >= 2))
	[[ -z $(agc ls --agent codex --json | jq -r --arg id "$id" 'select(.id == $id) | .id') ]]
	run -5 agc purge codex "$id"
}
