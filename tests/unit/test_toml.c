/* Unit tests of toml.c: Codex's top-level `sqlite_home` in config.toml (formats/codex.md §1)
 * found where TOML puts it and nowhere else, on the tricky files of issue 9: quotes, escapes,
 * comments, tables, headers inside strings, arrays over several lines, dotted and quoted keys,
 * values of the wrong type, a key given twice, CRLF, a BOM, unterminated strings. Reading the
 * wrong key could point the Codex adapter at the wrong databases, so every case pins what the
 * key's value is, or that it is absent, or the error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"
#include "error.h"
#include "toml.h"

#define KEY "sqlite_home"

/* The key's value in text: the string, "<absent>", or "<error: MESSAGE>". */
static const char *get_n(const char *text, size_t len)
{
	static char out[4096];
	char *v = (char *)0x1;
	int rc = agc_toml_top_string(text, len, "config.toml", KEY, &v);

	if (rc == 1) {
		assert_non_null(v);
		snprintf(out, sizeof(out), "%s", v);
		free(v);
	} else if (rc == 0) {
		assert_null(v);
		snprintf(out, sizeof(out), "<absent>");
	} else {
		assert_int_equal(rc, -1);
		assert_null(v);
		snprintf(out, sizeof(out), "<error: %s>", agc_error_last());
	}
	return out;
}

static const char *get(const char *text)
{
	return get_n(text, strlen(text));
}

static void test_toml_plain_values(void **state)
{
	assert_string_equal(get("sqlite_home = \"/var/lib/codex\"\n"), "/var/lib/codex");
	/* a relative value comes back as written: the adapter resolves it */
	assert_string_equal(get("sqlite_home = \"db/state\"\n"), "db/state");
	assert_string_equal(get("sqlite_home = \"\"\n"), "");
	assert_string_equal(get("sqlite_home = ''\n"), "");
	/* whitespace around the '=' and a comment after the value */
	assert_string_equal(get("  sqlite_home\t=\t\"/q\"   # where the databases go\n"), "/q");
	assert_string_equal(get("sqlite_home=\"/q\""), "/q");
	/* no trailing newline, no key at all, an empty file */
	assert_string_equal(get("model = \"o3\"\nsqlite_home = \"/q\""), "/q");
	assert_string_equal(get("model = \"o3\"\n"), "<absent>");
	assert_string_equal(get(""), "<absent>");
	assert_string_equal(get("\n\n# only comments\n"), "<absent>");
	/* other keys of every kind of value before it */
	assert_string_equal(get("a = 1\nb = -3.5e+2\nc = true\nd = 1979-05-27 07:32:00Z\n"
				"e = 1979-05-27T07:32:00.999-07:00\nf = 07:32:00\ng = +inf\n"
				"h = 0x_dead\nsqlite_home = \"/q\"\n"),
			    "/q");
	/* Unicode as written */
	assert_string_equal(get("sqlite_home = \"/home/zoë/数据\"\n"), "/home/zoë/数据");
}

static void test_toml_single_quoted(void **state)
{
	/* a literal string: no escapes */
	assert_string_equal(get("sqlite_home = 'C:\\Users\\x\\n'\n"), "C:\\Users\\x\\n");
	assert_string_equal(get("sqlite_home = '/a \"b\" #c'\n"), "/a \"b\" #c");
	/* multi-line literal: the first line end trimmed, quotes inside */
	assert_string_equal(get("sqlite_home = '''\n/a/'b'/''c'''\n"), "/a/'b'/''c");
	assert_string_equal(get("sqlite_home = '''/a'''''\n"), "/a''");
}

static void test_toml_double_quoted_escapes(void **state)
{
	assert_string_equal(get("sqlite_home = \"/a\\\"b\\\\c\"\n"), "/a\"b\\c");
	assert_string_equal(get("sqlite_home = \"x\\ty\\nz\\b\\f\\r\"\n"), "x\ty\nz\b\f\r");
	assert_string_equal(get("sqlite_home = \"/caf\\u00e9/\\U0001F600\"\n"), "/caf\xc3\xa9/\xf0\x9f\x98\x80");
	assert_string_equal(get("sqlite_home = \"/\\u005fa\"\n"), "/_a");
	/* TOML 1.1's escapes */
	assert_string_equal(get("sqlite_home = \"\\x41\\e\"\n"), "A\033");
	/* a '#' inside a string is no comment */
	assert_string_equal(get("sqlite_home = \"/a#b\" # c\n"), "/a#b");
	/* multi-line basic: trimmed first line end, a line-ending backslash, quotes at the end */
	assert_string_equal(get("sqlite_home = \"\"\"\n/a/\\\n     b\"\"\"\n"), "/a/b");
	assert_string_equal(get("sqlite_home = \"\"\"/a\\   \n\n  /b\"\"\"\n"), "/a/b");
	assert_string_equal(get("sqlite_home = \"\"\"/a\"\"\"\"\"\n"), "/a\"\"");
	assert_string_equal(get("sqlite_home = \"\"\"/a\\\"\"\"\"\n"), "/a\"");
	/* bad escapes */
	assert_string_equal(get("sqlite_home = \"/a\\q\"\n"),
			    "<error: cannot read 'config.toml': line 1: an unknown escape '\\q' in a string>");
	assert_string_equal(get("sqlite_home = \"\\u12\"\n"),
			    "<error: cannot read 'config.toml': line 1: an escape '\\u' without its 4 hex digits>");
	assert_string_equal(get("sqlite_home = \"\\ud800\"\n"),
			    "<error: cannot read 'config.toml': line 1: an escape that is not a Unicode scalar value>");
	assert_string_equal(get("sqlite_home = \"\\U00110000\"\n"),
			    "<error: cannot read 'config.toml': line 1: an escape that is not a Unicode scalar value>");
	/* a path holds no NUL; text is UTF-8 */
	assert_string_equal(get("sqlite_home = \"/a\\u0000b\"\n"),
			    "<error: cannot read 'config.toml': 'sqlite_home' holds a NUL>");
	assert_string_equal(get("sqlite_home = \"/a\xff\"\n"),
			    "<error: cannot read 'config.toml': 'sqlite_home' is not valid UTF-8>");
	assert_string_equal(get("sqlite_home = \"/a\xc3\"\n"),
			    "<error: cannot read 'config.toml': 'sqlite_home' is not valid UTF-8>");
	assert_string_equal(get("sqlite_home = \"/a\xed\xa0\x80\"\n"),
			    "<error: cannot read 'config.toml': 'sqlite_home' is not valid UTF-8>");
	assert_string_equal(get("sqlite_home = \"/a\x01\"\n"),
			    "<error: cannot read 'config.toml': line 1: a control character in a string>");
}

static void test_toml_commented_out(void **state)
{
	assert_string_equal(get("# sqlite_home = \"/x\"\n"), "<absent>");
	assert_string_equal(get("#sqlite_home = \"/x\"\nmodel = \"o3\" # sqlite_home = \"/y\"\n"),
			    "<absent>");
	assert_string_equal(get("# sqlite_home = \"/x\"\nsqlite_home = \"/q\"\n"), "/q");
}

static void test_toml_inside_table(void **state)
{
	assert_string_equal(get("[tui]\nsqlite_home = \"/x\"\n"), "<absent>");
	assert_string_equal(get("model = 1\n\n  [ history ]\nsqlite_home = \"/x\"\n"), "<absent>");
	assert_string_equal(get("[[profiles]]\nsqlite_home = \"/x\"\n"), "<absent>");
	/* before the first header it counts, after it a second one is the table's */
	assert_string_equal(get("sqlite_home = \"/q\"\n[t]\nsqlite_home = \"/x\"\n"), "/q");
	/* after the header nothing is read: not even malformed text */
	assert_string_equal(get("sqlite_home = \"/q\"\n[t]\nthis is = not \"toml\n"), "/q");
	/* an inline table of another key is not the top level */
	assert_string_equal(get("t = { sqlite_home = \"/x\" }\n"), "<absent>");
	assert_string_equal(get("t = {\n  sqlite_home = \"/x\",\n}\nsqlite_home = \"/q\"\n"), "/q");
}

/* A header, a comment or a key inside a string or an array of another key is none. */
static void test_toml_header_inside_string(void **state)
{
	assert_string_equal(get("notes = \"\"\"\n[table]\nsqlite_home = \"/x\"\n\"\"\"\n"
				"sqlite_home = \"/q\"\n"),
			    "/q");
	assert_string_equal(get("notes = '''\n[[table]]\n# not a comment\n'''\nsqlite_home = '/q'\n"),
			    "/q");
	assert_string_equal(get("notes = \"\"\"a\"\" [t] \\\"\\\"\\\" \"\"\"\nsqlite_home = \"/q\"\n"),
			    "/q");
	assert_string_equal(get("x = \"[t]\"\ny = '[t]'\nsqlite_home = \"/q\"\n"), "/q");
	assert_string_equal(get("a = [\n  \"[t]\", # [u]\n  [1, 2],\n  { k = \"]\" },\n  '''\n[v]\n''',\n]\n"
				"sqlite_home = \"/q\"\n"),
			    "/q");
	assert_string_equal(get("a = [\n\"sqlite_home = '/x'\"\n]\n"), "<absent>");
}

static void test_toml_quoted_and_dotted_keys(void **state)
{
	assert_string_equal(get("\"sqlite_home\" = \"/q\"\n"), "/q");
	assert_string_equal(get("'sqlite_home' = \"/q\"\n"), "/q");
	assert_string_equal(get("\"sqlite\\u005fhome\" = \"/q\"\n"), "/q");
	/* dotted keys are other keys: a.sqlite_home is a's */
	assert_string_equal(get("a.sqlite_home = \"/x\"\n"), "<absent>");
	assert_string_equal(get("a . sqlite_home = \"/x\"\n"), "<absent>");
	assert_string_equal(get("\"a\".\"sqlite_home\" = \"/x\"\n"), "<absent>");
	/* a quoted key with a dot in it is one key, not ours */
	assert_string_equal(get("\"a.sqlite_home\" = \"/x\"\n\"sqlite_home.b\" = 1\n"), "<absent>");
	/* prefix twins */
	assert_string_equal(get("sqlite_home_x = \"/x\"\nsqlite = \"/y\"\n"), "<absent>");
	/* the key made a table */
	assert_string_equal(get("sqlite_home.path = \"/x\"\n"),
			    "<error: cannot read 'config.toml': line 1: 'sqlite_home' is a table, not a string>");
	assert_string_equal(get("= \"/x\"\n"),
			    "<error: cannot read 'config.toml': line 1: expected a key>");
	assert_string_equal(get("sqlite_home \"/x\"\n"),
			    "<error: cannot read 'config.toml': line 1: expected '=' after a key>");
}

static void test_toml_not_a_string(void **state)
{
	static const char *const values[] = {"5", "true", "[\"/a\"]", "{ path = \"/a\" }",
					     "1979-05-27", ""};
	char text[128], want[256];
	size_t k;

	for (k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
		snprintf(text, sizeof(text), "model = \"o3\"\nsqlite_home = %s\n", values[k]);
		snprintf(want, sizeof(want),
			 "<error: cannot read 'config.toml': line 2: 'sqlite_home' is not a string>");
		assert_string_equal(get(text), want);
	}
}

static void test_toml_duplicate(void **state)
{
	assert_string_equal(get("sqlite_home = \"/a\"\nsqlite_home = \"/b\"\n"),
			    "<error: cannot read 'config.toml': line 2: 'sqlite_home' is given twice>");
	assert_string_equal(get("sqlite_home = \"/a\"\nx = 1\n\"sqlite_home\" = \"/a\"\n"),
			    "<error: cannot read 'config.toml': line 3: 'sqlite_home' is given twice>");
}

static void test_toml_crlf_bom(void **state)
{
	assert_string_equal(get("model = \"o3\"\r\nsqlite_home = \"/q\"\r\n"), "/q");
	assert_string_equal(get("# c\r\nsqlite_home = \"/q\" # c\r\n[t]\r\n"), "/q");
	assert_string_equal(get("n = \"\"\"\r\n[t]\r\n\"\"\"\r\nsqlite_home = \"\"\"\r\n/a\\\r\n  /b\"\"\"\r\n"),
			    "/a/b");
	assert_string_equal(get("sqlite_home = '''\r\n/a\r\n/b'''\r\n"), "/a\n/b");
	assert_string_equal(get("\xef\xbb\xbfsqlite_home = \"/q\"\n"), "/q");
	assert_string_equal(get("\xef\xbb\xbf[t]\nsqlite_home = \"/q\"\n"), "<absent>");
	/* a carriage return alone ends no line */
	assert_string_equal(get("a = 1\rsqlite_home = \"/q\"\n"),
			    "<error: cannot read 'config.toml': line 1: expected the end of the line after a value>");
	assert_string_equal(get("a = 1\n\r"),
			    "<error: cannot read 'config.toml': line 2: a carriage return without a newline>");
}

static void test_toml_unterminated(void **state)
{
	assert_string_equal(get("sqlite_home = \"/q\n"),
			    "<error: cannot read 'config.toml': line 1: unterminated string>");
	assert_string_equal(get("sqlite_home = \"/q"),
			    "<error: cannot read 'config.toml': line 1: unterminated string>");
	assert_string_equal(get("sqlite_home = '/q\n"),
			    "<error: cannot read 'config.toml': line 1: unterminated string>");
	/* another key's string: what follows cannot be placed */
	assert_string_equal(get("x = \"\"\"\nabc\n\nsqlite_home = \"/q\"\n"),
			    "<error: cannot read 'config.toml': line 5: unterminated string>");
	assert_string_equal(get("x = '''\nabc\n"),
			    "<error: cannot read 'config.toml': line 3: unterminated string>");
	assert_string_equal(get("x = [1,\n2\n"),
			    "<error: cannot read 'config.toml': line 3: expected ',' or ']' in an array>");
	assert_string_equal(get("x = [1 2]\n"),
			    "<error: cannot read 'config.toml': line 1: expected ',' or ']' in an array>");
	assert_string_equal(get("x = \"a\" [t]\n"),
			    "<error: cannot read 'config.toml': line 1: expected the end of the line after a value>");
	assert_string_equal(get("x = \"\"\"a\"\"\"\"\"\"\n"),
			    "<error: cannot read 'config.toml': line 1: too many quotes at the end of a string>");
}

static void test_toml_bounds(void **state)
{
	size_t n = AGC_TOML_MAX + 1, k;
	char *big = malloc(n + 1);
	char *v;
	int fd;

	assert_non_null(big);
	memset(big, '\n', n);
	big[n] = '\0';
	assert_string_equal(get_n(big, n),
			    "<error: cannot read 'config.toml': larger than 1048576 bytes>");
	/* deep nesting ends in an error, not in a stack overflow */
	for (k = 0; k < 1000; k++)
		big[4 + k] = '[';
	memcpy(big, "x = ", 4);
	big[1004] = '\0';
	assert_string_equal(get(big),
			    "<error: cannot read 'config.toml': line 1: arrays or tables nested too deeply>");

	/* from an fd: a file of exactly the bound is read, one byte more is refused */
	memset(big, ' ', n);
	memcpy(big, "sqlite_home = \"/q\"\n", 19);
	fd = memfd_create("toml-test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, big, AGC_TOML_MAX), (ssize_t)AGC_TOML_MAX);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(agc_toml_top_string_fd(fd, "config.toml", KEY, &v), 1);
	assert_string_equal(v, "/q");
	free(v);
	assert_int_equal(write(fd, " ", 1), 1);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(agc_toml_top_string_fd(fd, "config.toml", KEY, &v), -1);
	assert_null(v);
	assert_string_equal(agc_error_last(), "cannot read 'config.toml': larger than 1048576 bytes");
	close(fd);
	/* a read error */
	{
		int p[2];

		assert_int_equal(pipe(p), 0);
		assert_int_equal(agc_toml_top_string_fd(p[1], "config.toml", KEY, &v), -1);
		assert_string_equal(agc_error_last(), "cannot read 'config.toml': Bad file descriptor");
		close(p[0]);
		close(p[1]);
	}
	/* an absent key from an fd */
	fd = memfd_create("toml-test", MFD_CLOEXEC);
	assert_int_equal(write(fd, "[t]\n", 4), 4);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(agc_toml_top_string_fd(fd, "config.toml", KEY, &v), 0);
	assert_null(v);
	close(fd);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toml_plain_values),
		cmocka_unit_test(test_toml_single_quoted),
		cmocka_unit_test(test_toml_double_quoted_escapes),
		cmocka_unit_test(test_toml_commented_out),
		cmocka_unit_test(test_toml_inside_table),
		cmocka_unit_test(test_toml_header_inside_string),
		cmocka_unit_test(test_toml_quoted_and_dotted_keys),
		cmocka_unit_test(test_toml_not_a_string),
		cmocka_unit_test(test_toml_duplicate),
		cmocka_unit_test(test_toml_crlf_bom),
		cmocka_unit_test(test_toml_unterminated),
		cmocka_unit_test(test_toml_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
