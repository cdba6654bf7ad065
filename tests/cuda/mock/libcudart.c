/* libcudart.c - a mock CUDA runtime over the mock driver, shaped like the
 * real one where gpurecd cares: __cudaRegisterFunction records host stub ->
 * device name; the first launch of a kernel gets its handle with
 * cuLibraryGetKernel (lazy loading), and every launch calls cuLaunchKernel;
 * cudaLaunchKernel also takes a driver handle instead of a stub;
 * cudaMalloc, cudaMemcpy, cudaMemcpyAsync, the pinned-memory calls and
 * the graph calls call their driver counterparts; cudaDeviceReset forgets
 * the handles.  So one runtime call crosses two hooked layers, as on a GPU
 * host.  Every entry point but __cudaRegisterFunction initializes the
 * driver on first use (cuInit(0), once per process), as the real runtime
 * does: under a hooked runtime call it is folded into that call's row, and
 * under cudaGetDeviceCount (not hooked) or a runtime launch whose probes
 * are left to the driver it is a cuda_api row of its own. */
#include <pthread.h>
#include <string.h>

#include "mockcuda.h"

#define API __attribute__((visibility("default"), noinline))

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CUresult init_ret;

static void init_once(void)
{
	init_ret = cuInit(0);
}

/* cudaErrorInitializationError (3) if the driver's initialization
 * failed, as the real runtime answers every call then. */
static int init(void)
{
	pthread_once(&once, init_once);
	return init_ret ? 3 : 0;
}

static struct {
	const void *stub;
	const char *name;
	CUkernel k;
} fns[16];
static int nfns;

API void __cudaRegisterFunction(void **handle, const char *hostFun,
				char *deviceFun, const char *deviceName,
				int threadLimit, void *tid, void *bid,
				dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)handle, (void)deviceName, (void)threadLimit, (void)tid;
	(void)bid, (void)bDim, (void)gDim, (void)wSize;
	if (nfns < 16)
		fns[nfns].stub = hostFun, fns[nfns++].name = deviceFun;
}

API int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
			 size_t smem, void *stream)
{
	if (init())
		return 3;
	for (int i = 0; i < nfns; i++) {
		if (fns[i].stub != func)
			continue;
		if (!fns[i].k && cuLibraryGetKernel(&fns[i].k, NULL, fns[i].name))
			return 98; /* cudaErrorInvalidDeviceFunction */
		return cuLaunchKernel((CUfunction)fns[i].k, grid.x, grid.y,
				      grid.z, block.x, block.y, block.z,
				      (unsigned)smem, stream, args, NULL);
	}
	/* Not a stub: a driver handle, as PyTorch passes them. */
	return cuLaunchKernel((CUfunction)func, grid.x, grid.y, grid.z,
			      block.x, block.y, block.z, (unsigned)smem, stream,
			      args, NULL);
}

/* The devices there are: one, once the driver is up. */
API int cudaGetDeviceCount(int *n)
{
	if (init())
		return 3;
	*n = 1;
	return 0;
}

/* The context goes, and with it every handle: the next launch of each
 * kernel gets a new one. */
API int cudaDeviceReset(void)
{
	if (init())
		return 3;
	for (int i = 0; i < nfns; i++)
		fns[i].k = NULL;
	return 0;
}

API int cudaMalloc(void **p, size_t bytes)
{
	if (init())
		return 3;
	return cuMemAlloc_v2((CUdeviceptr *)p, bytes);
}

API int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind)
{
	if (init())
		return 3;
	(void)kind;
	return cuMemcpyHtoD_v2((CUdeviceptr)dst, src, bytes);
}

/* cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 */
API int cudaMemcpyAsync(void *dst, const void *src, size_t bytes, int kind,
			CUstream s)
{
	if (init())
		return 3;
	if (kind == 2)
		return cuMemcpyDtoHAsync_v2(dst, (CUdeviceptr)src, bytes, s);
	return cuMemcpyHtoDAsync_v2((CUdeviceptr)dst, src, bytes, s);
}

API int cudaMallocHost(void **p, size_t bytes)
{
	if (init())
		return 3;
	return cuMemAllocHost_v2(p, bytes);
}

API int cudaHostAlloc(void **p, size_t bytes, unsigned flags)
{
	if (init())
		return 3;
	return cuMemHostAlloc(p, bytes, flags);
}

API int cudaFreeHost(void *p)
{
	if (init())
		return 3;
	return cuMemFreeHost(p);
}

API int cudaHostRegister(void *p, size_t bytes, unsigned flags)
{
	if (init())
		return 3;
	return cuMemHostRegister_v2(p, bytes, flags);
}

API int cudaHostUnregister(void *p)
{
	if (init())
		return 3;
	return cuMemHostUnregister(p);
}

/* Graphs, each over its driver call (one row whichever layer). */
API int cudaStreamBeginCapture(void *stream, int mode)
{
	if (init())
		return 3;
	return cuStreamBeginCapture_v2(stream, mode);
}

API int cudaStreamEndCapture(void *stream, CUgraph *g)
{
	if (init())
		return 3;
	return cuStreamEndCapture(stream, g);
}

API int cudaGraphInstantiate(CUgraphExec *e, CUgraph g,
			     unsigned long long flags)
{
	if (init())
		return 3;
	return cuGraphInstantiateWithFlags(e, g, flags);
}

API int cudaGraphLaunch(CUgraphExec e, void *stream)
{
	if (init())
		return 3;
	return cuGraphLaunch(e, stream);
}

API int cudaGraphExecDestroy(CUgraphExec e)
{
	if (init())
		return 3;
	return cuGraphExecDestroy(e);
}

API int cudaGraphDestroy(CUgraph g)
{
	if (init())
		return 3;
	return cuGraphDestroy(g);
}
