/* elfcache.c - ELF files by (device, inode), read by a loader thread; see
 * elfcache.h.
 *
 * An entry goes QUEUED -> LOADING -> READY, or QUEUED -> READY when a
 * caller of gr_elfcache__wait takes it off the queue and reads it itself.
 * Only the thread that moved an entry to LOADING reads its file, so each
 * file is read once; `done` wakes the waiters of an entry another thread
 * is reading.  In gpurecd the callers are the event loop (CUDA kernel
 * naming's get and wait, off-CPU stacks' get, and trim) and the one
 * loader thread, which never holds an ELF once it is READY: so trim,
 * called between the event loop's callbacks, frees nothing in use.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/keymap.h"
#include "recorder/sym/elfcache.h"
#include "recorder/sym/stubreg.h"

enum { QUEUED, LOADING, READY };

/* Files pinned by descriptor at once, at most: a host family that queues
 * every library of every traced process must not run gpurecd out of
 * descriptors; past this, a file is opened when its turn comes. */
#define MAX_PINNED 64

/* Files held open for their names (elfsyms.h), at most: trimming evicts
 * the least recently used past this. */
#define MAX_OPEN 512

/* Files known (read, unreadable or queued), at most, past trimming: every
 * library of every process whose stack is recorded, over months. */
#define MAX_ENTS 4096

/* What an entry holds of its file: the ELF's function addresses, or the
 * kernel registrations read from its code (stubreg.h).  One file may have
 * an entry of each: the kind is in the key's high bit. */
enum { K_ELF, K_REGS };
#define KIND_BIT (1ull << 63)

struct ent {
	struct ent *qnext;	/* in the loader's queue */
	int kind;
	uint32_t pid;		/* a process that mapped it */
	struct gr_mapping m;	/* there (m.path owned) */
	int fd;			/* the file, pinned at request; or -1 */
	int state;
	void *e;		/* once READY: NULL if it could not be read */
	uint64_t used;		/* ec->clock at the last get or wait */
	size_t bytes;		/* gr_elf__bytes(e) */
};

struct gr_elfcache {
	pthread_mutex_t mu;
	pthread_cond_t work;	/* the queue is not empty, or stop */
	pthread_cond_t done;	/* an entry became READY */
	pthread_t thread;
	struct gr_keymap ents;	/* (dev, ino) -> struct ent */
	struct ent *head, *tail;
	int pinned;		/* entries holding a descriptor */
	int nread;		/* READY entries with an ELF */
	uint64_t bytes;		/* their gr_elf__bytes */
	uint64_t clock;		/* counts gets and waits */
	uint64_t evicted;	/* entries trimmed, ever */
	int loader;		/* the thread runs */
	int stop;
};

static void *open_elf(const char *path)
{
	return gr_elf__open(path);
}

static void *open_regs(const char *path)
{
	return gr_stubreg__scan(path);
}

static size_t obj_bytes(const struct ent *x)
{
	return x->kind == K_ELF ? gr_elf__bytes(x->e) : gr_stubreg__bytes(x->e);
}

static void obj_free(struct ent *x)
{
	if (x->kind == K_ELF)
		gr_elf__close(x->e);
	else
		gr_stubreg__free(x->e);
}

/* Reads x's file: through the pinned descriptor if there is one, else as
 * procmaps.h opens a mapping's file (also where the descriptor could not
 * be reopened; a file that is no ELF is not tried twice). */
static void *load(struct ent *x)
{
	void *(*open_fn)(const char *) = x->kind == K_ELF ? open_elf : open_regs;
	void *e = NULL;
	if (x->fd >= 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", x->fd);
		if ((e = open_fn(path)) || errno == ENOEXEC)
			return e;
	}
	return gr_maps__open(x->pid, &x->m, open_fn);
}

/* Marks x read as e, and lets its descriptor go; called with mu held. */
static void finish(struct gr_elfcache *ec, struct ent *x, void *e)
{
	if (x->fd >= 0) {
		close(x->fd);
		x->fd = -1;
		ec->pinned--;
	}
	x->e = e;
	x->state = READY;
	if (e) {
		x->bytes = obj_bytes(x);
		ec->bytes += x->bytes;
		ec->nread++;
	}
	pthread_cond_broadcast(&ec->done);
}

static void *loader_main(void *arg)
{
	struct gr_elfcache *ec = arg;
	pthread_mutex_lock(&ec->mu);
	for (;;) {
		while (!ec->head && !ec->stop)
			pthread_cond_wait(&ec->work, &ec->mu);
		if (ec->stop)
			break;
		struct ent *x = ec->head;
		ec->head = x->qnext;
		if (!ec->head)
			ec->tail = NULL;
		x->state = LOADING;
		pthread_mutex_unlock(&ec->mu);
		void *e = load(x);
		pthread_mutex_lock(&ec->mu);
		finish(ec, x, e);
	}
	pthread_mutex_unlock(&ec->mu);
	return NULL;
}

struct gr_elfcache *gr_elfcache__new(int loader)
{
	struct gr_elfcache *ec = calloc(1, sizeof(*ec));
	if (!ec)
		return NULL;
	pthread_mutex_init(&ec->mu, NULL);
	pthread_cond_init(&ec->work, NULL);
	pthread_cond_init(&ec->done, NULL);
	int err = loader ? pthread_create(&ec->thread, NULL, loader_main, ec) : 0;
	ec->loader = loader;
	if (err) {
		pthread_cond_destroy(&ec->done);
		pthread_cond_destroy(&ec->work);
		pthread_mutex_destroy(&ec->mu);
		free(ec);
		errno = err;
		return NULL;
	}
	return ec;
}

void gr_elfcache__free(struct gr_elfcache *ec)
{
	if (!ec)
		return;
	if (ec->loader) {
		pthread_mutex_lock(&ec->mu);
		ec->stop = 1;
		pthread_cond_signal(&ec->work);
		pthread_mutex_unlock(&ec->mu);
		pthread_join(ec->thread, NULL);
	}
	for (size_t i = 0; i < ec->ents.cap; i++) {
		struct ent *x = ec->ents.e[i].v;
		if (!x)
			continue;
		if (x->fd >= 0)
			close(x->fd);
		obj_free(x);
		free(x->m.path);
		free(x);
	}
	gr_keymap__free(&ec->ents);
	pthread_cond_destroy(&ec->done);
	pthread_cond_destroy(&ec->work);
	pthread_mutex_destroy(&ec->mu);
	free(ec);
}

/* The entry of m, made and queued if there was none; NULL if out of
 * memory.  Called with mu held. */
static struct ent *lookup(struct gr_elfcache *ec, uint32_t pid,
			  const struct gr_mapping *m, int kind)
{
	uint64_t k1 = m->dev | (kind == K_REGS ? KIND_BIT : 0);
	struct ent *x = gr_keymap__get(&ec->ents, k1, m->ino);
	if (x) {
		x->used = ++ec->clock;
		return x;
	}
	if (!(x = calloc(1, sizeof(*x))))
		return NULL;
	char path[128];
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 pid, m->start, m->end);
	x->fd = ec->pinned < MAX_PINNED ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	ec->pinned += x->fd >= 0;
	x->pid = pid;
	x->kind = kind;
	x->used = ++ec->clock;
	x->m = *m;
	x->m.path = m->path ? strdup(m->path) : NULL;
	if (gr_keymap__put(&ec->ents, k1, m->ino, x) == x) {
		if (x->fd >= 0) {
			close(x->fd);
			ec->pinned--;
		}
		free(x->m.path);
		free(x);
		return NULL;
	}
	if (ec->tail)
		ec->tail->qnext = x;
	else
		ec->head = x;
	ec->tail = x;
	pthread_cond_signal(&ec->work);
	return x;
}

/* The object of kind for m, or NULL while it is pending (queued if it
 * was not yet); see gr_elfcache__get. */
static void *get(struct gr_elfcache *ec, uint32_t pid,
		 const struct gr_mapping *m, int kind, int *pending)
{
	pthread_mutex_lock(&ec->mu);
	struct ent *x = lookup(ec, pid, m, kind);
	int ready = x && x->state == READY;
	void *e = ready ? x->e : NULL;
	pthread_mutex_unlock(&ec->mu);
	if (pending)
		*pending = x && !ready;
	return e;
}

/* Takes x off the loader's queue; called with mu held. */
static void unqueue(struct gr_elfcache *ec, struct ent *x)
{
	struct ent *prev = NULL, *q = ec->head;
	for (; q && q != x; q = q->qnext)
		prev = q;
	if (!q)
		return; /* not queued */
	if (prev)
		prev->qnext = x->qnext;
	else
		ec->head = x->qnext;
	if (ec->tail == x)
		ec->tail = prev;
	x->qnext = NULL;
}

/* The object of kind for m, read now if it was not; see
 * gr_elfcache__wait. */
static void *wait_for(struct gr_elfcache *ec, uint32_t pid,
		      const struct gr_mapping *m, int kind)
{
	pthread_mutex_lock(&ec->mu);
	struct ent *x = lookup(ec, pid, m, kind);
	if (x && x->state == QUEUED) {
		unqueue(ec, x);
		x->state = LOADING;
		pthread_mutex_unlock(&ec->mu);
		void *e = load(x);
		pthread_mutex_lock(&ec->mu);
		finish(ec, x, e);
	}
	while (x && x->state != READY)
		pthread_cond_wait(&ec->done, &ec->mu);
	void *e = x ? x->e : NULL;
	pthread_mutex_unlock(&ec->mu);
	return e;
}

struct gr_elf *gr_elfcache__get(struct gr_elfcache *ec, uint32_t pid,
				const struct gr_mapping *m, int *pending)
{
	if (!ec->loader) {
		if (pending)
			*pending = 0;
		return wait_for(ec, pid, m, K_ELF);
	}
	return get(ec, pid, m, K_ELF, pending);
}

struct gr_elf *gr_elfcache__wait(struct gr_elfcache *ec, uint32_t pid,
				 const struct gr_mapping *m)
{
	return wait_for(ec, pid, m, K_ELF);
}

struct gr_stubreg *gr_elfcache__get_regs(struct gr_elfcache *ec, uint32_t pid,
					 const struct gr_mapping *m,
					 int *pending)
{
	if (!ec->loader) {
		if (pending)
			*pending = 0;
		return wait_for(ec, pid, m, K_REGS);
	}
	return get(ec, pid, m, K_REGS, pending);
}

struct gr_stubreg *gr_elfcache__wait_regs(struct gr_elfcache *ec,
					  uint32_t pid,
					  const struct gr_mapping *m)
{
	return wait_for(ec, pid, m, K_REGS);
}

void gr_elfcache__usage(struct gr_elfcache *ec, struct gr_elfcache_usage *u)
{
	pthread_mutex_lock(&ec->mu);
	*u = (struct gr_elfcache_usage){
		.files = (int)ec->ents.n, .read = ec->nread,
		.bytes = ec->bytes, .evicted = ec->evicted,
	};
	pthread_mutex_unlock(&ec->mu);
}

static int cmp_used(const void *a, const void *b)
{
	const struct ent *x = *(struct ent *const *)a;
	const struct ent *y = *(struct ent *const *)b;
	return x->used < y->used ? -1 : x->used > y->used;
}

/* Forgets x, which is READY; called with mu held. */
static void evict(struct gr_elfcache *ec, struct ent *x)
{
	gr_keymap__del(&ec->ents, x->m.dev | (x->kind == K_REGS ? KIND_BIT : 0),
		       x->m.ino);
	if (x->e) {
		ec->bytes -= x->bytes;
		ec->nread--;
	}
	obj_free(x);
	free(x->m.path);
	free(x);
	ec->evicted++;
}

int gr_elfcache__trim(struct gr_elfcache *ec, uint64_t budget,
		      uint64_t *freed)
{
	int n = 0, k = 0;
	uint64_t before;
	pthread_mutex_lock(&ec->mu);
	before = ec->bytes;
	if (ec->bytes <= budget && ec->nread <= MAX_OPEN &&
	    ec->ents.n <= MAX_ENTS) {
		pthread_mutex_unlock(&ec->mu);
		if (freed)
			*freed = 0;
		return 0;
	}
	struct ent **v = malloc(ec->ents.n * sizeof(*v));
	for (size_t i = 0; v && i < ec->ents.cap; i++) {
		struct ent *x = ec->ents.e[i].v;
		if (x && x->state == READY)
			v[k++] = x;
	}
	if (v)
		qsort(v, (size_t)k, sizeof(*v), cmp_used);
	for (int i = 0; i < k && (ec->bytes > budget || ec->nread > MAX_OPEN ||
				  ec->ents.n > MAX_ENTS); i++, n++)
		evict(ec, v[i]);
	free(v);
	if (freed)
		*freed = before - ec->bytes;
	pthread_mutex_unlock(&ec->mu);
	return n;
}
