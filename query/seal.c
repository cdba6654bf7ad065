/* seal.c - `gpurec seal-setup`: the one gpurec command that writes into a
 * data directory, and it writes one file, DIR/fss.key.
 *
 * The directory is opened once and the key created relative to that fd
 * (store/fss.c: O_EXCL, O_NOFOLLOW, mode 0600).  Run as root on a
 * directory another user owns (the service's gpurec user), the key is
 * given to that owner, who runs gpurecd and must rewrite the key at every
 * epoch; the chown is of the file just created, through its fd, never of a
 * path.  The verification key goes to stdout alone, so that
 * `gpurec seal-setup >key.txt` captures just it; what to do with it goes
 * to stderr.  gpurecd reads fss.key when it opens the directory, so the
 * sealing starts at its next start.
 */
#include "query/seal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/cli.h"
#include "store/crypto.h"
#include "store/fss.h"

/* Formats a whole number of seconds the way --interval takes it. */
static void fmt_interval(int64_t s, char *buf, size_t n)
{
	if (s % 86400 == 0)
		snprintf(buf, n, "%" PRId64 "d", s / 86400);
	else if (s % 3600 == 0)
		snprintf(buf, n, "%" PRId64 "h", s / 3600);
	else if (s % 60 == 0)
		snprintf(buf, n, "%" PRId64 "m", s / 60);
	else
		snprintf(buf, n, "%" PRId64 "s", s);
}

/* Prints text to f folded at 78 columns between words. */
static void print_folded(FILE *f, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t n = strlen(p), cut = n;

		if (n > 78) {
			cut = 78;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)	/* one long word (a path): as is */
				cut = strcspn(p, " ");
		}
		fprintf(f, "%.*s\n", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

/* Says why gr_fss__setup() failed with @rc.  Returns an exit status. */
static int setup_error(const struct gr_seal_setup *s, int rc)
{
	char cerr[256];

	switch (rc) {
	case -EEXIST:
		return gr_cli__error(s->msg, EXIT_USER, "seal-setup: %s/"
			GR_FSS_FILE " exists: sealing is set up already "
			"(--force replaces the key; lines sealed before then "
			"verify only with the old verification key)", s->dir);
	case -EACCES:
	case -EPERM:
	case -EROFS:
		return gr_cli__error(s->msg, EXIT_USER, "seal-setup: cannot "
			"create %s/" GR_FSS_FILE ": %s (run it as root or as "
			"the directory's owner)", s->dir, strerror(-rc));
	case -EIO:
		return gr_cli__error(s->msg, EXIT_INTERNAL, "seal-setup: "
			"cannot make a key: libcrypto or the disk failed (%s)",
			gr_crypto__error(cerr, sizeof(cerr)));
	default:
		return gr_cli__error(s->msg, rc == -ENOSPC || rc == -EDQUOT ||
			rc == -EISDIR ? EXIT_USER : EXIT_INTERNAL, "seal-setup: "
			"cannot create %s/" GR_FSS_FILE ": %s", s->dir,
			strerror(-rc));
	}
}

/* Prints the verification key on s->out, what to do with it on s->msg.
 * Returns an exit status. */
static int print_keys(const struct gr_seal_setup *s, char *vkey)
{
	char iv[32], *text;

	fprintf(s->out, "%s\n", vkey);
	fflush(s->out);
	gr_crypto__wipe(vkey, GR_FSS_VKEY_MAX);
	fmt_interval(s->interval_s, iv, sizeof(iv));
	if (asprintf(&text,
		"gpurec: sealing key installed in %s/" GR_FSS_FILE " (a new "
		"key every %s, the last one erased). The line on stdout is the "
		"verification key: write it down or store it offline, off this "
		"host and out of its backups, and do not keep it in the data "
		"directory; whoever holds it can forge seals, and it is the "
		"only way to check them. gpurecd seals the MANIFEST from its "
		"next start (systemctl restart gpurecd). To check a recording "
		"or a copy of it: gpurec verify --data %s --verification-key "
		"KEY. Key, hashes and tags: %s, FIPS mode %s.", s->dir, iv,
		s->dir, gr_crypto__version(), gr_crypto__fips() ? "on" : "off")
	    < 0)
		return EXIT_INTERNAL;
	print_folded(s->msg, text);
	free(text);
	return 0;
}

int gr_seal_setup__run(const struct gr_seal_setup *s)
{
	char vkey[GR_FSS_VKEY_MAX], cerr[256];
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	struct stat st;
	int dirfd, rc;

	dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		rc = errno;
		return gr_cli__error(s->msg, rc == ENOMEM ? EXIT_INTERNAL :
				     EXIT_USER, "seal-setup: cannot open data "
				     "directory %s: %s", s->dir, strerror(rc));
	}
	if (fstat(dirfd, &st) < 0) {
		rc = errno;
		close(dirfd);
		return gr_cli__error(s->msg, EXIT_INTERNAL, "seal-setup: %s: %s",
				     s->dir, strerror(rc));
	}
	/* Root setting up another user's directory: the key is theirs. */
	if (geteuid() == 0 && st.st_uid != 0) {
		uid = st.st_uid;
		gid = st.st_gid;
	}
	if (gr_crypto__init()) {
		close(dirfd);
		return gr_cli__error(s->msg, EXIT_INTERNAL, "seal-setup: cannot "
				     "initialise libcrypto (%s): %s",
				     gr_crypto__version(),
				     gr_crypto__error(cerr, sizeof(cerr)));
	}
	rc = gr_fss__setup(dirfd, s->interval_s, s->now_ns, s->force, uid, gid,
			   vkey);
	close(dirfd);
	if (rc)
		return setup_error(s, rc);
	return print_keys(s, vkey);
}
