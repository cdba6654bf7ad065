/* test_summary.c - the summaries' histograms and accumulator
 * (store/summary.h): bucket bounds, encoding round trips, quantiles, and
 * the minute and whole-segment rows the writer keeps for a block.
 */
#include "tests/unit/test.h"
#include "schema/schema.h"
#include "store/summary.h"

#include <errno.h>

TEST(buckets)
{
	/* Exact below 256; above, 128 per power of two, each value in its
	 * bucket's range and the midpoint within 1/256 of it. */
	for (int64_t v = 0; v < 256; v++) {
		CHECK_EQ_INT(gr_hist_bucket(v), v);
		CHECK_EQ_INT(gr_hist_value((uint32_t)v), v);
	}
	CHECK_EQ_INT(gr_hist_bucket(-5), 0);
	CHECK_EQ_INT(gr_hist_bucket(256), 256);
	CHECK_EQ_INT(gr_hist_bucket(257), 256); /* width 2 at 2^8 */
	CHECK_EQ_INT(gr_hist_bucket(258), 257);
	CHECK_EQ_INT(gr_hist_bucket(512), 384);
	CHECK_EQ_INT(gr_hist_value(256), 257);
	uint32_t prev = 0;
	for (int64_t v = 256; v < (1ll << 40); v += v / 97 + 1) {
		uint32_t b = gr_hist_bucket(v);
		CHECK(b >= prev);
		prev = b;
		int64_t mid = gr_hist_value(b);
		double err = (double)(mid > v ? mid - v : v - mid) / (double)v;
		CHECK(err <= 1.0 / 256);
	}
	int64_t big = INT64_MAX;
	CHECK(gr_hist_value(gr_hist_bucket(big)) > (int64_t)1 << 62);
}

TEST(encode_merge_quantile)
{
	struct gr_hist h = { 0 }, m = { 0 };
	struct gr_buf b = { 0 };
	CHECK_EQ_INT(gr_hist__quantile(&h, 50), -1);
	for (int64_t v = 1; v <= 100; v++)
		CHECK_EQ_INT(gr_hist__add_value(&h, v), 0);
	/* Nearest rank: the 50th of 100 values is 50, the 99th 99. */
	CHECK_EQ_INT(gr_hist__quantile(&h, 50), 50);
	CHECK_EQ_INT(gr_hist__quantile(&h, 99), 99);
	CHECK_EQ_INT(gr_hist__quantile(&h, 0), 1);
	CHECK_EQ_INT(gr_hist__quantile(&h, 100), 100);
	CHECK_EQ_INT(gr_hist__encode(&h, &b), 0);
	/* Merging the encoding twice doubles every count. */
	CHECK_EQ_INT(gr_hist__merge(&m, b.p, b.len), 0);
	CHECK_EQ_INT(gr_hist__merge(&m, b.p, b.len), 0);
	CHECK_EQ_INT(m.n, 100);
	CHECK_EQ_INT(gr_hist__count(&m, 1), 2);
	CHECK_EQ_INT(gr_hist__count(&m, 0), 0);
	CHECK_EQ_INT(m.min, 1);
	CHECK_EQ_INT(m.max, 100);
	CHECK_EQ_INT(gr_hist__quantile(&m, 50), 50);
	/* A truncated or padded encoding is refused. */
	struct gr_hist x = { 0 };
	CHECK_EQ_INT(gr_hist__merge(&x, b.p, b.len - 1), -EINVAL);
	gr_hist__free(&x);
	uint8_t pad[1024];
	memcpy(pad, b.p, b.len);
	pad[b.len] = 0;
	CHECK_EQ_INT(gr_hist__merge(&x, pad, b.len + 1), -EINVAL);
	gr_hist__free(&x);
	gr_hist__free(&h);
	gr_hist__free(&m);
	gr_buf__free(&b);
}

TEST(clamped_to_extremes)
{
	/* One repeated value reads as itself, not its bucket's midpoint. */
	struct gr_hist h = { 0 };
	for (int i = 0; i < 10; i++)
		CHECK_EQ_INT(gr_hist__add_value(&h, 1000), 0);
	CHECK_EQ_INT(gr_hist__quantile(&h, 50), 1000);
	CHECK_EQ_INT(gr_hist__quantile(&h, 99), 1000);
	gr_hist__free(&h);
}

static int count_kind(struct gr_sum *s, int kind, int64_t minute,
		      int64_t *n, int64_t *dur)
{
	int rows = 0;
	*n = *dur = 0;
	for (uint32_t i = 0; i < gr_sum__count(s); i++) {
		const struct gr_sum_ent *e = gr_sum__at(s, i);
		if (e->kind != kind ||
		    (minute == GR_SUM_SEGMENT) != (e->minute == GR_SUM_SEGMENT))
			continue;
		rows++;
		*n += e->n;
		*dur += e->dur_sum;
	}
	return rows;
}

TEST(accumulate_block)
{
	/* Six launches, two kernels, two APIs, across a minute boundary,
	 * one from another process, one failing. */
	const int64_t M = GR_SUM_MINUTE_NS, t0 = 1795000020 * 1000000000ll;
	int64_t ts[6] = { t0, t0 + 1, t0 + 2, t0 + M, t0 + M + 1, t0 + M + 2 };
	int64_t pid[6] = { 7, 7, 7, 7, 7, 8 };
	int64_t dur[6] = { 100, 200, 300, 400, 500, 600 };
	int64_t api[6] = { 1, 1, 2, 1, 1, 1 };
	int64_t kern[6] = { 3, 4, 3, 3, 3, 3 };
	int64_t gx[6] = { 1, 1, 1, 1, 2, 1 }, one[6] = { 1, 1, 1, 1, 1, 1 };
	int64_t ret[6] = { 0, 0, 0, 2, 0, 0 };
	struct gr_sum_rows r = { .t = GR_T_cuda_kernel, .n = 6 };
	r.v[GR_cuda_kernel_ts] = ts;
	r.v[GR_cuda_kernel_pid] = pid;
	r.v[GR_cuda_kernel_dur] = dur;
	r.v[GR_cuda_kernel_api] = api;
	r.v[GR_cuda_kernel_kernel] = kern;
	r.v[GR_cuda_kernel_grid_x] = gx;
	r.v[GR_cuda_kernel_grid_y] = one;
	r.v[GR_cuda_kernel_grid_z] = one;
	r.v[GR_cuda_kernel_block_x] = one;
	r.v[GR_cuda_kernel_block_y] = one;
	r.v[GR_cuda_kernel_block_z] = one;
	r.v[GR_cuda_kernel_ret] = ret;
	struct gr_sum *s = gr_sum__new();
	CHECK(s);
	CHECK_EQ_INT(gr_sum__add(s, &r, INT64_MIN, INT64_MAX, NULL, 0, ~0u), 0);
	int64_t n, d;
	/* api: (minute 0, pid 7, api 1), (0, 7, 2), (1, 7, 1), (1, 8, 1) */
	CHECK_EQ_INT(count_kind(s, GR_SUM_API, 0, &n, &d), 4);
	CHECK_EQ_INT(n, 6);
	CHECK_EQ_INT(d, 2100);
	/* kernel: (0,7,k3), (0,7,k4), (1,7,k3,gx1), (1,7,k3,gx2), (1,8,k3) */
	CHECK_EQ_INT(count_kind(s, GR_SUM_KERNEL, 0, &n, &d), 5);
	CHECK_EQ_INT(count_kind(s, GR_SUM_MEMCPY, 0, &n, &d), 0);
	CHECK_EQ_INT(gr_sum__rollup(s), 0);
	/* A second rollup (a seal retried) counts nothing twice. */
	CHECK_EQ_INT(gr_sum__rollup(s), 0);
	CHECK_EQ_INT(count_kind(s, GR_SUM_API, GR_SUM_SEGMENT, &n, &d), 3);
	CHECK_EQ_INT(n, 6);
	CHECK_EQ_INT(d, 2100);
	int errors = 0;
	for (uint32_t i = 0; i < gr_sum__count(s); i++) {
		const struct gr_sum_ent *e = gr_sum__at(s, i);
		if (e->kind == GR_SUM_API && e->minute == GR_SUM_SEGMENT &&
		    e->pid == 7 && e->k[0] == 1) {
			CHECK_EQ_INT(e->n, 4);
			CHECK_EQ_INT(e->dur_min, 100);
			CHECK_EQ_INT(e->dur_max, 500);
			CHECK_EQ_INT(e->ts_min, t0);
			CHECK_EQ_INT(e->ts_max, t0 + M + 1);
			CHECK_EQ_INT(gr_hist__quantile(&e->h, 50), 200);
			errors += (int)e->errors;
		}
	}
	CHECK_EQ_INT(errors, 1);
	/* A window and a pid select rows, and kinds select kinds. */
	gr_sum__reset(s);
	int64_t p7 = 7;
	CHECK_EQ_INT(gr_sum__add(s, &r, t0 + 1, t0 + M, &p7, 0,
				 1u << GR_SUM_KERNEL), 0);
	CHECK_EQ_INT(count_kind(s, GR_SUM_API, 0, &n, &d), 0);
	CHECK_EQ_INT(count_kind(s, GR_SUM_KERNEL, 0, &n, &d), 3);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_INT(d, 900);
	gr_sum__free(s);
}

TEST(no_hist)
{
	/* A reader that prints no histogram keeps the counts and extremes
	 * of raw rows and of stored rows, and no histogram or slot bitmap. */
	const int64_t t0 = 1795000020 * 1000000000ll;
	int64_t ts[3] = { t0, t0 + 20000000, t0 + 40000000 };
	int64_t pid[3] = { 7, 7, 7 }, dur[3] = { 100, 300, 200 };
	int64_t api[3] = { 1, 1, 1 }, kern[3] = { 3, 3, 3 };
	int64_t one[3] = { 1, 1, 1 }, ret[3] = { 0, 0, 0 };
	struct gr_sum_rows r = { .t = GR_T_cuda_kernel, .n = 3 };
	r.v[GR_cuda_kernel_ts] = ts;
	r.v[GR_cuda_kernel_pid] = pid;
	r.v[GR_cuda_kernel_dur] = dur;
	r.v[GR_cuda_kernel_api] = api;
	r.v[GR_cuda_kernel_kernel] = kern;
	r.v[GR_cuda_kernel_grid_x] = one;
	r.v[GR_cuda_kernel_grid_y] = one;
	r.v[GR_cuda_kernel_grid_z] = one;
	r.v[GR_cuda_kernel_block_x] = one;
	r.v[GR_cuda_kernel_block_y] = one;
	r.v[GR_cuda_kernel_block_z] = one;
	r.v[GR_cuda_kernel_ret] = ret;
	for (int off = 0; off <= 1; off++) {
		struct gr_sum *s = gr_sum__new();
		CHECK(s);
		gr_sum__no_hist(s, !off);
		CHECK_EQ_INT(gr_sum__add(s, &r, INT64_MIN, INT64_MAX, NULL, 0,
					 ~0u), 0);
		int api_rows = 0, slot_rows = 0;
		for (uint32_t i = 0; i < gr_sum__count(s); i++) {
			const struct gr_sum_ent *e = gr_sum__at(s, i);
			if (e->kind == GR_SUM_API) {
				api_rows++;
				CHECK_EQ_INT(e->n, 3);
				CHECK_EQ_INT(e->dur_min, 100);
				CHECK_EQ_INT(e->dur_max, 300);
				CHECK_EQ_INT(e->h.n, off ? 3 : 0);
			} else if (e->kind == GR_SUM_SLOTS) {
				slot_rows++;
				CHECK_EQ_INT(e->n, 3);
				CHECK_EQ_INT(e->slots != NULL, off);
				CHECK(!e->slots || e->slots[0] == 0x15);
			}
		}
		CHECK_EQ_INT(api_rows, 1);
		CHECK_EQ_INT(slot_rows, 1);
		/* A stored row with a histogram: totals added, histogram
		 * merged only when wanted. */
		struct gr_hist h = { 0 };
		struct gr_buf b = { 0 };
		CHECK_EQ_INT(gr_hist__add_value(&h, 5000), 0);
		CHECK_EQ_INT(gr_hist__encode(&h, &b), 0);
		struct gr_sum_ent x = { .kind = GR_SUM_API, .minute = 0,
					.pid = 9, .n = 1, .dur_sum = 5000,
					.dur_min = 5000, .dur_max = 5000 };
		x.k[0] = 1;
		CHECK_EQ_INT(gr_sum__put(s, &x, b.p, b.len), 0);
		const struct gr_sum_ent *e = gr_sum__at(s, gr_sum__count(s) - 1);
		CHECK_EQ_INT(e->pid, 9);
		CHECK_EQ_INT(e->n, 1);
		CHECK_EQ_INT(e->h.n, off ? 1 : 0);
		gr_hist__free(&h);
		gr_buf__free(&b);
		gr_sum__free(s);
	}
}

TEST(null_keys)
{
	/* NULL keys are keys of their own: row 2's grid_y and row 4's api
	 * are NULL, and other columns carry a bitmap with no row set (as
	 * the writer's do once a row of theirs was NULL). */
	const int64_t M = GR_SUM_MINUTE_NS, t0 = 1795000020 * 1000000000ll;
	int64_t ts[6] = { t0, t0 + 1, t0 + 2, t0 + M, t0 + M + 1, t0 + M + 2 };
	int64_t pid[6] = { 7, 7, 7, 7, 7, 8 };
	int64_t dur[6] = { 100, 200, 300, 400, 500, 600 };
	int64_t api[6] = { 1, 1, 2, 1, 0, 1 };
	int64_t kern[6] = { 3, 4, 3, 3, 3, 3 };
	int64_t gx[6] = { 1, 1, 1, 1, 2, 1 }, gy[6] = { 1, 1, 0, 1, 1, 1 };
	int64_t one[6] = { 1, 1, 1, 1, 1, 1 };
	uint8_t gy_nulls[1] = { 1 << 2 }, api_nulls[1] = { 1 << 4 },
		none[1] = { 0 };
	struct gr_sum_rows r = { .t = GR_T_cuda_kernel, .n = 6 };
	r.v[GR_cuda_kernel_ts] = ts;
	r.v[GR_cuda_kernel_pid] = pid;
	r.v[GR_cuda_kernel_dur] = dur;
	r.v[GR_cuda_kernel_api] = api;
	r.nulls[GR_cuda_kernel_api] = api_nulls;
	r.v[GR_cuda_kernel_kernel] = kern;
	r.nulls[GR_cuda_kernel_kernel] = none;
	r.v[GR_cuda_kernel_grid_x] = gx;
	r.v[GR_cuda_kernel_grid_y] = gy;
	r.nulls[GR_cuda_kernel_grid_y] = gy_nulls;
	r.v[GR_cuda_kernel_grid_z] = one;
	r.v[GR_cuda_kernel_block_x] = one;
	r.v[GR_cuda_kernel_block_y] = one;
	r.v[GR_cuda_kernel_block_z] = one;
	struct gr_sum *s = gr_sum__new();
	CHECK(s);
	CHECK_EQ_INT(gr_sum__add(s, &r, INT64_MIN, INT64_MAX, NULL, 0, ~0u), 0);
	int64_t n, d;
	/* api: (0, 7, 1), (0, 7, 2), (1, 7, 1), (1, 7, NULL), (1, 8, 1) */
	CHECK_EQ_INT(count_kind(s, GR_SUM_API, 0, &n, &d), 5);
	CHECK_EQ_INT(n, 6);
	/* kernel: (0,7,k3), (0,7,k4), (0,7,k3,gy NULL), (1,7,k3,gx1),
	 * (1,7,k3,gx2), (1,8,k3) */
	CHECK_EQ_INT(count_kind(s, GR_SUM_KERNEL, 0, &n, &d), 6);
	CHECK_EQ_INT(n, 6);
	int seen = 0;
	for (uint32_t i = 0; i < gr_sum__count(s); i++) {
		const struct gr_sum_ent *e = gr_sum__at(s, i);
		if (e->kind == GR_SUM_API && e->knull) {
			CHECK_EQ_INT(e->knull, 1);
			CHECK_EQ_INT(e->k[0], 0);
			CHECK_EQ_INT(e->dur_sum, 500);
			seen++;
		}
		if (e->kind == GR_SUM_KERNEL && e->knull) {
			CHECK_EQ_INT(e->knull, 1 << 2);
			CHECK_EQ_INT(e->k[2], 0);
			CHECK_EQ_INT(e->dur_sum, 300);
			seen++;
		}
	}
	CHECK_EQ_INT(seen, 2);
	gr_sum__free(s);
}

TEST(offcpu_block)
{
	/* Four intervals of two threads of one process: thread 11 twice in
	 * S with stack 5, once in D with no stack; thread 12 once in S.
	 * Off-CPU rows feed sum_offcpu alone, keyed by (tid, state, stack,
	 * comm), with no histogram. */
	const int64_t t0 = 1795000020 * 1000000000ll;
	int64_t ts[4] = { t0, t0 + 10, t0 + 20, t0 + 30 };
	int64_t pid[4] = { 9, 9, 9, 9 }, tid[4] = { 11, 11, 11, 12 };
	int64_t dur[4] = { 1000, 3000, 500, 7000 };
	int64_t state[4] = { 1, 1, 2, 1 }, stack[4] = { 5, 5, 0, 6 };
	int64_t comm[4] = { 3, 3, 3, 4 };
	uint8_t stack_nulls[1] = { 1 << 2 };
	struct gr_sum_rows r = { .t = GR_T_offcpu, .n = 4 };
	r.v[GR_offcpu_ts] = ts;
	r.v[GR_offcpu_pid] = pid;
	r.v[GR_offcpu_tid] = tid;
	r.v[GR_offcpu_dur] = dur;
	r.v[GR_offcpu_state] = state;
	r.v[GR_offcpu_stack] = stack;
	r.nulls[GR_offcpu_stack] = stack_nulls;
	r.v[GR_offcpu_comm] = comm;
	struct gr_sum *s = gr_sum__new();
	CHECK(s);
	CHECK_EQ_INT(gr_sum__add(s, &r, INT64_MIN, INT64_MAX, NULL, 1, ~0u), 0);
	int64_t n, d;
	CHECK_EQ_INT(count_kind(s, GR_SUM_API, 0, &n, &d), 0);
	CHECK_EQ_INT(count_kind(s, GR_SUM_OFFCPU, 0, &n, &d), 3);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_INT(d, 11500);
	CHECK_EQ_INT(count_kind(s, GR_SUM_OFFCPU, GR_SUM_SEGMENT, &n, &d), 3);
	int seen = 0;
	for (uint32_t i = 0; i < gr_sum__count(s); i++) {
		const struct gr_sum_ent *e = gr_sum__at(s, i);
		if (e->kind != GR_SUM_OFFCPU || e->minute == GR_SUM_SEGMENT)
			continue;
		CHECK_EQ_INT(e->h.n, 0);
		if (e->k[0] == 11 && e->k[1] == 1) {
			CHECK_EQ_INT(e->k[2], 5);
			CHECK_EQ_INT(e->knull, 0);
			CHECK_EQ_INT(e->n, 2);
			CHECK_EQ_INT(e->dur_max, 3000);
			CHECK_EQ_INT(e->ts_max, t0 + 10);
			seen |= 1;
		} else if (e->k[0] == 11 && e->k[1] == 2) {
			CHECK_EQ_INT(e->knull, 1 << 2); /* stack NULL */
			CHECK_EQ_INT(e->dur_sum, 500);
			seen |= 2;
		} else if (e->k[0] == 12) {
			CHECK_EQ_INT(e->k[3], 4);
			CHECK_EQ_INT(e->dur_sum, 7000);
			seen |= 4;
		}
	}
	CHECK_EQ_INT(seen, 7);
	gr_sum__free(s);
}

TEST_MAIN(
	TEST_ENTRY(buckets)
	TEST_ENTRY(encode_merge_quantile)
	TEST_ENTRY(clamped_to_extremes)
	TEST_ENTRY(accumulate_block)
	TEST_ENTRY(null_keys)
	TEST_ENTRY(offcpu_block)
	TEST_ENTRY(no_hist)
)
