#!/usr/bin/env bats
# R6 and R7: a side file that cannot be removed (unlinkat fails, injected with the fault shim)
# leaves the session on record (the transcript goes last), is listed as residual, exits 3;
# a rerun without the fault finishes the purge.

load lib

setup() {
	agc_setup
	[[ -n ${AGC_FAULTSHIM:-} && -f $AGC_FAULTSHIM ]] || {
		echo "AGC_FAULTSHIM must name the fault-injection shim" >&2
		return 1
	}
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	mk_full_session "$S" "$CWD"
}

@test "R6+R7: a file-history entry that cannot be unlinked: transcript stays, residual lists the dir, exit 3; rerun exits 0" {
	snap before
	AGC_FAULT_UNLINKAT='0123456789abcdef@v1' run -3 --separate-stderr agc_faulty --json purge claude "$S"
	json_ok --arg d "$C/file-history/$S" '.[0].status == "partial" and (.[0].residual | any(.path == $d and (.reason | type) == "string"))'
	# the record discovery keys on stays, so the session can still be found and finished
	assert_exists "$C/projects/$K/$S.jsonl" "$C/file-history/$S/0123456789abcdef@v1"
	json_ok --arg t "$C/projects/$K/$S.jsonl" '.[0].residual | any(.path == $t)'
	run -0 agc show claude "$S"
	# the rerun, without the fault, removes the rest
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "purged" and .[0].residual == []'
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$S"
	SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "${gone[@]}"
	! grep -q "$S" "$C/history.jsonl"
}

@test "R7: EPERM on a temp task output: residual permission (or error), exit 3, rerun exits 0" {
	AGC_FAULT_ERRNO=EPERM AGC_FAULT_UNLINKAT=b1.output run -3 --separate-stderr agc_faulty --json purge claude "$S"
	json_ok --arg d "$TU/$K/$S" '.[0].residual | any(.path == $d)'
	assert_exists "$C/projects/$K/$S.jsonl"
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl" "$TU/$K/$S"
}

@test "R6: the transcript itself cannot be removed: exit 3, residual names it, rerun exits 0" {
	AGC_FAULT_UNLINKAT="$S.jsonl" run -3 --separate-stderr agc_faulty --json purge claude "$S"
	json_ok --arg t "$C/projects/$K/$S.jsonl" '.[0].status == "partial" and (.[0].residual | any(.path == $t))'
	assert_gone "$C/file-history/$S"
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S.jsonl"
}
