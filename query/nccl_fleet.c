/* nccl_fleet.c - the NCCL straggler tables: every collective's arrivals
 * grouped in C, in one pass, instead of SQLite window functions.
 *
 * nccl-skew and nccl-arrivals compare each rank's entry into a collective
 * with the other ranks' entries into the same one (communicator and seq,
 * across hosts); rank-pace compares a rank's entries one iteration apart.
 * Written as SQL, that is a window per (comm_id, seq) and another per
 * (comm_id, seq, host), or a lag() window and a self-join: SQLite sorts
 * every nccl row once per window and once more for the GROUP BY, and
 * percentile() keeps each rank's values again; over 8 hosts x 1 minute
 * (1.1 million calls) that took 12 s.  Here the calls are read once,
 * walked from the nccl blocks (vt_event.h: the rows the nccl table gives,
 * under the same --since, --until, --pid and --host, without SQLite's
 * calls per row and column, which were three quarters of the time), into
 * one record each; a hash gives each group (a
 * collective, a rank, a process's repeats of one call) an id and a
 * counting pass gathers the records by it (moving each once: sorting the
 * records moved each log n times and took half the time), and each group
 * is walked in turn.
 *
 * Three eponymous table-valued functions, which the reports read (their
 * --raw halves keep the SQL these tables must equal):
 *
 *  nccl_rank_skew     one row per (comm_id, host, pid, rank) over the
 *                     collectives seen on as many ranks as the
 *                     communicator's best covered ones (a window's edge or
 *                     a missing host cannot name a rank late);
 *  nccl_last_arrival  one row per collective (comm_id, seq): ranks seen,
 *                     first arrival, the last rank and the one before it;
 *  nccl_rank_pace(N)  one row per (comm_id, host, pid, rank): collectives,
 *                     last seq, the communicator's last, its collectives
 *                     per iteration (N if N > 0, else the longest median
 *                     seq gap between one process's repeats of one op and
 *                     size), the process's median iteration time and its
 *                     time inside NCCL calls (all its calls).
 *
 * Exactness: lateness is an integer; its mean is the int64 sum over the
 * count as a double, which is what SQLite's avg() gives while the sum
 * stays below 2^53 ns (104 days of lateness per rank); p99 interpolates
 * the sorted values exactly as percentile() does, medians as median()
 * (aggregates.c).
 *
 * Memory is one record per call (88 bytes) plus a few words of index, and
 * time is that of reading every call: a day of 8 busy hosts (1.6 billion
 * calls) neither fits nor answers in seconds; that needs per-collective
 * summaries written at ingest (docs/reports.md says where this stands).
 * Every allocation here goes through SQLite's allocator, so --max-memory
 * (sqlite3_hard_heap_limit64, 1G by default) caps these tables as it caps
 * SQLite's own sorts: a window too big ends with the memory line, not
 * with the host's memory exhausted.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/nccl_fleet.h"
#include "query/sqlmem.h"
#include "query/vt_event.h"
#include "store/codec.h"
#include "store/ncclcoll.h"

/* A NULL integer column: never a real pid, rank, nranks or byte count. */
#define NUL GR_SQ_NULL

/* One rank's entry into one collective. */
struct arrival {
	int64_t comm, seq, pid, rank, nranks, ts;
	int64_t bytes;
	int64_t late;		/* ts less the collective's first entry */
	int64_t host_late;	/* ts less its host's first entry, or NUL */
	int32_t host;		/* index into names, in strcmp order */
	int32_t op;		/* index into names */
	int32_t n;		/* ranks seen in the collective */
	uint8_t last;		/* the one rank that entered last */
	uint8_t counted;	/* nccl-skew counts its collective */
};

/* What both tables are computed from. */
struct nccl_load {
	struct arrival *a;
	size_t n, cap;
	char **names;		/* hosts and ops, interned */
	int nnames, capnames;
};

static void load_free(struct nccl_load *l)
{
	for (int i = 0; i < l->nnames; i++)
		sqlite3_free(l->names[i]);
	sqlite3_free(l->names);
	sqlite3_free(l->a);
	memset(l, 0, sizeof(*l));
}

/* Returns the index of @s in l->names, adding it if new, or -1 (ENOMEM).
 * Hosts and ops are few: a scan from the last hit finds them. */
static int intern(struct nccl_load *l, const char *s, int hint)
{
	if (hint >= 0 && hint < l->nnames && !strcmp(l->names[hint], s))
		return hint;
	for (int i = 0; i < l->nnames; i++)
		if (!strcmp(l->names[i], s))
			return i;
	if (l->nnames == l->capnames) {
		int cap = l->capnames ? 2 * l->capnames : 16;
		char **p = sqlite3_realloc64(l->names, (size_t)cap * sizeof(*p));
		if (!p)
			return -1;
		l->names = p;
		l->capnames = cap;
	}
	if (!(l->names[l->nnames] = gr_sq_strdup(s)))
		return -1;
	return l->nnames++;
}

static int cmp_name(const void *pa, const void *pb, void *names)
{
	return strcmp(((char **)names)[*(const int *)pa],
		      ((char **)names)[*(const int *)pb]);
}

/* Renumbers the interned names in strcmp order, so that comparing two
 * host indexes orders hosts as SQLite's BINARY collation does. */
static int renumber_names(struct nccl_load *l)
{
	int n = l->nnames;
	int *order = sqlite3_malloc64((size_t)(n ? n : 1) * sizeof(*order));
	int *newid = sqlite3_malloc64((size_t)(n ? n : 1) * sizeof(*newid));
	char **names = sqlite3_malloc64((size_t)(n ? n : 1) * sizeof(*names));

	if (!order || !newid || !names) {
		sqlite3_free(order), sqlite3_free(newid), sqlite3_free(names);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, (size_t)n, sizeof(*order), cmp_name, l->names);
	for (int i = 0; i < n; i++) {
		newid[order[i]] = i;
		names[i] = l->names[order[i]];
	}
	for (size_t i = 0; i < l->n; i++) {
		l->a[i].host = newid[l->a[i].host];
		l->a[i].op = newid[l->a[i].op];
	}
	sqlite3_free(l->names);
	l->names = names;
	/* The new array holds n: intern() may add more after this (rank-pace
	 * reads hosts with no collective), and must grow it first. */
	l->capnames = n ? n : 1;
	sqlite3_free(order);
	sqlite3_free(newid);
	return 0;
}

/* The nccl table's column @name, or -1. */
static int nccl_col(const char *name)
{
	return gr_table__col(&gr_tables[GR_T_nccl], name);
}

/* The text of string column @col of @c's row (NULL for NULL, or an id
 * its dictionary lacks, as the table gives it). */
static const char *row_str(const struct cursor *c, int col)
{
	uint32_t len;
	if (gr_evrow__null(c, col))
		return NULL;
	return gr_dict__str(c->dict, gr_evrow__int(c, col), &len);
}

/* Whether op is one of the collectives that have a seq shared by every
 * rank: the reports' --raw halves filter on the same list. */
static int is_collective(const char *op)
{
	return op && gr_coll_is_collective(op, strlen(op));
}

/* One call of a collective, as the nccl table gives it: NUL for a NULL
 * pid, rank, nranks or bytes, ts 0 for a NULL one (never written). */
struct coll_call {
	int64_t comm, seq, pid, rank, nranks, ts, bytes;
	const char *op, *host;		/* valid during the callback */
};

/* Walks the collectives' calls of the nccl table: the rows of "SELECT
 * comm_id, seq, host, pid, rank, nranks, ts, op, bytes FROM nccl WHERE seq
 * IS NOT NULL AND comm_id IS NOT NULL" whose op is_collective(), in its
 * order, walked from the blocks (vt_event.h), not through SQLite, whose
 * calls per row and column were most of the time.  skip (or NULL) answers
 * for blocks before they are read (gr_evwalk__set_skip).  Calls fn(ctx,
 * call) for each; a negative return ends the walk with it.  Returns
 * SQLITE_OK, or an SQLite error code with *err set (sqlite3_malloc'd). */
static int walk_calls(struct gr_qctx *q, gr_scan_skip_fn skip, void *sctx,
		      int (*fn)(void *ctx, const struct coll_call *c),
		      void *ctx, char **err)
{
	enum { C_COMM, C_SEQ, C_PID, C_RANK, C_NRANKS, C_TS, C_OP, C_BYTES,
	       NC };
	static const char *const name[NC] = {
		"comm_id", "seq", "pid", "rank", "nranks", "ts", "op", "bytes",
	};
	int col[NC], rc;
	uint64_t need = 0;

	for (int i = 0; i < NC; i++) {
		if ((col[i] = nccl_col(name[i])) < 0) {
			*err = sqlite3_mprintf("nccl has no column %s", name[i]);
			return SQLITE_ERROR;
		}
		need |= 1ull << col[i];
	}
	struct gr_evwalk *w = gr_evwalk__open(q, "nccl", need, 0, 0);
	if (!w) {
		*err = sqlite3_mprintf("out of memory reading nccl");
		return SQLITE_NOMEM;
	}
	if (skip)
		gr_evwalk__set_skip(w, skip, sctx);
	const struct cursor *r = gr_evwalk__cursor(w);
#define I(i) (gr_evrow__null(r, col[i]) ? NUL : gr_evrow__int(r, col[i]))
	while ((rc = gr_evwalk__next(w)) == 1) {
		if (gr_evrow__null(r, col[C_SEQ]) ||
		    gr_evrow__null(r, col[C_COMM]))
			continue;
		const char *op = row_str(r, col[C_OP]);
		if (!is_collective(op))
			continue;
		const char *host = gr_evwalk__host(w);
		struct coll_call c = {
			.comm = gr_evrow__int(r, col[C_COMM]),
			.seq = gr_evrow__int(r, col[C_SEQ]),
			.pid = I(C_PID), .rank = I(C_RANK),
			.nranks = I(C_NRANKS), .bytes = I(C_BYTES),
			.ts = gr_evrow__null(r, col[C_TS]) ? 0 :
			      gr_evrow__int(r, col[C_TS]),
			.op = op, .host = host ? host : "",
		};
		if ((rc = fn(ctx, &c)) < 0)
			break;
	}
#undef I
	gr_evwalk__close(w);
	if (rc < 0)
		return gr_vtab__walk_error(rc, "nccl", err);
	return SQLITE_OK;
}

struct load_ctx {
	struct nccl_load *l;
	int hhint, ohint;		/* intern()'s last hits */
};

/* walk_calls()'s callback for load(): the call as one more arrival. */
static int load_call(void *ctx, const struct coll_call *c)
{
	struct load_ctx *x = ctx;
	struct nccl_load *l = x->l;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 65536;
		struct arrival *p = sqlite3_realloc64(l->a, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->a = p;
		l->cap = cap;
	}
	x->hhint = intern(l, c->host, x->hhint);
	x->ohint = intern(l, c->op, x->ohint);
	if (x->hhint < 0 || x->ohint < 0)
		return -ENOMEM;
	l->a[l->n++] = (struct arrival){
		.comm = c->comm, .seq = c->seq, .pid = c->pid,
		.rank = c->rank, .nranks = c->nranks, .ts = c->ts,
		.bytes = c->bytes, .host = x->hhint, .op = x->ohint,
	};
	return 0;
}

/* Reads every collective call into @l (walk_calls()), hosts and ops
 * renumbered in strcmp order.  Returns SQLITE_OK, or an SQLite error code
 * with *err set. */
static int load(struct gr_qctx *q, struct nccl_load *l, char **err)
{
	struct load_ctx x = { .l = l, .hhint = -1, .ohint = -1 };
	int rc = walk_calls(q, NULL, NULL, load_call, &x, err);

	if (rc != SQLITE_OK)
		return rc;
	if (renumber_names(l))
		return SQLITE_NOMEM;
	return SQLITE_OK;
}

/* Ids for keys of up to four words ((comm_id, seq) of a collective,
 * (comm_id, host, pid, rank) of a rank), in first-seen order: linear
 * probing in a power-of-two table of ids kept at most half full.  Grouping
 * by id and then counting ids moves each arrival once, where sorting the
 * arrivals moved each of them log n times (that sort was half the time). */
struct idmap {
	int64_t (*key)[4];	/* by id */
	uint32_t *slot;		/* id + 1, or 0 where empty */
	size_t cap;		/* slots: 0 or a power of two */
	uint32_t n, capkeys;
};

static uint64_t key_hash(const int64_t k[4])
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 4; i++) {
		h ^= (uint64_t)k[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static void idmap_free(struct idmap *m)
{
	sqlite3_free(m->key);
	sqlite3_free(m->slot);
	memset(m, 0, sizeof(*m));
}

static int idmap_grow(struct idmap *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	uint32_t *slot = gr_sq_calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (uint32_t id = 0; id < m->n; id++) {
		size_t i = key_hash(m->key[id]) & (cap - 1);
		while (slot[i])
			i = (i + 1) & (cap - 1);
		slot[i] = id + 1;
	}
	sqlite3_free(m->slot);
	m->slot = slot;
	m->cap = cap;
	return 0;
}

/* The slot of @k in @m (m->cap > 0): its own, or the empty one that
 * ends its probe. */
static size_t idmap_slot(const struct idmap *m, const int64_t k[4])
{
	size_t i;

	for (i = key_hash(k) & (m->cap - 1); m->slot[i];
	     i = (i + 1) & (m->cap - 1)) {
		const int64_t *o = m->key[m->slot[i] - 1];
		if (o[0] == k[0] && o[1] == k[1] && o[2] == k[2] &&
		    o[3] == k[3])
			break;
	}
	return i;
}

/* Returns the id of @k, or -1 if absent. */
static int64_t idmap_find(const struct idmap *m, const int64_t k[4])
{
	return m->cap ? (int64_t)m->slot[idmap_slot(m, k)] - 1 : -1;
}

/* Returns the id of @k, adding it if new, or -1 (ENOMEM). */
static int64_t idmap_get(struct idmap *m, const int64_t k[4])
{
	size_t i;

	if (2 * (size_t)(m->n + 1) > m->cap && idmap_grow(m))
		return -1;
	i = idmap_slot(m, k);
	if (m->slot[i])
		return m->slot[i] - 1;
	if (m->n == m->capkeys) {
		uint32_t cap = m->capkeys ? 2 * m->capkeys : 1024;
		int64_t (*key)[4] = sqlite3_realloc64(m->key, cap * sizeof(*key));
		if (!key)
			return -1;
		m->key = key;
		m->capkeys = cap;
	}
	memcpy(m->key[m->n], k, sizeof(m->key[0]));
	m->slot[i] = m->n + 1;
	return m->n++;
}

/* Groups arrivals by the ids in @id[0..n) (< nids): on return ord[start[g]
 * .. start[g + 1]) are the indexes with id g, in their first order.
 * @start has nids + 1 entries. */
static void group_by_id(const uint32_t *id, size_t n, uint32_t nids,
			uint32_t *start, uint32_t *ord)
{
	memset(start, 0, ((size_t)nids + 1) * sizeof(*start));
	for (size_t i = 0; i < n; i++)
		start[id[i] + 1]++;
	for (uint32_t g = 0; g < nids; g++)
		start[g + 1] += start[g];
	for (size_t i = 0; i < n; i++)
		ord[start[id[i]]++] = (uint32_t)i;
	/* Each start[g] now holds the end of group g: shift them back. */
	memmove(start + 1, start, (size_t)nids * sizeof(*start));
	start[0] = 0;
}

/* Groups the arrivals of @l for which @key fills a key (returns 1) by
 * that key: *m holds the keys (group g is m->key[g]), and *ord[(*start)[g]
 * .. (*start)[g + 1]) the indexes of group g's arrivals, in load order.
 * Returns 0 or -ENOMEM (nothing to free then). */
static int group_arrivals(const struct nccl_load *l,
			  int (*key)(const struct arrival *, int64_t k[4]),
			  struct idmap *m, uint32_t **start, uint32_t **ord)
{
	uint32_t *id = gr_sq_calloc(l->n ? l->n : 1, sizeof(*id));
	uint32_t *kept = sqlite3_malloc64((l->n ? l->n : 1) * sizeof(*kept));
	size_t n = 0;

	memset(m, 0, sizeof(*m));
	*start = NULL;
	*ord = sqlite3_malloc64((l->n ? l->n : 1) * sizeof(**ord));
	if (!id || !kept || !*ord)
		goto fail;
	for (size_t i = 0; i < l->n; i++) {
		int64_t k[4] = {0};
		if (!key(&l->a[i], k))
			continue;
		int64_t g = idmap_get(m, k);
		if (g < 0)
			goto fail;
		kept[n] = (uint32_t)i;
		id[n++] = (uint32_t)g;
	}
	if (!(*start = sqlite3_malloc64(((size_t)m->n + 1) * sizeof(**start))))
		goto fail;
	group_by_id(id, n, m->n, *start, *ord);
	for (size_t i = 0; i < n; i++)
		(*ord)[i] = kept[(*ord)[i]];
	sqlite3_free(id);
	sqlite3_free(kept);
	return 0;
fail:
	sqlite3_free(id);
	sqlite3_free(kept);
	sqlite3_free(*ord);
	sqlite3_free(*start);
	*ord = *start = NULL;
	idmap_free(m);
	return -ENOMEM;
}

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

/* Within a collective: by host, then time, so that each host's share is a
 * contiguous run whose first is the host's first arrival. */
static int cmp_host_ts(const void *pa, const void *pb, void *arg)
{
	const struct arrival *v = arg;
	const struct arrival *a = &v[*(const uint32_t *)pa];
	const struct arrival *b = &v[*(const uint32_t *)pb];

	CMP(a->host, b->host);
	CMP(a->ts, b->ts);
	return 0;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* nccl-arrivals' order of a collective's arrivals: latest first, then
 * host, then rank.  Returns whether @a comes before @b. */
static int later(const struct arrival *a, const struct arrival *b)
{
	if (a->ts != b->ts)
		return a->ts > b->ts;
	if (a->host != b->host)
		return a->host < b->host;
	return a->rank < b->rank;
}

/* One collective's row of nccl_last_arrival. */
struct coll_row {
	int64_t comm, seq, first, prev_ts;	/* prev_ts: NUL if alone */
	const struct arrival *last;		/* into the load */
	int32_t n;
};

/* Fills each arrival's n, late, host_late and last from its collective's
 * arrivals @o[0..k) (indexes into @a), and @r. */
static void walk_collective(struct arrival *a, uint32_t *o, size_t k,
			    struct coll_row *r)
{
	int64_t first = a[o[0]].ts, lastts = a[o[0]].ts;
	size_t nlast = 0, pos1 = o[0], pos2 = SIZE_MAX;

	qsort_r(o, k, sizeof(*o), cmp_host_ts, a);
	for (size_t m = 0; m < k; m++) {
		if (a[o[m]].ts < first)
			first = a[o[m]].ts;
		if (a[o[m]].ts > lastts)
			lastts = a[o[m]].ts;
	}
	for (size_t h0 = 0, h; h0 < k; h0 = h) {
		const struct arrival *hf = &a[o[h0]];
		for (h = h0; h < k && a[o[h]].host == hf->host; h++)
			;
		for (size_t m = h0; m < h; m++) {
			struct arrival *x = &a[o[m]];
			x->n = (int32_t)k;
			x->late = x->ts - first;
			x->host_late = h - h0 > 1 ? x->ts - hf->ts : NUL;
			nlast += x->ts == lastts;
		}
	}
	for (size_t m = 0; m < k; m++) {
		size_t x = o[m];
		a[x].last = a[x].ts == lastts && nlast == 1;
		if (x == pos1)
			continue;
		if (later(&a[x], &a[pos1])) {
			pos2 = pos1;
			pos1 = x;
		} else if (pos2 == SIZE_MAX || later(&a[x], &a[pos2])) {
			pos2 = x;
		}
	}
	r->comm = a[o[0]].comm;
	r->seq = a[o[0]].seq;
	r->first = first;
	r->last = &a[pos1];
	r->prev_ts = pos2 == SIZE_MAX ? NUL : a[pos2].ts;
	r->n = (int32_t)k;
}

static int key_collective(const struct arrival *a, int64_t k[4])
{
	k[0] = a->comm, k[1] = a->seq;
	return 1;
}

/* Groups @l's arrivals by collective and walks each: fills @rows (one per
 * collective, *nrows of them; l->n entries must fit).  Returns 0 or
 * -ENOMEM. */
static int walk_collectives(struct nccl_load *l, struct coll_row *rows,
			    size_t *nrows)
{
	struct idmap m;
	uint32_t *start, *ord;

	if (group_arrivals(l, key_collective, &m, &start, &ord))
		return -ENOMEM;
	for (uint32_t g = 0; g < m.n; g++)
		walk_collective(l->a, ord + start[g], start[g + 1] - start[g],
				&rows[g]);
	*nrows = m.n;
	idmap_free(&m);
	sqlite3_free(start);
	sqlite3_free(ord);
	return 0;
}

/* One row of nccl_rank_skew. */
struct skew_row {
	int64_t comm, pid, rank, nranks;	/* nranks: the most seen */
	int64_t collectives, last, max_late;
	double mean_late, p99_late, host_late;
	int32_t host, n;
	int has_host_late;
};

/* percentile(x, 100 * @frac) of aggregates.c (median(): 0.5) over
 * @v[0..n), sorted; n > 0. */
static double pct(const int64_t *v, size_t n, double frac)
{
	double ix = frac * (double)(n - 1);
	size_t i1 = (size_t)ix;
	size_t i2 = (ix == (double)i1 || i1 == n - 1) ? i1 : i1 + 1;
	double v1 = (double)v[i1], v2 = (double)v[i2];

	return v1 + (v2 - v1) * (ix - (double)i1);
}

/* Folds one rank's counted arrivals @o[0..k) into @r; @late has room for
 * k values. */
static void skew_fold(const struct arrival *a, const uint32_t *o, size_t k,
		      int64_t *late, struct skew_row *r)
{
	const struct arrival *f = &a[o[0]];
	int64_t sum = 0, hsum = 0, hn = 0;

	memset(r, 0, sizeof(*r));
	r->comm = f->comm;
	r->host = f->host;
	r->pid = f->pid;
	r->rank = f->rank;
	r->nranks = NUL;
	r->n = f->n;
	for (size_t m = 0; m < k; m++) {
		const struct arrival *x = &a[o[m]];
		late[m] = x->late;
		sum += x->late;
		r->last += x->last;
		if (x->nranks != NUL && x->nranks > r->nranks)
			r->nranks = x->nranks;
		if (x->host_late != NUL) {
			hsum += x->host_late;
			hn++;
		}
	}
	qsort(late, k, sizeof(*late), cmp_i64);
	r->collectives = (int64_t)k;
	r->max_late = late[k - 1];
	r->mean_late = (double)sum / (double)k;
	r->p99_late = pct(late, k, 99 / 100.0);
	r->has_host_late = hn > 0;
	if (hn)
		r->host_late = (double)hsum / (double)hn;
}

static int key_comm(const struct arrival *a, int64_t k[4])
{
	k[0] = a->comm;
	return 1;
}

static int key_counted_rank(const struct arrival *a, int64_t k[4])
{
	k[0] = a->comm, k[1] = a->host, k[2] = a->pid, k[3] = a->rank;
	return a->counted;
}

/* Fills @rows (*nrows; l->n fit) with one row per (comm_id, host, pid,
 * rank) over the arrivals nccl-skew counts: those of collectives seen on
 * as many ranks as their communicator's best covered ones, and on more
 * than one.  @l must have been walked.  Returns 0 or -ENOMEM. */
static int rank_skew(struct nccl_load *l, struct skew_row *rows,
		     size_t *nrows)
{
	struct idmap comms, ranks;
	uint32_t *cstart, *cord, *rstart, *rord;
	int64_t *late = sqlite3_malloc64((l->n ? l->n : 1) * sizeof(*late));

	if (!late || group_arrivals(l, key_comm, &comms, &cstart, &cord)) {
		sqlite3_free(late);
		return -ENOMEM;
	}
	for (uint32_t c = 0; c < comms.n; c++) {
		int32_t most = 0;
		for (uint32_t m = cstart[c]; m < cstart[c + 1]; m++)
			if (l->a[cord[m]].n > most)
				most = l->a[cord[m]].n;
		for (uint32_t m = cstart[c]; m < cstart[c + 1]; m++) {
			struct arrival *x = &l->a[cord[m]];
			x->counted = x->n == most && most > 1;
		}
	}
	idmap_free(&comms);
	sqlite3_free(cstart);
	sqlite3_free(cord);
	if (group_arrivals(l, key_counted_rank, &ranks, &rstart, &rord)) {
		sqlite3_free(late);
		return -ENOMEM;
	}
	for (uint32_t g = 0; g < ranks.n; g++)
		skew_fold(l->a, rord + rstart[g], rstart[g + 1] - rstart[g],
			  late, &rows[g]);
	*nrows = ranks.n;
	idmap_free(&ranks);
	sqlite3_free(rstart);
	sqlite3_free(rord);
	sqlite3_free(late);
	return 0;
}

/* rank-pace's groupings: a rank; a process's repeats of one call (op and
 * size), whose seq gaps give the iteration length; a process's calls in a
 * communicator, whose entries one iteration apart give its time; and the
 * pools of gaps whose medians are compared, per (comm_id, op, bytes).
 * Keys compare NULLs equal, as GROUP BY and PARTITION BY do. */
static int key_rank(const struct arrival *a, int64_t k[4])
{
	k[0] = a->comm, k[1] = a->host, k[2] = a->pid, k[3] = a->rank;
	return 1;
}

static int key_repeat(const struct arrival *a, int64_t k[4])
{
	k[0] = a->comm, k[1] = ((int64_t)a->host << 32) | (uint32_t)a->op;
	k[2] = a->pid, k[3] = a->bytes;
	return 1;
}

/* The iteration's self-join matches pid by =, which NULL never is. */
static int key_proc(const struct arrival *a, int64_t k[4])
{
	k[0] = a->comm, k[1] = a->host, k[2] = a->pid;
	return a->pid != NUL;
}


/* Time in NCCL calls of one process (host, pid), over all its calls. */
struct proc_time {
	int64_t in_nccl, end, start;	/* sum(dur), max(ts + dur), min(ts) */
	int has_dur;			/* some call had a dur */
};

/* One row of nccl_rank_pace. */
struct pace_row {
	int64_t comm, pid, rank, collectives, last_seq, comm_last;
	int64_t per_iter;		/* NUL: the communicator has none */
	double iter_ns;
	int has_iter;
	const struct proc_time *t;	/* NULL: none (a NULL pid) */
	int32_t host;
};

/* Reads sum(dur), max(ts + dur) and min(ts) of every NCCL call per (host,
 * pid) into @m / *@t.  Returns SQLITE_OK, or an SQLite error code with
 * *err set. */
static int load_times(struct gr_qctx *q, struct nccl_load *l,
		      struct idmap *m, struct proc_time **t, char **err)
{
	int cpid = nccl_col("pid"), cts = nccl_col("ts"), cdur = nccl_col("dur");
	uint32_t cap = 0;
	int hint = -1, rc;

	if (cpid < 0 || cts < 0 || cdur < 0) {
		*err = sqlite3_mprintf("nccl has no pid, ts or dur column");
		return SQLITE_ERROR;
	}
	/* "SELECT host, pid, ts, dur FROM nccl", walked (load()). */
	struct gr_evwalk *w = gr_evwalk__open(
		q, "nccl", 1ull << cpid | 1ull << cts | 1ull << cdur, 0, 0);
	if (!w) {
		*err = sqlite3_mprintf("out of memory reading nccl");
		return SQLITE_NOMEM;
	}
	const struct cursor *r = gr_evwalk__cursor(w);
	while ((rc = gr_evwalk__next(w)) == 1) {
		const char *host = gr_evwalk__host(w);
		/* A NULL pid never joins: its calls count for no rank. */
		if (gr_evrow__null(r, cpid))
			continue;
		int64_t pid = gr_evrow__int(r, cpid);
		int64_t ts = gr_evrow__null(r, cts) ? 0 : gr_evrow__int(r, cts);
		int64_t dur = gr_evrow__null(r, cdur) ? NUL :
			      gr_evrow__int(r, cdur);

		if ((hint = intern(l, host ? host : "", hint)) < 0) {
			rc = -ENOMEM;
			break;
		}
		int64_t k[4] = { hint, pid, 0, 0 };
		uint32_t before = m->n;
		int64_t g = idmap_get(m, k);
		if (g < 0) {
			rc = -ENOMEM;
			break;
		}
		if ((uint32_t)g == cap) {
			cap = cap ? 2 * cap : 64;
			struct proc_time *p = sqlite3_realloc64(*t, cap * sizeof(*p));
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			*t = p;
		}
		struct proc_time *p = &(*t)[g];
		if (m->n != before) {
			memset(p, 0, sizeof(*p));
			p->start = ts;
		}
		if (ts < p->start)
			p->start = ts;
		if (dur != NUL) {
			if (!p->has_dur || ts + dur > p->end)
				p->end = ts + dur;
			p->in_nccl += dur;
			p->has_dur = 1;
		}
	}
	gr_evwalk__close(w);
	if (rc < 0)
		return gr_vtab__walk_error(rc, "nccl", err);
	return SQLITE_OK;
}

/* Gaps between a process's repeats of one call, pooled per (comm_id, op,
 * bytes); per communicator the longest pool median, rounded: rank-pace's
 * collectives per iteration when not given.  Fills @per_iter by the ids of
 * @comms (NUL where the communicator has no gap).  Returns 0 or -ENOMEM. */
static int iteration_lengths(const struct nccl_load *l,
			     const struct idmap *comms, int64_t *per_iter,
			     double *best)
{
	struct idmap rep, pools = {0};
	uint32_t *start, *ord;
	int64_t *gap = sqlite3_malloc64((l->n ? l->n : 1) * sizeof(*gap));
	uint32_t *pool = sqlite3_malloc64((l->n ? l->n : 1) * sizeof(*pool));
	uint32_t *pstart = NULL, *pord = NULL;
	int64_t *vals = sqlite3_malloc64((l->n ? l->n : 1) * sizeof(*vals));
	size_t ng = 0;
	int rc = -ENOMEM;

	if (group_arrivals(l, key_repeat, &rep, &start, &ord))
		goto out_nogroup;
	if (!gap || !pool || !vals)
		goto out;
	for (uint32_t g = 0; g < rep.n; g++) {
		size_t k = start[g + 1] - start[g];
		const struct arrival *f = &l->a[ord[start[g]]];
		int64_t pk[4] = { f->comm, f->op, f->bytes, 0 };
		int64_t pid = idmap_get(&pools, pk);

		if (pid < 0)
			goto out;
		for (size_t m = 0; m < k; m++)
			vals[m] = l->a[ord[start[g] + m]].seq;
		qsort(vals, k, sizeof(*vals), cmp_i64);
		for (size_t m = 1; m < k; m++) {
			gap[ng] = vals[m] - vals[m - 1];
			pool[ng++] = (uint32_t)pid;
		}
	}
	if (!(pstart = sqlite3_malloc64(((size_t)pools.n + 1) * sizeof(*pstart))) ||
	    !(pord = sqlite3_malloc64((ng ? ng : 1) * sizeof(*pord))))
		goto out;
	group_by_id(pool, ng, pools.n, pstart, pord);
	for (uint32_t c = 0; c < comms->n; c++)
		per_iter[c] = NUL;
	for (uint32_t q = 0; q < pools.n; q++) {
		size_t k = pstart[q + 1] - pstart[q];
		int64_t ck[4] = { pools.key[q][0], 0, 0, 0 };
		int64_t c = idmap_find(comms, ck);

		if (k == 0 || c < 0)
			continue;
		for (size_t m = 0; m < k; m++)
			vals[m] = gap[pord[pstart[q] + m]];
		qsort(vals, k, sizeof(*vals), cmp_i64);
		double med = pct(vals, k, 0.5);
		if (per_iter[c] == NUL || med > best[c]) {
			best[c] = med;
			per_iter[c] = 0;
		}
	}
	/* CAST(round(max(m)) AS INTEGER): SQLite rounds half away from 0. */
	for (uint32_t c = 0; c < comms->n; c++)
		if (per_iter[c] != NUL)
			per_iter[c] = (int64_t)(best[c] + 0.5);
	rc = 0;
out:
	idmap_free(&rep);
	sqlite3_free(start);
	sqlite3_free(ord);
out_nogroup:
	idmap_free(&pools);
	sqlite3_free(gap);
	sqlite3_free(pool);
	sqlite3_free(pstart);
	sqlite3_free(pord);
	sqlite3_free(vals);
	return rc;
}

/* Entry and seq of one call, for the iteration self-join. */
struct entry {
	int64_t seq, ts;
};

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	CMP(a->seq, b->seq);
	CMP(a->ts, b->ts);
	return 0;
}

/* The median over a process's calls in a communicator of a call's entry
 * less the entry of each of its calls @per seqs before (every such pair,
 * as the join makes them: a process driving several ranks of one
 * communicator has each seq once per rank, so the pairs may outnumber the
 * calls; they are counted first).  Returns 1 with *ns set, 0 if no pair,
 * or -ENOMEM. */
static int iteration_ns(struct entry *e, size_t k, int64_t per, double *ns)
{
	size_t nd = 0, lo = 0;

	qsort(e, k, sizeof(*e), cmp_entry);
	for (int fill = 0; fill < 2; fill++) {
		int64_t *diff = NULL;
		if (fill) {
			if (!nd)
				return 0;
			if (nd > SIZE_MAX / sizeof(*diff) ||
			    !(diff = sqlite3_malloc64(nd * sizeof(*diff))))
				return -ENOMEM;
		}
		nd = lo = 0;
		for (size_t i = 0; i < k; i++) {
			int64_t want = e[i].seq - per;
			/* Seqs ascend and per >= 0: the match moves forward. */
			while (lo < k && e[lo].seq < want)
				lo++;
			for (size_t j = lo; j < k && e[j].seq == want; j++) {
				if (diff)
					diff[nd] = e[i].ts - e[j].ts;
				nd++;
			}
		}
		if (diff) {
			qsort(diff, nd, sizeof(*diff), cmp_i64);
			*ns = pct(diff, nd, 0.5);
			sqlite3_free(diff);
			return 1;
		}
	}
	return 0;
}

/* Fills @rows (*nrows; l->n fit) with rank-pace's row per (comm_id, host,
 * pid, rank); @param > 0 gives the collectives per iteration, else each
 * communicator's longest median gap does.  @times, by the ids of @tm,
 * must be loaded.  Returns 0 or -ENOMEM. */
static int rank_pace(struct nccl_load *l, int64_t param,
		     const struct idmap *tm, const struct proc_time *times,
		     struct pace_row *rows, size_t *nrows)
{
	struct idmap comms, ranks = {0}, procs = {0};
	uint32_t *cstart, *cord, *rstart = NULL, *rord = NULL;
	uint32_t *pstart = NULL, *pord = NULL;
	int64_t *per_iter = NULL, *last = NULL;
	double *best = NULL, *proc_ns = NULL;
	uint8_t *proc_has = NULL;
	struct entry *e = NULL;
	int rc = -ENOMEM;

	if (group_arrivals(l, key_comm, &comms, &cstart, &cord))
		return -ENOMEM;
	if (group_arrivals(l, key_rank, &ranks, &rstart, &rord) ||
	    group_arrivals(l, key_proc, &procs, &pstart, &pord))
		goto out;
	per_iter = sqlite3_malloc64((comms.n ? comms.n : 1) * sizeof(*per_iter));
	last = sqlite3_malloc64((comms.n ? comms.n : 1) * sizeof(*last));
	best = sqlite3_malloc64((comms.n ? comms.n : 1) * sizeof(*best));
	proc_ns = gr_sq_calloc(procs.n ? procs.n : 1, sizeof(*proc_ns));
	proc_has = gr_sq_calloc(procs.n ? procs.n : 1, 1);
	e = sqlite3_malloc64((l->n ? l->n : 1) * sizeof(*e));
	if (!per_iter || !last || !best || !proc_ns || !proc_has ||
	    !e || iteration_lengths(l, &comms, per_iter, best))
		goto out;
	if (param > 0)
		for (uint32_t c = 0; c < comms.n; c++)
			if (per_iter[c] != NUL)
				per_iter[c] = param;
	for (uint32_t c = 0; c < comms.n; c++) {
		last[c] = INT64_MIN;
		for (uint32_t m = cstart[c]; m < cstart[c + 1]; m++)
			if (l->a[cord[m]].seq > last[c])
				last[c] = l->a[cord[m]].seq;
	}
	for (uint32_t g = 0; g < procs.n; g++) {
		int64_t ck[4] = { procs.key[g][0], 0, 0, 0 };
		int64_t c = idmap_find(&comms, ck);
		size_t k = pstart[g + 1] - pstart[g];

		if (c < 0 || per_iter[c] == NUL)
			continue;
		for (size_t m = 0; m < k; m++) {
			e[m].seq = l->a[pord[pstart[g] + m]].seq;
			e[m].ts = l->a[pord[pstart[g] + m]].ts;
		}
		int has = iteration_ns(e, k, per_iter[c], &proc_ns[g]);
		if (has < 0)
			goto out;
		proc_has[g] = (uint8_t)has;
	}
	for (uint32_t g = 0; g < ranks.n; g++) {
		const struct arrival *f = &l->a[rord[rstart[g]]];
		struct pace_row *r = &rows[g];
		int64_t ck[4] = { f->comm, 0, 0, 0 };
		/* A rank's communicator is among those its calls made. */
		int64_t c = idmap_find(&comms, ck);
		int64_t pk[4] = { f->comm, f->host, f->pid, 0 };

		memset(r, 0, sizeof(*r));
		r->comm = f->comm;
		r->host = f->host;
		r->pid = f->pid;
		r->rank = f->rank;
		r->collectives = rstart[g + 1] - rstart[g];
		r->last_seq = INT64_MIN;
		for (uint32_t m = rstart[g]; m < rstart[g + 1]; m++)
			if (l->a[rord[m]].seq > r->last_seq)
				r->last_seq = l->a[rord[m]].seq;
		r->comm_last = last[c];
		r->per_iter = per_iter[c];
		if (f->pid != NUL) {
			/* Every rank's process has calls, so times. */
			int64_t p = idmap_find(&procs, pk);
			int64_t tk[4] = { f->host, f->pid, 0, 0 };
			int64_t t = idmap_find(tm, tk);
			if (p >= 0) {
				r->has_iter = proc_has[p];
				r->iter_ns = proc_ns[p];
			}
			if (t >= 0)
				r->t = &times[t];
		}
	}
	*nrows = ranks.n;
	rc = 0;
out:
	idmap_free(&comms);
	idmap_free(&ranks);
	idmap_free(&procs);
	sqlite3_free(cstart), sqlite3_free(cord), sqlite3_free(rstart), sqlite3_free(rord);
	sqlite3_free(pstart), sqlite3_free(pord);
	sqlite3_free(per_iter), sqlite3_free(last), sqlite3_free(best), sqlite3_free(proc_ns), sqlite3_free(proc_has);
	sqlite3_free(e);
	return rc;
}

/* ---- nccl-arrivals' widest collectives, from the blocks' records ------ */

/* nccl_last_arrival(N): the N rows nccl-arrivals shows (the widest
 * spread first, then the earliest first arrival, then comm_id and seq),
 * without a row per collective.  Two walks of the nccl blocks: the first
 * keeps each collective's first and last arrival only (16 bytes a
 * collective, in pages of consecutive seqs), from the records the writer
 * kept per block (store/ncclcoll.h, an eighth of the calls with 8 ranks a
 * host) where a block has them and lies wholly in the window without
 * --pid, else from the block's calls; the second reads only the blocks
 * whose time overlaps one of the N chosen collectives and merges their
 * last rank, the arrival before it, op, bytes and ranks exactly as
 * walk_collective() does from the calls. */

#define SPAN_BITS 10
#define SPAN_SEQS (1 << SPAN_BITS)

struct span_page {
	int64_t comm, base;		/* seqs base .. base + SPAN_SEQS - 1 */
	int64_t first[SPAN_SEQS];	/* INT64_MAX: no arrival yet */
	int64_t last[SPAN_SEQS];
};

struct spans {
	struct span_page **slot;	/* open addressing; NULL: empty */
	size_t cap, n;
	struct span_page *memo;
};

static void spans_free(struct spans *sp)
{
	for (size_t i = 0; i < sp->cap; i++)
		sqlite3_free(sp->slot[i]);
	sqlite3_free(sp->slot);
	memset(sp, 0, sizeof(*sp));
}

static size_t span_slot(const struct spans *sp, int64_t comm, int64_t base)
{
	int64_t k[4] = { comm, base, 0, 0 };
	size_t i = key_hash(k) & (sp->cap - 1);

	while (sp->slot[i] && (sp->slot[i]->comm != comm ||
			       sp->slot[i]->base != base))
		i = (i + 1) & (sp->cap - 1);
	return i;
}

/* The page of (comm, seq), made if new; NULL: out of memory. */
static struct span_page *span_page(struct spans *sp, int64_t comm,
				   int64_t seq)
{
	int64_t base = (int64_t)((uint64_t)seq & ~(uint64_t)(SPAN_SEQS - 1));

	if (sp->memo && sp->memo->comm == comm && sp->memo->base == base)
		return sp->memo;
	if (2 * (sp->n + 1) > sp->cap) {
		size_t cap = sp->cap ? 2 * sp->cap : 64;
		struct span_page **old = sp->slot;
		size_t oldcap = sp->cap;
		if (!(sp->slot = gr_sq_calloc(cap, sizeof(*sp->slot)))) {
			sp->slot = old;
			return NULL;
		}
		sp->cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i])
				sp->slot[span_slot(sp, old[i]->comm,
						   old[i]->base)] = old[i];
		sqlite3_free(old);
	}
	size_t i = span_slot(sp, comm, base);
	if (!sp->slot[i]) {
		struct span_page *p = sqlite3_malloc64(sizeof(*p));
		if (!p)
			return NULL;
		p->comm = comm;
		p->base = base;
		for (int j = 0; j < SPAN_SEQS; j++) {
			p->first[j] = INT64_MAX;
			p->last[j] = INT64_MIN;
		}
		sp->slot[i] = p;
		sp->n++;
	}
	return sp->memo = sp->slot[i];
}

static inline int span_add(struct spans *sp, int64_t comm, int64_t seq,
			   int64_t first, int64_t last)
{
	struct span_page *p = span_page(sp, comm, seq);
	if (!p)
		return -ENOMEM;
	int j = (int)((uint64_t)seq & (SPAN_SEQS - 1));
	if (first < p->first[j])
		p->first[j] = first;
	if (last > p->last[j])
		p->last[j] = last;
	return 0;
}

/* A chosen collective: its key and span from the first walk, then the
 * merge of its arrivals. */
struct widest {
	int64_t comm, seq, first, last;
	int64_t n, prev;		/* prev: GR_COLL_NULL if alone */
	struct arrival a;		/* the last arrival (a.ts: its time) */
};

/* nccl-arrivals' order: whether @a comes before @b. */
static int wider(const struct widest *a, const struct widest *b)
{
	int64_t sa = a->last - a->first, sb = b->last - b->first;
	if (sa != sb)
		return sa > sb;
	if (a->first != b->first)
		return a->first < b->first;
	if (a->comm != b->comm)
		return a->comm < b->comm;
	return a->seq < b->seq;
}

/* A heap of the k widest so far, the narrowest at its root. */
static void heap_push(struct widest *h, size_t *n, size_t k,
		      const struct widest *x)
{
	size_t i;
	if (*n == k) {
		if (!k || !wider(x, &h[0]))
			return;
		/* Replace the root and sift it down. */
		i = 0;
		for (;;) {
			size_t l = 2 * i + 1, r = l + 1, m = i;
			const struct widest *mv = x;
			if (l < *n && wider(mv, &h[l]))
				m = l, mv = &h[l];
			if (r < *n && wider(mv, &h[r]))
				m = r;
			if (m == i)
				break;
			h[i] = h[m];
			i = m;
		}
		h[i] = *x;
		return;
	}
	i = (*n)++;
	while (i && wider(&h[(i - 1) / 2], x)) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = *x;
}

static int cmp_widest(const void *pa, const void *pb)
{
	const struct widest *a = pa, *b = pb;
	return wider(a, b) ? -1 : wider(b, a) ? 1 : 0;
}

struct arr_walk {
	struct gr_qctx *q;
	int pass;			/* 1: spans; 2: the chosen ones */
	struct spans sp;
	struct widest *w;		/* pass 2: the chosen, widest first */
	size_t nw;
	struct idmap wm;		/* (comm, seq) -> index into w */
	struct nccl_load *l;		/* names: hosts and ops */
	struct gr_decoder *dec;
	struct gr_block blk;
	int64_t *cv[GR_COLL_NCOLS];
	uint8_t *cn[GR_COLL_NCOLS];
	uint32_t cap;
	struct { char *path; int64_t max; } *seen; /* seen_max() */
	int nseen, capseen, lastseen;
	/* Per op id below 1024 of segment seen[opok_seg]: 0 not looked up,
	 * 1 a collective's, 2 not. */
	uint8_t opok[1024];
	int opok_seg;
	int hhint, ohint;		/* intern()'s last hits, arr_call() */
	int err;			/* -ENOMEM or -EINTR: end the walk */
};

static void arr_walk_free(struct arr_walk *aw)
{
	spans_free(&aw->sp);
	sqlite3_free(aw->w);
	idmap_free(&aw->wm);
	gr_decoder__free(aw->dec);
	gr_block__free(&aw->blk);
	for (int i = 0; i < GR_COLL_NCOLS; i++) {
		sqlite3_free(aw->cv[i]);
		sqlite3_free(aw->cn[i]);
	}
	for (int i = 0; i < aw->nseen; i++)
		sqlite3_free(aw->seen[i].path);
	sqlite3_free(aw->seen);
}

/* Merges an arrival, or a host's record of several (n of them, the last
 * one's time ts, rank, pid, op, bytes and nranks, the one before it at
 * prev), into chosen collective @x, as walk_collective() would. */
static void widest_add(struct widest *x, int host, int64_t n, int64_t first,
		       int64_t ts, int64_t prev, int64_t rank, int64_t pid,
		       int op, int64_t bytes, int64_t nranks,
		       char *const *names)
{
	int wins;

	if (!x->n) {
		wins = 1;
		x->first = first;
		x->prev = prev;
	} else {
		const struct arrival *a = &x->a;
		int c = strcmp(names[host], names[a->host]);
		wins = ts != a->ts ? ts > a->ts : c ? c < 0 : rank < a->rank;
		if (first < x->first)
			x->first = first;
		/* The one before the last: the latest of the others. */
		int64_t other = wins ? (prev > a->ts ? prev : a->ts)
				     : (ts > x->prev ? ts : x->prev);
		x->prev = other;
	}
	x->n += n;
	if (wins) {
		x->a.ts = ts;
		x->a.host = host;
		x->a.rank = rank;
		x->a.pid = pid;
		x->a.op = op;
		x->a.bytes = bytes;
		x->a.nranks = nranks;
	}
}

/* Decodes the columns in mask of the records block aw->blk into aw->cv.
 * Returns 0, or -1 where it does not decode (read from the calls then). */
static int coll_decode(struct arr_walk *aw, uint32_t mask)
{
	uint32_t nrows = aw->blk.nrows;
	if (nrows > aw->cap) {
		for (int i = 0; i < GR_COLL_NCOLS; i++) {
			int64_t *v = sqlite3_realloc64(aw->cv[i],
						       nrows * sizeof(*v));
			uint8_t *z = sqlite3_realloc64(aw->cn[i],
						       (nrows + 7) / 8);
			if (v)
				aw->cv[i] = v;
			if (z)
				aw->cn[i] = z;
			if (!v || !z) {
				aw->err = -ENOMEM;
				return -1;
			}
		}
		aw->cap = nrows;
	}
	for (int i = 0; i < GR_COLL_NCOLS; i++) {
		int has;
		if (!(mask >> i & 1))
			continue;
		if (gr_decoder__column(aw->dec, &aw->blk, i, aw->cv[i],
				       aw->cn[i], &has))
			return -1;
		if (!has)
			continue;
		for (uint32_t r = 0; r < nrows; r++)
			if (aw->cn[i][r >> 3] >> (r & 7) & 1)
				aw->cv[i][r] = GR_COLL_NULL;
	}
	return 0;
}

/* Whether block h overlaps one of the chosen collectives' spans. */
static int overlaps_chosen(const struct arr_walk *aw,
			   const struct gr_scan_hdr *h)
{
	for (size_t i = 0; i < aw->nw; i++)
		if (h->ts_max >= aw->w[i].first && h->ts_min <= aw->w[i].last)
			return 1;
	return 0;
}

/* The highest block id pass 1 met in the segment at @path (-1: none), or,
 * with @id >= 0, notes @id as met.  Pass 2 reads no block pass 1 did not
 * (a segment still written gains blocks between the walks).  Returns -2
 * where the note cannot be kept (out of memory). */
static int64_t seen_max(struct arr_walk *aw, const char *path, int64_t id)
{
	int i = aw->lastseen;
	if (i < 0 || i >= aw->nseen || strcmp(aw->seen[i].path, path)) {
		for (i = 0; i < aw->nseen; i++)
			if (!strcmp(aw->seen[i].path, path))
				break;
	}
	if (i == aw->nseen) {
		if (id < 0)
			return -1;
		if (aw->nseen == aw->capseen) {
			int cap = aw->capseen ? 2 * aw->capseen : 16;
			void *s = sqlite3_realloc64(aw->seen,
						    (size_t)cap * sizeof(*aw->seen));
			if (!s)
				return -2;
			aw->seen = s;
			aw->capseen = cap;
		}
		if (!(aw->seen[i].path = gr_sq_strdup(path)))
			return -2;
		aw->seen[i].max = -1;
		aw->nseen++;
	}
	aw->lastseen = i;
	if (id > aw->seen[i].max)
		aw->seen[i].max = id;
	return aw->seen[i].max;
}

/* Answers for a block from its records (aw->blk): returns 1 once
 * they are merged, 0 where the block must be read from its calls (they do
 * not decode, reach outside the window, or name an op the segment's
 * dictionary lacks or that is no collective: then nothing is merged, in
 * either walk, so that both take the same blocks from the same source). */
static int from_records(struct arr_walk *aw, struct gr_segment *s)
{
	struct gr_qctx *q = aw->q;
	uint32_t mask = aw->pass == 1 ?
		1u << GR_COLL_COMM | 1u << GR_COLL_SEQ | 1u << GR_COLL_FIRST |
		1u << GR_COLL_LAST | 1u << GR_COLL_OP :
		(1u << GR_COLL_NCOLS) - 1;
	int64_t *const *v = aw->cv;
	char *err = NULL;
	int64_t memo = GR_COLL_NULL;
	const char *op = NULL;
	uint32_t olen;
	int oi = -1, hi = -1;
	uint32_t nrows = aw->blk.nrows;

	if (coll_decode(aw, mask))
		return 0;
	/* The records' own times, under their checksum, decide whether the
	 * block lies in the window (its header row is not covered). */
	for (uint32_t r = 0; r < nrows; r++)
		if (v[GR_COLL_FIRST][r] < q->since ||
		    v[GR_COLL_LAST][r] > q->until)
			return 0;
	if (gr_segment__load_dict(s, &err)) {
		free(err);
		return 0;
	}
	const struct gr_dict *d = gr_segment__dict(s);
	/* Each op id once a segment (aw->lastseen: seen_max() just found
	 * this one), not a string compare a record. */
	if (aw->opok_seg != aw->lastseen) {
		memset(aw->opok, 0, sizeof(aw->opok));
		aw->opok_seg = aw->lastseen;
	}
	for (uint32_t r = 0; r < nrows; r++) {
		int64_t id = v[GR_COLL_OP][r];
		if (id == memo)
			continue;
		memo = id;
		uint8_t *ok = id >= 0 && id < (int64_t)sizeof(aw->opok) ?
			      &aw->opok[id] : NULL;
		if (ok && *ok) {
			if (*ok == 2)
				return 0;
			continue;
		}
		op = id == GR_COLL_NULL ? NULL :
		     gr_dict__str(d, (uint32_t)id, &olen);
		int good = op && is_collective(op);
		if (ok)
			*ok = good ? 1 : 2;
		if (!good)
			return 0;
	}
	if (aw->pass == 1) {
		for (uint32_t r = 0; r < nrows; r++)
			if (span_add(&aw->sp, v[GR_COLL_COMM][r],
				     v[GR_COLL_SEQ][r], v[GR_COLL_FIRST][r],
				     v[GR_COLL_LAST][r])) {
				/* Half merged: the walk must end, not read
				 * the block again from its calls. */
				aw->err = -ENOMEM;
				return 1;
			}
		return 1;
	}
	const char *host = gr_segment__info(s)->host;
	memo = GR_COLL_NULL;
	for (uint32_t r = 0; r < nrows; r++) {
		int64_t k[4] = { v[GR_COLL_COMM][r], v[GR_COLL_SEQ][r] };
		int64_t i = idmap_find(&aw->wm, k);
		if (i < 0)
			continue;
		if (hi < 0 && (hi = intern(aw->l, host ? host : "", -1)) < 0) {
			aw->err = -ENOMEM;
			return 1;
		}
		if (v[GR_COLL_OP][r] != memo) {
			memo = v[GR_COLL_OP][r];
			op = gr_dict__str(d, (uint32_t)memo, &olen);
			if ((oi = intern(aw->l, op, oi)) < 0) {
				aw->err = -ENOMEM;
				return 1;
			}
		}
		widest_add(&aw->w[i], hi, v[GR_COLL_N][r], v[GR_COLL_FIRST][r],
			   v[GR_COLL_LAST][r], v[GR_COLL_PREV][r],
			   v[GR_COLL_RANK][r], v[GR_COLL_PID][r], oi,
			   v[GR_COLL_BYTES][r], v[GR_COLL_NRANKS][r],
			   aw->l->names);
	}
	return 1;
}

/* The scan's skip test (gr_scan_skip_fn): answers for a block from its
 * records where it can (returns 1), else leaves it to be read; skips
 * every block once the walk must end (aw->err: out of memory, or q->stop
 * said stop, which the scan asks only between blocks it reads). */
static int arr_skip(void *ctx, struct gr_segment *s,
		    const struct gr_scan_hdr *h)
{
	struct arr_walk *aw = ctx;
	struct gr_qctx *q = aw->q;
	const char *path = gr_segment__info(s)->path;

	if (!aw->err && q->stop && q->stop())
		aw->err = -EINTR;
	if (aw->err)
		return 1;
	int64_t seen = seen_max(aw, path, aw->pass == 1 ? h->id : -1);
	if (seen == -2) {
		aw->err = -ENOMEM;
		return 1;
	}
	if (aw->pass == 2 && (h->id > seen || !overlaps_chosen(aw, h)))
		return 1;
	if (q->has_pid || h->ts_min < q->since || h->ts_max > q->until ||
	    gr_coll__payload(s, h->id, h->crc, &aw->blk) != 1)
		return 0;
	int took = from_records(aw, s);
	gr_coll__done(s);
	if (took)
		__atomic_add_fetch(&q->coll_blocks_read, 1, __ATOMIC_RELAXED);
	return took;
}

/* walk_calls()'s callback for a walk of arr_pass(): a call of a block
 * without usable records. */
static int arr_call(void *ctx, const struct coll_call *c)
{
	struct arr_walk *aw = ctx;

	if (aw->err)
		return aw->err;
	if (aw->pass == 1)
		return span_add(&aw->sp, c->comm, c->seq, c->ts, c->ts);
	int64_t k[4] = { c->comm, c->seq };
	int64_t i = idmap_find(&aw->wm, k);
	if (i < 0)
		return 0;
	aw->hhint = intern(aw->l, c->host, aw->hhint);
	aw->ohint = intern(aw->l, c->op, aw->ohint);
	if (aw->hhint < 0 || aw->ohint < 0)
		return -ENOMEM;
	widest_add(&aw->w[i], aw->hhint, 1, c->ts, c->ts, NUL, c->rank,
		   c->pid, aw->ohint, c->bytes, c->nranks, aw->l->names);
	return 0;
}

/* One walk of the nccl blocks (pass aw->pass), the blocks without usable
 * records read from their calls.  Returns SQLITE_OK or an error code with
 * *err set. */
static int arr_pass(struct arr_walk *aw, char **err)
{
	aw->hhint = aw->ohint = -1;
	int rc = walk_calls(aw->q, arr_skip, aw, arr_call, aw, err);
	/* An error the skip test met, after the last call. */
	if (rc == SQLITE_OK && aw->err)
		return gr_vtab__walk_error(aw->err, "nccl", err);
	return rc;
}

/* nccl_last_arrival(k): fills @l (names and one arrival per row: the
 * last) and *rows (*nrows <= k of them, widest first). */
static int widest_collectives(struct gr_qctx *q, int64_t k,
			      struct nccl_load *l, struct coll_row **rows,
			      size_t *nrows, char **err)
{
	struct arr_walk aw = { .q = q, .pass = 1, .l = l, .lastseen = -1,
			       .opok_seg = -1 };
	size_t n = 0;
	int rc;

	*rows = NULL;
	*nrows = 0;
	if (!(aw.dec = gr_decoder__new())) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	if ((rc = arr_pass(&aw, err)) != SQLITE_OK)
		goto out;
	/* The k widest of the spans. */
	size_t have = 0;
	for (size_t i = 0; i < aw.sp.cap; i++) {
		const struct span_page *p = aw.sp.slot[i];
		for (int j = 0; p && j < SPAN_SEQS; j++)
			have += p->last[j] != INT64_MIN;
	}
	if ((uint64_t)k > have)
		k = (int64_t)have;
	if (!(aw.w = gr_sq_calloc(k ? (size_t)k : 1, sizeof(*aw.w)))) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < aw.sp.cap; i++) {
		const struct span_page *p = aw.sp.slot[i];
		for (int j = 0; p && j < SPAN_SEQS; j++) {
			if (p->last[j] == INT64_MIN)
				continue;
			struct widest x = {
				.comm = p->comm, .seq = p->base + j,
				.first = p->first[j], .last = p->last[j],
			};
			heap_push(aw.w, &n, (size_t)k, &x);
		}
	}
	spans_free(&aw.sp);
	qsort(aw.w, n, sizeof(*aw.w), cmp_widest);
	aw.nw = n;
	for (size_t i = 0; i < n; i++) {
		int64_t key[4] = { aw.w[i].comm, aw.w[i].seq };
		if (idmap_get(&aw.wm, key) < 0) {
			rc = SQLITE_NOMEM;
			goto out;
		}
		/* Merged afresh by the second walk. */
		aw.w[i].n = 0;
		aw.w[i].prev = NUL;
	}
	aw.pass = 2;
	if (n && (rc = arr_pass(&aw, err)) != SQLITE_OK)
		goto out;
	l->a = sqlite3_malloc64((n ? n : 1) * sizeof(*l->a));
	*rows = sqlite3_malloc64((n ? n : 1) * sizeof(**rows));
	if (!l->a || !*rows) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct widest *x = &aw.w[i];
		/* Gone between the walks (retention removed its segment):
		 * no arrival left to show. */
		if (!x->n)
			continue;
		l->a[m] = x->a;
		(*rows)[m] = (struct coll_row){
			.comm = x->comm, .seq = x->seq, .first = x->first,
			.prev_ts = x->prev, .last = &l->a[m],
			.n = (int32_t)x->n,
		};
		m++;
	}
	l->n = l->cap = m;
	*nrows = m;
	rc = SQLITE_OK;
out:
	arr_walk_free(&aw);
	return rc;
}

/* The tables, by the column lists they declare. */
enum nccl_table { T_SKEW, T_ARRIVAL, T_PACE };

/* nccl_rank_pace's argument: the collectives per iteration;
 * nccl_last_arrival's: how many of the widest collectives. */
#define PACE_ARG_COL 11
#define ARRIVAL_ARG_COL 12

static const char *const table_ddl[] = {
	[T_SKEW] = "CREATE TABLE x(host TEXT, rank INTEGER, pid INTEGER, "
		   "comm_id INTEGER, n INTEGER, nranks INTEGER, "
		   "collectives INTEGER, last INTEGER, mean_late REAL, "
		   "p99_late REAL, max_late INTEGER, host_late REAL)",
	[T_ARRIVAL] = "CREATE TABLE x(comm_id INTEGER, seq INTEGER, "
		      "op TEXT, bytes INTEGER, n INTEGER, nranks INTEGER, "
		      "first_ts INTEGER, last_ts INTEGER, last_host TEXT, "
		      "last_rank INTEGER, last_pid INTEGER, prev_ts INTEGER, "
		      "arg HIDDEN INTEGER)",
	[T_PACE] = "CREATE TABLE x(host TEXT, rank INTEGER, pid INTEGER, "
		   "comm_id INTEGER, collectives INTEGER, last_seq INTEGER, "
		   "comm_last_seq INTEGER, per_iter INTEGER, iter_ns REAL, "
		   "in_nccl INTEGER, span INTEGER, arg HIDDEN INTEGER)",
};

struct nf_vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	struct gr_qctx *q;
	enum nccl_table t;
};

struct nf_cursor {
	sqlite3_vtab_cursor base;
	struct nccl_load l;
	struct skew_row *skew;
	struct coll_row *coll;
	struct pace_row *pace;
	struct idmap tm;		/* (host, pid) -> times */
	struct proc_time *times;
	size_t n, i;
};

static int nf_connect(sqlite3 *db, void *aux, int argc,
		      const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)argc, (void)argv, (void)err;
	const struct gr_vtab_aux *ax = aux;
	enum nccl_table t = (enum nccl_table)ax->t;
	int rc = sqlite3_declare_vtab(db, table_ddl[t]);
	struct nf_vtab *v;

	if (rc != SQLITE_OK)
		return rc;
	if (!(v = sqlite3_malloc(sizeof(*v))))
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->db = db;
	v->q = ax->q;
	v->t = t;
	*out = &v->base;
	return SQLITE_OK;
}

static int nf_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static int nf_best_index(sqlite3_vtab *v, sqlite3_index_info *ii)
{
	/* No other constraint is used: the rows exist only once every call
	 * has been read, and SQLite filters them. */
	enum nccl_table t = ((struct nf_vtab *)v)->t;
	ii->estimatedCost = 1e6;
	if (t == T_SKEW)
		return SQLITE_OK;
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (c->iColumn != (t == T_PACE ? PACE_ARG_COL : ARRIVAL_ARG_COL))
			continue;
		/* The argument is no filter: any other use of it would
		 * answer wrongly, so refuse the plan. */
		if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || !c->usable)
			return SQLITE_CONSTRAINT;
		ii->aConstraintUsage[i].argvIndex = 1;
		ii->aConstraintUsage[i].omit = 1;
		ii->idxNum = 1;
	}
	return SQLITE_OK;
}

static int nf_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct nf_cursor *c = gr_sq_calloc(1, sizeof(*c));

	(void)v;
	if (!c)
		return SQLITE_NOMEM;
	*out = &c->base;
	return SQLITE_OK;
}

static void cursor_reset(struct nf_cursor *c)
{
	load_free(&c->l);
	sqlite3_free(c->skew);
	sqlite3_free(c->coll);
	sqlite3_free(c->pace);
	sqlite3_free(c->times);
	idmap_free(&c->tm);
	c->skew = NULL;
	c->coll = NULL;
	c->pace = NULL;
	c->times = NULL;
	c->n = c->i = 0;
}

static int nf_close(sqlite3_vtab_cursor *cur)
{
	struct nf_cursor *c = (struct nf_cursor *)cur;

	cursor_reset(c);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int nf_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr,
		     int argc, sqlite3_value **argv)
{
	(void)idxstr;
	struct nf_cursor *c = (struct nf_cursor *)cur;
	struct nf_vtab *v = (struct nf_vtab *)cur->pVtab;
	char *err = NULL;
	size_t nc;
	int rc;

	cursor_reset(c);
	if (v->t == T_ARRIVAL && idx == 1 && argc == 1) {
		/* nccl_last_arrival(k): the k widest only, as nccl-arrivals
		 * shows them; a k that is no count gives no rows. */
		int64_t k = sqlite3_value_type(argv[0]) == SQLITE_INTEGER ?
			    sqlite3_value_int64(argv[0]) : 0;
		if (k <= 0)
			return SQLITE_OK;
		rc = widest_collectives(v->q, k, &c->l, &c->coll, &c->n,
					&err);
		if (rc != SQLITE_OK) {
			sqlite3_free(v->base.zErrMsg);
			v->base.zErrMsg = err;
		}
		return rc;
	}
	rc = load(v->q, &c->l, &err);
	if (rc != SQLITE_OK) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = err;
		return rc;
	}
	/* One row per collective, or per rank: at most one per arrival. */
	c->coll = sqlite3_malloc64((c->l.n ? c->l.n : 1) * sizeof(*c->coll));
	if (!c->coll || walk_collectives(&c->l, c->coll, &nc))
		return SQLITE_NOMEM;
	if (v->t == T_ARRIVAL) {
		c->n = nc;
		return SQLITE_OK;
	}
	if (v->t == T_PACE) {
		/* Like :per_iter > 0 in the SQL: only a positive integer. */
		int64_t param = idx == 1 && argc == 1 &&
				sqlite3_value_type(argv[0]) == SQLITE_INTEGER ?
				sqlite3_value_int64(argv[0]) : 0;
		rc = load_times(v->q, &c->l, &c->tm, &c->times, &err);
		if (rc != SQLITE_OK) {
			sqlite3_free(v->base.zErrMsg);
			v->base.zErrMsg = err;
			return rc;
		}
		c->pace = sqlite3_malloc64((c->l.n ? c->l.n : 1) * sizeof(*c->pace));
		if (!c->pace || rank_pace(&c->l, param, &c->tm, c->times,
					  c->pace, &c->n))
			return SQLITE_NOMEM;
		return SQLITE_OK;
	}
	c->skew = sqlite3_malloc64((c->l.n ? c->l.n : 1) * sizeof(*c->skew));
	if (!c->skew || rank_skew(&c->l, c->skew, &c->n))
		return SQLITE_NOMEM;
	return SQLITE_OK;
}

static int nf_next(sqlite3_vtab_cursor *cur)
{
	((struct nf_cursor *)cur)->i++;
	return SQLITE_OK;
}

static int nf_eof(sqlite3_vtab_cursor *cur)
{
	struct nf_cursor *c = (struct nf_cursor *)cur;

	return c->i >= c->n;
}

static void result_int(sqlite3_context *ctx, int64_t v)
{
	if (v != NUL)
		sqlite3_result_int64(ctx, v);
}

static void skew_column(struct nf_cursor *c, sqlite3_context *ctx, int col)
{
	const struct skew_row *r = &c->skew[c->i];

	switch (col) {
	case 0: sqlite3_result_text(ctx, c->l.names[r->host], -1,
				    SQLITE_TRANSIENT); break;
	case 1: result_int(ctx, r->rank); break;
	case 2: result_int(ctx, r->pid); break;
	case 3: sqlite3_result_int64(ctx, r->comm); break;
	case 4: sqlite3_result_int64(ctx, r->n); break;
	case 5: result_int(ctx, r->nranks); break;
	case 6: sqlite3_result_int64(ctx, r->collectives); break;
	case 7: sqlite3_result_int64(ctx, r->last); break;
	case 8: sqlite3_result_double(ctx, r->mean_late); break;
	case 9: sqlite3_result_double(ctx, r->p99_late); break;
	case 10: sqlite3_result_int64(ctx, r->max_late); break;
	case 11:
		if (r->has_host_late)
			sqlite3_result_double(ctx, r->host_late);
		break;
	}
}

static void arrival_column(struct nf_cursor *c, sqlite3_context *ctx,
			   int col)
{
	const struct coll_row *r = &c->coll[c->i];
	const struct arrival *l = r->last;

	switch (col) {
	case 0: sqlite3_result_int64(ctx, r->comm); break;
	case 1: sqlite3_result_int64(ctx, r->seq); break;
	case 2: sqlite3_result_text(ctx, c->l.names[l->op], -1,
				    SQLITE_TRANSIENT); break;
	case 3: result_int(ctx, l->bytes); break;
	case 4: sqlite3_result_int64(ctx, r->n); break;
	case 5: result_int(ctx, l->nranks); break;
	case 6: sqlite3_result_int64(ctx, r->first); break;
	case 7: sqlite3_result_int64(ctx, l->ts); break;
	case 8: sqlite3_result_text(ctx, c->l.names[l->host], -1,
				    SQLITE_TRANSIENT); break;
	case 9: result_int(ctx, l->rank); break;
	case 10: result_int(ctx, l->pid); break;
	case 11: result_int(ctx, r->prev_ts); break;
	}
}

static void pace_column(struct nf_cursor *c, sqlite3_context *ctx, int col)
{
	const struct pace_row *r = &c->pace[c->i];

	switch (col) {
	case 0: sqlite3_result_text(ctx, c->l.names[r->host], -1,
				    SQLITE_TRANSIENT); break;
	case 1: result_int(ctx, r->rank); break;
	case 2: result_int(ctx, r->pid); break;
	case 3: sqlite3_result_int64(ctx, r->comm); break;
	case 4: sqlite3_result_int64(ctx, r->collectives); break;
	case 5: sqlite3_result_int64(ctx, r->last_seq); break;
	case 6: sqlite3_result_int64(ctx, r->comm_last); break;
	case 7: result_int(ctx, r->per_iter); break;
	case 8:
		if (r->has_iter)
			sqlite3_result_double(ctx, r->iter_ns);
		break;
	case 9:
		if (r->t && r->t->has_dur)
			sqlite3_result_int64(ctx, r->t->in_nccl);
		break;
	case 10:
		if (r->t && r->t->has_dur)
			sqlite3_result_int64(ctx, r->t->end - r->t->start);
		break;
	}
}

static int nf_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
		     int col)
{
	struct nf_cursor *c = (struct nf_cursor *)cur;
	enum nccl_table t = ((struct nf_vtab *)cur->pVtab)->t;

	if (t == T_SKEW)
		skew_column(c, ctx, col);
	else if (t == T_ARRIVAL)
		arrival_column(c, ctx, col);
	else
		pace_column(c, ctx, col);
	return SQLITE_OK;
}

static int nf_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid)
{
	*rowid = (sqlite_int64)((struct nf_cursor *)cur)->i;
	return SQLITE_OK;
}

/* Eponymous-only (no xCreate): the tables exist by name in every
 * connection, take no arguments and are not listed by `gpurec tables`,
 * which lists the recording's tables. */
static sqlite3_module nf_module = {
	.iVersion = 1,
	.xConnect = nf_connect,
	.xBestIndex = nf_best_index,
	.xDisconnect = nf_disconnect,
	.xOpen = nf_open,
	.xClose = nf_close,
	.xFilter = nf_filter,
	.xNext = nf_next,
	.xEof = nf_eof,
	.xColumn = nf_column,
	.xRowid = nf_rowid,
};

int gr_nccl_fleet__register(sqlite3 *db, struct gr_qctx *q)
{
	static const char *const name[] = {
		[T_SKEW] = "nccl_rank_skew",
		[T_ARRIVAL] = "nccl_last_arrival",
		[T_PACE] = "nccl_rank_pace",
	};
	return gr_vtab__create_modules(db, &nf_module, name, 3, q);
}
