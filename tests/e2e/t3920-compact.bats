#!/usr/bin/env bats
# SPEC "compact", R6: the agents' shared databases rebuilt when nothing else holds them, so no
# deleted text is left in the file; held ones skipped with their holders; a dry run changes
# nothing; prune --scrub rebuilds each database once, at the end.

load lib
load pr

DB_OC() { printf '%s' "$HOME/.local/share/opencode/opencode.db"; }

# Fail when TEXT is in any of the FILES that exist.
no_text() {
	local text=$1 f
	shift
	for f in "$@"; do
		[[ -f $f ]] || continue
		if grep -qaF -- "$text" "$f"; then
			echo "'$text' is still in $f" >&2
			return 1
		fi
	done
}

@test "compact: after a bulk purge the database shrinks, passes integrity_check, and no deleted text is left in it" {
	mk_home 0 40 0 0
	local db before after id
	db=$(DB_OC)
	run -0 --separate-stderr agc --json prune --agent opencode --older-than 1d --yes
	json_ok '.[-1].summary.purged == 40'
	# the session ids are still in the file's free pages or its -wal, as the agent would leave them
	before=$(stat -c %s "$db")
	run -0 --separate-stderr agc --json compact --agent opencode
	json_ok --arg db "$db" 'length == 1 and .[0].path == $db and .[0].status == "compacted" and
		.[0].bytes_after < .[0].bytes_before and .[0].holders == []'
	after=$(stat -c %s "$db")
	((after < before))
	[[ $(sqlite3 "$db" 'PRAGMA integrity_check') == ok ]]
	[[ $(sqlite3 "$db" 'PRAGMA freelist_count') == 0 ]]
	# no deleted id anywhere in the file, nor in a -wal
	for id in $(jq -r 'select(.agent == "opencode") | .id' "$MAN"); do
		no_text "$id" "$db" "$db-wal"
	done
	[[ -z $(agc ls --agent opencode --ids) ]]
}

@test "compact: a database a process holds is skipped with its holder (exit 4), left as it was" {
	mk_home 0 5 2 0
	local db sum
	db=$(DB_OC)
	spawn_holding "$db"
	sum=$(sha256sum <"$db")
	run -4 --separate-stderr agc --json compact
	json_ok --arg db "$db" --argjson pid "$LAST_PID" 'any(.[]; .path == $db and .status == "skipped" and
		.reason == "in-use" and any(.holders[]; .pid == $pid))'
	# the others went on
	json_ok 'map(select(.agent == "codex")) | length > 0 and all(.status == "compacted")'
	[[ $(sha256sum <"$db") == "$sum" ]]
	run -4 --separate-stderr agc compact --agent opencode
	[[ $output == *"skipped, in use"*"held by pid $LAST_PID (open-file)"* ]]
}

@test "compact --dry-run: the free pages and the room, and nothing changed" {
	mk_home 0 20 2 2
	run -0 --separate-stderr agc prune --agent opencode --older-than 1d --yes
	home_state >"$BATS_TEST_TMPDIR/before"
	local sums
	sums=$(find "$HOME" -name '*.db' -o -name '*.sqlite' | sort | xargs sha256sum)
	run -0 --separate-stderr agc --json compact --dry-run
	json_ok 'all(.[]; .status == "dry-run") and any(.[]; .agent == "opencode" and .free_bytes > 0) and
		all(.[]; .avail > .need)'
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
	[[ $(find "$HOME" -name '*.db' -o -name '*.sqlite' | sort | xargs sha256sum) == "$sums" ]]
	run -0 --separate-stderr agc compact --dry-run
	[[ $output == *"dry-run opencode ~/.local/share/opencode/opencode.db: "*" of free pages"* ]]
}

@test "R2 compact: a database that is a symlink is skipped, what it points at untouched" {
	mk_home 0 3 0 0
	local db sum
	db=$(DB_OC)
	mv "$db" "$OUT/opencode.db"
	ln -s "$OUT/opencode.db" "$db"
	sum=$(sha256sum <"$OUT/opencode.db")
	run -3 --separate-stderr agc --json compact
	json_ok '.[0].status == "skipped" and .[0].reason == "symlink"'
	[[ -L $db && $(sha256sum <"$OUT/opencode.db") == "$sum" ]]
}

@test "compact: a file system without room for the copy: skipped with the figures (exit 3)" {
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare -m --propagation private true 2>/dev/null || skip "cannot make a private mount namespace here"
	mk_home 0 60 0 0
	local db=$HOME/.local/share/opencode/opencode.db size
	size=$(stat -c %s "$db")
	unshare -m --propagation private bash -c '
		d=$1/.local/share/opencode; out=$2; size=$3
		cp -a "$d" "$out/oc"
		# a tmpfs just larger than the database: no room for a second copy
		mount -t tmpfs -o size=$(( (size / 4096 + 40) * 4096 )) agc-full "$d" || exit 100
		cp -a "$out/oc/." "$d/"
		"$AGENTGC" --json compact --agent opencode >"$out/out.json" 2>"$out/err.txt"
		echo $? >"$out/rc"
	' _ "$HOME" "$BATS_TEST_TMPDIR" "$size" || [[ $? != 100 ]] || skip "cannot mount a tmpfs here"
	[[ $(cat "$BATS_TEST_TMPDIR/rc") == 3 ]]
	output=$(cat "$BATS_TEST_TMPDIR/out.json")
	json_ok '.[0].status == "skipped" and .[0].reason == "free-space" and .[0].need > .[0].avail'
}

@test "prune --scrub: each database rows went from is rebuilt once, at the end; no deleted id left in it" {
	mk_home 2 30 4 0
	local db id
	db=$(DB_OC)
	run -0 --separate-stderr agc --json prune --older-than 1d --yes --scrub
	# OpenCode's database and the Codex databases that held rows: each once
	json_ok '.[-1].summary.scrubbed >= 2 and .[-1].summary.scrub_left == 0'
	json_ok '.[-1].summary.scrub | (map(.path) | length) == (map(.path) | unique | length)'
	json_ok --arg db "$db" '.[-1].summary.scrub | any(.path == $db and .status == "compacted")'
	[[ $(sqlite3 "$db" 'PRAGMA freelist_count') == 0 ]]
	for id in $(jq -r 'select(.agent == "opencode") | .id' "$MAN"); do
		no_text "$id" "$db" "$db-wal"
	done
	# a dry run says which would be rebuilt, and changes nothing
	mk_home 2 5 0 0
	home_state >"$BATS_TEST_TMPDIR/before"
	run -0 --separate-stderr agc --json prune --older-than 1d --dry-run --scrub
	json_ok --arg db "$(DB_OC)" '.[-1].summary.scrub | any(.path == $db and .status == "dry-run")'
	diff -u "$BATS_TEST_TMPDIR/before" <(home_state)
}
