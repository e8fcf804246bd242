#!/usr/bin/env bats
# SPEC "Output" for OpenCode: ls lists root sessions newest first; children appear only with
# --children, with parent set; `ls --agent opencode --project DIR --limit 1` names the session
# a directory's newest run belongs to, never a child; bytes count every artifact of the
# session, children included. Sessions come from the database and from the legacy store.

load lib
load oc

# ID's family's part and message data, in bytes (what any count of its rows includes).
rows_data_bytes() {
	local list
	list=$(m_family "$1" | while IFS= read -r s; do sqlq "$s"; echo; done | paste -sd,)
	q "SELECT (SELECT coalesce(sum(length(data)), 0) FROM part WHERE session_id IN ($list))
	        + (SELECT coalesce(sum(length(data)), 0) FROM message WHERE session_id IN ($list))"
}

@test "ls: root sessions only, newest first, with the manifest's title, project and times" {
	oc_fixture --seed 2031 --opencode 6 --projects 2 --opencode-children 3
	local want
	want=$(m_sessions | jq -s -c 'map(select(.parent == null)) | sort_by(-.updated) | map(.id)')
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok --argjson w "$want" 'map(.id) == $w'
	json_ok 'all(.agent == "opencode" and .parent == null)'
	json_ok --slurpfile m "$MAN" \
		'all(. as $s | ($m | map(select(.id == $s.id))[0]) as $l
		     | $s.title == $l.title and $s.project == $l.project
		       and ($s.created | fromdateiso8601) == ($l.created / 1000 | floor)
		       and ($s.updated | fromdateiso8601) == ($l.updated / 1000 | floor))'
}

@test "ls --children: every session once, each child with its parent" {
	oc_fixture --seed 2031 --opencode 6 --projects 2 --opencode-children 3
	run -0 --separate-stderr agc --json ls --agent opencode --children
	json_ok --slurpfile m "$MAN" '(map(.id) | sort) == ($m | map(select(.agent == "opencode") | .id) | sort)'
	json_ok --slurpfile m "$MAN" 'all(. as $s | ($m | map(select(.id == $s.id))[0].parent) == $s.parent)'
	json_ok 'any(.parent != null)'
}

@test "ls --children on a session_v2 database: each session once (it is in session and session_v2)" {
	oc_fixture --seed 2032 --opencode 4 --opencode-children 2 --opencode-v2
	run -0 --separate-stderr agc --json ls --agent opencode --children
	json_ok --slurpfile m "$MAN" '(map(.id) | sort) == ($m | map(select(.agent == "opencode") | .id) | sort)'
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok --slurpfile m "$MAN" 'length == ($m | map(select(.agent == "opencode" and .parent == null)) | length)'
}

# A directory with two roots, the older one (P) with descendants; one of them (G) is made the
# newest session of all.
mk_newer_child() {
	oc_fixture --seed 2032 --opencode 6 --projects 2 --opencode-children 3
	read -r P R2 DIR < <(m_sessions | jq -s -r '
		map(select(.parent == null)) | group_by(.project) | map(select(length > 1) | sort_by(.updated)
		| {old: (.[:-1] | map(select(.children | length > 0)) | .[0]), new: .[-1]})
		| map(select(.old != null)) | .[0] | "\(.old.id) \(.new.id) \(.old.project)"')
	[[ -n $P && -n $R2 && -n $DIR && $DIR != null ]]
	G=$(m_get "$P" '.children[-1]')
	local max
	max=$(m_sessions | jq -s 'map(.updated) | max')
	qw "UPDATE session SET time_updated = $((max + 60000)) WHERE id = $(sqlq "$G")"
	# what makes the case: G is the newest of all, R2 newer than P's own row
	run -0 --separate-stderr agc --json ls --agent opencode --children --project "$DIR"
	json_ok --arg g "$G" '(map(select(.id == $g))[0].updated) == (map(.updated) | max)'
	[[ $(m_get "$R2" .updated) -gt $(m_get "$P" .updated) ]]
}

@test "ls --project DIR --limit 1 never names a child, even one newer than every root" {
	mk_newer_child
	run -0 --separate-stderr agc --json ls --agent opencode --project "$DIR" --limit 1
	json_ok --arg d "$DIR" 'length == 1 and .[0].parent == null and .[0].project == $d'
	run -0 --separate-stderr agc --json ls --project "$DIR" --limit 1
	json_ok 'length == 1 and .[0].parent == null'
}

@test "ls --project DIR --limit 1 names the root the directory's newest run belongs to (a child's activity is its root's)" {
	mk_newer_child
	run -0 --separate-stderr agc --json ls --agent opencode --project "$DIR" --limit 1
	json_ok --arg p "$P" 'length == 1 and .[0].id == $p'
}

@test "ls: bytes count the session's rows and its files (legacy store, plan), children included" {
	oc_fixture --seed 2001 --opencode 4 --opencode-children 2 --opencode-legacy 3
	local P files rows
	P=$(m_pick '.parent == null and .legacy and (.children | length) > 0')
	mapfile -t ARTS < <(m_family_artifacts "$P")
	files=$(find "${ARTS[@]}" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	rows=$(rows_data_bytes "$P")
	[[ $files -gt 0 && $rows -gt 0 ]]
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok --arg p "$P" --argjson min $((files + rows)) 'map(select(.id == $p))[0].bytes >= $min'
	# a root counts at least what each of its children counts
	run -0 --separate-stderr agc --json ls --agent opencode --children
	json_ok 'INDEX(.id) as $by | all(.[]; .parent == null or ($by[.parent] == null) or $by[.parent].bytes >= .bytes)'
}

@test "ls: sessions only in the legacy store (storage/, no row) are listed, with title, project and parent" {
	oc_fixture --seed 2001 --opencode 4 --opencode-children 2 --opencode-legacy 3
	local P
	P=$(m_pick '.parent == null and .legacy and (.children | length) > 0')
	mapfile -t FAM < <(m_family "$P")
	oc_delete_sessions "${FAM[@]}"
	# the family members that have a session file in storage/
	mapfile -t LEG < <(m_family_jq "$P" '.[] | select(.legacy) | .id')
	[[ ${#LEG[@]} -ge 2 ]]
	run -0 --separate-stderr agc --json ls --agent opencode --children
	json_ok --slurpfile m "$MAN" --argjson l "$(jarr "${LEG[@]}")" \
		'. as $ls | all($l[]; . as $id | ($m | map(select(.id == $id))[0]) as $w
		     | any($ls[]; .id == $id and .parent == $w.parent and .title == $w.title and .project == $w.project))'
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok --arg p "$P" 'any(.id == $p)'
}

@test "ls --children shows each child under its parent, depth first, after the root it belongs to" {
	oc_fixture --opencode 4 --opencode-children 2 --seed 2001
	run -0 --separate-stderr agc --json ls --agent opencode --children
	# every child comes after its parent
	json_ok '
		. as $ls
		| ($ls | to_entries | map({key: .value.id, value: .key}) | from_entries) as $pos
		| all($ls[]; .parent == null or ($pos[.parent] != null and $pos[.parent] < $pos[.id]))'
	# and between a root and the next one only that root's descendants are listed
	local root="" id parent
	declare -A rootof
	while IFS=$'\t' read -r id parent; do
		if [[ $parent == null ]]; then root=$id; rootof[$id]=$id; continue; fi
		rootof[$id]=${rootof[$parent]:-}
		[[ ${rootof[$id]} == "$root" ]] || { echo "$id is not under $root"; return 1; }
	done < <(printf '%s\n' "$output" | jq -r '[.id, (.parent // "null")] | @tsv')
}
