/* hostfam.h - what the host families' lifecycle files (recorder/proc,
 * recorder/sched, recorder/io) share with recorder/host.c: the host
 * side's state, the one skeleton opener, the writer helpers.  gpurecd
 * uses recorder/host.h only. */
#ifndef GR_RECORDER_HOSTFAM_H
#define GR_RECORDER_HOSTFAM_H

#include <stdint.h>

#include <bpf/libbpf.h>

#include "recorder/family.h"
#include "recorder/ulink.h"
#include "recorder/host.h"
#include "recorder/proc/ptab.h"
#include "recorder/row.h"
#include "recorder/sched/decode.h"

#define GR_HOST_LOG(h, ...) (h)->o.log(__VA_ARGS__)

struct gr_hfam {		/* one host family, once running */
	void *skel;		/* NULL: not running */
	void (*destroy)(void *skel);
	const uint64_t *drops;	/* its .bss drops[] */
	uint64_t drops_seen[GR_FAMILY_MAXDROPS];
};

struct gr_host {
	struct gr_host_opts o;
	struct gr_hfam fam[GR_NFAMILIES];	/* the host unit's slots */
	int tracked_fd;		/* the shared map, owned by a skeleton */
	uint64_t *tracked_bits;	/* it, mapped (GR_TRACKED_WORDS words) */
	struct ring_buffer *rb;
	struct gr_ulinks links;
	struct gr_ptab procs;
	struct gr_cgroups *cgroups;
	struct gr_stacks *stacks;	/* with sched: off-CPU stacks */
	struct gr_dctx dctx;
	/* Block device names by dev, looked up once each (host.c devname);
	 * name "" where /sys had none. */
	struct {
		uint32_t dev;
		char name[32];
	} disks[64];
	int ndisks;
	char *segment;		/* segment the process rows were last put in */
	uint64_t user_drops, user_drops_seen;
	uint64_t flushes;
	uint64_t (*sched_counter)(const void *skel, enum gr_sched_counter c);
	/* sched: off-CPU intervals still open, written in part */
	struct gr_sched_opens opens;
	int64_t walked_ns;	/* boot-time ns of the last walk for them */
	uint64_t walks;
};

/* A family's BPF object for gr_hfam__open: the skeleton, opened and its
 * read-only data set, and how to load, destroy and read it. */
struct gr_hfam_skel {
	void *skel;		/* NULL: it could not be opened (errno) */
	struct bpf_object *obj;
	int (*load)(void *skel);
	void (*destroy)(void *skel);
	const uint64_t *(*drops)(void *skel);
	const char *const *progs;	/* to attach, NULL-terminated */
	const char *optional;	/* attached first if it can be, or NULL */
	const char *optional_msg; /* logged if it cannot */
	ring_buffer_sample_fn on_record; /* called with the gr_host */
};

/* Loads (sharing the tracked map), attaches and adds to the ring-buffer
 * poll one family's object; on failure logs why and destroys it.  Returns
 * 0 or -1. */
int gr_hfam__open(struct gr_host *h, enum gr_family f,
		  const struct gr_hfam_skel *k);

/* The adapters gr_hfam_skel needs for the skeleton NAME_bpf. */
#define GR_HFAM_SKEL_FNS(name)                                                 \
	static int name##_load_(void *s)                                       \
	{                                                                      \
		return name##_bpf__load(s);                                    \
	}                                                                      \
	static void name##_destroy_(void *s)                                   \
	{                                                                      \
		name##_bpf__destroy(s);                                        \
	}                                                                      \
	static const uint64_t *name##_drops_(void *s)                          \
	{                                                                      \
		return (const uint64_t *)((struct name##_bpf *)s)->bss->drops; \
	}

/* The families' opens (recorder/<name>/<name>.c), called in
 * families.def's order; @self is gpurecd's tgid (0: record it too). */
#define GR_FAMILY(name, unit, status)                                          \
	GR_UNIT_##unit(void gr_##name##__open(struct gr_host *h, uint32_t self);)
#include "recorder/families.def"

/* Appends a row to the writer, counting it in `host:store` if the store
 * cannot take it. */
void gr_host__put(struct gr_host *h, const struct gr_row *r);
int64_t gr_host__boot_ns(void);

/* sched.c: writes the pieces of off-CPU intervals still open in state D
 * (every 5 s, or with @last at the last flush); forgets a process's. */
void gr_sched__walk(struct gr_host *h, int last);
void gr_sched__forget(struct gr_host *h, uint32_t pid);

/* proc.c: the process table's side of the host. */
struct gr_pinfo *gr_proc__lookup(struct gr_host *h, uint32_t pid, int add);
void gr_proc__track(struct gr_host *h, uint32_t pid);
void gr_proc__flush(struct gr_host *h);

#endif
