/* nonss.c - keeps the name service out of gpurecd where libuv is linked in.
 *
 * gpurecd resolves no user, group or host names: NSS could reach LDAP or
 * DNS, and the recorder must not touch the network.  gpurecd calls none
 * of libuv's functions that look users up (uv_os_get_passwd*,
 * uv_os_homedir), but when libuv is linked in statically (make PKG=1, the
 * packages; make STATIC=1) their object comes along and with it an import
 * of getpwuid_r.  Those links wrap getpwuid_r (-Wl,--wrap) to this, which
 * finds nobody without asking NSS, so the binary imports no NSS function
 * at all (tests/pkg/deb.sh checks the packaged one).
 */
#include <errno.h>
#include <pwd.h>
#include <stddef.h>

int __wrap_getpwuid_r(uid_t uid, struct passwd *pwd, char *buf, size_t len,
		      struct passwd **result);

int __wrap_getpwuid_r(uid_t uid, struct passwd *pwd, char *buf, size_t len,
		      struct passwd **result)
{
	*result = NULL;
	return ENOENT;
}
