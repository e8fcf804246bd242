#!/usr/bin/env bats
# Contract test: agentgc against the real OpenCode CLI (npm opencode-ai, pinned in install.sh).
#
#   tests/contract/opencode/install.sh &&
#   AGENTGC=build/agentgc OPENCODE=$(tests/contract/opencode/install.sh) bats tests/contract/opencode
#
# OpenCode writes the sessions (`opencode import`, formats/opencode.md §3), agentgc lists and
# purges them, and OpenCode then says whether they are gone (`session list`, `db`, `export`)
# and whether its database is still sound. Where OpenCode and formats/opencode.md disagree,
# OpenCode wins; the tests pin what it does (see "Observed" below).
#
# Offline: every opencode process runs in a new network namespace that has only loopback
# (`unshare -rn`, or `-n` as root where user namespaces are refused), with its update
# check, model list fetch, sharing, LSP downloads and default plugins switched off, and
# HOME, XDG_* and TMPDIR inside the test's directory. Where no namespace can be made the
# switches alone apply (a `connect` trace of every command used here showed none).
#
# Observed with 1.18.33, differing from or adding to formats/opencode.md:
# - `opencode db QUERY` runs the query in-process; `--format json` prints an array of row
#   objects ([] when empty), the default tsv a header line and no final newline (nothing
#   for an empty result). `opencode db` without a query runs the system `sqlite3` on the
#   database instead, so it is not used here.
# - `-wal` and `-shm` stay after every clean exit (import, db, session list, delete), so
#   imported text is in opencode.db-wal until a later checkpoint.
# - `import` sets `path` to the cwd relative to the worktree ("tmp/..." for project
#   `global`, "" at a git worktree's root); importing an existing id again sets its
#   `time_updated` to now.
# - Status lines go to stderr ("Exporting session: S", "Session S deleted", errors), with
#   ANSI colour even when NO_COLOR is set and stderr is not a terminal; "Imported
#   session: S" goes to stdout.
# - `session list` in a non-git directory shows the sessions of every directory of
#   project `global`, roots only.

bats_require_minimum_version 1.5.0

load ../lib

# Sessions of every test: a parent P with a child C and a grandchild G (sub-agent
# sessions, parentID), and an unrelated root session U that must keep everything.
P=ses_0a0000000001ParentAAAAAAAA
C=ses_0a0000000002ChildBBBBBBBBB
G=ses_0a0000000003GrandchildCCCC
U=ses_0a0000000004UnrelatedDDDDD

setup_file() {
	: "${AGENTGC:?set AGENTGC to the agentgc binary}"
	: "${OPENCODE:?set OPENCODE to the opencode binary printed by tests/contract/opencode/install.sh}"
	[[ -x $AGENTGC ]] || { echo "AGENTGC=$AGENTGC is not executable" >&2; return 1; }
	[[ -x $OPENCODE ]] || { echo "OPENCODE=$OPENCODE is not executable" >&2; return 1; }
	export OC_BIN=$OPENCODE
	# A network namespace of its own, with only loopback: nothing can leave the machine.
	local netns
	if netns=$(netns_flags) && [[ -n $netns ]]; then
		export OC_NETNS="unshare $netns"
	else
		export OC_NETNS=""
		echo "# no network namespace can be made here: opencode runs with its network features switched off" >&3
	fi
	# Even --version makes opencode's data, config, state, cache and temp dirs: in a home of
	# this file's own, never the caller's home or the shared /tmp.
	local vh=$BATS_FILE_TMPDIR/version-home
	mkdir -p "$vh/home" "$vh/tmp"
	# shellcheck disable=SC2086 # OC_NETNS is a command prefix: empty, or words to split
	OC_VERSION=$(env -u OPENCODE -u OPENCODE_DB -u XDG_RUNTIME_DIR HOME="$vh/home" \
		XDG_DATA_HOME="$vh/home/.local/share" XDG_CONFIG_HOME="$vh/home/.config" \
		XDG_STATE_HOME="$vh/home/.local/state" XDG_CACHE_HOME="$vh/home/.cache" \
		TMPDIR="$vh/tmp" $OC_NETNS "$OC_BIN" --version </dev/null)
	export OC_VERSION
	echo "# opencode $OC_VERSION ($OC_BIN)${OC_NETNS:+, under $OC_NETNS}" >&3
}

setup() {
	local v
	T=$BATS_TEST_TMPDIR
	export HOME=$T/home
	export XDG_DATA_HOME=$T/xdg/data XDG_CONFIG_HOME=$T/xdg/config
	export XDG_STATE_HOME=$T/xdg/state XDG_CACHE_HOME=$T/xdg/cache
	export TMPDIR=$T/tmp
	# OpenCode's own variables could move its database (OPENCODE_DB), its config or its
	# home; only the switches below are wanted.
	for v in $(compgen -e); do
		if [[ $v == OPENCODE_* ]]; then unset "$v"; fi
	done
	# AGENT=1 is what a surrounding OpenCode sets on its child processes
	unset XDG_RUNTIME_DIR AGENT
	export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_SHARE=1
	export OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_PURE=1
	export OPENCODE_DISABLE_PROJECT_CONFIG=1 OPENCODE_DISABLE_EXTERNAL_SKILLS=1 OPENCODE_DISABLE_CLAUDE_CODE=1
	export NO_COLOR=1 LC_ALL=C
	export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
	mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$TMPDIR" "$T/work/plain"
	DATA=$XDG_DATA_HOME/opencode
	STATE=$XDG_STATE_HOME/opencode
	DB=$DATA/opencode.db
	# a directory outside any git repository: OpenCode's project "global", worktree "/"
	PLAIN=$(cd "$T/work/plain" && pwd -P)
	REPO=
	declare -gA PARENT TITLE SLUG CREATED WHERE
	PARENT=([$P]="" [$C]=$P [$G]=$C [$U]="")
	TITLE=([$P]="contract parent" [$C]="contract child" [$G]="contract grandchild" [$U]="contract unrelated")
	SLUG=([$P]=calm-river [$C]=brave-cabin [$G]=quiet-meadow [$U]=lucky-orchid)
	CREATED=([$P]=1795984693022 [$C]=1795984694022 [$G]=1795984695022 [$U]=1795984696022)
	for v in "$P" "$C" "$G" "$U"; do
		[[ $v =~ ^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$ ]] || { echo "bad fixture id $v" >&2; return 1; }
	done
}

# ---- running the two programs -------------------------------------------------------------

# opencode, offline, with its cwd in $1 (the cwd decides the project of a session).
oc_in() {
	local dir=$1
	shift
	# shellcheck disable=SC2086 # OC_NETNS is a command prefix: empty, or words to split
	(cd "$dir" && env -u OPENCODE $OC_NETNS "$OC_BIN" "$@" </dev/null)
}

# Fail unless the jq filter (last argument; jq options may come before it) is true of the
# last output read as one JSON value, or, with -s first, as an array of its JSON lines (this
# file's own, in place of ../lib's, which always slurps).
json_ok() {
	local filter=${!#}
	local args=("${@:1:$#-1}")
	if ! jq -e "${args[@]}" "$filter" >/dev/null <<<"$output"; then
		printf 'jq filter failed: %s %s\non:\n%s\n' "${args[*]}" "$filter" "$output" >&2
		return 1
	fi
}

# ---- sessions made by opencode ------------------------------------------------------------

msg_id() { echo "msg_${1#ses_}"; }
prt_id() { echo "prt_${1#ses_}"; }
# text found only in the session's one part
marker() { echo "marker-text-of-$1"; }

# The export/import document of session $1 (formats/opencode.md §3). Its projectID and
# directory name another place on purpose: import replaces them with the cwd's.
export_doc() {
	jq -n --arg id "$1" --arg parent "${PARENT[$1]}" --arg title "${TITLE[$1]}" --arg slug "${SLUG[$1]}" \
		--argjson t "${CREATED[$1]}" --arg msg "$(msg_id "$1")" --arg prt "$(prt_id "$1")" \
		--arg text "$(marker "$1")" '
		{info: ({id: $id, slug: $slug, projectID: "global", directory: "/elsewhere/not-the-cwd",
		         title: $title, version: "1.18.33", time: {created: $t, updated: $t}}
		        + (if $parent == "" then {} else {parentID: $parent} end)),
		 messages: [{info: {id: $msg, sessionID: $id, role: "user", time: {created: $t}, agent: "build",
		                    model: {providerID: "p", modelID: "m"}},
		             parts: [{id: $prt, sessionID: $id, messageID: $msg, type: "text", text: $text}]}]}'
}

# Imports P, C, G and U with opencode run in directory $1; each must say so and exit 0.
import_all() {
	local dir=$1 s f
	for s in "$P" "$C" "$G" "$U"; do
		f=$T/export-$s.json
		export_doc "$s" >"$f"
		run -0 oc_in "$dir" import "$f"
		[[ $output == *"Imported session: $s"* ]] || { echo "import of $s said: $output" >&2; return 1; }
		WHERE[$s]=$dir
	done
}

# A git repository with one root commit at a fixed time: OpenCode's project id is that
# commit and its plan files go to <worktree>/.opencode/plans.
mk_repo() {
	mkdir -p "$T/work/repo"
	REPO=$(cd "$T/work/repo" && pwd -P)
	git -C "$REPO" init -q
	GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_AUTHOR_DATE=@1795984693 \
		GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid GIT_COMMITTER_DATE=@1795984693 \
		git -C "$REPO" commit -q --allow-empty -m root
	REPO_PROJECT=$(git -C "$REPO" rev-list --max-parents=0 HEAD)
}

project_of() {
	if [[ ${WHERE[$1]} == "$REPO" && -n $REPO ]]; then echo "$REPO_PROJECT"; else echo global; fi
}

plan_file() {
	local dir
	if [[ $(project_of "$1") == global ]]; then dir=$DATA/plans; else dir=${WHERE[$1]}/.opencode/plans; fi
	echo "$dir/${CREATED[$1]}-${SLUG[$1]}.md"
}

# The files of session $1 under <data>/storage, one per line: its session_diff and its legacy
# JSON store files (left by an upgrade from 1.1.x, which shared the ids).
store_files() {
	local s=$1 st=$DATA/storage m
	m=$(msg_id "$s")
	printf '%s\n' "$st/session_diff/$s.json" "$st/session/$(project_of "$s")/$s.json" \
		"$st/message/$s/$m.json" "$st/part/$m/$(prt_id "$s").json" \
		"$st/todo/$s.json" "$st/session_share/$s.json"
}

# Every file of session $1 outside the database: its store files and its plan file.
leftovers() {
	store_files "$1"
	plan_file "$1"
}

# Creates the leftovers of session $1, and the shared files around them.
mk_leftovers() {
	local s=$1 st=$DATA/storage proj m t
	proj=$(project_of "$s")
	m=$(msg_id "$s")
	t=${CREATED[$s]}
	mkdir -p "$st/session_diff" "$st/session/$proj" "$st/message/$s" "$st/part/$m" "$st/todo" \
		"$st/session_share" "$st/project" "$(dirname "$(plan_file "$s")")" "$STATE"
	jq -n '[{file: "README.md", before: "a\n", after: "b\n", additions: 1, deletions: 1, status: "modified"}]' \
		>"$st/session_diff/$s.json"
	jq -n --arg id "$s" --arg parent "${PARENT[$s]}" --arg proj "$proj" --arg dir "${WHERE[$s]}" \
		--arg title "${TITLE[$s]}" --arg slug "${SLUG[$s]}" --argjson t "$t" '
		{id: $id, slug: $slug, version: "1.1.65", projectID: $proj, directory: $dir, title: $title,
		 time: {created: $t, updated: $t}} + (if $parent == "" then {} else {parentID: $parent} end)' \
		>"$st/session/$proj/$s.json"
	jq -n --arg id "$m" --arg s "$s" --argjson t "$t" \
		'{id: $id, sessionID: $s, role: "user", time: {created: $t}, agent: "build", model: {providerID: "p", modelID: "m"}}' \
		>"$st/message/$s/$m.json"
	jq -n --arg id "$(prt_id "$s")" --arg s "$s" --arg m "$m" --arg text "$(marker "$s")" \
		'{id: $id, sessionID: $s, messageID: $m, type: "text", text: $text}' >"$st/part/$m/$(prt_id "$s").json"
	jq -n '[{id: "1", content: "write the plan", status: "pending", priority: "high"}]' >"$st/todo/$s.json"
	jq -n --arg s "$s" '{id: ("shr_" + $s), secret: "secret", url: ("https://opncd.ai/s/" + $s)}' \
		>"$st/session_share/$s.json"
	printf '# plan of %s\n' "$s" >"$(plan_file "$s")"
	# shared, never per session
	echo 2 >"$st/migration"
	if [[ $proj == global ]]; then
		jq -n --argjson t "$t" '{id: "global", worktree: "/", time: {created: $t}, sandboxes: []}' >"$st/project/global.json"
	else
		jq -n --arg id "$proj" --arg w "${WHERE[$s]}" --argjson t "$t" \
			'{id: $id, worktree: $w, vcs: "git", time: {created: $t}, sandboxes: []}' >"$st/project/$proj.json"
	fi
}

# The shared files every mk_leftovers call leaves: pins of the TUI naming P and U.
mk_pins() {
	mkdir -p "$STATE"
	jq -n --arg p "$P" --arg u "$U" '{pinned: [$p, $u]}' >"$STATE/session.json"
}

# Fail unless every leftover of each session named exists (have), or none of the files
# listed by leftovers, store_files or plan_file does.
have_leftovers() {
	local s f rc=0
	for s in "$@"; do
		while read -r f; do
			[[ -e $f ]] || { echo "missing: $f" >&2; rc=1; }
		done < <(leftovers "$s")
	done
	return $rc
}
no_leftovers() {
	_none_of leftovers "$@"
}
no_store_files() {
	_none_of store_files "$@"
}
no_plan_files() {
	_none_of plan_file "$@"
}
_none_of() {
	local list=$1 s f rc=0
	shift
	for s in "$@"; do
		while read -r f; do
			[[ ! -e $f ]] || { echo "still there: $f" >&2; rc=1; }
		done < <("$list" "$s")
	done
	return $rc
}

# One `opencode db` query: rows of sessions P, C, G (together) and of U in session,
# message and part, and the database's integrity_check.
db_counts() {
	local ptree="'$P','$C','$G'"
	run -0 --separate-stderr oc_in "$T" db --format json "select
		(select count(*) from session where id in ($ptree)) tree_sessions,
		(select count(*) from message where session_id in ($ptree)) tree_messages,
		(select count(*) from part where session_id in ($ptree)) tree_parts,
		(select count(*) from session where id = '$U') u_sessions,
		(select count(*) from message where session_id = '$U') u_messages,
		(select count(*) from part where session_id = '$U') u_parts,
		(select group_concat(integrity_check) from pragma_integrity_check()) integrity"
}

# Files of the database holding the string $1 (grep -c over opencode.db and its -wal).
db_files_with() {
	local f
	for f in "$DB" "$DB-wal"; do
		[[ -f $f ]] && grep -q -a -F -- "$1" "$f" && echo "${f##*/}"
	done
	return 0
}

# ---- opencode alone -----------------------------------------------------------------------

@test "opencode: import writes parent, child and grandchild into <data>/opencode.db (formats §1, §3)" {
	run -0 oc_in "$PLAIN" db path
	[ "$output" = "$DB" ]
	run -0 oc_in "$PLAIN" debug paths
	[[ $output == *"data       $DATA"* ]]
	[[ $output == *"state      $STATE"* ]]

	import_all "$PLAIN"
	[ -f "$DB" ]
	# roots only, this project's (global), directory replaced by the cwd
	run -0 --separate-stderr oc_in "$PLAIN" session list --format json
	json_ok --arg p "$P" --arg u "$U" --arg d "$PLAIN" '
		(map(.id) | sort) == ([$p, $u] | sort) and all(.projectId == "global" and .directory == $d)
		and (map(select(.id == $p))[0] | .title == "contract parent" and .created == 1795984693022)'
	# the rows: parent links kept, directory and project replaced, no events written
	run -0 --separate-stderr oc_in "$PLAIN" db --format json \
		"select id, parent_id, project_id, directory, title, slug, time_created,
		        (select count(*) from message m where m.session_id = s.id) messages,
		        (select count(*) from part p where p.session_id = s.id) parts,
		        (select count(*) from event) events
		 from session s order by id"
	json_ok --arg p "$P" --arg c "$C" --arg g "$G" --arg u "$U" --arg d "$PLAIN" '
		length == 4 and map(.id) == [$p, $c, $g, $u]
		and .[0].parent_id == null and .[1].parent_id == $p and .[2].parent_id == $c and .[3].parent_id == null
		and all(.project_id == "global" and .directory == $d and .messages == 1 and .parts == 1 and .events == 0)
		and .[1].title == "contract child" and .[1].slug == "brave-cabin" and .[1].time_created == 1795984694022'
	# export gives the document back; the child is exported by id although not listed
	run -0 --separate-stderr oc_in "$PLAIN" export "$C"
	json_ok --arg c "$C" --arg p "$P" --arg m "$(marker "$C")" '
		.info.id == $c and .info.parentID == $p and .messages[0].parts[0].text == $m'
	[[ $stderr == *"Exporting session: $C"* ]]
	run -1 --separate-stderr oc_in "$PLAIN" export ses_0a0000000009NotThereEEEEEE
	[[ $stderr == *"Session not found: ses_0a0000000009NotThereEEEEEE"* ]]
}

# ---- agentgc against what opencode wrote ------------------------------------------------

@test "contract: agentgc ls --children lists the imported parent, child and grandchild with parent, title and directory" {
	import_all "$PLAIN"
	run -0 --separate-stderr agc --json ls --agent opencode --children
	json_ok -s --arg p "$P" --arg c "$C" --arg g "$G" --arg u "$U" --arg d "$PLAIN" '
		(map(.id) | sort) == ([$p, $c, $g, $u] | sort) and all(.agent == "opencode" and .project == $d)
		and any(.id == $p and .parent == null and .title == "contract parent")
		and any(.id == $c and .parent == $p and .title == "contract child")
		and any(.id == $g and .parent == $c and .title == "contract grandchild")
		and any(.id == $u and .parent == null and .title == "contract unrelated")'
	run -0 --separate-stderr agc --json ls --agent opencode
	json_ok -s --arg p "$P" --arg u "$U" '(map(.id) | sort) == ([$p, $u] | sort) and all(.parent == null)'
}

@test "contract: agentgc purge opencode <parent>: opencode sees neither it nor its descendants and still opens the database" {
	import_all "$PLAIN"
	mk_pins
	for s in "$P" "$C" "$G" "$U"; do mk_leftovers "$s"; done
	[ -n "$(db_files_with "$(marker "$P")")" ]

	# everything goes but P's pin in the TUI's session.json, which has no known lock: it is
	# left and said (exit 3), the file unchanged
	run -3 --separate-stderr agc --json purge opencode "$P"
	json_ok -s --arg p "$P" --arg c "$C" --arg g "$G" --arg pins "$STATE/session.json" '
		length == 1 and .[0].id == $p and .[0].status == "partial"
		and (.[0].residual | length == 1 and .[0].path == $pins and (.[0].reason | contains("pinned")))
		and (.[0].children | sort) == ([$c, $g] | sort)'

	# opencode's views: no session list entry, no rows, no export; the database is sound
	run -0 --separate-stderr oc_in "$PLAIN" session list --format json
	json_ok -s --arg p "$P" --arg u "$U" 'flatten | map(.id) == [$u]'
	db_counts
	json_ok '.[0] | .tree_sessions == 0 and .tree_messages == 0 and .tree_parts == 0
		and .u_sessions == 1 and .u_messages == 1 and .u_parts == 1 and .integrity == "ok"'
	for s in "$P" "$C" "$G"; do
		run -1 --separate-stderr oc_in "$PLAIN" export "$s"
		[[ $stderr == *"Session not found: $s"* ]]
	done
	run -0 --separate-stderr oc_in "$PLAIN" export "$U"
	json_ok --arg u "$U" '.info.id == $u'

	# the deleted text is in neither the database nor its WAL (OpenCode leaves the WAL)
	[ -z "$(db_files_with "$(marker "$P")")" ]
	[ -z "$(db_files_with "$(marker "$G")")" ]
	[ -n "$(db_files_with "$(marker "$U")")" ]
	# the files: the tree's go (plans under <data>/plans for project global), U's and the shared stay
	no_leftovers "$P" "$C" "$G"
	have_leftovers "$U"
	[ -f "$DATA/storage/migration" ] && [ -f "$DATA/storage/project/global.json" ]
	jq -e --arg u "$U" '.pinned | any(. == $u)' "$STATE/session.json"
}

# ---- opencode's own delete, and what it leaves --------------------------------------------

# What `opencode session delete P` leaves (asserted in the next test) and which of it the
# contract tests after it have agentgc remove:
#   leftover                                            opencode delete   agentgc purge
#   rows of P, C, G in session, message, part           removed           removed
#   storage/session_diff/<S>.json                       left              removed
#   storage/session/<project>/<S>.json                  left              removed
#   storage/message/<S>/<msg>.json                      left              removed
#   storage/part/<msg>/<prt>.json                       left              removed
#   storage/todo/<S>.json, storage/session_share/<S>.json  left           removed
#   plan file (<worktree>/.opencode/plans/ in a git project,
#              <data>/plans/ otherwise)                  left              removed
#   the deleted part text in opencode.db or its WAL     left              removed
#   the pin of P in <state>/session.json                left              left and reported as
#                                                                         residual (no known lock;
#                                                                         the file stays valid)
@test "opencode session delete: removes the rows of a parent and its descendants, leaves their files" {
	mk_repo
	import_all "$REPO"
	mk_pins
	for s in "$P" "$C" "$G" "$U"; do mk_leftovers "$s"; done
	run -0 --separate-stderr oc_in "$REPO" session list --format json
	json_ok --arg p "$P" --arg u "$U" --arg r "$REPO_PROJECT" '(map(.id) | sort) == ([$p, $u] | sort) and all(.projectId == $r)'

	run -0 --separate-stderr oc_in "$REPO" session delete "$P"
	[[ $stderr == *"Session $P deleted"* ]]
	db_counts
	json_ok '.[0] | .tree_sessions == 0 and .tree_messages == 0 and .tree_parts == 0
		and .u_sessions == 1 and .u_parts == 1 and .integrity == "ok"'
	run -1 --separate-stderr oc_in "$REPO" export "$P"
	[[ $stderr == *"Session not found: $P"* ]]
	run -1 --separate-stderr oc_in "$REPO" session delete "$P"
	[[ $stderr == *"Session not found: $P"* ]]

	# the record: all of these are still there after opencode's delete
	have_leftovers "$P" "$C" "$G" "$U"
	[ -n "$(db_files_with "$(marker "$P")")" ]
	jq -e --arg p "$P" '.pinned | any(. == $p)' "$STATE/session.json"
}

@test "contract: agentgc purge removes what opencode session delete leaves: session_diff and legacy JSON files" {
	mk_repo
	import_all "$REPO"
	mk_pins
	for s in "$P" "$C" "$G" "$U"; do mk_leftovers "$s"; done

	run -3 --separate-stderr agc --json purge opencode "$P"
	json_ok -s --arg p "$P" --arg pins "$STATE/session.json" '.[0].id == $p and .[0].status == "partial"
		and (.[0].residual | length == 1 and .[0].path == $pins)'
	no_store_files "$P" "$C" "$G"
	have_leftovers "$U"
	[ -z "$(db_files_with "$(marker "$P")")" ]
	[ -f "$DATA/storage/migration" ] && [ -f "$DATA/storage/project/$REPO_PROJECT.json" ]
	jq -e --arg u "$U" '.pinned | any(. == $u)' "$STATE/session.json"
	db_counts
	json_ok '.[0] | .tree_sessions == 0 and .tree_parts == 0 and .u_sessions == 1 and .u_parts == 1
		and .integrity == "ok"'
	run -0 --separate-stderr oc_in "$REPO" session list --format json
	json_ok -s --arg u "$U" 'flatten | map(.id) == [$u]'
}

@test "contract: agentgc purge removes the plan files of a git project's sessions (<worktree>/.opencode/plans)" {
	mk_repo
	import_all "$REPO"
	for s in "$P" "$C" "$G" "$U"; do mk_leftovers "$s"; done

	run -0 --separate-stderr agc --json purge opencode "$P"
	no_plan_files "$P" "$C" "$G"
	[ -f "$(plan_file "$U")" ]
}

@test "contract: after opencode session delete, agentgc purge of the same id removes the files opencode left" {
	import_all "$PLAIN"
	for s in "$P" "$C" "$G" "$U"; do mk_leftovers "$s"; done
	run -0 --separate-stderr oc_in "$PLAIN" session delete "$P"
	have_leftovers "$P" "$C" "$G"

	# the legacy session files still name P, C and G, so they are still on record
	run -0 --separate-stderr agc --json purge opencode "$P"
	json_ok -s --arg p "$P" '.[0].id == $p and .[0].status == "purged"'
	no_leftovers "$P" "$C" "$G"
	have_leftovers "$U"
	db_counts
	json_ok '.[0] | .u_sessions == 1 and .u_parts == 1 and .integrity == "ok"'
}
