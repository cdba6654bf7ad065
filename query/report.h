/* report.h - the canned reports: query/reports/NAME.sql files built into
 * gpurec (query/gen-reports.sh), each a header of `-- name:`,
 * `-- description:` and `-- param: KEY=DEFAULT meaning` lines and one
 * SELECT whose :KEY parameters take --param KEY=VALUE or the default;
 * optionally a `-- raw:` line and a SELECT giving the same answer from raw
 * events (`gpurec report NAME --raw`). */
#ifndef GR_QUERY_REPORT_H
#define GR_QUERY_REPORT_H

#include <stddef.h>
#include <sqlite3.h>

struct gr_report_src {
	const char *name;
	const char *sql;
};
extern const struct gr_report_src gr_report_srcs[];
extern const int gr_nreport_srcs;

#define GR_REPORT_MAX_PARAMS 8

struct gr_report {
	const char *name;
	const char *sql;       /* the header and the SELECT: sql_len bytes */
	size_t sql_len;
	/* A second form after a `-- raw:` line, or NULL: the same answer
	 * from raw events where the first reads summaries (sum_*). */
	const char *raw_sql;
	char description[256];
	int nparams;
	struct {
		char key[32];
		char def[64];
		char help[128];
	} params[GR_REPORT_MAX_PARAMS];
};

/* Finds report name and parses its header into r.  Returns 0, or -ENOENT
 * if there is no such report. */
int gr_report__get(const char *name, struct gr_report *r);

/* Binds every :KEY parameter of st from kv ("KEY=VALUE" strings, n of
 * them) or r's defaults: integers as integers, the rest as text.  Returns
 * 0, or -EINVAL with a message in err (a parameter the report does not
 * take, or one it uses without a default). */
int gr_report__bind(const struct gr_report *r, sqlite3_stmt *st,
		    char *const *kv, int n, char *err, size_t errlen);

/* Checks that every KEY=VALUE in kv names a parameter of r.  Returns 0 or
 * -EINVAL with a message in err. */
int gr_report__check_params(const struct gr_report *r, char *const *kv,
			    int n, char *err, size_t errlen);

/* Registers the SQL functions reports use: cuda_error_name(api, code). */
int gr_report__register(sqlite3 *db);

#endif
