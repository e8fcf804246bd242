# What the contract tests share: the network namespace an agent runs in, agentgc, and the
# check of its JSON output.

# The unshare option that runs an agent in a network namespace of its own, with only
# loopback: -rn (a user namespace with it) where unprivileged namespaces are allowed, else
# -n as root (a chroot refuses user namespaces even to root; root needs none). Prints it, or
# fails when neither can be made.
netns_flags() {
	if unshare -rn true 2>/dev/null; then
		printf '%s\n' -rn
	elif [[ $(id -u) == 0 ]] && unshare -n true 2>/dev/null; then
		printf '%s\n' -n
	else
		return 1
	fi
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
