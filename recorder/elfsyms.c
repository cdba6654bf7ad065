/* elfsyms.c - reads an ELF's function symbols once into two sorted arrays.
 *
 * Both .symtab and .dynsym count: nvcc links the CUDA runtime statically by
 * default, and then its entry points are local symbols that only .symtab
 * has.  Names live in one copy of the string tables (no malloc per symbol:
 * a large static binary has hundreds of thousands).  The file is read with
 * ELF_C_READ_MMAP and closed before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/elfsyms.h"

struct sym {
	uint64_t addr, size;
	uint32_t name; /* offset into strs */
};

struct seg {
	uint64_t vaddr, off, filesz;
};

struct gr_elf {
	struct sym *by_addr;  /* sorted by address */
	uint32_t *by_name;    /* indices into by_addr, sorted by name */
	int n;
	char *strs;
	size_t strs_len;
	struct seg *segs;
	int nsegs;
};

/* Declared here: the C++ ABI's demangler, from libstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static const struct gr_elf *sort_ctx;

static int cmp_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_name(const void *a, const void *b)
{
	const struct gr_elf *e = sort_ctx;
	return strcmp(e->strs + e->by_addr[*(const uint32_t *)a].name,
		      e->strs + e->by_addr[*(const uint32_t *)b].name);
}

void gr_elf__close(struct gr_elf *e)
{
	if (!e)
		return;
	free(e->by_addr);
	free(e->by_name);
	free(e->strs);
	free(e->segs);
	free(e);
}

/* Appends one symbol table's functions. */
static int add_symtab(struct gr_elf *e, Elf *elf, Elf_Scn *scn,
		      const GElf_Shdr *sh, int *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *strscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *sd = strscn ? elf_getdata(strscn, NULL) : NULL;
	if (!data || !sd || !sh->sh_entsize)
		return 0;
	/* Copy the string table once; symbols point into the copy. */
	size_t base = e->strs_len;
	char *s = realloc(e->strs, base + sd->d_size + 1);
	if (!s)
		return -ENOMEM;
	e->strs = s;
	memcpy(s + base, sd->d_buf, sd->d_size);
	s[base + sd->d_size] = 0;
	e->strs_len += sd->d_size + 1;
	size_t nsyms = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    sym.st_name >= sd->d_size)
			continue;
		if (e->n == *cap) {
			*cap = *cap ? *cap * 2 : 1024;
			struct sym *p = realloc(e->by_addr,
						(size_t)*cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			e->by_addr = p;
		}
		e->by_addr[e->n++] = (struct sym){ sym.st_value, sym.st_size,
						   (uint32_t)(base + sym.st_name) };
	}
	return 0;
}

struct gr_elf *gr_elf__open(const char *path)
{
	struct gr_elf *e = NULL;
	Elf *elf = NULL;
	int fd, err = ENOEXEC, cap = 0;
	size_t nph;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return errno = ENOSYS, NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		goto fail;
	if (!(e = calloc(1, sizeof(*e)))) {
		err = ENOMEM;
		goto fail;
	}
	if (elf_getphdrnum(elf, &nph) == 0 && nph) {
		e->segs = calloc(nph, sizeof(*e->segs));
		if (!e->segs) {
			err = ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				e->segs[e->nsegs++] = (struct seg){
					ph.p_vaddr, ph.p_offset, ph.p_filesz };
		}
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    add_symtab(e, elf, scn, &sh, &cap)) {
			err = ENOMEM;
			goto fail;
		}
	}
	elf_end(elf);
	close(fd);
	if (e->n) {
		qsort(e->by_addr, (size_t)e->n, sizeof(*e->by_addr), cmp_addr);
		e->by_name = malloc((size_t)e->n * sizeof(*e->by_name));
		if (!e->by_name) {
			gr_elf__close(e);
			return errno = ENOMEM, NULL;
		}
		for (int i = 0; i < e->n; i++)
			e->by_name[i] = (uint32_t)i;
		sort_ctx = e;
		qsort(e->by_name, (size_t)e->n, sizeof(*e->by_name), cmp_name);
		sort_ctx = NULL;
	}
	return e;
fail:
	if (elf)
		elf_end(elf);
	close(fd);
	gr_elf__close(e);
	errno = err;
	return NULL;
}

int gr_elf__nfuncs(const struct gr_elf *e)
{
	return e->n;
}

static int vaddr_to_off(const struct gr_elf *e, uint64_t va, uint64_t *off)
{
	for (int i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];
		if (va >= s->vaddr && va < s->vaddr + s->filesz) {
			*off = va - s->vaddr + s->off;
			return 0;
		}
	}
	return -ENOENT;
}

int gr_elf__off_to_vaddr(const struct gr_elf *e, uint64_t off, uint64_t *va)
{
	for (int i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];
		if (off >= s->off && off < s->off + s->filesz) {
			*va = off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int gr_elf__find(const struct gr_elf *e, const char *name, uint64_t *offs,
		 int max)
{
	int lo = 0, hi = e->n, found = 0;
	/* The first index whose name is >= name. */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(e->strs + e->by_addr[e->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t last = UINT64_MAX;
	for (int i = lo; i < e->n; i++) {
		const struct sym *s = &e->by_addr[e->by_name[i]];
		if (strcmp(e->strs + s->name, name) != 0)
			break;
		uint64_t off;
		if (s->addr == last || vaddr_to_off(e, s->addr, &off))
			continue;
		int dup = 0;
		for (int k = 0; k < found && k < max; k++)
			dup |= offs[k] == off;
		if (dup)
			continue;
		if (found < max)
			offs[found] = off;
		found++;
		last = s->addr;
	}
	return found < max ? found : max;
}

const char *gr_elf__symbolize(const struct gr_elf *e, uint64_t va,
			      uint64_t *off_in)
{
	int lo = 0, hi = e->n;
	while (lo < hi) { /* first symbol with addr > va */
		int mid = lo + (hi - lo) / 2;
		if (e->by_addr[mid].addr <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct sym *s = &e->by_addr[lo - 1];
	/* Prefer a sized symbol that covers va among equal addresses. */
	if (s->size && va >= s->addr + s->size)
		return NULL;
	*off_in = va - s->addr;
	return e->strs + s->name;
}

char *gr_demangle(const char *mangled)
{
	int status = 0;
	if (!mangled || strncmp(mangled, "_Z", 2) != 0)
		return NULL;
	char *d = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}
