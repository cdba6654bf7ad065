/* drv_calls.c - a known sequence of driver and runtime calls against the
 * mock libcuda and libcudart (tests/cuda/mock), for tests/cuda/driver.sh.
 *
 * Usage: drv_calls GO_FILE [bogus]
 * Before GO_FILE exists it registers its kernel stub, gets one function
 * handle (cuModuleGetFunction "_Z6oldkerv") and makes one runtime launch
 * (whose first call makes the runtime's handle): when the program starts
 * before gpurecd, those handles are made unseen.  Once GO_FILE exists:
 *
 *   cuModuleGetFunction "_Z6kernelPfi"; cuLaunchKernel (3,2,1)x(64,2,1),
 *     smem 256, stream 0x77                                   x 4
 *   cuLibraryGetKernel "_ZN2ns4gemmILi128EEEvPKfPf"; cuLaunchKernelEx
 *     (16,8,1)x(256,1,1), smem 49152, stream 0x99              x 3
 *   cudaLaunchKernel vadd (10,1,1)x(128,1,1), smem 0, stream 0  x 5
 *   cuLaunchKernel with the early handle (1,1,1)x(32,1,1)       x 2
 *   cudaLaunchKernel with the early handle (2,2,1)x(16,1,1)     x 2
 *   cudaMalloc 1 MiB, cudaMemcpy 4096 B, cuCtxSynchronize.
 *
 * With "bogus", it first launches (2,1,1)x(2,1,1) with a handle no hooked
 * call made (so gpurecd cannot name it) and waits 0.5 s.
 */
#include <stdio.h>
#include <unistd.h>

#include "mock/mockcuda.h"

/* The host stub nvcc would emit for __global__ void vadd(float*, float*,
 * int): a function whose symbol is the kernel's mangled name. */
__attribute__((noinline, used)) void vadd_stub(void) __asm__("_Z4vaddPfS_i");
void vadd_stub(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: drv_calls GO_FILE [bogus]\n");
		return 2;
	}
	__cudaRegisterFunction(NULL, (const char *)vadd_stub,
			       (char *)"_Z4vaddPfS_i", "_Z4vaddPfS_i", -1, NULL,
			       NULL, NULL, NULL, NULL);
	CUfunction early, f;
	CUkernel k;
	int bad = 0;
	bad |= cuModuleGetFunction(&early, NULL, "_Z6oldkerv");
	bad |= cudaLaunchKernel((const void *)vadd_stub, (dim3){ 1, 1, 1 },
				(dim3){ 1, 1, 1 }, NULL, 0, NULL);
	while (access(argv[1], F_OK) != 0)
		usleep(10000);
	if (argc > 2) {
		bad |= cuLaunchKernel((CUfunction)0x1234, 2, 1, 1, 2, 1, 1, 0,
				      NULL, NULL, NULL);
		usleep(500000);
	}

	bad |= cuModuleGetFunction(&f, NULL, "_Z6kernelPfi");
	for (int i = 0; i < 4; i++)
		bad |= cuLaunchKernel(f, 3, 2, 1, 64, 2, 1, 256,
				      (CUstream)0x77, NULL, NULL);
	bad |= cuLibraryGetKernel(&k, NULL, "_ZN2ns4gemmILi128EEEvPKfPf");
	CUlaunchConfig cfg = { 16, 8, 1, 256, 1, 1, 49152, (CUstream)0x99,
			       NULL, 0 };
	for (int i = 0; i < 3; i++)
		bad |= cuLaunchKernelEx(&cfg, (CUfunction)k, NULL, NULL);
	for (int i = 0; i < 5; i++)
		bad |= cudaLaunchKernel((const void *)vadd_stub,
					(dim3){ 10, 1, 1 }, (dim3){ 128, 1, 1 },
					NULL, 0, NULL);
	for (int i = 0; i < 2; i++)
		bad |= cuLaunchKernel(early, 1, 1, 1, 32, 1, 1, 0, NULL, NULL,
				      NULL);
	for (int i = 0; i < 2; i++)
		bad |= cudaLaunchKernel((const void *)early, (dim3){ 2, 2, 1 },
					(dim3){ 16, 1, 1 }, NULL, 0, NULL);
	void *p;
	static char host[4096];
	bad |= cudaMalloc(&p, 1 << 20);
	bad |= cudaMemcpy(p, host, sizeof(host), 1);
	bad |= cuCtxSynchronize();
	/* Live a moment, as a CUDA process does: gpurecd reads the names
	 * of handles it never saw made from this process's memory, as it
	 * drains its ring buffer (every 5 ms). */
	usleep(300000);
	printf("%s\n", bad ? "some calls failed" : "ok");
	return bad != 0;
}
