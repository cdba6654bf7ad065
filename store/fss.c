/* fss.c - forward-secure sealing keys: the key file, its one-way
 * evolution, the verification key and the tags (store/fss.h).
 *
 * The key file is one line of fixed length,
 *
 *   gpurec-fss 1 start=S interval=I epoch=E key=HEX64 id=HEX16\n
 *
 * S, I (nanoseconds) and E as 19 zero-padded digits, so that evolving the
 * key rewrites the same bytes in place (pwrite at offset 0, then fsync):
 * no new file, no rename, and the previous key's bytes are overwritten in
 * the file's own blocks.  (A copy-on-write file system or an SSD's flash
 * translation may still keep the old block; docs/security.md says so.)
 * The loader accepts only that canonical form, so a file is either one the
 * recorder wrote or refused.  id is the first 8 bytes of
 * SHA-256("gpurec-fss-id" || K0): it names the setup, is the same in every
 * epoch, and lets a verifier tell a key file of another setup from a key
 * file that was tampered with.
 *
 * Keys: K(0) is the seed, K(e+1) = SHA-256("gpurec-fss-evolve" || K(e)); a
 * tag is HMAC-SHA-256 under K(e).  A walk of more than GR_FSS_WALK_MAX
 * steps is refused (-ERANGE): an epoch number read from a hostile MANIFEST
 * must not keep a verifier hashing for hours.
 *
 * The data directory's rules (spec: openat on the directory's fd,
 * O_NOFOLLOW, O_EXCL creation, fchown only of a file just created, a file
 * that must exist checked by fstat as regular with one link) apply here
 * as to every file in DATA.  Key bytes are wiped (OPENSSL_cleanse) from
 * every buffer that held them before it is freed or goes out of scope.
 */
#include "store/fss.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/crypto.h"

#define NS ((int64_t)1000000000)
#define KEY_LEN 32
#define ID_LEN 8
#define TMP_NAME GR_FSS_FILE ".tmp"
#define NUM_W 19				/* digits of INT64_MAX */
#define LINE_FMT "gpurec-fss 1 start=%019" PRId64 " interval=%019" PRId64 \
		 " epoch=%019" PRId64 " key=%s id=%s\n"
/* The line's length: the format's text plus its fields. */
#define LINE_LEN (sizeof("gpurec-fss 1 start= interval= epoch= key= id=\n") \
		  - 1 + 3 * NUM_W + 2 * KEY_LEN + 2 * ID_LEN)
#define VKEY_PREFIX "gpurec-fss1-"

struct gr_fss {
	int fd;		/* fss.key, O_RDWR (or O_RDONLY: no evolve) */
	int writable;		/* fd was opened for writing */
	int64_t start_ns;	/* epoch 0 begins, CLOCK_REALTIME */
	int64_t interval_ns;	/* an epoch's length, > 0 */
	int64_t epoch;		/* the epoch key belongs to */
	uint8_t key[KEY_LEN];	/* K(epoch) */
	char id[2 * ID_LEN + 1];	/* the setup's id, hex */
};

struct gr_fss_vkey {
	uint8_t seed[KEY_LEN];	/* K(0) */
	int64_t start_ns, interval_ns;
	int64_t cur_e;		/* the epoch cur belongs to */
	uint8_t cur[KEY_LEN];	/* K(cur_e): where the next walk starts */
	char id[2 * ID_LEN + 1];
};

static void set_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	free(*err);
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}

/* K(e+1) from K(e), in place.  Returns 0 or -EIO. */
static int key_step(uint8_t k[KEY_LEN])
{
	static const char label[] = "gpurec-fss-evolve";
	uint8_t buf[sizeof(label) - 1 + KEY_LEN];
	int rc;

	memcpy(buf, label, sizeof(label) - 1);
	memcpy(buf + sizeof(label) - 1, k, KEY_LEN);
	rc = gr_sha256(buf, sizeof(buf), k);
	gr_crypto__wipe(buf, sizeof(buf));
	return rc;
}

/* Moves k from epoch from to epoch to (>= from).  Returns 0, -ERANGE (too
 * many steps) or -EIO; k is wiped on failure. */
static int key_walk(uint8_t k[KEY_LEN], int64_t from, int64_t to)
{
	int rc = 0;

	if (to - from > GR_FSS_WALK_MAX)
		return -ERANGE;
	for (; from < to && !rc; from++)
		rc = key_step(k);
	if (rc)
		gr_crypto__wipe(k, KEY_LEN);
	return rc;
}

/* The setup's id of seed, as hex.  Returns 0 or -EIO. */
static int seed_id(const uint8_t seed[KEY_LEN], char id[2 * ID_LEN + 1])
{
	static const char label[] = "gpurec-fss-id";
	uint8_t buf[sizeof(label) - 1 + KEY_LEN], d[GR_SHA256_LEN];
	int rc;

	memcpy(buf, label, sizeof(label) - 1);
	memcpy(buf + sizeof(label) - 1, seed, KEY_LEN);
	rc = gr_sha256(buf, sizeof(buf), d);
	gr_crypto__wipe(buf, sizeof(buf));
	if (!rc)
		gr_hex(d, ID_LEN, id);
	return rc;
}

static int64_t epoch_at(int64_t start_ns, int64_t interval_ns, int64_t t_ns)
{
	if (t_ns <= start_ns)
		return 0;
	/* start >= 0 and t > start: t - start does not overflow. */
	return (t_ns - start_ns) / interval_ns;
}

/* Formats f's line into line (LINE_LEN + 1 bytes). */
static void format_line(const struct gr_fss *f, char line[LINE_LEN + 1])
{
	char hex[2 * KEY_LEN + 1];

	gr_hex(f->key, KEY_LEN, hex);
	snprintf(line, LINE_LEN + 1, LINE_FMT, f->start_ns, f->interval_ns,
		 f->epoch, hex, f->id);
	gr_crypto__wipe(hex, sizeof(hex));
}

static int write_all_at(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

int gr_fss__setup(int dirfd, int64_t interval_s, int64_t now_ns, int force,
		  uid_t uid, gid_t gid, char vkey[GR_FSS_VKEY_MAX])
{
	struct gr_fss f = { .fd = -1 };
	char line[LINE_LEN + 1], seedhex[2 * KEY_LEN + 1];
	struct stat st;
	int fd, rc;

	if (interval_s < 1 || interval_s > INT64_MAX / NS || now_ns < 0)
		return -EINVAL;
	if (!force && fstatat(dirfd, GR_FSS_FILE, &st,
			      AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	f.start_ns = now_ns - now_ns % NS;	/* the key text has seconds */
	f.interval_ns = interval_s * NS;
	f.epoch = epoch_at(f.start_ns, f.interval_ns, now_ns);	/* 0 */
	if ((rc = gr_crypto__random(f.key, KEY_LEN)) ||
	    (rc = seed_id(f.key, f.id)))
		goto out;
	gr_hex(f.key, KEY_LEN, seedhex);
	snprintf(vkey, GR_FSS_VKEY_MAX, VKEY_PREFIX "%s-%" PRId64 "-%" PRId64,
		 seedhex, f.start_ns / NS, interval_s);
	gr_crypto__wipe(seedhex, sizeof(seedhex));
	format_line(&f, line);

	/* A fresh file under a temporary name, then renamed into place:
	 * the key file is never seen half written. */
	if (unlinkat(dirfd, TMP_NAME, 0) < 0 && errno != ENOENT) {
		rc = -errno;
		goto out;
	}
	fd = openat(dirfd, TMP_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	/* Only this file, just created with O_EXCL, is chowned; fchmod
	 * undoes a umask that took the owner's bits. */
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0)
		rc = -errno;
	else if (fchmod(fd, 0600) < 0)
		rc = -errno;
	else if (!(rc = write_all_at(fd, line, LINE_LEN, 0)) && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (!rc) {
		/* Without force, an fss.key that appeared meanwhile wins. */
		if (renameat2(dirfd, TMP_NAME, dirfd, GR_FSS_FILE,
			      force ? 0 : RENAME_NOREPLACE) < 0)
			rc = -errno;
		else if (fsync(dirfd) < 0)
			rc = -errno;
	}
	if (rc)
		unlinkat(dirfd, TMP_NAME, 0);
out:
	gr_crypto__wipe(line, sizeof(line));
	gr_crypto__wipe(&f, sizeof(f));
	if (rc)
		gr_crypto__wipe(vkey, GR_FSS_VKEY_MAX);
	return rc;
}

/* Reads n decimal digits at *p into *v; advances *p.  Returns 0 or -1. */
static int take_num(const char **p, int n, int64_t *v)
{
	int64_t x = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9' || x > (INT64_MAX - (c - '0')) / 10)
			return -1;
		x = x * 10 + (c - '0');
	}
	*p += n;
	*v = x;
	return 0;
}

static int take_lit(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n) != 0)
		return -1;
	*p += n;
	return 0;
}

/* Parses the key file's line (NUL-terminated) into f.  Returns 0 or
 * -EINVAL with *err set. */
static int parse_line(const char *line, struct gr_fss *f, char **err)
{
	char canon[LINE_LEN + 1];
	const char *p = line;
	int ok;

	ok = !take_lit(&p, "gpurec-fss 1 start=") &&
	     !take_num(&p, NUM_W, &f->start_ns) &&
	     !take_lit(&p, " interval=") &&
	     !take_num(&p, NUM_W, &f->interval_ns) &&
	     !take_lit(&p, " epoch=") &&
	     !take_num(&p, NUM_W, &f->epoch) &&
	     !take_lit(&p, " key=") &&
	     !gr_unhex(p, KEY_LEN, f->key) &&
	     (p += 2 * KEY_LEN, !take_lit(&p, " id=")) &&
	     strlen(p) == 2 * ID_LEN + 1 && p[2 * ID_LEN] == '\n';
	if (ok) {
		uint8_t idb[ID_LEN];

		ok = !gr_unhex(p, ID_LEN, idb);
		memcpy(f->id, p, 2 * ID_LEN);
		f->id[2 * ID_LEN] = '\0';
	}
	if (!ok || f->interval_ns <= 0) {
		set_err(err, GR_FSS_FILE ": malformed (not a line `gpurec-fss 1 "
			"start=… interval=… epoch=… key=… id=…`)");
		return -EINVAL;
	}
	/* The canonical form only: lowercase hex, as written. */
	format_line(f, canon);
	ok = strcmp(canon, line) == 0;
	gr_crypto__wipe(canon, sizeof(canon));
	if (!ok) {
		set_err(err, GR_FSS_FILE ": malformed (not in the form gpurec "
			"writes)");
		return -EINVAL;
	}
	return 0;
}

/* Checks the descriptor opened on the key file: the regular file looked
 * at before (pre), with one link and a key line's size.  Returns 0 or
 * -errno with *err set. */
static int fss_check_fd(int fd, const struct stat *pre, char **err)
{
	struct stat st;
	int rc = 0;

	if (fstat(fd, &st) < 0) {
		rc = -errno;
		set_err(err, GR_FSS_FILE ": %s", strerror(-rc));
	} else if (!S_ISREG(st.st_mode) || st.st_ino != pre->st_ino ||
		   st.st_dev != pre->st_dev) {
		rc = -EINVAL;
		set_err(err, GR_FSS_FILE ": not a regular file; refused");
	} else if (st.st_nlink != 1) {
		rc = -EMLINK;
		set_err(err, GR_FSS_FILE ": has %ju links (a hard link?); "
			"refused", (uintmax_t)st.st_nlink);
	} else if (st.st_size != (off_t)LINE_LEN) {
		rc = -EINVAL;
		set_err(err, GR_FSS_FILE ": malformed (%jd bytes, not %zu)",
			(intmax_t)st.st_size, (size_t)LINE_LEN);
	}
	return rc;
}

/* Opens the key file in dirfd, never through a link nor on anything but a
 * regular file; rw asks for write access, falling back to read-only
 * (*writable 0).  Returns the checked descriptor or -errno with *err set. */
static int fss_open(int dirfd, int rw, int *writable, char **err)
{
	struct stat pre;
	int fd, rc;

	*writable = 1;
	/* Looked at before opening: opening a device or FIFO planted under
	 * the name could block or act; the fstat below is what counts. */
	if (fstatat(dirfd, GR_FSS_FILE, &pre, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = -errno;
		if (rc != -ENOENT)
			set_err(err, GR_FSS_FILE ": %s", strerror(-rc));
		return rc;
	}
	if (S_ISLNK(pre.st_mode)) {
		set_err(err, GR_FSS_FILE ": is a symbolic link; refused");
		return -ELOOP;
	}
	if (!S_ISREG(pre.st_mode)) {
		set_err(err, GR_FSS_FILE ": not a regular file; refused");
		return -EINVAL;
	}
	fd = -1;
	errno = EACCES;
	if (rw)
		fd = openat(dirfd, GR_FSS_FILE, O_RDWR | O_NOFOLLOW |
			    O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
		/* A read-only copy, or a reader without write access:
		 * loadable, not evolvable. */
		*writable = 0;
		fd = openat(dirfd, GR_FSS_FILE, O_RDONLY | O_NOFOLLOW |
			    O_NONBLOCK | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		set_err(err, GR_FSS_FILE ": %s%s", strerror(-rc),
			rc == -ELOOP ? " (a symbolic link; refused)" : "");
		return rc;
	}
	if ((rc = fss_check_fd(fd, &pre, err))) {
		close(fd);
		return rc;
	}
	return fd;
}

/* gr_fss__load and gr_fss__load_readonly: rw asks for a descriptor that
 * evolve can write through, falling back to read-only where that is all
 * the file or its medium allows. */
static int fss_load(int dirfd, int rw, struct gr_fss **out, char **err)
{
	char line[LINE_LEN + 2];
	struct gr_fss *f;
	ssize_t r;
	int fd, rc, writable;

	*out = NULL;
	if (err)
		*err = NULL;
	if ((fd = fss_open(dirfd, rw, &writable, err)) < 0)
		return fd;
	do
		r = pread(fd, line, LINE_LEN + 1, 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)LINE_LEN) {
		rc = r < 0 ? -errno : -EINVAL;
		set_err(err, GR_FSS_FILE ": %s", r < 0 ? strerror(errno) :
			"malformed (changed while read)");
		gr_crypto__wipe(line, sizeof(line));
		close(fd);
		return rc;
	}
	line[LINE_LEN] = '\0';
	f = calloc(1, sizeof(*f));
	if (!f) {
		gr_crypto__wipe(line, sizeof(line));
		close(fd);
		return -ENOMEM;
	}
	rc = parse_line(line, f, err);
	gr_crypto__wipe(line, sizeof(line));
	if (rc) {
		close(fd);
		gr_crypto__wipe(f, sizeof(*f));
		free(f);
		return rc;
	}
	f->fd = fd;
	f->writable = writable;
	*out = f;
	return 0;
}

int gr_fss__load(int dirfd, struct gr_fss **out, char **err)
{
	return fss_load(dirfd, 1, out, err);
}

int gr_fss__load_readonly(int dirfd, struct gr_fss **out, char **err)
{
	return fss_load(dirfd, 0, out, err);
}

int64_t gr_fss__epoch(const struct gr_fss *f)
{
	return f->epoch;
}

int64_t gr_fss__epoch_at(const struct gr_fss *f, int64_t t_ns)
{
	return epoch_at(f->start_ns, f->interval_ns, t_ns);
}

int gr_fss__evolve(struct gr_fss *f, int64_t to)
{
	struct gr_fss next;
	char line[LINE_LEN + 1];
	int rc;

	if (to <= f->epoch)
		return 0;	/* keys never move back */
	if (!f->writable)
		return -EBADF;
	next = *f;
	next.epoch = to;
	rc = key_walk(next.key, f->epoch, to);
	if (!rc) {
		format_line(&next, line);
		rc = write_all_at(f->fd, line, LINE_LEN, 0);
		if (!rc && fsync(f->fd) < 0)
			rc = -errno;
		gr_crypto__wipe(line, sizeof(line));
	}
	if (!rc)
		*f = next;	/* the old key's bytes overwritten */
	gr_crypto__wipe(&next, sizeof(next));
	return rc;
}

int gr_fss__tag(const struct gr_fss *f, const void *msg, size_t n,
		char hex[GR_FSS_TAG_HEX + 1])
{
	uint8_t mac[GR_SHA256_LEN];

	if (gr_hmac_sha256(f->key, KEY_LEN, msg, n, mac))
		return -EIO;
	gr_hex(mac, sizeof(mac), hex);
	return 0;
}

const char *gr_fss__id(const struct gr_fss *f)
{
	return f->id;
}

void gr_fss__free(struct gr_fss *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	gr_crypto__wipe(f, sizeof(*f));
	free(f);
}

/* Reads a decimal number (no sign, at least one digit, no leading zero
 * but "0") at *p up to a char in stops.  Returns 0 or -1. */
static int take_dec(const char **p, const char *stops, int64_t *v)
{
	const char *s = *p;
	int n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0 || n > NUM_W || (n > 1 && s[0] == '0') ||
	    !strchr(stops, s[n]))
		return -1;
	return take_num(p, n, v);
}

int gr_fss_vkey__parse(const char *text, struct gr_fss_vkey **out,
		       char **err)
{
	struct gr_fss_vkey *v;
	int64_t start_s, interval_s;
	const char *p = text;
	size_t n;

	*out = NULL;
	if (err)
		*err = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = strlen(text);
	/* Trailing blanks and a newline, as pasted, are allowed. */
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' ||
		     text[n - 1] == ' ' || text[n - 1] == '\t'))
		n--;
	if (take_lit(&p, VKEY_PREFIX) || gr_unhex(p, KEY_LEN, v->seed) ||
	    (p += 2 * KEY_LEN, take_lit(&p, "-")) ||
	    take_dec(&p, "-", &start_s) || take_lit(&p, "-") ||
	    take_dec(&p, " \t\r\n", &interval_s) || (size_t)(p - text) != n) {
		set_err(err, "not a verification key (gpurec-fss1-<64 hex "
			"digits>-<start>-<interval>, as gpurec seal-setup "
			"prints it)");
		goto bad;
	}
	if (interval_s < 1 || interval_s > INT64_MAX / NS ||
	    start_s > INT64_MAX / NS) {
		set_err(err, "verification key: interval or start out of "
			"range");
		goto bad;
	}
	v->start_ns = start_s * NS;
	v->interval_ns = interval_s * NS;
	memcpy(v->cur, v->seed, KEY_LEN);
	v->cur_e = 0;
	if (seed_id(v->seed, v->id)) {
		set_err(err, "verification key: libcrypto failed");
		gr_fss_vkey__free(v);
		return -EIO;
	}
	*out = v;
	return 0;
bad:
	gr_fss_vkey__free(v);
	return -EINVAL;
}

int64_t gr_fss_vkey__epoch_at(const struct gr_fss_vkey *v, int64_t t_ns)
{
	return epoch_at(v->start_ns, v->interval_ns, t_ns);
}

/* Sets v->cur to K(e).  Returns 0, -EINVAL, -ERANGE or -EIO. */
static int vkey_seek(struct gr_fss_vkey *v, int64_t e)
{
	int rc;

	if (e < 0)
		return -EINVAL;
	if (e < v->cur_e) {
		memcpy(v->cur, v->seed, KEY_LEN);
		v->cur_e = 0;
	}
	rc = key_walk(v->cur, v->cur_e, e);
	if (rc) {
		memcpy(v->cur, v->seed, KEY_LEN);
		v->cur_e = 0;
		return rc;
	}
	v->cur_e = e;
	return 0;
}

int gr_fss_vkey__tag(struct gr_fss_vkey *v, int64_t e, const void *msg,
		     size_t n, char hex[GR_FSS_TAG_HEX + 1])
{
	uint8_t mac[GR_SHA256_LEN];
	int rc = vkey_seek(v, e);

	if (rc)
		return rc;
	if (gr_hmac_sha256(v->cur, KEY_LEN, msg, n, mac))
		return -EIO;
	gr_hex(mac, sizeof(mac), hex);
	return 0;
}

const char *gr_fss_vkey__id(const struct gr_fss_vkey *v)
{
	return v->id;
}

int gr_fss_vkey__owns(struct gr_fss_vkey *v, const struct gr_fss *f)
{
	if (strcmp(v->id, f->id) != 0 || v->start_ns != f->start_ns ||
	    v->interval_ns != f->interval_ns || vkey_seek(v, f->epoch))
		return 0;
	return gr_crypto__memcmp(v->cur, f->key, KEY_LEN) == 0;
}

void gr_fss_vkey__free(struct gr_fss_vkey *v)
{
	if (!v)
		return;
	gr_crypto__wipe(v, sizeof(*v));
	free(v);
}
