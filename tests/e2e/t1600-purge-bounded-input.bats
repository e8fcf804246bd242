#!/usr/bin/env bats
# R8: malformed, truncated, huge or deeply nested input is skipped or reported; it never
# crashes the tool and never widens what is deleted.

load lib

setup() {
	agc_setup
	CWD=$(mk_project proj)
	K=$(pkey "$CWD")
	S=$(new_uuid)
	O=$(new_uuid)
	mk_full_session "$S" "$CWD"
	mk_transcript "$O" "$CWD"
}

@test "R8: a transcript of garbage, a 2 MiB line and deep nesting: ls, show and purge work" {
	local f=$C/projects/$K/$S.jsonl
	{
		printf 'not json\n{"truncated":\n'
		printf '%*s' 100000 '' | tr ' ' '[' ; printf '\n'
		head -c 2097152 /dev/zero | tr '\0' a ; printf '\n'
		printf '{"type":"user","message":{"content":[{"type":"text","text":"%s"}]},"cwd":"%s","timestamp":"bad"}\n' "$(head -c 300 /dev/zero | tr '\0' t)" "$CWD"
		printf '\x00\x01\xff\xfe\n'
	} >>"$f"
	run -0 agc ls
	run -0 --separate-stderr agc --json ls --children
	json_ok --arg s "$S" 'any(.id == $s)'
	run -0 agc show claude "$S"
	run -0 agc purge claude "$S"
	assert_gone "$f"
	assert_exists "$C/projects/$K/$O.jsonl"
}

@test "R8: a transcript whose first line is deeply nested JSON still lists" {
	local f=$C/projects/$K/$O.jsonl
	{ printf '%*s' 5000 '' | tr ' ' '['; printf '%*s\n' 5000 '' | tr ' ' ']'; } >"$f.new"
	cat "$f" >>"$f.new"
	mv "$f.new" "$f"
	run -0 --separate-stderr agc --json ls
	json_ok --arg o "$O" 'any(.id == $o)'
}

@test "R8: history.jsonl with malformed and overlong lines: only the session's lines go, a malformed one naming it is residual" {
	local h=$C/history.jsonl
	{
		printf '{"display":"no newline at the end","sessionId":"%s"' "$O"
		printf '\n'
		printf '%s\n' '{"display":'
		head -c 3000000 /dev/zero | tr '\0' x; printf '%s\n' "$S"
		printf '{"display":"x","sessionId":["%s"]}\n' "$S"
		printf '{"display":"x","sessionId":{"id":"%s"}}\n' "$S"
	} >>"$h"
	grep -av '"sessionId":"'"$S"'"}$' "$h" >"$BATS_TEST_TMPDIR/expected"
	# the garbage line that names the session is kept and reported (R7), not matched (R4)
	run -3 --separate-stderr agc --json purge claude "$S"
	json_ok --arg h "$h" '.[0].residual | any(.kind == "lines" and .path == $h and (.reason | test("malformed")))'
	cmp "$BATS_TEST_TMPDIR/expected" "$h"
}

@test "R8: history.jsonl without a final newline keeps its last line intact" {
	local h=$C/history.jsonl
	printf '{"display":"last","pastedContents":{},"timestamp":1,"project":"%s","sessionId":"%s"}' "$CWD" "$O" >>"$h"
	grep -av '"sessionId":"'"$S"'"}$' "$h" >"$BATS_TEST_TMPDIR/expected" || true
	run -0 agc purge claude "$S"
	# grep adds the missing newline; compare the lines, not the final byte
	diff <(cat "$BATS_TEST_TMPDIR/expected") <(cat "$h"; [[ -z $(tail -c1 "$h") ]] || echo)
	tail -n1 "$h" | grep -q '"display":"last"'
}

@test "R8: registry dir with odd names, a huge file and bad JSON: skipped, purge works" {
	mkdir -p "$C/sessions"
	echo '{}' >"$C/sessions/abc.json"
	echo '{}' >"$C/sessions/0.json"
	echo '{}' >"$C/sessions/-1.json"
	echo '{}' >"$C/sessions/99999999999999999999.json"
	echo "{\"sessionId\":\"$S\"}" >"$C/sessions/123.json.bak"
	mkdir "$C/sessions/456.json"
	head -c 400000 /dev/zero | tr '\0' ' ' >"$C/sessions/789.json"
	snap before
	run -0 agc purge claude "$S"
	assert_exists "$C/sessions/abc.json" "$C/sessions/0.json" "$C/sessions/-1.json" \
		"$C/sessions/99999999999999999999.json" "$C/sessions/123.json.bak" "$C/sessions/456.json" \
		"$C/sessions/789.json"
}

@test "R8: a session dir holding a deep tree and many files is removed completely" {
	local d=$C/projects/$K/$S/subagents i
	local deep=$d
	for i in $(seq 1 60); do deep=$deep/n; done
	mkdir -p "$deep"
	echo x >"$deep/leaf.jsonl"
	mkdir -p "$C/projects/$K/$S/tool-results"
	for i in $(seq 1 300); do : >"$C/projects/$K/$S/tool-results/t$i.txt"; done
	run -0 agc purge claude "$S"
	assert_gone "$C/projects/$K/$S"
}

@test "R8: unreadable entries in the projects dir (a file, a fifo, a dangling link) are skipped" {
	echo x >"$C/projects/not-a-dir"
	mkfifo "$C/projects/fifo"
	ln -s "$OUT/missing" "$C/projects/dangling"
	mkfifo "$C/projects/$K/$O.fifo"
	run -0 agc ls
	run -0 agc purge claude "$S"
	assert_exists "$C/projects/not-a-dir" "$C/projects/fifo" "$C/projects/dangling"
}

@test "R8: a fifo named as the transcript is not read forever" {
	local x
	x=$(new_uuid)
	mkfifo "$C/projects/$K/$x.jsonl"
	run -0 timeout 20 "$AGENTGC" ls
	run timeout 20 "$AGENTGC" show claude "$x"
	[ "$status" -ne 124 ]
	run timeout 20 "$AGENTGC" purge claude "$x"
	[ "$status" -ne 124 ]
}
