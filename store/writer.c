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
 * and never waits on readers.  max_age deletes the oldest sealed segments
 * whose newest event is older than that, whatever the space (journald's
 * MaxRetentionSec); min_age spares recent segments from every reason, so
 * with it the directory may stay over max_disk (status says so).
 *
 * The directory may belong to another user while root writes it, so it
 * is opened once (dirfd) and every file in it through openat(O_NOFOLLOW),
 * checked on the fd; files are created O_EXCL and only those fchown'd.  A
 * segment is built under .NAME.tmp and renamed into place, so a file with
 * a segment's name is always a valid segment.
 *
 * A full disk: SQLite rolls a refused commit back whole, so the blocks of
 * the open transaction are kept (the log) until it commits; retention
 * deletes the oldest sealed segment it may (reason disk-full) and the
 * transaction is written again.  Only then are its events dropped, counted
 * by cause (store:disk_full, store:io_error) and written as `drops` rows by
 * the next flush that succeeds.  Without room for a segment at all the
 * writer runs without one, counting, and tries again at each flush.
 */
#include <dirent.h>
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

#include "common/version.h"
#include "store/codec.h"
#include "store/crypto.h"
#include "store/fss.h"
#include "store/store.h"
#include "store/ncclcoll.h"
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
	uint32_t hw;                        /* most rows it has held */
	int64_t ts_min, ts_max;
};

struct sealed {
	char name[96];
	uint64_t bytes;
	int64_t seq;
	int64_t mtime_ns;     /* when it was last written: its seal */
	int64_t newest_ns;    /* its newest event's time (its seal's when it
			       * holds none): what max_age measures */
};

/* A block written in the open transaction, kept until the commit: a commit
 * refused for want of space is tried again, after retention made room,
 * from these copies (SQLite rolls the whole transaction back on
 * SQLITE_FULL, and the column buffers are reused by then). */
struct logblk {
	int t;
	int64_t ts_min, ts_max;
	uint32_t n, crc;
	size_t off, len;      /* payload in gr_writer.log_bytes */
};

/* A source of `drops` rows and the events it counted since open. */
struct dsrc {
	char name[64];
	uint64_t n;
};

#define LOG_CAP_BYTES (64u << 20)
#define LOG_CAP_BLOCKS 4096

struct gr_writer {
	struct gr_store_opts o;
	char *dir;
	/* DIR, opened once: every file in it is opened relative to this fd
	 * with O_NOFOLLOW, so a symlink or a renamed parent planted by
	 * whoever owns DIR never leads root's writes elsewhere. */
	int dirfd;
	int lock_fd;          /* flock'd DIR/.lock: one writer per directory */
	/* Root writing a directory another user owns (`sudo gpurecd` on the
	 * service's /var/lib/gpurec) gives the files it creates (O_EXCL,
	 * through their fd) to that owner, so the service can still append,
	 * seal and delete them. */
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
	/* A statement of the open transaction failed (SQLite may have rolled
	 * it back): later blocks go to the log only, and the flush tries the
	 * whole transaction again or gives it up. */
	int txn_err;
	struct logblk *log;
	int nlog, log_cap;
	struct gr_buf log_bytes;
	uint32_t txn_store_rows;  /* store:* drops rows in the transaction */
	uint64_t txn_store_n[2];  /* ... and the events they count */
	/* No segment is open (the disk was full when one had to be made):
	 * appended events are dropped, counted under this error, and each
	 * flush tries again to open one. */
	int nodb_err;
	int opened;             /* gr_writer__open succeeded */
	char seg_path[4096];
	char seg_name[96];
	int64_t seg_opened_mono;
	int64_t seg_ts_min, seg_ts_max;
	uint64_t seg_events;
	char prev_sha[65];
	/* MANIFEST's appending side (store/manifest.c). */
	struct gr_manifest_w *mw;
	int tick_failing;       /* the last key tick failed (logged once) */
	/* This run's `start` line while a full disk keeps it out of
	 * MANIFEST: written before any other line of the run. */
	char start_body[192];
	/* seq of the open segment: the last sealed one's + 1 (docs/storage.md);
	 * segments are ordered by it, not by their wall-clock names. */
	int64_t seq;
	int64_t last_seq;
	/* Added to CLOCK_REALTIME: 0 except under opts.test_clock_step_ns. */
	int64_t clock_off;
	int clock_stepped;

	struct tabbuf tabs[GR_NTABLES];
	struct gr_encoder *enc;
	struct gr_buf payload;
	/* nccl blocks' collectives (ncclcoll.h) and their statement. */
	struct gr_coll_builder *coll;
	struct gr_buf coll_payload;
	sqlite3_stmt *ins_coll, *ins_arr;
	int coll_warned;
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
	/* A crashed segment recovery could not seal for want of space:
	 * sealed before any new segment is made. */
	char unsealed[96];
	int nsealed, sealed_cap;

	struct gr_writer_stats st;
	/* Store losses (0: disk full, 1: I/O error) not yet in a committed
	 * drops row. */
	uint64_t lost_pending[2];
	struct dsrc *dsrc;
	int ndsrc;
};

static const char *const lost_source[2] = { GR_DROP_DISK_FULL,
					    GR_DROP_IO_ERROR };

static int is_full(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

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

/* What an error of dir_open/dir_create means, for a log line. */
static const char *dir_strerror(int err)
{
	if (err == -ELOOP)
		return "a symbolic link: refused (a data directory's files "
		       "are never followed)";
	if (err == -EMLINK)
		return "not a plain file with one link: refused";
	return strerror(-err);
}

/* Opens DIR/name, which must exist, without following a symlink, and
 * checks on the fd that it is a plain file with one link (a hard link to
 * someone else's file is refused as a symlink is).  Returns the fd, or
 * -errno (-ELOOP: a symlink, -EMLINK: not a plain file). */
static int dir_open(struct gr_writer *w, const char *name, int flags)
{
	int fd = openat(w->dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC |
				       O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1) {
		close(fd);
		return -EMLINK;
	}
	return fd;
}

/* Creates DIR/name, which must not exist (O_EXCL: never a file or link
 * someone planted), and gives it to the directory's owner (see
 * gr_writer.adopt; a failure is logged, the file stays usable).  Returns
 * the fd or -errno. */
static int dir_create(struct gr_writer *w, const char *name, int flags,
		      mode_t mode)
{
	int fd = openat(w->dirfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW |
				       O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	if (w->adopt && fchown(fd, w->dir_uid, w->dir_gid) < 0)
		wlog(w, "%s/%s: cannot give it to uid %u: %s", w->dir, name,
		     (unsigned)w->dir_uid, strerror(errno));
	return fd;
}

/* The -errno of SQLite's last failure on db: -ENOSPC / -EDQUOT when it
 * was for want of space (SQLITE_FULL, or the write's errno), else -EIO. */
static int sql_err(sqlite3 *db)
{
	int rc = sqlite3_errcode(db), se = sqlite3_system_errno(db);
	if (rc == SQLITE_FULL || se == ENOSPC)
		return -ENOSPC;
	if ((rc & 0xff) == SQLITE_IOERR && se == EDQUOT)
		return -EDQUOT;
	return -EIO;
}

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CLOCK_REALTIME as this writer sees it (segment names, seal and manifest
 * times); only tests move it (gr_store_opts.test_clock_step_ns). */
static int64_t real_ns(const struct gr_writer *w)
{
	return now_ns(CLOCK_REALTIME) + w->clock_off;
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
		int err = sql_err(w->db);
		wlog(w, "%s: %s (in: %.60s)", w->seg_path, msg ? msg : "?", sql);
		sqlite3_free(msg);
		return err;
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

/* The id of string s if interned, else 0; interns nothing. */
static uint32_t dict_lookup(const struct gr_writer *w, const char *s,
			    size_t len)
{
	if (!w->hash_cap)
		return 0;
	uint32_t i = hash_str(s, len) & (w->hash_cap - 1);
	for (uint32_t id; (id = w->hash[i]); i = (i + 1) & (w->hash_cap - 1))
		if (w->lens[id] == len && memcmp(w->strs[id], s, len) == 0)
			return id;
	return 0;
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
	return rc == SQLITE_DONE ? 0 : sql_err(w->db);
}

/* Built under the temporary name with a rollback journal: a WAL file is
 * named after its database, and would not follow it through the rename. */
static const char segment_ddl[] =
	"PRAGMA page_size=4096;"
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
	sqlite3_finalize(w->ins_coll);
	sqlite3_finalize(w->ins_arr);
	w->ins_block = w->ins_dict = w->ins_sum = w->ins_coll = NULL;
	w->ins_arr = NULL;
}

/* The temporary name a segment is built under: not a segment name, so no
 * reader, verify or recovery ever takes it for one. */
static void segment_tmp_name(char *out, size_t len, const char *name)
{
	snprintf(out, len, ".%s.tmp", name);
}

/* Returns 1 if name is a temporary segment left by a writer that died
 * while making it (or one of its SQLite side files). */
static int segment_tmp_stale(const char *name)
{
	char seg[128];
	const char *end;
	if (name[0] != '.' || !(end = strstr(name, ".tmp")) ||
	    (end[4] && strcmp(end + 4, "-journal") != 0) ||
	    (size_t)(end - name - 1) >= sizeof(seg))
		return 0;
	memcpy(seg, name + 1, (size_t)(end - name - 1));
	seg[end - name - 1] = 0;
	return gr_segment_name_ok(seg);
}

static void segment_unlink_sides(struct gr_writer *w, const char *name)
{
	char side[160];
	static const char *const sfx[] = { "-wal", "-shm", "-journal" };
	for (int i = 0; i < 3; i++) {
		snprintf(side, sizeof(side), "%s%s", name, sfx[i]);
		unlinkat(w->dirfd, side, 0);
	}
}

/* Removes the temporary segments a writer killed while making one left
 * (see segment_create).  They never held an event. */
static void segment_tmp_sweep(struct gr_writer *w)
{
	int fd = openat(w->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (segment_tmp_stale(de->d_name)) {
			if (unlinkat(w->dirfd, de->d_name, 0) == 0)
				wlog(w, "removed %s/%s, a segment left half "
				     "made by an earlier run", w->dir,
				     de->d_name);
			else
				wlog(w, "cannot remove %s/%s: %s", w->dir,
				     de->d_name, strerror(errno));
		}
	closedir(d);
}

/* Opens DIR/name with SQLite, never through a symlink: the name is
 * checked first, and SQLITE_OPEN_NOFOLLOW covers a swap after. */
static int segment_sql_open(struct gr_writer *w, const char *name,
			    sqlite3 **db)
{
	char path[4200];
	struct stat sb;
	*db = NULL;
	if (fstatat(w->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode) || sb.st_nlink != 1)
		return S_ISLNK(sb.st_mode) ? -ELOOP : -EMLINK;
	snprintf(path, sizeof(path), "%s/%s", w->dir, name);
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		int err = sql_err(*db);
		sqlite3_close(*db);
		*db = NULL;
		return err;
	}
	return 0;
}

static int segment_build(struct gr_writer *w, int64_t real);

/* Names the next segment (w->seg_name, w->seg_path) and creates its empty
 * temporary file, whose name goes in tmp.  Returns 0 or -errno. */
static int segment_tmp_create(struct gr_writer *w, int64_t real, char *tmp,
			      size_t tmpsz)
{
	int fd = -1, err;

	/* Names sort by creation time; O_EXCL settles a same-ns clash. */
	for (int tries = 0;; tries++) {
		struct stat sb;
		if ((err = segment_name(w->seg_name, sizeof(w->seg_name),
					real + tries)))
			return err;
		if (fstatat(w->dirfd, w->seg_name, &sb,
			    AT_SYMLINK_NOFOLLOW) == 0) {
			if (tries > 1000)
				return -EEXIST;
			continue;
		}
		segment_tmp_name(tmp, tmpsz, w->seg_name);
		unlinkat(w->dirfd, tmp, 0);
		fd = dir_create(w, tmp, O_WRONLY, 0640);
		if (fd >= 0 || fd != -EEXIST || tries > 1000)
			break;
	}
	snprintf(w->seg_path, sizeof(w->seg_path), "%s/%s", w->dir,
		 w->seg_name);
	if (fd < 0) {
		wlog(w, "cannot create segment %s/%s: %s", w->dir, tmp,
		     dir_strerror(fd));
		w->seg_path[0] = 0;
		return fd;
	}
	close(fd);
	return 0;
}

/* Builds the new segment in tmp, fsyncs it and renames it into place as
 * w->seg_name (then fsyncs the directory).  Returns 0, or -errno with tmp
 * and its side files removed. */
static int segment_tmp_place(struct gr_writer *w, const char *tmp,
			     int64_t real)
{
	int fd, err;

	if ((err = segment_sql_open(w, tmp, &w->db)) ||
	    (err = segment_build(w, real))) {
		wlog(w, "cannot make segment %s: %s", w->seg_path,
		     dir_strerror(err));
		goto undo_tmp;
	}
	sqlite3_close(w->db);
	w->db = NULL;
	if ((fd = dir_open(w, tmp, O_RDONLY)) < 0 || fsync(fd) < 0 ||
	    renameat2(w->dirfd, tmp, w->dirfd, w->seg_name,
		      RENAME_NOREPLACE) < 0) {
		err = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		wlog(w, "cannot put segment %s in place: %s", w->seg_path,
		     dir_strerror(err));
		goto undo_tmp;
	}
	close(fd);
	if (fsync(w->dirfd) < 0 && errno != EINVAL)
		wlog(w, "%s: fsync: %s", w->dir, strerror(errno));
	return 0;
undo_tmp:
	sqlite3_close(w->db);
	w->db = NULL;
	unlinkat(w->dirfd, tmp, 0);
	segment_unlink_sides(w, tmp);
	w->seg_path[0] = 0;
	return err;
}

/* Opens the segment just put in place for writing: WAL mode and the
 * writer's statements.  Returns 0, or -errno with it removed. */
static int segment_open_wal(struct gr_writer *w)
{
	int err;

	if ((err = segment_sql_open(w, w->seg_name, &w->db)) ||
	    (err = exec_sql(w, "PRAGMA journal_mode=WAL")) ||
	    (err = exec_sql(w, "PRAGMA synchronous=FULL")))
		goto undo;
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
		err = sql_err(w->db);
		goto undo;
	}
	return 0;
undo:
	/* In place but not usable for writing: it holds no event, and an
	 * empty segment in the chain would only be noise. */
	wlog(w, "cannot open segment %s for writing: %s", w->seg_path,
	     strerror(-err));
	finalize_stmts(w);
	sqlite3_close(w->db);
	w->db = NULL;
	unlinkat(w->dirfd, w->seg_name, 0);
	segment_unlink_sides(w, w->seg_name);
	w->seg_path[0] = 0;
	return err;
}

/* Makes the next segment: built and committed under a temporary name,
 * fsynced, then renamed into place (and the directory fsynced), so a file
 * with a segment's name is always a valid segment, whatever the crash or
 * the lack of space.  Then reopened in WAL mode for the writes. */
static int segment_create(struct gr_writer *w)
{
	int64_t real = real_ns(w);
	char tmp[128];
	int err;

	if ((err = segment_tmp_create(w, real, tmp, sizeof(tmp))) ||
	    (err = segment_tmp_place(w, tmp, real)) ||
	    (err = segment_open_wal(w)))
		return err;
	w->seg_opened_mono = now_ns(CLOCK_MONOTONIC);
	w->seg_ts_min = INT64_MAX;
	w->seg_ts_max = INT64_MIN;
	w->seg_events = 0;
	gr_sum__reset(w->sum);
	if (w->seg_has)
		memset(w->seg_has, 0, w->strs_cap);
	return 0;
}

/* Writes a new segment's tables and metadata in w->db, committed. */
static int segment_build(struct gr_writer *w, int64_t real)
{
	int err;
	w->coll_warned = 0;
	if ((err = exec_sql(w, segment_ddl)) || (err = exec_sql(w, gr_sum_ddl)) ||
	    (err = exec_sql(w, gr_coll_ddl)) ||
	    (err = exec_sql(w, gr_arr_ddl)))
		return err;

	int64_t offset = real - now_ns(CLOCK_BOOTTIME);
	w->seq = w->last_seq + 1;
	if ((err = meta_set(w, "format", "gpurec-segment", 0, 0)) ||
	    (err = meta_set(w, "format_version", NULL, GR_SEG_FORMAT, 1)) ||
	    (err = meta_set(w, "schema_version", NULL, GR_SCHEMA_VERSION, 1)) ||
	    (err = meta_set(w, "host", w->host, 0, 0)) ||
	    (err = meta_set(w, "machine_id", w->machine_id, 0, 0)) ||
	    (err = meta_set(w, "boot_id", w->boot_id, 0, 0)) ||
	    (err = meta_set(w, "clock_offset_ns", NULL, offset, 1)) ||
	    (err = meta_set(w, "created_ns", NULL, real, 1)) ||
	    (err = meta_set(w, "prev_sha256", w->prev_sha, 0, 0)) ||
	    (err = meta_set(w, "seq", NULL, w->seq, 1)) ||
	    (err = meta_set(w, GR_SUM_META_KINDS, NULL,
			    GR_SUM_WRITTEN_KINDS, 1)) ||
	    (err = meta_set(w, "sealed", NULL, 0, 1)))
		return err;

	/* Record the stored column layout so later versions read by name. */
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(w->db, "INSERT INTO columns VALUES (?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_err(w->db);
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
				err = sql_err(w->db);
			sqlite3_reset(st);
		}
	}
	sqlite3_finalize(st);
	if (err || (err = exec_sql(w, "COMMIT")))
		return err ? err : -EIO;
	return 0;
}

/* The size of DIR/name (a symlink's own, never its target's), 0 if none;
 * its mtime in *mtime_ns when asked. */
static uint64_t file_bytes(struct gr_writer *w, const char *name,
			   int64_t *mtime_ns)
{
	struct stat sb;
	if (fstatat(w->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (mtime_ns)
		*mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
			    sb.st_mtim.tv_nsec;
	return (uint64_t)sb.st_size;
}

static int set_immutable_fd(int fd, int on)
{
	int flags, err = 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		err = -errno;
	} else {
		int nf = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
		if (nf != flags && ioctl(fd, FS_IOC_SETFLAGS, &nf) < 0)
			err = -errno;
	}
	return err;
}

static int set_immutable(struct gr_writer *w, const char *name, int on)
{
	int fd = dir_open(w, name, O_RDONLY);
	if (fd < 0)
		return fd;
	int err = set_immutable_fd(fd, on);
	close(fd);
	return err;
}

static int sealed_push(struct gr_writer *w, const char *name, uint64_t bytes,
		       int64_t seq, int64_t mtime_ns, int64_t newest_ns)
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
	w->sealed[w->nsealed].seq = seq;
	w->sealed[w->nsealed].mtime_ns = mtime_ns;
	w->sealed[w->nsealed].newest_ns = newest_ns > 0 ? newest_ns : mtime_ns;
	w->sealed[w->nsealed++].bytes = bytes;
	return 0;
}

static int sha256_fd(int fd, uint8_t out[32])
{
	struct gr_sha256 c;
	uint8_t buf[65536];
	off_t off = 0;
	ssize_t n;
	gr_sha256__init(&c);
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		gr_sha256__update(&c, buf, (size_t)n);
		off += n;
	}
	if (n < 0)
		return -errno;
	gr_sha256__final(&c, out);
	return 0;
}

static int sum_store(void *ctx, const struct gr_sum_ent *e);
static void sum_reload(struct gr_writer *w);

static int retention_make_room(struct gr_writer *w);

/* Writes this run's pending `start` line (see gr_writer.start_body).
 * Returns 0 or the append's -errno. */
static int start_line(struct gr_writer *w)
{
	if (!w->start_body[0])
		return 0;
	int err = gr_manifest_w__append(w->mw, real_ns(w), w->last_seq, "%s",
					w->start_body);
	if (!err)
		w->start_body[0] = 0;
	return err;
}

/* Appends the open segment's seal line (after this run's start line if
 * still pending), making room on a full disk.  Returns 0 or -errno. */
static int seal_line(struct gr_writer *w, const char *hex, uint64_t bytes)
{
	int64_t at = real_ns(w);
	struct gr_manifest_entry e = {
		.start_ts = w->seg_ts_min, .end_ts = w->seg_ts_max,
		.events = w->seg_events, .bytes = bytes, .seq = w->seq,
	};
	int err;
	snprintf(e.name, sizeof(e.name), "%s", w->seg_name);
	snprintf(e.sha256, sizeof(e.sha256), "%s", hex);
	snprintf(e.prev, sizeof(e.prev), "%s", w->prev_sha);
	snprintf(e.host, sizeof(e.host), "%s", w->host);
	while (((err = start_line(w)) ||
		(err = gr_manifest_w__seal(w->mw, at, w->last_seq, &e))) &&
	       is_full(err) && retention_make_room(w))
		;
	return err;
}

/* Marks the segment sealed in its metadata, with its whole-segment
 * summary rows, in one transaction.  Returns 0, or -errno with all of it
 * rolled back (and the busy timeout cleared). */
static int seal_marks(struct gr_writer *w)
{
	int err;

	if ((err = exec_sql(w, "BEGIN")) ||
	    (err = meta_set(w, "sealed", NULL, 1, 1)) ||
	    (err = meta_set(w, "start_ts", NULL, w->seg_ts_min, 1)) ||
	    (err = meta_set(w, "end_ts", NULL, w->seg_ts_max, 1)) ||
	    (err = meta_set(w, "events", NULL, (int64_t)w->seg_events, 1)) ||
	    (err = meta_set(w, "sealed_ns", NULL, real_ns(w), 1)) ||
	    (err = meta_set(w, "seq", NULL, w->seq, 1)) ||
	    (err = gr_sum__rollup(w->sum)) ||
	    (err = gr_sum__each(w->sum, 1, sum_store, w)) ||
	    (err = exec_sql(w, "COMMIT"))) {
		if (!sqlite3_get_autocommit(w->db))
			exec_sql(w, "ROLLBACK");
		sum_reload(w); /* without the whole-segment rows */
		sqlite3_busy_timeout(w->db, 0);
		return err;
	}
	return 0;
}

/* Folds the WAL back into the segment (journal_mode=DELETE), making room
 * on a full disk.  Returns 0, or -errno (-EBUSY: a reader holds it) with
 * the seal mark undone, to write on and retry at the next rotation. */
static int seal_fold(struct gr_writer *w)
{
	int folded, err;

	for (;;) {
		/* Folding writes the WAL's pages into the file: on a full
		 * disk, make room and try again. */
		sqlite3_stmt *jm = NULL;
		const char *mode = NULL;
		int rc = SQLITE_ERROR;
		if (sqlite3_prepare_v2(w->db, "PRAGMA journal_mode=DELETE", -1,
				       &jm, NULL) == SQLITE_OK &&
		    (rc = sqlite3_step(jm)) == SQLITE_ROW)
			mode = (const char *)sqlite3_column_text(jm, 0);
		folded = mode && strcmp(mode, "delete") == 0;
		err = rc == SQLITE_ROW || rc == SQLITE_BUSY ? -EBUSY :
							     sql_err(w->db);
		sqlite3_finalize(jm);
		if (folded || !is_full(err) || !retention_make_room(w))
			break;
	}
	if (folded)
		return 0;
	/* The seal's marks are undone, its whole-segment summary rows with
	 * them: the next seal rolls the minute rows up again, and rows left
	 * here would count every event before now twice. */
	int tx = exec_sql(w, "BEGIN") == 0;
	meta_set(w, "sealed", NULL, 0, 1);
	exec_sql(w, "DELETE FROM summary WHERE minute = -1");
	if (tx && exec_sql(w, "COMMIT") && !sqlite3_get_autocommit(w->db)) {
		/* Undone as a whole, then each on its own. */
		exec_sql(w, "ROLLBACK");
		meta_set(w, "sealed", NULL, 0, 1);
		exec_sql(w, "DELETE FROM summary WHERE minute = -1");
	}
	sum_reload(w);
	sqlite3_busy_timeout(w->db, 0);
	if (err == -EBUSY)
		wlog(w, "cannot seal %s now: a reader holds it; "
		     "writing on and retrying at the next rotation",
		     w->seg_path);
	else
		wlog(w, "cannot seal %s now: %s; writing on and "
		     "retrying at the next rotation", w->seg_path,
		     strerror(-err));
	return err;
}

/* Seals the closed segment's file: fsynced, made read-only, hashed, its
 * seal line appended to the MANIFEST, made immutable (best effort), and
 * listed for retention.  Returns 0 or -errno. */
static int seal_file(struct gr_writer *w)
{
	int err = 0;
	char hex[65];
	uint8_t sha[32];

	/* fsync, chmod, hash and the immutable flag all go through one fd,
	 * opened without following a link and checked. */
	int fd = dir_open(w, w->seg_name, O_RDONLY);
	if (fd < 0 || fsync(fd) < 0 || fchmod(fd, 0440) < 0 ||
	    (err = sha256_fd(fd, sha))) {
		err = err ? err : fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		wlog(w, "cannot seal %s: %s", w->seg_path, dir_strerror(err));
		return err;
	}
	gr_hex(sha, 32, hex);
	struct stat sb;
	uint64_t bytes = fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	int64_t mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
			sb.st_mtim.tv_nsec;
	if ((err = seal_line(w, hex, bytes))) {
		close(fd);
		wlog(w, "cannot append to %s/%s: %s", w->dir, GR_MANIFEST,
		     strerror(-err));
		return err;
	}
	memcpy(w->prev_sha, hex, sizeof(hex));
	w->last_seq = w->seq;
	if (!w->o.no_immutable)
		set_immutable_fd(fd, 1); /* best effort: see header */
	close(fd);
	fsync(w->dirfd);
	w->st.segments++;
	wlog(w, "sealed %s: %" PRIu64 " events, %" PRIu64 " bytes, sha256 %s",
	     w->seg_name, w->seg_events, bytes, hex);
	return sealed_push(w, w->seg_name, bytes, w->seq, mtime,
			   w->seg_ts_max);
}

/* Seals the segment open in w->db (which may be a crashed one being
 * recovered, in which case events/ts come from its metadata). */
static int segment_seal(struct gr_writer *w)
{
	int err = 0;

	if (w->seg_ts_min > w->seg_ts_max)
		w->seg_ts_min = w->seg_ts_max = 0;
	/* Folding the WAL back needs every reader (a running gpurec) to
	 * let go: wait a little, and if one holds on, undo the seal marks
	 * and keep writing this segment; the next rotation retries.  A
	 * segment is never half sealed, and the chain never forks. */
	sqlite3_busy_timeout(w->db, 3000);
	if ((err = seal_marks(w)) || (err = seal_fold(w)))
		return err;
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
	return seal_file(w);
}

/* ---- retention --------------------------------------------------------- */

static uint64_t disk_used(struct gr_writer *w)
{
	uint64_t sum = 0;
	char wal[128];
	for (int i = 0; i < w->nsealed; i++)
		sum += w->sealed[i].bytes;
	if (w->db) {
		sum += file_bytes(w, w->seg_name, NULL);
		snprintf(wal, sizeof(wal), "%s-wal", w->seg_name);
		sum += file_bytes(w, wal, NULL);
	}
	return sum;
}

static uint64_t fs_free(struct gr_writer *w)
{
	struct statvfs sv;
	if (fstatvfs(w->dirfd, &sv) < 0)
		return UINT64_MAX;
	return (uint64_t)sv.f_bavail * sv.f_frsize;
}

/* Deletes the oldest sealed segment for reason why.  Returns 0, -EAGAIN
 * when none is left, -EPERM when the oldest was sealed less than min_age
 * ago, or the error of the MANIFEST append. */
static int retention_delete_oldest(struct gr_writer *w, const char *why)
{
	if (w->nsealed == 0)
		return -EAGAIN;
	struct sealed victim = w->sealed[0];
	if (w->o.min_age_ns > 0 &&
	    now_ns(CLOCK_REALTIME) - victim.mtime_ns < w->o.min_age_ns)
		return -EPERM;
	/* The manifest says so first: a crash in between leaves a logged
	 * deletion, never an unexplained missing segment. */
	int64_t at = real_ns(w);
	int err = start_line(w);
	if (!err)
		err = gr_manifest_w__delete(w->mw, at, w->last_seq,
					    victim.name, why, victim.bytes,
					    victim.seq);
	if (err) {
		wlog(w, "retention: cannot log the deletion of %s/%s (%s); "
		     "keeping it", w->dir, victim.name, strerror(-err));
		return err;
	}
	set_immutable(w, victim.name, 0);
	if (unlinkat(w->dirfd, victim.name, 0) < 0 && errno != ENOENT)
		wlog(w, "retention: cannot delete %s/%s: %s", w->dir,
		     victim.name, strerror(errno));
	memmove(w->sealed, w->sealed + 1,
		(size_t)(--w->nsealed) * sizeof(*w->sealed));
	w->st.deleted++;
	if (!strcmp(why, "max-age"))
		w->st.deleted_max_age++;
	wlog(w, "retention (%s): deleted %s (%" PRIu64 " bytes)", why,
	     victim.name, victim.bytes);
	return 0;
}

/* The size budget the directory is over ("max-disk", "keep-free"), or
 * NULL. */
static const char *over_size_budget(struct gr_writer *w)
{
	if (w->o.max_disk && disk_used(w) > w->o.max_disk)
		return "max-disk";
	if (w->o.keep_free && fs_free(w) < w->o.keep_free)
		return "keep-free";
	return NULL;
}

/* Whether the oldest sealed segment's newest event is older than max_age.
 * Segments are deleted in order, so a younger one behind an older one
 * (a clock stepped back) waits for it, as in journald. */
static int oldest_expired(struct gr_writer *w)
{
	return w->o.max_age_ns > 0 && w->nsealed &&
	       real_ns(w) - w->sealed[0].newest_ns > w->o.max_age_ns;
}

static void retention(struct gr_writer *w)
{
	int err = 0;
	for (;;) {
		const char *why = oldest_expired(w) ? "max-age" :
				  over_size_budget(w);
		/* Only the open segment left (it rotates early, see
		 * effective_segment_size, so this passes), or the rest too
		 * young for min_age: stop. */
		if (!why || (err = retention_delete_oldest(w, why)))
			break;
	}
	/* min_age wins over the size budget: the directory stays over it
	 * until the oldest segment ages, and status.json says so. */
	w->st.over_budget = err == -EPERM ? over_size_budget(w) : NULL;
	w->st.disk_bytes = disk_used(w);
}

/* A write refused for want of space: deletes the oldest sealed segment
 * min_age allows, as keep-free would.  Returns 1 if it deleted one (the
 * write is worth trying again), else 0. */
static int retention_make_room(struct gr_writer *w)
{
	int deleted = retention_delete_oldest(w, "disk-full") == 0;
	w->st.disk_bytes = disk_used(w);
	return deleted;
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
		return sql_err(w->db);
	}
	return 0;
}

/* Starts the flush's transaction.  A BEGIN that fails leaves it broken
 * (txn_err): the blocks still go to the log, and the flush decides. */
static void begin_txn(struct gr_writer *w)
{
	if (w->in_txn)
		return;
	w->in_txn = 1;
	w->ntxn_ids = 0;
	w->txn_events = 0;
	w->nlog = 0;
	w->log_bytes.len = 0;
	w->txn_seg_events = w->seg_events;
	w->txn_ts_min = w->seg_ts_min;
	w->txn_ts_max = w->seg_ts_max;
	w->txn_err = exec_sql(w, "BEGIN");
}

/* Puts the summaries back to what the segment holds: after a rollback,
 * the accumulator counts events of blocks that were never written. */
static void sum_reload(struct gr_writer *w)
{
	sqlite3_stmt *st;
	gr_sum__reset(w->sum);
	if (!w->db || sqlite3_prepare_v2(w->db, "SELECT * FROM summary", -1,
					 &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		if (gr_sum__put_row(w->sum, st))
			wlog(w, "%s: summaries could not be reloaded",
			     w->seg_path);
	sqlite3_finalize(st);
}

static void dsrc_add(struct gr_writer *w, const char *name, size_t len,
		     uint64_t n)
{
	int i;
	if (len >= sizeof(w->dsrc[0].name))
		len = sizeof(w->dsrc[0].name) - 1;
	for (i = 0; i < w->ndsrc; i++)
		if (strlen(w->dsrc[i].name) == len &&
		    memcmp(w->dsrc[i].name, name, len) == 0)
			break;
	if (i == w->ndsrc) {
		struct dsrc *p = realloc(w->dsrc, (size_t)(i + 1) * sizeof(*p));
		if (!p)
			return;
		w->dsrc = p;
		memcpy(p[i].name, name, len);
		p[i].name[len] = 0;
		p[i].n = 0;
		w->ndsrc++;
	}
	w->dsrc[i].n += n;
}

/* Counts n events the store gave up because of err, by cause; they are
 * written as a `drops` row by the next flush that succeeds. */
static void count_lost(struct gr_writer *w, int err, uint64_t n)
{
	int c = is_full(err) ? 0 : 1;
	if (!n)
		return;
	w->st.dropped += n;
	if (c == 0)
		w->st.dropped_disk_full += n;
	else
		w->st.dropped_io_error += n;
	w->lost_pending[c] += n;
	dsrc_add(w, lost_source[c], strlen(lost_source[c]), n);
}

/* Gives the open transaction up: what it wrote never was.  The dictionary
 * marks and segment counters go back, the events of its blocks (their
 * buffers already reused) count as dropped, and the store's own drops
 * rows it carried go back to pending. */
static void txn_abandon(struct gr_writer *w, int err)
{
	if (w->db && !sqlite3_get_autocommit(w->db))
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	for (uint32_t i = 0; i < w->ntxn_ids; i++)
		w->seg_has[w->txn_ids[i]] = 0;
	w->seg_events = w->txn_seg_events;
	w->seg_ts_min = w->txn_ts_min;
	w->seg_ts_max = w->txn_ts_max;
	uint64_t lost = w->txn_events - w->txn_store_rows;
	count_lost(w, err, lost);
	for (int c = 0; c < 2; c++)
		w->lost_pending[c] += w->txn_store_n[c];
	sum_reload(w);
	if (lost)
		wlog(w, "%s: a flush failed (%s); %" PRIu64 " events of its "
		     "blocks are lost, counted in drops as %s", w->seg_path,
		     strerror(-err), lost, lost_source[is_full(err) ? 0 : 1]);
}

/* Writes the open transaction again from its log (see struct logblk),
 * after a commit refused for want of space made retention delete. */
static int txn_replay(struct gr_writer *w)
{
	int err, rc;
	if ((err = exec_sql(w, "BEGIN")))
		return err;
	for (uint32_t i = 0; i < w->ntxn_ids; i++) {
		uint32_t id = w->txn_ids[i];
		sqlite3_bind_int64(w->ins_dict, 1, id);
		sqlite3_bind_text(w->ins_dict, 2, w->strs[id], (int)w->lens[id],
				  SQLITE_STATIC);
		rc = sqlite3_step(w->ins_dict);
		sqlite3_reset(w->ins_dict);
		if (rc != SQLITE_DONE)
			return sql_err(w->db);
	}
	for (int i = 0; i < w->nlog; i++) {
		const struct logblk *b = &w->log[i];
		sqlite3_bind_text(w->ins_block, 1, gr_tables[b->t].name, -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(w->ins_block, 2, b->ts_min);
		sqlite3_bind_int64(w->ins_block, 3, b->ts_max);
		sqlite3_bind_int64(w->ins_block, 4, b->n);
		sqlite3_bind_int64(w->ins_block, 5, b->crc);
		sqlite3_bind_blob(w->ins_block, 6, w->log_bytes.p + b->off,
				  (int)b->len, SQLITE_STATIC);
		rc = sqlite3_step(w->ins_block);
		sqlite3_reset(w->ins_block);
		if (rc != SQLITE_DONE)
			return sql_err(w->db);
	}
	/* Every summary row (INSERT OR REPLACE): the failed commit had
	 * cleared the dirty marks of those it wrote. */
	if ((err = gr_sum__each(w->sum, 0, sum_store, w)))
		return err;
	return exec_sql(w, "COMMIT");
}

/* Ends the open transaction: commits it; refused for want of space, makes
 * room (retention_make_room) and writes it again from the log, as long as
 * retention finds something to delete; else gives it up, counted.
 * Returns 0 or the last error. */
static int txn_finish(struct gr_writer *w)
{
	int err;
	if (!w->in_txn)
		return 0;
	err = w->txn_err;
	if (!err)
		err = gr_sum__each(w->sum, 1, sum_store, w);
	if (!err)
		err = exec_sql(w, "COMMIT");
	while (err) {
		if (!sqlite3_get_autocommit(w->db))
			sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
		if (!is_full(err) || !retention_make_room(w))
			break;
		wlog(w, "%s: writing the flush again after making room",
		     w->seg_path);
		err = txn_replay(w);
	}
	if (err)
		txn_abandon(w, err);
	w->in_txn = 0;
	w->txn_err = 0;
	w->ntxn_ids = 0;
	w->txn_events = 0;
	w->txn_store_rows = 0;
	w->txn_store_n[0] = w->txn_store_n[1] = 0;
	w->nlog = 0;
	w->log_bytes.len = 0;
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
	if (tb->n > tb->hw)
		tb->hw = tb->n;
	tb->n = 0;
	tb->ts_min = INT64_MAX;
	tb->ts_max = INT64_MIN;
}

/* Keeps a copy of the block just encoded (w->payload) in the log. */
static int log_push(struct gr_writer *w, int t, const struct tabbuf *tb,
		    uint32_t crc)
{
	if (w->nlog == w->log_cap) {
		int cap = w->log_cap ? w->log_cap * 2 : 64;
		void *p = realloc(w->log, (size_t)cap * sizeof(*w->log));
		if (!p)
			return -ENOMEM;
		w->log = p;
		w->log_cap = cap;
	}
	if (gr_buf__reserve(&w->log_bytes, w->payload.len))
		return -ENOMEM;
	memcpy(w->log_bytes.p + w->log_bytes.len, w->payload.p,
	       w->payload.len);
	w->log[w->nlog++] = (struct logblk){
		.t = t, .ts_min = tb->ts_min, .ts_max = tb->ts_max,
		.n = tb->n, .crc = crc, .off = w->log_bytes.len,
		.len = w->payload.len };
	w->log_bytes.len += w->payload.len;
	return 0;
}

/* Abandons a broken transaction kept past the log's bounds (its events
 * dropped and counted), so that the next block starts a new one. */
static void txn_bound(struct gr_writer *w)
{
	int err;

	if (!(w->in_txn && w->txn_err && (w->nlog >= LOG_CAP_BLOCKS ||
					  w->log_bytes.len >= LOG_CAP_BYTES)))
		return;
	err = w->txn_err;
	w->txn_err = 0;
	w->in_txn = 1;
	txn_abandon(w, err);
	w->in_txn = 0;
	w->txn_store_rows = 0;
	w->txn_store_n[0] = w->txn_store_n[1] = 0;
}

/* Steps insert st of the open transaction and resets it; a failure marks
 * the transaction broken, logged as a `what` insert. */
static void txn_step(struct gr_writer *w, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		w->txn_err = sql_err(w->db);
		wlog(w, "%s: %s insert: %s", w->seg_path, what,
		     sqlite3_errmsg(w->db));
	}
}

/* Stores in the transaction the strings of tb that the segment lacks (a
 * failed insert marks the transaction broken).  Returns 0 or -ENOMEM. */
static int dict_store(struct gr_writer *w, const struct tabbuf *tb)
{
	for (int k = 0; k < tb->nstr; k++) {
		const struct gr_colbuf *c = &tb->cols[tb->strcols[k]];
		for (uint32_t i = 0; i < tb->n; i++) {
			uint32_t id = (uint32_t)c->v[i];
			if (!id || w->seg_has[id])
				continue;
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
			if (w->txn_err)
				continue;
			sqlite3_bind_int64(w->ins_dict, 1, id);
			sqlite3_bind_text(w->ins_dict, 2, w->strs[id],
					  (int)w->lens[id], SQLITE_STATIC);
			txn_step(w, w->ins_dict, "dict");
		}
	}
	return 0;
}

/* Inserts the block just encoded (w->payload) unless the transaction is
 * broken; a failed insert marks it broken. */
static void block_insert(struct gr_writer *w, const char *name,
			 const struct tabbuf *tb, uint32_t crc)
{
	if (w->txn_err)
		return;
	sqlite3_bind_text(w->ins_block, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(w->ins_block, 2, tb->ts_min);
	sqlite3_bind_int64(w->ins_block, 3, tb->ts_max);
	sqlite3_bind_int64(w->ins_block, 4, tb->n);
	sqlite3_bind_int64(w->ins_block, 5, crc);
	sqlite3_bind_blob(w->ins_block, 6, w->payload.p,
			  (int)w->payload.len, SQLITE_STATIC);
	txn_step(w, w->ins_block, "block");
}

static int coll_is_collective(void *ctx, int64_t id)
{
	struct gr_writer *w = ctx;
	return id > 0 && (uint64_t)id <= w->ndict &&
	       gr_coll_is_collective(w->strs[id], w->lens[id]);
}

/* Inserts (block, crc, pcrc, payload) with *st (prepared on first use
 * for table): 0, or -1 once a failure is logged.  A failure that rolled
 * the transaction back (a full disk, an I/O error) breaks it, as a failed
 * block insert does (txn_finish retries it from its log). */
static int side_insert(struct gr_writer *w, sqlite3_stmt **st,
		       const char *table, int64_t block, uint32_t crc,
		       uint32_t pcrc, const struct gr_buf *payload)
{
	if (!*st) {
		char *sql = sqlite3_mprintf("INSERT INTO %s VALUES(?,?,?,?)",
					    table);
		int rc = sql ? sqlite3_prepare_v3(w->db, sql, -1,
						   SQLITE_PREPARE_PERSISTENT,
						   st, NULL) : SQLITE_NOMEM;
		sqlite3_free(sql);
		if (rc != SQLITE_OK) {
			if (!w->coll_warned++)
				wlog(w, "%s: nccl collectives: %s",
				     w->seg_path, sqlite3_errmsg(w->db));
			return -1;
		}
	}
	sqlite3_bind_int64(*st, 1, block);
	sqlite3_bind_int64(*st, 2, crc);
	sqlite3_bind_int64(*st, 3, pcrc);
	sqlite3_bind_blob(*st, 4, payload->p, (int)payload->len,
			  SQLITE_STATIC);
	int rc = sqlite3_step(*st);
	sqlite3_reset(*st);
	if (rc == SQLITE_DONE)
		return 0;
	if (sqlite3_get_autocommit(w->db) || (rc & 0xff) == SQLITE_FULL ||
	    (rc & 0xff) == SQLITE_IOERR) {
		w->txn_err = sql_err(w->db);
		wlog(w, "%s: nccl collectives insert: %s", w->seg_path,
		     sqlite3_errmsg(w->db));
	} else if (!w->coll_warned++) {
		wlog(w, "%s: nccl collectives: %s", w->seg_path,
		     sqlite3_errmsg(w->db));
	}
	return -1;
}

/* Stores the collectives of the nccl block just inserted, and their
 * calls' arrivals (ncclcoll.h).  They only speed readers up, who read a
 * block without them from its calls: a failure is logged once a segment
 * and loses nothing. */
static void coll_insert(struct gr_writer *w, const struct tabbuf *tb,
			uint32_t crc)
{
	struct gr_colbuf cols[GR_nccl__NCOLS] = { { 0 } };
	uint32_t nrec;
	int err;

	if (w->txn_err)
		return;
	for (int j = 0; j < tb->nstored; j++)
		cols[tb->colidx[j]] = tb->cols[j];
	int64_t block = sqlite3_last_insert_rowid(w->db);
	if ((err = gr_coll_builder__encode(w->coll, cols, tb->n,
					   coll_is_collective, w, w->enc,
					   &w->coll_payload, &nrec))) {
		if (!w->coll_warned++)
			wlog(w, "%s: nccl collectives: %s", w->seg_path,
			     strerror(-err));
		return;
	}
	if (!nrec ||
	    side_insert(w, &w->ins_coll, GR_COLL_TABLE, block, crc,
			gr_block_crc(GR_COLL_TABLE, 0, 0, nrec,
				     w->coll_payload.p, w->coll_payload.len),
			&w->coll_payload))
		return;
	if ((err = gr_coll_builder__arrivals(w->coll, cols, tb->n,
					     &w->coll_payload))) {
		if (!w->coll_warned++)
			wlog(w, "%s: nccl arrivals: %s", w->seg_path,
			     strerror(-err));
		return;
	}
	side_insert(w, &w->ins_arr, GR_ARR_TABLE, block, crc,
		    gr_block_crc(GR_ARR_TABLE, 0, 0, 0, w->coll_payload.p,
				 w->coll_payload.len),
		    &w->coll_payload);
}

/* Counts table t's block just written into the segment's summary, the
 * stats and the segment's extent.  Returns 0 or the summary's -errno. */
static int block_account(struct gr_writer *w, int t, const struct tabbuf *tb)
{
	struct gr_sum_rows rows = { .t = t, .n = tb->n };
	int err;

	for (int j = 0; j < tb->nstored; j++) {
		rows.v[tb->colidx[j]] = tb->cols[j].v;
		rows.nulls[tb->colidx[j]] = tb->cols[j].nulls;
	}
	if (t == GR_T_cuda_graph)
		rows.launch_op = dict_lookup(w, "launch", 6);
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
	return 0;
}

/* Encodes table t's buffer into a block of the open transaction (and its
 * log).  Returns 0 once the block is the transaction's (a failed insert
 * only marks the transaction broken: txn_finish decides), or -errno with
 * the buffer left as it was (no segment open, encoding failed). */
static int write_block(struct gr_writer *w, int t)
{
	struct tabbuf *tb = &w->tabs[t];
	const char *name = gr_tables[t].name;
	int err;

	if (!tb->n)
		return 0;
	if (!w->db)
		return w->nodb_err ? w->nodb_err : -EIO;
	/* A broken transaction is kept for its flush, within bounds. */
	txn_bound(w);
	begin_txn(w);
	if ((err = dict_store(w, tb)))
		return err;
	const uint32_t *perm = group_by_thread(w, tb);
	if ((err = gr_encoder__encode(w->enc, tb->cols, tb->nstored, tb->n,
				      perm, &w->payload))) {
		wlog(w, "encode %s block: %s", name, strerror(-err));
		return err;
	}
	uint32_t crc = gr_block_crc(name, tb->ts_min, tb->ts_max, tb->n,
				    w->payload.p, w->payload.len);
	if ((err = log_push(w, t, tb, crc)))
		return err;
	block_insert(w, name, tb, crc);
	if (t == GR_T_nccl)
		coll_insert(w, tb, crc);
	if ((err = block_account(w, t, tb)))
		return err;
	tab_reset(w, tb);
	return 0;
}

/* Gives up the events of table t's buffer, counted under err. */
static void tab_drop(struct gr_writer *w, int t, int err)
{
	struct tabbuf *tb = &w->tabs[t];
	if (!tb->n)
		return;
	count_lost(w, err, tb->n);
	wlog(w, "dropping %u %s events: their block cannot be written (%s)",
	     tb->n, gr_tables[t].name, strerror(-err));
	tab_reset(w, tb);
}

static int append_row(struct gr_writer *w, int t, const int64_t *vals,
		      uint64_t nullmask);

int gr_writer__append(struct gr_writer *w, int t, const int64_t *vals,
		      uint64_t nullmask)
{
	if (t < 0 || t >= GR_NTABLES || !(gr_tables[t].flags & GR_TF_EVENT))
		return -EINVAL;
	int err = append_row(w, t, vals, nullmask);
	if (!err && t == GR_T_drops &&
	    !(nullmask >> GR_drops_source & 1) &&
	    !(nullmask >> GR_drops_count & 1) && vals[GR_drops_count] > 0) {
		uint32_t id = (uint32_t)vals[GR_drops_source];
		dsrc_add(w, w->strs[id], w->lens[id],
			 (uint64_t)vals[GR_drops_count]);
	}
	return err;
}

static int append_row(struct gr_writer *w, int t, const int64_t *vals,
		      uint64_t nullmask)
{
	struct tabbuf *tb = &w->tabs[t];

	if (tb->n >= w->o.block_rows) {
		/* A full buffer whose block could not be made (no segment
		 * open, encoding failed): try once more, else give its
		 * events up, counted, rather than grow past the buffer. */
		int err = write_block(w, t);
		if (err)
			tab_drop(w, t, err);
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
	int64_t ts = vals[GR_EV_ts];
	if (ts < tb->ts_min)
		tb->ts_min = ts;
	if (ts > tb->ts_max)
		tb->ts_max = ts;
	w->st.events++;
	if (++tb->n == w->o.block_rows && write_block(w, t) == -ENOMEM)
		return -ENOMEM;
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
	finalize_stmts(w);
	sqlite3_close(w->db);
	w->db = NULL;
	segment_unlink_sides(w, w->seg_name);
	int err = unlinkat(w->dirfd, w->seg_name, 0) < 0 ? -errno : 0;
	w->seg_path[0] = 0;
	return err;
}

static int recover_pending(struct gr_writer *w);

/* Opens the next segment; refused for want of space, makes room and tries
 * again while retention finds something to delete.  Without one, the
 * writer runs on with no segment (nodb_err) and each flush tries again. */
static int segment_open_next(struct gr_writer *w)
{
	int err;
	if ((err = recover_pending(w)))
		goto none;
	while ((err = segment_create(w)) && is_full(err) &&
	       retention_make_room(w))
		;
	if (!err) {
		if (w->nodb_err)
			wlog(w, "recording again into %s", w->seg_path);
		w->nodb_err = 0;
		return 0;
	}
none:
	if (!w->nodb_err)
		wlog(w, "no segment can be opened in %s (%s): events are "
		     "dropped, counted, until one can; trying again at each "
		     "flush", w->dir, strerror(-err));
	w->nodb_err = err;
	return err;
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
	if (w->o.test_clock_step_ns && !w->clock_stepped) {
		w->clock_off += w->o.test_clock_step_ns;
		w->clock_stepped = 1;
	}
	if (err) {
		/* Folded and closed, but its seal line is not written (a
		 * full disk): it is sealed again, as a crashed segment is,
		 * before any segment chains after it. */
		snprintf(w->unsealed, sizeof(w->unsealed), "%s", w->seg_name);
	}
	if (w->ndict > DICT_CAP_STRINGS || w->dict_bytes > DICT_CAP_BYTES)
		dict_reset(w);
	retention(w);
	int err2 = segment_open_next(w);
	return err2 ? err2 : err;
}

/* Appends the store's own losses not yet written as `drops` rows to this
 * flush's blocks (see txn_abandon for when the flush fails). */
static void stage_lost(struct gr_writer *w)
{
	int64_t v[GR_MAX_COLS] = { 0 };
	uint64_t nm = 1ull << GR_drops_pid | 1ull << GR_drops_tid |
		      1ull << GR_drops_comm;
	for (int c = 0; c < 2; c++) {
		if (!w->lost_pending[c])
			continue;
		uint32_t id = gr_writer__intern(w, lost_source[c],
						 strlen(lost_source[c]));
		if (!id)
			return;
		v[GR_drops_ts] = now_ns(CLOCK_REALTIME);
		v[GR_drops_source] = id;
		v[GR_drops_count] = (int64_t)w->lost_pending[c];
		if (append_row(w, GR_T_drops, v, nm))
			return;
		w->txn_store_rows++;
		w->txn_store_n[c] += w->lost_pending[c];
		w->lost_pending[c] = 0;
	}
}

/* With sealing on, moves the key to a new epoch as soon as one begins,
 * lines to write or not (gr_manifest_w__tick): without this an idle
 * writer would leave the key of its last line's epoch on disk for hours.
 * While the run's start line waits for room, the key waits with it. */
static void seal_tick(struct gr_writer *w)
{
	if (!w->mw || w->start_body[0])
		return;
	int err = gr_manifest_w__tick(w->mw, real_ns(w), w->last_seq);
	if (err && !w->tick_failing)
		wlog(w, "%s/%s: cannot move the sealing key to the current "
		     "epoch: %s (tried again at each flush)", w->dir,
		     GR_FSS_FILE, strerror(-err));
	w->tick_failing = err != 0;
}

int gr_writer__flush(struct gr_writer *w)
{
	int err = 0;
	seal_tick(w);
	if (!w->db && (err = segment_open_next(w))) {
		for (int t = 0; t < GR_NTABLES; t++)
			tab_drop(w, t, err);
		return err;
	}
	stage_lost(w);
	for (int t = 0; t < GR_NTABLES; t++) {
		int e = write_block(w, t);
		if (e) {
			tab_drop(w, t, e);
			err = err ? err : e;
		}
	}
	int e2 = txn_finish(w);
	if (e2 && !w->db)
		return e2;
	if (!w->db)
		return err;
	sqlite3_int64 bytes = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(w->db, "SELECT page_count * page_size FROM "
				      "pragma_page_count, pragma_page_size",
			       -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			bytes = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (!e2 && ((uint64_t)bytes >= effective_segment_size(w) ||
		    now_ns(CLOCK_MONOTONIC) - w->seg_opened_mono >=
			    w->o.segment_age_ns))
		e2 = rotate(w);
	else if (w->o.keep_free || w->o.max_disk || w->o.max_age_ns)
		retention(w);
	return err ? err : e2;
}

int gr_writer__rotate(struct gr_writer *w)
{
	int err = gr_writer__flush(w);
	if (err)
		return err;
	return w->db ? rotate(w) : 0;
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

/* The seq a crashed segment recorded, or 0. */
static int64_t recover_seq(struct gr_writer *w)
{
	sqlite3_stmt *st;
	int64_t q = 0;
	if (sqlite3_prepare_v2(w->db, "SELECT value FROM meta WHERE key='seq'",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		q = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return q;
}

/* Opens the manifest's appending side (which cuts off a torn last line)
 * through a directory fd. */
static void mw_log(void *ctx, const char *line)
{
	wlog(ctx, "%s", line);
}

static int manifest_open(struct gr_writer *w)
{
	char path[4200];
	int created = 0;
	int err = gr_manifest_w__open(w->dirfd, mw_log, w, &created, &w->mw);
	snprintf(path, sizeof(path), "%s/%s", w->dir, GR_MANIFEST);
	if (err) {
		wlog(w, "%s: %s", path, err == -ELOOP ? dir_strerror(err) :
		     strerror(-err));
		return err;
	}
	/* Just created with O_EXCL (manifest.c): safe to give away. */
	if (created && w->adopt &&
	    fchown(gr_manifest_w__fd(w->mw), w->dir_uid, w->dir_gid) < 0)
		wlog(w, "%s: cannot give it to uid %u: %s", path,
		     (unsigned)w->dir_uid, strerror(errno));
	return 0;
}

/* Writes the run's start line, seals segments left unsealed by a crash
 * (a segment killed between its seal and its manifest line included:
 * its seal line is appended now), and loads the sealed list in seq order. */
/* Seals DIR/name, the open segment of a writer that died: its committed
 * blocks are kept.  Returns 0 when done with it (sealed, removed as
 * empty, or left as is outside the chain when it cannot be read), or the
 * error that stopped the seal (then it stays as it was, still a valid
 * segment, for the next try). */
static int recover_one(struct gr_writer *w, const char *name)
{
	int fd, err;
	snprintf(w->seg_name, sizeof(w->seg_name), "%s", name);
	snprintf(w->seg_path, sizeof(w->seg_path), "%s/%s", w->dir, name);
	/* Writable again for SQLite (a crash after the chmod of a seal);
	 * through the fd, so a planted symlink's target is never touched. */
	if ((fd = dir_open(w, name, O_RDONLY)) < 0) {
		wlog(w, "recovery: %s: %s; left as is, outside the chain",
		     w->seg_path, dir_strerror(fd));
		return 0;
	}
	if (fchmod(fd, 0640) < 0)
		wlog(w, "recovery: %s: chmod: %s", w->seg_path,
		     strerror(errno));
	close(fd);
	if ((err = segment_sql_open(w, name, &w->db)) ||
	    sqlite3_exec(w->db, "PRAGMA quick_check", NULL, NULL,
			 NULL) != SQLITE_OK) {
		err = err ? err : sql_err(w->db);
		wlog(w, "recovery: %s cannot be opened (%s); %s", w->seg_path,
		     w->db ? sqlite3_errmsg(w->db) : dir_strerror(err),
		     is_full(err) ? "trying again later" :
				    "left as is, outside the chain");
		goto close;
	}
	if (recover_meta(w)) {
		err = sql_err(w->db);
		wlog(w, "recovery: %s cannot be read (%s); %s", w->seg_path,
		     sqlite3_errmsg(w->db), is_full(err) ?
		     "trying again later" : "left as is, outside the chain");
		goto close;
	}
	if (!w->seg_events) {
		wlog(w, "recovery: removing %s, left open and empty by an "
			"earlier run", name);
		segment_discard(w);
		return 0;
	}
	int64_t q = recover_seq(w);
	w->seq = w->last_seq + 1;
	if (q && q != w->seq)
		wlog(w, "recovery: %s says seq %" PRId64 "; sealing it as %"
		     PRId64, name, q, w->seq);
	wlog(w, "recovery: sealing %s left open by an earlier run (%" PRIu64
		" events)", name, w->seg_events);
	/* The seal adds the whole-segment summary rows, rolled up from the
	 * minute rows the dead writer committed: load those, and the
	 * statement that inserts rows (a first try that a full disk
	 * stopped reloads them too, and must find it on the next). */
	sum_reload(w);
	if (sqlite3_prepare_v3(w->db, gr_sum_insert_sql, -1,
			       SQLITE_PREPARE_PERSISTENT, &w->ins_sum,
			       NULL) != SQLITE_OK) {
		err = sql_err(w->db);
		wlog(w, "recovery: %s: %s; %s", w->seg_path,
		     sqlite3_errmsg(w->db), is_full(err) ?
		     "trying again later" : "left as is, outside the chain");
		goto close;
	}
	if (!(err = segment_seal(w)))
		goto out;
	wlog(w, "recovery: %s stays unsealed (%s): sealed at the next try",
	     w->seg_path, strerror(-err));
close:
	finalize_stmts(w);
	sqlite3_close(w->db);
	w->db = NULL;
out:
	w->seg_path[0] = 0;
	return is_full(err) ? err : 0;
}

/* Seals the crashed segment a full disk left unsealed (see scan_dir).
 * No new segment is made before: it would fork the chain. */
static int recover_pending(struct gr_writer *w)
{
	int err;
	if (!w->unsealed[0])
		return 0;
	while ((err = recover_one(w, w->unsealed)) && is_full(err) &&
	       retention_make_room(w))
		;
	if (!err)
		w->unsealed[0] = 0;
	return err;
}

static int scan_dir(struct gr_writer *w)
{
	struct gr_manifest m;
	char **names;
	int n, err;

	segment_tmp_sweep(w);
	if ((err = gr_segments__list(w->dir, &names, &n)))
		return err;
	if ((err = gr_manifest__read(w->dir, &m))) {
		wlog(w, "cannot read %s/%s: %s", w->dir, GR_MANIFEST,
		     strerror(-err));
		goto out;
	}
	snprintf(w->prev_sha, sizeof(w->prev_sha), "-");
	w->last_seq = 0;
	if (m.n) {
		const struct gr_manifest_entry *last = &m.e[m.n - 1];
		snprintf(w->prev_sha, sizeof(w->prev_sha), "%s", last->sha256);
		/* Old segments carry no seq: count the seal lines. */
		w->last_seq = last->seq > 0 ? last->seq : m.n;
	}
	/* Sealed segments, oldest first: retention's order. */
	for (int i = 0; i < m.n && !err; i++) {
		const struct gr_manifest_entry *e = &m.e[i];
		struct stat sb;
		if (e->deleted || gr_manifest__find(&m, e->name) != e ||
		    fstatat(w->dirfd, e->name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		err = sealed_push(w, e->name, (uint64_t)sb.st_size,
				  e->seq > 0 ? e->seq : i + 1,
				  (int64_t)sb.st_mtim.tv_sec * 1000000000 +
				  sb.st_mtim.tv_nsec, e->end_ts);
	}
	/* The run's first line; on a full disk, after making room (the
	 * MANIFEST keeps space reserved for this, see manifest.c), or else
	 * once there is room, before any other line of the run. */
	int64_t at = real_ns(w);
	gr_manifest__start_body(w->start_body, sizeof(w->start_body), at,
				(int)getpid(), GPUREC_VERSION, w->boot_id);
	while (!err && (err = start_line(w)) && is_full(err) &&
	       retention_make_room(w))
		;
	if (is_full(err)) {
		wlog(w, "%s/%s: no room for this run's start line yet; it is "
		     "written once there is", w->dir, GR_MANIFEST);
		err = 0;
	}
	if (err) {
		wlog(w, "cannot append to %s/%s: %s", w->dir, GR_MANIFEST,
		     strerror(-err));
		gr_manifest__free(&m);
		goto out;
	}
	for (int i = 0; i < n && !err; i++) {
		const struct gr_manifest_entry *e = gr_manifest__find(&m,
								      names[i]);
		if (e)
			continue;
		if (w->unsealed[0]) {
			/* One crashed segment waits for space already: the
			 * ones after it wait too, in order. */
			continue;
		}
		if (is_full(recover_one(w, names[i])))
			snprintf(w->unsealed, sizeof(w->unsealed), "%s",
				 names[i]);
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

/* Takes opts with their defaults filled in, and the host's identity (name,
 * machine id, boot id).  Returns 0 or -ENOMEM. */
static int writer_opts(struct gr_writer *w, const struct gr_store_opts *opts)
{
	w->o = *opts;
	if (!w->o.segment_size)
		w->o.segment_size = 256ull << 20;
	if (!w->o.segment_age_ns)
		w->o.segment_age_ns = 3600ll * 1000000000;
	if (!w->o.block_rows)
		w->o.block_rows = 65536;
	if (w->o.block_rows > GR_BLOCK_MAX_ROWS) /* what readers accept */
		w->o.block_rows = GR_BLOCK_MAX_ROWS;
	/* Level 1: the columns reach zstd delta-coded and split into byte
	 * planes, and level 3 made them no smaller (3.717 against 3.716
	 * B/event on bench-store's stream) at 7-14 % more ingest time. */
	if (!w->o.zstd_level)
		w->o.zstd_level = 1;
	if (!(w->dir = strdup(opts->dir)))
		return -ENOMEM;
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
	return 0;
}

/* Creates DIR if need be, opens it (w->dirfd; adopted when root writes
 * another user's) and takes its writer lock.  Returns 0 or -errno
 * (-EBUSY: another writer holds it). */
static int writer_dir_lock(struct gr_writer *w)
{
	struct stat dst;
	int err;

	if (mkdir(w->dir, 0750) < 0 && errno != EEXIST) {
		err = -errno;
		wlog(w, "cannot create %s: %s", w->dir, strerror(errno));
		return err;
	}
	w->dirfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0 || fstat(w->dirfd, &dst) < 0) {
		err = -errno;
		wlog(w, "cannot open %s: %s", w->dir, strerror(errno));
		return err;
	}
	if (geteuid() == 0 && dst.st_uid != 0) {
		w->adopt = 1;
		w->dir_uid = dst.st_uid;
		w->dir_gid = dst.st_gid;
	}
	/* One writer per directory: a second would fork the hash chain. */
	w->lock_fd = dir_open(w, GR_LOCK_FILE, O_RDWR);
	if (w->lock_fd == -ENOENT)
		w->lock_fd = dir_create(w, GR_LOCK_FILE, O_RDWR, 0640);
	err = w->lock_fd < 0 ? w->lock_fd :
	      flock(w->lock_fd, LOCK_EX | LOCK_NB) < 0 ?
	      (errno == EWOULDBLOCK ? -EBUSY : -errno) : 0;
	if (err)
		wlog(w, "%s/%s: %s", w->dir, GR_LOCK_FILE, err == -EBUSY ?
		     "another writer holds this data directory" :
		     dir_strerror(err));
	return err;
}

/* Allocates the summary, the encoder, the column buffers, the dictionary's
 * hash and group_by_thread's arrays.  Returns 0 or -ENOMEM. */
static int writer_buffers(struct gr_writer *w)
{
	size_t n = w->o.block_rows, hcap = 1;
	int err;

	if (!(w->sum = gr_sum__new()) ||
	    !(w->enc = gr_encoder__new(w->o.zstd_level)) ||
	    !(w->coll = gr_coll_builder__new()))
		return -ENOMEM;
	tabs_init_layout(w);
	for (int t = 0; t < GR_NTABLES; t++)
		if ((err = tabs_alloc(w, t)))
			return err;
	if ((err = dict_grow_hash(w)))
		return err;
	while (hcap < 2 * n)
		hcap <<= 1;
	w->perm = malloc(n * sizeof(*w->perm));
	w->grp = malloc(n * sizeof(*w->grp));
	w->gstart = malloc(n * sizeof(*w->gstart));
	w->gkeys = malloc(n * sizeof(*w->gkeys));
	w->gkey_slot = malloc(hcap * sizeof(*w->gkey_slot));
	if (!w->perm || !w->grp || !w->gstart || !w->gkeys ||
	    !w->gkey_slot)
		return -ENOMEM;
	return 0;
}

/* Opens the MANIFEST, takes stock of the directory (recovering crashed
 * segments), applies retention and opens the first segment.  Returns 0
 * (also when a full disk leaves it without one) or -errno. */
static int writer_start(struct gr_writer *w)
{
	int err;

	if ((err = manifest_open(w)) || (err = scan_dir(w)))
		return err;
	retention(w);
	/* A full disk with nothing to delete is no reason not to start: the
	 * writer runs without a segment, counting, and tries again. */
	if ((err = segment_open_next(w)) && !is_full(err))
		return err;
	retention(w);
	return 0;
}

struct gr_writer *gr_writer__open(const struct gr_store_opts *opts)
{
	struct gr_writer *w = calloc(1, sizeof(*w));
	int err = -ENOMEM;

	if (!w)
		goto fail;
	w->lock_fd = -1;
	w->dirfd = -1;
	if ((err = writer_opts(w, opts)) || (err = writer_dir_lock(w)) ||
	    (err = writer_buffers(w)) || (err = writer_start(w)))
		goto fail;
	w->opened = 1;
	return w;
fail:
	if (w) {
		w->st.events = 0;
		if (w->db) {
			finalize_stmts(w);
			sqlite3_close(w->db);
			w->db = NULL;
		}
		gr_writer__close(w);
	}
	errno = -err;
	return NULL;
}

/* Flushes and seals the open segment.  A loss the final flush could not
 * write (a full disk) gets one more try once the seal has folded the WAL
 * away: a small segment of its own, so that the count is on disk. */
static int writer_stop(struct gr_writer *w)
{
	int err = 0, e2 = 0;
	if (!w->opened)
		return 0;
	/* Also without a segment: the flush tries to make one, and counts
	 * the events still buffered if it cannot. */
	err = gr_writer__flush(w);
	if (!w->db)
		return 0; /* lost, counted and logged: nothing to seal */
	e2 = w->seg_events ? segment_seal(w) : segment_discard(w);
	if (w->db) {
		/* Not sealed (a reader held it, or the disk is full): the
		 * next writer's recovery seals it, as the newest segment.
		 * For want of space that is no failure of the stop: the
		 * segment is valid and nothing in it is lost. */
		finalize_stmts(w);
		sqlite3_close(w->db);
		w->db = NULL;
		if (is_full(e2)) {
			wlog(w, "%s stays unsealed (the disk is full): the "
			     "next start seals it", w->seg_path);
			return 0;
		}
		return e2;
	}
	if (!e2 && (w->lost_pending[0] || w->lost_pending[1])) {
		retention(w);
		if (segment_open_next(w) == 0) {
			gr_writer__flush(w);
			e2 = w->seg_events ? segment_seal(w) :
					     segment_discard(w);
		}
		if (w->lost_pending[0] || w->lost_pending[1])
			wlog(w, "%" PRIu64 " lost events could not be written "
			     "as drops rows (the disk is full); status.json "
			     "has them", w->lost_pending[0] +
			     w->lost_pending[1]);
	}
	/* Events lost were counted: a stop is clean once the rest is
	 * sealed. */
	(void)err;
	return e2;
}

int gr_writer__close(struct gr_writer *w)
{
	int err = 0;
	if (!w)
		return 0;
	if (w->lock_fd >= 0)
		err = writer_stop(w);
	if (w->mw) {
		int64_t at = real_ns(w);
		int e3 = start_line(w);
		if (!e3)
			e3 = gr_manifest_w__stop(w->mw, at, w->last_seq,
						 w->st.events);
		if (e3)
			wlog(w, "cannot append to %s/%s: %s", w->dir,
			     GR_MANIFEST, strerror(-e3));
		gr_manifest_w__close(w->mw);
		w->mw = NULL;
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
	free(w->log);
	gr_buf__free(&w->log_bytes);
	free(w->dsrc);
	free(w->perm);
	free(w->grp);
	free(w->gstart);
	free(w->gkeys);
	free(w->gkey_slot);
	gr_encoder__free(w->enc);
	gr_coll_builder__free(w->coll);
	gr_buf__free(&w->coll_payload);
	gr_buf__free(&w->payload);
	gr_sum__free(w->sum);
	gr_buf__free(&w->sum_buf);
	if (w->lock_fd >= 0)
		close(w->lock_fd); /* releases the flock */
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->dir);
	free(w);
	return err;
}

void gr_writer__stats(const struct gr_writer *w, struct gr_writer_stats *st)
{
	*st = w->st;
	st->drops_pending = w->lost_pending[0] + w->lost_pending[1] +
			    w->txn_store_n[0] + w->txn_store_n[1];
	/* Column buffers are allocated a block's worth each, and resident
	 * as far as a table has ever filled them. */
	uint64_t b = 0;
	for (int t = 0; t < GR_NTABLES; t++) {
		const struct tabbuf *tb = &w->tabs[t];
		uint32_t rows = tb->n > tb->hw ? tb->n : tb->hw;
		for (int j = 0; j < tb->nstored; j++)
			b += (uint64_t)rows * sizeof(int64_t) +
			     (tb->cols[j].nulls ? (w->o.block_rows + 7) / 8 : 0);
	}
	b += (uint64_t)w->strs_cap * (sizeof(*w->strs) + sizeof(*w->lens) + 1) +
	     (uint64_t)w->hash_cap * sizeof(*w->hash) + w->dict_bytes;
	st->buffer_bytes = b;
}

int gr_writer__drops(const struct gr_writer *w,
		     int (*fn)(void *ctx, const char *source, uint64_t n),
		     void *ctx)
{
	for (int i = 0; i < w->ndsrc; i++) {
		int rc = fn(ctx, w->dsrc[i].name, w->dsrc[i].n);
		if (rc)
			return rc;
	}
	return 0;
}

const char *gr_writer__segment_path(const struct gr_writer *w)
{
	return w->seg_path;
}
