/* io.h - records the io BPF programs share with gpurecd
 * (recorder/io/).  No includes. */
#ifndef GR_BPF_IO_H
#define GR_BPF_IO_H

#define GR_PATH_BYTES 256

/* The x86-64 system calls file_io records. */
enum gr_file_nr {
	NR_read = 0, NR_write = 1, NR_open = 2, NR_pread64 = 17,
	NR_pwrite64 = 18, NR_readv = 19, NR_writev = 20, NR_fsync = 74,
	NR_fdatasync = 75, NR_openat = 257, NR_preadv = 295,
	NR_pwritev = 296, NR_preadv2 = 327, NR_pwritev2 = 328,
	NR_openat2 = 437,
};

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
