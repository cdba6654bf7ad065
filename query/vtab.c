/* vtab.c - the recording as SQLite virtual tables: what the modules share.
 *
 * Each table of the schema becomes a virtual table: event tables scan
 * segment blocks (vt_event.c, with grouped emission in vt_grouped.c),
 * summary tables read the rows kept beside them (sumtab.c), and
 * `segments` lists the files (vt_segments.c).  This file registers them
 * and holds what they share: the warning that names a skipped segment
 * and the opening of a catalog segment for a window.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "query/vtab.h"

void gr_vtab__warn(struct gr_qctx *q, int si, const char *fmt, ...)
{
	va_list ap;
	if (si >= 0 && q->warned) {
		if (q->warned[si])
			return;
		q->warned[si] = 1;
	}
	q->warnings++;
	fprintf(q->warn, "gpurec: warning: ");
	va_start(ap, fmt);
	vfprintf(q->warn, fmt, ap);
	va_end(ap);
	fprintf(q->warn, "; answering from the other segments\n");
}

/* Declares a virtual table's columns from the schema. */
int gr_vtab__declare(sqlite3 *db, const struct gr_table *tab)
{
	sqlite3_str *ddl = sqlite3_str_new(db);
	sqlite3_str_appendf(ddl, "CREATE TABLE x(");
	for (int c = 0; c < tab->ncols; c++)
		sqlite3_str_appendf(ddl, "%s\"%w\" %s", c ? ", " : "",
				    tab->cols[c].name,
				    gr_coltype__sql(tab->cols[c].type));
	sqlite3_str_appendf(ddl, ")");
	char *sql = sqlite3_str_finish(ddl);
	int rc = sql ? sqlite3_declare_vtab(db, sql) : SQLITE_NOMEM;
	sqlite3_free(sql);
	return rc;
}

/* Whether catalog segment si may match a scan of [lo, hi] on host, by
 * its manifest line alone (1 where it is not sealed: no line to judge). */
static int manifest_may_match(const struct gr_qctx *q, int si, int64_t lo,
			      int64_t hi, const char *host)
{
	const struct gr_catalog_seg *cs = &q->cat.segs[si];
	if (!cs->sealed)
		return 1;
	/* The manifest knows a sealed segment's span and host: skip it
	 * unopened when it cannot match. */
	if (cs->m->events == 0 || cs->end_ts < lo || cs->start_ts > hi)
		return 0;
	return !host || strcmp(cs->m->host, host) == 0;
}

int gr_vtab__may_match(const struct gr_qctx *q, int si, int64_t lo,
		       int64_t hi, const char *host,
		       const struct gr_segment *s)
{
	return manifest_may_match(q, si, lo, hi, host) &&
	       (!host || strcmp(gr_segment__info(s)->host, host) == 0);
}

int gr_vtab__open_segment(struct gr_qctx *q, int si, int64_t lo, int64_t hi,
			  const char *host, struct gr_segment **out)
{
	const struct gr_catalog_seg *cs = &q->cat.segs[si];
	struct gr_segment *s;
	char *err = NULL;

	if (!manifest_may_match(q, si, lo, hi, host))
		return 0;
	if (gr_segment__open(cs->path, cs->sealed, &s, &err)) {
		gr_vtab__warn(q, si, "skipping %s: %s", cs->path,
			      err ? err : "cannot open");
		free(err);
		return 0;
	}
	q->segments_opened++;
	if (host && strcmp(gr_segment__info(s)->host, host) != 0) {
		gr_segment__close(s);
		return 0;
	}
	*out = s;
	return 1;
}

/* window_since(), window_until(): the --since/--until bounds in ns (as
 * ts), NULL where open.  A report needs them where a column other than ts
 * (a process's exit_ts) may lie past the window that cut events off. */
static void fn_window(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc, (void)argv;
	int64_t v = *(const int64_t *)sqlite3_user_data(ctx);
	if (v != INT64_MIN && v != INT64_MAX)
		sqlite3_result_int64(ctx, v);
}

int gr_vtab__register(sqlite3 *db, struct gr_qctx *q)
{
	int rc = sqlite3_create_module(db, "gpurec_events", &gr_vt_event_module, q);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "window_since", 0,
					     SQLITE_UTF8 | SQLITE_INNOCUOUS,
					     &q->since, fn_window, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "window_until", 0,
					     SQLITE_UTF8 | SQLITE_INNOCUOUS,
					     &q->until, fn_window, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module(db, "gpurec_segments",
					   &gr_vt_segments_module, q);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module(db, "gpurec_runs",
					   &gr_vt_runs_module, q);
	if (!q->warned && q->cat.nsegs &&
	    !(q->warned = calloc((size_t)q->cat.nsegs, 1)))
		return SQLITE_NOMEM;
	for (int t = 0; t < GR_NTABLES && rc == SQLITE_OK; t++) {
		if (gr_tables[t].flags & GR_TF_SUMMARY)
			continue; /* query/sumtab.c */
		char *sql = sqlite3_mprintf(
			"CREATE VIRTUAL TABLE \"%w\" USING %s(%s)",
			gr_tables[t].name,
			gr_tables[t].flags & GR_TF_EVENT ? "gpurec_events" :
			t == GR_T_runs ? "gpurec_runs" : "gpurec_segments",
			gr_tables[t].name);
		if (!sql)
			return SQLITE_NOMEM;
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
	return rc;
}
