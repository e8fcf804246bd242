/* Unit tests of session.c: the plan helpers adapters build a purge's plan with, and agc_ls's
 * filtering, sorting and limit over what an adapter's listing streams, on the made-up agent
 * "fake" (fake_adapter.h) in a fresh home under $TMPDIR (agc_test.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "fake_adapter.h"

#define NOW 1795984693000LL
#define HOUR 3600000LL

static agc_ctx *ctx;

static int setup(void **state)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;

	(void)state;
	fake_n_list = 0;
	if (t_setup_dir("session") < 0)
		return -1;
	t_mkdir_p("home/fake", 0700);
	o.home = t_path("home");
	o.now_ms = NOW;
	return agc_ctx_new(&ctx, &o);
}

static int teardown(void **state)
{
	(void)state;
	agc_ctx_free(ctx);
	ctx = NULL;
	return t_teardown_dir();
}

/* ---- plan helpers --------------------------------------------------------------------- */

static void plan_of(agc_plan *p, const char *id)
{
	const agc_rootset *rs = agc_ctx_roots(ctx, 0);

	assert_non_null(rs);
	agc_plan_init(p, &fake_adapter, ctx, rs, id);
}

/* agc_plan_add_id adds an id once; agc_plan_add_art adds what exists (1), not what does not
 * (0), and measures a dir with everything in it (SPEC "Sizes"). */
static void test_session_plan_ids_and_arts(void **state)
{
	agc_plan p;
	char *json;

	(void)state;
	t_put("home/fake/a.rec", "12345", 0600, 0);
	t_put("home/fake/d/x", "abc", 0600, 0);
	t_put("home/fake/d/y/z", "zz", 0600, 0);
	plan_of(&p, "s1");
	assert_int_equal(agc_plan_add_id(&p, "s1"), 0);
	assert_int_equal(agc_plan_add_id(&p, "c1"), 0);
	assert_int_equal(agc_plan_add_id(&p, "s1"), 0);
	assert_int_equal(p.ids.n, 2);
	json = agc_plan_ids_json(&p);
	assert_string_equal(json, "[\"s1\",\"c1\"]");
	free(json);
	assert_true(agc_plan_empty(&p));

	assert_int_equal(agc_plan_add_art(&p, FAKE_ROOT, "a.rec", "s1", AGC_ART_RECORD, NULL), 1);
	assert_int_equal(agc_plan_add_art(&p, FAKE_ROOT, "missing", "s1", 0, NULL), 0);
	assert_int_equal(agc_plan_add_art(&p, FAKE_ROOT, "d", "c1", 0, NULL), 1);
	assert_int_equal(p.arts.n, 2);
	assert_false(agc_plan_empty(&p));
	assert_int_equal(p.arts.v[0].kind, 'f');
	assert_int_equal(p.arts.v[0].bytes, 5);
	assert_true(p.arts.v[0].flags & AGC_ART_RECORD);
	assert_int_equal(p.arts.v[1].kind, 'd');
	assert_int_equal(p.arts.v[1].bytes, 5); /* x and y/z */
	assert_string_equal(p.arts.v[1].session, "c1");
	agc_plan_release(&p);
}

/* A root found in discovery is added once (the same index for the same path); a database and a
 * watch are added only when they exist. */
static void test_session_plan_roots_dbs_watch(void **state)
{
	agc_plan p;
	int r1, r2;

	(void)state;
	t_put("home/other/w.db", "x", 0600, 0);
	plan_of(&p, "s1");
	r1 = agc_plan_add_root(&p, "plans", t_path("home/other"));
	r2 = agc_plan_add_root(&p, "plans", t_path("home/other"));
	assert_true(r1 > 0);
	assert_int_equal(r1, r2);
	assert_int_equal(p.local.n, 2);
	assert_int_equal(agc_plan_add_db(&p, (size_t)r1, "w.db"), 0);
	assert_int_equal(agc_plan_add_db(&p, (size_t)r1, "w.db"), 0);
	assert_int_equal(p.dbs.n, 1);
	assert_int_equal(agc_plan_add_db(&p, (size_t)r1, "none.db"), -1);
	assert_int_equal(agc_plan_add_watch(&p, (size_t)r1, "w.db"), 1);
	assert_int_equal(agc_plan_add_watch(&p, (size_t)r1, "none.db"), 0);
	assert_int_equal(p.watch.n, 1);
	assert_int_equal(agc_plan_add_rows(&p, 0, "t", "sid", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(p.rows.n, 1);
	assert_string_equal(p.rows.v[0].table, "t");
	agc_plan_release(&p);
}

/* The SQL of a row set: identifiers quoted (a hostile name stays one identifier), the ids bound
 * as ?1, the direct column and the rows reached through another table. */
static void test_session_rows_sql(void **state)
{
	agc_rowset rs = {0};
	char *sql;

	(void)state;
	rs.table = "part";
	rs.column = "session_id";
	sql = agc_rows_sql(&rs, NULL);
	assert_string_equal(sql, "DELETE FROM \"part\" WHERE \"session_id\" IN (SELECT value FROM json_each(?1))");
	free(sql);
	sql = agc_rows_sql(&rs, "count(*)");
	assert_string_equal(sql, "SELECT count(*) FROM \"part\" WHERE \"session_id\" IN (SELECT value FROM json_each(?1))");
	free(sql);

	rs.table = "x\"; DROP TABLE t; --";
	rs.column = NULL;
	rs.via_local = "message_id";
	rs.via_table = "message";
	rs.via_key = "id";
	rs.via_column = "session_id";
	sql = agc_rows_sql(&rs, NULL);
	assert_string_equal(sql, "DELETE FROM \"x\"\"; DROP TABLE t; --\" WHERE \"message_id\" IN (SELECT \"id\" FROM "
				 "\"message\" WHERE \"session_id\" IN (SELECT value FROM json_each(?1)))");
	free(sql);

	rs.column = "sid";
	sql = agc_rows_sql(&rs, NULL);
	assert_non_null(strstr(sql, "\"sid\" IN (SELECT value FROM json_each(?1)) OR \"message_id\" IN"));
	free(sql);
}

/* ---- agc_ls ---------------------------------------------------------------------------- */

static void add_session(const char *id, const char *parent, const char *project, int64_t updated,
			uint64_t bytes)
{
	agc_session_info *s = &fake_list[fake_n_list++];

	memset(s, 0, sizeof(*s));
	s->agent = "fake";
	s->id = id;
	s->parent = parent;
	s->project = project;
	s->created_ms = updated - HOUR;
	s->updated_ms = updated;
	s->bytes = bytes;
}

typedef struct listed {
	char ids[256];
	size_t n;
} listed;

static int collect(const agc_session_info *s, void *ud)
{
	listed *l = ud;

	if (l->n++)
		strncat(l->ids, " ", sizeof(l->ids) - strlen(l->ids) - 1);
	strncat(l->ids, s->id, sizeof(l->ids) - strlen(l->ids) - 1);
	return 0;
}

/* The ids agc_ls gives with opts, joined by spaces, in its order. */
static const char *ls(agc_ls_opts *o)
{
	static listed l;

	memset(&l, 0, sizeof(l));
	assert_int_equal(agc_ls(ctx, o, collect, &l), 0);
	return l.ids;
}

static void fixture_list(void)
{
	add_session("old", NULL, "/a/b", NOW - 48 * HOUR, 10);
	add_session("new", NULL, "/a/b/c", NOW - 1 * HOUR, 20);
	add_session("twin", NULL, "/a/bc", NOW - 2 * HOUR, 300);
	add_session("kid", "new", "/a/b/c", NOW - 1000, 5);
	add_session("mid", NULL, "/x", NOW - 10 * HOUR, 40);
}

/* Root sessions only, newest first; children with opts.children. */
static void test_session_ls_sort_children(void **state)
{
	agc_ls_opts o = AGC_LS_OPTS_INIT;

	(void)state;
	fixture_list();
	assert_string_equal(ls(&o), "new twin mid old");
	o.children = 1;
	assert_non_null(strstr(ls(&o), "kid"));
	o.children = 0;
	o.sort = AGC_SORT_SIZE;
	assert_string_equal(ls(&o), "twin mid new old");
	o.limit = 2;
	assert_string_equal(ls(&o), "twin mid");
	o.sort = AGC_SORT_UPDATED;
	o.limit = 1;
	assert_string_equal(ls(&o), "new");
}

/* --project on component boundaries: /a/b selects /a/b and /a/b/c, never /a/bc; a trailing
 * slash does not matter, and the dir need not exist. */
static void test_session_ls_project(void **state)
{
	agc_ls_opts o = AGC_LS_OPTS_INIT;

	(void)state;
	fixture_list();
	o.project = "/a/b";
	assert_string_equal(ls(&o), "new old");
	o.project = "/a/b/";
	assert_string_equal(ls(&o), "new old");
	o.project = "/a/bc";
	assert_string_equal(ls(&o), "twin");
	o.project = "/a";
	assert_string_equal(ls(&o), "new twin old");
	o.project = "/a/b/c/../c";
	assert_string_equal(ls(&o), "new");
	o.project = "/nowhere";
	assert_string_equal(ls(&o), "");
}

/* --older-than and --newer-than against the context's now. */
static void test_session_ls_age(void **state)
{
	agc_ls_opts o = AGC_LS_OPTS_INIT;

	(void)state;
	fixture_list();
	o.older_than_ms = 5 * HOUR;
	assert_string_equal(ls(&o), "mid old");
	o.older_than_ms = 0;
	o.newer_than_ms = 5 * HOUR;
	assert_string_equal(ls(&o), "new twin");
	o.older_than_ms = 24 * HOUR;
	o.newer_than_ms = 72 * HOUR;
	assert_string_equal(ls(&o), "old");
}

#define TT(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TT(test_session_plan_ids_and_arts),
		TT(test_session_plan_roots_dbs_watch),
		TT(test_session_rows_sql),
		TT(test_session_ls_sort_children),
		TT(test_session_ls_project),
		TT(test_session_ls_age),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
