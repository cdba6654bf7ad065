/* export.h - `gpurec export`: the recording, decoded, for other tools.
 *
 * The command checks its options with gr_export__prepare() before it opens
 * the recording (so a bad table or an existing file fails at once), then
 * gr_export__run() reads the virtual tables of a connection and writes.
 */
#ifndef GR_QUERY_EXPORT_H
#define GR_QUERY_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "schema/schema.h"

enum gr_export_format {
	GR_EXPORT_PERFETTO,	/* one Chrome/Perfetto JSON trace */
	GR_EXPORT_CSV,		/* one RFC 4180 file per table */
	GR_EXPORT_JSONL,	/* one JSON-lines file per table */
	GR_EXPORT_SQLITE,	/* one plain SQLite database */
};

struct gr_export {
	enum gr_export_format fmt;
	const char *out;	/* -o: a file, a directory (csv, jsonl) or - */
	int force;		/* replace files that exist */
	int tables[GR_NTABLES];	/* table ids, in the order given */
	int ntables;
	int to_dir;		/* csv, jsonl: out is a directory of TABLE.ext */
	char *const *data;	/* the --data directories read: never written */
	int ndata;
	/* What the export was asked, for the sqlite export's provenance. */
	int64_t since, until;	/* the window; INT64_MIN, INT64_MAX: open */
	int has_pid;		/* --pid given ... */
	int64_t pid;		/* ... and its value */
	const char *host;	/* --host, or NULL */
	char *const *cmdline;	/* the command line as typed, in order */
	int ncmdline;
	FILE *msg;		/* progress and the summary line; NULL: none */
	struct gr_export_progress *prog; /* filled by gr_export__run() */
};

/* What an export has done so far: the progress line's and the summary
 * line's counts. */
struct gr_export_progress {
	FILE *tty;		/* where the progress line is drawn, or NULL */
	uint64_t rows;		/* rows read and written so far */
	uint64_t bytes;		/* bytes of the files placed so far */
	int64_t nsegs;		/* segments the window reads */
	uint64_t total;		/* rows to write, counted first on a tty */
	int tables_done;
	int ntables;		/* tables to export */
	int64_t lo, hi;		/* the first and last ts of the segments read,
				 * within the window */
	int64_t t0;		/* monotonic ns when the export began */
	int64_t next_draw;	/* monotonic ns of the next redraw */
	int drawn;		/* a progress line is on the terminal */
};

/* Looks up an export format by name ("perfetto", "csv", "jsonl",
 * "sqlite"; case-insensitive).  Returns 0, or -EINVAL for another name. */
int gr_export_format__parse(const char *name, enum gr_export_format *out);

/* Fills x->tables from @names (@n of them; none: every event table) and
 * decides the layout from x->fmt, x->out and the file system: refuses a
 * file that exists unless x->force, and even with it anything but a
 * regular file, a name like a segment's or MANIFEST, and any path in a
 * directory of x->data.  Returns 0, or -EINVAL with a one-line reason in
 * @err (a user error). */
int gr_export__prepare(struct gr_export *x, char *const *names, int n,
		       char *err, size_t errlen);

/* Counts a row and redraws the progress line on a terminal at most five
 * times a second. */
void gr_export__row(struct gr_export_progress *p);

/* Writes @ns since the epoch as 2026-11-18T09:46:40.123456789Z into
 * @buf of @len bytes (32 are enough). */
void gr_export__iso(char *buf, size_t len, int64_t ns);

/* Writes the export, reading the tables of @db (gr_vtab__register's).
 * Each file appears whole or not at all.  Returns 0; 1 when the output
 * cannot be written (a user error); 2 for an internal failure; on
 * failure @err holds a one-line reason.  On success it prints one
 * summary line on x->msg (what, from how many segments, where, how big,
 * how long); while it runs, a progress line redrawn in place when x->msg
 * is a terminal, and nothing of it when not. */
int gr_export__run(const struct gr_export *x, sqlite3 *db, char *err,
		   size_t errlen);

#endif
