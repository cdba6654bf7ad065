/* ulink.c - uprobes attached in bulk, detached in parallel.
 *
 * Removing a uprobe makes the kernel wait for a synchronization (an RCU
 * tasks-trace grace period and an SRCU one: 60-200 ms measured on 6.18,
 * here and on the GPU machine), once per link it closes.  A perf-event
 * uprobe is a link of one probe: 850 probes took 106 s to detach, and as
 * long again for the kernel to reap a gpurecd killed with -9.  A
 * multi-uprobe link (BPF_TRACE_UPROBE_MULTI, Linux 6.6) holds any number
 * of offsets of one file and pays the synchronization once: 80 offsets
 * as one link closed in 0.064 s, against 16.5 s as 80 links.  So a file's
 * entry points are attached as two multi links, entries and returns, or
 * as one where the kernel has uprobe sessions (Linux 6.13: one program
 * runs at entry and return).  One link per file matters most when
 * gpurecd is killed: the kernel then closes the links one by one.
 * Closing links from several threads at once lets their grace periods
 * overlap: 8 multi links closed in 0.44 s one after another and 0.064 s
 * from 8 threads.  Single links share less (80 of them: 16.5 s serially,
 * 8.5 s from 16 threads, the uprobe registry being one lock), but still
 * gain, so where the kernel has no multi links they are attached one by
 * one and detached the same parallel way.
 *
 * libbpf 1.1 (Debian 12's) has no API for multi-uprobe links, so they are
 * made with the bpf() system call directly; the attribute layout below
 * is the kernel's ABI since 6.6.  A program must be loaded for its kind
 * of link (expected_attach_type) and is then refused for the others: a
 * family builds its uprobe programs once per kind, and the copies it
 * will not use are not loaded at all.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder/ulink.h"

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI (Linux 6.6) with its
 * return flag, and BPF_TRACE_UPROBE_SESSION (6.13), from the kernel's
 * include/uapi/linux/bpf.h; Debian 12's headers are 6.1's. */
#define GR_TRACE_UPROBE_MULTI 48
#define GR_TRACE_UPROBE_SESSION 57
#define GR_UPROBE_MULTI_RETURN 1u

/* union bpf_attr's link_create for a multi-uprobe link. */
struct gr_umulti_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, umulti_flags, pid;
};

/* The most threads a detach starts: the kernel shares grace periods among
 * however many wait at once, and more threads only cost stacks. */
#define DETACH_THREADS 16

/* A multi-uprobe link of type type (GR_TRACE_UPROBE_*).  Returns its fd
 * or -errno. */
static int multi_link(int prog_fd, uint32_t type, const char *path,
		      const uint64_t *offs, const uint64_t *cookies, int n,
		      int ret, int pid)
{
	union {
		union bpf_attr a;
		struct gr_umulti_attr u;
	} attr;
	memset(&attr, 0, sizeof(attr));
	attr.u.prog_fd = (uint32_t)prog_fd;
	attr.u.attach_type = type;
	attr.u.path = (uint64_t)(uintptr_t)path;
	attr.u.offsets = (uint64_t)(uintptr_t)offs;
	attr.u.cookies = (uint64_t)(uintptr_t)cookies;
	attr.u.cnt = (uint32_t)n;
	attr.u.umulti_flags = ret ? GR_UPROBE_MULTI_RETURN : 0;
	attr.u.pid = pid > 0 ? (uint32_t)pid : 0;
	int fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* A kernel with links of this type loads a program for them and, asked
 * to attach it to "/", answers EBADF (not a regular file); one without
 * refuses the program or the attach type with EINVAL. */
static int probe(uint32_t type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)type);
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gr_ulink_probe",
				 "GPL", insns, 2, &o);
	if (prog < 0)
		return 0;
	uint64_t off = 0;
	int fd = multi_link(prog, type, "/", &off, NULL, 1, 0, 0);
	close(prog);
	if (fd >= 0)
		close(fd);
	return fd == -EBADF;
}

static int env_off(const char *name)
{
	const char *e = getenv(name);
	return e && strcmp(e, "0") == 0;
}

/* The best kind this kernel makes, probed once. */
static enum gr_ulink_kind best_kind(void)
{
	static int known = -1;
	if (known < 0) {
		known = GR_ULINK_SINGLE;
		if (env_off("GPURECD_UPROBE_MULTI"))
			;
		else if (!env_off("GPURECD_UPROBE_SESSION") &&
			 probe(GR_TRACE_UPROBE_SESSION))
			known = GR_ULINK_SESSION;
		else if (probe(GR_TRACE_UPROBE_MULTI))
			known = GR_ULINK_MULTI;
	}
	return (enum gr_ulink_kind)known;
}

/* Loads prog for links of type, or not at all (type 0); NULLs *slot if
 * not. */
static void load_as(struct bpf_program **slot, uint32_t type)
{
	if (!*slot)
		return;
	if (type)
		bpf_program__set_expected_attach_type(
			*slot, (enum bpf_attach_type)type);
	else {
		bpf_program__set_autoload(*slot, false);
		*slot = NULL;
	}
}

enum gr_ulink_kind gr_ulink__prepare(struct gr_uprobe_progs *p)
{
	enum gr_ulink_kind k = best_kind();
	if (k == GR_ULINK_SESSION && !p->session)
		k = GR_ULINK_MULTI;
	if (k == GR_ULINK_MULTI && (!p->entry_multi || !p->ret_multi))
		k = GR_ULINK_SINGLE;
	uint32_t multi = k == GR_ULINK_MULTI ? GR_TRACE_UPROBE_MULTI : 0;
	load_as(&p->entry_multi, multi);
	load_as(&p->ret_multi, multi);
	load_as(&p->session,
		k == GR_ULINK_SESSION ? GR_TRACE_UPROBE_SESSION : 0);
	return k;
}

static int reserve(struct gr_ulinks *v, int k)
{
	if (v->cap - v->n >= k)
		return 0;
	int cap = v->cap ? v->cap * 2 : 16;
	while (cap - v->n < k)
		cap *= 2;
	void *q = realloc(v->v, (size_t)cap * sizeof(*v->v));
	if (!q)
		return -ENOMEM;
	v->v = q;
	v->cap = cap;
	return 0;
}

static void push(struct gr_ulinks *v, struct bpf_link *l, int fd, int probes)
{
	v->v[v->n++] = (struct gr_ulink){ l, fd, probes };
	v->probes += probes;
}

int gr_ulinks__add(struct gr_ulinks *v, struct bpf_link *l, int probes)
{
	if (reserve(v, 1)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	push(v, l, -1, probes);
	return 0;
}

/* Both directions as one session link or two multi links.  Returns 0 or
 * -errno (nothing attached). */
static int attach_multi(struct gr_ulinks *v, const struct gr_uprobe_progs *p,
			const char *path, const uint64_t *offs,
			const uint64_t *cookies, int n, int pid)
{
	if (reserve(v, 2))
		return -ENOMEM;
	if (p->session) {
		int fd = multi_link(bpf_program__fd(p->session),
				    GR_TRACE_UPROBE_SESSION, path, offs,
				    cookies, n, 0, pid);
		if (fd < 0)
			return fd;
		push(v, NULL, fd, 2 * n);
		return 0;
	}
	int in = multi_link(bpf_program__fd(p->entry_multi),
			    GR_TRACE_UPROBE_MULTI, path, offs, cookies, n, 0,
			    pid);
	if (in < 0)
		return in;
	int out = multi_link(bpf_program__fd(p->ret_multi),
			     GR_TRACE_UPROBE_MULTI, path, offs, cookies, n, 1,
			     pid);
	if (out < 0) {
		close(in);
		return out;
	}
	push(v, NULL, in, n);
	push(v, NULL, out, n);
	return 0;
}

/* One offset as two single links.  Returns 0 or -errno. */
static int attach_one(struct gr_ulinks *v, const struct gr_uprobe_progs *p,
		      const char *path, uint64_t off, uint64_t cookie, int pid)
{
	if (reserve(v, 2))
		return -ENOMEM;
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct bpf_link *in = bpf_program__attach_uprobe_opts(
		p->entry, pid, path, (size_t)off, &uo);
	if (!in)
		return errno ? -errno : -EINVAL;
	uo.retprobe = true;
	struct bpf_link *out = bpf_program__attach_uprobe_opts(
		p->ret, pid, path, (size_t)off, &uo);
	if (!out) {
		int err = errno ? -errno : -EINVAL;
		bpf_link__destroy(in);
		return err;
	}
	push(v, in, -1, 1);
	push(v, out, -1, 1);
	return 0;
}

int gr_ulinks__attach(struct gr_ulinks *v, const struct gr_uprobe_progs *p,
		      const char *path, const uint64_t *offs,
		      const uint64_t *cookies, int n, int pid, int *err)
{
	int done = 0;
	*err = 0;
	if (n <= 0)
		return 0;
	/* A multi link is all or nothing: where one offset is refused,
	 * the offsets go one by one and the rest still attach. */
	if ((p->session || (p->entry_multi && p->ret_multi)) &&
	    attach_multi(v, p, path, offs, cookies, n, pid) == 0)
		return n;
	for (int i = 0; i < n; i++) {
		int r = attach_one(v, p, path, offs[i], cookies[i], pid);
		if (r)
			*err = r;
		else
			done++;
	}
	return done;
}

static void detach_one(struct gr_ulink *k)
{
	if (k->l)
		bpf_link__destroy(k->l);
	else if (k->fd >= 0)
		close(k->fd);
}

void gr_ulinks__truncate(struct gr_ulinks *v, int n)
{
	while (v->n > n) {
		struct gr_ulink *k = &v->v[--v->n];
		v->probes -= k->probes;
		detach_one(k);
	}
}

struct detach_job {
	struct gr_ulink *v;
	int n, stride, first;
};

static void *detach_main(void *arg)
{
	struct detach_job *j = arg;
	for (int i = j->first; i < j->n; i += j->stride)
		detach_one(&j->v[i]);
	return NULL;
}

/* Detaches the n links of v from up to DETACH_THREADS threads; those
 * that cannot be started leave their share to this one. */
static void detach_array(struct gr_ulink *v, int n)
{
	int nt = n < DETACH_THREADS ? n : DETACH_THREADS;
	pthread_t th[DETACH_THREADS];
	struct detach_job jobs[DETACH_THREADS];
	int started[DETACH_THREADS] = { 0 };
	for (int t = 1; t < nt; t++) {
		jobs[t] = (struct detach_job){ v, n, nt, t };
		started[t] = pthread_create(&th[t], NULL, detach_main,
					    &jobs[t]) == 0;
	}
	jobs[0] = (struct detach_job){ v, n, nt, 0 };
	detach_main(&jobs[0]);
	for (int t = 1; t < nt; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			detach_main(&jobs[t]);
	}
}

int gr_ulinks__detach(struct gr_ulinks *const *sets, int nsets)
{
	int n = 0, k = 0;
	for (int i = 0; i < nsets; i++)
		n += sets[i]->n;
	struct gr_ulink *all = n ? malloc((size_t)n * sizeof(*all)) : NULL;
	for (int i = 0; i < nsets; i++) {
		if (all && sets[i]->n)
			memcpy(all + k, sets[i]->v,
			       (size_t)sets[i]->n * sizeof(*all));
		else /* no memory: one by one */
			for (int j = 0; j < sets[i]->n; j++)
				detach_one(&sets[i]->v[j]);
		k += sets[i]->n;
		free(sets[i]->v);
		*sets[i] = (struct gr_ulinks){ 0 };
	}
	if (all)
		detach_array(all, n);
	free(all);
	return n;
}

/* Background detaches, for gr_ulinks__wait(): joinable threads, joined
 * once done (when the next one starts, or by the wait), so that a wait
 * returns only once their threads are gone: the sandbox, which follows
 * it, counts and signals every thread of the process. */
struct later {
	struct gr_ulinks links;
	pthread_t th;
	int done;
	struct later *next;
};
static pthread_mutex_t later_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t later_cv = PTHREAD_COND_INITIALIZER;
static int later_running;
static struct later *laters;

static void *later_main(void *arg)
{
	struct later *l = arg;
	struct gr_ulinks *v = &l->links;
	gr_ulinks__detach(&v, 1);
	pthread_mutex_lock(&later_mu);
	l->done = 1;
	later_running--;
	pthread_cond_broadcast(&later_cv);
	pthread_mutex_unlock(&later_mu);
	return NULL;
}

/* Joins and frees the background detaches that are done (all of them if
 * all, waiting for those still running). */
static void later_reap(int all)
{
	pthread_mutex_lock(&later_mu);
	while (all && later_running > 0)
		pthread_cond_wait(&later_cv, &later_mu);
	struct later *done = NULL, **pp = &laters;
	while (*pp) {
		struct later *l = *pp;
		if (l->done) {
			*pp = l->next;
			l->next = done;
			done = l;
		} else {
			pp = &l->next;
		}
	}
	pthread_mutex_unlock(&later_mu);
	while (done) {
		struct later *l = done;
		done = l->next;
		pthread_join(l->th, NULL);
		free(l);
	}
}

void gr_ulinks__detach_later(struct gr_ulinks *v)
{
	if (!v->n) {
		free(v->v);
		*v = (struct gr_ulinks){ 0 };
		return;
	}
	later_reap(0);
	struct later *l = calloc(1, sizeof(*l));
	int ok = 0;
	if (l) {
		l->links = *v;
		pthread_mutex_lock(&later_mu);
		later_running++;
		ok = pthread_create(&l->th, NULL, later_main, l) == 0;
		if (ok) {
			l->next = laters;
			laters = l;
		} else {
			later_running--;
		}
		pthread_mutex_unlock(&later_mu);
		if (!ok)
			free(l);
	}
	if (!ok) { /* no thread: detach here */
		struct gr_ulinks *self = v;
		gr_ulinks__detach(&self, 1);
	}
	*v = (struct gr_ulinks){ 0 };
}

void gr_ulinks__wait(void)
{
	later_reap(1);
}
