/* family.h - the probe families as recorder/families.def declares them:
 * an enum (GR_FAM_cuda, GR_FAM_proc, ...) in that file's order, and a
 * table of their names, units, status keys and drop-source names. */
#ifndef GR_RECORDER_FAMILY_H
#define GR_RECORDER_FAMILY_H

enum gr_family {
#define GR_FAMILY(name, unit, status) GR_FAM_##name,
#include "recorder/families.def"
	GR_NFAMILIES
};

/* Expands its arguments for the families of one unit only:
 * GR_UNIT_##unit(...) in a GR_FAMILY definition. */
#define GR_UNIT_host(...) __VA_ARGS__
#define GR_UNIT_cuda(...)

#define GR_FAMILY_MAXDROPS 8

struct gr_family_info {
	const char *name;	/* "sched" */
	const char *status;	/* its key in status.json */
	int host;		/* of the host unit (recorder/host.c) */
	const char *const *drops; /* drop-source names, by drops[] slot */
	int ndrops;
};

extern const struct gr_family_info gr_families[GR_NFAMILIES];

#endif
