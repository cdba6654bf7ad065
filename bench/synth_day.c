/* synth_day.c - a busy day of one training host, every table at once (see
 * synth_day.h for the model).
 *
 * The day is written a second at a time: each stream appends its events
 * whose ts falls in that second, so the writer's blocks and per-minute
 * summaries see every table advance together, as they do under gpurecd.
 * The slotted streams cost one or two draws per event; the launches cost
 * what synth.c's do, and dominate. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench/synth_day.h"
#include "bench/synth_gpu.h"
#include "bench/synth_nccl.h"

#define NS 1000000000ll
#define MS 1000000ll
#define US 1000ll

#define DAY_PROCS 8             /* ranks (GPUs) of this host */
#define DAY_STEP_NS (30 * MS)   /* an NCCL iteration: 6 collectives */
#define DAY_COPY_EVERY 100
#define DAY_SYNC_EVERY 200
#define DAY_STACKS 24
#define DAY_CPUS 128
#define DAY_SNAPSHOT_NS (3600 * NS)

/* The slotted streams, their period (ns; each divides a second). */
enum { S_OFFCPU, S_RUNQ, S_FILE, S_BLOCK, S_HELPER, NSLOTTED };
static const int64_t period[NSLOTTED] = {
	[S_OFFCPU] = 500 * US, [S_RUNQ] = 50 * US, [S_FILE] = 1 * MS,
	[S_BLOCK] = 2 * MS, [S_HELPER] = 500 * MS,
};
static const int table_of[NSLOTTED] = {
	[S_OFFCPU] = GR_T_offcpu, [S_RUNQ] = GR_T_runq,
	[S_FILE] = GR_T_file_io, [S_BLOCK] = GR_T_block_io,
	[S_HELPER] = GR_T_process,
};

struct day {
	struct gr_synth *s;
	struct gr_writer *w;
	const struct gr_synth_opts *o;
	const struct gr_day_opts *d;
	uint64_t rng;
	uint64_t appended;               /* since the last flush */
	uint64_t slot[NSLOTTED];         /* next index per stream */
	uint64_t launches;
	/* dictionary ids */
	int64_t comm_main, comm_worker, comm_pin, state_s, state_d;
	int64_t stacks[DAY_STACKS];
	int64_t sys[5], paths[8], dev[2], disk[2], op_r, op_w;
	int64_t api_sync;
	int64_t helper_exe[3], helper_cmd[3], helper_comm[3], main_exe,
		main_cmd, cgroup, container, pod;
	int64_t io_sector;
};

/* xorshift64*, its own stream: adding this file changed no other
 * stream's draws. */
static uint64_t rnd(struct day *y)
{
	y->rng ^= y->rng >> 12;
	y->rng ^= y->rng << 25;
	y->rng ^= y->rng >> 27;
	return y->rng * 2685821657736338717ull;
}

static int64_t pid_of(int r)
{
	return GR_GPU_SYNTH_PID(r);
}

void gr_day__synth_opts(const struct gr_day_opts *d, struct gr_synth_opts *o)
{
	o->nprocs = DAY_PROCS;
	if (o->rate <= 0)
		o->rate = 30000;
	o->memcpy_every = DAY_COPY_EVERY;
	o->gpus = DAY_PROCS;
	o->interval_ns = 0;
	o->nccl.ranks = DAY_PROCS * (d->hosts > 0 ? d->hosts : 1);
	o->nccl.rank_lo = DAY_PROCS * d->host_index;
	o->nccl.host_ranks = DAY_PROCS;
	o->nccl.step_ns = DAY_STEP_NS;
	/* Init, broadcast and destroy take under 0.4 s; the iterations
	 * fill the rest of the day but its last second, a straggler
	 * stretching each by its lateness in the collectives it is late
	 * to (synth_nccl.h). */
	int64_t step = DAY_STEP_NS;
	if (o->nccl.late_ns > 0)
		step += 6 * o->nccl.late_ns /
			(o->nccl.late_every > 0 ? o->nccl.late_every : 1);
	int64_t iters = (d->seconds * NS - NS) / step;
	o->nccl.iters = iters > 0 ? (int)iters : 1;
}

void gr_day__slotted_rows(const struct gr_day_opts *d, uint64_t *rows)
{
	for (int i = 0; i < NSLOTTED; i++)
		rows[table_of[i]] = (uint64_t)(d->seconds * NS / period[i]);
	/* A helper is two rows; the launching processes' snapshots one each
	 * an hour. */
	rows[GR_T_process] = 2 * rows[GR_T_process] + DAY_PROCS *
		(uint64_t)((d->seconds * NS + DAY_SNAPSHOT_NS - 1) /
			   DAY_SNAPSHOT_NS);
}

static int append(struct day *y, int t, const int64_t *v, uint64_t nm)
{
	int err = gr_writer__append(y->w, t, v, nm);
	if (err)
		return err;
	if (y->d->flush_every && ++y->appended >= y->d->flush_every) {
		y->appended = 0;
		return gr_writer__flush(y->w);
	}
	return 0;
}

static int intern_all(struct day *y)
{
	static const char *const frames[DAY_STACKS] = {
		"torch::autograd::THPVariable_item;cudaStreamSynchronize;"
		"ioctl;entry_SYSCALL_64;__x64_sys_ioctl;nvidia_ioctl",
		"time_sleep;clock_nanosleep;entry_SYSCALL_64;"
		"__x64_sys_clock_nanosleep;hrtimer_nanosleep;do_nanosleep",
		"_queue_get;PyThread_acquire_lock_timed;futex_wait;"
		"entry_SYSCALL_64;__x64_sys_futex;futex_wait_queue",
		"cuda_runtime_wait;pthread_cond_wait;futex_wait;"
		"entry_SYSCALL_64;__x64_sys_futex",
		"ncclGroupEnd;ncclProxyProgress;poll;entry_SYSCALL_64;"
		"do_sys_poll;poll_schedule_timeout",
		"c10d::ProcessGroupNCCL::WorkNCCL::wait;pthread_cond_timedwait;"
		"futex_wait;entry_SYSCALL_64;__x64_sys_futex",
		"torch.save;write;entry_SYSCALL_64;ksys_write;ext4_buffered_"
		"write_iter;balance_dirty_pages",
		"torch.save;fsync;entry_SYSCALL_64;do_fsync;"
		"file_write_and_wait_range;wait_on_page_writeback;io_schedule",
		"cudaMalloc;ioctl;entry_SYSCALL_64;nvidia_ioctl;"
		"os_acquire_mutex;mutex_lock",
		"PyGC_Collect;madvise;entry_SYSCALL_64;do_madvise;"
		"rwsem_down_write_slowpath",
		"page_fault;exc_page_fault;do_user_addr_fault;handle_mm_fault;"
		"filemap_fault;folio_wait_bit_common;io_schedule",
		"tokenizer;read;entry_SYSCALL_64;ksys_read;pipe_read",
	};
	static const char *const worker[DAY_STACKS / 2] = {
		"read;entry_SYSCALL_64;ksys_read;ext4_file_read_iter;"
		"filemap_read;folio_wait_bit_common;io_schedule",
		"epoll_wait;entry_SYSCALL_64;do_epoll_wait;"
		"schedule_hrtimeout_range",
		"pread64;entry_SYSCALL_64;ksys_pread64;xfs_file_read_iter;"
		"iomap_dio_rw;io_schedule",
		"recvfrom;entry_SYSCALL_64;__sys_recvfrom;tcp_recvmsg;"
		"sk_wait_data",
		"PIL.Image.decode;read;entry_SYSCALL_64;ksys_read;"
		"nfs_file_read;rpc_wait_bit_killable",
		"_multiprocessing.SemLock.acquire;sem_timedwait;futex_wait;"
		"entry_SYSCALL_64;__x64_sys_futex",
		"pin_memory_loop;_queue_get;futex_wait;entry_SYSCALL_64",
		"pin_memory_loop;cudaHostAlloc;ioctl;entry_SYSCALL_64;"
		"nvidia_ioctl;mutex_lock",
		"mmap;entry_SYSCALL_64;vm_mmap_pgoff;down_write_killable;"
		"rwsem_down_write_slowpath",
		"openat;entry_SYSCALL_64;do_sys_openat2;path_openat;"
		"lookup_slow;d_alloc_parallel",
		"write;entry_SYSCALL_64;ksys_write;pipe_write;"
		"pipe_wait_writable",
		"close;entry_SYSCALL_64;__x64_sys_close;nfs_file_flush;"
		"nfs_wb_all;io_schedule",
	};
	static const char *const paths[8] = {
		"/data/shards/train-00017.tar", "/data/shards/train-00342.tar",
		"/data/shards/train-01288.tar", "/data/shards/val-00003.tar",
		"/ckpt/run-42/model_rank.pt", "/ckpt/run-42/optim_rank.pt",
		"/proc/self/status", "/dev/shm/torch_18342_0",
	};
	static const char *const sys[5] = { "read", "pread64", "write",
					    "openat", "fsync" };
	static const char *const hexe[3] = { "/usr/bin/nvidia-smi", "/bin/sh",
					     "/usr/bin/python3" };
	static const char *const hcmd[3] = {
		"nvidia-smi --query-gpu=utilization.gpu --format=csv",
		"sh -c df -h /ckpt",
		"python3 -m torch.utils.data._utils.worker",
	};
	static const char *const hcomm[3] = { "nvidia-smi", "sh",
					      "pt_data_worker" };
	char buf[512];
	struct gr_synth *s = y->s;

	for (int i = 0; i < DAY_STACKS; i++) {
		snprintf(buf, sizeof(buf), "%s;%s;schedule",
			 i < DAY_STACKS / 2 ? "python3;_PyEval_EvalFrameDefault"
					    : "pt_data_worker",
			 i < DAY_STACKS / 2 ? frames[i] :
					      worker[i - DAY_STACKS / 2]);
		y->stacks[i] = gr_synth__intern(s, buf);
	}
	for (int i = 0; i < 8; i++)
		y->paths[i] = gr_synth__intern(s, paths[i]);
	for (int i = 0; i < 5; i++)
		y->sys[i] = gr_synth__intern(s, sys[i]);
	for (int i = 0; i < 3; i++) {
		y->helper_exe[i] = gr_synth__intern(s, hexe[i]);
		y->helper_cmd[i] = gr_synth__intern(s, hcmd[i]);
		y->helper_comm[i] = gr_synth__intern(s, hcomm[i]);
	}
	y->comm_main = gr_synth__intern(s, "python3");
	y->comm_worker = gr_synth__intern(s, "pt_data_worker");
	y->comm_pin = gr_synth__intern(s, "pt_pin_memory");
	y->state_s = gr_synth__intern(s, "S");
	y->state_d = gr_synth__intern(s, "D");
	y->dev[0] = gr_synth__intern(s, "259:0");
	y->dev[1] = gr_synth__intern(s, "259:1");
	y->disk[0] = gr_synth__intern(s, "nvme0n1");
	y->disk[1] = gr_synth__intern(s, "nvme1n1");
	y->op_r = gr_synth__intern(s, "R");
	y->op_w = gr_synth__intern(s, "W");
	y->api_sync = gr_synth__intern(s, "cudaStreamSynchronize");
	y->main_exe = gr_synth__intern(s, "/usr/bin/python3.11");
	y->main_cmd = gr_synth__intern(s, "python3 -m torch.distributed.run "
				       "--nproc-per-node 8 train.py "
				       "--config llama-70b.yaml");
	y->cgroup = gr_synth__intern(s, "/kubepods.slice/kubepods-pod7f3e"
				     "9c1a_5b2d_4e8f_a0c1_93d2e6b4f718.slice/"
				     "cri-containerd-4b1f0e2d9c8a.scope");
	y->container = gr_synth__intern(s, "4b1f0e2d9c8a");
	y->pod = gr_synth__intern(s, "7f3e9c1a-5b2d-4e8f-a0c1-93d2e6b4f718");
	y->io_sector = 2048;
	for (int i = 0; i < DAY_STACKS; i++)
		if (y->stacks[i] < 0)
			return -ENOMEM;
	return y->pod < 0 || y->api_sync < 0 ? -ENOMEM : 0;
}

/* The i-th event of a slotted stream: a ts in its slot, its row. */
static void offcpu_row(struct day *y, uint64_t i, int64_t ts, int64_t *v,
		       uint64_t *nm)
{
	uint64_t r = rnd(y);
	int rank = (int)(r % DAY_PROCS), worker = r >> 8 & 1;
	int st = (int)((r >> 9) % (DAY_STACKS / 2));
	int64_t pid = pid_of(rank);
	/* Mostly short waits; one in 16 a long one (a sync, a checkpoint). */
	int64_t dur = (r >> 16 & 15) ? 20 * US + (int64_t)(r >> 20) % (3 * MS)
				     : 5 * MS + (int64_t)(r >> 20) % (400 * MS);
	v[GR_offcpu_ts] = ts;
	v[GR_offcpu_pid] = pid;
	v[GR_offcpu_tid] = worker ? pid + 1 + (int64_t)(r >> 40 & 3) : pid;
	v[GR_offcpu_comm] = worker ? y->comm_worker : y->comm_main;
	v[GR_offcpu_dur] = dur;
	v[GR_offcpu_state] = (r >> 44 & 7) == 0 ? y->state_d : y->state_s;
	v[GR_offcpu_waker_pid] = pid;
	v[GR_offcpu_waker_tid] = worker ? pid : pid + 1;
	v[GR_offcpu_stack] = y->stacks[worker * (DAY_STACKS / 2) +
				       st % (DAY_STACKS / 2)];
	/* Sleeps end on a timer: no waker. */
	*nm = i % 5 == 0 ? 1ull << GR_offcpu_waker_pid |
			   1ull << GR_offcpu_waker_tid : 0;
}

static void runq_row(struct day *y, int64_t ts, int64_t *v, uint64_t *nm)
{
	uint64_t r = rnd(y);
	int rank = (int)(r % DAY_PROCS);
	int64_t pid = pid_of(rank);
	v[GR_runq_ts] = ts;
	v[GR_runq_pid] = pid;
	v[GR_runq_tid] = pid + (int64_t)(r >> 8 & 7);
	v[GR_runq_comm] = (r >> 8 & 7) ? y->comm_worker : y->comm_main;
	v[GR_runq_dur] = (r >> 12) % 50 ?
		2 * US + (int64_t)(r >> 20) % (58 * US) :
		60 * US + (int64_t)(r >> 20) % (5 * MS);
	v[GR_runq_cpu] = (int64_t)(r >> 50) % DAY_CPUS;
	*nm = 0;
}

static void file_row(struct day *y, uint64_t i, int64_t ts, int64_t *v,
		     uint64_t *nm)
{
	uint64_t r = rnd(y);
	int rank = (int)(r % DAY_PROCS);
	/* 80 % reads, then writes, opens, fsyncs. */
	int k = (int)(i % 20), call = k < 12 ? 0 : k < 16 ? 1 : k < 18 ? 2 :
				      k < 19 ? 3 : 4;
	int64_t pid = pid_of(rank);
	v[GR_file_io_ts] = ts;
	v[GR_file_io_pid] = pid;
	v[GR_file_io_tid] = call == 2 || call == 4 ? pid : pid + 1 +
			    (int64_t)(r >> 8 & 3);
	v[GR_file_io_comm] = call == 2 || call == 4 ? y->comm_main :
						     y->comm_worker;
	v[GR_file_io_dur] = call == 4 ?
		2 * MS + (int64_t)(r >> 16) % (40 * MS) :
		2 * US + (int64_t)(r >> 16) % (300 * US);
	v[GR_file_io_syscall] = y->sys[call];
	v[GR_file_io_fd] = 10 + (int64_t)(r >> 40 & 31);
	v[GR_file_io_bytes] = call == 3 ? v[GR_file_io_fd] : call == 4 ? 0 :
			      (int64_t)4096 << (r >> 45 & 7);
	v[GR_file_io_path] = y->paths[(r >> 48) % 8];
	*nm = call == 3 ? 0 : 1ull << GR_file_io_path;
}

static void block_row(struct day *y, uint64_t i, int64_t ts, int64_t *v,
		      uint64_t *nm)
{
	uint64_t r = rnd(y);
	int write = i % 4 == 0;
	int64_t bytes = write ? 1 << 20 : 4096 << (r % 6);
	int64_t pid = pid_of((int)(r >> 8) % DAY_PROCS) + 1;
	v[GR_block_io_ts] = ts;
	v[GR_block_io_pid] = pid;
	v[GR_block_io_tid] = pid;
	v[GR_block_io_comm] = y->comm_worker;
	v[GR_block_io_dur] = 40 * US + (int64_t)(r >> 16) % (write ? 4 * MS :
							     900 * US);
	v[GR_block_io_dev] = y->dev[i % 8 == 0];
	v[GR_block_io_disk] = y->disk[i % 8 == 0];
	v[GR_block_io_op] = write ? y->op_w : y->op_r;
	v[GR_block_io_bytes] = bytes;
	v[GR_block_io_sector] = y->io_sector;
	y->io_sector += bytes / 512 + (int64_t)(r >> 40 & 63) * 8;
	/* Writeback and readahead: requests no process issued. */
	*nm = i % 8 == 7 ? 1ull << GR_block_io_pid | 1ull << GR_block_io_tid |
			   1ull << GR_block_io_comm : 0;
}

static void process_row(struct day *y, int64_t ts, int64_t pid, int64_t ppid,
			int64_t comm, int64_t exe, int64_t cmd, int64_t start,
			int64_t *v, uint64_t *nm)
{
	v[GR_process_ts] = ts;
	v[GR_process_pid] = pid;
	v[GR_process_tid] = pid;
	v[GR_process_comm] = comm;
	v[GR_process_ppid] = ppid;
	v[GR_process_exe] = exe;
	v[GR_process_cmdline] = cmd;
	v[GR_process_cgroup] = y->cgroup;
	v[GR_process_container_id] = y->container;
	v[GR_process_pod_uid] = y->pod;
	v[GR_process_start_ts] = start;
	*nm = 1ull << GR_process_exit_ts | 1ull << GR_process_exit_code;
}

/* A helper: a row as it starts, one as it exits 50-350 ms later (inside
 * its 500 ms slot). */
static int helper(struct day *y, uint64_t i, int64_t ts)
{
	int64_t v[GR_MAX_COLS];
	uint64_t nm, r = rnd(y);
	int k = (int)(r % 3);
	int64_t pid = 200000 + (int64_t)i;
	int err;
	process_row(y, ts, pid, pid_of((int)(i % DAY_PROCS)), y->helper_comm[k],
		    y->helper_exe[k], y->helper_cmd[k], ts, v, &nm);
	if ((err = append(y, GR_T_process, v, nm)))
		return err;
	v[GR_process_ts] = ts + 50 * MS + (int64_t)(r >> 8) % (300 * MS);
	v[GR_process_exit_ts] = v[GR_process_ts];
	v[GR_process_exit_code] = (r >> 40) % 40 ? 0 : 256;
	nm = 0;
	return append(y, GR_T_process, v, nm);
}

/* The slotted streams' events of [.., end). */
static int slotted_until(struct day *y, int64_t end)
{
	int64_t v[GR_MAX_COLS];
	uint64_t nm;
	int err;
	for (int k = 0; k < NSLOTTED; k++) {
		for (;;) {
			uint64_t i = y->slot[k];
			int64_t at = y->o->start_ns + (int64_t)i * period[k];
			if (at >= end)
				break;
			/* A helper starts in its slot's first 100 ms, so
			 * that it exits inside the slot. */
			uint64_t span = (uint64_t)(k == S_HELPER ? 100 * MS :
							   period[k]);
			int64_t ts = at + (int64_t)(rnd(y) % span);
			y->slot[k]++;
			switch (k) {
			case S_OFFCPU: offcpu_row(y, i, ts, v, &nm); break;
			case S_RUNQ: runq_row(y, ts, v, &nm); break;
			case S_FILE: file_row(y, i, ts, v, &nm); break;
			case S_BLOCK: block_row(y, i, ts, v, &nm); break;
			default:
				if ((err = helper(y, i, ts)))
					return err;
				continue;
			}
			if ((err = append(y, table_of[k], v, nm)))
				return err;
		}
	}
	return 0;
}

/* The launching processes' snapshot rows, as at first sight and per new
 * segment. */
static int snapshot(struct day *y, int64_t ts)
{
	int64_t v[GR_MAX_COLS];
	uint64_t nm;
	int err;
	for (int r = 0; r < DAY_PROCS; r++) {
		process_row(y, ts, pid_of(r), 40990, y->comm_main, y->main_exe,
			    y->main_cmd, y->o->start_ns - 600 * NS, v, &nm);
		if ((err = append(y, GR_T_process, v, nm)))
			return err;
	}
	return 0;
}

/* Launches (with their copies and syncs) whose ts is before end; *held
 * keeps the first one at or after it for the next second. */
static int launches_until(struct day *y, int64_t end, int64_t *held,
			  uint64_t *held_nm, int *have)
{
	int64_t v[GR_MAX_COLS];
	uint64_t nm;
	int err;
	for (;;) {
		if (!*have) {
			gr_synth__next_launch(y->s, held, held_nm);
			*have = 1;
		}
		if (held[GR_EV_ts] >= end)
			return 0;
		*have = 0;
		if ((err = append(y, GR_T_cuda_kernel, held, *held_nm)))
			return err;
		y->launches++;
		if (y->launches % DAY_COPY_EVERY == 0) {
			gr_synth__next_memcpy(y->s, v, &nm);
			if ((err = append(y, GR_T_cuda_memcpy, v, nm)))
				return err;
		}
		if (y->launches % DAY_SYNC_EVERY == 0) {
			uint64_t r = rnd(y);
			v[GR_cuda_sync_ts] = held[GR_EV_ts] +
					     held[GR_cuda_kernel_dur] + 500;
			v[GR_cuda_sync_pid] = held[GR_cuda_kernel_pid];
			v[GR_cuda_sync_tid] = held[GR_cuda_kernel_tid];
			v[GR_cuda_sync_comm] = held[GR_cuda_kernel_comm];
			v[GR_cuda_sync_dur] = r % 10 ?
				20 * US + (int64_t)(r >> 8) % (500 * US) :
				1 * MS + (int64_t)(r >> 8) % (20 * MS);
			v[GR_cuda_sync_api] = y->api_sync;
			v[GR_cuda_sync_stream] = held[GR_cuda_kernel_stream];
			v[GR_cuda_sync_ret] = 0;
			if ((err = append(y, GR_T_cuda_sync, v, 0)))
				return err;
		}
	}
}

int gr_day__write(struct gr_synth *s, struct gr_writer *w,
		  const struct gr_synth_opts *o, const struct gr_day_opts *d)
{
	struct day y = { .s = s, .w = w, .o = o, .d = d };
	struct gr_synth_opts jo = *o;
	struct gr_nccl_job *job;
	int64_t held[GR_MAX_COLS], nrow[GR_MAX_COLS];
	uint64_t held_nm = 0, nrow_nm = 0;
	int have = 0, have_nccl = 0, err;

	y.rng = o->seed * 0x9e3779b97f4a7c15ull + 0x627573796461796cull;
	if ((err = intern_all(&y)))
		return err;
	/* The job from its own seed: every host's agrees. */
	jo.seed = d->job_seed;
	if (!(job = gr_nccl_job__new(s, &jo)))
		return -errno;
	for (int64_t sec = 0; sec < d->seconds; sec++) {
		int64_t t = o->start_ns + sec * NS, end = t + NS;
		if ((sec * NS) % DAY_SNAPSHOT_NS == 0 &&
		    (err = snapshot(&y, t)))
			goto out;
		if ((err = launches_until(&y, end, held, &held_nm, &have)))
			goto out;
		if ((err = slotted_until(&y, end)))
			goto out;
		for (;;) {
			if (!have_nccl && !(have_nccl = gr_nccl_job__next(
						    job, nrow, &nrow_nm)))
				break;
			if (nrow[GR_EV_ts] >= end)
				break;
			have_nccl = 0;
			if ((err = append(&y, GR_T_nccl, nrow, nrow_nm)))
				goto out;
		}
		if ((err = gr_synth__write_gpu_until(s, end - 1, 0)))
			goto out;
	}
	err = gr_writer__flush(w);
out:
	gr_nccl_job__free(job);
	return err;
}
