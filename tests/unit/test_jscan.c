/* Unit tests of jscan.c, the scanner of transcript head lines: a line it calls OK is one
 * jansson reads, with the same values for the keys looked for; what it is not sure of it
 * leaves to jansson. Checked on tricky lines one by one, then on many mutations of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "jscan.h"

static const char *const keys[] = {"cwd", "timestamp", "type", "isMeta", "message", "title"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* jscan and jansson agree on line: when jscan says OK, jansson reads it, and every key's
 * value is the same (absent, a string with the same bytes, true). Returns jscan's answer. */
static int agree(const char *line, size_t len)
{
	agc_jspan v[NKEYS];
	json_error_t err;
	json_t *j;
	size_t i;
	int r = agc_jscan_line(line, len, keys, NKEYS, v);

	if (r != AGC_JSCAN_OK)
		return r;
	j = json_loadb(line, len, 0, &err);
	if (!j)
		fail_msg("jscan took a line jansson refuses (%s): %.*s", err.text, (int)len, line);
	for (i = 0; i < NKEYS; i++) {
		json_t *jv = json_is_object(j) ? json_object_get(j, keys[i]) : NULL;

		if (!jv) {
			assert_null(v[i].p);
			continue;
		}
		assert_non_null(v[i].p);
		assert_int_equal(agc_jscan_is_str(v[i]), json_is_string(jv));
		assert_int_equal(agc_jscan_is_true(v[i]), json_is_true(jv));
		if (json_is_string(jv)) {
			char *d = agc_jscan_str(v[i]);

			assert_non_null(d);
			assert_int_equal(strlen(d), json_string_length(jv));
			assert_memory_equal(d, json_string_value(jv), json_string_length(jv));
			assert_true(agc_jscan_str_is(v[i], json_string_value(jv)));
			free(d);
		}
	}
	json_decref(j);
	return r;
}

static int agree_s(const char *line)
{
	return agree(line, strlen(line));
}

/* The value of key k (an index of keys) in line, decoded, or NULL. */
static char *value_of(const char *line, size_t k)
{
	agc_jspan v[NKEYS];

	assert_int_equal(agc_jscan_line(line, strlen(line), keys, NKEYS, v), AGC_JSCAN_OK);
	return agc_jscan_str(v[k]);
}

static void assert_value(const char *line, size_t k, const char *want)
{
	char *got = value_of(line, k);

	assert_int_equal(agree_s(line), AGC_JSCAN_OK);
	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* A key inside a nested object or inside a string is not the top-level one. */
static void test_jscan_nested_and_strings(void **state)
{
	(void)state;
	assert_value("{\"message\":{\"cwd\":\"/inner\"},\"cwd\":\"/outer\"}", 0, "/outer");
	assert_value("{\"x\":{\"cwd\":\"/inner\",\"y\":[{\"cwd\":\"/deeper\"}]}}", 0, NULL);
	assert_value("{\"text\":\"\\\"cwd\\\":\\\"/fake\\\"\",\"cwd\":\"/real\"}", 0, "/real");
	assert_value("{\"text\":\"say \\\"cwd\\\": \\\"/fake\\\"\"}", 0, NULL);
	assert_value("{\"a\":[\"cwd\",\"/x\"],\"b\":\"cwd\"}", 0, NULL);
	/* the last of repeated keys, as jansson keeps it */
	assert_value("{\"cwd\":\"/1\",\"cwd\":\"/2\"}", 0, "/2");
	/* a key that is not a string value */
	assert_value("{\"cwd\":{\"p\":\"/x\"}}", 0, NULL);
	assert_value("{\"cwd\":null,\"isMeta\":true}", 0, NULL);
}

/* Escapes decode as jansson decodes them: \/ \n \" \\ \uXXXX and surrogate pairs. */
static void test_jscan_escapes(void **state)
{
	(void)state;
	assert_value("{\"cwd\":\"/a\\/b\\n\\u00e9\\ud83d\\ude00\\\"q\\\\\"}", 0, "/a/b\n\xc3\xa9\xf0\x9f\x98\x80\"q\\");
	assert_value("{\"cwd\":\"\\b\\f\\r\\t\\u20ac\"}", 0, "\b\f\r\t\xe2\x82\xac");
	assert_value("{\"cwd\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}", 0, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_true(agc_jscan_str_is((agc_jspan){"\"u\\u0073er\"", 11}, "user"));
	assert_false(agc_jscan_str_is((agc_jspan){"\"users\"", 7}, "user"));
}

/* What jscan leaves to jansson: never an OK jansson would not give. */
static void test_jscan_unsure(void **state)
{
	static const char *const lines[] = {
		"{\"cwd\":\"/a\",\"type\":\"us",       /* truncated */
		"{\"cwd\":\"/a\"",                     /* no end */
		"{\"cwd\":\"\\ud800\"}",              /* a lone high surrogate */
		"{\"cwd\":\"\\udc00\"}",              /* a lone low surrogate */
		"{\"cwd\":\"\\ud800\\u0041\"}",       /* high then not low */
		"{\"cwd\":\"a\\u0000b\"}",            /* NUL */
		"{\"c\\u0077d\":\"/x\"}",             /* an escaped key */
		"{\"n\":12345678901234567890}",       /* may not fit */
		"{\"n\":1e400}",                       /* may overflow */
		"{\"n\":01}",                          /* a leading zero */
		"{\"n\":-}",
		"{\"n\":1.}",
		"{\"cwd\":\"\xff\"}",                 /* invalid UTF-8 */
		"{\"cwd\":\"\xc0\xaf\"}",             /* overlong */
		"{\"cwd\":\"\xed\xa0\x80\"}",         /* a surrogate in UTF-8 */
		"{\"cwd\":\"a\tb\"}",                 /* a raw control */
		"{\"a\":1} x",                         /* garbage after */
		"\"x\"",                               /* not an object or array */
		"{\"a\":tru}",
		"{\"a\" 1}",
		"{\"a\":1,}",
		"[1,]",
		"{'a':1}",
		"",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		assert_int_equal(agree_s(lines[i]), AGC_JSCAN_ASK);
	/* OK ones */
	assert_int_equal(agree_s("  {\"n\":-0.5,\"m\":0,\"k\":[true,false,null,{}],\"e\":\"\"}  \r\n"), AGC_JSCAN_OK);
	assert_int_equal(agree_s("[1,2,{\"cwd\":\"/x\"}]"), AGC_JSCAN_OK);
	assert_value("[{\"cwd\":\"/x\"}]", 0, NULL);
	/* nesting: 50 levels read, 100 left to jansson */
	{
		char deep[512];
		size_t o = 0;
		int k;

		for (k = 0; k < 50; k++)
			deep[o++] = '[';
		for (k = 0; k < 50; k++)
			deep[o++] = ']';
		assert_int_equal(agree(deep, o), AGC_JSCAN_OK);
		o = 0;
		for (k = 0; k < 100; k++)
			deep[o++] = '[';
		for (k = 0; k < 100; k++)
			deep[o++] = ']';
		assert_int_equal(agree(deep, o), AGC_JSCAN_ASK);
	}
}

/* A user message's content: a string, or the first text element of an array. */
static void test_jscan_members(void **state)
{
	static const char *const mk[] = {"content"};
	static const char *const ek[] = {"type", "text"};
	const char *line = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"text\":\"no\"},"
			   "{\"type\":\"text\",\"text\":\"hi \\u00e9\"}]}}";
	agc_jspan v[NKEYS], c, el, f[2];
	size_t it = 0;
	int n = 0;
	char *t = NULL;

	(void)state;
	assert_int_equal(agc_jscan_line(line, strlen(line), keys, NKEYS, v), AGC_JSCAN_OK);
	assert_int_equal(agc_jscan_members(v[4], mk, 1, &c), AGC_JSCAN_OK);
	while (agc_jscan_next(c, &it, &el)) {
		n++;
		assert_int_equal(agc_jscan_members(el, ek, 2, f), AGC_JSCAN_OK);
		if (!t && agc_jscan_str_is(f[0], "text"))
			t = agc_jscan_str(f[1]);
	}
	assert_int_equal(n, 2);
	assert_non_null(t);
	assert_string_equal(t, "hi \xc3\xa9");
	free(t);
	/* not an object, not an array: nothing */
	assert_int_equal(agc_jscan_members((agc_jspan){"\"x\"", 3}, mk, 1, &c), AGC_JSCAN_OK);
	assert_null(c.p);
	it = 0;
	assert_false(agc_jscan_next((agc_jspan){"{}", 2}, &it, &el));
	it = 0;
	assert_false(agc_jscan_next((agc_jspan){"[]", 2}, &it, &el));
	/* an escaped key inside: jansson decides */
	assert_int_equal(agc_jscan_members((agc_jspan){"{\"con\\u0074ent\":1}", 18}, mk, 1, &c), AGC_JSCAN_ASK);
}

/* Long strings are scanned eight bytes at a time: a quote, a backslash, a control byte, DEL or
 * a byte outside ASCII at every place of a word, and the word's end, is still seen (agree). */
static void test_jscan_long_strings(void **state)
{
	static const char *const odd[] = {"\"", "\\", "\\n", "\x1f", "\x7f", "\x80", "\xc3\xa9", "\xff", "\t"};
	char buf[256];
	size_t at, k, len;

	(void)state;
	for (len = 0; len < 40; len++)
		for (at = 0; at <= len; at++)
			for (k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
				size_t n = 0, i;

				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{\"cwd\":\"");
				for (i = 0; i < len; i++) {
					if (i == at)
						n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", odd[k]);
					buf[n++] = (char)('a' + i % 26);
				}
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\",\"n\":1}");
				/* valid ones (an escape, a character of two bytes, DEL) are read, not asked */
				if (agree(buf, n) != AGC_JSCAN_OK && (k == 2 || k == 4 || k == 6))
					fail_msg("a valid line was not read: %.*s", (int)n, buf);
			}
}

/* Many mutations of real-looking lines: whenever jscan says OK, jansson agrees (agree). */
static void test_jscan_mutations(void **state)
{
	static const char *const seeds[] = {
		"{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"fix the \\\"flaky\\\" test \\u00e9\"},"
		"\"uuid\":\"1b2c\",\"timestamp\":\"2025-06-01T10:00:00.000Z\",\"cwd\":\"/home/dev/work/proj-1\",\"n\":-12.5}",
		"{\"type\":\"custom-title\",\"customTitle\":\"name \\ud83d\\ude00\",\"sessionId\":\"x\",\"cwd\":\"/a\\/b\"}",
		"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"},{\"type\":\"tool_use\",\"input\":{\"cwd\":\"/x\",\"a\":[1,2,3]}}]},\"isMeta\":true}",
		"[{\"cwd\":\"/y\"},\"caf\xc3\xa9\",true,null]",
		"{\"type\":\"session_meta\",\"payload\":{\"cwd\":\"/home/dev/work/a-long-project-name\",\"base_instructions\":"
		"{\"text\":\"You are a coding agent.\\nWork in the user's workspace and ask before destructive steps.\\n\"}}}",
	};
	static const char alphabet[] = "{}[]\":,\\u0dD8Ac9e-.+ \t\ntrufalsn\xc3\xa9\xed\xff";
	char buf[1024];
	unsigned seed = 12345;
	int i, ok = 0;

	(void)state;
	for (i = 0; i < 40000; i++) {
		const char *s = seeds[i % 5];
		size_t n = strlen(s), m, k;
		int e;

		memcpy(buf, s, n);
		for (m = 1 + (seed >> 7) % 3, k = 0; k < m; k++) {
			size_t at;
			char c;

			seed = seed * 1103515245u + 12345u;
			at = (seed >> 8) % n;
			c = alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
			switch ((seed >> 4) % 4) {
			case 0: buf[at] = c; break;
			case 1: if (n < sizeof(buf) - 1) { memmove(buf + at + 1, buf + at, n - at); buf[at] = c; n++; } break;
			case 2: if (n > 1) { memmove(buf + at, buf + at + 1, n - at - 1); n--; } break;
			default: n = at ? at : 1; break;
			}
		}
		e = agree(buf, n);
		ok += e == AGC_JSCAN_OK;
	}
	/* the mutations leave some lines valid: the check above is not empty */
	assert_true(ok > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jscan_nested_and_strings),
		cmocka_unit_test(test_jscan_escapes),
		cmocka_unit_test(test_jscan_unsure),
		cmocka_unit_test(test_jscan_members),
		cmocka_unit_test(test_jscan_long_strings),
		cmocka_unit_test(test_jscan_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
