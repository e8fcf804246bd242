#!/usr/bin/env bats
# OpenCode sizes in ls (SPEC "Sizes", issue 8): each table is read once and its rows sized as
# they are read; the figure of a session stays the stored size of its rows as SQLite's
# length(CAST(x AS BLOB)) gives it (NULL 0, text and blobs their bytes, numbers the bytes of
# their text), summed over every table discovery deletes from, parts reached through the
# session's messages included, and equal to what show and purge --dry-run say.

load lib
load oc

S=ses_0a1b2c3d4e5fAAAAAAAAAAAAAA
T=ses_0a1b2c3d4e5fBBBBBBBBBBBBBB

# Two sessions of our own (no plan file, no legacy files, no children), so that their sizes
# are their rows alone: S with rows in every table that holds a session's rows, of every kind
# of value, one of them text with an embedded NUL; T with one message, which one of S's parts
# names (that part counts in both).
add_sessions() {
	local proj
	proj=$(q "SELECT id FROM project LIMIT 1")
	[[ -n $proj ]]
	qw "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, share_url,
	      summary_additions, summary_diffs, metadata, cost, tokens_input, time_created, time_updated)
	    VALUES ('$S', '$proj', NULL, 'no-such-plan', '/nowhere/s', 'héllo ✓ 😀', '1.0', X'00ff10',
	      12345, CAST(X'610062006300' AS TEXT), NULL, 1e100, -42, 1795000000000, 1795000001000),
	           ('$T', '$proj', NULL, 'no-such-plan', '/nowhere/t', 'tee', '1.0', NULL,
	      NULL, NULL, NULL, 3, 0, 1795000000000, 1795000002000);
	    INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES
	      ('msg_s1', '$S', 1, 2, 'ünïcode'), ('msg_s2', '$S', 3, 4.5, CAST(X'7b0022782200317d' AS TEXT)),
	      ('msg_t1', '$T', 5, 6, '{\"role\":\"user\"}');
	    INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES
	      ('prt_1', 'msg_s1', '$S', 1, 2, X'deadbeef'), ('prt_2', 'msg_t1', '$S', 0.1, 2, 'via T 𝄞'),
	      ('prt_3', 'msg_s2', '$S', 1, 2, '{\"type\":\"text\",\"text\":\"ça\"}');
	    INSERT INTO todo (session_id, content, status, priority, position, time_created, time_updated) VALUES
	      ('$S', 'écrire', 'pending', 'high', 0, 1, 2), ('$S', 'x', 'done', 'low', 1, 2.25, 3);
	    INSERT INTO session_share (session_id, id, secret, url, time_created, time_updated) VALUES
	      ('$S', 'shr', X'', 'https://example.invalid/ø', 1, 2);
	    INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES
	      ('sm1', '$S', 'user', 1, 1, 2, '{}');
	    INSERT INTO session_input (id, session_id, prompt, delivery, admitted_seq, promoted_seq, time_created) VALUES
	      ('si1', '$S', 'naïve', 'now', 1, NULL, 1);
	    INSERT INTO session_context_epoch (session_id, baseline, snapshot, baseline_seq) VALUES
	      ('$S', 'b', CAST(X'00' AS TEXT), 9007199254740993);
	    INSERT INTO event_sequence (aggregate_id, seq, owner_id) VALUES ('$S', 2, NULL);
	    INSERT INTO event (id, aggregate_id, seq, type, data) VALUES
	      ('evt1', '$S', 1, 'session.created', '{\"a\":\"😀😀\"}'), ('evt2', '$S', 2.5, 't', X'0102');
	    INSERT INTO plugin_notes (session_id, note) VALUES ('$S', 'n'), ('$S', NULL), ('$S', 1.25),
	      ('$S', X'00'), (NULL, 'orphan');"
}

# The stored size of every row of ID, from the database alone: per table the sum over its
# columns of length(CAST(col AS BLOB)), for the rows keyed by ID (a session table by id, the
# others by session_id and by aggregate_id), plus the parts of ID's messages that another
# session_id names.
ref_bytes() {
	local id=$1
	# every column of every table ("table<TAB>column"), then one query a key of a table, in
	# one run of sqlite3, summed
	q -separator $'\t' "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
	       WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\\' ORDER BY m.name, p.cid" |
		awk -F'\t' -v id="$(sqlq "$id")" '
		function ident(s) { gsub(/"/, "\"\"", s); return "\"" s "\"" }
		{
			if (!($1 in cols)) order[++n] = $1
			cols[$1] = ($1 in cols ? cols[$1] " + " : "") "ifnull(length(CAST(" ident($2) " AS BLOB)), 0)"
			pc = "ifnull(length(CAST(p." ident($2) " AS BLOB)), 0)"
			if ($1 == "part") pcols = (pcols == "" ? pc : pcols " + " pc)
			if ($2 == "session_id") sid[$1] = 1
			if ($2 == "aggregate_id") agg[$1] = 1
		}
		END {
			for (i = 1; i <= n; i++) {
				t = order[i]
				if (t == "session") { key[1] = "id"; k = 1 }
				else { k = 0; if (t in sid) key[++k] = "session_id"; if (t in agg) key[++k] = "aggregate_id" }
				for (j = 1; j <= k; j++)
					printf "SELECT ifnull(sum(%s), 0) FROM %s WHERE %s = %s;\n", cols[t], ident(t), key[j], id
			}
			printf "SELECT ifnull(sum(%s), 0) FROM part AS p JOIN message AS m ON m.id = p.message_id WHERE m.session_id = %s AND p.session_id IS NOT m.session_id;\n", pcols, id
		}' | q | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# ls's, show's and the dry run's figures of ID all equal ref_bytes, which is WANT (when given).
assert_sizes() {
	local id=$1 want ls_b show_b dry_b
	want=$(ref_bytes "$id")
	[[ -z ${2:-} || $want == "$2" ]]
	run -0 --separate-stderr agc ls --json
	ls_b=$(jq -r -s --arg id "$id" 'map(select(.id == $id))[0].bytes' <<<"$output")
	run -0 --separate-stderr agc --json show opencode "$id"
	show_b=$(jq -r -s '.[0].bytes' <<<"$output")
	run -0 --separate-stderr agc --json purge opencode "$id" --dry-run
	dry_b=$(jq -r -s '[.[0] | (.removed // .artifacts)[] | .bytes] | add' <<<"$output")
	echo "$id: want $want, ls $ls_b, show $show_b, dry run $dry_b"
	[[ $ls_b == "$want" && $show_b == "$want" && $dry_b == "$want" ]]
}

@test "Sizes (ls): text, blobs, NULL, integers, reals, multi-byte UTF-8 and an embedded NUL, over every table, as SQLite's length(CAST(x AS BLOB)) sums them" {
	oc_fixture --seed 3650 --opencode 3
	add_sessions
	# the values are what the test means them to be
	[[ $(q "SELECT typeof(cost) || typeof(share_url) || typeof(metadata) || typeof(summary_additions) FROM session WHERE id = '$S'") == realblobnullinteger ]]
	[[ $(q "SELECT length(CAST(summary_diffs AS BLOB)), length(CAST(title AS BLOB)) FROM session WHERE id = '$S'") == "6|15" ]]
	[[ $(q "SELECT length(CAST(cost AS BLOB)) FROM session WHERE id = '$S'") == 8 ]]  # 1.0e+100
	[[ $(q "SELECT length(CAST(cost AS BLOB)) FROM session WHERE id = '$T'") == 3 ]]  # 3.0
	# S has rows in every table keyed by a session
	[[ $(q "SELECT count(*) FROM event WHERE aggregate_id = '$S'") == 2 ]]
	[[ $(q "SELECT count(*) FROM plugin_notes WHERE session_id = '$S'") == 4 ]]
	assert_sizes "$S"
	assert_sizes "$T"
	# the part of S through T's message counts in T's figure too
	[[ $(ref_bytes "$T") -gt $(q "SELECT sum(length(CAST(data AS BLOB))) FROM message WHERE session_id = '$T'") ]]
	# and every session of the home: ls gives what show gives
	run -0 --separate-stderr agc ls --json
	local line id b
	while IFS=$'\t' read -r id b; do
		run -0 --separate-stderr agc --json show opencode "$id"
		[[ $(jq -r -s '.[0].bytes' <<<"$output") == "$b" ]] || { echo "$id: ls $b, show $output"; false; }
	done < <(jq -r '"\(.id)\t\(.bytes)"' <<<"$output")
}

@test "Sizes (ls): a database in UTF-16, and a key compared without case are sized as SQLite sizes them" {
	oc_fixture --seed 3651 --opencode 3
	add_sessions
	qw "CREATE TABLE notes_ci(session_id TEXT COLLATE NOCASE, v TEXT);
	    INSERT INTO notes_ci VALUES ('$S', 'ç'), ('$S', 7), ('${S,,}', 'the same id to NOCASE');"
	assert_sizes "$S"
	assert_sizes "$T"
	# the same rows in a database in UTF-16: every text counts two bytes a unit
	local old=$BATS_TEST_TMPDIR/utf8.db
	sqlite3 -batch "$DB" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
	mv "$DB" "$old"
	rm -f "$DB-wal" "$DB-shm" "$old-wal" "$old-shm"
	{ echo "PRAGMA encoding = 'UTF-16le';"; sqlite3 -batch "$old" .dump; } | sqlite3 -batch "$DB"
	[[ $(q "PRAGMA encoding") == UTF-16le ]]
	[[ $(q "SELECT length(CAST(title AS BLOB)) FROM session WHERE id = '$S'") == 20 ]]
	assert_sizes "$S"
	assert_sizes "$T"
}

@test "Sizes (ls): each session's files (plan, legacy storage) count with its rows, as show counts them" {
	oc_fixture --seed 3652 --opencode 6 --opencode-legacy 4
	# a plan file for a session of the database, where discovery looks for it
	local P0 created slug
	P0=$(m_pick '.parent == null and (.children | length) == 0')
	IFS='|' read -r created slug < <(q "SELECT time_created, slug FROM session WHERE id = $(sqlq "$P0")")
	mkdir -p "$DATA/plans"
	printf 'plan of %s\n' "$P0" >"$DATA/plans/$created-$slug.md"
	run -0 --separate-stderr agc ls --json
	local ls_out=$output id b files n=0 with_files=0
	while IFS=$'\t' read -r id b; do
		[[ $(m_get "$id" '.children | length') == 0 ]] || continue
		files=0
		[[ $id != "$P0" ]] || files=$(stat -c %s "$DATA/plans/$created-$slug.md")
		while IFS= read -r f; do
			[[ $f != "$DATA/plans/$created-$slug.md" ]] || continue
			files=$((files + $(find "$f" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')))
		done < <(m_get "$id" '.artifacts[]')
		echo "$id: ls $b, rows $(ref_bytes "$id"), files $files"
		[[ $b == $(($(ref_bytes "$id") + files)) ]]
		run -0 --separate-stderr agc --json show opencode "$id"
		[[ $(jq -r -s '.[0].bytes' <<<"$output") == "$b" ]]
		n=$((n + 1))
		[[ $files == 0 ]] || with_files=$((with_files + 1))
	done < <(jq -r '"\(.id)\t\(.bytes)"' <<<"$ls_out")
	[[ $n -ge 4 && $with_files -ge 3 ]]
}
