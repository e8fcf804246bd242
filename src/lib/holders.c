/* Who holds a session (SPEC R5): one pass over the process table, matching each process's
 * arguments, environment, current directory, open files and mappings against the session's ids
 * and artifacts. A process is read only as far as the query needs: argv when ids are asked for
 * (or to name a holder, or to ask the exemption), environ only when variable names are given,
 * fds and the cwd only when files are, and maps (the costliest read by far) only for a process
 * that nothing else has made a holder. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "holders.h"

#define HOLDERS_ARGV_MAX ((size_t)256 << 10)  /* argv read per process */
#define HOLDERS_ENV_MAX ((size_t)1 << 20)     /* environ read per process */
#define HOLDERS_COMMAND_MAX 512               /* a holder's command as shown */
#define HOLDERS_MAX ((size_t)1 << 20)         /* holders in one list */
#define HOLDERS_PIDS_MAX ((size_t)1 << 22)    /* processes listed in one scan */
#define HOLDERS_SPLIT_MIN 256                 /* below this, one thread does the scan */
#define HOLDERS_THREADS_MAX 8                 /* threads of one scan */

const char *agc_why_name(agc_why why)
{
	switch (why) {
	case AGC_WHY_REGISTRY:
		return "registry";
	case AGC_WHY_CMDLINE:
		return "cmdline";
	case AGC_WHY_ENVIRON:
		return "environ";
	case AGC_WHY_OPEN_FILE:
		return "open-file";
	case AGC_WHY_LOCK:
		return "lock";
	case AGC_WHY_UNREADABLE:
		return "process-table";
	case AGC_WHY_CWD:
		return "cwd";
	}
	return "unknown";
}

void agc_holders_release(agc_holders *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->n; i++) {
		free(h->v[i].command);
		free(h->v[i].what);
	}
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

static bool same_what(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

int agc_holders_add(agc_holders *h, pid_t pid, agc_why why, const char *command, const char *what,
		    size_t file)
{
	return agc_holders_add_session(h, pid, why, command, what, file, 0);
}

int agc_holders_add_session(agc_holders *h, pid_t pid, agc_why why, const char *command,
			    const char *what, size_t file, size_t session)
{
	char *c = NULL, *w = NULL;
	agc_holder *slot;
	size_t i;

	for (i = 0; i < h->n; i++)
		if (h->v[i].pid == pid && h->v[i].why == why && h->v[i].session == session &&
		    same_what(h->v[i].what, what))
			return 0;
	if (command && !(c = agc_strdup(command)))
		return -1;
	if (what && !(w = agc_strdup(what))) {
		free(c);
		return -1;
	}
	slot = AGC_ARRAY_PUSH(h, HOLDERS_MAX);
	if (!slot) {
		free(c);
		free(w);
		return -1;
	}
	slot->pid = pid;
	slot->why = why;
	slot->command = c;
	slot->what = w;
	slot->file = file;
	slot->session = session;
	return 0;
}

/* ASCII case folding only: ids are ASCII, and the locale must not change what matches. */
static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

static bool ci_equal(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fold((unsigned char)a[i]) != fold((unsigned char)b[i]))
			return false;
	return true;
}

/* Whether needle occurs in hay[0..hlen), ASCII case-insensitive. The needle has no NUL, so a
 * match never spans two NUL-separated arguments. */
static bool ci_contains(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	unsigned char c0;
	size_t i;

	if (nlen == 0 || nlen > hlen)
		return false;
	c0 = fold((unsigned char)needle[0]);
	for (i = 0; i + nlen <= hlen; i++)
		if (fold((unsigned char)hay[i]) == c0 && ci_equal(hay + i + 1, needle + 1, nlen - 1))
			return true;
	return false;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one (overlong forms,
 * surrogates and C1 controls included, since a terminal may act on those). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xc2 && s[1] < 0xa0) || (s[0] == 0xe0 && s[1] < 0xa0) ||
	    (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

/* Write argv (NUL-separated) into out as one line for people to read: arguments joined with
 * spaces, control bytes and invalid UTF-8 as '?', cut to HOLDERS_COMMAND_MAX bytes with "...". */
static void command_line(char *out, const char *argv, size_t len)
{
	const unsigned char *s = (const unsigned char *)argv;
	size_t i = 0, o = 0, k;

	while (len > 0 && argv[len - 1] == '\0')
		len--;
	while (i < len) {
		unsigned char c = s[i];

		k = c >= 0x80 ? utf8_len(s + i, len - i) : 1;
		if (o + (k ? k : 1) > HOLDERS_COMMAND_MAX) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c == '\0')
			out[o++] = ' ';
		else if (c < 0x20 || c == 0x7f || k == 0)
			out[o++] = '?';
		else {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		i++;
	}
	out[o] = '\0';
}

static bool is_runtime(const char *b, size_t l)
{
	return (l == 4 && memcmp(b, "node", 4) == 0) || (l == 6 && memcmp(b, "nodejs", 6) == 0) ||
	       (l == 3 && memcmp(b, "bun", 3) == 0) || (l == 4 && memcmp(b, "deno", 4) == 0);
}

bool agc_argv_prog(const char *argv, size_t len, const char **base, size_t *bl)
{
	const char *p = argv, *end = argv + len;
	bool runtime = false;

	for (; p < end; p += strnlen(p, (size_t)(end - p)) + 1) {
		size_t l = strnlen(p, (size_t)(end - p));
		const char *b = memrchr(p, '/', l);

		b = b ? b + 1 : p;
		if (p == argv) {
			if (!l)
				return false;
			if ((runtime = is_runtime(b, (size_t)(p + l - b))))
				continue;
		} else if (p[0] == '-' || !l) {
			continue; /* a runtime's own option */
		}
		*base = b;
		*bl = (size_t)(p + l - b);
		return true;
	}
	return false;
}

bool agc_argv_session(const char *argv, size_t len, const char *const *opts, const char *id)
{
	const char *p = argv, *end = argv + len, *prev = NULL;
	size_t idl = strlen(id), k;

	for (; p < end; prev = p, p += strnlen(p, (size_t)(end - p)) + 1) {
		size_t l = strnlen(p, (size_t)(end - p));

		for (k = 0; opts && opts[k]; k++) {
			size_t ol = strlen(opts[k]);

			/* "--opt=ID" in one argument, or "--opt" then "ID" */
			if (l == ol + 1 + idl && memcmp(p, opts[k], ol) == 0 && p[ol] == '=' &&
			    ci_equal(p + ol + 1, id, idl))
				return true;
			if (prev && l == idl && ci_equal(p, id, idl) && strlen(prev) == ol &&
			    memcmp(prev, opts[k], ol) == 0)
				return true;
		}
	}
	return false;
}

bool agc_argv_has(const char *argv, size_t len, const char *arg)
{
	const char *p = argv, *end = argv + len;
	size_t al = strlen(arg);

	for (; p < end; p += strnlen(p, (size_t)(end - p)) + 1)
		if (strnlen(p, (size_t)(end - p)) == al && memcmp(p, arg, al) == 0)
			return true;
	return false;
}

typedef struct file_key {
	dev_t dev;
	ino_t ino;
	size_t idx;  /* into the query's files */
} file_key;

static int key_cmp(const void *pa, const void *pb)
{
	const file_key *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* An id of the query, ASCII-folded, for a query of many ids (ls): looked up by binary search
 * instead of one pass over argv and environ per id. */
typedef struct id_key {
	char *folded;
	size_t len;
	size_t i;     /* into the query's ids */
} id_key;

#define HOLDERS_INDEX_MIN 32 /* ids from which the index is used */

static int id_key_cmp(const void *pa, const void *pb)
{
	const id_key *a = pa, *b = pb;

	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->folded, b->folded, a->len);
}

/* The first index entry equal to the len bytes at text (folded), or NULL. Equal entries (one
 * id listed for two sessions) follow it. */
static const id_key *idx_find(const id_key *idx, size_t n, const char *folded, size_t len)
{
	size_t lo = 0, hi = n, mid;
	id_key key = {(char *)folded, len, 0};

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (id_key_cmp(&idx[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && id_key_cmp(&idx[lo], &key) == 0 ? &idx[lo] : NULL;
}

typedef struct scan {
	const agc_gate_query *q;
	const char *procroot;
	agc_holders *out;
	pid_t self;
	pid_t *skip;       /* agentgc and its ancestors */
	size_t n_skip;
	size_t *id_len;
	id_key *idx;       /* many ids: sorted by (length, folded text); NULL otherwise */
	char *folded;      /* the text of idx's entries */
	size_t *lens;      /* the distinct lengths of idx */
	size_t n_lens;
	char *window;      /* room for the longest id, folded */
	file_key *keys;    /* the query's files sorted by (dev, ino) */
	uint32_t *seen;    /* per file: the generation of the process that last matched it */
	uint32_t gen;
	size_t *hits;      /* files matched by the current process */
	size_t n_hits;
	agc_buf argv, env;
	agc_proc *cur;     /* pid only, until the comm is needed */
	int rootfd;        /* procroot, opened once (-1: each pid dir opened by path) */
	int pfd;           /* the current process's /proc/PID, every read relative to it */
	agc_proc cur_buf;
	bool have_stat;
	bool have_argv;
	int argv_rc;
	bool have_command;
	bool held;         /* the current process is a holder already */
	bool files_failed; /* open files or current dirs could not be read (files_err): none is
			      looked at any more, and the scan ends in that error */
	char files_err[512];
	char command[HOLDERS_COMMAND_MAX + 4];
	/* A snapshot (agc_snap_take): what each process holds is kept instead of matched. */
	struct snap_take *snap;
	struct { struct snap_file *v; size_t n, cap; } lfiles;  /* the current process's */
	unsigned lhow;
} scan;

/* argv of the current process, read once. Returns 0 or the agc_proc_argv code. */
static int load_argv(scan *sc)
{
	if (!sc->have_argv) {
		sc->argv_rc = agc_proc_argv_at(sc->pfd, sc->cur->pid, HOLDERS_ARGV_MAX, &sc->argv);
		sc->have_argv = true;
	}
	return sc->argv_rc;
}

/* The command shown for the current process: its argv, or "[comm]" like ps when argv is empty
 * or unreadable. */
static const char *command(scan *sc)
{
	if (sc->have_command)
		return sc->command;
	if (load_argv(sc) == 0 && sc->argv.len > 0 && sc->argv.ptr[0] != '\0') {
		command_line(sc->command, sc->argv.ptr, sc->argv.len);
	} else {
		char comm[sizeof(sc->cur->comm) + 2];
		size_t n;

		/* The kernel's name is read only for the rare holder without an argv. */
		if (!sc->have_stat) {
			agc_proc p;

			if (agc_proc_stat_at(sc->pfd, sc->cur->pid, &p) == 0)
				memcpy(sc->cur->comm, p.comm, sizeof(p.comm));
			sc->have_stat = true;
		}
		n = strnlen(sc->cur->comm, sizeof(sc->cur->comm));

		comm[0] = '[';
		memcpy(comm + 1, sc->cur->comm, n);
		comm[n + 1] = ']';
		command_line(sc->command, comm, n + 2);
	}
	sc->have_command = true;
	return sc->command;
}

char *agc_holder_command_of(const char *procroot, pid_t pid)
{
	agc_buf argv = AGC_BUF_INIT_MAX((size_t)64 << 10);
	char line[HOLDERS_COMMAND_MAX + 4];
	agc_proc p;
	int rc = agc_proc_argv(procroot, pid, (size_t)64 << 10, &argv);

	if (rc == 0 && argv.len > 0 && argv.ptr[0] != '\0') {
		command_line(line, argv.ptr, argv.len);
	} else if (agc_proc_stat(procroot, pid, &p) == 0) {
		char comm[sizeof(p.comm) + 2];
		size_t n = strnlen(p.comm, sizeof(p.comm));

		comm[0] = '[';
		memcpy(comm + 1, p.comm, n);
		comm[n + 1] = ']';
		command_line(line, comm, n + 2);
	} else {
		snprintf(line, sizeof(line), "pid %ld", (long)pid);
	}
	agc_buf_release(&argv);
	return agc_strdup(line);
}

/* A gone or unreadable process is skipped for the check at hand (as fuser and lsof skip
 * other users' processes); anything else is an error. */
static bool skippable(int rc)
{
	return rc == AGC_ENOTFOUND || rc == AGC_EUNSAFE;
}

/* Make the current process a holder of session. Returns 0 or -1. */
static int hold(scan *sc, agc_why why, const char *what, size_t file, size_t session)
{
	sc->held = true;
	return agc_holders_add_session(sc->out, sc->cur->pid, why, command(sc), what, file, session);
}

/* The session of id i of the query. */
static size_t id_session(const agc_gate_query *q, size_t i)
{
	return q->id_session ? q->id_session[i] : 0;
}

static int check_cmdline(scan *sc)
{
	const agc_gate_query *q = sc->q;
	size_t i;
	int rc;

	rc = load_argv(sc);
	if (rc < 0)
		return skippable(rc) ? 0 : -1;
	if (sc->idx) {
		/* every window of each id length, looked up: the same matches as ci_contains per
		 * id (an id holds no NUL, so no window across two arguments matches) */
		size_t L, pos, k;

		for (L = 0; L < sc->n_lens; L++) {
			size_t len = sc->lens[L];

			for (pos = 0; pos + len <= sc->argv.len; pos++) {
				const id_key *e;

				for (k = 0; k < len; k++)
					sc->window[k] = (char)fold((unsigned char)sc->argv.ptr[pos + k]);
				for (e = idx_find(sc->idx, q->n_ids, sc->window, len);
				     e && e < sc->idx + q->n_ids && e->len == len && memcmp(e->folded, sc->window, len) == 0;
				     e++)
					if (hold(sc, AGC_WHY_CMDLINE, q->ids[e->i], 0, id_session(q, e->i)) < 0)
						return -1;
			}
		}
		return 0;
	}
	for (i = 0; i < q->n_ids; i++)
		if (ci_contains(sc->argv.ptr, sc->argv.len, q->ids[i], sc->id_len[i]) &&
		    hold(sc, AGC_WHY_CMDLINE, q->ids[i], 0, id_session(q, i)) < 0)
			return -1;
	return 0;
}

static int check_environ(scan *sc)
{
	const agc_gate_query *q = sc->q;
	const char *s, *end, *eq, *nul;
	size_t i, j, nlen, vlen;
	int rc;

	rc = agc_proc_environ_at(sc->pfd, sc->cur->pid, HOLDERS_ENV_MAX, &sc->env);
	if (rc < 0)
		return skippable(rc) ? 0 : -1;
	s = agc_buf_cstr(&sc->env);
	end = s + sc->env.len;
	for (; s < end; s = nul + 1) {
		nul = memchr(s, '\0', (size_t)(end - s));
		if (!nul)
			nul = end;
		eq = memchr(s, '=', (size_t)(nul - s));
		if (!eq)
			continue;
		nlen = (size_t)(eq - s);
		vlen = (size_t)(nul - eq - 1);
		if (sc->idx) {
			/* the ids equal to the value, then whether the variable is one of theirs */
			const id_key *e;
			size_t k;

			if (!vlen || vlen > sc->lens[sc->n_lens - 1])
				continue;
			for (k = 0; k < vlen; k++)
				sc->window[k] = (char)fold((unsigned char)eq[1 + k]);
			for (e = idx_find(sc->idx, q->n_ids, sc->window, vlen);
			     e && e < sc->idx + q->n_ids && e->len == vlen && memcmp(e->folded, sc->window, vlen) == 0; e++) {
				const char *const *names = q->id_env_names ? q->id_env_names[e->i] : q->env_names;
				size_t nn = q->id_env_names ? (size_t)-1 : q->n_env_names;

				for (i = 0; names && i < nn && names[i]; i++)
					if (strlen(names[i]) == nlen && memcmp(names[i], s, nlen) == 0 &&
					    hold(sc, AGC_WHY_ENVIRON, q->ids[e->i], 0, id_session(q, e->i)) < 0)
						return -1;
			}
			continue;
		}
		if (q->id_env_names) {
			/* each id with its own agent's variables */
			for (j = 0; j < q->n_ids; j++) {
				const char *const *names = q->id_env_names[j];

				for (i = 0; names && names[i]; i++) {
					if (strlen(names[i]) != nlen || memcmp(names[i], s, nlen))
						continue;
					if (sc->id_len[j] == vlen && vlen && ci_equal(eq + 1, q->ids[j], vlen) &&
					    hold(sc, AGC_WHY_ENVIRON, q->ids[j], 0, id_session(q, j)) < 0)
						return -1;
				}
			}
			continue;
		}
		for (i = 0; i < q->n_env_names; i++) {
			if (strlen(q->env_names[i]) != nlen || memcmp(q->env_names[i], s, nlen))
				continue;
			for (j = 0; j < q->n_ids; j++)
				if (sc->id_len[j] == vlen && vlen && ci_equal(eq + 1, q->ids[j], vlen) &&
				    hold(sc, AGC_WHY_ENVIRON, q->ids[j], 0, id_session(q, j)) < 0)
					return -1;
		}
	}
	return 0;
}

/* The first of the sorted keys with (dev, ino) at or above f; equal keys (the same file
 * listed twice) follow it. */
static size_t key_lower(const scan *sc, const agc_devino *f)
{
	size_t lo = 0, hi = sc->q->n_files, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (sc->keys[mid].dev < f->dev ||
		    (sc->keys[mid].dev == f->dev && sc->keys[mid].ino < f->ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool key_is(const scan *sc, size_t i, const agc_devino *f)
{
	return i < sc->q->n_files && sc->keys[i].dev == f->dev && sc->keys[i].ino == f->ino;
}

/* Called for every open file of the current process: note each query file it is. */
static int file_cb(const agc_devino *f, void *ud)
{
	scan *sc = ud;
	size_t lo;

	for (lo = key_lower(sc, f); key_is(sc, lo, f); lo++) {
		size_t idx = sc->keys[lo].idx;

		if (sc->seen[idx] != sc->gen) {
			sc->seen[idx] = sc->gen;
			sc->hits[sc->n_hits++] = idx;
		}
	}
	return 0;
}

static int check_files(scan *sc)
{
	const agc_gate_query *q = sc->q;
	bool exempt = false;
	size_t i;
	int rc;

	sc->n_hits = 0;
	if (++sc->gen == 0) {
		memset(sc->seen, 0, q->n_files * sizeof(*sc->seen));
		sc->gen = 1;
	}
	rc = agc_proc_fds_at(sc->pfd, sc->cur->pid, file_cb, sc);
	/* Files seen before the process went away (or stopped being readable) still count: it
	 * held them during the scan, and a refusal is the safe side. */
	if (rc < 0 && !skippable(rc))
		return -1;
	/* R5: a mapping outlives the fd it was made from (mmap, then close), for every agent.
	 * Reading maps costs more than all the other checks of a process together, so it is
	 * done only for a process that is no holder yet: one more reason changes nothing. */
	if (rc == 0 && q->with_maps && (q->every_session || (sc->n_hits == 0 && !sc->held))) {
		rc = agc_proc_maps_at(sc->pfd, sc->cur->pid, file_cb, sc);
		if (rc < 0 && !skippable(rc))
			return -1;
	}
	if (sc->n_hits == 0)
		return 0;
	/* The exemption (a shared service) needs the real argv; an argv we cannot read proves
	 * nothing, so such a process stays a holder. It covers the files it may cover: another
	 * agent's file held by the service still holds that session. */
	if (q->exempt && load_argv(sc) == 0 && q->exempt(agc_buf_cstr(&sc->argv), sc->argv.len,
							 q->exempt_ud))
		exempt = true;
	for (i = 0; i < sc->n_hits; i++) {
		const agc_gate_file *f = &q->files[sc->hits[i]];

		if (exempt && !f->no_exempt)
			continue;
		if (hold(sc, AGC_WHY_OPEN_FILE, f->label, sc->hits[i], f->session) < 0)
			return -1;
	}
	return 0;
}

/* R5: the current directory of the process. Inside one of the session's dirs, the process
 * runs in the session (a tool started there, a shell left in it). At the session's project,
 * it holds the session when it is the agent's own process and no live registry entry accounts
 * for it (an older agent, or a nested session, writes none). */
static int check_cwd(scan *sc)
{
	const agc_gate_query *q = sc->q;
	agc_devino d;
	size_t i;
	int rc;

	rc = agc_proc_cwd_id_at(sc->pfd, sc->cur->pid, &d);
	if (rc < 0)
		return skippable(rc) ? 0 : -1;
	size_t n_agent = q->agent_cwd ? (q->n_agent_cwd ? q->n_agent_cwd : 1) : 0, k;
	bool asked = false, agent = false;

	for (i = q->n_files ? key_lower(sc, &d) : 0; key_is(sc, i, &d); i++)
		if (hold(sc, AGC_WHY_CWD, q->files[sc->keys[i].idx].label, sc->keys[i].idx,
			 q->files[sc->keys[i].idx].session) < 0)
			return -1;
	for (k = 0; k < n_agent; k++) {
		const agc_gate_file *a = &q->agent_cwd[k];

		if (d.dev != a->id.dev || d.ino != a->id.ino)
			continue;
		/* asked once per process: is it the agent's own, not accounted for by a registry?
		 * An argv we cannot read does not show the agent: as with another user's
		 * process, nothing is known of it. */
		if (!asked) {
			asked = true;
			agent = load_argv(sc) == 0 && q->agent_proc &&
				q->agent_proc(agc_buf_cstr(&sc->argv), sc->argv.len) &&
				!(q->accounted && q->accounted(sc->cur->pid, q->accounted_ud));
		}
		if (agent && hold(sc, AGC_WHY_CWD, a->label, AGC_HOLDER_NO_FILE, a->session) < 0)
			return -1;
	}
	return 0;
}

static bool skipped(const scan *sc, pid_t pid)
{
	size_t i;

	for (i = 0; i < sc->n_skip; i++)
		if (sc->skip[i] == pid)
			return true;
	return false;
}

static int snap_one(scan *sc, bool ancestor);

static int each_cb(pid_t pid, void *ud)
{
	scan *sc = ud;
	const agc_gate_query *q = sc->q;
	bool ancestor = skipped(sc, pid);
	agc_proc *p = &sc->cur_buf;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	sc->cur = p;
	sc->have_stat = false;
	sc->have_argv = false;
	sc->have_command = false;
	sc->held = false;
	/* One open of /proc/PID; every check reads relative to it. A process gone since the
	 * listing, or one we may not look at (hidepid), is skipped as each read would be. */
	sc->pfd = sc->rootfd >= 0 ? agc_proc_open_in(sc->rootfd, pid) : agc_proc_open(sc->procroot, pid);
	if (sc->pfd < 0)
		return skippable(sc->pfd) ? 0 : -1;
	if (sc->snap) {
		rc = snap_one(sc, ancestor);
		close(sc->pfd);
		sc->pfd = -1;
		return rc;
	}
	/* agentgc and its ancestors carry the id in their own arguments and environment (a shell
	 * running `agentgc purge <id>`, an agent's tool running it), and may well run inside the
	 * session's dirs or its project: they never count for these. */
	if (q->n_ids && !ancestor && check_cmdline(sc) < 0)
		rc = -1;
	else if ((q->n_env_names || q->id_env_names) && q->n_ids && !ancestor && check_environ(sc) < 0)
		rc = -1;
	else if (!sc->files_failed &&
		 (((q->n_files || q->agent_cwd) && !ancestor && check_cwd(sc) < 0) ||
		  /* agentgc's own fds are the ones it reads the session through. */
		  (q->n_files && p->pid != sc->self && check_files(sc) < 0))) {
		/* Open files that cannot be read (lsof missing or failing, through ps) end the
		 * scan's answer as an error, but not the look at every argv and environment:
		 * the holders those name are still told with it. */
		sc->files_failed = true;
		snprintf(sc->files_err, sizeof(sc->files_err), "%s", agc_error_last());
	}
	close(sc->pfd);
	sc->pfd = -1;
	return rc;
}

static void scan_release(scan *sc)
{
	free(sc->folded);
	free(sc->idx);
	free(sc->lens);
	free(sc->window);
	free(sc->skip);
	free(sc->id_len);
	free(sc->keys);
	free(sc->seen);
	free(sc->hits);
	free(sc->lfiles.v);
	agc_buf_release(&sc->argv);
	agc_buf_release(&sc->env);
}

typedef struct pid_list {
	pid_t *v;
	size_t n, cap;
} pid_list;

static int list_cb(pid_t pid, void *ud)
{
	pid_list *l = ud;
	pid_t *slot = AGC_ARRAY_PUSH(l, HOLDERS_PIDS_MAX);

	if (!slot)
		return -1;
	*slot = pid;
	return 0;
}

/* A worker of the scan: its own scan state and holders; pids are taken one at a time from a
 * counter that all workers share, so a slow process (thousands of fds or mappings) never
 * leaves the other cores idle while a fixed share waits. */
typedef struct worker {
	scan sc;
	const pid_t *pids;
	size_t n;
	atomic_size_t *next;
	size_t *pos;       /* per holder of sc.out: the index in pids of the process it is */
	size_t pos_cap;
	int rc;
	char err[512];
} worker;

/* Run the checks of the process at index i; note for each new holder where it came from. */
static int work_one(worker *w, size_t i)
{
	size_t before = w->sc.out->n, k;
	int rc = each_cb(w->pids[i], &w->sc);

	if (rc == 0 && w->sc.out->n > before) {
		if (w->sc.out->n > w->pos_cap) {
			size_t cap = w->sc.out->cap > w->sc.out->n ? w->sc.out->cap : w->sc.out->n;
			size_t *np = realloc(w->pos, cap * sizeof(*np));

			if (!np)
				return agc_error_oom();
			w->pos = np;
			w->pos_cap = cap;
		}
		for (k = before; k < w->sc.out->n; k++)
			w->pos[k] = i;
	}
	return rc;
}

static void *work(void *arg)
{
	worker *w = arg;
	size_t i;

	w->rc = 0;
	while (w->rc == 0 && (i = atomic_fetch_add(w->next, 1)) < w->n)
		w->rc = work_one(w, i);
	if (w->rc)
		snprintf(w->err, sizeof(w->err), "%s", agc_error_last());
	return NULL;
}

/* A holder found by worker w, for the merge. */
typedef struct found {
	size_t pos;
	size_t seq;
	const agc_holder *h;
} found;

static int found_cmp(const void *pa, const void *pb)
{
	const found *a = pa, *b = pb;

	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* How many threads scan: one per online CPU, bounded. */
static size_t scan_threads(size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t t = cpus > 0 ? (size_t)cpus : 1;

	if (t > HOLDERS_THREADS_MAX)
		t = HOLDERS_THREADS_MAX;
	if (n < HOLDERS_SPLIT_MIN)
		t = 1;
	return t;
}

/* Scan pids, on one thread per CPU when there are many: every check is a few system calls on
 * /proc, and the kernel answers them on every core. Holders go to sc->out in the order of
 * pids, whichever thread found them, so the report is the same on every run. */
static int scan_pids(scan *sc, const pid_t *pids, size_t n)
{
	worker w[HOLDERS_THREADS_MAX];
	pthread_t t[HOLDERS_THREADS_MAX];
	bool started[HOLDERS_THREADS_MAX] = {false};
	atomic_size_t next;
	size_t nt = scan_threads(n), i, k, total = 0;
	found *all = NULL;
	int rc = 0;

	if (nt <= 1) {
		for (i = 0; i < n && rc == 0; i++)
			rc = each_cb(pids[i], sc);
		return rc ? -1 : 0;
	}
	atomic_init(&next, 0);
	memset(w, 0, sizeof(w));
	for (k = 0; k < nt; k++) {
		w[k].sc = *sc; /* shares the read-only query, skip list, index and sorted keys */
		memset(&w[k].sc.argv, 0, sizeof(w[k].sc.argv));
		memset(&w[k].sc.env, 0, sizeof(w[k].sc.env));
		memset(&w[k].sc.lfiles, 0, sizeof(w[k].sc.lfiles));
		w[k].sc.gen = 0;
		w[k].sc.out = calloc(1, sizeof(*w[k].sc.out));
		w[k].sc.seen = sc->q->n_files ? calloc(sc->q->n_files, sizeof(*w[k].sc.seen)) : NULL;
		w[k].sc.hits = sc->q->n_files ? calloc(sc->q->n_files, sizeof(*w[k].sc.hits)) : NULL;
		w[k].sc.window = NULL;
		if (sc->window && !(w[k].sc.window = malloc(sc->lens[sc->n_lens - 1] + 1)))
			rc = agc_error_oom();
		w[k].pids = pids;
		w[k].n = n;
		w[k].next = &next;
		if (!w[k].sc.out || (sc->q->n_files && (!w[k].sc.seen || !w[k].sc.hits)))
			rc = agc_error_oom();
	}
	/* worker 0 runs here; a thread that cannot be made leaves its share to the others */
	for (k = 1; rc == 0 && k < nt; k++)
		started[k] = pthread_create(&t[k], NULL, work, &w[k]) == 0;
	if (rc == 0)
		work(&w[0]);
	for (k = 1; k < nt; k++)
		if (started[k])
			pthread_join(t[k], NULL);
	for (k = 0; rc == 0 && k < nt; k++)
		if (w[k].rc)
			rc = agc_error_set(-1, "%s", w[k].err);
	for (k = 0; k < nt; k++)
		if (w[k].sc.files_failed && !sc->files_failed) {
			sc->files_failed = true;
			memcpy(sc->files_err, w[k].sc.files_err, sizeof(sc->files_err));
		}
	for (k = 0; k < nt; k++)
		total += w[k].sc.out ? w[k].sc.out->n : 0;
	if (rc == 0 && total) {
		size_t m = 0;

		all = malloc(total * sizeof(*all));
		if (!all)
			rc = agc_error_oom();
		for (k = 0; all && k < nt; k++)
			for (i = 0; i < w[k].sc.out->n; i++) {
				all[m].pos = w[k].pos[i];
				all[m].seq = i;
				all[m].h = &w[k].sc.out->v[i];
				m++;
			}
		if (all)
			qsort(all, total, sizeof(*all), found_cmp);
		for (i = 0; rc == 0 && all && i < total; i++) {
			const agc_holder *h = all[i].h;

			rc = agc_holders_add_session(sc->out, h->pid, h->why, h->command, h->what, h->file,
						     h->session);
		}
	}
	free(all);
	for (k = 0; k < nt; k++) {
		if (w[k].sc.out) {
			agc_holders_release(w[k].sc.out);
			free(w[k].sc.out);
		}
		free(w[k].sc.seen);
		free(w[k].sc.hits);
		free(w[k].sc.window);
		free(w[k].pos);
		free(w[k].sc.lfiles.v);
		agc_buf_release(&w[k].sc.argv);
		agc_buf_release(&w[k].sc.env);
	}
	return rc ? -1 : 0;
}

/* The index of a query of many ids: folded copies sorted by (length, text), and their
 * distinct lengths. Empty ids are left out (they match nothing). Returns 0 or -1. */
static int build_index(scan *sc)
{
	const agc_gate_query *q = sc->q;
	size_t i, k, n = 0, longest = 0;

	size_t total = 0;
	char *o;

	for (i = 0; i < q->n_ids; i++)
		total += sc->id_len[i];
	sc->idx = calloc(q->n_ids, sizeof(*sc->idx));
	sc->lens = calloc(q->n_ids, sizeof(*sc->lens));
	/* the folded copies in one block (a listing asks for 100,000 ids and more) */
	sc->folded = malloc(total ? total : 1);
	if (!sc->idx || !sc->lens || !sc->folded)
		return agc_error_oom();
	for (i = 0, o = sc->folded; i < q->n_ids; i++) {
		if (!sc->id_len[i])
			continue;
		sc->idx[n].folded = o;
		o += sc->id_len[i];
		for (k = 0; k < sc->id_len[i]; k++)
			sc->idx[n].folded[k] = (char)fold((unsigned char)q->ids[i][k]);
		sc->idx[n].len = sc->id_len[i];
		sc->idx[n].i = i;
		if (sc->id_len[i] > longest)
			longest = sc->id_len[i];
		n++;
	}
	/* entries past n stay zero (len 0): they sort first and match no window */
	qsort(sc->idx, q->n_ids, sizeof(*sc->idx), id_key_cmp);
	for (i = 0; i < q->n_ids; i++)
		if (sc->idx[i].len && (!sc->n_lens || sc->lens[sc->n_lens - 1] != sc->idx[i].len))
			sc->lens[sc->n_lens++] = sc->idx[i].len;
	sc->window = malloc(longest + 1);
	if (!sc->window)
		return agc_error_oom();
	if (!sc->n_lens) {
		/* no id to look for at all */
		free(sc->window);
		sc->window = NULL;
		free(sc->idx);
		sc->idx = NULL;
	}
	return 0;
}

int agc_holders_scan(const agc_gate_query *q, agc_holders *out)
{
	scan sc;
	pid_list pids = {0};
	size_t i;
	int rc = -1;

	if (!q || !out || (q->n_ids && !q->ids) || (q->n_env_names && !q->env_names) ||
	    (q->n_files && !q->files))
		return agc_error_set(-1, "invalid holder query");
	if (!q->n_ids && !q->n_files && !q->agent_cwd)
		return 0;  /* nothing that anything could hold */

	memset(&sc, 0, sizeof(sc));
	sc.q = q;
	sc.procroot = q->procroot ? q->procroot : "/proc";
	sc.rootfd = open(sc.procroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	sc.out = out;

	if (agc_proc_self_and_ancestors(sc.procroot, q->listed, &sc.skip, &sc.n_skip) < 0)
		goto done;
	sc.self = sc.n_skip ? sc.skip[0] : 0;  /* 0: procroot does not list this process */
	if (q->n_ids) {
		sc.id_len = calloc(q->n_ids, sizeof(*sc.id_len));
		if (!sc.id_len) {
			agc_error_oom();
			goto done;
		}
		/* An empty id would match every process; ids are never empty, so it matches none. */
		for (i = 0; i < q->n_ids; i++)
			sc.id_len[i] = q->ids[i] ? strlen(q->ids[i]) : 0;
		if (q->n_ids >= HOLDERS_INDEX_MIN && build_index(&sc) < 0)
			goto done;
	}
	if (q->n_files) {
		sc.keys = calloc(q->n_files, sizeof(*sc.keys));
		sc.seen = calloc(q->n_files, sizeof(*sc.seen));
		sc.hits = calloc(q->n_files, sizeof(*sc.hits));
		if (!sc.keys || !sc.seen || !sc.hits) {
			agc_error_oom();
			goto done;
		}
		for (i = 0; i < q->n_files; i++) {
			sc.keys[i].dev = q->files[i].id.dev;
			sc.keys[i].ino = q->files[i].id.ino;
			sc.keys[i].idx = i;
		}
		qsort(sc.keys, q->n_files, sizeof(*sc.keys), key_cmp);
	}

	if (q->only_pids) {
		agc_proc_scope(sc.procroot, q->only_pids, q->n_only_pids);
		rc = scan_pids(&sc, q->only_pids, q->n_only_pids);
		goto done;
	}
	/* Only the pids are listed: each check reads just what it needs of a process. */
	if (agc_proc_each_pid(sc.procroot, list_cb, &pids) != 0)
		goto done;
	rc = scan_pids(&sc, pids.v, pids.n);
done:
	if (rc == 0 && sc.files_failed)
		rc = agc_error_set(-1, "%s", sc.files_err);
	free(pids.v);
	if (sc.rootfd >= 0)
		close(sc.rootfd);
	scan_release(&sc);
	return rc;
}

/* ---- snapshot (ls) ------------------------------------------------------------------------ */

#define SNAP_FD 1u      /* an fd or mapping of a process that is no exempt service */
#define SNAP_EXEMPT 2u  /* an fd or mapping of an exempt service */
#define SNAP_CWD 4u     /* the current dir of a process that is neither agentgc nor an ancestor */
#define SNAP_FILES_MAX ((size_t)1 << 26)

typedef struct snap_file {
	agc_devino id;
	unsigned how;
	pid_t pid;      /* the process (agc_snap_opts.keep_pids), else 0 */
} snap_file;

/* An agent process (agent_proc) and its current dir; whether a registry accounts for it is
 * asked only when a session's project is that dir. */
typedef struct snap_agent {
	agc_devino cwd;
	pid_t pid;
} snap_agent;

struct agc_snap {
	struct { snap_file *v; size_t n, cap; } files;  /* sorted by (dev, ino), one each */
	struct { snap_agent *v; size_t n, cap; } agents; /* sorted by cwd */
	bool (*accounted)(pid_t pid, void *ud);
	void *accounted_ud;
};

typedef struct snap_take {
	agc_snap *s;
	const agc_snap_opts *o;
	pthread_mutex_t mu;
} snap_take;

static int snap_file_cb(const agc_devino *f, void *ud)
{
	scan *sc = ud;
	snap_file *e = AGC_ARRAY_PUSH(&sc->lfiles, SNAP_FILES_MAX);

	if (!e)
		return -1;
	e->id = *f;
	e->how = sc->lhow;
	e->pid = sc->snap->o->keep_pids ? sc->cur->pid : 0;
	return 0;
}

static int snap_file_cmp(const void *pa, const void *pb)
{
	const snap_file *a = pa, *b = pb;

	if (a->id.dev != b->id.dev)
		return a->id.dev < b->id.dev ? -1 : 1;
	if (a->id.ino != b->id.ino)
		return a->id.ino < b->id.ino ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Sort files[0..n) and merge the entries of one file (of one process, with keep_pids); returns
 * how many are left. */
static size_t snap_files_merge(snap_file *v, size_t n)
{
	size_t i, k = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), snap_file_cmp);
	for (i = 0; i < n; i++) {
		if (k && snap_file_cmp(&v[k - 1], &v[i]) == 0)
			v[k - 1].how |= v[i].how;
		else
			v[k++] = v[i];
	}
	return k;
}

/* Keep what the current process holds, under the snapshot's lock. */
static int snap_keep(scan *sc, const agc_devino *cwd, bool agent)
{
	agc_snap *s = sc->snap->s;
	size_t i, n = snap_files_merge(sc->lfiles.v, sc->lfiles.n);

	if (agc_array_grow((void **)&s->files.v, &s->files.cap, s->files.n + n + 1, sizeof(*s->files.v),
			   SNAP_FILES_MAX) < 0)
		return -1;
	for (i = 0; i < n; i++)
		s->files.v[s->files.n++] = sc->lfiles.v[i];
	if (cwd) {
		s->files.v[s->files.n].id = *cwd;
		s->files.v[s->files.n].pid = sc->snap->o->keep_pids ? sc->cur->pid : 0;
		s->files.v[s->files.n++].how = SNAP_CWD;
	}
	if (agent) {
		snap_agent *a = AGC_ARRAY_PUSH(&s->agents, SNAP_FILES_MAX);

		if (!a)
			return -1;
		a->cwd = *cwd;
		a->pid = sc->cur->pid;
	}
	return 0;
}

/* The snapshot's part of one process: read as each_cb's checks would read it (the same
 * processes skipped, the same reads kept when a process goes away midway), then kept. */
static int snap_one(scan *sc, bool ancestor)
{
	const agc_snap_opts *o = sc->snap->o;
	pid_t pid = sc->cur->pid;
	agc_devino cwd;
	bool have_cwd = false, agent = false;
	int rc;

	sc->lfiles.n = 0;
	/* agentgc and its ancestors never count for current dirs */
	if (!ancestor) {
		rc = agc_proc_cwd_id_at(sc->pfd, pid, &cwd);
		if (rc < 0 && !skippable(rc))
			return -1;
		have_cwd = rc == 0;
		/* an argv we cannot read does not show the agent (check_cwd) */
		agent = have_cwd && o->agent_proc && load_argv(sc) == 0 &&
			o->agent_proc(agc_buf_cstr(&sc->argv), sc->argv.len);
	}
	/* agentgc's own fds are the ones it reads the sessions through */
	if (pid != sc->self) {
		/* an argv we cannot read proves no exemption (check_files) */
		bool exempt = o->exempt && load_argv(sc) == 0 &&
			      o->exempt(agc_buf_cstr(&sc->argv), sc->argv.len, o->exempt_ud);

		sc->lhow = exempt ? SNAP_EXEMPT : SNAP_FD;
		rc = agc_proc_fds_at(sc->pfd, pid, snap_file_cb, sc);
		if (rc < 0 && !skippable(rc))
			return -1;
		/* R5: a mapping outlives the fd it was made from */
		if (rc == 0) {
			rc = agc_proc_maps_at(sc->pfd, pid, snap_file_cb, sc);
			if (rc < 0 && !skippable(rc))
				return -1;
		}
	}
	pthread_mutex_lock(&sc->snap->mu);
	rc = snap_keep(sc, have_cwd ? &cwd : NULL, agent);
	pthread_mutex_unlock(&sc->snap->mu);
	return rc;
}

static int snap_agent_cmp(const void *pa, const void *pb)
{
	const snap_agent *a = pa, *b = pb;

	if (a->cwd.dev != b->cwd.dev)
		return a->cwd.dev < b->cwd.dev ? -1 : 1;
	if (a->cwd.ino != b->cwd.ino)
		return a->cwd.ino < b->cwd.ino ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

void agc_snap_free(agc_snap *s)
{
	if (!s)
		return;
	free(s->files.v);
	free(s->agents.v);
	free(s);
}

int agc_snap_take(const agc_snap_opts *o, agc_snap **out)
{
	snap_take t;
	scan sc;
	agc_gate_query none;  /* the scan's machinery reads its query: one that asks nothing */
	pid_list pids = {0};
	int rc = -1;

	*out = NULL;
	memset(&t, 0, sizeof(t));
	t.o = o;
	if (!(t.s = calloc(1, sizeof(*t.s))))
		return agc_error_oom();
	t.s->accounted = o->accounted;
	t.s->accounted_ud = o->accounted_ud;
	pthread_mutex_init(&t.mu, NULL);
	memset(&sc, 0, sizeof(sc));
	memset(&none, 0, sizeof(none));
	sc.q = &none;
	sc.procroot = o->procroot ? o->procroot : "/proc";
	sc.rootfd = open(sc.procroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	sc.snap = &t;
	if (agc_proc_self_and_ancestors(sc.procroot, false, &sc.skip, &sc.n_skip) < 0)
		goto done;
	sc.self = sc.n_skip ? sc.skip[0] : 0;
	if (agc_proc_each_pid(sc.procroot, list_cb, &pids) != 0)
		goto done;
	if (scan_pids(&sc, pids.v, pids.n) < 0)
		goto done;
	/* one entry per file, its ways of being held merged */
	t.s->files.n = snap_files_merge(t.s->files.v, t.s->files.n);
	if (t.s->agents.n > 1)
		qsort(t.s->agents.v, t.s->agents.n, sizeof(*t.s->agents.v), snap_agent_cmp);
	rc = 0;
done:
	free(pids.v);
	if (sc.rootfd >= 0)
		close(sc.rootfd);
	scan_release(&sc);
	pthread_mutex_destroy(&t.mu);
	if (rc == 0)
		*out = t.s;
	else
		agc_snap_free(t.s);
	return rc;
}

/* The first entry of (dev, ino), or s->files.n. */
static size_t snap_lower(const agc_snap *s, dev_t dev, ino_t ino)
{
	size_t lo = 0, hi = s->files.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const agc_devino *m = &s->files.v[mid].id;

		if (m->dev < dev || (m->dev == dev && m->ino < ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether an entry's ways of being held make a holder: an fd, mapping or current dir of any
 * process but an exempt service, whose fds and mappings count only for no_exempt files. */
static bool snap_holds(unsigned how, bool no_exempt)
{
	return (how & (SNAP_FD | SNAP_CWD)) || ((how & SNAP_EXEMPT) && no_exempt);
}

bool agc_snap_file(const agc_snap *s, dev_t dev, ino_t ino, bool no_exempt)
{
	size_t i;

	if (!s)
		return false;
	for (i = snap_lower(s, dev, ino); i < s->files.n && s->files.v[i].id.dev == dev &&
					 s->files.v[i].id.ino == ino; i++)
		if (snap_holds(s->files.v[i].how, no_exempt))
			return true;
	return false;
}

int agc_snap_file_each(const agc_snap *s, dev_t dev, ino_t ino, bool no_exempt,
		       int (*cb)(pid_t pid, agc_why why, bool serves, void *ud), void *ud)
{
	size_t i;
	int rc;

	if (!s)
		return 0;
	for (i = snap_lower(s, dev, ino); i < s->files.n && s->files.v[i].id.dev == dev &&
					 s->files.v[i].id.ino == ino; i++) {
		const snap_file *e = &s->files.v[i];

		/* a current dir inside the session is the gate's cwd rule, an fd or a mapping
		 * its open-file rule; what a shared service has open it serves */
		if ((e->how & SNAP_CWD) && (rc = cb(e->pid, AGC_WHY_CWD, false, ud)) != 0)
			return rc;
		if ((e->how & SNAP_FD) && (rc = cb(e->pid, AGC_WHY_OPEN_FILE, false, ud)) != 0)
			return rc;
		if ((e->how & SNAP_EXEMPT) && (rc = cb(e->pid, AGC_WHY_OPEN_FILE, !no_exempt, ud)) != 0)
			return rc;
	}
	return 0;
}

int agc_snap_agent_cwd_each(const agc_snap *s, dev_t dev, ino_t ino, int (*cb)(pid_t pid, void *ud),
			    void *ud)
{
	size_t lo = 0, hi, i;
	int rc;

	if (!s)
		return 0;
	for (hi = s->agents.n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		const agc_devino *c = &s->agents.v[mid].cwd;

		if (c->dev < dev || (c->dev == dev && c->ino < ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* asked once a project matches, as check_cwd asks: is it accounted for? */
	for (i = lo; i < s->agents.n && s->agents.v[i].cwd.dev == dev && s->agents.v[i].cwd.ino == ino; i++)
		if (!(s->accounted && s->accounted(s->agents.v[i].pid, s->accounted_ud)) &&
		    (rc = cb(s->agents.v[i].pid, ud)) != 0)
			return rc;
	return 0;
}

static int agent_cwd_any(pid_t pid, void *ud)
{
	(void)pid;
	(void)ud;
	return 1;
}

bool agc_snap_agent_cwd(const agc_snap *s, dev_t dev, ino_t ino)
{
	return agc_snap_agent_cwd_each(s, dev, ino, agent_cwd_any, NULL) != 0;
}

int agc_db_holders(const char *procroot, const char *path, agc_holders *out)
{
	static const char *const sfx[] = {"", "-wal", "-shm"};
	agc_gate_file files[3];
	agc_gate_query q;
	size_t n = 0, i;

	memset(files, 0, sizeof(files));
	for (i = 0; i < 3; i++) {
		char *f = agc_strfmt("%s%s", path, sfx[i]);
		struct stat st;

		if (f && lstat(f, &st) == 0) {
			files[n].id.dev = st.st_dev;
			files[n].id.ino = st.st_ino;
			files[n].label = sfx[i][0] ? sfx[i] + 1 : "db";
			n++;
		}
		free(f);
	}
	memset(&q, 0, sizeof(q));
	q.procroot = procroot;
	q.files = files;
	q.n_files = n;
	q.with_maps = true;
	return agc_holders_scan(&q, out);
}
