/* vt_grouped.c - grouped emission for the event tables (vt_event.c).
 *
 * For `GROUP BY col`, SQLite normally sorts every row by col (an external
 * merge sort once the rows outgrow memory: for 50M rows of kernel names,
 * gigabytes of temp files).  When it only needs the rows grouped
 * (sqlite3_vtab_distinct() == 1), the scan does that instead:
 *
 *   0. first, one pass buffers every row's needed columns with its group
 *      and orders them by a counting sort: done, unless the rows outgrow
 *      GROUP_BUDGET bytes, when the buffer is dropped and
 *   1. a count pass decodes only the group column (and filters) and counts
 *      rows per distinct value, interning values into group ids;
 *   2. groups are packed, in id order, into batches whose rows fit
 *      GROUP_BUDGET bytes of buffered columns; each batch is one pass that
 *      copies its rows' needed columns out, then emits them bucketed by
 *      group (a counting sort);
 *   3. a group too big for the budget alone gets a pass of its own that
 *      streams its rows straight from the blocks, buffering nothing.
 *
 * Memory stays under the budget whatever the data; a query whose rows fit
 * it scans once (a user's one process over ten minutes of a busy host),
 * others at most 2 + 2 * rows * row_bytes / GROUP_BUDGET times, each a
 * scan of a few columns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "query/vt_event.h"

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
	const struct gr_dict *lmap_dict; /* the dictionary lmap is sized for */
	uint32_t host_gid;        /* the current segment's host */
	int any_text;             /* a text column is grouped or buffered */
	/* The columns buffered (the cursor's need), in column order. */
	int nbuf;
	int8_t bufcol[GR_MAX_COLS];

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
	int prefilled;            /* pass 0's batch is buffered already */
};

static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

void gr_grouped__free(struct grouped *g)
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

void gr_grouped__segment_gone(struct grouped *g)
{
	g->lmap_seg = NULL;
}

/* An empty lmap for the cursor's dictionary.  Returns 0 or -ENOMEM. */
static int lmap_reset(struct cursor *c, struct grouped *g)
{
	free(g->lmap);
	g->lmap_dict = c->dict;
	g->lmap_n = (c->dict ? c->dict->n : 0) + 1;
	g->lmap = calloc(g->lmap_n, sizeof(*g->lmap));
	return g->lmap ? 0 : -ENOMEM;
}

/* Points lmap at the current segment's dictionary, and host_gid at its
 * host. */
static int gmap_segment(struct cursor *c, struct grouped *g)
{
	struct gr_segment *s = c->seg;
	if (g->lmap_seg == s)
		return 0;
	g->lmap_seg = s;
	if (!g->any_text)
		return 0;
	const char *host = gr_segment__info(s)->host;
	g->host_gid = gmap_get(g, 0, host, (uint32_t)strlen(host));
	return g->host_gid && !lmap_reset(c, g) ? 0 : -ENOMEM;
}

/* The gid of the current segment's dictionary id v: 0 for an id the
 * dictionary lacks (NULL), or -ENOMEM.  Text of every column shares the
 * one table, so an id maps to one gid whatever column holds it. */
static int64_t dict_gid(struct cursor *c, struct grouped *g, int64_t v)
{
	/* The dictionary loads with the segment's first block holding a
	 * text column, which may come after lmap was made. */
	if (c->dict != g->lmap_dict && lmap_reset(c, g))
		return -ENOMEM;
	uint32_t len;
	const char *str = (uint64_t)v < g->lmap_n ?
		gr_dict__str(c->dict, v, &len) : NULL;
	if (!str)
		return 0;
	if (!g->lmap[v] && !(g->lmap[v] = gmap_get(g, 0, str, len)))
		return -ENOMEM;
	return g->lmap[v];
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
	return dict_gid(c, g, v); /* an id the dictionary lacks: NULL */
}

static int grouped_count_pass(struct cursor *c, struct grouped *g)
{
	int rc;
	uint64_t nulls = 0;
	gr_evscan__restart(c);
	while ((rc = gr_evscan__seek(c)) == 1) {
		int64_t id = row_gid(c, g, c->row);
		if (id < 0)
			return -ENOMEM;
		if (id)
			g->count[id]++;
		else
			nulls++;
		gr_evscan__step(c);
	}
	if (rc < 0)
		return rc;
	g->count[0] = nulls;
	return 0;
}

/* Bytes a buffered row takes: its gid and each needed column's value and
 * null bit (rounded up). */
static uint64_t row_bytes(const struct cursor *c)
{
	uint64_t n = 8;
	for (int i = 0; i < gr_tables[c->vt->t].ncols; i++)
		if (c->need >> i & 1)
			n += 9;
	return n;
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

/* Fills ids[0..n) with the group ids 0..n-1 in emission order. */
static void sort_gids(const struct grouped *g, uint32_t *ids, uint32_t n)
{
	for (uint32_t id = 0; id < n; id++)
		ids[id] = id;
	cmp_g = g;
	qsort(ids, n, sizeof(*ids), cmp_gid);
	cmp_g = NULL;
}

/* Packs groups into passes; returns 0 or -ENOMEM. */
static int grouped_plan(struct cursor *c, struct grouped *g)
{
	uint32_t n = g->ngroups + 1;
	g->nplanned = n;
	uint64_t budget_rows = group_budget() / row_bytes(c);

	g->order = malloc(n * sizeof(*g->order));
	g->pass_end = malloc(n * sizeof(*g->pass_end));
	g->pass_stream = malloc(n);
	g->in_pass = calloc(n, 1);
	if (!g->order || !g->pass_end || !g->pass_stream || !g->in_pass)
		return -ENOMEM;
	uint32_t *sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	sort_gids(g, sorted, n);
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

/* Appends row r of the current block, of group id, to the batch buffers
 * (which have room).  Text columns hold gids: the strings outlive the
 * segment.  Returns 0 or -ENOMEM. */
static int buffer_row(struct cursor *c, struct grouped *g, uint32_t r,
		      uint32_t id)
{
	const struct gr_table *tab = &gr_tables[c->vt->t];
	uint64_t b = g->brows++;
	g->bgid[b] = id;
	g->brow[b] = gr_evscan__row_id(c, r);
	for (int k = 0; k < g->nbuf; k++) {
		int i = g->bufcol[k];
		int64_t v;
		enum gr_coltype ty = tab->cols[i].type;
		if (ty == GR_HOST) {
			v = g->host_gid;
		} else if (c->cmissing[i] ||
			   (c->cn[i] && (c->cn[i][r >> 3] >> (r & 7)) & 1)) {
			v = 0;
		} else if (ty == GR_STR) {
			v = i == g->col ? id : dict_gid(c, g, c->cv[i][r]);
			if (v < 0)
				return -ENOMEM;
		} else {
			g->bv[i][b] = c->cv[i][r];
			continue;
		}
		if (!v)
			g->bn[i][b >> 3] |= (uint8_t)(1u << (b & 7));
		g->bv[i][b] = v;
	}
	return 0;
}

/* Counting sort of the batch's rows by group (order[from, to)), by the
 * rows actually placed (fewer than counted if a segment went away
 * meanwhile). */
static void order_batch(struct grouped *g, uint32_t from, uint32_t to)
{
	uint32_t sum = 0;
	for (uint32_t k = from; k < to; k++) {
		g->bstart[g->order[k]] = sum;
		sum += (uint32_t)g->bfill[g->order[k]];
	}
	for (uint64_t b = 0; b < g->brows; b++)
		g->bperm[g->bstart[g->bgid[b]]++] = (uint32_t)b;
	g->bpos = 0;
}

/* Frees the batch buffers. */
static void drop_batch(struct grouped *g)
{
	for (int i = 0; i < GR_MAX_COLS; i++) {
		free(g->bv[i]);
		free(g->bn[i]);
		g->bv[i] = NULL;
		g->bn[i] = NULL;
	}
	free(g->bgid);
	free(g->brow);
	g->bgid = NULL;
	g->brow = NULL;
	g->brows = g->bcap = 0;
}

/* Grows the batch buffers to cap rows.  Returns 0 or -ENOMEM. */
static int grow_batch(struct cursor *c, struct grouped *g, uint64_t cap)
{
	for (int i = 0; i < gr_tables[c->vt->t].ncols; i++) {
		if (!(c->need >> i & 1))
			continue;
		int64_t *v = realloc(g->bv[i], cap * sizeof(*v));
		if (v)
			g->bv[i] = v;
		uint8_t *n = realloc(g->bn[i], (cap + 7) / 8);
		if (n) {
			memset(n + (g->bcap + 7) / 8, 0,
			       (cap + 7) / 8 - (g->bcap + 7) / 8);
			g->bn[i] = n;
		}
		if (!v || !n)
			return -ENOMEM;
	}
	uint32_t *gid = realloc(g->bgid, cap * sizeof(*gid));
	if (gid)
		g->bgid = gid;
	int64_t *row = realloc(g->brow, cap * sizeof(*row));
	if (row)
		g->brow = row;
	if (!gid || !row)
		return -ENOMEM;
	g->bcap = cap;
	return 0;
}

/* Step 0: one pass buffering every row, its buffers grown by doubling up
 * to the budget.  Returns 1 with the whole result as pass 0's batch, 0
 * if the rows outgrew the budget (buffers dropped, counts cleared, for
 * the count pass to start over), or -ENOMEM. */
static int grouped_one_pass(struct cursor *c, struct grouped *g)
{
	uint64_t max_rows = group_budget() / row_bytes(c);
	int rc;
	g->count[0] = 0; /* NULL's: the other ids start at 0 when made */
	gr_evscan__restart(c);
	while ((rc = gr_evscan__seek(c)) == 1) {
		uint32_t r = c->row;
		gr_evscan__step(c);
		int64_t id = row_gid(c, g, r);
		if (id < 0)
			return -ENOMEM;
		if (g->brows == g->bcap) {
			uint64_t cap = g->bcap ? g->bcap * 2 : 4096;
			if (cap > max_rows)
				cap = max_rows;
			if (g->brows >= cap) {
				drop_batch(g);
				memset(g->count, 0,
				       (g->ngroups + 1) * sizeof(*g->count));
				return 0;
			}
			if (grow_batch(c, g, cap))
				return -ENOMEM;
		}
		g->count[id]++;
		if (buffer_row(c, g, r, (uint32_t)id))
			return -ENOMEM;
	}
	if (rc < 0)
		return rc;
	/* One pass of every group with a row, in key order. */
	uint32_t n = g->ngroups + 1;
	g->nplanned = n;
	g->order = malloc(n * sizeof(*g->order));
	g->pass_end = malloc(sizeof(*g->pass_end));
	g->pass_stream = calloc(1, 1);
	g->bstart = malloc(n * sizeof(*g->bstart));
	g->bfill = malloc(n * sizeof(*g->bfill));
	g->bperm = malloc((g->brows ? g->brows : 1) * sizeof(*g->bperm));
	if (!g->order || !g->pass_end || !g->pass_stream || !g->bstart ||
	    !g->bfill || !g->bperm)
		return -ENOMEM;
	sort_gids(g, g->order, n);
	uint32_t k = 0;
	for (uint32_t si = 0; si < n; si++)
		if (g->count[g->order[si]])
			g->order[k++] = g->order[si];
	memcpy(g->bfill, g->count, n * sizeof(*g->bfill));
	g->npasses = k ? 1 : 0;
	g->pass_end[0] = k;
	order_batch(g, 0, k);
	g->prefilled = 1;
	g->pass = -1;
	return 1;
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
	gr_evscan__restart(c);
	while ((rc = gr_evscan__seek(c)) == 1) {
		uint32_t r = c->row;
		gr_evscan__step(c);
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
		if (buffer_row(c, g, r, (uint32_t)id))
			return -ENOMEM;
	}
	if (rc < 0)
		return rc;
	order_batch(g, from, to);
	return 0;
}

/* Advances to the next row to emit, across passes.  Returns 1, 0 at the
 * end, or -ENOMEM. */
int gr_grouped__next(struct cursor *c, struct grouped *g)
{
	for (;;) {
		if (g->pass >= 0 && !g->pass_stream[g->pass]) {
			if (g->bpos < g->brows)
				return 1;
		} else if (g->pass >= 0) {
			uint32_t first = g->pass ? g->pass_end[g->pass - 1] : 0;
			uint32_t want = g->order[first];
			int rc;
			while ((rc = gr_evscan__seek(c)) == 1) {
				int64_t id = row_gid(c, g, c->row);
				if (id < 0)
					return -ENOMEM;
				if (id == want)
					return 1;
				gr_evscan__step(c);
			}
			if (rc < 0)
				return rc;
		}
		if (++g->pass >= g->npasses)
			return 0;
		g->emitting_batch = !g->pass_stream[g->pass];
		if (g->emitting_batch && g->prefilled) {
			g->prefilled = 0; /* grouped_one_pass() filled it */
		} else if (g->emitting_batch) {
			int rc = grouped_fill_batch(c, g, g->pass);
			if (rc < 0)
				return rc;
		} else {
			gr_evscan__restart(c);
		}
	}
}

int gr_grouped__start(struct cursor *c, int col, int desc)
{
	const struct gr_table *tab = &gr_tables[c->vt->t];
	struct grouped *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	c->g = g;
	g->col = col;
	g->desc = desc;
	g->is_text = tab->cols[col].type == GR_STR ||
		     tab->cols[col].type == GR_HOST;
	g->any_text = g->is_text;
	for (int i = 0; i < tab->ncols; i++) {
		if (!(c->need >> i & 1))
			continue;
		g->bufcol[g->nbuf++] = (int8_t)i;
		if (tab->cols[i].type == GR_STR || tab->cols[i].type == GR_HOST)
			g->any_text = 1;
	}
	if (grow_values(g))
		return -ENOMEM;
	int rc = grouped_one_pass(c, g);
	if (rc < 0)
		return rc;
	if (!rc && (rc = grouped_count_pass(c, g)) < 0)
		return rc; /* -ENOMEM, or -EINTR: stopped */
	if (!rc && grouped_plan(c, g))
		return -ENOMEM;
	return 0;
}

int gr_grouped__emitting(const struct grouped *g)
{
	return g->emitting_batch;
}

void gr_grouped__step(struct grouped *g)
{
	g->bpos++;
}

int gr_grouped__column(const struct grouped *g, sqlite3_context *ctx, int i,
		       enum gr_coltype ty)
{
	uint64_t b = g->bperm[g->bpos];
	if (!g->bv[i]) {
		sqlite3_result_error(ctx, "gpurec: column not decoded", -1);
		return SQLITE_ERROR;
	}
	if ((g->bn[i][b >> 3] >> (b & 7)) & 1)
		return SQLITE_OK; /* NULL */
	int64_t v = g->bv[i][b];
	if (ty == GR_STR || ty == GR_HOST)
		sqlite3_result_text(ctx, g->sval[v], (int)g->slen[v],
				    SQLITE_TRANSIENT);
	else
		sqlite3_result_int64(ctx, v);
	return SQLITE_OK;
}

int64_t gr_grouped__rowid(const struct grouped *g)
{
	return g->brow[g->bperm[g->bpos]];
}
