/* elfsyms.c - owns reading an ELF's function symbols, PT_LOAD headers and
 * build id into one immutable index, and C++ demangling.
 *
 * Both .symtab and .dynsym count: nvcc links the CUDA runtime statically by
 * default, and then cudaLaunchKernel and friends are local (or hidden)
 * symbols that only .symtab has; CUDA 13's kernel host stubs are hidden
 * too.  The file is read once with ELF_C_READ_MMAP and closed before
 * gr_elf__open returns; what is kept is copied out:
 *
 *  - the string tables, each copied whole, once, into one buffer; symbols
 *    hold 32-bit offsets into it (a static binary the size of PyTorch has
 *    ~500k symbols: no malloc per symbol);
 *  - one 24-byte record per distinct (address, name) function symbol,
 *    sorted by address (for symbolizing) with a running maximum of symbol
 *    ends, so that a containing symbol is found even when symbols nest;
 *  - a 4-byte index per symbol sorted by name (for finding).
 *
 * Nothing is written after open, so lookups need no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
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

#define SIZE_CLAMP ((1u << 30) - 1)	/* fits the 30-bit size field */
#define MAX_SYMTABS 8			/* .dynsym, .symtab, and slack */
#define MAX_BUILD_ID 64			/* bytes; GNU ld makes 16 or 20 */

struct sym {
	uint64_t addr;		/* st_value */
	uint64_t maxend;	/* max(addr + size) over this and all before */
	uint32_t name;		/* offset into gr_elf.strs */
	unsigned int size : 30;	/* st_size, clamped to SIZE_CLAMP */
	unsigned int rank : 2;	/* alias preference: 0 global, 1 weak, 2 local */
};

struct seg {
	uint64_t vaddr, memsz, off, filesz;
};

struct gr_elf {
	struct sym *syms;	/* sorted by (addr, rank, name) */
	uint32_t *by_name;	/* indices into syms, sorted by (name, addr) */
	int n;
	char *strs;		/* copies of the string tables, NUL-ended */
	size_t nstrs;		/* bytes of strs */
	struct seg *segs;	/* PT_LOAD headers, in file order */
	int nsegs;
	char *build_id;		/* lowercase hex, or NULL */
};

/* The C++ ABI's demangler, from libstdc++ (link -lstdc++). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* ---- building ----------------------------------------------------------- */

struct symtab {
	Elf_Data *data, *strs;
	size_t nsyms;
	size_t link;		/* section index of the string table */
	size_t base;		/* where its strings start in gr_elf.strs */
};

/* Returns whether sym is a defined function worth indexing. */
static int is_func(const GElf_Sym *sym, size_t strsz)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       sym->st_shndx != SHN_UNDEF && sym->st_value != 0 &&
	       sym->st_name != 0 && sym->st_name < strsz;
}

static unsigned int bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int cmp_sym(const void *a, const void *b, void *strs)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp((char *)strs + x->name, (char *)strs + y->name);
}

static int cmp_name(const void *a, const void *b, void *ep)
{
	const struct gr_elf *e = ep;
	const struct sym *x = &e->syms[*(const uint32_t *)a];
	const struct sym *y = &e->syms[*(const uint32_t *)b];
	int c = strcmp(e->strs + x->name, e->strs + y->name);

	if (c)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Finds the symbol tables and sizes everything.  Returns 0 on success,
 * -errno on failure. */
static int scan_symtabs(Elf *elf, struct symtab *t, int *nt, size_t *nsyms,
			size_t *strsz)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t fsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);

	*nt = 0;
	*nsyms = *strsz = 0;
	if (!fsize)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn)) && *nt < MAX_SYMTABS) {
		struct symtab *s = &t[*nt];
		Elf_Scn *sscn;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		sscn = elf_getscn(elf, sh.sh_link);
		s->data = elf_getdata(scn, NULL);
		s->strs = sscn ? elf_getdata(sscn, NULL) : NULL;
		if (!s->data || !s->data->d_buf || !s->strs ||
		    !s->strs->d_buf || !s->strs->d_size)
			continue;
		s->nsyms = s->data->d_size / fsize;
		s->link = sh.sh_link;
		s->base = SIZE_MAX;
		for (int i = 0; i < *nt; i++)
			if (t[i].link == s->link)
				s->base = t[i].base;	/* shared table */
		if (s->base == SIZE_MAX) {
			s->base = *strsz;
			*strsz += s->strs->d_size + 1;
		}
		for (size_t i = 0; i < s->nsyms; i++) {
			GElf_Sym sym;

			if (gelf_getsym(s->data, (int)i, &sym) &&
			    is_func(&sym, s->strs->d_size))
				(*nsyms)++;
		}
		(*nt)++;
	}
	if (*strsz > UINT32_MAX || *nsyms > INT_MAX)
		return -EFBIG;
	return 0;
}

/* Copies the string tables and function symbols into e.  Returns 0 on
 * success, -errno on failure. */
static int load_syms(struct gr_elf *e, Elf *elf)
{
	struct symtab t[MAX_SYMTABS];
	size_t nsyms, strsz, n = 0;
	int nt, err;

	if ((err = scan_symtabs(elf, t, &nt, &nsyms, &strsz)))
		return err;
	if (!nsyms)
		return 0;
	e->strs = malloc(strsz);
	e->nstrs = strsz;
	e->syms = malloc(nsyms * sizeof(*e->syms));
	if (!e->strs || !e->syms)
		return -ENOMEM;
	for (int k = 0; k < nt; k++) {
		const struct symtab *s = &t[k];
		size_t strsize = s->strs->d_size;

		memcpy(e->strs + s->base, s->strs->d_buf, strsize);
		e->strs[s->base + strsize] = '\0';
		for (size_t i = 0; i < s->nsyms && n < nsyms; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(s->data, (int)i, &sym) ||
			    !is_func(&sym, strsize))
				continue;
			e->syms[n++] = (struct sym){
				.addr = sym.st_value,
				.name = (uint32_t)(s->base + sym.st_name),
				.size = sym.st_size > SIZE_CLAMP ? SIZE_CLAMP :
					(unsigned int)sym.st_size,
				.rank = bind_rank(sym.st_info),
			};
		}
	}
	qsort_r(e->syms, n, sizeof(*e->syms), cmp_sym, e->strs);

	/* .dynsym and .symtab list most exported functions twice. */
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		struct sym *p = w ? &e->syms[w - 1] : NULL;
		const struct sym *s = &e->syms[i];

		if (p && p->addr == s->addr && p->rank == s->rank &&
		    strcmp(e->strs + p->name, e->strs + s->name) == 0) {
			if (s->size > p->size)
				p->size = s->size;
			continue;
		}
		e->syms[w++] = *s;
	}
	n = w;
	e->n = (int)n;
	if (n < nsyms) {
		struct sym *shrunk = realloc(e->syms, n * sizeof(*e->syms));

		if (shrunk)
			e->syms = shrunk;
	}

	uint64_t maxend = 0;
	for (size_t i = 0; i < n; i++) {
		struct sym *s = &e->syms[i];
		uint64_t end = s->addr + s->size;

		if (end < s->addr)
			end = UINT64_MAX;
		if (end > maxend)
			maxend = end;
		s->maxend = maxend;
	}

	if (!(e->by_name = malloc(n * sizeof(*e->by_name))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		e->by_name[i] = (uint32_t)i;
	qsort_r(e->by_name, n, sizeof(*e->by_name), cmp_name, e);
	return 0;
}

/* Copies the PT_LOAD headers.  Returns 0 on success, -errno on failure. */
static int load_segs(struct gr_elf *e, Elf *elf)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph) != 0 || !nph)
		return 0;
	if (!(e->segs = calloc(nph, sizeof(*e->segs))))
		return -ENOMEM;
	for (size_t i = 0; i < nph && i <= INT_MAX; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->segs[e->nsegs++] = (struct seg){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.off = ph.p_offset, .filesz = ph.p_filesz,
		};
	}
	return 0;
}

/* Looks for NT_GNU_BUILD_ID in one block of notes.  Returns 0 if found or
 * absent, -ENOMEM on failure. */
static int scan_notes(struct gr_elf *e, Elf_Data *data)
{
	static const char hex[] = "0123456789abcdef";
	size_t pos = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && data->d_buf && pos < data->d_size &&
	       (next = gelf_getnote(data, pos, &nh, &name_off, &desc_off))) {
		const unsigned char *d = (const unsigned char *)data->d_buf;

		pos = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp(d + name_off, "GNU", 4) != 0 ||
		    !nh.n_descsz || nh.n_descsz > MAX_BUILD_ID)
			continue;
		if (!(e->build_id = malloc(2 * nh.n_descsz + 1)))
			return -ENOMEM;
		for (size_t i = 0; i < nh.n_descsz; i++) {
			e->build_id[2 * i] = hex[d[desc_off + i] >> 4];
			e->build_id[2 * i + 1] = hex[d[desc_off + i] & 15];
		}
		e->build_id[2 * nh.n_descsz] = '\0';
		return 0;
	}
	return 0;
}

/* Finds the build id in SHT_NOTE sections, or failing those (no section
 * headers) in PT_NOTE segments.  Returns 0 on success, -errno on
 * failure. */
static int load_build_id(struct gr_elf *e, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t nph;
	int err;

	while (!e->build_id && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    (err = scan_notes(e, elf_getdata(scn, NULL))))
			return err;
	}
	if (e->build_id || elf_getphdrnum(elf, &nph) != 0)
		return 0;
	for (size_t i = 0; i < nph && i <= INT_MAX && !e->build_id; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
			ph.p_filesz, ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if ((err = scan_notes(e, d)))
			return err;
	}
	return 0;
}

/* Returns 0 if elf is a 64-bit executable or shared object of this
 * machine, else -ENOEXEC. */
static int check_header(Elf *elf)
{
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !gelf_getehdr(elf, &eh) || eh.e_machine != GR_EM ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	return 0;
}

struct gr_elf *gr_elf__open(const char *path)
{
	struct gr_elf *e = NULL;
	Elf *elf = NULL;
	struct stat st;
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return errno = ENOSYS, NULL;
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
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || (err = check_header(elf))) {
		err = -ENOEXEC;
		goto out;
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		err = -ENOMEM;
		goto out;
	}
	if (!(err = load_segs(e, elf)) && !(err = load_syms(e, elf)))
		err = load_build_id(e, elf);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		gr_elf__close(e);
		errno = -err;
		return NULL;
	}
	return e;
}

size_t gr_elf__bytes(const struct gr_elf *e)
{
	if (!e)
		return 0;
	return sizeof(*e) + e->nstrs +
	       (size_t)e->n * (sizeof(*e->syms) + sizeof(*e->by_name)) +
	       (size_t)e->nsegs * sizeof(*e->segs) +
	       (e->build_id ? strlen(e->build_id) + 1 : 0);
}

void gr_elf__close(struct gr_elf *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->by_name);
	free(e->strs);
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

/* Returns the first by_name position whose name is >= the key. */
static int lower_bound(const struct gr_elf *e, const char *name, size_t len,
		       int versioned)
{
	int lo = 0, hi = e->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const char *s = e->strs + e->syms[e->by_name[mid]].name;

		if (keycmp(s, name, len, versioned) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds the offset of syms[idx] to offs unless it is there.  Returns the
 * new count. */
static int add_off(const struct gr_elf *e, uint32_t idx, uint64_t *offs,
		   int found)
{
	uint64_t off;

	if (vaddr_to_off(e, e->syms[idx].addr, &off))
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

	if (!name || !*name || max <= 0 || !e->n)
		return 0;
	len = strlen(name);
	/* name exactly, then name@VERSION and name@@VERSION (.symtab). */
	for (int versioned = 0; versioned < 2; versioned++) {
		for (int i = lower_bound(e, name, len, versioned);
		     i < e->n && found < max; i++) {
			const char *s = e->strs + e->syms[e->by_name[i]].name;

			if (keycmp(s, name, len, versioned) != 0)
				break;
			found = add_off(e, e->by_name[i], offs, found);
		}
	}
	sort_offs(offs, found);
	return found;
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

const char *gr_elf__symbolize(const struct gr_elf *e, uint64_t vaddr,
			      uint64_t *off_in)
{
	const struct sym *syms = e->syms;
	int lo = 0, hi = e->n, top, i;

	while (lo < hi) {	/* the first symbol above vaddr */
		int mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	top = lo - 1;

	/* The innermost sized symbol covering vaddr: walk down while some
	 * symbol at or below i still ends above vaddr. */
	for (i = top; i >= 0 && syms[i].maxend > vaddr; i--) {
		if (!syms[i].size || vaddr - syms[i].addr >= syms[i].size)
			continue;
		/* The best alias sorts first among equal addresses. */
		for (int j = i - 1; j >= 0 && syms[j].addr == syms[i].addr; j--)
			if (vaddr - syms[j].addr < syms[j].size)
				i = j;
		*off_in = vaddr - syms[i].addr;
		return e->strs + syms[i].name;
	}

	/* Else a size-0 symbol at the nearest address below. */
	for (i = top; i > 0 && syms[i - 1].addr == syms[top].addr; i--)
		;
	for (; i <= top; i++) {
		if (syms[i].size || !same_seg(e, syms[i].addr, vaddr))
			continue;
		*off_in = vaddr - syms[i].addr;
		return e->strs + syms[i].name;
	}
	return NULL;
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
