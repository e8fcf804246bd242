/* Unit tests of prune.c through the public API (agc_prune), on the made-up agent "fake"
 * (fake_adapter.h): the selectors, the keep closure and the settle floor checked on each
 * session's own discovery, the budget and its rotation state, and a caller that stops. */
#include <errno.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "fake_adapter.h"

#define DAY ((int64_t)86400 * 1000)

static agc_ctx *ctx;
static int64_t now;
static unsigned tag;

/* The test's name for a session, made unique per run ("a" -> "p-<tag>-a"): no process on the
 * machine has it in its arguments, so none holds it (R5's argv rule). */
static const char *I(const char *name)
{
	static char b[16][64];
	static unsigned n;
	char *o = b[n++ % 16];

	snprintf(o, sizeof(b[0]), "p-%08x-%s", tag, name);
	return o;
}

static int setup(void **state)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;

	(void)state;
	fake_n_list = 0;
	fake_discover_hook = NULL;
	if (t_setup_dir("prune") < 0)
		return -1;
	t_mkdir_p("home/fake", 0700);
	t_mkdir_p("state", 0700);
	o.home = t_path("home");
	if (agc_ctx_new(&ctx, &o) < 0)
		return -1;
	now = agc_ctx_now_ms(ctx);
	tag = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	agc_ctx_free(ctx);
	ctx = NULL;
	return t_teardown_dir();
}

/* A session of the fake agent: its record and its dir, with the mtime given, and its row in
 * the listing (updated as given; parent NULL for a root). */
static void session(const char *id, const char *parent, int64_t listed_ms, int64_t files_ms)
{
	static char own[16][2][64]; /* the listing's strings, as long as the test runs */
	agc_session_info *s = &fake_list[fake_n_list];

	snprintf(own[fake_n_list][0], sizeof(own[0][0]), "%s", id);
	snprintf(own[fake_n_list][1], sizeof(own[0][1]), "%s", parent ? parent : "");
	id = own[fake_n_list][0];
	parent = parent ? own[fake_n_list][1] : NULL;
	fake_n_list++;

	t_put(t_fmt("home/fake/sessions/%s.rec", id), "{}\n", 0600, files_ms);
	t_put(t_fmt("home/fake/sessions/%s/notes.md", id), "notes", 0600, files_ms);
	t_mtime(t_fmt("home/fake/sessions/%s", id), files_ms);
	memset(s, 0, sizeof(*s));
	s->agent = "fake";
	s->id = id;
	s->parent = parent;
	s->updated_ms = listed_ms;
	s->created_ms = listed_ms;
}

/* parent's discovery takes child along (fake's kids/<parent>) */
static void kid(const char *parent, const char *child)
{
	t_put(t_fmt("home/fake/kids/%s", parent), child, 0600, 0);
}

static bool rec(const char *id)
{
	return t_exists(t_fmt("home/fake/sessions/%s.rec", id));
}

typedef struct seen {
	char id[8][64];
	char what[8][32];
	size_t n;
	size_t stop_after; /* 0: never */
} seen;

static int on_report(const agc_report *r, void *ud)
{
	seen *s = ud;

	if (s->n < 8) {
		snprintf(s->id[s->n], sizeof(s->id[0]), "%s", agc_report_id(r));
		snprintf(s->what[s->n], sizeof(s->what[0]), "%s",
			 agc_report_skip(r) ? agc_report_skip(r) : agc_status_name(agc_report_status(r)));
		s->n++;
	}
	return s->stop_after && s->n >= s->stop_after;
}

static const char *what_of(const seen *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->id[i], id) == 0)
			return s->what[i];
	return "-";
}

static void test_prune_refuses_bad_options(void **state)
{
	agc_prune_opts o = AGC_PRUNE_OPTS_INIT, bad;
	agc_prune_summary sum;

	(void)state;
	session(I("a"), NULL, now - 40 * DAY, now - 40 * DAY);
	assert_int_equal(agc_prune(ctx, NULL, NULL, NULL, &sum), -1);
	/* no selector */
	assert_int_equal(agc_prune(ctx, &o, NULL, NULL, &sum), -1);
	assert_non_null(strstr(agc_error_last(), "selector"));
	o.older_than_ms = DAY;
	bad = o;
	bad.version = 0;
	assert_int_equal(agc_prune(ctx, &bad, NULL, NULL, &sum), -1);
	bad = o;
	bad.flags = AGC_PURGE_WITH_FORKS;
	assert_int_equal(agc_prune(ctx, &bad, NULL, NULL, &sum), -1);
	bad = o;
	bad.settle_ms = -1;
	assert_int_equal(agc_prune(ctx, &bad, NULL, NULL, &sum), -1);
	bad = o;
	bad.agents = 1u << 30;
	assert_int_equal(agc_prune(ctx, &bad, NULL, NULL, &sum), -1);
	/* and nothing went */
	assert_true(rec(I("a")));
}

static void test_prune_select_keep_settle(void **state)
{
	agc_prune_opts o = AGC_PRUNE_OPTS_INIT;
	agc_prune_summary sum;
	const char *keep[] = {I("b"), I("k"), "not an id"};
	seen s = {0};

	(void)state;
	session(I("a"), NULL, now - 40 * DAY, now - 40 * DAY);  /* old: goes */
	session(I("b"), NULL, now - 40 * DAY, now - 40 * DAY);  /* kept */
	session(I("c"), NULL, now - 40 * DAY, now - 40 * DAY);  /* old, but takes kept k along */
	session(I("k"), I("c"), now - 40 * DAY, now - 40 * DAY);
	kid(I("c"), I("k"));
	session(I("d"), NULL, now - 40 * DAY, now - 3600000);   /* listed old, a file of an hour ago */
	session(I("e"), NULL, now - 3600000, now - 3600000);    /* young, as listed */
	session(I("f"), NULL, now - 3 * DAY, now - 3 * DAY);    /* not older than 10d */
	o.older_than_ms = 10 * DAY;
	o.keep_given = 1;
	o.keep = keep;
	o.n_keep = 3;
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_string_equal(what_of(&s, I("a")), "purged");
	assert_false(rec(I("a")));
	/* kept: neither touched nor reported */
	assert_string_equal(what_of(&s, I("b")), "-");
	assert_true(rec(I("b")));
	/* its child is kept: the parent stays, whole */
	assert_string_equal(what_of(&s, I("c")), "kept");
	assert_true(rec(I("c")) && rec(I("k")));
	/* the newest file counts, whatever the listing says */
	assert_string_equal(what_of(&s, I("d")), "unsettled");
	assert_true(rec(I("d")));
	/* e is younger than --older-than: not a candidate; f neither */
	assert_string_equal(what_of(&s, I("e")), "-");
	assert_string_equal(what_of(&s, I("f")), "-");
	assert_true(rec(I("e")) && rec(I("f")));
	assert_int_equal(sum.purged, 1);
	assert_int_equal(sum.skipped_kept, 1);
	assert_int_equal(sum.skipped_unsettled, 1);
	assert_int_equal(sum.candidates, 3);
	assert_int_equal(sum.scanned, 6);
	assert_int_equal(sum.errors, 0);
	assert_false(sum.budget_out);
}

static void test_prune_settle_floor_from_listing(void **state)
{
	agc_prune_opts o = AGC_PRUNE_OPTS_INIT;
	agc_prune_summary sum;
	seen s = {0};

	(void)state;
	session(I("a"), NULL, now - 3 * DAY, now - 3 * DAY);
	session(I("b"), NULL, now - 30 * DAY, now - 30 * DAY);
	o.older_than_ms = 1;
	o.settle_ms = 7 * DAY;
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_string_equal(what_of(&s, I("a")), "unsettled");
	assert_string_equal(what_of(&s, I("b")), "purged");
	assert_true(rec(I("a")));
	assert_false(rec(I("b")));
	/* a dry run changes nothing and says what would go */
	session(I("c"), NULL, now - 30 * DAY, now - 30 * DAY);
	memset(&s, 0, sizeof(s));
	o.flags = AGC_PURGE_DRY_RUN;
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_string_equal(what_of(&s, I("c")), "dry-run");
	assert_int_equal(sum.purged, 1);
	assert_true(rec(I("c")));
}

/* --orphans: only what the listing calls an orphan is a candidate, and one whose record its own
 * discovery finds again (it came back between the listing and the purge) is skipped,
 * "recorded", whole. */
static void test_prune_orphans(void **state)
{
	agc_prune_opts o = AGC_PRUNE_OPTS_INIT;
	agc_prune_summary sum;
	seen s = {0};

	(void)state;
	session(I("a"), NULL, now - 40 * DAY, now - 40 * DAY); /* a session with its record */
	session(I("o"), NULL, now - 40 * DAY, now - 40 * DAY); /* an orphan: its record is gone */
	fake_list[1].orphan = 1;
	assert_int_equal(unlink(t_path(t_fmt("home/fake/sessions/%s.rec", I("o")))), 0);
	session(I("r"), NULL, now - 40 * DAY, now - 40 * DAY); /* listed as one, its record back */
	fake_list[2].orphan = 1;
	o.orphans = 1;
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_string_equal(what_of(&s, I("a")), "-");
	assert_true(rec(I("a")));
	assert_string_equal(what_of(&s, I("o")), "purged");
	assert_false(t_exists(t_fmt("home/fake/sessions/%s", I("o"))));
	assert_string_equal(what_of(&s, I("r")), "recorded");
	assert_true(rec(I("r")) && t_exists(t_fmt("home/fake/sessions/%s/notes.md", I("r"))));
	assert_int_equal(sum.candidates, 2);
	assert_int_equal(sum.purged, 1);
	assert_int_equal(sum.skipped_recorded, 1);
	/* and with an age: an orphan younger than it is no candidate */
	session(I("y"), NULL, now - 2 * DAY, now - 2 * DAY);
	fake_list[3].orphan = 1;
	assert_int_equal(unlink(t_path(t_fmt("home/fake/sessions/%s.rec", I("y")))), 0);
	memset(&s, 0, sizeof(s));
	o.older_than_ms = 10 * DAY;
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_string_equal(what_of(&s, I("y")), "-");
	assert_true(t_exists(t_fmt("home/fake/sessions/%s", I("y"))));
}

static void test_prune_budget_zero_and_state(void **state)
{
	agc_prune_opts o = AGC_PRUNE_OPTS_INIT;
	agc_prune_summary sum;
	seen s = {0};
	char *st;

	(void)state;
	session(I("a"), NULL, now - 40 * DAY, now - 40 * DAY);
	session(I("b"), NULL, now - 40 * DAY, now - 40 * DAY);
	session(I("y"), NULL, now - 3600000, now - 3600000);
	o.older_than_ms = DAY;
	o.budget_ms = 0;
	o.state_dir = t_path("state");
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_int_equal(s.n, 0);
	assert_true(rec(I("a")) && rec(I("b")));
	assert_true(sum.budget_out);
	/* the young one is no candidate */
	assert_int_equal(sum.remaining, 2);
	assert_string_equal(sum.next_agent, "fake");
	st = t_read("state/prune-next", NULL);
	assert_non_null(st);
	assert_string_equal(st, "fake\n");
	free(st);
	/* a budget that does not run out: done, nothing remains */
	o.budget_ms = 60 * 1000;
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_false(sum.budget_out);
	assert_int_equal(sum.remaining, 0);
	assert_int_equal(sum.purged, 2);
	assert_false(rec(I("a")) || rec(I("b")));
}

static void test_prune_caller_stops(void **state)
{
	agc_prune_opts o = AGC_PRUNE_OPTS_INIT;
	agc_prune_summary sum;
	seen s = {.stop_after = 1};

	(void)state;
	session(I("a"), NULL, now - 40 * DAY, now - 40 * DAY);
	session(I("b"), NULL, now - 41 * DAY, now - 41 * DAY);
	o.older_than_ms = DAY;
	/* one batch: both go, and both are told though the caller asked to stop after one */
	assert_int_equal(agc_prune(ctx, &o, on_report, &s, &sum), 0);
	assert_int_equal(s.n, 2);
	assert_false(rec(I("a")) || rec(I("b")));
	assert_int_equal(sum.purged, 2);
}

#define TT(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TT(test_prune_refuses_bad_options),
		TT(test_prune_select_keep_settle),
		TT(test_prune_settle_floor_from_listing),
		TT(test_prune_orphans),
		TT(test_prune_budget_zero_and_state),
		TT(test_prune_caller_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
