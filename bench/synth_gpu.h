/* synth_gpu.h - synthetic rows of the gpu family (gpu, gpu_process,
 * gpu_event), as gpurecd's NVML sampler writes them (recorder/gpu/gpu.c).
 *
 * The host: ngpus H100 SXM ("NVIDIA H100 80GB HBM3", 700 W limit, 81559
 * MiB), GPU g at PCI 0000:XX:00.0 (a DGX H100's buses), sampled once a
 * second from start; within a tick the GPUs are sampled in turn, each
 * row's ts the tick plus the sample_ns of the GPUs before it.  Rank g of
 * one training job runs on GPU g: process 41000 + 17 g, the pid of the
 * synthetic launch stream's g-th process (bench/synth.h), so joins with
 * cuda_kernel work when --procs >= --gpus.  One gpu_process row per GPU
 * per sample.
 *
 * Phases (t: seconds since start), the same on every GPU (one job):
 *   t % 1200 <  1080   training: util 93-100, power 560-660 W
 *   t % 1200 <  1140   evaluation: util 35-60
 *   else               checkpoint: util 0-2 (throttle "idle" at 0)
 * and per GPU:
 *   hung               busy, not working: util 100, memory util 0, about
 *                      130 W, for HANG_S seconds every 12 h from
 *                      (5400 + 5100 g) % 43200 (gr_gpu_synth__hang_end:
 *                      the launch stream's process of that GPU stalls)
 *   power capped       a 300 s block of training (t / 300 % 4 < 3) whose
 *                      hash picks it (about 3 a day a GPU): power at the
 *                      limit, sw_power_cap, lower SM clock
 *   hot                GPU 5 % ngpus at 2 h, 10 h and 18 h, 180 s:
 *                      hw_thermal, 89-91 C, SM clock 1260-1400 MHz
 * Throttle reasons that start or stop give throttle_start/throttle_stop
 * gpu_event rows as gpurecd writes them.  Counters are increases since
 * the previous sample: mostly 0; ECC corrected now and then on GPU 3 %
 * ngpus, NVLink CRC errors (and replays) on GPU 1 % ngpus, PCIe replays on
 * GPU 4 % ngpus (PCIe every 10th sample, as gpurecd reads it).  Xids: 13
 * at 45 s, 31 at 4 h, 94 + an uncorrected ECC error at 14 h followed by 63
 * (a row remapped, a reset pending from then on), 119 at 20 h, with the
 * catalog's meaning and action.
 *
 * Everything follows from the seed (its own random stream: adding the gpu
 * tables does not change the other streams' draws). */
#ifndef GR_SYNTH_GPU_H
#define GR_SYNTH_GPU_H

#include <stdint.h>

#include "bench/synth.h"

#define GR_GPU_SYNTH_PID(g) (41000 + 17 * (int64_t)(g))

struct gr_gpu_synth;

/* ngpus GPUs (0: 8) sampled from o->start_ns; NULL with errno set. */
struct gr_gpu_synth *gr_gpu_synth__new(struct gr_synth *s,
				       const struct gr_synth_opts *o,
				       int ngpus);
void gr_gpu_synth__free(struct gr_gpu_synth *j);

/* The next row of the family, in ts order: *table is GR_T_gpu,
 * GR_T_gpu_process or GR_T_gpu_event. */
void gr_gpu_synth__next(struct gr_gpu_synth *j, int *table, int64_t *vals,
			uint64_t *nullmask);

/* ts of the next row gr_gpu_synth__next returns. */
int64_t gr_gpu_synth__peek_ts(const struct gr_gpu_synth *j);

/* If GPU g is hung at t (ns), when the hang ends; else 0. */
int64_t gr_gpu_synth__hang_end(const struct gr_gpu_synth *j, int g,
			       int64_t t);
/* When GPU g's first hang that starts at or after t starts (INT64_MAX:
 * no such GPU). */
int64_t gr_gpu_synth__next_hang(const struct gr_gpu_synth *j, int g,
				int64_t t);

/* GPUs of the family. */
int gr_gpu_synth__ngpus(const struct gr_gpu_synth *j);

#endif
