/* writer.c - the one writer of a data directory.
 *
 * Events arrive one at a time into per-table column buffers.  A buffer that
 * fills (block_rows events) is encoded into a block at once; gr_writer__flush
 * encodes the partial ones, and every block of a flush is committed in one
 * SQLite transaction.  The segment runs in WAL mode with synchronous=FULL:
 * the WAL is fsynced at each commit, so a kill -9 loses nothing flushed and
 * a power cut loses at most the last flush (NORMAL would put every commit
 * since the last checkpoint at risk).  A flush interval of ~1 s makes that
 * one fsync a second.
 *
 * Strings are interned into one dictionary for the writer's life so that
 * callers can cache ids (kernel names, comms); each segment stores the
 * strings its blocks use, written as the blocks are, which keeps segments
 * self-contained.
 *
 * Rotation seals the segment: metadata finalised, WAL folded back
 * (journal_mode=DELETE), file fsynced, made read-only (mode 0440 and, when
 * the file system and our capabilities allow, FS_IMMUTABLE_FL), hashed, and
 * its hash appended to the MANIFEST and recorded as the next segment's
 * prev_sha256.  Retention then removes the oldest sealed segments while the
 * directory is over max_disk or the file system under keep_free; it only
 * ever unlinks sealed files, so it costs the writer one unlink per segment
 * and never waits on readers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/sha256.h"
#include "store/store.h"
#include "store/summary.h"

#define DICT_CAP_STRINGS (1u << 20)
#define DICT_CAP_BYTES (64u << 20)

struct tabbuf {
	struct gr_colbuf cols[GR_MAX_COLS]; /* stored columns, in order */
	int8_t colidx[GR_MAX_COLS];         /* schema column of each */
	int nstored;
	int strcols[GR_MAX_COLS];           /* stored indices of STR cols */
	int nstr;
	int tidcol;                         /* stored index of tid */
	uint32_t n;
	int64_t ts_min, ts_max;
};

struct sealed {
	char name[96];
	uint64_t bytes;
};

struct gr_writer {
	struct gr_store_opts o;
	char *dir;
	int lock_fd;          /* flock'd DIR/.lock: one writer per directory */
	/* Root writing a directory another user owns (`sudo gpurecd` on the
	 * service's /var/lib/gpurec) gives its files to that owner, so the
	 * service can still append, seal and delete them. */
	int adopt;
	uid_t dir_uid;
	gid_t dir_gid;
	char host[256];
	char machine_id[64], boot_id[64];

	sqlite3 *db;
	sqlite3_stmt *ins_block, *ins_dict, *ins_sum;
	/* The open segment's summaries (store/summary.h): entries a flush
	 * changed are written in its transaction. */
	struct gr_sum *sum;
	struct gr_buf sum_buf;
	int in_txn;
	char seg_path[4096];
	char seg_name[96];
	int64_t seg_opened_mono;
	int64_t seg_ts_min, seg_ts_max;
	uint64_t seg_events;
	char prev_sha[65];

	struct tabbuf tabs[GR_NTABLES];
	struct gr_encoder *enc;
	struct gr_buf payload;
	/* Scratch for grouping a block's rows by thread. */
	uint32_t *perm, *grp, *gstart, *gkey_slot;
	int64_t *gkeys;

	/* The dictionary: ids 1..ndict, open-addressing hash on top. */
	char **strs;
	uint32_t *lens;
	uint32_t ndict, strs_cap;
	uint64_t dict_bytes;
	uint32_t *hash;
	uint32_t hash_cap;
	uint32_t dict_gen;
	uint8_t *seg_has; /* per id: already stored in this segment */

	/* The open transaction, undone on ROLLBACK: dictionary ids it marked
	 * stored, the segment's counters before it, events in its blocks. */
	uint32_t *txn_ids;
	uint32_t ntxn_ids, txn_ids_cap;
	uint64_t txn_seg_events, txn_events;
	int64_t txn_ts_min, txn_ts_max;

	struct sealed *sealed; /* sealed segments on disk, oldest first */
	int nsealed, sealed_cap;

	struct gr_writer_stats st;
};

static void wlog(struct gr_writer *w, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w->o.log)
		w->o.log(w->o.log_ctx, line);
	else
		fprintf(stderr, "gpurec-store: %s\n", line);
}

/* Gives a file this writer created to the directory's owner (see
 * gr_writer.adopt); a failure is logged, the file stays usable. */
static void adopt_file(struct gr_writer *w, int fd, const char *path)
{
	if (w->adopt && fchown(fd, w->dir_uid, w->dir_gid) < 0)
		wlog(w, "%s: cannot give it to uid %u: %s", path,
		     (unsigned)w->dir_uid, strerror(errno));
}

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void read_id_file(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "re");
	out[0] = 0;
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

static int exec_sql(struct gr_writer *w, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		wlog(w, "%s: %s (in: %.60s)", w->seg_path, msg ? msg : "?", sql);
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/* ---- dictionary -------------------------------------------------------- */

static uint32_t hash_str(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int dict_grow_hash(struct gr_writer *w)
{
	uint32_t cap = w->hash_cap ? w->hash_cap * 2 : 4096;
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (uint32_t id = 1; id <= w->ndict; id++) {
		uint32_t i = hash_str(w->strs[id], w->lens[id]) & (cap - 1);
		while (h[i])
			i = (i + 1) & (cap - 1);
		h[i] = id;
	}
	free(w->hash);
	w->hash = h;
	w->hash_cap = cap;
	return 0;
}

static void dict_reset(struct gr_writer *w)
{
	for (uint32_t id = 1; id <= w->ndict; id++)
		free(w->strs[id]);
	w->ndict = 0;
	w->dict_bytes = 0;
	memset(w->hash, 0, w->hash_cap * sizeof(*w->hash));
	w->dict_gen++;
}

uint32_t gr_writer__intern(struct gr_writer *w, const char *s, size_t len)
{
	if (len > UINT32_MAX / 2) {
		errno = EINVAL;
		return 0;
	}
	if ((w->ndict + 1) * 2 >= w->hash_cap && dict_grow_hash(w)) {
		errno = ENOMEM;
		return 0;
	}
	uint32_t i = hash_str(s, len) & (w->hash_cap - 1);
	for (uint32_t id; (id = w->hash[i]); i = (i + 1) & (w->hash_cap - 1))
		if (w->lens[id] == len && memcmp(w->strs[id], s, len) == 0)
			return id;
	if (w->ndict + 2 > w->strs_cap) {
		uint32_t cap = w->strs_cap ? w->strs_cap * 2 : 1024;
		char **ns = realloc(w->strs, cap * sizeof(*ns));
		if (ns)
			w->strs = ns;
		uint32_t *nl = realloc(w->lens, cap * sizeof(*nl));
		if (nl)
			w->lens = nl;
		uint8_t *nh = realloc(w->seg_has, cap);
		if (nh) {
			memset(nh + w->strs_cap, 0, cap - w->strs_cap);
			w->seg_has = nh;
		}
		if (!ns || !nl || !nh) {
			errno = ENOMEM;
			return 0;
		}
		w->strs_cap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy) {
		errno = ENOMEM;
		return 0;
	}
	memcpy(copy, s, len);
	copy[len] = 0;
	uint32_t id = ++w->ndict;
	w->strs[id] = copy;
	w->lens[id] = (uint32_t)len;
	w->seg_has[id] = 0;
	w->dict_bytes += len;
	w->hash[i] = id;
	return id;
}

uint32_t gr_writer__dict_gen(const struct gr_writer *w)
{
	return w->dict_gen;
}

/* ---- segments ---------------------------------------------------------- */

static int segment_name(char *out, size_t len, int64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tm;
	char date[32];
	gmtime_r(&sec, &tm);
	strftime(date, sizeof(date), "%Y%m%dT%H%M%S", &tm);
	return snprintf(out, len, "%s.%09" PRId64 "Z%s", date, ns % 1000000000,
			GR_SEG_SUFFIX) >= (int)len ? -ENAMETOOLONG : 0;
}

static int meta_set(struct gr_writer *w, const char *key, const char *text,
		    int64_t num, int is_num)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(w->db,
		"INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", -1,
		&st, NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (is_num)
		sqlite3_bind_int64(st, 2, num);
	else
		sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static const char segment_ddl[] =
	"PRAGMA page_size=4096;"
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"BEGIN;"
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
	"CREATE TABLE columns(tbl TEXT, idx INTEGER, name TEXT, type TEXT,"
	" PRIMARY KEY(tbl, idx)) WITHOUT ROWID;"
	"CREATE TABLE dict(id INTEGER PRIMARY KEY, s TEXT NOT NULL);"
	"CREATE TABLE blocks(id INTEGER PRIMARY KEY, tbl TEXT NOT NULL,"
	" ts_min INTEGER NOT NULL, ts_max INTEGER NOT NULL,"
	" count INTEGER NOT NULL, crc INTEGER NOT NULL, payload BLOB NOT NULL);"
	"CREATE INDEX blocks_tbl_ts ON blocks(tbl, ts_min);";

static void finalize_stmts(struct gr_writer *w)
{
	sqlite3_finalize(w->ins_block);
	sqlite3_finalize(w->ins_dict);
	sqlite3_finalize(w->ins_sum);
	w->ins_block = w->ins_dict = w->ins_sum = NULL;
}

static int segment_create(struct gr_writer *w)
{
	int64_t real = now_ns(CLOCK_REALTIME);
	int fd = -1, err;

	/* Names sort by creation time; O_EXCL settles a same-ns clash. */
	for (int tries = 0;; tries++) {
		if ((err = segment_name(w->seg_name, sizeof(w->seg_name),
					real + tries)))
			return err;
		snprintf(w->seg_path, sizeof(w->seg_path), "%s/%s", w->dir,
			 w->seg_name);
		fd = open(w->seg_path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
			  0640);
		if (fd >= 0 || errno != EEXIST || tries > 1000)
			break;
	}
	if (fd < 0) {
		err = -errno;
		wlog(w, "cannot create segment %s: %s", w->seg_path,
		     strerror(errno));
		return err;
	}
	adopt_file(w, fd, w->seg_path);
	close(fd);
	if (sqlite3_open_v2(w->seg_path, &w->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		wlog(w, "cannot open segment %s: %s", w->seg_path,
		     sqlite3_errmsg(w->db));
		sqlite3_close(w->db);
		w->db = NULL;
		return -EIO;
	}
	if ((err = exec_sql(w, segment_ddl)) || (err = exec_sql(w, gr_sum_ddl)))
		return err;

	int64_t offset = real - now_ns(CLOCK_BOOTTIME);
	err = meta_set(w, "format", "gpurec-segment", 0, 0) ||
	      meta_set(w, "format_version", NULL, GR_SEG_FORMAT, 1) ||
	      meta_set(w, "schema_version", NULL, GR_SCHEMA_VERSION, 1) ||
	      meta_set(w, "host", w->host, 0, 0) ||
	      meta_set(w, "machine_id", w->machine_id, 0, 0) ||
	      meta_set(w, "boot_id", w->boot_id, 0, 0) ||
	      meta_set(w, "clock_offset_ns", NULL, offset, 1) ||
	      meta_set(w, "created_ns", NULL, real, 1) ||
	      meta_set(w, "prev_sha256", w->prev_sha, 0, 0) ||
	      meta_set(w, "sealed", NULL, 0, 1);
	if (err)
		return -EIO;

	/* Record the stored column layout so later versions read by name. */
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(w->db, "INSERT INTO columns VALUES (?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (int t = 0; t < GR_NTABLES && !err; t++) {
		const struct gr_table *tab = &gr_tables[t];
		if (!(tab->flags & GR_TF_EVENT))
			continue;
		for (int j = 0; j < w->tabs[t].nstored && !err; j++) {
			const struct gr_column *c =
				&tab->cols[w->tabs[t].colidx[j]];
			sqlite3_bind_text(st, 1, tab->name, -1, SQLITE_STATIC);
			sqlite3_bind_int(st, 2, j);
			sqlite3_bind_text(st, 3, c->name, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 4, gr_coltype__name(c->type), -1,
					  SQLITE_STATIC);
			if (sqlite3_step(st) != SQLITE_DONE)
				err = -EIO;
			sqlite3_reset(st);
		}
	}
	sqlite3_finalize(st);
	if (err || (err = exec_sql(w, "COMMIT")))
		return err ? err : -EIO;

	if (sqlite3_prepare_v3(w->db,
			"INSERT INTO blocks(tbl, ts_min, ts_max, count, crc,"
			" payload) VALUES (?,?,?,?,?,?)", -1,
			SQLITE_PREPARE_PERSISTENT, &w->ins_block, NULL) ||
	    sqlite3_prepare_v3(w->db, "INSERT INTO dict(id, s) VALUES (?,?)",
			       -1, SQLITE_PREPARE_PERSISTENT, &w->ins_dict,
			       NULL) ||
	    sqlite3_prepare_v3(w->db, gr_sum_insert_sql, -1,
			       SQLITE_PREPARE_PERSISTENT, &w->ins_sum, NULL)) {
		wlog(w, "%s: %s", w->seg_path, sqlite3_errmsg(w->db));
		return -EIO;
	}
	w->seg_opened_mono = now_ns(CLOCK_MONOTONIC);
	w->seg_ts_min = INT64_MAX;
	w->seg_ts_max = INT64_MIN;
	w->seg_events = 0;
	gr_sum__reset(w->sum);
	if (w->seg_has)
		memset(w->seg_has, 0, w->strs_cap);
	return 0;
}

static uint64_t file_bytes(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static int set_immutable(const char *path, int on)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	int flags, err = 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		err = -errno;
	} else {
		int nf = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
		if (nf != flags && ioctl(fd, FS_IOC_SETFLAGS, &nf) < 0)
			err = -errno;
	}
	close(fd);
	return err;
}

static int append_manifest(struct gr_writer *w, const char *line)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", w->dir, GR_MANIFEST);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	adopt_file(w, fd, path);
	size_t len = strlen(line);
	ssize_t n = write(fd, line, len);
	int err = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
	if (!err && fsync(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int fsync_path(const char *path, int dir)
{
	int fd = open(path, (dir ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = fsync(fd) < 0 ? -errno : 0;
	close(fd);
	return err;
}

static int sealed_push(struct gr_writer *w, const char *name, uint64_t bytes)
{
	if (w->nsealed == w->sealed_cap) {
		int cap = w->sealed_cap ? w->sealed_cap * 2 : 64;
		void *p = realloc(w->sealed, (size_t)cap * sizeof(*w->sealed));
		if (!p)
			return -ENOMEM;
		w->sealed = p;
		w->sealed_cap = cap;
	}
	snprintf(w->sealed[w->nsealed].name, sizeof(w->sealed[0].name), "%s",
		 name);
	w->sealed[w->nsealed++].bytes = bytes;
	return 0;
}

/* Seals the segment open in w->db (which may be a crashed one being
 * recovered, in which case events/ts come from its metadata). */
static int sum_store(void *ctx, const struct gr_sum_ent *e);
static void sum_reload(struct gr_writer *w);

static int segment_seal(struct gr_writer *w)
{
	int err = 0;
	char line[1024], hex[65];
	uint8_t sha[32];

	if (w->seg_ts_min > w->seg_ts_max)
		w->seg_ts_min = w->seg_ts_max = 0;
	/* Folding the WAL back needs every reader (a running gpurec) to
	 * let go: wait a little, and if one holds on, undo the seal marks
	 * and keep writing this segment; the next rotation retries.  A
	 * segment is never half sealed, and the chain never forks. */
	sqlite3_busy_timeout(w->db, 3000);
	if (exec_sql(w, "BEGIN") ||
	    meta_set(w, "sealed", NULL, 1, 1) ||
	    meta_set(w, "start_ts", NULL, w->seg_ts_min, 1) ||
	    meta_set(w, "end_ts", NULL, w->seg_ts_max, 1) ||
	    meta_set(w, "events", NULL, (int64_t)w->seg_events, 1) ||
	    meta_set(w, "sealed_ns", NULL, now_ns(CLOCK_REALTIME), 1) ||
	    gr_sum__rollup(w->sum) ||
	    gr_sum__each(w->sum, 1, sum_store, w) ||
	    exec_sql(w, "COMMIT")) {
		exec_sql(w, "ROLLBACK");
		sum_reload(w); /* without the whole-segment rows */
		sqlite3_busy_timeout(w->db, 0);
		return -EIO;
	}
	sqlite3_stmt *jm = NULL;
	const char *mode = NULL;
	if (sqlite3_prepare_v2(w->db, "PRAGMA journal_mode=DELETE", -1, &jm,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(jm) == SQLITE_ROW)
		mode = (const char *)sqlite3_column_text(jm, 0);
	int folded = mode && strcmp(mode, "delete") == 0;
	sqlite3_finalize(jm);
	if (!folded) {
		meta_set(w, "sealed", NULL, 0, 1);
		sqlite3_busy_timeout(w->db, 0);
		wlog(w, "cannot seal %s now: a reader holds it; writing on and "
		     "retrying at the next rotation", w->seg_path);
		return -EBUSY;
	}
	finalize_stmts(w);
	if (sqlite3_close(w->db) != SQLITE_OK) {
		wlog(w, "%s: close: %s", w->seg_path, sqlite3_errmsg(w->db));
		err = -EIO;
	}
	w->db = NULL;
	if (err) {
		wlog(w, "cannot seal %s; it stays unsealed", w->seg_path);
		return err;
	}
	if ((err = fsync_path(w->seg_path, 0)) ||
	    chmod(w->seg_path, 0440) < 0 ||
	    (err = gr_sha256__file(w->seg_path, sha))) {
		err = err ? err : -errno;
		wlog(w, "cannot seal %s: %s", w->seg_path, strerror(-err));
		return err;
	}
	gr_hex(sha, 32, hex);
	uint64_t bytes = file_bytes(w->seg_path);
	snprintf(line, sizeof(line),
		 "seal %s sha256=%s prev=%s start=%" PRId64 " end=%" PRId64
		 " events=%" PRIu64 " bytes=%" PRIu64 " host=%s\n",
		 w->seg_name, hex, w->prev_sha, w->seg_ts_min, w->seg_ts_max,
		 w->seg_events, bytes, w->host);
	if ((err = append_manifest(w, line))) {
		wlog(w, "cannot append to %s/%s: %s", w->dir, GR_MANIFEST,
		     strerror(-err));
		return err;
	}
	memcpy(w->prev_sha, hex, sizeof(hex));
	if (!w->o.no_immutable)
		set_immutable(w->seg_path, 1); /* best effort: see header */
	fsync_path(w->dir, 1);
	w->st.segments++;
	wlog(w, "sealed %s: %" PRIu64 " events, %" PRIu64 " bytes, sha256 %s",
	     w->seg_name, w->seg_events, bytes, hex);
	return sealed_push(w, w->seg_name, bytes);
}

/* ---- retention --------------------------------------------------------- */

static uint64_t disk_used(struct gr_writer *w)
{
	uint64_t sum = 0;
	char wal[4200];
	for (int i = 0; i < w->nsealed; i++)
		sum += w->sealed[i].bytes;
	if (w->db) {
		sum += file_bytes(w->seg_path);
		snprintf(wal, sizeof(wal), "%s-wal", w->seg_path);
		sum += file_bytes(wal);
	}
	return sum;
}

static uint64_t fs_free(struct gr_writer *w)
{
	struct statvfs sv;
	if (statvfs(w->dir, &sv) < 0)
		return UINT64_MAX;
	return (uint64_t)sv.f_bavail * sv.f_frsize;
}

static void retention(struct gr_writer *w)
{
	for (;;) {
		const char *why = NULL;
		uint64_t used = disk_used(w);
		if (w->o.max_disk && used > w->o.max_disk)
			why = "max-disk";
		else if (w->o.keep_free && fs_free(w) < w->o.keep_free)
			why = "keep-free";
		if (!why)
			break;
		if (w->nsealed == 0) {
			/* Only the open segment is left; it rotates early
			 * (see effective_segment_size) so this passes. */
			break;
		}
		struct sealed victim = w->sealed[0];
		char path[4200], line[512];
		snprintf(path, sizeof(path), "%s/%s", w->dir, victim.name);
		/* The manifest says so first: a crash in between leaves a
		 * logged deletion, never an unexplained missing segment. */
		snprintf(line, sizeof(line),
			 "delete %s reason=%s at=%" PRId64 " bytes=%" PRIu64 "\n",
			 victim.name, why, now_ns(CLOCK_REALTIME), victim.bytes);
		int err = append_manifest(w, line);
		if (err) {
			wlog(w, "retention: cannot log the deletion of %s (%s); "
			     "keeping it", path, strerror(-err));
			break;
		}
		set_immutable(path, 0);
		if (unlink(path) < 0 && errno != ENOENT)
			wlog(w, "retention: cannot delete %s: %s", path,
			     strerror(errno));
		memmove(w->sealed, w->sealed + 1,
			(size_t)(--w->nsealed) * sizeof(*w->sealed));
		w->st.deleted++;
		wlog(w, "retention (%s): deleted %s (%" PRIu64 " bytes)", why,
		     victim.name, victim.bytes);
	}
	w->st.disk_bytes = disk_used(w);
}

/* ---- blocks ------------------------------------------------------------ */

static int sum_store(void *ctx, const struct gr_sum_ent *e)
{
	struct gr_writer *w = ctx;
	if (gr_sum__bind(w->ins_sum, e, &w->sum_buf))
		return -ENOMEM;
	int rc = sqlite3_step(w->ins_sum);
	sqlite3_reset(w->ins_sum);
	if (rc != SQLITE_DONE) {
		wlog(w, "%s: summary insert: %s", w->seg_path,
		     sqlite3_errmsg(w->db));
		return -EIO;
	}
	return 0;
}

static int begin_txn(struct gr_writer *w)
{
	if (w->in_txn)
		return 0;
	if (exec_sql(w, "BEGIN"))
		return -EIO;
	w->in_txn = 1;
	w->ntxn_ids = 0;
	w->txn_events = 0;
	w->txn_seg_events = w->seg_events;
	w->txn_ts_min = w->seg_ts_min;
	w->txn_ts_max = w->seg_ts_max;
	return 0;
}

/* Puts the summaries back to what the segment holds: after a rollback,
 * the accumulator counts events of blocks that were never written. */
static void sum_reload(struct gr_writer *w)
{
	sqlite3_stmt *st;
	gr_sum__reset(w->sum);
	if (sqlite3_prepare_v2(w->db, "SELECT * FROM summary", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		if (gr_sum__put_row(w->sum, st))
			wlog(w, "%s: summaries could not be reloaded",
			     w->seg_path);
	sqlite3_finalize(st);
}

/* Ends the open transaction.  On rollback, what it wrote never was: the
 * dictionary marks and segment counters go back, and the events of the
 * blocks it had written (their buffers already reused) count as dropped. */
static int end_txn(struct gr_writer *w, int commit)
{
	int err = 0;
	if (!w->in_txn)
		return 0;
	w->in_txn = 0;
	if (commit && exec_sql(w, "COMMIT")) {
		err = -EIO;
		commit = 0;
	}
	if (!commit) {
		exec_sql(w, "ROLLBACK");
		for (uint32_t i = 0; i < w->ntxn_ids; i++)
			w->seg_has[w->txn_ids[i]] = 0;
		w->seg_events = w->txn_seg_events;
		w->seg_ts_min = w->txn_ts_min;
		w->seg_ts_max = w->txn_ts_max;
		w->st.dropped += w->txn_events;
		sum_reload(w);
		if (w->txn_events)
			wlog(w, "%s: a flush failed; %" PRIu64 " events of its "
			     "blocks are lost", w->seg_path, w->txn_events);
	}
	w->ntxn_ids = 0;
	w->txn_events = 0;
	return err;
}

/* Orders a block's rows so each thread's events are contiguous, in their
 * original order (a stable counting sort on tid, groups in order of first
 * appearance).  Per-thread runs are what repeat in a launch stream (the
 * same step sequence, monotonic timestamps), so grouping lets the delta
 * encoding and zstd see them; interleaved threads would look like noise.
 * Readers promise no row order within a block: SQL has none without
 * ORDER BY.  Returns the permutation for the encoder, or NULL when the
 * block has one thread. */
static const uint32_t *group_by_thread(struct gr_writer *w, struct tabbuf *tb)
{
	uint32_t n = tb->n, ng = 0, hcap = 1;
	const int64_t *tid = tb->cols[tb->tidcol].v;

	while (hcap < 2 * n)
		hcap <<= 1;
	memset(w->gkey_slot, 0xff, hcap * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = (uint64_t)tid[i] * 0x9e3779b97f4a7c15ull;
		uint32_t j = (uint32_t)(h >> 32) & (hcap - 1);
		while (w->gkey_slot[j] != UINT32_MAX &&
		       w->gkeys[w->gkey_slot[j]] != tid[i])
			j = (j + 1) & (hcap - 1);
		if (w->gkey_slot[j] == UINT32_MAX) {
			w->gkey_slot[j] = ng;
			w->gkeys[ng] = tid[i];
			w->gstart[ng++] = 0;
		}
		w->grp[i] = w->gkey_slot[j];
		w->gstart[w->grp[i]]++;
	}
	if (ng < 2)
		return NULL;
	for (uint32_t g = 0, sum = 0; g < ng; g++) {
		uint32_t c = w->gstart[g];
		w->gstart[g] = sum;
		sum += c;
	}
	for (uint32_t i = 0; i < n; i++)
		w->perm[w->gstart[w->grp[i]]++] = i;
	return w->perm;
}

static void tab_reset(struct gr_writer *w, struct tabbuf *tb)
{
	for (int j = 0; j < tb->nstored; j++)
		if (tb->cols[j].nulls)
			memset(tb->cols[j].nulls, 0, (w->o.block_rows + 7) / 8);
	tb->n = 0;
	tb->ts_min = INT64_MAX;
	tb->ts_max = INT64_MIN;
}

static int write_block(struct gr_writer *w, int t)
{
	struct tabbuf *tb = &w->tabs[t];
	const char *name = gr_tables[t].name;
	int err;

	if (!tb->n)
		return 0;
	if ((err = begin_txn(w)))
		return err;
	/* Store the strings this block uses that the segment lacks. */
	for (int k = 0; k < tb->nstr; k++) {
		struct gr_colbuf *c = &tb->cols[tb->strcols[k]];
		for (uint32_t i = 0; i < tb->n; i++) {
			uint32_t id = (uint32_t)c->v[i];
			if (!id || w->seg_has[id])
				continue;
			sqlite3_bind_int64(w->ins_dict, 1, id);
			sqlite3_bind_text(w->ins_dict, 2, w->strs[id],
					  (int)w->lens[id], SQLITE_STATIC);
			int rc = sqlite3_step(w->ins_dict);
			sqlite3_reset(w->ins_dict);
			if (rc != SQLITE_DONE) {
				wlog(w, "%s: dict insert: %s", w->seg_path,
				     sqlite3_errmsg(w->db));
				return -EIO;
			}
			if (w->ntxn_ids == w->txn_ids_cap) {
				uint32_t cap = w->txn_ids_cap ?
					       w->txn_ids_cap * 2 : 256;
				uint32_t *p = realloc(w->txn_ids,
						      cap * sizeof(*p));
				if (!p)
					return -ENOMEM;
				w->txn_ids = p;
				w->txn_ids_cap = cap;
			}
			w->txn_ids[w->ntxn_ids++] = id;
			w->seg_has[id] = 1;
		}
	}
	const uint32_t *perm = group_by_thread(w, tb);
	if ((err = gr_encoder__encode(w->enc, tb->cols, tb->nstored, tb->n,
				      perm, &w->payload))) {
		wlog(w, "encode %s block: %s", name, strerror(-err));
		return err;
	}
	uint32_t crc = gr_block_crc(name, tb->ts_min, tb->ts_max, tb->n,
				    w->payload.p, w->payload.len);
	sqlite3_bind_text(w->ins_block, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(w->ins_block, 2, tb->ts_min);
	sqlite3_bind_int64(w->ins_block, 3, tb->ts_max);
	sqlite3_bind_int64(w->ins_block, 4, tb->n);
	sqlite3_bind_int64(w->ins_block, 5, crc);
	sqlite3_bind_blob(w->ins_block, 6, w->payload.p, (int)w->payload.len,
			  SQLITE_STATIC);
	int rc = sqlite3_step(w->ins_block);
	sqlite3_reset(w->ins_block);
	if (rc != SQLITE_DONE) {
		wlog(w, "%s: block insert: %s", w->seg_path,
		     sqlite3_errmsg(w->db));
		return -EIO;
	}
	struct gr_sum_rows rows = { .t = t, .n = tb->n };
	for (int j = 0; j < tb->nstored; j++) {
		rows.v[tb->colidx[j]] = tb->cols[j].v;
		rows.nulls[tb->colidx[j]] = tb->cols[j].nulls;
	}
	if ((err = gr_sum__add(w->sum, &rows, INT64_MIN, INT64_MAX, NULL, 0,
				~0u)))
		return err;
	w->st.blocks++;
	w->st.payload_bytes += w->payload.len;
	w->seg_events += tb->n;
	w->txn_events += tb->n;
	if (tb->ts_min < w->seg_ts_min)
		w->seg_ts_min = tb->ts_min;
	if (tb->ts_max > w->seg_ts_max)
		w->seg_ts_max = tb->ts_max;
	tab_reset(w, tb);
	return 0;
}

int gr_writer__append(struct gr_writer *w, int t, const int64_t *vals,
		      uint64_t nullmask)
{
	if (t < 0 || t >= GR_NTABLES || !(gr_tables[t].flags & GR_TF_EVENT))
		return -EINVAL;
	struct tabbuf *tb = &w->tabs[t];

	if (tb->n >= w->o.block_rows) {
		/* A full buffer whose block could not be written (disk
		 * full, I/O error): try once more, else give its events up,
		 * counted, rather than grow past the buffer. */
		int err = write_block(w, t);
		if (err) {
			w->st.dropped += tb->n;
			wlog(w, "dropping %u %s events: their block cannot be "
			     "written (%s)", tb->n, gr_tables[t].name,
			     strerror(-err));
			tab_reset(w, tb);
		}
	}
	uint32_t n = tb->n;
	for (int k = 0; k < tb->nstr; k++) {
		int ci = tb->colidx[tb->strcols[k]];
		if (!(nullmask >> ci & 1) &&
		    (vals[ci] <= 0 || (uint64_t)vals[ci] > w->ndict))
			return -EINVAL;
	}
	for (int j = 0; j < tb->nstored; j++) {
		int ci = tb->colidx[j];
		struct gr_colbuf *c = &tb->cols[j];
		if (nullmask >> ci & 1) {
			if (!c->nulls) {
				c->nulls = calloc((w->o.block_rows + 7) / 8, 1);
				if (!c->nulls)
					return -ENOMEM;
			}
			c->nulls[n >> 3] |= (uint8_t)(1u << (n & 7));
			c->v[n] = 0;
		} else {
			c->v[n] = vals[ci];
		}
	}
	int64_t ts = vals[0]; /* column 0 of every event table is ts */
	if (ts < tb->ts_min)
		tb->ts_min = ts;
	if (ts > tb->ts_max)
		tb->ts_max = ts;
	w->st.events++;
	if (++tb->n == w->o.block_rows)
		return write_block(w, t);
	return 0;
}

static uint64_t effective_segment_size(const struct gr_writer *w)
{
	uint64_t s = w->o.segment_size;
	/* Retention can only delete sealed segments, so keep several of
	 * them inside max_disk (journald caps files at an eighth). */
	if (w->o.max_disk && s > w->o.max_disk / 4)
		s = w->o.max_disk / 4;
	return s;
}

/* Closes and removes the open segment, which holds no events: an empty
 * file in the chain would only be noise. */
static int segment_discard(struct gr_writer *w)
{
	char side[4200];
	finalize_stmts(w);
	sqlite3_close(w->db);
	w->db = NULL;
	snprintf(side, sizeof(side), "%s-wal", w->seg_path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", w->seg_path);
	unlink(side);
	return unlink(w->seg_path) < 0 ? -errno : 0;
}

static int rotate(struct gr_writer *w)
{
	if (!w->seg_events) {
		/* Nothing to seal: keep the segment, restart its clock. */
		w->seg_opened_mono = now_ns(CLOCK_MONOTONIC);
		return 0;
	}
	int err = segment_seal(w);
	if (err == -EBUSY || (err && w->db)) {
		/* Still open and intact: keep writing it. */
		w->seg_opened_mono = now_ns(CLOCK_MONOTONIC);
		return 0;
	}
	if (w->ndict > DICT_CAP_STRINGS || w->dict_bytes > DICT_CAP_BYTES)
		dict_reset(w);
	int err2 = segment_create(w);
	retention(w);
	return err2 ? err2 : err;
}

int gr_writer__flush(struct gr_writer *w)
{
	int err = 0;
	for (int t = 0; t < GR_NTABLES && !err; t++)
		err = write_block(w, t);
	if (!err && w->in_txn)
		err = gr_sum__each(w->sum, 1, sum_store, w);
	int e2 = end_txn(w, !err);
	if (err || e2)
		return err ? err : e2;
	sqlite3_int64 bytes = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(w->db, "SELECT page_count * page_size FROM "
				      "pragma_page_count, pragma_page_size",
			       -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			bytes = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if ((uint64_t)bytes >= effective_segment_size(w) ||
	    now_ns(CLOCK_MONOTONIC) - w->seg_opened_mono >= w->o.segment_age_ns)
		return rotate(w);
	if (w->o.keep_free || w->o.max_disk)
		retention(w);
	return 0;
}

int gr_writer__rotate(struct gr_writer *w)
{
	int err = gr_writer__flush(w);
	return err ? err : rotate(w);
}

/* ---- open / close ------------------------------------------------------ */

/* Reads what a crashed segment holds, so its seal line is right.
 * Returns 0, or -EIO if it cannot be read (then it is left alone). */
static int recover_meta(struct gr_writer *w)
{
	sqlite3_stmt *st;
	int rc;
	w->seg_events = 0;
	w->seg_ts_min = INT64_MAX;
	w->seg_ts_max = INT64_MIN;
	if (sqlite3_prepare_v2(w->db, "SELECT sum(count), min(ts_min),"
				      " max(ts_max) FROM blocks", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		w->seg_events = (uint64_t)sqlite3_column_int64(st, 0);
		w->seg_ts_min = sqlite3_column_int64(st, 1);
		w->seg_ts_max = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -EIO;
}

/* A crash in the middle of append_manifest() can leave a last line
 * without its newline, and the next append would be glued to it: the
 * recovery's own seal line would be lost with it.  Such a tail was never
 * a line; it is cut off, and said.  (The segment it was sealing is not
 * yet immutable then and is sealed again by scan_dir().) */
static void manifest_repair_tail(struct gr_writer *w)
{
	char path[4200], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", w->dir, GR_MANIFEST);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	off_t size = fstat(fd, &st) == 0 ? st.st_size : 0;
	off_t from = size > (off_t)sizeof(buf) ? size - (off_t)sizeof(buf) : 0;
	ssize_t n = size ? pread(fd, buf, (size_t)(size - from), from) : 0;
	if (n > 0 && buf[n - 1] != '\n') {
		ssize_t i = n - 1;
		while (i >= 0 && buf[i] != '\n')
			i--;
		if (i >= 0 || from == 0) {
			off_t keep = from + i + 1;
			if (ftruncate(fd, keep) == 0 && fsync(fd) == 0)
				wlog(w, "%s: removed a torn last line (%lld "
				     "bytes, an append cut short by a crash)",
				     path, (long long)(size - keep));
			else
				wlog(w, "%s: cannot remove a torn last line: "
				     "%s", path, strerror(errno));
		}
	}
	close(fd);
}

/* Seals segments left unsealed by a crash and loads the sealed list. */
static int scan_dir(struct gr_writer *w)
{
	struct gr_manifest m;
	char **names;
	int n, err;

	manifest_repair_tail(w);
	if ((err = gr_segments__list(w->dir, &names, &n)))
		return err;
	if ((err = gr_manifest__read(w->dir, &m))) {
		wlog(w, "cannot read %s/%s: %s", w->dir, GR_MANIFEST,
		     strerror(-err));
		goto out;
	}
	snprintf(w->prev_sha, sizeof(w->prev_sha), "-");
	for (int i = m.n - 1; i >= 0; i--) {
		snprintf(w->prev_sha, sizeof(w->prev_sha), "%s", m.e[i].sha256);
		break;
	}
	for (int i = 0; i < n && !err; i++) {
		const struct gr_manifest_entry *e = gr_manifest__find(&m,
								      names[i]);
		snprintf(w->seg_path, sizeof(w->seg_path), "%s/%s", w->dir,
			 names[i]);
		if (e) {
			err = sealed_push(w, names[i], file_bytes(w->seg_path));
			continue;
		}
		/* Not in the manifest: the open segment of a writer that
		 * died.  Its committed blocks are kept; seal it now. */
		snprintf(w->seg_name, sizeof(w->seg_name), "%s", names[i]);
		chmod(w->seg_path, 0640);
		if (sqlite3_open_v2(w->seg_path, &w->db, SQLITE_OPEN_READWRITE,
				    NULL) != SQLITE_OK ||
		    sqlite3_exec(w->db, "PRAGMA quick_check", NULL, NULL,
				 NULL) != SQLITE_OK) {
			wlog(w, "recovery: %s cannot be opened (%s); left as "
				"is, outside the chain", w->seg_path,
			     sqlite3_errmsg(w->db));
			sqlite3_close(w->db);
			w->db = NULL;
			continue;
		}
		if (recover_meta(w)) {
			wlog(w, "recovery: %s cannot be read (%s); left as is, "
				"outside the chain", w->seg_path,
			     sqlite3_errmsg(w->db));
			sqlite3_close(w->db);
			w->db = NULL;
			continue;
		}
		if (!w->seg_events) {
			wlog(w, "recovery: removing %s, left open and empty by "
				"an earlier run", names[i]);
			segment_discard(w);
			continue;
		}
		wlog(w, "recovery: sealing %s left open by an earlier run "
			"(%" PRIu64 " events)", names[i], w->seg_events);
		segment_seal(w);
	}
	gr_manifest__free(&m);
out:
	gr_segments__free(names, n);
	return err;
}

static void tabs_init_layout(struct gr_writer *w)
{
	for (int t = 0; t < GR_NTABLES; t++) {
		const struct gr_table *tab = &gr_tables[t];
		struct tabbuf *tb = &w->tabs[t];
		tb->ts_min = INT64_MAX;
		tb->ts_max = INT64_MIN;
		if (!(tab->flags & GR_TF_EVENT))
			continue;
		for (int c = 0; c < tab->ncols; c++) {
			if (tab->cols[c].type == GR_HOST)
				continue;
			if (tab->cols[c].type == GR_STR)
				tb->strcols[tb->nstr++] = tb->nstored;
			if (strcmp(tab->cols[c].name, "tid") == 0)
				tb->tidcol = tb->nstored;
			tb->colidx[tb->nstored++] = (int8_t)c;
		}
	}
}

static int tabs_alloc(struct gr_writer *w, int t)
{
	struct tabbuf *tb = &w->tabs[t];
	for (int j = 0; j < tb->nstored; j++) {
		tb->cols[j].v = malloc((size_t)w->o.block_rows * sizeof(int64_t));
		if (!tb->cols[j].v)
			return -ENOMEM;
	}
	return 0;
}

struct gr_writer *gr_writer__open(const struct gr_store_opts *opts)
{
	struct gr_writer *w = calloc(1, sizeof(*w));
	int err = -ENOMEM;

	if (!w)
		goto fail;
	w->lock_fd = -1;
	w->o = *opts;
	if (!w->o.segment_size)
		w->o.segment_size = 256ull << 20;
	if (!w->o.segment_age_ns)
		w->o.segment_age_ns = 3600ll * 1000000000;
	if (!w->o.block_rows)
		w->o.block_rows = 65536;
	if (w->o.block_rows > GR_BLOCK_MAX_ROWS) /* what readers accept */
		w->o.block_rows = GR_BLOCK_MAX_ROWS;
	if (!w->o.zstd_level)
		w->o.zstd_level = 3;
	if (!(w->dir = strdup(opts->dir)))
		goto fail;
	if (opts->host)
		snprintf(w->host, sizeof(w->host), "%s", opts->host);
	else if (gethostname(w->host, sizeof(w->host) - 1) < 0)
		snprintf(w->host, sizeof(w->host), "localhost");
	for (char *p = w->host; *p; p++)
		if (*p == ' ' || *p == '\n')
			*p = '_';
	read_id_file("/etc/machine-id", w->machine_id, sizeof(w->machine_id));
	read_id_file("/proc/sys/kernel/random/boot_id", w->boot_id,
		     sizeof(w->boot_id));
	if (mkdir(w->dir, 0750) < 0 && errno != EEXIST) {
		err = -errno;
		wlog(w, "cannot create %s: %s", w->dir, strerror(errno));
		goto fail;
	}
	struct stat dst;
	if (geteuid() == 0 && stat(w->dir, &dst) == 0 && dst.st_uid != 0) {
		w->adopt = 1;
		w->dir_uid = dst.st_uid;
		w->dir_gid = dst.st_gid;
	}
	/* One writer per directory: a second would fork the hash chain. */
	char lock[4200];
	snprintf(lock, sizeof(lock), "%s/%s", w->dir, GR_LOCK_FILE);
	w->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (w->lock_fd < 0 || flock(w->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		wlog(w, "%s: %s", lock, err == -EBUSY ?
		     "another writer holds this data directory" :
		     strerror(-err));
		goto fail;
	}
	adopt_file(w, w->lock_fd, lock);
	if (!(w->sum = gr_sum__new()) ||
	    !(w->enc = gr_encoder__new(w->o.zstd_level)))
		goto fail;
	tabs_init_layout(w);
	for (int t = 0; t < GR_NTABLES; t++)
		if ((err = tabs_alloc(w, t)))
			goto fail;
	if ((err = dict_grow_hash(w)))
		goto fail;
	{
		size_t n = w->o.block_rows, hcap = 1;
		while (hcap < 2 * n)
			hcap <<= 1;
		w->perm = malloc(n * sizeof(*w->perm));
		w->grp = malloc(n * sizeof(*w->grp));
		w->gstart = malloc(n * sizeof(*w->gstart));
		w->gkeys = malloc(n * sizeof(*w->gkeys));
		w->gkey_slot = malloc(hcap * sizeof(*w->gkey_slot));
		err = -ENOMEM;
		if (!w->perm || !w->grp || !w->gstart || !w->gkeys ||
		    !w->gkey_slot)
			goto fail;
	}
	if ((err = scan_dir(w)))
		goto fail;
	if ((err = segment_create(w)))
		goto fail;
	retention(w);
	return w;
fail:
	if (w) {
		w->st.events = 0;
		if (w->db) {
			sqlite3_finalize(w->ins_block);
			sqlite3_finalize(w->ins_dict);
			sqlite3_close(w->db);
			w->db = NULL;
		}
		gr_writer__close(w);
	}
	errno = -err;
	return NULL;
}

int gr_writer__close(struct gr_writer *w)
{
	int err = 0;
	if (!w)
		return 0;
	if (w->db) {
		err = gr_writer__flush(w);
		int e2 = w->seg_events ? segment_seal(w) : segment_discard(w);
		if (w->db) {
			/* Not sealed (a reader held it): the next writer's
			 * recovery seals it, as the newest segment. */
			sqlite3_finalize(w->ins_block);
			sqlite3_finalize(w->ins_dict);
			sqlite3_close(w->db);
			w->db = NULL;
		}
		err = err ? err : e2;
	}
	for (int t = 0; t < GR_NTABLES; t++)
		for (int j = 0; j < w->tabs[t].nstored; j++) {
			free(w->tabs[t].cols[j].v);
			free(w->tabs[t].cols[j].nulls);
		}
	for (uint32_t id = 1; id <= w->ndict; id++)
		free(w->strs[id]);
	free(w->strs);
	free(w->lens);
	free(w->seg_has);
	free(w->hash);
	free(w->sealed);
	free(w->txn_ids);
	free(w->perm);
	free(w->grp);
	free(w->gstart);
	free(w->gkeys);
	free(w->gkey_slot);
	gr_encoder__free(w->enc);
	gr_buf__free(&w->payload);
	gr_sum__free(w->sum);
	gr_buf__free(&w->sum_buf);
	if (w->lock_fd >= 0)
		close(w->lock_fd); /* releases the flock */
	free(w->dir);
	free(w);
	return err;
}

void gr_writer__stats(const struct gr_writer *w, struct gr_writer_stats *st)
{
	*st = w->st;
}

const char *gr_writer__segment_path(const struct gr_writer *w)
{
	return w->seg_path;
}
