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
 */
#include "query/export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Moves @tmp to @path, over an existing file only when @force.  Returns
 * 0, or -1 with errno set (EEXIST: there is a file at path). */
static int place(const char *tmp, const char *path, int force)
{
	if (force)
		return rename(tmp, path);
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without RENAME_NOREPLACE: link() refuses an
	 * existing name too.  The temporary name left by a failed unlink
	 * is the same file, already in place. */
	if (link(tmp, path) != 0)
		return -1;
	(void)unlink(tmp);
	return 0;
}

/* Flushes, closes and renames the file into place.  Returns 0, or
 * EXIT_USER with @err set (and the temporary file removed). */
static int outf_commit(struct outf *o, char *err, size_t len)
{
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
	if (!e && o->tmp && place(o->tmp, o->path, o->x->force) != 0)
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
	return 0;
}

/* ---- csv and jsonl ----------------------------------------------------- */

/* Prints table @name into the file @path.  Returns 0, 1 or 2. */
static int print_table(const struct gr_export *x, sqlite3 *db,
		       const char *name, const char *path, char *err,
		       size_t len)
{
	sqlite3_stmt *st = NULL;
	struct outf o;
	char *sql, *msg = NULL;
	int rc, src;

	rc = outf_open(&o, x, path, 1, err, len);
	if (rc)
		return rc;
	sql = sqlite3_mprintf("SELECT * FROM main.\"%w\"", name);
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
		rc = print_table(x, db, name, path, err, len);
		free(path);
		if (rc)
			return rc;
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
			    "main.\"%w\";", tab->name, tab->name);
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
	for (int i = 0; i < x->ntables && rc == SQLITE_OK; i++)
		rc = copy_table(db, t = x->tables[i]);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		if (write_error(db))
			gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s", x->out,
				     sqlite3_errmsg(db));
		else
			gr_cli__fail(err, len, EXIT_INTERNAL, "exporting %s: %s",
				     t >= 0 ? gr_tables[t].name : "tables",
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

int gr_export__run(const struct gr_export *x, sqlite3 *db, char *err,
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
