#!/usr/bin/env bats
# R2 and R3: nothing is removed through a symlink. A link as the artifact itself goes as the
# link alone; an artifact behind a linked dir is reported as residual "symlink" and survives.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
}

@test "R2: temp key dir that is a symlink to an outside dir: outside survives, residual symlink, exit 3" {
	mk_full_session "$S" "$CWD"
	# move the real temp key dir outside and leave a link in its place
	mkdir -p "$OUT/tmpkey"
	mv "$TU/$K/$S" "$OUT/tmpkey/"
	rmdir "$TU/$K"
	ln -s "$OUT/tmpkey" "$TU/$K"
	echo 'unrelated' >"$OUT/tmpkey/other-file"
	snap before
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg p "$TU/$K/$S" '.[0].status == "partial" and (.[0].residual | any(.path == $p and .reason == "symlink"))'
	# what lies outside survives, byte for byte
	assert_outside_unchanged before
	assert_exists "$TU/$K" "$OUT/tmpkey/$S/tasks/b1.output"
	[ -L "$TU/$K" ]
	# the rest of the session went, as far as it was safe
	assert_gone "$C/file-history/$S" "$C/session-env/$S" "$TU/s/$(scratch_name "$S")"
}

@test "R2: a leaf symlink (session-env/<S> -> outside dir) is removed as a link; its target survives" {
	mk_full_session "$S" "$CWD"
	rm -rf "$C/session-env/$S"
	mkdir -p "$OUT/senv"
	echo 'keep me' >"$OUT/senv/SessionStart-hook-0.sh"
	ln -s "$OUT/senv" "$C/session-env/$S"
	snap before
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "purged"'
	assert_gone "$C/session-env/$S"
	assert_outside_unchanged before
}

@test "R2: leaf links to / and to an outside file are removed as links only" {
	mk_transcript "$S" "$CWD"
	mkdir -p "$C/file-history" "$C/debug" "$C/tasks"
	echo 'outside log' >"$OUT/log.txt"
	ln -s / "$C/file-history/$S"
	ln -s "$OUT/log.txt" "$C/debug/$S.txt"
	ln -s ../../../../.. "$C/tasks/$S"
	snap before
	run -0 agc purge claude "$S"
	assert_gone "$C/file-history/$S" "$C/debug/$S.txt" "$C/tasks/$S"
	[ "$(cat "$OUT/log.txt")" = 'outside log' ]
	assert_exists /bin /etc/passwd
	assert_outside_unchanged before
}

@test "R3: links inside a removed dir are removed as links; their targets survive" {
	mk_full_session "$S" "$CWD"
	mkdir -p "$OUT/target-dir"
	echo 'keep' >"$OUT/target-dir/file"
	echo 'keep' >"$OUT/target-file"
	ln -s "$OUT/target-dir" "$C/jobs/$S/dirlink"
	ln -s "$OUT/target-file" "$C/file-history/$S/filelink"
	ln -s / "$TU/$K/$S/tasks/root"
	ln -s "$OUT/missing" "$C/image-cache/$S/dangling"
	snap before
	run -0 agc purge claude "$S"
	assert_gone "$C/jobs/$S" "$C/file-history/$S" "$TU/$K/$S" "$C/image-cache/$S"
	assert_outside_unchanged before
	assert_exists /bin /etc/passwd
}

@test "R2: a session whose only artifact lies behind a linked project dir: exit 3 (not 5), nothing removed" {
	mkdir -p "$OUT/proj" "$C/projects"
	mk_transcript "$S" "$CWD"
	mv "$C/projects/$K/$S.jsonl" "$OUT/proj/"
	rmdir "$C/projects/$K"
	ln -s "$OUT/proj" "$C/projects/$K"
	snap before
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg p "$C/projects/$K/$S.jsonl" \
		'.[0].status == "partial" and .[0].removed == [] and (.[0].residual | any(.path == $p and .reason == "symlink"))'
	assert_tree_unchanged before
	# found by show and in-use too, not "unknown"
	run -0 agc show claude "$S"
	run -0 agc in-use claude "$S"
	run -3 agc purge claude "$S" --dry-run
	assert_tree_unchanged before
}

@test "R2: a linked config side dir (file-history -> outside) is looked through, never removed through" {
	mk_full_session "$S" "$CWD"
	mv "$C/file-history" "$OUT/fh"
	ln -s "$OUT/fh" "$C/file-history"
	snap before
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg p "$C/file-history/$S" '.[0].residual | any(.path == $p and .reason == "symlink")'
	assert_outside_unchanged before
	[ -L "$C/file-history" ]
}

@test "R2: a root that is itself a symlink is resolved once and used (config dir via a link)" {
	rm -rf "$C"
	mkdir -p "$BATS_TEST_TMPDIR/realclaude"
	ln -s "$BATS_TEST_TMPDIR/realclaude" "$C"
	mk_full_session "$S" "$CWD"
	run -0 agc purge claude "$S"
	assert_gone "$BATS_TEST_TMPDIR/realclaude/projects/$K/$S.jsonl" "$BATS_TEST_TMPDIR/realclaude/file-history/$S"
	# the root itself is never removed
	[ -L "$C" ]
	[ -d "$BATS_TEST_TMPDIR/realclaude/projects/$K" ]
}

@test "R3: recursive removal stays on its file system: a mount inside a session dir survives" {
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare -m --propagation private true 2>/dev/null || skip "cannot make a mount namespace here"
	mk_full_session "$S" "$CWD"
	mkdir -p "$C/file-history/$S/mnt"
	# in a private mount namespace: the mount (and its file) disappear with it
	run unshare -m --propagation private bash -c '
		mount -t tmpfs agc-test "$1/mnt" || exit 100
		echo keep >"$1/mnt/on-another-fs"
		"$AGENTGC" --json purge claude "$2" >"$3/out.json" 2>"$3/err.txt"
		echo "rc=$?"
		[ -f "$1/mnt/on-another-fs" ] && echo survived
	' _ "$C/file-history/$S" "$S" "$BATS_TEST_TMPDIR"
	[[ $status -ne 100 ]] || skip "cannot mount a tmpfs here"
	[[ $output == *rc=3* ]]
	[[ $output == *survived* ]]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok --arg d "$C/file-history/$S" '.[0].status == "partial" and (.[0].residual | any(.path == $d))'
}
