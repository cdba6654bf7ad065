/* proc.c - the proc family's user side: loading proc.bpf.c, and the
 * process table its exec and exit records keep.
 *
 * The `process` table names the processes that use CUDA and their
 * ancestors.  Whether a process uses CUDA is known only once the CUDA
 * family decodes one of its calls, and by then a short-lived process may
 * have exited and /proc forgotten it; so every exec and exit on the host
 * is kept here (struct gr_pinfo) until the process exits, and an exited
 * one a few seconds more, in case its CUDA calls are decoded late.  The
 * store's rows never change once written, so a process's row is a
 * snapshot: one when it is first traced (exit NULL), one when it exits,
 * and one in each new segment while it lives, so that every segment names
 * the processes whose events it holds (retention deletes old segments).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "proc.skel.h"
#include "recorder/cgroup.h"
#include "recorder/hostfam.h"
#include "recorder/proc/decode.h"
#include "store/store.h"

#define EXITED_KEEP_NS (10ll * 1000000000)	/* after an exit */
#define MAX_ANCESTORS 32

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

static void set_cgroup(struct gr_pinfo *p, const char *path)
{
	free(p->cgroup);
	p->cgroup = strdup(path);
	gr_cgroup__parse(path, p->cid, p->pod);
}

/* The v2 line of /proc/PID/cgroup: its path, keeping ids a v1 line found
 * if this one has none. */
static void cgroup_v2(struct gr_pinfo *p, const char *path)
{
	char cid[65], pod[37];
	memcpy(cid, p->cid, sizeof(cid));
	memcpy(pod, p->pod, sizeof(pod));
	set_cgroup(p, path);
	if (!p->cid[0])
		memcpy(p->cid, cid, sizeof(cid));
	if (!p->pod[0])
		memcpy(p->pod, pod, sizeof(pod));
}

/* A live process's cgroup from /proc/PID/cgroup: the v2 path (what the
 * exec record's cgroup id names too, so a process read either way gets the
 * same), and the container and pod ids from it or, on a hybrid host where
 * it is "/", from the v1 path that places the process. */
static int cgroup_of(struct gr_pinfo *p)
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
			cgroup_v2(p, c2 + 1);
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
static int read_exe(struct gr_pinfo *p)
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
static int read_proc(struct gr_host *h, struct gr_pinfo *p)
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
			p->start_ts = gr_dctx__utc(&h->dctx, start *
					(1000000000ull / (uint64_t)hz));
	}
	read_exe(p);
	snprintf(path, sizeof(path), "/proc/%u/cmdline", p->pid);
	if ((n = read_small(path, buf, sizeof(buf))) > 0) {
		free(p->cmdline);
		p->cmdline = gr_proc__join_args(buf, (size_t)n);
	}
	cgroup_of(p);
	p->have_id = 1;
	return 0;
}

struct gr_pinfo *gr_proc__lookup(struct gr_host *h, uint32_t pid, int add)
{
	return add ? gr_ptab__get_or_add(&h->procs, pid) :
		     gr_ptab__get(&h->procs, pid);
}

/* One `process` row: a snapshot of what is known now. */
static void process_row(struct gr_host *h, struct gr_pinfo *p)
{
	struct gr_row r;
	if (!p->cgroup && p->cgroup_id && h->cgroups) {
		char buf[4096];
		if (gr_cgroups__path(h->cgroups, p->cgroup_id, buf,
				     sizeof(buf)) == 0)
			set_cgroup(p, buf);
	}
	gr_proc__row(&h->dctx, p, &r);
	gr_host__put(h, &r);
}

/* Makes p named (rows from now on), with its ancestors. */
static void name_process(struct gr_host *h, struct gr_pinfo *p, int64_t now)
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
		p = gr_ptab__get_or_add(&h->procs, ppid);
	}
}

/* Sets or clears pid's bit in the shared bitmap (bpf/common.bpf.h),
 * mapped into gpurecd: atomically, as proc.bpf.c clears the bits of
 * exiting processes meanwhile.  The exit record clears this one again
 * (on_exit_), whichever ring buffer is drained first. */
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

void gr_proc__track(struct gr_host *h, uint32_t pid)
{
	struct gr_pinfo *p = gr_ptab__get(&h->procs, pid);
	if (p && p->traced)
		return;
	if (!p && !(p = gr_ptab__get_or_add(&h->procs, pid)))
		return;
	p->traced = 1;
	if (!p->exited)
		set_tracked(h, pid, 1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	name_process(h, p, ts.tv_sec * 1000000000ll + ts.tv_nsec);
	/* Its maps, and its smaller ELF files read, so that its first
	 * off-CPU stacks are named too. */
	if (!p->exited)
		gr_stacks__prefetch(h->stacks, p->pid, &p->pm);
}

/* A process gone before /proc/PID/exe was read, exec'd by a relative
 * path: the path against its parent's working directory (where the shell
 * that ran it stands), if that names the very file it exec'd. */
static void resolve_exe(struct gr_pinfo *p, const struct gr_proc_ev *e)
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

/* Takes the exec record's identity; the cmdline is handed over. */
static void on_exec(struct gr_host *h, struct gr_proc_ev *e)
{
	struct gr_pinfo *p = gr_ptab__get(&h->procs, e->pid);
	if (p && p->exited) { /* the pid came back: a new process */
		gr_ptab__forget(&h->procs, p);
		p = NULL;
	}
	if (!p && !(p = gr_ptab__get_or_add(&h->procs, e->pid)))
		return;
	p->ppid = e->ppid;
	memcpy(p->comm, e->comm, sizeof(p->comm));
	p->start_ts = e->start_ts;
	p->cgroup_id = e->cgroup_id;
	free(p->exe);
	p->exe = strdup(e->exe);
	free(p->cmdline);
	p->cmdline = e->cmdline;
	e->cmdline = NULL;
	free(p->cgroup);
	p->cgroup = NULL;
	gr_pmaps__free(&p->pm); /* a new image */
	p->have_id = 1;
	/* Still alive (the usual case): /proc has the absolute executable
	 * and the cgroup path without a walk. */
	if (read_exe(p) && p->exe && p->exe[0] != '/')
		resolve_exe(p, e);
	cgroup_of(p);
	if (p->named) /* a traced process exec'd: a row for its new image */
		process_row(h, p);
}

static void on_exit_(struct gr_host *h, const struct gr_proc_ev *e)
{
	struct gr_pinfo *p = gr_ptab__get(&h->procs, e->pid);
	if (!p)
		return; /* never exec'd while we ran, never traced */
	p->exited = 1;
	p->code = e->code;
	p->exit_ts = e->ts;
	if (!p->start_ts)
		p->start_ts = e->start_ts;
	if (!p->comm[0])
		memcpy(p->comm, e->comm, sizeof(p->comm));
	if (p->traced)
		set_tracked(h, p->pid, 0);
	if (p->named)
		process_row(h, p);
	/* Kept a while (gr_proc__flush forgets it): records of its last
	 * moments, or its first CUDA calls, may still be on their way
	 * through the other ring buffers, and its stacks need its maps. */
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gr_host *h = ctx;
	struct gr_proc_ev ev;
	switch (gr_proc__decode(&h->dctx, data, len, &ev)) {
	case GR_REC_PEXEC:
		on_exec(h, &ev);
		break;
	case GR_REC_PEXIT:
		on_exit_(h, &ev);
		break;
	}
	free(ev.cmdline);
	return 0;
}

GR_HFAM_SKEL_FNS(proc)

void gr_proc__open(struct gr_host *h, uint32_t self)
{
	static const char *const progs[] = { "proc_exec", "proc_exit", NULL };
	struct proc_bpf *s = proc_bpf__open();
	if (s)
		s->rodata->self_tgid = self;
	struct gr_hfam_skel k = {
		.skel = s, .obj = s ? s->obj : NULL, .load = proc_load_,
		.destroy = proc_destroy_, .drops = proc_drops_, .progs = progs,
		.on_record = on_record,
	};
	gr_hfam__open(h, GR_FAM_proc, &k);
}

/* Called before each writer flush: `process` rows of live traced
 * processes again in a new segment (so each segment names the processes
 * it holds), and exited processes nobody asked about forgotten. */
void gr_proc__flush(struct gr_host *h)
{
	const char *seg = gr_writer__segment_path(h->o.w);
	int fresh = !h->segment || strcmp(seg, h->segment) != 0;
	if (fresh) {
		free(h->segment);
		h->segment = strdup(seg);
	}
	int64_t boot = gr_host__boot_ns();
	int sweep = ++h->flushes % 16 == 0;
	for (size_t i = 0; i < h->procs.nb; i++)
		for (struct gr_pinfo *p = h->procs.b[i], *nx; p; p = nx) {
			nx = p->next;
			char path[32];
			if (p->exited &&
			    boot - (p->exit_ts - h->o.clock_offset_ns) >
			    EXITED_KEEP_NS) {
				/* Its records are all drained by now. */
				gr_sched__forget(h, p->pid);
				gr_ptab__forget(&h->procs, p);
			}
			else if (!p->exited && !p->named && sweep &&
				 (snprintf(path, sizeof(path), "/proc/%u",
					   p->pid), access(path, F_OK)))
				gr_ptab__forget(&h->procs, p); /* its exit record was lost */
			else if (fresh && p->named && !p->exited &&
				 h->segment)
				process_row(h, p);
		}
}
