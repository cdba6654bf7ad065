/* decode.h - the proc family's pure decoders: an exec or exit record in,
 * the identity it carries out; and a process table entry in, its
 * `process` row out (recorder/row.h). */
#ifndef GR_RECORDER_PROC_DECODE_H
#define GR_RECORDER_PROC_DECODE_H

#include <stddef.h>
#include <linux/types.h>

#include "recorder/proc/proc.h"
#include "recorder/proc/ptab.h"
#include "recorder/row.h"

struct gr_proc_ev {
	int kind;		/* GR_REC_PEXEC or GR_REC_PEXIT */
	uint32_t pid, ppid;	/* ppid: exec only */
	int32_t code;		/* exit only: wait(2) status */
	int64_t ts, start_ts;	/* UTC ns */
	uint64_t cgroup_id, exe_ino; /* exec only */
	uint32_t exe_dev;
	char comm[16];		/* NUL-terminated */
	char exe[GR_EXE_BYTES];	/* exec only, as passed to execve */
	char *cmdline;		/* exec only: malloc'd, NULL if no args */
};

/* Decodes one ring-buffer record into @ev.  Returns its kind, or -1 for a
 * record of another kind or shorter than its struct (longer is taken: its
 * head is the struct). */
int gr_proc__decode(const struct gr_dctx *d, const void *rec, size_t len,
		    struct gr_proc_ev *ev);

/* NUL-separated arguments as one space-joined string (malloc'd). */
char *gr_proc__join_args(const char *a, size_t n);

/* @p's `process` row: a snapshot of what is known now. */
void gr_proc__row(const struct gr_dctx *d, const struct gr_pinfo *p,
		  struct gr_row *r);

#endif
