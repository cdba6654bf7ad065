/* graphs_gaps.c - known CUDA graph calls and known pauses between launches,
 * against the mock libcuda and libcudart (tests/cuda/mock), for
 * tests/cuda/graphs_gaps.sh (the graphs and launch-gaps reports).
 *
 * Usage: graphs_gaps graphs
 *   on stream 0x51, 15 times: capture, end capture, instantiate, launch,
 *     destroy the executable graph, destroy the graph (a re-capture storm)
 *   on stream 0x52, once: capture, end capture, instantiate; launch x 5;
 *     destroy both
 *   one instantiation of a NULL graph, which fails (1)
 *
 * Usage: graphs_gaps gaps READ_FILE WRITE_FILE
 *   Thread "gg-launch" (main) makes one cudaMalloc and one instantiated
 *   graph (so gpurecd traces the process), starts thread "gg-helper",
 *   prints both thread ids, and waits 0.5 s for gpurecd.  Then:
 *     5 kernel launches, 20 ms apart (pauses under any threshold)
 *     gap 1: sleep 300 ms; open READ_FILE, 4 reads of 64 KiB; meanwhile
 *            gg-helper sleeps 50 ms and makes 2 reads of 4 KiB of it
 *     a graph launch, 30 ms, 2 kernel launches
 *     gap 2: sleep 200 ms; open WRITE_FILE, write 4 KiB
 *     1 kernel launch
 *     gap 3: sleep 150 ms, join gg-helper, exit 0
 *   Nothing is printed after the first launch: a write to stdout would be
 *   a file call of the launching thread.
 *
 * Exit status 0, or 2 with a message naming what failed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "mock/mockcuda.h"

#define S1 ((void *)0x51)
#define S2 ((void *)0x52)

/* The host stub nvcc would emit for __global__ void step(float *). */
__attribute__((noinline, used)) void step_stub(void) __asm__("_Z4stepPf");
void step_stub(void)
{
	__asm__ volatile("" ::: "memory");
}

static int launch(int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad |= cudaLaunchKernel((const void *)step_stub,
					(dim3){ 4, 1, 1 }, (dim3){ 64, 1, 1 },
					NULL, 0, NULL);
	return bad;
}

/* capture: one capture on stream s, instantiated. */
static int capture(void *s, CUgraph *g, CUgraphExec *e)
{
	int bad = cudaStreamBeginCapture(s, 0);
	bad |= cudaStreamEndCapture(s, g);
	return bad | cudaGraphInstantiate(e, *g, 0);
}

static int graphs(void)
{
	CUgraph g;
	CUgraphExec e;
	int bad = 0;
	for (int i = 0; i < 15; i++) {
		bad |= capture(S1, &g, &e);
		bad |= cudaGraphLaunch(e, S1);
		bad |= cudaGraphExecDestroy(e);
		bad |= cudaGraphDestroy(g);
	}
	bad |= capture(S2, &g, &e);
	for (int i = 0; i < 5; i++)
		bad |= cudaGraphLaunch(e, S2);
	bad |= cudaGraphExecDestroy(e);
	bad |= cudaGraphDestroy(g);
	if (cudaGraphInstantiate(&e, NULL, 0) != 1)
		bad = 1;
	return bad;
}

static sem_t ready, go;
static const char *read_file;
static int helper_tid, helper_bad;

static int read_n(const char *path, int n, size_t len)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY), bad = fd < 0;
	for (int i = 0; i < n && !bad; i++)
		bad = read(fd, buf, len) != (ssize_t)len;
	if (fd >= 0)
		close(fd);
	return bad;
}

static void *helper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "gg-helper");
	helper_tid = gettid();
	sem_post(&ready);
	sem_wait(&go);
	usleep(50000);
	helper_bad = read_n(read_file, 2, 4096);
	return NULL;
}

static int gaps(const char *rfile, const char *wfile)
{
	static char buf[4096];
	pthread_t t;
	CUgraph g;
	CUgraphExec e;
	void *p;
	int bad = 0, fd;

	prctl(PR_SET_NAME, "gg-launch");
	read_file = rfile;
	__cudaRegisterFunction(NULL, (const char *)step_stub, (char *)"_Z4stepPf",
			       "_Z4stepPf", -1, NULL, NULL, NULL, NULL, NULL);
	bad |= cudaMalloc(&p, 4096);
	bad |= capture(S1, &g, &e);
	if (sem_init(&ready, 0, 0) || sem_init(&go, 0, 0) ||
	    pthread_create(&t, NULL, helper, NULL))
		return 1;
	sem_wait(&ready); /* the helper has its tid */
	printf("launcher %d\nhelper %d\n", gettid(), helper_tid);
	fflush(stdout);
	usleep(500000);

	bad |= launch(1);
	for (int i = 0; i < 4; i++) {
		usleep(20000);
		bad |= launch(1);
	}
	sem_post(&go);
	usleep(300000);
	bad |= read_n(rfile, 4, 65536);
	bad |= cudaGraphLaunch(e, S1);
	usleep(30000);
	bad |= launch(2);
	usleep(200000);
	fd = open(wfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bad |= fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf);
	if (fd >= 0)
		close(fd);
	bad |= launch(1);
	usleep(150000);
	pthread_join(t, NULL);
	return bad | helper_bad;
}

int main(int argc, char **argv)
{
	int bad;
	if (argc == 2 && !strcmp(argv[1], "graphs"))
		bad = graphs();
	else if (argc == 4 && !strcmp(argv[1], "gaps"))
		bad = gaps(argv[2], argv[3]);
	else {
		fprintf(stderr, "usage: graphs_gaps graphs | graphs_gaps gaps "
				"READ_FILE WRITE_FILE\n");
		return 2;
	}
	if (bad)
		fprintf(stderr, "graphs_gaps %s: a call failed\n", argv[1]);
	return bad ? 2 : 0;
}
