/* verify.c - `gpurec verify`: proves a data directory is as recorded.
 *
 * Independent checks, so that any one tampering shows in at least one:
 *   1. every block row's CRC (a flipped byte in any payload, in the open
 *      segment too, which has no hash yet);
 *   2. every sealed segment's SHA-256 against its seal line, and every
 *      field of the seal line (start, end, events, host, seq, prev, bytes)
 *      against the segment's own metadata, which the hash covers: queries
 *      skip segments by those fields, so an edited field must show;
 *   3. the chains: each line's lh= is the SHA-256 of the line before
 *      (format 2), each seal's prev= is the segment sealed before it, seal
 *      seqs ascend by exactly 1, each segment's own prev_sha256 agrees,
 *      every sealed segment not deleted is present, deletions take the
 *      oldest present segment first, and the open segment continues the
 *      last seal (seq + 1, prev): cutting the newest seals shows there;
 *   4. with a verification key (store/fss.h), every tag, the epochs'
 *      order and anchors, and that fss.key is at the last line's epoch:
 *      removing the newest lines shows even with no open segment.
 * Segments are ordered by seq (the manifest's order), never by their
 * wall-clock names, so a clock step changes nothing.
 *
 * A live writer (DATA/.lock held) is read as a snapshot: the manifest
 * before and after listing the directory must agree, else again; its
 * open segment is retried while the writer seals it (~3 s), and a
 * segment retention deletes while it is being checked is not a finding.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/codec.h"
#include "store/crypto.h"
#include "store/fss.h"
#include "store/scan.h"
#include "store/store.h"

struct vctx {
	struct gr_verify *r;
	const char *dir;
	int problems;
	int live;
};

static void problem(struct vctx *v, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(struct vctx *v, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Hands one finding (problem) or remark (note) to the caller as DIR/NAME
 * and a text: a full sentence without the path, truncated at 1 KiB, far
 * beyond any written here. */
static void report(struct vctx *v, int is_problem, const char *name,
		   const char *fmt, va_list ap)
{
	char path[4200], text[1024];
	vsnprintf(text, sizeof(text), fmt, ap);
	snprintf(path, sizeof(path), "%s/%s", v->dir, name);
	if (is_problem && v->r->problem)
		v->r->problem(v->r->ctx, path, text);
	else if (!is_problem && v->r->note)
		v->r->note(v->r->ctx, path, text);
	v->problems += is_problem;
}

static void problem(struct vctx *v, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(v, 1, name, fmt, ap);
	va_end(ap);
}

static void note(struct vctx *v, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(v, 0, name, fmt, ap);
	va_end(ap);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int gone(const char *dir, const char *name)
{
	char path[4200];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &sb) < 0 && errno == ENOENT;
}

/* What a segment says about itself. */
struct segmeta {
	int ok;                 /* opened and read */
	int sealed;
	int64_t seq, start_ts, end_ts, events;
	char prev[65];
	char host[256];
};

/* Walks every block of every event table of s, checking checksums and
 * headers (no column is decoded).  Returns the blocks checked, or -2 when
 * quiet_busy and the segment was locked (*busy set). */
static long walk_blocks(struct vctx *v, const char *name,
			struct gr_segment *s, int quiet_busy, int *busy)
{
	struct gr_scan *sc = gr_scan__new();
	char *err = NULL;
	long n = 0;
	int rc;

	if (!sc) {
		problem(v, name, "out of memory");
		return n;
	}
	for (int t = 0; t < GR_NTABLES; t++) {
		if (!(gr_tables[t].flags & GR_TF_EVENT))
			continue;
		if (gr_scan__start(sc, s, t, INT64_MIN, INT64_MAX, 0, &err)) {
			problem(v, name, "%s", err);
			free(err);
			break;
		}
		struct gr_scan_block b;
		while ((rc = gr_scan__next(sc, &b, &err)) != 0) {
			if (rc == -EBUSY && quiet_busy) {
				*busy = 1;
				free(err);
				n = -2;
				goto out;
			}
			if (rc == -EPROTO) {
				n++;
				problem(v, name, "block %lld of %s is malformed",
					(long long)b.id, gr_tables[t].name);
				continue;
			}
			if (rc < 0) {
				problem(v, name, "%s", err ? err : "?");
				free(err);
				err = NULL;
				if (rc == -EBADMSG) {
					n++; /* checked, and found bad */
					continue;
				}
				break;
			}
			n++;
		}
	}
out:
	gr_scan__free(sc);
	return n;
}

/* Checks every block of one segment; returns the blocks checked, -1 if it
 * could not be opened, or -2 if it was busy or could not be opened yet
 * (only when quiet_busy, for a live writer's open segment, which may be
 * being sealed or still being created: then nothing was reported and
 * *busy says which). */
static long check_blocks(struct vctx *v, const char *name, const char *path,
			 int immutable, int quiet_busy, struct segmeta *sm,
			 int *busy)
{
	struct gr_segment *s;
	char *err = NULL;
	long n;
	int rc;

	memset(sm, 0, sizeof(*sm));
	sm->sealed = -1;
	if ((rc = gr_segment__open(path, immutable, &s, &err))) {
		if (quiet_busy) {
			*busy = rc == -EBUSY;
			free(err);
			return -2;
		}
		if (immutable && v->live && gone(v->dir, name)) {
			free(err);
			return -3; /* retention deleted it meanwhile */
		}
		problem(v, name, "cannot open: %s", err ? err : "?");
		free(err);
		return -1;
	}
	const struct gr_segment_info *si = gr_segment__info(s);
	sm->ok = 1;
	sm->sealed = si->sealed;
	sm->seq = si->seq;
	sm->start_ts = si->start_ts;
	sm->end_ts = si->end_ts;
	sm->events = si->events;
	snprintf(sm->prev, sizeof(sm->prev), "%s",
		 si->prev_sha256 ? si->prev_sha256 : "");
	snprintf(sm->host, sizeof(sm->host), "%s", si->host ? si->host : "");
	n = walk_blocks(v, name, s, quiet_busy, busy);
	gr_segment__close(s);
	return n;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A snapshot of dir: the manifest's bytes read before and after listing
 * the directory are the same (a live writer appends and deletes while we
 * look).  Only the bytes are compared, so the window is the listing's,
 * however long the manifest.  -EAGAIN: no quiet moment in 30 s. */
static int snapshot(const char *dir, int live, struct gr_manifest *m,
		    char ***names, int *n)
{
	int64_t until = mono_ms() + 30000;
	for (;;) {
		char *b1, *b2 = NULL;
		size_t l1, l2 = 0;
		int rc;
		if ((rc = gr_manifest__read_raw(dir, &b1, &l1)))
			return rc;
		if ((rc = gr_segments__list(dir, names, n))) {
			free(b1);
			return rc;
		}
		if (live && (rc = gr_manifest__read_raw(dir, &b2, &l2))) {
			free(b1);
			gr_segments__free(*names, *n);
			return rc;
		}
		int same = !live || (l1 == l2 && (!l1 || !memcmp(b1, b2, l1)));
		free(b2);
		if (same) {
			memset(m, 0, sizeof(*m));
			snprintf(m->last_sha, sizeof(m->last_sha), "-");
			rc = b1 ? gr_manifest__parse(b1, l1, m) : 0;
			free(b1);
			if (rc)
				gr_segments__free(*names, *n);
			return rc;
		}
		free(b1);
		gr_segments__free(*names, *n);
		if (mono_ms() > until)
			return -EAGAIN;
		sleep_ms(5 + rand() % 20);
	}
}

static int listed(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

/* Line i's place in the lh chain (format 2 lines only, once one is
 * seen: *v2_seen). */
static void check_line_lh(struct vctx *v, const struct gr_manifest *m, int i,
			  int *v2_seen)
{
	const struct gr_manifest_line *l = &m->l[i];
	const char *want = i ? m->l[i - 1].sha : "-";

	if (l->v2) {
		*v2_seen = 1;
		if (strcmp(l->lh, want) != 0)
			problem(v, GR_MANIFEST, "line %d: line chain "
				"broken: lh=%.16s…, the line before "
				"hashes to %.16s…", l->lineno, l->lh,
				want);
	} else if (*v2_seen && l->kind != GR_ML_BAD) {
		problem(v, GR_MANIFEST, "line %d: a line without lh= "
			"after format-2 lines", l->lineno);
	}
}

/* Seal line l, the nseal-th: its prev against the hash sealed before it
 * (prev) and its seq. */
static void check_seal_line(struct vctx *v, const struct gr_manifest *m,
			    const struct gr_manifest_line *l, int nseal,
			    const char *prev)
{
	const struct gr_manifest_entry *e = &m->e[l->entry];

	if (strcmp(e->prev, prev) != 0)
		problem(v, e->name, "hash chain broken: manifest "
			"says prev=%.16s…, the segment sealed "
			"before it has %.16s…", e->prev, prev);
	if (e->seq > 0 && e->seq != nseal)
		problem(v, e->name, "out of order: seal line "
			"%d has seq=%" PRId64 ", expected %d",
			l->lineno, e->seq, nseal);
	if (e->seq < 0 && l->entry &&
	    m->e[l->entry - 1].seq < 0 &&
	    strcmp(m->e[l->entry - 1].name, e->name) >= 0)
		/* Format 1: names were the only order. */
		problem(v, e->name, "out of order: sealed after "
			"%s", m->e[l->entry - 1].name);
}

/* Stop line l, after nseal seal lines: the seq it stopped at is the last
 * seal's. */
static void check_stop_line(struct vctx *v, const struct gr_manifest *m,
			    const struct gr_manifest_line *l, int nseal)
{
	int64_t last = nseal ? m->e[nseal - 1].seq : 0;

	if (nseal && last < 0)
		last = nseal;
	if (l->seq != last)
		problem(v, GR_MANIFEST, "line %d: tail missing: "
			"the writer stopped after seal seq %"
			PRId64 ", the manifest's last seal is "
			"seq %" PRId64, l->lineno, l->seq,
			last);
}

/* Delete line l: it deletes a segment sealed before it and still present
 * (present[*head..np), entries; -1 once deleted), the oldest first. */
static void check_delete_line(struct vctx *v, const struct gr_manifest *m,
			      const struct gr_manifest_line *l, int *present,
			      int np, int *head)
{
	const struct gr_manifest_entry *de = gr_manifest__find(m, l->name);

	if (l->seq > 0 && de && de->seq > 0 &&
	    de->seq != l->seq)
		problem(v, l->name, "MANIFEST line %d deletes "
			"seq %" PRId64 ", the segment was "
			"sealed as seq %" PRId64, l->lineno,
			l->seq, de->seq);
	int found = -1;
	for (int k = *head; k < np; k++)
		if (present[k] >= 0 &&
		    strcmp(m->e[present[k]].name, l->name) == 0)
			found = k;
	while (*head < np && present[*head] < 0)
		(*head)++;
	if (found < 0) {
		problem(v, l->name, "MANIFEST line %d deletes a "
			"segment not sealed before it, or "
			"deleted already", l->lineno);
		return;
	}
	if (found != *head)
		problem(v, l->name, "deleted out of "
			"order: retention deletes the "
			"oldest first (%s)",
			m->e[present[*head]].name);
	present[found] = -1;
	if (!gone(v->dir, l->name) && v->live)
		sleep_ms(200); /* an unlink to come */
}

/* The manifest's own lines: the lh chain, seal seqs and prev chain,
 * deletions (oldest present first), and with a key the sealing tags. */
static void check_lines(struct vctx *v, const struct gr_manifest *m,
			char **names, int n)
{
	const char *prev = "-";
	int v2_seen = 0, nseal = 0, first_tagged = -1;
	/* Sealed segments still present at this point of the manifest, in
	 * seal order: retention deletes from the front. */
	int *present = calloc((size_t)m->n + 1, sizeof(*present));
	int np = 0, head = 0;

	if (m->bad_lines)
		problem(v, GR_MANIFEST, "%d malformed line(s), first at line %d",
			m->bad_lines, m->first_bad_line);
	for (int i = 0; i < m->nl; i++) {
		const struct gr_manifest_line *l = &m->l[i];
		check_line_lh(v, m, i, &v2_seen);
		if (l->epoch >= 0 && first_tagged < 0)
			first_tagged = i;
		if (first_tagged >= 0 && l->epoch < 0 && l->kind != GR_ML_BAD)
			problem(v, GR_MANIFEST, "line %d: not sealed, after "
				"sealed lines", l->lineno);
		if (l->kind == GR_ML_SEAL) {
			check_seal_line(v, m, l, ++nseal, prev);
			prev = m->e[l->entry].sha256;
			if (present)
				present[np++] = l->entry;
		} else if (l->kind == GR_ML_STOP && l->seq >= 0) {
			check_stop_line(v, m, l, nseal);
		} else if (l->kind == GR_ML_DELETE && present) {
			check_delete_line(v, m, l, present, np, &head);
		}
	}
	free(present);
	(void)names;
	(void)n;
	v->r->lines += m->nl;
	if (first_tagged < 0)
		return;
	for (int i = first_tagged; i < m->nl; i++)
		v->r->lines_tagged += m->l[i].epoch >= 0;
}

/* The last tagged line's epoch in a manifest read now (-1: none). */
static int64_t last_epoch_now(const char *dir)
{
	struct gr_manifest m;
	int64_t e = -1;
	if (gr_manifest__read(dir, &m))
		return -1;
	for (int i = m.nl - 1; i >= 0 && e < 0; i--)
		e = m.l[i].epoch;
	gr_manifest__free(&m);
	return e;
}

/* Whether, read after a key at epoch key_epoch, the manifest's last line
 * reaches that epoch (within ~1 s: a writer evolves its key, then appends
 * the anchor).  A cut tail never catches up. */
static int live_key_caught_up(struct vctx *v, int64_t key_epoch)
{
	for (int t = 0; t < 20; t++) {
		if (last_epoch_now(v->dir) >= key_epoch)
			return 1;
		sleep_ms(50);
	}
	return 0;
}

/* With a verification key: every tag, epochs ascending, an anchor opening
 * each epoch and each run, fss.key at the last line's epoch. */
static void check_tags(struct vctx *v, const struct gr_manifest *m)
{
	int first = -1;
	int64_t last_epoch = -1;
	for (int i = 0; i < m->nl; i++)
		if (m->l[i].epoch >= 0) {
			first = i;
			break;
		}
	if (first < 0) {
		if (m->nl)
			problem(v, GR_MANIFEST, "no line is sealed, yet a "
				"verification key was given");
		return;
	}
	if (first > 0) {
		v->r->lines_unauthenticated += first;
		note(v, GR_MANIFEST, "%d line(s) before the first sealed line "
		     "are not authenticated", first);
	}
	for (int i = first; i < m->nl; i++) {
		const struct gr_manifest_line *l = &m->l[i];
		char tag[GR_FSS_TAG_HEX + 1];
		if (l->epoch < 0)
			continue; /* reported by check_lines */
		if (gr_fss_vkey__tag(v->r->vkey, l->epoch, l->text,
				     l->tagged_len, tag) ||
		    strcmp(tag, l->tag) != 0)
			problem(v, GR_MANIFEST, "line %d: sealing tag does not "
				"verify (epoch %" PRId64 ")", l->lineno,
				l->epoch);
		if (l->epoch < last_epoch)
			problem(v, GR_MANIFEST, "line %d: epoch %" PRId64
				" after epoch %" PRId64 " (epochs never go "
				"back)", l->lineno, l->epoch, last_epoch);
		else if (l->epoch > last_epoch && l->kind != GR_ML_ANCHOR)
			problem(v, GR_MANIFEST, "line %d: epoch %" PRId64
				" opens without an anchor line", l->lineno,
				l->epoch);
		if (l->kind == GR_ML_START &&
		    (i == 0 || m->l[i - 1].kind != GR_ML_ANCHOR))
			problem(v, GR_MANIFEST, "line %d: a writer's start "
				"without its anchor line", l->lineno);
		if (l->epoch > last_epoch)
			last_epoch = l->epoch;
	}

	int dfd = open(v->dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	struct gr_fss *f = NULL;
	char *err = NULL;
	int rc = dfd < 0 ? -errno : gr_fss__load_readonly(dfd, &f, &err);
	if (dfd >= 0)
		close(dfd);
	if (rc == -ENOENT) {
		problem(v, GR_FSS_FILE, "missing, while MANIFEST lines are "
			"sealed");
	} else if (rc) {
		problem(v, GR_FSS_FILE, "cannot load: %s",
			err ? err : strerror(-rc));
	} else if (!gr_fss_vkey__owns(v->r->vkey, f)) {
		problem(v, GR_FSS_FILE, "its key does not belong to this "
			"verification key (or was moved back)");
	} else if (gr_fss__epoch(f) > last_epoch && v->live &&
		   live_key_caught_up(v, gr_fss__epoch(f))) {
		/* A live writer moved its key and wrote the anchor after our
		 * snapshot: the manifest read after the key holds it. */
	} else if (gr_fss__epoch(f) != last_epoch) {
		problem(v, GR_MANIFEST, "tail missing: fss.key is at epoch "
			"%" PRId64 ", the last sealed line at epoch %" PRId64,
			gr_fss__epoch(f), last_epoch);
	}
	free(err);
	gr_fss__free(f);
}

/* Checks a sealed segment against its seal line e: its SHA-256, the
 * metadata the hash covers (read into sm by check_blocks), deletion and
 * size.  Returns blocks, or -3 when retention deleted it meanwhile. */
static long check_sealed(struct vctx *v, const char *name, const char *path,
			 const struct gr_manifest_entry *e,
			 const struct segmeta *sm, long blocks)
{
	char hex[65];
	uint8_t sha[32];
	uint64_t bytes = 0;
	struct stat sb;
	int rc;

	if ((rc = gr_sha256__file(path, sha))) {
		if (v->live && rc == -ENOENT)
			return -3;
		problem(v, name, "cannot read: %s", strerror(-rc));
	} else {
		gr_hex(sha, 32, hex);
		if (strcmp(hex, e->sha256) != 0)
			problem(v, name, "SHA-256 mismatch: "
				"manifest %.16s…, file %.16s…",
				e->sha256, hex);
	}
	if (e->deleted && !(v->live && gone(v->dir, name)))
		problem(v, name, "present, but the manifest records "
			"its deletion");
	if (sm->ok && sm->prev[0] && strcmp(sm->prev, e->prev) != 0)
		problem(v, name, "hash chain broken: segment says "
			"prev=%.16s…, manifest prev=%.16s…", sm->prev,
			e->prev);
	if (sm->ok && !rc && strcmp(hex, e->sha256) == 0) {
		/* The metadata is the hash's: the line must agree. */
		if (sm->start_ts != e->start_ts || sm->end_ts != e->end_ts)
			problem(v, name, "manifest says start=%" PRId64
				" end=%" PRId64 ", the segment %" PRId64
				"..%" PRId64, e->start_ts, e->end_ts,
				sm->start_ts, sm->end_ts);
		if ((uint64_t)sm->events != e->events)
			problem(v, name, "manifest says events=%" PRIu64
				", the segment %" PRId64, e->events,
				sm->events);
		if (strcmp(sm->host, e->host) != 0)
			problem(v, name, "manifest says host=%s, the "
				"segment %s", e->host, sm->host);
		if ((sm->seq || e->seq > 0) && sm->seq != e->seq)
			problem(v, name, "manifest says seq=%" PRId64
				", the segment %" PRId64, e->seq,
				sm->seq);
		if (sm->sealed != 1)
			problem(v, name, "in the manifest, but its "
				"metadata says unsealed");
	}
	if (lstat(path, &sb) == 0)
		bytes = (uint64_t)sb.st_size;
	else if (v->live && errno == ENOENT)
		return -3;
	if (bytes != e->bytes)
		problem(v, name, "manifest says bytes=%" PRIu64 ", the "
			"file has %" PRIu64, e->bytes, bytes);
	return blocks;
}

/* One segment file: its blocks, and against its seal line (if any) its
 * hash and metadata.  *state gets its enum gr_verify_state. */
static long check_segment(struct vctx *v, const struct gr_manifest *m,
			  const char *name, const struct gr_manifest_entry *e,
			  int newest, int open_seen, int *state)
{
	char path[4200];
	struct segmeta sm;
	long blocks;
	int busy = 0;

	snprintf(path, sizeof(path), "%s/%s", v->dir, name);
	*state = e ? GR_VS_SEALED : GR_VS_OPEN;
	if (e) {
		blocks = check_blocks(v, name, path, 1, 0, &sm, &busy);
	} else {
		/* The open segment: a writer sealing it holds it ~ms to s,
		 * and one just created has no tables until its first commit. */
		for (int t = 0;; t++) {
			blocks = check_blocks(v, name, path, 0, v->live && t < 30,
					      &sm, &busy);
			if (blocks != -2)
				break;
			if (t >= 29 && busy) {
				*state = GR_VS_BUSY;
				note(v, name, "open (busy): its writer held it "
				     "for 3 s");
				return 0;
			}
			sleep_ms(100);
		}
	}
	if (blocks == -3)
		return -3; /* deleted by retention while we looked */
	if (e)
		return check_sealed(v, name, path, e, &sm, blocks);
	if (blocks < 0)
		return blocks;
	/* Only the open segment is outside the manifest: the newest file,
	 * chained to the last seal, next in seq. */
	const char *last = m->n ? m->e[m->n - 1].sha256 : "-";
	int64_t want = m->n ? (m->e[m->n - 1].seq > 0 ? m->e[m->n - 1].seq :
				m->n) + 1 : 1;
	if (!newest || open_seen || (sm.sealed != 0 && sm.sealed != 1)) {
		problem(v, name, "not in the manifest (a sealed segment no "
			"recorder sealed here)");
		return blocks;
	}
	if (sm.prev[0] && strcmp(sm.prev, last) != 0)
		problem(v, name, "hash chain broken: open segment says "
			"prev=%.16s…, last sealed is %.16s…", sm.prev, last);
	if (sm.seq && sm.seq != want)
		problem(v, name, "tail missing: open segment has seq=%" PRId64
			", the last seal line is for seq %" PRId64, sm.seq,
			want - 1);
	if (sm.sealed == 1) {
		*state = GR_VS_SEALING;
		note(v, name, "open (sealing): sealed, its manifest line not "
		     "yet written; the writer's next start appends it");
	}
	return blocks;
}

struct ordered {
	char *name;
	int64_t seq;  /* manifest order for sealed, meta seq otherwise */
	int sealed;
};

static int cmp_ordered(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The meta seq of an unsealed segment, without checking it (0: none). */
static int64_t peek_seq(const char *dir, const char *name)
{
	char path[4200], *err = NULL;
	struct gr_segment *s;
	int64_t q = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (gr_segment__open(path, 0, &s, &err) == 0) {
		q = gr_segment__info(s)->seq;
		gr_segment__close(s);
	}
	free(err);
	return q;
}

int gr_verify__dir(const char *dir, struct gr_verify *r)
{
	struct vctx v = { r, dir, 0, gr_dir__writer_live(dir) };
	struct gr_manifest m;
	char **names;
	int n, rc;

	if ((rc = snapshot(dir, v.live, &m, &names, &n)))
		return rc;
	check_lines(&v, &m, names, n);
	if (r->vkey)
		check_tags(&v, &m);
	else if (m.nl && !m.l[m.nl - 1].tag[0])
		note(&v, GR_MANIFEST, "not sealed: anyone with write access "
		     "could rewrite the chain");

	/* Every sealed segment the manifest lists must be there. */
	for (int i = 0; i < m.n; i++) {
		const struct gr_manifest_entry *e = &m.e[i];
		if (e->deleted || gr_manifest__find(&m, e->name) != e)
			continue;
		if (!listed(names, n, e->name))
			problem(&v, e->name, "missing: sealed in the manifest, "
				"not deleted by retention, not on disk");
	}

	/* Files in seq order: sealed ones as the manifest sealed them, then
	 * the others by their own seq (names only break ties). */
	struct ordered *o = calloc((size_t)n + 1, sizeof(*o));
	if (!o) {
		gr_manifest__free(&m);
		gr_segments__free(names, n);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		const struct gr_manifest_entry *e = gr_manifest__find(&m,
								      names[i]);
		o[i].name = names[i];
		o[i].sealed = e != NULL;
		o[i].seq = e ? (int64_t)(e - m.e) - (int64_t)m.n :
			       peek_seq(dir, names[i]);
	}
	if (n)
		qsort(o, (size_t)n, sizeof(*o), cmp_ordered);

	int open_seen = 0;
	for (int i = 0; i < n; i++) {
		const struct gr_manifest_entry *e = o[i].sealed ?
			gr_manifest__find(&m, o[i].name) : NULL;
		char path[4200];
		int before = v.problems, state;
		long blocks = check_segment(&v, &m, o[i].name, e, i == n - 1,
					    open_seen, &state);
		if (!e)
			open_seen = 1;
		if (blocks == -3)
			continue; /* retention took it meanwhile */
		snprintf(path, sizeof(path), "%s/%s", dir, o[i].name);
		r->segments++;
		if (blocks > 0)
			r->blocks += blocks;
		if (r->segment)
			r->segment(r->ctx, path, blocks, state,
				   v.problems == before);
	}
	free(o);
	gr_manifest__free(&m);
	gr_segments__free(names, n);
	r->problems += v.problems;
	return v.problems;
}
