#!/usr/bin/env bash
# glibc-floor.sh - prints the newest GLIBC_x.y symbol version that the
# given binaries need: the oldest glibc they run on.
#   glibc-floor.sh BINARY...
set -euo pipefail

v=$(objdump -T "$@" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' |
	sort -uV | tail -n1)
[ -n "$v" ] || { echo "glibc-floor.sh: no GLIBC symbol versions in $*" >&2
		 exit 1; }
echo "$v"
