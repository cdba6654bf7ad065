/* outfile.c - a query's result file, written whole or not at all; see
 * outfile.h. */
#include "query/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/cli.h"
#include "query/limits.h"

/* Whether @path may be written: absent, or with @force a regular file.
 * Returns 0, or EXIT_USER with @err set. */
static int target_ok(const char *path, int force, char *err, size_t len)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 :
		       gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s",
				    path, strerror(errno));
	if (!force)
		return gr_cli__fail(err, len, EXIT_USER, "%s exists (--force "
				    "replaces it)", path);
	if (!S_ISREG(st.st_mode))
		return gr_cli__fail(err, len, EXIT_USER, "%s is not a regular "
				    "file: --force replaces only those", path);
	return 0;
}

int gr_outfile__open(struct gr_outfile *o, const char *path, int force,
		     char *err, size_t len)
{
	const char *slash = strrchr(path, '/');
	int fd = -1, e = EEXIST, rc;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->force = force;
	rc = target_ok(path, force, err, len);
	if (rc)
		return rc;
	/* mkstemp's O_EXCL, with O_NOFOLLOW too, and the umask's mode: a
	 * result is an ordinary file, not a private one. */
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
			return gr_cli__fail(err, len, EXIT_INTERNAL,
					    "out of memory");
		}
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0666);
		e = fd < 0 ? errno : 0;
	}
	if (fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s",
				    path, strerror(e));
	}
	/* a --timeout that ends the process removes it (limits.h) */
	gr_limits__temp_file(o->tmp);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		gr_outfile__abort(o);
		return gr_cli__fail(err, len, EXIT_INTERNAL, "out of memory");
	}
	return 0;
}

void gr_outfile__abort(struct gr_outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp) {
		unlink(o->tmp);
		gr_limits__temp_file(NULL);
		free(o->tmp);
		o->tmp = NULL;
	}
}

int gr_outfile__place(const char *tmp, const char *path, int force)
{
	if (force)
		return rename(tmp, path);
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without RENAME_NOREPLACE: link() refuses an
	 * existing name too. */
	if (link(tmp, path) != 0)
		return -1;
	(void)unlink(tmp);
	return 0;
}

int gr_outfile__commit(struct gr_outfile *o, char *err, size_t len)
{
	int e = 0, rc;

	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		e = errno ? errno : EIO;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	if (e) {
		gr_outfile__abort(o);
		return gr_cli__fail(err, len, EXIT_INTERNAL, "cannot write %s: %s",
				    o->path, strerror(e));
	}
	/* what is at the path may have changed while the query ran */
	rc = target_ok(o->path, o->force, err, len);
	if (rc == 0 && gr_outfile__place(o->tmp, o->path, o->force) != 0)
		rc = errno == EEXIST ?
		     gr_cli__fail(err, len, EXIT_USER, "%s exists (--force "
				  "replaces it)", o->path) :
		     gr_cli__fail(err, len, EXIT_USER, "cannot write %s: %s",
				  o->path, strerror(errno));
	if (rc) {
		gr_outfile__abort(o);
		return rc;
	}
	gr_limits__temp_file(NULL);
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}
