#!/usr/bin/env bash
# build.sh - builds the .deb from the binaries of `make PKG=1` with
# dpkg-deb (no debhelper, no source package; needs no root).
#   build.sh BINDIR VERSION OUTDIR
# Writes OUTDIR/gpurec_VERSION_amd64.deb; OUTDIR/deb-root is its tree.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
pk=$top/packaging
. "$pk/meta.sh"
pkg_args "$@"
root=$out/deb-root
rm -rf "$root"
bash "$pk/stage.sh" "$bin" "$root"

doc=$root/usr/share/doc/$PKG_NAME
install -D -m 0644 "$pk/deb/copyright" "$doc/copyright"
bash "$pk/changelog.sh" deb "$top/CHANGELOG" "$version" "$PKG_MAINTAINER" |
	gzip -9n >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
install -D -m 0644 "$pk/deb/lintian-overrides" \
	"$root/usr/share/lintian/overrides/$PKG_NAME"

# The control area.
glibc=$(bash "$pk/glibc-floor.sh" "$root/usr/sbin/gpurecd" \
	"$root/usr/bin/gpurec")
# libcrypto (OpenSSL 3) is the one library linked dynamically but glibc's,
# so that the host's OpenSSL and its FIPS module apply (docs/security.md):
# libssl3 carries it (libssl3t64 since Debian 13 and Ubuntu 24.04), at the
# newest OPENSSL_ symbol version the binaries need.
ossl=$(objdump -T "$root/usr/sbin/gpurecd" "$root/usr/bin/gpurec" |
	grep -o 'OPENSSL_[0-9][0-9.]*' | sed 's/OPENSSL_//' | sort -uV | tail -n1)
[ -n "$ossl" ] || { echo "build.sh: the binaries import no OPENSSL_ symbol" \
			"(built with STATIC=1?)" >&2; exit 1; }
size=$(du -sk --apparent-size "$root" | cut -f1)
ctl=$root/DEBIAN
install -d -m 0755 "$ctl"
{
	echo "Package: $PKG_NAME"
	echo "Version: $version"
	echo "Architecture: amd64"
	echo "Maintainer: $PKG_MAINTAINER"
	echo "Installed-Size: $size"
	echo "Depends: libc6 (>= $glibc), libssl3 (>= $ossl) | libssl3t64," \
	     "systemd | passwd"
	echo "Recommends: systemd"
	echo "Section: admin"
	echo "Priority: optional"
	echo "Description: $PKG_SUMMARY"
	sep=""
	for p in "${PKG_DESCRIPTION[@]}"; do
		[ -z "$sep" ] || echo " ."
		fold -s -w 72 <<<"$p" | sed 's/ *$//; s/^/ /'
		sep=1
	done
} >"$ctl/control"
echo /etc/gpurec/gpurec.conf >"$ctl/conffiles"
for s in postinst prerm postrm; do
	install -m 0755 "$pk/deb/$s" "$ctl/$s"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
	LC_ALL=C sort -z | xargs -0 md5sum) >"$ctl/md5sums"
chmod 0644 "$ctl/control" "$ctl/conffiles" "$ctl/md5sums"

# File times from the latest CHANGELOG release: the same sources give the
# same .deb.
latest=$(sed -n 's/^[0-9][^ ]* (\([0-9-]*\))$/\1/p' "$top/CHANGELOG" | head -n1)
export SOURCE_DATE_EPOCH=$(date -u -d "$latest" +%s)
deb=$out/${PKG_NAME}_${version}_amd64.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
