/* output.h - result printers for `gpurec sql` and `gpurec report`.
 *
 * One entry point steps a prepared statement to the end and prints every
 * row in the chosen format, so the command owns neither layout nor
 * escaping.  The statement stays the caller's: it is stepped, never reset
 * or finalized.  Times and durations (query/timefmt.h) are written as the
 * options' time format says.
 */
#ifndef GR_QUERY_OUTPUT_H
#define GR_QUERY_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "query/timefmt.h"

enum gr_format {
	GR_FMT_TABLE,	/* aligned columns for a terminal */
	GR_FMT_CSV,	/* RFC 4180, CRLF line ends, header row */
	GR_FMT_JSON,	/* one array of objects, one object per line */
	GR_FMT_JSONL,	/* one object per line, no array */
	GR_FMT_LINE,	/* "name = value" lines, blank line between rows */
	GR_FMT_TSV,	/* tab-separated, header row, \t \n \r \\ escaped */
};

/* How gr_output__run_opts() prints. */
struct gr_output_opts {
	enum gr_format fmt;
	enum gr_time_format time; /* GR_TIME_DEFAULT: iso for table and
				   * line, ns for the data formats */
	int no_header;		/* table, csv, tsv: no header row */
	int width;		/* table: > 0 cuts each line to this many
				 * columns, the last one ending in "…" */
};

/* Looks up a format by name ("table", "csv", "json", "jsonl", "line",
 * "tsv"; case-insensitive).  Returns 0 on success, -EINVAL for an unknown name. */
int gr_format__parse(const char *name, enum gr_format *out);

/* Returns the name of @f as accepted by gr_format__parse(), or NULL for a
 * value outside the enum. */
const char *gr_format__name(enum gr_format f);

/* Steps @stmt to the end, printing every row to @out in format @fmt.
 * Returns SQLITE_OK (0) on success.  On failure returns the error code of
 * sqlite3_step() (or SQLITE_NOMEM, or SQLITE_IOERR when writing @out
 * fails, or SQLITE_MISUSE for a bad @fmt) and, if @errmsg is not NULL,
 * sets *errmsg to a malloc'd message for the caller to free(); *errmsg is
 * NULL on success.  The rows printed before an error stay printed (a
 * JSON array is then left unclosed; a table prints nothing when the
 * error comes within the rows it sizes its columns from). */
int gr_output__run(sqlite3_stmt *stmt, enum gr_format fmt, FILE *out,
		   char **errmsg);

/* gr_output__run() with every option; @opts->fmt is the format. */
int gr_output__run_opts(sqlite3_stmt *stmt, const struct gr_output_opts *opts,
			FILE *out, char **errmsg);

/* Rows a table sizes its columns from before it starts printing; a wider
 * value later widens its column from that row on. */
#define GR_TABLE_SIZING_ROWS 200

/* ---- one JSON document ------------------------------------------------- */

/* A writer for commands whose answer is one JSON object (status, verify)
 * rather than rows.  Keys come out in the order written, so the caller's
 * code is the documented layout.  Every value call takes the key it is
 * written under; inside an array, and for the top-level value, key is
 * NULL.  Errors are sticky and reported once by gr_json__finish(). */
struct gr_json {
	FILE *f;
	int pretty;	/* a member per line, two spaces per level */
	int depth;	/* open containers */
	uint64_t wrote;	/* bit d: the container at depth d has a member */
	int err;	/* a failed allocation */
};

void gr_json__init(struct gr_json *j, FILE *f, int pretty);
/* Opens an object ('{') or an array ('['); gr_json__end closes it. */
void gr_json__begin(struct gr_json *j, const char *key, char kind);
void gr_json__end(struct gr_json *j, char kind);
/* A string (NULL writes null); ill-formed UTF-8 becomes U+FFFD. */
void gr_json__str(struct gr_json *j, const char *key, const char *s);
void gr_json__int(struct gr_json *j, const char *key, int64_t v);
void gr_json__bool(struct gr_json *j, const char *key, int v);
void gr_json__null(struct gr_json *j, const char *key);
/* A number with a fixed count of decimals (seconds: 3). */
void gr_json__fixed(struct gr_json *j, const char *key, double v,
		    int decimals);
/* Text that already is one valid JSON value, written as it is. */
void gr_json__raw(struct gr_json *j, const char *key, const char *json);
/* Ends the document with a newline and flushes.  Returns 0, or -ENOMEM /
 * -EIO (writing failed). */
int gr_json__finish(struct gr_json *j);
/* What gr_output__utf8_next() gives for an ill-formed sequence. */
#define GR_UTF8_BAD UINT32_MAX

/* Decodes one UTF-8 sequence at @s (@n > 0 bytes left), as every format
 * here does.  Returns the bytes consumed; *cp is the code point, or
 * GR_UTF8_BAD for an ill-formed sequence, whose maximal subpart (>= 1
 * bytes) is then consumed. */
size_t gr_output__utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

#endif
