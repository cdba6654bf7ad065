/* sumtab.c - the summary tables (sum_api, sum_kernel, sum_memcpy,
 * sum_offcpu, sum_nccl, sum_launch_slots, sum_runq, sum_io) as SQLite
 * virtual tables: the rows store/summary.h keeps in each segment, exact
 * for any window.
 *
 * Per segment, for a window [lo, hi] (--since/--until and ts constraints):
 *   - a segment whose events all fall inside gives its whole-segment rows,
 *     unless the statement reads `minute`;
 *   - otherwise the minutes wholly inside the window give their minute
 *     rows, and the parts of the window that cut a minute are summarized
 *     from the raw blocks, with the same accumulator the writer used;
 *   - a segment with no summary table (none today; a copy made by another
 *     tool) is summarized from its raw blocks.
 * A text key compared with = or IN (`kernel IN (SELECT ...)`) is looked up
 * in each segment's dictionary and only stored rows with those ids are
 * read: a report that wants a few kernels per minute reads a few rows of
 * a day's millions.  SQLite checks every constraint again.
 * So sums, counts, minima and maxima equal those of the raw events over the
 * same window; only the rows are coarser.  A segment's summaries and blocks
 * are read inside one read transaction, so an open segment being written
 * meanwhile gives one consistent state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "query/sumtab.h"
#include "store/codec.h"
#include "store/scan.h"
#include "store/summary.h"

struct svtab {
	sqlite3_vtab base;
	struct gr_qctx *q;
	int t, kind;
	/* Output column roles, by schema column index. */
	int col_minute, col_pid, col_hist;
};

struct scur {
	sqlite3_vtab_cursor base;
	struct svtab *vt;
	int64_t lo, hi;
	int has_pid;
	int64_t pid;
	int want_minute;
	int si;                     /* catalog segment */
	struct gr_segment *seg;
	struct gr_sum *acc;
	uint32_t row;
	const struct gr_sum_ent *e; /* the current row */
	struct gr_buf blob;
	struct gr_scan *scan;       /* reads raw events */
	int eof;
	/* Text key filter (= or IN on a STR key column): key index, or -1;
	 * the texts, and their ids in the open segment. */
	int kf_key;
	int kf_n;
	char **kf_vals;
	int64_t *kf_ids;
};

static int kind_of(int t)
{
	return t == GR_T_sum_api ? GR_SUM_API :
	       t == GR_T_sum_kernel ? GR_SUM_KERNEL :
	       t == GR_T_sum_offcpu ? GR_SUM_OFFCPU :
	       t == GR_T_sum_nccl ? GR_SUM_NCCL :
	       t == GR_T_sum_launch_slots ? GR_SUM_SLOTS :
	       t == GR_T_sum_runq ? GR_SUM_RUNQ :
	       t == GR_T_sum_io ? GR_SUM_IO :
	       t == GR_T_sum_sync ? GR_SUM_SYNC : GR_SUM_MEMCPY;
}

static int st_connect(sqlite3 *db, void *aux, int argc,
		      const char *const *argv, sqlite3_vtab **out, char **err)
{
	int t = argc > 3 ? gr_table__find(argv[3]) : -1;
	if (t < 0 || !(gr_tables[t].flags & GR_TF_SUMMARY)) {
		*err = sqlite3_mprintf("no summary table %s",
				       argc > 3 ? argv[3] : "?");
		return SQLITE_ERROR;
	}
	int rc = gr_vtab__declare(db, &gr_tables[t]);
	if (rc != SQLITE_OK)
		return rc;
	struct svtab *vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->q = aux;
	vt->t = t;
	vt->kind = kind_of(t);
	vt->col_minute = gr_table__col(&gr_tables[t], "minute");
	vt->col_pid = gr_table__col(&gr_tables[t], "pid");
	vt->col_hist = -1;
	for (int i = 0; i < gr_tables[t].ncols; i++)
		if (gr_tables[t].cols[i].sum == GR_SS_HIST)
			vt->col_hist = i;
	*out = &vt->base;
	return SQLITE_OK;
}

static int st_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

/* idxStr: "m" if minute is read ("-" if not), "h" if the histogram (or
 * slot bitmap) is ("-" if not), then ";op" per argument: ts bounds
 * (">", "g" >=, "<", "l" <=, "=") and "p" (pid =); "k" a text key equal to
 * one value, "K" in a list (sqlite3_vtab_in), the key's index in idxNum. */
static int st_best_index(sqlite3_vtab *v, sqlite3_index_info *ii)
{
	struct svtab *vt = (struct svtab *)v;
	sqlite3_str *s = sqlite3_str_new(NULL);
	int argi = 0, keyed = 0;
	sqlite3_str_appendf(s, "%s%s", ii->colUsed >> vt->col_minute & 1 ?
				       "m" : "-",
			    vt->col_hist < 0 ||
			    ii->colUsed >> (vt->col_hist < 63 ? vt->col_hist : 63) & 1 ?
			    "h" : "-");
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		char op = 0;
		if (!c->usable)
			continue;
		if (c->iColumn == 0) {
			switch (c->op) {
			case SQLITE_INDEX_CONSTRAINT_GT: op = '>'; break;
			case SQLITE_INDEX_CONSTRAINT_GE: op = 'g'; break;
			case SQLITE_INDEX_CONSTRAINT_LT: op = '<'; break;
			case SQLITE_INDEX_CONSTRAINT_LE: op = 'l'; break;
			case SQLITE_INDEX_CONSTRAINT_EQ: op = '='; break;
			}
		} else if (c->iColumn == vt->col_pid &&
			   c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			op = 'p';
		} else if (c->op == SQLITE_INDEX_CONSTRAINT_EQ && !keyed &&
			   c->iColumn >= 0 &&
			   /* The dictionary is matched byte for byte: under
			    * another collation (NOCASE) rows it equals would
			    * never reach SQLite's own test. */
			   !sqlite3_stricmp(sqlite3_vtab_collation(ii, i),
					    "BINARY") &&
			   gr_tables[vt->t].cols[c->iColumn].type == GR_STR &&
			   gr_tables[vt->t].cols[c->iColumn].sum >= GR_SS_K0 &&
			   gr_tables[vt->t].cols[c->iColumn].sum <= GR_SS_K6) {
			/* All of an IN list in one xFilter call. */
			op = sqlite3_vtab_in(ii, i, 1) ? 'K' : 'k';
			keyed = 1;
			ii->idxNum = gr_tables[vt->t].cols[c->iColumn].sum -
				     GR_SS_K0;
		}
		if (!op)
			continue;
		ii->aConstraintUsage[i].argvIndex = ++argi;
		ii->aConstraintUsage[i].omit = 0; /* SQLite checks again */
		sqlite3_str_appendf(s, "%c", op);
	}
	char *str = sqlite3_str_finish(s);
	if (!str)
		return SQLITE_NOMEM;
	ii->idxStr = str;
	ii->needToFreeIdxStr = 1;
	ii->estimatedRows = 100000 / (argi + 1);
	ii->estimatedCost = (double)ii->estimatedRows;
	return SQLITE_OK;
}

static int st_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct scur *c = calloc(1, sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	c->vt = (struct svtab *)v;
	c->kf_key = -1;
	if (!(c->acc = gr_sum__new()) || !(c->scan = gr_scan__new())) {
		gr_sum__free(c->acc);
		free(c);
		return SQLITE_NOMEM;
	}
	*out = &c->base;
	return SQLITE_OK;
}

static void close_segment(struct scur *c)
{
	if (!c->seg)
		return;
	gr_segment__read_end(c->seg);
	gr_segment__close(c->seg);
	c->seg = NULL;
}

static void kf_clear(struct scur *c)
{
	for (int i = 0; i < c->kf_n; i++)
		free(c->kf_vals[i]);
	free(c->kf_vals);
	free(c->kf_ids);
	c->kf_vals = NULL;
	c->kf_ids = NULL;
	c->kf_n = 0;
	c->kf_key = -1;
}

/* Adds a text value to the key filter; other types are left to SQLite's
 * own check (no filter), so a filter is kept only if every value is text. */
static int kf_add(struct scur *c, sqlite3_value *v, int *untyped)
{
	if (sqlite3_value_type(v) != SQLITE_TEXT) {
		/* NULL matches nothing under = and IN: no need to keep it. */
		if (sqlite3_value_type(v) != SQLITE_NULL)
			*untyped = 1;
		return 0;
	}
	char **vals = realloc(c->kf_vals, (size_t)(c->kf_n + 1) *
				  sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	c->kf_vals = vals;
	if (!(vals[c->kf_n] = strdup((const char *)sqlite3_value_text(v))))
		return -ENOMEM;
	c->kf_n++;
	return 0;
}

static int st_close(sqlite3_vtab_cursor *cur)
{
	struct scur *c = (struct scur *)cur;
	close_segment(c);
	kf_clear(c);
	gr_sum__free(c->acc);
	gr_scan__free(c->scan);
	gr_buf__free(&c->blob);
	free(c);
	return SQLITE_OK;
}

/* Summarizes table t's raw events of the open segment with ts in [a, b]
 * into the accumulator.  Returns 0 or -ENOMEM; unreadable blocks warn. */
/* The id of string str in dictionary d, or 0 where it has none. */
static int64_t dict_id(const struct gr_dict *d, const char *str)
{
	size_t len = strlen(str);
	for (uint32_t id = 1; d && id <= d->n; id++)
		if (d->s[id] && d->len[id] == len && !memcmp(d->s[id], str, len))
			return id;
	return 0;
}

/* The bits of tab's columns named in names (those it has). */
static uint64_t cols_mask(const struct gr_table *tab,
			  const char *const *names, size_t n)
{
	uint64_t mask = 0;
	for (size_t k = 0; k < n; k++) {
		int col = gr_table__col(tab, names[k]);
		if (col >= 0)
			mask |= 1ull << col;
	}
	return mask;
}

static int add_raw(struct scur *c, int t, int64_t a, int64_t b)
{
	struct gr_qctx *q = c->vt->q;
	const char *path = gr_segment__info(c->seg)->path;
	const struct gr_table *tab = &gr_tables[t];
	static const char *const need[] = {
		"ts", "pid", "dur", "api", "ret", "kernel", "grid_x", "grid_y",
		"grid_z", "block_x", "block_y", "block_z", "kind", "async",
		"bytes",
	};
	/* sum_offcpu's keys; comm is in every table, so only offcpu's
	 * blocks decode it. */
	static const char *const need_offcpu[] = { "tid", "state", "stack",
						   "comm" };
	uint64_t mask = cols_mask(tab, need, sizeof(need) / sizeof(need[0]));
	static const char *const need_nccl[] = { "comm_id", "rank", "op",
						 "nranks" };
	if (t == GR_T_offcpu)
		mask |= cols_mask(tab, need_offcpu, sizeof(need_offcpu) /
						    sizeof(need_offcpu[0]));
	if (t == GR_T_nccl)
		mask |= cols_mask(tab, need_nccl, sizeof(need_nccl) /
						  sizeof(need_nccl[0]));
	/* cuda_graph feeds sum_launch_slots by its rows of op launch. */
	int64_t launch_op = 0;
	if (t == GR_T_cuda_graph) {
		static const char *const need_op[] = { "op" };
		mask |= cols_mask(tab, need_op, 1);
		launch_op = dict_id(gr_segment__dict(c->seg), "launch");
	}
	/* sum_runq's and sum_io's keys (store/summary.c, derive_keys). */
	static const char *const need_lat[] = { "tid", "comm", "dev", "disk",
						"op", "syscall" };
	/* sum_sync's thread. */
	if (t == GR_T_cuda_sync && c->vt->kind == GR_SUM_SYNC)
		mask |= cols_mask(tab, need_offcpu, 1);
	if (t == GR_T_runq || t == GR_T_block_io || t == GR_T_file_io)
		mask |= cols_mask(tab, need_lat, sizeof(need_lat) /
						 sizeof(need_lat[0]));
	char *err = NULL;
	if (gr_scan__start(c->scan, c->seg, t, a, b, mask, &err)) {
		gr_vtab__warn(q, c->si, "%s: %s", path,
			      err ? err : "cannot read");
		free(err);
		return 0;
	}
	for (;;) {
		struct gr_scan_block blk;
		if (q->stop && q->stop())
			return -EINTR;
		int rc = gr_scan__next(c->scan, &blk, &err);
		if (rc == 0)
			return 0;
		if (rc == -ENOMEM)
			return rc;
		if (rc == -EPROTO || rc == -EILSEQ) {
			gr_vtab__warn(q, c->si, "%s: block %lld %s, skipped",
				      path, (long long)blk.id,
				      rc == -EPROTO ? "is malformed" :
				      "does not decode");
			free(err);
			err = NULL;
			continue;
		}
		if (rc < 0) {
			gr_vtab__warn(q, rc == -EBADMSG ? -1 : c->si,
				      "%s: %s%s", path, err ? err : "?",
				      rc == -EBADMSG ? ", skipped" : "");
			free(err);
			err = NULL;
			if (rc == -EBADMSG)
				continue;
			return 0;
		}
		struct gr_sum_rows rows = { .t = t, .n = blk.nrows,
					    .launch_op = launch_op };
		for (int col = 0; col < tab->ncols; col++) {
			rows.v[col] = blk.v[col];
			rows.nulls[col] = blk.nulls[col];
		}
		q->blocks_read++;
		if (gr_sum__add(c->acc, &rows, a, b,
				c->has_pid ? &c->pid : NULL, 0,
				1u << c->vt->kind))
			return -ENOMEM;
	}
}

/* The tables whose raw events feed kind. */
static int add_raw_kind(struct scur *c, int64_t a, int64_t b)
{
	if (a > b)
		return 0;
	if (c->vt->kind == GR_SUM_KERNEL)
		return add_raw(c, GR_T_cuda_kernel, a, b);
	if (c->vt->kind == GR_SUM_MEMCPY)
		return add_raw(c, GR_T_cuda_memcpy, a, b);
	if (c->vt->kind == GR_SUM_OFFCPU)
		return add_raw(c, GR_T_offcpu, a, b);
	if (c->vt->kind == GR_SUM_NCCL)
		return add_raw(c, GR_T_nccl, a, b);
	if (c->vt->kind == GR_SUM_SLOTS) {
		int rc = add_raw(c, GR_T_cuda_kernel, a, b);
		return rc ? rc : add_raw(c, GR_T_cuda_graph, a, b);
	}
	if (c->vt->kind == GR_SUM_RUNQ)
		return add_raw(c, GR_T_runq, a, b);
	if (c->vt->kind == GR_SUM_SYNC)
		return add_raw(c, GR_T_cuda_sync, a, b);
	if (c->vt->kind == GR_SUM_IO) {
		int rc = add_raw(c, GR_T_block_io, a, b);
		return rc ? rc : add_raw(c, GR_T_file_io, a, b);
	}
	for (int t = 0; t < GR_NTABLES; t++) {
		int second, rc;
		if (gr_sum_kinds(t, &second) && (rc = add_raw(c, t, a, b)))
			return rc;
	}
	return 0;
}

/* Adds the stored rows of the open segment's summary table with minute in
 * [m0, m1].  Returns the number of rows, or -ENOMEM. */
static int add_stored(struct scur *c, int64_t m0, int64_t m1)
{
	const char *path = gr_segment__info(c->seg)->path;
	char *err = NULL;
	int malformed, nids = 0;
	if (c->kf_key >= 0) {
		/* The filter's texts as this segment's ids: none there, no
		 * stored row can match. */
		const struct gr_dict *d = gr_segment__dict(c->seg);
		for (int i = 0; i < c->kf_n; i++) {
			int64_t id = dict_id(d, c->kf_vals[i]);
			if (id)
				c->kf_ids[nids++] = id;
		}
		if (!nids)
			return 0;
	}
	int rc = gr_sum__load_keyed(c->acc, c->seg, c->vt->kind, m0, m1,
				    c->has_pid ? &c->pid : NULL, c->kf_key,
				    c->kf_ids, nids, &malformed, &err);
	if (rc == -EIO) {
		gr_vtab__warn(c->vt->q, c->si, "%s: summaries: %s", path,
			      err ? err : "?");
		free(err);
		return 0;
	}
	for (int i = 0; i < malformed; i++)
		gr_vtab__warn(c->vt->q, c->si, "%s: a summary histogram is "
			      "malformed", path);
	return rc;
}

/* The open segment's event span, from its blocks. */
static void span_of(struct gr_segment *s, int64_t *s0, int64_t *s1)
{
	int64_t events;
	char *err = NULL;
	if (gr_segment__span(s, s0, s1, &events, &err) <= 0) {
		*s0 = INT64_MIN;
		*s1 = INT64_MAX;
	}
	free(err);
}

static int64_t floor_minute(int64_t ts)
{
	return ts - ((ts % GR_SUM_MINUTE_NS) + GR_SUM_MINUTE_NS) %
		    GR_SUM_MINUTE_NS;
}

/* Fills the accumulator from one segment (see the header). */
static int load_segment(struct scur *c)
{
	const int64_t M = GR_SUM_MINUTE_NS;
	int64_t lo = c->lo, hi = c->hi, s0, s1;
	int rc;
	span_of(c->seg, &s0, &s1);
	if (s0 > hi || s1 < lo)
		return 0;
	if (!gr_sum__stored(c->seg, c->vt->kind))
		return add_raw_kind(c, lo, hi);
	/* A sealed segment has whole-segment rows (one written by an older
	 * gpurec, or sealed after a crash, may not: minute rows then). */
	if (!c->want_minute && c->vt->kind != GR_SUM_SLOTS &&
	    s0 >= lo && s1 <= hi &&
	    gr_segment__info(c->seg)->sealed &&
	    (rc = add_stored(c, GR_SUM_SEGMENT, GR_SUM_SEGMENT)))
		return rc < 0 ? rc : 0;
	/* Minute rows start at 0 (GR_SUM_SEGMENT is -1): times before 1970
	 * come from raw events. */
	if (lo < 0) {
		if ((rc = add_raw_kind(c, lo, hi < -1 ? hi : -1)) || hi < 0)
			return rc;
		lo = 0;
	}
	if (lo > INT64_MAX - M || (hi != INT64_MAX && hi - M + 1 < 0))
		return add_raw_kind(c, lo, hi);
	/* Whole minutes inside [lo, hi]: starts m0..m1. */
	int64_t m0 = (lo + M - 1) / M * M;
	int64_t m1 = hi == INT64_MAX ? INT64_MAX : floor_minute(hi - M + 1);
	if (m0 > m1)
		return add_raw_kind(c, lo, hi); /* no whole minute */
	if ((rc = add_stored(c, m0, m1)) < 0)
		return rc;
	if (lo < m0 && (rc = add_raw_kind(c, lo, m0 - 1)))
		return rc;
	if (m1 != INT64_MAX && m1 + M <= hi)
		rc = add_raw_kind(c, m1 + M, hi);
	return rc;
}

/* Steps to the next segment with rows.  Returns 1, 0 at the end, or
 * -ENOMEM. */
static int next_segment(struct scur *c)
{
	struct gr_qctx *q = c->vt->q;
	char *err = NULL;
	/* Closed at each step: a segment with no entry (for this pid) is
	 * passed over, and must not be leaked when the next one opens. */
	while (close_segment(c), ++c->si < q->cat.nsegs) {
		if (!gr_vtab__open_segment(q, c->si, c->lo, c->hi, q->host,
					   &c->seg))
			continue;
		struct gr_segment *s = c->seg;
		if (gr_segment__load_dict(s, &err)) {
			gr_vtab__warn(q, c->si, "skipping %s: dictionary: %s",
				      gr_segment__info(s)->path, err);
			free(err);
			close_segment(c);
			continue;
		}
		gr_segment__read_begin(s);
		gr_sum__reset(c->acc);
		int rc = load_segment(c);
		if (rc)
			return rc;
		if (gr_sum__count(c->acc))
			return 1;
	}
	return 0;
}

/* Moves to the next entry of the table's kind, across segments. */
static int advance(struct scur *c)
{
	for (;;) {
		if (c->seg) {
			while (c->row < gr_sum__count(c->acc)) {
				const struct gr_sum_ent *e =
					gr_sum__at(c->acc, c->row++);
				if (e->kind == c->vt->kind) {
					c->e = e;
					return SQLITE_OK;
				}
			}
		}
		/* Ctrl-C or the deadline, between segments (a segment's
		 * entries come in one call, its raw blocks with them). */
		if (c->vt->q->stop && c->vt->q->stop())
			return SQLITE_INTERRUPT;
		int rc = next_segment(c);
		if (rc < 0)
			return rc == -EINTR ? SQLITE_INTERRUPT : SQLITE_NOMEM;
		if (rc == 0) {
			c->eof = 1;
			return SQLITE_OK;
		}
		c->row = 0;
	}
}

static int st_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
		     int argc, sqlite3_value **argv)
{
	struct scur *c = (struct scur *)cur;
	struct gr_qctx *q = c->vt->q;
	close_segment(c);
	c->si = -1;
	c->eof = 0;
	c->row = 0;
	c->lo = q->since;
	c->hi = q->until;
	c->has_pid = q->has_pid;
	c->pid = q->pid;
	c->want_minute = idxStr[0] == 'm';
	gr_sum__no_hist(c->acc, idxStr[1] != 'h');
	kf_clear(c);
	for (int i = 0; i < argc && idxStr[2 + i]; i++) {
		sqlite3_value *v = argv[i];
		char op = idxStr[2 + i];
		if (op == 'k' || op == 'K') {
			int untyped = 0, rc = 0;
			if (op == 'k') {
				rc = kf_add(c, v, &untyped);
			} else {
				sqlite3_value *x;
				int r = sqlite3_vtab_in_first(v, &x);
				for (; !rc && r == SQLITE_OK && x;
				     r = sqlite3_vtab_in_next(v, &x))
					rc = kf_add(c, x, &untyped);
				if (r != SQLITE_OK && r != SQLITE_DONE)
					untyped = 1;
			}
			if (rc)
				return SQLITE_NOMEM;
			if (untyped) {
				kf_clear(c);
				continue;
			}
			if (!c->kf_n) { /* = NULL, IN () */
				c->eof = 1;
				return SQLITE_OK;
			}
			c->kf_key = idxNum;
			if (!(c->kf_ids = malloc((size_t)c->kf_n *
						 sizeof(*c->kf_ids))))
				return SQLITE_NOMEM;
			continue;
		}
		if (sqlite3_value_type(v) != SQLITE_INTEGER) {
			/* A REAL or TEXT bound: let SQLite decide, but an
			 * exact NULL matches nothing. */
			if (sqlite3_value_type(v) == SQLITE_NULL) {
				c->eof = 1;
				return SQLITE_OK;
			}
			continue;
		}
		int64_t x = sqlite3_value_int64(v);
		switch (op) {
		case '>': /* ts > x: from x + 1 */
			if (x == INT64_MAX)
				c->eof = 1;
			else if (x + 1 > c->lo)
				c->lo = x + 1;
			break;
		case 'g':
			if (x > c->lo)
				c->lo = x;
			break;
		case '<': /* ts < x: to x - 1 */
			if (x == INT64_MIN)
				c->eof = 1;
			else if (x - 1 < c->hi)
				c->hi = x - 1;
			break;
		case 'l':
			if (x < c->hi)
				c->hi = x;
			break;
		case '=':
			if (x > c->lo)
				c->lo = x;
			if (x < c->hi)
				c->hi = x;
			break;
		case 'p':
			if (c->has_pid && c->pid != x)
				c->eof = 1;
			c->has_pid = 1;
			c->pid = x;
			break;
		}
	}
	if (c->eof || c->lo > c->hi) {
		c->eof = 1;
		return SQLITE_OK;
	}
	return advance(c);
}

static int st_next(sqlite3_vtab_cursor *cur)
{
	return advance((struct scur *)cur);
}

static int st_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct scur *)cur)->eof;
}

static void result_str(struct scur *c, sqlite3_context *ctx, int64_t id,
		       int null)
{
	uint32_t len;
	const char *str = null ? NULL :
		gr_dict__str(gr_segment__dict(c->seg), id, &len);
	if (!str)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_text(ctx, str, (int)len, SQLITE_TRANSIENT);
}

/* Column i of the current entry, as tables.def declares it (enum
 * gr_sum_src). */
static int st_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct scur *c = (struct scur *)cur;
	const struct gr_sum_ent *e = c->e;
	const struct gr_column *col = &gr_tables[c->vt->t].cols[i];

	switch (col->sum) {
	case GR_SS_TS_MIN: sqlite3_result_int64(ctx, e->ts_min); break;
	case GR_SS_TS_MAX: sqlite3_result_int64(ctx, e->ts_max); break;
	case GR_SS_HOST:
		sqlite3_result_text(ctx, gr_segment__info(c->seg)->host, -1,
				    SQLITE_TRANSIENT);
		break;
	case GR_SS_MINUTE:
		if (e->minute == GR_SUM_SEGMENT)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, e->minute);
		break;
	case GR_SS_PID: sqlite3_result_int64(ctx, e->pid); break;
	case GR_SS_K0: case GR_SS_K1: case GR_SS_K2: case GR_SS_K3:
	case GR_SS_K4: case GR_SS_K5: case GR_SS_K6: {
		int k = col->sum - GR_SS_K0, null = e->knull >> k & 1;
		if (col->type == GR_STR)
			result_str(c, ctx, e->k[k], null);
		else if (null)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, e->k[k]);
		break;
	}
	case GR_SS_N: sqlite3_result_int64(ctx, e->n); break;
	case GR_SS_DUR_SUM: sqlite3_result_int64(ctx, e->dur_sum); break;
	case GR_SS_DUR_MIN: sqlite3_result_int64(ctx, e->dur_min); break;
	case GR_SS_DUR_MAX: sqlite3_result_int64(ctx, e->dur_max); break;
	case GR_SS_BYTES: sqlite3_result_int64(ctx, e->bytes); break;
	case GR_SS_ERRORS: sqlite3_result_int64(ctx, e->errors); break;
	case GR_SS_DUR_SQ: {
		uint8_t q[16];
		unsigned __int128 v = e->dur_sq;
		if (e->no_sq) {
			sqlite3_result_null(ctx);
			break;
		}
		for (int b = 0; b < 16; b++, v >>= 8)
			q[b] = (uint8_t)v;
		sqlite3_result_blob(ctx, q, sizeof(q), SQLITE_TRANSIENT);
		break;
	}
	case GR_SS_HIST:
		if (e->kind == GR_SUM_SLOTS) {
			if (e->slots)
				sqlite3_result_blob(ctx, e->slots,
						    GR_SUM_SLOT_BYTES,
						    SQLITE_TRANSIENT);
			else
				sqlite3_result_zeroblob(ctx,
							GR_SUM_SLOT_BYTES);
			break;
		}
		c->blob.len = 0;
		if (gr_hist__encode(&e->h, &c->blob))
			return SQLITE_NOMEM;
		sqlite3_result_blob(ctx, c->blob.p, (int)c->blob.len,
				    SQLITE_TRANSIENT);
		break;
	case GR_SS_NONE:
		sqlite3_result_null(ctx);
		break;
	}
	return SQLITE_OK;
}

static int st_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct scur *c = (struct scur *)cur;
	*rowid = ((sqlite3_int64)c->si << 32) | c->row;
	return SQLITE_OK;
}

static sqlite3_module summary_module = {
	.iVersion = 0,
	.xCreate = st_connect,
	.xConnect = st_connect,
	.xBestIndex = st_best_index,
	.xDisconnect = st_disconnect,
	.xDestroy = st_disconnect,
	.xOpen = st_open,
	.xClose = st_close,
	.xFilter = st_filter,
	.xNext = st_next,
	.xEof = st_eof,
	.xColumn = st_column,
	.xRowid = st_rowid,
};

int gr_sumtab__register(sqlite3 *db, struct gr_qctx *q)
{
	int rc = sqlite3_create_module(db, "gpurec_summary", &summary_module,
				       q);
	for (int t = 0; t < GR_NTABLES && rc == SQLITE_OK; t++) {
		if (!(gr_tables[t].flags & GR_TF_SUMMARY))
			continue;
		char *sql = sqlite3_mprintf(
			"CREATE VIRTUAL TABLE \"%w\" USING gpurec_summary(%s)",
			gr_tables[t].name, gr_tables[t].name);
		if (!sql)
			return SQLITE_NOMEM;
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
	return rc;
}
