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
 *   cudaMalloc 1 MiB, cudaMemcpy 4096 B;
 *   then copies whose host side is pinned or pageable (below, for the
 *   memcpy-sync and memcpy-pageable reports), printing the pointers as
 *   "ptr NAME VALUE" lines; cuCtxSynchronize.
 *
 * With "bogus", it first launches (2,1,1)x(2,1,1) with a handle no hooked
 * call made (so gpurecd cannot name it) and waits 0.5 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mock/mockcuda.h"

/* The host stub nvcc would emit for __global__ void vadd(float*, float*,
 * int): a function whose symbol is the kernel's mangled name. */
__attribute__((noinline, used)) void vadd_stub(void) __asm__("_Z4vaddPfS_i");
void vadd_stub(void)
{
	__asm__ volatile("" ::: "memory");
}

static void ptr(const char *name, const void *p)
{
	printf("ptr %s %lu\n", name, (unsigned long)p);
}

/* Pinned memory from the runtime (cudaMallocHost), the driver
 * (cuMemHostAlloc) and a registration, pageable memory from malloc; each
 * copy's host side is marked P (pinned) or G (pageable). */
static int pinned_and_pageable(void *dev)
{
	char *pin, *hal, *pg = malloc(16384), *reg = malloc(8192);
	CUstream s = (CUstream)0x55;
	CUdeviceptr d = (CUdeviceptr)dev;
	int bad = 0;

	bad |= cudaMallocHost((void **)&pin, 65536);
	bad |= cuMemHostAlloc((void **)&hal, 32768, 0);
	bad |= cudaHostRegister(reg, 8192, 0);
	ptr("dev", dev), ptr("pin", pin), ptr("hal", hal), ptr("pg", pg);
	ptr("reg", reg);
	bad |= cudaMemcpyAsync(dev, pin, 4096, 1, s);           /* P */
	bad |= cudaMemcpyAsync(pin + 60000, dev, 4096, 2, s);   /* P, inside */
	bad |= cudaMemcpyAsync(dev, pg, 16384, 1, s);           /* G */
	bad |= cuMemcpyDtoHAsync_v2(pg + 100, d, 2048, s);      /* G */
	bad |= cuMemcpyHtoDAsync_v2(d, hal, 32768, s);          /* P */
	bad |= cuMemcpyHtoDAsync_v2(d, reg, 8192, s);           /* P */
	bad |= cudaHostUnregister(reg);
	bad |= cuMemcpyHtoDAsync_v2(d, reg, 8192, s);           /* G again */
	bad |= cuMemHostRegister_v2(reg, 8192, 0);
	bad |= cuMemcpyHtoDAsync_v2(d, reg + 4096, 4096, s);    /* P again */
	/* Default direction: the device side is in cudaMalloc's memory. */
	bad |= cuMemcpy(d, (CUdeviceptr)pg, 1024);              /* G */
	bad |= cuMemcpy(d, (CUdeviceptr)hal, 512);              /* P */
	CUDA_MEMCPY2D h2d = {
		.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = pg,
		.srcPitch = 512, .dstMemoryType = CU_MEMORYTYPE_DEVICE,
		.dstDevice = d, .dstPitch = 512, .WidthInBytes = 256,
		.Height = 4,
	};
	bad |= cuMemcpy2DAsync_v2(&h2d, s);                     /* G */
	CUDA_MEMCPY2D d2h = {
		.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d,
		.srcPitch = 128, .dstMemoryType = CU_MEMORYTYPE_HOST,
		.dstHost = hal + 1024, .dstPitch = 128, .WidthInBytes = 128,
		.Height = 8,
	};
	bad |= cuMemcpy2D_v2(&d2h);                             /* P */
	bad |= cudaFreeHost(pin);
	/* The pointer's value only: freed, it is no longer pinned. */
	bad |= cudaMemcpyAsync(dev, pin, 4096, 1, s);           /* G */
	return bad;
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
	ptr("host", host);
	bad |= pinned_and_pageable(p);
	bad |= cuCtxSynchronize();
	/* Live a moment, as a CUDA process does: gpurecd reads the names
	 * of handles it never saw made from this process's memory, as it
	 * drains its ring buffer (every 5 ms). */
	usleep(300000);
	printf("%s\n", bad ? "some calls failed" : "ok");
	return bad != 0;
}
