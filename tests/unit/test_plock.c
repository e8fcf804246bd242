/* Unit tests of the engine's lock phase and fork refusals (purge.c), driven through the public
 * API with an agent of the test's own: this file defines agc_adapter_table, so the engine picks
 * the "fake" adapter below and no real one. The fake agent keeps, beneath <home>/fake:
 *   s/<id>.rec          the session's record
 *   s/<id>.of           the id of the session whose history it reads (it is a fork of it)
 *   locks/<id>.lock     its writer lock, taken under locks/.coordination.lock
 * Children that hold a lock are killed and reaped in teardown. The ids (plkxone, plkxtwo,
 * plkxthree) are ones no command line on the machine holds: the gate reads the real process
 * table, where any process whose argv holds an id (a shell's "done", say, for "one") is a
 * holder. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "core.h"
#include "error.h"
#include "json.h"
#include "session.h"

/* ---- the fake agent ---------------------------------------------------------------------- */

static int fake_id(const char *in, char *out)
{
	size_t i, n = in ? strlen(in) : 0;

	if (n == 0 || n > 32)
		return agc_error_set(AGC_EUNSAFE, "'%s' is not a fake id", in ? in : "");
	for (i = 0; i < n; i++)
		if (!((in[i] >= 'a' && in[i] <= 'z') || (in[i] >= '0' && in[i] <= '9')))
			return agc_error_set(AGC_EUNSAFE, "'%s' is not a fake id", in);
	memcpy(out, in, n + 1);
	return 0;
}

static int fake_roots(agc_ctx *ctx, agc_rootset *rs)
{
	char *path = agc_strfmt("%s/fake", ctx->home);
	int rc = path ? agc_rootset_add(rs, "home", path, "default") : -1;

	free(path);
	return rc < 0 ? -1 : 0;
}

static int discover_one(agc_plan *p, const char *id);

/* The forks of id: the sessions whose s/<fork>.of names it (a fork's own file says whose
 * history it reads, as a Codex fork's rollout does); refused, or with AGC_PURGE_WITH_FORKS
 * part of the closure. */
static int fake_forks(agc_plan *p, const char *id)
{
	int rootfd = agc_plan_rootfd(p, 0), rc = 0;
	DIR *d = rootfd >= 0 ? agc_dir_at(rootfd, "s") : NULL;
	struct dirent *e;

	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char rel[300], f[AGC_ID_MAX];
		agc_buf b = AGC_BUF_INIT_MAX(4096);

		if (n < 4 || strcmp(e->d_name + n - 3, ".of") != 0 || n - 3 >= sizeof(f))
			continue;
		memcpy(f, e->d_name, n - 3);
		f[n - 3] = '\0';
		snprintf(rel, sizeof(rel), "s/%s", e->d_name);
		if (fake_id(f, f) == 0 && agc_read_at(rootfd, rel, 100, &b) == 0 &&
		    strcmp(agc_buf_cstr(&b), id) == 0) {
			if (!(p->flags & AGC_PURGE_WITH_FORKS))
				rc = agc_plan_add_fork(p, f);
			else if (agc_plan_add_id(p, f) < 0 || discover_one(p, f) < 0)
				rc = -1;
		}
		agc_buf_release(&b);
	}
	closedir(d);
	return rc;
}

static int discover_one(agc_plan *p, const char *id)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "locks/%s.lock", id);
	if (agc_plan_add_lock(p, 0, rel, ".coordination.lock", id) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "s/%s.of", id);
	if (agc_plan_add_art(p, 0, rel, id, 0, NULL) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "s/%s.rec", id);
	if (agc_plan_add_art(p, 0, rel, id, AGC_ART_RECORD, NULL) < 0)
		return -1;
	return fake_forks(p, id);
}

/* run after discovery, before the gate: a writer arriving meanwhile */
static void (*after_discover)(const char *id);

static int fake_discover(agc_plan *p)
{
	int rc = discover_one(p, p->id);

	if (rc == 0 && after_discover && !p->again)
		after_discover(p->id);
	return rc;
}

static int fake_list(agc_ctx *ctx, const agc_rootset *rs, const agc_ls_opts *opts, agc_ls_sink *sink)
{
	return 0;
}

static const agc_adapter fake = {
	.name = "fake",
	.id_canon = fake_id,
	.roots = fake_roots,
	.discover = fake_discover,
	.list = fake_list,
};

const agc_adapter *const agc_adapter_table[] = {&fake, NULL};

/* ---- the test's home ---------------------------------------------------------------------- */

static pid_t child = -1;
static agc_ctx *ctx;

/* the fake agent's root is <t_dir>/fake */
static const char *P(const char *rel)
{
	return t_pathf("fake/%s", rel);
}

static void put(const char *rel, const char *data)
{
	t_put(P(rel) + strlen(t_dir) + 1, data, 0644, 0);
}

static bool exists(const char *rel)
{
	struct stat st;

	return lstat(P(rel), &st) == 0;
}

static void hold(const char *rel, int how)
{
	char rel_fake[PATH_MAX];

	snprintf(rel_fake, sizeof(rel_fake), "fake/%s", rel);
	child = t_hold_flock(rel_fake, how);
}

static int make_ctx(const char *procroot)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;

	o.home = t_dir;
	o.procroot = procroot;
	agc_ctx_free(ctx);
	ctx = NULL;
	return agc_ctx_new(&ctx, &o);
}

static int setup(void **state)
{
	(void)state;
	if (t_setup_dir("plock") < 0)
		return -1;
	t_mkdir_p("fake/s", 0755);
	t_mkdir_p("fake/locks", 0755);
	put("locks/.coordination.lock", "");
	return make_ctx(NULL);
}

static int teardown(void **state)
{
	(void)state;
	t_let_go(&child);
	agc_ctx_free(ctx);
	ctx = NULL;
	return t_teardown_dir();
}

static bool removed_has(const agc_report *r, const char *rel)
{
	size_t i;

	for (i = 0; i < agc_report_removed_count(r); i++)
		if (strcmp(agc_report_removed(r, i)->path, P(rel)) == 0)
			return true;
	return false;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* A lock nobody holds goes in the release step, after the record; the report lists it. */
static void test_purge_free_lock(void **state)
{
	agc_report *r = NULL;

	(void)state;
	put("s/plkxone.rec", "x");
	put("locks/plkxone.lock", "");
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_PURGED);
	assert_int_equal(agc_report_exit(r), 0);
	assert_false(exists("s/plkxone.rec"));
	assert_false(exists("locks/plkxone.lock"));
	assert_true(exists("locks/.coordination.lock"));
	assert_true(removed_has(r, "locks/plkxone.lock"));
	assert_true(removed_has(r, "s/plkxone.rec"));
	/* the lock is the last thing that goes */
	assert_string_equal(agc_report_removed(r, agc_report_removed_count(r) - 1)->path, P("locks/plkxone.lock"));
	agc_report_free(r);
}

/* Held by another process (shared or exclusive): in use, why "lock", that process named, and
 * nothing changed; in-use says the same. */
static void test_purge_held_lock(void **state)
{
	agc_report *r = NULL;
	int how;

	(void)state;
	for (how = 0; how < 2; how++) {
		put("s/plkxone.rec", "x");
		put("locks/plkxone.lock", "");
		hold("locks/plkxone.lock", how ? LOCK_EX : LOCK_SH);
		assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
		assert_int_equal(agc_report_status(r), AGC_ST_IN_USE);
		assert_int_equal(agc_report_exit(r), 4);
		assert_true(agc_report_holder_count(r) >= 1);
		assert_string_equal(agc_report_holder(r, 0)->why, "lock");
		assert_int_equal(agc_report_holder(r, 0)->pid, child);
		assert_string_equal(agc_report_holder(r, 0)->what, P("locks/plkxone.lock"));
		assert_true(exists("s/plkxone.rec"));
		assert_true(exists("locks/plkxone.lock"));
		agc_report_free(r);
		assert_int_equal(agc_in_use(ctx, "fake", "plkxone", &r), 0);
		assert_int_equal(agc_report_status(r), AGC_ST_IN_USE);
		agc_report_free(r);
		t_let_go(&child);
	}
	/* let go: the same purge goes through */
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_PURGED);
	assert_false(exists("locks/plkxone.lock"));
	agc_report_free(r);
}

/* Without the kernel's lock table (a process table with no "locks"), the probe under the
 * coordination lock finds the holder all the same. */
static void test_purge_held_lock_probe(void **state)
{
	agc_report *r = NULL;
	char proc[PATH_MAX];

	(void)state;
	t_mkdir("proc");
	snprintf(proc, sizeof(proc), "%s", t_path("proc"));
	assert_int_equal(make_ctx(proc), 0);
	put("s/plkxone.rec", "x");
	put("locks/plkxone.lock", "");
	hold("locks/plkxone.lock", LOCK_EX);
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_IN_USE);
	assert_string_equal(agc_report_holder(r, 0)->why, "lock");
	assert_true(exists("s/plkxone.rec"));
	assert_true(exists("locks/plkxone.lock"));
	agc_report_free(r);
}

/* Only the lock is left (its writer was killed): the session is found, the lock goes. */
static void test_purge_stale_lock_only(void **state)
{
	agc_report *r = NULL;

	(void)state;
	put("locks/plkxone.lock", "");
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_PURGED);
	assert_false(exists("locks/plkxone.lock"));
	agc_report_free(r);
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_NOT_FOUND);
	agc_report_free(r);
}

/* A dry run lists the lock with what would go, and changes nothing. */
static void test_dry_run_lists_lock(void **state)
{
	agc_report *r = NULL;

	(void)state;
	put("s/plkxone.rec", "x");
	put("locks/plkxone.lock", "");
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", AGC_PURGE_DRY_RUN, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_DRY_RUN);
	assert_true(removed_has(r, "locks/plkxone.lock"));
	assert_true(exists("locks/plkxone.lock"));
	assert_true(exists("s/plkxone.rec"));
	agc_report_free(r);
}

/* A FIFO or a link in the lock's place cannot be held the agent's way (the agent opens the
 * lock through a link, and a FIFO can be locked too): the purge is refused, nothing changed,
 * the lock named (R2, R8); a dry run says the same. */
static void test_lock_not_regular(void **state)
{
	agc_report *r = NULL;
	size_t i, k;
	bool said = false;

	(void)state;
	for (k = 0; k < 2; k++) {
		put("s/plkxone.rec", "x");
		if (k == 0) {
			assert_int_equal(mkfifo(P("locks/plkxone.lock"), 0644), 0);
		} else {
			put("elsewhere.lock", "");
			assert_int_equal(symlink("../elsewhere.lock", P("locks/plkxone.lock")), 0);
		}
		assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
		assert_int_equal(agc_report_status(r), AGC_ST_REFUSED);
		assert_int_equal(agc_report_exit(r), 4);
		said = false;
		for (i = 0; i < agc_report_residual_count(r); i++)
			said |= strcmp(agc_report_residual(r, i)->path, P("locks/plkxone.lock")) == 0 &&
				strcmp(agc_report_residual(r, i)->reason, k ? "symlink" : "not a regular file") == 0;
		assert_true(said);
		assert_true(exists("locks/plkxone.lock"));
		assert_true(exists("s/plkxone.rec"));
		agc_report_free(r);
		assert_int_equal(agc_purge(ctx, "fake", "plkxone", AGC_PURGE_DRY_RUN, &r), 0);
		assert_int_equal(agc_report_exit(r), 4);
		agc_report_free(r);
		assert_int_equal(unlink(P("locks/plkxone.lock")), 0);
	}
}

/* A link to the lock, held through it: in-use sees the holder through the link. */
static void test_lock_link_held(void **state)
{
	agc_report *r = NULL;

	(void)state;
	put("s/plkxone.rec", "x");
	put("elsewhere.lock", "");
	assert_int_equal(symlink("../elsewhere.lock", P("locks/plkxone.lock")), 0);
	hold("elsewhere.lock", LOCK_EX);
	assert_int_equal(agc_in_use(ctx, "fake", "plkxone", &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_IN_USE);
	assert_string_equal(agc_report_holder(r, 0)->why, "lock");
	agc_report_free(r);
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_exit(r), 4);
	assert_true(exists("s/plkxone.rec"));
	agc_report_free(r);
}

static void writer_arrives(const char *id)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "locks/%s.lock", id);
	put(rel, "");
	hold(rel, LOCK_EX);
}

/* No lock file at discovery (the writer's clean exit removed it): a writer that takes it
 * before the gate makes the session in use, nothing removed. */
static void test_lock_arrives(void **state)
{
	agc_report *r = NULL;

	(void)state;
	put("s/plkxone.rec", "x");
	after_discover = writer_arrives;
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	after_discover = NULL;
	assert_int_equal(agc_report_status(r), AGC_ST_IN_USE);
	assert_string_equal(agc_report_holder(r, 0)->why, "lock");
	assert_true(exists("s/plkxone.rec"));
	assert_true(exists("locks/plkxone.lock"));
	agc_report_free(r);
}

/* No lock file and no lock dir at all: the purge makes both and the coordination file as the
 * agent would, holds the lock while it removes, and removes the lock it made (not reported:
 * it was not the session's); the dir and the coordination file stay, the agent's own. */
static void test_lock_made(void **state)
{
	agc_report *r = NULL;
	size_t i;

	(void)state;
	put("s/plkxone.rec", "x");
	assert_int_equal(system("rm -rf -- \"$TMPDIR\"/agc-test-plock-*/fake/locks"), 0);
	assert_false(exists("locks"));
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_PURGED);
	assert_false(exists("s/plkxone.rec"));
	assert_false(exists("locks/plkxone.lock"));
	assert_true(exists("locks/.coordination.lock"));
	for (i = 0; i < agc_report_removed_count(r); i++)
		assert_null(strstr(agc_report_removed(r, i)->path, "plkxone.lock"));
	agc_report_free(r);
	/* nothing else of it: not found */
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_NOT_FOUND);
	agc_report_free(r);
}

/* A lock table that leaves the holder out (another pid namespace's locks are not listed):
 * where the table is not known to be complete, the probe finds the holder. */
static void test_lock_table_incomplete(void **state)
{
	agc_report *r = NULL;
	char proc[PATH_MAX];

	(void)state;
	t_mkdir("proc");
	t_writes("proc/locks", "");
	snprintf(proc, sizeof(proc), "%s", t_path("proc"));
	assert_int_equal(make_ctx(proc), 0);
	put("s/plkxone.rec", "x");
	put("locks/plkxone.lock", "");
	hold("locks/plkxone.lock", LOCK_EX);
	assert_int_equal(agc_in_use(ctx, "fake", "plkxone", &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_IN_USE);
	agc_report_free(r);
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", AGC_PURGE_DRY_RUN, &r), 0);
	assert_int_equal(agc_report_exit(r), 4);
	agc_report_free(r);
	assert_true(exists("s/plkxone.rec"));
}

/* A surviving fork reads the session: refused, reason fork, the fork named, nothing changed
 * (a dry run says the same); with the forks flag both go, the fork's fork too. */
static void test_forks(void **state)
{
	agc_report *r = NULL;
	size_t i;

	(void)state;
	put("s/plkxone.rec", "x");
	put("s/plkxtwo.rec", "y");
	put("s/plkxtwo.of", "plkxone");
	put("s/plkxthree.rec", "z");
	put("s/plkxthree.of", "plkxtwo");
	put("locks/plkxone.lock", "");
	for (i = 0; i < 2; i++) {
		assert_int_equal(agc_purge(ctx, "fake", "plkxone", i ? AGC_PURGE_DRY_RUN : 0, &r), 0);
		/* a dry run says dry-run, with the purge's exit */
		assert_int_equal(agc_report_status(r), i ? AGC_ST_DRY_RUN : AGC_ST_REFUSED);
		assert_int_equal(agc_report_exit(r), 4);
		assert_int_equal(agc_report_fork_count(r), 1);
		assert_string_equal(agc_report_fork(r, 0), "plkxtwo");
		assert_true(agc_report_residual_count(r) >= 1);
		assert_string_equal(agc_report_residual(r, 0)->reason, "fork");
		assert_int_equal(agc_report_removed_count(r), 0);
		agc_report_free(r);
		assert_true(exists("s/plkxone.rec"));
		assert_true(exists("locks/plkxone.lock"));
	}
	/* purging the fork first is allowed: its own fork is its refusal */
	assert_int_equal(agc_purge(ctx, "fake", "plkxthree", 0, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_PURGED);
	agc_report_free(r);
	put("s/plkxthree.rec", "z");
	put("s/plkxthree.of", "plkxtwo");
	assert_int_equal(agc_purge(ctx, "fake", "plkxone", AGC_PURGE_WITH_FORKS, &r), 0);
	assert_int_equal(agc_report_status(r), AGC_ST_PURGED);
	assert_int_equal(agc_report_child_count(r), 2);
	agc_report_free(r);
	assert_false(exists("s/plkxone.rec"));
	assert_false(exists("s/plkxtwo.rec"));
	assert_false(exists("s/plkxthree.rec"));
	assert_false(exists("s/plkxthree.of"));
	assert_false(exists("locks/plkxone.lock"));
}

/* Many ids in one run: the lock phase holds for each, a held one refuses only its own id. */
static void test_many_locks(void **state)
{
	const char *ids[] = {"plkxone", "plkxtwo"};
	agc_report *out[2] = {0};

	(void)state;
	put("s/plkxone.rec", "x");
	put("locks/plkxone.lock", "");
	put("s/plkxtwo.rec", "y");
	put("locks/plkxtwo.lock", "");
	hold("locks/plkxone.lock", LOCK_EX);
	assert_int_equal(agc_purge_many(ctx, "fake", ids, 2, 0, out), 0);
	assert_int_equal(agc_report_status(out[0]), AGC_ST_IN_USE);
	assert_int_equal(agc_report_status(out[1]), AGC_ST_PURGED);
	assert_true(exists("s/plkxone.rec"));
	assert_true(exists("locks/plkxone.lock"));
	assert_false(exists("s/plkxtwo.rec"));
	assert_false(exists("locks/plkxtwo.lock"));
	agc_report_free(out[0]);
	agc_report_free(out[1]);
}

/* Many ids where a fork goes before what it reads: as one at a time, both go. */
static void test_many_fork_first(void **state)
{
	const char *ids[] = {"plkxtwo", "plkxone"};
	agc_report *out[2] = {0};

	(void)state;
	put("s/plkxone.rec", "x");
	put("s/plkxtwo.rec", "y");
	put("s/plkxtwo.of", "plkxone");
	assert_int_equal(agc_purge_many(ctx, "fake", ids, 2, 0, out), 0);
	assert_int_equal(agc_report_status(out[0]), AGC_ST_PURGED);
	assert_int_equal(agc_report_status(out[1]), AGC_ST_PURGED);
	assert_false(exists("s/plkxone.rec"));
	assert_false(exists("s/plkxtwo.rec"));
	agc_report_free(out[0]);
	agc_report_free(out[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_purge_free_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_held_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_held_lock_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_stale_lock_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run_lists_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_link_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_arrives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_made, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_table_incomplete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_fork_first, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
