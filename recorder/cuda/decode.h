/* decode.h - the CUDA family's records turned into row values, without
 * BPF, a writer or any process state: one record in, one row out
 * (decode.c), testable without root (tests/unit/test_cudadecode.c).
 *
 * What a record alone cannot say is filled in afterwards by the files that
 * keep state: a launch's kernel name (naming.c, from the process's
 * symbols and the load-time calls seen before) and an NCCL row's
 * communicator, rank and sequence number (nccl.c).
 */
#ifndef GR_CUDA_DECODE_H
#define GR_CUDA_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "recorder/cuda/apis.h"
#include "recorder/cuda/cuda.h"
#include "schema/schema.h"

#define GR_CUDA_ROW_STRS 8

/* A string's dictionary id, kept by whoever owns the string (cuda.c for
 * comms and API names, naming.c for kernel names), so that the strings
 * nearly every row repeats are not hashed again for each: valid while
 * gen is the writer's gr_writer__dict_gen() and id is not 0. */
struct gr_cuda_strid {
	uint32_t gen, id;
};

/* One row of a cuda_* or nccl table, before its strings are interned. */
struct gr_cuda_row {
	int table;               /* GR_T_* */
	int64_t v[GR_MAX_COLS];  /* values; string columns set at intern */
	uint64_t nm;             /* null mask: 1 << column */
	int nstr;
	struct {
		int col;
		const char *s;   /* lives as long as the row, or longer */
		struct gr_cuda_strid *keep; /* s's id, or NULL */
	} str[GR_CUDA_ROW_STRS]; /* string columns, in the order interned */
	uint64_t func;           /* a launch's function handle or host stub */
	char comm[17];           /* the comm column's string */
	char num[16];            /* an unknown NCCL datatype, as a number */
};

/* A ring buffer record, classified. */
enum gr_cuda_rec_kind {
	GR_CUDA_REC_SHORT,   /* shorter than its type needs: ignored */
	GR_CUDA_REC_CALL,    /* rec.call (and rec.name, if it had one) */
	GR_CUDA_REC_EXEC,    /* rec.exec_pid exec'd */
	GR_CUDA_REC_ENTER,   /* rec.enter_pid entered an announced call */
	GR_CUDA_REC_UNKNOWN, /* a record type this gpurecd does not know */
};

struct gr_cuda_record {
	const struct gr_cuda_call *call; /* points into the record */
	const char *name;    /* GR_REC_CALL_NAME: name_buf; else NULL */
	uint32_t exec_pid;
	uint32_t enter_pid;
	char name_buf[GR_NAME_BYTES];
};

/* Classifies the record of len bytes at data (8-byte aligned, as ring
 * buffer records are); bytes past its type's size are ignored.  The
 * name is copied and terminated: ring buffer pages are mapped
 * read-only. */
enum gr_cuda_rec_kind gr_cuda_decode__record(const void *data, size_t len,
					     struct gr_cuda_record *rec);

/* Fills r with the row of call e: the table, the columns every cuda_*
 * and nccl table shares (ts shifted by clock_offset_ns to UTC), and the
 * columns e's API shape defines; its other columns are 0, and v past
 * the table's columns is left as it was.  Returns 0, or -EINVAL for an
 * api id outside gr_apis[] (r is then not a row). */
int gr_cuda_decode__call(const struct gr_cuda_call *e,
			 int64_t clock_offset_ns, struct gr_cuda_row *r);

/* Sets string column col of r to s, interned after those set before. */
void gr_cuda_row__str(struct gr_cuda_row *r, int col, const char *s);

/* gr_cuda_row__str for a string whose id is kept in *keep, which lives as
 * long as s does. */
void gr_cuda_row__str_kept(struct gr_cuda_row *r, int col, const char *s,
			   struct gr_cuda_strid *keep);

#endif
