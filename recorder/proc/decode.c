/* decode.c - the proc family's records, and process table entries into
 * `process` rows. */
#include <stdlib.h>
#include <string.h>

#include "recorder/proc/decode.h"

char *gr_proc__join_args(const char *a, size_t n)
{
	while (n && a[n - 1] == 0)
		n--;
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = a[i] ? a[i] : ' ';
	s[n] = 0;
	return s;
}

static void decode_exec(const struct gr_dctx *d, const struct gr_pexec *e,
			struct gr_proc_ev *ev)
{
	ev->pid = e->pid;
	ev->ppid = e->ppid;
	ev->ts = gr_dctx__utc(d, e->ts);
	ev->start_ts = gr_dctx__utc(d, e->start);
	ev->cgroup_id = e->cgroup;
	ev->exe_ino = e->exe_ino;
	ev->exe_dev = e->exe_dev;
	memcpy(ev->comm, e->comm, sizeof(ev->comm));
	ev->comm[15] = 0;
	memcpy(ev->exe, e->exe, sizeof(ev->exe));
	ev->exe[sizeof(ev->exe) - 1] = 0;
	size_t n = e->args_len < GR_ARGS_BYTES ? e->args_len : GR_ARGS_BYTES;
	ev->cmdline = n ? gr_proc__join_args(e->args, n) : NULL;
}

static void decode_exit(const struct gr_dctx *d, const struct gr_pexit *e,
			struct gr_proc_ev *ev)
{
	ev->pid = e->pid;
	ev->code = e->code;
	ev->ts = gr_dctx__utc(d, e->ts);
	ev->start_ts = gr_dctx__utc(d, e->start);
	memcpy(ev->comm, e->comm, sizeof(ev->comm));
	ev->comm[15] = 0;
}

int gr_proc__decode(const struct gr_dctx *d, const void *rec, size_t len,
		    struct gr_proc_ev *ev)
{
	uint32_t kind;
	memset(ev, 0, sizeof(*ev));
	if (len < sizeof(kind))
		return -1;
	memcpy(&kind, rec, sizeof(kind));
	ev->kind = (int)kind;
	if (kind == GR_REC_PEXEC && len >= sizeof(struct gr_pexec))
		decode_exec(d, rec, ev);
	else if (kind == GR_REC_PEXIT && len >= sizeof(struct gr_pexit))
		decode_exit(d, rec, ev);
	else
		return -1;
	return (int)kind;
}

void gr_proc__row(const struct gr_dctx *d, const struct gr_pinfo *p,
		  struct gr_row *r)
{
	gr_row__init(r, GR_T_process);
	r->v[GR_process_ts] = p->first_ts;
	r->v[GR_process_pid] = p->pid;
	r->v[GR_process_tid] = p->pid;
	r->v[GR_process_comm] = gr_dctx__str(d, p->comm);
	r->v[GR_process_ppid] = p->ppid;
	if (!p->have_id)
		r->nm |= 1ull << GR_process_ppid;
#define STRCOL(col, s)                                                        \
	do {                                                                  \
		if ((s) && *(s))                                              \
			r->v[GR_process_##col] = gr_dctx__str(d, (s));        \
		else                                                          \
			r->nm |= 1ull << GR_process_##col;                    \
	} while (0)
	STRCOL(exe, p->exe);
	STRCOL(cmdline, p->cmdline);
	STRCOL(cgroup, p->cgroup);
	STRCOL(container_id, p->cid);
	STRCOL(pod_uid, p->pod);
#undef STRCOL
	if (p->start_ts)
		r->v[GR_process_start_ts] = p->start_ts;
	else
		r->nm |= 1ull << GR_process_start_ts;
	if (p->exited) {
		r->v[GR_process_exit_ts] = p->exit_ts;
		r->v[GR_process_exit_code] = p->code;
	} else {
		r->nm |= 1ull << GR_process_exit_ts |
			 1ull << GR_process_exit_code;
	}
}
