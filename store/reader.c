/* reader.c - opens segments read-only and walks their blocks.
 *
 * Sealed segments are opened with SQLite's immutable=1, which takes no
 * locks and writes nothing, so reading never changes a byte of them.  The
 * open segment of a live writer (DATA/.lock held) is opened mode=ro and
 * shares the writer's WAL, seeing every committed flush.  An unsealed
 * segment with no live writer (a crash; a copy on other media) is
 * evidence: it is read from memory, its WAL's committed frames included
 * (store/walview.c), so reading creates no -shm, checkpoints nothing and
 * works on read-only media.  Each block row's checksum is checked as it
 * is read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "store/codec.h"
#include "store/segment.h"
#include "store/walview.h"

static char *fmt_err(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

int gr_segment_name_ok(const char *name)
{
	/* 20261123T011402.123456789Z.seg */
	size_t n = strlen(name), sl = strlen(GR_SEG_SUFFIX);
	if (n != 26 + sl || strcmp(name + 26, GR_SEG_SUFFIX) != 0)
		return 0;
	for (int i = 0; i < 26; i++) {
		char c = name[i];
		int ok = i == 8 ? c == 'T' : i == 15 ? c == '.' :
			 i == 25 ? c == 'Z' : c >= '0' && c <= '9';
		if (!ok)
			return 0;
	}
	return 1;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gr_segments__list(const char *dir, char ***out, int *nout)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	int n = 0, cap = 0, err = 0;
	struct dirent *de;

	*out = NULL;
	*nout = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!gr_segment_name_ok(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **p = realloc(names, (size_t)cap * sizeof(*p));
			if (!p) {
				err = -ENOMEM;
				break;
			}
			names = p;
		}
		if (!(names[n] = strdup(de->d_name))) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (err) {
		gr_segments__free(names, n);
		return err;
	}
	if (n)
		qsort(names, (size_t)n, sizeof(*names), cmp_names);
	*out = names;
	*nout = n;
	return 0;
}

void gr_segments__free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int gr_dir__writer_live(const char *dir)
{
	char path[4200], line[256];
	struct stat sb;
	FILE *f;
	int held = 0;

	/* /proc/locks lists every flock with its file's device and inode,
	 * which tells without taking the lock: trying to take it, even for
	 * a moment, could make a gpurecd starting at that instant fail
	 * with "another writer holds this data directory". */
	snprintf(path, sizeof(path), "%s/%s", dir, GR_LOCK_FILE);
	if (lstat(path, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    !(f = fopen("/proc/locks", "re")))
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 4242 fe:00:10952742 0 EOF": the one
	 * field with two colons is the file (waiters' lines too). */
	while (!held && fgets(line, sizeof(line), f)) {
		char *save = NULL;
		for (char *tok = strtok_r(line, " \n", &save); tok && !held;
		     tok = strtok_r(NULL, " \n", &save)) {
			unsigned maj, min;
			unsigned long long ino;
			int end = 0;
			if (sscanf(tok, "%x:%x:%llu%n", &maj, &min, &ino,
				   &end) == 3 && !tok[end] &&
			    maj == major(sb.st_dev) && min == minor(sb.st_dev) &&
			    ino == (unsigned long long)sb.st_ino)
				held = 1;
		}
	}
	fclose(f);
	return held;
}

/* Whether the directory holding segment path has a live writer. */
static int seg_writer_live(const char *path)
{
	char dir[4200];
	const char *slash = strrchr(path, '/');
	if (!slash)
		return gr_dir__writer_live(".");
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return gr_dir__writer_live(slash == path ? "/" : dir);
}

/* Opens an unsealed segment with no writer as an in-memory image
 * (walview.c).  Returns SQLITE_OK or an SQLite error with *err set. */
static int open_walview(const char *path, sqlite3 **db, char **err)
{
	uint8_t *img;
	size_t n;
	int e = gr_walview__load(path, &img, &n);
	if (e) {
		*err = fmt_err("%s", e == -EINVAL ? "not a database" :
				     strerror(-e));
		return SQLITE_CANTOPEN;
	}
	int rc = sqlite3_open_v2(":memory:", db, SQLITE_OPEN_READWRITE |
				 SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_deserialize(*db, "main", img, (sqlite3_int64)n,
					 (sqlite3_int64)n,
					 SQLITE_DESERIALIZE_FREEONCLOSE |
					 SQLITE_DESERIALIZE_READONLY);
	else
		sqlite3_free(img);
	if (rc != SQLITE_OK)
		*err = fmt_err("%s", *db ? sqlite3_errmsg(*db) :
				     sqlite3_errstr(rc));
	return rc;
}

static int meta_text(sqlite3 *db, const char *key, char **out)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?1",
				    -1, &st, NULL);
	*out = NULL;
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		*out = strdup(t ? t : "");
		rc = *out ? SQLITE_OK : SQLITE_NOMEM;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static int64_t meta_int(sqlite3 *db, const char *key, int *rc)
{
	char *t;
	int64_t v = 0;
	*rc = meta_text(db, key, &t);
	if (t)
		v = strtoll(t, NULL, 10);
	free(t);
	return v;
}

/* The SQLite URI that opens path read-only (immutable: without locking),
 * what a URI would misread in a path escaped.  Returns it (sqlite3_free)
 * or NULL for want of memory. */
static char *seg_uri(const char *path, int immutable)
{
	size_t n = strlen(path);
	char *e = malloc(n * 3 + 32), *q = e, *uri;

	if (!e)
		return NULL;
	q += sprintf(q, "file:");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c == '%' || c == '?' || c == '#' || c < 0x21)
			q += sprintf(q, "%%%02X", c);
		else
			*q++ = (char)c;
	}
	sprintf(q, "?%s", immutable ? "immutable=1" : "mode=ro");
	uri = sqlite3_mprintf("%s", e);
	free(e);
	return uri;
}

/* Reads the segment's metadata from db into s->info.  Returns SQLITE_OK
 * or not (the codes of the reads that failed, ORed). */
static int seg_meta(struct gr_segment *s, sqlite3 *db)
{
	int rc, r2;

	s->info.schema_version = (int)meta_int(db, "schema_version", &rc);
	s->info.sealed = (int)meta_int(db, "sealed", &r2);
	rc |= r2;
	s->info.start_ts = meta_int(db, "start_ts", &r2);
	rc |= r2;
	s->info.end_ts = meta_int(db, "end_ts", &r2);
	rc |= r2;
	s->info.events = meta_int(db, "events", &r2);
	rc |= r2;
	rc |= meta_text(db, "host", &s->info.host);
	rc |= meta_text(db, "prev_sha256", &s->info.prev_sha256);
	s->info.seq = meta_int(db, "seq", &r2);
	rc |= r2;
	return rc;
}

int gr_segment__open(const char *path, int immutable, struct gr_segment **out,
		     char **err)
{
	static uint64_t opens;
	struct gr_segment *s = calloc(1, sizeof(*s));
	char *uri = NULL, *fmt = NULL;
	sqlite3 *db = NULL;
	int rc;

	*out = NULL;
	*err = NULL;
	if (!s || !(s->info.path = strdup(path)))
		goto nomem;
	s->serial = __atomic_add_fetch(&opens, 1, __ATOMIC_RELAXED);
	memset(s->colmap, -1, sizeof(s->colmap));
	if (!immutable && !seg_writer_live(path)) {
		if (open_walview(path, &db, err) != SQLITE_OK) {
			sqlite3_close(db);
			goto fail_noclose;
		}
		s->walview = 1;
		goto opened;
	}
	if (!(uri = seg_uri(path, immutable)))
		goto nomem;
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
				       SQLITE_OPEN_NOMUTEX |
				       SQLITE_OPEN_NOFOLLOW, NULL);
	sqlite3_free(uri);
	if (rc != SQLITE_OK) {
		*err = fmt_err("%s", db ? sqlite3_errmsg(db) :
					  sqlite3_errstr(rc));
		sqlite3_close(db);
		goto fail_noclose;
	}
opened:
	s->db = db;
	rc = meta_text(db, "format", &fmt);
	if (rc != SQLITE_OK || !fmt || strcmp(fmt, "gpurec-segment") != 0) {
		*err = fmt_err("%s", rc != SQLITE_OK ? sqlite3_errmsg(db) :
					     "not a gpurec segment");
		goto fail;
	}
	rc = seg_meta(s, db);
	if (rc != SQLITE_OK || !s->info.host) {
		*err = fmt_err("%s", rc != SQLITE_OK ? sqlite3_errmsg(db) :
					     "metadata lacks host");
		goto fail;
	}
	free(fmt);
	*out = s;
	return 0;
nomem:
	*err = fmt_err("out of memory");
	rc = -ENOMEM;
	free(fmt);
	gr_segment__close(s);
	return rc;
fail:
	rc = s->db && (sqlite3_errcode(s->db) == SQLITE_BUSY ||
		       sqlite3_errcode(s->db) == SQLITE_LOCKED) ? -EBUSY : -EINVAL;
	free(fmt);
	gr_segment__close(s);
	return rc;
fail_noclose:
	free(fmt);
	gr_segment__close(s);
	return -EINVAL;
}

void gr_segment__close(struct gr_segment *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->blocks_stmt);
	sqlite3_finalize(s->payload_stmt);
	sqlite3_finalize(s->coll_stmt);
	sqlite3_finalize(s->arr_stmt);
	sqlite3_finalize(s->arr_has_stmt);
	sqlite3_close(s->db);
	gr_dict__free(s->dict);
	free(s->info.path);
	free(s->info.host);
	free(s->info.prev_sha256);
	free(s);
}

int gr_segment__load_colmap(struct gr_segment *s, int t, char **err)
{
	const struct gr_table *tab = &gr_tables[t];
	sqlite3_stmt *st;
	if (s->colmap_loaded[t])
		return 0;
	if (sqlite3_prepare_v2(s->db, "SELECT idx, name FROM columns WHERE "
				      "tbl=?1 ORDER BY idx", -1, &st, NULL)) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		return -EINVAL;
	}
	sqlite3_bind_text(st, 1, tab->name, -1, SQLITE_STATIC);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int idx = sqlite3_column_int(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int c = name ? gr_table__col(tab, name) : -1;
		if (c >= 0 && idx >= 0 && idx < GR_MAX_COLS)
			s->colmap[t][c] = (int8_t)idx;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		return -EINVAL;
	}
	s->colmap_loaded[t] = 1;
	return 0;
}

void gr_dict__free(struct gr_dict *d)
{
	if (!d)
		return;
	free(d->s);
	free(d->len);
	free(d->arena);
	free(d);
}

/* The highest id and the bytes of all strings, to size the arena. */
static int dict_size(sqlite3 *db, uint32_t *maxid, size_t *bytes, char **err)
{
	sqlite3_stmt *st;
	int rc;
	if (sqlite3_prepare_v2(db, "SELECT max(id), sum(length(CAST(s AS "
				   "BLOB))) FROM dict", -1, &st, NULL)) {
		*err = fmt_err("%s", sqlite3_errmsg(db));
		return -EINVAL;
	}
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 m = sqlite3_column_int64(st, 0);
		if (m < 0 || m > (1ll << 31)) {
			sqlite3_finalize(st);
			*err = fmt_err("dictionary id %lld out of range",
				       (long long)m);
			return -EINVAL;
		}
		*maxid = (uint32_t)m;
		*bytes = (size_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW) {
		*err = fmt_err("%s", sqlite3_errmsg(db));
		return -EINVAL;
	}
	return 0;
}

int gr_segment__load_dict(struct gr_segment *s, char **err)
{
	sqlite3_stmt *st;
	int rc;
	uint32_t maxid = 0;
	size_t bytes = 0;

	if (s->dict)
		return 0;
	if ((rc = dict_size(s->db, &maxid, &bytes, err)))
		return rc;
	struct gr_dict *d = calloc(1, sizeof(*d));
	if (d) {
		d->s = calloc((size_t)maxid + 1, sizeof(*d->s));
		d->len = calloc((size_t)maxid + 1, sizeof(*d->len));
		d->arena = malloc(bytes + maxid + 1);
	}
	if (!d || !d->s || !d->len || !d->arena) {
		gr_dict__free(d);
		*err = fmt_err("out of memory loading the dictionary");
		return -ENOMEM;
	}
	d->n = maxid;
	if (sqlite3_prepare_v2(s->db, "SELECT id, s FROM dict", -1, &st, NULL)) {
		gr_dict__free(d);
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		return -EINVAL;
	}
	size_t off = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const char *t = (const char *)sqlite3_column_text(st, 1);
		size_t n = (size_t)sqlite3_column_bytes(st, 1);
		if (id <= 0 || id > maxid || !t || off + n + 1 > bytes + maxid + 1)
			continue;
		memcpy(d->arena + off, t, n + 1);
		d->s[id] = d->arena + off;
		d->len[id] = (uint32_t)n;
		off += n + 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		gr_dict__free(d);
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		return -EINVAL;
	}
	s->dict = d;
	return 0;
}

const struct gr_dict *gr_segment__dict(const struct gr_segment *s)
{
	return s->dict;
}

struct gr_dict *gr_segment__take_dict(struct gr_segment *s)
{
	struct gr_dict *d = s->dict;
	s->dict = NULL;
	return d;
}

const struct gr_segment_info *gr_segment__info(const struct gr_segment *s)
{
	return &s->info;
}

int gr_segment__span(struct gr_segment *s, int64_t *ts_min, int64_t *ts_max,
		     int64_t *events, char **err)
{
	sqlite3_stmt *st;
	int rc;
	*events = 0;
	/* A sealed segment's metadata holds them, as the writer counted its
	 * blocks; asking the blocks reads a page per block (each its own
	 * leaf): a few milliseconds a segment, every time a query opens it. */
	if (s->info.sealed && s->info.events > 0 &&
	    s->info.start_ts <= s->info.end_ts &&
	    (s->info.start_ts || s->info.end_ts)) {
		*ts_min = s->info.start_ts;
		*ts_max = s->info.end_ts;
		*events = s->info.events;
		return 1;
	}
	if (sqlite3_prepare_v2(s->db, "SELECT min(ts_min), max(ts_max), "
			       "total(count) FROM blocks", -1, &st, NULL)) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		return -EIO;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return -EIO;
	}
	int any = sqlite3_column_type(st, 0) == SQLITE_INTEGER;
	if (any) {
		*ts_min = sqlite3_column_int64(st, 0);
		*ts_max = sqlite3_column_int64(st, 1);
		*events = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return any;
}

int gr_segment__table_blocks(struct gr_segment *s,
			     int (*fn)(void *ctx,
				       const struct gr_table_blocks *tb),
			     void *ctx, char **err)
{
	sqlite3_stmt *st;
	int rc, stop = 0;
	/* length(payload) reads the row header only: no payload page. */
	rc = sqlite3_prepare_v2(s->db, "SELECT tbl, count(*), total(count),"
				" min(ts_min), max(ts_max),"
				" total(length(payload)) FROM blocks GROUP BY"
				" tbl", -1, &st, NULL);
	while (rc == SQLITE_OK && !stop &&
	       (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *tbl = (const char *)sqlite3_column_text(st, 0);
		struct gr_table_blocks tb = {
			.table = tbl ? tbl : "",
			.blocks = sqlite3_column_int64(st, 1),
			.events = sqlite3_column_double(st, 2),
			.ts_min = sqlite3_column_int64(st, 3),
			.ts_max = sqlite3_column_int64(st, 4),
			.bytes = sqlite3_column_double(st, 5),
		};
		stop = fn(ctx, &tb);
		rc = SQLITE_OK;
	}
	if (!stop && rc != SQLITE_DONE) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	return stop;
}

int gr_segment__rows_inside(struct gr_segment *s, const char *table,
			    int64_t lo, int64_t hi, int64_t *rows, char **err)
{
	sqlite3_stmt *st;
	/* blocks_tbl_ts serves the range on ts_min; count and ts_max come
	 * from the row, its payload left on its overflow pages. */
	if (sqlite3_prepare_v2(s->db, "SELECT total(count) FROM blocks"
			       " WHERE tbl = ?1 AND ts_min >= ?2 AND"
			       " ts_max <= ?3", -1, &st, NULL)) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, lo);
	sqlite3_bind_int64(st, 3, hi);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return -EIO;
	}
	*rows = (int64_t)sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return 0;
}

void gr_segment__read_begin(struct gr_segment *s)
{
	sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
}

void gr_segment__read_end(struct gr_segment *s)
{
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
}

int gr_segment__blocks(struct gr_segment *s, const char *table, int64_t lo,
		       int64_t hi, char **err)
{
	sqlite3_stmt *st = s->blocks_stmt;
	if (!st) {
		if (sqlite3_prepare_v2(s->db,
			"SELECT id, count, ts_min, ts_max, crc FROM"
			" blocks WHERE tbl=?1 AND ts_max>=?2 AND ts_min<=?3"
			" ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
			*err = fmt_err("%s", sqlite3_errmsg(s->db));
			return -EIO;
		}
		s->blocks_stmt = st;
	}
	sqlite3_reset(st);
	snprintf(s->cur_table, sizeof(s->cur_table), "%s", table);
	sqlite3_bind_text(st, 1, s->cur_table, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, lo);
	sqlite3_bind_int64(st, 3, hi);
	return 0;
}

int gr_segment__next_block(struct gr_segment *s, struct gr_blockref *b,
			   char **err)
{
	return gr_segment__next_block_unless(s, b, INT64_MIN, err);
}

int gr_segment__next_block_unless(struct gr_segment *s, struct gr_blockref *b,
				  int64_t held_id, char **err)
{
	int rc = gr_segment__next_header(s, b, err);
	if (rc <= 0)
		return rc;
	if (b->id == held_id) {
		/* Checked when it was read; blocks never change once written. */
		b->payload = NULL;
		b->len = 0;
		return 1;
	}
	return gr_segment__block_payload(s, b, err);
}

int gr_segment__next_header(struct gr_segment *s, struct gr_blockref *b,
			    char **err)
{
	sqlite3_stmt *st = s->blocks_stmt;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW) {
		*err = fmt_err("%s", sqlite3_errmsg(s->db));
		return rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? -EBUSY : -EIO;
	}
	b->id = sqlite3_column_int64(st, 0);
	b->count = sqlite3_column_int64(st, 1);
	b->ts_min = sqlite3_column_int64(st, 2);
	b->ts_max = sqlite3_column_int64(st, 3);
	b->crc = (uint32_t)sqlite3_column_int64(st, 4);
	b->payload = NULL;
	b->len = 0;
	return 1;
}

int gr_segment__block_payload(struct gr_segment *s, struct gr_blockref *b,
			      char **err)
{
	int rc;
	/* The payload by a statement of its own: a step of the headers'
	 * would copy it out of its overflow pages for a block held. */
	sqlite3_stmt *ps = s->payload_stmt;
	if (!ps) {
		if (sqlite3_prepare_v2(s->db,
			"SELECT payload FROM blocks WHERE id=?1", -1, &ps,
			NULL) != SQLITE_OK) {
			*err = fmt_err("%s", sqlite3_errmsg(s->db));
			return -EIO;
		}
		s->payload_stmt = ps;
	}
	sqlite3_reset(ps);
	sqlite3_bind_int64(ps, 1, b->id);
	if ((rc = sqlite3_step(ps)) != SQLITE_ROW) {
		*err = fmt_err("block %lld of %s: %s", (long long)b->id,
			       s->cur_table, rc == SQLITE_DONE ? "gone" :
			       sqlite3_errmsg(s->db));
		return rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? -EBUSY : -EIO;
	}
	b->payload = sqlite3_column_blob(ps, 0);
	b->len = (size_t)sqlite3_column_bytes(ps, 0);
	if (gr_block_crc(s->cur_table, b->ts_min, b->ts_max, b->count,
			 b->payload, b->len) != b->crc) {
		*err = fmt_err("block %lld of %s fails its checksum",
			       (long long)b->id, s->cur_table);
		return -EBADMSG;
	}
	return 1;
}

/* By directory, then seq: sealed segments in their manifest order, then
 * the others by name (a directory has at most one open segment).  Names
 * are wall-clock times and go backwards after a clock step; seq does not. */
static int cmp_seg(const void *a, const void *b)
{
	const struct gr_catalog_seg *x = a, *y = b;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	if (!x->m != !y->m)
		return x->m ? -1 : 1;
	if (x->m && x->m != y->m)
		return x->m < y->m ? -1 : 1;
	return strcmp(x->name, y->name);
}

int gr_catalog__open(struct gr_catalog *c, char *const *dirs, int ndirs,
		     char **err)
{
	int cap = 0;
	memset(c, 0, sizeof(*c));
	*err = NULL;
	c->dirs = calloc((size_t)ndirs, sizeof(*c->dirs));
	c->manifests = calloc((size_t)ndirs, sizeof(*c->manifests));
	if (!c->dirs || !c->manifests)
		goto nomem;
	c->ndirs = ndirs;
	for (int d = 0; d < ndirs; d++) {
		DIR *dp;
		struct dirent *de;
		int rc;
		if (!(c->dirs[d] = strdup(dirs[d])))
			goto nomem;
		if (!(dp = opendir(dirs[d]))) {
			rc = -errno;
			*err = fmt_err("cannot read data directory %s: %s",
				       dirs[d], strerror(errno));
			gr_catalog__free(c);
			return rc;
		}
		while ((de = readdir(dp))) {
			struct gr_catalog_seg *sg;
			struct stat sb;
			if (!gr_segment_name_ok(de->d_name))
				continue;
			if (c->nsegs == cap) {
				cap = cap ? cap * 2 : 256;
				void *p = realloc(c->segs, (size_t)cap *
							     sizeof(*c->segs));
				if (!p) {
					closedir(dp);
					goto nomem;
				}
				c->segs = p;
			}
			sg = &c->segs[c->nsegs];
			memset(sg, 0, sizeof(*sg));
			if (asprintf(&sg->path, "%s/%s", dirs[d], de->d_name) < 0) {
				closedir(dp);
				goto nomem;
			}
			sg->name = sg->path + strlen(dirs[d]) + 1;
			sg->dir = d;
			if (stat(sg->path, &sb) == 0)
				sg->bytes = (uint64_t)sb.st_size;
			c->nsegs++;
		}
		closedir(dp);
		if ((rc = gr_manifest__read(dirs[d], &c->manifests[d]))) {
			*err = fmt_err("cannot read %s/%s: %s", dirs[d],
				       GR_MANIFEST, strerror(-rc));
			gr_catalog__free(c);
			return rc;
		}
	}
	for (int i = 0; i < c->nsegs; i++) {
		struct gr_catalog_seg *sg = &c->segs[i];
		sg->m = gr_manifest__find(&c->manifests[sg->dir], sg->name);
		if (sg->m) {
			sg->sealed = 1;
			sg->start_ts = sg->m->start_ts;
			sg->end_ts = sg->m->end_ts;
		}
	}
	if (c->nsegs)
		qsort(c->segs, (size_t)c->nsegs, sizeof(*c->segs), cmp_seg);
	return 0;
nomem:
	*err = fmt_err("out of memory");
	gr_catalog__free(c);
	return -ENOMEM;
}

void gr_catalog__free(struct gr_catalog *c)
{
	for (int i = 0; i < c->nsegs; i++)
		free(c->segs[i].path);
	for (int d = 0; d < c->ndirs; d++) {
		if (c->dirs)
			free(c->dirs[d]);
		if (c->manifests)
			gr_manifest__free(&c->manifests[d]);
	}
	free(c->segs);
	free(c->dirs);
	free(c->manifests);
	memset(c, 0, sizeof(*c));
}
