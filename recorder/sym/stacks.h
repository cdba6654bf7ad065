/* stacks.h - off-CPU stacks folded and named: kernel frames from
 * /proc/kallsyms (ksyms.c), user frames from the ELF symbols of the file
 * mapped at each address (elfsyms.c), read by the loader thread of the
 * ELF cache the CUDA family's kernel naming shares (elfcache.h).  Folded
 * root first: user frames, then kernel frames, ';'-joined, the form flame
 * graph tools read.
 */
#ifndef GR_RECORDER_SYM_STACKS_H
#define GR_RECORDER_SYM_STACKS_H

#include <stdint.h>

#include "recorder/sym/procmaps.h"

struct gr_stacks;
struct gr_elfcache;

/* A process's executable file mappings, as last read. */
struct gr_pmaps {
	struct gr_maps maps;
	int64_t read_ns;	/* CLOCK_BOOTTIME */
};

/* Reads /proc/kallsyms.  User frames are named from @elfs, used and not
 * freed (it must outlive the stacks), asked without waiting: give it a
 * loader thread (gr_elfcache__new(1)), or files are read on the caller's
 * thread; NULL leaves user frames unnamed ("[file+0xoffset]").  NULL only
 * without memory.  A kallsyms that cannot be read leaves kernel frames
 * unnamed: gr_stacks__ksyms_error() tells why. */
struct gr_stacks *gr_stacks__new(struct gr_elfcache *elfs);
void gr_stacks__free(struct gr_stacks *s);
int gr_stacks__ksyms_error(const struct gr_stacks *s); /* errno, or 0 */

/* Reads a newly traced process's maps and queues its smaller ELF files
 * for the cache's loader, so that its first off-CPU stacks are named too. */
void gr_stacks__prefetch(struct gr_stacks *s, uint32_t pid,
			 struct gr_pmaps *pm);

/* The folded stack (malloc'd), or NULL: user frames (leaf first in
 * @ustack, named from @pm, NULL for none) then kernel frames (leaf first
 * in @kstack, the tracing frames at the leaf skipped). */
char *gr_stacks__fold(struct gr_stacks *s, uint32_t pid, struct gr_pmaps *pm,
		      const uint64_t *ustack, int nu, const uint64_t *kstack,
		      int nk);

/* Whether a wakeup's kernel stack (@n frames, 0-terminated) ran in an
 * interrupt or softirq (a timer expiring, an I/O completing). */
int gr_stacks__irq_wake(const struct gr_stacks *s, const uint64_t *wstack,
			int n);

void gr_pmaps__free(struct gr_pmaps *pm);

#endif
