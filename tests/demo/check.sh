#!/usr/bin/env bash
# check.sh - the live demo (tests/demo/demo.sh) as a new user meets it,
# run with its output to a file (root, eBPF; a part of make bpf-test):
# it exits 0; no escape code reaches a file; every failing CUDA call's
# code is printed with its name; host-side times are labelled so; it
# shows report, status and export on its own data and the commands to
# try next, which work; the recording is kept, verifies, and the removal
# command it prints removes it; CLEAN=1 removes it at the end.
# The demo runs the release builds (build/gpurec, build/gpurecd).
set -uo pipefail
SUITE=demo
. "$(dirname "$0")/../cuda/lib.sh"
for f in build/gpurec build/gpurecd build/host-tests/host_load; do
	[ -x "$f" ] || { bad "demo" "$f is not built (make bpf-test builds it)"; finish; exit 1; }
done
G=build/gpurec

DEMO_SECS=2 bash tests/demo/demo.sh >"$T/out" 2>&1
rc=$?
eq "the demo exits 0" "$rc" 0
[ $rc = 0 ] || { tail -20 "$T/out"; finish; exit 1; }
eq "no escape code in its output to a file" "$(grep -c $'\x1b' "$T/out")" 0

# The last two lines: where the recording is, and how to remove it.
kept=$(sed -n 's/^The recording is kept in \(.*\) ([^)]*)\.$/\1/p' "$T/out")
top=${kept%/data}
if [ -z "$kept" ] || [ ! -d "$kept" ]; then
	bad "the recording is kept" "no directory named at the end: $(tail -2 "$T/out")"
	finish
	exit 1
fi
eq "it says where the recording is kept, and how to remove it" \
	"$(tail -2 "$T/out" | sed "s|$top|DIR|g" | sed 's/([^)]*)/(SIZE)/')" \
	"The recording is kept in DIR/data (SIZE).
Remove it with: chattr -R -i DIR; rm -rf DIR"
eq "the recording is there after the demo, and verifies" \
	"$(ls "$kept" | grep -c '\.seg$' | sed 's/^[1-9][0-9]*$/some/') $($G --data "$kept" verify >/dev/null 2>&1; echo $?)" \
	"some 0"

# Every failing call's code, with its name, in the CUDA calls table.
$G --data "$kept" --format csv sql "SELECT DISTINCT ret, cuda_error_name(api, ret) FROM cuda_api WHERE ret != 0 ORDER BY 1" |
	tail -n +2 | tr -d '\r' >"$T/errs"
miss=
while IFS=, read -r code name; do
	grep -q -E " $code +$name " "$T/out" || miss+=" $code:$name"
done <"$T/errs"
if [ -s "$T/errs" ]; then
	eq "each failing code ($(cut -d, -f1 "$T/errs" | tr '\n' ' ')) printed beside its name" \
		"${miss# }" ""
else
	eq "no call failed: the error column says cudaSuccess" \
		"$(grep -c -E ' 0 +cudaSuccess ' "$T/out" | sed 's/^[1-9][0-9]*$/some/')" some
fi

eq "host-side times are labelled: call_p50_us, launch_p50_us/p99_us" \
	"$(grep -c -E '^comm +api +calls +ret +error +call_p50_us$' "$T/out") $(grep -c -E '^kernel +launches +grid_x +block_x +launch_p50_us +launch_p99_us$' "$T/out")" \
	"1 1"

# report, status and export on the demo's own data.
eq "it shows report, status, verify and export" \
	"$(grep -E '^\$ gpurec (report|status|verify|export)' "$T/out" | sed "s|$top|DIR|g" | tr '\n' '|')" \
	"\$ gpurec report cuda-api-sum|\$ gpurec report cuda-errors|\$ gpurec status|\$ gpurec verify|\$ gpurec export --format perfetto -o DIR/demo.perfetto.json|"
eq "the report is a table, the status names the recording" \
	"$(grep -A1 -F '$ gpurec report cuda-api-sum' "$T/out" | tail -1 | awk '{ print $1, $NF }') $(grep -c -F "data       $kept" "$T/out")" \
	"calls api 1"
eq "the Perfetto export it wrote is JSON with events" \
	"$(python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["traceEvents"]) > 0)' "$top/demo.perfetto.json" 2>&1)" "True"

# The commands to try next name the recording and work.
eq "the commands to try next set G to gpurec on the recording" \
	"$(grep -F -x "  G=\"build/gpurec --data $kept\"" "$T/out" | wc -l) $(grep -c '^  \$G ' "$T/out")" "1 6"
grep '^  \$G ' "$T/out" | sed 's/  *#.*//' >"$T/next"
n=0
while read -r line; do
	cmd=${line#\$G }
	eval "$G --data \"\$kept\" $cmd" >/dev/null 2>"$T/err" || bad "try next: $line" "exit $?: $(cat "$T/err")"
	n=$((n + 1))
done <"$T/next"
eq "each command to try next runs (exit 0)" "$n $fail" "6 0"

# The removal command it printed removes it.
eval "$(sed -n 's/^Remove it with: //p' "$T/out")"
eq "the removal command it printed removes the recording" \
	"$([ -e "$top" ] && echo there || echo gone)" gone

# CLEAN=1: removed at the end, and said so.
CLEAN=1 DEMO_SECS=1 bash tests/demo/demo.sh >"$T/out2" 2>&1
eq "CLEAN=1: exit 0" "$?" 0
gone=$(sed -n 's/^The recording in \(.*\) is removed now (CLEAN=1)\.$/\1/p' "$T/out2")
eq "CLEAN=1: it says so and the recording is gone" \
	"$([ -n "$gone" ] && [ ! -e "$gone" ] && echo gone)" gone
finish
