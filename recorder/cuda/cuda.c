/* cuda.c - the CUDA probe family's user side: its lifecycle.
 *
 * Discovery (attach.c): every mapped ELF of every process, and every
 * executable that starts later, is checked once per file for the entry
 * points in apis.c; uprobes attach to the file, so every process that maps
 * it, now or later, is covered.
 *
 * Which layer records a launch: libcuda sees every launch (the runtime's,
 * cuBLAS's, Triton's), and a uprobe hit is the whole cost of recording
 * one, so a runtime launch must not trap in libcudart too.  Where a driver
 * is attached, the runtime's launch entry points are left alone and each
 * launch is recorded once, at the driver, named from the load-time calls
 * that made its handle.  Two exceptions keep the runtime's launch probes:
 * a host with no driver at all (nothing else would see a launch), and a
 * process that predates gpurecd, whose driver handles were made unseen
 * and whose launches are named instead from the runtime's host stubs;
 * those probes carry the process's pid, so the kernel inserts them into
 * that process alone.  Other calls (copies, allocations, syncs, graphs)
 * stay hooked on both layers and are folded into one row (cuda.bpf.c):
 * they are rarer, and the runtime's arguments (a copy's direction) say
 * more than the driver's.
 *
 * Where each part lives: attach.c finds the files and attaches (and keeps
 * the per-process runtime launch probes above); decode.c turns a record
 * into a row, per the API's shape (apis.c); naming.c names launches;
 * nccl.c follows each process's NCCL communicators, from their creation
 * to their destruction, to give every nccl row its comm_id and every
 * collective its seq (docs/recorder.md, "NCCL").  This file owns the BPF
 * object, the ring buffer and the order a record's parts are done in.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda.skel.h"
#include "recorder/cuda/internal.h"
#include "recorder/family.h"

/* The dictionary id of s, from *keep if it holds one of this generation
 * of the dictionary (decode.h), else interned and kept there. */
static int64_t intern(struct gr_cuda *c, uint32_t gen, const char *s,
		      struct gr_cuda_strid *keep)
{
	if (keep && keep->gen == gen && keep->id)
		return keep->id;
	uint32_t id = gr_writer__intern(c->o.w, s, strlen(s));
	if (keep && id)
		*keep = (struct gr_cuda_strid){ gen, id };
	return id;
}

/* Where the id of a comm is kept: its slot in a small direct-mapped
 * cache, taken over (its id forgotten) if it held another comm.  The
 * processes recording at a time are few; their comms rarely collide. */
static struct gr_cuda_strid *comm_keep(struct gr_cuda *c, const char *comm)
{
	uint64_t w[2];
	memcpy(w, comm, sizeof(w));
	uint64_t h = (w[0] ^ w[1] * 0x9e3779b97f4a7c15ull) *
		     0xbf58476d1ce4e5b9ull;
	struct comm_id *s = &c->comm_ids[h >> 58];
	if (memcmp(s->comm, comm, sizeof(s->comm))) {
		memcpy(s->comm, comm, sizeof(s->comm));
		s->id = (struct gr_cuda_strid){ 0 };
	}
	return &s->id;
}
_Static_assert(GR_CUDA_COMM_IDS == 64, "comm_keep takes the top 6 bits");

/* Decodes one call into its row and writes it: the row's own columns
 * first, then what the family's state adds (the kernel's name, the
 * communicator), strings interned in the order they were set.  The
 * comm, the API's name and the kernel's names are nearly every row's:
 * their ids are kept, not looked up again. */
static void decode_call(struct gr_cuda *c, const struct gr_cuda_call *e,
			const char *name)
{
	struct gr_cuda_row r;
	if (gr_cuda_decode__call(e, c->o.clock_offset_ns, &r)) {
		c->st.decode_errors++;
		return;
	}
	const struct gr_api *a = &gr_apis[e->api];
	if (c->o.on_pid)
		c->o.on_pid(c->o.on_pid_ctx, e->pid);
	if (r.table == GR_T_cuda_kernel)
		gr_cuda_name_launch(c, e, a, &r);
	else if (r.table == GR_T_nccl)
		gr_nccl__track(&c->nccl, e, a, &r);
	else if (a->shape == GR_SH_NAME)
		gr_cuda_name_record(c, e, a, name);
	uint32_t gen = gr_writer__dict_gen(c->o.w);
	for (int i = 0; i < r.nstr; i++) {
		struct gr_cuda_strid *keep = r.str[i].keep;
		/* decode.c sets those two columns from these very strings. */
		if (r.str[i].s == r.comm)
			keep = comm_keep(c, r.comm);
		else if (r.str[i].s == a->sym)
			keep = &c->api_ids[e->api];
		r.v[r.str[i].col] = intern(c, gen, r.str[i].s, keep);
	}
	if (gr_writer__append(c->o.w, r.table, r.v, r.nm)) {
		c->user_drops++;
		return;
	}
	c->st.rows++;
}

/* An exec: the pid is queued for the daemon to scan, and its old image's
 * communicators are forgotten. */
static void on_exec(struct gr_cuda *c, uint32_t pid)
{
	if (c->nexecs == c->execs_cap) {
		int cap = c->execs_cap ? c->execs_cap * 2 : 64;
		int *p = realloc(c->execs, (size_t)cap * sizeof(int));
		if (!p)
			return;
		c->execs = p;
		c->execs_cap = cap;
	}
	c->execs[c->nexecs++] = (int)pid;
	gr_nccl__forget_pid(&c->nccl, pid); /* a new image */
	/* The new image, at once: a short program may be gone before its
	 * first scan, and its launches are named from its executable's
	 * symbols. */
	gr_cuda_maps(c, pid, 1);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gr_cuda *c = ctx;
	struct gr_cuda_record rec;
	c->st.records++;
	switch (gr_cuda_decode__record(data, len, &rec)) {
	case GR_CUDA_REC_CALL:
		decode_call(c, rec.call, rec.name);
		break;
	case GR_CUDA_REC_EXEC:
		on_exec(c, rec.exec_pid);
		break;
	case GR_CUDA_REC_ENTER:
		/* It entered cuInit, and may never return: traced now (the
		 * BPF side has set its bit already, where shared). */
		if (c->o.on_pid)
			c->o.on_pid(c->o.on_pid_ctx, rec.enter_pid);
		break;
	case GR_CUDA_REC_UNKNOWN:
		c->st.decode_errors++;
		break;
	case GR_CUDA_REC_SHORT:
		break;
	}
	return 0;
}

struct gr_cuda *gr_cuda__open(const struct gr_cuda_opts *o)
{
	struct gr_cuda *c = calloc(1, sizeof(*c));
	int err;
	if (!c)
		return NULL;
	c->o = *o;
	if (!(c->api_ids = calloc((size_t)gr_napis, sizeof(*c->api_ids)))) {
		err = -errno;
		LOG(c, "cuda: %s", strerror(-err));
		goto fail;
	}
	c->elfs = o->elfs;
	if (!c->elfs && !(c->elfs = c->own_elfs = gr_elfcache__new(0))) {
		err = -errno;
		LOG(c, "cuda: cannot make the ELF cache: %s", strerror(-err));
		goto fail;
	}
	c->skel = cuda_bpf__open();
	if (!c->skel) {
		err = -errno;
		LOG(c, "cuda: cannot open the BPF object: %s", strerror(-err));
		goto fail;
	}
	c->skel->rodata->self_tgid = o->record_self ? 0 : (uint32_t)getpid();
	if (o->ringbuf_bytes &&
	    (err = bpf_map__set_max_entries(c->skel->maps.events,
					     o->ringbuf_bytes))) {
		LOG(c, "cuda: bad ring buffer size %u", o->ringbuf_bytes);
		goto fail;
	}
	/* An announced call marks its process in the host families'
	 * traced-process bitmap (cuda.bpf.c): theirs, shared, or a one-word
	 * stand-in of its own, which nothing reads. */
	struct bpf_map *tm = c->skel->maps.tracked;
	err = o->tracked_fd > 0 ? bpf_map__reuse_fd(tm, o->tracked_fd) :
				  -ENOENT;
	if (err && o->tracked_fd > 0)
		LOG(c, "cuda: cannot share the traced-process map (%s): a "
		       "process hung in cuInit is traced only once gpurecd "
		       "reads its entry", strerror(-err));
	if (err)
		bpf_map__set_max_entries(tm, 1);
	/* Records wait for the drain timer until a quarter of the ring
	 * buffer is full; then the reader is woken at once. */
	c->skel->rodata->wake_bytes =
		bpf_map__max_entries(c->skel->maps.events) / 4;
	c->progs = (struct gr_uprobe_progs){
		c->skel->progs.cuda_entry, c->skel->progs.cuda_return,
		c->skel->progs.cuda_entry_multi, c->skel->progs.cuda_return_multi,
		c->skel->progs.cuda_session };
	static const char *const how[] = {
		[GR_ULINK_SINGLE] = "one uprobe link per probe (no multi-uprobe "
				    "links in this kernel: stopping takes "
				    "about 0.1 s per probe)",
		[GR_ULINK_MULTI] = "one multi-uprobe link per file and "
				   "direction",
		[GR_ULINK_SESSION] = "one uprobe-session link per file",
	};
	LOG(c, "cuda: probes attach as %s", how[gr_ulink__prepare(&c->progs)]);
	if ((err = cuda_bpf__load(c->skel))) {
		LOG(c, "cuda: the kernel refused the BPF programs: %s",
		    strerror(-err));
		goto fail;
	}
	struct bpf_link *l = bpf_program__attach(c->skel->progs.proc_exec);
	if (!l)
		LOG(c, "cuda: cannot attach raw_tp/sched_process_exec (%s): "
		       "processes started later are found by rescans only",
		    strerror(errno));
	else if ((err = gr_ulinks__add(&c->links, l, 0)))
		goto fail;
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_record,
				 c, NULL);
	if (!c->rb) {
		err = -errno;
		LOG(c, "cuda: cannot create the ring buffer: %s", strerror(-err));
		goto fail;
	}
	return c;
fail:
	gr_cuda__close(c);
	errno = -err;
	return NULL;
}

/* Every probe at once (recorder/ulink.c: the kernel's waits overlap).
 * Without memory for the list, the global sets go here and each
 * process's goes with it in gr_cuda_procs_free(), in the background; the
 * caller waits for those (gr_ulinks__wait). */
static void detach_all(struct gr_cuda *c)
{
	int nsets = 2, nl = c->links.n + c->rt_links.n;
	uint64_t probes = (uint64_t)(c->links.probes + c->rt_links.probes);
	for (size_t i = 0; i < c->procs.cap; i++) {
		const struct proc *p = c->procs.e[i].v;
		if (p) {
			nsets++;
			nl += p->links.n;
			probes += (uint64_t)p->links.probes;
		}
	}
	struct gr_ulinks *two[2] = { &c->links, &c->rt_links };
	struct gr_ulinks **sets = calloc((size_t)nsets, sizeof(*sets));
	if (sets) {
		memcpy(sets, two, sizeof(two));
		nsets = 2;
		for (size_t i = 0; i < c->procs.cap; i++) {
			struct proc *p = c->procs.e[i].v;
			if (p)
				sets[nsets++] = &p->links;
		}
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (nl > 1)
		LOG(c, "cuda: detaching %d links (%" PRIu64 " probes)", nl,
		    probes);
	gr_ulinks__detach(sets ? sets : two, sets ? nsets : 2);
	free(sets);
	gr_cuda_procs_free(c);
	gr_ulinks__wait();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (nl > 1)
		LOG(c, "cuda: detached in %.2f s",
		    (double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

void gr_cuda__close(struct gr_cuda *c)
{
	if (!c)
		return;
	detach_all(c); /* and the processes' state */
	ring_buffer__free(c->rb);
	cuda_bpf__destroy(c->skel);
	gr_cuda_seen_free(c);
	gr_cuda_names_free(c);
	gr_cuda_maps_free(c);
	gr_nccl__free(&c->nccl);
	free(c->execs);
	free(c->postponed);
	free(c->api_ids);
	free(c);
}

int gr_cuda__fd(struct gr_cuda *c)
{
	return ring_buffer__epoll_fd(c->rb);
}

int gr_cuda__poll(struct gr_cuda *c)
{
	return ring_buffer__consume(c->rb);
}

_Static_assert((int)GR_FAMILY_NDROPS_cuda == (int)GR_DROP_NSLOTS,
	       "families.def names each of cuda.bpf.c's drop counters");

void gr_cuda__report_drops(struct gr_cuda *c, int64_t now_ns)
{
	gr_family__drops(c->o.w, GR_FAM_cuda,
			 (const uint64_t *)c->skel->bss->drops, c->drops_seen,
			 now_ns);
	if (c->user_drops != c->user_drops_seen) {
		gr_family__drop_row(c->o.w, "cuda:store",
				    c->user_drops - c->user_drops_seen, now_ns);
		c->user_drops_seen = c->user_drops;
	}
}

void gr_cuda__stats(const struct gr_cuda *c, struct gr_cuda_stats *st)
{
	*st = c->st;
	st->names = c->nnames;
	st->names_bytes = c->names_bytes;
}
