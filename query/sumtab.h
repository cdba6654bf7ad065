/* sumtab.h - the summary tables (sum_*) as SQLite virtual tables. */
#ifndef GR_QUERY_SUMTAB_H
#define GR_QUERY_SUMTAB_H

#include <sqlite3.h>

#include "query/vtab.h"

/* Creates one virtual table per GR_TF_SUMMARY table of the schema in db's
 * main schema.  q must outlive db.  Returns SQLITE_OK or an error code. */
int gr_sumtab__register(sqlite3 *db, struct gr_qctx *q);

#endif
