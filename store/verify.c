/* verify.c - `gpurec verify`: proves a data directory is as recorded.
 *
 * Three independent checks, so that any one tampering shows in at least
 * one of them:
 *   1. every block row's CRC (catches a flipped byte in any payload, in the
 *      open segment too, which has no hash yet);
 *   2. every sealed segment's SHA-256 against its MANIFEST line (catches
 *      any changed byte anywhere in a sealed file);
 *   3. the hash chain: each seal line's prev= is the sealed segment before
 *      it, each segment's own prev_sha256 metadata agrees, names ascend,
 *      and every sealed segment the manifest lists and retention did not
 *      delete is present (catches removed, inserted or reordered files).
 */
#include <errno.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/codec.h"
#include "store/crypto.h"
#include "store/store.h"

struct vctx {
	struct gr_verify *r;
	const char *dir;
	int problems;
};

static void problem(struct vctx *v, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reports one finding as DIR/NAME and a reason (a full sentence without
 * the path; truncated at 1 KiB, far beyond any reason written here). */
static void problem(struct vctx *v, const char *name, const char *fmt, ...)
{
	char path[4200], reason[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", v->dir, name);
	if (v->r->problem)
		v->r->problem(v->r->ctx, path, reason);
	v->problems++;
}

/* Checks every block of one segment; returns the blocks checked, or -1
 * if it could not be opened. */
static long check_blocks(struct vctx *v, const char *name, const char *path,
			 int immutable, char **prev_sha, int *sealed)
{
	struct gr_segment *s;
	struct gr_block blk = { 0 };
	char *err = NULL;
	long n = 0;

	*prev_sha = NULL;
	*sealed = -1;
	if (gr_segment__open(path, immutable, &s, &err)) {
		problem(v, name, "cannot open: %s", err ? err : "?");
		free(err);
		return -1;
	}
	*prev_sha = s->prev_sha256 ? strdup(s->prev_sha256) : NULL;
	*sealed = s->sealed;
	for (int t = 0; t < GR_NTABLES; t++) {
		if (!(gr_tables[t].flags & GR_TF_EVENT))
			continue;
		if (gr_segment__blocks(s, gr_tables[t].name, INT64_MIN,
				       INT64_MAX, &err)) {
			problem(v, name, "%s", err);
			free(err);
			break;
		}
		struct gr_blockref b;
		int rc;
		while ((rc = gr_segment__next_block(s, &b, &err)) != 0) {
			if (rc < 0) {
				problem(v, name, "%s", err);
				free(err);
				err = NULL;
				if (rc == -EBADMSG) {
					n++; /* checked, and found bad */
					continue;
				}
				break;
			}
			n++;
			if (gr_block__parse(&blk, b.payload, b.len) ||
			    blk.nrows != (uint64_t)b.count)
				problem(v, name, "block %lld of %s is malformed",
					(long long)b.id, gr_tables[t].name);
		}
	}
	gr_block__free(&blk);
	gr_segment__close(s);
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gr_verify__dir(const char *dir, struct gr_verify *r)
{
	struct vctx v = { r, dir, 0 };
	struct gr_manifest m;
	char **names, path[4200], hex[65];
	int n, rc;

	if ((rc = gr_segments__list(dir, &names, &n)))
		return rc;
	if ((rc = gr_manifest__read(dir, &m))) {
		gr_segments__free(names, n);
		return rc;
	}
	if (m.bad_lines)
		problem(&v, GR_MANIFEST, "%d malformed line(s), first at line %d",
			m.bad_lines, m.first_bad_line);

	/* The chain as the manifest records it. */
	const char *prev = "-";
	for (int i = 0; i < m.n; i++) {
		const struct gr_manifest_entry *e = &m.e[i];
		if (strcmp(e->prev, prev) != 0)
			problem(&v, e->name, "hash chain broken: manifest says "
				"prev=%.16s…, the segment sealed before it has "
				"%.16s…", e->prev, prev);
		if (i && strcmp(m.e[i - 1].name, e->name) >= 0)
			problem(&v, e->name, "out of order: sealed after %s",
				m.e[i - 1].name);
		prev = e->sha256;
	}

	/* Every sealed segment the manifest lists must be there. */
	for (int i = 0; i < m.n; i++) {
		const struct gr_manifest_entry *e = &m.e[i];
		if (e->deleted)
			continue;
		if (!n || !bsearch(&(const char *){ e->name }, names, (size_t)n,
			     sizeof(*names), cmp_str))
			problem(&v, e->name, "missing: sealed in the manifest, "
				"not deleted by retention, not on disk");
	}

	/* Each file: checksums, hash, chain metadata. */
	int open_seen = 0;
	for (int i = 0; i < n; i++) {
		const struct gr_manifest_entry *e = gr_manifest__find(&m, names[i]);
		char *seg_prev = NULL;
		int sealed;
		uint8_t sha[32];
		int before = v.problems;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		long blocks = check_blocks(&v, names[i], path, e != NULL,
					   &seg_prev, &sealed);
		if (e) {
			if ((rc = gr_sha256__file(path, sha))) {
				problem(&v, names[i], "cannot read: %s",
					strerror(-rc));
			} else {
				gr_hex(sha, 32, hex);
				if (strcmp(hex, e->sha256) != 0)
					problem(&v, names[i], "SHA-256 mismatch: "
						"manifest %.16s…, file %.16s…",
						e->sha256, hex);
			}
			if (e->deleted)
				problem(&v, names[i], "present, but the "
					"manifest records its deletion");
			if (seg_prev && strcmp(seg_prev, e->prev) != 0)
				problem(&v, names[i], "hash chain broken: "
					"segment says prev=%.16s…, manifest "
					"prev=%.16s…", seg_prev, e->prev);
		} else if (blocks >= 0) {
			/* Only the open segment is outside the manifest: the
			 * newest file, unsealed, chained to the last seal. */
			const char *last = m.n ? m.e[m.n - 1].sha256 : "-";
			if (sealed != 0 || i != n - 1 || open_seen)
				problem(&v, names[i], "not in the manifest (a "
					"sealed segment no recorder sealed here)");
			else if (seg_prev && strcmp(seg_prev, last) != 0)
				problem(&v, names[i], "hash chain broken: open "
					"segment says prev=%.16s…, last sealed "
					"is %.16s…", seg_prev, last);
			open_seen = 1;
		}
		r->segments++;
		if (blocks > 0)
			r->blocks += blocks;
		if (r->segment)
			r->segment(r->ctx, path, blocks, e != NULL,
				   v.problems == before);
		free(seg_prev);
	}
	gr_manifest__free(&m);
	gr_segments__free(names, n);
	r->problems += v.problems;
	return v.problems;
}
