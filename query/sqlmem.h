/* sqlmem.h - small helpers shared by the tables computed in C
 * (nccl_fleet.c, memcpy_host.c): memory from SQLite's allocator, so that
 * --max-memory (sqlite3_hard_heap_limit64) caps them as it caps SQLite's
 * own sorts, and integer columns read with NULL kept apart. */
#ifndef GR_QUERY_SQLMEM_H
#define GR_QUERY_SQLMEM_H

#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

/* An integer column's NULL: INT64_MIN, never a real pid, pointer, size or
 * time these tables hold. */
#define GR_SQ_NULL INT64_MIN

/* calloc on SQLite's allocator (n = 0: one element, never NULL for it). */
static inline void *gr_sq_calloc(size_t n, size_t size)
{
	if (!n)
		n = 1;
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = sqlite3_malloc64((sqlite3_uint64)n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

/* strdup on SQLite's allocator. */
static inline char *gr_sq_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = sqlite3_malloc64(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

/* Column c of the current row: its integer, or GR_SQ_NULL. */
static inline int64_t gr_sq_col_int(sqlite3_stmt *st, int c)
{
	return sqlite3_column_type(st, c) == SQLITE_NULL ?
	       GR_SQ_NULL : sqlite3_column_int64(st, c);
}

#endif
