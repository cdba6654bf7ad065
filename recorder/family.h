/* family.h - the probe families as recorder/families.def declares them:
 * an enum (GR_FAM_cuda, GR_FAM_proc, ...) in that file's order, a table
 * of their names, units, status keys and drop-source names, and the
 * `drops` rows both units write from their BPF drop counters. */
#ifndef GR_RECORDER_FAMILY_H
#define GR_RECORDER_FAMILY_H

#include <stdint.h>

struct gr_writer;

enum gr_family {
#define GR_FAMILY(name, unit, status) GR_FAM_##name,
#include "recorder/families.def"
	GR_NFAMILIES
};

/* Expands its arguments for the families of one unit only:
 * GR_UNIT_##unit(...) in a GR_FAMILY definition. */
#define GR_UNIT_host(...) __VA_ARGS__
#define GR_UNIT_cuda(...)
#define GR_UNIT_gpu(...)

#define GR_FAMILY_MAXDROPS 8

/* Each family's number of drop sources, GR_FAMILY_NDROPS_<name>, known at
 * compile time (a family's drops[] must have that many slots). */
enum {
#define GR_FAMILY_DROPS(name, ...)                                             \
	GR_FAMILY_NDROPS_##name =                                              \
		(int)(sizeof((const char *[]){ __VA_ARGS__ }) /                \
		      sizeof(const char *)),
#include "recorder/families.def"
};

struct gr_family_info {
	const char *name;	/* "sched" */
	const char *status;	/* its key in status.json */
	int host;		/* of the host unit (recorder/host.c) */
	int procs;		/* needs the host unit's process family (the
				 * BPF families: their processes' rows) */
	const char *const *drops; /* drop-source names, by drops[] slot */
	int ndrops;
};

extern const struct gr_family_info gr_families[GR_NFAMILIES];

/* Appends a `drops` row to @w: @n records of @source lost, at @ts. */
void gr_family__drop_row(struct gr_writer *w, const char *source, uint64_t n,
			 int64_t ts);

/* Appends a `drops` row for each of family @f's counters, @now[] (its BPF
 * drops[], in families.def's order), that grew since @seen[], which it
 * then updates. */
void gr_family__drops(struct gr_writer *w, enum gr_family f,
		      const uint64_t *now, uint64_t *seen, int64_t ts);

#endif
