#!/usr/bin/env bats
# SPEC "Roots and the home": the agents' variables (CLAUDE_CONFIG_DIR, CLAUDE_CODE_TMPDIR,
# TMPDIR, ...) are followed only for the caller's own home; --home OTHER uses the defaults
# under OTHER and /tmp.

load lib

root_of() { # root name -> path, from `roots --json` output
	jq -r -s --arg r "$1" 'map(select(.agent == "claude" and .root == $r)) | .[0].path' <<<"$output"
}

@test "roots: --home OTHER ignores CLAUDE_CONFIG_DIR and the caller's TMPDIR" {
	local other=$BATS_TEST_TMPDIR/other
	mkdir -p "$other/.claude" "$BATS_TEST_TMPDIR/cfg"
	export CLAUDE_CONFIG_DIR=$BATS_TEST_TMPDIR/cfg
	export CLAUDE_CODE_TMPDIR=$BATS_TEST_TMPDIR/cctmp
	run -0 --separate-stderr agc --home "$other" --json roots
	json_ok 'all(has("agent") and has("root") and has("path") and has("real") and has("source") and has("exists"))'
	[ "$(root_of config)" = "$other/.claude" ]
	[ "$(root_of temp)" = /tmp ]
	json_ok 'map(select(.root == "config")) | .[0].exists == true'
}

@test "roots: the own home follows CLAUDE_CONFIG_DIR and TMPDIR" {
	mkdir -p "$BATS_TEST_TMPDIR/cfg"
	export CLAUDE_CONFIG_DIR=$BATS_TEST_TMPDIR/cfg
	run -0 --separate-stderr agc --json roots
	[ "$(root_of config)" = "$CLAUDE_CONFIG_DIR" ]
	[ "$(root_of temp)" = "$TMPDIR" ]
	json_ok 'map(select(.root == "temp")) | .[0].source == "TMPDIR"'
}

@test "roots: temp root precedence CLAUDE_CODE_TMPDIR > TMPDIR > TMP > TEMP > /tmp" {
	mkdir -p "$BATS_TEST_TMPDIR"/{a,b,c}
	export CLAUDE_CODE_TMPDIR=$BATS_TEST_TMPDIR/a
	run -0 --separate-stderr agc --json roots
	[ "$(root_of temp)" = "$BATS_TEST_TMPDIR/a" ]
	unset CLAUDE_CODE_TMPDIR TMPDIR
	export TMP=$BATS_TEST_TMPDIR/b TEMP=$BATS_TEST_TMPDIR/c
	run -0 --separate-stderr agc --json roots
	[ "$(root_of temp)" = "$BATS_TEST_TMPDIR/b" ]
	unset TMP
	run -0 --separate-stderr agc --json roots
	[ "$(root_of temp)" = "$BATS_TEST_TMPDIR/c" ]
	unset TEMP
	run -0 --separate-stderr agc --json roots
	[ "$(root_of temp)" = /tmp ]
}

@test "roots: --home naming the caller's own home (another spelling) still follows the variables" {
	mkdir -p "$BATS_TEST_TMPDIR/cfg"
	ln -s "$HOME" "$BATS_TEST_TMPDIR/home-link"
	export CLAUDE_CONFIG_DIR=$BATS_TEST_TMPDIR/cfg
	run -0 --separate-stderr agc --home "$BATS_TEST_TMPDIR/home-link" --json roots
	[ "$(root_of config)" = "$CLAUDE_CONFIG_DIR" ]
	[ "$(root_of temp)" = "$TMPDIR" ]
	run -0 --separate-stderr agc --home "$HOME/" --json roots
	[ "$(root_of config)" = "$CLAUDE_CONFIG_DIR" ]
}

@test "roots: the human output names each root and whether it exists" {
	run -0 agc roots
	[[ $output == *"$C"* ]]
	[[ $output == *"$TMPDIR"* ]]
}

@test "ls: a session under CLAUDE_CONFIG_DIR is found for the own home, not for --home OTHER" {
	local cwd s os other=$BATS_TEST_TMPDIR/other
	cwd=$(mk_project proj)
	s=$(new_uuid)
	os=$(new_uuid)
	export CLAUDE_CONFIG_DIR=$BATS_TEST_TMPDIR/cfg
	C=$CLAUDE_CONFIG_DIR mk_transcript "$s" "$cwd"
	C=$other/.claude mk_transcript "$os" "$cwd"
	run -0 --separate-stderr agc --json ls
	json_ok --arg s "$s" --arg o "$os" 'map(.id) | index($s) != null and index($o) == null'
	run -0 --separate-stderr agc --home "$other" --json ls
	json_ok --arg s "$s" --arg o "$os" 'map(.id) | index($o) != null and index($s) == null'
}

@test "purge: --home OTHER removes OTHER's session and leaves the caller's config and temp dirs alone" {
	local cwd s k other=$BATS_TEST_TMPDIR/other
	cwd=$(mk_project proj)
	k=$(pkey "$cwd")
	s=$(new_uuid)
	# the caller's own home and temp dir hold the same session id
	mk_full_session "$s" "$cwd"
	snap before
	C=$other/.claude mk_transcript "$s" "$cwd"
	mkdir -p "$other/.claude/file-history/$s"
	run -0 agc --home "$other" purge claude "$s"
	assert_gone "$other/.claude/projects/$k/$s.jsonl" "$other/.claude/file-history/$s"
	assert_tree_unchanged before
}
