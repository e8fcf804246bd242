/* agentgc's own state dir: small files a later run reads (checkpoints a purge could not
 * finish, where a budget-limited prune stopped). */
#ifndef AGC_STATE_H
#define AGC_STATE_H

#include <stdbool.h>
#include <stddef.h>

/* The state dir ($XDG_STATE_HOME/agentgc, else $HOME/.local/state/agentgc; a relative
 * XDG_STATE_HOME is ignored, as the XDG spec says) in out; made (0700, with its parents)
 * when make is set. 0 or -1 (error set). */
int agc_state_dir(char *out, size_t size, bool make);

/* Write len bytes of data as dir/name by a temp file beside it (mode 0600, fsync) and a
 * rename, so a reader sees the old file or the new one; len 0 removes the file. 0 or -1. */
int agc_state_write(const char *dir, const char *name, const char *data, size_t len);

#endif
