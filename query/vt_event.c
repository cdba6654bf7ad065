/* vt_event.c - event tables as virtual tables that scan segment blocks.
 *
 * Every event table of the schema becomes a virtual table whose scan walks
 * the segments of all --data directories in order, the blocks of each
 * segment that overlap the time window, and the rows of each block.  Three
 * things keep it fast without an ATTACH per file (SQLite caps those at
 * 10): blocks are pruned by their ts range (from --since/--until and any
 * ts constraint in the WHERE clause, which xBestIndex passes down); only
 * the columns the statement uses are decompressed (colUsed); and integer
 * comparisons in the WHERE clause are evaluated here, in C, on the decoded
 * arrays, so SQLite sees only matching rows and need not check them again:
 * an operand of another type (REAL, TEXT) becomes the integer comparison
 * that selects the same rows as SQLite's (integer_comparison()).
 *
 * Segments are opened one at a time and closed when the scan moves on, so
 * thousands of files cost one descriptor per cursor, and one more: the
 * sealed segment a scan ended in stays open for the cursor's next xFilter
 * (and, one per table, for the next cursor: SQLite opens one for each run
 * of a correlated subquery), so that lookups one after another into the
 * same segment, and the same block, which the scan keeps decoded, cost
 * neither an open nor a decode.  Text results are copied
 * (SQLITE_TRANSIENT): SQLite keeps static values across xFilter calls (a
 * max() over an IN list or a join), longer than any dictionary here lives.
 *
 * A segment that cannot be opened or read, or a block failing its
 * checksum, is skipped with one warning naming the file; the query
 * answers from the rest.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/vt_event.h"

/* The scan of table t (an event table): its members and their columns. */
static void vtab_init(struct vtab *vt, struct gr_qctx *q, int t)
{
	const struct gr_table *tab = &gr_tables[t];
	memset(vt, 0, sizeof(*vt));
	vt->q = q;
	vt->t = t;
	memset(vt->memcol, -1, sizeof(vt->memcol));
	for (int m = 0; m < GR_NTABLES; m++) {
		int is_member = m == t ||
			((tab->flags & GR_TF_UNION_CUDA) &&
			 (gr_tables[m].flags & GR_TF_CUDA_CALL));
		if (!is_member)
			continue;
		vt->members[vt->nmembers++] = m;
		for (int c = 0; c < tab->ncols; c++)
			vt->memcol[m][c] = (int8_t)gr_table__col(&gr_tables[m],
							 tab->cols[c].name);
	}
}

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	struct gr_qctx *q = aux;
	int t = argc > 3 ? gr_table__find(argv[3]) : -1;
	if (t < 0 || !(gr_tables[t].flags & GR_TF_EVENT)) {
		*err = sqlite3_mprintf("gpurec: no event table %s",
				       argc > 3 ? argv[3] : "?");
		return SQLITE_ERROR;
	}
	const struct gr_table *tab = &gr_tables[t];
	int rc = gr_vtab__declare(db, tab);
	if (rc != SQLITE_OK)
		return rc;

	struct vtab *vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	vtab_init(vt, q, t);
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	*out = &vt->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v)
{
	struct vtab *vt = (struct vtab *)v;
	gr_scan__free(vt->spare_scan);
	gr_segment__close(vt->spare_seg);
	sqlite3_free(v);
	return SQLITE_OK;
}

/* ---- planning ---------------------------------------------------------- */

/* A constraint on an integer column is left to the scan alone (omit):
 * add_constraint() turns it, whatever its operand, into the one integer
 * comparison that holds for exactly the rows SQLite's would.  SQLite's
 * re-check cost more than the scan for a query keeping a few million
 * rows (two column fetches and comparisons a row).  SQLite honours omit
 * for a scan's first 16 constraints; it re-checks any past those. */
static int omit_ok(enum gr_coltype ty)
{
	return ty == GR_TS || ty == GR_INT;
}

/* idxStr: "<colUsed hex>" then ";<col>,<op>" per constraint passed down,
 * in argv order. */
static int vt_best_index(sqlite3_vtab *v, sqlite3_index_info *ii)
{
	struct vtab *vt = (struct vtab *)v;
	const struct gr_table *tab = &gr_tables[vt->t];
	sqlite3_str *s = sqlite3_str_new(NULL);
	int argi = 0, ts_bounded = 0;

	sqlite3_str_appendf(s, "%llx", (unsigned long long)ii->colUsed);
	for (int i = 0; i < ii->nConstraint && argi < MAX_FILTERS; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		int op;
		if (!c->usable || c->iColumn < 0)
			continue;
		switch (c->op) {
		case SQLITE_INDEX_CONSTRAINT_EQ: op = OP_EQ; break;
		case SQLITE_INDEX_CONSTRAINT_GT: op = OP_GT; break;
		case SQLITE_INDEX_CONSTRAINT_LE: op = OP_LE; break;
		case SQLITE_INDEX_CONSTRAINT_LT: op = OP_LT; break;
		case SQLITE_INDEX_CONSTRAINT_GE: op = OP_GE; break;
		case SQLITE_INDEX_CONSTRAINT_NE: op = OP_NE; break;
		default: continue;
		}
		enum gr_coltype ty = tab->cols[c->iColumn].type;
		if (ty == GR_STR || (ty == GR_HOST && op != OP_EQ))
			continue;
		/* host = 'x' selects segments by exact bytes: only under
		 * BINARY collation (NOCASE and friends stay SQLite's). */
		if (ty == GR_HOST &&
		    strcmp(sqlite3_vtab_collation(ii, i), "BINARY") != 0)
			continue;
		ii->aConstraintUsage[i].argvIndex = ++argi;
		ii->aConstraintUsage[i].omit = omit_ok(ty);
		if (c->iColumn == GR_EV_ts && op != OP_NE)
			ts_bounded++;
		sqlite3_str_appendf(s, ";%d,%d", c->iColumn, op);
	}
	/* GROUP BY one column: when SQLite needs the rows only grouped, not
	 * sorted, emit them grouped here and spare it the sort (see
	 * "grouped emission" below). */
	if (ii->nOrderBy == 1 && ii->aOrderBy[0].iColumn >= 0 &&
	    sqlite3_vtab_distinct(ii) == 1) {
		sqlite3_str_appendf(s, ";g%d%s", ii->aOrderBy[0].iColumn,
				    ii->aOrderBy[0].desc ? "d" : "");
		ii->orderByConsumed = 1;
	}
	char *str = sqlite3_str_finish(s);
	if (!str)
		return SQLITE_NOMEM;
	ii->idxStr = str;
	ii->needToFreeIdxStr = 1;
	ii->idxNum = argi;
	/* Pushed-down filters make the scan cheaper only where they prune
	 * blocks (ts); others still read every block but return fewer rows. */
	double rows = 1e7 / (ts_bounded ? 100.0 : 1.0) / (argi ? 2.0 : 1.0);
	ii->estimatedRows = (sqlite3_int64)rows;
	ii->estimatedCost = rows;
	return SQLITE_OK;
}

/* ---- cursor ------------------------------------------------------------ */

static int vt_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct cursor *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->vt = (struct vtab *)v;
	c->scan = c->vt->spare_scan;
	c->parked = c->vt->spare_seg;
	c->parked_si = c->vt->spare_si;
	c->vt->spare_scan = NULL;
	c->vt->spare_seg = NULL;
	if (!c->scan && !(c->scan = gr_scan__new())) {
		sqlite3_free(c);
		return SQLITE_NOMEM;
	}
	*out = &c->base;
	return SQLITE_OK;
}

/* Closes s, keeping its dictionary until the next xFilter. */
static void retire(struct cursor *c, struct gr_segment *s)
{
	struct gr_dict *d = gr_segment__take_dict(s);
	if (d) {
		if (c->nretired == c->retired_cap) {
			int cap = c->retired_cap ? c->retired_cap * 2 : 16;
			void *p = realloc(c->retired, (size_t)cap *
						      sizeof(*c->retired));
			if (p) {
				c->retired = p;
				c->retired_cap = cap;
			}
		}
		if (c->nretired < c->retired_cap)
			c->retired[c->nretired++] = d;
		else
			gr_dict__free(d);
	}
	gr_segment__close(s);
}

static void retire_segment(struct cursor *c)
{
	if (!c->seg)
		return;
	/* The grouped scan's id map belongs to this segment; the next one
	 * may be allocated at the same address. */
	if (c->g)
		gr_grouped__segment_gone(c->g);
	retire(c, c->seg);
	c->seg = NULL;
	c->dict = NULL;
}

/* Leaves the current segment open for the next scan, closing the one
 * parked before; closes it instead where it is not sealed (a live
 * segment is read as of its opening: the next statement must see more). */
static void park_segment(struct cursor *c)
{
	if (!c->seg)
		return;
	if (!c->vt->q->cat.segs[c->si].sealed) {
		retire_segment(c);
		return;
	}
	if (c->g)
		gr_grouped__segment_gone(c->g);
	if (c->parked)
		retire(c, c->parked);
	c->parked = c->seg;
	c->parked_si = c->si;
	c->seg = NULL;
	c->dict = NULL;
}

static void free_retired(struct cursor *c)
{
	for (int i = 0; i < c->nretired; i++)
		gr_dict__free(c->retired[i]);
	c->nretired = 0;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;
	struct vtab *vt = c->vt;
	park_segment(c);
	free_retired(c);
	free(c->retired);
	free(c->selbuf);
	gr_grouped__free(c->g);
	if (!vt->spare_scan) {
		vt->spare_scan = c->scan;
		vt->spare_seg = c->parked;
		vt->spare_si = c->parked_si;
	} else {
		gr_scan__free(c->scan);
		gr_segment__close(c->parked);
	}
	sqlite3_free(c);
	return SQLITE_OK;
}

/* The columns of member m that the scan needs decoded. */
static uint64_t member_mask(const struct cursor *c, int m)
{
	const struct gr_table *tab = &gr_tables[c->vt->t];
	uint64_t mask = 0;
	for (int i = 0; i < tab->ncols; i++) {
		int mc = c->vt->memcol[m][i];
		if ((c->need >> i & 1) && mc >= 0)
			mask |= 1ull << mc;
	}
	return mask;
}

/* Opens the next segment of the current member that may hold rows.
 * Returns 1 when one is open and its blocks are being walked, 0 when the
 * member has no more, or -ENOMEM. */
static int next_segment(struct cursor *c)
{
	struct gr_qctx *q = c->vt->q;
	int m = c->vt->members[c->mi];
	const char *host = c->host_eq ? c->host_eq : q->host;
	char *err = NULL;

	int end = c->si_end ? c->si_end : q->cat.nsegs;

	retire_segment(c);
	while (++c->si < end) {
		if (c->parked && c->si == c->parked_si &&
		    !strcmp(gr_segment__info(c->parked)->path,
			    q->cat.segs[c->si].path)) {
			if (!gr_vtab__may_match(q, c->si, c->lo, c->hi, host,
						c->parked))
				continue;
			c->seg = c->parked;
			c->parked = NULL;
		} else if (!gr_vtab__open_segment(q, c->si, c->lo, c->hi, host,
						  &c->seg)) {
			continue;
		}
		if (gr_scan__start(c->scan, c->seg, m, c->lo, c->hi,
				   member_mask(c, m), &err)) {
			gr_vtab__warn(q, c->si, "skipping %s: %s",
				      gr_segment__info(c->seg)->path, err);
			free(err);
			retire_segment(c);
			continue;
		}
		return 1;
	}
	return 0;
}

/* Warns about a block the scan skipped, or a segment it gave up on.
 * Returns 1 to go on with the segment, 0 to leave it. */
static int scan_warn(struct cursor *c, int rc, const struct gr_scan_block *b,
		     char *err)
{
	struct gr_qctx *q = c->vt->q;
	const char *path = gr_segment__info(c->seg)->path;
	int more = 1;
	switch (rc) {
	case -EBADMSG: /* each bad block warns (si -1: not once per file) */
		gr_vtab__warn(q, -1, "%s: %s, skipped", path, err);
		break;
	case -EPROTO:
		gr_vtab__warn(q, c->si, "%s: block %lld is malformed, skipped",
			      path, (long long)b->id);
		break;
	case -ENOENT:
		gr_vtab__warn(q, c->si, "%s: dictionary: %s", path, err);
		/* fall through */
	case -EILSEQ:
		gr_vtab__warn(q, c->si,
			      "%s: block %lld does not decode, skipped", path,
			      (long long)b->id);
		break;
	default:
		gr_vtab__warn(q, c->si, "%s: %s", path, err);
		more = 0;
	}
	free(err);
	return more;
}

/* Points the cursor's columns at block b of member m. */
static void block_columns(struct cursor *c, int m,
			  const struct gr_scan_block *b)
{
	const struct gr_table *tab = &gr_tables[c->vt->t];
	for (int i = 0; i < tab->ncols; i++) {
		if (!(c->need >> i & 1) || tab->cols[i].type == GR_HOST)
			continue;
		int mc = c->vt->memcol[m][i];
		c->cv[i] = mc >= 0 ? b->v[mc] : NULL;
		c->cn[i] = mc >= 0 ? b->nulls[mc] : NULL;
		c->cmissing[i] = !c->cv[i];
	}
}

/* Keeps of the rows in[0, n) (in NULL: 0..n-1) those where v op x holds
 * and the null bitmap (if any) is clear, in order, in out (which may be
 * in).  Returns how many.  One loop a comparison, without branches. */
#define KEEP_LOOP(COND)                                                    \
	for (uint32_t i = 0; i < n; i++) {                                 \
		uint32_t r = in ? in[i] : i;                               \
		int64_t v_ = v[r];                                         \
		out[k] = r;                                                \
		k += (COND) & !(nulls && (nulls[r >> 3] >> (r & 7) & 1)); \
	}
static uint32_t keep_rows(const struct filt *f, const int64_t *v,
			  const uint8_t *nulls, const uint32_t *in, uint32_t n,
			  uint32_t *out)
{
	uint32_t k = 0;
	int64_t x = f->v;
	switch (f->op) {
	case OP_EQ: KEEP_LOOP(v_ == x); break;
	case OP_GT: KEEP_LOOP(v_ > x); break;
	case OP_LE: KEEP_LOOP(v_ <= x); break;
	case OP_LT: KEEP_LOOP(v_ < x); break;
	case OP_GE: KEEP_LOOP(v_ >= x); break;
	case OP_NE: KEEP_LOOP(v_ != x); break;
	}
	return k;
}
#undef KEEP_LOOP

/* Selects the current block's rows that pass every filter, from rows
 * (NULL: all n), a filter at a time over the rows still in: a tight loop
 * each, where testing row by row branched on every filter of every row.
 * A filter on a column the segment lacks passes nothing (NULL compares
 * false).  Returns 0 or -ENOMEM. */
static int select_rows(struct cursor *c, const uint32_t *rows, uint32_t n)
{
	if (!c->nf) { /* rows (never NULL then) are the selection */
		c->sel = rows;
		c->nsel = n;
		return 0;
	}
	/* sel must not be NULL, even for no rows: NULL means every row. */
	if (n > c->selcap || !c->selbuf) {
		uint32_t cap = n ? n : 1;
		uint32_t *p = realloc(c->selbuf, (size_t)cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->selbuf = p;
		c->selcap = cap;
	}
	for (int i = 0; i < c->nf && n; i++) {
		const struct filt *f = &c->f[i];
		if (c->cmissing[f->col]) {
			n = 0;
			break;
		}
		n = keep_rows(f, c->cv[f->col], c->cn[f->col], rows, n,
			      c->selbuf);
		rows = c->selbuf;
	}
	c->sel = c->selbuf;
	c->nsel = n;
	return 0;
}

/* Decodes the next block with rows.  Returns 1, 0 at the end of the scan,
 * -ENOMEM, or -EINTR where q->stop says stop (Ctrl-C, the deadline). */
static int next_block(struct cursor *c)
{
	for (;;) {
		/* Ctrl-C or the deadline, between blocks: grouping or a walk
		 * runs within one VM step, which the progress handler never
		 * sees end. */
		if (c->vt->q->stop && c->vt->q->stop())
			return -EINTR;
		if (!c->seg) {
			int rc = next_segment(c);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				if (++c->mi >= c->vt->nmembers)
					return 0;
				c->si = c->si_first - 1;
				continue;
			}
		}
		struct gr_scan_block b;
		char *err = NULL;
		int rc = gr_scan__next(c->scan, &b, &err);
		if (rc == 0) {
			park_segment(c);
			continue;
		}
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0) {
			if (!scan_warn(c, rc, &b, err))
				retire_segment(c);
			continue;
		}
		block_columns(c, c->vt->members[c->mi], &b);
		c->dict = gr_segment__dict(c->seg);
		__atomic_add_fetch(&c->vt->q->blocks_read, 1, __ATOMIC_RELAXED);
		c->block_id = b.id;
		c->nrows = b.nrows;
		c->row = 0;
		c->sel = NULL;
		c->isel = 0;
		/* A block looked into again (one lookup after another): only
		 * the rows in the ts bounds, found by its sorted ts, not a
		 * test of every row each time. */
		const uint32_t *rows = NULL;
		uint32_t n = b.nrows;
		int mts = c->vt->memcol[c->vt->members[c->mi]][GR_EV_ts];
		if (b.again && mts >= 0 &&
		    (c->lo != INT64_MIN || c->hi != INT64_MAX)) {
			rc = gr_scan__rows_between(c->scan, mts, c->lo, c->hi,
						   &rows, &n);
			if (rc < 0)
				return rc;
			if (rc > 0) {
				rows = NULL;
				n = b.nrows;
			}
		}
		if ((c->nf || rows) && select_rows(c, rows, n))
			return -ENOMEM;
		return 1;
	}
}


/* A row's id must be the same in every scan that reaches it: SQLite's OR
 * plan runs one scan per term and drops duplicates by rowid.  Member (4
 * bits), catalog segment (19), block id in the segment (24), row (16). */
int64_t gr_evscan__row_id(const struct cursor *c, uint32_t r)
{
	return (int64_t)((uint64_t)(c->mi & 0xf) << 59 |
			 (uint64_t)(c->si & 0x7ffff) << 40 |
			 (uint64_t)(c->block_id & 0xffffff) << 16 | (r & 0xffff));
}

/* Moves to the next passing row at or after the current position.
 * Returns 1 there, 0 at the end of the scan, or -ENOMEM. */
int gr_evscan__seek(struct cursor *c)
{
	for (;;) {
		if (c->sel && c->isel < c->nsel) {
			c->row = c->sel[c->isel];
			return 1;
		}
		if (!c->sel && c->row < c->nrows)
			return 1;
		int rc = next_block(c);
		if (rc <= 0)
			return rc;
	}
}

/* Starts the block walk over from the first member and segment. */
void gr_evscan__restart(struct cursor *c)
{
	park_segment(c);
	c->mi = 0;
	c->si = c->si_first - 1;
	c->row = c->nrows = 0;
	c->sel = NULL;
	c->nsel = c->isel = 0;
}

/* Positions the cursor on its next row; sets eof at the end. */
static int seek(struct cursor *c)
{
	int rc = c->g ? gr_grouped__next(c, c->g) : gr_evscan__seek(c);
	if (rc < 0)
		return rc == -EINTR ? SQLITE_INTERRUPT : SQLITE_NOMEM;
	c->eof = rc == 0;
	return SQLITE_OK;
}

/* Makes "column op v" on an integer column (int64 or NULL) the integer
 * comparison "column *op *x" that holds for the same rows as SQLite's,
 * whatever v holds: text is converted as the column's INTEGER affinity
 * converts it in a comparison (sqlite3_value_numeric_type()); a REAL is
 * compared exactly, as SQLite compares integers with reals; an integer
 * sorts before any text or blob.  Returns 1, 0 when no row can pass (a
 * NULL operand, x = 1.5), or -ENOMEM. */
static int integer_comparison(sqlite3_value *v, int *op, int64_t *x)
{
	if (sqlite3_value_type(v) == SQLITE_INTEGER) { /* most: no copy */
		*x = sqlite3_value_int64(v);
		return 1;
	}
	sqlite3_value *d = sqlite3_value_dup(v);
	if (!d)
		return -ENOMEM;
	int ty = sqlite3_value_numeric_type(d);
	int64_t i = sqlite3_value_int64(d);
	double r = sqlite3_value_double(d);
	sqlite3_value_free(d);
	if (ty == SQLITE_NULL || (ty == SQLITE_FLOAT && r != r))
		return 0;
	if (ty == SQLITE_INTEGER) {
		*x = i;
		return 1;
	}
	int below; /* every integer is below v (else above it) */
	if (ty == SQLITE_FLOAT && r >= -0x1p63 && r < 0x1p63) {
		double fl = floor(r), ce = ceil(r);
		switch (*op) {
		case OP_EQ:
		case OP_NE:
			if (fl == r) {
				*x = (int64_t)r;
				return 1;
			}
			if (*op == OP_EQ)
				return 0;
			goto all;
		case OP_GT: /* column > 2.5: column > 2 */
		case OP_LE: /* column <= 2.5: column <= 2 */
			*x = (int64_t)fl;
			return 1;
		default:    /* column >= 2.5, column < 2.5: against 3 */
			*x = (int64_t)ce;
			return 1;
		}
	}
	below = ty != SQLITE_FLOAT || r >= 0x1p63; /* text, blob, huge */
	switch (*op) {
	case OP_NE:
		goto all;
	case OP_LT:
	case OP_LE:
		if (below)
			goto all;
		return 0;
	case OP_GT:
	case OP_GE:
		if (!below)
			goto all;
		return 0;
	default:
		return 0;
	}
all: /* every non-NULL row */
	*op = OP_GE;
	*x = INT64_MIN;
	return 1;
}

/* Adds one constraint passed down by vt_best_index: column col, operator
 * op, operand v.  host = '…' selects segments; comparisons on integer
 * columns become filters (and ts ones narrow the window); x op NULL
 * matches nothing.  Returns 0 or -ENOMEM. */
static int add_constraint(struct cursor *c, int col, int op, sqlite3_value *v)
{
	struct gr_qctx *q = c->vt->q;
	if (gr_tables[c->vt->t].cols[col].type == GR_HOST) {
		if (sqlite3_value_type(v) == SQLITE_TEXT)
			c->host_eq = (const char *)sqlite3_value_text(v);
		else if (sqlite3_value_type(v) == SQLITE_NULL)
			c->never = 1;
		/* --host and host = '…' both hold. */
		if (c->host_eq && q->host && strcmp(c->host_eq, q->host))
			c->never = 1;
		return 0;
	}
	int64_t x;
	int rc = integer_comparison(v, &op, &x);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		c->never = 1;
		return 0;
	}
	/* vt_best_index passes at most MAX_FILTERS: there is room. */
	c->f[c->nf++] = (struct filt){ col, op, x };
	if (col != GR_EV_ts)
		return 0;
	if ((op == OP_GE || op == OP_EQ) && x > c->lo)
		c->lo = x;
	if (op == OP_GT && x != INT64_MAX && x + 1 > c->lo)
		c->lo = x + 1;
	if ((op == OP_LE || op == OP_EQ) && x < c->hi)
		c->hi = x;
	if (op == OP_LT && x != INT64_MIN && x - 1 < c->hi)
		c->hi = x - 1;
	return 0;
}

/* Starts a scan: idxStr is vt_best_index's plan, argv the operands of
 * the constraints it passed down. */
/* The window and --pid: filters like any other. */
static void session_filters(struct cursor *c)
{
	const struct gr_qctx *q = c->vt->q;
	c->lo = q->since;
	c->hi = q->until;
	if (q->since != INT64_MIN)
		c->f[c->nf++] = (struct filt){ GR_EV_ts, OP_GE, q->since };
	if (q->until != INT64_MAX)
		c->f[c->nf++] = (struct filt){ GR_EV_ts, OP_LE, q->until };
	if (q->has_pid)
		c->f[c->nf++] = (struct filt){ GR_EV_pid, OP_EQ, q->pid };
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
		     int argc, sqlite3_value **argv)
{
	struct cursor *c = (struct cursor *)cur;
	const struct gr_table *tab = &gr_tables[c->vt->t];
	const char *p = idxStr, *gp;
	int group_col = -1, group_desc = 0;
	(void)idxNum;

	park_segment(c);
	free_retired(c);
	gr_grouped__free(c->g);
	c->g = NULL;
	c->nf = 0;
	c->never = 0;
	c->host_eq = NULL;
	c->need = strtoull(p, NULL, 16);
	if (c->need >> 63)
		c->need = ~0ull >> (64 - tab->ncols);
	if ((gp = strstr(p, ";g"))) {
		char *end;
		group_col = (int)strtol(gp + 2, &end, 10);
		group_desc = *end == 'd';
	}
	session_filters(c);
	for (int i = 0; i < argc && (p = strchr(p, ';')); i++) {
		int col, op;
		if (sscanf(++p, "%d,%d", &col, &op) != 2)
			break;
		if (add_constraint(c, col, op, argv[i]))
			return SQLITE_NOMEM;
	}
	for (int i = 0; i < c->nf; i++)
		c->need |= 1ull << c->f[i].col;
	if (group_col >= 0)
		c->need |= 1ull << group_col;
	c->eof = 0;
	gr_evscan__restart(c);
	if (c->never || c->lo > c->hi) {
		c->eof = 1;
		return SQLITE_OK;
	}
	int rc = group_col >= 0 ? gr_grouped__start(c, group_col, group_desc)
			       : 0;
	if (rc < 0)
		return rc == -EINTR ? SQLITE_INTERRUPT : SQLITE_NOMEM;
	return seek(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;
	if (c->g && gr_grouped__emitting(c->g))
		gr_grouped__step(c->g);
	else
		gr_evscan__step(c);
	return seek(c);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct cursor *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct cursor *c = (struct cursor *)cur;
	const struct gr_table *tab = &gr_tables[c->vt->t];
	uint32_t r = c->row;

	if (c->g && gr_grouped__emitting(c->g))
		return gr_grouped__column(c->g, ctx, i, tab->cols[i].type);
	if (tab->cols[i].type == GR_HOST) {
		sqlite3_result_text(ctx, gr_segment__info(c->seg)->host, -1,
				    SQLITE_TRANSIENT);
		return SQLITE_OK;
	}
	if (!(c->need >> i & 1)) {
		/* SQLite asked for a column colUsed did not list. */
		sqlite3_result_error(ctx, "gpurec: column not decoded", -1);
		return SQLITE_ERROR;
	}
	if (c->cmissing[i] ||
	    (c->cn[i] && (c->cn[i][r >> 3] >> (r & 7)) & 1))
		return SQLITE_OK; /* NULL */
	int64_t v = c->cv[i][r];
	if (tab->cols[i].type == GR_STR) {
		uint32_t len;
		const char *str = gr_dict__str(c->dict, v, &len);
		if (str)
			sqlite3_result_text(ctx, str, (int)len,
					    SQLITE_TRANSIENT);
		return SQLITE_OK;
	}
	sqlite3_result_int64(ctx, v);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct cursor *c = (struct cursor *)cur;
	if (c->g && gr_grouped__emitting(c->g))
		*rowid = gr_grouped__rowid(c->g);
	else
		*rowid = gr_evscan__row_id(c, c->row);
	return SQLITE_OK;
}

const sqlite3_module gr_vt_event_module = {
	.iVersion = 0,
	.xCreate = vt_connect,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

/* ---- direct walks ------------------------------------------------------ */

/* A cursor of its own vtab, driven from C: the rows vt_filter would pass
 * for the session's window and --pid alone, without SQLite's per-row
 * calls (xNext, xColumn, sqlite3_column_*), which cost more than the
 * decode for a table function that folds every row. */
struct gr_evwalk {
	struct vtab vt;
	struct cursor c;
	int started;
};

struct gr_evwalk *gr_evwalk__open(struct gr_qctx *q, const char *table,
				  uint64_t need, int first, int end)
{
	int t = gr_table__find(table);
	if (t < 0 || !(gr_tables[t].flags & GR_TF_EVENT)) {
		errno = EINVAL;
		return NULL;
	}
	struct gr_evwalk *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	vtab_init(&w->vt, q, t);
	/* A union's rows come member by member, each over the segments:
	 * not in segment order, which a walk promises. */
	if (w->vt.nmembers != 1) {
		free(w);
		errno = EINVAL;
		return NULL;
	}
	struct cursor *c = &w->c;
	c->vt = &w->vt;
	if (!(c->scan = gr_scan__new())) {
		free(w);
		return NULL;
	}
	c->need = need & (~0ull >> (64 - gr_tables[t].ncols));
	c->si_first = first > 0 ? first : 0;
	c->si_end = end > 0 ? end : 0;
	session_filters(c);
	for (int i = 0; i < c->nf; i++)
		c->need |= 1ull << c->f[i].col;
	gr_evscan__restart(c);
	return w;
}

int gr_evwalk__next(struct gr_evwalk *w)
{
	struct cursor *c = &w->c;
	if (c->lo > c->hi)
		return 0;
	if (w->started)
		gr_evscan__step(c);
	w->started = 1;
	return gr_evscan__seek(c);
}

void gr_evwalk__set_skip(struct gr_evwalk *w, gr_scan_skip_fn fn, void *ctx)
{
	gr_scan__set_skip(w->c.scan, fn, ctx);
}

int gr_evwalk__segment(const struct gr_evwalk *w)
{
	return w->c.si;
}

const char *gr_evwalk__host(const struct gr_evwalk *w)
{
	return w->c.seg ? gr_segment__info(w->c.seg)->host : NULL;
}

const struct gr_dict *gr_evwalk__dict(const struct gr_evwalk *w)
{
	return w->c.dict;
}

void gr_evwalk__close(struct gr_evwalk *w)
{
	if (!w)
		return;
	struct cursor *c = &w->c;
	retire_segment(c);
	if (c->parked)
		retire(c, c->parked);
	free_retired(c);
	free(c->retired);
	free(c->selbuf);
	gr_scan__free(c->scan);
	free(w);
}

const struct cursor *gr_evwalk__cursor(const struct gr_evwalk *w)
{
	return &w->c;
}
