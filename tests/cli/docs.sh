#!/usr/bin/env bash
# docs.sh - the documentation the packages ship agrees with the programs:
# every key of gpurecd's key table (its --help) is documented in
# gpurec.conf(5) and gpurecd(8) and listed in the shipped gpurec.conf with
# its real default; every command, option, table and report of gpurec is
# in gpurec(1); the man pages format without a warning.  No root.
# Env: GPUREC, GPURECD (binaries under test).
set -uo pipefail
GPUREC=${GPUREC:-build/gpurec}
GPURECD=${GPURECD:-build/gpurecd}
MAN=packaging/man
CONF=packaging/gpurec.conf
T=$(mktemp -d /tmp/gpurec-docs.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got [$2] want [$3]"; fi; }
# same NAME GOT WANT: multi-line texts, differing lines named.
same() {
	local d
	d=$(diff <(echo "$2") <(echo "$3") | grep '^[<>]' | tr '\n' ' ')
	if [ -z "$d" ]; then ok "$1"; else bad "$1" "(< got, > want) $d"; fi
}

# The tags of a man page's .TP paragraphs (the line after each .TP), as
# plain words: "-o, --output PATH" gives -o, --output, PATH.  $2: only
# those in section $2.
tags() {
	awk -v sect="${2:-}" '
		/^\.SH/ { in_sect = sect == "" || index($0, sect) > 0; next }
		/^\.TP/ { tp = 1; next }
		tp { tp = 0; if (in_sect) print }' "$1" |
	sed -e 's/^\.[A-Z]* *//' -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' \
	    -e 's/\\&//g' -e 's/"//g' -e 's/,/ /g' | tr -s ' ' '\n' |
	grep -v '^$' | sort -u
}

# --- gpurecd: the key table, from its --help ------------------------------
"$GPURECD" --help >"$T/help" || bad "gpurecd --help" "exit $?"
sed -n 's/^  \(--[a-z-]*\).*/\1/p' "$T/help" >"$T/options"
grep -v -x -e --config -e --check-config -e --help -e --version \
	"$T/options" | sed 's/^--//' >"$T/keys"
nkeys=$(wc -l <"$T/keys")
# The options docs/product.md lists must all be there.
for k in data duration max-disk keep-free max-age min-age segment-size segment-age \
	flush-interval cuda-lib no-cuda no-sched no-io verbose; do
	grep -q -x -- "$k" "$T/keys" || bad "gpurecd --help" "no key $k"
done
if [ "$nkeys" -ge 12 ]; then ok "gpurecd --help lists $nkeys keys"
else bad "gpurecd --help" "only $nkeys keys"; fi

tags "$MAN/gpurecd.8" OPTIONS >"$T/d8"
tags "$MAN/gpurec.conf.5" KEYS >"$T/c5"
miss=
while read -r o; do
	grep -q -x -- "$o" "$T/d8" || miss+=" $o"
done <"$T/options"
eq "gpurecd.8 documents every option of gpurecd --help" "${miss# }" ""
miss=
while read -r k; do
	grep -q -x -- "$k" "$T/c5" || miss+=" $k"
done <"$T/keys"
eq "gpurec.conf.5 documents every key" "${miss# }" ""
# ... and no key that is not one (tags of KEYS are "key = TYPE").
extra=$(grep -v -x -e = -e PATH -e SIZE -e SECONDS -e MS -e US -e BOOL \
	-e '|auto' -e 'SIZE|auto' -f "$T/keys" "$T/c5" | tr '\n' ' ')
eq "gpurec.conf.5 documents no key gpurecd lacks" "${extra% }" ""

miss=
while read -r k; do
	grep -q -- "^#$k = " "$CONF" || miss+=" $k"
done <"$T/keys"
eq "gpurec.conf lists every key, commented out" "${miss# }" ""
eq "gpurec.conf sets nothing" "$(grep -v -e '^#' -e '^$' "$CONF")" ""

# The shipped file is accepted, and so is every line of it uncommented;
# the defaults it lists are the real ones.
"$GPURECD" --config /dev/null --check-config 2>"$T/err" | tail -n +2 \
	>"$T/defaults"
"$GPURECD" --config "$CONF" --check-config >"$T/out" 2>"$T/err"
eq "gpurecd --check-config accepts gpurec.conf" "$?:$(cat "$T/err")" "0:"
same "gpurec.conf as shipped is the defaults" "$(tail -n +2 "$T/out")" \
	"$(cat "$T/defaults")"
sed 's/^#\([a-z]\)/\1/' "$CONF" >"$T/all.conf"
eq "every line of gpurec.conf uncommented: as many keys as the table" \
	"$(grep -c '^[a-z]' "$T/all.conf")" "$nkeys"
"$GPURECD" --config "$T/all.conf" --check-config >"$T/out" 2>"$T/err"
eq "gpurecd --check-config accepts gpurec.conf uncommented" \
	"$?:$(cat "$T/err")" "0:"
same "gpurec.conf: the defaults it lists are the real ones" \
	"$(tail -n +2 "$T/out" | grep -v '^cuda-lib = ')" "$(cat "$T/defaults")"

# "Default: X" of each key in gpurec.conf.5, read back by gpurecd.
awk '/^\.SH/ { keys = /KEYS/ } keys && /^\.TP/ { getline; k = $2 }
     keys && /^Default:/ {
	v = $2
	if (NF == 1) { getline; v = $2 }	# "Default:" then ".BR auto ."
	if (v != "none.") print k, v
     }' \
	"$MAN/gpurec.conf.5" |
	sed -e 's/"//g' -e 's/\\-/-/g' -e 's/\.$//' |
	awk '{ print $1 " = " $2 }' >"$T/man.conf"
if [ "$(wc -l <"$T/man.conf")" -eq $((nkeys - 1)) ]; then
	ok "gpurec.conf.5 gives a default for every key but cuda-lib"
else
	bad "gpurec.conf.5 defaults" "$(wc -l <"$T/man.conf") of $((nkeys - 1)): $(cut -d' ' -f1 "$T/man.conf" | tr '\n' ' ')"
fi
"$GPURECD" --config "$T/man.conf" --check-config >"$T/out" 2>"$T/err"
same "gpurec.conf.5's defaults are the real ones" \
	"$(tail -n +2 "$T/out")" "$(cat "$T/defaults")"

# --check-config: exit 1 and the file's line on an error, nothing printed.
printf '# test\ndata = /srv/gpurec\nsegment-size = 64M\nbogus = 1\n' >"$T/bad.conf"
"$GPURECD" --config "$T/bad.conf" --check-config >"$T/out" 2>"$T/err"
eq "--check-config: an unknown key is exit 1, FILE:LINE on stderr" \
	"$?|$(cat "$T/out")|$(cat "$T/err")" \
	"1||gpurecd: $T/bad.conf:4: unknown key 'bogus'"
printf 'data = /srv/gpurec\n\nsegment-size = 64M\ndata = /srv/other\n' >"$T/bad.conf"
"$GPURECD" --config "$T/bad.conf" --check-config >"$T/out" 2>"$T/err"
eq "--check-config: a key set twice is exit 1, both lines named" \
	"$?|$(cat "$T/out")|$(cat "$T/err")" \
	"1||gpurecd: $T/bad.conf:4: duplicate key 'data' (first set at line 1)"
"$GPURECD" --config /dev/null --check-config --segment-age 0 >"$T/out" 2>"$T/err"
eq "--check-config: a bad option is exit 1" "$?|$(cat "$T/out")|$(cat "$T/err")" \
	"1||gpurecd: bad value '0' for --segment-age: must be above 0"
# A data directory that cannot be created: a warning, exit 0.
"$GPURECD" --config /dev/null --check-config --data "$T/none/rec" \
	>"$T/out" 2>"$T/err"
eq "--check-config: a data directory without its parent is a warning" \
	"$?|$(sed -n 2p "$T/out")|$(cat "$T/err")" \
	"0|data = $T/none/rec|gpurecd: warning: data directory $T/none/rec cannot be created: $T/none: No such file or directory"
"$GPURECD" --config /dev/null --check-config --data "$T/rec" >"$T/out" 2>"$T/err"
eq "--check-config: a data directory to be created is fine" \
	"$?|$(cat "$T/err")|$([ -e "$T/rec" ] && echo created)" "0||"

# --- gpurec: commands, options, tables, reports -------------------------
"$GPUREC" --help >"$T/ghelp" || bad "gpurec --help" "exit $?"
sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' "$T/ghelp" >"$T/cmds"
eq "gpurec --help lists 10 commands" "$(wc -l <"$T/cmds")" 10
tags "$MAN/gpurec.1" COMMANDS >"$T/g1c"
miss=
while read -r c; do
	grep -q -x -- "$c" "$T/g1c" || miss+=" $c"
done <"$T/cmds"
eq "gpurec.1 documents every command of gpurec --help" "${miss# }" ""

sed -n 's/^  \(-[a-z-]*\)\(, \(--[a-z-]*\)\)\{0,1\} .*/\1 \3/p' "$T/ghelp" |
	tr ' ' '\n' | grep -v '^$' >"$T/gopts"
tags "$MAN/gpurec.1" OPTIONS >"$T/g1o"
miss=
while read -r o; do
	grep -q -x -- "$o" "$T/g1o" || miss+=" $o"
done <"$T/gopts"
eq "gpurec.1 documents every option of gpurec --help ($(wc -l <"$T/gopts"))" \
	"${miss# }" ""

"$GPUREC" --format csv tables | tail -n +2 | cut -d, -f1 >"$T/tables"
tags "$MAN/gpurec.1" TABLES >"$T/g1t"
miss=
while read -r t; do
	grep -q -x -- "$t" "$T/g1t" || miss+=" $t"
done <"$T/tables"
eq "gpurec.1 names every table of gpurec tables ($(wc -l <"$T/tables"))" \
	"${miss# }" ""
"$GPUREC" --format csv report list | tail -n +2 | cut -d, -f1 >"$T/reports"
tags "$MAN/gpurec.1" REPORTS >"$T/g1r"
miss=
while read -r r; do
	grep -q -x -- "$r" "$T/g1r" || miss+=" $r"
done <"$T/reports"
eq "gpurec.1 names every report of gpurec report list ($(wc -l <"$T/reports"))" \
	"${miss# }" ""
extra=$(grep -v -x -f "$T/reports" "$T/g1r" | tr '\n' ' ')
eq "gpurec.1 names no report gpurec lacks" "${extra% }" ""

# --- the man pages format cleanly ---------------------------------------
for page in gpurecd.8 gpurec.1 gpurec.conf.5; do
	f=$MAN/$page name=${page%.*} sect=${page##*.}
	th=$(grep -m1 '^\.TH' "$f" | awk '{ print $2, $3 }')
	eq "$page: .TH names it" "$th" "${name^^} $sect"
	eq "$page: NAME is 'name \\- description'" \
		"$(sed -n '/^\.SH NAME/{n;p;q}' "$f" | sed 's/ \\- .*//')" "$name"
	if ! command -v groff >/dev/null; then
		bad "$page: groff" "not installed (packaging/deps.sh)"
		continue
	fi
	eq "$page: groff -man -ww warns of nothing" \
		"$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$f" 2>&1)" ""
	# lintian's check (groff-message): man --warnings, where man-db is.
	if command -v man >/dev/null; then
		eq "$page: man --warnings (as lintian runs it) warns of nothing" \
			"$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings \
			   -E UTF-8 -l -Tutf8 -Z "$f" 2>&1 >/dev/null)" ""
	fi
	if command -v mandoc >/dev/null; then
		eq "$page: mandoc -Tlint finds nothing" \
			"$(mandoc -Tlint -W all "$f" 2>&1)" ""
	fi
done

bash -n packaging/completion/gpurec 2>"$T/err"
eq "completion/gpurec is valid bash" "$?:$(cat "$T/err")" "0:"

# --- the repository documents itself ------------------------------------
# A clone holds only the repository: no file may send its reader to the
# directory above it (the contract is docs/product.md).  The pattern is
# built so that this file does not match it.
up="../""shared"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z | xargs -0 grep -l -F -e "$up" -- 2>/dev/null >"$T/up"
else
	grep -rl -F -e "$up" --exclude-dir=build . >"$T/up"
fi
eq "no file names $up (the docs are in docs/)" "$(tr '\n' ' ' <"$T/up")" ""
eq "README.md and schema/tables.def point at docs/product.md, which exists" \
	"$(grep -c 'docs/product.md' README.md) $(grep -c 'docs/product.md' schema/tables.def) $([ -s docs/product.md ] && echo yes)" \
	"1 1 yes"
# Every relative link of docs/*.md and README.md leads to a file.
for f in README.md docs/*.md; do
	grep -o '](\([^)#: ]*\)[)#]' "$f" | sed 's/^](\(.*\).$/\1/' | while read -r l; do
		[ -n "$l" ] && [ ! -e "$(dirname "$f")/$l" ] && echo "$f: $l"
	done
done >"$T/links"
eq "every relative link in README.md and docs/ leads to a file" \
	"$(tr '\n' ' ' <"$T/links")" ""
# Every test's closing line counts skips, which make test sums: a line
# `N passed, N failed` without them hides what did not run.  (The
# reliability run's "checks passed" line is a summary before its closing
# line.)
grep -rn -E '(passed, [^,"]*failed|passed, %d failed)"' tests Makefile |
	grep -v -e skipped -e 'checks passed' >"$T/closing"
eq "every closing line of tests/ prints N passed, N failed, N skipped" \
	"$(cut -d: -f1,2 "$T/closing" | tr '\n' ' ')" ""
eq "make test sums the skips" \
	"$(grep -c 'all: %d passed, %d failed, %d skipped' Makefile)" 1

# The options of docs/product.md's gpurecd synopsis are gpurecd's.
sed -n '/^`gpurecd \[/,/`/p' docs/product.md | grep -o -e '--[a-z-]*' |
	sort -u >"$T/poptions"
eq "docs/product.md's gpurecd synopsis: $(wc -l <"$T/poptions") options, all in gpurecd --help" \
	"$(grep -v -x -f "$T/options" "$T/poptions" | tr '\n' ' ')" ""

echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
