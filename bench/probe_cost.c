/* probe_cost.c - `make bench`'s probe.launch_cost_ratio: what recording
 * one kernel launch costs the launching thread, as a multiple of one empty
 * uprobe on the function that records it, measured side by side in one run.
 *
 * The launch is real in all but the GPU: a runtime launch through the mock
 * libcudart and libcuda of tests/cuda/mock (the real entry points' names
 * and prototypes; cudaLaunchKernel calls cuLaunchKernel, as on a GPU host).
 * Rounds alternate four ways:
 *   none     no probe;
 *   empty    one empty uprobe on the driver's cuLaunchKernel;
 *   gpurecd  the CUDA probe family attached to both files as gpurecd
 *            attaches it (recorder/cuda/cuda.c: launches recorded at the driver
 *            only), rows written to a scratch store;
 *   both     gpurecd's programs on both layers' launch entry points, folded
 *            into one record: the design before, for comparison.
 * Each round checks one named row (or record) per launch; records are
 * drained by a second thread, as gpurecd drains them in its own process.
 * Needs root.
 *
 * `probe-cost --attach SYM[,SYM…] FILE…` instead attaches the empty uprobe
 * to those functions of those files (libcuda's cuLaunchKernel on a GPU
 * host) and holds it until SIGINT/SIGTERM: the unit that a real
 * workload's slowdown under gpurecd is divided by (tests/gpu/validate.sh).
 */
#include <bpf/libbpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "recorder/cuda/cuda.h"
#include "cuda.skel.h"
#include "probe_cost.skel.h"
#include "recorder/cuda/family.h"
#include "recorder/cuda/apis.h"
#include "recorder/sym/elfsyms.h"
#include "store/store.h"

struct dim3 { unsigned x, y, z; };
typedef int (*launch_fn)(const void *, struct dim3, struct dim3, void **,
			 size_t, void *);

/* The host stub of a kernel the mock runtime launches. */
__attribute__((noinline, used)) void bench_stub(void) __asm__("_Z5benchPf");
void bench_stub(void)
{
	__asm__ volatile("" ::: "memory");
}

static int on_rec(void *ctx, void *data, size_t len)
{
	(*(uint64_t *)ctx)++;
	(void)data;
	(void)len;
	return 0;
}

static void quiet(const char *fmt, ...)
{
	(void)fmt;
}

static void store_quiet(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

/* What drains the records while launches run: a thread of its own, as
 * gpurecd is a process of its own (decoding and storing a row is not the
 * launching thread's cost). */
struct drainer {
	struct ring_buffer *rb;   /* a plain consumer, or */
	struct gr_cuda *gc;       /* gpurecd's: decode and store */
	volatile int stop;
	pthread_t th;
};

static void drain_once(struct drainer *d)
{
	if (d->rb)
		ring_buffer__consume(d->rb);
	if (d->gc)
		gr_cuda__poll(d->gc);
}

static void *drain_loop(void *arg)
{
	struct drainer *d = arg;
	int fd = d->rb ? ring_buffer__epoll_fd(d->rb) : gr_cuda__fd(d->gc);
	while (!d->stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		poll(&p, 1, 10);
		drain_once(d);
	}
	return NULL;
}

/* n launches with d (or nothing) draining.  Returns ns per launch. */
static double run(launch_fn launch, int n, struct drainer *d)
{
	struct timespec a, b;
	void *args[1] = { 0 };
	int bad = 0;
	if (d && pthread_create(&d->th, NULL, drain_loop, d))
		d = NULL;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		bad |= launch((const void *)bench_stub, (struct dim3){ 4, 2, 1 },
			      (struct dim3){ 128, 1, 1 }, args, 4096,
			      (void *)0x1234);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (d) {
		d->stop = 1;
		pthread_join(d->th, NULL);
		drain_once(d);
	}
	if (bad)
		fprintf(stderr, "probe-cost: a mock launch failed\n");
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 +
		(double)(b.tv_nsec - a.tv_nsec)) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int api_id(const char *sym)
{
	for (int i = 0; i < gr_napis; i++)
		if (strcmp(gr_apis[i].sym, sym) == 0)
			return i;
	return -1;
}

/* Attaches gpurecd's entry and return programs to sym in path. */
static int attach_rec(struct cuda_bpf *cb, const char *path, const char *sym,
		      struct bpf_link **l)
{
	uint64_t off;
	struct gr_elf *e = gr_elf__open_find(path, &sym, 1);
	int ok = e && gr_elf__find(e, sym, &off, 1) == 1;
	gr_elf__close(e);
	if (!ok)
		return -ENOENT;
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = gr_api__cookie(api_id(sym)));
	l[0] = bpf_program__attach_uprobe_opts(cb->progs.cuda_entry, -1, path,
					       off, &uo);
	uo.retprobe = true;
	l[1] = bpf_program__attach_uprobe_opts(cb->progs.cuda_return, -1, path,
					       off, &uo);
	return l[0] && l[1] ? 0 : -EINVAL;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* --attach: empty uprobes on syms (comma-separated) of each file. */
static int hold_empty(char *syms, char **files, int nfiles)
{
	struct probe_cost_bpf *pc = probe_cost_bpf__open_and_load();
	int nlinks = 0;
	if (!pc) {
		fprintf(stderr, "probe-cost: cannot load BPF (root?): %s\n",
			strerror(errno));
		return 2;
	}
	for (int i = 0; i < nfiles; i++) {
		char *save = NULL, *list = strdup(syms);
		for (char *s = strtok_r(list, ",", &save); s;
		     s = strtok_r(NULL, ",", &save)) {
			const char *name = s;
			struct gr_elf *e = gr_elf__open_find(files[i], &name, 1);
			if (!e) {
				fprintf(stderr, "probe-cost: %s: %s\n",
					files[i], strerror(errno));
				return 2;
			}
			uint64_t off[4];
			int n = gr_elf__find(e, s, off, 4);
			gr_elf__close(e);
			for (int k = 0; k < n; k++) {
				if (!bpf_program__attach_uprobe_opts(pc->progs.empty,
						-1, files[i], off[k], NULL)) {
					fprintf(stderr, "probe-cost: attach %s in "
						"%s: %s\n", s, files[i],
						strerror(errno));
					return 2;
				}
				nlinks++;
			}
		}
		free(list);
	}
	fprintf(stderr, "probe-cost: %d empty uprobes attached; SIGTERM ends\n",
		nlinks);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop)
		pause();
	probe_cost_bpf__destroy(pc); /* the links go with the process */
	return nlinks ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 3 && strcmp(argv[1], "--attach") == 0)
		return hold_empty(argv[2], argv + 3, argc - 3);
	const char *mock = argc > 1 ? argv[1] : "build/cuda-tests/mock";
	int n = argc > 2 ? atoi(argv[2]) : 20000;
	enum { rounds = 9 };
	char drv[4096], rt[4096], dir[] = "/tmp/gpurec-cost-XXXXXX";
	snprintf(drv, sizeof(drv), "%s/libcuda.so.1", mock);
	snprintf(rt, sizeof(rt), "%s/libcudart.so.13", mock);
	/* dlopen takes the path as given; uprobes want the same file. */
	void *h = dlopen(rt, RTLD_NOW);
	launch_fn launch = h ? (launch_fn)dlsym(h, "cudaLaunchKernel") : NULL;
	void (*reg)(void **, const char *, char *, const char *, int, void *,
		    void *, void *, void *, int *) =
		h ? dlsym(h, "__cudaRegisterFunction") : NULL;
	int (*reset)(void) = h ? dlsym(h, "cudaDeviceReset") : NULL;
	if (!launch || !reg || !reset) {
		fprintf(stderr, "probe-cost: cannot load the mock runtime %s: "
			"%s\n", rt, dlerror());
		return 2;
	}
	reg(NULL, (const char *)bench_stub, (char *)"_Z5benchPf", "_Z5benchPf",
	    -1, NULL, NULL, NULL, NULL, NULL);
	struct probe_cost_bpf *pc = probe_cost_bpf__open_and_load();
	/* The design before attaches a link per probe (attach_rec): the
	 * bulk-link programs, which load only for their link type
	 * (recorder/ulink.c), are left out. */
	struct cuda_bpf *cb = cuda_bpf__open();
	if (cb) {
		bpf_program__set_autoload(cb->progs.cuda_entry_multi, false);
		bpf_program__set_autoload(cb->progs.cuda_return_multi, false);
		bpf_program__set_autoload(cb->progs.cuda_session, false);
		if (cuda_bpf__load(cb)) {
			cuda_bpf__destroy(cb);
			cb = NULL;
		}
	}
	uint64_t off, got = 0;
	const char *drv_launch = "cuLaunchKernel";
	struct gr_elf *e = gr_elf__open_find(drv, &drv_launch, 1);
	if (!pc || !cb || !e || gr_elf__find(e, drv_launch, &off, 1) != 1 ||
	    !mkdtemp(dir)) {
		fprintf(stderr, "probe-cost: cannot load BPF (root?) or read "
			"%s: %s\n", drv, strerror(errno));
		return 2;
	}
	gr_elf__close(e);
	struct ring_buffer *rb = ring_buffer__new(
		bpf_map__fd(cb->maps.events), on_rec, &got, NULL);
	struct gr_store_opts so = { .dir = dir, .host = "bench",
				    .no_immutable = 1, .log = store_quiet };
	struct gr_writer *w = gr_writer__open(&so);
	if (!rb || !w) {
		fprintf(stderr, "probe-cost: ring buffer or store in %s: %s\n",
			dir, strerror(errno));
		return 2;
	}
	double t[4] = { 0 }, ratio[2][rounds];
	for (int r = 0; r < rounds; r++) {
		double t0[4];
		memcpy(t0, t, sizeof(t));
		t[0] += run(launch, n, NULL);

		struct bpf_link *l = bpf_program__attach_uprobe_opts(
			pc->progs.empty, -1, drv, off, NULL);
		if (!l)
			return fprintf(stderr, "probe-cost: attach failed\n"), 2;
		t[1] += run(launch, n, NULL);
		bpf_link__destroy(l);

		struct gr_cuda_opts co = { .w = w, .log = quiet,
					   .record_self = 1 };
		struct gr_cuda *gc = gr_cuda__open(&co);
		struct gr_cuda_stats s0, s1;
		if (!gc || gr_cuda__attach_path(gc, drv) <= 0 ||
		    gr_cuda__attach_path(gc, rt) <= 0)
			return fprintf(stderr, "probe-cost: gpurecd's attach "
				       "failed\n"), 2;
		/* Handles made from now on, as in a process started after
		 * gpurecd: the first launch names the kernel. */
		reset();
		gr_cuda__stats(gc, &s0);
		struct drainer dg = { .gc = gc };
		t[2] += run(launch, n, &dg);
		gr_cuda__stats(gc, &s1);
		gr_cuda__close(gc);
		/* One row per launch and one for cuLibraryGetKernel. */
		if (s1.named_launches - s0.named_launches != (uint64_t)n ||
		    s1.rows - s0.rows != (uint64_t)n + 1) {
			fprintf(stderr, "probe-cost: %llu rows, %llu named, for "
				"%d launches\n",
				(unsigned long long)(s1.rows - s0.rows),
				(unsigned long long)(s1.named_launches -
						     s0.named_launches), n);
			return 2;
		}

		struct bpf_link *lk[4] = { 0 };
		got = 0;
		if (attach_rec(cb, rt, "cudaLaunchKernel", lk) ||
		    attach_rec(cb, drv, "cuLaunchKernel", lk + 2))
			return fprintf(stderr, "probe-cost: attach failed\n"), 2;
		struct drainer dr = { .rb = rb };
		t[3] += run(launch, n, &dr);
		for (int i = 0; i < 4; i++)
			bpf_link__destroy(lk[i]);
		if (got != (uint64_t)n) {
			fprintf(stderr, "probe-cost: %llu records for %d "
				"launches\n", (unsigned long long)got, n);
			return 2;
		}
		double d[4];
		for (int i = 0; i < 4; i++)
			d[i] = t[i] - t0[i];
		ratio[0][r] = (d[2] - d[0]) / (d[1] - d[0]);
		ratio[1][r] = (d[3] - d[0]) / (d[1] - d[0]);
	}
	/* The median of the rounds' ratios: one noisy round (this is a
	 * shared VM) moves it least. */
	qsort(ratio[0], rounds, sizeof(double), cmp_double);
	qsort(ratio[1], rounds, sizeof(double), cmp_double);
	for (int i = 0; i < 4; i++)
		t[i] /= rounds;
	printf("probe.launch_cost_ratio %.2f x\n", ratio[0][rounds / 2]);
	printf("probe.launch_cost_ratio_both_layers %.2f x\n",
	       ratio[1][rounds / 2]);
	printf("# median of %d interleaved rounds of %d runtime launches "
	       "(range %.2f-%.2f; both layers %.2f-%.2f); mean per launch: no "
	       "probe %.1f ns, empty uprobe on cuLaunchKernel %.0f ns, gpurecd "
	       "%.0f ns, both layers %.0f ns\n", rounds, n, ratio[0][0],
	       ratio[0][rounds - 1], ratio[1][0], ratio[1][rounds - 1], t[0],
	       t[1], t[2], t[3]);
	ring_buffer__free(rb);
	cuda_bpf__destroy(cb);
	probe_cost_bpf__destroy(pc);
	gr_writer__close(w);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 2;
}
