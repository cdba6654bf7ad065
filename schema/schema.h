/* schema.h - table and column descriptors generated from tables.def.
 *
 * Writers index their value arrays with the generated GR_<table>_<column>
 * constants; readers and the CLI walk gr_tables[].
 */
#ifndef GR_SCHEMA_H
#define GR_SCHEMA_H

#include <stdint.h>

#define GR_SCHEMA_VERSION 1

enum gr_table_flags {
	GR_TF_EVENT = 1,      /* stored as blocks, has the GR_EVENT_COLS */
	GR_TF_UNION_CUDA = 2, /* scans also read every other cuda_* table */
	GR_TF_CATALOG = 4,    /* not stored: built from the segment files */
	GR_TF_SUMMARY = 8,    /* store/summary.h: rows kept beside blocks */
	GR_TF_CUDA_CALL = 16, /* one row per CUDA call: a member of the
			       * GR_TF_UNION_CUDA table, summarized as sum_api */
};

enum gr_coltype { GR_TS, GR_INT, GR_STR, GR_HOST, GR_BLOB };

/* What a summary table's column shows of a summary entry (struct
 * gr_sum_ent in store/summary.h), declared by the column's last argument
 * in tables.def.  GR_SS_K0 + i is the entry's key k[i], NULL where knull
 * has bit i; a STR key is a dictionary id. */
enum gr_sum_src {
	GR_SS_NONE,     /* not a summary column */
	GR_SS_TS_MIN, GR_SS_TS_MAX, GR_SS_HOST,
	GR_SS_MINUTE,   /* NULL for a whole-segment row */
	GR_SS_PID,
	GR_SS_K0, GR_SS_K1, GR_SS_K2, GR_SS_K3, GR_SS_K4, GR_SS_K5, GR_SS_K6,
	GR_SS_N, GR_SS_DUR_SUM, GR_SS_DUR_MIN, GR_SS_DUR_MAX, GR_SS_BYTES,
	GR_SS_ERRORS,
	GR_SS_DUR_SQ,   /* 16 bytes, little-endian; NULL where unknown */
	GR_SS_HIST,     /* the histogram, encoded */
};

#include "schema/tables.def"

#define GR__TID(t, f, d, ...) GR_T_##t,
enum gr_table_id { GR_TABLES(GR__TID) GR_NTABLES };
#undef GR__TID

#define GR__CID(t, n, ty, d, ...) GR_##t##_##n,
#define GR__CENUM(t, f, d, ...) enum { GR_COLS_##t(GR__CID, t) GR_##t##__NCOLS };
GR_TABLES(GR__CENUM)
#undef GR__CENUM
#undef GR__CID

/* The shared prefix of every event table (GR_EVENT_COLS): code that
 * handles rows of any event table indexes them by these (vals[GR_EV_ts],
 * a filter on GR_EV_pid); schema.c asserts each event table starts so. */
#define GR__EVID(t, n, ty, d, ...) GR_EV_##n,
enum gr_event_col { GR_EVENT_COLS(GR__EVID, ev) GR_EV__NCOLS };
#undef GR__EVID

/* Most columns any table has; null masks are 64-bit. */
#define GR_MAX_COLS 64

struct gr_column {
	const char *name;
	enum gr_coltype type;
	const char *desc;
	enum gr_sum_src sum;  /* summary tables: what the column shows */
};

/* How an export names a table's rows (tables.def, GR_LABEL). */
struct gr_label {
	const char *prefix;
	const char *cols[3];  /* the first not NULL names the row */
	int set;              /* the table declares one */
};
#define GR_LABEL(prefix, ...) { prefix, { __VA_ARGS__ }, 1 }

struct gr_table {
	const char *name;
	unsigned flags;
	const char *desc;
	const struct gr_column *cols;
	int ncols;
	struct gr_label label;
};

extern const struct gr_table gr_tables[GR_NTABLES];

/* Returns the table's id, or -1 if there is no table of that name. */
int gr_table__find(const char *name);

/* Returns the column's index in table t, or -1. */
int gr_table__col(const struct gr_table *t, const char *name);

/* Returns "TS", "INT", … for a column type. */
const char *gr_coltype__name(enum gr_coltype ty);

/* Returns the SQL type a column is declared with (INTEGER or TEXT). */
const char *gr_coltype__sql(enum gr_coltype ty);

#endif
