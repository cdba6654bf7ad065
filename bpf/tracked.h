/* tracked.h - the set of traced processes the sched, io and proc objects
 * share (gpurecd reuses one map fd for all three), as a bitmap indexed by
 * tgid: an array lookup the verifier inlines, a few ns, where a hash
 * lookup cost tens on every context switch and system call of the host.
 * PID_MAX_LIMIT is 4M on 64-bit kernels: 64K words, 512 KiB.
 * Included by BPF code only, after vmlinux.h and bpf_helpers.h. */
#ifndef GR_BPF_TRACKED_H
#define GR_BPF_TRACKED_H

#include "proc.h" /* GR_TRACKED_WORDS, which gpurecd needs too */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	/* gpurecd maps it and sets and clears bits with atomics, so its
	 * changes and proc.bpf.c's never undo each other. */
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, GR_TRACKED_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps");

const volatile __u32 self_tgid = 0;
const volatile __u32 trace_all = 0;

static __always_inline int is_tracked(__u32 tgid)
{
	if (!tgid || tgid == self_tgid)
		return 0;
	if (trace_all)
		return 1;
	__u32 k = tgid >> 6;
	__u64 *w = bpf_map_lookup_elem(&tracked, &k);
	return w && ((*w >> (tgid & 63)) & 1);
}

static __always_inline void untrack(__u32 tgid)
{
	__u32 k = tgid >> 6;
	__u64 *w = bpf_map_lookup_elem(&tracked, &k);
	if (w)
		__sync_fetch_and_and(w, ~(1ull << (tgid & 63)));
}

#endif
