/* filters.c - says so when a global filter matches nothing in the
 * recording.  `--pid 99999`, `--host nosuch` or a window beside the
 * recording give an empty answer, exit 0, exactly like a filter that
 * matched and found nothing to report; one line on stderr tells the two
 * apart.  Each filter is judged alone over the whole recording (the
 * others cleared while it is), so the line names the one that is wrong.
 *
 * What "in the recording" means, per filter:
 *  --pid    a row of the process table (every CUDA process and its
 *           ancestors, snapshotted in every segment) or of the CUDA call
 *           summaries (sum_api): both small next to the raw events, so
 *           the check never scans them;
 *  --host   a segment recorded on that host;
 *  --since/--until  a window that overlaps the segments' span.
 */
#include <inttypes.h>
#include <stdint.h>

#include "common/parse.h"
#include "query/filters.h"

/* Runs @sql with ?1 bound to @pid or @text and returns its first column
 * as an integer (*b too, second column, where b is not NULL); -1 if it
 * failed (a query over the recording that failed says so itself). */
static int64_t one(sqlite3 *db, const char *sql, int64_t pid, const char *text,
		   int64_t *b)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (text)
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(st, 1, pid);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL) {
		v = sqlite3_column_int64(st, 0);
		if (b)
			*b = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return v;
}

int gr_filters__check(sqlite3 *db, struct gr_qctx *q, FILE *warn)
{
	struct gr_qctx saved = *q;
	int lines = 0;

	q->has_pid = 0;
	q->host = NULL;
	q->since = INT64_MIN;
	q->until = INT64_MAX;
	if (saved.has_pid &&
	    one(db, "SELECT EXISTS (SELECT 1 FROM process WHERE pid = ?1) OR "
		"EXISTS (SELECT 1 FROM sum_api WHERE pid = ?1)", saved.pid,
		NULL, NULL) == 0) {
		fprintf(warn, "gpurec: no process %" PRId64 " in the recording "
			"(--pid matched nothing)\n", saved.pid);
		lines++;
	}
	if (saved.host && one(db, "SELECT count(*) FROM segments WHERE host = ?1",
			      0, saved.host, NULL) == 0) {
		fprintf(warn, "gpurec: no host '%s' in the recording (--host "
			"matched nothing)\n", saved.host);
		lines++;
	}
	int64_t lo, hi = 0;
	if ((saved.since != INT64_MIN || saved.until != INT64_MAX) &&
	    (lo = one(db, "SELECT min(start_ts), max(end_ts) FROM segments",
		      0, NULL, &hi)) >= 0 &&
	    (saved.since > hi || saved.until < lo)) {
		char a[GR_TIME_BUF], b[GR_TIME_BUF];
		gr_format_time(lo, a, sizeof(a));
		gr_format_time(hi, b, sizeof(b));
		fprintf(warn, "gpurec: the window of --since/--until lies "
			"outside the recording (%s .. %s): it matched nothing\n",
			a, b);
		lines++;
	}
	q->has_pid = saved.has_pid;
	q->host = saved.host;
	q->since = saved.since;
	q->until = saved.until;
	return lines;
}
