/* filters.h - whether the global filters (--pid, --host, --since,
 * --until) match anything in the recording at all. */
#ifndef GR_QUERY_FILTERS_H
#define GR_QUERY_FILTERS_H

#include <sqlite3.h>
#include <stdio.h>

#include "query/vtab.h"

/* For each global filter of q that matches nothing in the whole recording
 * (the other filters set aside), prints one line on @warn: "gpurec: no
 * process 99999 in the recording".  The query ran and its answer stands:
 * this says why it is empty, where a user would otherwise read "nothing
 * happened".  db must have q's tables.  Returns the number of lines
 * printed. */
int gr_filters__check(sqlite3 *db, struct gr_qctx *q, FILE *warn);

#endif
