/* graph_views.h - the CUDA graph views, cuda_graph_kernel and
 * cuda_graph_exec (see graph_views.c). */
#ifndef GR_GRAPH_VIEWS_H
#define GR_GRAPH_VIEWS_H

#include <sqlite3.h>

/* Creates the views in db's temp schema, over the event tables that
 * gr_vtab__register made.  Returns SQLITE_OK or an SQLite error code. */
int gr_graph_views__create(sqlite3 *db);

#endif
