/* elfsyms.h - function symbols of ELF files: where to attach uprobes, and
 * which function an address is in (kernel names from host stubs).
 *
 * An opened struct gr_elf is a read-only snapshot: nothing here writes to
 * the object after it is opened, so any number of threads may query one
 * at once.  Addresses
 * ("vaddr") are always the ELF's own st_value / p_vaddr space, never a
 * process's; gr_elf__off_to_vaddr converts from what /proc/PID/maps shows.
 */
#ifndef GR_ELFSYMS_H
#define GR_ELFSYMS_H

#include <stdint.h>

/* An opened, indexed ELF: its function symbols (.dynsym and .symtab both)
 * and its PT_LOAD program headers. */
struct gr_elf;

/* Opens and indexes path (a /proc/PID/root/... or /proc/PID/map_files/...
 * path works) for gr_elf__symbolize: every function address, 16 bytes
 * each, without names; the file stays open, and symbolizing reads the
 * one name it returns.  Returns NULL with errno set: ENOEXEC for a file
 * that is not a 64-bit executable or shared object of this machine,
 * EISDIR for a directory, else open(2)'s, EIO or ENOMEM. */
struct gr_elf *gr_elf__open(const char *path);

/* Opens path for gr_elf__find: only the functions called one of the n
 * names (exactly, or as name@VERSION / name@@VERSION), with their names;
 * the file is closed before it returns.  Errors as gr_elf__open. */
struct gr_elf *gr_elf__open_find(const char *path, const char *const *names,
				 int n);

/* The same, calling tick(arg) between its reads (every 4096 symbols or
 * 1 MiB of names): a caller that must keep draining something while a
 * large library is read (gpurecd's ring buffer) drains it there. */
struct gr_elf *gr_elf__open_find_tick(const char *path,
				      const char *const *names, int n,
				      void (*tick)(void *), void *arg);

/* The memory e holds, bytes (its symbols, their names, its headers). */
size_t gr_elf__bytes(const struct gr_elf *e);

/* Frees e (and closes its file); NULL is a no-op. */
void gr_elf__close(struct gr_elf *e);

/* Opened with gr_elf__open: the number of distinct function addresses
 * (STT_FUNC or STT_GNU_IFUNC, defined, st_value != 0), counted once per
 * binding (global, weak, local) at each; with gr_elf__open_find, 0. */
int gr_elf__nfuncs(const struct gr_elf *e);

/* Fills offs with up to max distinct file offsets of the functions called
 * name, one of the names e was opened to find, in ascending order;
 * returns how many it filled (at most max), 0 if none.  A static binary
 * may hold several local functions of one name.  off = st_value - p_vaddr
 * + p_offset of the PT_LOAD segment whose file image holds st_value. */
int gr_elf__find(const struct gr_elf *e, const char *name, uint64_t *offs,
		 int max);

/* Returns 1 if e imports name (an undefined symbol of that name, or
 * name@VERSION), one of the names it was opened to find; else 0. */
int gr_elf__imports(const struct gr_elf *e, const char *name);

/* Returns 1 if any of the n names has a file offset (gr_elf__find would
 * find it), else 0. */
int gr_elf__has_any(const struct gr_elf *e, const char *const *names, int n);

/* Opened with gr_elf__open: returns the name of the function containing
 * vaddr as a malloc'd string (the caller frees it), or NULL; sets *off_in
 * = vaddr - st_value.  "Containing": the innermost symbol whose
 * [st_value, st_value + st_size) holds vaddr; failing that, a size-0
 * symbol that is the nearest one at or below vaddr in the same segment.
 * Among aliases, global beats weak beats local; among equals, .dynsym's
 * name.  The name is read from the file (a pread). */
char *gr_elf__symbolize(const struct gr_elf *e, uint64_t vaddr,
			uint64_t *off_in);

/* Converts a file offset (address - map start + map offset, as in
 * /proc/PID/maps) to a vaddr through the PT_LOAD headers.  Returns 0 on
 * success, -ENOENT if no segment's file image holds off. */
int gr_elf__off_to_vaddr(const struct gr_elf *e, uint64_t off,
			 uint64_t *vaddr);

/* Returns the GNU build id as lowercase hex, or NULL if there is none.
 * The string lives as long as e. */
const char *gr_elf__build_id(const struct gr_elf *e);

/* Demangles an Itanium C++ name ("_Z5saxpyPfPKffi" -> "saxpy(float*, float
 * const*, float, int)"); a @VERSION suffix is kept as is.  Returns a
 * malloc'd string, or NULL if name is not mangled or does not demangle
 * (callers keep the mangled one). */
char *gr_demangle(const char *mangled);

#endif
