/* naming.c - kernel names for launches.
 *
 * A runtime launch passes the host stub, a function in the application
 * whose symbol is the kernel's mangled name, so its name comes from the
 * ELF symbol at that address (processes started before gpurecd
 * included), or, where the file is stripped (PyTorch's libraries are),
 * from the file's own registration code (stubreg.h).  A driver launch
 * passes a CUfunction or CUkernel handle, named from the load-time calls
 * that made it (cuModuleGetFunction, cuLibraryGetKernel,
 * cuKernelGetFunction, __cudaRegisterFunction); a module function made
 * before gpurecd started (PyTorch passes those to cudaLaunchKernel too)
 * is named from the name the driver keeps behind the handle
 * (name_handle).
 *
 * Names are kept per (pid, handle), each string once (interned, counted
 * by references), and forgotten with the process (gr_cuda_names_forget).  ELF files come from the daemon's
 * shared cache (recorder/sym/elfcache.h), or the family's own; a launch
 * being decoded waits for its file, since a row is written once and its
 * name cannot come later.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "recorder/cuda/internal.h"
#include "recorder/sym/elfsyms.h"
#include "recorder/sym/stubreg.h"

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static char logged;        /* a c->regs_logged value */
static char nameless_mark; /* a c->nameless value */

/* Two 64-bit FNV-1a hashes of s (different offsets): the interning key. */
static void name_hash(const char *s, uint64_t *h1, uint64_t *h2)
{
	uint64_t a = 1469598103934665603ull, b = 0x84222325cbf29ce4ull;
	for (; *s; s++) {
		a = (a ^ (unsigned char)*s) * 1099511628211ull;
		b = (b ^ (unsigned char)*s) * 0x100000001b3ull + 1;
	}
	*h1 = a;
	*h2 = b;
}

/* The one kname of mangled, with a reference more: names are held once,
 * however many processes (and handles) use them.  NULL if out of
 * memory. */
static struct kname *kname_get(struct gr_cuda *c, const char *mangled)
{
	uint64_t h1, h2;
	name_hash(mangled, &h1, &h2);
	struct kname *k = gr_keymap__get(&c->interned, h1, h2);
	if (k && strcmp(k->mangled, mangled) == 0) {
		k->refs++;
		return k;
	}
	size_t len = strlen(mangled) + 1;
	if (!(k = calloc(1, sizeof(*k) + len)))
		return NULL;
	k->mangled = (char *)(k + 1);
	memcpy(k->mangled, mangled, len);
	k->refs = 1;
	k->h1 = h1;
	k->h2 = h2;
	/* A hash collision (never seen) leaves the second one private. */
	k->interned = !gr_keymap__get(&c->interned, h1, h2) &&
		      gr_keymap__put(&c->interned, h1, h2, k) != k;
	c->names_bytes += sizeof(*k) + len;
	c->nnames++;
	return k;
}

/* Drops a reference to k, freeing it with the last. */
static void kname_put(struct gr_cuda *c, struct kname *k)
{
	if (!k || --k->refs)
		return;
	if (k->interned)
		gr_keymap__del(&c->interned, k->h1, k->h2);
	c->names_bytes -= sizeof(*k) + strlen(k->mangled) + 1;
	c->nnames--;
	if (k->demangled) {
		c->names_bytes -= strlen(k->demangled) + 1;
		free(k->demangled);
	}
	free(k);
}

/* k's demangled name, or NULL if it does not demangle: made when a
 * launch first needs it (most kernels a library registers are never
 * launched). */
static const char *kname_demangled(struct gr_cuda *c, struct kname *k)
{
	if (!k->demangle_tried) {
		k->demangle_tried = 1;
		if ((k->demangled = gr_demangle(k->mangled)))
			c->names_bytes += strlen(k->demangled) + 1;
	}
	return k->demangled;
}

/* Keeps k as the name of (pid, handle); returns it, or NULL (k freed) if
 * it could not be kept. */
static struct kname *name_set(struct gr_cuda *c, uint32_t pid,
			      uint64_t handle, struct kname *k)
{
	if (!k)
		return NULL;
	void *old = gr_keymap__put(&c->names, pid, handle, k);
	if (old == k) {
		kname_put(c, k);
		return NULL;
	}
	kname_put(c, old);
	return k;
}

/* The kernel registrations read from a mapping's code (stubreg.h), by
 * the shared cache, once per file (logged the first time); NULL if none
 * could be read. */
static struct gr_stubreg *mapping_regs(struct gr_cuda *c, uint32_t pid,
				       const struct gr_mapping *m)
{
	struct gr_stubreg *r = gr_elfcache__wait_regs(c->elfs, pid, m);
	if (r && !gr_keymap__get(&c->regs_logged, m->dev, m->ino) &&
	    gr_keymap__put(&c->regs_logged, m->dev, m->ino, &logged) != &logged)
		LOG(c, "cuda: read %d kernel registrations from the code of "
		       "%s (a stub of pid %u has no symbol)",
		    gr_stubreg__count(r), m->path ? m->path : "?", pid);
	return r;
}

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
	struct kname *k = name_set(c, pid, h, kname_get(c, buf));
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

/* Names the stub at addr, which mapping m of pid holds. */
static struct kname *name_in_mapping(struct gr_cuda *c, uint32_t pid,
				     uint64_t addr, const struct gr_mapping *m)
{
	struct gr_elf *e = gr_elfcache__wait(c->elfs, pid, m);
	uint64_t va, in;
	if (!e)
		return stub_miss(c, pid, addr, m, "no ELF"), NULL;
	if (gr_elf__off_to_vaddr(e, addr - m->start + m->off, &va))
		return stub_miss(c, pid, addr, m, "not in a segment"), NULL;
	char *sym = gr_elf__symbolize(e, va, &in);
	if (sym && in == 0) {
		struct kname *k = name_set(c, pid, addr, kname_get(c, sym));
		free(sym);
		return k;
	}
	free(sym);
	/* Stripped (PyTorch's libraries): the registration code still
	 * names it. */
	struct gr_stubreg *r = mapping_regs(c, pid, m);
	const char *reg = r ? gr_stubreg__name(r, va) : NULL;
	if (!reg)
		return stub_miss(c, pid, addr, m, !r ?
			"no symbol, no registration code" :
			"no symbol, not registered"), NULL;
	return name_set(c, pid, addr, kname_get(c, reg));
}

/* Names a runtime launch's host stub: the ELF symbol at that address.
 * The mappings are read again once if none holds it (a library loaded
 * since). */
static struct kname *name_stub(struct gr_cuda *c, uint32_t pid, uint64_t addr)
{
	struct kname *k = gr_keymap__get(&c->names, pid, addr);
	if (k)
		return k;
	for (int pass = 0; pass < 2; pass++) {
		struct gr_maps *pm = gr_cuda_maps(c, pid, pass);
		if (!pm)
			return stub_miss(c, pid, addr, NULL, "maps unread"), NULL;
		const struct gr_mapping *m = gr_maps__find(pm, addr);
		if (m)
			return name_in_mapping(c, pid, addr, m);
	}
	stub_miss(c, pid, addr, NULL, "in no mapping");
	return NULL;
}

/* The name of a launch's function: learnt at load, or found now. */
static struct kname *launch_name(struct gr_cuda *c,
				 const struct gr_cuda_call *e,
				 const struct gr_api *a, uint64_t func)
{
	struct kname *k = gr_keymap__get(&c->names, e->pid, func);
	if (!k && e->inner_func)
		k = gr_keymap__get(&c->names, e->pid, e->inner_func);
	if (!k && !gr_keymap__get(&c->nameless, e->pid, func)) {
		/* Made before gpurecd saw it: a stub, or a handle. */
		if (a->shape <= GR_SH_LAUNCH_RT_EX)
			k = name_stub(c, e->pid, func);
		if (!k)
			k = name_handle(c, e->pid, func);
		if (!k)
			gr_keymap__put(&c->nameless, e->pid, func,
				       &nameless_mark);
	}
	if (k && e->inner_func &&
	    !gr_keymap__get(&c->names, e->pid, e->inner_func))
		/* A runtime launch named from its stub names the driver
		 * handle it passed down, for later driver-only launches of
		 * that handle (graphs, cuLaunchKernel). */
		name_set(c, e->pid, e->inner_func, kname_get(c, k->mangled));
	return k;
}

void gr_cuda_name_launch(struct gr_cuda *c, const struct gr_cuda_call *e,
			 const struct gr_api *a, struct gr_cuda_row *r)
{
	struct kname *k = launch_name(c, e, a, r->func);
	if (!k && c->have_driver && a->shape >= GR_SH_LAUNCH_DRV)
		gr_cuda_unnamed_launch(c, e->pid);
	if (k) {
		gr_cuda_row__str_kept(r, GR_cuda_kernel_kernel_mangled,
				      k->mangled, &k->mangled_id);
		gr_cuda_row__str_kept(r, GR_cuda_kernel_kernel,
				      kname_demangled(c, k) ? k->demangled :
				      k->mangled, &k->demangled_id);
		c->st.named_launches++;
	} else {
		r->nm |= 1ull << GR_cuda_kernel_kernel |
			 1ull << GR_cuda_kernel_kernel_mangled;
		c->st.unnamed_launches++;
	}
}

void gr_cuda_name_record(struct gr_cuda *c, const struct gr_cuda_call *e,
			 const struct gr_api *a, const char *name)
{
	if (!a->noret && (int32_t)e->ret != 0)
		return; /* nothing was made */
	if (strcmp(a->sym, "cuKernelGetFunction") == 0) {
		struct kname *k = gr_keymap__get(&c->names, e->pid, e->args[1]);
		if (k)
			name_set(c, e->pid, e->out, kname_get(c, k->mangled));
	} else if (name && name[0] && a->out >= 0) {
		name_set(c, e->pid, e->out, kname_get(c, name));
	} else if (name && name[0] && a->handle >= 0) {
		/* __cudaRegisterFunction(handle, hostFun, deviceFun) */
		name_set(c, e->pid, e->args[a->handle], kname_get(c, name));
	}
}

void gr_cuda_name_prefetch(struct gr_cuda *c, uint32_t pid,
			   const struct gr_mapping *m)
{
	gr_elfcache__get(c->elfs, pid, m, NULL);
}

/* Removes from m every entry whose pid (k1) is one of the n sorted gone
 * pids, passing each value to drop. */
static void forget_pids(struct gr_cuda *c, struct gr_keymap *m,
			const uint32_t *gone, int n,
			void (*drop)(struct gr_cuda *c, void *v))
{
	/* A delete shifts the rest of its run back into slot i: look at
	 * slot i again. */
	for (size_t i = 0; i < m->cap; ) {
		struct gr_kment *h = &m->e[i];
		uint32_t pid = (uint32_t)h->k1;
		if (!h->v || !bsearch(&pid, gone, (size_t)n, sizeof(*gone),
				      cmp_pid)) {
			i++;
			continue;
		}
		void *v = gr_keymap__del(m, h->k1, h->k2);
		if (drop)
			drop(c, v);
	}
}

static void drop_kname(struct gr_cuda *c, void *v)
{
	kname_put(c, v);
}

void gr_cuda_names_forget(struct gr_cuda *c, const uint32_t *gone, int n)
{
	if (!n)
		return;
	forget_pids(c, &c->names, gone, n, drop_kname);
	forget_pids(c, &c->nameless, gone, n, NULL);
}

void gr_cuda_names_free(struct gr_cuda *c)
{
	gr_elfcache__free(c->own_elfs);
	c->elfs = c->own_elfs = NULL;
	for (size_t i = 0; i < c->names.cap; i++)
		kname_put(c, c->names.e[i].v);
	gr_keymap__free(&c->regs_logged);
	gr_keymap__free(&c->names);
	gr_keymap__free(&c->interned);
	gr_keymap__free(&c->nameless);
}
