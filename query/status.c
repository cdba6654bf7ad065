/* status.c - `gpurec status`: is a recorder running, and what do the data
 * directories hold.
 *
 * It must answer in a moment on a directory of hundreds of gigabytes, so
 * it decodes no event.  What it reads:
 *   - status.json, which gpurecd rewrites (by rename) at every flush: its
 *     state, pid, probe families and counters;
 *   - whether a live writer holds DIR/.lock: /proc/locks lists every
 *     flock with its device and inode, which tells it without taking the
 *     lock (trying to take it, even for a moment, could make a gpurecd
 *     starting at that instant fail with "another writer");
 *   - the MANIFEST and the file sizes (the catalog);
 *   - each segment's `blocks` rows: table, count, span and the payload's
 *     length, which SQLite answers from the row header without reading
 *     the payload (it lies on overflow pages for any block of size);
 *   - the blocks of `drops` alone are decoded: a row per flush interval
 *     in which something was lost, so few.
 * Counts per table are what `SELECT count(*)` answers, cuda_api included
 * (the union of the cuda_* tables and the calls of other APIs); totals
 * count each stored event once.
 */
#include "query/status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "query/output.h"
#include "schema/schema.h"
#include "store/scan.h"
#include "store/store.h"

#define STATUS_FILE "status.json"
#define STATUS_MAX (1 << 20) /* gpurecd's is a few hundred bytes */

struct tstat {
	int64_t events, blocks, bytes;
};

struct named {           /* a host, or a drop source and its count */
	char *name;
	int64_t n;
};

struct problem {
	char *path, *reason;
};

/* The probe families, in recorder/families.def's order, by their key in
 * status.json: the host unit's are booleans in its "host" object, the
 * CUDA unit's its object's "enabled". */
static const char *const family_names[] = {
#define GR_FAMILY(name, unit, status) status,
#include "recorder/families.def"
};
#define NFAMILIES ((int)(sizeof(family_names) / sizeof(family_names[0])))
#define FAMILY_PATH_host(key) "$.host." key
#define FAMILY_PATH_cuda(key) "$." key ".enabled"
#define FAMILY_PATH_gpu(key) "$." key ".enabled"

/* What the recorder left in status.json, and whether it still runs. */
struct recorder {
	const char *state;   /* none, recording, stopped, stale, stalled,
			      * starting, unreadable, or status.json's own */
	char *file_state;    /* "state" as written */
	int has_file, valid, running;
	int read_errno;      /* status.json exists but could not be read */
	int64_t pid, started_ns, updated_ns; /* -1: absent */
	char *version, *segment;
	int families;        /* -1 absent; bit i: family_names[i] runs */
	/* Its "memory" (-1 absent): resident and peak, its limit (0:
	 * none), and the parts gpurecd can name: the ELF cache's symbol
	 * indexes, kernel names, BPF maps; times it shed its caches. */
	int64_t rss, peak_rss, elf_files, elf_bytes;
	int64_t limit, names_bytes, bpf_maps, sheds, writer;
	/* Its "retention" (-1 absent): the budgets in force, the deletions
	 * for age, and the size budget min-age keeps the directory over
	 * (NULL: none). */
	int64_t max_disk, keep_free, max_age, min_age, deleted_age;
	char *over_budget;
	char *json;          /* status.json, compacted; NULL if none or bad */
	/* Its "drops": what the running (or last) gpurecd counted lost
	 * since it started, by source, and of the store's own losses those
	 * not yet written as drops rows (a full disk). */
	struct named *drops;
	int ndrops;
	int64_t drops_total, drops_pending;
};

/* Everything shown for one --data directory. */
struct dstat {
	const char *path;
	struct recorder rec;
	struct named *hosts, *drops;
	int nhosts, ndrops;
	int segments, sealed, open, unreadable, deleted, missing;
	int64_t first_ns, last_ns; /* INT64_MAX / INT64_MIN: no event */
	uint64_t seg_bytes, dir_bytes, fs_avail;
	struct tstat tab[GR_NTABLES]; /* as stored (cuda_api: its own) */
	struct tstat total;
	int64_t drops_total;
	struct problem *problems;
	int nproblems;
};

struct ctx {
	const struct gr_status_opts *o;
	sqlite3 *mem;        /* parses status.json (SQLite's JSON) */
	struct gr_scan *scan; /* decodes the drops tables */
	int oom;
};

static void add_problem(struct ctx *c, struct dstat *d, const char *path,
			const char *reason)
{
	struct problem *p = realloc(d->problems, (size_t)(d->nproblems + 1) *
						     sizeof(*p));
	if (!p) {
		c->oom = 1;
		return;
	}
	d->problems = p;
	p = &d->problems[d->nproblems];
	p->path = strdup(path);
	p->reason = strdup(reason ? reason : "?");
	if (!p->path || !p->reason) {
		free(p->path);
		free(p->reason);
		c->oom = 1;
		return;
	}
	d->nproblems++;
}

/* a + b, held at INT64_MAX or INT64_MIN where it would overflow: a
 * segment's counts and times are its own to claim, and a crafted one must
 * not make the sums undefined. */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* last - first, held at INT64_MAX: a span of blocks claiming
 * INT64_MIN .. INT64_MAX is longer than int64 ns can say. */
static int64_t span_ns(int64_t first, int64_t last)
{
	int64_t r;

	if (__builtin_sub_overflow(last, first, &r))
		return INT64_MAX;
	return r;
}

/* A double count (SQL's total()) as int64, held at the type's ends. */
static int64_t dbl_count(double v)
{
	if (!(v >= 0))
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	return (int64_t)v;
}

/* Adds n under name in list (a handful of entries: a linear search). */
static void add_named(struct ctx *c, struct named **list, int *len,
		      const char *name, int64_t n)
{
	for (int i = 0; i < *len; i++)
		if (strcmp((*list)[i].name, name) == 0) {
			(*list)[i].n = sat_add((*list)[i].n, n);
			return;
		}
	struct named *p = realloc(*list, (size_t)(*len + 1) * sizeof(*p));
	char *s = strdup(name);
	if (!p || !s) {
		if (p)
			*list = p;
		free(s);
		c->oom = 1;
		return;
	}
	*list = p;
	p[*len].name = s;
	p[*len].n = n;
	(*len)++;
}

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name,
		      ((const struct named *)b)->name);
}

/* ---- the recorder -------------------------------------------------------- */

/* Returns 1 if pid is a live process named gpurecd. */
static int pid_is_gpurecd(int64_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (pid <= 0 || pid > INT32_MAX)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return strcmp(comm, "gpurecd") == 0;
}

/* Returns the file's first STATUS_MAX bytes, or NULL with *err set (0:
 * out of memory; ENOENT also for a file refused with a warning). */
static char *read_small(const char *path, int *err)
{
	/* Not followed, not waited on: a symlink or FIFO planted in the
	 * data directory is refused at once, and so is a device or an
	 * oversized file; status then goes on as without the file. */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	const char *why = NULL;
	struct stat sb;
	char *buf = NULL;
	size_t n = 0;

	*err = fd < 0 ? errno : 0;
	if (fd < 0 && *err == ELOOP)
		why = "a symbolic link";
	else if (fd < 0)
		return NULL;
	else if (fstat(fd, &sb) != 0)
		*err = errno;
	else if (!S_ISREG(sb.st_mode))
		why = "not a regular file";
	else if (sb.st_size > STATUS_MAX)
		why = "larger than gpurecd writes it";
	else if (!(buf = malloc(STATUS_MAX + 1)))
		*err = 0;
	while (buf && n < STATUS_MAX) {
		ssize_t r = read(fd, buf + n, STATUS_MAX - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = errno;
			free(buf);
			buf = NULL;
		}
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (why) {
		fprintf(stderr, "gpurec: warning: %s: %s; ignored\n", path, why);
		*err = ENOENT;
	}
	if (buf)
		buf[n] = 0;
	return buf;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return t && sqlite3_column_type(st, i) != SQLITE_NULL ? strdup(t) : NULL;
}

static int64_t col_int(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_INTEGER ?
		       sqlite3_column_int64(st, i) : -1;
}

/* Parses status.json with SQLite's JSON functions. */
static void parse_status(struct ctx *c, struct recorder *r, const char *text)
{
	static const char sql[] =
		"SELECT json_valid(?1) AND json_type(?1) = 'object', json(?1),"
		" json_extract(?1, '$.state'), json_extract(?1, '$.pid'),"
		" json_extract(?1, '$.version'),"
		" json_extract(?1, '$.started_ns'),"
		" json_extract(?1, '$.updated_ns'),"
		" json_extract(?1, '$.segment')"
#define GR_FAMILY(name, unit, status)                                          \
		", json_type(?1, '" FAMILY_PATH_##unit(status) "')"
#include "recorder/families.def"
		", json_extract(?1, '$.memory.rss_bytes'),"
		" json_extract(?1, '$.memory.peak_rss_bytes'),"
		" json_extract(?1, '$.memory.elf_cache_read'),"
		" json_extract(?1, '$.memory.elf_cache_bytes'),"
		" json_extract(?1, '$.memory.limit_bytes'),"
		" json_extract(?1, '$.memory.kernel_names_bytes'),"
		" json_extract(?1, '$.memory.bpf_maps_bytes'),"
		" json_extract(?1, '$.memory.sheds'),"
		" json_extract(?1, '$.memory.writer_bytes'),"
		" json_extract(?1, '$.retention.max_disk'),"
		" json_extract(?1, '$.retention.keep_free'),"
		" json_extract(?1, '$.retention.max_age_ns'),"
		" json_extract(?1, '$.retention.min_age_ns'),"
		" json_extract(?1, '$.retention.deleted_max_age'),"
		" json_extract(?1, '$.retention.over_budget')";
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(c->mem, sql, -1, &st, NULL) != SQLITE_OK) {
		c->oom = 1;
		return;
	}
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0)) {
		r->valid = 1;
		r->json = col_dup(st, 1);
		if (sqlite3_column_type(st, 2) == SQLITE_TEXT)
			r->file_state = col_dup(st, 2);
		r->pid = col_int(st, 3);
		if (sqlite3_column_type(st, 4) == SQLITE_TEXT)
			r->version = col_dup(st, 4);
		r->started_ns = col_int(st, 5);
		r->updated_ns = col_int(st, 6);
		if (sqlite3_column_type(st, 7) == SQLITE_TEXT)
			r->segment = col_dup(st, 7);
		r->families = 0;
		for (int i = 0; i < NFAMILIES; i++) {
			const char *t = (const char *)sqlite3_column_text(st,
									 8 + i);
			if (t && strcmp(t, "true") == 0)
				r->families |= 1 << i;
		}
		r->rss = col_int(st, 8 + NFAMILIES);
		r->peak_rss = col_int(st, 9 + NFAMILIES);
		r->elf_files = col_int(st, 10 + NFAMILIES);
		r->elf_bytes = col_int(st, 11 + NFAMILIES);
		r->limit = col_int(st, 12 + NFAMILIES);
		r->names_bytes = col_int(st, 13 + NFAMILIES);
		r->bpf_maps = col_int(st, 14 + NFAMILIES);
		r->sheds = col_int(st, 15 + NFAMILIES);
		r->writer = col_int(st, 16 + NFAMILIES);
		r->max_disk = col_int(st, 17 + NFAMILIES);
		r->keep_free = col_int(st, 18 + NFAMILIES);
		r->max_age = col_int(st, 19 + NFAMILIES);
		r->min_age = col_int(st, 20 + NFAMILIES);
		r->deleted_age = col_int(st, 21 + NFAMILIES);
		if (sqlite3_column_type(st, 22 + NFAMILIES) == SQLITE_TEXT)
			r->over_budget = col_dup(st, 22 + NFAMILIES);
	}
	sqlite3_finalize(st);
	if (!r->valid)
		return;
	static const char drops_sql[] =
		"SELECT key, value FROM json_each(?1, '$.drops')"
		" WHERE type = 'integer' AND value > 0"
		" UNION ALL SELECT NULL, json_extract(?1, '$.drops_pending')"
		" WHERE json_type(?1, '$.drops_pending') = 'integer'";
	if (sqlite3_prepare_v2(c->mem, drops_sql, -1, &st, NULL) != SQLITE_OK) {
		c->oom = 1;
		return;
	}
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		int64_t n = sqlite3_column_int64(st, 1);
		if (!k) {
			r->drops_pending = n;
			continue;
		}
		add_named(c, &r->drops, &r->ndrops, k, n);
		r->drops_total += n;
	}
	sqlite3_finalize(st);
}

static void read_recorder(struct ctx *c, struct dstat *d)
{
	struct recorder *r = &d->rec;
	char path[4200];
	int err;

	r->pid = r->started_ns = r->updated_ns = -1;
	r->rss = r->peak_rss = r->elf_files = r->elf_bytes = -1;
	r->limit = r->names_bytes = r->bpf_maps = r->sheds = r->writer = -1;
	r->max_disk = r->keep_free = r->max_age = r->min_age = -1;
	r->deleted_age = -1;
	r->families = -1;
	snprintf(path, sizeof(path), "%s/%s", d->path, STATUS_FILE);
	char *text = read_small(path, &err);
	r->has_file = text || err != ENOENT;
	if (text)
		parse_status(c, r, text);
	else if (err && err != ENOENT)
		r->read_errno = err;
	else if (!err)
		c->oom = 1;
	free(text);
	r->running = gr_dir__writer_live(d->path) || (r->valid && pid_is_gpurecd(r->pid));

	int64_t age = r->updated_ns >= 0 ?
			      span_ns(r->updated_ns, c->o->now_ns) : -1;
	if (!r->has_file)
		r->state = r->running ? "starting" : "none";
	else if (!r->valid || !r->file_state)
		r->state = "unreadable";
	else if (strcmp(r->file_state, "recording") == 0)
		r->state = !r->running ? "stale" :
			   age > GR_STATUS_STALL_NS ? "stalled" : "recording";
	else if (strcmp(r->file_state, "stopped") == 0)
		r->state = r->running ? "starting" : "stopped";
	else
		r->state = r->file_state;
}

/* ---- segments ------------------------------------------------------------ */

/* Adds one decoded block of drops to d.  Returns 0, or -EILSEQ where a
 * column is missing. */
static int add_drops(struct ctx *c, struct dstat *d, const struct gr_dict *dict,
		     const struct gr_scan_block *b)
{
	const int64_t *src = b->v[GR_drops_source], *n = b->v[GR_drops_count];
	if (!src || !n)
		return -EILSEQ;
	for (uint32_t i = 0; i < b->nrows; i++) {
		uint32_t len;
		const char *name = gr_dict__str(dict, src[i], &len);
		add_named(c, &d->drops, &d->ndrops, name ? name : "?", n[i]);
		d->drops_total = sat_add(d->drops_total, n[i]);
	}
	return 0;
}

/* Decodes the drops table of an open segment into d->drops. */
static void scan_drops(struct ctx *c, struct dstat *d, struct gr_segment *s)
{
	const char *path = gr_segment__info(s)->path;
	uint64_t mask = 1ull << GR_drops_source | 1ull << GR_drops_count;
	struct gr_scan_block b;
	char *err = NULL;
	int rc;

	if (gr_segment__load_dict(s, &err) ||
	    gr_scan__start(c->scan, s, GR_T_drops, INT64_MIN, INT64_MAX, mask,
			   &err)) {
		add_problem(c, d, path, err);
		free(err);
		return;
	}
	while ((rc = gr_scan__next(c->scan, &b, &err)) != 0) {
		if (rc == -EIO || rc == -EBUSY || rc == -EBADMSG) {
			add_problem(c, d, path, err);
			free(err);
			err = NULL;
			if (rc == -EBADMSG)
				continue;
			break;
		}
		free(err);
		err = NULL;
		if (rc < 0 || add_drops(c, d, gr_segment__dict(s), &b)) {
			char why[128];
			snprintf(why, sizeof(why), "block %lld of drops does "
				 "not decode", (long long)b.id);
			add_problem(c, d, path, why);
		}
	}
}

/* Adds one segment's blocks, per table, to d: all of them, or none when
 * the segment cannot be read to the end. */
struct seg_blocks {
	struct tstat tab[GR_NTABLES], total;
	int64_t first, last;
};

static int add_table_blocks(void *ctx, const struct gr_table_blocks *tb)
{
	struct seg_blocks *sb = ctx;
	int t = gr_table__find(tb->table);
	struct tstat one = {
		dbl_count(tb->events), tb->blocks, dbl_count(tb->bytes),
	};
	if (t >= 0 && (gr_tables[t].flags & GR_TF_EVENT))
		sb->tab[t] = one;
	sb->total.events = sat_add(sb->total.events, one.events);
	sb->total.blocks = sat_add(sb->total.blocks, one.blocks);
	sb->total.bytes = sat_add(sb->total.bytes, one.bytes);
	if (one.events > 0) {
		sb->first = tb->ts_min < sb->first ? tb->ts_min : sb->first;
		sb->last = tb->ts_max > sb->last ? tb->ts_max : sb->last;
	}
	return 0;
}

static void scan_segment(struct ctx *c, struct dstat *d,
			 const struct gr_catalog_seg *cs)
{
	struct seg_blocks sb = { .first = INT64_MAX, .last = INT64_MIN };
	struct gr_segment *s;
	char *err = NULL;

	if (gr_segment__open(cs->path, cs->sealed, &s, &err)) {
		d->unreadable++;
		add_problem(c, d, cs->path, err);
		free(err);
		return;
	}
	if (gr_segment__table_blocks(s, add_table_blocks, &sb, &err)) {
		char why[512];
		snprintf(why, sizeof(why), "cannot read its blocks: %s",
			 err ? err : "?");
		free(err);
		d->unreadable++;
		add_problem(c, d, cs->path, why);
		gr_segment__close(s);
		return;
	}
	add_named(c, &d->hosts, &d->nhosts, gr_segment__info(s)->host, 0);
	for (int t = 0; t < GR_NTABLES; t++) {
		d->tab[t].events = sat_add(d->tab[t].events, sb.tab[t].events);
		d->tab[t].blocks = sat_add(d->tab[t].blocks, sb.tab[t].blocks);
		d->tab[t].bytes = sat_add(d->tab[t].bytes, sb.tab[t].bytes);
	}
	d->total.events = sat_add(d->total.events, sb.total.events);
	d->total.blocks = sat_add(d->total.blocks, sb.total.blocks);
	d->total.bytes = sat_add(d->total.bytes, sb.total.bytes);
	d->first_ns = sb.first < d->first_ns ? sb.first : d->first_ns;
	d->last_ns = sb.last > d->last_ns ? sb.last : d->last_ns;
	if (sb.tab[GR_T_drops].blocks)
		scan_drops(c, d, s);
	gr_segment__close(s);
}

/* Sums the sizes of the directory's files (WAL, MANIFEST, status too). */
static void dir_usage(struct dstat *d)
{
	DIR *dp = opendir(d->path);
	struct dirent *de;
	struct statvfs vfs;

	if (statvfs(d->path, &vfs) == 0)
		d->fs_avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (!dp)
		return;
	while ((de = readdir(dp))) {
		struct stat sb;
		if (fstatat(dirfd(dp), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode))
			d->dir_bytes += (uint64_t)sb.st_size;
	}
	closedir(dp);
}

/* Fills d from the catalog's segments of directory index di. */
static void scan_dir(struct ctx *c, struct dstat *d,
		     const struct gr_catalog *cat, int di)
{
	const struct gr_manifest *m = &cat->manifests[di];

	d->path = cat->dirs[di];
	d->first_ns = INT64_MAX;
	d->last_ns = INT64_MIN;
	read_recorder(c, d);
	for (int i = 0; i < cat->nsegs && !c->oom; i++) {
		const struct gr_catalog_seg *cs = &cat->segs[i];
		if (cs->dir != di)
			continue;
		d->segments++;
		d->seg_bytes += cs->bytes;
		if (cs->sealed)
			d->sealed++;
		else
			d->open++;
		scan_segment(c, d, cs);
	}
	/* The manifest's sealed segments: deleted by retention, or missing.
	 * The catalog is in seq order now, so no bsearch by name. */
	int lo = 0, n = 0;
	while (lo < cat->nsegs && cat->segs[lo].dir != di)
		lo++;
	while (lo + n < cat->nsegs && cat->segs[lo + n].dir == di)
		n++;
	char *seen = calloc((size_t)m->n + 1, 1);
	for (int k = lo; k < lo + n && seen; k++)
		if (cat->segs[k].m)
			seen[cat->segs[k].m - m->e] = 1;
	for (int i = 0; i < m->n; i++) {
		const struct gr_manifest_entry *e = &m->e[i];
		if (e->deleted) {
			d->deleted++;
			continue;
		}
		/* A listed file carries its entry (the latest seal of it). */
		if (seen && !seen[i] &&
		    !seen[gr_manifest__find(m, e->name) - m->e]) {
			char path[4200];
			snprintf(path, sizeof(path), "%s/%s", d->path, e->name);
			d->missing++;
			add_problem(c, d, path, "missing: sealed in the manifest, "
				    "not deleted by retention, not on disk");
		}
	}
	if (!seen)
		c->oom = 1;
	free(seen);
	if (m->bad_lines) {
		char path[4200], why[128];
		snprintf(path, sizeof(path), "%s/%s", d->path, GR_MANIFEST);
		snprintf(why, sizeof(why), "%d malformed line(s), first at "
			 "line %d", m->bad_lines, m->first_bad_line);
		add_problem(c, d, path, why);
	}
	/* No readable segment: the hosts the manifest names. */
	if (!d->nhosts)
		for (int i = 0; i < cat->nsegs; i++)
			if (cat->segs[i].dir == di && cat->segs[i].m)
				add_named(c, &d->hosts, &d->nhosts,
					  cat->segs[i].m->host, 0);
	dir_usage(d);
	if (d->nhosts > 1)
		qsort(d->hosts, (size_t)d->nhosts, sizeof(*d->hosts),
		      cmp_named);
	if (d->ndrops > 1)
		qsort(d->drops, (size_t)d->ndrops, sizeof(*d->drops),
		      cmp_named);
}

/* What SQL's count(*) answers for table t: cuda_api is a union. */
static struct tstat sql_count(const struct dstat *d, int t)
{
	struct tstat r = d->tab[t];
	if (!(gr_tables[t].flags & GR_TF_UNION_CUDA))
		return r;
	for (int m = 0; m < GR_NTABLES; m++) {
		if (m == t || !(gr_tables[m].flags & GR_TF_CUDA_CALL))
			continue;
		r.events = sat_add(r.events, d->tab[m].events);
		r.blocks = sat_add(r.blocks, d->tab[m].blocks);
		r.bytes = sat_add(r.bytes, d->tab[m].bytes);
	}
	return r;
}

static void free_dstat(struct dstat *d)
{
	struct recorder *r = &d->rec;
	free(r->file_state);
	free(r->version);
	free(r->segment);
	free(r->over_budget);
	free(r->json);
	for (int i = 0; i < r->ndrops; i++)
		free(r->drops[i].name);
	free(r->drops);
	for (int i = 0; i < d->nhosts; i++)
		free(d->hosts[i].name);
	for (int i = 0; i < d->ndrops; i++)
		free(d->drops[i].name);
	for (int i = 0; i < d->nproblems; i++) {
		free(d->problems[i].path);
		free(d->problems[i].reason);
	}
	free(d->hosts);
	free(d->drops);
	free(d->problems);
}

/* ---- JSON ---------------------------------------------------------------- */

/* 2026-11-18T09:46:40.123456789Z (decimals 9) or .123Z (3). */
static void fmt_time(char *buf, size_t len, int64_t ns, int decimals)
{
	time_t s = (time_t)(ns / 1000000000);
	int64_t frac = ns % 1000000000;
	struct tm tm;
	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	if (!gmtime_r(&s, &tm)) {
		snprintf(buf, len, "%" PRId64 " ns", ns);
		return;
	}
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	for (int i = decimals; i < 9; i++)
		frac /= 10;
	snprintf(buf + n, len - n, ".%0*" PRId64 "Z", decimals, frac);
}

static void json_opt_int(struct gr_json *j, const char *key, int64_t v)
{
	if (v < 0)
		gr_json__null(j, key);
	else
		gr_json__int(j, key, v);
}

static void json_recorder(struct gr_json *j, const struct ctx *c,
			  const struct recorder *r)
{
	gr_json__begin(j, "recorder", '{');
	gr_json__str(j, "state", r->state);
	gr_json__bool(j, "running", r->running);
	json_opt_int(j, "pid", r->pid);
	gr_json__str(j, "version", r->version);
	json_opt_int(j, "started_ns", r->started_ns);
	json_opt_int(j, "updated_ns", r->updated_ns);
	if (r->updated_ns >= 0)
		gr_json__fixed(j, "updated_age_s",
			       (double)span_ns(r->updated_ns, c->o->now_ns) / 1e9, 3);
	else
		gr_json__null(j, "updated_age_s");
	gr_json__str(j, "segment", r->segment);
	if (r->families < 0) {
		gr_json__null(j, "families");
	} else {
		gr_json__begin(j, "families", '{');
		for (int i = 0; i < NFAMILIES; i++)
			gr_json__bool(j, family_names[i], r->families >> i & 1);
		gr_json__end(j, '{');
	}
	gr_json__begin(j, "drops", '{');
	gr_json__int(j, "total", r->drops_total);
	gr_json__int(j, "pending", r->drops_pending);
	gr_json__begin(j, "sources", '{');
	for (int i = 0; i < r->ndrops; i++)
		gr_json__int(j, r->drops[i].name, r->drops[i].n);
	gr_json__end(j, '{');
	gr_json__end(j, '{');
	if (r->json)
		gr_json__raw(j, "status_file", r->json);
	else
		gr_json__null(j, "status_file");
	gr_json__end(j, '{');
}

static void json_span(struct gr_json *j, int64_t first, int64_t last)
{
	char buf[64];
	gr_json__begin(j, "span", '{');
	if (first > last) {
		gr_json__null(j, "first_ns");
		gr_json__null(j, "last_ns");
		gr_json__null(j, "first");
		gr_json__null(j, "last");
		gr_json__null(j, "seconds");
	} else {
		gr_json__int(j, "first_ns", first);
		gr_json__int(j, "last_ns", last);
		fmt_time(buf, sizeof(buf), first, 9);
		gr_json__str(j, "first", buf);
		fmt_time(buf, sizeof(buf), last, 9);
		gr_json__str(j, "last", buf);
		gr_json__fixed(j, "seconds", ((double)last - (double)first) / 1e9,
			       3);
	}
	gr_json__end(j, '{');
}

static void json_dir(struct gr_json *j, const struct ctx *c,
		     const struct dstat *d)
{
	gr_json__begin(j, NULL, '{');
	gr_json__str(j, "path", d->path);
	gr_json__begin(j, "hosts", '[');
	for (int i = 0; i < d->nhosts; i++)
		gr_json__str(j, NULL, d->hosts[i].name);
	gr_json__end(j, '[');
	json_recorder(j, c, &d->rec);

	gr_json__begin(j, "segments", '{');
	gr_json__int(j, "total", d->segments);
	gr_json__int(j, "sealed", d->sealed);
	gr_json__int(j, "open", d->open);
	gr_json__int(j, "unreadable", d->unreadable);
	gr_json__int(j, "deleted", d->deleted);
	gr_json__int(j, "missing", d->missing);
	gr_json__end(j, '{');

	json_span(j, d->first_ns, d->last_ns);

	gr_json__begin(j, "disk", '{');
	gr_json__int(j, "segment_bytes", (int64_t)d->seg_bytes);
	gr_json__int(j, "dir_bytes", (int64_t)d->dir_bytes);
	gr_json__int(j, "fs_avail_bytes", (int64_t)d->fs_avail);
	gr_json__end(j, '{');

	gr_json__begin(j, "events", '{');
	gr_json__int(j, "total", d->total.events);
	gr_json__int(j, "blocks", d->total.blocks);
	gr_json__int(j, "payload_bytes", d->total.bytes);
	gr_json__begin(j, "tables", '{');
	for (int t = 0; t < GR_NTABLES; t++) {
		if (!(gr_tables[t].flags & GR_TF_EVENT))
			continue;
		struct tstat ts = sql_count(d, t);
		gr_json__begin(j, gr_tables[t].name, '{');
		gr_json__int(j, "events", ts.events);
		gr_json__int(j, "blocks", ts.blocks);
		gr_json__int(j, "payload_bytes", ts.bytes);
		gr_json__end(j, '{');
	}
	gr_json__end(j, '{');
	gr_json__end(j, '{');

	gr_json__begin(j, "drops", '{');
	gr_json__int(j, "total", d->drops_total);
	gr_json__begin(j, "sources", '{');
	for (int i = 0; i < d->ndrops; i++)
		gr_json__int(j, d->drops[i].name, d->drops[i].n);
	gr_json__end(j, '{');
	gr_json__end(j, '{');

	gr_json__begin(j, "problems", '[');
	for (int i = 0; i < d->nproblems; i++) {
		gr_json__begin(j, NULL, '{');
		gr_json__str(j, "path", d->problems[i].path);
		gr_json__str(j, "reason", d->problems[i].reason);
		gr_json__end(j, '{');
	}
	gr_json__end(j, '[');
	gr_json__end(j, '{');
}

/* Sums of every directory. */
struct totals {
	int64_t segments, events, blocks, drops, problems;
	uint64_t seg_bytes, dir_bytes;
	int64_t first_ns, last_ns;
};

static void sum_dirs(const struct dstat *ds, int n, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	t->first_ns = INT64_MAX;
	t->last_ns = INT64_MIN;
	for (int i = 0; i < n; i++) {
		const struct dstat *d = &ds[i];
		t->segments += d->segments;
		t->events = sat_add(t->events, d->total.events);
		t->blocks = sat_add(t->blocks, d->total.blocks);
		t->drops = sat_add(t->drops, d->drops_total);
		t->problems += d->nproblems;
		t->seg_bytes += d->seg_bytes;
		t->dir_bytes += d->dir_bytes;
		if (d->first_ns < t->first_ns)
			t->first_ns = d->first_ns;
		if (d->last_ns > t->last_ns)
			t->last_ns = d->last_ns;
	}
}

static int print_json(const struct ctx *c, const struct dstat *ds, int n)
{
	struct gr_json j;
	struct totals t;

	sum_dirs(ds, n, &t);
	gr_json__init(&j, c->o->out, c->o->pretty);
	gr_json__begin(&j, NULL, '{');
	gr_json__int(&j, "now_ns", c->o->now_ns);
	gr_json__begin(&j, "dirs", '[');
	for (int i = 0; i < n; i++)
		json_dir(&j, c, &ds[i]);
	gr_json__end(&j, '[');
	gr_json__begin(&j, "total", '{');
	gr_json__int(&j, "dirs", n);
	gr_json__int(&j, "segments", t.segments);
	gr_json__int(&j, "events", t.events);
	gr_json__int(&j, "blocks", t.blocks);
	gr_json__int(&j, "drops", t.drops);
	gr_json__int(&j, "problems", t.problems);
	gr_json__int(&j, "segment_bytes", (int64_t)t.seg_bytes);
	gr_json__int(&j, "dir_bytes", (int64_t)t.dir_bytes);
	json_span(&j, t.first_ns, t.last_ns);
	gr_json__end(&j, '{');
	gr_json__end(&j, '{');
	return gr_json__finish(&j);
}

/* ---- text ---------------------------------------------------------------- */

/* 1023 B, 1.5 KiB, 12.0 MiB … */
static const char *fmt_bytes(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB",
					    "PiB" };
	double x = (double)v;
	int u = -1;
	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", v);
		return buf;
	}
	while (x >= 1024 && u < 4) {
		x /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", x, unit[u]);
	return buf;
}

/* 0.4 s, 59.9 s, 12m05s, 3h02m, 4d07h */
static const char *fmt_dur(char *buf, size_t len, int64_t ns)
{
	int64_t s = sat_add(ns, 500000000) / 1000000000; /* rounded */
	if (ns < 0)
		snprintf(buf, len, "-%.1f s", -(double)ns / 1e9);
	else if (ns < 59950000000ll) /* below what %.1f rounds to 60.0 */
		snprintf(buf, len, "%.1f s", (double)ns / 1e9);
	else if (s < 3600)
		snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", s / 3600,
			 s / 60 % 60);
	else
		snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h", s / 86400,
			 s / 3600 % 24);
	return buf;
}

/* Why a state is what it is, where the state alone does not say. */
static const char *state_why(const char *state)
{
	if (!strcmp(state, "stale"))
		return STATUS_FILE " says recording, but no gpurecd holds the "
		       "directory (it crashed or was killed, or this is a copy)";
	if (!strcmp(state, "stalled"))
		return "a gpurecd holds the directory, but has not updated "
		       STATUS_FILE " for over a minute";
	if (!strcmp(state, "starting"))
		return "a gpurecd holds the directory; " STATUS_FILE " is from "
		       "the last run";
	return NULL;
}

/* The recorder's retention line: its budgets ("none" where unset), the
 * segments it deleted for age, and the size budget min-age keeps the
 * directory over, which no deletion will cure until a segment ages. */
static void text_retention(FILE *f, const struct recorder *r)
{
	char a[32], b[32], e[32], g[32];

	if (r->max_disk < 0 || r->keep_free < 0 || r->max_age < 0 ||
	    r->min_age < 0)
		return;
	fprintf(f, "%-10s retention: max-disk %s, keep-free %s, max-age %s, "
		"min-age %s", "",
		r->max_disk ? fmt_bytes(a, sizeof(a), (uint64_t)r->max_disk) :
			      "none",
		r->keep_free ? fmt_bytes(b, sizeof(b), (uint64_t)r->keep_free) :
			       "none",
		r->max_age ? fmt_dur(e, sizeof(e), r->max_age) : "none",
		r->min_age ? fmt_dur(g, sizeof(g), r->min_age) : "none");
	if (r->deleted_age > 0)
		fprintf(f, "; %" PRId64 " deleted for age", r->deleted_age);
	fputc('\n', f);
	if (r->over_budget)
		fprintf(f, "%-10s over %s until the oldest segment is %s old "
			"(min-age)\n", "", r->over_budget,
			fmt_dur(e, sizeof(e), r->min_age));
}

static void text_recorder(FILE *f, const struct ctx *c,
			  const struct recorder *r)
{
	char t[64], age[32], up[32];
	int64_t now = c->o->now_ns;
	const char *why = state_why(r->state);

	fprintf(f, "%-10s %s", "recorder", r->state);
	if (!r->has_file) {
		fprintf(f, r->running ? ": a gpurecd holds the directory; no "
			"%s yet\n" : ": no %s (no gpurecd has run here)\n",
			STATUS_FILE);
		return;
	}
	if (!r->valid || !r->file_state) {
		if (r->read_errno)
			fprintf(f, ": cannot read %s: %s", STATUS_FILE,
				strerror(r->read_errno));
		else
			fprintf(f, ": %s is not a status gpurecd wrote",
				STATUS_FILE);
		fprintf(f, "%s\n", r->running ?
			" (a gpurecd holds the directory)" : "");
		return;
	}
	if (r->pid >= 0)
		fprintf(f, ", pid %" PRId64, r->pid);
	if (r->version)
		fprintf(f, ", gpurecd %s", r->version);
	if (!strcmp(r->state, "recording") && r->started_ns >= 0)
		fprintf(f, ", up %s", fmt_dur(up, sizeof(up),
					      span_ns(r->started_ns, now)));
	if (r->updated_ns >= 0) {
		fmt_time(t, sizeof(t), r->updated_ns, 3);
		fprintf(f, ", updated %s ago (%s)",
			fmt_dur(age, sizeof(age), span_ns(r->updated_ns, now)), t);
	}
	fputc('\n', f);
	if (why)
		fprintf(f, "%-10s %s\n", "", why);
	if (r->families >= 0) {
		const char *sep = "probe families: ";
		fprintf(f, "%-10s ", "");
		for (int i = 0; i < NFAMILIES; i++)
			if (r->families >> i & 1) {
				fprintf(f, "%s%s", sep, family_names[i]);
				sep = ", ";
			}
		fprintf(f, "%s\n", r->families ? "" : "probe families: none");
	}
	if (r->rss >= 0 && r->peak_rss >= 0) {
		fprintf(f, "%-10s memory %.1f MiB, peak %.1f MiB", "",
			(double)r->rss / 1048576, (double)r->peak_rss / 1048576);
		if (r->limit > 0)
			fprintf(f, ", limit %.0f MiB", (double)r->limit / 1048576);
		if (r->sheds > 0)
			fprintf(f, ", shed %" PRId64 " times", r->sheds);
		/* Its parts, in MiB, within 80 columns. */
		fprintf(f, "\n%-10s", "");
		if (r->writer >= 0)
			fprintf(f, " writer %.1f,", (double)r->writer / 1048576);
		if (r->bpf_maps >= 0)
			fprintf(f, " BPF maps %.1f,",
				(double)r->bpf_maps / 1048576);
		fprintf(f, " ELF %.1f (%" PRId64 " files)",
			r->elf_bytes < 0 ? 0.0 : (double)r->elf_bytes / 1048576,
			r->elf_files < 0 ? 0 : r->elf_files);
		if (r->names_bytes >= 0)
			fprintf(f, ", kernel names %.1f",
				(double)r->names_bytes / 1048576);
		fputs(" MiB\n", f);
	}
	text_retention(f, r);
}

static void text_dir(FILE *f, const struct ctx *c, const struct dstat *d)
{
	char a[32], b[32], e[32], t1[64], t2[64];

	fprintf(f, "%-10s %s\n", "data", d->path);
	fprintf(f, "%-10s", "host");
	for (int i = 0; i < d->nhosts; i++)
		fprintf(f, "%s%s", i ? ", " : " ", d->hosts[i].name);
	fprintf(f, "%s\n", d->nhosts ? "" : " (unknown)");
	text_recorder(f, c, &d->rec);
	fprintf(f, "%-10s %d: %d sealed, %d open", "segments", d->segments,
		d->sealed, d->open);
	if (d->unreadable)
		fprintf(f, ", %d unreadable", d->unreadable);
	if (d->missing)
		fprintf(f, ", %d missing", d->missing);
	if (d->deleted)
		fprintf(f, "; %d deleted by retention", d->deleted);
	fputc('\n', f);
	if (d->first_ns <= d->last_ns) {
		fmt_time(t1, sizeof(t1), d->first_ns, 3);
		fmt_time(t2, sizeof(t2), d->last_ns, 3);
		fprintf(f, "%-10s %s .. %s (%s)\n", "span", t1, t2,
			fmt_dur(a, sizeof(a), span_ns(d->first_ns, d->last_ns)));
	} else {
		fprintf(f, "%-10s no events\n", "span");
	}
	fprintf(f, "%-10s %s in segments, %s in the directory, %s free\n",
		"disk", fmt_bytes(a, sizeof(a), d->seg_bytes),
		fmt_bytes(b, sizeof(b), d->dir_bytes),
		fmt_bytes(e, sizeof(e), d->fs_avail));
	fprintf(f, "%-10s %" PRId64 " in %" PRId64 " blocks, %s compressed",
		"events", d->total.events, d->total.blocks,
		fmt_bytes(a, sizeof(a), (uint64_t)d->total.bytes));
	if (d->total.events)
		fprintf(f, " (%.1f B/event)",
			(double)d->total.bytes / (double)d->total.events);
	fputc('\n', f);
	if (d->total.events)
		fprintf(f, "  %-14s %12s %8s %10s %8s\n", "table", "events",
			"blocks", "bytes", "B/event");
	for (int t = 0; t < GR_NTABLES; t++) {
		if (!(gr_tables[t].flags & GR_TF_EVENT))
			continue;
		struct tstat ts = sql_count(d, t);
		if (!ts.events)
			continue;
		fprintf(f, "  %-14s %12" PRId64 " %8" PRId64 " %10s %8.1f\n",
			gr_tables[t].name, ts.events, ts.blocks,
			fmt_bytes(a, sizeof(a), (uint64_t)ts.bytes),
			(double)ts.bytes / (double)ts.events);
	}
	/* "none" only when neither the data nor the recorder counted a
	 * loss: events lost on a full disk may not be in the data yet. */
	const struct recorder *r = &d->rec;
	if (!d->ndrops && !r->drops_total && !r->drops_pending)
		fprintf(f, "%-10s none\n", "drops");
	else
		fprintf(f, "%-10s %" PRId64 " events lost\n",
			"drops", d->drops_total);
	for (int i = 0; i < d->ndrops; i++)
		fprintf(f, "  %-14s %12" PRId64 "\n", d->drops[i].name,
			d->drops[i].n);
	if (r->drops_total || r->drops_pending) {
		fprintf(f, "  recorder, since its start: %" PRId64 " events "
			"lost", r->drops_total);
		if (r->drops_pending)
			fprintf(f, ", %" PRId64 " not yet in the data (the "
				"store cannot write them now)",
				r->drops_pending);
		fputc('\n', f);
		for (int i = 0; i < r->ndrops; i++)
			fprintf(f, "    %-14s %10" PRId64 "\n",
				r->drops[i].name, r->drops[i].n);
	}
	for (int i = 0; i < d->nproblems; i++)
		fprintf(f, "%-10s %s: %s\n", i ? "" : "problems",
			d->problems[i].path, d->problems[i].reason);
}

static int print_text(const struct ctx *c, const struct dstat *ds, int n)
{
	FILE *f = c->o->out;
	for (int i = 0; i < n; i++) {
		if (i)
			fputc('\n', f);
		text_dir(f, c, &ds[i]);
	}
	if (n > 1) {
		struct totals t;
		char a[32];
		sum_dirs(ds, n, &t);
		fprintf(f, "\n%-10s %d directories: %" PRId64 " segments, %"
			PRId64 " events, %" PRId64 " dropped, %s in segments\n",
			"total", n, t.segments, t.events, t.drops,
			fmt_bytes(a, sizeof(a), t.seg_bytes));
	}
	if (fflush(f) != 0 || ferror(f))
		return -EIO;
	return 0;
}

/* ---- entry --------------------------------------------------------------- */

int gr_status__print(const struct gr_status_opts *o)
{
	struct gr_catalog cat;
	struct ctx c = { .o = o };
	struct dstat *ds;
	char *err = NULL;
	int rc = 0;

	if (gr_catalog__open(&cat, o->dirs, o->ndirs, &err)) {
		fprintf(stderr, "gpurec: %s\n", err ? err : "out of memory");
		free(err);
		return 1;
	}
	for (int i = 0; i < o->ndirs; i++) {
		char path[4200];
		struct stat sb;
		int segs = 0;
		for (int k = 0; k < cat.nsegs; k++)
			segs += cat.segs[k].dir == i;
		snprintf(path, sizeof(path), "%s/%s", o->dirs[i], STATUS_FILE);
		if (!segs && !cat.manifests[i].n && stat(path, &sb) < 0) {
			fprintf(stderr, "gpurec: no recording in %s (no segment "
				"files, no %s)\n", o->dirs[i], STATUS_FILE);
			gr_catalog__free(&cat);
			return 1;
		}
	}
	ds = calloc((size_t)o->ndirs, sizeof(*ds));
	c.scan = gr_scan__new();
	if (!ds || !c.scan ||
	    sqlite3_open_v2(":memory:", &c.mem, SQLITE_OPEN_READWRITE,
			    NULL) != SQLITE_OK)
		c.oom = 1;
	for (int i = 0; i < o->ndirs && !c.oom; i++)
		scan_dir(&c, &ds[i], &cat, i);
	if (!c.oom)
		rc = o->json ? print_json(&c, ds, o->ndirs) :
			       print_text(&c, ds, o->ndirs);
	if (c.oom)
		fprintf(stderr, "gpurec: out of memory\n");
	else if (rc)
		fprintf(stderr, "gpurec: cannot write output: %s\n",
			strerror(-rc));
	for (int i = 0; ds && i < o->ndirs; i++)
		free_dstat(&ds[i]);
	free(ds);
	gr_scan__free(c.scan);
	sqlite3_close(c.mem);
	gr_catalog__free(&cat);
	return c.oom || rc ? 2 : 0;
}
