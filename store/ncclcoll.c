/* ncclcoll.c - NCCL collectives per block (see ncclcoll.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "schema/schema.h"
#include "store/ncclcoll.h"
#include "store/segment.h"

const char gr_coll_ddl[] =
	"CREATE TABLE nccl_coll(block INTEGER PRIMARY KEY,"
	" crc INTEGER NOT NULL, pcrc INTEGER NOT NULL,"
	" payload BLOB NOT NULL);";

int gr_coll_is_collective(const char *op, size_t len)
{
	static const char *const ops[] = {
		"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
		"Reduce", "AllToAll",
	};
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(*ops); i++)
		if (strlen(ops[i]) == len && !memcmp(op, ops[i], len))
			return 1;
	return 0;
}

void gr_coll__add(struct gr_coll *c, int64_t ts, int64_t rank, int64_t pid,
		  int64_t op, int64_t bytes, int64_t nranks)
{
	int64_t *v = c->v;

	if (!v[GR_COLL_N]) {
		v[GR_COLL_FIRST] = v[GR_COLL_LAST] = ts;
		v[GR_COLL_PREV] = GR_COLL_NULL;
	} else {
		if (ts < v[GR_COLL_FIRST])
			v[GR_COLL_FIRST] = ts;
		if (!gr_coll_later(ts, rank, v[GR_COLL_LAST],
				   v[GR_COLL_RANK])) {
			/* Not the new last: the second latest, maybe. */
			if (v[GR_COLL_PREV] == GR_COLL_NULL ||
			    ts > v[GR_COLL_PREV])
				v[GR_COLL_PREV] = ts;
			v[GR_COLL_N]++;
			return;
		}
		/* The last so far becomes the one before it. */
		v[GR_COLL_PREV] = v[GR_COLL_LAST];
		v[GR_COLL_LAST] = ts;
	}
	v[GR_COLL_N]++;
	v[GR_COLL_RANK] = rank;
	v[GR_COLL_PID] = pid;
	v[GR_COLL_OP] = op;
	v[GR_COLL_BYTES] = bytes;
	v[GR_COLL_NRANKS] = nranks;
}

struct gr_coll_builder {
	struct gr_coll *rec;
	uint32_t nrec, caprec;
	uint32_t *slot;		/* record + 1, or 0 */
	uint32_t capslot;	/* a power of two */
	uint32_t *order;
	int64_t *cv[GR_COLL_NCOLS];
	uint8_t *cn[GR_COLL_NCOLS];
	uint32_t capcol;
};

struct gr_coll_builder *gr_coll_builder__new(void)
{
	return calloc(1, sizeof(struct gr_coll_builder));
}

void gr_coll_builder__free(struct gr_coll_builder *b)
{
	if (!b)
		return;
	free(b->rec);
	free(b->slot);
	free(b->order);
	for (int i = 0; i < GR_COLL_NCOLS; i++) {
		free(b->cv[i]);
		free(b->cn[i]);
	}
	free(b);
}

static uint32_t hash2(int64_t a, int64_t s)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)s;
	h *= 0xff51afd7ed558ccdull;
	return (uint32_t)(h ^ h >> 32);
}

/* Sizes the builder for a block of n rows.  Returns 0 or -ENOMEM. */
static int reserve(struct gr_coll_builder *b, uint32_t n)
{
	uint32_t cap = 64;
	while (cap < 2 * (uint64_t)n)
		cap *= 2;
	if (cap > b->capslot) {
		uint32_t *s = realloc(b->slot, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		b->slot = s;
		b->capslot = cap;
	}
	memset(b->slot, 0, b->capslot * sizeof(*b->slot));
	if (n > b->caprec) {
		struct gr_coll *r = realloc(b->rec, n * sizeof(*r));
		uint32_t *o = realloc(b->order, n * sizeof(*o));
		if (r)
			b->rec = r;
		if (o)
			b->order = o;
		if (!r || !o)
			return -ENOMEM;
		b->caprec = n;
	}
	b->nrec = 0;
	return 0;
}

static int cmp_rec(const void *pa, const void *pb, void *arg)
{
	const struct gr_coll *r = arg;
	const int64_t *a = r[*(const uint32_t *)pa].v;
	const int64_t *x = r[*(const uint32_t *)pb].v;
	if (a[GR_COLL_COMM] != x[GR_COLL_COMM])
		return a[GR_COLL_COMM] < x[GR_COLL_COMM] ? -1 : 1;
	return (a[GR_COLL_SEQ] > x[GR_COLL_SEQ]) -
	       (a[GR_COLL_SEQ] < x[GR_COLL_SEQ]);
}

static inline int isnull(const struct gr_colbuf *c, uint32_t i)
{
	return !c->v || (c->nulls && c->nulls[i >> 3] >> (i & 7) & 1);
}

static inline int64_t val(const struct gr_colbuf *c, uint32_t i)
{
	return isnull(c, i) ? GR_COLL_NULL : c->v[i];
}

int gr_coll_builder__encode(struct gr_coll_builder *b,
			    const struct gr_colbuf *cols, uint32_t n,
			    int (*is_coll)(void *ctx, int64_t id), void *ctx,
			    struct gr_encoder *e, struct gr_buf *out,
			    uint32_t *nrec)
{
	const struct gr_colbuf *comm = &cols[GR_nccl_comm_id],
			       *seq = &cols[GR_nccl_seq],
			       *op = &cols[GR_nccl_op];
	int64_t memo_id = GR_COLL_NULL;
	int memo = 0;

	*nrec = 0;
	out->len = 0;
	if (!comm->v || !seq->v || !op->v || !cols[GR_nccl_ts].v)
		return 0;
	if (reserve(b, n))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (isnull(comm, i) || isnull(seq, i) || isnull(op, i))
			continue;
		if (op->v[i] != memo_id) {
			memo_id = op->v[i];
			memo = is_coll(ctx, memo_id);
		}
		if (!memo)
			continue;
		int64_t c = comm->v[i], s = seq->v[i];
		uint32_t k = hash2(c, s) & (b->capslot - 1);
		struct gr_coll *r;
		while (b->slot[k]) {
			r = &b->rec[b->slot[k] - 1];
			if (r->v[GR_COLL_COMM] == c && r->v[GR_COLL_SEQ] == s)
				break;
			k = (k + 1) & (b->capslot - 1);
		}
		if (b->slot[k]) {
			r = &b->rec[b->slot[k] - 1];
		} else {
			r = &b->rec[b->nrec];
			memset(r, 0, sizeof(*r));
			r->v[GR_COLL_COMM] = c;
			r->v[GR_COLL_SEQ] = s;
			b->slot[k] = ++b->nrec;
		}
		/* The nccl table's ts is never NULL; 0 as its readers take
		 * a NULL one. */
		gr_coll__add(r, isnull(&cols[GR_nccl_ts], i) ? 0 :
				cols[GR_nccl_ts].v[i],
			     val(&cols[GR_nccl_rank], i),
			     val(&cols[GR_nccl_pid], i), op->v[i],
			     val(&cols[GR_nccl_bytes], i),
			     val(&cols[GR_nccl_nranks], i));
	}
	if (!b->nrec)
		return 0;
	uint32_t m = b->nrec;
	if (m > b->capcol) {
		for (int j = 0; j < GR_COLL_NCOLS; j++) {
			int64_t *v = realloc(b->cv[j], m * sizeof(*v));
			uint8_t *z = realloc(b->cn[j], (m + 7) / 8);
			if (v)
				b->cv[j] = v;
			if (z)
				b->cn[j] = z;
			if (!v || !z)
				return -ENOMEM;
		}
		b->capcol = m;
	}
	for (uint32_t i = 0; i < m; i++)
		b->order[i] = i;
	qsort_r(b->order, m, sizeof(*b->order), cmp_rec, b->rec);
	struct gr_colbuf cb[GR_COLL_NCOLS];
	for (int j = 0; j < GR_COLL_NCOLS; j++) {
		int any = 0;
		memset(b->cn[j], 0, (m + 7) / 8);
		for (uint32_t i = 0; i < m; i++) {
			int64_t v = b->rec[b->order[i]].v[j];
			if (v == GR_COLL_NULL) {
				b->cn[j][i >> 3] |= (uint8_t)(1u << (i & 7));
				any = 1;
				v = 0;
			}
			b->cv[j][i] = v;
		}
		cb[j].v = b->cv[j];
		cb[j].nulls = any ? b->cn[j] : NULL;
	}
	int err = gr_encoder__encode(e, cb, GR_COLL_NCOLS, m, NULL, out);
	if (err)
		return err;
	*nrec = m;
	return 0;
}

int gr_coll__payload(struct gr_segment *s, int64_t id, uint32_t crc,
		     struct gr_block *blk)
{
	sqlite3_stmt *st = s->coll_stmt;

	if (s->coll_absent)
		return 0;
	if (!st) {
		if (sqlite3_prepare_v2(s->db, "SELECT crc, pcrc, payload FROM "
				       GR_COLL_TABLE " WHERE block=?1", -1,
				       &st, NULL) != SQLITE_OK) {
			s->coll_absent = 1; /* a segment older than it */
			return 0;
		}
		s->coll_stmt = st;
	}
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	const uint8_t *p;
	size_t len;
	/* The row count is the payload's own: its checksum covers it. */
	int ok = sqlite3_step(st) == SQLITE_ROW &&
		 (uint32_t)sqlite3_column_int64(st, 0) == crc &&
		 (p = sqlite3_column_blob(st, 2)) &&
		 !gr_block__parse(blk, p,
				  len = (size_t)sqlite3_column_bytes(st, 2)) &&
		 blk->ncols == GR_COLL_NCOLS &&
		 gr_block_crc(GR_COLL_TABLE, 0, 0, blk->nrows, p, len) ==
		 (uint32_t)sqlite3_column_int64(st, 1);
	if (!ok)
		sqlite3_reset(st);
	return ok;
}

void gr_coll__done(struct gr_segment *s)
{
	if (s->coll_stmt)
		sqlite3_reset(s->coll_stmt);
}
