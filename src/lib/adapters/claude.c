/* Claude Code: sessions are files under the config dir and the temp dir
 * (formats/claude-code.md). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../clock.h"
#include "../core.h"
#include "../dirwatch.h"
#include "../error.h"
#include "../hset.h"
#include "../jscan.h"
#include "../json.h"
#include "../proc.h"
#include "../proc-ps.h"
#include "../remove.h"
#include "../scan.h"
#include "../session.h"
#include "../walk.h"
#include "claude.h"

#define REGISTRY_MAX 262144           /* Claude's own reader caps the file here */
#define HEAD_LINES 50                 /* ls reads at most this many lines of a transcript */
#define HEAD_BYTES ((uint64_t)1 << 20)
#define HEAD_LINE_MAX ((size_t)256 * 1024) /* a longer line of a transcript head is skipped */
#define TAIL_BYTES ((uint64_t)64 << 10) /* ls reads at most this much of a transcript's end */
#define TITLE_BYTES 1024              /* of a prompt's first line: more than 200 characters */
#define STARTED_AT_TOLERANCE_MS 15000 /* startedAt is taken a little after the process starts */
#define DIR_ENTRIES_MAX ((size_t)10 << 20)
/* R5: a Claude process without a registry entry holds a session whose transcript changed
 * this recently (formats/claude-code.md §5, item 4). */
#define AGENT_CWD_WINDOW_MS ((int64_t)15 * 60 * 1000)

enum { R_CONFIG = 0, R_TEMP = 1 };

/* A session id is a UUID; a sub-agent's is "a" + 16 hex (formats/claude-code.md 6), taken in
 * any letter case like a UUID and canonicalised to lower case (R1): ls --children lists
 * sub-agents by it, and show, in-use and purge accept what ls prints. */
static bool subagent_id(const char *id)
{
	size_t i;

	if (strlen(id) != AGC_CLAUDE_AGENT_ID_LEN || id[0] != 'a')
		return false;
	for (i = 1; i < AGC_CLAUDE_AGENT_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

static int claude_id(const char *in, char *out)
{
	size_t i, n = in ? strlen(in) : 0;

	if (n == AGC_CLAUDE_AGENT_ID_LEN && (in[0] == 'a' || in[0] == 'A')) {
		for (i = 0; i < n; i++)
			out[i] = (char)(in[i] >= 'A' && in[i] <= 'F' ? in[i] - 'A' + 'a' : in[i]);
		out[n] = '\0';
		if (subagent_id(out))
			return 0;
	}
	return agc_id_uuid(in, out);
}

/* A session's UUID, whole (a sub-agent's id is looked up as a prefix) */
static bool claude_id_whole(const char *id)
{
	return strlen(id) == AGC_UUID_LEN;
}

static int claude_roots(agc_ctx *ctx, agc_rootset *rs)
{
	const char *cfg = agc_ctx_env(ctx, "CLAUDE_CONFIG_DIR"), *tmp;
	char *def = NULL;
	int rc;

	if (cfg) {
		rc = agc_rootset_add(rs, "config", cfg, "$CLAUDE_CONFIG_DIR");
	} else {
		def = agc_strfmt("%s/.claude", ctx->home);
		if (!def)
			return -1;
		rc = agc_rootset_add(rs, "config", def, "default");
		free(def);
	}
	if (rc < 0)
		return -1;
	/* Claude's own temp variable first, then the caller's temp dir (formats/claude-code.md) */
	tmp = agc_ctx_env(ctx, "CLAUDE_CODE_TMPDIR");
	return agc_rootset_add(rs, "temp", tmp ? tmp : ctx->tmp, tmp ? "CLAUDE_CODE_TMPDIR" : ctx->tmp_source) < 0
		       ? -1
		       : 0;
}

/* ---- ids and names ----------------------------------------------------------------------- */

bool agc_claude_subagent_file(const char *name, char out[AGC_CLAUDE_AGENT_ID_LEN + 1])
{
	size_t i;

	/* agent-<A>.jsonl with A = "a" + 16 lower-case hex (formats/claude-code.md 6): the only
	 * form observed; anything else is not taken for an id. */
	if (strncmp(name, "agent-a", 7) != 0 || strlen(name) != 6 + AGC_CLAUDE_AGENT_ID_LEN + 6 ||
	    strcmp(name + 6 + AGC_CLAUDE_AGENT_ID_LEN, ".jsonl") != 0)
		return false;
	for (i = 7; i < 6 + AGC_CLAUDE_AGENT_ID_LEN; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	memcpy(out, name + 6, AGC_CLAUDE_AGENT_ID_LEN);
	out[AGC_CLAUDE_AGENT_ID_LEN] = '\0';
	return true;
}

void agc_claude_scratch_name(const char *id, char out[13])
{
	struct sha256_ctx h;
	uint8_t d[SHA256_DIGEST_SIZE];
	uint64_t v = 0;
	int i;

	sha256_init(&h);
	sha256_update(&h, strlen(id), (const uint8_t *)id);
	sha256_digest(&h, sizeof(d), d);
	for (i = 0; i < 8; i++)
		v = (v << 8) | d[i];
	snprintf(out, 13, "%012llu", (unsigned long long)(v % 1000000000000ULL));
}

/* Decode one UTF-8 sequence; invalid bytes count as one unit each. Returns bytes used. */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
		*cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
		*cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
		return 3;
	}
	if ((s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
	    (s[3] & 0xc0) == 0x80) {
		*cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
		      ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
		return 4;
	}
	*cp = 0xfffd;
	return 1;
}

void agc_claude_project_key(const char *cwd, char *out, size_t n)
{
	const unsigned char *s = (const unsigned char *)cwd;
	size_t units = 0, o = 0;
	int32_t h = 0;

	while (*s) {
		uint32_t cp;
		size_t used = utf8_next(s, &cp);
		uint16_t u[2];
		int nu = 1, k;

		if (cp >= 0x10000) {
			cp -= 0x10000;
			u[0] = (uint16_t)(0xd800 + (cp >> 10));
			u[1] = (uint16_t)(0xdc00 + (cp & 0x3ff));
			nu = 2;
		} else {
			u[0] = (uint16_t)cp;
		}
		for (k = 0; k < nu; k++) {
			char c = (u[k] < 128 && ((u[k] >= 'a' && u[k] <= 'z') || (u[k] >= 'A' && u[k] <= 'Z') ||
						 (u[k] >= '0' && u[k] <= '9')))
					 ? (char)u[k]
					 : '-';

			/* Java String.hashCode, wrapped to signed 32 bits */
			h = (int32_t)((uint32_t)h * 31u + u[k]);
			if (units < 200 && o + 1 < n)
				out[o++] = c;
			units++;
		}
		s += used;
	}
	out[o] = '\0';
	if (units > 200) {
		uint64_t v = h < 0 ? (uint64_t)(-(int64_t)h) : (uint64_t)h;
		char b36[16];
		int bl = 0;

		do {
			int d = (int)(v % 36);

			b36[bl++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
			v /= 36;
		} while (v);
		if (o + 1 < n)
			out[o++] = '-';
		while (bl && o + 1 < n)
			out[o++] = b36[--bl];
		out[o] = '\0';
	}
}

/* ---- the registry ------------------------------------------------------------------------ */

static bool ci_contains(const char *hay, size_t len, const char *needle)
{
	size_t nl = strlen(needle), i;

	if (nl == 0 || len < nl)
		return false;
	for (i = 0; i + nl <= len; i++)
		if (strncasecmp(hay + i, needle, nl) == 0)
			return true;
	return false;
}

/* True when text has "sessionId" <spaces> : <spaces> "<id>" (id in any case). */
static bool raw_session_id_is(const char *text, size_t len, const char *id)
{
	static const char key[] = "\"sessionId\"";
	size_t kl = sizeof(key) - 1, il = strlen(id), i;

	for (i = 0; i + kl <= len; i++) {
		size_t k;

		if (memcmp(text + i, key, kl) != 0)
			continue;
		k = i + kl;
		while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r'))
			k++;
		if (k >= len || text[k] != ':')
			continue;
		k++;
		while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r'))
			k++;
		if (k + il + 2 <= len && text[k] == '"' && strncasecmp(text + k + 1, id, il) == 0 &&
		    text[k + 1 + il] == '"')
			return true;
	}
	return false;
}

static void host_pid_domain(char *out, size_t n)
{
	char mid[128] = "", ns[128] = "";
	FILE *f = fopen("/etc/machine-id", "re");
	ssize_t l;

	if (f) {
		if (fgets(mid, sizeof(mid), f))
			mid[strcspn(mid, "\r\n")] = '\0';
		fclose(f);
	}
	l = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
	if (l > 0)
		ns[l] = '\0';
	snprintf(out, n, "linux:%s:%s", mid, ns);
}

/* A recorded start time: plain decimal digits only, as /proc/<pid>/stat field 22 is written.
 * A sign, spaces, an exponent, a leading '+' or an empty string cannot be checked (R5): false. */
static bool tick_count(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (!s || !*s)
		return false;
	for (i = 0; s[i]; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned)(s[i] - '0');
		if (v > (~0ULL - d) / 10)
			return false; /* too large for any tick count */
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

int agc_claude_lstart_same(const char *procroot, const agc_proc *st, const char *text)
{
	int64_t secs, ms;
	const char *end;

	/* only through ps: /proc's start is ticks since boot, which local text never names */
	if (!agc_procps_on() || agc_procps_parse_lstart(text, &end, &secs) < 0 || *end ||
	    agc_proc_start_ms(procroot, st, &ms) < 0)
		return -1;
	return secs == ms / 1000;
}

agc_claude_reg agc_claude_registry_judge(const char *procroot, pid_t pid, const char *text,
					 size_t len, const char *id)
{
	json_t *j = agc_json_parse(text, len);
	const char *sid;
	json_t *ps, *sa, *dom;
	agc_claude_reg res = AGC_CLAUDE_REG_LIVE;
	agc_proc st;

	if (!j) {
		/* Unparseable (NaN and overflowing numbers are not JSON). A live pid whose text
		 * mentions the id anywhere counts as live: a wrong "in use" changes nothing. A dead
		 * pid's file goes with the purge only when its sessionId field names the id, so
		 * another session's file that merely mentions it is never taken (R4). */
		if (agc_proc_alive(pid))
			return ci_contains(text, len, id) ? AGC_CLAUDE_REG_LIVE : AGC_CLAUDE_REG_OTHER;
		return raw_session_id_is(text, len, id) ? AGC_CLAUDE_REG_STALE : AGC_CLAUDE_REG_OTHER;
	}
	sid = agc_json_str(j, "sessionId");
	if (!sid || strcasecmp(sid, id) != 0) {
		res = AGC_CLAUDE_REG_OTHER;
		goto out;
	}
	dom = json_object_get(j, "pidDomain");
	if (dom) {
		char mine[300];

		host_pid_domain(mine, sizeof(mine));
		/* Another pid namespace or machine (a container sharing the config dir): its pid
		 * means nothing here, alive or not, so the session counts as live; so does a
		 * pidDomain that is not even a string (R5). */
		if (!json_is_string(dom) || strcmp(json_string_value(dom), mine) != 0) {
			res = AGC_CLAUDE_REG_FOREIGN;
			goto out;
		}
	}
	if (!agc_proc_alive(pid)) {
		res = AGC_CLAUDE_REG_STALE;
		goto out;
	}
	if (agc_proc_stat(procroot, pid, &st) != 0)
		goto out; /* alive but unreadable: cannot check, live */
	ps = json_object_get(j, "procStart");
	if (ps) {
		unsigned long long v;
		char want[32];
		bool ok;

		/* Only plain decimal digits are a start time: "-1" read by strtoull is a huge
		 * number that matches nothing and made a live session stale. Anything else (a
		 * sign, spaces, an exponent, macOS date text, a bool, null) cannot be checked here
		 * and counts as live (R5). */
		if (json_is_integer(ps)) {
			snprintf(want, sizeof(want), "%lld", (long long)json_integer_value(ps));
			ok = tick_count(want, &v);
		} else {
			ok = json_is_string(ps) && tick_count(json_string_value(ps), &v);
		}
		if (ok) {
			/* through ps the kernel's start is seconds: within two of it, or live when
			 * that cannot be told */
			int same = agc_proc_start_is_ticks(procroot, &st, v);

			res = same == 0 ? AGC_CLAUDE_REG_STALE : AGC_CLAUDE_REG_LIVE;
		} else if (json_is_string(ps)) {
			/* macOS writes the start as ps's lstart text in UTC ("Wed Jul 29 14:40:53
			 * 2026"): where the kernel's start is read through ps, it is compared there,
			 * to the second */
			int same = agc_claude_lstart_same(procroot, &st, json_string_value(ps));

			if (same == 0)
				res = AGC_CLAUDE_REG_STALE;
		}
		goto out;
	}
	sa = json_object_get(j, "startedAt");
	if (json_is_number(sa)) {
		double ms = json_number_value(sa);
		int64_t smc;

		/* Only a finite positive number can be checked; anything else counts as live. */
		if (isfinite(ms) && ms > 0 && ms < 1e15 && agc_proc_start_ms(procroot, &st, &smc) == 0) {
			double started = (double)smc;

			res = fabs(ms - started) <= STARTED_AT_TOLERANCE_MS ? AGC_CLAUDE_REG_LIVE
									      : AGC_CLAUDE_REG_STALE;
		}
	}
out:
	json_decref(j);
	return res;
}

/* Command line of a pid for a holder entry. */
static char *pid_command(const char *procroot, pid_t pid)
{
	agc_buf b = AGC_BUF_INIT;
	size_t i;

	if (agc_proc_argv(procroot, pid, 4096, &b) != 0) {
		agc_buf_release(&b);
		return NULL;
	}
	for (i = 0; i < b.len; i++)
		if (b.ptr[i] == '\0')
			b.ptr[i] = ' ';
		else if ((unsigned char)b.ptr[i] < 0x20)
			b.ptr[i] = '?';
	while (b.len && b.ptr[b.len - 1] == ' ')
		b.ptr[--b.len] = '\0';
	return agc_buf_detach(&b, NULL);
}

static bool is_pid_json(const char *name, pid_t *pid)
{
	const char *p = name;
	long long v = 0;

	if (*p < '1' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > 0x7fffffff)
			return false;
		p++;
	}
	if (strcmp(p, ".json") != 0)
		return false;
	*pid = (pid_t)v;
	return true;
}

/* The pid-keyed .key files of a reused pid belong to the new process unless they carry the
 * registry's own procStart. */
static bool key_is_ours(int dfd, const char *name, const char *proc_start)
{
	agc_buf b = AGC_BUF_INIT_MAX(REGISTRY_MAX + 1);
	json_t *j;
	const char *ps;
	bool ours = false;

	if (!proc_start || agc_read_at(dfd, name, REGISTRY_MAX, &b) != 0) {
		agc_buf_release(&b);
		return false;
	}
	j = agc_json_parse(b.ptr, b.len);
	ps = agc_json_str(j, "procStart");
	ours = ps && strcmp(ps, proc_start) == 0;
	json_decref(j);
	agc_buf_release(&b);
	return ours;
}

/* The registry dir cannot be read (itself, or the config dir holding it): a live session may
 * be listed in what was not read, so the session cannot be shown to be free (R5). */
static int registry_unreadable(agc_plan *p, const char *unreadable, int err)
{
	char *abs = agc_plan_abspath(p->roots, R_CONFIG, "sessions");
	char *dir = agc_plan_abspath(p->roots, R_CONFIG, unreadable);
	char *why = abs ? agc_strfmt("cannot read the registry '%s': %s", abs, strerror(err)) : NULL;
	char *hint = abs && dir ? agc_strfmt("cannot read the registry '%s' (%s): a running session may be "
					     "listed there, so nothing was changed; make '%s' readable by "
					     "this user and run again",
					     abs, strerror(err), dir)
				: NULL;
	int rc = agc_holders_add(&p->holders, 0, AGC_WHY_REGISTRY, why ? why : "cannot read the registry",
				 abs, 0);

	if (rc == 0 && hint)
		rc = agc_plan_add_hint(p, abs, hint);
	free(hint);
	free(why);
	free(dir);
	free(abs);
	return rc;
}

/* The registry: live entries naming the session are holders; stale ones go with it, with the
 * files Claude keys by the same pid. A registry that cannot be read fully refuses the purge:
 * a live session may be listed in what was not read (R5). */
static int discover_registry(agc_plan *p, int cfg, const char *id)
{
	DIR *d = agc_dir_at(cfg, "sessions");
	struct dirent *e;
	agc_buf text = AGC_BUF_INIT_MAX(REGISTRY_MAX + 1);
	size_t seen = 0;
	int rc = 0;

	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return registry_unreadable(p, "sessions", errno);
	}
	while ((e = readdir(d))) {
		pid_t pid;
		char rel[300], ps_buf[64];
		const char *proc_start = NULL;
		agc_claude_reg j;
		bool alive;
		int rrc;

		if (++seen > DIR_ENTRIES_MAX) {
			rc = agc_holders_add(&p->holders, 0, AGC_WHY_REGISTRY,
					     "the registry 'sessions' has too many entries to read", NULL, 0);
			break;
		}
		if (!is_pid_json(e->d_name, &pid))
			continue;
		snprintf(rel, sizeof(rel), "sessions/%s", e->d_name);
		rrc = agc_read_at(dirfd(d), e->d_name, REGISTRY_MAX, &text);
		if (rrc == AGC_ENOTFOUND)
			continue;
		alive = agc_proc_alive(pid);
		if (rrc < 0) {
			/* Too big or unreadable: it may name this session, and if its pid runs that
			 * cannot be ruled out, so it counts as live; a dead pid's file stays. */
			agc_buf_clear(&text);
			j = alive ? AGC_CLAUDE_REG_LIVE : AGC_CLAUDE_REG_OTHER;
		} else {
			j = agc_claude_registry_judge(p->ctx->procroot, pid, agc_buf_cstr(&text), text.len, id);
		}
		if (j == AGC_CLAUDE_REG_LIVE || j == AGC_CLAUDE_REG_FOREIGN) {
			char *abs = agc_plan_abspath(p->roots, R_CONFIG, rel);
			/* another namespace's pid is some other process here: its argv says nothing */
			char *cmd = j == AGC_CLAUDE_REG_FOREIGN ? NULL : pid_command(p->ctx->procroot, pid);

			if (!abs)
				rc = -1;
			else
				rc = agc_holders_add(&p->holders, pid, AGC_WHY_REGISTRY,
						     j == AGC_CLAUDE_REG_FOREIGN ? "another machine or pid namespace"
						     : cmd ? cmd : "",
						     abs, 0);
			if (rc == 0 && j == AGC_CLAUDE_REG_FOREIGN) {
				char *hint = agc_strfmt(
					"'%s' was written on another machine or in another pid namespace "
					"(its pidDomain is not this one's): pid %ld cannot be checked from here; "
					"once you know that session is over, remove '%s' by hand",
					abs, (long)pid, abs);

				rc = hint ? agc_plan_add_hint(p, abs, hint) : -1;
				free(hint);
			}
			free(cmd);
			free(abs);
			p->meta.live = true;
		} else if (j == AGC_CLAUDE_REG_STALE) {
			DIR *d2;
			struct dirent *e2;
			char prefix[32], krel[300];
			size_t pl;
			json_t *jj = agc_json_parse(text.ptr ? text.ptr : "", text.len);

			if (agc_json_str(jj, "procStart")) {
				snprintf(ps_buf, sizeof(ps_buf), "%s", agc_json_str(jj, "procStart"));
				proc_start = ps_buf;
			}
			json_decref(jj);
			/* The pid-keyed files go before the registry file that leads to them, so a
			 * failed purge still finds them on a rerun (R6). */
			pl = (size_t)snprintf(prefix, sizeof(prefix), "%ld.", (long)pid);
			d2 = agc_dir_at(cfg, "sessions");
			while (d2 && (e2 = readdir(d2))) {
				size_t nl = strlen(e2->d_name);

				if (strncmp(e2->d_name, prefix, pl) != 0 || nl != pl + 64 + 4 ||
				    strcmp(e2->d_name + nl - 4, ".key") != 0)
					continue;
				/* A reused pid's key belongs to the process that has the pid now. */
				if (alive && !key_is_ours(dirfd(d2), e2->d_name, proc_start))
					continue;
				snprintf(krel, sizeof(krel), "sessions/%s", e2->d_name);
				if (agc_plan_add_art(p, R_CONFIG, krel, id, 0, NULL) < 0)
					rc = -1;
			}
			if (d2)
				closedir(d2);
			/* A live pid's socket is the new process's. */
			if (!alive) {
				snprintf(krel, sizeof(krel), "cc-socks/%ld.sock", (long)pid);
				if (agc_plan_add_art(p, R_TEMP, krel, id, AGC_ART_NO_GATE, NULL) < 0)
					rc = -1;
			}
			/* The registry file leads a rerun to its pid's files: like a record, it goes
			 * only once they are gone (R6). */
			if (rc == 0 && agc_plan_add_art(p, R_CONFIG, rel, id, AGC_ART_RECORD | AGC_ART_POINTER, NULL) < 0)
				rc = -1;
		}
		if (rc < 0)
			break;
	}
	closedir(d);
	agc_buf_release(&text);
	return rc;
}

/* ---- background jobs ------------------------------------------------------------------------- */

/* A session moved to the background (or started by `claude --bg`) runs as a job of Claude's
 * daemon, in jobs/<short>/ of the config dir: <short> is 8 hex digits (the first 8 of the
 * session id it was dispatched with), and its state.json names the session (sessionId) and
 * the one the job runs now (resumeSessionId). The job's files are the session's: its state
 * holds the prompt (intent), its tmp/ the session's scratch files. Claude's own delete of a
 * job (`claude rm`) also removes daemon/host-managed/<short> and daemon/gateway-routed/<short>
 * (formats/claude-code.md §2). */
#define JOB_STATE_MAX ((size_t)8 << 20) /* Claude's own reader caps state.json here */

/* The daemon's marks of a job, <dir>/<short> each. */
static const char *const job_marks[] = {"daemon/host-managed", "daemon/gateway-routed"};

static bool job_short(const char *name)
{
	size_t i;

	for (i = 0; i < 8; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return name[8] == '\0';
}

/* The sessions jobs/<name>/state.json names (jobs_fd: the jobs dir): sid and rsid, canonical
 * lower-case UUIDs, "" for one absent or not a UUID (rsid "" too when it is sid); st (NULL:
 * not wanted) is the file as it was read. Nothing is read through a link. 1 when read, 0 when
 * the job has no state.json, -1 when it cannot be read (agc_error_last says why). */
static int job_sessions(int jobs_fd, const char *name, char sid[AGC_ID_MAX], char rsid[AGC_ID_MAX],
			struct stat *st)
{
	agc_buf b = AGC_BUF_INIT_MAX(JOB_STATE_MAX + 1);
	int dfd = openat(jobs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc, fd;
	json_t *j;
	struct stat own;

	sid[0] = rsid[0] = '\0';
	if (dfd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
			return 0; /* not a job dir (a link to one is no job of this config dir) */
		return agc_error_errno(-1, errno, "cannot open 'jobs/%s'", name);
	}
	fd = agc_open_file_at(dfd, "state.json", 0, st ? st : &own);
	close(dfd);
	rc = fd < 0 ? fd : agc_read_fd(fd, "state.json", JOB_STATE_MAX, &b);
	if (rc == AGC_ENOTFOUND) {
		agc_buf_release(&b);
		return 0;
	}
	if (rc < 0) {
		agc_buf_release(&b);
		return -1;
	}
	j = agc_json_parse(b.ptr ? b.ptr : "", b.len);
	agc_buf_release(&b);
	if (!j)
		return agc_error_set(-1, "'jobs/%s/state.json' is not JSON", name);
	if (!agc_json_str(j, "sessionId") || agc_id_uuid(agc_json_str(j, "sessionId"), sid) != 0)
		sid[0] = '\0';
	if (!agc_json_str(j, "resumeSessionId") || agc_id_uuid(agc_json_str(j, "resumeSessionId"), rsid) != 0 ||
	    strcmp(rsid, sid) == 0)
		rsid[0] = '\0';
	json_decref(j);
	return 1;
}

/* Whether a running process is on the registry with session id (a session that has no
 * transcript yet, as a session just moved to the background). An unreadable registry counts
 * as one that has it. */
static bool registry_names_live(const agc_plan *p, int cfg, const char *id)
{
	DIR *d = agc_dir_at(cfg, "sessions");
	struct dirent *e;
	agc_buf text = AGC_BUF_INIT_MAX(REGISTRY_MAX + 1);
	size_t seen = 0;
	bool live = false;
	pid_t pid;

	if (!d)
		return errno != ENOENT && errno != ENOTDIR;
	while (!live && (e = readdir(d))) {
		agc_claude_reg j;

		if (++seen > DIR_ENTRIES_MAX) {
			live = true;
			break;
		}
		if (!is_pid_json(e->d_name, &pid))
			continue;
		if (agc_read_at(dirfd(d), e->d_name, REGISTRY_MAX, &text) != 0) {
			live = agc_proc_alive(pid); /* it may name the session */
			continue;
		}
		j = agc_claude_registry_judge(p->ctx->procroot, pid, agc_buf_cstr(&text), text.len, id);
		live = j == AGC_CLAUDE_REG_LIVE || j == AGC_CLAUDE_REG_FOREIGN;
	}
	closedir(d);
	agc_buf_release(&text);
	return live;
}

/* Whether projects/<any>/<id>.jsonl is there: the session has a transcript. */
static bool transcript_exists(int cfg, const char *id)
{
	DIR *d = agc_dir_at(cfg, "projects");
	struct dirent *e;
	char rel[AGC_ID_MAX + 320];
	struct stat st;
	size_t seen = 0;
	bool found = false;

	if (!d)
		return errno != ENOENT && errno != ENOTDIR; /* cannot tell: taken as there */
	while (!found && (e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		if (e->d_name[0] == '.' || strlen(e->d_name) > 255)
			continue;
		snprintf(rel, sizeof(rel), "%s/%s.jsonl", e->d_name, id);
		found = fstatat(dirfd(d), rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
	}
	closedir(d);
	return found;
}

/* The background jobs of session id: a job whose state.json names it goes with it, with the
 * daemon's marks for the job. A job that also names another session with a transcript is
 * that session's too: it stays, noted (residual), until that one goes as well. A job named
 * like the session's own (its first 8 digits) whose state cannot be read stays, noted. */
static int discover_jobs(agc_plan *p, int cfg, const char *id)
{
	int fd = openat(cfg, "jobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	size_t seen = 0, i;
	int rc = 0;

	if (fd < 0)
		return 0; /* none, or not a dir of this config dir: jobs/ itself is never followed */
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		char sid[AGC_ID_MAX], rsid[AGC_ID_MAX], rel[320];
		const char *other;
		struct stat st;
		int got;

		if (!job_short(e->d_name))
			continue;
		snprintf(rel, sizeof(rel), "jobs/%s", e->d_name);
		got = job_sessions(dirfd(d), e->d_name, sid, rsid, &st);
		if (got <= 0) {
			/* named like the session's own job: whose it is cannot be told, so it stays,
			 * said */
			if (strncmp(e->d_name, id, 8) == 0)
				rc = agc_plan_add_note(p, R_CONFIG, rel,
						       got < 0 ? agc_error_last()
							       : "a background job without state.json: whose it is "
								 "cannot be told");
			continue;
		}
		if (strcmp(sid, id) != 0 && strcmp(rsid, id) != 0)
			continue;
		other = strcmp(sid, id) == 0 ? rsid : sid;
		if (other[0] && (transcript_exists(cfg, other) || registry_names_live(p, cfg, other))) {
			char *why = agc_strfmt("the background job also names session %s, which is kept "
					       "or running: it goes with the last of the two",
					       other);

			rc = agc_plan_add_note(p, R_CONFIG, rel, why ? why : "names another session");
			free(why);
			continue;
		}
		/* state.json goes last: a half-removed job still reads as the session's; and one
		 * written again since it was read here may name another session: the job stays */
		got = agc_plan_add_art(p, R_CONFIG, rel, id, 0, "state.json");
		if (got < 0)
			rc = -1;
		else if (got > 0) {
			agc_artifact *a = &p->arts.v[p->arts.n - 1];

			a->flags |= AGC_ART_LAST_KEYED;
			agc_filekey_of(&st, &a->last_key);
		}
		for (i = 0; rc == 0 && i < sizeof(job_marks) / sizeof(job_marks[0]); i++) {
			snprintf(rel, sizeof(rel), "%s/%s", job_marks[i], e->d_name);
			if (agc_plan_add_art(p, R_CONFIG, rel, id, AGC_ART_NO_GATE, NULL) < 0)
				rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/* ---- live signals without a registry entry --------------------------------------------------- */

/* R5: every process Claude starts for a tool has the session in its environment, and a
 * detached one outlives Claude (formats/claude-code.md §5, item 5). */
static const char *const claude_env_names[] = {"CLAUDE_CODE_SESSION_ID", NULL};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* R5: Claude Code's own process: its executable argument's basename is `claude`, or a runtime
 * (node, bun) runs Claude Code's cli.js (the npm package @anthropic-ai/claude-code). */
static bool claude_agent_proc(const char *argv, size_t len)
{
	const char *end = argv + len, *base, *a;
	size_t n = strnlen(argv, len), bl;

	base = argv + n;
	while (base > argv && base[-1] != '/')
		base--;
	bl = (size_t)(argv + n - base);
	if (bl == 6 && memcmp(base, "claude", 6) == 0)
		return true;
	if (!((bl == 4 && memcmp(base, "node", 4) == 0) || (bl == 6 && memcmp(base, "nodejs", 6) == 0) ||
	      (bl == 3 && memcmp(base, "bun", 3) == 0)))
		return false;
	for (a = argv + n + 1; a < end; a += strnlen(a, (size_t)(end - a)) + 1) {
		size_t al = strnlen(a, (size_t)(end - a));

		if (ends_with(a, al, "/claude-code/cli.js"))
			return true;
	}
	return false;
}

/* R5: whether a live registry entry accounts for pid: sessions/<pid>.json names a session
 * and its process is the one running (a Claude process of another session is no holder of
 * this one). An entry that cannot be read or judged accounts for nothing. */
static bool accounted_in(int cfg, const char *procroot, pid_t pid)
{
	agc_buf text = AGC_BUF_INIT_MAX(REGISTRY_MAX + 1);
	char name[32], id[AGC_ID_MAX];
	const char *sid;
	bool yes = false;
	json_t *j;
	DIR *d;

	if (cfg < 0 || !(d = agc_dir_at(cfg, "sessions")))
		return false;
	snprintf(name, sizeof(name), "%ld.json", (long)pid);
	if (agc_read_at(dirfd(d), name, REGISTRY_MAX, &text) == 0) {
		j = agc_json_parse(text.ptr, text.len);
		sid = agc_json_str(j, "sessionId");
		yes = sid && agc_id_uuid(sid, id) == 0 &&
		      agc_claude_registry_judge(procroot, pid, text.ptr, text.len, id) == AGC_CLAUDE_REG_LIVE;
		json_decref(j);
	}
	closedir(d);
	agc_buf_release(&text);
	return yes;
}

static bool claude_accounted(const agc_plan *p, pid_t pid)
{
	return accounted_in(p->rootfd[R_CONFIG], p->ctx->procroot, pid);
}

/* The same for ls, from the config root (opened for the question: asked only of a Claude
 * process at the project of a session that changed lately). */
static bool claude_accounted_ls(agc_ctx *ctx, const agc_rootset *rs, pid_t pid)
{
	int cfg = rs->v[R_CONFIG].exists && rs->v[R_CONFIG].real ? agc_walk_open_root(rs->v[R_CONFIG].real) : -1;
	bool yes = cfg >= 0 && accounted_in(cfg, ctx->procroot, pid);

	if (cfg >= 0)
		close(cfg);
	return yes;
}

/* R5: older versions, nested sessions and SDK hosts write no registry entry; such a Claude is
 * seen only as a Claude process at the session's project while the transcript changes. Arm
 * that rule of the gate when the transcript (or the session dir, where sub-agents write)
 * changed in the last AGENT_CWD_WINDOW_MS, a time in the future included. */
static void arm_agent_cwd(agc_plan *p)
{
	int64_t newest = 0;
	bool any = false;
	struct stat st;
	size_t i;

	for (i = 0; i < p->arts.n; i++) {
		const agc_artifact *a = &p->arts.v[i];

		if (a->root != R_CONFIG || strncmp(a->rel, "projects/", 9) != 0)
			continue;
		if (!any || a->mtime_ms > newest)
			newest = a->mtime_ms;
		any = true;
	}
	if (!any || !p->meta.project || p->ctx->now_ms - newest > AGENT_CWD_WINDOW_MS)
		return;
	/* The project path comes from the transcript: it only picks which processes to look
	 * at, and is never a path anything is removed under. */
	if (stat(p->meta.project, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	p->agent_cwd.dev = st.st_dev;
	p->agent_cwd.ino = st.st_ino;
	p->has_agent_cwd = true;
}

/* ---- transcripts --------------------------------------------------------------------------- */

typedef struct head {
	char *cwd;
	char *title;
	char *prompt; /* the first prompt typed, for ls --grep when a name is the title */
	int64_t created_ms;
} head;

static void head_release(head *h)
{
	free(h->cwd);
	free(h->title);
	free(h->prompt);
	memset(h, 0, sizeof(*h));
}

/* A one-line title from a prompt or a name: its first non-empty line, C0 controls as spaces,
 * long enough for agc_title_cut to know whether it is longer than a title may be (the cut
 * itself is the same for every agent). NULL when nothing is left. */
static char *make_title(const char *s)
{
	char buf[TITLE_BYTES + 1];
	size_t o = 0;

	while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
		s++;
	for (; *s && *s != '\n' && o < TITLE_BYTES; s++)
		buf[o++] = (unsigned char)*s < 0x20 ? ' ' : *s;
	/* Stopped inside a UTF-8 sequence: drop its first bytes rather than cut it. */
	if (((unsigned char)*s & 0xc0) == 0x80) {
		while (o && ((unsigned char)buf[o - 1] & 0xc0) == 0x80)
			o--;
		if (o)
			o--;
	}
	while (o && buf[o - 1] == ' ')
		o--;
	buf[o] = '\0';
	return o ? agc_title_cut(buf) : NULL;
}

static const char *prompt_text(const json_t *msg)
{
	json_t *c = json_object_get(msg, "content");
	size_t i;
	json_t *el;

	if (json_is_string(c))
		return json_string_value(c);
	if (json_is_array(c))
		json_array_foreach(c, i, el)
		{
			const char *t = agc_json_str(el, "type");

			if (t && strcmp(t, "text") == 0 && agc_json_str(el, "text"))
				return agc_json_str(el, "text");
		}
	return NULL;
}

/* SPEC "Titles": what Claude writes into a user line for a command (/init, /rename: its
 * <command-name>, <command-message>, <command-args>) and for a local command's output
 * (<local-command-stdout>, <local-command-stderr>, <local-command-caveat>) is no prompt a
 * person typed. */
static bool command_text(const char *t)
{
	while (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t')
		t++;
	return strncmp(t, "<command-", 9) == 0 || strncmp(t, "<local-command-", 15) == 0;
}

/* The name a user gave the session in a custom-title line (/rename), as a title, or NULL. */
static char *custom_title(const json_t *j)
{
	const char *t = agc_json_str(j, "type"), *v;

	if (!t || strcmp(t, "custom-title") != 0)
		return NULL;
	if (!(v = agc_json_str(j, "customTitle")) && !(v = agc_json_str(j, "title")))
		return NULL;
	return make_title(v);
}

/* The last custom-title line in the bounded tail of the transcript (from offset from on, at
 * most TAIL_BYTES): /rename appends one, and Claude writes its session's name again near the
 * end when it resumes one, so a listing finds it there without reading the whole file (R8).
 * Only lines that hold the word are parsed. NULL when there is none. */
static char *tail_title(int fd, uint64_t size, uint64_t from)
{
	uint64_t start = size > TAIL_BYTES ? size - TAIL_BYTES : 0;
	char *buf, *p, *end, *found = NULL;
	ssize_t n;

	if (start < from)
		start = from;
	if (size <= start)
		return NULL;
	buf = malloc((size_t)(size - start) + 1);
	if (!buf)
		return NULL;
	n = pread(fd, buf, (size_t)(size - start), (off_t)start);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	p = buf;
	end = buf + n;
	/* a tail that starts inside a line starts at the next one */
	if (start > from && start > 0) {
		char before;

		if (pread(fd, &before, 1, (off_t)start - 1) != 1 || before != '\n') {
			p = memchr(p, '\n', (size_t)(end - p));
			p = p ? p + 1 : end;
		}
	}
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		/* a last line without its end may still be being written: it is not read */
		if (!nl)
			break;
		if (len && memmem(p, len, "custom-title", 12)) {
			json_t *j = agc_json_parse(p, len);
			char *t = custom_title(j);

			json_decref(j);
			if (t) {
				free(found);
				found = t;
			}
		}
		p += len + 1;
	}
	free(buf);
	return found;
}

/* Read title, cwd and creation time from the first lines of a transcript, and the name a user
 * gave it from its last lines, never the whole: a FIFO or a device is never opened, and at
 * most HEAD_BYTES plus one line, then TAIL_BYTES, are read even when the head is one line
 * without an end (R8). SPEC "Titles": the user's name (the last custom-title line) first,
 * else the first prompt a person typed: not a meta line, not a command or its output, not a
 * sub-agent's. */
/* <S>/custom-title.json beside the transcript <S>.jsonl (formats §2: the session's title; its
 * fields are not established, so a string under "customTitle" or "title" is taken). A name in
 * the transcript wins: this is read only when it has none. Never through a link (R2), and only
 * a small regular file (R8). */
static char *file_title(int dirfd_, const char *name)
{
	char rel[4096];
	size_t n = strlen(name);
	const char *leaf, *v;
	agc_buf b = AGC_BUF_INIT_MAX(4096 + 1);
	char *t = NULL;
	json_t *j;
	int dfd, err;

	if (n < 7 || strcmp(name + n - 6, ".jsonl") != 0 ||
	    (size_t)snprintf(rel, sizeof(rel), "%.*s/custom-title.json", (int)(n - 6), name) >= sizeof(rel))
		return NULL;
	if (agc_walk_parent(dirfd_, rel, &dfd, &leaf, &err) != AGC_WALK_OK)
		return NULL;
	if (agc_read_at(dfd, leaf, 4096, &b) == 0 && (j = agc_json_parse(b.ptr, b.len))) {
		if ((v = agc_json_str(j, "customTitle")) || (v = agc_json_str(j, "title")))
			t = make_title(v);
		json_decref(j);
	}
	close(dfd);
	agc_buf_release(&b);
	return t;
}

/* One line of the head, parsed with jansson: what jscan was not sure of. */
static void head_line_json(head *h, const char *line, size_t len, char **custom)
{
	json_t *j = agc_json_parse(line, len);
	const char *ty, *v;
	char *t;

	if (!j)
		return;
	if (!h->cwd && (v = agc_json_str(j, "cwd")))
		h->cwd = agc_strdup(v);
	if (!h->created_ms && (v = agc_json_str(j, "timestamp")))
		agc_time_parse_iso(v, &h->created_ms);
	ty = agc_json_str(j, "type");
	if ((t = custom_title(j))) {
		free(*custom);
		*custom = t;
	}
	if (ty && !h->title && strcmp(ty, "user") == 0 && !json_is_true(json_object_get(j, "isMeta")) &&
	    !json_is_true(json_object_get(j, "isSidechain"))) {
		const char *pt = prompt_text(json_object_get(j, "message"));

		if (pt && !command_text(pt)) {
			h->title = make_title(pt);
			/* the first prompt a person typed, for --grep, whatever the title */
			h->prompt = make_title(pt);
		}
	}
	json_decref(j);
}

/* The text of a user message's content as prompt_text finds it, malloc'd, or NULL; *ask when
 * jscan cannot tell. */
static char *prompt_span(agc_jspan msg, bool *ask)
{
	static const char *const mkeys[] = {"content"};
	static const char *const ekeys[] = {"type", "text"};
	agc_jspan c, el, f[2];
	size_t it = 0;

	if (agc_jscan_members(msg, mkeys, 1, &c)) {
		*ask = true;
		return NULL;
	}
	if (agc_jscan_is_str(c))
		return agc_jscan_str(c);
	while (agc_jscan_next(c, &it, &el)) {
		if (agc_jscan_members(el, ekeys, 2, f)) {
			*ask = true;
			return NULL;
		}
		if (agc_jscan_str_is(f[0], "text") && agc_jscan_is_str(f[1]))
			return agc_jscan_str(f[1]);
	}
	return NULL;
}

/* One line of the head: what head_line_json takes from it, found by jscan without a tree; a
 * line jscan is not sure of goes to jansson, so the answer is the same either way. */
static void head_line(head *h, const char *line, size_t len, char **custom)
{
	enum { K_CWD, K_TS, K_TYPE, K_META, K_SIDE, K_MSG, K_CTITLE, K_TITLE, K_N };
	static const char *const keys[K_N] = {"cwd", "timestamp", "type", "isMeta", "isSidechain",
					      "message", "customTitle", "title"};
	agc_jspan v[K_N];
	char *s, *t;
	bool ask = false;

	if (agc_jscan_line(line, len, keys, K_N, v)) {
		head_line_json(h, line, len, custom);
		return;
	}
	/* a user line's prompt first: only it can make jscan unsure after the check */
	if (!h->title && agc_jscan_str_is(v[K_TYPE], "user") && !agc_jscan_is_true(v[K_META]) &&
	    !agc_jscan_is_true(v[K_SIDE])) {
		char *pt = prompt_span(v[K_MSG], &ask);

		if (ask) {
			head_line_json(h, line, len, custom);
			return;
		}
		if (pt && !command_text(pt)) {
			h->title = make_title(pt);
			h->prompt = make_title(pt);
		}
		free(pt);
	}
	if (!h->cwd && agc_jscan_is_str(v[K_CWD]))
		h->cwd = agc_jscan_str(v[K_CWD]);
	if (!h->created_ms && agc_jscan_is_str(v[K_TS]) && (s = agc_jscan_str(v[K_TS]))) {
		agc_time_parse_iso(s, &h->created_ms);
		free(s);
	}
	/* custom_title: "customTitle", else "title", when each is a string */
	if (agc_jscan_str_is(v[K_TYPE], "custom-title") &&
	    (s = agc_jscan_str(agc_jscan_is_str(v[K_CTITLE]) ? v[K_CTITLE] : v[K_TITLE]))) {
		if ((t = make_title(s))) {
			free(*custom);
			*custom = t;
		}
		free(s);
	}
}

/* seen: the listing's lstat of name; has_dir: whether custom-title.json may be in the session's
 * dir <S> beside the transcript (only there can it be): <S> is a dir, and its walk either saw
 * the name or could not see everything. */
static void read_head(int dirfd_, const char *name, const struct stat *seen, bool has_dir, head *h)
{
	struct stat st;
	int fd = agc_open_file_seen(dirfd_, name, seen, &st);
	agc_lines lr;
	const char *line;
	size_t len;
	bool toolong;
	int n = 0, rc = 0;
	char *custom = NULL, *t;

	memset(h, 0, sizeof(*h));
	if (fd < 0)
		return;
	agc_lines_init(&lr, fd, HEAD_LINE_MAX);
	agc_lines_limit(&lr, HEAD_BYTES + HEAD_LINE_MAX);
	while (n++ < HEAD_LINES && lr.offset < HEAD_BYTES &&
	       (rc = agc_lines_next(&lr, &line, &len, &toolong)) == 1) {
		if (toolong || !len)
			continue;
		/* once the rest is known, only a name given later in the head is worth parsing */
		if (h->cwd && h->title && h->created_ms && !memmem(line, len, "custom-title", 12))
			continue;
		head_line(h, line, len, &custom);
	}
	/* The user's name may come later than the head: it is looked for in the tail, and the
	 * last one wins (a second /rename). All of the file was read when the reader ended. */
	if (rc == 1 || lr.capped) {
		t = tail_title(fd, (uint64_t)st.st_size, lr.offset);
		if (t) {
			free(custom);
			custom = t;
		}
	}
	if (!custom && has_dir)
		custom = file_title(dirfd_, name);
	if (custom) {
		free(h->title);
		h->title = custom;
	}
	agc_lines_release(&lr);
	close(fd);
}

/* ---- history.jsonl ----------------------------------------------------------------------- */

/* history.jsonl's lock: proper-lockfile's, a "history.jsonl.lock" dir refreshed while held and
 * stale after 10 s (formats/claude-code.md); taken in 4 tries 100 ms apart, and a hold longer
 * than 5 s is treated as lost (it may have been broken as stale meanwhile). */
static const agc_lock_spec history_lock = {
	.kind = AGC_LOCK_MKDIR,
	.suffix = ".lock",
	.stale_ms = 10000,
	.hold_ms = 5000,
	.tries = 4,
	.interval_ms = 100,
};

/* A history line belongs to the session when its sessionId is one of ids (any case). A line
 * that does not parse never matches: malformed input never widens a deletion (R8). */
static bool history_match(const char *line, size_t len, char *const *ids, size_t n_ids)
{
	return agc_json_line_keyed("sessionId", line, len, ids, n_ids);
}

/* True when the line holds the text of one of ids (any case). */
static bool names_ids(const char *line, size_t len, char *const *ids, size_t n_ids)
{
	size_t i;

	for (i = 0; i < n_ids; i++)
		if (agc_mem_icase(line, len, ids[i], strlen(ids[i])))
			return true;
	return false;
}

/* True when the line is not a JSON object (cut off mid-write, say). */
static bool history_malformed(const char *line, size_t len)
{
	json_t *j = agc_json_parse(line, len);
	bool bad = !json_is_object(j);

	json_decref(j);
	return bad;
}

static bool paste_hash_ok(const char *h)
{
	size_t n = strlen(h), i;

	if (n < 8 || n > 64)
		return false;
	for (i = 0; i < n; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return false;
	return true;
}

typedef struct strset {
	char **v;
	size_t n, cap;
} strset;

static void strset_release(strset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int strset_add(strset *s, const char *v)
{
	char **slot;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], v) == 0)
			return 0;
	slot = AGC_ARRAY_PUSH(s, 100000);
	if (!slot)
		return -1;
	*slot = agc_strdup(v);
	return *slot ? 0 : -1;
}

#define DIR_RACY_NS ((int64_t)50 * 1000 * 1000) /* a dir listing kept for a run: see dir_get */
#define DIR_COARSE_NS ((int64_t)3 * 1000 * 1000 * 1000) /* the same, times of whole seconds */

/* ---- per-run state (agc_adapter.run_new): history.jsonl, todos/ and telemetry/ read once -- */

/* A line of history.jsonl as the run read it. */
typedef struct hline {
	size_t off, len, full;  /* full: with its newline */
} hline;

/* Where a text that could be an id, or a paste hash, appears: a window of a run of the
 * characters they are made of, lower case. */
typedef struct hwin {
	char k[65];
	size_t line;
} hwin;

/* The ids of the index: a UUID (36 characters, dashes in it) and a sub-agent's (17, no dash). */
#define WIN_UUID 36
#define WIN_AGENT 17

typedef struct winset {
	bool built;
	struct { hwin *v; size_t n, cap; } w;  /* sorted by (k, line) */
} winset;

typedef struct hist_state {
	bool ok;
	agc_filekey key;
	agc_buf text;
	struct { hline *v; size_t n, cap; } lines;
	winset ids;         /* windows of WIN_UUID and WIN_AGENT characters */
	winset hash[65];    /* windows of n hex characters, made when a hash of n is looked up */
} hist_state;

typedef struct dir_state {
	bool ok;
	bool pass; /* made during the run state's residual pass (claude_run.pass) */
	bool watched; /* mark: the run's watch tells whether the dir changed since the listing */
	agc_dirmark mark;
	agc_filekey key;
	struct { char **v; size_t n, cap; } names;   /* in readdir order */
	struct dent { const char *name; size_t pos; } *sorted; /* the names, by name */
} dir_state;

/* A dir and the listings of its dirs (subs[i] is that of top.names.v[i]). */
typedef struct tree_state {
	dir_state top;
	dir_state *subs;
	size_t nsubs;
} tree_state;

typedef struct claude_run {
	/* R7: a state is new after every removal of a stretch, and its first discoveries are the
	 * stretch's residuals: while only they have used it, a listing it made is used as is by
	 * the others (one fresh pass: no dir changed by the removals is listed once per id). The
	 * first discovery of another kind ends the pass; then a listing is kept only by dir_get's
	 * rule. */
	bool pass;
	hist_state hist;
	dir_state todos, telemetry;
	/* projects/ and the temp root's claude-<uid>/ with each of their dirs: a discovery looks
	 * up the names it would probe for, and probes only those listed. Listing every project
	 * dir costs more than the failing probes of one id (a purge of one id that listed them:
	 * 978 getdents against 182), so the discoveries of the first id a state meets probe
	 * (run_lists), and the listings serve the ids after it. */
	tree_state projects, temp;
	/* what changed in the dirs listed (dirwatch.h): a listing it marked is used while the
	 * watch has told nothing of its dir, with no stat of it and no wait for its times to age;
	 * NULL, or a dir it cannot mark, and dir_get's rule decides */
	agc_dirwatch *watch;
	char first[AGC_ID_MAX];
} claude_run;

static void hist_release(hist_state *h)
{
	size_t i;

	agc_buf_release(&h->text);
	free(h->lines.v);
	free(h->ids.w.v);
	for (i = 0; i < sizeof(h->hash) / sizeof(h->hash[0]); i++)
		free(h->hash[i].w.v);
	memset(h, 0, sizeof(*h));
}

static void dir_release(dir_state *d)
{
	size_t i;

	for (i = 0; i < d->names.n; i++)
		free(d->names.v[i]);
	free(d->names.v);
	free(d->sorted);
	memset(d, 0, sizeof(*d));
}

static void subs_release(tree_state *t)
{
	size_t i;

	for (i = 0; i < t->nsubs; i++)
		dir_release(&t->subs[i]);
	free(t->subs);
	t->subs = NULL;
	t->nsubs = 0;
}

static void *claude_run_new(void)
{
	claude_run *r = calloc(1, sizeof(*r));

	if (!r) {
		agc_error_oom();
		return NULL;
	}
	r->pass = true;
	r->watch = agc_dirwatch_new();
	return r;
}

static void claude_run_free(void *run)
{
	claude_run *r = run;

	if (!r)
		return;
	hist_release(&r->hist);
	dir_release(&r->todos);
	dir_release(&r->telemetry);
	subs_release(&r->projects);
	dir_release(&r->projects.top);
	subs_release(&r->temp);
	dir_release(&r->temp.top);
	agc_dirwatch_free(r->watch);
	free(r);
}

/* A tree's listings that its watch keeps (dir_state.watched); the others go. */
static void tree_renew(tree_state *t)
{
	size_t i;

	if (!t->top.watched) {
		subs_release(t);
		dir_release(&t->top);
		return;
	}
	for (i = 0; i < t->nsubs; i++)
		if (!t->subs[i].watched)
			dir_release(&t->subs[i]);
}

/* After the removals of a stretch and the rewrite of history.jsonl (agc_adapter.run_renew):
 * history.jsonl is read again; a listing stays only while its watch has told nothing of its
 * dir (checked at its next use, as always), so what the removals changed is listed anew and
 * the rest is not. A new residual pass begins. */
static void claude_run_renew(void *run)
{
	claude_run *r = run;

	hist_release(&r->hist);
	if (!r->todos.watched)
		dir_release(&r->todos);
	if (!r->telemetry.watched)
		dir_release(&r->telemetry);
	tree_renew(&r->projects);
	tree_renew(&r->temp);
	r->pass = true;
}

static int hwin_cmp(const void *a, const void *b)
{
	const hwin *x = a, *y = b;
	int c = strcmp(x->k, y->k);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* 1: a hex digit, 2: a dash, else 0 */
static const unsigned char win_cls[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['-'] = 2,
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Calls each(window, L, ud) for every window of L characters (lower case) of the runs of
 * hex characters (and dashes, when dash) in text: every place a text of L such characters
 * appears, in any case. Returns what each returns when not 0. */
static int each_window(const char *t, size_t n, size_t L, bool dash,
		       int (*each)(const char *w, size_t L, void *ud), void *ud)
{
	const unsigned char *u = (const unsigned char *)t, *ue = u + n;
	unsigned char ok = dash ? 3 : 1;
	char win[65];

	if (L > 64)
		return 0;
	while (u < ue) {
		const unsigned char *r0;
		size_t rl, w, c;
		int rc;

		if (!(win_cls[*u] & ok)) {
			u++;
			continue;
		}
		for (r0 = u; u < ue && (win_cls[*u] & ok); u++)
			;
		rl = (size_t)(u - r0);
		for (w = 0; w + L <= rl; w++) {
			for (c = 0; c < L; c++)
				win[c] = (char)(r0[w + c] | 0x20); /* hex digits and '-' */
			win[L] = '\0';
			if ((rc = each(win, L, ud)) != 0)
				return rc;
		}
	}
	return 0;
}

static int in_set(const char *w, size_t L, void *ud)
{
	return agc_hset_has(ud, w, L);
}

/* Whether line names one of the ids going earlier in the run (agc_plan.going): its windows
 * looked up in their set where every one is of hex digits and dashes and of one length, else
 * each id looked for. */
static bool names_going(const agc_plan *p, const char *line, size_t len)
{
	if (!p->n_going)
		return false;
	if (p->going_lc && p->going_hexlen)
		return each_window(line, len, p->going_hexlen, true, in_set, (void *)p->going_lc) != 0;
	return names_ids(line, len, p->going, p->n_going);
}

/* each_window for both id forms in one pass: windows of WIN_UUID characters of the runs of
 * hex characters and dashes, and of WIN_AGENT of the runs of hex characters alone. */
static int each_id_window(const char *t, size_t n, int (*each)(const char *w, size_t L, void *ud), void *ud)
{
	const unsigned char *u = (const unsigned char *)t, *ue = u + n;
	char win[65];

	while (u < ue) {
		const unsigned char *r0, *r1, *h0;
		size_t rl, w, c;
		int rc;

		if (!win_cls[*u]) {
			u++;
			continue;
		}
		for (r0 = u; u < ue && win_cls[*u]; u++)
			;
		r1 = u;
		rl = (size_t)(r1 - r0);
		if (rl < WIN_AGENT)
			continue;
		for (w = 0; w + WIN_UUID <= rl; w++) {
			for (c = 0; c < WIN_UUID; c++)
				win[c] = (char)(r0[w + c] | 0x20); /* hex digits and '-' */
			win[WIN_UUID] = '\0';
			if ((rc = each(win, WIN_UUID, ud)) != 0)
				return rc;
		}
		for (h0 = r0; h0 < r1;) {
			const unsigned char *h1;

			if (*h0 == '-') {
				h0++;
				continue;
			}
			for (h1 = h0; h1 < r1 && *h1 != '-'; h1++)
				;
			for (w = 0; w + WIN_AGENT <= (size_t)(h1 - h0); w++) {
				for (c = 0; c < WIN_AGENT; c++)
					win[c] = (char)(h0[w + c] | 0x20);
				win[WIN_AGENT] = '\0';
				if ((rc = each(win, WIN_AGENT, ud)) != 0)
					return rc;
			}
			h0 = h1;
		}
	}
	return 0;
}

typedef struct win_add {
	winset *ws;
	size_t line;
	bool uuid_only_dash;
} win_add;

static int win_push(const char *w, size_t L, void *ud)
{
	win_add *wa = ud;
	hwin *e;

	/* a sub-agent id has no dash */
	if (L == WIN_AGENT && memchr(w, '-', L))
		return 0;
	e = AGC_ARRAY_PUSH(&wa->ws->w, (size_t)1 << 26);
	if (!e)
		return -1;
	memcpy(e->k, w, L + 1);
	e->line = wa->line;
	return 0;
}

/* The windows of L characters of every line (ids: both id lengths, dashes in runs). */
static int winset_build(hist_state *h, winset *ws, size_t L, bool ids)
{
	const char *base = agc_buf_cstr(&h->text);
	size_t i;

	for (i = 0; i < h->lines.n; i++) {
		win_add wa = {ws, i, false};
		const hline *l = &h->lines.v[i];

		if (ids) {
			if (each_id_window(base + l->off, l->len, win_push, &wa) < 0)
				return -1;
		} else if (each_window(base + l->off, l->len, L, false, win_push, &wa) < 0) {
			return -1;
		}
	}
	if (ws->w.n)
		qsort(ws->w.v, ws->w.n, sizeof(*ws->w.v), hwin_cmp);
	ws->built = true;
	return 0;
}

/* The lines in which key (lower case) appears in any case, appended to out; ws built. */
static int winset_lines(const winset *ws, const char *key, void *out_arr)
{
	struct { size_t *v; size_t n, cap; } *out = out_arr;
	size_t a = 0, b = ws->w.n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (strcmp(ws->w.v[m].k, key) < 0)
			a = m + 1;
		else
			b = m;
	}
	for (; a < ws->w.n && strcmp(ws->w.v[a].k, key) == 0; a++) {
		size_t *s = AGC_ARRAY_PUSH(out, (size_t)1 << 26);

		if (!s)
			return -1;
		*s = ws->w.v[a].line;
	}
	return 0;
}

/* Whether id has the form the id windows are made for (lower case: canonical ids are). */
static bool id_windowed(const char *id)
{
	size_t n = strlen(id), i;

	if (n != WIN_UUID && n != WIN_AGENT)
		return false;
	for (i = 0; i < n; i++)
		if (!(is_hex(id[i]) || (n == WIN_UUID && id[i] == '-')) || isupper((unsigned char)id[i]))
			return false;
	return true;
}

/* Index history.jsonl (in h->text): its lines, and where each text of an id's form appears. */
static int hist_index(hist_state *h)
{
	const char *base = agc_buf_cstr(&h->text), *s = base, *end = base + h->text.len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		hline *l = AGC_ARRAY_PUSH(&h->lines, (size_t)1 << 26);

		if (!l)
			return -1;
		l->off = (size_t)(s - base);
		l->len = len;
		l->full = len + (nl ? 1 : 0);
		s += l->full;
	}
	return winset_build(h, &h->ids, 0, true);
}

/* The run's history.jsonl, read from fd (stat st) unless what the run holds is this file as
 * it is now. NULL (error set) when it cannot be read. */
static hist_state *hist_get(claude_run *run, int fd, const struct stat *st)
{
	hist_state *h = &run->hist;
	agc_filekey k;

	agc_filekey_of(st, &k);
	if (h->ok && agc_filekey_same(&h->key, &k)) {
		close(fd);
		return h;
	}
	hist_release(h);
	h->text = (agc_buf)AGC_BUF_INIT_MAX(((size_t)1 << 30) + 1);
	if (agc_read_fd(fd, "history.jsonl", (size_t)1 << 30, &h->text) < 0)
		return NULL;
	if (hist_index(h) < 0) {
		hist_release(h);
		return NULL;
	}
	h->key = k;
	/* kept only when what was read is the file as it was looked at (Claude appends: a
	 * change shows in its size, a rewrite by rename in its inode) */
	h->ok = h->text.len == (size_t)st->st_size;
	return h;
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* discover_history from the run's index: the same lines, notes and paste files, in the same
 * order, as the passes over the file give, looking only at the lines in which one of the
 * session's ids, or one of its paste hashes, appears (every other line is neither the
 * session's nor names it). */
static int history_from_run(agc_plan *p, agc_lineset *ls, hist_state *h)
{
	const char *base = agc_buf_cstr(&h->text);
	struct { size_t *v; size_t n, cap; } cand = {0}, mine = {0}, refs = {0};
	strset hashes = {0};
	bool long_noted = false, bad_noted = false, all = false, *going = NULL;
	size_t i, j;
	int rc = -1;

	for (i = 0; i < p->ids.n && !all; i++) {
		if (!id_windowed(p->ids.v[i]))
			all = true; /* not of a form the index knows: every line looked at */
		else if (winset_lines(&h->ids, p->ids.v[i], &cand) < 0)
			goto out;
	}
	if (all) {
		cand.n = 0;
		for (i = 0; i < h->lines.n; i++) {
			size_t *s = AGC_ARRAY_PUSH(&cand, (size_t)1 << 26);

			if (!s)
				goto out;
			*s = i;
		}
	}
	if (cand.n)
		qsort(cand.v, cand.n, sizeof(*cand.v), size_cmp);
	/* pass 1, over the lines that name one of the ids */
	for (j = 0; j < cand.n; j++) {
		const hline *l = &h->lines.v[cand.v[j]];
		const char *s = base + l->off;
		size_t len = l->len;
		bool isobj = false, hit = false;
		json_t *jl = NULL;

		if (j && cand.v[j] == cand.v[j - 1])
			continue;
		if (!names_ids(s, len, p->ids.v, p->ids.n))
			continue;
		if (len > AGC_LINE_MAX) {
			/* too long to parse, so never removed; said once (R8) */
			if (!long_noted && agc_plan_add_note_kind(p, R_CONFIG, "history.jsonl", "lines",
								  "error: a line too long to check names the session") < 0)
				goto out;
			long_noted = true;
			continue;
		}
		jl = agc_json_parse(s, len);
		isobj = json_is_object(jl);
		if (isobj) {
			const char *sid = agc_json_str(jl, "sessionId");

			for (i = 0; sid && i < p->ids.n && !hit; i++)
				hit = strcasecmp(sid, p->ids.v[i]) == 0;
		}
		if (!hit && !isobj && !bad_noted) {
			/* never removed, still there after the purge: residual (R7, R8) */
			if (agc_plan_add_note_kind(p, R_CONFIG, "history.jsonl", "lines",
						   "error: a malformed line names the session; not removed") < 0) {
				json_decref(jl);
				goto out;
			}
			bad_noted = true;
		}
		if (hit) {
			json_t *pc = json_object_get(jl, "pastedContents"), *v;
			const char *k;
			size_t *m = AGC_ARRAY_PUSH(&mine, (size_t)1 << 26);

			if (!m) {
				json_decref(jl);
				goto out;
			}
			*m = cand.v[j];
			ls->count++;
			ls->bytes += l->full;
			json_object_foreach(pc, k, v)
			{
				const char *hh = agc_json_str(v, "contentHash");

				if (hh && paste_hash_ok(hh))
					strset_add(&hashes, hh);
			}
		}
		json_decref(jl);
	}
	/* the lines in which one of the hashes appears, in file order */
	for (i = 0; i < hashes.n; i++) {
		size_t L = strlen(hashes.v[i]);

		if (!h->hash[L].built && winset_build(h, &h->hash[L], L, false) < 0)
			goto out;
		if (winset_lines(&h->hash[L], hashes.v[i], &refs) < 0)
			goto out;
	}
	if (refs.n)
		qsort(refs.v, refs.n, sizeof(*refs.v), size_cmp);
	if (hashes.n && !(going = calloc(hashes.n, sizeof(*going))))
		goto out;
	/* pass 2: a paste file any other line mentions stays (content-addressed, shared); one
	 * that only lines naming ids going earlier in the run mention goes at the end of the
	 * stretch, once their lines went and nothing else names it (AGC_ART_DEFERRED): one at a
	 * time, those lines would be gone by its turn */
	for (j = 0; j < refs.n && hashes.n; j++) {
		const hline *l = &h->lines.v[refs.v[j]];
		const char *s = base + l->off;
		bool by_going = false;

		if (j && refs.v[j] == refs.v[j - 1])
			continue;
		if (mine.n && bsearch(&refs.v[j], mine.v, mine.n, sizeof(*mine.v), size_cmp))
			continue;
		by_going = names_going(p, s, l->len);
		for (i = 0; i < hashes.n; i++) {
			if (!agc_mem_icase(s, l->len, hashes.v[i], strlen(hashes.v[i])))
				continue;
			if (by_going) {
				going[i] = true;
				continue;
			}
			free(hashes.v[i]);
			hashes.v[i] = hashes.v[--hashes.n];
			going[i] = going[hashes.n];
			i--;
		}
	}
	for (i = 0; i < hashes.n; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "paste-cache/%s.txt", hashes.v[i]);
		if (agc_plan_add_art(p, R_CONFIG, rel, p->id, going[i] ? AGC_ART_DEFERRED : 0, NULL) < 0)
			goto out;
	}
	rc = 0;
out:
	strset_release(&hashes);
	free(going);
	free(cand.v);
	free(mine.v);
	free(refs.v);
	return rc;
}

/* agc_adapter.unnamed: a paste file (paste-cache/<hash>.txt) deferred by history_from_run
 * may go once no line of history.jsonl, as it is now, mentions its hash; a history.jsonl
 * that is not there names nothing, one that cannot be read keeps it. */
static int claude_unnamed(agc_plan *p, const agc_artifact *a, void *run)
{
	struct { size_t *v; size_t n, cap; } refs = {0};
	char key[72];
	const char *leaf = strncmp(a->rel, "paste-cache/", 12) == 0 ? a->rel + 12 : NULL;
	size_t L = leaf ? strcspn(leaf, ".") : 0, i;
	int cfg = agc_plan_rootfd(p, R_CONFIG), fd, rc;
	struct stat st;
	hist_state *h;

	if (!run || !leaf || L >= sizeof(key) || strcmp(leaf + L, ".txt") != 0 || cfg < 0 || a->root != R_CONFIG)
		return 0;
	for (i = 0; i < L; i++)
		key[i] = (char)tolower((unsigned char)leaf[i]);
	key[L] = '\0';
	if (!paste_hash_ok(key))
		return 0;
	fd = agc_open_file_at(cfg, "history.jsonl", 0, &st);
	if (fd == AGC_ENOTFOUND)
		return 1;
	if (fd < 0)
		return 0;
	if (!(h = hist_get(run, fd, &st))) {
		hist_release(&((claude_run *)run)->hist);
		return 0;
	}
	if (!h->hash[L].built && winset_build(h, &h->hash[L], L, false) < 0)
		return -1;
	rc = winset_lines(&h->hash[L], key, &refs);
	free(refs.v);
	return rc < 0 ? -1 : refs.n == 0;
}

static int case_cmp(const void *a, const void *b)
{
	return strcasecmp(*(char *const *)a, *(char *const *)b);
}

typedef struct win_find {
	char *const *ids;
	size_t n;
	bool windowed;  /* every id of a form the windows find */
} win_find;

static void *history_which_new(char *const *ids, size_t n_ids)
{
	win_find *f = calloc(1, sizeof(*f));
	size_t i;

	if (!f) {
		agc_error_oom();
		return NULL;
	}
	f->ids = ids;
	f->n = n_ids;
	f->windowed = true;
	for (i = 0; i < n_ids && f->windowed; i++)
		f->windowed = id_windowed(ids[i]);
	return f;
}

static int win_is_id(const char *w, size_t L, void *ud)
{
	const win_find *f = ud;
	const char *key = w;

	(void)L;
	return bsearch(&key, f->ids, f->n, sizeof(*f->ids), case_cmp) ? 1 : 0;
}

/* history_match for many ids sorted by strcasecmp: the line looked at only when one of the
 * ids appears in it (as history_match has it), then its sessionId parsed once and looked up.
 * Returns its index in ids, or -1; a line that does not parse never matches (R8). */
static long history_which(void *m, const char *line, size_t len)
{
	const win_find *f = m;
	json_t *j;
	const char *sid;
	char *const *hit;
	long at = -1;
	bool named;

	if (!f->n)
		return -1;
	if (f->windowed)
		named = each_id_window(line, len, win_is_id, m) == 1;
	else
		named = names_ids(line, len, f->ids, f->n);
	if (!named)
		return -1;
	j = agc_json_parse(line, len);
	if (!j)
		return -1;
	sid = agc_json_str(j, "sessionId");
	hit = sid ? bsearch(&sid, f->ids, f->n, sizeof(*f->ids), case_cmp) : NULL;
	if (hit)
		at = (long)(hit - f->ids);
	json_decref(j);
	return at;
}

/* Whether the run's listings of projects/ and the temp root serve plan p's discovery: not
 * for the first id its state meets (claude_run.first), whose discoveries probe. */
static bool run_lists(const agc_plan *p)
{
	claude_run *run = p->run;

	if (!run)
		return false;
	if (!run->first[0]) {
		snprintf(run->first, sizeof(run->first), "%s", p->id);
		return false;
	}
	return strcmp(run->first, p->id) != 0;
}

/* Whether plan p's discovery is one of its run state's residual pass (claude_run.pass). */
static bool run_pass(const agc_plan *p)
{
	return p->run && p->again && ((const claude_run *)p->run)->pass;
}

/* The names of dir (todos/, telemetry/) as the run listed them, unless the dir changed. */
static int dent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

/* The listing ds of the dir open as d, kept or made anew (*fresh then, when not NULL). A
 * listing the run's watch marked is kept exactly while the watch told nothing of its dir;
 * another by the rule below (its times, the residual pass). */
static dir_state *dir_get(dir_state *ds, DIR *d, bool pass, agc_dirwatch *w, bool *fresh)
{
	struct timespec now;
	int64_t began;
	struct stat st;
	struct dirent *e;
	agc_filekey k;
	size_t seen = 0, i;

	if (fresh)
		*fresh = false;
	if (ds->watched && agc_dirwatch_same(w, &ds->mark))
		return ds;
	if (fstat(dirfd(d), &st) < 0)
		return NULL;
	agc_filekey_of(&st, &k);
	if (!ds->watched && (ds->ok || (pass && ds->pass)) && agc_filekey_same(&ds->key, &k))
		return ds;
	dir_release(ds);
	if (fresh)
		*fresh = true;
	/* A listing stands for probes only where it is as good as one (R2): names compared as
	 * the file system compares them, and the dir searchable (a probe of a dir that may be
	 * listed but not searched fails, and that failure is the caller's to report). */
	if (!agc_scan_names_exact(dirfd(d)) || fstatat(dirfd(d), ".", &st, 0) < 0)
		return NULL;
	/* marked before it is read: a change from here on makes the listing stale */
	ds->watched = agc_dirwatch_mark(w, dirfd(d), &ds->mark);
	clock_gettime(CLOCK_REALTIME, &now);
	began = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	for (;;) {
		char **slot;

		errno = 0;
		if (!(e = readdir(d)))
			break;
		/* a listing cut short (a bound, an error below) would hide what it did not reach */
		if (++seen > DIR_ENTRIES_MAX) {
			dir_release(ds);
			return NULL;
		}
		slot = AGC_ARRAY_PUSH(&ds->names, DIR_ENTRIES_MAX);
		if (!slot || !(*slot = agc_strdup(e->d_name))) {
			dir_release(ds);
			return NULL;
		}
	}
	if (errno) {
		dir_release(ds);
		return NULL;
	}
	ds->sorted = malloc((ds->names.n ? ds->names.n : 1) * sizeof(*ds->sorted));
	if (!ds->sorted) {
		dir_release(ds);
		agc_error_oom();
		return NULL;
	}
	for (i = 0; i < ds->names.n; i++) {
		ds->sorted[i].name = ds->names.v[i];
		ds->sorted[i].pos = i;
	}
	if (ds->names.n)
		qsort(ds->sorted, ds->names.n, sizeof(*ds->sorted), dent_cmp);
	ds->key = k;
	/* A dir's times have the kernel's coarse clock, or the file system's own grain (whole
	 * seconds on ext4 with small inodes, two on vfat): a change in the same tick as the last
	 * one leaves them as they were. A listing is kept only when the dir last changed well
	 * before it began, by more than that grain, so any later change shows in its times. */
	{
		int64_t newest = k.mtime_ns > k.ctime_ns ? k.mtime_ns : k.ctime_ns, racy = DIR_RACY_NS;

		if (k.mtime_ns % 1000000000 == 0 && k.ctime_ns % 1000000000 == 0)
			racy = DIR_COARSE_NS;
		else if (k.mtime_ns % 1000000 == 0 && k.ctime_ns % 1000000 == 0)
			racy = DIR_COARSE_NS / 3;
		ds->ok = newest < began - racy;
	}
	ds->pass = pass;
	return ds;
}

/* Count the session's history lines and find the paste-cache files that only they reference. */
static int discover_history(agc_plan *p, int cfg)
{
	agc_buf in = AGC_BUF_INIT_MAX(((size_t)1 << 30) + 1);
	agc_lineset *ls;
	strset hashes = {0};
	struct stat st;
	const char *s, *end;
	bool long_noted = false, bad_noted = false;
	size_t i;
	int rc;

	if (fstatat(cfg, "history.jsonl", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	ls = AGC_ARRAY_PUSH(&p->lines, 16);
	if (!ls)
		return -1;
	ls->root = R_CONFIG;
	ls->rel = agc_strdup("history.jsonl");
	ls->lock = &history_lock;
	ls->match = history_match;
	ls->which_new = history_which_new;
	ls->which = history_which;
	ls->which_free = free;
	ls->dev = st.st_dev;
	ls->ino = st.st_ino;
	if (!ls->rel)
		return -1;
	/* A linked history.jsonl is read through the link (discovery only, read-only) so the
	 * session stays findable; the rewrite itself refuses the link (R2). */
	{
		/* R8: a FIFO or a device there is never opened, only reported. */
		struct stat fst;
		int fd = agc_open_file_at(cfg, "history.jsonl", S_ISLNK(st.st_mode) ? AGC_OPEN_FOLLOW : 0, &fst);

		if (fd == AGC_ENOTFOUND) {
			rc = agc_error_errno(-1, ENOENT, "cannot open 'history.jsonl'");
		} else if (fd >= 0 && p->run) {
			/* a run of many ids: the file read once, while it stays as it was */
			hist_state *h = hist_get(p->run, fd, &fst);

			if (h)
				return history_from_run(p, ls, h);
			hist_release(&((claude_run *)p->run)->hist);
			rc = -1;
		} else {
			rc = fd < 0 ? -1 : agc_read_fd(fd, "history.jsonl", (size_t)1 << 30, &in);
		}
	}
	if (rc < 0) {
		char *why = agc_strfmt("error: %s", agc_error_last());

		agc_plan_add_note(p, R_CONFIG, "history.jsonl", why ? why : "error");
		free(why);
		agc_buf_release(&in);
		return 0;
	}
	s = agc_buf_cstr(&in);
	end = s + in.len;
	/* Pass 1: the session's lines and the paste hashes they reference. */
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		bool mine = len <= AGC_LINE_MAX && history_match(s, len, p->ids.v, p->ids.n);

		if (len > AGC_LINE_MAX && !long_noted && names_ids(s, len, p->ids.v, p->ids.n)) {
			/* Too long to parse, so never removed; if it names the session, say so (R8). */
			if (agc_plan_add_note_kind(p, R_CONFIG, "history.jsonl", "lines",
						   "error: a line too long to check names the session") < 0) {
				strset_release(&hashes);
				agc_buf_release(&in);
				return -1;
			}
			long_noted = true;
		}
		/* A line that does not parse never matches (R4), so it is never removed, but one
		 * naming the session is still there after the purge: residual, and the session
		 * stays findable (R7, R8). */
		if (len <= AGC_LINE_MAX && !mine && !bad_noted && names_ids(s, len, p->ids.v, p->ids.n) &&
		    history_malformed(s, len)) {
			if (agc_plan_add_note_kind(p, R_CONFIG, "history.jsonl", "lines",
						   "error: a malformed line names the session; not removed") < 0) {
				strset_release(&hashes);
				agc_buf_release(&in);
				return -1;
			}
			bad_noted = true;
		}
		if (mine) {
			json_t *j = agc_json_parse(s, len);
			json_t *pc = json_object_get(j, "pastedContents"), *v;
			const char *k;

			ls->count++;
			ls->bytes += len + (nl ? 1 : 0);
			json_object_foreach(pc, k, v)
			{
				const char *h = agc_json_str(v, "contentHash");

				if (h && paste_hash_ok(h))
					strset_add(&hashes, h);
			}
			json_decref(j);
		}
		s += len + (nl ? 1 : 0);
	}
	/* Pass 2: a paste file any other line mentions stays (content-addressed, shared). */
	s = agc_buf_cstr(&in);
	while (s < end && hashes.n) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (!(len <= AGC_LINE_MAX && history_match(s, len, p->ids.v, p->ids.n))) {
			for (i = 0; i < hashes.n; i++) {
				if (agc_mem_icase(s, len, hashes.v[i], strlen(hashes.v[i]))) {
					/* kept for a line of a session purged earlier in the run: one at a
					 * time, that line would be gone by now */
					if (names_going(p, s, len))
						p->batch_conflict = true;
					free(hashes.v[i]);
					hashes.v[i] = hashes.v[--hashes.n];
					i--;
				}
			}
		}
		s += len + (nl ? 1 : 0);
	}
	for (i = 0; i < hashes.n; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "paste-cache/%s.txt", hashes.v[i]);
		if (agc_plan_add_art(p, R_CONFIG, rel, p->id, 0, NULL) < 0) {
			strset_release(&hashes);
			agc_buf_release(&in);
			return -1;
		}
	}
	strset_release(&hashes);
	agc_buf_release(&in);
	return 0;
}

/* ---- discovery ----------------------------------------------------------------------------- */

/* Files in dir whose names start with prefix (and end with suffix, when given). */
static int add_listed(agc_plan *p, size_t root, const char *dir, const dir_state *ds, const char *prefix,
		      const char *suffix, unsigned flags);

static int add_prefixed(agc_plan *p, size_t root, int rootfd, const char *dir, const char *prefix,
			const char *suffix, unsigned flags)
{
	DIR *d = agc_plan_dir(p, root, rootfd, dir);
	struct dirent *e;
	size_t pl = strlen(prefix), sl = suffix ? strlen(suffix) : 0, seen = 0;
	char rel[4096];
	int rc = 0;

	if (!d)
		return 0;
	/* a run of many ids: todos/ and telemetry/ listed once, while they stay as they were */
	if (p->run && root == R_CONFIG && (strcmp(dir, "todos") == 0 || strcmp(dir, "telemetry") == 0)) {
		claude_run *run = p->run;
		dir_state *ds = dir_get(strcmp(dir, "todos") == 0 ? &run->todos : &run->telemetry, d, run_pass(p),
					run->watch, NULL);

		if (ds) {
			rc = add_listed(p, root, dir, ds, prefix, suffix, flags);
			closedir(d);
			return rc;
		}
		rewinddir(d);
	}
	while ((e = agc_plan_readdir(p, root, dir, d)) && seen++ < DIR_ENTRIES_MAX) {
		size_t nl = strlen(e->d_name);

		if (nl <= pl + sl || strncmp(e->d_name, prefix, pl) != 0)
			continue;
		if (sl && strcmp(e->d_name + nl - sl, suffix) != 0)
			continue;
		if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", dir, e->d_name) >= sizeof(rel))
			continue;
		if (agc_plan_add_art(p, root, rel, p->id, flags, NULL) < 0) {
			rc = -1;
			break;
		}
	}
	closedir(d);
	return rc;
}

/* Sub-agents (agent-<A>.jsonl under <S>/subagents/, nested dirs included) are the session's
 * children: their ids are reported with it and matched by the gate too. */
static void collect_subagents(agc_plan *p, int cfg, const char *rel, int depth)
{
	DIR *d;
	struct dirent *e;
	size_t seen = 0;

	if (depth > 8 || !(d = agc_dir_at(cfg, rel)))
		return;
	while ((e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		struct stat st;
		char sub[4096];

		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name) < sizeof(sub))
				collect_subagents(p, cfg, sub, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			char aid[AGC_CLAUDE_AGENT_ID_LEN + 1];

			/* Only agent-a<16 hex>.jsonl names a sub-agent (R1): any other name is a file
			 * of the parent's dir, removed with it, and never becomes an id the gate or
			 * the history rewrite would match (R4). */
			if (agc_claude_subagent_file(e->d_name, aid))
				agc_plan_add_id(p, aid);
		}
	}
	closedir(d);
}

/* Find agent-<A>.jsonl below the sub-agents dir rel (nested dirs included, as ls walks them);
 * the path of the first found goes to out. Returns true when found. */
static bool find_subagent(int cfg, const char *rel, const char *name, int depth, char *out, size_t n)
{
	DIR *d;
	struct dirent *e;
	size_t seen = 0;
	bool found = false;
	int fd, err;

	/* every component with O_NOFOLLOW (R2): a sub-agent is found only in real dirs of a real
	 * session dir, never through a link (its parent's purge would not take it) */
	if (depth > 8 || agc_walk_open_dir(cfg, rel, &fd, &err) != AGC_WALK_OK)
		return false;
	if (!(d = fdopendir(fd))) {
		agc_short_note(errno);
		close(fd);
		return false;
	}
	while (!found && (e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		struct stat st;
		char sub[4096];

		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name) >= sizeof(sub))
			continue;
		if (S_ISDIR(st.st_mode))
			found = find_subagent(cfg, sub, name, depth + 1, out, n);
		else if (S_ISREG(st.st_mode) && strcmp(e->d_name, name) == 0 &&
			 (size_t)snprintf(out, n, "%s", sub) < n)
			found = true;
	}
	closedir(d);
	return found;
}

/* A sub-agent A is part of its parent session S: its transcript lives only in
 * projects/<K>/<S>/subagents/ and goes with S (SPEC "Relations"). Discovery finds it there and
 * reports its own files, with S as its parent (plan->part_of): the engine then takes its
 * liveness from S's gate and never purges it alone. Links are not followed on the way (K and S
 * must be real dirs, and subagents/ is opened one component at a time with O_NOFOLLOW), so a
 * sub-agent is only ever found in a real dir of its parent (R2). */
static int discover_subagent(agc_plan *p, int cfg, const char *id)
{
	DIR *d = agc_plan_dir(p, R_CONFIG, cfg, "projects");
	struct dirent *e;
	size_t seen = 0;
	char name[64], rel[4096], found[4096] = "";
	const char *parent = NULL;
	head h;

	if (!d)
		return 0;
	snprintf(name, sizeof(name), "agent-%s.jsonl", id);
	/* every session dir is looked at: the same sub-agent id under two sessions (a copied
	 * dir) cannot be told apart, and is refused rather than taken for one of them */
	while ((e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		DIR *pd;
		struct dirent *f;
		size_t pseen = 0;

		struct stat st;

		if (e->d_name[0] == '.' || !agc_id_path_safe(e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(rel, sizeof(rel), "projects/%s", e->d_name);
		if (!(pd = agc_dir_at(cfg, rel)))
			continue;
		while ((f = readdir(pd)) && pseen++ < DIR_ENTRIES_MAX) {
			char sub[4096], other[4096];

			if (strlen(f->d_name) != AGC_UUID_LEN || !agc_id_is_uuid(f->d_name, AGC_UUID_LEN) ||
			    fstatat(dirfd(pd), f->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
				continue;
			snprintf(sub, sizeof(sub), "projects/%s/%s/subagents", e->d_name, f->d_name);
			if (!find_subagent(cfg, sub, name, 0, *found ? other : found, sizeof(found)))
				continue;
			if (parent) {
				agc_error_set(-1, "the sub-agent id '%s' is in two sessions, '%s' and '%s': "
						  "name the session instead", id, parent, f->d_name);
				closedir(pd);
				closedir(d);
				return -1;
			}
			memcpy(p->part_of, f->d_name, AGC_UUID_LEN + 1);
			parent = p->part_of;
		}
		closedir(pd);
	}
	closedir(d);
	if (!parent)
		return 0;
	/* the transcript is the sub-agent's record; its meta file sits beside it */
	if (agc_plan_add_art(p, R_CONFIG, found, id, AGC_ART_RECORD, NULL) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "%.*s.meta.json", (int)(strlen(found) - 6), found);
	if (agc_plan_add_art(p, R_CONFIG, rel, id, 0, NULL) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "todos/%s-agent-%s.json", parent, id);
	if (agc_plan_add_art(p, R_CONFIG, rel, id, 0, NULL) < 0)
		return -1;
	free(p->meta.parent);
	if (!(p->meta.parent = agc_strdup(parent)))
		return -1;
	/* its lines carry the parent's cwd; a title is what the sub-agent was asked */
	read_head(cfg, found, NULL, true, &h);
	p->meta.project = h.cwd;
	p->meta.title = h.title;
	p->meta.created_ms = h.created_ms;
	h.cwd = h.title = NULL;
	head_release(&h);
	return 0;
}

/* Whether name is in the listing ds. */
static bool dir_has(const dir_state *ds, const char *name)
{
	struct dent k = {name, 0};

	return ds->names.n && bsearch(&k, ds->sorted, ds->names.n, sizeof(*ds->sorted), dent_cmp);
}

/* The first of the listing's sorted names not before prefix. */
static size_t dir_lower(const dir_state *ds, const char *prefix)
{
	size_t a = 0, b = ds->names.n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (strcmp(ds->sorted[m].name, prefix) < 0)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Whether a name in the listing ds begins with prefix: every name of a session in a project
 * or temp key dir begins with its id, so a dir without one has nothing of it. */
static bool dir_has_prefix(const dir_state *ds, const char *prefix)
{
	size_t a = dir_lower(ds, prefix);

	return a < ds->names.n && strncmp(ds->sorted[a].name, prefix, strlen(prefix)) == 0;
}

/* A run of many ids: the dir rel beneath rootfd (projects/, the temp root's claude-<uid>/) as
 * the run listed it, while it stays as it was (dir_get); the listings of its dirs go when it is
 * listed again. */
static dir_state *tree_top(tree_state *t, int rootfd, const char *rel, bool pass, agc_dirwatch *w)
{
	dir_state *ds;
	bool fresh;
	DIR *d;

	if (t->top.watched && agc_dirwatch_same(w, &t->top.mark) && t->nsubs == t->top.names.n)
		return &t->top;
	if (!(d = agc_dir_at(rootfd, rel)))
		return NULL;
	ds = dir_get(&t->top, d, pass, w, &fresh);
	closedir(d);
	/* subs[i] is the listing of names.v[i]: they stay with the listing they were made for */
	if (ds && !fresh && t->nsubs == ds->names.n)
		return ds;
	subs_release(t);
	if (!ds || !ds->names.n)
		return ds;
	if (!(t->subs = calloc(ds->names.n, sizeof(*t->subs))))
		return NULL;
	t->nsubs = ds->names.n;
	return ds;
}

/* The listing of the dir key of the top dir open at fd (top its listing, from tree_top) as the
 * run made it, while the dir stays as it was; NULL when there is none to use. */
static dir_state *tree_sub(tree_state *t, const dir_state *top, int fd, const char *key, bool pass,
			   agc_dirwatch *w)
{
	struct dent k = {key, 0}, *hit;
	struct stat st;
	agc_filekey now;
	dir_state *sd;
	DIR *kd;

	if (!top || !t->nsubs)
		return NULL;
	hit = bsearch(&k, top->sorted, top->names.n, sizeof(*top->sorted), dent_cmp);
	if (!hit)
		return NULL;
	/* as the probes reach it: through a link there (discovery looks through it read-only);
	 * a listing still good is told by one stat, without opening the dir */
	sd = &t->subs[hit->pos];
	if (sd->watched && agc_dirwatch_same(w, &sd->mark))
		return sd;
	if (!sd->watched && (sd->ok || (pass && sd->pass)) && fstatat(fd, key, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
		agc_filekey_of(&st, &now);
		if (agc_filekey_same(&sd->key, &now))
			return sd;
	}
	if (!(kd = agc_dir_at(fd, key)))
		return NULL;
	sd = dir_get(sd, kd, pass, w, NULL);
	closedir(kd);
	return sd;
}

/* add_prefixed's files of dir taken from its listing ds, in the order a listing gives them. */
static int add_listed(agc_plan *p, size_t root, const char *dir, const dir_state *ds, const char *prefix,
		      const char *suffix, unsigned flags)
{
	struct { size_t *v; size_t n, cap; } at = {0};
	size_t pl = strlen(prefix), sl = suffix ? strlen(suffix) : 0, a = dir_lower(ds, prefix), k;
	char rel[4096];
	int rc = 0;

	for (; rc == 0 && a < ds->names.n && strncmp(ds->sorted[a].name, prefix, pl) == 0; a++) {
		size_t *s = AGC_ARRAY_PUSH(&at, DIR_ENTRIES_MAX);

		if (!s)
			rc = -1;
		else
			*s = ds->sorted[a].pos;
	}
	if (at.n)
		qsort(at.v, at.n, sizeof(*at.v), size_cmp);
	for (k = 0; rc == 0 && k < at.n; k++) {
		const char *name = ds->names.v[at.v[k]];
		size_t nl = strlen(name);

		if (nl <= pl + sl || (sl && strcmp(name + nl - sl, suffix) != 0))
			continue;
		if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", dir, name) >= sizeof(rel))
			continue;
		if (agc_plan_add_art(p, root, rel, p->id, flags, NULL) < 0)
			rc = -1;
	}
	free(at.v);
	return rc;
}

/* The next name of a top dir (projects/, the temp root's claude-<uid>/) open as d: from the
 * run's listing top while there is one (*at counts through it), else read from d. */
static const char *top_next(const dir_state *top, DIR *d, size_t *at)
{
	struct dirent *e;

	if (top)
		return *at < top->names.n ? top->names.v[(*at)++] : NULL;
	if (!(e = readdir(d)) || (*at)++ >= DIR_ENTRIES_MAX)
		return NULL;
	return e->d_name;
}

static int discover_projects(agc_plan *p, int cfg, const char *id)
{
	static const char *const side[] = {".ccr-tip.json", ".precompact.json", ".desktop-released.json"};
	DIR *d = agc_plan_dir(p, R_CONFIG, cfg, "projects");
	const char *name;
	size_t seen = 0, i;
	char rel[4096], prefix[128];
	struct stat st;
	dir_state *plist = NULL;
	int rc = 0;

	if (!d)
		return 0;
	if (run_lists(p))
		plist = tree_top(&((claude_run *)p->run)->projects, cfg, "projects", run_pass(p),
				 ((claude_run *)p->run)->watch);
	/* the run's listing of projects/, while it stands, is read instead of the dir */
	while ((name = top_next(plist, d, &seen))) {
		bool has = false;
		int got;

		dir_state *ls = NULL;
		char nm[AGC_ID_MAX + 32];

		if (name[0] == '.' || !agc_id_path_safe(name))
			continue;
		/* a run of many ids: only what the dir's listing has is looked at (each probe of
		 * what is not there is a walk to a failing stat), and a dir without a name of the
		 * id not at all; every hit is still reached and checked by agc_plan_add_art as a
		 * probe would be */
		if (p->run)
			ls = tree_sub(&((claude_run *)p->run)->projects, plist, dirfd(d), name, run_pass(p),
				      ((claude_run *)p->run)->watch);
		if (ls && !dir_has_prefix(ls, id))
			continue;
		/* The transcript is the record discovery keys on: it goes last (R6). */
		snprintf(rel, sizeof(rel), "projects/%s/%s.jsonl", name, id);
		snprintf(nm, sizeof(nm), "%s.jsonl", id);
		got = ls && !dir_has(ls, nm) ? 0 : agc_plan_add_art(p, R_CONFIG, rel, id, AGC_ART_RECORD, NULL);
		if (got < 0)
			goto fail;
		if (got > 0) {
			has = true;
			if (!p->meta.project) {
				head h;
				char tname[600];

				/* from the projects/ open as d: no open that could fail (a shortage of
				 * descriptors) and leave the project unknown, which would leave the gate
				 * without its rule for a Claude process working there (R5) */
				snprintf(tname, sizeof(tname), "%s/%s.jsonl", name, id);
				read_head(dirfd(d), tname, NULL, true, &h);
				p->meta.project = h.cwd;
				p->meta.title = h.title;
				p->meta.created_ms = h.created_ms;
				h.cwd = h.title = NULL;
				head_release(&h);
			}
		}
		snprintf(rel, sizeof(rel), "projects/%s/%s", name, id);
		got = ls && !dir_has(ls, id) ? 0 : agc_plan_add_art(p, R_CONFIG, rel, id, 0, NULL);
		if (got < 0)
			goto fail;
		has |= got > 0;
		if (got > 0) {
			char sub[4096 + 16];

			snprintf(sub, sizeof(sub), "%s/subagents", rel);
			collect_subagents(p, cfg, sub, 0);
		}
		/* The gate looks at side files only next to a transcript or session dir; a purge
		 * looks in every project dir, so nothing of the session is missed. */
		for (i = 0; i < sizeof(side) / sizeof(side[0]) && (has || !p->gate_only); i++) {
			snprintf(rel, sizeof(rel), "projects/%s/%s%s", name, id, side[i]);
			snprintf(nm, sizeof(nm), "%s%s", id, side[i]);
			if ((!ls || dir_has(ls, nm)) && agc_plan_add_art(p, R_CONFIG, rel, id, 0, NULL) < 0)
				goto fail;
		}
		/* the names only a listing finds: next to a transcript or session dir, and in
		 * every project dir where the run's listing makes that cheap (what a purge left
		 * when the dir could not be read is found by the rerun) */
		if (has || (ls && !p->gate_only)) {
			snprintf(rel, sizeof(rel), "projects/%s", name);
			snprintf(prefix, sizeof(prefix), "%s.jsonl.compact.tmp.", id);
			if ((ls ? add_listed(p, R_CONFIG, rel, ls, prefix, NULL, 0)
				: add_prefixed(p, R_CONFIG, cfg, rel, prefix, NULL, 0)) < 0)
				goto fail;
			snprintf(prefix, sizeof(prefix), "%s.jsonl.superseded-", id);
			if ((ls ? add_listed(p, R_CONFIG, rel, ls, prefix, NULL, 0)
				: add_prefixed(p, R_CONFIG, cfg, rel, prefix, NULL, 0)) < 0)
				goto fail;
		}
	}
	closedir(d);
	(void)st;
	return rc;
fail:
	closedir(d);
	return -1;
}

static int discover_temp(agc_plan *p, int tmp, uid_t uid, const char *id)
{
	char top[64], rel[4096], scratch[13];
	dir_state *keys = NULL;
	DIR *d;
	const char *name;
	size_t seen = 0;

	snprintf(top, sizeof(top), "claude-%lu", (unsigned long)uid);
	d = agc_plan_dir(p, R_TEMP, tmp, top);
	if (!d)
		return 0;
	/* a run of many ids: the key dirs' listings, as for projects/ (discover_projects) */
	if (run_lists(p))
		keys = tree_top(&((claude_run *)p->run)->temp, tmp, top, run_pass(p), ((claude_run *)p->run)->watch);
	/* Every key dir of the temp root: a symlinked one is looked through (read-only) so that
	 * what lies behind it is found and reported, never removed (R2). */
	while ((name = top_next(keys, d, &seen))) {
		dir_state *ls = NULL;

		if (name[0] == '.' || !agc_id_path_safe(name))
			continue;
		if (p->run)
			ls = tree_sub(&((claude_run *)p->run)->temp, keys, dirfd(d), name, run_pass(p),
				      ((claude_run *)p->run)->watch);
		if (ls && !dir_has(ls, id))
			continue;
		snprintf(rel, sizeof(rel), "%s/%s/%s", top, name, id);
		if (agc_plan_add_art(p, R_TEMP, rel, id, 0, NULL) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	agc_claude_scratch_name(id, scratch);
	snprintf(rel, sizeof(rel), "%s/s/%s", top, scratch);
	return agc_plan_add_art(p, R_TEMP, rel, id, 0, NULL) < 0 ? -1 : 0;
}

static int claude_discover(agc_plan *p)
{
	const char *id = p->id;
	int cfg = agc_plan_rootfd(p, R_CONFIG), tmp = agc_plan_rootfd(p, R_TEMP);
	char rel[256], target[512], prefix[128];
	ssize_t tl;

	if (p->holders_only) {
		/* the registry alone (a sub-agent has no entry of its own) */
		if (cfg >= 0)
			return subagent_id(id) ? 0 : discover_registry(p, cfg, id);
		if (agc_plan_root_err(p, R_CONFIG))
			return registry_unreadable(p, NULL, agc_plan_root_err(p, R_CONFIG));
		return 0;
	}
	if (p->run && !p->again)
		((claude_run *)p->run)->pass = false; /* the residual pass, if any, is over */
	/* what the kernel told of the dirs listed, up to this discovery */
	if (p->run)
		agc_dirwatch_poll(((claude_run *)p->run)->watch);

	if (cfg >= 0 && subagent_id(id))
		return discover_subagent(p, cfg, id);
	if (cfg >= 0) {
		static const char *const dirs[] = {"file-history", "session-env", "tasks", "image-cache", "uploads"};
		size_t i;

		if (discover_projects(p, cfg, id) < 0)
			return -1;
		arm_agent_cwd(p);
		for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			snprintf(rel, sizeof(rel), "%s/%s", dirs[i], id);
			if (agc_plan_add_art(p, R_CONFIG, rel, id, 0, NULL) < 0)
				return -1;
		}
		/* Background jobs: state.json goes last, so a half-removed job still reads as one. */
		snprintf(rel, sizeof(rel), "jobs/%s", id);
		if (agc_plan_add_art(p, R_CONFIG, rel, id, 0, "state.json") < 0)
			return -1;
		if (discover_jobs(p, cfg, id) < 0)
			return -1;
		snprintf(rel, sizeof(rel), "debug/%s.txt", id);
		if (agc_plan_add_art(p, R_CONFIG, rel, id, 0, NULL) < 0)
			return -1;
		/* debug/latest goes when it points at this session's log. */
		tl = readlinkat(cfg, "debug/latest", target, sizeof(target) - 1);
		if (tl > 0) {
			const char *base;

			target[tl] = '\0';
			base = strrchr(target, '/');
			base = base ? base + 1 : target;
			snprintf(prefix, sizeof(prefix), "%s.txt", id);
			if (strcmp(base, prefix) == 0 &&
			    agc_plan_add_art(p, R_CONFIG, "debug/latest", id, AGC_ART_NO_GATE, NULL) < 0)
				return -1;
		}
		if (p->gate_only) {
			/* todos/ and telemetry/ hold small files of every session, written and closed
			 * at once; the gate does not read whole flat dirs for them. */
			snprintf(rel, sizeof(rel), "todos/%s-agent-%s.json", id, id);
			if (agc_plan_add_art(p, R_CONFIG, rel, id, 0, NULL) < 0)
				return -1;
		} else {
			snprintf(prefix, sizeof(prefix), "%s-agent-", id);
			if (add_prefixed(p, R_CONFIG, cfg, "todos", prefix, ".json", 0) < 0)
				return -1;
			snprintf(prefix, sizeof(prefix), "1p_failed_events.%s.", id);
			if (add_prefixed(p, R_CONFIG, cfg, "telemetry", prefix, NULL, 0) < 0)
				return -1;
		}
		if (discover_registry(p, cfg, id) < 0)
			return -1;
		/* Shared files are not part of the gate (R5). */
		if (!p->gate_only && discover_history(p, cfg) < 0)
			return -1;
	} else if (agc_plan_root_err(p, R_CONFIG)) {
		/* The config dir exists but cannot be read (noted as residual, R2): its registry
		 * cannot be read either, which refuses the purge before anything changes (R5). */
		if (registry_unreadable(p, NULL, agc_plan_root_err(p, R_CONFIG)) < 0)
			return -1;
	}
	if (tmp >= 0 && discover_temp(p, tmp, p->ctx->home_uid, id) < 0)
		return -1;
	return 0;
}

/* ---- listing ------------------------------------------------------------------------------- */

/* This adapter's index in agc_adapter_table, for ls's gate entries. */
static size_t claude_index(void)
{
	int i = agc_agent_find("claude");

	return i < 0 ? 0 : (size_t)i;
}

typedef struct row {
	char id[AGC_UUID_LEN + 1];
	const char *project; /* in rows.projects */
	char *title;
	const char *keydir;  /* the projects/ dir its transcript is in (root sessions); in
				rows.projects, as the pool of every repeated string */
	char *prompt;        /* only for ls --grep (nothing shows it) */
	int64_t created_ms, updated_ms;
	agc_size sz;   /* SPEC "Sizes": every artifact discovery finds of it */
	size_t gate;   /* its entry of ls's gate (R5); a sub-agent's is its parent's */
	int64_t proj_mtime; /* newest mtime of what the gate sees of it under projects/ */
	bool live;
	bool orphan;        /* ls --orphans: no transcript of it anywhere (collect_orphans) */
	const char *parent; /* sub-agents; in rows.projects */
} row;

typedef struct rows {
	row *v;
	size_t n, cap;
	agc_strpool projects; /* the rows' project paths, key dirs and parents, each kept once */
	bool keep_prompt;     /* ls --grep */
	uint32_t *slots; /* open addressing: index + 1, 0 = empty */
	size_t nslots;
} rows;

/* Ids that have a transcript (<S>.jsonl of any type, its name in any letter case) in some
 * projects/ dir, for ls --orphans: what makes an id no orphan. */
typedef struct uuid_s {
	char s[AGC_UUID_LEN + 1];
} uuid_s;

typedef struct recset {
	uuid_s *v;
	size_t n, cap;
	bool on;       /* ls --orphans: collected */
	bool complete; /* every projects/ dir was listed to its end: an id not in v has no
			  transcript there */
	char why[4200]; /* else: what could not be listed */
} recset;

static uint32_t hash_id(const char *id)
{
	uint32_t h = 2166136261u;

	while (*id)
		h = (h ^ (uint8_t)*id++) * 16777619u;
	return h;
}

static row *rows_find(rows *r, const char *id)
{
	size_t i;

	if (!r->nslots)
		return NULL;
	for (i = hash_id(id) & (r->nslots - 1); r->slots[i]; i = (i + 1) & (r->nslots - 1))
		if (strcmp(r->v[r->slots[i] - 1].id, id) == 0)
			return &r->v[r->slots[i] - 1];
	return NULL;
}

static int rows_index(rows *r)
{
	size_t i, j;

	free(r->slots);
	r->nslots = 16;
	while (r->nslots < r->n * 2)
		r->nslots *= 2;
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	if (!r->slots)
		return agc_error_oom();
	for (i = 0; i < r->n; i++) {
		if (r->v[i].parent)
			continue;
		for (j = hash_id(r->v[i].id) & (r->nslots - 1); r->slots[j]; j = (j + 1) & (r->nslots - 1))
			;
		r->slots[j] = (uint32_t)i + 1;
	}
	return 0;
}

static int64_t ms_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

/* Open rel beneath a root for the listing; a dir that exists but cannot be read is said
 * through the sink, never skipped silently (R2). NULL when it cannot be opened. */
static DIR *ls_dir(agc_ls_sink *sink, const agc_root *root, int rootfd, const char *rel)
{
	DIR *d = agc_dir_at(rootfd, rel);

	if (!d && errno != ENOENT && errno != ENOTDIR && sink->warn) {
		int e = errno;
		char *msg = agc_strfmt("cannot read '%s/%s': %s", root->real ? root->real : root->path, rel,
				       strerror(e));

		if (msg)
			sink->warn(sink, msg);
		free(msg);
		errno = e; /* the caller tells unreadable from missing by it */
	}
	return d;
}

/* The root session id a name in one of the config dir's flat dirs is named after, by the names
 * discovery gives its artifacts there (claude_discover): <S> in file-history/, session-env/,
 * tasks/, image-cache/, uploads/, jobs/; <S>.txt in debug/; <S>-agent-<A>.json in todos/;
 * 1p_failed_events.<S>.<...> in telemetry/. false for a name of no session's form. */
static bool side_uuid(const char *dir, const char *name, char id[AGC_UUID_LEN + 1])
{
	size_t nl = strlen(name);
	const char *u = name;

	if (strcmp(dir, "debug") == 0) {
		if (nl != AGC_UUID_LEN + 4 || strcmp(name + AGC_UUID_LEN, ".txt") != 0)
			return false;
	} else if (strcmp(dir, "todos") == 0) {
		if (nl <= AGC_UUID_LEN + 7 + 5 || strncmp(name + AGC_UUID_LEN, "-agent-", 7) != 0 ||
		    strcmp(name + nl - 5, ".json") != 0)
			return false;
	} else if (strcmp(dir, "telemetry") == 0) {
		if (strncmp(name, "1p_failed_events.", 17) != 0 || nl <= 17 + AGC_UUID_LEN + 1 ||
		    name[17 + AGC_UUID_LEN] != '.')
			return false;
		u = name + 17;
	} else if (nl != AGC_UUID_LEN) {
		return false;
	}
	if (!agc_id_is_uuid(u, AGC_UUID_LEN))
		return false;
	memcpy(id, u, AGC_UUID_LEN);
	id[AGC_UUID_LEN] = '\0';
	return true;
}

/* The root session a name in one of the config dir's flat dirs belongs to (side_uuid). A
 * prefix twin (<S>x) is no one's (R4). */
static row *side_owner(rows *r, const char *dir, const char *name)
{
	char id[AGC_UUID_LEN + 1];

	return side_uuid(dir, name, id) ? rows_find(r, id) : NULL;
}

/* The sessions an entry of a flat dir (dfd) is named after, or, for a background job
 * (jobs/<8 hex digits>), the ones its state.json names (discover_jobs): id, and also for a
 * job the one it runs now (also; "" when none). false when it is no session's. */
static bool side_ids(int dfd, const char *dir, const char *name, char id[AGC_ID_MAX], char also[AGC_ID_MAX])
{
	also[0] = '\0';
	if (strcmp(dir, "jobs") == 0 && job_short(name)) {
		if (job_sessions(dfd, name, id, also, NULL) <= 0)
			return false;
		if (!id[0]) {
			memcpy(id, also, AGC_ID_MAX);
			also[0] = '\0';
		}
		return id[0] != '\0';
	}
	return side_uuid(dir, name, id);
}

/* Charge every entry of dir that belongs to a session (side_owner) to it: its figures and its
 * newest mtime. debug/latest goes with the session whose log it points at. */
static void charge_dir(rows *r, agc_ls_sink *sink, const agc_root *root, int rootfd, const char *dir)
{
	DIR *d = ls_dir(sink, root, rootfd, dir);
	struct dirent *e;
	size_t seen = 0;
	row *w;

	if (!d)
		return;
	while ((e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		bool gate;

		char id[AGC_ID_MAX], also[AGC_ID_MAX];

		if (e->d_name[0] == '.' || !side_ids(dirfd(d), dir, e->d_name, id, also))
			continue;
		w = rows_find(r, id);
		if (also[0]) {
			row *o = rows_find(r, also);

			/* a job that names two sessions with transcripts goes with neither
			 * (discover_jobs) */
			if (w && o)
				continue;
			w = w ? w : o;
		}
		if (!w)
			continue;
		/* what in-use's discovery gives the gate (claude_discover with gate_only): not the
		 * telemetry files, and of todos/ only the session's own */
		gate = strcmp(dir, "telemetry") != 0 &&
		       (strcmp(dir, "todos") != 0 || (strncmp(e->d_name + AGC_UUID_LEN + 7, w->id, AGC_UUID_LEN) == 0 &&
						       strcmp(e->d_name + 2 * AGC_UUID_LEN + 7, ".json") == 0));
		agc_ls_charge(sink, w->gate, gate, dirfd(d), e->d_name, NULL, &w->sz, &w->updated_ms);
		if (strcmp(dir, "jobs") == 0 && job_short(e->d_name)) {
			/* the daemon's marks of a background job go with it (discover_jobs) */
			char rel[300];
			size_t i;

			for (i = 0; i < sizeof(job_marks) / sizeof(job_marks[0]); i++) {
				snprintf(rel, sizeof(rel), "%s/%s", job_marks[i], e->d_name);
				agc_ls_charge_at(sink, w->gate, false, rootfd, rel, &w->sz, &w->updated_ms);
			}
		}
	}
	if (strcmp(dir, "debug") == 0) {
		char target[512];
		ssize_t tl = readlinkat(dirfd(d), "latest", target, sizeof(target) - 1);
		const char *base;

		if (tl > 0) {
			target[tl] = '\0';
			base = strrchr(target, '/');
			base = base ? base + 1 : target;
			/* never the gate's (AGC_ART_NO_GATE) */
			if ((w = side_owner(r, "debug", base)))
				agc_ls_charge(sink, w->gate, false, dirfd(d), "latest", NULL, &w->sz, &w->updated_ms);
		}
	}
	closedir(d);
}

/* One key dir of the temp root: <K'>/<S> of every session, or s/<scratch of S> (the
 * scratchpads, named by a hash of the id: scratch is sorted by name). */
typedef struct scratch_ent {
	char name[13];
	row *w;
} scratch_ent;

static int cmp_scratch(const void *a, const void *b)
{
	return strcmp(((const scratch_ent *)a)->name, ((const scratch_ent *)b)->name);
}

static void charge_temp_dir(rows *r, agc_ls_sink *sink, const agc_root *root, int tmp, const char *top,
			    const char *key, const scratch_ent *scratch, size_t nscratch)
{
	char rel[4096];
	DIR *d;
	struct dirent *e;
	size_t seen = 0;

	if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", top, key) >= sizeof(rel))
		return;
	d = ls_dir(sink, root, tmp, rel);
	while (d && (e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		row *w = NULL;

		if (e->d_name[0] == '.')
			continue;
		if (strcmp(key, "s") == 0) {
			scratch_ent k, *hit;

			if (strlen(e->d_name) != 12 || !scratch)
				continue;
			memcpy(k.name, e->d_name, 13);
			hit = bsearch(&k, scratch, nscratch, sizeof(*scratch), cmp_scratch);
			w = hit ? hit->w : NULL;
		} else if (strlen(e->d_name) == AGC_UUID_LEN && agc_id_is_uuid(e->d_name, AGC_UUID_LEN)) {
			w = rows_find(r, e->d_name);
		}
		if (w)
			agc_ls_charge(sink, w->gate, true, dirfd(d), e->d_name, NULL, &w->sz, &w->updated_ms);
	}
	if (d)
		closedir(d);
}

/* A paste hash of history.jsonl: the session whose lines reference it, or none when another
 * line names it too (discover_history leaves such a file: it is shared). */
typedef struct paste_ent {
	char *hash;
	row *owner;
	bool shared;
} paste_ent;

typedef struct pastes {
	paste_ent *v;
	size_t n, cap;
	size_t lens[65]; /* hash lengths present */
} pastes;

static int cmp_paste(const void *a, const void *b)
{
	return strcmp(((const paste_ent *)a)->hash, ((const paste_ent *)b)->hash);
}

/* Mark shared every known paste hash the line names (any case) unless owner is its owner. */
static void paste_mentions(pastes *P, const char *line, size_t len, const row *owner)
{
	size_t i = 0, run, k, l, at;
	char cand[65];

	while (i < len) {
		for (run = 0; i + run < len && isxdigit((unsigned char)line[i + run]); run++)
			;
		for (l = 8; run >= 8 && l <= 64 && l <= run; l++) {
			if (!P->lens[l])
				continue;
			for (at = 0; at + l <= run; at++) {
				paste_ent key, *hit;

				for (k = 0; k < l; k++)
					cand[k] = (char)tolower((unsigned char)line[i + at + k]);
				cand[l] = '\0';
				key.hash = cand;
				hit = bsearch(&key, P->v, P->n, sizeof(*P->v), cmp_paste);
				if (hit && hit->owner != owner)
					hit->shared = true;
			}
		}
		i += run ? run : 1;
	}
}

/* history.jsonl, read once for every session (R8: bounded as discovery reads it): each line
 * with its newline to the session it names, and the paste-cache files only that session's
 * lines reference (discover_history's two passes, for all sessions at once). */
/* The index of the paste entries by hash (index + 1, 0 = empty), made twice as large. */
static int grow_slots(uint32_t **slot, size_t *nslot, const pastes *P)
{
	size_t n = *nslot ? *nslot * 2 : 256, i, k;
	uint32_t *v = calloc(n, sizeof(*v));

	if (!v)
		return agc_error_oom();
	for (k = 0; k < P->n; k++) {
		for (i = hash_id(P->v[k].hash) & (n - 1); v[i]; i = (i + 1) & (n - 1))
			;
		v[i] = (uint32_t)k + 1;
	}
	free(*slot);
	*slot = v;
	*nslot = n;
	return 0;
}

/* A line of history.jsonl through jscan: true when it tells the line's session (*w, or NULL:
 * nobody's, or not JSON as jansson reads it) and the line names no paste; false when the line
 * is to be parsed with jansson (jscan not sure, or a non-empty pastedContents to be read). */
static bool history_scan(const char *line, size_t len, char *id, row **w, rows *r)
{
	static const char *const keys[] = {"sessionId", "pastedContents"};
	agc_jspan v[2];
	char *sid;
	size_t i;

	*w = NULL;
	if (agc_jscan_line(line, len, keys, 2, v) != AGC_JSCAN_OK)
		return false;
	if (v[1].p) {
		/* only an object's members are looked at (json_object_foreach): {} names none */
		if (v[1].p[0] == '{') {
			for (i = 1; i < v[1].n && (v[1].p[i] == ' ' || v[1].p[i] == '\t' || v[1].p[i] == '\n' ||
						   v[1].p[i] == '\r');
			     i++)
				;
			if (i >= v[1].n || v[1].p[i] != '}')
				return false;
		}
	}
	if (!v[0].p || !agc_jscan_is_str(v[0]))
		return true;
	if (!(sid = agc_jscan_str(v[0])))
		return false;
	if (agc_id_uuid(sid, id) == 0)
		*w = rows_find(r, id);
	free(sid);
	return true;
}

static void charge_history(rows *r, int cfg)
{
	agc_lines lr;
	uint64_t before, total;
	bool toolong;
	size_t len;
	pastes P = {0};
	agc_strpool seen = {0}; /* the hashes of P, each once (P's entries point into it) */
	uint32_t *pslot = NULL;
	size_t nslot = 0, nseen = 0;
	const char *ph;
	struct { row **v; size_t n, cap; } owners = {0};
	const char *s;
	struct stat st;
	size_t i;
	int fd;

	if (fstatat(cfg, "history.jsonl", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	fd = agc_open_file_at(cfg, "history.jsonl", S_ISLNK(st.st_mode) ? AGC_OPEN_FOLLOW : 0, NULL);
	if (fd < 0)
		return;
	/* R8: the bound discovery reads it with (a larger file is not charged at all) */
	if (fstat(fd, &st) < 0 || st.st_size > ((off_t)1 << 30)) {
		close(fd);
		return;
	}
	/* Read line by line, twice, through one small buffer: memory does not grow with the
	 * file (it is the largest file of a home). Pass 1: lines to their sessions (each line
	 * parsed once; its owner kept for pass 2), paste hashes to the sessions that reference
	 * them. */
	agc_lines_init(&lr, fd, AGC_LINE_MAX);
	agc_lines_limit(&lr, (uint64_t)1 << 30);
	for (before = lr.offset; agc_lines_next(&lr, &s, &len, &toolong) == 1; before = lr.offset) {
		json_t *j = NULL;
		char id[AGC_ID_MAX];
		row *w = NULL;
		row **slot = AGC_ARRAY_PUSH(&owners, (size_t)1 << 28);

		if (!toolong && len && !history_scan(s, len, id, &w, r))
			/* what the scanner is not sure of, or a line whose pastes are wanted: jansson */
			j = agc_json_parse(s, len);
		if (j) {
			const char *sid = agc_json_str(j, "sessionId");

			w = sid && agc_id_uuid(sid, id) == 0 ? rows_find(r, id) : NULL;
		}

		if (!slot) {
			json_decref(j);
			break;
		}
		*slot = w;
		if (w) {
			json_t *pc = json_object_get(j, "pastedContents"), *v;
			const char *k;

			w->sz.bytes += lr.offset - before; /* the line and its newline */
			json_object_foreach(pc, k, v)
			{
				const char *h = agc_json_str(v, "contentHash");
				paste_ent *e;

				if (!h || !paste_hash_ok(h))
					continue;
				/* each hash once: its entry found through the pool of hashes seen */
				if (!(ph = agc_strpool_add(&seen, h)))
					continue;
				if (seen.n == nseen) {
					for (i = hash_id(ph) & (nslot - 1); pslot[i] && P.v[pslot[i] - 1].hash != ph;
					     i = (i + 1) & (nslot - 1))
						;
					if (pslot[i] && P.v[pslot[i] - 1].owner != w)
						P.v[pslot[i] - 1].shared = true;
					continue;
				}
				nseen = seen.n;
				if (P.n + 1 > nslot / 2 && grow_slots(&pslot, &nslot, &P) < 0)
					continue;
				e = AGC_ARRAY_PUSH(&P, 100000);
				if (!e)
					continue;
				e->hash = (char *)ph;
				e->owner = w;
				e->shared = false;
				P.lens[strlen(h)]++;
				for (i = hash_id(ph) & (nslot - 1); pslot[i]; i = (i + 1) & (nslot - 1))
					;
				pslot[i] = (uint32_t)P.n;
			}
		}
		json_decref(j);
	}
	total = lr.offset;
	agc_lines_release(&lr);
	/* Pass 2: a hash any other line names is shared. Lines pass 1 could not keep an owner
	 * for are nobody's: what they name is shared (the safe side: the file stays). Only the
	 * bytes pass 1 read are read again (lines appended since have no owner). */
	if (P.n && lseek(fd, 0, SEEK_SET) == 0) {
		size_t line = 0;

		qsort(P.v, P.n, sizeof(*P.v), cmp_paste);
		/* a line too long to parse may still name a hash, as discovery sees it: here it is
		 * read whole (only such a line makes the buffer grow past a line's usual size) */
		agc_lines_init(&lr, fd, (size_t)1 << 30);
		agc_lines_limit(&lr, total);
		while (agc_lines_next(&lr, &s, &len, &toolong) == 1) {

			paste_mentions(&P, s, len, line < owners.n ? owners.v[line] : NULL);
			line++;
		}
		agc_lines_release(&lr);
	} else if (P.n) {
		/* what cannot be read again cannot be shown unshared: every paste stays shared */
		for (i = 0; i < P.n; i++)
			P.v[i].shared = true;
	}
	close(fd);
	for (i = 0; i < P.n; i++) {
		char rel[128];

		if (!P.v[i].shared) {
			snprintf(rel, sizeof(rel), "paste-cache/%s.txt", P.v[i].hash);
			agc_size_at(cfg, rel, &P.v[i].owner->sz, NULL);
		}
	}
	free(P.v);
	free(pslot);
	agc_strpool_release(&seen);
	free(owners.v);
}

/* Files in a projects/ dir that discovery takes with a session beside its transcript and dir
 * (discover_projects): the sidecars, in any project dir; the compaction and superseded
 * copies where the session has its transcript or dir; its dir in another project dir. */
typedef struct pend_ent {
	char *rel;
	bool has; /* the session has its transcript or dir in this project dir (its listing) */
} pend_ent;

typedef struct pending {
	pend_ent *v;
	size_t n, cap;
} pending;

static void charge_pending(rows *r, agc_ls_sink *sink, int cfg, pending *pd)
{
	static const char *const side[] = {".ccr-tip.json", ".precompact.json", ".desktop-released.json"};
	size_t i, k;

	for (i = 0; i < pd->n; i++) {
		const char *rel = pd->v[i].rel, *name = strrchr(rel, '/') + 1, *sfx = name + AGC_UUID_LEN;
		char id[AGC_UUID_LEN + 1], kdir[4096];
		struct stat st;
		row *w;
		bool take = false, has;

		memcpy(id, name, AGC_UUID_LEN);
		id[AGC_UUID_LEN] = '\0';
		if (!(w = rows_find(r, id)))
			continue;
		snprintf(kdir, sizeof(kdir), "%.*s", (int)(name - 1 - rel), rel);
		for (k = 0; k < sizeof(side) / sizeof(side[0]); k++)
			take |= strcmp(sfx, side[k]) == 0;
		/* the session has its transcript or dir in this project dir */
		has = (w->keydir && strcmp(kdir + 9, w->keydir) == 0) || pd->v[i].has;
		if (!*sfx)
			/* the transcript's own dir was measured with it */
			take = !w->keydir || strcmp(kdir + 9, w->keydir) != 0;
		else if (!take)
			take = has;
		if (!take)
			continue;
		/* the gate (in-use's discovery) looks at side files only next to a transcript or
		 * session dir, as discover_projects does */
		agc_ls_charge_at(sink, w->gate, has, cfg, rel, &w->sz, &w->updated_ms);
		if (has && fstatat(cfg, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && ms_of(&st.st_mtim) > w->proj_mtime)
			w->proj_mtime = ms_of(&st.st_mtim);
	}
}

/* Whether name (an entry of a project dir) is one charge_pending looks at. */
static bool pending_name(const char *name)
{
	static const char *const side[] = {".ccr-tip.json", ".precompact.json", ".desktop-released.json"};
	const char *sfx = name + AGC_UUID_LEN;
	size_t k, nl = strlen(name);

	if (nl < AGC_UUID_LEN || !agc_id_is_uuid(name, AGC_UUID_LEN))
		return false;
	if (!*sfx)
		return true;
	for (k = 0; k < sizeof(side) / sizeof(side[0]); k++)
		if (strcmp(sfx, side[k]) == 0)
			return true;
	return (strncmp(sfx, ".jsonl.compact.tmp.", 19) == 0 && sfx[19]) ||
	       (strncmp(sfx, ".jsonl.superseded-", 18) == 0 && sfx[18]);
}

/* The sub-agents under a session's subagents/ dir, nested dirs included, as discovery's
 * collect_subagents finds them: their ids hold the session for the gate (R5), and with
 * children they are listed, under the parent's gate entry. */
static int list_subagents_at(rows *r, agc_ls_sink *sink, size_t gate, bool children, int cfg,
			     const char *rel, const char *parent, const char *project, int depth)
{
	DIR *d;
	struct dirent *e;
	size_t seen = 0;
	int todos = -1, err;

	if (depth > 8)
		return 0;
	d = agc_dir_at(cfg, rel);
	if (!d)
		return 0;
	while ((e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		char aid[AGC_CLAUDE_AGENT_ID_LEN + 1];
		row *w;
		struct stat st;

		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			char sub[4096];

			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name) < sizeof(sub))
				list_subagents_at(r, sink, gate, children, cfg, sub, parent, project, depth + 1);
			continue;
		}
		/* the same grammar as discovery: ls lists no child that purge would not see (R1) */
		if (!S_ISREG(st.st_mode) || !agc_claude_subagent_file(e->d_name, aid))
			continue;
		agc_ls_gate_id(sink, gate, aid);
		if (!children)
			continue;
		w = AGC_ARRAY_PUSH(r, (size_t)1 << 26);
		if (!w)
			break;
		memcpy(w->id, aid, sizeof(aid));
		w->gate = gate;
		w->parent = agc_strpool_add(&r->projects, parent);
		w->project = project;
		w->updated_ms = ms_of(&st.st_mtim);
		agc_size_entry(dirfd(d), e->d_name, &st, &w->sz, NULL);
		w->created_ms = w->updated_ms;
		{
			/* its other files, as discover_subagent names them: one figure (SPEC "Sizes") */
			char side[4096];
			struct stat ss;

			snprintf(side, sizeof(side), "agent-%s.meta.json", aid);
			if (fstatat(dirfd(d), side, &ss, AT_SYMLINK_NOFOLLOW) == 0)
				agc_size_entry(dirfd(d), side, &ss, &w->sz, NULL);
			snprintf(side, sizeof(side), "%s-agent-%s.json", parent, aid);
			if (todos < 0 && agc_walk_open_dir(cfg, "todos", &todos, &err) != AGC_WALK_OK)
				todos = -2; /* none, or not a real dir: nothing of it is counted */
			if (todos >= 0 && fstatat(todos, side, &ss, AT_SYMLINK_NOFOLLOW) == 0)
				agc_size_entry(todos, side, &ss, &w->sz, NULL);
		}
	}
	closedir(d);
	if (todos >= 0)
		close(todos);
	return 0;
}

static int list_subagents(rows *r, agc_ls_sink *sink, size_t gate, bool children, int cfg,
			  const char *projdir, const char *parent, const char *project)
{
	char rel[4096];

	snprintf(rel, sizeof(rel), "projects/%s/%s/subagents", projdir, parent);
	return list_subagents_at(r, sink, gate, children, cfg, rel, parent, project, 0);
}

/* A sub-agent the walk of its parent's dir met, as list_subagents_at would list it. */
typedef struct sub_seen {
	char aid[AGC_CLAUDE_AGENT_ID_LEN + 1];
	int64_t mtime_ms;
	agc_size sz;
} sub_seen;

#define SUB_LEVELS 8 /* list_subagents_at's depth bound: dirs below subagents/ it lists */

/* The walk of a session's dir <S> that measures it for ls (what agc_ls_charge does) and, in the
 * same pass, learns what file_title and list_subagents_at would otherwise look for again:
 * whether custom-title.json is there, and the sub-agents under subagents/. What the walk tells
 * is used only when it saw everything (agc_scan_walk's complete); otherwise the old look-ups run,
 * so the figures, titles and gate ids are the same either way. */
typedef struct sdir_walk {
	agc_ls_sink *sink;
	size_t gate;
	bool children;
	const char *parent;
	int cfg;
	int *todos;      /* the run's todos/ fd: -1 not opened yet, -2 none */
	bool title;      /* custom-title.json at depth 1, of whatever kind */
	bool sub_odd;    /* subagents at depth 1 is no plain dir: list_subagents_at looks for itself */
	bool in_sub;     /* the walk is inside subagents/ */
	bool oom;
	bool hidden[SUB_LEVELS + 1]; /* a name at that level below subagents/, or above it, begins with '.' */
	struct {
		sub_seen *v;
		size_t n, cap;
	} subs;
} sdir_walk;

static void sdir_visit(const agc_scan_ent *e, void *ud)
{
	sdir_walk *w = ud;
	char aid[AGC_CLAUDE_AGENT_ID_LEN + 1];
	unsigned k;

	/* the gate, as agc_ls_charge's walk: every regular file and dir inside (R5); a mount point
	 * is not the session's and is never measured */
	if (!e->mount && (S_ISREG(e->st->st_mode) || S_ISDIR(e->st->st_mode)))
		agc_ls_gate_file(w->sink, w->gate, e->st);
	if (e->depth == 1) {
		if (strcmp(e->name, "custom-title.json") == 0)
			w->title = true;
		w->in_sub = strcmp(e->name, "subagents") == 0;
		if (w->in_sub && (e->mount || !S_ISDIR(e->st->st_mode)))
			w->sub_odd = true; /* a link is followed there (agc_dir_at) */
		return;
	}
	if (!w->in_sub || (k = e->depth - 2) > SUB_LEVELS)
		return;
	/* list_subagents_at skips names beginning with '.', and never enters such a dir */
	w->hidden[k] = e->name[0] == '.' || (k > 0 && w->hidden[k - 1]);
	if (w->hidden[k] || e->mount || !S_ISREG(e->st->st_mode) || !agc_claude_subagent_file(e->name, aid))
		return;
	{
		sub_seen *s = AGC_ARRAY_PUSH(&w->subs, (size_t)1 << 26);
		char side[4096];
		struct stat ss;
		int err;

		if (!s) {
			w->oom = true;
			return;
		}
		memcpy(s->aid, aid, sizeof(aid));
		if (!w->children)
			return;
		/* its figures, as list_subagents_at counts them */
		s->mtime_ms = ms_of(&e->st->st_mtim);
		agc_size_entry(e->dfd, e->name, e->st, &s->sz, NULL);
		snprintf(side, sizeof(side), "agent-%s.meta.json", aid);
		if (fstatat(e->dfd, side, &ss, AT_SYMLINK_NOFOLLOW) == 0)
			agc_size_entry(e->dfd, side, &ss, &s->sz, NULL);
		snprintf(side, sizeof(side), "%s-agent-%s.json", w->parent, aid);
		if (*w->todos == -1 && agc_walk_open_dir(w->cfg, "todos", w->todos, &err) != AGC_WALK_OK)
			*w->todos = -2; /* none, or not a real dir: nothing of it is counted */
		if (*w->todos >= 0 && fstatat(*w->todos, side, &ss, AT_SYMLINK_NOFOLLOW) == 0)
			agc_size_entry(*w->todos, side, &ss, &s->sz, NULL);
	}
}

/* agc_ls_charge of the session's dir <S> (st its lstat, a dir) through sdir_visit. Returns what
 * agc_ls_charge returns; *complete whether the walk saw all of it. */
static int charge_sdir(sdir_walk *w, int dirfd_, const char *name, const struct stat *st, agc_size *sz,
		       int64_t *mtime_ms, bool *complete)
{
	uint64_t b = 0, d = 0;
	int64_t mt = 0;
	int rc;

	*complete = false;
	rc = agc_scan_walk(dirfd_, name, st, AGC_SIZE_MAX_ENTRIES, sdir_visit, w, &b, &d, &mt, complete);
	if (rc != 0)
		return rc;
	sz->bytes += b;
	sz->disk += d;
	if (mt > *mtime_ms)
		*mtime_ms = mt;
	/* the artifact itself, as the gate adds it */
	agc_ls_gate_file(w->sink, w->gate, st);
	if (w->oom)
		*complete = false;
	return 0;
}

/* The names of one projects/ dir, listed once: whether a session has its dir <S> or its
 * transcript there is read from them instead of probed for (a probe of what is not there is a
 * failing stat per session). */
typedef struct pnames {
	char **v;
	size_t n, cap;
	char **sorted;
	bool exact;  /* listed to its end, names compared as the file system does: else probe */
	int cut;     /* the listing stopped at this error before its end, else 0 */
} pnames;

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name may be in the dir: false only when the listing shows it is not. */
static bool pnames_has(const pnames *pn, const char *name)
{
	return !pn->exact || (pn->sorted && bsearch(&name, pn->sorted, pn->n, sizeof(*pn->sorted), str_cmp));
}

static void pnames_release(pnames *pn)
{
	size_t i;

	for (i = 0; i < pn->n; i++)
		free(pn->v[i]);
	free(pn->v);
	free(pn->sorted);
	memset(pn, 0, sizeof(*pn));
}

/* The listing of the dir open at pd, in its order and sorted; -1 out of memory. */
static int pnames_read(pnames *pn, DIR *pd)
{
	struct dirent *f;

	for (;;) {
		char **slot;

		errno = 0;
		if (!(f = readdir(pd)))
			break;
		if (f->d_name[0] == '.' && (!f->d_name[1] || (f->d_name[1] == '.' && !f->d_name[2])))
			continue;
		if (!(slot = AGC_ARRAY_PUSH(pn, (size_t)1 << 26)))
			return -1;
		if (!(*slot = agc_strdup(f->d_name))) {
			pn->n--;
			return -1;
		}
	}
	/* a listing cut short by an error tells nothing of what it did not reach */
	pn->cut = errno;
	pn->exact = errno == 0 && agc_scan_names_exact(dirfd(pd));
	if (pn->n && !(pn->sorted = malloc(pn->n * sizeof(*pn->sorted))))
		return agc_error_oom();
	if (pn->n) {
		memcpy(pn->sorted, pn->v, pn->n * sizeof(*pn->sorted));
		qsort(pn->sorted, pn->n, sizeof(*pn->sorted), str_cmp);
	}
	return 0;
}

/* One session of a projects/ dir: name is <S>.jsonl, st its lstat (a regular file). */
static int list_session(rows *r, agc_ls_sink *sink, int cfg, bool children, int *todos, const char *key, DIR *pd,
			const pnames *pn, const char *name, const struct stat *st)
{
	char sid[AGC_UUID_LEN + 1];
	struct stat sst;
	bool has_sdir, complete = false, charged = false, title_probe;
	sdir_walk sw = {0};
	agc_size sz = {0};
	int64_t updated = ms_of(&st->st_mtim), proj_mtime = updated;
	size_t gate, i, wi;
	head h;
	row *w;

	memcpy(sid, name, AGC_UUID_LEN);
	sid[AGC_UUID_LEN] = '\0';
	/* the session's own dir <S>, looked at once for its title file, its size and its
	 * sub-agents: only when the listing has it */
	has_sdir = pnames_has(pn, sid) && fstatat(dirfd(pd), sid, &sst, AT_SYMLINK_NOFOLLOW) == 0;
	gate = agc_ls_gate_new(sink, claude_index());
	agc_ls_gate_id(sink, gate, sid);
	agc_ls_charge(sink, gate, true, dirfd(pd), name, st, &sz, NULL);
	if (has_sdir) {
		int rc;

		if (S_ISDIR(sst.st_mode)) {
			sw.sink = sink;
			sw.gate = gate;
			sw.children = children;
			sw.parent = sid;
			sw.cfg = cfg;
			sw.todos = todos;
			rc = charge_sdir(&sw, dirfd(pd), sid, &sst, &sz, &updated, &complete);
			/* the walk's names stand for look-ups only where names are exact */
			if (!pn->exact)
				complete = false;
		} else {
			rc = agc_ls_charge(sink, gate, true, dirfd(pd), sid, &sst, &sz, &updated);
		}
		if (rc == 0) {
			charged = true;
			/* the gate sees the dir itself, not what is measured in it */
			if (ms_of(&sst.st_mtim) > proj_mtime)
				proj_mtime = ms_of(&sst.st_mtim);
		}
	}
	title_probe = has_sdir && S_ISDIR(sst.st_mode) && (!complete || sw.title);
	read_head(dirfd(pd), name, st, title_probe, &h);
	w = AGC_ARRAY_PUSH(r, (size_t)1 << 26);
	if (!w) {
		head_release(&h);
		free(sw.subs.v);
		return -1;
	}
	memcpy(w->id, sid, sizeof(sid));
	w->project = agc_strpool_add(&r->projects, h.cwd);
	free(h.cwd);
	w->title = h.title;
	w->prompt = r->keep_prompt ? h.prompt : NULL;
	if (!r->keep_prompt)
		free(h.prompt);
	w->created_ms = h.created_ms ? h.created_ms : ms_of(&st->st_mtim);
	w->updated_ms = updated;
	w->proj_mtime = proj_mtime;
	w->keydir = agc_strpool_add(&r->projects, key);
	w->gate = gate;
	w->sz = sz;
	wi = r->n - 1;
	if (!charged || !S_ISDIR(sst.st_mode)) {
		free(sw.subs.v);
		return 0;
	}
	if (!complete || sw.sub_odd) {
		/* the walk did not see all of <S>: list_subagents looks for itself */
		free(sw.subs.v);
		return list_subagents(r, sink, gate, children, cfg, key, sid, w->project);
	}
	for (i = 0; i < sw.subs.n; i++) {
		const sub_seen *s = &sw.subs.v[i];
		row *c;

		agc_ls_gate_id(sink, gate, s->aid);
		if (!children)
			continue;
		c = AGC_ARRAY_PUSH(r, (size_t)1 << 26);
		if (!c)
			break;
		memcpy(c->id, s->aid, sizeof(s->aid));
		c->gate = gate;
		c->parent = agc_strpool_add(&r->projects, sid);
		c->project = r->v[wi].project;
		c->updated_ms = s->mtime_ms;
		c->created_ms = s->mtime_ms;
		c->sz = s->sz;
	}
	free(sw.subs.v);
	return 0;
}

/* Note in rec that the projects/ dirs could not all be listed (the first reason said). */
static void rec_incomplete(recset *rec, const char *what, int err)
{
	if (!rec->complete)
		return;
	rec->complete = false;
	snprintf(rec->why, sizeof(rec->why), "cannot list '%s': %s", what, strerror(err));
}

/* Note name, an entry of a projects/ dir, in rec when it is a transcript's (any letter case). */
static int rec_name(recset *rec, const char *name)
{
	size_t nl = strlen(name), k;
	uuid_s *u;

	if (!rec->on || nl != AGC_UUID_LEN + 6 || strcasecmp(name + AGC_UUID_LEN, ".jsonl") != 0)
		return 0;
	if (!(u = AGC_ARRAY_PUSH(rec, (size_t)1 << 26)))
		return -1;
	for (k = 0; k < AGC_UUID_LEN; k++)
		u->s[k] = (char)(name[k] >= 'A' && name[k] <= 'F' ? name[k] - 'A' + 'a' : name[k]);
	u->s[AGC_UUID_LEN] = '\0';
	if (!agc_id_is_uuid(u->s, AGC_UUID_LEN))
		rec->n--;
	return 0;
}

static int uuid_cmp(const void *a, const void *b)
{
	return strcmp(((const uuid_s *)a)->s, ((const uuid_s *)b)->s);
}

static bool rec_has(const recset *rec, const char *id)
{
	uuid_s k;

	memcpy(k.s, id, AGC_UUID_LEN + 1);
	return rec->n && bsearch(&k, rec->v, rec->n, sizeof(*rec->v), uuid_cmp);
}

static int list_projects(rows *r, agc_ls_sink *sink, const agc_root *root, int cfg, bool children,
			 pending *pend, recset *rec)
{
	DIR *d = ls_dir(sink, root, cfg, "projects");
	struct dirent *e;
	size_t seen = 0;
	int todos = -1, rc = 0;

	if (!d) {
		struct stat lst;

		/* a link whose target is gone (a disk not mounted) hides transcripts: not "none" */
		if (errno != ENOENT && errno != ENOTDIR)
			rec_incomplete(rec, "projects", errno);
		else if (fstatat(cfg, "projects", &lst, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(lst.st_mode))
			rec_incomplete(rec, "projects", ENOENT);
		return 0;
	}
	for (;;) {
		DIR *pd;
		char rel[4096];
		pnames pn = {0};
		size_t j;

		if (rc != 0)
			break;
		errno = 0;
		if (!(e = readdir(d))) {
			if (errno)
				rec_incomplete(rec, "projects", errno);
			break;
		}
		if (seen++ >= DIR_ENTRIES_MAX) {
			rec_incomplete(rec, "projects", E2BIG);
			break;
		}
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (e->d_name[0] == '.' || !agc_id_path_safe(e->d_name)) {
			struct stat lst;

			/* a dir the listing does not follow may hold transcripts all the same */
			if (fstatat(dirfd(d), e->d_name, &lst, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(lst.st_mode))
				rec_incomplete(rec, "projects", EINVAL);
			continue;
		}
		snprintf(rel, sizeof(rel), "projects/%s", e->d_name);
		pd = ls_dir(sink, root, cfg, rel);
		if (!pd) {
			struct stat lst;

			/* a dir that cannot be read, a link whose target is gone: a transcript may be
			 * behind it */
			if (errno != ENOENT && errno != ENOTDIR)
				rec_incomplete(rec, rel, errno);
			else if (fstatat(dirfd(d), e->d_name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
				rec_incomplete(rec, rel, ENOENT);
			continue;
		}
		if (pnames_read(&pn, pd) < 0) {
			pnames_release(&pn);
			closedir(pd);
			rc = -1;
			break;
		}
		if (pn.cut)
			rec_incomplete(rec, rel, pn.cut);
		for (j = 0; rc == 0 && j < pn.n; j++) {
			const char *name = pn.v[j];
			size_t nl = strlen(name);
			struct stat st;

			if (rec_name(rec, name) < 0) {
				rc = -1;
				break;
			}
			if (nl != AGC_UUID_LEN + 6 || strcmp(name + AGC_UUID_LEN, ".jsonl") != 0 ||
			    !agc_id_is_uuid(name, AGC_UUID_LEN)) {
				pend_ent *slot;

				/* looked at once every session is known */
				if (!pending_name(name) ||
				    (size_t)snprintf(rel, sizeof(rel), "projects/%s/%s", e->d_name, name) >= sizeof(rel) ||
				    !(slot = AGC_ARRAY_PUSH(pend, DIR_ENTRIES_MAX)))
					continue;
				if (!(slot->rel = agc_strdup(rel))) {
					pend->n--;
					continue;
				}
				/* whether the session has its transcript or dir in this project dir */
				{
					char there[AGC_UUID_LEN + 7];

					memcpy(there, name, AGC_UUID_LEN);
					there[AGC_UUID_LEN] = '\0';
					slot->has = pnames_has(&pn, there);
					memcpy(there + AGC_UUID_LEN, ".jsonl", 7);
					slot->has = slot->has || pnames_has(&pn, there);
				}
				continue;
			}
			if (fstatat(dirfd(pd), name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
				continue;
			rc = list_session(r, sink, cfg, children, &todos, e->d_name, pd, &pn, name, &st);
		}
		pnames_release(&pn);
		closedir(pd);
	}
	closedir(d);
	if (todos >= 0)
		close(todos);
	return rc;
}

/* Every row live because of the registry: by pid (0 when no process can be named: the dir
 * itself could not be read). */
static void mark_all_live(rows *r, agc_ls_sink *sink, pid_t pid)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		r->v[i].live = true;
		agc_ls_gate_held(sink, r->v[i].gate, pid, AGC_WHY_REGISTRY);
	}
}

/* Mark the rows live the gate would call live (R5: ls and in-use never disagree): judged
 * like the gate's registry read, whatever the pid; a registry that cannot be read, or a file
 * of a running pid that cannot be read, leaves every session unable to be shown free. */
/* A stale registry entry goes with the session it names (discover_registry): the file, the
 * .key files of its pid (of a running pid only those with its procStart) and, when the pid is
 * dead, its socket in the temp root. */
static void charge_stale(row *w, agc_ls_sink *sink, DIR *d, const char *name, pid_t pid,
			 const char *proc_start, int tmp)
{
	char prefix[32], ps[64] = "";
	bool alive = agc_proc_alive(pid);
	struct dirent *e;
	size_t pl;
	DIR *d2;

	if (proc_start)
		snprintf(ps, sizeof(ps), "%s", proc_start);
	agc_ls_charge(sink, w->gate, true, dirfd(d), name, NULL, &w->sz, &w->updated_ms);
	pl = (size_t)snprintf(prefix, sizeof(prefix), "%ld.", (long)pid);
	d2 = agc_dir_at(dirfd(d), ".");
	while (d2 && (e = readdir(d2))) {
		size_t nl = strlen(e->d_name);

		if (strncmp(e->d_name, prefix, pl) != 0 || nl != pl + 64 + 4 || strcmp(e->d_name + nl - 4, ".key") != 0)
			continue;
		if (alive && !key_is_ours(dirfd(d2), e->d_name, proc_start ? ps : NULL))
			continue;
		agc_ls_charge(sink, w->gate, true, dirfd(d2), e->d_name, NULL, &w->sz, &w->updated_ms);
	}
	if (d2)
		closedir(d2);
	if (!alive && tmp >= 0) {
		char rel[64];

		snprintf(rel, sizeof(rel), "cc-socks/%ld.sock", (long)pid);
		/* a socket: never the gate's (AGC_ART_NO_GATE) */
		agc_ls_charge_at(sink, w->gate, false, tmp, rel, &w->sz, &w->updated_ms);
	}
}

static void mark_live(rows *r, agc_ctx *ctx, agc_ls_sink *sink, const agc_root *root, int cfg, int tmp)
{
	DIR *d = ls_dir(sink, root, cfg, "sessions");
	struct dirent *e;
	agc_buf text = AGC_BUF_INIT_MAX(REGISTRY_MAX + 1);
	size_t seen = 0;

	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR)
			mark_all_live(r, sink, 0);
		return;
	}
	while ((e = readdir(d))) {
		pid_t pid;
		json_t *j;
		const char *sid;
		char id[AGC_ID_MAX];
		row *w;
		int rrc;

		if (++seen > DIR_ENTRIES_MAX) {
			mark_all_live(r, sink, 0);
			break;
		}
		if (!is_pid_json(e->d_name, &pid))
			continue;
		rrc = agc_read_at(dirfd(d), e->d_name, REGISTRY_MAX, &text);
		if (rrc == AGC_ENOTFOUND)
			continue;
		if (rrc < 0) {
			/* too big or unreadable: the gate counts it live for any session of a
			 * running pid */
			if (agc_proc_alive(pid))
				mark_all_live(r, sink, pid);
			continue;
		}
		j = agc_json_parse(text.ptr, text.len);
		if (!j) {
			size_t k;

			/* unparseable: live for every session its text names while the pid runs */
			if (!agc_proc_alive(pid))
				continue;
			for (k = 0; k + AGC_UUID_LEN <= text.len; k++) {
				char cand[AGC_UUID_LEN + 1];
				size_t c;

				/* the gate matches the id in any case */
				for (c = 0; c < AGC_UUID_LEN; c++)
					cand[c] = (char)(text.ptr[k + c] >= 'A' && text.ptr[k + c] <= 'F'
								 ? text.ptr[k + c] - 'A' + 'a'
								 : text.ptr[k + c]);
				cand[AGC_UUID_LEN] = '\0';
				if (agc_id_is_uuid(cand, AGC_UUID_LEN) && (w = rows_find(r, cand))) {
					w->live = true;
					agc_ls_gate_held(sink, w->gate, pid, AGC_WHY_REGISTRY);
				}
			}
			continue;
		}
		sid = agc_json_str(j, "sessionId");
		if (sid && agc_id_uuid(sid, id) == 0 && (w = rows_find(r, id))) {
			agc_claude_reg v = agc_claude_registry_judge(ctx->procroot, pid, text.ptr, text.len, id);

			if (v == AGC_CLAUDE_REG_LIVE || v == AGC_CLAUDE_REG_FOREIGN) {
				w->live = true;
				/* a pid of another machine or namespace names no process here */
				agc_ls_gate_held(sink, w->gate, v == AGC_CLAUDE_REG_LIVE ? pid : 0,
						 AGC_WHY_REGISTRY);
			} else if (v == AGC_CLAUDE_REG_STALE)
				charge_stale(w, sink, d, e->d_name, pid, agc_json_str(j, "procStart"), tmp);
		}
		json_decref(j);
	}
	closedir(d);
	agc_buf_release(&text);
}

/* An orphan row for id (ls --orphans), unless it is listed already or has a transcript. */
static int add_orphan(rows *r, const recset *rec, agc_ls_sink *sink, const char *id)
{
	row *w;
	size_t j;

	if (rows_find(r, id) || rec_has(rec, id))
		return 0;
	if (!(w = AGC_ARRAY_PUSH(r, (size_t)1 << 26)))
		return -1;
	memcpy(w->id, id, AGC_UUID_LEN + 1);
	w->orphan = true;
	w->gate = agc_ls_gate_new(sink, claude_index());
	agc_ls_gate_id(sink, w->gate, id);
	if (r->n * 2 > r->nslots)
		return rows_index(r);
	for (j = hash_id(id) & (r->nslots - 1); r->slots[j]; j = (j + 1) & (r->nslots - 1))
		;
	r->slots[j] = (uint32_t)r->n;
	return 0;
}

/* SPEC "ls --orphans": the ids whose transcript is gone but whose other artifacts remain, by
 * the names discovery gives them (claude_discover): a session dir <S> in a projects/ dir, <S>
 * in the flat dirs of the config dir (side_uuid); its temp dirs go with it. Each is
 * charged with the rest by the passes that follow (charge_pending, charge_dir,
 * charge_temp_dir). The scratchpads (s/<hash of S>) name no id and stay with the bulk. */
static int collect_orphans(rows *r, const recset *rec, agc_ls_sink *sink, const agc_rootset *rs, int cfg,
			   int tmp, uid_t uid, const pending *pend, const char *const *side, size_t nside)
{
	char id[AGC_ID_MAX], also[AGC_ID_MAX];
	size_t i;

	for (i = 0; i < pend->n; i++) {
		const char *name = strrchr(pend->v[i].rel, '/') + 1;

		if (strlen(name) == AGC_UUID_LEN && add_orphan(r, rec, sink, name) < 0)
			return -1;
	}
	for (i = 0; i < nside; i++) {
		DIR *d = ls_dir(sink, &rs->v[R_CONFIG], cfg, side[i]);
		struct dirent *e;
		size_t seen = 0;

		while (d && (e = readdir(d)) && seen++ < DIR_ENTRIES_MAX)
			if (side_ids(dirfd(d), side[i], e->d_name, id, also) &&
			    !(also[0] && (rows_find(r, also) || rec_has(rec, also))) &&
			    add_orphan(r, rec, sink, id) < 0) {
				closedir(d);
				return -1;
			}
		if (d)
			closedir(d);
	}
	/* not the temp root's key dirs: claude-<uid>/ is shared by every config dir of the uid
	 * (CLAUDE_CONFIG_DIR profiles), so an id with no transcript here may be another's */
	(void)tmp;
	(void)uid;
	return 0;
}

static int claude_list(agc_ctx *ctx, const agc_rootset *rs, const agc_ls_opts *opts, agc_ls_sink *sink)
{
	static const char *const side[] = {"file-history", "session-env", "tasks", "image-cache",
					   "uploads", "jobs", "debug", "todos", "telemetry"};
	rows r = {0};
	pending pend = {0};
	recset rec = {0};
	scratch_ent *scratch = NULL;
	size_t nscratch = 0;
	int cfg = rs->v[R_CONFIG].exists ? agc_walk_open_root(rs->v[R_CONFIG].real) : -1;
	int tmp = rs->v[R_TEMP].exists ? agc_walk_open_root(rs->v[R_TEMP].real) : -1;
	size_t i;
	int rc = 0;

	r.keep_prompt = opts && opts->grep;
	if (cfg < 0)
		goto out;
	rec.on = opts && opts->orphans;
	rec.complete = true;
	if (list_projects(&r, sink, &rs->v[R_CONFIG], cfg, opts && opts->children, &pend, &rec) < 0) {
		rc = -1;
		goto out;
	}
	if (rows_index(&r) < 0) {
		rc = -1;
		goto out;
	}
	if (rec.on && !rec.complete) {
		/* a transcript that could not be seen would make a session's files look orphaned */
		char *msg = agc_strfmt("claude orphans not listed: %s", rec.why);

		if (msg && sink->warn)
			sink->warn(sink, msg);
		free(msg);
	} else if (rec.on) {
		if (rec.n > 1)
			qsort(rec.v, rec.n, sizeof(*rec.v), uuid_cmp);
		if (collect_orphans(&r, &rec, sink, rs, cfg, tmp, ctx->home_uid, &pend, side,
				    sizeof(side) / sizeof(side[0])) < 0) {
			rc = -1;
			goto out;
		}
	}
	/* SPEC "Sizes": every artifact discovery would find of each session, in one pass over
	 * each dir (not one discovery per session) */
	charge_pending(&r, sink, cfg, &pend);
	for (i = 0; i < sizeof(side) / sizeof(side[0]); i++)
		charge_dir(&r, sink, &rs->v[R_CONFIG], cfg, side[i]);
	charge_history(&r, cfg);
	if (tmp >= 0) {
		char top[64];
		DIR *d;
		struct dirent *e;

		scratch = r.n ? calloc(r.n, sizeof(*scratch)) : NULL;
		for (i = 0; scratch && i < r.n; i++)
			if (!r.v[i].parent) {
				agc_claude_scratch_name(r.v[i].id, scratch[nscratch].name);
				scratch[nscratch++].w = &r.v[i];
			}
		if (nscratch > 1)
			qsort(scratch, nscratch, sizeof(*scratch), cmp_scratch);
		snprintf(top, sizeof(top), "claude-%lu", (unsigned long)ctx->home_uid);
		d = ls_dir(sink, &rs->v[R_TEMP], tmp, top);
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.' || !agc_id_path_safe(e->d_name))
				continue;
			charge_temp_dir(&r, sink, &rs->v[R_TEMP], tmp, top, e->d_name, scratch, nscratch);
		}
		if (d)
			closedir(d);
	}
	mark_live(&r, ctx, sink, &rs->v[R_CONFIG], cfg, tmp);
	/* R5: a Claude process without a registry entry at the project of a session whose
	 * files under projects/ changed lately holds it, as arm_agent_cwd arms the gate */
	for (i = 0; i < r.n; i++) {
		struct stat pst;

		if (r.v[i].parent || !r.v[i].project || ctx->now_ms - r.v[i].proj_mtime > AGENT_CWD_WINDOW_MS)
			continue;
		if (stat(r.v[i].project, &pst) == 0 && S_ISDIR(pst.st_mode))
			agc_ls_gate_agent_cwd(sink, r.v[i].gate, &pst);
	}
	for (i = 0; i < r.n; i++) {
		agc_session_info info = {
			.agent = "claude",
			.id = r.v[i].id,
			.parent = r.v[i].parent,
			.project = r.v[i].project,
			.title = r.v[i].title,
			.prompt = r.v[i].prompt,
			.created_ms = r.v[i].created_ms,
			.updated_ms = r.v[i].updated_ms,
			.bytes = r.v[i].sz.bytes,
			.disk = r.v[i].sz.disk,
			.live = r.v[i].live,
			.orphan = r.v[i].orphan,
		};

		if (sink->add(sink, &info, r.v[i].gate) < 0) {
			rc = -1;
			break;
		}
		/* the sink keeps its own copy: this one goes now, so both are never held whole */
		free(r.v[i].title);
		free(r.v[i].prompt);
		r.v[i].title = r.v[i].prompt = NULL;
	}
out:
	for (i = 0; i < r.n; i++) {
		free(r.v[i].title);
		free(r.v[i].prompt);
	}
	for (i = 0; i < pend.n; i++)
		free(pend.v[i].rel);
	free(pend.v);
	free(rec.v);
	free(scratch);
	free(r.v);
	free(r.slots);
	agc_strpool_release(&r.projects);
	if (cfg >= 0)
		close(cfg);
	if (tmp >= 0)
		close(tmp);
	return rc;
}

/* The registry entry of pid (sessions/<pid>.json in the config root), parsed; its text in
 * text. NULL when there is none or it cannot be read or parsed. */
static json_t *registry_of(const agc_rootset *rs, pid_t pid, agc_buf *text)
{
	int cfg = rs->v[R_CONFIG].exists && rs->v[R_CONFIG].real ? agc_walk_open_root(rs->v[R_CONFIG].real) : -1;
	char name[32];
	json_t *j = NULL;
	DIR *d;

	if (cfg < 0)
		return NULL;
	d = agc_dir_at(cfg, "sessions");
	close(cfg);
	if (!d)
		return NULL;
	snprintf(name, sizeof(name), "%ld.json", (long)pid);
	if (agc_read_at(dirfd(d), name, REGISTRY_MAX, text) == 0)
		j = agc_json_parse(text->ptr, text->len);
	closedir(d);
	return j;
}

/* ps: the status a live registry entry of pid records (formats/claude-code.md §5: busy,
 * shell, idle, waiting), copied when it is a plain word. */
static bool claude_proc_state(agc_ctx *ctx, const agc_rootset *rs, pid_t pid, char *out, size_t size)
{
	agc_buf text = AGC_BUF_INIT_MAX(REGISTRY_MAX + 1);
	char id[AGC_ID_MAX];
	json_t *j = registry_of(rs, pid, &text);
	const char *sid = agc_json_str(j, "sessionId"), *st = agc_json_str(j, "status");
	bool yes = sid && st && agc_id_uuid(sid, id) == 0 && *st && strlen(st) < size &&
		   strspn(st, "abcdefghijklmnopqrstuvwxyz-_") == strlen(st) &&
		   agc_claude_registry_judge(ctx->procroot, pid, text.ptr, text.len, id) == AGC_CLAUDE_REG_LIVE;

	if (yes)
		memcpy(out, st, strlen(st) + 1);
	json_decref(j);
	agc_buf_release(&text);
	return yes;
}

/* stop: the session pid's registry entry names, when the entry proves it is this process:
 * well-formed, of this pid namespace (pidDomain absent or ours), and a procStart equal to the
 * kernel's start time of pid (plain digits, or through ps macOS's date text). What "counts as
 * live" for the gate (an entry that cannot be checked) proves nothing here: no process is
 * signalled on it. */
static bool claude_proc_session(agc_ctx *ctx, const agc_rootset *rs, pid_t pid, char *id_out)
{
	agc_buf text = AGC_BUF_INIT_MAX(REGISTRY_MAX + 1);
	json_t *j = registry_of(rs, pid, &text), *dom, *ps;
	const char *sid = agc_json_str(j, "sessionId");
	unsigned long long want;
	char mine[300];
	agc_proc st;
	bool yes;

	host_pid_domain(mine, sizeof(mine));
	dom = json_object_get(j, "pidDomain");
	ps = json_object_get(j, "procStart");
	yes = sid && agc_id_uuid(sid, id_out) == 0 &&
	      (!dom || (json_is_string(dom) && strcmp(json_string_value(dom), mine) == 0)) &&
	      json_is_string(ps) && agc_proc_stat(ctx->procroot, pid, &st) == 0 &&
	      (tick_count(json_string_value(ps), &want)
		       ? agc_proc_start_is_ticks(ctx->procroot, &st, want) == 1
		       : agc_claude_lstart_same(ctx->procroot, &st, json_string_value(ps)) == 1);
	json_decref(j);
	agc_buf_release(&text);
	return yes;
}

/* stop: the options whose value is the session the process runs */
static const char *const claude_session_opts[] = {"--resume", "-r", "--session-id", NULL};

const agc_adapter agc_adapter_claude = {
	.name = "claude",
	.bit = AGC_AGENT_CLAUDE,
	.id_canon = claude_id,
	.id_whole = claude_id_whole,
	.inside_parent = subagent_id,
	.roots = claude_roots,
	.discover = claude_discover,
	.registry = true,
	.list = claude_list,
	.env_names = claude_env_names,
	.n_env_names = sizeof(claude_env_names) / sizeof(claude_env_names[0]) - 1,
	.agent_proc = claude_agent_proc,
	.accounted = claude_accounted,
	.accounted_ls = claude_accounted_ls,
	.run_new = claude_run_new,
	.run_free = claude_run_free,
	.run_renew = claude_run_renew,
	.unnamed = claude_unnamed,
	.is_proc = claude_agent_proc,
	.stop_signal = SIGHUP,
	.proc_state = claude_proc_state,
	.proc_session = claude_proc_session,
	.session_opts = claude_session_opts,
};
