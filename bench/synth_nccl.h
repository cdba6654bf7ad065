/* synth_nccl.h - a synthetic multi-rank NCCL job for the nccl table.
 *
 * Every gpurec-synth run simulates the whole job (all ranks, one world
 * communicator) from the seed alone and writes the rows of its own host's
 * ranks (rank_lo ..), so runs for different hosts with the same seed and
 * job options agree on every collective: the same comm_id, the same seq,
 * the same times.  The host name plays no part.
 *
 * Rank r is process 48100 + 16 r (thread = process, comm pt_main_thread).
 * Its calls, in order:
 *   ncclCommInitRank        arrival start + U[0, 20 ms); it returns for
 *                           every rank 250 ms after the last arrival
 *   ncclBroadcast           32 MiB from root 0, seq 0, 50 ms later
 *   iters iterations of     ncclAllGather 8 MiB (bf16), then a group:
 *                           ncclGroupStart, ncclSend 2 MiB to r+1,
 *                           ncclRecv 2 MiB from r-1, ncclGroupEnd; then
 *                           ncclReduceScatter 8 MiB, ncclAllReduce 25 MiB
 *                           twice, 4.5 MiB, and 4 bytes (the loss, avg):
 *                           six collectives, seq 1 + 6 i + j
 *   ncclCommDestroy         20 ms after the last collective, 1.5 ms long
 *
 * Timing.  The ranks leave each synchronizing call (a collective or the
 * group's ncclGroupEnd) together, at "complete"; the next one is reached
 * after a gap of compute.  With no straggler and no jitter an iteration
 * takes exactly step_ns: the seven gaps share what the transfers leave.
 * A transfer takes 20 us + size / 50 ns (50 GB/s algorithmic bandwidth),
 * size being nccl-tests' (bytes x nranks for AllGather and ReduceScatter).
 * At each synchronizing call the on-time ranks arrive within jitter_ns of
 * each other: the last exactly at the nominal time, the first exactly
 * jitter_ns before it, the others uniformly between.  A late rank (every
 * collective whose seq % late_every == 0) arrives exactly late_ns after
 * the first rank, so its lateness (ts minus the earliest arrival) is
 * late_ns exactly, and it delays "complete" by late_ns - jitter_ns.  With
 * no jitter and a straggler in every collective an iteration therefore
 * takes step_ns + 6 late_ns exactly.
 *
 * dur.  By default a call blocks until the collective completes, so the
 * ranks that wait show it in dur (the late rank's dur is the transfer
 * alone).  With async set the collectives and ncclGroupEnd return after
 * an enqueue of 9 us, as NCCL's default does: the wait happens later,
 * outside the nccl table (in a stream synchronization), and only the
 * arrival times show who was late.  ncclCommInitRank blocks either way.
 * ncclGroupStart, ncclSend and ncclRecv take 1 us, 2 us apart.
 */
#ifndef GR_SYNTH_NCCL_H
#define GR_SYNTH_NCCL_H

#include <stdint.h>

#include "bench/synth.h"

struct gr_nccl_job;

/* NULL if o (defaults applied) describes a job that can run, else why
 * not, as a message naming the gpurec-synth option. */
const char *gr_nccl_job__invalid(const struct gr_synth_nccl *o);

/* Returns the job of s's nccl options, or NULL with errno set (EINVAL:
 * gr_nccl_job__invalid says why). */
struct gr_nccl_job *gr_nccl_job__new(struct gr_synth *s,
				     const struct gr_synth_opts *o);
void gr_nccl_job__free(struct gr_nccl_job *j);

/* Rows the job writes for this host's ranks, in all. */
uint64_t gr_nccl_job__rows(const struct gr_nccl_job *j);

/* Fills vals (GR_nccl_*) with the next row, in ts order.  Returns 1, or
 * 0 once the job has ended. */
int gr_nccl_job__next(struct gr_nccl_job *j, int64_t *vals,
		      uint64_t *nullmask);

#endif
