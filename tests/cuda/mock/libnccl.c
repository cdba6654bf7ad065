/* libnccl.c - a mock NCCL for gpurecd's CI test of communicator tracking
 * (tests/cuda/nccl.sh): the real entry points' names and prototypes, each
 * defined as pncclX with ncclX a weak alias at the same address, as the
 * real libnccl.so.2 exports them.  Communicators are handles to a small
 * struct; collectives succeed on a handle, and fail on NULL or a datatype
 * past the known ones, as the real library's argument checks do. */
#include <stdlib.h>

#include "mocknccl.h"

#define API __attribute__((visibility("default"), noinline))
#define ALIAS(n) \
	extern __typeof__(p##n) n __attribute__((weak, alias("p" #n), \
						 visibility("default")));

struct ncclComm {
	int nranks, rank;
};

static ncclComm_t comm_new(int nranks, int rank)
{
	ncclComm_t c = malloc(sizeof(*c));
	if (c)
		*c = (struct ncclComm){ nranks, rank };
	return c;
}

static ncclResult_t check(ncclComm_t comm, ncclDataType_t dt)
{
	return !comm || dt < 0 || dt > 11 ? 4 : 0; /* ncclInvalidArgument */
}

API ncclResult_t pncclAllReduce(const void *s, void *r, size_t n,
				ncclDataType_t dt, ncclRedOp_t op,
				ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)op, (void)st;
	return check(comm, dt);
}
ALIAS(ncclAllReduce)

API ncclResult_t pncclAllGather(const void *s, void *r, size_t n,
				ncclDataType_t dt, ncclComm_t comm,
				cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)st;
	return check(comm, dt);
}
ALIAS(ncclAllGather)

API ncclResult_t pncclReduceScatter(const void *s, void *r, size_t n,
				    ncclDataType_t dt, ncclRedOp_t op,
				    ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)op, (void)st;
	return check(comm, dt);
}
ALIAS(ncclReduceScatter)

API ncclResult_t pncclBroadcast(const void *s, void *r, size_t n,
				ncclDataType_t dt, int root, ncclComm_t comm,
				cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)root, (void)st;
	return check(comm, dt);
}
ALIAS(ncclBroadcast)

API ncclResult_t pncclReduce(const void *s, void *r, size_t n,
			     ncclDataType_t dt, ncclRedOp_t op, int root,
			     ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)op, (void)root, (void)st;
	return check(comm, dt);
}
ALIAS(ncclReduce)

API ncclResult_t pncclBcast(void *b, size_t n, ncclDataType_t dt, int root,
			    ncclComm_t comm, cudaStream_t st)
{
	(void)b, (void)n, (void)root, (void)st;
	return check(comm, dt);
}
ALIAS(ncclBcast)

API ncclResult_t pncclAlltoAll(const void *s, void *r, size_t n,
			       ncclDataType_t dt, ncclComm_t comm,
			       cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)st;
	return check(comm, dt);
}
ALIAS(ncclAlltoAll)

API ncclResult_t pncclGather(const void *s, void *r, size_t n,
			     ncclDataType_t dt, int root, ncclComm_t comm,
			     cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)root, (void)st;
	return check(comm, dt);
}
ALIAS(ncclGather)

API ncclResult_t pncclScatter(const void *s, void *r, size_t n,
			      ncclDataType_t dt, int root, ncclComm_t comm,
			      cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)root, (void)st;
	return check(comm, dt);
}
ALIAS(ncclScatter)

API ncclResult_t pncclSend(const void *s, size_t n, ncclDataType_t dt,
			   int peer, ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)n, (void)peer, (void)st;
	return check(comm, dt);
}
ALIAS(ncclSend)

API ncclResult_t pncclRecv(void *r, size_t n, ncclDataType_t dt, int peer,
			   ncclComm_t comm, cudaStream_t st)
{
	(void)r, (void)n, (void)peer, (void)st;
	return check(comm, dt);
}
ALIAS(ncclRecv)

API ncclResult_t pncclGroupStart(void) { return 0; }
ALIAS(ncclGroupStart)
API ncclResult_t pncclGroupEnd(void) { return 0; }
ALIAS(ncclGroupEnd)

API ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks,
				   ncclUniqueId id, int rank)
{
	(void)id;
	if (!comm || rank < 0 || rank >= nranks)
		return 4;
	return (*comm = comm_new(nranks, rank)) ? 0 : 1;
}
ALIAS(ncclCommInitRank)

API ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks,
					 ncclUniqueId id, int rank,
					 ncclConfig_t *config)
{
	(void)config;
	return pncclCommInitRank(comm, nranks, id, rank);
}
ALIAS(ncclCommInitRankConfig)

API ncclResult_t pncclCommInitRankScalable(ncclComm_t *comm, int nranks,
					   int rank, int nId,
					   ncclUniqueId *ids,
					   ncclConfig_t *config)
{
	(void)config;
	if (!comm || nId < 1 || !ids || rank < 0 || rank >= nranks)
		return 4;
	return (*comm = comm_new(nranks, rank)) ? 0 : 1;
}
ALIAS(ncclCommInitRankScalable)

API ncclResult_t pncclCommInitAll(ncclComm_t *comms, int ndev,
				  const int *devlist)
{
	(void)devlist;
	if (!comms || ndev < 1)
		return 4;
	for (int i = 0; i < ndev; i++)
		if (!(comms[i] = comm_new(ndev, i)))
			return 1;
	return 0;
}
ALIAS(ncclCommInitAll)

API ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key,
				ncclComm_t *newcomm, ncclConfig_t *config)
{
	(void)key, (void)config;
	if (!comm || !newcomm)
		return 4;
	*newcomm = color < 0 ? NULL : comm_new(0, 0); /* NCCL_SPLIT_NOCOLOR */
	return 0;
}
ALIAS(ncclCommSplit)

API ncclResult_t pncclCommFinalize(ncclComm_t comm) { return comm ? 0 : 4; }
ALIAS(ncclCommFinalize)

/* The handles stay allocated: the test calls a destroyed one on purpose. */
API ncclResult_t pncclCommDestroy(ncclComm_t comm) { (void)comm; return 0; }
ALIAS(ncclCommDestroy)
API ncclResult_t pncclCommAbort(ncclComm_t comm) { (void)comm; return 0; }
ALIAS(ncclCommAbort)
