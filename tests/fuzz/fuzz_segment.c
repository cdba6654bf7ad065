/* fuzz_segment.c - libFuzzer harness for the segment reader
 * (store/reader.c, store/summary.c, store/verify.c).
 *
 * The input is a whole segment file.  It is written to a temporary data
 * directory under a valid segment name and read the way gpurec reads one:
 * gr_segment__open (immutable, as a sealed segment), the dictionary, then
 * for every event table its column map and every block, each parsed and
 * every mapped column decoded, string ids looked up as store/scan.c does;
 * then the summary rows (gr_sum__put_row, as query/sumtab.c), and finally
 * gr_verify__dir over the directory.  Blocks whose CRC fails are decoded
 * anyway: a CRC-32 is no barrier to whoever can edit the file, so the
 * decoder must survive what a recomputed CRC would let through.
 *
 * Build: make build/fuzz/fuzz_segment; seeds: tests/fuzz/seeds.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/segment.h" /* below scan.c: bad CRCs decode too */
#include "store/summary.h"

#define SEG_NAME "20261123T000000.000000000Z.seg"

static char dir[64], path[128];
static int64_t *cv;
static uint8_t *cn;
static uint32_t cap;

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static int setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gpurec-fuzzseg.%d", (int)getpid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, SEG_NAME);
	atexit(cleanup);
	return 0;
}

static int write_file(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (size) {
		ssize_t n = write(fd, data, size);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		data += n;
		size -= (size_t)n;
	}
	return close(fd);
}

/* Decodes every mapped column of one block, as store/scan.c does. */
static void decode_block(struct gr_segment *s, int t, struct gr_block *blk,
			 struct gr_decoder *dec, const struct gr_blockref *b)
{
	const struct gr_table *tab = &gr_tables[t];
	if (gr_block__parse(blk, b->payload, b->len) ||
	    blk->nrows != (uint64_t)b->count || blk->nrows == 0)
		return;
	if (blk->nrows > cap) {
		int64_t *v = realloc(cv, (size_t)blk->nrows * sizeof(*v));
		if (v)
			cv = v;
		uint8_t *n = realloc(cn, (blk->nrows + 7) / 8);
		if (n)
			cn = n;
		if (!v || !n)
			return;
		cap = blk->nrows;
	}
	for (int c = 0; c < tab->ncols; c++) {
		int sc = s->colmap[t][c], has_nulls;
		if (sc < 0 || sc >= blk->ncols)
			continue;
		if (gr_decoder__column(dec, blk, sc, cv, cn, &has_nulls))
			return;
		if (tab->cols[c].type != GR_STR || !s->dict)
			continue;
		volatile size_t sum = 0;
		for (uint32_t i = 0; i < blk->nrows; i++) {
			uint32_t len;
			const char *str = gr_dict__str(s->dict, cv[i], &len);
			if (str)
				sum += strlen(str) + len;
		}
	}
}

static int sum_visit(void *ctx, const struct gr_sum_ent *e)
{
	(void)ctx;
	(void)e;
	return 0;
}

static void read_summary(struct gr_segment *s)
{
	sqlite3_stmt *st;
	struct gr_sum *sum = gr_sum__new();
	if (!sum)
		return;
	if (sqlite3_prepare_v2(s->db, "SELECT * FROM summary", -1, &st,
			       NULL) == SQLITE_OK) {
		if (sqlite3_column_count(st) >= 20)
			while (sqlite3_step(st) == SQLITE_ROW)
				if (gr_sum__put_row(sum, st))
					break;
		sqlite3_finalize(st);
	}
	gr_sum__rollup(sum);
	gr_sum__each(sum, 0, sum_visit, NULL);
	gr_sum__free(sum);
}

static void problem(void *ctx, const char *p, const char *reason)
{
	(void)ctx;
	(void)p;
	(void)reason;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gr_decoder *dec;
	struct gr_segment *s = NULL;
	struct gr_block blk = { 0 };
	char *err = NULL;

	if (!dec) {
		if (setup() || !(dec = gr_decoder__new()))
			abort();
	}
	if (write_file(data, size))
		abort();
	if (gr_segment__open(path, 1, &s, &err) == 0) {
		free(err);
		err = NULL;
		if (gr_segment__load_dict(s, &err)) {
			free(err);
			err = NULL;
		}
		for (int t = 0; t < GR_NTABLES; t++) {
			struct gr_blockref b;
			int rc, steps = 0;
			if (!(gr_tables[t].flags & GR_TF_EVENT))
				continue;
			if (gr_segment__load_colmap(s, t, &err) ||
			    gr_segment__blocks(s, gr_tables[t].name, INT64_MIN,
					       INT64_MAX, &err)) {
				free(err);
				err = NULL;
				continue;
			}
			/* A bounded walk: a hostile file's rows are many. */
			while (steps++ < 10000 &&
			       (rc = gr_segment__next_block(s, &b, &err))) {
				free(err);
				err = NULL;
				if (rc > 0 || rc == -EBADMSG)
					decode_block(s, t, &blk, dec, &b);
				else
					break;
			}
			free(err);
			err = NULL;
		}
		read_summary(s);
	}
	free(err);
	gr_segment__close(s);
	gr_block__free(&blk);

	struct gr_verify v = { .problem = problem };
	gr_verify__dir(dir, &v);
	return 0;
}
