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
 * stays below 2^53 ns (104 days of lateness per rank); the pools' medians
 * interpolate the sorted gaps as median() does (aggregates.c); nccl-skew's
 * p99 and rank-pace's median iteration come from the log-linear histogram
 * (store/summary.h), as hist_quantile() gives them in the SQL.
 *
 * Two ways to read the calls.  The first (load() and the walks after
 * it) holds every collective call in memory, one record each (88 bytes)
 * plus a few words of index: nccl_last_arrival without its argument, and
 * rank-pace where a process drives several ranks of one communicator.
 * The second reads what gpurecd keeps per nccl block (store/ncclcoll.h):
 * nccl_last_arrival(k) the records, nccl_rank_skew and nccl_rank_pace the
 * records and the arrivals, each in two walks that keep a few words a
 * collective, rank or process (the sections below say how), blocks
 * without them read from their calls in the same walks.
 *
 * Every allocation here goes through SQLite's allocator, so --max-memory
 * (sqlite3_hard_heap_limit64, 1G by default) caps these tables as it caps
 * SQLite's own sorts: a window too big ends with the memory line, not
 * with the host's memory exhausted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/nccl_fleet.h"
#include "query/sqlmem.h"
#include "query/vt_event.h"
#include "store/codec.h"
#include "store/ncclcoll.h"
#include "store/summary.h"

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
	int64_t dur;			/* walk_calls(all) only */
	int coll;			/* a collective's call (else all) */
	const char *op, *host;		/* valid during the callback */
};

/* Walks the collectives' calls of the nccl table: the rows of "SELECT
 * comm_id, seq, host, pid, rank, nranks, ts, op, bytes FROM nccl WHERE seq
 * IS NOT NULL AND comm_id IS NOT NULL" whose op is_collective(), in its
 * order, walked from the blocks (vt_event.h), not through SQLite, whose
 * calls per row and column were most of the time.  skip (or NULL) answers
 * for blocks before they are read (gr_evwalk__set_skip).  first and end
 * (0: all) bound the segments walked, as gr_evwalk__open()'s.  With @all,
 * every row of the table comes, the others with coll 0 (and any column
 * NUL), and each with its dur.  Calls fn(ctx, call) for each; a negative return ends the walk with it.  Returns
 * SQLITE_OK, or an SQLite error code with *err set (sqlite3_malloc'd). */
static int walk_calls(struct gr_qctx *q, gr_scan_skip_fn skip, void *sctx,
		      int (*fn)(void *ctx, const struct coll_call *c),
		      void *ctx, int first, int end, int all, char **err)
{
	enum { C_COMM, C_SEQ, C_PID, C_RANK, C_NRANKS, C_TS, C_OP, C_BYTES,
	       C_DUR, NC };
	static const char *const name[NC] = {
		"comm_id", "seq", "pid", "rank", "nranks", "ts", "op", "bytes",
		"dur",
	};
	int col[NC], rc;
	uint64_t need = 0;

	for (int i = 0; i < NC; i++) {
		if ((col[i] = nccl_col(name[i])) < 0) {
			*err = sqlite3_mprintf("nccl has no column %s", name[i]);
			return SQLITE_ERROR;
		}
		if (i != C_DUR || all)
			need |= 1ull << col[i];
	}
	struct gr_evwalk *w = gr_evwalk__open(q, "nccl", need, first, end);
	if (!w) {
		*err = sqlite3_mprintf("out of memory reading nccl");
		return SQLITE_NOMEM;
	}
	if (skip)
		gr_evwalk__set_skip(w, skip, sctx);
	const struct cursor *r = gr_evwalk__cursor(w);
#define I(i) (gr_evrow__null(r, col[i]) ? NUL : gr_evrow__int(r, col[i]))
	while ((rc = gr_evwalk__next(w)) == 1) {
		int coll = !gr_evrow__null(r, col[C_SEQ]) &&
			   !gr_evrow__null(r, col[C_COMM]);
		if (!coll && !all)
			continue;
		const char *op = row_str(r, col[C_OP]);
		coll = coll && is_collective(op);
		if (!coll && !all)
			continue;
		const char *host = gr_evwalk__host(w);
		struct coll_call c = {
			.comm = I(C_COMM), .seq = I(C_SEQ),
			.pid = I(C_PID), .rank = I(C_RANK),
			.nranks = I(C_NRANKS), .bytes = I(C_BYTES),
			.ts = gr_evrow__null(r, col[C_TS]) ? 0 :
			      gr_evrow__int(r, col[C_TS]),
			.dur = all ? I(C_DUR) : NUL, .coll = coll,
			.op = op ? op : "", .host = host ? host : "",
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
	int rc = walk_calls(q, NULL, NULL, load_call, &x, 0, 0, 0, err);

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

/* The id of @k in @m, made if new with its value (of @sz bytes in *vals,
 * *cap of them) zeroed and *isnew set; -1: out of memory. */
static int64_t id_val(struct idmap *m, const int64_t k[4], void **vals,
		      uint32_t *cap, size_t sz, int *isnew)
{
	uint32_t before = m->n;
	int64_t g = idmap_get(m, k);

	*isnew = 0;
	if (g < 0 || m->n == before)
		return g;
	if ((uint32_t)g >= *cap) {
		uint32_t c = *cap ? 2 * *cap : 64;
		void *v = sqlite3_realloc64(*vals, (size_t)c * sz);
		if (!v) {
			m->n--;
			m->slot[idmap_slot(m, k)] = 0;
			return -1;
		}
		*vals = v;
		*cap = c;
	}
	memset((char *)*vals + (size_t)g * sz, 0, sz);
	*isnew = 1;
	return g;
}

/* Grows *p (of *cap elements of size sz) to hold n.  Returns 0 or
 * -ENOMEM. */
static int grow_to(void **p, size_t *cap, size_t n, size_t sz)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	void *q = sqlite3_realloc64(*p, c * sz);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Empties @m, keeping its room. */
static void idmap_clear(struct idmap *m)
{
	if (m->n)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->n = 0;
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

static int key_comm(const struct arrival *a, int64_t k[4])
{
	k[0] = a->comm;
	return 1;
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
 * calls), from the log-linear histogram (hist_quantile(x, 50), as the
 * SQL takes it: a day of pairs does not fit a sort).  Returns 1 with *ns
 * set, 0 if no pair, or -ENOMEM. */
static int iteration_ns(struct entry *e, size_t k, int64_t per, double *ns)
{
	struct gr_hist h = {0};
	size_t lo = 0;
	int rc = 0;

	qsort(e, k, sizeof(*e), cmp_entry);
	for (size_t i = 0; i < k && !rc; i++) {
		int64_t want = e[i].seq - per;
		/* Seqs ascend and per >= 0: the match moves forward. */
		while (lo < k && e[lo].seq < want)
			lo++;
		for (size_t j = lo; j < k && e[j].seq == want && !rc; j++)
			rc = gr_hist__add(&h, e[i].ts - e[j].ts);
	}
	/* hist_quantile() is NULL below 0 (a clock stepped back). */
	int64_t v = !rc && h.n ? gr_hist__quantile(&h, 50) : -1;
	if (v >= 0)
		*ns = (double)v;
	rc = rc ? -ENOMEM : v >= 0;
	gr_hist__free(&h);
	return rc;
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
	/* nccl_rank_skew's walk (spans.with_n) only: the calls seen
	 * (N_COUNT), N_SHARED where the last arrival is shared (no one rank
	 * last), N_SPLIT where a host's calls of it lie in several blocks. */
	uint32_t n[];
};

#define N_SHARED 0x80000000u
#define N_SPLIT 0x40000000u
#define N_COUNT 0x3fffffffu

struct spans {
	struct span_page **slot;	/* open addressing; NULL: empty */
	size_t cap, n;
	struct span_page *memo;
	int with_n;
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
		struct span_page *p = sqlite3_malloc64(
			sizeof(*p) + (sp->with_n ? SPAN_SEQS * sizeof(*p->n) : 0));
		if (!p)
			return NULL;
		p->comm = comm;
		p->base = base;
		for (int j = 0; j < SPAN_SEQS; j++) {
			p->first[j] = INT64_MAX;
			p->last[j] = INT64_MIN;
		}
		if (sp->with_n)
			memset(p->n, 0, SPAN_SEQS * sizeof(*p->n));
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

/* span_add() for nccl_rank_skew (sp->with_n): merges a host's record of
 * n calls of (comm, seq), its first and last entry and the one before the
 * last (NUL: none), or one call (first = last = its entry, prev NUL). */
static inline int span_add_n(struct spans *sp, int64_t comm, int64_t seq,
			     int64_t first, int64_t last, int64_t prev,
			     int64_t n)
{
	struct span_page *p = span_page(sp, comm, seq);
	if (!p)
		return -ENOMEM;
	int j = (int)((uint64_t)seq & (SPAN_SEQS - 1));
	uint32_t flag = p->n[j] & N_SHARED, split = p->n[j] & N_SPLIT;
	uint64_t cnt = (p->n[j] & N_COUNT) + (uint64_t)(n > 0 ? n : 0);
	if (first < p->first[j])
		p->first[j] = first;
	if (last > p->last[j]) {
		p->last[j] = last;
		flag = prev != NUL && prev == last ? N_SHARED : 0;
	} else if (last == p->last[j]) {
		flag = N_SHARED;
	}
	p->n[j] = (uint32_t)(cnt < N_COUNT ? cnt : N_COUNT) | flag | split;
	return 0;
}

/* Moves @src's pages into @dst, merging those of the same collectives as
 * span_add_n() merges records.  Returns 0 or -ENOMEM (then pages not yet
 * moved stay in src). */
static int spans_merge(struct spans *dst, struct spans *src)
{
	for (size_t i = 0; i < src->cap; i++) {
		struct span_page *p = src->slot[i];
		if (!p)
			continue;
		struct span_page *d = span_page(dst, p->comm, p->base);
		if (!d)
			return -ENOMEM;
		for (int j = 0; j < SPAN_SEQS; j++) {
			uint32_t n2 = p->n[j] & N_COUNT;
			uint32_t split = (d->n[j] | p->n[j]) & N_SPLIT;
			if (!n2) {
				d->n[j] |= split;
				continue;
			}
			uint32_t n1 = d->n[j] & N_COUNT;
			uint32_t flag = d->n[j] & N_SHARED;
			if (p->first[j] < d->first[j])
				d->first[j] = p->first[j];
			if (p->last[j] > d->last[j] || !n1) {
				d->last[j] = p->last[j];
				flag = p->n[j] & N_SHARED;
			} else if (p->last[j] == d->last[j]) {
				flag = N_SHARED;
			}
			uint64_t c = (uint64_t)n1 + n2;
			d->n[j] = (uint32_t)(c < N_COUNT ? c : N_COUNT) |
				  flag | split;
		}
		sqlite3_free(p);
		src->slot[i] = NULL;
		src->n--;
	}
	src->memo = NULL;
	return 0;
}

/* Cuts the segments into at most n runs of whole --data directories
 * (cut[0..n]), of about equal events: gr_vtab__split()'s cuts, each moved
 * to the nearest change of directory.  Returns the number of runs. */
static int skew_split(struct gr_qctx *q, int n, int *cut)
{
	const struct gr_catalog_seg *sg = q->cat.segs;
	int ns = q->cat.nsegs, m = 1;

	n = gr_vtab__split(q, q->since, q->until, n, cut);
	for (int i = 1; i < n; i++) {
		int lo = cut[i], hi = cut[i];
		while (lo > 0 && sg[lo - 1].dir == sg[lo].dir)
			lo--;
		while (hi < ns && hi > 0 && sg[hi - 1].dir == sg[hi].dir)
			hi++;
		int c = lo > 0 && (hi >= ns || cut[i] - lo <= hi - cut[i]) ?
			lo : hi;
		if (c > cut[m - 1] && c < ns)
			cut[m++] = c;
	}
	cut[m] = cut[n];
	return m;
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
	int first, end;			/* segments walked (0, 0: all) */
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
	struct {
		char *path;
		int64_t max;
		uint64_t *bits;		/* seen_mark() */
		int64_t nbits;
	} *seen;			/* seen_max() */
	int skew;			/* nccl_rank_skew's first walk */
	/* That walk on several threads: its pages moved into *shared (under
	 * *lock) every SKEW_FLUSH_PAGES, so that the threads hold one table
	 * and a few pages each, not a table each. */
	struct spans *shared;
	pthread_mutex_t *lock;
	/* nccl_rank_skew's first walk: per (host, collective) the blocks
	 * that had its calls, 4 bits each (15: see splits), in pages of
	 * SPAN_SEQS seqs keyed (host, comm, base); the count of those past
	 * 14, by (host, comm, seq); the collectives of the block being read
	 * from its calls; strict: a block's arrivals are read whole before
	 * its records are taken. */
	struct idmap hbm, splits, blockset;
	uint8_t (*hbits)[SPAN_SEQS / 2];
	uint32_t *splitn;
	uint32_t caphb, capsplit;
	int64_t hbkey[3], hbmemo;
	int strict;
	struct gr_arr arr;
	int64_t *arrts;
	size_t caparrts;
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
	idmap_free(&aw->hbm);
	idmap_free(&aw->splits);
	idmap_free(&aw->blockset);
	sqlite3_free(aw->hbits);
	sqlite3_free(aw->splitn);
	gr_arr__free(&aw->arr);
	sqlite3_free(aw->arrts);
	spans_free(&aw->sp);
	sqlite3_free(aw->w);
	idmap_free(&aw->wm);
	gr_decoder__free(aw->dec);
	gr_block__free(&aw->blk);
	for (int i = 0; i < GR_COLL_NCOLS; i++) {
		sqlite3_free(aw->cv[i]);
		sqlite3_free(aw->cn[i]);
	}
	for (int i = 0; i < aw->nseen; i++) {
		sqlite3_free(aw->seen[i].path);
		sqlite3_free(aw->seen[i].bits);
	}
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
		aw->seen[i].bits = NULL;
		aw->seen[i].nbits = 0;
		aw->nseen++;
	}
	aw->lastseen = i;
	if (id > aw->seen[i].max)
		aw->seen[i].max = id;
	return aw->seen[i].max;
}

/* Notes that the first walk took block @id of the segment seen_max() last
 * found from its records.  Returns 0 or -ENOMEM. */
static int seen_mark(struct arr_walk *aw, int64_t id)
{
	__typeof__(aw->seen[0]) *e = &aw->seen[aw->lastseen];

	if (id < 0)
		return 0;
	if (id >= e->nbits) {
		int64_t nb = e->nbits ? e->nbits : 1024;
		while (nb <= id)
			nb *= 2;
		uint64_t *b = sqlite3_realloc64(e->bits, (size_t)nb / 8);
		if (!b)
			return -ENOMEM;
		memset(b + e->nbits / 64, 0, (size_t)(nb - e->nbits) / 8);
		e->bits = b;
		e->nbits = nb;
	}
	e->bits[id / 64] |= 1ull << (id % 64);
	return 0;
}

/* nccl_rank_skew's first walk: host @h's record of (comm, seq) in one
 * block (or its calls in a block read from its calls).  Counts the host's
 * records of it; a second marks the collective N_SPLIT: the second walk
 * gathers that host's records of it before it counts them, so that the
 * host's first entry and its calls are whole.  Returns 0 or -ENOMEM. */
static int skew_record(struct arr_walk *aw, int h, int64_t comm, int64_t seq)
{
	int64_t base = (int64_t)((uint64_t)seq & ~(uint64_t)(SPAN_SEQS - 1));
	int64_t g = aw->hbmemo;
	int isnew;

	if (g < 0 || aw->hbkey[0] != h || aw->hbkey[1] != comm ||
	    aw->hbkey[2] != base) {
		int64_t k[4] = { h, comm, base, 0 };
		g = id_val(&aw->hbm, k, (void **)&aw->hbits, &aw->caphb,
			   sizeof(*aw->hbits), &isnew);
		if (g < 0)
			return -ENOMEM;
		aw->hbkey[0] = h, aw->hbkey[1] = comm, aw->hbkey[2] = base;
		aw->hbmemo = g;
	}
	int j = (int)((uint64_t)seq & (SPAN_SEQS - 1));
	uint8_t *b = &aw->hbits[g][j / 2];
	int sh = (j & 1) * 4;
	unsigned c = *b >> sh & 15;
	if (c < 15) {
		*b = (uint8_t)((*b & ~(15u << sh)) | (c + 1) << sh);
	} else {
		/* 15 blocks or more: counted exactly aside. */
		int64_t k[4] = { h, comm, seq, 0 };
		int64_t x = id_val(&aw->splits, k, (void **)&aw->splitn,
				   &aw->capsplit, sizeof(*aw->splitn), &isnew);
		if (x < 0)
			return -ENOMEM;
		aw->splitn[x] = isnew ? 16 : aw->splitn[x] + 1;
	}
	if (c == 1) {
		struct span_page *p = span_page(&aw->sp, comm, seq);
		if (!p)
			return -ENOMEM;
		p->n[j] |= N_SPLIT;
	}
	return 0;
}

/* The first walk's count of host @h's records of (comm, seq) (0: none). */
static uint32_t skew_records(const struct arr_walk *aw, int h, int64_t comm,
			     int64_t seq)
{
	int64_t base = (int64_t)((uint64_t)seq & ~(uint64_t)(SPAN_SEQS - 1));
	int64_t k[4] = { h, comm, base, 0 };
	int64_t g = idmap_find(&aw->hbm, k);
	if (g < 0)
		return 0;
	int j = (int)((uint64_t)seq & (SPAN_SEQS - 1));
	uint32_t c = aw->hbits[g][j / 2] >> (j & 1) * 4 & 15;
	if (c < 15)
		return c;
	int64_t k2[4] = { h, comm, seq, 0 };
	int64_t x = idmap_find(&aw->splits, k2);
	return x < 0 ? 15 : aw->splitn[x];
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
	if (aw->skew)
		mask |= 1u << GR_COLL_N | 1u << GR_COLL_PREV;
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
	if (aw->skew) {
		const char *host = gr_segment__info(s)->host;
		int h = intern(aw->l, host ? host : "", aw->hhint);
		if (h < 0) {
			aw->err = -ENOMEM;
			return 1;
		}
		aw->hhint = h;
		for (uint32_t r = 0; r < nrows; r++)
			if (span_add_n(&aw->sp, v[GR_COLL_COMM][r],
				       v[GR_COLL_SEQ][r], v[GR_COLL_FIRST][r],
				       v[GR_COLL_LAST][r], v[GR_COLL_PREV][r],
				       v[GR_COLL_N][r]) ||
			    skew_record(aw, h, v[GR_COLL_COMM][r],
					v[GR_COLL_SEQ][r])) {
				/* Half merged: the walk must end, not read
				 * the block again from its calls. */
				aw->err = -ENOMEM;
				return 1;
			}
		return 1;
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

#define SKEW_FLUSH_PAGES 512

/* Moves aw's pages into the shared table once it holds enough of them. */
static void skew_flush(struct arr_walk *aw)
{
	if (!aw->shared || aw->sp.n < SKEW_FLUSH_PAGES || aw->err)
		return;
	pthread_mutex_lock(aw->lock);
	if (spans_merge(aw->shared, &aw->sp))
		aw->err = -ENOMEM;
	pthread_mutex_unlock(aw->lock);
}

/* Whether block h of s has arrivals the second walk can read: a row of
 * them for the block (strict: one whose payload passes its checksum and
 * parses to its end). */
static int skew_has_arrivals(struct arr_walk *aw, struct gr_segment *s,
			     const struct gr_scan_hdr *h)
{
	const uint8_t *p;
	size_t len;
	struct gr_arr_rec r;
	int rc;

	if (!aw->strict)
		return gr_arr__has(s, h->id, h->crc);
	if (!gr_arr__payload(s, h->id, h->crc, 1, &p, &len))
		return 0;
	if ((rc = gr_arr__parse(&aw->arr, p, len)) == 0 &&
	    (rc = grow_to((void **)&aw->arrts, &aw->caparrts,
			  aw->arr.maxlen ? aw->arr.maxlen : 1,
			  sizeof(*aw->arrts))) == 0)
		while ((rc = gr_arr__next(&aw->arr, &r, aw->arrts)) == 1)
			;
	gr_arr__done(s);
	if (rc == -ENOMEM)
		aw->err = -ENOMEM;
	return rc == 0;
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
	if (aw->skew)
		idmap_clear(&aw->blockset);	/* a new block */
	if (q->has_pid || h->ts_min < q->since || h->ts_max > q->until ||
	    (aw->skew && !skew_has_arrivals(aw, s, h)) ||
	    gr_coll__payload(s, h->id, h->crc, &aw->blk) != 1)
		return 0;
	int took = from_records(aw, s);
	gr_coll__done(s);
	if (took && aw->skew && seen_mark(aw, h->id))
		aw->err = -ENOMEM;
	if (took)
		skew_flush(aw);
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
	if (aw->skew) {
		skew_flush(aw);
		if (aw->err)
			return aw->err;
		/* The block's first call of (comm, seq): its record. */
		int64_t k[4] = { c->comm, c->seq, 0, 0 };
		uint32_t before = aw->blockset.n;
		if (idmap_get(&aw->blockset, k) < 0)
			return -ENOMEM;
		if (aw->blockset.n != before) {
			int h = intern(aw->l, c->host, aw->hhint);
			if (h < 0)
				return -ENOMEM;
			aw->hhint = h;
			if (span_add_n(&aw->sp, c->comm, c->seq, c->ts, c->ts,
				       NUL, 1) ||
			    skew_record(aw, h, c->comm, c->seq))
				return -ENOMEM;
			return 0;
		}
		return span_add_n(&aw->sp, c->comm, c->seq, c->ts, c->ts, NUL,
				  1);
	}
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
	int rc = walk_calls(aw->q, arr_skip, aw, arr_call, aw, aw->first,
			    aw->end, 0, err);
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

/* ---- nccl_rank_skew, from the records and arrivals kept per block -------
 *
 * Two walks, as nccl_last_arrival's.  The first merges, per collective,
 * the calls seen, the first and last entry and whether the last is
 * shared, from each block's records (ncclcoll.h) where it has records and
 * arrivals and lies in the window without --pid, else from its calls; per
 * communicator the most calls any collective had then says which
 * collectives count.  The second walk reads each block's arrivals (each
 * call's entry and rank; the block's calls where the first walk read
 * them) and folds every call of a counted collective into its rank's
 * sums: count, sum and max of lateness, a histogram for p99, times last,
 * and lateness within its host.  A collective's calls on one host may
 * fall into several blocks (a block ends mid-collective, a rank trails
 * its host by seconds): the first walk marks those (N_SPLIT) and counts
 * the host's records of each, and the second gathers their calls until
 * it has met them all, so that the host's first entry and its count are
 * whole.
 * The second walk runs on every CPU (gr_vtab__walkers()), each thread
 * over whole --data directories, so that a host's blocks meet in order in
 * one thread; the ranks' sums are per host, so the threads' rows are
 * disjoint.  Memory is the first walk's: 20 bytes a collective, in one
 * table the threads move their pages into every SKEW_FLUSH_PAGES, and 4
 * bits a host and collective (its blocks); then the split collectives in
 * flight.  Time: reading every call's few bytes once. */

/* One call of a collective, in its rank's terms. */
struct pcall {
	int64_t ts, nranks;
	uint32_t gid;			/* its rank: sk->acc[gid] */
};

/* A host's share of a split collective, gathered over its blocks. */
struct spend {
	uint32_t left;			/* records still to come */
	uint32_t n, cap;
	int64_t first;
	struct pcall *c;
};

/* One rank's sums: (comm_id, host, pid, rank), by gid.  Its lateness
 * values are counted in a flat array of the histogram's buckets (cnt,
 * made on first use), moved into h at the end: a count is one increment,
 * where gr_hist's octaves and bucket count made each a chain of loads. */
struct skew_acc {
	int64_t cnt, sum, min, max, last, hsum, hn, nranks;
	struct gr_hist h;
	uint32_t *b;
};

/* Moves a's bucket counts into its histogram.  Returns 0 or -ENOMEM. */
static int skew_drain(struct skew_acc *a)
{
	int rc = 0;
	for (uint32_t i = 0; a->b && i < GR_HIST_NBUCKETS; i++)
		if (a->b[i]) {
			rc |= gr_hist__add_count(&a->h, i, a->b[i], a->min,
						 a->max);
			a->b[i] = 0;
		}
	return rc ? -ENOMEM : 0;
}

/* A call of a block read from its calls, held until the block ends. */
struct fcall {
	int64_t comm, seq, ts, pid, rank, nranks;
};

/* What the first walk found, read by every thread of the second. */
struct skew_first {
	struct spans sp;		/* with n: every part's, merged */
	struct idmap comms;		/* comm -> index into most */
	int32_t *most;
};

/* One thread's part of both walks: segments [first, end) (aw.first,
 * aw.end), whole --data directories. */
struct skew_part {
	const struct skew_first *f;
	struct arr_walk aw;		/* the first walk; seen blocks, splits */
	struct nccl_load names;		/* aw.l: its hosts, in both walks */
	struct gr_qctx *q;
	int first, end;
	int lastseen, hhint, err;
	const struct span_page *memo;
	int64_t memo_comm;
	int32_t memo_most;
	struct idmap groups;		/* (comm, host, pid, rank) -> gid */
	struct skew_acc *acc;
	uint32_t capacc;
	struct fcall *fb;		/* the block being read from calls */
	size_t nfb, capfb;
	int fbhost;
	struct idmap pendm;		/* (host, comm, seq) -> pend */
	struct spend *pend;
	uint32_t cappend, npending;	/* npending: left > 0 */
	struct pcall *rcall;		/* a record's calls */
	size_t caprcall;
	int redo;			/* arrivals failed: walk again, strict */
	struct gr_arr arr;
	int64_t *ts;
	uint32_t *slotgid;
	size_t capts, capslot;
	char *msg;			/* the walk's error message */
	int rc;
};

static void skew_part_free(struct skew_part *sk)
{
	for (uint32_t i = 0; i < sk->groups.n; i++) {
		gr_hist__free(&sk->acc[i].h);
		sqlite3_free(sk->acc[i].b);
	}
	idmap_free(&sk->groups);
	sqlite3_free(sk->acc);
	for (uint32_t i = 0; i < sk->pendm.n; i++)
		sqlite3_free(sk->pend[i].c);
	idmap_free(&sk->pendm);
	sqlite3_free(sk->pend);
	sqlite3_free(sk->rcall);
	sqlite3_free(sk->fb);
	gr_arr__free(&sk->arr);
	sqlite3_free(sk->ts);
	sqlite3_free(sk->slotgid);
	sqlite3_free(sk->msg);
	arr_walk_free(&sk->aw);
	load_free(&sk->names);
}

/* The gid of rank (comm, host, pid, rank), made if new; -1: ENOMEM. */
static int64_t skew_gid(struct skew_part *sk, int64_t comm, int host,
			int64_t pid, int64_t rank)
{
	int64_t k[4] = { comm, host, pid, rank };
	uint32_t before = sk->groups.n;
	int64_t g = idmap_get(&sk->groups, k);

	if (g < 0 || sk->groups.n == before)
		return g;
	if ((uint32_t)g >= sk->capacc) {
		uint32_t cap = sk->capacc ? 2 * sk->capacc : 64;
		struct skew_acc *a = sqlite3_realloc64(sk->acc,
						       cap * sizeof(*a));
		if (!a) {
			/* The key stays: its accumulator must exist. */
			sk->groups.n--;
			sk->groups.slot[idmap_slot(&sk->groups, k)] = 0;
			return -1;
		}
		sk->acc = a;
		sk->capacc = cap;
	}
	memset(&sk->acc[g], 0, sizeof(sk->acc[g]));
	sk->acc[g].nranks = NUL;
	return g;
}

/* The most calls a collective of @comm had (0: none). */
static int32_t most_of(struct skew_part *sk, int64_t comm)
{
	if (sk->memo_most >= 0 && sk->memo_comm == comm)
		return sk->memo_most;
	int64_t k[4] = { comm };
	int64_t c = idmap_find(&sk->f->comms, k);
	sk->memo_comm = comm;
	sk->memo_most = c < 0 ? 0 : sk->f->most[c];
	return sk->memo_most;
}

/* The first walk's page of (comm, seq), or NULL. */
static const struct span_page *skew_page(struct skew_part *sk, int64_t comm,
					 int64_t seq)
{
	const struct spans *sp = &sk->f->sp;
	int64_t base = (int64_t)((uint64_t)seq & ~(uint64_t)(SPAN_SEQS - 1));

	if (sk->memo && sk->memo->comm == comm && sk->memo->base == base)
		return sk->memo;
	if (!sp->cap)
		return NULL;
	const struct span_page *p = sp->slot[span_slot(sp, comm, base)];
	if (p)
		sk->memo = p;
	return p;
}

/* Folds a host's share of collective (p, j) (whole: its n calls c, the
 * first at @first) into the ranks' sums, if it counts. */
static void skew_finish(struct skew_part *sk, const struct span_page *p,
			int j, int64_t first_h, const struct pcall *c,
			uint32_t n)
{
	int32_t calls = (int32_t)(p->n[j] & N_COUNT);
	int32_t most = most_of(sk, p->comm);
	if (calls != most || most <= 1)
		return;
	int64_t first = p->first[j];
	/* No call's entry equals INT64_MIN: a shared last is never hit. */
	int64_t last = p->n[j] & N_SHARED ? INT64_MIN : p->last[j];
	int whole = n > 1;
	for (uint32_t i = 0; i < n; i++) {
		struct skew_acc *a = &sk->acc[c[i].gid];
		int64_t late = c[i].ts - first;
		if (!a->b && !(a->b = gr_sq_calloc(GR_HIST_NBUCKETS,
						   sizeof(*a->b)))) {
			sk->err = -ENOMEM;
			return;
		}
		if (late > a->max || !a->cnt)
			a->max = late;
		if (late < a->min || !a->cnt)
			a->min = late;
		a->cnt++;
		a->sum += late;
		uint32_t *bc = &a->b[gr_hist_bucket(late)];
		/* Half full: into the histogram (a day has 2^24). */
		if (++*bc >> 31 && gr_hist__add_count(
			    &a->h, (uint32_t)(bc - a->b), *bc, a->min, a->max))
			sk->err = -ENOMEM;
		else if (*bc >> 31)
			*bc = 0;
		a->last += c[i].ts == last;
		if (whole) {
			a->hsum += c[i].ts - first_h;
			a->hn++;
		}
		if (c[i].nranks > a->nranks)
			a->nranks = c[i].nranks;
	}
}

/* Drops the finished entries of sk->pendm once they are most of it: a
 * rank trailing its host by seconds splits every collective of the host,
 * and only those in flight need keeping.  Returns 0 or -ENOMEM. */
static int skew_pend_room(struct skew_part *sk)
{
	uint32_t n = sk->pendm.n;
	if (n < 1024 || sk->npending * 2 > n)
		return 0;
	struct idmap m = {0};
	struct spend *v = NULL;
	uint32_t cap = 0;
	for (uint32_t g = 0; g < n; g++) {
		int isnew;
		if (!sk->pend[g].left)
			continue;
		int64_t x = id_val(&m, sk->pendm.key[g], (void **)&v, &cap,
				   sizeof(*v), &isnew);
		if (x < 0) {
			idmap_free(&m);
			sqlite3_free(v);
			return -ENOMEM;
		}
		v[x] = sk->pend[g];
	}
	idmap_free(&sk->pendm);
	sqlite3_free(sk->pend);
	sk->pendm = m;
	sk->pend = v;
	sk->cappend = cap;
	return 0;
}

/* Host @h's record of (comm, seq) in one block: its n calls c, the first
 * at @first.  Folded at once, or, where the collective is split, gathered
 * with the host's other records of it until the last has come. */
static void skew_take(struct skew_part *sk, int h, int64_t comm, int64_t seq,
		      int64_t first, const struct pcall *c, uint32_t n)
{
	const struct span_page *p = skew_page(sk, comm, seq);
	if (!p)
		return;
	int j = (int)((uint64_t)seq & (SPAN_SEQS - 1));
	if (!(p->n[j] & N_SPLIT)) {
		skew_finish(sk, p, j, first, c, n);
		return;
	}
	int64_t k[4] = { h, comm, seq, 0 };
	int64_t g = idmap_find(&sk->pendm, k);
	if (g < 0) {
		/* Split on another host only: this host's one record. */
		uint32_t left = skew_records(&sk->aw, h, comm, seq);
		if (left <= 1) {
			skew_finish(sk, p, j, first, c, n);
			return;
		}
		if (skew_pend_room(sk)) {
			sk->err = -ENOMEM;
			return;
		}
		int isnew;
		g = id_val(&sk->pendm, k, (void **)&sk->pend, &sk->cappend,
			   sizeof(*sk->pend), &isnew);
		if (g < 0) {
			sk->err = -ENOMEM;
			return;
		}
		sk->pend[g].left = left;
		sk->pend[g].first = first;
		sk->npending++;
	}
	struct spend *e = &sk->pend[g];
	if (!e->left)
		return;		/* more records than the first walk met */
	size_t cap = e->cap;
	if (grow_to((void **)&e->c, &cap, (size_t)e->n + n, sizeof(*e->c))) {
		sk->err = -ENOMEM;
		return;
	}
	e->cap = (uint32_t)cap;
	memcpy(e->c + e->n, c, n * sizeof(*c));
	e->n += n;
	if (first < e->first)
		e->first = first;
	if (--e->left)
		return;
	skew_finish(sk, p, j, e->first, e->c, e->n);
	sqlite3_free(e->c);
	e->c = NULL;
	e->n = e->cap = 0;
	sk->npending--;
}

static int cmp_fcall(const void *pa, const void *pb)
{
	const struct fcall *a = pa, *b = pb;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Ends the block being read from its calls: its collectives, each one
 * record of the host's. */
static int skew_flush_calls(struct skew_part *sk)
{
	size_t n = sk->nfb;

	if (!n)
		return 0;
	sk->nfb = 0;
	qsort(sk->fb, n, sizeof(*sk->fb), cmp_fcall);
	if (grow_to((void **)&sk->rcall, &sk->caprcall, n, sizeof(*sk->rcall)))
		return -ENOMEM;
	for (size_t i = 0, i0 = 0; i < n && !sk->err; i0 = i) {
		int64_t first = sk->fb[i0].ts;
		for (; i < n && !cmp_fcall(&sk->fb[i], &sk->fb[i0]); i++) {
			const struct fcall *f = &sk->fb[i];
			int64_t g = skew_gid(sk, f->comm, sk->fbhost, f->pid,
					     f->rank);
			if (g < 0)
				return -ENOMEM;
			sk->rcall[i - i0] = (struct pcall){
				.ts = f->ts, .nranks = f->nranks,
				.gid = (uint32_t)g,
			};
			if (f->ts < first)
				first = f->ts;
		}
		skew_take(sk, sk->fbhost, sk->fb[i0].comm, sk->fb[i0].seq,
			  first, sk->rcall, (uint32_t)(i - i0));
	}
	return sk->err;
}

/* Reads a block's arrivals [p, p + len) of host h, each record taken as
 * it is read.  Returns 1, 0 where they do not parse (nothing taken), or
 * -ENOMEM; a payload that fails half way sets sk->redo. */
static int skew_arrivals(struct skew_part *sk, int h, const uint8_t *p,
			 size_t len)
{
	struct gr_arr *a = &sk->arr;
	struct gr_arr_rec r;
	int rc = gr_arr__parse(a, p, len);

	if (rc)
		return rc == -ENOMEM ? -ENOMEM : 0;
	if (grow_to((void **)&sk->slotgid, &sk->capslot,
		    a->nslot ? a->nslot : 1, sizeof(*sk->slotgid)) ||
	    grow_to((void **)&sk->ts, &sk->capts, a->maxlen ? a->maxlen : 1,
		    sizeof(*sk->ts)) ||
	    grow_to((void **)&sk->rcall, &sk->caprcall,
		    a->maxlen ? a->maxlen : 1, sizeof(*sk->rcall)))
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nslot; i++) {
		int64_t g = skew_gid(sk, a->slot[i].comm, h, a->slot[i].pid,
				     a->slot[i].rank);
		if (g < 0)
			return -ENOMEM;
		sk->slotgid[i] = (uint32_t)g;
	}
	while (!sk->err && (rc = gr_arr__next(a, &r, sk->ts)) == 1) {
		for (uint32_t j = 0; j < r.n; j++)
			sk->rcall[j] = (struct pcall){
				.ts = sk->ts[j],
				.nranks = a->slot[r.slots[j]].nranks,
				.gid = sk->slotgid[r.slots[j]],
			};
		skew_take(sk, h, r.comm, r.seq, r.first, sk->rcall, r.n);
	}
	/* Records already taken: the walks must start again, the first
	 * reading each block's arrivals whole before it takes the block. */
	if (rc < 0)
		sk->redo = 1;
	return 1;
}

/* The index of the first walk's seen entry for @path (sk->lastseen
 * first), or -1. */
static int skew_seen(struct skew_part *sk, const char *path)
{
	const struct arr_walk *aw = &sk->aw;
	int i = sk->lastseen;

	if (i >= 0 && i < aw->nseen && !strcmp(aw->seen[i].path, path))
		return i;
	for (i = 0; i < aw->nseen; i++)
		if (!strcmp(aw->seen[i].path, path))
			return sk->lastseen = i;
	return -1;
}

/* The second walk's skip test: a block the first took from its records
 * is read from its arrivals (or, where they fail, its calls); the others
 * from their calls. */
static int skew_skip(void *ctx, struct gr_segment *s,
		     const struct gr_scan_hdr *h)
{
	struct skew_part *sk = ctx;
	const struct arr_walk *aw = &sk->aw;
	struct gr_qctx *q = sk->q;
	const struct gr_segment_info *si = gr_segment__info(s);
	const uint8_t *p;
	size_t len;

	if (!sk->err)
		sk->err = skew_flush_calls(sk);
	if (!sk->err && q->stop && q->stop())
		sk->err = -EINTR;
	if (sk->err)
		return 1;
	int e = skew_seen(sk, si->path);
	/* A block the first walk did not meet (written since). */
	if (e < 0 || h->id > aw->seen[e].max)
		return 1;
	if (!(h->id < aw->seen[e].nbits &&
	      aw->seen[e].bits[h->id / 64] >> (h->id % 64) & 1))
		return 0;
	if (!gr_arr__payload(s, h->id, h->crc, 1, &p, &len)) {
		/* Gone or failing its checksum since the first walk took
		 * the block's records: the walks start again, strict. */
		sk->redo = 1;
		sk->err = -EAGAIN;
		return 1;
	}
	int hi = intern(&sk->names, si->host ? si->host : "", sk->hhint);
	int took = hi < 0 ? -ENOMEM : skew_arrivals(sk, hi, p, len);
	gr_arr__done(s);
	if (took < 0) {
		sk->err = took;
		return 1;
	}
	if (!took) {
		/* The first walk took its records: the walks start again. */
		sk->redo = 1;
		return 1;
	}
	sk->hhint = hi;
	if (sk->redo)
		sk->err = -EAGAIN;
	__atomic_add_fetch(&q->coll_blocks_read, 1, __ATOMIC_RELAXED);
	return 1;
}

/* The second walk's call of a block read from its calls. */
static int skew_call(void *ctx, const struct coll_call *c)
{
	struct skew_part *sk = ctx;

	if (sk->err)
		return sk->err;
	int h = intern(&sk->names, c->host, sk->fbhost);
	if (h < 0)
		return -ENOMEM;
	sk->fbhost = h;
	if (grow_to((void **)&sk->fb, &sk->capfb, sk->nfb + 1,
		    sizeof(*sk->fb)))
		return -ENOMEM;
	sk->fb[sk->nfb++] = (struct fcall){
		.comm = c->comm, .seq = c->seq, .ts = c->ts, .pid = c->pid,
		.rank = c->rank, .nranks = c->nranks,
	};
	return 0;
}

/* Walks sk's segments: the second walk, its held blocks folded last. */
static int skew_walk(struct skew_part *sk)
{
	int rc = walk_calls(sk->q, skew_skip, sk, skew_call, sk, sk->first,
			    sk->end, 0, &sk->msg);
	if (rc == SQLITE_OK && !sk->err)
		sk->err = skew_flush_calls(sk);
	/* Split collectives whose records did not all come (their blocks
	 * gone since the first walk): what did. */
	for (uint32_t g = 0; rc == SQLITE_OK && !sk->err && g < sk->pendm.n;
	     g++) {
		struct spend *e = &sk->pend[g];
		const int64_t *k = sk->pendm.key[g];
		const struct span_page *p = skew_page(sk, k[1], k[2]);
		if (!e->left || !e->n || !p)
			continue;
		skew_finish(sk, p, (int)((uint64_t)k[2] & (SPAN_SEQS - 1)),
			    e->first, e->c, e->n);
	}
	for (uint32_t g = 0; rc == SQLITE_OK && !sk->err && g < sk->groups.n;
	     g++)
		sk->err = skew_drain(&sk->acc[g]);
	if (rc == SQLITE_OK && sk->err == -EAGAIN)
		return sk->rc = SQLITE_OK;	/* sk->redo: ask again */
	if (rc == SQLITE_OK && sk->err)
		rc = gr_vtab__walk_error(sk->err, "nccl", &sk->msg);
	return sk->rc = rc;
}

/* The first walk over sk's segments. */
static int skew_first_walk(struct skew_part *sk)
{
	sk->aw.dec = gr_decoder__new();
	sk->rc = sk->aw.dec ? arr_pass(&sk->aw, &sk->msg) : SQLITE_NOMEM;
	return sk->rc;
}

/* Runs fn on each of the n parts (of size bytes each, from parts), the
 * first on this thread and each other on a thread of its own; a thread
 * that cannot start leaves its part to this one. */
static void run_parts(void *parts, size_t size, int n, void *(*fn)(void *))
{
	struct { pthread_t th; int started; } t[64];
	char *p = parts;

	for (int i = 1; i < n; i++)
		t[i].started = pthread_create(&t[i].th, NULL, fn,
					      p + (size_t)i * size) == 0;
	fn(p);
	for (int i = 1; i < n; i++) {
		if (t[i].started)
			pthread_join(t[i].th, NULL);
		else
			fn(p + (size_t)i * size);
	}
}

static void *skew_main(void *arg)
{
	struct skew_part *sk = arg;
	if (sk->aw.pass == 1)
		skew_first_walk(sk);
	else
		skew_walk(sk);
	return NULL;
}

/* Runs walk @pass of every part, the first on this thread.  Returns the
 * first part's error, with *err, or SQLITE_OK. */
static int skew_run(struct skew_part *parts, int n, int pass, char **err)
{
	for (int i = 0; i < n; i++)
		parts[i].aw.pass = pass;
	run_parts(parts, sizeof(*parts), n, skew_main);
	for (int i = 0; i < n; i++)
		if (parts[i].rc != SQLITE_OK) {
			*err = parts[i].msg;
			parts[i].msg = NULL;
			return parts[i].rc;
		}
	return SQLITE_OK;
}

/* nccl_rank_skew on @threads threads (0: gr_vtab__walkers()): fills @l's
 * names and *rows (*nrows), or sets *again where it must be asked again
 * on one thread (a host's blocks met in two parts), or *redo where it
 * must be asked again @strict (arrivals the first walk trusted failed the
 * second: damaged since, or by a fault their checksum missed). */
static int skew_ranks(struct gr_qctx *q, int threads, int strict,
		      struct nccl_load *l, struct skew_row **rows,
		      size_t *nrows, int *again, int *redo, char **err)
{
	struct skew_first f = { .sp = { .with_n = 1 } };
	struct skew_part *parts = NULL;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int n = 0, cut[65], rc;

	*again = *redo = 0;
	if (!(n = threads ? threads : gr_vtab__walkers())) {
		*err = sqlite3_mprintf("GPUREC_SCAN_THREADS=%s: not a number "
				       "from 1 to 64",
				       getenv("GPUREC_SCAN_THREADS"));
		return SQLITE_ERROR;
	}
	n = skew_split(q, n, cut);
	if (!(parts = gr_sq_calloc((size_t)n, sizeof(*parts))))
		return SQLITE_NOMEM;
	for (int i = 0; i < n; i++) {
		struct skew_part *sk = &parts[i];
		*sk = (struct skew_part){
			.f = &f, .q = q, .first = cut[i], .end = cut[i + 1],
			.lastseen = -1, .hhint = -1, .memo_most = -1,
			.fbhost = -1,
			.aw = { .q = q, .first = cut[i], .end = cut[i + 1],
				.lastseen = -1, .opok_seg = -1, .skew = 1,
				.sp = { .with_n = 1 }, .hbmemo = -1,
				.hhint = -1, .strict = strict },
		};
		sk->aw.l = &sk->names;
		sk->aw.shared = &f.sp;
		sk->aw.lock = &lock;
	}
	if ((rc = skew_run(parts, n, 1, err)) != SQLITE_OK)
		goto out;
	/* What each part has not moved into the one table yet. */
	for (int i = 0; i < n; i++)
		if (spans_merge(&f.sp, &parts[i].aw.sp)) {
			rc = SQLITE_NOMEM;
			goto out;
		}
	/* Per communicator, the most calls a collective had. */
	for (size_t i = 0; i < f.sp.cap; i++) {
		const struct span_page *p = f.sp.slot[i];
		if (!p)
			continue;
		int64_t k[4] = { p->comm };
		uint32_t before = f.comms.n;
		int64_t c = idmap_get(&f.comms, k);
		if (c < 0) {
			rc = SQLITE_NOMEM;
			goto out;
		}
		if (f.comms.n != before) {
			int32_t *m = sqlite3_realloc64(
				f.most, (size_t)f.comms.n * sizeof(*m));
			if (!m) {
				rc = SQLITE_NOMEM;
				goto out;
			}
			f.most = m;
			m[c] = 0;
		}
		for (int j = 0; j < SPAN_SEQS; j++) {
			int32_t calls = (int32_t)(p->n[j] & N_COUNT);
			if (calls > f.most[c])
				f.most[c] = calls;
		}
	}
	if ((rc = skew_run(parts, n, 2, err)) != SQLITE_OK)
		goto out;
	for (int i = 0; i < n; i++)
		if (parts[i].redo) {
			*redo = 1;
			goto out;
		}
	/* A host in two parts: its blocks were not all met in one. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			for (int a = 0; a < parts[i].names.nnames; a++)
				for (int b = 0; b < parts[j].names.nnames; b++)
					if (!strcmp(parts[i].names.names[a],
						    parts[j].names.names[b])) {
						*again = 1;
						goto out;
					}
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += parts[i].groups.n;
	if (!(*rows = sqlite3_malloc64((total ? total : 1) * sizeof(**rows)))) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	size_t m = 0;
	for (int i = 0; i < n; i++) {
		struct skew_part *sk = &parts[i];
		for (uint32_t g = 0; g < sk->groups.n; g++) {
			const struct skew_acc *a = &sk->acc[g];
			const int64_t *k = sk->groups.key[g];
			if (!a->cnt)
				continue;
			int host = intern(l, sk->names.names[k[1]], -1);
			if (host < 0) {
				rc = SQLITE_NOMEM;
				goto out;
			}
			(*rows)[m++] = (struct skew_row){
				.comm = k[0], .host = host, .pid = k[2],
				.rank = k[3], .nranks = a->nranks,
				.n = most_of(sk, k[0]),
				.collectives = a->cnt, .last = a->last,
				.max_late = a->max,
				.mean_late = (double)a->sum / (double)a->cnt,
				.p99_late = (double)gr_hist__quantile(&a->h,
								      99),
				.has_host_late = a->hn > 0,
				.host_late = a->hn ? (double)a->hsum /
						     (double)a->hn : 0,
			};
		}
	}
	*nrows = m;
	rc = SQLITE_OK;
out:
	for (int i = 0; i < n; i++)
		skew_part_free(&parts[i]);
	sqlite3_free(parts);
	idmap_free(&f.comms);
	sqlite3_free(f.most);
	spans_free(&f.sp);
	return rc;
}

/* ---- nccl_rank_pace, from the arrivals kept per block --------------------
 *
 * Two walks of the blocks (each thread over whole --data directories, as
 * nccl_rank_skew's second).  A block is read from its arrivals where it
 * has them and lies in the window without --pid, else from its rows; the
 * first walk notes which, the second does the same.  The first counts
 * each rank's collectives and last seq, each process's time in NCCL calls
 * (the arrivals keep it per process and block, over calls of every op),
 * and the seq gaps between a process's repeats of one op and size into
 * per-pool counts, whose medians give each communicator's collectives per
 * iteration; the second pairs each process's entries that many seqs apart
 * into a histogram whose median is its iteration time (hist_quantile(x,
 * 50) in the SQL).  The pairs are made in order: each process's entries
 * must come with seqs ascending, one a seq (one rank a process).  A
 * recording where they do not (a process driving several ranks of one
 * communicator), an iteration of 65,536 collectives or more, or a host in
 * two directories is answered by the walk that holds every call
 * (rank_pace()), with the same answer. */

struct pace_rank {
	int64_t n, last;
};

/* A process's repeats of one op and size, and the pool its gaps go to
 * (its gaps below POOL_SMALL counted here, added to the pool at the end:
 * a record's ranks all count into one pool, a chain of increments of one
 * word). */
#define POOL_SMALL 64
struct pace_rep {
	int64_t last;
	int has;
	uint32_t pool;
	uint64_t n, small[POOL_SMALL];
};

/* Gaps of a pool (comm, op, bytes), counted by value. */
struct pace_pool {
	uint64_t small[POOL_SMALL];
	struct idmap big;		/* gap -> index into bigc */
	uint64_t *bigc;
	uint32_t capbig;
	uint64_t n;
	int64_t comm, bytes;
	int op;				/* into the part's names */
};

/* A process in a communicator: its last seq, and in the second walk its
 * entries of the last per + 1 seqs and the histogram of its iterations. */
struct pace_proc {
	int64_t last, per;
	int has;
	uint32_t mask;
	int64_t *rseq, *rts;
	struct gr_hist h;
	uint32_t *b;			/* bucket counts, as skew_acc's */
	int64_t n, min, max;
};

/* Counts iteration @v of process p. */
static inline int pace_count(struct pace_proc *p, int64_t v)
{
	if (v < p->min || !p->n)
		p->min = v;
	if (v > p->max || !p->n)
		p->max = v;
	p->n++;
	uint32_t *bc = &p->b[gr_hist_bucket(v)];
	if (++*bc >> 31) {
		int rc = gr_hist__add_count(&p->h, (uint32_t)(bc - p->b), *bc,
					    p->min, p->max);
		*bc = 0;
		return rc;
	}
	return 0;
}

struct pace_part {
	struct gr_qctx *q;
	int first, end;
	struct arr_walk aw;		/* seen: blocks read from arrivals */
	struct nccl_load names;		/* aw.l (unused) */
	struct nccl_load l;		/* hosts */
	struct nccl_load ops;
	int pass, hhint, ohint, err, bad;
	struct idmap ranks, reps, pools, procs, times;
	struct pace_rank *rk;
	struct pace_rep *rp;
	struct pace_pool *pl;
	struct pace_proc *pr;
	struct proc_time *tm;
	uint32_t caprk, caprp, cappl, cappr, captm;
	const struct idmap *pcomm;	/* second walk: comm -> per_iter */
	const int64_t *per;
	struct gr_arr arr;
	int64_t *ts;
	size_t capts;
	uint32_t *srk, *srp;
	int64_t *spr;
	size_t caps;
	uint8_t opok[1024];
	int opok_seg;
	char *msg;
	int rc;
};

static void pace_part_free(struct pace_part *pp)
{
	for (uint32_t i = 0; i < pp->pools.n; i++) {
		idmap_free(&pp->pl[i].big);
		sqlite3_free(pp->pl[i].bigc);
	}
	for (uint32_t i = 0; i < pp->procs.n; i++) {
		sqlite3_free(pp->pr[i].rseq);
		sqlite3_free(pp->pr[i].rts);
		sqlite3_free(pp->pr[i].b);
		gr_hist__free(&pp->pr[i].h);
	}
	idmap_free(&pp->ranks), idmap_free(&pp->reps);
	idmap_free(&pp->pools), idmap_free(&pp->procs);
	idmap_free(&pp->times);
	sqlite3_free(pp->rk), sqlite3_free(pp->rp), sqlite3_free(pp->pl);
	sqlite3_free(pp->pr), sqlite3_free(pp->tm);
	gr_arr__free(&pp->arr);
	sqlite3_free(pp->ts), sqlite3_free(pp->srk), sqlite3_free(pp->srp);
	sqlite3_free(pp->spr);
	sqlite3_free(pp->msg);
	load_free(&pp->l);
	load_free(&pp->ops);
	arr_walk_free(&pp->aw);
	load_free(&pp->names);
}

/* The ids of a call's rank, repeat and process (-1: a NULL pid) into
 * *rk, *rp, *pr.  Returns 0 or -ENOMEM. */
static int pace_ids(struct pace_part *pp, int64_t comm, int host, int op,
		    int64_t pid, int64_t rank, int64_t bytes, uint32_t *rk,
		    uint32_t *rp, int64_t *pr)
{
	int isnew;
	int64_t k[4] = { comm, host, pid, rank };
	int64_t g = id_val(&pp->ranks, k, (void **)&pp->rk, &pp->caprk,
			   sizeof(*pp->rk), &isnew);
	if (g < 0)
		return -ENOMEM;
	if (isnew)
		pp->rk[g].last = INT64_MIN;
	*rk = (uint32_t)g;
	int64_t kr[4] = { comm, (int64_t)host << 32 | (uint32_t)op, pid,
			  bytes };
	if ((g = id_val(&pp->reps, kr, (void **)&pp->rp, &pp->caprp,
			sizeof(*pp->rp), &isnew)) < 0)
		return -ENOMEM;
	*rp = (uint32_t)g;
	if (isnew) {
		int64_t kp[4] = { comm, op, bytes, 0 };
		int64_t p = id_val(&pp->pools, kp, (void **)&pp->pl,
				   &pp->cappl, sizeof(*pp->pl), &isnew);
		if (p < 0)
			return -ENOMEM;
		if (isnew) {
			pp->pl[p].comm = comm;
			pp->pl[p].op = op;
			pp->pl[p].bytes = bytes;
		}
		pp->rp[g].pool = (uint32_t)p;
	}
	*pr = -1;
	if (pid == NUL)
		return 0;
	int64_t kq[4] = { comm, host, pid, 0 };
	if ((g = id_val(&pp->procs, kq, (void **)&pp->pr, &pp->cappr,
			sizeof(*pp->pr), &isnew)) < 0)
		return -ENOMEM;
	if (isnew)
		pp->pr[g].per = -1;	/* no pairs until the second walk */
	*pr = g;
	return 0;
}

static int pool_add(struct pace_pool *p, int64_t gap)
{
	p->n++;
	if (gap < POOL_SMALL) {
		p->small[gap]++;
		return 0;
	}
	int isnew;
	int64_t k[4] = { gap };
	int64_t g = id_val(&p->big, k, (void **)&p->bigc, &p->capbig,
			   sizeof(*p->bigc), &isnew);
	if (g < 0)
		return -ENOMEM;
	p->bigc[g]++;
	return 0;
}

/* One collective's call (seq, entry ts) of rank rk, repeat rp and
 * process pr (-1: none), in the walk's order. */
static inline void pace_call(struct pace_part *pp, uint32_t rk, uint32_t rp,
			     int64_t pr, int64_t seq, int64_t ts)
{
	if (pp->pass == 1) {
		struct pace_rank *r = &pp->rk[rk];
		struct pace_rep *x = &pp->rp[rp];
		r->n++;
		if (seq > r->last)
			r->last = seq;
		if (x->has) {
			int64_t gap = seq - x->last;
			if (gap < 0) {
				pp->bad = 1;
			} else if (gap < POOL_SMALL) {
				x->small[gap]++;
				x->n++;
			} else if (pool_add(&pp->pl[x->pool], gap)) {
				pp->err = -ENOMEM;
			}
		}
		x->last = seq;
		x->has = 1;
		if (pr >= 0) {
			struct pace_proc *p = &pp->pr[pr];
			if (p->has && seq <= p->last)
				pp->bad = 1;
			p->last = seq;
			p->has = 1;
		}
		return;
	}
	if (pr < 0)
		return;
	struct pace_proc *p = &pp->pr[pr];
	if (p->per <= 0) {
		/* per 0 pairs a call with itself (one call a seq). */
		if (!p->per && pace_count(p, 0))
			pp->err = -ENOMEM;
		return;
	}
	int64_t want = seq - p->per;
	uint32_t i = (uint32_t)want & p->mask;
	if (p->rseq[i] == want && pace_count(p, ts - p->rts[i]))
		pp->err = -ENOMEM;
	i = (uint32_t)seq & p->mask;
	p->rseq[i] = seq;
	p->rts[i] = ts;
}

/* A process's call of any op: its time in NCCL calls. */
static int pace_time(struct pace_part *pp, int host, int64_t pid,
		     int64_t start, int has_dur, int64_t sumdur, int64_t end)
{
	int isnew;
	int64_t k[4] = { host, pid, 0, 0 };
	int64_t g = id_val(&pp->times, k, (void **)&pp->tm, &pp->captm,
			   sizeof(*pp->tm), &isnew);
	if (g < 0)
		return -ENOMEM;
	struct proc_time *t = &pp->tm[g];
	if (isnew || start < t->start)
		t->start = start;
	if (has_dur) {
		if (!t->has_dur || end > t->end)
			t->end = end;
		t->in_nccl += sumdur;
		t->has_dur = 1;
	}
	return 0;
}

/* Whether every op of a's slots names a collective in s's dictionary. */
static int pace_ops(struct pace_part *pp, struct gr_segment *s,
		    const struct gr_arr *a, int *ops)
{
	char *err = NULL;
	uint32_t len;

	if (gr_segment__load_dict(s, &err)) {
		free(err);
		return 0;
	}
	const struct gr_dict *d = gr_segment__dict(s);
	if (pp->opok_seg != pp->aw.lastseen) {
		memset(pp->opok, 0, sizeof(pp->opok));
		pp->opok_seg = pp->aw.lastseen;
	}
	for (uint32_t i = 0; i < a->nslot; i++) {
		int64_t id = a->slot[i].op;
		uint8_t *ok = id < (int64_t)sizeof(pp->opok) ? &pp->opok[id]
							    : NULL;
		if (ok && *ok == 2)
			return 0;
		const char *op = gr_dict__str(d, (uint32_t)id, &len);
		if (!ok || !*ok) {
			int good = op && is_collective(op);
			if (ok)
				*ok = good ? 1 : 2;
			if (!good)
				return 0;
		}
		if ((ops[i] = intern(&pp->ops, op, pp->ohint)) < 0)
			return -ENOMEM;
		pp->ohint = ops[i];
	}
	return 1;
}

/* Reads a block's arrivals [p, p + len) of the segment s (host h) into
 * the walk.  Returns 1, 0 where the block must be read from its rows (the
 * first walk: nothing taken), or -ENOMEM. */
static int pace_arrivals(struct pace_part *pp, struct gr_segment *s, int h,
			 const uint8_t *p, size_t len)
{
	struct gr_arr *a = &pp->arr;
	struct gr_qctx *q = pp->q;
	struct gr_arr_rec r;
	int rc = gr_arr__parse(a, p, len);

	if (rc)
		return rc == -ENOMEM ? -ENOMEM : 0;
	/* The block's own times, under their checksum, in the window. */
	for (uint32_t i = 0; i < a->nproc; i++)
		if (a->proc[i].min_ts < q->since || a->proc[i].max_ts > q->until)
			return 0;
	size_t cs = pp->caps;
	int *ops = sqlite3_malloc64((a->nslot ? a->nslot : 1) * sizeof(*ops));
	if (!ops ||
	    grow_to((void **)&pp->srk, &cs, a->nslot ? a->nslot : 1,
		    sizeof(*pp->srk)) ||
	    (cs = pp->caps, grow_to((void **)&pp->srp, &cs,
				     a->nslot ? a->nslot : 1,
				     sizeof(*pp->srp))) ||
	    (cs = pp->caps, grow_to((void **)&pp->spr, &cs,
				     a->nslot ? a->nslot : 1,
				     sizeof(*pp->spr))) ||
	    grow_to((void **)&pp->ts, &pp->capts, a->maxlen ? a->maxlen : 1,
		    sizeof(*pp->ts))) {
		sqlite3_free(ops);
		return -ENOMEM;
	}
	pp->caps = cs;
	if ((rc = pace_ops(pp, s, a, ops)) <= 0) {
		sqlite3_free(ops);
		return rc;
	}
	for (uint32_t i = 0; i < a->nslot; i++) {
		const struct gr_arr_slot *sl = &a->slot[i];
		if (pace_ids(pp, sl->comm, h, ops[i], sl->pid, sl->rank,
			     sl->bytes, &pp->srk[i], &pp->srp[i], &pp->spr[i])) {
			sqlite3_free(ops);
			return -ENOMEM;
		}
	}
	sqlite3_free(ops);
	if (pp->pass == 1)
		for (uint32_t i = 0; i < a->nproc; i++) {
			const struct gr_arr_proc *x = &a->proc[i];
			if (x->pid != NUL &&
			    pace_time(pp, h, x->pid, x->min_ts, x->has_dur,
				      x->sumdur, x->maxend))
				return -ENOMEM;
		}
	int64_t *ts = pp->pass == 2 ? pp->ts : NULL;
	while ((rc = gr_arr__next(a, &r, ts)) == 1)
		for (uint32_t j = 0; j < r.n; j++) {
			uint32_t sl = r.slots[j];
			pace_call(pp, pp->srk[sl], pp->srp[sl], pp->spr[sl],
				  r.seq, ts ? ts[j] : 0);
		}
	/* Half read: the walk that holds every call answers instead. */
	if (rc < 0)
		pp->bad = 1;
	return 1;
}

/* The skip test of both walks. */
static int pace_skip(void *ctx, struct gr_segment *s,
		     const struct gr_scan_hdr *h)
{
	struct pace_part *pp = ctx;
	struct arr_walk *aw = &pp->aw;
	struct gr_qctx *q = pp->q;
	const struct gr_segment_info *si = gr_segment__info(s);
	const uint8_t *p;
	size_t len;

	if (!pp->err && q->stop && q->stop())
		pp->err = -EINTR;
	if (pp->err || pp->bad)
		return 1;
	int64_t seen = seen_max(aw, si->path, pp->pass == 1 ? h->id : -1);
	if (seen == -2) {
		pp->err = -ENOMEM;
		return 1;
	}
	if (pp->pass == 2) {
		if (h->id > seen)
			return 1;
		__typeof__(aw->seen[0]) *e = &aw->seen[aw->lastseen];
		if (!(h->id < e->nbits && e->bits[h->id / 64] >> (h->id % 64) & 1))
			return 0;
	} else if (q->has_pid || h->ts_min < q->since || h->ts_max > q->until) {
		return 0;
	}
	/* The second walk reads a payload the first checked. */
	if (!gr_arr__payload(s, h->id, h->crc, pp->pass == 1, &p, &len)) {
		/* Gone since the first walk took it: start again. */
		if (pp->pass == 2)
			pp->bad = 1;
		return pp->pass == 2;
	}
	int hi = intern(&pp->l, si->host ? si->host : "", pp->hhint);
	int took = hi < 0 ? -ENOMEM : pace_arrivals(pp, s, hi, p, len);
	gr_arr__done(s);
	if (took < 0) {
		pp->err = took;
		return 1;
	}
	pp->hhint = hi;
	if (!took) {
		if (pp->pass == 2)
			pp->bad = 1;
		return pp->pass == 2;
	}
	if (pp->pass == 1 && seen_mark(aw, h->id))
		pp->err = -ENOMEM;
	__atomic_add_fetch(&q->coll_blocks_read, 1, __ATOMIC_RELAXED);
	return 1;
}

/* A row of a block read from its rows. */
static int pace_row_call(void *ctx, const struct coll_call *c)
{
	struct pace_part *pp = ctx;

	if (pp->err)
		return pp->err;
	if (pp->bad)
		return 0;
	int h = intern(&pp->l, c->host, pp->hhint);
	if (h < 0)
		return -ENOMEM;
	pp->hhint = h;
	if (pp->pass == 1 && c->pid != NUL &&
	    pace_time(pp, h, c->pid, c->ts, c->dur != NUL, c->dur,
		      c->dur != NUL ? c->ts + c->dur : 0))
		return -ENOMEM;
	if (!c->coll)
		return 0;
	int op = intern(&pp->ops, c->op, pp->ohint);
	if (op < 0)
		return -ENOMEM;
	pp->ohint = op;
	uint32_t rk, rp;
	int64_t pr;
	if (pace_ids(pp, c->comm, h, op, c->pid, c->rank, c->bytes, &rk, &rp,
		     &pr))
		return -ENOMEM;
	pace_call(pp, rk, rp, pr, c->seq, c->ts);
	return pp->err;
}

static int pace_walk(struct pace_part *pp)
{
	int rc = walk_calls(pp->q, pace_skip, pp, pace_row_call, pp,
			    pp->first, pp->end, 1, &pp->msg);
	if (rc == SQLITE_OK && pp->err)
		rc = gr_vtab__walk_error(pp->err, "nccl", &pp->msg);
	return pp->rc = rc;
}

static void *pace_main(void *arg)
{
	pace_walk(arg);
	return NULL;
}

/* Runs walk @pass of every part, the first on this thread. */
static int pace_run(struct pace_part *parts, int n, int pass, char **err)
{
	for (int i = 0; i < n; i++) {
		parts[i].pass = pass;
		parts[i].hhint = parts[i].ohint = -1;
	}
	run_parts(parts, sizeof(*parts), n, pace_main);
	for (int i = 0; i < n; i++)
		if (parts[i].rc != SQLITE_OK) {
			*err = parts[i].msg;
			parts[i].msg = NULL;
			return parts[i].rc;
		}
	return SQLITE_OK;
}

struct gapc {
	int64_t gap;
	uint64_t n;
};

static int cmp_gapc(const void *pa, const void *pb)
{
	const struct gapc *a = pa, *b = pb;
	return (a->gap > b->gap) - (a->gap < b->gap);
}

/* The value of rank @i (from 0) of the gaps counted in @small and
 * @big[0..nb) (sorted). */
static int64_t gap_at(const uint64_t *small, const struct gapc *big,
		      size_t nb, uint64_t i)
{
	for (int64_t g = 0; g < POOL_SMALL; g++) {
		if (i < small[g])
			return g;
		i -= small[g];
	}
	for (size_t j = 0; j < nb; j++) {
		if (i < big[j].n)
			return big[j].gap;
		i -= big[j].n;
	}
	return 0;
}

/* Per communicator of @comms, the longest median gap of its pools, over
 * every part (pools keyed by op name): *best, *has.  Returns 0 or
 * -ENOMEM. */
static int pace_medians(struct pace_part *parts, int n, struct idmap *comms,
			double **best, uint8_t **has)
{
	struct nccl_load ops = {0};
	struct idmap pools = {0};
	struct { uint64_t small[POOL_SMALL]; struct gapc *big; size_t nb, cap;
		 uint64_t n; int64_t comm; } *g = NULL;
	uint32_t capg = 0;
	int rc = -ENOMEM;

	for (int i = 0; i < n; i++) {
		struct pace_part *pp = &parts[i];
		/* The repeats' small gaps into their pools. */
		for (uint32_t j = 0; j < pp->reps.n; j++) {
			struct pace_rep *x = &pp->rp[j];
			struct pace_pool *p = &pp->pl[x->pool];
			p->n += x->n;
			for (int v = 0; v < POOL_SMALL; v++)
				p->small[v] += x->small[v];
			x->n = 0;
			memset(x->small, 0, sizeof(x->small));
		}
		for (uint32_t j = 0; j < pp->pools.n; j++) {
			const struct pace_pool *p = &pp->pl[j];
			int op = intern(&ops, pp->ops.names[p->op], -1), isnew;
			if (op < 0)
				goto out;
			int64_t k[4] = { p->comm, op, p->bytes, 0 };
			int64_t x = id_val(&pools, k, (void **)&g, &capg,
					   sizeof(*g), &isnew);
			if (x < 0)
				goto out;
			g[x].comm = p->comm;
			g[x].n += p->n;
			for (int v = 0; v < POOL_SMALL; v++)
				g[x].small[v] += p->small[v];
			for (uint32_t b = 0; b < p->big.n; b++) {
				if (grow_to((void **)&g[x].big, &g[x].cap,
					    g[x].nb + 1, sizeof(*g[x].big)))
					goto out;
				g[x].big[g[x].nb++] = (struct gapc){
					.gap = p->big.key[b][0], .n = p->bigc[b],
				};
			}
		}
	}
	*best = sqlite3_malloc64((comms->n ? comms->n : 1) * sizeof(**best));
	*has = gr_sq_calloc(comms->n ? comms->n : 1, 1);
	if (!*best || !*has)
		goto out;
	for (uint32_t x = 0; x < pools.n; x++) {
		if (!g[x].n)
			continue;
		int64_t k[4] = { g[x].comm };
		int64_t c = idmap_find(comms, k);
		if (c < 0)
			continue;
		/* Equal gaps from two parts: one entry each, in order. */
		if (g[x].nb)
			qsort(g[x].big, g[x].nb, sizeof(*g[x].big), cmp_gapc);
		size_t m = 0;
		for (size_t j = 0; j < g[x].nb; j++) {
			if (m && g[x].big[m - 1].gap == g[x].big[j].gap)
				g[x].big[m - 1].n += g[x].big[j].n;
			else
				g[x].big[m++] = g[x].big[j];
		}
		/* median() of aggregates.c: pct() over the sorted gaps. */
		double ix = 0.5 * (double)(g[x].n - 1);
		uint64_t i1 = (uint64_t)ix;
		uint64_t i2 = (ix == (double)i1 || i1 == g[x].n - 1) ? i1 : i1 + 1;
		double v1 = (double)gap_at(g[x].small, g[x].big, m, i1);
		double v2 = (double)gap_at(g[x].small, g[x].big, m, i2);
		double med = v1 + (v2 - v1) * (ix - (double)i1);
		if (!(*has)[c] || med > (*best)[c]) {
			(*best)[c] = med;
			(*has)[c] = 1;
		}
	}
	rc = 0;
out:
	for (uint32_t x = 0; x < pools.n; x++)
		sqlite3_free(g[x].big);
	sqlite3_free(g);
	idmap_free(&pools);
	load_free(&ops);
	return rc;
}

/* nccl_rank_pace(param) from the arrivals, on @threads threads (0:
 * gr_vtab__walkers()): SQLITE_OK with @l's names, *rows (*nrows) and
 * *times (one a row) filled, or *again set where it must be asked again
 * on one thread (a host in two parts) or *fallback where the walk that
 * holds every call must answer (nothing filled then); or an SQLite error
 * code with *err set. */
static int pace_fast(struct gr_qctx *q, int64_t param, int threads,
		     struct nccl_load *l, struct pace_row **rows,
		     size_t *nrows, struct proc_time **times, int *again,
		     int *fallback, char **err)
{
	struct pace_part *parts = NULL;
	struct idmap comms = {0};
	int64_t *per = NULL, *last = NULL;
	double *best = NULL;
	uint8_t *has = NULL;
	int n, cut[65], rc;

	*again = *fallback = 0;
	*rows = NULL;
	*times = NULL;
	if (!(n = threads ? threads : gr_vtab__walkers())) {
		*err = sqlite3_mprintf("GPUREC_SCAN_THREADS=%s: not a number "
				       "from 1 to 64",
				       getenv("GPUREC_SCAN_THREADS"));
		return SQLITE_ERROR;
	}
	n = skew_split(q, n, cut);
	if (!(parts = gr_sq_calloc((size_t)n, sizeof(*parts))))
		return SQLITE_NOMEM;
	for (int i = 0; i < n; i++) {
		struct pace_part *pp = &parts[i];
		*pp = (struct pace_part){
			.q = q, .first = cut[i], .end = cut[i + 1],
			.opok_seg = -1,
			.aw = { .q = q, .lastseen = -1, .opok_seg = -1 },
		};
		pp->aw.l = &pp->names;
	}
	if ((rc = pace_run(parts, n, 1, err)) != SQLITE_OK)
		goto out;
	/* A host's processes must meet in one part. */
	for (int i = 0; i < n; i++) {
		if (parts[i].bad) {
			*fallback = 1;
			goto out;
		}
		for (int j = 0; j < i; j++)
			for (int a = 0; a < parts[i].l.nnames; a++)
				for (int b = 0; b < parts[j].l.nnames; b++)
					if (!strcmp(parts[i].l.names[a],
						    parts[j].l.names[b])) {
						*again = 1;
						goto out;
					}
	}
	/* Per communicator: its last seq and collectives per iteration. */
	for (int i = 0; i < n; i++)
		for (uint32_t g = 0; g < parts[i].ranks.n; g++) {
			int64_t k[4] = { parts[i].ranks.key[g][0] };
			uint32_t before = comms.n;
			int64_t c = idmap_get(&comms, k);
			if (c < 0)
				goto nomem;
			if (comms.n != before) {
				int64_t *v = sqlite3_realloc64(
					last, (size_t)comms.n * sizeof(*v));
				if (!v)
					goto nomem;
				last = v;
				last[c] = INT64_MIN;
			}
			if (parts[i].rk[g].last > last[c])
				last[c] = parts[i].rk[g].last;
		}
	if (pace_medians(parts, n, &comms, &best, &has) ||
	    !(per = sqlite3_malloc64((comms.n ? comms.n : 1) * sizeof(*per))))
		goto nomem;
	for (uint32_t c = 0; c < comms.n; c++) {
		/* CAST(round(max(m)) AS INTEGER): half away from 0. */
		per[c] = !has[c] ? NUL : param > 0 ? param :
			 (int64_t)(best[c] + 0.5);
		if (per[c] != NUL && per[c] >= 65536) {
			*fallback = 1;
			goto out;
		}
	}
	/* Each process's ring of entries: the last per + 1 seqs. */
	for (int i = 0; i < n; i++) {
		struct pace_part *pp = &parts[i];
		for (uint32_t g = 0; g < pp->procs.n; g++) {
			struct pace_proc *p = &pp->pr[g];
			int64_t k[4] = { pp->procs.key[g][0] };
			int64_t c = idmap_find(&comms, k);
			p->per = c < 0 || per[c] == NUL ? -1 : per[c];
			if (p->per < 0)
				continue;
			uint32_t size = 1;
			while (size <= (uint32_t)p->per)
				size *= 2;
			p->mask = size - 1;
			p->rseq = sqlite3_malloc64(size * sizeof(*p->rseq));
			p->rts = sqlite3_malloc64(size * sizeof(*p->rts));
			p->b = gr_sq_calloc(GR_HIST_NBUCKETS, sizeof(*p->b));
			if (!p->rseq || !p->rts || !p->b)
				goto nomem;
			for (uint32_t j = 0; j < size; j++)
				p->rseq[j] = INT64_MIN;
		}
	}
	if ((rc = pace_run(parts, n, 2, err)) != SQLITE_OK)
		goto out;
	for (int i = 0; i < n; i++)
		if (parts[i].bad) {
			*fallback = 1;
			goto out;
		}
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += parts[i].ranks.n;
	*rows = sqlite3_malloc64((total ? total : 1) * sizeof(**rows));
	*times = sqlite3_malloc64((total ? total : 1) * sizeof(**times));
	if (!*rows || !*times)
		goto nomem;
	size_t m = 0;
	for (int i = 0; i < n; i++) {
		struct pace_part *pp = &parts[i];
		for (uint32_t g = 0; g < pp->ranks.n; g++) {
			const int64_t *k = pp->ranks.key[g];
			if (!pp->rk[g].n)
				continue;
			int64_t ck[4] = { k[0] };
			int64_t c = idmap_find(&comms, ck);
			int host = intern(l, pp->l.names[k[1]], -1);
			struct pace_row *r = &(*rows)[m];
			if (host < 0 || c < 0)
				goto nomem;
			*r = (struct pace_row){
				.comm = k[0], .host = host, .pid = k[2],
				.rank = k[3], .collectives = pp->rk[g].n,
				.last_seq = pp->rk[g].last,
				.comm_last = last[c], .per_iter = per[c],
			};
			if (k[2] != NUL) {
				int64_t pk[4] = { k[0], k[1], k[2], 0 };
				int64_t tk[4] = { k[1], k[2], 0, 0 };
				int64_t p = idmap_find(&pp->procs, pk);
				int64_t t = idmap_find(&pp->times, tk);
				struct pace_proc *x = p >= 0 ? &pp->pr[p]
							      : NULL;
				if (x && x->n) {
					for (uint32_t b = 0;
					     b < GR_HIST_NBUCKETS; b++)
						if (x->b[b] &&
						    gr_hist__add_count(
							    &x->h, b, x->b[b],
							    x->min, x->max))
							goto nomem;
					/* NULL below 0, as the SQL's. */
					int64_t v = gr_hist__quantile(&x->h,
								      50);
					r->has_iter = v >= 0;
					r->iter_ns = (double)v;
				}
				if (t >= 0) {
					(*times)[m] = pp->tm[t];
					r->t = &(*times)[m];
				}
			}
			m++;
		}
	}
	*nrows = m;
	rc = SQLITE_OK;
	goto out;
nomem:
	rc = SQLITE_NOMEM;
out:
	if (rc != SQLITE_OK || *again || *fallback) {
		sqlite3_free(*rows);
		sqlite3_free(*times);
		*rows = NULL;
		*times = NULL;
	}
	for (int i = 0; i < n; i++)
		pace_part_free(&parts[i]);
	sqlite3_free(parts);
	idmap_free(&comms);
	sqlite3_free(per), sqlite3_free(last), sqlite3_free(best);
	sqlite3_free(has);
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
	if (v->t == T_SKEW) {
		int again = 0, redo = 0, threads = 0, strict = 0;
		for (int tries = 0; tries < 3; tries++) {
			rc = skew_ranks(v->q, threads, strict, &c->l, &c->skew,
					&c->n, &again, &redo, &err);
			if (rc != SQLITE_OK || (!again && !redo))
				break;
			threads = again ? 1 : threads;
			strict |= redo;
		}
		if (rc == SQLITE_OK && (again || redo)) {
			/* Arrivals gone between the walks, twice. */
			err = sqlite3_mprintf("nccl: the recording changed "
					      "while it was read; run the "
					      "query again");
			rc = SQLITE_ERROR;
		}
		if (rc != SQLITE_OK) {
			sqlite3_free(v->base.zErrMsg);
			v->base.zErrMsg = err;
		}
		return rc;
	}
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
	if (v->t == T_PACE) {
		/* Like :per_iter > 0 in the SQL: only a positive integer. */
		int64_t param = idx == 1 && argc == 1 &&
				sqlite3_value_type(argv[0]) == SQLITE_INTEGER ?
				sqlite3_value_int64(argv[0]) : 0;
		int again, fallback;
		rc = pace_fast(v->q, param, 0, &c->l, &c->pace, &c->n,
			       &c->times, &again, &fallback, &err);
		if (rc == SQLITE_OK && again)
			rc = pace_fast(v->q, param, 1, &c->l, &c->pace, &c->n,
				       &c->times, &again, &fallback, &err);
		if (rc != SQLITE_OK) {
			sqlite3_free(v->base.zErrMsg);
			v->base.zErrMsg = err;
			return rc;
		}
		if (!fallback)
			return SQLITE_OK;
		cursor_reset(c);
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
