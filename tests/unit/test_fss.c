/* test_fss.c - store/fss.c: the key file's setup, load and one-way
 * evolution, the verification key, tags, and the refusals (malformed,
 * symlinked and hard-linked key files).
 *
 * Each test makes its own directory under /tmp and removes it.  Times are
 * real-looking CLOCK_REALTIME values: the interval is 60 s, so epoch e
 * starts at T0 + 60 e seconds.
 */
#include "tests/unit/test.h"
#include "store/crypto.h"
#include "store/fss.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define NS 1000000000LL
#define T0 (1764000000LL * NS + 123456789)	/* 2025-11-24, not whole */
#define IV 60

struct dir {
	char path[64];
	int fd;
};

static int dir__make(struct dir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/gpurec-fss-XXXXXX");
	if (!mkdtemp(d->path))
		return -1;
	d->fd = open(d->path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	return d->fd < 0 ? -1 : 0;
}

static void dir__remove(struct dir *d)
{
	char cmd[128];

	close(d->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", d->path);
}

/* The key file's text (NUL-terminated) into buf.  Returns its length. */
static ssize_t read_key(struct dir *d, char *buf, size_t n)
{
	int fd = openat(d->fd, GR_FSS_FILE, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, n - 1);
	close(fd);
	buf[r < 0 ? 0 : r] = '\0';
	return r;
}

static int write_key(struct dir *d, const char *text)
{
	int fd = openat(d->fd, GR_FSS_FILE, O_WRONLY | O_CREAT | O_TRUNC |
			O_CLOEXEC, 0600);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, text, strlen(text));
	close(fd);
	return w == (ssize_t)strlen(text) ? 0 : -1;
}

/* The "key=" field's 64 hex digits of a key file's text. */
static void key_hex(const char *text, char out[65])
{
	const char *p = strstr(text, " key=");

	out[0] = '\0';
	if (p && strlen(p + 5) >= 64) {
		memcpy(out, p + 5, 64);
		out[64] = '\0';
	}
}

TEST(setup_load_round_trip)
{
	struct dir d;
	struct gr_fss *f = NULL;
	struct gr_fss_vkey *v = NULL;
	char vkey[GR_FSS_VKEY_MAX], text[512], *err = NULL, want[160];
	struct stat st;

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	/* gpurec-fss1-<seed>-<start s>-<interval s> */
	CHECK_EQ_INT(strlen(vkey), 12 + 64 + 1 + 10 + 1 + 2);
	CHECK(strncmp(vkey, "gpurec-fss1-", 12) == 0);
	CHECK_EQ_STR(vkey + 12 + 64, "-1764000000-60");

	CHECK_EQ_INT(fstatat(d.fd, GR_FSS_FILE, &st, 0), 0);
	CHECK_EQ_INT(st.st_mode & 07777, 0600);
	CHECK_EQ_INT(st.st_nlink, 1);
	/* The temporary name is gone. */
	CHECK(fstatat(d.fd, GR_FSS_FILE ".tmp", &st, 0) < 0 && errno == ENOENT);
	CHECK(read_key(&d, text, sizeof(text)) > 0);
	snprintf(want, sizeof(want), "gpurec-fss 1 start=%019lld interval=%019lld "
		 "epoch=%019d key=", 1764000000LL * NS, IV * NS, 0);
	CHECK(strncmp(text, want, strlen(want)) == 0);
	/* Epoch 0's key is the seed. */
	CHECK(strncmp(text + strlen(want), vkey + 12, 64) == 0);

	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK(err == NULL);
	CHECK_EQ_INT(gr_fss__epoch(f), 0);
	CHECK_EQ_INT(gr_fss__epoch_at(f, T0), 0);
	CHECK_EQ_INT(gr_fss__epoch_at(f, T0 - 10 * NS), 0);
	CHECK_EQ_INT(gr_fss__epoch_at(f, 1764000000LL * NS + IV * NS), 1);
	CHECK_EQ_INT(gr_fss__epoch_at(f, 1764000000LL * NS + IV * NS - 1), 0);
	CHECK_EQ_INT(gr_fss__epoch_at(f, T0 + 3600 * NS), 60);
	CHECK_EQ_INT(strlen(gr_fss__id(f)), 16);
	CHECK(strstr(text, gr_fss__id(f)) != NULL);

	CHECK_EQ_INT(gr_fss_vkey__parse(vkey, &v, &err), 0);
	CHECK_EQ_STR(gr_fss_vkey__id(v), gr_fss__id(f));
	CHECK_EQ_INT(gr_fss_vkey__epoch_at(v, T0 + 3600 * NS), 60);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);

	/* A second setup is refused; --force replaces it. */
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), -EEXIST);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 1, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);	/* f is in memory */
	gr_fss__free(f);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 0);	/* another setup */
	gr_fss_vkey__free(v);
	CHECK_EQ_INT(gr_fss_vkey__parse(vkey, &v, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);
	gr_fss_vkey__free(v);
	gr_fss__free(f);
	gr_fss__free(NULL);
	gr_fss_vkey__free(NULL);

	/* Bad arguments. */
	CHECK_EQ_INT(gr_fss__setup(d.fd, 0, T0, 1, (uid_t)-1, (gid_t)-1,
				   vkey), -EINVAL);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, -1, 1, (uid_t)-1, (gid_t)-1,
				   vkey), -EINVAL);
	dir__remove(&d);
}

TEST(no_key_file)
{
	struct dir d;
	struct gr_fss *f = (struct gr_fss *)1;
	char *err = NULL;

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), -ENOENT);
	CHECK(f == NULL);
	CHECK(err == NULL);
	dir__remove(&d);
}

TEST(evolve_one_way_and_rewrites)
{
	struct dir d;
	struct gr_fss *f = NULL, *g = NULL;
	char vkey[GR_FSS_VKEY_MAX], text[512], text2[512], old[65], now[65];
	char *err = NULL;
	struct stat st1, st2;

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK(read_key(&d, text, sizeof(text)) > 0);
	key_hex(text, old);
	CHECK_EQ_INT(fstatat(d.fd, GR_FSS_FILE, &st1, 0), 0);

	CHECK_EQ_INT(gr_fss__evolve(f, 3), 0);
	CHECK_EQ_INT(gr_fss__epoch(f), 3);
	CHECK(read_key(&d, text2, sizeof(text2)) == (ssize_t)strlen(text));
	CHECK_EQ_INT(fstatat(d.fd, GR_FSS_FILE, &st2, 0), 0);
	/* Rewritten in place: the same file, the same length... */
	CHECK_EQ_INT(st2.st_ino, st1.st_ino);
	CHECK_EQ_INT(st2.st_size, st1.st_size);
	/* ...and the old key's hex is nowhere in it. */
	CHECK(strstr(text2, old) == NULL);
	CHECK(strstr(text2, "epoch=0000000000000000003 ") != NULL);
	key_hex(text2, now);
	CHECK(strcmp(now, old) != 0);

	/* Backwards and equal: no-ops. */
	CHECK_EQ_INT(gr_fss__evolve(f, 1), 0);
	CHECK_EQ_INT(gr_fss__evolve(f, 3), 0);
	CHECK_EQ_INT(gr_fss__epoch(f), 3);
	CHECK(read_key(&d, text, sizeof(text)) > 0);
	CHECK_EQ_STR(text, text2);

	/* The file loads at the new epoch, with the same id. */
	CHECK_EQ_INT(gr_fss__load(d.fd, &g, &err), 0);
	CHECK_EQ_INT(gr_fss__epoch(g), 3);
	CHECK_EQ_STR(gr_fss__id(g), gr_fss__id(f));
	gr_fss__free(g);

	/* Loaded read-only (a verifier): the same key, no evolve. */
	CHECK_EQ_INT(gr_fss__load_readonly(d.fd, &g, &err), 0);
	CHECK_EQ_INT(gr_fss__epoch(g), 3);
	CHECK_EQ_INT(gr_fss__evolve(g, 4), -EBADF);
	CHECK_EQ_INT(gr_fss__evolve(g, 2), 0);
	gr_fss__free(g);
	CHECK(read_key(&d, text, sizeof(text)) > 0);
	CHECK_EQ_STR(text, text2);

		/* Too far at once. */
	CHECK_EQ_INT(gr_fss__evolve(f, 4 + GR_FSS_WALK_MAX), -ERANGE);
	CHECK_EQ_INT(gr_fss__epoch(f), 3);
	gr_fss__free(f);
	dir__remove(&d);
}

TEST(vkey_tags_every_epoch)
{
	static const char msg[] = "seal 20251124T000000Z.seg sha256=ab lh=- epoch=";
	struct dir d;
	struct gr_fss *f = NULL;
	struct gr_fss_vkey *v = NULL;
	char vkey[GR_FSS_VKEY_MAX], *err = NULL;
	char tags[8][GR_FSS_TAG_HEX + 1], t[GR_FSS_TAG_HEX + 1];
	static const int64_t epochs[] = { 0, 1, 2, 5, 6, 40, 41 };
	const size_t ne = sizeof(epochs) / sizeof(epochs[0]);

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	for (size_t i = 0; i < ne; i++) {
		CHECK_EQ_INT(gr_fss__evolve(f, epochs[i]), 0);
		CHECK_EQ_INT(gr_fss__tag(f, msg, strlen(msg), tags[i]), 0);
		CHECK_EQ_INT(strlen(tags[i]), GR_FSS_TAG_HEX);
		if (i)
			CHECK(strcmp(tags[i], tags[i - 1]) != 0);
	}
	CHECK_EQ_INT(gr_fss_vkey__parse(vkey, &v, &err), 0);
	/* Ascending, then out of order (the walk restarts from the seed). */
	for (size_t i = 0; i < ne; i++) {
		CHECK_EQ_INT(gr_fss_vkey__tag(v, epochs[i], msg, strlen(msg), t),
			     0);
		CHECK_EQ_STR(t, tags[i]);
	}
	for (size_t i = ne; i-- > 0;) {
		CHECK_EQ_INT(gr_fss_vkey__tag(v, epochs[i], msg, strlen(msg), t),
			     0);
		CHECK_EQ_STR(t, tags[i]);
	}
	CHECK_EQ_INT(gr_fss_vkey__tag(v, -1, msg, strlen(msg), t), -EINVAL);
	CHECK_EQ_INT(gr_fss_vkey__tag(v, GR_FSS_WALK_MAX + 1, msg, strlen(msg),
				      t), -ERANGE);
	/* After a refusal the verifier still derives right. */
	CHECK_EQ_INT(gr_fss_vkey__tag(v, 41, msg, strlen(msg), t), 0);
	CHECK_EQ_STR(t, tags[ne - 1]);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);
	gr_fss_vkey__free(v);
	gr_fss__free(f);
	dir__remove(&d);
}

TEST(tag_covers_every_byte)
{
	struct dir d;
	struct gr_fss *f = NULL;
	char vkey[GR_FSS_VKEY_MAX], *err = NULL, msg[64];
	char a[GR_FSS_TAG_HEX + 1], b[GR_FSS_TAG_HEX + 1];

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	snprintf(msg, sizeof(msg), "stop at=1764000000123456789 events=10 ");
	CHECK_EQ_INT(gr_fss__tag(f, msg, strlen(msg), a), 0);
	for (size_t i = 0; i < strlen(msg); i++) {
		msg[i] ^= 1;
		CHECK_EQ_INT(gr_fss__tag(f, msg, strlen(msg), b), 0);
		CHECK(strcmp(a, b) != 0);
		msg[i] ^= 1;
	}
	CHECK_EQ_INT(gr_fss__tag(f, msg, strlen(msg), b), 0);
	CHECK_EQ_STR(a, b);
	/* One byte fewer: another tag. */
	CHECK_EQ_INT(gr_fss__tag(f, msg, strlen(msg) - 1, b), 0);
	CHECK(strcmp(a, b) != 0);
	gr_fss__free(f);
	dir__remove(&d);
}

/* A key moved backwards (an older key file put back, or the epoch field
 * lowered) is not owned; neither is a key of another setup. */
TEST(owns)
{
	struct dir d, d2;
	struct gr_fss *f = NULL, *g = NULL;
	struct gr_fss_vkey *v = NULL;
	char vkey[GR_FSS_VKEY_MAX], vkey2[GR_FSS_VKEY_MAX], *err = NULL;
	char text[512], saved[512], *e;

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(dir__make(&d2), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(gr_fss__setup(d2.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey2), 0);
	CHECK_EQ_INT(gr_fss_vkey__parse(vkey, &v, &err), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss__load(d2.fd, &g, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, g), 0);
	gr_fss__free(g);

	CHECK_EQ_INT(gr_fss__evolve(f, 2), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);
	CHECK(read_key(&d, saved, sizeof(saved)) > 0);
	CHECK_EQ_INT(gr_fss__evolve(f, 5), 0);
	gr_fss__free(f);

	/* The epoch field lowered to 2 over epoch 5's key. */
	CHECK(read_key(&d, text, sizeof(text)) > 0);
	e = strstr(text, "epoch=");
	CHECK(e != NULL);
	memcpy(e, "epoch=0000000000000000002", 25);
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, text), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 0);
	gr_fss__free(f);

	/* The epoch field raised over epoch 2's key (restored from a copy):
	 * owned only at its own epoch. */
	strcpy(text, saved);
	e = strstr(text, "epoch=");
	memcpy(e, "epoch=0000000000000000005", 25);
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, text), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 0);
	gr_fss__free(f);

	/* The epoch-2 copy itself is a genuine key, of epoch 2: owns() says
	 * so; verify compares its epoch with the MANIFEST's last line. */
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, saved), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss__epoch(f), 2);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);
	gr_fss__free(f);
	gr_fss_vkey__free(v);

	/* Another start or interval with the same seed: not owned. */
	vkey[strlen(vkey) - 1] = '1';	/* interval 61 */
	CHECK_EQ_INT(gr_fss_vkey__parse(vkey, &v, &err), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 0);
	gr_fss__free(f);
	gr_fss_vkey__free(v);
	dir__remove(&d);
	dir__remove(&d2);
}

/* Loads the directory's key file, expecting rc and an error mentioning
 * what. */
static int load_fails(struct dir *d, int rc, const char *what)
{
	struct gr_fss *f = NULL;
	char *err = NULL;
	int got = gr_fss__load(d->fd, &f, &err);
	int ok = got == rc && f == NULL && err && strstr(err, what);

	if (!ok)
		fprintf(stderr, "load: %d (want %d), err \"%s\" (want \"%s\")\n",
			got, rc, err ? err : "(null)", what);
	free(err);
	gr_fss__free(f);
	return ok;
}

TEST(malformed_refused)
{
	struct dir d;
	char vkey[GR_FSS_VKEY_MAX], good[512], bad[512];
	static const char *edits[][2] = {
		{ "gpurec-fss 1 ", "gpurec-fss 2 " },
		{ "key=", "kee=" },
		{ " id=", " ID=" },
		{ "interval=0000000060000000000", "interval=0000000000000000000" },
		{ "start=1", "start=-" },
	};
	char *p;

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK(read_key(&d, good, sizeof(good)) > 0);

	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		strcpy(bad, good);
		p = strstr(bad, edits[i][0]);
		CHECK(p != NULL);
		memcpy(p, edits[i][1], strlen(edits[i][1]));
		CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
		CHECK_EQ_INT(write_key(&d, bad), 0);
		CHECK(load_fails(&d, -EINVAL, "malformed"));
	}
	/* A key digit that is not hex; uppercase hex (not canonical). */
	strcpy(bad, good);
	p = strstr(bad, "key=") + 4;
	p[10] = 'g';
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, bad), 0);
	CHECK(load_fails(&d, -EINVAL, "malformed"));
	strcpy(bad, good);
	p = strstr(bad, "key=") + 4;
	for (int i = 0; i < 64; i++)
		if (p[i] >= 'a')
			p[i] = (char)(p[i] - 'a' + 'A');
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, bad), 0);
	CHECK(load_fails(&d, -EINVAL, "malformed"));
	/* Truncated, extended, empty. */
	strcpy(bad, good);
	bad[strlen(bad) - 2] = '\n';
	bad[strlen(bad) - 1] = '\0';
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, bad), 0);
	CHECK(load_fails(&d, -EINVAL, "malformed"));
	strcpy(bad, good);
	strcat(bad, "x");
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, bad), 0);
	CHECK(load_fails(&d, -EINVAL, "malformed"));
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, ""), 0);
	CHECK(load_fails(&d, -EINVAL, "malformed"));
	/* Not newline-terminated at the right length. */
	strcpy(bad, good);
	bad[strlen(bad) - 1] = ' ';
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, bad), 0);
	CHECK(load_fails(&d, -EINVAL, "malformed"));
	/* A directory, a FIFO (must not block). */
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(mkdirat(d.fd, GR_FSS_FILE, 0700), 0);
	CHECK(load_fails(&d, -EINVAL, "not a regular file"));
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, AT_REMOVEDIR), 0);
	CHECK_EQ_INT(mkfifoat(d.fd, GR_FSS_FILE, 0600), 0);
	CHECK(load_fails(&d, -EINVAL, "not a regular file"));
	dir__remove(&d);
}

TEST(links_refused)
{
	struct dir d;
	char vkey[GR_FSS_VKEY_MAX], target[128];
	struct gr_fss *f = NULL;
	char *err = NULL;
	struct stat st;

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	/* Moved aside; fss.key a symlink to it: refused. */
	CHECK_EQ_INT(renameat(d.fd, GR_FSS_FILE, d.fd, "real.key"), 0);
	CHECK_EQ_INT(symlinkat("real.key", d.fd, GR_FSS_FILE), 0);
	CHECK(load_fails(&d, -ELOOP, "symbolic link"));
	/* A dangling symlink too, and setup without force refuses it. */
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(symlinkat("nowhere", d.fd, GR_FSS_FILE), 0);
	CHECK(load_fails(&d, -ELOOP, "symbolic link"));
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), -EEXIST);
	/* Setup with force replaces the link, and writes nothing through
	 * it. */
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 1, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(fstatat(d.fd, "nowhere", &st, AT_SYMLINK_NOFOLLOW), -1);
	CHECK_EQ_INT(fstatat(d.fd, GR_FSS_FILE, &st, AT_SYMLINK_NOFOLLOW), 0);
	CHECK(S_ISREG(st.st_mode));
	/* A stale temporary that is a symlink: removed, not followed. */
	snprintf(target, sizeof(target), "%s/victim", d.path);
	CHECK_EQ_INT(symlinkat(target, d.fd, GR_FSS_FILE ".tmp"), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 1, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(fstatat(d.fd, "victim", &st, AT_SYMLINK_NOFOLLOW), -1);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	gr_fss__free(f);
	/* A hard link to the key file: refused. */
	CHECK_EQ_INT(linkat(d.fd, GR_FSS_FILE, d.fd, "copy.key", 0), 0);
	CHECK(load_fails(&d, -EMLINK, "links"));
	CHECK_EQ_INT(unlinkat(d.fd, "copy.key", 0), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	gr_fss__free(f);
	dir__remove(&d);
}

TEST(vkey_parse)
{
	static const char seed[] =
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	static const char *bad[] = {
		"",
		"gpurec-fss1-",
		"gpurec-fss2-%s-1764000000-900",
		"gpurec-fss1-%s-1764000000",
		"gpurec-fss1-%s-1764000000-0",
		"gpurec-fss1-%s--1764000000-900",
		"gpurec-fss1-%s-1764000000-900-",
		"gpurec-fss1-%s-1764000000-900x",
		"gpurec-fss1-%s-01764000000-900",
		"gpurec-fss1-%s-99999999999999999999-900",
		"gpurec-fss1-%s-9223372036854775807-900",
		" gpurec-fss1-%s-1764000000-900",
	};
	struct gr_fss_vkey *v = NULL;
	char text[256], *err = NULL;

	snprintf(text, sizeof(text), "gpurec-fss1-%s-1764000000-900", seed);
	CHECK_EQ_INT(gr_fss_vkey__parse(text, &v, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__epoch_at(v, 1764000000LL * NS + 1800 * NS), 2);
	gr_fss_vkey__free(v);
	/* Pasted with a newline and blanks; uppercase hex. */
	snprintf(text, sizeof(text), "gpurec-fss1-%s-1764000000-900 \n", seed);
	CHECK_EQ_INT(gr_fss_vkey__parse(text, &v, &err), 0);
	gr_fss_vkey__free(v);
	snprintf(text, sizeof(text), "gpurec-fss1-%s-1764000000-900", seed);
	for (char *p = text + 12; p < text + 76; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	CHECK_EQ_INT(gr_fss_vkey__parse(text, &v, &err), 0);
	gr_fss_vkey__free(v);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), bad[i], seed);
		v = NULL;
		CHECK_EQ_INT(gr_fss_vkey__parse(text, &v, &err), -EINVAL);
		CHECK(v == NULL);
		CHECK(err != NULL);
		free(err);
		err = NULL;
	}
	/* A seed digit short. */
	snprintf(text, sizeof(text), "gpurec-fss1-%.63s-1764000000-900", seed);
	CHECK_EQ_INT(gr_fss_vkey__parse(text, &v, &err), -EINVAL);
	free(err);
}

/* Every one-byte change of a key file is refused by load, or loads as a
 * key the verification key does not own; every one-byte change of the
 * verification key (but a hex digit's case) fails to parse or owns
 * nothing. */
TEST(one_byte_changes)
{
	static const char subst[] = "0179afAF- xz\n";
	struct dir d;
	struct gr_fss *f = NULL;
	struct gr_fss_vkey *v = NULL;
	char vkey[GR_FSS_VKEY_MAX], good[512], bad[512], *err = NULL;
	int loaded = 0, refused = 0, parsed = 0;
	size_t n;

	CHECK_EQ_INT(dir__make(&d), 0);
	CHECK_EQ_INT(gr_fss__setup(d.fd, IV, T0, 0, (uid_t)-1, (gid_t)-1,
				   vkey), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss__evolve(f, 7), 0);
	gr_fss__free(f);
	CHECK(read_key(&d, good, sizeof(good)) > 0);
	CHECK_EQ_INT(gr_fss_vkey__parse(vkey, &v, &err), 0);
	n = strlen(good);
	for (size_t i = 0; i < n; i++) {
		for (const char *c = subst; *c; c++) {
			if (*c == good[i])
				continue;
			strcpy(bad, good);
			bad[i] = *c;
			CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
			CHECK_EQ_INT(write_key(&d, bad), 0);
			f = NULL;
			if (gr_fss__load(d.fd, &f, &err) == 0) {
				loaded++;
				CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 0);
				gr_fss__free(f);
			} else {
				refused++;
				free(err);
				err = NULL;
			}
		}
	}
	CHECK(loaded > 0 && refused > 0);
	CHECK_EQ_INT(unlinkat(d.fd, GR_FSS_FILE, 0), 0);
	CHECK_EQ_INT(write_key(&d, good), 0);
	CHECK_EQ_INT(gr_fss__load(d.fd, &f, &err), 0);
	CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 1);
	gr_fss_vkey__free(v);

	n = strlen(vkey);
	for (size_t i = 0; i < n; i++) {
		for (const char *c = subst; *c; c++) {
			if ((*c | 0x20) == (vkey[i] | 0x20))
				continue;
			strcpy(bad, vkey);
			bad[i] = *c;
			v = NULL;
			if (gr_fss_vkey__parse(bad, &v, &err) == 0) {
				parsed++;
				CHECK_EQ_INT(gr_fss_vkey__owns(v, f), 0);
				gr_fss_vkey__free(v);
			} else {
				free(err);
				err = NULL;
			}
		}
	}
	CHECK(parsed > 0);
	gr_fss__free(f);
	dir__remove(&d);
}

TEST_MAIN(
	TEST_ENTRY(setup_load_round_trip)
	TEST_ENTRY(no_key_file)
	TEST_ENTRY(evolve_one_way_and_rewrites)
	TEST_ENTRY(vkey_tags_every_epoch)
	TEST_ENTRY(tag_covers_every_byte)
	TEST_ENTRY(owns)
	TEST_ENTRY(malformed_refused)
	TEST_ENTRY(links_refused)
	TEST_ENTRY(vkey_parse)
	TEST_ENTRY(one_byte_changes)
)
