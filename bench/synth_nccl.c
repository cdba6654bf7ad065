/* synth_nccl.c - the synthetic NCCL job (see synth_nccl.h for the model
 * and the exact arithmetic tests rely on). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/synth_nccl.h"

#define MS 1000000ll
#define US 1000ll

#define INIT_SPREAD (20 * MS)   /* launcher spread of CommInitRank arrivals */
#define INIT_SETUP (250 * MS)   /* CommInitRank after the last arrival */
#define BCAST_GAP (50 * MS)
#define DESTROY_GAP (20 * MS)
#define DESTROY_DUR (1500 * US)
#define ENQ_DUR (1 * US)        /* GroupStart, Send, Recv */
#define ENQ_SPACING (2 * US)
#define ASYNC_DUR (9 * US)      /* an enqueued collective, async */
#define XFER_LATENCY (20 * US)
#define XFER_BYTES_PER_NS 50    /* 50 GB/s algorithmic bandwidth */
#define PID_BASE 48100
#define PID_STRIDE 16

enum kind { K_LIFE, K_COLL, K_ENQ, K_GROUP_END };
enum peer { P_NONE, P_ROOT, P_NEXT, P_PREV };

/* The calls of the job, each a template of a row. */
enum {
	C_INIT, C_BCAST, C_AG, C_GS, C_SEND, C_RECV, C_GE, C_RS, C_AR_BUCKET,
	C_AR_TAIL, C_AR_LOSS, C_DESTROY, NCALLS
};

static const struct call {
	const char *api, *op, *dtype, *redop;
	int64_t count;
	int elem;                       /* bytes per element */
	enum kind kind;
	enum peer peer;
} calls[NCALLS] = {
	[C_INIT] = { "ncclCommInitRank", "CommInitRank", NULL, NULL, 0, 0,
		     K_LIFE, P_NONE },
	[C_BCAST] = { "ncclBroadcast", "Broadcast", "bfloat16", NULL,
		      16777216, 2, K_COLL, P_ROOT },
	[C_AG] = { "ncclAllGather", "AllGather", "bfloat16", NULL, 4194304, 2,
		   K_COLL, P_NONE },
	[C_GS] = { "ncclGroupStart", "GroupStart", NULL, NULL, 0, 0, K_ENQ,
		   P_NONE },
	[C_SEND] = { "ncclSend", "Send", "bfloat16", NULL, 1048576, 2, K_ENQ,
		     P_NEXT },
	[C_RECV] = { "ncclRecv", "Recv", "bfloat16", NULL, 1048576, 2, K_ENQ,
		     P_PREV },
	[C_GE] = { "ncclGroupEnd", "GroupEnd", NULL, NULL, 0, 0, K_GROUP_END,
		   P_NONE },
	[C_RS] = { "ncclReduceScatter", "ReduceScatter", "bfloat16", "sum",
		   4194304, 2, K_COLL, P_NONE },
	[C_AR_BUCKET] = { "ncclAllReduce", "AllReduce", "float32", "sum",
			  6553600, 4, K_COLL, P_NONE },
	[C_AR_TAIL] = { "ncclAllReduce", "AllReduce", "float32", "sum",
			1179648, 4, K_COLL, P_NONE },
	[C_AR_LOSS] = { "ncclAllReduce", "AllReduce", "float32", "avg", 1, 4,
			K_COLL, P_NONE },
	[C_DESTROY] = { "ncclCommDestroy", "CommDestroy", NULL, NULL, 0, 0,
			K_LIFE, P_NONE },
};

/* An iteration: each synchronizing call ends a step; the enqueue-only
 * calls before it belong to its step. */
static const int iteration[] = { C_AG, C_GS, C_SEND, C_RECV, C_GE, C_RS,
				 C_AR_BUCKET, C_AR_BUCKET, C_AR_TAIL,
				 C_AR_LOSS };
#define NITER_CALLS (int)(sizeof(iteration) / sizeof(iteration[0]))
#define NSTEPS 7        /* synchronizing calls per iteration */
#define NCOLLS 6        /* of them collectives, with a seq */

struct row {
	int64_t v[GR_MAX_COLS];
	uint64_t nm;
};

struct gr_nccl_job {
	struct gr_synth *s;
	struct gr_synth_nccl o;         /* defaults applied */
	uint64_t rng;
	int64_t start_ns;
	int64_t comm_id;
	int64_t t;                      /* when the last sync call completed */
	int phase;                      /* 0 init, 1..iters, iters+1 end */
	int64_t seq;                    /* the next collective's */
	int64_t gap[NSTEPS];            /* compute before each step */
	int64_t *arr, *e;               /* per rank: arrival, earliness */
	int64_t api[NCALLS], op[NCALLS], dtype[NCALLS], redop[NCALLS];
	int64_t comm;
	struct row *rows;               /* the phase's rows, sorted */
	int nrows, next;
};

static uint64_t rnd(struct gr_nccl_job *j)
{
	j->rng ^= j->rng >> 12;
	j->rng ^= j->rng << 25;
	j->rng ^= j->rng >> 27;
	return j->rng * 2685821657736338717ull;
}

static void defaults(struct gr_synth_nccl *o)
{
	if (!o->ranks)
		o->ranks = 8;
	if (!o->host_ranks)
		o->host_ranks = o->ranks - o->rank_lo;
	if (!o->iters)
		o->iters = 100;
	if (!o->step_ns)
		o->step_ns = 1000 * MS;
	if (!o->jitter_ns)
		o->jitter_ns = 200 * US;
	else if (o->jitter_ns < 0)
		o->jitter_ns = 0;
	if (!o->late_every)
		o->late_every = 1;
}

/* nccl-tests' size of a call: the whole buffer for AllGather and
 * ReduceScatter (count is per rank), else the call's bytes. */
static int64_t size_of(const struct call *c, int nranks)
{
	int64_t bytes = c->count * c->elem;
	if (!strcmp(c->op, "AllGather") || !strcmp(c->op, "ReduceScatter"))
		return bytes * nranks;
	return bytes;
}

static int64_t xfer_ns(int call, int nranks)
{
	int c = call == C_GE ? C_SEND : call;
	return XFER_LATENCY + size_of(&calls[c], nranks) / XFER_BYTES_PER_NS;
}

/* Fills gap[] from the step time (the first takes the remainder);
 * returns the shortest gap. */
static int64_t gaps(const struct gr_synth_nccl *o, int64_t *gap)
{
	int64_t avail = o->step_ns;
	for (int i = 0; i < NITER_CALLS; i++)
		if (calls[iteration[i]].kind != K_ENQ)
			avail -= xfer_ns(iteration[i], o->ranks);
	for (int k = 0; k < NSTEPS; k++)
		gap[k] = avail / NSTEPS;
	gap[0] = avail - (NSTEPS - 1) * (avail / NSTEPS);
	return gap[1];
}

const char *gr_nccl_job__invalid(const struct gr_synth_nccl *in)
{
	static char msg[256];
	struct gr_synth_nccl o = *in;
	int64_t gap[NSTEPS];
	defaults(&o);
	if (o.ranks < 2)
		return "--nccl-ranks must be at least 2";
	if (o.rank_lo < 0 || o.host_ranks < 1 ||
	    o.rank_lo + o.host_ranks > o.ranks) {
		snprintf(msg, sizeof(msg), "--nccl-host-ranks must lie within "
			 "0-%d", o.ranks - 1);
		return msg;
	}
	if (o.late_ns > 0 && (o.late_rank < 0 || o.late_rank >= o.ranks)) {
		snprintf(msg, sizeof(msg), "--nccl-late-rank %d is not a rank "
			 "of 0-%d", o.late_rank, o.ranks - 1);
		return msg;
	}
	if (o.late_every < 1)
		return "--nccl-late-every must be at least 1";
	if (gaps(&o, gap) < o.jitter_ns + 10 * US) {
		snprintf(msg, sizeof(msg), "--nccl-step-ms %lld is too short "
			 "for the transfers and the jitter",
			 (long long)(o.step_ns / MS));
		return msg;
	}
	return NULL;
}

struct gr_nccl_job *gr_nccl_job__new(struct gr_synth *s,
				     const struct gr_synth_opts *so)
{
	struct gr_nccl_job *j;
	if (gr_nccl_job__invalid(&so->nccl)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(j = calloc(1, sizeof(*j))))
		return NULL;
	j->s = s;
	j->o = so->nccl;
	defaults(&j->o);
	gaps(&j->o, j->gap);
	/* Its own generator: the other streams' draws stay as they were. */
	j->rng = so->seed * 0x9e3779b97f4a7c15ull + 0x6e63636c6a6f62ull;
	/* comm_id: a hash of ncclUniqueId, the same on every host. */
	j->comm_id = (int64_t)(rnd(j) >> 1);
	j->start_ns = so->start_ns;
	j->arr = calloc((size_t)j->o.ranks, sizeof(*j->arr));
	j->e = calloc((size_t)j->o.ranks, sizeof(*j->e));
	j->rows = calloc((size_t)j->o.host_ranks * (NITER_CALLS + 1),
			 sizeof(*j->rows));
	if (!j->arr || !j->e || !j->rows)
		goto fail;
	for (int c = 0; c < NCALLS; c++) {
		const struct call *k = &calls[c];
		j->api[c] = gr_synth__intern(s, k->api);
		j->op[c] = gr_synth__intern(s, k->op);
		j->dtype[c] = k->dtype ? gr_synth__intern(s, k->dtype) : 0;
		j->redop[c] = k->redop ? gr_synth__intern(s, k->redop) : 0;
		if (j->api[c] < 0 || j->op[c] < 0 || j->dtype[c] < 0 ||
		    j->redop[c] < 0)
			goto fail;
	}
	if ((j->comm = gr_synth__intern(s, "pt_main_thread")) < 0)
		goto fail;
	return j;
fail:
	gr_nccl_job__free(j);
	errno = ENOMEM;
	return NULL;
}

void gr_nccl_job__free(struct gr_nccl_job *j)
{
	if (!j)
		return;
	free(j->arr);
	free(j->e);
	free(j->rows);
	free(j);
}

uint64_t gr_nccl_job__rows(const struct gr_nccl_job *j)
{
	/* Init, broadcast, destroy, and the iterations' calls. */
	return (uint64_t)j->o.host_ranks *
	       (3 + (uint64_t)j->o.iters * NITER_CALLS);
}

static int on_host(const struct gr_nccl_job *j, int r)
{
	return r >= j->o.rank_lo && r < j->o.rank_lo + j->o.host_ranks;
}

/* Appends rank r's row of call c at ts, lasting dur. */
static void emit(struct gr_nccl_job *j, int c, int r, int64_t ts,
		 int64_t dur, int64_t seq)
{
	const struct call *k = &calls[c];
	struct row *row = &j->rows[j->nrows++];
	int64_t *v = row->v;
	int n = j->o.ranks;
	uint64_t nm = 0;
	v[GR_nccl_ts] = ts;
	v[GR_nccl_pid] = v[GR_nccl_tid] = PID_BASE + PID_STRIDE * r;
	v[GR_nccl_comm] = j->comm;
	v[GR_nccl_dur] = dur;
	v[GR_nccl_api] = j->api[c];
	v[GR_nccl_op] = j->op[c];
	v[GR_nccl_count] = k->count;
	v[GR_nccl_datatype] = j->dtype[c];
	v[GR_nccl_bytes] = k->count * k->elem;
	v[GR_nccl_redop] = j->redop[c];
	v[GR_nccl_peer] = k->peer == P_ROOT ? 0 :
			  k->peer == P_NEXT ? (r + 1) % n :
			  k->peer == P_PREV ? (r + n - 1) % n : 0;
	v[GR_nccl_comm_id] = j->comm_id;
	v[GR_nccl_rank] = r;
	v[GR_nccl_nranks] = n;
	v[GR_nccl_seq] = seq;
	v[GR_nccl_stream] = 0x7f3a5c004000ll + 0x400 * r;
	v[GR_nccl_ret] = 0;
	if (!k->dtype)
		nm |= 1ull << GR_nccl_count | 1ull << GR_nccl_datatype |
		      1ull << GR_nccl_bytes | 1ull << GR_nccl_stream;
	if (!k->redop)
		nm |= 1ull << GR_nccl_redop;
	if (k->peer == P_NONE)
		nm |= 1ull << GR_nccl_peer;
	if (seq < 0)
		nm |= 1ull << GR_nccl_seq;
	/* ncclGroupStart and ncclGroupEnd take no communicator. */
	if (c == C_GS || c == C_GE)
		nm |= 1ull << GR_nccl_comm_id | 1ull << GR_nccl_rank |
		      1ull << GR_nccl_nranks;
	row->nm = nm;
}

/* One synchronizing call c (with the enqueue-only calls pre[0..npre)
 * before it), gap after the last completion; a collective takes the next
 * seq.  See synth_nccl.h for the arrival model. */
static void sync_step(struct gr_nccl_job *j, int c, int64_t gap,
		      const int *pre, int npre)
{
	const struct gr_synth_nccl *o = &j->o;
	int n = o->ranks, coll = calls[c].kind == K_COLL;
	int64_t seq = coll ? j->seq++ : -1, jit = o->jitter_ns;
	int late = coll && o->late_ns > 0 && seq % o->late_every == 0 ?
		   o->late_rank : -1;
	int64_t base = j->t + gap, last = 0;

	/* Earliness of the on-time ranks: one exactly jit, one exactly 0,
	 * the others uniform between. */
	int on = n - (late >= 0), first = 0, lastr = 0;
	if (jit) {
		first = (int)(rnd(j) % (uint64_t)on);
		lastr = on > 1 ? (int)(rnd(j) % (uint64_t)(on - 1)) : -1;
		if (lastr >= first)
			lastr++;
	}
	for (int r = 0, i = 0; r < n; r++) {
		if (r == late)
			continue;
		j->e[r] = !jit ? 0 : i == first ? jit : i == lastr ? 0 :
			  (int64_t)(rnd(j) % (uint64_t)(jit + 1));
		j->arr[r] = base - j->e[r];
		i++;
	}
	if (late >= 0)
		j->arr[late] = base - jit + o->late_ns;
	for (int r = 0; r < n; r++)
		if (!r || j->arr[r] > last)
			last = j->arr[r];
	int64_t complete = last + xfer_ns(c, n);
	for (int r = 0; r < n; r++) {
		/* Drawn for every rank, written or not: hosts agree. */
		int64_t dur = o->async ? ASYNC_DUR + (jit ? (int64_t)(rnd(j) %
					  (3 * US)) : 0) :
				       complete - j->arr[r];
		if (!on_host(j, r))
			continue;
		for (int i = 0; i < npre; i++)
			emit(j, pre[i], r, j->arr[r] - ENQ_SPACING * (npre - i),
			     ENQ_DUR, -1);
		emit(j, c, r, j->arr[r], dur, seq);
	}
	j->t = complete;
}

/* CommInitRank: blocking until every rank has joined, in either mode. */
static void init_step(struct gr_nccl_job *j)
{
	int n = j->o.ranks;
	int64_t last = 0;
	for (int r = 0; r < n; r++) {
		j->arr[r] = j->start_ns + (int64_t)(rnd(j) % INIT_SPREAD);
		if (!r || j->arr[r] > last)
			last = j->arr[r];
	}
	j->t = last + INIT_SETUP;
	for (int r = 0; r < n; r++)
		if (on_host(j, r))
			emit(j, C_INIT, r, j->arr[r], j->t - j->arr[r], -1);
}

static int by_ts(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->v[GR_nccl_ts] != y->v[GR_nccl_ts])
		return x->v[GR_nccl_ts] < y->v[GR_nccl_ts] ? -1 : 1;
	return x->v[GR_nccl_rank] < y->v[GR_nccl_rank] ? -1 :
	       x->v[GR_nccl_rank] > y->v[GR_nccl_rank];
}

/* Simulates the next phase (init and broadcast, an iteration, the end)
 * into rows[].  Returns 0 once the job is over. */
static int phase(struct gr_nccl_job *j)
{
	int p = j->phase++;
	j->nrows = j->next = 0;
	if (p == 0) {
		init_step(j);
		sync_step(j, C_BCAST, BCAST_GAP, NULL, 0);
	} else if (p <= j->o.iters) {
		int pre[NITER_CALLS], npre = 0, k = 0;
		for (int i = 0; i < NITER_CALLS; i++) {
			int c = iteration[i];
			if (calls[c].kind == K_ENQ) {
				pre[npre++] = c;
				continue;
			}
			sync_step(j, c, j->gap[k++], pre, npre);
			npre = 0;
		}
	} else if (p == j->o.iters + 1) {
		for (int r = 0; r < j->o.ranks; r++)
			if (on_host(j, r))
				emit(j, C_DESTROY, r, j->t + DESTROY_GAP,
				     DESTROY_DUR, -1);
	} else {
		return 0;
	}
	/* Rows of one phase never precede the last phase's: sorting each
	 * phase writes the host's rows in ts order. */
	qsort(j->rows, (size_t)j->nrows, sizeof(*j->rows), by_ts);
	return 1;
}

int gr_nccl_job__next(struct gr_nccl_job *j, int64_t *v, uint64_t *nm)
{
	while (j->next == j->nrows)
		if (!phase(j))
			return 0;
	const struct row *row = &j->rows[j->next++];
	memcpy(v, row->v, sizeof(row->v));
	*nm = row->nm;
	return 1;
}
