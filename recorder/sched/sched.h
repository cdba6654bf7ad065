/* sched.h - records the sched BPF programs share with gpurecd
 * (recorder/sched/).  No includes: both sides include this after their own
 * integer types. */
#ifndef GR_BPF_SCHED_H
#define GR_BPF_SCHED_H

#define GR_KSTACK_DEPTH 24	/* frames kept per off-CPU stack, kernel */
#define GR_USTACK_DEPTH 32	/* and user */
#define GR_WSTACK_DEPTH 16	/* frames of the wakeup, kernel */

enum gr_sched_rec {
	GR_REC_OFFCPU = 16,	/* distinct from the other families' records */
	GR_REC_RUNQ,
};

enum gr_sched_drop {
	GR_SCHED_DROP_RINGBUF,	/* ring buffer full: a record was lost */
	GR_SCHED_DROP_THREADS,	/* no room for a thread's state */
	GR_SCHED_NDROPS,
};

struct gr_offcpu {
	__u32 rec;		/* GR_REC_OFFCPU */
	__u32 pid, tid;
	__u32 state;		/* prev->__state when it left the CPU */
	__u64 ts, dur;		/* boot-time ns */
	__u32 waker_pid, waker_tid; /* 0: not seen */
	__s32 kbytes, ubytes;	/* bpf_get_stack() results (<0: none) */
	char comm[16];
	__u64 kstack[GR_KSTACK_DEPTH];
	__u64 ustack[GR_USTACK_DEPTH];
	/* Where the wakeup ran: in an interrupt (a timer, a completion)
	 * the waker is whatever task the interrupt hit, not a waker. */
	__u64 wstack[GR_WSTACK_DEPTH];
};

/* A thread's state in sched.bpf.c's `threads` hash (keyed by tid), which
 * gpurecd also reads: every 5 s it walks the map for threads away in
 * state D for long (recorder/sched/sched.c, gr_sched__walk). */
struct gr_sched_thread {
	__u64 off_ts;		/* left the CPU blocked at; 0 if running */
	__u64 run_ts;		/* runnable since; 0 if not waiting */
	__u32 state;
	__u32 waker_pid, waker_tid;
	__s32 kbytes, ubytes;
	__u32 woken;		/* sched_waking seen since it last ran */
	__u32 away;		/* switched out, switch-in not seen yet */
	__u32 tgid;		/* its process, as it last left the CPU */
	__u64 exec_out;		/* its sum_exec_runtime when it last left */
	__u64 kstack[GR_KSTACK_DEPTH];
	__u64 ustack[GR_USTACK_DEPTH];
	__u64 wstack[GR_WSTACK_DEPTH];
};

struct gr_runq {
	__u32 rec;		/* GR_REC_RUNQ */
	__u32 pid, tid, cpu;
	__u64 ts, dur;
	char comm[16];
};

#endif
