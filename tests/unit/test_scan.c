/* test_scan.c - the scan cursor (store/scan.h) over a segment written by
 * the real writer: windows prune blocks, masks decode only what they name,
 * strings come from the dictionary, a damaged block is skipped and the
 * scan goes on, and the segment's block statistics add up. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store/scan.h"
#include "store/store.h"
#include "tests/unit/test.h"

#define T0 1795000000000000000ll
#define NRUNQ 25   /* runq rows, 10 a block: blocks of 10, 10, 5 */
#define NDROPS 7

static void quiet(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

static void rmrf(const char *d)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", d);
}

/* Writes one sealed segment into a new directory: NRUNQ runq rows (ts
 * T0 + 1000 i, pid 100 + i % 3, comm "a" or "bb", cpu NULL when i % 5 is
 * 0) and NDROPS drops rows.  Returns the segment's path (malloc'd) and
 * the directory in *dir, or NULL. */
static char *make_segment(char **dir)
{
	*dir = strdup("/tmp/gpurec-scan-XXXXXX");
	if (!*dir || !mkdtemp(*dir))
		return NULL;
	struct gr_store_opts so = { .dir = *dir, .host = "scan-host",
				    .no_immutable = 1, .log = quiet,
				    .block_rows = 10 };
	struct gr_writer *w = gr_writer__open(&so);
	if (!w)
		return NULL;
	uint32_t a = gr_writer__intern(w, "a", 1);
	uint32_t bb = gr_writer__intern(w, "bb", 2);
	uint32_t src = gr_writer__intern(w, "ringbuf:test", 12);
	int64_t v[GR_MAX_COLS] = { 0 };
	for (int i = 0; i < NRUNQ; i++) {
		v[GR_runq_ts] = T0 + 1000 * i;
		v[GR_runq_pid] = 100 + i % 3;
		v[GR_runq_tid] = 7;
		v[GR_runq_comm] = i % 2 ? bb : a;
		v[GR_runq_dur] = i;
		v[GR_runq_cpu] = 3;
		uint64_t nm = i % 5 == 0 ? 1ull << GR_runq_cpu : 0;
		if (gr_writer__append(w, GR_T_runq, v, nm))
			return NULL;
	}
	memset(v, 0, sizeof(v));
	for (int i = 0; i < NDROPS; i++) {
		v[GR_drops_ts] = T0 + 500 + 1000 * i;
		v[GR_drops_comm] = a;
		v[GR_drops_source] = src;
		v[GR_drops_count] = i + 1;
		if (gr_writer__append(w, GR_T_drops, v, 0))
			return NULL;
	}
	if (gr_writer__close(w))
		return NULL;
	char **names;
	int n;
	if (gr_segments__list(*dir, &names, &n) || n != 1)
		return NULL;
	char *path;
	if (asprintf(&path, "%s/%s", *dir, names[0]) < 0)
		path = NULL;
	gr_segments__free(names, n);
	return path;
}

/* Scans table t of path over [lo, hi] with mask; counts blocks and rows
 * and sums column col (when decoded).  Returns the scan's last rc. */
static int scan_count(const char *path, int t, int64_t lo, int64_t hi,
		      uint64_t mask, int col, int *blocks, int *rows,
		      int64_t *sum)
{
	struct gr_segment *s;
	struct gr_scan *sc = gr_scan__new();
	char *err = NULL;
	int rc;
	*blocks = *rows = 0;
	*sum = 0;
	if (!sc || gr_segment__open(path, 1, &s, &err))
		return -1;
	if ((rc = gr_scan__start(sc, s, t, lo, hi, mask, &err)) == 0) {
		struct gr_scan_block b;
		while ((rc = gr_scan__next(sc, &b, &err)) == 1) {
			(*blocks)++;
			*rows += (int)b.nrows;
			for (uint32_t r = 0; col >= 0 && b.v[col] &&
					     r < b.nrows; r++)
				*sum += b.v[col][r];
		}
	}
	free(err);
	gr_scan__free(sc);
	gr_segment__close(s);
	return rc;
}

TEST(whole_window_reads_every_block)
{
	char *dir, *path = make_segment(&dir);
	int blocks, rows;
	int64_t sum;
	CHECK(path);
	CHECK_EQ_INT(scan_count(path, GR_T_runq, INT64_MIN, INT64_MAX, ~0ull,
				GR_runq_dur, &blocks, &rows, &sum), 0);
	CHECK_EQ_INT(blocks, 3);
	CHECK_EQ_INT(rows, NRUNQ);
	CHECK_EQ_INT(sum, NRUNQ * (NRUNQ - 1) / 2);
	CHECK_EQ_INT(scan_count(path, GR_T_drops, INT64_MIN, INT64_MAX, ~0ull,
				GR_drops_count, &blocks, &rows, &sum), 0);
	CHECK_EQ_INT(blocks, 1);
	CHECK_EQ_INT(rows, NDROPS);
	CHECK_EQ_INT(sum, NDROPS * (NDROPS + 1) / 2);
	/* A table with no blocks in the segment ends at once. */
	CHECK_EQ_INT(scan_count(path, GR_T_cuda_kernel, INT64_MIN, INT64_MAX,
				~0ull, -1, &blocks, &rows, &sum), 0);
	CHECK_EQ_INT(blocks, 0);
	rmrf(dir);
	free(dir);
	free(path);
}

TEST(window_prunes_blocks_not_rows)
{
	char *dir, *path = make_segment(&dir);
	int blocks, rows;
	int64_t sum;
	CHECK(path);
	/* Rows 12..14 lie in the second block: it comes back whole. */
	CHECK_EQ_INT(scan_count(path, GR_T_runq, T0 + 12000, T0 + 14000,
				1ull << GR_runq_dur, GR_runq_dur, &blocks,
				&rows, &sum), 0);
	CHECK_EQ_INT(blocks, 1);
	CHECK_EQ_INT(rows, 10);
	CHECK_EQ_INT(sum, 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19);
	/* The bounds are inclusive: the last row of block 1 and the first
	 * of block 2. */
	CHECK_EQ_INT(scan_count(path, GR_T_runq, T0 + 9000, T0 + 10000, 0, -1,
				&blocks, &rows, &sum), 0);
	CHECK_EQ_INT(blocks, 2);
	CHECK_EQ_INT(rows, 20);
	/* Before the first event and after the last: nothing. */
	CHECK_EQ_INT(scan_count(path, GR_T_runq, INT64_MIN, T0 - 1, ~0ull, -1,
				&blocks, &rows, &sum), 0);
	CHECK_EQ_INT(blocks, 0);
	CHECK_EQ_INT(scan_count(path, GR_T_runq, T0 + 24001, INT64_MAX, ~0ull,
				-1, &blocks, &rows, &sum), 0);
	CHECK_EQ_INT(blocks, 0);
	rmrf(dir);
	free(dir);
	free(path);
}

TEST(mask_decodes_only_its_columns)
{
	char *dir, *path = make_segment(&dir);
	struct gr_segment *s;
	struct gr_scan *sc = gr_scan__new();
	struct gr_scan_block b;
	char *err = NULL;
	CHECK(path && sc);
	CHECK_EQ_INT(gr_segment__open(path, 1, &s, &err), 0);
	uint64_t mask = 1ull << GR_runq_ts | 1ull << GR_runq_cpu |
			1ull << GR_runq_host;
	CHECK_EQ_INT(gr_scan__start(sc, s, GR_T_runq, INT64_MIN, INT64_MAX,
				    mask, &err), 0);
	CHECK_EQ_INT(gr_scan__next(sc, &b, &err), 1);
	CHECK_EQ_INT(b.nrows, 10);
	CHECK(b.v[GR_runq_ts] && b.v[GR_runq_cpu]);
	CHECK(!b.v[GR_runq_pid] && !b.v[GR_runq_dur] && !b.v[GR_runq_comm]);
	CHECK(!b.v[GR_runq_host]); /* HOST is metadata, never a column */
	CHECK_EQ_INT(b.v[GR_runq_ts][3], T0 + 3000);
	/* cpu is NULL in rows 0 and 5, 3 elsewhere. */
	CHECK(b.nulls[GR_runq_cpu]);
	CHECK_EQ_INT(b.nulls[GR_runq_cpu][0], 0x21);
	CHECK_EQ_INT(b.nulls[GR_runq_cpu][1], 0);
	CHECK_EQ_INT(b.v[GR_runq_cpu][4], 3);
	CHECK(!b.nulls[GR_runq_ts]);
	/* No string column decoded: the dictionary is not loaded. */
	CHECK(gr_segment__dict(s) == NULL);
	/* Restarted with another mask, the same scan decodes dur. */
	CHECK_EQ_INT(gr_scan__start(sc, s, GR_T_runq, T0 + 20000, INT64_MAX,
				    1ull << GR_runq_dur, &err), 0);
	CHECK_EQ_INT(gr_scan__next(sc, &b, &err), 1);
	CHECK_EQ_INT(b.nrows, 5);
	CHECK(!b.v[GR_runq_ts]);
	CHECK_EQ_INT(b.v[GR_runq_dur][4], 24);
	CHECK_EQ_INT(gr_scan__next(sc, &b, &err), 0);
	CHECK_EQ_INT(gr_scan__next(sc, &b, &err), 0); /* stays at the end */
	gr_scan__free(sc);
	gr_segment__close(s);
	rmrf(dir);
	free(dir);
	free(path);
}

TEST(dictionary_gives_strings)
{
	char *dir, *path = make_segment(&dir);
	struct gr_segment *s;
	struct gr_scan *sc = gr_scan__new();
	struct gr_scan_block b;
	char *err = NULL;
	uint32_t len = 0;
	CHECK(path && sc);
	CHECK_EQ_INT(gr_segment__open(path, 1, &s, &err), 0);
	CHECK_EQ_INT(gr_scan__start(sc, s, GR_T_runq, INT64_MIN, INT64_MAX,
				    1ull << GR_runq_comm, &err), 0);
	int a = 0, bb = 0;
	while (gr_scan__next(sc, &b, &err) == 1) {
		const struct gr_dict *d = gr_segment__dict(s);
		CHECK(d);
		for (uint32_t r = 0; r < b.nrows; r++) {
			const char *str = gr_dict__str(d, b.v[GR_runq_comm][r],
						       &len);
			CHECK(str);
			if (!strcmp(str, "a") && len == 1)
				a++;
			else if (!strcmp(str, "bb") && len == 2)
				bb++;
		}
	}
	CHECK_EQ_INT(a, 13);
	CHECK_EQ_INT(bb, 12);
	const struct gr_dict *d = gr_segment__dict(s);
	CHECK(gr_dict__str(d, 0, &len) == NULL);
	CHECK(gr_dict__str(d, -1, &len) == NULL);
	CHECK(gr_dict__str(d, (int64_t)d->n + 1, &len) == NULL);
	CHECK(gr_dict__str(NULL, 1, &len) == NULL);
	/* Taken, the dictionary outlives the segment. */
	struct gr_dict *taken = gr_segment__take_dict(s);
	CHECK(taken && gr_segment__dict(s) == NULL);
	gr_scan__free(sc);
	gr_segment__close(s);
	int found = 0;
	for (uint32_t id = 1; id <= taken->n; id++) {
		const char *str = gr_dict__str(taken, id, &len);
		found += str && !strcmp(str, "ringbuf:test") && len == 12;
	}
	CHECK_EQ_INT(found, 1);
	gr_dict__free(taken);
	rmrf(dir);
	free(dir);
	free(path);
}

struct tb_sum {
	int tables;
	int64_t runq_blocks, drops_blocks;
	double runq_events, drops_events;
};

static int add_tb(void *ctx, const struct gr_table_blocks *tb)
{
	struct tb_sum *t = ctx;
	t->tables++;
	if (!strcmp(tb->table, "runq")) {
		t->runq_blocks = tb->blocks;
		t->runq_events = tb->events;
	} else if (!strcmp(tb->table, "drops")) {
		t->drops_blocks = tb->blocks;
		t->drops_events = tb->events;
	}
	return 0;
}

TEST(metadata_span_and_block_statistics)
{
	char *dir, *path = make_segment(&dir);
	struct gr_segment *s;
	char *err = NULL;
	CHECK(path);
	CHECK_EQ_INT(gr_segment__open(path, 1, &s, &err), 0);
	const struct gr_segment_info *si = gr_segment__info(s);
	CHECK_EQ_STR(si->host, "scan-host");
	CHECK_EQ_INT(si->sealed, 1);
	CHECK_EQ_INT(si->events, NRUNQ + NDROPS);
	CHECK_EQ_INT(si->start_ts, T0);
	CHECK_EQ_INT(si->end_ts, T0 + 1000 * (NRUNQ - 1));
	int64_t lo, hi, n;
	CHECK_EQ_INT(gr_segment__span(s, &lo, &hi, &n, &err), 1);
	CHECK_EQ_INT(lo, T0);
	CHECK_EQ_INT(hi, T0 + 1000 * (NRUNQ - 1));
	CHECK_EQ_INT(n, NRUNQ + NDROPS);
	struct tb_sum t = { 0 };
	CHECK_EQ_INT(gr_segment__table_blocks(s, add_tb, &t, &err), 0);
	CHECK_EQ_INT(t.tables, 2);
	CHECK_EQ_INT(t.runq_blocks, 3);
	CHECK_EQ_INT((int64_t)t.runq_events, NRUNQ);
	CHECK_EQ_INT(t.drops_blocks, 1);
	CHECK_EQ_INT((int64_t)t.drops_events, NDROPS);
	gr_segment__close(s);
	rmrf(dir);
	free(dir);
	free(path);
}

TEST(bad_checksum_skips_one_block)
{
	char *dir, *path = make_segment(&dir);
	sqlite3 *db;
	CHECK(path);
	CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(db, "UPDATE blocks SET crc = crc + 1 WHERE "
				  "id = (SELECT min(id) FROM blocks WHERE "
				  "tbl = 'runq')", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	struct gr_segment *s;
	struct gr_scan *sc = gr_scan__new();
	struct gr_scan_block b;
	char *err = NULL;
	CHECK(sc);
	CHECK_EQ_INT(gr_segment__open(path, 1, &s, &err), 0);
	CHECK_EQ_INT(gr_scan__start(sc, s, GR_T_runq, INT64_MIN, INT64_MAX,
				    1ull << GR_runq_ts, &err), 0);
	CHECK_EQ_INT(gr_scan__next(sc, &b, &err), -EBADMSG);
	CHECK(err && strstr(err, "fails its checksum"));
	free(err);
	err = NULL;
	int rows = 0, blocks = 0, rc;
	while ((rc = gr_scan__next(sc, &b, &err)) == 1) {
		blocks++;
		rows += (int)b.nrows;
	}
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(blocks, 2);
	CHECK_EQ_INT(rows, NRUNQ - 10);
	gr_scan__free(sc);
	gr_segment__close(s);
	rmrf(dir);
	free(dir);
	free(path);
}

TEST_MAIN(TEST_ENTRY(whole_window_reads_every_block)
	  TEST_ENTRY(window_prunes_blocks_not_rows)
	  TEST_ENTRY(mask_decodes_only_its_columns)
	  TEST_ENTRY(dictionary_gives_strings)
	  TEST_ENTRY(metadata_span_and_block_statistics)
	  TEST_ENTRY(bad_checksum_skips_one_block))
