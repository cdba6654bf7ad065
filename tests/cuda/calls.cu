// calls.cu - a CUDA program with a known sequence of runtime calls, for
// gpurecd's tests.  Without a GPU every call fails fast (no driver), but it
// is made, with these arguments, and the probes must see each one exactly.
//
//   scale<<<dim3(4,2,1), dim3(128,1,1), 0>>>        x LAUNCH_A (3)
//   saxpy<<<dim3(64,1,1), dim3(256,1,1), 4096, s>>> x LAUNCH_B (5)
//   ns::tiled<float, 16><<<dim3(8,8,2), dim3(16,16,4), 1024>>> x LAUNCH_C (2)
//   cudaMalloc 1 MiB, 4 KiB; cudaMemcpy H2D 4096 B, D2H 8192 B (x2), D2D
//   1 MiB; cudaMemcpyAsync H2D 65536 B on s; cudaMemset 512 B;
//   cudaMemsetAsync 256 B on s; cudaDeviceSynchronize; cudaStreamSynchronize(s);
//   cudaFree x2.
// Then the copies the memcpy-sync and memcpy-pageable reports judge:
//   cudaMallocHost 4 KiB and cudaHostAlloc 8 KiB (they fail: their out
//   pointers keep the malloc'd buffers they held, which stay pageable);
//   cudaHostRegister of a malloc'd 16 KiB (fails too);
//   cudaMemcpyAsync H2D 4096 B from the cudaMallocHost buffer, D2H 16384 B
//   to the malloc'd one, cudaMemcpy2DAsync H2D 128x4 B, cudaMemcpy3D H2D
//   64x4x2 B, cudaMemcpyToSymbol 64 B, cudaMemcpy default 100 B.
// It prints the host pointers ("ptr NAME VALUE", decimal) for the test.
// argv[1], when given, is a number of seconds to sleep first (discovery of
// a file gpurecd has never seen), or a file to wait for (a process started
// before gpurecd, whose kernels registered unseen); argv[2] seconds to
// linger before exiting
// (names of launches come from the process's mappings, read from /proc:
// see docs/recorder.md on processes that exit within milliseconds).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }
__global__ void saxpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}
namespace ns {
template <typename T, int N> __global__ void tiled(T *m) { m[threadIdx.x] += N; }
}
__device__ float dsym[16];

static void ptr(const char *name, const void *p)
{
	printf("ptr %s %lu\n", name, (unsigned long)p);
}

int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] == '/')
		for (int i = 0; i < 600 && access(argv[1], F_OK); i++)
			usleep(50000);
	else if (argc > 1)
		usleep((useconds_t)(atof(argv[1]) * 1e6));
	float *d = NULL, *e = NULL;
	static char host[1 << 20];
	cudaStream_t s = (cudaStream_t)0x1234; // never created: no driver
	printf("malloc %d\n", cudaMalloc((void **)&d, 1 << 20));
	printf("malloc %d\n", cudaMalloc((void **)&e, 4096));
	printf("memcpy %d\n", cudaMemcpy(d, host, 4096, cudaMemcpyHostToDevice));
	for (int i = 0; i < 2; i++)
		cudaMemcpy(host, d, 8192, cudaMemcpyDeviceToHost);
	cudaMemcpy(e, d, 1 << 20, cudaMemcpyDeviceToDevice);
	cudaMemcpyAsync(d, host, 65536, cudaMemcpyHostToDevice, s);
	cudaMemset(d, 0, 512);
	cudaMemsetAsync(d, 1, 256, s);
	for (int i = 0; i < 3; i++)
		scale<<<dim3(4, 2, 1), dim3(128, 1, 1)>>>(d, 2.0f);
	for (int i = 0; i < 5; i++)
		saxpy<<<dim3(64, 1, 1), dim3(256, 1, 1), 4096, s>>>(d, e, 3.0f, 1000);
	for (int i = 0; i < 2; i++)
		ns::tiled<float, 16><<<dim3(8, 8, 2), dim3(16, 16, 4), 1024>>>(d);
	printf("launch %d\n", cudaGetLastError());
	cudaDeviceSynchronize();
	cudaStreamSynchronize(s);
	cudaFree(d);
	cudaFree(e);

	char *pin = (char *)malloc(4096), *pin2 = (char *)malloc(8192);
	char *pg = (char *)malloc(16384);
	ptr("host", host), ptr("pin", pin), ptr("pin2", pin2), ptr("pg", pg);
	printf("mallochost %d\n", cudaMallocHost((void **)&pin, 4096));
	printf("hostalloc %d\n", cudaHostAlloc((void **)&pin2, 8192, 0));
	printf("register %d\n", cudaHostRegister(pg, 16384, 0));
	cudaMemcpyAsync(d, pin, 4096, cudaMemcpyHostToDevice, s);
	cudaMemcpyAsync(pg, d, 16384, cudaMemcpyDeviceToHost, s);
	cudaMemcpy2DAsync(d, 256, host, 256, 128, 4, cudaMemcpyHostToDevice, s);
	cudaMemcpy3DParms p3 = {};
	p3.srcPtr = make_cudaPitchedPtr(host + 4096, 64, 64, 4);
	p3.dstPtr = make_cudaPitchedPtr((void *)0x7000, 64, 64, 4);
	p3.extent = make_cudaExtent(64, 4, 2);
	p3.kind = cudaMemcpyHostToDevice;
	cudaMemcpy3D(&p3);
	cudaMemcpyToSymbol(dsym, host, 64);
	cudaMemcpy(pg, host + 8192, 100, cudaMemcpyDefault);
	if (argc > 2)
		usleep((useconds_t)(atof(argv[2]) * 1e6));
	return 0;
}
