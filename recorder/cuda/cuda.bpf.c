// SPDX-License-Identifier: GPL-2.0
/* cuda.bpf.c - uprobes on the CUDA runtime and driver APIs.
 *
 * Two programs serve every hooked API.  The entry program copies the
 * argument registers and the first stack slots into a per-thread frame;
 * the return program pops the frame and emits one record with the return
 * code, the duration, any out-pointer (the allocation, the new graph) read
 * back and, where the cookie asks, a struct an argument points at (launch
 * configs, 2D/3D copy parameters: const, and still the caller's at
 * return).  Decoding arguments into columns is user space's job
 * (recorder/cuda/decode.c), which keeps this side small and the same for every
 * API.
 *
 * Layers: libcudart calls libcuda, so one cudaLaunchKernel passes through
 * two hooked functions.  Frames stack per thread; a call made while a call
 * of the same layer group is open on the thread is folded into the outer
 * one (its function handle, for launches, is kept), so each launch, copy
 * or allocation is one row whichever layers it crossed.
 *
 * Announced calls (GR_CK_ANNOUNCE: cuInit) also say so at entry: the
 * process is marked traced in the host families' bitmap at once, before
 * the thread can block in the call (the sched family sees a switch-out
 * only of a traced thread, and a driver initialization that hangs may
 * never switch out again), and a GR_REC_ENTER record tells user space,
 * which starts tracing it (its `process` row).  One bit test of the
 * cookie is all other calls pay.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cuda.h"
#include "recorder/proc/proc.h" /* GR_TRACKED_WORDS */

#define GR_RINGBUF_BYTES (8 << 20)
#define GR_NDROPS GR_DROP_NSLOTS
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";


struct frame {
	__u64 ts;
	__u64 cookie;
	__u64 args[GR_NARGS];
	__u64 inner_func;
	__u32 nested;
	__u32 pad;
};

struct tstate {
	__u32 depth;
	__u32 pad;
	struct frame f[GR_MAX_DEPTH];
};

GR_THREAD_MAPS(BPF_MAP_TYPE_LRU_HASH, 65536, struct tstate);

/* Stack arguments copied at entry (GR_CK_STACK), per thread, until the
 * return: rare calls (communicator set-up), so a small map. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8[GR_STRUCT_BYTES]);
} stacked SEC(".maps");

/* An announced call entered: its process is traced from now on.  The
 * bitmap is the host families' own when gpurecd shares it (recorder/cuda/
 * cuda.c), else a one-word map whose lookups miss. */
static __always_inline void announce(__u64 id, __u64 cookie)
{
	__u32 tgid = id >> 32, k = tgid >> 6;
	__u64 *w = bpf_map_lookup_elem(&tracked, &k);
	if (w)
		__sync_fetch_and_or(w, 1ull << (tgid & 63));
	struct gr_cuda_enter *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(GR_DROP_RINGBUF);
		return;
	}
	e->rec = GR_REC_ENTER;
	e->api = GR_CK_API(cookie);
	e->pid = tgid;
	e->tid = (__u32)id;
	e->ts = bpf_ktime_get_boot_ns();
	/* At once: the thread may block in the call for good. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* The entry of every hooked API. */
static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, zk = 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct tstate *t;
	struct frame *f;

	if ((id >> 32) == self_tgid)
		return 0;
	if (GR_CK_ANNOUNCE(cookie))
		announce(id, cookie);
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t) {
		struct tstate *z = bpf_map_lookup_elem(&zero, &zk);
		if (!z)
			return 0;
		bpf_map_update_elem(&threads, &tid, z, BPF_ANY);
		t = bpf_map_lookup_elem(&threads, &tid);
		if (!t)
			return 0;
	}
	__u32 d = t->depth;
	if (d >= GR_MAX_DEPTH) {
		/* Keep counting depth so returns stay matched. */
		t->depth = d + 1;
		drop(GR_DROP_DEPTH);
		return 0;
	}
	f = &t->f[d & (GR_MAX_DEPTH - 1)];
	f->ts = bpf_ktime_get_boot_ns();
	f->cookie = cookie;
	f->inner_func = 0;
	f->nested = 0;
	if (!GR_CK_ALWAYS(cookie))
		for (int i = 0; i < d && i < GR_MAX_DEPTH; i++)
			if (GR_CK_GROUP(t->f[i].cookie) == GR_CK_GROUP(cookie))
				f->nested = 1;
	t->depth = d + 1;
	if (f->nested && !GR_CK_LAUNCH(cookie))
		return 0; /* folded into the outer call: nothing to keep */

	f->args[0] = PT_REGS_PARM1(ctx);
	f->args[1] = PT_REGS_PARM2(ctx);
	f->args[2] = PT_REGS_PARM3(ctx);
	f->args[3] = PT_REGS_PARM4(ctx);
	f->args[4] = PT_REGS_PARM5(ctx);
	f->args[5] = ctx->r9; /* PT_REGS_PARM6: libbpf 1.1 lacks it */
	/* At entry the stack holds the return address, then arguments 7… */
	bpf_probe_read_user(&f->args[6], 4 * sizeof(__u64),
			    (void *)(PT_REGS_SP(ctx) + 8));
	if (GR_CK_STACK(cookie)) {
		__u8 st[GR_STRUCT_BYTES];
		if (bpf_probe_read_user(st, sizeof(st),
					(void *)(PT_REGS_SP(ctx) + 8)))
			__builtin_memset(st, 0, sizeof(st));
		bpf_map_update_elem(&stacked, &tid, st, BPF_ANY);
	}
	return 0;
}

/* Copies the struct the cookie names into st, zeros where it was not
 * read (the ring buffer's memory is not cleared for us). */
static __always_inline void read_struct(__u8 *st, __u64 cookie,
					const struct frame *f, __u32 tid)
{
	__u32 si = GR_CK_STRUCT(cookie);
	if (GR_CK_STACK(cookie)) {
		__u8 *s = bpf_map_lookup_elem(&stacked, &tid);
		if (s)
			__builtin_memcpy(st, s, GR_STRUCT_BYTES);
		else
			__builtin_memset(st, 0, GR_STRUCT_BYTES);
		bpf_map_delete_elem(&stacked, &tid);
		return;
	}
	if (!si || si > 6) {
		__builtin_memset(st, 0, GR_STRUCT_BYTES);
		return;
	}
	void *p = (void *)(f->args[(si - 1) & 7] + GR_CK_STRUCT_OFF(cookie));
	if (GR_CK_WIDE(cookie) && !bpf_probe_read_user(st, GR_STRUCT_BYTES, p))
		return;
	/* Narrow, or wide across an unmapped page: the first 64 bytes. */
	if (bpf_probe_read_user(st, GR_STRUCT_NARROW, p))
		__builtin_memset(st, 0, GR_STRUCT_NARROW);
	__builtin_memset(st + GR_STRUCT_NARROW, 0,
			 GR_STRUCT_BYTES - GR_STRUCT_NARROW);
}

/* The return of every hooked API. */
static __always_inline int on_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct tstate *t;
	struct frame *f;

	if ((id >> 32) == self_tgid)
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || t->depth == 0) {
		drop(GR_DROP_UNMATCHED);
		return 0;
	}
	__u32 d = t->depth - 1;
	t->depth = d;
	if (d >= GR_MAX_DEPTH)
		return 0; /* its entry was not kept */
	f = &t->f[d & (GR_MAX_DEPTH - 1)];
	if (GR_CK_API(f->cookie) != GR_CK_API(cookie)) {
		/* Entry and return disagree: the stack cannot be trusted. */
		t->depth = 0;
		drop(GR_DROP_UNMATCHED);
		return 0;
	}
	if (f->nested) {
		/* Folded: hand a launch's function handle to the outer
		 * launch frame, which is the one recorded. */
		if (GR_CK_LAUNCH(cookie) && d > 0) {
			struct frame *o = &t->f[(d - 1) & (GR_MAX_DEPTH - 1)];
			if (GR_CK_LAUNCH(o->cookie) && !o->inner_func)
				o->inner_func = f->args[0];
		}
		return 0;
	}

	__u32 ni = GR_CK_NAME(cookie);
	struct gr_cuda_call *e;
	if (ni)
		e = bpf_ringbuf_reserve(&events, sizeof(struct gr_cuda_call_name), 0);
	else
		e = bpf_ringbuf_reserve(&events, sizeof(struct gr_cuda_call), 0);
	if (!e) {
		drop(GR_DROP_RINGBUF);
		return 0;
	}
	e->rec = ni ? GR_REC_CALL_NAME : GR_REC_CALL;
	e->api = GR_CK_API(cookie);
	e->pid = id >> 32;
	e->tid = tid;
	e->ts = f->ts;
	e->dur = bpf_ktime_get_boot_ns() - f->ts;
	e->ret = PT_REGS_RC(ctx);
	__builtin_memcpy(e->args, f->args, sizeof(e->args));
	read_struct(e->st, cookie, f, tid);
	e->inner_func = f->inner_func;
	e->out = 0;
	__u32 oi = GR_CK_OUT(cookie);
	if (oi >= 1 && oi <= GR_NARGS) {
		__u32 k = oi - 1;
		if (k < GR_NARGS) /* restated for the verifier */
			bpf_probe_read_user(&e->out, sizeof(e->out),
					    (void *)f->args[k]);
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (ni >= 1 && ni <= GR_NARGS) {
		struct gr_cuda_call_name *n = (void *)e;
		__u32 k = ni - 1;
		if (k >= GR_NARGS ||
		    bpf_probe_read_user_str(n->name, sizeof(n->name),
					    (void *)f->args[k]) < 0)
			n->name[0] = 0;
	} else if (ni) {
		struct gr_cuda_call_name *n = (void *)e;
		n->name[0] = 0;
	}
	bpf_ringbuf_submit(e, wake_flag());
	return 0;
}

/* Each body as loaded for single uprobe links, for multi-uprobe links
 * and for a uprobe session (recorder/ulink.c: the kernel ties a program
 * to one kind; user space loads only what it will use). */
SEC("uprobe")
int cuda_entry(struct pt_regs *ctx)
{
	return on_entry(ctx);
}

SEC("uretprobe")
int cuda_return(struct pt_regs *ctx)
{
	return on_return(ctx);
}

SEC("uprobe")
int cuda_entry_multi(struct pt_regs *ctx)
{
	return on_entry(ctx);
}

SEC("uretprobe")
int cuda_return_multi(struct pt_regs *ctx)
{
	return on_return(ctx);
}

/* Linux 6.13: a session runs one program at entry and at return, so a
 * file's probes are one link.  Weak: a kernel without it loads the rest. */
extern bool bpf_session_is_return(void) __ksym __weak;

SEC("uprobe")
int cuda_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return on_return(ctx);
	on_entry(ctx);
	return 0; /* 0: run at the return too */
}

/* Every exec on the host: user space looks for CUDA in the new image. */
SEC("raw_tp/sched_process_exec")
int proc_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gr_proc_exec *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(GR_DROP_RINGBUF);
		return 0;
	}
	e->rec = GR_REC_EXEC;
	e->pid = id >> 32;
	e->ts = bpf_ktime_get_boot_ns();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/* At once: the new image is scanned as soon as it is seen. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}
