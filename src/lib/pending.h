/* What a purge could not finish in a database's WAL: its rows went, but the checkpoint that
 * folds their zeroed pages back into the database was stopped by a reader mid-transaction, so
 * the deleted text is still in the database file's old pages (R6). The purge records the
 * database (path, device, inode) and the session's ids in agentgc's state dir
 * ($XDG_STATE_HOME/agentgc/wal-pending.jsonl, else ~/.local/state/agentgc/), so that a rerun of
 * any of those ids finds the database again and finishes the checkpoint; a checkpoint of that
 * database that succeeds clears its records. The file is small, read bounded, and rewritten by
 * a temp file and a rename under a lock file beside it. */
#ifndef AGC_PENDING_H
#define AGC_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Record that database (db: its absolute path, for a person reading the file; dev, ino: the
 * file) holds text of ids until its WAL is checkpointed. 0 or -1 (error set). */
int agc_pending_add(const char *db, dev_t dev, ino_t ino, char *const *ids, size_t n);
/* Whether a record names the database (dev, ino) for one of ids. */
bool agc_pending_has(dev_t dev, ino_t ino, char *const *ids, size_t n);
/* The database's WAL was checkpointed: its records go. 0 or -1. */
int agc_pending_clear(dev_t dev, ino_t ino);

#endif
