/* test_crypto.c - store/crypto.c: SHA-256 against FIPS 180-4 vectors and
 * block boundaries, file hashing, HMAC-SHA-256 against RFC 4231, random
 * bytes and the hex helpers.
 *
 * Expected digests are the published FIPS examples plus values from
 * coreutils sha256sum for lengths around the 55/56/64-byte padding edges.
 */
#include "tests/unit/test.h"
#include "store/crypto.h"

#include <errno.h>
#include <unistd.h>

static void digest_hex(const void *p, size_t n, char hex[65])
{
	struct gr_sha256 c;
	uint8_t d[32];
	int rc = gr_sha256__init(&c);

	if (!rc)
		rc = gr_sha256__update(&c, p, n);
	if (gr_sha256__final(&c, d) || rc) {
		strcpy(hex, "(failed)");
		return;
	}
	gr_hex(d, sizeof(d), hex);
}

static void fill_pattern(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + 3);
}

TEST(empty)
{
	char hex[65];

	digest_hex("", 0, hex);
	CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb924"
			  "27ae41e4649b934ca495991b7852b855");
	digest_hex(NULL, 0, hex);
	CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb924"
			  "27ae41e4649b934ca495991b7852b855");
}

TEST(abc)
{
	char hex[65];

	digest_hex("abc", 3, hex);
	CHECK_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223"
			  "b00361a396177a9cb410ff61f20015ad");
}

TEST(two_block_448)
{
	static const char m[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[65];

	CHECK_EQ_INT(strlen(m), 56);
	digest_hex(m, strlen(m), hex);
	CHECK_EQ_STR(hex, "248d6a61d20638b8e5c026930c3e6039"
			  "a33ce45964ff2167f6ecedd419db06c1");
}

TEST(two_block_896)
{
	static const char m[] =
		"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		"hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	char hex[65];

	digest_hex(m, strlen(m), hex);
	CHECK_EQ_STR(hex, "cf5b16a778af8380036ce59e7b049237"
			  "0b249b11e8f07a51afac45037afee9d1");
}

TEST(million_a)
{
	struct gr_sha256 c;
	uint8_t d[32], block[1000];
	char hex[65];

	memset(block, 'a', sizeof(block));
	CHECK_EQ_INT(gr_sha256__init(&c), 0);
	for (int i = 0; i < 1000; i++)
		CHECK_EQ_INT(gr_sha256__update(&c, block, sizeof(block)), 0);
	CHECK_EQ_INT(gr_sha256__final(&c, d), 0);
	gr_hex(d, 32, hex);
	CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
			  "f1809a48a497200e046d39ccc7112cd0");
}

TEST(padding_edges)
{
	static const struct {
		size_t n;
		const char *hex;
	} v[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0" },
		{ 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
		{ 120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c" },
	};
	char buf[128], hex[65];

	memset(buf, 'a', sizeof(buf));
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		digest_hex(buf, v[i].n, hex);
		CHECK_EQ_STR(hex, v[i].hex);
	}
}

TEST(incremental_odd_chunks)
{
	static const size_t chunks[] = { 1, 3, 7, 13, 63, 64, 65, 127, 1000, 4093 };
	static uint8_t data[200000];
	char one[65], inc[65];

	fill_pattern(data, sizeof(data));
	digest_hex(data, sizeof(data), one);
	CHECK_EQ_STR(one, "ec0ebf98b6f2954bf0f7b839402b1ba2"
			  "45996c39d18e155414e91a2b4353c157");

	for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct gr_sha256 c;
		uint8_t d[32];
		size_t off = 0, step = chunks[k];

		CHECK_EQ_INT(gr_sha256__init(&c), 0);
		while (off < sizeof(data)) {
			size_t n = sizeof(data) - off < step ?
				   sizeof(data) - off : step;

			gr_sha256__update(&c, data + off, n);
			gr_sha256__update(&c, data + off + n, 0);
			off += n;
			/* vary the chunk size as we go */
			step = step % 97 + chunks[k];
		}
		CHECK_EQ_INT(gr_sha256__final(&c, d), 0);
		gr_hex(d, 32, inc);
		CHECK_EQ_STR(inc, one);
	}
}

TEST(file)
{
	static uint8_t data[200000];
	char path[] = "/tmp/gr_test_sha256_XXXXXX";
	uint8_t d[32];
	char hex[65];
	int fd;

	fill_pattern(data, sizeof(data));
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write(fd, data, sizeof(data)), sizeof(data));
	close(fd);

	memset(d, 0, sizeof(d));
	CHECK_EQ_INT(gr_sha256__file(path, d), 0);
	gr_hex(d, 32, hex);
	unlink(path);
	CHECK_EQ_STR(hex, "ec0ebf98b6f2954bf0f7b839402b1ba2"
			  "45996c39d18e155414e91a2b4353c157");

	/* empty file */
	strcpy(path, "/tmp/gr_test_sha256_XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ_INT(gr_sha256__file(path, d), 0);
	gr_hex(d, 32, hex);
	unlink(path);
	CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb924"
			  "27ae41e4649b934ca495991b7852b855");

	CHECK_EQ_INT(gr_sha256__file("/nonexistent/gr/sha", d), -ENOENT);
	CHECK_EQ_INT(gr_sha256__file("/tmp", d), -EISDIR);
}

TEST(hex)
{
	static const uint8_t b[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	char out[13];

	memset(out, 'x', sizeof(out));
	gr_hex(b, sizeof(b), out);
	CHECK_EQ_STR(out, "00017f80abff");
	gr_hex(b, 0, out);
	CHECK_EQ_STR(out, "");
}

TEST(oneshot_and_fd)
{
	static uint8_t data[100000];
	char path[] = "/tmp/gr_test_crypto_XXXXXX";
	uint8_t d[32], e[32];
	char hex[65];
	int fd;

	fill_pattern(data, sizeof(data));
	CHECK_EQ_INT(gr_sha256("abc", 3, d), 0);
	gr_hex(d, 32, hex);
	CHECK_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223"
			  "b00361a396177a9cb410ff61f20015ad");

	/* gr_sha256__fd hashes from the file offset to the end. */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	CHECK_EQ_INT(write(fd, data, sizeof(data)), sizeof(data));
	CHECK_EQ_INT(lseek(fd, 1000, SEEK_SET), 1000);
	CHECK_EQ_INT(gr_sha256__fd(fd, d), 0);
	CHECK_EQ_INT(gr_sha256(data + 1000, sizeof(data) - 1000, e), 0);
	close(fd);
	CHECK(memcmp(d, e, 32) == 0);
	CHECK_EQ_INT(gr_sha256__fd(-1, d), -EBADF);
}

TEST(final_without_init)
{
	struct gr_sha256 c = { 0 };
	uint8_t d[32];

	CHECK_EQ_INT(gr_sha256__update(&c, "x", 1), -EINVAL);
	CHECK_EQ_INT(gr_sha256__final(&c, d), -EINVAL);
	/* Final releases the context: a second final fails, no double free. */
	CHECK_EQ_INT(gr_sha256__init(&c), 0);
	CHECK_EQ_INT(gr_sha256__final(&c, d), 0);
	CHECK(c.ctx == NULL);
	CHECK_EQ_INT(gr_sha256__final(&c, d), -EINVAL);
}

static void fill(uint8_t *p, uint8_t v, size_t n)
{
	memset(p, v, n);
}

/* RFC 4231 section 4: HMAC-SHA-256 test cases 1 to 7 (case 5's output is
 * truncated to 128 bits there). */
TEST(hmac_rfc4231)
{
	static const char *want[] = {
		"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		"773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
		"82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
		"a3b6167473100ee06e0c796c2955552b",
		"60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
		"9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
	};
	static const char m6[] =
		"Test Using Larger Than Block-Size Key - Hash Key First";
	static const char m7[] =
		"This is a test using a larger than block-size key and a larger "
		"than block-size data. The key needs to be hashed before being "
		"used by the HMAC algorithm.";
	uint8_t key[131], msg[50], mac[32];
	char hex[65];

	fill(key, 0x0b, 20);
	CHECK_EQ_INT(gr_hmac_sha256(key, 20, "Hi There", 8, mac), 0);
	gr_hex(mac, 32, hex);
	CHECK_EQ_STR(hex, want[0]);

	CHECK_EQ_INT(gr_hmac_sha256("Jefe", 4, "what do ya want for nothing?",
				    28, mac), 0);
	gr_hex(mac, 32, hex);
	CHECK_EQ_STR(hex, want[1]);

	fill(key, 0xaa, 20);
	fill(msg, 0xdd, 50);
	CHECK_EQ_INT(gr_hmac_sha256(key, 20, msg, 50, mac), 0);
	gr_hex(mac, 32, hex);
	CHECK_EQ_STR(hex, want[2]);

	for (int i = 0; i < 25; i++)
		key[i] = (uint8_t)(i + 1);
	fill(msg, 0xcd, 50);
	CHECK_EQ_INT(gr_hmac_sha256(key, 25, msg, 50, mac), 0);
	gr_hex(mac, 32, hex);
	CHECK_EQ_STR(hex, want[3]);

	fill(key, 0x0c, 20);
	CHECK_EQ_INT(gr_hmac_sha256(key, 20, "Test With Truncation", 20, mac),
		     0);
	gr_hex(mac, 16, hex);
	CHECK_EQ_STR(hex, want[4]);

	fill(key, 0xaa, 131);
	CHECK_EQ_INT(gr_hmac_sha256(key, 131, m6, strlen(m6), mac), 0);
	gr_hex(mac, 32, hex);
	CHECK_EQ_STR(hex, want[5]);
	CHECK_EQ_INT(gr_hmac_sha256(key, 131, m7, strlen(m7), mac), 0);
	gr_hex(mac, 32, hex);
	CHECK_EQ_STR(hex, want[6]);
}

TEST(random_and_wipe)
{
	uint8_t a[32], b[32], zero[32] = { 0 };

	CHECK_EQ_INT(gr_crypto__init(), 0);
	CHECK_EQ_INT(gr_crypto__random(a, sizeof(a)), 0);
	CHECK_EQ_INT(gr_crypto__random(b, sizeof(b)), 0);
	CHECK(memcmp(a, b, 32) != 0);
	CHECK(memcmp(a, zero, 32) != 0);
	CHECK_EQ_INT(gr_crypto__memcmp(a, a, 32), 0);
	CHECK(gr_crypto__memcmp(a, b, 32) != 0);
	gr_crypto__wipe(a, sizeof(a));
	CHECK(memcmp(a, zero, 32) == 0);
	CHECK(gr_crypto__version() && strncmp(gr_crypto__version(),
					     "OpenSSL 3", 9) == 0);
	CHECK(gr_crypto__fips() == 0 || gr_crypto__fips() == 1);
}

TEST(unhex)
{
	uint8_t b[4];

	CHECK_EQ_INT(gr_unhex("00ff7FaB", 4, b), 0);
	CHECK(b[0] == 0 && b[1] == 0xff && b[2] == 0x7f && b[3] == 0xab);
	CHECK_EQ_INT(gr_unhex("00fg", 2, b), -EINVAL);
	CHECK_EQ_INT(gr_unhex("00f", 2, b), -EINVAL);
	CHECK_EQ_INT(gr_unhex("", 1, b), -EINVAL);
}

TEST_MAIN(
	TEST_ENTRY(empty)
	TEST_ENTRY(abc)
	TEST_ENTRY(two_block_448)
	TEST_ENTRY(two_block_896)
	TEST_ENTRY(million_a)
	TEST_ENTRY(padding_edges)
	TEST_ENTRY(incremental_odd_chunks)
	TEST_ENTRY(file)
	TEST_ENTRY(hex)
	TEST_ENTRY(oneshot_and_fd)
	TEST_ENTRY(final_without_init)
	TEST_ENTRY(hmac_rfc4231)
	TEST_ENTRY(random_and_wipe)
	TEST_ENTRY(unhex)
)
