/* ptab.h - the process table the host families share: every exec and exit
 * on the host, kept until the process exits and a few seconds more
 * (recorder/proc/proc.c says why), by pid. */
#ifndef GR_RECORDER_PROC_PTAB_H
#define GR_RECORDER_PROC_PTAB_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/sym/stacks.h"

struct gr_pinfo {
	struct gr_pinfo *next;	/* in its bucket */
	uint32_t pid, ppid;
	int have_id;		/* identity known (exec record or /proc) */
	int traced;		/* uses CUDA (or trace_all) */
	int named;		/* rows written (traced, or an ancestor) */
	int exited;
	int32_t code;
	int64_t first_ts, start_ts, exit_ts; /* UTC ns; start 0 if unknown */
	uint64_t cgroup_id;
	char comm[16];
	char *exe, *cmdline, *cgroup;
	char cid[65], pod[37];
	struct gr_pmaps pm;	/* executable file mappings, for stacks */
};

struct gr_ptab {
	struct gr_pinfo **b;	/* buckets, chained through gr_pinfo.next */
	size_t nb, n;		/* nb: 0 or a power of 2 */
};

struct gr_pinfo *gr_ptab__get(const struct gr_ptab *t, uint32_t pid);
/* The entry of @pid, made (zeroed but for the pid) if there is none.
 * NULL without memory. */
struct gr_pinfo *gr_ptab__get_or_add(struct gr_ptab *t, uint32_t pid);
/* Removes and frees @p. */
void gr_ptab__forget(struct gr_ptab *t, struct gr_pinfo *p);
/* Frees every entry and the buckets. */
void gr_ptab__clear(struct gr_ptab *t);

#endif
