# lib.sh - what the package tests share (sourced, not run).
#
# Runs from the repository root.  Gives ok/bad/eq to count checks, skip (a
# failure under CI=true), finish, VERSION (common/version.h), and
# make_root DIR: a Debian 12 (bookworm) minbase root with systemd, made by
# debootstrap from deb.debian.org once and then unpacked from its cache
# (build/cache, or $GPUREC_PKG_CACHE).
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL ${SUITE} tests cannot run in CI: $1"
		echo "0 passed, 1 failed, 0 skipped"; exit 1
	fi
	echo "skip ${SUITE} tests: $1"; echo "0 passed, 0 failed, 1 skipped"; exit 0
}
finish() { echo "$pass passed, $fail failed, $skipped skipped"; [ "$fail" -eq 0 ]; }

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
VERSION=$(sed -n 's/^#define GPUREC_VERSION "\(.*\)"/\1/p' common/version.h)
MAKE=${MAKE:-make}

# start KIND ARGS...: as root, runs the test again in a mount namespace of
# its own (a root's /proc mount goes away with it, whatever happens); then
# sets V1 and V2 (the version and the upgrade's), OUT, T (a scratch
# directory, removed at exit unless KEEP is set), R ($T/root), and builds
# the KIND (deb or rpm) packages of both versions into OUT.
start() {
	local kind=$1; shift
	if [ "$(id -u)" = 0 ] && [ -z "${GPUREC_PKG_NS:-}" ]; then
		exec unshare --mount --propagation private \
			env GPUREC_PKG_NS=1 bash "$0" "$@"
	fi
	V1=$VERSION V2=$VERSION.1
	OUT=build/pkg-test
	T=$(mktemp -d /tmp/gpurec-$kind.XXXXXX)
	R=$T/root
	[ -n "${KEEP:-}" ] || trap cleanup EXIT
	$MAKE --no-print-directory "$kind" PKGDIR="$OUT" >"$T/build1.log" 2>&1 ||
		{ cat "$T/build1.log"; bad "make $kind" "failed"; finish; exit 1; }
	$MAKE --no-print-directory "$kind" PKGDIR="$OUT" VERSION="$V2" \
		>"$T/build2.log" 2>&1 ||
		{ cat "$T/build2.log"; bad "make $kind VERSION=$V2" "failed"
		  finish; exit 1; }
}
# inroot ARGS...: runs in the root with a plain environment.
inroot() {
	chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}
# shim_systemctl: /usr/bin/systemctl in the root (the real one moved
# aside by the caller) only logs its arguments, and /run/systemd/system
# says systemd runs; calls prints what was logged since, and forgets it.
shim_systemctl() {
	LOG=$R/var/log/systemctl.log
	cat >"$R/usr/bin/systemctl" <<'SHIM'
#!/bin/sh
echo "$*" >>/var/log/systemctl.log
SHIM
	chmod 0755 "$R/usr/bin/systemctl"
	mkdir -p "$R/run/systemd/system"
	: >"$LOG"
}
calls() { tr '\n' ';' <"$LOG"; : >"$LOG"; }
cleanup() {
	umount "$R/proc" 2>/dev/null
	chattr -R -i "$R/var/lib/gpurec" 2>/dev/null
	rm -rf "$T"
}

# make_root DIR: DIR becomes a bookworm root (minbase plus systemd, so that
# the packages' systemd-sysusers and systemd-tmpfiles paths run).  The
# first run downloads it (about a minute); later ones unpack the cache.
make_root() {
	local dir=$1 cache=${GPUREC_PKG_CACHE:-build/cache}
	local tarball=$cache/bookworm-minbase-systemd.tar.zst
	local mirror=${GPUREC_DEBIAN_MIRROR:-http://deb.debian.org/debian}

	if [ ! -s "$tarball" ]; then
		command -v debootstrap >/dev/null ||
			skip "no debootstrap (make deps installs it)"
		local tmp
		tmp=$(mktemp -d /tmp/gpurec-debootstrap.XXXXXX)
		if ! debootstrap --variant=minbase --include=systemd bookworm \
				"$tmp" "$mirror" >"$tmp.log" 2>&1; then
			tail -n 5 "$tmp.log"; rm -rf "$tmp" "$tmp.log"
			skip "debootstrap could not make a bookworm root from $mirror"
		fi
		rm -rf "$tmp.log" "$tmp"/var/cache/apt/archives/*.deb \
			"$tmp"/var/lib/apt/lists/*_Packages
		mkdir -p "$cache"
		tar -C "$tmp" -cf - . | zstd -q -T0 >"$tarball.tmp" &&
			mv "$tarball.tmp" "$tarball"
		rm -rf "$tmp"
	fi
	mkdir -p "$dir"
	zstd -dc "$tarball" | tar -C "$dir" -xf - ||
		{ echo "FAIL cannot unpack $tarball"; exit 2; }
}
