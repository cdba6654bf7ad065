/* test_ringbuf_drops.c - loss is recorded, never waited for (root, eBPF).
 *
 * This program defines its own cudaLaunchKernel, lets the CUDA probe
 * family discover and attach to it, and calls it 500 times while nothing
 * drains a deliberately tiny (4 KiB) ring buffer.  Every call must return
 * (the traced thread never waits) and every call must be accounted for:
 * rows recorded + the `drops` rows' counts == 500, with drops > 0.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "query/vtab.h"
#include "recorder/cuda/family.h"
#include "tests/unit/test.h"

#define CALLS 500

struct dim3 { unsigned x, y, z; };

/* Named like the runtime's entry point, with its argument layout. */
__attribute__((noinline, used)) int cudaLaunchKernel(const void *f,
	struct dim3 g, struct dim3 b, void **args, size_t smem, void *stream)
{
	__asm__ volatile("" ::: "memory");
	return (int)(g.x + b.x + smem) + (f != NULL) + (args != NULL) +
	       (stream != NULL);
}

static void quiet(const char *fmt, ...)
{
	(void)fmt;
}

static void store_quiet(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

static int64_t q1(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

TEST(tiny_ring_buffer_counts_every_loss)
{
	char dir[] = "/tmp/gpurec-drops-XXXXXX";
	CHECK(mkdtemp(dir));
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = store_quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	struct gr_cuda_opts co = { .w = w, .log = quiet, .ringbuf_bytes = 4096,
				   .record_self = 1 };
	struct gr_cuda *c = gr_cuda__open(&co);
	CHECK(c);
	/* gpurecd ignores its own process; this test is its own target
	 * (record_self), attached by path since discovery skips itself. */
	CHECK_EQ_INT(gr_cuda__attach_path(c, "/proc/self/exe"), 2);
	void *args[1] = { 0 };
	int sum = 0;
	for (int i = 0; i < CALLS; i++)
		sum += cudaLaunchKernel((void *)quiet, (struct dim3){ 4, 2, 1 },
					(struct dim3){ 128, 1, 1 }, args, 0,
					NULL);
	CHECK_EQ_INT(sum, CALLS * (4 + 128 + 2));
	CHECK(gr_cuda__poll(c) >= 0);
	gr_cuda__report_drops(c, 1795000000000000000);
	gr_cuda__close(c);
	CHECK_EQ_INT(gr_writer__close(w), 0);

	struct gr_qctx q = { .since = INT64_MIN, .until = INT64_MAX,
			     .warn = stderr };
	char *err = NULL, *dirs[1] = { dir };
	CHECK_EQ_INT(gr_catalog__open(&q.cat, dirs, 1, &err), 0);
	sqlite3 *db;
	sqlite3_open(":memory:", &db);
	CHECK_EQ_INT(gr_vtab__register(db, &q), SQLITE_OK);
	int64_t rows = q1(db, "SELECT count(*) FROM cuda_kernel");
	int64_t dropped = q1(db, "SELECT sum(count) FROM drops WHERE source = "
				 "'cuda:ringbuf'");
	printf("# %lld rows, %lld dropped\n", (long long)rows,
	       (long long)dropped);
	CHECK(rows > 0);
	CHECK(dropped > 0);
	CHECK_EQ_INT(rows + dropped, CALLS);
	CHECK_EQ_INT(q1(db, "SELECT count(*) FROM cuda_kernel WHERE grid_x = 4 "
			    "AND block_x = 128 AND api = 'cudaLaunchKernel'"),
		     rows);
	sqlite3_close(db);
	gr_catalog__free(&q.cat);
	free(q.warned);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ_INT(system(cmd), 0);
}


TEST_MAIN(TEST_ENTRY(tiny_ring_buffer_counts_every_loss))
