/* agentgc roots: where each agent's history is looked for, and why there. */
#include <jansson.h>
#include <string.h>

#include "cli.h"

static int print_root(const agc_root_info *r, void *ud)
{
	const cli *c = ud;

	/* A root that exists but cannot be read is said on stderr, whatever the format (R2). */
	if (r->exists && r->err)
		cli_err("cannot read '%s': %s", r->real ? r->real : r->path, strerror(r->err));
	if (c->json) {
		json_t *o = json_object();

		json_object_set_new(o, "agent", json_string(r->agent));
		json_object_set_new(o, "root", json_string(r->name));
		cli_json_set_str(o, "path", r->path);
		cli_json_set_str(o, "real", r->real);
		json_object_set_new(o, "source", json_string(r->source));
		json_object_set_new(o, "exists", json_boolean(r->exists));
		if (r->exists && r->err)
			json_object_set_new(o, "error", json_string(strerror(r->err)));
		if (r->holds)
			cli_json_set_str(o, "holds", r->holds);
		cli_json_print(o);
		return 0;
	}
	printf("%-9s %-7s ", r->agent, r->name);
	cli_path(stdout, r->path);
	if (r->real && strcmp(r->real, r->path) != 0) {
		printf(" -> ");
		cli_path(stdout, r->real);
	}
	printf("  (%s%s%s)\n", r->source, !r->exists ? ", missing" : r->err ? ", cannot read: " : "",
	       r->exists && r->err ? strerror(r->err) : "");
	if (r->holds) {
		printf("%-9s %-7s   holds ", "", "");
		cli_text(stdout, r->holds, 0);
		putchar('\n');
	}
	return 0;
}

int cmd_roots(cli *c, int argc, char **argv)
{
	cli_args pos;
	int rc;

	rc = cli_parse(c, cli_cmd_find("roots"), argc, argv, NULL, NULL, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n) {
		rc = cli_usage("roots", "unexpected argument '%s'", pos.v[0]);
		cli_args_release(&pos);
		return rc;
	}
	cli_args_release(&pos);
	if ((rc = cli_ctx(c)))
		return rc;
	if (!c->json) {
		printf("home ");
		cli_path(stdout, agc_ctx_home(c->ctx));
		printf("%s\n", agc_ctx_own_home(c->ctx) ? " (own: agents' variables followed)" : " (not the caller's: defaults only)");
	}
	if (agc_roots(c->ctx, print_root, c) < 0) {
		cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	return 0;
}
