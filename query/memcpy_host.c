/* memcpy_host.c - memcpy-sync and memcpy-pageable in one pass over the
 * copies, in C, instead of SQLite window functions and joins.
 *
 * Both reports classify each copy's host side(s) against the allocations
 * the recording saw (cuda_mem): pinned, managed, device, or pageable where
 * no live allocation holds the pointer.  Written as SQL (the reports'
 * --raw halves, kept unchanged as the reference), that materializes every
 * copy, joins each host pointer with every address range ever allocated
 * around it, numbers allocations with a window, and sorts every listed
 * copy again for a row_number() window and the LIMIT: over a busy day
 * (~24 million copies) more than 30 s.  Here allocations, which are rare,
 * are read first (through the cuda_mem table, so --since, --until, --pid
 * and --host hold as for any query) into per-(pid, base) lists sorted by
 * time; then the copies are walked once, each host pointer is looked up
 * by binary search, and each copy is folded into its group's sums and
 * offered to a bounded heap of the longest calls.  No copy is kept:
 * memory is the allocations, the groups and :limit calls.  The copies
 * come from a direct walk of cuda_memcpy's blocks (vt_event.h: the rows
 * the table gives, under the same window, --pid and --host, without
 * SQLite's calls per row and column, which cost more than the rest of
 * the pass: over a busy hour 2.6 s through SQL).
 *
 * Two eponymous table-valued functions, whose rows are the reports' rows
 * before their final ORDER BY (the reports sort them as --raw does):
 *
 *  memcpy_blocking(limit)        'thread' rows per (pid, tid, blocking)
 *                                and the limit longest 'call' rows, as
 *                                memcpy-sync;
 *  memcpy_pageable(sync, limit)  'sum' rows per (pid, api, kind) and the
 *                                limit longest 'call' rows, as
 *                                memcpy-pageable (src and dst as numbers:
 *                                the report formats them).
 *
 * A limit left out or negative lists every call (as LIMIT -1 would); a
 * sync left out reads async copies only.
 *
 * Exactness, rule by rule as the SQL has it:
 *  - an allocation is a cuda_mem row with (ret IS NULL OR ret = 0), ptr
 *    not NULL nor 0, op = 'alloc' and bytes > 0: [ptr, ptr + bytes),
 *    live from its ts until the ts of the next such row of any op on the
 *    same (pid, ptr) (NULL: never ends).  Memory: pinned for the six
 *    pinning APIs, managed where api ends in "managed" in any ASCII case
 *    (LIKE '%Managed'), else device;
 *  - a copy's host sides: src for a NULL kind, H2D, H2H and default; dst
 *    for a NULL kind, D2H, H2H and default; a NULL or 0 pointer is none;
 *  - a pointer p of process pid at ts is held by base lo if some
 *    allocation ever made at (pid, lo) covered p, and the last allocation
 *    at (pid, lo) made strictly before ts (an allocation at the copy's own
 *    ts does not count) still covers p and lives past ts.  A NULL pid
 *    matches nothing (the SQL joins on pid =).  Where two bases hold one
 *    pointer (overlapping live ranges: not seen from real CUDA), the SQL's
 *    scalar subquery takes either; here the highest base wins.  Where two
 *    rows of one (pid, ptr) share a ts, the SQL's order between them is
 *    undefined; here it is the read order;
 *  - sums and max ignore NULL durations and bytes and are NULL if all
 *    are; errors counts ret not NULL and not 0; comm is the least
 *    (BINARY); a thread row's ts is that of its longest call (a NULL
 *    duration last), ties by earliest ts; calls are the limit first by
 *    dur DESC (NULL last), ts, then read order where the SQL's order is
 *    undefined.  memcpy-pageable's bare async column takes, as SQLite
 *    does beside min(), the row that set min(comm) (the last of leading
 *    NULL comms until one is not NULL), which depends on row order only
 *    where one group mixes async values;
 *  - integers stay int64: sums past 2^63 (which SQLite reports as an
 *    overflow) and ptr + bytes past 2^63 are outside this, and
 *    INT64_MIN stands for NULL in numeric columns.
 *
 * Every allocation goes through SQLite's allocator, so --max-memory caps
 * these tables as it caps SQLite's own sorts.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "query/memcpy_host.h"
#include "query/sqlmem.h"
#include "query/vt_event.h"

/* A NULL integer. */
#define NUL GR_SQ_NULL

/* Host memory, in the order host_mem prefers it. */
enum mem { M_NONE, M_DEVICE, M_MANAGED, M_PINNED, M_PAGEABLE };

static const char *const mem_name[] = {
	[M_NONE] = NULL, [M_DEVICE] = "device", [M_MANAGED] = "managed",
	[M_PINNED] = "pinned", [M_PAGEABLE] = "pageable",
};

/* Grows *@p (of *@cap elements of @size) to hold @need. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = sqlite3_realloc64(*p, (sqlite3_uint64)c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* ---- Interned strings (comm, api, kind): id, or -1 for NULL. ---- */

struct strtab {
	char **s;
	size_t n, cap;
	int32_t *slot;		/* id + 1, 0 where empty */
	size_t nslot;		/* 0 or a power of two */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		sqlite3_free(t->s[i]);
	sqlite3_free(t->s);
	sqlite3_free(t->slot);
	memset(t, 0, sizeof(*t));
}

/* Returns the id of @s (NULL: -1), adding it if new, or -2 (ENOMEM). */
static int32_t intern(struct strtab *t, const char *s)
{
	size_t i;

	if (!s)
		return -1;
	if (2 * (t->n + 1) > t->nslot) {
		size_t ns = t->nslot ? 2 * t->nslot : 256;
		int32_t *slot = gr_sq_calloc(ns, sizeof(*slot));
		if (!slot)
			return -2;
		for (size_t k = 0; k < t->n; k++) {
			for (i = str_hash(t->s[k]) & (ns - 1); slot[i];
			     i = (i + 1) & (ns - 1))
				;
			slot[i] = (int32_t)k + 1;
		}
		sqlite3_free(t->slot);
		t->slot = slot;
		t->nslot = ns;
	}
	for (i = str_hash(s) & (t->nslot - 1); t->slot[i];
	     i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->s[t->slot[i] - 1], s))
			return t->slot[i] - 1;
	if (grow((void **)&t->s, &t->cap, t->n + 1, sizeof(*t->s)))
		return -2;
	size_t len = strlen(s) + 1;
	if (!(t->s[t->n] = sqlite3_malloc64(len)))
		return -2;
	memcpy(t->s[t->n], s, len);
	t->slot[i] = (int32_t)t->n + 1;
	return (int32_t)t->n++;
}

/* ---- Allocations ---- */

/* One row of cuda_mem that ends an earlier one's life (any op), or an
 * allocation. */
struct memrow {
	int64_t pid, ptr, ts, hi, until;	/* until: NUL if none */
	uint32_t seq;				/* read order */
	uint8_t alloc;				/* an allocation */
	uint8_t mem;				/* enum mem */
};

/* The allocations at one (pid, base), oldest first. */
struct base {
	int64_t pid, lo, maxhi;	/* maxhi: the highest end ever */
	int64_t pmax;		/* max of maxhi over this pid's bases to here */
	size_t first, n;	/* into the allocation array */
};

struct allocs {
	struct memrow *a;	/* allocations, by (pid, ptr, ts) */
	size_t n;
	struct base *b;		/* by (pid, lo) */
	size_t nb;
};

static void allocs_free(struct allocs *al)
{
	sqlite3_free(al->a);
	sqlite3_free(al->b);
	memset(al, 0, sizeof(*al));
}

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

static int cmp_memrow(const void *pa, const void *pb)
{
	const struct memrow *a = pa, *b = pb;

	CMP(a->pid, b->pid);
	CMP(a->ptr, b->ptr);
	CMP(a->ts, b->ts);
	CMP(a->seq, b->seq);
	return 0;
}

static enum mem api_mem(const char *api)
{
	static const char *const pinned[] = {
		"cudaMallocHost", "cudaHostAlloc", "cudaHostRegister",
		"cuMemAllocHost_v2", "cuMemHostAlloc", "cuMemHostRegister_v2",
	};
	size_t n;

	if (!api)
		return M_DEVICE;
	for (size_t i = 0; i < sizeof(pinned) / sizeof(*pinned); i++)
		if (!strcmp(api, pinned[i]))
			return M_PINNED;
	n = strlen(api);
	/* LIKE '%Managed': ASCII case folded, as SQLite's LIKE does. */
	if (n >= 7 && !strcasecmp(api + n - 7, "managed"))
		return M_MANAGED;
	return M_DEVICE;
}

/* Reads cuda_mem into @al.  Returns SQLITE_OK or an error code with *err
 * set. */
static int load_allocs(sqlite3 *db, struct allocs *al, char **err)
{
	static const char sql[] =
		"SELECT pid, ts, op, api, ptr, bytes FROM cuda_mem "
		"WHERE (ret IS NULL OR ret = 0) AND ptr IS NOT NULL "
		"AND ptr != 0";
	struct memrow *r = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return rc;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = gr_sq_col_int(st, 0);
		if (pid == NUL) /* joined on pid =: never matches */
			continue;
		if (grow((void **)&r, &cap, n + 1, sizeof(*r))) {
			rc = SQLITE_NOMEM;
			break;
		}
		const char *op = (const char *)sqlite3_column_text(st, 2);
		int64_t bytes = gr_sq_col_int(st, 5);
		struct memrow *m = &r[n];
		memset(m, 0, sizeof(*m));
		m->pid = pid;
		m->ts = sqlite3_column_int64(st, 1);
		m->ptr = sqlite3_column_int64(st, 4);
		m->seq = (uint32_t)n;
		m->alloc = op && !strcmp(op, "alloc") && bytes != NUL &&
			   bytes > 0;
		if (m->alloc) {
			if (__builtin_add_overflow(m->ptr, bytes, &m->hi))
				m->hi = INT64_MAX;
			m->mem = (uint8_t)api_mem(
				(const char *)sqlite3_column_text(st, 3));
		}
		n++;
	}
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	else if (rc == SQLITE_NOMEM)
		*err = sqlite3_mprintf("out of memory reading cuda_mem");
	else
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		sqlite3_free(r);
		return rc;
	}
	if (n > 1) /* qsort's array may not be NULL, even empty */
		qsort(r, n, sizeof(*r), cmp_memrow);
	/* until: the next row on the same (pid, ptr); then keep only the
	 * allocations, in the same order. */
	size_t k = 0, nb = 0;
	for (size_t i = 0; i < n; i++) {
		r[i].until = i + 1 < n && r[i + 1].pid == r[i].pid &&
			     r[i + 1].ptr == r[i].ptr ? r[i + 1].ts : NUL;
		if (!r[i].alloc)
			continue;
		if (!k || r[k - 1].pid != r[i].pid || r[k - 1].ptr != r[i].ptr)
			nb++;
		r[k++] = r[i];
	}
	al->a = r;
	al->n = k;
	if (!(al->b = gr_sq_calloc(nb, sizeof(*al->b)))) {
		*err = sqlite3_mprintf("out of memory reading cuda_mem");
		return SQLITE_NOMEM;
	}
	for (size_t i = 0; i < k; i++) {
		struct base *b = al->nb ? &al->b[al->nb - 1] : NULL;
		if (!b || b->pid != r[i].pid || b->lo != r[i].ptr) {
			b = &al->b[al->nb++];
			b->pid = r[i].pid;
			b->lo = r[i].ptr;
			b->maxhi = r[i].hi;
			b->first = i;
		}
		b->n++;
		if (r[i].hi > b->maxhi)
			b->maxhi = r[i].hi;
	}
	for (size_t i = 0; i < al->nb; i++) {
		struct base *b = &al->b[i];
		b->pmax = b->maxhi;
		if (i && b[-1].pid == b->pid && b[-1].pmax > b->pmax)
			b->pmax = b[-1].pmax;
	}
	return SQLITE_OK;
}

/* The memory holding pointer @p of process @pid at @ts. */
static enum mem classify(const struct allocs *al, int64_t pid, int64_t p,
			 int64_t ts)
{
	size_t lo = 0, hi = al->nb;

	if (pid == NUL)
		return M_PAGEABLE;
	/* The first base after (pid, p). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct base *b = &al->b[mid];
		if (b->pid < pid || (b->pid == pid && b->lo <= p))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Every base at or below p whose ranges ever reached past p,
	 * highest first: pmax says when none below can. */
	for (size_t j = lo; j-- > 0;) {
		const struct base *b = &al->b[j];
		if (b->pid != pid || b->pmax <= p)
			break;
		if (b->maxhi <= p)
			continue;
		/* The allocations at this base made before ts. */
		const struct memrow *a = &al->a[b->first];
		size_t l = 0, h = b->n;
		while (l < h) {
			size_t mid = l + (h - l) / 2;
			if (a[mid].ts < ts)
				l = mid + 1;
			else
				h = mid;
		}
		if (!l)
			continue;
		const struct memrow *last = &a[l - 1];
		if (p < last->hi && (last->until == NUL || last->until > ts))
			return (enum mem)last->mem;
	}
	return M_PAGEABLE;
}

/* ---- Groups and calls ---- */

/* One group's sums: (pid, tid, why) or (pid, api, kind). */
struct group {
	int64_t key[3];
	int64_t copies, bytes, dur, max, errors;	/* NUL: no value */
	int64_t best_dur, best_ts;	/* the longest call (dur NUL last) */
	int64_t async;			/* beside min(comm) */
	int32_t comm;			/* -1: none yet */
	uint8_t comm_set;		/* a non-NULL comm was seen */
};

struct groups {
	struct group *g;
	size_t n, cap;
	uint32_t *slot;		/* index + 1 */
	size_t nslot;
};

static uint64_t key_hash(const int64_t k[3])
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 3; i++) {
		h ^= (uint64_t)k[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static void groups_free(struct groups *gs)
{
	sqlite3_free(gs->g);
	sqlite3_free(gs->slot);
	memset(gs, 0, sizeof(*gs));
}

/* Returns the group of @k, new ones zeroed, or NULL (ENOMEM). */
static struct group *group_get(struct groups *gs, const int64_t k[3])
{
	size_t i;

	if (2 * (gs->n + 1) > gs->nslot) {
		size_t ns = gs->nslot ? 2 * gs->nslot : 1024;
		uint32_t *slot = gr_sq_calloc(ns, sizeof(*slot));
		if (!slot)
			return NULL;
		for (size_t x = 0; x < gs->n; x++) {
			for (i = key_hash(gs->g[x].key) & (ns - 1); slot[i];
			     i = (i + 1) & (ns - 1))
				;
			slot[i] = (uint32_t)x + 1;
		}
		sqlite3_free(gs->slot);
		gs->slot = slot;
		gs->nslot = ns;
	}
	for (i = key_hash(k) & (gs->nslot - 1); gs->slot[i];
	     i = (i + 1) & (gs->nslot - 1)) {
		struct group *g = &gs->g[gs->slot[i] - 1];
		if (g->key[0] == k[0] && g->key[1] == k[1] &&
		    g->key[2] == k[2])
			return g;
	}
	if (grow((void **)&gs->g, &gs->cap, gs->n + 1, sizeof(*gs->g)))
		return NULL;
	struct group *g = &gs->g[gs->n];
	memset(g, 0, sizeof(*g));
	memcpy(g->key, k, sizeof(g->key));
	g->bytes = g->dur = g->max = NUL;
	g->comm = -1;
	gs->slot[i] = (uint32_t)gs->n + 1;
	gs->n++;
	return g;
}

/* One copy, as listed. */
struct call {
	int64_t pid, tid, ts, dur, bytes, async, src, dst;
	uint64_t seq;
	int32_t comm, api, kind;
	uint8_t err, why, host_mem;
};

/* Whether @a lists before @b: dur DESC (NULL last), ts, read order. */
static int before(const struct call *a, const struct call *b)
{
	if (a->dur != b->dur) {
		if (a->dur == NUL || b->dur == NUL)
			return b->dur == NUL;
		return a->dur > b->dur;
	}
	if (a->ts != b->ts)
		return a->ts < b->ts;
	return a->seq < b->seq;
}

static int cmp_call(const void *pa, const void *pb)
{
	const struct call *a = pa, *b = pb;

	return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* The first @limit calls (all if limit < 0): while full, a heap whose
 * root lists last. */
struct top {
	struct call *c;
	size_t n, cap;
	int64_t limit;
};

static void sift_down(struct call *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < n && before(&h[w], &h[l]))
			w = l;
		if (r < n && before(&h[w], &h[r]))
			w = r;
		if (w == i)
			return;
		struct call t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

static void sift_up(struct call *h, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		if (!before(&h[p], &h[i]))
			return;
		struct call t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

static int top_offer(struct top *t, const struct call *c)
{
	if (t->limit >= 0 && t->n == (uint64_t)t->limit) {
		if (!t->n || !before(c, &t->c[0]))
			return 0;
		t->c[0] = *c;
		sift_down(t->c, t->n, 0);
		return 0;
	}
	if (grow((void **)&t->c, &t->cap, t->n + 1, sizeof(*t->c)))
		return -ENOMEM;
	t->c[t->n] = *c;
	if (t->limit >= 0)
		sift_up(t->c, t->n);
	t->n++;
	return 0;
}

/* ---- The tables ---- */

enum mh_table { T_BLOCKING, T_PAGEABLE };

static const char *const table_ddl[] = {
	[T_BLOCKING] = "CREATE TABLE x(section TEXT, pid INTEGER, "
		       "tid INTEGER, comm TEXT, blocking TEXT, api TEXT, "
		       "kind TEXT, host_mem TEXT, copies INTEGER, "
		       "bytes INTEGER, blocked_ns INTEGER, max_ns INTEGER, "
		       "errors INTEGER, ts INTEGER, lim HIDDEN INTEGER)",
	[T_PAGEABLE] = "CREATE TABLE x(section TEXT, pid INTEGER, "
		       "tid INTEGER, comm TEXT, api TEXT, kind TEXT, "
		       "async INTEGER, copies INTEGER, bytes INTEGER, "
		       "total_ns INTEGER, max_ns INTEGER, errors INTEGER, "
		       "src INTEGER, dst INTEGER, ts INTEGER, "
		       "sync HIDDEN INTEGER, lim HIDDEN INTEGER)",
};

/* The hidden columns, and the bits of idxNum saying which were given. */
static const int hidden_col[][2] = {
	[T_BLOCKING] = { -1, 14 },
	[T_PAGEABLE] = { 15, 16 },
};

static const char *const why_name[] = { "sync API", "async on pageable" };

struct mh_vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	struct gr_qctx *q;
	enum mh_table t;
};

struct mh_cursor {
	sqlite3_vtab_cursor base;
	struct allocs al;
	struct strtab names;
	struct groups gs;
	struct top top;
	size_t i;		/* groups first, then calls */
};

static int mh_connect(sqlite3 *db, void *aux, int argc,
		      const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)argc, (void)argv, (void)err;
	const struct gr_vtab_aux *ax = aux;
	enum mh_table t = (enum mh_table)ax->t;
	int rc = sqlite3_declare_vtab(db, table_ddl[t]);
	struct mh_vtab *v;

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

static int mh_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static int mh_best_index(sqlite3_vtab *vt, sqlite3_index_info *ii)
{
	enum mh_table t = ((struct mh_vtab *)vt)->t;
	int use[2] = { -1, -1 };

	ii->estimatedCost = 1e6;
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		for (int h = 0; h < 2; h++) {
			if (hidden_col[t][h] < 0 ||
			    c->iColumn != hidden_col[t][h])
				continue;
			/* The arguments are no filter: any other use of
			 * them would answer wrongly, so refuse the plan. */
			if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || !c->usable)
				return SQLITE_CONSTRAINT;
			use[h] = i;
		}
	}
	int argv = 0;
	ii->idxNum = 0;
	for (int h = 0; h < 2; h++) {
		if (use[h] < 0)
			continue;
		ii->aConstraintUsage[use[h]].argvIndex = ++argv;
		ii->aConstraintUsage[use[h]].omit = 1;
		ii->idxNum |= 1 << h;
	}
	return SQLITE_OK;
}

static int mh_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct mh_cursor *c = gr_sq_calloc(1, sizeof(*c));

	(void)v;
	if (!c)
		return SQLITE_NOMEM;
	*out = &c->base;
	return SQLITE_OK;
}

static void cursor_reset(struct mh_cursor *c)
{
	allocs_free(&c->al);
	strtab_free(&c->names);
	groups_free(&c->gs);
	sqlite3_free(c->top.c);
	memset(&c->top, 0, sizeof(c->top));
	c->i = 0;
}

static int mh_close(sqlite3_vtab_cursor *cur)
{
	struct mh_cursor *c = (struct mh_cursor *)cur;

	cursor_reset(c);
	sqlite3_free(c);
	return SQLITE_OK;
}

/* Whether a copy of @kind may have host memory on the side that direction
 * @a has on the host (H2D: the source, D2H: the destination): a copy of
 * that direction, H2H, cudaMemcpyDefault, or of no known kind. */
static int is_side(const char *kind, const char *a)
{
	return !kind || !strcmp(kind, a) || !strcmp(kind, "H2H") ||
	       !strcmp(kind, "default");
}

/* Merges group @b into @a, as folding b's rows after a's would (the
 * comm ids of both in @names): NULL-aware sums and max; the longest call
 * as row_number() = 1 by dur DESC (NULL last), ts, the earlier on a tie;
 * min(comm), and the bare async beside it, as SQLite's min() step loads
 * the row: while no comm is set, every row's; then a strictly less
 * comm's. */
static void group_merge(struct group *a, const struct group *b,
			const struct strtab *names)
{
	if (!a->copies) {
		*a = *b;
		return;
	}
	a->copies += b->copies;
	a->errors += b->errors;
	if (b->bytes != NUL)
		a->bytes = a->bytes == NUL ? b->bytes : a->bytes + b->bytes;
	if (b->dur != NUL)
		a->dur = a->dur == NUL ? b->dur : a->dur + b->dur;
	if (b->max != NUL && (a->max == NUL || b->max > a->max))
		a->max = b->max;
	if ((b->best_dur != NUL &&
	     (a->best_dur == NUL || b->best_dur > a->best_dur)) ||
	    (b->best_dur == a->best_dur && b->best_ts < a->best_ts)) {
		a->best_dur = b->best_dur;
		a->best_ts = b->best_ts;
	}
	if (!b->comm_set) {
		if (!a->comm_set)
			a->async = b->async;
	} else if (!a->comm_set ||
		   (b->comm != a->comm &&
		    strcmp(names->s[b->comm], names->s[a->comm]) < 0)) {
		a->comm = b->comm;
		a->comm_set = 1;
		a->async = b->async;
	}
}

/* Folds copy @k into its group of @gs (@names: its strings): the merge
 * of a group of that one row. */
static int fold(struct groups *gs, const struct strtab *names,
		const int64_t key[3], const struct call *k)
{
	struct group *g = group_get(gs, key);
	struct group one = {
		.copies = 1, .errors = k->err, .bytes = k->bytes,
		.dur = k->dur, .max = k->dur, .best_dur = k->dur,
		.best_ts = k->ts, .async = k->async,
		.comm = k->comm, .comm_set = k->comm >= 0,
	};

	if (!g)
		return -ENOMEM;
	memcpy(one.key, key, sizeof(one.key));
	group_merge(g, &one, names);
	return 0;
}

/* cuda_memcpy's columns that the pass reads. */
enum { K_PID, K_TID, K_COMM, K_TS, K_API, K_KIND, K_ASYNC, K_SRC, K_DST,
       K_BYTES, K_DUR, K_RET, NK };
static const char *const k_name[NK] = {
	"pid", "tid", "comm", "ts", "api", "kind", "async", "src", "dst",
	"bytes", "dur", "ret",
};

/* Dictionary ids of one segment mapped to interned names, filled as met:
 * a copy's strings cost a lookup, not a hash of the text, per row. */
struct dictmap {
	const struct gr_dict *d;
	int si;			/* the segment d belongs to */
	int32_t *id;		/* by dictionary id: name id + 2, 0 unknown */
	size_t n;
};

/* The interned name of string column @col of @c's row: -1 for NULL (or
 * an id its dictionary lacks, which the table gives as NULL), -2 ENOMEM. */
static int32_t row_name(struct strtab *names, struct dictmap *m,
			const struct gr_dict *d, const struct cursor *c,
			int col)
{
	if (gr_evrow__null(c, col))
		return -1;
	int64_t id = gr_evrow__int(c, col);
	uint32_t len;
	/* By segment too: a dictionary freed early (the walk could not keep
	 * it) may leave its address to the next one. */
	if (m->d != d || m->si != c->si) {
		m->d = d;
		m->si = c->si;
		if (m->id)
			memset(m->id, 0, m->n * sizeof(*m->id));
	}
	if (!d || id <= 0 || (uint64_t)id > d->n)
		return -1;
	if ((size_t)id >= m->n) {
		size_t n = (size_t)d->n + 1;
		int32_t *p = sqlite3_realloc64(m->id, n * sizeof(*p));
		if (!p)
			return -2;
		memset(p + m->n, 0, (n - m->n) * sizeof(*p));
		m->id = p;
		m->n = n;
	}
	if (!m->id[id]) {
		const char *str = gr_dict__str(d, id, &len);
		int32_t v = str ? intern(names, str) : -1;
		if (v < -1)
			return v;
		m->id[id] = v + 2;
	}
	return m->id[id] - 2;
}

/* A copy's host sides by its kind's name id (-1: a NULL kind), as
 * is_side() has them: bit 1 the source, bit 2 the destination, bit 0 set
 * once known. */
static int kind_sides(struct strtab *names, uint8_t **sides, size_t *n,
		      int32_t kind)
{
	if (kind < 0)
		return 7;
	if ((size_t)kind >= *n) {
		size_t m = names->n > (size_t)kind ? names->n : (size_t)kind + 1;
		uint8_t *p = sqlite3_realloc64(*sides, m);
		if (!p)
			return -ENOMEM;
		memset(p + *n, 0, m - *n);
		*sides = p;
		*n = m;
	}
	if (!(*sides)[kind]) {
		const char *ks = names->s[kind];
		(*sides)[kind] = (uint8_t)(1 | is_side(ks, "H2D") << 1 |
					   is_side(ks, "D2H") << 2);
	}
	return (*sides)[kind];
}

/* SQL's "?1 = 1" for the sync argument (NULL when left out): exactly, by
 * asking SQLite (a text '1' is not 1). */
static int sync_is_one(sqlite3 *db, sqlite3_value *sync, int *yes)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, "SELECT ?1 = 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (sync)
		sqlite3_bind_value(st, 1, sync);
	rc = sqlite3_step(st);
	*yes = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1 &&
	       sqlite3_column_type(st, 0) != SQLITE_NULL;
	rc = rc == SQLITE_ROW ? SQLITE_OK : rc;
	sqlite3_finalize(st);
	return rc;
}

/* One walker's share of the copies: catalog segments [first, end),
 * folded into groups and calls of its own (names interned in its own
 * table), merged in segment order afterwards. */
struct part {
	struct gr_qctx *q;
	const struct allocs *al;
	enum mh_table t;
	int all;		/* memcpy_pageable: blocking calls too */
	int first, end;
	int col[NK];
	uint64_t need;
	struct strtab names;
	struct groups gs;
	struct top top;
	int rc;			/* 0, -ENOMEM or -EINTR (stopped) */
	pthread_t th;
	int started;
};

static void part_free(struct part *p)
{
	strtab_free(&p->names);
	groups_free(&p->gs);
	sqlite3_free(p->top.c);
	memset(&p->top, 0, sizeof(p->top));
}

/* Walks p's segments of cuda_memcpy (the rows "SELECT ... FROM
 * cuda_memcpy" gives there, in the same order) and folds every copy. */
static int walk_part(struct part *p)
{
	const int *col = p->col;
	uint64_t n = 0;
	struct dictmap dm = { .si = -1 };
	uint8_t *sides_of = NULL;
	size_t nsides = 0;
	int rc;

	struct gr_evwalk *w = gr_evwalk__open(p->q, "cuda_memcpy", p->need,
					      p->first, p->end);
	if (!w)
		return -ENOMEM;
	const struct cursor *r = gr_evwalk__cursor(w);
#define V(i) (gr_evrow__null(r, col[i]) ? NUL : gr_evrow__int(r, col[i]))
	while ((rc = gr_evwalk__next(w)) == 1) {
		struct call k;
		int64_t async = V(K_ASYNC);
		/* Read order across parts: segment, then row. */
		uint64_t seq = (uint64_t)gr_evwalk__segment(w) << 40 | n++;
		if (p->t == T_PAGEABLE && async != 1 && !p->all)
			continue; /* WHERE async = 1 OR ?1 = 1 */
		const struct gr_dict *d = gr_evwalk__dict(w);
		int32_t kind = row_name(&p->names, &dm, d, r, col[K_KIND]);
		int sides = kind < -1 ? -ENOMEM :
			    kind_sides(&p->names, &sides_of, &nsides, kind);
		int64_t src = V(K_SRC), dst = V(K_DST);
		enum mem sm = M_NONE, dmem = M_NONE;

		if (sides < 0) {
			rc = -ENOMEM;
			break;
		}
		memset(&k, 0, sizeof(k));
		k.pid = V(K_PID);
		k.ts = V(K_TS);
		if ((sides & 2) && src != NUL && src != 0)
			sm = classify(p->al, k.pid, src, k.ts);
		if ((sides & 4) && dst != NUL && dst != 0)
			dmem = classify(p->al, k.pid, dst, k.ts);
		int pageable = sm == M_PAGEABLE || dmem == M_PAGEABLE;
		if (p->t == T_BLOCKING) {
			if (async == 0)
				k.why = 0;
			else if (pageable)
				k.why = 1;
			else
				continue;
		} else if (!pageable) {
			continue;
		}
		k.host_mem = sm > dmem ? sm : dmem;
		if (k.host_mem == M_DEVICE)
			k.host_mem = M_NONE;
		k.tid = V(K_TID);
		k.dur = V(K_DUR);
		k.bytes = V(K_BYTES);
		k.async = async;
		k.src = src;
		k.dst = dst;
		k.err = !gr_evrow__null(r, col[K_RET]) &&
			gr_evrow__int(r, col[K_RET]) != 0;
		k.seq = seq;
		k.comm = row_name(&p->names, &dm, d, r, col[K_COMM]);
		k.api = row_name(&p->names, &dm, d, r, col[K_API]);
		k.kind = kind;
		if (k.comm < -1 || k.api < -1) {
			rc = -ENOMEM;
			break;
		}
		int64_t key[3] = { k.pid, k.tid, k.why };
		if (p->t == T_PAGEABLE)
			key[1] = k.api, key[2] = k.kind;
		if (fold(&p->gs, &p->names, key, &k) ||
		    top_offer(&p->top, &k)) {
			rc = -ENOMEM;
			break;
		}
	}
#undef V
	sqlite3_free(dm.id);
	sqlite3_free(sides_of);
	gr_evwalk__close(w);
	return rc < 0 ? rc : 0;
}

static void *part_main(void *arg)
{
	struct part *p = arg;
	p->rc = walk_part(p);
	return NULL;
}

/* A part's name id in @names (-1 stays), or -2 (ENOMEM). */
static int32_t remap(const int32_t *map, int32_t id)
{
	return id < 0 ? id : map[id];
}

/* Merges part @p (read after the parts merged before it) into @c. */
static int merge_part(struct mh_cursor *c, const struct part *p,
		      enum mh_table t)
{
	int32_t *map = gr_sq_calloc(p->names.n, sizeof(*map));
	if (!map)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < p->names.n && !rc; i++)
		if ((map[i] = intern(&c->names, p->names.s[i])) < 0)
			rc = -ENOMEM;
	for (size_t i = 0; i < p->gs.n && !rc; i++) {
		struct group b = p->gs.g[i];
		if (t == T_PAGEABLE) {
			b.key[1] = remap(map, (int32_t)b.key[1]);
			b.key[2] = remap(map, (int32_t)b.key[2]);
		}
		b.comm = remap(map, b.comm);
		struct group *a = group_get(&c->gs, b.key);
		if (!a)
			rc = -ENOMEM;
		else
			group_merge(a, &b, &c->names);
	}
	for (size_t i = 0; i < p->top.n && !rc; i++) {
		struct call k = p->top.c[i];
		k.comm = remap(map, k.comm);
		k.api = remap(map, k.api);
		k.kind = remap(map, k.kind);
		rc = top_offer(&c->top, &k);
	}
	sqlite3_free(map);
	return rc;
}

/* Reads every copy and folds it: the catalog cut into runs of segments
 * with about equal events (gr_vtab__split), each walked by a thread of
 * its own (the first by this one), their groups and calls merged in
 * segment order, so that every tie falls as one walk in read order
 * would.  Returns SQLITE_OK or an error code with *err set. */
static int scan_copies(sqlite3 *db, struct gr_qctx *q, struct mh_cursor *c,
		       enum mh_table t, sqlite3_value *sync, char **err)
{
	int tab = gr_table__find("cuda_memcpy"), col[NK], all = 1, rc = 0;
	uint64_t need = 0;

	for (int i = 0; i < NK; i++) {
		col[i] = tab < 0 ? -1 : gr_table__col(&gr_tables[tab],
						      k_name[i]);
		if (col[i] < 0) {
			*err = sqlite3_mprintf("cuda_memcpy has no column %s",
					       k_name[i]);
			return SQLITE_ERROR;
		}
		need |= 1ull << col[i];
	}
	if (t == T_PAGEABLE && (rc = sync_is_one(db, sync, &all)) != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return rc;
	}
	int n = gr_vtab__walkers(), cut[65];
	if (!n) {
		*err = sqlite3_mprintf("GPUREC_SCAN_THREADS=%s: not a number "
				       "from 1 to 64",
				       getenv("GPUREC_SCAN_THREADS"));
		return SQLITE_ERROR;
	}
	n = gr_vtab__split(q, q->since, q->until, n, cut);
	struct part *parts = gr_sq_calloc((size_t)n, sizeof(*parts));
	if (!parts) {
		*err = sqlite3_mprintf("out of memory reading cuda_memcpy");
		return SQLITE_NOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct part *p = &parts[i];
		p->q = q;
		p->al = &c->al;
		p->t = t;
		p->all = all;
		p->first = cut[i];
		p->end = cut[i + 1];
		memcpy(p->col, col, sizeof(col));
		p->need = need;
		p->top.limit = c->top.limit;
	}
	/* A thread that cannot start leaves its part to this one. */
	for (int i = 1; i < n; i++)
		parts[i].started = pthread_create(&parts[i].th, NULL,
						  part_main, &parts[i]) == 0;
	parts[0].rc = walk_part(&parts[0]);
	for (int i = 1; i < n; i++) {
		if (parts[i].started)
			pthread_join(parts[i].th, NULL);
		else
			parts[i].rc = walk_part(&parts[i]);
	}
	/* Each part freed once merged: at most one part's groups and
	 * calls beside the merged ones (--max-memory counts them). */
	for (int i = 0; i < n; i++) {
		if (!rc && (rc = parts[i].rc) == 0)
			rc = merge_part(c, &parts[i], t);
		part_free(&parts[i]);
	}
	sqlite3_free(parts);
	if (rc == 0)
		return SQLITE_OK;
	return gr_vtab__walk_error(rc, "cuda_memcpy", err);
}

static int mh_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr,
		     int argc, sqlite3_value **argv)
{
	(void)idxstr;
	struct mh_cursor *c = (struct mh_cursor *)cur;
	struct mh_vtab *v = (struct mh_vtab *)cur->pVtab;
	sqlite3_value *sync = NULL, *lim = NULL;
	char *err = NULL;
	int a = 0, rc;

	cursor_reset(c);
	if ((idx & 1) && a < argc)
		sync = argv[a++];
	if ((idx & 2) && a < argc)
		lim = argv[a++];
	c->top.limit = -1;
	if (lim) {
		if (sqlite3_value_type(lim) != SQLITE_INTEGER) {
			err = sqlite3_mprintf("%s: the limit must be an "
					      "integer", v->t == T_BLOCKING ?
					      "memcpy_blocking" :
					      "memcpy_pageable");
			rc = SQLITE_MISMATCH;
			goto out;
		}
		c->top.limit = sqlite3_value_int64(lim);
		if (c->top.limit < 0)
			c->top.limit = -1;
	}
	rc = load_allocs(v->db, &c->al, &err);
	if (rc == SQLITE_OK)
		rc = scan_copies(v->db, v->q, c, v->t, sync, &err);
	if (rc == SQLITE_OK && c->top.n > 1)
		qsort(c->top.c, c->top.n, sizeof(*c->top.c), cmp_call);
out:
	if (rc != SQLITE_OK) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = err;
		cursor_reset(c);
	}
	return rc;
}

static int mh_next(sqlite3_vtab_cursor *cur)
{
	((struct mh_cursor *)cur)->i++;
	return SQLITE_OK;
}

static int mh_eof(sqlite3_vtab_cursor *cur)
{
	struct mh_cursor *c = (struct mh_cursor *)cur;

	return c->i >= c->gs.n + c->top.n;
}

static void result_int(sqlite3_context *ctx, int64_t v)
{
	if (v != NUL)
		sqlite3_result_int64(ctx, v);
}

static void result_name(struct mh_cursor *c, sqlite3_context *ctx,
			int32_t id)
{
	if (id >= 0)
		sqlite3_result_text(ctx, c->names.s[id], -1, SQLITE_STATIC);
}

static void result_text(sqlite3_context *ctx, const char *s)
{
	if (s)
		sqlite3_result_text(ctx, s, -1, SQLITE_STATIC);
}

static void blocking_column(struct mh_cursor *c, sqlite3_context *ctx,
			    int col)
{
	if (c->i < c->gs.n) {
		const struct group *g = &c->gs.g[c->i];
		switch (col) {
		case 0: result_text(ctx, "thread"); break;
		case 1: result_int(ctx, g->key[0]); break;
		case 2: result_int(ctx, g->key[1]); break;
		case 3: result_name(c, ctx, g->comm); break;
		case 4: result_text(ctx, why_name[g->key[2]]); break;
		case 8: sqlite3_result_int64(ctx, g->copies); break;
		case 9: result_int(ctx, g->bytes); break;
		case 10: result_int(ctx, g->dur); break;
		case 11: result_int(ctx, g->max); break;
		case 12: sqlite3_result_int64(ctx, g->errors); break;
		case 13: sqlite3_result_int64(ctx, g->best_ts); break;
		}
		return;
	}
	const struct call *k = &c->top.c[c->i - c->gs.n];
	switch (col) {
	case 0: result_text(ctx, "call"); break;
	case 1: result_int(ctx, k->pid); break;
	case 2: result_int(ctx, k->tid); break;
	case 3: result_name(c, ctx, k->comm); break;
	case 4: result_text(ctx, why_name[k->why]); break;
	case 5: result_name(c, ctx, k->api); break;
	case 6: result_name(c, ctx, k->kind); break;
	case 7: result_text(ctx, mem_name[k->host_mem]); break;
	case 8: sqlite3_result_int64(ctx, 1); break;
	case 9: result_int(ctx, k->bytes); break;
	case 10: result_int(ctx, k->dur); break;
	case 11: result_int(ctx, k->dur); break;
	case 12: sqlite3_result_int64(ctx, k->err); break;
	case 13: sqlite3_result_int64(ctx, k->ts); break;
	}
}

static void pageable_column(struct mh_cursor *c, sqlite3_context *ctx,
			    int col)
{
	if (c->i < c->gs.n) {
		const struct group *g = &c->gs.g[c->i];
		switch (col) {
		case 0: result_text(ctx, "sum"); break;
		case 1: result_int(ctx, g->key[0]); break;
		case 3: result_name(c, ctx, g->comm); break;
		case 4: result_name(c, ctx, (int32_t)g->key[1]); break;
		case 5: result_name(c, ctx, (int32_t)g->key[2]); break;
		case 6: result_int(ctx, g->async); break;
		case 7: sqlite3_result_int64(ctx, g->copies); break;
		case 8: result_int(ctx, g->bytes); break;
		case 9: result_int(ctx, g->dur); break;
		case 10: result_int(ctx, g->max); break;
		case 11: sqlite3_result_int64(ctx, g->errors); break;
		}
		return;
	}
	const struct call *k = &c->top.c[c->i - c->gs.n];
	switch (col) {
	case 0: result_text(ctx, "call"); break;
	case 1: result_int(ctx, k->pid); break;
	case 2: result_int(ctx, k->tid); break;
	case 3: result_name(c, ctx, k->comm); break;
	case 4: result_name(c, ctx, k->api); break;
	case 5: result_name(c, ctx, k->kind); break;
	case 6: result_int(ctx, k->async); break;
	case 7: sqlite3_result_int64(ctx, 1); break;
	case 8: result_int(ctx, k->bytes); break;
	case 9: result_int(ctx, k->dur); break;
	case 10: result_int(ctx, k->dur); break;
	case 11: sqlite3_result_int64(ctx, k->err); break;
	case 12: result_int(ctx, k->src); break;
	case 13: result_int(ctx, k->dst); break;
	case 14: sqlite3_result_int64(ctx, k->ts); break;
	}
}

static int mh_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
		     int col)
{
	struct mh_cursor *c = (struct mh_cursor *)cur;

	if (((struct mh_vtab *)cur->pVtab)->t == T_BLOCKING)
		blocking_column(c, ctx, col);
	else
		pageable_column(c, ctx, col);
	return SQLITE_OK;
}

static int mh_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid)
{
	*rowid = (sqlite_int64)((struct mh_cursor *)cur)->i;
	return SQLITE_OK;
}

/* Eponymous-only (no xCreate), like the NCCL tables. */
static sqlite3_module mh_module = {
	.iVersion = 1,
	.xConnect = mh_connect,
	.xBestIndex = mh_best_index,
	.xDisconnect = mh_disconnect,
	.xOpen = mh_open,
	.xClose = mh_close,
	.xFilter = mh_filter,
	.xNext = mh_next,
	.xEof = mh_eof,
	.xColumn = mh_column,
	.xRowid = mh_rowid,
};

int gr_memcpy_host__register(sqlite3 *db, struct gr_qctx *q)
{
	static const char *const name[] = {
		[T_BLOCKING] = "memcpy_blocking",
		[T_PAGEABLE] = "memcpy_pageable",
	};
	return gr_vtab__create_modules(db, &mh_module, name, 2, q);
}
