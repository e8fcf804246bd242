#!/usr/bin/env bats
# SPEC "Commands", ls: --project DIR selects the sessions whose project is DIR or a directory
# below it (path component boundaries; a trailing slash does not matter; DIR need not exist any
# more), --project-gone those whose project dir no longer exists, --grep TEXT those whose
# title, first prompt or project holds TEXT, ASCII letters in any case. Several combine.

load lib

setup() {
	agc_setup
	APP=$(mk_project app)
	mkdir -p "$APP/src/deep"
	SUB=$APP/src/deep
	SIB=$(mk_project apple)   # shares "app" as a string prefix, not as a dir
	GONE=$(mk_project gone)
	mkdir -p "$GONE/inner"
	A=$(new_uuid) B=$(new_uuid) D=$(new_uuid) G=$(new_uuid) H=$(new_uuid)
	mk_transcript "$A" "$APP" "fix the Parser" $((NOW - 60))
	mk_transcript "$B" "$SUB" "deep work" $((NOW - 120))
	mk_transcript "$D" "$SIB" "apple pie" $((NOW - 180))
	mk_transcript "$G" "$GONE" "gone project" $((NOW - 240))
	mk_transcript "$H" "$GONE/inner" "gone too" $((NOW - 300))
	rm -rf "$GONE"
}

ids() { jq -r .id <<<"$output" | LC_ALL=C sort | tr '\n' ' '; }
want() { printf '%s\n' "$@" | LC_ALL=C sort | tr '\n' ' '; }

@test "ls --project DIR: DIR and every dir below it, never a sibling that shares its name's start" {
	run -0 --separate-stderr agc --json ls --project "$APP"
	[ "$(ids)" = "$(want "$A" "$B")" ]
	run -0 --separate-stderr agc --json ls --project "$APP/src"
	[ "$(ids)" = "$(want "$B")" ]
	# /work/app is not a prefix dir of /work/apple
	run -0 --separate-stderr agc --json ls --project "$SIB"
	[ "$(ids)" = "$(want "$D")" ]
	run -0 --separate-stderr agc --json ls --project "$WORK/ap"
	[ -z "$output" ]
}

@test "ls --project: a trailing slash, '.', '..' and '//' do not matter; a relative DIR is from the current dir" {
	local d
	for d in "$APP/" "$APP//" "$APP/./" "$APP/src/.." "${APP%/*}//app/src/../"; do
		run -0 --separate-stderr agc --json ls --project "$d"
		[ "$(ids)" = "$(want "$A" "$B")" ] || { echo "--project $d: $output"; return 1; }
	done
	cd "$WORK"
	run -0 --separate-stderr agc --json ls --project app
	[ "$(ids)" = "$(want "$A" "$B")" ]
	cd "$APP/src"
	run -0 --separate-stderr agc --json ls --project ../src/deep/
	[ "$(ids)" = "$(want "$B")" ]
	run -0 --separate-stderr agc --json ls --project=.
	[ "$(ids)" = "$(want "$B")" ]
}

@test "ls --project: a DIR that no longer exists still selects its sessions, lexically" {
	[ ! -e "$GONE" ]
	run -0 --separate-stderr agc --json ls --project "$GONE"
	[ "$(ids)" = "$(want "$G" "$H")" ]
	run -0 --separate-stderr agc --json ls --project "$GONE/inner/../inner/"
	[ "$(ids)" = "$(want "$H")" ]
	run -0 --separate-stderr agc --json ls --project "$GONE/in"
	[ -z "$output" ]
}

@test "ls --project: a project reached through a symlink is selected by the link's path and by its real path" {
	local real=$WORK/real link=$WORK/link L R
	mkdir -p "$real/proj"
	ln -s "$real" "$link"
	L=$(new_uuid) R=$(new_uuid)
	# one session recorded through the link, one under the real path
	mk_transcript "$L" "$link/proj" "via the link" $((NOW - 400))
	mk_transcript "$R" "$real/proj" "via the real path" $((NOW - 500))
	run -0 --separate-stderr agc --json ls --project "$real"
	[ "$(ids)" = "$(want "$L" "$R")" ]
	run -0 --separate-stderr agc --json ls --project "$link/proj/"
	[ "$(ids)" = "$(want "$L" "$R")" ]
	# the link's own name is no prefix of anything else
	run -0 --separate-stderr agc --json ls --project "$WORK/lin"
	[ -z "$output" ]
}

@test "ls --project-gone: sessions whose project dir no longer exists; existing and unknown projects are not gone" {
	local U=$(new_uuid) k
	# a transcript that records no cwd: its project is unknown, not gone
	k=$C/projects/$(pkey "$WORK/unknown")
	mkdir -p "$k"
	printf '{"type":"user","message":{"role":"user","content":"no cwd here"},"sessionId":"%s","timestamp":"%s"}\n' \
		"$U" "$(iso $((NOW - 50)))" >"$k/$U.jsonl"
	run -0 --separate-stderr agc --json ls --project-gone
	[ "$(ids)" = "$(want "$G" "$H")" ]
	json_ok 'all(.project | startswith("'"$GONE"'"))'
	# combined with --project: both must hold
	run -0 --separate-stderr agc --json ls --project-gone --project "$GONE/inner"
	[ "$(ids)" = "$(want "$H")" ]
	run -0 --separate-stderr agc --json ls --project-gone --project "$APP"
	[ -z "$output" ]
}

@test "ls --project-gone: a project that cannot be checked (EACCES) is not gone" {
	nobody_setup
	local P=$NB/work/locked/proj S1=$(new_uuid) S2=$(new_uuid)
	mkdir -p "$P"
	mk_transcript "$S1" "$P" "behind a closed dir"
	mk_transcript "$S2" "$NB/work/vanished" "gone for good"
	nobody_own
	chmod 000 "$NB/work/locked"
	run -0 --separate-stderr agc_nobody --json ls --project-gone
	chmod 755 "$NB/work/locked"
	[ "$(ids)" = "$(want "$S2")" ]
	nobody_teardown
}

@test "ls --grep: title, first prompt and project, ASCII letters in any case" {
	run -0 --separate-stderr agc --json ls --grep parser
	[ "$(ids)" = "$(want "$A")" ]
	run -0 --separate-stderr agc --json ls --grep PARSER
	[ "$(ids)" = "$(want "$A")" ]
	# the project path
	run -0 --separate-stderr agc --json ls --grep /SRC/Deep
	[ "$(ids)" = "$(want "$B")" ]
	run -0 --separate-stderr agc --json ls --grep "no such text anywhere"
	[ -z "$output" ]
}

@test "ls --grep: the first prompt counts when the user gave the session a name" {
	local N=$(new_uuid) f
	mk_transcript "$N" "$APP" "refactor the lexer" $((NOW - 30))
	f=$C/projects/$(pkey "$APP")/$N.jsonl
	# a name given at the start (Claude writes custom-title entries; the head is read)
	{ printf '{"type":"custom-title","customTitle":"my named session","sessionId":"%s"}\n' "$N"; cat "$f"; } >"$f.new"
	mv "$f.new" "$f"
	touch -d "@$((NOW - 30))" "$f"
	run -0 --separate-stderr agc --json ls --grep "named SESSION"
	[ "$(ids)" = "$(want "$N")" ]
	json_ok '.[0].title == "my named session"'
	run -0 --separate-stderr agc --json ls --grep LEXER
	[ "$(ids)" = "$(want "$N")" ]
}

@test "ls: --grep, --project and --project-gone combine: every one must hold" {
	run -0 --separate-stderr agc --json ls --grep deep --project "$APP"
	[ "$(ids)" = "$(want "$B")" ]
	run -0 --separate-stderr agc --json ls --grep parser --project "$APP/src"
	[ -z "$output" ]
	run -0 --separate-stderr agc --json ls --grep gone --project-gone
	[ "$(ids)" = "$(want "$G" "$H")" ]
}

@test "ls --project '' is a usage error; the options are in ls --help within 80 columns" {
	run -2 --separate-stderr agc ls --project ''
	[[ $stderr == *"--project needs a directory"* ]]
	run -0 agc ls --help
	[[ $output == *"--project DIR"* && $output == *"--project-gone"* && $output == *"--grep TEXT"* ]]
	while IFS= read -r line; do
		[ "${#line}" -le 80 ] || { echo "too long: $line"; return 1; }
	done <<<"$output"
}
