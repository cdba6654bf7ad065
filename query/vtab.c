/* vtab.c - the recording as SQLite virtual tables: what the modules share.
 *
 * Each table of the schema becomes a virtual table: event tables scan
 * segment blocks (vt_event.c, with grouped emission in vt_grouped.c),
 * summary tables read the rows kept beside them (sumtab.c), and
 * `segments` lists the files (vt_segments.c).  This file registers them
 * and holds what they share: the warning that names a skipped segment
 * and the opening of a catalog segment for a window; and the SQL
 * functions over the recording as a whole (the window's bounds, an event
 * table's row count).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query/vtab.h"
#include "store/scan.h"

/* Walks of disjoint segments may warn from threads of their own. */
static pthread_mutex_t warn_mu = PTHREAD_MUTEX_INITIALIZER;

void gr_vtab__warn(struct gr_qctx *q, int si, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&warn_mu);
	if (si >= 0 && q->warned) {
		if (q->warned[si]) {
			pthread_mutex_unlock(&warn_mu);
			return;
		}
		q->warned[si] = 1;
	}
	q->warnings++;
	fprintf(q->warn, "gpurec: warning: ");
	va_start(ap, fmt);
	vfprintf(q->warn, fmt, ap);
	va_end(ap);
	fprintf(q->warn, "; answering from the other segments\n");
	pthread_mutex_unlock(&warn_mu);
}

int gr_vtab__create_modules(sqlite3 *db, const sqlite3_module *m,
			    const char *const *names, int n,
			    struct gr_qctx *q)
{
	int rc = SQLITE_OK;
	for (int t = 0; rc == SQLITE_OK && t < n; t++) {
		struct gr_vtab_aux *ax = sqlite3_malloc(sizeof(*ax));
		if (!ax)
			return SQLITE_NOMEM;
		ax->q = q;
		ax->t = t;
		/* The destructor frees ax, also when this fails. */
		rc = sqlite3_create_module_v2(db, names[t], m, ax,
					      sqlite3_free);
	}
	return rc;
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
	__atomic_add_fetch(&q->segments_opened, 1, __ATOMIC_RELAXED);
	if (host && strcmp(gr_segment__info(s)->host, host) != 0) {
		gr_segment__close(s);
		return 0;
	}
	*out = s;
	return 1;
}

int gr_vtab__walk_error(int rc, const char *table, char **err)
{
	if (rc == -EINTR) {
		*err = sqlite3_mprintf("interrupted");
		return SQLITE_INTERRUPT;
	}
	*err = sqlite3_mprintf("out of memory reading %s", table);
	return SQLITE_NOMEM;
}

/* How many walkers: GPUREC_SCAN_THREADS (1 to 64) where set, else the
 * CPUs this process may run on, at most 8 (1 with a SQLite built without
 * threads).  Returns 0 where the variable is not such a number. */
int gr_vtab__walkers(void)
{
	const char *e = getenv("GPUREC_SCAN_THREADS");
	char *end;
	long n;

	if (e && *e) {
		n = strtol(e, &end, 10);
		if (*end || n < 1 || n > 64)
			return 0;
	} else {
		cpu_set_t cpus;
		n = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ?
		    CPU_COUNT(&cpus) : sysconf(_SC_NPROCESSORS_ONLN);
		n = n < 1 ? 1 : n > 8 ? 8 : n;
	}
	/* SQLite's allocator, which every walker uses, needs its mutexes. */
	return sqlite3_threadsafe() ? (int)n : 1;
}

int gr_vtab__split(const struct gr_qctx *q, int64_t lo, int64_t hi, int n,
		   int *cut)
{
	double total = 0, sealed = 0, open = 0;
	int nsealed = 0;

	for (int si = 0; si < q->cat.nsegs; si++) {
		const struct gr_catalog_seg *cs = &q->cat.segs[si];
		if (!manifest_may_match(q, si, lo, hi, q->host))
			continue;
		if (cs->sealed) {
			sealed += (double)cs->m->events;
			nsealed++;
		} else {
			open++;
		}
	}
	/* A live segment has no manifest line: as heavy as a sealed one on
	 * average (1 where there is none). */
	double live = nsealed ? sealed / nsealed : 1;
	total = sealed + open * live;
	int runs = 0;
	double acc = 0;
	cut[0] = 0;
	for (int si = 0; si < q->cat.nsegs && runs < n - 1; si++) {
		const struct gr_catalog_seg *cs = &q->cat.segs[si];
		if (!manifest_may_match(q, si, lo, hi, q->host))
			continue;
		acc += cs->sealed ? (double)cs->m->events : live;
		/* Cut after si once the runs so far hold their shares, if
		 * events are left for the next. */
		if (acc >= total * (runs + 1) / n && acc < total &&
		    si + 1 < q->cat.nsegs)
			cut[++runs] = si + 1;
	}
	cut[++runs] = q->cat.nsegs;
	return runs;
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

/* Decodes table t's blocks of s overlapping [at_lo, at_hi] (skipping
 * those whose ids are in seen[0..*nseen), adding the others there) and
 * adds the rows that the window [lo, hi] and --pid let through to *rows.
 * Returns 0, or -ENOMEM; a bad block or segment is warned about. */
static int count_rows(struct gr_qctx *q, int si, struct gr_segment *s,
		      struct gr_scan *sc, int t, int64_t at_lo, int64_t at_hi,
		      int64_t lo, int64_t hi, int64_t **seen, int *nseen,
		      int64_t *rows)
{
	const char *path = gr_segment__info(s)->path;
	/* ts only where the window has an end: its decoding is the cost. */
	int windowed = lo != INT64_MIN || hi != INT64_MAX;
	uint64_t mask = (windowed ? 1ull << GR_EV_ts : 0) |
			(q->has_pid ? 1ull << GR_EV_pid : 0);
	struct gr_scan_block b;
	char *err = NULL;
	int rc = gr_scan__start(sc, s, t, at_lo, at_hi, mask, &err);
	while (rc == 0 && (rc = gr_scan__next(sc, &b, &err)) != 0) {
		if (rc == -ENOMEM || rc == -EIO || rc == -EBUSY)
			break;
		if (rc < 0) {
			/* As the table's scan does: a bad block is skipped
			 * with a warning, a read error ends the segment. */
			gr_vtab__warn(q, -1, "%s: %s, skipped", path,
				      err ? err : "a block does not decode");
			free(err);
			err = NULL;
			rc = 0;
			continue;
		}
		rc = 0;
		int dup = 0;
		for (int i = 0; i < *nseen && !dup; i++)
			dup = (*seen)[i] == b.id;
		if (dup)
			continue;
		int64_t *grown = realloc(*seen, (size_t)(*nseen + 1) *
					 sizeof(**seen));
		if (!grown)
			return -ENOMEM;
		*seen = grown;
		(*seen)[(*nseen)++] = b.id;
		const int64_t *ts = b.v[GR_EV_ts], *pid = b.v[GR_EV_pid];
		const uint8_t *pn = b.nulls[GR_EV_pid];
		if (windowed && !ts)
			continue;
		for (uint32_t r = 0; r < b.nrows; r++) {
			if (windowed && (ts[r] < lo || ts[r] > hi))
				continue;
			if (q->has_pid &&
			    (!pid || (pn && (pn[r >> 3] >> (r & 7)) & 1) ||
			     pid[r] != q->pid))
				continue;
			(*rows)++;
		}
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		gr_vtab__warn(q, si, "%s: %s", path, err ? err : "cannot read");
		free(err);
	}
	return 0;
}

/* table_rows(name): the rows of event table name (not a union) that
 * SELECT count(*) FROM name returns under --since/--until, --host and
 * --pid, without walking them: blocks wholly inside the window are
 * counted from their headers, and only those across its ends are
 * decoded (all of them under --pid).  count(*) takes seconds per busy
 * hour; this, milliseconds per segment.  Blocks counted from their
 * headers are not checksummed: a damaged one counts, where count(*)
 * skips it with a warning (gpurec verify names it). */
static void fn_table_rows(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct gr_qctx *q = sqlite3_user_data(ctx);
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	int t = name ? gr_table__find(name) : -1;
	(void)argc;
	if (t < 0 || !(gr_tables[t].flags & GR_TF_EVENT) ||
	    (gr_tables[t].flags & GR_TF_UNION_CUDA)) {
		char *msg = sqlite3_mprintf("table_rows: %s is not a stored "
					    "event table", name ? name : "NULL");
		sqlite3_result_error(ctx, msg ? msg : "table_rows", -1);
		sqlite3_free(msg);
		return;
	}
	struct gr_scan *sc = gr_scan__new();
	int64_t lo = q->since, hi = q->until, rows = 0, *seen = NULL;
	int rc = sc ? 0 : -ENOMEM;
	for (int si = 0; si < q->cat.nsegs && rc == 0; si++) {
		struct gr_segment *s;
		int nseen = 0;
		if (q->stop && q->stop()) {
			rc = -EINTR; /* Ctrl-C, the deadline */
			break;
		}
		if (!gr_vtab__open_segment(q, si, lo, hi, q->host, &s))
			continue;
		if (q->has_pid) {
			rc = count_rows(q, si, s, sc, t, lo, hi, lo, hi, &seen,
					&nseen, &rows);
			gr_segment__close(s);
			continue;
		}
		int64_t inside;
		char *err = NULL;
		if (gr_segment__rows_inside(s, gr_tables[t].name, lo, hi,
					    &inside, &err)) {
			gr_vtab__warn(q, si, "%s: %s", gr_segment__info(s)->path,
				      err);
			free(err);
			gr_segment__close(s);
			continue;
		}
		rows += inside;
		/* The blocks across an end of the window: over lo - 1 (they
		 * start before it) and over hi + 1 (they end after it); one
		 * across both is counted once. */
		if (lo != INT64_MIN)
			rc = count_rows(q, si, s, sc, t, lo - 1, lo - 1, lo, hi,
					&seen, &nseen, &rows);
		if (rc == 0 && hi != INT64_MAX)
			rc = count_rows(q, si, s, sc, t, hi + 1, hi + 1, lo, hi,
					&seen, &nseen, &rows);
		gr_segment__close(s);
	}
	free(seen);
	gr_scan__free(sc);
	if (rc == -EINTR)
		sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
	else if (rc)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_int64(ctx, rows);
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
		rc = sqlite3_create_function(db, "table_rows", 1,
					     SQLITE_UTF8 | SQLITE_INNOCUOUS,
					     q, fn_table_rows, NULL, NULL);
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
