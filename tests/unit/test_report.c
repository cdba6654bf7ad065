/* test_report.c - report headers and typed parameters (query/report.c):
 * the header syntax `-- param: KEY:TYPE=DEFAULT help`, each type's
 * accepted and refused values, and what is bound (times and durations in
 * ns).  The reports here are this file's own, so a malformed header can
 * be tested without shipping one. */
#include <errno.h>
#include <sqlite3.h>

#include "tests/unit/test.h"
#include "query/report.h"

const struct gr_report_src gr_report_srcs[] = {
	{ "typed",
	  "-- name: typed\n"
	  "-- description: one parameter of each type\n"
	  "-- param: n:int=-3 any whole number\n"
	  "-- param: limit:count=10 rows\n"
	  "-- param: pid:pid= the process\n"
	  "-- param: at:time= the time\n"
	  "-- param: min_ms:duration=100ms shortest\n"
	  "-- param: span:duration=2 length\n"
	  "-- param: mode:enum(fast|slow|0)=fast how\n"
	  "SELECT :n, :limit, :pid, :at, :min_ms, :span, :mode\n" },
	{ "untyped", "-- name: untyped\n-- param: limit=10 rows\nSELECT 1\n" },
	{ "badtype", "-- name: badtype\n-- param: x:float=1 x\nSELECT 1\n" },
};
const int gr_nreport_srcs = 3;

#define NOW 1795000000000000000ll /* 2026-11-18T11:06:40Z */

/* check_params on one KEY=VALUE (and pid=1, at=0, which typed needs). */
static int check1(const char *kv, char *err, size_t len)
{
	struct gr_report r;
	char *v[3] = { (char *)kv, "pid=1", "at=0" };

	if (gr_report__get("typed", &r))
		return -100;
	return gr_report__check_params(&r, v, 3, NOW, err, len);
}

TEST(header)
{
	struct gr_report r;

	CHECK_EQ_INT(gr_report__get("typed", &r), 0);
	CHECK_EQ_INT(r.nparams, 7);
	CHECK_EQ_STR(r.params[0].key, "n");
	CHECK_EQ_INT(r.params[0].type, GR_PT_INT);
	CHECK_EQ_STR(r.params[0].def, "-3");
	CHECK_EQ_INT(r.params[2].type, GR_PT_PID);
	CHECK_EQ_STR(r.params[2].def, "");
	CHECK_EQ_STR(r.params[2].help, "the process");
	CHECK_EQ_INT(r.params[6].type, GR_PT_ENUM);
	CHECK_EQ_STR(r.params[6].type_name, "enum(fast|slow|0)");
	CHECK_EQ_INT(gr_report__get("nosuch", &r), -ENOENT);
}

TEST(malformed_header)
{
	struct gr_report r;

	CHECK_EQ_INT(gr_report__get("untyped", &r), -EPROTO);
	CHECK_EQ_STR(r.defect, "parameter limit has no type");
	CHECK_EQ_INT(gr_report__get("badtype", &r), -EPROTO);
	CHECK_EQ_STR(r.defect, "parameter x has an unknown type");
}

TEST(accepted)
{
	static const char *const good[] = {
		"n=-7", "n=0", "limit=0", "limit=25", "pid=1", "pid=4194304",
		"at=1795000000000000000", "at=now", "at=2h",
		"at=2026-11-25T12:59:05Z", "min_ms=3", "min_ms=250us",
		"min_ms=1.5s", "span=1h", "mode=slow", "mode=0",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		if (check1(good[i], err, sizeof(err))) {
			fprintf(stderr, "refused %s: %s\n", good[i], err);
			CHECK(0);
		}
	}
}

TEST(refused)
{
	static const char *const bad[][2] = {
		{ "n=x", "bad --param 'n=x': n takes a whole number" },
		{ "n=1.5", "bad --param 'n=1.5': n takes a whole number" },
		{ "limit=-1", "bad --param 'limit=-1': limit takes a whole "
			      "number, 0 or more" },
		{ "limit=+5", "bad --param 'limit=+5': limit takes a whole "
			      "number, 0 or more" },
		{ "limit=99999999999999999999", "bad --param "
		  "'limit=99999999999999999999': limit takes a whole number, "
		  "0 or more" },
		{ "pid=0", "bad --param 'pid=0': pid takes a process id, 1 to "
			   "4194304" },
		{ "pid=4194305", "bad --param 'pid=4194305': pid takes a "
				 "process id, 1 to 4194304" },
		{ "at=abc", "bad --param 'at=abc': at takes a time: ns since "
			    "the epoch (as gpurec prints ts), now, a duration "
			    "ago like 2h, or RFC 3339 like 2026-11-22T14:00:00Z" },
		{ "at=", "bad --param 'at=': at takes a time: ns since the "
			 "epoch (as gpurec prints ts), now, a duration ago like "
			 "2h, or RFC 3339 like 2026-11-22T14:00:00Z" },
		{ "min_ms=-3", "bad --param 'min_ms=-3': min_ms takes a "
			       "duration like 250ms, 2s or 1h" },
		{ "min_ms=3 ms", "bad --param 'min_ms=3 ms': min_ms takes a "
				 "duration like 250ms, 2s or 1h" },
		{ "mode=fas", "bad --param 'mode=fas': mode takes one of "
			      "fast|slow|0" },
		{ "mode=", "bad --param 'mode=': mode takes one of fast|slow|0" },
		{ "nope=1", "report typed takes no parameter 'nope' (gpurec "
			    "report list shows its parameters)" },
		{ "=1", "bad --param '=1': expected KEY=VALUE" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		CHECK_EQ_INT(check1(bad[i][0], err, sizeof(err)), -EINVAL);
		CHECK_EQ_STR(err, bad[i][1]);
	}
}

TEST(required)
{
	struct gr_report r;
	char err[256], *v[] = { "pid=5" };

	CHECK_EQ_INT(gr_report__get("typed", &r), 0);
	CHECK_EQ_INT(gr_report__check_params(&r, v, 1, NOW, err, sizeof(err)),
		     -EINVAL);
	CHECK_EQ_STR(err, "report typed needs --param at=… (the time)");
}

/* What a statement gets: defaults and given values, converted. */
TEST(bound)
{
	struct gr_report r;
	sqlite3 *db;
	sqlite3_stmt *st;
	char err[256];
	char *v[] = { "pid=42", "at=2026-11-18T11:06:41.5Z", "min_ms=3",
		      "mode=0", "limit=7", "limit=8" };

	CHECK_EQ_INT(gr_report__get("typed", &r), 0);
	CHECK_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_prepare_v2(db, r.sql, -1, &st, NULL), SQLITE_OK);
	CHECK_EQ_INT(gr_report__bind(&r, st, v, 6, NOW, err, sizeof(err)), 0);
	CHECK_EQ_INT(sqlite3_step(st), SQLITE_ROW);
	CHECK_EQ_INT(sqlite3_column_int64(st, 0), -3);     /* default */
	CHECK_EQ_INT(sqlite3_column_int64(st, 1), 8);      /* the last wins */
	CHECK_EQ_INT(sqlite3_column_int64(st, 2), 42);
	CHECK_EQ_INT(sqlite3_column_int64(st, 3), NOW + 1500000000);
	CHECK_EQ_INT(sqlite3_column_int64(st, 4), 3000000);   /* 3 ms */
	CHECK_EQ_INT(sqlite3_column_int64(st, 5), 2000000000); /* 2: s */
	CHECK_EQ_INT(sqlite3_column_type(st, 6), SQLITE_INTEGER); /* 0 */
	sqlite3_finalize(st);
	sqlite3_close(db);
}

TEST(params_text)
{
	struct gr_report r;
	char buf[1024];

	CHECK_EQ_INT(gr_report__get("typed", &r), 0);
	r.nparams = 2;
	gr_report__params_text(&r, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "n=-3 (int; any whole number), limit=10 (count; "
			  "rows)");
}

TEST_MAIN(
	TEST_ENTRY(header)
	TEST_ENTRY(malformed_header)
	TEST_ENTRY(accepted)
	TEST_ENTRY(refused)
	TEST_ENTRY(required)
	TEST_ENTRY(bound)
	TEST_ENTRY(params_text)
)
