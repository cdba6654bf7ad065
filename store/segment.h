/* segment.h - the inside of an open segment, private to store/.
 *
 * query/ sees struct gr_segment as opaque (store.h) and reads events
 * through the scan cursor (scan.h); the block walk, the stored-column map
 * and the SQLite handle stay here, so that only store/ knows a segment's
 * tables (`blocks`, `columns`, `dict`, `summary`, `meta`).
 */
#ifndef GR_SEGMENT_H
#define GR_SEGMENT_H

#include "store/store.h"

struct gr_segment {
	struct gr_segment_info info;
	int walview;                  /* read from memory (walview.c) */
	void *db;                     /* sqlite3 *, read-only */
	/* Per table: stored column index of each schema column, or -1. */
	int8_t colmap[GR_NTABLES][GR_MAX_COLS];
	int colmap_loaded[GR_NTABLES];
	struct gr_dict *dict;         /* loaded on first use, or NULL */
	void *blocks_stmt;            /* sqlite3_stmt *: the blocks' headers */
	void *payload_stmt;           /* sqlite3_stmt *: one block's payload */
	void *coll_stmt;              /* sqlite3_stmt *: nccl_coll's row */
	int coll_absent;              /* the segment has no nccl_coll */
	void *arr_stmt;               /* sqlite3_stmt *: nccl_arr's row */
	void *arr_has_stmt;           /* sqlite3_stmt *: its crc alone */
	int arr_absent;               /* the segment has no nccl_arr */
	char cur_table[64];           /* table the blocks stmt walks */
	/* Unique to this open in the process: a scan keeps a decoded block
	 * under it (an address may be reused by the next open). */
	uint64_t serial;
};

/* Loads the stored-column map of table t.  Returns 0 or -EINVAL. */
int gr_segment__load_colmap(struct gr_segment *s, int t, char **err);

/* Starts iterating table t's blocks overlapping [lo, hi].  Returns 0 or
 * -EIO with *err set. */
int gr_segment__blocks(struct gr_segment *s, const char *table, int64_t lo,
		       int64_t hi, char **err);

struct gr_blockref {
	int64_t id, count, ts_min, ts_max;
	uint32_t crc;           /* as its row has it */
	const uint8_t *payload; /* valid until the next call */
	size_t len;
};

/* Steps to the next block: returns 1 with *b filled, 0 at the end, or
 * -EIO (read error) / -EBUSY (locked) / -EBADMSG (checksum mismatch, b->id
 * set) with *err set. */
int gr_segment__next_block(struct gr_segment *s, struct gr_blockref *b,
			   char **err);
/* The same, but a block whose id is held_id comes back with payload NULL
 * and len 0, unread and unchecked: the caller holds it decoded already. */
int gr_segment__next_block_unless(struct gr_segment *s, struct gr_blockref *b,
				  int64_t held_id, char **err);
/* gr_segment__next_block() in two steps: the next block's header row
 * (payload NULL), then its payload, read and checked (-EBADMSG). */
int gr_segment__next_header(struct gr_segment *s, struct gr_blockref *b,
			    char **err);
int gr_segment__block_payload(struct gr_segment *s, struct gr_blockref *b,
			      char **err);

#endif
