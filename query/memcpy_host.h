/* memcpy_host.h - the blocking and pageable copy tables (memcpy_host.c
 * says how). */
#ifndef GR_QUERY_MEMCPY_HOST_H
#define GR_QUERY_MEMCPY_HOST_H

#include <sqlite3.h>

#include "query/vtab.h"

/* Registers the eponymous tables memcpy_blocking and memcpy_pageable on
 * @db, which read its cuda_mem table and walk the copies of @q (as its
 * cuda_memcpy table has them).  Returns SQLITE_OK, else the SQLite error
 * code. */
int gr_memcpy_host__register(sqlite3 *db, struct gr_qctx *q);

#endif
