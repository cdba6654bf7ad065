/* test.h - a tiny assertion header for gpurec's unit tests.
 *
 * Each test file defines TEST(name) functions and lists them in a
 * TEST_LIST; main() comes from TEST_MAIN().  A failed CHECK prints the file,
 * line and expression, marks the test failed, and returns from it.  The run
 * ends with "N passed, N failed, N skipped" on a line of its own, which CI
 * reads; a test that sets gr_test_skipped_ is counted skipped, not passed.
 */
#ifndef GR_TEST_H
#define GR_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gr_test_failed_;
/* Set by a test that could not run here (after printing why): it is
 * counted skipped, not passed. */
static int gr_test_skipped_;

#define TEST(name) static void test_##name(void)

#define CHECK(cond)                                                        \
	do {                                                                   \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,         \
				__LINE__, #cond);                                          \
			gr_test_failed_ = 1;                                           \
			return;                                                        \
		}                                                                  \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                 \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);                \
		if (a_ != b_) {                                                    \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",      \
				__FILE__, __LINE__, #a, #b, a_, b_);                       \
			gr_test_failed_ = 1;                                           \
			return;                                                        \
		}                                                                  \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                 \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                                   \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                           \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",  \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",            \
				b_ ? b_ : "(null)");                                       \
			gr_test_failed_ = 1;                                           \
			return;                                                        \
		}                                                                  \
	} while (0)

struct gr_test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST_ENTRY(name) { #name, test_##name },

#define TEST_MAIN(...)                                                     \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		static const struct gr_test_case cases[] = { __VA_ARGS__ };        \
		int passed = 0, failed = 0, skipped = 0;                           \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {   \
			if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)           \
				continue;                                                  \
			gr_test_failed_ = gr_test_skipped_ = 0;                        \
			cases[i].fn();                                                 \
			printf("%s %s\n", gr_test_failed_ ? "FAIL" :                   \
			       gr_test_skipped_ ? "skip" : "ok  ", cases[i].name);     \
			if (gr_test_failed_)                                           \
				failed++;                                                  \
			else if (gr_test_skipped_)                                     \
				skipped++;                                                 \
			else                                                           \
				passed++;                                                  \
		}                                                                  \
		printf("%d passed, %d failed, %d skipped\n", passed, failed,       \
		       skipped);                                                   \
		return failed ? 1 : 0;                                             \
	}

#endif
