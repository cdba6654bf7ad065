/* graph_kernels.c - kernels captured into CUDA graphs and replayed, against
 * the mock libcuda and libcudart (tests/cuda/mock), for
 * tests/cuda/graph_kernels.sh (the cuda_graph_kernel and cuda_graph_exec
 * views, and the graph-kernels and top-kernels reports).
 *
 * Kernels (host stubs as nvcc emits them): step(float *), reduce(float *,
 * int), scale(float *).  Streams S1 = 0x61, S2 = 0x62.
 *
 * Usage: graph_kernels replay   (run with GR_MOCK_GRAPH_REUSE=1)
 *   2 launches of step <<<4, 64>>> on S1, not captured
 *   capture on S1: step <<<4, 64>>>, reduce <<<(8,2), 128, 256>>>,
 *     step <<<16, 32>>>; meanwhile scale <<<1, 1>>> on S2 (not captured)
 *     -> graph G
 *   capture on S1: scale <<<1, 1>>> -> graph G2, never instantiated
 *   instantiate G -> E1, launch E1 7 times on S1
 *   instantiate G -> E2, launch E2 3 times on S2
 *   one failing graph launch (NULL): it runs nothing
 *   destroy E1 and G; capture on S1: reduce <<<(8,2), 128, 256>>> ->
 *     graph G3 (G's handle again); instantiate G3 -> E3 (E1's handle
 *     again); launch E3 2 times on S1
 *   So step runs 2 + 7 * 2 + 3 * 2 = 22 times, reduce 7 + 3 + 2 = 12
 *   times, scale once.
 *
 * Usage: graph_kernels before GO_FILE
 *   captures step <<<4, 64>>> on S1, instantiates, prints "ready", waits
 *   for GO_FILE to exist (gpurecd starts meanwhile), then launches the
 *   executable graph 4 times on S1.
 *
 * Exit status 0, or 2 with a message naming what failed.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mock/mockcuda.h"

#define S1 ((void *)0x61)
#define S2 ((void *)0x62)

/* The host stubs nvcc would emit for the three __global__ functions. */
__attribute__((noinline, used)) void step_stub(void) __asm__("_Z4stepPf");
__attribute__((noinline, used)) void reduce_stub(void) __asm__("_Z6reducePfi");
__attribute__((noinline, used)) void scale_stub(void) __asm__("_Z5scalePf");
void step_stub(void)
{
	__asm__ volatile("" ::: "memory");
}
void reduce_stub(void)
{
	__asm__ volatile("" ::: "memory");
}
void scale_stub(void)
{
	__asm__ volatile("" ::: "memory");
}

static int launch(void (*stub)(void), unsigned gx, unsigned gy, unsigned bx,
		  size_t smem, void *s)
{
	return cudaLaunchKernel((const void *)stub, (dim3){ gx, gy, 1 },
				(dim3){ bx, 1, 1 }, NULL, smem, s);
}

static void reg(void (*stub)(void), const char *name)
{
	__cudaRegisterFunction(NULL, (const char *)stub, (char *)name, name,
			       -1, NULL, NULL, NULL, NULL, NULL);
}

static int replays(CUgraphExec e, void *s, int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad |= cudaGraphLaunch(e, s);
	return bad;
}

static int replay(void)
{
	CUgraph g, g2, g3;
	CUgraphExec e1, e2, e3;
	void *p;
	int bad = cudaMalloc(&p, 4096);

	bad |= launch(step_stub, 4, 1, 64, 0, S1);
	bad |= launch(step_stub, 4, 1, 64, 0, S1);

	bad |= cudaStreamBeginCapture(S1, 0);
	bad |= launch(step_stub, 4, 1, 64, 0, S1);
	bad |= launch(reduce_stub, 8, 2, 128, 256, S1);
	bad |= launch(scale_stub, 1, 1, 1, 0, S2);
	bad |= launch(step_stub, 16, 1, 32, 0, S1);
	bad |= cudaStreamEndCapture(S1, &g);

	bad |= cudaStreamBeginCapture(S1, 0);
	bad |= launch(scale_stub, 1, 1, 1, 0, S1);
	bad |= cudaStreamEndCapture(S1, &g2);

	bad |= cudaGraphInstantiate(&e1, g, 0);
	bad |= replays(e1, S1, 7);
	bad |= cudaGraphInstantiate(&e2, g, 0);
	bad |= replays(e2, S2, 3);
	if (cudaGraphLaunch(NULL, S1) == 0)
		bad = 1;

	bad |= cudaGraphExecDestroy(e1);
	bad |= cudaGraphDestroy(g);
	bad |= cudaStreamBeginCapture(S1, 0);
	bad |= launch(reduce_stub, 8, 2, 128, 256, S1);
	bad |= cudaStreamEndCapture(S1, &g3);
	bad |= cudaGraphInstantiate(&e3, g3, 0);
	if (g3 != g || e3 != e1) {
		fprintf(stderr, "graph_kernels: handles not reused "
				"(GR_MOCK_GRAPH_REUSE unset?)\n");
		return 1;
	}
	bad |= replays(e3, S1, 2);
	return bad;
}

static int before(const char *go)
{
	CUgraph g;
	CUgraphExec e;
	int bad = cudaStreamBeginCapture(S1, 0);

	bad |= launch(step_stub, 4, 1, 64, 0, S1);
	bad |= cudaStreamEndCapture(S1, &g);
	bad |= cudaGraphInstantiate(&e, g, 0);
	printf("ready\n");
	fflush(stdout);
	while (access(go, F_OK))
		usleep(10000);
	return bad | replays(e, S1, 4);
}

int main(int argc, char **argv)
{
	int bad;

	reg(step_stub, "_Z4stepPf");
	reg(reduce_stub, "_Z6reducePfi");
	reg(scale_stub, "_Z5scalePf");
	if (argc == 2 && !strcmp(argv[1], "replay"))
		bad = replay();
	else if (argc == 3 && !strcmp(argv[1], "before"))
		bad = before(argv[2]);
	else {
		fprintf(stderr, "usage: graph_kernels replay | graph_kernels "
				"before GO_FILE\n");
		return 2;
	}
	if (bad)
		fprintf(stderr, "graph_kernels %s: a call failed\n", argv[1]);
	return bad ? 2 : 0;
}
