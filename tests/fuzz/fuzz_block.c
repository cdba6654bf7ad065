/* fuzz_block.c - libFuzzer harness for the block decoder (store/codec.c).
 *
 * The input is one block payload, as a segment's blocks.payload holds it.
 * It is parsed with gr_block__parse and, when that accepts it, every
 * column is decoded the way the store's scan does (store/scan.c:
 * an int64 array of nrows and a null bitmap per column, reused across
 * blocks), and the decoded columns are fed to the summary accumulator
 * (store/summary.c gr_sum__add, as query/sumtab.c does) as a cuda_kernel
 * block.  A block row's CRC is no barrier to a hostile writer (anyone who
 * can edit a file can recompute a CRC-32), so nothing here assumes one.
 *
 * Build: make build/fuzz/fuzz_block (clang, -fsanitize=fuzzer,address,
 * undefined); seeds: tests/fuzz/seeds.sh.  docs/reliability.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "store/codec.h"
#include "store/summary.h"

/* The reader's cap: what store/scan.c would allocate for one block. */
static int64_t *cv[GR_MAX_COLS];
static uint8_t *cn[GR_MAX_COLS];
static uint32_t cap;

static int ensure_cap(uint32_t n, int ncols)
{
	if (n <= cap)
		return 0;
	for (int i = 0; i < ncols && i < GR_MAX_COLS; i++) {
		int64_t *v = realloc(cv[i], (size_t)n * sizeof(int64_t));
		if (v)
			cv[i] = v;
		uint8_t *b = realloc(cn[i], (n + 7) / 8);
		if (b)
			cn[i] = b;
		if (!v || !b)
			return -1;
	}
	cap = n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gr_decoder *dec;
	struct gr_block blk = { 0 };
	struct gr_sum_rows rows = { .t = GR_T_cuda_kernel };
	const struct gr_table *tab = &gr_tables[GR_T_cuda_kernel];
	int bad = 0, stored[GR_MAX_COLS], nstored = 0;

	/* Stored columns are the schema's minus HOST ones, in order (the
	 * writer's tabs_init_layout). */
	for (int c = 0; c < tab->ncols; c++)
		if (tab->cols[c].type != GR_HOST)
			stored[nstored++] = c;

	if (!dec && !(dec = gr_decoder__new()))
		abort();
	/* A private copy, so reads past the end hit ASan's redzone. */
	uint8_t *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	if (gr_block__parse(&blk, p, size) || blk.nrows == 0)
		goto out;
	/* Every column for the cap, as a SELECT * would. */
	if (ensure_cap(blk.nrows, GR_MAX_COLS))
		goto out;
	rows.n = blk.nrows;
	for (int c = 0; c < blk.ncols && c < GR_MAX_COLS; c++) {
		int has_nulls = 0;
		if (gr_decoder__column(dec, &blk, c, cv[c], cn[c],
				       &has_nulls)) {
			bad = 1;
			continue;
		}
		if (c < nstored) {
			rows.v[stored[c]] = cv[c];
			rows.nulls[stored[c]] = has_nulls ? cn[c] : NULL;
		}
	}
	if (!bad) {
		struct gr_sum *s = gr_sum__new();
		if (s) {
			gr_sum__add(s, &rows, INT64_MIN, INT64_MAX, NULL, 1,
				    ~0u);
			gr_sum__rollup(s);
			gr_sum__free(s);
		}
	}
out:
	gr_block__free(&blk);
	free(p);
	return 0;
}
