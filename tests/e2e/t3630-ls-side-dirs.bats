#!/usr/bin/env bats
# ls learns a session dir's title file and sub-agents from the walk that measures the dir, and
# whether a session has its dir or transcript from the project dir's listing, instead of
# probing for each (issue 8). What it shows must stay what discovery finds file by file: each
# row's figures and title equal show's, its children show's, on homes where side entries are
# missing, links, FIFOs, files in place of dirs, or unreadable.

load lib

teardown() {
	nobody_teardown
	agc_teardown
}

# Every root row of `ls --json --children` (run with "$@" before it, e.g. agc_nobody) against
# `show` of its id: project, title, times, bytes, disk, and the set of its children.
ls_equals_show() {
	local run_as=$1 ls_out id want got
	ls_out=$("$run_as" --json ls --children --agent claude)
	[[ -n $ls_out ]]
	for id in $(jq -r 'select(.parent == null) | .id' <<<"$ls_out"); do
		want=$("$run_as" --json show claude "$id" |
			jq -c '{project, title, created, updated, bytes, disk, children: (.children | sort)}')
		got=$(jq -c --arg id "$id" -s '
			(map(select(.id == $id))[0] | {project, title, created, updated, bytes, disk}) +
			{children: (map(select(.parent == $id) | .id) | sort)}' <<<"$ls_out")
		if [[ $want != "$got" ]]; then
			echo "session $id"
			echo "show: $want"
			echo "ls:   $got"
			return 1
		fi
	done
}

@test "Side dirs: a title only in custom-title.json is shown; a link or FIFO of that name is not read" {
	local cwd a b c k
	cwd=$(mk_project app)
	a=$(new_uuid) b=$(new_uuid) c=$(new_uuid)
	mk_transcript "$a" "$cwd" "typed title a"
	mk_transcript "$b" "$cwd" "typed title b"
	mk_transcript "$c" "$cwd" "typed title c"
	k=$(pkey "$cwd")
	mkdir -p "$C/projects/$k/$a/tool-results" "$C/projects/$k/$b" "$C/projects/$k/$c"
	echo '{"customTitle":"named a"}' >"$C/projects/$k/$a/custom-title.json"
	echo '{"customTitle":"named b"}' >"$OUT/title.json"
	ln -s "$OUT/title.json" "$C/projects/$k/$b/custom-title.json"
	mkfifo "$C/projects/$k/$c/custom-title.json"
	run -0 --separate-stderr agc --json ls
	json_ok --arg a "$a" --arg b "$b" --arg c "$c" '
		(map(select(.id == $a))[0].title == "named a") and
		(map(select(.id == $b))[0].title == "typed title b") and
		(map(select(.id == $c))[0].title == "typed title c")'
	ls_equals_show agc
}

@test "Side dirs: sub-agents nested, hidden and behind a linked subagents dir are those show names" {
	local cwd a b k x n
	cwd=$(mk_project app)
	a=$(new_uuid) b=$(new_uuid)
	mk_full_session "$a" "$cwd"
	mk_transcript "$b" "$cwd" "linked sub-agents"
	k=$(pkey "$cwd")
	# a hidden dir is never entered, a hidden file never a sub-agent
	mkdir -p "$C/projects/$k/$a/subagents/.hid"
	echo '{}' >"$C/projects/$k/$a/subagents/.hid/agent-a1111111111111111.jsonl"
	echo '{}' >"$C/projects/$k/$a/subagents/.agent-a2222222222222222.jsonl"
	# nested eight dirs deep is listed, nine is not
	x=$C/projects/$k/$a/subagents
	for n in 1 2 3 4 5 6 7 8 9; do
		x=$x/d$n
		mkdir -p "$x"
		printf '{}\n' >"$x/agent-a$(printf '%016x' "$n").jsonl"
	done
	# a link named like a sub-agent is none; a FIFO neither
	ln -s "$OUT/nowhere" "$C/projects/$k/$a/subagents/agent-a3333333333333333.jsonl"
	mkfifo "$C/projects/$k/$a/subagents/agent-a4444444444444444.jsonl"
	# b's subagents dir is a link (discovery reads through it: so does ls)
	mkdir -p "$OUT/subs" "$C/projects/$k/$b"
	echo '{}' >"$OUT/subs/agent-a5555555555555555.jsonl"
	ln -s "$OUT/subs" "$C/projects/$k/$b/subagents"
	run -0 --separate-stderr agc --json ls --children
	json_ok --arg a "$a" --arg b "$b" '
		(map(select(.parent == $a) | .id) | sort) as $ka |
		($ka | index("a0000000000000008")) != null and ($ka | index("a0000000000000009")) == null and
		($ka | index("a1111111111111111")) == null and ($ka | index("a2222222222222222")) == null and
		($ka | index("a3333333333333333")) == null and ($ka | index("a4444444444444444")) == null and
		(map(select(.parent == $b) | .id) == ["a5555555555555555"])'
	ls_equals_show agc
}

@test "Side dirs: files in place of dirs, links and FIFOs among side entries, side entries of an id without a transcript" {
	local cwd a b c ghost k
	cwd=$(mk_project app)
	a=$(new_uuid) b=$(new_uuid) c=$(new_uuid) ghost=$(new_uuid)
	mk_full_session "$a" "$cwd"
	mk_transcript "$b" "$cwd" "odd side entries"
	mk_transcript "$c" "$cwd" "session dir is a fifo"
	k=$(pkey "$cwd")
	# b: its session dir is a file, its side entries a file, a link and a FIFO
	echo 'not a dir' >"$C/projects/$k/$b"
	echo 'a file' >"$C/file-history/$b"
	mkdir -p "$OUT/env"
	head -c 4096 /dev/zero >"$OUT/env/big"
	ln -s "$OUT/env" "$C/session-env/$b"
	mkfifo "$C/tasks/$b"
	echo '{}' >"$C/projects/$k/$b.ccr-tip.json"
	# c: its session dir is a FIFO; a side file next to it
	mkfifo "$C/projects/$k/$c"
	echo '{}' >"$C/projects/$k/$c.precompact.json"
	# ghost: side entries and a session dir, no transcript anywhere: no row, nobody's bytes
	mkdir -p "$C/file-history/$ghost" "$C/projects/$k/$ghost/subagents"
	head -c 100000 /dev/zero >"$C/file-history/$ghost/x@v1"
	echo '{}' >"$C/projects/$k/$ghost/subagents/agent-a6666666666666666.jsonl"
	echo '{}' >"$C/projects/$k/$ghost.ccr-tip.json"
	run -0 --separate-stderr agc --json ls --children
	json_ok --arg g "$ghost" 'all(.id != $g and .parent != $g) and
		all(.id != "a6666666666666666") and (map(select(.parent == null)) | length) == 3'
	ls_equals_show agc
}

@test "Side dirs: unreadable dirs inside a session's dir give the figures, title and children show gives" {
	local cwd a b k
	nobody_setup
	cwd=$(mk_project app)
	a=$(new_uuid) b=$(new_uuid)
	mk_full_session "$a" "$cwd"
	mk_full_session "$b" "$cwd"
	k=$(pkey "$cwd")
	nobody_own
	# a: a dir of its session dir cannot be read, its title file is still there
	chmod 000 "$C/projects/$k/$a/tool-results"
	# b: a nested sub-agents dir cannot be read
	chmod 000 "$C/projects/$k/$b/subagents/$(ls "$C/projects/$k/$b/subagents" | grep -v '\.' | head -1)"
	run -0 --separate-stderr agc_nobody --json ls --children
	json_ok --arg a "$a" 'map(select(.id == $a))[0].title | startswith("full session")'
	ls_equals_show agc_nobody
}

@test "Side dirs: a mount inside subagents and a title file that is a mount point: ls names and reads what show does" {
	local cwd a b k d
	cwd=$(mk_project app)
	a=$(new_uuid) b=$(new_uuid)
	mk_full_session "$a" "$cwd"
	mk_transcript "$b" "$cwd" "typed title b"
	k=$(pkey "$cwd")
	mkdir -p "$C/projects/$k/$a/subagents/m" "$C/projects/$k/$b" "$OUT/subs"
	echo '{}' >"$OUT/subs/agent-a7777777777777777.jsonl"
	echo '{"customTitle":"mounted title"}' >"$OUT/title.json"
	: >"$C/projects/$k/$b/custom-title.json"
	d=$BATS_TEST_TMPDIR/res
	mkdir -p "$d"
	run -0 unshare -m sh -c '
		mount --make-rprivate / &&
		mount --bind "$1" "$2" && mount --bind "$3" "$4" &&
		"$5" --json ls --children >"$6/ls" && "$5" --json show claude "$7" >"$6/a" &&
		"$5" --json show claude "$8" >"$6/b"' sh \
		"$OUT/subs" "$C/projects/$k/$a/subagents/m" "$OUT/title.json" "$C/projects/$k/$b/custom-title.json" \
		"$AGENTGC" "$d" "$a" "$b"
	# discovery lists a sub-agent inside the mount (it never removes through it): so does ls
	jq -e '.children | index("a7777777777777777") != null' "$d/a"
	jq -e -s --arg a "$a" 'map(select(.parent == $a) | .id) | index("a7777777777777777") != null' "$d/ls"
	jq -e -s --slurpfile s "$d/b" --arg b "$b" 'map(select(.id == $b))[0].title == $s[0].title' "$d/ls"
	jq -e '.title == "mounted title"' "$d/b"
}
