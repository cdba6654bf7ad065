/* nccl_fleet.h - the NCCL straggler tables (nccl_fleet.c says how). */
#ifndef GR_QUERY_NCCL_FLEET_H
#define GR_QUERY_NCCL_FLEET_H

#include <sqlite3.h>

/* Registers the eponymous tables nccl_rank_skew and nccl_last_arrival on
 * @db, which read its nccl table.  Returns SQLITE_OK, else the SQLite
 * error code. */
int gr_nccl_fleet__register(sqlite3 *db);

#endif
