/* agentgc ps: the running agent processes, the sessions each holds, busy or idle. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

enum { OPT_AGENT = 0x200, OPT_WATCH, OPT_WIDE };

const cli_opt cli_ps_opts[] = {
	{"agent", OPT_AGENT, 1, "A", "only this agent's processes and the holders of its\n"
				     "sessions (repeatable)"},
	{"watch", OPT_WATCH, 0, NULL, "scan again every second, redrawn in place on a\n"
				      "terminal, until interrupted"},
	{"wide", OPT_WIDE, 0, NULL, "whole ids and commands, nothing cut"},
	{NULL, 0, 0, NULL, NULL},
};

typedef struct ps_cmd {
	agc_ps_opts o;
	bool watch, wide;
} ps_cmd;

static int ps_opt(cli *c, int key, const char *v, void *ud)
{
	ps_cmd *p = ud;

	(void)c;
	switch (key) {
	case OPT_AGENT:
		return cli_agent_bit("ps", v, &p->o.agents);
	case OPT_WATCH:
		p->watch = true;
		return 0;
	case OPT_WIDE:
		p->wide = true;
		return 0;
	}
	return -1;
}

static json_t *sessions_json(const agc_ps_session *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *s = json_object();

		cli_json_set_str(s, "agent", v[i].agent);
		cli_json_set_str(s, "id", v[i].id);
		json_object_set_new(s, "how", json_string(v[i].how));
		json_array_append_new(a, s);
	}
	return a;
}

static json_t *info_json(const agc_ps_info *p)
{
	json_t *o = json_object();
	char t[40];

	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "ppid", p->pid ? json_integer(p->ppid) : json_null());
	json_object_set_new(o, "agent", p->agent ? json_string(p->agent) : json_null());
	json_object_set_new(o, "role", json_string(p->role));
	cli_json_set_str(o, "command", p->command);
	cli_json_set_str(o, "cwd", p->cwd);
	if (p->started_ms > 0) {
		cli_iso(p->started_ms, t, sizeof(t));
		json_object_set_new(o, "started", json_string(t));
	} else {
		json_object_set_new(o, "started", json_null());
	}
	json_object_set_new(o, "state", p->state ? json_string(p->state) : json_null());
	json_object_set_new(o, "state_from", p->state_from ? json_string(p->state_from) : json_null());
	json_object_set_new(o, "sessions", sessions_json(p->sessions, p->n_sessions));
	json_object_set_new(o, "serves", sessions_json(p->serves, p->n_serves));
	return o;
}

/* One frame of the human table, written to f. */
typedef struct ps_frame {
	cli *c;
	FILE *f;
	bool wide;
	int width;
	size_t rows;
	int64_t now_ms;
} ps_frame;

#define W_PID 8
#define W_AGENT 9
#define W_STATE 8
#define W_STARTED 10
#define W_SESSION 30

static void header(ps_frame *fr)
{
	fprintf(fr->f, "%-*s%-*s%-*s%-*s%-*s%s\n", W_PID, "PID", W_AGENT, "AGENT", W_STATE, "STATE",
		W_STARTED, "STARTED", fr->wide ? 0 : W_SESSION, fr->wide ? "SESSIONS  " : "SESSIONS",
		fr->wide ? "COMMAND  [CWD]" : "CWD  COMMAND");
}

/* The sessions cell: the first id (short unless wide) with how it is held, and how many
 * more; a service's served sessions as "serves N". */
static char *sessions_cell(const agc_ps_info *p, bool wide)
{
	char buf[512];

	if (p->n_sessions) {
		char *id = cli_text_str(p->sessions[0].id, CLI_TEXT_LINE);
		int idl = id ? (int)strlen(id) : 1;

		if (!wide && idl > CLI_SHORT_ID)
			idl = CLI_SHORT_ID;
		snprintf(buf, sizeof(buf), "%.*s (%s)", idl, id ? id : "?", p->sessions[0].how);
		free(id);
		if (p->n_sessions > 1) {
			size_t l = strlen(buf);

			snprintf(buf + l, sizeof(buf) - l, " +%zu", p->n_sessions - 1);
		}
	} else if (p->n_serves) {
		snprintf(buf, sizeof(buf), "serves %zu", p->n_serves);
	} else {
		snprintf(buf, sizeof(buf), "-");
	}
	return strdup(buf);
}

static int print_row(const agc_ps_info *p, void *ud)
{
	ps_frame *fr = ud;
	char pid[16], started[32], *sess, *cwd = NULL, *cmd = NULL, *cut;
	const char *state = p->state ? p->state : p->role;
	size_t used;

	if (fr->c->json) {
		json_t *o = info_json(p);

		char *t = json_dumps(o, JSON_COMPACT);

		/* one line per process (a frame goes out whole: see cmd_ps) */
		if (t)
			fprintf(fr->f, "%s\n", t);
		free(t);
		json_decref(o);
		fr->rows++;
		return 0;
	}
	if (!fr->rows)
		header(fr);
	fr->rows++;
	if (p->pid)
		snprintf(pid, sizeof(pid), "%d", p->pid);
	else
		snprintf(pid, sizeof(pid), "-");
	if (p->started_ms > 0)
		cli_ago(fr->now_ms, p->started_ms, started, sizeof(started));
	else
		snprintf(started, sizeof(started), "-");
	sess = sessions_cell(p, fr->wide);
	fprintf(fr->f, "%-*s%-*s%-*s%-*s", W_PID, pid, W_AGENT, p->agent ? p->agent : "-", W_STATE, state,
		W_STARTED, started);
	used = W_PID + W_AGENT + W_STATE + W_STARTED;
	if (fr->wide) {
		fprintf(fr->f, "%s  ", sess ? sess : "-");
		cli_text(fr->f, p->command, CLI_TEXT_LINE);
		if (p->cwd) {
			fputs("  [", fr->f);
			cli_path(fr->f, p->cwd);
			fputs("]", fr->f);
		}
		fputc('\n', fr->f);
		free(sess);
		return 0;
	}
	cut = sess ? cli_cut(sess, W_SESSION - 1, false) : NULL;
	cli_pad_to(fr->f, cut ? cut : "-", W_SESSION);
	free(cut);
	used += W_SESSION;
	cwd = p->cwd ? cli_home_path(fr->c, p->cwd) : strdup("-");
	cmd = cli_text_str(p->command, CLI_TEXT_LINE);
	if (fr->width > 0) {
		/* what is left of the line: a third for the cwd (cut at its start), the rest for
		 * the command (cut at its end) */
		size_t room = (size_t)fr->width > used + 2 ? (size_t)fr->width - used - 2 : 0;
		size_t cw = room / 3 > 8 ? room / 3 : 8;
		char *c2 = cwd ? cli_cut(cwd, cw, true) : NULL;
		size_t left = room > (c2 ? cli_width(c2) : 1) ? room - (c2 ? cli_width(c2) : 1) : 1;
		char *m2 = cmd ? cli_cut(cmd, left, false) : NULL;

		fprintf(fr->f, "%s  %s\n", c2 ? c2 : "-", m2 ? m2 : "?");
		free(c2);
		free(m2);
	} else {
		fprintf(fr->f, "%s  %s\n", cwd ? cwd : "-", cmd ? cmd : "?");
	}
	free(cwd);
	free(cmd);
	free(sess);
	return 0;
}

static void print_warning(const char *msg, void *ud)
{
	(void)ud;
	cli_err("%s", msg);
}

static volatile sig_atomic_t stop_watch;

static void on_signal(int sig)
{
	(void)sig;
	stop_watch = 1;
}

/* One scan into f. Returns 0 or EXIT_ERR (said, unless the watch was interrupted: Ctrl-C
 * reaches the whole process group, so a ps or lsof the scan runs dies of it too, and its
 * failure is the interruption, not an error). */
static int frame(cli *c, ps_cmd *p, FILE *f, int width, size_t *rows)
{
	ps_frame fr;
	int rc;

	memset(&fr, 0, sizeof(fr));
	fr.c = c;
	fr.f = f;
	fr.wide = p->wide;
	fr.width = p->wide ? 0 : width;
	fr.now_ms = agc_ctx_now_ms(c->ctx);
	rc = agc_ps(c->ctx, &p->o, print_row, &fr);
	*rows = fr.rows;
	if (rc < 0) {
		if (!stop_watch)
			cli_err("%s", agc_error_last());
		return EXIT_ERR;
	}
	return 0;
}

int cmd_ps(cli *c, int argc, char **argv)
{
	ps_cmd p;
	cli_args pos;
	size_t rows = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	p.o.version = AGC_PS_OPTS_VERSION;
	rc = cli_parse(c, cli_cmd_find("ps"), argc, argv, ps_opt, &p, &pos);
	if (rc)
		return rc == CLI_PARSED_EXIT ? 0 : rc;
	if (pos.n) {
		rc = cli_usage("ps", "unexpected argument '%s'", pos.v[0]);
		cli_args_release(&pos);
		return rc;
	}
	cli_args_release(&pos);
	if ((rc = cli_ctx(c)))
		return rc;
	p.o.warn = print_warning;
	if (!p.watch) {
		rc = frame(c, &p, stdout, cli_term_width(), &rows);
		if (!rows && !c->json && rc == 0 && !c->quiet)
			cli_err("no agent process is running%s", p.o.agents ? " for the agents asked for" : "");
		return rc;
	}
	{
		struct sigaction sa;
		bool tty = isatty(STDOUT_FILENO) && !c->json;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		/* a closed reader ends the watch, whether SIGPIPE kills it or write says EPIPE */
		while (!stop_watch) {
			char *text = NULL;
			size_t len = 0;
			FILE *m;
			struct timespec ts = {1, 0};

			/* each frame is a new look: its own "now" (the gate's recency rule, the
			 * STARTED column), as a new run would have */
			agc_ctx_free(c->ctx);
			c->ctx = NULL;
			if ((rc = cli_ctx(c)))
				return rc;
			if (!(m = open_memstream(&text, &len))) {
				cli_err("cannot make a frame: %s", strerror(errno));
				return EXIT_ERR;
			}
			rc = frame(c, &p, m, cli_term_width(), &rows);
			if (rc == 0 && c->json) {
				/* the end of a frame, for a reader of the stream */
				json_t *e = json_object(), *f = json_object();
				char t[40];

				cli_iso(agc_ctx_now_ms(c->ctx), t, sizeof(t));
				json_object_set_new(f, "time", json_string(t));
				json_object_set_new(f, "processes", json_integer((json_int_t)rows));
				json_object_set_new(e, "frame", f);
				cli_json_fprint(m, e);
			}
			fclose(m);
			if (rc) {
				/* a frame cut short by the interruption is not shown */
				free(text);
				return stop_watch ? 0 : rc;
			}
			/* the whole frame at once: home, clear, then the table */
			if (tty)
				fputs("\033[H\033[2J", stdout);
			else if (!c->json)
				fputs("\n", stdout);
			fwrite(text, 1, len, stdout);
			if (!rows && !c->json)
				fputs("no agent process is running\n", stdout);
			free(text);
			if (fflush(stdout) != 0 || ferror(stdout))
				return 0;
			while (!stop_watch && nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
	}
	return 0;
}
