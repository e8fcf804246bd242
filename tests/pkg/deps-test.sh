#!/bin/sh
# scripts/deps.sh, which make demo and make check run first: with a package missing, a
# normal user gets the one line to run as root, and root gets it installed with apt-get.
# dpkg-query, apt-get and sudo are stand-ins on PATH that say `jq` is not installed and
# record what they were asked; nothing is installed.
#   tests/pkg/deps-test.sh
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agc-deps.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
chmod 755 "$scratch"
# a copy the unprivileged user can read wherever the source is
deps=$scratch/deps.sh
cp "$src/scripts/deps.sh" "$deps"
chmod 644 "$deps"
n=0
fail() {
	echo "not ok: $*" >&2
	exit 1
}
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

bin=$scratch/bin
mkdir -p "$bin"
cat >"$bin/dpkg-query" <<'SH'
#!/bin/sh
# dpkg-query -W -f='${Status}' PACKAGE
[ "$3" = jq ] && { echo "dpkg-query: no packages found matching jq" >&2; exit 1; }
printf 'install ok installed'
SH
cat >"$bin/apt-get" <<SH
#!/bin/sh
echo "apt-get \$*" >>"$scratch/log"
SH
cat >"$bin/sudo" <<'SH'
#!/bin/sh
exit 1
SH
chmod 755 "$bin"/*
: >"$scratch/log"
chmod 666 "$scratch/log"

# a normal user (uid 65534 when this runs as root)
if [ "$(id -u)" -eq 0 ]; then
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
	as_user=""
fi
rc=0
# shellcheck disable=SC2086 # as_user: a command prefix or nothing
out=$(PATH="$bin:$PATH" $as_user sh "$deps" 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "as a normal user: exit $rc, not 1: $out"
[ "$out" = "deps.sh: missing packages; run as root:
  apt-get update && apt-get install -y --no-install-recommends jq" ] || fail "as a normal user: $out"
[ ! -s "$scratch/log" ] || fail "as a normal user apt-get ran: $(cat "$scratch/log")"
ok "as a normal user: the exact apt-get line, exit 1, nothing run"

rc=0
out=$(PATH="$bin:$PATH" sh "$deps" --check 2>&1) || rc=$?
[ "$rc" -eq 1 ] && [ "$out" = "deps.sh: missing: jq" ] || fail "--check: exit $rc: $out"
[ ! -s "$scratch/log" ] || fail "--check ran apt-get"
ok "--check names what is missing, installs nothing"

if [ "$(id -u)" -eq 0 ]; then
	out=$(PATH="$bin:$PATH" sh "$deps" 2>&1) || fail "as root: $out"
	[ "$out" = "deps.sh: installing: jq" ] || fail "as root: $out"
	[ "$(cat "$scratch/log")" = "apt-get update -qq
apt-get install -y -qq --no-install-recommends jq" ] || fail "as root, apt-get was run as: $(cat "$scratch/log")"
	ok "as root: apt-get update, then apt-get install of what is missing"
fi
echo "$n passed, 0 failed"
