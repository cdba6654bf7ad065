/* test_ksyms.c - the kernel symbolizer over kallsyms (recorder/sym/ksyms.c).
 *
 * Hand-written kallsyms files (unsorted, with data symbols that must be
 * skipped, a module symbol, aliases of each kind) pin down every lookup
 * rule exactly; a generated file of 50k symbols (sorted, shuffled, and
 * sorted with a shuffled tail, as a kernel with modules lists them)
 * checks every address and every gap.  As root, the real /proc/kallsyms
 * is loaded too and checked against the test's own reading of it
 * (sscanf, not the loader's parser).  Not root: that part is skipped with
 * a note, except that CI=true turns the skip into a failure.
 */
#include "tests/unit/test.h"
#include "recorder/sym/ksyms.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1ull << 20)

/* ---- scratch files ------------------------------------------------------- */

static char tmp[64];

static void rm_tmp(void)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	if (!tmp[0] || !(d = opendir(tmp)))
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, de->d_name);
		if (unlink(path) && rmdir(path))
			fprintf(stderr, "test_ksyms.c: cannot remove %s: %s\n",
				path, strerror(errno));
	}
	closedir(d);
	if (rmdir(tmp))
		fprintf(stderr, "test_ksyms.c: cannot remove %s: %s\n", tmp,
			strerror(errno));
}

/* Returns the scratch directory, creating it on first use, or NULL. */
static const char *tmpdir(void)
{
	if (!tmp[0]) {
		snprintf(tmp, sizeof(tmp), "/tmp/gr_ksyms.XXXXXX");
		if (!mkdtemp(tmp)) {
			fprintf(stderr, "test_ksyms.c: mkdtemp: %s\n",
				strerror(errno));
			tmp[0] = '\0';
			return NULL;
		}
		atexit(rm_tmp);
	}
	return tmp;
}

/* Writes len bytes of text to a scratch file called name; returns its path
 * (a static buffer, valid until the next call), or NULL. */
static const char *write_len(const char *name, const char *text, size_t len)
{
	static char path[256];
	const char *dir = tmpdir();
	FILE *f;
	int bad;

	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "test_ksyms.c: %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	bad = fwrite(text, 1, len, f) != len;
	if (fclose(f) || bad) {
		fprintf(stderr, "test_ksyms.c: writing %s failed\n", path);
		return NULL;
	}
	return path;
}

static const char *write_text(const char *name, const char *text)
{
	return write_len(name, text, strlen(text));
}

/* Loads text as a kallsyms file and returns the result; *err gets errno
 * (0 on success). */
static struct gr_ksyms *load_text(const char *name, const char *text,
				  int *err)
{
	const char *path = write_text(name, text);
	struct gr_ksyms *k;

	if (!path) {
		*err = -1;
		return NULL;
	}
	errno = 0;
	k = gr_ksyms__load(path);
	*err = k ? 0 : errno;
	return k;
}

/* ---- a hand-written file ------------------------------------------------- */

/* Unsorted; every data symbol sits where, if it were kept, it would win a
 * lookup below.  The last line has no newline. */
static const char fake[] =
	"ffffffff81000300 T func_c\n"
	"ffffffff81000150 d local_data\n"
	"ffffffff81000100 T func_a\n"
	"ffffffff82000000 D data_global\n"
	"ffffffff81000200 W weak_b\n"		/* alias: W seen first */
	"ffffffff81000200 t func_b\n"		/* ... but t wins */
	"ffffffff81000200 T func_b_alias\n"	/* ... as the first t/T */
	"ffffffff81000160 b bss_local\n"
	"ffffffff81000170 B bss_global\n"
	"ffffffffc0a01000 t nvidia_open\t[nvidia]\n"
	"ffffffff81000180 r rodata_local\n"
	"ffffffff81000190 R rodata_global\n"
	"ffffffff81000400 w only_weak\n"	/* weak only: first seen */
	"ffffffff81000400 W only_weak2\n"
	"ffffffffc0a00000 t nvidia_init\t[nvidia]\n"
	"ffffffffc0a02000 d nvidia_data\t[nvidia]\n"
	"ffffffffc0b00000 D nvidia_far\t[nvidia]\n"
	"ffffffff81000500 A abs_sym\n"
	"ffffffff81000310 U undefined_sym\n"
	"0000000000000000 T zero_sym\n"		/* dropped: not all are 0 */
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text";

TEST(fake_lookups)
{
	struct gr_ksyms *k;
	uint64_t off = 42;
	int err;

	k = load_text("fake", fake, &err);
	CHECK_EQ_INT(err, 0);
	CHECK(k != NULL);
	/* 81000000, 100, 200, 300, 400, c0a00000, c0a01000. */
	CHECK_EQ_INT(gr_ksyms__count(k), 7);

	/* Exact addresses. */
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000000ull, &off), "_stext");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000100ull, &off), "func_a");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000200ull, &off), "func_b");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000300ull, &off), "func_c");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000400ull, &off),
		     "only_weak");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffc0a00000ull, &off),
		     "nvidia_init");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffc0a01000ull, &off),
		     "nvidia_open");
	CHECK_EQ_INT(off, 0);

	/* Inside, over the skipped data symbols. */
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000001ull, &off), "_stext");
	CHECK_EQ_INT(off, 1);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000155ull, &off), "func_a");
	CHECK_EQ_INT(off, 0x55);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000175ull, &off), "func_a");
	CHECK_EQ_INT(off, 0x75);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff810001ffull, &off), "func_a");
	CHECK_EQ_INT(off, 0xff);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000312ull, &off), "func_c");
	CHECK_EQ_INT(off, 0x12);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000505ull, &off),
		     "only_weak");
	CHECK_EQ_INT(off, 0x105);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff82000008ull, &off),
		     "only_weak");
	CHECK_EQ_INT(off, 0xfffc08);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffc0a02010ull, &off),
		     "nvidia_open");
	CHECK_EQ_INT(off, 0x1010);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffc0b00000ull, &off),
		     "nvidia_open");
	CHECK_EQ_INT(off, 0xff000);

	/* The tail: up to 1 MiB past the last symbol, and no further. */
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffc0a01000ull + MIB, &off),
		     "nvidia_open");
	CHECK_EQ_INT(off, MIB);
	off = 42;
	CHECK(gr_ksyms__find(k, 0xffffffffc0a01000ull + MIB + 1, &off) ==
	      NULL);
	CHECK(gr_ksyms__find(k, UINT64_MAX, &off) == NULL);

	/* Below the first symbol; 0 (where zero_sym was) included. */
	CHECK(gr_ksyms__find(k, 0xffffffff80ffffffull, &off) == NULL);
	CHECK(gr_ksyms__find(k, 0, &off) == NULL);
	CHECK(gr_ksyms__find(k, 1, &off) == NULL);
	CHECK_EQ_INT(off, 42);		/* untouched by a miss */

	/* off may be NULL. */
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000208ull, NULL),
		     "func_b");
	gr_ksyms__free(k);

	CHECK(gr_ksyms__find(NULL, 0xffffffff81000000ull, &off) == NULL);
	CHECK_EQ_INT(gr_ksyms__count(NULL), 0);
	gr_ksyms__free(NULL);
}

/* Aliases split between the ordered head and the unordered tail: the
 * preference is by type and then by line, wherever the lines are. */
TEST(aliases_across_runs)
{
	struct gr_ksyms *k;
	uint64_t off = 1;
	int err;

	k = load_text("split",
		      "ffffffff81000000 T _stext\n"
		      "ffffffff81000100 W weak_x\n"
		      "ffffffff81000200 T func_y\n"
		      "ffffffff81000300 W weak_z\n"
		      "ffffffffc0000000 t mod_a\t[m]\n"
		      "ffffffff81000300 w weak_z2\n"
		      "ffffffff81000100 T strong_x\n"
		      "ffffffff81000200 T func_y_alias\n"
		      "ffffffff81000100 t strong_x2\n", &err);
	CHECK_EQ_INT(err, 0);
	CHECK_EQ_INT(gr_ksyms__count(k), 5);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000100ull, &off),
		     "strong_x");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000280ull, &off),
		     "func_y");
	CHECK_EQ_INT(off, 0x80);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffff81000300ull, &off),
		     "weak_z");
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffc0000010ull, &off),
		     "mod_a");
	CHECK_EQ_INT(off, 0x10);
	gr_ksyms__free(k);
}

/* A one-symbol file: the first symbol is also the last. */
TEST(single_symbol)
{
	struct gr_ksyms *k;
	uint64_t off = 0;
	int err;

	k = load_text("one", "ffffffffa0000000 t lone\t[mod]\n\n", &err);
	CHECK_EQ_INT(err, 0);
	CHECK_EQ_INT(gr_ksyms__count(k), 1);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffa0000000ull, &off), "lone");
	CHECK_EQ_INT(off, 0);
	CHECK_EQ_STR(gr_ksyms__find(k, 0xffffffffa0000000ull + MIB, &off),
		     "lone");
	CHECK_EQ_INT(off, MIB);
	CHECK(gr_ksyms__find(k, 0xffffffffa0000000ull + MIB + 1, &off) ==
	      NULL);
	CHECK(gr_ksyms__find(k, 0xffffffff9fffffffull, &off) == NULL);
	gr_ksyms__free(k);
}

TEST(errors)
{
	static const char *const malformed[] = {
		"hello world\n",
		"ffffffff81000000T func\n",
		"ffffffff81000000 T\n",
		"ffffffff81000000 T \n",
		"ffffffff81000000  T func\n",
		"ffffffff81000000 T  func\n",
		"fffffffff81000000 T func\n",	/* 17 digits */
		" ffffffff81000000 T func\n",
		"ffffffff81000000 T ok\nxyz D data\n",
	};
	struct gr_ksyms *k;
	char name[32];
	int err;

	/* kptr_restrict: every address reads as 0. */
	k = load_text("zeros",
		      "0000000000000000 T _stext\n"
		      "0000000000000000 t func\n"
		      "0000000000000000 D data\n"
		      "0000000000000000 t nvidia_open\t[nvidia]\n", &err);
	CHECK(k == NULL);
	CHECK_EQ_INT(err, EPERM);

	/* No text symbols at all. */
	k = load_text("empty", "", &err);
	CHECK(k == NULL);
	CHECK_EQ_INT(err, ENODATA);
	k = load_text("data_only", "ffffffff82000000 D data\n"
		      "ffffffff82000010 b bss\n", &err);
	CHECK(k == NULL);
	CHECK_EQ_INT(err, ENODATA);

	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu", i);
		k = load_text(name, malformed[i], &err);
		if (k || err != EINVAL) {
			fprintf(stderr, "\"%s\": err %d\n", malformed[i], err);
			gr_ksyms__free(k);
			CHECK(0);
		}
	}

	/* A line longer than the loader's 64 KiB read buffer. */
	{
		size_t n = 70000;
		char *big = malloc(n + 1);

		CHECK(big != NULL);
		memcpy(big, "ffffffff81000000 T ", 19);
		memset(big + 19, 'x', n - 20);
		big[n - 1] = '\n';
		big[n] = '\0';
		k = load_text("long", big, &err);
		free(big);
		CHECK(k == NULL);
		CHECK_EQ_INT(err, EINVAL);
	}

	CHECK(tmpdir() != NULL);
	errno = 0;
	CHECK(gr_ksyms__load("/nonexistent/kallsyms") == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(gr_ksyms__load(tmpdir()) == NULL);
	CHECK_EQ_INT(errno, EISDIR);
}

/* ---- a generated file ---------------------------------------------------- */

#define NGEN 50000

/* Returns the next value of a fixed-seed generator (Knuth's MMIX LCG). */
static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Writes the generated symbols (one data symbol after each text one) in
 * the order order[] gives, and checks every symbol and every gap. */
static void check_generated(const char *name, const uint64_t *addr,
			    const int *order)
{
	size_t cap = (size_t)NGEN * 2 * 48, len = 0;
	char *text = malloc(cap), want[32];
	struct gr_ksyms *k;
	const char *path, *got;
	uint64_t off;

	CHECK(text != NULL);
	for (int j = 0; j < NGEN; j++) {
		int i = order[j];

		len += (size_t)snprintf(text + len, cap - len,
					"%016" PRIx64 " %c fn_%d%s\n"
					"%016" PRIx64 " d var_%d\n",
					addr[i], "tTwW"[i % 4], i,
					i % 7 ? "" : "\t[gen]",
					addr[i] + 1, i);
	}
	path = write_len(name, text, len);
	free(text);
	CHECK(path != NULL);
	k = gr_ksyms__load(path);
	CHECK(k != NULL);
	for (int i = 0; i < NGEN; i++) {
		uint64_t next = i + 1 < NGEN ? addr[i + 1] : addr[i] + MIB + 1;

		snprintf(want, sizeof(want), "fn_%d", i);
		got = gr_ksyms__find(k, addr[i], &off);
		if (!got || strcmp(got, want) || off != 0 ||
		    !(got = gr_ksyms__find(k, next - 1, &off)) ||
		    strcmp(got, want) || off != next - 1 - addr[i]) {
			fprintf(stderr, "%s: fn_%d at %" PRIx64 ": %s+%" PRIu64
				"\n", name, i, addr[i], got ? got : "(null)",
				off);
			gr_ksyms__free(k);
			CHECK(0);
		}
	}
	CHECK_EQ_INT(gr_ksyms__count(k), NGEN);
	CHECK(gr_ksyms__find(k, addr[NGEN - 1] + MIB + 1, &off) == NULL);
	CHECK(gr_ksyms__find(k, addr[0] - 1, &off) == NULL);
	gr_ksyms__free(k);
}

TEST(generated)
{
	static uint64_t addr[NGEN];
	static int order[NGEN];
	uint64_t seed = 1, a = 0xffffffff81000000ull;

	for (int i = 0; i < NGEN; i++) {
		addr[i] = a;
		a += 2 + lcg(&seed) % 4096;	/* gaps of 2 B to 4 KiB */
		order[i] = i;
	}
	check_generated("sorted", addr, order);
	if (gr_test_failed_)
		return;
	for (int i = NGEN - 1; i > 0; i--) {	/* Fisher-Yates */
		int j = (int)(lcg(&seed) % (uint64_t)(i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	check_generated("shuffled", addr, order);
	if (gr_test_failed_)
		return;
	/* As on a real kernel: an ordered head (the image), then a tail out
	 * of order (modules) that reaches down into it.  Every tenth symbol
	 * goes to the tail. */
	for (int i = 0, h = 0, t = NGEN - NGEN / 10; i < NGEN; i++)
		order[i % 10 ? h++ : t++] = i;
	for (int i = NGEN - 1, t0 = NGEN - NGEN / 10; i > t0; i--) {
		int j = t0 + (int)(lcg(&seed) % (uint64_t)(i - t0 + 1));
		int t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	check_generated("head_tail", addr, order);
}

/* ---- the real /proc/kallsyms --------------------------------------------- */

/* Returns whether the root-only tests should be skipped (printing why), or
 * -1 if they cannot run and must not be skipped (CI=true). */
static int skip_unless_root(const char *what)
{
	const char *ci = getenv("CI");

	if (geteuid() == 0)
		return 0;
	if (ci && !strcmp(ci, "true")) {
		fprintf(stderr, "test_ksyms.c: %s needs root, and CI=true "
			"forbids skipping it\n", what);
		return -1;
	}
	printf("skip: %s needs root (not skipped when CI=true)\n", what);
	return 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

TEST(proc_kallsyms)
{
	char *line = NULL, name[1024], type;
	size_t cap = 0;
	uint64_t a, sched = 0, off;
	double best = 1e9;
	struct gr_ksyms *k = NULL;
	const char *got;
	int skip = skip_unless_root("/proc/kallsyms"), nchecked = 0, bad = 0;
	FILE *f;

	CHECK(skip >= 0);
	if (skip)
		return;

	for (int i = 0; i < 5; i++) {	/* best of 5: the first warms up */
		double t0 = now_ms(), t;
		int e;

		gr_ksyms__free(k);
		errno = 0;
		k = gr_ksyms__load(NULL);
		t = now_ms() - t0;
		if (!k) {
			e = errno;
			fprintf(stderr, "gr_ksyms__load(NULL): %s%s\n",
				strerror(e), e == EPERM ? " (root without "
				"CAP_SYSLOG, or kptr_restrict=2?)" : "");
			CHECK(0);
		}
		if (t < best)
			best = t;
	}
	printf("note: /proc/kallsyms loaded in %.1f ms (best of 5), %d "
	       "symbols\n", best, gr_ksyms__count(k));
	if (gr_ksyms__count(k) <= 10000) {
		gr_ksyms__free(k);
		CHECK(!"more than 10000 symbols");
	}

	/* The test's own reading.  Every text symbol of the kernel image is
	 * found at offset 0; module and BPF symbols are left out, as they
	 * can come and go between the two reads. */
	f = fopen("/proc/kallsyms", "r");
	if (!f) {
		gr_ksyms__free(k);
		CHECK(f != NULL);
	}
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%" SCNx64 " %c %1023s", &a, &type, name) != 3)
			continue;
		if (!strchr("tTwW", type) || a == 0 || strchr(line, '['))
			continue;
		if (!strcmp(name, "schedule") && (type == 'T' || type == 't'))
			sched = a;
		got = gr_ksyms__find(k, a, &off);
		if (!got || off != 0) {
			if (bad++ < 5)
				fprintf(stderr, "%" PRIx64 " %s: %s+%" PRIu64
					"\n", a, name, got ? got : "(null)",
					got ? off : 0);
		}
		nchecked++;
	}
	free(line);
	fclose(f);
	if (bad || sched == 0) {
		fprintf(stderr, "%d of %d missed; schedule at %" PRIx64 "\n",
			bad, nchecked, sched);
		gr_ksyms__free(k);
		CHECK(0);
	}

	/* Compared before the free: the names live in k. */
	got = gr_ksyms__find(k, sched, &off);
	bad = !got || strcmp(got, "schedule") || off != 0;
	if (bad)
		fprintf(stderr, "%" PRIx64 ": %s+%" PRIu64 "\n", sched,
			got ? got : "(null)", got ? off : 0);
	got = gr_ksyms__find(k, sched + 5, &off);
	if (!got || strcmp(got, "schedule") || off != 5) {
		fprintf(stderr, "%" PRIx64 ": %s+%" PRIu64 "\n", sched + 5,
			got ? got : "(null)", got ? off : 0);
		bad = 1;
	}
	gr_ksyms__free(k);
	CHECK(!bad);
}

TEST_MAIN(
	TEST_ENTRY(fake_lookups)
	TEST_ENTRY(aliases_across_runs)
	TEST_ENTRY(single_symbol)
	TEST_ENTRY(errors)
	TEST_ENTRY(generated)
	TEST_ENTRY(proc_kallsyms)
)
