/* export.c - `gpurec export`: the recording, decoded, for other tools.
 *
 * Every format reads the virtual tables `gpurec sql` reads, so the common
 * options (--since, --until, --pid, --host) apply unchanged, and writes
 * its files through struct outf: under a temporary name in the target's
 * directory, renamed into place once complete, so that nobody sees half
 * a file and a failed export leaves nothing behind.  A file that exists
 * is replaced only with --force; without it the rename is
 * RENAME_NOREPLACE, so that one which appeared meanwhile is kept too.
 * --force replaces a regular file and nothing else: a rename over
 * /dev/null, a symbolic link or a fifo would replace the node itself (as
 * root, /dev/null would become the export).  Nor does export write in a
 * directory it reads (compared by device and inode, so no spelling of the
 * path slips past), or replace a file named like a segment or MANIFEST,
 * wherever it lies: gpurec never alters a recording.  The target is
 * checked before the recording is read and again just before the rename;
 * the temporary file is created with O_EXCL|O_NOFOLLOW, so a name
 * planted there is never followed.
 *
 * csv and jsonl print `SELECT *` of each table with output.c's printers:
 * the bytes `gpurec sql --format csv|jsonl` prints.
 *
 * sqlite ATTACHes the new file to the query connection and copies each
 * table with INSERT ... SELECT: ordinary tables with the columns and
 * declared types `gpurec schema` shows, an index on ts per event table,
 * nothing left for a reader to decode.
 *
 * perfetto: query/perfetto.c writes the trace; this file gives it the
 * file.
 *
 * Every format says what it did: one summary line on x->msg once the
 * files are in place (rows, segments, where, bytes, seconds), and, when
 * x->msg is a terminal, a progress line redrawn in place while it runs
 * (a log gets the summary alone, never a carriage return or an escape
 * code).  Rows are counted as the scan yields them: perfetto counts its
 * events, the other formats read each table through gr_export_row(), a
 * function in the WHERE clause that SQLite calls once per row and that
 * keeps every row.  On a terminal the rows are first counted (count(*),
 * which the virtual tables answer from block headers) for the line's
 * percentage.  The window's segments (those whose span meets
 * --since/--until, of --host) are counted once before the tables, and the
 * sqlite export lists them, with the window, hosts, version and command,
 * in its provenance tables.
 */
#include "query/export.h"
#include "query/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/version.h"
#include "query/cli.h"
#include "query/limits.h"
#include "query/output.h"
#include "query/perfetto.h"

static const char *const fmt_names[] = {
	[GR_EXPORT_PERFETTO] = "perfetto",
	[GR_EXPORT_CSV] = "csv",
	[GR_EXPORT_JSONL] = "jsonl",
	[GR_EXPORT_SQLITE] = "sqlite",
};

int gr_export_format__parse(const char *name, enum gr_export_format *out)
{
	for (size_t i = 0; name && i < sizeof(fmt_names) / sizeof(*fmt_names);
	     i++) {
		if (strcasecmp(name, fmt_names[i]) == 0) {
			*out = (enum gr_export_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- progress and summary --------------------------------------------- */

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void gr_export__iso(char *buf, size_t len, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000);
	int64_t frac = ns % 1000000000;
	struct tm tm;
	size_t n;

	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	if (!gmtime_r(&s, &tm) ||
	    !(n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm))) {
		snprintf(buf, len, "%" PRId64, ns);
		return;
	}
	snprintf(buf + n, len - n, ".%09" PRId64 "Z", frac);
}

/* Writes @v with a comma every three digits (1,234,567). */
static const char *thousands(char buf[32], uint64_t v)
{
	char d[24];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v), j = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = d[i];
	}
	buf[j] = '\0';
	return buf;
}

/* Writes @v bytes in decimal units, as ls -h --si and df -H do: 900 B,
 * 4.2 kB, 84 MB. */
static const char *human_bytes(char buf[32], uint64_t v)
{
	static const char *const unit[] = { "kB", "MB", "GB", "TB", "PB" };
	double d = (double)v;
	int u = -1;

	if (v < 1000) {
		snprintf(buf, 32, "%" PRIu64 " B", v);
		return buf;
	}
	while (d >= 999.95 && u < 4) {
		d /= 1000;
		u++;
	}
	snprintf(buf, 32, d < 9.95 ? "%.1f %s" : "%.0f %s", d, unit[u]);
	return buf;
}

/* Redraws the progress line: rows, tables done, and the share of the
 * rows counted beforehand. */
static void progress_draw(struct gr_export_progress *p)
{
	uint64_t pct = p->total ? p->rows * 100 / p->total : 0;
	char b[32];

	fprintf(p->tty, "\rexporting: %s rows, %d of %d tables done, %d%%\033[K",
		thousands(b, p->rows), p->tables_done, p->ntables,
		(int)(pct > 100 ? 100 : pct));
	fflush(p->tty);
	p->drawn = 1;
}

void gr_export__row(struct gr_export_progress *p)
{
	int64_t now;

	p->rows++;
	/* The clock is read every 4096 rows: a redraw costs a write. */
	if (!p->tty || (p->rows & 4095))
		return;
	now = mono_ns();
	if (now < p->next_draw)
		return;
	p->next_draw = now + 200000000;
	progress_draw(p);
}

/* Notes that a table is done: the line shows it at once. */
static void progress_table_done(struct gr_export_progress *p)
{
	p->tables_done++;
	if (p->tty)
		progress_draw(p);
}

/* Clears the progress line, so that what follows starts a clean line. */
static void progress_clear(struct gr_export_progress *p)
{
	if (p->drawn)
		fputs("\r\033[K", p->tty);
	p->drawn = 0;
}

/* gr_export_row(): counts a row for the progress line; always 1, so
 * that the WHERE clause it stands in keeps every row.  Not deterministic:
 * SQLite calls it once per row. */
static void sql_export_row(sqlite3_context *ctx, int argc,
			   sqlite3_value **argv)
{
	gr_export__row(sqlite3_user_data(ctx));
	sqlite3_result_int(ctx, 1);
}

/* The WHERE clause that counts a table's rows as they are read. */
#define COUNT_ROWS " WHERE gr_export_row()"

/* Counts the rows the export will write, for the progress line's %:
 * count(*) of each table (the virtual tables answer it from the blocks
 * the window keeps, without the rows' values).  perfetto's cuda_api
 * adds only the calls no exported cuda_* table holds, and each API
 * belongs to one table: its count less theirs. */
static int progress_total(const struct gr_export *x, sqlite3 *db)
{
	struct gr_export_progress *p = x->prog;
	sqlite3_str *s = sqlite3_str_new(db);
	sqlite3_stmt *st = NULL;
	char *sql;
	int rc, api = -1;

	sqlite3_str_appendall(s, "SELECT 0");
	for (int i = 0; i < x->ntables; i++) {
		int t = x->tables[i];

		if (x->fmt == GR_EXPORT_PERFETTO && t == GR_T_process)
			continue;	/* names only */
		if (x->fmt == GR_EXPORT_PERFETTO &&
		    (gr_tables[t].flags & GR_TF_UNION_CUDA))
			api = t;
		sqlite3_str_appendf(s, " + (SELECT count(*) FROM main.\"%w\")",
				    gr_tables[t].name);
	}
	for (int i = 0; api >= 0 && i < x->ntables; i++) {
		int t = x->tables[i];

		if ((gr_tables[t].flags & GR_TF_EVENT) &&
		    (gr_tables[t].flags & GR_TF_CUDA_CALL) && t != api)
			sqlite3_str_appendf(s, " - (SELECT count(*) FROM "
					    "main.\"%w\")", gr_tables[t].name);
	}
	sql = sqlite3_str_finish(s);
	rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		p->total = (uint64_t)sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The segments the window reads, as a WHERE clause of main.segments:
 * their span meets [since, until] (segments holds only --host's). */
static char *window_where(const struct gr_export *x)
{
	return sqlite3_mprintf(" WHERE end_ts >= %lld AND start_ts <= %lld",
			       (long long)x->since, (long long)x->until);
}

/* Counts the window's segments and finds its span.  Returns 0, or 2 with
 * @err set. */
static int progress_start(const struct gr_export *x, sqlite3 *db,
			  char *err, size_t len)
{
	struct gr_export_progress *p = x->prog;
	sqlite3_stmt *st = NULL;
	char *w = window_where(x);
	char *sql = w ? sqlite3_mprintf("SELECT count(*), min(start_ts), "
					"max(end_ts) FROM main.segments%s", w) :
			NULL;
	int rc;

	sqlite3_free(w);
	p->t0 = mono_ns();
	p->next_draw = p->t0 + 200000000;
	p->ntables = x->ntables;
	if (x->msg && isatty(fileno(x->msg)))
		p->tty = x->msg;
	rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* No segment: the window as given (open ends unknown). */
		p->nsegs = sqlite3_column_int64(st, 0);
		p->lo = sqlite3_column_type(st, 1) == SQLITE_NULL ? INT64_MIN :
			sqlite3_column_int64(st, 1);
		p->hi = sqlite3_column_type(st, 2) == SQLITE_NULL ? INT64_MAX :
			sqlite3_column_int64(st, 2);
		if (x->since > p->lo)
			p->lo = x->since;
		if (x->until < p->hi)
			p->hi = x->until;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	/* Counted only for the line: a log gets no %. */
	if (rc == SQLITE_OK && p->tty)
		rc = progress_total(x, db);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function(db, "gr_export_row", 0,
					     SQLITE_UTF8 | SQLITE_DIRECTONLY,
					     p, sql_export_row, NULL, NULL);
	if (rc != SQLITE_OK)
		return gr_cli__fail(err, len, EXIT_INTERNAL, "reading the "
				    "segments: %s", sqlite3_errmsg(db));
	return 0;
}

/* Prints the summary line: "exported 1,234 rows from 2 segments to
 * out.db (84 MB) in 3.2 s". */
static void progress_summary(const struct gr_export *x)
{
	struct gr_export_progress *p = x->prog;
	double s = (double)(mono_ns() - p->t0) / 1e9;
	char rows[32], size[32];

	progress_clear(p);
	if (!x->msg)
		return;
	fprintf(x->msg, "exported %s row%s from %" PRId64 " segment%s to %s",
		thousands(rows, p->rows), p->rows == 1 ? "" : "s", p->nsegs,
		p->nsegs == 1 ? "" : "s",
		strcmp(x->out, "-") == 0 ? "stdout" : x->out);
	if (strcmp(x->out, "-") != 0)
		fprintf(x->msg, " (%s)", human_bytes(size, p->bytes));
	fprintf(x->msg, " in %.1f s\n", s);
}

/* ---- targets ------------------------------------------------------------ */

/* What @m is, in words. */
static const char *kind_name(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a fifo";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* Whether @s ends with @suffix. */
static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Whether the last component of @path is named like a recording's own
 * file: a segment (and SQLite's files beside it) or the MANIFEST. */
static int recording_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return strcmp(b, "MANIFEST") == 0 || ends_with(b, ".seg") ||
	       ends_with(b, ".seg-wal") || ends_with(b, ".seg-shm") ||
	       ends_with(b, ".seg-journal");
}

/* Checks that the file @path may be written: its directory is none of
 * the --data directories (same device and inode), and whatever is there
 * already is a regular file (not followed), x->force is given and its
 * name is not a recording's.  Returns 0, or -EINVAL with @err set. */
static int target__check(const struct gr_export *x, const char *path,
			 char *err, size_t len)
{
	const char *slash = strrchr(path, '/');
	struct stat st, dst, ds;
	char *dir;

	dir = slash == path ? strdup("/") :
	      slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return gr_cli__fail(err, len, -ENOMEM, "out of memory");
	if (stat(dir, &dst) == 0)
		for (int i = 0; i < x->ndata; i++)
			if (stat(x->data[i], &ds) == 0 &&
			    ds.st_dev == dst.st_dev &&
			    ds.st_ino == dst.st_ino) {
				free(dir);
				return gr_cli__fail(err, len, -EINVAL, "refusing to "
						    "write %s: it is in %s, a data "
						    "directory being read", path,
						    x->data[i]);
			}
	free(dir);
	if (lstat(path, &st) != 0)
		return 0; /* nothing there; other errors show when writing */
	if (!S_ISREG(st.st_mode))
		return gr_cli__fail(err, len, -EINVAL, "refusing to replace %s: it is "
				    "%s (export replaces only a regular file)", path,
				    kind_name(st.st_mode));
	if (!x->force)
		return gr_cli__fail(err, len, -EINVAL, "%s exists (--force replaces "
				    "it)", path);
	if (recording_name(path))
		return gr_cli__fail(err, len, -EINVAL, "refusing to replace %s: it is "
				    "named like a recording's segment or MANIFEST", path);
	return 0;
}

/* Returns a malloc'd DIR/TABLE.csv (or .jsonl), or NULL. */
static char *table_path(const char *dir, const char *table,
			enum gr_export_format f)
{
	size_t n = strlen(dir);
	char *p;

	if (asprintf(&p, "%s%s%s.%s", dir, n && dir[n - 1] == '/' ? "" : "/",
		     table, f == GR_EXPORT_CSV ? "csv" : "jsonl") < 0)
		return NULL;
	return p;
}

int gr_export__prepare(struct gr_export *x, char *const *names, int n,
		       char *err, size_t errlen)
{
	struct stat st;
	int exists;

	x->ntables = 0;
	x->to_dir = 0;
	for (int t = 0; n == 0 && t < GR_NTABLES; t++)
		if (gr_tables[t].flags & GR_TF_EVENT)
			x->tables[x->ntables++] = t;
	for (int i = 0; i < n; i++) {
		int t = gr_table__find(names[i]), dup = 0;

		if (t < 0)
			return gr_cli__fail(err, errlen, -EINVAL, "no table '%s' "
					    "(gpurec tables lists them)", names[i]);
		if (x->fmt == GR_EXPORT_PERFETTO &&
		    !(gr_tables[t].flags & GR_TF_EVENT))
			return gr_cli__fail(err, errlen, -EINVAL, "%s is not an event "
					    "table: perfetto exports events", names[i]);
		for (int j = 0; j < x->ntables; j++)
			dup |= x->tables[j] == t;
		if (!dup)
			x->tables[x->ntables++] = t;
	}

	if (strcmp(x->out, "-") == 0) {
		if (x->fmt == GR_EXPORT_SQLITE)
			return gr_cli__fail(err, errlen, -EINVAL, "sqlite writes a "
					    "file: -o - (stdout) is for perfetto, and for "
					    "csv or jsonl of one table");
		if (x->fmt != GR_EXPORT_PERFETTO && x->ntables != 1)
			return gr_cli__fail(err, errlen, -EINVAL, "-o - writes one "
					    "table to stdout: name one, or give -o DIR");
		return 0;
	}
	if (!*x->out)
		return gr_cli__fail(err, errlen, -EINVAL, "-o needs a path");
	exists = stat(x->out, &st) == 0;
	if (x->fmt == GR_EXPORT_CSV || x->fmt == GR_EXPORT_JSONL)
		x->to_dir = n == 0 || x->ntables > 1 ||
			    x->out[strlen(x->out) - 1] == '/' ||
			    (exists && S_ISDIR(st.st_mode));
	if (x->to_dir) {
		if (exists && !S_ISDIR(st.st_mode))
			return gr_cli__fail(err, errlen, -EINVAL, "%s is not a "
					    "directory: %s of several tables writes "
					    "DIR/TABLE.%s", x->out, fmt_names[x->fmt],
					    fmt_names[x->fmt]);
		if (!exists) {
			/* The directory export would create: not in a data
			 * directory either. */
			char *d = strdup(x->out);
			size_t len = d ? strlen(d) : 0;
			int rc;

			if (!d)
				return gr_cli__fail(err, errlen, -ENOMEM,
						    "out of memory");
			while (len > 1 && d[len - 1] == '/')
				d[--len] = '\0';
			rc = target__check(x, d, err, errlen);
			free(d);
			if (rc)
				return rc;
		}
		for (int i = 0; i < x->ntables; i++) {
			char *p = table_path(x->out,
					     gr_tables[x->tables[i]].name, x->fmt);

			if (!p)
				return gr_cli__fail(err, errlen, -ENOMEM,
						    "out of memory");
			int rc = target__check(x, p, err, errlen);

			free(p);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (exists && S_ISDIR(st.st_mode))
		return gr_cli__fail(err, errlen, -EINVAL, "%s is a directory: -o names "
				    "the file to write", x->out);
	return target__check(x, x->out, err, errlen);
}

/* ---- output files ------------------------------------------------------ */

/* A file being written: under a temporary name until outf_commit(). */
struct outf {
	const char *path;	/* where it goes; "-" is stdout */
	char *tmp;		/* the temporary file; NULL for stdout */
	FILE *f;		/* NULL when the file is written by name */
	const struct gr_export *x; /* --force, the --data directories */
};

/* Creates @path's temporary file in its directory, opened as o->f when
 * @stream.  Returns 0, or EXIT_USER / EXIT_INTERNAL with @err set. */
static int outf_open(struct outf *o, const struct gr_export *x,
		     const char *path, int stream, char *err, size_t len)
{
	const char *slash = strrchr(path, '/');
	int fd = -1, e = EEXIST;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->x = x;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	/* mkstemp's O_EXCL, with O_NOFOLLOW too, and the umask's mode (an
	 * export is an ordinary file, not a private one). */
	for (int tries = 0; fd < 0 && e == EEXIST && tries < 100; tries++) {
		uint64_t r;

		if (getentropy(&r, sizeof(r)) != 0)
			r = (uint64_t)getpid() << 32 ^ (uint64_t)tries;
		free(o->tmp);
		if (asprintf(&o->tmp, "%.*s.%s.tmp-%012" PRIx64,
			     slash ? (int)(slash - path + 1) : 0, path,
			     slash ? slash + 1 : path,
			     (uint64_t)(r & 0xffffffffffffull)) < 0) {
			o->tmp = NULL;
			return gr_cli__fail(err, len, EXIT_INTERNAL, "out of memory");
		}
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0666);
		e = fd < 0 ? errno : 0;
	}
	if (fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s", path,
				    strerror(e));
	}
	/* a --timeout that ends the process removes it (limits.h) */
	gr_limits__temp_file(o->tmp);
	if (!stream) {
		close(fd);
		return 0;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		gr_limits__temp_file(NULL);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return gr_cli__fail(err, len, EXIT_INTERNAL, "out of memory");
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 20);
	return 0;
}

/* Removes the temporary file of an export that failed. */
static void outf_abort(struct outf *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp) {
		unlink(o->tmp);
		gr_limits__temp_file(NULL);
		free(o->tmp);
	}
	o->f = NULL;
	o->tmp = NULL;
}

/* Flushes, closes and renames the file into place.  Returns 0, or
 * EXIT_USER with @err set (and the temporary file removed). */
static int outf_commit(struct outf *o, char *err, size_t len)
{
	uint64_t size = 0;
	struct stat st;
	int e = 0;

	if (o->f) {
		errno = 0;
		if (fflush(o->f) != 0 || ferror(o->f))
			e = errno ? errno : EIO;
		if (o->f != stdout && fclose(o->f) != 0 && !e)
			e = errno ? errno : EIO;
		o->f = NULL;
	}
	/* What is at the path may have changed while the export ran. */
	if (!e && o->tmp && target__check(o->x, o->path, err, len) != 0) {
		outf_abort(o);
		return EXIT_USER;
	}
	if (!e && o->tmp && stat(o->tmp, &st) == 0)
		size = (uint64_t)st.st_size;
	if (!e && o->tmp && gr_outfile__place(o->tmp, o->path, o->x->force) != 0)
		e = errno;
	if (e) {
		outf_abort(o);
		if (e == EEXIST)
			return gr_cli__fail(err, len, EXIT_USER, "%s exists (--force "
					    "replaces it)", o->path);
		return gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s",
				    o->path, strerror(e));
	}
	gr_limits__temp_file(NULL);
	free(o->tmp);
	o->tmp = NULL;
	o->x->prog->bytes += size;
	return 0;
}

/* ---- csv and jsonl ----------------------------------------------------- */

/* Prints table @tab into the file @path.  Returns 0, 1 or 2. */
static int print_table(const struct gr_export *x, sqlite3 *db,
		       const struct gr_table *tab, const char *path, char *err,
		       size_t len)
{
	const char *name = tab->name;
	sqlite3_stmt *st = NULL;
	struct outf o;
	char *sql, *msg = NULL;
	int rc, src;

	rc = outf_open(&o, x, path, 1, err, len);
	if (rc)
		return rc;
	sql = sqlite3_mprintf("SELECT * FROM main.\"%w\"" COUNT_ROWS, name);
	src = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (src != SQLITE_OK) {
		outf_abort(&o);
		return gr_cli__fail(err, len, EXIT_INTERNAL, "cannot read %s: %s", name,
				    sqlite3_errmsg(db));
	}
	src = gr_output__run(st, x->fmt == GR_EXPORT_CSV ? GR_FMT_CSV :
			     GR_FMT_JSONL, o.f, &msg);
	sqlite3_finalize(st);
	if (src != SQLITE_OK) {
		const char *why = msg ? msg : sqlite3_errstr(src);

		if (ferror(o.f))
			rc = gr_cli__fail(err, len, EXIT_USER, "%s: %s", path, why);
		else
			rc = gr_cli__fail(err, len, EXIT_INTERNAL, "reading %s: %s",
					  name, why);
		outf_abort(&o);
		free(msg);
		return rc;
	}
	return outf_commit(&o, err, len);
}

static int export_tables(const struct gr_export *x, sqlite3 *db, char *err,
			 size_t len)
{
	if (x->to_dir && mkdir(x->out, 0777) != 0 && errno != EEXIST)
		return gr_cli__fail(err, len, EXIT_USER, "cannot create directory "
				    "%s: %s", x->out, strerror(errno));
	for (int i = 0; i < x->ntables; i++) {
		const char *name = gr_tables[x->tables[i]].name;
		char *path = x->to_dir ? table_path(x->out, name, x->fmt) :
					 strdup(x->out);
		int rc;

		if (!path)
			return gr_cli__fail(err, len, EXIT_INTERNAL, "out of memory");
		rc = print_table(x, db, &gr_tables[x->tables[i]], path, err, len);
		free(path);
		if (rc)
			return rc;
		progress_table_done(x->prog);
	}
	return 0;
}

/* ---- sqlite -------------------------------------------------------------- */

/* Whether an SQLite error is the output file's (a user error: space,
 * permissions, the path) rather than gpurec's. */
static int write_error(sqlite3 *db)
{
	switch (sqlite3_errcode(db) & 0xff) {
	case SQLITE_FULL:
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_READONLY:
	case SQLITE_PERM:
		return 1;
	default:
		return 0;
	}
}

/* Copies one table into the attached database: the table with the
 * schema's columns and SQL types, its rows, an index on ts. */
static int copy_table(sqlite3 *db, int t)
{
	const struct gr_table *tab = &gr_tables[t];
	sqlite3_str *s = sqlite3_str_new(db);
	char *sql;
	int rc;

	sqlite3_str_appendf(s, "CREATE TABLE gr_export.\"%w\" (", tab->name);
	for (int c = 0; c < tab->ncols; c++)
		sqlite3_str_appendf(s, "%s\"%w\" %s", c ? ", " : "",
				    tab->cols[c].name,
				    gr_coltype__sql(tab->cols[c].type));
	sqlite3_str_appendf(s, "); INSERT INTO gr_export.\"%w\" SELECT * FROM "
			    "main.\"%w\"%s;", tab->name, tab->name,
			    COUNT_ROWS);
	if (gr_table__col(tab, "ts") >= 0)
		sqlite3_str_appendf(s, "CREATE INDEX gr_export.\"%w_ts\" ON "
				    "\"%w\"(ts);", tab->name, tab->name);
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	return rc;
}

/* Appends @w to @s as a shell word: as it is when it holds only
 * characters no shell treats specially, else in single quotes. */
static void shell_word(sqlite3_str *s, const char *w)
{
	if (*w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789_@%+=:,./-") == strlen(w)) {
		sqlite3_str_appendall(s, w);
		return;
	}
	sqlite3_str_appendchar(s, 1, '\'');
	for (; *w; w++)
		if (*w == '\'')
			sqlite3_str_appendall(s, "'\\''");
		else
			sqlite3_str_appendchar(s, 1, *w);
	sqlite3_str_appendchar(s, 1, '\'');
}

/* Appends a provenance row: @key, and @ns both as ns and as ISO 8601
 * under KEY_ns and KEY; NULL for INT64_MIN or INT64_MAX (an open end of
 * a window that read no segment). */
static void prov_time(sqlite3_str *s, const char *key, int64_t ns)
{
	char iso[40];

	if (ns == INT64_MIN || ns == INT64_MAX) {
		sqlite3_str_appendf(s, ",('%q_ns',NULL),('%q',NULL)", key, key);
		return;
	}
	gr_export__iso(iso, sizeof(iso), ns);
	sqlite3_str_appendf(s, ",('%q_ns',%lld),('%q','%q')", key,
			    (long long)ns, key, iso);
}

/* Writes the provenance tables of the sqlite export: `provenance`, one
 * key/value row per fact of the export (what was asked, of what, by
 * which gpurec, when), and `provenance_segments`, a row per segment the
 * window reads with the SHA-256 its directory's MANIFEST holds (what
 * `gpurec verify` checks the file against; NULL while a segment is
 * open, not yet sealed or hashed).  The window is --since/--until as
 * given, else the first and last event of those segments. */
static int provenance(const struct gr_export *x, sqlite3 *db)
{
	const struct gr_export_progress *p = x->prog;
	sqlite3_str *s = sqlite3_str_new(db), *cmd = sqlite3_str_new(db);
	struct timespec now;
	char *sql, *line, *w = window_where(x);
	int rc;

	clock_gettime(CLOCK_REALTIME, &now);
	sqlite3_str_appendall(s, "CREATE TABLE gr_export.provenance (key TEXT "
			      "PRIMARY KEY, value); INSERT INTO "
			      "gr_export.provenance VALUES ('gpurec_version', "
			      "'" GPUREC_VERSION "')");
	for (int i = 0; i < x->ncmdline; i++) {
		if (i)
			sqlite3_str_appendchar(cmd, 1, ' ');
		shell_word(cmd, x->cmdline[i]);
	}
	line = sqlite3_str_finish(cmd);
	sqlite3_str_appendf(s, ",('schema_version',%d),('command',%Q)",
			    GR_SCHEMA_VERSION, line ? line : "");
	sqlite3_free(line);
	prov_time(s, "exported_at", (int64_t)now.tv_sec * 1000000000 +
		  now.tv_nsec);
	prov_time(s, "since", x->since != INT64_MIN ? x->since : p->lo);
	prov_time(s, "until", x->until != INT64_MAX ? x->until : p->hi);
	if (x->has_pid)
		sqlite3_str_appendf(s, ",('pid',%lld)", (long long)x->pid);
	else
		sqlite3_str_appendall(s, ",('pid',NULL)");
	sqlite3_str_appendf(s, ",('host',%Q),('tables','", x->host);
	for (int i = 0; i < x->ntables; i++)
		sqlite3_str_appendf(s, "%s%s", i ? " " : "",
				    gr_tables[x->tables[i]].name);
	sqlite3_str_appendf(s, "'),('segments',%lld),('hosts',(SELECT "
			    "group_concat(host, ' ') FROM (SELECT DISTINCT host "
			    "FROM main.segments%s ORDER BY host)));",
			    (long long)p->nsegs, w);
	sqlite3_str_appendf(s, "CREATE TABLE gr_export.provenance_segments "
			    "(host TEXT, path TEXT, sealed INTEGER, sha256 TEXT, "
			    "start_ts INTEGER, end_ts INTEGER, events INTEGER, "
			    "bytes INTEGER); INSERT INTO gr_export.provenance_segments "
			    "SELECT host, path, sealed, sha256, start_ts, end_ts, "
			    "events, bytes FROM main.segments%s;", w);
	sqlite3_free(w);
	sql = sqlite3_str_finish(s);
	if (!sql || !w)
		rc = SQLITE_NOMEM;
	else
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	return rc;
}

/* Fills the database file @path (the temporary file) with the tables. */
static int fill_db(const struct gr_export *x, sqlite3 *db, const char *path,
		   char *err, size_t len)
{
	sqlite3_stmt *st;
	int rc, t = -1;

	if (sqlite3_prepare_v2(db, "ATTACH ?1 AS gr_export", -1, &st, NULL))
		return gr_cli__fail(err, len, EXIT_INTERNAL, "cannot attach: %s",
				    sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s", x->out,
				    sqlite3_errmsg(db));
	/* A file no one reads before it is renamed into place needs no
	 * journal: a failed export is deleted, not rolled back. */
	rc = sqlite3_exec(db, "PRAGMA gr_export.journal_mode=OFF;"
			  "PRAGMA gr_export.synchronous=OFF;"
			  "PRAGMA gr_export.cache_size=-65536; BEGIN", NULL,
			  NULL, NULL);
	for (int i = 0; i < x->ntables && rc == SQLITE_OK; i++) {
		rc = copy_table(db, t = x->tables[i]);
		if (rc == SQLITE_OK)
			progress_table_done(x->prog);
	}
	if (rc == SQLITE_OK) {
		t = -1;
		rc = provenance(x, db);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		if (write_error(db))
			gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s", x->out,
				     sqlite3_errmsg(db));
		else
			gr_cli__fail(err, len, EXIT_INTERNAL, "exporting %s: %s",
				     t >= 0 ? gr_tables[t].name : "provenance",
				     sqlite3_errmsg(db));
		rc = write_error(db) ? EXIT_USER : EXIT_INTERNAL;
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	if (sqlite3_exec(db, "DETACH gr_export", NULL, NULL, NULL) != SQLITE_OK
	    && rc == SQLITE_OK)
		rc = gr_cli__fail(err, len, EXIT_INTERNAL, "cannot detach: %s",
				  sqlite3_errmsg(db));
	return rc;
}

static int export_sqlite(const struct gr_export *x, sqlite3 *db, char *err,
			 size_t len)
{
	struct outf o;
	int rc = outf_open(&o, x, x->out, 0, err, len);

	if (rc)
		return rc;
	rc = fill_db(x, db, o.tmp, err, len);
	if (rc) {
		outf_abort(&o);
		return rc;
	}
	return outf_commit(&o, err, len);
}

static int export_perfetto(const struct gr_export *x, sqlite3 *db, char *err,
			   size_t len)
{
	struct outf o;
	int rc = outf_open(&o, x, x->out, 1, err, len);

	if (rc)
		return rc;
	rc = gr_perfetto__write(x, o.f, db, err, len);
	if (rc) {
		outf_abort(&o);
		return rc;
	}
	return outf_commit(&o, err, len);
}

static int export_format(const struct gr_export *x, sqlite3 *db, char *err,
			 size_t errlen)
{
	switch (x->fmt) {
	case GR_EXPORT_PERFETTO:
		return export_perfetto(x, db, err, errlen);
	case GR_EXPORT_SQLITE:
		return export_sqlite(x, db, err, errlen);
	case GR_EXPORT_CSV:
	case GR_EXPORT_JSONL:
		return export_tables(x, db, err, errlen);
	}
	return gr_cli__fail(err, errlen, EXIT_INTERNAL, "unknown export format");
}

int gr_export__run(const struct gr_export *x, sqlite3 *db, char *err,
		   size_t errlen)
{
	struct gr_export_progress prog = { 0 };
	struct gr_export run = *x;
	int rc;

	run.prog = &prog;
	rc = progress_start(&run, db, err, errlen);
	if (rc == 0)
		rc = export_format(&run, db, err, errlen);
	if (rc == 0)
		progress_summary(&run);
	else
		progress_clear(&prog);
	return rc;
}
