#!/usr/bin/env bash
# changelog.sh - makes the packages' changelogs from CHANGELOG.
#   changelog.sh deb|rpm CHANGELOG VERSION MAINTAINER
# deb: a Debian changelog (native package, distribution "stable");
# rpm: the body of the spec's %changelog.  When VERSION is not a release
# of CHANGELOG (make deb VERSION=...), an entry saying so comes first, dated
# as the latest release, so that the build stays reproducible.
set -euo pipefail

fmt=$1 file=$2 version=$3 maint=$4
[ "$fmt" = deb ] || [ "$fmt" = rpm ] ||
	{ echo "changelog.sh: format must be deb or rpm" >&2; exit 1; }

# Releases as records: "VERSION\tDATE\titem\titem...", newest first.
releases=$(awk '
	/^[0-9][^ ]* \([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]\)$/ {
		if (rec != "") print rec
		v = $1; d = $2; gsub(/[()]/, "", d)
		rec = v "\t" d; item = ""; next
	}
	rec == "" { next }
	/^- / { if (item != "") rec = rec "\t" item; item = substr($0, 3); next }
	/^  [^ ]/ { sub(/^ +/, ""); item = item " " $0; next }
	/^$/ { next }
	{ printf "changelog.sh: line %d: not an entry: %s\n", NR, $0 > "/dev/stderr"
	  exit 1 }
	END { if (item != "") rec = rec "\t" item; if (rec != "") print rec }
' "$file")
[ -n "$releases" ] || { echo "changelog.sh: no release in $file" >&2; exit 1; }

latest=$(head -n1 <<<"$releases")
if ! cut -f1 <<<"$releases" | grep -qxF "$version"; then
	releases=$(printf '%s\t%s\t%s\n%s' "$version" "$(cut -f2 <<<"$latest")" \
		"Built from the sources of $(cut -f1 <<<"$latest") with the version set to $version; not a release." \
		"$releases")
fi

# Wraps one item at 72 columns: first line after PREFIX, the rest
# indented by INDENT.
wrap() {
	local prefix=$1 indent=$2 text=$3
	fold -s -w $((76 - ${#prefix})) <<<"$text" | sed 's/ *$//' |
		awk -v p="$prefix" -v i="$indent" 'NR == 1 { print p $0; next }
						      { print i $0 }'
}

first=1
while IFS=$'\t' read -r -a f; do
	v=${f[0]} d=${f[1]}
	if [ "$fmt" = deb ]; then
		[ $first = 1 ] || echo
		echo "gpurec ($v) stable; urgency=medium"
		echo
		for it in "${f[@]:2}"; do wrap "  * " "    " "$it"; done
		echo
		echo " -- $maint  $(LC_ALL=C date -u -d "$d 00:00:00" -R)"
	else
		[ $first = 1 ] || echo
		echo "* $(LC_ALL=C date -u -d "$d" '+%a %b %d %Y') $maint - $v-1"
		for it in "${f[@]:2}"; do wrap "- " "  " "$it"; done
	fi
	first=0
done <<<"$releases"
