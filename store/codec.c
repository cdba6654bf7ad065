/* codec.c - encodes and decodes blocks (see codec.h for the format).
 *
 * The encoder runs on the recorder's hot path once per block, so it makes
 * one pass per column to size the three encodings, one pass to write the
 * winner, and one zstd call; buffers live in the encoder and are reused.
 * The decoder is written for the scan loop: it decompresses straight into
 * a reusable scratch buffer and expands varints into int64 arrays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "store/codec.h"

/* Byte planes are defined on little-endian values. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the block format's byte planes assume a little-endian host");

int gr_buf__reserve(struct gr_buf *b, size_t extra)
{
	if (b->len + extra <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

void gr_buf__free(struct gr_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Rows from which each byte plane gets a zstd block of its own: below,
 * a block's entropy tables cost more than a plane's own statistics save
 * (gpu, process tables: +11 to +23 % each on the busy day's 10 minutes,
 * against -8 % for launches). */
#define CUT_MIN_ROWS 1024

struct gr_encoder {
	ZSTD_CCtx *zc;
	struct gr_buf raw; /* one column, before compression */
	struct gr_buf data; /* every column's stored bytes */
	uint64_t *zz;       /* zigzagged values of one column */
	int64_t *gather;    /* one column in block order */
	uint8_t *nulls;     /* its null bitmap */
	uint32_t zz_cap;
	/* Where e->raw's byte planes end (the first also holds the bitmap
	 * and width byte before it): zstd ends a block at each. */
	size_t cut[8];
	int ncut;
};

struct gr_encoder *gr_encoder__new(int level)
{
	struct gr_encoder *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->zc = ZSTD_createCCtx();
	if (!e->zc) {
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(e->zc, ZSTD_c_compressionLevel,
						 level))) {
		ZSTD_freeCCtx(e->zc);
		free(e);
		errno = EINVAL;
		return NULL;
	}
	return e;
}

void gr_encoder__free(struct gr_encoder *e)
{
	if (!e)
		return;
	ZSTD_freeCCtx(e->zc);
	gr_buf__free(&e->raw);
	gr_buf__free(&e->data);
	free(e->zz);
	free(e->gather);
	free(e->nulls);
	free(e);
}

static inline int is_null(const uint8_t *nulls, uint32_t i)
{
	return nulls && (nulls[i >> 3] >> (i & 7)) & 1;
}

static inline int bits(uint64_t u)
{
	return u ? 64 - __builtin_clzll(u) : 0;
}

/* Chooses the encoding for one column; for CONST also returns its value.
 * Constancy is checked on every row; the bit cost of PLAIN versus DELTA is
 * estimated on every 4th row, which picks the same winner on real streams
 * at a quarter of the cost (this runs for every column of every block). */
static int choose_encoding(const struct gr_colbuf *c, uint32_t n,
			   int64_t *cval)
{
	uint64_t plain = 0, delta = 0;
	int64_t first = c->v[0];
	uint64_t diff = 0;
	for (uint32_t i = 0; i < n; i++)
		diff |= (uint64_t)(c->v[i] ^ first);
	if (!diff) {
		*cval = first;
		return GR_ENC_CONST;
	}
	for (uint32_t i = 4; i < n; i += 4) {
		int64_t v = c->v[i];
		plain += (uint64_t)bits(gr_zigzag(v));
		delta += (uint64_t)bits(gr_zigzag((int64_t)((uint64_t)v -
						(uint64_t)c->v[i - 1])));
	}
	if (n < 8)
		return GR_ENC_PLAIN;
	return delta < plain ? GR_ENC_DELTA : GR_ENC_PLAIN;
}

static int has_any_null(const struct gr_colbuf *c, uint32_t n)
{
	if (!c->nulls)
		return 0;
	for (uint32_t i = 0; i < (n + 7) / 8; i++)
		if (c->nulls[i])
			return 1;
	return 0;
}

/* Grows the encoder's per-row scratch to nrows.  Returns 0 or -ENOMEM. */
static int scratch_reserve(struct gr_encoder *e, uint32_t nrows)
{
	if (nrows <= e->zz_cap)
		return 0;
	uint64_t *z = realloc(e->zz, nrows * sizeof(*z));
	int64_t *g = realloc(e->gather, nrows * sizeof(*g));
	uint8_t *nb = realloc(e->nulls, (nrows + 7) / 8);
	if (z)
		e->zz = z;
	if (g)
		e->gather = g;
	if (nb)
		e->nulls = nb;
	if (!z || !g || !nb)
		return -ENOMEM;
	e->zz_cap = nrows;
	return 0;
}

/* Gathers column col in block order (row i is col's row perm[i]) into
 * the encoder's scratch, described by *pc. */
static void gather_column(struct gr_encoder *e, const struct gr_colbuf *col,
			  uint32_t nrows, const uint32_t *perm,
			  struct gr_colbuf *pc)
{
	pc->v = e->gather;
	for (uint32_t i = 0; i < nrows; i++)
		pc->v[i] = col->v[perm[i]];
	pc->nulls = NULL;
	if (!has_any_null(col, nrows))
		return;
	pc->nulls = e->nulls;
	memset(pc->nulls, 0, (nrows + 7) / 8);
	for (uint32_t i = 0; i < nrows; i++) {
		uint32_t k = perm[i];
		if ((col->nulls[k >> 3] >> (k & 7)) & 1)
			pc->nulls[i >> 3] |= (uint8_t)(1u << (i & 7));
	}
}

/* Appends col's values (PLAIN or DELTA) to e->raw as byte planes: the
 * width, then plane b holding byte b of every zigzagged value.  e->raw
 * has room for 1 + 8 * nrows more bytes. */
static void put_planes(struct gr_encoder *e, const struct gr_colbuf *col,
		       uint32_t nrows, int enc)
{
	/* Zigzag into the scratch, find the width, then scatter. */
	uint64_t *u = e->zz, all = 0;
	int64_t prev = 0;
	for (uint32_t i = 0; i < nrows; i++) {
		int64_t v = col->v[i];
		u[i] = enc == GR_ENC_DELTA ?
			gr_zigzag((int64_t)((uint64_t)v - (uint64_t)prev)) :
			gr_zigzag(v);
		all |= u[i];
		prev = v;
	}
	int width = (bits(all) + 7) / 8;
	uint8_t *p = e->raw.p + e->raw.len;
	const uint8_t *src = (const uint8_t *)u;
	*p++ = (uint8_t)width;
	/* Plane b is byte b of each little-endian value: a strided byte
	 * copy, no shifts. */
	for (int b = 0; b < width; b++) {
		for (uint32_t i = 0; i < nrows; i++)
			p[i] = src[8 * (size_t)i + b];
		p += nrows;
		/* Planes too short to pay for entropy tables of their own
		 * (a few rows of the 1 Hz tables) stay in one block. */
		if (nrows >= CUT_MIN_ROWS)
			e->cut[e->ncut++] = (size_t)(p - e->raw.p);
	}
	e->raw.len = (size_t)(p - e->raw.p);
}

/* Fills e->raw with one column's raw bytes: its null bitmap (when it has
 * nulls), then its planes (unless CONST).  Returns 0 or -ENOMEM. */
static int raw_column(struct gr_encoder *e, const struct gr_colbuf *col,
		      uint32_t nrows, int enc, int nulls)
{
	size_t bitmap = nulls ? (nrows + 7) / 8 : 0;
	int err;
	e->raw.len = 0;
	e->ncut = 0;
	if (enc == GR_ENC_CONST && !nulls)
		return 0;
	size_t need = bitmap + 1 +
		      (enc == GR_ENC_CONST ? 0 : (size_t)nrows * 8);
	if ((err = gr_buf__reserve(&e->raw, need)))
		return err;
	if (nulls) {
		memcpy(e->raw.p, col->nulls, bitmap);
		/* Bits past nrows must not leak stale state. */
		if (nrows & 7)
			e->raw.p[bitmap - 1] &=
				(uint8_t)((1u << (nrows & 7)) - 1);
	}
	e->raw.len = bitmap;
	if (enc != GR_ENC_CONST)
		put_planes(e, col, nrows, enc);
	return 0;
}

/* Compresses e->raw into dst (cap bytes) as one zstd frame whose blocks
 * end where its byte planes do (ZSTD_e_flush at each cut): each plane
 * gets literal statistics of its own.  Compressed whole, a column of
 * 65,536 rows and 3 planes is 192 KB, cut into zstd's 128 KB blocks
 * wherever that falls, so a random low plane and a nearly constant high
 * one shared a Huffman table.  On a real H200 recording's launches (one
 * frame a plane, zstd -1): dur 1.78 -> 1.62 B, ts delta 2.18 -> 2.09 B.
 * It is an ordinary frame: readers are unchanged.  Returns its size, or
 * 0 where zstd fails or it does not fit (the caller then stores raw). */
static size_t compress_planes(struct gr_encoder *e, uint8_t *dst, size_t cap)
{
	ZSTD_outBuffer out = { dst, cap, 0 };
	size_t from = 0;
	int n = e->ncut ? e->ncut : 1;

	if (ZSTD_isError(ZSTD_CCtx_reset(e->zc, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(e->zc, e->raw.len)))
		return 0;
	for (int k = 0; k < n; k++) {
		size_t to = e->ncut ? e->cut[k] : e->raw.len;
		ZSTD_inBuffer in = { e->raw.p + from, to - from, 0 };
		ZSTD_EndDirective mode = k == n - 1 ? ZSTD_e_end : ZSTD_e_flush;
		size_t left;
		do {
			size_t was = out.pos;
			left = ZSTD_compressStream2(e->zc, &out, &in, mode);
			if (ZSTD_isError(left) ||
			    (left && out.pos == out.size) ||
			    (left && out.pos == was && in.pos == in.size)) {
				ZSTD_CCtx_reset(e->zc, ZSTD_reset_session_only);
				return 0;
			}
		} while (left);
		from = to;
	}
	return out.pos;
}

/* Appends e->raw to e->data, compressed unless it is too small to gain
 * or zstd does not shrink it.  Sets *stored to the bytes appended and
 * GR_ENC_ZSTD in *flags when compressed (a zstd failure stores it raw).
 * Returns 0 or -ENOMEM. */
static int store_column(struct gr_encoder *e, uint8_t *flags, size_t *stored)
{
	int err;
	*stored = e->raw.len;
	if (e->raw.len >= 64) {
		/* The bound, and spare room for a block header a cut. */
		size_t bound = ZSTD_compressBound(e->raw.len) + 8 * 3;
		if ((err = gr_buf__reserve(&e->data, bound)))
			return err;
		size_t z = compress_planes(e, e->data.p + e->data.len, bound);
		if (z && z < e->raw.len) {
			*flags |= GR_ENC_ZSTD;
			*stored = z;
		}
	}
	if (!(*flags & GR_ENC_ZSTD) && *stored) {
		if ((err = gr_buf__reserve(&e->data, *stored)))
			return err;
		memcpy(e->data.p + e->data.len, e->raw.p, *stored);
	}
	e->data.len += *stored;
	return 0;
}

/* Encodes one column: its data into e->data, its header onto out. */
static int encode_column(struct gr_encoder *e, const struct gr_colbuf *col,
			 uint32_t nrows, const uint32_t *perm,
			 struct gr_buf *out)
{
	struct gr_colbuf pc;
	uint8_t hdr[32];
	int64_t cval = 0;
	size_t stored;
	int err;

	if (perm) {
		gather_column(e, col, nrows, perm, &pc);
		col = &pc;
	}
	int nulls = has_any_null(col, nrows);
	int enc = nrows ? choose_encoding(col, nrows, &cval) : GR_ENC_CONST;
	uint8_t flags = (uint8_t)enc | (nulls ? GR_ENC_NULLS : 0);
	if ((err = raw_column(e, col, nrows, enc, nulls)) ||
	    (err = store_column(e, &flags, &stored)))
		return err;

	size_t h = 0;
	hdr[h++] = flags;
	h += gr_varint_put(hdr + h, e->raw.len);
	h += gr_varint_put(hdr + h, stored);
	if (enc == GR_ENC_CONST)
		h += gr_varint_put(hdr + h, gr_zigzag(cval));
	if ((err = gr_buf__reserve(out, h)))
		return err;
	memcpy(out->p + out->len, hdr, h);
	out->len += h;
	return 0;
}

int gr_encoder__encode(struct gr_encoder *e, const struct gr_colbuf *cols,
		       int ncols, uint32_t nrows, const uint32_t *perm,
		       struct gr_buf *out)
{
	int err;

	out->len = 0;
	e->data.len = 0;
	if ((err = scratch_reserve(e, nrows)) ||
	    (err = gr_buf__reserve(out, 32 + (size_t)ncols * 32)))
		return err;
	out->p[out->len++] = GR_BLOCK_VERSION;
	out->len += gr_varint_put(out->p + out->len, nrows);
	out->len += gr_varint_put(out->p + out->len, (uint64_t)ncols);
	for (int c = 0; c < ncols; c++)
		if ((err = encode_column(e, &cols[c], nrows, perm, out)))
			return err;
	if ((err = gr_buf__reserve(out, e->data.len)))
		return err;
	if (e->data.len)
		memcpy(out->p + out->len, e->data.p, e->data.len);
	out->len += e->data.len;
	return 0;
}

int gr_block__parse(struct gr_block *blk, const uint8_t *p, size_t len)
{
	const uint8_t *q = p, *end;
	uint64_t nrows, ncols;

	/* SQLite gives an empty or NULL payload as a NULL pointer, and NULL
	 * + 0 is undefined (found by tests/fuzz/fuzz_segment). */
	if (!p || len < 3 || *q++ != GR_BLOCK_VERSION)
		return -EINVAL;
	end = p + len;
	if (gr_varint_get(&q, end, &nrows) || gr_varint_get(&q, end, &ncols) ||
	    nrows > GR_BLOCK_MAX_ROWS || ncols > 1024)
		return -EINVAL;
	if ((int)ncols > blk->cols_cap) {
		void *c = realloc(blk->cols, ncols * sizeof(*blk->cols));
		if (!c)
			return -ENOMEM;
		blk->cols = c;
		blk->cols_cap = (int)ncols;
	}
	for (uint64_t c = 0; c < ncols; c++) {
		struct gr_blockcol *bc = &blk->cols[c];
		uint64_t v;
		if (q >= end)
			return -EINVAL;
		bc->flags = *q++;
		if ((bc->flags & GR_ENC_MASK) == 3 || bc->flags & ~GR_ENC_FLAGS)
			return -EINVAL;
		if (gr_varint_get(&q, end, &bc->raw_len) ||
		    gr_varint_get(&q, end, &bc->stored_len))
			return -EINVAL;
		bc->value = 0;
		if ((bc->flags & GR_ENC_MASK) == GR_ENC_CONST) {
			if (gr_varint_get(&q, end, &v))
				return -EINVAL;
			bc->value = gr_unzigzag(v);
		}
		/* A raw column holds at most 8 bytes a row, a width byte and
		 * its bitmap. */
		if (bc->raw_len > nrows * 8 + 1 + (nrows + 7) / 8)
			return -EINVAL;
		if (!(bc->flags & GR_ENC_ZSTD) && bc->stored_len != bc->raw_len)
			return -EINVAL;
	}
	size_t off = (size_t)(q - p);
	for (uint64_t c = 0; c < ncols; c++) {
		blk->cols[c].off = off;
		if (blk->cols[c].stored_len > len - off)
			return -EINVAL;
		off += blk->cols[c].stored_len;
	}
	if (off != len)
		return -EINVAL;
	blk->payload = p;
	blk->len = len;
	blk->nrows = (uint32_t)nrows;
	blk->ncols = (int)ncols;
	return 0;
}

void gr_block__free(struct gr_block *blk)
{
	free(blk->cols);
	memset(blk, 0, sizeof(*blk));
}

struct gr_decoder {
	ZSTD_DCtx *zd;
	struct gr_buf raw;
};

struct gr_decoder *gr_decoder__new(void)
{
	struct gr_decoder *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->zd = ZSTD_createDCtx();
	if (!d->zd) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void gr_decoder__free(struct gr_decoder *d)
{
	if (!d)
		return;
	ZSTD_freeDCtx(d->zd);
	gr_buf__free(&d->raw);
	free(d);
}

/* Row i's value from width byte planes of n bytes at q: one pass that
 * writes each value once, its width a constant in each copy of the loop
 * (so that the plain form vectorizes).  The zigzag is undone, and with
 * delta the differences summed. */
static inline __attribute__((always_inline)) int64_t
unplane_row(const uint8_t *q, unsigned w, uint32_t n, uint32_t i)
{
	uint64_t u = q[i];
	for (unsigned b = 1; b < w; b++)
		u |= (uint64_t)q[(size_t)b * n + i] << (8 * b);
	return gr_unzigzag(u);
}

#define UNPLANE_CASE(W)                                                    \
	case W:                                                            \
		if (delta) {                                               \
			uint64_t prev = 0;                                 \
			for (uint32_t i = 0; i < n; i++) {                 \
				prev += (uint64_t)unplane_row(q, W, n, i);       \
				out[i] = (int64_t)prev;                    \
			}                                                  \
		} else {                                                   \
			for (uint32_t i = 0; i < n; i++)                   \
				out[i] = unplane_row(q, W, n, i);                \
		}                                                          \
		break

static void unplane(const uint8_t *q, unsigned width, uint32_t n, int delta,
		    int64_t *out)
{
	switch (width) {
	case 0:
		memset(out, 0, (size_t)n * sizeof(*out));
		break;
	UNPLANE_CASE(1);
	UNPLANE_CASE(2);
	UNPLANE_CASE(3);
	UNPLANE_CASE(4);
	UNPLANE_CASE(5);
	UNPLANE_CASE(6);
	UNPLANE_CASE(7);
	UNPLANE_CASE(8);
	}
}

int gr_decoder__column(struct gr_decoder *d, const struct gr_block *blk,
		       int c, int64_t *out, uint8_t *nulls, int *has_nulls)
{
	const struct gr_blockcol *bc = &blk->cols[c];
	uint32_t n = blk->nrows;
	size_t bitmap = (bc->flags & GR_ENC_NULLS) ? (n + 7) / 8 : 0;
	const uint8_t *raw = blk->payload + bc->off;
	int enc = bc->flags & GR_ENC_MASK;

	if (bc->flags & GR_ENC_ZSTD) {
		d->raw.len = 0;
		if (gr_buf__reserve(&d->raw, bc->raw_len + 1))
			return -ENOMEM;
		size_t z = ZSTD_decompressDCtx(d->zd, d->raw.p, bc->raw_len, raw,
					       bc->stored_len);
		if (ZSTD_isError(z) || z != bc->raw_len)
			return -EINVAL;
		raw = d->raw.p;
	}
	if (bc->raw_len < bitmap)
		return -EINVAL;
	*has_nulls = bitmap != 0;
	if (nulls) {
		if (bitmap)
			memcpy(nulls, raw, bitmap);
		else
			memset(nulls, 0, (n + 7) / 8);
	}
	if (enc == GR_ENC_CONST) {
		if (bc->raw_len != bitmap)
			return -EINVAL;
		for (uint32_t i = 0; i < n; i++)
			out[i] = bc->value;
		return 0;
	}
	/* Byte planes: a width byte, then width planes of n bytes. */
	if (bc->raw_len < bitmap + 1)
		return -EINVAL;
	const uint8_t *q = raw + bitmap;
	unsigned width = *q++;
	if (width > 8 || bc->raw_len != bitmap + 1 + (uint64_t)width * n)
		return -EINVAL;
	unplane(q, width, n, enc == GR_ENC_DELTA, out);
	return 0;
}

uint32_t gr_block_crc(const char *table, int64_t ts_min, int64_t ts_max,
		      int64_t count, const void *payload, size_t len)
{
	uint8_t hdr[24];
	int64_t f[3] = { ts_min, ts_max, count };
	for (int i = 0; i < 3; i++)
		for (int b = 0; b < 8; b++)
			hdr[i * 8 + b] = (uint8_t)((uint64_t)f[i] >> (8 * b));
	uLong crc = crc32(0, (const Bytef *)table, (uInt)strlen(table));
	crc = crc32(crc, hdr, sizeof(hdr));
	/* zlib's crc32 takes uInt lengths; payloads are far below 4 GiB. */
	crc = crc32(crc, payload, (uInt)len);
	return (uint32_t)crc;
}
