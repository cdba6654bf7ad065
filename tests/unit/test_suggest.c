/* test_suggest.c - gr_suggest(): the "did you mean" of unknown report,
 * table and command names.  The names are gpurec's own spellings, so a
 * test fails if a real typo stops finding its name. */
#include "tests/unit/test.h"
#include "query/suggest.h"

static const char *const reports[] = {
	"cuda-api-sum", "cuda-errors", "gpu-health", "memcpy-sum",
	"memcpy-sync", "process", "timeline", "top-kernels",
};
static const char *const tables[] = {
	"cuda_kernel", "cuda_memcpy", "cuda_mem", "cuda_api", "offcpu", "runq",
	"block_io", "file_io",
};
#define N(a) ((int)(sizeof(a) / sizeof(a[0])))

TEST(separator_and_case)
{
	/* nsys spells its reports with '_': the same name here */
	CHECK_EQ_STR(gr_suggest("cuda_api_sum", reports, N(reports)),
		     "cuda-api-sum");
	CHECK_EQ_STR(gr_suggest("TOP_KERNELS", reports, N(reports)),
		     "top-kernels");
	CHECK_EQ_STR(gr_suggest("cuda-api", tables, N(tables)), "cuda_api");
	CHECK_EQ_STR(gr_suggest("Block-IO", tables, N(tables)), "block_io");
}

TEST(typos)
{
	CHECK_EQ_STR(gr_suggest("cuda_kernal", tables, N(tables)),
		     "cuda_kernel");         /* a substitution */
	CHECK_EQ_STR(gr_suggest("timelnie", reports, N(reports)),
		     "timeline");            /* a swap of neighbours */
	CHECK_EQ_STR(gr_suggest("proces", reports, N(reports)),
		     "process");             /* a deletion */
	CHECK_EQ_STR(gr_suggest("offcpuu", tables, N(tables)),
		     "offcpu");              /* an insertion */
	CHECK_EQ_STR(gr_suggest("rnuq", tables, N(tables)), "runq");
}

TEST(nearest_wins)
{
	/* memcpy-syn is 1 from memcpy-sync, 2 from memcpy-sum */
	CHECK_EQ_STR(gr_suggest("memcpy-syn", reports, N(reports)),
		     "memcpy-sync");
	/* cuda_mems is 1 from cuda_mem, 3 from cuda_memcpy */
	CHECK_EQ_STR(gr_suggest("cuda_mems", tables, N(tables)), "cuda_mem");
}

TEST(too_far)
{
	CHECK(gr_suggest("nosuch", reports, N(reports)) == NULL);
	CHECK(gr_suggest("xyz", tables, N(tables)) == NULL);
	/* short words allow one edit only: "ru" is 2 from "runq" */
	CHECK(gr_suggest("ru", tables, N(tables)) == NULL);
	CHECK(gr_suggest("", tables, N(tables)) == NULL);
	char longword[200];
	memset(longword, 'a', sizeof(longword) - 1);
	longword[sizeof(longword) - 1] = 0;
	CHECK(gr_suggest(longword, tables, N(tables)) == NULL);
	CHECK(gr_suggest("runq", tables, 0) == NULL);
}

TEST(exact_is_itself)
{
	CHECK_EQ_STR(gr_suggest("gpu-health", reports, N(reports)),
		     "gpu-health");
}

TEST_MAIN(
	TEST_ENTRY(separator_and_case)
	TEST_ENTRY(typos)
	TEST_ENTRY(nearest_wins)
	TEST_ENTRY(too_far)
	TEST_ENTRY(exact_is_itself)
)
