// demo.cu - the live demo's CUDA program (tests/demo/demo.sh): a small
// training-loop-shaped sequence of runtime calls, repeated, so that the
// demo's queries have launches, copies and syncs to count.
//
// Each of STEPS steps: fill x1, axpy x10, block_sum<256> x2, an async
// device-to-host copy of the sums, a stream synchronization, and a 5 ms
// pause on the host (a data loader, say).  Without a GPU every call fails
// fast (no driver) but is made, with these arguments, and recorded.
// argv[1], when given, is the number of steps (default 200).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__global__ void fill(float *x, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = v;
}

__global__ void axpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

template <int B> __global__ void block_sum(const float *x, float *out, int n)
{
	__shared__ float s[B];
	int i = blockIdx.x * B + threadIdx.x;
	s[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	for (int k = B / 2; k > 0; k /= 2) {
		if (threadIdx.x < k)
			s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		out[blockIdx.x] = s[0];
}

int main(int argc, char **argv)
{
	const int n = 1 << 20, threads = 256, blocks = n / threads;
	int steps = argc > 1 ? atoi(argv[1]) : 200;
	float *x = NULL, *y = NULL, *sums = NULL;
	static float host[n / 256];
	cudaStream_t s = 0;

	cudaError_t first = cudaMalloc((void **)&x, n * sizeof(float));
	cudaMalloc((void **)&y, n * sizeof(float));
	cudaMalloc((void **)&sums, blocks * sizeof(float));
	cudaStreamCreate(&s);
	cudaMemcpy(y, host, sizeof(host), cudaMemcpyHostToDevice);
	for (int step = 0; step < steps; step++) {
		fill<<<blocks, threads, 0, s>>>(x, 1.0f, n);
		for (int i = 0; i < 10; i++)
			axpy<<<blocks, threads, 0, s>>>(y, x, 0.5f, n);
		for (int i = 0; i < 2; i++)
			block_sum<256><<<blocks, 256, 0, s>>>(y, sums, n);
		cudaMemcpyAsync(host, sums, sizeof(host), cudaMemcpyDeviceToHost, s);
		cudaStreamSynchronize(s);
		usleep(5000);
	}
	cudaDeviceSynchronize();
	cudaFree(x);
	cudaFree(y);
	cudaFree(sums);
	printf("demo_cuda: %d steps, %d kernel launches; first call: %s\n", steps,
	       steps * 13, first == cudaSuccess ? "ok" : cudaGetErrorString(first));
	return 0;
}
