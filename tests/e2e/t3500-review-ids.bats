#!/usr/bin/env bats
# Regressions found by attacking the usability work: an id the grammar takes is the session of
# that id, never the prefix of another (R5: in-use must not answer for a different session);
# a sub-agent is found only in real dirs of its parent (R2); a sub-agent's refusal gives one
# piece of advice; ls, show and the dry run give a sub-agent one size (SPEC "Sizes").

load lib
load oc

@test "R5: a whole OpenCode id that is also the start of a longer one is that session: in-use answers for it, not the other" {
	oc_fixture --opencode 2 --seed 3501
	local base
	base=$(m_pick 'true')
	# a session that is only rows (not listed), and a listed session whose id starts with its id
	sqlite3 "$DB" "insert into session select 'ses_abcdefghij', project_id, workspace_id, NULL, slug,
		directory, path, 'the other one', version, share_url, summary_additions, summary_deletions,
		summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning,
		tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created,
		time_updated, time_compacting, time_archived from session where id = '$base';
		insert into message values ('msg_orphan1', 'ses_abcdefgh', 1, 1, '{}');"
	spawn_cmdline_holder ses_abcdefgh
	run -4 --separate-stderr agc in-use opencode ses_abcdefgh
	[[ $output == *"ses_abcdefgh: in use"* && $output != *ses_abcdefghij* ]]
	run -4 --separate-stderr agc --json in-use opencode ses_abcdefgh
	[[ $output == *'"id":"ses_abcdefgh"'* ]]
	run -0 --separate-stderr agc --json show opencode ses_abcdefgh
	[[ $output == *'"id":"ses_abcdefgh"'* && $output != *ses_abcdefghij* ]]
	# the longer id is still reached by a prefix that is not an id of its own
	run -0 --separate-stderr agc --json show opencode ses_abcdefghi
	[[ $output == *'"id":"ses_abcdefghij"'* ]]
}

# A process whose command line names ID (as `opencode run --session ID` would).
spawn_cmdline_holder() {
	spawn python3 -c 'import time; time.sleep(600)' opencode run --session "$1"
	sleep 0.3
}

@test "R2: a sub-agent behind a linked session dir is not found through the link; its parent's purge removes the link alone" {
	local p k s a o
	p=$(mk_project p)
	k=$(pkey "$p")
	s=$(new_uuid)
	a=a1111111111111111
	o=$OUT/fake
	mkdir -p "$o/subagents" "$C/projects/$k"
	printf '{"isSidechain":true,"agentId":"%s","type":"user","message":{"role":"user","content":"x"},"timestamp":"2026-11-20T00:00:00.000Z","sessionId":"%s","cwd":"%s"}\n' \
		"$a" "$s" "$p" >"$o/subagents/agent-$a.jsonl"
	ln -s "$o" "$C/projects/$k/$s"
	snap before
	run -5 --separate-stderr agc show claude "$a"
	run -5 --separate-stderr agc in-use claude "$a"
	run -5 --separate-stderr agc purge claude "$a"
	assert_tree_unchanged before
	[ -f "$o/subagents/agent-$a.jsonl" ]
}

@test "Hints: refusing a sub-agent's purge says to purge its parent, and never to run the same purge again" {
	local S P a=a00000000000000ff
	S=$(new_uuid)
	P=$(mk_project p)
	mk_full_session "$S" "$P"
	snap before
	run -4 --separate-stderr agc purge claude "$a"
	[[ $stderr == *"agentgc purge claude $S"* ]]
	[[ $stderr != *"run the same purge again"* ]]
	assert_tree_unchanged before
}

@test "Sizes: a sub-agent has one bytes figure in ls, show and the dry run (its meta and todos files too)" {
	local S P a=a00000000000000ff f lsb showb
	S=$(new_uuid)
	P=$(mk_project p)
	mk_full_session "$S" "$P"
	f=$(ls "$C/projects/$(pkey "$P")/$S/subagents/"*/agent-$a.jsonl)
	printf '{"agentType":"x"}' >"${f%.jsonl}.meta.json"
	printf '[{"content":"x"}]' >"$C/todos/$S-agent-$a.json"
	run -0 --separate-stderr agc --json ls --children
	lsb=$(jq -r --arg a "$a" 'select(.id == $a) | .bytes' <<<"$output")
	run -0 --separate-stderr agc --json show claude "$a"
	showb=$(jq -r '.bytes' <<<"$output")
	[ -n "$lsb" ] && [ "$lsb" -gt 0 ]
	[ "$lsb" = "$showb" ]
	# the three files show counts are the ones the refused purge names
	run -4 --separate-stderr agc --json purge --dry-run claude "$a"
	[ "$(jq '[.residual[] | select(.reason == "parent")] | length' <<<"$output")" -eq 3 ]
}
