/* outfile.h - `gpurec sql -o FILE` and `report -o FILE`: a file written
 * whole or not at all.
 *
 * The rows go to a temporary file in FILE's directory, which is renamed
 * into place only when the query has finished without error: a reader
 * never sees half a result, and a failed or interrupted query leaves the
 * old file (or none) behind.  As with export (query/export.c), a file
 * that exists is replaced only with --force, and then only a regular
 * file: renaming over /dev/null or a symbolic link would replace the
 * node itself.
 */
#ifndef GR_QUERY_OUTFILE_H
#define GR_QUERY_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

struct gr_outfile {
	const char *path;	/* the target, as given */
	char *tmp;		/* the temporary file, until placed */
	FILE *f;		/* open on tmp */
	int force;		/* --force: may replace a regular file */
};

/* Checks that @path may be written (absent, or a regular file with
 * @force) and opens its temporary file as o->f.  Returns 0, or EXIT_USER
 * / EXIT_INTERNAL with a one-line reason in @err. */
int gr_outfile__open(struct gr_outfile *o, const char *path, int force,
		     char *err, size_t len);

/* Flushes and closes o->f and renames the file into place.  Returns 0,
 * or EXIT_USER / EXIT_INTERNAL with @err set (the temporary file is then
 * gone). */
int gr_outfile__commit(struct gr_outfile *o, char *err, size_t len);

/* Closes and removes the temporary file: the query failed. */
void gr_outfile__abort(struct gr_outfile *o);

/* Moves @tmp to @path, over an existing file only when @force (never
 * over one otherwise, even on a file system without RENAME_NOREPLACE).
 * Returns 0, or -1 with errno set (EEXIST: a file is at @path).  Export
 * places its files with it too. */
int gr_outfile__place(const char *tmp, const char *path, int force);

#endif
