/* Unit tests for the listing core (session.c agc_ls) that need a made-up process table: the
 * gate's one scan for every listed session (SPEC "live in ls") skips processes that went away
 * mid-scan, and must not replace the message of a listing that failed (R8: a store that
 * cannot be read is named). */
#include <errno.h>
#include <fcntl.h>
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

#include "agc_test.h"

#include "agentgc/agentgc.h"

static int setup(void **state)
{
	(void)state;
	return t_setup_dir("ls");
}

static int teardown(void **state)
{
	(void)state;
	return t_teardown_dir();
}

static int count(const agc_session_info *s, void *ud)
{
	(void)s;
	++*(int *)ud;
	return 0;
}

/* A Claude session (so the gate has something to scan for), an opencode.db that is not a
 * database, and a process table whose one process has gone between listing its pid and
 * reading its files: ls lists the session, fails for the store, and says which store. */
static void test_ls_failed_store_named_after_scan(void **state)
{
	static const char line[] =
		"{\"type\":\"user\",\"cwd\":\"/w/p\",\"timestamp\":\"2026-11-29T20:00:00Z\","
		"\"sessionId\":\"0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f21\",\"message\":{\"role\":\"user\","
		"\"content\":\"fix the build\"}}\n";
	char junk[4096];
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;
	agc_ls_opts lo = AGC_LS_OPTS_INIT;
	agc_ctx *ctx = NULL;
	int n = 0;

	(void)state;
	memset(junk, 'x', sizeof(junk));
	t_mkdir_p("home/.claude/projects/-w-p", 0755);
	t_writes("home/.claude/projects/-w-p/0b8e5a4c-1f2d-4c3b-9a8e-7d6c5b4a3f21.jsonl", line);
	t_mkdir_p("home/.local/share/opencode", 0755);
	t_write("home/.local/share/opencode/opencode.db", junk, sizeof(junk));
	/* pid 4242 is listed, but its cmdline, environ, cwd and fds are gone (ENOENT) */
	t_mkdir_p("proc/4242", 0755);
	t_write("proc/4242/stat", "4242 (x) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n", 60);
	o.home = t_path("home");
	o.procroot = t_path("proc");
	o.now_ms = 1795984693000;
	assert_int_equal(agc_ctx_new(&ctx, &o), 0);
	assert_int_equal(agc_ls(ctx, &lo, count, &n), -1);
	assert_int_equal(n, 1);
	assert_non_null(strstr(agc_error_last(), "opencode.db"));
	agc_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ls_failed_store_named_after_scan, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
