/* ksyms.h - kernel function names for the addresses in kernel stacks that
 * bpf_get_stack() captures, read from /proc/kallsyms.
 *
 * A loaded struct gr_ksyms is a read-only snapshot: the file is read once
 * and closed before gr_ksyms__load returns, and nothing writes to the
 * object afterwards, so any number of threads may query one at once.
 * Kernel modules and BPF programs that come or go after the load are not
 * seen; load again to refresh.
 */
#ifndef GR_KSYMS_H
#define GR_KSYMS_H

#include <stdint.h>

/* The text symbols of a kallsyms file, sorted by address. */
struct gr_ksyms;

/* Loads a kallsyms-format file ("ADDR TYPE NAME" or "ADDR TYPE NAME\t[MOD]"
 * per line); path NULL reads /proc/kallsyms.  Only text symbols (types t,
 * T, w and W) are kept, and a module symbol keeps its plain name: the
 * "\t[MOD]" suffix is dropped.  Among aliases at one address the first
 * T or t seen wins over any W or w; failing one, the first W or w seen.
 * Returns NULL with errno set: EPERM if every text symbol's address is 0
 * (kptr_restrict hides them from a reader without CAP_SYSLOG), ENODATA if
 * the file holds no text symbol, EINVAL for a line that is not in
 * kallsyms format (or longer than 64 KiB), EFBIG for 4 GiB of names or
 * more, else open(2)'s, read(2)'s or ENOMEM. */
struct gr_ksyms *gr_ksyms__load(const char *path);

/* Returns the name of the function containing addr (the last symbol at or
 * below it), or NULL if addr is below the first symbol or more than 1 MiB
 * above the last.  Sets *off (if off is not NULL) to addr - the symbol's
 * address; leaves it alone when returning NULL.  The string lives as long
 * as k. */
const char *gr_ksyms__find(const struct gr_ksyms *k, uint64_t addr,
			   uint64_t *off);

/* Returns the number of distinct text symbol addresses (aliases count
 * once); 0 for k NULL. */
int gr_ksyms__count(const struct gr_ksyms *k);

/* Frees k; NULL is a no-op. */
void gr_ksyms__free(struct gr_ksyms *k);

#endif
