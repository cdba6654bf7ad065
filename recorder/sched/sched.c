/* sched.c - the sched family's user side: loading sched.bpf.c, and its
 * offcpu and runq records into rows (decode.c), off-CPU stacks folded
 * and named by recorder/sym/stacks.c. */
#include <stdlib.h>

#include <linux/types.h>

#include "recorder/hostfam.h"
#include "recorder/sched/decode.h"
#include "recorder/sym/stacks.h"
#include "sched.skel.h"

/* The folded stack of an off-CPU record (malloc'd), or NULL. */
static char *stack_of(void *ctx, const struct gr_offcpu *e)
{
	struct gr_host *h = ctx;
	int nu = e->ubytes > 0 ? e->ubytes / 8 : 0;
	int nk = e->kbytes > 0 ? e->kbytes / 8 : 0;
	struct gr_pinfo *p = NULL;
	if (!h->stacks)
		return NULL;
	if (nu > GR_USTACK_DEPTH)
		nu = GR_USTACK_DEPTH;
	if (nk > GR_KSTACK_DEPTH)
		nk = GR_KSTACK_DEPTH;
	/* An exited process's entry lingers with its maps; a process
	 * traced by --sched-all gets one here (gr_proc__flush drops it once
	 * /proc has no such pid). */
	if (nu)
		p = gr_proc__lookup(h, e->pid, h->o.trace_all);
	return gr_stacks__fold(h->stacks, e->pid, p ? &p->pm : NULL,
			       (const uint64_t *)e->ustack, nu,
			       (const uint64_t *)e->kstack, nk);
}

static int irq_wake(void *ctx, const struct gr_offcpu *e)
{
	struct gr_host *h = ctx;
	return gr_stacks__irq_wake(h->stacks, (const uint64_t *)e->wstack,
				   GR_WSTACK_DEPTH);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gr_host *h = ctx;
	const struct gr_sched_hooks k = { stack_of, irq_wake, h };
	struct gr_row r;
	if (gr_sched__decode(&h->dctx, &k, data, len, &r) >= 0)
		gr_host__put(h, &r);
	return 0;
}

GR_HFAM_SKEL_FNS(sched)

static uint64_t recovered(const void *s)
{
	return ((const struct sched_bpf *)s)->bss->recovered;
}

void gr_sched__open(struct gr_host *h, uint32_t self)
{
	static const char *const progs[] = {
		"sched_switch", "sched_waking", "sched_wakeup",
		"sched_wakeup_new", NULL };
	struct sched_bpf *s = sched_bpf__open();
	if (s) {
		s->rodata->self_tgid = self;
		s->rodata->trace_all = h->o.trace_all ? 1 : 0;
		s->rodata->offcpu_min_ns = (uint64_t)h->o.offcpu_min_ns;
		s->rodata->runq_min_ns = (uint64_t)h->o.runq_min_ns;
		s->rodata->wake_bytes =
			bpf_map__max_entries(s->maps.events) / 4;
	}
	struct gr_hfam_skel k = {
		.skel = s, .obj = s ? s->obj : NULL, .load = sched_load_,
		.destroy = sched_destroy_, .drops = sched_drops_,
		.progs = progs, .on_record = on_record,
	};
	if (gr_hfam__open(h, GR_FAM_sched, &k) == 0)
		h->recovered = recovered;
}
