/* Unit tests of locks.c: the kinds of shared-file locks, the kernel's lock table as agentgc
 * reads it, and a session's writer lock taken as Codex takes its thread-writer-locks/<T>.lock
 * (under .coordination.lock). Everything happens in a fresh dir under $TMPDIR; children that
 * hold a lock are killed and reaped in teardown. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "agentgc/agentgc.h"
#include "error.h"
#include "locks.h"

static int dfd = -1;
static pid_t child = -1;

#define P(rel) t_path(rel)

static void touch(const char *rel)
{
	t_put(rel, "", 0644, 0);
}

static bool exists(const char *rel)
{
	return t_exists(rel);
}

static void hold(const char *rel, int how)
{
	child = t_hold_flock(rel, how);
}

static void let_go(void)
{
	t_let_go(&child);
}

static int setup(void **state)
{
	(void)state;
	if (t_setup_dir("locks") < 0)
		return -1;
	dfd = open(t_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	let_go();
	close(dfd);
	return t_teardown_dir();
}

typedef struct pids {
	pid_t v[8];
	size_t n;
} pids;

static void pid_cb(pid_t pid, void *ud)
{
	pids *p = ud;

	if (p->n < 8)
		p->v[p->n++] = pid;
}

/* The kernel's table names the holder of a flock, exclusive or shared, by pid; a file nobody
 * locks has no line. */
static void test_flocks_of_real(void **state)
{
	struct stat st;
	pids p = {0};
	bool differs;
	int rc;

	(void)state;
	touch("t.lock");
	assert_int_equal(stat(P("t.lock"), &st), 0);
	rc = agc_flocks_of("/proc", st.st_dev, st.st_ino, pid_cb, &p, &differs);
	if (rc == 0)
		skip(); /* no /proc/locks here */
	assert_int_equal(rc, 1);
	assert_int_equal(p.n, 0);
	hold("t.lock", LOCK_EX);
	rc = agc_flocks_of("/proc", st.st_dev, st.st_ino, pid_cb, &p, &differs);
	assert_int_equal(rc, 1);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0], child);
	assert_false(differs);
	let_go();
	p.n = 0;
	hold("t.lock", LOCK_SH);
	assert_int_equal(agc_flocks_of("/proc", st.st_dev, st.st_ino, pid_cb, &p, &differs), 1);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0], child);
}

/* The table's format as the kernel writes it: hex device numbers, a waiter's "->" line, a POSIX
 * lock, an OFD lock (pid -1), a line on the same inode of another device (btrfs, overlayfs:
 * told apart, for a probe to confirm), and a line too long for the format. */
static void test_flocks_of_format(void **state)
{
	FILE *f;
	pids p = {0};
	bool differs;
	char line[6000];

	(void)state;
	assert_int_equal(mkdir(P("proc"), 0755), 0);
	f = fopen(P("proc/locks"), "w");
	assert_non_null(f);
	memset(line, 'x', sizeof(line) - 2);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	fputs(line, f);
	fputs("1: FLOCK  ADVISORY  WRITE 41872 fd:1a:1835098 0 EOF\n", f);
	fputs("1: -> FLOCK  ADVISORY  WRITE 41873 fd:1a:1835098 0 EOF\n", f);
	fputs("2: POSIX  ADVISORY  READ 555 fd:1a:1835098 0 EOF\n", f);
	fputs("3: OFDLCK ADVISORY  READ -1 fd:1a:1835098 0 EOF\n", f);
	fputs("4: FLOCK  ADVISORY  WRITE 777 fd:1a:99 0 EOF\n", f);
	fputs("5: FLOCK  ADVISORY  WRITE 888 00:2f:77 0 EOF", f); /* no newline at the end */
	fclose(f);
	assert_int_equal(agc_flocks_of(P("proc"), makedev(0xfd, 0x1a), 1835098, pid_cb, &p, &differs), 1);
	assert_int_equal(p.n, 4);
	assert_int_equal(p.v[0], 41872);
	assert_int_equal(p.v[1], 41873);
	assert_int_equal(p.v[2], 555);
	assert_int_equal(p.v[3], 0);
	assert_false(differs);
	p.n = 0;
	assert_int_equal(agc_flocks_of(P("proc"), makedev(0x08, 0x02), 77, pid_cb, &p, &differs), 1);
	assert_int_equal(p.n, 0);
	assert_true(differs);
	/* no table at all: another system, the caller probes */
	assert_int_equal(agc_flocks_of(P("nothing"), makedev(0xfd, 0x1a), 1835098, pid_cb, &p, &differs), 0);
}

/* The probe: held (exclusive or shared) is 1, free is 0, a missing lock is not created; the
 * probe takes nothing for longer than its look. */
static void test_sesslock_probe(void **state)
{
	(void)state;
	touch(".coordination.lock");
	assert_int_equal(agc_sesslock_probe(dfd, ".coordination.lock", "t.lock"), AGC_ENOTFOUND);
	assert_false(exists("t.lock"));
	touch("t.lock");
	assert_int_equal(agc_sesslock_probe(dfd, ".coordination.lock", "t.lock"), 0);
	hold("t.lock", LOCK_EX);
	assert_int_equal(agc_sesslock_probe(dfd, ".coordination.lock", "t.lock"), 1);
	let_go();
	hold("t.lock", LOCK_SH);
	assert_int_equal(agc_sesslock_probe(dfd, ".coordination.lock", "t.lock"), 1);
	let_go();
	/* without a coordination file (no writer protocol ran here) the probe still answers */
	assert_int_equal(unlink(P(".coordination.lock")), 0);
	assert_int_equal(agc_sesslock_probe(dfd, ".coordination.lock", "t.lock"), 0);
	assert_false(exists(".coordination.lock"));
	/* a FIFO in the lock's place is never opened (R8) */
	assert_int_equal(mkfifo(P("f.lock"), 0644), 0);
	assert_int_equal(agc_sesslock_probe(dfd, ".coordination.lock", "f.lock"), -1);
}

/* A coordination lock that stays held (a writer stuck in its protocol) stops the probe with an
 * error, never a "free". */
static void test_sesslock_coord_held(void **state)
{
	(void)state;
	touch(".coordination.lock");
	touch("t.lock");
	hold(".coordination.lock", LOCK_EX);
	assert_int_equal(agc_sesslock_probe(dfd, ".coordination.lock", "t.lock"), -1);
	assert_non_null(strstr(agc_error_last(), "coordination"));
}

/* Taken for a purge: another's try fails while it is held; released with unlink, the file is
 * gone and the lock free; released without, the file stays and is free. */
static void test_sesslock_take_release(void **state)
{
	int fd = -1, other;
	bool made = true;

	(void)state;
	touch(".coordination.lock");
	touch("t.lock");
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "t.lock", false, &fd, &made), 0);
	assert_true(fd >= 0);
	other = open(P("t.lock"), O_RDONLY);
	assert_true(other >= 0);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	assert_int_equal(agc_sesslock_release(dfd, ".coordination.lock", "t.lock", fd, false), 0);
	assert_true(exists("t.lock"));
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
	flock(other, LOCK_UN);
	close(other);
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "t.lock", false, &fd, &made), 0);
	assert_int_equal(agc_sesslock_release(dfd, ".coordination.lock", "t.lock", fd, true), 1);
	assert_false(exists("t.lock"));
	assert_true(exists(".coordination.lock"));
	/* nothing to take */
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "t.lock", false, &fd, &made), AGC_ENOTFOUND);
	assert_false(exists("t.lock"));
}

/* Held by another process: the take fails (in use), and the file is not removed. */
static void test_sesslock_take_held(void **state)
{
	int fd = -1;
	bool made = false;

	(void)state;
	touch(".coordination.lock");
	touch("t.lock");
	hold("t.lock", LOCK_SH);
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "t.lock", false, &fd, &made), AGC_EINUSE);
	assert_int_equal(fd, -1);
	assert_true(exists("t.lock"));
}

/* A lock file replaced while we held the old one (a writer made a new one after a stale sweep)
 * is another's: the release lets go and removes nothing. */
static void test_sesslock_release_replaced(void **state)
{
	int fd = -1;
	bool made = false;

	(void)state;
	touch(".coordination.lock");
	touch("t.lock");
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "t.lock", false, &fd, &made), 0);
	assert_int_equal(unlink(P("t.lock")), 0);
	touch("t.lock");
	assert_int_equal(agc_sesslock_release(dfd, ".coordination.lock", "t.lock", fd, true), 0);
	assert_true(exists("t.lock"));
}

/* With create, a missing coordination file and lock file are made (0644) and the lock held,
 * as the agent would make them; a link or a FIFO in the lock's place is never locked, made
 * or followed (R2, R8). */
static void test_sesslock_take_create(void **state)
{
	int fd = -1, other;
	bool made = false;
	struct stat st;

	(void)state;
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "t.lock", true, &fd, &made), 0);
	assert_true(made);
	assert_true(exists(".coordination.lock"));
	assert_int_equal(stat(P("t.lock"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0644);
	other = open(P("t.lock"), O_RDONLY);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
	close(other);
	assert_int_equal(agc_sesslock_release(dfd, ".coordination.lock", "t.lock", fd, true), 1);
	assert_false(exists("t.lock"));
	/* a link: not followed, not replaced */
	touch("target");
	assert_int_equal(symlink("target", P("l.lock")), 0);
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "l.lock", true, &fd, &made), -1);
	assert_int_equal(fd, -1);
	assert_int_equal(lstat(P("l.lock"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* a FIFO: never opened for the lock */
	assert_int_equal(mkfifo(P("f.lock"), 0644), 0);
	assert_int_equal(agc_sesslock_take(dfd, ".coordination.lock", "f.lock", true, &fd, &made), -1);
	assert_int_equal(fd, -1);
}

/* The FLOCK kind of shared files: held by another, the take fails after its tries; a dry run
 * takes nothing it keeps; taken, it is held until released. */
static void test_lock_kind_flock(void **state)
{
	static const agc_lock_spec spec = {.kind = AGC_LOCK_FLOCK, .tries = 3, .interval_ms = 10};
	agc_lock_hold h;
	int fd, other;

	(void)state;
	touch("history.jsonl");
	fd = open(P("history.jsonl"), O_RDONLY);
	assert_true(fd >= 0);
	hold("history.jsonl", LOCK_EX);
	assert_int_equal(agc_lock_take(&h, &spec, dfd, "history.jsonl", fd, false, "/proc"), AGC_EINUSE);
	assert_false(h.held);
	let_go();
	assert_int_equal(agc_lock_take(&h, &spec, dfd, "history.jsonl", fd, true, "/proc"), 0);
	assert_false(h.held);
	other = open(P("history.jsonl"), O_RDONLY);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
	flock(other, LOCK_UN);
	assert_int_equal(agc_lock_take(&h, &spec, dfd, "history.jsonl", fd, false, "/proc"), 0);
	assert_true(h.held);
	assert_int_equal(agc_lock_keep(&h), 0);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
	agc_lock_release(&h);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
	close(other);
	close(fd);
}

/* The MKDIR kind honours its spec: its suffix, and its tries (one try, no wait). */
static void test_lock_kind_mkdir(void **state)
{
	static const agc_lock_spec spec = {.kind = AGC_LOCK_MKDIR, .suffix = ".lk", .stale_ms = 10000,
					   .hold_ms = 5000, .tries = 1, .interval_ms = 1000};
	agc_lock_hold h, h2;

	(void)state;
	touch("f");
	assert_int_equal(agc_lock_take(&h, &spec, dfd, "f", -1, false, "/proc"), 0);
	assert_true(exists("f.lk"));
	assert_int_equal(agc_lock_take(&h2, &spec, dfd, "f", -1, false, "/proc"), AGC_EINUSE);
	assert_int_equal(agc_lock_keep(&h), 0);
	agc_lock_release(&h);
	assert_false(exists("f.lk"));
	/* the RENAME kind takes nothing */
	assert_int_equal(agc_lock_take(&h, NULL, dfd, "f", -1, false, "/proc"), 0);
	assert_false(h.held);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flocks_of_real, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flocks_of_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sesslock_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sesslock_coord_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sesslock_take_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sesslock_take_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sesslock_release_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sesslock_take_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_kind_flock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_kind_mkdir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
