/* apis.c - the table of hooked CUDA entry points.
 *
 * One row per exported symbol; ids are indices.  Argument indices count
 * from 0 in the C prototype (x86-64: 0-5 in registers, 6-9 on the stack).
 * Variants are listed explicitly (_v2, _ptsz for per-thread default
 * streams, _ptds for per-thread default-stream synchronous calls): each is
 * its own symbol in libcudart and libcuda, and applications reach all of
 * them.  Sources: CUDA 13.0 cuda_runtime_api.h and cuda.h; NCCL 2.28
 * nccl.h.
 */
#include <linux/types.h>

#include "recorder/cuda/cuda.h"
#include "recorder/cuda/apis.h"

/* Entries start from BASE (every index -1) and override what they use. */
#pragma GCC diagnostic ignored "-Woverride-init"

#define N -1
#define BASE .bytes = N, .bytes2 = N, .mul = 1, .kind = N, .stream = N, \
	     .dst = N, .src = N, .ptr = N, .out = N, .handle = N, .strct = N, \
	     .name = N, .dtype = N, .redop = N, .peer = N, .comm = N, \
	     .nranks = N, .rank = N

#define LAUNCH(s, sh, st) { .sym = s, .shape = sh, BASE, .strct = st }
/* CPY(sym, dst, src, bytes, bytes2, kind, fixed kind, stream, async):
 * argument indices, N where the call has none. */
#define CPY(s, d, sr, b, b2, k, fk, str, as) { .sym = s, \
	.shape = GR_SH_MEMCPY, BASE, .dst = d, .src = sr, .bytes = b, \
	.bytes2 = b2, .kind = k, .fixed_kind = fk, .stream = str, .async = as }
/* Copies whose parameters are a struct (arg 0): 3D from the source
 * pitched pointer on (offset 32), driver 2D whole (128 bytes). */
#define CPY_ST(s, sh, off, str, as) { .sym = s, .shape = sh, BASE, \
	.strct = 0, .strct_off = off, .wide = 1, .stream = str, .async = as }
#define SET(s, b, b2, m, str, as) { .sym = s, .shape = GR_SH_MEMSET, BASE, \
	.bytes = b, .bytes2 = b2, .mul = m, .stream = str, .async = as }
#define ALLOC(s, o, b, b2) { .sym = s, .shape = GR_SH_ALLOC, BASE, .out = o, \
	.bytes = b, .bytes2 = b2, .op = "alloc" }
#define FREE(s) { .sym = s, .shape = GR_SH_FREE, BASE, .ptr = 0, .op = "free" }
/* Page-locking memory the caller has (ptr, size): an "alloc" of pinned
 * memory whose pointer is an argument, undone by a "free". */
#define REG(s) { .sym = s, .shape = GR_SH_ALLOC, BASE, .ptr = 0, .bytes = 1, \
	.op = "alloc" }
#define SYNC(s, str) { .sym = s, .shape = GR_SH_SYNC, BASE, .stream = str }
#define GRAPH(s, o, op_, h, str, out_) { .sym = s, .shape = GR_SH_GRAPH, BASE, \
	.op = op_, .handle = h, .stream = str, .out = out_ }
#define NAME(s, o, h, nm) { .sym = s, .shape = GR_SH_NAME, BASE, .out = o, \
	.handle = h, .name = nm }

/* NCCL: COLL(sym, count, datatype, redop, root, comm, stream) and
 * P2P(sym, count, datatype, peer, comm, stream); count is held in bytes. */
#define COLL(s, n, dt, op_, rt, cm, str) { .sym = s, .shape = GR_SH_NCCL_COLL, \
	BASE, .bytes = n, .dtype = dt, .redop = op_, .peer = rt, .comm = cm, \
	.stream = str }
#define P2P(s, n, dt, pr, cm, str) { .sym = s, .shape = GR_SH_NCCL_P2P, BASE, \
	.bytes = n, .dtype = dt, .peer = pr, .comm = cm, .stream = str }
#define NCCL(s, sh) { .sym = s, .shape = sh, BASE }

const struct gr_api gr_apis[] = {
	/* Launches: cuda_kernel. */
	LAUNCH("cudaLaunchKernel", GR_SH_LAUNCH_RT, N),
	LAUNCH("cudaLaunchKernel_ptsz", GR_SH_LAUNCH_RT, N),
	LAUNCH("cudaLaunchCooperativeKernel", GR_SH_LAUNCH_RT, N),
	LAUNCH("cudaLaunchCooperativeKernel_ptsz", GR_SH_LAUNCH_RT, N),
	LAUNCH("cudaLaunchKernelExC", GR_SH_LAUNCH_RT_EX, 0),
	LAUNCH("cudaLaunchKernelExC_ptsz", GR_SH_LAUNCH_RT_EX, 0),
	LAUNCH("cuLaunchKernel", GR_SH_LAUNCH_DRV, N),
	LAUNCH("cuLaunchKernel_ptsz", GR_SH_LAUNCH_DRV, N),
	LAUNCH("cuLaunchCooperativeKernel", GR_SH_LAUNCH_DRV, N),
	LAUNCH("cuLaunchCooperativeKernel_ptsz", GR_SH_LAUNCH_DRV, N),
	LAUNCH("cuLaunchKernelEx", GR_SH_LAUNCH_DRV_EX, 0),
	LAUNCH("cuLaunchKernelEx_ptsz", GR_SH_LAUNCH_DRV_EX, 0),

	/* Copies: cuda_memcpy.  cudaMemcpy(dst, src, count, kind). */
	CPY("cudaMemcpy", 0, 1, 2, N, 3, 0, N, 0),
	CPY("cudaMemcpy_ptds", 0, 1, 2, N, 3, 0, N, 0),
	CPY("cudaMemcpyAsync", 0, 1, 2, N, 3, 0, 4, 1),
	CPY("cudaMemcpyAsync_ptsz", 0, 1, 2, N, 3, 0, 4, 1),
	/* cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind) */
	CPY("cudaMemcpy2D", 0, 2, 4, 5, 6, 0, N, 0),
	CPY("cudaMemcpy2D_ptds", 0, 2, 4, 5, 6, 0, N, 0),
	CPY("cudaMemcpy2DAsync", 0, 2, 4, 5, 6, 0, 7, 1),
	CPY("cudaMemcpy2DAsync_ptsz", 0, 2, 4, 5, 6, 0, 7, 1),
	/* cudaMemcpy3D(const cudaMemcpy3DParms *p): srcPtr.ptr at 32,
	 * dstPtr.ptr at 96, extent at 128, kind at 152. */
	CPY_ST("cudaMemcpy3D", GR_SH_MEMCPY_3D, 32, N, 0),
	CPY_ST("cudaMemcpy3D_ptds", GR_SH_MEMCPY_3D, 32, N, 0),
	CPY_ST("cudaMemcpy3DAsync", GR_SH_MEMCPY_3D, 32, 1, 1),
	CPY_ST("cudaMemcpy3DAsync_ptsz", GR_SH_MEMCPY_3D, 32, 1, 1),
	/* cudaMemcpyPeer(dst, dstDev, src, srcDev, count) */
	CPY("cudaMemcpyPeer", 0, 2, 4, N, N, GR_K_P2P, N, 0),
	CPY("cudaMemcpyPeerAsync", 0, 2, 4, N, N, GR_K_P2P, 5, 1),
	/* cudaMemcpyToSymbol(symbol, src, count, offset, kind): the symbol
	 * is the host shadow's address, not the device's: no pointer. */
	CPY("cudaMemcpyToSymbol", N, 1, 2, N, 4, 0, N, 0),
	CPY("cudaMemcpyToSymbol_ptds", N, 1, 2, N, 4, 0, N, 0),
	CPY("cudaMemcpyFromSymbol", 0, N, 2, N, 4, 0, N, 0),
	CPY("cudaMemcpyFromSymbol_ptds", 0, N, 2, N, 4, 0, N, 0),
	CPY("cudaMemcpyToSymbolAsync", N, 1, 2, N, 4, 0, 5, 1),
	CPY("cudaMemcpyToSymbolAsync_ptsz", N, 1, 2, N, 4, 0, 5, 1),
	CPY("cudaMemcpyFromSymbolAsync", 0, N, 2, N, 4, 0, 5, 1),
	CPY("cudaMemcpyFromSymbolAsync_ptsz", 0, N, 2, N, 4, 0, 5, 1),
	/* Driver: cuMemcpyHtoD_v2(dst, src, bytes), …Async(…, stream). */
	CPY("cuMemcpy", 0, 1, 2, N, N, GR_K_DEFAULT, N, 0),
	CPY("cuMemcpy_ptds", 0, 1, 2, N, N, GR_K_DEFAULT, N, 0),
	CPY("cuMemcpyAsync", 0, 1, 2, N, N, GR_K_DEFAULT, 3, 1),
	CPY("cuMemcpyAsync_ptsz", 0, 1, 2, N, N, GR_K_DEFAULT, 3, 1),
	CPY("cuMemcpyHtoD_v2", 0, 1, 2, N, N, GR_K_H2D, N, 0),
	CPY("cuMemcpyHtoD_v2_ptds", 0, 1, 2, N, N, GR_K_H2D, N, 0),
	CPY("cuMemcpyDtoH_v2", 0, 1, 2, N, N, GR_K_D2H, N, 0),
	CPY("cuMemcpyDtoH_v2_ptds", 0, 1, 2, N, N, GR_K_D2H, N, 0),
	CPY("cuMemcpyDtoD_v2", 0, 1, 2, N, N, GR_K_D2D, N, 0),
	CPY("cuMemcpyDtoD_v2_ptds", 0, 1, 2, N, N, GR_K_D2D, N, 0),
	CPY("cuMemcpyHtoDAsync_v2", 0, 1, 2, N, N, GR_K_H2D, 3, 1),
	CPY("cuMemcpyHtoDAsync_v2_ptsz", 0, 1, 2, N, N, GR_K_H2D, 3, 1),
	CPY("cuMemcpyDtoHAsync_v2", 0, 1, 2, N, N, GR_K_D2H, 3, 1),
	CPY("cuMemcpyDtoHAsync_v2_ptsz", 0, 1, 2, N, N, GR_K_D2H, 3, 1),
	CPY("cuMemcpyDtoDAsync_v2", 0, 1, 2, N, N, GR_K_D2D, 3, 1),
	CPY("cuMemcpyDtoDAsync_v2_ptsz", 0, 1, 2, N, N, GR_K_D2D, 3, 1),
	/* cuMemcpyPeer(dst, dstCtx, src, srcCtx, bytes) */
	CPY("cuMemcpyPeer", 0, 2, 4, N, N, GR_K_P2P, N, 0),
	CPY("cuMemcpyPeer_ptds", 0, 2, 4, N, N, GR_K_P2P, N, 0),
	CPY("cuMemcpyPeerAsync", 0, 2, 4, N, N, GR_K_P2P, 5, 1),
	CPY("cuMemcpyPeerAsync_ptsz", 0, 2, 4, N, N, GR_K_P2P, 5, 1),
	/* cuMemcpy2D_v2(const CUDA_MEMCPY2D *p): 128 bytes, read whole. */
	CPY_ST("cuMemcpy2D_v2", GR_SH_MEMCPY_2D_DRV, 0, N, 0),
	CPY_ST("cuMemcpy2D_v2_ptds", GR_SH_MEMCPY_2D_DRV, 0, N, 0),
	CPY_ST("cuMemcpy2DAsync_v2", GR_SH_MEMCPY_2D_DRV, 0, 1, 1),
	CPY_ST("cuMemcpy2DAsync_v2_ptsz", GR_SH_MEMCPY_2D_DRV, 0, 1, 1),

	/* Sets: cuda_memset.  cudaMemset(ptr, value, count). */
	SET("cudaMemset", 2, N, 1, N, 0),
	SET("cudaMemset_ptds", 2, N, 1, N, 0),
	SET("cudaMemsetAsync", 2, N, 1, 3, 1),
	SET("cudaMemsetAsync_ptsz", 2, N, 1, 3, 1),
	/* cudaMemset2D(ptr, pitch, value, width, height) */
	SET("cudaMemset2D", 3, 4, 1, N, 0),
	SET("cudaMemset2D_ptds", 3, 4, 1, N, 0),
	SET("cudaMemset2DAsync", 3, 4, 1, 5, 1),
	SET("cudaMemset2DAsync_ptsz", 3, 4, 1, 5, 1),
	/* cuMemsetD8_v2(dst, value, N elements) */
	SET("cuMemsetD8_v2", 2, N, 1, N, 0),
	SET("cuMemsetD8_v2_ptds", 2, N, 1, N, 0),
	SET("cuMemsetD16_v2", 2, N, 2, N, 0),
	SET("cuMemsetD16_v2_ptds", 2, N, 2, N, 0),
	SET("cuMemsetD32_v2", 2, N, 4, N, 0),
	SET("cuMemsetD32_v2_ptds", 2, N, 4, N, 0),
	SET("cuMemsetD8Async", 2, N, 1, 3, 1),
	SET("cuMemsetD8Async_ptsz", 2, N, 1, 3, 1),
	SET("cuMemsetD16Async", 2, N, 2, 3, 1),
	SET("cuMemsetD16Async_ptsz", 2, N, 2, 3, 1),
	SET("cuMemsetD32Async", 2, N, 4, 3, 1),
	SET("cuMemsetD32Async_ptsz", 2, N, 4, 3, 1),

	/* Allocations: cuda_mem.  cudaMalloc(void **p, size). */
	ALLOC("cudaMalloc", 0, 1, N),
	ALLOC("cudaMallocAsync", 0, 1, N),
	ALLOC("cudaMallocAsync_ptsz", 0, 1, N),
	ALLOC("cudaMallocFromPoolAsync", 0, 1, N),
	ALLOC("cudaMallocFromPoolAsync_ptsz", 0, 1, N),
	ALLOC("cudaMallocHost", 0, 1, N),
	ALLOC("cudaHostAlloc", 0, 1, N),
	ALLOC("cudaMallocManaged", 0, 1, N),
	/* cudaMallocPitch(void **p, size_t *pitch, width, height) */
	ALLOC("cudaMallocPitch", 0, 2, 3),
	FREE("cudaFree"),
	FREE("cudaFreeAsync"),
	FREE("cudaFreeAsync_ptsz"),
	FREE("cudaFreeHost"),
	/* cudaHostRegister(ptr, size, flags) */
	REG("cudaHostRegister"),
	FREE("cudaHostUnregister"),
	ALLOC("cuMemAlloc_v2", 0, 1, N),
	ALLOC("cuMemAllocAsync", 0, 1, N),
	ALLOC("cuMemAllocAsync_ptsz", 0, 1, N),
	ALLOC("cuMemAllocFromPoolAsync", 0, 1, N),
	ALLOC("cuMemAllocFromPoolAsync_ptsz", 0, 1, N),
	ALLOC("cuMemAllocHost_v2", 0, 1, N),
	ALLOC("cuMemHostAlloc", 0, 1, N),
	ALLOC("cuMemAllocManaged", 0, 1, N),
	/* cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, width, height, elem) */
	ALLOC("cuMemAllocPitch_v2", 0, 2, 3),
	FREE("cuMemFree_v2"),
	FREE("cuMemFreeAsync"),
	FREE("cuMemFreeAsync_ptsz"),
	FREE("cuMemFreeHost"),
	REG("cuMemHostRegister_v2"),
	FREE("cuMemHostUnregister"),

	/* Synchronizations: cuda_sync. */
	SYNC("cudaDeviceSynchronize", N),
	SYNC("cudaStreamSynchronize", 0),
	SYNC("cudaStreamSynchronize_ptsz", 0),
	SYNC("cudaEventSynchronize", 0),
	SYNC("cuCtxSynchronize", N),
	SYNC("cuCtxSynchronize_v2", N),
	SYNC("cuStreamSynchronize", 0),
	SYNC("cuStreamSynchronize_ptsz", 0),
	SYNC("cuEventSynchronize", 0),

	/* Graphs: cuda_graph.  GRAPH(sym, _, op, handle arg, stream arg,
	 * out arg): handle is the graph for capture/instantiate/destroy, the
	 * executable graph for launch/exec-destroy. */
	GRAPH("cudaStreamBeginCapture", 0, "capture_begin", N, 0, N),
	GRAPH("cudaStreamBeginCapture_ptsz", 0, "capture_begin", N, 0, N),
	GRAPH("cudaStreamEndCapture", 0, "capture_end", N, 0, 1),
	GRAPH("cudaStreamEndCapture_ptsz", 0, "capture_end", N, 0, 1),
	GRAPH("cudaGraphInstantiate", 0, "instantiate", 1, N, 0),
	GRAPH("cudaGraphInstantiateWithFlags", 0, "instantiate", 1, N, 0),
	GRAPH("cudaGraphInstantiateWithParams", 0, "instantiate", 1, N, 0),
	GRAPH("cudaGraphInstantiateWithParams_ptsz", 0, "instantiate", 1, N, 0),
	GRAPH("cudaGraphLaunch", 0, "launch", 0, 1, N),
	GRAPH("cudaGraphLaunch_ptsz", 0, "launch", 0, 1, N),
	GRAPH("cudaGraphExecDestroy", 0, "destroy", 0, N, N),
	GRAPH("cudaGraphDestroy", 0, "destroy", 0, N, N),
	GRAPH("cuStreamBeginCapture_v2", 0, "capture_begin", N, 0, N),
	GRAPH("cuStreamBeginCapture_v2_ptsz", 0, "capture_begin", N, 0, N),
	GRAPH("cuStreamEndCapture", 0, "capture_end", N, 0, 1),
	GRAPH("cuStreamEndCapture_ptsz", 0, "capture_end", N, 0, 1),
	GRAPH("cuGraphInstantiateWithFlags", 0, "instantiate", 1, N, 0),
	GRAPH("cuGraphInstantiateWithParams", 0, "instantiate", 1, N, 0),
	GRAPH("cuGraphInstantiateWithParams_ptsz", 0, "instantiate", 1, N, 0),
	GRAPH("cuGraphLaunch", 0, "launch", 0, 1, N),
	GRAPH("cuGraphLaunch_ptsz", 0, "launch", 0, 1, N),
	GRAPH("cuGraphExecDestroy", 0, "destroy", 0, N, N),
	GRAPH("cuGraphDestroy", 0, "destroy", 0, N, N),

	/* Names, learned at load time: cuModuleGetFunction(CUfunction *f,
	 * CUmodule m, const char *name), cuLibraryGetKernel(CUkernel *k,
	 * CUlibrary l, const char *name), cuKernelGetFunction(CUfunction *f,
	 * CUkernel k), __cudaRegisterFunction(handle, hostFun, deviceFun,
	 * …): hostFun is the stub cudaLaunchKernel is later given. */
	NAME("cuModuleGetFunction", 0, N, 2),
	NAME("cuLibraryGetKernel", 0, N, 2),
	NAME("cuKernelGetFunction", 0, 1, N),
	{ .sym = "__cudaRegisterFunction", .shape = GR_SH_NAME, BASE,
	  .handle = 1, .name = 2, .noret = 1 },

	/* Driver initialization, cuInit(unsigned flags): the first call a
	 * process makes into libcuda (the runtime makes it on first use).
	 * Announced at entry: a process hung in it (a GPU fallen off the
	 * bus) is traced from then on, though the call never returns.
	 * Nested in a runtime call that is hooked itself (cudaMalloc,
	 * cudaFree(0)), it is folded into that call's row like any driver
	 * call; under one that is not (cudaGetDeviceCount, cudaSetDevice),
	 * it is a row of its own. */
	{ .sym = "cuInit", .shape = GR_SH_API, BASE, .announce = 1 },

	/* NCCL (nccl.h, 2.28).  libnccl.so.2 exports each ncclX as a weak
	 * alias of pncclX at the same address: only the ncclX names are
	 * listed, so each entry point is attached once and named as the
	 * application calls it.  Arguments past the sixth are on the stack. */
	/* ncclAllReduce(send, recv, count, datatype, op, comm, stream) */
	COLL("ncclAllReduce", 2, 3, 4, N, 5, 6),
	/* ncclAllGather(send, recv, sendcount, datatype, comm, stream) */
	COLL("ncclAllGather", 2, 3, N, N, 4, 5),
	/* ncclReduceScatter(send, recv, recvcount, datatype, op, comm, stream) */
	COLL("ncclReduceScatter", 2, 3, 4, N, 5, 6),
	/* ncclBroadcast(send, recv, count, datatype, root, comm, stream) */
	COLL("ncclBroadcast", 2, 3, N, 4, 5, 6),
	/* ncclBcast(buff, count, datatype, root, comm, stream) */
	COLL("ncclBcast", 1, 2, N, 3, 4, 5),
	/* ncclReduce(send, recv, count, datatype, op, root, comm, stream) */
	COLL("ncclReduce", 2, 3, 4, 5, 6, 7),
	/* ncclAlltoAll(send, recv, count, datatype, comm, stream) */
	COLL("ncclAlltoAll", 2, 3, N, N, 4, 5),
	/* ncclGather/ncclScatter(send, recv, count, datatype, root, comm,
	 * stream) */
	COLL("ncclGather", 2, 3, N, 4, 5, 6),
	COLL("ncclScatter", 2, 3, N, 4, 5, 6),
	/* ncclSend(send, count, datatype, peer, comm, stream), ncclRecv */
	P2P("ncclSend", 1, 2, 3, 4, 5),
	P2P("ncclRecv", 1, 2, 3, 4, 5),
	NCCL("ncclGroupStart", GR_SH_NCCL_GROUP),
	NCCL("ncclGroupEnd", GR_SH_NCCL_GROUP),
	/* ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
	 * int rank): the 128-byte id is passed in memory (x86-64 SysV), so
	 * rank is the third register argument. */
	{ .sym = "ncclCommInitRank", .shape = GR_SH_NCCL_INIT, BASE,
	  .out = 0, .nranks = 1, .rank = 2, .stack = 1 },
	/* ncclCommInitRankConfig(comm*, nranks, id, rank, config*) */
	{ .sym = "ncclCommInitRankConfig", .shape = GR_SH_NCCL_INIT, BASE,
	  .out = 0, .nranks = 1, .rank = 2, .stack = 1 },
	/* ncclCommInitRankScalable(comm*, nranks, rank, nId, commIds*, cfg) */
	{ .sym = "ncclCommInitRankScalable", .shape = GR_SH_NCCL_INIT_IDS,
	  BASE, .out = 0, .nranks = 1, .rank = 2, .strct = 4, .wide = 1 },
	/* ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist):
	 * the first 16 handles, read at return. */
	{ .sym = "ncclCommInitAll", .shape = GR_SH_NCCL_INIT_ALL, BASE,
	  .out = 0, .nranks = 1, .strct = 0, .wide = 1 },
	/* ncclCommSplit(comm, color, key, ncclComm_t *newcomm, config*) */
	{ .sym = "ncclCommSplit", .shape = GR_SH_NCCL_SPLIT, BASE,
	  .comm = 0, .out = 3 },
	{ .sym = "ncclCommFinalize", .shape = GR_SH_NCCL_FINALIZE, BASE,
	  .comm = 0 },
	{ .sym = "ncclCommDestroy", .shape = GR_SH_NCCL_END, BASE, .comm = 0 },
	{ .sym = "ncclCommAbort", .shape = GR_SH_NCCL_END, BASE, .comm = 0 },
};

const int gr_napis = sizeof(gr_apis) / sizeof(gr_apis[0]);

uint64_t gr_api__cookie(int id)
{
	const struct gr_api *a = &gr_apis[id];
	/* Group 1: CUDA; 2: NCCL, whose own CUDA calls (kernel launches at
	 * ncclGroupEnd) are rows of their own, not folded into it. */
	uint64_t c = (uint64_t)id |
		     (GR_SH_IS_NCCL(a->shape) ? 2ull : 1ull) << 16;
	if (a->strct >= 0)
		c |= (uint64_t)(a->strct + 1) << 20 |
		     (uint64_t)(a->strct_off / 8) << 24 |
		     (uint64_t)a->wide << 42;
	if (a->out >= 0)
		c |= (uint64_t)(a->out + 1) << 32;
	if (a->name >= 0)
		c |= (uint64_t)(a->name + 1) << 36;
	if (a->shape <= GR_SH_LAUNCH_DRV_EX)
		c |= 1ull << 40;
	if (a->shape == GR_SH_NAME)
		c |= 1ull << 41; /* never folded into an outer call */
	if (a->stack)
		c |= 1ull << 43;
	if (a->announce)
		c |= 1ull << 44;
	return c;
}
