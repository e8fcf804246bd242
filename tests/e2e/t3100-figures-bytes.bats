#!/usr/bin/env bats
# SPEC "Output", Sizes: bytes is one figure in ls, show, purge --dry-run and purge: the
# apparent size of every file of the session (children included), plus the stored size of its
# rows and of its lines in shared files; disk is st_blocks x 512 of its files; --sort size
# sorts by bytes. Generated homes: Claude sessions with sub-agents, history lines, paste
# files, side dirs and stale registry entries; OpenCode sessions with children at any depth,
# rows in every table, legacy JSON dirs and plan files.

load lib

setup() {
	agc_setup
	need_fixture
	rm -rf "$HOME" "$TMPDIR"
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3100 --claude 8 --projects 3 --full \
		--stale 2 --opencode 6 --opencode-children 3 --opencode-legacy 4 --now "$NOW" \
		--manifest "$MAN" --quiet
	mkdir -p "$TMPDIR"
}

# The total of a dry run or purge report (removed and residual): its bytes.
report_total() { jq -s '[.[0].removed[].bytes, .[0].residual[].bytes] | add // 0'; }

# For every root session of agent $1: ls --json bytes and disk == show --json, and bytes ==
# the dry run's total, which lists nothing as residual. A session with files has a disk figure.
same_figures() {
	local agent=$1 id l s d files
	run -0 --separate-stderr agc --json ls --agent "$agent"
	l=$output
	[[ $(jq -s length <<<"$l") -gt 3 ]]
	for id in $(jq -r .id <<<"$l"); do
		run -0 --separate-stderr agc --json show "$agent" "$id"
		s=$output
		files=$(jq 'any(.artifacts[]; .kind == "file" or .kind == "dir")' <<<"$s")
		jq -e -n --argjson l "$(jq -c --arg id "$id" 'select(.id == $id)' <<<"$l")" --argjson s "$s" \
			--argjson files "$files" \
			'$l.bytes == $s.bytes and $l.disk == $s.disk and $s.bytes > 0 and
			 ($s.disk > 0) == $files and $s.bytes == ([$s.artifacts[].bytes] | add)' >/dev/null ||
			{ echo "ls and show differ for $id: $(jq -c --arg id "$id" 'select(.id == $id)' <<<"$l") / $(jq -c '{bytes, disk}' <<<"$s")" >&2; return 1; }
		run -0 --separate-stderr agc --json purge --dry-run "$agent" "$id"
		[[ $(jq '.residual | length' <<<"$output") == 0 ]]
		[[ $(report_total <<<"$output") == $(jq .bytes <<<"$s") ]] ||
			{ echo "dry run of $id: $(report_total <<<"$output") bytes, show $(jq .bytes <<<"$s")" >&2; return 1; }
	done
}

@test "Sizes: every Claude session has one bytes and disk figure in ls, show and purge --dry-run" {
	same_figures claude
}

@test "Sizes: every OpenCode session has one bytes and disk figure in ls, show and purge --dry-run" {
	same_figures opencode
}

@test "Sizes: purging a Claude session with sub-agents, history lines and dirs removes what ls said" {
	local id bytes
	# a session with sub-agents, history lines and a stale registry entry
	id=$(jq -r 'select(.agent == "claude" and (.subagents | length) > 0 and .history_lines > 0
		and .registry.kind == "stale") | .id' "$MAN" | head -n1)
	[[ -n $id ]]
	run -0 --separate-stderr agc --json ls --agent claude
	bytes=$(jq -s --arg id "$id" '.[] | select(.id == $id) | .bytes' <<<"$output")
	run -0 --separate-stderr agc --json purge claude "$id"
	json_ok '.[0].status == "purged"'
	json_ok 'any(.[0].removed[]; .kind == "lines") and any(.[0].removed[]; .kind == "dir")'
	[[ $(report_total <<<"$output") == "$bytes" ]]
}

@test "Sizes: purging an OpenCode session with children, rows and legacy dirs removes what ls said" {
	local id bytes
	id=$(jq -r 'select(.agent == "opencode" and .parent == null and (.children | length) > 1
		and (.artifacts | length) > 0) | .id' "$MAN" | head -n1)
	[[ -n $id ]]
	run -0 --separate-stderr agc --json ls --agent opencode
	bytes=$(jq -s --arg id "$id" '.[] | select(.id == $id) | .bytes' <<<"$output")
	run -0 --separate-stderr agc --json purge opencode "$id"
	json_ok '.[0].status == "purged" and (.[0].children | length) > 1'
	json_ok 'any(.[0].removed[]; .kind == "rows") and any(.[0].removed[]; .kind == "dir")'
	[[ $(report_total <<<"$output") == "$bytes" ]]
}

@test "Sizes: a row counts every column, not just its data" {
	local id before after
	id=$(jq -r 'select(.agent == "opencode" and .parent == null) | .id' "$MAN" | head -n1)
	run -0 --separate-stderr agc --json show opencode "$id"
	before=$(jq .bytes <<<"$output")
	# 1000 more bytes of title: the session row's stored size grows by them
	sqlite3 "$HOME/.local/share/opencode/opencode.db" \
		"UPDATE session SET title = title || printf('%.1000c', 'x') WHERE id = '$id'"
	run -0 --separate-stderr agc --json show opencode "$id"
	after=$(jq .bytes <<<"$output")
	[[ $((after - before)) == 1000 ]]
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok --arg id "$id" --argjson b "$after" 'any(.[]; .id == $id and .bytes == $b)'
}

@test "Sizes: --sort size orders by bytes, largest first; show prints the size on disk" {
	run -0 --separate-stderr agc --json ls --sort size
	json_ok 'length > 8 and (map(.bytes) == (map(.bytes) | sort | reverse))'
	json_ok 'all(has("disk") and (.disk | type) == "number")'
	local id
	id=$(jq -r 'select(.agent == "claude") | .id' "$MAN" | head -n1)
	run -0 --separate-stderr agc show claude "$id"
	[[ $output =~ "size     "[0-9.]+" "?[KMG]?i?B" ("[0-9.]+" "?[KMG]?i?B" on disk)" ]]
}
