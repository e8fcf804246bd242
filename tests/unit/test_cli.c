/* Unit tests of the command line's output helpers (src/cli/util.c), SPEC "Output": a string
 * from agent data reaches a terminal with every control, escape sequence and bidirectional
 * control neutralised and invalid UTF-8 shown as bytes; in JSON it keeps its key, invalid
 * bytes as U+FFFD, with <key>_bytes holding the exact bytes in base64. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

static char *last_text, *last_path; /* the previous results, freed on the next call */

/* What cli_text prints for in with flags; the returned length is checked against it. */
static char *text(const char *in, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	n = cli_text(f, in, flags);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(n, len);
	free(last_text);
	last_text = buf;
	return buf;
}

static char *path(const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_path(f, in);
	assert_int_equal(fclose(f), 0);
	free(last_path);
	last_path = buf;
	return buf;
}

static void test_text_plain(void **state)
{
	(void)state;
	assert_string_equal(text("fix the build", 0), "fix the build");
	/* UTF-8 that drives nothing is kept: accents, CJK, emoji */
	assert_string_equal(text("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 0), "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
	assert_true(cli_text_safe("caf\xc3\xa9 \xf0\x9f\x98\x80"));
	assert_string_equal(text("", 0), "");
}

static void test_text_controls(void **state)
{
	(void)state;
	/* an OSC setting the window title and a CSI clearing the screen */
	assert_string_equal(text("\x1b]0;pwned\x07\x1b[2J", 0), "\\x1b]0;pwned\\x07\\x1b[2J");
	assert_string_equal(text("a\x7f" "b", 0), "a\\x7fb");
	assert_string_equal(text("a\nb\tc\rd", 0), "a\\x0ab\\x09c\\x0dd");
	assert_string_equal(text("a\nb\tc\rd", CLI_TEXT_LINE), "a b c d");
	/* C1: U+009B is a CSI by itself, U+0085 a line break */
	assert_string_equal(text("\xc2\x9b" "31m \xc2\x85", 0), "\\u009b31m \\u0085");
	assert_string_equal(text("\xc2\x80\xc2\x9f\xc2\xa0", 0), "\\u0080\\u009f\xc2\xa0");
	assert_false(cli_text_safe("\x1b"));
	assert_false(cli_text_safe("\xc2\x9b"));
}

static void test_text_bidi(void **state)
{
	(void)state;
	assert_string_equal(text("\xe2\x80\xae" "gnp.exe", 0), "\\u202egnp.exe");
	assert_string_equal(text("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0),
			    "\\u202a\\u202b\\u202c\\u202d");
	assert_string_equal(text("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 0),
			    "\\u2066\\u2067\\u2068\\u2069");
	assert_string_equal(text("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 0), "\\u200e\\u200f\\u061c");
	assert_string_equal(text("\xe2\x80\xa8\xe2\x80\xa9", 0), "\\u2028\\u2029");
	/* neighbours are kept: U+202F (narrow no-break space), U+2065, U+200D (ZWJ) */
	assert_string_equal(text("\xe2\x80\xaf\xe2\x81\xa5\xe2\x80\x8d", 0), "\xe2\x80\xaf\xe2\x81\xa5\xe2\x80\x8d");
	assert_false(cli_text_safe("\xe2\x80\xae"));
}

static void test_text_invalid_utf8(void **state)
{
	(void)state;
	assert_string_equal(text("caf\xe9", 0), "caf\\xe9");
	assert_string_equal(text("\xff\xfe", 0), "\\xff\\xfe");
	/* a raw C1 byte is not UTF-8 either */
	assert_string_equal(text("\x9b" "2J", 0), "\\x9b2J");
	/* overlong forms (of '/', of ESC), a surrogate, above U+10FFFF, cut short */
	assert_string_equal(text("\xc0\xaf", 0), "\\xc0\\xaf");
	assert_string_equal(text("\xe0\x80\x9b", 0), "\\xe0\\x80\\x9b");
	assert_string_equal(text("\xed\xa0\x80", 0), "\\xed\\xa0\\x80");
	assert_string_equal(text("\xf4\x90\x80\x80", 0), "\\xf4\\x90\\x80\\x80");
	assert_string_equal(text("a\xe2\x80", 0), "a\\xe2\\x80");
	/* a lead byte followed by ASCII: the ASCII is kept */
	assert_string_equal(text("\xe2" "ab", 0), "\\xe2" "ab");
	assert_false(cli_text_safe("caf\xe9"));
}

static void test_path_quoting(void **state)
{
	(void)state;
	assert_string_equal(path("/home/dev/proj"), "/home/dev/proj");
	assert_string_equal(path("/home/dev/caf\xc3\xa9"), "/home/dev/caf\xc3\xa9");
	assert_string_equal(path("/a b"), "$'/a b'");
	assert_string_equal(path("/it's\\"), "$'/it\\'s\\\\'");
	/* inside $'...' the exact bytes, so that the shell gives the path back */
	assert_string_equal(path("/x\x1b[2J"), "$'/x\\x1b[2J'");
	assert_string_equal(path("/x\xe2\x80\xae" "y"), "$'/x\\xe2\\x80\\xaey'");
	assert_string_equal(path("/x\xc2\x9b"), "$'/x\\xc2\\x9b'");
	assert_string_equal(path("/caf\xe9"), "$'/caf\\xe9'");
	assert_string_equal(path(""), "$''");
}

static void test_json_valid_has_no_bytes(void **state)
{
	json_t *o = json_object();

	(void)state;
	assert_int_equal(cli_json_set_str(o, "path", "/home/caf\xc3\xa9"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "path")), "/home/caf\xc3\xa9");
	assert_null(json_object_get(o, "path_bytes"));
	assert_int_equal(cli_json_set_str(o, "title", NULL), 0);
	assert_true(json_is_null(json_object_get(o, "title")));
	assert_null(json_object_get(o, "title_bytes"));
	json_decref(o);
}

static void test_json_invalid_keeps_key(void **state)
{
	json_t *o = json_object(), *v;

	(void)state;
	/* "/caf\xe9" in base64 is L2NhZuk= */
	assert_int_equal(cli_json_set_str(o, "path", "/caf\xe9"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "path")), "/caf\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(o, "path_bytes")), "L2NhZuk=");
	/* one U+FFFD per invalid byte; the valid parts kept */
	assert_int_equal(cli_json_set_str(o, "project", "\xff\xfe/x\xed\xa0\x80"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "project")),
			    "\xef\xbf\xbd\xef\xbf\xbd/x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(o, "project_bytes")), "//4veO2ggA==");
	/* an array element has no sibling: U+FFFD only, never a missing element */
	v = cli_json_str("a\x80" "b");
	assert_non_null(v);
	assert_string_equal(json_string_value(v), "a\xef\xbf\xbd" "b");
	json_decref(v);
	json_decref(o);
}

static void test_nearest(void **state)
{
	static const char *const cmds[] = {"roots", "ls", "show", "in-use", "purge", "help"};
	const size_t n = sizeof(cmds) / sizeof(*cmds);

	(void)state;
	assert_string_equal(cli_nearest("lss", cmds, n), "ls");
	assert_string_equal(cli_nearest("prge", cmds, n), "purge");
	assert_string_equal(cli_nearest("pruge", cmds, n), "purge"); /* a swap is one edit */
	assert_string_equal(cli_nearest("in-us", cmds, n), "in-use");
	assert_string_equal(cli_nearest("sh", cmds, n), "show");     /* the start of one name */
	assert_null(cli_nearest("frobnicate", cmds, n));
	assert_null(cli_nearest("x", cmds, n));                      /* 1 edit of a 1-letter word */
	assert_null(cli_nearest("", cmds, n));
}

/* SPEC "Output": a cut keeps whole characters and ends with U+2026; at the start for a path. */
static void test_cut(void **state)
{
	char *c;

	(void)state;
	c = cli_cut("fix the build", 8, false);
	assert_string_equal(c, "fix the\xe2\x80\xa6");
	free(c);
	c = cli_cut("fix the build", 13, false);
	assert_string_equal(c, "fix the build");
	free(c);
	c = cli_cut("/home/dev/src/app", 8, true);
	assert_string_equal(c, "\xe2\x80\xa6src/app");
	free(c);
	/* a path cut inside a component keeps the whole ones after it */
	c = cli_cut("/home/dev/work/proj-0", 15, true);
	assert_string_equal(c, "\xe2\x80\xa6/work/proj-0");
	free(c);
	/* two-byte characters: never split, whatever the locale says of their width */
	c = cli_cut("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3, false);
	assert_string_equal(c, "\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	assert_int_equal(cli_width(c), 3);
	free(c);
	c = cli_cut("abc", 0, false);
	assert_string_equal(c, "");
	free(c);
}

/* git's short ids: 8 characters, more where two of the ids shown share a longer prefix. */
static void test_short_ids(void **state)
{
	const char *ids[] = {"0b8e5a4c-1f0d-4c3b-9a8e-7d6c5b4a3f21", "0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f21",
			     "ffffffff-0000-4c3b-9a8e-7d6c5b4a3f21", "ses_ab", "ses_abc", "same", "same"};
	size_t len[7];

	(void)state;
	assert_int_equal(cli_short_ids(ids, 7, len), 0);
	assert_int_equal(len[0], 12);
	assert_int_equal(len[1], 12);
	assert_int_equal(len[2], 8);
	/* an id that starts another is printed whole; so is the same id twice */
	assert_int_equal(len[3], 6);
	assert_int_equal(len[4], 7);
	assert_int_equal(len[5], 4);
	assert_int_equal(len[6], 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_plain),
		cmocka_unit_test(test_text_controls),
		cmocka_unit_test(test_text_bidi),
		cmocka_unit_test(test_text_invalid_utf8),
		cmocka_unit_test(test_path_quoting),
		cmocka_unit_test(test_json_valid_has_no_bytes),
		cmocka_unit_test(test_json_invalid_keeps_key),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_short_ids),
	};

	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	free(last_text);
	free(last_path);
	return rc;
}
