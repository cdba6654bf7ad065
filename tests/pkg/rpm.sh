#!/usr/bin/env bash
# rpm.sh - the .rpm: rpmlint, then its file list, modes and owners,
# scriptlets and dependencies as rpm -qp shows them, compared with the
# lists below.  Then (root) the scriptlets run as rpm runs them: install,
# upgrade and erase with `rpm --root` into a throwaway Debian 12 root
# (the one of deb.sh) where systemctl is a shim that logs its arguments
# and /run/systemd/system exists, as on a booted host.
#
# The queries need no root; the install does (skipped without, except
# under CI=true, where that is a failure).
set -uo pipefail
SUITE=rpm
. "$(dirname "$0")/lib.sh"

for t in rpmbuild rpmlint; do
	command -v $t >/dev/null || skip "no $t (make deps installs it)"
done

start rpm "$@"
RPM1=$OUT/gpurec-$V1-1.x86_64.rpm RPM2=$OUT/gpurec-$V2-1.x86_64.rpm
eq "make rpm writes gpurec-$V1-1.x86_64.rpm, VERSION= the other" \
	"$([ -f "$RPM1" ] && echo 1)$([ -f "$RPM2" ] && echo 2)" 12

# rpmlint: nothing left but what packaging/rpm/gpurec.rpmlintrc filters,
# each filter with its reason (an unused filter is an error too).
rpmlint -c packaging/rpm/rpmlint.toml -r packaging/rpm/gpurec.rpmlintrc \
	"$RPM1" >"$T/rpmlint.out" 2>&1
lint_rc=$?
eq "rpmlint: 0 errors, 0 warnings" \
	"$lint_rc $(grep -o '[0-9]* errors, [0-9]* warnings' "$T/rpmlint.out")" \
	"0 0 errors, 0 warnings"
grep -E '^gpurec[^ ]*: [EW]: ' "$T/rpmlint.out"

qp() { rpm -qp "$@" "$RPM1" 2>&1; }
eq "name, version, release, arch, license" \
	"$(qp --qf '%{NAME} %{VERSION} %{RELEASE} %{ARCH} %{LICENSE}')" \
	"gpurec $V1 1 x86_64 GPL-2.0-only"

eq "rpm -qp --list" "$(qp --list)" \
"/etc/gpurec
/etc/gpurec/gpurec.conf
/usr/bin/gpurec
/usr/lib/systemd/system/gpurecd.service
/usr/lib/sysusers.d/gpurec.conf
/usr/lib/tmpfiles.d/gpurec.conf
/usr/sbin/gpurecd
/usr/share/bash-completion/completions/gpurec
/usr/share/bash-completion/completions/gpurecd
/usr/share/doc/gpurec
/usr/share/doc/gpurec/CHANGELOG
/usr/share/licenses/gpurec
/usr/share/licenses/gpurec/LICENSE
/usr/share/man/man1/gpurec.1.gz
/usr/share/man/man5/gpurec.conf.5.gz
/usr/share/man/man8/gpurecd.8.gz
/var/lib/gpurec"

# Mode, owner, group, and what rpm does with it: c config, n noreplace,
# d doc, l license.
eq "modes, owners and flags (rpm -qp --qf)" \
	"$(qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags} %{FILENAMES}\n]')" \
"drwxr-xr-x root:root  /etc/gpurec
-rw-r--r-- root:root cn /etc/gpurec/gpurec.conf
-rwxr-xr-x root:root  /usr/bin/gpurec
-rw-r--r-- root:root  /usr/lib/systemd/system/gpurecd.service
-rw-r--r-- root:root  /usr/lib/sysusers.d/gpurec.conf
-rw-r--r-- root:root  /usr/lib/tmpfiles.d/gpurec.conf
-rwxr-xr-x root:root  /usr/sbin/gpurecd
-rw-r--r-- root:root  /usr/share/bash-completion/completions/gpurec
lrwxrwxrwx root:root  /usr/share/bash-completion/completions/gpurecd
drwxr-xr-x root:root  /usr/share/doc/gpurec
-rw-r--r-- root:root d /usr/share/doc/gpurec/CHANGELOG
drwxr-xr-x root:root  /usr/share/licenses/gpurec
-rw-r--r-- root:root l /usr/share/licenses/gpurec/LICENSE
-rw-r--r-- root:root d /usr/share/man/man1/gpurec.1.gz
-rw-r--r-- root:root d /usr/share/man/man5/gpurec.conf.5.gz
-rw-r--r-- root:root d /usr/share/man/man8/gpurecd.8.gz
drwxr-x--- gpurec:gpurec  /var/lib/gpurec"
eq "completion for gpurecd links to gpurec's" \
	"$(qp --dump | awk '$1 ~ /completions\/gpurecd$/ { print $NF }')" gpurec

# Requires: glibc's libc and libm (symbol versions up to the floor, 2.34),
# libcrypto (OpenSSL 3: openssl-libs provides it), the loader, /bin/sh for
# the scriptlets, nothing else.
req=$(qp --requires)
eq "rpm -qp --requires, less the GLIBC_ versions" \
	"$(grep -v 'GLIBC_' <<<"$req" | LC_ALL=C sort -u)" \
"/bin/sh
config(gpurec) = $V1-1
libc.so.6()(64bit)
libcrypto.so.3()(64bit)
libcrypto.so.3(OPENSSL_3.0.0)(64bit)
libm.so.6()(64bit)
rpmlib(CompressedFileNames) <= 3.0.4-1
rpmlib(FileDigests) <= 4.6.0-1
rpmlib(PayloadFilesHavePrefix) <= 4.0-1
rtld(GNU_HASH)"
eq "requires: GLIBC_ versions of libc and libm only, the newest 2.34" \
	"$(grep 'GLIBC_' <<<"$req" | sed 's/(GLIBC_.*//' | sort -u | tr '\n' ' ')$(grep -o 'GLIBC_[0-9.]*' <<<"$req" | sort -V | tail -n1)" \
	"libc.so.6 libm.so.6 GLIBC_2.34"
eq "%changelog: this version first" \
	"$(qp --changelog | head -n1)" \
	"* Mon Nov 23 2026 gpurec maintainers <maintainers@users.noreply.a-seed-4b8b51d6.example> - $V1-1"

# The scriptlets: which there are, and the systemctl calls of each.
scripts=$(qp --scripts)
eq "scriptlets: pre, post, preun, postun (sh), no others" \
	"$(grep 'scriptlet' <<<"$scripts" | tr '\n' ';')" \
	"preinstall scriptlet (using /bin/sh):;postinstall scriptlet (using /bin/sh):;preuninstall scriptlet (using /bin/sh):;postuninstall scriptlet (using /bin/sh):;"
eq "scriptlets: systemctl calls of each (enable and start none)" \
	"$(awk '/scriptlet \(using/ { s = $1 } /^[^#]*systemctl [a-z-]/ {
		sub(/.*systemctl /, ""); sub(/ *\|\|.*/, ""); printf "%s: %s;", s, $0 }' <<<"$scripts")" \
	"postinstall: daemon-reload;preuninstall: stop gpurecd.service;preuninstall: --no-reload disable gpurecd.service;postuninstall: daemon-reload;postuninstall: try-restart gpurecd.service;"
pre=$(sed -n '/^preinstall scriptlet/,/^postinstall scriptlet/p' <<<"$scripts")
eq "preinstall: systemd-sysusers with the sysusers.d entry inlined, else useradd" \
	"$(grep -c '^	systemd-sysusers --replace=/usr/lib/sysusers.d/gpurec.conf - ' <<<"$pre") $(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' packaging/sysusers.d/gpurec.conf |
	   grep -c -v -F -x -f <(cat <<<"$pre")) $(grep -c 'useradd --system --gid gpurec --home-dir /var/lib/gpurec' <<<"$pre")" \
	"1 0 1"

# --- the scriptlets, run by rpm in a root -------------------------------
if [ "$(id -u)" != 0 ]; then
	if [ "${CI:-}" = true ]; then bad "rpm install checks" "not root"
	else echo "skip rpm install checks: not root"; skipped=$((skipped + 1)); fi
	finish; exit
fi
make_root "$R"
mount -t proc proc "$R/proc"
# rpm_ NAME ARGS...: rpm on the root; a check that it exits 0.
rpm_() {
	local name=$1; shift
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@" \
		</dev/null >"$T/rpm.out" 2>&1
	local rc=$?
	if [ $rc = 0 ]; then ok "$name"; else bad "$name" "exit $rc: $(cat "$T/rpm.out")"; fi
}
mv "$R/usr/bin/systemctl" "$R/usr/bin/systemctl.real"
shim_systemctl
rpm --root "$R" --initdb
# --nodeps: the root's rpm database knows nothing of its glibc.
RPM=(rpm --root "$R" --nodeps)

rpm_ "install $V1: rpm -i exits 0" "${RPM[@]}" -i "$RPM1"
eq "install: systemctl only reloads (enables and starts nothing)" \
	"$(calls)" "daemon-reload;"
eq "install: user and group gpurec made by %pre, own the data directory" \
	"$(inroot getent passwd gpurec | cut -d: -f1,6,7) $(inroot stat -c '%a %U:%G' /var/lib/gpurec)" \
	"gpurec:/var/lib/gpurec:/usr/sbin/nologin 750 gpurec:gpurec"
eq "install: gpurecd --check-config in the root" \
	"$(inroot gpurecd --check-config | head -n1)" \
	"# gpurecd: defaults, /etc/gpurec/gpurec.conf, command line"

echo "segment-age = 2h" >>"$R/etc/gpurec/gpurec.conf"
rpm_ "upgrade to $V2: rpm -U exits 0" "${RPM[@]}" -U "$RPM2"
eq "upgrade: reload (new %post), reload and try-restart (old %postun)" \
	"$(calls)" "daemon-reload;daemon-reload;try-restart gpurecd.service;"
eq "upgrade: the admin's config kept (noreplace)" \
	"$(inroot gpurecd --check-config | grep '^segment-age') $(rpm --root "$R" -q gpurec)" \
	"segment-age = 2h gpurec-$V2-1.x86_64"

echo planted >"$R/var/lib/gpurec/planted.seg"
chattr +i "$R/var/lib/gpurec/planted.seg" 2>/dev/null
rpm_ "erase: rpm -e exits 0" "${RPM[@]}" -e gpurec
eq "erase: systemctl stops and disables the service, then reloads" \
	"$(calls)" "stop gpurecd.service;--no-reload disable gpurecd.service;daemon-reload;"
eq "erase: says where the data stays, in one line" "$(grep '^gpurec:' "$T/rpm.out")" \
	"gpurec: recorded data kept in /var/lib/gpurec; to delete it: chattr -R -i /var/lib/gpurec && rm -rf /var/lib/gpurec"
eq "erase: programs gone, edited config saved as .rpmsave, data kept" \
	"$(ls "$R/usr/sbin/gpurecd" "$R/etc/gpurec/gpurec.conf" 2>/dev/null | wc -l) $(tail -n1 "$R/etc/gpurec/gpurec.conf.rpmsave") $(cat "$R/var/lib/gpurec/planted.seg")" \
	"0 segment-age = 2h planted"

rpm_ "reinstall $V2 over the kept data" "${RPM[@]}" -i "$RPM2"
rpm_ "erase with GPUREC_PURGE_DATA=yes" env GPUREC_PURGE_DATA=yes "${RPM[@]}" -e gpurec
eq "erase with GPUREC_PURGE_DATA=yes: /var/lib/gpurec removed, nothing said" \
	"$(ls -d "$R/var/lib/gpurec" 2>/dev/null | wc -l) $(grep -c '^gpurec:' "$T/rpm.out")" \
	"0 0"

finish
