/* parse.c - sizes, durations and timestamps for both programs' arguments.
 *
 * Numbers are split into an integer part and a string of fraction digits
 * and scaled by the unit in integer arithmetic (a Horner pass over the
 * fraction digits gives floor(frac * unit) exactly), so no value depends on
 * double rounding.  Calendar conversion uses the proleptic-Gregorian
 * days-from-civil algorithm on plain integers, so nothing here depends on
 * timegm(), TZ or the C library's locale.
 */
#include "common/parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* Parses an RFC 3339 timestamp.  Returns 0 on success, -EINVAL on bad
 * syntax or field ranges, -ERANGE if it does not fit in int64 ns. */
static int parse_rfc3339(const char *s, int64_t *out)
{
	unsigned int year, mon, day, hh, mi, ss, oh = 0, om = 0;
	int64_t secs, ns, frac = 0, off = 0;
	int nfrac = 0;

	if (fixed_digits(&s, 4, &year) || expect(&s, '-') ||
	    fixed_digits(&s, 2, &mon) || expect(&s, '-') ||
	    fixed_digits(&s, 2, &day))
		return -EINVAL;
	if (*s != 'T' && *s != 't' && *s != ' ')
		return -EINVAL;
	s++;
	if (fixed_digits(&s, 2, &hh) || expect(&s, ':') ||
	    fixed_digits(&s, 2, &mi) || expect(&s, ':') ||
	    fixed_digits(&s, 2, &ss))
		return -EINVAL;
	if (*s == '.') {
		s++;
		for (; is_digit(*s); s++, nfrac++) {
			if (nfrac == 9)
				return -EINVAL;
			frac = frac * 10 + (*s - '0');
		}
		if (nfrac == 0)
			return -EINVAL;
		for (int i = nfrac; i < 9; i++)
			frac *= 10;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s == '-' ? -1 : 1;

		s++;
		if (fixed_digits(&s, 2, &oh) || expect(&s, ':') ||
		    fixed_digits(&s, 2, &om))
			return -EINVAL;
		if (oh > 23 || om > 59)
			return -EINVAL;
		off = sign * (int64_t)(oh * 3600 + om * 60);
	} else {
		return -EINVAL;
	}
	if (*s)
		return -EINVAL;

	if (mon < 1 || mon > 12 || day < 1 || day > days_in_month(year, mon) ||
	    hh > 23 || mi > 59 || ss > 60)
		return -EINVAL;

	/* local wall time minus its offset is UTC; cannot overflow int64 s */
	secs = days_from_civil(year, mon, day) * SEC_PER_DAY +
	       hh * 3600 + mi * 60 + ss - off;
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

int gr_parse_time(const char *s, int64_t now_ns, int64_t *out_ns)
{
	int64_t d, r;
	int err;

	if (!s)
		return -EINVAL;
	if (strcasecmp(s, "now") == 0) {
		*out_ns = now_ns;
		return 0;
	}
	/* "YYYY-" can only start a timestamp; anything else is a duration */
	if (is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) &&
	    is_digit(s[3]) && s[4] == '-')
		return parse_rfc3339(s, out_ns);

	err = gr_parse_duration_ns(s, &d);
	if (err)
		return err;
	if (__builtin_sub_overflow(now_ns, d, &r))
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
