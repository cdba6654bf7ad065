/* sched.c - the sched family's user side: loading sched.bpf.c, and its
 * offcpu and runq records into rows (decode.c), off-CPU stacks folded
 * and named by recorder/sym/stacks.c.
 *
 * An off-CPU interval is recorded when its thread comes back, so a thread
 * that never does (stuck in the driver in state D, the GPU fallen off the
 * bus) would leave nothing.  So every 5 s gr_sched__walk reads the BPF
 * side's per-thread map, and for each thread of a traced process that left
 * the CPU in state D at least 5 s ago and is still away writes the part of
 * the interval not written yet as an offcpu row; the record that comes
 * when the thread is back is written from there on (decode.c), so the
 * pieces are contiguous and sum to the interval.  The last flush does the
 * same for every such thread away at least --offcpu-min-us.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "recorder/hostfam.h"
#include "recorder/proc/proc.h" /* GR_TRACKED_WORDS */
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
	const struct gr_sched_hooks k = { stack_of, irq_wake, h, &h->opens };
	struct gr_row r;
	if (gr_sched__decode(&h->dctx, &k, data, len, &r) >= 0)
		gr_host__put(h, &r);
	return 0;
}

GR_HFAM_SKEL_FNS(sched)

static uint64_t counter(const void *s, enum gr_sched_counter c)
{
	const struct sched_bpf *k = s;
	return c == GR_SCHED_RECOVERED ? k->bss->recovered :
	       k->bss->wakeups_unseen;
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
		h->sched_counter = counter;
}

/* ---- intervals still open --------------------------------------------------- */

#define WALK_NS (5ll * 1000000000)	/* between walks; the age written */
#define WALK_BATCH 256			/* entries per map read */

static int traced(const struct gr_host *h, uint32_t tgid)
{
	if (h->o.trace_all)
		return 1;
	return h->tracked_bits && (tgid >> 6) < GR_TRACKED_WORDS &&
	       (__atomic_load_n(&h->tracked_bits[tgid >> 6],
				__ATOMIC_RELAXED) >> (tgid & 63)) & 1;
}

static int state_d(uint32_t state)
{
	return strcmp(gr_sched__task_state(state), "D") == 0;
}

/* Thread @tid's comm and state letter from /proc/TGID/task/TID/stat (not
 * /proc/TID/stat: that one sums the CPU time of every thread of the
 * process, 2 ms a read in a process of 15,000 threads).  Returns 0, or -1
 * if it is gone. */
static int proc_stat(uint32_t tgid, uint32_t tid, char comm[16], char *state)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", tgid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* tid (comm) S ... */
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r < l || !r[1] || !r[2])
		return -1;
	size_t cl = (size_t)(r - l - 1);
	if (cl > 15)
		cl = 15;
	memset(comm, 0, 16);
	memcpy(comm, l + 1, cl);
	*state = r[2];
	return 0;
}

/* A thread found away in state D since @t0->off_ts, old enough: if /proc
 * says it is in D still and the map still holds the same interval, its
 * next piece, up to @now (taken before the map was read, so the interval
 * was open then).  Returns 1 if a row was written. */
static int write_open(struct gr_host *h, int fd, uint32_t tid,
		      const struct gr_sched_thread *t0, int64_t now)
{
	struct gr_sched_thread t;
	char comm[16], st;
	if (proc_stat(t0->tgid, tid, comm, &st) || st != 'D' ||
	    bpf_map_lookup_elem(fd, &tid, &t) || t.off_ts != t0->off_ts ||
	    t.state != t0->state || t.woken || t.run_ts)
		return 0;
	struct gr_offcpu e = {
		.rec = GR_REC_OFFCPU, .pid = t.tgid, .tid = tid,
		.state = t.state, .ts = t.off_ts,
		.dur = (uint64_t)now - t.off_ts,
		.kbytes = t.kbytes, .ubytes = t.ubytes,
	};
	memcpy(e.comm, comm, sizeof(e.comm));
	memcpy(e.kstack, t.kstack, sizeof(e.kstack));
	memcpy(e.ustack, t.ustack, sizeof(e.ustack));
	const struct gr_sched_hooks k = { stack_of, irq_wake, h, &h->opens };
	struct gr_row r;
	if (gr_sched__open_piece(&h->dctx, &k, &e, &r) < 0)
		return 0;
	gr_host__put(h, &r);
	struct gr_sched_open *o = gr_sched__open_find(&h->opens, tid);
	if (o)
		o->seen = h->walks;
	return 1;
}

void gr_sched__walk(struct gr_host *h, int last)
{
	struct sched_bpf *s = h->fam[GR_FAM_sched].skel;
	int64_t now = gr_host__boot_ns();
	if (!s || (!last && now - h->walked_ns < WALK_NS))
		return;
	h->walked_ns = now;
	h->walks++;
	if (bpf_map__value_size(s->maps.threads) !=
	    sizeof(struct gr_sched_thread))
		return; /* cannot happen: both sides build from sched.h */
	int64_t min = last ? 0 : WALK_NS;
	if (min < h->o.offcpu_min_ns)
		min = h->o.offcpu_min_ns;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const size_t vsz = sizeof(struct gr_sched_thread);
	__u32 *keys = malloc(WALK_BATCH * sizeof(*keys));
	char *vals = malloc(WALK_BATCH * vsz);
	int fd = bpf_map__fd(s->maps.threads), err = 0;
	__u32 in = 0, out = 0;
	unsigned n = 0, cands = 0, rows = 0;
	if (!keys || !vals)
		goto done;
	for (void *inp = NULL;; inp = &in) {
		__u32 count = WALK_BATCH;
		err = bpf_map_lookup_batch(fd, inp, &out, keys, vals, &count,
					   NULL);
		if (err && errno != ENOENT)
			break;
		for (__u32 i = 0; i < count; i++) {
			const struct gr_sched_thread *t =
				(const void *)(vals + i * vsz);
			if (!t->off_ts || t->woken || t->run_ts ||
			    !state_d(t->state))
				continue;
			struct gr_sched_open *o =
				gr_sched__open_find(&h->opens, keys[i]);
			if (o && o->off_ts == t->off_ts)
				o->seen = h->walks;
			if (now - (int64_t)t->off_ts < min ||
			    !traced(h, t->tgid))
				continue;
			cands++;
			rows += (unsigned)write_open(h, fd, keys[i], t, now);
		}
		n += count;
		if (err) {
			err = 0; /* ENOENT: the last batch */
			break;
		}
		in = out;
	}
done:
	if (err || !keys || !vals)
		GR_HOST_LOG(h, "sched: cannot read the thread states: %s",
			    strerror(err ? errno : ENOMEM));
	free(keys);
	free(vals);
	/* An interval open at neither this walk nor the one before has
	 * ended, and its record has been drained: if it is still here, the
	 * record was lost (or its thread exited). */
	for (size_t i = 0; i < h->opens.n;)
		if (h->opens.v[i].seen + 1 < h->walks)
			gr_sched__open_drop(&h->opens, i);
		else
			i++;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (h->o.verbose)
		GR_HOST_LOG(h, "sched: walked %u threads in %.0f us: %u away "
			    "in D long enough, %u rows%s", n,
			    ((t1.tv_sec - t0.tv_sec) * 1e9 +
			     (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3,
			    cands, rows, last ? " (last)" : "");
}

void gr_sched__forget(struct gr_host *h, uint32_t pid)
{
	for (size_t i = 0; i < h->opens.n;)
		if (h->opens.v[i].pid == pid)
			gr_sched__open_drop(&h->opens, i);
		else
			i++;
}
