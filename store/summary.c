/* summary.c - the summary accumulator and histograms (see summary.h).
 *
 * The accumulator is an open-addressing hash of entries keyed by (kind,
 * minute, pid, keys, null bits).  The writer feeds it whole blocks, so the
 * row loop is the recorder's hot path: a small direct-mapped memo in front
 * of the hash finds a row's entry with one compare when a process repeats a
 * key (its API, its kernel shapes), each row's values are read once for
 * all the kinds it feeds, and a block with no NULL row (the writer's usual
 * block) reads them with plain loads.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "store/segment.h"
#include "store/summary.h"

/* ---- histograms ---------------------------------------------------------- */

int64_t gr_hist_value(uint32_t b)
{
	if (b < 256)
		return b;
	int e = 8 + (int)((b - 256) / 128);
	uint64_t lo = (uint64_t)(128 + (b - 256) % 128) << (e - 7);
	return (int64_t)(lo + (1ull << (e - 8)));
}

static int hist_add(struct gr_hist *h, uint32_t b, uint64_t count)
{
	uint32_t o = b >> 7;
	if (o >= GR_HIST_OCTS || !count)
		return o >= GR_HIST_OCTS ? -EINVAL : 0;
	if (!h->oct && !(h->oct = calloc(GR_HIST_OCTS, sizeof(*h->oct))))
		return -ENOMEM;
	if (!h->oct[o] && !(h->oct[o] = calloc(128, sizeof(**h->oct))))
		return -ENOMEM;
	if (h->oct[o][b & 127] == 0)
		h->n++;
	h->oct[o][b & 127] += count;
	return 0;
}

uint64_t gr_hist__count(const struct gr_hist *h, uint32_t b)
{
	uint32_t o = b >> 7;
	return o < GR_HIST_OCTS && h->oct && h->oct[o] ? h->oct[o][b & 127] : 0;
}

/* Calls fn(ctx, bucket, count) for every bucket with a count, in order. */
#define HIST_EACH(h, b, c, body)                                              \
	do {                                                                  \
		for (uint32_t o_ = 0; (h)->oct && o_ < GR_HIST_OCTS; o_++) {  \
			if (!(h)->oct[o_])                                    \
				continue;                                     \
			for (uint32_t i_ = 0; i_ < 128; i_++) {               \
				uint64_t c = (h)->oct[o_][i_];                \
				uint32_t b = o_ << 7 | i_;                    \
				if (c) {                                      \
					body;                                 \
				}                                             \
			}                                                     \
		}                                                             \
	} while (0)

static void extremes(struct gr_hist *h, int64_t lo, int64_t hi)
{
	if (!h->n || lo < h->min)
		h->min = lo;
	if (!h->n || hi > h->max)
		h->max = hi;
}

int gr_hist__add_value(struct gr_hist *h, int64_t v)
{
	extremes(h, v, v);
	return hist_add(h, gr_hist_bucket(v), 1);
}

int gr_hist__add_count(struct gr_hist *h, uint32_t bucket, uint64_t count,
		       int64_t lo, int64_t hi)
{
	if (!count)
		return 0;
	extremes(h, lo, hi);
	return hist_add(h, bucket, count);
}

void gr_hist__free(struct gr_hist *h)
{
	if (h->oct)
		for (int o = 0; o < GR_HIST_OCTS; o++)
			free(h->oct[o]);
	free(h->oct);
	memset(h, 0, sizeof(*h));
}

int gr_hist__encode(const struct gr_hist *h, struct gr_buf *out)
{
	if (gr_buf__reserve(out, 30 + (size_t)h->n * 15))
		return -ENOMEM;
	uint8_t *p = out->p + out->len;
	p += gr_varint_put(p, h->n);
	if (h->n) {
		p += gr_varint_put(p, gr_zigzag(h->min));
		p += gr_varint_put(p, gr_zigzag(h->max));
	}
	uint32_t prev = 0;
	HIST_EACH(h, b, c, {
		p += gr_varint_put(p, b - prev);
		p += gr_varint_put(p, c);
		prev = b;
	});
	out->len = (size_t)(p - out->p);
	return 0;
}

int gr_hist__merge(struct gr_hist *h, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	uint64_t n, d, c, lo, hi;
	if (gr_varint_get(&p, end, &n))
		return -EINVAL;
	if (n) {
		if (gr_varint_get(&p, end, &lo) || gr_varint_get(&p, end, &hi))
			return -EINVAL;
		extremes(h, gr_unzigzag(lo), gr_unzigzag(hi));
	}
	for (uint64_t i = 0, b = 0; i < n; i++) {
		if (gr_varint_get(&p, end, &d) || gr_varint_get(&p, end, &c))
			return -EINVAL;
		b += d;
		if (b > UINT32_MAX)
			return -EINVAL;
		int err = hist_add(h, (uint32_t)b, c);
		if (err)
			return err;
	}
	return p == end ? 0 : -EINVAL;
}

int64_t gr_hist__quantile(const struct gr_hist *h, double p)
{
	uint64_t total = 0;
	HIST_EACH(h, b, c, { (void)b; total += c; });
	if (!total)
		return -1;
	if (p < 0)
		p = 0;
	if (p > 100)
		p = 100;
	/* Nearest rank: the smallest value with at least p % of the data
	 * at or below it (rank 1 for p = 0). */
	double r = p / 100.0 * (double)total;
	uint64_t rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	int64_t v = h->max;
	int found = 0;
	HIST_EACH(h, b, c, {
		if (!found && (seen += c) >= rank) {
			v = gr_hist_value(b);
			found = 1;
		}
	});
	return v < h->min ? h->min : v > h->max ? h->max : v;
}

/* ---- the accumulator ----------------------------------------------------- */

/* Slots of the memo: a launch stream keeps a few hundred kernel shapes per
 * process live in one minute, and each should keep its slot. */
#define MEMO_BITS 13

struct gr_sum {
	struct gr_sum_ent *e;
	uint32_t n, cap;      /* entries; cap a power of two */
	uint32_t *slot;       /* hash slots: entry index + 1, 0 empty */
	/* By a cheap hash of (kind, pid, k[0], k[1]): the index of the last
	 * entry found for such a key.  Only a guess, checked against the
	 * whole key before use, so it is never cleared. */
	uint32_t memo[1u << MEMO_BITS];
	int no_hist;          /* gr_sum__no_hist() */
};

struct gr_sum *gr_sum__new(void)
{
	return calloc(1, sizeof(struct gr_sum));
}

void gr_sum__no_hist(struct gr_sum *s, int on)
{
	s->no_hist = on;
}

void gr_sum__reset(struct gr_sum *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		gr_hist__free(&s->e[i].h);
		free(s->e[i].slots);
	}
	s->n = 0;
	if (s->slot)
		memset(s->slot, 0, (size_t)s->cap * 2 * sizeof(*s->slot));
}

void gr_sum__free(struct gr_sum *s)
{
	if (!s)
		return;
	gr_sum__reset(s);
	free(s->e);
	free(s->slot);
	free(s);
}

static uint64_t key_hash(int kind, int64_t minute, int64_t pid,
			 const int64_t *k, uint8_t knull)
{
	uint64_t h = (uint64_t)kind * 0x9e3779b97f4a7c15ull ^ knull;
	h = (h ^ (uint64_t)minute) * 0xff51afd7ed558ccdull;
	h = (h ^ (uint64_t)pid) * 0xc4ceb9fe1a85ec53ull;
	for (int i = 0; i < GR_SUM_NKEYS; i++)
		h = (h ^ (uint64_t)k[i]) * 0x100000001b3ull;
	return h ^ (h >> 31);
}

static int key_eq(const struct gr_sum_ent *e, int kind, int64_t minute,
		  int64_t pid, const int64_t *k, uint8_t knull)
{
	return e->kind == kind && e->minute == minute && e->pid == pid &&
	       e->knull == knull && !memcmp(e->k, k, sizeof(e->k));
}

static int grow(struct gr_sum *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : 256;
	struct gr_sum_ent *e = realloc(s->e, (size_t)cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	s->e = e;
	uint32_t *slot = calloc((size_t)cap * 2, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	free(s->slot);
	s->slot = slot;
	s->cap = cap;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct gr_sum_ent *x = &s->e[i];
		uint32_t j = (uint32_t)key_hash(x->kind, x->minute, x->pid,
						x->k, x->knull) &
			     (cap * 2 - 1);
		while (s->slot[j])
			j = (j + 1) & (cap * 2 - 1);
		s->slot[j] = i + 1;
	}
	return 0;
}

/* Returns the entry of a key, created empty if new, or NULL (ENOMEM). */
static struct gr_sum_ent *get(struct gr_sum *s, int kind, int64_t minute,
			      int64_t pid, const int64_t *k, uint8_t knull)
{
	if (s->n == s->cap && grow(s))
		return NULL;
	uint32_t mask = s->cap * 2 - 1;
	uint32_t j = (uint32_t)key_hash(kind, minute, pid, k, knull) & mask;
	for (; s->slot[j]; j = (j + 1) & mask) {
		struct gr_sum_ent *e = &s->e[s->slot[j] - 1];
		if (key_eq(e, kind, minute, pid, k, knull))
			return e;
	}
	struct gr_sum_ent *e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	e->kind = (uint8_t)kind;
	e->minute = minute;
	e->pid = pid;
	e->knull = knull;
	memcpy(e->k, k, sizeof(e->k));
	e->dur_min = INT64_MAX;
	e->dur_max = INT64_MIN;
	e->ts_min = INT64_MAX;
	e->ts_max = INT64_MIN;
	s->slot[j] = ++s->n;
	return e;
}

/* Column positions of one table, found by name once. */
struct cols {
	int ok;
	int ts, pid, dur, api, ret, kernel, dims[6], kind, async, bytes;
	int tid, state, stack, comm;
	int comm_id, rank, op, nranks;
	int dev, disk, syscall;
};

static const struct cols *cols_of(int t)
{
	static struct cols c[GR_NTABLES];
	static const char *const dims[6] = { "grid_x", "grid_y", "grid_z",
					     "block_x", "block_y", "block_z" };
	struct cols *x = &c[t];
	if (!x->ok) {
		const struct gr_table *tab = &gr_tables[t];
		x->ts = gr_table__col(tab, "ts");
		x->pid = gr_table__col(tab, "pid");
		x->dur = gr_table__col(tab, "dur");
		x->api = gr_table__col(tab, "api");
		x->ret = gr_table__col(tab, "ret");
		x->kernel = gr_table__col(tab, "kernel");
		for (int i = 0; i < 6; i++)
			x->dims[i] = gr_table__col(tab, dims[i]);
		x->kind = gr_table__col(tab, "kind");
		x->async = gr_table__col(tab, "async");
		x->bytes = gr_table__col(tab, "bytes");
		x->tid = gr_table__col(tab, "tid");
		x->state = gr_table__col(tab, "state");
		x->stack = gr_table__col(tab, "stack");
		x->comm = gr_table__col(tab, "comm");
		x->comm_id = gr_table__col(tab, "comm_id");
		x->rank = gr_table__col(tab, "rank");
		x->op = gr_table__col(tab, "op");
		x->nranks = gr_table__col(tab, "nranks");
		x->dev = gr_table__col(tab, "dev");
		x->disk = gr_table__col(tab, "disk");
		x->syscall = gr_table__col(tab, "syscall");
		x->ok = 1;
	}
	return x;
}

int gr_sum_kinds(int t, int *second)
{
	*second = t == GR_T_cuda_kernel ? GR_SUM_KERNEL :
		  t == GR_T_cuda_memcpy ? GR_SUM_MEMCPY :
		  t == GR_T_offcpu ? GR_SUM_OFFCPU :
		  t == GR_T_nccl ? GR_SUM_NCCL :
		  t == GR_T_runq ? GR_SUM_RUNQ :
		  t == GR_T_cuda_sync ? GR_SUM_SYNC :
		  t == GR_T_block_io || t == GR_T_file_io ? GR_SUM_IO : 0;
	return (gr_tables[t].flags & GR_TF_CUDA_CALL) ? GR_SUM_API : 0;
}

/* One column of a block, copied out of gr_sum_rows: the row loop stores
 * int64_t fields of entries, which the compiler must assume may alias r's
 * columns, so through r it would reload every pointer after every store. */
struct col {
	const int64_t *v;       /* NULL: absent, every row NULL */
	const uint8_t *nulls;
};

static inline struct col col_of(const struct gr_sum_rows *r, int c)
{
	struct col x = { NULL, NULL };
	if (c >= 0 && r->v[c]) {
		x.v = r->v[c];
		x.nulls = r->nulls[c];
	}
	return x;
}

static inline int is_null(const struct col *c, uint32_t i)
{
	return !c->v || (c->nulls && (c->nulls[i >> 3] >> (i & 7) & 1));
}

static inline int64_t val(const struct col *c, uint32_t i)
{
	return is_null(c, i) ? 0 : c->v[i];
}

/* Sums wrap, defined, rather than overflow: a hostile segment's rows (or
 * its stored summaries, merged) may hold any value (found by
 * tests/fuzz/fuzz_block). */
static inline int64_t add_wrap(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* The square of a duration, exact in 128 bits (|INT64_MIN|^2 < 2^127);
 * sums of squares wrap like the sums above, never overflow. */
static inline unsigned __int128 square(int64_t d)
{
	unsigned __int128 m = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
	return m * m;
}

/* What one row adds to each entry it feeds, read once for all of them. */
struct row {
	int64_t ts, pid, dur, bytes;
	int error;
};

int64_t gr_sum_lat_bucket(int64_t dur)
{
	if (dur < 1000)
		return 0;
	/* The SQL's doubles give the exact floor of log2(dur / 1000) while
	 * dur / 1000.0 is a power of two or at least 0.001 away from one,
	 * which log2's rounding cannot cross below 2^36 us (19 hours): there
	 * integer arithmetic gives the same bucket without two libm calls
	 * per wait (20,000 a second). */
	if (dur < 1000ll << 36)
		return 1ll << (63 - __builtin_clzll((uint64_t)dur / 1000));
	return (int64_t)pow(2, (double)(int64_t)log2((double)dur / 1000.0));
}

/* Turns the key columns read for row x of table t into the keys the
 * latency kinds keep: runq-latency names a process by its main thread's
 * comm (tid == pid, key 2 a flag) and counts waits by log2 bucket, and
 * io-latency does so for block requests; file calls count the bytes of
 * calls that did not fail.  Key 6 of sum_io tells a block request (1)
 * from a file call (0): their keys are otherwise disjoint. */
static inline void derive_keys(int second, int t, struct row *x, int64_t *k,
			       uint8_t *knull)
{
	if (second == GR_SUM_RUNQ) {
		if (!(*knull >> 1 & 1))
			k[1] = gr_sum_lat_bucket(k[1]);
		k[2] = k[2] == x->pid;
	} else if (second == GR_SUM_IO && t == GR_T_block_io) {
		if (!(*knull >> 3 & 1))
			k[3] = gr_sum_lat_bucket(k[3]);
		k[4] = k[5] = 0;
		*knull |= 3 << 4;
		k[6] = 1;
	} else if (second == GR_SUM_IO) {
		k[6] = 0;
		if (x->bytes < 0)
			x->bytes = 0; /* -errno */
	}
}

/* The memo slot of a key.  Minute and the other keys are left out: a
 * new minute, or a kernel launched with another block shape, costs one
 * lookup in the hash and takes the slot over. */
static inline uint32_t memo_slot(int kind, int64_t pid, const int64_t *k)
{
	uint64_t h = ((uint64_t)pid * 8 + (uint64_t)kind) *
		     0x9e3779b97f4a7c15ull ^
		     (uint64_t)k[0] * 0xc4ceb9fe1a85ec53ull ^
		     (uint64_t)k[1] * 0xff51afd7ed558ccdull;
	return (uint32_t)(h >> (64 - MEMO_BITS));
}

/* Returns the entry of a key as get() does, trying the memo first. */
static struct gr_sum_ent *find(struct gr_sum *s, int kind, int64_t minute,
			       int64_t pid, const int64_t *k, uint8_t knull)
{
	uint32_t *m = &s->memo[memo_slot(kind, pid, k)];
	if (*m < s->n && key_eq(&s->e[*m], kind, minute, pid, k, knull))
		return &s->e[*m];
	struct gr_sum_ent *e = get(s, kind, minute, pid, k, knull);
	if (e)
		*m = (uint32_t)(e - s->e);
	return e;
}

/* Adds row x to the entry of (kind, minute, its pid, keys). */
static inline int add_row(struct gr_sum *s, int kind, int64_t minute,
			  const struct row *x, const int64_t *k,
			  uint8_t knull)
{
	struct gr_sum_ent *e = find(s, kind, minute, x->pid, k, knull);
	if (!e)
		return -ENOMEM;
	e->dirty = 1;
	e->n++;
	e->dur_sum = add_wrap(e->dur_sum, x->dur);
	e->dur_sq += square(x->dur);
	if (x->dur < e->dur_min)
		e->dur_min = x->dur;
	if (x->dur > e->dur_max)
		e->dur_max = x->dur;
	e->bytes = add_wrap(e->bytes, x->bytes);
	e->errors += x->error;
	if (x->ts < e->ts_min)
		e->ts_min = x->ts;
	if (x->ts > e->ts_max)
		e->ts_max = x->ts;
	if (GR_SUM_HAS_HIST(kind) && !s->no_hist &&
	    gr_hist__add(&e->h, x->dur))
		return -ENOMEM;
	return 0;
}

/* The minute of ts (its first ns), remembered with its end in [*start,
 * *end): rows come in time order, most in the last row's minute. */
static inline int64_t minute_of(int64_t ts, int64_t *start, int64_t *end)
{
	if (ts < *start || ts >= *end) {
		/* Unsigned: a ts within a minute of INT64_MIN or INT64_MAX
		 * (a hostile segment's) wraps instead of overflowing (found
		 * by tests/fuzz/fuzz_block). */
		int64_t off = ((ts % GR_SUM_MINUTE_NS) + GR_SUM_MINUTE_NS) %
			      GR_SUM_MINUTE_NS;
		*start = (int64_t)((uint64_t)ts - (uint64_t)off);
		*end = (int64_t)((uint64_t)*start + GR_SUM_MINUTE_NS);
	}
	return *start;
}

/* Adds row x to the minute (and, if segment_rows, the whole-segment)
 * entries of sum_api (api > 0, API key ka) and of the second kind
 * (second != 0, keys k2). */
static inline int add_kinds(struct gr_sum *s, int api, int second,
			    int segment_rows, int64_t minute,
			    const struct row *x, const int64_t *ka,
			    uint8_t kna, const int64_t *k2, uint8_t kn2)
{
	for (int lvl = 0; api > 0 && lvl <= segment_rows; lvl++)
		if (add_row(s, GR_SUM_API, lvl ? GR_SUM_SEGMENT : minute, x,
			    ka, kna))
			return -ENOMEM;
	for (int lvl = 0; second && lvl <= segment_rows; lvl++)
		if (add_row(s, second, lvl ? GR_SUM_SEGMENT : minute, x, k2,
			    kn2))
			return -ENOMEM;
	return 0;
}

/* Whether column c has no NULL row (absent counts, if `absent`): a block
 * of the writer's usually has all its columns so. */
static int plain(const struct gr_sum_rows *r, int c, int absent)
{
	if (c < 0 || !r->v[c])
		return absent;
	/* The writer keeps a column's bitmap, cleared, once a row of it
	 * was NULL. */
	for (uint32_t i = 0; r->nulls[c] && i < (r->n + 7) / 8; i++)
		if (r->nulls[c][i])
			return 0;
	return 1;
}

/* gr_sum__add for a block whose pid, dur, api (if it feeds sum_api) and
 * key columns are there, and no column has a NULL row: every value a plain load, ret and
 * bytes read as row i & mask (0 for an absent one, whose v[0] is zero). */
static int add_plain(struct gr_sum *s, const struct gr_sum_rows *r,
		     const struct cols *c, const int *key, int nkeys,
		     int64_t lo, int64_t hi, const int64_t *pid,
		     int segment_rows, int api, int second)
{
	static const int64_t zero;
	const int64_t *ts = r->v[c->ts], *vpid = r->v[c->pid],
		      *dur = r->v[c->dur], *k[GR_SUM_NKEYS];
	/* No api (api < 0): a table that feeds only its second kind, as
	 * runq's 20,000 waits a second do. */
	const int64_t *vapi = api > 0 ? r->v[c->api] : &zero;
	uint32_t amask = vapi == &zero ? 0 : UINT32_MAX;
	const int64_t *ret = c->ret >= 0 && r->v[c->ret] ? r->v[c->ret] : &zero;
	const int64_t *bytes = c->bytes >= 0 && r->v[c->bytes] ?
			       r->v[c->bytes] : &zero;
	uint32_t rmask = ret == &zero ? 0 : UINT32_MAX;
	uint32_t bmask = bytes == &zero ? 0 : UINT32_MAX;
	int64_t ka[GR_SUM_NKEYS] = { 0 }, k2[GR_SUM_NKEYS] = { 0 };
	int64_t mstart = 1, mend = 0;
	for (int j = 0; j < nkeys; j++)
		k[j] = r->v[key[j]];
	for (uint32_t i = 0; i < r->n; i++) {
		struct row x = { .ts = ts[i], .pid = vpid[i] };
		if (x.ts < lo || x.ts > hi || (pid && x.pid != *pid))
			continue;
		x.dur = dur[i];
		x.bytes = bytes[i & bmask];
		x.error = ret[i & rmask] != 0;
		ka[0] = vapi[i & amask];
		for (int j = 0; j < nkeys; j++)
			k2[j] = k[j][i];
		uint8_t kn2 = 0;
		if (second == GR_SUM_RUNQ || second == GR_SUM_IO)
			derive_keys(second, r->t, &x, k2, &kn2);
		if (add_kinds(s, api, second, segment_rows,
			      minute_of(x.ts, &mstart, &mend), &x, ka, 0, k2,
			      kn2))
			return -ENOMEM;
	}
	return 0;
}

/* Sets, in the sum_launch_slots entry of its process and minute, the
 * slot of every launch among r's rows (cuda_kernel's, or cuda_graph's of
 * op launch) with ts in [lo, hi] (and pid == *pid).  A set of slots, not
 * a last launch: it comes out the same whatever order the rows arrive
 * in, across flushes and tables. */
static int add_slots(struct gr_sum *s, const struct gr_sum_rows *r,
		     const struct cols *c, int64_t lo, int64_t hi,
		     const int64_t *pid)
{
	static const int64_t nokey[GR_SUM_NKEYS];
	const int64_t *ts = r->v[c->ts];
	struct col cpid = col_of(r, c->pid), op = col_of(r, c->op);
	int graph = r->t == GR_T_cuda_graph;
	int64_t mstart = 1, mend = 0;
	if (graph && (!r->launch_op || !op.v))
		return 0;
	for (uint32_t i = 0; i < r->n; i++) {
		int64_t t = ts[i], p = val(&cpid, i);
		if (t < lo || t > hi || (pid && p != *pid) ||
		    (graph && (is_null(&op, i) || op.v[i] != r->launch_op)))
			continue;
		int64_t m = minute_of(t, &mstart, &mend);
		struct gr_sum_ent *e = find(s, GR_SUM_SLOTS, m, p, nokey, 0);
		if (!e || (!e->slots && !s->no_hist &&
			   !(e->slots = calloc(1, GR_SUM_SLOT_BYTES))))
			return -ENOMEM;
		e->dirty = 1;
		e->n++;
		if (t < e->ts_min)
			e->ts_min = t;
		if (t > e->ts_max)
			e->ts_max = t;
		/* Unsigned: minute_of() wraps near the ends of int64_t. */
		uint64_t slot = ((uint64_t)t - (uint64_t)m) / GR_SUM_SLOT_NS;
		if (e->slots)
			e->slots[slot >> 3] |= (uint8_t)(1u << (slot & 7));
	}
	return 0;
}

int gr_sum__add(struct gr_sum *s, const struct gr_sum_rows *r, int64_t lo,
		int64_t hi, const int64_t *pid, int segment_rows,
		unsigned kinds)
{
	if ((kinds >> GR_SUM_SLOTS & 1) &&
	    (r->t == GR_T_cuda_kernel || r->t == GR_T_cuda_graph)) {
		const struct cols *sc = cols_of(r->t);
		int err;
		if (sc->ts >= 0 && r->v[sc->ts] &&
		    (err = add_slots(s, r, sc, lo, hi, pid)))
			return err;
	}
	int second, api = gr_sum_kinds(r->t, &second);
	if (!(kinds >> GR_SUM_API & 1))
		api = 0;
	if (!(kinds >> second & 1))
		second = 0;
	if (!api && second)
		api = -1; /* rows still feed the second kind */
	const struct cols *c = cols_of(r->t);
	if (!api || c->ts < 0 || !r->v[c->ts])
		return 0;
	/* The second kind's key columns: k[j] null sets bit j of knull. */
	int kc[GR_SUM_NKEYS], nkeys = 0;
	if (second == GR_SUM_KERNEL) {
		kc[nkeys++] = c->kernel;
		for (int d = 0; d < 6; d++)
			kc[nkeys++] = c->dims[d];
	} else if (second == GR_SUM_MEMCPY) {
		kc[nkeys++] = c->kind;
		kc[nkeys++] = c->async;
	} else if (second == GR_SUM_OFFCPU) {
		/* A block of off-CPU intervals with a NULL stack takes
		 * the general loop below, cheap at their few thousand rows
		 * a second. */
		kc[nkeys++] = c->tid;
		kc[nkeys++] = c->state;
		kc[nkeys++] = c->stack;
		kc[nkeys++] = c->comm;
	} else if (second == GR_SUM_NCCL) {
		/* The call's bytes are a key: a job repeats a few sizes per
		 * op (its gradient buckets), and nccl-sum's size buckets and
		 * bus factors come from them exactly. */
		kc[nkeys++] = c->comm_id;
		kc[nkeys++] = c->rank;
		kc[nkeys++] = c->op;
		kc[nkeys++] = c->nranks;
		kc[nkeys++] = c->bytes;
	} else if (second == GR_SUM_RUNQ) {
		/* dur and tid become the log2 bucket and the main-thread
		 * flag (derive_keys); the bucket second, as the memo slot
		 * hashes the first two keys: a thread's waits change bucket
		 * from one to the next. */
		kc[nkeys++] = c->comm;
		kc[nkeys++] = c->dur;
		kc[nkeys++] = c->tid;
	} else if (second == GR_SUM_SYNC) {
		kc[nkeys++] = c->tid;
		kc[nkeys++] = c->api;
	} else if (second == GR_SUM_IO && r->t == GR_T_block_io) {
		kc[nkeys++] = c->dev;
		kc[nkeys++] = c->disk;
		kc[nkeys++] = c->op;
		kc[nkeys++] = c->dur;
	} else if (second == GR_SUM_IO) {
		/* Keys 0-3 are a block request's: NULL here, so a file
		 * call takes the general loop (1,000 a second). */
		for (int j = 0; j < 4; j++)
			kc[nkeys++] = -1;
		kc[nkeys++] = c->syscall;
		kc[nkeys++] = c->comm;
	}
	int fast = plain(r, c->ret, 1) && plain(r, c->bytes, 1) &&
		   plain(r, c->pid, 0) && plain(r, c->dur, 0) &&
		   (api < 0 || plain(r, c->api, 0));
	for (int j = 0; fast && j < nkeys; j++)
		fast = plain(r, kc[j], 0);
	if (fast)
		return add_plain(s, r, c, kc, nkeys, lo, hi, pid, segment_rows,
				 api, second);
	const int64_t *ts = r->v[c->ts];
	struct col cpid = col_of(r, c->pid), dur = col_of(r, c->dur),
		   bytes = col_of(r, c->bytes), ret = col_of(r, c->ret),
		   capi = col_of(r, c->api), key[GR_SUM_NKEYS];
	for (int j = 0; j < nkeys; j++)
		key[j] = col_of(r, kc[j]);
	int64_t mstart = 1, mend = 0;
	int64_t ka[GR_SUM_NKEYS] = { 0 }, k2[GR_SUM_NKEYS] = { 0 };
	for (uint32_t i = 0; i < r->n; i++) {
		struct row x = { .ts = ts[i], .pid = val(&cpid, i) };
		if (x.ts < lo || x.ts > hi || (pid && x.pid != *pid))
			continue;
		x.dur = val(&dur, i);
		x.bytes = val(&bytes, i);
		x.error = !is_null(&ret, i) && ret.v[i] != 0;
		ka[0] = val(&capi, i);
		uint8_t kn2 = 0;
		for (int j = 0; j < nkeys; j++) {
			k2[j] = val(&key[j], i);
			kn2 |= (uint8_t)(is_null(&key[j], i) << j);
		}
		if (second == GR_SUM_RUNQ || second == GR_SUM_IO)
			derive_keys(second, r->t, &x, k2, &kn2);
		if (add_kinds(s, api, second, segment_rows,
			      minute_of(x.ts, &mstart, &mend), &x, ka,
			      (uint8_t)is_null(&capi, i), k2, kn2))
			return -ENOMEM;
	}
	return 0;
}

/* Adds x's counts, sums and extremes (not its histogram) to e. */
static void add_totals(struct gr_sum_ent *e, const struct gr_sum_ent *x)
{
	e->n = add_wrap(e->n, x->n);
	e->dur_sum = add_wrap(e->dur_sum, x->dur_sum);
	e->dur_sq += x->dur_sq;
	e->no_sq |= x->no_sq;
	if (x->dur_min < e->dur_min)
		e->dur_min = x->dur_min;
	if (x->dur_max > e->dur_max)
		e->dur_max = x->dur_max;
	e->bytes = add_wrap(e->bytes, x->bytes);
	e->errors = add_wrap(e->errors, x->errors);
	if (x->ts_min < e->ts_min)
		e->ts_min = x->ts_min;
	if (x->ts_max > e->ts_max)
		e->ts_max = x->ts_max;
}

/* Sets every whole-segment row to the sum of its minute rows (emptying
 * any it held before: a seal retried after one was undone, or a crashed
 * segment's, must not count its events twice). */
int gr_sum__rollup(struct gr_sum *s)
{
	uint32_t n = s->n;
	for (uint32_t i = 0; i < n; i++) {
		struct gr_sum_ent *e = &s->e[i];
		if (e->minute != GR_SUM_SEGMENT)
			continue;
		gr_hist__free(&e->h);
		memset(&e->h, 0, sizeof(e->h));
		e->n = e->dur_sum = e->bytes = e->errors = 0;
		e->dur_sq = 0;
		e->no_sq = 0;
		e->dur_min = e->ts_min = INT64_MAX;
		e->dur_max = e->ts_max = INT64_MIN;
		e->dirty = 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		/* A whole segment's slots would say nothing. */
		if (s->e[i].minute == GR_SUM_SEGMENT ||
		    s->e[i].kind == GR_SUM_SLOTS)
			continue;
		/* get() may move the entries: work from a copy. */
		struct gr_sum_ent x = s->e[i];
		struct gr_sum_ent *e = get(s, x.kind, GR_SUM_SEGMENT, x.pid, x.k,
					   x.knull);
		if (!e)
			return -ENOMEM;
		e->dirty = 1;
		add_totals(e, &x);
		if (x.h.n)
			extremes(&e->h, x.h.min, x.h.max);
		int err = 0;
		HIST_EACH(&x.h, b, c, {
			if (!err)
				err = hist_add(&e->h, b, c);
		});
		if (err)
			return err;
	}
	return 0;
}

int gr_sum__put(struct gr_sum *s, const struct gr_sum_ent *x,
		const uint8_t *hist, size_t hist_len)
{
	struct gr_sum_ent *e = get(s, x->kind, x->minute, x->pid, x->k,
				   x->knull);
	if (!e)
		return -ENOMEM;
	add_totals(e, x);
	if (s->no_hist)
		return 0;
	if (x->kind == GR_SUM_SLOTS) {
		/* OR, like a histogram's counts add: which row or segment
		 * holds a launch does not matter.  A shorter blob (none is
		 * written) would have its missing slots empty. */
		if (!e->slots && !(e->slots = calloc(1, GR_SUM_SLOT_BYTES)))
			return -ENOMEM;
		for (size_t i = 0; hist && i < hist_len &&
				   i < GR_SUM_SLOT_BYTES; i++)
			e->slots[i] |= hist[i];
		return 0;
	}
	return hist && hist_len ? gr_hist__merge(&e->h, hist, hist_len) : 0;
}

uint32_t gr_sum__count(const struct gr_sum *s)
{
	return s->n;
}

const struct gr_sum_ent *gr_sum__at(const struct gr_sum *s, uint32_t i)
{
	return &s->e[i];
}

int gr_sum__each(struct gr_sum *s, int dirty_only,
		 int (*fn)(void *ctx, const struct gr_sum_ent *e), void *ctx)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct gr_sum_ent *e = &s->e[i];
		if (dirty_only && !e->dirty)
			continue;
		int rc = fn(ctx, e);
		if (rc)
			return rc;
		e->dirty = 0;
	}
	return 0;
}

/* ---- in a segment -------------------------------------------------------- */

const char gr_sum_ddl[] =
	"CREATE TABLE summary(kind INTEGER NOT NULL, minute INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, k0 INTEGER NOT NULL, k1 INTEGER NOT NULL,"
	" k2 INTEGER NOT NULL, k3 INTEGER NOT NULL, k4 INTEGER NOT NULL,"
	" k5 INTEGER NOT NULL, k6 INTEGER NOT NULL, knull INTEGER NOT NULL,"
	" n INTEGER, dur_sum INTEGER, dur_min INTEGER, dur_max INTEGER,"
	" bytes INTEGER, errors INTEGER, ts_min INTEGER, ts_max INTEGER,"
	" hist BLOB, dur_sq BLOB, PRIMARY KEY(kind, minute, pid, k0, k1, k2,"
	" k3, k4, k5,"
	" k6, knull)) WITHOUT ROWID;";

const char gr_sum_insert_sql[] =
	"INSERT OR REPLACE INTO summary VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
	"?,?,?,?,?,?)";

int gr_sum__put_row(struct gr_sum *s, sqlite3_stmt *st)
{
	struct gr_sum_ent e = { 0 };
	int i = 0;
	e.kind = (uint8_t)sqlite3_column_int(st, i++);
	e.minute = sqlite3_column_int64(st, i++);
	e.pid = sqlite3_column_int64(st, i++);
	for (int k = 0; k < GR_SUM_NKEYS; k++)
		e.k[k] = sqlite3_column_int64(st, i++);
	e.knull = (uint8_t)sqlite3_column_int(st, i++);
	e.n = sqlite3_column_int64(st, i++);
	e.dur_sum = sqlite3_column_int64(st, i++);
	e.dur_min = sqlite3_column_int64(st, i++);
	e.dur_max = sqlite3_column_int64(st, i++);
	e.bytes = sqlite3_column_int64(st, i++);
	e.errors = sqlite3_column_int64(st, i++);
	e.ts_min = sqlite3_column_int64(st, i++);
	e.ts_max = sqlite3_column_int64(st, i++);
	const void *h = sqlite3_column_blob(st, i);
	size_t hlen = (size_t)sqlite3_column_bytes(st, i++);
	/* dur_sq: 16 bytes, little-endian; absent from older segments */
	const uint8_t *q = NULL;
	if (sqlite3_column_count(st) > i &&
	    sqlite3_column_bytes(st, i) == 16)
		q = sqlite3_column_blob(st, i);
	e.no_sq = !q;
	for (int b = 15; q && b >= 0; b--)
		e.dur_sq = e.dur_sq << 8 | q[b];
	return gr_sum__put(s, &e, h, hlen);
}

int gr_sum__bind(sqlite3_stmt *st, const struct gr_sum_ent *e,
		 struct gr_buf *scratch)
{
	int i = 1;
	sqlite3_bind_int(st, i++, e->kind);
	sqlite3_bind_int64(st, i++, e->minute);
	sqlite3_bind_int64(st, i++, e->pid);
	for (int k = 0; k < GR_SUM_NKEYS; k++)
		sqlite3_bind_int64(st, i++, e->k[k]);
	sqlite3_bind_int(st, i++, e->knull);
	sqlite3_bind_int64(st, i++, e->n);
	sqlite3_bind_int64(st, i++, e->dur_sum);
	sqlite3_bind_int64(st, i++, e->dur_min);
	sqlite3_bind_int64(st, i++, e->dur_max);
	sqlite3_bind_int64(st, i++, e->bytes);
	sqlite3_bind_int64(st, i++, e->errors);
	sqlite3_bind_int64(st, i++, e->ts_min);
	sqlite3_bind_int64(st, i++, e->ts_max);
	if (e->kind == GR_SUM_SLOTS && e->slots) {
		sqlite3_bind_blob(st, i++, e->slots, GR_SUM_SLOT_BYTES,
				  SQLITE_STATIC);
	} else if (!GR_SUM_HAS_HIST(e->kind)) {
		sqlite3_bind_null(st, i++);
	} else {
		scratch->len = 0;
		if (gr_hist__encode(&e->h, scratch))
			return -ENOMEM;
		sqlite3_bind_blob(st, i++, scratch->p, (int)scratch->len,
				  SQLITE_STATIC);
	}
	uint8_t q[16];
	unsigned __int128 v = e->dur_sq;
	for (int b = 0; b < 16; b++, v >>= 8)
		q[b] = (uint8_t)v;
	if (e->no_sq)
		sqlite3_bind_null(st, i++);
	else
		sqlite3_bind_blob(st, i++, q, sizeof(q), SQLITE_TRANSIENT);
	return 0;
}

/* A summary table older than dur_sq counts as none: its segment is
 * summarized from its raw blocks, so that a standard deviation over old
 * and new segments alike is the raw events' (as --raw prints it), not
 * NULL.  So does one whose writer did not yet keep kind (no
 * GR_SUM_META_KINDS: the first three kinds only), or it would read as
 * no events at all. */
int gr_sum__stored(struct gr_segment *seg, int kind)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(seg->db, "SELECT 1 FROM pragma_table_info("
			       "'summary') WHERE name = 'dur_sq'", -1, &st,
			       NULL) == SQLITE_OK) {
		yes = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	if (!yes || kind <= GR_SUM_MEMCPY)
		return yes;
	yes = 0;
	if (sqlite3_prepare_v2(seg->db, "SELECT value FROM meta WHERE key = '"
			       GR_SUM_META_KINDS "'", -1, &st,
			       NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			yes = sqlite3_column_int64(st, 0) >> kind & 1;
		sqlite3_finalize(st);
	}
	return yes;
}

int gr_sum__load(struct gr_sum *s, struct gr_segment *seg, int kind,
		 int64_t m0, int64_t m1, const int64_t *pid, int *malformed,
		 char **err)
{
	return gr_sum__load_keyed(s, seg, kind, m0, m1, pid, -1, NULL, 0,
				  malformed, err);
}

/* Whether seg keeps whole-segment rows of kind. */
static int has_whole_rows(struct gr_segment *seg, int kind)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(seg->db, "SELECT 1 FROM summary WHERE kind = ? "
			       "AND minute = -1 LIMIT 1", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_int(st, 1, kind);
		yes = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return yes;
}

int gr_sum__load_keyed(struct gr_sum *s, struct gr_segment *seg, int kind,
		       int64_t m0, int64_t m1, const int64_t *pid, int key,
		       const int64_t *ids, int nids, int *malformed,
		       char **err)
{
	sqlite3_stmt *st;
	/* The key test goes into the statement: SQLite then decodes a row
	 * that fails it only up to the key, while a row it returns is
	 * decoded whole (SELECT *), which is most of what a row costs. */
	sqlite3_str *q = sqlite3_str_new(NULL);
	/* The primary key starts kind, minute, pid, k0: with the minutes
	 * named (each found by a seek from the one before), and the process
	 * (or, for a k0 filter, each process a sealed segment's
	 * whole-segment rows list), SQLite seeks to the rows instead of
	 * walking every row of the range (one process's minutes for
	 * `process`, the main kernel's rows among every kernel's for
	 * gpu-util).  A segment still being written lists no processes,
	 * nor one sealed without them (by an older gpurec, after a crash). */
	int seek = m0 >= 0 && m1 >= m0 &&
		   (pid || (key == 0 && nids > 0 &&
			    gr_segment__info(seg)->sealed &&
			    has_whole_rows(seg, kind)));
	*malformed = 0;
	if (seek) {
		sqlite3_str_appendall(q, "SELECT * FROM summary WHERE kind = ?1 "
			"AND minute IN (WITH RECURSIVE m(x) AS (SELECT "
			"min(minute) FROM summary WHERE kind = ?1 AND minute "
			"BETWEEN ?2 AND ?3 UNION ALL SELECT (SELECT min(minute) "
			"FROM summary WHERE kind = ?1 AND minute > x AND "
			"minute <= ?3) FROM m WHERE x IS NOT NULL) SELECT x "
			"FROM m WHERE x IS NOT NULL)");
		if (!pid)
			sqlite3_str_appendall(q, " AND pid IN (SELECT DISTINCT "
				"pid FROM summary WHERE kind = ?1 AND "
				"minute = -1)");
	} else {
		sqlite3_str_appendall(q, "SELECT * FROM summary WHERE kind = ?1 "
				      "AND minute BETWEEN ?2 AND ?3");
	}
	if (pid)
		sqlite3_str_appendall(q, " AND pid = ?4");
	if (key >= 0 && key < GR_SUM_NKEYS) {
		sqlite3_str_appendf(q, " AND knull >> %d & 1 = 0 AND k%d IN (",
				    key, key);
		for (int i = 0; i < nids; i++)
			sqlite3_str_appendf(q, "%s%lld", i ? "," : "",
					    (long long)ids[i]);
		sqlite3_str_appendall(q, ")");
	}
	char *sql = sqlite3_str_finish(q);
	if (!sql)
		return -ENOMEM;
	int prc = sqlite3_prepare_v2(seg->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (prc != SQLITE_OK) {
		*err = strdup(sqlite3_errmsg(seg->db));
		return -EIO;
	}
	sqlite3_bind_int(st, 1, kind);
	sqlite3_bind_int64(st, 2, m0);
	sqlite3_bind_int64(st, 3, m1);
	if (pid)
		sqlite3_bind_int64(st, 4, *pid);
	int rc = 0, rows = 0;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		rows++;
		rc = gr_sum__put_row(s, st);
		if (rc == -EINVAL) {
			(*malformed)++;
			rc = 0;
		}
	}
	sqlite3_finalize(st);
	return rc ? rc : rows;
}
