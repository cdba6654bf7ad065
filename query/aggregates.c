/* aggregates.c - median() and percentile() for SQLite 3.40.
 *
 * Semantics follow SQLite 3.47's ext/misc/percentile.c: NULL inputs are
 * skipped, other non-numeric inputs and infinities are errors, p must lie
 * in 0..100 and be the same (within 0.001 of the fraction p/100) on every
 * row, and the result is the linear interpolation at rank p/100 * (n-1)
 * of the sorted values, always a REAL, or NULL for no input.
 *
 * Every value is kept in a growable array of doubles that is sorted
 * lazily with qsort() when a result is wanted; appends that arrive in
 * order keep it sorted, so the window-function path (xValue after each
 * step, xInverse removing the oldest row by binary search) stays cheap
 * for ordered frames.
 */
#include "query/aggregates.h"
#include "store/summary.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pct {
	double *a;		/* values seen, sqlite3_malloc'd */
	size_t n, cap;
	double frac;		/* p / 100, valid once have_frac is set */
	int have_frac;
	int sorted;		/* a[0..n) is in ascending order */
};

/* Name of the SQL function behind @argc, for error messages. */
static const char *fn_name(int argc)
{
	return argc == 1 ? "median" : "percentile";
}

/* Reports an error whose text is @fmt with the function name for %s. */
static void pct_error(sqlite3_context *ctx, const char *fmt, int argc)
{
	char *msg = sqlite3_mprintf(fmt, fn_name(argc));

	if (!msg) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_error(ctx, msg, -1);
	sqlite3_free(msg);
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static void pct_sort(struct pct *p)
{
	if (!p->sorted) {
		qsort(p->a, p->n, sizeof(p->a[0]), cmp_double);
		p->sorted = 1;
	}
}

/* Validates a row's x.  Returns 1 if @v holds a usable value (stored in
 * *y), 0 if it is NULL and must be skipped, -1 for a bad value (with
 * @report set, the error has been raised on @ctx). */
static int pct_input(sqlite3_context *ctx, int argc, sqlite3_value *v,
		     double *y, int report)
{
	int type = sqlite3_value_type(v);

	if (type == SQLITE_NULL)
		return 0;
	if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
		if (report)
			pct_error(ctx, "1st argument to %s() is not numeric",
				  argc);
		return -1;
	}
	*y = sqlite3_value_double(v);
	if (*y > DBL_MAX || *y < -DBL_MAX) {
		if (report)
			pct_error(ctx, "Inf input to %s()", argc);
		return -1;
	}
	return 1;
}

static void pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct pct *p;
	double frac = 0.5, y;
	int r;

	if (argc == 2) {
		int type = sqlite3_value_numeric_type(argv[1]);
		double pv = sqlite3_value_double(argv[1]);

		if ((type != SQLITE_INTEGER && type != SQLITE_FLOAT) ||
		    !(pv >= 0.0 && pv <= 100.0)) {
			sqlite3_result_error(ctx, "2nd argument to "
					     "percentile() is not a number "
					     "between 0.0 and 100.0", -1);
			return;
		}
		frac = pv / 100.0;
	}

	p = sqlite3_aggregate_context(ctx, sizeof(*p));
	if (!p) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!p->have_frac) {
		p->frac = frac;
		p->have_frac = 1;
		p->sorted = 1;
	} else if (p->frac - frac > 0.001 || frac - p->frac > 0.001) {
		sqlite3_result_error(ctx, "2nd argument to percentile() is not "
				     "the same for all input rows", -1);
		return;
	}

	r = pct_input(ctx, argc, argv[0], &y, 1);
	if (r <= 0)
		return;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		double *a = sqlite3_realloc64(p->a, cap * sizeof(*a));

		if (!a) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		p->a = a;
		p->cap = cap;
	}
	if (p->n && y < p->a[p->n - 1])
		p->sorted = 0;
	p->a[p->n++] = y;
}

/* Removes one copy of the x leaving a window frame.  Cannot fail. */
static void pct_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct pct *p = sqlite3_aggregate_context(ctx, 0);
	size_t lo = 0, hi;
	double y;

	if (!p || pct_input(ctx, argc, argv[0], &y, 0) <= 0)
		return;
	pct_sort(p);
	hi = p->n;
	while (lo < hi) {		/* first index with a[i] >= y */
		size_t mid = lo + (hi - lo) / 2;

		if (p->a[mid] < y)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->n && p->a[lo] == y) {
		memmove(p->a + lo, p->a + lo + 1,
			(p->n - lo - 1) * sizeof(p->a[0]));
		p->n--;
	}
}

/* Sets the interpolated result, or leaves NULL when there is no value. */
static void pct_compute(sqlite3_context *ctx, struct pct *p)
{
	double ix, v1, v2;
	size_t i1, i2;

	if (!p || p->n == 0)
		return;
	pct_sort(p);
	ix = p->frac * (double)(p->n - 1);
	i1 = (size_t)ix;
	i2 = (ix == (double)i1 || i1 == p->n - 1) ? i1 : i1 + 1;
	v1 = p->a[i1];
	v2 = p->a[i2];
	sqlite3_result_double(ctx, v1 + (v2 - v1) * (ix - (double)i1));
}

static void pct_value(sqlite3_context *ctx)
{
	pct_compute(ctx, sqlite3_aggregate_context(ctx, 0));
}

static void pct_final(sqlite3_context *ctx)
{
	struct pct *p = sqlite3_aggregate_context(ctx, 0);

	if (!p)
		return;
	pct_compute(ctx, p);
	sqlite3_free(p->a);
	memset(p, 0, sizeof(*p));
}

/* hist_quantile(x, p): the p-th percentile (0..100, nearest rank) of the
 * values x, read from a log-linear histogram (store/summary.h, within
 * 0.4 %).  x is a value, or a histogram blob from a summary table, so a
 * report reads the same number from raw events as from summaries. */
struct hq {
	struct gr_hist h;
	double p;
};

static void hq_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct hq *q = sqlite3_aggregate_context(ctx, sizeof(*q));
	if (!q) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	double p = sqlite3_value_double(argv[1]);
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL || p < 0 || p > 100) {
		sqlite3_result_error(ctx, "hist_quantile: p must be 0..100", -1);
		return;
	}
	q->p = p;
	int rc = 0;
	switch (sqlite3_value_type(argv[0])) {
	case SQLITE_NULL:
		return;
	case SQLITE_BLOB:
		rc = gr_hist__merge(&q->h, sqlite3_value_blob(argv[0]),
				    (size_t)sqlite3_value_bytes(argv[0]));
		break;
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		rc = gr_hist__add_value(&q->h, sqlite3_value_int64(argv[0]));
		break;
	default:
		sqlite3_result_error(ctx, "hist_quantile: x must be a number "
				     "or a histogram", -1);
		return;
	}
	if (rc == -ENOMEM)
		sqlite3_result_error_nomem(ctx);
	else if (rc)
		sqlite3_result_error(ctx, "hist_quantile: not a histogram", -1);
}

static void hq_final(sqlite3_context *ctx)
{
	struct hq *q = sqlite3_aggregate_context(ctx, 0);
	if (!q)
		return; /* no rows: NULL */
	int64_t v = gr_hist__quantile(&q->h, q->p);
	if (v >= 0)
		sqlite3_result_int64(ctx, v);
	gr_hist__free(&q->h);
}

/* ---- stddev_ns ------------------------------------------------------------
 *
 * stddev_ns(dur) over raw durations and stddev_ns(n, dur_sum, dur_sq) over
 * summary rows (sum_api) give the sample standard deviation (n - 1, as
 * nsys's StdDev) from the same three exact integers, n, the sum and the
 * sum of squares, and the same last step, so a report's summary and --raw
 * forms print the same number.  SQLite has no stddev; a SQL expression of
 * sum(dur * dur) would overflow int64 at 3 s of squared ns. */
struct sd {
	unsigned __int128 n, s2;
	__int128 s1;
	int unknown;            /* a summary row without dur_sq */
};

/* SQLite's aggregate context is 8-byte aligned, __int128 wants 16: the
 * sums live there as bytes, copied in and out. */
static void sd_load(sqlite3_context *ctx, struct sd *a, void **mem)
{
	*mem = sqlite3_aggregate_context(ctx, sizeof(*a));
	if (*mem)
		memcpy(a, *mem, sizeof(*a));
}

static void sd_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sd a;
	void *mem;

	sd_load(ctx, &a, &mem);
	if (!mem) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (argc == 1) {
		if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
			return;
		int64_t d = sqlite3_value_int64(argv[0]);
		uint64_t m = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
		a.n++;
		a.s1 += d;
		a.s2 += (unsigned __int128)m * m;
	} else {
		int64_t n = sqlite3_value_int64(argv[0]);
		if (n <= 0)
			return;
		if (sqlite3_value_type(argv[2]) != SQLITE_BLOB ||
		    sqlite3_value_bytes(argv[2]) != 16) {
			a.unknown = 1;
		} else {
			const uint8_t *q = sqlite3_value_blob(argv[2]);
			unsigned __int128 v = 0;
			for (int b = 15; b >= 0; b--)
				v = v << 8 | q[b];
			a.n += (uint64_t)n;
			a.s1 += sqlite3_value_int64(argv[1]);
			a.s2 += v;
		}
	}
	memcpy(mem, &a, sizeof(a));
}

static void sd_final(sqlite3_context *ctx)
{
	void *mem = sqlite3_aggregate_context(ctx, 0);
	struct sd a;

	if (!mem)
		return; /* no row: NULL */
	memcpy(&a, mem, sizeof(a));
	if (!a.n || a.unknown)
		return;
	if (a.n == 1) {
		sqlite3_result_double(ctx, 0.0);
		return;
	}
	long double n = (long double)a.n, s1 = (long double)a.s1;
	long double var = ((long double)a.s2 - s1 * s1 / n) / (n - 1);
	sqlite3_result_double(ctx, var > 0 ? (double)sqrtl(var) : 0.0);
}

/* slot_gaps(minute, slots, min_ns), over one process's sum_launch_slots
 * rows: the pauses between its launches that may last min_ns, as a JSON
 * array of [a, b], the starts of two set slots with none set between
 * them (across minutes), where b + 10 ms - a > min_ns: only then can the
 * last launch of slot a and the first of slot b, which are consecutive,
 * lie min_ns apart.  Last comes [a, null], a the process's last set slot
 * (its last launch is in it).  Rows of one minute (from several segments,
 * or stored and read raw) are ORed: the order they come in is no
 * matter. */
struct sg_min {
	int64_t minute;
	uint8_t bits[GR_SUM_SLOT_BYTES];
};

struct sg {
	struct sg_min *m;   /* sqlite3_malloc'd */
	size_t n, cap;
	int64_t min_ns;
};

static void sg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct sg *g = sqlite3_aggregate_context(ctx, sizeof(*g));
	if (!g) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER ||
	    sqlite3_value_type(argv[1]) != SQLITE_BLOB) {
		sqlite3_result_error(ctx, "slot_gaps: needs a minute and a "
				     "slots blob (sum_launch_slots)", -1);
		return;
	}
	g->min_ns = sqlite3_value_int64(argv[2]);
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct sg_min *m = sqlite3_realloc64(g->m, cap * sizeof(*m));
		if (!m) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		g->m = m;
		g->cap = cap;
	}
	struct sg_min *x = &g->m[g->n++];
	size_t len = (size_t)sqlite3_value_bytes(argv[1]);
	x->minute = sqlite3_value_int64(argv[0]);
	memset(x->bits, 0, sizeof(x->bits));
	memcpy(x->bits, sqlite3_value_blob(argv[1]),
	       len < sizeof(x->bits) ? len : sizeof(x->bits));
}

static int cmp_minute(const void *pa, const void *pb)
{
	const struct sg_min *a = pa, *b = pb;
	return (a->minute > b->minute) - (a->minute < b->minute);
}

static void sg_final(sqlite3_context *ctx)
{
	struct sg *g = sqlite3_aggregate_context(ctx, 0);
	if (!g || !g->n) {
		if (g)
			sqlite3_free(g->m);
		return; /* no rows: NULL */
	}
	qsort(g->m, g->n, sizeof(*g->m), cmp_minute);
	sqlite3_str *out = sqlite3_str_new(NULL);
	int64_t prev = 0;
	int have = 0, first = 1;
	sqlite3_str_appendchar(out, 1, '[');
	for (size_t i = 0; i < g->n; i++) {
		struct sg_min *x = &g->m[i];
		/* The same minute again: OR it into the next one. */
		if (i + 1 < g->n && g->m[i + 1].minute == x->minute) {
			for (size_t b = 0; b < sizeof(x->bits); b++)
				g->m[i + 1].bits[b] |= x->bits[b];
			continue;
		}
		for (size_t b = 0; b < sizeof(x->bits); b++) {
			for (unsigned v = x->bits[b]; v; v &= v - 1) {
				int64_t t = x->minute + ((int64_t)b * 8 +
					     __builtin_ctz(v)) * GR_SUM_SLOT_NS;
				if (have && t + GR_SUM_SLOT_NS - prev >
					    g->min_ns) {
					sqlite3_str_appendf(out, "%s[%lld,%lld]",
							    first ? "" : ",",
							    (long long)prev,
							    (long long)t);
					first = 0;
				}
				prev = t;
				have = 1;
			}
		}
	}
	if (have)
		sqlite3_str_appendf(out, "%s[%lld,null]", first ? "" : ",",
				    (long long)prev);
	sqlite3_str_appendchar(out, 1, ']');
	sqlite3_free(g->m);
	g->m = NULL;
	if (sqlite3_str_errcode(out)) {
		sqlite3_free(sqlite3_str_finish(out));
		sqlite3_result_error_nomem(ctx);
		return;
	}
	int len = sqlite3_str_length(out);
	sqlite3_result_text(ctx, sqlite3_str_finish(out), len, sqlite3_free);
}

int gr_aggregates__register(sqlite3 *db)
{
	const int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS;
	int rc;

	rc = sqlite3_create_function(db, "stddev_ns", 1, flags, NULL, NULL,
				     sd_step, sd_final);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "stddev_ns", 3, flags, NULL,
					     NULL, sd_step, sd_final);
	if (rc != SQLITE_OK)
		return rc;

	rc = sqlite3_create_function(db, "hist_quantile", 2, flags, NULL, NULL,
				     hq_step, hq_final);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_create_function(db, "slot_gaps", 3, flags, NULL, NULL,
				     sg_step, sg_final);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_create_window_function(db, "percentile", 2, flags, NULL,
					    pct_step, pct_final, pct_value,
					    pct_inverse, NULL);
	if (rc != SQLITE_OK)
		return rc;
	return sqlite3_create_window_function(db, "median", 1, flags, NULL,
					      pct_step, pct_final, pct_value,
					      pct_inverse, NULL);
}
