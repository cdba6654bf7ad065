/* decode.c - the sched family's records into offcpu and runq rows. */
#include <stdlib.h>
#include <string.h>

#include "recorder/sched/decode.h"

const char *gr_sched__task_state(uint32_t s)
{
	if ((s & 0x2) && (s & 0x400))
		return "I";	/* TASK_IDLE */
	if (s & 0x1)
		return "S";
	if (s & 0x2)
		return "D";
	if (s & 0x4)
		return "T";
	if (s & 0x8)
		return "t";
	if (s & 0x40)
		return "P";	/* parked kthread */
	if (s & 0x20)
		return "Z";
	if (s & 0x90)
		return "X";
	return "?";
}

static void decode_offcpu(const struct gr_dctx *d,
			  const struct gr_sched_hooks *k,
			  const struct gr_offcpu *e, struct gr_row *r)
{
	gr_row__event(r, d, GR_T_offcpu, e->ts, e->pid, e->tid, e->comm);
	r->v[GR_offcpu_dur] = (int64_t)e->dur;
	r->v[GR_offcpu_state] = gr_dctx__str(d, gr_sched__task_state(e->state));
	/* Woken in an interrupt (a timer expiring, an I/O completing):
	 * current, the "waker", is only the task the interrupt hit. */
	if (e->waker_tid && !(k && k->irq_wake && k->irq_wake(k->ctx, e))) {
		r->v[GR_offcpu_waker_pid] = e->waker_pid;
		r->v[GR_offcpu_waker_tid] = e->waker_tid;
	} else {
		r->nm |= 1ull << GR_offcpu_waker_pid |
			 1ull << GR_offcpu_waker_tid;
	}
	char *st = k && k->stack ? k->stack(k->ctx, e) : NULL;
	if (st)
		r->v[GR_offcpu_stack] = gr_dctx__str(d, st);
	else
		r->nm |= 1ull << GR_offcpu_stack;
	free(st);
}

static void decode_runq(const struct gr_dctx *d, const struct gr_runq *e,
			struct gr_row *r)
{
	gr_row__event(r, d, GR_T_runq, e->ts, e->pid, e->tid, e->comm);
	r->v[GR_runq_dur] = (int64_t)e->dur;
	r->v[GR_runq_cpu] = e->cpu;
}

int gr_sched__decode(const struct gr_dctx *d, const struct gr_sched_hooks *k,
		     const void *rec, size_t len, struct gr_row *r)
{
	uint32_t kind;
	if (len < sizeof(kind))
		return -1;
	memcpy(&kind, rec, sizeof(kind));
	if (kind == GR_REC_OFFCPU && len >= sizeof(struct gr_offcpu)) {
		decode_offcpu(d, k, rec, r);
		return GR_T_offcpu;
	}
	if (kind == GR_REC_RUNQ && len >= sizeof(struct gr_runq)) {
		decode_runq(d, rec, r);
		return GR_T_runq;
	}
	return -1;
}
