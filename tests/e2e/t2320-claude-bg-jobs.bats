#!/usr/bin/env bats
# A Claude session moved to the background runs as a job of Claude's daemon: jobs/<short>/ of
# the config dir, <short> the first 8 hex digits of the session id it was started with, its
# state.json naming the session (sessionId, resumeSessionId) with the prompt (intent), and the
# daemon's marks daemon/host-managed/<short> and daemon/gateway-routed/<short> (what
# `claude rm` removes). Seen with Claude Code 2.1.332's "Move to background and exit".

load lib

# A background job of session ID (resumeSessionId RESUME, default ID) with its scratch files and
# the daemon's marks; prints the job dir. The short name is the first 8 digits of ID unless
# SHORT is given.
mk_job() {
	local id=$1 resume=${2:-$1} short=${3:-${1:0:8}} j
	j=$C/jobs/$short
	mkdir -p "$j/tmp" "$C/daemon/host-managed" "$C/daemon/gateway-routed"
	printf '{"state":"done","tempo":"idle","intent":"the secret prompt of %s","sessionId":"%s","resumeSessionId":"%s","daemonShort":"%s","template":"bg","backend":"daemon"}\n' \
		"$id" "$id" "$resume" "$short" >"$j/state.json"
	echo 'scratch of the job' >"$j/tmp/notes.txt"
	: >"$C/daemon/gateway-routed/$short"
	echo '{}' >"$C/daemon/host-managed/$short"
	printf '%s' "$j"
}

# The Nth short job name (N = 1, 2, ...) that shares ID's first 6 digits but is not its own.
twin_short() {
	local id=$1 n=$2 c
	for c in a1 b2 c3 d4 e5; do
		[[ $c == "${id:6:2}" ]] && continue
		((--n)) || { printf '%s' "${id:0:6}$c"; return; }
	done
}

# The daemon's own files, which no session owns.
mk_daemon_files() {
	mkdir -p "$C/daemon"
	echo '{"pins":[]}' >"$C/jobs/pins.json"
	echo '{"proto":1,"workers":{}}' >"$C/daemon/roster.json"
	echo 'log' >"$C/daemon.log"
	: >"$C/daemon.lock"
}

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
}

@test "a background job (jobs/<short>/, named by its state.json) goes with its session, with the daemon's marks; other jobs and the daemon's files stay" {
	local s o js jo
	s=$(new_uuid)
	o=$(new_uuid)
	mk_full_session "$s" "$CWD"
	mk_transcript "$o" "$CWD" "another session"
	js=$(mk_job "$s")
	jo=$(mk_job "$o")
	# a job named with s's first 8 digits that another session started is that one's
	mk_job "$o" "$o" "$(twin_short "$s" 1)" >/dev/null
	mkdir -p "$C/jobs/${s:0:8}x"
	echo '{"sessionId":"'"$s"'"}' >"$C/jobs/${s:0:8}x/state.json"
	mk_daemon_files
	snap before
	run -0 --separate-stderr agc --json purge claude "$s" --dry-run
	json_ok --arg j "$js" '.[0].removed | any(.path == $j)'
	run -0 --separate-stderr agc --json ls
	local bytes
	bytes=$(jq -r --arg id "$s" 'select(.id == $id) | .bytes' <<<"$output")
	run -0 --separate-stderr agc --json purge claude "$s"
	json_ok --argjson b "$bytes" '.[0].status == "purged" and .[0].residual == [] and ([.[0].removed[].bytes] | add) == $b' || { echo "sum: $(jq "[.removed[]?.bytes] | add" <<<"$output")"; false; }
	mapfile -t gone <"$BATS_TEST_TMPDIR/gone.$s"
	SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "${gone[@]}" "$js" \
		"$C/daemon/host-managed/${s:0:8}" "$C/daemon/gateway-routed/${s:0:8}"
	assert_exists "$jo" "$C/jobs/$(twin_short "$s" 1)" "$C/jobs/${s:0:8}x" "$C/daemon/gateway-routed/${o:0:8}" \
		"$C/jobs/pins.json" "$C/daemon/roster.json" "$C/daemon.lock"
	! grep -rq "secret prompt of $s" "$C"
}

@test "a job that also names another session with a transcript stays, reported, until that one goes too" {
	local s t j
	s=$(new_uuid)
	t=$(new_uuid)
	mk_transcript "$s" "$CWD" "first"
	mk_transcript "$t" "$CWD" "resumed in the job"
	j=$(mk_job "$s" "$t")
	run -3 --separate-stderr agc --json purge claude "$s"
	json_ok --arg j "$j" --arg t "$t" '.[0].status == "partial" and (.[0].residual | any(.path == $j and (.reason | contains($t))))'
	assert_exists "$j/state.json" "$j/tmp/notes.txt" "$C/daemon/gateway-routed/${s:0:8}"
	# the other session's purge takes it: the first has no transcript now
	run -0 --separate-stderr agc --json purge claude "$t"
	json_ok --arg j "$j" '.[0].status == "purged" and (.[0].removed | any(.path == $j))'
	assert_gone "$j" "$C/daemon/gateway-routed/${s:0:8}" "$C/daemon/host-managed/${s:0:8}"
}

@test "ls --orphans lists a job whose sessions have no transcript; prune --orphans removes it and nothing else" {
	local s o j
	s=$(new_uuid)
	o=$(new_uuid)
	mk_transcript "$o" "$CWD" "kept"
	j=$(mk_job "$s")
	mk_job "$o" >/dev/null
	mk_daemon_files
	snap before
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg s "$s" 'map(select(.orphan == true)) | length == 1 and .[0].id == $s and .[0].bytes > 0'
	run -0 --separate-stderr agc --json prune --orphans --settle 0s --yes
	json_ok --arg s "$s" 'map(select(.status == "purged")) | length == 1 and .[0].id == $s'
	assert_tree_minus before "$j" "$C/daemon/host-managed/${s:0:8}" "$C/daemon/gateway-routed/${s:0:8}"
}

@test "R2, R8: a job dir that is a link, or whose state.json is a link, a FIFO or not JSON, is never read through and never removed" {
	local s j
	s=$(new_uuid)
	mk_full_session "$s" "$CWD"
	mkdir -p "$OUT/job" "$C/jobs"
	echo '{"sessionId":"'"$s"'"}' >"$OUT/job/state.json"
	ln -s "$OUT/job" "$C/jobs/$(twin_short "$s" 1)"
	mkdir -p "$C/jobs/$(twin_short "$s" 2)" "$C/jobs/$(twin_short "$s" 3)" "$C/jobs/${s:0:8}"
	ln -s "$OUT/job/state.json" "$C/jobs/$(twin_short "$s" 2)/state.json"
	mkfifo "$C/jobs/$(twin_short "$s" 3)/state.json"
	echo '{"sessionId":"'"$s"'"' >"$C/jobs/${s:0:8}/state.json"
	snap before
	run -3 --separate-stderr timeout 20 "$AGENTGC" --json purge claude "$s"
	# the job named like the session's whose state cannot be read is reported, not taken
	json_ok --arg j "$C/jobs/${s:0:8}" '.[0].status == "partial" and (.[0].residual | any(.path == $j))'
	assert_exists "$C/jobs/$(twin_short "$s" 1)" "$C/jobs/$(twin_short "$s" 2)/state.json" "$C/jobs/$(twin_short "$s" 3)/state.json" \
		"$C/jobs/${s:0:8}/state.json"
	assert_outside_unchanged before
}

@test "R5: a process with a file of the job open holds the session: in-use 4, purge refused, nothing changed" {
	local s j
	s=$(new_uuid)
	mk_full_session "$s" "$CWD"
	j=$(mk_job "$s")
	spawn_holding "$j/tmp/notes.txt"
	snap before
	run -4 --separate-stderr agc --json purge claude "$s"
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and (.[0].holders | any(.pid == $p))'
	assert_tree_unchanged before
	run -4 agc in-use claude "$s"
}

@test "R5: a job that also names a session that runs and has no transcript yet (just moved to the background) stays, said" {
	local s b j
	s=$(new_uuid)
	b=$(new_uuid)
	mk_transcript "$s" "$CWD" "first"
	j=$(mk_job "$s" "$b")
	spawn sleep 1000
	mk_registry "$LAST_PID" "$b"
	snap before
	run -3 --separate-stderr agc --json purge claude "$s"
	json_ok --arg j "$j" --arg b "$b" '.[0].status == "partial" and (.[0].residual | any(.path == $j and (.reason | contains($b))))'
	assert_exists "$j/state.json" "$j/tmp/notes.txt" "$C/daemon/gateway-routed/${s:0:8}"
	# that one's own purge is refused while it runs
	run -4 agc purge claude "$b"
	assert_exists "$j/state.json"
	# and prune --orphans, which finds the job through the first session (gone now), keeps it
	run --separate-stderr agc --json prune --orphans --settle 0s --yes
	assert_exists "$j/state.json" "$C/daemon/gateway-routed/${s:0:8}"
}

@test "R4: a job whose state.json is written again between discovery and removal (now naming another session) stays; a rerun judges it again" {
	local s t j
	s=$(new_uuid)
	t=$(new_uuid)
	mk_full_session "$s" "$CWD"
	mk_transcript "$t" "$CWD" "another"
	j=$(mk_job "$s")
	printf '{"state":"done","sessionId":"%s","resumeSessionId":"%s"}\n' "$s" "$t" >"$BATS_TEST_TMPDIR/state.new"
	# the file-history of the session goes before its job: then the job is given to t as well
	AGC_HOOK_UNLINKAT="0123456789abcdef@v1" AGC_HOOK_CMD="cp '$BATS_TEST_TMPDIR/state.new' '$j/state.json.tmp' && mv '$j/state.json.tmp' '$j/state.json'" \
		run -3 --separate-stderr agc_faulty --json purge claude "$s"
	json_ok --arg j "$j" '.[0].status == "partial" and (.[0].residual | any(.path == $j))'
	assert_exists "$j/state.json" "$j/tmp/notes.txt"
	cmp "$BATS_TEST_TMPDIR/state.new" "$j/state.json"
	# the rerun reads it anew: it names t, which has a transcript
	run -3 --separate-stderr agc --json purge claude "$s"
	json_ok --arg j "$j" --arg t "$t" '.[0].residual | any(.path == $j and (.reason | contains($t)))'
	assert_exists "$j/state.json"
}

@test "a directory named like the session's own job but without state.json stays, said: whose it is cannot be told" {
	local s
	s=$(new_uuid)
	mk_full_session "$s" "$CWD"
	mkdir -p "$C/jobs/${s:0:8}/tmp"
	echo 'scratch' >"$C/jobs/${s:0:8}/tmp/x"
	run -3 --separate-stderr agc --json purge claude "$s"
	json_ok --arg j "$C/jobs/${s:0:8}" '.[0].residual | any(.path == $j and (.reason | contains("without state.json")))'
	assert_exists "$C/jobs/${s:0:8}/tmp/x"
}
