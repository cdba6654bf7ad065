/* manifest.c - the data directory's append-only MANIFEST: parsing and
 * appending, kept together so the two cannot drift.
 *
 * One line per sealed segment and one per segment retention deleted;
 * format 2 (issue 15) adds the writer's start and stop, sealing anchors
 * and store-side loss, and ends every line with lh= (the SHA-256 of the
 * line before, "-" for the first), which chains the lines themselves:
 * removing, reordering or editing a line breaks the chain at the next one.
 * When DATA/fss.key exists (store/fss.h) every line also carries epoch=
 * and tag=, an HMAC under that epoch's key over the line up to epoch=, so
 * whoever becomes root later cannot rewrite history without the
 * verification key noticing.  Format 1 lines (no lh=) keep parsing.
 *
 * Lines are only ever appended, each with one write(2) followed by
 * fsync(2), so a crash leaves at worst a torn last line, which readers
 * count as bad and which the next writer cuts off before it appends
 * (gr_manifest_w__open).  Readers open the file O_RDONLY|O_NOFOLLOW and
 * read it whole; a manifest is ~400 bytes a segment.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/fss.h"
#include "store/crypto.h"
#include "store/store.h"

#define LINE_MAX_BYTES 4096
#define MANIFEST_RESERVE (64 << 10) /* kept allocated past the end */

static int field(const char *line, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;
	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			p += kl + 1;
			size_t n = strcspn(p, " \n");
			if (n >= len)
				return -1;
			memcpy(out, p, n);
			out[n] = 0;
			return 0;
		}
		p += kl;
	}
	return -1;
}

static int field_i64(const char *line, const char *key, int64_t *v)
{
	char buf[32], *end;
	if (field(line, key, buf, sizeof(buf)) || !buf[0])
		return -1;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	return errno || *end ? -1 : 0;
}

static int is_hex64(const char *s)
{
	if (strlen(s) != 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

/* The SHA-256 of n bytes as hex; "" if libcrypto failed (a line whose
 * hash is "" never matches an lh=, so the failure shows). */
static int sha_hex(const void *p, size_t n, char hex[65])
{
	uint8_t d[32];
	int err = gr_sha256(p, n, d);
	if (err) {
		hex[0] = 0;
		return err;
	}
	gr_hex(d, 32, hex);
	return 0;
}

/* Fills l from its text; returns 0, or -1 when the line does not parse
 * (l->kind is then GR_ML_BAD). */
static int parse_line(struct gr_manifest_line *l, struct gr_manifest_entry *e)
{
	const char *t = l->text;
	char word[16], buf[32];
	int64_t v;

	l->kind = GR_ML_BAD;
	l->seq = l->at = l->events = l->epoch = l->pid = -1;
	if (!strchr(t, '\n') || sscanf(t, "%15s", word) != 1)
		return -1;
	l->v2 = field(t, "lh", l->lh, sizeof(l->lh)) == 0;
	if (l->v2 && strcmp(l->lh, "-") != 0 && !is_hex64(l->lh))
		return -1;
	if (field(t, "epoch", buf, sizeof(buf)) == 0) {
		const char *tg = strstr(t, " tag=");
		if (!l->v2 || field_i64(t, "epoch", &l->epoch) ||
		    l->epoch < 0 || !tg ||
		    field(t, "tag", l->tag, sizeof(l->tag)) ||
		    !is_hex64(l->tag))
			return -1;
		l->tagged_len = (size_t)(tg - t);
	}
	if (field_i64(t, "seq", &l->seq))
		l->seq = -1;
	if (field_i64(t, "at", &l->at))
		l->at = -1;
	if (strcmp(word, "seal") == 0 || strcmp(word, "delete") == 0) {
		if (sscanf(t, "%*s %95s", l->name) != 1)
			return -1;
	}
	if (strcmp(word, "seal") == 0) {
		int64_t ev, by;
		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", l->name);
		if (field(t, "sha256", e->sha256, sizeof(e->sha256)) ||
		    field(t, "prev", e->prev, sizeof(e->prev)) ||
		    field_i64(t, "start", &e->start_ts) ||
		    field_i64(t, "end", &e->end_ts) ||
		    field_i64(t, "events", &ev) ||
		    field_i64(t, "bytes", &by) ||
		    field(t, "host", e->host, sizeof(e->host)) ||
		    (l->v2 && (l->seq < 1 || l->at < 0)))
			return -1;
		e->events = (uint64_t)ev;
		e->bytes = (uint64_t)by;
		e->seq = l->seq;
		l->kind = GR_ML_SEAL;
	} else if (strcmp(word, "delete") == 0) {
		if (field(t, "reason", buf, sizeof(buf)) ||
		    (l->v2 && (l->seq < 1 || l->at < 0)))
			return -1;
		l->kind = GR_ML_DELETE;
	} else if (strcmp(word, "start") == 0 && l->v2) {
		if (l->at < 0 || field_i64(t, "pid", &l->pid))
			return -1;
		l->kind = GR_ML_START;
	} else if (strcmp(word, "stop") == 0 && l->v2) {
		if (l->at < 0 || field_i64(t, "events", &l->events))
			return -1;
		l->kind = GR_ML_STOP;
	} else if (strcmp(word, "anchor") == 0 && l->v2) {
		if (l->at < 0 || l->seq < 0 || l->epoch < 0)
			return -1;
		l->kind = GR_ML_ANCHOR;
	} else if (strcmp(word, "lost") == 0 && l->v2) {
		if (l->at < 0 || field_i64(t, "count", &v))
			return -1;
		l->kind = GR_ML_LOST;
	} else {
		return -1;
	}
	return 0;
}

/* The names of seal lines, hashed: a manifest of a long-running recorder
 * has tens of thousands, and each delete line looks one up. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The index of the last seal line named name, or -1. */
static int name_last(const struct gr_manifest *m, const char *name)
{
	if (!m->nbyname)
		return -1;
	uint32_t mask = (uint32_t)m->nbyname - 1;
	for (uint32_t h = name_hash(name) & mask;; h = (h + 1) & mask) {
		int v = m->byname[h];
		if (!v)
			return -1;
		if (strcmp(m->e[v - 1].name, name) == 0)
			return v - 1;
	}
}

/* Puts entry i in the table (the slot of an earlier same name or a free
 * one); the table has room. */
static void name_put(struct gr_manifest *m, int i)
{
	uint32_t mask = (uint32_t)m->nbyname - 1;
	uint32_t h = name_hash(m->e[i].name) & mask;
	for (; m->byname[h]; h = (h + 1) & mask)
		if (strcmp(m->e[m->byname[h] - 1].name, m->e[i].name) == 0)
			break;
	m->byname[h] = i + 1;
}

/* Entry i (the newest) joins the table; the one before it of the same
 * name, if any, is chained behind it. */
static int name_add(struct gr_manifest *m, int i)
{
	if ((i + 1) * 2 > m->nbyname) {
		int c = m->nbyname ? m->nbyname * 2 : 128;
		int *t = calloc((size_t)c, sizeof(*t));
		if (!t)
			return -ENOMEM;
		free(m->byname);
		m->byname = t;
		m->nbyname = c;
		for (int j = 0; j < i; j++)
			name_put(m, j);
	}
	m->e[i].same = name_last(m, m->e[i].name);
	name_put(m, i);
	return 0;
}

static int push_line(struct gr_manifest *m, const char *p, size_t n,
		     int lineno, int *cap)
{
	if (m->nl == *cap) {
		int c = *cap ? *cap * 2 : 64;
		void *q = realloc(m->l, (size_t)c * sizeof(*m->l));
		if (!q)
			return -ENOMEM;
		m->l = q;
		*cap = c;
	}
	struct gr_manifest_line *l = &m->l[m->nl];
	memset(l, 0, sizeof(*l));
	l->entry = -1;
	l->lineno = lineno;
	if (!(l->text = malloc(n + 1)))
		return -ENOMEM;
	memcpy(l->text, p, n);
	l->text[n] = 0;
	m->nl++;
	sha_hex(p, n, l->sha);
	if (l->text[0] == '#' || strcmp(l->text, "\n") == 0) {
		l->kind = GR_ML_BAD; /* a comment: skipped, still chained */
		l->seq = l->at = l->events = l->epoch = l->pid = -1;
		return 0;
	}
	struct gr_manifest_entry e;
	int bad = n > LINE_MAX_BYTES || memchr(p, 0, n) ||
		  parse_line(l, &e) != 0;
	if (bad) {
		l->kind = GR_ML_BAD;
		if (!m->bad_lines++)
			m->first_bad_line = lineno;
		return 0;
	}
	if (l->kind == GR_ML_SEAL) {
		if (m->n == m->ecap) {
			int c = m->ecap ? m->ecap * 2 : 64;
			void *q = realloc(m->e, (size_t)c * sizeof(*m->e));
			if (!q)
				return -ENOMEM;
			m->e = q;
			m->ecap = c;
		}
		e.line = m->nl - 1;
		l->entry = m->n;
		m->e[m->n++] = e;
		return name_add(m, m->n - 1);
	} else if (l->kind == GR_ML_DELETE) {
		/* Every seal line of the name (one, in practice). */
		for (int i = name_last(m, l->name); i >= 0; i = m->e[i].same)
			m->e[i].deleted = 1;
	}
	return 0;
}

int gr_manifest__parse(const char *buf, size_t len, struct gr_manifest *m)
{
	int cap = 0, lineno = 0, err;
	memset(m, 0, sizeof(*m));
	snprintf(m->last_sha, sizeof(m->last_sha), "-");
	m->size = len;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) + 1 : len - off;
		if ((err = push_line(m, buf + off, n, ++lineno, &cap))) {
			gr_manifest__free(m);
			return err;
		}
		memcpy(m->last_sha, m->l[m->nl - 1].sha, 65);
		off += n;
	}
	return 0;
}

/* Reads all of fd.  Returns 0 with *out malloc'd (NUL-terminated), or
 * -errno. */
static int slurp(int fd, char **out, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n + 1 == cap) {
			char *q = realloc(b, cap *= 2);
			if (!q) {
				free(b);
				return -ENOMEM;
			}
			b = q;
		}
		ssize_t r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(b);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	b[n] = 0;
	*out = b;
	*len = n;
	return 0;
}

int gr_manifest__read_raw(const char *dir, char **buf, size_t *len)
{
	char path[4200];

	*buf = NULL;
	*len = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, GR_MANIFEST);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	int err = slurp(fd, buf, len);
	close(fd);
	return err;
}

int gr_manifest__read(const char *dir, struct gr_manifest *m)
{
	char *buf;
	size_t len;
	int err;

	memset(m, 0, sizeof(*m));
	snprintf(m->last_sha, sizeof(m->last_sha), "-");
	if ((err = gr_manifest__read_raw(dir, &buf, &len)) || !buf)
		return err;
	err = gr_manifest__parse(buf, len, m);
	free(buf);
	return err;
}

void gr_manifest__free(struct gr_manifest *m)
{
	for (int i = 0; i < m->nl; i++)
		free(m->l[i].text);
	free(m->l);
	free(m->e);
	free(m->byname);
	memset(m, 0, sizeof(*m));
}

const struct gr_manifest_entry *
gr_manifest__find(const struct gr_manifest *m, const char *name)
{
	/* The last seal line wins; a name is sealed once in practice. */
	int i = name_last(m, name);
	return i < 0 ? NULL : &m->e[i];
}

/* ---- appending --------------------------------------------------------- */

struct gr_manifest_w {
	int fd;                  /* MANIFEST, O_APPEND */
	off_t size;              /* bytes in it: a failed append is cut back */
	char last_sha[65];       /* lh= of the next line */
	struct gr_fss *fss;      /* NULL: lines are not tagged */
	int lines;               /* appended by this writer */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
};

static void mlog(struct gr_manifest_w *mw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void mlog(struct gr_manifest_w *mw, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (mw->log)
		mw->log(mw->log_ctx, line);
	else
		fprintf(stderr, "%s\n", line);
}

int gr_manifest_w__open(int dirfd, void (*log)(void *ctx, const char *line),
			void *log_ctx, int *created,
			struct gr_manifest_w **out)
{
	struct gr_manifest_w *mw = calloc(1, sizeof(*mw));
	struct stat sb;
	char *buf = NULL;
	size_t len = 0;
	int err;

	*out = NULL;
	*created = 0;
	if (!mw)
		return -ENOMEM;
	mw->log = log;
	mw->log_ctx = log_ctx;
	mw->fd = openat(dirfd, GR_MANIFEST, O_RDWR | O_APPEND | O_NOFOLLOW |
						O_CLOEXEC);
	if (mw->fd < 0 && errno == ENOENT) {
		mw->fd = openat(dirfd, GR_MANIFEST, O_RDWR | O_APPEND |
				O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0640);
		*created = mw->fd >= 0;
	}
	if (mw->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(mw->fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_nlink != 1) {
		err = -EINVAL;
		mlog(mw, "%s: not a regular file with one link; refusing it",
		     GR_MANIFEST);
		goto fail;
	}
	if ((err = slurp(mw->fd, &buf, &len)))
		goto fail;
	/* A torn tail was never a line: cut it off, and say so. */
	size_t keep = len;
	while (keep && buf[keep - 1] != '\n')
		keep--;
	if (keep != len) {
		if (ftruncate(mw->fd, (off_t)keep) < 0 || fsync(mw->fd) < 0) {
			err = -errno;
			mlog(mw, "%s: cannot remove a torn last line: %s",
			     GR_MANIFEST, strerror(errno));
			goto fail;
		}
		mlog(mw, "%s: removed a torn last line (%zu bytes, an append "
		     "cut short by a crash)", GR_MANIFEST, len - keep);
	}
	mw->size = (off_t)keep;
	snprintf(mw->last_sha, sizeof(mw->last_sha), "-");
	if (keep) {
		size_t from = keep - 1;
		while (from && buf[from - 1] != '\n')
			from--;
		sha_hex(buf + from, keep - from, mw->last_sha);
	}
	free(buf);
	buf = NULL;

	char *why = NULL;
	err = gr_fss__load(dirfd, &mw->fss, &why);
	if (err && err != -ENOENT) {
		/* A recorder that stops recording because its key file is
		 * damaged loses the evidence the key was to protect; lines
		 * written untagged after tagged ones are what verify
		 * --verification-key reports, so the damage stays seen. */
		mlog(mw, "%s: %s; sealing is OFF until it is repaired (gpurec "
		     "seal-setup --force): the lines written meanwhile are not "
		     "tagged, and verify --verification-key reports them",
		     GR_FSS_FILE, why ? why : strerror(-err));
		free(why);
	}
	if (err)
		mw->fss = NULL;
	err = 0;
	*out = mw;
	return 0;
fail:
	free(buf);
	if (mw->fd >= 0)
		close(mw->fd);
	free(mw);
	return err;
}

int gr_manifest_w__fd(const struct gr_manifest_w *mw)
{
	return mw->fd;
}

int gr_manifest_w__sealing(const struct gr_manifest_w *mw)
{
	return mw->fss != NULL;
}

/* Writes one finished line with one write(2) and fsyncs it; a short or
 * failed write is cut back so the next line starts clean. */
static int put_line(struct gr_manifest_w *mw, const char *line, size_t len)
{
	ssize_t n = write(mw->fd, line, len);
	int err = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
	if (!err && fsync(mw->fd) < 0)
		err = -errno;
	if (err) {
		if (n > 0 && ftruncate(mw->fd, mw->size) < 0)
			mlog(mw, "%s: cannot cut back a failed append: %s",
			     GR_MANIFEST, strerror(errno));
		return err;
	}
	mw->size += (off_t)len;
	/* Keep room for the next lines allocated past the end (the size
	 * stays): on a full disk the deletions that make room must still be
	 * logged, and a seal line written.  Best effort. */
	if (fallocate(mw->fd, FALLOC_FL_KEEP_SIZE, mw->size,
		      MANIFEST_RESERVE) < 0 && errno != EOPNOTSUPP &&
	    errno != ENOSPC)
		mlog(mw, "%s: cannot reserve room: %s", GR_MANIFEST,
		     strerror(errno));
	if (sha_hex(line, len, mw->last_sha))
		mlog(mw, "%s: cannot hash the line just written", GR_MANIFEST);
	mw->lines++;
	return 0;
}

/* Finishes body (no newline) with lh= and, when sealing, epoch= tag=,
 * and appends it. */
static int finish_line(struct gr_manifest_w *mw, const char *body)
{
	char line[LINE_MAX_BYTES + 1];
	int n = snprintf(line, sizeof(line), "%s lh=%s", body, mw->last_sha);
	if (n < 0 || n >= (int)sizeof(line) - 100)
		return -ENAMETOOLONG;
	if (mw->fss) {
		char tag[GR_FSS_TAG_HEX + 1];
		n += snprintf(line + n, sizeof(line) - (size_t)n,
			      " epoch=%" PRId64, gr_fss__epoch(mw->fss));
		if (gr_fss__tag(mw->fss, line, (size_t)n, tag))
			return -EIO;
		n += snprintf(line + n, sizeof(line) - (size_t)n, " tag=%s",
			      tag);
	}
	line[n++] = '\n';
	return put_line(mw, line, (size_t)n);
}

/* When sealing, moves the key to the epoch of @now_ns (erasing the old
 * key) and writes that epoch's anchor line, if the epoch moved or this
 * writer has written nothing yet.  Returns 0 or -errno. */
static int enter_epoch(struct gr_manifest_w *mw, int64_t now_ns,
		       int64_t anchor_seq)
{
	int err;

	if (!mw->fss)
		return 0;
	/* The key never moves back: a clock stepped backwards keeps
	 * tagging in the current epoch. */
	int64_t cur = gr_fss__epoch(mw->fss);
	int64_t to = gr_fss__epoch_at(mw->fss, now_ns);
	if (to < cur)
		to = cur;
	if (to == cur && mw->lines)
		return 0;
	if ((err = gr_fss__evolve(mw->fss, to))) {
		mlog(mw, "%s: cannot move to epoch %" PRId64 ": %s",
		     GR_FSS_FILE, to, strerror(-err));
		return err;
	}
	char a[128];
	snprintf(a, sizeof(a), "anchor at=%" PRId64 " seq=%" PRId64, now_ns,
		 anchor_seq);
	return finish_line(mw, a);
}

int gr_manifest_w__append(struct gr_manifest_w *mw, int64_t now_ns,
			  int64_t anchor_seq, const char *fmt, ...)
{
	char body[LINE_MAX_BYTES];
	va_list ap;
	int err;

	va_start(ap, fmt);
	int n = vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(body) - 200)
		return -ENAMETOOLONG;
	if ((err = enter_epoch(mw, now_ns, anchor_seq)))
		return err;
	return finish_line(mw, body);
}

int gr_manifest_w__tick(struct gr_manifest_w *mw, int64_t now_ns,
			int64_t anchor_seq)
{
	if (!mw->fss || !mw->lines ||
	    gr_fss__epoch_at(mw->fss, now_ns) <= gr_fss__epoch(mw->fss))
		return 0;
	return enter_epoch(mw, now_ns, anchor_seq);
}

void gr_manifest_w__close(struct gr_manifest_w *mw)
{
	if (!mw)
		return;
	close(mw->fd);
	gr_fss__free(mw->fss);
	free(mw);
}

/* The line formats the writer appends, beside parse_line() which reads
 * them back: docs/storage.md names each field. */

int gr_manifest_w__seal(struct gr_manifest_w *mw, int64_t at,
			int64_t anchor_seq, const struct gr_manifest_entry *e)
{
	return gr_manifest_w__append(mw, at, anchor_seq,
		"seal %s sha256=%s prev=%s start=%" PRId64 " end=%" PRId64
		" events=%" PRIu64 " bytes=%" PRIu64 " host=%s seq=%" PRId64
		" at=%" PRId64, e->name, e->sha256, e->prev, e->start_ts,
		e->end_ts, e->events, e->bytes, e->host, e->seq, at);
}

int gr_manifest_w__delete(struct gr_manifest_w *mw, int64_t at,
			  int64_t anchor_seq, const char *name,
			  const char *reason, uint64_t bytes, int64_t seq)
{
	return gr_manifest_w__append(mw, at, anchor_seq,
		"delete %s reason=%s at=%" PRId64 " bytes=%" PRIu64
		" seq=%" PRId64, name, reason, at, bytes, seq);
}

int gr_manifest_w__stop(struct gr_manifest_w *mw, int64_t at,
			int64_t anchor_seq, uint64_t events)
{
	/* seq= (the last sealed) lets verify see seal lines cut from the
	 * end of a cleanly stopped run. */
	return gr_manifest_w__append(mw, at, anchor_seq,
		"stop at=%" PRId64 " events=%" PRIu64 " seq=%" PRId64, at,
		events, anchor_seq);
}

int gr_manifest__start_body(char *buf, size_t len, int64_t at, int pid,
			    const char *version, const char *boot_id)
{
	int n = snprintf(buf, len, "start at=%" PRId64 " pid=%d version=%s"
			 " boot=%s", at, pid, version,
			 boot_id && boot_id[0] ? boot_id : "-");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
