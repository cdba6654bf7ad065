/* schema.c - the table descriptors, expanded from tables.def. */
#include <string.h>

#include "schema/schema.h"

/* A summary column's optional last argument names its gr_sum_src; other
 * columns get GR_SS_NONE. */
#define GR__FIRST(a, ...) a
#define GR__SS(...) GR__FIRST(__VA_OPT__(GR_SS_##__VA_ARGS__,) GR_SS_NONE)
#define GR__COL(t, n, ty, d, ...) { #n, GR_##ty, d, GR__SS(__VA_ARGS__) },
#define GR__COLS(t, f, d, ...) \
	static const struct gr_column cols_##t[] = { GR_COLS_##t(GR__COL, t) };
GR_TABLES(GR__COLS)
#undef GR__COLS
#undef GR__COL
#undef GR__SS
#undef GR__FIRST

/* A table without GR_LABEL gets a zero label (set 0). */
#define GR__TAB(t, f, d, ...)                                               \
	{ .name = #t, .flags = f, .desc = d, .cols = cols_##t,              \
	  .ncols = (int)(sizeof(cols_##t) / sizeof(cols_##t[0])),           \
	  __VA_OPT__(.label = __VA_ARGS__) },
const struct gr_table gr_tables[GR_NTABLES] = { GR_TABLES(GR__TAB) };
#undef GR__TAB

/* Every table must fit a 64-bit null mask. */
#define GR__CHK(t, f, d, ...) _Static_assert(GR_##t##__NCOLS <= GR_MAX_COLS, #t);
GR_TABLES(GR__CHK)
#undef GR__CHK

/* Every event table begins with GR_EVENT_COLS, in order, so that
 * GR_EV_<column> is that column's index in each of them.  GR_EVENT_COLS is
 * redefined here to assert this for each table whose list includes it
 * (the lists name it, and it expands where they are expanded). */
#undef GR_EVENT_COLS
#define GR__EVCHK(t, n, ty, d, ...)                                          \
	_Static_assert((int)GR_##t##_##n == (int)GR_EV_##n,                 \
		       #t "." #n " is not where GR_EVENT_COLS puts it");
#define GR_EVENT_COLS(C, t) GR__EVENT_COLS(GR__EVCHK, t)
#define GR__NOCOL(t, n, ty, d, ...)
#define GR__EVTAB(t, f, d, ...) GR_COLS_##t(GR__NOCOL, t)
GR_TABLES(GR__EVTAB)
#undef GR__EVTAB
#undef GR__NOCOL
#undef GR__EVCHK

int gr_table__find(const char *name)
{
	for (int i = 0; i < GR_NTABLES; i++)
		if (strcmp(gr_tables[i].name, name) == 0)
			return i;
	return -1;
}

int gr_table__col(const struct gr_table *t, const char *name)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return i;
	return -1;
}

const char *gr_coltype__name(enum gr_coltype ty)
{
	static const char *const names[] = { "TS", "INT", "STR", "HOST", "BLOB" };
	return names[ty];
}

const char *gr_coltype__sql(enum gr_coltype ty)
{
	return ty == GR_STR || ty == GR_HOST ? "TEXT" :
	       ty == GR_BLOB ? "BLOB" : "INTEGER";
}
