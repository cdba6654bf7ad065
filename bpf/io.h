/* io.h - records the io BPF programs share with gpurecd
 * (recorder/host.c).  No includes. */
#ifndef GR_BPF_IO_H
#define GR_BPF_IO_H

#define GR_PATH_BYTES 256

enum gr_io_rec {
	GR_REC_BLOCK = 32,
	GR_REC_FILE,
};

enum gr_io_drop {
	GR_IO_DROP_RINGBUF,
	GR_IO_NDROPS,
};

struct gr_block {
	__u32 rec;		/* GR_REC_BLOCK */
	__u32 pid, tid;		/* the submitter, 0 if unknown */
	__u32 dev;		/* major << 20 | minor (the kernel's dev_t) */
	__u64 ts, dur;		/* issue, issue to completion */
	__u64 sector;
	__u32 bytes;
	__u32 op;		/* cmd_flags & REQ_OP_MASK */
	__s32 error;
	__u32 pad;
	char comm[16];
};

struct gr_file {
	__u32 rec;		/* GR_REC_FILE */
	__u32 pid, tid;
	__u32 nr;		/* x86-64 syscall number */
	__u64 ts, dur;
	__s64 fd;		/* argument, or for opens the result */
	__s64 ret;
	char comm[16];
	char path[GR_PATH_BYTES]; /* opens only */
};

#endif
