#!/usr/bin/env bats
# Promise 1 and 2 on a generated home (agentgc-fixture): each session's purge removes exactly
# the artifacts its manifest line lists (R4, R7), leaves what lies behind links (R2), what the
# manifest keeps, and every other session; a live one is refused (R5).

load lib

setup() {
	agc_setup
	need_fixture
	# the fixture makes the home and its temp root itself, and puts link targets in a
	# sibling of the home
	rm -rf "$HOME" "$TMPDIR" "$OUT"
	OUT=$HOME-outside
	MANIFEST=$BATS_TEST_TMPDIR/manifest.jsonl
	spawn sleep 1000
	LIVE_PID=$LAST_PID
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 11 --claude 6 --projects 3 \
		--full --adversarial --stale 2 --live 1 --live-pid "$LIVE_PID" --long-keys 1 \
		--now "$NOW" --manifest "$MANIFEST" --quiet
	jq -e -s 'length > 6 and (last | has("summary"))' "$MANIFEST" >/dev/null
}

sessions() { jq -c 'select(has("id"))' "$MANIFEST"; }

@test "R4+R7: purging each generated session removes exactly its manifest artifacts" {
	local line id name kase reg want gone keep h
	while IFS= read -r line; do
		id=$(jq -r .id <<<"$line")
		name=$(jq -r '.id_upper // .id' <<<"$line")
		kase=$(jq -r '.case // "none"' <<<"$line")
		reg=$(jq -r '.registry.kind // "none"' <<<"$line")
		case $kase/$reg in
		*/live) want=4 ;;
		temp-key-link/* | behind-link/*) want=3 ;;
		*) want=0 ;;
		esac
		snap before
		grep -v "\"sessionId\":\"$id\"" "$C/history.jsonl" >"$BATS_TEST_TMPDIR/history.expected" || true
		run --separate-stderr agc --json purge claude "$name"
		if [[ $status -ne $want ]]; then
			echo "session $id ($kase/$reg): exit $status, expected $want" >&2
			echo "$output" >&2
			return 1
		fi
		if [[ $want -eq 4 ]]; then
			assert_tree_unchanged before
			continue
		fi
		mapfile -t gone < <(jq -r '(.artifacts - .behind_link)[]' <<<"$line")
		SNAP_EXCLUDE=$C/history.jsonl assert_tree_minus before "${gone[@]}" ||
			{ echo "session $id ($kase): tree differs" >&2; return 1; }
		cmp "$BATS_TEST_TMPDIR/history.expected" "$C/history.jsonl" ||
			{ echo "session $id ($kase): history.jsonl differs" >&2; return 1; }
		mapfile -t keep < <(jq -r '.keep[]' <<<"$line")
		[[ ${#keep[@]} -eq 0 ]] || assert_exists "${keep[@]}"
		# what lies behind a link is reported with reason symlink
		while IFS= read -r h; do
			jq -e -s --arg p "$h" '.[0].residual | any(.path == $p and .reason == "symlink")' <<<"$output" >/dev/null ||
				{ echo "session $id: $h not reported as residual symlink" >&2; echo "$output" >&2; return 1; }
		done < <(jq -r '.behind_link[]' <<<"$line")
	done < <(sessions)
	# what the home as a whole keeps is still there
	mapfile -t keep < <(jq -r 'select(has("summary")) | .summary.keep[]' "$MANIFEST")
	assert_exists "${keep[@]}"
}

@test "ls: every generated root session is listed once, with its manifest title and project" {
	run -0 --separate-stderr agc --json ls
	local line id
	while IFS= read -r line; do
		id=$(jq -r .id <<<"$line")
		jq -e -s --argjson m "$line" \
			'map(select(.id == $m.id)) | length == 1 and .[0].project == $m.project and .[0].title == $m.title' \
			<<<"$output" >/dev/null || { echo "ls: $id wrong or missing: $line" >&2; echo "$output" >&2; return 1; }
	done < <(sessions | jq -c 'select(.case != "behind-link")')
	json_ok 'all(.parent == null)'
	# newest first
	json_ok 'map(.updated) == (map(.updated) | sort | reverse)'
}

@test "ls --children: every generated sub-agent, nested ones too, is listed with its parent" {
	run -0 --separate-stderr agc --json ls --children
	local line
	while IFS= read -r line; do
		# a nested sub-agent's parent is the session or the sub-agent that started it
		jq -e -s --argjson m "$line" '
			. as $rows | $m.subagents | all(. as $a |
				$rows | any(.id == $a and (.parent as $p | [$m.id] + $m.subagents | index($p) != null)))' \
			<<<"$output" >/dev/null ||
			{
				echo "sub-agents of $(jq -c '{id, subagents}' <<<"$line") missing; ls --children has:" >&2
				jq -c '{id, parent}' <<<"$output" >&2
				return 1
			}
	done < <(sessions | jq -c 'select(.case != "behind-link" and (.subagents | length) > 0)')
}

@test "R5: the generated live session is in use; the stale ones are free" {
	local id
	id=$(sessions | jq -r 'select(.registry.kind == "live") | .id' | head -n1)
	run -4 agc in-use claude "$id"
	for id in $(sessions | jq -r 'select(.registry.kind == "stale") | .id'); do
		run -0 agc in-use claude "$id"
	done
}
