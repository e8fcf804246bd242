/* Checkpoints a purge could not finish (pending.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "json.h"
#include "pending.h"
#include "state.h"

#define PENDING_MAX ((size_t)4 << 20) /* the file, at most; a record is a few hundred bytes */

/* The records (a JSON array of {"db","dev","ino","ids"}); an absent file is none, a line that
 * is not a record is dropped. */
static json_t *load(const char *dir)
{
	agc_buf in = AGC_BUF_INIT_MAX(PENDING_MAX + 1);
	char path[PATH_MAX + 32];
	json_t *all = json_array();
	const char *q, *end;

	snprintf(path, sizeof(path), "%s/wal-pending.jsonl", dir);
	if (!all || agc_read_at(AT_FDCWD, path, PENDING_MAX, &in) < 0) {
		agc_buf_release(&in);
		return all;
	}
	q = in.ptr ? in.ptr : "";
	end = q + in.len;
	while (q < end) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t len = nl ? (size_t)(nl - q) : (size_t)(end - q);
		json_t *j = agc_json_parse(q, len);

		if (json_is_object(j) && json_is_integer(json_object_get(j, "dev")) &&
		    json_is_integer(json_object_get(j, "ino")) && json_is_array(json_object_get(j, "ids")))
			json_array_append(all, j);
		json_decref(j);
		q += nl ? len + 1 : len;
	}
	agc_buf_release(&in);
	return all;
}

static bool same_db(const json_t *rec, dev_t dev, ino_t ino)
{
	return (dev_t)json_integer_value(json_object_get(rec, "dev")) == dev &&
	       (ino_t)json_integer_value(json_object_get(rec, "ino")) == ino;
}

/* Write the records by a temp file and a rename (none left: the file goes). */
static int store(const char *dir, const json_t *all)
{
	agc_buf out = AGC_BUF_INIT_MAX(PENDING_MAX);
	size_t i;
	json_t *rec;
	int rc = 0;

	json_array_foreach(all, i, rec) {
		char *line = json_dumps(rec, JSON_COMPACT);

		rc = line ? agc_buf_printf(&out, "%s\n", line) : agc_error_oom();
		free(line);
		if (rc < 0) {
			agc_buf_release(&out);
			return -1;
		}
	}
	rc = agc_state_write(dir, "wal-pending.jsonl", out.ptr ? out.ptr : "", out.len);
	agc_buf_release(&out);
	return rc;
}

/* The lock every change of the file is made under (one agentgc run at a time). */
static int lock_dir(const char *dir)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/wal-pending.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return agc_error_errno(-1, errno, "cannot open '%s'", path);
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return agc_error_errno(-1, errno, "cannot lock '%s'", path);
		}
	}
	return fd;
}

int agc_pending_add(const char *db, dev_t dev, ino_t ino, char *const *ids, size_t n)
{
	char dir[PATH_MAX];
	json_t *all, *rec = NULL, *v, *list;
	size_t i, k;
	int fd, rc;

	if (agc_state_dir(dir, sizeof(dir), true) < 0 || (fd = lock_dir(dir)) < 0)
		return -1;
	all = load(dir);
	json_array_foreach(all, i, v)
		if (same_db(v, dev, ino))
			rec = v;
	if (!rec) {
		rec = json_pack("{s:s, s:I, s:I, s:[]}", "db", db, "dev", (json_int_t)dev, "ino", (json_int_t)ino, "ids");
		if (!rec || json_array_append_new(all, rec) < 0) {
			json_decref(all);
			close(fd);
			return agc_error_oom();
		}
	}
	list = json_object_get(rec, "ids");
	for (k = 0; k < n; k++) {
		bool have = false;

		json_array_foreach(list, i, v)
			have |= json_is_string(v) && strcmp(json_string_value(v), ids[k]) == 0;
		if (!have)
			json_array_append_new(list, json_string(ids[k]));
	}
	rc = store(dir, all);
	json_decref(all);
	close(fd);
	return rc;
}

bool agc_pending_has(dev_t dev, ino_t ino, char *const *ids, size_t n)
{
	char dir[PATH_MAX];
	json_t *all, *rec, *v;
	size_t i, j, k;
	bool found = false;

	if (agc_state_dir(dir, sizeof(dir), false) < 0)
		return false;
	all = load(dir);
	json_array_foreach(all, i, rec) {
		if (!same_db(rec, dev, ino))
			continue;
		json_array_foreach(json_object_get(rec, "ids"), j, v)
			for (k = 0; k < n && !found; k++)
				found = json_is_string(v) && strcmp(json_string_value(v), ids[k]) == 0;
	}
	json_decref(all);
	return found;
}

int agc_pending_clear(dev_t dev, ino_t ino)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct stat st;
	json_t *all;
	size_t i;
	int fd, rc = 0;
	bool changed = false;

	/* most checkpoints have nothing recorded: no lock, no write */
	if (agc_state_dir(dir, sizeof(dir), false) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/wal-pending.jsonl", dir);
	if (stat(path, &st) < 0)
		return 0;
	if ((fd = lock_dir(dir)) < 0)
		return -1;
	all = load(dir);
	for (i = json_array_size(all); i-- > 0;)
		if (same_db(json_array_get(all, i), dev, ino)) {
			json_array_remove(all, i);
			changed = true;
		}
	if (changed)
		rc = store(dir, all);
	json_decref(all);
	close(fd);
	return rc;
}
