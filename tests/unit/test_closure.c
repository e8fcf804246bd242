/* Unit tests of the keep closure (agc_keep_closure, purge.c) with the real Codex adapter, on a
 * home made by the fixture generator: a sub-agent reached from a kept id through spawn edges,
 * or through line 0's parent_thread_id where the edge is missing, at any depth, is kept (issue
 * 9, test 2: what prune's keep list relies on); what is not reached is not; a store that
 * cannot be read keeps everything of the agent (an error, never a smaller closure).
 *   test_closure FIXTURE   (FIXTURE: a built agentgc-fixture) */
#include <ctype.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "agentgc/agentgc.h"
#include "core.h"

#include "fixture_run.h"

static const char *fixture;
static json_t *threads; /* the manifest's Codex threads */

/* A scratch dir with a generated home: 8 Codex roots, 4 with sub-agents down to depth 3 (one
 * of them without its spawn edge). */
static int setup(void **state)
{
	char *buf = NULL;
	size_t cap = 0;
	json_t *line;
	FILE *f;

	(void)state;
	if (fx_make(fixture, "test-closure", "--seed", "5", "--claude", "0", "--codex", "8", "--codex-children", "4",
		    "--jobs", "1", "--quiet", (char *)NULL) < 0)
		return -1;
	threads = json_array();
	f = fopen(fx_manifest, "r");
	if (!f || !threads)
		return -1;
	while (getline(&buf, &cap, f) > 0) {
		const char *agent;

		line = json_loads(buf, 0, NULL);
		agent = json_string_value(json_object_get(line, "agent"));
		if (agent && strcmp(agent, "codex") == 0)
			json_array_append(threads, line);
		json_decref(line);
	}
	free(buf);
	fclose(f);
	return json_array_size(threads) > 8 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(threads);
	return fx_remove();
}

static agc_ctx *ctx_of_home(void)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;
	agc_ctx *ctx = NULL;

	o.home = fx_home;
	assert_int_equal(agc_ctx_new(&ctx, &o), 0);
	return ctx;
}

static size_t codex(void)
{
	int a = agc_agent_find("codex");

	assert_true(a >= 0);
	return (size_t)a;
}

/* The thread of the manifest that passes want (first found), or fail. */
static json_t *pick(bool (*want)(json_t *t))
{
	size_t i;
	json_t *t;

	json_array_foreach(threads, i, t)
		if (want(t))
			return t;
	fail_msg("no such thread in the manifest");
	return NULL;
}

static const char *id_of(json_t *t)
{
	return json_string_value(json_object_get(t, "id"));
}

static bool has(char **v, size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], id) == 0)
			return true;
	return false;
}

/* a root whose sub-agents go down to depth 3, one of them reached only by line 0 */
static bool deep_root(json_t *t)
{
	size_t i;
	json_t *c, *k;
	bool no_edge = false;

	if (!json_is_null(json_object_get(t, "parent")) || json_array_size(json_object_get(t, "children")) < 3)
		return false;
	json_array_foreach(json_object_get(t, "children"), i, c) {
		size_t j;

		json_array_foreach(threads, j, k)
			if (strcmp(id_of(k), json_string_value(c)) == 0 && !json_is_true(json_object_get(k, "edge")))
				no_edge = true;
	}
	return no_edge;
}

static bool depth1_with_children(json_t *t)
{
	return json_integer_value(json_object_get(t, "depth")) == 1 && json_array_size(json_object_get(t, "children")) > 0;
}

/* What the keep closure of ids holds is the ids and their manifest children, nothing else; and
 * of every thread of the home, those are exactly the ones a keep list keeps. */
static void check_closure(char **kept, size_t n, json_t *const *keep, size_t nkeep)
{
	size_t i, j, want = 0;
	json_t *t, *c;

	json_array_foreach(threads, i, t) {
		bool reached = false;

		for (j = 0; j < nkeep; j++) {
			size_t k;

			if (strcmp(id_of(t), id_of(keep[j])) == 0)
				reached = true;
			json_array_foreach(json_object_get(keep[j], "children"), k, c)
				if (strcmp(id_of(t), json_string_value(c)) == 0)
					reached = true;
		}
		if (reached != has(kept, n, id_of(t)))
			fail_msg("%s: %s", id_of(t), reached ? "a sub-agent of a kept id not kept" : "kept, not reached");
		want += reached;
	}
	assert_int_equal(n, want);
	for (i = 1; i < n; i++)
		assert_true(strcmp(kept[i - 1], kept[i]) < 0);
}

/* Issue 9, test 2: a root kept keeps its sub-agents at every depth, also the one its edges
 * lack (line 0's parent_thread_id); a sub-agent kept keeps its own, not its parent. */
static void test_closure_sub_agents_kept(void **state)
{
	agc_ctx *ctx = ctx_of_home();
	json_t *root = pick(deep_root), *mid = pick(depth1_with_children);
	json_t *both[2] = {root, mid};
	const char *ids[2];
	char **kept = NULL;
	size_t n = 0;

	(void)state;
	ids[0] = id_of(root);
	assert_int_equal(agc_keep_closure(ctx, codex(), ids, 1, &kept, &n), 0);
	check_closure(kept, n, both, 1);
	assert_true(n >= 4);
	agc_keep_closure_free(kept, n);

	ids[0] = id_of(mid);
	assert_int_equal(agc_keep_closure(ctx, codex(), ids, 1, &kept, &n), 0);
	check_closure(kept, n, both + 1, 1);
	assert_false(has(kept, n, json_string_value(json_object_get(mid, "parent"))));
	agc_keep_closure_free(kept, n);

	/* two at once, one in another case: each once, canonical */
	{
		char upper[64];
		size_t i;

		snprintf(upper, sizeof(upper), "%s", id_of(root));
		for (i = 0; upper[i]; i++)
			upper[i] = (char)toupper((unsigned char)upper[i]);
		ids[0] = upper;
		ids[1] = id_of(mid);
		assert_int_equal(agc_keep_closure(ctx, codex(), ids, 2, &kept, &n), 0);
		check_closure(kept, n, both, 2);
		agc_keep_closure_free(kept, n);
	}
	agc_ctx_free(ctx);
}

static bool other_root(json_t *t)
{
	return json_is_null(json_object_get(t, "parent")) && !deep_root(t);
}

static void set_attached(const char *id, const char *parent)
{
	char path[PATH_MAX + 64], *sql;
	sqlite3 *db = NULL;

	snprintf(path, sizeof(path), "%s/.codex/state_5.sqlite", fx_home);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sql = sqlite3_mprintf("UPDATE threads SET attached_thread_parent_id = %Q WHERE id = %Q", parent, id);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_changes(db), 1);
	sqlite3_free(sql);
	sqlite3_close(db);
}

/* A thread that names a kept one in attached_thread_parent_id (a relation whose meaning is not
 * established) is kept with it, and its own sub-agents too: for a keep list it only keeps more
 * (a purge keeps it: t3710). */
static void test_closure_attached_kept(void **state)
{
	agc_ctx *ctx;
	json_t *root = pick(deep_root), *other = pick(other_root);
	json_t *both[2] = {root, other};
	const char *ids[1] = {id_of(root)};
	char **kept = NULL;
	size_t n = 0;

	(void)state;
	set_attached(id_of(other), id_of(root));
	ctx = ctx_of_home();
	assert_int_equal(agc_keep_closure(ctx, codex(), ids, 1, &kept, &n), 0);
	check_closure(kept, n, both, 2);
	agc_keep_closure_free(kept, n);
	agc_ctx_free(ctx);
	set_attached(id_of(other), NULL);
}

/* An id outside the grammar names nothing and widens nothing. */
static void test_closure_bad_ids(void **state)
{
	agc_ctx *ctx = ctx_of_home();
	const char *ids[3] = {"../state_5", "", NULL};
	char **kept = NULL;
	size_t n = 7;

	(void)state;
	assert_int_equal(agc_keep_closure(ctx, codex(), ids, 3, &kept, &n), 0);
	assert_int_equal(n, 0);
	agc_keep_closure_free(kept, n);
	agc_ctx_free(ctx);
}

/* A database that cannot be read may hold the edges: an error naming it, no closure. */
static void test_closure_store_unreadable(void **state)
{
	agc_ctx *ctx;
	json_t *root = pick(deep_root);
	const char *ids[1] = {id_of(root)};
	char path[PATH_MAX + 64], saved[PATH_MAX + 64];
	char **kept = NULL;
	size_t n = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/.codex/state_5.sqlite", fx_home);
	snprintf(saved, sizeof(saved), "%s/state_5.saved", fx_root);
	assert_int_equal(rename(path, saved), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("this is not a database, and it is longer than a header would be: .......................",
	      f);
	fclose(f);
	ctx = ctx_of_home();
	assert_int_equal(agc_keep_closure(ctx, codex(), ids, 1, &kept, &n), -1);
	assert_null(kept);
	assert_non_null(strstr(agc_error_last(), "state_5.sqlite"));
	agc_ctx_free(ctx);
	assert_int_equal(rename(saved, path), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closure_sub_agents_kept),
		cmocka_unit_test(test_closure_attached_kept),
		cmocka_unit_test(test_closure_bad_ids),
		cmocka_unit_test(test_closure_store_unreadable),
	};

	if (!(fixture = fx_arg(argc, argv, "test_closure")))
		return 2;
	return cmocka_run_group_tests(tests, setup, teardown);
}
