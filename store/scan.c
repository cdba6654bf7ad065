/* scan.c - the scan cursor (scan.h): the one "blocks -> header -> column
 * map -> decode" loop that the event tables, the summary tables, status
 * and verify all read segments with.
 *
 * The columns a segment stores are matched to the schema by name when
 * the scan starts (segments record their own column list, so a column
 * added since the segment was written reads as absent, not as another
 * column).  Buffers grow to the largest block seen and are kept across
 * restarts: a query scans thousands of segments with one scan.
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
};

struct gr_scan *gr_scan__new(void)
{
	struct gr_scan *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
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

/* Makes the buffers of the masked columns hold n rows.  Returns 0 or
 * -ENOMEM. */
static int ensure_cap(struct gr_scan *sc, uint32_t n)
{
	if (n <= sc->cap && (sc->mask & ~sc->cap_mask) == 0)
		return 0;
	uint32_t cap = n > sc->cap ? n : sc->cap;
	if (n > sc->cap)
		sc->cap_mask = 0;
	for (int i = 0; i < GR_MAX_COLS; i++) {
		if (!(sc->mask >> i & 1) || (sc->cap_mask >> i & 1))
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

/* Decodes the masked columns of the parsed block into b.  Returns 0,
 * -EILSEQ (a column does not decode) or -ENOENT (no dictionary). */
static int decode_columns(struct gr_scan *sc, struct gr_scan_block *b,
			  char **err)
{
	const struct gr_table *tab = &gr_tables[sc->t];
	struct gr_segment *s = sc->s;
	for (int i = 0; i < tab->ncols; i++) {
		b->v[i] = NULL;
		b->nulls[i] = NULL;
		if (!(sc->mask >> i & 1) || tab->cols[i].type == GR_HOST)
			continue;
		int col = s->colmap[sc->t][i], has_nulls = 0;
		if (col < 0 || col >= (int)sc->blk.ncols)
			continue;
		if (gr_decoder__column(sc->dec, &sc->blk, col, sc->cv[i],
				       sc->cn[i], &has_nulls))
			return -EILSEQ;
		b->v[i] = sc->cv[i];
		b->nulls[i] = has_nulls ? sc->cn[i] : NULL;
		if (tab->cols[i].type == GR_STR && !s->dict &&
		    gr_segment__load_dict(s, err))
			return -ENOENT;
	}
	return 0;
}

int gr_scan__next(struct gr_scan *sc, struct gr_scan_block *b, char **err)
{
	struct gr_blockref br;
	if (!sc->s)
		return 0;
	int rc = gr_segment__next_block(sc->s, &br, err);
	if (rc <= 0) {
		if (rc == -EBADMSG)
			b->id = br.id;
		else
			sc->s = NULL;
		return rc;
	}
	b->id = br.id;
	b->nrows = 0;
	if (gr_block__parse(&sc->blk, br.payload, br.len) ||
	    sc->blk.nrows != (uint64_t)br.count)
		return -EPROTO;
	if (ensure_cap(sc, sc->blk.nrows))
		return -ENOMEM;
	if ((rc = decode_columns(sc, b, err)))
		return rc;
	b->nrows = sc->blk.nrows;
	return 1;
}
