/* probe_cost.c - `make bench`'s probe.launch_cost_ratio: what recording
 * one kernel launch costs the launching thread, as a multiple of one empty
 * uprobe on the same function, measured side by side in one run.
 *
 * The function stands in for cudaLaunchKernel (same argument layout, so
 * the entry program copies the same registers and stack slots).  Rounds
 * alternate: no probe, an empty uprobe, gpurecd's entry and return
 * programs with cudaLaunchKernel's cookie (the ring buffer drained between
 * batches, as gpurecd does).  Needs root.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/cuda.h"
#include "cuda.skel.h"
#include "probe_cost.skel.h"
#include "recorder/cuda_apis.h"
#include "recorder/elfsyms.h"

struct dim3 { unsigned x, y, z; };

__attribute__((noinline)) int fake_launch(const void *func, struct dim3 grid,
					  struct dim3 block, void **args,
					  size_t smem, void *stream)
{
	__asm__ volatile("" ::: "memory");
	return (int)(grid.x + block.x + smem) + (args != NULL) +
	       (stream != NULL) + (func != NULL);
}

static int on_rec(void *ctx, void *data, size_t len)
{
	(*(uint64_t *)ctx)++;
	(void)data;
	(void)len;
	return 0;
}

static double run(int n, struct ring_buffer *rb)
{
	struct timespec a, b;
	void *args[1] = { 0 };
	volatile int sink = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) {
		sink += fake_launch((void *)run, (struct dim3){ 4, 2, 1 },
				    (struct dim3){ 128, 1, 1 }, args, 4096,
				    (void *)0x1234);
		if (rb && (i & 4095) == 4095)
			ring_buffer__consume(rb);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (rb)
		ring_buffer__consume(rb);
	(void)sink;
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 +
		(double)(b.tv_nsec - a.tv_nsec)) / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	uint64_t off[1], got = 0;
	struct gr_elf *e = gr_elf__open("/proc/self/exe");
	if (!e || gr_elf__find(e, "fake_launch", off, 1) != 1) {
		fprintf(stderr, "probe-cost: cannot find fake_launch in itself\n");
		return 2;
	}
	gr_elf__close(e);
	struct probe_cost_bpf *pc = probe_cost_bpf__open_and_load();
	struct cuda_bpf *cb = cuda_bpf__open_and_load();
	if (!pc || !cb) {
		fprintf(stderr, "probe-cost: cannot load BPF (root?): %s\n",
			strerror(errno));
		return 2;
	}
	struct ring_buffer *rb = ring_buffer__new(
		bpf_map__fd(cb->maps.events), on_rec, &got, NULL);
	int api = -1;
	for (int i = 0; i < gr_napis; i++)
		if (strcmp(gr_apis[i].sym, "cudaLaunchKernel") == 0)
			api = i;
	double base = 0, empty = 0, rec = 0;
	int rounds = 5;
	for (int r = 0; r < rounds; r++) {
		base += run(n, NULL);
		struct bpf_link *l = bpf_program__attach_uprobe_opts(
			pc->progs.empty, -1, "/proc/self/exe", off[0], NULL);
		if (!l)
			return fprintf(stderr, "probe-cost: attach failed\n"), 2;
		empty += run(n, NULL);
		bpf_link__destroy(l);
		LIBBPF_OPTS(bpf_uprobe_opts, uo,
			    .bpf_cookie = gr_api__cookie(api));
		struct bpf_link *in = bpf_program__attach_uprobe_opts(
			cb->progs.cuda_entry, -1, "/proc/self/exe", off[0], &uo);
		uo.retprobe = true;
		struct bpf_link *out = bpf_program__attach_uprobe_opts(
			cb->progs.cuda_return, -1, "/proc/self/exe", off[0], &uo);
		if (!in || !out)
			return fprintf(stderr, "probe-cost: attach failed\n"), 2;
		rec += run(n, rb);
		bpf_link__destroy(in);
		bpf_link__destroy(out);
	}
	base /= rounds, empty /= rounds, rec /= rounds;
	if (got != (uint64_t)n * rounds) {
		fprintf(stderr, "probe-cost: %llu records for %d launches\n",
			(unsigned long long)got, n * rounds);
		return 2;
	}
	printf("probe.launch_cost_ratio %.2f x\n", (rec - base) / (empty - base));
	printf("# per call: no probe %.1f ns, empty uprobe %.0f ns, recorded "
	       "launch %.0f ns (%d calls x %d rounds, interleaved)\n", base,
	       empty, rec, n, rounds);
	ring_buffer__free(rb);
	cuda_bpf__destroy(cb);
	probe_cost_bpf__destroy(pc);
	return 0;
}
