/* test_parse.c - sizes, durations, RFC 3339 parsing and formatting.
 *
 * Expected epoch values were computed independently (Python datetime);
 * the round-trip cases cover leap days on both sides of 1970 and the two
 * ends of the int64 nanosecond range.
 */
#include "tests/unit/test.h"
#include "common/parse.h"

#include <errno.h>

#define NS 1000000000LL

TEST(size_ok)
{
	static const struct {
		const char *s;
		uint64_t v;
	} v[] = {
		{ "0", 0 },
		{ "1024", 1024 },
		{ "1024B", 1024 },
		{ "1024b", 1024 },
		{ "64K", 65536 },
		{ "64k", 65536 },
		{ "64KB", 65536 },
		{ "64KiB", 65536 },
		{ "64kib", 65536 },
		{ "512M", 536870912ULL },
		{ "10G", 10737418240ULL },
		{ "2T", 2199023255552ULL },
		{ "1.5G", 1610612736ULL },
		{ "0.5K", 512 },
		{ "0.3K", 307 },		/* 307.2 truncated */
		{ "1.0009765625K", 1025 },
		{ "3P", 3377699720527872ULL },
		{ "1E", 1152921504606846976ULL },
		{ "15.99E", 18435214858663483146ULL },
		{ "007", 7 },
		{ "18446744073709551615", UINT64_MAX },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t out = 42;

		if (gr_parse_size(v[i].s, &out) != 0 || out != v[i].v) {
			fprintf(stderr, "size \"%s\" -> %" PRIu64 "\n", v[i].s, out);
			CHECK(0);
		}
	}
}

TEST(size_bad)
{
	static const char *const inval[] = {
		"", "K", "B", "-1", "+1", " 1", "1 ", "1 K", "1x", "1KK",
		"1Ki", "1KiBB", "1iB", "1.5", "1.5B", "1.", ".5K", "1..5K",
		"1,5K", "0x10", "1e3", "64Q", "1ZB",
	};
	uint64_t out = 42;

	for (size_t i = 0; i < sizeof(inval) / sizeof(inval[0]); i++) {
		if (gr_parse_size(inval[i], &out) != -EINVAL) {
			fprintf(stderr, "size \"%s\" accepted\n", inval[i]);
			CHECK(0);
		}
	}
	CHECK_EQ_INT(gr_parse_size(NULL, &out), -EINVAL);
	CHECK_EQ_INT(gr_parse_size("18446744073709551616", &out), -ERANGE);
	CHECK_EQ_INT(gr_parse_size("99999999999999999999999", &out), -ERANGE);
	CHECK_EQ_INT(gr_parse_size("16E", &out), -ERANGE);
	CHECK_EQ_INT(gr_parse_size("16384P", &out), -ERANGE);
	CHECK_EQ_INT(gr_parse_size("17179869184G", &out), -ERANGE);
	CHECK_EQ_INT(out, 42);	/* untouched on error */
}

TEST(duration_ok)
{
	static const struct {
		const char *s;
		int64_t v;
	} v[] = {
		{ "90s", 90 * NS },
		{ "15m", 900 * NS },
		{ "2h", 7200 * NS },
		{ "3d", 259200 * NS },
		{ "500ms", 500000000 },
		{ "250us", 250000 },
		{ "250\xc2\xb5s", 250000 },
		{ "10ns", 10 },
		{ "42", 42 * NS },
		{ "0", 0 },
		{ "0s", 0 },
		{ "1.5s", 1500000000 },
		{ "1.25", 1250000000 },
		{ "0.1s", 100000000 },
		{ "2.5h", 9000 * NS },
		{ "1.5ns", 1 },
		{ "0.0000000019s", 1 },
		{ "1.5m", 90 * NS },
		{ "90S", 90 * NS },
		{ "500MS", 500000000 },
		{ "106751d", 106751LL * 86400 * NS },
		{ "9223372036.854775807s", INT64_MAX },
		{ "9223372036854775807ns", INT64_MAX },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int64_t out = 42;

		if (gr_parse_duration_ns(v[i].s, &out) != 0 || out != v[i].v) {
			fprintf(stderr, "duration \"%s\" -> %" PRId64 "\n",
				v[i].s, out);
			CHECK(0);
		}
	}
}

TEST(duration_bad)
{
	static const char *const inval[] = {
		"", "s", "-5s", "-0", "+5s", "5x", "5 s", " 5s", "5s ", "1.s",
		".5s", "5sec", "1e3s", "5mss", "5w", "5y", "5hm", "1h30m",
	};
	int64_t out = 42;

	for (size_t i = 0; i < sizeof(inval) / sizeof(inval[0]); i++) {
		if (gr_parse_duration_ns(inval[i], &out) != -EINVAL) {
			fprintf(stderr, "duration \"%s\" accepted\n", inval[i]);
			CHECK(0);
		}
	}
	CHECK_EQ_INT(gr_parse_duration_ns(NULL, &out), -EINVAL);
	CHECK_EQ_INT(gr_parse_duration_ns("106752d", &out), -ERANGE);
	CHECK_EQ_INT(gr_parse_duration_ns("9223372036.854775808s", &out),
		     -ERANGE);
	CHECK_EQ_INT(gr_parse_duration_ns("9223372036854775808ns", &out),
		     -ERANGE);
	CHECK_EQ_INT(gr_parse_duration_ns("99999999999999999999", &out),
		     -ERANGE);
	CHECK_EQ_INT(out, 42);
}

TEST(time_relative)
{
	const int64_t now = 1795356000LL * NS;
	int64_t out;

	CHECK_EQ_INT(gr_parse_time("now", now, &out), 0);
	CHECK_EQ_INT(out, now);
	CHECK_EQ_INT(gr_parse_time("NOW", now, &out), 0);
	CHECK_EQ_INT(out, now);
	CHECK_EQ_INT(gr_parse_time("90s", now, &out), 0);
	CHECK_EQ_INT(out, now - 90 * NS);
	CHECK_EQ_INT(gr_parse_time("15m", now, &out), 0);
	CHECK_EQ_INT(out, now - 900 * NS);
	CHECK_EQ_INT(gr_parse_time("2h", now, &out), 0);
	CHECK_EQ_INT(out, now - 7200 * NS);
	CHECK_EQ_INT(gr_parse_time("3d", now, &out), 0);
	CHECK_EQ_INT(out, now - 259200 * NS);
	CHECK_EQ_INT(gr_parse_time("1.5s", now, &out), 0);
	CHECK_EQ_INT(out, now - 1500000000);
	CHECK_EQ_INT(gr_parse_time("0s", now, &out), 0);
	CHECK_EQ_INT(out, now);
	/* a bare number is seconds ago, even a year-looking one */
	CHECK_EQ_INT(gr_parse_time("2026", now, &out), 0);
	CHECK_EQ_INT(out, now - 2026 * NS);
	/* a duration can reach before the epoch */
	CHECK_EQ_INT(gr_parse_time("90s", 0, &out), 0);
	CHECK_EQ_INT(out, -90 * NS);
	CHECK_EQ_INT(gr_parse_time("1s", INT64_MIN, &out), -ERANGE);
}

TEST(time_rfc3339)
{
	static const struct {
		const char *s;
		int64_t v;
	} v[] = {
		{ "2026-11-22T14:00:00Z", 1795356000000000000LL },
		{ "2026-11-22T14:00:00.5Z", 1795356000500000000LL },
		{ "2026-11-22t14:00:00.123456789z", 1795356000123456789LL },
		{ "2026-11-22 14:00:00Z", 1795356000000000000LL },
		{ "2026-11-22T19:30:00+05:30", 1795356000000000000LL },
		{ "2026-11-22T06:00:00-08:00", 1795356000000000000LL },
		{ "2026-11-22T14:00:00+00:00", 1795356000000000000LL },
		{ "2026-11-22T14:00:00-00:00", 1795356000000000000LL },
		{ "1970-01-01T00:00:00Z", 0 },
		{ "1970-01-01T00:00:00.000000001Z", 1 },
		{ "1969-12-31T23:59:59.999999999Z", -1 },
		{ "1969-07-20T20:17:40Z", -14182940000000000LL },
		{ "2024-02-29T12:34:56.000000001Z", 1709210096000000001LL },
		{ "2000-02-29T00:00:00Z", 951782400000000000LL },
		{ "1968-02-29T23:59:59Z", -57974401LL * NS },
		{ "1900-03-01T00:00:00Z", -2203891200000000000LL },
		{ "2016-12-31T23:59:59Z", 1483228799LL * NS },
		{ "2016-12-31T23:59:60Z", 1483228800LL * NS },	/* leap s */
		{ "1677-09-21T00:12:43.145224192Z", INT64_MIN },
		{ "2262-04-11T23:47:16.854775807Z", INT64_MAX },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int64_t out = 42;

		if (gr_parse_time(v[i].s, 0, &out) != 0 || out != v[i].v) {
			fprintf(stderr, "time \"%s\" -> %" PRId64 "\n", v[i].s, out);
			CHECK(0);
		}
	}
}

TEST(time_bad)
{
	static const char *const inval[] = {
		"", "now ", " now", "yester day", "+", "-", "ago", "2h ago ",
		"+2h ago", "1h 30", "30 1h", "5 parsecs", "1h,30m", "@", "@-5",
		"@1.", "@1e9", "2026-11-22T", "2026-11-22 14", "2026-11-22 14:0",
		"25:00", "1:00",
		"2026-11-22T14:00:00ZZ",
		"2026-11-22T14:00:00Z ",
		"2026-11-22X14:00:00Z",
		"2026-11-22T14:00:00.Z",
		"2026-11-22T14:00:00.1234567891Z",	/* 10 digits */
		"2026-11-22T14:00:00+0530",
		"2026-11-22T14:00:00+05",
		"2026-11-22T14:00:00+24:00",
		"2026-11-22T14:00:00+05:60",
		"2026-1-22T14:00:00Z",
		"26-11-22T14:00:00Z",
		"2026-13-01T00:00:00Z",
		"2026-00-01T00:00:00Z",
		"2026-01-00T00:00:00Z",
		"2026-01-32T00:00:00Z",
		"2026-04-31T00:00:00Z",
		"2023-02-29T00:00:00Z",
		"1900-02-29T00:00:00Z",
		"2026-11-22T24:00:00Z",
		"2026-11-22T23:60:00Z",
		"2026-11-22T23:59:61Z",
		"2026-11-22T-1:00:00Z",
	};
	int64_t out = 42;

	for (size_t i = 0; i < sizeof(inval) / sizeof(inval[0]); i++) {
		if (gr_parse_time(inval[i], 0, &out) != -EINVAL) {
			fprintf(stderr, "time \"%s\" accepted\n", inval[i]);
			CHECK(0);
		}
	}
	CHECK_EQ_INT(gr_parse_time(NULL, 0, &out), -EINVAL);
	CHECK_EQ_INT(gr_parse_time("2262-04-11T23:47:16.854775808Z", 0, &out),
		     -ERANGE);
	CHECK_EQ_INT(gr_parse_time("1677-09-21T00:12:43.145224191Z", 0, &out),
		     -ERANGE);
	CHECK_EQ_INT(gr_parse_time("9999-12-31T23:59:59Z", 0, &out), -ERANGE);
	CHECK_EQ_INT(gr_parse_time("0000-01-01T00:00:00Z", 0, &out), -ERANGE);
	CHECK_EQ_INT(out, 42);
}

/* journalctl's forms (systemd.time(7)); local ones under a fixed TZ.
 * Expected values: Python's datetime with zoneinfo. */
TEST(time_journalctl)
{
	/* 2026-11-25T12:59:05.123456789Z, 13:59:05 in Berlin (CET, +01:00) */
	const int64_t now = 1795611545123456789LL;
	static const struct {
		const char *s;
		int64_t v;
	} v[] = {
		{ "today", 1795561200LL * NS },		/* 2026-11-25 00:00 CET */
		{ "TODAY", 1795561200LL * NS },
		{ "yesterday", 1795474800LL * NS },
		{ "tomorrow", 1795647600LL * NS },
		{ "-2h", 1795604345123456789LL },
		{ "2h", 1795604345123456789LL },
		{ "2h ago", 1795604345123456789LL },
		{ "+2h", 1795618745123456789LL },
		{ "1h30m", 1795606145123456789LL },
		{ "1h 30min", 1795606145123456789LL },
		{ "-1h 30min", 1795606145123456789LL },
		{ "2 days", 1795438745123456789LL },
		{ "1w", 1795006745123456789LL },
		{ "500ms", 1795611544623456789LL },
		{ "2026-11-25 10:00", 1795597200LL * NS },	/* 09:00Z */
		{ "2026-11-25 10:00:05", 1795597205LL * NS },
		{ "2026-11-25T10:00:05.5", 1795597205500000000LL },
		{ "2026-11-25", 1795561200LL * NS },
		{ "2026-07-01 12:00", 1782900000LL * NS },	/* CEST, +02:00 */
		{ "2026-11-25T10:00:05Z", 1795600805LL * NS },
		{ "2026-11-25 10:00Z", 1795600800LL * NS },
		{ "2026-11-25T10:00:05+05:30", 1795581005LL * NS },
		{ "@1795611544", 1795611544LL * NS },
		{ "@1795611544.457481221", 1795611544457481221LL },
		{ "@0", 0 },
		{ "10:00", 1795597200LL * NS },		/* today, local */
		{ "10:00:05.25", 1795597205250000000LL },
	};
	const char *tz = getenv("TZ");
	char *saved = tz ? strdup(tz) : NULL;

	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int64_t out = 42;

		if (gr_parse_time(v[i].s, now, &out) != 0 || out != v[i].v) {
			fprintf(stderr, "time \"%s\" -> %" PRId64 " want %"
				PRId64 "\n", v[i].s, out, v[i].v);
			CHECK(0);
		}
	}
	/* another zone moves only the local forms */
	setenv("TZ", "America/New_York", 1);
	tzset();
	int64_t out = 42;
	CHECK_EQ_INT(gr_parse_time("2026-11-25 10:00", now, &out), 0);
	CHECK_EQ_INT(out, 1795618800LL * NS);		/* 15:00Z, EST */
	CHECK_EQ_INT(gr_parse_time("today", now, &out), 0);
	CHECK_EQ_INT(out, 1795582800LL * NS);		/* 05:00Z */
	CHECK_EQ_INT(gr_parse_time("2026-11-25T10:00:05Z", now, &out), 0);
	CHECK_EQ_INT(out, 1795600805LL * NS);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
}

TEST(format)
{
	static const struct {
		int64_t ns;
		const char *s;
	} v[] = {
		{ 0, "1970-01-01T00:00:00.000000000Z" },
		{ 1, "1970-01-01T00:00:00.000000001Z" },
		{ -1, "1969-12-31T23:59:59.999999999Z" },
		{ -NS, "1969-12-31T23:59:59.000000000Z" },
		{ 1795356000000000000LL, "2026-11-22T14:00:00.000000000Z" },
		{ 1795356000123456789LL, "2026-11-22T14:00:00.123456789Z" },
		{ -14182940000000000LL, "1969-07-20T20:17:40.000000000Z" },
		{ 1709210096000000001LL, "2024-02-29T12:34:56.000000001Z" },
		{ 951782400000000000LL, "2000-02-29T00:00:00.000000000Z" },
		{ -57974401LL * NS + 500000000, "1968-02-29T23:59:59.500000000Z" },
		{ -2203891200000000000LL, "1900-03-01T00:00:00.000000000Z" },
		{ 1483228800LL * NS, "2017-01-01T00:00:00.000000000Z" },
		{ INT64_MIN, "1677-09-21T00:12:43.145224192Z" },
		{ INT64_MAX, "2262-04-11T23:47:16.854775807Z" },
	};
	char buf[GR_TIME_BUF];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int64_t back = 42;

		CHECK_EQ_INT(gr_format_time(v[i].ns, buf, sizeof(buf)), 0);
		CHECK_EQ_STR(buf, v[i].s);
		CHECK_EQ_INT(gr_parse_time(buf, 0, &back), 0);
		CHECK_EQ_INT(back, v[i].ns);
	}
	CHECK_EQ_INT(strlen(buf), GR_TIME_BUF - 1);
}

TEST(format_nospc)
{
	char buf[GR_TIME_BUF];

	memset(buf, 'x', sizeof(buf));
	CHECK_EQ_INT(gr_format_time(0, buf, GR_TIME_BUF - 1), -ENOSPC);
	CHECK_EQ_STR(buf, "");
	CHECK_EQ_INT(gr_format_time(0, buf, 0), -ENOSPC);
	CHECK_EQ_INT(gr_format_time(0, buf, GR_TIME_BUF), 0);
}

TEST(round_trip_sweep)
{
	/* every day boundary +/- 1 ns across 1967..1973 and 1999..2001,
	 * plus a stride through the whole range */
	static const int64_t starts[] = { -3 * 366, 29 * 365 };
	char buf[GR_TIME_BUF];
	int64_t back;

	for (size_t k = 0; k < 2; k++) {
		for (int64_t day = starts[k]; day < starts[k] + 6 * 366; day++) {
			for (int64_t d = -1; d <= 1; d++) {
				int64_t ns = day * 86400 * NS + d;

				CHECK_EQ_INT(gr_format_time(ns, buf, sizeof(buf)), 0);
				CHECK_EQ_INT(gr_parse_time(buf, 0, &back), 0);
				CHECK_EQ_INT(back, ns);
			}
		}
	}
	for (int64_t ns = INT64_MIN; ns < INT64_MAX - 7777777777777777LL;
	     ns += 7777777777777777LL) {
		CHECK_EQ_INT(gr_format_time(ns, buf, sizeof(buf)), 0);
		CHECK_EQ_INT(gr_parse_time(buf, 0, &back), 0);
		CHECK_EQ_INT(back, ns);
	}
}

TEST(hexval)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		CHECK_EQ_INT(gr_hexval(digits[i]), i);
		if (i >= 10)
			CHECK_EQ_INT(gr_hexval((char)(digits[i] - 'a' + 'A')), i);
	}
	const char *bad = "gG/:@`x ";
	for (const char *c = bad; *c; c++)
		CHECK_EQ_INT(gr_hexval(*c), -1);
	CHECK_EQ_INT(gr_hexval('\0'), -1);
	CHECK_EQ_INT(gr_hexval((char)0xff), -1);
}

TEST_MAIN(
	TEST_ENTRY(size_ok)
	TEST_ENTRY(size_bad)
	TEST_ENTRY(duration_ok)
	TEST_ENTRY(duration_bad)
	TEST_ENTRY(time_relative)
	TEST_ENTRY(time_rfc3339)
	TEST_ENTRY(time_bad)
	TEST_ENTRY(time_journalctl)
	TEST_ENTRY(format)
	TEST_ENTRY(format_nospc)
	TEST_ENTRY(round_trip_sweep)
	TEST_ENTRY(hexval)
)
