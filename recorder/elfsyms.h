/* elfsyms.h - function symbols of ELF files: where to attach uprobes, and
 * which function an address is in (kernel names from host stubs). */
#ifndef GR_ELFSYMS_H
#define GR_ELFSYMS_H

#include <stdint.h>

struct gr_elf;

/* Opens and indexes path.  Returns NULL with errno set (ENOEXEC for a file
 * that is not a 64-bit ELF). */
struct gr_elf *gr_elf__open(const char *path);
void gr_elf__close(struct gr_elf *e);

/* Function symbols defined. */
int gr_elf__nfuncs(const struct gr_elf *e);

/* Fills up to max distinct file offsets of functions named name; returns
 * how many there are (a static binary may hold two local ones). */
int gr_elf__find(const struct gr_elf *e, const char *name, uint64_t *offs,
		 int max);

/* The function containing vaddr (ELF address space), or NULL; *off_in is
 * vaddr's offset into it. */
const char *gr_elf__symbolize(const struct gr_elf *e, uint64_t vaddr,
			      uint64_t *off_in);

/* File offset to ELF address through the PT_LOAD headers: 0 or -ENOENT. */
int gr_elf__off_to_vaddr(const struct gr_elf *e, uint64_t off,
			 uint64_t *vaddr);

/* Demangles an Itanium C++ name; malloc'd, or NULL if it is not one. */
char *gr_demangle(const char *mangled);

#endif
