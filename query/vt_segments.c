/* vt_segments.c - the `segments` table: one row per segment file of the
 * catalog, from the manifest where it knows the answer (unopened), else
 * from the segment's metadata, or for the open segment from its blocks.
 *
 * A sealed segment is opened only when the statement uses a column its
 * manifest line lacks (schema_version, prev_sha256 as the file has it):
 * the span checks of every windowed query (query/filters.c) read the
 * table, and over a fleet's thousands of segments opening each one cost
 * seconds before the query began.
 */
#include <stdlib.h>
#include <string.h>

#include "query/vtab.h"

struct segcur {
	sqlite3_vtab_cursor base;
	struct gr_qctx *q;
	int i;
	struct gr_segment *seg; /* metadata of row i, NULL if unreadable or
				 * not opened */
	int open_sealed;        /* the statement needs a sealed segment's own
				 * metadata (xBestIndex's idxNum) */
};

struct segvtab {
	sqlite3_vtab base;
	struct gr_qctx *q;
};

static int sv_connect(sqlite3 *db, void *aux, int argc,
		      const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)argc;
	(void)argv;
	(void)err;
	int rc = gr_vtab__declare(db, &gr_tables[GR_T_segments]);
	if (rc != SQLITE_OK)
		return rc;
	struct segvtab *v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->q = aux;
	*out = &v->base;
	return SQLITE_OK;
}

static int sv_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static int sv_best_index(sqlite3_vtab *v, sqlite3_index_info *ii)
{
	(void)v;
	ii->estimatedCost = 1000;
	ii->idxNum = (ii->colUsed &
		      ((1ULL << GR_segments_schema_version) |
		       (1ULL << GR_segments_prev_sha256))) != 0;
	return SQLITE_OK;
}

static int sv_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct segcur *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->q = ((struct segvtab *)v)->q;
	*out = &c->base;
	return SQLITE_OK;
}

static void sv_load(struct segcur *c)
{
	char *err = NULL;
	gr_segment__close(c->seg);
	c->seg = NULL;
	for (; c->i < c->q->cat.nsegs; c->i++) {
		const struct gr_catalog_seg *cs = &c->q->cat.segs[c->i];
		if (c->q->host && cs->sealed &&
		    strcmp(cs->m->host, c->q->host) != 0)
			continue;
		if (cs->sealed && !c->open_sealed)
			break;
		if (gr_segment__open(cs->path, cs->sealed, &c->seg, &err)) {
			gr_vtab__warn(c->q, c->i, "%s: %s", cs->path, err);
			free(err);
			err = NULL;
		} else {
			c->q->segments_opened++;
		}
		if (c->q->host && c->seg &&
		    strcmp(gr_segment__info(c->seg)->host, c->q->host)) {
			gr_segment__close(c->seg);
			c->seg = NULL;
			continue;
		}
		break;
	}
}

static int sv_filter(sqlite3_vtab_cursor *cur, int n, const char *s, int argc,
		     sqlite3_value **argv)
{
	struct segcur *c = (struct segcur *)cur;
	(void)s, (void)argc, (void)argv;
	c->open_sealed = n;
	c->i = 0;
	sv_load(c);
	return SQLITE_OK;
}

static int sv_next(sqlite3_vtab_cursor *cur)
{
	struct segcur *c = (struct segcur *)cur;
	c->i++;
	sv_load(c);
	return SQLITE_OK;
}

static int sv_eof(sqlite3_vtab_cursor *cur)
{
	struct segcur *c = (struct segcur *)cur;
	return c->i >= c->q->cat.nsegs;
}

/* start_ts, end_ts or events (column i): from the manifest, a sealed
 * segment's metadata, or the open segment's blocks. */
static void sv_span(sqlite3_context *ctx, const struct gr_catalog_seg *cs,
		    struct gr_segment *seg, int i)
{
	const struct gr_segment_info *s = seg ? gr_segment__info(seg) : NULL;
	int64_t v;
	if (cs->m) {
		v = i == GR_segments_start_ts ? cs->m->start_ts :
		    i == GR_segments_end_ts ? cs->m->end_ts :
		    (int64_t)cs->m->events;
	} else if (s && s->sealed) {
		v = i == GR_segments_start_ts ? s->start_ts :
		    i == GR_segments_end_ts ? s->end_ts : s->events;
	} else if (s) {
		/* The open segment: ask its blocks. */
		int64_t lo, hi, n;
		char *err = NULL;
		int rc = gr_segment__span(seg, &lo, &hi, &n, &err);
		free(err);
		if (rc < 0 || (rc == 0 && i != GR_segments_events))
			return; /* NULL */
		v = i == GR_segments_start_ts ? lo :
		    i == GR_segments_end_ts ? hi : n;
	} else {
		return;
	}
	sqlite3_result_int64(ctx, v);
}

static int sv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct segcur *c = (struct segcur *)cur;
	const struct gr_catalog_seg *cs = &c->q->cat.segs[c->i];
	const struct gr_segment_info *s = c->seg ? gr_segment__info(c->seg) : NULL;
	switch (i) {
	case GR_segments_host:
		if (s)
			sqlite3_result_text(ctx, s->host, -1, SQLITE_TRANSIENT);
		else if (cs->m)
			sqlite3_result_text(ctx, cs->m->host, -1,
					    SQLITE_TRANSIENT);
		break;
	case GR_segments_path:
		sqlite3_result_text(ctx, cs->path, -1, SQLITE_TRANSIENT);
		break;
	case GR_segments_start_ts:
	case GR_segments_end_ts:
	case GR_segments_events:
		sv_span(ctx, cs, c->seg, i);
		break;
	case GR_segments_bytes:
		sqlite3_result_int64(ctx, (sqlite3_int64)cs->bytes);
		break;
	case GR_segments_sealed:
		sqlite3_result_int(ctx, cs->sealed);
		break;
	case GR_segments_sha256:
		if (cs->m)
			sqlite3_result_text(ctx, cs->m->sha256, -1,
					    SQLITE_TRANSIENT);
		break;
	case GR_segments_prev_sha256:
		if (s && s->prev_sha256)
			sqlite3_result_text(ctx, s->prev_sha256, -1,
					    SQLITE_TRANSIENT);
		else if (cs->m)
			sqlite3_result_text(ctx, cs->m->prev, -1,
					    SQLITE_TRANSIENT);
		break;
	case GR_segments_schema_version:
		if (s)
			sqlite3_result_int(ctx, s->schema_version);
		break;
	}
	return SQLITE_OK;
}

static int sv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct segcur *)cur)->i;
	return SQLITE_OK;
}

static int sv_close(sqlite3_vtab_cursor *cur)
{
	struct segcur *c = (struct segcur *)cur;
	gr_segment__close(c->seg);
	sqlite3_free(c);
	return SQLITE_OK;
}

const sqlite3_module gr_vt_segments_module = {
	.iVersion = 0,
	.xCreate = sv_connect,
	.xConnect = sv_connect,
	.xBestIndex = sv_best_index,
	.xDisconnect = sv_disconnect,
	.xDestroy = sv_disconnect,
	.xOpen = sv_open,
	.xClose = sv_close,
	.xFilter = sv_filter,
	.xNext = sv_next,
	.xEof = sv_eof,
	.xColumn = sv_column,
	.xRowid = sv_rowid,
};
