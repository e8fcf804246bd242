/* The context: which home, whose environment, which temp root; roots resolved once. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "error.h"

/* The caller's temp dir, by the usual variables (an agent's own variable, such as
 * CLAUDE_CODE_TMPDIR, is its adapter's to read before this). */
static const char *own_tmp(const char **source)
{
	static const char *const vars[] = {"TMPDIR", "TMP", "TEMP"};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v) {
			*source = vars[i];
			return v;
		}
	}
	*source = "default";
	return "/tmp";
}

static bool same_real(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!a || !b)
		return false;
	if (!realpath(a, ra) || !realpath(b, rb))
		return strcmp(a, b) == 0;
	return strcmp(ra, rb) == 0;
}

int agc_ctx_new(agc_ctx **out, const agc_ctx_opts *opts)
{
	const char *envhome = getenv("HOME");
	const char *home;
	agc_ctx *ctx;
	struct stat st;
	char cwd[PATH_MAX];

	/* a struct of a layout this library does not know is never read (agentgc.h) */
	if (opts && opts->version != AGC_CTX_OPTS_VERSION)
		return agc_error_set(-1, "agc_ctx_opts version %u is not one this library knows (%u): "
				     "set the struct up with AGC_CTX_OPTS_INIT", opts->version,
				     (unsigned)AGC_CTX_OPTS_VERSION);
	home = opts && opts->home ? opts->home : envhome;
	if (!home || !*home)
		return agc_error_set(-1, "no home: set HOME or pass --home");
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return agc_error_oom();
	if (home[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd))) {
			free(ctx);
			return agc_error_errno(-1, errno, "cannot get the current directory");
		}
		ctx->home = agc_strfmt("%s/%s", cwd, home);
	} else {
		ctx->home = agc_strdup(home);
	}
	if (!ctx->home)
		goto oom;
	/* The agents' variables describe the caller's own home only (SPEC "Roots and the home"). */
	ctx->own_home = !(opts && opts->home) || same_real(ctx->home, envhome);
	ctx->home_uid = stat(ctx->home, &st) == 0 ? st.st_uid : getuid();
	ctx->procroot = agc_strdup(opts && opts->procroot ? opts->procroot : "/proc");
	if (!ctx->procroot)
		goto oom;
	ctx->now_ms = opts && opts->now_ms ? opts->now_ms : agc_clock_now_ms();
	if (ctx->own_home) {
		ctx->tmp = agc_strdup(own_tmp(&ctx->tmp_source));
	} else {
		ctx->tmp = agc_strdup("/tmp");
		ctx->tmp_source = "default (not the caller's home)";
	}
	if (!ctx->tmp)
		goto oom;
	*out = ctx;
	return 0;
oom:
	agc_ctx_free(ctx);
	return agc_error_oom();
}

void agc_ctx_free(agc_ctx *ctx)
{
	size_t i;

	if (!ctx)
		return;
	for (i = 0; i < AGC_AGENTS_MAX; i++)
		agc_rootset_release(&ctx->roots[i]);
	free(ctx->home);
	free(ctx->procroot);
	free(ctx->tmp);
	free(ctx);
}

const char *agc_ctx_home(const agc_ctx *ctx)
{
	return ctx->home;
}

int agc_ctx_own_home(const agc_ctx *ctx)
{
	return ctx->own_home;
}

int64_t agc_ctx_now_ms(const agc_ctx *ctx)
{
	return ctx->now_ms;
}

const char *agc_ctx_env(const agc_ctx *ctx, const char *name)
{
	const char *v;

	if (!ctx->own_home)
		return NULL;
	v = getenv(name);
	return v && *v ? v : NULL;
}

/* 0 when the dir can be opened, listed and searched; else the errno. An existing root that
 * cannot be read is never skipped silently (R2): callers report it. */
static int root_access(const char *real)
{
	int fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub, e;

	if (fd < 0)
		return errno ? errno : EACCES;
	/* opening "." beneath it needs search permission (x) on it, as every artifact does */
	sub = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e = sub < 0 ? (errno ? errno : EACCES) : 0;
	if (sub >= 0)
		close(sub);
	close(fd);
	return e;
}

int agc_rootset_add(agc_rootset *rs, const char *name, const char *path, const char *source)
{
	agc_root *r;
	char real[PATH_MAX];
	struct stat st;

	if (rs->n >= AGC_ROOTS_MAX)
		return agc_error_set(-1, "too many roots");
	r = &rs->v[rs->n];
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->source = source;
	r->path = agc_strdup(path);
	if (!r->path)
		return -1;
	/* The root itself may be a link (/tmp -> /private/tmp): resolved here, once (R2). */
	if (realpath(path, real) && stat(real, &st) == 0 && S_ISDIR(st.st_mode)) {
		r->real = agc_strdup(real);
		if (!r->real)
			return -1;
		r->exists = true;
		r->err = root_access(real);
	} else if (errno == EACCES || errno == EPERM) {
		/* A root that may be there but cannot be reached is not "missing": it could hold
		 * anything, and is reported as such (R2). */
		r->exists = true;
		r->err = errno;
	}
	return (int)rs->n++;
}

void agc_rootset_release(agc_rootset *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		free(rs->v[i].path);
		free(rs->v[i].real);
	}
	rs->n = 0;
	rs->done = false;
}

int agc_rootset_find(const agc_rootset *rs, const char *name)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].name, name) == 0)
			return (int)i;
	return -1;
}

const agc_rootset *agc_ctx_roots(agc_ctx *ctx, size_t agent)
{
	agc_rootset *rs = &ctx->roots[agent];

	if (!rs->done) {
		agc_rootset_release(rs);
		if (agc_adapter_table[agent]->roots(ctx, rs) < 0) {
			agc_rootset_release(rs);
			return NULL;
		}
		rs->done = true;
	}
	return rs;
}

size_t agc_agent_count(void)
{
	size_t n = 0;

	while (agc_adapter_table[n])
		n++;
	return n;
}

const char *agc_agent_name(size_t i)
{
	return i < agc_agent_count() ? agc_adapter_table[i]->name : NULL;
}

int agc_agent_id_ok(size_t i, const char *id)
{
	char canon[AGC_ID_MAX];

	if (i >= agc_agent_count() || !id)
		return 0;
	return agc_adapter_table[i]->id_canon(id, canon) == 0;
}

int agc_agent_find(const char *name)
{
	size_t i;

	for (i = 0; name && agc_adapter_table[i]; i++)
		if (strcmp(agc_adapter_table[i]->name, name) == 0)
			return (int)i;
	return AGC_ENOTFOUND;
}

int agc_roots(agc_ctx *ctx, int (*cb)(const agc_root_info *r, void *ud), void *ud)
{
	size_t a, i;

	for (a = 0; agc_adapter_table[a]; a++) {
		const agc_rootset *rs = agc_ctx_roots(ctx, a);

		if (!rs)
			return -1;
		for (i = 0; i < rs->n; i++) {
			agc_root_info info = {
				.agent = agc_adapter_table[a]->name,
				.name = rs->v[i].name,
				.path = rs->v[i].path,
				.real = rs->v[i].real,
				.source = rs->v[i].source,
				.exists = rs->v[i].exists,
				.err = rs->v[i].err,
			};
			char *holds = rs->v[i].exists && !rs->v[i].err && agc_adapter_table[a]->root_holds
					      ? agc_adapter_table[a]->root_holds(rs, i)
					      : NULL;
			int rc;

			info.holds = holds;
			rc = cb(&info, ud);
			free(holds);

			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Agents the public header names (AGC_AGENT_*) that have no adapter yet: their bits select
 * nothing, and are no error. An agent leaves this list when its adapter joins the table,
 * with the same bit. */
static const struct {
	const char *name;
	unsigned bit;
} planned[] = {
	{NULL, 0}, /* none today: every agent of the header has its adapter */
};

unsigned agc_agent_bits_known(void)
{
	unsigned m = 0;
	size_t i;

	for (i = 0; agc_adapter_table[i]; i++)
		m |= agc_adapter_table[i]->bit;
	for (i = 0; planned[i].name; i++)
		m |= planned[i].bit;
	return m;
}

unsigned agc_agent_bit(const char *name)
{
	size_t i;

	if (!name)
		return 0;
	for (i = 0; agc_adapter_table[i]; i++)
		if (strcmp(agc_adapter_table[i]->name, name) == 0)
			return agc_adapter_table[i]->bit;
	for (i = 0; planned[i].name; i++)
		if (strcmp(planned[i].name, name) == 0)
			return planned[i].bit;
	return 0;
}
