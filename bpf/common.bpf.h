/* common.bpf.h - what every probe family's BPF object has: its ring
 * buffer `events`, the wake policy (wake_bytes, wake_flag()), its drop
 * counters `drops[]` (user space reads them from .bss and turns them into
 * `drops` rows), gpurecd's own tgid, and for the host families (sched, io,
 * proc) the traced-process bitmap they share.
 *
 * Included by BPF code only, after vmlinux.h and bpf_helpers.h, with
 * GR_RINGBUF_BYTES (the ring buffer's size) and GR_NDROPS (the family's
 * drop counters) defined.  A family that defines GR_TRACKED_WORDS (from
 * recorder/proc/proc.h) gets the bitmap, `trace_all`, is_tracked() and
 * untrack().
 */
#ifndef GR_BPF_COMMON_H
#define GR_BPF_COMMON_H

#if !defined(GR_RINGBUF_BYTES) || !defined(GR_NDROPS)
#error "define GR_RINGBUF_BYTES and GR_NDROPS before common.bpf.h"
#endif

const volatile __u32 self_tgid = 0;
/* Wake the reader only once this much is waiting: a wakeup per record
 * would cost every traced event an irq_work and a context switch of
 * gpurecd, which drains on its own timer anyway (every few ms).  User
 * space sets it to a quarter of the ring buffer. */
const volatile __u64 wake_bytes = 1 << 20;

__u64 drops[GR_NDROPS];

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, GR_RINGBUF_BYTES);
} events SEC(".maps");

static __always_inline void drop(int slot)
{
	__sync_fetch_and_add(&drops[slot], 1);
}

static __always_inline __u64 wake_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* A per-thread state map `threads` (a map of @maptype with @n entries of
 * @value_t, keyed by tid) and `zero`, the zeroed template new entries are
 * copied from (too big for the BPF stack). */
#define GR_THREAD_MAPS(maptype, n, value_t)                                    \
	struct {                                                               \
		__uint(type, maptype);                                         \
		__uint(max_entries, n);                                        \
		__type(key, __u32);                                            \
		__type(value, value_t);                                        \
	} threads SEC(".maps");                                                \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                       \
		__uint(max_entries, 1);                                        \
		__type(key, __u32);                                            \
		__type(value, value_t);                                        \
	} zero SEC(".maps")

#ifdef GR_TRACKED_WORDS
/* The set of traced processes the sched, io and proc objects share
 * (gpurecd reuses one map fd for all three), as a bitmap indexed by tgid:
 * an array lookup the verifier inlines, a few ns, where a hash lookup cost
 * tens on every context switch and system call of the host.
 * PID_MAX_LIMIT is 4M on 64-bit kernels: 64K words, 512 KiB. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	/* gpurecd maps it and sets and clears bits with atomics, so its
	 * changes and proc.bpf.c's never undo each other. */
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, GR_TRACKED_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps");

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

#endif
