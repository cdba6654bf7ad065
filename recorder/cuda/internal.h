/* internal.h - the CUDA family's state, shared by its files and by no one
 * else (gpurecd sees family.h): cuda.c (lifecycle, the ring buffer),
 * attach.c (discovery and probes), naming.c (kernel names), nccl.c and
 * decode.c (rows). */
#ifndef GR_CUDA_INTERNAL_H
#define GR_CUDA_INTERNAL_H

#include <stdint.h>

#include <linux/types.h>

#include "recorder/cuda/cuda.h"
#include "recorder/cuda/decode.h"
#include "recorder/cuda/family.h"
#include "recorder/cuda/nccl.h"
#include "recorder/keymap.h"
#include "recorder/ulink.h"
#include "recorder/sym/elfcache.h"
#include "recorder/sym/procmaps.h"

struct bpf_link;
struct cuda_bpf;
struct ring_buffer;

/* A file already looked at (attached or not), by device and inode. */
struct seen {
	int probes;
	char *path;
	int nrt;             /* runtime launch entry points it defines */
	int stubs;           /* it registers kernels: holds their stubs */
	struct rt_entry {
		int api;
		uint64_t off;
	} rt[8];
};

/* What gpurecd knows of a process beyond its mappings: whether it started
 * before the driver layer was attached, and the runtime launch probes
 * attached for it alone (cuda.c, "Which layer records a launch"); whether
 * the host families were told it is a GPU process. */
struct proc {
	uint64_t start_ticks;     /* /proc/PID/stat starttime: pid reuse */
	int old;                  /* started before the first full scan */
	int unnamed;              /* made a driver launch gpurecd cannot name */
	int stubs_read;           /* its stub files are in the ELF cache */
	int announced;            /* on_pid told it maps a CUDA library */
	struct gr_ulinks links;   /* pid-filtered runtime launch probes */
	uint64_t files[8][2];     /* (dev, ino) those probes sit on */
	int nfiles;
};

struct kname {
	char *mangled;   /* follows the struct */
	char *demangled; /* NULL when it does not demangle, or not yet */
	uint64_t h1, h2; /* its key in gr_cuda.interned */
	uint32_t refs;   /* (pid, handle) entries naming it */
	uint8_t interned, demangle_tried;
	struct gr_cuda_strid mangled_id, demangled_id;
};

/* A comm's dictionary id (cuda.c: a direct-mapped cache by its bytes). */
struct comm_id {
	char comm[16];
	struct gr_cuda_strid id;
};
#define GR_CUDA_COMM_IDS 64

struct gr_cuda {
	struct gr_cuda_opts o;
	struct cuda_bpf *skel;
	struct ring_buffer *rb;
	struct gr_uprobe_progs progs; /* what every probe runs */
	struct gr_ulinks links;   /* every global probe */
	struct gr_ulinks rt_links; /* global runtime launch probes: only while
	                           * no driver is attached */
	int have_driver;          /* a libcuda is attached */
	uint64_t old_before_ns;   /* processes started before this (boot
	                           * time) predate the driver probes */
	struct gr_keymap seen;     /* (dev, ino) -> struct seen */
	struct gr_keymap procs;    /* (pid, 0) -> struct proc */
	struct gr_elfcache *elfs;  /* ELF files, for naming stubs */
	struct gr_elfcache *own_elfs; /* elfs, if the family made it */
	int *postponed;            /* pids waiting for stubs_pending */
	int npostponed, postponed_cap;
	struct gr_keymap regs_logged; /* (dev, ino) whose registrations
	                               * naming has logged */
	struct gr_keymap maps;     /* (pid, 0) -> struct gr_maps */
	struct gr_keymap names;    /* (pid, handle) -> struct kname */
	struct gr_keymap interned; /* name hash -> struct kname */
	uint64_t names_bytes;      /* what the knames hold */
	uint64_t nnames;           /* distinct knames */
	struct gr_keymap nameless; /* (pid, handle) -> a mark: nothing could
	                            * name it, do not look again */
	struct gr_nccl nccl;       /* communicators */
	struct gr_cuda_strid *api_ids; /* [gr_napis]: each API's name's id */
	struct comm_id comm_ids[GR_CUDA_COMM_IDS];
	int misses_logged;    /* name_stub misses told in verbose mode */
	int *execs;
	int nexecs, execs_cap;
	uint64_t drops_seen[GR_DROP_NSLOTS];
	uint64_t user_drops, user_drops_seen;
	struct gr_cuda_stats st;
};

#define LOG(c, ...) (c)->o.log(__VA_ARGS__)

/* attach.c */
void gr_cuda_procs_free(struct gr_cuda *c);
void gr_cuda_seen_free(struct gr_cuda *c);
/* pid's mappings, read again if refresh (or never read); NULL if they
 * cannot be read and were not before. */
struct gr_maps *gr_cuda_maps(struct gr_cuda *c, uint32_t pid, int refresh);
void gr_cuda_maps_free(struct gr_cuda *c);
/* Decoding found a driver launch it cannot name: from now on, name this
 * process's runtime launches from their stubs (once per process). */
void gr_cuda_unnamed_launch(struct gr_cuda *c, uint32_t pid);

/* naming.c */
/* Names the launch row r made of e (api a): its kernel columns. */
void gr_cuda_name_launch(struct gr_cuda *c, const struct gr_cuda_call *e,
			 const struct gr_api *a, struct gr_cuda_row *r);
/* Learns the name a load-time call gave a handle (GR_SH_NAME calls). */
void gr_cuda_name_record(struct gr_cuda *c, const struct gr_cuda_call *e,
			 const struct gr_api *a, const char *name);
/* Starts reading the ELF of mapping m of pid in the background. */
void gr_cuda_name_prefetch(struct gr_cuda *c, uint32_t pid,
			   const struct gr_mapping *m);
void gr_cuda_names_free(struct gr_cuda *c);
/* Forgets the names kept for the n gone pids (sorted). */
void gr_cuda_names_forget(struct gr_cuda *c, const uint32_t *gone, int n);

#endif
