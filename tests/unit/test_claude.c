/* Unit tests of the Claude Code adapter's pure parts: judging a registry file
 * sessions/<pid>.json against the kernel's process table (SPEC R5), the project key derived
 * from a cwd, and the scratchpad dir name (formats/claude-code.md). Live processes are children
 * of the test, killed and reaped after every test. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agentgc/agentgc.h"
#include "adapters/claude.h"

#define ID_A "a9018be5-6555-4077-82af-13f81e4d4ca7"
#define ID_A_UPPER "A9018BE5-6555-4077-82AF-13F81E4D4CA7"
#define ID_B "0b5c3a1e-2f4d-4e6a-9b8c-7d6e5f4a3b2c"

static pid_t kids[4];
static size_t n_kids;

/* A child that does nothing until it is killed in teardown. */
static pid_t spawn_live(void)
{
	pid_t pid;

	assert_true(n_kids < sizeof(kids) / sizeof(kids[0]));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	kids[n_kids++] = pid;
	return pid;
}

static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < n_kids; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	n_kids = 0;
	return 0;
}

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot), read independently: the
 * fields are counted after the last ')', since the command name may hold spaces and parens. */
static unsigned long long start_ticks(pid_t pid)
{
	char path[64], text[4096], *p, *save = NULL, *tok;
	unsigned long long v = 0;
	FILE *f;
	size_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strrchr(text, ')');
	assert_non_null(p);
	/* After ") " comes field 3 (the state). */
	for (field = 3, tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 22) {
			v = strtoull(tok, NULL, 10);
			break;
		}
	}
	assert_int_equal(field, 22);
	return v;
}

/* Boot time in epoch ms from btime in /proc/stat. */
static int64_t boot_ms(void)
{
	char line[512];
	long long bt = -1;
	FILE *f = fopen("/proc/stat", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	fclose(f);
	assert_true(bt > 0);
	return (int64_t)bt * 1000;
}

/* When the process started, in epoch ms, as Claude's startedAt would say it. */
static int64_t started_ms(pid_t pid)
{
	long hz = sysconf(_SC_CLK_TCK);

	assert_true(hz > 0);
	return boot_ms() + (int64_t)(start_ticks(pid) * 1000ULL / (unsigned long long)hz);
}

/* A pid that was alive a moment ago and is now dead and reaped; *ticks is its start time. */
static pid_t dead_pid(unsigned long long *ticks)
{
	int p[2];
	char c;
	pid_t pid;
	int status;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[1]);
		(void)!read(p[0], &c, 1); /* until the parent closes its end */
		_exit(0);
	}
	close(p[0]);
	*ticks = start_ticks(pid);
	close(p[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	/* Dead and reaped; a new process may take the pid only after the pid space wraps. */
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	return pid;
}

static agc_claude_reg judge(pid_t pid, const char *text, const char *id)
{
	return agc_claude_registry_judge("/proc", pid, text, strlen(text), id);
}

/* A registry file as Claude writes it: text of the fields after "pid" and "sessionId". */
static const char *reg(char *buf, size_t n, pid_t pid, const char *sid, const char *rest)
{
	snprintf(buf, n, "{\"pid\":%ld,\"sessionId\":\"%s\",\"cwd\":\"/home/dev/work\",%s,\"kind\":\"interactive\"}",
		 (long)pid, sid, rest);
	return buf;
}

/* R5: the registry names the session, its pid is alive, and procStart equals the kernel's start
 * time: live. */
static void test_claude_registry_live(void **state)
{
	pid_t pid = spawn_live();
	char text[1024], ps[64];

	(void)state;
	snprintf(ps, sizeof(ps), "\"procStart\":\"%llu\"", start_ticks(pid));
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, ps), ID_A), AGC_CLAUDE_REG_LIVE);
	/* procStart as a number is the same tick count. */
	snprintf(ps, sizeof(ps), "\"procStart\":%llu", start_ticks(pid));
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, ps), ID_A), AGC_CLAUDE_REG_LIVE);
}

/* R5: a pid reused by another process (a different start time) is a stale entry. */
static void test_claude_registry_reused_pid(void **state)
{
	pid_t pid = spawn_live();
	char text[1024], ps[64];

	(void)state;
	snprintf(ps, sizeof(ps), "\"procStart\":\"%llu\"", start_ticks(pid) + 1);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, ps), ID_A), AGC_CLAUDE_REG_STALE);
	snprintf(ps, sizeof(ps), "\"procStart\":\"%llu\"", start_ticks(pid) - 1);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, ps), ID_A), AGC_CLAUDE_REG_STALE);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, "\"procStart\":\"0\""), ID_A),
			 AGC_CLAUDE_REG_STALE);
}

/* R5: a dead pid is stale whatever the file says: matching procStart, no procStart, a startedAt
 * that cannot be checked, or text that does not parse at all. */
static void test_claude_registry_dead_pid(void **state)
{
	unsigned long long ticks;
	pid_t pid = dead_pid(&ticks);
	char text[1024], ps[64];

	(void)state;
	snprintf(ps, sizeof(ps), "\"procStart\":\"%llu\"", ticks);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, ps), ID_A), AGC_CLAUDE_REG_STALE);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, "\"startedAt\":true"), ID_A),
			 AGC_CLAUDE_REG_STALE);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, "\"startedAt\":NaN"), ID_A),
			 AGC_CLAUDE_REG_STALE);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A_UPPER, "\"startedAt\":1e400"), ID_A),
			 AGC_CLAUDE_REG_STALE);
	/* Another session's entry stays another session's, dead or not. */
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_B, ps), ID_A), AGC_CLAUDE_REG_OTHER);
}

/* R5: without procStart, a startedAt that is not a finite positive number cannot be checked and
 * counts as live (NaN, infinities and overflowing numbers are not even JSON). */
static void test_claude_registry_started_at_unchecked(void **state)
{
	static const char *bad[] = {
		"\"startedAt\":NaN",
		"\"startedAt\":Infinity",
		"\"startedAt\":-Infinity",
		"\"startedAt\":1e400",
		"\"startedAt\":-1e400",
		"\"startedAt\":1e300",
		"\"startedAt\":99999999999999999",
		"\"startedAt\":true",
		"\"startedAt\":false",
		"\"startedAt\":\"x\"",
		"\"startedAt\":\"1795984671798\"",
		"\"startedAt\":null",
		"\"startedAt\":0",
		"\"startedAt\":-5",
		"\"startedAt\":[]",
		"\"startedAt\":{}",
		"\"version\":\"2.1.332\"", /* no startedAt at all */
	};
	pid_t pid = spawn_live();
	char text[1024], huge[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		agc_claude_reg r = judge(pid, reg(text, sizeof(text), pid, ID_A, bad[i]), ID_A);

		if (r != AGC_CLAUDE_REG_LIVE)
			fail_msg("%s: judged %d, not live", bad[i], (int)r);
	}
	/* A 400-digit integer. */
	memcpy(huge, "\"startedAt\":", 12);
	memset(huge + 12, '7', 400);
	huge[412] = '\0';
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, huge), ID_A), AGC_CLAUDE_REG_LIVE);
	/* The same, in upper case in the file. */
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A_UPPER, "\"startedAt\":NaN"), ID_A),
			 AGC_CLAUDE_REG_LIVE);
}

/* R5: a file that cannot be parsed names the session when its text does; it is live for a live
 * pid and another session's when the id is not in it. */
static void test_claude_registry_unparseable(void **state)
{
	pid_t pid = spawn_live();

	(void)state;
	assert_int_equal(judge(pid, "{\"sessionId\":\"" ID_A "\",\"startedAt\":", ID_A), AGC_CLAUDE_REG_LIVE);
	assert_int_equal(judge(pid, "garbage " ID_A_UPPER " garbage", ID_A), AGC_CLAUDE_REG_LIVE);
	assert_int_equal(judge(pid, "{\"sessionId\":\"" ID_B "\",\"startedAt\":NaN}", ID_A),
			 AGC_CLAUDE_REG_OTHER);
	assert_int_equal(judge(pid, "", ID_A), AGC_CLAUDE_REG_OTHER);
	/* The id cut short by the end of the text is not named. */
	assert_int_equal(agc_claude_registry_judge("/proc", pid, "x " ID_A, 2 + 35, ID_A),
			 AGC_CLAUDE_REG_OTHER);
}

/* R4, R5: an unparseable file whose sessionId is another session's, and which mentions this id
 * only in passing (a name, a cwd), is not this session's stale entry: purging this session must
 * not take another session's registry file (and its .key files and socket) with it. */
static void test_claude_registry_unparseable_names_other(void **state)
{
	unsigned long long ticks;
	pid_t pid = dead_pid(&ticks);
	static const char text[] = "{\"pid\":1,\"sessionId\":\"" ID_B "\",\"name\":\"resume " ID_A
				   "\",\"startedAt\":NaN}";

	(void)state;
	(void)ticks;
	if (judge(pid, text, ID_A) == AGC_CLAUDE_REG_STALE)
		fail_msg("another session's stale registry file would go with this session's purge");
}

/* R5: startedAt (epoch ms) is checked against the kernel's start time within a tolerance. */
static void test_claude_registry_started_at(void **state)
{
	pid_t pid = spawn_live();
	int64_t ms = started_ms(pid);
	char text[1024], sa[64];

	(void)state;
	snprintf(sa, sizeof(sa), "\"startedAt\":%lld", (long long)ms);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, sa), ID_A), AGC_CLAUDE_REG_LIVE);
	/* Claude takes startedAt a little after the process starts. */
	snprintf(sa, sizeof(sa), "\"startedAt\":%lld", (long long)ms + 1000);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, sa), ID_A), AGC_CLAUDE_REG_LIVE);
	snprintf(sa, sizeof(sa), "\"startedAt\":%lld.5", (long long)ms);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, sa), ID_A), AGC_CLAUDE_REG_LIVE);
	/* An hour off either way: another process took the pid. */
	snprintf(sa, sizeof(sa), "\"startedAt\":%lld", (long long)ms + 3600000);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, sa), ID_A), AGC_CLAUDE_REG_STALE);
	snprintf(sa, sizeof(sa), "\"startedAt\":%lld", (long long)ms - 3600000);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, sa), ID_A), AGC_CLAUDE_REG_STALE);
	/* procStart, when present, decides over startedAt. */
	snprintf(sa, sizeof(sa), "\"startedAt\":%lld,\"procStart\":\"%llu\"", (long long)ms + 3600000,
		 start_ticks(pid));
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, sa), ID_A), AGC_CLAUDE_REG_LIVE);
}

/* R5, R4: a registry file naming another session (or none) is not this session's. */
static void test_claude_registry_other(void **state)
{
	pid_t pid = spawn_live();
	char text[1024], ps[64];

	(void)state;
	snprintf(ps, sizeof(ps), "\"procStart\":\"%llu\"", start_ticks(pid));
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_B, ps), ID_A), AGC_CLAUDE_REG_OTHER);
	/* A prefix twin is another session. */
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A "0", ps), ID_A), AGC_CLAUDE_REG_OTHER);
	assert_int_equal(judge(pid, "{\"pid\":1,\"startedAt\":1}", ID_A), AGC_CLAUDE_REG_OTHER);
	assert_int_equal(judge(pid, "{\"sessionId\":7}", ID_A), AGC_CLAUDE_REG_OTHER);
	assert_int_equal(judge(pid, "[\"" ID_A "\"]", ID_A), AGC_CLAUDE_REG_OTHER);
	/* The id merely mentioned in another field does not make it this session's entry. */
	snprintf(text, sizeof(text), "{\"sessionId\":\"%s\",\"name\":\"%s\",%s}", ID_B, ID_A, ps);
	assert_int_equal(judge(pid, text, ID_A), AGC_CLAUDE_REG_OTHER);
}

/* R1, R5: the file's sessionId in upper case names the session (ids compare in any case). */
static void test_claude_registry_upper_case(void **state)
{
	pid_t pid = spawn_live();
	char text[1024], ps[64];

	(void)state;
	snprintf(ps, sizeof(ps), "\"procStart\":\"%llu\"", start_ticks(pid));
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A_UPPER, ps), ID_A), AGC_CLAUDE_REG_LIVE);
	snprintf(ps, sizeof(ps), "\"procStart\":\"%llu\"", start_ticks(pid) + 5);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A_UPPER, ps), ID_A), AGC_CLAUDE_REG_STALE);
}

/* This host's pid domain as Claude writes it: "linux:" machine-id ":" the pid namespace link. */
static void host_domain(char *out, size_t n)
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

/* R5: a pid of another pid namespace or machine cannot be checked from here: live; the host's
 * own domain is checked as usual. */
static void test_claude_registry_pid_domain(void **state)
{
	pid_t pid = spawn_live();
	char text[1024], rest[512], dom[300];

	(void)state;
	snprintf(rest, sizeof(rest), "\"procStart\":\"%llu\",\"pidDomain\":\"linux:other-machine:pid:[1]\"",
		 start_ticks(pid) + 1);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, rest), ID_A), AGC_CLAUDE_REG_FOREIGN);
	/* a pidDomain that is not a string cannot be compared: foreign too */
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, "\"procStart\":\"1\",\"pidDomain\":7"), ID_A),
			 AGC_CLAUDE_REG_FOREIGN);
	host_domain(dom, sizeof(dom));
	snprintf(rest, sizeof(rest), "\"procStart\":\"%llu\",\"pidDomain\":\"%s\"", start_ticks(pid) + 1, dom);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, rest), ID_A), AGC_CLAUDE_REG_STALE);
	snprintf(rest, sizeof(rest), "\"procStart\":\"%llu\",\"pidDomain\":\"%s\"", start_ticks(pid), dom);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, rest), ID_A), AGC_CLAUDE_REG_LIVE);
}

/* R5: a procStart that is not a tick count (macOS date text) cannot be checked here: live. */
static void test_claude_registry_proc_start_text(void **state)
{
	pid_t pid = spawn_live();
	char text[1024];

	(void)state;
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A,
					"\"procStart\":\"Wed Jul 29 14:40:53 2026\""), ID_A),
			 AGC_CLAUDE_REG_LIVE);
}

/* R5: only plain decimal digits are a start time. A sign, spaces, an exponent, a leading '+',
 * an empty string, a number too large, a bool or null cannot be checked: live, never stale
 * ("-1" read by strtoull was a huge number that matched nothing, so a live session went). */
static void test_claude_registry_proc_start_strict(void **state)
{
	static const char *const bad[] = {
		"\"-1\"", "\" 123\"", "\"123 \"", "\"+5\"", "\"1e5\"", "\"\"", "\"-0\"", "\"0x10\"",
		"\"99999999999999999999999\"", "-1", "true", "null", "1.5", "{}", "[]",
	};
	pid_t pid = spawn_live();
	char text[1024], rest[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(rest, sizeof(rest), "\"startedAt\":1,\"procStart\":%s", bad[i]);
		if (judge(pid, reg(text, sizeof(text), pid, ID_A, rest), ID_A) != AGC_CLAUDE_REG_LIVE)
			fail_msg("procStart %s was not live", bad[i]);
	}
	/* leading zeros are still plain digits: compared by value */
	snprintf(rest, sizeof(rest), "\"procStart\":\"00%llu\"", start_ticks(pid));
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, rest), ID_A), AGC_CLAUDE_REG_LIVE);
	snprintf(rest, sizeof(rest), "\"procStart\":\"00%llu\"", start_ticks(pid) + 1);
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, rest), ID_A), AGC_CLAUDE_REG_STALE);
	/* startedAt a huge integer: not a time that can be checked */
	assert_int_equal(judge(pid, reg(text, sizeof(text), pid, ID_A, "\"startedAt\":9223372036854775807"), ID_A),
			 AGC_CLAUDE_REG_LIVE);
}

/* R1: a sub-agent id is "a" + 16 lower-case hex (formats/claude-code.md 6); nothing else in
 * subagents/ names one. */
static void test_claude_subagent_file(void **state)
{
	static const char *const bad[] = {
		"agent-e.jsonl", "agent-.jsonl", "agent-a9018be5-6555-4077-82af-13f81e4d4ca7.jsonl",
		"agent-a0123456789abcde.jsonl", "agent-a0123456789abcdef0.jsonl", "agent-A0123456789abcdef.jsonl",
		"agent-a0123456789ABCDEF.jsonl", "agent-b0123456789abcdef.jsonl", "agent-a0123456789abcdef.json",
		"agent-a0123456789abcdef.jsonl.tmp", "agent-a0123456789abcdef.meta.json", "journal.jsonl",
		"agent-a0123456789abcdeg.jsonl", "xagent-a0123456789abcdef.jsonl",
	};
	char out[AGC_CLAUDE_AGENT_ID_LEN + 1];
	size_t i;

	(void)state;
	assert_true(agc_claude_subagent_file("agent-a0123456789abcdef.jsonl", out));
	assert_string_equal(out, "a0123456789abcdef");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (agc_claude_subagent_file(bad[i], out))
			fail_msg("'%s' was taken for a sub-agent", bad[i]);
}

static void key_is(const char *cwd, const char *want)
{
	char out[512];

	memset(out, 'Z', sizeof(out));
	agc_claude_project_key(cwd, out, 256);
	if (strcmp(out, want) != 0)
		fail_msg("key of '%s' is '%s', not '%s'", cwd, out, want);
}

/* The examples of formats/claude-code.md 1.1: every UTF-16 unit that is not [A-Za-z0-9] is '-'. */
static void test_claude_project_key(void **state)
{
	(void)state;
	key_is("/home/dev/work/my_proj.v2", "-home-dev-work-my-proj-v2");
	key_is("/home/dev/work/caf\xc3\xa9 \xf0\x9f\x98\x80x", "-home-dev-work-caf----x");
	key_is("/", "-");
	key_is("/Home/Dev", "-Home-Dev");
	key_is("/a--b", "-a--b");
}

/* Sanitised form of an ASCII cwd, and Java's String.hashCode of it in base 36 (independently of
 * the adapter). */
static void ascii_sanitise(const char *s, char *out)
{
	for (; *s; s++)
		*out++ = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) ? *s : '-';
	*out = '\0';
}

static void java_hash_b36(const char *s, char *out)
{
	int32_t h = 0;
	int64_t v;
	char tmp[16];
	int n = 0, i;

	for (; *s; s++)
		h = (int32_t)((uint32_t)h * 31u + (unsigned char)*s);
	v = h < 0 ? -(int64_t)h : h;
	do {
		tmp[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
		v /= 36;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
}

/* formats/claude-code.md 1.1: over 200 units, the key is the first 200 sanitised units, '-'
 * and the base-36 absolute Java hash of the original cwd. */
static void test_claude_project_key_long(void **state)
{
	char cwd[400], want[400], h[16];
	int i;

	(void)state;
	strcpy(cwd, "/home/dev/work");
	for (i = 0; i < 7; i++)
		sprintf(cwd + strlen(cwd), "/dir_with.dots-and_underscores%02d", i);
	assert_int_equal(strlen(cwd), 238);
	ascii_sanitise(cwd, want);
	strcpy(want + 200, "-taajg4");
	key_is(cwd, want);
	/* The documented suffix is the Java hash. */
	java_hash_b36(cwd, h);
	assert_string_equal(h, "taajg4");

	/* Exactly 200 units: no suffix; 201: the suffix appears. */
	memset(cwd, 'a', 200);
	cwd[0] = '/';
	cwd[200] = '\0';
	ascii_sanitise(cwd, want);
	key_is(cwd, want);
	cwd[200] = 'b';
	cwd[201] = '\0';
	ascii_sanitise(cwd, want);
	java_hash_b36(cwd, h);
	want[200] = '-';
	strcpy(want + 201, h);
	key_is(cwd, want);
}

/* An emoji counts two UTF-16 units towards the cap of 200, and the hash runs over units. */
static void test_claude_project_key_long_utf16(void **state)
{
	char cwd[400], want[400];
	char out[512];

	(void)state;
	/* "/" + 198 'a' + an emoji (2 units) = 201 units: the cap is passed by the emoji's second unit. */
	cwd[0] = '/';
	memset(cwd + 1, 'a', 198);
	memcpy(cwd + 199, "\xf0\x9f\x98\x80", 5);
	want[0] = '-';
	memset(want + 1, 'a', 198);
	want[199] = '-';
	want[200] = '\0';
	agc_claude_project_key(cwd, out, 256);
	assert_int_equal(strncmp(out, want, 200), 0);
	assert_int_equal(out[200], '-');
	assert_true(strlen(out) > 201);
}

/* The scratchpad name, computed here with nettle: the first 8 bytes of sha256(id) as a
 * big-endian integer, mod 10^12, as 12 zero-padded digits. */
static void scratch_expected(const char *id, char out[13])
{
	struct sha256_ctx h;
	uint8_t d[SHA256_DIGEST_SIZE];
	unsigned long long v = 0;
	int i;

	sha256_init(&h);
	sha256_update(&h, strlen(id), (const uint8_t *)id);
	sha256_digest(&h, sizeof(d), d);
	for (i = 0; i < 8; i++)
		v = v << 8 | d[i];
	snprintf(out, 13, "%012llu", v % 1000000000000ULL);
}

/* formats/claude-code.md 2: T/claude-<uid>/s/<12 digits>/scratchpad belongs to the session. */
static void test_claude_scratch_name(void **state)
{
	static const char *ids[] = {ID_A, "00000000-0000-4000-8000-000000000081"};
	char got[13], want[13];
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		memset(got, 'Z', sizeof(got));
		agc_claude_scratch_name(ids[i], got);
		scratch_expected(ids[i], want);
		assert_string_equal(got, want);
		assert_int_equal(strlen(got), 12);
	}
	/* The same values, from another sha256 implementation. */
	agc_claude_scratch_name(ID_A, got);
	assert_string_equal(got, "781617910378");
	agc_claude_scratch_name("00000000-0000-4000-8000-000000000081", got);
	assert_string_equal(got, "000838037303"); /* zero padded */
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_claude_registry_live),
		T(test_claude_registry_reused_pid),
		T(test_claude_registry_dead_pid),
		T(test_claude_registry_started_at_unchecked),
		T(test_claude_registry_unparseable),
		T(test_claude_registry_unparseable_names_other),
		T(test_claude_registry_started_at),
		T(test_claude_registry_other),
		T(test_claude_registry_upper_case),
		T(test_claude_registry_pid_domain),
		T(test_claude_registry_proc_start_text),
		T(test_claude_registry_proc_start_strict),
		T(test_claude_subagent_file),
		T(test_claude_project_key),
		T(test_claude_project_key_long),
		T(test_claude_project_key_long_utf16),
		T(test_claude_scratch_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
