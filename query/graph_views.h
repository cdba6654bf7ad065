/* graph_views.h - the CUDA graph views, cuda_graph_kernel and
 * cuda_graph_exec (see graph_views.c). */
#ifndef GR_GRAPH_VIEWS_H
#define GR_GRAPH_VIEWS_H

#include <sqlite3.h>

#include "schema/schema.h"

/* The views' catalog, for `gpurec tables` and `gpurec schema` (the
 * columns in the order the views give them; tests/cli/graph_kernels.sh
 * checks they agree). */
struct gr_view_col {
	const char *name;
	enum gr_coltype type;
	const char *desc;
};
struct gr_view {
	const char *name, *desc;
	const struct gr_view_col *cols;
	int ncols;
};
extern const struct gr_view gr_graph_views[];
extern const int gr_graph_nviews;

/* The view named name, or NULL. */
const struct gr_view *gr_graph_view__find(const char *name);

/* Creates the views in db's temp schema, over the event tables that
 * gr_vtab__register made.  Returns SQLITE_OK or an SQLite error code. */
int gr_graph_views__create(sqlite3 *db);

#endif
