/* synth.c - the synthetic launch, off-CPU, block I/O, file I/O and drops
 * streams; the NCCL job is synth_nccl.c's. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/synth.h"
#include "bench/synth_gpu.h"
#include "bench/synth_nccl.h"

struct kernel {
	uint32_t name, mangled;          /* dictionary ids */
	int32_t grid[3], block[3];
	int32_t smem;
	int64_t gap_ns;                  /* mean host time before it */
	int64_t dur_ns;                  /* mean time in the launch call */
};

struct proc {
	int64_t pid, tid, comm;
	int64_t now;                     /* next event time */
	int pos;                         /* position in the step */
	int64_t stream[2];
	int64_t hang_at;                 /* its GPU's next hang (gpus) */
};

struct gr_synth {
	struct gr_writer *w;
	struct gr_synth_opts o;
	uint64_t rng;
	struct kernel *k;
	int *step;                       /* kernel index per step position */
	struct proc *p;
	int64_t api_launch, api_launch_ex;
	int64_t api_memcpy, api_memcpy_async, kinds[3];
	double gap_scale;                /* rate: stretches the gaps */
	struct proc *last;               /* of the last launch */
	uint64_t ncopies;
	/* off-CPU and block I/O */
	int64_t state_s, state_d, stacks[6], comm_worker, dev[2], disk[2], op_r,
		op_w;
	int64_t io_now, io_sector, off_now;
	/* file I/O: syscalls and paths with every byte that needs escaping */
	int64_t sys[3], paths[7], file_now;
	uint64_t seq;
	/* drops: its own sequence, its strings interned on first use */
	int64_t drop_src[3];
	uint64_t drop_seq;
	struct gr_nccl_job *nccl;        /* made on the first nccl row */
	struct gr_gpu_synth *gpu;        /* with o.gpus */
	int64_t last_ts;                 /* of the other streams */
	/* strings by id, for the baseline */
	char **strs;
	int nstrs;
};

/* xorshift64*: deterministic across platforms for a given seed. */
static uint64_t rnd(struct gr_synth *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ull;
}

static double unif(struct gr_synth *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/* A normal deviate (Box-Muller), for jitter around a mean. */
static double gauss(struct gr_synth *s)
{
	double u = unif(s), v = unif(s);
	if (u < 1e-12)
		u = 1e-12;
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static int64_t intern(struct gr_synth *s, const char *str)
{
	uint32_t id = 0;
	if (s->w) {
		id = gr_writer__intern(s->w, str, strlen(str));
	} else {
		/* Without a writer, number strings as a fresh writer would. */
		for (int i = 1; i <= s->nstrs && !id; i++)
			if (s->strs[i] && strcmp(s->strs[i], str) == 0)
				id = (uint32_t)i;
		if (!id)
			id = (uint32_t)s->nstrs + 1;
	}
	if (!id)
		return -1;
	if ((int)id > s->nstrs) {
		char **p = realloc(s->strs, (id + 1) * sizeof(*p));
		if (!p)
			return -1;
		s->strs = p;
		for (int i = s->nstrs + 1; i <= (int)id; i++)
			s->strs[i] = NULL;
		s->nstrs = (int)id;
	}
	if (!s->strs[id])
		s->strs[id] = strdup(str);
	return id;
}

int64_t gr_synth__intern(struct gr_synth *s, const char *str)
{
	return intern(s, str);
}

const char *gr_synth__str(const struct gr_synth *s, int64_t id)
{
	return id > 0 && id <= s->nstrs ? s->strs[id] : NULL;
}

static const char *const ops[] = {
	"add", "mul", "sub", "div", "gelu", "silu", "relu", "copy", "fill",
	"neg", "exp", "rsqrt", "where", "masked_fill", "index", "cat",
};
static const char *const dtypes[] = { "float", "c10::BFloat16", "c10::Half",
				      "long", "int" };

static void kernel_names(struct gr_synth *s, int i, char *name, size_t nl,
			 char *mangled, size_t ml)
{
	const char *op = ops[i % 16], *dt = dtypes[(i / 16) % 5];
	switch (i % 5) {
	case 0:
		snprintf(name, nl, "void at::native::vectorized_elementwise_kernel"
			 "<4, at::native::CUDAFunctor_%s<%s>, std::array<char*, "
			 "%dul> >(int, at::native::CUDAFunctor_%s<%s>, "
			 "std::array<char*, %dul>)", op, dt, 2 + i % 3, op, dt,
			 2 + i % 3);
		snprintf(mangled, ml, "_ZN2at6native29vectorized_elementwise_"
			 "kernelILi4ENS0_13CUDAFunctor_%zu%sI%sEESt5arrayIPcLm%d"
			 "EEEEviT0_T1_", strlen(op), op, dt, 2 + i % 3);
		break;
	case 1:
		snprintf(name, nl, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_"
			 "tilesize%dx%dx64_warpgroupsize1x1x1_execute_segment_k_"
			 "off_kernel__5x_cublas", 64 << (i % 3), 64 << (i / 3 % 3));
		snprintf(mangled, ml, "%s", name);
		break;
	case 2:
		snprintf(name, nl, "triton_%s_fused_%s_%s_%d",
			 i % 2 ? "red" : "poi", op, ops[(i * 7) % 16], i);
		snprintf(mangled, ml, "%s", name);
		break;
	case 3:
		snprintf(name, nl, "void at::native::reduce_kernel<512, 1, "
			 "at::native::ReduceOp<%s, at::native::func_wrapper<%s>, "
			 "unsigned int, %s, 4> >(at::native::ReduceOp<%s, "
			 "at::native::func_wrapper<%s>, unsigned int, %s, 4>)",
			 dt, op, dt, dt, op, dt);
		snprintf(mangled, ml, "_ZN2at6native13reduce_kernelILi512ELi1E"
			 "NS0_8ReduceOpI%sNS0_12func_wrapperI%sEEj%sLi4EEEEEvT1_",
			 dt, op, dt);
		break;
	default:
		snprintf(name, nl, "void flash::flash_fwd_kernel<Flash_fwd_"
			 "kernel_traits<%d, 128, 64, 4, false, false, %s>, %s, "
			 "%s>(flash::Flash_fwd_params)", 64 + 32 * (i % 4), dt,
			 i % 2 ? "true" : "false", i % 3 ? "true" : "false");
		snprintf(mangled, ml, "_ZN5flash16flash_fwd_kernelI23Flash_fwd_"
			 "kernel_traitsILi%dELi128ELi64ELi4ELb0ELb0E%sELb%dELb%d"
			 "EEEvNS_16Flash_fwd_paramsE", 64 + 32 * (i % 4), dt,
			 i % 2, i % 3 != 0);
	}
}

struct gr_synth *gr_synth__new(struct gr_writer *w,
			       const struct gr_synth_opts *o)
{
	struct gr_synth *s = calloc(1, sizeof(*s));
	char name[512], mangled[512];
	if (!s)
		return NULL;
	s->w = w;
	s->o = *o;
	if (!s->o.nprocs)
		s->o.nprocs = 4;
	if (!s->o.nkernels)
		s->o.nkernels = 300;
	if (!s->o.step_len)
		s->o.step_len = 400;
	s->rng = o->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	s->k = calloc((size_t)s->o.nkernels, sizeof(*s->k));
	s->step = calloc((size_t)s->o.step_len, sizeof(*s->step));
	s->p = calloc((size_t)s->o.nprocs, sizeof(*s->p));
	if (!s->k || !s->step || !s->p)
		goto fail;
	for (int i = 0; i < s->o.nkernels; i++) {
		struct kernel *k = &s->k[i];
		kernel_names(s, i, name, sizeof(name), mangled, sizeof(mangled));
		k->name = (uint32_t)intern(s, name);
		k->mangled = (uint32_t)intern(s, mangled);
		k->grid[0] = (int32_t)(1u << (rnd(s) % 14));
		k->grid[1] = i % 7 == 0 ? (int32_t)(1 + rnd(s) % 16) : 1;
		k->grid[2] = i % 11 == 0 ? (int32_t)(1 + rnd(s) % 8) : 1;
		k->block[0] = 32 << (rnd(s) % 6);
		k->block[1] = i % 13 == 0 ? 4 : 1;
		k->block[2] = 1;
		k->smem = i % 3 == 0 ? (int32_t)(1024 * (rnd(s) % 228)) : 0;
		k->gap_ns = 2000 + (int64_t)(rnd(s) % 12000);
		k->dur_ns = 1800 + (int64_t)(rnd(s) % 2500);
	}
	/* A step: kernels drawn with a skew (a few dominate, like GEMMs and
	 * elementwise ops in a transformer). */
	for (int j = 0; j < s->o.step_len; j++) {
		double u = unif(s);
		s->step[j] = (int)(u * u * s->o.nkernels);
	}
	for (int i = 0; i < s->o.nprocs; i++) {
		struct proc *p = &s->p[i];
		char comm[32];
		p->pid = 41000 + 17 * i;
		p->tid = p->pid;
		snprintf(comm, sizeof(comm), "python3");
		p->comm = intern(s, comm);
		p->now = o->start_ns + (int64_t)(rnd(s) % 100000);
		p->pos = (int)(rnd(s) % (uint64_t)s->o.step_len);
		p->stream[0] = 0x55d0c8a3e000 + 0x1000 * i;
		p->stream[1] = p->stream[0] + 0x200;
	}
	s->gap_scale = 1;
	if (o->rate > 0) {
		/* Mean period per process nprocs / rate: scale the gaps
		 * so that a step's mean call plus gap is that. */
		double dur = 0, gap = 0, want = s->o.nprocs * 1e9 / o->rate;
		for (int j = 0; j < s->o.step_len; j++) {
			dur += (double)s->k[s->step[j]].dur_ns;
			gap += (double)s->k[s->step[j]].gap_ns;
		}
		dur /= s->o.step_len;
		gap /= s->o.step_len;
		s->gap_scale = want > dur ? (want - dur) / gap : 0.01;
	}
	s->api_memcpy = intern(s, "cudaMemcpy");
	s->api_memcpy_async = intern(s, "cudaMemcpyAsync");
	s->kinds[0] = intern(s, "H2D");
	s->kinds[1] = intern(s, "D2H");
	s->kinds[2] = intern(s, "D2D");
	s->api_launch = intern(s, "cudaLaunchKernel");
	s->api_launch_ex = intern(s, "cuLaunchKernelEx");
	s->state_s = intern(s, "S");
	s->state_d = intern(s, "D");
	static const char *const stacks[] = {
		"python3;_PyEval_EvalFrameDefault;PyObject_Call;"
		"torch::autograd::THPVariable_item;cudaStreamSynchronize;"
		"ioctl;entry_SYSCALL_64;__x64_sys_ioctl;nvidia_ioctl;"
		"schedule",
		"python3;_PyEval_EvalFrameDefault;time_sleep;clock_nanosleep;"
		"entry_SYSCALL_64;__x64_sys_clock_nanosleep;hrtimer_nanosleep;"
		"do_nanosleep;schedule",
		"python3;_PyEval_EvalFrameDefault;_queue_get;"
		"PyThread_acquire_lock_timed;futex_wait;entry_SYSCALL_64;"
		"__x64_sys_futex;futex_wait_queue;schedule",
		"pt_data_worker;read;entry_SYSCALL_64;ksys_read;ext4_file_read_"
		"iter;filemap_read;folio_wait_bit_common;io_schedule",
		"python3;cuda_runtime_wait;pthread_cond_wait;futex_wait;"
		"entry_SYSCALL_64;__x64_sys_futex;schedule",
		"pt_data_worker;epoll_wait;entry_SYSCALL_64;do_epoll_wait;"
		"schedule_hrtimeout_range;schedule",
	};
	for (int i = 0; i < 6; i++)
		s->stacks[i] = intern(s, stacks[i]);
	s->comm_worker = intern(s, "pt_data_worker");
	s->dev[0] = intern(s, "259:0");
	s->dev[1] = intern(s, "259:1");
	s->disk[0] = intern(s, "nvme0n1");
	s->disk[1] = intern(s, "nvme1n1");
	s->op_r = intern(s, "R");
	s->op_w = intern(s, "W");
	static const char *const paths[] = {
		"/data/shard-00.tar",
		"/data/with \"quotes\" and \\backslash",
		"/data/new\nline\ttab\r",
		"/data/ctl\x01\x1f\x7f",
		"/data/caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac.bin",
		"/data/bad\xff\xfe utf8 \xe6\x97",
		"/data/comma,semi;colon",
	};
	for (int i = 0; i < 7; i++)
		s->paths[i] = intern(s, paths[i]);
	s->sys[0] = intern(s, "openat");
	s->sys[1] = intern(s, "read");
	s->sys[2] = intern(s, "write");
	s->io_now = s->off_now = s->file_now = o->start_ns;
	s->io_sector = 2048;
	if (o->gpus > 0 && !(s->gpu = gr_gpu_synth__new(s, &s->o, o->gpus)))
		goto fail;
	for (int i = 1; i <= s->nstrs; i++)
		if (!s->strs[i])
			goto fail;
	return s;
fail:
	gr_synth__free(s);
	errno = ENOMEM;
	return NULL;
}

void gr_synth__free(struct gr_synth *s)
{
	if (!s)
		return;
	for (int i = 1; i <= s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->k);
	free(s->step);
	free(s->p);
	gr_nccl_job__free(s->nccl);
	gr_gpu_synth__free(s->gpu);
	free(s);
}

static int64_t jitter(struct gr_synth *s, int64_t mean)
{
	int64_t v = mean + (int64_t)(gauss(s) * (double)mean * 0.08);
	/* A heavy tail: now and then the host thread stalls. */
	if (rnd(s) % 997 == 0)
		v += (int64_t)(rnd(s) % 2000000);
	return v > 100 ? v : 100;
}

void gr_synth__next_launch(struct gr_synth *s, int64_t *v, uint64_t *nullmask)
{
	struct proc *p;
	uint64_t seq = s->seq++;
	if (s->o.interval_ns) {
		p = &s->p[seq % (uint64_t)s->o.nprocs];
		p->now = s->o.start_ns + (int64_t)seq * s->o.interval_ns;
	} else {
		/* The process whose next launch comes first; with the gpu
		 * family, none while its GPU hangs (it waits on it). */
		for (;;) {
			int g = 0;
			for (int i = 1; i < s->o.nprocs; i++)
				if (s->p[i].now < s->p[g].now)
					g = i;
			p = &s->p[g];
			if (!s->gpu || p->now < p->hang_at)
				break;
			int64_t end = gr_gpu_synth__hang_end(s->gpu, g, p->now);
			if (end)
				p->now = end + (int64_t)(rnd(s) % 1000000);
			p->hang_at = gr_gpu_synth__next_hang(s->gpu, g, p->now);
		}
	}
	const struct kernel *k = &s->k[s->step[p->pos]];
	v[GR_cuda_kernel_ts] = p->now;
	v[GR_cuda_kernel_pid] = p->pid;
	v[GR_cuda_kernel_tid] = p->tid;
	v[GR_cuda_kernel_comm] = p->comm;
	v[GR_cuda_kernel_dur] = s->o.interval_ns ? 1000 : jitter(s, k->dur_ns);
	v[GR_cuda_kernel_api] = p->pos % 5 == 1 ? s->api_launch_ex :
						  s->api_launch;
	v[GR_cuda_kernel_kernel] = k->name;
	v[GR_cuda_kernel_kernel_mangled] = k->mangled;
	v[GR_cuda_kernel_grid_x] = k->grid[0];
	v[GR_cuda_kernel_grid_y] = k->grid[1];
	v[GR_cuda_kernel_grid_z] = k->grid[2];
	v[GR_cuda_kernel_block_x] = k->block[0];
	v[GR_cuda_kernel_block_y] = k->block[1];
	v[GR_cuda_kernel_block_z] = k->block[2];
	v[GR_cuda_kernel_shared_mem] = k->smem;
	v[GR_cuda_kernel_stream] = p->stream[s->step[p->pos] % 7 == 0];
	v[GR_cuda_kernel_ret] = 0;
	*nullmask = 0;
	if (!s->o.interval_ns)
		p->now += v[GR_cuda_kernel_dur] +
			  jitter(s, (int64_t)((double)k->gap_ns * s->gap_scale));
	p->pos = (p->pos + 1) % s->o.step_len;
	s->last = p;
}

void gr_synth__next_memcpy(struct gr_synth *s, int64_t *v, uint64_t *nullmask)
{
	const struct proc *p = s->last ? s->last : &s->p[0];
	uint64_t i = s->ncopies++;
	int async = i % 4 != 0, kind = (int)(i % 3);
	int64_t bytes = (int64_t)4096 << (i % 11);
	v[GR_cuda_memcpy_ts] = s->o.interval_ns ? p->now + s->o.interval_ns / 2
						: p->now;
	v[GR_cuda_memcpy_pid] = p->pid;
	v[GR_cuda_memcpy_tid] = p->tid;
	v[GR_cuda_memcpy_comm] = p->comm;
	v[GR_cuda_memcpy_dur] = s->o.interval_ns ? 2000 :
				async ? jitter(s, 6000) :
				jitter(s, 20000 + bytes / 8);
	v[GR_cuda_memcpy_api] = async ? s->api_memcpy_async : s->api_memcpy;
	v[GR_cuda_memcpy_kind] = s->kinds[kind];
	v[GR_cuda_memcpy_bytes] = bytes;
	v[GR_cuda_memcpy_async] = async;
	v[GR_cuda_memcpy_stream] = async ? p->stream[0] : 0;
	v[GR_cuda_memcpy_ret] = 0;
	/* A pinned staging buffer per process, device buffers in turn. */
	int64_t host = 0x7f3a00000000 + p->pid * 0x1000000,
		dev = 0x7f1c00000000 + (int64_t)(i % 64) * 0x200000;
	v[GR_cuda_memcpy_src] = kind == 0 ? host : dev;
	v[GR_cuda_memcpy_dst] = kind == 1 ? host : dev + 0x100000;
	*nullmask = async ? 0 : 1ull << GR_cuda_memcpy_stream;
}

void gr_synth__next_offcpu(struct gr_synth *s, int64_t *v, uint64_t *nullmask)
{
	uint64_t seq = s->seq++;
	const struct proc *p = &s->p[seq % (uint64_t)s->o.nprocs];
	int worker = seq % 3 == 2;
	int64_t dur = s->o.interval_ns ? 1000000 :
		      (int64_t)(20000 + (rnd(s) % 5 ? rnd(s) % 2000000 :
						      rnd(s) % 200000000));
	s->off_now = s->o.interval_ns ?
		s->o.start_ns + (int64_t)seq * s->o.interval_ns :
		s->off_now + (int64_t)(rnd(s) % (uint64_t)(2 *
			(s->o.offcpu_gap_ns > 0 ? s->o.offcpu_gap_ns : 200000)));
	v[GR_offcpu_ts] = s->off_now;
	v[GR_offcpu_pid] = p->pid;
	v[GR_offcpu_tid] = worker ? p->pid + 1 + (int64_t)(seq % 4) : p->tid;
	v[GR_offcpu_comm] = worker ? s->comm_worker : p->comm;
	v[GR_offcpu_dur] = dur;
	v[GR_offcpu_state] = seq % 7 == 3 ? s->state_d : s->state_s;
	v[GR_offcpu_waker_pid] = p->pid;
	v[GR_offcpu_waker_tid] = p->pid + 1;
	v[GR_offcpu_stack] = s->stacks[worker ? 3 + seq % 3 : seq % 3];
	*nullmask = 0;
	if (seq % 5 == 0)
		*nullmask |= 1ull << GR_offcpu_waker_pid |
			     1ull << GR_offcpu_waker_tid;
	if (dur < 1000000)
		*nullmask |= 1ull << GR_offcpu_stack;
}

void gr_synth__next_block_io(struct gr_synth *s, int64_t *v,
			     uint64_t *nullmask)
{
	uint64_t seq = s->seq++;
	const struct proc *p = &s->p[seq % (uint64_t)s->o.nprocs];
	int write = seq % 4 == 0;
	int64_t bytes = write ? 1 << 20 : 4096 << (rnd(s) % 6);
	s->io_now = s->o.interval_ns ?
		s->o.start_ns + (int64_t)seq * s->o.interval_ns :
		s->io_now + (int64_t)(rnd(s) % 300000);
	v[GR_block_io_ts] = s->io_now;
	v[GR_block_io_pid] = p->pid + 1;
	v[GR_block_io_tid] = p->pid + 1;
	v[GR_block_io_comm] = s->comm_worker;
	v[GR_block_io_dur] = s->o.interval_ns ? 100000 :
			     50000 + (int64_t)(rnd(s) % 900000);
	v[GR_block_io_dev] = s->dev[seq % 8 == 0];
	v[GR_block_io_disk] = s->disk[seq % 8 == 0];
	v[GR_block_io_op] = write ? s->op_w : s->op_r;
	v[GR_block_io_bytes] = bytes;
	v[GR_block_io_sector] = s->io_sector;
	s->io_sector += bytes / 512 + (int64_t)(rnd(s) % 64) * 8;
	*nullmask = 0;
	/* Writeback and readahead: requests no process issued. */
	if (seq % 8 == 7)
		*nullmask = 1ull << GR_block_io_pid | 1ull << GR_block_io_tid |
			    1ull << GR_block_io_comm;
}

void gr_synth__next_file_io(struct gr_synth *s, int64_t *v, uint64_t *nullmask)
{
	uint64_t seq = s->seq++;
	const struct proc *p = &s->p[seq % (uint64_t)s->o.nprocs];
	int call = (int)(seq / (uint64_t)s->o.nprocs % 3);
	int64_t fd = 3 + (int64_t)(seq % 5);

	s->file_now = s->o.interval_ns ?
		s->o.start_ns + (int64_t)seq * s->o.interval_ns :
		s->file_now + 60000 + (int64_t)(rnd(s) % 200000);
	v[GR_file_io_ts] = s->file_now;
	v[GR_file_io_pid] = p->pid;
	v[GR_file_io_tid] = p->pid + 1 + (int64_t)(seq % 2);
	v[GR_file_io_comm] = s->comm_worker;
	v[GR_file_io_dur] = s->o.interval_ns ? 20000 :
			    1000 + (int64_t)(rnd(s) % 50000);
	v[GR_file_io_syscall] = s->sys[call];
	v[GR_file_io_fd] = fd;
	v[GR_file_io_bytes] = call == 0 ? fd : call == 1 ? 4096 : 512;
	v[GR_file_io_path] = s->paths[seq % 7];
	*nullmask = call == 0 ? 0 : 1ull << GR_file_io_path;
}

/* Drops as gpurecd writes them (no pid, tid or comm): source i % 3 of
 * drop_sources, count 1 + i % 4, so tests can sum them by arithmetic. */
static const char *const drop_sources[] = { "cuda:ringbuf", "cuda:depth",
					    "cuda:store" };

void gr_synth__next_drops(struct gr_synth *s, int64_t *v, uint64_t *nullmask)
{
	uint64_t seq = s->drop_seq++;
	int src = (int)(seq % 3);
	if (!s->drop_src[src])
		s->drop_src[src] = intern(s, drop_sources[src]);
	v[GR_drops_ts] = s->o.start_ns + (int64_t)seq *
			 (s->o.interval_ns ? s->o.interval_ns : 1000000000);
	v[GR_drops_pid] = v[GR_drops_tid] = v[GR_drops_comm] = 0;
	v[GR_drops_source] = s->drop_src[src];
	v[GR_drops_count] = 1 + (int64_t)(seq % 4);
	*nullmask = 1ull << GR_drops_pid | 1ull << GR_drops_tid |
		    1ull << GR_drops_comm;
}

int64_t gr_synth__nccl_rows(struct gr_synth *s)
{
	if (!s->nccl && !(s->nccl = gr_nccl_job__new(s, &s->o)))
		return -errno;
	return (int64_t)gr_nccl_job__rows(s->nccl);
}

int64_t gr_synth__last_ts(const struct gr_synth *s)
{
	return s->last_ts;
}

int gr_synth__write_gpu_until(struct gr_synth *s, int64_t end,
			      uint64_t flush_every)
{
	int64_t v[GR_MAX_COLS];
	uint64_t nm, i = 0;
	int t, err;
	if (!s->gpu)
		return -EINVAL;
	while (gr_gpu_synth__peek_ts(s->gpu) <= end) {
		gr_gpu_synth__next(s->gpu, &t, v, &nm);
		if ((err = gr_writer__append(s->w, t, v, nm)))
			return err;
		if (flush_every && ++i % flush_every == 0 &&
		    (err = gr_writer__flush(s->w)))
			return err;
	}
	return 0;
}

/* n rows of table gpu, with the gpu_process and gpu_event rows among
 * them. */
static int write_gpu(struct gr_synth *s, uint64_t n, uint64_t flush_every)
{
	int64_t v[GR_MAX_COLS];
	uint64_t nm, all = 0;
	int t, err;
	if (!s->gpu)
		return -EINVAL;
	int64_t last = 0;
	for (uint64_t i = 0; i < n;) {
		gr_gpu_synth__next(s->gpu, &t, v, &nm);
		if ((err = gr_writer__append(s->w, t, v, nm)))
			return err;
		if (t == GR_T_gpu) {
			i++;
			last = v[GR_EV_ts];
		}
		if (flush_every && ++all % flush_every == 0 &&
		    (err = gr_writer__flush(s->w)))
			return err;
	}
	/* The last gpu row's process and events at its ts. */
	return gr_synth__write_gpu_until(s, last, 0);
}

int gr_synth__write(struct gr_synth *s, int t, uint64_t n, uint64_t flush_every)
{
	int64_t v[GR_MAX_COLS];
	uint64_t nm;
	int err;
	if (t == GR_T_nccl && gr_synth__nccl_rows(s) < 0)
		return -errno;
	if (t == GR_T_gpu)
		return write_gpu(s, n, flush_every);
	for (uint64_t i = 0; i < n; i++) {
		if (t == GR_T_nccl) {
			if ((err = gr_nccl_job__next(s->nccl, v, &nm)) <= 0)
				return err;
		} else if (t == GR_T_cuda_kernel)
			gr_synth__next_launch(s, v, &nm);
		else if (t == GR_T_offcpu)
			gr_synth__next_offcpu(s, v, &nm);
		else if (t == GR_T_block_io)
			gr_synth__next_block_io(s, v, &nm);
		else if (t == GR_T_file_io)
			gr_synth__next_file_io(s, v, &nm);
		else if (t == GR_T_drops)
			gr_synth__next_drops(s, v, &nm);
		else
			return -EINVAL;
		if ((err = gr_writer__append(s->w, t, v, nm)))
			return err;
		if (v[GR_EV_ts] > s->last_ts)
			s->last_ts = v[GR_EV_ts];
		if (t == GR_T_cuda_kernel && s->o.memcpy_every &&
		    s->seq % (uint64_t)s->o.memcpy_every == 0) {
			gr_synth__next_memcpy(s, v, &nm);
			if ((err = gr_writer__append(s->w, GR_T_cuda_memcpy, v,
						     nm)))
				return err;
			if (v[GR_EV_ts] > s->last_ts)
				s->last_ts = v[GR_EV_ts];
		}
		if (flush_every && (i + 1) % flush_every == 0 &&
		    (err = gr_writer__flush(s->w)))
			return err;
	}
	return 0;
}
