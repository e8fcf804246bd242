/* Rewriting a shared file without some of its lines (SPEC R4): under the agent's lock, only when
 * no process holds it open, atomically (temp file in the same dir, fsync, rename, mode kept). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "holders.h"
#include "json.h"
#include "lines.h"

#define SHARED_FILE_MAX ((size_t)1 << 30)

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Scan the file for lines that match; copy the others into out. */
static int filter(const agc_buf *in, const agc_lineset *ls, char *const *ids, size_t n_ids,
		  agc_buf *out, uint64_t *count, uint64_t *bytes, uint64_t *id_counts, uint64_t *id_bytes)
{
	void *m = NULL;
	int rc = 0;

	const char *p = in->ptr ? in->ptr : "", *end = p + in->len;

	*count = *bytes = 0;
	if (ls->which_new && !(m = ls->which_new(ids, n_ids)))
		return -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t full = nl ? len + 1 : len;

		long w = len > AGC_LINE_MAX ? -1
			 : m ? ls->which(m, p, len)
			 : ls->match(p, len, ids, n_ids) ? 0 : -1;

		if (w >= 0 && (size_t)w < n_ids) {
			(*count)++;
			*bytes += full;
			if (id_counts)
				id_counts[w]++;
			if (id_bytes)
				id_bytes[w] += full;
		} else if (agc_buf_add(out, p, full) < 0) {
			rc = -1;
			break;
		}
		p += full;
	}
	if (m)
		ls->which_free(m);
	return rc;
}

/* Whether a process holds the file st open (or its holders cannot be told): error set. */
static bool held_open(const char *procroot, const struct stat *st, const char *rel)
{
	agc_gate_file gf = {.id = {st->st_dev, st->st_ino}, .label = rel};
	agc_gate_query q = {.procroot = procroot, .files = &gf, .n_files = 1};
	agc_holders h = {0};
	int hrc = agc_holders_scan(&q, &h);
	size_t hn = h.n;

	agc_holders_release(&h);
	if (hrc < 0 || hn) {
		agc_error_set(AGC_EINUSE, "'%s' is held open by another process", rel);
		return true;
	}
	return false;
}

/* A flock-guarded file was replaced: a writer that opened the old inode just before the
 * rename waits for our lock and then appends its line there, to a file no name reaches. So
 * while anyone still holds the old inode, the lock is let go and the holders waited for (a
 * writer's tries last tries x interval), and whatever the old inode gained past what was read
 * is appended to the file now in its place, under its lock, as the writer meant (R4). */
#define SALVAGE_POLL_MS 50

static void salvage_tail(const char *procroot, agc_lock_hold *lk, int oldfd, const struct stat *old,
			 off_t was, int dfd, const char *leaf)
{
	const agc_lock_spec *sp = lk->spec;
	int64_t wait_ms = (int64_t)(sp->tries ? sp->tries : 1) * sp->interval_ms + 500, waited = 0;
	agc_lock_hold nl;
	struct stat now;
	char buf[65536];
	off_t off = was;
	int nfd;

	if (!held_open(procroot, old, leaf))
		return;
	agc_lock_release(lk);
	while (waited < wait_ms && held_open(procroot, old, leaf)) {
		struct timespec ts = {0, SALVAGE_POLL_MS * 1000000L};

		nanosleep(&ts, NULL);
		waited += SALVAGE_POLL_MS;
	}
	if (fstat(oldfd, &now) < 0 || now.st_size <= was)
		return;
	nfd = agc_open_file_at(dfd, leaf, 0, NULL);
	if (nfd < 0)
		return;
	{
		int wfd = openat(dfd, leaf, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		struct stat a, b;

		/* the same file as the one checked (a regular file, no link) */
		if (wfd >= 0 && (fstat(wfd, &a) < 0 || fstat(nfd, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev)) {
			close(wfd);
			wfd = -1;
		}
		if (wfd >= 0 && agc_lock_take(&nl, sp, dfd, leaf, wfd, false, procroot) == 0) {
			ssize_t n;

			while ((n = pread(oldfd, buf, sizeof(buf), off)) > 0 && write_all(wfd, buf, (size_t)n) == 0)
				off += n;
			fsync(wfd);
			agc_lock_release(&nl);
		}
		if (wfd >= 0)
			close(wfd);
	}
	close(nfd);
}

/* The whole file through fd (borrowed), from its start. */
static int read_checked(int fd, const char *name, agc_buf *in)
{
	int dfd2;

	if (fd < 0)
		return -1;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return agc_error_errno(-1, errno, "cannot read '%s'", name);
	dfd2 = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd2 < 0)
		return agc_error_errno(-1, errno, "cannot read '%s'", name);
	return agc_read_fd(dfd2, name, SHARED_FILE_MAX, in);
}

void agc_filekey_of(const struct stat *st, agc_filekey *k)
{
	memset(k, 0, sizeof(*k));
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = st->st_size;
	k->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	k->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

bool agc_filekey_same(const agc_filekey *a, const agc_filekey *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns;
}

int agc_lines_rewrite(int rootfd, const agc_lineset *ls, char *const *ids, size_t n_ids,
		      const char *procroot, unsigned flags, agc_lines_result *res)
{
	agc_lineset one = *ls;

	/* ids in the plan's order: the per-id matcher */
	one.which_new = NULL;
	return agc_lines_rewrite_ids(rootfd, &one, ids, n_ids, procroot, flags, res, NULL, NULL);
}

int agc_lines_rewrite_ids(int rootfd, const agc_lineset *ls, char *const *ids, size_t n_ids,
			  const char *procroot, unsigned flags, agc_lines_result *res,
			  uint64_t *id_counts, uint64_t *id_bytes)
{
	uint64_t *cnt = NULL, *byt = NULL;
	int dfd = -1, fd = -1, tfd = -1, err, rc = -1;
	const char *leaf;
	char tmpname[320];
	agc_lock_hold lk = {0};
	int lrc;
	struct stat st, st2;
	agc_buf in = AGC_BUF_INIT_MAX(SHARED_FILE_MAX + 1), out = AGC_BUF_INIT_MAX(SHARED_FILE_MAX);
	agc_walk_status ws;

	memset(res, 0, sizeof(*res));
	ws = agc_walk_parent(rootfd, ls->rel, &dfd, &leaf, &err);
	if (ws != AGC_WALK_OK) {
		res->reason = ws == AGC_WALK_SYMLINK ? "symlink" : ws == AGC_WALK_ENOENT ? NULL : "error";
		if (ws == AGC_WALK_ENOENT)
			return 0;
		return agc_error_set(-1, "cannot reach '%s': %s", ls->rel, agc_walk_status_name(ws));
	}
	/* R8: a FIFO or a device in the shared file's place is never opened, only reported. */
	fd = agc_open_file_at(dfd, leaf, 0, &st);
	if (fd < 0) {
		if (fd == AGC_ENOTFOUND) {
			fd = -1;
			rc = 0;
			goto out;
		}
		/* the message ("cannot open '<leaf>': not a regular file") is set */
		res->reason = errno == ELOOP ? "symlink" : errno == EACCES ? "permission" : "error";
		goto out;
	}
	/* A file held open by a process is not rewritten: a writer holding the old inode would
	 * append to an unlinked file and lose its lines (R4). */
	if (held_open(procroot, &st, ls->rel)) {
		res->reason = "in-use";
		rc = AGC_EINUSE;
		goto count_only;
	}
	/* The agent's own lock of the file, as the agent takes it (locks.c); a dry run looks at it
	 * without taking it. */
	lrc = agc_lock_take(&lk, ls->lock, dfd, leaf, fd, flags & AGC_LINES_DRY_RUN, procroot);
	if (lrc < 0) {
		res->reason = lrc == AGC_EINUSE ? "in-use" : "error";
		rc = lrc == AGC_EINUSE ? AGC_EINUSE : -1;
		goto count_only;
	}
	/* Two names for one file: a rename would replace one and leave the lines in the other. */
	if (st.st_nlink > 1) {
		res->reason = "error: hard-linked";
		agc_error_set(-1, "'%s' has %lu names; its lines cannot be removed from all of them",
			      ls->rel, (unsigned long)st.st_nlink);
		goto count_only;
	}
	/* A run of many ids: the file must still be the one the run began with (R4); a writer
	 * that appended since (a session resumed) keeps every line. */
	if (ls->expect) {
		struct stat now;
		agc_filekey k;

		if (fstat(fd, &now) < 0) {
			res->reason = "error";
			agc_error_errno(-1, errno, "cannot stat '%s'", ls->rel);
			goto out;
		}
		agc_filekey_of(&now, &k);
		if (!agc_filekey_same(&k, &ls->expected)) {
			res->reason = "in-use";
			agc_error_set(AGC_EINUSE, "'%s' changed since the purge began", ls->rel);
			rc = AGC_EINUSE;
			goto count_only;
		}
	}
	/* A check-only dry run (the plan's counts come from discovery) has asked every question
	 * the rewrite would by now but the size: the file is not read again, once for each id of
	 * a run of many. */
	if ((flags & AGC_LINES_DRY_RUN) && (flags & AGC_LINES_CHECK_ONLY)) {
		if ((uint64_t)st.st_size > SHARED_FILE_MAX) {
			res->reason = "error";
			agc_error_set(-1, "'%s' is larger than %zu bytes", leaf, SHARED_FILE_MAX);
			goto out;
		}
		rc = 0;
		goto out;
	}
	/* through the fd that was checked (and that the lock may be on), never the name again */
	if (read_checked(fd, leaf, &in) < 0) {
		res->reason = "error";
		goto out;
	}
	if (id_counts && n_ids) {
		cnt = calloc(n_ids, sizeof(*cnt));
		byt = calloc(n_ids, sizeof(*byt));
		if (!cnt || !byt) {
			res->reason = "error";
			agc_error_oom();
			goto out;
		}
	}
	if (filter(&in, ls, ids, n_ids, &out, &res->count, &res->bytes, cnt, byt) < 0) {
		res->reason = "error";
		goto out;
	}
	if (!res->count || (flags & AGC_LINES_DRY_RUN)) {
		rc = 0;
		goto out;
	}
	snprintf(tmpname, sizeof(tmpname), ".%s.agentgc-%ld", leaf, (long)getpid());
	tfd = openat(dfd, tmpname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tfd < 0) {
		res->reason = errno == EACCES ? "permission" : "error";
		agc_error_errno(-1, errno, "cannot create '%s'", tmpname);
		goto out;
	}
	/* Keep the file as it was: mode, and owner when we may set it. */
	if (fchmod(tfd, st.st_mode & 07777) < 0 ||
	    (geteuid() == 0 && fchown(tfd, st.st_uid, st.st_gid) < 0) ||
	    write_all(tfd, agc_buf_cstr(&out), out.len) < 0 || fsync(tfd) < 0) {
		res->reason = "error";
		agc_error_errno(-1, errno, "cannot write '%s'", tmpname);
		goto unlink_tmp;
	}
	/* Our hold on the agent's lock must still be good (R4): a lock held too long may have
	 * been broken as stale by a writer, which may then append. */
	if (agc_lock_keep(&lk) < 0) {
		res->reason = "in-use";
		agc_error_set(AGC_EINUSE, "lost the lock on '%s'", ls->rel);
		rc = AGC_EINUSE;
		goto unlink_tmp;
	}
	/* A writer of a flock-guarded file opens it, then waits for the lock we hold: one that
	 * opened it since the look above would append to the old inode once we let go. */
	if (ls->lock && ls->lock->kind == AGC_LOCK_FLOCK && held_open(procroot, &st, ls->rel)) {
		res->reason = "in-use";
		rc = AGC_EINUSE;
		goto unlink_tmp;
	}
	/* The file must not have changed since it was read: no writer appended meanwhile. */
	if (fstatat(dfd, leaf, &st2, AT_SYMLINK_NOFOLLOW) < 0 || st2.st_ino != st.st_ino ||
	    st2.st_dev != st.st_dev || st2.st_size != (off_t)in.len) {
		res->reason = "in-use";
		agc_error_set(AGC_EINUSE, "'%s' changed while it was rewritten", ls->rel);
		rc = AGC_EINUSE;
		goto unlink_tmp;
	}
	if (renameat(dfd, tmpname, dfd, leaf) < 0) {
		res->reason = "error";
		agc_error_errno(-1, errno, "cannot replace '%s'", ls->rel);
		goto unlink_tmp;
	}
	fsync(dfd);
	res->done = true;
	rc = 0;
	if (ls->lock && ls->lock->kind == AGC_LOCK_FLOCK)
		salvage_tail(procroot, &lk, fd, &st, (off_t)in.len, dfd, leaf);
	for (size_t i = 0; cnt && i < n_ids; i++) {
		id_counts[i] += cnt[i];
		if (id_bytes)
			id_bytes[i] += byt[i];
	}
	goto out;
unlink_tmp:
	unlinkat(dfd, tmpname, 0);
	res->count = 0;
	goto out;
count_only:
	/* Say how many lines stay behind, without a lock: a read of the file changes nothing. */
	if (read_checked(fd, leaf, &in) == 0) {
		agc_buf scratch = AGC_BUF_INIT_MAX(SHARED_FILE_MAX);

		filter(&in, ls, ids, n_ids, &scratch, &res->count, &res->bytes, NULL, NULL);
		agc_buf_release(&scratch);
	}
out:
	agc_lock_release(&lk);
	if (tfd >= 0)
		close(tfd);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	agc_buf_release(&in);
	agc_buf_release(&out);
	free(cnt);
	free(byt);
	return rc;
}
