// SPDX-License-Identifier: GPL-2.0
/* sched.bpf.c - off-CPU intervals and run-queue latency of the threads of
 * GPU processes, from the sched_switch and sched_wakeup raw tracepoints
 * (tracefs is absent on GPU hosts, so no classic tracepoints; no fentry or
 * tp_btf on these kernels either).
 *
 * Cheap on a busy host: a switch costs a bit test of each side's tgid in
 * `tracked` (bpf/common.bpf.h: the processes that use CUDA) and nothing more for
 * other processes.  For a tracked thread that blocks, the
 * kernel and user stacks are taken as it leaves the CPU (only then is it
 * the current task, which bpf_get_stack needs); the interval is emitted
 * when it comes back if it lasted at least offcpu_min_ns.  A tracked thread
 * that is woken or preempted is runnable from then until it runs: one runq
 * record of that wait.  An interval that does not end (a thread stuck in
 * state D) is read from `threads` by gpurecd every 5 s and written in
 * pieces meanwhile (recorder/sched/sched.c, gr_sched__walk).
 *
 * Now and then (about one switch in a few thousand on the 6.18 test
 * machines, on a CPU leaving idle) the tracepoint does not run the program
 * for a thread's switch-in; ftrace's sched_switch event misses such
 * switches too.  The thread's next switch-out then finds its interval
 * still open.  The switch-in is recovered from the CPU time the thread has
 * had since it last left: it came back at now - (sum_exec_runtime -
 * sum_exec_runtime at that departure), so no interval is lost.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sched.h"
#include "recorder/proc/proc.h" /* GR_TRACKED_WORDS */

#define GR_RINGBUF_BYTES (4 << 20)
#define GR_NDROPS GR_SCHED_NDROPS
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 offcpu_min_ns = 1000000;
const volatile __u64 runq_min_ns = 0;
__u64 recovered; /* switch-ins the tracepoint did not show (see above) */
/* Blocked threads that came back with no wakeup seen (its tracepoint did
 * not run either, as on a CPU leaving idle): an off-CPU interval with no
 * runq record, counted so that every missing one is accounted for. */
__u64 wakeups_unseen;

/* Per thread: struct gr_sched_thread (sched.h), which gpurecd reads too. */
GR_THREAD_MAPS(BPF_MAP_TYPE_HASH, 16384, struct gr_sched_thread);

#define TASK_DEAD_BIT 0x80

static __always_inline struct gr_sched_thread *tstate_get(__u32 tid)
{
	struct gr_sched_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (t)
		return t;
	__u32 k = 0;
	struct gr_sched_thread *z = bpf_map_lookup_elem(&zero, &k);
	if (!z)
		return NULL;
	if (bpf_map_update_elem(&threads, &tid, z, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&threads, &tid)) {
		drop(GR_SCHED_DROP_THREADS);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline void emit_offcpu(struct gr_sched_thread *t,
					__u32 tgid, __u32 tid,
					struct task_struct *task, __u64 now)
{
	struct gr_offcpu *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(GR_SCHED_DROP_RINGBUF);
		return;
	}
	e->rec = GR_REC_OFFCPU;
	e->pid = tgid;
	e->tid = tid;
	e->state = t->state;
	e->ts = t->off_ts;
	e->dur = now - t->off_ts;
	e->waker_pid = t->waker_pid;
	e->waker_tid = t->waker_tid;
	e->kbytes = t->kbytes;
	e->ubytes = t->ubytes;
	bpf_core_read_str(e->comm, sizeof(e->comm), &task->comm);
	__builtin_memcpy(e->kstack, t->kstack, sizeof(e->kstack));
	__builtin_memcpy(e->ustack, t->ustack, sizeof(e->ustack));
	__builtin_memcpy(e->wstack, t->wstack, sizeof(e->wstack));
	bpf_ringbuf_submit(e, wake_flag());
}

static __always_inline void emit_runq(__u64 since, __u32 tgid, __u32 tid,
				      struct task_struct *task, __u64 now)
{
	struct gr_runq *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(GR_SCHED_DROP_RINGBUF);
		return;
	}
	e->rec = GR_REC_RUNQ;
	e->pid = tgid;
	e->tid = tid;
	e->cpu = bpf_get_smp_processor_id();
	e->ts = since;
	e->dur = now - since;
	bpf_core_read_str(e->comm, sizeof(e->comm), &task->comm);
	bpf_ringbuf_submit(e, wake_flag());
}

/* prev (current) is leaving, and its interval is still open: its
 * switch-in was not seen.  Emits that interval's records, ended when it
 * came back (see the header). */
static __always_inline void recover_switch_in(struct gr_sched_thread *t,
					      __u32 tgid, __u32 tid,
					      struct task_struct *prev,
					      __u64 now)
{
	__u64 ran = BPF_CORE_READ(prev, se.sum_exec_runtime) - t->exec_out;
	__u64 back = now - ran;
	if (ran > now)
		back = now;
	/* It cannot have run before it was woken: CPU time counted in a
	 * clock of its own puts the estimate a few us early at times. */
	if (t->run_ts && back < t->run_ts)
		back = t->run_ts;
	if (t->off_ts && !t->run_ts)
		__sync_fetch_and_add(&wakeups_unseen, 1);
	if (t->off_ts && back > t->off_ts && back - t->off_ts >= offcpu_min_ns)
		emit_offcpu(t, tgid, tid, prev, back);
	if (t->run_ts && back >= t->run_ts && back - t->run_ts >= runq_min_ns)
		emit_runq(t->run_ts, tgid, tid, prev, back);
	t->off_ts = 0;
	t->run_ts = 0;
	t->woken = 0;
	t->away = 0;
	__sync_fetch_and_add(&recovered, 1);
}

/* sched_switch(bool preempt, prev, next, unsigned int prev_state); here
 * current is still prev. */
SEC("raw_tp/sched_switch")
int sched_switch(struct bpf_raw_tracepoint_args *ctx)
{
	bool preempt = (bool)ctx->args[0];
	struct task_struct *next = (void *)ctx->args[2];
	__u32 prev_state = (__u32)ctx->args[3];
	__u64 id = bpf_get_current_pid_tgid(); /* prev is current */
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u64 now = 0;
	struct task_struct *prev = (void *)ctx->args[1];
	struct gr_sched_thread *t;

	if (prev_state & TASK_DEAD_BIT) {
		/* Its last interval, if its switch-in went unseen. */
		if (is_tracked(tgid) &&
		    (t = bpf_map_lookup_elem(&threads, &tid)) && t->away)
			recover_switch_in(t, tgid, tid, prev,
					  bpf_ktime_get_boot_ns());
		/* Tracked or not (its process may be untracked already). */
		bpf_map_delete_elem(&threads, &tid);
	} else if (is_tracked(tgid)) {
		now = bpf_ktime_get_boot_ns();
		if ((t = tstate_get(tid))) {
			if (t->away)
				recover_switch_in(t, tgid, tid, prev, now);
			t->away = 1;
			t->tgid = tgid;
			t->exec_out = BPF_CORE_READ(prev, se.sum_exec_runtime);
			if (!preempt && prev_state) {
				/* Blocked: its stacks say where. */
				t->off_ts = now;
				/* Woken already (between its dequeue and
				 * here): runnable from the moment it left. */
				t->run_ts = t->woken && t->run_ts ? now : 0;
				t->state = prev_state;
				/* A wakeup may come between its dequeue
				 * and this tracepoint: keep that waker. */
				if (!t->woken) {
					t->waker_pid = t->waker_tid = 0;
					t->wstack[0] = 0;
				}
				t->kbytes = bpf_get_stack(ctx, t->kstack,
							  sizeof(t->kstack), 0);
				t->ubytes = bpf_get_stack(ctx, t->ustack,
							  sizeof(t->ustack),
							  BPF_F_USER_STACK);
			} else {
				/* Preempted or yielded: still runnable. */
				t->off_ts = 0;
				t->run_ts = now;
				t->woken = 0;
			}
		}
	}

	tgid = BPF_CORE_READ(next, tgid);
	if (!is_tracked(tgid))
		return 0;
	tid = BPF_CORE_READ(next, pid);
	if (!(t = bpf_map_lookup_elem(&threads, &tid)))
		return 0;
	if (!now)
		now = bpf_ktime_get_boot_ns();
	if (t->off_ts && !t->run_ts)
		__sync_fetch_and_add(&wakeups_unseen, 1);
	if (t->off_ts && now - t->off_ts >= offcpu_min_ns)
		emit_offcpu(t, tgid, tid, next, now);
	if (t->run_ts && now - t->run_ts >= runq_min_ns)
		emit_runq(t->run_ts, tgid, tid, next, now);
	t->off_ts = 0;
	t->run_ts = 0;
	t->woken = 0;
	t->away = 0;
	return 0;
}

/* sched_waking(p) runs in the waker's context, always; sched_wakeup(p)
 * may run on p's CPU from an IPI (remote wakeups are queued), where
 * current is whatever ran there.  So the waker comes from the first, and
 * the time p became runnable from the second. */
SEC("raw_tp/sched_waking")
int sched_waking(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (void *)ctx->args[0];
	if (!is_tracked(BPF_CORE_READ(p, tgid)))
		return 0;
	__u32 tid = BPF_CORE_READ(p, pid);
	struct gr_sched_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || t->woken)
		return 0;
	t->woken = 1;
	__u64 id = bpf_get_current_pid_tgid();
	t->waker_pid = id >> 32;
	t->waker_tid = (__u32)id;
	/* A few frames say whether this is an interrupt (user space
	 * reads them); only for tracked threads' wakeups. */
	if (bpf_get_stack(ctx, t->wstack, sizeof(t->wstack), 0) < 0)
		t->wstack[0] = 0;
	return 0;
}

static __always_inline int on_wakeup(struct task_struct *p, int fresh)
{
	if (!is_tracked(BPF_CORE_READ(p, tgid)))
		return 0;
	__u32 tid = BPF_CORE_READ(p, pid);
	struct gr_sched_thread *t = fresh ? tstate_get(tid) :
				    bpf_map_lookup_elem(&threads, &tid);
	if (t && !t->run_ts)
		t->run_ts = bpf_ktime_get_boot_ns();
	return 0;
}

SEC("raw_tp/sched_wakeup")
int sched_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	return on_wakeup((void *)ctx->args[0], 0);
}

SEC("raw_tp/sched_wakeup_new")
int sched_wakeup_new(struct bpf_raw_tracepoint_args *ctx)
{
	return on_wakeup((void *)ctx->args[0], 1);
}
