/* ksyms.c - owns reading /proc/kallsyms into one immutable, address-sorted
 * index of kernel text symbols, and looking addresses up in it.
 *
 * /proc/kallsyms has some 120k lines on a stock kernel and 150k with the
 * NVIDIA modules loaded, and the kernel alone takes 30 to 60 ms to print
 * them (`cat`, on a 2-core 6.18 guest and on an H100 host), so the load
 * adds as little as it can to that, in one pass:
 *
 *  - the file is read through one 64 KiB buffer (a seq_file hands back
 *    about a page per read(2) whatever the size asked for; a regular file,
 *    all of it) and each complete line is parsed where it lies; only an
 *    unfinished last line moves to the front for the next read.  A
 *    whole-file buffer would be 5+ MiB of fresh pages to fault in;
 *  - a line whose type is not text is dropped as soon as its type letter
 *    is seen; a text symbol's name goes to one growing string pool (about
 *    3 MiB for 120k names) and a 16-byte record holds its address, the
 *    name's offset in the pool and its alias preference.  Both arrays are
 *    populated as they grow, not faulted in a page at a time (see grow);
 *  - the records are sorted by address (the kernel image's part comes
 *    sorted; only the rest is sorted, then merged in: see sort_fold) and
 *    aliases are folded to one per address.
 *
 * On the 2-core guest that loads the 122k lines in ~40 ms, ~30 of them
 * the kernel's; a whole-file buffer and a qsort of everything took ~60.
 *
 * Lookups are binary searches over the records.  Nothing is written after
 * the load, so lookups need no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/parse.h"
#include "recorder/sym/ksyms.h"

#define KALLSYMS "/proc/kallsyms"
#define CHUNK (64u << 10)	/* read buffer; far longer than any line */
#define SYMS_START 16384	/* records; doubled as needed */
#define POOL_START (1u << 20)	/* bytes of names; doubled as needed */
#define POOL_MAX UINT32_MAX	/* pool offsets are 32-bit */
#define TAIL_MAX (1u << 20)	/* how far past the last symbol still counts */
#define RANK_WEAK (1u << 31)	/* alias preference: set for W and w */

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset into gr_ksyms.strs */
	uint32_t key;		/* RANK_WEAK if weak, | the line's index */
};

struct gr_ksyms {
	struct ksym *syms;	/* sorted by address, one per address */
	int n;
	char *strs;		/* the names, NUL-ended, back to back */
};

/* ---- loading ------------------------------------------------------------ */

/* What a load collects before sorting. */
struct builder {
	struct ksym *syms;	/* in file order */
	size_t n, cap;
	char *pool;		/* the kept names, NUL-ended, back to back */
	size_t plen, pcap;
	uint32_t line;		/* index of the next line */
	int zeros;		/* a text symbol at address 0 was seen */
};

/* Asks the kernel to fault in the whole pages of [p, p + len) now, in one
 * call. */
static void populate(char *p, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t end = ((uintptr_t)p + len) & ~(pg - 1);

	/* Best effort, so the result is not needed: a kernel before 5.14
	 * (no MADV_POPULATE_WRITE) says EINVAL, and the pages then fault in
	 * one by one as they are first written, as they would anyway. */
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

/* Returns p (an array of *cap elements of size sz) grown to hold at least
 * need elements, doubling from first, and updates *cap; NULL (p still
 * valid) if out of memory.  The new part is populated up front: a first
 * write to each page is otherwise a page fault, and in the VM guests we
 * run on one costs ~10 us; one by one, the ~1500 pages of a load were a
 * third of its time (measured on a 6.18 guest: 6 MiB touched page by page
 * in 17 ms, populated in 4 ms). */
static void *grow(void *p, size_t *cap, size_t need, size_t sz, size_t first)
{
	size_t ncap = *cap ? *cap : first;
	char *np;

	while (ncap < need)
		ncap *= 2;
	np = realloc(p, ncap * sz);
	if (!np)
		return NULL;
	populate(np + *cap * sz, (ncap - *cap) * sz);
	*cap = ncap;
	return np;
}

/* Parses the line [line, eol) ("ADDR TYPE NAME" or "ADDR TYPE NAME\t[MOD]")
 * into b.  Returns 0 on success, -errno on failure. */
static int add_line(struct builder *b, const char *line, const char *eol)
{
	const char *q = line, *name;
	void *p;
	uint64_t addr = 0;
	uint32_t idx = b->line++;
	size_t nlen;
	int d, digits = 0;
	char type;

	if (eol == line)	/* a blank line, as at a final "\n\n" */
		return 0;
	while (q < eol && (d = gr_hexval(*q)) >= 0) {
		addr = addr << 4 | (uint64_t)d;
		q++;
		digits++;
	}
	/* At least one char each, single spaces between. */
	if (digits == 0 || digits > 16 || eol - q < 4 || q[0] != ' ' ||
	    q[2] != ' ' || q[3] == ' ' || q[3] == '\t')
		return -EINVAL;
	type = q[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (addr == 0) {	/* kptr_restrict, or an undefined weak */
		b->zeros = 1;
		return 0;
	}
	name = q + 3;
	nlen = 0;		/* up to "\t[MOD]", which is dropped */
	while (name + nlen < eol && name[nlen] != '\t' && name[nlen] != ' ')
		nlen++;
	if (b->n >= INT_MAX || idx >= RANK_WEAK ||
	    b->plen + nlen + 1 > POOL_MAX)
		return -EFBIG;
	if (b->n == b->cap) {
		p = grow(b->syms, &b->cap, b->n + 1, sizeof(*b->syms),
			 SYMS_START);
		if (!p)
			return -ENOMEM;
		b->syms = p;
	}
	if (b->plen + nlen + 1 > b->pcap) {
		p = grow(b->pool, &b->pcap, b->plen + nlen + 1, 1, POOL_START);
		if (!p)
			return -ENOMEM;
		b->pool = p;
	}
	b->syms[b->n].addr = addr;
	b->syms[b->n].name = (uint32_t)b->plen;
	b->syms[b->n].key = idx |
			    (type == 'w' || type == 'W' ? RANK_WEAK : 0);
	b->n++;
	memcpy(b->pool + b->plen, name, nlen);
	b->pool[b->plen + nlen] = '\0';
	b->plen += nlen + 1;
	return 0;
}

/* Reads fd to its end, a chunk at a time, and parses each line into b.
 * Returns 0 on success, -errno on failure. */
static int read_lines(int fd, struct builder *b)
{
	char *buf = malloc(CHUNK);
	size_t fill = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r = read(fd, buf + fill, CHUNK - fill);
		char *p = buf, *end, *nl;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0) {		/* a last line without a '\n' */
			err = add_line(b, buf, buf + fill);
			break;
		}
		end = buf + fill + r;
		while (!err && (nl = memchr(p, '\n', (size_t)(end - p)))) {
			err = add_line(b, p, nl);
			p = nl + 1;
		}
		if (err)
			break;
		fill = (size_t)(end - p);
		if (fill == CHUNK) {	/* no '\n' in a whole chunk */
			err = -EINVAL;
			break;
		}
		memmove(buf, p, fill);
	}
	free(buf);
	return err;
}

/* Orders by address, then strong before weak, then by line. */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Merges the sorted runs syms[0, h) and syms[h, n) in place, back to
 * front, through a copy of the second.  Returns 0, or -ENOMEM. */
static int merge(struct ksym *syms, size_t h, size_t n)
{
	struct ksym *tail = malloc((n - h) * sizeof(*tail));
	size_t i = h, j = n - h, w = n;

	if (!tail)
		return -ENOMEM;
	memcpy(tail, syms + h, (n - h) * sizeof(*tail));
	/* What is left of the head when the tail runs out is in place. */
	while (j > 0) {
		if (i > 0 && syms[i - 1].addr > tail[j - 1].addr)
			syms[--w] = syms[--i];
		else
			syms[--w] = tail[--j];
	}
	free(tail);
	return 0;
}

/* Sorts syms[0, n) by address and keeps, of each address, the record
 * with the least key (strong before weak, then the first seen).  Returns
 * the number kept.
 *
 * The kernel image's symbols come first and in address order (aliases
 * among them in any order); modules' follow, each module's in its symbol
 * table's order, which is not address order, and BPF programs' last, not
 * in order either.  So only the tail past the ordered head is sorted
 * (100-odd records on a bare kernel, a fifth of them on a GPU host with
 * nvidia.ko loaded) and then merged with the head: a qsort of the whole
 * took 10 ms of a 60 ms load, the merge takes well under 1. */
static size_t sort_fold(struct ksym *syms, size_t n)
{
	size_t i, h, kept;

	for (h = 1; h < n; h++)
		if (syms[h - 1].addr > syms[h].addr)
			break;
	if (h < n) {
		qsort(syms + h, n - h, sizeof(*syms), cmp_ksym);
		if (syms[h - 1].addr > syms[h].addr && merge(syms, h, n))
			qsort(syms, n, sizeof(*syms), cmp_ksym);
	}
	for (i = 1, kept = 1; i < n; i++) {
		struct ksym *last = &syms[kept - 1];

		if (syms[i].addr != last->addr)
			syms[kept++] = syms[i];
		else if (syms[i].key < last->key)
			*last = syms[i];
	}
	return kept;
}

struct gr_ksyms *gr_ksyms__load(const char *path)
{
	struct builder b = { 0 };
	struct gr_ksyms *k = NULL;
	void *p;
	int fd, err;

	if (!path)
		path = KALLSYMS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;		/* open(2)'s errno */
	err = read_lines(fd, &b);
	close(fd);
	if (!err && b.n == 0)
		err = b.zeros ? -EPERM : -ENODATA;
	if (err)
		goto cleanup;
	b.n = sort_fold(b.syms, b.n);

	/* Give back the slack of the doublings and what aliases took. */
	if ((p = realloc(b.pool, b.plen)))
		b.pool = p;
	if ((p = realloc(b.syms, b.n * sizeof(*b.syms))))
		b.syms = p;

	k = malloc(sizeof(*k));
	if (!k) {
		err = -ENOMEM;
		goto cleanup;
	}
	k->syms = b.syms;
	k->n = (int)b.n;
	k->strs = b.pool;
	return k;

cleanup:
	free(b.syms);
	free(b.pool);
	errno = -err;
	return NULL;
}

void gr_ksyms__free(struct gr_ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->strs);
	free(k);
}

/* ---- lookups ------------------------------------------------------------ */

int gr_ksyms__count(const struct gr_ksyms *k)
{
	return k ? k->n : 0;
}

const char *gr_ksyms__find(const struct gr_ksyms *k, uint64_t addr,
			   uint64_t *off)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!k || k->n == 0 || addr < k->syms[0].addr)
		return NULL;
	/* syms[lo].addr <= addr always; the answer is in [lo, hi). */
	hi = (size_t)k->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &k->syms[lo];
	/* The last symbol has no end; past it lies module space or none. */
	if (lo == (size_t)k->n - 1 && addr - s->addr > TAIL_MAX)
		return NULL;
	if (off)
		*off = addr - s->addr;
	return k->strs + s->name;
}
