#!/usr/bin/env bats
# R3: recursive removal never enters a mount point. A bind mount of another dir of the same
# file system has the same st_dev as its parent, so the device number alone cannot tell it;
# agentgc asks statx (STATX_ATTR_MOUNT_ROOT) or the mount id. Every test runs in a private
# mount namespace, so nothing stays mounted after it.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	command -v unshare >/dev/null || skip "SKIPPED: unshare is not installed, mount namespaces cannot be tested"
	unshare -m --propagation private true 2>/dev/null ||
		skip "SKIPPED: cannot make a private mount namespace here (needs CAP_SYS_ADMIN)"
	# the dir that will be bind-mounted: on the same file system as the home
	mkdir -p "$OUT/keep/deeper"
	echo 'must survive' >"$OUT/keep/precious.txt"
	echo 'must survive too' >"$OUT/keep/deeper/nested.txt"
}

# Run, in a private mount namespace: bind-mount $OUT/keep on MNT, then agentgc ARGS...; the
# output of agentgc goes to $BATS_TEST_TMPDIR/out.json and err.txt, its exit code to rc.
# Exit 100 when the bind mount cannot be made.
in_ns_with_bind() {
	local mnt=$1
	shift
	unshare -m --propagation private bash -c '
		src=$1 mnt=$2 out=$3
		shift 3
		mount --bind "$src" "$mnt" || exit 100
		"$AGENTGC" "$@" >"$out/out.json" 2>"$out/err.txt"
		echo $? >"$out/rc"
		# the files are still there, seen through the mount
		[ -f "$mnt/precious.txt" ] && [ -f "$mnt/deeper/nested.txt" ] && echo seen-through-mount
		exit 0
	' _ "$OUT/keep" "$mnt" "$BATS_TEST_TMPDIR" "$@"
}

@test "R3: a bind mount of an outside dir inside a session dir is left, reason mount, exit 3" {
	mk_full_session "$S" "$CWD"
	local sdir=$C/projects/$K/$S
	mkdir -p "$sdir/subagents/bound"
	snap before
	# same file system: st_dev alone would not tell this mount point
	[ "$(stat -c %d "$OUT/keep")" = "$(stat -c %d "$sdir/subagents")" ]
	run in_ns_with_bind "$sdir/subagents/bound" --json purge claude "$S"
	[[ $status -ne 100 ]] || skip "SKIPPED: cannot bind-mount in a mount namespace here"
	[ "$status" -eq 0 ]
	[[ $output == *seen-through-mount* ]]
	[ "$(cat "$BATS_TEST_TMPDIR/rc")" = 3 ]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok --arg d "$sdir" '.[0].status == "partial" and
		(.[0].residual | any(.path == $d and .reason == "mount"))'
	# what was bind-mounted survives, byte for byte
	assert_outside_unchanged before
	# the rest of the session dir went, as far as it was safe
	assert_exists "$sdir/subagents/bound"
	assert_gone "$sdir/tool-results" "$sdir/custom-title.json" "$C/file-history/$S" "$TU/$K/$S"
}

@test "R3: a bind mount deep inside file-history is left, reason mount, and the dry run says so" {
	mk_full_session "$S" "$CWD"
	local fh=$C/file-history/$S
	mkdir -p "$fh/x/y"
	snap before
	run in_ns_with_bind "$fh/x/y" --json purge --dry-run claude "$S"
	[[ $status -ne 100 ]] || skip "SKIPPED: cannot bind-mount in a mount namespace here"
	[[ $output == *seen-through-mount* ]]
	[ "$(cat "$BATS_TEST_TMPDIR/rc")" = 3 ]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok --arg d "$fh" '.[0].status == "dry-run" and
		(.[0].residual | any(.path == $d and .reason == "mount"))'
	assert_tree_unchanged before

	run in_ns_with_bind "$fh/x/y" --json purge claude "$S"
	[[ $output == *seen-through-mount* ]]
	[ "$(cat "$BATS_TEST_TMPDIR/rc")" = 3 ]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok --arg d "$fh" '.[0].status == "partial" and
		(.[0].residual | any(.path == $d and .reason == "mount"))'
	assert_outside_unchanged before
	assert_gone "$fh/0123456789abcdef@v1" "$fh/0123456789abcdef@v2"
	assert_exists "$fh/x/y"
}

@test "R3: a session dir that is itself a bind mount is not emptied, reason mount, exit 3" {
	mk_full_session "$S" "$CWD"
	local se=$C/session-env/$S
	snap before
	run in_ns_with_bind "$se" --json purge claude "$S"
	[[ $status -ne 100 ]] || skip "SKIPPED: cannot bind-mount in a mount namespace here"
	[[ $output == *seen-through-mount* ]]
	[ "$(cat "$BATS_TEST_TMPDIR/rc")" = 3 ]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok --arg d "$se" '.[0].status == "partial" and
		(.[0].residual | any(.path == $d and .reason == "mount"))'
	assert_outside_unchanged before
	# the dir under the mount (the session's own file) is untouched too: never entered
	assert_exists "$se/SessionStart-hook-0.sh"
	assert_gone "$C/file-history/$S" "$C/projects/$K/$S"
}

@test "R3: show does not count what lies behind a bind mount inside a session dir" {
	mk_full_session "$S" "$CWD"
	local fh=$C/file-history/$S
	mkdir -p "$fh/x"
	# a large file behind the mount: counting it would change the session's size
	head -c 1000000 /dev/zero >"$OUT/keep/big"
	run --separate-stderr agc --json show claude "$S"
	[ "$status" -eq 0 ]
	local plain
	plain=$(jq -s '.[0].bytes' <<<"$output")
	run in_ns_with_bind "$fh/x" --json show claude "$S"
	[[ $status -ne 100 ]] || skip "SKIPPED: cannot bind-mount in a mount namespace here"
	[ "$(cat "$BATS_TEST_TMPDIR/rc")" = 0 ]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok --argjson b "$plain" '.[0].bytes == $b'
}
