#!/usr/bin/env bats
# stop (SPEC "ps and stop"): the in-use gate's holders that are the agent's own processes get
# the agent's graceful signal (Claude: SIGHUP), then SIGTERM, then SIGKILL after --grace; a
# process that merely names the id and a shared service are never signalled; a pid that is
# another process now is left alone; then the gate again: still in use is exit 4, "records
# preserved", and nothing of the session changed.

load lib

setup() {
	agc_setup
	CWD=$(mk_project)
	ID=$(new_uuid)
	mk_transcript "$ID" "$CWD"
	T=$C/projects/$(pkey "$CWD")/$ID.jsonl
}

alive() { kill -0 "$1" 2>/dev/null && [[ $(sed 's/.*) //' "/proc/$1/stat" | cut -c1) != Z ]]; }

@test "stop: an agent process that ignores SIGHUP and SIGTERM is killed after the grace; one that names the id but is no agent is never signalled" {
	local agent other
	spawn_as claude -e '$SIG{HUP} = $SIG{TERM} = "IGNORE"; sleep 1000' -- --resume "$ID"
	agent=$LAST_PID
	spawn_argv --resume "$ID"
	other=$LAST_PID
	snap before
	run -4 --separate-stderr agc --json stop claude "$ID" --grace 1s
	json_ok --argjson a "$agent" --argjson o "$other" '.[0].status == "in-use"
		and (.[0].chain | any(.pid == $a and .action == "stop" and .signals == ["SIGHUP","SIGTERM","SIGKILL"] and .result == "killed"))
		and (.[0].chain | any(.pid == $o and .action == "spare" and .signals == [] and .role == "holder"))
		and (.[0].holders | map(.pid) == [$o])'
	! alive "$agent"
	alive "$other"
	# the records are preserved: nothing of the session changed
	assert_tree_unchanged before
	run -4 --separate-stderr agc stop claude "$ID" --grace 1s
	[[ $output == *"spared"*"records preserved"* ]]
	[[ $stderr == *"pid $other: not one of the agent's processes"*"never signalled"* ]]
	# once the other process is gone, the session is free and a purge takes it
	kill_tree "$other"
	wait "$other" 2>/dev/null || true
	run -0 agc stop claude "$ID"
	[[ $output == *"free"* ]]
	run -0 agc purge claude "$ID"
	assert_gone "$T"
}

@test "stop: Claude gets SIGHUP first; a process that ends on it gets nothing more, then purge succeeds" {
	local got=$BATS_TEST_TMPDIR/got
	spawn_as claude -e "\$SIG{HUP} = sub { unlink '$C/sessions/'.\$\$.'.json'; open my \$f, '>', '$got'; print \$f 'HUP'; exit 0 }; \$SIG{TERM} = sub { open my \$f, '>>', '$got'; print \$f 'TERM'; exit 0 }; sleep 1000"
	mk_registry "$LAST_PID" "$ID"
	run -4 agc in-use claude "$ID"
	run -0 --separate-stderr agc --json stop claude "$ID" --grace 5s
	json_ok --argjson a "$LAST_PID" '.[0].status == "stopped" and (.[0].chain | any(.pid == $a and .why == "registry"
		and .role == "agent" and .signals == ["SIGHUP"] and .result == "exited")) and .[0].holders == []'
	[[ $(cat "$got") == HUP ]]
	[[ ! -e $C/sessions/$LAST_PID.json ]]
	run -0 agc purge claude "$ID"
	assert_gone "$T"
}

@test "stop: a registry whose pid now belongs to another process (another start time) is never signalled" {
	# a process of Claude's name, not the one the registry was written for
	spawn_as claude -e 'sleep 1000' --
	mk_registry "$LAST_PID" "$ID" 1
	run -0 --separate-stderr agc --json stop claude "$ID" --grace 1s
	json_ok '.[0].status == "free" and .[0].chain == []'
	alive "$LAST_PID"
}

@test "stop --dry-run: prints the chain and signals nothing" {
	spawn_as claude -e 'sleep 1000' -- --resume "$ID"
	run -0 --separate-stderr agc stop --dry-run claude "$ID" --grace 3s
	[[ $output == *"pid $LAST_PID (cmdline): would get SIGHUP, then SIGTERM, then SIGKILL"* ]]
	[[ $output == *"3.000s after the first"* ]]
	alive "$LAST_PID"
	run -0 --separate-stderr agc --json stop --dry-run claude "$ID"
	json_ok --argjson a "$LAST_PID" '.[0].status == "dry-run" and (.[0].chain[0] | .pid == $a and .result == "dry-run"
		and .signals == ["SIGHUP","SIGTERM","SIGKILL"]) and (.[0].holders | length) == 1'
	alive "$LAST_PID"
	# with a holder that would be spared, the dry run says the session would stay in use
	spawn_argv --resume "$ID"
	run -4 --separate-stderr agc stop --dry-run claude "$ID"
	alive "$LAST_PID"
	run -4 agc in-use claude "$ID"
}

@test "stop: an OpenCode session held only by 'serve --service' signals nothing and says how to release it" {
	oc_small_home
	local db=$HOME/.local/share/opencode/opencode.db
	spawn_as opencode -e 'sleep 1000' serve --service 4<"$db"
	wait_fd_open "$LAST_PID" "$db"
	run -0 --separate-stderr agc --json stop opencode "$S" --grace 1s
	json_ok --argjson p "$LAST_PID" '.[0].status == "free" and (.[0].chain | length) == 1
		and (.[0].chain[0] | .pid == $p and .role == "service" and .action == "spare" and .signals == [] and .why == "serves"
		and (.hint | test("never stopped")))'
	alive "$LAST_PID"
	run -0 --separate-stderr agc stop opencode "$S"
	[[ $output == *"pid $LAST_PID (serves): spared"* ]]
	[[ $stderr == *"OpenCode's service"* ]]
}

@test "stop: Codex's app-server daemon holding a thread's lock is spared, with the command that releases it" {
	need_fixture
	rm -rf "$HOME"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --codex 1 --now "$NOW" --quiet
	mkdir -p "$TMPDIR"
	local T lockf
	T=$(agc ls --agent codex --ids | head -n1)
	lockf=$HOME/.codex/thread-writer-locks/$T.lock
	mkdir -p "$(dirname "$lockf")"
	: >"$lockf"
	spawn_as codex -e 'use Fcntl ":flock"; open my $f, "<", $ARGV[0] or die; flock($f, LOCK_EX) or die; sleep 1000' \
		"$lockf" app-server --listen unix:// --managed-daemon
	for _ in $(seq 1 100); do grep -q " $(stat -c %i "$lockf") " <(sed 's/:/ /g' /proc/locks) && break; sleep 0.05; done
	run -4 --separate-stderr agc --json stop codex "$T" --grace 1s
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and any(.[0].chain[]; .pid == $p and .role == "service"
		and .action == "spare" and .signals == [] and (.hint | test("codex app-server daemon stop"))) and
		all(.[0].chain[]; .signals == [])'
	# /proc/locks names the lock's holder: the daemon is the whole chain; ps and lsof have no
	# lock table (nor has macOS), so the lock is held by a process out of sight as well
	[[ ${AGENTGC_PROC_BACKEND:-} == ps ]] || json_ok '(.[0].chain | length) == 1'
	alive "$LAST_PID"
}

@test "stop: not found, a prefix, a bad grace, a missing id" {
	run -5 --separate-stderr agc stop claude "$(new_uuid)"
	run -5 --separate-stderr agc stop claude "${ID:0:8}"
	[[ $stderr == *"stop takes whole ids only"* ]]
	run -2 --separate-stderr agc stop claude "$ID" --grace forever
	run -2 --separate-stderr agc stop claude "$ID" --grace 2h
	run -2 --separate-stderr agc stop claude
	run -0 agc stop --help
	[[ $output == *"SIGKILL"* ]]
}

# What counts as live for the gate but proves nothing about the process is never a reason to
# signal it (found by review): each case is in use, and stop spares the process.
assert_spared() {
	local pid=$1 hint=$2
	run -4 --separate-stderr agc --json stop claude "$ID" --grace 1s
	json_ok --argjson p "$pid" --arg h "$hint" '.[0].status == "in-use"
		and (.[0].chain | any(.pid == $p and .action == "spare" and .signals == [] and (.hint | contains($h))))'
	alive "$pid"
}

@test "stop: agentgc's own ancestor holding the session (a tool of it ran agentgc) is never signalled" {
	local out=$BATS_TEST_TMPDIR/stop.json
	mkdir -p "$C/sessions"
	# a Claude process that registers itself, keeps the transcript open, then runs stop on its
	# own session as one of its tools would
	spawn_as claude -e '
		my ($reg, $t, $out, @cmd) = @ARGV;
		open my $s, "<", "/proc/$$/stat" or die; my $st = <$s>; $st =~ s/.*\) //;
		my $ps = (split / /, $st)[19];
		open my $r, ">", "$reg/$$.json" or die;
		print $r "{\"pid\":$$,\"sessionId\":\"'"$ID"'\",\"procStart\":\"$ps\",\"status\":\"busy\"}";
		close $r;
		open my $keep, "<", $t or die;
		system("@cmd > $out 2>/dev/null; echo \$? >> $out.rc");
		sleep 1000' "$C/sessions" "$T" "$out" "$AGENTGC" --json stop claude "$ID" --grace 1s
	for _ in $(seq 1 200); do [[ -s $out.rc ]] && break; sleep 0.05; done
	[[ $(cat "$out.rc") == 4 ]]
	jq -e --argjson p "$LAST_PID" '.chain | any(.pid == $p and .action == "spare" and (.hint | contains("agentgc runs inside it")))' "$out"
	alive "$LAST_PID"
}

@test "stop: a registry that cannot prove its pid (another pid namespace, unparseable, no start time) signals nothing" {
	spawn_as claude -e 'sleep 1000'
	local p=$LAST_PID
	mk_registry_raw "$p" "{\"pid\":$p,\"sessionId\":\"$ID\",\"pidDomain\":\"linux:elsewhere:pid:[1]\",\"procStart\":\"$(proc_start "$p")\"}"
	assert_spared "$p" "nothing proves"
	mk_registry_raw "$p" "{\"pid\":$p,\"sessionId\":\"$ID\",\"status\":\"bu"
	assert_spared "$p" "nothing proves"
	mk_registry_raw "$p" "{\"pid\":$p,\"sessionId\":\"$ID\",\"startedAt\":\"yesterday\"}"
	assert_spared "$p" "nothing proves"
	mk_registry_raw "$p" "{\"pid\":$p,\"sessionId\":\"$ID\",\"procStart\":\"+$(proc_start "$p")\"}"
	assert_spared "$p" "nothing proves"
	# the same process proven by its start time is stopped
	mk_registry "$p" "$ID"
	run -0 --separate-stderr agc --json stop claude "$ID" --grace 1s
	! alive "$p"
}

@test "stop: a Claude process running another session, or only at the project, or with an inherited environment, is spared" {
	local other
	other=$(new_uuid)
	mk_transcript "$other" "$CWD"
	# resumed with the id, then /clear: its proven registry entry says it runs another session
	spawn_as claude -e 'sleep 1000' -- --resume "$ID"
	mk_registry "$LAST_PID" "$other"
	assert_spared "$LAST_PID" "runs another session"
	kill_tree "$LAST_PID"
	rm -f "$C/sessions/$LAST_PID.json"
	# the id in a prompt, not as the session it resumes
	spawn_as claude -e 'sleep 1000' -- -p "compare with session $ID"
	assert_spared "$LAST_PID" "no --resume of it"
	kill_tree "$LAST_PID"
	# no registry, at the project, the transcript fresh: live for the gate, no proof for stop
	touch "$T"
	spawn_in_dir "$CWD" claude
	assert_spared "$LAST_PID" "nothing proves"
	kill_tree "$LAST_PID"
	# a nested claude that inherited the session's tool environment
	touch -d "@$((NOW - 7200))" "$T"
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -sf "$(command -v perl)" "$BATS_TEST_TMPDIR/bin/claude"
	spawn env CLAUDE_CODE_SESSION_ID="$ID" "$BATS_TEST_TMPDIR/bin/claude" -e 'sleep 1000'
	wait_exec "$LAST_PID" "claude -e"
	assert_spared "$LAST_PID" "nothing proves"
}

@test "stop: an OpenCode process that has only the shared database open is spared" {
	oc_small_home
	local db=$HOME/.local/share/opencode/opencode.db
	spawn_as opencode -e 'sleep 1000' 4<"$db"
	wait_fd_open "$LAST_PID" "$db"
	run -4 --separate-stderr agc --json stop opencode "$S" --grace 1s
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and (.[0].chain[0] | .pid == $p and .action == "spare"
		and (.hint | contains("a database every session shares")))'
	alive "$LAST_PID"
	# named on its command line, it is stopped
	spawn_as opencode -e 'sleep 1000' -- --session "$S" 4<"$db"
	local named=$LAST_PID
	run -4 --separate-stderr agc --json stop opencode "$S" --grace 1s
	json_ok --argjson p "$named" '.[0].chain | any(.pid == $p and .action == "stop" and .signals == ["SIGTERM"] and .result == "exited")'
	! alive "$named"
}

@test "stop: a Codex process that only holds the writer lock (its pid may be stale in the lock table) is spared" {
	need_fixture
	rm -rf "$HOME"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --claude 0 --codex 1 --now "$NOW" --quiet
	mkdir -p "$TMPDIR"
	local X lockf
	X=$(agc ls --agent codex --ids | head -n1)
	lockf=$HOME/.codex/thread-writer-locks/$X.lock
	mkdir -p "$(dirname "$lockf")"
	: >"$lockf"
	spawn_as codex -e 'use Fcntl ":flock"; open my $f, "<", $ARGV[0] or die; flock($f, LOCK_EX) or die; sleep 1000' "$lockf"
	for _ in $(seq 1 100); do grep -q " $(stat -c %i "$lockf") " <(sed 's/:/ /g' /proc/locks) && break; sleep 0.05; done
	run -4 --separate-stderr agc --json stop codex "$X" --grace 1s
	json_ok --argjson p "$LAST_PID" '.[0].chain | any(.pid == $p and .action == "spare" and (.hint | contains("a lock")))'
	alive "$LAST_PID"
}

@test "stop: as root, another user's agent process is never signalled" {
	[[ $(id -u) == 0 ]] || skip "only root can signal another user's process"
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -sf "$(command -v perl)" "$BATS_TEST_TMPDIR/bin/claude"
	chmod o+rx "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/bin"
	spawn setpriv --reuid=65534 --regid=65534 --clear-groups "$BATS_TEST_TMPDIR/bin/claude" -e 'sleep 1000' -- --resume "$ID"
	wait_exec "$LAST_PID" "claude -e"
	assert_spared "$LAST_PID" "another user"
}
