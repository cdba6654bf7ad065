#!/usr/bin/env bash
# service.sh - the systemd unit, sysusers and tmpfiles entries as packaged
# (packaging/; docs/service.md).
#
# systemd-analyze verify finds no problem (it prints nothing: an unknown
# key is only a warning), and systemd-analyze security --offline rates the
# unit's exposure at 4.0 ("OK") or less; both in a throwaway root with the
# host's units, the unit and gpurecd at /usr/sbin/gpurecd (this machine's
# PID 1 need not be systemd).  systemd-sysusers and systemd-tmpfiles, in a
# throwaway root too, make the user, the group and /var/lib/gpurec as
# listed (root: tmpfiles chowns).
#
# Usage: service.sh [GPURECD]  (default build/gpurecd)
set -uo pipefail
GPURECD=${1:-build/gpurecd}
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
finish() { echo "$pass passed, $fail failed, $skipped skipped"; [ "$fail" -eq 0 ]; }

for t in systemd-analyze systemd-sysusers systemd-tmpfiles; do
	command -v $t >/dev/null || { bad "$t" "not installed (packaging/deps.sh)"; finish; exit 1; }
done
[ -x "$GPURECD" ] || { bad "gpurecd" "$GPURECD not built"; finish; exit 1; }
T=$(mktemp -d /tmp/gpurec-unit.XXXXXX)
trap 'rm -rf "$T"' EXIT
UNIT=packaging/systemd/gpurecd.service

R="$T/root"
mkdir -p "$R/usr/sbin" "$R/usr/lib/systemd/system" "$R/etc"
for d in /usr/lib/systemd/system /lib/systemd/system; do
	[ -d "$d" ] && cp -a "$d/." "$R/usr/lib/systemd/system/" && break
done
cp "$GPURECD" "$R/usr/sbin/gpurecd"
cp "$UNIT" "$R/usr/lib/systemd/system/gpurecd.service"
out=$(systemd-analyze verify --man=no --root="$R" gpurecd.service 2>&1); rc=$?
eq "systemd-analyze verify: clean" "$rc [$out]" "0 []"

sec=$(systemd-analyze security --offline=true --root="$R" gpurecd.service 2>&1)
score=$(echo "$sec" | sed -n 's/.*Overall exposure level for gpurecd.service: \([0-9.]*\) .*/\1/p')
echo "     exposure $score: $(echo "$sec" | tail -1 | sed 's/.*: //')"
if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 4.0) }'; then
	ok "systemd-analyze security: exposure $score <= 4.0"
else
	bad "systemd-analyze security" "exposure [$score] > 4.0: $(echo "$sec" | grep '✗')"
fi
systemd-analyze security --offline=true --threshold=40 --root="$R" gpurecd.service >/dev/null 2>&1
eq "systemd-analyze security --threshold=40 passes" "$?" 0
# What the score stands on, so that a change that weakens it shows here.
for want in "PrivateNetwork=" "RestrictAddressFamilies=~AF_(INET|INET6)" \
	"RestrictAddressFamilies=~AF_PACKET" "RestrictAddressFamilies=~AF_NETLINK" \
	"IPAddressDeny=" "User=/DynamicUser=" "NoNewPrivileges=" "ProtectSystem=" \
	"SystemCallArchitectures=" "SystemCallFilter=~@mount" "SystemCallFilter=~@module" \
	"CapabilityBoundingSet=~CAP_NET_ADMIN" "CapabilityBoundingSet=~CAP_SET(UID|GID|PCAP)"; do
	grep -qF "✓ $want " <<<"$sec" && ok "security: $want" || bad "security: $want" "not passed"
done

# The unit runs what the package installs, as the user sysusers makes.
eq "ExecStart" "$(sed -n 's/^ExecStart=//p' "$UNIT")" "/usr/sbin/gpurecd"
eq "User and Group" "$(sed -n 's/^\(User\|Group\)=//p' "$UNIT" | tr '\n' ' ')" "gpurec gpurec "
eq "Type=notify with a watchdog" "$(sed -n 's/^\(Type\|WatchdogSec\)=//p' "$UNIT" | tr '\n' ' ')" "notify 3min "

if [ "$(id -u)" != 0 ]; then
	if [ "${CI:-}" = true ]; then bad "sysusers and tmpfiles" "not root (tmpfiles chowns)"; finish; exit 1; fi
	echo "skip sysusers and tmpfiles: not root"; skipped=$((skipped + 1))
	finish; exit
fi
S="$T/sys"
mkdir -p "$S/etc" "$S/usr/lib/sysusers.d" "$S/usr/lib/tmpfiles.d" "$S/var/lib"
cp packaging/sysusers.d/gpurec.conf "$S/usr/lib/sysusers.d/"
cp packaging/tmpfiles.d/gpurec.conf "$S/usr/lib/tmpfiles.d/"
systemd-sysusers --root="$S" >/dev/null 2>&1; eq "systemd-sysusers" "$?" 0
pw=$(grep '^gpurec:' "$S/etc/passwd")
uid=$(echo "$pw" | cut -d: -f3) gid=$(echo "$pw" | cut -d: -f4)
eq "user gpurec: home, shell, a system uid" \
	"$(echo "$pw" | cut -d: -f6,7) $([ "$uid" -lt 1000 ] && echo system)" "/var/lib/gpurec:/usr/sbin/nologin system"
eq "group gpurec is the user's" "$(grep '^gpurec:' "$S/etc/group" | cut -d: -f3)" "$gid"
systemd-tmpfiles --root="$S" --create >/dev/null 2>&1; eq "systemd-tmpfiles --create" "$?" 0
eq "/var/lib/gpurec: 0750 gpurec:gpurec" "$(stat -c '%a %u:%g %F' "$S/var/lib/gpurec")" "750 $uid:$gid directory"
finish
