/* sha256.h - SHA-256 (FIPS 180-4) for content addressing in the store.
 *
 * Written from scratch so the store needs nothing beyond libc.  The context
 * is a plain struct the caller owns (stack or embedded), so hashing never
 * allocates; gr_sha256__file() is the one convenience that touches the
 * filesystem.
 */
#ifndef GR_STORE_SHA256_H
#define GR_STORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GR_SHA256_LEN 32
#define GR_SHA256_HEX_LEN 64

struct gr_sha256 {
	uint32_t h[8];		/* chaining state */
	uint64_t nbytes;	/* total bytes fed so far */
	uint8_t buf[64];	/* partial block */
	size_t nbuf;		/* bytes used in buf, always < 64 */
};

/* Resets @c to the initial hash value.  Cannot fail. */
void gr_sha256__init(struct gr_sha256 *c);

/* Feeds @n bytes at @p into @c; @p may be NULL when @n is 0.  Cannot fail. */
void gr_sha256__update(struct gr_sha256 *c, const void *p, size_t n);

/* Pads, writes the 32-byte digest to @out and wipes @c.  Cannot fail. */
void gr_sha256__final(struct gr_sha256 *c, uint8_t out[32]);

/* Hashes the file at @path into @out.  Returns 0 on success, -errno on
 * failure (@out is then untouched). */
int gr_sha256__file(const char *path, uint8_t out[32]);

/* Writes @n bytes at @p as 2n lowercase hex digits plus a NUL to @out,
 * which must hold 2n+1 bytes.  Cannot fail. */
void gr_hex(const uint8_t *p, size_t n, char *out);

#endif
