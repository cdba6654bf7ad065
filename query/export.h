/* export.h - `gpurec export`: the recording, decoded, for other tools.
 *
 * The command checks its options with gr_export__prepare() before it opens
 * the recording (so a bad table or an existing file fails at once), then
 * gr_export__run() reads the virtual tables of a connection and writes.
 */
#ifndef GR_QUERY_EXPORT_H
#define GR_QUERY_EXPORT_H

#include <stddef.h>
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

/* Writes the export, reading the tables of @db (gr_vtab__register's).
 * Each file appears whole or not at all.  Returns 0; 1 when the output
 * cannot be written (a user error); 2 for an internal failure; on
 * failure @err holds a one-line reason. */
int gr_export__run(const struct gr_export *x, sqlite3 *db, char *err,
		   size_t errlen);

#endif
