/* bench_store.c - `make bench` for the segment store, side by side with a
 * plain-SQLite baseline holding the same events.
 *
 * The baseline is what a careful engineer would build without a block
 * store: one row per event, strings interned into a dictionary table, one
 * prepared INSERT per event, WAL, transactions of 65,536 rows, and a view
 * that joins the names back so the same SQL runs on both.  It gets
 * synchronous=NORMAL; the store pays for synchronous=FULL (see
 * store/writer.c).  Both query connections get the same sorter helper
 * threads gpurec uses (PRAGMA threads).  Both ingest the same synthetic launch stream, generated
 * outside the timed sections; times are the thread's CPU time, so the
 * figure is per core, plus wall time for the scans.
 *
 * Output: one `name value unit` line per figure (the names the issue
 * fixes), then the raw timings as comments.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/synth.h"
#include "query/vtab.h"

#define BATCH 65536

static double now_s(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "bench-store: %s: %s\n", what, detail);
	exit(2);
}

static uint64_t dir_bytes(const char *dir)
{
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "du -sb --apparent-size '%s'", dir);
	FILE *p = popen(cmd, "r");
	unsigned long long v = 0;
	if (!p || fscanf(p, "%llu", &v) != 1)
		die("du", dir);
	pclose(p);
	return v;
}

static uint64_t file_bytes(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* ---- the baseline ------------------------------------------------------ */

struct baseline {
	sqlite3 *db;
	sqlite3_stmt *ins, *ins_str;
	uint8_t *have; /* string ids already in the dictionary */
	int nhave;
};

static void bl_exec(struct baseline *b, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(b->db, sql, NULL, NULL, &err) != SQLITE_OK)
		die(sql, err ? err : "?");
}

static void bl_open(struct baseline *b, const char *path)
{
	memset(b, 0, sizeof(*b));
	unlink(path);
	if (sqlite3_open(path, &b->db) != SQLITE_OK)
		die("open", path);
	bl_exec(b, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		   "CREATE TABLE strings(id INTEGER PRIMARY KEY, s TEXT);"
		   "CREATE TABLE rows(ts INTEGER, pid INTEGER, tid INTEGER,"
		   " comm INTEGER, dur INTEGER, api INTEGER, kernel INTEGER,"
		   " kernel_mangled INTEGER, grid_x INTEGER, grid_y INTEGER,"
		   " grid_z INTEGER, block_x INTEGER, block_y INTEGER,"
		   " block_z INTEGER, shared_mem INTEGER, stream INTEGER,"
		   " ret INTEGER);"
		   "CREATE VIEW cuda_kernel AS SELECT ts, pid, tid,"
		   " c.s AS comm, dur, a.s AS api, k.s AS kernel,"
		   " m.s AS kernel_mangled, grid_x, grid_y, grid_z, block_x,"
		   " block_y, block_z, shared_mem, stream, ret FROM rows"
		   " LEFT JOIN strings c ON c.id = rows.comm"
		   " LEFT JOIN strings a ON a.id = rows.api"
		   " LEFT JOIN strings k ON k.id = rows.kernel"
		   " LEFT JOIN strings m ON m.id = rows.kernel_mangled;");
	if (sqlite3_prepare_v2(b->db, "INSERT INTO rows VALUES (?,?,?,?,?,?,?,"
			       "?,?,?,?,?,?,?,?,?,?)", -1, &b->ins, NULL) ||
	    sqlite3_prepare_v2(b->db, "INSERT INTO strings VALUES (?,?)", -1,
			       &b->ins_str, NULL))
		die("prepare", sqlite3_errmsg(b->db));
}

static const int str_cols[] = { GR_cuda_kernel_comm, GR_cuda_kernel_api,
				GR_cuda_kernel_kernel,
				GR_cuda_kernel_kernel_mangled };

static void bl_insert(struct baseline *b, struct gr_synth *s,
		      const int64_t *v)
{
	for (int k = 0; k < 4; k++) {
		int64_t id = v[str_cols[k]];
		if (id >= b->nhave) {
			int n = (int)id * 2 + 16;
			b->have = realloc(b->have, (size_t)n);
			memset(b->have + b->nhave, 0, (size_t)(n - b->nhave));
			b->nhave = n;
		}
		if (b->have[id])
			continue;
		b->have[id] = 1;
		sqlite3_bind_int64(b->ins_str, 1, id);
		sqlite3_bind_text(b->ins_str, 2, gr_synth__str(s, id), -1,
				  SQLITE_STATIC);
		if (sqlite3_step(b->ins_str) != SQLITE_DONE)
			die("insert string", sqlite3_errmsg(b->db));
		sqlite3_reset(b->ins_str);
	}
	int p = 1;
	for (int c = 0; c < GR_cuda_kernel__NCOLS; c++)
		if (c != GR_cuda_kernel_host)
			sqlite3_bind_int64(b->ins, p++, v[c]);
	if (sqlite3_step(b->ins) != SQLITE_DONE)
		die("insert", sqlite3_errmsg(b->db));
	sqlite3_reset(b->ins);
}

/* ---- scans ------------------------------------------------------------- */

struct scan_result {
	double wall;
	int64_t a;
	double b;
};

static struct scan_result run_query(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	struct scan_result r = { 0 };
	double t0 = now_s(CLOCK_MONOTONIC);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die(sql, sqlite3_errmsg(db));
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r.a += sqlite3_column_int64(st, 1);
		r.b += sqlite3_column_double(st, 2);
	}
	if (rc != SQLITE_DONE)
		die(sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	r.wall = now_s(CLOCK_MONOTONIC) - t0;
	return r;
}

/* The best of n runs, after one warm-up run. */
static struct scan_result best_of(sqlite3 *db, const char *sql, int n)
{
	struct scan_result best = run_query(db, sql);
	for (int i = 0; i < n; i++) {
		struct scan_result r = run_query(db, sql);
		if (r.wall < best.wall)
			best = r;
	}
	return best;
}

/* ---- writer memory at a paced 1M events/s ------------------------------ */

static double paced_rss_mib(const char *dir, int seconds)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork", strerror(errno));
	if (pid == 0) {
		struct gr_store_opts so = { .dir = dir, .host = "bench",
					    .no_immutable = 1 };
		struct gr_writer *w = gr_writer__open(&so);
		struct gr_synth_opts sy = { .seed = 7,
					    .start_ns = 1795000000000000000 };
		struct gr_synth *s = w ? gr_synth__new(w, &sy) : NULL;
		if (!s)
			_exit(2);
		double t0 = now_s(CLOCK_MONOTONIC);
		for (int sec = 0; sec < seconds; sec++) {
			/* 1M events, flushed each second as gpurecd does. */
			for (int k = 0; k < 10; k++) {
				if (gr_synth__write(s, GR_T_cuda_kernel, 100000, 0))
					_exit(2);
				double due = t0 + sec + (k + 1) / 10.0;
				double left = due - now_s(CLOCK_MONOTONIC);
				if (left > 0)
					usleep((useconds_t)(left * 1e6));
			}
			if (gr_writer__flush(w))
				_exit(2);
		}
		gr_synth__free(s);
		_exit(gr_writer__close(w) ? 2 : 0);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("paced writer", "failed");
	return (double)ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
	uint64_t events = 50000000;
	const char *work = "build/bench-data";
	const char *env = getenv("BENCH_EVENTS");
	if (env)
		events = strtoull(env, NULL, 10);
	if (argc > 1)
		work = argv[1];
	if (events < BATCH)
		events = BATCH;

	char cmd[8500], dir[4200], bl_path[4200], rss_dir[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", work, work);
	if (system(cmd) != 0)
		die("mkdir", work);
	snprintf(dir, sizeof(dir), "%s/store", work);
	snprintf(bl_path, sizeof(bl_path), "%s/baseline.db", work);
	snprintf(rss_dir, sizeof(rss_dir), "%s/paced", work);

	/* First, while this process is small: the child's peak RSS counts
	 * the pages it shares with us. */
	double rss = paced_rss_mib(rss_dir, 5);

	/* Both ingest the same stream, batch by batch. */
	struct gr_store_opts so = { .dir = dir, .host = "bench",
					    .no_immutable = 1 };
	struct gr_writer *w = gr_writer__open(&so);
	if (!w)
		die("open store", dir);
	struct gr_synth_opts sy = { .seed = 42,
				    .start_ns = 1795000000000000000 };
	struct gr_synth *s = gr_synth__new(NULL, &sy);
	if (!s)
		die("synth", "out of memory");
	/* The writer's dictionary must give the same ids the synth made. */
	for (int64_t id = 1; gr_synth__str(s, id); id++) {
		const char *str = gr_synth__str(s, id);
		if (gr_writer__intern(w, str, strlen(str)) != (uint32_t)id)
			die("intern", "ids differ");
	}
	struct baseline bl;
	bl_open(&bl, bl_path);

	int64_t *buf = malloc((size_t)BATCH * GR_MAX_COLS * sizeof(int64_t));
	uint64_t *nm = malloc(BATCH * sizeof(uint64_t));
	if (!buf || !nm)
		die("malloc", "batch");
	double cpu_store = 0, cpu_base = 0;
	for (uint64_t done = 0; done < events; done += BATCH) {
		for (int i = 0; i < BATCH; i++)
			gr_synth__next_launch(s, buf + (size_t)i * GR_MAX_COLS,
					      &nm[i]);
		double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
		for (int i = 0; i < BATCH; i++)
			if (gr_writer__append(w, GR_T_cuda_kernel,
					      buf + (size_t)i * GR_MAX_COLS, nm[i]))
				die("append", dir);
		/* One flush per batch, a transaction on both sides. */
		if (gr_writer__flush(w))
			die("flush", dir);
		double t1 = now_s(CLOCK_THREAD_CPUTIME_ID);
		bl_exec(&bl, "BEGIN");
		for (int i = 0; i < BATCH; i++)
			bl_insert(&bl, s, buf + (size_t)i * GR_MAX_COLS);
		bl_exec(&bl, "COMMIT");
		double t2 = now_s(CLOCK_THREAD_CPUTIME_ID);
		cpu_store += t1 - t0;
		cpu_base += t2 - t1;
	}
	events = (events / BATCH) * BATCH;
	if (gr_writer__close(w))
		die("close", dir);
	bl_exec(&bl, "PRAGMA wal_checkpoint(TRUNCATE)");

	double ingest = (double)events / cpu_store;
	double ingest_bl = (double)events / cpu_base;
	double bpe = (double)dir_bytes(dir) / (double)events;
	double bpe_bl = (double)(file_bytes(bl_path)) / (double)events;

	/* Scans: the same SQL on both. */
	struct gr_qctx q = { .since = INT64_MIN, .until = INT64_MAX,
			     .warn = stderr };
	char *err = NULL;
	char *dirs[1] = { dir };
	if (gr_catalog__open(&q.cat, dirs, 1, &err))
		die("catalog", err);
	sqlite3 *qdb;
	sqlite3_open(":memory:", &qdb);
	if (gr_vtab__register(qdb, &q) != SQLITE_OK)
		die("vtab", sqlite3_errmsg(qdb));
	/* gpurec lets SQLite's sorter use a helper thread per core; the
	 * baseline gets the same setting. */
	char threads[32];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(threads, sizeof(threads), "PRAGMA threads=%ld",
		 cores > 8 ? 8 : cores > 1 ? cores : 0);
	bl_exec(&bl, threads);
	sqlite3_exec(qdb, threads, NULL, NULL, NULL);
	const char *scan_sql = "SELECT 0, count(*), sum(dur) FROM cuda_kernel "
			       "WHERE dur > 3500";
	const char *group_sql = "SELECT kernel, count(*), sum(dur) FROM "
				"cuda_kernel GROUP BY kernel";
	struct scan_result sc = best_of(qdb, scan_sql, 2);
	struct scan_result sc_bl = best_of(bl.db, scan_sql, 2);
	if (sc.a != sc_bl.a || sc.b != sc_bl.b)
		die("scan", "results differ between store and baseline");
	struct scan_result gb = best_of(qdb, group_sql, 0);
	struct scan_result gb_bl = best_of(bl.db, group_sql, 0);
	if (gb.a != gb_bl.a || gb.b != gb_bl.b)
		die("group by", "results differ between store and baseline");

	printf("store.ingest_events_per_s %.0f events/s\n", ingest);
	printf("store.ingest_ratio_vs_sqlite %.2f x\n", ingest / ingest_bl);
	printf("store.bytes_per_event %.3f B\n", bpe);
	printf("store.size_ratio_vs_sqlite %.4f x\n", bpe / bpe_bl);
	printf("store.scan_rows_per_s %.0f rows/s\n",
	       (double)events / sc.wall);
	printf("store.scan_ratio_vs_sqlite %.2f x\n", sc_bl.wall / sc.wall);
	printf("store.groupby_ratio_vs_sqlite %.2f x\n", gb_bl.wall / gb.wall);
	printf("store.writer_peak_rss_mib %.1f MiB\n", rss);
	printf("# events %" PRIu64 "; baseline ingest %.0f events/s, %.1f B/event"
	       "\n# scan (dur > 3500, %" PRId64 " rows match): store %.3f s, "
	       "baseline %.3f s\n# group by kernel: store %.3f s, baseline "
	       "%.3f s\n", events, ingest_bl, bpe_bl, sc.a, sc.wall,
	       sc_bl.wall, gb.wall, gb_bl.wall);
	printf("# blocks read by the store's last scan: %" PRIu64 "\n",
	       q.blocks_read);
	sqlite3_close(qdb);
	gr_catalog__free(&q.cat);
	free(q.warned);
	sqlite3_close(bl.db);
	gr_synth__free(s);
	free(buf);
	free(nm);
	return 0;
}
