#!/usr/bin/env bash
# deb.sh - the .deb: lintian, then install, upgrade, remove and purge in a
# throwaway Debian 12 root (debootstrap) as dpkg does them on a host.
#
# Builds the package twice (`make deb`, and `make deb VERSION=$VERSION.1`
# for the upgrade).  First round, as on a booted host: /run/systemd/system
# exists and systemctl is diverted (dpkg-divert) to a shim that logs its
# arguments, so each step's systemctl calls are compared exactly; the
# sysusers and tmpfiles paths of the scripts run.  Second round, as in a
# chroot or an image build: the real systemctl (which knows it is in a
# chroot), no systemd-sysusers or systemd-tmpfiles (the groupadd/useradd
# and mkdir fallbacks run).
#
# Root (chroot, dpkg).  Not root, or no root can be made: skipped with the
# reason, except under CI=true, where that is a failure.
set -uo pipefail
SUITE=deb
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root"
for t in dpkg-deb lintian debootstrap zstd unshare; do
	command -v $t >/dev/null || skip "no $t (make deps installs it)"
done
start deb "$@"
DEB1=$OUT/gpurec_${V1}_amd64.deb DEB2=$OUT/gpurec_${V2}_amd64.deb
eq "make deb writes gpurec_${V1}_amd64.deb, VERSION= the other" \
	"$([ -f "$DEB1" ] && echo 1)$([ -f "$DEB2" ] && echo 2)" 12

eq "the .deb's files (and nothing else)" \
	"$(dpkg-deb --fsys-tarfile "$DEB1" | tar -t | grep -v '/$' | LC_ALL=C sort)" \
"./etc/gpurec/gpurec.conf
./usr/bin/gpurec
./usr/lib/systemd/system/gpurecd.service
./usr/lib/sysusers.d/gpurec.conf
./usr/lib/tmpfiles.d/gpurec.conf
./usr/sbin/gpurecd
./usr/share/bash-completion/completions/gpurec
./usr/share/bash-completion/completions/gpurecd
./usr/share/doc/gpurec/changelog.gz
./usr/share/doc/gpurec/copyright
./usr/share/lintian/overrides/gpurec
./usr/share/man/man1/gpurec.1.gz
./usr/share/man/man5/gpurec.conf.5.gz
./usr/share/man/man8/gpurecd.8.gz"

ctl() { dpkg-deb -f "$DEB1" "$1"; }
eq "control: package, version, architecture" \
	"$(ctl Package) $(ctl Version) $(ctl Architecture)" "gpurec $V1 amd64"
# The glibc floor: the newest GLIBC_ symbol version the binaries need;
# libcrypto's package at the newest OPENSSL_ one.
eq "control: Depends states the glibc floor (2.34) and libssl3 (3.0.0)" \
	"$(ctl Depends)" \
	"libc6 (>= 2.34), libssl3 (>= 3.0.0) | libssl3t64, systemd | passwd"
eq "control: conffiles" "$(dpkg-deb --ctrl-tarfile "$DEB1" |
	tar -xOf - ./conffiles)" "/etc/gpurec/gpurec.conf"
eq "changelog.gz: Debian format, this version first" \
	"$(dpkg-deb --fsys-tarfile "$DEB1" | tar -xOf - ./usr/share/doc/gpurec/changelog.gz |
	   gzip -dc | dpkg-parsechangelog -l - -S Version)" "$V1"
# DEP-5: gpurec's own paragraph, and the GPL-2 one pointing at
# common-licenses.
eq "copyright: machine-readable, gpurec GPL-2 from common-licenses" \
	"$(dpkg-deb --fsys-tarfile "$DEB1" | tar -xOf - ./usr/share/doc/gpurec/copyright |
	   awk 'BEGIN { RS = "" } NR == 1 { print $1, $2 }
		/^Files: \*\n/ { sub(/\nCopyright: [^\n]*/, ""); print }
		/^License: GPL-2\n/ { print $1, $2, $NF }' | tr '\n' ';')" \
	"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/;Files: *;License: GPL-2;License: GPL-2 \`/usr/share/common-licenses/GPL-2'.;"

# Lintian: no error or warning left (the overrides say why, in
# packaging/deb/lintian-overrides).
lintian --fail-on error,warning "$DEB1" >"$T/lintian.out" 2>&1
lint_rc=$?
eq "lintian: no error or warning" \
	"$lint_rc:$(grep '^[EW]:' "$T/lintian.out")" "0:"

# --- the root -----------------------------------------------------------
make_root "$R"
mount -t proc proc "$R/proc"
cp "$DEB1" "$DEB2" "$R/tmp/"
D1=/tmp/${DEB1##*/} D2=/tmp/${DEB2##*/}
# dpkg_ NAME ARGS...: dpkg in the root; a check that it exits 0.
dpkg_() {
	local name=$1; shift
	inroot "$@" </dev/null >"$T/dpkg.out" 2>&1
	local rc=$?
	if [ $rc = 0 ]; then ok "$name"; else bad "$name" "exit $rc: $(cat "$T/dpkg.out")"; fi
}

# The files, owners and modes as installed (stat in the root).
FILES="/usr/sbin/gpurecd /usr/bin/gpurec /usr/lib/systemd/system/gpurecd.service
/usr/lib/sysusers.d/gpurec.conf /usr/lib/tmpfiles.d/gpurec.conf /etc/gpurec
/etc/gpurec/gpurec.conf /usr/share/man/man8/gpurecd.8.gz
/usr/share/man/man1/gpurec.1.gz /usr/share/man/man5/gpurec.conf.5.gz
/usr/share/bash-completion/completions/gpurec
/usr/share/bash-completion/completions/gpurecd /usr/share/doc/gpurec/copyright
/usr/share/doc/gpurec/changelog.gz /usr/share/lintian/overrides/gpurec
/var/lib/gpurec"
WANT_STAT="755 root:root regular file /usr/sbin/gpurecd
755 root:root regular file /usr/bin/gpurec
644 root:root regular file /usr/lib/systemd/system/gpurecd.service
644 root:root regular file /usr/lib/sysusers.d/gpurec.conf
644 root:root regular file /usr/lib/tmpfiles.d/gpurec.conf
755 root:root directory /etc/gpurec
644 root:root regular file /etc/gpurec/gpurec.conf
644 root:root regular file /usr/share/man/man8/gpurecd.8.gz
644 root:root regular file /usr/share/man/man1/gpurec.1.gz
644 root:root regular file /usr/share/man/man5/gpurec.conf.5.gz
644 root:root regular file /usr/share/bash-completion/completions/gpurec
777 root:root symbolic link /usr/share/bash-completion/completions/gpurecd
644 root:root regular file /usr/share/doc/gpurec/copyright
644 root:root regular file /usr/share/doc/gpurec/changelog.gz
644 root:root regular file /usr/share/lintian/overrides/gpurec
750 gpurec:gpurec directory /var/lib/gpurec"
# shellcheck disable=SC2086 # FILES is a list
stat_all() { inroot stat -c '%a %U:%G %F %n' $FILES 2>&1; }
# user_is: gpurec's passwd entry (but the comment), its primary group
# (gpurec's gid), whether it is a system user.
user_is() {
	inroot sh -c 'p=$(getent passwd gpurec) && g=$(getent group gpurec) &&
		uid=$(echo "$p" | cut -d: -f3) &&
		echo "$(echo "$p" | cut -d: -f1,4,6,7 | sed "s/:$(echo "$g" |
			cut -d: -f3):/:GID:/") group=$(echo "$g" | cut -d: -f1)" \
		     "system=$([ "$uid" -lt 1000 ] && echo yes || echo no)"'
}
WANT_USER="gpurec:GID:/var/lib/gpurec:/usr/sbin/nologin group=gpurec system=yes"
# Units enabled: links to gpurecd.service under /etc/systemd/system.
enabled() { find "$R/etc/systemd/system" -name gpurecd.service | wc -l; }

# --- round 1: as on a booted host (systemctl shim) ----------------------
inroot dpkg-divert --local --rename --divert /bin/systemctl.real \
	--add /bin/systemctl >/dev/null
shim_systemctl

dpkg_ "install $V1: dpkg -i exits 0" dpkg -i "$D1"
eq "install: systemctl only reloads (enables and starts nothing)" \
	"$(calls)" "daemon-reload;"
eq "install: files, owners, modes" "$(stat_all)" "$WANT_STAT"
eq "install: completion for gpurecd is gpurec's" \
	"$(readlink "$R/usr/share/bash-completion/completions/gpurecd")" gpurec
eq "install: user and group gpurec (systemd-sysusers)" "$(user_is)" "$WANT_USER"
eq "install: conffile registered" \
	"$(inroot dpkg-query -W -f='${Conffiles}' gpurec | awk '{print $1}' | tr -d '\n')" \
	/etc/gpurec/gpurec.conf
eq "gpurec --version in the root" "$(inroot gpurec --version 2>&1)" \
	"gpurec $V1 (schema 1)"
eq "gpurecd --version in the root" "$(inroot gpurecd --version 2>&1)" "gpurecd $V1"
eq "gpurecd --check-config reads the installed config" \
	"$(inroot gpurecd --check-config 2>&1 | sed -n '1p;/^data = /p' | tr '\n' ';')" \
	"# gpurecd: defaults, /etc/gpurec/gpurec.conf, command line;data = /var/lib/gpurec;"
# Only glibc's libraries, from the root's own glibc, and the root's
# libcrypto (OpenSSL 3, from libssl3).
for b in /usr/sbin/gpurecd /usr/bin/gpurec; do
	libs=$(inroot ldd "$b" 2>&1 | awk '{ n = $1; sub(".*/", "", n); print n }' |
		sort | tr '\n' ' ')
	extra=$(tr ' ' '\n' <<<"$libs" | grep -v -x -e '' -e linux-vdso.so.1 \
		-e ld-linux-x86-64.so.2 -e libc.so.6 -e libm.so.6 \
		-e libpthread.so.0 -e libdl.so.2 -e librt.so.1 -e libcrypto.so.3)
	eq "ldd $b: glibc's libraries and libcrypto only ($libs)" \
		"$extra/$(grep -c libc.so.6 <<<"$libs")/$(grep -c libcrypto.so.3 <<<"$libs")" "/1/1"
done
# No name service: gpurecd imports nothing that could ask NSS (LDAP, DNS);
# the libuv linked in would bring getpwuid_r but for recorder/nonss.c.
NSS='^(getpw|getgr|getsp|getaddrinfo|getnameinfo|gethostby|gethostent|getservby|getprotoby|getnetby|initgroups|getgrouplist|innetgr|getlogin|cuserid|res_n?(query|search|send|init)|__res_|nss_|__nss)'
eq "gpurecd imports no function that goes through NSS" \
	"$(nm -D --undefined-only "$R/usr/sbin/gpurecd" | awk '{ print $2 }' |
	   sed 's/@.*//' | grep -E "$NSS" | tr '\n' ' ')" ""
eq "install: nothing enabled" "$(enabled)" 0

# The admin edits the config; the upgrade keeps it.
echo "segment-age = 2h" >>"$R/etc/gpurec/gpurec.conf"
dpkg_ "upgrade to $V2: dpkg -i exits 0 (no conffile prompt)" dpkg -i "$D2"
eq "upgrade: systemctl reloads, then try-restarts the service" \
	"$(calls)" "daemon-reload;try-restart gpurecd.service;"
eq "upgrade: version" "$(inroot dpkg-query -W -f='${Version} ${Status}' gpurec)" \
	"$V2 install ok installed"
eq "upgrade: the admin's config kept" \
	"$(tail -n1 "$R/etc/gpurec/gpurec.conf")/$(inroot gpurecd --check-config | grep '^segment-age')" \
	"segment-age = 2h/segment-age = 2h"
eq "upgrade: files, owners, modes" "$(stat_all)" "$WANT_STAT"

# A recording, one of its files sealed (immutable) where the file system
# allows, as gpurecd leaves them.
echo planted >"$R/var/lib/gpurec/planted.seg"
chattr +i "$R/var/lib/gpurec/planted.seg" 2>/dev/null && echo "(planted.seg is immutable)"

dpkg_ "remove: dpkg -r exits 0" dpkg -r gpurec
eq "remove: systemctl stops and disables the service, then reloads" \
	"$(calls)" "stop gpurecd.service;--no-reload disable gpurecd.service;daemon-reload;"
eq "remove: programs gone, config and data kept" \
	"$(ls "$R/usr/sbin/gpurecd" "$R/usr/bin/gpurec" 2>/dev/null | wc -l) $(cat "$R/etc/gpurec/gpurec.conf" | tail -n1) $(cat "$R/var/lib/gpurec/planted.seg")" \
	"0 segment-age = 2h planted"

dpkg_ "purge: dpkg -P exits 0" dpkg -P gpurec
eq "purge: says where the data stays, in one line" "$(cat "$T/dpkg.out" | grep '^gpurec:')" \
	"gpurec: recorded data kept in /var/lib/gpurec; to delete it: chattr -R -i /var/lib/gpurec && rm -rf /var/lib/gpurec"
eq "purge: no systemctl call" "$(calls)" ""
eq "purge: /etc/gpurec removed, /var/lib/gpurec kept with its file" \
	"$([ -e "$R/etc/gpurec" ] && echo etc) $(cat "$R/var/lib/gpurec/planted.seg" 2>&1)" \
	" planted"
eq "purge: the package is gone" "$(inroot dpkg-query -W -f='${Status}' gpurec 2>&1)" \
	"dpkg-query: no packages found matching gpurec"

dpkg_ "reinstall $V2 over the kept data" dpkg -i "$D2"
eq "reinstall: data kept, directory as listed" \
	"$(cat "$R/var/lib/gpurec/planted.seg") $(inroot stat -c '%a %U:%G' /var/lib/gpurec)" \
	"planted 750 gpurec:gpurec"
: >"$LOG"
dpkg_ "purge with GPUREC_PURGE_DATA=yes" env GPUREC_PURGE_DATA=yes dpkg -P gpurec
eq "purge with GPUREC_PURGE_DATA=yes: /etc/gpurec and /var/lib/gpurec removed, nothing said" \
	"$(ls -d "$R/etc/gpurec" "$R/var/lib/gpurec" 2>/dev/null | wc -l) $(grep -c '^gpurec:' "$T/dpkg.out")" \
	"0 0"
eq "purge keeps the user and group" \
	"$(inroot getent passwd gpurec | cut -d: -f1) $(inroot getent group gpurec | cut -d: -f1)" \
	"gpurec gpurec"

# --- round 2: a chroot, the real systemctl, no sysusers/tmpfiles --------
rm -f "$R/usr/bin/systemctl"
inroot dpkg-divert --local --rename --divert /bin/systemctl.real \
	--remove /bin/systemctl >/dev/null
rmdir "$R/run/systemd/system"
for t in systemd-sysusers systemd-tmpfiles; do
	inroot dpkg-divert --local --rename --divert /bin/$t.hidden --add /bin/$t >/dev/null
done
inroot userdel gpurec 2>/dev/null; inroot groupdel gpurec 2>/dev/null
# The real systemctl cannot reach a systemd here (in a chroot of a booted
# host it says "Running in chroot"): the scripts must not need one.

dpkg_ "chroot: install $V1 exits 0" dpkg -i "$D1"
eq "chroot: user and group gpurec (groupadd, useradd)" "$(user_is)" "$WANT_USER"
eq "chroot: data directory (mkdir, chown, chmod)" \
	"$(inroot stat -c '%a %U:%G' /var/lib/gpurec)" "750 gpurec:gpurec"
eq "chroot: nothing enabled" "$(enabled)" 0
inroot systemctl enable gpurecd.service >/dev/null 2>&1
eq "chroot: the admin enables it (offline)" "$(enabled)" 1
dpkg_ "chroot: upgrade to $V2 exits 0" dpkg -i "$D2"
dpkg_ "chroot: remove exits 0" dpkg -r gpurec
eq "chroot: remove disabled the service" "$(enabled)" 0
dpkg_ "chroot: purge with GPUREC_PURGE_DATA=yes exits 0" \
	env GPUREC_PURGE_DATA=yes dpkg -P gpurec
eq "chroot: purge removed /etc/gpurec and /var/lib/gpurec" \
	"$(ls -d "$R/etc/gpurec" "$R/var/lib/gpurec" 2>/dev/null | wc -l)" 0

finish
