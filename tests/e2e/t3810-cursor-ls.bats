#!/usr/bin/env bats
# Cursor (formats/cursor.md): roots, ls and show on generated homes: every chat, ACP session
# and leftover listed once (a chat in two buckets too), its title from the meta row (hex JSON
# or JSON) or meta.json, its project from meta.json's cwd, the first user blob's workspace
# line or the bucket; a corrupt meta or store listed with its error; nothing changed by
# looking (no -wal or -shm made beside a store or the tracking database).

load lib
load cu

setup() { cu_setup; }

# The title ls must give: the meta's name unless it is the default, then meta.json's.
want_title() {
	m_get "$1" 'if (.title != null and .title != "New Agent") then .title
		elif .meta_json_title != null then .meta_json_title else (.title // "") end'
}

@test "cursor ls: every chat, ACP session and leftover once, with its title, project and size" {
	cu_fixture --seed 3811 --projects 3 --cursor 14 --cursor-acp 2 --cursor-leftovers 3 --cursor-subagents 2 \
		--cursor-twins 2 --cursor-corrupt-meta 1 --cursor-corrupt-store 1
	snap before
	run -0 --separate-stderr agc ls --json --agent cursor
	local ls=$output err=$stderr id n got want
	# sub-agents with nothing of their own are no sessions of their own
	n=$(jq -c 'select(.agent == "cursor" and .kind != null)' "$MAN" | wc -l)
	[[ $(jq -s 'length' <<<"$ls") == "$n" ]]
	[[ $(jq -r '.id' <<<"$ls" | sort -u | wc -l) == "$n" ]]
	# what each is, read once (fields apart by \036, artifacts by \037): from the manifest id,
	# title, project, the bucket, whether its store is corrupt, children, artifacts; from ls id,
	# title, project, bytes, live, parent
	jq -r 'select(.agent == "cursor") | [.id,
		(if (.meta == "corrupt" or .store == "corrupt") then (.meta_json_title // "")
		 elif .kind == "chat" then
			(if (.title != null and .title != "New Agent") then .title
			 elif .meta_json_title != null then .meta_json_title else (.title // "") end)
		 else "" end),
		(.project // ""), (.bucket // ""), (.store == "corrupt"),
		((.children // []) | join(" ")), ((.artifacts // []) | join("\u001f"))] | map(tostring) | join("\u001e")' "$MAN" \
		>"$BATS_TEST_TMPDIR/want"
	jq -r '[.id, (.title // ""), (.project // ""), .bytes, .live, .parent] | map(tostring) | join("\u001e")' <<<"$ls" \
		>"$BATS_TEST_TMPDIR/got"
	[[ $(cut -d$'\036' -f1 "$BATS_TEST_TMPDIR/got" | sort -u | wc -l) == "$n" && $(wc -l <"$BATS_TEST_TMPDIR/want") == "$n" ]]
	# SPEC "Sizes": every file of its dirs and transcripts (its sub-agents' inside), and its rows
	# and its sub-agents' rows: the files below each artifact in one find, the rows of every
	# table with a conversationId summed by it in one query
	local -a starts=()
	mapfile -t starts < <(cut -d$'\036' -f7 "$BATS_TEST_TMPDIR/want" | tr '\037' '\n' | grep .)
	{ [[ ${#starts[@]} -eq 0 ]] || find "${starts[@]}" -type f -printf 'F\t%s\t%H\n' 2>/dev/null || true; } \
		>"$BATS_TEST_TMPDIR/sizes"
	sqlite3 -batch -separator $'\t' "$TDB" "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
		  AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'conversationId')
		ORDER BY m.name, p.cid" |
		awk -F'\t' '{ if (!($1 in c)) o[++n] = $1; c[$1] = ($1 in c ? c[$1] " + " : "") "coalesce(length(CAST(\"" $2 "\" AS BLOB)), 0)" }
			END { for (i = 1; i <= n; i++) printf "SELECT '\''R'\'', coalesce(sum(%s), 0), conversationId FROM \"%s\" GROUP BY conversationId;\n", c[o[i]], o[i] }' |
		sqlite3 -bail -batch -separator $'\t' "$TDB" >>"$BATS_TEST_TMPDIR/sizes"
	local title project bucket corrupt children arts gtitle gproject bytes live parent
	while IFS=$'\036' read -r id title project bucket corrupt children arts; do
		IFS=$'\036' read -r _ gtitle gproject bytes live parent < <(awk -F'\036' -v id="$id" '$1 == id' "$BATS_TEST_TMPDIR/got")
		[[ $gtitle == "$title" ]] || { echo "$id: title '$gtitle', want '$title'"; return 1; }
		# no cwd in meta.json and the store unreadable: the bucket, as it is
		[[ $gproject == "$project" || ($corrupt == true && $gproject == "$bucket") ]] ||
			{ echo "$id: project '$gproject', want '$project'"; return 1; }
		want=$(awk -F'\t' -v ids="$id $children" -v arts="$arts" '
			BEGIN { split(ids, i, " "); for (k in i) mine[i[k]] = 1; n = split(arts, a, "\037"); for (k = 1; k <= n; k++) art[a[k]]++ }
			$1 == "F" && ($3 in art) { t += $2 * art[$3] }
			$1 == "R" && ($3 in mine) { t += $2 }
			END { printf "%.0f\n", t }' "$BATS_TEST_TMPDIR/sizes")
		[[ $bytes == "$want" ]] || { echo "$id: $bytes bytes, want $want"; return 1; }
		[[ $live == false && $parent == null ]] || { echo "$id: live $live, parent $parent"; return 1; }
	done <"$BATS_TEST_TMPDIR/want"
	# a creation time from the meta row (ms)
	id=$(m_pick '.kind == "chat" and .meta == "hex" and .store == "ok"')
	[[ $(jq -r --arg id "$id" 'select(.id == $id) | .created' <<<"$ls") == \
		$(date -u -d "@$(($(m_get "$id" .created) / 1000))" +%Y-%m-%dT%H:%M:%SZ) ]]
	# the corrupt ones are listed, each with its error on stderr
	id=$(m_pick '.meta == "corrupt"')
	[[ $err == *"$id"*"neither JSON nor hex-encoded JSON"* ]]
	id=$(m_pick '.store == "corrupt"')
	[[ $err == *"$id/store.db"*"not a database"* ]]
	# looking changed nothing: no -wal or -shm beside any store or the tracking database
	assert_tree_unchanged before
	run -0 agc ls --agent cursor
	run -0 agc show cursor "$(m_pick '.young == true and .store == "ok"')"
	run -0 agc roots
	assert_tree_unchanged before
}

@test "cursor show: the layout found, the chat's dirs in both buckets, its transcripts, rows and sub-agents" {
	cu_fixture --seed 3812 --projects 3 --cursor 9 --cursor-subagents 3 --cursor-twins 3
	local id hex raw d c
	id=$(m_pick '.kind == "chat" and (.children | length) > 0 and (.dirs | length) > 1 and .meta == "hex"')
	[[ -n $id ]]
	run -0 agc show cursor "$id"
	[[ $output == *"layout   chats/<bucket>/<id>/ in '$CU': meta as hex JSON"* ]]
	[[ $output == *"; transcript <id>/ in '$CU'"* ]]
	[[ $output == *"sub-agent"* ]]
	for d in $(m_get "$id" '.artifacts[]'); do
		[[ $output == *"  $d"* ]] || { echo "show lacks $d"; return 1; }
	done
	for c in $(m_get "$id" '.children[]'); do
		[[ $output == *"child $c"* ]]
	done
	[[ $output == *"rows of conversation_summaries in $TDB"* ]]
	run -0 agc show --json cursor "$id"
	json_ok '.[0].layout | test("meta as hex JSON")'
	json_ok ".[0].title == \"$(want_title "$id")\""
	raw=$(m_pick '.kind == "chat" and .meta == "raw" and .store == "ok"')
	run -0 agc show cursor "$raw"
	[[ $output == *"'$CU': meta as JSON"* ]]
	[[ $output == *"title    $(want_title "$raw")"* ]]
	# a young store: the WAL is said, and counted in the size
	id=$(m_pick '.young == true and .store == "ok" and (.dirs | length) == 1')
	[[ -s $(m_get "$id" '.dirs[0]')/store.db-wal ]]
	run -0 agc show cursor "$id"
	[[ $output == *", a WAL"* ]]
}

@test "cursor roots: every root the reports name, once each, and what each holds" {
	cu_fixture --seed 3813 --projects 2 --cursor 6 --cursor-acp 2 --cursor-leftovers 1 --cursor-split
	run -0 agc roots
	[[ $output == *"cursor    home    $CU  (default)"* ]]
	[[ $output == *"cursor    config  $HOME/.config/cursor  (default (XDG))"* ]]
	[[ $output == *"cursor    cfg-cap $HOME/.config/Cursor  (default (XDG, capital C), missing)"* ]]
	local nh ns
	ns=$(jq -s --arg r "$HOME/.config/cursor/" '[.[] | select(.kind == "chat") | select(.dirs[0] | startswith($r))] | length' "$MAN")
	nh=$(($(m_summary .chats) - ns))
	((ns > 0 && nh > 0))
	run -0 agc roots --json
	json_ok ".[] | select(.agent == \"cursor\" and .root == \"home\") | .holds | test(\"^chats: $nh in [0-9]+ buckets?; acp-sessions: 3 \\\\(1 with only meta.json\\\\); transcripts: [0-9]+ in [0-9]+ projects?; ai-tracking/ai-code-tracking.db$\")"
	json_ok ".[] | select(.agent == \"cursor\" and .root == \"config\") | .holds | test(\"^chats: $ns in [0-9]+ buckets?$\")"
	# the caller's own variables move them; one dir named twice counts once
	export CURSOR_CONFIG_DIR=$CU XDG_CONFIG_HOME=$HOME/.config
	run -0 agc roots
	[[ $(grep -c "^cursor " <<<"$output") == 3 ]]
	[[ $output == *"cursor    env     $CU  (\$CURSOR_CONFIG_DIR)"* ]]
	[[ $output == *"cursor    xdg     $HOME/.config/cursor  (\$XDG_CONFIG_HOME/cursor)"* ]]
	# every chat of both roots is listed, once
	run -0 --separate-stderr agc ls --json --agent cursor
	[[ $(jq -s 'length' <<<"$output") == $(($(m_summary .chats) + 3)) ]]
	# another home: defaults only
	mkdir -p "$BATS_TEST_TMPDIR/other"
	run -0 agc --home "$BATS_TEST_TMPDIR/other" roots
	[[ $output != *"\$CURSOR_CONFIG_DIR"* && $output == *"cursor    home    $BATS_TEST_TMPDIR/other/.cursor"* ]]
}

@test "R1 cursor: a chat dir named in upper case (--resume <UPPER>) is the chat's: listed under its id, purged with it" {
	cu_fixture --seed 3814 --projects 2 --cursor 3
	local id d up other
	id=$(m_pick '.kind == "chat"')
	d=$(m_get "$id" '.dirs[0]')
	up=${d%/*}/$(upper "$id")
	mv "$d" "$up"
	other=$(m_picks '.kind == "chat"' | grep -v "$id" | head -n1)
	run -0 --separate-stderr agc ls --json --agent cursor
	json_ok --arg id "$id" '[.[] | select(.id == $id)] | length == 1'
	run -0 --separate-stderr agc --json purge cursor "$(upper "$id")"
	json_ok --arg up "$up" '.[0].status == "purged" and any(.[0].removed[]; .path == $up)'
	assert_gone "$up"
	run -5 agc purge cursor "$id"
	# another chat is untouched
	assert_exists "$(m_get "$other" '.dirs[0]')"
}
