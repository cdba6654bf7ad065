/* launch_loop.c - build/launch-loop: kernel launches in a loop through the
 * mock libcudart and libcuda (tests/cuda/mock), for bench/launch_bench.sh.
 *
 *   launch-loop SECONDS
 *
 * It registers eight kernels' host stubs, as an nvcc-built program does at
 * start, then calls cudaLaunchKernel on them in turn, each kernel with its
 * own grid, until SECONDS have passed.  The mock runtime calls the mock
 * driver's cuLaunchKernel for every launch (its first launch of a kernel
 * gets the handle with cuLibraryGetKernel first), so under gpurecd each
 * launch is one probe hit at the driver, named from that load-time call:
 * a PyTorch process's launches, without a GPU.
 *
 * It prints one line:
 *   launches N cpu_s C
 * N: its launches; C: its own user+system CPU time (getrusage
 * RUSAGE_SELF), which includes what the uprobes on cuLaunchKernel cost:
 * they run in the launching task.  Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "mock/mockcuda.h"

/* The kernels: mangled name, grid, block, shared memory. */
#define KERNELS(X)                                                             \
	X(0, "_Z4gemmPKfS0_Pfiii", 64, 32, 1, 256, 49152)                      \
	X(1, "_Z7softmaxPfi", 1024, 1, 1, 128, 0)                              \
	X(2, "_Z9layernormPKfPfS1_S1_i", 2048, 1, 1, 256, 1024)                \
	X(3, "_Z4geluPfi", 4096, 1, 1, 512, 0)                                 \
	X(4, "_ZN2at6native18elementwise_kernelILi128ELi4EEEvi", 8192, 1, 1,   \
	  128, 0)                                                              \
	X(5, "_Z12reduce_sum_fPKfPfi", 256, 1, 1, 1024, 8192)                  \
	X(6, "_Z9attentionPKfS0_S0_Pfii", 32, 16, 8, 128, 65536)               \
	X(7, "_Z7dropoutPfPKff", 4096, 1, 1, 256, 0)

/* Host stubs: functions whose symbols are their kernels' mangled names,
 * as nvcc emits them. */
#define STUB(i, mangled, gx, gy, gz, bx, smem)                                 \
	__attribute__((noinline, used)) void stub##i(void) __asm__(mangled);   \
	void stub##i(void)                                                     \
	{                                                                      \
		__asm__ volatile("" ::: "memory");                             \
	}
KERNELS(STUB)

static const struct {
	void (*stub)(void);
	const char *mangled;
	dim3 grid, block;
	unsigned smem;
} kernels[] = {
#define ENTRY(i, mangled, gx, gy, gz, bx, smem)                                \
	{ stub##i, mangled, { gx, gy, gz }, { bx, 1, 1 }, smem },
	KERNELS(ENTRY)
};
#define NKERNELS (int)(sizeof(kernels) / sizeof(kernels[0]))

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc == 2 ? atof(argv[1]) : 0;
	if (secs <= 0) {
		fprintf(stderr, "usage: launch-loop SECONDS\n");
		return 2;
	}
	for (int i = 0; i < NKERNELS; i++)
		__cudaRegisterFunction(NULL, (const char *)kernels[i].stub,
				       (char *)kernels[i].mangled,
				       kernels[i].mangled, -1, NULL, NULL,
				       NULL, NULL, NULL);
	void *args[1] = { 0 };
	unsigned long n = 0;
	double end = now_s() + secs;
	/* The clock read once per 64 launches: not the loop's cost. */
	do {
		for (int j = 0; j < 64; j++, n++) {
			int k = (int)(n % NKERNELS);
			if (cudaLaunchKernel((const void *)kernels[k].stub,
					     kernels[k].grid, kernels[k].block,
					     args, kernels[k].smem,
					     (void *)0x77)) {
				fprintf(stderr, "launch-loop: launch %lu of "
						"%s failed\n",
					n, kernels[k].mangled);
				return 1;
			}
		}
	} while (now_s() < end);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("launches %lu cpu_s %.3f\n", n,
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) /
			       1e6);
	return 0;
}
