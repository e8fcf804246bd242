#!/usr/bin/env bats
# SPEC "Output", `live` in `ls` (R5): ls matches every session's ids against the command
# lines of every process, however long they are. A host whose processes carry hundreds of
# KiB of arguments each (build hosts: java class paths, electron flags, base64 blobs) gives
# the same answer as `in-use` for each session: live only where an argument names it.

load lib

setup() {
	agc_setup
	need_fixture
}

teardown() { agc_teardown; }

@test "live: 270 processes with 256 KiB of arguments each; only the one naming a session makes it live, as in-use says" {
	local big id i rc
	MAN=$BATS_TEST_TMPDIR/manifest.jsonl
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3660 --claude 4 --projects 2 \
		--now "$NOW" --manifest "$MAN" --quiet
	mkdir -p "$TMPDIR"
	mapfile -t IDS < <(jq -r 'select(.agent == "claude" and .parent == null) | .id' "$MAN")
	[[ ${#IDS[@]} -ge 3 ]]
	# two arguments of 128,000 id bytes each (the longest one argument may be is 128 KiB)
	big=$(head -c 128000 /dev/zero | tr '\0' 'x')
	for i in $(seq 1 270); do
		spawn sh -c 'sleep 1000; :' big "$big" "$big"
	done
	# and one whose long argument holds a session's id in upper case, inside a run of id bytes
	id=${IDS[1]}
	spawn sh -c 'sleep 1000; :' big "${big:0:60000}$(upper "$id")${big:0:60000}"
	for i in $(seq 1 100); do
		[[ $(pgrep -c -f 'sleep 1000; :') -ge 271 ]] && break
		sleep 0.05
	done
	run -0 --separate-stderr agc --json ls
	[[ -z $stderr ]]
	[[ $(jq -r 'select(.live) | .id' <<<"$output") == "$id" ]]
	for i in "${IDS[@]}"; do
		run agc in-use claude "$i"
		rc=$status
		if [[ $i == "$id" ]]; then [[ $rc == 4 ]]; else [[ $rc == 0 ]]; fi
	done
}
