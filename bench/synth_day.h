/* synth_day.h - a busy day of one 8-GPU training host, every table at
 * once (issue 20), for the every-report benchmark (bench/busyday.sh).
 *
 * Streams, at these rates for the day's length (seconds):
 *   cuda_kernel   the launch stream of synth.h (nprocs processes, one a
 *                 GPU, at o->rate launches/s, written in time order)
 *   cuda_memcpy   a copy after every 100th launch (synth.h)
 *   cuda_sync     a cudaStreamSynchronize after every 200th launch, by the
 *                 same thread, on its first stream
 *   nccl          the job of synth_nccl.h: one world communicator over
 *                 hosts x nprocs ranks, this host's nprocs from
 *                 host_index x nprocs, an iteration every 30 ms (six
 *                 collectives: 200/s); its straggler, if any, is the
 *                 job's (o->nccl.late_*)
 *   offcpu        2,000/s: every one with a folded stack (DAY_STACKS of
 *                 them), state S or D, a waker most of the time
 *   runq          20,000/s: 2-60 us, one in 50 up to 5 ms
 *   file_io       1,000/s: data loader reads, checkpoint writes, opens
 *                 (with a path), fsyncs
 *   block_io      500/s: reads of 4-128 KiB, 1 MiB writes, one in eight
 *                 issued by no process (writeback)
 *   process       a row per launching process at the start and every
 *                 hour after; helper processes (nvidia-smi, sh -c, data
 *                 loader workers), 2 a second, each a row as it starts
 *                 and one as it exits, 50-350 ms later
 *   gpu, gpu_process, gpu_event   synth_gpu.h's, one sample a second
 *
 * Every stream but the launches (and what follows them) is slotted: the
 * i-th event lies in [start + i * period, start + (i + 1) * period), so a
 * day of S seconds holds exactly S times its rate (tests/cli/busyday.sh
 * counts them).  The launches are synth.h's jittered stream written while
 * their ts is before the day's end.
 *
 * Every stream draws from its own generator seeded from o->seed, and the
 * NCCL job from job_seed alone: hosts made with different seeds (for
 * gpurec-synth, different --host names) differ in everything but the job,
 * whose collectives agree on every host. */
#ifndef GR_SYNTH_DAY_H
#define GR_SYNTH_DAY_H

#include <stdint.h>

#include "bench/synth.h"

struct gr_day_opts {
	int64_t seconds;      /* the day's length */
	int hosts;            /* hosts of the job (1) */
	int host_index;       /* this host's, 0 .. hosts-1 */
	uint64_t job_seed;    /* the NCCL job's seed, the same on every host */
	uint64_t flush_every; /* flush every this many events (0: never) */
};

/* Rows per table a day of d writes for the slotted streams (indexed by
 * GR_T_*; the launch-driven tables and the gpu family are 0: their counts
 * follow the seed). */
void gr_day__slotted_rows(const struct gr_day_opts *d, uint64_t *rows);

/* The options of a busy day: s's generator must be made from them (its
 * launch rate, processes, copies and GPUs).  nccl options already set
 * (the straggler) are kept. */
void gr_day__synth_opts(const struct gr_day_opts *d, struct gr_synth_opts *o);

/* Writes the whole day through s's writer; o: the options s was made
 * with.  Returns 0 or -errno (EINVAL: an NCCL job that cannot run). */
int gr_day__write(struct gr_synth *s, struct gr_writer *w,
		  const struct gr_synth_opts *o, const struct gr_day_opts *d);

#endif
