/* timefmt.h - times and durations for a person: which columns hold them,
 * how each --time-format writes them, and the SQL functions iso(), ts()
 * and dur() that custom queries use to do the same.
 *
 * Columns are recognized by name, one rule for every table, view and
 * report (docs/reports.md, "Times"): an INTEGER in a column named "ts",
 * "*_ts" or like any column schema/tables.def declares TS ("minute",
 * "ts_last") is a time, ns since the Unix epoch; an INTEGER or REAL in a
 * column named "dur", "dur_*" or "*_ns" is a duration in ns.  The tables
 * and query/reports/ follow it.
 */
#ifndef GR_QUERY_TIMEFMT_H
#define GR_QUERY_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

enum gr_time_format {
	GR_TIME_DEFAULT,	/* iso for table and line, ns for the others */
	GR_TIME_ISO,		/* 2026-11-25T12:59:05.123456789Z, 1.25 ms */
	GR_TIME_LOCAL,		/* ISO in local time with its offset */
	GR_TIME_NS,		/* integers as recorded */
	GR_TIME_S,		/* seconds with nine decimals */
};

enum gr_col_kind {
	GR_COL_PLAIN,
	GR_COL_TIME,		/* ns since the epoch */
	GR_COL_DURATION,	/* ns */
};

/* Buffer size that fits every text written here, NUL included. */
#define GR_TIMEFMT_BUF 48

/* Looks up a --time-format by name (iso, local, ns, s).  Returns 0, or
 * -EINVAL for an unknown name. */
int gr_time_format__parse(const char *name, enum gr_time_format *out);

/* What column @name holds, by the rule above (the value's type decides
 * the rest). */
enum gr_col_kind gr_col_kind__of(const char *name);

/* Writes time @ns as ISO 8601 with nine decimals: UTC with 'Z', or with
 * @local the local time (TZ) and its offset, "+01:00".  Never fails for
 * a buffer of GR_TIMEFMT_BUF bytes. */
void gr_timefmt__iso(int64_t ns, int local, char *buf, size_t len);

/* Writes duration @ns with a unit and three significant digits below a
 * minute ("812 ns", "1.25 ms", "3.4 s"), as days, hours, minutes and
 * seconds above ("2m 5s", "1h 30m 0s", "3d 4h 0m 0s"). */
void gr_timefmt__dur(int64_t ns, char *buf, size_t len);

/* Writes @ns as seconds with nine decimals, "1795611544.457481221". */
void gr_timefmt__secs(int64_t ns, char *buf, size_t len);

/* Registers iso(ts), ts(text) and dur(ns) on @db.  Returns an SQLite
 * result code. */
int gr_timefmt__register(sqlite3 *db);

#endif
