/* killpoint.c - an LD_PRELOAD shim that holds a writer still at one point
 * of its work on segments, so tests/faults/kill9.sh can kill -9 it there
 * instead of hoping a random instant falls into a window a few
 * milliseconds wide.  Not a part of any program; the store is unchanged.
 *
 * KILLPOINT names the point (unset: the shim does nothing):
 *   create  just after a *.seg file is created (O_CREAT|O_EXCL; or a
 *           temporary *.seg.* one), or just before one is renamed to
 *           *.seg: the file exists, empty, before SQLite has written its
 *           schema;
 *   schema  just after SQLite first opens a *.seg*-wal: the schema's
 *           transaction is under way;
 *   seal    just before a *.seg is made read-only (chmod/fchmod 0440):
 *           sealed in its metadata, WAL folded, not yet in the MANIFEST;
 *   fold    just before a *.seg-wal is unlinked: the WAL is being folded
 *           back into the segment as it is sealed;
 *   manifest just before a write(2) to the MANIFEST: the seal line.
 * KILLPOINT_SKIP=N lets the first N passes go; at the next one the shim
 * creates the file KILLPOINT_MARK and sleeps KILLPOINT_MS (default 2000)
 * milliseconds, in which the test kills it.  Matching is by file name, so
 * it holds whether the writer calls open or openat, chmod or fchmod.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int passes;

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*chmod_fn)(const char *, mode_t);
typedef int (*fchmod_fn)(int, mode_t);
typedef int (*unlink_fn)(const char *);
typedef int (*unlinkat_fn)(int, const char *, int);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*rename_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);
typedef int (*renameat2_fn)(int, const char *, int, const char *,
			    unsigned);

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int fd_ends_with(int fd, const char *suffix)
{
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	return ends_with(path, suffix);
}

/* At the named point: mark and hold still (the test kills us here). */
static void point(const char *name)
{
	const char *want = getenv("KILLPOINT"), *mark;
	if (!want || strcmp(want, name) != 0)
		return;
	const char *skip = getenv("KILLPOINT_SKIP");
	if (passes++ < (skip ? atoi(skip) : 0))
		return;
	if ((mark = getenv("KILLPOINT_MARK"))) {
		open_fn real = (open_fn)dlsym(RTLD_NEXT, "open");
		int fd = real(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	const char *ms = getenv("KILLPOINT_MS");
	long t = ms ? atol(ms) : 2000;
	struct timespec ts = { t / 1000, (t % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* A segment's name, or a temporary one made from it (NAME.seg.tmp). */
static int segment_file(const char *path)
{
	return strstr(path, ".seg") && !ends_with(path, "-wal") &&
	       !ends_with(path, "-shm") && !ends_with(path, "-journal");
}

static void after_open(const char *path, int flags, int fd)
{
	if (fd < 0 || !path)
		return;
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) &&
	    segment_file(path))
		point("create");
	else if (strstr(path, ".seg") && ends_with(path, "-wal"))
		point("schema");
}

#define REAL(name, type) \
	static type real_##name; \
	if (!real_##name) \
		real_##name = (type)dlsym(RTLD_NEXT, #name)

int open(const char *path, int flags, ...)
{
	REAL(open, open_fn);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	int fd = real_open(path, flags, mode);
	after_open(path, flags, fd);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	REAL(open64, open_fn);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	int fd = real_open64(path, flags, mode);
	after_open(path, flags, fd);
	return fd;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(openat, openat_fn);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	int fd = real_openat(dirfd, path, flags, mode);
	after_open(path, flags, fd);
	return fd;
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(openat64, openat_fn);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	int fd = real_openat64(dirfd, path, flags, mode);
	after_open(path, flags, fd);
	return fd;
}

int chmod(const char *path, mode_t mode)
{
	REAL(chmod, chmod_fn);
	if (mode == 0440 && ends_with(path, ".seg"))
		point("seal");
	return real_chmod(path, mode);
}

int fchmod(int fd, mode_t mode)
{
	REAL(fchmod, fchmod_fn);
	if (mode == 0440 && fd_ends_with(fd, ".seg"))
		point("seal");
	return real_fchmod(fd, mode);
}

/* A segment made under a temporary name and renamed into place is created
 * by the rename: the point is just before it. */
int rename(const char *from, const char *to)
{
	REAL(rename, rename_fn);
	if (ends_with(to, ".seg"))
		point("create");
	return real_rename(from, to);
}

int renameat(int fd1, const char *from, int fd2, const char *to)
{
	REAL(renameat, renameat_fn);
	if (ends_with(to, ".seg"))
		point("create");
	return real_renameat(fd1, from, fd2, to);
}

int renameat2(int fd1, const char *from, int fd2, const char *to,
	      unsigned flags)
{
	REAL(renameat2, renameat2_fn);
	if (ends_with(to, ".seg"))
		point("create");
	return real_renameat2(fd1, from, fd2, to, flags);
}

int unlink(const char *path)
{
	REAL(unlink, unlink_fn);
	if (ends_with(path, ".seg-wal"))
		point("fold");
	return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	REAL(unlinkat, unlinkat_fn);
	if (ends_with(path, ".seg-wal"))
		point("fold");
	return real_unlinkat(dirfd, path, flags);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(write, write_fn);
	const char *want = getenv("KILLPOINT");
	if (want && strcmp(want, "manifest") == 0 &&
	    fd_ends_with(fd, "/MANIFEST"))
		point("manifest");
	return real_write(fd, buf, n);
}
