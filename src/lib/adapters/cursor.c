/* Cursor's CLI agent (formats/cursor.md; no build of it could be run, so every layout fact is a
 * report): per chat, its dir chats/<bucket>/<id>/ in every workspace bucket where the id occurs
 * (store.db with its -wal and -shm, meta.json, prompt_history.json), taken whole and never row
 * by row; acp-sessions/<id>/; projects/<slug>/agent-transcripts/<id>.txt, <id>.jsonl and <id>/
 * with its subagents/ (whose ids are the chat's sub-agents); and its rows, keyed by
 * conversationId, in ai-tracking/ai-code-tracking.db, which every chat shares (R4; its
 * contention is the busy rule's, not the open-file rule's).
 *
 * The sources disagree on where the config root is, so every candidate is a root and each is
 * looked at for all four kinds: $CURSOR_CONFIG_DIR, $XDG_CONFIG_HOME/cursor and /Cursor,
 * ~/.config/cursor and /Cursor, ~/.cursor; two that are one dir count once. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "db.h"
#include "error.h"
#include "json.h"
#include "session.h"

#define CU_DIR_MAX 1000000           /* entries of one dir looked at */
#define CU_META_MAX ((size_t)1 << 20) /* a meta value (tens of bytes); a bound far above it */
#define CU_BLOB_MAX ((size_t)1 << 20) /* a blob read for its workspace line */
#define CU_BLOBS_LOOKED 64           /* blobs looked at for the first user one */
#define CU_JSON_MAX ((size_t)1 << 20) /* meta.json (about 100 bytes) */
#define CU_TRACKING "ai-tracking/ai-code-tracking.db"
#define CU_DEFAULT_NAME "New Agent"  /* the agent's name for a chat nobody named */

/* snprintf into a path buffer: false when it does not fit (the path is then never used: a cut
 * one could name another file) */
#define REL(buf, ...) ((size_t)snprintf((buf), sizeof(buf), __VA_ARGS__) < sizeof(buf))

static int cu_id(const char *in, char *out)
{
	return agc_id_uuid(in, out);
}

static bool cu_id_whole(const char *id)
{
	return strlen(id) == AGC_UUID_LEN;
}

/* ---- roots --------------------------------------------------------------------------------- */

/* Add a root unless an earlier one is the same dir (by its path, or its real path). */
static int add_root(agc_rootset *rs, const char *name, const char *path, const char *source)
{
	int i = agc_rootset_add(rs, name, path, source);
	size_t k;

	if (i < 0)
		return -1;
	for (k = 0; k < (size_t)i; k++) {
		const agc_root *a = &rs->v[k], *b = &rs->v[i];
		struct stat sa, sb;
		/* the same dir under two names that no link tells apart (a bind mount of one on the
		 * other): one root, or every chat would count twice and lock itself out */
		bool same_dir = a->real && b->real && stat(a->real, &sa) == 0 && stat(b->real, &sb) == 0 &&
				S_ISDIR(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;

		if (strcmp(a->path, b->path) == 0 || (a->real && b->real && strcmp(a->real, b->real) == 0) || same_dir) {
			free(rs->v[i].path);
			free(rs->v[i].real);
			rs->n--;
			return 0;
		}
	}
	return 0;
}

static int cu_roots(agc_ctx *ctx, agc_rootset *rs)
{
	const char *env = agc_ctx_env(ctx, "CURSOR_CONFIG_DIR"), *xdg = agc_ctx_env(ctx, "XDG_CONFIG_HOME");
	char *path;
	int rc = 0;

	if (env && (path = agc_strdup(env))) {
		rc = add_root(rs, "env", path, "$CURSOR_CONFIG_DIR");
		free(path);
	} else if (env) {
		return -1;
	}
	/* XDG's rule: a relative value is ignored */
	if (rc == 0 && xdg && xdg[0] == '/') {
		path = agc_strfmt("%s/cursor", xdg);
		rc = path ? add_root(rs, "xdg", path, "$XDG_CONFIG_HOME/cursor") : -1;
		free(path);
		path = rc == 0 ? agc_strfmt("%s/Cursor", xdg) : NULL;
		rc = path ? add_root(rs, "xdg-cap", path, "$XDG_CONFIG_HOME/Cursor") : -1;
		free(path);
	}
	if (rc == 0) {
		path = agc_strfmt("%s/.config/cursor", ctx->home);
		rc = path ? add_root(rs, "config", path, "default (XDG)") : -1;
		free(path);
	}
	if (rc == 0) {
		path = agc_strfmt("%s/.config/Cursor", ctx->home);
		rc = path ? add_root(rs, "cfg-cap", path, "default (XDG, capital C)") : -1;
		free(path);
	}
	if (rc == 0) {
		path = agc_strfmt("%s/.cursor", ctx->home);
		rc = path ? add_root(rs, "home", path, "default") : -1;
		free(path);
	}
	return rc;
}

/* ---- a chat's store ------------------------------------------------------------------------ */

typedef struct cu_meta {
	char *name;       /* meta's name */
	char *agent_id;   /* meta's agentId */
	bool root_blob;   /* a latestRootBlobId that is not empty */
	int64_t created;  /* meta's createdAt, ms */
	char *workspace;  /* the first user blob's Workspace Path */
	const char *how;  /* "hex JSON" or "JSON" */
} cu_meta;

static void meta_release(cu_meta *m)
{
	free(m->name);
	free(m->agent_id);
	free(m->workspace);
	memset(m, 0, sizeof(*m));
}

static bool all_hex(const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (agc_hexval(s[i]) < 0)
			return false;
	return n > 0 && n % 2 == 0;
}

/* A meta value: hex-encoded UTF-8 JSON in most builds, raw JSON (text or bytes) in others. */
static json_t *meta_decode(const unsigned char *v, size_t n, const char **how)
{
	json_t *j = NULL;

	while (n && (v[n - 1] == ' ' || v[n - 1] == '\n' || v[n - 1] == '\r' || v[n - 1] == '\t'))
		n--;
	if (all_hex(v, n)) {
		char *raw = malloc(n / 2 + 1);
		size_t i;

		if (!raw)
			return NULL;
		for (i = 0; i < n / 2; i++)
			raw[i] = (char)(agc_hexval(v[2 * i]) << 4 | agc_hexval(v[2 * i + 1]));
		j = agc_json_parse(raw, n / 2);
		free(raw);
		*how = "hex JSON";
	}
	if (!j) {
		j = agc_json_parse((const char *)v, n);
		*how = "JSON";
	}
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* The text of a message blob's content: a string, or the text of its parts. */
static const char *blob_text(const json_t *c, size_t k)
{
	const json_t *part;

	if (json_is_string(c))
		return k == 0 ? json_string_value(c) : NULL;
	if (!json_is_array(c) || !(part = json_array_get(c, k)))
		return NULL;
	return json_is_string(json_object_get(part, "text")) ? json_string_value(json_object_get(part, "text")) : "";
}

/* The first user blob's "Workspace Path: ..." line (formats/cursor.md §7), looked for in the
 * first blobs only (per-message order is not stored: rowid order is the writes'). */
static char *blob_workspace(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	char *out = NULL;
	int n = 0;

	if (sqlite3_prepare_v2(db, "SELECT data FROM blobs ORDER BY rowid LIMIT ?1", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int(st, 1, CU_BLOBS_LOOKED);
	while (!out && n++ < CU_BLOBS_LOOKED && sqlite3_step(st) == SQLITE_ROW) {
		const char *d = sqlite3_column_blob(st, 0);
		int len = sqlite3_column_bytes(st, 0);
		json_t *j, *c;
		const char *role, *t;
		size_t k;

		if (!d || len <= 0 || (size_t)len > CU_BLOB_MAX || d[0] != '{' ||
		    !memmem(d, (size_t)len, "Workspace Path:", 15))
			continue;
		if (!(j = agc_json_parse(d, (size_t)len)))
			continue;
		role = agc_json_str(j, "role");
		c = json_object_get(j, "content");
		for (k = 0; role && strcmp(role, "user") == 0 && !out && (t = blob_text(c, k)); k++) {
			const char *w = strstr(t, "Workspace Path: ");
			size_t wl;

			if (!w)
				continue;
			w += 16;
			wl = strcspn(w, "\r\n");
			while (wl && w[wl - 1] == ' ')
				wl--;
			if (wl && w[0] == '/')
				out = agc_strndup(w, wl);
		}
		json_decref(j);
	}
	sqlite3_finalize(st);
	return out;
}

/* Read the meta row (and, when want_ws, the workspace line) of the store rel (a chat's
 * store.db beneath rootfd; abs its path). Only a regular file is opened, read as it is
 * (agc_db_open_snapshot: not a byte of it, its WAL or its -shm changed). Returns 0, AGC_ENOTFOUND (no
 * store), or -1 with *err a message (malloc'd). */
static int store_read(int rootfd, const char *rel, const char *abs, bool want_ws, cu_meta *m, char **err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct stat sb;
	json_t *j = NULL;
	int rc = -1;

	*err = NULL;
	if (fstatat(rootfd, rel, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return AGC_ENOTFOUND;
		*err = agc_strfmt("%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		*err = agc_strdup("not a regular file");
		return -1;
	}
	if (agc_db_open_snapshot(abs, &db) < 0) {
		const char *msg = agc_error_last();
		size_t al = strlen(abs);

		if (strncmp(msg, abs, al) == 0 && strncmp(msg + al, ": ", 2) == 0)
			msg += al + 2;
		*err = agc_strdup(msg);
		return -1;
	}
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = '0'", -1, &st, NULL) != SQLITE_OK) {
		*err = agc_strfmt("no meta table (%s)", sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_step(st) != SQLITE_ROW) {
		*err = agc_strdup("no meta row");
		goto out;
	}
	{
		const unsigned char *v = sqlite3_column_blob(st, 0);
		int n = sqlite3_column_bytes(st, 0);
		const json_t *x;

		if (!v || n <= 0 || (size_t)n > CU_META_MAX || !(j = meta_decode(v, (size_t)n, &m->how))) {
			*err = agc_strdup("its meta is neither JSON nor hex-encoded JSON");
			goto out;
		}
		if ((x = json_object_get(j, "name")) && json_is_string(x))
			m->name = agc_strdup(json_string_value(x));
		if ((x = json_object_get(j, "agentId")) && json_is_string(x))
			m->agent_id = agc_strdup(json_string_value(x));
		x = json_object_get(j, "latestRootBlobId");
		m->root_blob = json_is_string(x) && json_string_length(x) > 0;
		x = json_object_get(j, "createdAt");
		if (json_is_integer(x) && json_integer_value(x) > 0)
			m->created = json_integer_value(x);
		else if (json_is_real(x) && json_real_value(x) > 0 && json_real_value(x) < 9e15)
			m->created = (int64_t)json_real_value(x);
	}
	if (want_ws)
		m->workspace = blob_workspace(db);
	rc = 0;
out:
	json_decref(j);
	sqlite3_finalize(st);
	agc_db_close_snapshot(db);
	return rc;
}

typedef struct cu_side {
	char *title, *cwd;
	int64_t created;
} cu_side;

static void side_release(cu_side *s)
{
	free(s->title);
	free(s->cwd);
	memset(s, 0, sizeof(*s));
}

/* meta.json beside a store: {title, createdAtMs, updatedAtMs} or {schemaVersion, cwd, title,
 * createdAtMs} (formats/cursor.md §2). Nothing when absent or malformed. */
static void side_read(int rootfd, const char *rel, cu_side *s)
{
	agc_buf in = AGC_BUF_INIT_MAX(CU_JSON_MAX + 1);
	json_t *j, *x;
	const char *t;

	if (agc_read_at(rootfd, rel, CU_JSON_MAX, &in) < 0) {
		agc_buf_release(&in);
		return;
	}
	j = in.ptr ? agc_json_parse(in.ptr, in.len) : NULL;
	if (j && (t = agc_json_str(j, "title")) && *t && !s->title)
		s->title = agc_strdup(t);
	if (j && (t = agc_json_str(j, "cwd")) && t[0] == '/' && !s->cwd)
		s->cwd = agc_strdup(t);
	if (j && (x = json_object_get(j, "createdAtMs")) && json_is_integer(x) && json_integer_value(x) > 0 && !s->created)
		s->created = json_integer_value(x);
	json_decref(j);
	agc_buf_release(&in);
}

/* SPEC "Titles": the name meta gives, unless it is the agent's default, then meta.json's. */
static char *pick_title(const cu_meta *m, const cu_side *s)
{
	if (m->name && *m->name && strcmp(m->name, CU_DEFAULT_NAME) != 0)
		return agc_strdup(m->name);
	if (s->title)
		return agc_strdup(s->title);
	return m->name && *m->name ? agc_strdup(m->name) : NULL;
}

/* ---- discovery ----------------------------------------------------------------------------- */

static const char *const cu_transcript_sfx[] = {".txt", ".jsonl", ""};

/* Whether name (an entry of a subagents/ dir) is a sub-agent's transcript: <uuid>.jsonl,
 * <uuid>.txt or a <uuid>/ dir; its canonical id in id. */
static bool subagent_name(const char *name, char *id)
{
	size_t n = strlen(name);
	char tmp[AGC_UUID_LEN + 1];

	if (n < AGC_UUID_LEN)
		return false;
	if (n != AGC_UUID_LEN && strcmp(name + AGC_UUID_LEN, ".jsonl") != 0 && strcmp(name + AGC_UUID_LEN, ".txt") != 0)
		return false;
	memcpy(tmp, name, AGC_UUID_LEN);
	tmp[AGC_UUID_LEN] = '\0';
	return agc_id_uuid(tmp, id) == 0;
}

/* Whether name is id (canonical, lower case) in any letter case (R1: Cursor names a chat's dirs
 * after the id as --resume was given it), followed by one of the n suffixes sfx ("" for the
 * name alone). */
static bool id_entry(const char *name, const char *id, const char *const *sfx, size_t n)
{
	char head[AGC_UUID_LEN + 1], canon[AGC_ID_MAX];
	size_t i;

	if (strncasecmp(name, id, AGC_UUID_LEN) != 0)
		return false;
	memcpy(head, name, AGC_UUID_LEN);
	head[AGC_UUID_LEN] = '\0';
	if (agc_id_uuid(head, canon) < 0 || strcmp(canon, id) != 0)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(name + AGC_UUID_LEN, sfx[i]) == 0)
			return true;
	return false;
}

static const char *const cu_dir_sfx[] = {""};

/* A name of an agent's own dir that may be joined into a path. */
static bool plain_name(const char *name)
{
	return name[0] != '.' && agc_id_path_safe(name);
}

/* Whether id has anything of its own beneath any root: a chat dir in a bucket, an ACP dir, a
 * transcript of its own in a project. Such a chat is a session of its own, whatever another
 * chat's subagents/ dir holds: a name there never takes it along (R2: a record is trusted only
 * as far as the other side names it back, and nothing of the chat names the other one). */
static bool own_elsewhere(agc_plan *p, const char *id)
{
	size_t r;

	for (r = 0; r < p->roots->n; r++) {
		int fd = agc_plan_rootfd(p, r);
		char rel[4096];
		struct dirent *e, *f;
		size_t seen, fseen;
		DIR *d, *b;
		bool found = false;

		if (fd < 0)
			continue;
		if ((d = agc_dir_at(fd, "acp-sessions"))) {
			for (seen = 0; !found && (e = readdir(d)) && seen++ < CU_DIR_MAX;)
				found = id_entry(e->d_name, id, cu_dir_sfx, 1);
			closedir(d);
		}
		if (!found && (d = agc_dir_at(fd, "chats"))) {
			for (seen = 0; !found && (e = readdir(d)) && seen++ < CU_DIR_MAX;) {
				if (!plain_name(e->d_name) || !REL(rel, "chats/%s", e->d_name) || !(b = agc_dir_at(fd, rel)))
					continue;
				for (fseen = 0; !found && (f = readdir(b)) && fseen++ < CU_DIR_MAX;)
					found = id_entry(f->d_name, id, cu_dir_sfx, 1);
				closedir(b);
			}
			closedir(d);
		}
		if (!found && (d = agc_dir_at(fd, "projects"))) {
			for (seen = 0; !found && (e = readdir(d)) && seen++ < CU_DIR_MAX;) {
				if (!plain_name(e->d_name) || !REL(rel, "projects/%s/agent-transcripts", e->d_name) ||
				    !(b = agc_dir_at(fd, rel)))
					continue;
				for (fseen = 0; !found && (f = readdir(b)) && fseen++ < CU_DIR_MAX;)
					found = id_entry(f->d_name, id, cu_transcript_sfx, 3);
				closedir(b);
			}
			closedir(d);
		}
		if (found)
			return true;
	}
	return false;
}

/* The sub-agents of the transcript dir rel (a real dir of the session, not seen through a
 * link: SPEC R2, an id read there would reach artifacts) become the plan's ids; a name there
 * that is a chat of its own (own_elsewhere) stays that chat's, said in a hint. */
static int subagents(agc_plan *p, size_t r, int fd, const char *rel)
{
	char sub[4096], id[AGC_ID_MAX];
	struct dirent *e;
	size_t seen = 0;
	DIR *d;
	int rc = 0;

	struct stat st;

	if (!REL(sub, "%s/subagents", rel))
		return 0;
	/* a link in its place would lead to names of another tree: never listed (R2) */
	if (fstatat(fd, sub, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (!(d = agc_plan_dir(p, r, fd, sub)))
		return 0;
	while (rc == 0 && (e = agc_plan_readdir(p, r, sub, d)) && seen++ < CU_DIR_MAX) {
		bool known = false;
		size_t i;

		if (!subagent_name(e->d_name, id))
			continue;
		for (i = 0; i < p->ids.n && !known; i++)
			known = strcmp(p->ids.v[i], id) == 0;
		if (known)
			continue;
		if (own_elsewhere(p, id)) {
			char *msg = agc_strfmt("'%s/%s' names the chat %s, which has files of its own: it is not "
					       "taken as a sub-agent (purge it by its own id)", sub, e->d_name, id);

			rc = msg ? agc_plan_add_hint(p, NULL, msg) : -1;
			free(msg);
			continue;
		}
		rc = agc_plan_add_id(p, id);
	}
	closedir(d);
	return rc;
}

/* Every file and dir of id beneath root r: its chat dir in every bucket, its ACP dir, its
 * transcripts (whose sub-agents join the plan). */
static int id_files(agc_plan *p, size_t r, const char *id)
{
	int fd = agc_plan_rootfd(p, r), rc = 0;
	struct dirent *e, *f;
	char rel[4096], brel[4096];
	size_t seen = 0, bseen;
	DIR *d, *b;

	if (fd < 0)
		return 0;
	/* R1: its dirs in any letter case (Cursor names them after the id as given to --resume) */
	if ((d = agc_plan_dir(p, r, fd, "chats"))) {
		while (rc >= 0 && (e = agc_plan_readdir(p, r, "chats", d)) && seen++ < CU_DIR_MAX) {
			if (!plain_name(e->d_name) || !REL(brel, "chats/%s", e->d_name) ||
			    !(b = agc_plan_dir(p, r, fd, brel)))
				continue;
			for (bseen = 0; rc >= 0 && (f = agc_plan_readdir(p, r, brel, b)) && bseen++ < CU_DIR_MAX;)
				/* the store goes last: a purge stopped midway leaves the chat findable (R6) */
				if (id_entry(f->d_name, id, cu_dir_sfx, 1) && REL(rel, "%s/%s", brel, f->d_name))
					rc = agc_plan_add_art(p, r, rel, id, AGC_ART_RECORD, "store.db");
			closedir(b);
		}
		closedir(d);
	}
	if (rc < 0)
		return -1;
	if ((d = agc_plan_dir(p, r, fd, "acp-sessions"))) {
		for (seen = 0; rc >= 0 && (e = agc_plan_readdir(p, r, "acp-sessions", d)) && seen++ < CU_DIR_MAX;)
			if (id_entry(e->d_name, id, cu_dir_sfx, 1) && REL(rel, "acp-sessions/%s", e->d_name))
				rc = agc_plan_add_art(p, r, rel, id, AGC_ART_RECORD, "store.db");
		closedir(d);
	}
	if (rc < 0)
		return -1;
	seen = 0;
	if (!(d = agc_plan_dir(p, r, fd, "projects")))
		return 0;
	while (rc >= 0 && (e = agc_plan_readdir(p, r, "projects", d)) && seen++ < CU_DIR_MAX) {
		if (!plain_name(e->d_name) || !REL(brel, "projects/%s/agent-transcripts", e->d_name) ||
		    !(b = agc_plan_dir(p, r, fd, brel)))
			continue;
		for (bseen = 0; rc >= 0 && (f = agc_plan_readdir(p, r, brel, b)) && bseen++ < CU_DIR_MAX;) {
			if (!id_entry(f->d_name, id, cu_transcript_sfx, 3) || !REL(rel, "%s/%s", brel, f->d_name))
				continue;
			rc = agc_plan_add_art(p, r, rel, id, 0, NULL);
			if (rc == 1 && strlen(f->d_name) == AGC_UUID_LEN) {
				const agc_artifact *a = &p->arts.v[p->arts.n - 1];

				if (a->kind == 'd' && !a->behind_link)
					rc = subagents(p, r, fd, rel);
			}
		}
		closedir(b);
	}
	closedir(d);
	return rc < 0 ? -1 : 0;
}

/* A sub-agent with nothing of its own: its transcript inside a parent's subagents/ dir, in a
 * real dir of that parent. It goes only with the parent (plan->part_of), like a Claude
 * sub-agent; found in two parents it is refused, naming both. */
static int find_parent(agc_plan *p)
{
	size_t r;

	for (r = 0; r < p->roots->n; r++) {
		int fd = agc_plan_rootfd(p, r);
		struct dirent *e;
		size_t seen = 0;
		DIR *d;

		if (fd < 0 || !(d = agc_dir_at(fd, "projects")))
			continue;
		while ((e = readdir(d)) && seen++ < CU_DIR_MAX) {
			char rel[4096], id[AGC_ID_MAX];
			struct dirent *f;
			struct stat st;
			size_t pseen = 0;
			DIR *t;

			if (!plain_name(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISDIR(st.st_mode))
				continue;
			if (!REL(rel, "projects/%s/agent-transcripts", e->d_name))
				continue;
			if (fstatat(fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
			    !(t = agc_dir_at(fd, rel)))
				continue;
			while ((f = readdir(t)) && pseen++ < CU_DIR_MAX) {
				static const char *const sfx[] = {".jsonl", ".txt", ""};
				char sub[4096];
				size_t k;

				if (strlen(f->d_name) != AGC_UUID_LEN || agc_id_uuid(f->d_name, id) < 0 ||
				    fstatat(dirfd(t), f->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
					continue;
				for (k = 0; k < 3; k++) {
					if (!REL(sub, "%s/%s/subagents/%s%s", rel, f->d_name, p->id, sfx[k]) ||
					    fstatat(fd, sub, &st, AT_SYMLINK_NOFOLLOW) < 0)
						continue;
					if (p->part_of[0] && strcmp(p->part_of, id) != 0) {
						closedir(t);
						closedir(d);
						return agc_error_set(-1, "the sub-agent id '%s' is in two chats, '%s' and '%s': "
									 "name the chat instead",
								     p->id, p->part_of, id);
					}
					memcpy(p->part_of, id, AGC_UUID_LEN + 1);
					if (agc_plan_add_art(p, r, sub, p->id, AGC_ART_RECORD, NULL) < 0) {
						closedir(t);
						closedir(d);
						return -1;
					}
				}
			}
			closedir(t);
		}
		closedir(d);
	}
	return 0;
}

/* The tracking database of root r (ai-tracking/ai-code-tracking.db): the plan's rows in every
 * table with a conversationId column. One that cannot be read may hold them: the purge is
 * refused (after a purge: residual); one reached through a link is never changed (R2). */
static int tracking_rows(agc_plan *p, size_t r)
{
	int fd = agc_plan_rootfd(p, r), dbi, rc = 0;
	struct stat dir, st;
	sqlite3 *db = NULL;
	char **tables = NULL, *abs = NULL, *why = NULL;
	const char **todo = NULL;
	size_t nt = 0, n = 0, i, from = p->rows.n;
	bool linked;

	if (fd < 0 || fstatat(fd, "ai-tracking", &dir, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fstatat(fd, CU_TRACKING, &st, 0) < 0)
		return 0;
	linked = !S_ISDIR(dir.st_mode) || fstatat(fd, CU_TRACKING, &dir, AT_SYMLINK_NOFOLLOW) < 0 ||
		 S_ISLNK(dir.st_mode);
	if (!(abs = agc_plan_abspath(p->roots, r, CU_TRACKING)))
		return -1;
	if (!S_ISREG(st.st_mode))
		why = agc_strfmt("cannot read '%s': not a regular file", abs);
	/* one reached through a link is read from a private copy: a read in place would make a
	 * -shm beside it, outside the root (R2) */
	else if ((linked ? agc_db_open_snapshot(abs, &db) : agc_db_open_peek(abs, &db)) < 0 ||
		 agc_db_tables(db, &tables, &nt) < 0)
		why = agc_strfmt("cannot read '%s': %s", abs, agc_error_last());
	if (why) {
		rc = p->again ? agc_plan_add_note_kind(p, r, CU_TRACKING, "rows", why)
			      : agc_plan_add_refusal(p, r, CU_TRACKING, "rows", why);
		goto out;
	}
	if ((dbi = agc_plan_add_db(p, r, CU_TRACKING)) < 0 || !(todo = calloc(nt + 1, sizeof(*todo)))) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < nt; i++)
		if (agc_db_has_column(db, tables[i], "conversationId"))
			todo[n++] = tables[i];
	for (i = 0; i < n && rc == 0; i++) {
		size_t pick = agc_db_next_table(db, todo, n);

		rc = agc_plan_add_rows(p, (size_t)dbi, todo[pick], "conversationId", NULL, NULL, NULL, NULL);
		todo[pick] = NULL;
	}
	if (rc == 0)
		rc = agc_plan_count_rows(p, db, (size_t)dbi);
	if (rc == 0 && linked) {
		bool held = false;

		for (i = from; i < p->rows.n; i++) {
			held |= p->rows.v[i].count > 0;
			p->rows.v[i].count = p->rows.v[i].bytes = 0;
		}
		/* R2: behind a link the rows are left, as any artifact is, and the rest goes; the
		 * chat stays findable by them (exit 3, residual symlink) */
		if (held)
			rc = agc_plan_add_note_kind(p, r, CU_TRACKING, "rows", "symlink");
	}
out:
	free(todo);
	agc_db_strv_free(tables, nt);
	if (linked)
		agc_db_close_snapshot(db);
	else
		sqlite3_close(db);
	free(why);
	free(abs);
	return rc < 0 ? -1 : 0;
}

/* What a chat's dirs say of it, looked at one dir after another (pick_dir), the same for show
 * and ls: the first store that reads, one with a root blob before an empty one (the other
 * bucket's copy is the empty chat a resume from another dir makes), with the meta.json beside
 * it; the first dir's meta.json when no store reads. */
typedef struct cu_pick {
	cu_meta best;
	cu_side side;
	bool have;
	char *bucket;  /* the first chat dir's bucket */
} cu_pick;

/* One dir of the chat id: rel beneath fd, its store's path abs. Returns store_read's answer;
 * *how is the meta's encoding when it read, *err (malloc'd) why it did not, *other (malloc'd)
 * the chat another meta's agentId names, when not this one: the caller says them. */
static int pick_dir(cu_pick *k, int fd, const char *rel, const char *abs, const char *id, const char **how,
		    char **err, char **other)
{
	char path[4096];
	cu_side side = {0};
	cu_meta m = {0};
	int src;

	*how = NULL;
	*err = *other = NULL;
	if (!k->bucket && strncmp(rel, "chats/", 6) == 0)
		k->bucket = agc_strndup(rel + 6, strcspn(rel + 6, "/"));
	if (!REL(path, "%s/meta.json", rel))
		return -1;
	side_read(fd, path, &side);
	if (!REL(path, "%s/store.db", rel))
		return -1;
	src = store_read(fd, path, abs, !side.cwd, &m, err);
	*how = m.how;
	if (src == 0 && m.agent_id && strcasecmp(m.agent_id, id) != 0)
		*other = agc_strdup(m.agent_id);
	if (src == 0 && (!k->have || (!k->best.root_blob && m.root_blob))) {
		meta_release(&k->best);
		side_release(&k->side);
		k->best = m;
		k->side = side;
		k->have = true;
		return src;
	}
	meta_release(&m);
	if (!k->have && !k->side.title && !k->side.cwd && !k->side.created) {
		side_release(&k->side);
		k->side = side;
	} else {
		side_release(&side);
	}
	return src;
}

/* The picked title, project (meta.json's cwd, the workspace line, else the bucket as it is) and
 * creation time; k is released. */
static void pick_finish(cu_pick *k, char **title, char **project, int64_t *created)
{
	*title = pick_title(&k->best, &k->side);
	*project = k->side.cwd ? agc_strdup(k->side.cwd) : k->best.workspace ? agc_strdup(k->best.workspace)
						      : k->bucket ? agc_strdup(k->bucket) : NULL;
	*created = k->best.created ? k->best.created : k->side.created;
	meta_release(&k->best);
	side_release(&k->side);
	free(k->bucket);
	memset(k, 0, sizeof(*k));
}

/* show's metadata of the chat (pick_dir), and the layout it found; what cannot be read is said
 * (a hint), never guessed. */
static int chat_meta(agc_plan *p)
{
	cu_pick k = {0};
	char *errs = NULL;
	agc_buf layout = AGC_BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < p->arts.n && rc == 0; i++) {
		const agc_artifact *a = &p->arts.v[i];
		int fd = agc_plan_rootfd(p, a->root);
		char rel[4096], *abs, *err, *other;
		const char *how;
		struct stat st;
		int src;

		if (strcmp(a->session, p->id) != 0)
			continue;
		/* show says what it found, where (the layout is reported, not established) */
		if (strncmp(a->rel, "projects/", 9) == 0)
			agc_buf_printf(&layout, "%stranscript %s in '%s'%s", layout.len ? "; " : "",
				       a->kind == 'd' ? "<id>/" : strrchr(a->rel, '.') ? strrchr(a->rel, '.') : a->rel,
				       p->roots->v[a->root].path, a->behind_link ? " (behind a link)" : "");
		if (a->kind != 'd' || (strncmp(a->rel, "chats/", 6) != 0 && strncmp(a->rel, "acp-sessions/", 13) != 0) ||
		    !REL(rel, "%s/store.db", a->rel))
			continue;
		if (!(abs = agc_plan_abspath(p->roots, a->root, rel)))
			return -1;
		src = pick_dir(&k, fd, a->rel, abs, p->id, &how, &err, &other);
		agc_buf_printf(&layout, "%s%s in '%s': %s%s%s%s%s", layout.len ? "; " : "",
			       strncmp(a->rel, "chats/", 6) == 0 ? "chats/<bucket>/<id>/" : "acp-sessions/<id>/",
			       p->roots->v[a->root].path,
			       src == 0 ? "meta as " : src == AGC_ENOTFOUND ? "no store.db" : "store.db: ",
			       src == 0 ? how : src == AGC_ENOTFOUND ? "" : err ? err : "error",
			       REL(rel, "%s/meta.json", a->rel) && fstatat(fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 ? ", meta.json" : "",
			       REL(rel, "%s/store.db-wal", a->rel) && fstatat(fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size > 0
				       ? ", a WAL" : "",
			       a->behind_link ? " (behind a link)" : "");
		if (other) {
			char *msg = agc_strfmt("the meta of '%s' names the chat '%s', not its dir's '%s'", abs, other, p->id);

			rc = msg ? agc_plan_add_hint(p, NULL, msg) : -1;
			free(msg);
		}
		if (src < 0 && src != AGC_ENOTFOUND && err) {
			char *msg = agc_strfmt("%s%scannot read the chat's store '%s': %s", errs ? errs : "", errs ? "; " : "",
					       abs, err);

			free(errs);
			errs = msg;
		}
		free(err);
		free(other);
		free(abs);
	}
	if (errs && rc == 0)
		rc = agc_plan_add_hint(p, NULL, errs);
	if (p->ids.n > 1)
		agc_buf_printf(&layout, "; %zu sub-agent%s", p->ids.n - 1, p->ids.n == 2 ? "" : "s");
	p->meta.layout = layout.len ? agc_buf_detach(&layout, NULL) : NULL;
	agc_buf_release(&layout);
	pick_finish(&k, &p->meta.title, &p->meta.project, &p->meta.created_ms);
	free(errs);
	return rc;
}

static int cu_discover(agc_plan *p)
{
	size_t i, r;

	/* the plan's ids grow as sub-agents are found: each is looked for everywhere */
	for (i = 0; i < p->ids.n; i++)
		for (r = 0; r < p->roots->n; r++)
			if (id_files(p, r, p->ids.v[i]) < 0)
				return -1;
	if (!p->arts.n && find_parent(p) < 0)
		return -1;
	if (p->part_of[0])
		return 0;
	for (r = 0; r < p->roots->n && !p->gate_only; r++)
		if (tracking_rows(p, r) < 0)
			return -1;
	if (!p->gate_only && !p->again)
		return chat_meta(p);
	return 0;
}

/* ---- ls ------------------------------------------------------------------------------------ */

enum { K_CHAT, K_ACP, K_TRANSCRIPT, K_CHILD };

/* Something found while listing: an entry of id (kind K_*) at rel beneath root; for K_CHILD,
 * a sub-agent id of the chat parent, from its transcript dir. */
typedef struct hit {
	char id[AGC_UUID_LEN + 1];
	char parent[AGC_UUID_LEN + 1];
	unsigned char kind;
	size_t root;
	char *rel;
} hit;

typedef struct hits {
	hit *v;
	size_t n, cap;
} hits;

typedef struct crow {
	char id[AGC_UUID_LEN + 1];
	char *title, *project;
	int64_t created, updated;
	agc_size sz;
	size_t gate;
	const hit *store;      /* its first chat or ACP dir */
	const char *parent;    /* a chat whose transcript dir names it as a sub-agent (none for
				  a chat of its own) */
	const hit *child;      /* a sub-agent: its transcript in that dir */
	bool own;              /* it has a chat, ACP dir or transcript of its own */
} crow;

typedef struct crows {
	crow *v;
	size_t n, cap;
} crows;

static int hit_cmp(const void *a, const void *b)
{
	const hit *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	return c ? c : x->kind != y->kind ? (x->kind < y->kind ? -1 : 1) : strcmp(x->rel, y->rel);
}

static int crow_cmp(const void *a, const void *b)
{
	return strcmp(((const crow *)a)->id, ((const crow *)b)->id);
}

static crow *crow_find(crows *R, const char *id)
{
	crow key;

	snprintf(key.id, sizeof(key.id), "%s", id);
	return R->n ? bsearch(&key, R->v, R->n, sizeof(*R->v), crow_cmp) : NULL;
}

static int hit_add(hits *H, const char *id, const char *parent, unsigned kind, size_t root, const char *rel)
{
	hit *h = AGC_ARRAY_PUSH(H, (size_t)1 << 26);

	if (!h)
		return -1;
	memcpy(h->id, id, AGC_UUID_LEN + 1);
	if (parent)
		memcpy(h->parent, parent, AGC_UUID_LEN + 1);
	h->kind = (unsigned char)kind;
	h->root = root;
	if (!(h->rel = agc_strdup(rel))) {
		H->n--;
		return -1;
	}
	return 0;
}

typedef struct lctx {
	agc_ls_sink *sink;
	const agc_rootset *rs;
	hits H;
	crows R;
	bool orphans;  /* ls --orphans: collect tracking rows of no chat into O */
	bool cut;      /* a dir of chats could not be read: no orphan can be told */
	crows O;
} lctx;

static void lwarn(lctx *L, size_t r, const char *rel, const char *why)
{
	char *abs = agc_plan_abspath(L->rs, r, rel);
	char *msg = agc_strfmt("cannot read '%s': %s", abs ? abs : rel, why);

	L->cut = true;
	if (msg)
		L->sink->warn(L->sink, msg);
	free(msg);
	free(abs);
}

/* A dir of the listing, read-only; one that exists but cannot be read is said (R2). */
static DIR *ldir(lctx *L, size_t r, int fd, const char *rel)
{
	DIR *d = agc_dir_at(fd, rel);

	if (!d && errno != ENOENT && errno != ENOTDIR)
		lwarn(L, r, rel, strerror(errno));
	return d;
}

/* Whether name is a chat's dir name: a UUID in any letter case (R1: Cursor names the dir after
 * the id as given to --resume), its canonical id in id. */
static bool chat_name(const char *name, char *id)
{
	return strlen(name) == AGC_UUID_LEN && agc_id_uuid(name, id) == 0;
}

static int list_root(lctx *L, size_t r, int fd)
{
	struct dirent *e, *f;
	char rel[4096];
	size_t seen = 0;
	DIR *d, *b;
	int rc = 0;

	if ((d = ldir(L, r, fd, "chats"))) {
		while (rc == 0 && (e = readdir(d)) && seen++ < CU_DIR_MAX) {
			size_t bseen = 0;

			if (!plain_name(e->d_name))
				continue;
			if (!REL(rel, "chats/%s", e->d_name) || !(b = ldir(L, r, fd, rel)))
				continue;
			while (rc == 0 && (f = readdir(b)) && bseen++ < CU_DIR_MAX) {
				char crel[4096], cid[AGC_ID_MAX];

				if (!chat_name(f->d_name, cid))
					continue;
				if (!REL(crel, "%s/%s", rel, f->d_name))
					continue;
				rc = hit_add(&L->H, cid, NULL, K_CHAT, r, crel);
			}
			closedir(b);
		}
		closedir(d);
	}
	seen = 0;
	if (rc == 0 && (d = ldir(L, r, fd, "acp-sessions"))) {
		while (rc == 0 && (e = readdir(d)) && seen++ < CU_DIR_MAX) {
			char cid[AGC_ID_MAX];

			if (!chat_name(e->d_name, cid))
				continue;
			if (!REL(rel, "acp-sessions/%s", e->d_name))
				continue;
			rc = hit_add(&L->H, cid, NULL, K_ACP, r, rel);
		}
		closedir(d);
	}
	seen = 0;
	if (rc == 0 && (d = ldir(L, r, fd, "projects"))) {
		while (rc == 0 && (e = readdir(d)) && seen++ < CU_DIR_MAX) {
			size_t tseen = 0;

			if (!plain_name(e->d_name))
				continue;
			if (!REL(rel, "projects/%s/agent-transcripts", e->d_name) || !(b = ldir(L, r, fd, rel)))
				continue;
			while (rc == 0 && (f = readdir(b)) && tseen++ < CU_DIR_MAX) {
				char id[AGC_ID_MAX], trel[4096];
				size_t n = strlen(f->d_name);
				struct stat st;

				if (n < AGC_UUID_LEN || (n > AGC_UUID_LEN && strcmp(f->d_name + AGC_UUID_LEN, ".txt") != 0 &&
							 strcmp(f->d_name + AGC_UUID_LEN, ".jsonl") != 0))
					continue;
				memcpy(trel, f->d_name, AGC_UUID_LEN);
				trel[AGC_UUID_LEN] = '\0';
				if (!chat_name(trel, id))
					continue;
				if (!REL(trel, "%s/%s", rel, f->d_name))
					continue;
				rc = hit_add(&L->H, id, NULL, K_TRANSCRIPT, r, trel);
				/* a transcript dir's sub-agents, from a real dir only (R2) */
				if (rc == 0 && n == AGC_UUID_LEN && fstatat(dirfd(b), f->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				    S_ISDIR(st.st_mode)) {
					char srel[4096], cid[AGC_ID_MAX];
					struct dirent *g;
					size_t sseen = 0;
					DIR *s;

					if (!REL(srel, "%s/subagents", trel) || fstatat(fd, srel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
					    !(s = ldir(L, r, fd, srel)))
						continue;
					while (rc == 0 && (g = readdir(s)) && sseen++ < CU_DIR_MAX) {
						char frel[4096];

						if (subagent_name(g->d_name, cid) && strcmp(cid, id) != 0 &&
						    REL(frel, "%s/%s", srel, g->d_name))
							rc = hit_add(&L->H, cid, id, K_CHILD, r, frel);
					}
					closedir(s);
				}
			}
			closedir(b);
		}
		closedir(d);
	}
	return rc;
}

/* Each chat's rows in a tracking database, by conversationId: their stored bytes to the chat
 * (a sub-agent's to its parent, when it has nothing of its own). */
static void charge_tracking(lctx *L, size_t r, int fd)
{
	struct stat st;
	sqlite3 *db = NULL;
	char **tables = NULL, *abs;
	size_t nt = 0, i;

	struct stat lst;
	bool linked;

	if (fstatat(fd, CU_TRACKING, &st, 0) < 0)
		return;
	/* behind a link: read from a private copy, so no -shm is made outside the root (R2) */
	linked = fstatat(fd, "ai-tracking", &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(lst.st_mode) ||
		 fstatat(fd, CU_TRACKING, &lst, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(lst.st_mode);
	if (!(abs = agc_plan_abspath(L->rs, r, CU_TRACKING)))
		return;
	if (!S_ISREG(st.st_mode)) {
		lwarn(L, r, CU_TRACKING, "not a regular file");
	} else if ((linked ? agc_db_open_snapshot(abs, &db) : agc_db_open_peek(abs, &db)) < 0 ||
		   agc_db_tables(db, &tables, &nt) < 0) {
		char *msg = agc_strfmt("cannot read '%s': %s", abs, agc_error_last());

		if (msg)
			L->sink->warn(L->sink, msg);
		free(msg);
	}
	for (i = 0; db && i < nt; i++) {
		char *size, *t, *sql;
		sqlite3_stmt *q = NULL;

		if (!agc_db_has_column(db, tables[i], "conversationId"))
			continue;
		size = agc_db_row_size_sql(db, tables[i], NULL);
		t = agc_db_ident(tables[i]);
		/* a row's time, for an orphan's last activity: ms, or seconds (told by size) */
		sql = size && t ? agc_strfmt("SELECT conversationId, %s, %s FROM %s", size,
					     agc_db_has_column(db, tables[i], "updatedAt")   ? "\"updatedAt\""
					     : agc_db_has_column(db, tables[i], "createdAt") ? "\"createdAt\""
											    : "0",
					     t)
				: NULL;
		if (sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
			while (sqlite3_step(q) == SQLITE_ROW) {
				const char *id = (const char *)sqlite3_column_text(q, 0);
				char canon[AGC_ID_MAX];
				crow *c;

				/* R4 compares exactly: a row is the chat's when its id is the chat's */
				if (!id || agc_id_uuid(id, canon) < 0 || strcmp(canon, id) != 0)
					continue;
				if (!(c = crow_find(&L->R, canon))) {
					/* a row of no chat, dir or transcript: an orphan's (ls --orphans) */
					int64_t tm = sqlite3_column_int64(q, 2);
					crow *o = L->orphans ? AGC_ARRAY_PUSH(&L->O, (size_t)1 << 26) : NULL;

					if (o) {
						memcpy(o->id, canon, sizeof(o->id));
						o->sz.bytes = (uint64_t)sqlite3_column_int64(q, 1);
						o->updated = tm > 0 && tm < 100000000000LL ? tm * 1000 : tm > 0 ? tm : 0;
					}
					continue;
				}
				if (!c->own && c->parent)
					c = crow_find(&L->R, c->parent);
				if (c)
					c->sz.bytes += (uint64_t)sqlite3_column_int64(q, 1);
			}
		}
		sqlite3_finalize(q);
		free(sql);
		free(t);
		free(size);
	}
	agc_db_strv_free(tables, nt);
	if (linked)
		agc_db_close_snapshot(db);
	else
		sqlite3_close(db);
	free(abs);
}

static size_t cu_index(void)
{
	int i = agc_agent_find("cursor");

	return i < 0 ? 0 : (size_t)i;
}

/* Title, project and creation time of a listed chat, as show finds them (pick_dir); what cannot
 * be read is said. */
static void row_meta(lctx *L, crow *c, const int *fds)
{
	cu_pick k = {0};
	const hit *h;

	for (h = c->store; h && h < L->H.v + L->H.n && strcmp(h->id, c->id) == 0 && h->kind <= K_ACP; h++) {
		char rel[4096], *abs, *err, *other, *msg = NULL;
		const char *how;
		int src;

		if (fds[h->root] < 0 || !REL(rel, "%s/store.db", h->rel) || !(abs = agc_plan_abspath(L->rs, h->root, rel)))
			continue;
		src = pick_dir(&k, fds[h->root], h->rel, abs, c->id, &how, &err, &other);
		if (other)
			msg = agc_strfmt("'%s': its meta names the chat '%s', not its dir's '%s'", abs, other, c->id);
		else if (src < 0 && src != AGC_ENOTFOUND)
			msg = agc_strfmt("cannot read the chat's store '%s': %s", abs, err ? err : "error");
		if (msg)
			L->sink->warn(L->sink, msg);
		free(msg);
		free(err);
		free(other);
		free(abs);
	}
	pick_finish(&k, &c->title, &c->project, &c->created);
}

static int cu_list(agc_ctx *ctx, const agc_rootset *rs, const agc_ls_opts *opts, agc_ls_sink *sink)
{
	lctx L = {sink, rs, {0}, {0}, opts && opts->orphans, false, {0}};
	int fds[AGC_ROOTS_MAX];
	size_t i, r, agent = cu_index();
	int rc = 0;

	(void)ctx;
	(void)opts;
	for (r = 0; r < rs->n; r++) {
		fds[r] = rs->v[r].real ? open(rs->v[r].real, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (fds[r] < 0 && rs->v[r].exists)
			lwarn(&L, r, ".", strerror(rs->v[r].err ? rs->v[r].err : errno));
		if (fds[r] >= 0 && list_root(&L, r, fds[r]) < 0)
			rc = -1;
	}
	if (rc < 0)
		goto out;
	if (L.H.n > 1)
		qsort(L.H.v, L.H.n, sizeof(*L.H.v), hit_cmp);
	/* one row per id, in id order */
	for (i = 0; i < L.H.n; i++) {
		hit *h = &L.H.v[i];
		crow *c = L.R.n && strcmp(L.R.v[L.R.n - 1].id, h->id) == 0 ? &L.R.v[L.R.n - 1] : NULL;

		if (!c) {
			if (!(c = AGC_ARRAY_PUSH(&L.R, (size_t)1 << 26))) {
				rc = -1;
				goto out;
			}
			memcpy(c->id, h->id, sizeof(c->id));
		}
		if (h->kind == K_CHILD) {
			if (!c->parent)
				c->parent = h->parent;
			if (!c->child)
				c->child = h;
		} else {
			c->own = true;
		}
		if ((h->kind == K_CHAT || h->kind == K_ACP) && !c->store)
			c->store = h;
	}
	/* a chat with files of its own is a session of its own, whatever another chat's
	 * subagents/ dir holds (as discovery has it: own_elsewhere); a sub-agent whose named
	 * parent is not a chat of its own is nobody's */
	for (i = 0; i < L.R.n; i++) {
		crow *c = &L.R.v[i], *up;

		if (c->own) {
			c->parent = NULL;
			continue;
		}
		up = c->parent ? crow_find(&L.R, c->parent) : NULL;
		if (!up || !up->own)
			c->parent = NULL;
	}
	/* gates: each row that is a session of its own; a sub-agent with nothing of its own is
	 * its parent's (its files lie in the parent's transcript dir, its argv names the parent) */
	for (i = 0; i < L.R.n; i++)
		if (L.R.v[i].own) {
			L.R.v[i].gate = agc_ls_gate_new(sink, agent);
			agc_ls_gate_id(sink, L.R.v[i].gate, L.R.v[i].id);
		}
	for (i = 0; i < L.R.n; i++) {
		crow *c = &L.R.v[i], *up = c->parent ? crow_find(&L.R, c->parent) : NULL;

		if (up && !up->own)
			up = NULL;
		if (!c->own && up)
			agc_ls_gate_id(sink, up->gate, c->id);
		else if (c->own && up && up != c)
			agc_ls_gate_parent(sink, c->gate, up->gate);
	}
	for (i = 0; i < L.H.n; i++) {
		hit *h = &L.H.v[i];
		crow *c = crow_find(&L.R, h->id);

		if (!c || !c->own || h->kind == K_CHILD || fds[h->root] < 0)
			continue;
		agc_ls_charge_at(sink, c->gate, true, fds[h->root], h->rel, &c->sz, &c->updated);
	}
	for (r = 0; r < rs->n; r++)
		if (fds[r] >= 0)
			charge_tracking(&L, r, fds[r]);
	/* SPEC "ls --orphans": the tracking rows of a chat that is gone, one session per id, its
	 * rows' bytes and newest time; only when every dir of chats was read */
	if (L.orphans && L.cut) {
		sink->warn(sink, "cursor orphans not listed: a dir of chats could not be read");
	} else if (L.orphans) {
		size_t n = 0;

		if (L.O.n > 1)
			qsort(L.O.v, L.O.n, sizeof(*L.O.v), crow_cmp);
		for (i = 0; i < L.O.n; i++) {
			if (n && strcmp(L.O.v[n - 1].id, L.O.v[i].id) == 0) {
				L.O.v[n - 1].sz.bytes += L.O.v[i].sz.bytes;
				if (L.O.v[i].updated > L.O.v[n - 1].updated)
					L.O.v[n - 1].updated = L.O.v[i].updated;
				continue;
			}
			L.O.v[n++] = L.O.v[i];
		}
		L.O.n = n;
		for (i = 0; i < L.O.n && rc == 0; i++) {
			agc_session_info info = {0};
			size_t g = agc_ls_gate_new(sink, agent);

			agc_ls_gate_id(sink, g, L.O.v[i].id);
			info.agent = "cursor";
			info.id = L.O.v[i].id;
			info.updated_ms = L.O.v[i].updated;
			info.bytes = L.O.v[i].sz.bytes;
			info.orphan = 1;
			if (sink->add(sink, &info, g) < 0)
				rc = -1;
		}
	}
	/* a sub-agent's size and activity are its parent's too */
	for (i = 0; i < L.R.n; i++) {
		crow *c = &L.R.v[i], *up = c->own && c->parent ? crow_find(&L.R, c->parent) : NULL;

		if (!up || up == c || !up->own)
			continue;
		up->sz.bytes += c->sz.bytes;
		up->sz.disk += c->sz.disk;
		if (c->updated > up->updated)
			up->updated = c->updated;
	}
	for (i = 0; i < L.R.n && rc == 0; i++) {
		crow *c = &L.R.v[i];
		const crow *up = c->parent ? crow_find(&L.R, c->parent) : NULL;
		agc_session_info info = {0};

		if (!c->own)
			continue;
		row_meta(&L, c, fds);
		info.agent = "cursor";
		info.id = c->id;
		info.parent = up && up->own && up != c ? up->id : NULL;
		info.project = c->project;
		info.title = c->title;
		info.created_ms = c->created;
		info.updated_ms = c->updated;
		info.bytes = c->sz.bytes;
		info.disk = c->sz.disk;
		if (sink->add(sink, &info, c->gate) < 0)
			rc = -1;
	}
	/* the sub-agents: children of their chats (SPEC "ls": with --children), each of the size
	 * of its transcript (counted in the chat's too: it lies in the chat's dir), live when the
	 * chat is */
	for (i = 0; i < L.R.n && rc == 0; i++) {
		crow *c = &L.R.v[i];
		const crow *up = c->parent ? crow_find(&L.R, c->parent) : NULL;
		agc_session_info info = {0};
		agc_size sz = {0};
		int64_t mt = 0;

		if (c->own || !up || !c->child || fds[c->child->root] < 0)
			continue;
		(void)agc_size_at(fds[c->child->root], c->child->rel, &sz, &mt);
		info.agent = "cursor";
		info.id = c->id;
		info.parent = up->id;
		info.project = up->project;
		info.created_ms = mt;
		info.updated_ms = mt;
		info.bytes = sz.bytes;
		info.disk = sz.disk;
		if (sink->add(sink, &info, up->gate) < 0)
			rc = -1;
	}
out:
	for (i = 0; i < L.R.n; i++) {
		free(L.R.v[i].title);
		free(L.R.v[i].project);
	}
	free(L.R.v);
	free(L.O.v);
	for (i = 0; i < L.H.n; i++)
		free(L.H.v[i].rel);
	free(L.H.v);
	for (r = 0; r < rs->n; r++)
		if (fds[r] >= 0)
			close(fds[r]);
	return rc;
}

/* ---- roots: what each holds ----------------------------------------------------------------- */

/* Entries of dir rel beneath fd that are chat ids (dirs, or transcripts when files): their
 * count; *only_meta counts the dirs that hold only meta.json (an ACP probe's leftover). */
static size_t count_ids(int fd, const char *rel, bool dirs, size_t *only_meta)
{
	DIR *d = agc_dir_at(fd, rel);
	struct dirent *e;
	size_t n = 0, seen = 0;

	while (d && (e = readdir(d)) && seen++ < CU_DIR_MAX) {
		char id[AGC_ID_MAX];
		size_t len = strlen(e->d_name);

		if (len < AGC_UUID_LEN || (dirs && len != AGC_UUID_LEN))
			continue;
		memcpy(id, e->d_name, AGC_UUID_LEN);
		id[AGC_UUID_LEN] = '\0';
		if (!agc_id_is_uuid(id, AGC_UUID_LEN))
			continue;
		n++;
		if (only_meta) {
			DIR *c = agc_dir_at(dirfd(d), e->d_name);
			struct dirent *f;
			size_t other = 0, meta = 0;

			while (c && (f = readdir(c)))
				if (strcmp(f->d_name, ".") != 0 && strcmp(f->d_name, "..") != 0)
					*(strcmp(f->d_name, "meta.json") == 0 ? &meta : &other) += 1;
			if (c)
				closedir(c);
			*only_meta += meta && !other;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static char *cu_root_holds(const agc_rootset *rs, size_t i)
{
	agc_buf b = AGC_BUF_INIT;
	size_t buckets = 0, chats = 0, acp, leftovers = 0, projects = 0, transcripts = 0, seen = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd = rs->v[i].real ? open(rs->v[i].real, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd < 0)
		return NULL;
	if ((d = agc_dir_at(fd, "chats"))) {
		while ((e = readdir(d)) && seen++ < CU_DIR_MAX) {
			char rel[512];

			if (!plain_name(e->d_name) || !REL(rel, "chats/%s", e->d_name) ||
			    fstatat(fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
				continue;
			buckets++;
			chats += count_ids(fd, rel, true, NULL);
		}
		closedir(d);
	}
	acp = count_ids(fd, "acp-sessions", true, &leftovers);
	seen = 0;
	if ((d = agc_dir_at(fd, "projects"))) {
		while ((e = readdir(d)) && seen++ < CU_DIR_MAX) {
			char rel[512];
			size_t n;

			if (!plain_name(e->d_name) || !REL(rel, "projects/%s/agent-transcripts", e->d_name))
				continue;
			n = count_ids(fd, rel, false, NULL);
			projects += n > 0;
			transcripts += n;
		}
		closedir(d);
	}
	if (buckets)
		agc_buf_printf(&b, "chats: %zu in %zu bucket%s", chats, buckets, buckets == 1 ? "" : "s");
	if (acp)
		agc_buf_printf(&b, "%sacp-sessions: %zu (%zu with only meta.json)", b.len ? "; " : "", acp, leftovers);
	if (transcripts)
		agc_buf_printf(&b, "%stranscripts: %zu in %zu project%s", b.len ? "; " : "", transcripts, projects,
			       projects == 1 ? "" : "s");
	if (fstatat(fd, CU_TRACKING, &st, AT_SYMLINK_NOFOLLOW) == 0)
		agc_buf_printf(&b, "%s%s", b.len ? "; " : "", CU_TRACKING);
	close(fd);
	if (!b.len && agc_buf_adds(&b, "nothing of Cursor's") < 0)
		return NULL;
	return agc_buf_detach(&b, NULL);
}

/* ---- the adapter ---------------------------------------------------------------------------- */

/* compact: the tracking database of each root that has one (a chat's store.db is its own
 * and goes whole with it) */
static int cu_databases(agc_ctx *ctx, const agc_rootset *rs, int (*cb)(size_t root, const char *rel, void *ud),
			void *ud)
{
	size_t i;
	int rc = 0;

	(void)ctx;
	for (i = 0; i < rs->n && rc == 0; i++) {
		struct stat st;
		int fd;

		if (!rs->v[i].exists || rs->v[i].err || (fd = agc_walk_open_root(rs->v[i].real)) < 0)
			continue;
		if (fstatat(fd, CU_TRACKING, &st, AT_SYMLINK_NOFOLLOW) == 0)
			rc = cb(i, CU_TRACKING, ud);
		close(fd);
	}
	return rc;
}

/* ps and stop: Cursor's agent: the cursor-agent launcher, or the node it execs, running a
 * script from the cursor-agent install (formats/cursor.md §5: the holder shows as node). */
static bool cu_is_proc(const char *argv, size_t len)
{
	const char *b;
	size_t bl;

	if (!agc_argv_prog(argv, len, &b, &bl))
		return false;
	if (bl == 12 && memcmp(b, "cursor-agent", 12) == 0)
		return true;
	/* the script's path: b lies inside the argument, which starts after the previous NUL */
	{
		const char *a = b;

		while (a > argv && a[-1] != '\0')
			a--;
		return a != argv && memmem(a, (size_t)(b + bl - a), "/cursor-agent/", 14) != NULL;
	}
}

/* stop: the options whose value is the session the process runs */
static const char *const cursor_session_opts[] = {"--resume", NULL};

const agc_adapter agc_adapter_cursor = {
	.name = "cursor",
	.bit = AGC_AGENT_CURSOR,
	.id_canon = cu_id,
	.id_whole = cu_id_whole,
	.roots = cu_roots,
	.discover = cu_discover,
	.list = cu_list,
	.root_holds = cu_root_holds,
	.databases = cu_databases,
	.is_proc = cu_is_proc,
	.session_opts = cursor_session_opts,
};
