/* gpu.h - the gpu family: the GPUs' own state through NVML, and the
 * driver's Xid reports from the kernel log (docs/gpu.md).
 *
 * No BPF: NVML is dlopened (libnvidia-ml.so.1, recorder/gpu/nvml.h) at
 * open, and two threads ask it: a sampler, every sample period, for each
 * GPU's utilization, clocks, power, memory, throttle reasons, PCIe, ECC,
 * row remapping and NVLink counters and its processes; and an event waiter
 * for NVML's Xid and ECC events.  A third reads /dev/kmsg, so that an NVML
 * call that hangs does not hold Xid lines back.  None touches the store: they queue what they saw and wake
 * the loop through an eventfd (gr_gpu__fd), whose drain (gr_gpu__poll)
 * turns it into `gpu`, `gpu_process` and `gpu_event` rows.  An Xid seen
 * both by NVML and in the kernel log is one row: each waits up to 2 s for
 * the other. */
#ifndef GR_RECORDER_GPU_GPU_H
#define GR_RECORDER_GPU_GPU_H

#include <stddef.h>
#include <stdint.h>

struct gr_writer;

struct gr_gpu_opts {
	struct gr_writer *w;
	void (*log)(const char *fmt, ...);
	int64_t sample_ns;	/* the sampling period */
	int64_t clock_offset_ns; /* CLOCK_BOOTTIME + this = the rows' UTC */
	int verbose;
	int dirfd;		/* the data directory: the kernel log cursor */
	const char *kmsg;	/* "/dev/kmsg", or NULL: no kernel log */
};

struct gr_gpu_stats {
	int devices;		/* GPUs NVML listed */
	int lost;		/* of them, lost now */
	uint64_t samples;	/* `gpu` rows */
	uint64_t process_rows;
	uint64_t events;	/* `gpu_event` rows */
	uint64_t sample_ns;	/* NVML's time for all of them, summed */
	uint64_t dropped;	/* queued items lost: the queue was full */
	char driver[80];
};

/* Opens NVML and the kernel log and starts the threads.  NULL when there
 * is no NVML (no driver: logged once) or it lists no GPU. */
struct gr_gpu *gr_gpu__open(const struct gr_gpu_opts *o);

/* The eventfd the loop polls; then gr_gpu__poll drains the queue into
 * rows.  Returns the rows written. */
int gr_gpu__fd(struct gr_gpu *g);
int gr_gpu__poll(struct gr_gpu *g);

/* Writes what waited (Xids waiting for their other half) whose time is
 * up at @now_ns, or all of it with @last (the threads are stopped
 * first), and the family's `drops` row. */
void gr_gpu__flush(struct gr_gpu *g, int64_t now_ns, int last);

void gr_gpu__stats(const struct gr_gpu *g, struct gr_gpu_stats *st);

/* Stops the threads (if gr_gpu__flush(last) did not) and shuts NVML. */
void gr_gpu__close(struct gr_gpu *g);

/* Pure helpers, for the unit tests: the throttle mask as
 * docs/schema.md's names, comma-joined ("" for none); a PCI bus id as
 * NVML prints it ("00000000:3B:00.0") in the kernel's short form
 * ("0000:3b:00"); and the reverse match. */
void gr_gpu__throttle_text(uint64_t mask, char *out, size_t n);
void gr_gpu__pci_short(const char *bus_id, char *out, size_t n);

#endif
