/* nccl.h - the NCCL communicators each process made, followed from their
 * creation to their destruction, to give every nccl row its comm_id,
 * rank and nranks and every collective its seq (docs/recorder.md,
 * "NCCL").  No BPF: the unit tests drive it with decoded records. */
#ifndef GR_CUDA_NCCL_H
#define GR_CUDA_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/cuda/decode.h"
#include "recorder/keymap.h"

struct gr_nccl {
	struct gr_keymap comms;  /* (pid, ncclComm_t) -> struct (nccl.c) */
};

/* Completes the nccl row r that gr_cuda_decode__call made of e (api a):
 * the communicator's columns, and seq for a collective; keeps, splits or
 * forgets the communicators the call made or ended. */
void gr_nccl__track(struct gr_nccl *n, const struct gr_cuda_call *e,
		    const struct gr_api *a, struct gr_cuda_row *r);

/* Forgets every communicator of pid (it exec'd or exited). */
void gr_nccl__forget_pid(struct gr_nccl *n, uint32_t pid);

/* Communicators known, over all processes. */
size_t gr_nccl__count(const struct gr_nccl *n);

/* Frees every communicator. */
void gr_nccl__free(struct gr_nccl *n);

/* comm_id: 64-bit FNV-1a of the bytes, top bit cleared (a positive
 * INTEGER).  docs/recorder.md gives the byte layouts hashed. */
int64_t gr_nccl__hash(const void *p, size_t len);

#endif
