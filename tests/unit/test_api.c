/* Unit tests of the public API as a program sees it: only agentgc.h, linked against the
 * shared library. Option structs carry a version the library checks (0, from a struct zeroed
 * by hand, and one from a later header are refused); agents are selected by stable AGC_AGENT_*
 * values, not by their place in the library's table (adding Codex before OpenCode must not
 * change what AGC_AGENT_OPENCODE lists); agc_version() is the header's version.
 *   test_api FIXTURE   (FIXTURE: a built agentgc-fixture, for a generated home) */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"

#include "fixture_run.h"

static const char *fixture;

/* A scratch dir with a generated home in it: 3 Claude sessions and 2 OpenCode ones. */
static int setup(void **state)
{
	(void)state;
	return fx_make(fixture, "test-api", "--seed", "3", "--claude", "3", "--opencode", "2", "--jobs", "1",
		       "--quiet", (char *)NULL);
}

static int teardown(void **state)
{
	(void)state;
	return fx_remove();
}

typedef struct tally {
	int claude, opencode, other;
} tally;

static int count(const agc_session_info *s, void *ud)
{
	tally *t = ud;

	if (strcmp(s->agent, "claude") == 0)
		t->claude++;
	else if (strcmp(s->agent, "opencode") == 0)
		t->opencode++;
	else
		t->other++;
	return 0;
}

static agc_ctx *ctx_of_home(void)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;
	agc_ctx *ctx = NULL;

	o.home = fx_home;
	assert_int_equal(agc_ctx_new(&ctx, &o), 0);
	return ctx;
}

/* agc_ls with agents = mask: its return, and the sessions it gave in *t. */
static int ls_mask(agc_ctx *ctx, unsigned mask, tally *t)
{
	agc_ls_opts lo = AGC_LS_OPTS_INIT;

	memset(t, 0, sizeof(*t));
	lo.agents = mask;
	return agc_ls(ctx, &lo, count, t);
}

/* One source of truth: the library says the version of the header it was built with. */
static void test_api_version(void **state)
{
	(void)state;
	assert_non_null(agc_version());
	assert_string_equal(agc_version(), AGENTGC_VERSION);
}

/* A zeroed struct (no AGC_CTX_OPTS_INIT) and a version from a later header are refused,
 * clearly, and *out is left alone; the macro's version and NULL opts work. */
static void test_api_ctx_opts_version(void **state)
{
	agc_ctx_opts o;
	agc_ctx *ctx = (agc_ctx *)&o;
	static const unsigned bad[] = {0, 2, 99};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&o, 0, sizeof(o));
		o.version = bad[i];
		o.home = fx_home;
		assert_int_equal(agc_ctx_new(&ctx, &o), -1);
		assert_ptr_equal(ctx, (agc_ctx *)&o);
		assert_non_null(strstr(agc_error_last(), "agc_ctx_opts version"));
		assert_non_null(strstr(agc_error_last(), "AGC_CTX_OPTS_INIT"));
	}
	ctx = ctx_of_home();
	assert_string_equal(agc_ctx_home(ctx), fx_home);
	agc_ctx_free(ctx);
	/* NULL opts: every default ($HOME, which the test runner sets) */
	ctx = NULL;
	assert_int_equal(agc_ctx_new(&ctx, NULL), 0);
	assert_non_null(ctx);
	agc_ctx_free(ctx);
}

/* agc_ls refuses an unknown version before listing anything; NULL opts list everything. */
static void test_api_ls_opts_version(void **state)
{
	static const unsigned bad[] = {0, AGC_LS_OPTS_VERSION - 1, AGC_LS_OPTS_VERSION + 1, 99};
	agc_ctx *ctx = ctx_of_home();
	agc_ls_opts lo;
	tally t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&lo, 0, sizeof(lo));
		lo.version = bad[i];
		memset(&t, 0, sizeof(t));
		assert_int_equal(agc_ls(ctx, &lo, count, &t), -1);
		assert_int_equal(t.claude + t.opencode + t.other, 0);
		assert_non_null(strstr(agc_error_last(), "agc_ls_opts version"));
		assert_non_null(strstr(agc_error_last(), "AGC_LS_OPTS_INIT"));
	}
	memset(&t, 0, sizeof(t));
	assert_int_equal(agc_ls(ctx, NULL, count, &t), 0);
	assert_int_equal(t.claude, 3);
	assert_int_equal(t.opencode, 2);
	agc_ctx_free(ctx);
}

/* Names to bits: every agent the header names, built in or not; nothing else. The built-in
 * agents' bits are single, distinct, and agree with the names. */
static void test_api_agent_bits(void **state)
{
	unsigned seen = 0;
	size_t i;

	(void)state;
	assert_int_equal(agc_agent_bit("claude"), AGC_AGENT_CLAUDE);
	assert_int_equal(agc_agent_bit("codex"), AGC_AGENT_CODEX);
	assert_int_equal(agc_agent_bit("opencode"), AGC_AGENT_OPENCODE);
	assert_int_equal(agc_agent_bit("cursor"), AGC_AGENT_CURSOR);
	/* the values are the ABI: written down, never renumbered */
	assert_int_equal(AGC_AGENT_CLAUDE, 1);
	assert_int_equal(AGC_AGENT_CODEX, 2);
	assert_int_equal(AGC_AGENT_OPENCODE, 4);
	assert_int_equal(AGC_AGENT_CURSOR, 8);
	assert_int_equal(agc_agent_bit(NULL), 0);
	assert_int_equal(agc_agent_bit(""), 0);
	assert_int_equal(agc_agent_bit("auto"), 0);
	assert_int_equal(agc_agent_bit("Claude"), 0);
	assert_int_equal(agc_agent_bit("opencod"), 0);
	for (i = 0; i < agc_agent_count(); i++) {
		unsigned b = agc_agent_bit(agc_agent_name(i));

		assert_true(b != 0 && (b & (b - 1)) == 0);
		assert_int_equal(seen & b, 0);
		seen |= b;
		assert_int_equal(agc_agent_find(agc_agent_name(i)), (int)i);
	}
	assert_int_equal(agc_agent_count(), 4);
	assert_null(agc_agent_name(agc_agent_count()));
}

/* Selecting by stable bits on a generated home: each built-in agent's bit lists its sessions
 * only (the home has no Codex thread nor Cursor chat, so their bits list nothing), and is no
 * error, alone or with others; a bit no agent has is an error, and nothing is listed. */
static void test_api_ls_by_bit(void **state)
{
	agc_ctx *ctx = ctx_of_home();
	tally t;

	(void)state;
	assert_int_equal(ls_mask(ctx, AGC_AGENT_OPENCODE, &t), 0);
	assert_int_equal(t.opencode, 2);
	assert_int_equal(t.claude + t.other, 0);
	assert_int_equal(ls_mask(ctx, agc_agent_bit("opencode"), &t), 0);
	assert_int_equal(t.opencode, 2);
	assert_int_equal(t.claude + t.other, 0);

	assert_int_equal(ls_mask(ctx, AGC_AGENT_CLAUDE, &t), 0);
	assert_int_equal(t.claude, 3);
	assert_int_equal(t.opencode + t.other, 0);

	assert_int_equal(ls_mask(ctx, AGC_AGENT_CODEX, &t), 0);
	assert_int_equal(t.claude + t.opencode + t.other, 0);
	assert_int_equal(ls_mask(ctx, AGC_AGENT_CODEX | AGC_AGENT_CURSOR, &t), 0);
	assert_int_equal(t.claude + t.opencode + t.other, 0);
	assert_int_equal(ls_mask(ctx, AGC_AGENT_CODEX | AGC_AGENT_OPENCODE, &t), 0);
	assert_int_equal(t.opencode, 2);
	assert_int_equal(t.claude + t.other, 0);

	assert_int_equal(ls_mask(ctx, 0, &t), 0);
	assert_int_equal(t.claude, 3);
	assert_int_equal(t.opencode, 2);
	assert_int_equal(ls_mask(ctx, AGC_AGENT_CLAUDE | AGC_AGENT_CODEX | AGC_AGENT_OPENCODE |
					      AGC_AGENT_CURSOR, &t), 0);
	assert_int_equal(t.claude, 3);
	assert_int_equal(t.opencode, 2);

	assert_int_equal(ls_mask(ctx, 1u << 4, &t), -1);
	assert_int_equal(t.claude + t.opencode + t.other, 0);
	assert_non_null(strstr(agc_error_last(), "name no agent"));
	assert_int_equal(ls_mask(ctx, AGC_AGENT_OPENCODE | 1u << 31, &t), -1);
	assert_int_equal(t.claude + t.opencode + t.other, 0);
	agc_ctx_free(ctx);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_version),
		cmocka_unit_test(test_api_agent_bits),
		cmocka_unit_test(test_api_ctx_opts_version),
		cmocka_unit_test(test_api_ls_opts_version),
		cmocka_unit_test(test_api_ls_by_bit),
	};

	if (!(fixture = fx_arg(argc, argv, "test_api")))
		return 2;
	return cmocka_run_group_tests(tests, setup, teardown);
}
