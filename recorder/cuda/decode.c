/* decode.c - CUDA and NCCL call records into row values; see decode.h.
 *
 * The BPF side hands over raw argument registers, stack slots and struct
 * bytes (cuda.bpf.c); the API's shape (apis.c) says which argument is
 * what.  One function per shape of row: launches, copies (1D, 3D and the
 * driver's 2D struct), memsets, allocations and frees, syncs, graphs,
 * NCCL calls, and the load-time name calls.  Nothing here reads a
 * process, a map or the clock: the same record always makes the same row.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recorder/cuda/decode.h"

static const char *const kind_names[] = { "H2H", "H2D", "D2H", "D2D",
					  "default", "P2P" };

static const char *const nccl_types[] = { "int8", "uint8", "int32", "uint32",
	"int64", "uint64", "float16", "float32", "float64", "bfloat16",
	"float8e4m3", "float8e5m2" };
static const uint8_t nccl_type_bytes[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2,
					   1, 1 };
static const char *const nccl_ops[] = { "sum", "prod", "max", "min", "avg" };

#define BIT(col) (1ull << (col))

void gr_cuda_row__str_kept(struct gr_cuda_row *r, int col, const char *s,
			   struct gr_cuda_strid *keep)
{
	if (r->nstr == GR_CUDA_ROW_STRS)
		return; /* no shape sets that many */
	r->str[r->nstr].col = col;
	r->str[r->nstr].s = s;
	r->str[r->nstr].keep = keep;
	r->nstr++;
}

void gr_cuda_row__str(struct gr_cuda_row *r, int col, const char *s)
{
	gr_cuda_row__str_kept(r, col, s, NULL);
}

static int64_t sz(uint64_t v, uint64_t mul)
{
	return (int64_t)(v * mul);
}

static uint32_t u32at(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t u64at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Argument i of e, times argument j if j >= 0 (a 2D copy's width and
 * height, cudaMallocPitch's width and height). */
static uint64_t times(const struct gr_cuda_call *e, int i, int j)
{
	return e->args[i] * (j >= 0 ? e->args[j] : 1);
}

/* Sets stream column col from argument i, or nulls it where the call
 * has none (i < 0). */
static void stream_col(struct gr_cuda_row *r, const struct gr_cuda_call *e,
		       int i, int col)
{
	if (i >= 0)
		r->v[col] = (int64_t)e->args[i];
	else
		r->nm |= BIT(col);
}

static void decode_launch(const struct gr_cuda_call *e,
			  const struct gr_api *a, struct gr_cuda_row *r)
{
	const __u64 *x = e->args;
	int64_t *v = r->v;
	if (a->shape == GR_SH_LAUNCH_RT) {
		/* dim3 by value: x|y in one register, z in the next. */
		r->func = x[0];
		v[GR_cuda_kernel_grid_x] = (uint32_t)x[1];
		v[GR_cuda_kernel_grid_y] = (uint32_t)(x[1] >> 32);
		v[GR_cuda_kernel_grid_z] = (uint32_t)x[2];
		v[GR_cuda_kernel_block_x] = (uint32_t)x[3];
		v[GR_cuda_kernel_block_y] = (uint32_t)(x[3] >> 32);
		v[GR_cuda_kernel_block_z] = (uint32_t)x[4];
		v[GR_cuda_kernel_shared_mem] = (int64_t)x[6];
		v[GR_cuda_kernel_stream] = (int64_t)x[7];
	} else if (a->shape == GR_SH_LAUNCH_DRV) {
		r->func = x[0];
		v[GR_cuda_kernel_grid_x] = (uint32_t)x[1];
		v[GR_cuda_kernel_grid_y] = (uint32_t)x[2];
		v[GR_cuda_kernel_grid_z] = (uint32_t)x[3];
		v[GR_cuda_kernel_block_x] = (uint32_t)x[4];
		v[GR_cuda_kernel_block_y] = (uint32_t)x[5];
		v[GR_cuda_kernel_block_z] = (uint32_t)x[6];
		v[GR_cuda_kernel_shared_mem] = (uint32_t)x[7];
		v[GR_cuda_kernel_stream] = (int64_t)x[8];
	} else {
		/* cudaLaunchConfig_t and CUlaunchConfig share the layout up
		 * to the stream; smem is size_t in one, unsigned int in the
		 * other. */
		const uint8_t *s = e->st;
		r->func = x[1];
		v[GR_cuda_kernel_grid_x] = u32at(s);
		v[GR_cuda_kernel_grid_y] = u32at(s + 4);
		v[GR_cuda_kernel_grid_z] = u32at(s + 8);
		v[GR_cuda_kernel_block_x] = u32at(s + 12);
		v[GR_cuda_kernel_block_y] = u32at(s + 16);
		v[GR_cuda_kernel_block_z] = u32at(s + 20);
		v[GR_cuda_kernel_shared_mem] = a->shape == GR_SH_LAUNCH_RT_EX ?
			(int64_t)u64at(s + 24) : u32at(s + 24);
		v[GR_cuda_kernel_stream] = (int64_t)u64at(s + 32);
	}
	/* kernel and kernel_mangled: naming.c. */
	v[GR_cuda_kernel_ret] = (int32_t)e->ret;
}

/* One side of a CUDA_MEMCPY2D, from its memory type on (srcMemoryType at
 * 16, then Host, Device, Array; the dst side is the same 56 bytes on):
 * sets *p to the pointer its type uses, and returns the side as
 * 0 unknown, 1 host, 2 device (or array), 3 unified. */
static int memcpy2d_side(const uint8_t *st, uint64_t *p, int *has)
{
	switch (u32at(st + 16)) {
	case 1: /* CU_MEMORYTYPE_HOST */
		*p = u64at(st + 24), *has = 1;
		return 1;
	case 2: /* CU_MEMORYTYPE_DEVICE */
		*p = u64at(st + 32), *has = 1;
		return 2;
	case 3: /* CU_MEMORYTYPE_ARRAY: no pointer */
		return 2;
	case 4: /* CU_MEMORYTYPE_UNIFIED: an address in srcDevice */
		*p = u64at(st + 32), *has = 1;
		return 3;
	}
	return 0;
}

/* Direction of a 2D driver copy from its sides (memcpy2d_side): unified
 * memory on either side is cudaMemcpyDefault's "default"; 0xff where a
 * side's type is unknown. */
static uint64_t kind_2d(int s, int d)
{
	if (!s || !d)
		return 0xff;
	if (s == 3 || d == 3)
		return GR_K_DEFAULT;
	if (s == 1)
		return d == 1 ? GR_K_H2H : GR_K_H2D;
	return d == 1 ? GR_K_D2H : GR_K_D2D;
}

/* A copy's extent, direction and pointers, wherever its shape keeps them. */
struct copy {
	uint64_t bytes, kind, src, dst;
	int has_src, has_dst;
};

static void copy_params(const struct gr_cuda_call *e, const struct gr_api *a,
			struct copy *k)
{
	const __u64 *x = e->args;
	const uint8_t *s = e->st;
	*k = (struct copy){ .kind = a->fixed_kind };
	if (a->shape == GR_SH_MEMCPY_3D) {
		/* From srcPtr on: a zero pointer is an array's copy. */
		k->bytes = u64at(s + 96) * u64at(s + 104) * u64at(s + 112);
		k->kind = u32at(s + 120);
		k->src = u64at(s), k->has_src = k->src != 0;
		k->dst = u64at(s + 64), k->has_dst = k->dst != 0;
	} else if (a->shape == GR_SH_MEMCPY_2D_DRV) {
		k->bytes = u64at(s + 112) * u64at(s + 120);
		int sk = memcpy2d_side(s, &k->src, &k->has_src);
		int dk = memcpy2d_side(s + 56, &k->dst, &k->has_dst);
		k->kind = kind_2d(sk, dk);
	} else {
		k->bytes = times(e, a->bytes, a->bytes2);
		if (a->kind >= 0)
			k->kind = (uint32_t)x[a->kind];
		if (a->src >= 0)
			k->src = x[a->src], k->has_src = 1;
		if (a->dst >= 0)
			k->dst = x[a->dst], k->has_dst = 1;
	}
}

static void decode_memcpy(const struct gr_cuda_call *e,
			  const struct gr_api *a, struct gr_cuda_row *r)
{
	struct copy k;
	copy_params(e, a, &k);
	r->v[GR_cuda_memcpy_src] = (int64_t)k.src;
	r->v[GR_cuda_memcpy_dst] = (int64_t)k.dst;
	if (!k.has_src)
		r->nm |= BIT(GR_cuda_memcpy_src);
	if (!k.has_dst)
		r->nm |= BIT(GR_cuda_memcpy_dst);
	r->v[GR_cuda_memcpy_bytes] = sz(k.bytes, 1);
	if (k.kind <= GR_K_P2P)
		gr_cuda_row__str(r, GR_cuda_memcpy_kind, kind_names[k.kind]);
	else
		r->nm |= BIT(GR_cuda_memcpy_kind);
	r->v[GR_cuda_memcpy_async] = a->async;
	stream_col(r, e, a->stream, GR_cuda_memcpy_stream);
	r->v[GR_cuda_memcpy_ret] = (int32_t)e->ret;
}

static void decode_memset(const struct gr_cuda_call *e,
			  const struct gr_api *a, struct gr_cuda_row *r)
{
	r->v[GR_cuda_memset_bytes] = sz(times(e, a->bytes, a->bytes2), a->mul);
	r->v[GR_cuda_memset_async] = a->async;
	stream_col(r, e, a->stream, GR_cuda_memset_stream);
	r->v[GR_cuda_memset_ret] = (int32_t)e->ret;
}

static void decode_mem(const struct gr_cuda_call *e, const struct gr_api *a,
		       struct gr_cuda_row *r)
{
	int32_t ret = (int32_t)e->ret;
	gr_cuda_row__str(r, GR_cuda_mem_op, a->op);
	if (a->shape == GR_SH_ALLOC) {
		r->v[GR_cuda_mem_bytes] = sz(times(e, a->bytes, a->bytes2), 1);
		/* The out-pointer holds an address only on success; a
		 * registration's pointer is an argument. */
		if (ret == 0)
			r->v[GR_cuda_mem_ptr] = (int64_t)(a->out >= 0 ?
				e->out : e->args[a->ptr]);
		else
			r->nm |= BIT(GR_cuda_mem_ptr);
	} else {
		r->nm |= BIT(GR_cuda_mem_bytes);
		r->v[GR_cuda_mem_ptr] = (int64_t)e->args[a->ptr];
	}
	r->v[GR_cuda_mem_ret] = ret;
}

static void decode_sync(const struct gr_cuda_call *e, const struct gr_api *a,
			struct gr_cuda_row *r)
{
	stream_col(r, e, a->stream, GR_cuda_sync_stream);
	r->v[GR_cuda_sync_ret] = (int32_t)e->ret;
}

static void decode_graph(const struct gr_cuda_call *e,
			 const struct gr_api *a, struct gr_cuda_row *r)
{
	const __u64 *x = e->args;
	int32_t ret = (int32_t)e->ret;
	int exec = strstr(a->sym, "Exec") != NULL ||
		   strcmp(a->op, "launch") == 0;
	uint64_t graph = 0, gexec = 0;
	int has_graph = 0, has_exec = 0;
	if (strcmp(a->op, "capture_end") == 0) {
		graph = e->out, has_graph = ret == 0;
	} else if (strcmp(a->op, "instantiate") == 0) {
		graph = x[a->handle], has_graph = 1;
		gexec = e->out, has_exec = ret == 0;
	} else if (a->handle >= 0 && exec) {
		gexec = x[a->handle], has_exec = 1;
	} else if (a->handle >= 0) {
		graph = x[a->handle], has_graph = 1;
	}
	gr_cuda_row__str(r, GR_cuda_graph_op, a->op);
	r->v[GR_cuda_graph_graph] = (int64_t)graph;
	r->v[GR_cuda_graph_graph_exec] = (int64_t)gexec;
	if (!has_graph)
		r->nm |= BIT(GR_cuda_graph_graph);
	if (!has_exec)
		r->nm |= BIT(GR_cuda_graph_graph_exec);
	stream_col(r, e, a->stream, GR_cuda_graph_stream);
	r->v[GR_cuda_graph_ret] = ret;
}

/* The nccl row's columns a call's arguments give (comm_id, rank, nranks
 * and seq are nccl.c's; seq starts null). */
static void decode_nccl(const struct gr_cuda_call *e, const struct gr_api *a,
			struct gr_cuda_row *r)
{
	const __u64 *x = e->args;
	int64_t *v = r->v;
	/* The operation: the name past "nccl", one spelling per operation
	 * (ncclBcast is an in-place Broadcast; NCCL spells AlltoAll), so
	 * reports group by op across versions and entry points. */
	const char *name = a->sym + 4;
	if (!strcmp(name, "Bcast"))
		name = "Broadcast";
	else if (!strcmp(name, "AlltoAll"))
		name = "AllToAll";
	gr_cuda_row__str(r, GR_nccl_op, name);
	if (a->bytes >= 0) {
		uint64_t n = x[a->bytes];
		uint32_t dt = (uint32_t)x[a->dtype];
		v[GR_nccl_count] = (int64_t)n;
		if (dt < sizeof(nccl_types) / sizeof(nccl_types[0])) {
			gr_cuda_row__str(r, GR_nccl_datatype, nccl_types[dt]);
			v[GR_nccl_bytes] = sz(n, nccl_type_bytes[dt]);
		} else {
			snprintf(r->num, sizeof(r->num), "%u", dt);
			gr_cuda_row__str(r, GR_nccl_datatype, r->num);
			r->nm |= BIT(GR_nccl_bytes);
		}
	} else {
		r->nm |= BIT(GR_nccl_count) | BIT(GR_nccl_datatype) |
			 BIT(GR_nccl_bytes);
	}
	if (a->redop >= 0) {
		uint32_t op = (uint32_t)x[a->redop];
		gr_cuda_row__str(r, GR_nccl_redop,
				 op < 5 ? nccl_ops[op] : "premulsum");
	} else {
		r->nm |= BIT(GR_nccl_redop);
	}
	if (a->peer >= 0)
		v[GR_nccl_peer] = (int32_t)x[a->peer];
	else
		r->nm |= BIT(GR_nccl_peer);
	stream_col(r, e, a->stream, GR_nccl_stream);
	v[GR_nccl_ret] = (int32_t)e->ret;
	r->nm |= BIT(GR_nccl_seq);
}

/* A load-time name call (cuModuleGetFunction, __cudaRegisterFunction...),
 * or a call whose arguments make no column (cuInit): a cuda_api row; the
 * name a name call gives is naming.c's. */
static void decode_name(const struct gr_cuda_call *e, const struct gr_api *a,
			struct gr_cuda_row *r)
{
	if (a->noret)
		r->nm |= BIT(GR_cuda_api_ret); /* void: rax is junk */
	else
		r->v[GR_cuda_api_ret] = (int32_t)e->ret;
}

typedef void decode_fn(const struct gr_cuda_call *e, const struct gr_api *a,
		       struct gr_cuda_row *r);

int gr_cuda_decode__call(const struct gr_cuda_call *e,
			 int64_t clock_offset_ns, struct gr_cuda_row *r)
{
	if (e->api >= (uint32_t)gr_napis)
		return -EINVAL;
	const struct gr_api *a = &gr_apis[e->api];
	int table;
	decode_fn *fn;
	switch (a->shape) {
	case GR_SH_LAUNCH_RT:
	case GR_SH_LAUNCH_RT_EX:
	case GR_SH_LAUNCH_DRV:
	case GR_SH_LAUNCH_DRV_EX:
		table = GR_T_cuda_kernel, fn = decode_launch;
		break;
	case GR_SH_MEMCPY:
	case GR_SH_MEMCPY_3D:
	case GR_SH_MEMCPY_2D_DRV:
		table = GR_T_cuda_memcpy, fn = decode_memcpy;
		break;
	case GR_SH_MEMSET:
		table = GR_T_cuda_memset, fn = decode_memset;
		break;
	case GR_SH_ALLOC:
	case GR_SH_FREE:
		table = GR_T_cuda_mem, fn = decode_mem;
		break;
	case GR_SH_SYNC:
		table = GR_T_cuda_sync, fn = decode_sync;
		break;
	case GR_SH_GRAPH:
		table = GR_T_cuda_graph, fn = decode_graph;
		break;
	default:
		if (GR_SH_IS_NCCL(a->shape))
			table = GR_T_nccl, fn = decode_nccl;
		else /* GR_SH_NAME, GR_SH_API */
			table = GR_T_cuda_api, fn = decode_name;
	}
	/* The table's own values alone are zeroed, not all GR_MAX_COLS:
	 * that was a third of decoding a launch, and a writer reads no
	 * others. */
	memset(r->v, 0, (size_t)gr_tables[table].ncols * sizeof(r->v[0]));
	r->table = table;
	r->nm = 0;
	r->nstr = 0;
	r->func = 0;
	memcpy(r->comm, e->comm, 16);
	r->comm[16] = 0;
	/* Columns every cuda_* table shares sit at the same indices. */
	r->v[GR_cuda_api_ts] = (int64_t)e->ts + clock_offset_ns;
	r->v[GR_cuda_api_pid] = e->pid;
	r->v[GR_cuda_api_tid] = e->tid;
	gr_cuda_row__str(r, GR_cuda_api_comm, r->comm);
	r->v[GR_cuda_api_dur] = (int64_t)e->dur;
	gr_cuda_row__str(r, GR_cuda_api_api, a->sym);
	fn(e, a, r);
	return 0;
}

enum gr_cuda_rec_kind gr_cuda_decode__record(const void *data, size_t len,
					     struct gr_cuda_record *rec)
{
	rec->call = NULL;
	rec->name = NULL;
	rec->exec_pid = 0;
	rec->enter_pid = 0;
	if (len < 4)
		return GR_CUDA_REC_SHORT;
	switch (*(const uint32_t *)data) {
	case GR_REC_CALL:
		if (len < sizeof(struct gr_cuda_call))
			return GR_CUDA_REC_SHORT;
		rec->call = data;
		return GR_CUDA_REC_CALL;
	case GR_REC_CALL_NAME: {
		const struct gr_cuda_call_name *n = data;
		if (len < sizeof(*n))
			return GR_CUDA_REC_SHORT;
		memcpy(rec->name_buf, n->name, sizeof(rec->name_buf));
		rec->name_buf[GR_NAME_BYTES - 1] = 0;
		rec->call = &n->c;
		rec->name = rec->name_buf;
		return GR_CUDA_REC_CALL;
	}
	case GR_REC_EXEC:
		if (len < sizeof(struct gr_proc_exec))
			return GR_CUDA_REC_SHORT;
		rec->exec_pid = ((const struct gr_proc_exec *)data)->pid;
		return GR_CUDA_REC_EXEC;
	case GR_REC_ENTER:
		if (len < sizeof(struct gr_cuda_enter))
			return GR_CUDA_REC_SHORT;
		rec->enter_pid = ((const struct gr_cuda_enter *)data)->pid;
		return GR_CUDA_REC_ENTER;
	}
	return GR_CUDA_REC_UNKNOWN;
}
