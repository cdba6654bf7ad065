/* cuda.h - records the cuda BPF programs share with gpurecd.
 *
 * No includes: both the BPF side (vmlinux.h types) and user space include
 * this after their own integer types.
 *
 * Each probe is attached with a 64-bit cookie describing the API it sits
 * on, so two programs (entry, return) serve every API:
 *   bits  0-15  api id (an index of gr_apis[], recorder/cuda/apis.c)
 *   bits 16-19  layer group: calls nested in a call of the same group on
 *               the same thread are folded into the outer one (a
 *               cudaMemcpy that calls cuMemcpyDtoH_v2 is one row)
 *   bits 20-23  1 + index of a register argument pointing at a struct to
 *               copy at return (the caller's struct is still there, and
 *               the frame need not hold it meanwhile), or 0
 *   bits 24-28  offset into that struct, in 8-byte units
 *   bits 32-35  1 + index of an out-pointer argument read at return
 *               (the allocated pointer, the new graph), or 0
 *   bits 36-39  1 + index of a C-string argument copied at return, or 0
 *   bit  40     a launch: its driver function handle is merged into an
 *               outer launch of the same group
 *   bit  41     always recorded, even nested (load-time name calls that
 *               the runtime makes inside other calls)
 *   bit  42     copy GR_STRUCT_BYTES of the struct, not the first 64 (a
 *               copy's parameters, whose pointers and extent lie far
 *               apart; launch configs end sooner, and reading past a
 *               struct's end may cross into an unmapped page and fail)
 *   bit  43     copy GR_STRUCT_BYTES of the stack arguments at entry (a
 *               struct passed by value, which the callee owns and may
 *               overwrite: ncclCommInitRank's 128-byte unique id) into st
 *   bit  44     announce at entry: the entry marks the process traced in
 *               the host families' bitmap (when gpurecd shares it) and
 *               emits a GR_REC_ENTER record, so that a call that never
 *               returns (cuInit hung in a driver whose GPU fell off the
 *               bus) still makes its process a GPU process; the return
 *               emits the call record as usual
 */
#ifndef GR_BPF_CUDA_H
#define GR_BPF_CUDA_H

#define GR_CK_API(c)        ((c) & 0xffff)
#define GR_CK_GROUP(c)      (((c) >> 16) & 0xf)
#define GR_CK_STRUCT(c)     (((c) >> 20) & 0xf)
#define GR_CK_STRUCT_OFF(c) ((((c) >> 24) & 0x1f) * 8)
#define GR_CK_OUT(c)        (((c) >> 32) & 0xf)
#define GR_CK_NAME(c)       (((c) >> 36) & 0xf)
#define GR_CK_LAUNCH(c)     (((c) >> 40) & 1)
#define GR_CK_ALWAYS(c)     (((c) >> 41) & 1)
#define GR_CK_WIDE(c)       (((c) >> 42) & 1)
#define GR_CK_STACK(c)      (((c) >> 43) & 1)
#define GR_CK_ANNOUNCE(c)   (((c) >> 44) & 1)

#define GR_NARGS 10        /* 6 registers and 4 stack slots (x86-64) */
#define GR_STRUCT_BYTES 128
#define GR_STRUCT_NARROW 64
#define GR_NAME_BYTES 256
#define GR_MAX_DEPTH 4

enum gr_cuda_rec {
	GR_REC_CALL = 1,    /* struct gr_cuda_call */
	GR_REC_CALL_NAME,   /* struct gr_cuda_call + name[GR_NAME_BYTES] */
	GR_REC_EXEC,        /* struct gr_proc_exec */
	GR_REC_ENTER,       /* struct gr_cuda_enter */
};

struct gr_cuda_call {
	__u32 rec;
	__u32 api;
	__u32 pid, tid;
	__u64 ts;           /* entry, CLOCK_BOOTTIME ns */
	__u64 dur;
	__s64 ret;          /* rax at return */
	__u64 args[GR_NARGS];
	__u8 st[GR_STRUCT_BYTES]; /* the struct; zeros where unread */
	__u64 out;          /* *args[out] at return */
	__u64 inner_func;   /* a nested launch's function handle, or 0 */
	char comm[16];
};

struct gr_cuda_call_name {
	struct gr_cuda_call c;
	char name[GR_NAME_BYTES];
};

struct gr_proc_exec {
	__u32 rec;
	__u32 pid;
	__u64 ts;
	char comm[16];
};

/* A call with GR_CK_ANNOUNCE entered (its return, if any, comes later as
 * a GR_REC_CALL). */
struct gr_cuda_enter {
	__u32 rec;
	__u32 api;
	__u32 pid, tid;
	__u64 ts;           /* entry, CLOCK_BOOTTIME ns */
};

/* Counters user space reads from .bss and turns into `drops` rows. */
enum gr_cuda_drop {
	GR_DROP_RINGBUF,    /* ring buffer full: a record was lost */
	GR_DROP_DEPTH,      /* nesting deeper than GR_MAX_DEPTH */
	GR_DROP_UNMATCHED,  /* a return without its entry (probe attached
	                     * mid-call, or a longjmp) */
	GR_DROP_NSLOTS,
};

#endif
