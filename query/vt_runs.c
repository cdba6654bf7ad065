/* vt_runs.c - the `runs` table: one row per run of a recorder on each data
 * directory, from its manifest's start and stop lines (MANIFEST format 2;
 * a directory of format 1 has none, and no rows).
 *
 * A run is a start line and what follows it up to the next start.  It
 * ended "stopped" if a stop line follows, else "crashed" (killed, or the
 * host went down: its last line is the last thing known of it), except
 * the newest run of a directory whose writer is alive, "running".  What
 * happened between one run's end and the next's start was not recorded:
 * that is gap_ns, the hole a restart, an upgrade or a crash left.
 */
#include <stdlib.h>
#include <string.h>

#include "query/vtab.h"

struct run {
	const char *dir;
	const char *host;	/* from the run's seal lines, or NULL */
	int64_t run, pid, start, end, events, gap;
	const char *ended;
};

struct runcur {
	sqlite3_vtab_cursor base;
	struct run *r;
	int n, i;
};

struct runvtab {
	sqlite3_vtab base;
	struct gr_qctx *q;
};

static int rv_connect(sqlite3 *db, void *aux, int argc,
		      const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)argc, (void)argv, (void)err;
	int rc = gr_vtab__declare(db, &gr_tables[GR_T_runs]);
	if (rc != SQLITE_OK)
		return rc;
	struct runvtab *v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->q = aux;
	*out = &v->base;
	return SQLITE_OK;
}

static int rv_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static int rv_best_index(sqlite3_vtab *v, sqlite3_index_info *ii)
{
	(void)v;
	ii->estimatedCost = 100;
	return SQLITE_OK;
}

static int rv_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	(void)v;
	struct runcur *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int rv_close(sqlite3_vtab_cursor *cur)
{
	struct runcur *c = (struct runcur *)cur;
	free(c->r);
	sqlite3_free(c);
	return SQLITE_OK;
}

/* Ends run r (not yet ended) at line l, or at the last line before the
 * next start (crashed). */
static void run_end(struct run *r, const struct gr_manifest_line *last,
		    int stopped)
{
	r->ended = stopped ? "stopped" : "crashed";
	r->end = last && last->at >= 0 ? last->at : r->start;
	r->events = stopped && last ? last->events : -1;
}

/* Appends directory d's runs to c->r.  Returns 0 or -1 (no memory). */
static int dir_runs(struct runcur *c, const struct gr_qctx *q, int d)
{
	const struct gr_manifest *m = &q->cat.manifests[d];
	struct run *cur = NULL;
	const struct gr_manifest_line *last = NULL;
	int64_t prev_end = -1, nrun = 0;
	for (int i = 0; i < m->nl; i++) {
		const struct gr_manifest_line *l = &m->l[i];
		if (l->kind == GR_ML_START) {
			if (cur && !cur->ended) {
				run_end(cur, last, 0);
				prev_end = cur->end;
			}
			struct run *r = realloc(c->r, (size_t)(c->n + 1) *
							  sizeof(*r));
			if (!r)
				return -1;
			c->r = r;
			cur = &c->r[c->n++];
			*cur = (struct run){ .dir = q->cat.dirs[d],
					     .run = ++nrun, .pid = l->pid,
					     .start = l->at, .end = -1,
					     .events = -1,
					     .gap = prev_end < 0 ? -1 :
						    l->at - prev_end };
		} else if (cur && !cur->ended) {
			if (l->kind == GR_ML_SEAL && l->entry >= 0)
				cur->host = m->e[l->entry].host;
			if (l->kind == GR_ML_STOP) {
				run_end(cur, l, 1);
				prev_end = cur->end;
			}
		}
		if (l->at >= 0)
			last = l;
	}
	if (cur && !cur->ended) {
		if (gr_dir__writer_live(q->cat.dirs[d]) == 1)
			cur->ended = "running";
		else
			run_end(cur, last, 0);
	}
	return 0;
}

static int rv_filter(sqlite3_vtab_cursor *cur, int n, const char *s, int argc,
		     sqlite3_value **argv)
{
	struct runcur *c = (struct runcur *)cur;
	const struct gr_qctx *q = ((struct runvtab *)cur->pVtab)->q;
	(void)n, (void)s, (void)argc, (void)argv;
	free(c->r);
	c->r = NULL;
	c->n = c->i = 0;
	for (int d = 0; d < q->cat.ndirs; d++)
		if (dir_runs(c, q, d))
			return SQLITE_NOMEM;
	/* Runs that sealed nothing take their directory's host from a run
	 * that did; --host keeps only that host's. */
	for (int i = 0; i < c->n; i++)
		for (int j = 0; !c->r[i].host && j < c->n; j++)
			if (c->r[j].dir == c->r[i].dir)
				c->r[i].host = c->r[j].host;
	if (q->host) {
		int k = 0;
		for (int i = 0; i < c->n; i++)
			if (c->r[i].host && strcmp(c->r[i].host, q->host) == 0)
				c->r[k++] = c->r[i];
		c->n = k;
	}
	return SQLITE_OK;
}

static int rv_next(sqlite3_vtab_cursor *cur)
{
	((struct runcur *)cur)->i++;
	return SQLITE_OK;
}

static int rv_eof(sqlite3_vtab_cursor *cur)
{
	struct runcur *c = (struct runcur *)cur;
	return c->i >= c->n;
}

static void int_or_null(sqlite3_context *ctx, int64_t v)
{
	if (v >= 0)
		sqlite3_result_int64(ctx, v);
}

static int rv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	const struct runcur *c = (const struct runcur *)cur;
	const struct run *r = &c->r[c->i];
	switch (i) {
	case GR_runs_host:
		if (r->host)
			sqlite3_result_text(ctx, r->host, -1, SQLITE_TRANSIENT);
		break;
	case GR_runs_dir:
		sqlite3_result_text(ctx, r->dir, -1, SQLITE_TRANSIENT);
		break;
	case GR_runs_run:
		sqlite3_result_int64(ctx, r->run);
		break;
	case GR_runs_pid:
		int_or_null(ctx, r->pid);
		break;
	case GR_runs_start_ts:
		int_or_null(ctx, r->start);
		break;
	case GR_runs_end_ts:
		int_or_null(ctx, r->end);
		break;
	case GR_runs_ended:
		sqlite3_result_text(ctx, r->ended, -1, SQLITE_STATIC);
		break;
	case GR_runs_events:
		int_or_null(ctx, r->events);
		break;
	case GR_runs_gap_ns:
		int_or_null(ctx, r->gap);
		break;
	}
	return SQLITE_OK;
}

static int rv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct runcur *)cur)->i;
	return SQLITE_OK;
}

const sqlite3_module gr_vt_runs_module = {
	.xCreate = rv_connect,
	.xConnect = rv_connect,
	.xBestIndex = rv_best_index,
	.xDisconnect = rv_disconnect,
	.xDestroy = rv_disconnect,
	.xOpen = rv_open,
	.xClose = rv_close,
	.xFilter = rv_filter,
	.xNext = rv_next,
	.xEof = rv_eof,
	.xColumn = rv_column,
	.xRowid = rv_rowid,
};
