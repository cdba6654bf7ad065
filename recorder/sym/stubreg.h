/* stubreg.h - kernel names of host stubs, read from a CUDA binary's own
 * registration code, for binaries whose symbol tables do not name them.
 *
 * Every TU nvcc compiles registers each kernel at load time with
 *
 *	__cudaRegisterFunction(handle, (const char *)stub, "name", "name",
 *			       -1, 0, 0, 0, 0, 0);
 *
 * so the binary's code pairs each host stub's address with the kernel's
 * mangled name.  gpurecd learns that pair by hooking the call, but a
 * process started before gpurecd made it unseen, and a stripped library
 * (PyTorch's libtorch_cuda.so) has no symbol at the stub either.  This
 * reads the pairs back out of the machine code (x86-64): see stubreg.c.
 *
 * A struct gr_stubreg is immutable once built; lookups need no locks.
 * Addresses are the ELF's own vaddrs, as with elfsyms.h.
 */
#ifndef GR_STUBREG_H
#define GR_STUBREG_H

#include <stddef.h>
#include <stdint.h>

struct gr_stubreg;

/* Reads path (an x86-64 ELF) and collects its registrations.  Returns an
 * index (possibly empty), or NULL with errno set: ENOEXEC for a file that
 * is not a 64-bit x86-64 ELF, else open(2)'s, mmap(2)'s or ENOMEM. */
struct gr_stubreg *gr_stubreg__scan(const char *path);

/* The memory r holds, bytes. */
size_t gr_stubreg__bytes(const struct gr_stubreg *r);

/* Frees r; NULL is a no-op. */
void gr_stubreg__free(struct gr_stubreg *r);

/* Returns the number of distinct stubs found. */
int gr_stubreg__count(const struct gr_stubreg *r);

/* Returns the kernel name registered for the stub at vaddr exactly, or
 * NULL.  The string lives as long as r. */
const char *gr_stubreg__name(const struct gr_stubreg *r, uint64_t vaddr);

/* Sets how much of a file's code the scan reads before giving its pages
 * back (8 MiB); tests make it a page, so that chunk edges are crossed. */
void gr_stubreg__set_chunk(size_t bytes);

#endif
