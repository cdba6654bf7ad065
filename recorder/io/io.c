/* io.c - the io family's user side: loading io.bpf.c, and its block and
 * file records into block_io and file_io rows (decode.c). */
#include <linux/types.h>

#include "io.skel.h"
#include "recorder/hostfam.h"
#include "recorder/io/decode.h"

static int on_record(void *ctx, void *data, size_t len)
{
	struct gr_host *h = ctx;
	struct gr_row r;
	if (gr_io__decode(&h->dctx, data, len, &r) >= 0)
		gr_host__put(h, &r);
	return 0;
}

GR_HFAM_SKEL_FNS(io)

void gr_io__open(struct gr_host *h, uint32_t self)
{
	static const char *const progs[] = {
		"block_rq_issue", "block_rq_complete", "sys_enter", "sys_exit",
		NULL };
	struct io_bpf *s = io_bpf__open();
	if (s) {
		s->rodata->self_tgid = self;
		s->rodata->trace_all = h->o.trace_all ? 1 : 0;
		s->rodata->file_min_ns = (uint64_t)h->o.file_io_min_ns;
		s->rodata->wake_bytes =
			bpf_map__max_entries(s->maps.events) / 4;
	}
	/* block_io_start is 6.5+: without it, requests are attributed to
	 * the task current at issue. */
	struct gr_hfam_skel k = {
		.skel = s, .obj = s ? s->obj : NULL, .load = io_load_,
		.destroy = io_destroy_, .drops = io_drops_, .progs = progs,
		.optional = "block_io_start",
		.optional_msg = "no block_io_start tracepoint: block requests "
				"are attributed to the task that issues them",
		.on_record = on_record,
	};
	gr_hfam__open(h, GR_FAM_io, &k);
}
