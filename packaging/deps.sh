#!/usr/bin/env bash
# deps.sh - installs gpurec's build and test dependencies with the system's
# package manager (apt-get on Debian/Ubuntu, dnf on the RHEL family).
# Idempotent: when everything is present it installs nothing.
set -euo pipefail

deb_pkgs=(gcc make clang llvm pkg-config libbpf-dev libelf-dev zlib1g-dev
          libzstd-dev libsqlite3-dev libuv1-dev libssl-dev bpftool sqlite3 python3 zstd
          groff-base bash-completion dpkg-dev lintian rpm rpmlint
          debootstrap systemd util-linux e2fsprogs libcap2-bin strace tmux less time)
rpm_pkgs=(gcc make clang llvm pkgconf-pkg-config libbpf-devel
          elfutils-libelf-devel zlib-devel libzstd-devel sqlite-devel
          libuv-devel openssl-devel bpftool sqlite python3 zstd groff-base bash-completion
          rpm-build rpmlint systemd util-linux e2fsprogs libcap strace tmux less time)

# Node.js and npm run the third-party readers of the exports (DuckDB, the
# DevTools trace models: tests/cli/export3p.sh).  One installed otherwise
# (NodeSource's nodejs bundles npm, and conflicts with Debian's npm) is
# kept.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	deb_pkgs+=(nodejs npm)
	rpm_pkgs+=(nodejs npm)
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "deps.sh: run as root" >&2; exit 1; }
	sudo=sudo
fi

if command -v apt-get >/dev/null; then
	missing=()
	for p in "${deb_pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "deps.sh: all build dependencies present"
		exit 0
	fi
	echo "deps.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
elif command -v dnf >/dev/null; then
	missing=()
	for p in "${rpm_pkgs[@]}"; do
		rpm -q "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "deps.sh: all build dependencies present"
		exit 0
	fi
	echo "deps.sh: installing ${missing[*]}"
	$sudo dnf install -y "${missing[@]}"
else
	echo "deps.sh: neither apt-get nor dnf found; install by hand:" \
	     "${deb_pkgs[*]}" >&2
	exit 1
fi
