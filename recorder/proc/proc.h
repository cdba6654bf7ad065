/* proc.h - records the proc BPF programs share with gpurecd
 * (recorder/proc/).  No includes. */
#ifndef GR_BPF_PROC_H
#define GR_BPF_PROC_H

/* Words of the traced-process bitmap (bpf/common.bpf.h): one bit per tgid up to
 * PID_MAX_LIMIT (4M on 64-bit). */
#define GR_TRACKED_WORDS (1 << 16)

#define GR_EXE_BYTES 256
#define GR_ARGS_BYTES 512

enum gr_proc_rec {
	GR_REC_PEXEC = 48,
	GR_REC_PEXIT,
};

enum gr_proc_drop {
	GR_PROC_DROP_RINGBUF,
	GR_PROC_NDROPS,
};

struct gr_pexec {
	__u32 rec;		/* GR_REC_PEXEC */
	__u32 pid, ppid;
	__u32 args_len;		/* bytes of args (NUL-separated) */
	__u64 ts;		/* exec, boot-time ns */
	__u64 start;		/* the task's start, boot-time ns */
	__u64 cgroup;		/* cgroup v2 id */
	__u64 exe_ino;		/* the executable's inode and device, to */
	__u32 exe_dev;		/* check a relative path resolved later */
	__u32 pad;
	char comm[16];
	char exe[GR_EXE_BYTES];	/* as passed to execve */
	char args[GR_ARGS_BYTES];
};

struct gr_pexit {
	__u32 rec;		/* GR_REC_PEXIT */
	__u32 pid;
	__s32 code;		/* task->exit_code: wait(2) status */
	__u32 pad;
	__u64 ts;
	__u64 start;
	char comm[16];
};

#endif
