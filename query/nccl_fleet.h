/* nccl_fleet.h - the NCCL straggler tables (nccl_fleet.c says how). */
#ifndef GR_QUERY_NCCL_FLEET_H
#define GR_QUERY_NCCL_FLEET_H

#include <sqlite3.h>

#include "query/vtab.h"

/* Registers the eponymous tables nccl_rank_skew, nccl_last_arrival and
 * nccl_rank_pace on @db, which walk the nccl rows of @q (as its nccl
 * table has them).  Returns SQLITE_OK, else the SQLite error code. */
int gr_nccl_fleet__register(sqlite3 *db, struct gr_qctx *q);

#endif
