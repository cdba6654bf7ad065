/* nccl.c - NCCL communicators per process; see nccl.h.
 *
 * A communicator is known from the call that made it: ncclCommInitRank
 * (and ...Scalable) name it by the hash of the unique id every rank was
 * given, ncclCommInitAll by the process and its first handle, and
 * ncclCommSplit by (parent, color, nth split of the parent), which every
 * rank of one color computes alike.  Collectives count in their
 * communicator's seq, so the same collective has the same seq on every
 * rank.  Handles are pointers a process may reuse once destroyed, so the
 * key is (pid, handle) and a destroy forgets it.
 */
#include <stdlib.h>
#include <string.h>

#include "recorder/cuda/nccl.h"

/* A communicator gpurecd saw made (ncclCommInit*, ncclCommSplit). */
struct ncomm {
	int64_t id;               /* comm_id */
	int32_t rank, nranks;     /* -1: unknown */
	int64_t seq;              /* collectives issued on it so far */
	uint64_t splits;          /* ncclCommSplit calls on it so far */
};

#define BIT(col) (1ull << (col))

int64_t gr_nccl__hash(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return (int64_t)(h & INT64_MAX);
}

/* Keeps handle as a communicator of pid (replacing what a reused handle
 * was). */
static struct ncomm *comm_new(struct gr_nccl *n, uint32_t pid,
			      uint64_t handle, int64_t id, int32_t rank,
			      int32_t nranks)
{
	struct ncomm *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	*m = (struct ncomm){ .id = id, .rank = rank, .nranks = nranks };
	void *old = gr_keymap__put(&n->comms, pid, handle, m);
	if (old == m) {
		free(m);
		return NULL;
	}
	free(old);
	return m;
}

void gr_nccl__forget_pid(struct gr_nccl *n, uint32_t pid)
{
	for (size_t i = 0; i < n->comms.cap;) {
		struct gr_kment *h = &n->comms.e[i];
		if (h->v && h->k1 == pid)
			free(gr_keymap__del(&n->comms, h->k1, h->k2));
		else
			i++; /* after a delete, i may hold a shifted entry */
	}
}

size_t gr_nccl__count(const struct gr_nccl *n)
{
	return n->comms.n;
}

void gr_nccl__free(struct gr_nccl *n)
{
	for (size_t i = 0; i < n->comms.cap; i++)
		free(n->comms.e[i].v);
	gr_keymap__free(&n->comms);
}

/* A call was accepted: ncclSuccess, or ncclInProgress (nonblocking). */
static int made(const struct gr_cuda_call *e)
{
	return (int32_t)e->ret == 0 || (int32_t)e->ret == 7;
}

/* ncclCommInitRank(Scalable): the unique id on the stack at entry, or the
 * first of commIds (zeros where unread), names the communicator. */
static void init_rank(struct gr_nccl *n, const struct gr_cuda_call *e,
		      const struct gr_api *a, struct gr_cuda_row *r)
{
	const __u64 *x = e->args;
	int64_t id = gr_nccl__hash(e->st, 128);
	r->v[GR_nccl_comm_id] = id;
	r->v[GR_nccl_rank] = (int32_t)x[a->rank];
	r->v[GR_nccl_nranks] = (int32_t)x[a->nranks];
	if (made(e) && e->out)
		comm_new(n, e->pid, e->out, id, (int32_t)x[a->rank],
			 (int32_t)x[a->nranks]);
}

/* ncclCommInitAll: one process, ndev communicators, named by the process
 * and the first handle; the others were read from comms[] at return. */
static void init_all(struct gr_nccl *n, const struct gr_cuda_call *e,
		     const struct gr_api *a, struct gr_cuda_row *r)
{
	int32_t ndev = (int32_t)e->args[a->nranks];
	uint64_t k[2] = { e->pid, e->out };
	int64_t id = gr_nccl__hash(k, sizeof(k));
	r->v[GR_nccl_nranks] = ndev;
	r->nm |= BIT(GR_nccl_rank);
	if (!made(e) || !e->out) {
		r->nm |= BIT(GR_nccl_comm_id);
		return;
	}
	r->v[GR_nccl_comm_id] = id;
	for (int i = 0; i < ndev && i < 16; i++) {
		uint64_t h = e->out;
		if (i)
			memcpy(&h, e->st + 8 * i, 8);
		if (h)
			comm_new(n, e->pid, h, id, i, ndev);
	}
}

/* A call on an existing communicator: it counts a collective, and a split
 * makes a child, which its row names (rank and nranks unknown).  Returns
 * the communicator the row names, or NULL. */
static struct ncomm *on_comm(struct gr_nccl *n, const struct gr_cuda_call *e,
			     const struct gr_api *a, struct gr_cuda_row *r)
{
	struct ncomm *m = gr_keymap__get(&n->comms, e->pid, e->args[a->comm]);
	if (m && a->shape == GR_SH_NCCL_COLL && made(e)) {
		/* Only issued collectives count: a call refused on one rank
		 * would shift every later seq. */
		r->v[GR_nccl_seq] = m->seq++;
		r->nm &= ~BIT(GR_nccl_seq);
	}
	if (a->shape != GR_SH_NCCL_SPLIT)
		return m;
	if (!m)
		return NULL;
	/* Every rank splits the parent in the same order: (parent, color,
	 * nth split) names the child alike on the ranks of one color. */
	int64_t k[3] = { m->id, (int32_t)e->args[1], (int64_t)m->splits++ };
	int64_t id = gr_nccl__hash(k, sizeof(k));
	if (made(e) && e->out)
		return comm_new(n, e->pid, e->out, id, -1, -1);
	return NULL;
}

void gr_nccl__track(struct gr_nccl *n, const struct gr_cuda_call *e,
		    const struct gr_api *a, struct gr_cuda_row *r)
{
	struct ncomm *m = NULL;
	switch (a->shape) {
	case GR_SH_NCCL_COLL:
	case GR_SH_NCCL_P2P:
	case GR_SH_NCCL_SPLIT:
	case GR_SH_NCCL_FINALIZE:
	case GR_SH_NCCL_END:
		m = on_comm(n, e, a, r);
		break;
	case GR_SH_NCCL_INIT:
	case GR_SH_NCCL_INIT_IDS:
		init_rank(n, e, a, r);
		return;
	case GR_SH_NCCL_INIT_ALL:
		init_all(n, e, a, r);
		return;
	}
	if (m) {
		r->v[GR_nccl_comm_id] = m->id;
		r->v[GR_nccl_rank] = m->rank;
		r->v[GR_nccl_nranks] = m->nranks;
		if (m->rank < 0)
			r->nm |= BIT(GR_nccl_rank);
		if (m->nranks < 0)
			r->nm |= BIT(GR_nccl_nranks);
	} else {
		r->nm |= BIT(GR_nccl_comm_id) | BIT(GR_nccl_rank) |
			 BIT(GR_nccl_nranks);
	}
	if (a->shape == GR_SH_NCCL_END && made(e))
		free(gr_keymap__del(&n->comms, e->pid, e->args[a->comm]));
}
