/* A program of a library user: built against an installed libagentgc (pkg-config), it
 * prints the roots of a home and how many root sessions it holds. tests/pkg/*.sh link it
 * dynamically and statically and compare its answer with the tool's. */
#include <stdio.h>

#include <agentgc/agentgc.h>

static int on_root(const agc_root_info *r, void *ud)
{
	(void)ud;
	printf("root %s %s %s\n", r->agent, r->name, r->exists ? "exists" : "missing");
	return 0;
}

static int on_session(const agc_session_info *s, void *ud)
{
	(void)s;
	(*(size_t *)ud)++;
	return 0;
}

int main(int argc, char **argv)
{
	agc_ctx_opts o = AGC_CTX_OPTS_INIT;
	agc_ls_opts lo = AGC_LS_OPTS_INIT;
	agc_ctx *ctx;
	size_t n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: roots HOME\n");
		return 2;
	}
	o.home = argv[1];
	if (agc_ctx_new(&ctx, &o) < 0) {
		fprintf(stderr, "roots: %s\n", agc_error_last());
		return 1;
	}
	if (agc_roots(ctx, on_root, NULL) < 0 || agc_ls(ctx, &lo, on_session, &n) < 0) {
		fprintf(stderr, "roots: %s\n", agc_error_last());
		agc_ctx_free(ctx);
		return 1;
	}
	printf("sessions %zu\n", n);
	agc_ctx_free(ctx);
	return 0;
}
