/* summary.h - per-minute and per-segment summaries of the CUDA tables,
 * kept in each segment beside the raw blocks, so that reports over days of
 * data read thousands of rows instead of decoding billions of events.
 *
 * Nine kinds, each a GR_TF_SUMMARY table of schema/tables.def:
 *   sum_api     every CUDA call (all cuda_* tables) by process and API;
 *   sum_kernel  launches by process, kernel name and grid/block shape;
 *   sum_memcpy  copies by process, direction and sync/async;
 *   sum_offcpu  off-CPU intervals by process, thread, state, stack and
 *               thread name (offcpu-top reads these instead of every
 *               interval);
 *   sum_nccl    NCCL calls by process, communicator, rank, op,
 *               communicator size and bytes per call (nccl-sum and
 *               gpu-util read these);
 *   sum_launch_slots  per process, the 10 ms slots of each minute in
 *               which it launched a kernel or graph, a bitmap merged by OR
 *               (launch-gaps looks for pauses only between set slots: the
 *               set does not depend on the order launches arrive in);
 *   sum_runq    run-queue waits by process, thread name, whether the
 *               thread is the main one, and log2 latency bucket (what
 *               runq-latency prints);
 *   sum_io      block requests by device, disk name, op and log2 latency
 *               bucket, and file calls by syscall and thread name
 *               (io-latency);
 *   sum_sync    CUDA synchronizations by process, thread and API (sync-long
 *               reads raw only the minutes whose longest wait can rank).
 * Each row holds a count, the duration total/min/max and sum of squares,
 * bytes, errors, the first and last event time, and for sum_api,
 * sum_memcpy, sum_runq and sum_io a histogram of
 * durations (log-linear, 128 buckets per power of two: a quantile read
 * from it is within 0.4 % of a value of the data).
 *
 * The writer adds every block it writes to an accumulator (gr_sum) and, at
 * each flush, writes the rows the flush changed into the segment's
 * `summary` table in the same transaction as the blocks: at every commit
 * the summaries describe exactly the events in the segment.  Rows exist per
 * minute (minute = its first ns) and, once the segment is sealed, for the
 * whole segment (minute = -1, written by the seal).
 * The reader (query/sumtab.c) uses the same accumulator to summarize raw
 * events where a query's window cuts a minute.
 */
#ifndef GR_STORE_SUMMARY_H
#define GR_STORE_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "store/codec.h"

#define GR_SUM_MINUTE_NS 60000000000ll
#define GR_SUM_SEGMENT (-1ll) /* minute of a whole-segment row */
#define GR_SUM_NKEYS 7

enum gr_sum_kind {
	GR_SUM_API = 1, GR_SUM_KERNEL = 2, GR_SUM_MEMCPY = 3,
	GR_SUM_OFFCPU = 4, GR_SUM_SLOTS = 5, GR_SUM_NCCL = 6, GR_SUM_RUNQ = 7,
	GR_SUM_IO = 8, GR_SUM_SYNC = 9,
};

/* sum_launch_slots: a minute of 6,000 slots of 10 ms, one bit each (slot
 * i in bit i & 7 of byte i >> 3).  Its rows are minute rows only: a
 * whole-segment bitmap would say nothing. */
#define GR_SUM_SLOT_NS 10000000ll
#define GR_SUM_SLOTS_PER_MIN 6000
#define GR_SUM_SLOT_BYTES (GR_SUM_SLOTS_PER_MIN / 8)

/* Kinds with no histogram: their rows' hist is NULL. */
#define GR_SUM_HAS_HIST(kind)                                               \
	((kind) == GR_SUM_API || (kind) == GR_SUM_MEMCPY ||                 \
	 (kind) == GR_SUM_RUNQ || (kind) == GR_SUM_IO)

/* The log2 latency bucket the latency reports print, in us: 0 under 1 us,
 * else the power of two at or below dur / 1000.  Computed as the reports'
 * SQL does it (log2, then power, in doubles) so that a key written here
 * and a bucket the --raw half computes are the same number. */
int64_t gr_sum_lat_bucket(int64_t dur);

/* ---- histograms ---------------------------------------------------------- */

/* Counts by bucket, and the exact extremes: a quantile is clamped to
 * them, so data of one value reads exactly.  Buckets come in octaves of
 * 128 (the first two octaves hold 0..255), each an array of counters made
 * on first use, so counting a value is an index, not a search: one key's
 * durations span a few octaves. */
#define GR_HIST_OCTS 57
struct gr_hist {
	uint64_t **oct;       /* GR_HIST_OCTS arrays of 128, or NULL */
	uint32_t n;           /* buckets with a count */
	int64_t min, max;     /* valid when n > 0 */
};

/* The count of one bucket. */
uint64_t gr_hist__count(const struct gr_hist *h, uint32_t bucket);

/* Returns the bucket of a value: values below 256 have their own, above
 * that 128 per power of two. */
static inline uint32_t gr_hist_bucket(int64_t v)
{
	if (v < 256)
		return v < 0 ? 0 : (uint32_t)v;
	int e = 63 - __builtin_clzll((uint64_t)v);
	uint32_t sub = (uint32_t)((uint64_t)v >> (e - 7)) & 127;
	return 256 + (uint32_t)(e - 8) * 128 + sub;
}
/* The value a bucket stands for: its midpoint (its value below 256). */
int64_t gr_hist_value(uint32_t bucket);

/* Counts one value. */
int gr_hist__add_value(struct gr_hist *h, int64_t v);
/* Counts count values of one bucket, lo and hi their extremes (or wider:
 * those of values counted in a flat array of buckets, gr_hist_bucket()'s,
 * below GR_HIST_NBUCKETS).  Returns 0, -EINVAL (no such bucket) or
 * -ENOMEM. */
#define GR_HIST_NBUCKETS (GR_HIST_OCTS * 128)
int gr_hist__add_count(struct gr_hist *h, uint32_t bucket, uint64_t count,
		       int64_t lo, int64_t hi);
/* gr_hist__add_value() for a loop over many values: a value in an octave
 * already counted in is an increment, inlined. */
static inline int gr_hist__add(struct gr_hist *h, int64_t v)
{
	uint32_t b = gr_hist_bucket(v);
	uint64_t *oct = h->n ? h->oct[b >> 7] : NULL;
	if (!oct)
		return gr_hist__add_value(h, v);
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n += !oct[b & 127];
	oct[b & 127]++;
	return 0;
}
void gr_hist__free(struct gr_hist *h);
/* Appends h's encoding to out: varints n, zigzag min, zigzag max, then n
 * pairs (bucket delta, count). */
int gr_hist__encode(const struct gr_hist *h, struct gr_buf *out);
/* Adds an encoding's counts to h.  Returns 0, -EINVAL if malformed, or
 * -ENOMEM. */
int gr_hist__merge(struct gr_hist *h, const uint8_t *p, size_t len);
/* The value of rank ceil(p / 100 * n) (nearest rank, p in 0..100), or -1
 * if h is empty. */
int64_t gr_hist__quantile(const struct gr_hist *h, double p);

/* ---- the accumulator ----------------------------------------------------- */

struct gr_sum_ent {
	uint8_t kind, dirty;
	uint8_t knull;               /* bit i: k[i] is NULL */
	/* dur_sq is unknown: a row of a segment written before it was
	 * kept, or a sum over one (the standard deviation is then NULL). */
	uint8_t no_sq;
	int64_t minute, pid;
	int64_t k[GR_SUM_NKEYS];     /* dictionary ids and numbers by kind */
	int64_t n, dur_sum, dur_min, dur_max, bytes, errors, ts_min, ts_max;
	/* The sum of the squared durations, exact: with n and dur_sum it
	 * gives the standard deviation (stddev_ns() in gpurec). */
	unsigned __int128 dur_sq;
	struct gr_hist h;            /* GR_SUM_HAS_HIST kinds only */
	uint8_t *slots;              /* GR_SUM_SLOTS: GR_SUM_SLOT_BYTES */
};

struct gr_sum;

struct gr_sum *gr_sum__new(void);
void gr_sum__free(struct gr_sum *s);
void gr_sum__reset(struct gr_sum *s);
/* on: what s adds from now on leaves histograms and slot bitmaps out (a
 * reader whose statement reads neither: merging them is most of what a
 * stored row costs). */
void gr_sum__no_hist(struct gr_sum *s, int on);

/* Columns of one block or batch of table t, by schema column: v[c] the
 * values (NULL: column absent, all NULL), nulls[c] a null bitmap or NULL. */
struct gr_sum_rows {
	int t;
	uint32_t n;
	const int64_t *v[64];
	const uint8_t *nulls[64];
	/* cuda_graph: the dictionary id of "launch" in the block's
	 * segment, 0 if it has none; its rows of that op feed
	 * sum_launch_slots. */
	int64_t launch_op;
};

/* Adds the rows with ts in [lo, hi] (and pid == *pid when pid is
 * non-NULL) to the minute rows and, if segment_rows, to the whole-segment
 * rows, of the kinds in the mask kinds (bit 1 << kind).  Tables with no
 * summary are ignored.  Returns 0 or -ENOMEM. */
int gr_sum__add(struct gr_sum *s, const struct gr_sum_rows *r, int64_t lo,
		int64_t hi, const int64_t *pid, int segment_rows,
		unsigned kinds);

/* Entries, in the order they were made. */
uint32_t gr_sum__count(const struct gr_sum *s);
const struct gr_sum_ent *gr_sum__at(const struct gr_sum *s, uint32_t i);

/* Sets every whole-segment row to the sum of its minute rows (marked
 * dirty); what one held before is dropped, so a second rollup counts
 * nothing twice. */
int gr_sum__rollup(struct gr_sum *s);

/* Adds one stored row (from a segment's summary table) as it is; for
 * GR_SUM_SLOTS, hist is the slot bitmap, ORed in. */
int gr_sum__put(struct gr_sum *s, const struct gr_sum_ent *e,
		const uint8_t *hist, size_t hist_len);

/* Calls fn for every entry (only dirty ones if dirty_only, clearing
 * their mark).  Stops at and returns fn's first non-zero return. */
int gr_sum__each(struct gr_sum *s, int dirty_only,
		 int (*fn)(void *ctx, const struct gr_sum_ent *e), void *ctx);

/* Returns the summary kind table t feeds as API calls (every cuda_*
 * table), or 0; and the second kind it feeds (kernel, memcpy, offcpu,
 * nccl, runq or io), or 0. */
int gr_sum_kinds(int t, int *second);

/* The segment table's DDL, its column list in order, and the SQL that
 * stores one entry (INSERT OR REPLACE with 21 parameters, in the order of
 * gr_sum__bind).  dur_sq, the last column, is newer than the rest: a
 * segment without it reads as no_sq rows. */
extern const char gr_sum_ddl[];
extern const char gr_sum_insert_sql[];
struct sqlite3_stmt;
/* Adds the current row of st (a SELECT * FROM summary) to s as it is.
 * Returns 0, -EINVAL for a malformed histogram, or -ENOMEM. */
int gr_sum__put_row(struct gr_sum *s, struct sqlite3_stmt *st);

/* The segment meta key listing, as a bit mask (1 << kind), the kinds the
 * writer summarized; a segment without it predates sum_offcpu and keeps
 * only the first three. */
#define GR_SUM_META_KINDS "summary_kinds"
#define GR_SUM_WRITTEN_KINDS                                                \
	(1u << GR_SUM_API | 1u << GR_SUM_KERNEL | 1u << GR_SUM_MEMCPY |     \
	 1u << GR_SUM_OFFCPU | 1u << GR_SUM_SLOTS | 1u << GR_SUM_NCCL |     \
	 1u << GR_SUM_RUNQ | 1u << GR_SUM_IO | 1u << GR_SUM_SYNC)

struct gr_segment;
/* Whether segment seg keeps summary rows of kind with every column (a
 * copy made by another tool may not, a segment written before dur_sq
 * neither, one written before the kind existed neither: then it is
 * summarized from its raw blocks). */
int gr_sum__stored(struct gr_segment *seg, int kind);
/* Adds seg's stored rows of kind with minute in [m0, m1] (and, with pid,
 * of that process) to s; *malformed counts rows whose histogram did not
 * parse (left out).  Returns the rows read, -ENOMEM, or -EIO with *err
 * set (malloc'd). */
int gr_sum__load(struct gr_sum *s, struct gr_segment *seg, int kind,
		 int64_t m0, int64_t m1, const int64_t *pid, int *malformed,
		 char **err);

/* gr_sum__load, keeping only rows whose key k[key] is one of ids[0..nids)
 * (not NULL); key < 0 keeps every row. */
int gr_sum__load_keyed(struct gr_sum *s, struct gr_segment *seg, int kind,
		       int64_t m0, int64_t m1, const int64_t *pid, int key,
		       const int64_t *ids, int nids, int *malformed,
		       char **err);

/* Binds e to the insert statement (hist encoded into scratch). */
int gr_sum__bind(struct sqlite3_stmt *st, const struct gr_sum_ent *e,
		 struct gr_buf *scratch);

#endif
