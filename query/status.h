/* status.h - `gpurec status`: recorder health and what data directories
 * hold. */
#ifndef GR_QUERY_STATUS_H
#define GR_QUERY_STATUS_H

#include <stdint.h>
#include <stdio.h>

/* A recorder whose status.json is older than this while it holds the
 * directory is reported "stalled" (gpurecd rewrites it every flush). */
#define GR_STATUS_STALL_NS (60 * 1000000000ll)

struct gr_status_opts {
	char *const *dirs; /* --data directories, in order given */
	int ndirs;
	int json;          /* 0: aligned text; 1: one JSON object */
	int pretty;        /* json: a member per line (json), else jsonl */
	int64_t now_ns;    /* the time ages are measured against */
	FILE *out;
};

/* Prints the status of every directory.  Returns 0; 1 with one line on
 * stderr when a directory cannot be read or holds no recording at all; 2
 * on an internal failure (out of memory, output not written). */
int gr_status__print(const struct gr_status_opts *o);

#endif
