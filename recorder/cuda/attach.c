/* attach.c - finding the files that hold CUDA entry points, and probing
 * them.
 *
 * Every mapped ELF of every process (and every executable that starts
 * later, reported by the exec tracepoint) is checked once per (device,
 * inode) for the entry points in apis.c: libcudart and libcuda wherever
 * they live (system, venv, conda, a container's root, found through
 * /proc/PID/map_files so that mount namespaces and deleted files do not
 * matter), and executables or libraries with the runtime linked
 * statically (nvcc's default), whose entry points are local symbols.
 * Uprobes attach to the file, so every process that maps it, now or
 * later, is covered.  Which layer's launch entry points are probed, and
 * for which processes: cuda.c, "Which layer records a launch".
 */
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cuda.skel.h"
#include "recorder/cuda/internal.h"
#include "recorder/sym/elfsyms.h"

struct gr_maps *gr_cuda_maps(struct gr_cuda *c, uint32_t pid, int refresh)
{
	struct gr_maps *pm = gr_keymap__get(&c->maps, pid, 0);
	if (pm && !refresh)
		return pm;
	struct gr_maps fresh;
	if (gr_maps__read((int)pid, &fresh))
		return pm; /* gone: keep what we knew */
	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (!pm) {
			gr_maps__free(&fresh);
			return NULL;
		}
		if (gr_keymap__put(&c->maps, pid, 0, pm) == pm) {
			free(pm);
			gr_maps__free(&fresh);
			return NULL;
		}
	}
	gr_maps__free(pm);
	*pm = fresh;
	return pm;
}

static int is_rt_launch(int id)
{
	return gr_apis[id].shape == GR_SH_LAUNCH_RT ||
	       gr_apis[id].shape == GR_SH_LAUNCH_RT_EX;
}

/* Entry points of one file to attach as one set: file offsets and the
 * cookies that name their APIs. */
struct sites {
	uint64_t *offs, *cookies;
	int n, cap;
};

static int sites_add(struct sites *st, uint64_t off, int id)
{
	if (st->n == st->cap) {
		int cap = st->cap ? st->cap * 2 : 64;
		uint64_t *o = realloc(st->offs, (size_t)cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		st->offs = o;
		uint64_t *k = realloc(st->cookies, (size_t)cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		st->cookies = k;
		st->cap = cap;
	}
	st->offs[st->n] = off;
	st->cookies[st->n++] = gr_api__cookie(id);
	return 0;
}

static void sites_free(struct sites *st)
{
	free(st->offs);
	free(st->cookies);
}

/* Attaches entry and return probes at st's sites of path for one process
 * (pid > 0) or all (-1), into v.  Returns the probes attached; counts the
 * sites that failed in *failed and their last error in *err. */
static int attach_sites(struct gr_cuda *c, const char *path,
			const struct sites *st, int pid, struct gr_ulinks *v,
			int *failed, int *err)
{
	int e = 0;
	int n = gr_ulinks__attach(v, &c->progs, path, st->offs, st->cookies,
				  st->n, pid, &e);
	if (n < st->n) {
		*failed += st->n - n;
		*err = e;
	}
	return 2 * n;
}

/* The first driver seen: from now on it records every launch, so the
 * runtime's launch probes (attached while there was none) would only make
 * each runtime launch trap twice.  They go; processes that predate the
 * driver's probes get theirs back per pid (rt_for_pid). */
static void driver_arrived(struct gr_cuda *c, const char *path)
{
	if (c->have_driver)
		return;
	c->have_driver = 1;
	LOG(c, "cuda: driver %s records every launch; runtime launch entry "
	       "points are attached only to processes older than gpurecd",
	    path);
	if (c->rt_links.n) {
		c->st.probes -= (uint64_t)c->rt_links.probes;
		LOG(c, "cuda: detached %d runtime launch probes",
		    c->rt_links.probes);
		gr_ulinks__detach_later(&c->rt_links);
	}
}

/* Drains the ring buffer while a file is read (open_hooked). */
static void drain(void *arg)
{
	struct gr_cuda *c = arg;
	if (c->rb)
		ring_buffer__consume(c->rb);
}

/* The ELF at path, read for the functions gpurecd hooks only: every file a
 * CUDA process maps is read, libtorch's million symbols included, and
 * their names are looked at once, never kept (elfsyms.h). */
static struct gr_elf *open_hooked(struct gr_cuda *c, const char *path)
{
	const char *names[gr_napis + 1];
	names[0] = "cuLaunchKernel";
	for (int id = 0; id < gr_napis; id++)
		names[id + 1] = gr_apis[id].sym;
	return gr_elf__open_find_tick(path, names, gr_napis + 1, drain, c);
}

/* Attaches every hooked symbol the ELF at path defines.  shown is the
 * path to log (path may be a /proc alias). */
static int attach_elf(struct gr_cuda *c, const char *path, const char *shown,
		      uint64_t dev, uint64_t ino)
{
	struct seen *s = gr_keymap__get(&c->seen, dev, ino);
	if (s)
		return 0;
	if (!(s = calloc(1, sizeof(*s))) || !(s->path = strdup(shown)) ||
	    gr_keymap__put(&c->seen, dev, ino, s) == s) {
		if (s)
			free(s->path);
		free(s);
		return -ENOMEM;
	}
	struct gr_elf *e = open_hooked(c, path);
	if (!e)
		return 0; /* not an ELF we can read: nothing to hook */
	uint64_t off;
	if (gr_elf__find(e, "cuLaunchKernel", &off, 1) > 0)
		driver_arrived(c, shown);
	/* It registers kernels with the runtime: its code holds stubs. */
	s->stubs = gr_elf__imports(e, "__cudaRegisterFunction") ||
		   gr_elf__find(e, "__cudaRegisterFunction", &off, 1) > 0;
	int probes = 0, apis = 0, failed = 0, err = 0;
	struct sites all = { 0 }, rt = { 0 };
	for (int id = 0; id < gr_napis && !err; id++) {
		uint64_t offs[4];
		int n = gr_elf__find(e, gr_apis[id].sym, offs, 4);
		int is_rt = is_rt_launch(id);
		for (int k = 0; k < n && !err; k++) {
			if (is_rt && s->nrt < (int)(sizeof(s->rt) / sizeof(s->rt[0])))
				s->rt[s->nrt++] = (struct rt_entry){ id, offs[k] };
			if (is_rt && c->have_driver)
				continue; /* per pid only: rt_for_pid */
			err = sites_add(is_rt ? &rt : &all, offs[k], id);
		}
		apis += n > 0;
	}
	if (err) { /* no memory for the list: attach nothing */
		failed = all.n + rt.n;
	} else {
		probes = attach_sites(c, path, &all, -1, &c->links, &failed,
				      &err);
		probes += attach_sites(c, path, &rt, -1, &c->rt_links,
				       &failed, &err);
	}
	sites_free(&all);
	sites_free(&rt);
	gr_elf__close(e);
	s->probes = probes;
	if (probes || failed || s->nrt) {
		c->st.files_attached += probes > 0;
		c->st.probes += (uint64_t)probes;
		LOG(c, "attached %d probes (%d entry points%s) to %s "
		       "(dev %u:%u inode %" PRIu64 ")", probes, apis,
		    s->nrt && c->have_driver ?
		    "; runtime launches left to the driver" : "",
		    shown, major(dev), minor(dev), ino);
		if (failed)
			LOG(c, "%s: %d entry points could not be attached: %s",
			    shown, failed, strerror(-err));
	}
	return probes;
}

int gr_cuda__attach_path(struct gr_cuda *c, const char *path)
{
	struct stat sb;
	if (stat(path, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	return attach_elf(c, path, path, sb.st_dev, sb.st_ino);
}

/* starttime (field 22 of /proc/PID/stat), in clock ticks after boot, or 0. */
static uint64_t start_ticks(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: fields start after the last
	 * ')'; starttime is the 20th after it. */
	char *p = strrchr(buf, ')');
	for (int f = 0; p && f < 20; f++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	gr_ulinks__detach_later(&p->links);
	free(p);
}

/* pid's struct proc, made (or remade, if the pid was reused) on demand. */
static struct proc *proc_get(struct gr_cuda *c, int pid)
{
	uint64_t st = start_ticks(pid);
	struct proc *p = gr_keymap__get(&c->procs, (uint64_t)pid, 0);
	if (p && (p->start_ticks == st || !st)) /* same, or gone */
		return p;
	struct proc *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->start_ticks = st;
	long hz = sysconf(_SC_CLK_TCK);
	n->old = st && hz > 0 && c->old_before_ns &&
		 st * (1000000000ull / (uint64_t)hz) < c->old_before_ns;
	if (gr_keymap__put(&c->procs, (uint64_t)pid, 0, n) == n) {
		free(n);
		return NULL;
	}
	proc_free(p);
	return n;
}

/* A process that predates gpurecd made its driver handles unseen, so its
 * driver launches cannot be named; its runtime launches can, from their
 * host stubs.  Attach the runtime launch probes for it alone (a uprobe
 * with a pid filter is inserted only into that process).  The same holds
 * for any process whose driver launches come without a name (a handle
 * made by a call gpurecd does not hook). */
/* Whether what naming pid's runtime launches needs is read by the
 * cache's loader: the symbols of each file it has mapped executable (a
 * stub may be in any: libtorch_cuda links the runtime statically, and its
 * stubs are found by symbol), and the registration code of those that
 * import or define __cudaRegisterFunction.  Naming waits for them on the
 * event loop otherwise, and libtorch_cuda's take long enough for the ring
 * buffer to overflow (H100: 58,837 records at a restart with only the
 * latter read first).  Asks for them if not.  Returns how many files are
 * still being read. */
static int stubs_pending(struct gr_cuda *c, int pid, const struct gr_maps *pm)
{
	int n = 0;
	for (int i = 0; i < pm->n; i++) {
		const struct gr_mapping *m = &pm->m[i];
		struct seen *s = gr_keymap__get(&c->seen, m->dev, m->ino);
		int p1 = 0, p2 = 0;
		gr_elfcache__get(c->elfs, (uint32_t)pid, m, &p1);
		if (s && s->stubs)
			gr_elfcache__get_regs(c->elfs, (uint32_t)pid, m, &p2);
		n += p1 || p2;
	}
	return n;
}

/* Remembers pid, whose runtime launch probes wait for stubs_pending. */
static void postpone(struct gr_cuda *c, int pid, int files)
{
	for (int i = 0; i < c->npostponed; i++)
		if (c->postponed[i] == pid)
			return;
	if (c->npostponed == c->postponed_cap) {
		int cap = c->postponed_cap ? 2 * c->postponed_cap : 16;
		int *v = realloc(c->postponed, (size_t)cap * sizeof(*v));
		if (!v)
			return;
		c->postponed = v;
		c->postponed_cap = cap;
	}
	c->postponed[c->npostponed++] = pid;
	LOG(c, "cuda: pid %d: its runtime launch probes wait until the "
	       "symbols of %d of its files are read", pid, files);
}

static int rt_for_pid(struct gr_cuda *c, int pid, const struct gr_maps *pm)
{
	struct proc *p = NULL;
	int total = 0, files;
	char path[128];
	for (int i = 0; i < pm->n; i++) {
		const struct gr_mapping *m = &pm->m[i];
		struct seen *s = gr_keymap__get(&c->seen, m->dev, m->ino);
		if (!s || !s->nrt)
			continue;
		if (!p && (!(p = proc_get(c, pid)) || (!p->old && !p->unnamed)))
			return 0;
		if (!p->stubs_read && (files = stubs_pending(c, pid, pm))) {
			postpone(c, pid, files);
			return 0;
		}
		p->stubs_read = 1;
		int k, full = p->nfiles == (int)(sizeof(p->files) /
						 sizeof(p->files[0]));
		for (k = 0; k < p->nfiles; k++)
			if (p->files[k][0] == m->dev && p->files[k][1] == m->ino)
				break;
		if (k < p->nfiles || full)
			continue;
		p->files[p->nfiles][0] = m->dev;
		p->files[p->nfiles++][1] = m->ino;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, pid, m->start, m->end);
		struct sites st = { 0 };
		int n = 0, err = 0, failed = 0;
		for (int j = 0; j < s->nrt && !err; j++)
			err = sites_add(&st, s->rt[j].off, s->rt[j].api);
		if (!err)
			n = attach_sites(c, path, &st, pid, &p->links, &failed,
					 &err);
		sites_free(&st);
		if (err)
			LOG(c, "cuda: pid %d: runtime launch probes on %s: %s",
			    pid, s->path, strerror(-err));
		if (n)
			LOG(c, "cuda: pid %d %s: %d runtime launch probes on %s "
			       "for it alone", pid, p->old ? "predates gpurecd" :
			    "made a driver launch without a name", n, s->path);
		c->st.probes += (uint64_t)n;
		total += n;
	}
	return total;
}

/* Decoding found a driver launch it cannot name: from now on, name this
 * process's runtime launches from their stubs (once per process). */
void gr_cuda_unnamed_launch(struct gr_cuda *c, uint32_t pid)
{
	struct proc *p = gr_keymap__get(&c->procs, pid, 0);
	if (p && (p->old || p->unnamed))
		return; /* the common case: no /proc read */
	if (!(p = proc_get(c, (int)pid)) || p->old || p->unnamed)
		return;
	p->unnamed = 1;
	struct gr_maps *pm = gr_cuda_maps(c, pid, 1);
	if (pm)
		rt_for_pid(c, (int)pid, pm);
}

int gr_cuda__retry(struct gr_cuda *c)
{
	int total = 0;
	for (int i = 0; i < c->npostponed;) {
		int pid = c->postponed[i];
		struct gr_maps *pm = gr_cuda_maps(c, (uint32_t)pid, 0);
		struct proc *p = gr_keymap__get(&c->procs, (uint64_t)pid, 0);
		/* The same process (not gone, its pid not reused): its start
		 * time, as proc_get tells; kill(pid, 0) would answer EPERM
		 * to the service's user for other users' processes. */
		int same = p && pm && pm->m &&
			   start_ticks(pid) == p->start_ticks;
		if (same && stubs_pending(c, pid, pm)) {
			i++;
			continue;	/* still being read */
		}
		c->postponed[i] = c->postponed[--c->npostponed];
		if (same)	/* sets stubs_read; may remake p */
			total += rt_for_pid(c, pid, pm);
	}
	return total;
}

int gr_cuda__scan_pid(struct gr_cuda *c, int pid)
{
	char path[128], link[4096];
	int total = 0, uses_cuda = 0;

	if ((uint32_t)pid == (uint32_t)getpid())
		return 0;
	struct gr_maps *pm = gr_cuda_maps(c, (uint32_t)pid, 1);
	if (!pm)
		return -ESRCH;
	for (int i = 0; i < pm->n; i++) {
		const struct gr_mapping *m = &pm->m[i];
		if (gr_keymap__get(&c->seen, m->dev, m->ino))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, pid, m->start, m->end);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = 0;
		int r = attach_elf(c, path, n > 0 ? link : path, m->dev, m->ino);
		if (r > 0)
			total += r;
		/* Reading a large library's symbols takes a while: drain
		 * what the probes already attached recorded meanwhile. */
		ring_buffer__consume(c->rb);
	}
	for (int i = 0; i < pm->n && !uses_cuda; i++) {
		struct seen *s = gr_keymap__get(&c->seen, pm->m[i].dev, pm->m[i].ino);
		uses_cuda = s && (s->probes > 0 || s->nrt > 0);
	}
	/* A GPU process from the moment it maps CUDA, whether or not it
	 * ever makes a recorded call (one hung in an unhooked call, or in
	 * cuInit before the probes were there): the host families trace it
	 * from now on.  Once per process (a reused pid is a new one). */
	struct proc *pr;
	if (uses_cuda && c->o.on_pid && (pr = proc_get(c, pid)) &&
	    !pr->announced) {
		pr->announced = 1;
		c->o.on_pid(c->o.on_pid_ctx, (uint32_t)pid);
	}
	if (uses_cuda && c->have_driver)
		total += rt_for_pid(c, pid, pm);
	/* A CUDA process's executable holds the host stubs its launches
	 * name: pin the file now, while it runs, and read its symbols in
	 * the background, so launches of a process that exits at once are
	 * still named. */
	struct stat sb;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (uses_cuda && stat(path, &sb) == 0)
		for (int i = 0; i < pm->n; i++)
			if (pm->m[i].dev == sb.st_dev &&
			    pm->m[i].ino == sb.st_ino) {
				gr_cuda_name_prefetch(c, (uint32_t)pid, &pm->m[i]);
				break;
			}
	return total;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Forgets what gpurecd kept of processes that are gone. */
static void forget_gone(struct gr_cuda *c)
{
	uint32_t *gone = NULL;
	int ngone = 0, cap = 0;
	for (size_t i = 0; i < c->maps.cap; i++) {
		struct gr_kment *h = &c->maps.e[i];
		char p[32];
		if (!h->v)
			continue;
		snprintf(p, sizeof(p), "/proc/%" PRIu64, h->k1);
		if (access(p, F_OK) == 0)
			continue;
		/* Keep the entry (events may still be queued) but drop its
		 * mappings; it is reused if the pid comes back. */
		if (ngone == cap) {
			int ncap = cap ? 2 * cap : 64;
			uint32_t *v = realloc(gone, (size_t)ncap * sizeof(*v));
			if (v)
				gone = v, cap = ncap;
		}
		if (ngone < cap)
			gone[ngone++] = (uint32_t)h->k1;
		gr_maps__free(h->v);
		gr_nccl__forget_pid(&c->nccl, (uint32_t)h->k1);
		struct proc *pr = gr_keymap__get(&c->procs, h->k1, 0);
		if (pr && pr->links.n) {
			/* Its probes can fire no more: give them back,
			 * without holding up the loop. */
			c->st.probes -= (uint64_t)pr->links.probes;
			gr_ulinks__detach_later(&pr->links);
			pr->nfiles = 0;
		}
	}
	/* Its kernels' names too: every full scan (30 s) sweeps the names
	 * once for all the pids gone, whether or not their maps were read
	 * (a zombie's read empty). */
	if (ngone) {
		qsort(gone, (size_t)ngone, sizeof(*gone), cmp_u32);
		gr_cuda_names_forget(c, gone, ngone);
	}
	free(gone);
}

int gr_cuda__scan_all(struct gr_cuda *c)
{
	/* The first full scan follows the driver's attachment (the daemon
	 * attaches known library paths first): whatever started before it
	 * made driver handles gpurecd never saw. */
	if (!c->old_before_ns) {
		struct timespec ts;
		clock_gettime(CLOCK_BOOTTIME, &ts);
		c->old_before_ns = (uint64_t)ts.tv_sec * 1000000000ull +
				   (uint64_t)ts.tv_nsec;
	}
	DIR *d = opendir("/proc");
	struct dirent *de;
	int total = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		int r = gr_cuda__scan_pid(c, atoi(de->d_name));
		if (r > 0)
			total += r;
	}
	closedir(d);
	/* Rows still queued for processes about to be forgotten name their
	 * kernels and communicators: decode them first. */
	ring_buffer__consume(c->rb);
	forget_gone(c);
	return total;
}

int gr_cuda__take_execs(struct gr_cuda *c, int *pids, int max)
{
	int n = c->nexecs < max ? c->nexecs : max;
	if (n <= 0)
		return 0; /* execs may still be NULL */
	memcpy(pids, c->execs, (size_t)n * sizeof(int));
	memmove(c->execs, c->execs + n, (size_t)(c->nexecs - n) * sizeof(int));
	c->nexecs -= n;
	return n;
}


void gr_cuda_procs_free(struct gr_cuda *c)
{
	for (size_t i = 0; i < c->procs.cap; i++)
		proc_free(c->procs.e[i].v);
	gr_keymap__free(&c->procs);
}

void gr_cuda_seen_free(struct gr_cuda *c)
{
	for (size_t i = 0; i < c->seen.cap; i++) {
		struct seen *s = c->seen.e[i].v;
		if (s) {
			free(s->path);
			free(s);
		}
	}
	gr_keymap__free(&c->seen);
}

void gr_cuda_maps_free(struct gr_cuda *c)
{
	for (size_t i = 0; i < c->maps.cap; i++) {
		struct gr_maps *pm = c->maps.e[i].v;
		if (pm) {
			gr_maps__free(pm);
			free(pm);
		}
	}
	gr_keymap__free(&c->maps);
}
