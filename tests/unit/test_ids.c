/* Unit tests of ids.c: the agents' id grammars (SPEC R1). An id that does not match its grammar
 * yields no path at all, and no id with '/', "..", NUL or a control byte reaches the file
 * system. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"
#include "error.h"
#include "ids.h"

#define UUID_LOWER "a9018be5-6555-4077-82af-13f81e4d4ca7"
#define UUID_UPPER "A9018BE5-6555-4077-82AF-13F81E4D4CA7"
#define UUID_MIXED "a9018Be5-6555-4077-82aF-13f81E4d4cA7"

/* Expect agc_id_uuid to refuse in with AGC_EUNSAFE and a message. */
static void uuid_refused(const char *in)
{
	char out[AGC_ID_MAX];

	agc_error_clear();
	assert_int_equal(agc_id_uuid(in, out), AGC_EUNSAFE);
	assert_true(strlen(agc_error_last()) > 0);
}

/* Expect agc_id_opencode to refuse in with AGC_EUNSAFE and a message. */
static void opencode_refused(const char *in)
{
	char out[AGC_ID_MAX];

	agc_error_clear();
	assert_int_equal(agc_id_opencode(in, out), AGC_EUNSAFE);
	assert_true(strlen(agc_error_last()) > 0);
}

/* R1: a UUID is accepted in any letter case and canonicalised to lower case. */
static void test_ids_uuid_any_case(void **state)
{
	char out[AGC_ID_MAX];

	(void)state;
	memset(out, 'z', sizeof(out));
	assert_int_equal(agc_id_uuid(UUID_LOWER, out), 0);
	assert_string_equal(out, UUID_LOWER);
	memset(out, 'z', sizeof(out));
	assert_int_equal(agc_id_uuid(UUID_UPPER, out), 0);
	assert_string_equal(out, UUID_LOWER);
	memset(out, 'z', sizeof(out));
	assert_int_equal(agc_id_uuid(UUID_MIXED, out), 0);
	assert_string_equal(out, UUID_LOWER);
	assert_int_equal(agc_id_uuid("00000000-0000-0000-0000-000000000000", out), 0);
	assert_string_equal(out, "00000000-0000-0000-0000-000000000000");
	assert_int_equal(agc_id_uuid("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", out), 0);
	assert_string_equal(out, "ffffffff-ffff-ffff-ffff-ffffffffffff");
	/* The canonical form is itself accepted, unchanged (idempotent). */
	assert_int_equal(agc_id_uuid(out, out), 0);
	assert_string_equal(out, "ffffffff-ffff-ffff-ffff-ffffffffffff");
}

/* R1: words and paths that are not UUIDs yield no id ("memory" is Claude's per-project dir). */
static void test_ids_uuid_rejects_words(void **state)
{
	(void)state;
	uuid_refused("");
	uuid_refused("memory");
	uuid_refused("../x");
	uuid_refused("..");
	uuid_refused(".");
	uuid_refused("/");
	uuid_refused(NULL);
}

/* R1: only exactly 36 characters: 35 and 37 (a prefix twin, a trailing byte) are refused. */
static void test_ids_uuid_rejects_length(void **state)
{
	(void)state;
	uuid_refused("a9018be5-6555-4077-82af-13f81e4d4ca");    /* 35 */
	uuid_refused("a9018be5-6555-4077-82af-13f81e4d4ca77");  /* 37 */
	uuid_refused(UUID_LOWER "x");
	uuid_refused(UUID_LOWER "\n");
	uuid_refused(" " UUID_LOWER);
	uuid_refused(UUID_LOWER "/");
	uuid_refused(UUID_LOWER ".jsonl");
}

/* R1: a NUL, '/', '.' or a control byte inside an otherwise well-formed UUID never passes. */
static void test_ids_uuid_rejects_bad_bytes(void **state)
{
	char s[64];
	static const char bad[] = {'\0', '/', '.', '\n', '\r', '\t', '\x01', '\x1b', '\x7f', ' ', 'g',
				   'G', 'z', '\xc3', '\xff'};
	static const size_t pos[] = {0, 5, 7, 9, 14, 19, 24, 35};
	size_t i, j;
	char out[AGC_ID_MAX];

	(void)state;
	for (i = 0; i < sizeof(bad); i++) {
		for (j = 0; j < sizeof(pos) / sizeof(pos[0]); j++) {
			memcpy(s, UUID_LOWER, sizeof(UUID_LOWER));
			s[pos[j]] = bad[i];
			/* With a NUL the string is shorter than a UUID; with anything else it is a
			 * 36-byte string with one byte that is not hex. Both are refused. */
			assert_int_equal(agc_id_uuid(s, out), AGC_EUNSAFE);
		}
	}
	/* A whole UUID followed by a NUL and more text is the UUID alone: the C string ends at
	 * the NUL, so what follows can never reach a path. */
	memcpy(s, UUID_LOWER "\0/../x", sizeof(UUID_LOWER "\0/../x"));
	assert_int_equal(agc_id_uuid(s, out), 0);
	assert_string_equal(out, UUID_LOWER);
}

/* R1: the dashes sit at 8, 13, 18 and 23, nowhere else; no dash and extra dashes are refused. */
static void test_ids_uuid_rejects_misplaced_dashes(void **state)
{
	(void)state;
	uuid_refused("a9018be56-555-4077-82af-13f81e4d4ca7");
	uuid_refused("a9018be-56555-4077-82af-13f81e4d4ca7");
	uuid_refused("a9018be5-65554-077-82af-13f81e4d4ca7");
	uuid_refused("a9018be5-6555-407782af--13f81e4d4ca7");
	uuid_refused("a9018be5-6555-4077-82af13f81e4d4ca7-");
	uuid_refused("-a9018be5-6555-4077-82af-13f81e4d4ca");
	uuid_refused("a9018be5665554077482af413f81e4d4ca7a"); /* 36 hex, no dash */
	uuid_refused("------------------------------------");
	uuid_refused("a9018be5_6555_4077_82af_13f81e4d4ca7");
	uuid_refused("{9018be5-6555-4077-82af-13f81e4d4ca}");
}

/* R1: names read from disk are compared in canonical form: lower case only, exact length. */
static void test_ids_is_uuid(void **state)
{
	(void)state;
	assert_true(agc_id_is_uuid(UUID_LOWER, strlen(UUID_LOWER)));
	assert_false(agc_id_is_uuid(UUID_UPPER, strlen(UUID_UPPER)));
	assert_false(agc_id_is_uuid(UUID_MIXED, strlen(UUID_MIXED)));
	assert_false(agc_id_is_uuid("", 0));
	assert_false(agc_id_is_uuid("memory", 6));
	assert_false(agc_id_is_uuid(UUID_LOWER, 35));
	assert_false(agc_id_is_uuid(UUID_LOWER "7", 37));
	assert_false(agc_id_is_uuid("a9018be5-6555-4077-82af-13f81e4d4cg7", 36));
	assert_false(agc_id_is_uuid("a9018be5-6555-4077-82af-13f81e4d4c/7", 36));
	assert_false(agc_id_is_uuid("a9018be5-6555-4077-82af-13f81e4d4c\0" "7", 36));
	assert_false(agc_id_is_uuid("a9018be56-555-4077-82af-13f81e4d4ca7", 36));
	/* Only s[0..len) is looked at: a transcript name "<uuid>.jsonl" is checked by its stem. */
	assert_true(agc_id_is_uuid(UUID_LOWER ".jsonl", 36));
}

/* R1: OpenCode ids are "ses_" and 1..64 of [A-Za-z0-9_], case-sensitive, copied as given. */
static void test_ids_opencode_accepts(void **state)
{
	char out[AGC_ID_MAX], id[80];

	(void)state;
	assert_int_equal(agc_id_opencode("ses_a", out), 0);
	assert_string_equal(out, "ses_a");
	assert_int_equal(agc_id_opencode("ses_3fA9xQ_z0", out), 0);
	assert_string_equal(out, "ses_3fA9xQ_z0");
	assert_int_equal(agc_id_opencode("ses_ABCDEF", out), 0);
	assert_string_equal(out, "ses_ABCDEF"); /* not lower-cased */
	assert_int_equal(agc_id_opencode("ses____", out), 0);
	assert_string_equal(out, "ses____");
	/* 64 characters after the prefix is the longest. */
	memcpy(id, "ses_", 4);
	memset(id + 4, 'Z', 64);
	id[68] = '\0';
	assert_int_equal(agc_id_opencode(id, out), 0);
	assert_string_equal(out, id);
}

/* R1: anything else is not an OpenCode id: no path is ever made of it. */
static void test_ids_opencode_rejects(void **state)
{
	char id[80];

	(void)state;
	opencode_refused("ses_");
	opencode_refused("ses_a/b");
	opencode_refused("ses_..");
	opencode_refused("ses_a.b");
	opencode_refused("ses_a-b");
	opencode_refused("ses_a b");
	opencode_refused("ses_a\n");
	opencode_refused("ses_\x01" "a");
	opencode_refused("ses_caf\xc3\xa9");
	opencode_refused("SES_abc"); /* the prefix is case-sensitive too */
	opencode_refused("Ses_abc");
	opencode_refused("ses-abc");
	opencode_refused("xses_abc");
	opencode_refused("/ses_abc");
	opencode_refused("../ses_abc");
	opencode_refused("");
	opencode_refused("ses");
	opencode_refused("a9018be5-6555-4077-82af-13f81e4d4ca7");
	opencode_refused(NULL);
	/* 65 characters after the prefix is one too many. */
	memcpy(id, "ses_", 4);
	memset(id + 4, 'a', 65);
	id[69] = '\0';
	opencode_refused(id);
}

/* R1: the second line of defence before any id is joined into a path. */
static void test_ids_path_safe(void **state)
{
	static const char *good[] = {"a", UUID_LOWER, "ses_abc", "...", "..a", "a..", ".a",
				     "caf\xc3\xa9", "a b", "a-b_c.d"};
	static const char *bad[] = {"", ".", "..", "/", "a/b", "../x", "x/..", "/abs", "a\nb",
				    "\x01", "a\tb", "a\rb", "a\x1b[31m", "a\x7f", "ses_a/b"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!agc_id_path_safe(good[i]))
			fail_msg("'%s' should be path safe", good[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (agc_id_path_safe(bad[i]))
			fail_msg("bad[%zu] should not be path safe", i);
	}
	assert_false(agc_id_path_safe(NULL));
}

/* R1: whatever the grammar accepted also passes the path check (the two agree). */
static void test_ids_canonical_is_path_safe(void **state)
{
	char out[AGC_ID_MAX];

	(void)state;
	assert_int_equal(agc_id_uuid(UUID_MIXED, out), 0);
	assert_true(agc_id_path_safe(out));
	assert_int_equal(agc_id_opencode("ses_Ab_9", out), 0);
	assert_true(agc_id_path_safe(out));
}

/* SPEC "Commands": an id in the form OpenCode generates is whole (no prefix look-up): ses_,
 * 12 lower-case hex, 14 of [0-9A-Za-z]; anything shorter, longer or otherwise may be a prefix. */
static void test_ids_opencode_generated(void **state)
{
	(void)state;
	assert_true(agc_id_opencode_generated("ses_dedf8eac8ffeK90qNWEtwMICmX"));
	assert_false(agc_id_opencode_generated("ses_dedf8eac8ffeK90qNWEtwMICm"));
	assert_false(agc_id_opencode_generated("ses_dedf8eac8ffeK90qNWEtwMICmXy"));
	assert_false(agc_id_opencode_generated("ses_DEDF8EAC8FFEK90qNWEtwMICmX"));
	assert_false(agc_id_opencode_generated("ses_dedf8eac8ffeK90qNWEtwMIC_X"));
	assert_false(agc_id_opencode_generated("SES_dedf8eac8ffeK90qNWEtwMICmX"));
	assert_false(agc_id_opencode_generated("ses_test0001"));
	assert_false(agc_id_opencode_generated(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_uuid_any_case),
		cmocka_unit_test(test_ids_uuid_rejects_words),
		cmocka_unit_test(test_ids_uuid_rejects_length),
		cmocka_unit_test(test_ids_uuid_rejects_bad_bytes),
		cmocka_unit_test(test_ids_uuid_rejects_misplaced_dashes),
		cmocka_unit_test(test_ids_is_uuid),
		cmocka_unit_test(test_ids_opencode_accepts),
		cmocka_unit_test(test_ids_opencode_rejects),
		cmocka_unit_test(test_ids_path_safe),
		cmocka_unit_test(test_ids_canonical_is_path_safe),
		cmocka_unit_test(test_ids_opencode_generated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
