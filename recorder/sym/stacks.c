/* stacks.c - off-CPU stacks folded and named (stacks.h).
 *
 * User frames are named from the ELF file mapped at each address, taken
 * from the daemon's one ELF cache (elfcache.h), which the CUDA family's
 * kernel naming shares: a file both need is read once.  Stacks only ever
 * ask with gr_elfcache__get, which never reads a file on the caller's
 * thread when the cache has a loader; until the loader has read a file,
 * its frames read "[file+0xoffset]", which can be symbolized offline.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "recorder/sym/elfcache.h"
#include "recorder/sym/elfsyms.h"
#include "recorder/sym/ksyms.h"
#include "recorder/sym/stacks.h"

#define PREFETCH_MAX (64ll << 20)	/* ELF files read when traced */
#define MAPS_REREAD_NS 1000000000ll		/* at most once a second */

struct gr_stacks {
	struct gr_ksyms *ksyms;
	int ksyms_err;
	struct gr_elfcache *elfs;	/* the daemon's; not ours to free */
};

static int64_t now_boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

struct sbuf {
	char *s;
	size_t n, cap;
	int frames;
};

static void sb_frame(struct sbuf *b, const char *name, size_t len)
{
	if (b->n + len + 2 > b->cap) {
		size_t cap = (b->n + len + 2) * 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return;
		b->s = s;
		b->cap = cap;
	}
	if (b->frames++)
		b->s[b->n++] = ';';
	for (size_t i = 0; i < len; i++) /* ';' separates frames */
		b->s[b->n++] = name[i] == ';' ? ':' : name[i];
	b->s[b->n] = 0;
}

/* pid's mappings read again; what was known is kept if they cannot be
 * (the process is gone, or a zombie whose maps read empty): the frames of
 * a record decoded after its process exited are still named. */
static int read_maps(uint32_t pid, struct gr_pmaps *pm)
{
	struct gr_maps fresh;
	int err = gr_maps__read((int)pid, &fresh);
	if (!err && !fresh.n && pm->maps.m)
		err = -ESRCH;
	if (err) {
		gr_maps__free(&fresh);
		return err;
	}
	gr_maps__free(&pm->maps);
	pm->maps = fresh;
	return 0;
}

void gr_pmaps__free(struct gr_pmaps *pm)
{
	gr_maps__free(&pm->maps);
}

/* The ELF of a mapping if the cache's loader has read it; else NULL, and
 * it is queued for reading if it was not yet.  Without a cache, NULL. */
static struct gr_elf *elf_of(struct gr_stacks *s, uint32_t pid,
			     const struct gr_mapping *m)
{
	return s->elfs ? gr_elfcache__get(s->elfs, pid, m, NULL) : NULL;
}

struct gr_stacks *gr_stacks__new(struct gr_elfcache *elfs)
{
	struct gr_stacks *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (!(s->ksyms = gr_ksyms__load(NULL)))
		s->ksyms_err = errno;
	s->elfs = elfs;
	return s;
}

int gr_stacks__ksyms_error(const struct gr_stacks *s)
{
	return s ? s->ksyms_err : 0;
}

void gr_stacks__free(struct gr_stacks *s)
{
	if (!s)
		return;
	gr_ksyms__free(s->ksyms);
	free(s);
}

/* The largest files (libtorch's, hundreds of MiB) wait until a frame
 * lands in them. */
void gr_stacks__prefetch(struct gr_stacks *s, uint32_t pid,
			 struct gr_pmaps *pm)
{
	if (!s || read_maps(pid, pm))
		return;
	pm->read_ns = now_boot_ns();
	for (int i = 0; s->elfs && i < pm->maps.n; i++) {
		const struct gr_mapping *m = &pm->maps.m[i];
		char path[128];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64
			 "-%" PRIx64, pid, m->start, m->end);
		if (stat(path, &st) == 0 && st.st_size <= PREFETCH_MAX)
			elf_of(s, pid, m);
	}
}

/* The mapping of @addr, the maps read again (at most once a second) if
 * it is not in them. */
static const struct gr_mapping *mapping_of(uint32_t pid, struct gr_pmaps *pm,
					   uint64_t addr)
{
	const struct gr_mapping *m = NULL;
	for (int pass = 0; pass < 2 && !m; pass++) {
		if (pass || !pm->maps.m) {
			int64_t now = now_boot_ns();
			if (pm->maps.m && now - pm->read_ns < MAPS_REREAD_NS)
				break;
			pm->read_ns = now;
			if (read_maps(pid, pm))
				break;
		}
		m = gr_maps__find(&pm->maps, addr);
	}
	return m;
}

/* Names one user frame into b. */
static void user_frame(struct gr_stacks *s, uint32_t pid, struct gr_pmaps *pm,
		       uint64_t addr, struct sbuf *b)
{
	const struct gr_mapping *m = mapping_of(pid, pm, addr);
	if (!m) {
		sb_frame(b, "[unknown]", 9);
		return;
	}
	struct gr_elf *e = elf_of(s, pid, m);
	uint64_t va, in;
	char *sym = NULL;
	if (e && gr_elf__off_to_vaddr(e, addr - m->start + m->off, &va) == 0)
		sym = gr_elf__symbolize(e, va, &in);
	if (sym) {
		char *d = gr_demangle(sym);
		const char *n = d ? d : sym;
		size_t len = strlen(n);
		const char *paren = d ? strchr(n, '(') : NULL;
		if (paren)
			len = (size_t)(paren - n);
		sb_frame(b, n, len);
		free(d);
		free(sym);
		return;
	}
	const char *base = m->path ? strrchr(m->path, '/') : NULL;
	char tmp[300];
	int n = snprintf(tmp, sizeof(tmp), "[%s+0x%" PRIx64 "]", base ? base + 1 :
			 m->path ? m->path : "unknown", addr - m->start + m->off);
	sb_frame(b, tmp, n > 0 ? (size_t)n : 0);
}

/* Kernel frames below these are the tracepoint's own. */
static int tracing_frame(const char *name)
{
	return !strncmp(name, "bpf_", 4) || !strncmp(name, "__bpf_", 6) ||
	       !strncmp(name, "__traceiter_", 12) ||
	       !strncmp(name, "trace_", 6);
}

char *gr_stacks__fold(struct gr_stacks *s, uint32_t pid, struct gr_pmaps *pm,
		      const uint64_t *ustack, int nu, const uint64_t *kstack,
		      int nk)
{
	struct sbuf b = { 0 };
	for (int i = nu - 1; pm && i >= 0; i--)
		user_frame(s, pid, pm, ustack[i], &b);
	/* Leaf first in the record: skip the tracing frames at the leaf. */
	int leaf = 0;
	while (leaf < nk && s->ksyms) {
		const char *n = gr_ksyms__find(s->ksyms, kstack[leaf], NULL);
		if (!n || !tracing_frame(n))
			break;
		leaf++;
	}
	for (int i = nk - 1; i >= leaf; i--) {
		const char *n = s->ksyms ?
			gr_ksyms__find(s->ksyms, kstack[i], NULL) : NULL;
		if (n) {
			sb_frame(&b, n, strlen(n));
		} else {
			sb_frame(&b, "[kernel]", 8);
		}
	}
	return b.s;
}

int gr_stacks__irq_wake(const struct gr_stacks *s, const uint64_t *wstack,
			int n)
{
	if (!s || !s->ksyms)
		return 0;
	for (int i = 0; i < n && wstack[i]; i++) {
		const char *f = gr_ksyms__find(s->ksyms, wstack[i], NULL);
		if (f && (strstr(f, "irq") || strstr(f, "sysvec_") ||
			  !strcmp(f, "hrtimer_wakeup") ||
			  !strncmp(f, "__hrtimer_run", 13) ||
			  !strcmp(f, "call_timer_fn")))
			return 1;
	}
	return 0;
}
