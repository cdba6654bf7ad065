// SPDX-License-Identifier: GPL-2.0
/* proc.bpf.c - process execs and exits, host-wide, for the `process` table.
 *
 * A process may exec, call CUDA and exit between two drains of the ring
 * buffer, and by then /proc has nothing left to read.  So the exec record
 * carries what identifies it (parent, executable as passed to execve,
 * arguments, cgroup id, start time) and the exit record carries the exit
 * status; gpurecd keeps them for the processes that turn out to use CUDA
 * and their parents.  Execs and exits are rare next to switches and
 * calls, so there is no filter here.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "proc.h"

#define GR_RINGBUF_BYTES (1 << 20)
#define GR_NDROPS GR_PROC_NDROPS
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* sched_process_exec(struct task_struct *p, pid_t old_pid,
 * struct linux_binprm *bprm): the new image is in place, its arguments on
 * its stack. */
SEC("raw_tp/sched_process_exec")
int proc_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (void *)ctx->args[0];
	struct linux_binprm *bprm = (void *)ctx->args[2];
	struct gr_pexec *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(GR_PROC_DROP_RINGBUF);
		return 0;
	}
	e->rec = GR_REC_PEXEC;
	e->pid = BPF_CORE_READ(p, tgid);
	e->ppid = BPF_CORE_READ(p, real_parent, tgid);
	e->ts = bpf_ktime_get_boot_ns();
	e->start = BPF_CORE_READ(p, start_boottime);
	e->cgroup = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->exe_ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	e->exe_dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	e->pad = 0;
	const char *fn = BPF_CORE_READ(bprm, filename);
	if (bpf_probe_read_kernel_str(e->exe, sizeof(e->exe), fn) < 0)
		e->exe[0] = 0;
	unsigned long as = BPF_CORE_READ(p, mm, arg_start);
	unsigned long ae = BPF_CORE_READ(p, mm, arg_end);
	__u32 n = ae > as ? ae - as : 0;
	if (n > sizeof(e->args))
		n = sizeof(e->args);
	e->args_len = 0;
	if (n && bpf_probe_read_user(e->args, n & (GR_ARGS_BYTES - 1) ?
				     n & (GR_ARGS_BYTES - 1) : GR_ARGS_BYTES,
				     (void *)as) == 0)
		e->args_len = n;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

#define SIGNAL_GROUP_EXIT 0x4 /* include/linux/sched/signal.h */

/* sched_process_exit(struct task_struct *p[, bool group_dead]): the
 * process is gone when its last thread exits, whichever thread that is
 * (main may have called pthread_exit; a thread that execs kills the old
 * leader first).  signal->live has dropped to 0 by then on every kernel,
 * with or without the group_dead argument (6.16+). */
SEC("raw_tp/sched_process_exit")
int proc_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (void *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (tgid == self_tgid || BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	struct gr_pexit *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(GR_PROC_DROP_RINGBUF);
		return 0;
	}
	e->rec = GR_REC_PEXIT;
	e->pid = tgid;
	/* What wait(2) reports: the group's status after exit_group() or
	 * a fatal signal, else the leader's own exit. */
	if (BPF_CORE_READ(p, signal, flags) & SIGNAL_GROUP_EXIT)
		e->code = BPF_CORE_READ(p, signal, group_exit_code);
	else
		e->code = BPF_CORE_READ(p, group_leader, exit_code);
	e->pad = 0;
	e->ts = bpf_ktime_get_boot_ns();
	e->start = BPF_CORE_READ(p, group_leader, start_boottime);
	bpf_core_read_str(e->comm, sizeof(e->comm), &p->comm);
	bpf_ringbuf_submit(e, 0);
	/* Its threads are gone: stop tracing the pid (it may be reused). */
	untrack(tgid);
	return 0;
}
