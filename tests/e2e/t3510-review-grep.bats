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
