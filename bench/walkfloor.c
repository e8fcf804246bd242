/* The floor `ls` is measured against: the least a program can do to learn the size of
 * every file below some dirs. One getdents64 pass per directory into one reused buffer,
 * d_type to tell dirs from files, one statx (size only, links not followed) per file, the
 * subdirs opened relative to their parent. It prints the number of files and their total
 * size; it knows nothing of sessions.
 *   walkfloor DIR...
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static uint64_t files, bytes;

static void walk(int dfd)
{
	char buf[32768];
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
		if (n <= 0)
			return;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			off += d->d_reclen;
			const char *name = d->d_name;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if (d->d_type == DT_DIR) {
				int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					walk(sub);
					close(sub);
				}
				continue;
			}
			struct statx sx;
			if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_SIZE, &sx) == 0) {
				files++;
				bytes += sx.stx_size;
			}
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: walkfloor DIR...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		walk(fd);
		close(fd);
	}
	printf("%llu files, %llu bytes\n", (unsigned long long)files, (unsigned long long)bytes);
	return 0;
}
