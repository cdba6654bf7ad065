/* aggregates.h - SQL aggregate functions that SQLite 3.40 does not ship.
 *
 * median(x) and percentile(x, p) follow SQLite 3.47's percentile extension
 * so queries keep their meaning when the bundled SQLite grows them.
 */
#ifndef GR_QUERY_AGGREGATES_H
#define GR_QUERY_AGGREGATES_H

#include <sqlite3.h>

/* Registers median(x) and percentile(x, p) on @db as aggregate and window
 * functions, and the aggregates stddev_ns(dur) and stddev_ns(n, dur_sum,
 * dur_sq) (aggregates.c says how).  Returns SQLITE_OK on success, else the
 * SQLite error code. */
int gr_aggregates__register(sqlite3 *db);

#endif
