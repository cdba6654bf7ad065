/* stubreg.c - owns reading (host stub, kernel name) pairs out of the
 * x86-64 code nvcc emits to register a TU's kernels.
 *
 * For each kernel, nvcc's registration callback sets up and makes
 *
 *	lea   stub(%rip), %rsi		hostFun: a function in this ELF
 *	lea   name(%rip), %rdx		deviceFun: a NUL-ended identifier
 *	mov   %rdx, %rcx		deviceName: the same string
 *	mov   $-1, %r8d			thread_limit
 *	call  __cudaRegisterFunction	through the PLT, or direct (static)
 *
 * in some order, and compilers differ in which (gcc -O0 loads the string
 * twice, with lea into %rdx again; -O2 may lea into %rcx and copy it to
 * %rdx).  The argument registers are caller-saved, so all of a call's
 * setup lies between the previous call and this one.
 *
 * The scan has two passes over the executable segments:
 *  1. Every byte that could start a call (e8 rel32, or ff 15 through a GOT
 *     slot) is a candidate; the candidates whose preceding bytes set up
 *     the four arguments as above, with targets that check out (the stub
 *     in executable code, the name a C identifier), are counted by call
 *     target.  The registration function is the target with the most.
 *     A byte that only looks like a call (inside another instruction's
 *     displacement) has a random target and is dropped here.
 *  2. The candidates calling that target are decoded again, each over the
 *     bytes after the previous such call only, so a registration whose
 *     own setup is not recognized can never borrow its neighbour's.
 * Registers are tracked in order (last write wins), so re-loads and copies
 * between %rdx and %rcx resolve as the CPU would.  A stub loaded from the
 * GOT (a default-visibility stub in PIC code) is not found here, but such
 * a stub is in .dynsym, where elfsyms.c names it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/sym/stubreg.h"

#define WINDOW 96	/* bytes of setup looked at before a call */
#define MAX_NAME 4096	/* longest kernel name accepted */
#define MAX_SEGS 32

enum { RCX = 1, RDX = 2, RSI = 6, R8 = 8 };	/* x86-64 register numbers */

struct seg {
	uint64_t vaddr, off, filesz;
	int exec;
};

struct img {
	const unsigned char *b;
	size_t size;
	struct seg seg[MAX_SEGS];
	int nseg;
	size_t kept;	/* pages from here on may be resident */
};

struct pair {
	uint64_t stub;
	uint32_t name;	/* offset into gr_stubreg.strs */
};

struct gr_stubreg {
	struct pair *p;
	int n;
	char *strs;
};

struct cand {
	size_t pos;		/* file offset of the call */
	uint64_t target;	/* callee vaddr, or GOT slot vaddr (| 1) */
	const struct seg *seg;
	int len;		/* of the call instruction */
	int match;		/* its setup decodes as a registration's */
};

/* ---- image ---------------------------------------------------------------- */

/* A mapped page stays resident, and counted in gpurecd's RSS, until it is
 * unmapped or given back: libtorch_cuda's code is hundreds of MiB, and the
 * scan reads it front to back (memmem for anchors, then near each one), so
 * it gives back what it has passed, a chunk at a time.  A page given back
 * is read again from the page cache if touched. */
static size_t chunk = 8u << 20;

void gr_stubreg__set_chunk(size_t bytes)
{
	chunk = bytes;
}

/* Gives back the pages of [im->kept, upto) once they make a chunk. */
static void release(struct img *im, size_t upto)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t lo = im->kept / pg * pg, hi = upto / pg * pg;
	if (hi <= lo || hi - lo < chunk)
		return;
	madvise((void *)(uintptr_t)(im->b + lo), hi - lo, MADV_DONTNEED);
	im->kept = hi;
}

static const struct seg *seg_of_vaddr(const struct img *im, uint64_t va)
{
	for (int i = 0; i < im->nseg; i++)
		if (va >= im->seg[i].vaddr &&
		    va - im->seg[i].vaddr < im->seg[i].filesz)
			return &im->seg[i];
	return NULL;
}

static int load_segs(struct img *im)
{
	const Elf64_Ehdr *eh = (const void *)im->b;

	if (im->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > im->size ||
	    (im->size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
		return -ENOEXEC;
	const Elf64_Phdr *ph = (const void *)(im->b + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum && im->nseg < MAX_SEGS; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_offset > im->size)
			continue;
		uint64_t fs = ph[i].p_filesz;
		if (fs > im->size - ph[i].p_offset)
			fs = im->size - ph[i].p_offset;
		im->seg[im->nseg++] = (struct seg){ ph[i].p_vaddr,
						    ph[i].p_offset, fs,
						    !!(ph[i].p_flags & PF_X) };
	}
	return 0;
}

static int is_alpha(unsigned char c)
{
	return c == '_' || (unsigned char)((c | 0x20) - 'a') < 26;
}

/* The identifier at vaddr, or NULL: [A-Za-z_][A-Za-z0-9_$.]* then NUL. */
static const char *ident_at(const struct img *im, uint64_t va)
{
	const struct seg *s = seg_of_vaddr(im, va);
	if (!s)
		return NULL;
	const unsigned char *p = im->b + s->off + (va - s->vaddr);
	size_t max = s->filesz - (va - s->vaddr);
	if (max > MAX_NAME)
		max = MAX_NAME;
	if (!max || !is_alpha(p[0]))
		return NULL;
	for (size_t i = 1; i < max; i++) {
		unsigned char c = p[i];
		if (!c)
			return (const char *)p;
		if (!is_alpha(c) && c != '$' && c != '.' &&
		    (unsigned char)(c - '0') >= 10)
			return NULL;
	}
	return NULL;
}

static int32_t rd32(const unsigned char *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* ---- decoding ------------------------------------------------------------- */

/* Decodes [lo, hi) of s (file offsets) as a registration's setup.  On a
 * match sets *stub and *name and returns 1. */
static int setup(const struct img *im, const struct seg *s, size_t lo,
		 size_t hi, uint64_t *stub, const char **name)
{
	const unsigned char *b = im->b;
	uint64_t reg[16] = { 0 };	/* rip-relative addresses held */
	int r8 = 0;			/* %r8d holds -1 */

	for (size_t j = lo; j < hi; j++) {
		const unsigned char *q = b + j;
		size_t left = hi - j;
		if (left >= 3 && (q[0] & 0xf8) == 0x48) {
			/* REX.W: lea disp32(%rip), %r64; mov %r64, %r64 */
			int rr = ((q[0] >> 2) & 1) << 3 | ((q[2] >> 3) & 7);
			int rb = (q[0] & 1) << 3 | (q[2] & 7);
			if (q[1] == 0x8d && (q[2] & 0xc7) == 0x05 && left >= 7) {
				reg[rr] = s->vaddr + (j + 7 - s->off) +
					  (int64_t)rd32(q + 3);
				if (rr == R8)
					r8 = 0;
			} else if (q[1] == 0x89 && (q[2] & 0xc0) == 0xc0) {
				reg[rb] = reg[rr];
			} else if (q[1] == 0x8b && (q[2] & 0xc0) == 0xc0) {
				reg[rr] = reg[rb];
			} else if (q[0] == 0x49 && q[1] == 0xc7 &&
				   q[2] == 0xc0 && left >= 7 &&
				   rd32(q + 3) == -1) {
				r8 = 1;		/* mov $-1, %r8 */
			}
		} else if ((left >= 6 && q[0] == 0x41 && q[1] == 0xb8 &&
			    rd32(q + 2) == -1) ||
			   (left >= 4 && q[0] == 0x41 && q[1] == 0x83 &&
			    q[2] == 0xc8 && q[3] == 0xff)) {
			r8 = 1;		/* mov $-1, %r8d; or $-1, %r8d */
		}
	}
	uint64_t rsi = reg[RSI], rdx = reg[RDX], rcx = reg[RCX];
	if (!rsi || !rdx || rcx != rdx || !r8)
		return 0;
	const struct seg *ss = seg_of_vaddr(im, rsi);
	if (!ss || !ss->exec || !(*name = ident_at(im, rdx)))
		return 0;
	*stub = rsi;
	return 1;
}

/* The call at file offset j of s, if the bytes there are one: sets *target
 * (callee vaddr, or GOT slot vaddr | 1 for an indirect call) and *len. */
static int call_at(const struct img *im, const struct seg *s, size_t j,
		   uint64_t *target, int *len)
{
	const unsigned char *q = im->b + j;
	size_t end = s->off + s->filesz;
	uint64_t next;

	if (q[0] == 0xe8 && end - j >= 5) {
		next = s->vaddr + (j + 5 - s->off);
		*target = next + (int64_t)rd32(q + 1);
		*len = 5;
		const struct seg *ts = seg_of_vaddr(im, *target);
		return ts && ts->exec;
	}
	if (q[0] == 0xff && end - j >= 6 && q[1] == 0x15) {
		next = s->vaddr + (j + 6 - s->off);
		*target = (next + (int64_t)rd32(q + 2)) | 1;
		*len = 6;
		return 1;
	}
	return 0;
}

/* ---- scan ----------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	return x->stub < y->stub ? -1 : x->stub > y->stub;
}

/* Appends to a growing array; returns 0, or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 256;
	void *nv = realloc(*v, nc * sz);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

/* The call target with the most matching setups (0 if none). */
static uint64_t busiest(const struct cand *c, size_t n)
{
	uint64_t *t = malloc((n ? n : 1) * sizeof(*t)), best = 0;
	size_t bestn = 0, m = 0;

	if (!t)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (c[i].match)
			t[m++] = c[i].target;
	qsort(t, m, sizeof(*t), cmp_u64);
	for (size_t i = 0, j; i < m; i = j) {
		for (j = i; j < m && t[j] == t[i]; j++)
			;
		if (j - i > bestn) {
			bestn = j - i;
			best = t[i];
		}
	}
	free(t);
	return best;
}

/* The %r8 = -1 instructions (registration's thread_limit) in s, sorted:
 * anchors to search near, found with memmem, so that a large library's
 * code is not decoded byte by byte. */
static int anchors(struct img *im, const struct seg *s, size_t **a,
		   size_t *n, size_t *cap)
{
	static const struct {
		const char *b;
		size_t len;
	} pat[] = {
		{ "\x41\xb8\xff\xff\xff\xff", 6 },	 /* mov $-1, %r8d */
		{ "\x41\x83\xc8\xff", 4 },		 /* or $-1, %r8d */
		{ "\x49\xc7\xc0\xff\xff\xff\xff", 7 }, /* mov $-1, %r8 */
	};
	const unsigned char *end = im->b + s->off + s->filesz;
	size_t n0 = *n;

	im->kept = s->off;
	for (const unsigned char *c = im->b + s->off; c < end; c += chunk) {
		/* Matches starting in [c, c + chunk): the search runs a
		 * pattern's length past it, for one that straddles. */
		const unsigned char *cend = (size_t)(end - c) > chunk ?
			c + chunk : end;
		for (size_t k = 0; k < sizeof(pat) / sizeof(pat[0]); k++) {
			const unsigned char *p = c;
			const unsigned char *lim = (size_t)(end - cend) > pat[k].len ?
				cend + pat[k].len - 1 : end;
			while ((p = memmem(p, (size_t)(lim - p), pat[k].b,
					   pat[k].len)) && p < cend) {
				if (grow((void **)a, cap, *n, sizeof(**a)))
					return -ENOMEM;
				(*a)[(*n)++] = (size_t)(p - im->b);
				p++;
			}
		}
		release(im, (size_t)(cend - im->b));
	}
	if (*n > n0)
		qsort(*a + n0, *n - n0, sizeof(**a), cmp_size);
	return 0;
}

/* Appends (stub, name) to r. */
static int add(struct gr_stubreg *r, size_t *capp, size_t *caps,
	       size_t *nstrs, uint64_t stub, const char *name)
{
	size_t l = strlen(name) + 1;
	int err = grow((void **)&r->p, capp, (size_t)r->n, sizeof(*r->p));

	if (err)
		return err;
	if (*nstrs + l > *caps) {
		size_t ncap = *caps ? *caps : 4096;
		while (*nstrs + l > ncap)
			ncap *= 2;
		char *ns = realloc(r->strs, ncap);
		if (!ns)
			return -ENOMEM;
		r->strs = ns;
		*caps = ncap;
	}
	memcpy(r->strs + *nstrs, name, l);
	r->p[r->n++] = (struct pair){ stub, (uint32_t)*nstrs };
	*nstrs += l;
	return 0;
}

static int scan(struct img *im, struct gr_stubreg *r)
{
	struct cand *c = NULL;
	size_t *a = NULL, na = 0, capa = 0;
	size_t nc = 0, capc = 0, capp = 0, caps = 0, nstrs = 0;
	int err = 0;

	/* Pass 1: the calls within WINDOW bytes after an anchor; those
	 * whose setup decodes are counted by target. */
	for (int si = 0; si < im->nseg && !err; si++) {
		const struct seg *s = &im->seg[si];
		size_t end = s->off + s->filesz, last = 0;
		if (!s->exec)
			continue;
		na = 0;
		if ((err = anchors(im, s, &a, &na, &capa)))
			break;
		im->kept = s->off;
		for (size_t i = 0; i < na && !err; i++) {
			size_t j = a[i] + 1 > last ? a[i] + 1 : last;
			if (a[i] > s->off + WINDOW)
				release(im, a[i] - WINDOW);
			for (; j <= a[i] + WINDOW && j < end; j++) {
				uint64_t t, stub;
				const char *name;
				int len;
				if ((im->b[j] != 0xe8 && im->b[j] != 0xff) ||
				    !call_at(im, s, j, &t, &len))
					continue;
				size_t lo = j - s->off > WINDOW ? j - WINDOW
								: s->off;
				if ((err = grow((void **)&c, &capc, nc,
						sizeof(*c))))
					break;
				c[nc++] = (struct cand){
					j, t, s, len,
					setup(im, s, lo, j, &stub, &name)
				};
			}
			last = j;
		}
	}
	free(a);
	uint64_t reg = err ? 0 : busiest(c, nc);

	/* Pass 2: the calls to that target, each decoded over its own
	 * setup only: the bytes since the previous one. */
	im->kept = 0;
	for (size_t i = 0, prev_end = 0; i < nc && reg && !err; i++) {
		if (c[i].target != reg)
			continue;
		const struct seg *s = c[i].seg;
		size_t j = c[i].pos;
		size_t lo = j - s->off > WINDOW ? j - WINDOW : s->off;
		if (lo >= im->kept)	/* in file order: segments too */
			release(im, lo);
		if (prev_end > lo && prev_end <= j)
			lo = prev_end;
		prev_end = j + (size_t)c[i].len;
		uint64_t stub;
		const char *name;
		if (setup(im, s, lo, j, &stub, &name))
			err = add(r, &capp, &caps, &nstrs, stub, name);
	}
	free(c);
	if (err)
		return err;
	/* Sorted by stub; a stub registered twice keeps one name. */
	if (r->n)
		qsort(r->p, (size_t)r->n, sizeof(*r->p), cmp_pair);
	int k = 0;
	for (int i = 0; i < r->n; i++)
		if (!k || r->p[k - 1].stub != r->p[i].stub)
			r->p[k++] = r->p[i];
	r->n = k;
	return 0;
}

struct gr_stubreg *gr_stubreg__scan(const char *path)
{
	struct img im = { 0 };
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb)) {
		err = -errno;
		close(fd);
		errno = -err;
		return NULL;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		errno = S_ISDIR(sb.st_mode) ? EISDIR : ENOEXEC;
		return NULL;
	}
	im.size = (size_t)sb.st_size;
	void *m = mmap(NULL, im.size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err) {
		errno = -err;
		return NULL;
	}
	im.b = m;
	struct gr_stubreg *r = calloc(1, sizeof(*r));
	if (!r)
		err = -ENOMEM;
	if (!err)
		err = load_segs(&im);
	if (!err)
		err = scan(&im, r);
	munmap(m, im.size);
	if (err) {
		gr_stubreg__free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

size_t gr_stubreg__bytes(const struct gr_stubreg *r)
{
	if (!r)
		return 0;
	size_t strs = 0;
	for (int i = 0; i < r->n; i++) {
		size_t end = r->p[i].name + strlen(r->strs + r->p[i].name) + 1;
		if (end > strs)
			strs = end;
	}
	return sizeof(*r) + (size_t)r->n * sizeof(*r->p) + strs;
}

void gr_stubreg__free(struct gr_stubreg *r)
{
	if (!r)
		return;
	free(r->p);
	free(r->strs);
	free(r);
}

int gr_stubreg__count(const struct gr_stubreg *r)
{
	return r->n;
}

const char *gr_stubreg__name(const struct gr_stubreg *r, uint64_t vaddr)
{
	int lo = 0, hi = r->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (r->p[mid].stub < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->p[lo].stub == vaddr ? r->strs + r->p[lo].name
						   : NULL;
}
