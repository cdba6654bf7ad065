/* procmaps.h - a process's executable file mappings (/proc/PID/maps), and
 * opening the file behind one the way that works across mount namespaces
 * and for deleted files.  Shared by the CUDA family (attaching, naming
 * stubs) and the host families (naming user stack frames). */
#ifndef GR_RECORDER_PROCMAPS_H
#define GR_RECORDER_PROCMAPS_H

#include <stdint.h>

struct gr_mapping {
	uint64_t start, end, off, dev, ino;
	char *path;	/* as /proc/PID/maps shows it: for after exit */
};

struct gr_maps {
	struct gr_mapping *m;
	int n;
};

/* Reads pid's executable file-backed mappings into pm (which need not be
 * initialized).  Returns 0, or -errno with pm empty. */
int gr_maps__read(int pid, struct gr_maps *pm);

/* Frees what gr_maps__read() filled and empties pm; safe to repeat. */
void gr_maps__free(struct gr_maps *pm);

/* The mapping holding addr, or NULL. */
const struct gr_mapping *gr_maps__find(const struct gr_maps *pm,
				       uint64_t addr);

/* Opens the file of a mapping of pid with open_fn, through
 * /proc/PID/map_files; if the process has exited, the path it mapped, if
 * that is still the same file (device and inode).  Returns what open_fn
 * returned, or NULL. */
void *gr_maps__open(uint32_t pid, const struct gr_mapping *m,
		    void *(*open_fn)(const char *));

#endif
