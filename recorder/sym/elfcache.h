/* elfcache.h - ELF files read once per (device, inode), by a loader
 * thread, for everything that names addresses in processes' mappings
 * (CUDA kernel stubs; user stack frames).
 *
 * Reading a large library's symbols takes a second or more (libtorch_cpu),
 * and the event loop must keep draining the ring buffers meanwhile, or the
 * CUDA family's buffer overflows during a PyTorch start (measured on an
 * H100: 4019 records lost).  So a caller that can wait for a name asks
 * with gr_elfcache__get (never blocks: NULL until the loader is done), and
 * one that cannot do without it asks with gr_elfcache__wait (reads the
 * file at once, on the caller's thread, unless the loader already is).
 *
 * gpurecd makes one cache with one loader thread, before its sandbox
 * (which cuts the loader's capabilities with the main thread's), and
 * hands it to every family that names addresses: the CUDA family's kernel
 * naming (gr_cuda_opts.elfs) and the sched family's off-CPU stacks
 * (gr_host_opts.elfs, stacks.h), which only ever get; it frees the cache
 * after closing them.  A second cache would be a thread more (the
 * sandbox's log line counts them) and a file read twice, memory twice.
 * A cache made without a loader (the CUDA family's own, when it is given
 * none; unit tests) reads every file on the caller's thread, when first
 * asked: get behaves as wait.
 *
 * A file's kernel registrations (stubreg.h: the kernel names nvcc's
 * registration code gives stubs of stripped libraries) are read and held
 * the same way, as a second entry of the file.
 *
 * A file is opened through /proc/PID/map_files of a process that maps it
 * (procmaps.h), so mount namespaces and deleted files do not matter; a
 * request pins the file by descriptor at once (64 files at most at a
 * time), so the loader can still read it after that process has exited.
 * Files that cannot be read are remembered as such (NULL), and not tried
 * again.
 *
 * An ELF holds its functions' addresses, 16 bytes each, and reads a name
 * from the file when asked (elfsyms.h), so that the cache of PyTorch's
 * libraries is tens of MiB, not hundreds.  The cache is bounded:
 * gr_elfcache__trim forgets the least recently used files past a budget
 * of bytes, 512 open files or 4096 files known, and gpurecd trims to 0
 * (sheds it) when it nears its memory limit.  A file forgotten is read
 * again when next asked for.
 *
 * The struct gr_elf objects returned stay valid until the next
 * gr_elfcache__trim or gr_elfcache__free, and are immutable (elfsyms.h):
 * any thread may query them.  The cache itself may be called from any
 * thread; its entries are guarded by one mutex, held only for lookups,
 * never while a file is read.  gpurecd gets, waits and trims on its event
 * loop's thread only, and uses an ELF within the callback that got it.
 */
#ifndef GR_ELFCACHE_H
#define GR_ELFCACHE_H

#include <stdint.h>

#include "recorder/sym/elfsyms.h"
#include "recorder/sym/procmaps.h"

struct gr_elfcache;

/* Makes a cache, and starts its loader thread if loader.  Returns NULL
 * with errno set (ENOMEM, or pthread_create's error). */
struct gr_elfcache *gr_elfcache__new(int loader);

/* Stops the loader (after the file it is reading) and frees every ELF.
 * NULL is a no-op. */
void gr_elfcache__free(struct gr_elfcache *ec);

/* The ELF of mapping m of pid if it has been read; else NULL, and it is
 * queued for the loader if it was not yet (*pending set to 1 while it is
 * queued or being read, 0 once it is known; pending may be NULL).  In a
 * cache without a loader, gr_elfcache__wait. */
struct gr_elf *gr_elfcache__get(struct gr_elfcache *ec, uint32_t pid,
				const struct gr_mapping *m, int *pending);

/* The ELF of mapping m of pid, read now if it has not been: taken off the
 * loader's queue and read on this thread, or waited for if the loader is
 * reading it.  NULL if it cannot be read. */
struct gr_elf *gr_elfcache__wait(struct gr_elfcache *ec, uint32_t pid,
				 const struct gr_mapping *m);

struct gr_stubreg;

/* The kernel registrations read from the code of mapping m's file
 * (stubreg.h), as gr_elfcache__get and gr_elfcache__wait give its ELF:
 * held and trimmed alike, valid as long. */
struct gr_stubreg *gr_elfcache__get_regs(struct gr_elfcache *ec, uint32_t pid,
					 const struct gr_mapping *m,
					 int *pending);
struct gr_stubreg *gr_elfcache__wait_regs(struct gr_elfcache *ec,
					  uint32_t pid,
					  const struct gr_mapping *m);

/* Forgets the least recently asked-for files read (or found unreadable)
 * until those read hold at most budget bytes, at most 512 are open and
 * at most 4096 known; files queued or being read stay.  Returns how many
 * it forgot; *freed (may be NULL) the bytes their ELFs held. */
int gr_elfcache__trim(struct gr_elfcache *ec, uint64_t budget,
		      uint64_t *freed);

struct gr_elfcache_usage {
	int files;		/* known: queued, being read, read or not */
	int read;		/* read into an ELF */
	uint64_t bytes;		/* the memory those hold (gr_elf__bytes) */
	uint64_t evicted;	/* files trimmed since the cache was made */
};
void gr_elfcache__usage(struct gr_elfcache *ec, struct gr_elfcache_usage *u);

#endif
