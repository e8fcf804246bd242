#!/usr/bin/env bats
# R6: a purge stopped at any step leaves the session findable, and a rerun finishes it; the
# record goes last, and files found only through a row go before that row's transaction
# commits. For every step of an OpenCode purge and of a Claude purge (each unlinkat, rename
# and database COMMIT, counted by the fault shim), the step is made to fail; whatever the
# faulty run did, nothing of any other session changed, and a rerun without the fault exits
# 0 with nothing of the session left.

load lib
load oc

setup() {
	oc_setup
	[[ -n ${AGC_FAULTSHIM:-} && -f $AGC_FAULTSHIM ]] || {
		echo "AGC_FAULTSHIM must name the fault-injection shim" >&2
		return 1
	}
	F=$BATS_TEST_TMPDIR/fault
	mkdir -p "$F"
	: >"$F/all"
}

# Keep the home (and temp root) as they are now, to start every round from them.
save_home() {
	rm -rf "$F/home" "$F/tmp"
	cp -a "$HOME" "$F/home"
	cp -a "$TMPDIR" "$F/tmp"
}

restore_home() {
	rm -rf "$HOME" "$TMPDIR"
	cp -a "$F/home" "$HOME"
	cp -a "$F/tmp" "$TMPDIR"
}

# Run the purge (agentgc ARGS) with step N failing; sets status and output. Returns 1 when
# the purge made no step N (it ran whole), 0 when step N failed.
faulty_purge() {
	local n=$1
	shift
	rm -f "$F/hit"
	AGC_FAULT_NTH=$n AGC_FAULT_HIT=$F/hit run --separate-stderr agc_faulty --json "$@"
	[[ -s $F/hit ]]
}

# Fail every step of the purge of OpenCode session P in turn (from the home as it is now),
# rerun each; N is set to the number of steps.
oc_every_step() {
	local P=$1 n=1 steps
	mapfile -t FAM < <(m_family "$P")
	mapfile -t ARTS < <(m_family_artifacts "$P")
	printf '%s\n' "${ARTS[@]}" | grep -q '/plans/'
	oc_dump_save others "${FAM[@]}"
	oc_snap before
	save_home
	: >"$F/all"
	while :; do
		restore_home
		if ! faulty_purge "$n" purge opencode "$P"; then
			# past the last step: the purge ran whole
			[[ $status == 0 ]] || { echo "no fault at step $n, yet exit $status: $output" >&2; return 1; }
			break
		fi
		steps=$(cat "$F/hit")
		cat "$F/hit" >>"$F/all"
		# whatever went, it was the family's
		oc_assert_tree_minus before "${ARTS[@]}" "$DB" || { echo "after the fault at $steps" >&2; return 1; }
		assert_dump_same others "${FAM[@]}" || { echo "after the fault at $steps" >&2; return 1; }
		# the session is still findable, and a rerun finishes it
		run --separate-stderr agc --json purge opencode "$P"
		[[ $status == 0 ]] || { echo "rerun after the fault at $steps: exit $status: $output" >&2; return 1; }
		json_ok '.[0].status == "purged" and .[0].residual == []' || { echo "rerun after the fault at $steps" >&2; return 1; }
		assert_no_rows "${FAM[@]}"
		assert_gone "${ARTS[@]}" || { echo "rerun after the fault at $steps" >&2; return 1; }
		oc_assert_tree_minus before "${ARTS[@]}" "$DB"
		assert_dump_same others "${FAM[@]}"
		n=$((n + 1))
		((n < 400))
	done
	N=$((n - 1))
	echo "# $N steps of the purge of $P failed in turn" >&3
	# steps of every kind: removals and the commit
	grep -q ' commit ' "$F/all"
	grep -q ' unlinkat .*\.md$' "$F/all"
}

@test "R6: every step of an OpenCode purge of a session whose plan file only its row leads to, failed once: nothing of another session changes, and a rerun finishes (exit 0)" {
	oc_fixture --seed 2223 --opencode 6
	local P
	P=$(m_pick '.parent == null and (.legacy | not) and (.children | length) == 0 and (.artifacts | any(test("/plans/")))')
	[[ -n $P ]]
	oc_every_step "$P"
	[[ $N -ge 3 ]]
}

@test "R6: every step of an OpenCode purge (parent, child, legacy files, plan files), failed once: nothing of another session changes, and a rerun finishes (exit 0)" {
	oc_fixture --seed 2221 --opencode 2 --opencode-children 1 --opencode-legacy 2
	local P
	P=$(m_pick '.parent == null and .legacy and (.children | length) > 0')
	[[ -n $P ]]
	oc_every_step "$P"
	[[ $N -gt 5 ]]
}

# The tree is as in snapshot before, but for the session's paths (gone) and history.jsonl,
# on both sides: what of the session is left after a fault does not count.
claude_others_same() {
	diff -u <(SNAP_EXCLUDE=$C/history.jsonl snap_minus before "${gone[@]}") \
		<(tree_state | awk -F'\t' -v ex="$C/history.jsonl" '$1 != ex' | oc_tree_minus "${gone[@]}")
}

@test "R6: every step of a Claude purge (side files, dirs, registry, transcript, history rewrite), failed once: nothing of another session changes, and a rerun finishes (exit 0)" {
	local S O CWD n=1 steps
	CWD=$(mk_project proj)
	S=$(new_uuid)
	O=$(new_uuid)
	mk_full_session "$S" "$CWD"
	mk_full_session "$O" "$CWD"
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$S"
	grep -v -F "$S" "$C/history.jsonl" >"$F/history.others"
	[[ -s $F/history.others ]]
	snap before
	save_home
	while :; do
		restore_home
		if ! faulty_purge "$n" purge claude "$S"; then
			[[ $status == 0 ]] || { echo "no fault at step $n, yet exit $status: $output" >&2; return 1; }
			break
		fi
		steps=$(cat "$F/hit")
		cat "$F/hit" >>"$F/all"
		# agentgc's own lock on history.jsonl, when its release was the step that failed, is
		# left (Claude breaks it once stale, after 10 s); it is no session's data
		if [[ $steps == *" unlinkat history.jsonl.lock" ]]; then
			rmdir "$C/history.jsonl.lock"
		fi
		claude_others_same || { echo "after the fault at $steps" >&2; return 1; }
		diff -u "$F/history.others" <(grep -v -F "$S" "$C/history.jsonl") ||
			{ echo "after the fault at $steps" >&2; return 1; }
		# the lock's release is the very last step: then nothing of the session is left, and
		# the rerun rightly finds nothing (5)
		run --separate-stderr agc --json purge claude "$S"
		if [[ $steps == *" unlinkat history.jsonl.lock" ]]; then
			[[ $status == 5 ]] || { echo "rerun after the fault at $steps: exit $status: $output" >&2; return 1; }
		else
			[[ $status == 0 ]] || { echo "rerun after the fault at $steps: exit $status: $output" >&2; return 1; }
			json_ok '.[0].status == "purged" and .[0].residual == []'
		fi
		assert_gone "${gone[@]}"
		! grep -q -F "$S" "$C/history.jsonl"
		claude_others_same
		diff -u "$F/history.others" "$C/history.jsonl"
		n=$((n + 1))
		((n < 400))
	done
	[[ $n -gt 10 ]]
	echo "# $((n - 1)) steps failed in turn" >&3
	grep -q ' renameat ' "$F/all"
	grep -q " unlinkat $S.jsonl\$" "$F/all"
}
