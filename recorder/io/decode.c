/* decode.c - the io family's records into block_io and file_io rows. */
#include <stdio.h>
#include <string.h>

#include "recorder/io/decode.h"

static void decode_block(const struct gr_dctx *d, const struct gr_block *e,
			 struct gr_row *r)
{
	char comm[17], dev[32];
	static const char *const ops[] = {
		[0] = "R", [1] = "W", [2] = "F", [3] = "D", [5] = "D",
		[9] = "W", /* REQ_OP_WRITE_ZEROES */
	};
	gr_row__init(r, GR_T_block_io);
	r->v[GR_block_io_ts] = gr_dctx__utc(d, e->ts);
	if (e->pid) {
		gr_row__comm(comm, e->comm);
		r->v[GR_block_io_pid] = e->pid;
		r->v[GR_block_io_tid] = e->tid;
		r->v[GR_block_io_comm] = gr_dctx__str(d, comm);
	} else {
		r->nm |= 1ull << GR_block_io_pid | 1ull << GR_block_io_tid |
			 1ull << GR_block_io_comm;
	}
	r->v[GR_block_io_dur] = (int64_t)e->dur;
	snprintf(dev, sizeof(dev), "%u:%u", e->dev >> 20, e->dev & 0xfffff);
	r->v[GR_block_io_dev] = gr_dctx__str(d, dev);
	const char *op = e->op < sizeof(ops) / sizeof(ops[0]) && ops[e->op] ?
			 ops[e->op] : "?";
	r->v[GR_block_io_op] = gr_dctx__str(d, op);
	r->v[GR_block_io_bytes] = e->bytes;
	r->v[GR_block_io_sector] = (int64_t)e->sector;
	/* The name, looked up where the request happened: a reader on
	 * another host could only guess it (its /sys names its own disks). */
	const char *name = d->devname && e->dev ?
			   d->devname(d->ctx, e->dev) : NULL;
	if (name)
		r->v[GR_block_io_disk] = gr_dctx__str(d, name);
	else
		r->nm |= 1ull << GR_block_io_disk;
}

const char *gr_io__syscall_name(uint32_t nr)
{
	switch (nr) {
	case NR_read: return "read";
	case NR_write: return "write";
	case NR_open: return "open";
	case NR_pread64: return "pread64";
	case NR_pwrite64: return "pwrite64";
	case NR_readv: return "readv";
	case NR_writev: return "writev";
	case NR_fsync: return "fsync";
	case NR_fdatasync: return "fdatasync";
	case NR_openat: return "openat";
	case NR_preadv: return "preadv";
	case NR_pwritev: return "pwritev";
	case NR_preadv2: return "preadv2";
	case NR_pwritev2: return "pwritev2";
	case NR_openat2: return "openat2";
	}
	return "?";
}

static void decode_file(const struct gr_dctx *d, const struct gr_file *e,
			struct gr_row *r)
{
	char path[GR_PATH_BYTES];
	gr_row__event(r, d, GR_T_file_io, e->ts, e->pid, e->tid, e->comm);
	r->v[GR_file_io_dur] = (int64_t)e->dur;
	r->v[GR_file_io_syscall] = gr_dctx__str(d, gr_io__syscall_name(e->nr));
	r->v[GR_file_io_fd] = e->fd;
	r->v[GR_file_io_bytes] = e->ret;
	memcpy(path, e->path, sizeof(path));
	path[sizeof(path) - 1] = 0;
	if (e->nr == NR_open || e->nr == NR_openat || e->nr == NR_openat2)
		r->v[GR_file_io_path] = gr_dctx__str(d, path);
	else
		r->nm |= 1ull << GR_file_io_path;
}

int gr_io__decode(const struct gr_dctx *d, const void *rec, size_t len,
		  struct gr_row *r)
{
	uint32_t kind;
	if (len < sizeof(kind))
		return -1;
	memcpy(&kind, rec, sizeof(kind));
	if (kind == GR_REC_BLOCK && len >= sizeof(struct gr_block)) {
		decode_block(d, rec, r);
		return GR_T_block_io;
	}
	if (kind == GR_REC_FILE && len >= sizeof(struct gr_file)) {
		decode_file(d, rec, r);
		return GR_T_file_io;
	}
	return -1;
}
