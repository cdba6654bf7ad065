/* crypto.c - SHA-256, HMAC-SHA-256 and random bytes through libcrypto's EVP
 * interface (OpenSSL 3).
 *
 * The algorithms are fetched once (EVP_MD_fetch, EVP_MAC_fetch) from the
 * default library context with no property query of our own, so the
 * host's configuration decides the provider: with the FIPS provider and
 * `default_properties = fips=yes` the fetch returns the validated
 * implementation or fails; it never silently falls back.  Fetching once
 * also spares every hash the implicit fetch EVP_sha256() costs in 3.x.
 * The fetched objects live as long as the process, and libcrypto is told
 * not to free its library context at exit (OPENSSL_INIT_NO_ATEXIT).
 *
 * Every libcrypto failure is turned into -EIO (or -ENOMEM for a context
 * that cannot be allocated) and leaves its reason on libcrypto's error
 * queue for gr_crypto__error().
 */
#include "store/crypto.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "common/parse.h"

#define SHA256_FILE_BUF (64 * 1024)

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc = -EIO;	/* the result of the one initialisation */
static EVP_MD *sha256_md;	/* fetched SHA-256 */
static EVP_MAC *hmac_mac;	/* fetched HMAC */

static void init_run(void)
{
	unsigned char b;

	/* No exit handler: libcrypto's would free the library context
	 * under the algorithms cached here, and a hash in a later exit
	 * handler (a writer sealing on the way out) would use freed memory.
	 * The process's end releases everything anyway. */
	if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG |
				 OPENSSL_INIT_NO_ATEXIT, NULL))
		return;
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	hmac_mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (!sha256_md || !hmac_mac)
		return;
	/* The DRBG seeds itself on first use, from getrandom(2); drawing a
	 * byte here does that before gpurecd's sandbox. */
	if (RAND_priv_bytes(&b, 1) != 1)
		return;
	OPENSSL_cleanse(&b, sizeof(b));
	init_rc = 0;
}

int gr_crypto__init(void)
{
	if (pthread_once(&init_once, init_run) != 0)
		return -EIO;
	return init_rc;
}

const char *gr_crypto__error(char *buf, size_t n)
{
	unsigned long e = ERR_get_error();

	if (!n)
		return buf;
	if (!e)
		snprintf(buf, n, "no libcrypto error");
	else
		ERR_error_string_n(e, buf, n);
	ERR_clear_error();
	return buf;
}

int gr_crypto__fips(void)
{
	if (gr_crypto__init())
		return 0;
	return EVP_default_properties_is_fips_enabled(NULL) ? 1 : 0;
}

const char *gr_crypto__version(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

int gr_crypto__random(void *p, size_t n)
{
	int rc = gr_crypto__init();

	if (rc)
		return rc;
	/* RAND_priv_bytes takes an int count. */
	while (n) {
		int k = n > (1u << 30) ? 1 << 30 : (int)n;

		if (RAND_priv_bytes(p, k) != 1)
			return -EIO;
		p = (unsigned char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

void gr_crypto__wipe(void *p, size_t n)
{
	if (p && n)
		OPENSSL_cleanse(p, n);
}

int gr_crypto__memcmp(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n);
}

int gr_sha256__init(struct gr_sha256 *c)
{
	int rc = gr_crypto__init();

	c->ctx = NULL;
	c->err = 0;
	if (rc)
		return rc;
	c->ctx = EVP_MD_CTX_new();
	if (!c->ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex2(c->ctx, sha256_md, NULL) != 1) {
		EVP_MD_CTX_free(c->ctx);
		c->ctx = NULL;
		return -EIO;
	}
	return 0;
}

int gr_sha256__update(struct gr_sha256 *c, const void *p, size_t n)
{
	if (!c->ctx)
		return c->err ? c->err : -EINVAL;
	if (n == 0 || c->err)
		return c->err;
	if (EVP_DigestUpdate(c->ctx, p, n) != 1)
		c->err = -EIO;
	return c->err;
}

int gr_sha256__final(struct gr_sha256 *c, uint8_t out[32])
{
	unsigned int len = 0;
	int rc = c->err;

	if (!c->ctx)
		rc = rc ? rc : -EINVAL;
	else if (!rc && (EVP_DigestFinal_ex(c->ctx, out, &len) != 1 ||
			 len != GR_SHA256_LEN))
		rc = -EIO;
	EVP_MD_CTX_free(c->ctx);
	c->ctx = NULL;
	c->err = 0;
	if (rc)
		memset(out, 0, GR_SHA256_LEN);
	return rc;
}

int gr_sha256(const void *p, size_t n, uint8_t out[32])
{
	struct gr_sha256 c;
	int rc = gr_sha256__init(&c);

	if (rc)
		return rc;
	gr_sha256__update(&c, p, n);
	return gr_sha256__final(&c, out);
}

int gr_sha256__fd(int fd, uint8_t out[32])
{
	struct gr_sha256 c;
	uint8_t d[GR_SHA256_LEN];
	uint8_t *buf;
	int err;

	buf = malloc(SHA256_FILE_BUF);
	if (!buf)
		return -ENOMEM;
	err = gr_sha256__init(&c);
	if (err) {
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t r = read(fd, buf, SHA256_FILE_BUF);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			c.err = -errno;
			break;
		}
		if (r == 0 || gr_sha256__update(&c, buf, (size_t)r))
			break;
	}
	free(buf);
	err = gr_sha256__final(&c, d);
	if (!err)
		memcpy(out, d, sizeof(d));
	return err;
}

int gr_sha256__file(const char *path, uint8_t out[32])
{
	int fd, err;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = gr_sha256__fd(fd, out);
	close(fd);
	return err;
}

int gr_hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
		   uint8_t out[32])
{
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx;
	size_t len = 0;
	int rc = gr_crypto__init();

	if (rc)
		return rc;
	ctx = EVP_MAC_CTX_new(hmac_mac);
	if (!ctx)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						     (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(ctx, key, klen, params) != 1 ||
	    (n && EVP_MAC_update(ctx, msg, n) != 1) ||
	    EVP_MAC_final(ctx, out, &len, GR_SHA256_LEN) != 1 ||
	    len != GR_SHA256_LEN)
		rc = -EIO;
	/* The context holds the key, padded: EVP_MAC_CTX_free cleanses. */
	EVP_MAC_CTX_free(ctx);
	return rc;
}

void gr_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int gr_unhex(const char *s, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi = gr_hexval(s[2 * i]), lo;

		if (hi < 0)
			return -EINVAL;
		lo = gr_hexval(s[2 * i + 1]);
		if (lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
