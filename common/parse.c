/* parse.c - sizes, durations and timestamps for both programs' arguments.
 *
 * Numbers are split into an integer part and a string of fraction digits
 * and scaled by the unit in integer arithmetic (a Horner pass over the
 * fraction digits gives floor(frac * unit) exactly), so no value depends on
 * double rounding.  Calendar conversion uses the proleptic-Gregorian
 * days-from-civil algorithm on plain integers, so a time with a zone (or
 * Z) never depends on timegm() or the C library's locale.  Only the forms
 * systemd.time(7) defines as local time ("today", "2026-11-25 10:00")
 * read TZ, through mktime(): the user means their wall clock.
 */
#include "common/parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000LL
#define SEC_PER_DAY 86400LL

/* A decimal number split at the point. */
struct decimal {
	uint64_t ipart;		/* integer part, valid unless overflow */
	const char *frac;	/* fraction digits (not NUL-terminated) */
	size_t nfrac;
	int overflow;		/* integer part exceeded UINT64_MAX */
};

static inline int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses "D+[.D+]" at *sp and advances *sp past it.  Returns 0 on success,
 * -EINVAL if no digits are there or a '.' has no digits after it. */
static int parse_decimal(const char **sp, struct decimal *d)
{
	const char *s = *sp;

	memset(d, 0, sizeof(*d));
	if (!is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		unsigned int v = (unsigned int)(*s - '0');

		if (d->ipart > (UINT64_MAX - v) / 10)
			d->overflow = 1;
		else
			d->ipart = d->ipart * 10 + v;
	}
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return -EINVAL;
		d->frac = s;
		while (is_digit(*s))
			s++;
		d->nfrac = (size_t)(s - d->frac);
	}
	*sp = s;
	return 0;
}

/* Computes floor(d * unit) into *out, failing above @max.  @unit must be
 * at most 2^60 so the Horner step cannot overflow.  Returns 0 on success,
 * -ERANGE if the result exceeds @max. */
static int decimal_scale(const struct decimal *d, uint64_t unit, uint64_t max,
			 uint64_t *out)
{
	uint64_t whole, part = 0;
	size_t i;

	if (d->overflow)
		return -ERANGE;
	if (unit && d->ipart > max / unit)
		return -ERANGE;
	whole = d->ipart * unit;
	/* part = floor(0.f1f2...fn * unit), evaluated from the last digit */
	for (i = d->nfrac; i > 0; i--)
		part = ((uint64_t)(d->frac[i - 1] - '0') * unit + part) / 10;
	if (part > max - whole)
		return -ERANGE;
	*out = whole + part;
	return 0;
}

int gr_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGTPE";
	struct decimal d;
	uint64_t unit = 1, v;
	const char *u;
	char c;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_decimal(&s, &d);
	if (err)
		return err;

	c = *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
	if (c && (u = strchr(units, c)) != NULL) {
		unit = 1ULL << (10 * (u - units + 1));
		s++;
		if ((*s == 'i' || *s == 'I') && (s[1] == 'b' || s[1] == 'B'))
			s += 2;
		else if (*s == 'b' || *s == 'B')
			s++;
	} else if (*s == 'b' || *s == 'B') {
		s++;
	}
	if (*s)
		return -EINVAL;
	if (unit == 1 && d.nfrac)
		return -EINVAL;	/* fractional bytes */

	err = decimal_scale(&d, unit, UINT64_MAX, &v);
	if (err)
		return err;
	*out = v;
	return 0;
}

int gr_parse_duration_ns(const char *s, int64_t *out)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{ "",	NSEC_PER_SEC },
		{ "ns", 1 },
		{ "us", 1000 },
		{ "\xc2\xb5s", 1000 },	/* µs */
		{ "ms", 1000000 },
		{ "s",	NSEC_PER_SEC },
		{ "m",	60 * NSEC_PER_SEC },
		{ "h",	3600 * NSEC_PER_SEC },
		{ "d",	SEC_PER_DAY * NSEC_PER_SEC },
	};
	struct decimal d;
	uint64_t v;
	size_t i;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_decimal(&s, &d);
	if (err)
		return err;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(s, units[i].name) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;

	err = decimal_scale(&d, units[i].ns, INT64_MAX, &v);
	if (err)
		return err;
	*out = (int64_t)v;
	return 0;
}

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d.  Cannot
 * fail for any y in int range with m 1..12. */
static int64_t days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	int64_t era;
	unsigned int yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	/* year of era [0, 399], day of year from March 1 [0, 365], day of
	 * era [0, 146096] */
	yoe = (unsigned int)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* Inverse of days_from_civil().  Cannot fail. */
static void civil_from_days(int64_t z, int64_t *y, unsigned int *m,
			    unsigned int *d)
{
	int64_t era;
	unsigned int doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned int)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned int days_in_month(int64_t y, unsigned int m)
{
	static const unsigned char dim[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};

	return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* Reads exactly @n digits at *sp into *v and advances.  Returns 0 on
 * success, -EINVAL if fewer than @n digits are there. */
static int fixed_digits(const char **sp, int n, unsigned int *v)
{
	const char *s = *sp;
	unsigned int r = 0;

	for (int i = 0; i < n; i++, s++) {
		if (!is_digit(*s))
			return -EINVAL;
		r = r * 10 + (unsigned int)(*s - '0');
	}
	*sp = s;
	*v = r;
	return 0;
}

/* Consumes the character @c at *sp.  Returns 0 on success, -EINVAL if
 * something else is there. */
static int expect(const char **sp, char c)
{
	if (**sp != c)
		return -EINVAL;
	(*sp)++;
	return 0;
}

/* The fields of a written date and time, before a zone is applied. */
struct civil {
	unsigned int year, mon, day, hh, mi, ss;
	int64_t frac;		/* ns */
	int zoned;		/* an offset or Z was given */
	int64_t off;		/* seconds east of UTC, when zoned */
};

/* Parses "HH:MM[:SS[.fffffffff]]" at *sp into @c and advances. Returns 0
 * on success, -EINVAL on bad syntax. */
static int parse_clock(const char **sp, struct civil *c)
{
	const char *s = *sp;
	int nfrac = 0;

	c->ss = 0;
	c->frac = 0;
	if (fixed_digits(&s, 2, &c->hh) || expect(&s, ':') ||
	    fixed_digits(&s, 2, &c->mi))
		return -EINVAL;
	if (*s == ':') {
		s++;
		if (fixed_digits(&s, 2, &c->ss))
			return -EINVAL;
		if (*s == '.') {
			s++;
			for (; is_digit(*s); s++, nfrac++) {
				if (nfrac == 9)
					return -EINVAL;
				c->frac = c->frac * 10 + (*s - '0');
			}
			if (nfrac == 0)
				return -EINVAL;
			for (int i = nfrac; i < 9; i++)
				c->frac *= 10;
		}
	}
	*sp = s;
	return 0;
}

/* Parses "YYYY-MM-DD[(T|t| )HH:MM[:SS[.f]][Z|z|+hh:mm|-hh:mm]]" into @c:
 * RFC 3339, and the forms systemd.time(7) reads as local time (no zone,
 * seconds optional, a date alone is its midnight).  Returns 0 on
 * success, -EINVAL on bad syntax or field ranges. */
static int parse_civil(const char *s, struct civil *c)
{
	unsigned int oh = 0, om = 0;

	memset(c, 0, sizeof(*c));
	if (fixed_digits(&s, 4, &c->year) || expect(&s, '-') ||
	    fixed_digits(&s, 2, &c->mon) || expect(&s, '-') ||
	    fixed_digits(&s, 2, &c->day))
		return -EINVAL;
	if (*s) {
		if (*s != 'T' && *s != 't' && *s != ' ')
			return -EINVAL;
		s++;
		if (parse_clock(&s, c))
			return -EINVAL;
		if (*s == 'Z' || *s == 'z') {
			s++;
			c->zoned = 1;
		} else if (*s == '+' || *s == '-') {
			int sign = *s == '-' ? -1 : 1;

			s++;
			if (fixed_digits(&s, 2, &oh) || expect(&s, ':') ||
			    fixed_digits(&s, 2, &om))
				return -EINVAL;
			if (oh > 23 || om > 59)
				return -EINVAL;
			c->zoned = 1;
			c->off = sign * (int64_t)(oh * 3600 + om * 60);
		}
		if (*s)
			return -EINVAL;
	}
	if (c->mon < 1 || c->mon > 12 || c->day < 1 ||
	    c->day > days_in_month(c->year, c->mon) ||
	    c->hh > 23 || c->mi > 59 || c->ss > 60)
		return -EINVAL;
	return 0;
}

/* Whole seconds and ns into ns since the epoch.  Returns 0 on success,
 * -ERANGE if it does not fit in int64 ns. */
static int secs_to_ns(int64_t secs, int64_t frac, int64_t *out)
{
	int64_t ns;

	/* borrow a second so the lowest instant (INT64_MIN) is reachable */
	if (secs < 0 && frac > 0) {
		secs++;
		frac -= NSEC_PER_SEC;
	}
	if (__builtin_mul_overflow(secs, NSEC_PER_SEC, &ns) ||
	    __builtin_add_overflow(ns, frac, &ns))
		return -ERANGE;
	*out = ns;
	return 0;
}

/* The local wall time in @tm (TZ's rules) as seconds since the epoch.
 * mktime() settles DST itself (tm_isdst -1): a time in the spring gap
 * moves forward, one in the autumn overlap takes the first.  Returns 0
 * on success, -ERANGE if the C library cannot represent it. */
static int local_secs(struct tm *tm, int64_t *secs)
{
	time_t t;

	tm->tm_isdst = -1;
	errno = 0;
	t = mktime(tm);
	if (t == (time_t)-1 && errno)
		return -ERANGE;
	*secs = (int64_t)t;
	return 0;
}

/* Converts @c to ns since the epoch: by its offset when zoned, else as
 * local time.  Returns 0, or -ERANGE. */
static int civil_to_ns(const struct civil *c, int64_t *out)
{
	int64_t secs;

	if (c->zoned) {
		/* local wall time minus its offset is UTC; cannot overflow */
		secs = days_from_civil(c->year, c->mon, c->day) * SEC_PER_DAY +
		       c->hh * 3600 + c->mi * 60 + c->ss - c->off;
	} else {
		struct tm tm = {
			.tm_year = (int)c->year - 1900, .tm_mon = (int)c->mon - 1,
			.tm_mday = (int)c->day, .tm_hour = (int)c->hh,
			.tm_min = (int)c->mi, .tm_sec = (int)c->ss,
		};

		if (local_secs(&tm, &secs))
			return -ERANGE;
	}
	return secs_to_ns(secs, c->frac, out);
}

/* Parses a span as systemd.time(7) writes one: components "<number>
 * [unit]" run together or apart ("1h30m", "1h 30min", "2 days"); a bare
 * number (one component only) is seconds.  Returns 0 on success,
 * -EINVAL on bad syntax, -ERANGE above INT64_MAX ns. */
static int parse_span(const char *s, int64_t *out)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{ "nsec", 1 }, { "ns", 1 },
		{ "usec", 1000 }, { "us", 1000 }, { "\xc2\xb5s", 1000 },
		{ "msec", 1000000 }, { "ms", 1000000 },
		{ "seconds", NSEC_PER_SEC }, { "second", NSEC_PER_SEC },
		{ "secs", NSEC_PER_SEC }, { "sec", NSEC_PER_SEC },
		{ "s", NSEC_PER_SEC },
		{ "minutes", 60 * NSEC_PER_SEC }, { "minute", 60 * NSEC_PER_SEC },
		{ "mins", 60 * NSEC_PER_SEC }, { "min", 60 * NSEC_PER_SEC },
		{ "m", 60 * NSEC_PER_SEC },
		{ "hours", 3600 * NSEC_PER_SEC }, { "hour", 3600 * NSEC_PER_SEC },
		{ "hrs", 3600 * NSEC_PER_SEC }, { "hr", 3600 * NSEC_PER_SEC },
		{ "h", 3600 * NSEC_PER_SEC },
		{ "days", SEC_PER_DAY * NSEC_PER_SEC },
		{ "day", SEC_PER_DAY * NSEC_PER_SEC },
		{ "d", SEC_PER_DAY * NSEC_PER_SEC },
		{ "weeks", 7 * SEC_PER_DAY * NSEC_PER_SEC },
		{ "week", 7 * SEC_PER_DAY * NSEC_PER_SEC },
		{ "w", 7 * SEC_PER_DAY * NSEC_PER_SEC },
	};
	uint64_t total = 0;
	int n = 0, bare = 0;

	while (*s) {
		struct decimal d;
		uint64_t unit = 0, v;
		size_t len = 0;

		if (parse_decimal(&s, &d))
			return -EINVAL;
		while (*s == ' ')
			s++;
		/* the longest unit name that ends where letters end */
		size_t word = 0;
		while ((s[word] >= 'a' && s[word] <= 'z') ||
		       (s[word] >= 'A' && s[word] <= 'Z') ||
		       (unsigned char)s[word] >= 0x80)
			word++;
		for (size_t i = 0; word && i < sizeof(units) / sizeof(units[0]);
		     i++) {
			len = strlen(units[i].name);
			if (len == word && strncasecmp(s, units[i].name, len) == 0) {
				unit = units[i].ns;
				break;
			}
		}
		if (word && !unit)
			return -EINVAL;
		if (!word) {
			unit = NSEC_PER_SEC;
			bare = 1;
		}
		s += word;
		while (*s == ' ')
			s++;
		int err = decimal_scale(&d, unit, INT64_MAX, &v);
		if (err)
			return err;
		if (v > (uint64_t)INT64_MAX - total)
			return -ERANGE;
		total += v;
		n++;
	}
	if (n == 0 || (bare && n > 1))
		return -EINVAL;
	*out = (int64_t)total;
	return 0;
}

/* "@SECONDS[.fraction]": seconds since the epoch.  Returns 0, -EINVAL or
 * -ERANGE. */
static int parse_epoch(const char *s, int64_t *out)
{
	struct decimal d;
	uint64_t v;
	int err;

	if (parse_decimal(&s, &d) || *s)
		return -EINVAL;
	err = decimal_scale(&d, NSEC_PER_SEC, INT64_MAX, &v);
	if (err)
		return err;
	*out = (int64_t)v;
	return 0;
}

/* "today", "yesterday", "tomorrow": the local midnight @days from that of
 * @now_ns.  Returns 0, or -ERANGE. */
static int local_midnight(int64_t now_ns, int days, int64_t *out)
{
	time_t t = (time_t)(now_ns / NSEC_PER_SEC -
			    (now_ns % NSEC_PER_SEC < 0));
	struct tm tm;
	int64_t secs;

	if (!localtime_r(&t, &tm))
		return -ERANGE;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mday += days;
	if (local_secs(&tm, &secs))
		return -ERANGE;
	return secs_to_ns(secs, 0, out);
}

/* "HH:MM[:SS[.f]]" alone: that time today, local.  Returns 0, -EINVAL or
 * -ERANGE. */
static int parse_today_at(const char *s, int64_t now_ns, int64_t *out)
{
	time_t t = (time_t)(now_ns / NSEC_PER_SEC -
			    (now_ns % NSEC_PER_SEC < 0));
	struct civil c = { 0 };
	struct tm tm;
	int64_t secs;

	if (parse_clock(&s, &c) || *s || c.hh > 23 || c.mi > 59 || c.ss > 60)
		return -EINVAL;
	if (!localtime_r(&t, &tm))
		return -ERANGE;
	tm.tm_hour = (int)c.hh;
	tm.tm_min = (int)c.mi;
	tm.tm_sec = (int)c.ss;
	if (local_secs(&tm, &secs))
		return -ERANGE;
	return secs_to_ns(secs, c.frac, out);
}

int gr_parse_time(const char *s, int64_t now_ns, int64_t *out_ns)
{
	static const struct {
		const char *name;
		int days;
	} days[] = { { "today", 0 }, { "yesterday", -1 }, { "tomorrow", 1 } };
	int64_t d, r;
	int err, sign = -1;

	if (!s || !*s)
		return -EINVAL;
	if (strcasecmp(s, "now") == 0) {
		*out_ns = now_ns;
		return 0;
	}
	for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++)
		if (strcasecmp(s, days[i].name) == 0)
			return local_midnight(now_ns, days[i].days, out_ns);
	if (s[0] == '@')
		return parse_epoch(s + 1, out_ns);
	/* "YYYY-" can only start a date */
	if (is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) &&
	    is_digit(s[3]) && s[4] == '-') {
		struct civil c;

		err = parse_civil(s, &c);
		return err ? err : civil_to_ns(&c, out_ns);
	}
	if (is_digit(s[0]) && is_digit(s[1]) && s[2] == ':')
		return parse_today_at(s, now_ns, out_ns);

	/* A span: ago unless it starts with '+' ("-2h", "2h", "2h ago") */
	char span[128];
	size_t n = strlen(s);

	if (*s == '+' || *s == '-') {
		sign = *s == '+' ? 1 : -1;
		s++;
		n--;
	}
	if (n > 4 && strcasecmp(s + n - 4, " ago") == 0) {
		if (sign > 0)
			return -EINVAL;
		n -= 4;
	}
	if (n == 0 || n >= sizeof(span) || *s == ' ' || s[n - 1] == ' ')
		return -EINVAL;
	memcpy(span, s, n);
	span[n] = '\0';
	err = parse_span(span, &d);
	if (err)
		return err;
	if (sign > 0 ? __builtin_add_overflow(now_ns, d, &r) :
		       __builtin_sub_overflow(now_ns, d, &r))
		return -ERANGE;
	*out_ns = r;
	return 0;
}

int gr_format_time(int64_t ns, char *buf, size_t len)
{
	int64_t secs, frac, days, sod, year;
	unsigned int mon, day;
	int n;

	secs = ns / NSEC_PER_SEC;
	frac = ns % NSEC_PER_SEC;
	if (frac < 0) {
		frac += NSEC_PER_SEC;
		secs--;
	}
	days = secs / SEC_PER_DAY;
	sod = secs % SEC_PER_DAY;
	if (sod < 0) {
		sod += SEC_PER_DAY;
		days--;
	}
	civil_from_days(days, &year, &mon, &day);

	n = snprintf(buf, len, "%04lld-%02u-%02uT%02u:%02u:%02u.%09lldZ",
		     (long long)year, mon, day, (unsigned int)(sod / 3600),
		     (unsigned int)(sod / 60 % 60), (unsigned int)(sod % 60),
		     (long long)frac);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}

int gr_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
