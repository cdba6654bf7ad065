/* cuda.c - the CUDA probe family's user side.
 *
 * Discovery: every mapped ELF of every process (and every executable that
 * starts later, reported by the exec tracepoint) is checked once per
 * (device, inode) for the entry points in cuda_apis.c: libcudart and
 * libcuda wherever they live (system, venv, conda, a container's root,
 * found through /proc/PID/map_files so that mount namespaces and deleted
 * files do not matter), and executables or libraries with the runtime
 * linked statically (nvcc's default), whose entry points are local
 * symbols.  Uprobes attach to the file, so every process that maps it, now
 * or later, is covered.
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
 * stay hooked on both layers and are folded into one row (bpf/cuda.bpf.c):
 * they are rarer, and the runtime's arguments (a copy's direction) say
 * more than the driver's.
 *
 * Decoding: the BPF side hands over raw argument registers, stack slots
 * and struct bytes; this file turns them into rows, per the API's shape.
 * NCCL's entry points are found and decoded the same way (rows of the
 * nccl table); this file also follows each process's communicators, from
 * their creation to their destruction, to give every row its comm_id and
 * every collective its seq (docs/recorder.md, "NCCL").
 *
 * Kernel names: a runtime launch passes the host stub, a function in the
 * application whose symbol is the kernel's mangled name, so its name comes
 * from the ELF symbol at that address (processes started before gpurecd
 * included), or, where the file is stripped (PyTorch's libraries are), from
 * the file's own registration code (stubreg.h).  A driver launch passes a
 * CUfunction or CUkernel handle, named from the load-time calls that made
 * it (cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction,
 * __cudaRegisterFunction); a module function made before gpurecd started
 * (PyTorch passes those to cudaLaunchKernel too) is named from the name
 * the driver keeps behind the handle (name_handle).
 */
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "recorder/cuda/cuda.h"
#include "cuda.skel.h"
#include "recorder/cuda/family.h"
#include "recorder/cuda/apis.h"
#include "recorder/sym/elfsyms.h"
#include "recorder/sym/procmaps.h"
#include "recorder/sym/stubreg.h"

/* ---- a small hash map: 128-bit keys to pointers ------------------------ */

struct hent {
	uint64_t k1, k2;
	void *v;
};

struct hmap {
	struct hent *e;
	size_t cap, n;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static void *hmap_get(const struct hmap *m, uint64_t k1, uint64_t k2)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(k1, k2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].v)
			return NULL;
		if (m->e[i].k1 == k1 && m->e[i].k2 == k2)
			return m->e[i].v;
	}
}

/* Sets k to v (non-NULL), returning the old value.  Returns v itself on
 * allocation failure, so callers can tell. */
static void *hmap_put(struct hmap *m, uint64_t k1, uint64_t k2, void *v)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct hent *e = calloc(cap, sizeof(*e));
		if (!e)
			return v;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->e[i].v)
				continue;
			size_t j = mix(m->e[i].k1, m->e[i].k2) & (cap - 1);
			while (e[j].v)
				j = (j + 1) & (cap - 1);
			e[j] = m->e[i];
		}
		free(m->e);
		m->e = e;
		m->cap = cap;
	}
	size_t i = mix(k1, k2) & (m->cap - 1);
	for (; m->e[i].v; i = (i + 1) & (m->cap - 1))
		if (m->e[i].k1 == k1 && m->e[i].k2 == k2) {
			void *old = m->e[i].v;
			m->e[i].v = v;
			return old;
		}
	m->e[i] = (struct hent){ k1, k2, v };
	m->n++;
	return NULL;
}

/* Removes k, returning its value (NULL if absent).  Linear probing:
 * later entries of the run shift back into the hole. */
static void *hmap_del(struct hmap *m, uint64_t k1, uint64_t k2)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1, i = mix(k1, k2) & mask;
	for (;; i = (i + 1) & mask) {
		if (!m->e[i].v)
			return NULL;
		if (m->e[i].k1 == k1 && m->e[i].k2 == k2)
			break;
	}
	void *old = m->e[i].v;
	for (size_t j = (i + 1) & mask; m->e[j].v; j = (j + 1) & mask) {
		size_t h = mix(m->e[j].k1, m->e[j].k2) & mask;
		/* j may move to the hole i unless its home h lies in (i, j]. */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		m->e[i] = m->e[j];
		i = j;
	}
	m->e[i] = (struct hent){ 0 };
	m->n--;
	return old;
}

/* ---- state -------------------------------------------------------------- */

/* A file already looked at (attached or not), by device and inode. */
struct seen {
	int probes;
	char *path;
	int nrt;             /* runtime launch entry points it defines */
	struct rt_entry {
		int api;
		uint64_t off;
	} rt[8];
};

/* A growable array of links. */
struct linkvec {
	struct bpf_link **v;
	int n, cap;
};

/* What gpurecd knows of a process beyond its mappings: whether it started
 * before the driver layer was attached, and the runtime launch probes
 * attached for it alone (see "Which layer records a launch" above). */
struct proc {
	uint64_t start_ticks;     /* /proc/PID/stat starttime: pid reuse */
	int old;                  /* started before the first full scan */
	int unnamed;              /* made a driver launch gpurecd cannot name */
	struct linkvec links;     /* pid-filtered runtime launch probes */
	uint64_t files[8][2];     /* (dev, ino) those probes sit on */
	int nfiles;
};

/* An NCCL communicator gpurecd saw made (ncclCommInit*, ncclCommSplit). */
struct ncomm {
	int64_t id;               /* comm_id */
	int32_t rank, nranks;     /* -1: unknown */
	int64_t seq;              /* collectives issued on it so far */
	uint64_t splits;          /* ncclCommSplit calls on it so far */
};

struct kname {
	char *mangled;
	char *demangled; /* NULL when it does not demangle */
};

struct gr_cuda {
	struct gr_cuda_opts o;
	struct cuda_bpf *skel;
	struct ring_buffer *rb;
	struct linkvec links;     /* every global probe */
	struct linkvec rt_links;  /* global runtime launch probes: only while
	                           * no driver is attached */
	int have_driver;          /* a libcuda is attached */
	uint64_t old_before_ns;   /* processes started before this (boot
	                           * time) predate the driver probes */
	struct hmap seen;     /* (dev, ino) -> struct seen */
	struct hmap procs;    /* (pid, 0) -> struct proc */
	struct hmap elfs;     /* (dev, ino) -> struct gr_elf, for naming */
	struct hmap regs;     /* (dev, ino) -> struct gr_stubreg, or
	                       * &no_regs where none could be read */
	struct hmap maps;     /* (pid, 0) -> struct gr_maps */
	struct hmap names;    /* (pid, handle) -> struct kname */
	struct hmap comms;    /* (pid, ncclComm_t) -> struct ncomm */
	struct hmap nameless; /* (pid, handle) -> &nameless_mark: nothing
	                       * could name it, do not look again */
	int misses_logged;    /* name_stub misses told in verbose mode */
	int *execs;
	int nexecs, execs_cap;
	uint64_t drops_seen[GR_DROP_NSLOTS];
	uint64_t user_drops, user_drops_seen;
	struct gr_cuda_stats st;
};

static const char *const kind_names[] = { "H2H", "H2D", "D2H", "D2D",
					  "default", "P2P" };

#define LOG(c, ...) (c)->o.log(__VA_ARGS__)

/* ---- names ---------------------------------------------------------------- */

static struct kname *kname_new(const char *mangled)
{
	struct kname *k = calloc(1, sizeof(*k));
	if (!k || !(k->mangled = strdup(mangled))) {
		free(k);
		return NULL;
	}
	k->demangled = gr_demangle(mangled);
	return k;
}

static void kname_free(struct kname *k)
{
	if (!k)
		return;
	free(k->mangled);
	free(k->demangled);
	free(k);
}

/* Keeps k as the name of (pid, handle); returns it, or NULL (k freed) if
 * it could not be kept. */
static struct kname *name_set(struct gr_cuda *c, uint32_t pid,
			      uint64_t handle, struct kname *k)
{
	if (!k)
		return NULL;
	void *old = hmap_put(&c->names, pid, handle, k);
	if (old == k) {
		kname_free(k);
		return NULL;
	}
	kname_free(old);
	return k;
}

static struct gr_maps *pid_maps(struct gr_cuda *c, uint32_t pid, int refresh)
{
	struct gr_maps *pm = hmap_get(&c->maps, pid, 0);
	if (pm && !refresh)
		return pm;
	struct gr_maps fresh;
	if (gr_maps__read((int)pid, &fresh))
		return pm; /* gone: keep what we knew */
	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (!pm) {
			gr_maps__free(&fresh);
			return NULL;
		}
		if (hmap_put(&c->maps, pid, 0, pm) == pm) {
			free(pm);
			gr_maps__free(&fresh);
			return NULL;
		}
	}
	gr_maps__free(pm);
	*pm = fresh;
	return pm;
}

static void *open_elf(const char *path)
{
	return gr_elf__open(path);
}

static void *scan_regs(const char *path)
{
	return gr_stubreg__scan(path);
}

static char no_regs; /* a c->regs value: nothing could be read */

/* The kernel registrations read from a mapping's code (stubreg.h), once
 * per file; NULL if none could be read. */
static struct gr_stubreg *mapping_regs(struct gr_cuda *c, uint32_t pid,
				       const struct gr_mapping *m)
{
	void *r = hmap_get(&c->regs, m->dev, m->ino);
	if (r)
		return r == &no_regs ? NULL : r;
	r = gr_maps__open(pid, m, scan_regs);
	if (r)
		LOG(c, "cuda: read %d kernel registrations from the code of "
		       "%s (a stub of pid %u has no symbol)",
		    gr_stubreg__count(r), m->path ? m->path : "?", pid);
	if (hmap_put(&c->regs, m->dev, m->ino, r ? r : &no_regs) ==
	    (r ? r : &no_regs)) {
		gr_stubreg__free(r);
		return NULL;
	}
	return r;
}

/* The ELF of a mapping of pid, opened once per file. */
static struct gr_elf *mapping_elf(struct gr_cuda *c, uint32_t pid,
				  const struct gr_mapping *m)
{
	struct gr_elf *e = hmap_get(&c->elfs, m->dev, m->ino);
	if (e)
		return e;
	if (!(e = gr_maps__open(pid, m, open_elf)))
		return NULL;
	if (hmap_put(&c->elfs, m->dev, m->ino, e) == e) {
		gr_elf__close(e);
		return NULL;
	}
	return e;
}

static char nameless_mark; /* a c->nameless value */

/* Reads up to len bytes at addr in pid; returns how many it could. */
static size_t peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
	return n > 0 ? (size_t)n : 0;
}

/* A C identifier (mangled names are), NUL-terminated within n bytes. */
static int is_ident(const char *s, size_t n)
{
	size_t i = 0;
	if (!n || isdigit((unsigned char)s[0]))
		return 0;
	for (; i < n && s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '$' && s[i] != '.')
			return 0;
	return i > 0 && i < n;
}

/* Names a CUfunction made before gpurecd could see its load, from the
 * process's memory: libcuda keeps a module function's name behind its
 * handle, a word, then a pointer to the NUL-terminated mangled name
 * (driver 13.0; tests/gpu/handles.py finds where on any driver).
 * PyTorch hands such handles to cudaLaunchKernel.  Only a C identifier is
 * taken, so another layout names nothing rather than something wrong;
 * library kernels' handles (cuLibraryGetKernel) are not pointers at all
 * and stay unnamed. */
static struct kname *name_handle(struct gr_cuda *c, uint32_t pid,
				 uint64_t h)
{
	uint64_t w[2];
	char buf[4096];
	if (!h || peek(pid, h, w, sizeof(w)) != sizeof(w) || !w[1])
		return NULL;
	size_t n = peek(pid, w[1], buf, sizeof(buf));
	if (!is_ident(buf, n))
		return NULL;
	struct kname *k = name_set(c, pid, h, kname_new(buf));
	if (k)
		c->st.handles_read++;
	return k;
}

/* In verbose mode, says why a stub could not be named (the first few). */
static void stub_miss(struct gr_cuda *c, uint32_t pid, uint64_t addr,
		      const struct gr_mapping *m, const char *why)
{
	if (!c->o.verbose || c->misses_logged >= 16)
		return;
	c->misses_logged++;
	LOG(c, "cuda: cannot name the kernel stub 0x%" PRIx64 " of pid %u "
	       "(%s): %s", addr, pid, m && m->path ? m->path : "no mapping",
	    why);
}

/* Names a runtime launch's host stub: the ELF symbol at that address. */
static struct kname *name_stub(struct gr_cuda *c, uint32_t pid, uint64_t addr)
{
	struct kname *k = hmap_get(&c->names, pid, addr);
	if (k)
		return k;
	for (int pass = 0; pass < 2; pass++) {
		struct gr_maps *pm = pid_maps(c, pid, pass);
		if (!pm)
			return stub_miss(c, pid, addr, NULL, "maps unread"), NULL;
		for (int i = 0; i < pm->n; i++) {
			const struct gr_mapping *m = &pm->m[i];
			if (addr < m->start || addr >= m->end)
				continue;
			struct gr_elf *e = mapping_elf(c, pid, m);
			uint64_t va, in;
			if (!e)
				return stub_miss(c, pid, addr, m, "no ELF"), NULL;
			if (gr_elf__off_to_vaddr(e, addr - m->start + m->off,
						 &va))
				return stub_miss(c, pid, addr, m,
						 "not in a segment"), NULL;
			const char *sym = gr_elf__symbolize(e, va, &in);
			if (!sym || in != 0) {
				/* Stripped (PyTorch's libraries): the
				 * registration code still names it. */
				struct gr_stubreg *r = mapping_regs(c, pid, m);
				if (!r || !(sym = gr_stubreg__name(r, va)))
					return stub_miss(c, pid, addr, m, !r ?
						"no symbol, no registration code" :
						"no symbol, not registered"), NULL;
			}
			return name_set(c, pid, addr, kname_new(sym));
		}
	}
	stub_miss(c, pid, addr, NULL, "in no mapping");
	return NULL;
}

static void unnamed_driver_launch(struct gr_cuda *c, uint32_t pid);

/* ---- decoding ------------------------------------------------------------- */

static int64_t intern(struct gr_cuda *c, const char *s)
{
	return gr_writer__intern(c->o.w, s, strlen(s));
}

static int64_t sz(uint64_t v, uint64_t mul)
{
	return (int64_t)(v * mul);
}

static uint32_t u32at(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t u64at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* One side of a CUDA_MEMCPY2D, from its memory type on (srcMemoryType at
 * 16, then Host, Device, Array; the dst side is the same 56 bytes on):
 * sets *p to the pointer its type uses, and returns the side as
 * 0 unknown, 1 host, 2 device (or array), 3 unified. */
static int memcpy2d_side(const uint8_t *st, uint64_t *p, int *has)
{
	switch (u32at(st + 16)) {
	case 1: /* CU_MEMORYTYPE_HOST */
		*p = u64at(st + 24), *has = 1;
		return 1;
	case 2: /* CU_MEMORYTYPE_DEVICE */
		*p = u64at(st + 32), *has = 1;
		return 2;
	case 3: /* CU_MEMORYTYPE_ARRAY: no pointer */
		return 2;
	case 4: /* CU_MEMORYTYPE_UNIFIED: an address in srcDevice */
		*p = u64at(st + 32), *has = 1;
		return 3;
	}
	return 0;
}

/* Direction of a 2D driver copy from its sides (memcpy2d_side): unified
 * memory on either side is cudaMemcpyDefault's "default"; 0xff where a
 * side's type is unknown. */
static uint64_t kind_2d(int s, int d)
{
	if (!s || !d)
		return 0xff;
	if (s == 3 || d == 3)
		return GR_K_DEFAULT;
	if (s == 1)
		return d == 1 ? GR_K_H2H : GR_K_H2D;
	return d == 1 ? GR_K_D2H : GR_K_D2D;
}

static int append(struct gr_cuda *c, int t, int64_t *v, uint64_t nm)
{
	int err = gr_writer__append(c->o.w, t, v, nm);
	if (err) {
		c->user_drops++;
		return err;
	}
	c->st.rows++;
	return 0;
}

/* ---- NCCL ------------------------------------------------------------------ */

static const char *const nccl_types[] = { "int8", "uint8", "int32", "uint32",
	"int64", "uint64", "float16", "float32", "float64", "bfloat16",
	"float8e4m3", "float8e5m2" };
static const uint8_t nccl_type_bytes[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2,
					   1, 1 };
static const char *const nccl_ops[] = { "sum", "prod", "max", "min", "avg" };

/* comm_id: 64-bit FNV-1a of the bytes, top bit cleared (a positive
 * INTEGER).  docs/recorder.md gives the byte layouts hashed. */
static int64_t comm_hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return (int64_t)(h & INT64_MAX);
}

/* Keeps handle as a communicator of pid (replacing what a reused handle
 * was). */
static struct ncomm *comm_new(struct gr_cuda *c, uint32_t pid,
			      uint64_t handle, int64_t id, int32_t rank,
			      int32_t nranks)
{
	struct ncomm *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	*m = (struct ncomm){ .id = id, .rank = rank, .nranks = nranks };
	void *old = hmap_put(&c->comms, pid, handle, m);
	if (old == m) {
		free(m);
		return NULL;
	}
	free(old);
	return m;
}

/* Forgets every communicator of pid (it exec'd or exited). */
static void comm_forget_pid(struct gr_cuda *c, uint32_t pid)
{
	for (size_t i = 0; i < c->comms.cap;) {
		struct hent *h = &c->comms.e[i];
		if (h->v && h->k1 == pid)
			free(hmap_del(&c->comms, h->k1, h->k2));
		else
			i++; /* after a delete, i may hold a shifted entry */
	}
}

/* The nccl row's columns past api (the shared ones are set), and the
 * communicator bookkeeping the call implies. */
static void decode_nccl(struct gr_cuda *c, const struct gr_cuda_call *e,
			const struct gr_api *a, int64_t *v, uint64_t *nm)
{
	const __u64 *x = e->args;
	int32_t ret = (int32_t)e->ret;
	int made = ret == 0 || ret == 7; /* ncclSuccess, ncclInProgress */
	struct ncomm *m = NULL;

	/* The operation: the name past "nccl", one spelling per operation
	 * (ncclBcast is an in-place Broadcast; NCCL spells AlltoAll), so
	 * reports group by op across versions and entry points. */
	const char *name = a->sym + 4;
	if (!strcmp(name, "Bcast"))
		name = "Broadcast";
	else if (!strcmp(name, "AlltoAll"))
		name = "AllToAll";
	v[GR_nccl_op] = intern(c, name);
	if (a->bytes >= 0) {
		uint64_t n = x[a->bytes];
		uint32_t dt = (uint32_t)x[a->dtype];
		v[GR_nccl_count] = (int64_t)n;
		if (dt < sizeof(nccl_types) / sizeof(nccl_types[0])) {
			v[GR_nccl_datatype] = intern(c, nccl_types[dt]);
			v[GR_nccl_bytes] = sz(n, nccl_type_bytes[dt]);
		} else {
			char b[16];
			snprintf(b, sizeof(b), "%u", dt);
			v[GR_nccl_datatype] = intern(c, b);
			*nm |= 1ull << GR_nccl_bytes;
		}
	} else {
		*nm |= 1ull << GR_nccl_count | 1ull << GR_nccl_datatype |
		       1ull << GR_nccl_bytes;
	}
	if (a->redop >= 0) {
		uint32_t op = (uint32_t)x[a->redop];
		v[GR_nccl_redop] = intern(c, op < 5 ? nccl_ops[op] : "premulsum");
	} else {
		*nm |= 1ull << GR_nccl_redop;
	}
	if (a->peer >= 0)
		v[GR_nccl_peer] = (int32_t)x[a->peer];
	else
		*nm |= 1ull << GR_nccl_peer;
	if (a->stream >= 0)
		v[GR_nccl_stream] = (int64_t)x[a->stream];
	else
		*nm |= 1ull << GR_nccl_stream;
	v[GR_nccl_ret] = ret;
	*nm |= 1ull << GR_nccl_seq;

	switch (a->shape) {
	case GR_SH_NCCL_COLL:
	case GR_SH_NCCL_P2P:
	case GR_SH_NCCL_SPLIT:
	case GR_SH_NCCL_FINALIZE:
	case GR_SH_NCCL_END:
		m = hmap_get(&c->comms, e->pid, x[a->comm]);
		if (m && a->shape == GR_SH_NCCL_COLL && made) {
			/* Only issued collectives count: a call refused
			 * on one rank would shift every later seq. */
			v[GR_nccl_seq] = m->seq++;
			*nm &= ~(1ull << GR_nccl_seq);
		}
		if (a->shape == GR_SH_NCCL_SPLIT && m) {
			/* Every rank splits the parent in the same order:
			 * (parent, color, nth split) names the child alike
			 * on the ranks of one color. */
			int64_t k[3] = { m->id, (int32_t)x[1],
					 (int64_t)m->splits++ };
			int64_t id = comm_hash(k, sizeof(k));
			m = NULL;
			if (made && e->out)
				m = comm_new(c, e->pid, e->out, id, -1, -1);
		} else if (a->shape == GR_SH_NCCL_SPLIT) {
			m = NULL;
		}
		break;
	case GR_SH_NCCL_INIT:
	case GR_SH_NCCL_INIT_IDS: {
		/* The unique id: on the stack at entry, or the first of
		 * commIds (zeros where unread). */
		int64_t id = comm_hash(e->st, 128);
		v[GR_nccl_comm_id] = id;
		v[GR_nccl_rank] = (int32_t)x[a->rank];
		v[GR_nccl_nranks] = (int32_t)x[a->nranks];
		if (made && e->out)
			comm_new(c, e->pid, e->out, id, (int32_t)x[a->rank],
				 (int32_t)x[a->nranks]);
		return;
	}
	case GR_SH_NCCL_INIT_ALL: {
		/* One process, ndev communicators: named by the process and
		 * the first handle. */
		int32_t ndev = (int32_t)x[a->nranks];
		uint64_t k[2] = { e->pid, e->out };
		int64_t id = comm_hash(k, sizeof(k));
		v[GR_nccl_nranks] = ndev;
		*nm |= 1ull << GR_nccl_rank;
		if (!made || !e->out) {
			*nm |= 1ull << GR_nccl_comm_id;
			return;
		}
		v[GR_nccl_comm_id] = id;
		for (int i = 0; i < ndev && i < 16; i++) {
			uint64_t h = i ? u64at(e->st + 8 * i) : e->out;
			if (h)
				comm_new(c, e->pid, h, id, i, ndev);
		}
		return;
	}
	}
	if (m) {
		v[GR_nccl_comm_id] = m->id;
		v[GR_nccl_rank] = m->rank;
		v[GR_nccl_nranks] = m->nranks;
		if (m->rank < 0)
			*nm |= 1ull << GR_nccl_rank;
		if (m->nranks < 0)
			*nm |= 1ull << GR_nccl_nranks;
	} else {
		*nm |= 1ull << GR_nccl_comm_id | 1ull << GR_nccl_rank |
		       1ull << GR_nccl_nranks;
	}
	if (a->shape == GR_SH_NCCL_END && made)
		free(hmap_del(&c->comms, e->pid, x[a->comm]));
}

static void decode_call(struct gr_cuda *c, const struct gr_cuda_call *e,
			const char *name)
{
	if (e->api >= (uint32_t)gr_napis) {
		c->st.decode_errors++;
		return;
	}
	const struct gr_api *a = &gr_apis[e->api];
	const __u64 *x = e->args;
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 0;
	char comm[17];
	int t;

	memcpy(comm, e->comm, 16);
	comm[16] = 0;
	if (c->o.on_pid)
		c->o.on_pid(c->o.on_pid_ctx, e->pid);
	/* Columns every cuda_* table shares sit at the same indices. */
	v[GR_cuda_api_ts] = (int64_t)e->ts + c->o.clock_offset_ns;
	v[GR_cuda_api_pid] = e->pid;
	v[GR_cuda_api_tid] = e->tid;
	v[GR_cuda_api_comm] = intern(c, comm);
	v[GR_cuda_api_dur] = (int64_t)e->dur;
	v[GR_cuda_api_api] = intern(c, a->sym);
	int32_t ret = (int32_t)e->ret; /* cudaError_t / CUresult: an int */

	switch (a->shape) {
	case GR_SH_LAUNCH_RT:
	case GR_SH_LAUNCH_RT_EX:
	case GR_SH_LAUNCH_DRV:
	case GR_SH_LAUNCH_DRV_EX: {
		uint64_t func;
		t = GR_T_cuda_kernel;
		if (a->shape == GR_SH_LAUNCH_RT) {
			/* dim3 by value: x|y in one register, z in the next. */
			func = x[0];
			v[GR_cuda_kernel_grid_x] = (uint32_t)x[1];
			v[GR_cuda_kernel_grid_y] = (uint32_t)(x[1] >> 32);
			v[GR_cuda_kernel_grid_z] = (uint32_t)x[2];
			v[GR_cuda_kernel_block_x] = (uint32_t)x[3];
			v[GR_cuda_kernel_block_y] = (uint32_t)(x[3] >> 32);
			v[GR_cuda_kernel_block_z] = (uint32_t)x[4];
			v[GR_cuda_kernel_shared_mem] = (int64_t)x[6];
			v[GR_cuda_kernel_stream] = (int64_t)x[7];
		} else if (a->shape == GR_SH_LAUNCH_DRV) {
			func = x[0];
			v[GR_cuda_kernel_grid_x] = (uint32_t)x[1];
			v[GR_cuda_kernel_grid_y] = (uint32_t)x[2];
			v[GR_cuda_kernel_grid_z] = (uint32_t)x[3];
			v[GR_cuda_kernel_block_x] = (uint32_t)x[4];
			v[GR_cuda_kernel_block_y] = (uint32_t)x[5];
			v[GR_cuda_kernel_block_z] = (uint32_t)x[6];
			v[GR_cuda_kernel_shared_mem] = (uint32_t)x[7];
			v[GR_cuda_kernel_stream] = (int64_t)x[8];
		} else {
			/* cudaLaunchConfig_t and CUlaunchConfig share the
			 * layout up to the stream; smem is size_t in one,
			 * unsigned int in the other. */
			const uint8_t *s = e->st;
			func = x[1];
			v[GR_cuda_kernel_grid_x] = u32at(s);
			v[GR_cuda_kernel_grid_y] = u32at(s + 4);
			v[GR_cuda_kernel_grid_z] = u32at(s + 8);
			v[GR_cuda_kernel_block_x] = u32at(s + 12);
			v[GR_cuda_kernel_block_y] = u32at(s + 16);
			v[GR_cuda_kernel_block_z] = u32at(s + 20);
			v[GR_cuda_kernel_shared_mem] =
				a->shape == GR_SH_LAUNCH_RT_EX ?
				(int64_t)u64at(s + 24) : u32at(s + 24);
			v[GR_cuda_kernel_stream] = (int64_t)u64at(s + 32);
		}
		struct kname *k = hmap_get(&c->names, e->pid, func);
		if (!k && e->inner_func)
			k = hmap_get(&c->names, e->pid, e->inner_func);
		if (!k && !hmap_get(&c->nameless, e->pid, func)) {
			/* Made before gpurecd saw it: a stub, or a handle. */
			if (a->shape <= GR_SH_LAUNCH_RT_EX)
				k = name_stub(c, e->pid, func);
			if (!k)
				k = name_handle(c, e->pid, func);
			if (!k)
				hmap_put(&c->nameless, e->pid, func,
					 &nameless_mark);
		}
		if (k && e->inner_func &&
			 !hmap_get(&c->names, e->pid, e->inner_func))
			/* A runtime launch named from its stub names the
			 * driver handle it passed down, for later driver-only
			 * launches of that handle (graphs, cuLaunchKernel). */
			name_set(c, e->pid, e->inner_func, kname_new(k->mangled));
		if (!k && c->have_driver && a->shape >= GR_SH_LAUNCH_DRV)
			unnamed_driver_launch(c, e->pid);
		if (k) {
			v[GR_cuda_kernel_kernel_mangled] = intern(c, k->mangled);
			if (k->demangled)
				v[GR_cuda_kernel_kernel] = intern(c, k->demangled);
			else
				v[GR_cuda_kernel_kernel] = intern(c, k->mangled);
			c->st.named_launches++;
		} else {
			nm |= 1ull << GR_cuda_kernel_kernel |
			      1ull << GR_cuda_kernel_kernel_mangled;
			c->st.unnamed_launches++;
		}
		v[GR_cuda_kernel_ret] = ret;
		break;
	}
	case GR_SH_MEMCPY:
	case GR_SH_MEMCPY_3D:
	case GR_SH_MEMCPY_2D_DRV: {
		uint64_t bytes, kind = a->fixed_kind, src = 0, dst = 0;
		int has_src = 0, has_dst = 0;
		t = GR_T_cuda_memcpy;
		if (a->shape == GR_SH_MEMCPY_3D) {
			/* From srcPtr on: a zero pointer is an array's copy. */
			const uint8_t *s = e->st;
			bytes = u64at(s + 96) * u64at(s + 104) * u64at(s + 112);
			kind = u32at(s + 120);
			src = u64at(s), has_src = src != 0;
			dst = u64at(s + 64), has_dst = dst != 0;
		} else if (a->shape == GR_SH_MEMCPY_2D_DRV) {
			bytes = u64at(e->st + 112) * u64at(e->st + 120);
			int sk = memcpy2d_side(e->st, &src, &has_src);
			int dk = memcpy2d_side(e->st + 56, &dst, &has_dst);
			kind = kind_2d(sk, dk);
		} else {
			bytes = x[a->bytes] *
				(a->bytes2 >= 0 ? x[a->bytes2] : 1);
			if (a->kind >= 0)
				kind = (uint32_t)x[a->kind];
			if (a->src >= 0)
				src = x[a->src], has_src = 1;
			if (a->dst >= 0)
				dst = x[a->dst], has_dst = 1;
		}
		v[GR_cuda_memcpy_src] = (int64_t)src;
		v[GR_cuda_memcpy_dst] = (int64_t)dst;
		if (!has_src)
			nm |= 1ull << GR_cuda_memcpy_src;
		if (!has_dst)
			nm |= 1ull << GR_cuda_memcpy_dst;
		v[GR_cuda_memcpy_bytes] = sz(bytes, 1);
		if (kind <= GR_K_P2P)
			v[GR_cuda_memcpy_kind] = intern(c, kind_names[kind]);
		else
			nm |= 1ull << GR_cuda_memcpy_kind;
		v[GR_cuda_memcpy_async] = a->async;
		if (a->stream >= 0)
			v[GR_cuda_memcpy_stream] = (int64_t)x[a->stream];
		else
			nm |= 1ull << GR_cuda_memcpy_stream;
		v[GR_cuda_memcpy_ret] = ret;
		break;
	}
	case GR_SH_MEMSET:
		t = GR_T_cuda_memset;
		v[GR_cuda_memset_bytes] = sz(x[a->bytes] *
			(a->bytes2 >= 0 ? x[a->bytes2] : 1), a->mul);
		v[GR_cuda_memset_async] = a->async;
		if (a->stream >= 0)
			v[GR_cuda_memset_stream] = (int64_t)x[a->stream];
		else
			nm |= 1ull << GR_cuda_memset_stream;
		v[GR_cuda_memset_ret] = ret;
		break;
	case GR_SH_ALLOC:
	case GR_SH_FREE:
		t = GR_T_cuda_mem;
		v[GR_cuda_mem_op] = intern(c, a->op);
		if (a->shape == GR_SH_ALLOC) {
			v[GR_cuda_mem_bytes] = sz(x[a->bytes] *
				(a->bytes2 >= 0 ? x[a->bytes2] : 1), 1);
			/* The out-pointer holds an address only on success;
			 * a registration's pointer is an argument. */
			if (ret == 0)
				v[GR_cuda_mem_ptr] = (int64_t)(a->out >= 0 ?
					e->out : x[a->ptr]);
			else
				nm |= 1ull << GR_cuda_mem_ptr;
		} else {
			nm |= 1ull << GR_cuda_mem_bytes;
			v[GR_cuda_mem_ptr] = (int64_t)x[a->ptr];
		}
		v[GR_cuda_mem_ret] = ret;
		break;
	case GR_SH_SYNC:
		t = GR_T_cuda_sync;
		if (a->stream >= 0)
			v[GR_cuda_sync_stream] = (int64_t)x[a->stream];
		else
			nm |= 1ull << GR_cuda_sync_stream;
		v[GR_cuda_sync_ret] = ret;
		break;
	case GR_SH_GRAPH: {
		t = GR_T_cuda_graph;
		int exec = strstr(a->sym, "Exec") != NULL ||
			   strcmp(a->op, "launch") == 0;
		uint64_t graph = 0, gexec = 0;
		int has_graph = 0, has_exec = 0;
		if (strcmp(a->op, "capture_end") == 0) {
			graph = e->out, has_graph = ret == 0;
		} else if (strcmp(a->op, "instantiate") == 0) {
			graph = x[a->handle], has_graph = 1;
			gexec = e->out, has_exec = ret == 0;
		} else if (a->handle >= 0 && exec) {
			gexec = x[a->handle], has_exec = 1;
		} else if (a->handle >= 0) {
			graph = x[a->handle], has_graph = 1;
		}
		v[GR_cuda_graph_op] = intern(c, a->op);
		v[GR_cuda_graph_graph] = (int64_t)graph;
		v[GR_cuda_graph_graph_exec] = (int64_t)gexec;
		if (!has_graph)
			nm |= 1ull << GR_cuda_graph_graph;
		if (!has_exec)
			nm |= 1ull << GR_cuda_graph_graph_exec;
		if (a->stream >= 0)
			v[GR_cuda_graph_stream] = (int64_t)x[a->stream];
		else
			nm |= 1ull << GR_cuda_graph_stream;
		v[GR_cuda_graph_ret] = ret;
		break;
	}
	case GR_SH_NCCL_COLL:
	case GR_SH_NCCL_P2P:
	case GR_SH_NCCL_GROUP:
	case GR_SH_NCCL_INIT:
	case GR_SH_NCCL_INIT_IDS:
	case GR_SH_NCCL_INIT_ALL:
	case GR_SH_NCCL_SPLIT:
	case GR_SH_NCCL_END:
	case GR_SH_NCCL_FINALIZE:
		t = GR_T_nccl;
		decode_nccl(c, e, a, v, &nm);
		break;
	default: /* GR_SH_NAME */
		t = GR_T_cuda_api;
		if (a->noret) {
			nm |= 1ull << GR_cuda_api_ret; /* void: rax is junk */
		} else {
			v[GR_cuda_api_ret] = ret;
			if (ret != 0)
				break;
		}
		if (strcmp(a->sym, "cuKernelGetFunction") == 0) {
			struct kname *k = hmap_get(&c->names, e->pid, x[1]);
			if (k)
				name_set(c, e->pid, e->out, kname_new(k->mangled));
		} else if (name && name[0] && a->out >= 0) {
			name_set(c, e->pid, e->out, kname_new(name));
		} else if (name && name[0] && a->handle >= 0) {
			/* __cudaRegisterFunction(handle, hostFun, deviceFun) */
			name_set(c, e->pid, x[a->handle], kname_new(name));
		}
		break;
	}
	append(c, t, v, nm);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gr_cuda *c = ctx;
	const uint32_t *rec = data;
	c->st.records++;
	if (len < 4)
		return 0;
	switch (*rec) {
	case GR_REC_CALL:
		if (len >= sizeof(struct gr_cuda_call))
			decode_call(c, data, NULL);
		break;
	case GR_REC_CALL_NAME:
		if (len >= sizeof(struct gr_cuda_call_name)) {
			/* Ring buffer pages are mapped read-only: terminate
			 * a copy. */
			const struct gr_cuda_call_name *n = data;
			char name[GR_NAME_BYTES];
			memcpy(name, n->name, sizeof(name));
			name[GR_NAME_BYTES - 1] = 0;
			decode_call(c, &n->c, name);
		}
		break;
	case GR_REC_EXEC:
		if (len >= sizeof(struct gr_proc_exec)) {
			const struct gr_proc_exec *x = data;
			if (c->nexecs == c->execs_cap) {
				int cap = c->execs_cap ? c->execs_cap * 2 : 64;
				int *p = realloc(c->execs, (size_t)cap * sizeof(int));
				if (!p)
					break;
				c->execs = p;
				c->execs_cap = cap;
			}
			c->execs[c->nexecs++] = (int)x->pid;
			comm_forget_pid(c, x->pid); /* a new image */
			/* The new image, at once: a short program may be gone
			 * before its first scan, and its launches are named
			 * from its executable's symbols. */
			pid_maps(c, x->pid, 1);
		}
		break;
	default:
		c->st.decode_errors++;
	}
	return 0;
}

/* ---- attaching ------------------------------------------------------------- */

static int linkvec_add(struct linkvec *lv, struct bpf_link *l)
{
	if (lv->n == lv->cap) {
		int cap = lv->cap ? lv->cap * 2 : 64;
		void *p = realloc(lv->v, (size_t)cap * sizeof(*lv->v));
		if (!p)
			return -ENOMEM;
		lv->v = p;
		lv->cap = cap;
	}
	lv->v[lv->n++] = l;
	return 0;
}

static void linkvec_free(struct linkvec *lv)
{
	for (int i = 0; i < lv->n; i++)
		bpf_link__destroy(lv->v[i]);
	free(lv->v);
	*lv = (struct linkvec){ 0 };
}

static int is_rt_launch(int id)
{
	return gr_apis[id].shape == GR_SH_LAUNCH_RT ||
	       gr_apis[id].shape == GR_SH_LAUNCH_RT_EX;
}

/* Attaches the entry and return programs for api id at off of path, for
 * one process (pid > 0) or all (-1), adding both links to lv.  Returns 0
 * or -errno; on failure nothing stays attached (a lone entry probe would
 * leave frames that never pop). */
static int attach_api(struct gr_cuda *c, const char *path, int id,
		      uint64_t off, int pid, struct linkvec *lv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = gr_api__cookie(id));
	struct bpf_link *in = bpf_program__attach_uprobe_opts(
		c->skel->progs.cuda_entry, pid, path, off, &uo);
	uo.retprobe = true;
	struct bpf_link *out = in ? bpf_program__attach_uprobe_opts(
		c->skel->progs.cuda_return, pid, path, off, &uo) : NULL;
	if (!in || !out) {
		int err = -errno;
		bpf_link__destroy(in);
		return err ? err : -EINVAL;
	}
	if (linkvec_add(lv, in) || linkvec_add(lv, out)) {
		/* The vector keeps what it took: destroy only the rest. */
		if (lv->n && lv->v[lv->n - 1] == in)
			lv->n--;
		bpf_link__destroy(in);
		bpf_link__destroy(out);
		return -ENOMEM;
	}
	return 0;
}

/* The first driver seen: from now on it records every launch, so the
 * runtime's launch probes (attached while there was none) would only make
 * each runtime launch trap twice.  They go; processes that predate the
 * driver's probes get theirs back per pid (rt_for_pid). */
static void driver_arrived(struct gr_cuda *c, const char *path)
{
	if (c->have_driver)
		return;
	c->have_driver = 1;
	LOG(c, "cuda: driver %s records every launch; runtime launch entry "
	       "points are attached only to processes older than gpurecd",
	    path);
	if (c->rt_links.n) {
		c->st.probes -= (uint64_t)c->rt_links.n;
		LOG(c, "cuda: detached %d runtime launch probes", c->rt_links.n);
		linkvec_free(&c->rt_links);
	}
}

/* Attaches every hooked symbol the ELF at path defines.  shown is the
 * path to log (path may be a /proc alias). */
static int attach_elf(struct gr_cuda *c, const char *path, const char *shown,
		      uint64_t dev, uint64_t ino)
{
	struct seen *s = hmap_get(&c->seen, dev, ino);
	if (s)
		return 0;
	if (!(s = calloc(1, sizeof(*s))) || !(s->path = strdup(shown)) ||
	    hmap_put(&c->seen, dev, ino, s) == s) {
		if (s)
			free(s->path);
		free(s);
		return -ENOMEM;
	}
	struct gr_elf *e = gr_elf__open(path);
	if (!e)
		return 0; /* not an ELF we can read: nothing to hook */
	uint64_t off;
	if (gr_elf__find(e, "cuLaunchKernel", &off, 1) > 0)
		driver_arrived(c, shown);
	int probes = 0, apis = 0, failed = 0, err = 0;
	for (int id = 0; id < gr_napis; id++) {
		uint64_t offs[4];
		int n = gr_elf__find(e, gr_apis[id].sym, offs, 4);
		int rt = is_rt_launch(id);
		for (int k = 0; k < n; k++) {
			if (rt && s->nrt < (int)(sizeof(s->rt) / sizeof(s->rt[0])))
				s->rt[s->nrt++] = (struct rt_entry){ id, offs[k] };
			if (rt && c->have_driver)
				continue; /* per pid only: rt_for_pid */
			int r = attach_api(c, path, id, offs[k], -1,
					   rt ? &c->rt_links : &c->links);
			if (r) {
				failed++;
				err = r;
				continue;
			}
			probes += 2;
		}
		apis += n > 0;
	}
	gr_elf__close(e);
	s->probes = probes;
	if (probes || failed || s->nrt) {
		c->st.files_attached += probes > 0;
		c->st.probes += (uint64_t)probes;
		LOG(c, "attached %d probes (%d entry points%s) to %s "
		       "(dev %u:%u inode %" PRIu64 ")", probes, apis,
		    s->nrt && c->have_driver ?
		    "; runtime launches left to the driver" : "",
		    shown, major(dev), minor(dev), ino);
		if (failed)
			LOG(c, "%s: %d entry points could not be attached: %s",
			    shown, failed, strerror(-err));
	}
	return probes;
}

int gr_cuda__attach_path(struct gr_cuda *c, const char *path)
{
	struct stat sb;
	if (stat(path, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	return attach_elf(c, path, path, sb.st_dev, sb.st_ino);
}

/* starttime (field 22 of /proc/PID/stat), in clock ticks after boot, or 0. */
static uint64_t start_ticks(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: fields start after the last
	 * ')'; starttime is the 20th after it. */
	char *p = strrchr(buf, ')');
	for (int f = 0; p && f < 20; f++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	linkvec_free(&p->links);
	free(p);
}

/* pid's struct proc, made (or remade, if the pid was reused) on demand. */
static struct proc *proc_get(struct gr_cuda *c, int pid)
{
	uint64_t st = start_ticks(pid);
	struct proc *p = hmap_get(&c->procs, (uint64_t)pid, 0);
	if (p && (p->start_ticks == st || !st)) /* same, or gone */
		return p;
	struct proc *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->start_ticks = st;
	long hz = sysconf(_SC_CLK_TCK);
	n->old = st && hz > 0 && c->old_before_ns &&
		 st * (1000000000ull / (uint64_t)hz) < c->old_before_ns;
	if (hmap_put(&c->procs, (uint64_t)pid, 0, n) == n) {
		free(n);
		return NULL;
	}
	proc_free(p);
	return n;
}

/* A process that predates gpurecd made its driver handles unseen, so its
 * driver launches cannot be named; its runtime launches can, from their
 * host stubs.  Attach the runtime launch probes for it alone (a uprobe
 * with a pid filter is inserted only into that process).  The same holds
 * for any process whose driver launches come without a name (a handle
 * made by a call gpurecd does not hook). */
static int rt_for_pid(struct gr_cuda *c, int pid, const struct gr_maps *pm)
{
	struct proc *p = NULL;
	int total = 0;
	char path[128];
	for (int i = 0; i < pm->n; i++) {
		const struct gr_mapping *m = &pm->m[i];
		struct seen *s = hmap_get(&c->seen, m->dev, m->ino);
		if (!s || !s->nrt)
			continue;
		if (!p && (!(p = proc_get(c, pid)) || (!p->old && !p->unnamed)))
			return 0;
		int k, full = p->nfiles == (int)(sizeof(p->files) /
						 sizeof(p->files[0]));
		for (k = 0; k < p->nfiles; k++)
			if (p->files[k][0] == m->dev && p->files[k][1] == m->ino)
				break;
		if (k < p->nfiles || full)
			continue;
		p->files[p->nfiles][0] = m->dev;
		p->files[p->nfiles++][1] = m->ino;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, pid, m->start, m->end);
		int n = 0, err = 0;
		for (int j = 0; j < s->nrt; j++) {
			int r = attach_api(c, path, s->rt[j].api, s->rt[j].off,
					   pid, &p->links);
			if (r)
				err = r;
			else
				n += 2;
		}
		if (err)
			LOG(c, "cuda: pid %d: runtime launch probes on %s: %s",
			    pid, s->path, strerror(-err));
		if (n)
			LOG(c, "cuda: pid %d %s: %d runtime launch probes on %s "
			       "for it alone", pid, p->old ? "predates gpurecd" :
			    "made a driver launch without a name", n, s->path);
		c->st.probes += (uint64_t)n;
		total += n;
	}
	return total;
}

/* Decoding found a driver launch it cannot name: from now on, name this
 * process's runtime launches from their stubs (once per process). */
static void unnamed_driver_launch(struct gr_cuda *c, uint32_t pid)
{
	struct proc *p = hmap_get(&c->procs, pid, 0);
	if (p && (p->old || p->unnamed))
		return; /* the common case: no /proc read */
	if (!(p = proc_get(c, (int)pid)) || p->old || p->unnamed)
		return;
	p->unnamed = 1;
	struct gr_maps *pm = pid_maps(c, pid, 1);
	if (pm)
		rt_for_pid(c, (int)pid, pm);
}

int gr_cuda__scan_pid(struct gr_cuda *c, int pid)
{
	char path[128], link[4096];
	int total = 0, uses_cuda = 0;

	if ((uint32_t)pid == (uint32_t)getpid())
		return 0;
	struct gr_maps *pm = pid_maps(c, (uint32_t)pid, 1);
	if (!pm)
		return -ESRCH;
	for (int i = 0; i < pm->n; i++) {
		const struct gr_mapping *m = &pm->m[i];
		if (hmap_get(&c->seen, m->dev, m->ino))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, pid, m->start, m->end);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = 0;
		int r = attach_elf(c, path, n > 0 ? link : path, m->dev, m->ino);
		if (r > 0)
			total += r;
	}
	for (int i = 0; i < pm->n && !uses_cuda; i++) {
		struct seen *s = hmap_get(&c->seen, pm->m[i].dev, pm->m[i].ino);
		uses_cuda = s && (s->probes > 0 || s->nrt > 0);
	}
	if (uses_cuda && c->have_driver)
		total += rt_for_pid(c, pid, pm);
	/* A CUDA process's executable holds the host stubs its launches
	 * name: read its symbols now, while it runs, so launches of a
	 * process that exits at once are still named. */
	struct stat sb;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (uses_cuda && stat(path, &sb) == 0)
		for (int i = 0; i < pm->n; i++)
			if (pm->m[i].dev == sb.st_dev &&
			    pm->m[i].ino == sb.st_ino) {
				mapping_elf(c, (uint32_t)pid, &pm->m[i]);
				break;
			}
	return total;
}

int gr_cuda__scan_all(struct gr_cuda *c)
{
	/* The first full scan follows the driver's attachment (the daemon
	 * attaches known library paths first): whatever started before it
	 * made driver handles gpurecd never saw. */
	if (!c->old_before_ns) {
		struct timespec ts;
		clock_gettime(CLOCK_BOOTTIME, &ts);
		c->old_before_ns = (uint64_t)ts.tv_sec * 1000000000ull +
				   (uint64_t)ts.tv_nsec;
	}
	DIR *d = opendir("/proc");
	struct dirent *de;
	int total = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		int r = gr_cuda__scan_pid(c, atoi(de->d_name));
		if (r > 0)
			total += r;
	}
	closedir(d);
	/* Rows still queued for processes about to be forgotten name their
	 * communicators: decode them first. */
	if (c->comms.n)
		ring_buffer__consume(c->rb);
	/* Forget processes that are gone. */
	for (size_t i = 0; i < c->maps.cap; i++) {
		struct hent *h = &c->maps.e[i];
		char p[32];
		if (!h->v)
			continue;
		snprintf(p, sizeof(p), "/proc/%" PRIu64, h->k1);
		if (access(p, F_OK) == 0)
			continue;
		/* Keep the entry (events may still be queued) but drop its
		 * mappings; it is reused if the pid comes back. */
		gr_maps__free(h->v);
		comm_forget_pid(c, (uint32_t)h->k1);
		struct proc *pr = hmap_get(&c->procs, h->k1, 0);
		if (pr && pr->links.n) {
			/* Its probes can fire no more: give them back. */
			c->st.probes -= (uint64_t)pr->links.n;
			linkvec_free(&pr->links);
			pr->nfiles = 0;
		}
	}
	return total;
}

int gr_cuda__take_execs(struct gr_cuda *c, int *pids, int max)
{
	int n = c->nexecs < max ? c->nexecs : max;
	if (n <= 0)
		return 0; /* execs may still be NULL */
	memcpy(pids, c->execs, (size_t)n * sizeof(int));
	memmove(c->execs, c->execs + n, (size_t)(c->nexecs - n) * sizeof(int));
	c->nexecs -= n;
	return n;
}

/* ---- lifecycle ------------------------------------------------------------ */

struct gr_cuda *gr_cuda__open(const struct gr_cuda_opts *o)
{
	struct gr_cuda *c = calloc(1, sizeof(*c));
	int err;
	if (!c)
		return NULL;
	c->o = *o;
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
	/* Records wait for the drain timer until a quarter of the ring
	 * buffer is full; then the reader is woken at once. */
	c->skel->rodata->wake_bytes =
		bpf_map__max_entries(c->skel->maps.events) / 4;
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
	else if ((err = linkvec_add(&c->links, l))) {
		bpf_link__destroy(l);
		goto fail;
	}
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

void gr_cuda__close(struct gr_cuda *c)
{
	if (!c)
		return;
	linkvec_free(&c->links);
	linkvec_free(&c->rt_links);
	for (size_t i = 0; i < c->procs.cap; i++)
		proc_free(c->procs.e[i].v);
	free(c->procs.e);
	ring_buffer__free(c->rb);
	cuda_bpf__destroy(c->skel);
	for (size_t i = 0; i < c->seen.cap; i++)
		if (c->seen.e[i].v) {
			struct seen *s = c->seen.e[i].v;
			free(s->path);
			free(s);
		}
	for (size_t i = 0; i < c->elfs.cap; i++)
		if (c->elfs.e[i].v)
			gr_elf__close(c->elfs.e[i].v);
	for (size_t i = 0; i < c->regs.cap; i++)
		if (c->regs.e[i].v && c->regs.e[i].v != &no_regs)
			gr_stubreg__free(c->regs.e[i].v);
	for (size_t i = 0; i < c->maps.cap; i++)
		if (c->maps.e[i].v) {
			struct gr_maps *pm = c->maps.e[i].v;
			gr_maps__free(pm);
			free(pm);
		}
	for (size_t i = 0; i < c->names.cap; i++)
		kname_free(c->names.e[i].v);
	for (size_t i = 0; i < c->comms.cap; i++)
		free(c->comms.e[i].v);
	free(c->comms.e);
	free(c->seen.e);
	free(c->elfs.e);
	free(c->regs.e);
	free(c->nameless.e);
	free(c->maps.e);
	free(c->names.e);
	free(c->execs);
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

void gr_cuda__report_drops(struct gr_cuda *c, int64_t now_ns)
{
	static const char *const src[GR_DROP_NSLOTS] = {
		"cuda:ringbuf", "cuda:depth", "cuda:unmatched" };
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 1ull << GR_drops_pid | 1ull << GR_drops_tid |
		      1ull << GR_drops_comm;
	v[GR_drops_ts] = now_ns;
	for (int i = 0; i < GR_DROP_NSLOTS; i++) {
		uint64_t now = c->skel->bss->drops[i];
		if (now == c->drops_seen[i])
			continue;
		v[GR_drops_source] = intern(c, src[i]);
		v[GR_drops_count] = (int64_t)(now - c->drops_seen[i]);
		c->drops_seen[i] = now;
		gr_writer__append(c->o.w, GR_T_drops, v, nm);
	}
	if (c->user_drops != c->user_drops_seen) {
		v[GR_drops_source] = intern(c, "cuda:store");
		v[GR_drops_count] = (int64_t)(c->user_drops - c->user_drops_seen);
		c->user_drops_seen = c->user_drops;
		gr_writer__append(c->o.w, GR_T_drops, v, nm);
	}
}

void gr_cuda__stats(const struct gr_cuda *c, struct gr_cuda_stats *st)
{
	*st = c->st;
}
