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
# (`unshare -rn`), the mock inside it, with HOME, CLAUDE_CONFIG_DIR, XDG_* and TMPDIR inside
# the test's directory, and Claude's non-essential traffic, telemetry, error reports and
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

bats_require_minimum_version 1.5.0

setup_file() {
	: "${AGENTGC:?set AGENTGC to the agentgc binary}"
	: "${CLAUDE:?set CLAUDE to the claude binary printed by tests/contract/npm-install.sh claude}"
	[[ -x $AGENTGC ]] || { echo "AGENTGC=$AGENTGC is not executable" >&2; return 1; }
	[[ -x $CLAUDE ]] || { echo "CLAUDE=$CLAUDE is not executable" >&2; return 1; }
	unshare -rn true 2>/dev/null || {
		echo "unshare -rn is not permitted here: claude cannot be kept off the network" >&2
		return 1
	}
	command -v ip >/dev/null || { echo "ip (iproute2) is needed to bring up loopback" >&2; return 1; }
	command -v python3 >/dev/null || { echo "python3 is needed for the model server" >&2; return 1; }
	local vh=$BATS_FILE_TMPDIR/version-home
	mkdir -p "$vh/home" "$vh/tmp"
	CLAUDE_VERSION=$(env HOME="$vh/home" TMPDIR="$vh/tmp" CLAUDE_CONFIG_DIR="$vh/home/.claude" \
		unshare -rn "$CLAUDE" --version </dev/null)
	export CLAUDE_VERSION
	echo "# claude $CLAUDE_VERSION ($CLAUDE), under unshare -rn" >&3
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
	local p
	while read -r p; do
		[[ -n $p ]] && kill -KILL "$p" 2>/dev/null || true
	done <"$T/pids"
}

agc() {
	"$AGENTGC" "$@"
}

# Fail unless the jq filter (last argument; jq options may come before it) is true of $output
# read as a stream of JSON values slurped into an array.
json_ok() {
	jq -e -s "$@" <<<"$output" >/dev/null || {
		echo "jq -s filter failed: ${*: -1}" >&2
		echo "on: $output" >&2
		return 1
	}
}

# One line per entry under HOME and TMPDIR: path, type, and a file's hash.
tree_state() {
	(cd "$T" && find home tmp -printf '%p\t%y\n' | LC_ALL=C sort | while IFS=$'\t' read -r p y; do
		if [[ $y == f ]]; then
			printf '%s\tf\t%s\n' "$p" "$(sha256sum <"$p" | cut -c1-16)"
		else
			printf '%s\t%s\n' "$p" "$y"
		fi
	done)
}

# The entries that are no session's: Claude Code's global state, which every run writes
# whatever the session (.claude.json, its backups, the plugin store), and the dirs that hold
# the files of every session of a project or of the home (projects/<key>/ and its memory/,
# sessions/, session-env/, shell-snapshots/, the temp root's claude-<uid>/<key>/, cc-socks/),
# which a session's first run creates and its purge leaves for the others.
not_global() {
	grep -vE '^home/\.claude(/\.claude)?\.json	|^home/\.claude/(backups|plugins)(/|	)|^tmp/claude-[0-9]+/fswatch-probe-[^/]+(/|	)' |
		grep -vE '^(home/\.claude|home/\.claude/(projects|projects/[^/]+|projects/[^/]+/memory|sessions|session-env|shell-snapshots)|tmp/cc-socks|tmp/claude-[0-9]+|tmp/claude-[0-9]+/[^/]+)	d$'
}

# claude -p PROMPT in the work dir, offline, against the mock following the plan file PLAN;
# sets CLAUDE_OUT (its JSON result) and leaves the mock's log in $T/mock.log.
claude_p() {
	local plan=$1 prompt=$2
	shift 2
	rm -f "$T/port"
	cat >"$T/run.sh" <<-'EOF'
		#!/bin/sh
		# inside the network namespace: loopback up, the mock, then claude
		ip link set lo up || exit 90
		python3 "$MOCK" "$T/port" "$PLAN" "$T/mock.log" &
		m=$!
		i=0
		while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		[ -s "$T/port" ] || { kill $m; exit 91; }
		ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$T/port") ANTHROPIC_API_KEY=sk-ant-contract-test
		export ANTHROPIC_BASE_URL ANTHROPIC_API_KEY
		cd "$WORK" && "$CLAUDE" "$@" </dev/null
		rc=$?
		kill $m
		exit $rc
	EOF
	chmod +x "$T/run.sh"
	CLAUDE_OUT=$(MOCK=$BATS_TEST_DIRNAME/mock_anthropic.py PLAN=$plan T=$T WORK=$WORK \
		timeout 120 unshare -rn "$T/run.sh" -p "$prompt" --output-format json "$@")
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
	! diff -q <(not_global <"$T/before") <(not_global <"$T/after") >/dev/null
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
	echo "$bg" >>"$T/pids"
	for i in $(seq 1 200); do
		reg=$(find "$CLAUDE_CONFIG_DIR/sessions" -name '*.json' 2>/dev/null | head -n 1)
		[[ -n $reg ]] && grep -q '"stall"' "$T/mock.log" 2>/dev/null && break
		sleep 0.1
	done
	[[ -n $reg ]] || { echo "claude -p wrote no registry entry" >&2; return 1; }
	pid=$(basename "$reg" .json)
	id=$(jq -r .sessionId "$reg")
	echo "$pid" >>"$T/pids"
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
	diff "$T/live" <(tree_state)

	kill -KILL "$pid"
	wait "$bg" || true
	[[ -e $reg ]]
	run -0 --separate-stderr agc --json in-use claude "$id"
	run -0 --separate-stderr agc --json purge claude "$id"
	json_ok --arg r "$reg" '.[0].status == "purged" and any(.[0].removed[]; .path == $r)'
	[[ ! -e $reg ]]
	[[ -z $(find "$HOME" "$TMPDIR" -name "*$id*") ]]
}
