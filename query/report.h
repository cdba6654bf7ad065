/* report.h - the canned reports: query/reports/NAME.sql files built into
 * gpurec (query/gen-reports.sh), each a header of `-- name:`,
 * `-- description:` and `-- param: KEY:TYPE=DEFAULT meaning` lines and one
 * SELECT whose :KEY parameters take --param KEY=VALUE or the default;
 * optionally a `-- raw:` line and a SELECT giving the same answer from raw
 * events (`gpurec report NAME --raw`).
 *
 * Every parameter is typed, so that a value the report cannot mean is one
 * line and exit 1 before any SQL runs, never a header and no rows:
 *   int       a whole number, bound as an integer
 *   count     a whole number, 0 or more (SQLite reads LIMIT -5 as none)
 *   pid       a process id, 1 to 4194304 (the kernel's PID_MAX_LIMIT)
 *   time      a point in time, bound as ns since the epoch: digits alone
 *             are ns (as gpurec prints ts), anything else goes through
 *             gr_parse_time() (now, 2h ago, RFC 3339, ...)
 *   duration  a length of time, bound as ns: 250ms, 2s, 1h; digits alone
 *             are in the unit the key ends with (_ns, _us, _ms, _s), else
 *             seconds, so min_ms=3 stays 3 ms
 *   enum(a|b) one of the values listed, bound like any other value */
#ifndef GR_QUERY_REPORT_H
#define GR_QUERY_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct gr_report_src {
	const char *name;
	const char *sql;
};
extern const struct gr_report_src gr_report_srcs[];
extern const int gr_nreport_srcs;

#define GR_REPORT_MAX_PARAMS 8

enum gr_param_type {
	GR_PT_INT,
	GR_PT_COUNT,
	GR_PT_PID,
	GR_PT_TIME,
	GR_PT_DURATION,
	GR_PT_ENUM,
};

/* One `-- param:` line of a report's header. */
struct gr_report_param {
	char key[32];
	enum gr_param_type type;
	char type_name[64];   /* as the header spells it: enum(a|b) */
	char def[64];         /* "" when the parameter must be given */
	char help[128];
};

struct gr_report {
	const char *name;
	const char *sql;       /* the header and the SELECT: sql_len bytes */
	size_t sql_len;
	/* A second form after a `-- raw:` line, or NULL: the same answer
	 * from raw events where the first reads summaries (sum_*). */
	const char *raw_sql;
	char description[256];
	int nparams;
	struct gr_report_param params[GR_REPORT_MAX_PARAMS];
	/* Why the header is malformed (a parameter with no type or one
	 * unknown): a defect of gpurec, reported as internal. */
	char defect[128];
};

/* Finds report name and parses its header into r.  Returns 0, -ENOENT if
 * there is no such report, or -EPROTO with r->defect set if its header is
 * malformed. */
int gr_report__get(const char *name, struct gr_report *r);

/* Binds every :KEY parameter of st from kv ("KEY=VALUE" strings, n of
 * them; the last of a key wins) or r's defaults, converted by type (times
 * relative to now_ns).  Returns 0, or -EINVAL with a message in err (a
 * parameter the report does not declare, or a default its type refuses:
 * defects of the report). */
int gr_report__bind(const struct gr_report *r, sqlite3_stmt *st,
		    char *const *kv, int n, int64_t now_ns, char *err,
		    size_t errlen);

/* Checks that every KEY=VALUE in kv names a parameter of r and that its
 * value is one of the parameter's type, and that every parameter without
 * a default is given.  Returns 0 or -EINVAL with a one-line message in
 * err. */
int gr_report__check_params(const struct gr_report *r, char *const *kv,
			    int n, int64_t now_ns, char *err, size_t errlen);

/* Writes "KEY=DEFAULT (TYPE; meaning)" for every parameter of r, comma
 * separated, into buf of len bytes (`report list`, `help report`). */
void gr_report__params_text(const struct gr_report *r, char *buf,
			    size_t len);

/* Registers the SQL functions reports use: cuda_error_name(api, code). */
int gr_report__register(sqlite3 *db);

#endif
