/* decode.h - the sched family's pure decoders: an offcpu or runq record
 * in, its row out (recorder/row.h). */
#ifndef GR_RECORDER_SCHED_DECODE_H
#define GR_RECORDER_SCHED_DECODE_H

#include <stddef.h>
#include <linux/types.h>

#include "recorder/row.h"
#include "recorder/sched/sched.h"

/* What an offcpu row needs beyond its record, from the caller (the
 * symbolizer, recorder/sym/stacks.c); either may be NULL: no stack, and a
 * waker taken as is. */
struct gr_sched_hooks {
	/* The folded stack (malloc'd; freed by the decoder), or NULL. */
	char *(*stack)(void *ctx, const struct gr_offcpu *e);
	/* Whether the wakeup ran in an interrupt or softirq. */
	int (*irq_wake)(void *ctx, const struct gr_offcpu *e);
	void *ctx;
};

/* Decodes one ring-buffer record into @r.  Returns its table (GR_T_offcpu,
 * GR_T_runq), or -1 for a record of another kind or shorter than its
 * struct (longer is taken: its head is the struct). */
int gr_sched__decode(const struct gr_dctx *d, const struct gr_sched_hooks *k,
		     const void *rec, size_t len, struct gr_row *r);

/* The ps(1) letter of a task state (prev->__state). */
const char *gr_sched__task_state(uint32_t s);

#endif
