/* decode.h - the sched family's pure decoders: an offcpu or runq record
 * in, its row out (recorder/row.h). */
#ifndef GR_RECORDER_SCHED_DECODE_H
#define GR_RECORDER_SCHED_DECODE_H

#include <stddef.h>
#include <linux/types.h>

#include "recorder/row.h"
#include "recorder/sched/sched.h"

/* Off-CPU intervals still open (the thread has not come back) whose first
 * pieces were written as rows already (gr_sched__open_piece), by tid: the
 * interval's record, when it comes, is written as its last piece only, so
 * the pieces of one interval are contiguous and sum to it. */
struct gr_sched_open {
	uint32_t tid, pid;
	uint64_t off_ts;	/* the interval's start (boot-time ns) */
	uint64_t until;		/* the end of its last piece written */
	uint64_t seen;		/* the last walk that found it open */
};
struct gr_sched_opens {
	struct gr_sched_open *v;	/* by tid, ascending */
	size_t n, cap;
};

/* What an offcpu row needs beyond its record, from the caller (the
 * symbolizer, recorder/sym/stacks.c); any may be NULL: no stack, a waker
 * taken as is, every record an interval of its own. */
struct gr_sched_hooks {
	/* The folded stack (malloc'd; freed by the decoder), or NULL. */
	char *(*stack)(void *ctx, const struct gr_offcpu *e);
	/* Whether the wakeup ran in an interrupt or softirq. */
	int (*irq_wake)(void *ctx, const struct gr_offcpu *e);
	void *ctx;
	struct gr_sched_opens *open;	/* intervals written in part */
};

/* Decodes one ring-buffer record into @r.  Returns its table (GR_T_offcpu,
 * GR_T_runq), or -1 for a record of another kind or shorter than its
 * struct (longer is taken: its head is the struct), or for an interval
 * whose pieces written already reach its end.  An interval in k->open is
 * written from the end of its last piece, and forgotten there. */
int gr_sched__decode(const struct gr_dctx *d, const struct gr_sched_hooks *k,
		     const void *rec, size_t len, struct gr_row *r);

/* The next piece of an interval still open into @r: @e is the thread's
 * interval so far (ts its start, ts + dur now, no waker); the piece runs
 * from the end of the last one written (or ts) to now, and k->open (not
 * NULL) remembers it.  Returns GR_T_offcpu, or -1 if there is nothing to
 * write (no time since the last piece) or no memory. */
int gr_sched__open_piece(const struct gr_dctx *d,
			 const struct gr_sched_hooks *k,
			 const struct gr_offcpu *e, struct gr_row *r);

/* The entry of @tid in @o, or NULL. */
struct gr_sched_open *gr_sched__open_find(struct gr_sched_opens *o,
					  uint32_t tid);
/* Forgets entry @i of @o (the entries after it move down one). */
void gr_sched__open_drop(struct gr_sched_opens *o, size_t i);
void gr_sched__open_free(struct gr_sched_opens *o);

/* The ps(1) letter of a task state (prev->__state). */
const char *gr_sched__task_state(uint32_t s);

#endif
