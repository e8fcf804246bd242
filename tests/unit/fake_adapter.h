/* A made-up agent, "fake", for the engine's unit tests (purge.c, session.c): this program's
 * own agc_adapter_table names it alone, so the static library's adapters.o (and with it the
 * real agents) is not linked in, and the engine runs on what the test lays out.
 *
 * Its one root, "data", is <home>/fake. A session <id> has:
 *   sessions/<id>.rec   the record (AGC_ART_RECORD: removed last)
 *   sessions/<id>/      a dir of its own
 *   files/<id>.txt      a side file
 *   kids/<id>           a file whose one line names a child session, which goes with it
 * and rows, when the databases exist: main.db "session"(id) (the record row) and
 * "message"(session_id), aux.db "part"(session_id). Its listing is fake_list, set by the
 * test. Include after <cmocka.h> and the library's headers core.h, db.h, session.h. */
#ifndef AGC_FAKE_ADAPTER_H
#define AGC_FAKE_ADAPTER_H

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "db.h"
#include "session.h"

#define FAKE_ROOT 0

/* What fake's list gives agc_ls (unsorted, as an adapter streams them). */
static agc_session_info fake_list[16];
static size_t fake_n_list;
/* When set, called at the end of every discovery (the test's seam into a purge). */
static void (*fake_discover_hook)(agc_plan *p);

/* Ids are [a-z0-9-], 1 to 64 of them. */
static int fake_id_canon(const char *in, char *out)
{
	size_t i, n = strlen(in);

	if (n == 0 || n > 64)
		return AGC_EUNSAFE;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)in[i]) || isdigit((unsigned char)in[i]) || in[i] == '-'))
			return AGC_EUNSAFE;
	memcpy(out, in, n + 1);
	return 0;
}

static int fake_roots(agc_ctx *ctx, agc_rootset *rs)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/fake", agc_ctx_home(ctx));
	return agc_rootset_add(rs, "data", path, "default") < 0 ? -1 : 0;
}

/* The rows of the session in the database rel, when it exists: every table of tables (name,
 * column pairs) that the database has. */
static int fake_rows(agc_plan *p, const char *rel, const char *const *tables, size_t n)
{
	char *abs = agc_plan_abspath(p->roots, FAKE_ROOT, rel);
	struct stat st;
	sqlite3 *db = NULL;
	size_t i;
	int dbi, rc;

	if (!abs)
		return -1;
	if (lstat(abs, &st) < 0) {
		free(abs);
		return 0;
	}
	rc = agc_db_open_ro(abs, &db);
	free(abs);
	if (rc < 0)
		return rc;
	dbi = agc_plan_add_db(p, FAKE_ROOT, rel);
	rc = dbi < 0 ? -1 : 0;
	for (i = 0; rc == 0 && i < n; i++)
		if (agc_db_has_column(db, tables[2 * i], tables[2 * i + 1]))
			/* the session table's own rows (keyed by "id") are the record (R6) */
			rc = strcmp(tables[2 * i + 1], "id") == 0
				     ? agc_plan_add_record_rows(p, (size_t)dbi, tables[2 * i], "id")
				     : agc_plan_add_rows(p, (size_t)dbi, tables[2 * i], tables[2 * i + 1], NULL,
							 NULL, NULL, NULL);
	if (rc == 0)
		rc = agc_plan_count_rows(p, db, (size_t)dbi);
	sqlite3_close(db);
	return rc;
}

static int fake_discover(agc_plan *p)
{
	static const char *const aux[] = {"part", "session_id"};
	static const char *const main_[] = {"message", "session_id", "session", "id"};
	char rel[PATH_MAX], kid[80];
	size_t k;
	int rc = 0;

	if (agc_plan_rootfd(p, FAKE_ROOT) < 0)
		return 0;
	/* the children first: a kids/<id> file names one, which may name another */
	for (k = 0; k < p->ids.n && k < 8; k++) {
		FILE *f;

		snprintf(rel, sizeof(rel), "%s/kids/%s", p->roots->v[FAKE_ROOT].path, p->ids.v[k]);
		f = fopen(rel, "r");
		if (!f)
			continue;
		if (fgets(kid, sizeof(kid), f)) {
			kid[strcspn(kid, "\n")] = '\0';
			if (*kid && agc_plan_add_id(p, kid) < 0)
				rc = -1;
		}
		fclose(f);
	}
	for (k = 0; rc >= 0 && k < p->ids.n; k++) {
		const char *id = p->ids.v[k];

		/* the record first: the engine, not the plan's order, keeps it for last (R6) */
		snprintf(rel, sizeof(rel), "sessions/%s.rec", id);
		if (agc_plan_add_art(p, FAKE_ROOT, rel, id, AGC_ART_RECORD, NULL) < 0)
			rc = -1;
		snprintf(rel, sizeof(rel), "kids/%s", id);
		if (agc_plan_add_art(p, FAKE_ROOT, rel, id, 0, NULL) < 0)
			rc = -1;
		snprintf(rel, sizeof(rel), "files/%s.txt", id);
		if (agc_plan_add_art(p, FAKE_ROOT, rel, id, 0, NULL) < 0)
			rc = -1;
		snprintf(rel, sizeof(rel), "sessions/%s", id);
		if (agc_plan_add_art(p, FAKE_ROOT, rel, id, 0, NULL) < 0)
			rc = -1;
	}
	/* main.db, which holds the record row, first: the engine commits it last (R6) */
	if (rc >= 0)
		rc = fake_rows(p, "main.db", main_, 2);
	if (rc >= 0)
		rc = fake_rows(p, "aux.db", aux, 1);
	if (rc >= 0 && fake_discover_hook)
		fake_discover_hook(p);
	return rc;
}

static int fake_list_cb(agc_ctx *ctx, const agc_rootset *rs, const agc_ls_opts *opts,
			agc_ls_sink *sink)
{
	size_t i;

	for (i = 0; i < fake_n_list; i++)
		if (sink->add(sink, &fake_list[i], AGC_LS_NO_GATE) < 0)
			return -1;
	return 0;
}

static const char *const fake_env[] = {NULL};

static const agc_adapter fake_adapter = {
	.name = "fake",
	.id_canon = fake_id_canon,
	.roots = fake_roots,
	.discover = fake_discover,
	.list = fake_list_cb,
	.env_names = fake_env,
	.n_env_names = 0,
};

/* This program's table: the static library's adapters.o, which defines the real one, is not
 * linked in (nothing else it defines is wanted). */
const agc_adapter *const agc_adapter_table[] = {&fake_adapter, NULL};

#endif
