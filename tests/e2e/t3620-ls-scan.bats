#!/usr/bin/env bats
# ls through the read-only scanner and the head scanner (issue 8): sizes as find and stat
# count them, the same as show's (links looked through read-only, never removed through),
# mount points never entered (R3), and heads
# read field by field give the same project and title as a whole JSON parse; --limit keeps
# the same rows as a whole listing.

load lib

# "id<TAB>artifact" of each Claude session of manifest $1, and the artifacts that are there (or
# are links) in $BATS_TEST_TMPDIR/arts; PRED (a test) picks the artifacts find starts from.
arts_of_manifest() {
	local id a
	: >"$BATS_TEST_TMPDIR/arts"
	jq -r 'select(.agent == "claude") | .id as $id | ($id, (.artifacts[] | "\($id)\t\(.)"))' "$1" |
		while IFS= read -r a; do
			[[ $a == *$'\t'* ]] || { printf '%s\t\n' "$a"; continue; }
			printf '%s\n' "$a"
			[[ -e ${a#*$'\t'} || -L ${a#*$'\t'} ]] && printf '%s\n' "${a#*$'\t'}" >>"$BATS_TEST_TMPDIR/arts"
		done
}

# Sum find's figure (the first field of FORMAT, "%s" or "%b") over the entries below each
# artifact, per session: "id total" with total times MUL; sessions without one count 0.
sum_per_session() {
	local format=$1 mul=$2 types=$3 map=$BATS_TEST_TMPDIR/map starts
	arts_of_manifest "$4" >"$map"
	mapfile -t starts <"$BATS_TEST_TMPDIR/arts"
	{
		[[ ${#starts[@]} -eq 0 ]] || find "${starts[@]}" $types -printf "$format\t%H\n"
	} | awk -F'\t' -v mul="$mul" -v map="$map" '
		BEGIN {
			while ((getline l < map) > 0) {
				i = index(l, "\t"); id = substr(l, 1, i - 1); a = substr(l, i + 1)
				ids[id] = 1
				if (a != "") owner[a] = id
			}
		}
		{ i = index($0, "\t"); p = substr($0, i + 1); if (p in owner) t[owner[p]] += $1 }
		END { for (id in ids) printf "%s %.0f\n", id, t[id] * mul }'
}

# bytes of each Claude session of manifest $1 counted independently: st_size of the regular
# files under each artifact (find does not follow links), plus its lines of history.jsonl
want_bytes() {
	local id total h
	sum_per_session '%s' 1 '-type f' "$1" | while read -r id total; do
		h=$(grep -F "\"sessionId\":\"$id\"" "$C/history.jsonl" | awk '{t += length($0) + 1} END {print t + 0}')
		echo "$id $((total + h))"
	done | sort
}

# disk of each: st_blocks x 512 of every entry under each artifact, links as links
want_disk() {
	sum_per_session '%b' 512 '' "$1" | sort
}

@test "Sizes: ls --json of an adversarial home gives each session the bytes and disk find and stat count" {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3600 --claude 12 --full --adversarial \
		--titles 3 --manifest "$BATS_TEST_TMPDIR/m.jsonl" --quiet
	run -0 --separate-stderr agc --json ls --agent claude
	json_ok 'length > 12' # the adversarial cases come on top
	jq -r '"\(.id) \(.bytes)"' <<<"$output" | sort >"$BATS_TEST_TMPDIR/got"
	want_bytes "$BATS_TEST_TMPDIR/m.jsonl" >"$BATS_TEST_TMPDIR/want"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	jq -r '"\(.id) \(.disk)"' <<<"$output" | sort >"$BATS_TEST_TMPDIR/got"
	want_disk "$BATS_TEST_TMPDIR/m.jsonl" >"$BATS_TEST_TMPDIR/want"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

# SPEC "Sizes": one figure for ls and show. Discovery looks through a linked dir read-only
# (R2 keeps removal off it), and so does the listing: what show counts, ls counts.
@test "Sizes: a side file behind a linked project dir counts the same in ls and show; nothing is removed through the link" {
	local cwd id k
	cwd=$(mk_project app)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	k=$(pkey "$cwd")
	mv "$C/projects/$k" "$OUT/$k"
	ln -s "$OUT/$k" "$C/projects/$k"
	head -c 1048576 /dev/zero >"$OUT/$k/$id.ccr-tip.json"
	run -0 --separate-stderr agc --json ls
	json_ok '.[0].bytes > 1048576'
	local ls_bytes
	ls_bytes=$(jq -r '.bytes' <<<"$output")
	run -0 --separate-stderr agc --json show claude "$id"
	json_ok --argjson b "$ls_bytes" '.[0].bytes == $b'
	run -3 --separate-stderr agc --json purge claude "$id"
	[[ -f $OUT/$k/$id.ccr-tip.json && -f $OUT/$k/$id.jsonl ]]
}

@test "Sizes: a paste behind a linked paste-cache counts the same in ls and show" {
	local cwd id h
	cwd=$(mk_project app)
	id=$(new_uuid)
	mk_transcript "$id" "$cwd"
	h=$(mk_paste "pasted text")
	mk_history_line "$id" "$cwd" "first" "$h"
	mv "$C/paste-cache" "$OUT/paste-cache"
	ln -s "$OUT/paste-cache" "$C/paste-cache"
	head -c 1048576 /dev/zero >>"$OUT/paste-cache/$h.txt"
	run -0 --separate-stderr agc --json ls
	json_ok '.[0].bytes > 1048576'
	local ls_bytes
	ls_bytes=$(jq -r '.bytes' <<<"$output")
	run -0 --separate-stderr agc --json show claude "$id"
	json_ok --argjson b "$ls_bytes" '.[0].bytes == $b'
}

@test "R3: ls does not count what is mounted inside a session dir, nor a bind mount of a dir outside" {
	local cwd id k before
	cwd=$(mk_project app)
	id=$(new_uuid)
	mk_full_session "$id" "$cwd"
	k=$(pkey "$cwd")
	run -0 --separate-stderr agc --json ls
	before=$(jq -r '.bytes' <<<"$output")
	mkdir "$C/projects/$k/$id/mnt" "$C/file-history/$id/bound"
	head -c 2097152 /dev/zero >"$OUT/big"
	run -0 --separate-stderr agc --json ls
	json_ok --argjson b "$before" '.[0].bytes == $b'
	# in a private mount namespace: a tmpfs with a file, and a bind mount of OUT
	run -0 --separate-stderr unshare -m sh -c '
		mount --make-rprivate / &&
		mount -t tmpfs -o size=4m tmpfs "$1" && head -c 1048576 /dev/zero >"$1/onmnt" &&
		mount --bind "$2" "$3" && exec "$4" --json ls' sh \
		"$C/projects/$k/$id/mnt" "$OUT" "$C/file-history/$id/bound" "$AGENTGC"
	json_ok --argjson b "$before" '.[0].bytes == $b'
}

@test "Titles: heads read field by field: a nested or quoted cwd is not the session's, escapes decode, bad lines are skipped" {
	local cwd id k f long
	cwd=$(mk_project app)
	id=$(new_uuid)
	k=$(pkey "$cwd")
	mkdir -p "$C/projects/$k"
	f=$C/projects/$k/$id.jsonl
	long=$(head -c 300000 /dev/zero | tr '\0' 'x')
	{
		# an over-long line (skipped) naming another cwd and prompt
		printf '{"type":"user","message":{"content":"too long %s"},"cwd":"/long"}\n' "$long"
		# a line cut short (not JSON): skipped
		printf '{"type":"user","message":{"content":"cut"},"cwd":"/cut\n'
		# a cwd only in a sub-object and inside a string: neither is the session's
		printf '{"type":"system","data":{"cwd":"/nested"},"text":"\\"cwd\\":\\"/quoted\\""}\n'
		# a meta line: no title
		printf '{"type":"user","isMeta":true,"message":{"content":"meta text"},"timestamp":"2026-11-01T10:00:00.000Z"}\n'
		# the first prompt, with escapes; the cwd after the message
		printf '{"type":"user","message":{"role":"user","content":[{"type":"image"},{"type":"text","text":"caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ end"}]},"cwd":"%s","sessionId":"%s"}\n' \
			"$cwd" "$id"
		printf '{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]},"cwd":"/later"}\n'
	} >"$f"
	run -0 --separate-stderr agc --json ls
	json_ok --arg cwd "$cwd" '.[0].project == $cwd'
	json_ok '.[0].title == "café 😀 \"q\" \\ end"'
	json_ok '.[0].created == "2026-11-01T10:00:00Z"'
	# an escaped key is decoded as jansson decodes it: "c\u0077d" is "cwd"
	printf '{"type":"x","c\\u0077d":"/escaped/key"}\n' >"$f.new"
	cat "$f" >>"$f.new"
	mv "$f.new" "$f"
	run -0 --separate-stderr agc --json ls
	json_ok '.[0].project == "/escaped/key"'
}

@test "--limit: the rows shown are the first N of the whole listing, for every sort" {
	rm -rf "$HOME" "$TMPDIR"
	"$AGENTGC_FIXTURE" --home "$HOME" --tmp "$TMPDIR" --seed 3601 --claude 60 --projects 4 --quiet
	local sort
	for sort in updated created size; do
		run -0 --separate-stderr agc --json ls --sort "$sort"
		jq -c . <<<"$output" | head -n 7 >"$BATS_TEST_TMPDIR/all"
		run -0 --separate-stderr agc --json ls --sort "$sort" --limit 7
		jq -c . <<<"$output" >"$BATS_TEST_TMPDIR/limited"
		diff "$BATS_TEST_TMPDIR/all" "$BATS_TEST_TMPDIR/limited"
	done
}
