/* Unique id prefixes (SPEC "Commands": show, in-use and export accept a prefix of at least 8
 * characters of an id). Read-only: the agents' listings, matched against the prefixes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"
#include "ids.h"

typedef struct prefix {
	char *text;   /* folded to lower case for an agent whose ids are UUIDs */
	size_t len;
	size_t index; /* in the caller's array */
} prefix;

typedef struct resolve {
	agc_ls_sink sink;
	prefix *v;    /* sorted by their first AGC_PREFIX_MIN bytes */
	size_t n;
	bool fold;
	int (*cb)(size_t i, const agc_session_info *s, void *ud);
	void *ud;
	int matches;
	bool stop;
} resolve;

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Ids of an agent whose grammar is the UUID's are matched in any letter case (R1: a UUID is
 * canonicalised to lower case); other ids (OpenCode's) are case-sensitive. */
static bool folds_case(const agc_adapter *ad)
{
	char canon[AGC_ID_MAX];

	return ad->id_canon("00000000-0000-0000-0000-00000000000A", canon) == 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strncmp(((const prefix *)a)->text, ((const prefix *)b)->text, AGC_PREFIX_MIN);
}

static int res_add(agc_ls_sink *s, const agc_session_info *in, size_t gate)
{
	resolve *r = (resolve *)s;
	char key[AGC_PREFIX_MIN + 1];
	size_t i, lo = 0, hi = r->n, idlen = strlen(in->id);

	(void)gate; /* a look-up of ids: no gate */
	if (r->stop || idlen < AGC_PREFIX_MIN)
		return 0;
	for (i = 0; i < AGC_PREFIX_MIN; i++)
		key[i] = (char)(r->fold ? lower((unsigned char)in->id[i]) : in->id[i]);
	key[AGC_PREFIX_MIN] = '\0';
	/* the first prefix whose first bytes are the id's */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strncmp(r->v[mid].text, key, AGC_PREFIX_MIN) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < r->n && strncmp(r->v[i].text, key, AGC_PREFIX_MIN) == 0; i++) {
		const prefix *p = &r->v[i];
		size_t k;

		if (p->len > idlen)
			continue;
		for (k = AGC_PREFIX_MIN; k < p->len; k++)
			if ((r->fold ? lower((unsigned char)in->id[k]) : in->id[k]) != p->text[k])
				break;
		if (k < p->len)
			continue;
		r->matches++;
		if (r->cb(p->index, in, r->ud)) {
			r->stop = true;
			break;
		}
	}
	return 0;
}

static void res_warn(agc_ls_sink *s, const char *msg)
{
	/* what could not be read is said by the command that then looks the id up */
	(void)s;
	(void)msg;
}

int agc_resolve_prefix(agc_ctx *ctx, const char *agent, const char *const *prefixes, size_t n,
		       int (*cb)(size_t i, const agc_session_info *s, void *ud), void *ud)
{
	agc_ls_opts lo;
	resolve r;
	size_t a, i;
	int want = -1, rc = 0;
	char err[1024] = "";

	if (!agent || !cb || (n && !prefixes))
		return agc_error_set(-1, "agc_resolve_prefix needs an agent, prefixes and a callback");
	if (strcmp(agent, "auto") != 0 && (want = agc_agent_find(agent)) < 0)
		return agc_error_set(-1, "unknown agent '%s'", agent);
	memset(&lo, 0, sizeof(lo));
	lo.children = 1;
	memset(&r, 0, sizeof(r));
	r.sink.add = res_add;
	r.sink.warn = res_warn;
	r.cb = cb;
	r.ud = ud;
	r.v = calloc(n ? n : 1, sizeof(*r.v));
	if (!r.v)
		return agc_error_oom();
	for (a = 0; agc_adapter_table[a] && !r.stop; a++) {
		const agc_adapter *ad = agc_adapter_table[a];
		const agc_rootset *rs;

		if (want >= 0 && (size_t)want != a)
			continue;
		r.fold = folds_case(ad);
		r.n = 0;
		for (i = 0; i < n; i++) {
			size_t len = prefixes[i] ? strlen(prefixes[i]) : 0, k;
			prefix *p = &r.v[r.n];

			/* shorter than the minimum, or a byte no id has: matches nothing */
			if (len < AGC_PREFIX_MIN || !agc_id_path_safe(prefixes[i]))
				continue;
			p->text = malloc(len + 1);
			if (!p->text) {
				rc = agc_error_oom();
				goto out;
			}
			for (k = 0; k <= len; k++)
				p->text[k] = (char)(r.fold ? lower((unsigned char)prefixes[i][k]) : prefixes[i][k]);
			p->len = len;
			p->index = i;
			r.n++;
		}
		if (r.n) {
			qsort(r.v, r.n, sizeof(*r.v), cmp_key);
			rs = agc_ctx_roots(ctx, a);
			/* an agent that cannot be listed is said after the others were looked at */
			if ((!rs || ad->list(ctx, rs, &lo, &r.sink) < 0) && !*err)
				snprintf(err, sizeof(err), "%s", agc_error_last());
		}
		for (i = 0; i < r.n; i++)
			free(r.v[i].text);
		r.n = 0;
	}
	if (*err)
		rc = agc_error_set(-1, "%s", err);
out:
	for (i = 0; i < r.n; i++)
		free(r.v[i].text);
	free(r.v);
	return rc < 0 ? rc : r.matches;
}

int agc_id_whole(const char *agent, const char *id)
{
	size_t a;
	int want = -1;

	if (!agent || !id)
		return 0;
	if (strcmp(agent, "auto") != 0 && (want = agc_agent_find(agent)) < 0)
		return 0;
	for (a = 0; agc_adapter_table[a]; a++) {
		const agc_adapter *ad = agc_adapter_table[a];
		char canon[AGC_ID_MAX];

		if ((want >= 0 && (size_t)want != a) || ad->id_canon(id, canon) < 0)
			continue;
		if (ad->id_whole && ad->id_whole(id))
			return 1;
	}
	return 0;
}
