/* A scratch dir with a home made by the fixture generator, for the unit tests that run on
 * generated homes (test_api, test_closure): only libc, so a test of the public API alone can
 * use it too. */
#ifndef AGC_FIXTURE_RUN_H
#define AGC_FIXTURE_RUN_H

#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FX_ARGS_MAX 32

static char fx_root[PATH_MAX];        /* the scratch dir, under $TMPDIR */
static char fx_home[PATH_MAX + 8];    /* fx_root/home */
static char fx_tmp[PATH_MAX + 8];     /* fx_root/tmp */
static char fx_manifest[PATH_MAX + 16]; /* fx_root/manifest.jsonl: what the generator made */

static inline int fx_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Make fx_root (named after tag) and run fixture --home fx_home --tmp fx_tmp --manifest
 * fx_manifest with the further arguments given (NULL-terminated). 0, or -1 (said on stderr). */
static inline int fx_make(const char *fixture, const char *tag, ...)
{
	const char *tmp = getenv("TMPDIR"), *argv[FX_ARGS_MAX + 8];
	size_t n = 0;
	va_list ap;
	pid_t pid;
	int st;

	snprintf(fx_root, sizeof(fx_root), "%s/agc-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	if (!mkdtemp(fx_root))
		return -1;
	snprintf(fx_home, sizeof(fx_home), "%s/home", fx_root);
	snprintf(fx_tmp, sizeof(fx_tmp), "%s/tmp", fx_root);
	snprintf(fx_manifest, sizeof(fx_manifest), "%s/manifest.jsonl", fx_root);
	argv[n++] = fixture;
	argv[n++] = "--home";
	argv[n++] = fx_home;
	argv[n++] = "--tmp";
	argv[n++] = fx_tmp;
	argv[n++] = "--manifest";
	argv[n++] = fx_manifest;
	va_start(ap, tag);
	while (n < FX_ARGS_MAX && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(fixture, (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s failed\n", fixture);
		return -1;
	}
	return 0;
}

/* Remove fx_root and everything in it. */
static inline int fx_remove(void)
{
	return nftw(fx_root, fx_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The program's one argument, the fixture generator; else usage on stderr and NULL. */
static inline const char *fx_arg(int argc, char **argv, const char *prog)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s AGENTGC-FIXTURE\n", prog);
		return NULL;
	}
	return argv[1];
}

#endif
