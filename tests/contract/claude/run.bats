#!/usr/bin/env bats
# Contract test: agentgc against the real Claude Code (npm @anthropic-ai/claude-code, pinned in
# tests/contract/pins), offline.
#
#   AGENTGC=build/agentgc CLAUDE=$(tests/contract/npm-install.sh claude) bats tests/contract/claude
#
# Claude Code writes the sessions, driven by a loopback model server written for these tests
# (mock_anthropic.py: the Messages API, streamed, answering a scripted plan of tool calls);
# agentgc lists and purges them; the home is compared before the session, after it and after
# the purge. Every claude process runs in a network namespace of its own with only loopback
# (`unshare -rn`, or `-n` as root where user namespaces are refused, as in a chroot), the
# mock inside it, with HOME, CLAUDE_CONFIG_DIR, XDG_* and TMPDIR inside the test's
# directory, and Claude's non-essential traffic, telemetry, error reports and
# updater switched off. Where no namespace can be made, the test fails: these switches alone
# were not checked to keep every request on the machine.
#
# Observed with 2.1.332, differing from or adding to formats/claude-code.md:
# - `claude -p` writes the transcript, the sub-agent's transcript and .meta.json under
#   <session>/subagents/, an empty session-env/<id>/ and $TMPDIR/claude-<uid>/<key>/<id>/; no
#   history.jsonl line and no project entry in .claude.json for -p.
# - It also writes, whatever the session: .claude.json (in CLAUDE_CONFIG_DIR when that is set,
#   else the home) and a backup of it under backups/, plugins/store/*.json, and, on a resume,
#   $TMPDIR/claude-<uid>/fswatch-probe-XXXXXX/probe, left after a clean exit (global state
#   and a file-watch probe: no session's, and agentgc leaves them).
# - As root, --dangerously-skip-permissions is refused; --allowedTools grants the tools here.
# - The interactive REPL runs in a tmux pane of the test's own server. Its default permission
#   mode, "auto mode", has each risky tool call checked on Anthropic's side (not through the
#   Messages API, so the mock cannot answer it) and sets --allowedTools aside for such calls
#   (a `nohup … &` Bash waited for that check); --permission-mode default restores the rules.
# - file-history/<S>/: an Edit of a file that was there before the session writes <h>@v1 (the
#   text before the edit) at once. A file Claude created is backed up too, contrary to the
#   formats note: its first record has "backupFileName": null, and the next prompt's snapshot
#   writes <h>@v2 (the text Claude wrote) for it and for every file the turn changed. `/exit`
#   counts as that prompt: the @v2 files were written at exit, once with a
#   file-history-snapshot line naming them and once with none, so only the dir finds them.
#   Per edit the transcript has a file-history-delta line {messageId, snapshotMessageId,
#   trackingPath (relative to realParentDir), backup: {backupFileName, version, backupTime,
#   realParentDir}}.
# - history.jsonl gets a line for every prompt submitted in the REPL, `/exit` included, all
#   with the session's id.
# - The shell snapshot (shell-snapshots/snapshot-bash-*.sh) is written at the first Bash call
#   and deleted by Claude when it exits, -p and interactive alike.
# - A background Bash (run_in_background) runs with CLAUDE_CODE_SESSION_ID and holds its
#   T/claude-<uid>/<K'>/<S>/tasks/<taskId>.output open; the registry's status is "shell" while
#   it runs. `/exit` then asks "Exit and stop tasks / Move to background and exit / Stay"; the
#   first ends the task's processes and leaves its .output file. A `nohup … &` started by a
#   Bash call is no task: `/exit` asks nothing and the process outlives Claude with the
#   session in its environment.
# - The REPL (not -p) writes $XDG_DATA_HOME/applications/claude-code-url-handler.desktop,
#   global state of no session.
# - "Move to background and exit" (the last test): `claude daemon run` starts (sockets in
#   /tmp/cc-daemon-<uid>/<8 hex>/ whatever TMPDIR says: the test gives claude a /tmp of its
#   own), with two `claude bg-pty-host` and two `claude bg-spare` processes; one spare takes
#   the session as a fork with a new id S2, registry entry of kind "bg" with "jobId": the first
#   8 characters of S2. Its job is jobs/<those 8 characters>/ (state.json with "sessionId" and
#   "resumeSessionId" S2, "daemonShort", "intent": the first prompt's text; and tmp/), not
#   jobs/<S2>/ as the formats note has it; also daemon/gateway-routed/<8 characters>, and the
#   daemon's own jobs/pins.json, daemon/ (auth, control.key, dispatch, roster.json),
#   daemon.{lock,log,status.json}. S2 has file-history/S2/ and the task's output in
#   $TMPDIR/claude-<uid>/<K'>/S2/tasks/, but no transcript until its first new message: until
#   then it is an orphan. The background task's command is reparented (no child of Claude's)
#   and keeps the first session's id in CLAUDE_CODE_SESSION_ID.

bats_require_minimum_version 1.5.0

load ../lib

setup_file() {
	: "${AGENTGC:?set AGENTGC to the agentgc binary}"
	: "${CLAUDE:?set CLAUDE to the claude binary printed by tests/contract/npm-install.sh claude}"
	[[ -x $AGENTGC ]] || { echo "AGENTGC=$AGENTGC is not executable" >&2; return 1; }
	[[ -x $CLAUDE ]] || { echo "CLAUDE=$CLAUDE is not executable" >&2; return 1; }
	NETNS=$(netns_flags) && [[ -n $NETNS ]] || {
		echo "no network namespace can be made here (unshare -rn, or -n as root): claude cannot be kept off the network" >&2
		return 1
	}
	export NETNS
	command -v ip >/dev/null || { echo "ip (iproute2) is needed to bring up loopback" >&2; return 1; }
	command -v python3 >/dev/null || { echo "python3 is needed for the model server" >&2; return 1; }
	command -v tmux >/dev/null || { echo "tmux is needed to drive the interactive claude" >&2; return 1; }
	local vh=$BATS_FILE_TMPDIR/version-home
	mkdir -p "$vh/home" "$vh/tmp"
	CLAUDE_VERSION=$(env HOME="$vh/home" TMPDIR="$vh/tmp" CLAUDE_CONFIG_DIR="$vh/home/.claude" \
		unshare $NETNS "$CLAUDE" --version </dev/null)
	export CLAUDE_VERSION
	echo "# claude $CLAUDE_VERSION ($CLAUDE), under unshare $NETNS" >&3
}

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T/home
	export CLAUDE_CONFIG_DIR=$HOME/.claude
	export XDG_DATA_HOME=$T/xdg/data XDG_CONFIG_HOME=$T/xdg/config
	export XDG_STATE_HOME=$T/xdg/state XDG_CACHE_HOME=$T/xdg/cache
	export TMPDIR=$T/tmp
	local v
	for v in $(compgen -e); do
		case $v in ANTHROPIC_* | CLAUDE_CODE_* | CLAUDECODE) unset "$v" ;; esac
	done
	export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1
	export DISABLE_ERROR_REPORTING=1 NO_COLOR=1 LC_ALL=C.UTF-8
	mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$TMPDIR" "$T/work"
	WORK=$(cd "$T/work" && pwd -P)
	: >"$T/pids"
}

teardown() {
	local p st
	[[ -S $T/tmux ]] && tm kill-server 2>/dev/null || true
	# only a process that is still the one noted: pids are reused, and soon where pid_max is low
	while read -r p st; do
		[[ -n $st && $(proc_start "$p") == "$st" ]] && kill -KILL "$p" 2>/dev/null || true
	done <"$T/pids"
}

# The start time of a process (field 22 of its stat), or nothing once it has gone.
proc_start() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	# shellcheck disable=SC2086 # split into the fields after the command's name
	set -- $s
	echo "${20}"
}

# Note a process for teardown to end, should the test stop before it does.
note_pid() {
	echo "$1 $(proc_start "$1")" >>"$T/pids"
}

# One line per entry under HOME, TMPDIR and the XDG dirs: path, type, and a file's hash.
tree_state() {
	(cd "$T" && find home tmp xdg -printf '%p\t%y\n' | LC_ALL=C sort | while IFS=$'\t' read -r p y; do
		if [[ $y == f ]]; then
			printf '%s\tf\t%s\n' "$p" "$(sha256sum <"$p" | cut -c1-16)"
		else
			printf '%s\t%s\n' "$p" "$y"
		fi
	done)
}

# The entries that are no session's: Claude Code's global state, which every run writes
# whatever the session (.claude.json and the lock dir it takes to write it, .claude.json.lock;
# its backups, the plugin store, the URL handler under XDG_DATA_HOME, .last-cleanup: the time
# of its last sweep of old files, written by a timer while it runs), and the dirs that hold
# the files of every session of a project or of the home (projects/<key>/ and its memory/,
# file-history/, sessions/, session-env/, shell-snapshots/, the temp root's
# claude-<uid>/<key>/, cc-socks/), which a session's first run creates and its purge leaves
# for the others.
not_global() {
	grep -vE '^home/\.claude(/\.claude)?\.json(\.lock)?(/|	)|^home/\.claude/\.last-cleanup	|^home/\.claude/(backups|plugins)(/|	)|^tmp/claude-[0-9]+/fswatch-probe-[^/]+(/|	)|^xdg/data/applications(/|	)' |
		grep -vE '^(home/\.claude|home/\.claude/(projects|projects/[^/]+|projects/[^/]+/memory|file-history|sessions|session-env|shell-snapshots)|tmp/cc-socks|tmp/claude-[0-9]+|tmp/claude-[0-9]+/[^/]+)	d$'
}

# The script that runs inside the network namespace: loopback up, the mock following the
# plan $PLAN, then claude in the work dir with the arguments given; the mock goes when claude
# exits (or, should this script be killed, by itself).
write_runner() {
	rm -f "$T/port"
	cat >"$T/run.sh" <<-'EOF'
		#!/bin/sh
		ip link set lo up || exit 90
		if [ -n "$PRIVATE_TMP" ]; then
			# a /tmp of its own (Claude's daemon puts its sockets in /tmp/cc-daemon-<uid>/
			# whatever TMPDIR says); the test's dir itself may lie under /tmp
			real=$(cd "$T" && pwd -P)
			case $real in /tmp/*)
				mkdir -p "$T/systmp${real#/tmp}" && mount --bind "$real" "$T/systmp${real#/tmp}" || exit 93 ;;
			esac
			mount --rbind "$T/systmp" /tmp || exit 93
		fi
		python3 "$MOCK" "$T/port" "$PLAN" "$T/mock.log" &
		m=$!
		i=0
		while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		[ -s "$T/port" ] || { kill $m; exit 91; }
		ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$T/port") ANTHROPIC_API_KEY=sk-ant-contract-test
		export ANTHROPIC_BASE_URL ANTHROPIC_API_KEY
		cd "$WORK" && "$CLAUDE" "$@"
		rc=$?
		kill $m
		exit $rc
	EOF
	chmod +x "$T/run.sh"
}

# claude -p PROMPT in the work dir, offline, against the mock following the plan file PLAN;
# sets CLAUDE_OUT (its JSON result) and leaves the mock's log in $T/mock.log.
claude_p() {
	local plan=$1 prompt=$2
	shift 2
	write_runner
	CLAUDE_OUT=$(MOCK=$BATS_TEST_DIRNAME/mock_anthropic.py PLAN=$plan T=$T WORK=$WORK \
		timeout 120 unshare $NETNS "$T/run.sh" -p "$prompt" --output-format json "$@" </dev/null)
}

# Poll every 0.1 s until the command succeeds, for at most SECS seconds; else fail, naming
# what was awaited and showing the pane.
wait_until() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	echo "gave up after ${secs}s waiting for: $*" >&2
	pane | grep -v '^$' >&2 || true
	return 1
}

# The tmux server of the interactive tests: a socket of its own in the test's dir, no config.
tm() {
	tmux -f /dev/null -S "$T/tmux" "$@"
}

pane() {
	tm capture-pane -p -t c 2>/dev/null
}

pane_has() {
	pane | grep -qF -- "$1"
}

# True when the input line holds TEXT: the prompt sign, one blank (a no-break space), TEXT.
input_is() {
	local l
	while IFS= read -r l; do
		[[ $l == "❯"?"$1"* ]] && return 0
	done < <(pane)
	return 1
}

# Prepare the home for an interactive session (what a user answers once: onboarding done,
# the API key approved by its last 20 characters, the work dir trusted), with a prompt of an
# earlier session in history.jsonl, which the purge must leave as it is.
interactive_home() {
	mkdir -p "$CLAUDE_CONFIG_DIR"
	cat >"$CLAUDE_CONFIG_DIR/.claude.json" <<-EOF
		{"hasCompletedOnboarding": true,
		 "customApiKeyResponses": {"approved": ["sk-ant-contract-test"], "rejected": []},
		 "projects": {"$WORK": {"hasTrustDialogAccepted": true}}}
	EOF
	printf '{"display":"an earlier prompt","pastedContents":{},"timestamp":1795984693022,"project":"%s","sessionId":"0b5e1c2d-3f4a-4b6c-8d9e-0a1b2c3d4e5f"}\n' \
		"$WORK" >"$CLAUDE_CONFIG_DIR/history.jsonl"
}

# The registry entry of the interactive claude (the only one in the home).
registry() {
	local f
	for f in "$CLAUDE_CONFIG_DIR"/sessions/[0-9]*.json; do
		[[ -s $f ]] && REG=$f && return 0
	done
	return 1
}

# Interactive claude in a detached pane of the test's own tmux server, offline as claude_p,
# against the mock following the plan file PLAN, with the arguments given, in the manual
# permission mode (auto mode's check cannot be answered offline: see the top), where
# --allowedTools grants the tools. Waits until its registry entry names a session and its
# prompt is drawn; sets CLAUDE_PID, ID and REG.
claude_i() {
	local plan=$1
	shift
	write_runner
	local ns=$NETNS
	[[ -z ${PRIVATE_TMP:-} ]] || ns=${NETNS}m
	{
		printf 'exec env'
		printf ' %q' "MOCK=$BATS_TEST_DIRNAME/mock_anthropic.py" "PLAN=$plan" "T=$T" "WORK=$WORK" \
			"PRIVATE_TMP=${PRIVATE_TMP:-}" unshare $ns "$T/run.sh" --permission-mode default "$@"
		echo
	} >"$T/start.sh"
	tm new-session -d -s c -x 160 -y 50 "bash $(printf %q "$T/start.sh")"
	wait_until 30 registry
	CLAUDE_PID=$(basename "$REG" .json)
	note_pid "$CLAUDE_PID"
	ID=$(jq -r .sessionId "$REG")
	wait_until 30 pane_has '❯'
}

# Type a prompt into the interactive claude and wait until the pane shows the answer DONE
# (the last text of the plan).
say() {
	local prompt=$1 done=$2
	tm send-keys -t c -l "$prompt"
	wait_until 10 input_is "$prompt"
	tm send-keys -t c Enter
	wait_until 60 pane_has "● $done"
}

# True once the interactive claude has gone, with the tmux session that ran it; answers
# "Exit and stop tasks" when Claude asks what to do with a background task that still runs.
claude_gone() {
	if kill -0 "$CLAUDE_PID" 2>/dev/null || tm has-session -t c 2>/dev/null; then
		if [[ -z ${ASKED:-} ]] && pane_has 'Exit and stop tasks'; then
			ASKED=1
			tm send-keys -t c Enter
		fi
		return 1
	fi
}

# True once the pid names no process at all, not even a zombie.
vanished() {
	! kill -0 "$1" 2>/dev/null
}

# True once the pid has gone (or is a zombie waiting for its parent).
gone() {
	! kill -0 "$1" 2>/dev/null || [[ $(ps -o stat= -p "$1") == Z* ]]
}

# /exit, and wait until claude is gone.
quit() {
	tm send-keys -t c -l /exit
	wait_until 10 input_is /exit
	tm send-keys -t c Enter
	wait_until 30 claude_gone
}

@test "claude -p with tool calls and a sub-agent: listed with its project, purged whole, and claude --resume finds nothing" {
	cat >"$T/plan.json" <<-EOF
		{"write two files": [
		   {"tool": "Bash", "input": {"command": "echo from-bash > by-bash.txt", "description": "write a file"}},
		   {"tool": "Write", "input": {"file_path": "$WORK/by-write.txt", "content": "from write\\n"}},
		   {"tool": "Agent", "input": {"description": "a helper", "prompt": "contract sub-agent task", "subagent_type": "general-purpose"}},
		   {"text": "all done"}],
		 "contract sub-agent task": [{"text": "sub-agent done"}]}
	EOF
	tree_state >"$T/before"
	claude_p "$T/plan.json" "write two files" --allowedTools "Bash Write Edit Agent"
	local id
	id=$(jq -r .session_id <<<"$CLAUDE_OUT")
	[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]]
	[[ $(cat "$WORK/by-bash.txt") == from-bash && $(cat "$WORK/by-write.txt") == "from write" ]]
	grep -q '"conversation": "contract sub-agent task"' "$T/mock.log"
	# Claude resumes it (the check after the purge would pass for a session it never had)
	claude_p "$T/plan.json" "and again" --resume "$id"
	[[ $(jq -r .session_id <<<"$CLAUDE_OUT") == "$id" && $(jq -r .is_error <<<"$CLAUDE_OUT") == false ]]
	tree_state >"$T/after"

	run -0 --separate-stderr agc --json ls --children
	json_ok --arg id "$id" --arg w "$WORK" 'any(.[]; .agent == "claude" and .id == $id and .project == $w)'
	json_ok --arg id "$id" 'any(.[]; .agent == "claude" and .parent == $id)'

	run -0 --separate-stderr agc --json purge claude "$id"
	json_ok --arg id "$id" '.[0].status == "purged" and .[0].id == $id and (.[0].children | length) == 1'
	# nothing the session added survives; nothing that was there before changed (but
	# Claude's global state, which is no session's)
	diff <(not_global <"$T/before") <(tree_state | not_global)
	# and the session added something: the purge had work to do
	run ! diff -q <(not_global <"$T/before") <(not_global <"$T/after")
	# Claude itself no longer finds it
	run ! claude_p "$T/plan.json" "and again" --resume "$id"
	[[ $output == *"No conversation found with session ID: $id"* ]]
}

@test "claude -p in a stalled turn is in use with its pid, purge refuses with nothing changed; killed with SIGKILL, its registry entry is stale and goes with the purge" {
	cat >"$T/plan.json" <<-EOF
		{"hang here": [{"stall": 100}]}
	EOF
	claude_p "$T/plan.json" "hang here" --allowedTools "Bash" &
	local bg=$! reg pid id i
	note_pid "$bg"
	for i in $(seq 1 200); do
		reg=$(find "$CLAUDE_CONFIG_DIR/sessions" -name '*.json' 2>/dev/null | head -n 1)
		[[ -n $reg ]] && grep -q '"stall"' "$T/mock.log" 2>/dev/null && break
		sleep 0.1
	done
	[[ -n $reg ]] || { echo "claude -p wrote no registry entry" >&2; return 1; }
	pid=$(basename "$reg" .json)
	id=$(jq -r .sessionId "$reg")
	note_pid "$pid"
	[[ $(jq -r .pid "$reg") == "$pid" ]]
	# the transcript exists once the turn began
	for i in $(seq 1 100); do
		[[ -n $(find "$CLAUDE_CONFIG_DIR/projects" -name "$id.jsonl" 2>/dev/null) ]] && break
		sleep 0.1
	done

	run -4 --separate-stderr agc --json in-use claude "$id"
	json_ok --argjson p "$pid" '.[0].in_use and any(.[0].holders[]; .pid == $p and .why == "registry")'
	tree_state >"$T/live"
	run -4 --separate-stderr agc --json purge claude "$id"
	json_ok '.[0].status == "in-use"'
	# nothing changed but what the live claude itself may write meanwhile (global state)
	diff <(not_global <"$T/live") <(tree_state | not_global)

	kill -KILL "$pid"
	wait "$bg" || true
	[[ -e $reg ]]
	run -0 --separate-stderr agc --json in-use claude "$id"
	run -0 --separate-stderr agc --json purge claude "$id"
	json_ok --arg r "$reg" '.[0].status == "purged" and any(.[0].removed[]; .path == $r)'
	[[ ! -e $reg ]]
	[[ -z $(find "$HOME" "$TMPDIR" -name "*$id*") ]]
}

@test "interactive claude with file-history and a background Bash: listed with its project, purged whole, and claude --resume finds nothing" {
	interactive_home
	printf 'old line\n' >"$WORK/kept.txt"
	cat >"$T/plan.json" <<-EOF
		{"edit the kept file": [
		   {"tool": "Read", "input": {"file_path": "$WORK/kept.txt"}},
		   {"tool": "Edit", "input": {"file_path": "$WORK/kept.txt", "old_string": "old line", "new_string": "new line"}},
		   {"tool": "Write", "input": {"file_path": "$WORK/made.txt", "content": "made here\\n"}},
		   {"tool": "Bash", "input": {"command": "sleep 60", "description": "wait in the background", "run_in_background": true}},
		   {"text": "interactive turn done"}]}
	EOF
	tree_state >"$T/before"
	claude_i "$T/plan.json" --allowedTools "Read Edit Write Bash"
	say "edit the kept file" "interactive turn done"
	[[ $(cat "$WORK/kept.txt") == "new line" && $(cat "$WORK/made.txt") == "made here" ]]
	# the file that was there before the session is backed up at its first edit, named by the
	# hash of its path; and the background command's output is in the temp root
	local fh
	fh=$CLAUDE_CONFIG_DIR/file-history/$ID/$(printf %s "$WORK/kept.txt" | sha256sum | cut -c1-16)@v1
	[[ $(cat "$fh") == "old line" ]]
	compgen -G "$TMPDIR/claude-*/*/$ID/tasks/*.output" >/dev/null
	quit
	[[ ! -e $REG ]]
	# Claude resumes it (the check after the purge would pass for a session it never had)
	claude_p "$T/plan.json" "and again" --resume "$ID"
	[[ $(jq -r .session_id <<<"$CLAUDE_OUT") == "$ID" && $(jq -r .is_error <<<"$CLAUDE_OUT") == false ]]
	tree_state >"$T/after"

	run -0 --separate-stderr agc --json ls
	json_ok --arg id "$ID" --arg w "$WORK" \
		'any(.[]; .agent == "claude" and .id == $id and .project == $w and .title == "edit the kept file" and .live == false)'

	run -0 --separate-stderr agc --json purge claude "$ID"
	json_ok --arg id "$ID" '.[0].status == "purged" and .[0].id == $id'
	diff <(not_global <"$T/before") <(tree_state | not_global)
	run ! diff -q <(not_global <"$T/before") <(not_global <"$T/after")
	[[ ! -e $CLAUDE_CONFIG_DIR/file-history/$ID ]]
	run ! claude_p "$T/plan.json" "and again" --resume "$ID"
	[[ $output == *"No conversation found with session ID: $ID"* ]]
}

@test "interactive claude, idle between turns, is in use with its pid and purge refuses with nothing changed; after /exit it is free and purged" {
	interactive_home
	cat >"$T/plan.json" <<-EOF
		{"just answer": [{"text": "answered here"}]}
	EOF
	tree_state >"$T/before"
	claude_i "$T/plan.json"
	say "just answer" "answered here"
	wait_until 10 jq -e '.status == "idle"' "$REG" >/dev/null

	run -4 --separate-stderr agc --json in-use claude "$ID"
	json_ok --argjson p "$CLAUDE_PID" '.[0].in_use and any(.[0].holders[]; .pid == $p and .why == "registry")'
	run -0 --separate-stderr agc --json ls
	json_ok --arg id "$ID" 'any(.[]; .id == $id and .live == true)'
	tree_state >"$T/live"
	run -4 --separate-stderr agc --json purge claude "$ID"
	json_ok --argjson p "$CLAUDE_PID" '.[0].status == "in-use" and .[0].removed == [] and any(.[0].holders[]; .pid == $p)'
	# nothing changed but what the live claude itself may write meanwhile (global state)
	diff <(not_global <"$T/live") <(tree_state | not_global)

	quit
	run -0 --separate-stderr agc --json in-use claude "$ID"
	json_ok '.[0].in_use == false'
	run -0 --separate-stderr agc --json purge claude "$ID"
	json_ok --arg id "$ID" '.[0].status == "purged" and .[0].id == $id'
	diff <(not_global <"$T/before") <(tree_state | not_global)
}

@test "a tool that claude started with nohup … & and that outlives /exit keeps the session in use through CLAUDE_CODE_SESSION_ID until it ends; then free and purged" {
	interactive_home
	cat >"$T/plan.json" <<-'EOF'
		{"start a detached sleep": [
		   {"tool": "Bash", "input": {"command": "nohup sleep 300 >/dev/null 2>&1 & echo $! >bg.pid", "description": "start a detached sleep"}},
		   {"text": "sleep started"}]}
	EOF
	tree_state >"$T/before"
	claude_i "$T/plan.json" --allowedTools Bash
	say "start a detached sleep" "sleep started"
	local bg
	bg=$(cat "$WORK/bg.pid")
	note_pid "$bg"
	quit
	# Claude is gone, its registry entry with it; the tool lives on, the session in its
	# environment
	[[ ! -e $REG ]]
	tr '\0' '\n' <"/proc/$bg/environ" | grep -qxF "CLAUDE_CODE_SESSION_ID=$ID"

	run -4 --separate-stderr agc --json in-use claude "$ID"
	json_ok --argjson b "$bg" --argjson p "$CLAUDE_PID" \
		'.[0].in_use and any(.[0].holders[]; .pid == $b and .why == "environ") and all(.[0].holders[]; .pid != $p)'
	tree_state >"$T/live"
	run -4 --separate-stderr agc --json purge claude "$ID"
	json_ok '.[0].status == "in-use" and .[0].removed == []'
	# nothing changed but what the live claude itself may write meanwhile (global state)
	diff <(not_global <"$T/live") <(tree_state | not_global)

	kill "$bg"
	wait_until 10 gone "$bg"
	run -0 --separate-stderr agc --json in-use claude "$ID"
	run -0 --separate-stderr agc --json purge claude "$ID"
	json_ok --arg id "$ID" '.[0].status == "purged" and .[0].id == $id'
	diff <(not_global <"$T/before") <(tree_state | not_global)
}

# The pids of the processes that run the claude binary (the daemon, its workers and the
# background sessions), one a line.
claude_pids() {
	local d exe
	for d in /proc/[0-9]*; do
		exe=$(readlink "$d/exe" 2>/dev/null) || continue
		[[ $exe == "$(readlink -f "$CLAUDE")" ]] && echo "${d#/proc/}"
	done
}

# The pids of the processes that have CLAUDE_CODE_SESSION_ID set to one of the given ids.
session_procs() {
	local d id
	for d in /proc/[0-9]*; do
		for id; do
			{ tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qxF "CLAUDE_CODE_SESSION_ID=$id" &&
				echo "${d#/proc/}" && break
		done
	done
	return 0
}

# The job dir of a background session (jobs/<8 hex digits>/ with a state.json naming one).
bg_job() {
	local f
	for f in "$CLAUDE_CONFIG_DIR"/jobs/[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]/state.json; do
		[[ -s $f ]] && jq -e '.sessionId | length == 36' "$f" >/dev/null 2>&1 && JOB=${f%/state.json} && return 0
	done
	return 1
}

@test "a session moved to the background at /exit runs as a job of Claude's daemon: in use while it runs; once stopped, its purge takes jobs/<short>/ with the daemon's marks, and nothing of another session" {
	unshare "${NETNS}m" true 2>/dev/null || {
		echo "no private mount namespace (unshare ${NETNS}m): Claude's daemon would put its sockets in the shared /tmp (in a chroot, bind-mount its root onto itself first)" >&2
		return 1
	}
	interactive_home
	mkdir -p "$T/systmp"
	cat >"$T/plan.json" <<-EOF
		{"start a background wait": [
		   {"tool": "Bash", "input": {"command": "sleep 300", "description": "wait in the background", "run_in_background": true}},
		   {"text": "background wait started"}]}
	EOF
	tree_state >"$T/before"
	PRIVATE_TMP=1 claude_i "$T/plan.json" --allowedTools Bash
	say "start a background wait" "background wait started"
	# /exit asks what to do with the task that still runs: the second answer moves the
	# session to the background
	tm send-keys -t c -l /exit
	wait_until 10 input_is /exit
	tm send-keys -t c Enter
	wait_until 20 pane_has 'Move to background'
	tm send-keys -t c Down
	sleep 0.3
	tm send-keys -t c Enter
	wait_until 60 bg_job
	local short s2 p2 p
	short=${JOB##*/}
	s2=$(jq -r .sessionId "$JOB/state.json")
	for p in $(claude_pids); do note_pid "$p"; done
	echo "# job $short: session $s2 (forked from $ID); claude processes: $(claude_pids | tr '\n' ' ')" >&3
	[[ $s2 != "$ID" && $short == "${s2:0:8}" ]]
	# the background session's registry entry: kind bg, the job's short id
	wait_until 30 jq -e --arg s "$s2" 'select(.sessionId == $s)' "$CLAUDE_CONFIG_DIR"/sessions/[0-9]*.json
	p2=$(jq -r --arg s "$s2" 'select(.sessionId == $s) | .pid' "$CLAUDE_CONFIG_DIR"/sessions/[0-9]*.json)
	jq -e --arg s "$s2" --arg j "$short" 'select(.sessionId == $s) | .kind == "bg" and .jobId == $j' \
		"$CLAUDE_CONFIG_DIR"/sessions/[0-9]*.json

	run -4 --separate-stderr agc --json in-use claude "$s2"
	json_ok --argjson p "$p2" '.[0].in_use and any(.[0].holders[]; .pid == $p and .why == "registry")'
	run -4 --separate-stderr agc --json purge claude "$s2"
	json_ok '.[0].status == "in-use" and .[0].removed == []'
	[[ -f $JOB/state.json ]]

	# the background task moved with the session: its command outlives the REPL (reparented,
	# not Claude's child), in the environment of one of the two sessions
	local tasks
	tasks=$(session_procs "$ID" "$s2")
	[[ -n $tasks ]]
	for p in $tasks; do note_pid "$p"; done
	echo "# the task's processes: $(for p in $tasks; do tr '\0' '\n' <"/proc/$p/environ" | grep '^CLAUDE_CODE_SESSION_ID='; done | sort -u | tr '\n' ' ')" >&3

	# stopped: every claude process (the daemon, its workers, the session) and the task
	for p in $(claude_pids) $tasks; do
		kill -KILL "$p" 2>/dev/null || true
	done
	# gone, not a zombie not yet reaped (which agentgc rightly counts as a process that runs)
	for p in "$p2" $tasks; do wait_until 20 vanished "$p"; done
	run -0 --separate-stderr agc --json in-use claude "$s2"
	# the forked session has no transcript yet (Claude writes it at its first new message):
	# what it has (the job, file-history, the task's output) makes it an orphan
	run -0 --separate-stderr agc --json ls --orphans
	json_ok --arg s "$s2" 'any(.[]; .id == $s and .live == false)'
	run -0 --separate-stderr agc --json purge claude "$s2"
	json_ok --arg j "$JOB" '.[0].status == "purged" and any(.[0].removed[]; .path == $j)'
	[[ ! -e $JOB && ! -e $CLAUDE_CONFIG_DIR/daemon/gateway-routed/$short && ! -e $CLAUDE_CONFIG_DIR/daemon/host-managed/$short ]]
	! grep -rqF "start a background wait" "$CLAUDE_CONFIG_DIR/jobs" 2>/dev/null
	run -0 --separate-stderr agc --json purge claude "$ID"
	json_ok --arg id "$ID" '.[0].status == "purged" and .[0].id == $id'
	# what is left is the daemon's own state, no session's
	diff <(not_global <"$T/before") <(tree_state | not_global |
		grep -vE '^home/\.claude/(daemon(/|	)|daemon\.(lock|log|status\.json)	|jobs	|jobs/pins\.json	)')
}
