/* Whether a directory listed earlier in a run has changed since, as the kernel tells it
 * (inotify on Linux): a listing a run keeps stays good while no entry of its dir was made,
 * removed, renamed or had its attributes changed, and the dir itself was not moved, removed or
 * changed. That replaces a stat of the dir per use, and is exact where the dir's times are not
 * (a change in the same tick as the last one leaves them as they were).
 *
 * Only where the kernel sees every change: a dir on a local file system of a known kind. On a
 * network or user-space file system another machine's or process's change may never reach
 * inotify, and agc_dirwatch_mark says no: the caller keeps its own check. */
#ifndef AGC_DIRWATCH_H
#define AGC_DIRWATCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct agc_dirwatch agc_dirwatch;

/* What a listing keeps to ask later whether its dir changed (agc_dirwatch_same). */
typedef struct agc_dirmark {
	int wd;
	uint64_t n;     /* the dir's changes told when the mark was made */
	uint64_t lost;  /* the watch's overflows then: after one, every mark is stale */
} agc_dirmark;

/* A new watch, or NULL where there is none to have (not Linux, no inotify instance left):
 * every mark then fails and callers keep their own checks. */
agc_dirwatch *agc_dirwatch_new(void);
void agc_dirwatch_free(agc_dirwatch *w);

/* Watch the directory open at fd (borrowed) and mark it, before the caller reads it: every
 * change after this call makes agc_dirwatch_same false. False (m untouched) when it cannot be
 * watched: w NULL, a file system the kernel may not see all changes of, no watch left. */
bool agc_dirwatch_mark(agc_dirwatch *w, int fd, agc_dirmark *m);

/* Read what the kernel told since the last poll (never blocks). A poll before a round of
 * agc_dirwatch_same calls makes them answer for every change made before it. */
void agc_dirwatch_poll(agc_dirwatch *w);

/* Whether nothing was told of the dir of m, up to the last poll, since m was made. */
bool agc_dirwatch_same(const agc_dirwatch *w, const agc_dirmark *m);

#endif
