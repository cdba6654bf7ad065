/* scan.h - the scan cursor: a segment's events as decoded columns.
 *
 * Given an open segment, a table, a time window and a column mask, a scan
 * walks the table's blocks that overlap the window, checks each block's
 * checksum and header, and decodes the masked columns, loading the
 * segment's dictionary when a string column is decoded (its strings come
 * from gr_segment__dict()).  Rows are not filtered by the window: a block
 * overlapping it is returned whole, and callers test ts themselves.
 *
 * One scan may be restarted on many segments in turn; its buffers and
 * decoder are kept across restarts.
 */
#ifndef GR_SCAN_H
#define GR_SCAN_H

#include <stdint.h>

#include "store/store.h"

struct gr_scan;

/* Returns a scan, or NULL with errno set. */
struct gr_scan *gr_scan__new(void);
void gr_scan__free(struct gr_scan *sc);

/* Starts a scan of table t's blocks in s overlapping [lo, hi], decoding
 * the columns in mask (bit i: column i of gr_tables[t]; HOST columns are
 * never decoded).  Returns 0, or -EINVAL / -EIO with *err set. */
int gr_scan__start(struct gr_scan *sc, struct gr_segment *s, int t,
		   int64_t lo, int64_t hi, uint64_t mask, char **err);

/* One block's decoded columns, valid until the next call on the scan. */
struct gr_scan_block {
	int64_t id;                        /* the block's id in its segment */
	uint32_t nrows;
	/* By column of the table: values, or NULL where the column is not
	 * in the mask, is HOST, or is absent from this segment. */
	const int64_t *v[GR_MAX_COLS];
	/* Null bitmaps (bit r of byte r/8), NULL where no row is NULL. */
	const uint8_t *nulls[GR_MAX_COLS];
	int again;                         /* the block held, not decoded */
};

/* A block's header row, before its payload is read. */
struct gr_scan_hdr {
	int64_t id, count, ts_min, ts_max;
	uint32_t crc;
};
/* Asked of every block the scan reaches, before reading its payload:
 * non-zero skips it (the caller answered for it some other way). */
typedef int (*gr_scan_skip_fn)(void *ctx, struct gr_segment *s,
			       const struct gr_scan_hdr *h);
/* Sets (fn NULL: clears) the skip test; it stays across restarts. */
void gr_scan__set_skip(struct gr_scan *sc, gr_scan_skip_fn fn, void *ctx);

/* Steps to the next block.  Returns 1 with *b filled, or 0 at the end.
 * Errors that skip one block (b->id set; the next call goes on):
 *   -EBADMSG  the block fails its checksum (*err says so);
 *   -EPROTO   its header is malformed or disagrees with its row count;
 *   -EILSEQ   a masked column does not decode;
 *   -ENOENT   the dictionary cannot be loaded (*err says why).
 * Errors that end the scan: -EIO or -EBUSY (*err set), -ENOMEM.  *err is
 * malloc'd; the caller frees it. */
int gr_scan__next(struct gr_scan *sc, struct gr_scan_block *b, char **err);

/* The rows of the block last returned whose column col (decoded, without
 * nulls) lies in [lo, hi], in row order: *rows (n of them) stays valid
 * until the next call on the scan.  Sorts the block's values once, so it
 * pays for a block looked into again and again (again set), not for one
 * read once.  Returns 0, 1 where col is not decoded or has nulls (the
 * caller tests every row), or -ENOMEM. */
int gr_scan__rows_between(struct gr_scan *sc, int col, int64_t lo,
			  int64_t hi, const uint32_t **rows, uint32_t *n);

#endif
