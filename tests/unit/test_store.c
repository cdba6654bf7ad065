/* test_store.c - the block codec and the segment store, end to end.
 *
 * Round trips every column type (TS, INT, STR, HOST, NULL) with edge values
 * through encode/decode and through writer -> segment -> SQL; rotation,
 * retention and crash recovery; malformed payloads never crash a reader.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "query/vtab.h"
#include "store/codec.h"
#include "store/fss.h"
#include "store/store.h"
#include "store/summary.h"
#include "store/walview.h"
#include "tests/unit/test.h"

static const int64_t edge[] = { 0, -1, 1, INT64_MAX, INT64_MIN, 127, 128,
				-128, 255, 256, 65535, 1ll << 40, -(1ll << 40),
				INT64_MAX - 1, INT64_MIN + 1 };
#define NEDGE (int)(sizeof(edge) / sizeof(edge[0]))

static void quiet(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/gpurec-test-XXXXXX");
	return mkdtemp(d);
}

static void rmrf(const char *d)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", d);
}

/* ---- codec ------------------------------------------------------------- */

TEST(codec_round_trip_edges)
{
	enum { N = 1000, C = 5 };
	struct gr_colbuf cols[C];
	for (int c = 0; c < C; c++) {
		cols[c].v = calloc(N, sizeof(int64_t));
		cols[c].nulls = NULL;
	}
	uint8_t *nulls = calloc((N + 7) / 8, 1);
	for (int i = 0; i < N; i++) {
		cols[0].v[i] = edge[i % NEDGE];                  /* plain */
		cols[1].v[i] = 1795000000000000000 + i * 1000ll; /* delta */
		cols[2].v[i] = 42;                               /* const */
		cols[3].v[i] = i % 3 ? edge[(i * 7) % NEDGE] : 0; /* nulls */
		if (i % 3 == 0)
			nulls[i >> 3] |= (uint8_t)(1u << (i & 7));
		cols[4].v[i] = 0;                                /* all null */
	}
	cols[3].nulls = nulls;
	uint8_t *allnull = malloc((N + 7) / 8);
	memset(allnull, 0xff, (N + 7) / 8);
	cols[4].nulls = allnull;

	struct gr_encoder *e = gr_encoder__new(3);
	struct gr_decoder *d = gr_decoder__new();
	struct gr_buf out = { 0 };
	struct gr_block blk = { 0 };
	CHECK(e && d);
	CHECK_EQ_INT(gr_encoder__encode(e, cols, C, N, NULL, &out), 0);
	CHECK_EQ_INT(gr_block__parse(&blk, out.p, out.len), 0);
	CHECK_EQ_INT(blk.nrows, N);
	CHECK_EQ_INT(blk.ncols, C);
	CHECK_EQ_INT(blk.cols[2].flags & GR_ENC_MASK, GR_ENC_CONST);
	CHECK_EQ_INT(blk.cols[1].flags & GR_ENC_MASK, GR_ENC_DELTA);
	int64_t got[N];
	uint8_t gn[(N + 7) / 8];
	int hn;
	for (int c = 0; c < C; c++) {
		CHECK_EQ_INT(gr_decoder__column(d, &blk, c, got, gn, &hn), 0);
		CHECK_EQ_INT(hn, c >= 3);
		for (int i = 0; i < N; i++) {
			int isnull = (gn[i >> 3] >> (i & 7)) & 1;
			int want_null = c == 4 || (c == 3 && i % 3 == 0);
			CHECK_EQ_INT(isnull, want_null);
			if (!want_null)
				CHECK_EQ_INT(got[i], cols[c].v[i]);
		}
	}
	gr_block__free(&blk);
	gr_buf__free(&out);
	gr_encoder__free(e);
	gr_decoder__free(d);
	for (int c = 0; c < C; c++)
		free(cols[c].v);
	free(nulls);
	free(allnull);
}

/* Every byte width, plain and delta: the decoder has a loop of its own
 * for each (store/codec.c unplane()).  Values whose zigzag takes exactly
 * w bytes, signs alternating, with a row whose high bytes are all set. */
TEST(codec_every_width)
{
	enum { N = 1100 }; /* over CUT_MIN_ROWS: frames cut at planes */
	for (int w = 1; w <= 8; w++) {
		for (int delta = 0; delta < 2; delta++) {
			int64_t *v = malloc(N * sizeof(*v)), prev = 0;
			uint64_t top = w == 8 ? ~0ull : (1ull << (8 * w)) - 1;
			for (int i = 0; i < N; i++) {
				/* zigzag z: the difference (delta) or value */
				uint64_t z = i == 7 ? top : (top >> 1) + (uint64_t)i * 2654435761u % (top >> 1 | 1);
				int64_t x = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
				prev = delta ? (int64_t)((uint64_t)prev + (uint64_t)x) : x;
				v[i] = prev;
			}
			struct gr_colbuf col = { v, NULL };
			struct gr_encoder *e = gr_encoder__new(1);
			struct gr_decoder *d = gr_decoder__new();
			struct gr_buf out = { 0 };
			struct gr_block blk = { 0 };
			int64_t *got = calloc(N, sizeof(*got));
			int hn = 1;
			CHECK_EQ_INT(gr_encoder__encode(e, &col, 1, N, NULL, &out), 0);
			CHECK_EQ_INT(gr_block__parse(&blk, out.p, out.len), 0);
			CHECK_EQ_INT(gr_decoder__column(d, &blk, 0, got, NULL, &hn), 0);
			int bad = 0;
			for (int i = 0; i < N; i++)
				bad += got[i] != v[i];
			CHECK_EQ_INT(bad, 0);
			gr_block__free(&blk);
			gr_buf__free(&out);
			gr_encoder__free(e);
			gr_decoder__free(d);
			free(got);
			free(v);
		}
	}
}

/* A column of jittered nanosecond durations (random low byte, skewed
 * second, nearly constant third): its frame, cut into a zstd block per
 * byte plane, must be smaller than zstd's frame of the same raw bytes
 * compressed whole at the same level (the planes' entropy tables kept
 * apart), and an ordinary frame: ZSTD_decompress() gives the raw bytes. */
TEST(codec_frame_cut_at_planes)
{
	enum { N = 65536 };
	int64_t *v = malloc(N * sizeof(*v));
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[i] = 4000 + (int64_t)(x % 3000) + (int64_t)(x >> 60) * 9000;
	}
	struct gr_colbuf col = { v, NULL };
	struct gr_encoder *e = gr_encoder__new(1);
	struct gr_buf out = { 0 };
	struct gr_block blk = { 0 };
	CHECK_EQ_INT(gr_encoder__encode(e, &col, 1, N, NULL, &out), 0);
	CHECK_EQ_INT(gr_block__parse(&blk, out.p, out.len), 0);
	CHECK(blk.cols[0].flags & GR_ENC_ZSTD);
	size_t rawn = blk.cols[0].raw_len, stored = blk.cols[0].stored_len;
	uint8_t *raw = malloc(rawn), *whole = malloc(ZSTD_compressBound(rawn));
	CHECK_EQ_INT(ZSTD_decompress(raw, rawn, blk.payload + blk.cols[0].off,
				     stored), rawn);
	CHECK_EQ_INT(raw[0], 3); /* width: three planes */
	size_t z = ZSTD_compress(whole, ZSTD_compressBound(rawn), raw, rawn, 1);
	CHECK(!ZSTD_isError(z));
	if (!(stored < z))
		fprintf(stderr, "cut frame %zu bytes, whole %zu\n", stored, z);
	CHECK(stored < z);
	free(raw);
	free(whole);
	free(v);
	gr_block__free(&blk);
	gr_buf__free(&out);
	gr_encoder__free(e);
}

TEST(codec_one_row)
{
	int64_t v = INT64_MIN;
	struct gr_colbuf col = { &v, NULL };
	struct gr_encoder *e = gr_encoder__new(1);
	struct gr_decoder *d = gr_decoder__new();
	struct gr_buf out = { 0 };
	struct gr_block blk = { 0 };
	int64_t got = 0;
	int hn = 1;
	CHECK_EQ_INT(gr_encoder__encode(e, &col, 1, 1, NULL, &out), 0);
	CHECK_EQ_INT(gr_block__parse(&blk, out.p, out.len), 0);
	CHECK_EQ_INT(gr_decoder__column(d, &blk, 0, &got, NULL, &hn), 0);
	CHECK_EQ_INT(got, INT64_MIN);
	CHECK_EQ_INT(hn, 0);
	gr_block__free(&blk);
	gr_buf__free(&out);
	gr_encoder__free(e);
	gr_decoder__free(d);
}

/* Every truncation and many byte flips of a valid payload must be refused
 * or decode to something, never read out of bounds (ASan watches). */
TEST(codec_malformed_payloads)
{
	enum { N = 300 };
	int64_t a[N], b[N];
	for (int i = 0; i < N; i++) {
		a[i] = i * 977;
		b[i] = (i * 31) % 7 - 3;
	}
	struct gr_colbuf cols[2] = { { a, NULL }, { b, NULL } };
	struct gr_encoder *e = gr_encoder__new(3);
	struct gr_decoder *d = gr_decoder__new();
	struct gr_buf out = { 0 };
	struct gr_block blk = { 0 };
	int64_t *got = malloc(sizeof(int64_t) * 4096);
	uint8_t *gn = malloc(4096);
	int hn, refused = 0;
	CHECK_EQ_INT(gr_encoder__encode(e, cols, 2, N, NULL, &out), 0);
	for (size_t len = 0; len < out.len; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, out.p, len);
		if (gr_block__parse(&blk, copy, len) != 0)
			refused++;
		free(copy);
	}
	/* Every strict prefix is refused: lengths must add up exactly. */
	CHECK_EQ_INT(refused, (int)out.len);
	uint64_t x = 88172645463325252ull;
	for (int k = 0; k < 3000; k++) {
		uint8_t *copy = malloc(out.len);
		memcpy(copy, out.p, out.len);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		copy[x % out.len] ^= (uint8_t)(1u << (x >> 32) % 8);
		if (gr_block__parse(&blk, copy, out.len) == 0 &&
		    blk.nrows <= 4096)
			for (int c = 0; c < blk.ncols; c++)
				gr_decoder__column(d, &blk, c, got, gn, &hn);
		free(copy);
	}
	free(got);
	free(gn);
	gr_block__free(&blk);
	gr_buf__free(&out);
	gr_encoder__free(e);
	gr_decoder__free(d);
}

/* ---- writer -> segment -> SQL ------------------------------------------ */

static sqlite3 *open_query(struct gr_qctx *q, char *dir)
{
	char *err = NULL;
	sqlite3 *db = NULL;
	memset(q, 0, sizeof(*q));
	q->since = INT64_MIN;
	q->until = INT64_MAX;
	q->warn = stderr;
	if (gr_catalog__open(&q->cat, &dir, 1, &err)) {
		fprintf(stderr, "catalog: %s\n", err);
		return NULL;
	}
	sqlite3_open(":memory:", &db);
	if (gr_vtab__register(db, q) != SQLITE_OK) {
		fprintf(stderr, "vtab: %s\n", sqlite3_errmsg(db));
		return NULL;
	}
	return db;
}

static void close_query(struct gr_qctx *q, sqlite3 *db)
{
	sqlite3_close(db);
	gr_catalog__free(&q->cat);
	free(q->warned);
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -999;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
		return v;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

TEST(writer_sql_round_trip_every_type)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "host-a",
				    .no_immutable = 1, .log = quiet,
				    .block_rows = 7 };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	size_t longlen = 100000;
	char *longstr = malloc(longlen + 1);
	for (size_t i = 0; i < longlen; i++)
		longstr[i] = (char)('a' + i % 26);
	longstr[longlen] = 0;
	uint32_t s_empty = gr_writer__intern(w, "", 0);
	uint32_t s_long = gr_writer__intern(w, longstr, longlen);
	uint32_t s_utf8 = gr_writer__intern(w, "ñ∑😀,\"\n", strlen("ñ∑😀,\"\n"));
	CHECK(s_empty && s_long && s_utf8 && s_empty != s_long);
	/* A string id the writer never gave is refused. */
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_cuda_kernel_comm] = 99999;
	CHECK_EQ_INT(gr_writer__append(w, GR_T_cuda_kernel, v, 0), -EINVAL);
	CHECK_EQ_INT(gr_writer__append(w, GR_T_segments, v, 0), -EINVAL);

	/* Row i: every INT/TS column = edge[(i + c) % NEDGE]; STR columns
	 * cycle through empty, long, utf8 and NULL. */
	const struct gr_table *tab = &gr_tables[GR_T_cuda_kernel];
	uint32_t strs[3] = { s_empty, s_long, s_utf8 };
	for (int i = 0; i < 3 * NEDGE; i++) {
		uint64_t nm = 0;
		for (int c = 0; c < tab->ncols; c++) {
			if (tab->cols[c].type == GR_STR) {
				if ((i + c) % 4 == 3)
					nm |= 1ull << c;
				else
					v[c] = strs[(i + c) % 4];
			} else {
				v[c] = edge[(i + c) % NEDGE];
			}
		}
		v[GR_cuda_kernel_ts] = 1795000000000000000 + i;
		if (i % 5 == 4)
			nm |= 1ull << GR_cuda_kernel_dur;
		CHECK_EQ_INT(gr_writer__append(w, GR_T_cuda_kernel, v, nm), 0);
		if (i == 20)
			CHECK_EQ_INT(gr_writer__flush(w), 0);
	}
	CHECK_EQ_INT(gr_writer__close(w), 0);

	struct gr_qctx q;
	sqlite3 *db = open_query(&q, dir);
	CHECK(db);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_kernel"),
		     3 * NEDGE);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_api"), 3 * NEDGE);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_kernel WHERE "
				   "host = 'host-a'"), 3 * NEDGE);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_kernel WHERE "
				   "host = 'other'"), 0);
	sqlite3_stmt *st;
	CHECK_EQ_INT(sqlite3_prepare_v2(db, "SELECT * FROM cuda_kernel ORDER BY "
					"ts", -1, &st, NULL), SQLITE_OK);
	int i = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int c = 0; c < tab->ncols; c++) {
			int ty = sqlite3_column_type(st, c);
			if (c == GR_cuda_kernel_host) {
				CHECK_EQ_STR((const char *)sqlite3_column_text(st, c),
					     "host-a");
			} else if (tab->cols[c].type == GR_STR) {
				if ((i + c) % 4 == 3) {
					CHECK_EQ_INT(ty, SQLITE_NULL);
					continue;
				}
				uint32_t id = strs[(i + c) % 4];
				const char *want = id == s_empty ? "" :
					id == s_long ? longstr : "ñ∑😀,\"\n";
				CHECK_EQ_INT(ty, SQLITE_TEXT);
				CHECK_EQ_STR((const char *)sqlite3_column_text(st, c),
					     want);
			} else if (c == GR_cuda_kernel_ts) {
				CHECK_EQ_INT(sqlite3_column_int64(st, c),
					     1795000000000000000 + i);
			} else if (c == GR_cuda_kernel_dur && i % 5 == 4) {
				CHECK_EQ_INT(ty, SQLITE_NULL);
			} else {
				CHECK_EQ_INT(ty, SQLITE_INTEGER);
				CHECK_EQ_INT(sqlite3_column_int64(st, c),
					     edge[(i + c) % NEDGE]);
			}
		}
		i++;
	}
	sqlite3_finalize(st);
	CHECK_EQ_INT(i, 3 * NEDGE);
	/* Pushed-down comparisons agree with SQLite's on edge values. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_kernel WHERE "
				   "grid_x > 0"),
		     query_int(db, "SELECT count(*) FROM (SELECT grid_x FROM "
				   "cuda_kernel) WHERE +grid_x > 0"));
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_kernel WHERE "
				   "ret = -9223372036854775808"), 3);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_kernel WHERE "
				   "dur IS NULL"), 9);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM cuda_kernel WHERE "
				   "dur > 1.5"),
		     query_int(db, "SELECT count(*) FROM (SELECT dur FROM "
				   "cuda_kernel) WHERE +dur > 1.5"));
	close_query(&q, db);
	free(longstr);
	rmrf(dir);
	free(dir);
}

static int count_segments(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		n += gr_segment_name_ok(de->d_name);
	if (d)
		closedir(d);
	return n;
}

/* The events counted by summary rows of kind over dir's segments: its
 * whole-segment rows (whole) or its minute rows. */
static int64_t summary_n(const char *dir, int kind, int whole)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int64_t n = 0;
	while (d && (de = readdir(d))) {
		if (!gr_segment_name_ok(de->d_name))
			continue;
		char path[512];
		sqlite3 *db;
		sqlite3_stmt *st;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
			    SQLITE_OK &&
		    sqlite3_prepare_v2(db, whole ?
			"SELECT coalesce(sum(n), 0) FROM summary WHERE kind = ? "
			"AND minute = -1" :
			"SELECT coalesce(sum(n), 0) FROM summary WHERE kind = ? "
			"AND minute >= 0", -1, &st, NULL) == SQLITE_OK) {
			sqlite3_bind_int(st, 1, kind);
			if (sqlite3_step(st) == SQLITE_ROW)
				n += sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
		sqlite3_close(db);
	}
	if (d)
		closedir(d);
	return n;
}

static int count_lines(const char *dir, const char *prefix)
{
	char path[512], line[1024];
	int n = 0;
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		n += strncmp(line, prefix, strlen(prefix)) == 0;
	if (f)
		fclose(f);
	return n;
}

TEST(rotation_and_retention_small_budget)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h",
				    .no_immutable = 1, .log = quiet,
				    .segment_size = 64 << 10,
				    .max_disk = 400 << 10 };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	uint32_t comm = gr_writer__intern(w, "t", 1);
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t x = 1;
	/* Incompressible durations so segments fill quickly. */
	for (int i = 0; i < 400000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[GR_runq_ts] = 1795000000000000000 + i * 1000ll;
		v[GR_runq_pid] = 10;
		v[GR_runq_tid] = 10;
		v[GR_runq_comm] = comm;
		v[GR_runq_dur] = (int64_t)(x >> 20);
		v[GR_runq_cpu] = i % 2;
		CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
		if (i % 5000 == 4999)
			CHECK_EQ_INT(gr_writer__flush(w), 0);
	}
	struct gr_writer_stats st;
	gr_writer__stats(w, &st);
	CHECK(st.segments > 10);
	CHECK(st.deleted > 5);
	/* The cap holds after every deletion (one open segment of slack). */
	CHECK(st.disk_bytes <= (400 << 10) + (64 << 10) + (32 << 10));
	CHECK_EQ_INT(gr_writer__close(w), 0);
	/* Closing seals the last segment, and retention may then delete
	 * one more to keep the cap. */
	int deletes = count_lines(dir, "delete ");
	CHECK(deletes == (int)st.deleted || deletes == (int)st.deleted + 1);
	CHECK_EQ_INT(count_segments(dir),
		     count_lines(dir, "seal ") - count_lines(dir, "delete "));
	/* What is left verifies and holds exactly the manifest's events. */
	struct gr_verify vr = { 0 };
	CHECK_EQ_INT(gr_verify__dir(dir, &vr), 0);
	struct gr_manifest m;
	CHECK_EQ_INT(gr_manifest__read(dir, &m), 0);
	int64_t kept = 0, oldest = INT64_MAX;
	for (int i = 0; i < m.n; i++)
		if (!m.e[i].deleted) {
			kept += (int64_t)m.e[i].events;
			if (m.e[i].start_ts < oldest)
				oldest = m.e[i].start_ts;
		}
	gr_manifest__free(&m);
	struct gr_qctx q;
	sqlite3 *db = open_query(&q, dir);
	CHECK(db);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM runq"), kept);
	/* Retention removed the oldest: the newest event is still there. */
	CHECK_EQ_INT(query_int(db, "SELECT max(ts) FROM runq"),
		     1795000000000000000 + 399999 * 1000ll);
	CHECK_EQ_INT(query_int(db, "SELECT min(ts) FROM runq"), oldest);
	close_query(&q, db);
	rmrf(dir);
	free(dir);
}

/* A segment is made under a temporary name and renamed into place: what
 * a writer killed while making one left (the temporary file and its
 * journal) is removed at open, and never read as a segment. */
TEST(segment_temp_name_swept_at_open)
{
	char *dir = tmpdir();
	char path[4200];
	static const char *const stale[] = {
		".20260101T000000.000000000Z.seg.tmp",
		".20260101T000000.000000000Z.seg.tmp-journal",
	};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, stale[i]);
		FILE *f = fopen(path, "w");
		CHECK(f);
		fclose(f);
	}
	/* Not a temporary segment name: left alone. */
	snprintf(path, sizeof(path), "%s/.keep.tmp", dir);
	FILE *f = fopen(path, "w");
	CHECK(f);
	fclose(f);
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	struct stat sb;
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, stale[i]);
		CHECK(lstat(path, &sb) < 0 && errno == ENOENT);
	}
	snprintf(path, sizeof(path), "%s/.keep.tmp", dir);
	CHECK_EQ_INT(lstat(path, &sb), 0);
	/* The open segment is in place, valid, and no temporary is left. */
	CHECK_EQ_INT(stat(gr_writer__segment_path(w), &sb), 0);
	CHECK(sb.st_size > 0);
	char **names;
	int n;
	CHECK_EQ_INT(gr_segments__list(dir, &names, &n), 0);
	CHECK_EQ_INT(n, 1);
	gr_segments__free(names, n);
	snprintf(path, sizeof(path), "%s/.%s.tmp", dir,
		 strrchr(gr_writer__segment_path(w), '/') + 1);
	CHECK(lstat(path, &sb) < 0 && errno == ENOENT);
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "t", 1);
	v[GR_runq_ts] = 1795000000000000000;
	CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	struct gr_verify vr = { 0 };
	CHECK_EQ_INT(gr_verify__dir(dir, &vr), 0);
	rmrf(dir);
	free(dir);
}

/* Files of the data directory are never followed: a .lock or MANIFEST
 * that is a symlink is refused, its target untouched. */
TEST(planted_symlinks_refused)
{
	char *dir = tmpdir(), *other = tmpdir();
	char path[4200], target[4200];
	snprintf(target, sizeof(target), "%s/target", other);
	FILE *f = fopen(target, "w");
	CHECK(f);
	fputs("theirs\n", f);
	fclose(f);
	CHECK_EQ_INT(chmod(target, 0600), 0);
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	snprintf(path, sizeof(path), "%s/.lock", dir);
	CHECK_EQ_INT(symlink(target, path), 0);
	errno = 0;
	CHECK(!gr_writer__open(&so));
	CHECK_EQ_INT(errno, ELOOP);
	CHECK_EQ_INT(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	CHECK_EQ_INT(symlink(target, path), 0);
	errno = 0;
	CHECK(!gr_writer__open(&so));
	CHECK_EQ_INT(errno, ELOOP);
	struct stat sb;
	CHECK_EQ_INT(stat(target, &sb), 0);
	CHECK_EQ_INT(sb.st_size, 7);
	CHECK_EQ_INT(sb.st_mode & 0777, 0600);
	rmrf(dir);
	rmrf(other);
	free(dir);
	free(other);
}

/* min_age: retention never deletes a segment sealed more recently. */
TEST(retention_spares_segments_younger_than_min_age)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet, .max_disk = 64 << 10,
				    .min_age_ns = 3600ll * 1000000000 };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "t", 1);
	uint64_t x = 1;
	for (int r = 0; r < 6; r++) {
		for (int i = 0; i < 5000; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v[GR_runq_ts] = 1795000000000000000 + r * 10000 + i;
			v[GR_runq_dur] = (int64_t)(x >> 20);
			CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
		}
		CHECK_EQ_INT(gr_writer__rotate(w), 0);
	}
	struct gr_writer_stats st;
	gr_writer__stats(w, &st);
	CHECK_EQ_INT(st.segments, 6);
	CHECK_EQ_INT(st.deleted, 0);
	CHECK(st.disk_bytes > (64 << 10));
	/* Over max_disk, and it says which budget min_age keeps it over. */
	CHECK(st.over_budget && !strcmp(st.over_budget, "max-disk"));
	CHECK_EQ_INT(gr_writer__close(w), 0);
	CHECK_EQ_INT(count_lines(dir, "delete "), 0);
	rmrf(dir);
	free(dir);
}

/* Writes @nseg segments of 100 runq events each, the newest @age_s
 * seconds before now, sealing each. */
static void write_aged(struct gr_writer *w, int nseg, int64_t age_s)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t newest = ((int64_t)now.tv_sec - age_s) * 1000000000;
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "t", 1);
	for (int r = 0; r < nseg; r++) {
		for (int i = 0; i < 100; i++) {
			v[GR_runq_ts] = newest - 1000 * (99 - i);
			v[GR_runq_dur] = i;
			CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
		}
		CHECK_EQ_INT(gr_writer__rotate(w), 0);
	}
}

/* max_age: a sealed segment whose newest event is older goes, logged in
 * the MANIFEST with reason max-age and counted apart; younger ones stay,
 * however little space they use. */
TEST(retention_deletes_segments_older_than_max_age)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet,
				    .max_age_ns = 86400ll * 1000000000 };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	write_aged(w, 3, 3 * 86400);
	write_aged(w, 2, 3600);
	struct gr_writer_stats st;
	gr_writer__stats(w, &st);
	CHECK_EQ_INT(st.segments, 5);
	CHECK_EQ_INT(st.deleted, 3);
	CHECK_EQ_INT(st.deleted_max_age, 3);
	CHECK(st.over_budget == NULL);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	struct gr_manifest m;
	CHECK_EQ_INT(gr_manifest__read(dir, &m), 0);
	CHECK_EQ_INT(m.n, 5);
	for (int i = 0; i < m.n; i++)
		CHECK_EQ_INT(m.e[i].deleted, i < 3);
	gr_manifest__free(&m);
	CHECK_EQ_INT(count_lines(dir, "delete "), 3);
	char path[512], line[1024];
	int aged = 0;
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	FILE *f = fopen(path, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f))
		aged += !strncmp(line, "delete ", 7) &&
			strstr(line, " reason=max-age ") != NULL;
	fclose(f);
	CHECK_EQ_INT(aged, 3);
	rmrf(dir);
	free(dir);
}

/* min_age wins over max_age: segments of old events sealed just now stay
 * until they are min_age old. */
TEST(min_age_spares_segments_max_age_would_delete)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet,
				    .max_age_ns = 86400ll * 1000000000,
				    .min_age_ns = 3600ll * 1000000000 };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	write_aged(w, 3, 3 * 86400);
	struct gr_writer_stats st;
	gr_writer__stats(w, &st);
	CHECK_EQ_INT(st.segments, 3);
	CHECK_EQ_INT(st.deleted, 0);
	CHECK(st.over_budget == NULL);	/* no size budget set */
	CHECK_EQ_INT(gr_writer__close(w), 0);
	CHECK_EQ_INT(count_lines(dir, "delete "), 0);
	rmrf(dir);
	free(dir);
}

/* A writer killed after a flush loses nothing flushed: the next writer
 * seals the crashed segment into the chain. */
TEST(crash_recovery_keeps_flushed_events)
{
	char *dir = tmpdir();
	pid_t pid = fork();
	if (pid == 0) {
		struct gr_store_opts so = { .dir = dir, .host = "h",
					    .no_immutable = 1, .log = quiet };
		struct gr_writer *w = gr_writer__open(&so);
		if (!w)
			_exit(3);
		uint32_t comm = gr_writer__intern(w, "t", 1);
		int64_t v[GR_MAX_COLS] = { 0 };
		for (int i = 0; i < 12345; i++) {
			v[GR_runq_ts] = 1795000000000000000 + i;
			v[GR_runq_comm] = comm;
			v[GR_runq_dur] = i;
			gr_writer__append(w, GR_T_runq, v, 0);
		}
		if (gr_writer__flush(w))
			_exit(4);
		/* Appended but never flushed: may be lost. */
		gr_writer__append(w, GR_T_runq, v, 0);
		_exit(0); /* as kill -9 would: no close, no seal */
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ_INT(count_lines(dir, "seal "), 0);

	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	CHECK_EQ_INT(count_lines(dir, "seal "), 1);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	/* The second writer recorded nothing: its segment is not kept. */
	CHECK_EQ_INT(count_lines(dir, "seal "), 1);
	CHECK_EQ_INT(count_segments(dir), 1);
	struct gr_verify vr = { 0 };
	CHECK_EQ_INT(gr_verify__dir(dir, &vr), 0);
	CHECK_EQ_INT(vr.segments, 1);
	CHECK_EQ_INT(vr.blocks, 1); /* one flush of 12345 rows */
	CHECK_EQ_INT(vr.problems, 0);
	struct gr_qctx q;
	sqlite3 *db = open_query(&q, dir);
	CHECK(db);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM runq"), 12345);
	CHECK_EQ_INT(query_int(db, "SELECT sum(dur) FROM runq"),
		     12344ll * 12345 / 2);
	close_query(&q, db);
	rmrf(dir);
	free(dir);
}

TEST(one_writer_per_directory)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	errno = 0;
	CHECK(gr_writer__open(&so) == NULL);
	CHECK_EQ_INT(errno, EBUSY);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	w = gr_writer__open(&so); /* free again once the first closed */
	CHECK(w);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	rmrf(dir);
	free(dir);
}

TEST(rotation_by_age)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet, .segment_age_ns = 50000000 };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "t", 1);
	/* An empty segment does not rotate, however old. */
	usleep(60000);
	CHECK_EQ_INT(gr_writer__flush(w), 0);
	CHECK_EQ_INT(count_lines(dir, "seal "), 0);
	for (int i = 0; i < 3; i++) {
		v[GR_runq_ts] = 1795000000000000000 + i;
		CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
		CHECK_EQ_INT(gr_writer__flush(w), 0); /* young: no rotation */
		CHECK_EQ_INT(count_lines(dir, "seal "), i);
		usleep(60000);
		CHECK_EQ_INT(gr_writer__flush(w), 0); /* old: rotates */
		CHECK_EQ_INT(count_lines(dir, "seal "), i + 1);
	}
	CHECK_EQ_INT(gr_writer__close(w), 0);
	CHECK_EQ_INT(count_segments(dir), 3);
	rmrf(dir);
	free(dir);
}

/* A reader holding the open segment (a running gpurec) must not make a
 * rotation half-seal it: the writer keeps going and seals it later. */
TEST(seal_waits_for_readers)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "t", 1);
	for (int i = 0; i < 100; i++) {
		v[GR_runq_ts] = 1795000000000000000 + i;
		CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
	}
	CHECK_EQ_INT(gr_writer__flush(w), 0);
	sqlite3 *r;
	char *uri = sqlite3_mprintf("file:%s?mode=ro", gr_writer__segment_path(w));
	CHECK_EQ_INT(sqlite3_open_v2(uri, &r, SQLITE_OPEN_READONLY |
				     SQLITE_OPEN_URI, NULL), SQLITE_OK);
	sqlite3_free(uri);
	sqlite3_stmt *st;
	CHECK_EQ_INT(sqlite3_prepare_v2(r, "SELECT count(*) FROM blocks", -1,
					&st, NULL), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_step(st), SQLITE_ROW); /* holds a read lock */
	CHECK_EQ_INT(gr_writer__rotate(w), 0);
	CHECK_EQ_INT(count_lines(dir, "seal "), 0);
	for (int i = 100; i < 150; i++) {
		v[GR_runq_ts] = 1795000000000000000 + i;
		CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
	}
	sqlite3_finalize(st);
	sqlite3_close(r);
	CHECK_EQ_INT(gr_writer__rotate(w), 0);
	CHECK_EQ_INT(count_lines(dir, "seal "), 1);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	struct gr_verify vr = { 0 };
	CHECK_EQ_INT(gr_verify__dir(dir, &vr), 0);
	struct gr_qctx q;
	sqlite3 *db = open_query(&q, dir);
	CHECK(db);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM runq"), 150);
	close_query(&q, db);
	/* The first seal's whole-segment summaries were undone with it:
	 * the sealed segment's rows count each wait once. */
	CHECK_EQ_INT(summary_n(dir, GR_SUM_RUNQ, 1), 150);
	CHECK_EQ_INT(summary_n(dir, GR_SUM_RUNQ, 0), 150);
	rmrf(dir);
	free(dir);
}

/* After a block cannot be written, appends must not run past the
 * buffer: the blocks wait in the transaction's log (bounded) and the
 * flush gives them up, counted by cause, never returned to the caller
 * (which would count them again). */
TEST(failed_block_write_drops_not_overflows)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet, .block_rows = 64 };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "t", 1);
	/* Make every block write fail: drop the table blocks go to. */
	sqlite3 *h;
	CHECK_EQ_INT(sqlite3_open(gr_writer__segment_path(w), &h), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(h, "DROP TABLE blocks", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(h);
	int failures = 0;
	for (int i = 0; i < 64 * 5; i++) {
		v[GR_runq_ts] = 1795000000000000000 + i;
		failures += gr_writer__append(w, GR_T_runq, v, 0) != 0;
	}
	CHECK_EQ_INT(failures, 0);
	CHECK(gr_writer__flush(w) != 0);
	struct gr_writer_stats st;
	gr_writer__stats(w, &st);
	CHECK_EQ_INT(st.dropped, 64 * 5);
	CHECK_EQ_INT(st.dropped_io_error, 64 * 5);
	CHECK_EQ_INT(st.dropped_disk_full, 0);
	CHECK_EQ_INT(st.drops_pending, 64 * 5);
	gr_writer__close(w);
	rmrf(dir);
	free(dir);
}

/* A flush that fails (disk full, I/O error) is undone completely: the
 * next flush stores the dictionary strings again and the segment's
 * counts match its blocks. */
TEST(failed_flush_is_undone)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "worker", 6);
	sqlite3 *h;
	CHECK_EQ_INT(sqlite3_open(gr_writer__segment_path(w), &h), SQLITE_OK);
	/* Block rows cannot be written while the table is renamed away. */
	CHECK_EQ_INT(sqlite3_exec(h, "ALTER TABLE blocks RENAME TO gone",
				  NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < 10; i++) {
		v[GR_runq_ts] = 1795000000000000000 + i;
		CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
	}
	CHECK(gr_writer__flush(w) != 0);
	CHECK_EQ_INT(sqlite3_exec(h, "ALTER TABLE gone RENAME TO blocks",
				  NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	/* The failed flush's events are lost, counted as an I/O error
	 * (not a full disk); the next flush stores the rest and the count
	 * as a drops row. */
	struct gr_writer_stats st;
	gr_writer__stats(w, &st);
	CHECK_EQ_INT(st.dropped_io_error, 10);
	CHECK_EQ_INT(st.drops_pending, 10);
	for (int i = 10; i < 20; i++) {
		v[GR_runq_ts] = 1795000000000000000 + i;
		CHECK_EQ_INT(gr_writer__append(w, GR_T_runq, v, 0), 0);
	}
	CHECK_EQ_INT(gr_writer__flush(w), 0);
	gr_writer__stats(w, &st);
	CHECK_EQ_INT(st.drops_pending, 0);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	struct gr_manifest m;
	CHECK_EQ_INT(gr_manifest__read(dir, &m), 0);
	CHECK_EQ_INT(m.n, 1);
	int64_t manifest_events = (int64_t)m.e[0].events;
	gr_manifest__free(&m);
	struct gr_qctx q;
	sqlite3 *db = open_query(&q, dir);
	CHECK(db);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM runq"), 10);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM runq WHERE comm = "
				   "'worker'"), 10);
	CHECK_EQ_INT(query_int(db, "SELECT sum(count) FROM drops WHERE "
				   "source = 'store:io_error'"), 10);
	CHECK_EQ_INT(manifest_events, 11);
	close_query(&q, db);
	rmrf(dir);
	free(dir);
}

/* ---- MANIFEST format 2, verify by seq, walview ------------------------- */

TEST(manifest_parses_both_formats)
{
	static const char buf[] =
		"seal a.seg sha256=" "1111111111111111111111111111111111111111111111111111111111111111"
		" prev=- start=1 end=2 events=3 bytes=4 host=h\n"
		"start at=5 pid=6 version=0.1.0 boot=b lh=-\n"
		"seal b.seg sha256=" "2222222222222222222222222222222222222222222222222222222222222222"
		" prev=1111111111111111111111111111111111111111111111111111111111111111"
		" start=7 end=8 events=9 bytes=10 host=h seq=2 at=11 lh=-\n"
		"delete a.seg reason=max-disk at=12 bytes=4 seq=1 lh=-\n"
		"anchor at=13 seq=2 lh=- epoch=3 tag="
		"abababababababababababababababababababababababababababababababab\n"
		"stop at=14 events=9 seq=2 lh=-\n"
		"seal torn.seg sha256=33";
	struct gr_manifest m;
	CHECK_EQ_INT(gr_manifest__parse(buf, sizeof(buf) - 1, &m), 0);
	CHECK_EQ_INT(m.nl, 7);
	CHECK_EQ_INT(m.n, 2);
	CHECK_EQ_INT(m.bad_lines, 1);
	CHECK_EQ_INT(m.first_bad_line, 7);
	CHECK_EQ_INT(m.e[0].seq, -1);
	CHECK(!m.l[0].v2);
	CHECK_EQ_INT(m.e[0].deleted, 1);
	CHECK_EQ_INT(m.e[1].seq, 2);
	CHECK_EQ_INT(m.e[1].events, 9);
	CHECK_EQ_INT(m.l[1].kind, GR_ML_START);
	CHECK_EQ_INT(m.l[3].kind, GR_ML_DELETE);
	CHECK_EQ_INT(m.l[3].seq, 1);
	CHECK_EQ_INT(m.l[4].kind, GR_ML_ANCHOR);
	CHECK_EQ_INT(m.l[4].epoch, 3);
	CHECK_EQ_INT(m.l[4].tagged_len,
		     strstr(m.l[4].text, " tag=") - m.l[4].text);
	CHECK_EQ_INT(m.l[5].kind, GR_ML_STOP);
	CHECK_EQ_INT(m.l[5].seq, 2);
	gr_manifest__free(&m);
	/* An epoch without a tag, a bad lh: not lines. */
	static const char bad[] = "stop at=1 events=0 lh=- epoch=1\n"
				  "stop at=1 events=0 lh=xyz\n";
	CHECK_EQ_INT(gr_manifest__parse(bad, sizeof(bad) - 1, &m), 0);
	CHECK_EQ_INT(m.bad_lines, 2);
	gr_manifest__free(&m);
}

/* A long-running recorder's manifest: tens of thousands of seal and
 * delete lines; each delete finds its seal line by name (all of them when
 * a name was sealed twice), and find() returns the last. */
TEST(manifest_long_with_deletes)
{
	enum { N = 30000 };
	size_t cap = (size_t)N * 2 * 200, len = 0;
	char *buf = malloc(cap);
	CHECK(buf);
	for (int i = 0; i < N; i++) {
		len += (size_t)snprintf(buf + len, cap - len,
			"seal s%05d.seg sha256=%064d prev=- start=%d end=%d "
			"events=%d bytes=1 host=h\n", i == N - 1 ? 7 : i, i,
			i, i + 1, i + 1);
		if (i % 2 == 0 && i != 7)
			len += (size_t)snprintf(buf + len, cap - len,
				"delete s%05d.seg reason=max-disk\n", i);
	}
	/* s00007.seg, sealed twice (lines for i=7 and i=N-1), deleted once:
	 * both seal lines are marked. */
	len += (size_t)snprintf(buf + len, cap - len,
				"delete s00007.seg reason=max-disk\n");
	struct gr_manifest m;
	CHECK_EQ_INT(gr_manifest__parse(buf, len, &m), 0);
	free(buf);
	CHECK_EQ_INT(m.n, N);
	CHECK_EQ_INT(m.bad_lines, 0);
	int deleted = 0;
	for (int i = 0; i < m.n; i++)
		deleted += m.e[i].deleted;
	CHECK_EQ_INT(deleted, N / 2 + 2);
	CHECK(m.e[7].deleted && m.e[N - 1].deleted && !m.e[9].deleted);
	const struct gr_manifest_entry *e = gr_manifest__find(&m,
							      "s00007.seg");
	CHECK(e == &m.e[N - 1]);
	CHECK_EQ_INT((int)e->events, N);
	e = gr_manifest__find(&m, "s29997.seg");
	CHECK(e && e->events == 29998 && !e->deleted);
	CHECK(gr_manifest__find(&m, "s30000.seg") == NULL);
	gr_manifest__free(&m);
}

TEST(manifest_writer_chains_and_repairs)
{
	char *dir = tmpdir(), path[4200];
	int dfd = open(dir, O_DIRECTORY | O_RDONLY), created;
	struct gr_manifest_w *mw;
	struct gr_manifest m;
	CHECK(dfd >= 0);
	CHECK_EQ_INT(gr_manifest_w__open(dfd, quiet, NULL, &created, &mw), 0);
	CHECK_EQ_INT(created, 1);
	CHECK_EQ_INT(gr_manifest_w__sealing(mw), 0);
	CHECK_EQ_INT(gr_manifest_w__append(mw, 1, 0, "start at=1 pid=%d "
					   "version=x boot=-", 7), 0);
	CHECK_EQ_INT(gr_manifest_w__append(mw, 2, 0, "stop at=2 events=0 "
					   "seq=0"), 0);
	gr_manifest_w__close(mw);
	/* A crash mid-append: a torn tail, cut off by the next writer. */
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	FILE *f = fopen(path, "a");
	CHECK(f);
	fputs("seal x.seg sha256=ab", f);
	fclose(f);
	CHECK_EQ_INT(gr_manifest_w__open(dfd, quiet, NULL, &created, &mw), 0);
	CHECK_EQ_INT(created, 0);
	CHECK_EQ_INT(gr_manifest_w__append(mw, 3, 0, "start at=3 pid=8 "
					   "version=x boot=-"), 0);
	gr_manifest_w__close(mw);
	CHECK_EQ_INT(gr_manifest__read(dir, &m), 0);
	CHECK_EQ_INT(m.nl, 3);
	CHECK_EQ_INT(m.bad_lines, 0);
	CHECK_EQ_STR(m.l[0].lh, "-");
	CHECK_EQ_STR(m.l[1].lh, m.l[0].sha);
	CHECK_EQ_STR(m.l[2].lh, m.l[1].sha);
	gr_manifest__free(&m);
	close(dfd);
	rmrf(dir);
	free(dir);
}

/* A damaged fss.key does not stop the recording: lines go on, untagged
 * (which verify --verification-key reports), and the log says why. */
TEST(manifest_writer_records_on_with_a_damaged_key)
{
	char *dir = tmpdir(), path[4200];
	int dfd = open(dir, O_DIRECTORY | O_RDONLY), created;
	struct gr_manifest_w *mw;
	struct gr_manifest m;
	CHECK(dfd >= 0);
	snprintf(path, sizeof(path), "%s/fss.key", dir);
	FILE *f = fopen(path, "w");
	CHECK(f);
	fputs("gpurec-fss 1 garbage\n", f);
	fclose(f);
	CHECK_EQ_INT(chmod(path, 0600), 0);
	CHECK_EQ_INT(gr_manifest_w__open(dfd, quiet, NULL, &created, &mw), 0);
	CHECK_EQ_INT(gr_manifest_w__sealing(mw), 0);
	CHECK_EQ_INT(gr_manifest_w__append(mw, 1, 0, "start at=1 pid=7 "
					   "version=x boot=-"), 0);
	gr_manifest_w__close(mw);
	CHECK_EQ_INT(gr_manifest__read(dir, &m), 0);
	CHECK_EQ_INT(m.nl, 1);
	CHECK_EQ_INT(m.bad_lines, 0);
	CHECK(strstr(m.l[0].text, " tag=") == NULL);
	gr_manifest__free(&m);
	close(dfd);
	rmrf(dir);
	free(dir);
}

static int64_t real_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The epoch of dfd/fss.key as it is on disk now (-1: unreadable). */
static int64_t key_epoch(int dfd)
{
	struct gr_fss *f = NULL;
	char *err = NULL;
	int64_t e = gr_fss__load_readonly(dfd, &f, &err) ? -1 :
		    gr_fss__epoch(f);
	free(err);
	gr_fss__free(f);
	return e;
}

/* An idle writer (flushes, no event, no line to write) still moves the
 * sealing key at each epoch boundary and writes the epoch's anchor line:
 * the key on disk is never more than an epoch old, and the result still
 * verifies against the verification key. */
TEST(idle_writer_evolves_sealing_key)
{
	char *dir = tmpdir(), vkey[GR_FSS_VKEY_MAX], *why = NULL;
	int dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	CHECK(dfd >= 0);
	CHECK_EQ_INT(gr_fss__setup(dfd, 1, real_now_ns(), 0, (uid_t)-1,
				   (gid_t)-1, vkey), 0);
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	struct gr_fss *f = NULL;
	CHECK_EQ_INT(gr_fss__load_readonly(dfd, &f, &why), 0);
	int64_t e0 = gr_fss__epoch(f), behind = 0;
	/* 2.5 s of flushes every 100 ms, as gpurecd's timer would: after
	 * each, the key is at the epoch of the time the flush began. */
	for (int i = 0; i < 25; i++) {
		usleep(100000);
		int64_t want = gr_fss__epoch_at(f, real_now_ns());
		CHECK_EQ_INT(gr_writer__flush(w), 0);
		int64_t got = key_epoch(dfd);
		if (got < want && want - got > behind)
			behind = want - got;
	}
	CHECK_EQ_INT(behind, 0);
	CHECK(key_epoch(dfd) >= e0 + 2);
	CHECK(count_lines(dir, "anchor ") >= 3);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	gr_fss__free(f);

	struct gr_verify vr = { 0 };
	CHECK_EQ_INT(gr_fss_vkey__parse(vkey, &vr.vkey, &why), 0);
	CHECK_EQ_INT(gr_verify__dir(dir, &vr), 0);
	CHECK_EQ_INT(vr.problems, 0);
	CHECK_EQ_INT(vr.lines_tagged, vr.lines);
	gr_fss_vkey__free(vr.vkey);
	free(why);
	close(dfd);
	rmrf(dir);
	free(dir);
}

TEST(walview_reads_committed_frames_only)
{
	char *dir = tmpdir(), p[4200], cmd[9000];
	sqlite3 *db;
	snprintf(p, sizeof(p), "%s/w.db", dir);
	CHECK_EQ_INT(sqlite3_open(p, &db), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(db, "PRAGMA journal_mode=WAL;"
				  "PRAGMA wal_autocheckpoint=0;"
				  "CREATE TABLE t(x);"
				  "INSERT INTO t VALUES (1),(2);"
				  "INSERT INTO t SELECT x + 2 FROM t;"
				  "INSERT INTO t SELECT x + 4 FROM t;",
				  NULL, NULL, NULL), SQLITE_OK);
	/* Copy while the connection holds the WAL (no checkpoint), and
	 * append a frame that was never committed (bad checksum). */
	snprintf(cmd, sizeof(cmd), "mkdir %s/c && cp %s %s-wal %s/c/ && "
		 "head -c 4120 /dev/urandom >> %s/c/w.db-wal", dir, p, p, dir,
		 dir);
	CHECK_EQ_INT(system(cmd), 0);
	sqlite3_close(db);
	snprintf(p, sizeof(p), "%s/c/w.db", dir);
	uint8_t *img;
	size_t n;
	CHECK_EQ_INT(gr_walview__load(p, &img, &n), 0);
	CHECK(n >= 4096);
	CHECK_EQ_INT(img[18], 1);
	CHECK_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_deserialize(db, "main", img, (sqlite3_int64)n,
					 (sqlite3_int64)n,
					 SQLITE_DESERIALIZE_FREEONCLOSE |
					 SQLITE_DESERIALIZE_READONLY), SQLITE_OK);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) || sum(x) FROM t"), 836);
	sqlite3_close(db);
	/* Nothing was created next to the copy. */
	snprintf(p, sizeof(p), "%s/c/w.db-shm", dir);
	CHECK(access(p, F_OK) != 0);
	rmrf(dir);
	free(dir);
}

static void runq_events(struct gr_writer *w, int n, int64_t t0)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	v[GR_runq_comm] = gr_writer__intern(w, "t", 1);
	for (int i = 0; i < n; i++) {
		v[GR_runq_ts] = t0 + i;
		gr_writer__append(w, GR_T_runq, v, 0);
	}
}

TEST(clock_step_back_keeps_seq_order)
{
	char *dir = tmpdir();
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet,
				    .test_clock_step_ns = -3600000000000ll };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	for (int i = 0; i < 3; i++) {
		runq_events(w, 10, 1795000000000000000 + i * 100);
		CHECK_EQ_INT(gr_writer__rotate(w), 0);
	}
	CHECK_EQ_INT(gr_writer__close(w), 0);
	struct gr_manifest m;
	CHECK_EQ_INT(gr_manifest__read(dir, &m), 0);
	CHECK_EQ_INT(m.n, 3);
	CHECK_EQ_INT(m.e[2].seq, 3);
	CHECK(strcmp(m.e[1].name, m.e[0].name) < 0); /* names went back */
	gr_manifest__free(&m);
	struct gr_verify vr = { 0 };
	CHECK_EQ_INT(gr_verify__dir(dir, &vr), 0);
	CHECK_EQ_INT(vr.segments, 3);
	rmrf(dir);
	free(dir);
}

static int vstate_last;
static void vseg(void *ctx, const char *path, long blocks, int state, int ok)
{
	vstate_last = state;
}

TEST(sealed_not_in_manifest_is_sealing_then_appended)
{
	char *dir = tmpdir(), cmd[4300];
	struct gr_store_opts so = { .dir = dir, .host = "h", .no_immutable = 1,
				    .log = quiet };
	struct gr_writer *w = gr_writer__open(&so);
	CHECK(w);
	runq_events(w, 10, 1795000000000000000);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	/* As if killed between the seal and its manifest line: the seal
	 * and stop lines never written. */
	snprintf(cmd, sizeof(cmd), "sed -i '/^seal \\|^stop /d' %s/MANIFEST",
		 dir);
	CHECK_EQ_INT(system(cmd), 0);
	struct gr_verify vr = { .segment = vseg };
	CHECK_EQ_INT(gr_verify__dir(dir, &vr), 0);
	CHECK_EQ_INT(vstate_last, GR_VS_SEALING);
	w = gr_writer__open(&so);
	CHECK(w);
	CHECK_EQ_INT(gr_writer__close(w), 0);
	CHECK_EQ_INT(count_lines(dir, "seal "), 1);
	struct gr_verify v2 = { .segment = vseg };
	CHECK_EQ_INT(gr_verify__dir(dir, &v2), 0);
	CHECK_EQ_INT(vstate_last, GR_VS_SEALED);
	rmrf(dir);
	free(dir);
}

TEST_MAIN(TEST_ENTRY(segment_temp_name_swept_at_open)
	  TEST_ENTRY(planted_symlinks_refused)
	  TEST_ENTRY(retention_spares_segments_younger_than_min_age)
	  TEST_ENTRY(retention_deletes_segments_older_than_max_age)
	  TEST_ENTRY(min_age_spares_segments_max_age_would_delete)
	  TEST_ENTRY(failed_flush_is_undone) TEST_ENTRY(seal_waits_for_readers)
	  TEST_ENTRY(failed_block_write_drops_not_overflows)
	  TEST_ENTRY(one_writer_per_directory) TEST_ENTRY(rotation_by_age)
	  TEST_ENTRY(codec_round_trip_edges) TEST_ENTRY(codec_one_row)
	  TEST_ENTRY(codec_every_width) TEST_ENTRY(codec_frame_cut_at_planes)
	  TEST_ENTRY(codec_malformed_payloads)
	  TEST_ENTRY(writer_sql_round_trip_every_type)
	  TEST_ENTRY(rotation_and_retention_small_budget)
	  TEST_ENTRY(crash_recovery_keeps_flushed_events)
	  TEST_ENTRY(manifest_parses_both_formats)
	  TEST_ENTRY(manifest_long_with_deletes)
	  TEST_ENTRY(manifest_writer_chains_and_repairs)
	  TEST_ENTRY(manifest_writer_records_on_with_a_damaged_key)
	  TEST_ENTRY(idle_writer_evolves_sealing_key)
	  TEST_ENTRY(walview_reads_committed_frames_only)
	  TEST_ENTRY(clock_step_back_keeps_seq_order)
	  TEST_ENTRY(sealed_not_in_manifest_is_sealing_then_appended))
