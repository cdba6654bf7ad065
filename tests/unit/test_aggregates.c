/* test_aggregates.c - median() and percentile() on an in-memory database.
 *
 * Expected values are worked by hand from the sorted inputs: for n values
 * the result is the linear interpolation at index p/100 * (n-1).
 */
#include "tests/unit/test.h"
#include "query/aggregates.h"

static sqlite3 *db;

/* Runs @sql and renders the first column of the first row into @buf:
 * its text, "NULL", "(no row)" or "error: <message>". */
static const char *q(const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(buf, len, "prepare: %s", sqlite3_errmsg(db));
		return buf;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			snprintf(buf, len, "NULL");
		else
			snprintf(buf, len, "%s",
				 (const char *)sqlite3_column_text(st, 0));
	} else if (rc == SQLITE_DONE) {
		snprintf(buf, len, "(no row)");
	} else {
		snprintf(buf, len, "error: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return buf;
}

#define CHECK_Q(sql, want)                                                 \
	do {                                                               \
		char qbuf_[256];                                            \
		CHECK_EQ_STR(q(sql, qbuf_, sizeof(qbuf_)), want);                \
	} while (0)

static int setup(void)
{
	static const char schema[] =
		"CREATE TABLE t(g TEXT, x);"
		"INSERT INTO t VALUES"
		" ('a', 1), ('a', 2), ('a', 3), ('a', 4), ('a', NULL),"
		" ('b', 10), ('b', 10), ('b', 20), ('b', NULL), ('b', 30),"
		" ('b', 5.5),"
		" ('c', 42),"
		" ('d', NULL), ('d', NULL);"
		"CREATE TABLE e(x);"
		"CREATE TABLE w(id INTEGER PRIMARY KEY, x);"
		"INSERT INTO w VALUES (1, 5), (2, 1), (3, NULL), (4, 3),"
		" (5, 8), (6, 2);"
		"CREATE TABLE dup(id INTEGER PRIMARY KEY, x);"
		"INSERT INTO dup VALUES (1, 2), (2, 2), (3, 2), (4, 7), (5, 2);";

	if (db)
		sqlite3_close(db);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return -1;
	if (gr_aggregates__register(db) != SQLITE_OK)
		return -1;
	return sqlite3_exec(db, schema, NULL, NULL, NULL);
}

TEST(not_builtin)
{
	sqlite3 *plain;
	sqlite3_stmt *st = NULL;

	/* guards against a test that passes because SQLite grew them */
	CHECK_EQ_INT(sqlite3_open(":memory:", &plain), SQLITE_OK);
	CHECK(sqlite3_prepare_v2(plain, "SELECT median(1)", -1, &st, NULL) !=
	      SQLITE_OK);
	sqlite3_finalize(st);
	sqlite3_close(plain);
	CHECK_EQ_INT(setup(), SQLITE_OK);
}

TEST(group_a)
{
	CHECK_EQ_INT(setup(), SQLITE_OK);
	/* {1,2,3,4} */
	CHECK_Q("SELECT median(x) FROM t WHERE g='a'", "2.5");
	CHECK_Q("SELECT percentile(x, 0) FROM t WHERE g='a'", "1.0");
	CHECK_Q("SELECT percentile(x, 25) FROM t WHERE g='a'", "1.75");
	CHECK_Q("SELECT percentile(x, 50) FROM t WHERE g='a'", "2.5");
	CHECK_Q("SELECT percentile(x, 90) FROM t WHERE g='a'", "3.7");
	CHECK_Q("SELECT percentile(x, 99) FROM t WHERE g='a'", "3.97");
	CHECK_Q("SELECT percentile(x, 100) FROM t WHERE g='a'", "4.0");
	CHECK_Q("SELECT typeof(median(x)) FROM t WHERE g='a'", "real");
}

TEST(group_b_duplicates)
{
	CHECK_EQ_INT(setup(), SQLITE_OK);
	/* {5.5, 10, 10, 20, 30} */
	CHECK_Q("SELECT median(x) FROM t WHERE g='b'", "10.0");
	CHECK_Q("SELECT percentile(x, 0) FROM t WHERE g='b'", "5.5");
	CHECK_Q("SELECT percentile(x, 25) FROM t WHERE g='b'", "10.0");
	CHECK_Q("SELECT percentile(x, 90) FROM t WHERE g='b'", "26.0");
	CHECK_Q("SELECT percentile(x, 99) FROM t WHERE g='b'", "29.6");
	CHECK_Q("SELECT percentile(x, 100) FROM t WHERE g='b'", "30.0");
	CHECK_Q("SELECT percentile(x, 12.5) FROM t WHERE g='b'", "7.75");
}

TEST(whole_table)
{
	CHECK_EQ_INT(setup(), SQLITE_OK);
	/* {1, 2, 3, 4, 5.5, 10, 10, 20, 30, 42} */
	CHECK_Q("SELECT count(x) FROM t", "10");
	CHECK_Q("SELECT median(x) FROM t", "7.75");
	CHECK_Q("SELECT percentile(x, 0) FROM t", "1.0");
	CHECK_Q("SELECT percentile(x, 25) FROM t", "3.25");
	CHECK_Q("SELECT percentile(x, 90) FROM t", "31.2");
	CHECK_Q("SELECT percentile(x, 100) FROM t", "42.0");
	/* p given as text that looks numeric is accepted, like SQLite */
	CHECK_Q("SELECT percentile(x, '25') FROM t", "3.25");
	/* p may be an expression, and equal within tolerance */
	CHECK_Q("SELECT percentile(x, 20 + 5) FROM t", "3.25");
}

TEST(group_by)
{
	CHECK_EQ_INT(setup(), SQLITE_OK);
	CHECK_Q("SELECT group_concat(g || '=' || ifnull(m, 'NULL'), ' ') FROM"
		" (SELECT g, median(x) AS m FROM t GROUP BY g ORDER BY g)",
		"a=2.5 b=10.0 c=42.0 d=NULL");
	CHECK_Q("SELECT group_concat(g || '=' || ifnull(m, 'NULL'), ' ') FROM"
		" (SELECT g, percentile(x, 90) AS m FROM t GROUP BY g"
		"  ORDER BY g)",
		"a=3.7 b=26.0 c=42.0 d=NULL");
}

TEST(empty_and_null)
{
	CHECK_EQ_INT(setup(), SQLITE_OK);
	CHECK_Q("SELECT median(x) FROM e", "NULL");
	CHECK_Q("SELECT percentile(x, 50) FROM e", "NULL");
	CHECK_Q("SELECT median(x) FROM t WHERE g='d'", "NULL");
	CHECK_Q("SELECT percentile(x, 10) FROM t WHERE g='d'", "NULL");
	CHECK_Q("SELECT typeof(median(x)) FROM e", "null");
	/* one value is returned as is, as a REAL */
	CHECK_Q("SELECT percentile(x, 73) FROM t WHERE g='c'", "42.0");
	CHECK_Q("SELECT median(-7)", "-7.0");
}

TEST(errors)
{
	CHECK_EQ_INT(setup(), SQLITE_OK);
	CHECK_Q("SELECT percentile(x, -1) FROM t",
		"error: 2nd argument to percentile() is not a number between "
		"0.0 and 100.0");
	CHECK_Q("SELECT percentile(x, 100.5) FROM t",
		"error: 2nd argument to percentile() is not a number between "
		"0.0 and 100.0");
	CHECK_Q("SELECT percentile(x, 'abc') FROM t",
		"error: 2nd argument to percentile() is not a number between "
		"0.0 and 100.0");
	CHECK_Q("SELECT percentile(x, NULL) FROM t",
		"error: 2nd argument to percentile() is not a number between "
		"0.0 and 100.0");
	/* with no rows the step never runs, so a bad p goes unnoticed */
	CHECK_Q("SELECT percentile(x, 500) FROM e", "NULL");
	CHECK_Q("SELECT percentile(x, rowid) FROM t",
		"error: 2nd argument to percentile() is not the same for all "
		"input rows");
	CHECK_Q("SELECT percentile(x, 50) FROM"
		" (SELECT 1 AS x UNION ALL SELECT 'two')",
		"error: 1st argument to percentile() is not numeric");
	CHECK_Q("SELECT median(x) FROM (SELECT 1 AS x UNION ALL SELECT 'two')",
		"error: 1st argument to median() is not numeric");
	CHECK_Q("SELECT median(x'00')",
		"error: 1st argument to median() is not numeric");
	CHECK_Q("SELECT percentile(1e999, 50)",
		"error: Inf input to percentile()");
	CHECK_Q("SELECT median(-1e999)", "error: Inf input to median()");
	CHECK_Q("SELECT median(1, 2)",
		"prepare: wrong number of arguments to function median()");
}

TEST(large_unsorted)
{
	char sql[256];

	CHECK_EQ_INT(setup(), SQLITE_OK);
	/* 0..99999 inserted in a scrambled order (37 is coprime to 100000) */
	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s"
		 " WHERE i < 99999) SELECT percentile((i * 37) %% 100000, 90)"
		 " FROM s");
	CHECK_Q(sql, "89999.1");
	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s"
		 " WHERE i < 99999) SELECT median((i * 37) %% 100000) FROM s");
	CHECK_Q(sql, "49999.5");
}

TEST(window)
{
	CHECK_EQ_INT(setup(), SQLITE_OK);
	/* sliding frame: every step is followed by an inverse */
	CHECK_Q("SELECT group_concat(ifnull(m, 'N'), ',') FROM"
		" (SELECT median(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING"
		"  AND 1 FOLLOWING) AS m FROM w ORDER BY id)",
		"3.0,3.0,2.0,5.5,3.0,5.0");
	/* running frame: xValue repeatedly on a growing set */
	CHECK_Q("SELECT group_concat(ifnull(m, 'N'), ',') FROM"
		" (SELECT median(x) OVER (ORDER BY id) AS m FROM w"
		"  ORDER BY id)",
		"5.0,3.0,3.0,3.0,4.0,3.0");
	CHECK_Q("SELECT group_concat(ifnull(m, 'N'), ',') FROM"
		" (SELECT percentile(x, 25) OVER (ORDER BY id ROWS BETWEEN 2"
		"  PRECEDING AND CURRENT ROW) AS m FROM w ORDER BY id)",
		"5.0,2.0,2.0,1.5,4.25,2.5");
	/* frames that hold nothing give NULL */
	CHECK_Q("SELECT group_concat(ifnull(m, 'N'), ',') FROM"
		" (SELECT median(x) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING"
		"  AND 1 FOLLOWING) AS m FROM w ORDER BY id)",
		"1.0,N,3.0,8.0,2.0,N");
	/* inverse removes one copy of a duplicated value, not all */
	CHECK_Q("SELECT group_concat(ifnull(m, 'N'), ',') FROM"
		" (SELECT percentile(x, 100) OVER (ORDER BY id ROWS BETWEEN 2"
		"  PRECEDING AND CURRENT ROW) AS m FROM dup ORDER BY id)",
		"2.0,2.0,2.0,7.0,7.0");
	CHECK_Q("SELECT group_concat(ifnull(m, 'N'), ',') FROM"
		" (SELECT percentile(x, 0) OVER (ORDER BY id ROWS BETWEEN 2"
		"  PRECEDING AND CURRENT ROW) AS m FROM dup ORDER BY id)",
		"2.0,2.0,2.0,2.0,2.0");
	/* partitions */
	CHECK_Q("SELECT group_concat(g || ':' || ifnull(m, 'N'), ',') FROM"
		" (SELECT DISTINCT g, median(x) OVER (PARTITION BY g) AS m"
		"  FROM t ORDER BY g)",
		"a:2.5,b:10.0,c:42.0,d:N");
	sqlite3_close(db);
	db = NULL;
}

TEST_MAIN(
	TEST_ENTRY(not_builtin)
	TEST_ENTRY(group_a)
	TEST_ENTRY(group_b_duplicates)
	TEST_ENTRY(whole_table)
	TEST_ENTRY(group_by)
	TEST_ENTRY(empty_and_null)
	TEST_ENTRY(errors)
	TEST_ENTRY(large_unsorted)
	TEST_ENTRY(window)
)
