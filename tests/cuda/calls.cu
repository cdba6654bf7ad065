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
	if (argc > 2)
		usleep((useconds_t)(atof(argv[2]) * 1e6));
	return 0;
}
