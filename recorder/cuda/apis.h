/* apis.h - the CUDA runtime and driver entry points gpurecd hooks,
 * and how each call's arguments become a row (recorder/cuda/apis.c). */
#ifndef GR_CUDA_APIS_H
#define GR_CUDA_APIS_H

#include <stdint.h>

enum gr_api_shape {
	GR_SH_LAUNCH_RT,     /* cudaLaunchKernel(func, grid, block, args, smem, stream) */
	GR_SH_LAUNCH_RT_EX,  /* cudaLaunchKernelExC(config*, func, args) */
	GR_SH_LAUNCH_DRV,    /* cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, …) */
	GR_SH_LAUNCH_DRV_EX, /* cuLaunchKernelEx(config*, f, params, extra) */
	GR_SH_MEMCPY,
	GR_SH_MEMCPY_3D,     /* cudaMemcpy3D(parms*): pointers, extent and kind
	                      * in the struct */
	GR_SH_MEMCPY_2D_DRV, /* cuMemcpy2D(CUDA_MEMCPY2D*): pointers, memory
	                      * types and extent in the struct */
	GR_SH_MEMSET,
	GR_SH_ALLOC,
	GR_SH_FREE,
	GR_SH_SYNC,
	GR_SH_GRAPH,
	GR_SH_NAME,          /* records a handle -> kernel name; a cuda_api row */
	GR_SH_API,           /* a call whose arguments make no column (cuInit):
	                      * a cuda_api row, its duration and return code */
	/* NCCL (libnccl.so.2): rows of the nccl table. */
	GR_SH_NCCL_COLL,     /* a collective: count, datatype, op, root, comm,
	                      * stream; counted in its communicator's seq */
	GR_SH_NCCL_P2P,      /* ncclSend/ncclRecv: count, datatype, peer */
	GR_SH_NCCL_GROUP,    /* ncclGroupStart/End: no arguments */
	GR_SH_NCCL_INIT,     /* ncclCommInitRank(comm*, nranks, id, rank…):
	                      * the unique id by value, on the stack */
	GR_SH_NCCL_INIT_IDS, /* ncclCommInitRankScalable(…, commIds*, …): the
	                      * first unique id, read at return */
	GR_SH_NCCL_INIT_ALL, /* ncclCommInitAll(comms*, ndev, devlist) */
	GR_SH_NCCL_SPLIT,    /* ncclCommSplit(comm, color, key, newcomm*, cfg) */
	GR_SH_NCCL_END,      /* ncclCommDestroy/Abort(comm): forgets it */
	GR_SH_NCCL_FINALIZE, /* ncclCommFinalize(comm): a row, kept */
};

#define GR_SH_IS_NCCL(sh) ((sh) >= GR_SH_NCCL_COLL)

enum gr_memcpy_kind { GR_K_H2H, GR_K_H2D, GR_K_D2H, GR_K_D2D, GR_K_DEFAULT,
		      GR_K_P2P, GR_K_FROM_ARG = 0xff };

struct gr_api {
	const char *sym;
	uint8_t shape;
	int8_t bytes, bytes2;  /* argument holding bytes (times bytes2), or -1 */
	uint8_t mul;           /* element size (memset D16/D32) */
	int8_t kind;           /* argument holding a cudaMemcpyKind, or -1 */
	uint8_t fixed_kind;    /* enum gr_memcpy_kind when kind < 0 */
	int8_t stream;         /* argument holding the stream, or -1 */
	int8_t dst, src;       /* copy: arguments holding the destination and
	                        * source pointers, or -1 (a symbol) */
	int8_t ptr;            /* free, register: argument holding the
	                        * pointer */
	int8_t out;            /* out-pointer argument read at return, or -1 */
	int8_t handle;         /* graph/name: argument holding a handle, or -1 */
	int8_t strct;          /* argument pointing at a struct, or -1 */
	uint8_t strct_off;     /* offset copied from, bytes (multiple of 8) */
	uint8_t wide;          /* copy GR_STRUCT_BYTES of it, not 64 */
	int8_t name;           /* C-string argument, or -1 */
	uint8_t async;
	uint8_t noret;         /* returns void: no return code */
	int8_t dtype;          /* NCCL: argument holding the datatype, or -1 */
	int8_t redop;          /* NCCL: argument holding the ncclRedOp_t */
	int8_t peer;           /* NCCL: the peer or root rank */
	int8_t comm;           /* NCCL: the communicator handle */
	int8_t nranks, rank;   /* NCCL init: the rank count and this rank */
	uint8_t stack;         /* copy the stack arguments at entry */
	uint8_t announce;      /* say so at entry too (cuda.h, bit 44) */
	const char *op;        /* cuda_mem / cuda_graph op */
};

extern const struct gr_api gr_apis[];
extern const int gr_napis;

/* The attach cookie for api id (recorder/cuda/cuda.h's layout). */
uint64_t gr_api__cookie(int id);

#endif
