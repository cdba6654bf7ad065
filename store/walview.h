/* walview.h - a segment whose writer is gone, read without writing: the
 * main file and its WAL's committed frames assembled in memory
 * (store/walview.c). */
#ifndef GR_STORE_WALVIEW_H
#define GR_STORE_WALVIEW_H

#include <stddef.h>
#include <stdint.h>

struct gr_walview_frame {
	uint32_t pgno;     /* page this frame holds */
	size_t offset;     /* of its page image in the WAL */
};

/* Parses a WAL image: *frames (malloc'd) are the frames up to the last
 * valid commit frame, in order; *db_pages the database size that commit
 * set; *page_size the WAL's.  A WAL with a bad header yields no frames.
 * Returns 0 or -ENOMEM. */
int gr_walview__scan(const uint8_t *wal, size_t len, uint32_t *page_size,
		     struct gr_walview_frame **frames, size_t *nframes,
		     uint32_t *db_pages);

/* Reads path and path-wal (O_RDONLY|O_NOFOLLOW) into *img
 * (sqlite3_malloc64'd, for sqlite3_deserialize), a rollback-journal
 * database image of *size bytes holding every committed transaction.
 * Returns 0, or -errno / -EINVAL (not a database). */
int gr_walview__load(const char *path, uint8_t **img, size_t *size);

#endif
