/* output.c - print a statement's rows as table, CSV, TSV, JSON, JSONL or
 * lines.
 *
 * Every row is rendered into a growable byte buffer and written with one
 * fwrite(), so a row is either printed whole or not at all and write
 * errors are seen where they happen.  The table format needs column
 * widths before its first line: it renders the first
 * GR_TABLE_SIZING_ROWS rows' cells into one arena plus an array of cell
 * records, sizes the columns from them, prints them, and then prints each
 * later row as it comes, widening a column for a wider value from that
 * row on and never reflowing what is printed.  So memory stays flat however
 * many rows a query returns (a buffered table of 200k rows took 194 MB).
 *
 * Times and durations (query/timefmt.h: by column name and value type)
 * are written as the time format says: ISO 8601 and units for a person,
 * by default in table and line; ns as recorded in the data formats.
 *
 * Text is treated as UTF-8 and decoded with the "maximal subpart" rule of
 * Unicode chapter 3, so one bad sequence becomes one replacement: U+FFFD
 * in JSON, \xHH escapes for each of its bytes in the terminal formats.
 * CSV passes bytes through untouched, as a data format should.
 */
#include "query/output.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BAD_CP GR_UTF8_BAD

static const char *const fmt_names[] = {
	[GR_FMT_TABLE] = "table",
	[GR_FMT_CSV] = "csv",
	[GR_FMT_JSON] = "json",
	[GR_FMT_JSONL] = "jsonl",
	[GR_FMT_LINE] = "line",
	[GR_FMT_TSV] = "tsv",
};

#define N_FORMATS (sizeof(fmt_names) / sizeof(fmt_names[0]))

int gr_format__parse(const char *name, enum gr_format *out)
{
	size_t i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < N_FORMATS; i++) {
		if (strcasecmp(name, fmt_names[i]) == 0) {
			*out = (enum gr_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *gr_format__name(enum gr_format f)
{
	if ((size_t)f >= N_FORMATS)
		return NULL;
	return fmt_names[f];
}

/* A growable byte buffer; after a failed allocation it drops all further
 * writes and keeps oom set, so callers check once per row. */
struct sbuf {
	char *p;
	size_t len, cap;
	int oom;
};

/* Makes room for @n more bytes.  Returns 0 on success, -1 when out of
 * memory (then oom is set). */
static int sb_reserve(struct sbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return -1;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void sb_put(struct sbuf *b, const void *p, size_t n)
{
	if (n == 0 || sb_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_putc(struct sbuf *b, char c)
{
	if (sb_reserve(b, 1))
		return;
	b->p[b->len++] = c;
}

static void sb_fill(struct sbuf *b, char c, size_t n)
{
	if (n == 0 || sb_reserve(b, n))
		return;
	memset(b->p + b->len, c, n);
	b->len += n;
}

static void sb_hex(struct sbuf *b, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (n > SIZE_MAX / 2 || sb_reserve(b, 2 * n))
		return;
	for (i = 0; i < n; i++) {
		b->p[b->len++] = digits[p[i] >> 4];
		b->p[b->len++] = digits[p[i] & 0xf];
	}
}

/* Decodes one UTF-8 sequence at @s (@n > 0 bytes left).  Returns the bytes
 * consumed; *cp is the code point, or BAD_CP for an ill-formed sequence,
 * in which case the return is the length of its maximal subpart (>= 1). */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char b0 = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;
	uint32_t c;

	if (b0 < 0x80) {
		*cp = b0;
		return 1;
	}
	*cp = BAD_CP;
	if (b0 < 0xc2 || b0 > 0xf4)
		return 1;
	need = b0 < 0xe0 ? 1 : b0 < 0xf0 ? 2 : 3;
	if (b0 == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (b0 == 0xed)
		hi = 0x9f;	/* surrogates */
	else if (b0 == 0xf0)
		lo = 0x90;	/* overlong */
	else if (b0 == 0xf4)
		hi = 0x8f;	/* above U+10FFFF */
	c = b0 & (0x3fu >> need);
	for (i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi)
			return i;
		c = c << 6 | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = c;
	return need + 1;
}

size_t gr_output__utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	return utf8_next(s, n, cp);
}

/* Appends @s for a terminal: valid UTF-8 as is, control characters and
 * ill-formed bytes as visible escapes so a value stays on one line.
 * Returns the width appended, in code points. */
static size_t sb_display(struct sbuf *b, const unsigned char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i = 0, width = 0;

	while (i < n) {
		uint32_t cp;
		size_t k = utf8_next(s + i, n - i, &cp);
		char esc[8];

		if (cp == BAD_CP) {
			for (size_t j = 0; j < k; j++) {
				esc[0] = '\\';
				esc[1] = 'x';
				esc[2] = digits[s[i + j] >> 4];
				esc[3] = digits[s[i + j] & 0xf];
				sb_put(b, esc, 4);
				width += 4;
			}
		} else if (cp == '\n' || cp == '\t' || cp == '\r') {
			esc[0] = '\\';
			esc[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
			sb_put(b, esc, 2);
			width += 2;
		} else if (cp < 0x20 || cp == 0x7f) {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = digits[cp >> 4];
			esc[3] = digits[cp & 0xf];
			sb_put(b, esc, 4);
			width += 4;
		} else if (cp >= 0x80 && cp < 0xa0) {	/* C1 controls */
			memcpy(esc, "\\u00", 4);
			esc[4] = digits[cp >> 4];
			esc[5] = digits[cp & 0xf];
			sb_put(b, esc, 6);
			width += 6;
		} else {
			sb_put(b, s + i, k);
			width++;
		}
		i += k;
	}
	return width;
}

/* Appends @s as a quoted JSON string; ill-formed UTF-8 becomes U+FFFD. */
static void sb_json_str(struct sbuf *b, const unsigned char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i = 0;

	sb_putc(b, '"');
	while (i < n) {
		uint32_t cp;
		size_t k = utf8_next(s + i, n - i, &cp);
		char esc[6];

		switch (cp) {
		case '"':  sb_put(b, "\\\"", 2); break;
		case '\\': sb_put(b, "\\\\", 2); break;
		case '\n': sb_put(b, "\\n", 2); break;
		case '\r': sb_put(b, "\\r", 2); break;
		case '\t': sb_put(b, "\\t", 2); break;
		case '\b': sb_put(b, "\\b", 2); break;
		case '\f': sb_put(b, "\\f", 2); break;
		case BAD_CP: sb_put(b, "\xef\xbf\xbd", 3); break;
		default:
			if (cp < 0x20) {
				memcpy(esc, "\\u00", 4);
				esc[4] = digits[cp >> 4];
				esc[5] = digits[cp & 0xf];
				sb_put(b, esc, 6);
			} else {
				sb_put(b, s + i, k);
			}
		}
		i += k;
	}
	sb_putc(b, '"');
}

/* Appends a CSV field, quoted when RFC 4180 needs it or when leading or
 * trailing blanks would be lost to trimming readers.  Empty text is
 * written as "" so it differs from NULL, which is written as nothing. */
static void sb_csv(struct sbuf *b, const char *s, size_t n)
{
	int quote = n == 0 || s[0] == ' ' || s[0] == '\t' ||
		    s[n - 1] == ' ' || s[n - 1] == '\t' ||
		    memchr(s, ',', n) || memchr(s, '"', n) ||
		    memchr(s, '\r', n) || memchr(s, '\n', n);
	size_t i, start = 0;

	if (!quote) {
		sb_put(b, s, n);
		return;
	}
	sb_putc(b, '"');
	for (i = 0; i < n; i++) {
		if (s[i] == '"') {
			sb_put(b, s + start, i + 1 - start);
			sb_putc(b, '"');
			start = i + 1;
		}
	}
	sb_put(b, s + start, n - start);
	sb_putc(b, '"');
}

/* Appends a TSV field: tab, newline, carriage return and backslash as
 * \t \n \r \\, so every row is one line and every field splits at tabs. */
static void sb_tsv(struct sbuf *b, const char *s, size_t n)
{
	size_t i, start = 0;

	for (i = 0; i < n; i++) {
		char esc = s[i] == '\t' ? 't' : s[i] == '\n' ? 'n' :
			   s[i] == '\r' ? 'r' : s[i] == '\\' ? '\\' : 0;

		if (!esc)
			continue;
		sb_put(b, s + start, i - start);
		sb_putc(b, '\\');
		sb_putc(b, esc);
		start = i + 1;
	}
	sb_put(b, s + start, n - start);
}

/* Appends a REAL as the shortest JSON number that reads back to the same
 * double, or null for NaN and the infinities. */
static void sb_json_real(struct sbuf *b, double v)
{
	char num[32];

	if (v != v || v > DBL_MAX || v < -DBL_MAX) {
		sb_puts(b, "null");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(num, sizeof(num), "%.*g", prec, v);
		if (strtod(num, NULL) == v)
			break;
	}
	sb_puts(b, num);
}

/* Output state of one gr_output__run() call. */
struct out {
	sqlite3_stmt *st;
	enum gr_format fmt;
	enum gr_time_format time; /* resolved: never GR_TIME_DEFAULT */
	int no_header;
	size_t fit;		/* table: cut lines to this width; 0: never */
	FILE *f;
	int ncol;
	size_t nrows;
	struct sbuf row;	/* the row being rendered */
	int rc;			/* first failure, SQLITE_OK until then */
	char *msg;		/* its message, malloc'd */
	/* names escaped for the format, and their widths (line, table) */
	struct sbuf names;
	size_t *name_off, *name_len, *name_width;
	size_t name_max;
	enum gr_col_kind *kinds;	/* per column: time, duration, plain */
	/* table: rendered cells of the rows not yet printed */
	struct sbuf arena;
	struct cell *cells;
	size_t ncells, cellcap;
	size_t *width;		/* table: column widths, once sized */
	int sized;		/* header printed, rows stream */
};

struct cell {
	size_t off, len, width;
	int num;		/* INTEGER or REAL: right-aligned */
	int null;
};

/* Records the first failure with a printf-style message.  Returns rc. */
static int fail(struct out *o, int rc, const char *fmt, const char *arg)
{
	if (o->rc == SQLITE_OK) {
		int n = snprintf(NULL, 0, fmt, arg);

		o->rc = rc;
		o->msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
		if (o->msg)
			snprintf(o->msg, (size_t)n + 1, fmt, arg);
	}
	return o->rc;
}

static int fail_nomem(struct out *o)
{
	return fail(o, SQLITE_NOMEM, "%s", "out of memory");
}

/* Writes @n bytes to the output.  Returns 0 on success, else the failure
 * recorded (SQLITE_IOERR). */
static int emit(struct out *o, const void *p, size_t n)
{
	errno = 0;
	if (n && fwrite(p, 1, n, o->f) != n)
		return fail(o, SQLITE_IOERR, "error writing output: %s",
			    strerror(errno ? errno : EIO));
	return 0;
}

/* Writes the rendered row and empties the buffer.  Returns 0 on success,
 * else the failure recorded. */
static int emit_row(struct out *o)
{
	int rc;

	if (o->row.oom)
		return fail_nomem(o);
	rc = emit(o, o->row.p, o->row.len);
	o->row.len = 0;
	return rc;
}

/* Renders column names once, escaped for the format.  Returns 0 on
 * success, else the failure recorded. */
static int prep_names(struct out *o)
{
	int i;

	o->name_off = calloc((size_t)o->ncol, sizeof(size_t));
	o->name_len = calloc((size_t)o->ncol, sizeof(size_t));
	o->name_width = calloc((size_t)o->ncol, sizeof(size_t));
	o->kinds = calloc((size_t)o->ncol, sizeof(*o->kinds));
	if (!o->name_off || !o->name_len || !o->name_width || !o->kinds)
		return fail_nomem(o);
	for (i = 0; i < o->ncol; i++) {
		const char *name = sqlite3_column_name(o->st, i);
		size_t n;

		if (!name)
			name = "";
		n = strlen(name);

		o->kinds[i] = gr_col_kind__of(name);
		o->name_off[i] = o->names.len;
		switch (o->fmt) {
		case GR_FMT_JSON:
		case GR_FMT_JSONL:
			sb_json_str(&o->names, (const unsigned char *)name, n);
			break;
		case GR_FMT_CSV:
			sb_csv(&o->names, name, n);
			break;
		case GR_FMT_TSV:
			sb_tsv(&o->names, name, n);
			break;
		default:
			o->name_width[i] = sb_display(&o->names,
						(const unsigned char *)name, n);
			break;
		}
		o->name_len[i] = o->names.len - o->name_off[i];
		if (o->name_width[i] > o->name_max)
			o->name_max = o->name_width[i];
	}
	if (o->names.oom)
		return fail_nomem(o);
	return 0;
}

static const char *name_of(struct out *o, int i)
{
	return o->names.p ? o->names.p + o->name_off[i] : "";
}

/* What timed() wrote. */
enum timed {
	TIMED_NO,	/* a plain value: the caller writes it as it is */
	TIMED_TEXT,	/* text: ISO 8601, or a duration with its unit */
	TIMED_NUMBER,	/* a number: seconds */
};

/* Writes column @i of the current row into @buf as the time format says,
 * if it is a time (an INTEGER) or a duration (an INTEGER or REAL, rounded
 * to the ns).  Returns what it wrote. */
static enum timed timed(struct out *o, int i, char *buf, size_t len)
{
	enum gr_col_kind kind = o->kinds[i];
	int type;
	int64_t ns;

	if (kind == GR_COL_PLAIN || o->time == GR_TIME_NS)
		return TIMED_NO;
	type = sqlite3_column_type(o->st, i);
	if (type == SQLITE_INTEGER) {
		ns = sqlite3_column_int64(o->st, i);
	} else if (type == SQLITE_FLOAT && kind == GR_COL_DURATION) {
		double d = sqlite3_column_double(o->st, i);

		if (!(d > -9.2e18 && d < 9.2e18))
			return TIMED_NO;	/* NaN, or no int64 ns */
		ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	} else {
		return TIMED_NO;
	}
	if (o->time == GR_TIME_S) {
		gr_timefmt__secs(ns, buf, len);
		return TIMED_NUMBER;
	}
	if (kind == GR_COL_TIME)
		gr_timefmt__iso(ns, o->time == GR_TIME_LOCAL, buf, len);
	else
		gr_timefmt__dur(ns, buf, len);
	return TIMED_TEXT;
}

/* Appends column @i of the current row for a text format (table, line):
 * numbers in SQLite's own rendering, times and durations as the time
 * format says, text escaped, blobs as hex, NULL as nothing.  Returns the
 * display width; *num is set for numbers and durations (right-aligned). */
static size_t put_display(struct out *o, struct sbuf *b, int i, int *num)
{
	int type = sqlite3_column_type(o->st, i);
	const unsigned char *s;
	size_t n, len0 = b->len;
	char tbuf[GR_TIMEFMT_BUF];
	enum timed t = timed(o, i, tbuf, sizeof(tbuf));

	*num = 0;
	if (t != TIMED_NO) {
		*num = t == TIMED_NUMBER || o->kinds[i] == GR_COL_DURATION;
		return sb_display(b, (const unsigned char *)tbuf, strlen(tbuf));
	}
	switch (type) {
	case SQLITE_NULL:
		return 0;
	case SQLITE_BLOB:
		s = sqlite3_column_blob(o->st, i);
		n = (size_t)sqlite3_column_bytes(o->st, i);
		sb_hex(b, s, n);
		return 2 * n;
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		*num = 1;
		s = sqlite3_column_text(o->st, i);
		if (!s) {
			b->oom = 1;
			return 0;
		}
		sb_puts(b, (const char *)s);
		return b->len - len0;
	default:
		s = sqlite3_column_text(o->st, i);
		n = (size_t)sqlite3_column_bytes(o->st, i);
		if (!s) {
			b->oom = 1;
			return 0;
		}
		return sb_display(b, s, n);
	}
}

/* Appends column @i of the current row as a JSON value. */
static void put_json(struct out *o, struct sbuf *b, int i)
{
	const unsigned char *s;
	size_t n;
	char num[32], tbuf[GR_TIMEFMT_BUF];

	switch (timed(o, i, tbuf, sizeof(tbuf))) {
	case TIMED_TEXT:
		sb_json_str(b, (const unsigned char *)tbuf, strlen(tbuf));
		return;
	case TIMED_NUMBER:
		sb_puts(b, tbuf);
		return;
	case TIMED_NO:
		break;
	}
	switch (sqlite3_column_type(o->st, i)) {
	case SQLITE_NULL:
		sb_puts(b, "null");
		break;
	case SQLITE_INTEGER:
		snprintf(num, sizeof(num), "%" PRId64,
			 (int64_t)sqlite3_column_int64(o->st, i));
		sb_puts(b, num);
		break;
	case SQLITE_FLOAT:
		sb_json_real(b, sqlite3_column_double(o->st, i));
		break;
	case SQLITE_BLOB:
		s = sqlite3_column_blob(o->st, i);
		n = (size_t)sqlite3_column_bytes(o->st, i);
		sb_putc(b, '"');
		sb_hex(b, s, n);
		sb_putc(b, '"');
		break;
	default:
		s = sqlite3_column_text(o->st, i);
		n = (size_t)sqlite3_column_bytes(o->st, i);
		if (!s) {
			b->oom = 1;
			break;
		}
		sb_json_str(b, s, n);
		break;
	}
}

/* Appends column @i of the current row as a CSV field, or with @tsv a
 * TSV one. */
static void put_csv(struct out *o, struct sbuf *b, int i, int tsv)
{
	const unsigned char *s;
	size_t n;
	char tbuf[GR_TIMEFMT_BUF];

	if (timed(o, i, tbuf, sizeof(tbuf)) != TIMED_NO) {
		sb_puts(b, tbuf);	/* nothing in it to quote or escape */
		return;
	}
	switch (sqlite3_column_type(o->st, i)) {
	case SQLITE_NULL:
		break;
	case SQLITE_BLOB:
		s = sqlite3_column_blob(o->st, i);
		sb_hex(b, s, (size_t)sqlite3_column_bytes(o->st, i));
		break;
	default:
		s = sqlite3_column_text(o->st, i);
		n = (size_t)sqlite3_column_bytes(o->st, i);
		if (!s) {
			b->oom = 1;
			break;
		}
		if (tsv)
			sb_tsv(b, (const char *)s, n);
		else
			sb_csv(b, (const char *)s, n);
		break;
	}
}

/* Renders the CSV or TSV header row into the row buffer, unless
 * --no-header. */
static void csv_header(struct out *o)
{
	int tsv = o->fmt == GR_FMT_TSV;

	if (o->no_header)
		return;
	for (int i = 0; i < o->ncol; i++) {
		if (i)
			sb_putc(&o->row, tsv ? '\t' : ',');
		sb_put(&o->row, name_of(o, i), o->name_len[i]);
	}
	sb_puts(&o->row, tsv ? "\n" : "\r\n");
}

static void row_json(struct out *o)
{
	struct sbuf *b = &o->row;
	int i;

	sb_putc(b, '{');
	for (i = 0; i < o->ncol; i++) {
		if (i)
			sb_putc(b, ',');
		sb_put(b, name_of(o, i), o->name_len[i]);
		sb_putc(b, ':');
		put_json(o, b, i);
	}
	sb_putc(b, '}');
}

/* Renders and writes the current row.  Returns 0 on success, else the
 * failure recorded. */
static int print_row(struct out *o)
{
	struct sbuf *b = &o->row;
	int i, num;

	switch (o->fmt) {
	case GR_FMT_CSV:
	case GR_FMT_TSV: {
		int tsv = o->fmt == GR_FMT_TSV;

		if (o->nrows == 0)
			csv_header(o);
		for (i = 0; i < o->ncol; i++) {
			if (i)
				sb_putc(b, tsv ? '\t' : ',');
			put_csv(o, b, i, tsv);
		}
		sb_puts(b, tsv ? "\n" : "\r\n");
		break;
	}
	case GR_FMT_JSON:
		sb_puts(b, o->nrows ? ",\n" : "[");
		row_json(o);
		break;
	case GR_FMT_JSONL:
		row_json(o);
		sb_putc(b, '\n');
		break;
	case GR_FMT_LINE:
		if (o->nrows)
			sb_putc(b, '\n');
		for (i = 0; i < o->ncol; i++) {
			sb_fill(b, ' ', o->name_max - o->name_width[i]);
			sb_put(b, name_of(o, i), o->name_len[i]);
			sb_put(b, " = ", 3);
			put_display(o, b, i, &num);
			sb_putc(b, '\n');
		}
		break;
	default:
		break;
	}
	o->nrows++;
	return emit_row(o);
}

/* Appends a cell record.  Returns 0 on success, else the failure. */
static int add_cell(struct out *o, size_t off, size_t width, int num,
		    int null)
{
	if (o->ncells == o->cellcap) {
		size_t cap = o->cellcap ? o->cellcap * 2 : 64;
		struct cell *c;

		if (cap > SIZE_MAX / sizeof(*c))
			return fail_nomem(o);
		c = realloc(o->cells, cap * sizeof(*c));
		if (!c)
			return fail_nomem(o);
		o->cells = c;
		o->cellcap = cap;
	}
	o->cells[o->ncells++] = (struct cell){
		.off = off, .len = o->arena.len - off, .width = width,
		.num = num, .null = null,
	};
	return 0;
}

/* Buffers the current row for the table.  Returns 0 on success, else the
 * failure recorded. */
static int buffer_row(struct out *o)
{
	int i, num;

	for (i = 0; i < o->ncol; i++) {
		size_t off = o->arena.len, w;
		int null = sqlite3_column_type(o->st, i) == SQLITE_NULL;

		w = put_display(o, &o->arena, i, &num);
		if (o->arena.oom)
			return fail_nomem(o);
		if (add_cell(o, off, w, num, null))
			return o->rc;
	}
	o->nrows++;
	return 0;
}

/* Appends one table cell padded to @width; moves *end past its content
 * if it has any, so the line's trailing padding can be cut. */
static void table_cell(struct sbuf *b, const char *p, size_t len,
		       size_t cw, size_t width, int right, size_t *end)
{
	if (right)
		sb_fill(b, ' ', width - cw);
	sb_put(b, p, len);
	if (len)
		*end = b->len;
	if (!right)
		sb_fill(b, ' ', width - cw);
}

/* Ends the table line in the row buffer: cuts its trailing padding at
 * @end, fits it to o->fit columns (the cut marked with "…"), adds the
 * newline and writes it.  Every byte in a line is printable by now
 * (sb_display escaped the rest), so a column is a code point.  Returns 0
 * on success, else the failure recorded. */
static int table_line(struct out *o, size_t end)
{
	struct sbuf *b = &o->row;

	if (!b->oom)
		b->len = end;	/* no trailing padding */
	if (o->fit && !b->oom) {
		size_t i = 0, cols = 0, cut = 0;

		while (i < b->len) {
			uint32_t cp;

			if (cols == o->fit - 1)
				cut = i;
			i += utf8_next((const unsigned char *)b->p + i,
				       b->len - i, &cp);
			cols++;
		}
		if (cols > o->fit) {
			b->len = cut;
			sb_puts(b, "\xe2\x80\xa6");	/* … */
		}
	}
	sb_putc(b, '\n');
	return emit_row(o);
}

/* Prints the buffered cells as rows with the column widths, widening a
 * column where a cell is wider, and empties the buffer.  Returns 0 on
 * success, else the failure. */
static int table_rows(struct out *o)
{
	size_t ncol = (size_t)o->ncol, r, c;
	int rc = 0;

	for (r = 0; r < o->ncells / ncol && !rc; r++) {
		struct cell *row = &o->cells[r * ncol];
		struct sbuf *b = &o->row;
		size_t end = 0;

		for (c = 0; c < ncol; c++)
			if (row[c].width > o->width[c])
				o->width[c] = row[c].width;
		for (c = 0; c < ncol; c++) {
			const char *text = "";

			if (c)
				sb_put(b, "  ", 2);
			if (row[c].len)
				text = o->arena.p + row[c].off;
			table_cell(b, text, row[c].len, row[c].width,
				   o->width[c], row[c].num, &end);
		}
		rc = table_line(o, end);
	}
	o->ncells = 0;
	o->arena.len = 0;
	return rc;
}

/* Sizes the columns from the rows buffered so far, prints the header
 * and those rows; later rows stream through table_rows().  Returns 0 on
 * success, else the failure. */
static int table_start(struct out *o)
{
	size_t ncol = (size_t)o->ncol, r, c;
	int *right, rc = 0;

	o->sized = 1;
	o->width = calloc(ncol, sizeof(*o->width));
	right = calloc(ncol, sizeof(*right));
	if (!o->width || !right) {
		free(right);
		return fail_nomem(o);
	}
	/* a column whose values are all numbers gets a right-aligned header */
	for (c = 0; c < ncol; c++) {
		int seen = 0, all = 1;

		o->width[c] = o->no_header ? 0 : o->name_width[c];
		for (r = 0; r < o->nrows; r++) {
			struct cell *cell = &o->cells[r * ncol + c];

			if (cell->width > o->width[c])
				o->width[c] = cell->width;
			if (!cell->null) {
				seen = 1;
				all &= cell->num;
			}
		}
		right[c] = seen && all;
	}
	for (r = 0; r < 2 && !o->no_header && !rc; r++) {
		struct sbuf *b = &o->row;
		size_t end = 0;

		for (c = 0; c < ncol; c++) {
			if (c)
				sb_put(b, "  ", 2);
			if (r == 0) {
				table_cell(b, name_of(o, (int)c),
					   o->name_len[c], o->name_width[c],
					   o->width[c], right[c], &end);
			} else {
				sb_fill(b, '-', o->width[c]);
				if (o->width[c])
					end = b->len;
			}
		}
		rc = table_line(o, end);
	}
	free(right);
	return rc ? rc : table_rows(o);
}

/* Takes the current row into the table: buffered while the columns are
 * being sized, printed at once after.  Returns 0, else the failure. */
static int table_row(struct out *o)
{
	if (buffer_row(o))
		return o->rc;
	if (o->sized)
		return table_rows(o);
	if (o->nrows == GR_TABLE_SIZING_ROWS)
		return table_start(o);
	return 0;
}

int gr_output__run(sqlite3_stmt *stmt, enum gr_format fmt, FILE *out,
		   char **errmsg)
{
	struct gr_output_opts opts = { .fmt = fmt };

	return gr_output__run_opts(stmt, &opts, out, errmsg);
}

int gr_output__run_opts(sqlite3_stmt *stmt, const struct gr_output_opts *opts,
			FILE *out, char **errmsg)
{
	enum gr_format fmt = opts->fmt;
	struct out o = { .st = stmt, .fmt = fmt, .f = out, .time = opts->time,
			 .no_header = opts->no_header };

	if (errmsg)
		*errmsg = NULL;
	if ((size_t)fmt >= N_FORMATS) {
		fail(&o, SQLITE_MISUSE, "%s", "unknown output format");
		goto done;
	}
	if (o.time == GR_TIME_DEFAULT)
		o.time = fmt == GR_FMT_TABLE || fmt == GR_FMT_LINE ?
			 GR_TIME_ISO : GR_TIME_NS;
	/* a line narrower than "x…" cannot show what was cut */
	if (fmt == GR_FMT_TABLE && opts->width > 0)
		o.fit = opts->width < 2 ? 2 : (size_t)opts->width;
	o.ncol = sqlite3_column_count(stmt);
	if (o.ncol > 0 && prep_names(&o))
		goto done;

	for (;;) {
		int rc = sqlite3_step(stmt);

		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			fail(&o, rc, "%s",
			     sqlite3_errmsg(sqlite3_db_handle(stmt)));
			goto done;
		}
		if (o.ncol == 0)
			continue;
		if (fmt == GR_FMT_TABLE ? table_row(&o) : print_row(&o))
			goto done;
	}
	if (o.ncol == 0)
		goto done;

	switch (fmt) {
	case GR_FMT_TABLE:
		if (!o.sized)
			table_start(&o);
		break;
	case GR_FMT_JSON:
		emit(&o, o.nrows ? "]\n" : "[]\n", o.nrows ? 2 : 3);
		break;
	case GR_FMT_CSV:
	case GR_FMT_TSV:
		if (o.nrows == 0) {	/* header only */
			csv_header(&o);
			emit_row(&o);
		}
		break;
	default:
		break;
	}
done:
	errno = 0;
	if (o.rc == SQLITE_OK && fflush(out) != 0)
		fail(&o, SQLITE_IOERR, "error writing output: %s",
		     strerror(errno ? errno : EIO));
	if (o.rc == SQLITE_OK && ferror(out))
		fail(&o, SQLITE_IOERR, "error writing output: %s",
		     strerror(EIO));
	free(o.row.p);
	free(o.names.p);
	free(o.name_off);
	free(o.name_len);
	free(o.name_width);
	free(o.kinds);
	free(o.arena.p);
	free(o.cells);
	free(o.width);
	if (o.rc != SQLITE_OK && errmsg)
		*errmsg = o.msg;
	else
		free(o.msg);
	return o.rc;
}

/* ---- one JSON document ------------------------------------------------- */

void gr_json__init(struct gr_json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

/* Writes what precedes a member: the comma, the indentation, the key. */
static void json_member(struct gr_json *j, const char *key)
{
	if (j->depth && (j->wrote >> j->depth & 1))
		fputc(',', j->f);
	j->wrote |= 1ull << j->depth;
	if (j->pretty && j->depth)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		struct sbuf b = { 0 };
		sb_json_str(&b, (const unsigned char *)key, strlen(key));
		if (b.oom)
			j->err = -ENOMEM;
		else
			fwrite(b.p, 1, b.len, j->f);
		free(b.p);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

void gr_json__begin(struct gr_json *j, const char *key, char kind)
{
	json_member(j, key);
	fputc(kind, j->f);
	if (j->depth < 63)
		j->depth++;
	j->wrote &= ~(1ull << j->depth);
}

void gr_json__end(struct gr_json *j, char kind)
{
	int had = j->wrote >> j->depth & 1;
	if (j->depth)
		j->depth--;
	if (j->pretty && had)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(kind == '[' ? ']' : kind == '{' ? '}' : kind, j->f);
}

void gr_json__str(struct gr_json *j, const char *key, const char *s)
{
	struct sbuf b = { 0 };
	if (!s) {
		gr_json__null(j, key);
		return;
	}
	json_member(j, key);
	sb_json_str(&b, (const unsigned char *)s, strlen(s));
	if (b.oom)
		j->err = -ENOMEM;
	else
		fwrite(b.p, 1, b.len, j->f);
	free(b.p);
}

void gr_json__int(struct gr_json *j, const char *key, int64_t v)
{
	json_member(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void gr_json__bool(struct gr_json *j, const char *key, int v)
{
	json_member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void gr_json__null(struct gr_json *j, const char *key)
{
	json_member(j, key);
	fputs("null", j->f);
}

void gr_json__fixed(struct gr_json *j, const char *key, double v,
		    int decimals)
{
	if (v != v || v > DBL_MAX || v < -DBL_MAX) {
		gr_json__null(j, key);
		return;
	}
	json_member(j, key);
	fprintf(j->f, "%.*f", decimals, v);
}

void gr_json__raw(struct gr_json *j, const char *key, const char *json)
{
	json_member(j, key);
	fputs(json, j->f);
}

int gr_json__finish(struct gr_json *j)
{
	fputc('\n', j->f);
	if (j->err)
		return j->err;
	if (fflush(j->f) != 0 || ferror(j->f))
		return -EIO;
	return 0;
}
