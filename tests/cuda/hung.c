/* hung.c - processes whose only CUDA calls are unhooked, or that hang in
 * the driver's initialization, against the mock libcuda and libcudart
 * (tests/cuda/mock), for tests/cuda/hung.sh.
 *
 * Usage: hung count FILE BYTES
 *   cudaGetDeviceCount (not hooked; the runtime calls cuInit(0) in it),
 *   opens FILE, prints "tid T", "fd F" and "ret R count N", sleeps 1 s
 *   (one nanosleep), writes BYTES bytes to FILE, exits 0.
 *
 * Usage: hung idle FILE BYTES
 *   No CUDA call at all (the libraries are mapped: linked in).  Opens
 *   FILE, prints "tid T" and "fd F", waits 0.5 s (gpurecd finds the
 *   mappings when the process execs), sleeps 1 s (one nanosleep), writes
 *   BYTES bytes to FILE, exits 0.
 *
 * Usage: hung init
 *   Prints "tid T", then calls cudaGetDeviceCount, whose cuInit hangs as
 *   long as GR_MOCK_CUINIT_HANG says (tests/cuda/mock/libcuda.c); prints
 *   "ret R" once it gives up, exits 0.
 *
 * Exit status 0, or 2 with a message naming what failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mock/mockcuda.h"

static void die(const char *what)
{
	fprintf(stderr, "hung: %s\n", what);
	exit(2);
}

static void sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	while (nanosleep(&t, &t))
		;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "init")) {
		int n = 0;
		printf("tid %d\n", gettid());
		fflush(stdout);
		int r = cudaGetDeviceCount(&n);
		printf("ret %d\n", r);
		return 0;
	}
	if (argc != 4 || (strcmp(argv[1], "count") && strcmp(argv[1], "idle")))
		die("usage: hung count|idle FILE BYTES | hung init");
	int count = !strcmp(argv[1], "count"), n = -1, r = -1;
	size_t bytes = strtoul(argv[3], NULL, 10);
	char *buf = calloc(1, bytes + 1);
	if (!buf)
		die("no memory");
	if (count)
		r = cudaGetDeviceCount(&n);
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot open the file");
	printf("tid %d\nfd %d\n", gettid(), fd);
	if (count)
		printf("ret %d count %d\n", r, n);
	fflush(stdout);
	if (!count)
		sleep_s(0.5);
	sleep_s(1.0);
	if (write(fd, buf, bytes) != (ssize_t)bytes)
		die("short write");
	close(fd);
	return 0;
}
