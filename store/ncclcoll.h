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

struct gr_segment;
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
