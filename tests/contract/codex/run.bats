#!/usr/bin/env bats
# Contract test: agentgc against the real Codex CLI (npm @openai/codex, pinned in
# tests/contract/pins), offline.
#
#   AGENTGC=build/agentgc CODEX=$(tests/contract/npm-install.sh codex) bats tests/contract/codex
#
# Codex writes the threads, driven by a loopback model server written for these tests
# (mock_openai.py: the Responses API, streamed, answering a scripted plan of tool calls), set in
# $CODEX_HOME/config.toml as a model provider; agentgc lists and purges them; the home is
# compared before the session, after it and after the purge, files by hash and the rows of every
# SQLite database. Every codex process runs in a network namespace of its own with only loopback
# (`unshare -rnm`, or `-nm` as root where user namespaces are refused, as in a chroot), the
# mock inside it, with HOME, CODEX_HOME, XDG_* and TMPDIR inside the test's directory. Where
# no namespace can be made, the test fails.
#
# Observed with 0.171.0, differing from or adding to formats/codex.md:
# - The TUI runs side threads for each prompt (two per prompt here: same input, own thread ids,
#   the tools run again) that get no rollout, no threads row and no session_index line; only
#   logs_2.sqlite rows under their own thread_id (about 40 each) show them, naming neither the
#   thread nor its text. Once, one left a half-written shell_snapshots/<side id>.tmp-<n>.
# - The TUI records the first prompt as the thread's name (threads.name and session_index),
#   before any /rename; a fork (`codex exec fork`) gets a session_index line with its parent's
#   name, and its line 0 keeps the parent's originator ("codex-tui") with source "exec".
# - `codex exec fork` writes history_base (so the fork blocks its parent's deletion) like the
#   TUI's fork; the TUI with --no-daemon still makes /tmp/codex-daemon-<uid>/ (not moved by
#   TMPDIR, so each process here gets a /tmp of its own), and $TMPDIR/codex-bwrap-synthetic-
#   mount-targets-<uid>/lock; `codex exec` writes no logs_2 rows, the TUI hundreds.
# - Codex writes config.toml in the TUI ([tui] screen_reader_detection_done,
#   model_availability_nux); `codex doctor --json` has checks state.paths and
#   state.rollout_db_parity ("rollout DB rows" counts the threads rows).
# - Its own row updates (an item's progress, archive's new rollout_path) leave older copies in
#   the main database files' pages, outside the WAL: a purge without --scrub leaves them (and
#   says so), `agentgc compact` or --scrub clears them.
# - `codex delete --force` also left, besides the history.jsonl line, the marker and the WAL
#   text listed in §8, the thread's id in thread_history_1.sqlite's pages.
# - A resume of a missing thread fails with "no rollout found for thread id <id>"; without a
#   proxy set, update, plugin and metrics requests wait 5 s each for a resolver in the
#   namespace (hence the closed proxy below).

bats_require_minimum_version 1.5.0

load ../lib

# The mock's port: any port will do, each namespace has a loopback of its own
PORT=18471

setup_file() {
	: "${AGENTGC:?set AGENTGC to the agentgc binary}"
	: "${CODEX:?set CODEX to the codex binary printed by tests/contract/npm-install.sh codex}"
	[[ -x $AGENTGC ]] || { echo "AGENTGC=$AGENTGC is not executable" >&2; return 1; }
	[[ -x $CODEX ]] || { echo "CODEX=$CODEX is not executable" >&2; return 1; }
	NETNS=$(netns_flags) && [[ -n $NETNS ]] || {
		echo "no network namespace can be made here (unshare -rn, or -n as root): codex cannot be kept off the network" >&2
		return 1
	}
	export NETNS
	# and a mount namespace, for a /tmp of its own (a chroot whose root is no mount point
	# cannot make its mounts private)
	unshare "${NETNS}m" true 2>/dev/null || {
		echo "no private mount namespace can be made here (unshare ${NETNS}m): codex's /tmp/codex-daemon-<uid> cannot be kept out of the shared /tmp (in a chroot, bind-mount its root onto itself first)" >&2
		return 1
	}
	local t
	for t in ip python3 sqlite3 tmux jq; do
		command -v "$t" >/dev/null || { echo "$t is needed by the codex contract test" >&2; return 1; }
	done
	local vh=$BATS_FILE_TMPDIR/version-home
	mkdir -p "$vh/home/.codex" "$vh/tmp"
	CODEX_VERSION=$(env HOME="$vh/home" CODEX_HOME="$vh/home/.codex" TMPDIR="$vh/tmp" \
		unshare $NETNS "$CODEX" --version </dev/null)
	export CODEX_VERSION
	echo "# $CODEX_VERSION ($CODEX), under unshare $NETNS" >&3
}

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T/home
	export CODEX_HOME=$HOME/.codex
	export XDG_DATA_HOME=$T/xdg/data XDG_CONFIG_HOME=$T/xdg/config
	export XDG_STATE_HOME=$T/xdg/state XDG_CACHE_HOME=$T/xdg/cache XDG_RUNTIME_DIR=$T/xdg/run
	export TMPDIR=$T/tmp
	local v
	for v in $(compgen -e); do
		case $v in CODEX_HOME) ;; CODEX_* | OPENAI_* | AGC_*) unset "$v" ;; esac
	done
	# Codex also looks for updates, plugins and a metrics endpoint: a proxy on a closed loopback
	# port makes those requests fail at once instead of after a resolver timeout (the namespace
	# already keeps them from leaving the machine).
	export HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
	export NO_PROXY=127.0.0.1 NO_COLOR=1 LC_ALL=C.UTF-8 TZ=UTC
	mkdir -p "$CODEX_HOME" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" \
		"$XDG_RUNTIME_DIR" "$TMPDIR" "$T/work" "$T/systmp"
	chmod 700 "$XDG_RUNTIME_DIR"
	WORK=$(cd "$T/work" && pwd -P)
	cat >"$CODEX_HOME/config.toml" <<-EOF
		model = "contract-model"
		model_provider = "contract"
		check_for_update_on_startup = false

		[model_providers.contract]
		name = "contract mock"
		base_url = "http://127.0.0.1:$PORT/v1"
		wire_api = "responses"
		env_key = "CONTRACT_OPENAI_KEY"

		[analytics]
		enabled = false

		[history]
		persistence = "save-all"

		[projects."$WORK"]
		trust_level = "trusted"
	EOF
	: >"$T/pids"
	: >"$T/mock.log"
}

teardown() {
	local p
	while read -r p; do
		[[ -n $p ]] && kill -KILL "$p" 2>/dev/null || true
	done <"$T/pids"
	[[ -n ${TMUX_SOCK:-} ]] && tmux -S "$TMUX_SOCK" kill-server 2>/dev/null || true
}

# The script every codex process runs in: inside the new network namespace, loopback up, /tmp
# bound to the test's systmp/ (Codex makes /tmp/codex-daemon-<uid>/ whatever TMPDIR says), the
# mock (plan $PLAN, log $T/mock.log) on $PORT, then the command in the foreground (the TUI
# needs the terminal); its pid goes to $T/codex.pid.
make_runner() {
	cat >"$T/ns.sh" <<-'EOF'
		#!/bin/sh
		ip link set lo up || exit 90
		# the test's dir itself may lie under /tmp: it stays reachable at its path
		real=$(cd "$T" && pwd -P)
		case $real in /tmp/*)
			mkdir -p "$T/systmp${real#/tmp}" && mount --bind "$real" "$T/systmp${real#/tmp}" || exit 93 ;;
		esac
		mount --rbind "$T/systmp" /tmp || exit 93
		rm -f "$T/port"
		python3 "$MOCK" "$PORT" "$T/port" "$PLAN" "$T/mock.log" &
		m=$!
		i=0
		while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		[ -s "$T/port" ] || { kill $m; exit 91; }
		CONTRACT_OPENAI_KEY=sk-contract-test
		export CONTRACT_OPENAI_KEY
		cd "$WORK" || exit 92
		sh -c 'echo $$ >"$T/codex.pid" && exec "$@"' codex "$@"
		rc=$?
		kill $m
		exit $rc
	EOF
	chmod +x "$T/ns.sh"
}

# in_ns PLAN COMMAND...: COMMAND offline, with the mock following the plan file PLAN.
in_ns() {
	local plan=$1
	shift
	[[ -x $T/ns.sh ]] || make_runner
	MOCK=$BATS_TEST_DIRNAME/mock_openai.py PLAN=$plan T=$T WORK=$WORK PORT=$PORT \
		timeout 120 unshare "${NETNS}m" "$T/ns.sh" "$@"
}

# codex_exec PLAN ARGS...: `codex exec --json ARGS` in the work dir; sets THREAD to the id of the
# thread it started and leaves its events in $T/exec.jsonl.
codex_exec() {
	local plan=$1
	shift
	in_ns "$plan" "$CODEX" exec --json --skip-git-repo-check \
		--dangerously-bypass-approvals-and-sandbox "$@" </dev/null >"$T/exec.jsonl" 2>"$T/exec.err" || {
		echo "codex exec $* failed:" >&2
		cat "$T/exec.err" "$T/exec.jsonl" >&2
		return 1
	}
	THREAD=$(jq -r 'select(.type == "thread.started") | .thread_id' "$T/exec.jsonl")
	[[ $THREAD =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]]
}

# One line per entry under the home and the temp dir (path, type, a file's hash), then every row
# of every SQLite database there, read from a copy of the database and its WAL (sqlite3 on the
# original could checkpoint it, and so change what is compared). One python3 process: a hash
# tool per file would take seconds.
home_state() {
	python3 - "$T" <<-'EOF'
		import hashlib, os, shutil, sqlite3, sys
		top = sys.argv[1]
		out, dbs = [], []
		for root in ("home", "tmp", "systmp"):
		    for d, dirs, files in os.walk(os.path.join(top, root)):
		        for n in dirs + files:
		            p = os.path.join(d, n)
		            rel = os.path.relpath(p, top)
		            if n.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm")):
		                if n.endswith(".sqlite"):
		                    dbs.append(rel)
		                continue
		            if os.path.islink(p):
		                out.append("%s\tl\t%s" % (rel, os.readlink(p)))
		            elif os.path.isdir(p):
		                out.append("%s\td" % rel)
		            elif os.path.isfile(p):
		                with open(p, "rb") as f:
		                    out.append("%s\tf\t%s" % (rel, hashlib.sha256(f.read()).hexdigest()[:16]))
		            else:
		                out.append("%s\t?" % rel)
		copy = os.path.join(top, ".dbcopy")
		cons, threads = [], set()
		for rel in sorted(dbs):
		    c = os.path.join(copy, str(len(cons)))
		    os.makedirs(c)
		    shutil.copyfile(os.path.join(top, rel), os.path.join(c, "x.sqlite"))
		    if os.path.exists(os.path.join(top, rel + "-wal")):
		        shutil.copyfile(os.path.join(top, rel + "-wal"), os.path.join(c, "x.sqlite-wal"))
		    con = sqlite3.connect(os.path.join(c, "x.sqlite"))
		    cons.append((rel, con))
		    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'threads'").fetchone():
		        threads.update(r[0] for r in con.execute("SELECT id FROM threads"))
		for rel, con in cons:
		    for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
		        cur = con.execute('SELECT * FROM "%s"' % t.replace('"', '""'))
		        cols = [d[0] for d in cur.description]
		        for row in cur:
		            tag = t
		            # a log row of no thread, or of a thread that has no record (see not_global)
		            if t == "logs" and "thread_id" in cols:
		                tid = row[cols.index("thread_id")]
		                tag = "logs:process" if tid is None else tag if tid in threads else "logs:unrecorded"
		            out.append("%s\t%s\t%r" % (rel, tag, row))
		    con.close()
		shutil.rmtree(copy, ignore_errors=True)
		out.sort()
		print("\n".join(out))
	EOF
}

# The entries that are no thread's, which Codex writes whatever the session: the plugin
# staging dir and its locks (.tmp/), the helper links it makes at each start (tmp/arg0-linux/),
# and the dirs that hold the files of every thread (a date dir of sessions/, shell_snapshots/,
# thread-writer-locks/ and its .coordination.lock), which a thread's first run creates and its
# purge leaves for the others. And two kinds of rows of logs_2.sqlite: the process's own
# tracing (thread_id NULL), and the tracing of the side threads the TUI runs for each prompt
# and never records (a thread_id that no rollout and no threads row has; their rows hold no text
# of the session and name it nowhere). A purged thread's own log rows count as such once its
# threads row is gone: the tests check with grep that no byte of its id is left in any file.
# Also: config.toml, where the TUI records its notices ([tui] screen_reader_detection_done,
# model_availability_nux counts); the 0-byte session_index.jsonl.lock; the sandbox helper's
# $TMPDIR/codex-bwrap-synthetic-mount-targets-<uid>/ and the daemon's /tmp/codex-daemon-<uid>/
# (here systmp/), made even with --no-daemon; and history.jsonl and session_index.jsonl left
# empty: shared files, which a purge that takes their last line leaves there, empty (SPEC R4).
# And shell_snapshots/<id>.tmp-<n>: a snapshot that a TUI side thread was writing when the TUI
# quit, left half-written (seen once in several runs), named by that side thread's id, which
# nothing on record names (the tests check separately that no file name holds a purged id).
not_global() {
	grep -vE '^home/\.codex/logs_[0-9]+\.sqlite	logs:(process|unrecorded)	' |
		grep -vE '^home/\.codex/(config\.toml|session_index\.jsonl\.lock)	' |
		grep -vE '^home/\.codex/shell_snapshots/[0-9a-f-]{36}\.tmp-[0-9]+	' |
		grep -vE '^home/\.codex/(history|session_index)\.jsonl	f	e3b0c44298fc1c14$' |
		grep -vE '^(tmp/codex-bwrap-synthetic-mount-targets-[0-9]+|systmp/codex-daemon-[0-9]+)(/|	)' |
		grep -vE '^home/\.codex/(\.tmp|tmp)(/|	)' |
		grep -vE '^home/\.codex/thread-writer-locks/\.coordination\.lock	' |
		grep -vE '^home/\.codex/(sessions(/[0-9]{4}(/[0-9]{2}(/[0-9]{2})?)?)?|archived_sessions|shell_snapshots|thread-writer-locks|tui-thread-reference-capabilities)	d$'
}

# tui_start PLAN READY ARGS...: the interactive codex (without the shared background server, and
# without its sandbox, whose private /tmp hides a test dir under /tmp from the shell tool) in a
# detached tmux session on a socket of the test's own, offline like every codex process; waits
# until the screen shows READY.
tui_start() {
	local plan=$1 ready=$2
	shift 2
	[[ -x $T/ns.sh ]] || make_runner
	TMUX_SOCK=$T/tmux.sock
	local cmd
	cmd=$(printf '%q ' env MOCK="$BATS_TEST_DIRNAME/mock_openai.py" PLAN="$plan" T="$T" WORK="$WORK" \
		PORT="$PORT" unshare "${NETNS}m" "$T/ns.sh" "$CODEX" --no-daemon \
		--dangerously-bypass-approvals-and-sandbox "$@")
	tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -x 180 -y 50 "$cmd; echo codex-exited; exec sleep 300"
	tui_wait "$ready"
}

# tui_wait TEXT: wait (up to 30 s) until the screen shows TEXT
tui_wait() {
	local i
	for i in $(seq 1 300); do
		tmux -S "$TMUX_SOCK" capture-pane -p -J >"$T/screen" 2>/dev/null
		grep -qF -- "$1" "$T/screen" && return 0
		sleep 0.1
	done
	echo "the screen never showed '$1':" >&2
	cat "$T/screen" >&2
	return 1
}

# tui_type TEXT: type TEXT, then Enter apart (typed at once, Enter would join a paste)
tui_type() {
	tmux -S "$TMUX_SOCK" send-keys -l "$1"
	sleep 0.3
	tmux -S "$TMUX_SOCK" send-keys Enter
}

# A plan for `codex exec`: a bystander thread, made first, that every purge must leave whole
write_plan() {
	cat >"$T/plan.json" <<-EOF
		{"bystander thread": [{"exec": "echo bystander > bystander.txt"}, {"text": "bystander done"}],
		 "write a file": [{"exec": "echo from-exec > by-exec.txt"}, {"spawn": "contract sub-agent task"},
		                  {"wait": true}, {"text": "all done"}],
		 "contract sub-agent task": [{"exec": "echo from-sub > by-sub.txt"}, {"text": "sub-agent done"}],
		 "and again": [{"text": "resumed"}],
		 "hang here": [{"exec": "echo before the stall"}, {"stall": 100}],
		 "first tui prompt": [{"exec": "echo from-tui > by-tui.txt"}, {"text": "tui done"}],
		 "second tui prompt": [{"spawn": "tui sub-agent task"}, {"wait": true}, {"text": "second done"}],
		 "tui sub-agent task": [{"text": "tui sub-agent done"}],
		 "fork prompt": [{"text": "fork done"}],
		 "contract-archived-thread": [{"text": "archived done"}]}
	EOF
}

@test "codex exec with a shell call and a sub-agent: listed, purged whole, and codex no longer finds it" {
	write_plan
	codex_exec "$T/plan.json" "bystander thread"
	local by=$THREAD id child
	home_state >"$T/before"
	codex_exec "$T/plan.json" "write a file"
	id=$THREAD
	[[ $(cat "$WORK/by-exec.txt") == from-exec && $(cat "$WORK/by-sub.txt") == from-sub ]]
	child=$(jq -r 'select(.conversation == "contract sub-agent task") | .thread' "$T/mock.log" | sort -u)
	[[ -n $child && $child != "$id" ]]
	# Codex resumes it (the check after the purge would pass for a thread it never had)
	in_ns "$T/plan.json" "$CODEX" exec --json --skip-git-repo-check resume "$id" "and again" </dev/null >"$T/resume.jsonl"
	grep -q '"text":"resumed"' "$T/resume.jsonl"
	home_state >"$T/after"

	run -0 --separate-stderr agc --json ls --children
	json_ok --arg id "$id" --arg w "$WORK" 'any(.[]; .agent == "codex" and .id == $id and .project == $w and .title == "write a file")'
	json_ok --arg id "$id" --arg c "$child" 'any(.[]; .agent == "codex" and .id == $c and .parent == $id)'

	run -0 --separate-stderr agc --json purge codex "$id"
	json_ok --arg id "$id" --arg c "$child" '.[0].status == "purged" and .[0].id == $id and .[0].children == [$c]'
	json_ok 'any(.[0].hints[]; test("thread_history_1.sqlite") and test("compact"))'
	# nothing the thread added survives; nothing that was there before changed (but Codex's
	# global files, see not_global)
	diff <(not_global <"$T/before") <(home_state | not_global)
	# and the thread added something: the purge had work to do
	run ! diff -q <(not_global <"$T/before") <(not_global <"$T/after") >/dev/null
	# not a byte of its text is left in any file but the main database files, where older
	# copies of rows Codex itself rewrote (an item's progress, the thread's times) can stay in
	# live pages: the report says so, and compact's rebuild clears them
	run ! grep -rlaF --exclude='*.sqlite' -e "$id" -e "$child" -e "write a file" "$CODEX_HOME"
	run -0 --separate-stderr agc compact --agent codex
	run ! grep -rlaF -e "$id" -e "$child" -e "write a file" "$CODEX_HOME"
	[[ -z $(find "$HOME" "$TMPDIR" "$T/systmp" -name "*$id*" -o -name "*$child*") ]]
	# Codex itself no longer finds it, and its store agrees with itself
	run ! in_ns "$T/plan.json" "$CODEX" exec --skip-git-repo-check resume "$id" "and again" </dev/null
	[[ $output == *"no rollout found for thread id $id"* ]]
	run -0 in_ns "$T/plan.json" "$CODEX" exec --json --skip-git-repo-check resume "$by" "and again" </dev/null
}

@test "codex exec in a stalled turn: its writer lock makes the thread in use with its pid, purge refuses with nothing changed; killed with SIGKILL, the stale lock is free and the purge completes" {
	write_plan
	codex_exec "$T/plan.json" "bystander thread"
	home_state >"$T/before"
	in_ns "$T/plan.json" "$CODEX" exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
		"hang here" </dev/null >"$T/exec.jsonl" 2>"$T/exec.err" &
	local bg=$! pid id lock i
	echo "$bg" >>"$T/pids"
	for i in $(seq 1 200); do
		grep -q '"stall"' "$T/mock.log" 2>/dev/null && break
		sleep 0.1
	done
	pid=$(cat "$T/codex.pid")
	echo "$pid" >>"$T/pids"
	id=$(jq -r 'select(.type == "thread.started") | .thread_id' "$T/exec.jsonl")
	lock=$CODEX_HOME/thread-writer-locks/$id.lock
	[[ -f $lock ]]
	# the rollout is there once the turn began
	for i in $(seq 1 50); do
		[[ -n $(find "$CODEX_HOME/sessions" -name "rollout-*-$id.jsonl") ]] && break
		sleep 0.1
	done

	run -4 --separate-stderr agc --json in-use codex "$id"
	json_ok --argjson p "$pid" '.[0].in_use and any(.[0].holders[]; .pid == $p and .why == "lock")'
	home_state >"$T/live"
	run -4 --separate-stderr agc --json purge codex "$id"
	json_ok --argjson p "$pid" '.[0].status == "in-use" and any(.[0].holders[]; .pid == $p)'
	diff "$T/live" <(home_state)

	kill -KILL "$pid"
	wait "$bg" || true
	# the lock file and the shell snapshot stay after SIGKILL; only the flock was the signal
	[[ -f $lock && -n $(find "$CODEX_HOME/shell_snapshots" -name "$id.*.sh") ]]
	run -0 --separate-stderr agc --json in-use codex "$id"
	json_ok '.[0].in_use == false'
	run -0 --separate-stderr agc --json purge --scrub codex "$id"
	json_ok --arg l "$lock" '.[0].status == "purged" and any(.[0].removed[]; .path == $l)'
	[[ ! -e $lock ]]
	[[ -z $(find "$HOME" "$TMPDIR" -name "*$id*") ]]
	run ! grep -rlaF -e "$id" -e "hang here" "$CODEX_HOME"
	diff <(not_global <"$T/before") <(home_state | not_global)
}

@test "a TUI thread renamed, forked and an archived thread: the fork refuses, --with-forks purges both, the archive goes, and codex's picker and doctor see no trace" {
	write_plan
	codex_exec "$T/plan.json" "bystander thread"
	local by=$THREAD tui fork arch
	home_state >"$T/before"
	tui_start "$T/plan.json" "for shortcuts"
	tui_type "first tui prompt"
	tui_wait "tui done"
	tui_type "/rename"
	tui_wait "Rename thread"
	tmux -S "$TMUX_SOCK" send-keys C-u
	tui_type "contract-renamed"
	tui_wait "· contract-renamed"
	tui_type "/quit"
	tui_wait "codex-exited"
	tui=$(grep -oE 'codex resume [0-9a-f-]{36}' "$T/screen" | cut -d' ' -f3)
	[[ -n $tui && $(cat "$WORK/by-tui.txt") == from-tui ]]
	tmux -S "$TMUX_SOCK" kill-server
	grep -qF "\"session_id\":\"$tui\"" "$CODEX_HOME/history.jsonl"
	grep -qF '"thread_name":"contract-renamed"' "$CODEX_HOME/session_index.jsonl"
	codex_exec "$T/plan.json" fork "$tui" "fork prompt"
	fork=$THREAD
	head -n 1 "$(find "$CODEX_HOME/sessions" -name "rollout-*-$fork.jsonl")" |
		jq -e --arg p "$tui" '.payload.history_base.thread_id == $p' >/dev/null
	codex_exec "$T/plan.json" "contract-archived-thread"
	arch=$THREAD
	in_ns "$T/plan.json" "$CODEX" archive "$arch" </dev/null
	[[ -n $(find "$CODEX_HOME/archived_sessions" -name "rollout-*-$arch.jsonl") ]]
	home_state >"$T/after"

	run -0 --separate-stderr agc --json ls
	json_ok --arg id "$tui" 'any(.[]; .id == $id and .title == "contract-renamed")'
	json_ok --arg id "$arch" 'any(.[]; .id == $id)'
	# the fork reads the TUI thread's rollout: refused, nothing changed
	run -4 --separate-stderr agc --json purge codex "$tui"
	json_ok --arg f "$fork" '.[0].status == "refused" and .[0].forks == [$f] and any(.[0].residual[]; .reason == "fork")'
	diff "$T/after" <(home_state)
	run -0 --separate-stderr agc --json purge --with-forks codex "$tui"
	json_ok --arg f "$fork" '.[0].status == "purged" and (.[0].children | index($f))'
	json_ok '[.[0].removed[] | select(.kind == "lines") | .path | split("/") | last] | sort == ["history.jsonl", "session_index.jsonl"]'
	# --scrub: Codex's own archive rewrote the row without secure_delete, leaving an older copy
	# of its index entries in a page that only a rebuild clears
	run -0 --separate-stderr agc --json purge --scrub codex "$arch"
	json_ok '.[0].status == "purged" and any(.[0].removed[]; .path | test("/archived_sessions/rollout-"))'

	diff <(not_global <"$T/before") <(home_state | not_global)
	run ! diff -q <(not_global <"$T/before") <(not_global <"$T/after") >/dev/null
	run ! grep -rlaF -e "$tui" -e "$fork" -e "$arch" -e "tui prompt" -e "contract-renamed" -e contract-archived-thread "$CODEX_HOME"
	[[ -z $(find "$HOME" "$TMPDIR" "$T/systmp" -name "*$tui*" -o -name "*$fork*" -o -name "*$arch*") ]]
	# Codex's own view: its doctor finds the rollouts and the database in agreement, one
	# thread left; its picker lists the bystander alone
	in_ns "$T/plan.json" "$CODEX" doctor --json </dev/null >"$T/doctor.json" || true
	jq -e '.checks["state.rollout_db_parity"] | .status == "ok" and .details["rollout DB rows"] == "1"' "$T/doctor.json" >/dev/null
	jq -e '.checks["state.paths"].status == "ok"' "$T/doctor.json" >/dev/null
	tui_start "$T/plan.json" "bystander thread" resume --all --include-non-interactive
	run ! grep -qE 'contract-renamed|tui prompt|contract-archived-thread|fork prompt' "$T/screen"
}

@test "codex delete --force and agentgc purge on identical homes: agentgc removes all that codex's delete removes, and what it leaves" {
	write_plan
	codex_exec "$T/plan.json" "bystander thread"
	local id sub
	tui_start "$T/plan.json" "for shortcuts"
	tui_type "second tui prompt"
	tui_wait "second done"
	tui_type "/quit"
	tui_wait "codex-exited"
	id=$(grep -oE 'codex resume [0-9a-f-]{36}' "$T/screen" | cut -d' ' -f3)
	tmux -S "$TMUX_SOCK" kill-server
	sub=$(jq -r 'select(.conversation == "tui sub-agent task") | .thread' "$T/mock.log" | sort -u | head -n 1)
	[[ -n $id && -n $sub && -n $(find "$CODEX_HOME/sessions" -name "rollout-*-$sub.jsonl") ]]
	cp -a "$HOME" "$T/pristine"
	home_state >"$T/before"

	# Codex's own delete, on the home as it is
	in_ns "$T/plan.json" "$CODEX" delete --force "$id" </dev/null
	home_state >"$T/codex"
	grep -rlaF -e "$id" -e "second tui prompt" "$CODEX_HOME" | sed "s|^$T/||" | sort >"$T/codex-left" || true
	# what it leaves (0.171.0): the prompt's history.jsonl line, the TUI's marker file, the text
	# in the WAL files
	grep -qx 'home/.codex/history.jsonl' "$T/codex-left"
	[[ -e $CODEX_HOME/tui-thread-reference-capabilities/$id ]]
	grep -q 'sqlite-wal$' "$T/codex-left"

	# agentgc's purge, on the same home as it was
	rm -rf "$HOME"
	cp -a "$T/pristine" "$HOME"
	diff "$T/before" <(home_state)
	run -0 --separate-stderr agc --json purge codex "$id"
	json_ok --arg s "$sub" '.[0].status == "purged" and .[0].children == [$s]'
	home_state >"$T/agentgc"
	# every entry codex's delete removed or changed (but Codex's global files) is gone after
	# agentgc's purge too
	comm -23 <(not_global <"$T/before") <(not_global <"$T/codex") >"$T/codex-removed"
	[[ -s $T/codex-removed ]]
	[[ -z $(comm -12 "$T/codex-removed" <(not_global <"$T/agentgc")) ]]
	# and agentgc leaves nothing of it outside the main database files (where the older copies
	# Codex's own updates left stay until a rebuild, as the report says)
	run ! grep -rlaF --exclude='*.sqlite' -e "$id" -e "$sub" -e "second tui prompt" "$CODEX_HOME"
	[[ -z $(find "$HOME" "$TMPDIR" "$T/systmp" -name "*$id*" -o -name "*$sub*") ]]
	# the rest is as it was (the shared files held only this thread's lines: now empty)
	diff <(not_global <"$T/before" | grep -vF -e "$id" -e "$sub" -e "second tui prompt" |
		grep -vE '^home/\.codex/(history|session_index)\.jsonl	') <(not_global <"$T/agentgc")
	[[ ! -s $CODEX_HOME/history.jsonl && ! -s $CODEX_HOME/session_index.jsonl ]]
}
