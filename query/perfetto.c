/* perfetto.c - `gpurec export --format perfetto`: the recording as one
 * Chrome/Perfetto JSON trace.
 *
 * It streams one JSON object per event in the Trace Event Format
 * (what ui.perfetto.dev, chrome://tracing and Chrome DevTools open) and
 * keeps in memory only what names the tracks, an entry per thread,
 * process and block I/O lane, and the ends of the slices open on each
 * thread.  The rest follows from the readers' rules:
 *  - Times are µs after the trace's start (its first event), written as
 *    fixed decimals with three places.  Perfetto parses the digits
 *    exactly, but DevTools parses doubles: µs since the epoch need 19
 *    digits and would lose up to 0.25 µs, enough to unnest slices, where
 *    µs since the start keep every ns for about 100 days.  The start
 *    itself goes in otherData after the events (it is known once the
 *    first is written), ns since the epoch as a string.
 *  - Every event has ph, cat, name and ts (metadata too: DevTools' trace
 *    model parses each event's categories and fails on none).
 *  - Complete ("X") events of one thread must nest, or Perfetto drops
 *    them.  A thread's calls, syscalls, off-CPU intervals and run-queue
 *    waits nearly do (a thread does one thing at a time), but different
 *    probes time them: an off-CPU interval may end after the syscall it
 *    waited in.  So the tables are read merged in ts order, the longest
 *    first at one ts, and each slice is cut to end by the end of the
 *    slice open around it (pf_nest), its recorded dur kept in args.
 *    Block requests do not nest at all: many
 *    are in flight at once, and a request outlives the syscall that issued
 *    it.  They go on lanes (pseudo-threads) of their process or, with no
 *    process (writeback, readahead), of a "block devices" process per
 *    host, lanes per device; a request takes the first lane free at its
 *    start, so there are as many lanes as requests were at most in flight.
 *  - cuda_api holds every CUDA call, so it adds only the calls that no
 *    other exported cuda_* table holds (each API belongs to one table):
 *    no call is drawn twice.
 *  - pids are one number space.  Host i (hosts in name order, from 0)
 *    shows pid p and tid t as i * 10,000,000 + p and + t; pseudo-threads
 *    and the block devices process take numbers from 2^22 up within their
 *    host's space (PID_MAX_LIMIT: no real pid or tid reaches it).
 *  - Names are metadata ("M") events after the events: a thread's last
 *    comm; a process's comm from the process table, else its main
 *    thread's, else that of any thread of it.  The process table gives
 *    names only, no events.
 *  - drops rows are global instant events: lost data shows on one track.
 */
#include "query/perfetto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hmap.h"
#include "common/version.h"
#include "common/vec.h"
#include "query/cli.h"
#include "query/output.h"

#define PF_PSEUDO (1 << 22)		/* PID_MAX_LIMIT */
#define PF_HOST_STRIDE 10000000		/* one host's pid space */

/* Replaces *@name by a copy of @s unless it already says that.  Returns
 * 0 or -ENOMEM. */
static int pf_set_name(char **name, const char *s)
{
	char *copy;

	if (*name && strcmp(*name, s) == 0)
		return 0;
	if (!(copy = strdup(s)))
		return -ENOMEM;
	free(*name);
	*name = copy;
	return 0;
}

struct pf_host {
	char *name;
	int64_t next_lane;	/* tid the next lane of this host gets */
};

/* A track: a thread, or a lane of block requests. */
struct pf_thread {
	int64_t pid, tid;	/* as written: the host's offset applied */
	char *name;		/* the thread's last comm, or the lane's */
	uint32_t proc;		/* index of its process */
	GR_VEC(int64_t) open;	/* ends of the slices open, outermost first */
};

struct pf_proc {
	int64_t pid;		/* as written */
	int host;
	char *table_name;	/* comm from the process table */
	char *main_comm;	/* last comm of its thread tid == pid */
	char *any_comm;		/* first comm of any of its threads */
	int used;		/* it has a track */
};

struct pf_lane {
	int64_t end;		/* when its last request completed */
	uint32_t thread;
};

/* The lanes of one process's block requests, or of one device's
 * requests that no process issued. */
struct pf_group {
	uint32_t proc;		/* the process the lanes are tracks of */
	char *label;		/* "block I/O", or the device */
	GR_VEC(struct pf_lane) lanes;
};

/* Where a table's columns are, in SELECT * order, and what names and
 * describes its events. */
struct pf_cols {
	int ts, host, pid, tid, comm, dur;
	int name[3], nname;	/* the first not NULL names an event */
	const char *prefix;	/* put before that name */
	int args[GR_MAX_COLS], nargs;
};

/* State of one perfetto export.  The maps hold an index + 1 into the
 * vectors; their keys are two 32-bit halves (pf_key2), so a pid or tid as
 * read, any int64, is first interned into a 32-bit id (pf_intern). */
struct pf {
	FILE *f;
	struct gr_export_progress *prog; /* rows counted, tables done */
	uint64_t nevents;	/* events written so far */
	int64_t start;		/* ts of the first event: times are after it */
	int started;		/* the first event is written */
	GR_VEC(struct pf_host) hosts;
	int last_host;		/* index of the host last looked up, or -1 */
	struct gr_hmap ids;	/* pid or tid as read -> id + 1 */
	uint32_t nids;
	struct gr_hmap proc_map;   /* (host, pid id) -> procs */
	struct gr_hmap thread_map; /* (proc, tid id) -> threads */
	struct gr_hmap group_map;  /* proc, or (host + 1, dev) -> groups */
	GR_VEC(struct pf_proc) procs;
	GR_VEC(struct pf_thread) threads;
	GR_VEC(struct pf_group) groups;
	GR_VEC(char *) devs;	/* devices of unattributed block requests */
	int64_t last_key[3];	/* the thread of the last event ... */
	uint32_t last_thread;	/* ... and its index + 1 (0: none) */
};

static uint64_t pf_key2(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

/* Returns the index + 1 that @key maps to in @m, 0 if none. */
static uint32_t pf_map_get(const struct gr_hmap *m, uint64_t key)
{
	return (uint32_t)(uintptr_t)gr_hmap__get(m, key);
}

/* Maps @key to index @i of a vector.  Returns 0 or -ENOMEM. */
static int pf_map_put(struct gr_hmap *m, uint64_t key, uint32_t i)
{
	return gr_hmap__put(m, key, (void *)(uintptr_t)(i + 1));
}

/* Sets *@id to the id of pid or tid @v, the next one if new.  Returns 0
 * or -ENOMEM. */
static int pf_intern(struct pf *p, int64_t v, uint32_t *id)
{
	uint32_t i = pf_map_get(&p->ids, (uint64_t)v);

	if (!i) {
		if (p->nids == UINT32_MAX - 1 ||
		    pf_map_put(&p->ids, (uint64_t)v, p->nids))
			return -ENOMEM;
		i = ++p->nids;
	}
	*id = i - 1;
	return 0;
}

static int64_t pf_base(int host)
{
	return (int64_t)host * PF_HOST_STRIDE;
}

/* Returns the index of host @name, added if new, or -ENOMEM. */
static int pf_host(struct pf *p, const char *name)
{
	struct pf_host *h;

	if (p->last_host >= 0 &&
	    strcmp(p->hosts.v[p->last_host].name, name) == 0)
		return p->last_host;
	for (uint32_t i = 0; i < p->hosts.n; i++)
		if (strcmp(p->hosts.v[i].name, name) == 0)
			return p->last_host = (int)i;
	if (!(h = gr_vec__push(&p->hosts)))
		return -ENOMEM;
	if (!(h->name = strdup(name))) {
		p->hosts.n--;
		return -ENOMEM;
	}
	h->next_lane = pf_base((int)p->hosts.n - 1) + PF_PSEUDO + 1;
	return p->last_host = (int)p->hosts.n - 1;
}

/* Sets *@out to the index of process @pid of host @h, added if new.
 * Returns 0 or -ENOMEM. */
static int pf_proc(struct pf *p, int h, int64_t pid, uint32_t *out)
{
	struct pf_proc *pr;
	uint32_t id, v;

	if (pf_intern(p, pid, &id))
		return -ENOMEM;
	v = pf_map_get(&p->proc_map, pf_key2((uint32_t)h, id));
	if (!v) {
		if (!(pr = gr_vec__push(&p->procs)))
			return -ENOMEM;
		pr->pid = pf_base(h) + pid;
		pr->host = h;
		v = p->procs.n;
		if (pf_map_put(&p->proc_map, pf_key2((uint32_t)h, id), v - 1))
			return -ENOMEM;
	}
	*out = v - 1;
	return 0;
}

/* Appends a track to process @proc.  Returns its index, or -ENOMEM. */
static int64_t pf_new_thread(struct pf *p, uint32_t proc, int64_t tid)
{
	struct pf_thread *th;

	if (!(th = gr_vec__push(&p->threads)))
		return -ENOMEM;
	th->pid = p->procs.v[proc].pid;
	th->tid = tid;
	th->proc = proc;
	p->procs.v[proc].used = 1;
	return p->threads.n - 1;
}

/* Notes that a thread of process @proc (its main thread if @is_main) is
 * called @comm.  Returns 0 or -ENOMEM. */
static int pf_proc_comm(struct pf *p, uint32_t proc, int is_main,
			const char *comm)
{
	struct pf_proc *pr = &p->procs.v[proc];

	if (!pr->any_comm && !(pr->any_comm = strdup(comm)))
		return -ENOMEM;
	if (is_main && pf_set_name(&pr->main_comm, comm))
		return -ENOMEM;
	return 0;
}

/* Sets p->last_thread to the track of thread @tid of process @pid on
 * host @h, added if new.  Returns 0 or -ENOMEM. */
static int pf_find_thread(struct pf *p, int h, int64_t pid, int64_t tid)
{
	uint32_t proc, id, v;

	if (pf_proc(p, h, pid, &proc) || pf_intern(p, tid, &id))
		return -ENOMEM;
	v = pf_map_get(&p->thread_map, pf_key2(proc, id));
	if (!v) {
		int64_t i = pf_new_thread(p, proc, pf_base(h) + tid);

		if (i < 0 || pf_map_put(&p->thread_map, pf_key2(proc, id),
					(uint32_t)i))
			return -ENOMEM;
		v = (uint32_t)i + 1;
	}
	p->last_key[0] = h;
	p->last_key[1] = pid;
	p->last_key[2] = tid;
	p->last_thread = v;
	return 0;
}

/* Sets *@out to the track of thread @tid of process @pid on host @h,
 * named @comm (NULL: unknown).  Returns 0 or -ENOMEM. */
static int pf_thread(struct pf *p, int h, int64_t pid, int64_t tid,
		     const char *comm, uint32_t *out)
{
	if (!(p->last_thread && p->last_key[0] == h && p->last_key[1] == pid &&
	      p->last_key[2] == tid) && pf_find_thread(p, h, pid, tid))
		return -ENOMEM;
	*out = p->last_thread - 1;
	if (!comm)
		return 0;
	if (pf_set_name(&p->threads.v[*out].name, comm))
		return -ENOMEM;
	return pf_proc_comm(p, p->threads.v[*out].proc, tid == pid, comm);
}

/* Returns the index of device @dev (NULL: unknown), added if new, or
 * -ENOMEM. */
static int64_t pf_dev(struct pf *p, const char *dev)
{
	char **d;

	if (!dev)
		dev = "unknown device";
	for (uint32_t i = 0; i < p->devs.n; i++)
		if (strcmp(p->devs.v[i], dev) == 0)
			return i;
	if (!(d = gr_vec__push(&p->devs)))
		return -ENOMEM;
	if (!(*d = strdup(dev))) {
		p->devs.n--;
		return -ENOMEM;
	}
	return p->devs.n - 1;
}

/* Sets *@out to the group of block-request lanes of process *@pid of
 * host @h, or of device @dev when @pid is NULL, added if new.  Returns 0
 * or -ENOMEM. */
static int pf_group(struct pf *p, int h, const int64_t *pid, const char *dev,
		    uint32_t *out)
{
	int64_t d = pid ? 0 : pf_dev(p, dev);
	uint32_t proc, v;
	uint64_t key;
	struct pf_group *g;

	if (d < 0 || pf_proc(p, h, pid ? *pid : PF_PSEUDO, &proc))
		return -ENOMEM;
	/* A process's lanes: its index (high half 0); a device's: the
	 * host + 1 in the high half. */
	key = pid ? proc : pf_key2((uint32_t)h + 1, (uint32_t)d);
	if ((v = pf_map_get(&p->group_map, key))) {
		*out = v - 1;
		return 0;
	}
	if (!(g = gr_vec__push(&p->groups)))
		return -ENOMEM;
	g->proc = proc;
	g->label = strdup(pid ? "block I/O" : p->devs.v[d]);
	if (!g->label || (!pid && pf_set_name(
			&p->procs.v[proc].table_name, "block devices")))
		return -ENOMEM;
	*out = p->groups.n - 1;
	return pf_map_put(&p->group_map, key, *out);
}

/* Sets *@out to the track of a block request [@ts, @end) of host @h:
 * a lane of process *@pid, or of device @dev when @pid is NULL.  Returns
 * 0 or -ENOMEM. */
static int pf_lane(struct pf *p, int h, const int64_t *pid, const char *dev,
		   int64_t ts, int64_t end, uint32_t *out)
{
	struct pf_group *g;
	struct pf_lane *l;
	uint32_t gi, i;

	if (pf_group(p, h, pid, dev, &gi))
		return -ENOMEM;
	g = &p->groups.v[gi];
	for (i = 0; i < g->lanes.n && g->lanes.v[i].end > ts; i++)
		;
	if (i == g->lanes.n) {
		int64_t t = pf_new_thread(p, g->proc,
					  p->hosts.v[h].next_lane++);
		char *name;

		if (t < 0 || !(l = gr_vec__push(&g->lanes)))
			return -ENOMEM;
		if (i == 0)
			name = strdup(g->label);
		else if (asprintf(&name, "%s (%u)", g->label, i + 1) < 0)
			name = NULL;
		if (!name)
			return -ENOMEM;
		p->threads.v[t].name = name;
		l->thread = (uint32_t)t;
	}
	g->lanes.v[i].end = end;
	*out = g->lanes.v[i].thread;
	return 0;
}

/* Writes the body of a JSON string: ill-formed UTF-8 as U+FFFD, control
 * characters and DEL escaped (Perfetto's reader refuses them raw, DEL
 * included). */
static void pf_str_body(FILE *f, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, start = 0;

	while (i < n) {
		unsigned char c = s[i];
		const char *esc;
		char u[7];
		size_t k = 1;
		uint32_t cp;

		if (c >= 0x80) {
			k = gr_output__utf8_next(s + i, n - i, &cp);
			if (cp != GR_UTF8_BAD) {
				i += k;
				continue;
			}
			esc = "\xef\xbf\xbd";
		} else if (c == '"') {
			esc = "\\\"";
		} else if (c == '\\') {
			esc = "\\\\";
		} else if (c == '\n') {
			esc = "\\n";
		} else if (c == '\r') {
			esc = "\\r";
		} else if (c == '\t') {
			esc = "\\t";
		} else if (c == '\b') {
			esc = "\\b";
		} else if (c == '\f') {
			esc = "\\f";
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(u, "\\u00", 4);
			u[4] = hex[c >> 4];
			u[5] = hex[c & 0xf];
			u[6] = 0;
			esc = u;
		} else {
			i++;
			continue;
		}
		fwrite_unlocked(s + start, 1, i - start, f);
		fputs_unlocked(esc, f);
		i += k;
		start = i;
	}
	fwrite_unlocked(s + start, 1, n - start, f);
}

static void pf_str(FILE *f, const char *s)
{
	putc_unlocked('"', f);
	pf_str_body(f, (const unsigned char *)s, strlen(s));
	putc_unlocked('"', f);
}

static void pf_int(FILE *f, int64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof(b), "%" PRId64, v);

	fwrite_unlocked(b, 1, (size_t)n, f);
}

/* Writes @ns as µs with three decimals: every nanosecond kept. */
static void pf_us(FILE *f, int64_t ns)
{
	uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char b[32];
	int n = snprintf(b, sizeof(b), "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "",
			 u / 1000, (unsigned)(u % 1000));

	fwrite_unlocked(b, 1, (size_t)n, f);
}

/* Starts the next event: its separator and phase. */
static void pf_begin(struct pf *p, const char *ph)
{
	fputs_unlocked(p->nevents++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"", p->f);
	fputs_unlocked(ph, p->f);
	putc_unlocked('"', p->f);
}

static void pf_key(FILE *f, const char *key)
{
	putc_unlocked(',', f);
	pf_str(f, key);
	putc_unlocked(':', f);
}

/* Writes the event's "name": the prefix and the first naming column
 * that is not NULL, else the table's name. */
static void pf_name(struct pf *p, sqlite3_stmt *st, const struct pf_cols *c,
		    const char *table)
{
	pf_key(p->f, "name");
	for (int i = 0; i < c->nname; i++) {
		const unsigned char *s = sqlite3_column_text(st, c->name[i]);

		if (!s)
			continue;
		putc_unlocked('"', p->f);
		fputs_unlocked(c->prefix, p->f);
		pf_str_body(p->f, s, (size_t)sqlite3_column_bytes(st,
								  c->name[i]));
		putc_unlocked('"', p->f);
		return;
	}
	pf_str(p->f, table);
}

/* Writes "args": the event's columns that are not NULL, and the
 * recorded duration in ns as recorded_dur when the slice was cut to
 * nest (@recorded >= 0). */
static void pf_args(struct pf *p, sqlite3_stmt *st, const struct pf_cols *c,
		    int64_t recorded)
{
	static const char hex[] = "0123456789abcdef";
	FILE *f = p->f;
	int first = 1;

	fputs_unlocked(",\"args\":{", f);
	for (int i = 0; i < c->nargs; i++) {
		int col = c->args[i], type = sqlite3_column_type(st, col);
		const unsigned char *s;
		int n;

		if (type == SQLITE_NULL)
			continue;
		if (!first)
			putc_unlocked(',', f);
		first = 0;
		pf_str(f, sqlite3_column_name(st, col));
		putc_unlocked(':', f);
		switch (type) {
		case SQLITE_INTEGER:
			pf_int(f, sqlite3_column_int64(st, col));
			break;
		case SQLITE_BLOB:
			s = sqlite3_column_blob(st, col);
			n = sqlite3_column_bytes(st, col);
			putc_unlocked('"', f);
			for (int j = 0; j < n; j++) {
				putc_unlocked(hex[s[j] >> 4], f);
				putc_unlocked(hex[s[j] & 0xf], f);
			}
			putc_unlocked('"', f);
			break;
		default:	/* text; no column is REAL */
			s = sqlite3_column_text(st, col);
			putc_unlocked('"', f);
			if (s)
				pf_str_body(f, s, (size_t)sqlite3_column_bytes(
						   st, col));
			putc_unlocked('"', f);
			break;
		}
	}
	if (recorded >= 0) {
		fputs_unlocked(first ? "\"recorded_dur\":" :
			       ",\"recorded_dur\":", f);
		pf_int(f, recorded);
	}
	fputs_unlocked("}}", f);
}

/* Finds table @t's columns.  On lanes (@lanes), pid, tid and comm are
 * arguments: the track is not the thread. */
static void pf_cols(const struct gr_table *tab, int lanes, int multihost,
		    struct pf_cols *c)
{
	/* Named as tables.def's GR_LABEL says: the prefix, then the first
	 * of the columns that is not NULL; a table without one by api. */
	static const char *const api[3] = { "api" };
	const char *const *cols = tab->label.set ? tab->label.cols : api;

	memset(c, 0, sizeof(*c));
	c->ts = gr_table__col(tab, "ts");
	c->host = gr_table__col(tab, "host");
	c->pid = gr_table__col(tab, "pid");
	c->tid = gr_table__col(tab, "tid");
	c->comm = gr_table__col(tab, "comm");
	c->dur = gr_table__col(tab, "dur");
	c->prefix = tab->label.set ? tab->label.prefix : "";
	for (int i = 0; i < 3 && cols[i]; i++)
		if ((c->name[c->nname] = gr_table__col(tab, cols[i])) >= 0)
			c->nname++;
	for (int i = 0; i < tab->ncols; i++) {
		if (i == c->ts || i == c->dur ||
		    (i == c->host && !multihost) ||
		    ((i == c->pid || i == c->tid || i == c->comm) && !lanes))
			continue;
		c->args[c->nargs++] = i;
	}
}

static int64_t col_int(sqlite3_stmt *st, int col, int64_t dflt)
{
	if (col < 0 || sqlite3_column_type(st, col) == SQLITE_NULL)
		return dflt;
	return sqlite3_column_int64(st, col);
}

static const char *col_text(sqlite3_stmt *st, int col)
{
	return col < 0 ? NULL : (const char *)sqlite3_column_text(st, col);
}

/* Fits the slice [@ts, @ts + *@dur) of track @th into the slices open
 * on it (rows come in ts order, the longest first at one ts): those
 * that ended by @ts are closed, and one still open that ends before the
 * slice does cuts the slice at its own end, so that every slice nests in
 * the one it starts in.  That happens when a call and the off-CPU
 * interval in it are timed by different probes (an `offcpu D` ending
 * microseconds after the pwrite64 it waited in).  Returns 1 when it cut
 * *@dur, 0 when not, -ENOMEM. */
static int pf_nest(struct pf_thread *th, int64_t ts, int64_t *dur)
{
	int cut = 0;
	int64_t *end;

	while (th->open.n && th->open.v[th->open.n - 1] <= ts)
		th->open.n--;
	if (th->open.n && ts + *dur > th->open.v[th->open.n - 1]) {
		*dur = th->open.v[th->open.n - 1] - ts;
		cut = 1;
	}
	if (!(end = gr_vec__push(&th->open)))
		return -ENOMEM;
	*end = ts + *dur;
	return cut;
}

/* Writes one row of table @tab as an event.  Returns 0 or -ENOMEM. */
static int pf_row(struct pf *p, sqlite3_stmt *st, const struct gr_table *tab,
		  const struct pf_cols *c)
{
	const char *host = col_text(st, c->host);
	int h = pf_host(p, host ? host : "");
	int64_t ts = col_int(st, c->ts, 0), dur = col_int(st, c->dur, 0);
	int64_t pid = col_int(st, c->pid, 0);
	int has_pid = c->pid >= 0 &&
		      sqlite3_column_type(st, c->pid) != SQLITE_NULL;
	int64_t recorded = -1;
	uint32_t t;
	int rc;

	if (h < 0)
		return -ENOMEM;
	/* Rows come in ts order: the first is the trace's start. */
	if (!p->started) {
		p->start = ts;
		p->started = 1;
	}
	if (strcmp(tab->name, "drops") == 0) {
		/* Lost data is no thread's: a global instant. */
		pf_begin(p, "i");
		fputs_unlocked(",\"s\":\"g\",\"cat\":\"drops\"", p->f);
		pf_name(p, st, c, tab->name);
		pf_key(p->f, "ts");
		pf_us(p->f, ts - p->start);
		pf_args(p, st, c, -1);
		return 0;
	}
	if (strcmp(tab->name, "block_io") == 0) {
		const char *comm = col_text(st, c->comm);

		rc = pf_lane(p, h, has_pid ? &pid : NULL,
			     col_text(st, gr_table__col(tab, "dev")), ts,
			     ts + dur, &t);
		/* The issuer names the process, if no thread of it does. */
		if (!rc && has_pid && comm)
			rc = pf_proc_comm(p, p->threads.v[t].proc,
					  col_int(st, c->tid, -1) == pid, comm);
	} else {
		rc = pf_thread(p, h, pid, col_int(st, c->tid, pid),
			       col_text(st, c->comm), &t);
		if (!rc)
			rc = pf_nest(&p->threads.v[t], ts, &dur);
		if (rc == 1) {
			recorded = col_int(st, c->dur, 0);
			rc = 0;
		}
	}
	if (rc)
		return rc;
	pf_begin(p, "X");
	pf_key(p->f, "cat");
	pf_str(p->f, tab->name);
	pf_name(p, st, c, tab->name);
	pf_key(p->f, "pid");
	pf_int(p->f, p->threads.v[t].pid);
	pf_key(p->f, "tid");
	pf_int(p->f, p->threads.v[t].tid);
	pf_key(p->f, "ts");
	pf_us(p->f, ts - p->start);
	pf_key(p->f, "dur");
	pf_us(p->f, dur);
	pf_args(p, st, c, recorded);
	return 0;
}

/* Whether table @t is one of those cuda_api is the union of. */
static int cuda_member(int t)
{
	return (gr_tables[t].flags & GR_TF_EVENT) &&
	       !(gr_tables[t].flags & GR_TF_UNION_CUDA) &&
	       (gr_tables[t].flags & GR_TF_CUDA_CALL);
}

/* Returns the malloc'd (sqlite3) query that reads table @t's events. */
static char *pf_query(const struct gr_export *x, sqlite3 *db, int t)
{
	sqlite3_str *s = sqlite3_str_new(db);
	int n = 0;

	sqlite3_str_appendf(s, "SELECT * FROM main.\"%w\"", gr_tables[t].name);
	for (int i = 0; (gr_tables[t].flags & GR_TF_UNION_CUDA) &&
			i < x->ntables; i++) {
		if (!cuda_member(x->tables[i]))
			continue;
		sqlite3_str_appendf(s, "%sSELECT api FROM main.\"%w\" WHERE "
				    "api IS NOT NULL", n++ ? " UNION ALL " :
				    " WHERE api IS NULL OR api NOT IN (",
				    gr_tables[x->tables[i]].name);
	}
	if (n)
		sqlite3_str_appendall(s, ")");
	/* In time order, the longest first at one time: an enclosing slice
	 * comes before those it holds (pf_nest), a block request finds the
	 * lanes free at its start. */
	sqlite3_str_appendall(s, gr_table__col(&gr_tables[t], "dur") >= 0 ?
			      " ORDER BY ts, dur DESC" : " ORDER BY ts");
	return sqlite3_str_finish(s);
}

/* A host of the recording (SELECT DISTINCT host FROM segments). */
static int pf_host_row(struct pf *p, sqlite3_stmt *st,
		       const struct gr_table *tab, const struct pf_cols *c)
{
	const char *host = col_text(st, 0);

	return pf_host(p, host ? host : "") < 0 ? -ENOMEM : 0;
}

/* A process's name (SELECT host, pid, comm FROM process): the last
 * wins. */
static int pf_name_row(struct pf *p, sqlite3_stmt *st,
		       const struct gr_table *tab, const struct pf_cols *c)
{
	const char *host = col_text(st, 0), *comm = col_text(st, 2);
	int h = pf_host(p, host ? host : "");
	uint32_t pr;

	if (!comm)
		return 0;
	if (h < 0 || pf_proc(p, h, sqlite3_column_int64(st, 1), &pr))
		return -ENOMEM;
	return pf_set_name(&p->procs.v[pr].table_name, comm);
}

typedef int pf_row_fn(struct pf *p, sqlite3_stmt *st,
		      const struct gr_table *tab, const struct pf_cols *c);

/* Runs @sql (sqlite3_free'd here), calling @row for each row.  Returns
 * 0, or 2 with @err set. */
static int pf_scan(struct pf *p, sqlite3 *db, char *sql, pf_row_fn *row,
		   const struct gr_table *tab, const struct pf_cols *c,
		   char *err, size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (!sql)
		return gr_cli__fail(err, len, EXIT_INTERNAL, "out of memory");
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (row(p, st, tab, c)) {
			sqlite3_finalize(st);
			return gr_cli__fail(err, len, EXIT_INTERNAL, "out of memory");
		}
		/* Stop early when the disk is full. */
		if ((p->nevents & 0xffff) == 0 && ferror(p->f))
			break;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
		rc = gr_cli__fail(err, len, EXIT_INTERNAL, "reading %s: %s", tab->name,
				  sqlite3_errmsg(db));
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

/* Writes the names: a process_name per process with a track, a
 * thread_name per track. */
static void pf_names(struct pf *p)
{
	FILE *f = p->f;

	for (uint32_t i = 0; i < p->procs.n; i++) {
		struct pf_proc *pr = &p->procs.v[i];
		const char *name = pr->table_name ? pr->table_name :
				   pr->main_comm ? pr->main_comm : pr->any_comm;

		if (!pr->used)
			continue;
		pf_begin(p, "M");
		fputs_unlocked(",\"cat\":\"__metadata\",\"name\":"
			       "\"process_name\",\"ts\":0,\"pid\":", f);
		pf_int(f, pr->pid);
		fputs_unlocked(",\"args\":{\"name\":\"", f);
		if (name)
			pf_str_body(f, (const unsigned char *)name,
				    strlen(name));
		else
			pf_int(f, pr->pid);
		if (p->hosts.n > 1) {
			fputs_unlocked(" (", f);
			pf_str_body(f, (const unsigned char *)
				    p->hosts.v[pr->host].name,
				    strlen(p->hosts.v[pr->host].name));
			putc_unlocked(')', f);
		}
		fputs_unlocked("\"}}", f);
	}
	for (uint32_t i = 0; i < p->threads.n; i++) {
		struct pf_thread *th = &p->threads.v[i];

		pf_begin(p, "M");
		fputs_unlocked(",\"cat\":\"__metadata\",\"name\":"
			       "\"thread_name\",\"ts\":0,\"pid\":", f);
		pf_int(f, th->pid);
		pf_key(f, "tid");
		pf_int(f, th->tid);
		fputs_unlocked(",\"args\":{\"name\":\"", f);
		if (th->name)
			pf_str_body(f, (const unsigned char *)th->name,
				    strlen(th->name));
		else
			pf_int(f, th->tid);
		fputs_unlocked("\"}}", f);
	}
}

static void pf_free(struct pf *p)
{
	for (uint32_t i = 0; i < p->hosts.n; i++)
		free(p->hosts.v[i].name);
	for (uint32_t i = 0; i < p->procs.n; i++) {
		free(p->procs.v[i].table_name);
		free(p->procs.v[i].main_comm);
		free(p->procs.v[i].any_comm);
	}
	for (uint32_t i = 0; i < p->threads.n; i++) {
		free(p->threads.v[i].name);
		gr_vec__free(&p->threads.v[i].open);
	}
	for (uint32_t i = 0; i < p->groups.n; i++) {
		free(p->groups.v[i].label);
		gr_vec__free(&p->groups.v[i].lanes);
	}
	for (uint32_t i = 0; i < p->devs.n; i++)
		free(p->devs.v[i]);
	gr_vec__free(&p->hosts);
	gr_vec__free(&p->procs);
	gr_vec__free(&p->threads);
	gr_vec__free(&p->groups);
	gr_vec__free(&p->devs);
	gr_hmap__free(&p->ids);
	gr_hmap__free(&p->proc_map);
	gr_hmap__free(&p->thread_map);
	gr_hmap__free(&p->group_map);
}

/* One table being read: its statement and the row it is at. */
struct pf_src {
	sqlite3_stmt *st;
	const struct gr_table *tab;
	struct pf_cols c;
	int64_t ts, dur;	/* the current row's */
	int live;		/* a row is current */
};

/* Steps @s to its next row.  Returns 0, or 2 with @err set. */
static int pf_src_step(struct pf *p, struct pf_src *s, sqlite3 *db,
		       char *err, size_t len)
{
	int rc = sqlite3_step(s->st);

	if (rc == SQLITE_ROW) {
		s->ts = col_int(s->st, s->c.ts, 0);
		s->dur = col_int(s->st, s->c.dur, 0);
		return 0;
	}
	s->live = 0;
	p->prog->tables_done++;
	if (rc == SQLITE_DONE)
		return 0;
	return gr_cli__fail(err, len, EXIT_INTERNAL, "reading %s: %s",
			    s->tab->name, sqlite3_errmsg(db));
}

/* Writes the events of every table but process, merged in time order
 * (the longest first at one time): each thread's slices then arrive in
 * the order pf_nest() needs, whatever table they come from, and the
 * first is the trace's start.  Returns 0, or 2 with @err set. */
static int pf_events(const struct gr_export *x, struct pf *p, sqlite3 *db,
		     char *err, size_t len)
{
	struct pf_src src[GR_NTABLES];
	int n = 0, rc = 0;

	memset(src, 0, sizeof(src));
	for (int i = 0; i < x->ntables && rc == 0; i++) {
		struct pf_src *s = &src[n];
		char *sql;

		if (x->tables[i] == GR_T_process) {
			p->prog->tables_done++;
			continue;	/* names only */
		}
		s->tab = &gr_tables[x->tables[i]];
		pf_cols(s->tab, x->tables[i] == GR_T_block_io, p->hosts.n > 1,
			&s->c);
		if (!(sql = pf_query(x, db, x->tables[i])))
			return gr_cli__fail(err, len, EXIT_INTERNAL,
					    "out of memory");
		if (sqlite3_prepare_v2(db, sql, -1, &s->st, NULL) != SQLITE_OK)
			rc = gr_cli__fail(err, len, EXIT_INTERNAL, "reading %s: %s",
					  s->tab->name, sqlite3_errmsg(db));
		sqlite3_free(sql);
		n++;
		s->live = 1;
		if (rc == 0)
			rc = pf_src_step(p, s, db, err, len);
	}
	while (rc == 0) {
		struct pf_src *best = NULL;

		for (int i = 0; i < n; i++)
			if (src[i].live && (!best || src[i].ts < best->ts ||
					    (src[i].ts == best->ts &&
					     src[i].dur > best->dur)))
				best = &src[i];
		if (!best)
			break;
		if (pf_row(p, best->st, best->tab, &best->c)) {
			rc = gr_cli__fail(err, len, EXIT_INTERNAL,
					  "out of memory");
			break;
		}
		gr_export__row(p->prog);
		/* Stop early when the disk is full. */
		if ((p->nevents & 0xffff) == 0 && ferror(p->f))
			break;
		rc = pf_src_step(p, best, db, err, len);
	}
	for (int i = 0; i < n; i++)
		sqlite3_finalize(src[i].st);
	return rc;
}

/* Writes what the trace is of, after its events (the start is known
 * once the first is written): the absolute time its ts count from, as
 * ns since the epoch (a string: a JSON number as a double would lose the
 * last digits) and as ISO 8601, and the version that wrote it. */
static void pf_other(struct pf *p)
{
	char iso[40], ns[24];

	gr_export__iso(iso, sizeof(iso), p->start);
	snprintf(ns, sizeof(ns), "%" PRId64, p->start);
	fputs_unlocked("\n],\"otherData\":{\"generator\":\"gpurec "
		       GPUREC_VERSION "\",\"start_ns\":\"", p->f);
	fputs_unlocked(ns, p->f);
	fputs_unlocked("\",\"start\":\"", p->f);
	fputs_unlocked(iso, p->f);
	fputs_unlocked("\",\"ts\":\"microseconds since start, CLOCK_REALTIME\"}}\n",
		       p->f);
}

/* Writes the trace to p->f.  Returns 0, or 2 with @err set. */
static int pf_write(const struct gr_export *x, struct pf *p, sqlite3 *db,
		    char *err, size_t len)
{
	int rc;

	/* The hosts first, in name order, so that each one's pid offset is
	 * fixed before its first event; then the processes' names. */
	rc = pf_scan(p, db, sqlite3_mprintf("SELECT DISTINCT host FROM "
		     "main.segments ORDER BY host"), pf_host_row,
		     &gr_tables[GR_T_segments], NULL, err, len);
	if (rc == 0)
		rc = pf_scan(p, db, sqlite3_mprintf("SELECT host, pid, comm "
			     "FROM main.process ORDER BY ts"), pf_name_row,
			     &gr_tables[GR_T_process], NULL, err, len);
	fputs_unlocked("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", p->f);
	/* With no event, the window's start, if it has one. */
	p->start = p->prog->lo == INT64_MIN ? 0 : p->prog->lo;
	if (rc == 0)
		rc = pf_events(x, p, db, err, len);
	if (rc == 0) {
		pf_names(p);
		pf_other(p);
	}
	return rc;
}

int gr_perfetto__write(const struct gr_export *x, FILE *f, sqlite3 *db,
		       char *err, size_t len)
{
	struct pf p = { .f = f, .prog = x->prog, .last_host = -1 };
	int rc = pf_write(x, &p, db, err, len);

	pf_free(&p);
	return rc;
}
