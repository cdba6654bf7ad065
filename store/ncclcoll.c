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

const char gr_arr_ddl[] =
	"CREATE TABLE nccl_arr(block INTEGER PRIMARY KEY,"
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
	uint32_t *rowrec;	/* per row: its record, or UINT32_MAX */
	uint32_t caprow;
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
	free(b->rowrec);
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
	if (n > b->caprow) {
		uint32_t *r = realloc(b->rowrec, n * sizeof(*r));
		if (!r)
			return -ENOMEM;
		b->rowrec = r;
		b->caprow = n;
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
		b->rowrec[i] = UINT32_MAX;
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
		b->rowrec[i] = (uint32_t)(r - b->rec);
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

/* ---- arrivals ------------------------------------------------------------ */

struct arr_call {
	uint32_t slot;
	int64_t ts;
};

static int cmp_call(const void *pa, const void *pb)
{
	const struct arr_call *a = pa, *b = pb;
	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	return (a->ts > b->ts) - (a->ts < b->ts);
}

static uint64_t hash_words(const int64_t *k, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (uint64_t)k[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static int put(struct gr_buf *o, uint64_t v)
{
	if (o->cap - o->len < 10 && gr_buf__reserve(o, 10))
		return -ENOMEM;
	o->len += gr_varint_put(o->p + o->len, v);
	return 0;
}

static int put_z(struct gr_buf *o, int64_t v)
{
	return put(o, gr_zigzag(v));
}

/* A process's calls in the block (all ops): rank-pace's time in NCCL. */
struct arr_proc {
	int64_t pid, min_ts, max_ts, sumdur, maxend;
	int has_dur;
};

/* Slot key words: comm, pid, rank, nranks, op, bytes. */
#define SLOT_WORDS 6

int gr_coll_builder__arrivals(struct gr_coll_builder *b,
			      const struct gr_colbuf *cols, uint32_t n,
			      struct gr_buf *out)
{
	uint32_t m = b->nrec, nslot = 0, npat = 0, npats = 0, nproc = 0;
	uint32_t cap = 64;
	int err = -ENOMEM;

	out->len = 0;
	while (cap < 2 * (uint64_t)n + 2)
		cap *= 2;
	uint32_t *pos = malloc((m ? m : 1) * sizeof(*pos));
	uint32_t *start = calloc((size_t)m + 1, sizeof(*start));
	uint32_t *rowslot = malloc((n ? n : 1) * sizeof(*rowslot));
	uint32_t *stab = calloc(cap, sizeof(*stab));	/* slot + 1 */
	int64_t (*skey)[SLOT_WORDS] = malloc((n ? n : 1) * sizeof(*skey));
	struct arr_call *calls = malloc((n ? n : 1) * sizeof(*calls));
	uint32_t *ptab = calloc(cap, sizeof(*ptab));	/* pattern + 1 */
	uint32_t *pstart = malloc(((size_t)m + 1) * sizeof(*pstart));
	uint32_t *pslots = malloc((n ? n : 1) * sizeof(*pslots));
	uint32_t *recpat = malloc((m ? m : 1) * sizeof(*recpat));
	uint32_t *prtab = calloc(cap, sizeof(*prtab));	/* proc + 1 */
	struct arr_proc *procs = malloc((n ? n : 1) * sizeof(*procs));
	struct gr_buf hdr = { 0 };

	if (!pos || !start || !rowslot || !stab || !skey || !calls || !ptab ||
	    !pstart || !pslots || !recpat || !prtab || !procs)
		goto out;
	for (uint32_t i = 0; i < m; i++)
		pos[b->order[i]] = i;
	for (uint32_t i = 0; i < n; i++) {
		int64_t ts = isnull(&cols[GR_nccl_ts], i) ? 0 :
			     cols[GR_nccl_ts].v[i];
		int64_t dur = val(&cols[GR_nccl_dur], i);
		/* Every call's process, whatever its op. */
		int64_t pid = val(&cols[GR_nccl_pid], i);
		uint32_t h = (uint32_t)hash_words(&pid, 1) & (cap - 1);
		while (prtab[h] && procs[prtab[h] - 1].pid != pid)
			h = (h + 1) & (cap - 1);
		if (!prtab[h]) {
			procs[nproc] = (struct arr_proc){
				.pid = pid, .min_ts = ts, .max_ts = ts,
			};
			prtab[h] = ++nproc;
		}
		struct arr_proc *pr = &procs[prtab[h] - 1];
		if (ts < pr->min_ts)
			pr->min_ts = ts;
		if (ts > pr->max_ts)
			pr->max_ts = ts;
		if (dur != GR_COLL_NULL) {
			int64_t end = (int64_t)((uint64_t)ts + (uint64_t)dur);
			if (!pr->has_dur || end > pr->maxend)
				pr->maxend = end;
			pr->sumdur = (int64_t)((uint64_t)pr->sumdur +
					       (uint64_t)dur);
			pr->has_dur = 1;
		}
		if (b->rowrec[i] == UINT32_MAX)
			continue;
		/* A collective's call: its slot (rank, op, size) and record. */
		int64_t k[SLOT_WORDS] = { cols[GR_nccl_comm_id].v[i],
					  val(&cols[GR_nccl_pid], i),
					  val(&cols[GR_nccl_rank], i),
					  val(&cols[GR_nccl_nranks], i),
					  cols[GR_nccl_op].v[i],
					  val(&cols[GR_nccl_bytes], i) };
		h = (uint32_t)hash_words(k, SLOT_WORDS) & (cap - 1);
		while (stab[h] && memcmp(skey[stab[h] - 1], k, sizeof(k)))
			h = (h + 1) & (cap - 1);
		if (!stab[h]) {
			memcpy(skey[nslot], k, sizeof(k));
			stab[h] = ++nslot;
		}
		rowslot[i] = stab[h] - 1;
		start[pos[b->rowrec[i]] + 1]++;
	}
	for (uint32_t r = 0; r < m; r++)
		start[r + 1] += start[r];
	for (uint32_t i = 0; i < n; i++) {
		if (b->rowrec[i] == UINT32_MAX)
			continue;
		uint32_t r = pos[b->rowrec[i]];
		calls[start[r]++] = (struct arr_call){
			.slot = rowslot[i],
			.ts = isnull(&cols[GR_nccl_ts], i) ? 0 :
			      cols[GR_nccl_ts].v[i],
		};
	}
	memmove(start + 1, start, (size_t)m * sizeof(*start));
	start[0] = 0;
	/* Each record's calls by slot; its pattern, shared where equal. */
	for (uint32_t r = 0; r < m; r++) {
		struct arr_call *c = calls + start[r];
		uint32_t k = start[r + 1] - start[r];
		qsort(c, k, sizeof(*c), cmp_call);
		uint64_t hh = 0x9e3779b97f4a7c15ull ^ k;
		for (uint32_t j = 0; j < k; j++) {
			hh ^= c[j].slot;
			hh *= 0xff51afd7ed558ccdull;
			hh ^= hh >> 32;
		}
		uint32_t h = (uint32_t)hh & (cap - 1);
		for (; ptab[h]; h = (h + 1) & (cap - 1)) {
			uint32_t p = ptab[h] - 1;
			uint32_t len = pstart[p + 1] - pstart[p], j;
			if (len != k)
				continue;
			for (j = 0; j < k && pslots[pstart[p] + j] == c[j].slot;
			     j++)
				;
			if (j == k)
				break;
		}
		if (!ptab[h]) {
			pstart[npat] = npats;
			for (uint32_t j = 0; j < k; j++)
				pslots[npats++] = c[j].slot;
			pstart[++npat] = npats;
			ptab[h] = npat;
		}
		recpat[r] = ptab[h] - 1;
	}
	/* The payload: version, slots, patterns, processes. */
	if (gr_buf__reserve(out, 16 + (size_t)nslot * 50))
		goto out;
	out->p[out->len++] = 2;
	if (put(out, nslot))
		goto out;
	for (uint32_t i = 0; i < nslot; i++) {
		uint64_t c = (uint64_t)skey[i][0];
		uint8_t nulls = 0;
		if (gr_buf__reserve(out, 9))
			goto out;
		for (int j = 0; j < 8; j++)
			out->p[out->len++] = (uint8_t)(c >> (8 * j));
		/* pid, rank, nranks, bytes: bits 0..3 (op is never NULL). */
		static const int w[4] = { 1, 2, 3, 5 };
		for (int j = 0; j < 4; j++)
			if (skey[i][w[j]] == GR_COLL_NULL)
				nulls |= (uint8_t)(1u << j);
		out->p[out->len++] = nulls;
		for (int j = 0; j < 3; j++)
			if (skey[i][w[j]] != GR_COLL_NULL &&
			    put_z(out, skey[i][w[j]]))
				goto out;
		if (put(out, (uint64_t)skey[i][4]) ||
		    (skey[i][5] != GR_COLL_NULL && put_z(out, skey[i][5])))
			goto out;
	}
	if (put(out, npat))
		goto out;
	for (uint32_t p = 0; p < npat; p++) {
		if (put(out, pstart[p + 1] - pstart[p]))
			goto out;
		for (uint32_t j = pstart[p]; j < pstart[p + 1]; j++)
			if (put(out, pslots[j]))
				goto out;
	}
	if (put(out, nproc))
		goto out;
	for (uint32_t i = 0; i < nproc; i++) {
		const struct arr_proc *pr = &procs[i];
		uint8_t flags = (pr->pid == GR_COLL_NULL ? 1 : 0) |
				(pr->has_dur ? 2 : 0);
		if (gr_buf__reserve(out, 1))
			goto out;
		out->p[out->len++] = flags;
		if ((pr->pid != GR_COLL_NULL && put_z(out, pr->pid)) ||
		    put_z(out, pr->min_ts) ||
		    put(out, (uint64_t)pr->max_ts - (uint64_t)pr->min_ts) ||
		    (pr->has_dur && (put_z(out, pr->sumdur) ||
				     put_z(out, pr->maxend))))
			goto out;
	}
	/* The records' heads (pattern, seq, first), then their calls'
	 * entries: a reader of the heads alone skips the entries. */
	int64_t lseq = 0, lfirst = 0;
	for (uint32_t r = 0; r < m; r++) {
		const int64_t *v = b->rec[b->order[r]].v;
		if (put(&hdr, recpat[r]) ||
		    put_z(&hdr, (int64_t)((uint64_t)v[GR_COLL_SEQ] -
					  (uint64_t)lseq)) ||
		    put_z(&hdr, (int64_t)((uint64_t)v[GR_COLL_FIRST] -
					  (uint64_t)lfirst)))
			goto out;
		lseq = v[GR_COLL_SEQ];
		lfirst = v[GR_COLL_FIRST];
	}
	if (put(out, m) || put(out, hdr.len) || gr_buf__reserve(out, hdr.len))
		goto out;
	memcpy(out->p + out->len, hdr.p, hdr.len);
	out->len += hdr.len;
	for (uint32_t r = 0; r < m; r++) {
		int64_t first = b->rec[b->order[r]].v[GR_COLL_FIRST];
		struct arr_call *c = calls + start[r];
		uint32_t k = start[r + 1] - start[r];
		for (uint32_t j = 0; j < k; j++)
			if (put(out, (uint64_t)c[j].ts - (uint64_t)first))
				goto out;
	}
	err = 0;
out:
	free(pos);
	free(start);
	free(rowslot);
	free(stab);
	free(skey);
	free(calls);
	free(ptab);
	free(pstart);
	free(pslots);
	free(recpat);
	free(prtab);
	free(procs);
	gr_buf__free(&hdr);
	return err;
}

void gr_arr__free(struct gr_arr *a)
{
	free(a->slot);
	free(a->pat);
	free(a->pats);
	free(a->proc);
	memset(a, 0, sizeof(*a));
}

static int grow(void **p, uint32_t *cap, uint32_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	void *q = realloc(*p, (size_t)n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int get_z(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u;
	if (gr_varint_get(p, end, &u))
		return -EINVAL;
	*v = gr_unzigzag(u);
	return 0;
}

int gr_arr__parse(struct gr_arr *a, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	uint64_t v;

	if (len < 1 || *p++ != 2)
		return -EINVAL;
	/* Counts bounded by the bytes each entry takes at least. */
	if (gr_varint_get(&p, end, &v) || v > len / 10)
		return -EINVAL;
	a->nslot = (uint32_t)v;
	if (grow((void **)&a->slot, &a->cap[0], a->nslot ? a->nslot : 1,
		 sizeof(*a->slot)))
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nslot; i++) {
		struct gr_arr_slot *s = &a->slot[i];
		int64_t *f[3] = { &s->pid, &s->rank, &s->nranks };
		uint64_t c = 0;
		if (end - p < 9)
			return -EINVAL;
		for (int j = 0; j < 8; j++)
			c |= (uint64_t)p[j] << (8 * j);
		p += 8;
		s->comm = (int64_t)c;
		uint8_t nulls = *p++;
		if (nulls & ~15u)
			return -EINVAL;
		for (int j = 0; j < 3; j++) {
			*f[j] = GR_COLL_NULL;
			if (!(nulls >> j & 1) && get_z(&p, end, f[j]))
				return -EINVAL;
		}
		if (gr_varint_get(&p, end, &v) || v > UINT32_MAX)
			return -EINVAL;
		s->op = (int64_t)v;
		s->bytes = GR_COLL_NULL;
		if (!(nulls & 8) && get_z(&p, end, &s->bytes))
			return -EINVAL;
	}
	if (gr_varint_get(&p, end, &v) || v > len / 2)
		return -EINVAL;
	a->npat = (uint32_t)v;
	if (grow((void **)&a->pat, &a->cap[1], a->npat + 1, sizeof(*a->pat)))
		return -ENOMEM;
	uint32_t np = 0;
	a->maxlen = 0;
	for (uint32_t i = 0; i < a->npat; i++) {
		uint64_t k;
		if (gr_varint_get(&p, end, &k) || k == 0 ||
		    k > (uint64_t)(end - p))
			return -EINVAL;
		a->pat[i] = np;
		if (grow((void **)&a->pats, &a->cap[2], np + (uint32_t)k,
			 sizeof(*a->pats)))
			return -ENOMEM;
		int64_t comm = 0;
		for (uint32_t j = 0; j < k; j++) {
			if (gr_varint_get(&p, end, &v) || v >= a->nslot ||
			    (j && v < a->pats[np - 1]))
				return -EINVAL;
			/* One communicator a record. */
			if (!j)
				comm = a->slot[v].comm;
			else if (a->slot[v].comm != comm)
				return -EINVAL;
			a->pats[np++] = (uint32_t)v;
		}
		if (k > a->maxlen)
			a->maxlen = (uint32_t)k;
	}
	a->pat[a->npat] = np;
	if (gr_varint_get(&p, end, &v) || v > len / 3)
		return -EINVAL;
	a->nproc = (uint32_t)v;
	if (grow((void **)&a->proc, &a->cap[3], a->nproc ? a->nproc : 1,
		 sizeof(*a->proc)))
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nproc; i++) {
		struct gr_arr_proc *pr = &a->proc[i];
		uint64_t span;
		if (p >= end)
			return -EINVAL;
		uint8_t flags = *p++;
		if (flags & ~3u)
			return -EINVAL;
		pr->pid = GR_COLL_NULL;
		pr->has_dur = flags >> 1 & 1;
		pr->sumdur = pr->maxend = 0;
		if ((!(flags & 1) && get_z(&p, end, &pr->pid)) ||
		    get_z(&p, end, &pr->min_ts) ||
		    gr_varint_get(&p, end, &span) ||
		    (pr->has_dur && (get_z(&p, end, &pr->sumdur) ||
				     get_z(&p, end, &pr->maxend))))
			return -EINVAL;
		pr->max_ts = (int64_t)((uint64_t)pr->min_ts + span);
		if (pr->max_ts < pr->min_ts)
			return -EINVAL;
	}
	uint64_t hlen;
	if (gr_varint_get(&p, end, &v) || v > len ||
	    gr_varint_get(&p, end, &hlen) || hlen > (uint64_t)(end - p))
		return -EINVAL;
	a->nrec = a->left = (uint32_t)v;
	a->p = p;
	a->hend = a->q = p + hlen;
	a->end = end;
	a->seq = a->first = 0;
	return 0;
}

int gr_arr__next(struct gr_arr *a, struct gr_arr_rec *r, int64_t *ts)
{
	const uint8_t *p = a->p, *hend = a->hend;
	uint64_t pat, ds, df, v;

	if (!a->left)
		return p == hend && (!ts || a->q == a->end) ? 0 : -EINVAL;
	if (gr_varint_get(&p, hend, &pat) || pat >= a->npat ||
	    gr_varint_get(&p, hend, &ds) || gr_varint_get(&p, hend, &df))
		return -EINVAL;
	a->seq = (int64_t)((uint64_t)a->seq + (uint64_t)gr_unzigzag(ds));
	a->first = (int64_t)((uint64_t)a->first + (uint64_t)gr_unzigzag(df));
	r->slots = a->pats + a->pat[pat];
	r->n = a->pat[pat + 1] - a->pat[pat];
	r->comm = a->slot[r->slots[0]].comm;
	r->seq = a->seq;
	r->first = a->first;
	a->p = p;
	a->left--;
	if (!ts)
		return 1;
	const uint8_t *q = a->q, *end = a->end;
	int zero = 0;
	for (uint32_t j = 0; j < r->n; j++) {
		/* One to three bytes, the common cases, inline. */
		if (end - q >= 3 && q[0] < 0x80) {
			v = *q++;
		} else if (end - q >= 3 && q[1] < 0x80) {
			v = (q[0] & 0x7fu) | (uint64_t)q[1] << 7;
			q += 2;
		} else if (end - q >= 3 && q[2] < 0x80) {
			v = (q[0] & 0x7fu) | (uint64_t)(q[1] & 0x7f) << 7 |
			    (uint64_t)q[2] << 14;
			q += 3;
		} else if (gr_varint_get(&q, end, &v) || v > INT64_MAX) {
			return -EINVAL;
		}
		zero |= v == 0;
		ts[j] = (int64_t)((uint64_t)a->first + v);
	}
	/* The first is one of the calls. */
	if (!zero)
		return -EINVAL;
	a->q = q;
	return 1;
}

int gr_arr__has(struct gr_segment *s, int64_t id, uint32_t crc)
{
	sqlite3_stmt *st = s->arr_has_stmt;

	if (s->arr_absent)
		return 0;
	if (!st) {
		if (sqlite3_prepare_v2(s->db, "SELECT crc FROM " GR_ARR_TABLE
				       " WHERE block=?1", -1, &st,
				       NULL) != SQLITE_OK) {
			s->arr_absent = 1;
			return 0;
		}
		s->arr_has_stmt = st;
	}
	sqlite3_bind_int64(st, 1, id);
	int ok = sqlite3_step(st) == SQLITE_ROW &&
		 (uint32_t)sqlite3_column_int64(st, 0) == crc;
	sqlite3_reset(st);
	return ok;
}

int gr_arr__payload(struct gr_segment *s, int64_t id, uint32_t crc,
		    int verify, const uint8_t **p, size_t *len)
{
	sqlite3_stmt *st = s->arr_stmt;

	if (s->arr_absent)
		return 0;
	if (!st) {
		if (sqlite3_prepare_v2(s->db, "SELECT crc, pcrc, payload FROM "
				       GR_ARR_TABLE " WHERE block=?1", -1,
				       &st, NULL) != SQLITE_OK) {
			s->arr_absent = 1;
			return 0;
		}
		s->arr_stmt = st;
	}
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	int ok = sqlite3_step(st) == SQLITE_ROW &&
		 (uint32_t)sqlite3_column_int64(st, 0) == crc &&
		 (*p = sqlite3_column_blob(st, 2)) &&
		 ((*len = (size_t)sqlite3_column_bytes(st, 2)), !verify ||
		  gr_block_crc(GR_ARR_TABLE, 0, 0, 0, *p, *len) ==
		  (uint32_t)sqlite3_column_int64(st, 1));
	if (!ok)
		sqlite3_reset(st);
	return ok;
}

void gr_arr__done(struct gr_segment *s)
{
	if (s->arr_stmt)
		sqlite3_reset(s->arr_stmt);
}
