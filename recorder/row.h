/* row.h - what the pure decoders (recorder/<family>/decode.c) fill and
 * take: one row of a table, and the context that turns boot-time ns into
 * UTC and strings into dictionary ids.  No BPF, no skeletons: the unit
 * tests feed records to the decoders without root. */
#ifndef GR_RECORDER_ROW_H
#define GR_RECORDER_ROW_H

#include <stdint.h>
#include <string.h>

#include "schema/schema.h"

struct gr_row {
	int table;		/* GR_T_... */
	uint64_t nm;		/* null mask: bit i, column i is NULL */
	int64_t v[GR_MAX_COLS];
};

struct gr_dctx {
	int64_t clock_offset_ns;	/* boot-time ns + this = UTC ns */
	int64_t (*intern)(void *ctx, const char *s);
	void *ctx;
	/* The name of block device @dev (major << 20 | minor) on this
	 * host, or NULL: the io family's block_io.disk.  NULL itself where
	 * names are not looked up (tests). */
	const char *(*devname)(void *ctx, uint32_t dev);
};

static inline void gr_row__init(struct gr_row *r, int table)
{
	memset(r, 0, sizeof(*r));
	r->table = table;
}

/* A task's comm (16 bytes, NUL-terminated unless all 16 are used) as a
 * string. */
static inline void gr_row__comm(char out[17], const char in[16])
{
	memcpy(out, in, 16);
	out[16] = 0;
}

static inline int64_t gr_dctx__utc(const struct gr_dctx *d, uint64_t boot)
{
	return (int64_t)boot + d->clock_offset_ns;
}

static inline int64_t gr_dctx__str(const struct gr_dctx *d, const char *s)
{
	return d->intern(d->ctx, s);
}

/* The columns every event table starts with (GR_EVENT_COLS in
 * schema/tables.def: ts, host, pid, tid, comm; host is the store's), at
 * the same positions in each: a new row of @table with them set. */
#define GR_SAME_COL_(a, b) ((int)(a) == (int)(b))
_Static_assert(GR_SAME_COL_(GR_offcpu_ts, GR_runq_ts) &&
	       GR_SAME_COL_(GR_file_io_ts, GR_runq_ts) &&
	       GR_SAME_COL_(GR_offcpu_pid, GR_runq_pid) &&
	       GR_SAME_COL_(GR_file_io_pid, GR_runq_pid) &&
	       GR_SAME_COL_(GR_offcpu_tid, GR_runq_tid) &&
	       GR_SAME_COL_(GR_file_io_tid, GR_runq_tid) &&
	       GR_SAME_COL_(GR_offcpu_comm, GR_runq_comm) &&
	       GR_SAME_COL_(GR_file_io_comm, GR_runq_comm),
	       "event tables share their first columns");
static inline void gr_row__event(struct gr_row *r, const struct gr_dctx *d,
				 int table, uint64_t boot_ts, uint32_t pid,
				 uint32_t tid, const char comm16[16])
{
	char comm[17];
	gr_row__init(r, table);
	gr_row__comm(comm, comm16);
	r->v[GR_runq_ts] = gr_dctx__utc(d, boot_ts);
	r->v[GR_runq_pid] = pid;
	r->v[GR_runq_tid] = tid;
	r->v[GR_runq_comm] = gr_dctx__str(d, comm);
}

#endif
