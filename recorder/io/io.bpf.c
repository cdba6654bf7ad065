// SPDX-License-Identifier: GPL-2.0
/* io.bpf.c - block requests host-wide, issue to completion, and the file
 * system calls of GPU processes, from raw tracepoints.
 *
 * Block: block_io_start (kernel 6.5+) runs in the submitter's context, so
 * it names the process a request is for; block_rq_issue starts the clock
 * (and names current, where block_io_start is missing); block_rq_complete
 * emits the request.  Requests are keyed by their address.
 *
 * Files: sys_enter/sys_exit fire for every system call on the host; the
 * number is checked first (a switch), then the tgid's bit in `tracked`.
 * Calls shorter than file_min_ns are dropped at exit, except opens, whose
 * paths name the descriptors later calls use.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "io.h"
#include "recorder/proc/proc.h" /* GR_TRACKED_WORDS */

#define GR_RINGBUF_BYTES (4 << 20)
#define GR_NDROPS GR_IO_NDROPS
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 file_min_ns = 1000000;

struct rq_state {
	__u64 issue;
	__u32 pid, tid;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rq_state);
} rqs SEC(".maps");

struct call {
	__u64 ts;
	__s64 fd;
	__u32 nr;
	__u32 pad;
	char path[GR_PATH_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct call);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct call);
} scratch SEC(".maps");

/* ---- block ---------------------------------------------------------------- */

/* Names the task a request is for; 0 if it is gpurecd's own (it never
 * records itself). */
static __always_inline int name_current(struct rq_state *s)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((id >> 32) == self_tgid)
		return 0;
	s->pid = id >> 32;
	s->tid = (__u32)id;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	return 1;
}

SEC("raw_tp/block_io_start")
int block_io_start(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 rq = ctx->args[0];
	struct rq_state s = {};
	if (name_current(&s))
		bpf_map_update_elem(&rqs, &rq, &s, BPF_ANY);
	else
		bpf_map_delete_elem(&rqs, &rq);
	return 0;
}

SEC("raw_tp/block_rq_issue")
int block_rq_issue(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 rq = ctx->args[0];
	struct rq_state *s = bpf_map_lookup_elem(&rqs, &rq);
	if (s) {
		s->issue = bpf_ktime_get_boot_ns();
		return 0;
	}
	struct rq_state n = {};
	if (!name_current(&n))
		return 0;
	n.issue = bpf_ktime_get_boot_ns();
	bpf_map_update_elem(&rqs, &rq, &n, BPF_ANY);
	return 0;
}

/* block_rq_complete(struct request *rq, blk_status_t error,
 * unsigned int nr_bytes) */
SEC("raw_tp/block_rq_complete")
int block_rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (void *)ctx->args[0];
	__u64 key = ctx->args[0];
	struct rq_state *s = bpf_map_lookup_elem(&rqs, &key);
	if (!s || !s->issue)
		return 0;
	struct gr_block *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(GR_IO_DROP_RINGBUF);
		bpf_map_delete_elem(&rqs, &key);
		return 0;
	}
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
	e->rec = GR_REC_BLOCK;
	e->pid = s->pid;
	e->tid = s->tid;
	__builtin_memcpy(e->comm, s->comm, sizeof(e->comm));
	e->ts = s->issue;
	e->dur = bpf_ktime_get_boot_ns() - s->issue;
	e->dev = disk ? ((__u32)BPF_CORE_READ(disk, major) << 20) |
			(__u32)BPF_CORE_READ(disk, first_minor) : 0;
	e->sector = BPF_CORE_READ(rq, __sector);
	e->bytes = (__u32)ctx->args[2];
	e->op = BPF_CORE_READ(rq, cmd_flags) & 0xff; /* REQ_OP_MASK */
	e->error = (__s32)ctx->args[1];
	e->pad = 0;
	bpf_ringbuf_submit(e, wake_flag());
	bpf_map_delete_elem(&rqs, &key);
	return 0;
}

/* ---- files ---------------------------------------------------------------- */

static __always_inline int is_file_call(long nr)
{
	switch (nr) {
	case NR_read: case NR_write: case NR_open: case NR_pread64:
	case NR_pwrite64: case NR_readv: case NR_writev: case NR_fsync:
	case NR_fdatasync: case NR_openat: case NR_preadv: case NR_pwritev:
	case NR_preadv2: case NR_pwritev2: case NR_openat2:
		return 1;
	}
	return 0;
}

static __always_inline int is_open(long nr)
{
	return nr == NR_open || nr == NR_openat || nr == NR_openat2;
}

/* sys_enter(struct pt_regs *regs, long id) */
SEC("raw_tp/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	long nr = (long)ctx->args[1];
	if (!is_file_call(nr))
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	if (!is_tracked(id >> 32))
		return 0;
	__u32 k = 0;
	struct call *c = bpf_map_lookup_elem(&scratch, &k);
	if (!c)
		return 0;
	struct pt_regs *regs = (void *)ctx->args[0];
	c->ts = bpf_ktime_get_boot_ns();
	c->nr = (__u32)nr;
	c->fd = (__s64)(int)BPF_CORE_READ(regs, di);
	c->path[0] = 0;
	if (is_open(nr)) {
		const char *p = (const char *)(nr == NR_open ?
			BPF_CORE_READ(regs, di) : BPF_CORE_READ(regs, si));
		bpf_probe_read_user_str(c->path, sizeof(c->path), p);
	}
	bpf_map_update_elem(&calls, &tid, c, BPF_ANY);
	return 0;
}

/* sys_exit(struct pt_regs *regs, long ret) */
SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	if (!is_tracked(id >> 32))
		return 0; /* the common case: one bit test */
	struct call *c = bpf_map_lookup_elem(&calls, &tid);
	if (!c)
		return 0;
	/* An entry whose exit never came (exit_group, a thread gone) must
	 * not be taken for this call's. */
	struct pt_regs *regs = (void *)ctx->args[0];
	if (BPF_CORE_READ(regs, orig_ax) != c->nr) {
		bpf_map_delete_elem(&calls, &tid);
		return 0;
	}
	__u64 now = bpf_ktime_get_boot_ns();
	long ret = (long)ctx->args[1];
	if (now - c->ts >= file_min_ns || is_open(c->nr)) {
		struct gr_file *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			e->rec = GR_REC_FILE;
			e->pid = id >> 32;
			e->tid = tid;
			e->nr = c->nr;
			e->ts = c->ts;
			e->dur = now - c->ts;
			e->fd = is_open(c->nr) ? ret : c->fd;
			e->ret = ret;
			bpf_get_current_comm(e->comm, sizeof(e->comm));
			__builtin_memcpy(e->path, c->path, sizeof(e->path));
			bpf_ringbuf_submit(e, wake_flag());
		} else {
			drop(GR_IO_DROP_RINGBUF);
		}
	}
	bpf_map_delete_elem(&calls, &tid);
	return 0;
}
