/* timefmt.c - times and durations for a person; see timefmt.h.
 *
 * UTC text comes from gr_format_time() (integer calendar arithmetic, no
 * TZ); local text alone goes through localtime_r(), whose tm_gmtoff is
 * the offset in force at that instant (DST included).  Durations are
 * rounded in integer arithmetic, so the same ns always read the same.
 */
#include "query/timefmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/parse.h"
#include "schema/schema.h"

#define NS_PER_S 1000000000LL

static const char *const time_format_names[] = {
	[GR_TIME_ISO] = "iso",
	[GR_TIME_LOCAL] = "local",
	[GR_TIME_NS] = "ns",
	[GR_TIME_S] = "s",
};

int gr_time_format__parse(const char *name, enum gr_time_format *out)
{
	for (size_t i = GR_TIME_ISO; name && i < sizeof(time_format_names) /
				     sizeof(time_format_names[0]); i++)
		if (strcasecmp(name, time_format_names[i]) == 0) {
			*out = (enum gr_time_format)i;
			return 0;
		}
	return -EINVAL;
}

/* Whether @name is @word or ends in "_" @word. */
static int named(const char *name, const char *word)
{
	size_t n = strlen(name), w = strlen(word);

	if (n == w)
		return strcasecmp(name, word) == 0;
	return n > w && name[n - w - 1] == '_' &&
	       strcasecmp(name + n - w, word) == 0;
}

/* Whether some table declares a column @name of type TS (tables.def):
 * the schema's own times, "minute" and "ts_last" among them. */
static int schema_time(const char *name)
{
	for (int t = 0; t < GR_NTABLES; t++)
		for (int c = 0; c < gr_tables[t].ncols; c++)
			if (gr_tables[t].cols[c].type == GR_TS &&
			    strcasecmp(gr_tables[t].cols[c].name, name) == 0)
				return 1;
	return 0;
}

enum gr_col_kind gr_col_kind__of(const char *name)
{
	if (!name)
		return GR_COL_PLAIN;
	if (named(name, "ts") || schema_time(name))
		return GR_COL_TIME;
	/* "ns" alone says no more than a unit: only "x_ns" is a duration */
	if (strcasecmp(name, "dur") == 0 || strncasecmp(name, "dur_", 4) == 0 ||
	    (strlen(name) > 3 && named(name, "ns")))
		return GR_COL_DURATION;
	return GR_COL_PLAIN;
}

/* Splits @ns into whole seconds (floor) and ns 0..999999999. */
static void split(int64_t ns, int64_t *secs, int64_t *frac)
{
	*secs = ns / NS_PER_S;
	*frac = ns % NS_PER_S;
	if (*frac < 0) {
		*frac += NS_PER_S;
		(*secs)--;
	}
}

void gr_timefmt__iso(int64_t ns, int local, char *buf, size_t len)
{
	int64_t secs, frac;
	time_t t;
	struct tm tm;
	long off;

	if (!local || len < GR_TIMEFMT_BUF) {
		gr_format_time(ns, buf, len);
		return;
	}
	split(ns, &secs, &frac);
	t = (time_t)secs;
	if (!localtime_r(&t, &tm)) {
		gr_format_time(ns, buf, len);
		return;
	}
	off = tm.tm_gmtoff;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64
		 "%c%02ld:%02ld", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac,
		 off < 0 ? '-' : '+', (off < 0 ? -off : off) / 3600,
		 (off < 0 ? -off : off) / 60 % 60);
}

void gr_timefmt__dur(int64_t ns, char *buf, size_t len)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 }, { "\xc2\xb5s", 1000 }, { "ms", 1000000 },
		{ "s", NS_PER_S },
	};
	const char *sign = ns < 0 ? "-" : "";
	/* the magnitude, INT64_MIN included */
	uint64_t v = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	size_t u = 0;

	if (v >= 60 * (uint64_t)NS_PER_S) {
		uint64_t s = v / NS_PER_S, d = s / 86400, h = s / 3600 % 24,
			 m = s / 60 % 60;

		s %= 60;
		if (d)
			snprintf(buf, len, "%s%" PRIu64 "d %" PRIu64 "h %" PRIu64
				 "m %" PRIu64 "s", sign, d, h, m, s);
		else if (h)
			snprintf(buf, len, "%s%" PRIu64 "h %" PRIu64 "m %" PRIu64
				 "s", sign, h, m, s);
		else
			snprintf(buf, len, "%s%" PRIu64 "m %" PRIu64 "s", sign, m,
				 s);
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) &&
	       v >= units[u + 1].ns)
		u++;
	for (;;) {
		/* three significant digits, rounded half up */
		uint64_t whole = v / units[u].ns;
		int dec = u == 0 ? 0 : whole >= 100 ? 0 : whole >= 10 ? 1 : 2;
		uint64_t scale = dec == 0 ? 1 : dec == 1 ? 10 : 100;
		uint64_t q = (v * scale + units[u].ns / 2) / units[u].ns;

		/* 999.6 µs rounds to 1000 µs: that is 1 ms */
		if (q >= 1000 * scale && u + 1 < sizeof(units) / sizeof(units[0])) {
			u++;
			continue;
		}
		char frac[4] = "";
		if (dec) {
			snprintf(frac, sizeof(frac), ".%0*" PRIu64, dec, q % scale);
			/* trailing zeros say nothing: 3.40 s is 3.4 s */
			for (int i = dec; i > 0 && frac[i] == '0'; i--)
				frac[i] = '\0';
			if (frac[1] == '\0')
				frac[0] = '\0';
		}
		snprintf(buf, len, "%s%" PRIu64 "%s %s", sign, q / scale, frac,
			 units[u].name);
		return;
	}
}

void gr_timefmt__secs(int64_t ns, char *buf, size_t len)
{
	/* -0.5 s is "-0.500000000", not "-1.500000000": by magnitude */
	uint64_t v = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "",
		 v / (uint64_t)NS_PER_S, v % (uint64_t)NS_PER_S);
}

/* iso(ts): UTC ISO 8601 text with nine decimals; NULL for a non-integer. */
static void fn_iso(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char buf[GR_TIMEFMT_BUF];

	(void)argc;
	if (sqlite3_value_numeric_type(argv[0]) != SQLITE_INTEGER)
		return;
	gr_timefmt__iso(sqlite3_value_int64(argv[0]), 0, buf, sizeof(buf));
	sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

/* dur(ns): a duration with its unit; NULL for NULL or text. */
static void fn_dur(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char buf[GR_TIMEFMT_BUF];
	int type = sqlite3_value_numeric_type(argv[0]);
	int64_t ns;

	(void)argc;
	if (type == SQLITE_INTEGER) {
		ns = sqlite3_value_int64(argv[0]);
	} else if (type == SQLITE_FLOAT) {
		double d = sqlite3_value_double(argv[0]);

		if (!(d > -9.2e18 && d < 9.2e18))
			return;
		ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	} else {
		return;
	}
	gr_timefmt__dur(ns, buf, sizeof(buf));
	sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

/* ts(text): any form --since takes, as ns since the epoch.  Relative
 * forms ("2h", "today") count from the wall clock at the call. */
static void fn_ts(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s = (const char *)sqlite3_value_text(argv[0]);
	struct timespec now;
	int64_t ns;
	int err;

	(void)argc;
	if (!s)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	err = gr_parse_time(s, (int64_t)now.tv_sec * NS_PER_S + now.tv_nsec,
			    &ns);
	if (err) {
		char *msg = sqlite3_mprintf("ts('%s'): %s", s, err == -ERANGE ?
			"outside 1677..2262" : "not a time (expected RFC 3339, "
			"a local date and time, @epoch, today, or a span ago "
			"like 2h)");

		sqlite3_result_error(ctx, msg ? msg : "ts(): bad time", -1);
		sqlite3_free(msg);
		return;
	}
	sqlite3_result_int64(ctx, ns);
}

int gr_timefmt__register(sqlite3 *db)
{
	int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS;
	int rc;

	rc = sqlite3_create_function(db, "iso", 1, flags | SQLITE_DETERMINISTIC,
				     NULL, fn_iso, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "dur", 1,
					     flags | SQLITE_DETERMINISTIC, NULL,
					     fn_dur, NULL, NULL);
	/* not deterministic: "2h" means a different instant tomorrow */
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "ts", 1, flags, NULL, fn_ts,
					     NULL, NULL);
	return rc;
}
