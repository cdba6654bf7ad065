/* test_ncclcoll.c - the collectives kept per nccl block (store/ncclcoll.h):
 * each record must say what the block's calls say, in nccl-arrivals'
 * order (latest first, then the lower rank, NULL lowest). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "store/codec.h"
#include "store/ncclcoll.h"
#include "tests/unit/test.h"

#define NUL GR_COLL_NULL

struct call {
	int64_t comm, seq, ts, rank, pid, op, bytes, nranks;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The order the report sorts a collective's calls in: latest first, then
 * the lower rank (NULL first, as SQLite sorts it). */
static int before(const struct call *a, const struct call *b)
{
	if (a->ts != b->ts)
		return a->ts > b->ts;
	return a->rank < b->rank;
}

/* The record the calls c[0..n) of one collective make, by sorting. */
static struct gr_coll expect(const struct call *c, int n)
{
	int p1 = 0, p2 = -1;
	struct gr_coll r = { { 0 } };
	int64_t first = c[0].ts;
	for (int i = 1; i < n; i++) {
		if (c[i].ts < first)
			first = c[i].ts;
		if (before(&c[i], &c[p1])) {
			p2 = p1;
			p1 = i;
		} else if (p2 < 0 || c[i].ts > c[p2].ts) {
			p2 = i;
		}
	}
	r.v[GR_COLL_COMM] = c[0].comm;
	r.v[GR_COLL_SEQ] = c[0].seq;
	r.v[GR_COLL_N] = n;
	r.v[GR_COLL_FIRST] = first;
	r.v[GR_COLL_LAST] = c[p1].ts;
	r.v[GR_COLL_PREV] = p2 < 0 ? NUL : c[p2].ts;
	r.v[GR_COLL_RANK] = c[p1].rank;
	r.v[GR_COLL_PID] = c[p1].pid;
	r.v[GR_COLL_OP] = c[p1].op;
	r.v[GR_COLL_BYTES] = c[p1].bytes;
	r.v[GR_COLL_NRANKS] = c[p1].nranks;
	return r;
}

/* Random collectives of 1..9 calls with many ties (ts in 0..7) and NULL
 * ranks, added in random orders: the record is the sorted one's. */
TEST(add_keeps_last_and_the_one_before)
{
	for (int round = 0; round < 3000; round++) {
		struct call c[9];
		int n = 1 + (int)(next() % 9);
		for (int i = 0; i < n; i++) {
			c[i] = (struct call){
				.comm = 5, .seq = round, .ts = (int64_t)(next() % 8),
				.rank = next() % 5 == 0 ? NUL :
					(int64_t)(next() % 6),
				.pid = 100 + i, .op = 1 + (int64_t)(next() % 3),
				.bytes = i % 4 ? 4096 * i : NUL, .nranks = 8,
			};
		}
		/* Ties on ts and rank make "the last" ambiguous to SQLite
		 * as well; give each (ts, rank) one call. */
		int dup = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < i; j++)
				dup |= c[i].ts == c[j].ts && c[i].rank == c[j].rank;
		if (dup)
			continue;
		struct gr_coll want = expect(c, n), got = { { 0 } };
		got.v[GR_COLL_COMM] = 5;
		got.v[GR_COLL_SEQ] = round;
		int ord[9];
		for (int i = 0; i < n; i++)
			ord[i] = i;
		for (int i = n - 1; i > 0; i--) {
			int j = (int)(next() % (uint64_t)(i + 1)), t = ord[i];
			ord[i] = ord[j];
			ord[j] = t;
		}
		for (int i = 0; i < n; i++) {
			const struct call *x = &c[ord[i]];
			gr_coll__add(&got, x->ts, x->rank, x->pid, x->op,
				     x->bytes, x->nranks);
		}
		for (int k = 0; k < GR_COLL_NCOLS; k++)
			CHECK_EQ_INT(got.v[k], want.v[k]);
		/* And in reverse. */
		memset(&got, 0, sizeof(got));
		got.v[GR_COLL_COMM] = 5;
		got.v[GR_COLL_SEQ] = round;
		for (int i = n - 1; i >= 0; i--)
			gr_coll__add(&got, c[i].ts, c[i].rank, c[i].pid, c[i].op,
				     c[i].bytes, c[i].nranks);
		for (int k = 0; k < GR_COLL_NCOLS; k++)
			CHECK_EQ_INT(got.v[k], want.v[k]);
	}
}

static int is_coll(void *ctx, int64_t id)
{
	(void)ctx;
	return id == 1 || id == 2; /* 3: a Send */
}

static void set(struct gr_colbuf *c, uint32_t i, int64_t v)
{
	if (v == NUL) {
		c->nulls[i >> 3] |= (uint8_t)(1u << (i & 7));
		c->v[i] = 0;
	} else {
		c->v[i] = v;
	}
}

/* A block of 3 communicators x 50 seqs x 4 ranks in shuffled order, with
 * sends (op 3) and calls without comm_id or seq among them: one record a
 * (comm, seq), sorted, each equal to its calls sorted; decoded through the
 * codec as readers decode it. */
TEST(block_records_round_trip)
{
	enum { NC = 3, NS = 50, NR = 4, NCALL = NC * NS * NR + 40 };
	static struct call c[NCALL];
	struct gr_colbuf cols[GR_nccl__NCOLS];
	int n = 0;

	memset(cols, 0, sizeof(cols));
	for (int a = 0; a < NC; a++)
		for (int s = 0; s < NS; s++)
			for (int r = 0; r < NR; r++)
				c[n++] = (struct call){
					.comm = a == 1 ? -77 : 1000 + a,
					.seq = s, .ts = 1000000 * s +
						(int64_t)(next() % 50),
					.rank = r, .pid = 500 + r,
					.op = 1 + (s % 2), .bytes = 64 << s % 8,
					.nranks = NR,
				};
	for (int i = 0; i < 40; i++)
		c[n++] = (struct call){
			.comm = i % 3 ? 1000 : NUL, .seq = i % 3 == 2 ? NUL : i,
			.ts = 5 + i, .rank = 0, .pid = 9, .op = i % 3 ? 3 : 1,
			.bytes = 8, .nranks = 2,
		};
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(next() % (uint64_t)(i + 1));
		struct call t = c[i];
		c[i] = c[j];
		c[j] = t;
	}
	const int col[] = { GR_nccl_comm_id, GR_nccl_seq, GR_nccl_ts,
			    GR_nccl_rank, GR_nccl_pid, GR_nccl_op,
			    GR_nccl_bytes, GR_nccl_nranks };
	for (size_t k = 0; k < sizeof(col) / sizeof(*col); k++) {
		cols[col[k]].v = calloc(n, sizeof(int64_t));
		cols[col[k]].nulls = calloc((n + 7) / 8, 1);
		CHECK(cols[col[k]].v && cols[col[k]].nulls);
	}
	for (int i = 0; i < n; i++) {
		set(&cols[GR_nccl_comm_id], i, c[i].comm);
		set(&cols[GR_nccl_seq], i, c[i].seq);
		set(&cols[GR_nccl_ts], i, c[i].ts);
		set(&cols[GR_nccl_rank], i, c[i].rank);
		set(&cols[GR_nccl_pid], i, c[i].pid);
		set(&cols[GR_nccl_op], i, c[i].op);
		set(&cols[GR_nccl_bytes], i, c[i].bytes);
		set(&cols[GR_nccl_nranks], i, c[i].nranks);
	}
	struct gr_coll_builder *b = gr_coll_builder__new();
	struct gr_encoder *e = gr_encoder__new(1);
	struct gr_decoder *d = gr_decoder__new();
	struct gr_buf out = { 0 };
	struct gr_block blk = { 0 };
	uint32_t nrec;
	CHECK(b && e && d);
	CHECK_EQ_INT(gr_coll_builder__encode(b, cols, (uint32_t)n, is_coll,
					     NULL, e, &out, &nrec), 0);
	/* The collectives, and the 40 odd calls' own: (1000, seq) for the
	 * AllReduce ones with both keys (i % 3 == 1 is a Send). */
	CHECK_EQ_INT(nrec, NC * NS);
	CHECK_EQ_INT(gr_block__parse(&blk, out.p, out.len), 0);
	CHECK_EQ_INT(blk.nrows, nrec);
	CHECK_EQ_INT(blk.ncols, GR_COLL_NCOLS);
	int64_t *v[GR_COLL_NCOLS];
	uint8_t nl[(NC * NS + 7) / 8];
	for (int k = 0; k < GR_COLL_NCOLS; k++) {
		int has;
		v[k] = calloc(nrec, sizeof(int64_t));
		CHECK(v[k]);
		CHECK_EQ_INT(gr_decoder__column(d, &blk, k, v[k], nl, &has), 0);
		for (uint32_t i = 0; has && i < nrec; i++)
			if (nl[i >> 3] >> (i & 7) & 1)
				v[k][i] = NUL;
	}
	/* Sorted by (comm, seq): -77 first. */
	for (uint32_t i = 0; i < nrec; i++) {
		int64_t comm = v[GR_COLL_COMM][i], seq = v[GR_COLL_SEQ][i];
		struct call mine[NR];
		int m = 0;
		if (i) {
			int64_t pc = v[GR_COLL_COMM][i - 1], ps = v[GR_COLL_SEQ][i - 1];
			CHECK(pc < comm || (pc == comm && ps < seq));
		}
		for (int j = 0; j < n; j++)
			if (c[j].comm == comm && c[j].seq == seq &&
			    is_coll(NULL, c[j].op) && m < NR)
				mine[m++] = c[j];
		CHECK_EQ_INT(m, NR);
		struct gr_coll want = expect(mine, m);
		for (int k = 0; k < GR_COLL_NCOLS; k++)
			CHECK_EQ_INT(v[k][i], want.v[k]);
	}
	CHECK_EQ_INT(v[GR_COLL_COMM][0], -77);
	/* The arrivals: per record, in the records' order, each call's
	 * rank and entry, the calls the records were made from. */
	struct gr_buf ab = { 0 };
	struct gr_arr arr = { 0 };
	struct gr_arr_rec ar;
	int64_t ts[NR];
	CHECK_EQ_INT(gr_coll_builder__arrivals(b, cols, (uint32_t)n, &ab), 0);
	CHECK_EQ_INT(gr_arr__parse(&arr, ab.p, ab.len), 0);
	CHECK_EQ_INT(arr.nrec, nrec);
	/* A slot a rank, op and size (8 of those, by s % 8) of each
	 * communicator; a pattern a communicator, op and size. */
	CHECK_EQ_INT(arr.nslot, NC * NR * 8);
	CHECK_EQ_INT(arr.npat, NC * 8);
	CHECK_EQ_INT(arr.maxlen, NR);
	for (uint32_t i = 0; i < nrec; i++) {
		CHECK_EQ_INT(gr_arr__next(&arr, &ar, ts), 1);
		CHECK_EQ_INT(ar.comm, v[GR_COLL_COMM][i]);
		CHECK_EQ_INT(ar.seq, v[GR_COLL_SEQ][i]);
		CHECK_EQ_INT(ar.first, v[GR_COLL_FIRST][i]);
		CHECK_EQ_INT(ar.n, NR);
		for (uint32_t k = 0; k < ar.n; k++) {
			const struct gr_arr_slot *sl = &arr.slot[ar.slots[k]];
			int found = 0;
			for (int j = 0; j < n; j++)
				found += c[j].comm == ar.comm &&
					 c[j].seq == ar.seq &&
					 is_coll(NULL, c[j].op) &&
					 c[j].pid == sl->pid &&
					 c[j].rank == sl->rank &&
					 c[j].nranks == sl->nranks &&
					 c[j].op == sl->op &&
					 c[j].bytes == sl->bytes &&
					 c[j].ts == ts[k];
			CHECK_EQ_INT(found, 1);
			CHECK_EQ_INT(sl->comm, ar.comm);
		}
	}
	CHECK_EQ_INT(gr_arr__next(&arr, &ar, ts), 0);
	gr_arr__free(&arr);
	gr_buf__free(&ab);
	/* A block without collectives: no records, nothing to store. */
	CHECK_EQ_INT(gr_coll_builder__encode(b, cols, 0, is_coll, NULL, e,
					     &out, &nrec), 0);
	CHECK_EQ_INT(nrec, 0);
	for (int k = 0; k < GR_COLL_NCOLS; k++)
		free(v[k]);
	for (size_t k = 0; k < sizeof(col) / sizeof(*col); k++) {
		free(cols[col[k]].v);
		free(cols[col[k]].nulls);
	}
	gr_block__free(&blk);
	gr_buf__free(&out);
	gr_decoder__free(d);
	gr_encoder__free(e);
	gr_coll_builder__free(b);
}

/* Arrivals with NULL pids, ranks and nranks, a rank calling one
 * collective twice, and a negative entry; then damaged payloads, each of
 * which must fail to parse or to walk, not read as other calls. */
TEST(arrivals_nulls_and_damage)
{
	static const struct call c[] = {
		{ 9, 1, 500, NUL, NUL, 1, 8, NUL },
		{ 9, 1, 520, 0, 40, 1, 8, 2 },
		{ 9, 1, 510, 0, 40, 1, 8, 2 },	/* rank 0 again */
		{ 9, 2, -30, 1, 41, 2, 8, 2 },
		{ 9, 2, 900000, 0, 40, 2, 8, 2 },
	};
	enum { N = sizeof(c) / sizeof(*c) };
	/* Durations: pid 40's calls 100 and 200 (one NULL), none else. */
	static const int64_t dur[N] = { NUL, 100, 200, NUL, NUL };
	struct gr_colbuf cols[GR_nccl__NCOLS];
	int64_t vv[9][N];
	uint8_t nn[9][1];
	const int col[] = { GR_nccl_comm_id, GR_nccl_seq, GR_nccl_ts,
			    GR_nccl_rank, GR_nccl_pid, GR_nccl_op,
			    GR_nccl_bytes, GR_nccl_nranks, GR_nccl_dur };
	memset(cols, 0, sizeof(cols));
	memset(nn, 0, sizeof(nn));
	for (int k = 0; k < 9; k++) {
		cols[col[k]].v = vv[k];
		cols[col[k]].nulls = nn[k];
	}
	for (int i = 0; i < N; i++) {
		set(&cols[GR_nccl_comm_id], i, c[i].comm);
		set(&cols[GR_nccl_seq], i, c[i].seq);
		set(&cols[GR_nccl_ts], i, c[i].ts);
		set(&cols[GR_nccl_rank], i, c[i].rank);
		set(&cols[GR_nccl_pid], i, c[i].pid);
		set(&cols[GR_nccl_op], i, c[i].op);
		set(&cols[GR_nccl_bytes], i, c[i].bytes);
		set(&cols[GR_nccl_nranks], i, c[i].nranks);
		set(&cols[GR_nccl_dur], i, dur[i]);
	}
	struct gr_coll_builder *b = gr_coll_builder__new();
	struct gr_encoder *e = gr_encoder__new(1);
	struct gr_buf out = { 0 }, ab = { 0 };
	struct gr_arr arr = { 0 };
	struct gr_arr_rec r;
	int64_t ts[8];
	uint32_t nrec;
	CHECK(b && e);
	CHECK_EQ_INT(gr_coll_builder__encode(b, cols, N, is_coll, NULL, e,
					     &out, &nrec), 0);
	CHECK_EQ_INT(nrec, 2);
	CHECK_EQ_INT(gr_coll_builder__arrivals(b, cols, N, &ab), 0);
	CHECK_EQ_INT(gr_arr__parse(&arr, ab.p, ab.len), 0);
	CHECK_EQ_INT(arr.nslot, 4);	/* rank 0 of op 1 and of op 2 */
	/* The processes, in first-seen order: NULL, 40, 41. */
	CHECK_EQ_INT(arr.nproc, 3);
	CHECK_EQ_INT(arr.proc[0].pid, NUL);
	CHECK_EQ_INT(arr.proc[0].has_dur, 0);
	CHECK_EQ_INT(arr.proc[1].pid, 40);
	CHECK_EQ_INT(arr.proc[1].min_ts, 510);
	CHECK_EQ_INT(arr.proc[1].max_ts, 900000);
	CHECK_EQ_INT(arr.proc[1].has_dur, 1);
	CHECK_EQ_INT(arr.proc[1].sumdur, 300);
	CHECK_EQ_INT(arr.proc[1].maxend, 710);	/* 510 + 200 */
	CHECK_EQ_INT(arr.proc[2].pid, 41);
	CHECK_EQ_INT(arr.proc[2].min_ts, -30);
	CHECK_EQ_INT(arr.proc[2].max_ts, -30);
	CHECK_EQ_INT(arr.proc[2].has_dur, 0);
	/* seq 1: the NULL rank's slot (first seen) then rank 0 twice, its
	 * entries ascending. */
	CHECK_EQ_INT(gr_arr__next(&arr, &r, ts), 1);
	CHECK_EQ_INT(r.seq, 1);
	CHECK_EQ_INT(r.first, 500);
	CHECK_EQ_INT(r.n, 3);
	CHECK_EQ_INT(arr.slot[r.slots[0]].pid, NUL);
	CHECK_EQ_INT(arr.slot[r.slots[0]].rank, NUL);
	CHECK_EQ_INT(arr.slot[r.slots[0]].nranks, NUL);
	CHECK_EQ_INT(ts[0], 500);
	CHECK_EQ_INT(r.slots[1], r.slots[2]);
	CHECK_EQ_INT(arr.slot[r.slots[1]].pid, 40);
	CHECK_EQ_INT(ts[1], 510);
	CHECK_EQ_INT(ts[2], 520);
	CHECK_EQ_INT(gr_arr__next(&arr, &r, ts), 1);
	CHECK_EQ_INT(r.seq, 2);
	CHECK_EQ_INT(r.first, -30);
	CHECK_EQ_INT(r.n, 2);
	/* Slots in first-seen order: rank 1's (op 2) before rank 0's. */
	CHECK_EQ_INT(arr.slot[r.slots[0]].rank, 1);
	CHECK_EQ_INT(arr.slot[r.slots[0]].op, 2);
	CHECK_EQ_INT(ts[0], -30);
	CHECK_EQ_INT(arr.slot[r.slots[1]].rank, 0);
	CHECK_EQ_INT(arr.slot[r.slots[1]].op, 2);
	CHECK_EQ_INT(ts[1], 900000);
	CHECK_EQ_INT(gr_arr__next(&arr, &r, ts), 0);
	/* The heads alone. */
	CHECK_EQ_INT(gr_arr__parse(&arr, ab.p, ab.len), 0);
	CHECK_EQ_INT(gr_arr__next(&arr, &r, NULL), 1);
	CHECK_EQ_INT(r.seq, 1);
	CHECK_EQ_INT(r.n, 3);
	CHECK_EQ_INT(gr_arr__next(&arr, &r, NULL), 1);
	CHECK_EQ_INT(r.seq, 2);
	CHECK_EQ_INT(r.first, -30);
	CHECK_EQ_INT(gr_arr__next(&arr, &r, NULL), 0);
	/* Damage: cut short; a record's pattern out of range; no entry at
	 * the record's first; a byte after the last record. */
	uint8_t bad[256];
	size_t len = ab.len;
	CHECK(len + 1 <= sizeof(bad));
	for (size_t cut = 1; cut < len; cut++) {
		int rc = gr_arr__parse(&arr, ab.p, cut);
		if (rc == 0)
			while ((rc = gr_arr__next(&arr, &r, ts)) == 1)
				;
		CHECK(rc < 0);
	}
	/* The records start after nslot, slots, npat, patterns, nrec: find
	 * the first record's pattern byte by parsing. */
	CHECK_EQ_INT(gr_arr__parse(&arr, ab.p, len), 0);
	size_t rec0 = (size_t)(arr.p - ab.p), q0 = (size_t)(arr.q - ab.p);
	memcpy(bad, ab.p, len);
	bad[rec0] = 9;
	CHECK_EQ_INT(gr_arr__parse(&arr, bad, len), 0);
	CHECK(gr_arr__next(&arr, &r, ts) < 0);
	/* seq 1's entries are 0, 10, 20 past its first, where the entries
	 * start: make the 0 a 1. */
	memcpy(bad, ab.p, len);
	CHECK_EQ_INT(bad[q0], 0);
	CHECK_EQ_INT(bad[q0 + 1], 10);
	bad[q0] = 1;
	CHECK_EQ_INT(gr_arr__parse(&arr, bad, len), 0);
	CHECK(gr_arr__next(&arr, &r, ts) < 0);
	memcpy(bad, ab.p, len);
	bad[len] = 0;
	CHECK_EQ_INT(gr_arr__parse(&arr, bad, len + 1), 0);
	CHECK_EQ_INT(gr_arr__next(&arr, &r, ts), 1);
	CHECK_EQ_INT(gr_arr__next(&arr, &r, ts), 1);
	CHECK(gr_arr__next(&arr, &r, ts) < 0);
	gr_arr__free(&arr);
	gr_buf__free(&ab);
	gr_buf__free(&out);
	gr_encoder__free(e);
	gr_coll_builder__free(b);
}

TEST(collective_ops)
{
	CHECK(gr_coll_is_collective("AllReduce", 9));
	CHECK(gr_coll_is_collective("AllToAll", 8));
	CHECK(!gr_coll_is_collective("AllReduc", 8));
	CHECK(!gr_coll_is_collective("Send", 4));
	CHECK(!gr_coll_is_collective(NULL, 0));
}

TEST_MAIN(TEST_ENTRY(add_keeps_last_and_the_one_before)
	  TEST_ENTRY(block_records_round_trip)
	  TEST_ENTRY(arrivals_nulls_and_damage)
	  TEST_ENTRY(collective_ops))
