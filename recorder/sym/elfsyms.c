/* elfsyms.c - owns reading an ELF's function symbols, PT_LOAD headers and
 * build id into one immutable index, and C++ demangling.
 *
 * Both .symtab and .dynsym count: nvcc links the CUDA runtime statically by
 * default, and then cudaLaunchKernel and friends are local (or hidden)
 * symbols that only .symtab has; CUDA 13's kernel host stubs are hidden
 * too.
 *
 * The file is read with pread(2), in bounded chunks, never mapped nor
 * read whole: PyTorch's libraries hold a million function symbols and
 * hundreds of MiB of (mangled C++) names, and gpurecd keeps the symbols of
 * every library its recorded processes map (issue 17: copying their string
 * tables whole held 175 MiB, and reading them raised the peak further).
 * What is kept:
 *
 *  - gr_elf__open: one 16-byte record per distinct function address,
 *    sorted, with a running maximum of symbol ends, so that a containing
 *    symbol is found even when symbols nest.  Addresses are 32-bit
 *    offsets from the file's lowest function; no name is kept, only where
 *    it lies in the file, which stays open: gr_elf__symbolize reads the one
 *    name it returns.
 *  - gr_elf__open_find: the functions called by one of the names asked
 *    for, with those names, for gr_elf__find; found by reading each
 *    function's name once, in file order, through a 1 MiB window (the
 *    positions put in order by a counting sort: a qsort of libtorch's
 *    million took long enough on gpurecd's event loop to lose records).
 *
 * Nothing is written after open, so lookups need no locks (pread does not
 * move the descriptor's offset).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/sym/elfsyms.h"

#if defined(__x86_64__)
#define GR_EM EM_X86_64
#elif defined(__aarch64__)
#define GR_EM EM_AARCH64
#else
#error "elfsyms.c: unsupported host architecture"
#endif

#define SIZE_CLAMP ((1u << 29) - 1)	/* fits the 29-bit size field */
#define MAX_STRTABS 2			/* .dynstr and .strtab */
#define MAX_BUILD_ID 64			/* bytes; GNU ld makes 16 or 20 */
#define MAX_NOTES (64u << 10)		/* bytes of notes read, at most */
#define MAX_SHDRS (1u << 20)
#define SYM_CHUNK 4096			/* symbols read at a time */
#define WINDOW_SHIFT 20
#define WINDOW (1u << WINDOW_SHIFT)	/* string table bytes read at a time */
#define WINDOW_SLACK (64u << 10)	/* and past it, for names straddling */
#define NAME_MAX_LEN (1u << 20)		/* a longer name is no name */

struct sym {
	uint32_t addr;		/* st_value - gr_elf.base */
	uint32_t maxend;	/* max(addr + size) over this and all before */
	uint32_t name;		/* offset into string table `tab` */
	unsigned int size : 29;	/* st_size, clamped to SIZE_CLAMP */
	unsigned int rank : 2;	/* alias preference: 0 global, 1 weak, 2 local */
	unsigned int tab : 1;
};

/* A function found by name (gr_elf__open_find). */
struct named {
	uint64_t addr;
	const char *name;	/* in gr_elf.names */
};

struct seg {
	uint64_t vaddr, memsz, off, filesz;
};

struct strtab {
	uint64_t off, size;	/* in the file */
	uint32_t shndx;
};

struct gr_elf {
	int fd;			/* for names; -1 once not needed */
	uint64_t base;		/* the lowest function address */
	struct sym *syms;	/* sorted by (addr, rank, tab, name) */
	int n;
	struct named *found;	/* sorted by (name, addr) */
	int nfound;
	/* The names asked for that it imports: their positions, then their
	 * names (in names, like found's). */
	struct named *imports;
	int nimports, imports_cap;
	char *names;		/* their names, NUL-ended */
	size_t nnames;
	struct strtab tabs[MAX_STRTABS];
	struct seg *segs;	/* PT_LOAD headers, in file order */
	int nsegs;
	char *build_id;		/* lowercase hex, or NULL */
	void (*tick)(void *);	/* while opening: called between reads */
	void *tick_arg;
};

/* The C++ ABI's demangler, from libstdc++ (link -lstdc++). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* ---- reading ------------------------------------------------------------ */

/* Reads exactly len bytes at off.  Returns 0, or -errno (-EIO if the file
 * is shorter). */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* What open keeps of the headers while it reads. */
struct hdrs {
	uint64_t fsize;		/* the file's size */
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;		/* section headers, or NULL */
	size_t nsh;
	const Elf64_Shdr *symtabs[4];	/* .dynsym and .symtab, at most */
	int ntabs[4];		/* their string table's index in e->tabs */
	int nsymtabs;
};

static int check_header(const Elf64_Ehdr *eh)
{
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != GR_EM ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN))
		return -ENOEXEC;
	return 0;
}

/* Whether [off, off + size) lies within the file. */
static int in_file(const struct hdrs *h, uint64_t off, uint64_t size)
{
	return off <= h->fsize && size <= h->fsize - off;
}

/* Reads the section headers and picks the symbol tables and their string
 * tables.  Returns 0 (also for a file without sections), or -errno. */
static int read_sections(struct gr_elf *e, struct hdrs *h)
{
	const Elf64_Ehdr *eh = &h->eh;
	size_t nsh = eh->e_shnum;
	Elf64_Shdr first;
	int err;

	if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr))
		return 0;
	if (!nsh) {	/* 65280 sections or more: the count is in the first */
		if ((err = read_at(e->fd, &first, sizeof(first), eh->e_shoff)))
			return err;
		nsh = first.sh_size;
	}
	if (!nsh || nsh > MAX_SHDRS)
		return 0;
	if (!(h->sh = malloc(nsh * sizeof(*h->sh))))
		return -ENOMEM;
	if ((err = read_at(e->fd, h->sh, nsh * sizeof(*h->sh), eh->e_shoff)))
		return err;
	h->nsh = nsh;
	for (size_t i = 0; i < nsh && h->nsymtabs < 4; i++) {
		const Elf64_Shdr *s = &h->sh[i], *str;
		int t;

		if ((s->sh_type != SHT_SYMTAB && s->sh_type != SHT_DYNSYM) ||
		    s->sh_entsize != sizeof(Elf64_Sym) || !s->sh_link ||
		    s->sh_link >= nsh)
			continue;
		str = &h->sh[s->sh_link];
		/* Both inside the file: their sizes size what is read and
		 * allocated (a hostile file maps into some process). */
		if (str->sh_type != SHT_STRTAB || !str->sh_size ||
		    !in_file(h, s->sh_offset, s->sh_size) ||
		    !in_file(h, str->sh_offset, str->sh_size) ||
		    str->sh_size > UINT32_MAX)
			continue;
		for (t = 0; t < MAX_STRTABS && e->tabs[t].size; t++)
			if (e->tabs[t].shndx == s->sh_link)
				break;
		if (t == MAX_STRTABS)
			continue;	/* a third string table: not ours */
		if (!e->tabs[t].size)
			e->tabs[t] = (struct strtab){
				.off = h->sh[s->sh_link].sh_offset,
				.size = h->sh[s->sh_link].sh_size,
				.shndx = s->sh_link,
			};
		h->symtabs[h->nsymtabs] = s;
		h->ntabs[h->nsymtabs++] = t;
	}
	return 0;
}

/* Returns whether sym is a defined function worth indexing. */
static int is_func(const Elf64_Sym *sym, uint64_t strsz)
{
	int type = ELF64_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       sym->st_shndx != SHN_UNDEF && sym->st_value != 0 &&
	       sym->st_name != 0 && sym->st_name < strsz;
}

static unsigned int bind_rank(unsigned char info)
{
	switch (ELF64_ST_BIND(info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/* Returns whether sym is an undefined symbol with a name: an import. */
static int is_import(const Elf64_Sym *sym, uint64_t strsz)
{
	return sym->st_shndx == SHN_UNDEF && sym->st_name != 0 &&
	       sym->st_name < strsz;
}

/* Calls fn for each function symbol of the symbol tables, in file order,
 * and for each import too if imports.  Stops at fn's first non-zero
 * return, and returns it; else 0, or -errno if a table could not be
 * read. */
static int each_sym(struct gr_elf *e, const struct hdrs *h, int imports,
		    int (*fn)(void *arg, const Elf64_Sym *s, int tab),
		    void *arg)
{
	Elf64_Sym *buf = malloc(SYM_CHUNK * sizeof(*buf));
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (int k = 0; k < h->nsymtabs && !err; k++) {
		const Elf64_Shdr *s = h->symtabs[k];
		uint64_t strsz = e->tabs[h->ntabs[k]].size;
		size_t nsyms = s->sh_size / sizeof(Elf64_Sym);

		for (size_t i = 0; i < nsyms && !err; i += SYM_CHUNK) {
			size_t c = nsyms - i < SYM_CHUNK ? nsyms - i : SYM_CHUNK;

			if ((err = read_at(e->fd, buf, c * sizeof(*buf),
					   s->sh_offset + i * sizeof(*buf))))
				break;
			if (e->tick)
				e->tick(e->tick_arg);
			for (size_t j = 0; j < c && !err; j++)
				if (is_func(&buf[j], strsz) ||
				    (imports && is_import(&buf[j], strsz)))
					err = fn(arg, &buf[j], h->ntabs[k]);
		}
	}
	free(buf);
	return err;
}

/* ---- the address index -------------------------------------------------- */

struct span {
	uint64_t lo, hi;
	size_t n;
};

static int count_func(void *arg, const Elf64_Sym *s, int tab)
{
	struct span *sp = arg;

	(void)tab;
	if (s->st_value < sp->lo)
		sp->lo = s->st_value;
	if (s->st_value > sp->hi)
		sp->hi = s->st_value;
	sp->n++;
	return 0;
}

struct fill {
	struct gr_elf *e;
	size_t cap;
};

static int fill_func(void *arg, const Elf64_Sym *s, int tab)
{
	struct fill *f = arg;
	struct gr_elf *e = f->e;

	/* A function 4 GiB above the lowest: no library is that large. */
	if (s->st_value - e->base > UINT32_MAX || (size_t)e->n >= f->cap)
		return 0;
	e->syms[e->n++] = (struct sym){
		.addr = (uint32_t)(s->st_value - e->base),
		.name = (uint32_t)s->st_name,
		.size = s->st_size > SIZE_CLAMP ? SIZE_CLAMP :
			(unsigned int)s->st_size,
		.rank = bind_rank(s->st_info),
		.tab = (unsigned int)tab,
	};
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->tab != y->tab)
		return x->tab < y->tab ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Indexes every function address.  Returns 0 or -errno. */
static int load_addrs(struct gr_elf *e, const struct hdrs *h)
{
	struct span sp = { .lo = UINT64_MAX };
	struct fill f = { .e = e };
	size_t w = 0;
	int err;

	if ((err = each_sym(e, h, 0, count_func, &sp)) || !sp.n)
		return err;
	if (sp.n > INT_MAX)
		return -EFBIG;
	e->base = sp.lo;
	if (!(e->syms = malloc(sp.n * sizeof(*e->syms))))
		return -ENOMEM;
	f.cap = sp.n;
	if ((err = each_sym(e, h, 0, fill_func, &f)))
		return err;
	qsort(e->syms, (size_t)e->n, sizeof(*e->syms), cmp_sym);

	/* One record per address and rank: the first of each sorts best
	 * (.dynsym's name before .symtab's); a local alias is kept beside a
	 * global one only for the order of preference, and .dynsym and
	 * .symtab list most exported functions twice. */
	for (int i = 0; i < e->n; i++) {
		struct sym *p = w ? &e->syms[w - 1] : NULL;
		const struct sym *s = &e->syms[i];

		if (p && p->addr == s->addr && p->rank == s->rank) {
			if (s->size > p->size)
				p->size = s->size;
			continue;
		}
		e->syms[w++] = *s;
	}
	e->n = (int)w;
	if (!w) {	/* the file changed between the passes */
		free(e->syms);
		e->syms = NULL;
	} else if (w < sp.n) {
		struct sym *shrunk = realloc(e->syms, w * sizeof(*e->syms));

		if (shrunk)
			e->syms = shrunk;
	}
	uint64_t maxend = 0;
	for (size_t i = 0; i < w; i++) {
		struct sym *s = &e->syms[i];
		uint64_t end = (uint64_t)s->addr + s->size;

		if (end > maxend)
			maxend = end;
		s->maxend = maxend > UINT32_MAX ? UINT32_MAX : (uint32_t)maxend;
	}
	return 0;
}

/* ---- functions by name -------------------------------------------------- */

/* The names asked for, hashed (less any @VERSION). */
struct want {
	const char *const *names;
	int n;
	int *slots;		/* index + 1 into names, or 0 */
	size_t mask;
	unsigned char first[256];	/* a wanted name starts with it */
};

static uint64_t hash_name(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int want_init(struct want *w, const char *const *names, int n)
{
	size_t cap = 16;

	while (cap < 2 * (size_t)n)
		cap *= 2;
	w->names = names;
	w->n = n;
	w->mask = cap - 1;
	if (!(w->slots = calloc(cap, sizeof(*w->slots))))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		size_t len = strcspn(names[i], "@");
		size_t k = hash_name(names[i], len) & w->mask;

		if (!len)
			continue;
		w->first[(unsigned char)names[i][0]] = 1;
		while (w->slots[k])
			k = (k + 1) & w->mask;
		w->slots[k] = i + 1;
	}
	return 0;
}

/* Returns whether the name s (len bytes before any '@') is wanted. */
static int want_has(const struct want *w, const char *s, size_t len)
{
	for (size_t k = hash_name(s, len) & w->mask; w->slots[k];
	     k = (k + 1) & w->mask) {
		const char *n = w->names[w->slots[k] - 1];

		if (strncmp(n, s, len) == 0 && (!n[len] || n[len] == '@'))
			return 1;
	}
	return 0;
}

/* A function symbol's name, by where it lies: (tab << 32) | st_name. */
struct namepos {
	uint64_t *v;
	size_t n, cap;
};

static int add_pos(void *arg, const Elf64_Sym *s, int tab)
{
	struct namepos *p = arg;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		uint64_t *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (uint64_t)tab << 32 | s->st_name;
	return 0;
}

/* Where (tab, off) of a position lie. */
#define POS_TAB(v) ((int)((v) >> 32))
#define POS_OFF(v) ((uint32_t)(v))

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static char *read_name(const struct gr_elf *e, int tab, uint64_t off);

/* The bucket of a position: its string table's WINDOW-sized slice. */
static size_t bucket_of(uint64_t v, size_t nb0)
{
	return (size_t)POS_TAB(v) * nb0 + (POS_OFF(v) >> WINDOW_SHIFT);
}

/* Orders p's positions by bucket (a counting sort: libtorch's million
 * positions would take a qsort hundreds of ms, on gpurecd's event loop),
 * not within one.  Returns 0 or -ENOMEM. */
static int bucket_sort(struct gr_elf *e, struct namepos *p, size_t nb0,
		       size_t nb)
{
	size_t *at = calloc(nb + 1, sizeof(*at));
	uint64_t *v = malloc(p->n * sizeof(*v));

	if (!at || !v) {
		free(at);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n; i++)
		at[bucket_of(p->v[i], nb0) + 1]++;
	for (size_t b = 0; b < nb; b++)
		at[b + 1] += at[b];
	for (size_t i = 0; i < p->n; i++) {
		v[at[bucket_of(p->v[i], nb0)]++] = p->v[i];
		if (e->tick && !(i & 0xffff))
			e->tick(e->tick_arg);
	}
	free(at);
	free(p->v);
	p->v = v;
	return 0;
}

/* Keeps, of p's positions, those whose names are wanted, sorted and
 * distinct: reads the string tables in file order, a bucket's window (and
 * WINDOW_SLACK past it, for names that straddle) at a time.  Returns 0 or
 * -errno. */
static int match_names(struct gr_elf *e, struct namepos *p,
		       const struct want *w)
{
	size_t nb0 = (size_t)(e->tabs[0].size >> WINDOW_SHIFT) + 1;
	size_t nb = nb0 + (size_t)(e->tabs[1].size >> WINDOW_SHIFT) + 1;
	char *win = malloc(WINDOW + WINDOW_SLACK + 1);
	size_t kept = 0, wb = SIZE_MAX;	/* the bucket in the window */
	uint64_t wlo = 0, whi = 0;	/* the window: [wlo, whi) */
	int err = 0;

	if (!win || (err = bucket_sort(e, p, nb0, nb))) {
		free(win);
		return err ? err : -ENOMEM;
	}
	for (size_t i = 0; i < p->n && !err; i++) {
		int tab = POS_TAB(p->v[i]);
		uint64_t off = POS_OFF(p->v[i]);
		const struct strtab *t = &e->tabs[tab];
		size_t b = bucket_of(p->v[i], nb0);

		if (b != wb) {
			uint64_t lo = off >> WINDOW_SHIFT << WINDOW_SHIFT;
			size_t len = t->size - lo < WINDOW + WINDOW_SLACK ?
				     t->size - lo : WINDOW + WINDOW_SLACK;

			if ((err = read_at(e->fd, win, len, t->off + lo)))
				break;
			if (e->tick)
				e->tick(e->tick_arg);
			win[len] = 0;
			wb = b, wlo = lo, whi = lo + len;
		}
		const char *s = win + (off - wlo);

		if (!w->first[(unsigned char)*s])
			continue;
		size_t len = strcspn(s, "@");
		int want;

		if (s + len == win + (whi - wlo) && whi < t->size) {
			/* Longer than the slack: read it alone. */
			char *name = read_name(e, tab, off);

			want = name && want_has(w, name, strcspn(name, "@"));
			free(name);
		} else {
			want = want_has(w, s, len);
		}
		if (want)
			p->v[kept++] = p->v[i];
	}
	free(win);
	/* Few: sorted for collect's bsearch, and distinct. */
	qsort(p->v, kept, sizeof(*p->v), cmp_u64);
	p->n = 0;
	for (size_t i = 0; i < kept; i++)
		if (!p->n || p->v[p->n - 1] != p->v[i])
			p->v[p->n++] = p->v[i];
	return err;
}

struct collect {
	struct gr_elf *e;
	const struct namepos *pos;	/* wanted positions, sorted */
	size_t cap;			/* of e->found */
	size_t names_cap;		/* of e->names */
};

/* Reads the NUL-ended name at (tab, off) into a malloc'd string. */
static char *read_name(const struct gr_elf *e, int tab, uint64_t off)
{
	const struct strtab *t = &e->tabs[tab];
	size_t cap = 256;
	char *s = NULL;

	if (off >= t->size)
		return NULL;
	for (;;) {
		size_t len = t->size - off < cap ? t->size - off : cap;
		char *n = realloc(s, len + 1);

		if (!n)
			break;
		s = n;
		if (read_at(e->fd, s, len, t->off + off))
			break;
		s[len] = 0;
		if (strlen(s) < len || len < cap)
			return s;
		if (cap >= NAME_MAX_LEN)
			break;
		cap *= 4;
	}
	free(s);
	return NULL;
}

static int collect_func(void *arg, const Elf64_Sym *s, int tab)
{
	struct collect *c = arg;
	struct gr_elf *e = c->e;
	uint64_t key = (uint64_t)tab << 32 | s->st_name;

	if (!bsearch(&key, c->pos->v, c->pos->n, sizeof(key), cmp_u64))
		return 0;
	if (s->st_shndx == SHN_UNDEF) {
		/* An import: only whether there is one is kept. */
		for (int i = 0; i < e->nimports; i++)
			if (e->imports[i].addr == key)
				return 0;
		if (e->nimports == e->imports_cap) {
			int cap = e->imports_cap ? 2 * e->imports_cap : 16;
			struct named *v = realloc(e->imports,
						  (size_t)cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			e->imports = v;
			e->imports_cap = cap;
		}
		e->imports[e->nimports++] = (struct named){ .addr = key };
		return 0;
	}
	if ((size_t)e->nfound == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct named *v = realloc(e->found, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->found = v;
		c->cap = cap;
	}
	char *name = read_name(e, tab, s->st_name);
	if (!name)
		return -ENOMEM;
	/* Names are appended to one buffer; the pointers are set once it
	 * stops moving. */
	size_t len = strlen(name) + 1;
	if (e->nnames + len > c->names_cap) {
		size_t cap = 2 * (e->nnames + len);
		char *buf = realloc(e->names, cap);
		if (!buf) {
			free(name);
			return -ENOMEM;
		}
		e->names = buf;
		c->names_cap = cap;
	}
	memcpy(e->names + e->nnames, name, len);
	free(name);
	e->found[e->nfound++] = (struct named){
		.addr = s->st_value, .name = (const char *)(uintptr_t)e->nnames,
	};
	e->nnames += len;
	return 0;
}

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Keeps the functions called by one of the n names.  Returns 0 or
 * -errno. */
static int load_found(struct gr_elf *e, const struct hdrs *h,
		      const char *const *names, int n)
{
	struct namepos pos = { 0 };
	struct want w = { 0 };
	struct collect c = { .e = e, .pos = &pos };
	int err;

	if (!n)
		return 0;
	if (!(err = want_init(&w, names, n)) &&
	    !(err = each_sym(e, h, 1, add_pos, &pos)) && pos.n) {
		if (!(err = match_names(e, &pos, &w)) && pos.n)
			err = each_sym(e, h, 1, collect_func, &c);
	}
	free(w.slots);
	free(pos.v);
	for (int i = 0; i < e->nimports && !err; i++) {
		/* Their names join found's, before the pointers are set. */
		uint64_t key = e->imports[i].addr;
		char *name = read_name(e, POS_TAB(key), POS_OFF(key));
		size_t len = name ? strlen(name) + 1 : 0;
		char *buf = name ? realloc(e->names, e->nnames + len) : NULL;
		if (!buf) {
			free(name);
			err = -ENOMEM;
			break;
		}
		e->names = buf;
		memcpy(e->names + e->nnames, name, len);
		free(name);
		e->imports[i].name = (const char *)(uintptr_t)e->nnames;
		e->nnames += len;
	}
	if (err)
		return err;
	for (int i = 0; i < e->nimports; i++)
		e->imports[i].name = e->names + (uintptr_t)e->imports[i].name;
	if (!e->nfound)
		return 0;
	for (int i = 0; i < e->nfound; i++)
		e->found[i].name = e->names + (uintptr_t)e->found[i].name;
	qsort(e->found, (size_t)e->nfound, sizeof(*e->found), cmp_named);
	/* .dynsym and .symtab list most exported functions twice. */
	int k = 0;
	for (int i = 0; i < e->nfound; i++)
		if (!k || cmp_named(&e->found[k - 1], &e->found[i]))
			e->found[k++] = e->found[i];
	e->nfound = k;
	return 0;
}

/* ---- headers ------------------------------------------------------------ */

/* Copies the PT_LOAD headers.  Returns 0 on success, -errno on failure. */
static int load_segs(struct gr_elf *e, const struct hdrs *h,
		     Elf64_Phdr **phdrs, size_t *nph)
{
	const Elf64_Ehdr *eh = &h->eh;
	size_t n = eh->e_phnum;
	int err;

	*phdrs = NULL;
	*nph = 0;
	if (n == PN_XNUM && h->nsh)
		n = h->sh[0].sh_info;
	if (!n || !eh->e_phoff || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    n > 65536)
		return 0;
	if (!(*phdrs = malloc(n * sizeof(**phdrs))) ||
	    !(e->segs = calloc(n, sizeof(*e->segs))))
		return -ENOMEM;
	if ((err = read_at(e->fd, *phdrs, n * sizeof(**phdrs), eh->e_phoff)))
		return err;
	*nph = n;
	for (size_t i = 0; i < n; i++) {
		const Elf64_Phdr *ph = &(*phdrs)[i];

		if (ph->p_type == PT_LOAD)
			e->segs[e->nsegs++] = (struct seg){
				.vaddr = ph->p_vaddr, .memsz = ph->p_memsz,
				.off = ph->p_offset, .filesz = ph->p_filesz,
			};
	}
	return 0;
}

/* Looks for NT_GNU_BUILD_ID in one block of notes (align: 4 or 8).
 * Returns 0 if found or absent, -ENOMEM on failure. */
static int scan_notes(struct gr_elf *e, const unsigned char *d, size_t size,
		      size_t align)
{
	static const char hex[] = "0123456789abcdef";
	size_t pos = 0;

#define ALIGN_UP(x) (((x) + align - 1) & ~(align - 1))
	while (pos + sizeof(Elf64_Nhdr) <= size) {
		Elf64_Nhdr nh;

		memcpy(&nh, d + pos, sizeof(nh));
		size_t name = pos + sizeof(nh);
		size_t desc = name + ALIGN_UP((size_t)nh.n_namesz);
		size_t next = desc + ALIGN_UP((size_t)nh.n_descsz);

		if (desc > size || nh.n_descsz > size - desc || next <= pos)
			break;
		pos = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp(d + name, "GNU", 4) != 0 ||
		    !nh.n_descsz || nh.n_descsz > MAX_BUILD_ID)
			continue;
		if (!(e->build_id = malloc(2 * nh.n_descsz + 1)))
			return -ENOMEM;
		for (size_t i = 0; i < nh.n_descsz; i++) {
			e->build_id[2 * i] = hex[d[desc + i] >> 4];
			e->build_id[2 * i + 1] = hex[d[desc + i] & 15];
		}
		e->build_id[2 * nh.n_descsz] = '\0';
		return 0;
	}
#undef ALIGN_UP
	return 0;
}

/* Reads one block of notes and scans it.  Returns 0 or -ENOMEM. */
static int read_notes(struct gr_elf *e, uint64_t off, uint64_t size,
		      uint64_t align)
{
	unsigned char *d;
	int err = 0;

	if (!size || size > MAX_NOTES)
		return 0;
	if (!(d = malloc(size)))
		return -ENOMEM;
	if (!read_at(e->fd, d, size, off))
		err = scan_notes(e, d, size, align == 8 ? 8 : 4);
	free(d);
	return err;
}

/* Finds the build id in SHT_NOTE sections, or failing those (no section
 * headers) in PT_NOTE segments.  Returns 0 on success, -errno on
 * failure. */
static int load_build_id(struct gr_elf *e, const struct hdrs *h,
			 const Elf64_Phdr *ph, size_t nph)
{
	int err;

	for (size_t i = 0; i < h->nsh && !e->build_id; i++)
		if (h->sh[i].sh_type == SHT_NOTE &&
		    (err = read_notes(e, h->sh[i].sh_offset, h->sh[i].sh_size,
				      h->sh[i].sh_addralign)))
			return err;
	for (size_t i = 0; i < nph && !e->build_id; i++)
		if (ph[i].p_type == PT_NOTE &&
		    (err = read_notes(e, ph[i].p_offset, ph[i].p_filesz,
				      ph[i].p_align)))
			return err;
	return 0;
}

/* Opens path into a new gr_elf, reads its headers, and then its functions
 * by address (names NULL) or those called one of names. */
static struct gr_elf *open_elf(const char *path, const char *const *names,
			       int n, void (*tick)(void *), void *arg)
{
	struct gr_elf *e = NULL;
	struct hdrs h = { 0 };
	Elf64_Phdr *ph = NULL;
	size_t nph = 0;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
		goto out;
	}
	h.fsize = (uint64_t)st.st_size;
	if (read_at(fd, &h.eh, sizeof(h.eh), 0) || check_header(&h.eh)) {
		err = -ENOEXEC;
		goto out;
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		err = -ENOMEM;
		goto out;
	}
	e->fd = fd;
	e->tick = tick;
	e->tick_arg = arg;
	if (!(err = read_sections(e, &h)) &&
	    !(err = load_segs(e, &h, &ph, &nph)) &&
	    !(err = load_build_id(e, &h, ph, nph)))
		err = names ? load_found(e, &h, names, n) : load_addrs(e, &h);
out:
	free(h.sh);
	free(ph);
	if (err == -EIO)
		err = -ENOEXEC;	/* shorter than its headers say */
	if (err) {
		if (e)
			gr_elf__close(e);
		else
			close(fd);
		errno = -err;
		return NULL;
	}
	e->tick = NULL;
	if (names || !e->n) {	/* no name will be read */
		close(e->fd);
		e->fd = -1;
	}
	return e;
}

struct gr_elf *gr_elf__open(const char *path)
{
	return open_elf(path, NULL, 0, NULL, NULL);
}

struct gr_elf *gr_elf__open_find(const char *path, const char *const *names,
				 int n)
{
	return gr_elf__open_find_tick(path, names, n, NULL, NULL);
}

struct gr_elf *gr_elf__open_find_tick(const char *path,
				      const char *const *names, int n,
				      void (*tick)(void *), void *arg)
{
	static const char *const none[1];

	return open_elf(path, names ? names : none, names ? n : 0, tick, arg);
}

size_t gr_elf__bytes(const struct gr_elf *e)
{
	if (!e)
		return 0;
	return sizeof(*e) + (size_t)e->n * sizeof(*e->syms) +
	       (size_t)(e->nfound + e->nimports) * sizeof(*e->found) +
	       e->nnames +
	       (size_t)e->nsegs * sizeof(*e->segs) +
	       (e->build_id ? strlen(e->build_id) + 1 : 0);
}

void gr_elf__close(struct gr_elf *e)
{
	if (!e)
		return;
	if (e->fd >= 0)
		close(e->fd);
	free(e->syms);
	free(e->found);
	free(e->imports);
	free(e->names);
	free(e->segs);
	free(e->build_id);
	free(e);
}

/* ---- lookups ------------------------------------------------------------ */

int gr_elf__nfuncs(const struct gr_elf *e)
{
	return e->n;
}

const char *gr_elf__build_id(const struct gr_elf *e)
{
	return e->build_id;
}

/* Returns 0 and sets *off if a segment's file image holds va, else
 * -ENOENT. */
static int vaddr_to_off(const struct gr_elf *e, uint64_t va, uint64_t *off)
{
	for (int i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];

		if (va >= s->vaddr && va - s->vaddr < s->filesz) {
			*off = va - s->vaddr + s->off;
			return 0;
		}
	}
	return -ENOENT;
}

int gr_elf__off_to_vaddr(const struct gr_elf *e, uint64_t off,
			 uint64_t *vaddr)
{
	for (int i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];

		if (off >= s->off && off - s->off < s->filesz) {
			*vaddr = off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* Compares symbol name s with key: name, followed by '@' if versioned. */
static int keycmp(const char *s, const char *name, size_t len, int versioned)
{
	int c = strncmp(s, name, len);

	if (c || !versioned)
		return c ? c : (unsigned char)s[len] != 0;
	return (int)(unsigned char)s[len] - '@';
}

/* Returns the first found position whose name is >= the key. */
static int lower_bound(const struct gr_elf *e, const char *name, size_t len,
		       int versioned)
{
	int lo = 0, hi = e->nfound;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (keycmp(e->found[mid].name, name, len, versioned) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds the offset of addr to offs unless it is there.  Returns the new
 * count. */
static int add_off(const struct gr_elf *e, uint64_t addr, uint64_t *offs,
		   int found)
{
	uint64_t off;

	if (vaddr_to_off(e, addr, &off))
		return found;
	for (int k = 0; k < found; k++)
		if (offs[k] == off)
			return found;
	offs[found] = off;
	return found + 1;
}

/* Insertion sort: there are a handful at most. */
static void sort_offs(uint64_t *offs, int n)
{
	for (int i = 1; i < n; i++) {
		uint64_t v = offs[i];
		int j = i;

		for (; j > 0 && offs[j - 1] > v; j--)
			offs[j] = offs[j - 1];
		offs[j] = v;
	}
}

int gr_elf__find(const struct gr_elf *e, const char *name, uint64_t *offs,
		 int max)
{
	int found = 0;
	size_t len;

	if (!name || !*name || max <= 0 || !e->nfound)
		return 0;
	len = strlen(name);
	/* name exactly, then name@VERSION and name@@VERSION (.symtab). */
	for (int versioned = 0; versioned < 2; versioned++) {
		for (int i = lower_bound(e, name, len, versioned);
		     i < e->nfound && found < max; i++) {
			if (keycmp(e->found[i].name, name, len, versioned))
				break;
			found = add_off(e, e->found[i].addr, offs, found);
		}
	}
	sort_offs(offs, found);
	return found;
}

int gr_elf__imports(const struct gr_elf *e, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < e->nimports; i++)
		if (!keycmp(e->imports[i].name, name, len, 0) ||
		    !keycmp(e->imports[i].name, name, len, 1))
			return 1;
	return 0;
}

int gr_elf__has_any(const struct gr_elf *e, const char *const *names, int n)
{
	uint64_t off;

	for (int i = 0; i < n; i++)
		if (gr_elf__find(e, names[i], &off, 1))
			return 1;
	return 0;
}

/* Returns whether a and b lie in one PT_LOAD segment's memory image (or
 * there are no segments to tell). */
static int same_seg(const struct gr_elf *e, uint64_t a, uint64_t b)
{
	if (!e->nsegs)
		return 1;
	for (int i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];

		if (a >= s->vaddr && a - s->vaddr < s->memsz &&
		    b >= s->vaddr && b - s->vaddr < s->memsz)
			return 1;
	}
	return 0;
}

/* The symbol holding vaddr (see elfsyms.h), or NULL. */
static const struct sym *containing(const struct gr_elf *e, uint64_t vaddr)
{
	const struct sym *syms = e->syms;
	int lo = 0, hi = e->n, top, i;

	if (!e->n || vaddr < e->base || vaddr - e->base > UINT32_MAX)
		return NULL;
	uint32_t a = (uint32_t)(vaddr - e->base);
	while (lo < hi) {	/* the first symbol above a */
		int mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	top = lo - 1;

	/* The innermost sized symbol covering a: walk down while some
	 * symbol at or below i still ends above a. */
	for (i = top; i >= 0 && syms[i].maxend > a; i--) {
		if (!syms[i].size || a - syms[i].addr >= syms[i].size)
			continue;
		/* The best alias sorts first among equal addresses. */
		for (int j = i - 1; j >= 0 && syms[j].addr == syms[i].addr; j--)
			if (a - syms[j].addr < syms[j].size)
				i = j;
		return &syms[i];
	}

	/* Else a size-0 symbol at the nearest address below. */
	for (i = top; i > 0 && syms[i - 1].addr == syms[top].addr; i--)
		;
	for (; i <= top; i++)
		if (!syms[i].size &&
		    same_seg(e, e->base + syms[i].addr, vaddr))
			return &syms[i];
	return NULL;
}

char *gr_elf__symbolize(const struct gr_elf *e, uint64_t vaddr,
			uint64_t *off_in)
{
	const struct sym *s = containing(e, vaddr);
	char *name;

	if (!s || e->fd < 0 || !(name = read_name(e, s->tab, s->name)))
		return NULL;
	*off_in = vaddr - (e->base + s->addr);
	return name;
}

/* ---- demangling --------------------------------------------------------- */

char *gr_demangle(const char *mangled)
{
	const char *at;
	char *base, *d, *out;
	int status = 0;

	if (!mangled || strncmp(mangled, "_Z", 2) != 0)
		return NULL;
	if (!(at = strchr(mangled, '@'))) {
		d = __cxa_demangle(mangled, NULL, NULL, &status);
		if (status != 0) {
			free(d);
			return NULL;
		}
		return d;
	}
	/* "_Z3foov@@V1" -> "foo()@@V1". */
	if (!(base = strndup(mangled, (size_t)(at - mangled))))
		return NULL;
	d = __cxa_demangle(base, NULL, NULL, &status);
	free(base);
	if (status != 0 || !d) {
		free(d);
		return NULL;
	}
	out = malloc(strlen(d) + strlen(at) + 1);
	if (out) {
		strcpy(out, d);
		strcat(out, at);
	}
	free(d);
	return out;
}
