#!/usr/bin/env bash
# stage.sh - installs what both packages ship into a staging root.
#   stage.sh BINDIR ROOT
# BINDIR holds gpurec and gpurecd as built by `make PKG=1` (build/pkgbin).
# The files of the other packaging/ directories go in as they are; the
# binaries are stripped, the man pages compressed.  Owners are set by the
# package builders (root:root); the modes are set here.  The data directory
# /var/lib/gpurec is not staged: each package makes it with its owner.
set -euo pipefail

bin=$1 root=$2
top=$(cd "$(dirname "$0")/.." && pwd)
pk=$top/packaging

need() {
	[ -f "$1" ] || { echo "stage.sh: missing $1" >&2; exit 1; }
}
for f in "$bin/gpurec" "$bin/gpurecd" "$pk/systemd/gpurecd.service" \
	 "$pk/sysusers.d/gpurec.conf" "$pk/tmpfiles.d/gpurec.conf" \
	 "$pk/gpurec.conf" "$pk/man/gpurecd.8" "$pk/man/gpurec.1" \
	 "$pk/man/gpurec.conf.5" "$pk/completion/gpurec"; do
	need "$f"
done

umask 022
install -d -m 0755 "$root"
# Stripped as dh_strip does: no symbols, no .comment or .note.
install -D -m 0755 "$bin/gpurecd" "$root/usr/sbin/gpurecd"
install -D -m 0755 "$bin/gpurec" "$root/usr/bin/gpurec"
strip --remove-section=.comment --remove-section=.note \
	"$root/usr/sbin/gpurecd" "$root/usr/bin/gpurec"
install -D -m 0644 "$pk/systemd/gpurecd.service" \
	"$root/usr/lib/systemd/system/gpurecd.service"
install -D -m 0644 "$pk/sysusers.d/gpurec.conf" \
	"$root/usr/lib/sysusers.d/gpurec.conf"
install -D -m 0644 "$pk/tmpfiles.d/gpurec.conf" \
	"$root/usr/lib/tmpfiles.d/gpurec.conf"
install -D -m 0644 "$pk/gpurec.conf" "$root/etc/gpurec/gpurec.conf"
for m in gpurecd.8 gpurec.1 gpurec.conf.5; do
	d=$root/usr/share/man/man${m##*.}
	install -d -m 0755 "$d"
	gzip -9n <"$pk/man/$m" >"$d/$m.gz"
	chmod 0644 "$d/$m.gz"
done
comp=$root/usr/share/bash-completion/completions
install -D -m 0644 "$pk/completion/gpurec" "$comp/gpurec"
# One file completes both programs; bash-completion loads it by the
# command's name, so gpurecd's name points at it too.
if [ -f "$pk/completion/gpurecd" ]; then
	install -m 0644 "$pk/completion/gpurecd" "$comp/gpurecd"
else
	ln -s gpurec "$comp/gpurecd"
fi
