/* mockcuda.h - the slice of the CUDA driver and runtime ABI that the mock
 * libraries (libcuda.c, libcudart.c) and drv_calls.c share.  Prototypes
 * follow CUDA 13's cuda.h and cuda_runtime_api.h exactly: the argument
 * order and widths are what gpurecd decodes. */
#ifndef GR_MOCKCUDA_H
#define GR_MOCKCUDA_H

#include <stddef.h>

typedef int CUresult;
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
typedef struct CUmod_st *CUmodule;
typedef struct CUlib_st *CUlibrary;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

typedef struct {
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	CUstream hStream;
	void *attrs;
	unsigned numAttrs;
} CUlaunchConfig;

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			unsigned bx, unsigned by, unsigned bz, unsigned smem,
			CUstream s, void **params, void **extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f,
			  void **params, void **extra);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuCtxSynchronize(void);
CUresult cuStreamBeginCapture_v2(CUstream s, int mode);
CUresult cuStreamEndCapture(CUstream s, CUgraph *g);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g,
				     unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec e, CUstream s);
CUresult cuGraphExecDestroy(CUgraphExec e);
CUresult cuGraphDestroy(CUgraph g);

typedef struct { unsigned x, y, z; } dim3;
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
		     size_t smem, void *stream);
int cudaMalloc(void **p, size_t bytes);
int cudaDeviceReset(void);
int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind);
int cudaStreamBeginCapture(void *stream, int mode);
int cudaStreamEndCapture(void *stream, CUgraph *g);
int cudaGraphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long flags);
int cudaGraphLaunch(CUgraphExec e, void *stream);
int cudaGraphExecDestroy(CUgraphExec e);
int cudaGraphDestroy(CUgraph g);
void __cudaRegisterFunction(void **handle, const char *hostFun,
			    char *deviceFun, const char *deviceName,
			    int threadLimit, void *tid, void *bid, dim3 *bDim,
			    dim3 *gDim, int *wSize);

#endif
