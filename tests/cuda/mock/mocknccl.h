/* mocknccl.h - the slice of the NCCL ABI that the mock libnccl
 * (libnccl.c) and nccl_calls.c share.  Prototypes follow NCCL 2.28's
 * nccl.h exactly: the argument order and widths, and the 128-byte unique
 * id passed by value, are what gpurecd decodes. */
#ifndef GR_MOCKNCCL_H
#define GR_MOCKNCCL_H

#include <stddef.h>

typedef int ncclResult_t;   /* ncclSuccess 0, ncclInvalidArgument 4 */
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct ncclComm *ncclComm_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclConfig ncclConfig_t; /* opaque here: NULL is default */

#define NCCL_FNS(X) \
	X(AllReduce, (const void *sendbuff, void *recvbuff, size_t count, \
		ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, \
		cudaStream_t stream)) \
	X(AllGather, (const void *sendbuff, void *recvbuff, size_t sendcount, \
		ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)) \
	X(ReduceScatter, (const void *sendbuff, void *recvbuff, \
		size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, \
		ncclComm_t comm, cudaStream_t stream)) \
	X(Broadcast, (const void *sendbuff, void *recvbuff, size_t count, \
		ncclDataType_t datatype, int root, ncclComm_t comm, \
		cudaStream_t stream)) \
	X(Bcast, (void *buff, size_t count, ncclDataType_t datatype, int root, \
		ncclComm_t comm, cudaStream_t stream)) \
	X(Reduce, (const void *sendbuff, void *recvbuff, size_t count, \
		ncclDataType_t datatype, ncclRedOp_t op, int root, \
		ncclComm_t comm, cudaStream_t stream)) \
	X(AlltoAll, (const void *sendbuff, void *recvbuff, size_t count, \
		ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)) \
	X(Gather, (const void *sendbuff, void *recvbuff, size_t count, \
		ncclDataType_t datatype, int root, ncclComm_t comm, \
		cudaStream_t stream)) \
	X(Scatter, (const void *sendbuff, void *recvbuff, size_t count, \
		ncclDataType_t datatype, int root, ncclComm_t comm, \
		cudaStream_t stream)) \
	X(Send, (const void *sendbuff, size_t count, ncclDataType_t datatype, \
		int peer, ncclComm_t comm, cudaStream_t stream)) \
	X(Recv, (void *recvbuff, size_t count, ncclDataType_t datatype, \
		int peer, ncclComm_t comm, cudaStream_t stream)) \
	X(GroupStart, (void)) \
	X(GroupEnd, (void)) \
	X(CommInitRank, (ncclComm_t *comm, int nranks, ncclUniqueId commId, \
		int rank)) \
	X(CommInitRankConfig, (ncclComm_t *comm, int nranks, \
		ncclUniqueId commId, int rank, ncclConfig_t *config)) \
	X(CommInitRankScalable, (ncclComm_t *comm, int nranks, int myrank, \
		int nId, ncclUniqueId *commIds, ncclConfig_t *config)) \
	X(CommInitAll, (ncclComm_t *comms, int ndev, const int *devlist)) \
	X(CommSplit, (ncclComm_t comm, int color, int key, \
		ncclComm_t *newcomm, ncclConfig_t *config)) \
	X(CommFinalize, (ncclComm_t comm)) \
	X(CommDestroy, (ncclComm_t comm)) \
	X(CommAbort, (ncclComm_t comm))

#endif
