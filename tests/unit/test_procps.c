/* The ps backend's readers (proc-ps.c): ps lines with their start times taken as UTC whatever
 * the caller's time zone and locale (a daylight saving change must not move a live holder's
 * start and make it look like a reused pid, R5), and lsof's -F output. */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "agc_test.h"
#include "proc-ps.h"

/* 2026-07-29T14:40:53Z */
#define T1 1785336053LL

static void test_procps_lstart_utc(void **state)
{
	static const char *const zones[] = {"UTC0", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"};
	int64_t t;
	const char *end;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		setenv("TZ", zones[i], 1);
		tzset();
		assert_int_equal(agc_procps_parse_lstart("Wed Jul 29 14:40:53 2026 rest", &end, &t), 0);
		assert_int_equal(t, T1);
		assert_string_equal(end, " rest");
		/* a single-digit day is padded with a space, as ps prints it */
		assert_int_equal(agc_procps_parse_lstart("Mon Mar  2 01:00:00 2026", NULL, &t), 0);
		assert_int_equal(t, 1772413200LL);
		/* the hour a spring-forward skips in New York and Berlin is a plain UTC hour */
		assert_int_equal(agc_procps_parse_lstart("Sun Mar  8 02:30:00 2026", NULL, &t), 0);
		assert_int_equal(t, 1772937000LL);
	}
	unsetenv("TZ");
	tzset();
}

static void test_procps_lstart_bad(void **state)
{
	static const char *const bad[] = {
		"", "Wed Jul 29 14:40:53", "Wed Jux 29 14:40:53 2026", "Wed Jul 32 14:40:53 2026",
		"Wed Jul 29 24:40:53 2026", "Wed Jul 29 14:60:53 2026", "Wed Jul 29 14:40:53 1969",
		"Mi. Juli 29 14:40:53 2026", "Wed Jul 29 14-40-53 2026", "Wed Jul -1 14:40:53 2026",
	};
	int64_t t;
	size_t i;

	(void)state;
	/* a locale that names months otherwise does not change what is read */
	setlocale(LC_ALL, "");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (agc_procps_parse_lstart(bad[i], NULL, &t) == 0)
			fail_msg("'%s' was read as %lld", bad[i], (long long)t);
	setlocale(LC_ALL, "C");
}

static void test_procps_line(void **state)
{
	agc_procps_ent e;

	(void)state;
	assert_int_equal(agc_procps_parse_line("  4242     1  1000 Ss   Wed Jul 29 14:40:53 2026 /usr/bin/claude --resume 0b9e8a4e-5f0f-4a5e-9d4b-6c1f4f0a1b2c", &e), 0);
	assert_int_equal(e.pid, 4242);
	assert_int_equal(e.ppid, 1);
	assert_int_equal(e.uid, 1000);
	assert_int_equal(e.state, 'S');
	assert_int_equal(e.start, T1);
	assert_int_equal(e.cmdlen, strlen("/usr/bin/claude --resume 0b9e8a4e-5f0f-4a5e-9d4b-6c1f4f0a1b2c"));
	assert_memory_equal(e.cmd, "/usr/bin/claude --resume", 24);
	/* a kernel thread, a zombie */
	assert_int_equal(agc_procps_parse_line("    2     0     0 S    Mon Dec  7 03:05:53 2026 [kthreadd]", &e), 0);
	assert_string_equal(e.cmd, "[kthreadd]");
	assert_int_equal(agc_procps_parse_line("  77    76   0 Z    Mon Dec  7 03:05:53 2026 ", &e), 0);
	assert_int_equal(e.state, 'Z');
	assert_int_equal(e.cmdlen, 0);
	/* what is no process line */
	assert_int_equal(agc_procps_parse_line("  PID  PPID   UID STAT STARTED COMMAND", &e), -1);
	assert_int_equal(agc_procps_parse_line("-1 1 0 S Mon Dec  7 03:05:53 2026 x", &e), -1);
	assert_int_equal(agc_procps_parse_line("0 1 0 S Mon Dec  7 03:05:53 2026 x", &e), -1);
	assert_int_equal(agc_procps_parse_line("99999999999 1 0 S Mon Dec  7 03:05:53 2026 x", &e), -1);
	assert_int_equal(agc_procps_parse_line("12 1 0 S yesterday x", &e), -1);
	assert_int_equal(agc_procps_parse_line("12 1 0", &e), -1);
}

typedef struct got {
	char fd[16];
	pid_t pid;
	dev_t dev;
	ino_t ino;
	char name[64];
} got;

typedef struct gots {
	got v[16];
	size_t n;
} gots;

static int got_cb(const agc_procps_file *f, void *ud)
{
	gots *g = ud;

	assert_true(g->n < 16);
	snprintf(g->v[g->n].fd, sizeof(g->v[g->n].fd), "%s", f->fd);
	g->v[g->n].pid = f->pid;
	g->v[g->n].dev = f->dev;
	g->v[g->n].ino = f->ino;
	snprintf(g->v[g->n].name, sizeof(g->v[g->n].name), "%s", f->name ? f->name : "");
	g->n++;
	return 0;
}

static void test_procps_lsof(void **state)
{
	char text[] = "p100\nfcwd\nD0xfe00\ni42\nn/home/u/w\nfrtd\nD0xfe00\ni2\nn/\n"
		      "f3\nD0x803\ni77\nn/home/u/.claude/projects/-w/x.jsonl\n"
		      "f4\nn/dev/pts/0\n"               /* no device nor inode: not one */
		      "f5\nD0x803\ni\nnpipe\n"            /* an empty inode: not one */
		      "p200\nfmem\nD0x10303\ni9\nn/lib/x.so\nf1\nDzz\ni8\nnbad\n"
		      "pjunk\nf7\nD0x1\ni1\nnorphan\n";  /* no valid pid: not one */
	gots g;

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_int_equal(agc_procps_parse_lsof(text, strlen(text), got_cb, &g), 0);
	assert_int_equal(g.n, 4);
	assert_string_equal(g.v[0].fd, "cwd");
	assert_int_equal(g.v[0].pid, 100);
	assert_int_equal(g.v[0].dev, 0xfe00);
	assert_int_equal(g.v[0].ino, 42);
	assert_string_equal(g.v[0].name, "/home/u/w");
	assert_string_equal(g.v[1].fd, "rtd");
	assert_string_equal(g.v[2].fd, "3");
	assert_int_equal(g.v[2].ino, 77);
	assert_int_equal(g.v[2].dev, 0x803);
	assert_string_equal(g.v[3].fd, "mem");
	assert_int_equal(g.v[3].pid, 200);
	assert_int_equal(g.v[3].dev, 0x10303);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procps_lstart_utc),
		cmocka_unit_test(test_procps_lstart_bad),
		cmocka_unit_test(test_procps_line),
		cmocka_unit_test(test_procps_lsof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
