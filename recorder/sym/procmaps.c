/* procmaps.c - a process's executable file mappings; see procmaps.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "recorder/sym/procmaps.h"

void gr_maps__free(struct gr_maps *pm)
{
	for (int i = 0; i < pm->n; i++)
		free(pm->m[i].path);
	free(pm->m);
	pm->m = NULL;
	pm->n = 0;
}

int gr_maps__read(int pid, struct gr_maps *pm)
{
	char path[64], line[4352];
	pm->m = NULL;
	pm->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int cap = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, mnr;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e,
			   perms, &off, &maj, &mnr, &ino, &pos) != 7 || !ino ||
		    perms[2] != 'x')
			continue;
		if (pm->n == cap) {
			cap = cap ? cap * 2 : 64;
			void *p = realloc(pm->m, (size_t)cap * sizeof(*pm->m));
			if (!p) {
				fclose(f);
				gr_maps__free(pm);
				return -ENOMEM;
			}
			pm->m = p;
		}
		line[strcspn(line, "\n")] = 0;
		pm->m[pm->n++] = (struct gr_mapping){
			s, e, off, makedev(maj, mnr), ino, strdup(line + pos) };
	}
	fclose(f);
	return 0;
}

const struct gr_mapping *gr_maps__find(const struct gr_maps *pm,
				       uint64_t addr)
{
	for (int i = 0; i < pm->n; i++)
		if (addr >= pm->m[i].start && addr < pm->m[i].end)
			return &pm->m[i];
	return NULL;
}

void *gr_maps__open(uint32_t pid, const struct gr_mapping *m,
		    void *(*open_fn)(const char *))
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 pid, m->start, m->end);
	struct stat sb;
	void *o = open_fn(path);
	if (!o && m->path && m->path[0] == '/' && stat(m->path, &sb) == 0 &&
	    sb.st_dev == m->dev && sb.st_ino == m->ino)
		o = open_fn(m->path);
	return o;
}
