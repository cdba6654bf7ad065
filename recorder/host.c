/* host.c - the host-context families' user side: loading sched, io and
 * proc (one BPF object each, sharing the `tracked` map), decoding their
 * records into offcpu, runq, block_io, file_io and process rows, folding
 * off-CPU stacks, and keeping the process table.
 *
 * Processes.  The `process` table names the processes that use CUDA and
 * their ancestors.  Whether a process uses CUDA is known only once the
 * CUDA family decodes one of its calls, and by then a short-lived process
 * may have exited and /proc forgotten it; so every exec and exit on the
 * host is kept here (struct pinfo) until the process exits, and an exited
 * one a few seconds more, in case its CUDA calls are decoded late.  The
 * store's rows never change once written, so a process's row is a
 * snapshot: one when it is first traced (exit NULL), one when it exits,
 * and one in each new segment while it lives, so that every segment names
 * the processes whose events it holds (retention deletes old segments).
 *
 * Stacks.  Kernel frames are named from /proc/kallsyms (ksyms.c), user
 * frames from the ELF symbols of the file mapped at each address
 * (elfsyms.c), opened as the CUDA family opens them (procmaps.c).  Folded
 * root first: user frames, then kernel frames, ';'-joined, the form
 * flame graph tools read.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/io.h"
#include "bpf/proc.h"
#include "bpf/sched.h"
#include "io.skel.h"
#include "proc.skel.h"
#include "sched.skel.h"
#include "recorder/cgroup.h"
#include "recorder/sym/elfsyms.h"
#include "recorder/host.h"
#include "recorder/sym/ksyms.h"
#include "recorder/sym/procmaps.h"
#include "schema/schema.h"
#include "store/store.h"

#define LOG(h, ...) (h)->o.log(__VA_ARGS__)
#define EXITED_KEEP_NS (10ll * 1000000000)	/* after an exit */
#define PREFETCH_MAX (64ll << 20)	/* ELF files read when traced */
#define MAX_ANCESTORS 32
#define MAPS_REREAD_NS 1000000000ll		/* at most once a second */

/* ---- a pid-keyed table ----------------------------------------------------- */

struct pinfo;

struct ptab {
	struct pinfo **b;	/* buckets, chained through pinfo.next */
	size_t nb, n;
};

struct pinfo {
	struct pinfo *next;
	uint32_t pid, ppid;
	int have_id;		/* identity known (exec record or /proc) */
	int traced;		/* uses CUDA (or trace_all) */
	int named;		/* rows written (traced, or an ancestor) */
	int exited;
	int32_t code;
	int64_t first_ts, start_ts, exit_ts; /* UTC ns; start 0 if unknown */
	uint64_t cgroup_id;
	char comm[16];
	char *exe, *cmdline, *cgroup;
	char cid[65], pod[37];
	struct gr_maps maps;	/* executable file mappings, for stacks */
	int64_t maps_read_ns;
};

static struct pinfo *ptab_get(const struct ptab *t, uint32_t pid)
{
	if (!t->nb)
		return NULL;
	for (struct pinfo *p = t->b[pid % t->nb]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

/* Inserts p (its pid not present).  Returns 0 or -ENOMEM. */
static int ptab_add(struct ptab *t, struct pinfo *p)
{
	if ((t->n + 1) > t->nb) {
		size_t nb = t->nb ? t->nb * 2 : 1024;
		struct pinfo **b = calloc(nb, sizeof(*b));
		if (!b)
			return -ENOMEM;
		for (size_t i = 0; i < t->nb; i++)
			for (struct pinfo *q = t->b[i], *nx; q; q = nx) {
				nx = q->next;
				q->next = b[q->pid % nb];
				b[q->pid % nb] = q;
			}
		free(t->b);
		t->b = b;
		t->nb = nb;
	}
	p->next = t->b[p->pid % t->nb];
	t->b[p->pid % t->nb] = p;
	t->n++;
	return 0;
}

static void ptab_del(struct ptab *t, struct pinfo *p)
{
	for (struct pinfo **pp = &t->b[p->pid % t->nb]; *pp;
	     pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			t->n--;
			return;
		}
}

static void pinfo_free(struct pinfo *p)
{
	if (!p)
		return;
	free(p->exe);
	free(p->cmdline);
	free(p->cgroup);
	gr_maps__free(&p->maps);
	free(p);
}

/* ---- ELF files for user frames, by (dev, ino) ---------------------------- */

/* Reading a large library's symbols takes a second or more (libtorch_cpu),
 * and the loop must keep draining the ring buffers meanwhile, or the CUDA
 * family's buffer overflows during a PyTorch start (measured on an H100:
 * 4019 records lost).  So files are read by a loader thread; until one is
 * ready, its frames read "[file+0xoffset]", which can be symbolized
 * offline. */
struct elfent {
	struct elfent *next;	/* in its bucket */
	struct elfent *qnext;	/* in the loader's queue */
	uint64_t dev, ino;
	uint32_t pid;		/* a process that mapped it */
	struct gr_mapping m;	/* there (m.path owned) */
	int ready;		/* under loader.mu */
	struct gr_elf *e;	/* once ready: NULL if it could not be read */
};

#define NELFB 256

struct loader {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct elfent *head, *tail;
	int stop, started;
};

struct gr_host {
	struct gr_host_opts o;
	struct sched_bpf *sched;
	struct io_bpf *io;
	struct proc_bpf *proc;
	int tracked_fd;		/* the shared map, owned by a skeleton */
	uint64_t *tracked_bits;	/* it, mapped (GR_TRACKED_WORDS words) */
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nlinks, links_cap;
	struct ptab procs;
	struct gr_ksyms *ksyms;
	struct gr_cgroups *cgroups;
	struct elfent *elfs[NELFB];
	struct loader ld;
	char *segment;		/* segment the process rows were last put in */
	uint64_t drops_seen[3][GR_SCHED_NDROPS];
	uint64_t user_drops, user_drops_seen;
	uint64_t flushes;
};

static int64_t now_boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t utc(const struct gr_host *h, uint64_t boot_ns)
{
	return (int64_t)boot_ns + h->o.clock_offset_ns;
}

static int64_t intern(struct gr_host *h, const char *s)
{
	return gr_writer__intern(h->o.w, s, strlen(s));
}

static void append(struct gr_host *h, int t, int64_t *v, uint64_t nm)
{
	if (gr_writer__append(h->o.w, t, v, nm))
		h->user_drops++;
}

/* ---- process identity ------------------------------------------------------ */

/* Reads a whole small /proc file into buf (NUL-terminated).  Returns bytes
 * read or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return (ssize_t)n;
}

/* Turns NUL-separated arguments into one space-joined string. */
static char *join_args(const char *a, size_t n)
{
	while (n && a[n - 1] == 0)
		n--;
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = a[i] ? a[i] : ' ';
	s[n] = 0;
	return s;
}

static void set_cgroup(struct gr_host *h, struct pinfo *p, const char *path)
{
	free(p->cgroup);
	p->cgroup = strdup(path);
	gr_cgroup__parse(path, p->cid, p->pod);
	(void)h;
}

/* A live process's cgroup from /proc/PID/cgroup: the v2 path (what the
 * exec record's cgroup id names too, so a process read either way gets the
 * same), and the container and pod ids from it or, on a hybrid host where
 * it is "/", from the v1 path that places the process. */
static int cgroup_of(struct gr_host *h, struct pinfo *p)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int found = 0;
	snprintf(path, sizeof(path), "/proc/%u/cgroup", p->pid);
	p->cid[0] = p->pod[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		if (!strncmp(line, "0::", 3)) {
			char cid[65], pod[37];
			/* keep ids a v1 line found if this one has none */
			memcpy(cid, p->cid, sizeof(cid));
			memcpy(pod, p->pod, sizeof(pod));
			set_cgroup(h, p, c2 + 1);
			if (!p->cid[0])
				memcpy(p->cid, cid, sizeof(cid));
			if (!p->pod[0])
				memcpy(p->pod, pod, sizeof(pod));
			found = 1;
		} else if (!p->cid[0] && !p->pod[0]) {
			gr_cgroup__parse(c2 + 1, p->cid, p->pod);
		}
	}
	free(line);
	fclose(f);
	return found ? 0 : -ENOENT;
}

/* p's executable from /proc/PID/exe (absolute, whatever namespace).
 * Returns 0, or -errno if the process is gone. */
static int read_exe(struct pinfo *p)
{
	char path[64], buf[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%u/exe", p->pid);
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -errno;
	buf[n] = 0;
	free(p->exe);
	p->exe = strdup(buf);
	return 0;
}

/* Fills what /proc still says of a live process.  Returns 0 or -errno. */
static int read_proc(struct gr_host *h, struct pinfo *p)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%u/stat", p->pid);
	ssize_t n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* pid (comm) state ppid ... field 22 starttime, in clock ticks */
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r)
		return -EINVAL;
	size_t cl = (size_t)(r - l - 1);
	if (cl > 15)
		cl = 15;
	memcpy(p->comm, l + 1, cl);
	p->comm[cl] = 0;
	unsigned long long start = 0;
	int ppid = 0;
	if (sscanf(r + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
			  "%*d %*d %*d %*d %*d %*d %llu", &ppid, &start) == 2) {
		p->ppid = (uint32_t)ppid;
		long hz = sysconf(_SC_CLK_TCK);
		if (hz > 0)
			p->start_ts = utc(h, start * (1000000000ull / (uint64_t)hz));
	}
	read_exe(p);
	snprintf(path, sizeof(path), "/proc/%u/cmdline", p->pid);
	if ((n = read_small(path, buf, sizeof(buf))) > 0) {
		free(p->cmdline);
		p->cmdline = join_args(buf, (size_t)n);
	}
	cgroup_of(h, p);
	p->have_id = 1;
	return 0;
}

static struct pinfo *pinfo_get(struct gr_host *h, uint32_t pid)
{
	struct pinfo *p = ptab_get(&h->procs, pid);
	if (p)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	if (ptab_add(&h->procs, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static void forget(struct gr_host *h, struct pinfo *p)
{
	ptab_del(&h->procs, p);
	pinfo_free(p);
}

/* One `process` row: a snapshot of what is known now. */
static void process_row(struct gr_host *h, struct pinfo *p)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 0;
	if (!p->cgroup && p->cgroup_id && h->cgroups) {
		char buf[4096];
		if (gr_cgroups__path(h->cgroups, p->cgroup_id, buf,
				     sizeof(buf)) == 0)
			set_cgroup(h, p, buf);
	}
	v[GR_process_ts] = p->first_ts;
	v[GR_process_pid] = p->pid;
	v[GR_process_tid] = p->pid;
	v[GR_process_comm] = intern(h, p->comm);
	v[GR_process_ppid] = p->ppid;
	if (!p->have_id)
		nm |= 1ull << GR_process_ppid;
#define STRCOL(col, s)                                                        \
	do {                                                                  \
		if ((s) && *(s))                                              \
			v[GR_process_##col] = intern(h, (s));                 \
		else                                                          \
			nm |= 1ull << GR_process_##col;                       \
	} while (0)
	STRCOL(exe, p->exe);
	STRCOL(cmdline, p->cmdline);
	STRCOL(cgroup, p->cgroup);
	STRCOL(container_id, p->cid);
	STRCOL(pod_uid, p->pod);
#undef STRCOL
	if (p->start_ts)
		v[GR_process_start_ts] = p->start_ts;
	else
		nm |= 1ull << GR_process_start_ts;
	if (p->exited) {
		v[GR_process_exit_ts] = p->exit_ts;
		v[GR_process_exit_code] = p->code;
	} else {
		nm |= 1ull << GR_process_exit_ts | 1ull << GR_process_exit_code;
	}
	append(h, GR_T_process, v, nm);
}

/* Makes p named (rows from now on), with its ancestors. */
static int read_maps(struct pinfo *p);
static struct gr_elf *elf_of(struct gr_host *h, uint32_t pid,
			     const struct gr_mapping *m);

/* Reads a newly traced process's maps and has the loader read its smaller
 * ELF files, so that its first off-CPU stacks are named too; the largest
 * (libtorch's, hundreds of MiB) wait until a frame lands in them. */
static void prefetch(struct gr_host *h, struct pinfo *p)
{
	if (p->exited || !h->sched || read_maps(p))
		return;
	p->maps_read_ns = now_boot_ns();
	for (int i = 0; i < p->maps.n; i++) {
		const struct gr_mapping *m = &p->maps.m[i];
		char path[128];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64
			 "-%" PRIx64, p->pid, m->start, m->end);
		if (stat(path, &st) == 0 && st.st_size <= PREFETCH_MAX)
			elf_of(h, p->pid, m);
	}
}

static void name_process(struct gr_host *h, struct pinfo *p, int64_t now)
{
	for (int depth = 0; p && !p->named && depth < MAX_ANCESTORS; depth++) {
		if (!p->have_id && !p->exited)
			read_proc(h, p);
		p->named = 1;
		p->first_ts = now;
		process_row(h, p);
		uint32_t ppid = p->ppid;
		if (!ppid)
			break;
		p = pinfo_get(h, ppid);
	}
}

/* Sets or clears pid's bit in the shared bitmap (bpf/tracked.h), mapped
 * into gpurecd: atomically, as proc.bpf.c clears the bits of exiting
 * processes meanwhile.  The exit record clears this one again (on_exit_),
 * whichever ring buffer is drained first. */
static void set_tracked(struct gr_host *h, uint32_t pid, int on)
{
	if (!h->tracked_bits || (pid >> 6) >= GR_TRACKED_WORDS)
		return;
	uint64_t bit = 1ull << (pid & 63);
	if (on)
		__atomic_fetch_or(&h->tracked_bits[pid >> 6], bit,
				  __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(&h->tracked_bits[pid >> 6], ~bit,
				   __ATOMIC_SEQ_CST);
}

void gr_host__track(struct gr_host *h, uint32_t pid)
{
	if (!h || !pid)
		return;
	struct pinfo *p = ptab_get(&h->procs, pid);
	if (p && p->traced)
		return;
	if (!p && !(p = pinfo_get(h, pid)))
		return;
	p->traced = 1;
	if (!p->exited)
		set_tracked(h, pid, 1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	name_process(h, p, ts.tv_sec * 1000000000ll + ts.tv_nsec);
	prefetch(h, p);
}

/* A process gone before /proc/PID/exe was read, exec'd by a relative
 * path: the path against its parent's working directory (where the shell
 * that ran it stands), if that names the very file it exec'd. */
static void resolve_exe(struct pinfo *p, const struct gr_pexec *e)
{
	char link[64], cwd[PATH_MAX], full[PATH_MAX + GR_EXE_BYTES];
	struct stat st;
	snprintf(link, sizeof(link), "/proc/%u/cwd", e->ppid);
	ssize_t n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return;
	cwd[n] = 0;
	snprintf(full, sizeof(full), "%s/%s", strcmp(cwd, "/") ? cwd : "",
		 p->exe);
	char *real = realpath(full, NULL);
	if (real && stat(real, &st) == 0 && st.st_ino == e->exe_ino &&
	    (uint32_t)((major(st.st_dev) << 20) | minor(st.st_dev)) ==
	    e->exe_dev) {
		free(p->exe);
		p->exe = real;
		return;
	}
	free(real);
}

static void on_exec(struct gr_host *h, const struct gr_pexec *e)
{
	struct pinfo *p = ptab_get(&h->procs, e->pid);
	if (p && p->exited) { /* the pid came back: a new process */
		forget(h, p);
		p = NULL;
	}
	if (!p && !(p = pinfo_get(h, e->pid)))
		return;
	p->ppid = e->ppid;
	memcpy(p->comm, e->comm, sizeof(p->comm));
	p->comm[15] = 0;
	p->start_ts = utc(h, e->start);
	p->cgroup_id = e->cgroup;
	free(p->exe);
	char exe[GR_EXE_BYTES];
	memcpy(exe, e->exe, sizeof(exe));
	exe[sizeof(exe) - 1] = 0;
	p->exe = strdup(exe);
	free(p->cmdline);
	p->cmdline = e->args_len ? join_args(e->args, e->args_len) : NULL;
	free(p->cgroup);
	p->cgroup = NULL;
	gr_maps__free(&p->maps); /* a new image */
	p->have_id = 1;
	/* Still alive (the usual case): /proc has the absolute executable
	 * and the cgroup path without a walk. */
	if (read_exe(p) && p->exe && p->exe[0] != '/')
		resolve_exe(p, e);
	cgroup_of(h, p);
	if (p->named) /* a traced process exec'd: a row for its new image */
		process_row(h, p);
}

static void on_exit_(struct gr_host *h, const struct gr_pexit *e)
{
	struct pinfo *p = ptab_get(&h->procs, e->pid);
	if (!p)
		return; /* never exec'd while we ran, never traced */
	p->exited = 1;
	p->code = e->code;
	p->exit_ts = utc(h, e->ts);
	if (!p->start_ts)
		p->start_ts = utc(h, e->start);
	if (!p->comm[0])
		memcpy(p->comm, e->comm, sizeof(p->comm)), p->comm[15] = 0;
	if (p->traced)
		set_tracked(h, p->pid, 0);
	if (p->named)
		process_row(h, p);
	/* Kept a while (gr_host__flush forgets it): records of its last
	 * moments, or its first CUDA calls, may still be on their way
	 * through the other ring buffers, and its stacks need its maps. */
}

/* ---- stacks ----------------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t n, cap;
	int frames;
};

static void sb_frame(struct sbuf *b, const char *name, size_t len)
{
	if (b->n + len + 2 > b->cap) {
		size_t cap = (b->n + len + 2) * 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return;
		b->s = s;
		b->cap = cap;
	}
	if (b->frames++)
		b->s[b->n++] = ';';
	for (size_t i = 0; i < len; i++) /* ';' separates frames */
		b->s[b->n++] = name[i] == ';' ? ':' : name[i];
	b->s[b->n] = 0;
}

static int read_maps(struct pinfo *p)
{
	gr_maps__free(&p->maps);
	return gr_maps__read((int)p->pid, &p->maps);
}

static void *open_elf(const char *path)
{
	return gr_elf__open(path);
}

static void *loader_main(void *arg)
{
	struct loader *ld = arg;
	pthread_mutex_lock(&ld->mu);
	for (;;) {
		while (!ld->head && !ld->stop)
			pthread_cond_wait(&ld->cv, &ld->mu);
		if (ld->stop)
			break;
		struct elfent *x = ld->head;
		ld->head = x->qnext;
		if (!ld->head)
			ld->tail = NULL;
		pthread_mutex_unlock(&ld->mu);
		struct gr_elf *e = gr_maps__open(x->pid, &x->m, open_elf);
		pthread_mutex_lock(&ld->mu);
		x->e = e;
		x->ready = 1;
	}
	pthread_mutex_unlock(&ld->mu);
	return NULL;
}

/* The ELF of a mapping if the loader has read it; else NULL, and it is
 * queued for reading if it was not yet. */
static struct gr_elf *elf_of(struct gr_host *h, uint32_t pid,
			     const struct gr_mapping *m)
{
	size_t b = (size_t)((m->dev * 31 + m->ino) % NELFB);
	struct gr_elf *e = NULL;
	for (struct elfent *x = h->elfs[b]; x; x = x->next)
		if (x->dev == m->dev && x->ino == m->ino) {
			pthread_mutex_lock(&h->ld.mu);
			if (x->ready)
				e = x->e;
			pthread_mutex_unlock(&h->ld.mu);
			return e;
		}
	if (!h->ld.started)
		return NULL;
	struct elfent *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->pid = pid;
	x->m = *m;
	x->m.path = m->path ? strdup(m->path) : NULL;
	x->dev = m->dev;
	x->ino = m->ino;
	x->next = h->elfs[b];
	h->elfs[b] = x;
	pthread_mutex_lock(&h->ld.mu);
	if (h->ld.tail)
		h->ld.tail->qnext = x;
	else
		h->ld.head = x;
	h->ld.tail = x;
	pthread_cond_signal(&h->ld.cv);
	pthread_mutex_unlock(&h->ld.mu);
	return NULL;
}

/* Names one user frame into b. */
static void user_frame(struct gr_host *h, struct pinfo *p, uint64_t addr,
		       struct sbuf *b)
{
	const struct gr_mapping *m = NULL;
	for (int pass = 0; pass < 2 && !m; pass++) {
		if (pass || !p->maps.m) {
			int64_t now = now_boot_ns();
			if (p->maps.m && now - p->maps_read_ns < MAPS_REREAD_NS)
				break;
			p->maps_read_ns = now;
			if (read_maps(p))
				break;
		}
		m = gr_maps__find(&p->maps, addr);
	}
	if (!m) {
		sb_frame(b, "[unknown]", 9);
		return;
	}
	struct gr_elf *e = elf_of(h, p->pid, m);
	uint64_t va, in;
	const char *sym = NULL;
	if (e && gr_elf__off_to_vaddr(e, addr - m->start + m->off, &va) == 0)
		sym = gr_elf__symbolize(e, va, &in);
	if (sym) {
		char *d = gr_demangle(sym);
		const char *s = d ? d : sym;
		size_t len = strlen(s);
		const char *paren = d ? strchr(s, '(') : NULL;
		if (paren)
			len = (size_t)(paren - s);
		sb_frame(b, s, len);
		free(d);
		return;
	}
	const char *base = m->path ? strrchr(m->path, '/') : NULL;
	char tmp[300];
	int n = snprintf(tmp, sizeof(tmp), "[%s+0x%" PRIx64 "]", base ? base + 1 :
			 m->path ? m->path : "unknown", addr - m->start + m->off);
	sb_frame(b, tmp, n > 0 ? (size_t)n : 0);
}

/* Kernel frames below these are the tracepoint's own. */
static int tracing_frame(const char *name)
{
	return !strncmp(name, "bpf_", 4) || !strncmp(name, "__bpf_", 6) ||
	       !strncmp(name, "__traceiter_", 12) ||
	       !strncmp(name, "trace_", 6);
}

/* The folded stack of an off-CPU record (malloc'd), or NULL. */
static char *fold(struct gr_host *h, const struct gr_offcpu *e)
{
	struct sbuf b = { 0 };
	int nu = e->ubytes > 0 ? e->ubytes / 8 : 0;
	int nk = e->kbytes > 0 ? e->kbytes / 8 : 0;
	if (nu > GR_USTACK_DEPTH)
		nu = GR_USTACK_DEPTH;
	if (nk > GR_KSTACK_DEPTH)
		nk = GR_KSTACK_DEPTH;
	if (nu) {
		/* An exited process's entry lingers with its maps; a process
		 * traced by --sched-all gets one here (gr_host__flush drops
		 * it once /proc has no such pid). */
		struct pinfo *p = h->o.trace_all ? pinfo_get(h, e->pid) :
				  ptab_get(&h->procs, e->pid);
		for (int i = nu - 1; p && i >= 0; i--)
			user_frame(h, p, e->ustack[i], &b);
	}
	/* Leaf first in the record: skip the tracing frames at the leaf. */
	int leaf = 0;
	while (leaf < nk && h->ksyms) {
		const char *s = gr_ksyms__find(h->ksyms, e->kstack[leaf], NULL);
		if (!s || !tracing_frame(s))
			break;
		leaf++;
	}
	for (int i = nk - 1; i >= leaf; i--) {
		const char *s = h->ksyms ?
			gr_ksyms__find(h->ksyms, e->kstack[i], NULL) : NULL;
		if (s) {
			sb_frame(&b, s, strlen(s));
		} else {
			sb_frame(&b, "[kernel]", 8);
		}
	}
	return b.s;
}

/* ---- records ---------------------------------------------------------------- */

static const char *task_state(uint32_t s)
{
	if ((s & 0x2) && (s & 0x400))
		return "I";	/* TASK_IDLE */
	if (s & 0x1)
		return "S";
	if (s & 0x2)
		return "D";
	if (s & 0x4)
		return "T";
	if (s & 0x8)
		return "t";
	if (s & 0x40)
		return "P";	/* parked kthread */
	if (s & 0x20)
		return "Z";
	if (s & 0x90)
		return "X";
	return "?";
}

static void comm_of(char out[17], const char in[16])
{
	memcpy(out, in, 16);
	out[16] = 0;
}

/* Whether the wakeup ran in an interrupt or softirq (a timer expiring, an
 * I/O completing): then current, the "waker", is only the task the
 * interrupt hit. */
static int woken_by_interrupt(struct gr_host *h, const struct gr_offcpu *e)
{
	if (!h->ksyms)
		return 0;
	for (int i = 0; i < GR_WSTACK_DEPTH && e->wstack[i]; i++) {
		const char *s = gr_ksyms__find(h->ksyms, e->wstack[i], NULL);
		if (s && (strstr(s, "irq") || strstr(s, "sysvec_") ||
			  !strcmp(s, "hrtimer_wakeup") ||
			  !strncmp(s, "__hrtimer_run", 13) ||
			  !strcmp(s, "call_timer_fn")))
			return 1;
	}
	return 0;
}

static void on_offcpu(struct gr_host *h, const struct gr_offcpu *e)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 0;
	char comm[17];
	comm_of(comm, e->comm);
	v[GR_offcpu_ts] = utc(h, e->ts);
	v[GR_offcpu_pid] = e->pid;
	v[GR_offcpu_tid] = e->tid;
	v[GR_offcpu_comm] = intern(h, comm);
	v[GR_offcpu_dur] = (int64_t)e->dur;
	v[GR_offcpu_state] = intern(h, task_state(e->state));
	if (e->waker_tid && !woken_by_interrupt(h, e)) {
		v[GR_offcpu_waker_pid] = e->waker_pid;
		v[GR_offcpu_waker_tid] = e->waker_tid;
	} else {
		nm |= 1ull << GR_offcpu_waker_pid | 1ull << GR_offcpu_waker_tid;
	}
	char *st = fold(h, e);
	if (st)
		v[GR_offcpu_stack] = intern(h, st);
	else
		nm |= 1ull << GR_offcpu_stack;
	free(st);
	append(h, GR_T_offcpu, v, nm);
}

static void on_runq(struct gr_host *h, const struct gr_runq *e)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	char comm[17];
	comm_of(comm, e->comm);
	v[GR_runq_ts] = utc(h, e->ts);
	v[GR_runq_pid] = e->pid;
	v[GR_runq_tid] = e->tid;
	v[GR_runq_comm] = intern(h, comm);
	v[GR_runq_dur] = (int64_t)e->dur;
	v[GR_runq_cpu] = e->cpu;
	append(h, GR_T_runq, v, 0);
}

static void on_block(struct gr_host *h, const struct gr_block *e)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 0;
	char comm[17], dev[32];
	static const char *const ops[] = {
		[0] = "R", [1] = "W", [2] = "F", [3] = "D", [5] = "D",
		[9] = "W", /* REQ_OP_WRITE_ZEROES */
	};
	v[GR_block_io_ts] = utc(h, e->ts);
	if (e->pid) {
		comm_of(comm, e->comm);
		v[GR_block_io_pid] = e->pid;
		v[GR_block_io_tid] = e->tid;
		v[GR_block_io_comm] = intern(h, comm);
	} else {
		nm |= 1ull << GR_block_io_pid | 1ull << GR_block_io_tid |
		      1ull << GR_block_io_comm;
	}
	v[GR_block_io_dur] = (int64_t)e->dur;
	snprintf(dev, sizeof(dev), "%u:%u", e->dev >> 20, e->dev & 0xfffff);
	v[GR_block_io_dev] = intern(h, dev);
	const char *op = e->op < sizeof(ops) / sizeof(ops[0]) && ops[e->op] ?
			 ops[e->op] : "?";
	v[GR_block_io_op] = intern(h, op);
	v[GR_block_io_bytes] = e->bytes;
	v[GR_block_io_sector] = (int64_t)e->sector;
	append(h, GR_T_block_io, v, nm);
}

static const char *syscall_name(uint32_t nr)
{
	switch (nr) {
	case NR_read: return "read";
	case NR_write: return "write";
	case NR_open: return "open";
	case NR_pread64: return "pread64";
	case NR_pwrite64: return "pwrite64";
	case NR_readv: return "readv";
	case NR_writev: return "writev";
	case NR_fsync: return "fsync";
	case NR_fdatasync: return "fdatasync";
	case NR_openat: return "openat";
	case NR_preadv: return "preadv";
	case NR_pwritev: return "pwritev";
	case NR_preadv2: return "preadv2";
	case NR_pwritev2: return "pwritev2";
	case NR_openat2: return "openat2";
	}
	return "?";
}

static void on_file(struct gr_host *h, const struct gr_file *e)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 0;
	char comm[17], path[GR_PATH_BYTES];
	comm_of(comm, e->comm);
	v[GR_file_io_ts] = utc(h, e->ts);
	v[GR_file_io_pid] = e->pid;
	v[GR_file_io_tid] = e->tid;
	v[GR_file_io_comm] = intern(h, comm);
	v[GR_file_io_dur] = (int64_t)e->dur;
	v[GR_file_io_syscall] = intern(h, syscall_name(e->nr));
	v[GR_file_io_fd] = e->fd;
	v[GR_file_io_bytes] = e->ret;
	memcpy(path, e->path, sizeof(path));
	path[sizeof(path) - 1] = 0;
	if (e->nr == NR_open || e->nr == NR_openat || e->nr == NR_openat2)
		v[GR_file_io_path] = intern(h, path);
	else
		nm |= 1ull << GR_file_io_path;
	append(h, GR_T_file_io, v, nm);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gr_host *h = ctx;
	uint32_t rec;
	if (len < sizeof(rec))
		return 0;
	memcpy(&rec, data, sizeof(rec));
#define IS(T) (len >= sizeof(struct T))
	switch (rec) {
	case GR_REC_OFFCPU: if (IS(gr_offcpu)) on_offcpu(h, data); break;
	case GR_REC_RUNQ: if (IS(gr_runq)) on_runq(h, data); break;
	case GR_REC_BLOCK: if (IS(gr_block)) on_block(h, data); break;
	case GR_REC_FILE: if (IS(gr_file)) on_file(h, data); break;
	case GR_REC_PEXEC: if (IS(gr_pexec)) on_exec(h, data); break;
	case GR_REC_PEXIT: if (IS(gr_pexit)) on_exit_(h, data); break;
	}
#undef IS
	return 0;
}

/* ---- lifecycle -------------------------------------------------------------- */

static int link_add(struct gr_host *h, struct bpf_link *l)
{
	if (h->nlinks == h->links_cap) {
		int cap = h->links_cap ? h->links_cap * 2 : 16;
		void *p = realloc(h->links, (size_t)cap * sizeof(*h->links));
		if (!p)
			return -ENOMEM;
		h->links = p;
		h->links_cap = cap;
	}
	h->links[h->nlinks++] = l;
	return 0;
}

/* Detaches what a family attached since h->nlinks was n0. */
static void unlink_since(struct gr_host *h, int n0)
{
	while (h->nlinks > n0)
		bpf_link__destroy(h->links[--h->nlinks]);
}

/* Attaches one program; logs and returns -errno if it cannot. */
static int attach(struct gr_host *h, const char *fam, struct bpf_program *p,
		  int required)
{
	struct bpf_link *l = bpf_program__attach(p);
	if (!l) {
		int err = -errno;
		if (required || h->o.verbose)
			LOG(h, "%s: cannot attach %s: %s", fam,
			    bpf_program__section_name(p), strerror(-err));
		return err;
	}
	if (link_add(h, l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	return 0;
}

/* Shares the tracked map: reuse the first loaded object's. */
static int share_tracked(struct gr_host *h, struct bpf_map *m)
{
	return h->tracked_fd >= 0 ? bpf_map__reuse_fd(m, h->tracked_fd) : 0;
}

static int add_rb(struct gr_host *h, struct bpf_map *m)
{
	if (!h->rb) {
		h->rb = ring_buffer__new(bpf_map__fd(m), on_record, h, NULL);
		return h->rb ? 0 : -errno;
	}
	return ring_buffer__add(h->rb, bpf_map__fd(m), on_record, h);
}

static void open_proc(struct gr_host *h, uint32_t self)
{
	struct proc_bpf *s = proc_bpf__open();
	int err;
	if (!s) {
		LOG(h, "proc: cannot open the BPF object: %s", strerror(errno));
		return;
	}
	s->rodata->self_tgid = self;
	if ((err = share_tracked(h, s->maps.tracked)) ||
	    (err = proc_bpf__load(s))) {
		LOG(h, "proc: the kernel refused the BPF programs: %s",
		    strerror(-err));
		proc_bpf__destroy(s);
		return;
	}
	int n0 = h->nlinks;
	if (attach(h, "proc", s->progs.proc_exec, 1) ||
	    attach(h, "proc", s->progs.proc_exit, 1) ||
	    (err = add_rb(h, s->maps.events))) {
		LOG(h, "proc: family disabled");
		unlink_since(h, n0);
		proc_bpf__destroy(s);
		return;
	}
	if (h->tracked_fd < 0)
		h->tracked_fd = bpf_map__fd(s->maps.tracked);
	h->proc = s;
}

static void open_sched(struct gr_host *h, uint32_t self)
{
	struct sched_bpf *s = sched_bpf__open();
	int err;
	if (!s) {
		LOG(h, "sched: cannot open the BPF object: %s", strerror(errno));
		return;
	}
	s->rodata->self_tgid = self;
	s->rodata->trace_all = h->o.trace_all ? 1 : 0;
	s->rodata->offcpu_min_ns = (uint64_t)h->o.offcpu_min_ns;
	s->rodata->runq_min_ns = (uint64_t)h->o.runq_min_ns;
	s->rodata->wake_bytes = bpf_map__max_entries(s->maps.events) / 4;
	if ((err = share_tracked(h, s->maps.tracked)) ||
	    (err = sched_bpf__load(s))) {
		LOG(h, "sched: the kernel refused the BPF programs: %s",
		    strerror(-err));
		sched_bpf__destroy(s);
		return;
	}
	int n0 = h->nlinks;
	if (attach(h, "sched", s->progs.sched_switch, 1) ||
	    attach(h, "sched", s->progs.sched_waking, 1) ||
	    attach(h, "sched", s->progs.sched_wakeup, 1) ||
	    attach(h, "sched", s->progs.sched_wakeup_new, 1) ||
	    (err = add_rb(h, s->maps.events))) {
		LOG(h, "sched: family disabled");
		unlink_since(h, n0);
		sched_bpf__destroy(s);
		return;
	}
	if (h->tracked_fd < 0)
		h->tracked_fd = bpf_map__fd(s->maps.tracked);
	h->sched = s;
}

static void open_io(struct gr_host *h, uint32_t self)
{
	struct io_bpf *s = io_bpf__open();
	int err;
	if (!s) {
		LOG(h, "io: cannot open the BPF object: %s", strerror(errno));
		return;
	}
	s->rodata->self_tgid = self;
	s->rodata->trace_all = h->o.trace_all ? 1 : 0;
	s->rodata->file_min_ns = (uint64_t)h->o.file_io_min_ns;
	s->rodata->wake_bytes = bpf_map__max_entries(s->maps.events) / 4;
	if ((err = share_tracked(h, s->maps.tracked)) ||
	    (err = io_bpf__load(s))) {
		LOG(h, "io: the kernel refused the BPF programs: %s",
		    strerror(-err));
		io_bpf__destroy(s);
		return;
	}
	/* block_io_start is 6.5+: without it, requests are attributed to
	 * the task current at issue. */
	int n0 = h->nlinks;
	if (attach(h, "io", s->progs.block_io_start, 0))
		LOG(h, "io: no block_io_start tracepoint: block requests are "
		       "attributed to the task that issues them");
	if (attach(h, "io", s->progs.block_rq_issue, 1) ||
	    attach(h, "io", s->progs.block_rq_complete, 1) ||
	    attach(h, "io", s->progs.sys_enter, 1) ||
	    attach(h, "io", s->progs.sys_exit, 1) ||
	    (err = add_rb(h, s->maps.events))) {
		LOG(h, "io: family disabled");
		unlink_since(h, n0);
		io_bpf__destroy(s);
		return;
	}
	if (h->tracked_fd < 0)
		h->tracked_fd = bpf_map__fd(s->maps.tracked);
	h->io = s;
}

struct gr_host *gr_host__open(const struct gr_host_opts *o)
{
	struct gr_host *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->o = *o;
	h->tracked_fd = -1;
	uint32_t self = o->record_self ? 0 : (uint32_t)getpid();
	open_proc(h, self);
	if (o->sched)
		open_sched(h, self);
	if (o->io)
		open_io(h, self);
	if (!h->proc && !h->sched && !h->io) {
		gr_host__close(h);
		errno = ENOTSUP;
		return NULL;
	}
	void *bits = mmap(NULL, GR_TRACKED_WORDS * sizeof(uint64_t),
			  PROT_READ | PROT_WRITE, MAP_SHARED, h->tracked_fd, 0);
	if (bits == MAP_FAILED)
		LOG(h, "host: cannot map the traced-process bitmap (%s): "
		       "only --sched-all traces anything", strerror(errno));
	else
		h->tracked_bits = bits;
	if (h->sched && !(h->ksyms = gr_ksyms__load(NULL)))
		LOG(h, "sched: cannot read /proc/kallsyms (%s): kernel frames "
		       "of off-CPU stacks go unnamed", strerror(errno));
	h->cgroups = gr_cgroups__new();
	pthread_mutex_init(&h->ld.mu, NULL);
	pthread_cond_init(&h->ld.cv, NULL);
	if (h->sched && pthread_create(&h->ld.thread, NULL, loader_main,
				       &h->ld) == 0)
		h->ld.started = 1;
	LOG(h, "host: recording%s%s%s (%s)", h->proc ? " processes" : "",
	    h->sched ? ", scheduling" : "", h->io ? ", block and file I/O" : "",
	    o->trace_all ? "every process" : "processes that use CUDA");
	return h;
}

void gr_host__close(struct gr_host *h)
{
	if (!h)
		return;
	if (h->tracked_bits)
		munmap(h->tracked_bits, GR_TRACKED_WORDS * sizeof(uint64_t));
	for (int i = 0; i < h->nlinks; i++)
		bpf_link__destroy(h->links[i]);
	free(h->links);
	ring_buffer__free(h->rb);
	sched_bpf__destroy(h->sched);
	io_bpf__destroy(h->io);
	proc_bpf__destroy(h->proc);
	for (size_t i = 0; i < h->procs.nb; i++)
		for (struct pinfo *p = h->procs.b[i], *nx; p; p = nx) {
			nx = p->next;
			pinfo_free(p);
		}
	free(h->procs.b);
	if (h->ld.started) {
		pthread_mutex_lock(&h->ld.mu);
		h->ld.stop = 1;
		pthread_cond_signal(&h->ld.cv);
		pthread_mutex_unlock(&h->ld.mu);
		pthread_join(h->ld.thread, NULL);
	}
	for (int i = 0; i < NELFB; i++)
		for (struct elfent *x = h->elfs[i], *nx; x; x = nx) {
			nx = x->next;
			gr_elf__close(x->e);
			free(x->m.path);
			free(x);
		}
	gr_ksyms__free(h->ksyms);
	gr_cgroups__free(h->cgroups);
	free(h->segment);
	free(h);
}

int gr_host__families(const struct gr_host *h)
{
	return h ? (h->proc ? 1 : 0) | (h->sched ? 2 : 0) | (h->io ? 4 : 0) : 0;
}

int gr_host__fd(struct gr_host *h)
{
	return h->rb ? ring_buffer__epoll_fd(h->rb) : -1;
}

uint64_t gr_host__recovered(const struct gr_host *h)
{
	return h && h->sched ? h->sched->bss->recovered : 0;
}

int gr_host__poll(struct gr_host *h)
{
	return h->rb ? ring_buffer__consume(h->rb) : 0;
}

static void drop_rows(struct gr_host *h, int fam, const char *const *names,
		      const uint64_t *now, int n, int64_t ts)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 1ull << GR_drops_pid | 1ull << GR_drops_tid |
		      1ull << GR_drops_comm;
	v[GR_drops_ts] = ts;
	for (int i = 0; i < n; i++) {
		if (now[i] == h->drops_seen[fam][i])
			continue;
		v[GR_drops_source] = intern(h, names[i]);
		v[GR_drops_count] = (int64_t)(now[i] - h->drops_seen[fam][i]);
		h->drops_seen[fam][i] = now[i];
		gr_writer__append(h->o.w, GR_T_drops, v, nm);
	}
}

void gr_host__flush(struct gr_host *h, int64_t now_ns)
{
	static const char *const sched_src[] = { "sched:ringbuf",
						 "sched:threads" };
	static const char *const io_src[] = { "io:ringbuf" };
	static const char *const proc_src[] = { "proc:ringbuf" };
	if (!h)
		return;
	gr_host__poll(h);
	if (h->sched)
		drop_rows(h, 0, sched_src, (const uint64_t *)h->sched->bss->drops,
			  GR_SCHED_NDROPS, now_ns);
	if (h->io)
		drop_rows(h, 1, io_src, (const uint64_t *)h->io->bss->drops,
			  GR_IO_NDROPS,
			  now_ns);
	if (h->proc)
		drop_rows(h, 2, proc_src, (const uint64_t *)h->proc->bss->drops,
			  GR_PROC_NDROPS,
			  now_ns);
	if (h->user_drops != h->user_drops_seen) {
		uint64_t d = h->user_drops, seen = h->user_drops_seen;
		int64_t v[GR_MAX_COLS] = { 0 };
		v[GR_drops_ts] = now_ns;
		v[GR_drops_source] = intern(h, "host:store");
		v[GR_drops_count] = (int64_t)(d - seen);
		gr_writer__append(h->o.w, GR_T_drops, v,
				  1ull << GR_drops_pid | 1ull << GR_drops_tid |
				  1ull << GR_drops_comm);
		h->user_drops_seen = d;
	}

	/* A new segment: name its live processes in it too. */
	const char *seg = gr_writer__segment_path(h->o.w);
	int fresh = !h->segment || strcmp(seg, h->segment) != 0;
	if (fresh) {
		free(h->segment);
		h->segment = strdup(seg);
	}
	int64_t boot = now_boot_ns();
	int sweep = ++h->flushes % 16 == 0;
	for (size_t i = 0; i < h->procs.nb; i++)
		for (struct pinfo *p = h->procs.b[i], *nx; p; p = nx) {
			nx = p->next;
			char path[32];
			if (p->exited &&
			    boot - (p->exit_ts - h->o.clock_offset_ns) >
			    EXITED_KEEP_NS)
				forget(h, p);
			else if (!p->exited && !p->named && sweep &&
				 (snprintf(path, sizeof(path), "/proc/%u",
					   p->pid), access(path, F_OK)))
				forget(h, p); /* its exit record was lost */
			else if (fresh && p->named && !p->exited &&
				 h->segment)
				process_row(h, p);
		}
}
