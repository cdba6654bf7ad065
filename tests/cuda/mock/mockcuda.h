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

typedef enum {
	CU_MEMORYTYPE_HOST = 1,
	CU_MEMORYTYPE_DEVICE = 2,
	CU_MEMORYTYPE_ARRAY = 3,
	CU_MEMORYTYPE_UNIFIED = 4,
} CUmemorytype;
typedef struct CUarray_st *CUarray;

typedef struct {
	size_t srcXInBytes, srcY;
	CUmemorytype srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	CUmemorytype dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

CUresult cuInit(unsigned flags);
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			unsigned bx, unsigned by, unsigned bz, unsigned smem,
			CUstream s, void **params, void **extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f,
			  void **params, void **extra);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
			      CUstream s);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
			      CUstream s);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s);
CUresult cuMemAllocHost_v2(void **p, size_t bytes);
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags);
CUresult cuMemFreeHost(void *p);
CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags);
CUresult cuMemHostUnregister(void *p);
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
int cudaGetDeviceCount(int *n);
int cudaMalloc(void **p, size_t bytes);
int cudaDeviceReset(void);
int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind);
int cudaMemcpyAsync(void *dst, const void *src, size_t bytes, int kind,
		    CUstream s);
int cudaMallocHost(void **p, size_t bytes);
int cudaHostAlloc(void **p, size_t bytes, unsigned flags);
int cudaFreeHost(void *p);
int cudaHostRegister(void *p, size_t bytes, unsigned flags);
int cudaHostUnregister(void *p);
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
