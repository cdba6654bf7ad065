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
	static const char *const ops[] = {
		"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
		"Reduce", "AllToAll",
	};
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(*ops); i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

/* Reads the collectives of the nccl table into @l: the rows of "SELECT
 * comm_id, seq, host, pid, rank, nranks, ts, op, bytes FROM nccl WHERE seq
 * IS NOT NULL AND comm_id IS NOT NULL" whose op is_collective(), in its
 * order, walked from the blocks (vt_event.h), not through SQLite, whose
 * calls per row and column were most of the time.  Returns SQLITE_OK,
 * or an SQLite error code with *err set (sqlite3_malloc'd). */
static int load(struct gr_qctx *q, struct nccl_load *l, char **err)
{
	enum { C_COMM, C_SEQ, C_PID, C_RANK, C_NRANKS, C_TS, C_OP, C_BYTES,
	       NC };
	static const char *const name[NC] = {
		"comm_id", "seq", "pid", "rank", "nranks", "ts", "op", "bytes",
	};
	int col[NC], hhint = -1, ohint = -1, rc;
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
	const struct cursor *r = gr_evwalk__cursor(w);
#define I(i) (gr_evrow__null(r, col[i]) ? NUL : gr_evrow__int(r, col[i]))
	while ((rc = gr_evwalk__next(w)) == 1) {
		if (gr_evrow__null(r, col[C_SEQ]) ||
		    gr_evrow__null(r, col[C_COMM]))
			continue;
		const char *op = row_str(r, col[C_OP]);
		if (!is_collective(op))
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 65536;
			struct arrival *p = sqlite3_realloc64(l->a, cap * sizeof(*p));
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			l->a = p;
			l->cap = cap;
		}
		const char *host = gr_evwalk__host(w);
		struct arrival *a = &l->a[l->n];

		memset(a, 0, sizeof(*a));
		hhint = intern(l, host ? host : "", hhint);
		ohint = intern(l, op, ohint);
		if (hhint < 0 || ohint < 0) {
			rc = -ENOMEM;
			break;
		}
		a->comm = gr_evrow__int(r, col[C_COMM]);
		a->seq = gr_evrow__int(r, col[C_SEQ]);
		a->host = hhint;
		a->pid = I(C_PID);
		a->rank = I(C_RANK);
		a->nranks = I(C_NRANKS);
		a->ts = gr_evrow__null(r, col[C_TS]) ? 0 :
			gr_evrow__int(r, col[C_TS]);
		a->op = ohint;
		a->bytes = I(C_BYTES);
		l->n++;
	}
#undef I
	gr_evwalk__close(w);
	if (rc < 0)
		return gr_vtab__walk_error(rc, "nccl", err);
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

/* The tables, by the column lists they declare. */
enum nccl_table { T_SKEW, T_ARRIVAL, T_PACE };

/* nccl_rank_pace's argument: the collectives per iteration. */
#define PACE_ARG_COL 11

static const char *const table_ddl[] = {
	[T_SKEW] = "CREATE TABLE x(host TEXT, rank INTEGER, pid INTEGER, "
		   "comm_id INTEGER, n INTEGER, nranks INTEGER, "
		   "collectives INTEGER, last INTEGER, mean_late REAL, "
		   "p99_late REAL, max_late INTEGER, host_late REAL)",
	[T_ARRIVAL] = "CREATE TABLE x(comm_id INTEGER, seq INTEGER, "
		      "op TEXT, bytes INTEGER, n INTEGER, nranks INTEGER, "
		      "first_ts INTEGER, last_ts INTEGER, last_host TEXT, "
		      "last_rank INTEGER, last_pid INTEGER, prev_ts INTEGER)",
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
	ii->estimatedCost = 1e6;
	if (((struct nf_vtab *)v)->t != T_PACE)
		return SQLITE_OK;
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (c->iColumn != PACE_ARG_COL)
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
