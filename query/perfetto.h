/* perfetto.h - `gpurec export --format perfetto`: the recording as one
 * Chrome/Perfetto JSON trace (the Trace Event Format).
 */
#ifndef GR_QUERY_PERFETTO_H
#define GR_QUERY_PERFETTO_H

#include <stddef.h>
#include <stdio.h>
#include <sqlite3.h>

#include "query/export.h"

/* Writes the trace of x->tables, read from the virtual tables of @db, to
 * @f (export.c gives it the file and renames it into place).  Returns 0,
 * or 2 (EXIT_INTERNAL) with a one-line reason in @err. */
int gr_perfetto__write(const struct gr_export *x, FILE *f, sqlite3 *db,
		       char *err, size_t len);

#endif
