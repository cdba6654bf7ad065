/* family.h - the CUDA probe family as gpurecd sees it: discovery,
 * attachment, decoding (recorder/cuda/). */
#ifndef GR_REC_CUDA_H
#define GR_REC_CUDA_H

#include <stdint.h>

#include "store/store.h"

struct gr_elfcache;

struct gr_cuda;

struct gr_cuda_opts {
	struct gr_writer *w;
	int64_t clock_offset_ns;     /* boot-time ns + this = UTC ns */
	void (*log)(const char *fmt, ...);
	int verbose;
	uint32_t ringbuf_bytes;      /* 0: 8 MiB; else a power of 2 >= 4096 */
	int record_self;             /* tests only: do not skip our own pid */
	/* Called with the pid of every call decoded, of every process found
	 * mapping a CUDA library (once per process) and of every process
	 * entering cuInit (the host families trace the processes that use
	 * CUDA); may be NULL. */
	void (*on_pid)(void *ctx, uint32_t pid);
	void *on_pid_ctx;
	/* The host families' traced-process bitmap (gr_host__tracked_fd),
	 * which cuInit's entry sets its process's bit in, before the call
	 * can block; 0 or -1: none. */
	int tracked_fd;
	/* The daemon's shared ELF cache (recorder/sym/elfcache.h), used and
	 * not freed; NULL: the family keeps its own, without a loader
	 * thread (a launch's file is read when the launch is named). */
	struct gr_elfcache *elfs;
};

/* Loads the BPF object and creates its ring buffer.  Returns NULL with
 * errno set (and a log line) if the kernel refuses it. */
struct gr_cuda *gr_cuda__open(const struct gr_cuda_opts *o);
void gr_cuda__close(struct gr_cuda *c);

/* The ring buffer's epoll fd, for the event loop.  It becomes readable
 * only for exec records and once a quarter of the buffer is full: the
 * caller must also drain (gr_cuda__poll) on a timer, every few ms. */
int gr_cuda__fd(struct gr_cuda *c);

/* Drains the ring buffer into the writer.  Returns records read or
 * -errno. */
int gr_cuda__poll(struct gr_cuda *c);

/* Attaches to an ELF file if it holds hooked CUDA entry points and was
 * not attached yet (by device and inode).  Returns probes attached (0 if
 * none or already done), or -errno. */
int gr_cuda__attach_path(struct gr_cuda *c, const char *path);

/* Looks at one process's mappings and executable and attaches to every
 * new CUDA-bearing file.  Returns probes attached, or -errno (-ESRCH if it
 * is gone). */
int gr_cuda__scan_pid(struct gr_cuda *c, int pid);

/* Attaches the runtime launch probes of processes that waited for their
 * stub files to be read (an old process's launches are named from them),
 * now that they are.  Returns the probes attached.  Call it often: every
 * few ms. */
int gr_cuda__retry(struct gr_cuda *c);

/* scan_pid for every process on the host.  Returns probes attached. */
int gr_cuda__scan_all(struct gr_cuda *c);

/* Pids that exec'd since the last call (from the exec tracepoint), for
 * the daemon to scan now and again shortly; returns how many were copied
 * into pids (up to max). */
int gr_cuda__take_execs(struct gr_cuda *c, int *pids, int max);

/* Appends `drops` rows for what was lost since the last call. */
void gr_cuda__report_drops(struct gr_cuda *c, int64_t now_ns);

struct gr_cuda_stats {
	uint64_t records, rows, files_attached, probes;
	uint64_t named_launches, unnamed_launches, decode_errors;
	uint64_t handles_read; /* names read from handles made unseen */
	uint64_t names;        /* distinct kernel names held */
	uint64_t names_bytes;  /* the memory they take */
};
void gr_cuda__stats(const struct gr_cuda *c, struct gr_cuda_stats *st);

#endif
