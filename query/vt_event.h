/* vt_event.h - the event tables' scan, shared by vt_event.c (the virtual
 * table) and vt_grouped.c (grouped emission); private to query/.
 */
#ifndef GR_VT_EVENT_H
#define GR_VT_EVENT_H

#include "query/vtab.h"
#include "store/scan.h"

#define MAX_FILTERS 32

enum { OP_EQ, OP_GT, OP_LE, OP_LT, OP_GE, OP_NE };

struct vtab {
	sqlite3_vtab base;
	struct gr_qctx *q;
	int t;                               /* the table */
	int members[GR_NTABLES];             /* tables its scan reads */
	int nmembers;
	int8_t memcol[GR_NTABLES][GR_MAX_COLS]; /* column in member, or -1 */
	/* A closed cursor's scan (with the block it holds decoded) and its
	 * parked segment, for the next cursor: SQLite opens a cursor for
	 * each run of a correlated subquery. */
	struct gr_scan *spare_scan;
	struct gr_segment *spare_seg;
	int spare_si;
};

struct filt {
	int col, op;
	int64_t v;
};

struct grouped;

struct cursor {
	sqlite3_vtab_cursor base;
	struct vtab *vt;
	uint64_t need;                /* columns to decode */
	/* Up to MAX_FILTERS passed down, and the session's three. */
	struct filt f[MAX_FILTERS + 3];
	int nf;
	int64_t lo, hi;
	const char *host_eq;          /* host = '…' pushed down */
	int never;                    /* a filter no row can pass */

	int mi;                       /* member index */
	int si;                       /* catalog segment index */
	struct gr_segment *seg;
	/* The sealed segment the last scan ended in, left open for the
	 * next xFilter (a join's or subquery's next lookup) to reuse. */
	struct gr_segment *parked;
	int parked_si;
	const struct gr_dict *dict;   /* the segment's, once loaded */
	struct gr_dict **retired;     /* dictionaries of segments passed */
	int nretired, retired_cap;

	struct gr_scan *scan;
	/* The current block's columns, by column of the table. */
	const int64_t *cv[GR_MAX_COLS];
	const uint8_t *cn[GR_MAX_COLS]; /* null bitmaps, NULL: no nulls */
	int cmissing[GR_MAX_COLS];    /* column absent from this segment */
	uint32_t row, nrows;
	/* Where not NULL, the block's rows that pass every filter
	 * (select_rows()), in order: row is sel[isel].  selbuf holds them. */
	const uint32_t *sel;
	uint32_t nsel, isel;
	uint32_t *selbuf, selcap;
	int64_t block_id;             /* of the current block in its segment */
	int eof;

	struct grouped *g;            /* non-NULL: emitting rows grouped */
	/* A direct walk's share of the catalog: segments [si_first,
	 * si_end) (si_end 0: to the last). */
	int si_first, si_end;
};

/* vt_event.c: the row walk grouped emission drives. */
/* Moves to the next passing row at or after the current position.
 * Returns 1 there, 0 at the end of the scan, -ENOMEM, or -EINTR (stopped:
 * the session's q->stop). */
int gr_evscan__seek(struct cursor *c);
/* Steps past the row seek stopped at. */
static inline void gr_evscan__step(struct cursor *c)
{
	if (c->sel)
		c->isel++;
	else
		c->row++;
}
/* Starts the block walk over from the first member and segment. */
void gr_evscan__restart(struct cursor *c);
/* Row r's id in the current block (see vt_event.c). */
int64_t gr_evscan__row_id(const struct cursor *c, uint32_t r);

/* vt_grouped.c: rows emitted grouped by one column (GROUP BY col). */
/* Counts and plans the groups of column col for c's filters, setting
 * c->g.  Returns 0, -ENOMEM or -EINTR (stopped). */
int gr_grouped__start(struct cursor *c, int col, int desc);
void gr_grouped__free(struct grouped *g);
/* The scan left the segment whose dictionary ids g has mapped. */
void gr_grouped__segment_gone(struct grouped *g);
/* Advances to the next row to emit.  Returns 1, 0 at the end, -ENOMEM
 * or -EINTR (stopped). */
int gr_grouped__next(struct cursor *c, struct grouped *g);
/* Whether the current row is a buffered one (else: the cursor's row). */
int gr_grouped__emitting(const struct grouped *g);
/* Steps past the current buffered row. */
void gr_grouped__step(struct grouped *g);
/* Column i (of type ty) of the current buffered row, and its rowid. */
int gr_grouped__column(const struct grouped *g, sqlite3_context *ctx, int i,
		       enum gr_coltype ty);
int64_t gr_grouped__rowid(const struct grouped *g);

/* A direct walk of one event table (vt_event.c): the rows a scan of it
 * passes under the session's window and --pid, one at a time, for the
 * table functions computed in C (memcpy_host.c).  Columns as the virtual
 * table gives them, read from the cursor with gr_evrow__*(); a string
 * column is an id in gr_evwalk__dict(), which changes with the segment
 * and stays valid until gr_evwalk__close().  Unreadable segments and
 * blocks are skipped with the same warnings as any query's. */
struct gr_evwalk;
/* Walks table (an event table's name, not a union such as cuda_api) in
 * catalog segments [first, end) (end 0: to the last), decoding the
 * columns in need (bit i: column i).
 * Walks of disjoint segments may run in threads of their own, one walk
 * each (gr_vtab__split() cuts the catalog).  Returns NULL with errno set
 * (EINVAL: no such table, or a union). */
struct gr_evwalk *gr_evwalk__open(struct gr_qctx *q, const char *table,
				  uint64_t need, int first, int end);
/* Moves to the next row: 1, 0 at the end, -ENOMEM, or -EINTR (stopped:
 * gr_vtab__walk_error() says how to report it). */
int gr_evwalk__next(struct gr_evwalk *w);
/* The catalog index of the row's segment: rows come by segment, in
 * catalog order, then in the order a query reads them. */
int gr_evwalk__segment(const struct gr_evwalk *w);
/* Lets fn answer for blocks before they are read (store/scan.h): a
 * block it takes is not walked. */
void gr_evwalk__set_skip(struct gr_evwalk *w, gr_scan_skip_fn fn, void *ctx);
const struct cursor *gr_evwalk__cursor(const struct gr_evwalk *w);
const struct gr_dict *gr_evwalk__dict(const struct gr_evwalk *w);
/* The row's host (the table's host column). */
const char *gr_evwalk__host(const struct gr_evwalk *w);
void gr_evwalk__close(struct gr_evwalk *w);

/* Whether column col of c's row is NULL. */
static inline int gr_evrow__null(const struct cursor *c, int col)
{
	uint32_t r = c->row;
	return c->cmissing[col] ||
	       (c->cn[col] && (c->cn[col][r >> 3] >> (r & 7)) & 1);
}

/* Column col of c's row (not NULL): an integer, or a string's id. */
static inline int64_t gr_evrow__int(const struct cursor *c, int col)
{
	return c->cv[col][c->row];
}

#endif
