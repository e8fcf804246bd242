/* Unit tests of the Claude Code adapter's state for a run of many ids (agc_adapter.run_new):
 * the listings of projects/ and its dirs that one discovery makes serve the next ones only
 * while their dirs are as they were. A home of its own under $TMPDIR (agc_test.h). */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "core.h"
#include "session.h"

#define ID_A "a9018be5-6555-4077-82af-13f81e4d4ca7"
#define ID_B "0b5c3a1e-2f4d-4e6a-9b8c-7d6e5f4a3b2c"
#define ID_C "5d2f8e41-7a3b-4c9d-8e1f-2a6b4c8d0e13"
#define KEY "-home-dev-work"

static agc_ctx *ctx;
static const agc_adapter *ad;
static size_t agent;

static void transcript(const char *key, const char *id)
{
	t_writes(t_fmt("home/.claude/projects/%s/%s.jsonl", key, id),
		 t_fmt("{\"type\":\"user\",\"sessionId\":\"%s\",\"cwd\":\"/home/dev/work\","
		       "\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
		       id));
}

static int setup(void **state)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;
	size_t a;

	(void)state;
	if (t_setup_dir("claude-run") < 0)
		return -1;
	t_mkdir_p("home/.claude/projects/" KEY, 0755);
	t_mkdir_p("home/.claude/projects/-home-dev-other", 0755);
	transcript(KEY, ID_A);
	transcript(KEY, ID_B);
	o.home = t_path("home");
	if (agc_ctx_new(&ctx, &o) < 0)
		return -1;
	for (a = 0; agc_adapter_table[a]; a++)
		if (strcmp(agc_adapter_table[a]->name, "claude") == 0)
			break;
	ad = agc_adapter_table[a];
	agent = a;
	return ad ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	agc_ctx_free(ctx);
	ctx = NULL;
	return t_teardown_dir();
}

/* A discovery of id from the run's state, as a purge of many ids makes it. */
static void discover(agc_plan *p, const char *id, void *run)
{
	size_t i;

	agc_plan_init(p, ad, ctx, agc_ctx_roots(ctx, agent), id);
	p->run = run;
	assert_int_equal(agc_plan_add_id(p, id), 0);
	for (i = 0; i < p->roots->n; i++)
		agc_plan_rootfd(p, i);
	assert_int_equal(ad->discover(p), 0);
}

static bool has_art(const agc_plan *p, const char *rel)
{
	size_t i;

	for (i = 0; i < p->arts.n; i++)
		if (strcmp(p->arts.v[i].rel, rel) == 0)
			return true;
	return false;
}

/* A session written into a project dir after the run listed it is found by a later discovery
 * of the same run; so is one written into a project dir made after the listing of projects/. */
static void test_claude_run_listing_follows_changes(void **state)
{
	void *run = ad->run_new();
	agc_plan p;

	(void)state;
	assert_non_null(run);
	/* the first id probes; the second lists projects/ and its dirs */
	discover(&p, ID_A, run);
	assert_true(has_art(&p, "projects/" KEY "/" ID_A ".jsonl"));
	agc_plan_release(&p);
	discover(&p, ID_B, run);
	assert_true(has_art(&p, "projects/" KEY "/" ID_B ".jsonl"));
	agc_plan_release(&p);
	/* made after those listings, with names only a listing finds too */
	transcript(KEY, ID_C);
	t_writes("home/.claude/projects/" KEY "/" ID_C ".jsonl.superseded-1", "{}\n");
	t_mkdir_p("home/.claude/projects/-home-dev-new", 0755);
	transcript("-home-dev-new", ID_C);
	discover(&p, ID_C, run);
	assert_true(has_art(&p, "projects/" KEY "/" ID_C ".jsonl"));
	assert_true(has_art(&p, "projects/" KEY "/" ID_C ".jsonl.superseded-1"));
	assert_true(has_art(&p, "projects/-home-dev-new/" ID_C ".jsonl"));
	agc_plan_release(&p);
	/* and gone again: a listing that still had them would only make probes that fail */
	assert_int_equal(unlink(t_path("home/.claude/projects/" KEY "/" ID_C ".jsonl")), 0);
	discover(&p, ID_C, run);
	assert_false(has_art(&p, "projects/" KEY "/" ID_C ".jsonl"));
	assert_true(has_art(&p, "projects/-home-dev-new/" ID_C ".jsonl"));
	agc_plan_release(&p);
	ad->run_free(run);
}

/* Listings unchanged are used as they are: the same answer as a discovery on its own. */
static void test_claude_run_listing_same_answer(void **state)
{
	void *run = ad->run_new();
	agc_plan alone, p;
	size_t i;

	(void)state;
	assert_non_null(run);
	discover(&p, ID_A, run);
	agc_plan_release(&p);
	discover(&p, ID_B, run);
	agc_plan_release(&p);
	discover(&p, ID_B, run);
	discover(&alone, ID_B, NULL);
	assert_int_equal(p.arts.n, alone.arts.n);
	for (i = 0; i < alone.arts.n; i++)
		assert_true(has_art(&p, alone.arts.v[i].rel));
	agc_plan_release(&alone);
	agc_plan_release(&p);
	ad->run_free(run);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_claude_run_listing_follows_changes),
		T(test_claude_run_listing_same_answer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
