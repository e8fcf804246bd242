#!/usr/bin/env bats
# SPEC "Output", Titles: the name a user gave the session first (Claude's custom-title lines,
# the last one wins, even past the head a listing reads; OpenCode's title), else the first
# prompt a person typed, skipping command and meta lines; at most 200 characters, cut with
# U+2026 on a character boundary; ls and show give the same title.

load lib

setup() {
	agc_setup
	need_fixture
	rm -rf "$HOME" "$TMPDIR"
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
	# 9 of 12 sessions: /init and its output first; 3 renamed twice; 3 with a long prompt
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3120 --claude 12 --titles 9 \
		--opencode 3 --now "$NOW" --manifest "$MAN" --quiet
	DB=$HOME/.local/share/opencode/opencode.db
}

@test "Titles: ls --json gives every Claude session the manifest's title (custom name, else first prompt)" {
	run -0 --separate-stderr agc --json ls --agent claude
	json_ok 'length == 12'
	jq -c 'select(.agent == "claude")' "$MAN" >"$BATS_TEST_TMPDIR/want"
	json_ok --slurpfile m "$BATS_TEST_TMPDIR/want" \
		'. as $ls | all($m[]; . as $w | any($ls[]; .id == $w.id and .title == $w.title))'
	# the renamed ones: the last name, written after the first 50 lines
	json_ok 'map(select(.title | test("^release notes — café edition #"))) | length == 3'
	json_ok 'all(.title | test("first name") | not)'
}

@test "Titles: /init, its output and meta lines are never a title" {
	run -0 --separate-stderr agc --json ls --agent claude
	json_ok 'all(.title | (contains("<command-") or contains("<local-command-") or contains("Caveat:")) | not)'
	# and show says the same for each
	local id
	for id in $(jq -r 'select(.agent == "claude") | .id' "$MAN"); do
		run -0 --separate-stderr agc --json show claude "$id"
		json_ok --arg t "$(jq -r --arg id "$id" 'select(.id == $id) | .title' "$MAN")" '.[0].title == $t'
	done
}

@test "Titles: a long first prompt is cut to 200 characters with … on a character boundary" {
	run -0 --separate-stderr agc --json ls --agent claude
	json_ok 'all(.title | length <= 200)'
	json_ok 'map(select(.title | endswith("…"))) | length == 3 and all(.title | length == 200)'
	# the text before the cut is the prompt's own: no broken UTF-8 (jq would show U+FFFD)
	json_ok 'all(.title | contains("\ufffd") | not)'
	json_ok 'all(has("title_bytes") | not)'
}

@test "Titles: an OpenCode title longer than 200 characters is cut the same way in ls and show" {
	local s long
	s=$(jq -r 'select(.agent == "opencode" and .parent == null) | .id' "$MAN" | head -n1)
	long=$(printf 'é%.0s' {1..150})$(printf 'x%.0s' {1..150})
	sqlite3 "$DB" "UPDATE session SET title = '$long' WHERE id = '$s'"
	run -0 --separate-stderr agc --json ls --agent opencode
	# (characters, not bytes: jq counts code points)
	json_ok --arg s "$s" --arg l "$long" \
		'map(select(.id == $s)) | .[0].title == ($l | explode | .[0:199] | implode) + "…"'
	run -0 --separate-stderr agc --json show opencode "$s"
	json_ok --arg l "$long" '.[0].title == ($l | explode | .[0:199] | implode) + "…" and (.[0].title | length) == 200'
	# a title of exactly 200 characters stays whole
	long=$(printf 'é%.0s' {1..150})$(printf 'x%.0s' {1..50})
	sqlite3 "$DB" "UPDATE session SET title = '$long' WHERE id = '$s'"
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok --arg s "$s" --arg l "$long" 'map(select(.id == $s)) | .[0].title == $l'
}
