/* test_output.c - exact bytes of every gpurec sql output format.
 *
 * Queries run on an in-memory database and print into an open_memstream()
 * buffer, which is compared byte for byte with the expected text.  The
 * table layouts were derived from an independent model of the spec.
 */
#include "tests/unit/test.h"
#include "query/output.h"

#include <errno.h>
#include <inttypes.h>
#include <time.h>

static sqlite3 *db;

static int open_db(void)
{
	static const char schema[] =
		"CREATE TABLE p(id INTEGER, name TEXT, score REAL, note TEXT);"
		"INSERT INTO p VALUES"
		" (1, 'alice', 2.5, 'plain'),"
		" (2, 'bob, jr.', -3.0, NULL),"
		" (-30, 'quote \"q\"', 1e20,"
		"  'line1' || char(10) || 'line2' || char(9) || 'tab'),"
		" (4, 'Zo\xc3\xab \xe2\x98\x83', 0.1, ' lead');";

	if (db)
		return 0;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return -1;
	return sqlite3_exec(db, schema, NULL, NULL, NULL);
}

struct result {
	int rc;
	char *err;
	char *out;
	size_t len;
};

/* Prepares @sql, prints it as @opts say and fills *r (freed by
 * res_free). */
static int run_opts(const char *sql, const struct gr_output_opts *opts,
		    struct result *r)
{
	sqlite3_stmt *st;
	FILE *f;

	memset(r, 0, sizeof(*r));
	if (open_db())
		return -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "prepare: %s\n", sqlite3_errmsg(db));
		return -1;
	}
	f = open_memstream(&r->out, &r->len);
	if (!f) {
		sqlite3_finalize(st);
		return -1;
	}
	r->rc = gr_output__run_opts(st, opts, f, &r->err);
	fclose(f);
	sqlite3_finalize(st);
	return 0;
}

/* Prepares @sql, prints it in @fmt and fills *r (freed by res_free). */
static int run(const char *sql, enum gr_format fmt, struct result *r)
{
	struct gr_output_opts opts = { .fmt = fmt };

	return run_opts(sql, &opts, r);
}

static void res_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

/* Runs @sql as struct gr_output_opts @... say and checks success and the
 * exact output. */
#define CHECK_OUT_OPTS(sql, want, ...)                                     \
	do {                                                               \
		struct gr_output_opts o_ = { __VA_ARGS__ };                \
		struct result r_;                                          \
		int ok_;                                                   \
		CHECK_EQ_INT(run_opts(sql, &o_, &r_), 0);                  \
		ok_ = r_.rc == SQLITE_OK && !r_.err &&                     \
		      r_.len == strlen(want) &&                            \
		      memcmp(r_.out, want, r_.len) == 0;                   \
		if (!ok_)                                                  \
			fprintf(stderr, "rc=%d err=%s\ngot:\n[%s]\nwant:\n[%s]\n", \
				r_.rc, r_.err ? r_.err : "-", r_.out, want); \
		res_free(&r_);                                             \
		CHECK(ok_);                                                \
	} while (0)

/* Runs @sql in @fmt and checks success and the exact output. */
#define CHECK_OUT(sql, fmt, want)                                          \
	do {                                                               \
		struct result r_;                                          \
		int ok_;                                                   \
		CHECK_EQ_INT(run(sql, fmt, &r_), 0);                       \
		ok_ = r_.rc == SQLITE_OK && !r_.err &&                     \
		      r_.len == strlen(want) &&                            \
		      memcmp(r_.out, want, r_.len) == 0;                   \
		if (!ok_)                                                  \
			fprintf(stderr, "rc=%d err=%s\ngot:\n[%s]\nwant:\n[%s]\n", \
				r_.rc, r_.err ? r_.err : "-", r_.out, want); \
		res_free(&r_);                                             \
		CHECK(ok_);                                                \
	} while (0)

static const char q_people[] =
	"SELECT id, name, score, note FROM p ORDER BY rowid";

TEST(format_names)
{
	enum gr_format f = GR_FMT_LINE;

	CHECK_EQ_INT(gr_format__parse("table", &f), 0);
	CHECK_EQ_INT(f, GR_FMT_TABLE);
	CHECK_EQ_INT(gr_format__parse("csv", &f), 0);
	CHECK_EQ_INT(f, GR_FMT_CSV);
	CHECK_EQ_INT(gr_format__parse("JSON", &f), 0);
	CHECK_EQ_INT(f, GR_FMT_JSON);
	CHECK_EQ_INT(gr_format__parse("jsonl", &f), 0);
	CHECK_EQ_INT(f, GR_FMT_JSONL);
	CHECK_EQ_INT(gr_format__parse("line", &f), 0);
	CHECK_EQ_INT(f, GR_FMT_LINE);
	CHECK_EQ_INT(gr_format__parse("xml", &f), -EINVAL);
	CHECK_EQ_INT(gr_format__parse("", &f), -EINVAL);
	CHECK_EQ_INT(gr_format__parse("json ", &f), -EINVAL);
	CHECK_EQ_INT(gr_format__parse(NULL, &f), -EINVAL);
	CHECK_EQ_INT(f, GR_FMT_LINE);	/* untouched on error */
	CHECK_EQ_INT(gr_format__parse("TSV", &f), 0);
	CHECK_EQ_INT(f, GR_FMT_TSV);
	for (int i = GR_FMT_TABLE; i <= GR_FMT_TSV; i++) {
		CHECK_EQ_INT(gr_format__parse(gr_format__name(i), &f), 0);
		CHECK_EQ_INT(f, i);
	}
	CHECK_EQ_STR(gr_format__name(GR_FMT_JSONL), "jsonl");
	CHECK(gr_format__name((enum gr_format)99) == NULL);
}

TEST(table)
{
	CHECK_OUT(q_people, GR_FMT_TABLE,
		  " id  name         score  note\n"
		  "---  ---------  -------  -----------------\n"
		  "  1  alice          2.5  plain\n"
		  "  2  bob, jr.      -3.0\n"
		  "-30  quote \"q\"  1.0e+20  line1\\nline2\\ttab\n"
		  "  4  Zo\xc3\xab \xe2\x98\x83          0.1   lead\n");
}

TEST(table_mixed_and_escapes)
{
	/* a column mixing text and numbers keeps a left header; numbers
	 * stay right-aligned per cell; blobs print as hex */
	CHECK_OUT("SELECT 1 AS v UNION ALL SELECT 'abcdef' UNION ALL"
		  " SELECT x'00ff10' UNION ALL SELECT NULL", GR_FMT_TABLE,
		  "v\n"
		  "------\n"
		  "     1\n"
		  "abcdef\n"
		  "00ff10\n"
		  "\n");
	CHECK_OUT("SELECT 'a' || char(1) || 'b' AS c0,"
		  " CAST(x'41ff42' AS TEXT) AS c1,"
		  " 'x' || char(133) || 'y' AS c2, 'r' || char(13) AS c3,"
		  " 1e999 AS inf", GR_FMT_TABLE,
		  "c0      c1      c2        c3   inf\n"
		  "------  ------  --------  ---  ---\n"
		  "a\\x01b  A\\xffB  x\\u0085y  r\\r  Inf\n");
	/* trailing text spaces are data and survive; padding does not */
	CHECK_OUT("SELECT 'a  ' AS x, NULL AS y", GR_FMT_TABLE,
		  "x    y\n"
		  "---  -\n"
		  "a  \n");
}

TEST(table_zero_rows_and_columns)
{
	CHECK_OUT("SELECT 1 AS a, 'b' AS bb WHERE 0", GR_FMT_TABLE,
		  "a  bb\n"
		  "-  --\n");
	CHECK_OUT("CREATE TABLE z1(x)", GR_FMT_TABLE, "");
	CHECK_OUT("SELECT count(*) AS n FROM z1", GR_FMT_TABLE,
		  "n\n-\n0\n");
}

TEST(csv)
{
	CHECK_OUT(q_people, GR_FMT_CSV,
		  "id,name,score,note\r\n"
		  "1,alice,2.5,plain\r\n"
		  "2,\"bob, jr.\",-3.0,\r\n"
		  "-30,\"quote \"\"q\"\"\",1.0e+20,\"line1\nline2\ttab\"\r\n"
		  "4,Zo\xc3\xab \xe2\x98\x83,0.1,\" lead\"\r\n");
}

TEST(csv_edges)
{
	/* empty text is "" and NULL is nothing; CR alone and trailing
	 * blanks force quotes; blobs are hex; bytes pass through */
	CHECK_OUT("SELECT '' AS \"a,b\", NULL AS n, 'x' || char(13) AS cr,"
		  " 'tail ' AS t, x'cafe' AS b, CAST(x'ff' AS TEXT) AS raw,"
		  " -0.5 AS r, -7 AS i", GR_FMT_CSV,
		  "\"a,b\",n,cr,t,b,raw,r,i\r\n"
		  "\"\",,\"x\r\",\"tail \",cafe,\xff,-0.5,-7\r\n");
	CHECK_OUT("SELECT 1 AS a WHERE 0", GR_FMT_CSV, "a\r\n");
	CHECK_OUT("CREATE TABLE z2(x)", GR_FMT_CSV, "");
}

TEST(json)
{
	CHECK_OUT(q_people, GR_FMT_JSON,
		  "[{\"id\":1,\"name\":\"alice\",\"score\":2.5,"
		  "\"note\":\"plain\"},\n"
		  "{\"id\":2,\"name\":\"bob, jr.\",\"score\":-3,"
		  "\"note\":null},\n"
		  "{\"id\":-30,\"name\":\"quote \\\"q\\\"\",\"score\":1e+20,"
		  "\"note\":\"line1\\nline2\\ttab\"},\n"
		  "{\"id\":4,\"name\":\"Zo\xc3\xab \xe2\x98\x83\",\"score\":0.1,"
		  "\"note\":\" lead\"}]\n");
	CHECK_OUT("SELECT 1 AS a WHERE 0", GR_FMT_JSON, "[]\n");
	CHECK_OUT("SELECT 1 AS a, 2 AS a", GR_FMT_JSON, "[{\"a\":1,\"a\":2}]\n");
	CHECK_OUT("CREATE TABLE z3(x)", GR_FMT_JSON, "");
}

TEST(json_escapes)
{
	CHECK_OUT("SELECT char(34, 92, 10, 13, 9, 8, 12, 1, 31, 127) AS s,"
		  " 'k\"' || char(10) AS \"we\"\"ird\"", GR_FMT_JSONL,
		  "{\"s\":\"\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\","
		  "\"we\\\"ird\":\"k\\\"\\n\"}\n");
	/* ill-formed UTF-8: one U+FFFD per maximal subpart */
	CHECK_OUT("SELECT CAST(x'41ff42' AS TEXT) AS a,"
		  " CAST(x'e28278' AS TEXT) AS b,"
		  " CAST(x'eda080' AS TEXT) AS c,"
		  " CAST(x'f4908080' AS TEXT) AS d,"
		  " CAST(x'c0af' AS TEXT) AS e,"
		  " CAST(x'f09f9880e282ac' AS TEXT) AS f,"
		  " CAST(x'f09f98' AS TEXT) AS g", GR_FMT_JSONL,
		  "{\"a\":\"A\xef\xbf\xbd" "B\","
		  "\"b\":\"\xef\xbf\xbdx\","
		  "\"c\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\","
		  "\"d\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\","
		  "\"e\":\"\xef\xbf\xbd\xef\xbf\xbd\","
		  "\"f\":\"\xf0\x9f\x98\x80\xe2\x82\xac\","
		  "\"g\":\"\xef\xbf\xbd\"}\n");
}

TEST(json_numbers)
{
	CHECK_OUT("SELECT 0.1 + 0.2 AS a, 1 / 3.0 AS b, 100.0 AS c,"
		  " 1.0 / 1073741824 AS d, 1e999 AS e, -1e999 AS f,"
		  " 9223372036854775807 AS g, -9223372036854775808 AS h,"
		  " x'' AS i, x'0a' AS j, 0.0 AS k, -1e20 AS l", GR_FMT_JSONL,
		  "{\"a\":0.30000000000000004,\"b\":0.3333333333333333,"
		  "\"c\":100,\"d\":9.313225746154785e-10,\"e\":null,"
		  "\"f\":null,"
		  "\"g\":9223372036854775807,\"h\":-9223372036854775808,"
		  "\"i\":\"\",\"j\":\"0a\",\"k\":0,\"l\":-1e+20}\n");
}

TEST(jsonl)
{
	CHECK_OUT("SELECT id, note FROM p ORDER BY rowid", GR_FMT_JSONL,
		  "{\"id\":1,\"note\":\"plain\"}\n"
		  "{\"id\":2,\"note\":null}\n"
		  "{\"id\":-30,\"note\":\"line1\\nline2\\ttab\"}\n"
		  "{\"id\":4,\"note\":\" lead\"}\n");
	CHECK_OUT("SELECT 1 AS a WHERE 0", GR_FMT_JSONL, "");
}

TEST(line)
{
	CHECK_OUT("SELECT 1 AS a, 'x' AS longname, NULL AS n UNION ALL"
		  " SELECT -2, 'y' || char(10) || 'z', 3.5", GR_FMT_LINE,
		  "       a = 1\n"
		  "longname = x\n"
		  "       n = \n"
		  "\n"
		  "       a = -2\n"
		  "longname = y\\nz\n"
		  "       n = 3.5\n");
	/* names align by code points, not bytes */
	CHECK_OUT("SELECT 1 AS \"\xc3\xa4\", 2 AS ab", GR_FMT_LINE,
		  " \xc3\xa4 = 1\n"
		  "ab = 2\n");
	CHECK_OUT("SELECT 1 AS a WHERE 0", GR_FMT_LINE, "");
}

TEST(zero_columns_still_runs)
{
	struct result r;
	int n = -1;
	sqlite3_stmt *st;

	CHECK_EQ_INT(run("CREATE TABLE z4(x)", GR_FMT_LINE, &r), 0);
	CHECK_EQ_INT(r.rc, SQLITE_OK);
	CHECK_EQ_INT(r.len, 0);
	res_free(&r);
	CHECK_EQ_INT(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema"
					" WHERE name = 'z4'", -1, &st, NULL),
		     SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	CHECK_EQ_INT(n, 1);
}

/* Runs a statement that fails on its second row in @fmt. */
static int run_failing(enum gr_format fmt, struct result *r)
{
	return run("SELECT abs(v) AS a FROM (SELECT 1 AS v UNION ALL"
		   " SELECT -9223372036854775808)", fmt, r);
}

TEST(step_error)
{
	static const struct {
		enum gr_format fmt;
		const char *partial;
	} v[] = {
		{ GR_FMT_TABLE, "" },
		{ GR_FMT_CSV, "a\r\n1\r\n" },
		{ GR_FMT_JSON, "[{\"a\":1}" },
		{ GR_FMT_JSONL, "{\"a\":1}\n" },
		{ GR_FMT_LINE, "a = 1\n" },
	};
	struct result r;

	CHECK_EQ_INT(run("SELECT abs(-9223372036854775808) AS a", GR_FMT_TABLE,
			 &r), 0);
	CHECK_EQ_INT(r.rc, SQLITE_ERROR);
	CHECK_EQ_STR(r.err, "integer overflow");
	CHECK_EQ_INT(r.len, 0);
	res_free(&r);

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		CHECK_EQ_INT(run_failing(v[i].fmt, &r), 0);
		CHECK_EQ_INT(r.rc, SQLITE_ERROR);
		CHECK_EQ_STR(r.err, "integer overflow");
		CHECK_EQ_INT(r.len, strlen(v[i].partial));
		CHECK(memcmp(r.out, v[i].partial, r.len) == 0);
		res_free(&r);
	}

	/* a NULL errmsg pointer is allowed */
	{
		sqlite3_stmt *st;
		FILE *f = fopen("/dev/null", "w");

		CHECK(f);
		CHECK_EQ_INT(sqlite3_prepare_v2(db, "SELECT abs(-9223372036854775808)",
						-1, &st, NULL), SQLITE_OK);
		CHECK_EQ_INT(gr_output__run(st, GR_FMT_CSV, f, NULL),
			     SQLITE_ERROR);
		sqlite3_finalize(st);
		fclose(f);
	}
}

TEST(write_error)
{
	sqlite3_stmt *st;
	char *err = NULL;
	FILE *f;
	int rc;

	f = fopen("/dev/full", "w");
	if (!f) {
		fprintf(stderr, "no /dev/full, skipped\n");
		return;
	}
	CHECK_EQ_INT(open_db(), 0);
	CHECK_EQ_INT(sqlite3_prepare_v2(db, q_people, -1, &st, NULL),
		     SQLITE_OK);
	rc = gr_output__run(st, GR_FMT_CSV, f, &err);
	sqlite3_finalize(st);
	fclose(f);
	CHECK_EQ_INT(rc, SQLITE_IOERR);
	CHECK_EQ_STR(err, "error writing output: No space left on device");
	free(err);
}

TEST(bad_format)
{
	sqlite3_stmt *st;
	char *err = NULL;
	int rc;

	CHECK_EQ_INT(open_db(), 0);
	CHECK_EQ_INT(sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL),
		     SQLITE_OK);
	rc = gr_output__run(st, (enum gr_format)42, stdout, &err);
	sqlite3_finalize(st);
	CHECK_EQ_INT(rc, SQLITE_MISUSE);
	CHECK_EQ_STR(err, "unknown output format");
	free(err);
	sqlite3_close(db);
	db = NULL;
}

/* The one-document writer behind status and verify --format json. */
static void json_doc(struct gr_json *j)
{
	gr_json__begin(j, NULL, '{');
	gr_json__bool(j, "ok", 0);
	gr_json__int(j, "n", -42);
	gr_json__fixed(j, "s", 1.5, 3);
	gr_json__str(j, "p", "a\"b\n\xff");
	gr_json__null(j, "x");
	gr_json__begin(j, "e", '[');
	gr_json__end(j, '[');
	gr_json__begin(j, "a", '[');
	gr_json__begin(j, NULL, '{');
	gr_json__str(j, "k", NULL);
	gr_json__end(j, '{');
	gr_json__raw(j, NULL, "{\"r\":1}");
	gr_json__end(j, '[');
	gr_json__begin(j, "o", '{');
	gr_json__end(j, '{');
	gr_json__end(j, '{');
}

TEST(json_document)
{
	char *buf = NULL;
	size_t len = 0;
	struct gr_json j;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f);
	gr_json__init(&j, f, 0);
	json_doc(&j);
	CHECK_EQ_INT(gr_json__finish(&j), 0);
	gr_json__init(&j, f, 1);
	json_doc(&j);
	CHECK_EQ_INT(gr_json__finish(&j), 0);
	fclose(f);
	CHECK_EQ_STR(buf,
		"{\"ok\":false,\"n\":-42,\"s\":1.500,\"p\":\"a\\\"b\\n\xef\xbf\xbd\","
		"\"x\":null,\"e\":[],\"a\":[{\"k\":null},{\"r\":1}],\"o\":{}}\n"
		"{\n"
		"  \"ok\": false,\n"
		"  \"n\": -42,\n"
		"  \"s\": 1.500,\n"
		"  \"p\": \"a\\\"b\\n\xef\xbf\xbd\",\n"
		"  \"x\": null,\n"
		"  \"e\": [],\n"
		"  \"a\": [\n"
		"    {\n"
		"      \"k\": null\n"
		"    },\n"
		"    {\"r\":1}\n"
		"  ],\n"
		"  \"o\": {}\n"
		"}\n");
	free(buf);
}

/* ---- times, durations, tsv, headers, streaming, fitting ---------------- */

TEST(durations)
{
	static const struct {
		int64_t ns;
		const char *want;
	} v[] = {
		{ 0, "0 ns" },
		{ 812, "812 ns" },
		{ 999, "999 ns" },
		{ 1000, "1 \xc2\xb5s" },
		{ 1500, "1.5 \xc2\xb5s" },
		{ 12345, "12.3 \xc2\xb5s" },
		{ 999600, "1 ms" },		/* 999.6 µs rounds to 1000 */
		{ 1250000, "1.25 ms" },
		{ 1255000, "1.26 ms" },		/* half up */
		{ 123456789, "123 ms" },
		{ 3400000000LL, "3.4 s" },
		{ 59999999999LL, "60 s" },
		{ 60000000000LL, "1m 0s" },
		{ 90000000000LL, "1m 30s" },
		{ 5400000000000LL, "1h 30m 0s" },
		{ 273605000000000LL, "3d 4h 0m 5s" },
		{ -1250000, "-1.25 ms" },
		{ INT64_MIN, "-106751d 23h 47m 16s" },
	};
	char buf[GR_TIMEFMT_BUF];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		gr_timefmt__dur(v[i].ns, buf, sizeof(buf));
		if (strcmp(buf, v[i].want) != 0) {
			fprintf(stderr, "dur %" PRId64 " -> [%s] want [%s]\n",
				v[i].ns, buf, v[i].want);
			CHECK(0);
		}
	}
	gr_timefmt__secs(1795611545123456789LL, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "1795611545.123456789");
	gr_timefmt__secs(-500000000, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "-0.500000000");
	gr_timefmt__iso(1795611545123456789LL, 0, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "2026-11-25T12:59:05.123456789Z");
}

TEST(column_kinds)
{
	CHECK_EQ_INT(gr_col_kind__of("ts"), GR_COL_TIME);
	CHECK_EQ_INT(gr_col_kind__of("first_ts"), GR_COL_TIME);
	CHECK_EQ_INT(gr_col_kind__of("TS"), GR_COL_TIME);
	CHECK_EQ_INT(gr_col_kind__of("dur"), GR_COL_DURATION);
	CHECK_EQ_INT(gr_col_kind__of("gap_ns"), GR_COL_DURATION);
	/* the schema's TS columns, whatever their names */
	CHECK_EQ_INT(gr_col_kind__of("minute"), GR_COL_TIME);
	CHECK_EQ_INT(gr_col_kind__of("ts_last"), GR_COL_TIME);
	CHECK_EQ_INT(gr_col_kind__of("start_ts"), GR_COL_TIME);
	CHECK_EQ_INT(gr_col_kind__of("dur_max"), GR_COL_DURATION);
	/* words that merely end in the letters are no times */
	CHECK_EQ_INT(gr_col_kind__of("its"), GR_COL_PLAIN);
	CHECK_EQ_INT(gr_col_kind__of("events"), GR_COL_PLAIN);
	CHECK_EQ_INT(gr_col_kind__of("duration"), GR_COL_PLAIN);
	CHECK_EQ_INT(gr_col_kind__of("minutes"), GR_COL_PLAIN);
	CHECK_EQ_INT(gr_col_kind__of("ns"), GR_COL_PLAIN);
	CHECK_EQ_INT(gr_col_kind__of("p50_us"), GR_COL_PLAIN);
	CHECK_EQ_INT(gr_col_kind__of(""), GR_COL_PLAIN);
}

/* A time, two durations (one a REAL), a plain number and text in a
 * column named like a time. */
static const char q_times[] =
	"SELECT 1795611545123456789 AS ts, 1250000 AS dur, 812.4 AS wait_ns,"
	" 5 AS n, 'x' AS end_ts";

TEST(time_formats)
{
	/* table and line default to iso; the data formats to ns */
	CHECK_OUT(q_times, GR_FMT_TABLE,
		  "ts                                  dur  wait_ns  n  end_ts\n"
		  "------------------------------  -------  -------  -  ------\n"
		  "2026-11-25T12:59:05.123456789Z  1.25 ms   812 ns  5  x\n");
	CHECK_OUT(q_times, GR_FMT_LINE,
		  "     ts = 2026-11-25T12:59:05.123456789Z\n"
		  "    dur = 1.25 ms\n"
		  "wait_ns = 812 ns\n"
		  "      n = 5\n"
		  " end_ts = x\n");
	CHECK_OUT(q_times, GR_FMT_CSV,
		  "ts,dur,wait_ns,n,end_ts\r\n"
		  "1795611545123456789,1250000,812.4,5,x\r\n");
	CHECK_OUT(q_times, GR_FMT_TSV,
		  "ts\tdur\twait_ns\tn\tend_ts\n"
		  "1795611545123456789\t1250000\t812.4\t5\tx\n");
	CHECK_OUT(q_times, GR_FMT_JSON,
		  "[{\"ts\":1795611545123456789,\"dur\":1250000,"
		  "\"wait_ns\":812.4,\"n\":5,\"end_ts\":\"x\"}]\n");
	CHECK_OUT(q_times, GR_FMT_JSONL,
		  "{\"ts\":1795611545123456789,\"dur\":1250000,"
		  "\"wait_ns\":812.4,\"n\":5,\"end_ts\":\"x\"}\n");

	/* --time-format iso in the data formats */
	CHECK_OUT_OPTS(q_times,
		       "ts,dur,wait_ns,n,end_ts\r\n"
		       "2026-11-25T12:59:05.123456789Z,1.25 ms,812 ns,5,x\r\n",
		       .fmt = GR_FMT_CSV, .time = GR_TIME_ISO);
	CHECK_OUT_OPTS(q_times,
		       "{\"ts\":\"2026-11-25T12:59:05.123456789Z\","
		       "\"dur\":\"1.25 ms\",\"wait_ns\":\"812 ns\",\"n\":5,"
		       "\"end_ts\":\"x\"}\n",
		       .fmt = GR_FMT_JSONL, .time = GR_TIME_ISO);
	/* ns in the person's formats */
	CHECK_OUT_OPTS(q_times,
		       "                 ts      dur  wait_ns  n  end_ts\n"
		       "-------------------  -------  -------  -  ------\n"
		       "1795611545123456789  1250000    812.4  5  x\n",
		       .fmt = GR_FMT_TABLE, .time = GR_TIME_NS);
	/* s: numbers, nine decimals, JSON numbers not strings */
	CHECK_OUT_OPTS(q_times,
		       "[{\"ts\":1795611545.123456789,\"dur\":0.001250000,"
		       "\"wait_ns\":0.000000812,\"n\":5,\"end_ts\":\"x\"}]\n",
		       .fmt = GR_FMT_JSON, .time = GR_TIME_S);
	CHECK_OUT_OPTS(q_times,
		       "1795611545.123456789\t0.001250000\t0.000000812\t5\tx\n",
		       .fmt = GR_FMT_TSV, .time = GR_TIME_S, .no_header = 1);
	CHECK_OUT_OPTS(q_times,
		       "                  ts          dur      wait_ns  n  end_ts\n"
		       "--------------------  -----------  -----------  -  ------\n"
		       "1795611545.123456789  0.001250000  0.000000812  5  x\n",
		       .fmt = GR_FMT_TABLE, .time = GR_TIME_S);

	/* local: the offset in force at that instant, DST included */
	const char *tz = getenv("TZ");
	char *saved = tz ? strdup(tz) : NULL;

	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	CHECK_OUT_OPTS(q_times,
		       "ts,dur,wait_ns,n,end_ts\r\n"
		       "2026-11-25T13:59:05.123456789+01:00,1.25 ms,812 ns,5,x\r\n",
		       .fmt = GR_FMT_CSV, .time = GR_TIME_LOCAL);
	CHECK_OUT_OPTS("SELECT 1782900000000000000 AS ts",	/* July */
		       "ts = 2026-07-01T12:00:00.000000000+02:00\n",
		       .fmt = GR_FMT_LINE, .time = GR_TIME_LOCAL);
	setenv("TZ", "Asia/Kolkata", 1);
	tzset();
	CHECK_OUT_OPTS(q_times,
		       "[{\"ts\":\"2026-11-25T18:29:05.123456789+05:30\","
		       "\"dur\":\"1.25 ms\",\"wait_ns\":\"812 ns\",\"n\":5,"
		       "\"end_ts\":\"x\"}]\n",
		       .fmt = GR_FMT_JSON, .time = GR_TIME_LOCAL);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);

	/* NULL and text stay as they are */
	CHECK_OUT("SELECT NULL AS ts, 'soon' AS dur", GR_FMT_CSV,
		  "ts,dur\r\n,soon\r\n");
}

TEST(tsv_and_headers)
{
	CHECK_OUT(q_people, GR_FMT_TSV,
		  "id\tname\tscore\tnote\n"
		  "1\talice\t2.5\tplain\n"
		  "2\tbob, jr.\t-3.0\t\n"
		  "-30\tquote \"q\"\t1.0e+20\tline1\\nline2\\ttab\n"
		  "4\tZo\xc3\xab \xe2\x98\x83\t0.1\t lead\n");
	CHECK_OUT("SELECT 'a\\b' || char(13) AS [t\tab]", GR_FMT_TSV,
		  "t\\tab\na\\\\b\\r\n");
	CHECK_OUT("SELECT 1 AS a WHERE 0", GR_FMT_TSV, "a\n");
	CHECK_OUT_OPTS("SELECT 1 AS a WHERE 0", "", .fmt = GR_FMT_TSV,
		       .no_header = 1);
	CHECK_OUT_OPTS(q_people,
		       "1,alice,2.5,plain\r\n"
		       "2,\"bob, jr.\",-3.0,\r\n"
		       "-30,\"quote \"\"q\"\"\",1.0e+20,\"line1\nline2\ttab\"\r\n"
		       "4,Zo\xc3\xab \xe2\x98\x83,0.1,\" lead\"\r\n",
		       .fmt = GR_FMT_CSV, .no_header = 1);
	/* no header: widths from the values alone */
	CHECK_OUT_OPTS("SELECT 1 AS long_name, 'x' AS other", "1  x\n",
		       .fmt = GR_FMT_TABLE, .no_header = 1);
}

TEST(table_streams)
{
	/* 200 rows size the columns; row 202 widens s from there on and
	 * nothing printed before it moves */
	struct result r;
	char *p;

	CHECK_EQ_INT(run("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL"
			 " SELECT i + 1 FROM c WHERE i < 203)"
			 " SELECT CASE i WHEN 202 THEN 'wide-value' ELSE 'v'"
			 " END AS s, i FROM c", GR_FMT_TABLE, &r), 0);
	CHECK_EQ_INT(r.rc, SQLITE_OK);
	CHECK(r.out && strncmp(r.out, "s    i\n-  ---\nv    1\n", 21) == 0);
	p = r.out ? strstr(r.out, "v  200\n") : NULL;
	CHECK(p != NULL);
	if (p)
		CHECK_EQ_STR(p, "v  200\n"
				"v  201\n"
				"wide-value  202\n"
				"v           203\n");
	res_free(&r);
}

TEST(table_fits_width)
{
	CHECK_OUT_OPTS("SELECT 'abc' AS a, 'a long value that goes on' AS b"
		       " UNION ALL SELECT 'de', 'short'",
		       "a    b\n"
		       "---  --------------\xe2\x80\xa6\n"
		       "abc  a long value t\xe2\x80\xa6\n"
		       "de   short\n",
		       .fmt = GR_FMT_TABLE, .width = 20);
	/* a column is a code point, escapes included */
	CHECK_OUT_OPTS("SELECT 'Zo\xc3\xab \xe2\x98\x83\xe2\x98\x83' AS n, "
		       "'a' || char(10) || 'b' AS m",
		       "n       m\n"
		       "------  --\xe2\x80\xa6\n"
		       "Zo\xc3\xab \xe2\x98\x83\xe2\x98\x83  a\\\xe2\x80\xa6\n",
		       .fmt = GR_FMT_TABLE, .width = 11);
	/* exactly the width: no cut */
	CHECK_OUT_OPTS("SELECT 'abcd' AS x", "x\n----\nabcd\n",
		       .fmt = GR_FMT_TABLE, .width = 4);
	/* other formats are never cut */
	CHECK_OUT_OPTS("SELECT 'abcdefgh' AS x", "x\r\nabcdefgh\r\n",
		       .fmt = GR_FMT_CSV, .width = 4);
}

TEST_MAIN(
	TEST_ENTRY(format_names)
	TEST_ENTRY(table)
	TEST_ENTRY(table_mixed_and_escapes)
	TEST_ENTRY(table_zero_rows_and_columns)
	TEST_ENTRY(csv)
	TEST_ENTRY(csv_edges)
	TEST_ENTRY(json)
	TEST_ENTRY(json_escapes)
	TEST_ENTRY(json_numbers)
	TEST_ENTRY(jsonl)
	TEST_ENTRY(line)
	TEST_ENTRY(zero_columns_still_runs)
	TEST_ENTRY(step_error)
	TEST_ENTRY(write_error)
	TEST_ENTRY(bad_format)
	TEST_ENTRY(json_document)
	TEST_ENTRY(durations)
	TEST_ENTRY(column_kinds)
	TEST_ENTRY(time_formats)
	TEST_ENTRY(tsv_and_headers)
	TEST_ENTRY(table_streams)
	TEST_ENTRY(table_fits_width)
)
