/* host.c - the host unit's shared side: the host families of
 * recorder/families.def (proc, sched, io: one BPF object each, sharing
 * the `tracked` map and one ring-buffer poll) opened by one skeleton
 * opener, polled, flushed (their drop counters into `drops` rows) and
 * closed together.  Each family's own lifecycle is recorder/<name>/<name>.c,
 * its records' decoding recorder/<name>/decode.c; the process table is
 * recorder/proc/, off-CPU stacks recorder/sym/stacks.c.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "recorder/cgroup.h"
#include "recorder/hostfam.h"
#include "recorder/proc/proc.h"
#include "recorder/sym/stacks.h"
#include "store/store.h"

int64_t gr_host__boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t intern(void *ctx, const char *s)
{
	struct gr_host *h = ctx;
	return gr_writer__intern(h->o.w, s, strlen(s));
}

/* The name of block device @dev: DEVNAME= of /sys/dev/block/MAJ:MIN/uevent,
 * read the first time the device is seen and kept (devices are few; past
 * 64 of them, the last slot turns over).  Returns NULL where /sys has no
 * name for it. */
static const char *devname(void *ctx, uint32_t dev)
{
	struct gr_host *h = ctx;
	char path[64], line[128], name[32] = "";
	int i;

	for (i = 0; i < h->ndisks; i++)
		if (h->disks[i].dev == dev)
			return h->disks[i].name[0] ? h->disks[i].name : NULL;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", dev >> 20,
		 dev & 0xfffff);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(name, sizeof(name), "%.31s", line + 8);
			break;
		}
	if (f)
		fclose(f);
	/* Full: the last slot is overwritten by each new device (the
	 * caller interns the name before the next lookup). */
	if (h->ndisks == (int)(sizeof(h->disks) / sizeof(h->disks[0])))
		h->ndisks--;
	i = h->ndisks++;
	h->disks[i].dev = dev;
	memcpy(h->disks[i].name, name, sizeof(name));
	return name[0] ? h->disks[i].name : NULL;
}

void gr_host__put(struct gr_host *h, const struct gr_row *r)
{
	if (gr_writer__append(h->o.w, r->table, r->v, r->nm))
		h->user_drops++;
}

/* ---- the one skeleton opener ------------------------------------------------ */

/* Attaches one program; logs and returns -errno if it cannot. */
static int attach(struct gr_host *h, const char *fam, struct bpf_object *obj,
		  const char *prog, int required)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);
	struct bpf_link *l = p ? bpf_program__attach(p) : NULL;
	if (!l) {
		int err = p ? -errno : -ENOENT;
		if (required || h->o.verbose)
			GR_HOST_LOG(h, "%s: cannot attach %s: %s", fam,
				    p ? bpf_program__section_name(p) : prog,
				    strerror(-err));
		return err;
	}
	return gr_ulinks__add(&h->links, l, 0);
}

/* Shares the tracked map: reuse the first loaded object's. */
static int share_tracked(struct gr_host *h, struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "tracked");
	if (!m)
		return -ENOENT;
	return h->tracked_fd >= 0 ? bpf_map__reuse_fd(m, h->tracked_fd) : 0;
}

static int add_rb(struct gr_host *h, struct bpf_object *obj,
		  ring_buffer_sample_fn fn)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "events");
	if (!m)
		return -ENOENT;
	if (!h->rb) {
		h->rb = ring_buffer__new(bpf_map__fd(m), fn, h, NULL);
		return h->rb ? 0 : -errno;
	}
	return ring_buffer__add(h->rb, bpf_map__fd(m), fn, h);
}

/* Attaches the family's programs and adds its ring buffer.  Returns 0 or
 * -1, every link it made undone. */
static int attach_all(struct gr_host *h, const char *fam,
		      const struct gr_hfam_skel *k)
{
	int n0 = h->links.n;
	if (k->optional && attach(h, fam, k->obj, k->optional, 0))
		GR_HOST_LOG(h, "%s: %s", fam, k->optional_msg);
	for (const char *const *p = k->progs; *p; p++)
		if (attach(h, fam, k->obj, *p, 1))
			goto fail;
	if (add_rb(h, k->obj, k->on_record) == 0)
		return 0;
fail:
	gr_ulinks__truncate(&h->links, n0);
	return -1;
}

int gr_hfam__open(struct gr_host *h, enum gr_family f,
		  const struct gr_hfam_skel *k)
{
	const char *fam = gr_families[f].name;
	int err;
	if (!k->skel) {
		GR_HOST_LOG(h, "%s: cannot open the BPF object: %s", fam,
			    strerror(errno));
		return -1;
	}
	if ((err = share_tracked(h, k->obj)) || (err = k->load(k->skel))) {
		GR_HOST_LOG(h, "%s: the kernel refused the BPF programs: %s",
			    fam, strerror(-err));
		k->destroy(k->skel);
		return -1;
	}
	if (attach_all(h, fam, k)) {
		GR_HOST_LOG(h, "%s: family disabled", fam);
		k->destroy(k->skel);
		return -1;
	}
	if (h->tracked_fd < 0)
		h->tracked_fd = bpf_map__fd(bpf_object__find_map_by_name(
			k->obj, "tracked"));
	h->fam[f].skel = k->skel;
	h->fam[f].destroy = k->destroy;
	h->fam[f].drops = k->drops(k->skel);
	return 0;
}

/* ---- lifecycle -------------------------------------------------------------- */

static void map_tracked(struct gr_host *h)
{
	void *bits = mmap(NULL, GR_TRACKED_WORDS * sizeof(uint64_t),
			  PROT_READ | PROT_WRITE, MAP_SHARED, h->tracked_fd, 0);
	if (bits == MAP_FAILED)
		GR_HOST_LOG(h, "host: cannot map the traced-process bitmap "
			    "(%s): only --sched-all traces anything",
			    strerror(errno));
	else
		h->tracked_bits = bits;
}

struct gr_host *gr_host__open(const struct gr_host_opts *o)
{
	static void (*const opens[GR_NFAMILIES])(struct gr_host *, uint32_t) = {
#define GR_FAMILY(name, unit, status)                                          \
	GR_UNIT_##unit([GR_FAM_##name] = gr_##name##__open,)
#include "recorder/families.def"
	};
	struct gr_host *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->o = *o;
	h->tracked_fd = -1;
	h->dctx = (struct gr_dctx){ o->clock_offset_ns, intern, h, devname };
	uint32_t self = o->record_self ? 0 : (uint32_t)getpid();
	int any = 0;
	for (int f = 0; f < GR_NFAMILIES; f++)
		if (opens[f] && !o->off[f]) {
			opens[f](h, self);
			any |= h->fam[f].skel != NULL;
		}
	if (!any) {
		gr_host__close(h);
		errno = ENOTSUP;
		return NULL;
	}
	map_tracked(h);
	if (gr_host__running(h, GR_FAM_sched) &&
	    (h->stacks = gr_stacks__new(o->elfs)) && gr_stacks__ksyms_error(h->stacks))
		GR_HOST_LOG(h, "sched: cannot read /proc/kallsyms (%s): kernel "
			    "frames of off-CPU stacks go unnamed",
			    strerror(gr_stacks__ksyms_error(h->stacks)));
	h->cgroups = gr_cgroups__new();
	char fams[GR_NFAMILIES * 32] = "";
	size_t n = 0;
	for (int f = 0; f < GR_NFAMILIES && n < sizeof(fams); f++)
		if (gr_host__running(h, (enum gr_family)f))
			n += (size_t)snprintf(fams + n, sizeof(fams) - n, "%s%s",
					      n ? ", " : "", gr_families[f].status);
	GR_HOST_LOG(h, "host: recording %s (%s)", fams,
		    o->trace_all ? "every process" : "processes that use CUDA");
	return h;
}

void gr_host__close(struct gr_host *h)
{
	if (!h)
		return;
	if (h->tracked_bits)
		munmap(h->tracked_bits, GR_TRACKED_WORDS * sizeof(uint64_t));
	struct gr_ulinks *all = &h->links;
	gr_ulinks__detach(&all, 1);
	ring_buffer__free(h->rb);
	for (int f = 0; f < GR_NFAMILIES; f++)
		if (h->fam[f].skel)
			h->fam[f].destroy(h->fam[f].skel);
	gr_ptab__clear(&h->procs);
	gr_sched__open_free(&h->opens);
	gr_stacks__free(h->stacks);
	gr_cgroups__free(h->cgroups);
	free(h->segment);
	free(h);
}

int gr_host__running(const struct gr_host *h, enum gr_family f)
{
	return h && h->fam[f].skel != NULL;
}

int gr_host__tracked_fd(const struct gr_host *h)
{
	return h ? h->tracked_fd : -1;
}

int gr_host__fd(struct gr_host *h)
{
	return h->rb ? ring_buffer__epoll_fd(h->rb) : -1;
}

uint64_t gr_host__sched_counter(const struct gr_host *h,
				enum gr_sched_counter c)
{
	return h && h->sched_counter && h->fam[GR_FAM_sched].skel ?
	       h->sched_counter(h->fam[GR_FAM_sched].skel, c) : 0;
}

int gr_host__poll(struct gr_host *h)
{
	return h->rb ? ring_buffer__consume(h->rb) : 0;
}

void gr_host__track(struct gr_host *h, uint32_t pid)
{
	if (h && pid)
		gr_proc__track(h, pid);
}

/* ---- flush: drops rows ------------------------------------------------------ */

static void family_drops(struct gr_host *h, enum gr_family f, int64_t ts)
{
	struct gr_hfam *x = &h->fam[f];
	if (x->skel)
		gr_family__drops(h->o.w, f, x->drops, x->drops_seen, ts);
}

void gr_host__flush(struct gr_host *h, int64_t now_ns, int last)
{
	if (!h)
		return;
	gr_host__poll(h);
	/* After the drain: an interval whose record was waiting is closed
	 * already. */
	gr_sched__walk(h, last);
	/* proc's last: the order the sources were first seen in, which
	 * status.json's drops object keeps, stays what it was. */
	for (int f = 0; f < GR_NFAMILIES; f++)
		if (gr_families[f].host && f != GR_FAM_proc)
			family_drops(h, (enum gr_family)f, now_ns);
	family_drops(h, GR_FAM_proc, now_ns);
	if (h->user_drops != h->user_drops_seen) {
		gr_family__drop_row(h->o.w, "host:store",
				    h->user_drops - h->user_drops_seen, now_ns);
		h->user_drops_seen = h->user_drops;
	}
	gr_proc__flush(h);
}
