/* synth.h - a synthetic event source for tests and benchmarks.
 *
 * It writes through the same gr_writer API gpurecd uses.  It is a test
 * tool, never a mode of the recorder: nothing it writes pretends to be a
 * recording of a real process (its host name defaults to "synthetic").
 *
 * The launch stream models a training job: a few processes, each with a
 * launching thread that repeats one "step" (a fixed sequence of a few
 * hundred launches drawn from ~300 kernels with their own grid, block,
 * shared memory and stream) with jittered gaps and call durations.  With
 * interval_ns set, timestamps are exact (start + i * interval) and
 * durations fixed, so tests can compute expected answers by arithmetic.
 *
 * The NCCL stream (table nccl) models a multi-rank training job instead:
 * bench/synth_nccl.h describes it.
 */
#ifndef GR_SYNTH_H
#define GR_SYNTH_H

#include <stdint.h>

#include "store/store.h"

struct gr_synth_opts {
	uint64_t seed;
	int64_t start_ns;     /* first event's ts */
	int64_t interval_ns;  /* >0: exact spacing, no jitter */
	int nprocs;           /* launching processes (default 4) */
	int nkernels;         /* distinct kernels (default 300) */
	int step_len;         /* launches per step (default 400) */
	double rate;          /* >0: launches per second, all processes */
	int memcpy_every;     /* >0: a copy after every Nth launch */
	int64_t offcpu_gap_ns; /* >0: mean ns between off-CPU intervals'
				  starts (default 200 us: 5,000/s) */
	int gpus;             /* >0: the gpu family (bench/synth_gpu.h) with
				 this many GPUs; launching process g < gpus
				 stalls while GPU g hangs */
	struct gr_synth_nccl {  /* the NCCL job; zeros take the defaults */
		int ranks;            /* ranks in the job (8) */
		int rank_lo;          /* first rank whose rows this host has */
		int host_ranks;       /* ranks from rank_lo on (0: all) */
		int iters;            /* training iterations (100) */
		int64_t step_ns;      /* iteration time, no rank late (1 s) */
		int64_t jitter_ns;    /* arrival spread of on-time ranks
					 (200 us; <0: none) */
		int late_rank;        /* with late_ns: the straggler */
		int64_t late_ns;      /* >0: it enters this long after the
					 first rank */
		int late_every;       /* every Kth collective, seq % K == 0 */
		int async;            /* dur is the enqueue, not the wait */
	} nccl;
};

struct gr_synth;

/* Returns a source writing into w, or NULL with errno set. */
struct gr_synth *gr_synth__new(struct gr_writer *w,
			       const struct gr_synth_opts *o);
void gr_synth__free(struct gr_synth *s);

/* Fills vals (indexed by GR_cuda_kernel_*) with the next launch, without
 * writing it: the benchmark's baseline stores the same events. */
void gr_synth__next_launch(struct gr_synth *s, int64_t *vals,
			   uint64_t *nullmask);
/* The same for the off-CPU and block I/O streams (every 8th request
 * issued by no process), file I/O (paths with quotes, backslashes,
 * control characters, UTF-8 and ill-formed UTF-8) and drops. */
void gr_synth__next_offcpu(struct gr_synth *s, int64_t *vals,
			   uint64_t *nullmask);
void gr_synth__next_block_io(struct gr_synth *s, int64_t *vals,
			     uint64_t *nullmask);
/* Drops: source "cuda:ringbuf", "cuda:depth", "cuda:store" in turn, count
 * 1 + i % 4 for the i-th, one per interval_ns (else per second). */
void gr_synth__next_file_io(struct gr_synth *s, int64_t *vals,
			    uint64_t *nullmask);
void gr_synth__next_drops(struct gr_synth *s, int64_t *vals,
			  uint64_t *nullmask);

/* The string of an id gr_synth__next_* put in vals. */
const char *gr_synth__str(const struct gr_synth *s, int64_t id);

/* Fills vals (GR_cuda_memcpy_*) with a copy by the process of the last
 * launch, just after it. */
void gr_synth__next_memcpy(struct gr_synth *s, int64_t *vals,
			   uint64_t *nullmask);

/* Interns str in the writer's dictionary (or the writer-less numbering).
 * Returns its id, or -1 out of memory. */
int64_t gr_synth__intern(struct gr_synth *s, const char *str);

/* Rows the NCCL job writes in all (this host's ranks), or -errno
 * (EINVAL: options gr_nccl_job__invalid refuses). */
int64_t gr_synth__nccl_rows(struct gr_synth *s);

/* The latest ts appended so far by the streams other than the gpu
 * family (0: none). */
int64_t gr_synth__last_ts(const struct gr_synth *s);

/* Appends the gpu family's rows (gpu, gpu_process, gpu_event) up to ts
 * end, flushing every flush_every rows (0: never).  Returns 0 or -errno
 * (EINVAL: no gpus). */
int gr_synth__write_gpu_until(struct gr_synth *s, int64_t end,
			      uint64_t flush_every);

/* Appends n events of table t (cuda_kernel, offcpu, block_io, file_io,
 * drops, nccl or gpu: n gpu rows, their gpu_process and gpu_event rows
 * not counted) through the writer, calling gr_writer__flush every
 * flush_every events (0: never); with memcpy_every, cuda_kernel's launches
 * are followed by copies (not counted in n).  nccl stops early where the
 * job ends.  Returns 0 or -errno. */
int gr_synth__write(struct gr_synth *s, int t, uint64_t n,
		    uint64_t flush_every);

#endif
