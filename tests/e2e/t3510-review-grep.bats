#!/usr/bin/env bats
# SPEC "ls": --grep TEXT over title, first prompt and project, for OpenCode too: the first
# prompt is the first text part of the session's first user message.

load lib
load oc

@test "ls --grep: an OpenCode session is found by the first prompt a person typed, not by a later one" {
	oc_fixture --opencode 3 --seed 3511
	local s first later
	s=$(m_pick 'true')
	first=$(sqlite3 "$DB" "select json_extract(p.data, '$.text') from message m join part p on p.message_id = m.id
		where m.session_id = '$s' and json_extract(m.data, '$.role') = 'user' and json_extract(p.data, '$.type') = 'text'
		order by m.time_created, m.id, p.id limit 1")
	later=$(sqlite3 "$DB" "select json_extract(p.data, '$.text') from message m join part p on p.message_id = m.id
		where m.session_id = '$s' and json_extract(m.data, '$.role') = 'user' and json_extract(p.data, '$.type') = 'text'
		order by m.time_created, m.id, p.id limit 1 offset 1")
	# a word of the first prompt that is neither in the title nor in the project
	local word
	word=$(grep -o 'marker-[0-9a-z-]*' <<<"$first" | head -n1)
	[ -n "$word" ]
	[[ $(m_get "$s" '.title') != *"$word"* ]]
	run -0 --separate-stderr agc --json ls --grep "${word^^}"
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"\"id\":\"$s\""* ]]
	# a later prompt is not the first prompt
	[ -n "$later" ]
	run -0 --separate-stderr agc --json ls --grep "$later"
	[[ $output != *"\"id\":\"$s\""* ]]
}

@test "ls --grep: a part or message whose data is not JSON is skipped, the rest still listed" {
	oc_fixture --opencode 2 --seed 3512
	local s
	s=$(m_pick 'true')
	sqlite3 "$DB" "update part set data = '{not json' where message_id in (select id from message where session_id = '$s');
		update message set data = 'nor this' where session_id != '$s'"
	run -0 --separate-stderr agc --json ls --grep "$(m_get "$s" '.title')"
	[[ $output == *"\"id\":\"$s\""* ]]
}

# ---- Claude: <S>/custom-title.json (SPEC "Output", Titles) ---------------------------------

# A Claude session S of project P with the first prompt "fix the build"; sets S, P, K, SD.
claude_session() {
	P=$(mk_project p)
	K=$(pkey "$P")
	S=$(new_uuid)
	mk_transcript "$S" "$P" "fix the build"
	SD=$C/projects/$K/$S
	mkdir -p "$SD"
}

ls_title() {
	run -0 --separate-stderr agc --json ls
	jq -r --arg s "$S" 'select(.id == $s) | .title' <<<"$output"
}

@test "Titles: a name in <S>/custom-title.json is the title when the transcript has none" {
	claude_session
	[ "$(ls_title)" = "fix the build" ]
	printf '{"title":"release checklist"}' >"$SD/custom-title.json"
	[ "$(ls_title)" = "release checklist" ]
	printf '{"customTitle":"named by the user"}' >"$SD/custom-title.json"
	[ "$(ls_title)" = "named by the user" ]
	run -0 --separate-stderr agc --json show claude "$S"
	[[ $output == *'"title":"named by the user"'* ]]
}

@test "Titles: a custom-title line of the transcript wins over the file" {
	claude_session
	printf '{"type":"custom-title","customTitle":"from the transcript","sessionId":"%s"}\n' "$S" \
		>>"$C/projects/$K/$S.jsonl"
	printf '{"title":"from the file"}' >"$SD/custom-title.json"
	[ "$(ls_title)" = "from the transcript" ]
}

@test "Titles: custom-title.json is never read through a link, as a FIFO, or when it is not JSON (R2, R8)" {
	claude_session
	printf '{"title":"outside"}' >"$OUT/t.json"
	ln -s "$OUT/t.json" "$SD/custom-title.json"
	[ "$(ls_title)" = "fix the build" ]
	rm "$SD/custom-title.json"
	mkfifo "$SD/custom-title.json"
	# a FIFO is never opened: ls does not hang
	[ "$(timeout 10 bash -c 'agc() { "$AGENTGC" "$@"; }; "$AGENTGC" --json ls' | jq -r --arg s "$S" 'select(.id == $s) | .title')" = "fix the build" ]
	rm "$SD/custom-title.json"
	printf 'not json' >"$SD/custom-title.json"
	[ "$(ls_title)" = "fix the build" ]
	# a linked session dir: its file is not read either
	rm -rf "$SD"
	mkdir -p "$OUT/sd"
	printf '{"title":"behind a link"}' >"$OUT/sd/custom-title.json"
	ln -s "$OUT/sd" "$SD"
	[ "$(ls_title)" = "fix the build" ]
}
