#!/usr/bin/env bats
# SPEC "Output": --json prints JSON Lines with stable field names; purge --dry-run changes
# nothing and exits with the code the purge would have had (R6, R7).

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	mk_full_session "$S" "$CWD"
}

@test "Output: ls --json has agent, id, parent, project, title, created, updated, bytes, live" {
	run -0 --separate-stderr agc --json ls
	json_ok --arg s "$S" --arg p "$CWD" '
		length == 1 and (.[0] | .agent == "claude" and .id == $s and .parent == null and
		.project == $p and (.title | type) == "string" and (.title | contains("full session")) and
		(.created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")) and
		(.updated | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")) and
		(.bytes | type) == "number" and .bytes > 0 and .live == false)'
}

@test "Output: show --json has the session fields plus artifacts, children and holders" {
	run -0 --separate-stderr agc --json show claude "$S"
	json_ok --arg s "$S" --arg p "$CWD" --arg t "$C/projects/$K/$S.jsonl" '
		length == 1 and (.[0] | .agent == "claude" and .id == $s and .project == $p and
		has("title") and has("created") and has("updated") and has("bytes") and has("live") and
		(.artifacts | type) == "array" and (.children | type) == "array" and
		(.holders | type) == "array" and .holders == [] and
		(.artifacts | any(.path == $t)))'
}

@test "Output: show --json of a live session lists its holders with pid and why" {
	spawn sleep 1000
	mk_registry "$LAST_PID" "$S"
	run -0 --separate-stderr agc --json show claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].live == true and (.[0].holders | any(.pid == $p and .why == "registry"))'
}

@test "Output: in-use --json: free (exit 0) and in use (exit 4) with holders" {
	run -0 --separate-stderr agc --json in-use claude "$S"
	json_ok --arg s "$S" '.[0] | .agent == "claude" and .id == $s and .in_use == false and .holders == []'
	spawn_holding "$C/projects/$K/$S.jsonl"
	run -4 --separate-stderr agc --json in-use claude "$S"
	json_ok --argjson p "$LAST_PID" '.[0].in_use == true and (.[0].holders | any(.pid == $p and .why == "open-file" and has("command")))'
	run -5 --separate-stderr agc --json in-use claude "$(new_uuid)"
}

@test "Output: purge --json: removed items have kind, path, count, bytes; status purged; children are the sub-agents" {
	run -0 --separate-stderr agc --json purge claude "$S"
	json_ok '
		length == 1 and (.[0] | .agent == "claude" and .status == "purged" and
		.residual == [] and .holders == [] and
		(.children | length == 2 and all(test("^a[0-9a-f]{16}$"))) and
		(.removed | length > 10) and
		(.removed | all(has("kind") and has("path") and has("count") and has("bytes"))) and
		(.removed | all(.path | startswith("/"))))'
}

@test "Output: purge --json of a partial purge lists residual entries with reason" {
	mkdir -p "$OUT/tk"
	mv "$TU/$K/$S" "$OUT/tk/"
	rmdir "$TU/$K"
	ln -s "$OUT/tk" "$TU/$K"
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok '.[0].status == "partial" and (.[0].residual | length > 0) and
		(.[0].residual | all(has("kind") and has("path") and has("reason")))'
}

@test "R6: purge --dry-run changes nothing, status dry-run, removed lists what would go, exit 0" {
	snap before
	run -0 --separate-stderr agc --json purge claude "$S" --dry-run
	json_ok --arg t "$C/projects/$K/$S.jsonl" '.[0].status == "dry-run" and (.[0].removed | any(.path == $t))'
	assert_tree_unchanged before
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$S"
	local p
	for p in "${gone[@]}"; do
		jq -e -s --arg p "$p" '.[0].removed | any(.path == $p)' >/dev/null <<<"$output" ||
			{ echo "dry-run does not list $p" >&2; return 1; }
	done
	json_ok --arg h "$C/history.jsonl" '.[0].removed | any(.kind == "lines" and .path == $h and .count == 2)'
}

@test "R6: purge --dry-run of a live session exits 4 and changes nothing" {
	spawn sleep 1000
	mk_registry "$LAST_PID" "$S"
	snap before
	run -4 --separate-stderr agc --json purge --dry-run claude "$S"
	json_ok '.[0].holders | length > 0'
	assert_tree_unchanged before
}

@test "R6: purge --dry-run of a session behind a link exits 3 and changes nothing" {
	mkdir -p "$OUT/tk"
	mv "$TU/$K/$S" "$OUT/tk/"
	rmdir "$TU/$K"
	ln -s "$OUT/tk" "$TU/$K"
	snap before
	run -3 --separate-stderr agc --json purge claude "$S" --dry-run
	json_ok --arg p "$TU/$K/$S" '.[0].status == "dry-run" and (.[0].residual | any(.path == $p and .reason == "symlink"))'
	assert_tree_unchanged before
}

@test "R6: purge --dry-run of an unknown id exits 5" {
	snap before
	run -5 --separate-stderr agc --json purge claude "$(new_uuid)" --dry-run
	json_ok '.[0].status == "not-found"'
	assert_tree_unchanged before
}

@test "R6: purge --dry-run does not break a stale history lock nor rewrite history" {
	mkdir "$C/history.jsonl.lock"
	touch -d '30 seconds ago' "$C/history.jsonl.lock"
	snap before
	run -0 agc purge claude "$S" --dry-run
	assert_tree_unchanged before
}

@test "Output: human purge output names the session and the status" {
	run -0 agc purge claude "$S"
	[[ $output == *purged* && $output == *"$S"* ]]
	run -5 agc purge claude "$S"
	[[ $output == *"not found"* ]]
}

@test "R6: purge --dry-run exits 3 when history.jsonl is held open, as the purge would" {
	spawn_holding "$C/history.jsonl"
	snap before
	run -3 --separate-stderr agc --json purge claude "$S" --dry-run
	json_ok --arg h "$C/history.jsonl" '.[0].status == "dry-run" and (.[0].residual | any(.path == $h and .reason == "in-use"))'
	assert_tree_unchanged before
	run -3 agc purge claude "$S"
}

@test "R6: purge --dry-run exits 3 when a fresh history lock is held, as the purge would" {
	mkdir "$C/history.jsonl.lock"
	spawn bash -c 'while :; do touch "$1"; sleep 1; done' _ "$C/history.jsonl.lock"
	snap before
	run -3 agc purge claude "$S" --dry-run
	assert_tree_unchanged before
	run -3 agc purge claude "$S"
}
