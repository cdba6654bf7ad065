/* libcuda.c - a mock CUDA driver for gpurecd's CI test of the driver layer
 * (tests/cuda/driver.sh): the real entry points' names and prototypes,
 * doing nothing but hand out handles.  The CI machines have no GPU, so the
 * real libcuda is never reached there.
 *
 * GR_MOCK_CUINIT_HANG=SECONDS makes cuInit hang that long, as the real one
 * does on a host whose GPU fell off the bus (Xid 79) while the driver
 * waits on it (tests/cuda/hung.sh): in 100 ms sleeps (SECONDS * 10 of
 * them), so that the hung thread leaves and comes back to the CPU and its
 * off-CPU intervals are rows while it still hangs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mockcuda.h"

#define API __attribute__((visibility("default"), noinline))

static unsigned long next_handle = 0x7f0000001000ul;

static void *handle(void)
{
	next_handle += 0x100;
	return (void *)next_handle;
}

/* One of a hung cuInit's waits: a function of its own, so that the
 * frame-pointer unwinding of its off-CPU stack (whose innermost frame,
 * libc's, keeps no frame pointer) skips this one and names cuInit. */
static __attribute__((noinline)) void nap(void)
{
	struct timespec t = { 0, 100000000 };
	while (nanosleep(&t, &t))
		;
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

API CUresult cuInit(unsigned flags)
{
	const char *hang = getenv("GR_MOCK_CUINIT_HANG");
	if (hang) {
		/* SECONDS as 100 ms waits, exactly that many. */
		long n = (long)(atof(hang) * 10 + 0.5);
		for (long i = 0; i < n; i++)
			nap();
		return 999; /* CUDA_ERROR_UNKNOWN: what it gives up with */
	}
	return flags ? 1 : 0; /* CUDA_ERROR_INVALID_VALUE: flags must be 0 */
}

/* A module function, laid out where gpurecd looks as the real driver's
 * is (driver 13.0, tests/gpu/handles.py): a word, then its name.  Library
 * kernels' handles (cuLibraryGetKernel) point at nothing, as the real
 * ones do. */
struct CUfunc_st {
	unsigned long kind;
	char *name;
};

API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	(void)m;
	/* The real driver reads the name (so gpurecd, reading it at
	 * return, finds its page present). */
	if (!f || !name || !strlen(name))
		return 1; /* CUDA_ERROR_INVALID_VALUE */
	struct CUfunc_st *fn = malloc(sizeof(*fn));
	if (!fn || !(fn->name = strdup(name))) {
		free(fn);
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	}
	fn->kind = 0x100000001ul;
	*f = fn;
	return 0;
}

API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	(void)l;
	if (!k || !name || !strlen(name))
		return 1;
	*k = handle();
	return 0;
}

/* Not an entry point: the two launch calls must not call each other (a
 * nested call would be folded, and this test is about one layer). */
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		       unsigned bx, unsigned by, unsigned bz)
{
	if (!f)
		return 400; /* CUDA_ERROR_INVALID_HANDLE */
	return gx && gy && gz && bx && by && bz ? 0 : 1;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
			    unsigned gz, unsigned bx, unsigned by, unsigned bz,
			    unsigned smem, CUstream s, void **params,
			    void **extra)
{
	(void)s, (void)params, (void)extra, (void)smem;
	return launch(f, gx, gy, gz, bx, by, bz);
}

API CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f,
			      void **params, void **extra)
{
	(void)params, (void)extra;
	return launch(f, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ,
		      cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ);
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	if (!p || !bytes)
		return 1;
	*p = (CUdeviceptr)handle();
	return 0;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
	return dst && src && bytes ? 0 : 1;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src,
				   size_t bytes, CUstream s)
{
	(void)s;
	return dst && src && bytes ? 0 : 1;
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
				   CUstream s)
{
	(void)s;
	return dst && src && bytes ? 0 : 1;
}

API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
	return dst && src && bytes ? 0 : 1;
}

API CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p)
{
	return p && p->WidthInBytes && p->Height ? 0 : 1;
}

API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s)
{
	(void)s;
	return p && p->WidthInBytes && p->Height ? 0 : 1;
}

/* Pinned host memory: real memory, so that the test's copies can point
 * into it. */
API CUresult cuMemAllocHost_v2(void **p, size_t bytes)
{
	if (!p || !bytes || !(*p = malloc(bytes)))
		return 1;
	return 0;
}

API CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags)
{
	(void)flags;
	return cuMemAllocHost_v2(p, bytes);
}

API CUresult cuMemFreeHost(void *p)
{
	free(p);
	return 0;
}

API CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags)
{
	(void)flags;
	return p && bytes ? 0 : 1;
}

API CUresult cuMemHostUnregister(void *p)
{
	return p ? 0 : 1;
}

API CUresult cuCtxSynchronize(void)
{
	return 0;
}

/* Graphs: a capture ends in a new graph, an instantiation in a new
 * executable graph; handles are never reused, unless GR_MOCK_GRAPH_REUSE
 * is set: then, as the real driver's allocator may, a capture returns the
 * graph handle destroyed last and an instantiation the executable graph
 * handle destroyed last (each once).  A NULL handle is refused, as the
 * real driver refuses it. */
static void *freed_graph, *freed_exec;

/* A handle destroyed last under GR_MOCK_GRAPH_REUSE, taken, or a new one. */
static void *graph_handle(void **freed)
{
	void *h = *freed;
	if (!h || !getenv("GR_MOCK_GRAPH_REUSE"))
		return handle();
	*freed = NULL;
	return h;
}

API CUresult cuStreamBeginCapture_v2(CUstream s, int mode)
{
	(void)s;
	return mode >= 0 && mode <= 2 ? 0 : 1;
}

API CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
	(void)s;
	if (!g)
		return 1;
	*g = graph_handle(&freed_graph);
	return 0;
}

API CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g,
					 unsigned long long flags)
{
	(void)flags;
	if (!e || !g)
		return 1;
	*e = graph_handle(&freed_exec);
	return 0;
}

API CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
	(void)s;
	return e ? 0 : 400;
}

API CUresult cuGraphExecDestroy(CUgraphExec e)
{
	if (!e)
		return 400;
	freed_exec = e;
	return 0;
}

API CUresult cuGraphDestroy(CUgraph g)
{
	if (!g)
		return 400;
	freed_graph = g;
	return 0;
}
