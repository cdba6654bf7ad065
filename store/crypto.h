/* crypto.h - the store's hash, MAC and random bytes, from the system's
 * OpenSSL 3 libcrypto.
 *
 * Segments are content-addressed by SHA-256, MANIFEST lines are chained by
 * SHA-256 and, when forward-secure sealing is set up (store/fss.h), tagged
 * with HMAC-SHA-256 under a key drawn from the libcrypto DRBG.  None of it
 * is implemented here: a FIPS site must be able to say which validated
 * module computed its evidence, so every primitive is fetched from
 * libcrypto's default library context (EVP_MD_fetch, EVP_MAC_fetch,
 * RAND_priv_bytes), and a host whose configuration turns on the FIPS
 * provider gets that provider's implementations, or an error, never a
 * private fallback.  The default and package builds link libcrypto
 * dynamically so the host's module applies; `make STATIC=1` links
 * libcrypto.a in (docs/security.md).
 *
 * gr_crypto__init() loads the OpenSSL configuration and fetches the
 * algorithms once; every other call does it on first use, but gpurecd
 * calls it before sandboxing itself, while it may still read
 * /etc/ssl/openssl.cnf and the provider modules.
 *
 * The names of the old in-tree SHA-256 (store/sha256.h) are kept, so its
 * callers change only their #include; the context now holds a libcrypto
 * EVP_MD_CTX, and every call can fail (out of memory, or the provider
 * refuses), so each returns 0 or -errno.
 */
#ifndef GR_STORE_CRYPTO_H
#define GR_STORE_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define GR_SHA256_LEN 32
#define GR_SHA256_HEX_LEN 64

/* Loads the OpenSSL configuration (OPENSSL_INIT_LOAD_CONFIG), fetches
 * SHA-256 and HMAC and draws one random byte so the DRBG is seeded.  Safe
 * to call more than once and from several threads.  Returns 0, or -EIO
 * (libcrypto failed: gr_crypto__error() says why). */
int gr_crypto__init(void);

/* Writes libcrypto's oldest queued error as text into buf (n bytes) and
 * clears the queue; "no libcrypto error" when there is none.  Returns buf. */
const char *gr_crypto__error(char *buf, size_t n);

/* Whether libcrypto's default properties select FIPS implementations
 * (1) or not (0); the library version string. */
int gr_crypto__fips(void);
const char *gr_crypto__version(void);

/* n bytes from libcrypto's private DRBG into p.  Returns 0 or -EIO. */
int gr_crypto__random(void *p, size_t n);

/* Overwrites n bytes at p with zeros in a way the compiler keeps
 * (OPENSSL_cleanse).  Cannot fail. */
void gr_crypto__wipe(void *p, size_t n);

/* Compares n bytes in time independent of where they differ.  Returns 0
 * when equal. */
int gr_crypto__memcmp(const void *a, const void *b, size_t n);

/* A SHA-256 in progress: init, any number of updates, final.  final (or
 * a failed init) releases the context; a caller that gives up between
 * init and final calls final anyway. */
struct gr_sha256 {
	void *ctx;	/* EVP_MD_CTX; NULL before init and after final */
	int err;	/* the first failure of an update, or 0 */
};

/* Starts a hash in c.  Returns 0, -ENOMEM or -EIO. */
int gr_sha256__init(struct gr_sha256 *c);

/* Feeds n bytes at p (NULL when n is 0).  Returns 0 or -EIO; a failure
 * is also kept for final. */
int gr_sha256__update(struct gr_sha256 *c, const void *p, size_t n);

/* Writes the 32-byte digest to out and frees c's context.  Returns 0, or
 * -errno of the first failure since init (out then holds zeros). */
int gr_sha256__final(struct gr_sha256 *c, uint8_t out[32]);

/* The digest of n bytes at p, in one call.  Returns 0 or -EIO. */
int gr_sha256(const void *p, size_t n, uint8_t out[32]);

/* Hashes what is left to read of the open file fd (read to its end; the
 * fd stays open).  Returns 0 or -errno (out then untouched). */
int gr_sha256__fd(int fd, uint8_t out[32]);

/* Hashes the file at path, never through a symlink (-ELOOP).  Returns 0
 * or -errno (out then untouched). */
int gr_sha256__file(const char *path, uint8_t out[32]);

/* HMAC-SHA-256 (RFC 2104) of n bytes at msg under klen bytes of key.
 * Returns 0 or -EIO. */
int gr_hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
		   uint8_t out[32]);

/* Writes n bytes at p as 2n lowercase hex digits plus a NUL to out, which
 * must hold 2n+1 bytes.  Cannot fail. */
void gr_hex(const uint8_t *p, size_t n, char *out);

/* Reads exactly 2n hex digits (either case) at s into n bytes at out.
 * Returns 0, or -EINVAL at the first non-hex digit (out then partly
 * written). */
int gr_unhex(const char *s, size_t n, uint8_t *out);

#endif
