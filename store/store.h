/* store.h - the segment store, written by gpurecd and read by gpurec.
 *
 * A data directory holds segment files, each a self-contained SQLite
 * database (metadata, its own string dictionary, and compressed blocks of
 * events), plus an append-only MANIFEST that records each sealed segment's
 * SHA-256 and every deletion.  docs/storage.md describes the layout; this
 * header is the interface both programs use.
 */
#ifndef GR_STORE_H
#define GR_STORE_H

#include <stdint.h>
#include <sys/types.h>

#include "schema/schema.h"

#define GR_SEG_SUFFIX ".seg"
#define GR_MANIFEST "MANIFEST"
#define GR_LOCK_FILE ".lock"
#define GR_SEG_FORMAT 1

/* ---- Writer ------------------------------------------------------------ */

struct gr_store_opts {
	const char *dir;         /* data directory, created if missing */
	const char *host;        /* NULL: gethostname() */
	uint64_t segment_size;   /* rotate at this many bytes (0: 256 MiB) */
	int64_t segment_age_ns;  /* rotate after this long (0: 1 hour) */
	uint64_t max_disk;       /* segments may use this much (0: no cap) */
	uint64_t keep_free;      /* leave this much free on the fs (0: none) */
	int64_t max_age_ns;      /* delete sealed segments whose newest event
				  * is older than this (0: keep) */
	int64_t min_age_ns;      /* retention never deletes a segment sealed
				  * less than this long ago, for any reason
				  * (0: none) */
	uint32_t block_rows;     /* events per block at most (0: 65536) */
	int zstd_level;          /* 0: 1 */
	int no_immutable;        /* do not set FS_IMMUTABLE_FL when sealing */
	/* Tests only: after the first rotation the writer's CLOCK_REALTIME
	 * jumps by this much (negative: backwards), as after a clock step. */
	int64_t test_clock_step_ns;
	/* Receives one line per notable event (rotation, deletion, error);
	 * NULL logs to stderr. */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
};

struct gr_writer;

/* Opens dir for writing: takes the directory's lock (errno EBUSY if
 * another writer holds it), seals a segment left open by a crash, starts a
 * new segment chained to the last sealed one, applies retention.  On a
 * full disk (nothing left to delete) it still opens, without a segment:
 * events are counted as dropped and each flush tries again.  Returns NULL
 * with errno set on failure (and logs why). */
struct gr_writer *gr_writer__open(const struct gr_store_opts *opts);

/* Returns the dictionary id of a string (interning it if new), or 0 with
 * errno set.  Ids stay valid for the writer's life unless
 * gr_writer__dict_gen() changes, which happens only at a rotation when the
 * dictionary outgrew its cap; callers caching ids compare generations. */
uint32_t gr_writer__intern(struct gr_writer *w, const char *s, size_t len);
uint32_t gr_writer__dict_gen(const struct gr_writer *w);

/* Appends one event to table t.  vals is indexed by the table's column
 * constants (GR_<table>_<col>); STR columns hold ids from
 * gr_writer__intern; HOST columns are ignored.  Bit i of nullmask makes
 * column i NULL.  Returns 0 or -EINVAL (bad table or string id), -ENOMEM.
 * Events the store cannot write (disk full, I/O error) are counted by the
 * store itself (gr_writer_stats, `drops` rows store:*), not returned, so
 * that no caller counts them twice. */
int gr_writer__append(struct gr_writer *w, int t, const int64_t *vals,
		      uint64_t nullmask);

/* Writes every partial block and commits them in one transaction, then
 * rotates and applies retention if due.  A commit that fails for want of
 * space first deletes the oldest sealed segments (older than min_age) and
 * tries again; what still cannot be written is dropped and counted.
 * Returns 0 or -errno (-ENOSPC / -EDQUOT: disk full). */
int gr_writer__flush(struct gr_writer *w);

/* Seals the open segment now and starts a new one.  Returns 0 or -errno. */
int gr_writer__rotate(struct gr_writer *w);

/* Flushes, seals the open segment and frees w.  Returns 0 or -errno. */
int gr_writer__close(struct gr_writer *w);

struct gr_writer_stats {
	uint64_t events;       /* appended since open */
	uint64_t blocks;       /* written since open */
	uint64_t payload_bytes;/* compressed payload bytes written */
	uint64_t segments;     /* sealed since open */
	uint64_t deleted;      /* removed by retention since open */
	uint64_t deleted_max_age; /* ... of them, for max_age */
	/* "max-disk" or "keep-free" while the directory is over that budget
	 * and min_age keeps its oldest segment, else NULL. */
	const char *over_budget;
	uint64_t disk_bytes;   /* segment bytes in the directory now */
	uint64_t dropped;      /* events given up: their block could not be
				* written (the sum of the two below) */
	uint64_t dropped_disk_full; /* ... for want of space: ENOSPC, EDQUOT */
	uint64_t dropped_io_error;  /* ... for any other write failure */
	uint64_t drops_pending; /* of those, not yet in a committed `drops`
				 * row (written by the next flush that
				 * succeeds) */
	uint64_t buffer_bytes;  /* memory its column buffers (as far as
				 * filled) and string dictionary hold */
};
void gr_writer__stats(const struct gr_writer *w, struct gr_writer_stats *st);

/* The `drops` sources of the store's own losses. */
#define GR_DROP_DISK_FULL "store:disk_full"
#define GR_DROP_IO_ERROR "store:io_error"

/* Calls fn for every source of `drops` rows appended since open (the
 * probe families' and the store's own), with the events it counted;
 * stops at fn's first non-zero return, which it returns. */
int gr_writer__drops(const struct gr_writer *w,
		     int (*fn)(void *ctx, const char *source, uint64_t n),
		     void *ctx);

/* The path of the segment being written ("" while none is open). */
const char *gr_writer__segment_path(const struct gr_writer *w);

/* ---- Manifest ---------------------------------------------------------- */

/* docs/storage.md describes both formats.  Format 1 lines (before issue
 * 15) carry no lh=; format 2 lines end with lh= (the SHA-256 of the line
 * before) and, when sealing is set up, epoch= and tag=. */
enum gr_mline_kind {
	GR_ML_BAD,      /* did not parse */
	GR_ML_SEAL,
	GR_ML_DELETE,
	GR_ML_START,    /* a writer opened the directory */
	GR_ML_STOP,     /* a writer closed it cleanly */
	GR_ML_ANCHOR,   /* first line of a new sealing epoch */
	GR_ML_LOST,     /* store-side loss */
};

struct gr_manifest_line {
	int kind;           /* enum gr_mline_kind */
	int lineno;         /* 1-based */
	int v2;             /* carries lh= */
	char name[96];      /* seal, delete: the segment */
	int64_t seq;        /* seq=, or -1 */
	int64_t at;         /* at=, or -1 */
	int64_t events;     /* stop: events=, or -1 */
	int64_t pid;        /* start: the writer's pid=, or -1 */
	char lh[65];        /* lh= as written ("-": first line) */
	char sha[65];       /* SHA-256 of this line's bytes with its '\n' */
	int64_t epoch;      /* epoch=, or -1 when untagged */
	char tag[65];
	char *text;         /* the line's bytes, with '\n' when it had one */
	size_t tagged_len;  /* bytes the tag covers (through " epoch=E") */
	int entry;          /* seal: index into gr_manifest.e, else -1 */
};

struct gr_manifest_entry {
	char name[96];      /* segment file name, no directory */
	int deleted;        /* a later line deleted it */
	char sha256[65];    /* hex */
	char prev[65];      /* hex of the predecessor, or "-" */
	int64_t start_ts, end_ts;
	uint64_t events, bytes;
	char host[256];
	int64_t seq;        /* seq= (format 2), or -1 */
	int line;           /* index into gr_manifest.l */
	int same;           /* the seal line before with this name, or -1 */
};

struct gr_manifest {
	struct gr_manifest_entry *e; /* seal lines in file order */
	int n;
	struct gr_manifest_line *l;  /* every line in file order */
	int nl;
	int bad_lines;               /* lines that did not parse */
	int first_bad_line;
	uint64_t size;               /* bytes read */
	char last_sha[65];           /* SHA-256 of the last line, or "-" */
	int ecap;                    /* room in e */
	int *byname;                 /* hash of names: 1 + index of the last
	                              * seal line of that name, 0 = empty */
	int nbyname;                 /* slots, a power of two */
};

/* Reads dir/MANIFEST (opened O_RDONLY|O_NOFOLLOW; nothing is created).
 * A missing manifest is an empty one.  Returns 0 or -errno. */
int gr_manifest__read(const char *dir, struct gr_manifest *m);
/* dir/MANIFEST's bytes, opened the same way: *buf malloc'd and
 * NUL-terminated, or NULL (and *len 0) when there is none.  Returns 0 or
 * -errno. */
int gr_manifest__read_raw(const char *dir, char **buf, size_t *len);
/* The same from a buffer (tests, fuzzing).  Returns 0 or -ENOMEM. */
int gr_manifest__parse(const char *buf, size_t len, struct gr_manifest *m);
void gr_manifest__free(struct gr_manifest *m);
/* Returns the entry for a segment file name, or NULL. */
const struct gr_manifest_entry *
gr_manifest__find(const struct gr_manifest *m, const char *name);

/* The appending side, used by the one writer of a directory. */
struct gr_manifest_w;

/* Opens dirfd/MANIFEST for appending (O_NOFOLLOW, created 0640 if
 * missing; *created says so, for the caller's ownership rules), cuts off
 * a torn last line left by a crash, and loads the chain head and, when
 * dirfd/fss.key exists, the sealing key.  log (may be NULL) receives one
 * line per notable thing.  Returns 0 or -errno. */
int gr_manifest_w__open(int dirfd, void (*log)(void *ctx, const char *line),
			void *log_ctx, int *created,
			struct gr_manifest_w **out);
int gr_manifest_w__fd(const struct gr_manifest_w *mw);
/* Whether lines are tagged (fss.key was loaded). */
int gr_manifest_w__sealing(const struct gr_manifest_w *mw);

/* Appends one format-2 line: fmt's text (no newline), then lh= and, when
 * sealing, epoch= and tag= (preceded by an anchor line carrying
 * seq=anchor_seq when the epoch moved or this is the writer's first line).
 * One write(2) and one fsync(2) per line.  Returns 0 or -errno. */
int gr_manifest_w__append(struct gr_manifest_w *mw, int64_t now_ns,
			  int64_t anchor_seq, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* When sealing and real time @now_ns has left the key's epoch, moves the
 * key to the current epoch (the old one erased from fss.key) and writes
 * its anchor line (seq=anchor_seq), so that the key on disk is never more
 * than an epoch old while the writer runs, lines or not.  A no-op before
 * this writer's first line (its `start` line opens the run with an
 * anchor).  Returns 0 or -errno. */
int gr_manifest_w__tick(struct gr_manifest_w *mw, int64_t now_ns,
			int64_t anchor_seq);
void gr_manifest_w__close(struct gr_manifest_w *mw);

/* The lines a writer appends, each through gr_manifest_w__append: a seal
 * line from e's name, sha256, prev, start_ts, end_ts, events, bytes, host
 * and seq; a deletion; a clean stop (seq= is anchor_seq, the last sealed).
 * Return 0 or -errno. */
int gr_manifest_w__seal(struct gr_manifest_w *mw, int64_t at,
			int64_t anchor_seq, const struct gr_manifest_entry *e);
int gr_manifest_w__delete(struct gr_manifest_w *mw, int64_t at,
			  int64_t anchor_seq, const char *name,
			  const char *reason, uint64_t bytes, int64_t seq);
int gr_manifest_w__stop(struct gr_manifest_w *mw, int64_t at,
			int64_t anchor_seq, uint64_t events);
/* Formats a run's `start` line body (appended later, once there is room).
 * Returns 0 or -ENAMETOOLONG. */
int gr_manifest__start_body(char *buf, size_t len, int64_t at, int pid,
			    const char *version, const char *boot_id);

/* ---- Reader ------------------------------------------------------------ */

/* One segment file opened for reading: opaque, read through the accessors
 * below and the scan cursor (store/scan.h).  Its SQLite tables are the
 * store's business alone. */
struct gr_segment;

/* What a segment's metadata says. */
struct gr_segment_info {
	char *path;
	char *host;
	int sealed;
	int64_t start_ts, end_ts;     /* from metadata; 0 when unknown */
	int64_t events;
	int schema_version;
	char *prev_sha256;            /* NULL when absent */
	int64_t seq;                  /* meta seq; 0 when absent (format 1) */
};

/* Opens a segment read-only; immutable says it is sealed and may be read
 * without locks.  Returns 0, or -errno / -EINVAL with *err set to a
 * malloc'd reason. */
int gr_segment__open(const char *path, int immutable, struct gr_segment **out,
		     char **err);
void gr_segment__close(struct gr_segment *s);

/* The segment's metadata, valid until it is closed. */
const struct gr_segment_info *gr_segment__info(const struct gr_segment *s);

/* A segment's string dictionary: strings by id (1..n), NUL-terminated. */
struct gr_dict {
	uint32_t n;                   /* highest id */
	const char **s;               /* by id; NULL for unused ids */
	uint32_t *len;
	char *arena;
};

/* The string of dictionary id, its length in *len; NULL where id names
 * none. */
static inline const char *gr_dict__str(const struct gr_dict *d, int64_t id,
				       uint32_t *len)
{
	if (!d || id <= 0 || (uint64_t)id > d->n || !d->s[id])
		return NULL;
	*len = d->len[id];
	return d->s[id];
}
void gr_dict__free(struct gr_dict *d);

/* Loads the dictionary (once; scans load it themselves when they decode a
 * string column).  Returns 0 or -errno with *err set. */
int gr_segment__load_dict(struct gr_segment *s, char **err);
/* The loaded dictionary, or NULL before it is loaded. */
const struct gr_dict *gr_segment__dict(const struct gr_segment *s);
/* Hands the loaded dictionary (or NULL) to the caller, who frees it with
 * gr_dict__free: strings handed out stay valid after the segment closes. */
struct gr_dict *gr_segment__take_dict(struct gr_segment *s);

/* The span of the segment's blocks (all tables): 1 with *ts_min, *ts_max
 * and *events (rows) set, 0 when it has no block (*events 0), or -EIO
 * with *err set.  A sealed segment's come from its metadata (the seal
 * wrote them from its blocks), an open one's from the blocks. */
int gr_segment__span(struct gr_segment *s, int64_t *ts_min, int64_t *ts_max,
		     int64_t *events, char **err);

/* One table's blocks in a segment, from their row headers (no payload is
 * read).  events and bytes are sums as doubles (SQL total()). */
struct gr_table_blocks {
	const char *table;            /* the stored name, known or not */
	int64_t blocks;
	double events, bytes;
	int64_t ts_min, ts_max;
};
/* Calls fn once per table with blocks; stops at fn's first non-zero
 * return, which it returns.  Returns 0, or -EIO with *err set. */
int gr_segment__table_blocks(struct gr_segment *s,
			     int (*fn)(void *ctx,
				       const struct gr_table_blocks *tb),
			     void *ctx, char **err);

/* The rows of table's blocks in s that lie wholly inside [lo, hi], from
 * their row headers: no payload is read and no checksum checked.  Sets
 * *rows and returns 0, or -EIO with *err set. */
int gr_segment__rows_inside(struct gr_segment *s, const char *table,
			    int64_t lo, int64_t hi, int64_t *rows, char **err);

/* Opens and closes a read transaction, so that several reads of an open
 * segment see one state while its writer commits. */
void gr_segment__read_begin(struct gr_segment *s);
void gr_segment__read_end(struct gr_segment *s);

/* ---- Catalog: the segments of one or more directories ------------------ */

struct gr_catalog_seg {
	char *path;
	const char *name;             /* points into path */
	int dir;                      /* index into the dirs given */
	int sealed;                   /* listed in the manifest */
	int64_t start_ts, end_ts;     /* from the manifest when sealed */
	uint64_t bytes;
	const struct gr_manifest_entry *m;
};

struct gr_catalog {
	int ndirs;
	char **dirs;
	struct gr_manifest *manifests; /* one per dir */
	struct gr_catalog_seg *segs;   /* by dir, then seq (manifest order) */
	int nsegs;
};

/* Lists the segments of dirs.  Returns 0, or -errno with *err naming the
 * directory that could not be read. */
int gr_catalog__open(struct gr_catalog *c, char *const *dirs, int ndirs,
		     char **err);
void gr_catalog__free(struct gr_catalog *c);

/* Whether dir's writer is running: /proc/locks shows a lock on DATA/.lock
 * (read, not tried: nothing is created or locked). */
int gr_dir__writer_live(const char *dir);

/* Returns 1 if name looks like a segment file name. */
int gr_segment_name_ok(const char *name);

/* Lists the segment file names of dir, sorted (= by time), into a
 * malloc'd array of malloc'd names.  Returns 0 or -errno. */
int gr_segments__list(const char *dir, char ***names, int *n);
void gr_segments__free(char **names, int n);

/* ---- Verify ------------------------------------------------------------ */

/* A segment's state as verify found it. */
enum gr_verify_state {
	GR_VS_OPEN,        /* unsealed, the newest: being written (or a crash's) */
	GR_VS_SEALED,      /* sealed and in the manifest */
	GR_VS_SEALING,     /* sealed, newest, seal line not yet appended */
	GR_VS_BUSY,        /* open, locked by its writer past the retries */
};

struct gr_fss_vkey;

/* How gr_verify__dir reports: callbacks (any may be NULL) and totals
 * it adds to, so one struct may span several directories. */
struct gr_verify {
	/* One call per finding: path is DIR/NAME (a segment, or MANIFEST),
	 * reason says what is wrong without repeating the path. */
	void (*problem)(void *ctx, const char *path, const char *reason);
	/* One call per segment file checked, after its findings: blocks
	 * checked (-1: it could not be opened), sealed per the manifest
	 * (enum gr_verify_state: GR_VS_SEALED is 1), ok when it added no
	 * finding. */
	void (*segment)(void *ctx, const char *path, long blocks, int sealed,
			int ok);
	/* Statements that are not findings: a limit of what was proven
	 * ("not sealed: …"), a live writer's state. */
	void (*note)(void *ctx, const char *path, const char *text);
	void *ctx;
	/* The verification key (gpurec seal-setup), or NULL. */
	struct gr_fss_vkey *vkey;
	int segments;  /* segment files checked */
	long blocks;   /* blocks whose checksum was checked */
	int problems;  /* findings */
	int lines;            /* MANIFEST lines read */
	int lines_tagged;     /* of them, carrying a sealing tag */
	int lines_unauthenticated; /* checked with a key: before the first
				    * tagged line */
};

/* Checks every block checksum of every segment in dir, each sealed
 * segment's SHA-256 and metadata against its seal line, the manifest's
 * line chain, deletions and tail, and with r->vkey its sealing tags:
 * docs/storage.md lists the checks.  Works on a live recorder (a
 * consistent snapshot, the open segment retried while it is sealed).
 * Returns the number of problems found in dir (0: all good), or -errno
 * if dir could not be read. */
int gr_verify__dir(const char *dir, struct gr_verify *r);

#endif
