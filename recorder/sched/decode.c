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

/* The index of the first entry of @o whose tid is not below @tid. */
static size_t open_lower(const struct gr_sched_opens *o, uint32_t tid)
{
	size_t lo = 0, hi = o->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->v[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct gr_sched_open *gr_sched__open_find(struct gr_sched_opens *o,
					  uint32_t tid)
{
	if (!o || !o->n)
		return NULL;
	size_t i = open_lower(o, tid);
	return i < o->n && o->v[i].tid == tid ? &o->v[i] : NULL;
}

void gr_sched__open_drop(struct gr_sched_opens *o, size_t i)
{
	if (i >= o->n)
		return;
	memmove(&o->v[i], &o->v[i + 1], (o->n - i - 1) * sizeof(*o->v));
	o->n--;
}

void gr_sched__open_free(struct gr_sched_opens *o)
{
	free(o->v);
	*o = (struct gr_sched_opens){ 0 };
}

/* An offcpu record whose interval has pieces written already: its last
 * piece into @r, the interval forgotten.  Returns 1 (@r is set), 0 (not
 * such an interval: decode it whole) or -1 (nothing left to write). */
static int last_piece(const struct gr_dctx *d, const struct gr_sched_hooks *k,
		      const struct gr_offcpu *e, struct gr_row *r)
{
	struct gr_sched_open *o = gr_sched__open_find(k->open, e->tid);
	if (!o)
		return 0;
	uint64_t off_ts = o->off_ts, until = o->until, end = e->ts + e->dur;
	if (e->ts < off_ts)
		return 0; /* an earlier interval's, late: keep the open one */
	gr_sched__open_drop(k->open, (size_t)(o - k->open->v));
	if (e->ts > off_ts)
		return 0; /* the open one ended unrecorded (its record lost) */
	if (end <= until)
		return -1;
	struct gr_offcpu *p = malloc(sizeof(*p));
	if (!p)
		return -1;
	*p = *e;
	p->ts = until;
	p->dur = end - until;
	decode_offcpu(d, k, p, r);
	free(p);
	return 1;
}

int gr_sched__open_piece(const struct gr_dctx *d,
			 const struct gr_sched_hooks *k,
			 const struct gr_offcpu *e, struct gr_row *r)
{
	struct gr_sched_opens *os = k->open;
	struct gr_sched_open *o = gr_sched__open_find(os, e->tid);
	uint64_t now = e->ts + e->dur;
	if (o && o->off_ts != e->ts) {
		/* An interval before it, whose record never came. */
		gr_sched__open_drop(os, (size_t)(o - os->v));
		o = NULL;
	}
	if (!o) {
		if (os->n == os->cap) {
			size_t cap = os->cap ? os->cap * 2 : 16;
			void *v = realloc(os->v, cap * sizeof(*os->v));
			if (!v)
				return -1;
			os->v = v;
			os->cap = cap;
		}
		size_t i = open_lower(os, e->tid);
		memmove(&os->v[i + 1], &os->v[i], (os->n - i) * sizeof(*os->v));
		os->n++;
		o = &os->v[i];
		*o = (struct gr_sched_open){ e->tid, e->pid, e->ts, e->ts, 0 };
	}
	if (now <= o->until)
		return -1;
	struct gr_offcpu *p = malloc(sizeof(*p));
	if (!p)
		return -1;
	*p = *e;
	p->ts = o->until;
	p->dur = now - o->until;
	p->waker_pid = p->waker_tid = 0;
	o->until = now;
	decode_offcpu(d, k, p, r);
	free(p);
	return GR_T_offcpu;
}

int gr_sched__decode(const struct gr_dctx *d, const struct gr_sched_hooks *k,
		     const void *rec, size_t len, struct gr_row *r)
{
	uint32_t kind;
	if (len < sizeof(kind))
		return -1;
	memcpy(&kind, rec, sizeof(kind));
	if (kind == GR_REC_OFFCPU && len >= sizeof(struct gr_offcpu)) {
		const struct gr_offcpu *e = rec;
		int last = k && k->open && k->open->n ? last_piece(d, k, e, r) : 0;
		if (last < 0)
			return -1;
		if (!last)
			decode_offcpu(d, k, e, r);
		return GR_T_offcpu;
	}
	if (kind == GR_REC_RUNQ && len >= sizeof(struct gr_runq)) {
		decode_runq(d, rec, r);
		return GR_T_runq;
	}
	return -1;
}
