/* codec.h - the block format: one table's events as compressed columns.
 *
 * A block holds up to a few ten thousand events of one table.  Each stored
 * column is an array of int64 (strings are dictionary ids) plus an optional
 * null bitmap, encoded on its own so a reader decompresses only the columns
 * a query touches:
 *
 *   payload  := u8 version, varint nrows, varint ncols, colhdr*ncols, data*
 *   colhdr   := u8 flags, varint raw_len, varint stored_len [, varint value]
 *   data     := zstd frame (flags & ZSTD) or raw bytes, stored_len long;
 *               raw = [null bitmap, (nrows+7)/8 bytes] [u8 width, planes]
 *
 * flags & 3 is the value encoding: PLAIN (zigzag values), DELTA (zigzag of
 * the difference to the previous row: timestamps, ids, pointers) or CONST
 * (every row holds the one value in the header, no data).  The encoder
 * picks whichever needs fewer bits per column per block, so the schema
 * carries no encoding hints.
 *
 * Values are stored as byte planes: `width` bytes per value, all rows'
 * lowest bytes first, then all second bytes, and so on (Blosc's
 * "shuffle").  Jittered nanosecond timestamps and durations have random
 * low bytes and nearly constant high ones; separated, zstd squeezes the
 * high planes to almost nothing, where interleaved varints hide them.
 * Measured on the synthetic launch stream: ts 2.15 -> 1.87 B/event.
 * A compressed column's frame ends a zstd block where each plane ends,
 * so that each plane has entropy tables of its own (codec.c,
 * compress_planes()); any zstd decoder reads it.
 */
#ifndef GR_CODEC_H
#define GR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#define GR_BLOCK_VERSION 1
/* Rows a block may hold.  The writer fills 65536 by default; a reader
 * sizes int64 arrays by a block's row count before decoding it, so a
 * block claiming billions of rows in a few bytes (CONST columns need no
 * data) must be refused, not allocated (found by tests/fuzz/fuzz_block). */
#define GR_BLOCK_MAX_ROWS (1u << 20)

enum {
	GR_ENC_PLAIN = 0,
	GR_ENC_DELTA = 1,
	GR_ENC_CONST = 2,
	GR_ENC_MASK = 3,
	GR_ENC_NULLS = 4, /* a null bitmap precedes the values */
	GR_ENC_ZSTD = 8,  /* data is a zstd frame */
	GR_ENC_FLAGS = 15,
};

/* One column's values while a block is being filled. */
struct gr_colbuf {
	int64_t *v;     /* values; 0 in null rows */
	uint8_t *nulls; /* bitmap, bit set = NULL; NULL when no row is null */
};

/* A growable byte buffer. */
struct gr_buf {
	uint8_t *p;
	size_t len, cap;
};

/* Returns 0, or -ENOMEM. */
int gr_buf__reserve(struct gr_buf *b, size_t extra);
void gr_buf__free(struct gr_buf *b);

struct gr_encoder;

/* Returns an encoder using zstd level `level`, or NULL with errno set. */
struct gr_encoder *gr_encoder__new(int level);
void gr_encoder__free(struct gr_encoder *e);

/* Encodes nrows rows of ncols columns into out (replacing its content),
 * row i of the block being row perm[i] of the buffers (perm NULL: the
 * identity).  A column zstd fails on is stored raw.  Returns 0 or
 * -ENOMEM. */
int gr_encoder__encode(struct gr_encoder *e, const struct gr_colbuf *cols,
		       int ncols, uint32_t nrows, const uint32_t *perm,
		       struct gr_buf *out);

/* A parsed block header; column data is decoded on demand. */
struct gr_block {
	const uint8_t *payload;
	size_t len;
	uint32_t nrows;
	int ncols;
	struct gr_blockcol {
		uint8_t flags;
		uint64_t raw_len, stored_len;
		int64_t value; /* CONST */
		size_t off;    /* of the data in payload */
	} *cols;
	int cols_cap;
};

/* Parses a payload's header into blk (which owns an array reused across
 * calls; zero it first).  Returns 0, -EINVAL for a malformed payload, or
 * -ENOMEM. */
int gr_block__parse(struct gr_block *blk, const uint8_t *p, size_t len);
void gr_block__free(struct gr_block *blk);

struct gr_decoder;

struct gr_decoder *gr_decoder__new(void);
void gr_decoder__free(struct gr_decoder *d);

/* Decodes column c of blk into out[0..nrows) and, if the column has nulls,
 * its bitmap into nulls[0..(nrows+7)/8) (zeroed otherwise); *has_nulls says
 * which.  Returns 0, or -EINVAL for corrupt data, -ENOMEM. */
int gr_decoder__column(struct gr_decoder *d, const struct gr_block *blk,
		       int c, int64_t *out, uint8_t *nulls, int *has_nulls);

/* The checksum a block row carries: CRC-32 over the payload, the table
 * name and the header fields, so a changed byte anywhere in the row shows. */
uint32_t gr_block_crc(const char *table, int64_t ts_min, int64_t ts_max,
		      int64_t count, const void *payload, size_t len);

/* Varint helpers, shared with tests. */
static inline uint64_t gr_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t gr_unzigzag(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline size_t gr_varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline int gr_varint_size(uint64_t v)
{
	int n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Reads a varint from [*p, end); returns 0, or -EINVAL if it runs off the
 * end or is longer than 10 bytes. */
static inline int gr_varint_get(const uint8_t **p, const uint8_t *end,
				uint64_t *out)
{
	uint64_t v = 0;
	const uint8_t *q = *p;
	for (int shift = 0; shift < 70; shift += 7) {
		if (q >= end)
			return -22;
		uint8_t b = *q++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = v;
			return 0;
		}
	}
	return -22;
}

#endif
