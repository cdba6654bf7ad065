/* scan.c - the scan cursor (scan.h): the one "blocks -> header -> column
 * map -> decode" loop that the event tables, the summary tables, status
 * and verify all read segments with.
 *
 * The columns a segment stores are matched to the schema by name when
 * the scan starts (segments record their own column list, so a column
 * added since the segment was written reads as absent, not as another
 * column).  Buffers grow to the largest block seen and are kept across
 * restarts: a query scans thousands of segments with one scan.
 *
 * The last block decoded stays decoded: a restart on the same open
 * segment and table that comes to it again (a join or correlated
 * subquery looking up one time range after another) gets its columns
 * back without reading, checking or decoding it, as long as they are
 * among those decoded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/codec.h"
#include "store/scan.h"
#include "store/segment.h"

struct gr_scan {
	struct gr_segment *s;
	int t;                        /* the table */
	uint64_t mask;                /* columns to decode */
	struct gr_block blk;
	struct gr_decoder *dec;
	int64_t *cv[GR_MAX_COLS];     /* decoded values, by schema column */
	uint8_t *cn[GR_MAX_COLS];     /* null bitmaps */
	uint32_t cap;                 /* rows the buffers of mask hold */
	uint64_t cap_mask;            /* columns whose buffers hold cap */
	/* The block the buffers hold: valid where held_mask is non-zero. */
	uint64_t held_serial;         /* its segment's open (segment.h) */
	int held_t;
	int64_t held_id;
	uint32_t held_nrows;
	uint64_t held_mask;           /* columns decoded */
	uint64_t held_nulls;          /* of those, the ones with nulls */
	/* The held block's rows ordered by column order_col, where
	 * order_col >= 0; sel: a gr_scan__rows_between() answer. */
	int order_col;
	uint32_t *order, *sel;
	uint32_t order_cap;
	gr_scan_skip_fn skip;
	void *skip_ctx;
};

void gr_scan__set_skip(struct gr_scan *sc, gr_scan_skip_fn fn, void *ctx)
{
	sc->skip = fn;
	sc->skip_ctx = ctx;
}

struct gr_scan *gr_scan__new(void)
{
	struct gr_scan *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	sc->order_col = -1;
	if (!(sc->dec = gr_decoder__new())) {
		free(sc);
		errno = ENOMEM;
		return NULL;
	}
	return sc;
}

void gr_scan__free(struct gr_scan *sc)
{
	if (!sc)
		return;
	gr_block__free(&sc->blk);
	gr_decoder__free(sc->dec);
	free(sc->order);
	free(sc->sel);
	for (int i = 0; i < GR_MAX_COLS; i++) {
		free(sc->cv[i]);
		free(sc->cn[i]);
	}
	free(sc);
}

int gr_scan__start(struct gr_scan *sc, struct gr_segment *s, int t,
		   int64_t lo, int64_t hi, uint64_t mask, char **err)
{
	int rc;
	sc->s = NULL;
	if ((rc = gr_segment__load_colmap(s, t, err)) ||
	    (rc = gr_segment__blocks(s, gr_tables[t].name, lo, hi, err)))
		return rc;
	sc->s = s;
	sc->t = t;
	sc->mask = mask;
	return 0;
}

/* Makes the buffers of the columns of mask hold n rows.  Returns 0 or
 * -ENOMEM. */
static int ensure_cap(struct gr_scan *sc, uint32_t n, uint64_t mask)
{
	if (n <= sc->cap && (mask & ~sc->cap_mask) == 0)
		return 0;
	uint32_t cap = n > sc->cap ? n : sc->cap;
	if (n > sc->cap)
		sc->cap_mask = 0;
	for (int i = 0; i < GR_MAX_COLS; i++) {
		if (!(mask >> i & 1) || (sc->cap_mask >> i & 1))
			continue;
		int64_t *v = realloc(sc->cv[i], (size_t)cap * sizeof(int64_t));
		if (v)
			sc->cv[i] = v;
		uint8_t *b = realloc(sc->cn[i], (size_t)(cap + 7) / 8);
		if (b)
			sc->cn[i] = b;
		if (!v || !b)
			return -ENOMEM;
		sc->cap_mask |= 1ull << i;
	}
	sc->cap = cap;
	return 0;
}

/* Decodes the columns of mask of the parsed block into the buffers,
 * noting in held_nulls those with nulls.  Returns 0, -EILSEQ (a column
 * does not decode) or -ENOENT (no dictionary). */
static int decode_columns(struct gr_scan *sc, uint64_t mask, char **err)
{
	const struct gr_table *tab = &gr_tables[sc->t];
	struct gr_segment *s = sc->s;
	sc->held_nulls = 0;
	for (int i = 0; i < tab->ncols; i++) {
		if (!(mask >> i & 1) || tab->cols[i].type == GR_HOST)
			continue;
		int col = s->colmap[sc->t][i], has_nulls = 0;
		if (col < 0 || col >= (int)sc->blk.ncols)
			continue;
		if (gr_decoder__column(sc->dec, &sc->blk, col, sc->cv[i],
				       sc->cn[i], &has_nulls))
			return -EILSEQ;
		if (has_nulls)
			sc->held_nulls |= 1ull << i;
		if (tab->cols[i].type == GR_STR && !s->dict &&
		    gr_segment__load_dict(s, err))
			return -ENOENT;
	}
	return 0;
}

/* Points b at the held block's masked columns. */
static void held_columns(struct gr_scan *sc, struct gr_scan_block *b)
{
	const struct gr_table *tab = &gr_tables[sc->t];
	const int8_t *map = sc->s->colmap[sc->t];
	for (int i = 0; i < tab->ncols; i++) {
		int has = (sc->mask >> i & 1) && tab->cols[i].type != GR_HOST &&
			  map[i] >= 0 && map[i] < (int)sc->blk.ncols;
		b->v[i] = has ? sc->cv[i] : NULL;
		b->nulls[i] = has && (sc->held_nulls >> i & 1) ? sc->cn[i]
							       : NULL;
	}
	b->nrows = sc->held_nrows;
}

int gr_scan__next(struct gr_scan *sc, struct gr_scan_block *b, char **err)
{
	struct gr_blockref br;
	if (!sc->s)
		return 0;
	int same = sc->held_mask && sc->held_serial == sc->s->serial &&
		   sc->held_t == sc->t;
	int holds = same && !(sc->mask & ~sc->held_mask);
	int rc;
	for (;;) {
		rc = gr_segment__next_header(sc->s, &br, err);
		if (rc <= 0 || !sc->skip)
			break;
		struct gr_scan_hdr h = {
			.id = br.id, .count = br.count, .ts_min = br.ts_min,
			.ts_max = br.ts_max, .crc = br.crc,
		};
		if (!sc->skip(sc->skip_ctx, sc->s, &h))
			break;
	}
	if (rc > 0 && holds && br.id == sc->held_id) {
		/* Checked when it was read; blocks never change. */
		b->id = br.id;
		held_columns(sc, b);
		b->again = 1;
		return 1;
	}
	if (rc > 0)
		rc = gr_segment__block_payload(sc->s, &br, err);
	if (rc <= 0) {
		if (rc == -EBADMSG)
			b->id = br.id;
		else
			sc->s = NULL;
		return rc;
	}
	/* The held block again, wanted for other columns: decode those it
	 * had too, so that lookups alternating between them decode once. */
	uint64_t mask = sc->mask;
	if (same && br.id == sc->held_id)
		mask |= sc->held_mask;
	b->id = br.id;
	b->nrows = 0;
	b->again = 0;
	sc->held_mask = 0;
	sc->order_col = -1;
	if (gr_block__parse(&sc->blk, br.payload, br.len) ||
	    sc->blk.nrows != (uint64_t)br.count)
		return -EPROTO;
	if (ensure_cap(sc, sc->blk.nrows, mask))
		return -ENOMEM;
	if ((rc = decode_columns(sc, mask, err)))
		return rc;
	/* Only a wholly decoded block is held; an empty mask holds none. */
	sc->held_serial = sc->s->serial;
	sc->held_t = sc->t;
	sc->held_id = br.id;
	sc->held_nrows = sc->blk.nrows;
	sc->held_mask = mask;
	held_columns(sc, b);
	return 1;
}

/* qsort_r's order of row indexes by the values they index. */
static int by_value(const void *a, const void *b, void *v)
{
	const int64_t *x = v;
	int64_t p = x[*(const uint32_t *)a], q = x[*(const uint32_t *)b];
	return (p > q) - (p < q);
}

static int by_index(const void *a, const void *b)
{
	uint32_t p = *(const uint32_t *)a, q = *(const uint32_t *)b;
	return (p > q) - (p < q);
}

int gr_scan__rows_between(struct gr_scan *sc, int col, int64_t lo,
			  int64_t hi, const uint32_t **rows, uint32_t *n)
{
	uint32_t nr = sc->held_nrows;
	if (!sc->held_mask || !(sc->held_mask >> col & 1) ||
	    (sc->held_nulls >> col & 1) || !sc->s ||
	    sc->s->colmap[sc->t][col] < 0 ||
	    sc->s->colmap[sc->t][col] >= (int)sc->blk.ncols)
		return 1;
	const int64_t *v = sc->cv[col];
	if (sc->order_col != col) {
		if (nr > sc->order_cap) {
			uint32_t *o = realloc(sc->order, nr * sizeof(*o));
			uint32_t *q = o ? realloc(sc->sel, nr * sizeof(*q)) : NULL;
			if (o)
				sc->order = o;
			if (q)
				sc->sel = q;
			if (!o || !q)
				return -ENOMEM;
			sc->order_cap = nr;
		}
		for (uint32_t i = 0; i < nr; i++)
			sc->order[i] = i;
		qsort_r(sc->order, nr, sizeof(*sc->order), by_value,
			(void *)v);
		sc->order_col = col;
	}
	/* The first ordered row at or above lo, and the first above hi. */
	uint32_t a = 0, z = nr;
	while (a < z) {
		uint32_t m = a + (z - a) / 2;
		if (v[sc->order[m]] < lo)
			a = m + 1;
		else
			z = m;
	}
	uint32_t e = a;
	z = nr;
	while (e < z) {
		uint32_t m = e + (z - e) / 2;
		if (v[sc->order[m]] <= hi)
			e = m + 1;
		else
			z = m;
	}
	memcpy(sc->sel, sc->order + a, (size_t)(e - a) * sizeof(*sc->sel));
	qsort(sc->sel, e - a, sizeof(*sc->sel), by_index);
	*rows = sc->sel;
	*n = e - a;
	return 0;
}
