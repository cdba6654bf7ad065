/* vtab.h - the event tables as SQLite virtual tables over segment files. */
#ifndef GR_VTAB_H
#define GR_VTAB_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

/* What every scan of one query shares: the segments and the window. */
struct gr_qctx {
	struct gr_catalog cat;
	int64_t since, until; /* inclusive; INT64_MIN / INT64_MAX: open */
	int has_pid;
	int64_t pid;
	const char *host;     /* only segments of this host, or NULL */
	FILE *warn;           /* warnings go here (stderr) */
	int warnings;
	uint8_t *warned;      /* per catalog segment: already warned */
	/* Asked between blocks by scans and walks: non-zero stops them
	 * (-EINTR; the statement fails with SQLITE_INTERRUPT).  NULL:
	 * never. */
	int (*stop)(void);
	/* Statistics, for tests and benchmarks. */
	uint64_t blocks_read, blocks_skipped, segments_opened;
	uint64_t coll_blocks_read; /* nccl blocks answered by their records */
};

/* Warns on q->warn that a segment (catalog index si, or -1) is skipped or
 * partly read, once per segment: "gpurec: warning: …; answering from the
 * other segments". */
void gr_vtab__warn(struct gr_qctx *q, int si, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Whether s, catalog segment si already open, may hold rows of a scan
 * of [lo, hi] on host (NULL: any), as gr_vtab__open_segment judges. */
int gr_vtab__may_match(const struct gr_qctx *q, int si, int64_t lo,
		       int64_t hi, const char *host,
		       const struct gr_segment *s);
/* Opens catalog segment si for a scan of [lo, hi] on host (NULL: any).
 * Returns 1 with *out set, or 0 where it cannot match (sealed segments
 * are judged by their manifest line, unopened) or cannot be opened
 * (warned). */
int gr_vtab__open_segment(struct gr_qctx *q, int si, int64_t lo, int64_t hi,
			  const char *host, struct gr_segment **out);

/* A walk of table that ended with rc < 0 (gr_evwalk__next()): -EINTR,
 * stopped (q->stop), is SQLITE_INTERRUPT; anything else is out of memory.
 * Sets *err (sqlite3_malloc'd) and returns the SQLite code. */
int gr_vtab__walk_error(int rc, const char *table, char **err);

/* How many threads a walk may use: GPUREC_SCAN_THREADS (1 to 64) where
 * set, else the CPUs this process may run on, at most 8 (1 with a SQLite
 * built without threads).  Returns 0 where the variable is not such a
 * number. */
int gr_vtab__walkers(void);

/* Cuts the catalog into at most n runs of consecutive segments holding
 * about equal shares of the events that a scan of [lo, hi] on q's host
 * may read (by the segments' manifest lines; a live segment counts as an
 * average sealed one): run i is segments [cut[i], cut[i + 1]).  cut has
 * n + 1 elements.  Returns the number of runs (1 to n). */
int gr_vtab__split(const struct gr_qctx *q, int64_t lo, int64_t hi, int n,
		   int *cut);

/* A table computed in C over the recording (memcpy_host.c,
 * nccl_fleet.c): its module's aux, the session and which of the module's
 * tables it is. */
struct gr_vtab_aux {
	struct gr_qctx *q;
	int t;
};

/* Creates module m under each of names[0..n), table t = its index, each
 * with a gr_vtab_aux of q (freed with db).  Returns SQLITE_OK or an
 * SQLite error code. */
int gr_vtab__create_modules(sqlite3 *db, const sqlite3_module *m,
			    const char *const *names, int n,
			    struct gr_qctx *q);

/* Declares a virtual table's columns from the schema. */
int gr_vtab__declare(sqlite3 *db, const struct gr_table *tab);

/* The modules (vt_event.c, vt_segments.c; sumtab.c has its own). */
extern const sqlite3_module gr_vt_event_module;
extern const sqlite3_module gr_vt_segments_module;
extern const sqlite3_module gr_vt_runs_module;

/* Creates one virtual table per table of the schema in db's main schema,
 * and the SQL functions window_since() and window_until() (the window's
 * bounds, NULL where open).  q must outlive db.  Returns SQLITE_OK or an
 * SQLite error code. */
int gr_vtab__register(sqlite3 *db, struct gr_qctx *q);

#endif
