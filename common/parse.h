/* parse.h - command-line value parsers shared by the recorder and gpurec.
 *
 * Sizes, durations and timestamps are parsed here once so both programs
 * agree on the syntax.  Every parser is strict (the whole string must be
 * consumed, no surrounding whitespace) and exact: decimals are handled in
 * integer arithmetic, never through double, so "1.5G" is exactly
 * 1610612736 and "0.1s" exactly 100000000 ns.
 */
#ifndef GR_COMMON_PARSE_H
#define GR_COMMON_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Returns the value of hex digit @c (0-9, a-f, A-F), or -1 if it is not
 * one. */
int gr_hexval(char c);

/* Buffer size that always fits gr_format_time()'s output, NUL included. */
#define GR_TIME_BUF 31

/* Parses a byte count: digits with an optional fraction, then an optional
 * binary multiple K/M/G/T/P/E (1024-based) and an optional "B" or "iB",
 * case-insensitive ("1024", "64K", "64KiB", "1.5G", "100b").  Fractions
 * need a multiple and are truncated to whole bytes.  Returns 0 on success,
 * -EINVAL on malformed input, -ERANGE if the value exceeds UINT64_MAX. */
int gr_parse_size(const char *s, uint64_t *out);

/* Parses a non-negative duration into nanoseconds: a number with an
 * optional fraction and an optional unit ns/us/µs/ms/s/m/h/d
 * (case-insensitive); a bare number is seconds ("90s", "1.5s", "500ms",
 * "3d").  Sub-nanosecond fractions are truncated.  Returns 0 on success,
 * -EINVAL on malformed input, -ERANGE if it exceeds INT64_MAX ns. */
int gr_parse_duration_ns(const char *s, int64_t *out);

/* Parses a point in time into ns since the Unix epoch (UTC), in the forms
 * journalctl --since takes (systemd.time(7)):
 *  - "now"; "today", "yesterday", "tomorrow" (local midnight);
 *  - a span ago: "15m", "-2h", "2h ago", "1h30m", "1h 30min", "90" (a bare
 *    number is seconds); "+1h" is a span ahead of @now_ns;
 *  - "@1795611544[.5]": seconds since the epoch;
 *  - "YYYY-MM-DD[(T| )HH:MM[:SS[.fffffffff]]]" then 'Z' or "+hh:mm" /
 *    "-hh:mm" (RFC 3339), or no zone: local time (TZ), a date alone its
 *    midnight; "HH:MM[:SS]" alone is that time today, local.
 * Second 60 (a leap second) is accepted and lands on the next minute.
 * Returns 0 on success, -EINVAL on malformed input or out-of-range fields,
 * -ERANGE if the result does not fit in int64 ns (outside 1677..2262). */
int gr_parse_time(const char *s, int64_t now_ns, int64_t *out_ns);

/* Formats @ns since the epoch as RFC 3339 UTC with nine fractional digits,
 * "2026-11-22T14:00:00.000000000Z", into @buf of @len bytes (at least
 * GR_TIME_BUF).  Returns 0 on success, -ENOSPC if @buf is too small (it is
 * then left an empty string when @len > 0). */
int gr_format_time(int64_t ns, char *buf, size_t len);

#endif
