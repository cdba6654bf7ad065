/* walview.c - a crashed open segment, read as evidence: its main file and
 * the committed frames of its WAL, assembled in memory.
 *
 * SQLite's own read-only paths cannot do this without writing: mode=ro on
 * a WAL database creates or maps the -shm file (and fails on read-only
 * media with no -shm, reading the main file alone: the "reads as
 * empty"), and immutable=1 ignores the WAL.  So a segment whose writer is
 * gone (DATA/.lock not held) is read here instead: the main file and
 * SQLite's WAL parsed per its documented format (sqlite.org/fileformat2,
 * "The Write-Ahead Log"): a 32-byte header (magic, version, page size,
 * checkpoint seq, salts, checksum), then frames of a 24-byte header (page
 * number, db size in pages after a commit frame else 0, salts, cumulative
 * checksum) and one page.  A frame counts only when its salts match the
 * header and the running checksum matches; frames after the last valid
 * commit frame were never committed and are ignored.  For each page the
 * last committed image wins; the database ends at the last commit's size.
 * Page 1's bytes 18-19 (write/read version, 2 = WAL) become 1, so SQLite
 * sees a rollback-journal database and never looks for a WAL.
 *
 * Nothing is created or changed: both files are opened O_RDONLY|O_NOFOLLOW.
 * The image costs the segment's size in memory (256 MiB at most by
 * default), paid only for a crashed segment's last piece of evidence.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/walview.h"

#define WAL_HDR 32
#define FRAME_HDR 24

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* SQLite's WAL checksum over n bytes (a multiple of 8), continuing s[2];
 * big says the words are big-endian (magic 0x377f0683). */
static void wal_cksum(int big, const uint8_t *p, size_t n, uint32_t s[2])
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint32_t a, b;
		if (big) {
			a = be32(p + i);
			b = be32(p + i + 4);
		} else {
			a = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 |
			    (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;
			b = (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8 |
			    (uint32_t)p[i + 6] << 16 | (uint32_t)p[i + 7] << 24;
		}
		s[0] += a + s[1];
		s[1] += b + s[0];
	}
}

/* Reads the whole file into memory from SQLite's allocator, so that the
 * reader's heap limit (gpurec --max-memory) bounds it like the image.
 * Returns 0 or -errno. */
static int read_all(const char *path, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	size_t n = (size_t)sb.st_size, got = 0;
	uint8_t *b = sqlite3_malloc64(n ? n : 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (got < n) {
		ssize_t r = pread(fd, b + got, n - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* shrank under us: take what is there */
		got += (size_t)r;
	}
	close(fd);
	*out = b;
	*len = got;
	return 0;
}

int gr_walview__scan(const uint8_t *wal, size_t len, uint32_t *page_size,
		     struct gr_walview_frame **frames, size_t *nframes,
		     uint32_t *db_pages)
{
	*frames = NULL;
	*nframes = 0;
	*db_pages = 0;
	*page_size = 0;
	if (len < WAL_HDR)
		return 0;
	uint32_t magic = be32(wal);
	if ((magic & 0xfffffffe) != 0x377f0682 || be32(wal + 4) != 3007000)
		return 0;
	int big = magic & 1;
	uint32_t ps = be32(wal + 8);
	if (ps < 512 || ps > 65536 || (ps & (ps - 1)))
		return 0;
	uint32_t s[2] = { 0, 0 };
	wal_cksum(big, wal, 24, s);
	if (s[0] != be32(wal + 24) || s[1] != be32(wal + 28))
		return 0;
	*page_size = ps;
	size_t cap = 0, n = 0, committed = 0;
	struct gr_walview_frame *f = NULL;
	for (size_t off = WAL_HDR; off + FRAME_HDR + ps <= len;
	     off += FRAME_HDR + ps) {
		const uint8_t *h = wal + off;
		if (memcmp(h + 8, wal + 16, 8) != 0)
			break; /* salts of an older generation */
		wal_cksum(big, h, 8, s);
		wal_cksum(big, h + FRAME_HDR, ps, s);
		if (s[0] != be32(h + 16) || s[1] != be32(h + 20))
			break;
		if (be32(h) == 0)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			void *q = realloc(f, cap * sizeof(*f));
			if (!q) {
				free(f);
				return -ENOMEM;
			}
			f = q;
		}
		f[n].pgno = be32(h);
		f[n].offset = off + FRAME_HDR;
		n++;
		if (be32(h + 4)) {
			committed = n;
			*db_pages = be32(h + 4);
		}
	}
	*frames = f;
	*nframes = committed;
	return 0;
}

int gr_walview__load(const char *path, uint8_t **img, size_t *size)
{
	char walpath[4200];
	uint8_t *db = NULL, *wal = NULL;
	size_t dblen, wallen = 0;
	struct gr_walview_frame *fr = NULL;
	size_t nfr = 0;
	uint32_t ps = 0, pages = 0;
	int err;

	*img = NULL;
	*size = 0;
	if ((err = read_all(path, &db, &dblen)))
		return err;
	snprintf(walpath, sizeof(walpath), "%s-wal", path);
	err = read_all(walpath, &wal, &wallen);
	if (err && err != -ENOENT)
		goto out;
	err = 0;
	if (wal && (err = gr_walview__scan(wal, wallen, &ps, &fr, &nfr,
					   &pages)))
		goto out;
	if (!nfr) {
		/* No committed frame: the main file is the database. */
		ps = dblen >= 100 ? (uint32_t)(db[16] << 8 | db[17]) : 0;
		if (ps == 1)
			ps = 65536;
		if (!ps) {
			err = -EINVAL;
			goto out;
		}
		pages = (uint32_t)(dblen / ps);
	}
	size_t n = (size_t)pages * ps;
	uint8_t *im = sqlite3_malloc64(n ? n : ps);
	if (!im) {
		err = -ENOMEM;
		goto out;
	}
	memset(im, 0, n);
	memcpy(im, db, dblen < n ? dblen : n);
	for (size_t i = 0; i < nfr; i++)
		if (fr[i].pgno <= pages)
			memcpy(im + (size_t)(fr[i].pgno - 1) * ps,
			       wal + fr[i].offset, ps);
	if (n >= 100) {
		im[18] = im[19] = 1;      /* rollback journal, not WAL */
		put_be32(im + 28, pages); /* in-header size, made valid */
		memcpy(im + 92, im + 24, 4);
	}
	*img = im;
	*size = n;
out:
	sqlite3_free(db);
	sqlite3_free(wal);
	free(fr);
	return err;
}
