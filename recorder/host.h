/* host.h - the host unit of the probe families (recorder/families.def):
 * scheduling (recorder/sched/), I/O (recorder/io/) and processes
 * (recorder/proc/), and the rows they make in offcpu, runq, block_io,
 * file_io and process.
 *
 * Which processes are traced: those gr_host__track() is told about (the
 * CUDA family calls it for every process it records), or all of them with
 * trace_all.  Block I/O is recorded host-wide.  Each family loads on its
 * own, so one the kernel refuses is logged and the others run.
 */
#ifndef GR_RECORDER_HOST_H
#define GR_RECORDER_HOST_H

#include <stdint.h>

#include "recorder/family.h"

struct gr_writer;
struct gr_host;
struct gr_elfcache;

struct gr_host_opts {
	struct gr_writer *w;
	int64_t clock_offset_ns;	/* boot-time ns + this = UTC ns */
	void (*log)(const char *fmt, ...);
	int verbose;
	int off[GR_NFAMILIES];		/* families not wanted (proc runs
					 * whenever the host unit does) */
	int trace_all;
	int64_t offcpu_min_ns, runq_min_ns, file_io_min_ns;
	/* The daemon's shared ELF cache (recorder/sym/elfcache.h), with a
	 * loader thread, naming off-CPU stacks' user frames: used, not
	 * freed, so it must outlive the host unit.  NULL: user frames go
	 * unnamed. */
	struct gr_elfcache *elfs;
	int record_self;		/* tests only */
};

/* Loads and attaches the families.  Returns NULL with errno set if none
 * could run (each failure is logged). */
struct gr_host *gr_host__open(const struct gr_host_opts *o);
void gr_host__close(struct gr_host *h);

/* The ring buffers' epoll fd; records wake it only once a quarter of a
 * buffer is full, so the caller also drains (gr_host__poll) on a timer. */
int gr_host__fd(struct gr_host *h);

/* Drains the ring buffers into the writer.  Returns records or -errno. */
int gr_host__poll(struct gr_host *h);

/* Starts tracing a process that uses CUDA: its threads' scheduling and
 * file calls, and a `process` row for it and its ancestors.  Cheap when
 * the pid is traced already. */
void gr_host__track(struct gr_host *h, uint32_t pid);

/* The fd of the traced-process bitmap the host families share
 * (bpf/common.bpf.h), for the CUDA family to set a bit in at cuInit's
 * entry; -1 if no family loaded it. */
int gr_host__tracked_fd(const struct gr_host *h);

/* Whether a host family runs (loaded and attached); 0 for a NULL @h. */
int gr_host__running(const struct gr_host *h, enum gr_family f);

/* sched's counters (recorder/sched/sched.bpf.c): switch-ins the
 * sched_switch tracepoint did not show, whose intervals were recovered;
 * blocked threads that came back with no wakeup seen (no runq record). */
enum gr_sched_counter { GR_SCHED_RECOVERED, GR_SCHED_WAKEUPS_UNSEEN };
uint64_t gr_host__sched_counter(const struct gr_host *h,
				enum gr_sched_counter c);

/* Called before each writer flush: drops rows, `process` rows of live
 * traced processes again in a new segment (so each segment names the
 * processes it holds), and forgets exited processes nobody asked about.
 * Every 5 s, and at the @last flush, rows for the off-CPU intervals in
 * state D that have not ended yet (recorder/sched/sched.c). */
void gr_host__flush(struct gr_host *h, int64_t now_ns, int last);

#endif
