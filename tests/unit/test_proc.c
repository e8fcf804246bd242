/* Unit tests for the process table (proc-linux.c): parsing on a made-up procfs tree, and the
 * live behaviour on this process and its children (SPEC R5: holders by (dev, ino) over
 * /proc/PID/fd and maps; start times from /proc/PID/stat). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agc_test.h"

#include "buf.h"
#include "error.h"
#include "proc.h"

/* ---- a made-up procfs tree under a temporary directory (never under $HOME) ---------------- */

static char fakeproc[PATH_MAX + 8]; /* t_dir/proc */

static int setup_tree(void **state)
{
	(void)state;
	if (t_setup_dir("proc") < 0)
		return -1;
	snprintf(fakeproc, sizeof(fakeproc), "%s", t_path("proc"));
	return mkdir(fakeproc, 0700);
}

static int teardown_tree(void **state)
{
	(void)state;
	return t_teardown_dir();
}

/* A stat line with comm, ppid and start time in their fields (3.. after the last ')'). */
static void fake_stat(pid_t pid, const char *comm, pid_t ppid, unsigned long long start)
{
	char rel[64], text[1024];

	snprintf(rel, sizeof(rel), "proc/%ld", (long)pid);
	t_mkdir(rel);
	snprintf(rel, sizeof(rel), "proc/%ld/stat", (long)pid);
	snprintf(text, sizeof(text),
		 "%ld (%s) S %ld %ld %ld 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %llu 5000 100 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 (long)pid, comm, (long)ppid, (long)pid, (long)pid, start);
	t_writes(rel, text);
}

static void fake_status(pid_t pid, unsigned uid)
{
	char rel[64], text[512];

	snprintf(rel, sizeof(rel), "proc/%ld/status", (long)pid);
	snprintf(text, sizeof(text),
		 "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%ld\nNgid:\t0\nPid:\t%ld\n"
		 "PPid:\t1\nTracerPid:\t0\nUid:\t%u\t%u\t%u\t%u\nGid:\t0\t0\t0\t0\n",
		 (long)pid, (long)pid, uid, uid + 1, uid + 2, uid + 3);
	t_writes(rel, text);
}

/* ---- stat ---------------------------------------------------------------------------------- */

/* comm may hold ") (" and spaces: the fields are counted from the last ')'. */
static void test_proc_stat_comm_with_parens(void **state)
{
	agc_proc p;

	(void)state;
	fake_stat(100, "a) (b c", 42, 123456);
	fake_status(100, 1000);
	assert_int_equal(agc_proc_stat(fakeproc, 100, &p), 0);
	assert_int_equal(p.pid, 100);
	assert_int_equal(p.ppid, 42);
	/* the uid is the owner of the /proc/PID dir, not status's Uid line */
	assert_int_equal(p.uid, getuid());
	assert_true(p.start == 123456ULL);
	assert_string_equal(p.comm, "a) (b c");
}

/* A comm longer than the struct's buffer is cut, not overflowed. */
static void test_proc_stat_long_comm(void **state)
{
	char comm[200];
	agc_proc p;

	(void)state;
	memset(comm, 'x', sizeof(comm) - 1);
	comm[sizeof(comm) - 1] = '\0';
	fake_stat(101, comm, 7, 99);
	fake_status(101, 5);
	assert_int_equal(agc_proc_stat(fakeproc, 101, &p), 0);
	assert_int_equal(strlen(p.comm), sizeof(p.comm) - 1);
	assert_int_equal(p.ppid, 7);
	assert_true(p.start == 99ULL);
}

/* Without status the process is still there; its uid comes from the dir's owner. */
static void test_proc_stat_missing_status(void **state)
{
	agc_proc p;

	(void)state;
	fake_stat(200, "nostatus", 1, 777);
	assert_int_equal(agc_proc_stat(fakeproc, 200, &p), 0);
	assert_int_equal(p.ppid, 1);
	assert_int_equal(p.uid, getuid());
	assert_true(p.start == 777ULL);
}

static void test_proc_stat_not_found(void **state)
{
	agc_proc p;

	(void)state;
	t_mkdir("proc/300");  /* a pid directory whose files are gone: the process vanished */
	assert_int_equal(agc_proc_stat(fakeproc, 300, &p), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_stat(fakeproc, 999, &p), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_stat(fakeproc, 0, &p), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_stat(fakeproc, -5, &p), AGC_ENOTFOUND);
}

static void test_proc_stat_malformed(void **state)
{
	agc_proc p;

	(void)state;
	t_mkdir("proc/400");
	t_writes("proc/400/stat", "400 no parentheses S 1 2 3\n");
	assert_int_equal(agc_proc_stat(fakeproc, 400, &p), -1);
	assert_non_null(strstr(agc_error_last(), "cannot parse"));

	t_mkdir("proc/401");
	t_writes("proc/401/stat", "401 (short) S 1 2 3 4\n");
	assert_int_equal(agc_proc_stat(fakeproc, 401, &p), -1);

	t_mkdir("proc/402");
	t_writes("proc/402/stat", "402 (bad) S x 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n");
	assert_int_equal(agc_proc_stat(fakeproc, 402, &p), -1);
}

/* ---- each ---------------------------------------------------------------------------------- */

typedef struct seen_pids {
	pid_t v[16];
	size_t n;
	int stop_after;
} seen_pids;

static int collect(const agc_proc *p, void *ud)
{
	seen_pids *s = ud;

	if (s->n < 16)
		s->v[s->n++] = p->pid;
	if (s->stop_after && (int)s->n >= s->stop_after)
		return 7;
	return 0;
}

static int pid_cmp(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

/* Only numeric directories are processes; a vanished one (no stat) is skipped silently. */
static void test_proc_each_fake(void **state)
{
	seen_pids s = {{0}, 0, 0};

	(void)state;
	fake_stat(100, "a) (b", 1, 10);
	fake_status(100, 0);
	fake_stat(200, "nostatus", 1, 20);
	t_mkdir("proc/300");            /* vanished */
	t_mkdir("proc/sys");
	t_mkdir("proc/0123");           /* not a pid: leading zero */
	t_mkdir("proc/12a");
	t_writes("proc/stat", "btime 1\n");
	assert_int_equal(symlink("100", t_path("proc/self")), 0);

	assert_int_equal(agc_proc_each(fakeproc, collect, &s), 0);
	qsort(s.v, s.n, sizeof(s.v[0]), pid_cmp);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0], 100);
	assert_int_equal(s.v[1], 200);

	/* A nonzero return from the callback stops the walk and comes back. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	assert_int_equal(agc_proc_each(fakeproc, collect, &s), 7);
	assert_int_equal(s.n, 1);
}

/* A process whose stat is garbage is an error, not silently "no process" (R5: the table must
 * be readable for the gate to say "not in use"). */
static void test_proc_each_malformed(void **state)
{
	seen_pids s = {{0}, 0, 0};

	(void)state;
	t_mkdir("proc/500");
	t_writes("proc/500/stat", "garbage\n");
	assert_int_equal(agc_proc_each(fakeproc, collect, &s), -1);
}

/* R5: a process table that cannot be read is an error the caller turns into "in use". */
static void test_proc_each_missing_root(void **state)
{
	seen_pids s = {{0}, 0, 0};

	(void)state;
	assert_int_equal(agc_proc_each(t_path("no-such-proc"), collect, &s), -1);
	assert_non_null(strstr(agc_error_last(), "no-such-proc"));
	assert_int_equal(s.n, 0);
}

/* The live table holds this process with the kernel's view of it. */
static void test_proc_each_live(void **state)
{
	seen_pids s = {{0}, 0, 0};
	agc_proc p;

	(void)state;
	assert_int_equal(agc_proc_each("/proc", collect, &s), 0);
	assert_true(s.n > 0);
	assert_int_equal(agc_proc_stat("/proc", getpid(), &p), 0);
	assert_int_equal(p.pid, getpid());
	assert_int_equal(p.ppid, getppid());
	assert_int_equal(p.uid, getuid());
	assert_true(p.start > 0);
	assert_true(strlen(p.comm) > 0);
}

/* ---- files --------------------------------------------------------------------------------- */

typedef struct devinos {
	agc_devino v[64];
	size_t n;
	int stop;
} devinos;

static int collect_files(const agc_devino *f, void *ud)
{
	devinos *d = ud;

	if (d->n < 64)
		d->v[d->n++] = *f;
	return d->stop;
}

static size_t count_of(const devinos *d, dev_t dev, ino_t ino)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++)
		if (d->v[i].dev == dev && d->v[i].ino == ino)
			n++;
	return n;
}

/* fd entries are stat'ed through the link (the target's dev/ino); maps lines give
 * MAJ:MIN in hex and the inode in decimal, inode 0 (anonymous) is skipped, a long line is
 * cut without losing its fields, neighbouring regions of one file count once. */
static void test_proc_files_fake(void **state)
{
	struct stat a, b;
	devinos d;
	char *maps;
	size_t len;

	(void)state;
	fake_stat(600, "files", 1, 1);
	t_mkdir("proc/600/fd");
	t_writes("a.txt", "a");
	t_writes("b.txt", "b");
	assert_int_equal(stat(t_path("a.txt"), &a), 0);
	assert_int_equal(stat(t_path("b.txt"), &b), 0);
	assert_int_equal(symlink(t_path("a.txt"), t_path("proc/600/fd/3")), 0);
	assert_int_equal(symlink(t_path("b.txt"), t_path("proc/600/fd/4")), 0);
	assert_int_equal(symlink(t_path("gone.txt"), t_path("proc/600/fd/5")), 0); /* closed since */

	maps = malloc(20000);
	assert_non_null(maps);
	len = (size_t)sprintf(maps,
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
		"00651000-00652000 r--p 00051000 08:02 173521      /usr/bin/dbus-daemon\n"
		"00e03000-00e24000 rw-p 00000000 00:00 0           [heap]\n"
		"7f000000-7f100000 r--p 00000000 fd:01 42          /path with spaces/x\n"
		"7f100000-7f200000 rw-s 00000000 103:1a 99999999999 /dev/shm/y (deleted)\n"
		"7ffd0000-7ffe0000 rw-p 00000000 00:00 0           [stack]\n"
		"not a mapping line\n"
		"7f200000-7f300000 r--p 00000000 08:03 7 /");
	memset(maps + len, 'x', 12000);  /* a path longer than the line buffer */
	len += 12000;
	len += (size_t)sprintf(maps + len, "\n7f300000-7f400000 r--p 00000000 08:04 8 /last");
	t_write("proc/600/maps", maps, len);
	free(maps);

	memset(&d, 0, sizeof(d));
	assert_int_equal(agc_proc_files(fakeproc, 600, false, collect_files, &d), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(count_of(&d, a.st_dev, a.st_ino), 1);
	assert_int_equal(count_of(&d, b.st_dev, b.st_ino), 1);

	memset(&d, 0, sizeof(d));
	assert_int_equal(agc_proc_files(fakeproc, 600, true, collect_files, &d), 0);
	assert_int_equal(d.n, 7);
	assert_int_equal(count_of(&d, makedev(8, 2), 173521), 1);
	assert_int_equal(count_of(&d, makedev(0xfd, 1), 42), 1);
	assert_int_equal(count_of(&d, makedev(0x103, 0x1a), (ino_t)99999999999ULL), 1);
	assert_int_equal(count_of(&d, makedev(8, 3), 7), 1);
	assert_int_equal(count_of(&d, makedev(8, 4), 8), 1);
	assert_int_equal(count_of(&d, makedev(0, 0), 0), 0);

	/* A nonzero return from the callback stops and comes back. */
	memset(&d, 0, sizeof(d));
	d.stop = 5;
	assert_int_equal(agc_proc_files(fakeproc, 600, true, collect_files, &d), 5);
	assert_int_equal(d.n, 1);
}

static void test_proc_files_not_found(void **state)
{
	devinos d;

	(void)state;
	memset(&d, 0, sizeof(d));
	t_mkdir("proc/700");
	assert_int_equal(agc_proc_files(fakeproc, 700, false, collect_files, &d), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_files(fakeproc, 701, true, collect_files, &d), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_files(fakeproc, 0, true, collect_files, &d), AGC_ENOTFOUND);
	assert_int_equal(d.n, 0);
}

/* Per inode 1000..3999 of device 08:01: how often the maps reader reported it. */
typedef struct ino_counts {
	unsigned v[3000];
	size_t other, total;
	agc_devino last_other;
} ino_counts;

static int count_inos(const agc_devino *f, void *ud)
{
	ino_counts *c = ud;

	c->total++;
	if (f->dev == makedev(8, 1) && f->ino >= 1000 && f->ino < 4000)
		c->v[f->ino - 1000]++;
	else {
		c->other++;
		c->last_other = *f;
	}
	return 0;
}

/* maps read in chunks: 3000 lines (about 230 KiB) straddle the read buffer at every boundary,
 * with padding of several spaces, anonymous lines ("00:00 0") in between, and every file line
 * of its own inode; then a 19-digit inode, one that does not fit in 64 bits, and an anonymous
 * last line without a newline. */
static void test_proc_maps_chunks(void **state)
{
	ino_counts *c;
	char *maps, line[160];
	size_t len = 0, i, files = 0;
	devinos d;
	struct stat dir;

	(void)state;
	fake_stat(610, "maps", 1, 1);
	maps = malloc(1 << 20);
	c = calloc(1, sizeof(*c));
	assert_non_null(maps);
	assert_non_null(c);
	for (i = 0; i < 3000; i++) {
		if (i % 3 == 0) {
			snprintf(line, sizeof(line), "%08zx-%08zx rw-p 00000000 00:00 0 \n", i * 2, i * 2 + 1);
		} else {
			snprintf(line, sizeof(line), "%08zx-%08zx r--p 00000000 08:01 %zu%*s/lib/f%zu\n",
				 i * 2, i * 2 + 1, 1000 + i, (int)(1 + i % 9), "", i);
			files++;
		}
		memcpy(maps + len, line, strlen(line));
		len += strlen(line);
	}
	len += (size_t)sprintf(maps + len,
			       "ffff0000-ffff1000 r--p 00000000 103:1a 1234567890123456789 /big\n"
			       "ffff1000-ffff2000 r--p 00000000 103:1a 99999999999999999999 /too-big\n"
			       "ffff2000-ffff3000 r--p 00000000 00:00 0");
	t_write("proc/610/maps", maps, len);
	free(maps);

	assert_int_equal(agc_proc_maps(fakeproc, 610, count_inos, c), 0);
	for (i = 0; i < 3000; i++)
		assert_int_equal(c->v[i], i % 3 != 0 ? 1 : 0);
	assert_int_equal(c->other, 1);
	assert_true(c->last_other.dev == makedev(0x103, 0x1a) &&
		    c->last_other.ino == (ino_t)1234567890123456789ULL);
	assert_int_equal(c->total, files + 1);
	free(c);

	/* an open dir is an fd like any other */
	t_mkdir("proc/610/fd");
	t_mkdir("held-dir");
	assert_int_equal(stat(t_path("held-dir"), &dir), 0);
	assert_int_equal(symlink(t_path("held-dir"), t_path("proc/610/fd/7")), 0);
	memset(&d, 0, sizeof(d));
	assert_int_equal(agc_proc_fds(fakeproc, 610, collect_files, &d), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(count_of(&d, dir.st_dev, dir.st_ino), 1);
	assert_int_equal(agc_proc_maps(fakeproc, 611, collect_files, &d), AGC_ENOTFOUND);
}

/* The cwd is stat'ed through the link: the directory's own (dev, ino). */
static void test_proc_cwd_id(void **state)
{
	struct stat dir;
	agc_devino c;

	(void)state;
	fake_stat(620, "cwd", 1, 1);
	t_mkdir("work");
	assert_int_equal(stat(t_path("work"), &dir), 0);
	assert_int_equal(symlink(t_path("work"), t_path("proc/620/cwd")), 0);
	assert_int_equal(agc_proc_cwd_id(fakeproc, 620, &c), 0);
	assert_true(c.dev == dir.st_dev && c.ino == dir.st_ino);
	assert_int_equal(agc_proc_cwd_id(fakeproc, 621, &c), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_cwd_id(fakeproc, 0, &c), AGC_ENOTFOUND);
	/* the live process: our own cwd */
	assert_int_equal(stat(".", &dir), 0);
	assert_int_equal(agc_proc_cwd_id("/proc", getpid(), &c), 0);
	assert_true(c.dev == dir.st_dev && c.ino == dir.st_ino);
}

/* Counts of two files among everything a live process has open or mapped (which may be many). */
typedef struct want2 {
	struct stat a, b;
	int found_a, found_b;
} want2;

static int count_two(const agc_devino *f, void *ud)
{
	want2 *w = ud;

	if (f->dev == w->a.st_dev && f->ino == w->a.st_ino)
		w->found_a++;
	if (f->dev == w->b.st_dev && f->ino == w->b.st_ino)
		w->found_b++;
	return 0;
}

/* This process's own fd is seen through /proc/PID/fd; a mapping whose fd was closed only
 * through maps. */
static void test_proc_files_live(void **state)
{
	want2 w;
	void *map;
	int fa, fb;

	(void)state;
	memset(&w, 0, sizeof(w));
	t_writes("live-a", "aaaa");
	t_writes("live-b", "bbbb");
	fa = open(t_path("live-a"), O_RDONLY | O_CLOEXEC);
	assert_true(fa >= 0);
	assert_int_equal(fstat(fa, &w.a), 0);
	fb = open(t_path("live-b"), O_RDONLY | O_CLOEXEC);
	assert_true(fb >= 0);
	assert_int_equal(fstat(fb, &w.b), 0);
	map = mmap(NULL, 4, PROT_READ, MAP_SHARED, fb, 0);
	assert_true(map != MAP_FAILED);
	close(fb);

	assert_int_equal(agc_proc_files("/proc", getpid(), false, count_two, &w), 0);
	assert_int_equal(w.found_a, 1);
	assert_int_equal(w.found_b, 0);
	w.found_a = w.found_b = 0;
	assert_int_equal(agc_proc_files("/proc", getpid(), true, count_two, &w), 0);
	assert_int_equal(w.found_a, 1);
	assert_int_equal(w.found_b, 1);
	munmap(map, 4);
	close(fa);
}

/* R5: an fd whose file may not be stat'ed (a FUSE mount without allow_root; staged here as fd
 * links into a dir of mode 000) is skipped alone: the process's other fds, here one after
 * them, are still reported and the call succeeds. Modes bind only a user other than root: as
 * root, a child drops to uid 65534 and builds the tree itself, in a dir it owns. */
static int unstatable_fd_child(const char *base)
{
	char procdir[PATH_MAX + 64], piddir[PATH_MAX + 64], fddir[PATH_MAX + 64], locked[PATH_MAX + 64];
	char secret[PATH_MAX + 96];
	char open_file[PATH_MAX + 64], link[PATH_MAX + 96];
	struct stat target, st;
	devinos d;
	int fd, i;

	snprintf(procdir, sizeof(procdir), "%s/proc", base);
	snprintf(piddir, sizeof(piddir), "%s/proc/600", base);
	snprintf(fddir, sizeof(fddir), "%s/proc/600/fd", base);
	snprintf(locked, sizeof(locked), "%s/locked", base);
	snprintf(secret, sizeof(secret), "%s/locked/secret", base);
	snprintf(open_file, sizeof(open_file), "%s/s.jsonl", base);
	if (mkdir(procdir, 0755) < 0 || mkdir(piddir, 0755) < 0 || mkdir(fddir, 0755) < 0 ||
	    mkdir(locked, 0700) < 0)
		return 20;
	fd = open(secret, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 21;
	close(fd);
	fd = open(open_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &target) < 0)
		return 22;
	close(fd);
	/* fds 3..9 may not be stat'ed, fd 10 is the session's transcript */
	for (i = 3; i <= 10; i++) {
		snprintf(link, sizeof(link), "%s/%d", fddir, i);
		if (symlink(i < 10 ? secret : open_file, link) < 0)
			return 23;
	}
	if (chmod(locked, 0) < 0)
		return 24;
	if (stat(secret, &st) == 0 || errno != EACCES)
		return 25; /* the mode does not bind this user: nothing is staged */
	memset(&d, 0, sizeof(d));
	if (agc_proc_files(procdir, 600, false, collect_files, &d) != 0)
		return 1;
	if (d.n != 1 || count_of(&d, target.st_dev, target.st_ino) != 1)
		return 2;
	return 0;
}

static void test_proc_files_unstatable_fd(void **state)
{
	pid_t child;
	int status;

	(void)state;
	/* the child must reach the tree it builds */
	assert_int_equal(chmod(t_dir, 0711), 0);
	t_mkdir("u");
	if (getuid() == 0)
		assert_int_equal(chown(t_path("u"), 65534, 65534), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		if (getuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(10);
		_exit(unstatable_fd_child(t_path("u")));
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	/* let the teardown remove the tree (root ignores the mode; its owner does not) */
	chmod(t_path("u/locked"), 0700);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 10) {
		print_message("skipped: cannot drop to uid 65534\n");
		skip();
	}
	/* 1: the call failed (the whole process skipped); 2: the readable fd was not reported */
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- argv, environ, cwd --------------------------------------------------------------------- */

static void test_proc_argv_environ_fake(void **state)
{
	agc_buf b = AGC_BUF_INIT;

	(void)state;
	fake_stat(800, "args", 1, 1);
	t_write("proc/800/cmdline", "claude\0--resume\0abc\0", 21);
	t_write("proc/800/environ", "A=1\0B=2\0", 8);
	assert_int_equal(agc_proc_argv(fakeproc, 800, 4096, &b), 0);
	assert_int_equal(b.len, 21);
	assert_memory_equal(b.ptr, "claude\0--resume\0abc\0", 21);
	/* The cap bounds the read. */
	assert_int_equal(agc_proc_argv(fakeproc, 800, 6, &b), 0);
	assert_int_equal(b.len, 6);
	assert_string_equal(b.ptr, "claude");
	assert_int_equal(agc_proc_environ(fakeproc, 800, 1 << 20, &b), 0);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.ptr, "A=1\0B=2\0", 8);
	/* A process without the file, or without a directory, is gone. */
	t_mkdir("proc/801");
	assert_int_equal(agc_proc_argv(fakeproc, 801, 4096, &b), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_environ(fakeproc, 802, 4096, &b), AGC_ENOTFOUND);
	agc_buf_release(&b);
}

static void test_proc_argv_cwd_live(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	char cwd[PATH_MAX];

	(void)state;
	assert_int_equal(agc_proc_argv("/proc", getpid(), 1 << 16, &b), 0);
	assert_true(b.len > 0);
	assert_string_equal(b.ptr, program_invocation_name);
	assert_int_equal(agc_proc_cwd("/proc", getpid(), &b), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_string_equal(b.ptr, cwd);

	fake_stat(900, "cwd", 1, 1);
	assert_int_equal(symlink("/some/where", t_path("proc/900/cwd")), 0);
	assert_int_equal(agc_proc_cwd(fakeproc, 900, &b), 0);
	assert_string_equal(b.ptr, "/some/where");
	assert_int_equal(agc_proc_cwd(fakeproc, 901, &b), AGC_ENOTFOUND);
	agc_buf_release(&b);
}

/* The reads on an open /proc/PID (agc_proc_open and the _at functions) give what the path
 * reads give: argv, environ, the cwd, the stat line, fds, and a mapping whose fd was closed
 * (here through PROCMAP_QUERY where the kernel has it). */
static void test_proc_at_live(void **state)
{
	agc_buf a = AGC_BUF_INIT, b = AGC_BUF_INIT;
	agc_devino cwd;
	agc_proc p, q;
	struct stat dot;
	want2 w;
	void *map;
	int pfd, fa, fb, root;

	(void)state;
	pfd = agc_proc_open("/proc", getpid());
	assert_true(pfd >= 0);
	assert_int_equal(agc_proc_argv_at(pfd, getpid(), 1 << 16, &a), 0);
	assert_int_equal(agc_proc_argv("/proc", getpid(), 1 << 16, &b), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	assert_int_equal(agc_proc_environ_at(pfd, getpid(), 1 << 20, &a), 0);
	assert_int_equal(agc_proc_environ("/proc", getpid(), 1 << 20, &b), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	assert_int_equal(agc_proc_cwd_id_at(pfd, getpid(), &cwd), 0);
	assert_int_equal(stat(".", &dot), 0);
	assert_true(cwd.dev == dot.st_dev && cwd.ino == dot.st_ino);
	assert_int_equal(agc_proc_stat_at(pfd, getpid(), &p), 0);
	assert_int_equal(agc_proc_stat("/proc", getpid(), &q), 0);
	assert_int_equal(p.ppid, getppid());
	assert_true(p.start == q.start && p.uid == q.uid && p.uid == getuid());
	assert_string_equal(p.comm, q.comm);

	memset(&w, 0, sizeof(w));
	t_writes("at-a", "aaaa");
	t_writes("at-b", "bbbb");
	fa = open(t_path("at-a"), O_RDONLY | O_CLOEXEC);
	assert_true(fa >= 0);
	assert_int_equal(fstat(fa, &w.a), 0);
	fb = open(t_path("at-b"), O_RDONLY | O_CLOEXEC);
	assert_true(fb >= 0);
	assert_int_equal(fstat(fb, &w.b), 0);
	map = mmap(NULL, 4, PROT_READ, MAP_SHARED, fb, 0);
	assert_true(map != MAP_FAILED);
	close(fb);
	assert_int_equal(agc_proc_fds_at(pfd, getpid(), count_two, &w), 0);
	assert_int_equal(w.found_a, 1);
	assert_int_equal(w.found_b, 0);
	w.found_a = w.found_b = 0;
	assert_int_equal(agc_proc_maps_at(pfd, getpid(), count_two, &w), 0);
	assert_int_equal(w.found_a, 0);
	assert_int_equal(w.found_b, 1);
	munmap(map, 4);
	close(fa);
	close(pfd);
	assert_int_equal(agc_proc_open("/proc", 0), AGC_ENOTFOUND);

	/* under the table's dir opened once: the same process */
	root = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	pfd = agc_proc_open_in(root, getpid());
	assert_true(pfd >= 0);
	assert_int_equal(agc_proc_stat_at(pfd, getpid(), &q), 0);
	assert_true(q.start == p.start && q.ppid == p.ppid);
	close(pfd);
	assert_int_equal(agc_proc_open_in(root, 0), AGC_ENOTFOUND);
	close(root);
	root = open(fakeproc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	assert_int_equal(agc_proc_open_in(root, 4321), AGC_ENOTFOUND);
	fake_stat(4321, "x", 1, 1);
	pfd = agc_proc_open_in(root, 4321);
	assert_true(pfd >= 0);
	assert_int_equal(agc_proc_stat_at(pfd, 4321, &q), 0);
	assert_string_equal(q.comm, "x");
	close(pfd);
	close(root);
	agc_buf_release(&a);
	agc_buf_release(&b);
}

/* The mappings of a live process as the kernel's query gives them are the ones its maps text
 * gives (the same text copied into a made-up tree, where only the text can be read). */
static void test_proc_maps_query_matches_text(void **state)
{
	devinos live, text;
	char buf[65536];
	size_t i, got = 0;
	ssize_t n;
	pid_t child;
	int fd, pfd, sync[2];
	char c;

	(void)state;
	assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(sync[0]);
		if (write(sync[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);

	snprintf(buf, sizeof(buf), "/proc/%ld/maps", (long)child);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	fake_stat(950, "maps", 1, 1);
	t_write("proc/950/maps", buf, got);

	memset(&live, 0, sizeof(live));
	memset(&text, 0, sizeof(text));
	pfd = agc_proc_open("/proc", child);
	assert_true(pfd >= 0);
	assert_int_equal(agc_proc_maps_at(pfd, child, collect_files, &live), 0);
	close(pfd);
	pfd = agc_proc_open(fakeproc, 950);
	assert_true(pfd >= 0);
	assert_int_equal(agc_proc_maps_at(pfd, 950, collect_files, &text), 0);
	close(pfd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	assert_true(live.n > 0);
	assert_int_equal(live.n, text.n);
	for (i = 0; i < live.n; i++) {
		assert_true(live.v[i].dev == text.v[i].dev);
		assert_true(live.v[i].ino == text.v[i].ino);
	}
}

/* A process that exits after its dir was opened: every read answers "gone", and never reads a
 * process that took the pid since. In a made-up tree, a pid dir replaced after the open is not
 * the one read: the reads stay on the dir that was opened. */
static void test_proc_at_gone(void **state)
{
	agc_buf b = AGC_BUF_INIT;
	agc_devino d;
	agc_proc p;
	devinos fds;
	pid_t child;
	int pfd;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (;;)
			pause();
	}
	pfd = agc_proc_open("/proc", child);
	assert_true(pfd >= 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	memset(&fds, 0, sizeof(fds));
	assert_int_equal(agc_proc_argv_at(pfd, child, 4096, &b), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_environ_at(pfd, child, 4096, &b), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_cwd_id_at(pfd, child, &d), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_fds_at(pfd, child, collect_files, &fds), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_maps_at(pfd, child, collect_files, &fds), AGC_ENOTFOUND);
	assert_int_equal(agc_proc_stat_at(pfd, child, &p), AGC_ENOTFOUND);
	assert_int_equal(fds.n, 0);
	close(pfd);
	assert_int_equal(agc_proc_open("/proc", child), AGC_ENOTFOUND);

	fake_stat(960, "old", 1, 1);
	t_write("proc/960/cmdline", "old\0", 4);
	pfd = agc_proc_open(fakeproc, 960);
	assert_true(pfd >= 0);
	assert_int_equal(rename(t_path("proc/960"), t_path("old-960")), 0);
	fake_stat(960, "new", 1, 1);
	t_write("proc/960/cmdline", "new\0", 4);
	assert_int_equal(agc_proc_argv_at(pfd, 960, 4096, &b), 0);
	assert_string_equal(b.ptr, "old");
	assert_int_equal(agc_proc_stat_at(pfd, 960, &p), 0);
	assert_string_equal(p.comm, "old");
	close(pfd);
	agc_buf_release(&b);
}

/* Another user's fds and environment are not ours to read: AGC_EUNSAFE (skipped by the gate,
 * as fuser and lsof skip them), not an error. Needs root to become another user. */
static void test_proc_unreadable(void **state)
{
	pid_t parent = getpid(), child;
	int status;

	(void)state;
	if (getuid() != 0) {
		print_message("skipped: needs root to drop to another user\n");
		skip();
	}
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		agc_buf b = AGC_BUF_INIT;
		devinos d;
		int code = 0;

		memset(&d, 0, sizeof(d));
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		if (agc_proc_files("/proc", parent, false, collect_files, &d) != AGC_EUNSAFE)
			code |= 1;
		if (agc_proc_environ("/proc", parent, 4096, &b) != AGC_EUNSAFE)
			code |= 2;
		if (agc_proc_argv("/proc", parent, 4096, &b) != 0) /* cmdline is public */
			code |= 4;
		_exit(code);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- boot time, liveness, ancestors ---------------------------------------------------------- */

/* btime is found past a line longer than the line buffer (a huge "intr" line). */
static void test_proc_boot_ms_fake(void **state)
{
	size_t len = 0, i;
	int64_t ms = 0;
	char *text;

	(void)state;
	text = malloc(200000);
	assert_non_null(text);
	len += (size_t)sprintf(text, "cpu  1 2 3 4\nintr 1");
	for (i = 0; i < 20000; i++)
		len += (size_t)sprintf(text + len, " %zu", i % 10);
	len += (size_t)sprintf(text + len, "\nctxt 5\nbtime 1700000000\nprocesses 9\n");
	t_write("proc/stat", text, len);
	free(text);
	assert_int_equal(agc_proc_boot_ms(fakeproc, &ms), 0);
	assert_true(ms == INT64_C(1700000000000));

	t_writes("proc/stat", "cpu 1 2 3\nctxt 5\n");
	assert_int_equal(agc_proc_boot_ms(fakeproc, &ms), -1);
	assert_int_equal(agc_proc_boot_ms(t_path("nowhere"), &ms), -1);
}

static void test_proc_boot_ms_live(void **state)
{
	int64_t ms = 0;

	(void)state;
	assert_int_equal(agc_proc_boot_ms("/proc", &ms), 0);
	assert_true(ms > 0);
	assert_true(ms <= (int64_t)time(NULL) * 1000);
	assert_true(agc_proc_ticks_per_sec() > 0);
}

static void test_proc_alive(void **state)
{
	pid_t child;

	(void)state;
	assert_int_equal(agc_proc_alive(getpid()), 1);
	/* 0 and negative pids name process groups for kill(): never "alive". */
	assert_int_equal(agc_proc_alive(0), 0);
	assert_int_equal(agc_proc_alive(-1), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(agc_proc_alive(child), 0);
}

/* A child started after this process has a start time no earlier than ours. */
static void test_proc_start_order(void **state)
{
	agc_proc me, kid;
	int sync[2];
	pid_t child;
	char c;

	(void)state;
	assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(sync[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (write(sync[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 1);
	close(sync[0]);
	assert_int_equal(agc_proc_stat("/proc", getpid(), &me), 0);
	assert_int_equal(agc_proc_stat("/proc", child, &kid), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(kid.ppid, getpid());
	assert_true(kid.start >= me.start);
}

static void test_proc_self_and_ancestors(void **state)
{
	pid_t *v = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(agc_proc_self_and_ancestors("/proc", false, &v, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(v[0], getpid());
	if (getpid() != 1 && getppid() > 0) {
		assert_true(n >= 2);
		assert_int_equal(v[1], getppid());
	}
	free(v);

	/* A tree that does not hold this process: just this process. */
	assert_int_equal(agc_proc_self_and_ancestors(fakeproc, false, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], getpid());
	free(v);
}

/* This process as a procroot lists it: its self link on /proc; a tree that is no procfs (made
 * up for a test) speaks of this system's pids. */
static void test_proc_self(void **state)
{
	char self[64];
	ssize_t n;

	(void)state;
	assert_int_equal(agc_proc_self(fakeproc), getpid());
	n = readlink("/proc/self", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	assert_int_equal(agc_proc_self("/proc"), (pid_t)strtol(self, NULL, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proc_stat_comm_with_parens, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_stat_long_comm, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_stat_missing_status, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_stat_not_found, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_stat_malformed, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_each_fake, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_each_malformed, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_each_missing_root, setup_tree, teardown_tree),
		cmocka_unit_test(test_proc_each_live),
		cmocka_unit_test_setup_teardown(test_proc_files_fake, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_files_not_found, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_maps_chunks, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_cwd_id, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_files_live, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_files_unstatable_fd, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_argv_environ_fake, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_argv_cwd_live, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_at_live, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_maps_query_matches_text, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_at_gone, setup_tree, teardown_tree),
		cmocka_unit_test(test_proc_unreadable),
		cmocka_unit_test_setup_teardown(test_proc_boot_ms_fake, setup_tree, teardown_tree),
		cmocka_unit_test(test_proc_boot_ms_live),
		cmocka_unit_test(test_proc_alive),
		cmocka_unit_test(test_proc_start_order),
		cmocka_unit_test_setup_teardown(test_proc_self_and_ancestors, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_proc_self, setup_tree, teardown_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
