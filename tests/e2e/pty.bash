# Helpers of the output tests (t32xx-output-*.bats), loaded after lib.bash: a pseudo-terminal
# of a given width (util-linux script) and the display width of what agentgc printed.

# pty_run COLS CMD...: run CMD on a pseudo-terminal COLS columns wide; its stdout (the
# terminal's carriage returns removed) in $output, its stderr in $PTY_ERR, its exit code in
# $status, its lines in $lines. The environment is the test's (TERM, NO_COLOR and COLUMNS as the test sets them).
pty_run() {
	local cols=$1 cmd
	shift
	command -v script >/dev/null || skip "script (util-linux) is not installed: no pseudo-terminal"
	PTY_ERR=$BATS_TEST_TMPDIR/pty.err
	printf -v cmd '%q ' "$@"
	status=0
	output=$(script -qec "stty cols $cols rows 50; $cmd 2>$(printf %q "$PTY_ERR")" /dev/null </dev/null) ||
		status=$?
	output=${output//$'\r'/}
	mapfile -t lines <<<"$output"
}

# The widest line of stdin in terminal columns: UTF-8 decoded (invalid UTF-8 fails), colour
# escapes (ESC [ ... m) not counted, East Asian wide and fullwidth characters 2 columns.
widest() {
	perl -CS -Mutf8 -e '
		binmode(STDIN, ":raw");
		my $max = 0;
		while (my $l = <STDIN>) {
			chomp $l;
			utf8::decode($l) or die "not valid UTF-8: $l\n";
			$l =~ s/\e\[[0-9;]*m//g;
			my $w = length($l);
			$w++ while $l =~ /[\p{Ea=W}\p{Ea=F}]/g;
			$max = $w if $w > $max;
		}
		print "$max\n";'
}

# Fail unless no line of $output is wider than COLS columns.
assert_fits() {
	local w
	w=$(widest <<<"$output")
	((w <= $1)) || { printf 'a line is %s columns wide, more than %s:\n%s\n' "$w" "$1" "$output" >&2; return 1; }
}
