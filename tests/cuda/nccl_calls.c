/* nccl_calls.c - known NCCL calls, for tests/cuda/nccl.sh.
 *
 *   nccl_calls LIB calls        every entry point once, with known
 *                               arguments and no communicator (the real
 *                               libnccl.so.2 without a GPU refuses them,
 *                               but the calls are made)
 *   nccl_calls LIB comms RANK   communicators from a mock libnccl: rank
 *                               RANK of 2 on a known unique id, a split,
 *                               an InitAll, collectives on each
 *   nccl_calls LIB early GO     a communicator made at once, used once
 *                               the file GO exists (gpurecd started
 *                               between)
 *
 * LIB is dlopen'ed, as PyTorch loads libnccl.  Prints each call's return
 * code on a "ret" line, in call order, and in comms mode the comm_id
 * values gpurecd should derive ("id NAME VALUE"), computed here from
 * docs/recorder.md's definition. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock/mocknccl.h"

#define PTR(n, args) static ncclResult_t (*n) args;
NCCL_FNS(PTR)

static void *lib;

static void load(const char *sym, void **p)
{
	if (!(*p = dlsym(lib, sym))) {
		fprintf(stderr, "nccl_calls: %s: %s\n", sym, dlerror());
		exit(2);
	}
}

#define R(call) printf(" %d", (call))
#define S(p) ((cudaStream_t)(uintptr_t)(p))
#define B(p) ((void *)(uintptr_t)(p))

/* 64-bit FNV-1a, top bit cleared. */
static int64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return (int64_t)(h & (UINT64_MAX >> 1));
}

static ncclUniqueId known_id(int salt)
{
	ncclUniqueId id;
	for (int i = 0; i < 128; i++)
		id.internal[i] = (char)(i * 7 + salt);
	return id;
}

static void calls(void)
{
	ncclComm_t c = NULL, n = NULL, all[2] = { 0 };
	ncclUniqueId id = known_id(3);

	printf("ret");
	R(AllReduce(B(0x1000), B(0x2000), 1024, 7, 0, NULL, S(0x51)));
	R(AllGather(B(0x1000), B(0x2000), 256, 9, NULL, S(0x52)));
	R(ReduceScatter(B(0x1000), B(0x2000), 100, 8, 2, NULL, S(0x53)));
	R(Broadcast(B(0x1000), B(0x2000), 3, 0, 2, NULL, S(0x54)));
	R(Reduce(B(0x1000), B(0x2000), 10, 4, 4, 3, NULL, S(0x55)));
	R(AlltoAll(B(0x1000), B(0x2000), 7, 3, NULL, S(0x56)));
	R(Send(B(0x1000), 5, 6, 1, NULL, S(0x57)));
	R(Recv(B(0x2000), 9, 1, 0, NULL, S(0x58)));
	R(Bcast(B(0x2000), 11, 10, 1, NULL, S(0x59)));
	R(Gather(B(0x1000), B(0x2000), 2, 5, 0, NULL, S(0x5a)));
	R(Scatter(B(0x1000), B(0x2000), 4, 2, 1, NULL, S(0x5b)));
	R(AllReduce(B(0x1000), B(0x2000), 8, 11, 5, NULL, S(0x5c)));
	R(AllReduce(B(0x1000), B(0x2000), 6, 12, 1, NULL, S(0x5d)));
	R(GroupStart());
	R(GroupEnd());
	R(CommInitRank(&c, 2, id, 1));
	R(CommInitRankConfig(&c, 4, id, 3, NULL));
	R(CommInitAll(all, 2, NULL));
	R(CommSplit(NULL, 3, 0, &n, NULL));
	R(CommFinalize(NULL));
	R(CommDestroy(NULL));
	R(CommAbort(NULL));
	printf("\n");
	printf("id init %lld\n", (long long)fnv(&id, sizeof(id)));
}

static void comms(int rank)
{
	ncclComm_t c = NULL, s = NULL, none = B(1), all[3] = { 0 }, c2 = NULL,
		   c3 = NULL;
	ncclUniqueId id = known_id(3), id2 = known_id(5), id3 = known_id(9);

	printf("ret");
	R(CommInitRank(&c, 2, id, rank));
	R(AllReduce(B(0x1000), B(0x2000), 1000, 7, 0, c, S(0x11)));
	R(GroupStart());
	R(Send(B(0x1000), 64, 0, 1 - rank, c, S(0x12)));
	R(Recv(B(0x2000), 64, 0, 1 - rank, c, S(0x12)));
	R(GroupEnd());
	R(AllGather(B(0x1000), B(0x2000), 500, 9, c, S(0x13)));
	R(AllReduce(B(0x1000), B(0x2000), 1, 99, 0, c, S(0x14)));
	R(Broadcast(B(0x1000), B(0x2000), 3, 2, 0, c, S(0x15)));
	R(Reduce(B(0x1000), B(0x2000), 4, 8, 3, 1, c, S(0x16)));
	R(CommSplit(c, 5, rank, &s, NULL));
	R(AllReduce(B(0x1000), B(0x2000), 2, 4, 1, s, S(0x17)));
	R(CommSplit(c, -1, rank, &none, NULL));
	R(CommInitAll(all, 3, NULL));
	R(AllReduce(B(0x1000), B(0x2000), 5, 7, 2, all[2], S(0x18)));
	R(CommInitRankConfig(&c2, 2, id2, rank, NULL));
	R(ReduceScatter(B(0x1000), B(0x2000), 6, 7, 0, c2, S(0x19)));
	R(CommInitRankScalable(&c3, 2, rank, 1, &id3, NULL));
	R(AlltoAll(B(0x1000), B(0x2000), 7, 7, c3, S(0x1a)));
	R(CommDestroy(c));
	R(AllReduce(B(0x1000), B(0x2000), 8, 7, 0, c, S(0x1b)));
	printf("\n");
	int64_t h = fnv(&id, sizeof(id));
	int64_t k[3] = { h, 5, 0 };
	uint64_t a[2] = { (uint64_t)getpid(), (uint64_t)(uintptr_t)all[0] };
	printf("id init %lld\n", (long long)h);
	printf("id split %lld\n", (long long)fnv(k, sizeof(k)));
	printf("id all %lld\n", (long long)fnv(a, sizeof(a)));
	printf("id config %lld\n", (long long)fnv(&id2, sizeof(id2)));
	printf("id scalable %lld\n", (long long)fnv(&id3, sizeof(id3)));
}

static void early(const char *go)
{
	ncclComm_t c = NULL;

	printf("ret");
	R(CommInitRank(&c, 2, known_id(3), 0));
	fflush(stdout);
	while (access(go, F_OK) != 0)
		usleep(10000);
	R(AllReduce(B(0x1000), B(0x2000), 16, 7, 0, c, S(0x28)));
	R(CommDestroy(c));
	printf("\n");
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[2], "calls") != 0 && argc < 4)) {
		fprintf(stderr, "usage: nccl_calls LIB calls|comms RANK|early GO\n");
		return 2;
	}
	if (!(lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "nccl_calls: %s\n", dlerror());
		return 2;
	}
#define LOAD(n, args) load("nccl" #n, (void **)&n);
	NCCL_FNS(LOAD)
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[2], "calls") == 0)
		calls();
	else if (strcmp(argv[2], "early") == 0)
		early(argv[3]);
	else
		comms(atoi(argv[3]));
	return 0;
}
