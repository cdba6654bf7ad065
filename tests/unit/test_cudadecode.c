/* test_cudadecode.c - the CUDA family's records into rows, without BPF
 * or root (recorder/cuda/decode.c, recorder/cuda/nccl.c): every record
 * kind and row shape, truncated and oversized records, exact values. */
#include <errno.h>

#include "recorder/cuda/decode.h"
#include "recorder/cuda/nccl.h"
#include "test.h"

#define BIT(col) (1ull << (col))
#define OFF 1000000000000ll /* clock offset: boot ns + OFF = UTC ns */

static int api_id(const char *sym)
{
	for (int i = 0; i < gr_napis; i++)
		if (strcmp(gr_apis[i].sym, sym) == 0)
			return i;
	fprintf(stderr, "test_cudadecode.c: no api %s\n", sym);
	exit(2);
}

/* A call of sym by pid 4242, tid 4243, returning ret. */
static struct gr_cuda_call call(const char *sym, int64_t ret)
{
	struct gr_cuda_call e;
	memset(&e, 0, sizeof(e));
	e.rec = GR_REC_CALL;
	e.api = (uint32_t)api_id(sym);
	e.pid = 4242;
	e.tid = 4243;
	e.ts = 5000;
	e.dur = 77;
	e.ret = ret;
	memcpy(e.comm, "trainer", 8);
	return e;
}

/* The string set for col, or NULL. */
static const char *str(const struct gr_cuda_row *r, int col)
{
	for (int i = 0; i < r->nstr; i++)
		if (r->str[i].col == col)
			return r->str[i].s;
	return NULL;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* The columns every row shares, and the strings' order: comm, api. */
static int shared_ok(const struct gr_cuda_row *r, const char *sym)
{
	return r->v[GR_cuda_api_ts] == 5000 + OFF &&
	       r->v[GR_cuda_api_pid] == 4242 && r->v[GR_cuda_api_tid] == 4243 &&
	       r->v[GR_cuda_api_dur] == 77 && r->nstr >= 2 &&
	       r->str[0].col == GR_cuda_api_comm &&
	       strcmp(r->str[0].s, "trainer") == 0 &&
	       r->str[1].col == GR_cuda_api_api &&
	       strcmp(r->str[1].s, sym) == 0;
}

TEST(launch_runtime)
{
	struct gr_cuda_call e = call("cudaLaunchKernel", 0);
	struct gr_cuda_row r;
	e.args[0] = 0x401000;                  /* the host stub */
	e.args[1] = 64 | (uint64_t)2 << 32;    /* grid x | y */
	e.args[2] = 3;                          /* grid z */
	e.args[3] = 256 | (uint64_t)4 << 32;   /* block x | y */
	e.args[4] = 1;
	e.args[6] = 4096;                       /* smem */
	e.args[7] = 0xabc0;                     /* stream */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_kernel);
	CHECK(shared_ok(&r, "cudaLaunchKernel"));
	CHECK_EQ_INT(r.nstr, 2); /* the kernel's name is naming.c's */
	CHECK_EQ_INT(r.func, 0x401000);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_x], 64);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_y], 2);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_z], 3);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_x], 256);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_y], 4);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_z], 1);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_shared_mem], 4096);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_stream], 0xabc0);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_ret], 0);
	CHECK_EQ_INT(r.nm, 0);
}

TEST(launch_driver)
{
	struct gr_cuda_call e = call("cuLaunchKernel", 0xffffffff00000001ll);
	struct gr_cuda_row r;
	e.args[0] = 0x55550000;
	for (int i = 1; i <= 6; i++)
		e.args[i] = (uint64_t)0x100000000ull + (uint64_t)i * 10;
	e.args[7] = 0x100000000ull | 48;  /* unsigned int smem: high bits go */
	e.args[8] = 0x77;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_kernel);
	CHECK(shared_ok(&r, "cuLaunchKernel"));
	CHECK_EQ_INT(r.func, 0x55550000);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_x], 10);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_y], 20);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_z], 30);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_x], 40);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_y], 50);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_z], 60);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_shared_mem], 48);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_stream], 0x77);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_ret], 1); /* an int: rax's low half */
}

/* cudaLaunchConfig_t / CUlaunchConfig: dims, smem, stream. */
static void launch_config(struct gr_cuda_call *e)
{
	for (int i = 0; i < 6; i++)
		put32(e->st + 4 * i, (uint32_t)(i + 1));
	put64(e->st + 24, 0x100000000ull | 96);
	put64(e->st + 32, 0x5000);
	e->args[1] = 0xf00d;
}

TEST(launch_config_structs)
{
	struct gr_cuda_call e = call("cudaLaunchKernelExC", 0);
	struct gr_cuda_row r;
	launch_config(&e);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.func, 0xf00d);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_x], 1);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_grid_z], 3);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_z], 6);
	/* size_t in the runtime's config, unsigned int in the driver's. */
	CHECK_EQ_INT(r.v[GR_cuda_kernel_shared_mem], 0x100000000ll | 96);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_stream], 0x5000);
	e = call("cuLaunchKernelEx", 0);
	launch_config(&e);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK(shared_ok(&r, "cuLaunchKernelEx"));
	CHECK_EQ_INT(r.v[GR_cuda_kernel_block_y], 5);
	CHECK_EQ_INT(r.v[GR_cuda_kernel_shared_mem], 96);
}

TEST(memcpy_1d)
{
	struct gr_cuda_call e = call("cudaMemcpyAsync", 0);
	struct gr_cuda_row r;
	e.args[0] = 0xd000;
	e.args[1] = 0x5000;
	e.args[2] = 1 << 20;
	e.args[3] = 1; /* cudaMemcpyHostToDevice */
	e.args[4] = 0x99;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_memcpy);
	CHECK(shared_ok(&r, "cudaMemcpyAsync"));
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_dst], 0xd000);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_src], 0x5000);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_bytes], 1 << 20);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "H2D");
	CHECK_EQ_INT(r.str[2].col, GR_cuda_memcpy_kind);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_async], 1);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_stream], 0x99);
	CHECK_EQ_INT(r.nm, 0);

	/* A kind past cudaMemcpyDefault is unknown; no stream argument. */
	e = call("cudaMemcpy", 11);
	e.args[2] = 8;
	e.args[3] = 9;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK(str(&r, GR_cuda_memcpy_kind) == NULL);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_memcpy_kind) | BIT(GR_cuda_memcpy_stream));
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_async], 0);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_ret], 11);

	/* A symbol copy has no destination pointer; a driver copy's
	 * direction is its entry point's. */
	e = call("cudaMemcpyToSymbol", 0);
	e.args[2] = 64;
	e.args[4] = 1;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_memcpy_dst) | BIT(GR_cuda_memcpy_stream));
	e = call("cuMemcpyDtoHAsync_v2", 0);
	e.args[2] = 12;
	e.args[3] = 0x42;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "D2H");
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_stream], 0x42);
	e = call("cuMemcpyPeer", 0);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "P2P");
}

TEST(memcpy_2d_3d)
{
	/* cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind). */
	struct gr_cuda_call e = call("cudaMemcpy2D", 0);
	struct gr_cuda_row r;
	e.args[4] = 300;
	e.args[5] = 7;
	e.args[6] = 3; /* D2D */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_bytes], 2100);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "D2D");

	/* cudaMemcpy3DParms from srcPtr on: a zero pointer is an array. */
	e = call("cudaMemcpy3DAsync", 0);
	put64(e.st, 0x1000);          /* srcPtr.ptr */
	put64(e.st + 96, 16);         /* extent */
	put64(e.st + 104, 4);
	put64(e.st + 112, 2);
	put32(e.st + 120, 2);         /* D2H */
	e.args[1] = 0x33;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_memcpy);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_bytes], 128);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_src], 0x1000);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "D2H");
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_stream], 0x33);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_memcpy_dst));
}

/* A CUDA_MEMCPY2D with the given memory types (0 = unset). */
static struct gr_cuda_call copy2d(uint32_t src_type, uint32_t dst_type)
{
	struct gr_cuda_call e = call("cuMemcpy2DAsync_v2", 0);
	put32(e.st + 16, src_type);
	put64(e.st + 24, 0x1111);     /* srcHost */
	put64(e.st + 32, 0x2222);     /* srcDevice */
	put32(e.st + 56 + 16, dst_type);
	put64(e.st + 56 + 24, 0x3333);
	put64(e.st + 56 + 32, 0x4444);
	put64(e.st + 112, 640);       /* WidthInBytes */
	put64(e.st + 120, 3);         /* Height */
	e.args[1] = 0x51;
	return e;
}

TEST(memcpy_2d_driver)
{
	struct gr_cuda_row r;
	struct gr_cuda_call e = copy2d(1, 2); /* host to device */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_bytes], 1920);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_src], 0x1111);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_dst], 0x4444);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "H2D");
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_stream], 0x51);
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_async], 1);
	CHECK_EQ_INT(r.nm, 0);
	e = copy2d(3, 1); /* an array to the host: no source pointer */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "D2H");
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_dst], 0x3333);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_memcpy_src));
	e = copy2d(4, 2); /* unified memory: cudaMemcpyDefault's kind */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "default");
	CHECK_EQ_INT(r.v[GR_cuda_memcpy_src], 0x2222);
	e = copy2d(1, 1);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "H2H");
	e = copy2d(2, 2);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_memcpy_kind), "D2D");
	e = copy2d(0, 2); /* a type it does not know: no kind, no pointer */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK(str(&r, GR_cuda_memcpy_kind) == NULL);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_memcpy_src) | BIT(GR_cuda_memcpy_kind));
}

TEST(memset)
{
	struct gr_cuda_call e = call("cuMemsetD32Async", 0);
	struct gr_cuda_row r;
	e.args[2] = 1000; /* elements of 4 bytes */
	e.args[3] = 0x61;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_memset);
	CHECK(shared_ok(&r, "cuMemsetD32Async"));
	CHECK_EQ_INT(r.v[GR_cuda_memset_bytes], 4000);
	CHECK_EQ_INT(r.v[GR_cuda_memset_async], 1);
	CHECK_EQ_INT(r.v[GR_cuda_memset_stream], 0x61);
	CHECK_EQ_INT(r.nm, 0);
	e = call("cudaMemset2D", 2);
	e.args[3] = 50;
	e.args[4] = 6;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.v[GR_cuda_memset_bytes], 300);
	CHECK_EQ_INT(r.v[GR_cuda_memset_ret], 2);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_memset_stream));
}

TEST(alloc_free)
{
	struct gr_cuda_call e = call("cudaMalloc", 0);
	struct gr_cuda_row r;
	e.args[1] = 1 << 30;
	e.out = 0x7f0000000000;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_mem);
	CHECK(shared_ok(&r, "cudaMalloc"));
	CHECK_EQ_STR(str(&r, GR_cuda_mem_op), "alloc");
	CHECK_EQ_INT(r.v[GR_cuda_mem_bytes], 1 << 30);
	CHECK_EQ_INT(r.v[GR_cuda_mem_ptr], 0x7f0000000000);
	CHECK_EQ_INT(r.nm, 0);
	e.ret = 2; /* cudaErrorMemoryAllocation: *devPtr is not an address */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_mem_ptr));
	CHECK_EQ_INT(r.v[GR_cuda_mem_ret], 2);
	e = call("cudaMallocPitch", 0);
	e.args[2] = 100;
	e.args[3] = 9;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.v[GR_cuda_mem_bytes], 900);
	e = call("cudaHostRegister", 0); /* the pointer is an argument */
	e.args[0] = 0x6000;
	e.args[1] = 8192;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.v[GR_cuda_mem_ptr], 0x6000);
	CHECK_EQ_INT(r.v[GR_cuda_mem_bytes], 8192);
	e = call("cudaFree", 0);
	e.args[0] = 0x7f0000000000;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_mem_op), "free");
	CHECK_EQ_INT(r.v[GR_cuda_mem_ptr], 0x7f0000000000);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_mem_bytes));
}

TEST(sync)
{
	struct gr_cuda_call e = call("cudaStreamSynchronize", 0);
	struct gr_cuda_row r;
	e.args[0] = 0x88;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_sync);
	CHECK(shared_ok(&r, "cudaStreamSynchronize"));
	CHECK_EQ_INT(r.v[GR_cuda_sync_stream], 0x88);
	CHECK_EQ_INT(r.nm, 0);
	e = call("cudaDeviceSynchronize", 700);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.v[GR_cuda_sync_ret], 700);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_sync_stream));
}

TEST(graphs)
{
	struct gr_cuda_call e = call("cudaStreamEndCapture", 0);
	struct gr_cuda_row r;
	e.args[0] = 0x10;
	e.out = 0xa000;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_graph);
	CHECK_EQ_STR(str(&r, GR_cuda_graph_op), "capture_end");
	CHECK_EQ_INT(r.v[GR_cuda_graph_graph], 0xa000);
	CHECK_EQ_INT(r.v[GR_cuda_graph_stream], 0x10);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_graph_graph_exec));
	e.ret = 900; /* a failed capture made no graph */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_graph_graph) | BIT(GR_cuda_graph_graph_exec));
	e = call("cudaGraphInstantiate", 0);
	e.args[1] = 0xa000;
	e.out = 0xb000;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_graph_op), "instantiate");
	CHECK_EQ_INT(r.v[GR_cuda_graph_graph], 0xa000);
	CHECK_EQ_INT(r.v[GR_cuda_graph_graph_exec], 0xb000);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_graph_stream));
	e = call("cuGraphLaunch", 0);
	e.args[0] = 0xb000;
	e.args[1] = 0x20;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_graph_op), "launch");
	CHECK_EQ_INT(r.v[GR_cuda_graph_graph_exec], 0xb000);
	CHECK_EQ_INT(r.v[GR_cuda_graph_stream], 0x20);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_graph_graph));
	e = call("cudaGraphDestroy", 0);
	e.args[0] = 0xa000;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_cuda_graph_op), "destroy");
	CHECK_EQ_INT(r.v[GR_cuda_graph_graph], 0xa000);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_graph_graph_exec) |
			   BIT(GR_cuda_graph_stream));
}

TEST(names)
{
	struct gr_cuda_call e = call("cuModuleGetFunction", 0);
	struct gr_cuda_row r;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_api);
	CHECK(shared_ok(&r, "cuModuleGetFunction"));
	CHECK_EQ_INT(r.nstr, 2);
	CHECK_EQ_INT(r.v[GR_cuda_api_ret], 0);
	CHECK_EQ_INT(r.nm, 0);
	e = call("__cudaRegisterFunction", 0x1234); /* void: rax is junk */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.nm, BIT(GR_cuda_api_ret));
	CHECK_EQ_INT(r.v[GR_cuda_api_ret], 0);
}

/* cuInit: a plain call, a cuda_api row with its return code; the only
 * API announced at entry (cuda.h, bit 44), and the launches' cookies do
 * not carry that bit. */
TEST(plain_init)
{
	struct gr_cuda_call e = call("cuInit", 999);
	struct gr_cuda_row r;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_cuda_api);
	CHECK(shared_ok(&r, "cuInit"));
	CHECK_EQ_INT(r.nstr, 2);
	CHECK_EQ_INT(r.v[GR_cuda_api_ret], 999);
	CHECK_EQ_INT(r.nm, 0);
	int announced = 0;
	for (int i = 0; i < gr_napis; i++)
		if (GR_CK_ANNOUNCE(gr_api__cookie(i))) {
			announced++;
			CHECK_EQ_STR(gr_apis[i].sym, "cuInit");
		}
	CHECK_EQ_INT(announced, 1);
	uint64_t c = gr_api__cookie(api_id("cuInit"));
	CHECK_EQ_INT(GR_CK_API(c), api_id("cuInit"));
	CHECK_EQ_INT(GR_CK_GROUP(c), 1);
	CHECK_EQ_INT(GR_CK_ALWAYS(c) | GR_CK_LAUNCH(c) | GR_CK_STACK(c), 0);
	CHECK_EQ_INT(GR_CK_ANNOUNCE(gr_api__cookie(api_id("cuLaunchKernel"))),
		     0);
}

TEST(bad_api)
{
	struct gr_cuda_call e = call("cudaMalloc", 0);
	struct gr_cuda_row r;
	e.api = (uint32_t)gr_napis;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), -EINVAL);
	e.api = 0xffffffff;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), -EINVAL);
}

TEST(nccl_args)
{
	struct gr_cuda_call e = call("ncclAllReduce", 0);
	struct gr_cuda_row r;
	e.args[2] = 1000;
	e.args[3] = 7;   /* ncclFloat32 */
	e.args[4] = 2;   /* ncclMax */
	e.args[5] = 0xc0;
	e.args[6] = 0x5e;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_INT(r.table, GR_T_nccl);
	CHECK(shared_ok(&r, "ncclAllReduce"));
	CHECK_EQ_INT(r.nstr, 5);
	CHECK_EQ_INT(r.str[2].col, GR_nccl_op);
	CHECK_EQ_STR(r.str[2].s, "AllReduce");
	CHECK_EQ_STR(r.str[3].s, "float32");
	CHECK_EQ_STR(r.str[4].s, "max");
	CHECK_EQ_INT(r.v[GR_nccl_count], 1000);
	CHECK_EQ_INT(r.v[GR_nccl_bytes], 4000);
	CHECK_EQ_INT(r.v[GR_nccl_stream], 0x5e);
	CHECK_EQ_INT(r.nm, BIT(GR_nccl_peer) | BIT(GR_nccl_seq));

	/* One spelling per operation; an unknown type and reduction. */
	e = call("ncclBcast", 0);
	e.args[1] = 16;
	e.args[2] = 99;
	e.args[3] = 0xfffffffe; /* root -2 */
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_nccl_op), "Broadcast");
	CHECK_EQ_STR(str(&r, GR_nccl_datatype), "99");
	CHECK_EQ_INT(r.v[GR_nccl_peer], -2);
	CHECK_EQ_INT(r.nm, BIT(GR_nccl_bytes) | BIT(GR_nccl_redop) |
			   BIT(GR_nccl_seq));
	e = call("ncclReduceScatter", 0);
	e.args[3] = 9;   /* bfloat16 */
	e.args[4] = 5;   /* past avg: a premulsum (ncclRedOpCreatePreMulSum) */
	e.args[2] = 3;
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_nccl_redop), "premulsum");
	CHECK_EQ_INT(r.v[GR_nccl_bytes], 6);
	e = call("ncclAlltoAll", 0);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_nccl_op), "AllToAll");
	e = call("ncclGroupStart", 0);
	CHECK_EQ_INT(gr_cuda_decode__call(&e, OFF, &r), 0);
	CHECK_EQ_STR(str(&r, GR_nccl_op), "GroupStart");
	CHECK_EQ_INT(r.nm, BIT(GR_nccl_count) | BIT(GR_nccl_datatype) |
			   BIT(GR_nccl_bytes) | BIT(GR_nccl_redop) |
			   BIT(GR_nccl_peer) | BIT(GR_nccl_stream) |
			   BIT(GR_nccl_seq));
}

#define COMM_BITS (BIT(GR_nccl_comm_id) | BIT(GR_nccl_rank) | \
		   BIT(GR_nccl_nranks))

/* Decodes e and has n track it. */
static int nccl_row(struct gr_nccl *n, const struct gr_cuda_call *e,
		    struct gr_cuda_row *r)
{
	if (gr_cuda_decode__call(e, OFF, r))
		return -1;
	gr_nccl__track(n, e, &gr_apis[e->api], r);
	return 0;
}

/* An AllReduce on comm, returning ret. */
static struct gr_cuda_call allreduce(uint64_t comm, int64_t ret)
{
	struct gr_cuda_call e = call("ncclAllReduce", ret);
	e.args[2] = 1;
	e.args[5] = comm;
	return e;
}

TEST(nccl_communicators)
{
	struct gr_nccl n = { 0 };
	struct gr_cuda_row r;
	struct gr_cuda_call e = call("ncclCommInitRank", 0);
	for (int i = 0; i < 128; i++) /* the unique id, by value */
		e.st[i] = (uint8_t)(i * 7 + 3);
	e.args[1] = 8;      /* nranks */
	e.args[2] = 3;      /* rank */
	e.out = 0xc0;
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_comm_id], 4185740686366983461ll);
	CHECK_EQ_INT(r.v[GR_nccl_rank], 3);
	CHECK_EQ_INT(r.v[GR_nccl_nranks], 8);
	CHECK_EQ_INT(gr_nccl__count(&n), 1);

	/* Issued collectives count; a refused one does not. */
	for (int i = 0; i < 3; i++) {
		e = allreduce(0xc0, i == 1 ? 5 : 0);
		CHECK(!nccl_row(&n, &e, &r));
		CHECK_EQ_INT(r.v[GR_nccl_comm_id], 4185740686366983461ll);
		CHECK_EQ_INT(r.v[GR_nccl_rank], 3);
		CHECK_EQ_INT(r.v[GR_nccl_nranks], 8);
		if (i == 1) {
			CHECK_EQ_INT(r.nm, BIT(GR_nccl_peer) | BIT(GR_nccl_seq));
		} else {
			CHECK_EQ_INT(r.nm, BIT(GR_nccl_peer));
			CHECK_EQ_INT(r.v[GR_nccl_seq], i ? 1 : 0);
		}
	}
	e = allreduce(0xc0, 7); /* ncclInProgress: issued */
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_seq], 2);

	/* Another process's handle of the same value is not this one. */
	e = allreduce(0xc0, 0);
	e.pid = 1;
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.nm, BIT(GR_nccl_peer) | BIT(GR_nccl_seq) | COMM_BITS);

	/* A split names the child by (parent, color, nth split). */
	e = call("ncclCommSplit", 0);
	e.args[0] = 0xc0;
	e.args[1] = 5;
	e.out = 0xd0;
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_comm_id], 3090679455703220941ll);
	CHECK_EQ_INT(r.nm, BIT(GR_nccl_count) | BIT(GR_nccl_datatype) |
			   BIT(GR_nccl_bytes) | BIT(GR_nccl_redop) |
			   BIT(GR_nccl_peer) | BIT(GR_nccl_stream) |
			   BIT(GR_nccl_seq) | BIT(GR_nccl_rank) |
			   BIT(GR_nccl_nranks));
	e.out = 0xd8;
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_comm_id], 858364048735631532ll);
	e = allreduce(0xd0, 0);
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_comm_id], 3090679455703220941ll);
	CHECK_EQ_INT(r.v[GR_nccl_seq], 0);
	CHECK_EQ_INT(r.nm, BIT(GR_nccl_peer) | BIT(GR_nccl_rank) |
			   BIT(GR_nccl_nranks));
	CHECK_EQ_INT(gr_nccl__count(&n), 3);

	/* Destroy forgets the handle (its row still names it). */
	e = call("ncclCommDestroy", 0);
	e.args[0] = 0xc0;
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_comm_id], 4185740686366983461ll);
	CHECK_EQ_INT(gr_nccl__count(&n), 2);
	e = allreduce(0xc0, 0);
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.nm & COMM_BITS, COMM_BITS);
	gr_nccl__forget_pid(&n, 4242);
	CHECK_EQ_INT(gr_nccl__count(&n), 0);
	gr_nccl__free(&n);
}

TEST(nccl_init_all)
{
	struct gr_nccl n = { 0 };
	struct gr_cuda_row r;
	struct gr_cuda_call e = call("ncclCommInitAll", 0);
	e.args[1] = 3;
	e.out = 0x7000;
	put64(e.st + 8, 0x7100);
	put64(e.st + 16, 0x7200);
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_comm_id], 5389389856022181271ll);
	CHECK_EQ_INT(r.v[GR_nccl_nranks], 3);
	CHECK(r.nm & BIT(GR_nccl_rank));
	CHECK_EQ_INT(gr_nccl__count(&n), 3);
	e = allreduce(0x7200, 0);
	CHECK(!nccl_row(&n, &e, &r));
	CHECK_EQ_INT(r.v[GR_nccl_comm_id], 5389389856022181271ll);
	CHECK_EQ_INT(r.v[GR_nccl_rank], 2);
	CHECK_EQ_INT(r.v[GR_nccl_nranks], 3);
	e = call("ncclCommInitAll", 1); /* refused: no communicator */
	e.args[1] = 2;
	CHECK(!nccl_row(&n, &e, &r));
	CHECK(r.nm & BIT(GR_nccl_comm_id));
	CHECK_EQ_INT(gr_nccl__count(&n), 3);
	gr_nccl__free(&n);
	CHECK_EQ_INT(gr_nccl__count(&n), 0);
}

/* Records as the ring buffer holds them: 8-byte aligned. */
static union {
	struct gr_cuda_call_name cn;
	uint8_t b[sizeof(struct gr_cuda_call_name) + 512];
} buf;

TEST(records)
{
	struct gr_cuda_record rec;
	struct gr_cuda_row r;
	memset(&buf, 0, sizeof(buf));
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, 0, &rec), GR_CUDA_REC_SHORT);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, 3, &rec), GR_CUDA_REC_SHORT);
	buf.cn.c = call("cudaMalloc", 0);
	buf.cn.c.args[1] = 4096;
	size_t n = sizeof(struct gr_cuda_call);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, n - 1, &rec),
		     GR_CUDA_REC_SHORT);
	CHECK(rec.call == NULL);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, n, &rec), GR_CUDA_REC_CALL);
	CHECK(rec.call == &buf.cn.c && rec.name == NULL);
	/* Oversized: the bytes past the record are not read. */
	memset(buf.b + n, 0xee, sizeof(buf.b) - n);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(buf.b), &rec),
		     GR_CUDA_REC_CALL);
	CHECK_EQ_INT(gr_cuda_decode__call(rec.call, OFF, &r), 0);
	CHECK_EQ_INT(r.v[GR_cuda_mem_bytes], 4096);
	CHECK(shared_ok(&r, "cudaMalloc"));
	CHECK_EQ_INT(buf.cn.c.args[1], 4096);
}

TEST(records_named)
{
	struct gr_cuda_record rec;
	memset(&buf, 0, sizeof(buf));
	buf.cn.c = call("cuModuleGetFunction", 0);
	buf.cn.c.rec = GR_REC_CALL_NAME;
	strcpy(buf.cn.name, "_Z6kernelPf");
	size_t n = sizeof(struct gr_cuda_call_name);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, n - 1, &rec),
		     GR_CUDA_REC_SHORT);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, n, &rec), GR_CUDA_REC_CALL);
	CHECK(rec.call == &buf.cn.c);
	CHECK_EQ_STR(rec.name, "_Z6kernelPf");
	/* A name filling the field is cut to GR_NAME_BYTES - 1 bytes. */
	memset(buf.cn.name, 'a', GR_NAME_BYTES);
	memset(buf.b + n, 'b', sizeof(buf.b) - n);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(buf.b), &rec),
		     GR_CUDA_REC_CALL);
	CHECK_EQ_INT(strlen(rec.name), GR_NAME_BYTES - 1);
	CHECK_EQ_INT(rec.name[GR_NAME_BYTES - 2], 'a');
}

TEST(records_exec_unknown)
{
	struct gr_cuda_record rec;
	struct gr_proc_exec x = { .rec = GR_REC_EXEC, .pid = 31337, .ts = 9 };
	memset(&buf, 0, sizeof(buf));
	memcpy(buf.b, &x, sizeof(x));
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(x) - 1, &rec),
		     GR_CUDA_REC_SHORT);
	CHECK_EQ_INT(rec.exec_pid, 0);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(x), &rec),
		     GR_CUDA_REC_EXEC);
	CHECK_EQ_INT(rec.exec_pid, 31337);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(buf.b), &rec),
		     GR_CUDA_REC_EXEC);
	CHECK_EQ_INT(rec.exec_pid, 31337);
	/* An announced call's entry: its pid. */
	struct gr_cuda_enter en = { .rec = GR_REC_ENTER, .api = 3, .pid = 4242,
				    .tid = 4243, .ts = 11 };
	memset(&buf, 0, sizeof(buf));
	memcpy(buf.b, &en, sizeof(en));
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(en) - 1, &rec),
		     GR_CUDA_REC_SHORT);
	CHECK_EQ_INT(rec.enter_pid, 0);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(en), &rec),
		     GR_CUDA_REC_ENTER);
	CHECK_EQ_INT(rec.enter_pid, 4242);
	CHECK(rec.call == NULL);
	CHECK_EQ_INT(rec.exec_pid, 0);
	uint32_t t = 99;
	memcpy(buf.b, &t, 4);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, 4, &rec),
		     GR_CUDA_REC_UNKNOWN);
	t = 0;
	memcpy(buf.b, &t, 4);
	CHECK_EQ_INT(gr_cuda_decode__record(buf.b, sizeof(buf.b), &rec),
		     GR_CUDA_REC_UNKNOWN);
}

TEST_MAIN(
	TEST_ENTRY(launch_runtime)
	TEST_ENTRY(launch_driver)
	TEST_ENTRY(launch_config_structs)
	TEST_ENTRY(memcpy_1d)
	TEST_ENTRY(memcpy_2d_3d)
	TEST_ENTRY(memcpy_2d_driver)
	TEST_ENTRY(memset)
	TEST_ENTRY(alloc_free)
	TEST_ENTRY(sync)
	TEST_ENTRY(graphs)
	TEST_ENTRY(names)
	TEST_ENTRY(plain_init)
	TEST_ENTRY(bad_api)
	TEST_ENTRY(nccl_args)
	TEST_ENTRY(nccl_communicators)
	TEST_ENTRY(nccl_init_all)
	TEST_ENTRY(records)
	TEST_ENTRY(records_named)
	TEST_ENTRY(records_exec_unknown)
)
