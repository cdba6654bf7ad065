#!/usr/bin/env bash
# build.sh - builds the .rpm from the binaries of `make PKG=1` with
# rpmbuild -bb and a binary-only spec (packaging/rpm/gpurec.spec.in).
#   build.sh BINDIR VERSION OUTDIR
# Writes OUTDIR/gpurec-VERSION-1.x86_64.rpm; OUTDIR/rpm holds the rest.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
pk=$top/packaging
. "$pk/meta.sh"
pkg_args "$@"
out=$(cd "$out" && pwd)
work=$out/rpm
rm -rf "$work"
mkdir -p "$work/docs"
bash "$pk/stage.sh" "$bin" "$work/stage"
# %license and %doc take these from the build directory.
cp "$top/LICENSE" "$top/CHANGELOG" "$work/docs/"

# The spec: fields filled in, the sysusers entry and the changelog inlined.
desc=$(for p in "${PKG_DESCRIPTION[@]}"; do
	fold -s -w 72 <<<"$p" | sed 's/ *$//'; echo; done | sed '$d')
sysusers=$(grep -v '^[[:space:]]*\(#\|$\)' "$pk/sysusers.d/gpurec.conf")
clog=$(bash "$pk/changelog.sh" rpm "$top/CHANGELOG" "$version" \
	"$PKG_MAINTAINER")
spec=$work/gpurec.spec
VERSION=$version MAINTAINER=$PKG_MAINTAINER SUMMARY=$PKG_SUMMARY DESCRIPTION=$desc STAGE=$work/stage \
SYSUSERS=$sysusers CHANGELOG=$clog \
	awk '{
		line = $0; res = ""
		while (match(line, /@[A-Z]+@/)) {
			k = substr(line, RSTART + 1, RLENGTH - 2)
			res = res substr(line, 1, RSTART - 1) ENVIRON[k]
			line = substr(line, RSTART + RLENGTH)
		}
		print res line
	}' "$pk/rpm/gpurec.spec.in" >"$spec"

latest=$(sed -n 's/^[0-9][^ ]* (\([0-9-]*\))$/\1/p' "$top/CHANGELOG" | head -n1)
export SOURCE_DATE_EPOCH=$(date -u -d "$latest" +%s)
rpmbuild -bb --target x86_64 --quiet \
	--define "_topdir $work/top" \
	--define "_builddir $work/docs" \
	--define "_rpmdir $out" \
	--define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
	--define "use_source_date_epoch_as_buildtime 1" \
	--define "clamp_mtime_to_source_date_epoch 1" \
	"$spec" >&2
echo "$out/gpurec-$version-1.x86_64.rpm"
