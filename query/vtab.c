/* vtab.c - event tables as virtual tables that scan segment blocks.
 *
 * Every event table of the schema becomes a virtual table whose scan walks
 * the segments of all --data directories in order, the blocks of each
 * segment that overlap the time window, and the rows of each block.  Three
 * things keep it fast without an ATTACH per file (SQLite caps those at
 * 10): blocks are pruned by their ts range (from --since/--until and any
 * ts constraint in the WHERE clause, which xBestIndex passes down); only
 * the columns the statement uses are decompressed (colUsed); and integer
 * comparisons in the WHERE clause are evaluated here, in C, on the decoded
 * arrays, so SQLite sees only matching rows.  SQLite still re-checks those
 * constraints (omit is left 0), which keeps the semantics of odd operands
 * (REAL, TEXT) exactly SQLite's.
 *
 * Segments are opened one at a time and closed when the scan moves on, so
 * thousands of files cost one descriptor.  Text results are copied
 * (SQLITE_TRANSIENT): SQLite keeps static values across xFilter calls (a
 * max() over an IN list or a join), longer than any dictionary here lives.
 *
 * A segment that cannot be opened or read, or a block failing its
 * checksum, is skipped with one warning naming the file; the query
 * answers from the rest.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
};

struct filt {
	int col, op;
	int64_t v;
};

struct grouped;
static void grouped_free(struct grouped *g);
static void grouped_segment_gone(struct grouped *g);

struct cursor {
	sqlite3_vtab_cursor base;
	struct vtab *vt;
	uint64_t need;                /* columns to decode */
	struct filt f[MAX_FILTERS];
	int nf;
	int64_t lo, hi;
	const char *host_eq;          /* host = '…' pushed down */
	int never;                    /* a filter no row can pass */

	int mi;                       /* member index */
	int si;                       /* catalog segment index */
	struct gr_segment *seg;
	int seg_has_str;
	const struct gr_dict *dict;   /* the segment's, once loaded */
	struct gr_dict **retired;     /* dictionaries of segments passed */
	int nretired, retired_cap;

	struct gr_scan *scan;
	/* The current block's columns, by column of the table. */
	const int64_t *cv[GR_MAX_COLS];
	const uint8_t *cn[GR_MAX_COLS]; /* null bitmaps, NULL: no nulls */
	int cmissing[GR_MAX_COLS];    /* column absent from this segment */
	uint32_t row, nrows;
	int64_t block_id;             /* of the current block in its segment */
	int eof;

	struct grouped *g;            /* non-NULL: emitting rows grouped */
};

void gr_vtab__warn(struct gr_qctx *q, int si, const char *fmt, ...)
{
	va_list ap;
	if (si >= 0 && q->warned) {
		if (q->warned[si])
			return;
		q->warned[si] = 1;
	}
	q->warnings++;
	fprintf(q->warn, "gpurec: warning: ");
	va_start(ap, fmt);
	vfprintf(q->warn, fmt, ap);
	va_end(ap);
	fprintf(q->warn, "; answering from the other segments\n");
}

/* ---- table lifecycle --------------------------------------------------- */

/* Declares a virtual table's columns from the schema. */
int gr_vtab__declare(sqlite3 *db, const struct gr_table *tab)
{
	sqlite3_str *ddl = sqlite3_str_new(db);
	sqlite3_str_appendf(ddl, "CREATE TABLE x(");
	for (int c = 0; c < tab->ncols; c++)
		sqlite3_str_appendf(ddl, "%s\"%w\" %s", c ? ", " : "",
				    tab->cols[c].name,
				    gr_coltype__sql(tab->cols[c].type));
	sqlite3_str_appendf(ddl, ")");
	char *sql = sqlite3_str_finish(ddl);
	int rc = sql ? sqlite3_declare_vtab(db, sql) : SQLITE_NOMEM;
	sqlite3_free(sql);
	return rc;
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
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	*out = &vt->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

/* ---- planning ---------------------------------------------------------- */

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
		ii->aConstraintUsage[i].omit = 0;
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
	if (!(c->scan = gr_scan__new())) {
		sqlite3_free(c);
		return SQLITE_NOMEM;
	}
	*out = &c->base;
	return SQLITE_OK;
}

static void retire_segment(struct cursor *c)
{
	struct gr_segment *s = c->seg;
	if (!s)
		return;
	/* The grouped scan's id map belongs to this segment; the next one
	 * may be allocated at the same address. */
	if (c->g)
		grouped_segment_gone(c->g);
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
	retire_segment(c);
	free_retired(c);
	free(c->retired);
	grouped_free(c->g);
	gr_scan__free(c->scan);
	sqlite3_free(c);
	return SQLITE_OK;
}

/* Opens the next segment of the current member that may hold rows.
 * Returns 1 when one is open and its blocks are being walked, 0 when the
 * member has no more, or -ENOMEM. */
int gr_vtab__open_segment(struct gr_qctx *q, int si, int64_t lo, int64_t hi,
			  const char *host, struct gr_segment **out)
{
	const struct gr_catalog_seg *cs = &q->cat.segs[si];
	struct gr_segment *s;
	char *err = NULL;

	if (cs->sealed) {
		/* The manifest knows a sealed segment's span and host: skip
		 * it unopened when it cannot match. */
		if (cs->m->events == 0 || cs->end_ts < lo || cs->start_ts > hi)
			return 0;
		if (host && strcmp(cs->m->host, host) != 0)
			return 0;
	}
	if (gr_segment__open(cs->path, cs->sealed, &s, &err)) {
		gr_vtab__warn(q, si, "skipping %s: %s", cs->path,
			      err ? err : "cannot open");
		free(err);
		return 0;
	}
	q->segments_opened++;
	if (host && strcmp(gr_segment__info(s)->host, host) != 0) {
		gr_segment__close(s);
		return 0;
	}
	*out = s;
	return 1;
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

static int next_segment(struct cursor *c)
{
	struct gr_qctx *q = c->vt->q;
	int m = c->vt->members[c->mi];
	const char *host = c->host_eq ? c->host_eq : q->host;
	char *err = NULL;

	retire_segment(c);
	while (++c->si < q->cat.nsegs) {
		if (!gr_vtab__open_segment(q, c->si, c->lo, c->hi, host,
					   &c->seg))
			continue;
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

/* Decodes the next block with rows.  Returns 1, 0 at the end of the scan,
 * or -ENOMEM. */
static int next_block(struct cursor *c)
{
	for (;;) {
		if (!c->seg) {
			int rc = next_segment(c);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				if (++c->mi >= c->vt->nmembers)
					return 0;
				c->si = -1;
				continue;
			}
		}
		struct gr_scan_block b;
		char *err = NULL;
		int rc = gr_scan__next(c->scan, &b, &err);
		if (rc == 0) {
			retire_segment(c);
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
		c->vt->q->blocks_read++;
		c->block_id = b.id;
		c->nrows = b.nrows;
		c->row = 0;
		return 1;
	}
}

static inline int row_passes(struct cursor *c, uint32_t r)
{
	for (int i = 0; i < c->nf; i++) {
		const struct filt *f = &c->f[i];
		if (c->cmissing[f->col])
			return 0;
		if (c->cn[f->col] && (c->cn[f->col][r >> 3] >> (r & 7)) & 1)
			return 0;
		int64_t v = c->cv[f->col][r];
		switch (f->op) {
		case OP_EQ: if (v != f->v) return 0; break;
		case OP_GT: if (v <= f->v) return 0; break;
		case OP_LE: if (v > f->v) return 0; break;
		case OP_LT: if (v >= f->v) return 0; break;
		case OP_GE: if (v < f->v) return 0; break;
		case OP_NE: if (v == f->v) return 0; break;
		}
	}
	return 1;
}

/* A row's id must be the same in every scan that reaches it: SQLite's OR
 * plan runs one scan per term and drops duplicates by rowid.  Member (4
 * bits), catalog segment (19), block id in the segment (24), row (16). */
static int64_t row_id(const struct cursor *c, uint32_t r)
{
	return (int64_t)((uint64_t)(c->mi & 0xf) << 59 |
			 (uint64_t)(c->si & 0x7ffff) << 40 |
			 (uint64_t)(c->block_id & 0xffffff) << 16 | (r & 0xffff));
}

/* Moves to the next passing row at or after the current position.
 * Returns 1 there, 0 at the end of the scan, or -ENOMEM. */
static int scan_seek(struct cursor *c)
{
	for (;;) {
		while (c->row < c->nrows) {
			if (row_passes(c, c->row))
				return 1;
			c->row++;
		}
		int rc = next_block(c);
		if (rc <= 0)
			return rc;
	}
}

/* Starts the block walk over from the first member and segment. */
static void scan_restart(struct cursor *c)
{
	retire_segment(c);
	c->mi = 0;
	c->si = -1;
	c->row = c->nrows = 0;
}

/* ---- grouped emission ----------------------------------------------------
 *
 * For `GROUP BY col`, SQLite normally sorts every row by col (an external
 * merge sort once the rows outgrow memory: for 50M rows of kernel names,
 * gigabytes of temp files).  When it only needs the rows grouped
 * (sqlite3_vtab_distinct() == 1), the scan does that instead:
 *
 *   1. a count pass decodes only the group column (and filters) and counts
 *      rows per distinct value, interning values into group ids;
 *   2. groups are packed, in id order, into batches whose rows fit
 *      GROUP_BUDGET bytes of buffered columns; each batch is one pass that
 *      copies its rows' needed columns out, then emits them bucketed by
 *      group (a counting sort);
 *   3. a group too big for the budget alone gets a pass of its own that
 *      streams its rows straight from the blocks, buffering nothing.
 *
 * Memory stays under the budget whatever the data; passes are at most
 * 1 + 2 * rows * row_bytes / GROUP_BUDGET, each a scan of a few columns. */

#define GROUP_BUDGET (256u << 20)

/* The budget, which tests shrink (GPUREC_GROUP_BUDGET, bytes) to drive
 * every path on small data. */
static uint64_t group_budget(void)
{
	const char *e = getenv("GPUREC_GROUP_BUDGET");
	uint64_t b = e ? strtoull(e, NULL, 10) : 0;
	return b ? b : GROUP_BUDGET;
}

struct gmap_ent {
	uint64_t hash;
	uint32_t gid;
};

struct grouped {
	int col;                  /* the vtab column grouped on */
	int desc;                 /* emit groups in descending key order */
	int is_text;              /* STR or HOST */
	/* Group ids: 0 is NULL; 1.. distinct values, by hash table. */
	struct gmap_ent *tab;
	uint32_t tcap, ngroups;
	int64_t *ival;            /* INT key per gid */
	const char **sval;        /* text key per gid (into arena chunks) */
	uint32_t *slen;
	char **chunks;
	int nchunks;
	uint64_t *count;          /* rows per gid */
	uint32_t vcap;
	/* The current segment's local dictionary id -> gid (0: not yet). */
	uint32_t *lmap;
	uint32_t lmap_n;
	struct gr_segment *lmap_seg;
	uint32_t host_gid;

	/* The plan: passes over order[] ranges. */
	uint32_t *order;          /* gids in emission order */
	uint32_t *pass_end;       /* end index into order of each pass */
	uint8_t *pass_stream;     /* pass streams one big group */
	int npasses, pass;
	uint32_t nplanned;        /* gids that existed when planning */
	uint8_t *in_pass;         /* per planned gid: in the current batch */

	/* The current batch. */
	int64_t *bv[GR_MAX_COLS];
	uint8_t *bn[GR_MAX_COLS];
	uint32_t *bgid, *bperm, *bstart;
	uint64_t *bfill;          /* rows placed per gid this batch */
	int64_t *brow;            /* each buffered row's rowid */
	uint64_t bcap, brows, bpos, bemit;
	int emitting_batch;
};

static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void grouped_free(struct grouped *g)
{
	if (!g)
		return;
	free(g->tab);
	free(g->ival);
	free(g->sval);
	free(g->slen);
	for (int i = 0; i < g->nchunks; i++)
		free(g->chunks[i]);
	free(g->chunks);
	free(g->count);
	free(g->lmap);
	free(g->order);
	free(g->pass_end);
	free(g->pass_stream);
	free(g->in_pass);
	for (int i = 0; i < GR_MAX_COLS; i++) {
		free(g->bv[i]);
		free(g->bn[i]);
	}
	free(g->bgid);
	free(g->bperm);
	free(g->bstart);
	free(g->bfill);
	free(g->brow);
	free(g);
}

/* Grows the per-gid arrays.  Returns 0 or -ENOMEM. */
static int grow_values(struct grouped *g)
{
	uint32_t cap = g->vcap ? g->vcap * 2 : 1024;
	int64_t *iv = realloc(g->ival, cap * sizeof(*iv));
	if (iv)
		g->ival = iv;
	const char **sv = realloc(g->sval, cap * sizeof(*sv));
	if (sv)
		g->sval = sv;
	uint32_t *sl = realloc(g->slen, cap * sizeof(*sl));
	if (sl)
		g->slen = sl;
	uint64_t *cn = realloc(g->count, cap * sizeof(*cn));
	if (cn)
		g->count = cn;
	if (!iv || !sv || !sl || !cn)
		return -ENOMEM;
	g->vcap = cap;
	return 0;
}

/* Returns the gid of an INT key or of text (s, n), adding it if new; 0
 * on allocation failure (never a valid id for a value).  The same table
 * interns the other text columns' values while a batch is buffered. */
static uint32_t gmap_get(struct grouped *g, int64_t iv, const char *s,
			 uint32_t n)
{
	uint64_t h = s ? hash_bytes(s, n, 1) : hash_bytes(&iv, 8, 2);
	if ((g->ngroups + 1) * 2 >= g->tcap) {
		uint32_t cap = g->tcap ? g->tcap * 2 : 1024;
		struct gmap_ent *t = calloc(cap, sizeof(*t));
		if (!t)
			return 0;
		for (uint32_t i = 0; i < g->tcap; i++) {
			if (!g->tab[i].gid)
				continue;
			uint32_t j = (uint32_t)g->tab[i].hash & (cap - 1);
			while (t[j].gid)
				j = (j + 1) & (cap - 1);
			t[j] = g->tab[i];
		}
		free(g->tab);
		g->tab = t;
		g->tcap = cap;
	}
	uint32_t j = (uint32_t)h & (g->tcap - 1);
	for (; g->tab[j].gid; j = (j + 1) & (g->tcap - 1)) {
		uint32_t id = g->tab[j].gid;
		if (g->tab[j].hash != h)
			continue;
		if (s ? g->sval[id] && g->slen[id] == n &&
			memcmp(g->sval[id], s, n) == 0 :
			!g->sval[id] && g->ival[id] == iv)
			return id;
	}
	uint32_t id = g->ngroups + 1;
	if (id >= g->vcap && grow_values(g))
		return 0;
	g->ngroups = id;
	g->ival[id] = iv;
	g->sval[id] = NULL;
	g->slen[id] = 0;
	g->count[id] = 0;
	if (s) {
		char *copy = malloc(n + 1), **ch;
		if (!copy)
			return 0;
		memcpy(copy, s, n);
		copy[n] = 0;
		ch = realloc(g->chunks, (size_t)(g->nchunks + 1) * sizeof(*ch));
		if (!ch) {
			free(copy);
			return 0;
		}
		g->chunks = ch;
		g->chunks[g->nchunks++] = copy;
		g->sval[id] = copy;
		g->slen[id] = n;
	}
	g->tab[j].hash = h;
	g->tab[j].gid = id;
	return id;
}

static void grouped_segment_gone(struct grouped *g)
{
	g->lmap_seg = NULL;
}

/* Points lmap at the current segment's dictionary. */
static int gmap_segment(struct cursor *c, struct grouped *g)
{
	struct gr_segment *s = c->seg;
	if (g->lmap_seg == s)
		return 0;
	g->lmap_seg = s;
	if (gr_tables[c->vt->t].cols[g->col].type == GR_HOST) {
		const char *host = gr_segment__info(s)->host;
		g->host_gid = gmap_get(g, 0, host, (uint32_t)strlen(host));
		return g->host_gid ? 0 : -ENOMEM;
	}
	if (!g->is_text)
		return 0;
	free(g->lmap);
	g->lmap_n = (c->dict ? c->dict->n : 0) + 1;
	g->lmap = calloc(g->lmap_n, sizeof(*g->lmap));
	return g->lmap ? 0 : -ENOMEM;
}

/* The group id of row r of the current block: 0 for NULL, or -ENOMEM. */
static int64_t row_gid(struct cursor *c, struct grouped *g, uint32_t r)
{
	int col = g->col;
	enum gr_coltype ty = gr_tables[c->vt->t].cols[col].type;
	if (gmap_segment(c, g))
		return -ENOMEM;
	if (ty == GR_HOST)
		return g->host_gid;
	if (c->cmissing[col] ||
	    (c->cn[col] && (c->cn[col][r >> 3] >> (r & 7)) & 1))
		return 0;
	int64_t v = c->cv[col][r];
	if (ty != GR_STR) {
		uint32_t id = gmap_get(g, v, NULL, 0);
		return id ? (int64_t)id : -ENOMEM;
	}
	uint32_t len;
	const char *str = (uint64_t)v < g->lmap_n ?
		gr_dict__str(c->dict, v, &len) : NULL;
	if (!str)
		return 0; /* an id the dictionary lacks reads as NULL */
	if (!g->lmap[v]) {
		g->lmap[v] = gmap_get(g, 0, str, len);
		if (!g->lmap[v])
			return -ENOMEM;
	}
	return g->lmap[v];
}

static int grouped_count_pass(struct cursor *c, struct grouped *g)
{
	int rc;
	uint64_t nulls = 0;
	scan_restart(c);
	while ((rc = scan_seek(c)) == 1) {
		int64_t id = row_gid(c, g, c->row);
		if (id < 0)
			return -ENOMEM;
		if (id)
			g->count[id]++;
		else
			nulls++;
		c->row++;
	}
	if (rc < 0)
		return rc;
	g->count[0] = nulls;
	return 0;
}

/* Groups are emitted in key order, as SQLite sorts: SQLite may rely on it
 * (GROUP BY x ORDER BY x still reports "grouping only" in 3.40), and it
 * costs a sort of the distinct keys, not of the rows.  NULL sorts first. */
static const struct grouped *cmp_g;

static int cmp_gid(const void *a, const void *b)
{
	const struct grouped *g = cmp_g;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r;
	if (!x || !y)
		r = (x != 0) - (y != 0);
	else if (g->is_text) {
		uint32_t n = g->slen[x] < g->slen[y] ? g->slen[x] : g->slen[y];
		r = memcmp(g->sval[x], g->sval[y], n);
		if (!r)
			r = (g->slen[x] > g->slen[y]) - (g->slen[x] < g->slen[y]);
	} else {
		r = (g->ival[x] > g->ival[y]) - (g->ival[x] < g->ival[y]);
	}
	return g->desc ? -r : r;
}

/* Packs groups into passes; returns 0 or -ENOMEM. */
static int grouped_plan(struct cursor *c, struct grouped *g)
{
	uint32_t n = g->ngroups + 1;
	uint64_t row_bytes = 8; /* gid */
	g->nplanned = n;
	for (int i = 0; i < gr_tables[c->vt->t].ncols; i++)
		if (c->need >> i & 1)
			row_bytes += 9;
	uint64_t budget_rows = group_budget() / row_bytes;

	g->order = malloc(n * sizeof(*g->order));
	g->pass_end = malloc(n * sizeof(*g->pass_end));
	g->pass_stream = malloc(n);
	g->in_pass = calloc(n, 1);
	if (!g->order || !g->pass_end || !g->pass_stream || !g->in_pass)
		return -ENOMEM;
	uint32_t *sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (uint32_t id = 0; id < n; id++)
		sorted[id] = id;
	cmp_g = g;
	qsort(sorted, n, sizeof(*sorted), cmp_gid);
	cmp_g = NULL;
	uint32_t k = 0;
	uint64_t rows = 0, maxrows = 0;
	g->npasses = 0;
	for (uint32_t si = 0; si < n; si++) {
		uint32_t id = sorted[si];
		uint64_t cnt = g->count[id];
		if (!cnt)
			continue;
		if (cnt > budget_rows) {
			/* Its own streaming pass. */
			if (rows) {
				g->pass_end[g->npasses] = k;
				g->pass_stream[g->npasses++] = 0;
				rows = 0;
			}
			g->order[k++] = id;
			g->pass_end[g->npasses] = k;
			g->pass_stream[g->npasses++] = 1;
			continue;
		}
		if (rows + cnt > budget_rows) {
			g->pass_end[g->npasses] = k;
			g->pass_stream[g->npasses++] = 0;
			rows = 0;
		}
		g->order[k++] = id;
		rows += cnt;
		if (rows > maxrows)
			maxrows = rows;
	}
	if (rows) {
		g->pass_end[g->npasses] = k;
		g->pass_stream[g->npasses++] = 0;
	}
	free(sorted);
	g->bcap = maxrows;
	if (maxrows) {
		for (int i = 0; i < gr_tables[c->vt->t].ncols; i++) {
			if (!(c->need >> i & 1))
				continue;
			g->bv[i] = malloc(maxrows * sizeof(int64_t));
			g->bn[i] = malloc((maxrows + 7) / 8);
			if (!g->bv[i] || !g->bn[i])
				return -ENOMEM;
		}
		g->bgid = malloc(maxrows * sizeof(*g->bgid));
		g->bperm = malloc(maxrows * sizeof(*g->bperm));
		g->brow = malloc(maxrows * sizeof(*g->brow));
		g->bstart = malloc(n * sizeof(*g->bstart));
		g->bfill = malloc(n * sizeof(*g->bfill));
		if (!g->bgid || !g->bperm || !g->bstart || !g->brow || !g->bfill)
			return -ENOMEM;
	}
	g->pass = -1;
	return 0;
}

/* Runs batch pass p: buffers its groups' rows, then orders them. */
static int grouped_fill_batch(struct cursor *c, struct grouped *g, int p)
{
	const struct gr_table *tab = &gr_tables[c->vt->t];
	uint32_t from = p ? g->pass_end[p - 1] : 0, to = g->pass_end[p];
	int rc;

	memset(g->in_pass, 0, g->nplanned);
	memset(g->bfill, 0, g->nplanned * sizeof(*g->bfill));
	for (uint32_t k = from; k < to; k++)
		g->in_pass[g->order[k]] = 1;
	for (int i = 0; i < tab->ncols; i++)
		if (g->bn[i])
			memset(g->bn[i], 0, (g->bcap + 7) / 8);
	g->brows = 0;
	scan_restart(c);
	while ((rc = scan_seek(c)) == 1) {
		uint32_t r = c->row++;
		int64_t id = row_gid(c, g, r);
		if (id < 0)
			return -ENOMEM;
		if ((uint32_t)id >= g->nplanned || !g->in_pass[id])
			continue;
		/* The open segment may have grown since the count pass:
		 * rows past the counted ones are left out, so the batch
		 * never outgrows its buffers. */
		if (g->bfill[id] >= g->count[id])
			continue;
		g->bfill[id]++;
		uint64_t b = g->brows++;
		g->bgid[b] = (uint32_t)id;
		g->brow[b] = row_id(c, r);
		for (int i = 0; i < tab->ncols; i++) {
			if (!g->bv[i])
				continue;
			int64_t v;
			enum gr_coltype ty = tab->cols[i].type;
			int isnull = ty != GR_HOST && (c->cmissing[i] ||
				(c->cn[i] && (c->cn[i][r >> 3] >> (r & 7)) & 1));
			if (isnull) {
				g->bn[i][b >> 3] |= (uint8_t)(1u << (b & 7));
				continue;
			}
			if (ty == GR_HOST) {
				const char *host =
					gr_segment__info(c->seg)->host;
				v = gmap_get(g, 0, host,
					     (uint32_t)strlen(host));
			} else if (ty == GR_STR) {
				/* Text columns hold gids: the strings outlive
				 * the segment. */
				uint32_t len;
				const char *str = gr_dict__str(c->dict,
							c->cv[i][r], &len);
				if (!str) {
					g->bn[i][b >> 3] |= (uint8_t)(1u << (b & 7));
					continue;
				}
				v = gmap_get(g, 0, str, len);
			} else {
				v = c->cv[i][r];
			}
			if ((ty == GR_HOST || ty == GR_STR) && !v)
				return -ENOMEM;
			g->bv[i][b] = v;
		}
	}
	if (rc < 0)
		return rc;
	/* Counting sort of the batch's rows by group, by the rows actually
	 * placed (fewer than counted if a segment went away meanwhile). */
	uint32_t sum = 0;
	for (uint32_t k = from; k < to; k++) {
		g->bstart[g->order[k]] = sum;
		sum += (uint32_t)g->bfill[g->order[k]];
	}
	for (uint64_t b = 0; b < g->brows; b++)
		g->bperm[g->bstart[g->bgid[b]]++] = (uint32_t)b;
	g->bpos = 0;
	return 0;
}

/* Advances to the next row to emit, across passes.  Returns 1, 0 at the
 * end, or -ENOMEM. */
static int grouped_next(struct cursor *c, struct grouped *g)
{
	for (;;) {
		if (g->pass >= 0 && !g->pass_stream[g->pass]) {
			if (g->bpos < g->brows)
				return 1;
		} else if (g->pass >= 0) {
			uint32_t first = g->pass ? g->pass_end[g->pass - 1] : 0;
			uint32_t want = g->order[first];
			int rc;
			while ((rc = scan_seek(c)) == 1) {
				int64_t id = row_gid(c, g, c->row);
				if (id < 0)
					return -ENOMEM;
				if (id == want)
					return 1;
				c->row++;
			}
			if (rc < 0)
				return rc;
		}
		if (++g->pass >= g->npasses)
			return 0;
		g->emitting_batch = !g->pass_stream[g->pass];
		if (g->emitting_batch) {
			int rc = grouped_fill_batch(c, g, g->pass);
			if (rc < 0)
				return rc;
		} else {
			scan_restart(c);
		}
	}
}

/* Positions the cursor on its next row; sets eof at the end. */
static int seek(struct cursor *c)
{
	int rc = c->g ? grouped_next(c, c->g) : scan_seek(c);
	if (rc < 0)
		return SQLITE_NOMEM;
	c->eof = rc == 0;
	return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
		     int argc, sqlite3_value **argv)
{
	struct cursor *c = (struct cursor *)cur;
	struct gr_qctx *q = c->vt->q;
	const struct gr_table *tab = &gr_tables[c->vt->t];
	const char *p = idxStr, *gp;
	int group_col = -1;
	(void)idxNum;

	retire_segment(c);
	free_retired(c);
	grouped_free(c->g);
	c->g = NULL;
	c->nf = 0;
	c->never = 0;
	c->host_eq = NULL;
	c->lo = q->since;
	c->hi = q->until;
	c->need = strtoull(p, NULL, 16);
	if (c->need >> 63)
		c->need = ~0ull >> (64 - tab->ncols);
	int group_desc = 0;
	if ((gp = strstr(p, ";g"))) {
		char *end;
		group_col = (int)strtol(gp + 2, &end, 10);
		group_desc = *end == 'd';
	}
	/* The window and --pid are filters like any other. */
	if (q->since != INT64_MIN)
		c->f[c->nf++] = (struct filt){ GR_EV_ts, OP_GE, q->since };
	if (q->until != INT64_MAX)
		c->f[c->nf++] = (struct filt){ GR_EV_ts, OP_LE, q->until };
	if (q->has_pid)
		c->f[c->nf++] = (struct filt){ GR_EV_pid, OP_EQ, q->pid };
	for (int i = 0; i < argc && (p = strchr(p, ';')); i++) {
		int col, op;
		if (sscanf(++p, "%d,%d", &col, &op) != 2)
			break;
		sqlite3_value *v = argv[i];
		if (tab->cols[col].type == GR_HOST) {
			if (sqlite3_value_type(v) == SQLITE_TEXT)
				c->host_eq = (const char *)sqlite3_value_text(v);
			else if (sqlite3_value_type(v) == SQLITE_NULL)
				c->never = 1;
			/* --host and host = '…' both hold. */
			if (c->host_eq && q->host && strcmp(c->host_eq, q->host))
				c->never = 1;
			continue;
		}
		if (sqlite3_value_type(v) == SQLITE_NULL) {
			c->never = 1; /* x op NULL is never true */
			continue;
		}
		/* Only integer operands are evaluated here; SQLite applies
		 * the others (its re-check sees every row we pass). */
		if (sqlite3_value_type(v) != SQLITE_INTEGER ||
		    c->nf == MAX_FILTERS)
			continue;
		int64_t x = sqlite3_value_int64(v);
		c->f[c->nf++] = (struct filt){ col, op, x };
		if (col == GR_EV_ts) {
			if ((op == OP_GE || op == OP_EQ) && x > c->lo)
				c->lo = x;
			if (op == OP_GT && x != INT64_MAX && x + 1 > c->lo)
				c->lo = x + 1;
			if ((op == OP_LE || op == OP_EQ) && x < c->hi)
				c->hi = x;
			if (op == OP_LT && x != INT64_MIN && x - 1 < c->hi)
				c->hi = x - 1;
		}
	}
	for (int i = 0; i < c->nf; i++)
		c->need |= 1ull << c->f[i].col;
	if (group_col >= 0)
		c->need |= 1ull << group_col;
	c->eof = 0;
	scan_restart(c);
	if (c->never || c->lo > c->hi) {
		c->eof = 1;
		return SQLITE_OK;
	}
	if (group_col >= 0) {
		struct grouped *g = calloc(1, sizeof(*g));
		if (!g)
			return SQLITE_NOMEM;
		c->g = g;
		g->col = group_col;
		g->desc = group_desc;
		g->is_text = tab->cols[group_col].type == GR_STR ||
			     tab->cols[group_col].type == GR_HOST;
		if (grow_values(g) || grouped_count_pass(c, g) ||
		    grouped_plan(c, g))
			return SQLITE_NOMEM;
	}
	return seek(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;
	if (c->g && c->g->emitting_batch)
		c->g->bpos++;
	else
		c->row++;
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

	if (c->g && c->g->emitting_batch) {
		const struct grouped *g = c->g;
		uint64_t b = g->bperm[g->bpos];
		if (!g->bv[i]) {
			sqlite3_result_error(ctx, "gpurec: column not decoded", -1);
			return SQLITE_ERROR;
		}
		if ((g->bn[i][b >> 3] >> (b & 7)) & 1)
			return SQLITE_OK; /* NULL */
		int64_t v = g->bv[i][b];
		if (tab->cols[i].type == GR_STR || tab->cols[i].type == GR_HOST)
			sqlite3_result_text(ctx, g->sval[v], (int)g->slen[v],
					    SQLITE_TRANSIENT);
		else
			sqlite3_result_int64(ctx, v);
		return SQLITE_OK;
	}
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
	if (c->g && c->g->emitting_batch)
		*rowid = c->g->brow[c->g->bperm[c->g->bpos]];
	else
		*rowid = row_id(c, c->row);
	return SQLITE_OK;
}

static const sqlite3_module event_module = {
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

/* ---- the segments table ------------------------------------------------ */

struct segcur {
	sqlite3_vtab_cursor base;
	struct gr_qctx *q;
	int i;
	struct gr_segment *seg; /* metadata of row i, NULL if unreadable */
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

static int sv_best_index(sqlite3_vtab *v, sqlite3_index_info *ii)
{
	(void)v;
	ii->estimatedCost = 1000;
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
		if (gr_segment__open(cs->path, cs->sealed, &c->seg, &err)) {
			gr_vtab__warn(c->q, c->i, "%s: %s", cs->path, err);
			free(err);
			err = NULL;
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
	(void)n, (void)s, (void)argc, (void)argv;
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

static const sqlite3_module segments_module = {
	.iVersion = 0,
	.xCreate = sv_connect,
	.xConnect = sv_connect,
	.xBestIndex = sv_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = sv_open,
	.xClose = sv_close,
	.xFilter = sv_filter,
	.xNext = sv_next,
	.xEof = sv_eof,
	.xColumn = sv_column,
	.xRowid = sv_rowid,
};

/* window_since(), window_until(): the --since/--until bounds in ns (as
 * ts), NULL where open.  A report needs them where a column other than ts
 * (a process's exit_ts) may lie past the window that cut events off. */
static void fn_window(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc, (void)argv;
	int64_t v = *(const int64_t *)sqlite3_user_data(ctx);
	if (v != INT64_MIN && v != INT64_MAX)
		sqlite3_result_int64(ctx, v);
}

int gr_vtab__register(sqlite3 *db, struct gr_qctx *q)
{
	int rc = sqlite3_create_module(db, "gpurec_events", &event_module, q);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "window_since", 0,
					     SQLITE_UTF8 | SQLITE_INNOCUOUS,
					     &q->since, fn_window, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "window_until", 0,
					     SQLITE_UTF8 | SQLITE_INNOCUOUS,
					     &q->until, fn_window, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module(db, "gpurec_segments",
					   &segments_module, q);
	if (!q->warned && q->cat.nsegs &&
	    !(q->warned = calloc((size_t)q->cat.nsegs, 1)))
		return SQLITE_NOMEM;
	for (int t = 0; t < GR_NTABLES && rc == SQLITE_OK; t++) {
		if (gr_tables[t].flags & GR_TF_SUMMARY)
			continue; /* query/sumtab.c */
		char *sql = sqlite3_mprintf(
			"CREATE VIRTUAL TABLE \"%w\" USING %s(%s)",
			gr_tables[t].name,
			gr_tables[t].flags & GR_TF_EVENT ? "gpurec_events" :
							   "gpurec_segments",
			gr_tables[t].name);
		if (!sql)
			return SQLITE_NOMEM;
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
	return rc;
}
