/* Report objects: what went, what stayed and why, who holds the session. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "report.h"

static const char *const status_names[] = {
	[AGC_ST_PURGED] = "purged",   [AGC_ST_PARTIAL] = "partial", [AGC_ST_IN_USE] = "in-use",
	[AGC_ST_NOT_FOUND] = "not-found", [AGC_ST_REFUSED] = "refused", [AGC_ST_DRY_RUN] = "dry-run",
	[AGC_ST_FOUND] = "found",     [AGC_ST_ERROR] = "error",   [AGC_ST_SKIPPED] = "skipped",
};

const char *agc_status_name(agc_status st)
{
	if ((unsigned)st >= sizeof(status_names) / sizeof(status_names[0]))
		return "error";
	return status_names[st];
}

agc_report *agc_report_new(const char *agent, const char *id)
{
	agc_report *r = calloc(1, sizeof(*r));

	if (!r) {
		agc_error_oom();
		return NULL;
	}
	r->agent = agc_strdup(agent);
	r->id = agc_strdup(id);
	if (!r->agent || !r->id) {
		agc_report_free(r);
		return NULL;
	}
	return r;
}

static void free_strs(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void free_items(agc_item *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)v[i].path);
		free((char *)v[i].table);
		free((char *)v[i].reason);
		free((char *)v[i].session);
	}
	free(v);
}

void agc_report_free(agc_report *r)
{
	size_t i;

	if (!r)
		return;
	free(r->agent);
	free(r->id);
	free(r->error);
	free(r->skip);
	free((char *)r->session.id);
	free((char *)r->session.parent);
	free((char *)r->session.project);
	free((char *)r->session.title);
	free((char *)r->session.layout);
	free_items(r->removed.v, r->removed.n);
	free_items(r->residual.v, r->residual.n);
	for (i = 0; i < r->holders.n; i++) {
		free((char *)r->holders.v[i].command);
		free((char *)r->holders.v[i].what);
	}
	free(r->holders.v);
	free_strs(r->children.v, r->children.n);
	free_strs(r->forks.v, r->forks.n);
	free_strs(r->hints.v, r->hints.n);
	free(r);
}

static char *dup_or_null(const char *s)
{
	return s ? agc_strdup(s) : NULL;
}

agc_item *agc_report_add_item(agc_report *r, bool residual, const char *kind, const char *path,
			      const char *table, const char *reason, const char *session,
			      uint64_t count, uint64_t bytes, int64_t mtime_ms)
{
	agc_item *it = residual ? AGC_ARRAY_PUSH(&r->residual, 0) : AGC_ARRAY_PUSH(&r->removed, 0);

	if (!it)
		return NULL;
	it->kind = kind;
	it->path = dup_or_null(path);
	it->table = dup_or_null(table);
	it->reason = dup_or_null(reason);
	it->session = dup_or_null(session);
	it->count = count;
	it->bytes = bytes;
	it->mtime_ms = mtime_ms;
	return it;
}

int agc_report_add_holder(agc_report *r, int pid, const char *command, const char *why,
			  const char *what)
{
	agc_holder_info *h;
	size_t i;

	for (i = 0; i < r->holders.n; i++)
		if (r->holders.v[i].pid == pid && strcmp(r->holders.v[i].why, why) == 0)
			return 0;
	h = AGC_ARRAY_PUSH(&r->holders, 0);
	if (!h)
		return -1;
	h->pid = pid;
	h->why = why;
	h->command = dup_or_null(command ? command : "");
	h->what = dup_or_null(what);
	return 0;
}

int agc_report_add_str(agc_report *r, int which, const char *s)
{
	char **slot;

	if (which == 0)
		slot = AGC_ARRAY_PUSH(&r->children, 0);
	else if (which == 1)
		slot = AGC_ARRAY_PUSH(&r->forks, 0);
	else
		slot = AGC_ARRAY_PUSH(&r->hints, 0);
	if (!slot)
		return -1;
	*slot = agc_strdup(s);
	return *slot ? 0 : -1;
}

int agc_report_set_error(agc_report *r, const char *msg)
{
	free(r->error);
	r->error = agc_strdup(msg);
	r->status = AGC_ST_ERROR;
	return 0;
}

const char *agc_report_agent(const agc_report *r) { return r->agent; }
const char *agc_report_id(const agc_report *r) { return r->id; }
agc_status agc_report_status(const agc_report *r) { return r->status; }
const char *agc_report_error(const agc_report *r) { return r->error; }
const char *agc_report_skip(const agc_report *r) { return r->status == AGC_ST_SKIPPED ? r->skip : NULL; }

int agc_report_set_skip(agc_report *r, const char *why)
{
	char *s = agc_strdup(why);

	if (!s)
		return -1;
	free(r->skip);
	r->skip = s;
	r->status = AGC_ST_SKIPPED;
	return 0;
}

int agc_report_exit(const agc_report *r)
{
	switch (r->status) {
	case AGC_ST_PURGED:
	case AGC_ST_FOUND:
	case AGC_ST_SKIPPED:
		return 0;
	case AGC_ST_PARTIAL:
		return 3;
	case AGC_ST_IN_USE:
	case AGC_ST_REFUSED:
		return 4;
	case AGC_ST_NOT_FOUND:
		return 5;
	case AGC_ST_DRY_RUN:
		return r->dry_exit;
	default:
		return 1;
	}
}

const agc_session_info *agc_report_session(const agc_report *r)
{
	return r->has_session ? &r->session : NULL;
}

size_t agc_report_removed_count(const agc_report *r) { return r->removed.n; }
const agc_item *agc_report_removed(const agc_report *r, size_t i) { return i < r->removed.n ? &r->removed.v[i] : NULL; }
size_t agc_report_residual_count(const agc_report *r) { return r->residual.n; }
const agc_item *agc_report_residual(const agc_report *r, size_t i) { return i < r->residual.n ? &r->residual.v[i] : NULL; }
size_t agc_report_holder_count(const agc_report *r) { return r->holders.n; }
const agc_holder_info *agc_report_holder(const agc_report *r, size_t i) { return i < r->holders.n ? &r->holders.v[i] : NULL; }
size_t agc_report_child_count(const agc_report *r) { return r->children.n; }
const char *agc_report_child(const agc_report *r, size_t i) { return i < r->children.n ? r->children.v[i] : NULL; }
size_t agc_report_fork_count(const agc_report *r) { return r->forks.n; }
const char *agc_report_fork(const agc_report *r, size_t i) { return i < r->forks.n ? r->forks.v[i] : NULL; }
size_t agc_report_hint_count(const agc_report *r) { return r->hints.n; }
const char *agc_report_hint(const agc_report *r, size_t i) { return i < r->hints.n ? r->hints.v[i] : NULL; }
