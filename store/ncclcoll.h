/* ncclcoll.h - NCCL collectives per block: what nccl-arrivals needs of a
 * block's calls, written beside it at ingest.
 *
 * nccl-arrivals merges, per collective (communicator, seq), the arrivals
 * of every rank on every host: the first, the last (latest, then host,
 * then rank) and the one before it.  Those merge exactly from partial
 * records, so the writer keeps, for each `nccl` block, one record per
 * collective the block's calls enter: the calls it saw, its first and
 * last entry, the entry before the last, and the last call's rank, pid,
 * op, bytes and nranks.  With 8 ranks a host that is an eighth of the
 * calls, and a reader of a day needs only comm, seq, first and last of
 * each to find the widest collectives (query/nccl_fleet.c).
 *
 * A segment keeps them in
 *   nccl_coll(block INTEGER PRIMARY KEY, crc INTEGER, pcrc INTEGER,
 *             payload BLOB)
 * block and crc: the nccl block's id and checksum (a record set is used
 * only for the block it was made from); payload: the records as a block
 * of the codec (codec.h), columns GR_COLL_*, sorted by (comm, seq); pcrc:
 * gr_block_crc("nccl_coll", 0, 0, rows, payload).  A block without its
 * row (an older segment, a transaction retried from its log) is read from
 * its calls; nothing here is needed to answer, only to answer fast.
 */
#ifndef GR_NCCLCOLL_H
#define GR_NCCLCOLL_H

#include <stddef.h>
#include <stdint.h>

#include "store/codec.h"

#define GR_COLL_TABLE "nccl_coll"
extern const char gr_coll_ddl[];

/* A record's columns, in payload order.  PREV is NULL for a record of
 * one call; RANK to NRANKS are the last call's and NULL where it had
 * none. */
enum {
	GR_COLL_COMM, GR_COLL_SEQ, GR_COLL_N, GR_COLL_FIRST, GR_COLL_LAST,
	GR_COLL_PREV, GR_COLL_RANK, GR_COLL_PID, GR_COLL_OP, GR_COLL_BYTES,
	GR_COLL_NRANKS, GR_COLL_NCOLS
};

/* The value a NULL takes in a record (no real rank, pid, byte count or
 * time is INT64_MIN; and it sorts first, as SQLite's NULL). */
#define GR_COLL_NULL INT64_MIN

/* One collective's calls within one block (of one host). */
struct gr_coll {
	int64_t v[GR_COLL_NCOLS];
};

/* Whether op (len bytes) is one of the collectives whose seq every rank
 * shares: the NCCL reports and their --raw SQL list the same six. */
int gr_coll_is_collective(const char *op, size_t len);

/* Within one host: whether the call (ts, rank) comes before (ts2, rank2)
 * in nccl-arrivals' order, latest first, then the lower rank. */
static inline int gr_coll_later(int64_t ts, int64_t rank, int64_t ts2,
				int64_t rank2)
{
	return ts != ts2 ? ts > ts2 : rank < rank2;
}

/* Adds call (ts, rank, pid, op, bytes, nranks) to c, a record of the same
 * collective and host (c->v[GR_COLL_N] 0: empty). */
void gr_coll__add(struct gr_coll *c, int64_t ts, int64_t rank, int64_t pid,
		  int64_t op, int64_t bytes, int64_t nranks);

struct gr_coll_builder;
struct gr_coll_builder *gr_coll_builder__new(void);
void gr_coll_builder__free(struct gr_coll_builder *b);

/* Makes the records of one nccl block, n rows of columns cols (by schema
 * column of the nccl table, GR_nccl__NCOLS of them; v NULL: a column the
 * block lacks, all NULL), of rows whose op ids is_coll(ctx, id) says are collectives, and encodes
 * them with e into out.  *nrec: the records (0: out is empty, nothing to
 * store).  Returns 0 or -ENOMEM. */
int gr_coll_builder__encode(struct gr_coll_builder *b,
			    const struct gr_colbuf *cols, uint32_t n,
			    int (*is_coll)(void *ctx, int64_t id), void *ctx,
			    struct gr_encoder *e, struct gr_buf *out,
			    uint32_t *nrec);

/* ---- arrivals: every call's entry, per record ---------------------------
 *
 * nccl-skew needs each call's lateness (its entry less the collective's
 * first over every host), rank-pace each process's entries one iteration
 * apart and its time in NCCL calls: the records above keep only the first
 * and last.  So beside them the writer keeps, per record, each call's
 * entry as an offset from the record's first and which rank made it (with
 * its op and size), and per process its calls' extent and time, in
 *   nccl_arr(block INTEGER PRIMARY KEY, crc INTEGER, pcrc INTEGER,
 *            payload BLOB)
 * block and crc as nccl_coll's; pcrc: gr_block_crc("nccl_arr", 0, 0, 0,
 * payload).  The payload (varints; zigzag where signed):
 *   u8 version (2)
 *   nslot, then per slot (a rank's calls of one op and size in the block):
 *       u64 comm (8 bytes, little endian), u8 nulls (1 pid, 2 rank,
 *       4 nranks, 8 bytes), zigzag pid, rank, nranks (those not NULL),
 *       op (the segment's dictionary id), zigzag bytes (if not NULL)
 *   npat, then per pattern (the slots of one record's calls, ascending,
 *       a slot once per call): len, then len slot indexes
 *   nproc, then per process of the block's calls of every op: u8 flags
 *       (1 pid NULL, 2 some call has a dur), zigzag pid (if not NULL),
 *       zigzag first entry, last entry less first, and with a dur the
 *       zigzag sum of durs and latest end (entry + dur)
 *   nrec, hlen, then hlen bytes of record heads (sorted by comm, seq; the
 *       comm is its pattern's slots'): pattern, zigzag seq less the last
 *       record's, zigzag first less the last record's (0 before the
 *       first); then per record, per call of its pattern, its entry less
 *       first (one of them 0)
 * With 8 ranks a host and one op and size a record, a call costs its
 * offset: 2-3 bytes of jitter in ns. */
#define GR_ARR_TABLE "nccl_arr"
extern const char gr_arr_ddl[];

/* After gr_coll_builder__encode() (same cols and n) gave records: encodes
 * their calls' arrivals into out.  Returns 0 or -ENOMEM. */
int gr_coll_builder__arrivals(struct gr_coll_builder *b,
			      const struct gr_colbuf *cols, uint32_t n,
			      struct gr_buf *out);

/* A parsed nccl_arr payload; gr_arr__next() walks its records.  NULL
 * values are GR_COLL_NULL. */
struct gr_arr_slot {
	int64_t comm, pid, rank, nranks, op, bytes;
};
struct gr_arr_proc {
	int64_t pid, min_ts, max_ts, sumdur, maxend;
	int has_dur;
};
struct gr_arr {
	uint32_t nslot, npat, nproc, nrec, maxlen;
	struct gr_arr_slot *slot;
	uint32_t *pat;		/* npat + 1 starts into pats */
	uint32_t *pats;
	struct gr_arr_proc *proc;
	const uint8_t *p, *hend; /* the record heads not yet walked */
	const uint8_t *q, *end;	/* their entries */
	uint32_t left;
	int64_t seq, first;
	uint32_t cap[4];
};
struct gr_arr_rec {
	int64_t comm, seq, first;
	uint32_t n;
	const uint32_t *slots;	/* n slot indexes */
};
/* Parses payload [p, p + len) into a (reused; gr_arr__free() frees).
 * Returns 0, -EINVAL if malformed, or -ENOMEM. */
int gr_arr__parse(struct gr_arr *a, const uint8_t *p, size_t len);
/* The next record into r, and its calls' entries into ts (a->maxlen fit)
 * unless ts is NULL: a walk without them reads the heads alone.  Returns
 * 1, 0 after the last (the payload wholly read), or -EINVAL. */
int gr_arr__next(struct gr_arr *a, struct gr_arr_rec *r, int64_t *ts);
void gr_arr__free(struct gr_arr *a);

struct gr_segment;
/* Whether s keeps arrivals for its nccl block id whose checksum is crc
 * (reads the row's crc, not its payload). */
int gr_arr__has(struct gr_segment *s, int64_t id, uint32_t crc);
/* The arrivals payload s keeps for block id of checksum crc, if its own
 * checksum holds (with verify; else unchecked: a second read of a payload
 * checked before): 1 with *p, *len set (valid until gr_arr__done()), or
 * 0. */
int gr_arr__payload(struct gr_segment *s, int64_t id, uint32_t crc,
		    int verify, const uint8_t **p, size_t *len);
void gr_arr__done(struct gr_segment *s);

/* The collectives kept in segment s for its nccl block id whose checksum
 * is crc, parsed into blk (the caller's, reused across calls; its
 * payload stays valid until gr_coll__done() or the next call on s): 1, or
 * 0 where s has none that are whole (an older segment, a block without
 * them, a payload failing its own checksum or not GR_COLL_NCOLS wide). */
int gr_coll__payload(struct gr_segment *s, int64_t id, uint32_t crc,
		     struct gr_block *blk);
/* Done with the payload gr_coll__payload() parsed: releases its read. */
void gr_coll__done(struct gr_segment *s);

#endif
