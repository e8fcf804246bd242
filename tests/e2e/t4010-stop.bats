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
	json_ok --argjson p "$LAST_PID" '.[0].status == "in-use" and (.[0].chain[0] | .pid == $p and .role == "service"
		and .action == "spare" and .signals == [] and (.hint | test("codex app-server daemon stop")))'
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
